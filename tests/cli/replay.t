`gmsim replay` runs a stored trace through policies in one pass.

  $ gmsim synth --events 20000 --seed 3 --live-max 1GiB -o t.db
  wrote 'random' into 't.db': 20000 events (9997 allocs, 9997 frees, 6 marks), load 875.26 MiB

The table: the trace's LOAD, then one row per policy (ns/event, the last
column, is a measured time: sed drops it):

  $ gmsim replay t.db --policy buddy | sed 's/ *[0-9.]*$//'
  trace 'random': 20000 events, load 875.26 MiB (peak requested: the floor for every policy)
  
  policy  start  peak reserved  peak allocated   util  efficiency  overhead  int frag  ext frag    rounding  dev mallocs  dev frees  dev time  ooms  ns/event
  buddy   cold        2.00 GiB        1.27 GiB  63.3%       42.7%   +134.0%     13.6%     43.6%  278.82 MiB            2          0    0.5 ms     0

A policy's figures do not depend on which other policies run beside it:

  $ row() { awk -v p="$1" '$1 == p { $NF = ""; print }'; }
  $ gmsim replay t.db --policy native | row native > alone
  $ gmsim replay t.db --policy native,buddy | row native | cmp - alone && echo same
  same
  $ gmsim replay t.db --policy buddy,native | row native | cmp - alone && echo same
  same
  $ gmsim replay t.db --policy buddy | row buddy > alone
  $ gmsim replay t.db --policy buddy,native | row buddy | cmp - alone && echo same
  same
  $ gmsim replay t.db --policy native,buddy | row buddy | cmp - alone && echo same
  same

`all` is every registered policy, once each, in registry order; a
planner's run adds a line under the table saying how good its plan is known
to be (docs/metrics.md, "The plan"):

  $ gmsim replay t.db --policy all,buddy > all.txt
  $ awk 'NR > 3 && $2 != "plan:" { print $1 }' all.txt > ran
  $ gmsim policies --json | sed -n 's/^      "name": "\(.*\)",$/\1/p' | cmp - ran && echo every policy
  every policy
  $ grep -c "^'offline' plan: \(optimal\|feasible\|greedy\), " all.txt
  1

JSON: the trace, its LOAD, the device, and per run the policy, every
resolved parameter and exactly the metrics of docs/metrics.md:

  $ gmsim replay t.db --policy buddy --param buddy.arena=256MiB --param buddy.release=empty --json
  {
    "trace": "random",
    "events": 20000,
    "load": 917775268,
    "device": {
      "capacity": 0,
      "granularity": 512
    },
    "runs": [
      {
        "policy": "buddy",
        "params": {
          "min_block": 512,
          "arena": 268435456,
          "release": "empty"
        },
        "start": "cold",
        "metrics": {
          "peak_requested": 917775268,
          "peak_allocated": [0-9.e+-]+, (re)
          "peak_reserved": [0-9.e+-]+, (re)
          "utilization": [0-9.e+-]+, (re)
          "efficiency": [0-9.e+-]+, (re)
          "overhead": [0-9.e+-]+, (re)
          "internal_frag": [0-9.e+-]+, (re)
          "external_frag": [0-9.e+-]+, (re)
          "rounding_waste": [0-9.e+-]+, (re)
          "reserved_at_load_peak": [0-9.e+-]+, (re)
          "largest_free_at_peak": [0-9.e+-]+, (re)
          "device_mallocs": [0-9.e+-]+, (re)
          "device_frees": [0-9.e+-]+, (re)
          "device_time_ns": [0-9.e+-]+, (re)
          "ooms": 0,
          "first_oom_event": -1,
          "events": 20000,
          "sim_ns_per_event": [0-9.e+-]+ (re)
        }
      }
    ]
  }

Parameters apply in order, the last one wins:

  $ gmsim replay t.db -p buddy -P buddy.arena=64MiB -P buddy.arena=128MiB --json | grep '"arena"'
          "arena": 134217728,

