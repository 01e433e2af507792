`gmsim fit` finds, per policy, the largest batch (or sequence length) whose
synthesized step replays without an OOM on a device of the given capacity.
The first row is the bound with no allocator overhead at all; each row
says how its probe started (a synthesized step has no recorded layout:
cold; the bound has none, -):

  $ gmsim fit --model gpt2 --seq 512 --capacity 8GiB --policy native
  largest batch with no OOM: gpt2, seq 512, train fp32, 1 warm step, on capacity (8.00 GiB)
  configuration: train, fp32, zero 0, dp 1, tp 1, optimizer adamw, recompute none, attention eager, offload none, grad accum 1
  
  policy       start  batch  peak requested  peak reserved      margin  overhead  first OOM at  probes
  \(requested\) +- +[0-9]+ .* (re)
  native +cold +[0-9]+ .* (re)

Every registered policy with `--policy all` (a small model, and a planner
told to stop at its greedy plan, keep it quick).  The answer is where the next value fails: one more than the batch
is the first OOM, on every row, and no policy beats the bound:

  $ gmsim fit --arch gpt --hidden 256 --layers 2 --heads 4 --vocab 1000 --seq 128 \
  >   --capacity 256MiB --policy all --param offline.effort=0 > f.txt
  $ awk 'NR > 4 && !/does not fit|^\x27/ && $(NF-1) != $3 + 1 { print "mismatch: " $0 }' f.txt
  $ awk 'NR == 5 { bound = $3 } NR > 5 && !/does not fit|^\x27/ && $3 > bound { print "above the bound: " $0 }' f.txt
  $ grep -c '^native ' f.txt
  1

Device presets, MIG slices, and the sequence length as the variable:

  $ gmsim fit --model gpt2 --batch 4 --device a100-80gb:1g.10gb --policy native --vary seq --json | grep -m2 '"vary"\|"capacity"'
    "vary": "seq",
    "capacity": 10200547328,
  $ gmsim fit --model gpt2 --batch 4 --device a100-80gb:1g.10gb --policy native --vary seq |
  >   awk 'NR > 5 && !/^\x27/ { print $1, ($(NF-1) == $3 + 1) }'
  (requested) 1
  native 1

Nothing fits: a batch of 0 and a note:

  $ gmsim fit --model llama-7b --seq 2048 --device t4 --policy native | tail -2
  'requested': even batch 1 does not fit
  'native': even batch 1 does not fit

Missing or bad arguments are usage errors:

  $ gmsim fit --model gpt2 --policy native
  gmsim: missing --capacity or --device
  usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]
                   [--vary batch|seq] [--max N] --model NAME|--hidden H ... [run options]
                   [--json]
         gmsim fit --from CAPTURE CAPTURE [CAPTURE...] [--capacity SIZE|--device NAME]
                   --policy P[,P...] [--vary batch|seq] [--max N] [--at seq=LIST]
                   [--at batch=LIST] [--base N] [--force] [--json]
  [2]
  $ gmsim fit --model gpt2 --capacity 8GiB --policy nope
  gmsim: unknown policy 'nope' (see 'gmsim policies')
  usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]
                   [--vary batch|seq] [--max N] --model NAME|--hidden H ... [run options]
                   [--json]
         gmsim fit --from CAPTURE CAPTURE [CAPTURE...] [--capacity SIZE|--device NAME]
                   --policy P[,P...] [--vary batch|seq] [--max N] [--at seq=LIST]
                   [--at batch=LIST] [--base N] [--force] [--json]
  [2]
  $ gmsim fit --model gpt2 --capacity 8GiB --policy native --param caching.pad=0
  gmsim: --param 'caching.pad=0' is for policy 'caching', which --policy does not select
  usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]
                   [--vary batch|seq] [--max N] --model NAME|--hidden H ... [run options]
                   [--json]
         gmsim fit --from CAPTURE CAPTURE [CAPTURE...] [--capacity SIZE|--device NAME]
                   --policy P[,P...] [--vary batch|seq] [--max N] [--at seq=LIST]
                   [--at batch=LIST] [--base N] [--force] [--json]
  [2]
  $ gmsim fit --model gpt2 --capacity 8GiB --policy native --seq 128,256
  gmsim: --seq takes one length here (or a distribution)
  usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]
                   [--vary batch|seq] [--max N] --model NAME|--hidden H ... [run options]
                   [--json]
         gmsim fit --from CAPTURE CAPTURE [CAPTURE...] [--capacity SIZE|--device NAME]
                   --policy P[,P...] [--vary batch|seq] [--max N] [--at seq=LIST]
                   [--at batch=LIST] [--base N] [--force] [--json]
  [2]

