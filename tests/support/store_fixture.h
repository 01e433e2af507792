/*
 * tests/support/store_fixture.h — the trace store's test fixtures, shared by
 * tests/test_store.c, test_store_tampered.c and test_store_read.c: a seeded
 * random trace with its writer and event-by-event check, plain SQL on a
 * store file and the chunk checksums sealed again after an edit, and the
 * tampering template (a store made once per process and copied for each
 * edit).  Each helper asserts with Criterion: a failed set-up fails the
 * test that called it.
 */
#ifndef GM_TESTS_SUPPORT_STORE_FIXTURE_H
#define GM_TESTS_SUPPORT_STORE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/gmsim.h"

/* A fresh writable store file `name` in the test directory (any file of
 * that name, and its -wal and -shm, removed first). */
gm_store_t *st_open_new(const char *name);

/* A random trace as the caller gives it (ids are caller ordinals, with
 * zero-size ALLOCs) and as the store must return it (zero-size ALLOCs and
 * their FREEs dropped, ids renumbered). */
typedef struct st_trace {
    gm_event_t *given, *want;
    size_t ngiven, nwant;
    uint64_t allocs, frees, marks, segs, dropped, load, live_at_end;
    uint32_t nstreams, ntags, nframes;
} st_trace_t;

void st_trace_free(st_trace_t *t);

/* n events from seed; extras: MARKs, SEG events, frames, devices, flags,
 * addresses and the sizes RMM logs give on FREEs. */
st_trace_t st_random(uint64_t seed, size_t n, int extras);

/* Intern the trace's tables (streams 0x0, 0x10, 0x20; tags t0..; frames). */
void st_intern(gm_writer_t *w, const st_trace_t *t);

/* Write t->given as trace name (gm_writer_begin flags). */
void st_write(gm_store_t *s, const char *name, const st_trace_t *t, unsigned flags);

/* Every field of event a equal to b's (at: its index, for the message). */
void st_assert_same(const gm_event_t *a, const gm_event_t *b, uint64_t at);

/* Read trace name back and compare with t->want and the summary. */
void st_check(gm_store_t *s, const char *name, const st_trace_t *t);

/* Run one SQL statement on the file directly; returns sqlite's result. */
int st_sql(const char *path, const char *sql);

/* Give every chunk of path the checksum of its data as it is now: an edit
 * made by someone who knows the format, so that what the reader checks
 * after the checksum is what the test sees. */
void st_reseal(const char *path);

/* The first column of the first row of sql on the file at path. */
int64_t st_sql_int(const char *path, const char *sql);

/* Add events to a new trace "bad" until one fails; returns its error
 * (*rc its code, *failed_at its index).  The trace is left out. */
gm_error_t st_add_until_error(gm_store_t *s, const gm_event_t *ev, size_t n, int *rc,
                              uint64_t *failed_at);

/* Byte i of the file at path (18: 1 rollback journal, 2 WAL). */
int st_header_byte(const char *path, long i);

/*
 * The tampering template: trace "t" (st_random seed 31, 150000 events,
 * 3 chunks, 3 streams, 4 tags, 5 frames; st_tmpl_t once st_template() ran)
 * and trace "u" (3 events; stream 1 and tag "unused" interned but never
 * referred to).  Written once per test process; its path.
 */
extern st_trace_t st_tmpl_t;
const char *st_template(void);

#define ST_T "(SELECT id FROM traces WHERE name = 't')"
#define ST_U "(SELECT id FROM traces WHERE name = 'u')"

/* A copy of the template as FILE, edited by sql (NULL: none) and sealed
 * again; its path (static). */
const char *st_tampered(const char *file, const char *sql);

/* Where reading a trace stopped. */
enum { ST_AT_STORE_OPEN = 1, ST_AT_LIST, ST_AT_READER_OPEN, ST_AT_NEXT, ST_READ_OK };

/*
 * Open path read-only, list it, read trace `name` to its end and replay it
 * through every policy.  Returns where it stopped; *rc and *err the error
 * (the replay must fail the same way, its message naming the trace).  A
 * read that succeeds is compared with `want` when given.
 */
int st_read_back(const char *path, const char *name, const st_trace_t *want, int *rc,
                 gm_error_t *err);

/* Assert that reading trace `name` of the template edited by sql stops at
 * `stage` with code `code` and the message fmt (printf, with args). */
void st_expect(const char *file, const char *sql, const char *name, int stage, int code,
               const char *fmt, ...) GM_PRINTF(6, 7);

#endif
