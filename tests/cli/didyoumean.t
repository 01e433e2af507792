Every name a user types that gmsim does not know gets the nearest known
names: within two edits (one for a name of three letters or less; a swap
of neighbours is one edit), or the one name it is the start of.  The
message ends in "; did you mean 'X'?" (base/text.h, docs/cli.md).

  $ gmsim synth --model gpt2 --layers 1 --seq 64,128 --steps 1 -o t.db > /dev/null

Verbs and long options (the options a verb's usage lists):

  $ gmsim replai t.db
  gmsim: unknown verb 'replai'; did you mean 'replay'?
  see 'gmsim help' for the list of verbs
  [2]
  $ gmsim help comapre
  gmsim: unknown verb 'comapre'; did you mean 'compare'?
  see 'gmsim help' for the list of verbs
  [2]
  $ gmsim frobnicate
  gmsim: unknown verb 'frobnicate'
  see 'gmsim help' for the list of verbs
  [2]
  $ gmsim replay t.db --polcy caching 2>&1 | head -1
  gmsim: unknown option '--polcy'; did you mean '--policy'?
  $ gmsim fit --devce a100-80gb 2>&1 | head -1
  gmsim: unknown option '--devce'; did you mean '--device'?
  $ gmsim estimate --resrve 1GiB 2>&1 | head -1
  gmsim: unknown option '--resrve'; did you mean '--reserve'?
  $ gmsim replay t.db --zzzzzz 2>&1 | head -1
  gmsim: unknown option '--zzzzzz'

Model and device presets, policies, parameters and PYTORCH_CUDA_ALLOC_CONF
keys:

  $ gmsim estimate --model llama7b
  gmsim: unknown model 'llama7b'; did you mean 'llama-7b'?
  usage: gmsim estimate --model NAME|--hidden H ... [run options] [--json]
                        [--capacity SIZE|--device NAME] [--reserve SIZE]
  [2]
  $ gmsim estimate --model gpt2 --device rtx4900 2>&1 | head -1
  gmsim: invalid value for --device: 'rtx4900' is neither a size nor a device (see 'gmsim devices'); did you mean 'rtx4090'?
  $ gmsim replay t.db --trace gpt2.seq64 --policy cachng 2>&1 | head -1
  gmsim: unknown policy 'cachng' (known: all, native, caching, bfc, pool, binning, async, buddy, tlsf, offline; see 'gmsim policies'); did you mean 'caching'?
  $ gmsim compare t.db --policies bfx 2>&1 | head -1
  gmsim: unknown policy 'bfx' (known: all, native, caching, bfc, pool, binning, async, buddy, tlsf, offline; see 'gmsim policies'); did you mean 'bfc'?
  $ gmsim fit --model gpt2 --capacity 8GiB --policy cahcing 2>&1 | head -1
  gmsim: unknown policy 'cahcing' (see 'gmsim policies'); did you mean 'caching'?
  $ gmsim replay t.db --trace gpt2.seq64 --policy caching --param cachin.pad=0 2>&1 | head -1
  gmsim: unknown policy 'cachin' in --param 'cachin.pad=0' (see 'gmsim policies'); did you mean 'caching'?
  $ gmsim replay t.db --trace gpt2.seq64 --policy caching --param caching.max_split=128MiB 2>&1 | head -1
  gmsim: unknown parameter 'caching.max_split' (caching takes: max_split_size, max_non_split_rounding, roundup_power2_divisions, garbage_collection_threshold, memory_fraction, expandable_segments, device_memory, settings, conf, start, pad, base_addr_align); did you mean 'max_split_size'?
  $ gmsim replay t.db --trace gpt2.seq64 --policy caching --param caching.conf=expandable_segment:True 2>&1 | head -1
  gmsim: caching: conf 'expandable_segment:True': unknown option 'expandable_segment'; did you mean 'expandable_segments'?

A trace name, and a store with several traces and no --trace (the names
listed):

  $ gmsim replay t.db --trace gpt2.seq12 --policy caching
  gmsim: no trace 'gpt2.seq12' in 't.db'; did you mean 'gpt2.seq128'?
  [1]
  $ gmsim replay t.db --policy caching 2>&1 | head -1
  gmsim: 't.db' holds 2 traces; choose one with --trace: 'gpt2.seq128', 'gpt2.seq64'

A file that is an import format, not a store, says so with the import
command to run (gzip'd data too; the head of a snapshot is enough to know
it by):

  $ printf '\x80\x02}q\x00X\x08\x00\x00\x00segments]q\x01.' > x.pickle
  $ gmsim replay x.pickle --policy caching
  gmsim: 'x.pickle' is a PyTorch memory snapshot (pickle), not a store: import it first with 'gmsim import x.pickle -o x.db'
  [1]
  $ gzip -c x.pickle > x.pickle.gz
  $ gmsim info x.pickle.gz
  gmsim: 'x.pickle.gz' is gzip-compressed data, not a store: import it first with 'gmsim import x.pickle.gz -o x.db'
  [1]
  $ echo hello > h.txt
  $ gmsim info h.txt
  gmsim: cannot open 'h.txt': file is not a database
  [1]
