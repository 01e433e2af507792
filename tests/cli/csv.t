CSV import and export (docs/formats.md).  A hand-written trace: application
ids (reused after their free), no header, a comment, streams in decimal,
marks whose names need quoting, a zero-size request:

  $ cat > step1.csv <<'CSV'
  > # one step of a toy job
  > 0,mark,step,,,0
  > 100,alloc,7000,1048576,0,0
  > 200,alloc,7001,512,140000,0
  > 300,free,7001,,140000,0
  > 400,alloc,7001,2097152,0,0
  > 450,mark,"forward, layer ""1""",,,0
  > 500,alloc,9,0,0,0
  > 600,free,7000,,0,0
  > 700,free,9,,0,0
  > 800,free,7001,,0,0
  > CSV

The trace is named after the file, the format detected from the content:

  $ gmsim import step1.csv -o run.db
  imported 'step1' into 'run.db': 8 events (3 allocs, 3 frees, 2 marks), load 3.00 MiB, 1 zero-size request dropped

  $ gmsim info run.db
  trace  source  device  capacity  events      load  seq_len  batch  recorded reserved  settings (not PyTorch's defaults)
  step1  csv          -         -       8  3.00 MiB        -      -                  -  -
  
  1 trace, 43 B on disk; every count and attribute: gmsim info --json run.db

Export prints the stored ordinals and raw stream handles:

  $ gmsim export run.db
  ts_ns,op,id,size,stream,device
  0,mark,step,,,0
  100,alloc,0,1048576,0x0,0
  200,alloc,1,512,0x222e0,0
  300,free,1,512,0x222e0,0
  400,alloc,2,2097152,0x0,0
  450,mark,"forward, layer ""1""",,,0
  600,free,0,1048576,0x0,0
  800,free,2,2097152,0x0,0

  $ gmsim export run.db --trace step1 --format csv -o out.csv
  $ gmsim import out.csv -o run.db --format csv --name again
  imported 'again' into 'run.db': 8 events (3 allocs, 3 frees, 2 marks), load 3.00 MiB
  gmsim: note: 'again' has the same events as 'step1' in 'run.db': sweeps and reports take them as one
  $ gmsim export run.db --trace again | cmp - out.csv && echo round trip ok
  round trip ok

Standard input, with a header and CRLF line ends:

  $ printf 'ts_ns,op,id,size,stream,device\r\n1,alloc,1,64,0x7f00,1\r\n2,free,1,,0x7f00,1\r\n' | gmsim import - -o run.db
  imported 'stdin' into 'run.db': 2 events (1 allocs, 1 frees, 0 marks), load 64 B
  $ gmsim export run.db --trace stdin
  ts_ns,op,id,size,stream,device
  1,alloc,0,64,0x7f00,1
  2,free,0,64,0x7f00,1
  $ printf '1,alloc,1,64,0,0\n2,free,1,,0,0\n' | gmsim import - -o run.db --name piped --format csv
  imported 'piped' into 'run.db': 2 events (1 allocs, 1 frees, 0 marks), load 64 B

With several traces in the store, export needs --trace:

  $ gmsim export run.db
  gmsim: 'run.db' holds 4 traces; choose one with --trace: 'again', 'piped', 'stdin', 'step1'
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
                     [--param offline.KEY=VALUE]... [-o FILE]
  [2]
  $ gmsim export run.db --trace nope
  gmsim: no trace named 'nope' in 'run.db', which holds 4: 'again', 'piped', 'stdin', 'step1'
  [1]
