/*
 * store/read.c — the reader (gm_reader_*, API in gmsim/store.h; the
 * store's files in store/store_int.h).
 *
 * One chunk is fetched (by trace_id and seq, a fresh indexed lookup each
 * time, so no statement stays open between calls) and decoded into a
 * buffer of GM_CHUNK_EVENTS events.  Each chunk's seq, first_event,
 * first_alloc, nevents and nallocs must follow from the ones before, and the
 * totals must match the traces row: a mismatch is GM_ECORRUPT.  At open,
 * the summary's counts must add up, the interned tables be dense from their
 * base, and the chunk rows as many as the summary says; in every chunk,
 * events may refer only to rows of the interned tables.
 */
#include "gmsim/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/codec.h"
#include "store/sql.h"
#include "store/store.h"
#include "store/store_int.h"
#include "base/vec.h"

/* ---- reader -------------------------------------------------------------- */

struct gm_reader {
    gm_store_t *s;
    gm_trace_info_t info;
    sqlite3_stmt *sel;
    gm__codec_t codec;
    gm_event_t *buf;      /* GM_CHUNK_EVENTS events */
    uint64_t seq;         /* next chunk */
    uint64_t events;      /* events decoded so far */
    uint64_t allocs;      /* ALLOCs decoded so far */
    uint64_t *streams;
    uint32_t nstreams;
    char **tags;
    uint32_t ntags;
    char **frames;        /* frames[0] is NULL: index 0 means none */
    uint32_t nframes;     /* including index 0 */
    int failed;           /* a chunk was damaged: repeat its error */
    gm_error_t failure;
};

/* Load interned table `table` (SELECT idx, value ... ORDER BY idx): idx
 * dense from base, a missing row or one out of place is GM_ECORRUPT naming
 * the table.  Strings when strs != NULL, else integers into ints. */
static int store_load_table(gm_reader_t *r, const char *table, const char *sql, uint32_t base,
                            char ***strs, uint64_t **ints, uint32_t *count, gm_error_t *err)
{
    sqlite3_stmt *st;
    int rc = store_prepare(r->s, sql, &st, err);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, r->info.id);
    size_t n = base, cap = 0;
    int q;
    while ((q = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
            (uint64_t)sqlite3_column_int64(st, 0) != n || n >= UINT32_MAX) {
            const unsigned char *idx = sqlite3_column_text(st, 0);
            rc = gm_error_set(err, GM_ECORRUPT,
                              "trace '%s': table %s: index %.40s where %zu was expected (a row "
                              "is missing or out of place)",
                              r->info.name, table, idx ? (const char *)idx : "NULL", n);
            goto out;
        }
        if (strs ? GM_VEC_RESERVE(*strs, cap, n + 1, 16) : GM_VEC_RESERVE(*ints, cap, n + 1, 16)) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            goto out;
        }
        if (strs && n == base && base)
            (*strs)[0] = NULL;
        if (strs) {
            (*strs)[n] = gm__store_strdup_col(st, 1, "");
            if ((*strs)[n] == NULL) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                goto out;
            }
        } else {
            (*ints)[n] = (uint64_t)sqlite3_column_int64(st, 1);
        }
        n++;
        *count = (uint32_t)n;
    }
    if (q != SQLITE_DONE) {
        char what[GM_ERROR_MSG_MAX];
        snprintf(what, sizeof what, "trace '%s': cannot read table %s", r->info.name, table);
        rc = store_fail(r->s, err, q, what);
    }
out:
    sqlite3_finalize(st);
    return rc;
}

/* The summary's counts must agree with one another as the writer makes
 * them (that they agree with the chunks is checked as they are read):
 * events = allocs + frees + marks + segs, live_at_end = allocs − frees,
 * and chunks of GM_CHUNK_EVENTS events but the last.  0 or GM_ECORRUPT. */