The devices `--device` accepts:

  $ gmsim devices | head -3
  device                 capacity         bytes     reserve  description                                   source
  a100-40gb             39.59 GiB   42505076736  448.00 MiB  NVIDIA A100 40GB (SXM4/PCIe)                  PyTorch total_memory / OOM message
    a100-40gb:1g.5gb     4.75 GiB    5100273664  448.00 MiB  A100 40GB MIG 1g.5gb                          nvidia-smi mig -lgip
  $ gmsim devices --json | grep -A2 '"h100-80gb:3g.40gb"'
      "name": "h100-80gb:3g.40gb",
      "description": "H100 80GB MIG 3g.40gb",
      "capacity": 42471522304,
  $ gmsim devices extra
  gmsim: too many arguments: 'extra'
  usage: gmsim devices [--json]
  [2]

--from searches the captured job scaled to each size (`gmsim scale`)
instead of a synthesized model: captures of a synthesized job give the
synthesizer's own answer, probe for probe:

  $ gmsim synth --model gpt2 --layers 2 --seq 64,128 --batch 2 --steps 1 --warm -o cap.db > /dev/null
  $ gmsim fit --from cap.db:gpt2.seq64 cap.db:gpt2.seq128 --vary seq --capacity 4GiB --policy caching | tail -3
  (requested)  -      1482        4.00 GiB              -  1.12 MiB         -          1483      16
  caching      cold   1455        3.92 GiB       3.99 GiB  8.00 MiB     +1.8%          1456      16
  'caching' seq 1455: margin 8.00 MiB = 4.00 GiB - peak 3.99 GiB; at the edge: within 2% of the device
  $ gmsim fit --model gpt2 --layers 2 --batch 2 --vary seq --capacity 4GiB --policy caching | tail -3
  (requested)  -      1482        4.00 GiB              -  1.12 MiB         -          1483      22
  caching      cold   1455        3.92 GiB       3.99 GiB  8.00 MiB     +1.8%          1456      22
  'caching' seq 1455: margin 8.00 MiB = 4.00 GiB - peak 3.99 GiB; at the edge: within 2% of the device
  $ gmsim fit --from cap.db:gpt2.seq64 cap.db:gpt2.seq128 --vary batch --capacity 4GiB --policy caching
  gmsim: the batch size does not vary among the captures (all 2): cannot scale to batch 3
  [1]
  $ gmsim fit --from cap.db:gpt2.seq64 --vary seq --capacity 4GiB --policy caching
  gmsim: --from needs two or more captures of the job at different sizes
  usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]
                   [--vary batch|seq] [--max N] --model NAME|--hidden H ... [run options]
                   [--json]
         gmsim fit --from CAPTURE CAPTURE [CAPTURE...] [--capacity SIZE|--device NAME]
                   --policy P[,P...] [--vary batch|seq] [--max N] [--at seq=LIST]
                   [--at batch=LIST] [--base N] [--force] [--json]
  [2]
  $ gmsim fit --at seq=1,2 --model gpt2 --capacity 4GiB --policy caching
  gmsim: --at, --base and --force need --from
  usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]
                   [--vary batch|seq] [--max N] --model NAME|--hidden H ... [run options]
                   [--json]
         gmsim fit --from CAPTURE CAPTURE [CAPTURE...] [--capacity SIZE|--device NAME]
                   --policy P[,P...] [--vary batch|seq] [--max N] [--at seq=LIST]
                   [--at batch=LIST] [--base N] [--force] [--json]
  [2]
