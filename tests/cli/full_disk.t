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
