`gmsim import` of several files and formats, gzip'd input, and failures
that leave nothing half-imported (docs/cli.md#import, docs/formats.md).
The RMM, STAlloc and Nsight Systems inputs are written here from their
documented formats.

An RMM log (device 1 in its name), a STAlloc log and a placement instance,
each detected from its content and named after its file:

  $ cat > rmm.dev1.csv <<'EOF'
  > Thread,Time,Action,Pointer,Size,Stream
  > 140573312345856,10:00:00.000100,allocate,0x7f8a40000000,1024,0x0
  > 140573312345856,10:00:00.000200,allocate failure,(nil),1099511627776,0x0
  > 140573312345856,10:00:00.000300,free,0x7f8a40000000,1024,0x0
  > EOF
  $ cat > mem_log_dev0.txt <<'EOF'
  > Iteration Index : 0
  > 1 0x7f1e41329c00 4096 0
  > 0 0x7f1e41329c00 4096 0
  > EOF
  $ printf 'id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n' > input.12.csv
  $ gmsim import rmm.dev1.csv mem_log_dev0.txt input.12.csv -o run.db
  imported 'rmm.dev1' into 'run.db': 3 events (1 allocs, 1 frees, 1 marks), load 1.00 KiB
  imported 'mem_log_dev0' into 'run.db': 3 events (1 allocs, 1 frees, 1 marks), load 4.00 KiB
  imported 'input.12' into 'run.db': 6 events (3 allocs, 3 frees, 0 marks), load 8 B
  $ gmsim info run.db --json | grep '"attrs"'
        "attrs": {"file": "input.12.csv", "source": "dsa", "capacity": 12, "buffers": 3, "dropped_zero_size": 0}
        "attrs": {"file": "mem_log_dev0.txt", "source": "stalloc", "device": 0, "dropped_zero_size": 0}
        "attrs": {"file": "rmm.dev1.csv", "source": "rmm", "device": 1, "alloc_failures": 1, "dropped_zero_size": 0}

gzip'd files are read through zlib, whatever their name (the name loses
".gz" and its extension); multi-member files too; standard input as well:

  $ gzip -c input.12.csv > inst.12.csv.gz
  $ gmsim import inst.12.csv.gz -o run.db
  imported 'inst.12' into 'run.db': 6 events (3 allocs, 3 frees, 0 marks), load 8 B
  gmsim: note: 'inst.12' has the same events as 'input.12' in 'run.db': sweeps and reports take them as one
  $ head -2 rmm.dev1.csv | gzip -c > two.gz && tail -2 rmm.dev1.csv | gzip -c >> two.gz
  $ gmsim import two.gz -o run.db --json | grep -E '"(name|events)"'
        "name": "two",
        "events": 3,
  $ gzip -c mem_log_dev0.txt | gmsim import - -o run.db --name piped
  imported 'piped' into 'run.db': 3 events (1 allocs, 1 frees, 1 marks), load 4.00 KiB
  gmsim: note: 'piped' has the same events as 'mem_log_dev0' in 'run.db': sweeps and reports take them as one

Corrupt and truncated gzip data name the file and the compressed offset:

  $ gzip -c input.12.csv | head -c 30 > cut.csv.gz
  $ gmsim import cut.csv.gz -o run.db
  gmsim: 'cut.csv.gz': truncated gzip data (ends at compressed byte 30)
  [1]
  $ printf '\037\213\010\000\000\000\000\000\000\003garbage-garbage' > bad.gz
  $ gmsim import bad.gz -o run.db
  gmsim: 'bad.gz': corrupt gzip data at compressed byte [0-9]+: .* (re)
  [1]

Each file is one unit.  A file that fails leaves nothing of itself, names
the place, and the other files are imported all the same; the exit status
is 1:

  $ printf 'id,lower,upper,size\n0,0,4,8\n1,5,5,8\n' > bad.7.csv
  $ printf 'id,lower,upper,size\n0,0,4,8\n' > good.7.csv
  $ gmsim import bad.7.csv good.7.csv -o run.db
  gmsim: 'bad.7.csv' line 3: lower 5 is not below upper 5 (a buffer lives over [lower, upper))
  imported 'good.7' into 'run.db': 2 events (1 allocs, 1 frees, 0 marks), load 8 B
  [1]
  $ gmsim info run.db | grep '^bad' || echo no trace of bad.7
  no trace of bad.7

