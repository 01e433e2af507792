`gmsim synth --model` writes tensor-level training traces of a transformer
(docs/synth.md).  Presets give the published shapes:

  $ gmsim synth --list-models | head -4
  model           arch   hidden  layers  heads  kv    ffn   vocab    params  source
  gpt2            gpt       768      12     12  12   3072   50257    124.4M  GPT-2 small (Radford et al. 2019)
  gpt2-medium     gpt      1024      24     16  16   4096   50257    354.8M  GPT-2 medium (Radford et al. 2019)
  gpt2-large      gpt      1280      36     20  20   5120   50257    774.0M  GPT-2 large (Radford et al. 2019)
  $ gmsim synth --list-models | grep -c .
  17
  $ gmsim synth --list-models --json | grep -A3 '"llama-7b"'
      "name": "llama-7b",
      "arch": "llama",
      "hidden": 4096,
      "layers": 32,

One trace per sequence length of a list, named after the model:

  $ gmsim synth --model gpt2 --batch 2 --seq 128,256 --steps 2 -o t.db
  synthesized 'gpt2.seq128' into 't.db': * (glob)
  synthesized 'gpt2.seq256' into 't.db': * (glob)
  $ gmsim info t.db | head -3
  trace        source  device  capacity  events      load  seq_len  batch  recorded reserved  settings (not PyTorch's defaults)
  gpt2.seq128  * (glob)
  gpt2.seq256  * (glob)

The attributes carry the whole config, the sequence length and the batch;
what outlives the run is the weights, their gradients and the AdamW state
(4 x 148 tensors):

  $ gmsim info t.db --json | grep -m1 '"attrs"' | grep -o '"source": "synth", "model": "gpt2", "seq_len": 128, "batch": 2'
  "source": "synth", "model": "gpt2", "seq_len": 128, "batch": 2
  $ gmsim info t.db --json | grep -m1 '"attrs"' | grep -o '"optimizer":"adamw"'
  "optimizer":"adamw"
  $ gmsim info t.db --json | grep -m1 live_at_end
        "live_at_end": 592,

Marks name steps and phases; the export shows them in order:

  $ gmsim export t.db --trace gpt2.seq128 > e.csv && grep -o 'step\|forward\|backward\|optimizer' e.csv | uniq | tr '\n' ' '; echo
  step forward backward optimizer step forward backward optimizer 

Replay takes a device preset for the capacity (`gmsim devices`):

  $ gmsim replay t.db --trace gpt2.seq128 --policy native --device t4 | head -1
  trace 'gpt2.seq128': * capacity 14.44 GiB (t4: 14.75 GiB less 320.00 MiB outside the allocator) (glob)
  $ gmsim replay t.db --trace gpt2.seq128 --policy native --device a100-80gb:1g.10gb | head -1
  trace 'gpt2.seq128': * capacity 9.06 GiB (a100-80gb:1g.10gb: 9.50 GiB less 448.00 MiB outside the allocator) (glob)
  $ gmsim replay t.db --trace gpt2.seq128 --policy native --device tpu-v9 2>&1 | head -1
  gmsim: invalid value for --device: 'tpu-v9' is neither a size nor a device (see 'gmsim devices')

The same config and seed give the same trace; a distribution of lengths
draws one per micro-batch from the seed:

  $ gmsim synth --model bert-base --batch 4 --seq uniform:64:512 --steps 3 --seed 5 -o a.db --name b
  synthesized 'b' into 'a.db': * (glob)
  $ gmsim synth --model bert-base --batch 4 --seq uniform:64:512 --steps 3 --seed 5 -o c.db --name b
  synthesized 'b' into 'c.db': * (glob)
  $ gmsim synth --model bert-base --batch 4 --seq uniform:64:512 --steps 3 --seed 6 -o c.db --name d
  synthesized 'd' into 'c.db': * (glob)
  $ gmsim info a.db --json | grep digest > x; gmsim info c.db --json | grep digest | head -1 > y; cmp x y && echo same
  same
  $ gmsim info c.db --json | grep digest | sort -u | wc -l
  2

Lengths from a file, cycled over the micro-batches:

  $ printf '128 256\n# a comment\n512\n' > lens.txt
  $ gmsim synth --model gpt2 --seq file:lens.txt --steps 3 -o f.db --json | grep -o '"seq":\[128,256,512\]'
  "seq":[128,256,512]

A shape instead of a preset (named "custom"), with grouped-query attention:

  $ gmsim synth --arch llama --hidden 512 --layers 4 --heads 8 --kv-heads 2 --vocab 1000 --seq 64 -o g.db
  synthesized 'custom' into 'g.db': * (glob)

The random workload is still there (and the default without model options):

  $ gmsim synth --workload random --events 1000 -o r.db
  wrote 'random' into 'r.db': 1000 events * (glob)

Errors are usage errors and write nothing:

  $ gmsim synth --model gpt5 -o z.db
  gmsim: unknown model 'gpt5'; did you mean 'gpt2'?
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --model gpt2 --heads 7 -o z.db
  gmsim: heads (7) must divide hidden (768)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --model gpt2 --seq uniform:9:8 -o z.db
  gmsim: invalid value for --seq: 'uniform:9:8' (expected uniform:LO:HI with 1 <= LO <= HI <= 1048576)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --model gpt2 --precision fp8 -o z.db
  gmsim: invalid value for --precision: 'fp8' (expected fp32|bf16|fp16|mixed|amp)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --model gpt2 --events 10 -o z.db
  gmsim: --events and --live-max go with --workload random
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --model gpt2 --seq file:missing.txt -o z.db
  gmsim: cannot open 'missing.txt': no such file or directory
  [1]
  $ printf '128\n0\n' > bad.txt; gmsim synth --model gpt2 --seq file:bad.txt -o z.db
  gmsim: invalid sequence length in 'bad.txt' line 2: '0' (1 to 1048576)
  [1]
  $ ls z.db
  ls: cannot access 'z.db': No such file or directory
  [2]

Modes.  `--mode forward` runs forward passes with autograd on and no
backward, as `logits = model(x)` without `no_grad` does: the graph's saved
tensors are alive at the end of each pass, released when the next one
starts; no gradients, no optimizer.  `--loss ce` adds the cross-entropy
(and the labels) to a forward or an inference pass:

  $ gmsim synth --model gpt2 --batch 2 --seq 128 --steps 2 --mode forward -o m.db
  synthesized 'gpt2' into 'm.db': 934 events (620 allocs, 310 frees, 4 marks), load 687.33 MiB
  $ gmsim export m.db --trace gpt2 | grep -o 'step\|forward\|backward\|optimizer' | uniq | tr '\n' ' '; echo
  step forward step forward 
  $ gmsim synth --model gpt2 --batch 2 --seq 128 --steps 1 --mode forward --loss ce -o m.db --name ce
  synthesized 'ce' into 'm.db': 463 events (387 allocs, 74 frees, 2 marks), load 736.41 MiB
  $ gmsim info m.db --json | grep -o '"mode":"[a-z]*","loss":"[a-z]*"' | sort
  "mode":"forward","loss":"ce"
  "mode":"forward","loss":"none"

Under `--precision amp` (torch.autocast) a `no_grad` pass keeps a 16-bit
copy of every matrix until the pass ends (autocast's cast cache);
`--grad-mode inference_mode` caches none, each copy freed after its use:

  $ gmsim synth --model gpt2 --batch 2 --seq 128 --steps 1 --mode inference --precision amp -o m.db --name ng
  synthesized 'ng' into 'm.db': 818 events (482 allocs, 334 frees, 2 marks), load 735.99 MiB
  $ gmsim synth --model gpt2 --batch 2 --seq 128 --steps 1 --mode inference --precision amp --grad-mode inference_mode -o m.db --name im
  synthesized 'im' into 'm.db': 818 events (482 allocs, 334 frees, 2 marks), load 573.99 MiB

A training step needs its loss, and only inference has a grad mode:

  $ gmsim synth --model gpt2 --loss none -o z.db
  gmsim: a training step needs a loss (--loss ce)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --model gpt2 --mode forward --grad-mode inference_mode -o z.db
  gmsim: grad mode inference_mode is for --mode inference (train and forward record the graph)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --model gpt2 --loss mse -o z.db
  gmsim: invalid value for --loss: 'mse' (expected none|ce)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]

`--explain` says where a synthesized job's bytes are, by class, at its
peak and at the end of its last forward pass (without `-o` nothing is
written).  A `no_grad` pass under autocast: the weights, and a 16-bit copy
of each of gpt2's 49 matrices (its tied embedding is the output layer):

  $ gmsim synth --model gpt2 --batch 2 --seq 128 --steps 1 --precision amp --mode inference --explain
  where the bytes of 'gpt2' are: at its peak (in forward, event 762) and at the end of its last forward pass
  class                at the peak  allocations  end of forward  allocations
  weights               474.70 MiB          148      474.70 MiB          148
  weight copies         235.62 MiB           49      235.62 MiB           49
  inputs                  2.00 KiB            1        2.00 KiB            1
  16-bit input copies   384.00 KiB            1             0 B            0
  logits and loss        24.54 MiB            1       24.54 MiB            1
  temporaries           770.00 KiB            3        2.00 KiB            2
  total                 735.99 MiB          203      734.86 MiB          201
  $ gmsim synth --explain -o q.db
  gmsim: --explain goes with --workload model
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
