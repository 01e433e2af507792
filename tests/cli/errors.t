Bad input: each is a clear message naming the file (and the place), and
exit 1.  Usage errors exit 2.

A file that is not a database, a database of another schema version, a
missing file:

  $ echo 'hello' > notes.db
  $ gmsim info notes.db
  gmsim: cannot open 'notes.db': file is not a database
  [1]
  $ sqlite3 v7.db 'PRAGMA user_version=7; CREATE TABLE t(x);'
  $ gmsim info v7.db
  gmsim: 'v7.db' has schema version 7, this gmsim reads version 4
  [1]
  $ gmsim replay v7.db --policy all
  gmsim: 'v7.db' has schema version 7, this gmsim reads version 4
  [1]
  $ gmsim info missing.db
  gmsim: cannot open 'missing.db': no such file
  [1]
  $ test -e missing.db || echo reading created nothing
  reading created nothing

A trace name that is not in the store:

  $ gmsim synth --events 100 -o t.db > /dev/null
  $ gmsim replay t.db --trace nope --policy all
  gmsim: no trace named 'nope' in 't.db', which holds 1: 'random'
  [1]
  $ gmsim export t.db --trace nope
  gmsim: no trace named 'nope' in 't.db', which holds 1: 'random'
  [1]

A CSV with a bad row names the file and line; nothing is stored, and a
store the import created is removed:

  $ printf '1,alloc,1,10,0,0\n2,alloc,2,20,0,0\n\n3,free,3,,0,0\n' > bad.csv
  $ gmsim import bad.csv -o new.db
  gmsim: 'bad.csv' line 4: free of id 3 which is not live (never allocated, or already freed)
  [1]
  $ test -e new.db || echo no store left behind
  no store left behind
  $ gmsim import bad.csv -o t.db --name bad
  gmsim: 'bad.csv' line 4: free of id 3 which is not live (never allocated, or already freed)
  [1]
  $ gmsim info t.db --json | grep '"name"'
        "name": "random",
  $ printf '1,alloc,1,10,0,0\n2,alloc,1,20,0,0\n' > twice.csv
  $ gmsim import twice.csv -o t.db
  gmsim: 'twice.csv' line 2: alloc of id 1 which is already live
  [1]
  $ printf '1,alloc,1,10,0\n' > short.csv
  $ gmsim import short.csv -o t.db --format csv
  gmsim: 'short.csv' line 1: expected 6 fields (ts_ns,op,id,size,stream,device), found 5
  [1]
  $ printf '1,alloc,1,999999999999999,0,0\n' > huge.csv
  $ gmsim import huge.csv -o t.db --format csv
  gmsim: 'huge.csv' line 1: size 999999999999999 is above the limit of 2^48 bytes
  [1]
  $ printf '1,grab,1,10,0,0\n' > op.csv
  $ gmsim import op.csv -o t.db --format csv
  gmsim: 'op.csv' line 1: unknown op 'grab' (expected alloc, free, mark, seg_alloc, seg_free, seg_map or seg_unmap)
  [1]
  $ head -c 300 /dev/zero > zeros.bin
  $ gmsim import zeros.bin -o t.db
  gmsim: cannot detect the format of 'zeros.bin' (choose one with --format: auto, torch, nsys, rmm, dsa, stalloc, spool, csv)
  [1]
  $ gmsim import nothere.csv -o t.db
  gmsim: cannot open 'nothere.csv': no such file or directory
  [1]

Usage errors: unknown options, missing arguments and values, unknown
policies and formats, bad --param:

  $ gmsim info
  gmsim: missing the store to read (DB)
  usage: gmsim info DB [--json]
  [2]
  $ gmsim info t.db extra
  gmsim: too many arguments: 'extra'
  usage: gmsim info DB [--json]
  [2]
  $ gmsim info t.db --verbose
  gmsim: unknown option '--verbose'
  usage: gmsim info DB [--json]
  [2]
  $ gmsim info t.db --json=yes
  gmsim: option '--json' takes no value
  usage: gmsim info DB [--json]
  [2]
  $ gmsim import bad.csv
  gmsim: missing the store to write (-o DB)
  usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]
                      [--attr KEY=VALUE]... [--replace] [--json]
  [2]
  $ gmsim import bad.csv -o t.db --format xml
  gmsim: unknown format 'xml' (known: auto, torch, nsys, rmm, dsa, stalloc, spool, csv)
  usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]
                      [--attr KEY=VALUE]... [--replace] [--json]
  [2]
  $ gmsim import bad.csv -o
  gmsim: missing value for option '-o'
  usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]
                      [--attr KEY=VALUE]... [--replace] [--json]
  [2]
  $ gmsim export t.db --format parquet
  gmsim: unknown format 'parquet' (known: csv, perfetto, placement)
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
                     [--param offline.KEY=VALUE]... [-o FILE]
  [2]
  $ gmsim replay t.db
  gmsim: missing --policy (see 'gmsim policies', or use --policy all)
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy nosuch
  gmsim: unknown policy 'nosuch' \(known: all, native, .*; see 'gmsim policies'\) (re)
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy native --param native
  gmsim: invalid --param 'native' (expected POLICY.KEY=VALUE)
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy native --param buddy.arena=1GiB
  gmsim: --param 'buddy.arena=1GiB' is for policy 'buddy', which --policy does not select
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy buddy --param buddy.arena=huge
  gmsim: invalid value 'huge' for buddy.arena: expected a size in bytes such as 512, 64KiB or 1.5GiB, or none
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy buddy --param buddy.colour=red
  gmsim: unknown parameter 'buddy.colour' (buddy takes: min_block, arena, release)
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy buddy --capacity 12parsecs
  gmsim: invalid value for --capacity: invalid size '12parsecs'
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy buddy --capacity 12GiB parsecs
  gmsim: too many arguments: 'parsecs'
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy buddy --granularity 1000
  gmsim: invalid value for --granularity: '1000' is not a power of two from 1 B to 1 TiB
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim policies --all
  gmsim: unknown option '--all'
  usage: gmsim policies [--json]
  [2]

A value a policy refuses is a usage error too, as is a device that can hold
nothing or a granularity past the device's range:

  $ gmsim replay t.db --policy buddy --param buddy.min_block=500
  gmsim: invalid value '500' for buddy.min_block: not a power of two
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy buddy --capacity 0.4 > /dev/null 2>&1
  [2]
  $ gmsim replay t.db --policy buddy --granularity 2TiB > /dev/null 2>&1
  [2]

A store is a file: an empty name or SQLite's ':memory:' would keep nothing,
so they are refused rather than reported as written:

  $ gmsim synth --events 10 -o ''
  gmsim: cannot write to '': a store is a file; give its name
  [1]
  $ gmsim synth --events 10 -o :memory:
  gmsim: cannot write to ':memory:': a store is a file; give its name
  [1]
  $ gmsim info :memory:
  gmsim: cannot open ':memory:': a store is a file; give its name
  [1]
