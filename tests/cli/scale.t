`gmsim scale` predicts a captured job at other sizes from captures of it at
two or more sizes.  Synthesized traces follow exact size laws, so the
prediction at 16x the captured length is the synthesis at that length,
event for event:

  $ gmsim synth --model gpt2 --layers 2 --seq 64,128,1024 --batch 2 -o syn.db > /dev/null
  $ gmsim scale syn.db:gpt2.seq64 syn.db:gpt2.seq128 --seq 1024,2048 -o pred.db
  gmsim: warning: seq 1024, batch 2 is 8.0x beyond the captures: the band is ±3.0%
  gmsim: warning: seq 2048, batch 2 is 16.0x beyond the captures: the band is ±4.0%
  base 'syn.db:gpt2.seq128' (seq 128, batch 2): 448 allocations, 2.28 GiB requested in all
  
  alignment with the base
    capture            seq  batch  paired  window   share
    syn.db:gpt2.seq64   64      2     448     448  100.0%
  
  size laws
    law         allocations       bytes  of bytes
    constant            204    1.68 GiB    73.87%
    power               244  610.18 MiB    26.13%
    polynomial            0         0 B     0.00%
    affine                0         0 B     0.00%
    site                  0         0 B     0.00%
    none                  0         0 B     0.00%
    seq exponents: p=0: 204 p=1: 196 p=2: 48
    pre-existing: 0 of 0 paired
  
  how sure: how far beyond the captures, the predicted bytes by law, the band
    trace                beyond  verified  two-point  captured size   band  on the load
    gpt2.seq128.seq1024    8.0x      0.0%     100.0%    0.00% (0 B)  ±3.0%   ±84.77 MiB
    gpt2.seq128.seq2048   16.0x      0.0%     100.0%    0.00% (0 B)  ±4.0%  ±236.09 MiB
  
  wrote into 'pred.db'
    gpt2.seq128.seq1024  seq 1024, batch 2  792 events  load 2.76 GiB
    gpt2.seq128.seq2048  seq 2048, batch 2  792 events  load 5.76 GiB
  $ gmsim export syn.db -t gpt2.seq1024 > real.csv
  $ gmsim export pred.db -t gpt2.seq128.seq1024 > pred.csv
  $ cmp real.csv pred.csv && echo same events and sizes
  same events and sizes
  $ gmsim info pred.db --json | grep -o '"seq_len": [0-9]*, "batch": [0-9]*'
  "seq_len": 1024, "batch": 2
  "seq_len": 2048, "batch": 2

The scaled traces carry seq_len, so the other verbs pivot on it unchanged:

  $ gmsim compare pred.db syn.db --policy caching --by seq_len | head -4
  peak reserved by seq_len
  
  policy   start           64          128  1024 (gpt2.seq1024)  1024 (gpt2.seq128.seq1024)      2048
  load            1021.60 MiB  1021.60 MiB             2.76 GiB                    2.76 GiB  5.76 GiB

--base picks the capture whose events are scaled; --json reports it all:

  $ gmsim scale syn.db:gpt2.seq64 syn.db:gpt2.seq128 --seq 32 --base 1 -o small.db --json | grep -E '"(base|paired|window)"'
    "base": "syn.db:gpt2.seq64",
        "paired": 448,
        "window": 448,
        "attrs": {"model": "gpt2", "scaled_from": [{"trace":"syn.db:gpt2.seq64","seq_len":64,"batch":2,"base":true},{"trace":"syn.db:gpt2.seq128","seq_len":128,"batch":2,"base":false}], "scale_laws": {"constant":204,"power":244,"polynomial":0,"affine":0,"site":0,"none":0}, "source": "scale", "seq_len": 32, "batch": 2, "dropped_zero_size": 0}

Captures without seq_len / batch attributes take them from --at (or from
`gmsim import --attr seq_len=N`):

  $ gmsim export syn.db -t gpt2.seq64 > a.csv
  $ gmsim export syn.db -t gpt2.seq128 > b.csv
  $ gmsim import a.csv b.csv -o raw.db > /dev/null
  $ gmsim scale raw.db:a raw.db:b --seq 256 -o x.db
  gmsim: 'raw.db:a' has no sequence length or batch size (give them, or tag the trace with 'seq_len' / 'batch' attributes)
  [1]
  $ gmsim scale raw.db:a raw.db:b --at seq=64,128 --seq 1024 -o x.db | tail -1
  gmsim: warning: seq 1024 is 8.0x beyond the captures: the band is ±3.0%
    b.seq1024  seq 1024  792 events  load 2.76 GiB
  $ gmsim scale raw.db:a raw.db:b --at seq=64,128 --seq 1024 --batch 4 -o y.db
  gmsim: the captures have no batch size: cannot scale to batch 4
  [1]
  $ test -e y.db || echo nothing written
  nothing written

