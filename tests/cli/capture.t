Capturing a command's device allocations (docs/capture.md).  The tests use
tests/capture/gmcap-app, a program linked against a fake CUDA runtime and
driver over host memory, built next to gmsim:

  $ app=$(dirname "$(readlink -f "$(command -v gmsim)")")/tests/capture/gmcap-app
  $ test -x "$app" && echo found
  found

The command runs with the capture library; its output and exit status are
its own, gmsim's report goes to stderr, and the spool directory is removed:

  $ gmsim capture -o run.db -- "$app" basic
  gmcap-app: a line on stderr
  gmcap-app: basic done, pitch 512
  gmsim: captured '*.*.dev0' into 'run.db': 5 allocs, 5 frees, 5 marks, peak 14.77 KiB requested (glob)
  gmsim: captured '*.*.dev1' into 'run.db': 3 allocs, 3 frees, 4 marks, peak 17.58 KiB requested (glob)
  [3]
  $ ls
  run.db

One trace per process and device; the free of a device-1 allocation made
with device 0 current goes to device 1; NVTX ranges become marks in every
trace, an out-of-memory failure a mark "oom":

  $ gmsim export run.db --trace "$(gmsim info run.db --json | grep -o '"[^"]*\.dev0"' | head -1 | tr -d '"')" | cut -d, -f2-
  op,id,size,stream,device
  alloc,0,1000,0x0,0
  alloc,1,2000,0x10,0
  alloc,2,3000,0x0,0
  alloc,3,5120,0x0,0
  alloc,4,4000,0x20,0
  mark,nvtx:forward,,,0
  mark,nvtx_end:forward,,,0
  mark,nvtx:step,,,0
  mark,oom,,,0
  mark,nvtx_end:step,,,0
  free,0,1000,0x0,0
  free,1,2000,0x10,0
  free,2,3000,0x0,0
  free,3,5120,0x0,0
  free,4,4000,0x20,0

A capture whose gmsim was killed before importing leaves its spool
directory (--keep-spool keeps it too); `gmsim import` recovers it, all or
nothing, each trace named after its process:

  $ gmsim capture -o keep.db --keep-spool -- "$app" procaddr 2>&1 | grep spool
  gmsim: spool kept in 'keep.db.spool.??????' (glob)
  $ gmsim import keep.db.spool.* -o recovered.db
  imported '*.*.dev0' into 'recovered.db': 4 events (2 allocs, 2 frees, 0 marks), load 8.00 KiB (glob)
  $ mkdir empty; gmsim import empty -o recovered.db
  gmsim: no spool file ('*.spool') in 'empty'
  [1]
  $ gmsim import keep.db.spool.* -o recovered.db --name x
  gmsim: cannot name the traces of spool directory 'keep.db.spool.*' (--name): they are named after their processes (glob)
  [1]

A command ended by a signal: the status is 128+N, and what it recorded up
to the fault is kept:

  $ gmsim capture -o crash.db -- "$app" segv 100 2>&1 | grep captured
  gmsim: captured '*' into 'crash.db': 100 allocs, 100 frees, 0 marks, peak 100 B requested (glob)
  $ gmsim capture -o crash.db --replace -- "$app" segv 100 2>/dev/null
  [139]

A command that never touches the device: nothing is captured, no store is
written, the status is the command's:

  $ gmsim capture -o none.db -- sh -c 'echo hello; exit 7'
  hello
  gmsim: 'sh' made no device allocation: nothing captured
  [7]
  $ ls none.db*
  ls: cannot access 'none.db*': No such file or directory
  [2]

The environment the command gets: the library appended to LD_PRELOAD, the
spool directory, the mode, and with --torch PyTorch's uncached allocator:

  $ export ASAN_OPTIONS=verify_asan_link_order=0  # a sanitized gmsim under LD_PRELOAD
  $ LD_PRELOAD=libm.so.6 gmsim capture -o t.db --torch -- sh -c 'echo "$LD_PRELOAD"; echo "$GMSIM_CAPTURE_MODE $PYTORCH_NO_CUDA_MEMORY_CACHING"; echo "$GMSIM_CAPTURE_DIR"' 2>/dev/null
  libm.so.6:/*/libgmsim_capture.so (glob)
  preload,torch 1
  /*/t.db.spool.?????? (glob)

Usage errors:

  $ gmsim capture -- true
  gmsim: missing the store to write (-o DB)
  usage: gmsim capture -o DB [--mode preload|cupti] [--torch] [--replace]
                       [--keep-spool] -- CMD [ARGS...]
  [2]
  $ gmsim capture -o x.db
  gmsim: missing the command to run (after --)
  usage: gmsim capture -o DB [--mode preload|cupti] [--torch] [--replace]
                       [--keep-spool] -- CMD [ARGS...]
  [2]
  $ gmsim capture -o x.db --mode magic -- true
  gmsim: unknown mode 'magic' (known: preload, cupti)
  usage: gmsim capture -o DB [--mode preload|cupti] [--torch] [--replace]
                       [--keep-spool] -- CMD [ARGS...]
  [2]
  $ gmsim capture -o x.db -- no-such-command-here
  gmsim: cannot run 'no-such-command-here': no such file or directory
  [127]
