`gmsim compare` replays every trace of the stores through every policy,
each trace read once for all of them.

  $ gmsim synth --model gpt2 --seq 128,256 --steps 1 -o m.db > /dev/null
  $ gmsim synth --events 3000 --seed 4 --live-max 64MiB -o r.db --name rand > /dev/null

One table per trace; a --param with a list of values is one configuration
per value; the winner is the least peak reserved without OOMs:

  $ gmsim compare m.db r.db --policies native,buddy --param buddy.arena=1GiB,4GiB
  trace 'gpt2.seq128' (m.db): 2184 events, load 2.32 GiB, seq_len 128
  
  policy            start  peak reserved    util  efficiency  overhead  int frag  ext frag  rounding  dev mallocs  ooms
  native            cold        2.32 GiB  100.0%      100.0%     +0.0%      0.0%      0.0%       0 B         1386     0
  buddy             cold        4.00 GiB   96.3%       57.9%    +72.6%     38.3%      3.7%  1.53 GiB            4     0
  buddy arena=4GiB  cold        4.00 GiB   96.3%       57.9%    +72.6%     38.3%      3.7%  1.53 GiB            1     0
  least reserved (of the policies that cache): buddy, 4.00 GiB (+72.6% above load)
  recommendation: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True saves 110.00 MiB (4.3%) against PyTorch's defaults: 2.38 GiB instead of 2.49 GiB, both replayed from an empty allocator as a new job starts
  
  trace 'gpt2.seq256' (m.db): 2184 events, load 3.80 GiB, seq_len 256
  
  policy            start  peak reserved    util  efficiency  overhead  int frag  ext frag  rounding  dev mallocs  ooms
  native            cold        3.80 GiB  100.0%      100.0%     +0.0%      0.0%      0.0%     508 B         1386     0
  buddy             cold        6.00 GiB   87.8%       63.4%    +57.8%     24.5%     12.2%  1.47 GiB            6     0
  buddy arena=4GiB  cold        8.00 GiB   65.9%       47.5%   +110.4%     18.4%     34.1%  1.47 GiB            2     0
  least reserved (of the policies that cache): buddy, 6.00 GiB (+57.8% above load)
  recommendation: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True saves 56.00 MiB (1.4%) against PyTorch's defaults: 3.81 GiB instead of 3.87 GiB, both replayed from an empty allocator as a new job starts
  
  trace 'rand' (r.db): 3000 events, load 62.75 MiB
  
  policy            start  peak reserved    util  efficiency  overhead  int frag  ext frag   rounding  dev mallocs  ooms
  native            cold       62.76 MiB  100.0%      100.0%     +0.0%      0.0%      0.0%   5.12 KiB         1499     0
  buddy             cold        1.00 GiB    7.3%        6.1%  +1531.7%      1.2%     92.7%  12.23 MiB            1     0
  buddy arena=4GiB  cold        4.00 GiB    1.8%        1.5%  +6427.0%      0.3%     98.2%  12.23 MiB            1     0
  least reserved (of the policies that cache): buddy, 1.00 GiB (+1531.7% above load)

A policy's figures do not depend on the others run beside it (one pass
feeds them all):

  $ gmsim compare r.db m.db -p buddy | grep '^buddy' | tr -s ' ' > alone
  $ gmsim compare r.db m.db -p native,buddy | grep '^buddy' | tr -s ' ' | cmp - alone && echo same
  same
  $ gmsim compare r.db m.db -p buddy,native | grep '^buddy' | tr -s ' ' | cmp - alone && echo same
  same

--by seq_len pivots on the traces' seq_len attribute (traces without it
are left out, with a note):

  $ gmsim compare m.db r.db -p native,buddy --by seq_len
  gmsim: 1 trace without 'seq_len' left out of the pivot
  peak reserved by seq_len
  
  policy  start       128       256
  load           2.32 GiB  3.80 GiB
  native  cold   2.32 GiB  3.80 GiB
  buddy   cold   4.00 GiB  6.00 GiB
  
  overhead above load by seq_len
  
  policy  start     128     256
  native  cold    +0.0%   +0.0%
  buddy   cold   +72.6%  +57.8%
  
  internal fragmentation (rounding) by seq_len
  
  policy  start    128    256
  native  cold    0.0%   0.0%
  buddy   cold   38.3%  24.5%
  
  external fragmentation by seq_len
  
  policy  start   128    256
  native  cold   0.0%   0.0%
  buddy   cold   3.7%  12.2%

