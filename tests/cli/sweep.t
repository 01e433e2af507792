`gmsim sweep` runs traces x policies x parameter values in worker
processes and keeps every run, with its timeline, in a results store.

  $ gmsim synth --model gpt2 --seq 128,256 --steps 1 -o m.db > /dev/null
  $ gmsim synth --events 3000 --seed 4 --live-max 64MiB -o m.db --name rand > /dev/null

Results go to m.runs.db (the input is only read); a second run finds every
run done:

  $ gmsim sweep m.db -p native,buddy --param buddy.arena=1GiB,4GiB -j 2
  sweep: 3 traces x 3 configurations = 9 runs
  0 already done, 9 ran, 0 failed; results in 'm.runs.db'
  $ gmsim sweep m.db -p native,buddy --param buddy.arena=1GiB,4GiB -j 2
  sweep: 3 traces x 3 configurations = 9 runs
  9 already done, 0 ran, 0 failed; results in 'm.runs.db'
  $ sqlite3 m.db 'select count(*) from runs'
  0
  $ sqlite3 m.runs.db 'select count(*), count(distinct trace_digest || policy || params) from runs'
  9|9
  $ sqlite3 m.runs.db 'select count(distinct run_id) from timelines'
  9

Two sweeps into one results file at the same time share the grid: each
skips what the other has stored, and no run is stored twice:

  $ gmsim sweep m.db -p native,buddy,tlsf -o twice.db -j 1 > a.out & gmsim sweep m.db -p native,buddy,tlsf -o twice.db -j 1 > b.out; wait
  $ tail -qn1 a.out b.out | sed 's/[0-9]* already done, [0-9]* ran/N already done, M ran/'
  N already done, M ran, 0 failed; results in 'twice.db'
  N already done, M ran, 0 failed; results in 'twice.db'
  $ sqlite3 twice.db 'select count(*), count(distinct trace_digest || policy || params) from runs'
  9|9
  $ gmsim sweep m.db -p native,buddy,tlsf -o twice.db -j 2 | tail -1
  9 already done, 0 ran, 0 failed; results in 'twice.db'

One configuration, one key: `none` is 0 for a size whose 0 means no
limit, so `caching.max_split_size=none` is the default configuration:

  $ gmsim sweep m.db -p caching --param caching.max_split_size=none -o none.db | tail -1
  0 already done, 3 ran, 0 failed; results in 'none.db'
  $ gmsim sweep m.db -p caching -o none.db | tail -1
  3 already done, 0 ran, 0 failed; results in 'none.db'
  $ gmsim sweep m.db -p caching --param caching.max_split_size=0 -o none.db | tail -1
  3 already done, 0 ran, 0 failed; results in 'none.db'
  $ sqlite3 none.db 'select count(*), json_extract(params, "$.max_split_size") from runs'
  3|0

A grown grid runs only what is new:

  $ gmsim sweep m.db -p native,buddy --param buddy.arena=1GiB,4GiB,8GiB -j 2 --json
  {
    "results": "m.runs.db",
    "traces": 3,
    "configurations": 4,
    "grid": 12,
    "shard": null,
    "runs": 12,
    "reused": 9,
    "ran": 3,
    "failed": 0,
    "defaults_added": 0,
    "same_content": 0,
    "layout_unfit": 0
  }

A planner's runs (offline) count their plans by status in the summary,
and each stores its plan with its metrics (the other policies' metrics are
as before):

  $ gmsim sweep m.db -p buddy,offline --param offline.effort=0,100000000 -o plan.db -j 2
  sweep: 3 traces x 3 configurations = 9 runs
  0 already done, 9 ran, 0 failed; results in 'plan.db'
  plans of the runs that ran: 4 optimal, 0 feasible, 2 greedy (not proved: at most 0.67% above the lower bound)
  $ sqlite3 plan.db "select policy, json_extract(params, '$.effort'), json_extract(metrics, '$.plan.status'), json_extract(metrics, '$.plan.lower_bound') > 0 from runs where trace_name = 'rand' order by policy, json_extract(params, '$.effort')"
  buddy|||
  offline|0|greedy|1
  offline|100000000|optimal|1
  $ sqlite3 plan.db "select count(*) from runs where policy = 'buddy' and json_type(metrics, '$.plan') is null"
  3
  $ gmsim sweep m.db -p buddy,offline --param offline.effort=0 -o plan.db -j 2 --json | grep -c plans
  0
  [1]
  $ gmsim sweep m.db -p offline --param offline.effort=0,1000 -o plan.db -j 1 --json | sed -n '/plans/,/}/p'
    "plans": {
      "optimal": 3,
      "feasible": 0,
      "greedy": 0,
      "gap_max": 0
    }

