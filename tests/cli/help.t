The verb table, the help texts and the version.

With no verb, gmsim prints its usage on stderr and exits 2:

  $ gmsim
  usage: gmsim VERB [options] [args]
  
  Replay GPU memory-allocation traces through simulated allocators and
  compare their peak memory and fragmentation.
  
  verbs:
    import     import traces (PyTorch snapshots, nsys, RMM, STAlloc, csv, ...)
    capture    run a command and capture its device allocations
    export     write a stored trace out as csv or Perfetto JSON
    info       list the traces in a store
    synth      synthesize training/inference traces from a model config
    replay     replay a trace through simulated allocators
    compare    compare policies over traces, one pass per trace
    sweep      run traces x policies x parameters into a results store
    merge      combine sweep results without duplicates
    report     write an HTML or Markdown report of stored runs
    policies   list the allocator policies and their parameters
    estimate   estimate a transformer job's memory, formula by formula
    fit        find the largest batch or sequence that fits, per policy
    scale      predict a captured job at other sequence lengths or batch sizes
    devices    list the GPU presets for --device
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
    import     import traces (PyTorch snapshots, nsys, RMM, STAlloc, csv, ...)
    capture    run a command and capture its device allocations
    export     write a stored trace out as csv or Perfetto JSON
    info       list the traces in a store
    synth      synthesize training/inference traces from a model config
    replay     replay a trace through simulated allocators
    compare    compare policies over traces, one pass per trace
    sweep      run traces x policies x parameters into a results store
    merge      combine sweep results without duplicates
    report     write an HTML or Markdown report of stored runs
    policies   list the allocator policies and their parameters
    estimate   estimate a transformer job's memory, formula by formula
    fit        find the largest batch or sequence that fits, per policy
    scale      predict a captured job at other sequence lengths or batch sizes
    devices    list the GPU presets for --device
    calibrate  measure a GPU's cudaMalloc/cudaFree latency into a cost profile
  
    gmsim help VERB, gmsim VERB --help   options of one verb
    gmsim --version                      version and CUDA support
  
  exit status: 0 ok, 1 error, 2 usage error
  $ gmsim --help > a; gmsim -h > b; gmsim help > c; cmp a b && cmp a c && echo same
  same

Each verb has its own help, the same through `help VERB` and `VERB --help`:

  $ gmsim help import
  usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]
                      [--attr KEY=VALUE]... [--replace] [--json]
  
  Read trace files and store them as traces in the store DB (created if
  missing).  FILE '-' reads standard input; gzip'd files are read as they
  are.  Each file is one unit: a file that fails leaves nothing of itself,
  the other files are imported all the same, and the exit status is 1.
  A directory is read as a capture's spool directory (docs/capture.md).
  
  options:
    -o, --output DB     the store to write into (required)
    -f, --format FMT    the input format: auto (the default: detect it from
                        the content) or one of the formats below
    -n, --name NAME     the trace's name (one FILE only; default: FILE's
                        base name without .gz and its extension, 'stdin'
                        for standard input); several traces of one file
                        get suffixes: NAME.dev1, NAME.pid42.dev0
        --mem-kinds LIST
                        nsys: the memory kinds to keep, comma-separated:
                        pageable, pinned, device, array, managed,
                        device_static, managed_static, unknown, or all
                        (default: device)
        --attr KEY=VALUE
                        set attribute KEY of every trace imported (after the
                        importer's own); VALUE is JSON when it is a JSON
                        value (seq_len=128), else a string; may be repeated
        --replace       replace traces of the same names
        --json          report the stored traces as JSON: {"store": DB,
                        "traces": [...]} (each as 'gmsim info --json')
    -h, --help          show this help
  
  formats (docs/formats.md), detected in this order:
    torch    PyTorch memory snapshot (pickle)
    nsys     Nsight Systems SQLite export (CUDA_GPU_MEMORY_USAGE_EVENTS)
    rmm      RAPIDS RMM log (Thread,Time,Action,Pointer,Size,Stream)
    dsa      placement instance (id,lower,upper,size; capacity in the name)
    stalloc  STAlloc trace log (status ptr size stream)
    spool    one spool file of 'gmsim capture' (a directory reads them all)
    csv      ts_ns,op,id,size,stream,device rows (gmsim's own)
  $ for v in import export info synth replay policies; do
  >   gmsim help $v > a && gmsim $v --help > b && cmp a b && gmsim $v -h | head -1
  > done
  usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
  usage: gmsim info DB [--json]
  usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
  usage: gmsim policies [--json]
  $ for v in estimate fit devices; do
  >   gmsim help $v > a && gmsim $v --help > b && cmp a b && gmsim $v -h | head -1
  > done
  usage: gmsim estimate --model NAME|--hidden H ... [run options] [--json]
  usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]
  usage: gmsim devices [--json]

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

`scale` has its help both ways too:

  $ gmsim help scale > a && gmsim scale --help > b && cmp a b && gmsim scale -h | head -1
  usage: gmsim scale CAPTURE CAPTURE [CAPTURE...] (--seq LIST | --batch LIST) -o DB
