The `caching` policy is PyTorch's CUDA caching allocator; its settings come
from parameters, or all at once from a PYTORCH_CUDA_ALLOC_CONF string.
(`row P` prints policy P's figures, less ns/event, without the settings
its label names.)

  $ gmsim synth --events 20000 --seed 3 --live-max 1GiB -o t.db
  wrote 'random' into 't.db': 20000 events (9997 allocs, 9997 frees, 6 marks), load 875.26 MiB
  $ row() { awk -v p="$1" '$1 == p { s = p; for (i = NF - 16; i < NF; i++) s = s " " $i; print s " " }'; }
  $ gmsim replay t.db --policy caching | row caching
  caching 1.27 GiB 879.37 MiB 67.7% 67.4% +48.3% 0.2% 32.4% 2.75 MiB 34 0 0.7 ms 0 
  $ gmsim replay t.db --policy caching --param caching.expandable_segments=true | row caching
  caching 1.09 GiB 875.26 MiB 78.4% 78.4% +27.5% 0.0% 21.6% 5.59 KiB 31 0 0.6 ms 0 

The conf string gives the same run as the parameters it names:

  $ gmsim replay t.db --policy caching --param caching.expandable_segments=true \
  >   --param caching.max_split_size=128MiB | row caching > params
  $ gmsim replay t.db --policy caching \
  >   --param caching.conf=expandable_segments:True,max_split_size_mb:128 | row caching | cmp - params && echo same
  same

A parameter given explicitly wins over the conf string:

  $ gmsim replay t.db --policy caching --param caching.conf=expandable_segments:True \
  >   --param caching.expandable_segments=false | row caching > explicit
  $ gmsim replay t.db --policy caching | row caching | cmp - explicit && echo same
  same

With a small device, OOM recovery gives cached segments back to the device
and retries; below the load, some requests fail:

  $ gmsim replay t.db --policy caching --capacity 1GiB --json | grep -E '"(device_frees|ooms)"'
          "device_frees": 137,
          "ooms": 0,
  $ gmsim replay t.db --policy caching --capacity 800MiB --json | grep -E '"ooms"'
          "ooms": 254,

Bad settings are refused with the option named (exit 2):

  $ bad() { gmsim replay t.db --policy caching --param "$1" > out 2>&1; echo "exit $?"; head -1 out; }
  $ bad caching.conf=max_split_size_mb:10
  exit 2
  gmsim: caching: conf 'max_split_size_mb:10': max_split_size_mb must be >= 20
  $ bad caching.conf=expandable:True
  exit 2
  gmsim: caching: conf 'expandable:True': unknown option 'expandable'; did you mean 'expandable_segments'?
  $ bad 'caching.conf=roundup_power2_divisions:[256:1,'
  exit 2
  gmsim: caching: conf 'roundup_power2_divisions:[256:1,': missing ']'
  $ bad 'caching.roundup_power2_divisions=[256:3]'
  exit 2
  gmsim: caching: roundup_power2_divisions '[256:3]': divisions '3' must be 0 or a power of two up to 2^30
  $ bad caching.max_split_size=4MiB
  exit 2
  gmsim: caching: max_split_size must be 0 (unlimited) or at least 20MiB
