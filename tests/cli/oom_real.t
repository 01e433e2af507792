The capacity a recorded OOM fixes (issue 28, item 2), taken by compare,
sweep and fit as replay takes it, on real snapshots of ../shared/data with
an `oom` entry added (none of them ran out of memory): where the recorded
reserved bytes first reach half their peak, an entry whose device_free
makes the capacity the peak less 32 MiB (msd_basic: 494 MiB), asking for
the whole capacity, as tests/test_oom.c makes them.

  $ D=$GM_DATA_DIR/snapshots
  $ cat > oom.py <<'EOF'
  > import pickle, sys
  > d = pickle.load(open(sys.argv[1], 'rb'))
  > t = d['device_traces'][0]
  > sign = {'segment_alloc': 1, 'segment_map': 1, 'segment_free': -1, 'segment_unmap': -1}
  > cur = sum(s['total_size'] for s in d['segments'] if s['device'] == 0)
  > cur -= sum(sign.get(e['action'], 0) * e['size'] for e in t)
  > at = []
  > for e in t:
  >     at.append(cur)
  >     cur += sign.get(e['action'], 0) * e['size']
  > peak = max(at + [cur])
  > i = next(k for k, r in enumerate(at) if r >= peak // 2)
  > cap = peak - int(sys.argv[2]) * 2**20
  > t.insert(i, {'action': 'oom', 'device_free': cap - at[i], 'size': cap,
  >              'stream': t[i - 1]['stream'], 'addr': 0})
  > pickle.dump(d, open(sys.argv[3], 'wb'))
  > EOF
  $ python3 oom.py $D/msd_basic.pickle 32 oom.pickle
  $ gmsim import oom.pickle -o oom.db > /dev/null

replay runs on it and says so in its first line:

  $ gmsim replay oom.db --policy caching | head -1
  trace 'oom': 6485 events, load 449.66 MiB (peak requested: the floor for every policy), capacity 494.00 MiB (from the recorded OOM: reserved then + the device's free bytes)

compare takes it the same way, trace by trace: the same note, and each
run's line on the failed request asked again:

  $ gmsim compare oom.db --policies caching,bfc,native --no-advice
  trace 'oom' (oom.db): 6485 events, load 449.66 MiB, capacity 494.00 MiB (from the recorded OOM: reserved then + the device's free bytes)
  
  policy   start  peak reserved    util  efficiency  overhead  int frag  ext frag   rounding  dev mallocs  ooms
  caching  cold      494.00 MiB   95.9%       91.0%     +9.9%      3.5%      5.5%  17.39 MiB           72     0
  bfc      cold      494.00 MiB   97.5%       91.0%     +9.9%      6.4%      2.5%  31.77 MiB            8     0
  native   cold      449.71 MiB  100.0%      100.0%     +0.0%      0.0%      0.0%  51.88 KiB         3216     0
  'caching': the recorded OOM asked again: 1 of 1 failed as recorded, 0 served
  'bfc': the recorded OOM asked again: 1 of 1 failed as recorded, 0 served
  'native': the recorded OOM asked again: 1 of 1 failed as recorded, 0 served
  least reserved (of the policies that cache): caching, 494.00 MiB (+9.9% above load)
  $ gmsim compare oom.db --policies caching --no-advice --json > c.json
  $ python3 -c 'import json; t = json.load(open("c.json"))["traces"][0]; r = t["runs"][0]; print(t["capacity"], t["capacity_from"], r["recorded_ooms"], r["metrics"]["peak_reserved"] <= t["capacity"])'
  517996544 recorded_oom {'asked': 1, 'failed': 1} True

Unlimited, caching goes above that capacity; --capacity (or --device)
replaces it, and the failed request is then not asked again:

  $ gmsim compare oom.db --policies caching --no-advice --capacity 1GiB | grep -E 'capacity|asked|^caching'
  caching  cold      526.00 MiB  89.6%       85.5%    +17.0%      4.1%     10.4%  21.46 MiB           52     0

sweep stores the runs of such a trace with that capacity, and says so:

  $ gmsim sweep oom.db --policies caching --results r.db
  sweep: 1 trace x 1 configuration = 1 runs
  trace 'oom', capacity 494.00 MiB (from the recorded OOM: reserved then + the device's free bytes)
  start of caching: cold, from an empty allocator (the start that shows what a setting changes; --start warm for the recorded layout)
  0 already done, 1 ran, 0 failed; results in 'r.db'
  $ gmsim sweep oom.db --policies caching --results r.db --json | grep -E 'reused|capacity_from|recorded_oom'
    "reused": 1,
    "capacity_from": "recorded_oom",
    "recorded_oom_traces": 1
  $ gmsim report r.db oom.db --format md -o - | grep -c '^| oom (494.00 MiB) '
  1

Below that capacity the first OOM is explained as replay explains it:
the request, the free bytes, the segments with the live blocks pinning
them, each named by its site, the first frame of the user's code:

  $ gmsim compare oom.db --policies caching,native --no-advice --capacity 400MiB > low.txt
  $ grep -E "ran out|at the first OOM|none of" low.txt
  'caching' ran out of memory 156 times, first at event 1938
  'native' ran out of memory 34 times, first at event 2017
  no configuration fits in 400.00 MiB: every one ran out of memory
  at the first OOM of 'caching' (event 1938): a request of 256.00 KiB on stream 0; 400.00 MiB reserved of 400.00 MiB, 374.79 MiB in live blocks (363.28 MiB requested)
    none of 7 settings tried (from an empty allocator, on the same device) avoids the OOM
  $ grep -c '^  segment ' low.txt
  3
  $ grep 'fits on' low.txt
    it fits on a device of 526.00 MiB or more (its peak reserved on an unlimited device, cold)

A policy that caches is explained first, before native (a device call per
request, a reference) even when native comes first:

  $ gmsim compare oom.db --policies native,caching --no-advice --capacity 400MiB | grep 'at the first OOM' | cut -c1-40
  at the first OOM of 'caching' (event 193
  $ grep -m1 'allocation 1372' low.txt
      576.50 KiB at +1.00 MiB     allocation 1372 (event 1932) /home/liuyekang/dev/projects/test/memory_leaks_demo.py:14:train_one_step

The whole stack is one flag away, in --json (the run's "oom", as
replay's: each live block's "site" and "frames"):

  $ gmsim compare oom.db --policies caching,native --no-advice --capacity 400MiB --json > low.json
  $ python3 -c '
  > import json
  > runs = json.load(open("low.json"))["traces"][0]["runs"]
  > o = runs[0]["oom"]
  > b = next(b for s in o["segments"] for b in s["live"] if b["id"] == 1372)
  > print(o["event"], o["request"], "oom" in runs[1], b["site"])
  > print(b["frames"].splitlines()[0] != b["site"], b["site"] in b["frames"])'
  1938 262144 False /home/liuyekang/dev/projects/test/memory_leaks_demo.py:14:train_one_step
  True True

fit --from, given no capacity, takes the one a capture's recorded OOM
fixes.  lmmedium_ctx256 with an entry whose capacity is 512 MiB above its
peak (it was recorded after warm-up: no segment events, the reserved bytes
stay at 8.63 GiB):

  $ python3 oom.py $D/lmmedium_ctx256_train_fp32.pickle -512 m256.pickle
  $ gmsim import m256.pickle -o m256.db > /dev/null
  $ gmsim import $D/lmmedium_ctx128_train_fp32.pickle -o m128.db > /dev/null
  $ gmsim fit --from m128.db m256.db --at seq=128,256 --policy caching --vary seq --max 4096 | head -1
  largest seq with no OOM: 'm256.db:m256' scaled (laws from 'm128.db:lmmedium_ctx128_train_fp32' 'm256.db:m256'), on the device of 'm256.db:m256', capacity 9.13 GiB (from the recorded OOM: reserved then + the device's free bytes)
  $ gmsim fit --from m128.db m256.db --at seq=128,256 --policy caching --vary seq --max 4096 --json | grep -E '"(capacity|capacity_from)"'
    "capacity": 9802088448,
    "capacity_from": "recorded_oom",

Without one, the capacity is still needed:

  $ gmsim import $D/lmmedium_ctx256_train_fp32.pickle -o p256.db > /dev/null
  $ gmsim fit --from m128.db p256.db --at seq=128,256 --policy caching 2>&1 | head -1
  gmsim: missing --capacity or --device (no capture recorded an OOM, whose capacity would do)
