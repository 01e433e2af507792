Warm and cold starts on real PyTorch snapshots of ../shared/data (this
transcript runs only where that folder is; tests/CMakeLists.txt leaves it
out, saying so, where it is not).  lmmedium was recorded after warm-up:
its recorded layout (the caching allocator's segments before the first
event) holds 6.74 GiB; from an empty allocator it needs 6.72 GiB.

  $ D=$GM_DATA_DIR/snapshots
  $ gmsim import $D/lmmedium_ctx128_train_fp32.pickle -o m.db > /dev/null

Every capacity gets an answer (issue 28, item 1).  Below the recorded
layout, caching replays from an empty allocator and says so in one line;
here it fits:

  $ gmsim replay m.db --policy caching,native --capacity 6.73GiB | cut -c1-32
  trace 'lmmedium_ctx128_train_fp3
  
  policy   start  peak reserved  p
  caching  cold        6.72 GiB   
  native   cold        6.53 GiB   
  'caching' margin 7.52 MiB = 6.73
  'native' margin 203.08 MiB = 6.7
  'caching': the recorded layout (
  $ gmsim replay m.db --policy caching --capacity 6.73GiB | grep recorded
  'caching': the recorded layout (6.74 GiB) does not fit 6.73 GiB: replayed from an empty allocator
  $ gmsim replay m.db --policy caching --capacity 6.73GiB | awk '$1 == "caching" {print $(NF-1)}'
  0

On a 5 GB MIG slice it does not fit: the OOM is explained (its blockers
and the settings tried) and the capacity it needs is given:

  $ gmsim replay m.db --policy caching --device a100-40gb:1g.5gb > out.txt; echo $?
  0
  $ grep -c '^  segment ' out.txt
  3
  $ grep -E "recorded layout|ran out|at the first OOM|none of|fits on" out.txt | cut -c1-110
  'caching' does not fit: it ran out of memory (below)
  'caching': the recorded layout (6.74 GiB) does not fit 4.31 GiB (the device less its reserve): replayed from a
  'caching' ran out of memory 2732 times, first at event 638
  at the first OOM of 'caching' (event 638): a request of 4.00 MiB on stream 0; 4.31 GiB reserved of 4.31 GiB, 4
    none of 8 settings tried (from an empty allocator, on the same device) avoids the OOM
    it fits on a device of 7.16 GiB or more: 6.72 GiB for the allocator (its peak reserved on an unlimited devic
  $ gmsim replay m.db --policy caching --device a100-40gb:1g.5gb --json > out.json
  $ python3 -c 'import json; r = json.load(open("out.json"))["runs"][0]; print(r["start"], r["layout_unfit"], r["fits_with"], r["metrics"]["ooms"] > 0)'
  cold 7235174400 7218397184 True

Above the layout, replay starts warm, as before; every row says which:

  $ gmsim replay m.db --policy caching,native | awk '$1 == "caching" || $1 == "native" {print $1, $2, $3, $4}'
  caching warm 6.74 GiB
  native cold 6.53 GiB
  $ gmsim replay m.db --policy caching --start cold | awk '$1 == "caching" {print $1, $2, $3, $4}'
  caching cold 6.72 GiB
  $ gmsim replay m.db --policy caching --start empty | awk '$1 == "caching" {print $1, $2, $3, $4}'
  caching cold 6.72 GiB

compare takes --start (warm|cold, or recorded|empty) and compares at one
start, cold by default: the start that shows what a setting changes.
Warm, below the layout, it says so as replay does:

  $ gmsim compare m.db --policies caching --capacity 6.73GiB --no-advice | awk '$1 == "caching"'
  caching  cold        6.72 GiB  97.3%       97.2%     +2.9%      0.2%      2.7%  12.66 MiB          373     0
  $ gmsim compare m.db --policies caching --capacity 6.73GiB --start recorded --no-advice | grep recorded
  'caching': the recorded layout (6.74 GiB) does not fit 6.73 GiB: replayed from an empty allocator
  $ gmsim compare m.db --policies caching --start warm --no-advice | awk '$1 == "caching" {print $1, $2, $3, $4}'
  caching warm 6.74 GiB
  $ gmsim compare m.db --policies caching --param caching.start=recorded,empty --no-advice --csv | cut -d, -f7-9
  policy,label,start
  caching,caching,warm
  caching,caching,cold
  $ gmsim compare m.db --policies caching --start lukewarm 2>&1 | head -1
  gmsim: invalid value for --start: 'lukewarm' (warm or cold; recorded and empty say the same)

A value near one of the choices is suggested, for --start, compare's --by,
fit's --vary and report's --format alike:

  $ gmsim compare m.db --policies caching --start recorderd 2>&1 | head -1
  gmsim: invalid value for --start: 'recorderd' (warm or cold; recorded and empty say the same); did you mean 'recorded'?
  $ gmsim compare m.db --by seqlen 2>&1 | head -1
  gmsim: invalid value for --by: 'seqlen' (trace or seq_len); did you mean 'seq_len'?
  $ gmsim fit --vary seqs 2>&1 | head -1
  gmsim: invalid value for --vary: 'seqs' (batch or seq); did you mean 'seq'?
  $ gmsim report m.db --format mdd 2>&1 | head -1
  gmsim: invalid value for --format: 'mdd' (html or md); did you mean 'md'?

Warm or cold, always said (item 5).  A sweep over allocator settings is
cold unless told otherwise: warm, expandable segments change nothing (the
recorded layout holds every byte the replay needs), while cold they save
what the recommendation says:

  $ gmsim sweep m.db --policies caching --param caching.expandable_segments=false,true -o cold.db -j 1 | grep start
  start of caching: cold, from an empty allocator (the start that shows what a setting changes; --start warm for the recorded layout)
  $ gmsim report cold.db m.db --format md | grep -E '^\| lmmedium'
  | lmmedium\_ctx128\_train\_fp32 |  | 6.53 GiB | caching expandable\_segments=true \(cold\) | 6.67 GiB | +2.1% | 6.72 GiB | 0.8% | not run |
  $ gmsim compare m.db --policies caching | grep recommendation
  recommendation: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True saves 56.00 MiB (0.8%) against the recorded run's settings: 6.67 GiB instead of 6.72 GiB, both replayed from an empty allocator as a new job starts; recorded: 6.74 GiB
  $ gmsim sweep m.db --policies caching --param caching.expandable_segments=false,true --start warm -o warm.db -j 1 | grep start
  start of caching: warm, from each trace's recorded layout where it has one
  $ gmsim report warm.db m.db --format md | grep -E '^\| lmmedium'
  | lmmedium\_ctx128\_train\_fp32 |  | 6.53 GiB | caching \(warm\) | 6.74 GiB | +3.2% | 6.74 GiB | 0.0% | not run |

Each stored run keeps its start (a run stored before starts were kept
reads as its parameters said):

  $ sqlite3 cold.db 'select json_extract(metrics, "$.start"), count(*) from runs group by 1'
  cold|2
  $ sqlite3 warm.db 'select json_extract(metrics, "$.start"), count(*) from runs group by 1'
  warm|2

A warm sweep on a device below the layout starts that run cold, and its
summary says so (the stored run's start too):

  $ gmsim sweep m.db --policies caching --start warm --capacity 6.73GiB -o unfit.db -j 1 | grep -E 'start'
  start of caching: warm, from each trace's recorded layout where it has one
  1 run started cold: the recorded layout did not fit the capacity (a stored run's start says which)
  $ sqlite3 unfit.db 'select json_extract(metrics, "$.start"), count(*) from runs group by 1'
  cold|1

Both starts in one sweep: the saving is measured at the winner's start,
never a cold winner against a warm baseline:

  $ gmsim sweep m.db --policies caching --param caching.start=recorded,empty \
  >   --param caching.expandable_segments=false,true -o both.db -j 1 | grep start
  start of caching: as --param gives it, warm or cold per configuration
  $ gmsim report both.db m.db --format md | grep -E '^\| lmmedium'
  | lmmedium\_ctx128\_train\_fp32 |  | 6.53 GiB | caching expandable\_segments=true \(cold\) | 6.67 GiB | +2.1% | 6.72 GiB | 0.8% | not run |

A pivot by seq_len says each configuration's start too: warm at 8 GiB,
ctx128's layout (6.74 GiB) fits and ctx256's (8.63 GiB) does not, so its
run starts cold; the pivot says "mixed" and a line says where:

  $ gmsim import $D/lmmedium_ctx128_train_fp32.pickle -o s.db --attr seq_len=128 > /dev/null
  $ gmsim import $D/lmmedium_ctx256_train_fp32.pickle -o s.db --attr seq_len=256 > /dev/null
  $ gmsim compare s.db --policies caching,bfc --start warm --capacity 8GiB --by seq_len > p.txt
  $ sed -n '1,6p' p.txt
  peak reserved by seq_len
  
  policy   start       128       256
  load            6.53 GiB  8.48 GiB
  caching  mixed  6.74 GiB  7.99 GiB
  bfc      cold   8.00 GiB  8.00 GiB
  $ tail -1 p.txt
  'caching' started warm at 128, cold at 256 (cold where the recorded layout did not fit the capacity)
