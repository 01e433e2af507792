What `gmsim scale` and `gmsim fit --from` refuse, and how their answers
read (issue 32).

Two captures of one job, each a store of one trace:

  $ gmsim synth --model gpt2 --layers 2 --seq 128 --batch 2 --steps 1 --warm -o c128.db > /dev/null
  $ gmsim synth --model gpt2 --layers 2 --seq 256 --batch 2 --steps 1 --warm -o c256.db > /dev/null

An output that is one of the captures' stores is refused before anything is
read or written (it would add a trace to the capture, which then holds two):
by name, through a link, or as a store's companion file:

  $ gmsim scale c128.db c256.db --seq 512 -o c256.db
  gmsim: cannot write 'c256.db': it is the input 'c256.db' (name another file)
  usage: gmsim scale CAPTURE CAPTURE [CAPTURE...] (--seq LIST | --batch LIST) -o DB
                     [--at seq=LIST] [--at batch=LIST] [--base N] [--prefix NAME]
                     [--min-matched PCT] [--force] [--replace] [--json]
  [2]
  $ ln -s c128.db link.db
  $ gmsim scale c128.db:gpt2 c256.db:gpt2 --seq 512 -o link.db 2> /dev/null
  [2]
  $ gmsim scale c128.db c256.db --seq 512 -o c128.db-wal 2>&1 | head -1
  gmsim: cannot write 'c128.db-wal': it is the input 'c128.db' (name another file)
  $ gmsim info c256.db | head -2 | cut -c1-5
  trace
  gpt2 
  $ gmsim scale c128.db c256.db --seq 512 -o new.db | tail -1
    gpt2.seq512  seq 512, batch 2  424 events  load 1.57 GiB

A capture store of several traces names its trace as DB:TRACE, and the
hint says so; `fit --from` prints its own synopsis:

  $ gmsim synth --model gpt2 --layers 2 --seq 64,256 --batch 2 --steps 1 --warm -o two.db > /dev/null
  $ gmsim scale c128.db two.db --seq 512 -o x.db
  gmsim: 'two.db' holds 2 traces; choose one as 'two.db:TRACE': 'gpt2.seq256', 'gpt2.seq64'
  usage: gmsim scale CAPTURE CAPTURE [CAPTURE...] (--seq LIST | --batch LIST) -o DB
                     [--at seq=LIST] [--at batch=LIST] [--base N] [--prefix NAME]
                     [--min-matched PCT] [--force] [--replace] [--json]
  [2]
  $ gmsim fit --from c128.db 'two.db:gpt2*' --vary seq --device a100-80gb --policy caching
  gmsim: 'gpt2*' matches 2 traces in 'two.db'; choose one as 'two.db:TRACE': 'gpt2.seq256', 'gpt2.seq64'
  usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]
                   [--vary batch|seq] [--max N] --model NAME|--hidden H ... [run options]
                   [--json]
         gmsim fit --from CAPTURE CAPTURE [CAPTURE...] [--capacity SIZE|--device NAME]
                   --policy P[,P...] [--vary batch|seq] [--max N] [--at seq=LIST]
                   [--at batch=LIST] [--base N] [--force] [--json]
  [2]

`fit --from` searches from the smallest captured value; a --max below it
is probed, not skipped, and when the first probe fails the search goes
down to 1, so "even seq 1 does not fit" is what a probe at 1 found:

  $ gmsim fit --from c128.db c256.db --vary seq --device a100-80gb --policy caching --max 100 | tail -3
  policy       start  seq  peak requested  peak reserved     margin  overhead  first OOM at  probes
  (requested)  -      100     1021.60 MiB              -  77.72 GiB         -             -       1
  caching      cold   100     1021.60 MiB       1.09 GiB  77.62 GiB     +9.2%             -       1
  $ gmsim fit --from c128.db c256.db --vary seq --capacity 300MiB --policy caching | tail -5
  policy       start  seq  peak requested  peak reserved  margin  overhead  first OOM at  probes
  (requested)  -        0               -              -       -         -             1       8
  caching      -        0               -              -       -         -             1       8
  'requested': even seq 1 does not fit
  'caching': even seq 1 does not fit

