/*
 * tests/test_store.c — the trace store: round trips of seeded random traces
 * (read back event by event against the writer's renumbering), many traces
 * in a file, replace/delete/list, attributes, every validation error, files
 * that are not stores, transactions, chunking, damaged chunks, and stores
 * tampered with by plain SQL (every part of the schema, one edit at a time),
 * and the one SQLite error map (store/sql.c).
 *
 * Why above 1,500 lines: every section builds on the helpers at the top (the
 * seeded random trace, its writer and event-by-event check, the SQL and CRC
 * resealing of a store file), which are static to this file; a split along
 * the sections (round trips, damaged and tampered stores, read checks) first
 * needs them in a test-only source both halves link, which the build of the
 * unit tests (one source each, tests/CMakeLists.txt) does not provide yet.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/codec.h"
#include "store/sql.h"
#include "util.h"

/* ---- helpers ------------------------------------------------------------- */

static gm_store_t *st_open_new(const char *name)
{
    const char *path = gt_tmpfile(name);
    unlink(path);
    char side[600];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    gm_store_t *s;
    gm_error_t err = {0};
    int rc = gm_store_open(path, GM_STORE_WRITE, &s, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    return s;
}

/* A random trace as the caller gives it (ids are caller ordinals, with
 * zero-size ALLOCs) and as the store must return it (zero-size ALLOCs and
 * their FREEs dropped, ids renumbered). */
typedef struct st_trace {
    gm_event_t *given, *want;
    size_t ngiven, nwant;
    uint64_t allocs, frees, marks, segs, dropped, load, live_at_end;
    uint32_t nstreams, ntags, nframes;
} st_trace_t;

static void st_trace_free(st_trace_t *t)
{
    free(t->given);
    free(t->want);
}

static st_trace_t st_random(uint64_t seed, size_t n, int extras)
{
    st_trace_t t = {0};
    t.given = calloc(n ? n : 1, sizeof *t.given);
    t.want = calloc(n ? n : 1, sizeof *t.want);
    t.nstreams = 3;
    t.ntags = 4;
    t.nframes = 5;
    uint64_t rng = seed, ts = 1700000000000000000ULL, next = 0, stored = 0, req = 0;
    /* live: caller id → stored id (UINT64_MAX for a zero-size one) and size */
    uint64_t *live_id = malloc((n ? n : 1) * sizeof *live_id);
    uint64_t *live_sid = malloc((n ? n : 1) * sizeof *live_sid);
    uint64_t *live_size = malloc((n ? n : 1) * sizeof *live_size);
    size_t nlive = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = gt_rand(&rng);
        gm_event_t e = {0};
        ts += 500 + r % 20000;
        e.ts_ns = ts;
        unsigned pick = (unsigned)(r >> 32) % 100;
        if (extras && pick >= 94) {
            if (pick < 97) {
                e.op = GM_OP_MARK;
                e.tag = (uint32_t)(r >> 8) % t.ntags;
            } else {
                e.op = (uint8_t)(GM_OP_SEG_ALLOC + pick % 4);
                e.size = (r >> 12) % (1ull << 34);
                e.addr = 0x7f0000000000 + (r >> 40) * 4096;
            }
        } else if (nlive == 0 || (pick % 2 == 0 && nlive < 3000)) {
            e.op = GM_OP_ALLOC;
            e.id = next;
            e.size = (r >> 8) % 23 == 0 ? 0 : (r >> 8) % 5 == 0 ? (r >> 16) % (1ull << 40) + 1
                                                                  : 512u << ((r >> 20) % 8);
            e.stream = (r >> 28) % 10 == 0 ? 1 + (uint32_t)(r >> 30) % 2 : 0;
            if (extras) {
                e.frames = (r >> 33) % 4 == 0 ? 1 + (uint32_t)(r >> 35) % t.nframes : 0;
                e.device = (r >> 37) % 7 == 0 ? 1 : 0;
                e.flags = i < 10 ? GM_EVENT_PREEXISTING : 0;
                e.addr = (r >> 39) % 2 ? 0x7f0000000000 + (r >> 41) * 512 : 0;
            }
            live_id[nlive] = next++;
            live_size[nlive] = e.size;
            live_sid[nlive] = e.size ? stored++ : UINT64_MAX;
            nlive++;
            if (e.size == 0)
                t.dropped++;
        } else {
            /* mostly recent, sometimes old */
            size_t recent = nlive < 6 ? nlive : 6;
            size_t j = (r >> 12) % 4 == 0 ? (size_t)((r >> 20) % nlive)
                                           : nlive - 1 - (size_t)((r >> 20) % recent);
            e.op = GM_OP_FREE;
            e.id = live_id[j];
            e.stream = (r >> 28) % 10 == 0 ? 1 : 0;
            e.size = extras && (r >> 44) % 3 == 0 ? live_size[j] : 0; /* as RMM logs give */
            uint64_t sid = live_sid[j], sz = live_size[j];
            live_id[j] = live_id[nlive - 1];
            live_sid[j] = live_sid[nlive - 1];
            live_size[j] = live_size[nlive - 1];
            nlive--;
            t.given[t.ngiven++] = e;
            if (sid == UINT64_MAX)
                continue;
            e.id = sid;
            req -= sz;
            t.frees++;
            t.want[t.nwant++] = e;
            continue;
        }
        t.given[t.ngiven++] = e;
        if (e.op == GM_OP_ALLOC) {
            if (e.size == 0)
                continue;
            e.id = t.allocs++;
            req += e.size;
            if (req > t.load)
                t.load = req;
        } else if (e.op == GM_OP_MARK) {
            t.marks++;
        } else if (e.op != GM_OP_FREE) {
            t.segs++;
        }
        t.want[t.nwant++] = e;
    }
    t.live_at_end = t.allocs - t.frees;
    free(live_id);
    free(live_sid);
    free(live_size);
    return t;
}

/* Intern the trace's tables (streams 0x0, 0x10, 0x20; tags t0..; frames). */
static void st_intern(gm_writer_t *w, const st_trace_t *t)
{
    gm_error_t err;
    uint32_t idx;
    for (uint32_t i = 0; i < t->nstreams; i++) {
        cr_assert_eq(gm_writer_stream(w, 0x10 * i, &idx, &err), 0);
        cr_assert_eq(idx, i);
    }
    char name[64];
    for (uint32_t i = 0; i < t->ntags; i++) {
        snprintf(name, sizeof name, "tag %u", i);
        cr_assert_eq(gm_writer_tag(w, name, &idx, &err), 0);
        cr_assert_eq(idx, i);
    }
    for (uint32_t i = 0; i < t->nframes; i++) {
        snprintf(name, sizeof name, "f%u.py:%u\nmain.py:1", i, i);
        cr_assert_eq(gm_writer_frames(w, name, &idx, &err), 0);
        cr_assert_eq(idx, i + 1);
    }
}

static void st_write(gm_store_t *s, const char *name, const st_trace_t *t, unsigned flags)
{
    gm_writer_t *w;
    gm_error_t err = {0};
    int rc = gm_writer_begin(s, name, flags, &w, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    st_intern(w, t);
    for (size_t i = 0; i < t->ngiven; i++) {
        cr_assert_eq(gm_writer_position(w), i);
        rc = gm_writer_add(w, &t->given[i], &err);
        cr_assert_eq(rc, 0, "%s", err.msg);
    }
    rc = gm_writer_finish(w, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
}

static void st_assert_same(const gm_event_t *a, const gm_event_t *b, uint64_t at)
{
    cr_assert_eq(a->op, b->op, "event %llu: op", (unsigned long long)at);
    cr_assert_eq(a->ts_ns, b->ts_ns, "event %llu: ts", (unsigned long long)at);
    cr_assert_eq(a->id, b->id, "event %llu: id %llu != %llu", (unsigned long long)at,
                 (unsigned long long)a->id, (unsigned long long)b->id);
    cr_assert_eq(a->size, b->size, "event %llu: size", (unsigned long long)at);
    cr_assert_eq(a->addr, b->addr, "event %llu: addr", (unsigned long long)at);
    cr_assert_eq(a->stream, b->stream, "event %llu: stream", (unsigned long long)at);
    cr_assert_eq(a->tag, b->tag, "event %llu: tag", (unsigned long long)at);
    cr_assert_eq(a->frames, b->frames, "event %llu: frames", (unsigned long long)at);
    cr_assert_eq(a->device, b->device, "event %llu: device", (unsigned long long)at);
    cr_assert_eq(a->flags, b->flags, "event %llu: flags", (unsigned long long)at);
}

/* Read trace name back and compare with t->want and the summary. */
static void st_check(gm_store_t *s, const char *name, const st_trace_t *t)
{
    gm_reader_t *r;
    gm_error_t err = {0};
    int rc = gm_reader_open(s, name, &r, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    const gm_trace_info_t *info = gm_reader_info(r);
    cr_assert_str_eq(info->name, name);
    cr_assert_eq(info->events, t->nwant);
    cr_assert_eq(info->allocs, t->allocs);
    cr_assert_eq(info->frees, t->frees);
    cr_assert_eq(info->marks, t->marks);
    cr_assert_eq(info->segs, t->segs);
    cr_assert_eq(info->load, t->load);
    cr_assert_eq(info->live_at_end, t->live_at_end);
    cr_assert_eq(info->chunks, (t->nwant + GM_CHUNK_EVENTS - 1) / GM_CHUNK_EVENTS);
    cr_assert_eq(strlen(info->digest), 32);
    cr_assert_eq(strspn(info->digest, "0123456789abcdef"), 32);
    cr_assert_eq(gm_reader_stream_count(r), t->nstreams);
    cr_assert_eq(gm_reader_tag_count(r), t->ntags);
    const gm_event_t *ev;
    size_t n;
    uint64_t at = 0;
    while ((rc = gm_reader_next(r, &ev, &n, &err)) == 0 && n > 0) {
        cr_assert(n <= GM_CHUNK_EVENTS);
        cr_assert(at + n <= t->nwant);
        for (size_t i = 0; i < n; i++, at++)
            st_assert_same(&ev[i], &t->want[at], at);
    }
    cr_assert_eq(rc, 0, "%s", err.msg);
    cr_assert_eq(at, t->nwant);
    /* the end stays the end */
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0);
    cr_assert_eq(n, 0);
    gm_reader_close(r);
}

/* Run one SQL statement on the file directly; returns sqlite's result. */
static int st_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    sqlite3_free(msg);
    sqlite3_close(db);
    return rc;
}

static int st_header_byte(const char *path, long i);

/* SQL function crc(blob): the chunk checksum, for edits that reseal. */
static void st_sql_crc(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const uint8_t *p = sqlite3_value_blob(argv[0]);
    int n = sqlite3_value_bytes(argv[0]);
    sqlite3_result_int64(ctx, gm__chunk_crc(p ? p : (const uint8_t *)"", n > 0 ? (size_t)n : 0));
}

/* Give every chunk of path the checksum of its data as it is now: an edit
 * made by someone who knows the format, so that what the reader checks
 * after the checksum is what the test sees. */
static void st_reseal(const char *path)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_create_function(db, "crc", 1, SQLITE_UTF8, NULL, st_sql_crc, NULL, NULL),
                 SQLITE_OK);
    /* a store whose chunks table the edit took away has nothing to seal */
    sqlite3_exec(db, "UPDATE chunks SET crc = crc(data)", NULL, NULL, NULL);
    sqlite3_close(db);
}

static int64_t st_sql_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Add events until one fails; returns its error. */
static gm_error_t st_add_until_error(gm_store_t *s, const gm_event_t *ev, size_t n, int *rc,
                                     uint64_t *failed_at)
{
    gm_writer_t *w;
    gm_error_t err = {0};
    cr_assert_eq(gm_writer_begin(s, "bad", 0, &w, &err), 0, "%s", err.msg);
    uint32_t idx;
    cr_assert_eq(gm_writer_tag(w, "step", &idx, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 7, &idx, &err), 0);
    *rc = 0;
    for (size_t i = 0; i < n && *rc == 0; i++) {
        *failed_at = i;
        *rc = gm_writer_add(w, &ev[i], &err);
    }
    if (*rc) {
        /* after an error the writer can only abort */
        gm_error_t e2;
        cr_assert_eq(gm_writer_add(w, &ev[0], &e2), GM_ESTATE);
        cr_assert_eq(gm_writer_finish(w, &e2), GM_ESTATE);
    } else {
        gm_writer_abort(w);
    }
    gm_trace_info_t info;
    gm_error_t e3;
    cr_assert_eq(gm_store_find(s, "bad", &info, &e3), GM_ENOTFOUND);
    return err;
}