An Nsight Systems export with two processes gives one trace per (process,
device); if any of them fails, none is kept:

  $ sqlite3 rep.sqlite "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid INTEGER, deviceId INTEGER, contextId INTEGER, address INTEGER, pc INTEGER, bytes INTEGER, memKind INTEGER, memoryOperationType INTEGER, name TEXT, correlationId INTEGER, streamId INTEGER);
  > INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (1, 7*16777216, 0, 1, 4096, 0, 512, 2, 0, NULL, 0, 7), (2, 9*16777216, 0, 1, 4096, 0, 256, 2, 0, NULL, 0, 7), (3, 9*16777216, 0, 1, 4096, 0, 256, 2, 1, NULL, 0, 7), (4, 7*16777216, 0, 1, 8192, 0, 64, 1, 0, NULL, 0, 7);"
  $ gmsim import rep.sqlite -o nsys.db
  imported 'rep.pid7.dev0' into 'nsys.db': 1 events (1 allocs, 0 frees, 0 marks), load 512 B
  imported 'rep.pid9.dev0' into 'nsys.db': 2 events (1 allocs, 1 frees, 0 marks), load 256 B
  $ gmsim import rep.sqlite -o nsys.db --mem-kinds device,pinned --name wide
  imported 'wide.pid7.dev0' into 'nsys.db': 2 events (2 allocs, 0 frees, 0 marks), load 576 B
  imported 'wide.pid9.dev0' into 'nsys.db': 2 events (1 allocs, 1 frees, 0 marks), load 256 B
  gmsim: note: 'wide.pid9.dev0' has the same events as 'rep.pid9.dev0' in 'nsys.db': sweeps and reports take them as one
  $ sqlite3 rep.sqlite "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (5, 9*16777216, 0, 1, 4096, 0, 256, 2, 1, NULL, 0, 7)"
  $ gmsim import rep.sqlite -o fresh.db
  gmsim: 'rep.sqlite': CUDA_GPU_MEMORY_USAGE_EVENTS row 5: free of 0x1000 which is not live (already freed)
  [1]
  $ test -e fresh.db || echo no store left behind
  no store left behind
  $ gmsim import rep.sqlite -o nsys.db --mem-kinds hbm
  gmsim: invalid value for --mem-kinds: unknown memory kind 'hbm' (known: pageable, pinned, device, array, managed, device_static, managed_static, unknown, all)
  usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]
                      [--attr KEY=VALUE]... [--replace] [--json]
  [2]

An export of several hosts (a multi-node report) whose processes have the
same PID on different hosts: every trace's name says its host (globalPid
bits 63-48), and each is imported with its own events:

  $ sqlite3 hosts.sqlite "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid INTEGER, deviceId INTEGER, contextId INTEGER, address INTEGER, pc INTEGER, bytes INTEGER, memKind INTEGER, memoryOperationType INTEGER, name TEXT, correlationId INTEGER, streamId INTEGER);
  > INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (1, 42*16777216, 0, 1, 4096, 0, 512, 2, 0, NULL, 0, 7), (2, (1<<56) + 42*16777216, 0, 1, 4096, 0, 2048, 2, 0, NULL, 0, 7), (3, (1<<56) + 42*16777216, 0, 1, 4096, 0, 2048, 2, 1, NULL, 0, 7);"
  $ gmsim import hosts.sqlite -o hosts.db
  imported 'hosts.host0.pid42.dev0' into 'hosts.db': 1 events (1 allocs, 0 frees, 0 marks), load 512 B
  imported 'hosts.host256.pid42.dev0' into 'hosts.db': 2 events (1 allocs, 1 frees, 0 marks), load 2.00 KiB
  $ gmsim info hosts.db --json | grep -o '"global_pid": [0-9]*, "host": [0-9]*'
  "global_pid": 704643072, "host": 0
  "global_pid": 72057594742571008, "host": 256