static int store_check_summary(const gm_store_t *s, const gm_trace_info_t *t, gm_error_t *err)
{
    /* every count is below 2^63 (store_info_row): no sum of two wraps */
    uint64_t af = t->allocs + t->frees, ms = t->marks + t->segs;
    if (af < t->allocs || af > UINT64_MAX - ms || t->events != af + ms)
        return gm_error_set(err, GM_ECORRUPT,
                            "'%s': trace '%s': summary of %llu events is not its %llu allocs + "
                            "%llu frees + %llu marks + %llu segs",
                            s->path, t->name, (unsigned long long)t->events,
                            (unsigned long long)t->allocs, (unsigned long long)t->frees,
                            (unsigned long long)t->marks, (unsigned long long)t->segs);
    if (t->frees > t->allocs || t->live_at_end != t->allocs - t->frees)
        return gm_error_set(err, GM_ECORRUPT,
                            "'%s': trace '%s': summary of %llu allocations live at the end is not "
                            "its %llu allocs - %llu frees",
                            s->path, t->name, (unsigned long long)t->live_at_end,
                            (unsigned long long)t->allocs, (unsigned long long)t->frees);
    uint64_t chunks = t->events / GM_CHUNK_EVENTS + (t->events % GM_CHUNK_EVENTS != 0);
    if (t->chunks != chunks)
        return gm_error_set(err, GM_ECORRUPT,
                            "'%s': trace '%s': summary of %llu chunks for %llu events, %llu "
                            "expected",
                            s->path, t->name, (unsigned long long)t->chunks,
                            (unsigned long long)t->events, (unsigned long long)chunks);
    return 0;
}

static int store_reader_open(gm_store_t *s, const char *name, gm_reader_t **out, gm_error_t *err)
{
    *out = NULL;
    gm_reader_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    r->s = s;
    gm__codec_init(&r->codec, GM__CHUNK_LEVEL);
    int rc = gm_store_find(s, name, &r->info, err);
    if (rc)
        goto fail;
    if ((r->buf = malloc(GM_CHUNK_EVENTS * sizeof *r->buf)) == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = store_check_summary(s, &r->info, err)))
        goto fail;
    if ((rc = store_load_table(r, "streams",
                               "SELECT idx, handle FROM streams WHERE trace_id = ?1 ORDER BY idx",
                               0, NULL, &r->streams, &r->nstreams, err)) ||
        (rc = store_load_table(r, "tags",
                               "SELECT idx, name FROM tags WHERE trace_id = ?1 ORDER BY idx", 0,
                               &r->tags, NULL, &r->ntags, err)) ||
        (rc = store_load_table(r, "frames",
                               "SELECT idx, text FROM frames WHERE trace_id = ?1 ORDER BY idx",
                               1, &r->frames, NULL, &r->nframes, err)))
        goto fail;
    sqlite3_stmt *st;
    if ((rc = store_prepare(s, "SELECT count(*) FROM chunks WHERE trace_id = ?1", &st, err)))
        goto fail;
    sqlite3_bind_int64(st, 1, r->info.id);
    int q = sqlite3_step(st);
    int64_t nchunks = q == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (q != SQLITE_ROW) {
        char what[GM_ERROR_MSG_MAX];
        snprintf(what, sizeof what, "trace '%s': cannot count its chunks", name);
        rc = store_fail(s, err, q, what);
        goto fail;
    }
    if ((uint64_t)nchunks != r->info.chunks) {
        rc = gm_error_set(err, GM_ECORRUPT, "trace '%s': %lld chunks stored, %llu expected",
                          name, (long long)nchunks, (unsigned long long)r->info.chunks);
        goto fail;
    }
    /* chunks of a store older than version 4 have no checksum */
    if ((rc = store_prepare(s,
                            s->version >= 4
                                ? "SELECT first_event, nevents, first_alloc, nallocs, data, crc "
                                  "FROM chunks WHERE trace_id = ?1 AND seq = ?2"
                                : "SELECT first_event, nevents, first_alloc, nallocs, data, NULL "
                                  "FROM chunks WHERE trace_id = ?1 AND seq = ?2",
                            &r->sel, err)))
        goto fail;
    *out = r;
    return 0;
fail:
    gm_reader_close(r);
    return rc;
}

/*
 * Check that the n events just decoded into ev refer only to rows of
 * the trace's interned tables, as the writer requires: a stream other than
 * 0, a tag other than 0 or any MARK's tag, a frames other than 0 must
 * index a row.  The codec's ORs of the indices (codec.h) settle it for the
 * whole chunk without a pass over it; only when one reaches a limit are
 * the events walked, for the culprit (or for none: an OR may reach a limit
 * that every value is below).  0, or GM_ECORRUPT naming the event.
 */
