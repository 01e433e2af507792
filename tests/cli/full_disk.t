A full disk while writing: the write fails with a message naming the store,
exit 1, and nothing is lost or half-written.  The disk is made "full" with a
file-size limit (ulimit -f, in KiB; SIGXFSZ ignored so that the
write fails with an error instead of killing the process).

A new store that cannot be written is removed again:

  $ (trap '' XFSZ; ulimit -f 200; gmsim synth --events 1000000 -o new.db)
  gmsim: 'new.db': cannot write a chunk: .* (re)
  [1]
  $ test -e new.db || echo no store left behind
  no store left behind

An existing store keeps what it had, and stays readable:

  $ gmsim synth --events 1000 -o kept.db --name small
  wrote 'small' into 'kept.db': 1000 events .* (re)
  $ gmsim info kept.db --json > before.json
  $ (trap '' XFSZ; ulimit -f 300; gmsim synth --events 1000000 -o kept.db --name big)
  gmsim: 'kept.db': cannot write a chunk: .* (re)
  [1]
  $ gmsim info kept.db --json > after.json
  $ cmp before.json after.json && echo unchanged
  unchanged
  $ gmsim replay kept.db --policy buddy | head -1
  trace 'small': 1000 events, load .* (re)

A new store that cannot even be created (its schema not written: the limit
at 0 or at a few KiB) is removed too, whichever verb opened it: `scale -o`,
`sweep -o`, `merge OUT`, `synth -o`, `import -o`:

  $ gmsim synth --model gpt2 --layers 2 --seq 128,256 --batch 2 --steps 1 -o c.db > /dev/null
  $ gmsim sweep kept.db --policies caching -o runs.db | tail -1
  0 already done, 1 ran, 0 failed; results in 'runs.db'
  $ for k in 0 8; do
  > (trap '' XFSZ; ulimit -f $k
  >  gmsim scale c.db:gpt2.seq128 c.db:gpt2.seq256 --seq 512 -o n1.db
  >  gmsim sweep kept.db --policies caching -o n2.db
  >  gmsim merge n3.db runs.db
  >  gmsim synth --events 10 -o n4.db
  >  gmsim import before.json --format csv -o n5.db) 2>&1 | sed 's/: [A-Z ]*: file too large$/: file too large/'
  > done
  gmsim: 'n1.db': file too large
  gmsim: 'n2.db': file too large
  gmsim: 'n3.db': file too large
  gmsim: 'n4.db': file too large
  gmsim: 'n5.db': file too large
  gmsim: 'n1.db': file too large
  gmsim: 'n2.db': file too large
  gmsim: 'n3.db': file too large
  gmsim: 'n4.db': file too large
  gmsim: 'n5.db': file too large
  $ ls n*.db 2> /dev/null || echo no store left behind
  no store left behind

gmsim ignores SIGXFSZ itself: past the limit, without the trap, a write
fails with EFBIG, and the verb says "file too large" naming the file and
exits 1 (it was killed by the signal, exit 153, with no message).  The
runs a sweep stored before are whole (one transaction each); those it
could not store count as failed:

  $ (ulimit -f 100; gmsim sweep kept.db c.db --policies all -o big.db) 2>&1 | tail -2
  0 already done, [0-9]+ ran, [0-9]+ failed; results in 'big.db' (re)
  gmsim: 'big.db': COMMIT: file too large
  $ (ulimit -f 100; gmsim sweep kept.db c.db --policies all -o big2.db > /dev/null 2>&1); echo $?
  1
  $ gmsim info big.db > /dev/null && echo readable
  readable
  $ gmsim synth --events 100000 -o ev.db > /dev/null
  $ (ulimit -f 10; gmsim export ev.db -o ev.csv)
  gmsim: cannot write 'ev.csv': file too large
  [1]
  $ ls -A | grep ev.csv || echo nothing left behind
  nothing left behind
