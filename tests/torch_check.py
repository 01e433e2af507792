#!/usr/bin/env python3
"""An independent reading of a PyTorch memory snapshot, for tests/test_torch_real.c.

Loads the pickle with a restricted Unpickler (find_class refuses: the file
may only hold plain data) and prints, for every device that has trace
entries or segments, one line:

  dev=D allocs=A frees=F segs=S preexisting=P peak_live=L reserved_end=R
  free_runs=U ooms=O annotations=N final_blocks=B final_hash=H

allocs, frees, segs: the alloc, free_completed and segment_* entries;
preexisting: the allocations alive before the first entry, counted as
PyTorch's viewer finds them (a free_completed with no alloc before it in the
trace, plus an allocated block of the final segments that no alloc of the
trace made); peak_live: the peak of live requested bytes walking the trace
from those; reserved_end: the final segments' total size; free_runs: the
maximal runs of segment_free/segment_unmap entries; ooms: the oom entries;
annotations: the device's external annotations; final_blocks and
final_hash: the blocks of the final segments and the sum, modulo 2^64, of
(address * 31 + size) * 2 + allocated over them.

With --digest, prints instead one line summing the whole value walked as a
tree (a shared object counted at each reference):

  dicts=.. lists=.. tuples=.. strs=.. ints=.. floats=.. bools=.. nones=..
  int_sum=.. (mod 2^64) str_bytes=.. (UTF-8)
"""
import pickle
import sys


class SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def main(path):
    with open(path, "rb") as f:
        snap = SafeUnpickler(f).load()
    traces = snap["device_traces"]
    segments = snap["segments"]
    devices = {i for i, t in enumerate(traces) if t}
    devices |= {s.get("device", 0) for s in segments}
    for dev in sorted(devices):
        entries = traces[dev] if dev < len(traces) else []
        counts = {"alloc": 0, "free_completed": 0, "seg": 0, "runs": 0, "oom": 0}
        prev_free = False
        live = {}          # addr -> size of allocations made in the trace
        pre_sizes = []     # sizes of allocations alive before the trace
        timeline = []      # +size / -size in trace order
        for e in entries:
            a = e["action"]
            if a == "alloc":
                counts["alloc"] += 1
                live[e["addr"]] = e["size"]
                timeline.append(e["size"])
            elif a == "free_completed":
                counts["free_completed"] += 1
                if e["addr"] in live:
                    timeline.append(-live.pop(e["addr"]))
                else:
                    pre_sizes.append(e["size"])
                    timeline.append(-e["size"])
            elif a.startswith("segment_"):
                counts["seg"] += 1
            elif a == "oom":
                counts["oom"] += 1
            is_free = a in ("segment_free", "segment_unmap")
            if is_free and not prev_free:
                counts["runs"] += 1
            prev_free = is_free
        reserved_end = 0
        nblocks = 0
        fhash = 0
        for s in segments:
            if s.get("device", 0) != dev:
                continue
            reserved_end += s["total_size"]
            for b in s["blocks"]:
                addr = b.get("address", b.get("addr"))
                nblocks += 1
                fhash = (fhash + (addr * 31 + b["size"]) * 2 + (b["state"] != "inactive")) % (1 << 64)
                if b["state"] != "inactive" and addr not in live:
                    req = b.get("requested_size") or b["size"]
                    pre_sizes.append(req)
        annotations = sum(1 for a in snap.get("external_annotations", [])
                          if a.get("device", dev) == dev)
        cur = sum(pre_sizes)
        peak = cur
        for d in timeline:
            cur += d
            peak = max(peak, cur)
        print(f"dev={dev} allocs={counts['alloc']} frees={counts['free_completed']} "
              f"segs={counts['seg']} preexisting={len(pre_sizes)} peak_live={peak} "
              f"reserved_end={reserved_end} free_runs={counts['runs']} ooms={counts['oom']} "
              f"annotations={annotations} final_blocks={nblocks} final_hash={fhash}")


def digest(path):
    with open(path, "rb") as f:
        root = SafeUnpickler(f).load()
    c = dict(dicts=0, lists=0, tuples=0, strs=0, ints=0, floats=0, bools=0, nones=0,
             int_sum=0, str_bytes=0)
    stack = [root]
    while stack:
        v = stack.pop()
        if v is None:
            c["nones"] += 1
        elif isinstance(v, bool):
            c["bools"] += 1
        elif isinstance(v, int):
            c["ints"] += 1
            c["int_sum"] = (c["int_sum"] + v) % (1 << 64)
        elif isinstance(v, float):
            c["floats"] += 1
        elif isinstance(v, str):
            c["strs"] += 1
            c["str_bytes"] += len(v.encode("utf-8", "surrogatepass"))
        elif isinstance(v, dict):
            c["dicts"] += 1
            for k, x in v.items():
                stack.append(k)
                stack.append(x)
        elif isinstance(v, list):
            c["lists"] += 1
            stack.extend(v)
        elif isinstance(v, tuple):
            c["tuples"] += 1
            stack.extend(v)
        else:
            raise SystemExit(f"unexpected {type(v).__name__}")
    print(" ".join(f"{k}={v}" for k, v in c.items()))


if __name__ == "__main__":
    if sys.argv[1] == "--digest":
        digest(sys.argv[2])
    else:
        main(sys.argv[1])
