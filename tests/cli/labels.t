The README's path from a sweep of parameter values to a report: every
row has a baseline (each policy's defaults are always swept), sizes read as
people write them, and long configuration names are cut where they are
shown, keeping what tells them apart.

  $ gmsim synth --model gpt2 --seq 128,256 --steps 1 -o synth.db > /dev/null
  $ gmsim sweep synth.db --policies all --param caching.max_split_size=none,128MiB -j 2
  sweep: 2 traces x (10|11) configurations = (20|22) runs (re)
  start of caching: cold, from an empty allocator (the start that shows what a setting changes; --start warm for the recorded layout)
  0 already done, (20|22) ran, 0 failed; results in 'synth.runs.db' (re)
  ...

(caching's defaults, max_split_size 0, are added where `none` is not read
as the same: "added the default configuration of caching"; either way they
run once.)  A sweep of values none of which is the default:

  $ gmsim sweep synth.db --policies caching,bfc --param caching.max_split_size=128MiB,256MiB \
  >   --param bfc.memory_limit=8GiB -j 2 -o two.db
  sweep: 2 traces x 5 configurations = 10 runs
  start of caching: cold, from an empty allocator (the start that shows what a setting changes; --start warm for the recorded layout)
  0 already done, 10 ran, 0 failed; results in 'two.db'
  added the default configuration of caching, bfc (the baseline of every saving)

  $ gmsim report synth.runs.db synth.db --format md | grep -c 'no run'
  0
  [1]
  $ gmsim report synth.runs.db synth.db --format md | sed -n '/^| gpt2/p' | cut -d'|' -f2,8
   gpt2.seq128 | 2.49 GiB 
   gpt2.seq256 | 3.87 GiB 

The baseline is caching at its defaults, in the sweep's runs:

  $ gmsim compare synth.db --trace '*128' --policies caching | grep '^caching '
  caching  cold        2.49 GiB  94.0%       93.1%     +7.4%      1.0%      6.0%  24.53 MiB          100     0

Sizes in labels: none, or the exact unit (never 18446744073709551615):

  $ gmsim report synth.runs.db synth.db -o report.html
  wrote 'report.html': 2 traces, 20 runs
  $ grep -c 18446744073709551615 report.html
  0
  [1]
  $ grep -o '<td>caching[^<]*</td>' report.html | sort -u
  <td>caching (cold)</td>
  <td>caching max_split_size=128MiB (cold)</td>
  $ gmsim compare synth.db --trace '*128' -p async,tlsf --param async.release_threshold=none,1EiB \
  >   --param tlsf.arena=1536MiB | grep -E '^(async|tlsf) ' | cut -c 1-30
  async release_threshold=none  
  async release_threshold=1EiB  
  tlsf arena=1536MiB            

Long labels: at most 40 characters in text tables, the values that differ
kept, the shared settings (here roundup_power2_divisions) left to one
ellipsis at the end, long keys shortened:

  $ gmsim compare synth.db --trace '*128' --policies caching \
  >   --param caching.max_split_size=none,128MiB --param caching.garbage_collection_threshold=0.5,0.8 \
  >   --param caching.roundup_power2_divisions=4 | sed -n '3,7p' | cut -c 1-42
  policy                                    
  caching garbage_collection_th...=0.5 ...  
  caching garbage_collection_th...=0.8 ...  
  caching max_s...=128MiB garba...=0.5 ...  
  caching max_s...=128MiB garba...=0.8 ...  
A replay table cuts its labels too, and gives each cut one whole below:

  $ gmsim replay synth.db --trace '*128' --policy caching --param caching.max_split_size=128MiB \
  >   --param caching.garbage_collection_threshold=0.5 --param caching.roundup_power2_divisions=4 > r.txt
  $ sed -n 4p r.txt | cut -c 1-42
  caching roundup...=4 garbage_...=0.5 ...  
  $ sed -n 5p r.txt
  'caching roundup...=4 garbage_...=0.5 ...' is caching max_split_size=128MiB roundup_power2_divisions=4 garbage_collection_threshold=0.5

The report cuts the same way in its charts and tables (with the ellipsis
character), the whole label its tooltip; the settings every configuration
of the sweep shares go first:

  $ gmsim sweep synth.db --policies caching --param caching.expandable_segments=true \
  >   --param caching.garbage_collection_threshold=0.5,0.8 --param caching.max_non_split_rounding=64MiB \
  >   -j 2 -o long.db > /dev/null
  $ gmsim report long.db synth.db -o long.html
  wrote 'long.html': 2 traces, 6 runs
  $ grep -o '<td class="win"><span title="[^"]*">[^<]*</span>' long.html | sort -u
  <td class="win"><span title="caching max_non_split_rounding=64MiB garbage_collection_threshold=0.5 expandable_segments=true (cold)">caching garbage_c…=0.5 expandabl…=true …</span>
  $ grep -o '<text[^>]*>caching garbage_c…=0.5 expandabl…=true …<title>[^<]*</title>' long.html | sed 's/<text[^>]*>//' | sort -u
  caching garbage_c…=0.5 expandabl…=true …<title>caching max_non_split_rounding=64MiB garbage_collection_threshold=0.5 expandable_segments=true (cold)</title>
  $ grep -c '18446744073709551615\|max_non_split_rounding=67108864' long.html
  0
  [1]
