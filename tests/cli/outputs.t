Output files (docs/cli.md, "Output files"): an output is never an input,
a regular file is replaced whole or not at all, anything else is written
straight through, and text for a terminal shows no control byte raw.

  $ gmsim synth --events 2000 -o s.db --name small > /dev/null
  $ gmsim replay s.db -p buddy --save > /dev/null
  $ ln -s s.db link.db
  $ ln s.db hard.db
  $ sum=$(cksum < s.db)

Every verb that writes a file refuses an output that is one of its inputs,
by its name, through a symbolic link or through a hard link, before it
reads or writes anything:

  $ gmsim export s.db -o s.db
  gmsim: cannot write 's.db': it is the input 's.db' (name another file)
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
                     [--param offline.KEY=VALUE]... [-o FILE]
  [2]
  $ gmsim export s.db -o link.db --format perfetto
  gmsim: cannot write 'link.db': it is the input 's.db' (name another file)
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
                     [--param offline.KEY=VALUE]... [-o FILE]
  [2]
  $ gmsim export link.db -o hard.db
  gmsim: cannot write 'hard.db': it is the input 'link.db' (name another file)
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
                     [--param offline.KEY=VALUE]... [-o FILE]
  [2]
  $ gmsim report s.db -o s.db
  gmsim: cannot write 's.db': it is the input 's.db' (name another file)
  usage: gmsim report DB... [-o FILE] [--format html|md] [--trace GLOB]
                      [--title TEXT] [--no-sites] [--embed-allocs N]
  [2]
  $ gmsim report other.db s.db -o hard.db 2>&1 | head -1
  gmsim: cannot open 'other.db': no such file
  $ gmsim report s.db -o hard.db --format md 2>&1 | head -1
  gmsim: cannot write 'hard.db': it is the input 's.db' (name another file)
  $ gmsim export s.db >> s.db
  gmsim: cannot write to standard output: it is the input 's.db' (redirect it to another file)
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
                     [--param offline.KEY=VALUE]... [-o FILE]
  [2]
  $ gmsim import s.db -o link.db 2>&1 | head -1
  gmsim: cannot write 'link.db': it is the input 's.db' (name another file)
  $ gmsim sweep s.db -o hard.db -p buddy 2>&1 | head -1
  gmsim: cannot write 'hard.db': it is the input 's.db' (name another file)
  $ gmsim merge link.db s.db 2>&1 | head -1
  gmsim: cannot write 'link.db': it is the input 's.db' (name another file)
  $ printf '128\n256\n' > lens.txt
  $ gmsim synth --model gpt2 --layers 1 --seq file:lens.txt -o lens.txt 2>&1 | head -1
  gmsim: cannot write 'lens.txt': it is the input 'lens.txt' (name another file)
  $ cp "$(type -P true)" prog
  $ gmsim capture -o prog -- ./prog 2>&1 | head -1
  gmsim: cannot write 'prog': it is the input './prog' (name another file)
  $ test "$(cksum < s.db)" = "$sum" && echo store unchanged
  store unchanged
  $ gmsim info s.db | head -2
  trace  source  device  capacity  events      load  seq_len  batch  recorded reserved  settings (not PyTorch's defaults)
  small  .* (re)

A store's own -wal and -shm files count as the store:

  $ gmsim export s.db -o s.db-wal 2>&1 | head -1
  gmsim: cannot write 's.db-wal': it is the input 's.db' (name another file)

A regular file is written to a temporary file beside it and renamed over
it once complete: a full disk (here a file-size limit) leaves the old
content and no temporary file.

  $ gmsim synth --events 100000 -o big.db > /dev/null
  $ echo old > keep.csv
  $ (trap '' XFSZ; ulimit -f 100; gmsim export big.db -o keep.csv)
  gmsim: cannot write 'keep.csv': file too large
  [1]
  $ cat keep.csv
  old
  $ ls -a | grep -c tmp
  0
  [1]
  $ gmsim export s.db -o keep.csv && head -1 keep.csv
  ts_ns,op,id,size,stream,device

A writer killed before the rename leaves its temporary file behind; the
next run writing the same output removes those of that output older than
10 minutes that no writer holds locked, and nothing else: a recent one,
one a live writer holds (flock), another output's, another name:

  $ for x in AAAAAA BBBBBB CCCCCC; do echo x > .keep.csv.tmp.$x; done
  $ echo x > .other.csv.tmp.DDDDDD; echo x > .keep.csv.tmp.EEEEEEE
  $ touch -d '20 minutes ago' .keep.csv.tmp.AAAAAA .keep.csv.tmp.CCCCCC .other.csv.tmp.DDDDDD .keep.csv.tmp.EEEEEEE
  $ flock .keep.csv.tmp.CCCCCC sleep 30 & sleep 0.2
  $ gmsim export s.db -o keep.csv && ls -A | grep tmp
  .keep.csv.tmp.BBBBBB
  .keep.csv.tmp.CCCCCC
  .keep.csv.tmp.EEEEEEE
  .other.csv.tmp.DDDDDD
  $ kill %1; wait

It keeps the file's permissions; a symbolic link stays a link and its
target is replaced:

  $ chmod 640 keep.csv
  $ gmsim export s.db -o keep.csv --format perfetto && stat -c %a keep.csv
  640
  $ ln -s keep.csv view.csv
  $ gmsim export s.db -o view.csv && test -L view.csv && head -1 keep.csv
  ts_ns,op,id,size,stream,device
  $ gmsim report s.db -o view.csv > /dev/null && test -L view.csv && head -c 15 keep.csv
  <!DOCTYPE html> (no-eol)

A FIFO or a device is written straight through, never replaced:

  $ mkfifo pipe
  $ (wc -l < pipe > lines &) ; gmsim export s.db -o pipe; sleep 1; cat lines; test -p pipe && echo still a fifo
  2001
  still a fifo
  $ gmsim export s.db -o /dev/null && echo ok
  ok
  $ gmsim export s.db -o /dev/full
  gmsim: cannot write '/dev/full': no space left on device
  [1]
  $ gmsim export s.db > /dev/full
  gmsim: cannot write to standard output: no space left on device
  [1]

Write errors name the file and the system's reason:

  $ echo x > plain
  $ gmsim report s.db -o plain/r.html
  gmsim: cannot write 'plain/r.html': not a directory
  [1]
  $ gmsim export s.db -o nodir/out.csv
  gmsim: cannot write 'nodir/out.csv': no such file or directory
  [1]

A capture whose import fails leaves no store (the spool is kept for
'gmsim import'):

  $ gmsim capture -o cap.db -- sh -c ': > "$GMSIM_CAPTURE_DIR/h.1.spool"' 2>&1 | sed 's/spool\.[A-Za-z0-9]*/spool.X/g'
  gmsim: 'cap.db.spool.X/h.1.spool': byte 0: not a gmsim capture spool
  gmsim: the spool is kept in 'cap.db.spool.X': import it with 'gmsim import cap.db.spool.X -o cap.db'
  $ ls -d cap.db* | sed 's/spool\.[A-Za-z0-9]*/spool.X/'
  cap.db.spool.X

Control bytes in names (a trace, a file, a tag) are shown escaped on the
terminal and in messages; JSON escapes them by its own rules:

  $ gmsim synth --events 10 -o c.db --name "$(printf 'evil\033]0;pwned\007')"
  wrote 'evil\x1b]0;pwned\x07' into 'c.db': 10 events (4 allocs, 4 frees, 2 marks), load 1.80 MiB
  $ gmsim info c.db | sed -n 2p | cut -c1-22
  evil\x1b]0;pwned\x07  
  $ gmsim info c.db --json | grep -o '"name": "[^"]*"'
  "name": "evil\u001b]0;pwned\u0007"
  $ gmsim export c.db --trace "$(printf 'x\033[2J')"
  gmsim: no trace matches 'x\x1b[2J' in 'c.db', which holds 1: 'evil\x1b]0;pwned\x07'
  [1]
  $ gmsim export c.db -o "$(printf 'o\033[2J.csv')" --trace nope
  gmsim: no trace named 'nope' in 'c.db', which holds 1: 'evil\x1b]0;pwned\x07'
  [1]

On a terminal (here a pseudo-terminal made by script(1)) standard output
shows control bytes escaped whatever the verb; into a pipe or a file they
stay as they are, so that data reads back:

  $ script -qc 'gmsim info c.db' /dev/null | grep -c 'evil\\x1b\]0;pwned\\x07'
  1
  $ script -qc 'gmsim compare c.db --csv -p buddy 2> /dev/null' /dev/null | grep -c "$(printf '\033')"
  0
  [1]
  $ gmsim compare c.db --csv -p buddy | grep -c "$(printf '\033')"
  1