/* ---- round trips --------------------------------------------------------- */

Test(store, round_trip_random_traces)
{
    gm_store_t *s = st_open_new("roundtrip.db");
    for (uint64_t seed = 1; seed <= 6; seed++) {
        size_t n = seed == 6 ? 150000 : (size_t)(seed * 7777);
        st_trace_t t = st_random(seed, n, (int)(seed % 2));
        char name[32];
        snprintf(name, sizeof name, "trace-%llu", (unsigned long long)seed);
        st_write(s, name, &t, 0);
        st_check(s, name, &t);
        st_trace_free(&t);
    }
    gm_store_close(s);
}

Test(store, memory_store_works)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    cr_assert_str_eq(gm_store_path(s), ":memory:");
    st_trace_t t = st_random(9, 70000, 1);
    st_write(s, "m", &t, 0);
    st_check(s, "m", &t);
    st_trace_free(&t);
    gm_store_close(s);
}

Test(store, interned_tables)
{
    gm_store_t *s = st_open_new("interned.db");
    gm_writer_t *w;
    gm_error_t err;
    uint32_t a, b, c;
    cr_assert_eq(gm_writer_begin(s, "t", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 0x7f00, &a, &err), 0);
    cr_assert_eq(gm_writer_stream(w, UINT64_MAX, &b, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 0x7f00, &c, &err), 0);
    cr_assert(a == 0 && b == 1 && c == 0);
    cr_assert_eq(gm_writer_stream(w, UINT64_MAX, &c, &err), 0);
    cr_assert_eq(c, 1);
    cr_assert_eq(gm_writer_tag(w, "step", &a, &err), 0);
    cr_assert_eq(gm_writer_tag(w, "fwd \"x\"", &b, &err), 0);
    cr_assert_eq(gm_writer_tag(w, "step", &c, &err), 0);
    cr_assert(a == 0 && b == 1 && c == 0);
    cr_assert_eq(gm_writer_frames(w, "a.py:1", &a, &err), 0);
    cr_assert_eq(gm_writer_frames(w, "b.py:2", &b, &err), 0);
    cr_assert_eq(gm_writer_frames(w, "a.py:1", &c, &err), 0);
    cr_assert(a == 1 && b == 2 && c == 1);
    /* many distinct names (the intern table grows) */
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "n%d", i);
        cr_assert_eq(gm_writer_tag(w, name, &a, &err), 0);
        cr_assert_eq(a, (uint32_t)i + 2);
    }
    gm_event_t e = {.op = GM_OP_MARK, .tag = 1};
    cr_assert_eq(gm_writer_add(w, &e, &err), 0);
    gm_event_t al = {.op = GM_OP_ALLOC, .id = 0, .size = 10, .stream = 1, .frames = 2};
    cr_assert_eq(gm_writer_add(w, &al, &err), 0);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);

    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_reader_stream_count(r), 2);
    cr_assert_eq(gm_reader_stream(r, 0), 0x7f00);
    cr_assert_eq(gm_reader_stream(r, 1), UINT64_MAX);
    cr_assert_eq(gm_reader_stream(r, 2), 0);
    cr_assert_eq(gm_reader_tag_count(r), 1002);
    cr_assert_str_eq(gm_reader_tag(r, 0), "step");
    cr_assert_str_eq(gm_reader_tag(r, 1), "fwd \"x\"");
    cr_assert_str_eq(gm_reader_tag(r, 1001), "n999");
    cr_assert_null(gm_reader_tag(r, 1002));
    cr_assert_eq(gm_reader_find_tag(r, "n5"), 7);
    cr_assert_eq(gm_reader_find_tag(r, "nope"), -1);
    cr_assert_null(gm_reader_frames(r, 0));
    cr_assert_str_eq(gm_reader_frames(r, 1), "a.py:1");
    cr_assert_str_eq(gm_reader_frames(r, 2), "b.py:2");
    cr_assert_null(gm_reader_frames(r, 3));
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0);
    cr_assert_eq(n, 2);
    cr_assert_eq(ev[1].stream, 1);
    cr_assert_eq(ev[1].frames, 2);
    gm_reader_close(r);
    /* plain SQL sees the tables */
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    cr_assert_eq(st_sql_int(path, "SELECT handle FROM streams WHERE idx = 1"), -1);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM frames WHERE idx >= 1"), 2);
    gm_store_close(s);
}

Test(store, empty_trace)
{
    gm_store_t *s = st_open_new("empty.db");
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "nothing", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "nothing", &info, &err), 0);
    cr_assert_eq(info.events, 0);
    cr_assert_eq(info.chunks, 0);
    cr_assert_str_eq(info.attrs, "{\"dropped_zero_size\": 0}");
    gm_trace_info_release(&info);
    gm_reader_t *r;
    const gm_event_t *ev;
    size_t n = 5;
    cr_assert_eq(gm_reader_open(s, "nothing", &r, &err), 0);
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0);
    cr_assert_eq(n, 0);
    gm_reader_close(r);
    gm_store_close(s);
}

/* ---- many traces, list, replace, delete ---------------------------------- */

Test(store, many_traces_listed_in_name_order)
{
    gm_store_t *s = st_open_new("many.db");
    static const char *const names[] = {"zeta", "alpha", "Mid", "beta-2", "beta-10", "é"};
    st_trace_t t[6];
    for (int i = 0; i < 6; i++) {
        t[i] = st_random(100 + (uint64_t)i, 3000 + 500 * (size_t)i, i % 2);
        st_write(s, names[i], &t[i], 0);
    }
    gm_trace_info_t *list;
    size_t n;
    gm_error_t err;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 6);
    static const char *const sorted[] = {"Mid", "alpha", "beta-10", "beta-2", "zeta", "é"};
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_eq(list[i].name, sorted[i]);
        cr_assert(list[i].bytes > 0);
        cr_assert(list[i].attrs != NULL);
    }
    gm_trace_info_free_list(list, n);
    for (int i = 0; i < 6; i++) {
        st_check(s, names[i], &t[i]);
        st_trace_free(&t[i]);
    }
    gm_store_close(s);
}

Test(store, replace_and_exists)
{
    gm_store_t *s = st_open_new("replace.db");
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    st_trace_t a = st_random(1, 80000, 0), b = st_random(2, 5000, 1);
    st_write(s, "x", &a, 0);
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "x", 0, &w, &err), GM_EEXIST);
    char want[1200];
    snprintf(want, sizeof want, "trace 'x' already exists in '%s'", path);
    cr_assert_str_eq(err.msg, want);

    /* a replacement that is aborted leaves the old trace */
    cr_assert_eq(gm_writer_begin(s, "x", GM_WRITE_REPLACE, &w, &err), 0);
    st_intern(w, &b);
    for (size_t i = 0; i < b.ngiven; i++)
        cr_assert_eq(gm_writer_add(w, &b.given[i], &err), 0);
    /* the old trace stays readable while the replacement is written */
    st_check(s, "x", &a);
    gm_writer_abort(w);
    st_check(s, "x", &a);

    st_write(s, "x", &b, GM_WRITE_REPLACE);
    st_check(s, "x", &b);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM traces"), 1);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM chunks WHERE trace_id NOT IN "
                                  "(SELECT id FROM traces)"),
                 0);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM chunks"), 1);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM streams"), 3);
    st_trace_free(&a);
    st_trace_free(&b);
}

Test(store, delete_trace)
{
    gm_store_t *s = st_open_new("delete.db");
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    st_trace_t a = st_random(3, 70000, 1), b = st_random(4, 1000, 1);
    st_write(s, "a", &a, 0);
    st_write(s, "b", &b, 0);
    gm_error_t err;
    cr_assert_eq(gm_store_delete(s, "a", &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "a", &info, &err), GM_ENOTFOUND);
    cr_assert_eq(gm_store_delete(s, "a", &err), GM_ENOTFOUND);
    char want[1200];
    snprintf(want, sizeof want, "no trace 'a' in '%s'", path);
    cr_assert_str_eq(err.msg, want);
    st_check(s, "b", &b);
    /* the name is free again */
    st_write(s, "a", &b, 0);
    st_check(s, "a", &b);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM chunks"), 2);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM tags"), 8);
    st_trace_free(&a);
    st_trace_free(&b);
}

Test(store, missing_trace_name)
{
    gm_store_t *s = st_open_new("missing.db");
    gm_error_t err;
    gm_trace_info_t info;
    char want[1200];
    snprintf(want, sizeof want, "no trace 'ghost' in '%s'", gm_store_path(s));
    cr_assert_eq(gm_store_find(s, "ghost", &info, &err), GM_ENOTFOUND);
    cr_assert_str_eq(err.msg, want);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "ghost", &r, &err), GM_ENOTFOUND);
    cr_assert_str_eq(err.msg, want);
    gm_trace_info_t *list;
    size_t n = 9;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0);
    cr_assert_eq(n, 0);
    gm_trace_info_free_list(list, n);
    gm_store_close(s);
}

/* ---- attributes ---------------------------------------------------------- */

Test(store, attributes_json)
{
    gm_store_t *s = st_open_new("attrs.db");
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "t", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_attr_str(w, "source", "torch", &err), 0);
    cr_assert_eq(gm_writer_attr_int(w, "seq_len", 2048, &err), 0);
    cr_assert_eq(gm_writer_attr_int(w, "neg", INT64_MIN, &err), 0);
    const char *conf = " {\"a\": [1, 2.5e-3, true, null], \"b\": \"\\u00e9\"} ";
    const char *weird = "line\nquote\" back\\ tab\t \x01 é \xff!";
    cr_assert_eq(gm_writer_attr_json(w, "conf", conf, &err), 0);
    cr_assert_eq(gm_writer_attr_str(w, "weird \"key\"", weird, &err), 0);
    cr_assert_eq(gm_writer_attr_str(w, "source", "csv", &err), 0); /* last write wins */
    cr_assert_eq(gm_writer_attr_str(w, "nothing", NULL, &err), 0);
    /* not one JSON value */
    static const char *const bad[] = {"", "{", "[1,]", "01", "1 2", "\"a", "tru", "{\"a\" 1}",
                                      "{1: 2}", "1.", "-", "\"\\x\"", "\"\x01\"", "nulll"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert_eq(gm_writer_attr_json(w, "bad", bad[i], &err), GM_EINVAL, "'%s'", bad[i]);
    cr_assert_eq(gm_writer_attr_json(w, "", "1", &err), GM_EINVAL);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "t", &info, &err), 0);
    cr_assert_str_eq(info.attrs,
                     "{\"source\": \"csv\", \"seq_len\": 2048, \"neg\": -9223372036854775808, "
                     "\"conf\": {\"a\": [1, 2.5e-3, true, null], \"b\": \"\\u00e9\"}, "
                     "\"weird \\\"key\\\"\": "
                     "\"line\\nquote\\\" back\\\\ tab\\t \\u0001 é \\ufffd!\", "
                     "\"nothing\": null, \"dropped_zero_size\": 0}");
    gm_trace_info_release(&info);
    /* SQLite's JSON functions read it */
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    cr_assert_eq(st_sql_int(path, "SELECT json_extract(attrs, '$.seq_len') FROM traces"), 2048);
    cr_assert_eq(st_sql_int(path, "SELECT json_valid(attrs) FROM traces"), 1);
    gm_store_close(s);
}

