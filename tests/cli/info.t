`gmsim info` prints one clean row per trace: where it comes from (source,
device, capacity), its size (events, load), the workload (seq_len, batch),
what the recording's allocator reserved at its peak, and only the allocator
settings that differ from PyTorch's defaults, written as
PYTORCH_CUDA_ALLOC_CONF sets them.  No JSON in the table: --json has every
count and attribute.

  $ gmsim synth --model gpt2 --seq 128,256 --batch 4 --steps 1 -o t.db > /dev/null

A snapshot's attributes as an import writes them, put on the second trace
by hand: non-default settings (max_split_size, expandable_segments, a
roundup_power2_divisions list) among defaults (garbage_collection_threshold
0, release_lock_on_cudamalloc false, pinned_num_register_threads 1, zero
divisions for the small intervals):

  $ sqlite3 t.db "UPDATE traces SET name = 'snap', attrs = '{\"source\": \"torch_snapshot\", \"device\": 1,
  > \"allocator_settings\": {\"PYTORCH_CUDA_ALLOC_CONF\": \"expandable_segments:True,max_split_size_mb:128\",
  > \"max_split_size\": 134217728, \"garbage_collection_threshold\": 0, \"expandable_segments\": true,
  > \"release_lock_on_cudamalloc\": false, \"pinned_num_register_threads\": 1,
  > \"roundup_power2_divisions\": {\"1\": 0, \"2\": 0, \"256\": 4, \"512\": 8}},
  > \"recorded\": {\"peak_reserved\": 2684354560, \"reserved_at_start\": 0, \"reserved_at_end\": 2147483648,
  > \"segment_allocs\": 12, \"segment_frees\": 2}}' WHERE name = 'gpt2.seq256'"
  $ gmsim info t.db
  trace        source          device  capacity  events      load  seq_len  batch  recorded reserved  settings (not PyTorch's defaults)
  gpt2.seq128  synth                -         -    2184  2.32 GiB      128      4                  -  -
  snap         torch_snapshot       1         -    2184  2.32 GiB        -      -           2.50 GiB  max_split_size_mb:128,expandable_segments:True,roundup_power2_divisions:[256:4,512:8]
  
  2 traces, [0-9.]+ KiB on disk; every count and attribute: gmsim info --json t.db (re)

A snapshot at PyTorch's defaults (max_split_size -1, every division 0)
shows none:

  $ sqlite3 t.db "UPDATE traces SET attrs = '{\"source\": \"torch_snapshot\", \"device\": 0,
  > \"allocator_settings\": {\"PYTORCH_CUDA_ALLOC_CONF\": \"\", \"max_split_size\": -1,
  > \"garbage_collection_threshold\": 0, \"expandable_segments\": false,
  > \"roundup_power2_divisions\": {\"1\": 0, \"2\": 0}}}' WHERE name = 'snap'"
  $ gmsim info t.db | grep '^snap'
  snap         torch_snapshot       0         -    2184  2.32 GiB        -      -                  -  -

--json keeps everything the table leaves out:

  $ gmsim info t.db --json | grep -c -e '"allocs"' -e '"bytes"' -e '"digest"' -e '"live_at_end"' -e '"attrs"'
  10
  $ gmsim info t.db --json | grep -o '"max_split_size": -1'
  "max_split_size": -1

Other sources: a placement instance carries its capacity, a CSV its source:

  $ printf 'id,lower,upper,size\n0,0,2,512\n1,1,3,512\n' > p.4096.csv
  $ gmsim import p.4096.csv --format dsa -o p.db > /dev/null
  $ gmsim info p.db
  trace   source  device  capacity  events      load  seq_len  batch  recorded reserved  settings (not PyTorch's defaults)
  p.4096  dsa          -  4.00 KiB       4  1.00 KiB        -      -                  -  -
  
  1 trace, * on disk; every count and attribute: gmsim info --json p.db (glob)

On the real snapshots (when ../shared/data is there): the NPU recording
with expandable segments shows both of its differences from CUDA
PyTorch's defaults, and the recorded peak:

  $ f=$GM_DATA_DIR/snapshots/msd_expandable.pickle
  $ if [ -r "$f" ]; then gmsim import "$f" -o real.db > /dev/null && gmsim info real.db | sed -n 2p; else echo "skipped: '$f' absent"; fi
  (msd_expandable  torch_snapshot       0         -    5838  569.66 MiB        -      -         614.00 MiB  expandable_segments:True,block_pad:32|skipped: .* absent) (re)
  $ f=$GM_DATA_DIR/snapshots/lm2.7b_ctx128_forward_fp32.pickle
  $ if [ -r "$f" ]; then gmsim import "$f" -o lm.db > /dev/null && gmsim info lm.db | sed -n 2p; else echo "skipped: '$f' absent"; fi
  (lm2.7b_ctx128_forward_fp32  torch_snapshot       0         -    3826  18.02 GiB        -      -          18.32 GiB  -|skipped: .* absent) (re)
