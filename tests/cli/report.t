`gmsim report` writes one self-contained HTML file (or a Markdown
summary) from stored runs.

  $ gmsim synth --model gpt2 --seq 128,256 --steps 1 -o m.db > /dev/null
  $ gmsim synth --events 3000 --seed 4 --live-max 64MiB -o m.db --name '<script>alert(1)</script>' > /dev/null
  $ gmsim sweep m.db -p native,buddy --param buddy.arena=1GiB,4GiB -j 2 > /dev/null

Give the results and the store of the traces (for names, seq_len and
frames):

  $ gmsim report m.runs.db m.db -o report.html
  wrote 'report.html': 3 traces, 9 runs
  $ grep -o '<section id="[a-z-]*">' report.html
  <section id="summary">
  <section id="memory-over-time">
  <section id="peak-reserved">
  <section id="seq-len">
  <section id="waste-at-peak">
  <section id="metrics">
  $ grep -c '<svg class="chart"' report.html
  11
  $ grep -c -e 'http:' -e 'https:' -e 'src=' -e 'href=' report.html
  0
  [1]
  $ grep -c '<script' report.html
  1
  $ grep -o '&lt;script&gt;alert(1)&lt;/script&gt;' report.html | head -1
  &lt;script&gt;alert(1)&lt;/script&gt;
  $ ls report.html*
  report.html

Markdown, for pull requests (to stdout without -o):

  $ gmsim report m.runs.db m.db --format md
  ## gmsim report
  
  3 traces, 9 runs.  Winner: the allocator with the least peak reserved and no OOM (native, a device call per request, is a reference, not a contender); saving against PyTorch's caching allocator with default settings.
  
  | trace | seq_len | load | winner | peak reserved | above load | baseline | saving | offline bound |
  |---|--:|--:|---|--:|--:|--:|--:|--:|
  | &lt;script&gt;alert\(1\)&lt;/script&gt; |  | 62.75 MiB | buddy | 1.00 GiB | +1531.7% | no run | | not run |
  | gpt2.seq128 | 128 | 2.32 GiB | buddy | 4.00 GiB | +72.6% | no run | | not run |
  | gpt2.seq256 | 256 | 3.80 GiB | buddy | 6.00 GiB | +57.8% | no run | | not run |

The store the sweep read is enough: its runs are in the sweep's default
results store beside it, m.runs.db, which the report then reads too:

  $ gmsim report m.db -o beside.html
  gmsim: no runs in 'm.db': reading the sweep results beside it, 'm.runs.db'
  wrote 'beside.html': 3 traces, 9 runs
  $ cmp beside.html report.html && echo same
  same

Errors.  A store without runs, and no results beside it: the message says
where a sweep keeps them:

  $ cp m.db alone.db
  $ gmsim report alone.db
  gmsim: no runs in 'alone.db' (run 'gmsim sweep' or 'gmsim replay --save' first)
  hint: a sweep keeps its runs in its results store: 'alone.runs.db' for 'gmsim sweep alone.db', or the file given to its -o; report that one (with the traces' store for their names)
  [1]
  $ gmsim report m.runs.db --format pdf
  gmsim: invalid value for --format: 'pdf' (html or md)
  usage: gmsim report DB... [-o FILE] [--format html|md] [--trace GLOB]
                      [--title TEXT] [--no-sites]
  [2]
  $ gmsim report nothere.db -o x.html
  gmsim: cannot open 'nothere.db': no such file
  [1]
  $ ls x.html*
  ls: cannot access 'x.html*': No such file or directory
  [2]
