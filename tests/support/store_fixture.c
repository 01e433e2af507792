/*
 * tests/support/store_fixture.c — the trace store's test fixtures
 * (store_fixture.h): the seeded random trace, its writer and check, SQL
 * and checksum sealing on a store file, and the tampering template.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/codec.h"
#include "support/store_fixture.h"
#include "util.h"

gm_store_t *st_open_new(const char *name)
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


void st_trace_free(st_trace_t *t)
{
    free(t->given);
    free(t->want);
}

st_trace_t st_random(uint64_t seed, size_t n, int extras)
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

void st_intern(gm_writer_t *w, const st_trace_t *t)
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

void st_write(gm_store_t *s, const char *name, const st_trace_t *t, unsigned flags)
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

void st_assert_same(const gm_event_t *a, const gm_event_t *b, uint64_t at)
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
void st_check(gm_store_t *s, const char *name, const st_trace_t *t)
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
int st_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    sqlite3_free(msg);
    sqlite3_close(db);
    return rc;
}

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
void st_reseal(const char *path)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_create_function(db, "crc", 1, SQLITE_UTF8, NULL, st_sql_crc, NULL, NULL),
                 SQLITE_OK);
    /* a store whose chunks table the edit took away has nothing to seal */
    sqlite3_exec(db, "UPDATE chunks SET crc = crc(data)", NULL, NULL, NULL);
    sqlite3_close(db);
}

int64_t st_sql_int(const char *path, const char *sql)
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
gm_error_t st_add_until_error(gm_store_t *s, const gm_event_t *ev, size_t n, int *rc,
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

/* Byte i of the file at path (18: 1 rollback journal, 2 WAL). */
int st_header_byte(const char *path, long i)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, i, SEEK_SET), 0);
    int c = fgetc(f);
    fclose(f);
    return c;
}

/* ---- the tampering template ---------------------------------------------- */

/* The template and its trace "t" (store_fixture.h). */
st_trace_t st_tmpl_t;
static char st_tmpl_path[600];

const char *st_template(void)
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
const char *st_tampered(const char *file, const char *sql)
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

/*
 * Open path read-only, list it, read trace `name` to its end and replay it
 * through every policy.  Returns where it stopped; *rc and *err the error
 * (the replay must fail the same way, its message naming the trace).  A
 * read that succeeds is compared with `want` when given.
 */
int st_read_back(const char *path, const char *name, const st_trace_t *want, int *rc,
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
void st_expect(const char *file, const char *sql, const char *name, int stage, int code,
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