Test(store, zero_size_allocations_dropped_and_counted)
{
    gm_store_t *s = st_open_new("zero.db");
    gm_event_t ev[] = {
        {.op = GM_OP_ALLOC, .id = 0, .size = 100, .ts_ns = 1},
        {.op = GM_OP_ALLOC, .id = 1, .size = 0, .ts_ns = 2},
        {.op = GM_OP_ALLOC, .id = 2, .size = 50, .ts_ns = 3},
        {.op = GM_OP_FREE, .id = 1, .ts_ns = 4},
        {.op = GM_OP_ALLOC, .id = 3, .size = 0, .ts_ns = 5},
        {.op = GM_OP_FREE, .id = 0, .ts_ns = 6},
        {.op = GM_OP_ALLOC, .id = 4, .size = 7, .ts_ns = 7},
        {.op = GM_OP_FREE, .id = 4, .ts_ns = 8},
    };
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "z", 0, &w, &err), 0);
    /* a nested member of the same name does not confuse info.dropped */
    cr_assert_eq(gm_writer_attr_json(w, "source", "{\"dropped_zero_size\": 5}", &err), 0);
    cr_assert_eq(gm_writer_attr_int(w, "dropped_zero_size", 99, &err), 0); /* overridden */
    for (size_t i = 0; i < sizeof ev / sizeof *ev; i++)
        cr_assert_eq(gm_writer_add(w, &ev[i], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_position(w), 8);
    cr_assert_eq(gm_writer_finish(w, &err), 0);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "z", &info, &err), 0);
    cr_assert_str_eq(info.attrs,
                     "{\"source\": {\"dropped_zero_size\": 5}, \"dropped_zero_size\": 2}");
    cr_assert_eq(info.dropped, 2);
    cr_assert_eq(info.events, 5);
    cr_assert_eq(info.allocs, 3);
    cr_assert_eq(info.frees, 2);
    cr_assert_eq(info.load, 150);
    cr_assert_eq(info.live_at_end, 1);
    gm_trace_info_release(&info);
    gm_reader_t *r;
    const gm_event_t *got;
    size_t n;
    cr_assert_eq(gm_reader_open(s, "z", &r, &err), 0);
    cr_assert_eq(gm_reader_next(r, &got, &n, &err), 0);
    cr_assert_eq(n, 5);
    uint64_t ids[5] = {0, 1, 0, 2, 2}, ts[5] = {1, 3, 6, 7, 8};
    uint8_t ops[5] = {GM_OP_ALLOC, GM_OP_ALLOC, GM_OP_FREE, GM_OP_ALLOC, GM_OP_FREE};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(got[i].op, ops[i], "event %d", i);
        cr_assert_eq(got[i].id, ids[i], "event %d", i);
        cr_assert_eq(got[i].ts_ns, ts[i], "event %d", i);
    }
    gm_reader_close(r);
    gm_store_close(s);
}

/* ---- validation ---------------------------------------------------------- */

Test(store, validation_errors_name_the_event)
{
    gm_store_t *s = st_open_new("validate.db");
    int rc;
    uint64_t at;
    gm_error_t err;
    gm_event_t a[16];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 16; i++) {
        a[i].op = GM_OP_ALLOC;
        a[i].id = (uint64_t)i;
        a[i].size = 64;
    }

    /* free of an id never allocated */
    gm_event_t e1[4] = {a[0], a[1], a[2], {.op = GM_OP_FREE, .id = 99}};
    err = st_add_until_error(s, e1, 4, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 3: free of unknown id 99");

    /* double free, counting a zero-size ALLOC in the ids and the index */
    gm_event_t e2[14];
    for (int i = 0; i < 12; i++)
        e2[i] = a[i];
    e2[3].size = 0;
    e2[12] = (gm_event_t){.op = GM_OP_FREE, .id = 5};
    e2[13] = (gm_event_t){.op = GM_OP_FREE, .id = 5};
    err = st_add_until_error(s, e2, 14, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 13: double free of id 5");

    /* double free of a dropped zero-size allocation */
    gm_event_t e3[3] = {a[0], {.op = GM_OP_FREE, .id = 0}, {.op = GM_OP_FREE, .id = 0}};
    e3[0].size = 0;
    err = st_add_until_error(s, e3, 3, &rc, &at);
    cr_assert_str_eq(err.msg, "event 2: double free of id 0");

    /* size above 2^48 */
    gm_event_t e4[8];
    memcpy(e4, a, sizeof e4);
    e4[7].size = GM_SIZE_LIMIT + 1;
    err = st_add_until_error(s, e4, 8, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 7: size 281474976710657 above the 2^48 limit");
    /* exactly 2^48 is fine */
    e4[7].size = GM_SIZE_LIMIT;
    err = st_add_until_error(s, e4, 8, &rc, &at);
    cr_assert_eq(rc, 0, "%s", err.msg);
    /* and a segment above it is not */
    gm_event_t e5[2] = {a[0], {.op = GM_OP_SEG_ALLOC, .size = GM_SIZE_LIMIT + 2}};
    err = st_add_until_error(s, e5, 2, &rc, &at);
    cr_assert_str_eq(err.msg, "event 1: size 281474976710658 above the 2^48 limit");

    /* live requested bytes past 2^62: 2^14 + 1 live allocations of 2^48 */
    size_t nbig = ((size_t)1 << 14) + 1;
    gm_event_t *big = calloc(nbig, sizeof *big);
    for (size_t i = 0; i < nbig; i++)
        big[i] = (gm_event_t){.op = GM_OP_ALLOC, .id = i, .size = GM_SIZE_LIMIT};
    err = st_add_until_error(s, big, nbig, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 16384: live requested bytes would pass the 2^62 limit");
    free(big);

    /* ALLOC ids out of order */
    gm_event_t e6[3] = {a[0], a[2], a[1]};
    err = st_add_until_error(s, e6, 3, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 1: alloc id 2 out of order, expected 1");

    /* unknown op */
    gm_event_t e7[2] = {a[0], {.op = 9}};
    err = st_add_until_error(s, e7, 2, &rc, &at);
    cr_assert_str_eq(err.msg, "event 1: unknown op 9");

    /* interned indices never interned (one tag and one stream exist) */
    gm_event_t e8[2] = {{.op = GM_OP_MARK, .tag = 0}, {.op = GM_OP_MARK, .tag = 1}};
    err = st_add_until_error(s, e8, 2, &rc, &at);
    cr_assert_str_eq(err.msg, "event 1: tag index 1 was never interned");
    gm_event_t e9[2] = {a[0], a[1]};
    e9[1].stream = 1;
    err = st_add_until_error(s, e9, 2, &rc, &at);
    cr_assert_str_eq(err.msg, "event 1: stream index 1 was never interned");
    gm_event_t e10[1] = {a[0]};
    e10[0].frames = 1;
    err = st_add_until_error(s, e10, 1, &rc, &at);
    cr_assert_str_eq(err.msg, "event 0: frames index 1 was never interned");
    gm_trace_info_t *list;
    size_t n;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0);
    cr_assert_eq(n, 0);
    gm_trace_info_free_list(list, n);
    gm_store_close(s);
}

Test(store, writer_state_rules)
{
    gm_store_t *s = st_open_new("state.db");
    gm_writer_t *w, *w2;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "", 0, &w, &err), GM_EINVAL);
    cr_assert_eq(gm_writer_begin(s, "one", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_begin(s, "two", 0, &w2, &err), GM_ESTATE);
    cr_assert_eq(gm_store_delete(s, "one", &err), GM_ESTATE);
    gm_writer_abort(w);
    gm_writer_abort(NULL);
    cr_assert_eq(gm_writer_begin(s, "two", 0, &w2, &err), 0);
    cr_assert_eq(gm_writer_finish(w2, &err), 0);
    gm_store_close(s);
}

/* ---- files that are not stores ------------------------------------------- */

Test(store, file_that_is_not_a_database)
{
    const char *path = gt_tmpfile("garbage.db");
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 4096; i++)
        fputc((i * 7919) & 0xff, f);
    fclose(f);
    char want[1200];
    snprintf(want, sizeof want, "cannot open '%s': file is not a database", path);
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        gm_store_t *s = (gm_store_t *)1;
        gm_error_t err = {0};
        cr_assert_eq(gm_store_open(path, flags, &s, &err), GM_EFORMAT, "%s", err.msg);
        cr_assert_str_eq(err.msg, want);
        cr_assert_null(s);
    }
}

Test(store, database_of_another_schema_version)
{
    const char *path = gt_tmpfile("v7.db");
    unlink(path);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "PRAGMA user_version"), GM_STORE_SCHEMA_VERSION);
    cr_assert_eq(st_sql(path, "PRAGMA user_version = 7; PRAGMA journal_mode = WAL"), SQLITE_OK);
    char want[1200];
    snprintf(want, sizeof want, "'%s' has schema version 7, this gmsim reads version %d", path,
             GM_STORE_SCHEMA_VERSION);
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        cr_assert_eq(gm_store_open(path, flags, &s, &err), GM_ESCHEMA);
        cr_assert_str_eq(err.msg, want);
    }
    /* never rewritten, not even its journal mode */
    cr_assert_eq(st_sql_int(path, "PRAGMA user_version"), 7);
    cr_assert_eq(st_header_byte(path, 18), 2, "a refused file was taken out of WAL mode");
}

Test(store, sqlite_file_without_our_schema)
{
    const char *path = gt_tmpfile("foreign.db");
    unlink(path);
    cr_assert_eq(st_sql(path, "CREATE TABLE t (x)"), SQLITE_OK);
    char want[1200];
    snprintf(want, sizeof want, "'%s' is not a gmsim trace store", path);
    gm_store_t *s;
    gm_error_t err;
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        cr_assert_eq(gm_store_open(path, flags, &s, &err), GM_EFORMAT);
        cr_assert_str_eq(err.msg, want);
    }
    /* an empty file is a database with nothing in it */
    const char *empty = gt_tmpfile("empty-file.db");
    fclose(fopen(empty, "wb"));
    snprintf(want, sizeof want, "'%s' is not a gmsim trace store", empty);
    cr_assert_eq(gm_store_open(empty, GM_STORE_READONLY, &s, &err), GM_EFORMAT);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(gm_store_open(empty, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
    cr_assert_eq(gm_store_open(empty, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
}

Test(store, missing_file_read_only)
{
    const char *path = gt_tmpfile("does-not-exist.db");
    unlink(path);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), GM_EIO);
    cr_assert(strstr(err.msg, path) != NULL, "%s", err.msg);
    char want[1200];
    snprintf(want, sizeof want, "cannot open '%s': no such file", path);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(access(path, F_OK), -1); /* not created */
    cr_assert_eq(gm_store_open(gt_tmpdir(), GM_STORE_WRITE, &s, &err), GM_EIO);
}

Test(store, reopen_read_only)
{
    const char *path = gt_tmpfile("ro.db");
    unlink(path);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    st_trace_t t = st_random(77, 100000, 1);
    st_write(s, "t", &t, 0);
    gm_store_close(s);
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    st_check(s, "t", &t);
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, "u", 0, &w, &err), GM_EINVAL);
    cr_assert_eq(gm_store_delete(s, "t", &err), GM_EINVAL);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs"), 0);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM timelines"), 0);
    st_trace_free(&t);
}

/* ---- transactions -------------------------------------------------------- */

Test(store, abort_leaves_nothing)
{
    gm_store_t *s = st_open_new("abort.db");
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    st_trace_t t = st_random(5, 140000, 1);
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "gone", 0, &w, &err), 0);
    st_intern(w, &t);
    for (size_t i = 0; i < t.ngiven; i++)
        cr_assert_eq(gm_writer_add(w, &t.given[i], &err), 0);
    /* another connection sees nothing of the unfinished trace */
    gm_store_t *other;
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &other, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(other, "gone", &info, &err), GM_ENOTFOUND);
    gm_store_close(other);
    gm_writer_abort(w);
    cr_assert_eq(gm_store_find(s, "gone", &info, &err), GM_ENOTFOUND);
    gm_store_close(s);
    static const char *const tables[] = {"traces", "chunks", "streams", "tags", "frames"};
    char sql[64];
    for (int i = 0; i < 5; i++) {
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]);
        cr_assert_eq(st_sql_int(path, sql), 0, "%s", tables[i]);
    }
    st_trace_free(&t);
}