Shards: deterministic slices, each into its own file; merged they are
the whole sweep, without duplicates:

  $ for i in 1 2 3; do gmsim sweep m.db -p native,buddy --param buddy.arena=1GiB,4GiB --shard $i/3 -o s$i.db -j 1 | head -1; done
  sweep: 3 traces x 3 configurations = 9 runs, shard 1/3: 3 runs
  sweep: 3 traces x 3 configurations = 9 runs, shard 2/3: 4 runs
  sweep: 3 traces x 3 configurations = 9 runs, shard 3/3: 2 runs
  $ gmsim merge all.db s1.db s2.db s3.db
  merged 's1.db' into 'all.db': 3 runs copied, 0 already there
  merged 's2.db' into 'all.db': 4 runs copied, 0 already there
  merged 's3.db' into 'all.db': 2 runs copied, 0 already there
  $ gmsim merge all.db s1.db s2.db s3.db
  merged 's1.db' into 'all.db': 0 runs copied, 3 already there
  merged 's2.db' into 'all.db': 0 runs copied, 4 already there
  merged 's3.db' into 'all.db': 0 runs copied, 2 already there
  $ q='select trace_digest, policy, params from runs order by 1, 2, 3'
  $ sqlite3 all.db "$q" > merged; sqlite3 m.runs.db "select trace_digest, policy, params from runs where params not like '%8589934592%' order by 1, 2, 3" | cmp - merged && echo same runs
  same runs

Each shard records itself in its results file; a merge that lacks a shard,
or holds one cut short, is refused before anything is written, unless
--allow-partial:

  $ sqlite3 s2.db 'select shard, nshards, runs = done from shards'
  2|3|1
  $ gmsim merge part.db s1.db s3.db
  gmsim: cannot merge an incomplete sweep: sweep * (3 shards): shard 2/3 missing (rerun those shards and merge them too, or pass --allow-partial) (glob)
  [1]
  $ test -e part.db || echo nothing written
  nothing written
  $ gmsim merge part.db s1.db s3.db s4.db --allow-partial
  gmsim: 's4.db' does not exist: left out
  gmsim: merging an incomplete sweep: sweep * (3 shards): shard 2/3 missing (glob)
  merged 's1.db' into 'part.db': 3 runs copied, 0 already there
  merged 's3.db' into 'part.db': 2 runs copied, 0 already there
  $ sqlite3 s2.db 'update shards set done = 1'
  $ gmsim merge part.db s2.db
  gmsim: cannot merge an incomplete sweep: sweep * (3 shards): shard 2/3 has 1 of 4 runs (rerun those shards and merge them too, or pass --allow-partial) (glob)
  [1]
  $ gmsim sweep m.db -p native,buddy --param buddy.arena=1GiB,4GiB --shard 2/3 -o s2.db -j 1 | tail -1
  4 already done, 0 ran, 0 failed; results in 's2.db'
  $ gmsim merge part.db s2.db
  merged 's2.db' into 'part.db': 4 runs copied, 0 already there