JSON and CSV carry every metric of every run:

  $ gmsim compare r.db -p buddy --json | head -15
  {
    "device": {"capacity":0,"granularity":512},
    "traces": [
      {
        "store": "r.db",
        "trace": "rand",
        "digest": "13f42d767cf03da938def72c64fc003d",
        "events": 3000,
        "load": 65803138,
        "seq_len": null,
        "winner": "buddy",
        "pytorch": null,
        "runs": [
          {
            "policy": "buddy",
  $ gmsim compare r.db -p buddy --csv | head -1
  store,trace,digest,seq_len,events,load,policy,label,start,params,peak_requested,peak_allocated,peak_reserved,utilization,efficiency,overhead,internal_frag,external_frag,rounding_waste,reserved_at_load_peak,largest_free_at_peak,device_mallocs,device_frees,device_time_ns,ooms,first_oom_event,events,sim_ns_per_event,plan,plan_peak,plan_lower_bound,plan_gap,plan_capacity

A planner's run (offline) says how good its plan is known to be, as
replay does: a line under the table (optimal, or greedy/feasible with the
gap to the proved lower bound), and a "plan" object in --json; the other
policies' rows are as before:

  $ gmsim compare r.db -p buddy,offline --param offline.effort=0,100000000 --no-advice
  trace 'rand' (r.db): 3000 events, load 62.75 MiB
  
  policy            start  peak reserved    util  efficiency  overhead  int frag  ext frag   rounding  dev mallocs  ooms
  buddy             cold        1.00 GiB    7.3%        6.1%  +1531.7%      1.2%     92.7%  12.23 MiB            1     0
  offline effort=0  cold       62.99 MiB   99.6%       99.6%     +0.4%      0.0%      0.4%   5.12 KiB            1     0
  offline           cold       62.76 MiB  100.0%      100.0%     +0.0%      0.0%      0.0%   5.12 KiB            1     0
  'offline effort=0' plan: greedy, 62.99 MiB, 0.36% above the lower bound 62.76 MiB (not proved optimal)
  'offline' plan: optimal, 62.76 MiB (proved: no plan needs fewer bytes)
  least reserved (of the policies that cache): buddy, 1.00 GiB (+1531.7% above load)
  $ gmsim compare r.db -p buddy,offline --param offline.effort=0 --json | grep -A 7 '"plan"'
            "plan": {
              "status": "greedy",
              "peak": 66044928,
              "lower_bound": 65808384,
              "gap": 0.0035944356269255904,
              "capacity": 0,
              "work": 230896
            }
  $ gmsim compare r.db -p buddy,offline --json | grep -c '"plan"'
  1

In --csv the plan is five last columns (status, peak, lower bound, gap,
capacity), empty for the other policies; with --by seq_len it is one more
pivot, of the planners only:

  $ gmsim compare r.db -p buddy,offline --param offline.effort=0 --csv --no-advice | awk -F, '{ print $7 "," $(NF-4) "," $(NF-3) "," $(NF-2) "," $(NF-1) "," $NF }'
  policy,plan,plan_peak,plan_lower_bound,plan_gap,plan_capacity
  buddy,,,,,
  offline,greedy,66044928,65808384,0.0035944356269255904,0
  $ gmsim compare m.db -p buddy,offline --param offline.effort=0,100000000 --by seq_len | tail -5
  plan by seq_len (optimal: proved; else how far above the lower bound)
  
  policy            start                128      256
  offline effort=0  cold   greedy +15.99 MiB  optimal
  offline           cold             optimal  optimal

Errors:

  $ gmsim compare m.db -p nosuch
  gmsim: unknown policy 'nosuch' (known: all, native, caching, bfc, pool, binning, async, buddy, tlsf, offline; see 'gmsim policies')
  usage: gmsim compare DB... [--trace GLOB] [--policies all|P[,P...]]
                       [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                       [--granularity SIZE] [--start warm|cold]
                       [--by trace|seq_len] [--json|--csv] [--no-advice] [--threads N]
  [2]
  $ gmsim compare m.db -p buddy --param native.x=1
  gmsim: --param 'native.x=1' is for a policy that is not selected (or unknown)
  usage: gmsim compare DB... [--trace GLOB] [--policies all|P[,P...]]
                       [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                       [--granularity SIZE] [--start warm|cold]
                       [--by trace|seq_len] [--json|--csv] [--no-advice] [--threads N]
  [2]
  $ gmsim compare m.db -p buddy --param buddy.arena=1GiB,
  gmsim: invalid --param 'buddy.arena=1GiB,' (an empty value)
  usage: gmsim compare DB... [--trace GLOB] [--policies all|P[,P...]]
                       [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                       [--granularity SIZE] [--start warm|cold]
                       [--by trace|seq_len] [--json|--csv] [--no-advice] [--threads N]
  [2]
  $ gmsim compare m.db --by model
  gmsim: invalid value for --by: 'model' (trace or seq_len)
  usage: gmsim compare DB... [--trace GLOB] [--policies all|P[,P...]]
                       [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                       [--granularity SIZE] [--start warm|cold]
                       [--by trace|seq_len] [--json|--csv] [--no-advice] [--threads N]
  [2]
  $ gmsim compare m.db --json --csv
  gmsim: --json and --csv do not go together
  usage: gmsim compare DB... [--trace GLOB] [--policies all|P[,P...]]
                       [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                       [--granularity SIZE] [--start warm|cold]
                       [--by trace|seq_len] [--json|--csv] [--no-advice] [--threads N]
  [2]
  $ gmsim compare m.db -t 'zz*'
  gmsim: no trace matches 'zz*' in the stores given, which hold 2: 'gpt2.seq128', 'gpt2.seq256'
  [1]
  $ gmsim compare r.db -p native --by seq_len
  gmsim: no trace carries a 'seq_len' attribute (use --by trace)
  [1]
  $ gmsim compare missing.db
  gmsim: cannot open 'missing.db': no such file
  [1]

A reserve held outside the allocator (the CUDA context) comes off the
capacity, as it does for replay; it needs a capacity to come off:

  $ gmsim compare r.db -p native --capacity 4GiB --reserve 1GiB --json --no-advice | grep '"device"'
    "device": {"capacity":3221225472,"granularity":512},
  $ gmsim compare r.db -p native --reserve 1GiB 2>&1 | head -1
  gmsim: --reserve needs --capacity or --device
  $ gmsim compare r.db -p native --capacity 1GiB --reserve 2GiB > /dev/null 2>&1; echo $?
  2