Test(store, two_hundred_thousand_events_make_four_chunks)
{
    gm_store_t *s = st_open_new("chunks.db");
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "big", 0, &w, &err), 0);
    for (uint64_t i = 0; i < 200000; i++) {
        gm_event_t e = {.ts_ns = i * 1000};
        if (i % 2 == 0) {
            e.op = GM_OP_ALLOC;
            e.id = i / 2;
            e.size = 4096 + (i % 7) * 512;
        } else {
            e.op = GM_OP_FREE;
            e.id = i / 2;
        }
        cr_assert_eq(gm_writer_add(w, &e, &err), 0);
    }
    cr_assert_eq(gm_writer_finish(w, &err), 0);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "big", &info, &err), 0);
    cr_assert_eq(info.chunks, 4);
    cr_assert_eq(info.events, 200000);
    cr_assert_eq(info.load, 4096 + 6 * 512);
    cr_assert(info.bytes < 200000 * 2, "%llu bytes", (unsigned long long)info.bytes);
    gm_trace_info_release(&info);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "big", &r, &err), 0);
    const gm_event_t *ev;
    size_t n, calls = 0, total = 0;
    while (gm_reader_next(r, &ev, &n, &err) == 0 && n > 0) {
        cr_assert_eq(ev[0].ts_ns, total * 1000);
        calls++;
        total += n;
    }
    cr_assert_eq(calls, 4);
    cr_assert_eq(total, 200000);
    gm_reader_close(r);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "SELECT group_concat(first_event) = '0,65536,131072,196608' "
                                  "FROM (SELECT first_event FROM chunks ORDER BY seq)"),
                 1);
    cr_assert_eq(st_sql_int(path, "SELECT sum(nevents) FROM chunks"), 200000);
    cr_assert_eq(st_sql_int(path, "SELECT first_alloc FROM chunks WHERE seq = 3"), 98304);
}

/* ---- digest -------------------------------------------------------------- */

Test(store, digest_follows_content_not_name)
{
    gm_store_t *s = st_open_new("digest.db");
    st_trace_t a = st_random(8, 20000, 1), b = st_random(9, 20000, 1);
    st_write(s, "a1", &a, 0);
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "a2", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_attr_str(w, "note", "other attrs", &err), 0);
    st_intern(w, &a);
    for (size_t i = 0; i < a.ngiven; i++)
        cr_assert_eq(gm_writer_add(w, &a.given[i], &err), 0);
    cr_assert_eq(gm_writer_finish(w, &err), 0);
    st_write(s, "b", &b, 0);
    gm_trace_info_t i1, i2, i3;
    cr_assert_eq(gm_store_find(s, "a1", &i1, &err), 0);
    cr_assert_eq(gm_store_find(s, "a2", &i2, &err), 0);
    cr_assert_eq(gm_store_find(s, "b", &i3, &err), 0);
    cr_assert_str_eq(i1.digest, i2.digest);
    cr_assert_str_neq(i1.digest, i3.digest);
    gm_trace_info_release(&i1);
    gm_trace_info_release(&i2);
    gm_trace_info_release(&i3);
    st_trace_free(&a);
    st_trace_free(&b);
    gm_store_close(s);
}

/* ---- damaged stores ------------------------------------------------------ */

/* Write a 3-chunk trace into a fresh file, damage it with sql, and return
 * the reader's first error. */
static int st_damaged(const char *file, const char *sql, int at_open, gm_error_t *err)
{
    gm_store_t *s = st_open_new(file);
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    st_trace_t t = st_random(31, 150000, 1);
    st_write(s, "t", &t, 0);
    st_trace_free(&t);
    gm_store_close(s);
    cr_assert_eq(st_sql(path, sql), SQLITE_OK, "%s", sql);
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, err), 0);
    gm_reader_t *r;
    int rc = gm_reader_open(s, "t", &r, err);
    if (at_open) {
        gm_store_close(s);
        return rc;
    }
    cr_assert_eq(rc, 0, "%s", err->msg);
    const gm_event_t *ev;
    size_t n;
    while ((rc = gm_reader_next(r, &ev, &n, err)) == 0 && n > 0)
        ;
    /* the error repeats */
    gm_error_t again;
    if (rc)
        cr_assert_eq(gm_reader_next(r, &ev, &n, &again), rc);
    gm_reader_close(r);
    gm_store_close(s);
    return rc;
}

Test(store, damaged_chunks_are_reported)
{
    gm_error_t err;
    int rc = st_damaged("dmg1.db",
                        "UPDATE chunks SET data = substr(data, 1, length(data) - 3) WHERE seq = 1",
                        0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "dmg1.db': trace 't' chunk 1 (from event 65536): ") != NULL, "%s",
              err.msg);

    rc = st_damaged("dmg2.db", "UPDATE chunks SET first_event = 5 WHERE seq = 2", 0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "trace 't' chunk 2: starts at event 5") != NULL, "%s", err.msg);

    rc = st_damaged("dmg3.db", "UPDATE chunks SET seq = 7 WHERE seq = 1", 0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "dmg3.db': trace 't' chunk 1: missing") != NULL, "%s", err.msg);

    rc = st_damaged("dmg4.db", "DELETE FROM chunks WHERE seq = 2", 1, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "dmg4.db': trace 't': 2 chunks stored, 3 expected") != NULL, "%s",
              err.msg);

    rc = st_damaged("dmg5.db", "UPDATE chunks SET nevents = nevents + 1 WHERE seq = 0", 0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "trace 't' chunk 0: ") != NULL, "%s", err.msg);

    /* a summary that adds up but is not what the chunks hold: found at the end */
    rc = st_damaged("dmg6.db",
                    "UPDATE traces SET events = events + 1, allocs = allocs + 1, "
                    "live_at_end = live_at_end + 1",
                    0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "in the summary") != NULL, "%s", err.msg);

    /* a flipped byte in zlib data or in a stored column: corrupt, never a crash */
    for (int pos = 20; pos < 2000; pos += 97) {
        char sql[256], file[32];
        snprintf(sql, sizeof sql,
                 "UPDATE chunks SET data = substr(data, 1, %d) || "
                 "CAST(char((unicode(substr(data, %d, 1)) + 1) %% 128) AS BLOB) || "
                 "substr(data, %d) WHERE seq = 0",
                 pos - 1, pos, pos + 1);
        snprintf(file, sizeof file, "flip%d.db", pos);
        rc = st_damaged(file, sql, 0, &err);
        cr_assert(rc == 0 || rc == GM_ECORRUPT, "rc %d: %s", rc, err.msg);
        if (rc)
            cr_assert(strstr(err.msg, "db': trace 't' chunk 0") != NULL, "%s", err.msg);
    }
}

/* ---- tampered stores ----------------------------------------------------- */

/*
 * A store handed to gmsim is outside data: each test below makes a valid
 * store with the API, edits it with plain SQL the way a damaged or
 * hand-edited file could be, and asserts what reading it gives: an error
 * naming the file or trace and the place (the same from the reader and from
 * a replay), or, where the edit does not matter to reading, a correct read.
 *
 * The template holds trace "t" (st_random seed 31, 150000 events, 3 chunks,
 * 3 streams, 4 tags, 5 frames) and trace "u" (3 events; stream 1 and tag
 * "unused" interned but never referred to).  It is written once per test
 * process and copied for each edit.
 */

static st_trace_t st_tmpl_t;
static char st_tmpl_path[600];

#define ST_T "(SELECT id FROM traces WHERE name = 't')"
#define ST_U "(SELECT id FROM traces WHERE name = 'u')"

