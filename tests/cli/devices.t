A device is more than its allocator: each preset carries a reserve, what
a process holds outside PyTorch's allocator (the CUDA context, by
architecture: an estimate, sim/gpus.c), and the policies get the capacity
less it.  `--reserve SIZE` overrides it (0 with --capacity SIZE).

  $ gmsim devices | sed -n '1p;/^h100-80gb /p;/^t4 /p;/^rtx4090 /p;/^mi300x /p'
  device                 capacity         bytes     reserve  description                                   source
  h100-80gb             79.11 GiB   84943044608  512.00 MiB  NVIDIA H100 80GB HBM3 (SXM5)                  PyTorch total_memory / OOM message
  t4                    14.75 GiB   15835594752  320.00 MiB  NVIDIA T4 16GB                                PyTorch total_memory / OOM message
  rtx4090               23.65 GiB   25393364992  448.00 MiB  NVIDIA GeForce RTX 4090 24GB                  PyTorch total_memory / OOM message
  mi300x               191.98 GiB  206141652992  256.00 MiB  AMD Instinct MI300X 192GB                     HIP hipMemGetInfo total
  $ gmsim devices --json | grep -A4 '"name": "a100-80gb"'
      "name": "a100-80gb",
      "description": "NVIDIA A100 80GB (SXM4/PCIe)",
      "capacity": 84987084800,
      "reserve": 469762048,
      "mig_of": null,

estimate, replay and fit print the margin left, capacity - reserve - peak;
under 2% of the device is the edge:

  $ gmsim estimate --model gpt2-large --batch 3 --seq 1024 --device a100-40gb | tail -1
  peak 38.67 GiB fits in a100-40gb (39.59 GiB): margin 492.37 MiB = 39.59 GiB - reserve 448.00 MiB - peak 38.67 GiB; at the edge: within 2% of the device; before allocator overhead; see 'gmsim fit'
  $ gmsim estimate --model gpt2-large --batch 3 --seq 1024 --device a100-40gb --reserve 1GiB | grep '^peak'
  peak 38.67 GiB exceeds a100-40gb (39.59 GiB, 1.00 GiB of it outside the allocator) by 83.63 MiB: out of memory
  $ gmsim estimate --model gpt2-large --batch 3 --seq 1024 --device a100-40gb --reserve 1GiB --json | grep -E '"(capacity|reserve|margin|fits)"'
        "capacity": 42505076736,
        "reserve": 1073741824,
        "margin": -87688196,
        "fits": false,
  $ gmsim synth --model gpt2 --layers 2 --batch 4 --seq 256 --steps 1 -o t.db > /dev/null
  $ gmsim replay t.db --policy caching --device t4 | sed -n '1p;/margin/p'
  trace 'gpt2': * capacity 14.44 GiB (t4: 14.75 GiB less 320.00 MiB outside the allocator) (glob)
  'caching' margin * = 14.75 GiB - reserve 320.00 MiB - peak * (glob)
  $ gmsim replay t.db --policy caching --capacity 2GiB --reserve 256MiB --json | grep -E '"(capacity|device_total|reserve|margin)"'
      "capacity": 1879048192,
    "device_total": 2147483648,
    "reserve": 268435456,
        "margin": * (glob)