static int store_reader_indices(const gm_reader_t *r, const gm_event_t *ev, size_t n,
                                gm_error_t *err)
{
    const gm__codec_t *c = &r->codec;
    uint64_t slim = r->nstreams ? r->nstreams : 1, tlim = r->ntags ? r->ntags : 1;
    uint64_t flim = r->nframes ? r->nframes : 1;
    if (c->or_stream < slim && c->or_tag < tlim && c->or_mark <= r->ntags && c->or_frames < flim)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const gm_event_t *e = &ev[i];
        const char *field, *table;
        uint32_t v, rows;
        if (e->stream >= slim)
            field = "stream", table = "streams", v = e->stream, rows = r->nstreams;
        else if (e->tag >= tlim || (e->op == GM_OP_MARK && e->tag >= r->ntags))
            field = "tag", table = "tags", v = e->tag, rows = r->ntags;
        else if (e->frames >= flim)
            field = table = "frames", v = e->frames, rows = r->nframes ? r->nframes - 1 : 0;
        else
            continue;
        return gm_error_set(err, GM_ECORRUPT,
                            "event %zu: %s index %u, but the %s table has %u row%s", i, field, v,
                            table, rows, rows == 1 ? "" : "s");
    }
    return 0;
}

/* Record a damaged-chunk error (repeated by later calls). */
static int store_reader_damaged(gm_reader_t *r, gm_error_t *err, int rc)
{
    r->failed = rc;
    if (err)
        r->failure = *err;
    else
        gm_error_set(&r->failure, rc, "trace '%s': damaged", r->info.name);
    return rc;
}

/* Decode the next chunk into dst (room for GM_CHUNK_EVENTS events). */
static int store_reader_next(gm_reader_t *r, gm_event_t *dst, size_t *n, gm_error_t *err)
{
    *n = 0;
    if (r->failed) {
        if (err)
            *err = r->failure;
        return r->failed;
    }
    const char *name = r->info.name;
    if (r->seq == r->info.chunks) {
        if (r->events != r->info.events || r->allocs != r->info.allocs) {
            gm_error_set(err, GM_ECORRUPT, "trace '%s': %llu events and %llu allocs in the chunks, "
                         "%llu and %llu in the summary", name, (unsigned long long)r->events,
                         (unsigned long long)r->allocs, (unsigned long long)r->info.events,
                         (unsigned long long)r->info.allocs);
            return store_reader_damaged(r, err, GM_ECORRUPT);
        }
        return 0;
    }
    sqlite3_stmt *st = r->sel;
    sqlite3_bind_int64(st, 1, r->info.id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)r->seq);
    int q = sqlite3_step(st);
    unsigned long long seq = r->seq;
    int rc;
    if (q != SQLITE_ROW) {
        sqlite3_reset(st);
        if (q == SQLITE_DONE) {
            gm_error_set(err, GM_ECORRUPT, "trace '%s' chunk %llu: missing", name, seq);
            return store_reader_damaged(r, err, GM_ECORRUPT);
        }
        char what[GM_ERROR_MSG_MAX];
        snprintf(what, sizeof what, "trace '%s' chunk %llu: cannot read it", name, seq);
        return store_fail(r->s, err, q, what);
    }
    uint64_t first_event = (uint64_t)sqlite3_column_int64(st, 0);
    uint64_t nevents = (uint64_t)sqlite3_column_int64(st, 1);
    uint64_t first_alloc = (uint64_t)sqlite3_column_int64(st, 2);
    uint64_t nallocs = (uint64_t)sqlite3_column_int64(st, 3);
    const uint8_t *blob = sqlite3_column_blob(st, 4);
    size_t len = (size_t)sqlite3_column_bytes(st, 4);
    if (first_event != r->events || first_alloc != r->allocs) {
        sqlite3_reset(st);
        gm_error_set(err, GM_ECORRUPT,
                     "trace '%s' chunk %llu: starts at event %lld and alloc %lld, expected "
                     "%llu and %llu", name, seq, (long long)first_event, (long long)first_alloc,
                     (unsigned long long)r->events, (unsigned long long)r->allocs);
        return store_reader_damaged(r, err, GM_ECORRUPT);
    }
    if (r->s->version >= 4) {
        /* The checksum first: a damaged chunk is named as such rather than
         * by whatever its bytes then decode to. */
        uint32_t crc = gm__chunk_crc(blob, len);
        int typed = sqlite3_column_type(st, 5) == SQLITE_INTEGER;
        int64_t stored = sqlite3_column_int64(st, 5);
        if (!typed || stored != (int64_t)crc) {
            sqlite3_reset(st);
            if (typed)
                gm_error_set(err, GM_ECORRUPT,
                             "trace '%s' chunk %llu (from event %llu): damaged: checksum %08llx, "
                             "%08x stored", name, seq, (unsigned long long)first_event,
                             (unsigned long long)crc, (unsigned)(stored & 0xffffffff));
            else
                gm_error_set(err, GM_ECORRUPT,
                             "trace '%s' chunk %llu (from event %llu): damaged: no checksum "
                             "stored", name, seq, (unsigned long long)first_event);
            return store_reader_damaged(r, err, GM_ECORRUPT);
        }
    }
    size_t got = 0;
    uint64_t got_allocs = 0;
    gm_error_t local;
    rc = gm__chunk_decode(&r->codec, blob ? blob : (const uint8_t *)"", len, first_alloc,
                          dst, GM_CHUNK_EVENTS, &got, &got_allocs, err ? err : &local);
    sqlite3_reset(st);
    if (rc) {
        gm_error_prefix(err, "trace '%s' chunk %llu (from event %llu)", name, seq,
                        (unsigned long long)first_event);
        return rc == GM_ENOMEM ? rc : store_reader_damaged(r, err, rc);
    }
    if (got != nevents || got_allocs != nallocs || got == 0) {
        gm_error_set(err, GM_ECORRUPT,
                     "trace '%s' chunk %llu: %zu events and %llu allocs decoded, %lld and %lld "
                     "recorded", name, seq, got, (unsigned long long)got_allocs,
                     (long long)nevents, (long long)nallocs);
        return store_reader_damaged(r, err, GM_ECORRUPT);
    }
    if ((rc = store_reader_indices(r, dst, got, err ? err : &local))) {
        gm_error_prefix(err, "trace '%s' chunk %llu (from event %llu)", name, seq,
                        (unsigned long long)first_event);
        return store_reader_damaged(r, err, GM_ECORRUPT);
    }
    r->seq++;
    r->events += got;
    r->allocs += got_allocs;
    *n = got;
    return 0;
}

