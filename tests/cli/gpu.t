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
  granularity: cudaMalloc 512 apart in chunks of 512 (512 above), pool 512 apart in chunks of 2MiB (2MiB above, released at a synchronization), cuMemCreate 2MiB

It measures what the device charges too, and the simulation takes it from
the profile.  A device (here the fake, set so) whose cudaMalloc rounds to
4 KiB and whose pools grow by 4 MiB: replayed at the default 512-byte
granularity native's peak misses the rounding; with the profile it is the
measured one, and async's chunks are the pool's:

  $ export FAKE_CUDA_GRANULARITY=4096 FAKE_CUDA_POOL_CHUNK=4194304
  $ gmsim calibrate --reps 1 -o measured.json 2>&1 | tail -1
  granularity: cudaMalloc 4KiB apart in chunks of 4KiB (4KiB above), pool 512 apart in chunks of 4MiB (4MiB above, released at a synchronization), cuMemCreate 2MiB
  $ gmsim replay t.db --policy native --on gpu | grep '^peak reserved'
  peak reserved   875.26 MiB  875.31 MiB      +0.01%
  $ gmsim replay t.db --policy native --on gpu --device-profile measured.json | grep '^peak reserved'
  peak reserved   875.31 MiB  875.31 MiB      +0.00%
  $ gmsim replay t.db --policy async --device-profile measured.json | awk '$1 == "async" { print $1, $2, $3, $4, $5 }'
  async granularity=4MiB cold 1.34 GiB
  $ unset FAKE_CUDA_GRANULARITY FAKE_CUDA_POOL_CHUNK

--granularity and --param still win over the profile:

  $ gmsim replay t.db --policy native --device-profile measured.json --granularity 512 | awk '$1 == "native" { print $1, $2, $3, $4 }'
  native cold 875.26 MiB

A driver that packs small cudaMallocs into 2 MiB chunks (as calibrate finds
on a GPU: requests 512 bytes apart, in-use memory growing 2 MiB at a time)
makes native carve its requests from chunks (native.chunk):

  $ printf '{"points": [{"size": 512, "malloc_ns": 1, "free_ns": 1}], "granularity": {"malloc_align": 512, "malloc_chunk": 2097152}}' > packs.json
  $ gmsim replay t.db --policy native --device-profile packs.json | awk '$1 == "native" { print $1, $2, $3, $4, $5 }'
  native chunk=2MiB cold 974.00 MiB
  $ printf '{"points": [{"size": 512, "malloc_ns": 1, "free_ns": 1}], "granularity": {"malloc_chunk": 3000000}}' > bad-gran.json
  $ gmsim replay t.db --policy native --device-profile bad-gran.json
  gmsim: 'bad-gran.json': granularity.malloc_chunk must be a power of two up to 1 TiB (or 0: not measured)
  [1]
  $ gmsim replay t.db --policy native --device-profile profile.json --json | grep -c device_time_ns
  1
  $ echo '{"points": []}' > bad.json
  $ gmsim replay t.db --policy native --device-profile bad.json
  gmsim: 'bad.json': not a cost profile (needs "points": 1 to 4096 entries)
  [1]
  $ FAKE_CUDA_DEVICES=0 gmsim calibrate
  gmsim: no CUDA device: no CUDA-capable device is detected
  [1]