On Slurm (docs/cluster.md), --slurm writes a job array of shards and a
merge job that waits for it, and submits both; --dry-run prints them:

  $ gmsim sweep m.db -p native,buddy --param buddy.arena=1GiB,4GiB -o c.db --slurm --tasks 2 \
  >   --time 10 --sbatch-arg=--mem=1G --dry-run | sed -e "s|$(pwd -P)|HERE|g" -e "s|'/[^']*/gmsim'|gmsim|"
  # HERE/c.shards/sweep.sbatch
  #!/bin/bash
  # gmsim sweep on Slurm: array task I runs slice I of 2 of the grid into
  # its own results file.  A task that failed or was preempted can be
  # resubmitted alone, and resumes from its file:
  #   sbatch --array=I HERE/c.shards/sweep.sbatch
  # then merge: sbatch HERE/c.shards/merge.sbatch
  #SBATCH --job-name=gmsim-sweep
  #SBATCH --array=1-2
  #SBATCH --output=HERE/c.shards/logs/shard-%a.log
  #SBATCH --time=10
  #SBATCH --mem=1G
  set -eu
  shard=$SLURM_ARRAY_TASK_ID
  start=$(date +%s%N)
  gmsim sweep \
    'HERE/m.db' \
    --policies 'native,buddy' \
    --param 'buddy.arena=1GiB,4GiB' \
    --shard "$shard/2" -j "${SLURM_CPUS_PER_TASK:-1}" \
    --results 'HERE/c.shards'"/shard-$shard.db"
  echo "gmsim: shard $shard/2 took $(( ($(date +%s%N) - start) / 1000000 )) ms"
  
  # HERE/c.shards/merge.sbatch (after the array: --dependency=afterok:ARRAY_JOB)
  #!/bin/bash
  # gmsim sweep on Slurm: merge the 2 shards into the results, once every
  # array task has succeeded.  It refuses, naming them, shards that are
  # missing or incomplete.
  #SBATCH --job-name=gmsim-merge
  #SBATCH --output=HERE/c.shards/logs/merge.log
  #SBATCH --time=10
  #SBATCH --mem=1G
  set -eu
  exec gmsim merge 'HERE/c.db' \
    'HERE/c.shards/shard-1.db' \
    'HERE/c.shards/shard-2.db'
  $ test -e c.shards || echo nothing written
  nothing written

