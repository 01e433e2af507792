`gmsim scale` on real PyTorch snapshots of ../shared/data (issue 30; this
transcript runs only where that folder is: tests/CMakeLists.txt leaves it
out, saying so, where it is not).

The README's example runs as written: the captures carry no seq_len
attribute, and their names say the lengths (`ctx128`), which `scale`
prints it assumed:

  $ D=$GM_DATA_DIR/snapshots
  $ gmsim import $D/lmmedium_ctx128_train_fp32.pickle -o ctx128.db > /dev/null
  $ gmsim import $D/lmmedium_ctx256_train_fp32.pickle -o ctx256.db > /dev/null
  $ gmsim scale ctx128.db ctx256.db --seq 1024,4096 -o long.db
  ctx128.db: seq 128 (from the name 'ctx128')
  ctx256.db: seq 256 (from the name 'ctx256')
  gmsim: warning: seq 4096 is 16.0x beyond the captures: the band is ±4.3%
  base 'ctx256.db:lmmedium_ctx256_train_fp32' (seq 256): 7288 allocations, 47.30 GiB requested in all
  
  alignment with the base
    capture                               seq  batch  paired  window  share
    ctx128.db:lmmedium_ctx128_train_fp32  128      -    7190    7288  98.7%
    ctx128.db:lmmedium_ctx128_train_fp32: longest unpaired run at event 2739 of 'lmmedium_ctx256_train_fp32' (allocation 1971, 8388608 bytes, frames 'CUDACachingAllocator.cpp:0:c10::cuda::CUDACachingAllocator::Native::DeviceCachin'), event 2739 of 'lmmedium_ctx128_train_fp32'
  
  size laws
    law         allocations       bytes  of bytes
    constant           4164   29.93 GiB    63.28%
    power              3026   16.98 GiB    35.91%
    polynomial            0         0 B     0.00%
    affine                0         0 B     0.00%
    site                  0         0 B     0.00%
    none                 98  392.00 MiB     0.81%
    seq exponents: p=0: 4164 p=1: 2594 p=2: 432
    pre-existing: 664 of 664 paired
    following no law (kept at their captured size), by call site:
      98 allocations, 392.00 MiB: first allocation 1971 (event 2739) of 'ctx256.db:lmmedium_ctx256_train_fp32', frames 'CUDACachingAllocator.cpp:0:c10::cuda::CUDACachingAllocator::Native::DeviceCachin': 8388608 B at seq 256
  
  how sure: how far beyond the captures, the predicted bytes by law, the band
    trace                               beyond  verified  two-point       captured size   band  on the load
    lmmedium_ctx256_train_fp32.seq1024    4.0x      0.0%      99.8%  0.22% (392.00 MiB)  ±2.7%  ±785.59 MiB
    lmmedium_ctx256_train_fp32.seq4096   16.0x      0.0%     100.0%  0.02% (392.00 MiB)  ±4.3%   ±11.10 GiB
  
  wrote into 'long.db'
    lmmedium_ctx256_train_fp32.seq1024  seq 1024  13693 events  load 28.92 GiB
    lmmedium_ctx256_train_fp32.seq4096  seq 4096  13693 events  load 257.46 GiB
  $ gmsim fit --from ctx128.db ctx256.db --vary seq --device a100-80gb --policy caching --max 4096 | head -1
  ctx128.db: seq 128 (from the name 'ctx128')
  ctx256.db: seq 256 (from the name 'ctx256')
  largest seq with no OOM: 'ctx256.db:lmmedium_ctx256_train_fp32' scaled (laws from 'ctx128.db:lmmedium_ctx128_train_fp32' 'ctx256.db:lmmedium_ctx256_train_fp32'), on a100-80gb (79.15 GiB)

