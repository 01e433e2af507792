`gmsim estimate` prints one device's memory, line by line with the formula
each comes from (docs/synth.md):

  $ gmsim estimate --model gpt2 --batch 8 --seq 1024
  gpt2: 124.4M parameters, batch 8, seq 1024, train fp32, adamw (per device)
  
  component    * (glob)
  parameters                497759232   0.464  psi=124.4M x 4 B (fp32 weights) [seed: MB = count x bits / 8 / 1024^2]
  gradients                 497759232   0.464  psi=124.4M x 4 B, allocated in backward
  optimizer state           995518464   0.927  psi=124.4M x 2 x 4 B (m, v)
  saved activations * L=12 x (* (glob)
  logits and loss * s*b*V x (4 B + 4 B log-probs) (glob)
  inputs * s*b x 8 B token ids and labels (glob)
  temporaries * (glob)
  total (peak requested) * allocations per step (glob)
  
  sum of the components but the temporaries: * (not a bound: they never all live at once; the peak above is what is live together) (glob)
  the peak at seq 1024: 1.39 GiB constant + 10.82 GiB linear + 10.12 GiB quadratic in s; the s^1 term dominates: linear in s (activations, logits)
  the quadratic term overtakes the linear one from seq 1095 on (at this peak's composition)

The parameter bytes follow the seeds' rule (count x bits / 8), and mixed
precision with Adam holds 16 bytes per parameter, which ZeRO shards
(Rajbhandari et al.): here 2 + 14/8 bytes per parameter with stage 2 and 8
ranks:

  $ gmsim estimate --model gpt2 --precision mixed --zero 2 --dp 8 --json > e.json
  $ grep -A2 '"name": "parameters"' e.json | grep bytes
            "bytes": 248879616,
  $ grep -A2 '"name": "gradients"' e.json | grep bytes
            "bytes": 31109952,
  $ grep -A2 '"name": "optimizer"' e.json | grep bytes
            "bytes": 186659712,

Recompute shrinks what is saved for backward (none > selective > full):

  $ for r in none selective full; do
  >   gmsim estimate --model gpt2-medium --seq 1024 --recompute $r --json |
  >     grep -A2 '"saved_activations"' | grep -o '"bytes": [0-9]*'
  > done
  "bytes": 42348904448
  "bytes": 13357875200
  "bytes": 872480768

With a capacity or a device preset it says whether the peak fits:

  $ gmsim estimate --model llama-7b --batch 1 --seq 4096 --precision bf16 --device a100-80gb | sed -n '/^peak/,$p'
  peak 90.69 GiB exceeds a100-80gb (79.15 GiB, 448.00 MiB of it outside the allocator) by 11.98 GiB: out of memory
  to fit, change one of (each estimated alone, before allocator overhead; then 'gmsim fit'):
    --recompute selective                              peak 62.76 GiB
    --attention flash                                  peak 62.76 GiB
    --recompute full                                   peak 62.76 GiB
    --offload optimizer                                peak 65.59 GiB
    --zero 3 --dp 8 (8 GPUs)                           peak 58.15 GiB

Each change it names does fit, estimated on its own:

  $ for c in '--recompute selective' '--attention flash' '--offload optimizer' '--zero 3 --dp 8'; do
  >   gmsim estimate --model llama-7b --batch 1 --seq 4096 --precision bf16 --device a100-80gb $c | tail -1
  > done
  peak 62.76 GiB fits in a100-80gb (79.15 GiB): margin 15.96 GiB = 79.15 GiB - reserve 448.00 MiB - peak 62.76 GiB; before allocator overhead; see 'gmsim fit'
  peak 62.76 GiB fits in a100-80gb (79.15 GiB): margin 15.96 GiB = 79.15 GiB - reserve 448.00 MiB - peak 62.76 GiB; before allocator overhead; see 'gmsim fit'
  peak 65.59 GiB fits in a100-80gb (79.15 GiB): margin 13.13 GiB = 79.15 GiB - reserve 448.00 MiB - peak 65.59 GiB; before allocator overhead; see 'gmsim fit'
  peak 58.15 GiB fits in a100-80gb (79.15 GiB): margin 20.57 GiB = 79.15 GiB - reserve 448.00 MiB - peak 58.15 GiB; before allocator overhead; see 'gmsim fit'

A smaller batch is the last resort, with the gradient accumulation that
keeps the global batch when it divides; --json lists the same under
"to_fit":

  $ gmsim estimate --model gpt2-large --batch 32 --seq 1024 --device a100-40gb | sed -n '/^to fit/,$p'
  to fit, change one of (each estimated alone, before allocator overhead; then 'gmsim fit'):
    --recompute full                                   peak 39.13 GiB
    --batch 2 --grad-accum 16 (the same global batch)  peak 31.55 GiB
    --batch 3                                          peak 38.67 GiB
  $ gmsim estimate --model gpt2-large --batch 2 --grad-accum 16 --seq 1024 --device a100-40gb | tail -1
  peak 31.55 GiB fits in a100-40gb (39.59 GiB): margin 7.60 GiB = 39.59 GiB - reserve 448.00 MiB - peak 31.55 GiB; before allocator overhead; see 'gmsim fit'
  $ gmsim estimate --model gpt2-large --batch 3 --seq 1024 --device a100-40gb | tail -1
  peak 38.67 GiB fits in a100-40gb (39.59 GiB): margin 492.37 MiB = 39.59 GiB - reserve 448.00 MiB - peak 38.67 GiB; at the edge: within 2% of the device; before allocator overhead; see 'gmsim fit'
  $ gmsim estimate --model gpt2-large --batch 32 --seq 1024 --device a100-40gb --json | grep -A1 '"change"'
            "change": "--recompute full",
            "peak": 42013631492
  --
            "change": "--batch 2 --grad-accum 16 (the same global batch)",
            "peak": 33871589380
  --
            "change": "--batch 3",
            "peak": 41519023108
  $ gmsim estimate --model gpt2 --batch 1 --seq 128 --capacity 16GiB | tail -1
  peak 2.32 GiB fits in the capacity (16.00 GiB): margin 13.68 GiB = 16.00 GiB - peak 2.32 GiB; before allocator overhead; see 'gmsim fit'

A --seq list gives one estimate per length:

  $ gmsim estimate --model gpt2 --seq 256,512 --json | grep -c '"seq_len"'
  2

Bad options are usage errors:

  $ gmsim estimate --model gpt2 --device h900
  gmsim: invalid value for --device: 'h900' is neither a size nor a device (see 'gmsim devices'); did you mean 'h200' or 'h100'?
  usage: gmsim estimate --model NAME|--hidden H ... [run options] [--json]
                        [--capacity SIZE|--device NAME] [--reserve SIZE]
  [2]
  $ gmsim estimate --model gpt2 --zero 4
  gmsim: invalid value for --zero: '4' (0, 1, 2 or 3)
  usage: gmsim estimate --model NAME|--hidden H ... [run options] [--json]
                        [--capacity SIZE|--device NAME] [--reserve SIZE]
  [2]

The modes and autocast.  A forward pass with autograd keeps the saved
activations (no gradients, no optimizer); under amp the weights' 16-bit
copies are a line of their own, kept by the graph in a forward or a
training step, by autocast's cast cache in a `no_grad` pass, and by
nothing under `inference_mode`:

  $ gmsim estimate --model gpt2 --batch 2 --seq 256 --mode forward --precision amp | sed -n '1p;5,9p' | cut -c1-64
  gpt2: 124.4M parameters, batch 2, seq 256, forward amp, no optim
  gradients                        0  0.000  none (forward only)
  optimizer state                  0  0.000  none (forward only)
  saved activations * L=12 x (* (glob)
  weight copies            247064064  0.230  matrices x 2 B: torch
  logits and loss           51463168  0.048  s*b*V x (2 B)
  $ gmsim estimate --model gpt2 --mode inference --precision amp | grep -e '^gpt2' -e 'weight copies'
  gpt2: 124.4M parameters, batch 8, seq 1024, inference (no_grad) amp, no optimizer (per device)
  weight copies            247064064  0.230  matrices x 2 B: torch.autocast's 16-bit casts, held by its cast cache until the forward ends (no_grad)
  $ gmsim estimate --model gpt2 --mode inference --precision amp --grad-mode inference_mode | grep 'weight copies'
  weight copies                    0  0.000  matrices x 2 B: torch.autocast's 16-bit casts: none kept (inference_mode: a copy per use, freed after it)
