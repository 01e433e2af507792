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
    "failed": 0
  }

Shards: deterministic slices, each into its own file; merged they are
the whole sweep, without duplicates:

  $ for i in 1 2 3; do gmsim sweep m.db -p native,buddy --param buddy.arena=1GiB,4GiB --shard $i/3 -o s$i.db -j 1 | head -1; done
  sweep: 3 traces x 3 configurations = 9 runs, shard 1/3: 3 runs
  sweep: 3 traces x 3 configurations = 9 runs, shard 2/3: 3 runs
  sweep: 3 traces x 3 configurations = 9 runs, shard 3/3: 3 runs
  $ gmsim merge all.db s1.db s2.db s3.db
  merged 's1.db' into 'all.db': 3 runs copied, 0 already there
  merged 's2.db' into 'all.db': 3 runs copied, 0 already there
  merged 's3.db' into 'all.db': 3 runs copied, 0 already there
  $ gmsim merge all.db s1.db s2.db s3.db
  merged 's1.db' into 'all.db': 0 runs copied, 3 already there
  merged 's2.db' into 'all.db': 0 runs copied, 3 already there
  merged 's3.db' into 'all.db': 0 runs copied, 3 already there
  $ q='select trace_digest, policy, params from runs order by 1, 2, 3'
  $ sqlite3 all.db "$q" > merged; sqlite3 m.runs.db "select trace_digest, policy, params from runs where params not like '%8589934592%' order by 1, 2, 3" | cmp - merged && echo same runs
  same runs

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
                     [--param P.KEY=V[,V...]]... [--capacity SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
  [2]
  $ gmsim sweep --synth '--model nosuch' -o x.db 2>&1 | head -1
  gmsim: unknown model 'nosuch'* (glob)

Errors:

  $ gmsim sweep m.db -o m.db -p buddy
  gmsim: the results store 'm.db' is also an input: a sweep only reads its inputs (name another file)
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
  [2]
  $ gmsim sweep m.db --shard 1/2
  gmsim: --shard needs --results (each shard writes its own file)
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
  [2]
  $ gmsim sweep m.db --shard 3/2 -o x.db
  gmsim: invalid value for --shard: '3/2' (I/N with 1 <= I <= N)
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
  [2]
  $ gmsim sweep m.db -j 0
  gmsim: invalid value for --jobs: '0' (1 to 256)
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
  [2]
  $ gmsim sweep m.db -p buddy --param buddy.min_block=3 -o x.db
  gmsim: invalid value '3' for buddy.min_block: not a power of two
  usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]
                     [--param P.KEY=V[,V...]]... [--capacity SIZE]
                     [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]
                     [--json]
         gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]
  [2]
  $ gmsim sweep m.db -t 'zz*' -o x.db
  gmsim: no trace matches 'zz*' in 'm.db'
  [1]
  $ gmsim merge all.db all.db
  gmsim: 'all.db' is both OUT and IN
  usage: gmsim merge OUT IN... [--json]
  [2]
  $ gmsim merge all.db
  gmsim: missing IN (the stores to merge)
  usage: gmsim merge OUT IN... [--json]
  [2]