static const char *st_template(void)
{
    if (st_tmpl_path[0])
        return st_tmpl_path;
    gm_store_t *s = st_open_new("tamper-template.db");
    snprintf(st_tmpl_path, sizeof st_tmpl_path, "%s", gm_store_path(s));
    st_tmpl_t = st_random(31, 150000, 1);
    st_write(s, "t", &st_tmpl_t, 0);
    gm_writer_t *w;
    gm_error_t err;
    uint32_t used, unused, s0, s1;
    cr_assert_eq(gm_writer_begin(s, "u", 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_tag(w, "used", &used, &err), 0);
    cr_assert_eq(gm_writer_tag(w, "unused", &unused, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 0, &s0, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 0x99, &s1, &err), 0);
    gm_event_t ev[3] = {{.op = GM_OP_ALLOC, .id = 0, .size = 4096, .ts_ns = 10},
                        {.op = GM_OP_MARK, .tag = used, .ts_ns = 20},
                        {.op = GM_OP_FREE, .id = 0, .ts_ns = 30}};
    for (int i = 0; i < 3; i++)
        cr_assert_eq(gm_writer_add(w, &ev[i], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_store_close(s); /* checkpoints: the file alone is the store */
    return st_tmpl_path;
}

/* A copy of the template as FILE, edited by sql; its path (static). */
static const char *st_tampered(const char *file, const char *sql)
{
    const char *tmpl = st_template();
    static char path[600];
    snprintf(path, sizeof path, "%s", gt_tmpfile(file));
    size_t len;
    char *bytes = gt_read_file(tmpl, &len);
    cr_assert_not_null(bytes);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    free(bytes);
    if (sql) {
        cr_assert_eq(st_sql(path, sql), SQLITE_OK, "%s", sql);
        st_reseal(path);
    }
    return path;
}

/* Where reading a trace stopped. */
enum { ST_AT_STORE_OPEN = 1, ST_AT_LIST, ST_AT_READER_OPEN, ST_AT_NEXT, ST_READ_OK };

/*
 * Open path read-only, list it, read trace `name` to its end and replay it
 * through every policy.  Returns where it stopped; *rc and *err the error
 * (the replay must fail the same way, its message naming the trace).  A
 * read that succeeds is compared with `want` when given.
 */
static int st_read_back(const char *path, const char *name, const st_trace_t *want, int *rc,
                        gm_error_t *err)
{
    gm_store_t *s;
    *rc = gm_store_open(path, GM_STORE_READONLY, &s, err);
    if (*rc)
        return ST_AT_STORE_OPEN;
    gm_trace_info_t *list;
    size_t n;
    *rc = gm_store_list(s, &list, &n, err);
    if (*rc) {
        gm_store_close(s);
        return ST_AT_LIST;
    }
    gm_trace_info_free_list(list, n);
    int stage = ST_AT_READER_OPEN;
    gm_reader_t *r;
    *rc = gm_reader_open(s, name, &r, err);
    if (*rc == 0) {
        stage = ST_AT_NEXT;
        const gm_event_t *ev;
        uint64_t at = 0;
        while ((*rc = gm_reader_next(r, &ev, &n, err)) == 0 && n > 0) {
            for (size_t i = 0; want && i < n; i++, at++) {
                cr_assert(at < want->nwant);
                st_assert_same(&ev[i], &want->want[at], at);
            }
        }
        if (*rc == 0) {
            stage = ST_READ_OK;
            cr_assert(want == NULL || at == want->nwant);
        }
        gm_reader_close(r);
    }
    gm_replay_t *rp;
    gm_error_t rerr = {0};
    cr_assert_eq(gm_replay_create(NULL, &rp, &rerr), 0);
    for (size_t i = 0; i < gm_policy_count(); i++) {
        gm_params_t p;
        cr_assert_eq(gm_params_init(&p, gm_policy_at(i), &rerr), 0);
        cr_assert_eq(gm_replay_add(rp, &p, &rerr), 0);
        gm_params_release(&p);
    }
    int rrc = gm_replay_trace(rp, s, name, &rerr);
    cr_assert_eq(rrc, *rc, "replay %d (%s), read %d (%s)", rrc, rerr.msg, *rc, err->msg);
    if (*rc)
        cr_assert_str_eq(rerr.msg, err->msg);
    gm_replay_destroy(rp);
    gm_store_close(s);
    return stage;
}

/* Assert that reading trace `name` of the template edited by sql stops at
 * `stage` with code `code` and the message fmt (printf, with args). */
static void st_expect(const char *file, const char *sql, const char *name, int stage, int code,
                      const char *fmt, ...) GM_PRINTF(6, 7);
static void st_expect(const char *file, const char *sql, const char *name, int stage, int code,
                      const char *fmt, ...)
{
    const char *path = st_tampered(file, sql);
    char want[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want, sizeof want, fmt, ap);
    va_end(ap);
    if (strncmp(want, "trace '", 7) == 0) { /* the reader names the file first */
        char named[GM_ERROR_MSG_MAX + 64];
        snprintf(named, sizeof named, "'%s': %s", path, want);
        snprintf(want, sizeof want, "%.*s", (int)sizeof want - 1, named);
    }
    int rc;
    gm_error_t err = {0};
    int got = st_read_back(path, name, NULL, &rc, &err);
    cr_assert_eq(got, stage, "%s: stopped at %d, not %d: %s", sql, got, stage, err.msg);
    cr_assert_eq(rc, code, "%s: %d, not %d: %s", sql, rc, code, err.msg);
    cr_assert_eq(err.code, code);
    cr_assert_str_eq(err.msg, want, "%s:\n got: %s\nwant: %s", sql, err.msg, want);
}

/* Assert that the edit is harmless: trace t reads back as written. */
static void st_expect_harmless(const char *file, const char *sql)
{
    const char *path = st_tampered(file, sql);
    int rc;
    gm_error_t err = {0};
    cr_assert_eq(st_read_back(path, "t", &st_tmpl_t, &rc, &err), ST_READ_OK, "%s: %s", sql,
                 err.msg);
}

/* A number from the template (after an edit, from the copy at path). */
static long long st_tmpl_int(const char *sql)
{
    return (long long)st_sql_int(st_template(), sql);
}

/* Index in trace t of the first event whose field (0 stream, 1 tag,
 * 2 frames) is v. */
static uint64_t st_first_with(int field, uint32_t v)
{
    st_template();
    for (uint64_t i = 0; i < st_tmpl_t.nwant; i++) {
        const gm_event_t *e = &st_tmpl_t.want[i];
        if ((field == 0 ? e->stream : field == 1 ? e->tag : e->frames) == v)
            return i;
    }
    cr_assert_fail("no event with value %u in field %d", v, field);
    return 0;
}

Test(store, tampered_chunk_rows)
{
    st_template();
    long long a1 = st_tmpl_int("SELECT first_alloc FROM chunks WHERE seq = 1 AND trace_id = " ST_T);
    long long n1 = st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 1 AND trace_id = " ST_T);
    long long n2 = st_tmpl_int("SELECT nevents FROM chunks WHERE seq = 2 AND trace_id = " ST_T);

    /* a chunk row deleted: a gap in seq, the count no longer the summary's */
    st_expect("gap.db", "DELETE FROM chunks WHERE seq = 1 AND trace_id = " ST_T, "t",
              ST_AT_READER_OPEN, GM_ECORRUPT, "trace 't': 2 chunks stored, 3 expected");
    /* ... and with the summary's chunks edited to match */
    st_expect("gap2.db",
              "DELETE FROM chunks WHERE seq = 1 AND trace_id = " ST_T ";"
              "UPDATE traces SET chunks = 2 WHERE name = 't'",
              "t", ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of 2 chunks for %zu events, 3 expected",
              gt_tmpfile("gap2.db"), st_tmpl_t.nwant);
    /* every chunk of a trace gone */
    st_expect("nochunks.db", "DELETE FROM chunks WHERE trace_id = " ST_T, "t", ST_AT_READER_OPEN,
              GM_ECORRUPT, "trace 't': 0 chunks stored, 3 expected");
    /* chunks renumbered from 3 */
    st_expect("seq1.db", "UPDATE chunks SET seq = seq + 3 WHERE trace_id = " ST_T, "t", ST_AT_NEXT,
              GM_ECORRUPT, "trace 't' chunk 0: missing");

    /* wrong first_event, first_alloc, nevents, nallocs */
    st_expect("fe.db", "UPDATE chunks SET first_event = 65535 WHERE seq = 1", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 1: starts at event 65535 and alloc %lld, expected 65536 and %lld",
              a1, a1);
    st_expect("fa.db", "UPDATE chunks SET first_alloc = first_alloc + 1 WHERE seq = 1", "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 1: starts at event 65536 and alloc %lld, expected 65536 and %lld",
              a1 + 1, a1);
    st_expect("fa-neg.db", "UPDATE chunks SET first_alloc = -1 WHERE seq = 0", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 0: starts at event 0 and alloc -1, expected 0 and 0");
    st_expect("ne.db", "UPDATE chunks SET nevents = 65537 WHERE seq = 1", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 1: 65536 events and %lld allocs decoded, 65537 and %lld recorded",
              n1, n1);
    st_expect("ne-neg.db", "UPDATE chunks SET nevents = -5 WHERE seq = 0", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 0: 65536 events and %lld allocs decoded, -5 and %lld recorded",
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 0 AND trace_id = " ST_T),
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 0 AND trace_id = " ST_T));
    st_expect("ne0.db", "UPDATE chunks SET nevents = 0 WHERE seq = 2", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 2: %lld events and %lld allocs decoded, 0 and %lld recorded", n2,
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 2 AND trace_id = " ST_T),
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 2 AND trace_id = " ST_T));
    st_expect("na.db", "UPDATE chunks SET nallocs = nallocs - 1 WHERE seq = 1", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 1: 65536 events and %lld allocs decoded, 65536 and %lld recorded",
              n1, n1 - 1);
    /* the next chunk starts where the wrong count said this one ended */
    st_expect("ne-both.db",
              "UPDATE chunks SET nevents = nevents + 1 WHERE seq = 1;"
              "UPDATE chunks SET first_event = first_event + 1 WHERE seq = 2",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 1: 65536 events and %lld allocs decoded, 65537 and %lld recorded",
              n1, n1);
    /* a count stored as text that reads as a number is a number */
    st_expect_harmless("ne-text.db",
                       "UPDATE chunks SET nevents = CAST(nevents AS TEXT) WHERE seq = 2");
}

Test(store, tampered_chunk_data)
{
    /* garbage, empty, text, truncated */
    st_expect("garbage.db", "UPDATE chunks SET data = x'00112233445566778899' WHERE seq = 1",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 1 (from event 65536): chunk header: bad magic");
    st_expect("empty.db", "UPDATE chunks SET data = x'' WHERE seq = 0", "t", ST_AT_NEXT,
              GM_ECORRUPT, "trace 't' chunk 0 (from event 0): chunk header: bad magic");
    st_expect("text.db", "UPDATE chunks SET data = 'GC' WHERE seq = 0", "t", ST_AT_NEXT,
              GM_ECORRUPT, "trace 't' chunk 0 (from event 0): chunk header: bad magic");
    st_expect("v2.db", "UPDATE chunks SET data = x'474302' || substr(data, 4) WHERE seq = 2", "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 2 (from event 131072): chunk header: unknown format version 2");
    st_expect("head.db", "UPDATE chunks SET data = substr(data, 1, 3) WHERE seq = 1", "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 1 (from event 65536): chunk header: truncated");
    st_expect("half.db", "UPDATE chunks SET data = substr(data, 1, length(data) / 2) WHERE seq = 2",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 2 (from event 131072): chunk header: column 1 overruns the chunk");
    st_expect("longer.db", "UPDATE chunks SET data = data || x'00' WHERE seq = 0", "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 0 (from event 0): chunk header: 1 bytes after the columns");

    /* valid chunks in the wrong place: swapped, or another trace's */
    const char *swap = "UPDATE chunks SET data = (SELECT data FROM chunks c WHERE c.trace_id = "
                       "chunks.trace_id AND c.seq = 1 - chunks.seq) WHERE seq IN (0, 1) AND "
                       "trace_id = " ST_T;
    const char *path = st_tampered("swap.db", swap);
    int rc;
    gm_error_t err;
    cr_assert_eq(st_read_back(path, "t", NULL, &rc, &err), ST_AT_NEXT);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "swap.db': trace 't' chunk 0") != NULL, "%s", err.msg);
    st_expect("other.db",
              "UPDATE chunks SET data = (SELECT data FROM chunks WHERE trace_id = " ST_U
              ") WHERE seq = 2 AND trace_id = " ST_T,
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 2: 3 events and 1 allocs decoded, %lld and %lld recorded",
              st_tmpl_int("SELECT nevents FROM chunks WHERE seq = 2 AND trace_id = " ST_T),
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 2 AND trace_id = " ST_T));
    /* the other trace is untouched by any of it */
    cr_assert_eq(st_read_back(path, "u", NULL, &rc, &err), ST_READ_OK, "%s", err.msg);
}

/* Replace the data of trace u's one chunk (3 events, 1 ALLOC) with the
 * encoding of ev, in a copy of the template; its path. */
static const char *st_tampered_u_chunk(const char *file, const gm_event_t *ev, size_t n)
{
    const char *path = st_tampered(file, NULL);
    gm__codec_t c;
    gm__codec_init(&c, -1);
    const uint8_t *blob;
    size_t len;
    gm_error_t err;
    cr_assert_eq(gm__chunk_encode(&c, ev, n, 0, &blob, &len, NULL, &err), 0, "%s", err.msg);
    sqlite3 *db;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(db, "UPDATE chunks SET data = ?1 WHERE trace_id = " ST_U, -1,
                                    &st, NULL),
                 SQLITE_OK);
    sqlite3_bind_blob(st, 1, blob, (int)len, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    gm__codec_release(&c);
    st_reseal(path);
    return path;
}

Test(store, tampered_events_the_codec_accepts)
{
    /* A well-formed chunk with the counts its row records but events the
     * writer refuses: a second FREE of one id.  The reader does not keep a
     * live set (it would cost every read), so it hands them out; a replay
     * refuses them with the trace and event named. */
    gm_event_t ev[3] = {{.op = GM_OP_ALLOC, .id = 0, .size = 64},
                        {.op = GM_OP_FREE, .id = 0},
                        {.op = GM_OP_FREE, .id = 0}};
    const char *p = st_tampered_u_chunk("double-free.db", ev, 3);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_reader_t *r;
    const gm_event_t *got;
    size_t n;
    cr_assert_eq(gm_reader_open(s, "u", &r, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_reader_next(r, &got, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 3);
    cr_assert(got[1].op == GM_OP_FREE && got[2].op == GM_OP_FREE && got[2].id == 0);
    gm_reader_close(r);
    gm_replay_t *rp;
    cr_assert_eq(gm_replay_create(NULL, &rp, &err), 0);
    gm_params_t params;
    cr_assert_eq(gm_params_init(&params, gm_policy_at(0), &err), 0);
    cr_assert_eq(gm_replay_add(rp, &params, &err), 0);
    gm_params_release(&params);
    cr_assert_eq(gm_replay_trace(rp, s, "u", &err), GM_EFORMAT);
    cr_assert_str_eq(err.msg, "trace 'u': event 2: free of id 0 that is not live");
    gm_replay_destroy(rp);
    gm_store_close(s);

    /* a MARK whose tag the tags table lacks, in a chunk that is otherwise
     * right: refused by the reader */
    gm_event_t ev2[3] = {{.op = GM_OP_ALLOC, .id = 0, .size = 64},
                         {.op = GM_OP_MARK, .tag = 7},
                         {.op = GM_OP_FREE, .id = 0}};
    p = st_tampered_u_chunk("mark7.db", ev2, 3);
    int rc;
    cr_assert_eq(st_read_back(p, "u", NULL, &rc, &err), ST_AT_NEXT);
    cr_assert(strstr(err.msg, "mark7.db': trace 'u' chunk 0 (from event 0): event 1: tag index 7, "
                              "but the tags table has 2 rows") != NULL,
              "%s", err.msg);
}

Test(store, tampered_summary)
{
    const char *p;
    long long allocs = st_tmpl_int("SELECT allocs FROM traces WHERE name = 't'");
    long long frees = st_tmpl_int("SELECT frees FROM traces WHERE name = 't'");
    long long marks = st_tmpl_int("SELECT marks FROM traces WHERE name = 't'");
    long long segs = st_tmpl_int("SELECT segs FROM traces WHERE name = 't'");

    /* counts that do not add up: refused at open */
    p = gt_tmpfile("ev1.db");
    st_expect("ev1.db", "UPDATE traces SET events = events + 1 WHERE name = 't'", "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of %zu events is not its %lld allocs + %lld frees + "
              "%lld marks + %lld segs",
              p, st_tmpl_t.nwant + 1, allocs, frees, marks, segs);
    p = gt_tmpfile("live.db");
    st_expect("live.db", "UPDATE traces SET live_at_end = 0 WHERE name = 't'", "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of 0 allocations live at the end is not its %lld allocs "
              "- %lld frees",
              p, allocs, frees);
    /* counts that add up but are not the chunks': found at the end */
    st_expect("shift.db",
              "UPDATE traces SET allocs = allocs - 1, frees = frees + 1, "
              "live_at_end = live_at_end - 2 WHERE name = 't'",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't': %zu events and %lld allocs in the chunks, %zu and %lld in the summary",
              st_tmpl_t.nwant, allocs, st_tmpl_t.nwant, allocs - 1);
    /* negative, huge, not numbers: refused wherever the summary is read */
    p = gt_tmpfile("neg.db");
    st_expect("neg.db", "UPDATE traces SET events = -1 WHERE name = 't'", "t", ST_AT_LIST,
              GM_ECORRUPT, "'%s': trace 't': events is -1, not a count", p);
    p = gt_tmpfile("negc.db");
    st_expect("negc.db", "UPDATE traces SET chunks = -3 WHERE name = 't'", "t", ST_AT_LIST,
              GM_ECORRUPT, "'%s': trace 't': chunks is -3, not a count", p);
    p = gt_tmpfile("text-count.db");
    st_expect("text-count.db", "UPDATE traces SET load = 'lots' WHERE name = 't'", "t",
              ST_AT_LIST, GM_ECORRUPT, "'%s': trace 't': load is text, not a count", p);
    p = gt_tmpfile("real.db");
    st_expect("real.db", "UPDATE traces SET bytes = 1.5 WHERE name = 't'", "t", ST_AT_LIST,
              GM_ECORRUPT, "'%s': trace 't': bytes is a real, not a count", p);
    p = gt_tmpfile("huge.db");
    st_expect("huge.db", "UPDATE traces SET chunks = 9223372036854775807 WHERE name = 't'", "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of 9223372036854775807 chunks for %zu events, 3 expected",
              p, st_tmpl_t.nwant);
    p = gt_tmpfile("huge2.db");
    st_expect("huge2.db",
              "UPDATE traces SET events = 9223372036854775807, allocs = 9223372036854775807 "
              "WHERE name = 't'",
              "t", ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of 9223372036854775807 events is not its "
              "9223372036854775807 allocs + %lld frees + %lld marks + %lld segs",
              p, frees, marks, segs);
    /* gm_store_find (and so the reader) refuses it too; other traces read */
    p = st_tampered("neg2.db", "UPDATE traces SET frees = -2 WHERE name = 't'");
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "t", &info, &err), GM_ECORRUPT);
    char want[1200];
    snprintf(want, sizeof want, "'%s': trace 't': frees is -2, not a count", p);
    cr_assert_str_eq(err.msg, want);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), GM_ECORRUPT);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(gm_store_find(s, "u", &info, &err), 0, "%s", err.msg);
    gm_trace_info_release(&info);
    gm_store_close(s);

    /* what reading does not depend on: the digest, the time, LOAD, bytes */
    st_expect_harmless("digest.db", "UPDATE traces SET digest = 'not a digest', created = 'never'");
    st_expect_harmless("load.db", "UPDATE traces SET load = 1, bytes = 2 WHERE name = 't'");
    st_expect_harmless("numtext.db", "UPDATE traces SET events = CAST(events AS TEXT) WHERE "
                                     "name = 't'");
    /* the summary row gone: the trace is gone, its orphan rows harmless */
    p = st_tampered("norow.db", "DELETE FROM traces WHERE name = 't'");
    int rc;
    cr_assert_eq(st_read_back(p, "t", NULL, &rc, &err), ST_AT_READER_OPEN);
    cr_assert_eq(rc, GM_ENOTFOUND);
    snprintf(want, sizeof want, "no trace 't' in '%s'", p);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(st_read_back(p, "u", NULL, &rc, &err), ST_READ_OK, "%s", err.msg);
    /* a trace written next takes an id none of them has, even where the
     * trace deleted had the largest */
    p = st_tampered("norow-u.db", "DELETE FROM traces WHERE name = 'u'");
    cr_assert_eq(gm_store_open(p, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    st_write(s, "t2", &st_tmpl_t, 0);
    st_check(s, "t2", &st_tmpl_t);
    gm_store_close(s);
}

Test(store, tampered_attrs)
{
    static const char *const bad[] = {"'{\"a\": '", "'[1, 2]'", "''", "'{} {}'", "'null'",
                                      "'{\"a\": 01}'", "x'7b2261223a2022ff227d'"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char sql[256], file[32];
        snprintf(sql, sizeof sql, "UPDATE traces SET attrs = %s WHERE name = 't'", bad[i]);
        snprintf(file, sizeof file, "attrs%zu.db", i);
        st_expect(file, sql, "t", ST_AT_LIST, GM_ECORRUPT,
                  "'%s': trace 't': attrs is not a JSON object", gt_tmpfile(file));
    }
    /* any JSON object will do, with or without dropped_zero_size */
    st_expect_harmless("attrs-ok.db", "UPDATE traces SET attrs = ' {\"x\": [1, {}]} '");
    st_expect_harmless("attrs-min.db", "UPDATE traces SET attrs = '{}'");
}

Test(store, tampered_interned_tables)
{
    st_template();
    /* a row missing in the middle of a table, or out of place */
    st_expect("st-mid.db", "DELETE FROM streams WHERE idx = 1 AND trace_id = " ST_T, "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "trace 't': table streams: index 2 where 1 was expected (a row is missing or out "
              "of place)");
    st_expect("tag-first.db", "DELETE FROM tags WHERE idx = 0 AND trace_id = " ST_T, "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "trace 't': table tags: index 1 where 0 was expected (a row is missing or out of "
              "place)");
    st_expect("fr-first.db", "DELETE FROM frames WHERE idx = 1 AND trace_id = " ST_T, "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "trace 't': table frames: index 2 where 1 was expected (a row is missing or out of "
              "place)");
    st_expect("tag-text.db", "UPDATE tags SET idx = 'two' WHERE idx = 2 AND trace_id = " ST_T,
              "t", ST_AT_READER_OPEN, GM_ECORRUPT,
              "trace 't': table tags: index 3 where 2 was expected (a row is missing or out of "
              "place)");

    /* the last row gone: the events that refer to it are found */
    uint64_t at = st_first_with(0, 2);
    st_expect("st-last.db", "DELETE FROM streams WHERE idx = 2 AND trace_id = " ST_T, "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk %llu (from event %llu): event %llu: stream index 2, but the "
              "streams table has 2 rows",
              (unsigned long long)(at / GM_CHUNK_EVENTS),
              (unsigned long long)(at / GM_CHUNK_EVENTS * GM_CHUNK_EVENTS),
              (unsigned long long)(at % GM_CHUNK_EVENTS));
    uint64_t at1 = st_first_with(0, 1);
    at = at < at1 ? at : at1;
    st_expect("st-all.db", "DELETE FROM streams WHERE trace_id = " ST_T, "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk %llu (from event %llu): event %llu: stream index %u, but the "
              "streams table has 0 rows",
              (unsigned long long)(at / GM_CHUNK_EVENTS),
              (unsigned long long)(at / GM_CHUNK_EVENTS * GM_CHUNK_EVENTS),
              (unsigned long long)(at % GM_CHUNK_EVENTS), st_tmpl_t.want[at].stream);
    at = st_first_with(1, 3);
    st_expect("tag-last.db", "DELETE FROM tags WHERE idx = 3 AND trace_id = " ST_T, "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk %llu (from event %llu): event %llu: tag index 3, but the tags "
              "table has 3 rows",
              (unsigned long long)(at / GM_CHUNK_EVENTS),
              (unsigned long long)(at / GM_CHUNK_EVENTS * GM_CHUNK_EVENTS),
              (unsigned long long)(at % GM_CHUNK_EVENTS));
    at = st_first_with(2, 5);
    st_expect("fr-last.db", "DELETE FROM frames WHERE idx = 5 AND trace_id = " ST_T, "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk %llu (from event %llu): event %llu: frames index 5, but the "
              "frames table has 4 rows",
              (unsigned long long)(at / GM_CHUNK_EVENTS),
              (unsigned long long)(at / GM_CHUNK_EVENTS * GM_CHUNK_EVENTS),
              (unsigned long long)(at % GM_CHUNK_EVENTS));
    /* a MARK needs a tag even where the index is 0 */
    st_expect("u-tags.db", "DELETE FROM tags WHERE trace_id = " ST_U, "u", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 'u' chunk 0 (from event 0): event 1: tag index 0, but the tags table has 0 "
              "rows");

    /* rows nothing refers to: harmless */
    const char *p = st_tampered("unused.db", "DELETE FROM tags WHERE idx = 1 AND trace_id = " ST_U
                                             "; DELETE FROM streams WHERE idx = 1 AND trace_id "
                                             "= " ST_U);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "u", &r, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_reader_tag_count(r), 1);
    cr_assert_eq(gm_reader_stream_count(r), 1);
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(gm_reader_tag(r, ev[1].tag), "used");
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 0);
    gm_reader_close(r);
    gm_store_close(s);
    /* edited values (not indices) read as they are */
    st_expect_harmless("tag-renamed.db", "UPDATE tags SET name = 'renamed' WHERE idx = 0");
}

Test(store, tampered_schema)
{
    /* user_version reset with the tables there: refused, never rewritten */
    const char *p = st_tampered("v0.db", "PRAGMA user_version = 0");
    char want[1200];
    snprintf(want, sizeof want, "'%s' has schema version 0, this gmsim reads version %d", p,
             GM_STORE_SCHEMA_VERSION);
    gm_store_t *s;
    gm_error_t err;
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        cr_assert_eq(gm_store_open(p, flags, &s, &err), GM_ESCHEMA, "%s", err.msg);
        cr_assert_str_eq(err.msg, want);
    }
    cr_assert_eq(st_sql_int(p, "PRAGMA user_version"), 0);
    cr_assert_eq(st_sql_int(p, "SELECT count(*) FROM traces"), 2);

    /* a table gone, or a column */
    p = st_tampered("notraces.db", "DROP TABLE traces");
    snprintf(want, sizeof want, "'%s' is not a gmsim trace store: no table traces", p);
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        cr_assert_eq(gm_store_open(p, flags, &s, &err), GM_EFORMAT, "%s", err.msg);
        cr_assert_str_eq(err.msg, want);
    }
    p = st_tampered("nochunks-table.db", "DROP TABLE chunks");
    snprintf(want, sizeof want, "'%s' is not a gmsim trace store: no table chunks", p);
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), GM_EFORMAT, "%s", err.msg);
    cr_assert_str_eq(err.msg, want);
    p = st_tampered("noattrs.db", "ALTER TABLE traces DROP COLUMN attrs");
    snprintf(want, sizeof want,
             "'%s' is not a gmsim trace store: table traces: no such column: attrs", p);
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), GM_EFORMAT, "%s", err.msg);
    cr_assert_str_eq(err.msg, want);
    p = st_tampered("renamed.db", "ALTER TABLE frames RENAME COLUMN text TO words");
    snprintf(want, sizeof want,
             "'%s' is not a gmsim trace store: table frames: no such column: text", p);
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), GM_EFORMAT, "%s", err.msg);
    cr_assert_str_eq(err.msg, want);
    /* tables gmsim does not read yet (replay results) may go */
    st_expect_harmless("noruns.db", "DROP TABLE timelines; DROP TABLE runs");
}

