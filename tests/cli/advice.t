Answers a user can act on (docs/cli.md replay and compare), on a
synthesized GPT-2 medium training step (49.54 GiB of load) and on the tiny
snapshot of torch.t.

  $ gmsim synth --model gpt2-medium --batch 8 --seq 1024 -o s.db
  synthesized 'gpt2-medium' into 's.db': 8008 events (4584 allocs, 3416 frees, 8 marks), load 49.54 GiB

For a PyTorch trace (a snapshot, or a model trace synthesized as PyTorch
runs it) compare names the best setting a PyTorch user can set, from a
small grid replayed from an empty allocator, against the recorded settings
(here PyTorch's defaults, since nothing was recorded):

  $ gmsim compare s.db --policies caching,async | tail -2
  least reserved (of the policies that cache): async, 49.97 GiB (+0.9% above load)
  recommendation: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True saves 430.00 MiB (0.8%) against PyTorch's defaults: 49.58 GiB instead of 50.00 GiB, both replayed from an empty allocator as a new job starts

The figures are those of plain replays, with and without the setting:

  $ gmsim replay s.db --policy caching --start cold | awk '/^caching/ {print $1, $(NF-16), $(NF-15)}'
  caching 50.00 GiB
  $ gmsim replay s.db --policy caching --start cold --param caching.conf=expandable_segments:True | awk '/^caching/ {print $1, $(NF-16), $(NF-15)}'
  caching 49.58 GiB

--json has the same under "pytorch", with every setting tried; --no-advice
skips it:

  $ gmsim compare s.db --policies caching --json > c.json
  $ grep -A3 '"pytorch"' c.json
        "pytorch": {
          "recommendation": "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True saves 430.00 MiB (0.8%) against PyTorch's defaults: 49.58 GiB instead of 50.00 GiB, both replayed from an empty allocator as a new job starts",
          "setting": "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
          "peak_reserved": 53234106368,
  $ grep -c '"setting": "PYTORCH_CUDA_ALLOC_CONF=' c.json
  8
  $ grep -c 'backend:cudaMallocAsync' c.json
  1
  $ gmsim compare s.db --policies caching --no-advice | grep -c recommendation
  0
  [1]

A trace that is not PyTorch's gets no recommendation:

  $ gmsim synth --events 1000 -o r.db > /dev/null
  $ gmsim compare r.db --policies caching | grep -c recommendation
  0
  [1]

On a finite device an OOM is explained: the request, the segments with the
most free bytes and the live blocks that pin them, and which setting would
have let the job fit:

  $ gmsim replay s.db --policy caching --capacity 49.8GiB | cut -c1-150
  trace 'gpt2-medium': 8008 events, load 49.54 GiB (peak requested: the floor for every policy), capacity 49.80 GiB
  
  policy   start  peak reserved  peak allocated   util  efficiency  overhead  int frag  ext frag  rounding  dev mallocs  dev frees  dev time  ooms  ns/e
  caching  cold       48.46 GiB       48.01 GiB  99.1%      102.2%     -2.2%      0.0%      0.9%     508 B          217          0   14.3 ms     1 * (glob)
  'caching' does not fit: it ran out of memory (below)
  'caching' ran out of memory 1 time, first at event 5399
  
  at the first OOM of 'caching' (event 5399): a request of 1.53 GiB on stream 0; 48.46 GiB reserved of 49.80 GiB, 48.01 GiB in live blocks (48.01 GiB re
    466.59 MiB free in 217 segments, the largest free block 420.00 MiB: none holds the request, and the device has 1.34 GiB left for a new segment
    segment 0x10a94800000, 1.54 GiB (large pool, stream 0): 420.00 MiB free in 1 block (largest 420.00 MiB), pinned by 3 live blocks
      512.00 MiB at +0 B          allocation 3319 (event 5368)
      512.00 MiB at +512.00 MiB   allocation 3317 (event 5365)
      128.00 MiB at +1.00 GiB     allocation 3330 (event 5382)
    segment 0x10a32400000, 1.54 GiB (large pool, stream 0): 28.00 MiB free in 1 block (largest 28.00 MiB), pinned by 11 live blocks
      512.00 MiB at +0 B          allocation 3292 (event 5332)
      512.00 MiB at +512.00 MiB   allocation 3294 (event 5335)
      128.00 MiB at +1.09 GiB     allocation 3318 (event 5367)
      128.00 MiB at +1.31 GiB     allocation 3329 (event 5381)
      and 7 more
    segment 0x100c8000000, 512.00 MiB (large pool, stream 0): 7.37 MiB free in 1 block (largest 7.37 MiB), pinned by 5 live blocks
      196.32 MiB at +0 B          allocation 1854 (event 3128)
      196.32 MiB at +196.32 MiB   allocation 1855 (event 3129)
       96.00 MiB at +392.63 MiB   allocation 2788 (event 4666)
        8.00 MiB at +488.63 MiB   allocation 2807 (event 4691)
      and 1 more
    would fit (from an empty allocator, on the same device): PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, peak 49.60 GiB; also: max_split_size_mb:1
    it fits on a device of 50.00 GiB or more (its peak reserved on an unlimited device, cold)

The setting it names does fit, replayed on its own on the same device:

  $ gmsim replay s.db --policy caching --capacity 49.8GiB --param caching.conf=expandable_segments:True | grep -c 'ran out'
  0
  [1]

--json carries it per run under "oom": the segments with free bytes, the
live blocks in them, and the settings that fit.  Another policy (bfc,
which carves regions) is explained the same way; its candidates are the
other policies:

  $ gmsim replay s.db --policy caching,bfc --capacity 49.8GiB --json > o.json
  $ grep -c '"oom": {' o.json
  2
  $ grep '"best"' o.json
          "best": "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
          "best": null
  $ gmsim replay s.db --policy bfc --capacity 49.8GiB | grep -E '^  (none|would)'
    none of 6 settings tried (from an empty allocator, on the same device) avoids the OOM

A parameter that can change nothing is named, on stderr (here on the tiny
snapshot of torch.t, whose recorded 20 MiB segment serves every request):

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
  $ gmsim import run.pickle -o run.db > /dev/null
  $ gmsim replay run.db --trace run.dev0 --policy caching --param caching.max_split_size=128MiB 2>&1 | tail -8
  
  start                       peak reserved  vs recorded  dev mallocs  ooms
  recorded (the traced job)       40.00 MiB            -            -     -
  warm, the trace's settings      20.00 MiB   -20.00 MiB            0     0
  warm, with the parameters       20.00 MiB   -20.00 MiB            0     0
  cold, the trace's settings      20.00 MiB   -20.00 MiB            1     0
  cold, with the parameters       20.00 MiB   -20.00 MiB            1     0
  gmsim: warning: caching.max_split_size=128MiB changes neither peak reserved nor OOMs on this trace, warm or cold

--start takes warm (the recorded layout, the default) or cold:

  $ gmsim replay run.db --trace run.dev0 --policy caching --start cold | awk '/^caching/ {print $1, $(NF-16), $(NF-15)}'
  caching 20.00 MiB
  $ gmsim replay run.db --trace run.dev0 --policy caching --start hot
  gmsim: invalid value for --start: 'hot' (warm or cold; recorded and empty say the same)
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
