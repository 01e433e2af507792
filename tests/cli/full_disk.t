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
  >  gmsim import before.json --format csv -o n5.db) 2>&1 | sed 's/: [A-Z ]*: disk I\/O error$/: disk I\/O error/'
  > done
  gmsim: 'n1.db': disk I/O error
  gmsim: 'n2.db': disk I/O error
  gmsim: 'n3.db': disk I/O error
  gmsim: 'n4.db': disk I/O error
  gmsim: 'n5.db': disk I/O error
  gmsim: 'n1.db': disk I/O error
  gmsim: 'n2.db': disk I/O error
  gmsim: 'n3.db': disk I/O error
  gmsim: 'n4.db': disk I/O error
  gmsim: 'n5.db': disk I/O error
  $ ls n*.db 2> /dev/null || echo no store left behind
  no store left behind
