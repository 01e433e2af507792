A path that is not a regular file (a named pipe, a device) is no store: every
command that opens one refuses it at once, before anything reads from it, as
"not a regular file" (exit 1).  A FIFO would otherwise block the first read
until a writer came, forever; `timeout 10` turns such a hang into exit 124.

  $ gmsim synth --events 1000 -o s.db > /dev/null
  $ mkfifo ff
  $ timeout 10 gmsim info ff
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim export ff -o x.csv
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim report ff -o r.html
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim replay ff --policy caching
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim sweep ff --policies caching
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim scale ff s.db --seq 512,1024 -o o.db
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim fit --from ff s.db --vary seq --device a100-80gb --policy caching
  gmsim: cannot open 'ff': not a regular file
  [1]

As an output store, and as either side of a merge:

  $ timeout 10 gmsim synth --events 10 -o ff
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ gmsim export s.db -o x.csv
  $ timeout 10 gmsim import x.csv -o ff
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim sweep s.db --policies caching -o ff
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim merge ff s.db
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim merge m.db ff
  gmsim: cannot open 'ff': not a regular file
  [1]
  $ timeout 10 gmsim info /dev/null
  gmsim: cannot open '/dev/null': not a regular file
  [1]
  $ ls
  ff
  s.db
  x.csv
