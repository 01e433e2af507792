The answers of advice.t on real PyTorch snapshots of ../shared/data (this
transcript runs only where that folder is; tests/CMakeLists.txt leaves it
out, saying so, where it is not).

  $ D=$GM_DATA_DIR/snapshots
  $ gmsim import $D/lmmedium_ctx128_train_fp32.pickle -o m.db > /dev/null
  $ gmsim import $D/lm2.7b_ctx128_train_fp32.pickle -o l.db > /dev/null

frag@peak is taken at t*: of the events at which reserved is at its peak,
the one with the most allocated bytes.  lmmedium was recorded after
warm-up: its layout holds the whole 6.74 GiB before the first event, so
warm-started caching and offline (one arena) reserve their peak at event 0,
when little is allocated.  At t* they are a few percent fragmented, exactly
1 − util (the allocated peak falls at the reserved peak), not 99.9%:

  $ gmsim replay m.db --policy caching,offline | cut -c1-107
  trace 'lmmedium_ctx128_train_fp32': 13497 events, load 6.53 GiB (peak requested: the floor for every policy
  
  policy   start  peak reserved  peak allocated    util  efficiency  overhead  int frag  ext frag   rounding 
  caching  warm        6.74 GiB        6.54 GiB   97.1%       96.9%     +3.2%      0.2%      2.9%  12.66 MiB 
  offline  cold        6.53 GiB        6.53 GiB  100.0%      100.0%     +0.0%      0.0%      0.0%      508 B 
  'offline' plan: optimal, 6.53 GiB (proved: no plan needs fewer bytes)

A parameter the recorded layout leaves nothing to act on is named, with
why, and the cold replay where it does act is shown beside the warm one
and the recorded figure:

  $ gmsim replay m.db --policy caching --param caching.conf=expandable_segments:True 2>&1 | tail -8
  
  start                       peak reserved  vs recorded  dev mallocs  ooms
  recorded (the traced job)        6.74 GiB            -            -     -
  warm, the trace's settings       6.74 GiB         +0 B            0     0
  warm, with the parameters        6.74 GiB         +0 B            0     0
  cold, the trace's settings       6.72 GiB   -16.00 MiB          373     0
  cold, with the parameters        6.67 GiB   -72.00 MiB          334     0
  gmsim: warning: caching.conf=expandable_segments:True cannot change peak reserved from the recorded layout: it holds 6.74 GiB in 377 segments before the first event and the replay makes no new one, while a setting acts on segments made after it is set; cold, it gives 6.67 GiB instead of 6.72 GiB (--start cold)

Where the replay makes new segments, the same setting acts warm too
(5 GiB off the 2.7B model's training step), and no warning is given:

  $ gmsim replay l.db --policy caching --param caching.conf=expandable_segments:True 2>&1 | tail -7
  
  start                       peak reserved  vs recorded  dev mallocs  ooms
  recorded (the traced job)       56.91 GiB            -            -     -
  warm, the trace's settings      56.91 GiB         +0 B          783     0
  warm, with the parameters       51.82 GiB    -5.09 GiB          645     0
  cold, the trace's settings      56.91 GiB         +0 B         1010     0
  cold, with the parameters       51.70 GiB    -5.21 GiB          873     0

compare names the setting to use against the recorded run's settings:

  $ gmsim compare l.db --policies caching,tlsf,offline | tail -1
  recommendation: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True saves 5.21 GiB (9.2%) against the recorded run's settings: 51.70 GiB instead of 56.91 GiB, both replayed from an empty allocator as a new job starts; recorded: 56.91 GiB
  $ gmsim compare m.db --policies caching | tail -1
  recommendation: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True saves 56.00 MiB (0.8%) against the recorded run's settings: 6.67 GiB instead of 6.72 GiB, both replayed from an empty allocator as a new job starts; recorded: 6.74 GiB

On the Ascend NPU build the variable is PYTORCH_NPU_ALLOC_CONF, and
cudaMallocAsync is not among the settings tried:

  $ gmsim import $D/msd_basic.pickle -o n.db > /dev/null
  $ gmsim compare n.db --policies caching | tail -1
  recommendation: PYTORCH_NPU_ALLOC_CONF=expandable_segments:True saves 32.00 MiB (6.1%) against the recorded run's settings: 494.00 MiB instead of 526.00 MiB, both replayed from an empty allocator as a new job starts; recorded: 526.00 MiB
  $ gmsim compare n.db --policies caching --json | grep -c cudaMallocAsync
  0
  [1]

The HTML report says the same under its summary table, for the PyTorch
traces of the stores given:

  $ gmsim sweep l.db --policies caching,tlsf -o l.runs.db > /dev/null 2>&1
  $ gmsim report l.runs.db l.db -o r.html
  wrote 'r.html': 1 trace, 2 runs
  $ grep -o '<p class="advice"><b>recommendation</b> for lm2.7b_ctx128_train_fp32: PYTORCH_CUDA_ALLOC_CONF=expandable_segments&#58;True saves 5.21 GiB' r.html
  <p class="advice"><b>recommendation</b> for lm2.7b_ctx128_train_fp32: PYTORCH_CUDA_ALLOC_CONF=expandable_segments&#58;True saves 5.21 GiB

At an OOM the live blocks pinning the segments are named with the
application's stack frame (the first in Python code) where the snapshot
recorded frames; here no setting of the grid would have fit either:

  $ gmsim replay l.db --policy caching --capacity 51.3GiB | sed -n '/^at the first/,$p' | cut -c1-160
  at the first OOM of 'caching' (event 13758): a request of 100.00 MiB on stream 0; 51.27 GiB reserved of 51.30 GiB, 51.11 GiB in live blocks (50.85 GiB requested
    161.57 MiB free in 727 segments, the largest free block 75.00 MiB: none holds the request, and the device has 33.20 MiB left for a new segment
    segment 0x7f201a000000, 100.00 MiB (large pool, stream 0): 75.00 MiB free in 1 block (largest 75.00 MiB), pinned by 1 live block
       25.00 MiB at +0 B          allocation 7068 (event 13724) /home/c-kaitwang/assignment1/cs336_basics/optimizers.py:84:step
    segment 0x7f2b54000000, 158.00 MiB (large pool, stream 0): 28.34 MiB free in 2 blocks (largest 24.53 MiB), pinned by 2 live blocks
       97.66 MiB at +56.53 MiB    allocation 2414 (event 3888) ??:0:torch::autograd::generated::BmmBackward0::apply
       32.00 MiB at +24.53 MiB    allocation 2413 (event 3887) ??:0:torch::autograd::generated::BmmBackward0::apply
    segment 0x7f27da000000, 98.00 MiB (large pool, stream 0): 23.00 MiB free in 1 block (largest 23.00 MiB), pinned by 3 live blocks
       25.00 MiB at +0 B          allocation 5939 (event 11777) /home/c-kaitwang/assignment1/cs336_basics/optimizers.py:82:step
       25.00 MiB at +25.00 MiB    allocation 5940 (event 11778) /home/c-kaitwang/assignment1/cs336_basics/optimizers.py:84:step
       25.00 MiB at +50.00 MiB    allocation 5943 (event 11783) /home/c-kaitwang/assignment1/cs336_basics/optimizers.py:82:step
    none of 8 settings tried (from an empty allocator, on the same device) avoids the OOM
    it fits on a device of 56.91 GiB or more (its peak reserved on an unlimited device, warm)