/* Messages about a trace's contents ("trace 't' chunk 2: …") get the file
 * in front, as every other store error names it. */
static int store_name_file(const gm_store_t *s, int rc, gm_error_t *err)
{
    if (rc != 0 && err != NULL && strncmp(err->msg, "trace '", 7) == 0)
        gm_error_prefix(err, "'%s'", s->path);
    return rc;
}

int gm_reader_open(gm_store_t *s, const char *name, gm_reader_t **out, gm_error_t *err)
{
    return store_name_file(s, store_reader_open(s, name, out, err), err);
}

int gm_reader_next(gm_reader_t *r, const gm_event_t **events, size_t *n, gm_error_t *err)
{
    *events = r->buf;
    return store_name_file(r->s, store_reader_next(r, r->buf, n, err), err);
}

int gm__reader_next_into(gm_reader_t *r, gm_event_t *dst, size_t *n, gm_error_t *err)
{
    return store_name_file(r->s, store_reader_next(r, dst, n, err), err);
}

const gm_trace_info_t *gm_reader_info(const gm_reader_t *r) { return &r->info; }

const char *gm_reader_tag(const gm_reader_t *r, uint32_t index)
{
    return index < r->ntags ? r->tags[index] : NULL;
}

uint64_t gm_reader_stream(const gm_reader_t *r, uint32_t index)
{
    return index < r->nstreams ? r->streams[index] : 0;
}

const char *gm_reader_frames(const gm_reader_t *r, uint32_t index)
{
    return index > 0 && index < r->nframes ? r->frames[index] : NULL;
}

uint32_t gm_reader_tag_count(const gm_reader_t *r) { return r->ntags; }
uint32_t gm_reader_stream_count(const gm_reader_t *r) { return r->nstreams; }

int64_t gm_reader_find_tag(const gm_reader_t *r, const char *name)
{
    for (uint32_t i = 0; i < r->ntags; i++)
        if (strcmp(r->tags[i], name) == 0)
            return i;
    return -1;
}

void gm_reader_close(gm_reader_t *r)
{
    if (r == NULL)
        return;
    sqlite3_finalize(r->sel);
    gm__codec_release(&r->codec);
    free(r->buf);
    free(r->streams);
    for (uint32_t i = 0; i < r->ntags; i++)
        free(r->tags[i]);
    free(r->tags);
    for (uint32_t i = 1; i < r->nframes; i++)
        free(r->frames[i]);
    free(r->frames);
    gm_trace_info_release(&r->info);
    free(r);
}
