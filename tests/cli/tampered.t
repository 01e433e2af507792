A store is outside data: a damaged or hand-edited .db gives a message that
names the file or the trace and the place, and exit 1; it is never
rewritten.

  $ gmsim synth --events 200000 -o t.db > /dev/null

A chunk's data replaced: `info` reads only the summary, which is intact;
reading the events stops at the damaged chunk:

  $ cp t.db chunk.db
  $ sqlite3 chunk.db "UPDATE chunks SET data = x'00' WHERE seq = 2"
  $ gmsim info chunk.db > /dev/null
  $ gmsim replay chunk.db --policy all
  gmsim: 'chunk.db': trace 'random' chunk 2 (from event 131072): chunk header: bad magic
  [1]
  $ gmsim export chunk.db -o out.csv
  gmsim: 'chunk.db': trace 'random' chunk 2 (from event 131072): chunk header: bad magic
  [1]

A row of an interned table deleted that events refer to:

  $ cp t.db stream.db
  $ sqlite3 stream.db "DELETE FROM streams WHERE idx = 1"
  $ gmsim replay stream.db --policy buddy
  gmsim: 'stream.db': trace 'random' chunk 0 (from event 0): event 39: stream index 1, but the streams table has 1 row
  [1]

A summary that is not a gmsim summary: attributes that are not JSON, a
negative count, counts that do not add up:

  $ cp t.db attrs.db
  $ sqlite3 attrs.db "UPDATE traces SET attrs = '{\"source\": \"random\",'"
  $ gmsim info attrs.db
  gmsim: 'attrs.db': trace 'random': attrs is not a JSON object
  [1]
  $ gmsim replay attrs.db --policy native
  gmsim: 'attrs.db': trace 'random': attrs is not a JSON object
  [1]
  $ cp t.db neg.db
  $ sqlite3 neg.db "UPDATE traces SET frees = -1"
  $ gmsim info neg.db --json
  gmsim: 'neg.db': trace 'random': frees is -1, not a count
  [1]
  $ cp t.db sum.db
  $ sqlite3 sum.db "UPDATE traces SET marks = marks + 1"
  $ gmsim replay sum.db --policy all
  gmsim: 'sum.db': trace 'random': summary of 200000 events is not its 99975 allocs + 99975 frees + 51 marks + 0 segs
  [1]

The schema: its version reset with the tables there, a table dropped:

  $ cp t.db v0.db
  $ sqlite3 v0.db "PRAGMA user_version = 0"
  $ gmsim info v0.db
  gmsim: 'v0.db' has schema version 0, this gmsim reads version 3
  [1]
  $ sqlite3 v0.db "PRAGMA user_version"
  0
  $ cp t.db drop.db
  $ sqlite3 drop.db "DROP TABLE traces"
  $ gmsim info drop.db
  gmsim: 'drop.db' is not a gmsim trace store: no table traces
  [1]
  $ gmsim replay drop.db --policy all
  gmsim: 'drop.db' is not a gmsim trace store: no table traces
  [1]

The original reads as before:

  $ gmsim replay t.db --policy native --json | grep -c '"policy"'
  1