/* ---- replay results ------------------------------------------------------ */

Test(store, runs_are_saved_with_their_timelines)
{
    const char *path = gt_tmpfile("runs.db");
    unlink(path);
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_timeline_point_t tl[3] = {{0, 10, 100, 512, 1024}, {1, 20, 300, 1024, 2048},
                                 {2, 30, 0, 0, 2048}};
    gm_run_record_t run = {.trace = "t", .trace_digest = "00ff", .policy = "buddy",
                           .params = "{\"arena\": 1024}", .device = "{\"capacity\": 0}",
                           .metrics = "{\"peak_reserved\": 2048}", .timeline = tl, .npoints = 3};
    int64_t id1 = 0, id2 = 0, id3 = 0;
    int found = -1;
    run.found = &found;
    cr_assert_eq(gm_store_save_run(s, &run, &id1, &err), 0, "%s", err.msg);
    cr_assert_eq(found, 0);
    /* the same key again: the stored run is kept, nothing is added */
    run.npoints = 0;
    run.metrics = "{\"peak_reserved\": 1}";
    cr_assert_eq(gm_store_save_run(s, &run, &id3, &err), 0, "%s", err.msg);
    cr_assert_eq(found, 1);
    cr_assert_eq(id3, id1);
    /* another key is another run */
    run.params = "{\"arena\": 2048}";
    cr_assert_eq(gm_store_save_run(s, &run, &id2, &err), 0, "%s", err.msg);
    cr_assert_eq(found, 0);
    cr_assert_gt(id2, id1);
    run.metrics = "{\"peak_reserved\": 2048}";

    /* text that is not JSON is refused, and nothing is saved */
    run.metrics = "{\"peak_reserved\": ";
    cr_assert_eq(gm_store_save_run(s, &run, NULL, &err), GM_EINVAL);
    cr_assert(strstr(err.msg, "metrics is not JSON") != NULL, "%s", err.msg);
    gm_store_close(s);

    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "SELECT count(*), max(reserved), sum(requested), "
                                    "(SELECT count(*) FROM runs), "
                                    "(SELECT json_extract(metrics, '$.peak_reserved') FROM runs "
                                    "WHERE id = ?1) FROM timelines WHERE run_id = ?1",
                                    -1, &st, NULL),
                 SQLITE_OK);
    sqlite3_bind_int64(st, 1, id1);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_eq(sqlite3_column_int64(st, 0), 3);
    cr_assert_eq(sqlite3_column_int64(st, 1), 2048);
    cr_assert_eq(sqlite3_column_int64(st, 2), 400);
    cr_assert_eq(sqlite3_column_int64(st, 3), 2);
    cr_assert_eq(sqlite3_column_int64(st, 4), 2048);
    sqlite3_finalize(st);
    sqlite3_close(db);

    /* a store opened read-only takes no run */
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    run.metrics = "{}";
    cr_assert_eq(gm_store_save_run(s, &run, NULL, &err), GM_EINVAL);
    cr_assert(strstr(err.msg, "read-only") != NULL, "%s", err.msg);
    gm_store_close(s);
}