Submitted with a stand-in for sbatch that runs each job at once, in order
(the array's tasks one by one, as Slurm would set them up), the merged
results are those of the local sweep:

  $ mkdir bin; cat > bin/sbatch <<'EOF'
  > #!/bin/bash
  > # sbatch --parsable [--dependency=...] SCRIPT: run SCRIPT now, print a job id
  > script=${@: -1}; n=$(sed -n 's/^#SBATCH --array=1-//p' "$script")
  > echo "$*" >> sbatch.log
  > if [ -n "$n" ]; then for i in $(seq 1 "$n"); do SLURM_ARRAY_TASK_ID=$i bash "$script" > /dev/null || exit 1; done
  > else bash "$script" > /dev/null || exit 1; fi
  > echo $((100 + $(wc -l < sbatch.log)))
  > EOF
  $ chmod +x bin/sbatch
  $ PATH=$PWD/bin:$PATH gmsim sweep m.db -p native,buddy --param buddy.arena=1GiB,4GiB -o c.db --slurm --tasks 2 | sed "s|$(pwd -P)|HERE|g"
  submitted array job 101 (2 tasks, scripts and shards in 'HERE/c.shards')
  and merge job 102, which runs once every task has succeeded
  merged results will be in 'HERE/c.db'
  a task that fails can be resubmitted alone: sbatch --array=I 'HERE/c.shards/sweep.sbatch',
  then: sbatch 'HERE/c.shards/merge.sbatch'
  $ sed "s|$(pwd -P)|HERE|g" sbatch.log
  --parsable HERE/c.shards/sweep.sbatch
  --parsable --dependency=afterok:101 HERE/c.shards/merge.sbatch
  $ sqlite3 c.db "$q" | cmp - merged && echo same runs
  same runs
  $ cd c.shards && ls *.sbatch *.db logs && cd ..
  merge.sbatch
  shard-1.db
  shard-2.db
  sweep.sbatch
  
  logs:
  $ PATH=$PWD/bin:$PATH gmsim sweep --synth '--model gpt2 --seq 128,256 --steps 1' -p buddy -o g.db --slurm --tasks 2 --json 2>/dev/null | grep -c '"merge_job": "10[0-9]"'
  1
  $ sqlite3 g.shards/traces.db 'select count(*) from traces'; sqlite3 g.db 'select count(*) from runs'
  2
  2
  $ g=$(command -v gmsim); PATH=/nonexistent $g sweep m.db -p buddy -o d.db --slurm
  gmsim: cannot run sbatch: No such file or directory (is this a Slurm submission host? --dry-run prints the scripts)
  [1]

--synth synthesizes the traces into the results store first (its report
goes to stderr), so that one file holds the traces and their runs; a rerun
rewrites the same traces and finds every run done:

  $ gmsim sweep --synth '--model gpt2 --seq 128,256 --steps 1' -o gpt2.db -p buddy -j 2 2>/dev/null
  sweep: 2 traces x 1 configuration = 2 runs
  0 already done, 2 ran, 0 failed; results in 'gpt2.db'
  $ gmsim sweep --synth '--model gpt2 --seq 128,256 --steps 1' -o gpt2.db -p buddy -j 2 2>/dev/null
  sweep: 2 traces x 1 configuration = 2 runs
  2 already done, 0 ran, 0 failed; results in 'gpt2.db'
  $ gmsim sweep --synth '--model gpt2 --seq 128' -p buddy
  gmsim: --synth needs --results (the store the traces and the runs go to)
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--start warm|cold] [--timeline-points N] [--threads N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
         gmsim sweep DB... -o OUT --slurm [--tasks N] [--partition P] [--time T]
                     [--sbatch-arg ARG]... [--dry-run] [options]
  [2]
  $ gmsim sweep --synth '--model nosuch' -o x.db 2>&1 | head -1
  gmsim: unknown model 'nosuch'* (glob)

Errors:

  $ gmsim sweep m.db -o m.db -p buddy
  gmsim: cannot write 'm.db': it is the input 'm.db' (name another file)
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--start warm|cold] [--timeline-points N] [--threads N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
         gmsim sweep DB... -o OUT --slurm [--tasks N] [--partition P] [--time T]
                     [--sbatch-arg ARG]... [--dry-run] [options]
  [2]
  $ gmsim sweep m.db --shard 1/2
  gmsim: --shard needs --results (each shard writes its own file)
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--start warm|cold] [--timeline-points N] [--threads N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
         gmsim sweep DB... -o OUT --slurm [--tasks N] [--partition P] [--time T]
                     [--sbatch-arg ARG]... [--dry-run] [options]
  [2]
  $ gmsim sweep m.db --shard 3/2 -o x.db
  gmsim: invalid value for --shard: '3/2' (I/N with 1 <= I <= N)
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--start warm|cold] [--timeline-points N] [--threads N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
         gmsim sweep DB... -o OUT --slurm [--tasks N] [--partition P] [--time T]
                     [--sbatch-arg ARG]... [--dry-run] [options]
  [2]
  $ gmsim sweep m.db -j 0
  gmsim: invalid value for --jobs: '0' (1 to 256)
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--start warm|cold] [--timeline-points N] [--threads N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
         gmsim sweep DB... -o OUT --slurm [--tasks N] [--partition P] [--time T]
                     [--sbatch-arg ARG]... [--dry-run] [options]
  [2]
  $ gmsim sweep m.db -p buddy --param buddy.min_block=3 -o x.db
  gmsim: invalid value '3' for buddy.min_block: not a power of two
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--start warm|cold] [--timeline-points N] [--threads N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
         gmsim sweep DB... -o OUT --slurm [--tasks N] [--partition P] [--time T]
                     [--sbatch-arg ARG]... [--dry-run] [options]
  [2]
  $ gmsim sweep m.db -t 'zz*' -o x.db
  gmsim: no trace matches 'zz*' in the stores given, which hold 3: 'gpt2.seq128', 'gpt2.seq256', 'rand'
  [1]
  $ gmsim merge all.db all.db
  gmsim: cannot write 'all.db': it is the input 'all.db' (name another file)
  usage: gmsim merge OUT IN... [--allow-partial] [--json]
  [2]
  $ gmsim merge all.db
  gmsim: missing IN (the stores to merge)
  usage: gmsim merge OUT IN... [--allow-partial] [--json]
  [2]

`--reserve` takes the memory outside the allocator off the capacity the
runs are stored with, as for replay and compare:

  $ gmsim sweep m.db -p native --trace rand --capacity 4GiB --reserve 1GiB -o reserve.db -j 1 > /dev/null
  $ gmsim report reserve.db m.db --format md -o reserve.md > /dev/null; grep -o 'rand ([^)]*)' reserve.md
  rand (3.00 GiB)
  $ gmsim sweep m.db -p native --reserve 1GiB -o reserve.db 2>&1 | head -1
  gmsim: --reserve needs --capacity or --device