Annotations and the script's own frames are hints, not keys (issue 30,
item 1).  The ctx128 capture as another run of an edited script would
record it: its optimizer step's record_function range gone, a zero_grad
range added mid-step, and (the second file) the step moved into a
function `main`, one more frame of the script in every stack.  Each
aligns as the unedited pair does (7190 pairs, 98.7%), says what differs,
and predicts the same load:

  $ cat > edit.py <<'EOF'
  > import pickle, sys
  > d = pickle.load(open(sys.argv[1], 'rb'))
  > t = d['device_traces'][0][3000]['time_us']
  > d['external_annotations'] = [a for a in d['external_annotations'] if not a['name'].startswith('Optimizer.step')] + [
  >     {'stage': s, 'name': 'Optimizer.zero_grad#AdamW.zero_grad', 'device': 0, 'time_us': t} for s in ('START', 'END')]
  > pickle.dump(d, open('lmmedium_ctx128_annotated.pickle', 'wb'))
  > def moved(f):
  >     if f and f[-1]['filename'].endswith('.py'):
  >         return f[:-1] + [{'name': 'main', 'filename': f[-1]['filename'], 'line': 300}, f[-1]]
  >     return f
  > for e in d['device_traces'][0]:
  >     e['frames'] = moved(e.get('frames'))
  > for s in d['segments']:
  >     for b in s['blocks']:
  >         if 'frames' in b:
  >             b['frames'] = moved(b['frames'])
  > pickle.dump(d, open('lmmedium_ctx128_edited.pickle', 'wb'))
  > EOF
  $ python3 edit.py $D/lmmedium_ctx128_train_fp32.pickle
  $ gmsim import lmmedium_ctx128_annotated.pickle -o ann.db > /dev/null
  $ gmsim import lmmedium_ctx128_edited.pickle -o ed.db > /dev/null
  $ gmsim scale ann.db ctx256.db --seq 1024 -o ann_out.db 2>/dev/null | grep -E '^  ann|seq1024  seq'
    ann.db:lmmedium_ctx128_annotated  128      -    7190    7288  98.7%
    ann.db:lmmedium_ctx128_annotated: longest unpaired run at event 2739 of 'lmmedium_ctx256_train_fp32' (allocation 1971, 8388608 bytes, frames 'CUDACachingAllocator.cpp:0:c10::cuda::CUDACachingAllocator::Native::DeviceCachin'), event 2739 of 'lmmedium_ctx128_annotated'
    ann.db:lmmedium_ctx128_annotated: annotations differ (hints, left out of the alignment): 'Optimizer.step#AdamW.step' 2 in the base only; 'Optimizer.zero_grad#AdamW.zero_grad' 2 in this capture only
    lmmedium_ctx256_train_fp32.seq1024  seq 1024  13693 events  load 28.92 GiB
  $ gmsim scale ed.db ctx256.db --seq 1024 -o ed_out.db 2>/dev/null | grep -E '^  ed|seq1024  seq'
    ed.db:lmmedium_ctx128_edited  128      -    7190    7288  98.7%
    ed.db:lmmedium_ctx128_edited: longest unpaired run at event 2739 of 'lmmedium_ctx256_train_fp32' (allocation 1971, 8388608 bytes, frames 'CUDACachingAllocator.cpp:0:c10::cuda::CUDACachingAllocator::Native::DeviceCachin'), event 2739 of 'lmmedium_ctx128_edited'
    ed.db:lmmedium_ctx128_edited: the stacks differ in the script's own frames: aligned on the call sites below them
    ed.db:lmmedium_ctx128_edited: annotations differ (hints, left out of the alignment): 'Optimizer.step#AdamW.step' 2 in the base only; 'Optimizer.zero_grad#AdamW.zero_grad' 2 in this capture only
    lmmedium_ctx256_train_fp32.seq1024  seq 1024  13693 events  load 28.92 GiB