/* ---- what is checked on read, and what readers leave behind ------------- */

/* An unsigned LEB128 varint at b[*i]; *i moves past it. */
static uint64_t st_varint(const uint8_t *b, size_t *i)
{
    uint64_t x = 0;
    for (int sh = 0;; sh += 7) {
        uint8_t c = b[(*i)++];
        x |= (uint64_t)(c & 0x7f) << sh;
        if (c < 0x80)
            return x;
    }
}

Test(store, chunk_checksum_catches_what_the_codec_accepts)
{
    /* Three bytes of chunk 1 changed so that the chunk still decodes, to
     * the same number of events but other values: without the checksum
     * the reader would hand them out. */
    const char *path = st_tampered("flip3.db", NULL);
    sqlite3 *db;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "SELECT data, nevents, first_alloc, crc FROM chunks WHERE "
                                    "seq = 1 AND trace_id = " ST_T,
                                    -1, &st, NULL),
                 SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    size_t len = (size_t)sqlite3_column_bytes(st, 0);
    uint8_t *orig = malloc(len), *blob = malloc(len);
    cr_assert(orig && blob);
    memcpy(orig, sqlite3_column_blob(st, 0), len);
    size_t nevents = (size_t)sqlite3_column_int64(st, 1);
    uint64_t first_alloc = (uint64_t)sqlite3_column_int64(st, 2);
    uint32_t stored = (uint32_t)sqlite3_column_int64(st, 3);
    sqlite3_finalize(st);
    cr_assert_eq(stored, gm__chunk_crc(orig, len));

    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_event_t *a = malloc(GM_CHUNK_EVENTS * sizeof *a), *b = malloc(GM_CHUNK_EVENTS * sizeof *b);
    cr_assert(a && b);
    size_t n = 0, m = 0;
    gm_error_t err;
    cr_assert_eq(gm__chunk_decode(&c, orig, len, first_alloc, a, GM_CHUNK_EVENTS, &n, NULL, &err),
                 0, "%s", err.msg);
    cr_assert_eq(n, nevents);
    /* the chunk's directory (docs/store.md): magic, nevents, mask,
     * ts_first, ts_min, ts_scale, then (raw_len, stored_len) per column;
     * find the time stamps' column (1) stored as is */
    size_t i = 3, col_at = 0, col_len = 0;
    st_varint(orig, &i);
    unsigned mask = orig[i++];
    for (int k = 0; k < 3; k++)
        st_varint(orig, &i);
    int cols = 3 + __builtin_popcount(mask & 0x1f);
    uint64_t raw[8], stored_len[8];
    for (int k = 0; k < cols; k++) {
        raw[k] = st_varint(orig, &i);
        stored_len[k] = st_varint(orig, &i);
    }
    for (int k = 0, off = (int)i; k < cols; off += (int)stored_len[k], k++)
        if (k == 1 && raw[k] == stored_len[k])
            col_at = (size_t)off, col_len = (size_t)raw[k];
    cr_assert_gt(col_at, 0, "chunk 1's time stamps are compressed");
    size_t at = 0;
    for (size_t pos = col_at + col_len / 2; pos + 3 < col_at + col_len && at == 0; pos++) {
        memcpy(blob, orig, len);
        for (size_t k = 0; k < 3; k++)
            blob[pos + k] ^= 0x01; /* bit 7 kept: every varint keeps its length */
        if (gm__chunk_decode(&c, blob, len, first_alloc, b, GM_CHUNK_EVENTS, &m, NULL,
                                   &err) == 0 &&
            m == n && memcmp(a, b, n * sizeof *a) != 0)
            at = pos;
    }
    cr_assert_gt(at, 0, "no 3-byte change the codec accepts");
    gm__codec_release(&c);
    uint32_t crc = gm__chunk_crc(blob, len);
    cr_assert_neq(crc, stored);
    cr_assert_eq(sqlite3_prepare_v2(db, "UPDATE chunks SET data = ?1 WHERE seq = 1 AND trace_id = " ST_T,
                                    -1, &st, NULL),
                 SQLITE_OK);
    sqlite3_bind_blob(st, 1, blob, (int)len, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);

    /* the reader refuses the chunk, naming the store, trace and chunk */
    int rc;
    cr_assert_eq(st_read_back(path, "t", NULL, &rc, &err), ST_AT_NEXT, "%s", err.msg);
    cr_assert_eq(rc, GM_ECORRUPT);
    char want[GM_ERROR_MSG_MAX];
    snprintf(want, sizeof want,
             "'%s': trace 't' chunk 1 (from event 65536): damaged: checksum %08x, %08x stored",
             path, crc, stored);
    cr_assert_str_eq(err.msg, want);
    /* the other trace is read as before */
    cr_assert_eq(st_read_back(path, "u", NULL, &rc, &err), ST_READ_OK, "%s", err.msg);
    free(orig);
    free(blob);
    free(a);
    free(b);

    /* no checksum is damage too (the trigger keeps st_tampered from
     * sealing the chunk again) */
    st_expect("nocrc.db", "UPDATE chunks SET crc = NULL WHERE seq = 2 AND trace_id = " ST_T "; "
              "CREATE TRIGGER keep BEFORE UPDATE ON chunks BEGIN SELECT RAISE(IGNORE); END",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 2 (from event 131072): damaged: no checksum stored");
}

/* Make the store at path look as schema version 3 left it: no chunk
 * checksums, no unique run key. */
static void st_make_v3(const char *path)
{
    cr_assert_eq(st_sql(path, "DROP INDEX runs_key; ALTER TABLE chunks DROP COLUMN crc; "
                              "PRAGMA user_version = 3"),
                 SQLITE_OK);
}

Test(store, upgrade_to_version_4)
{
    /* a version-3 store with one run saved three times, and a damaged chunk */
    const char *path = st_tampered("v3.db", NULL);
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_timeline_point_t tl[2] = {{0, 1, 2, 3, 4}, {1, 2, 3, 4, 5}};
    gm_run_record_t run = {.trace = "t", .trace_digest = "ab", .policy = "buddy",
                           .params = "{}", .device = "{}", .metrics = "{\"x\": 1}",
                           .timeline = tl, .npoints = 2};
    int64_t id;
    cr_assert_eq(gm_store_save_run(s, &run, &id, &err), 0, "%s", err.msg);
    run.policy = "tlsf";
    cr_assert_eq(gm_store_save_run(s, &run, &id, &err), 0, "%s", err.msg);
    gm_store_close(s);
    st_make_v3(path);
    cr_assert_eq(st_sql(path, "INSERT INTO runs (trace_digest, trace_name, policy, params, device, "
                              "gmsim_version, metrics) SELECT trace_digest, trace_name, policy, "
                              "params, device, gmsim_version, '{\"x\": 2}' FROM runs WHERE "
                              "policy = 'buddy'; "
                              "INSERT INTO timelines SELECT 3, point, event, ts_ns, requested, "
                              "allocated, reserved FROM timelines WHERE run_id = 1; "
                              "INSERT INTO runs (trace_digest, trace_name, policy, params, device, "
                              "gmsim_version, metrics) SELECT trace_digest, trace_name, policy, "
                              "params, device, gmsim_version, '{\"x\": 3}' FROM runs WHERE "
                              "id = 1"),
                 SQLITE_OK);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs"), 4);

    /* read-only, it is read as it is: no checksums, every run */
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_run_info_t *runs;
    size_t n;
    cr_assert_eq(gm_store_list_runs(s, &runs, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 4);
    gm_run_info_free_list(runs, n);
    gm_store_close(s);
    int rc;
    cr_assert_eq(st_read_back(path, "t", &st_tmpl_t, &rc, &err), ST_READ_OK, "%s", err.msg);
    cr_assert_eq(st_sql_int(path, "PRAGMA user_version"), 3, "a read-only open changed the file");

    /* opened for writing, it is upgraded: the first of each key kept with
     * its timeline, the repeats and theirs gone, every chunk checksummed */
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "PRAGMA user_version"), GM_STORE_SCHEMA_VERSION);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs"), 2);
    cr_assert_eq(st_sql_int(path, "SELECT group_concat(id) = '1,2' FROM runs ORDER BY id"), 1);
    cr_assert_eq(st_sql_int(path, "SELECT json_extract(metrics, '$.x') FROM runs WHERE id = 1"), 1);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM timelines"), 4);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM timelines WHERE run_id > 2"), 0);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM chunks WHERE crc IS NULL"), 0);
    cr_assert_eq(st_read_back(path, "t", &st_tmpl_t, &rc, &err), ST_READ_OK, "%s", err.msg);
    /* the key is unique in the schema itself */
    cr_assert_eq(st_sql(path, "INSERT INTO runs (trace_digest, policy, params, device, "
                              "gmsim_version) SELECT trace_digest, policy, params, device, "
                              "gmsim_version FROM runs WHERE id = 1"),
                 SQLITE_CONSTRAINT);
    /* and the checksums catch a later edit */
    cr_assert_eq(st_sql(path, "UPDATE chunks SET data = substr(data, 1, 100) || x'00' || "
                              "substr(data, 102) WHERE seq = 0 AND trace_id = " ST_T),
                 SQLITE_OK);
    cr_assert_eq(st_read_back(path, "t", NULL, &rc, &err), ST_AT_NEXT, "%s", err.msg);
    cr_assert(strstr(err.msg, "chunk 0 (from event 0): damaged: checksum") != NULL, "%s",
              err.msg);
}

/* Whether path-SUFFIX exists. */
static int st_side_exists(const char *path, const char *suffix)
{
    char side[700];
    snprintf(side, sizeof side, "%s%s", path, suffix);
    struct stat st;
    return stat(side, &st) == 0;
}

static void st_assert_alone(const char *path, const char *when)
{
    cr_assert(!st_side_exists(path, "-wal"), "%s: %s-wal left", when, path);
    cr_assert(!st_side_exists(path, "-shm"), "%s: %s-shm left", when, path);
    cr_assert(!st_side_exists(path, "-journal"), "%s: %s-journal left", when, path);
}

