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
  gmsim: 'chunk\.db': trace 'random' chunk 2 \(from event 131072\): damaged: checksum [0-9a-f]{8}, [0-9a-f]{8} stored (re)
  [1]
  $ gmsim export chunk.db -o out.csv
  gmsim: 'chunk\.db': trace 'random' chunk 2 \(from event 131072\): damaged: checksum [0-9a-f]{8}, [0-9a-f]{8} stored (re)
  [1]

Every chunk carries a checksum (CRC-32 of its data), checked on every
read: three bytes changed in the middle of a chunk, where the columns are
stored uncompressed and would still decode, to other time stamps:

  $ cp t.db flip.db
  $ sqlite3 flip.db "UPDATE chunks SET data = substr(data, 1, 3000) || x'a5a5a5' || substr(data, 3004) WHERE seq = 1"
  $ sqlite3 flip.db "SELECT length(data) = (SELECT length(data) FROM chunks WHERE seq = 1) FROM chunks WHERE seq = 1"
  1
  $ gmsim export flip.db -o flip.csv
  gmsim: 'flip\.db': trace 'random' chunk 1 \(from event 65536\): damaged: checksum [0-9a-f]{8}, [0-9a-f]{8} stored (re)
  [1]
  $ ls flip.csv
  ls: cannot access 'flip.csv': No such file or directory
  [2]
  $ gmsim replay flip.db --policy caching
  gmsim: 'flip\.db': trace 'random' chunk 1 \(from event 65536\): damaged: checksum [0-9a-f]{8}, [0-9a-f]{8} stored (re)
  [1]

A chunk with no checksum in a store of this version is damaged too:

  $ cp t.db nocrc.db
  $ sqlite3 nocrc.db "UPDATE chunks SET crc = NULL WHERE seq = 0"
  $ gmsim replay nocrc.db --policy buddy
  gmsim: 'nocrc.db': trace 'random' chunk 0 (from event 0): damaged: no checksum stored
  [1]

A store of schema version 3 (before checksums) is read as it is, with a
note; its first writer upgrades it, checksumming every chunk:

  $ cp t.db v3.db
  $ sqlite3 v3.db "DROP INDEX runs_key; ALTER TABLE chunks DROP COLUMN crc; PRAGMA user_version = 3"
  $ gmsim info v3.db > /dev/null
  gmsim: note: 'v3.db' has schema version 3: its chunks carry no checksums, so damage is found by decoding alone; opening it for writing (import, replay --save) upgrades it
  $ gmsim replay v3.db --policy buddy --save 2> /dev/null | tail -1
  saved the run in 'v3.db' (table runs, id 1)
  $ sqlite3 v3.db "PRAGMA user_version; SELECT count(*) FROM chunks WHERE crc IS NULL"
  4
  0
  $ gmsim info v3.db > /dev/null

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
  gmsim: 'v0.db' has schema version 0, this gmsim reads version 4
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

A trace's starting layout lost: the replay names the file and the trace
once (it said "trace 'random': 't.db': trace 'random': ..."):

  $ cp t.db nolayout.db
  $ sqlite3 nolayout.db "DROP TABLE layouts"
  $ gmsim replay nolayout.db --policy caching
  gmsim: 'nolayout.db': trace 'random': the layouts table is missing
  [1]

The original reads as before:

  $ gmsim replay t.db --policy native --json | grep -c '"policy"'
  1
