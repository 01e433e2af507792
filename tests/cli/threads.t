`--threads N` runs the policies of a replay, a compare and each sweep
worker on N threads, each policy on one (docs/performance.md, "Policies on
threads").  Whatever N, every figure, timeline and the JSON are the same
(the timing sim_ns_per_event aside, dropped here); a trace of several
chunks, so that the reader runs ahead of the policies:

  $ gmsim synth --events 300000 --seed 5 --live-max 256MiB -o r.db --name rand > /dev/null
  $ P=native,caching,bfc,pool,binning,async,buddy,tlsf
  $ untimed() { sed -E 's/"sim_ns_per_event":[^,}]*//g; s/ns\/event.*//'; }

  $ gmsim replay r.db --policy $P --json --timeline --threads 1 | untimed > one.json
  $ gmsim replay r.db --policy $P --json --timeline --threads 3 | untimed > three.json
  $ gmsim replay r.db --policy $P --json --timeline | untimed > cores.json
  $ cmp one.json three.json && cmp one.json cores.json && echo same
  same
  $ grep -c '"timeline"' one.json
  8

  $ gmsim compare r.db --policies $P --capacity 200MiB --json --threads 1 | untimed > one.json
  $ gmsim compare r.db --policies $P --capacity 200MiB --json --threads 8 | untimed > eight.json
  $ cmp one.json eight.json && echo same
  same

Each sweep worker runs its policies on --threads threads (by default the
CPUs over the workers); the stored runs are the same:

  $ gmsim sweep r.db --policies $P -j 1 --threads 1 -o one.runs.db > /dev/null 2>&1
  $ gmsim sweep r.db --policies $P -j 1 --threads 4 -o four.runs.db > /dev/null 2>&1
  $ gmsim report one.runs.db --format md -o one.md && gmsim report four.runs.db --format md -o four.md
  wrote 'one.md': 1 trace, 8 runs
  wrote 'four.md': 1 trace, 8 runs
  $ diff one.md four.md | grep -v -E 'ns/event|runs.db|^---|^[0-9,]+c[0-9,]+$' ; echo done
  done

N is 1 to 1024:

  $ gmsim replay r.db --policy $P --threads 0 > out 2>&1; echo $?; head -1 out
  2
  gmsim: invalid value for --threads: '0' (1 to 1024)
  $ gmsim compare r.db --threads many > out 2>&1; echo $?; head -1 out
  2
  gmsim: invalid value for --threads: 'many' is not an unsigned integer