/* Byte i of the file at path (18: 1 rollback journal, 2 WAL). */
static int st_header_byte(const char *path, long i)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, i, SEEK_SET), 0);
    int c = fgetc(f);
    fclose(f);
    return c;
}

/* In a child process, as user nobody when run as root (root ignores
 * permissions): open path read-only, list it, read trace t to its end.
 * The child's exit status: 0 when all of it worked. */
static int st_read_as_nobody(const char *path)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(9);
        gm_store_t *s;
        gm_error_t err = {0};
        gm_trace_info_t *list;
        size_t n;
        if (gm_store_open(path, GM_STORE_READONLY, &s, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            _exit(1);
        }
        if (gm_store_list(s, &list, &n, &err) != 0 || n != 2)
            _exit(2);
        gm_trace_info_free_list(list, n);
        gm_reader_t *r;
        const gm_event_t *ev;
        size_t got, total = 0;
        if (gm_reader_open(s, "t", &r, &err) != 0)
            _exit(3);
        while (gm_reader_next(r, &ev, &got, &err) == 0 && got > 0)
            total += got;
        int bad = err.code != 0 || total != gm_reader_info(r)->events;
        gm_reader_close(r);
        gm_store_close(s);
        _exit(bad ? 4 : 0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

Test(store, readers_leave_nothing_beside_a_store)
{
    /* a store at rest is in rollback-journal mode: nothing beside it */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/ro", gt_tmpdir());
    cr_assert_eq(mkdir(dir, 0755), 0);
    chmod(gt_tmpdir(), 0755); /* nobody may reach it */
    char path[700];
    snprintf(path, sizeof path, "%s/s.db", dir);
    size_t len;
    char *bytes = gt_read_file(st_template(), &len);
    cr_assert_not_null(bytes);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    free(bytes);
    st_assert_alone(path, "a copy");
    cr_assert_eq(st_header_byte(path, 18), 1, "not in rollback-journal mode at rest");
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
    st_assert_alone(path, "after a writer");

    /* a read-only file in a read-only directory reads, and leaves nothing */
    cr_assert_eq(chmod(path, 0444), 0);
    cr_assert_eq(chmod(dir, 0555), 0);
    cr_assert_eq(st_read_as_nobody(path), 0);
    st_assert_alone(path, "a read in a read-only directory");
    cr_assert_eq(chmod(dir, 0755), 0);
    cr_assert_eq(st_read_as_nobody(path), 0);
    st_assert_alone(path, "a read of a read-only file");

    /* a store an older gmsim left in WAL mode (no -wal beside it) is read
     * without creating one, in a read-only directory too */
    cr_assert_eq(chmod(path, 0644), 0);
    cr_assert_eq(st_sql(path, "PRAGMA journal_mode = WAL"), SQLITE_OK);
    st_assert_alone(path, "sqlite3 in WAL mode, closed");
    cr_assert_eq(chmod(path, 0444), 0);
    cr_assert_eq(st_read_as_nobody(path), 0);
    st_assert_alone(path, "a read of a WAL-mode store");
    cr_assert_eq(chmod(dir, 0555), 0);
    cr_assert_eq(st_read_as_nobody(path), 0);
    st_assert_alone(path, "a read of a WAL-mode store in a read-only directory");

    /* then a writer works (nothing read-only was left to stop it), and
     * leaves the store in rollback-journal mode */
    cr_assert_eq(chmod(dir, 0755), 0);
    cr_assert_eq(chmod(path, 0644), 0);
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    st_write(s, "later", &st_tmpl_t, 0);
    gm_store_close(s);
    st_assert_alone(path, "a later import");
    cr_assert_eq(st_header_byte(path, 18), 1, "not in rollback-journal mode at rest");
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM traces"), 3);

    /* a reader open while a writer works sees the writer's files; once
     * both are closed nothing is left */
    gm_store_t *w, *r;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &r, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(r, "later", &info, &err), 0, "%s", err.msg);
    gm_trace_info_release(&info);
    cr_assert_eq(gm_store_delete(w, "later", &err), 0, "%s", err.msg);
    gm_store_close(r);
    gm_store_close(w);
    st_assert_alone(path, "a reader during a write");
}

/* ---- two writers ----------------------------------------------------------- */

#define ST_WRITERS 3
#define ST_KEYS 60

/* Child k of ST_WRITERS: save runs of keys 0..ST_KEYS-1 (each writer in
 * its own order) and ST_KEYS + k, each in its own transaction. */
static void st_writer_child(const char *path, int k)
{
    gm_store_t *s;
    gm_error_t err = {0};
    if (gm_store_open(path, GM_STORE_WRITE, &s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        _exit(1);
    }
    gm_timeline_point_t tl[3] = {{0, 1, 2, 3, 4}, {1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}};
    for (int i = 0; i <= ST_KEYS; i++) {
        int key = i == ST_KEYS ? ST_KEYS + k : (k % 2 ? ST_KEYS - 1 - i : i);
        char params[64], metrics[64];
        snprintf(params, sizeof params, "{\"key\":%d}", key);
        snprintf(metrics, sizeof metrics, "{\"writer\":%d}", k);
        gm_run_record_t run = {.trace = "t", .trace_digest = "d", .policy = "buddy",
                               .params = params, .device = "{}", .metrics = metrics,
                               .timeline = tl, .npoints = 3};
        if (gm_store_save_run(s, &run, NULL, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            _exit(2);
        }
    }
    gm_store_close(s);
    _exit(0);
}

Test(store, two_writers_store_each_run_once)
{
    const char *path = gt_tmpfile("writers.db");
    unlink(path);
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
    pid_t pids[ST_WRITERS];
    for (int k = 0; k < ST_WRITERS; k++) {
        pids[k] = fork();
        cr_assert_geq(pids[k], 0);
        if (pids[k] == 0)
            st_writer_child(path, k);
    }
    /* a reader meanwhile sees whole runs only */
    for (int i = 0; i < 20; i++) {
        cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
        gm_run_info_t *runs;
        size_t n;
        cr_assert_eq(gm_store_list_runs(s, &runs, &n, &err), 0, "%s", err.msg);
        for (size_t j = 0; j < n; j++)
            cr_assert_eq(runs[j].npoints, 3);
        gm_run_info_free_list(runs, n);
        gm_store_close(s);
    }
    for (int k = 0; k < ST_WRITERS; k++) {
        int status;
        cr_assert_eq(waitpid(pids[k], &status, 0), pids[k]);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", k);
    }
    /* every key once, none lost, each with its whole timeline */
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs"), ST_KEYS + ST_WRITERS);
    cr_assert_eq(st_sql_int(path, "SELECT count(DISTINCT params) FROM runs"), ST_KEYS + ST_WRITERS);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM timelines"), 3 * (ST_KEYS + ST_WRITERS));
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs WHERE (SELECT count(*) FROM "
                                  "timelines WHERE run_id = runs.id) != 3"),
                 0);
    st_assert_alone(path, "three writers and a reader");
}

/* ---- the one SQLite error map (store/sql.c) --------------------------------- */

Test(store, sql_error_map)
{
    static const struct {
        int rc, store, input;
    } map[] = {
        {SQLITE_NOMEM, GM_ENOMEM, GM_ENOMEM},
        {SQLITE_IOERR, GM_EIO, GM_EIO},
        {SQLITE_IOERR_WRITE, GM_EIO, GM_EIO}, /* extended codes map as their primary */
        {SQLITE_FULL, GM_EIO, GM_EIO},
        {SQLITE_CANTOPEN, GM_EIO, GM_EIO},
        {SQLITE_READONLY, GM_EIO, GM_EIO},
        {SQLITE_READONLY_DBMOVED, GM_EIO, GM_EIO},
        {SQLITE_PERM, GM_EIO, GM_EIO},
        {SQLITE_CORRUPT, GM_ECORRUPT, GM_EFORMAT},
        {SQLITE_NOTADB, GM_ECORRUPT, GM_EFORMAT},
        {SQLITE_ERROR, GM_EDB, GM_EFORMAT},
        {SQLITE_BUSY, GM_EDB, GM_EFORMAT},
        {SQLITE_LOCKED, GM_EDB, GM_EFORMAT},
        {SQLITE_CONSTRAINT_UNIQUE, GM_EDB, GM_EFORMAT},
        {SQLITE_MISUSE, GM_EDB, GM_EFORMAT},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        int rc = map[i].rc;
        cr_expect_eq(gm__sql_code(rc), map[i].store, "%s", sqlite3_errstr(rc));
        cr_expect_eq(gm__sql_input_code(rc), map[i].input, "%s", sqlite3_errstr(rc));
        gm_error_t err = {0};
        cr_expect_eq(gm__sql_fail(NULL, "x.db", rc, "cannot save a run", &err), map[i].store);
        cr_expect_eq(err.code, map[i].store);
        char want[GM_ERROR_MSG_MAX];
        snprintf(want, sizeof want, "'x.db': cannot save a run: %s", sqlite3_errstr(rc));
        cr_expect_str_eq(err.msg, want);
        /* Opening: NOTADB is a file of another kind; the rest, I/O at worst. */
        gm_error_t oerr = {0};
        int want_open = (rc & 0xff) == SQLITE_NOTADB ? GM_EFORMAT
                        : map[i].store == GM_EDB    ? GM_EIO
                                                    : map[i].store;
        cr_expect_eq(gm__sql_open_fail(NULL, "x.db", rc, &oerr), want_open);
        if ((rc & 0xff) == SQLITE_NOTADB)
            cr_expect_str_eq(oerr.msg, "cannot open 'x.db': file is not a database");
        else
            cr_expect(strncmp(oerr.msg, "cannot open 'x.db': ", 20) == 0, "%s", oerr.msg);
    }
    cr_expect_eq(gm__sql_code(SQLITE_OK), 0);
    cr_expect_eq(gm__sql_code(SQLITE_ROW), 0);
    cr_expect_eq(gm__sql_code(SQLITE_DONE), 0);

    /* A real failure on a connection: the file named, SQLite's message. */
    sqlite3 *db;
    cr_assert_eq(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    gm_error_t err = {0};
    sqlite3_stmt *st = NULL;
    cr_expect_eq(gm__sql_prepare(db, "y.db", "SELECT * FROM nowhere", &st, &err), GM_EDB);
    cr_expect_null(st);
    cr_expect_str_eq(err.msg, "'y.db': cannot prepare a statement: no such table: nowhere");
    cr_expect_eq(gm__sql_input_fail(db, "y.nsys-rep", "cannot read the table", &err), GM_EFORMAT);
    cr_expect_str_eq(err.msg, "'y.nsys-rep': cannot read the table: no such table: nowhere");
    /* Transactions: a savepoint inside an open one; commit and roll back. */
    int nested = -1;
    cr_expect_eq(gm__sql_begin(db, "y.db", "sp", "the import", &nested, &err), 0);
    cr_expect_eq(nested, 0);
    cr_expect_eq(gm__sql_begin(db, "y.db", "sp", "the import", &nested, &err), 0);
    cr_expect_eq(nested, 1);
    cr_expect_eq(gm__sql_exec(db, "y.db", "CREATE TABLE t (a)", &err), 0);
    gm__sql_rollback(db, "sp", 1);
    cr_expect_eq(sqlite3_get_autocommit(db), 0);
    cr_expect_eq(gm__sql_exec(db, "y.db", "CREATE TABLE u (a)", &err), 0);
    cr_expect_eq(gm__sql_commit(db, "y.db", NULL, 0, "the import", &err), 0);
    cr_expect_neq(sqlite3_get_autocommit(db), 0);
    cr_expect_eq(gm__sql_exec(db, "y.db", "SELECT * FROM t", &err), GM_EDB);
    cr_expect_str_eq(err.msg, "'y.db': SELECT * FROM t: no such table: t");
    cr_expect_eq(gm__sql_exec(db, "y.db", "SELECT * FROM u", &err), 0);
    cr_expect_eq(gm__sql_commit(db, "y.db", NULL, 0, "the import", &err), GM_EDB);
    cr_expect_str_eq(err.msg,
                     "'y.db': cannot commit the import: cannot commit - no transaction is active");
    sqlite3_close(db);
}
