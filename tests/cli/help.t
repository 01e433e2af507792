The verb table, the help texts and the version.

With no verb, gmsim prints its usage on stderr and exits 2:

  $ gmsim
  usage: gmsim VERB [options] [args]
  
  Replay GPU memory-allocation traces through simulated allocators and
  compare their peak memory and fragmentation.
  
  verbs:
    import     import a trace file (csv) into a store
    export     write a stored trace out as csv
    info       list the traces in a store
    synth      write a synthetic workload into a store
    replay     replay a trace through simulated allocators
    policies   list the allocator policies and their parameters
    calibrate  measure a GPU's cudaMalloc/cudaFree latency into a cost profile
  
    gmsim help VERB, gmsim VERB --help   options of one verb
    gmsim --version                      version and CUDA support
  
  exit status: 0 ok, 1 error, 2 usage error
  [2]

  $ gmsim help
  usage: gmsim VERB [options] [args]
  
  Replay GPU memory-allocation traces through simulated allocators and
  compare their peak memory and fragmentation.
  
  verbs:
    import     import a trace file (csv) into a store
    export     write a stored trace out as csv
    info       list the traces in a store
    synth      write a synthetic workload into a store
    replay     replay a trace through simulated allocators
    policies   list the allocator policies and their parameters
    calibrate  measure a GPU's cudaMalloc/cudaFree latency into a cost profile
  
    gmsim help VERB, gmsim VERB --help   options of one verb
    gmsim --version                      version and CUDA support
  
  exit status: 0 ok, 1 error, 2 usage error
  $ gmsim --help > a; gmsim -h > b; gmsim help > c; cmp a b && cmp a c && echo same
  same

Each verb has its own help, the same through `help VERB` and `VERB --help`:

  $ gmsim help import
  usage: gmsim import FILE -o DB [--format FMT] [--name NAME] [--replace] [--json]
  
  Read a trace file and store it as a new trace in the store DB (created if
  missing).  FILE '-' reads standard input.
  
  options:
    -o, --output DB     the store to write into (required)
    -f, --format FMT    the input format: auto (the default: detect it from
                        the content) or csv
    -n, --name NAME     the trace's name (default: FILE's base name without
                        its extension, 'stdin' for standard input)
        --replace       replace a trace of the same name
        --json          report the stored trace as JSON (as 'gmsim info --json')
    -h, --help          show this help
  
  The formats are described in docs/formats.md.  On any error nothing is
  written: the store is left as it was.
  $ for v in import export info synth replay policies; do
  >   gmsim help $v > a && gmsim $v --help > b && cmp a b && gmsim $v -h | head -1
  > done
  usage: gmsim import FILE -o DB [--format FMT] [--name NAME] [--replace] [--json]
  usage: gmsim export DB [--trace NAME] [--format FMT] [-o FILE]
  usage: gmsim info DB [--json]
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
  usage: gmsim policies [--json]

The version, and whether CUDA support was built in:

  $ gmsim --version
  gmsim 0.1.0
  cuda support: (yes \(toolkit [0-9.]+\)|no \(built without the cuda toolkit\)) (re)
  $ gmsim version | head -1
  gmsim 0.1.0

Unknown verbs and options are usage errors:

  $ gmsim frobnicate
  gmsim: unknown verb 'frobnicate'
  see 'gmsim help' for the list of verbs
  [2]
  $ gmsim --frobnicate
  gmsim: unknown option '--frobnicate'
  see 'gmsim help' for the list of verbs
  [2]
  $ gmsim help frobnicate
  gmsim: unknown verb 'frobnicate'
  see 'gmsim help' for the list of verbs
  [2]