A finite device: requests beyond it are OOMs, a result and not an error:

  $ gmsim replay t.db --policy native,buddy --capacity 1536MiB | sed 's/ *[0-9.]*$//'
  trace 'random': 20000 events, load 875.26 MiB (peak requested: the floor for every policy), capacity 1.50 GiB
  
  policy +start +peak reserved +peak allocated +util +efficiency +overhead +int frag +ext frag +rounding +dev mallocs +dev frees +dev time +ooms +ns/event (re)
  native .* 0 (re)
  buddy .* [1-9][0-9]* (re)
  'native' margin [0-9.]+ [KMG]iB = 1.50 GiB - peak .* (re)
  'buddy' does not fit: it ran out of memory (below)
  'buddy' ran out of memory [0-9]+ times, first at event (re)
  
  at the first OOM of 'buddy' (event 191): a request of 45.32 MiB on stream 0; 1.00 GiB reserved of 1.50 GiB, 973.29 MiB in live blocks (741.87 MiB requested)
    (policy 'buddy' does not show its segments)
    would fit (from an empty allocator, on the same device): --policy tlsf, peak 1.07 GiB; also: caching, bfc, pool, async
    it fits on a device of 2.00 GiB or more (its peak reserved on an unlimited device, cold)

--check runs every policy's invariant checks after every event:

  $ gmsim replay t.db --policy all --check > /dev/null && echo checked
  checked

With one trace in the store --trace may be left out; with several it is
needed:

  $ gmsim synth --events 100 -o t.db --name other > /dev/null
  $ gmsim replay t.db --policy native
  gmsim: 't.db' holds 2 traces; choose one with --trace: 'other', 'random'
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim replay t.db --trace other --policy native | head -1
  trace 'other': 100 events, load 1.10 GiB (peak requested: the floor for every policy)

--timeline adds each run's downsampled memory timeline to the JSON: one
point per event for a short trace, the columns named once:

  $ gmsim replay t.db --trace other --policy buddy --json --timeline | grep -A1 '"columns"'
          "columns": ["event", "ts_ns", "requested", "allocated", "reserved"],
          "points": [
  $ gmsim replay t.db --trace other --policy buddy --json --timeline | grep -c '^ *\[[0-9]'
  100
  $ gmsim replay t.db --policy native --timeline
  gmsim: --timeline goes with --json
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]

--save keeps each run in the store's runs table (parameters, device and
metrics as JSON, the gmsim version, the time) and its timeline in the
timelines table, so results can be read back with plain SQL:

  $ gmsim replay t.db --trace other --policy native,buddy --save | tail -1
  saved 2 runs in 't.db' (table runs, ids 1 to 2)
  $ gmsim replay t.db --trace other --policy buddy --param buddy.release=empty --save --json | grep '"run_id"'
        "run_id": 3,
  $ sqlite3 t.db "SELECT id, trace_name, policy, params, device FROM runs ORDER BY id"
  1|other|native|{"chunk":0}|{"capacity":0,"granularity":512}
  2|other|buddy|{"min_block":512,"arena":1073741824,"release":"never"}|{"capacity":0,"granularity":512}
  3|other|buddy|{"min_block":512,"arena":1073741824,"release":"empty"}|{"capacity":0,"granularity":512}
  $ sqlite3 t.db "SELECT json_extract(metrics, '$.peak_reserved') = (SELECT max(reserved) FROM timelines WHERE run_id = 2) FROM runs WHERE id = 2"
  1
  $ sqlite3 t.db "SELECT run_id, count(*) FROM timelines GROUP BY run_id"
  1|100
  2|100
  3|100

A run is unique by its key (trace, policy, parameters, device, gmsim
version): saved again, the stored run is kept and nothing is doubled:

  $ gmsim replay t.db --trace other --policy buddy --param buddy.release=empty --save | tail -1
  the run was saved before in 't.db' (table runs, id 3): kept it
  $ gmsim replay t.db --trace other --policy native,buddy,tlsf --save | tail -1
  saved 1 run in 't.db' (table runs); 2 saved before: kept
  $ gmsim replay t.db --trace other --policy native,buddy --save | tail -1
  the 2 runs were saved before in 't.db' (table runs): kept them
  $ sqlite3 t.db "SELECT count(*), count(DISTINCT policy || params) FROM runs"
  4|4
  $ sqlite3 t.db "INSERT INTO runs (trace_digest, policy, params, device, gmsim_version) SELECT trace_digest, policy, params, device, gmsim_version FROM runs WHERE id = 1" 2>&1 | grep -o 'UNIQUE constraint failed'
  UNIQUE constraint failed
