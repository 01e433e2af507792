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
  <section id="active-memory">
  <section id="peak-reserved">
  <section id="seq-len">
  <section id="waste-at-peak">
  <section id="metrics">
  $ grep -o '<svg class="chart[a-z ]*"' report.html | sort | uniq -c
        6 <svg class="chart bars"
        2 <svg class="chart ln cat"
        3 <svg class="chart ln"
  $ grep -c -e 'http:' -e 'https:' -e 'src=' report.html
  0
  [1]

A page embeds a budget of allocations for its active-memory views
(--embed-allocs): a trace past what is left draws its first ones and says
what is left out; one with fewer than 1,000 left is named instead:

  $ gmsim report m.runs.db m.db -o part.html --embed-allocs 2500
  wrote 'part.html': 3 traces, 9 runs
  $ grep -o 'Drawn: the first [0-9]* allocations' part.html
  Drawn: the first 1001 allocations
  $ grep -c 'not drawn' part.html
  1
  $ gmsim report m.runs.db m.db -o part.html --embed-allocs 0
  gmsim: invalid value for --embed-allocs: '0' (1 to 100000000)
  usage: gmsim report DB... [-o FILE] [--format html|md] [--trace GLOB]
                      [--title TEXT] [--no-sites] [--embed-allocs N]
  [2]

Links stay inside the file: the table of contents and the heat map's rows
(one per trace, a cell per policy):

  $ grep -o 'href="[^"]*"' report.html | tr '\n' ' '; echo
  href="#heatmap" href="#summary" href="#memory-over-time" href="#active-memory" href="#peak-reserved" href="#seq-len" href="#waste-at-peak" href="#metrics" href="#g0" href="#g1" href="#g2" 
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
  $ grep -c '<script>' report.html
  1
  $ grep -o '<script type="[a-z/-]*"' report.html | sort | uniq -c
        3 <script type="application/json"
        3 <script type="application/octet-stream"
  $ grep -o '&lt;script&gt;alert(1)&lt;/script&gt;' report.html | head -1
  &lt;script&gt;alert(1)&lt;/script&gt;
  $ ls report.html*
  report.html

