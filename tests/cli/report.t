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
  <section id="heatmap">
  <section id="summary">
  <section id="memory-over-time">
  <section id="peak-reserved">
  <section id="seq-len">
  <section id="waste-at-peak">
  <section id="metrics">
  $ grep -o '<svg class="chart[a-z ]*"' report.html | sort | uniq -c
        6 <svg class="chart bars"
        5 <svg class="chart ln"
  $ grep -c -e 'http:' -e 'https:' -e 'src=' report.html
  0
  [1]

Links stay inside the file: the table of contents and the heat map's rows
(one per trace, a cell per policy):

  $ grep -o 'href="[^"]*"' report.html | tr '\n' ' '; echo
  href="#heatmap" href="#summary" href="#memory-over-time" href="#peak-reserved" href="#seq-len" href="#waste-at-peak" href="#metrics" href="#g0" href="#g1" href="#g2" 
  $ grep -o '<td class="na">\|<td style=\|<td class="oom"\|<td class="ref"' report.html | wc -l
  6

Every line and bar carries its values for the hover; the legend entries
toggle their series; the steps and the forward and backward passes of the
trace are ticks on the x axis:

  $ grep -o '<polyline class="sr"' report.html | wc -l
  20
  $ grep -o '<polyline class="sr"[^>]* data-v="[0-9. e+-]*"' report.html | wc -l
  20
  $ grep -o 'class="lg" data-s="[a-z0-9]*"' report.html | sort | uniq -c | head -4
        3 class="lg" data-s="al"
        4 class="lg" data-s="ld"
        2 class="lg" data-s="p0"
        2 class="lg" data-s="p1"
  $ grep -o '<path class="mk-[sfb]" d="[^"]*" data-n="[a-z]*" data-e="[0-9 ]*"' report.html | sed 's/ d="[^"]*"//' | sort | uniq -c
        2 <path class="mk-b" data-n="backward" data-e="559"
        2 <path class="mk-f" data-n="forward" data-e="149"
        1 <path class="mk-s" data-n="step" data-e="0 2999"
        2 <path class="mk-s" data-n="step" data-e="148"
  $ grep -o '>step [0-9]*</text>' report.html | sort | uniq -c
        3 >step 1</text>
        1 >step 2</text>
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

Errors:

  $ gmsim report m.db
  gmsim: no runs in 'm.db' (run 'gmsim sweep' or 'gmsim replay --save' first)
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