Different programs stay refused; forced, what no law covers is said in
bytes and as a share, and shown per target (the band's "captured size");
their pre-existing allocations, which differ in number, also show as
count laws (issue 30, item 2):

  $ gmsim import $D/lmmedium_ctx128_inference_fp32.pickle -o inf128.db > /dev/null
  $ gmsim scale inf128.db ctx256.db --seq 512 -o forced.db 2>&1 | cut -c1-141
  gmsim: 'inf128.db:lmmedium_ctx128_inference_fp32' does not align with 'ctx256.db:lmmedium_ctx256_train_fp32': 1503 of 7288 allocations paired
  $ gmsim scale inf128.db ctx256.db --seq 512 -o forced.db --force 2>&1 | grep -E 'warning|^  (none|site) |seq512 |pre-existing'
  gmsim: warning: 5782 allocations, 39.27 GiB (83.0% of the base's bytes), follow no law (paired in no other capture, and no law at their call sites): every target keeps them at their captured size
    site                  3   8.17 MiB     0.02%
    none               5782  39.27 GiB    83.02%
    pre-existing: 223 of 664 paired
    pre-existing by count: 6 allocations in 3 groups whose number follows the size (a count law; 0 verified on a further capture): each target holds its own count
    lmmedium_ctx256_train_fp32.seq512    2.0x      0.0%      32.6%  67.41% (39.27 GiB)  ±67.7%    ±9.22 GiB
    lmmedium_ctx256_train_fp32.seq512  seq 512  13699 events  load 13.62 GiB  12 pre-existing by count (base 6)

--at overrides what a name says:

  $ gmsim scale ctx128.db ctx256.db --at seq=64,128 --seq 512 -o at.db 2>&1 | grep -E 'from the name|seq 512'
    lmmedium_ctx256_train_fp32.seq512  seq 512  13693 events  load 28.92 GiB

Captures of different precision are refused, saying why: the same script's
forward pass in fp32 and under autocast, both ctx128 (their names say so:
equal sizes), then given as 128 and 256, as a user who wants a law would;
and lmmedium's training step under autocast at ctx512 beside fp32 at
ctx256.  Same-precision pairs (above, and the inference pair) go through:

  $ gmsim import $D/lm2.7b_ctx128_forward_fp32.pickle -o f32.db > /dev/null
  $ gmsim import $D/lm2.7b_ctx128_forward_mixed.pickle -o amp.db > /dev/null
  $ gmsim scale f32.db amp.db --seq 512 -o p.db 2>&1
  gmsim: 'f32.db:lm2.7b_ctx128_forward_fp32' and 'amp.db:lm2.7b_ctx128_forward_mixed' have equal sizes (seq 128, read from their names: --at gives them): captures at different sizes are needed
  [1]
  $ gmsim scale f32.db amp.db --at seq=128,256 --seq 512 -o p.db
  gmsim: 'f32.db:lm2.7b_ctx128_forward_fp32' and 'amp.db:lm2.7b_ctx128_forward_mixed' differ in precision: an fp32 capture and an autocast one of a script are different programs (738 of 2382 pairs, 31.0%, 2x or 4x larger at the smaller size, as fp32 beside 16-bit; the first allocation 333 (event 337) of 'amp.db:lm2.7b_ctx128_forward_mixed', frames 'torch/functional.py:407:einsum': 5242880 B at seq 128, 2621440 B at seq 256) (--force to go on)
  [1]
  $ gmsim import $D/lmmedium_ctx512_train_mixed.pickle -o m512.db > /dev/null
  $ gmsim scale m512.db ctx256.db --seq 1024 -o p.db
  gmsim: 'ctx256.db:lmmedium_ctx256_train_fp32' and 'm512.db:lmmedium_ctx512_train_mixed' differ in precision: an fp32 capture and an autocast one of a script are different programs (241 of 7240 pairs, 3.3%, 2x or 4x larger at the smaller size, as fp32 beside 16-bit; the first allocation 678 (event 681) of 'm512.db:lmmedium_ctx512_train_mixed', frames 'torch/functional.py:373:einsum': 2097152 B at seq 512, 4194304 B at seq 256) (--force to go on)
  [1]
  $ test -e p.db || echo nothing written
  nothing written
  $ gmsim import $D/lmmedium_ctx128_inference_fp32.pickle -o i128.db > /dev/null
  $ gmsim import $D/lmmedium_ctx256_inference_fp32.pickle -o i256.db > /dev/null
  $ gmsim scale i128.db i256.db --seq 1024 -o inf.db --json 2>/dev/null | grep -E '"(paired|against_sizes)"'
        "paired": 1503,
        "against_sizes": 0,

`fit --from` carries the band into its answer:

  $ gmsim fit --from ctx128.db ctx256.db --vary seq --device a100-80gb --policy caching 2>/dev/null | head -5
  largest seq with no OOM: 'ctx256.db:lmmedium_ctx256_train_fp32' scaled (laws from 'ctx128.db:lmmedium_ctx128_train_fp32' 'ctx256.db:lmmedium_ctx256_train_fp32'), on a100-80gb (79.15 GiB)
  the policies get 78.71 GiB: 79.15 GiB less 448.00 MiB outside the allocator (the preset's CUDA context, an estimate)
  
  'requested': seq 2042 fits with 30.99 MiB to spare; the band is ±2.76 GiB (3.5%, 8.0x beyond the captures; within it, it may not fit)
  'caching': seq 2013 fits with 34.00 MiB to spare; the band is ±2.75 GiB (3.5%, 7.9x beyond the captures; within it, it may not fit)