Allocation sites at the peak, from a snapshot's stack frames (the one of
torch.t: a 4 MiB allocation from before the recording and an 8 MB tensor,
both from train.py line 42 through torch's linear layer, and a forward
pass annotated): the live set at the load peak by site, the application's
own frame, each site a collapsible list of stacks:

  $ base64 -d > run.pickle <<'EOF'
  > gASV1wQAAAAAAAB9lCiMCHNlZ21lbnRzlF2UKH2UKIwGZGV2aWNllEsAjAdhZGRyZXNzlIoG
  > AAAAAAB/jAp0b3RhbF9zaXpllEoAAEABjA5hbGxvY2F0ZWRfc2l6ZZRKAABAAIwLYWN0aXZl
  > X3NpemWUSgAAQACMDnJlcXVlc3RlZF9zaXpllEoACT0AjAZzdHJlYW2USwCMDHNlZ21lbnRf
  > dHlwZZSMBWxhcmdllIwPc2VnbWVudF9wb29sX2lklEsASwCGlIwNaXNfZXhwYW5kYWJsZZSJ
  > jAZmcmFtZXOUXZSMBmJsb2Nrc5RdlCh9lChoBYoGAAAAAAB/jARzaXpllEoAAEAAaAlKAAk9
  > AIwFc3RhdGWUjBBhY3RpdmVfYWxsb2NhdGVklGgQXZQofZQojAhmaWxlbmFtZZSMPS92ZW52
  > L2xpYi9weXRob24zLjExL3NpdGUtcGFja2FnZXMvdG9yY2gvbm4vbW9kdWxlcy9saW5lYXIu
  > cHmUjARsaW5llEt9jARuYW1llIwHZm9yd2FyZJR1fZQoaBqMCHRyYWluLnB5lGgcSypoHYwE
  > c3RlcJR1ZXV9lChoBYoGAABAAAB/aBVKAAAAAWgJSwBoFowIaW5hY3RpdmWUaBBdlHVldX2U
  > KGgESwFoBYoGAAAAAgB/aAZKAAAgAGgHTQACaAhNAAJoCUtkaApLAGgLjAVzbWFsbJRoDWgO
  > aA+JaBBdlGgSXZQofZQoaAWKBgAAAAIAf2gVTQACaAlLZGgWaBdoEGgYdX2UKGgFigYAAgAC
  > AH9oFUoA/h8AaAlLAGgWaCNoEF2UdWV1ZYwNZGV2aWNlX3RyYWNlc5RdlChdlCh9lCiMBmFj
  > dGlvbpSMDmZyZWVfcmVxdWVzdGVklIwEYWRkcpSKBgAAQAAAf2gVSoCNWwBoCksAjAd0aW1l
  > X3VzlEsBaBBoGHV9lChoMIwOZnJlZV9jb21wbGV0ZWSUaDKKBgAAQAAAf2gVSoCNWwBoCksA
  > aDNLAmgQaBh1fZQoaDCMBWFsbG9jlGgyigYAAEAAAH9oFUoAEnoAaApLAGgzSwVoEGgYdX2U
  > KGgwaDVoMooGAABAAAB/aBVKABJ6AGgKSwBoM0sGaBBoGHV9lChoMIwNc2VnbWVudF9hbGxv
  > Y5RoMooGAAAAEAB/aBVKAABAAWgKSwBoM0sIaBBoGHV9lChoMIwMc2VnbWVudF9mcmVllGgy
  > igYAAAAQAH9oFUoAAEABaApLAGgzSwloEGgYdWVdlCh9lChoMGg6aDKKBgAAAAIAf2gVSgAA
  > IABoCksAaDNLA2gQaBh1fZQoaDBoN2gyigYAAAACAH9oFUtkaApLAGgzSwRoEGgYdWVljBJh
  > bGxvY2F0b3Jfc2V0dGluZ3OUfZQojBdQWVRPUkNIX0NVREFfQUxMT0NfQ09ORpSMAJSMDm1h
  > eF9zcGxpdF9zaXpllEr/////jBNleHBhbmRhYmxlX3NlZ21lbnRzlImMGHJvdW5kdXBfcG93
  > ZXIyX2RpdmlzaW9uc5R9lCiMATGUSwCMATKUSwB1dYwUZXh0ZXJuYWxfYW5ub3RhdGlvbnOU
  > XZQofZQojAVzdGFnZZSMBVNUQVJUlGgdaB5oBEsAaDNLA3V9lChoTYwDRU5ElGgdaB5oBEsA
  > aDNLB3VldS4=
  > EOF
  $ gmsim import run.pickle -o snap.db > /dev/null
  $ gmsim sweep snap.db -p native -j 1 > /dev/null
  $ gmsim report snap.runs.db snap.db -o snap.html
  wrote 'snap.html': 2 traces, 2 runs
  $ grep -o '<p class="note">At event[^<]*' snap.html
  <p class="note">At event 4: 2 live allocations, 11.44 MiB, from 1 stack at 1 site.
  <p class="note">At event 1: 1 live allocation, 100 B, from 1 stack at 1 site.
  $ grep -o '<span class="sc">[^<]*</span><code>[^<]*</code>' snap.html
  <span class="sc">2 allocs, 1 stack</span><code>train.py&#58;42&#58;step</code>
  <span class="sc">1 alloc, 1 stack</span><code>train.py&#58;42&#58;step</code>
  $ grep -o '<details class="stack"><summary>[^<]*</summary>' snap.html
  <details class="stack"><summary>stack 1: 11.44 MiB in 2 allocs</summary>
  <details class="stack"><summary>stack 1: 100 B in 1 alloc</summary>
  $ sed -n '/<pre class="frames">/,/<\/pre>/p' snap.html | head -2
  <details class="stack"><summary>stack 1: 11.44 MiB in 2 allocs</summary><pre class="frames">torch/nn/modules/linear.py&#58;125&#58;forward
  train.py&#58;42&#58;step</pre></details>
  $ grep -o '<path class="mk-[a-z]" d="[^"]*" data-n="[^"]*" data-e="[^"]*"' snap.html
  <path class="mk-f" d="M350 264v9M620 264v9" data-n="forward" data-e="3 6"
  <path class="mk-o" d="M800 265v4" data-n="empty_cache" data-e="8"

Markdown, for pull requests (to stdout without -o):

  $ gmsim report m.runs.db m.db --format md
  ## gmsim report
  
  3 traces, 9 runs.  Winner: the allocator with the least peak reserved and no OOM (native, a device call per request, is a reference, not a contender); saving against PyTorch's caching allocator with default settings.
  
  | trace | seq_len | load | winner | peak reserved | above load | baseline | saving | offline bound |
  |---|--:|--:|---|--:|--:|--:|--:|--:|
  | &lt;script&gt;alert\(1\)&lt;/script&gt; |  | 62.75 MiB | buddy | 1.00 GiB | +1531.7% | no run | | not run |
  | gpt2.seq128 | 128 | 2.32 GiB | buddy | 4.00 GiB | +72.6% | no run | | not run |
  | gpt2.seq256 | 256 | 3.80 GiB | buddy | 6.00 GiB | +57.8% | no run | | not run |
  
  - **recommendation** for gpt2.seq128: PYTORCH\_CUDA\_ALLOC\_CONF=expandable\_segments:True saves 110.00 MiB \(4.3%\) against PyTorch's defaults: 2.38 GiB instead of 2.49 GiB, both replayed from an empty allocator as a new job starts
  - **recommendation** for gpt2.seq256: PYTORCH\_CUDA\_ALLOC\_CONF=expandable\_segments:True saves 56.00 MiB \(1.4%\) against PyTorch's defaults: 3.81 GiB instead of 3.87 GiB, both replayed from an empty allocator as a new job starts

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
                      [--title TEXT] [--no-sites] [--embed-allocs N]
  [2]
  $ gmsim report nothere.db -o x.html
  gmsim: cannot open 'nothere.db': no such file
  [1]
  $ ls x.html*
  ls: cannot access 'x.html*': No such file or directory
  [2]
