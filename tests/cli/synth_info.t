`gmsim synth` writes a seeded random workload; `gmsim info` lists traces.

  $ gmsim synth --workload random --events 20000 --seed 7 --live-max 2GiB -o t.db
  wrote 'random' into 't.db': 20000 events (9997 allocs, 9997 frees, 6 marks), load 1.70 GiB
  $ gmsim synth --events 5000 --seed 1 -o t.db --name small
  wrote 'small' into 't.db': 5000 events (2499 allocs, 2499 frees, 2 marks), load 3.98 GiB

The same seed always gives the same trace (the digest is of the content):

  $ gmsim synth --events 5000 --seed 1 -o u.db --name small
  wrote 'small' into 'u.db': 5000 events (2499 allocs, 2499 frees, 2 marks), load 3.98 GiB
  $ gmsim info t.db --json | grep -A20 '"small"' | grep digest > a
  $ gmsim info u.db --json | grep digest > b
  $ cmp a b && echo same
  same
  $ gmsim synth --events 5000 --seed 2 -o u.db --name other
  wrote 'other' into 'u.db': 5000 events (2499 allocs, 2499 frees, 2 marks), load 5.14 GiB
  $ gmsim info u.db --json | grep digest | sort -u | wc -l
  2

The table (what each trace is; every count and attribute with --json):

  $ gmsim info t.db
  trace   source  device  capacity  events      load  seq_len  batch  recorded reserved  settings (not PyTorch's defaults)
  random  random       -         -   20000  1.70 GiB        -      -                  -  -
  small   random       -         -    5000  3.98 GiB        -      -                  -  -
  
  2 traces, [0-9.]+ KiB on disk; every count and attribute: gmsim info --json t.db (re)

  $ gmsim info t.db --json
  {
    "store": "t.db",
    "traces": [
      {
        "name": "random",
        "events": 20000,
        "allocs": 9997,
        "frees": 9997,
        "marks": 6,
        "segs": 0,
        "load": 1825317240,
        "live_at_end": 0,
        "chunks": 1,
        "bytes": [0-9]+, (re)
        "bytes_per_event": [0-9.]+, (re)
        "digest": "6ee78ad6feeb372b35eca0cf5ea6f1f8",
        "attrs": {"source": "random", "seed": 7, "events": 20000, "live_max": 2147483648, "dropped_zero_size": 0}
      },
      {
        "name": "small",
        "events": 5000,
        "allocs": 2499,
        "frees": 2499,
        "marks": 2,
        "segs": 0,
        "load": 4268456114,
        "live_at_end": 0,
        "chunks": 1,
        "bytes": [0-9]+, (re)
        "bytes_per_event": [0-9.]+, (re)
        "digest": "336c33bcd1f0c54d7b859533f925b3d5",
        "attrs": {"source": "random", "seed": 1, "events": 5000, "live_max": 8589934592, "dropped_zero_size": 0}
      }
    ]
  }

A name already taken needs --replace; bad arguments are usage errors (exit
2) and create no file:

  $ gmsim synth --events 5000 -o t.db --name small
  gmsim: trace 'small' already exists in 't.db'
  hint: use --replace to overwrite it
  [1]
  $ gmsim synth --events 6000 -o t.db --name small --replace
  wrote 'small' into 't.db': 6000 events (2999 allocs, 2999 frees, 2 marks), load 3.98 GiB
  $ gmsim synth --events 1 -o v.db
  gmsim: too few events for a workload: 1 (at least 2)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --events 10 --live-max 1KiB -o v.db
  gmsim: live bound too small for a workload: 1024 bytes (at least 4 KiB)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --events ten -o v.db
  gmsim: invalid value for --events: 'ten' is not an unsigned integer
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]

Numbers follow the rule of CSV fields: decimal or 0x hex, no sign, no spaces.

  $ gmsim synth --events 10 --seed 0x0x10 -o v.db
  gmsim: invalid value for --seed: '0x0x10' is not an unsigned integer
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --events "$(printf '\t10')" -o v.db
  gmsim: invalid value for --events: '\x0910' is not an unsigned integer
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --events 10 --seed 18446744073709551616 -o v.db
  gmsim: invalid value for --seed: '18446744073709551616' is not an unsigned integer
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --events 0x10 --seed 0xFFFFFFFFFFFFFFFF -o hex.db
  wrote 'random' into 'hex.db': 16 events .* (re)
  $ gmsim synth --events 10 --live-max lots -o v.db
  gmsim: invalid value for --live-max: invalid size 'lots'
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --workload bert -o v.db
  gmsim: unknown workload 'bert' (known: random, model)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ gmsim synth --events 10
  gmsim: missing the store to write (-o DB)
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
                     -o DB [--name NAME] [--replace] [--json]
  [2]
  $ test -e v.db || echo absent
  absent

--json reports the stored trace as `gmsim info --json` does:

  $ gmsim synth --events 100 --seed 5 -o j.db --json | grep -v '"bytes\|digest'
  {
    "store": "j.db",
    "trace": {
      "name": "random",
      "events": 100,
      "allocs": 49,
      "frees": 49,
      "marks": 2,
      "segs": 0,
      "load": 941466667,
      "live_at_end": 0,
      "chunks": 1,
      "attrs": {"source": "random", "seed": 5, "events": 100, "live_max": 8589934592, "dropped_zero_size": 0}
    }
  }
