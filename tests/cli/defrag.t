`gmsim replay --defrag` compacts every run at chosen points: the live
allocations are re-placed, largest first, into a fresh state of the same
policy, and a second table says what it bought and cost.

  $ gmsim synth --events 20000 --seed 3 --live-max 1GiB -o t.db
  wrote 'random' into 't.db': 20000 events (9997 allocs, 9997 frees, 6 marks), load 875.26 MiB

Every 5,000 events (the last compaction, at the end, finds nothing live).
The main table is the usual one (its last column, ns/event, a measured time,
is dropped):

  $ gmsim replay t.db --policy tlsf,offline --defrag every=5000 | sed 's/ *[^ ]*$//' | head -6
  trace 'random': 20000 events, load 875.26 MiB (peak requested: the floor for every
  
  policy   start  peak reserved  peak allocated   util  efficiency  overhead  int frag  ext frag  rounding  dev mallocs  dev frees  dev time  ooms
  tlsf     cold        1.07 GiB      875.26 MiB  80.1%       80.1%    +24.9%      0.0%     19.9%  5.59 KiB           62         62    2.4 ms     0
  offline  cold      913.80 MiB      875.26 MiB  95.8%       95.8%     +4.4%      0.0%      4.2%  5.59 KiB            4          4    1.3 ms     0
  'offline' plan: greedy, 913.80 MiB, 4.40% above the lower bound 875.26 MiB (not proved
  $ gmsim replay t.db --policy tlsf,offline --defrag every=5000 | sed -n '/^defrag/,$p'
  defragmentation (reserved before/after: summed over the compactions)
  
  policy   compactions  aborted  moved  bytes moved  reserved before  reserved after  largest cut  peak if copied
  tlsf               4        0     73     1.24 GiB         4.14 GiB        1.95 GiB     1.00 GiB        1.82 GiB
  offline            4        0      0          0 B         3.57 GiB        2.68 GiB   913.80 MiB        1.78 GiB

The planner moves nothing: its fresh state puts every allocation where its
plan says.  Compacting at a named mark, in JSON (one "defrag" object per
run):

  $ gmsim replay t.db --policy tlsf --defrag at=step --json | sed -n '/"defrag"/,/}/p'
        "defrag": {
          "compactions": 6,
          "aborted": 0,
          "blocks_moved": 54,
          "bytes_moved": 440841174,
          "reserved_before": 5394122240,
          "reserved_after": 1899378688,
          "max_reclaimed": 1078824448,
          "copy_peak_reserved": 1620777984
        }

With no compaction reached, every figure is the plain replay's:

  $ row() { sed '/^defragmentation/,$d' | awk 'NR > 3 && NF { $NF = ""; print }'; }
  $ gmsim replay t.db --policy all | row > plain
  $ gmsim replay t.db --policy all --defrag every=1000000 | row | cmp - plain && echo same
  same

A mark the trace does not have compacts nothing:

  $ gmsim replay t.db --policy buddy --defrag at=nosuchmark | sed -n '/^defrag/,$p'
  defragmentation (reserved before/after: summed over the compactions)
  
  policy  compactions  aborted  moved  bytes moved  reserved before  reserved after  largest cut  peak if copied
  buddy             0        0      0          0 B              0 B             0 B          0 B             0 B

Bad values are usage errors:

  $ gmsim replay t.db --policy tlsf --defrag every=0
  gmsim: invalid value for --defrag: 'every=0' (expected every=N with N >= 1, or at=MARK)
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy tlsf --defrag sometimes
  gmsim: invalid value for --defrag: 'sometimes' (expected every=N with N >= 1, or at=MARK)
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy tlsf --defrag at=
  gmsim: invalid value for --defrag: 'at=' (expected every=N with N >= 1, or at=MARK)
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --policy tlsf --defrag every=10 --on gpu
  gmsim: --defrag does not go with --on gpu
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
