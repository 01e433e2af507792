`gmsim import` of PyTorch memory snapshots (docs/formats.md#pytorch-memory-snapshot):
a pickle decoded by gmsim itself, never executed.  The snapshot below was
written by Python's pickle (protocol 4) from a dict shaped as PyTorch's:
two devices; on device 0 a 20 MiB segment holding a 4 MiB allocation made
before recording began, a trace that frees another such allocation, an
8 MB tensor, a 20 MiB segment released by empty_cache(), and a forward
annotation; on device 1 a small segment and one allocation.

  $ base64 -d > run.pickle <<'EOF'
  > gASV1wQAAAAAAAB9lCiMCHNlZ21lbnRzlF2UKH2UKIwGZGV2aWNllEsAjAdhZGRyZXNzlIoG
  > AAAAAAB/jAp0b3RhbF9zaXpllEoAAEABjA5hbGxvY2F0ZWRfc2l6ZZRKAABAAIwLYWN0aXZl
  > X3NpemWUSgAAQACMDnJlcXVlc3RlZF9zaXpllEoACT0AjAZzdHJlYW2USwCMDHNlZ21lbnRf
  > dHlwZZSMBWxhcmdllIwPc2VnbWVudF9wb29sX2lklEsASwCGlIwNaXNfZXhwYW5kYWJsZZSJ
  > jAZmcmFtZXOUXZSMBmJsb2Nrc5RdlCh9lChoBYoGAAAAAAB/jARzaXpllEoAAEAAaAlKAAk9
  > AIwFc3RhdGWUjBBhY3RpdmVfYWxsb2NhdGVklGgQXZQofZQojAhmaWxlbmFtZZSMPS92ZW52
  > L2xpYi9weXRob24zLjExL3NpdGUtcGFja2FnZXMvdG9yY2gvbm4vbW9kdWxlcy9saW5lYXIu
  > cHmUjARsaW5llEt9jARuYW1llIwHZm9yd2FyZJR1fZQoaBqMCHRyYWluLnB5lGgcSypoHYwE
  > c3RlcJR1ZXV9lChoBYoGAABAAAB/aBVKAAAAAWgJSwBoFowIaW5hY3RpdmWUaBBdlHVldX2U
  > KGgESwFoBYoGAAAAAgB/aAZKAAAgAGgHTQACaAhNAAJoCUtkaApLAGgLjAVzbWFsbJRoDWgO
  > aA+JaBBdlGgSXZQofZQoaAWKBgAAAAIAf2gVTQACaAlLZGgWaBdoEGgYdX2UKGgFigYAAgAC
  > AH9oFUoA/h8AaAlLAGgWaCNoEF2UdWV1ZYwNZGV2aWNlX3RyYWNlc5RdlChdlCh9lCiMBmFj
  > dGlvbpSMDmZyZWVfcmVxdWVzdGVklIwEYWRkcpSKBgAAQAAAf2gVSoCNWwBoCksAjAd0aW1l
  > X3VzlEsBaBBoGHV9lChoMIwOZnJlZV9jb21wbGV0ZWSUaDKKBgAAQAAAf2gVSoCNWwBoCksA
  > aDNLAmgQaBh1fZQoaDCMBWFsbG9jlGgyigYAAEAAAH9oFUoAEnoAaApLAGgzSwVoEGgYdX2U
  > KGgwaDVoMooGAABAAAB/aBVKABJ6AGgKSwBoM0sGaBBoGHV9lChoMIwNc2VnbWVudF9hbGxv
  > Y5RoMooGAAAAEAB/aBVKAABAAWgKSwBoM0sIaBBoGHV9lChoMIwMc2VnbWVudF9mcmVllGgy
  > igYAAAAQAH9oFUoAAEABaApLAGgzSwloEGgYdWVdlCh9lChoMGg6aDKKBgAAAAIAf2gVSgAA
  > IABoCksAaDNLA2gQaBh1fZQoaDBoN2gyigYAAAACAH9oFUtkaApLAGgzSwRoEGgYdWVljBJh
  > bGxvY2F0b3Jfc2V0dGluZ3OUfZQojBdQWVRPUkNIX0NVREFfQUxMT0NfQ09ORpSMAJSMDm1h
  > eF9zcGxpdF9zaXpllEr/////jBNleHBhbmRhYmxlX3NlZ21lbnRzlImMGHJvdW5kdXBfcG93
  > ZXIyX2RpdmlzaW9uc5R9lCiMATGUSwCMATKUSwB1dYwUZXh0ZXJuYWxfYW5ub3RhdGlvbnOU
  > XZQofZQojAVzdGFnZZSMBVNUQVJUlGgdaB5oBEsAaDNLA3V9lChoTYwDRU5ElGgdaB5oBEsA
  > aDNLB3VldS4=
  > EOF

Detected from its content, one trace per device:

  $ gmsim import run.pickle -o run.db
  imported 'run.dev0' into 'run.db': 10 events (3 allocs, 2 frees, 3 marks), load 11.44 MiB
  imported 'run.dev1' into 'run.db': 2 events (1 allocs, 0 frees, 0 marks), load 100 B

The recorded device-level truth, in the table and as JSON:

  $ gmsim info run.db | cut -c 1-100
  trace     source          device  capacity  events       load  seq_len  batch  recorded reserved  se
  run.dev0  torch_snapshot       0         -      10  11.44 MiB        -      -          40.00 MiB  -
  run.dev1  torch_snapshot       1         -       2      100 B        -      -           2.00 MiB  -
  
  2 traces, 180 B on disk; every count and attribute: gmsim info --json run.db
  $ gmsim info run.db --json | grep -A6 '^ *"recorded"' | head -7
        "recorded": {
          "peak_reserved": 41943040,
          "reserved_at_start": 20971520,
          "reserved_at_end": 20971520,
          "segment_allocs": 1,
          "segment_frees": 1
        }

A pre-2.0 snapshot (a bare list of segments) is refused, saying what it is:

  $ base64 -d > old.pickle <<'EOF'
  > gAJdcQB9cQEoWAYAAABkZXZpY2VxAksAWAcAAABhZGRyZXNzcQOKBgAAAAAAf1gKAAAAdG90
  > YWxfc2l6ZXEESgAAQAFYDgAAAGFsbG9jYXRlZF9zaXplcQVKAABAAFgLAAAAYWN0aXZlX3Np
  > emVxBkoAAEAAWA4AAAByZXF1ZXN0ZWRfc2l6ZXEHSgAJPQBYBgAAAHN0cmVhbXEISwBYDAAA
  > AHNlZ21lbnRfdHlwZXEJWAUAAABsYXJnZXEKWA8AAABzZWdtZW50X3Bvb2xfaWRxC0sASwCG
  > cQxYDQAAAGlzX2V4cGFuZGFibGVxDYlYBgAAAGZyYW1lc3EOXXEPWAYAAABibG9ja3NxEF1x
  > ESh9cRIoaAOKBgAAAAAAf1gEAAAAc2l6ZXETSgAAQABoB0oACT0AWAUAAABzdGF0ZXEUWBAA
  > AABhY3RpdmVfYWxsb2NhdGVkcRVoDl1xFih9cRcoWAgAAABmaWxlbmFtZXEYWD0AAAAvdmVu
  > di9saWIvcHl0aG9uMy4xMS9zaXRlLXBhY2thZ2VzL3RvcmNoL25uL21vZHVsZXMvbGluZWFy
  > LnB5cRlYBAAAAGxpbmVxGkt9WAQAAABuYW1lcRtYBwAAAGZvcndhcmRxHHV9cR0oaBhYCAAA
  > AHRyYWluLnB5cR5oGksqaBtYBAAAAHN0ZXBxH3VldX1xIChoA4oGAABAAAB/aBNKAAAAAWgH
  > SwBoFFgIAAAAaW5hY3RpdmVxIWgOXXEidWV1YS4=
  > EOF
  $ gmsim import old.pickle -o run.db
  gmsim: 'old.pickle': a memory snapshot from PyTorch before 2.0 (a bare list of segments, without a trace): gmsim needs a PyTorch 2.x snapshot recorded with torch.cuda.memory._record_memory_history()
  [1]

A pickle that would run code is refused with the opcode and its offset;
a truncated snapshot names the offset where its data ends; neither leaves
anything in the store:

  $ printf '\200\002cos\nsystem\n(S"echo hi"\ntR.' > evil.pickle
  $ gmsim import --format torch evil.pickle -o run.db
  gmsim: 'evil.pickle': opcode GLOBAL at byte 2 refused: it would run code, and a pickle is never executed
  [1]
  $ head -c 700 run.pickle > cut.pickle
  $ gmsim import cut.pickle -o run.db --name cut
  gmsim: 'cut.pickle': byte 2: FRAME: truncated: frame of 1239 bytes, 689 left
  [1]
  $ gmsim info run.db | head -3
  trace     source          device  capacity  events       load  seq_len  batch  recorded reserved  settings (not PyTorch's defaults)
  run.dev0  torch_snapshot       0         -      10  11.44 MiB        -      -          40.00 MiB  -
  run.dev1  torch_snapshot       1         -       2      100 B        -      -           2.00 MiB  -

