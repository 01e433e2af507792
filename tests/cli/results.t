Where a sweep's results are, and traces that are the same: `gmsim report
S.db` after `gmsim sweep S.db` finds the runs in S.runs.db (the sweep's
default results store) and says so; where there are none, the message says
where a sweep keeps them.  Traces with the same events under two names
are swept once (a run's key is the content) and shown once: both verbs say
so instead of leaving one out silently, and so do the verbs that write a
trace (synth, import) when it has the same events as one already there.

  $ gmsim synth --events 3000 --seed 4 --live-max 64MiB -o s.db --name first > /dev/null
  $ gmsim synth --events 3000 --seed 4 --live-max 64MiB -o s.db --name second > /dev/null
  gmsim: note: 'second' has the same events as 'first' in 's.db': sweeps and reports take them as one
  $ gmsim synth --events 2000 --seed 5 --live-max 64MiB -o other.db --name third > /dev/null
  $ gmsim sweep s.db other.db -p buddy,tlsf -j 2
  sweep: 2 traces x 2 configurations = 4 runs
  0 already done, 4 ran, 0 failed; results in 's.runs.db'
  'second' in 's.db' has the same events as 'first' in 's.db': swept once for both
  $ gmsim sweep s.db other.db -p buddy,tlsf -j 2 --json | grep -e traces -e same_content
    "traces": 2,
    "same_content": 1,

The report of the store the sweep read:

  $ gmsim report s.db other.db -o r.html
  gmsim: no runs in 's.db': reading the sweep results beside it, 's.runs.db'
  wrote 'r.html': 2 traces, 4 runs
  gmsim: note: 'second' in 's.db' has the same events as 'first' in 's.db': shown once, under the first name
  $ gmsim report s.runs.db s.db other.db --format md | grep -c -e '^| first ' -e '^| third '
  gmsim: note: 'second' in 's.db' has the same events as 'first' in 's.db': shown once, under the first name
  2

Given the results store itself, nothing is looked for:

  $ gmsim report s.runs.db -o r2.html
  wrote 'r2.html': 2 traces, 4 runs

A sweep into a file of its own (-o) leaves nothing beside the store: the
message names where a default sweep would have put the runs and what to
give instead:

  $ gmsim sweep other.db -p buddy -j 1 -o elsewhere.db > /dev/null
  $ gmsim report other.db
  gmsim: no runs in 'other.db' (run 'gmsim sweep' or 'gmsim replay --save' first)
  hint: a sweep keeps its runs in its results store: 'other.runs.db' for 'gmsim sweep other.db', or the file given to its -o; report that one (with the traces' store for their names)
  [1]
  $ gmsim report elsewhere.db other.db --format md | grep -c '^| third '
  1