Bad input is refused with nothing written: one capture, equal sizes,
captures of different programs (a synthetic random workload is not the
model's training step), a store that does not exist:

  $ gmsim scale syn.db:gpt2.seq64 --seq 256 -o z.db
  gmsim: one capture only: scaling needs two or more captures of the job at different sizes
  usage: gmsim scale CAPTURE CAPTURE [CAPTURE...] (--seq LIST | --batch LIST) -o DB
                     [--at seq=LIST] [--at batch=LIST] [--base N] [--prefix NAME]
                     [--min-matched PCT] [--force] [--replace] [--json]
  [2]
  $ gmsim scale raw.db:a raw.db:b --at seq=64,64 --seq 256 -o z.db
  gmsim: 'raw.db:a' and 'raw.db:b' have equal sizes (seq 64): captures at different sizes are needed
  [1]
  $ gmsim synth --events 4000 -o rnd.db > /dev/null
  $ gmsim import a.csv -o rnd.db --name model --attr seq_len=64 > /dev/null
  $ gmsim scale rnd.db:model rnd.db:random --at seq=64,128 --seq 256 -o z.db
  gmsim: 'rnd.db:model' does not align with 'rnd.db:random': 0 of 1999 allocations paired (0.0%, below 90%); it breaks at event 1 of 'random' (allocation 0, 802314 bytes, after mark 'step'), event 0 of 'model'; different programs? (--force to go on)
  [1]
  $ gmsim scale nope.db:a raw.db:b --seq 256 -o z.db
  gmsim: cannot open 'nope.db': no such file
  [1]
  $ test -e z.db || echo nothing written
  nothing written
  $ gmsim scale syn.db:gpt2.seq64 syn.db:gpt2.seq128 -o z.db
  gmsim: missing the target sizes (--seq or --batch)
  usage: gmsim scale CAPTURE CAPTURE [CAPTURE...] (--seq LIST | --batch LIST) -o DB
                     [--at seq=LIST] [--at batch=LIST] [--base N] [--prefix NAME]
                     [--min-matched PCT] [--force] [--replace] [--json]
  [2]
  $ gmsim scale syn.db:gpt2.seq64 syn.db:gpt2.seq128 --seq 1024 -o pred.db
  gmsim: warning: seq 1024, batch 2 is 8.0x beyond the captures: the band is ±3.0%
  gmsim: trace 'gpt2.seq128.seq1024' already exists in 'pred.db'
  hint: use --replace to overwrite it
  [1]

How sure a prediction is (issue 30): how far it lies beyond the captures,
the share of its bytes under laws verified on a further capture, under
laws that two captures fix, and kept at their captured size, and the band
those give (docs/validation.md).  A target past 4x the captures is warned
of; past 64x it is refused unless --force:

  $ gmsim scale syn.db:gpt2.seq64 syn.db:gpt2.seq128 --seq 16384 -o far.db
  gmsim: seq 16384, batch 2 is 128.0x beyond the captures (more than 64x): its laws are checked nowhere near it; capture nearer the target (--force to go on)
  [1]
  $ test -e far.db || echo nothing written
  nothing written
  $ gmsim scale syn.db:gpt2.seq64 syn.db:gpt2.seq128 --seq 16384 -o far.db --force 2>&1 | tail -3
  
  wrote into 'far.db'
    gpt2.seq128.seq16384  seq 16384, batch 2  792 events  load 159.34 GiB
  $ gmsim synth --model gpt2 --layers 2 --seq 256 --batch 2 -o syn256.db > /dev/null
  $ gmsim scale syn.db:gpt2.seq64 syn.db:gpt2.seq128 syn256.db --seq 512 -o three.db | tail -6
  how sure: how far beyond the captures, the predicted bytes by law, the band
    trace        beyond  verified  two-point  captured size   band  on the load
    gpt2.seq512    2.0x    100.0%       0.0%    0.00% (0 B)  ±0.2%    ±4.03 MiB
  
  wrote into 'three.db'
    gpt2.seq512  seq 512, batch 2  792 events  load 1.57 GiB
  $ gmsim scale syn.db:gpt2.seq64 syn.db:gpt2.seq128 --seq 256 -o b.db --json | grep -A 10 '"bands"'
    "bands": [
      {
        "trace": "gpt2.seq128.seq256",
        "beyond": 2,
        "bytes": 3220249624,
        "verified_bytes": 0,
        "two_point_bytes": 3220249624,
        "captured_bytes": 0,
        "captured_allocations": 0,
        "by_count_allocations": 0,
        "band": 0.01

Scaling the batch is verified on synthesized traces only (issue 30, item
6), and `scale` says so when a target's batch differs from the base's:

  $ gmsim synth --model gpt2 --layers 2 --seq 128 --batch 2 -o b2.db > /dev/null
  $ gmsim synth --model gpt2 --layers 2 --seq 128 --batch 4 -o b4.db > /dev/null
  $ gmsim scale b2.db b4.db --batch 8 -o b8.db 2>&1 >/dev/null
  gmsim: note: scaling the batch is verified on synthesized traces only, not yet on real captures at several batch sizes (docs/validation.md)
