Options that contradict each other are usage errors (exit 2), not silently
resolved one way (issue 32): one capacity, by size or by GPU preset, not
both; a policy named twice; a search bound of 0.

  $ gmsim synth --events 100 -o s.db > /dev/null
  $ gmsim replay s.db --policy caching --capacity 1GiB --device a100-80gb 2>&1 | head -1
  gmsim: the capacity given twice (--capacity SIZE or --device NAME, once)
  $ gmsim replay s.db --policy caching --device t4 --device a100-80gb > /dev/null 2>&1
  [2]
  $ gmsim estimate --model gpt2 --device t4 --capacity 1GiB 2>&1 | head -1
  gmsim: the capacity given twice (--capacity SIZE or --device NAME, once)
  $ gmsim fit --model gpt2 --capacity 1GiB --device a100-80gb --policy native 2>&1 | head -1
  gmsim: the capacity given twice (--capacity SIZE or --device NAME, once)
  $ gmsim fit --model gpt2 --capacity 8GiB --policy caching,caching 2>&1 | head -1
  gmsim: policy 'caching' given twice
  $ gmsim fit --model gpt2 --capacity 8GiB --policy caching --policy caching > /dev/null 2>&1
  [2]
  $ gmsim fit --model gpt2 --capacity 8GiB --policy native --max 0
  gmsim: invalid value for --max: '0' (1 to 1099511627776)
  usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]
                   [--vary batch|seq] [--max N] --model NAME|--hidden H ... [run options]
                   [--json]
         gmsim fit --from CAPTURE CAPTURE [CAPTURE...] [--capacity SIZE|--device NAME]
                   --policy P[,P...] [--vary batch|seq] [--max N] [--at seq=LIST]
                   [--at batch=LIST] [--base N] [--force] [--json]
  [2]

With --from the captures are the job: a model or run option of `synth`
(`--model`, a shape, `--batch`, `--steps`...) would be ignored, so it is a
usage error naming it:

  $ gmsim fit --from a.db b.db --device a100-80gb --policy caching --model gpt2 2>&1 | head -1
  gmsim: '--model' conflicts with --from (the captures give the model and the run)
  $ gmsim fit --from a.db b.db --device a100-80gb --policy caching --hidden 512 2>&1 | head -1
  gmsim: '--hidden' conflicts with --from (the captures give the model and the run)
  $ gmsim fit --from a.db b.db --device a100-80gb --policy caching --steps 2 > /dev/null 2>&1
  [2]
