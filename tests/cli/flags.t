Flags mean the same on every verb: --policy and --policies are one option
wherever policies are chosen, --trace takes a name or a glob (one rule:
the name itself, else fnmatch), and replay and compare name their columns
alike.

  $ gmsim synth --model gpt2 --seq 128,256 --steps 1 -o m.db > /dev/null
  $ figures() { sed -n '4,$p' | awk '{ $NF = ""; print }'; }

--policy and --policies, on replay, compare, sweep and fit:

  $ gmsim replay m.db --trace gpt2.seq128 --policy caching,bfc | figures > a
  $ gmsim replay m.db --trace gpt2.seq128 --policies caching,bfc | figures > b
  $ cmp a b && wc -l < a
  2
  $ gmsim compare m.db --policy buddy > a
  $ gmsim compare m.db --policies buddy > b
  $ cmp a b && grep -c '^buddy ' a
  2
  $ gmsim sweep m.db --policy buddy,tlsf -j 1 -o p1.db | head -1
  sweep: 2 traces x 2 configurations = 4 runs
  $ gmsim sweep m.db --policies buddy,tlsf -j 1 -o p1.db | sed -n 2p
  4 already done, 0 ran, 0 failed; results in 'p1.db'
  $ gmsim fit --device a100-80gb --policy bfc --model gpt2 --seq 128 --max 16 > a
  $ gmsim fit --device a100-80gb --policies bfc --model gpt2 --seq 128 --max 16 > b
  $ cmp a b && tail -1 a | awk '{ print $1, $3 }'
  bfc 16

--trace: a name, or a glob, everywhere:

  $ gmsim replay m.db --trace '*256' --policy buddy | head -1
  trace 'gpt2.seq256': 2184 events, load 3.80 GiB (peak requested: the floor for every policy)
  $ gmsim replay m.db --trace 'gpt2.seq1[0-9][0-9]' --policy buddy | head -1
  trace 'gpt2.seq128': 2184 events, load 2.32 GiB (peak requested: the floor for every policy)
  $ gmsim export m.db --trace '*128' | wc -l
  2185
  $ gmsim compare m.db --trace '*128' --policy buddy | head -1
  trace 'gpt2.seq128' (m.db): 2184 events, load 2.32 GiB, seq_len 128
  $ gmsim sweep m.db --trace gpt2.seq256 --policy buddy -j 1 -o t1.db | head -1
  sweep: 1 trace x 1 configuration = 1 runs
  $ gmsim report p1.db m.db --trace '*256' --format md | grep -c '^| gpt2'
  1

A glob that picks several traces where one is needed names them; one that
picks none says so:

  $ gmsim replay m.db --trace 'gpt2.*' --policy buddy
  gmsim: 'gpt2.*' matches 2 traces in 'm.db'; choose one with --trace: 'gpt2.seq128', 'gpt2.seq256'
  usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...
                      [--capacity SIZE|--device NAME] [--reserve SIZE]
                      [--granularity SIZE] [--start warm|cold] [--check]
                      [--json [--timeline]] [--save] [--defrag every=N|at=MARK]
                      [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]
                      [--threads N]
  [2]
  $ gmsim export m.db --trace 'bert*'
  gmsim: no trace matches 'bert*' in 'm.db', which holds 2: 'gpt2.seq128', 'gpt2.seq256'
  [1]
  $ gmsim replay m.db --trace bert --policy buddy
  gmsim: no trace named 'bert' in 'm.db', which holds 2: 'gpt2.seq128', 'gpt2.seq256'
  [1]

A name that holds glob characters is picked by its name first:

  $ gmsim synth --events 500 --seed 2 -o m.db --name 'run[1]' > /dev/null
  $ gmsim synth --events 500 --seed 3 -o m.db --name 'run1' > /dev/null
  $ gmsim export m.db --trace 'run[1]' | sed -n 2p > a
  $ gmsim export m.db --trace 'run1' | sed -n 2p > b
  $ cmp -s a b || echo different
  different

replay and compare: the same names for the same columns, in the same
order (replay has a few more):

  $ gmsim replay m.db --trace '*128' --policy buddy | sed -n 3p | sed -E 's/ {2,}/|/g' > r
  $ gmsim compare m.db --trace '*128' --policy buddy | sed -n 3p | sed -E 's/ {2,}/|/g' > c
  $ cat c
  policy|start|peak reserved|util|efficiency|overhead|int frag|ext frag|rounding|dev mallocs|ooms
  $ tr '|' '\n' < c > cc; tr '|' '\n' < r | grep -Fx -f cc | paste -sd'|'
  policy|start|peak reserved|util|efficiency|overhead|int frag|ext frag|rounding|dev mallocs|ooms

The tool builds without Criterion, the unit-test framework: configuring
with it hidden warns and turns the unit tests off, and nothing fails:

  $ cmake -S "$GM_SOURCE_DIR" -B nocrit -DCMAKE_DISABLE_FIND_PACKAGE_Criterion=TRUE -DGM_WITH_CUDA=OFF > cfg.log 2>&1; echo $?
  0
  $ grep -o 'gmsim: Criterion not found: the unit tests (tests/test_\*.c) are off' cfg.log
  gmsim: Criterion not found: the unit tests (tests/test_*.c) are off
  $ ctest --test-dir nocrit -N | grep -c ' test_'
  0
  [1]
  $ ctest --test-dir nocrit -N | grep -c ' cli_'
  [1-9][0-9]* (re)
  $ cmake -S "$GM_SOURCE_DIR" -B notests -DBUILD_TESTING=OFF -DGM_WITH_CUDA=OFF > cfg2.log 2>&1; echo $?
  0
