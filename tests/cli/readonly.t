Reading a store writes nothing beside it: a store at rest is the file
alone (the last writer switches it back from WAL to the rollback journal),
and read-only commands open it read-only, so they work in a read-only
directory and on a read-only file, and leave no -wal/-shm files that would
stop a later write (docs/store.md).

  $ gmsim synth --events 100000 -o s.db > /dev/null
  $ gmsim replay s.db --policy caching --save > /dev/null
  $ ls
  s.db
  $ gmsim info s.db > /dev/null
  $ gmsim replay s.db --policy buddy,tlsf > /dev/null
  $ gmsim compare s.db --policies buddy,tlsf > /dev/null
  $ gmsim export s.db -o s.csv
  $ gmsim report s.db -o r.html
  wrote 'r.html': 1 trace, 1 run
  $ ls
  r.html
  s.csv
  s.db

A read-only directory holding a read-only store, read by a user who may
not write there (as root, which ignores permissions, the commands run as
nobody where setpriv is present):

  $ mkdir ro && cp s.db ro/ && chmod 444 ro/s.db && chmod 555 ro
  $ as=; if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then chmod 755 .. . && as="setpriv --reuid=65534 --regid=65534 --clear-groups"; fi
  $ $as gmsim info ro/s.db | head -2 | cut -c1-46
  trace   source  device  capacity  events      
  random  random       -         -  100000  4.20
  $ $as gmsim replay ro/s.db --policy buddy | cut -c1-30
  trace 'random': 100000 events,
  
  policy  start  peak reserved  
  buddy   cold        5.00 GiB  
  $ $as gmsim export ro/s.db -o - | wc -l
  100001
  $ ls ro
  s.db

The same store in a writable directory: still nothing beside it, and a
later write works (no read-only -wal/-shm left in its way):

  $ chmod 755 ro
  $ $as gmsim info ro/s.db > /dev/null
  $ $as gmsim report ro/s.db -o - > /dev/null
  $ ls ro
  s.db
  $ chmod 644 ro/s.db
  $ gmsim import s.csv -o ro/s.db --name later
  imported 'later' into 'ro/s.db': 100000 events (49987 allocs, 49987 frees, 26 marks), load 4.20 GiB
  gmsim: note: 'later' has the same events as 'random' in 'ro/s.db': sweeps and reports take them as one
  $ ls ro
  s.db

A store an older gmsim left in WAL mode (no -wal beside it) is read
without creating one, and its next writer converts it:

  $ sqlite3 ro/s.db 'PRAGMA journal_mode = WAL'
  wal
  $ ls ro
  s.db
  $ chmod 444 ro/s.db && chmod 555 ro
  $ $as gmsim info ro/s.db > /dev/null && echo read
  read
  $ ls ro
  s.db
  $ chmod 755 ro && chmod 644 ro/s.db
  $ gmsim replay ro/s.db --trace later --policy buddy --save | tail -1
  saved the run in 'ro/s.db' (table runs, id 2)
  $ ls ro
  s.db
  $ od -An -tu1 -j18 -N2 ro/s.db
     1   1

A new store in a directory the user may not write is refused with the
reason, not SQLite's "unable to open database file", and so is one in a
directory that does not exist; nothing is created:

  $ chmod 555 ro
  $ $as gmsim synth --events 10 -o ro/new.db
  gmsim: cannot create 'ro/new.db': permission denied
  [1]
  $ $as gmsim sweep s.db --policies buddy -o ro/new.db
  gmsim: cannot create 'ro/new.db': permission denied
  [1]
  $ gmsim import s.csv -o nodir/new.db
  gmsim: cannot create 'nodir/new.db': no such file or directory
  [1]
  $ ls ro
  s.db
  $ chmod 755 ro