A store is not an export, even though both are SQLite:

  $ gmsim import run.db -o other.db
  gmsim: 'run.db': not an Nsight Systems export with memory usage: no table CUDA_GPU_MEMORY_USAGE_EVENTS (capture with --cuda-memory-usage=true)
  [1]

Names: two files may not give the same trace; --name takes one file:

  $ mkdir a b && cp good.7.csv a/x.csv && cp good.7.csv b/x.csv
  $ gmsim import a/x.csv b/x.csv -o names.db
  imported 'x' into 'names.db': 2 events (1 allocs, 1 frees, 0 marks), load 8 B
  gmsim: trace 'x' of 'b/x.csv' is already imported from 'a/x.csv' (give the files different names)
  [1]
  $ gmsim import a/x.csv b/x.csv -o names.db --name y
  gmsim: --name names one file's traces; 2 files given
  usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]
                      [--attr KEY=VALUE]... [--replace] [--json]
  [2]
  $ gmsim import a/x.csv -o names.db
  gmsim: trace 'x' already exists in 'names.db'
  hint: use --replace to overwrite it
  [1]
  $ gmsim import b/x.csv -o names.db --replace
  imported 'x' into 'names.db': 2 events (1 allocs, 1 frees, 0 marks), load 8 B

The format can be forced; an input that is none of them says so:

  $ gmsim import mem_log_dev0.txt -o f.db --format rmm
  gmsim: 'mem_log_dev0.txt' line 1: expected the header Thread,Time,Action,Pointer,Size,Stream (with at least Action, Pointer and Size)
  [1]
  $ printf 'hello\n' > hello.txt
  $ gmsim import hello.txt -o f.db
  gmsim: cannot detect the format of 'hello.txt' (choose one with --format: auto, torch, nsys, rmm, dsa, stalloc, spool, csv)
  [1]
  $ test -e f.db || echo no store left behind
  no store left behind

--attr tags every trace imported, after the importer's own attributes (so
it wins); a JSON value stays JSON, anything else is a string:

  $ printf 'ts_ns,op,id,size,stream,device\n0,alloc,0,100,0,0\n1,free,0,,0,0\n' > s.csv
  $ gmsim import s.csv -o attr.db --attr seq_len=128 --attr batch=4 --attr model=lm --attr source=mine >/dev/null
  $ gmsim info attr.db --json | grep -o '"source": "mine", "seq_len": 128, "batch": 4, "model": "lm"'
  "source": "mine", "seq_len": 128, "batch": 4, "model": "lm"
  $ gmsim import s.csv -o attr.db --attr =3
  gmsim: invalid value for --attr: '=3' (KEY=VALUE)
  usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]
                      [--attr KEY=VALUE]... [--replace] [--json]
  [2]
  $ gmsim import s.csv -o attr.db --attr seq_len
  gmsim: invalid value for --attr: 'seq_len' (KEY=VALUE)
  usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]
                      [--attr KEY=VALUE]... [--replace] [--json]
  [2]

An input with no events (a CSV or an RMM log with a header only, a CSV of
comments) is refused rather than stored as an empty trace; a store the
command created is removed, one that existed keeps what it had:

  $ printf 'ts_ns,op,id,size,stream,device\n' > h.csv
  $ gmsim import h.csv -o empty.db
  gmsim: 'h.csv': no events in it: nothing to import
  [1]
  $ test -e empty.db || echo no store left behind
  no store left behind
  $ printf 'Thread,Time,Action,Pointer,Size,Stream\n' > rmm.dev0.csv
  $ gmsim import rmm.dev0.csv -o attr.db --json
  gmsim: 'rmm.dev0.csv': no events in it: nothing to import
  [1]
  $ printf '# nothing\n\n' > c.csv
  $ gmsim import c.csv -o attr.db --format csv
  gmsim: 'c.csv': no events in it: nothing to import
  [1]
  $ gmsim info attr.db --json | grep '"name"'
        "name": "s",