Trace names are shown escaped, as `info` shows them (escape sequences,
bell, newline):

  $ gmsim export c128.db -o a.csv
  $ gmsim export c256.db -o b.csv
  $ gmsim import a.csv -o e.db --name "$(printf 'a\033[31m\a')" --attr seq_len=128 > /dev/null
  $ gmsim import b.csv -o e.db --name "$(printf 'b\nx')" --attr seq_len=256 > /dev/null
  $ gmsim scale 'e.db:a*' 'e.db:b*' --seq 512 -o o.db | grep e.db
  base 'e.db:b\x0ax' (seq 256): 266 allocations, 1.80 GiB requested in all
    e.db:a\x1b[31m\x07  128      -     266     266  100.0%
  $ gmsim scale 'e.db:a*' 'e.db:b*' --seq 512 -o o2.db | tail -1
    b\x0ax.seq512  seq 512  424 events  load 1.57 GiB
  $ gmsim fit --from 'e.db:a*' 'e.db:b*' --vary seq --device a100-80gb --policy caching --max 1000 | head -1
  largest seq with no OOM: 'e.db:b\x0ax' scaled (laws from 'e.db:a\x1b[31m\x07' 'e.db:b\x0ax'), on a100-80gb (79.15 GiB)

A seq_len or batch attribute out of the range --at takes (1 to 2^40) is
refused, naming the capture, not read as 2^63-1; --at gives the sizes
instead:

  $ gmsim import a.csv -o big.db --name a --attr seq_len=18446744073709551616 > /dev/null
  $ gmsim import b.csv -o big.db --name b --attr seq_len=256 > /dev/null
  $ gmsim scale big.db:a big.db:b --seq 512 -o n.db
  gmsim: 'big.db:a': seq_len attribute 18446744073709551616 out of range (1 to 2^40; give the captures' sizes with --at seq=LIST)
  [1]
  $ gmsim fit --from big.db:a big.db:b --vary seq --device a100-80gb --policy caching
  gmsim: 'big.db:a': seq_len attribute 18446744073709551616 out of range (1 to 2^40; give the captures' sizes with --at seq=LIST)
  [1]
  $ gmsim import a.csv -o big.db --name c --attr batch=0 > /dev/null 2>&1
  $ gmsim scale big.db:c big.db:b --seq 512 -o n.db --at seq=128,256
  gmsim: 'big.db:c': batch attribute 0 out of range (1 to 2^40; give the captures' sizes with --at batch=LIST)
  [1]
  $ gmsim scale big.db:a big.db:b --seq 512 -o n.db --at seq=128,256 | tail -1
    b.seq512  seq 512  424 events  load 1.57 GiB
  $ test -e n.db && echo written
  written

A capture with a recorded starting layout (a PyTorch snapshot whose device
0 starts with a 20 MiB segment) on a device too small for that layout does
not fit with `caching`, which starts from it; it is no
error (the replay refuses the layout, the same probe on an unlimited device
replays):

  $ base64 -d > run.pickle <<'EOF'
  > gASV1wQAAAAAAAB9lCiMCHNlZ21lbnRzlF2UKH2UKIwGZGV2aWNllEsAjAdhZGRyZXNzlIoG
  > AAAAAAB/jAp0b3RhbF9zaXpllEoAAEABjA5hbGxvY2F0ZWRfc2l6ZZRKAABAAIwLYWN0aXZl
  > X3NpemWUSgAAQACMDnJlcXVlc3RlZF9zaXpllEoACT0AjAZzdHJlYW2USwCMDHNlZ21lbnRf
  > dHlwZZSMBWxhcmdllIwPc2VnbWVudF9wb29sX2lklEsASwCGlIwNaXNfZXhwYW5kYWJsZZSJ
  > jAZmcmFtZXOUXZSMBmJsb2Nrc5RdlCh9lChoBYoGAAAAAAB/jARzaXpllEoAAEAAaAlKAAk9
  > AIwFc3RhdGWUjBBhY3RpdmVfYWxsb2NhdGVklGgQXZQofZQojAhmaWxlbmFtZZSMPS92ZW52
  > L2xpYi9weXRob24zLjExL3NpdGUtcGFja2FnZXMvdG9yY2gvbm4vbW9kdWxlcy9saW5lYXIu
  > cHmUjARsaW5llEt9jARuYW1llIwHZm9yd2FyZJR1fZQoaBqMCHRyYWluLnB5lGgcSypoHYwE
  > c3RlcJR1ZXV9lChoBYoGAABAAAB/aBVKAAAAAWgJSwBoFowIaW5hY3RpdmWUaBBdlHVldX2U
  > KGgESwFoBYoGAAAAAgB/aAZKAAAgAGgHTQACaAhNAAJoCUtkaApLAGgLjAVzbWFsbJRoDWgO
  > aA+JaBBdlGgSXZQofZQoaAWKBgAAAAIAf2gVTQACaAlLZGgWaBdoEGgYdX2UKGgFigYAAgAC
  > AH9oFUoA/h8AaAlLAGgWaCNoEF2UdWV1ZYwNZGV2aWNlX3RyYWNlc5RdlChdlCh9lCiMBmFj
  > dGlvbpSMDmZyZWVfcmVxdWVzdGVklIwEYWRkcpSKBgAAQAAAf2gVSoCNWwBoCksAjAd0aW1l
  > X3VzlEsBaBBoGHV9lChoMIwOZnJlZV9jb21wbGV0ZWSUaDKKBgAAQAAAf2gVSoCNWwBoCksA
  > aDNLAmgQaBh1fZQoaDCMBWFsbG9jlGgyigYAAEAAAH9oFUoAEnoAaApLAGgzSwVoEGgYdX2U
  > KGgwaDVoMooGAABAAAB/aBVKABJ6AGgKSwBoM0sGaBBoGHV9lChoMIwNc2VnbWVudF9hbGxv
  > Y5RoMooGAAAAEAB/aBVKAABAAWgKSwBoM0sIaBBoGHV9lChoMIwMc2VnbWVudF9mcmVllGgy
  > igYAAAAQAH9oFUoAAEABaApLAGgzSwloEGgYdWVdlCh9lChoMGg6aDKKBgAAAAIAf2gVSgAA
  > IABoCksAaDNLA2gQaBh1fZQoaDBoN2gyigYAAAACAH9oFUtkaApLAGgzSwRoEGgYdWVljBJh
  > bGxvY2F0b3Jfc2V0dGluZ3OUfZQojBdQWVRPUkNIX0NVREFfQUxMT0NfQ09ORpSMAJSMDm1h
  > eF9zcGxpdF9zaXpllEr/////jBNleHBhbmRhYmxlX3NlZ21lbnRzlImMGHJvdW5kdXBfcG93
  > ZXIyX2RpdmlzaW9uc5R9lCiMATGUSwCMATKUSwB1dYwUZXh0ZXJuYWxfYW5ub3RhdGlvbnOU
  > XZQofZQojAVzdGFnZZSMBVNUQVJUlGgdaB5oBEsAaDNLA3V9lChoTYwDRU5ElGgdaB5oBEsA
  > aDNLB3VldS4=
  > EOF
  $ gmsim import run.pickle -o run.db > /dev/null
  $ gmsim fit --from run.db:run.dev0 run.db:run.dev0 --at seq=128,256 --vary seq --capacity 15MiB --policy caching,bfc | tail -4
  (requested)  -      1048576       11.44 MiB              -  3.56 MiB         -             -      14
  caching      -            0               -              -         -         -             1       8
  bfc          cold   1048576       11.44 MiB      12.00 MiB  3.00 MiB     +4.9%             -      14
  'caching': even seq 1 does not fit