fit says what it judged (the configuration), what the policies get, the
margin of each answer, and which answers are at the edge:

  $ gmsim fit --model gpt2 --layers 2 --seq 512 --zero 2 --dp 4 --precision bf16 --device rtx4090 --policy caching | sed -n '1,3p'
  largest batch with no OOM: gpt2, seq 512, train bf16, 1 warm step, on rtx4090 (23.65 GiB)
  configuration: train, bf16, zero 2, dp 4, tp 1, optimizer adamw, recompute none, attention eager, offload none, grad accum 1
  the policies get 23.21 GiB: 23.65 GiB less 448.00 MiB outside the allocator (the preset's CUDA context, an estimate)
  $ gmsim fit --model gpt2 --layers 2 --seq 512 --device rtx4090 --reserve 2GiB --policy caching | sed -n '3p;5,$p'
  the policies get 21.65 GiB: 23.65 GiB less 2.00 GiB outside the allocator (--reserve)
  policy       start  batch  peak requested  peak reserved      margin  overhead  first OOM at  probes
  (requested) * (glob)
  caching * (glob)
  $ gmsim fit --model gpt2 --layers 2 --seq 512 --device rtx4090 --policy caching --json | grep -E '"(capacity|reserve|at_edge)"'
    "capacity": 25393364992,
    "reserve": 469762048,
        "at_edge": true,
        "at_edge": true,

A reserve needs a device and must leave some of it:

  $ gmsim estimate --model gpt2 --reserve 1GiB
  gmsim: --reserve needs --capacity or --device
  usage: gmsim estimate --model NAME|--hidden H ... [run options] [--json]
                        [--capacity SIZE|--device NAME] [--reserve SIZE]
  [2]
  $ gmsim estimate --model gpt2 --device t4 --reserve 15GiB 2>&1 | head -1
  gmsim: invalid value for --reserve: 15.00 GiB leaves nothing of the device's 14.75 GiB

Units: a bare number below 1 MiB is no capacity anyone has, so it is an
error that suggests GiB (a bare number of bytes from 1 MiB up stays
bytes):

  $ gmsim replay t.db --policy caching --capacity 80 2>&1 | head -1
  gmsim: invalid value for --capacity: '80' has no unit, so it is 80 B; did you mean '80GiB'?
  $ gmsim estimate --model gpt2 --device 80 2>&1 | head -1
  gmsim: invalid value for --device: '80' has no unit, so it is 80 B; did you mean '80GiB'?
  $ gmsim fit --model gpt2 --capacity 23.5 --policy caching 2>&1 | head -1
  gmsim: invalid value for --capacity: '23.5' has no unit, so it is 24 B; did you mean '23.5GiB'?
  $ gmsim replay t.db --policy caching --capacity 4294967296 | sed -n 1p
  trace 'gpt2': * capacity 4.00 GiB (glob)

A short name that could mean several boards says which preset it took; a
name that starts several presets and has no default lists them:

  $ gmsim estimate --model gpt2 --device a100 2>&1 >/dev/null
  gmsim: note: --device 'a100' is 'a100-80gb' (NVIDIA A100 80GB (SXM4/PCIe), 79.15 GiB); for another give a100-40gb
  $ gmsim estimate --model gpt2 --device h100 2>&1 >/dev/null
  gmsim: note: --device 'h100' is 'h100-80gb' (NVIDIA H100 80GB HBM3 (SXM5), 79.11 GiB); for another give h100-pcie, h100-nvl
  $ gmsim estimate --model gpt2 --device 4090 2>&1 >/dev/null
  gmsim: note: --device '4090' is 'rtx4090' (NVIDIA GeForce RTX 4090 24GB, 23.65 GiB)
  $ gmsim estimate --model gpt2 --device rtx-4090 | tail -1
  gmsim: note: --device 'rtx-4090' is 'rtx4090' (NVIDIA GeForce RTX 4090 24GB, 23.65 GiB)
  peak * fits in rtx4090 (23.65 GiB): * (glob)
  $ gmsim estimate --model gpt2 --device rtx 2>&1 | head -1
  gmsim: invalid value for --device: 'rtx' could be any of 'rtx3090', 'rtx4090', 'rtx-a6000' (see 'gmsim devices')
  $ gmsim estimate --model gpt2 --device mi2 2>&1 | head -1
  gmsim: invalid value for --device: 'mi2' could be any of 'mi210', 'mi250x' (see 'gmsim devices')
  $ gmsim estimate --model gpt2 --device a100-80gb 2>&1 >/dev/null
  $ gmsim fit --model gpt2 --layers 2 --seq 512 --device rtx4090 --policy caching | grep 'at the edge'
  'caching' batch *: margin * = 23.65 GiB - reserve 448.00 MiB - peak *; at the edge: within 2% of the device (glob)
