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
  
  sum of the components: * (glob)
  the peak at seq 1024: * constant + * linear + * quadratic in s; the s^1 term dominates: linear in s (activations, logits) (glob)
  the quadratic term overtakes the linear one from seq * on (at this peak's composition) (glob)

The last lines split the peak by order in s (each allocation alive at the
peak, sized again at twice the length) and name the term that dominates;
at twice the length the attention's s^2 tensors do, and a length past the
positions the model has is pointed out:

  $ gmsim estimate --model gpt2 --batch 8 --seq 2048 | tail -3
  the peak at seq 2048: * the s^2 term dominates: quadratic in s (attention scores, probabilities, their gradients, masks) (glob)
  the quadratic term has overtaken the linear one from seq * on (at this peak's composition) (glob)
  note: seq 2048 is beyond the 1024 positions of gpt2 (max positions): its learned position table has no rows past them, a real run fails
  $ gmsim estimate --model llama-7b --batch 1 --seq 4096 --json | grep -E '"(dominant_term|max_positions|beyond_positions)"'
        "dominant_term": "s0",
        "max_positions": 2048,
        "beyond_positions": true
  $ gmsim estimate --model llama-7b --batch 1 --seq 1024 | grep -c 'beyond'
  0
  [1]

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

  $ gmsim estimate --model llama-7b --batch 1 --seq 4096 --precision bf16 --device a100-80gb | tail -1
  peak * exceeds a100-80gb (79.15 GiB): out of memory (glob)
  $ gmsim estimate --model gpt2 --batch 1 --seq 128 --capacity 16GiB | tail -1
  peak * fits in the capacity (16.00 GiB): before allocator overhead; see 'gmsim fit' (glob)

A --seq list gives one estimate per length:

  $ gmsim estimate --model gpt2 --seq 256,512 --json | grep -c '"seq_len"'
  2

Bad options are usage errors:

  $ gmsim estimate --model gpt2 --device h900
  gmsim: invalid value for --device: 'h900' is neither a size nor a device (see 'gmsim devices')
  usage: gmsim estimate --model NAME|--hidden H ... [run options] [--json]
                        [--capacity SIZE|--device NAME]
  [2]
  $ gmsim estimate --model gpt2 --zero 4
  gmsim: invalid value for --zero: '4' (0, 1, 2 or 3)
  usage: gmsim estimate --model NAME|--hidden H ... [run options] [--json]
                        [--capacity SIZE|--device NAME]
  [2]
