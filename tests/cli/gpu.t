`gmsim replay --on gpu` replays for real on a GPU.  Here the CUDA runtime is
a fake one built by the tests (tests/gpu/fake_cudart.c: no memory, exact
accounting), so what is checked is gmsim's side: the modes, the measured
figures beside the simulated ones, the safety checks and the errors.

  $ gmsim synth --events 20000 --seed 3 --live-max 1GiB -o t.db
  wrote 'random' into 't.db': 20000 events (9997 allocs, 9997 frees, 6 marks), load 875.26 MiB
  $ export GM_CUDART=$GM_FAKE_CUDART

A simulated policy's device calls are issued on the GPU; the fake charges
exactly what the simulated device does, so the peaks agree (latencies are
measured times: sed drops them):

  $ gmsim replay t.db --policy buddy --on gpu | sed -n '/^on /,$p' | sed 's/latency.*/latency .../'
  on fake GPU (16.00 GiB total, 300.00 MiB in use before the replay), policy buddy
  
  figure          simulated  measured  difference
  peak reserved    2.00 GiB  2.00 GiB      +0.00%
  device mallocs          2         2      +0.00%
  device frees            0         0           -
  device time       0.5[0-9] ms .* (re)
  
  malloc latency ...

The JSON puts "measured" beside "metrics":

  $ gmsim replay t.db --policy native --on gpu --json > out.json
  $ grep -c '"measured"' out.json; grep '"peak_used_vs_simulated"' out.json
  1
          "peak_used_vs_simulated": 0,

A trace that does not fit the GPU's free memory is refused, unless forced;
then the device's own OOM is reported with its event, and exit 1:

  $ FAKE_CUDA_TOTAL=1073741824 gmsim replay t.db --policy native --on gpu
  gmsim: trace 'random' needs about 875.26 MiB under native but fake GPU (gpu:0) has 724.00 MiB free (--force to try anyway)
  [1]
  $ FAKE_CUDA_TOTAL=1073741824 gmsim replay t.db --policy native --on gpu --force
  gmsim: CUDA error at event [0-9]+ \(cudaMalloc of .*\): out of memory (re)
  [1]

No device, no runtime:

  $ FAKE_CUDA_DEVICES=0 gmsim replay t.db --policy native --on gpu
  gmsim: no CUDA device: no CUDA-capable device is detected
  [1]
  $ GM_CUDART=/nonexistent/libcudart.so gmsim replay t.db --policy native --on gpu:1
  gmsim: no CUDA device: cannot load the CUDA runtime: tried /nonexistent/libcudart.so (cannot open shared object file: No such file or directory; set GM_CUDART to the library or its folder)
  [1]
  $ gmsim replay t.db --policy native --on gpu:1
  gmsim: no CUDA device: gpu:1 asked for, 1 present
  [1]

Usage errors:

  $ gmsim replay t.db --policy native,buddy --on gpu 2>&1 | head -1
  gmsim: --on gpu replays one policy at a time (2 given)
  $ gmsim replay t.db --policy native --touch 2>&1 | head -1
  gmsim: --touch and --force go with --on gpu
  $ gmsim replay t.db --policy native --on cpu 2>&1 | head -1
  gmsim: invalid value for --on: 'cpu' (expected gpu or gpu:N)

`gmsim calibrate` measures a cost profile that `--device-profile` then uses:

  $ FAKE_CUDA_TOTAL=4294967296 gmsim calibrate --reps 3 -o profile.json
  wrote 'profile.json': 11 sizes, measured by gmsim calibrate on fake GPU \(gpu:0\), driver 13.0, [0-9-]+, median of 3 (re)
  $ gmsim replay t.db --policy native --device-profile profile.json --json | grep -c device_time_ns
  1
  $ echo '{"points": []}' > bad.json
  $ gmsim replay t.db --policy native --device-profile bad.json
  gmsim: 'bad.json': not a cost profile (needs "points": 1 to 4096 entries)
  [1]
  $ FAKE_CUDA_DEVICES=0 gmsim calibrate
  gmsim: no CUDA device: no CUDA-capable device is detected
  [1]
