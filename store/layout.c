/*
 * store/layout.c — recorded starting layouts (gmsim/layout.h) in the
 * store's `layouts` table (schema version 2); their checks are base/layout.c.
 *
 * A layout is one BLOB per trace, written by gm_writer_layout inside the
 * writer's transaction (so it commits or rolls back with the trace) and
 * deleted with the trace.  Encoding (varints are unsigned LEB128, zigzag
 * for signed deltas):
 *
 *   'G' 'L' version(1) method(1: 0 stored, 1 zlib) varint raw_len
 *   then raw_len bytes (zlib-compressed when method is 1) of
 *     varint nsegments, varint nblocks
 *     per segment: varint zigzag(address − previous address), varint size,
 *                  varint stream, varint stream_index, varint device,
 *                  byte pool | expandable << 1, varint nblocks
 *     per block (in segment order): varint size, varint requested,
 *                  varint id + 1 (0: free)
 *
 * Offsets and first_block follow from the sizes (blocks tile their
 * segment).  Reading checks every count against the bytes present before
 * allocating, every varint against the end, and the result with
 * gm_layout_validate and against the trace's stream table: a damaged row is
 * GM_ECORRUPT naming the file and the trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/bits.h"
#include "gmsim/layout.h"
#include "gmsim/store.h"
#include "gmsim/trace.h"
#include "store/sql.h"
#include "store/store.h"
#include "base/vec.h"

#define LAYOUT_VERSION 1
#define LAYOUT_HDR 4

/* ---- encoding ------------------------------------------------------------- */

/* Append v as a varint (nothing once b->oom is set). */
static void layout_put(gm__buf_t *b, uint64_t v)
{
    if (gm__buf_room(b, 10))
        return;
    uint8_t *p = (uint8_t *)b->p;
    b->n = (size_t)(gm__varint_put(p + b->n, v) - p);
    b->p[b->n] = '\0';
}

/* The raw (uncompressed) encoding of l. */
static int layout_encode(const gm_layout_t *l, gm__buf_t *b)
{
    layout_put(b, l->nsegments);
    layout_put(b, l->nblocks);
    uint64_t prev = 0;
    for (size_t i = 0; i < l->nsegments; i++) {
        const gm_layout_segment_t *g = &l->segments[i];
        layout_put(b, gm__zigzag_u64(g->address - prev));
        prev = g->address;
        layout_put(b, g->size);
        layout_put(b, g->stream);
        layout_put(b, g->stream_index);
        layout_put(b, g->device);
        layout_put(b, (uint64_t)(g->pool | g->expandable << 1));
        layout_put(b, g->nblocks);
        for (size_t k = 0; k < g->nblocks; k++) {
            const gm_layout_block_t *x = &l->blocks[g->first_block + k];
            layout_put(b, x->size);
            layout_put(b, x->requested);
            layout_put(b, (uint64_t)(x->id + 1));
        }
    }
    return b->oom ? GM_ENOMEM : 0;
}

int gm_writer_layout(gm_writer_t *w, const gm_layout_t *layout, gm_error_t *err)
{
    gm_store_t *s;
    int64_t trace_id;
    const char *name;
    if (gm__writer_target(w, &s, &trace_id, &name))
        return gm_error_set(err, GM_ESTATE, "writer of trace '%s' failed earlier", name);
    int rc = gm_layout_validate(layout, err);
    if (rc) {
        gm_error_prefix(err, "trace '%s'", name);
        return err ? (err->code = GM_EINVAL) : GM_EINVAL;
    }
    sqlite3 *db = gm__store_db(s);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM layouts WHERE trace_id = ?1", -1, &st, NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(st);
        return gm__sql_fail(db, gm_store_path(s), sqlite3_errcode(db), "cannot read layouts", err);
    }
    sqlite3_bind_int64(st, 1, trace_id);
    int r = sqlite3_step(st);
    sqlite3_finalize(st);
    if (r == SQLITE_ROW)
        return gm_error_set(err, GM_ESTATE, "trace '%s' already has a layout", name);

    gm__buf_t raw = {0};
    uint8_t *blob = NULL;
    if ((rc = layout_encode(layout, &raw)))
        goto nomem;
    uLongf zlen = compressBound((uLong)raw.n);
    size_t cap = LAYOUT_HDR + 10 + (zlen > raw.n ? zlen : raw.n);
    if ((blob = malloc(cap)) == NULL)
        goto nomem;
    blob[0] = 'G';
    blob[1] = 'L';
    blob[2] = LAYOUT_VERSION;
    gm__buf_t hdr = {0};
    layout_put(&hdr, raw.n);
    if (hdr.oom)
        goto nomem;
    size_t at = LAYOUT_HDR;
    memcpy(blob + at, hdr.p, hdr.n);
    at += hdr.n;
    free(hdr.p);
    int z = compress2(blob + at, &zlen, (const Bytef *)raw.p, (uLong)raw.n, Z_BEST_SPEED);
    if (z == Z_OK && zlen < raw.n) {
        blob[3] = 1;
        at += zlen;
    } else {
        blob[3] = 0;
        memcpy(blob + at, raw.p, raw.n);
        at += raw.n;
    }
    free(raw.p);
    raw.p = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO layouts (trace_id, data) VALUES (?1, ?2)", -1, &st,
                           NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        free(blob);
        return gm__sql_fail(db, gm_store_path(s), sqlite3_errcode(db), "cannot write a layout",
                            err);
    }
    sqlite3_bind_int64(st, 1, trace_id);
    sqlite3_bind_blob(st, 2, blob, (int)at, SQLITE_STATIC);
    r = sqlite3_step(st);
    sqlite3_finalize(st);
    free(blob);
    if (r != SQLITE_DONE) {
        char what[GM_ERROR_MSG_MAX];
        snprintf(what, sizeof what, "cannot write the layout of trace '%s'", name);
        return gm__sql_fail(db, gm_store_path(s), r, what, err);
    }
    return 0;
nomem:
    free(raw.p);
    free(blob);
    return gm_error_set(err, GM_ENOMEM, "out of memory");
}

/* ---- decoding -------------------------------------------------------------- */

typedef struct layout_rd {
    const uint8_t *p, *end;
    int bad;
} layout_rd_t;

static uint64_t layout_get(layout_rd_t *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) {
            r->bad = 1;
            return 0;
        }
        uint8_t c = *r->p++;
        if (shift == 63 && c > 1) {
            r->bad = 1;
            return 0;
        }
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    r->bad = 1;
    return 0;
}

/* Decode a raw encoding into *out (caller frees); 0 or a reason. */
static const char *layout_decode(const uint8_t *p, size_t n, gm_layout_t **out)
{
    layout_rd_t r = {p, p + n, 0};
    uint64_t nseg = layout_get(&r), nblk = layout_get(&r);
    /* every segment takes at least 7 bytes, every block 3 */
    if (r.bad || nseg > n / 7 || nblk > n / 3)
        return "bad counts";
    gm_layout_t *l = calloc(1, sizeof *l);
    if (l == NULL)
        return "out of memory";
    l->segments = calloc(nseg ? nseg : 1, sizeof *l->segments);
    l->blocks = calloc(nblk ? nblk : 1, sizeof *l->blocks);
    if (l->segments == NULL || l->blocks == NULL) {
        gm_layout_free(l);
        return "out of memory";
    }
    uint64_t prev = 0;
    size_t b = 0;
    for (size_t i = 0; i < nseg && !r.bad; i++) {
        gm_layout_segment_t *g = &l->segments[i];
        uint64_t z = layout_get(&r);
        prev += (z >> 1) ^ (~(z & 1) + 1);
        g->address = prev;
        g->size = layout_get(&r);
        g->stream = layout_get(&r);
        uint64_t si = layout_get(&r), dev = layout_get(&r), fl = layout_get(&r),
                 nb = layout_get(&r);
        if (si > UINT32_MAX || dev > UINT16_MAX || fl > 3 || nb > nblk - b) {
            r.bad = 1;
            break;
        }
        g->stream_index = (uint32_t)si;
        g->device = (uint16_t)dev;
        g->pool = (uint8_t)(fl & 1);
        g->expandable = (uint8_t)(fl >> 1);
        g->first_block = b;
        g->nblocks = (size_t)nb;
        uint64_t off = 0;
        for (size_t k = 0; k < nb && !r.bad; k++) {
            gm_layout_block_t *x = &l->blocks[b++];
            x->offset = off;
            x->size = layout_get(&r);
            x->requested = layout_get(&r);
            uint64_t id = layout_get(&r);
            if (x->size > GM_SIZE_LIMIT || id > (uint64_t)INT64_MAX) {
                r.bad = 1;
                break;
            }
            x->id = (int64_t)id - 1;
            off += x->size;
        }
        l->nsegments++;
    }
    l->nblocks = b;
    if (r.bad || b != nblk || r.p != r.end) {
        gm_layout_free(l);
        return "bad encoding";
    }
    *out = l;
    return NULL;
}

int gm_store_layout(gm_store_t *s, const char *name, gm_layout_t **out, gm_error_t *err)
{
    *out = NULL;
    sqlite3 *db = gm__store_db(s);
    sqlite3_stmt *st = NULL;
    int rc = 0;
    const char *why = NULL;
    uint8_t *raw = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT t.id, (SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                           "AND name = 'layouts'), (SELECT count(*) FROM streams WHERE trace_id = "
                           "t.id) FROM traces t WHERE t.name = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        goto dberr;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int r = sqlite3_step(st);
    if (r == SQLITE_DONE) {
        sqlite3_finalize(st);
        return gm_error_set(err, GM_ENOTFOUND, "no trace '%s' in '%s'", name, gm_store_path(s));
    }
    if (r != SQLITE_ROW)
        goto dberr;
    int64_t id = sqlite3_column_int64(st, 0), have_table = sqlite3_column_int64(st, 1),
            nstreams = sqlite3_column_int64(st, 2);
    sqlite3_finalize(st);
    st = NULL;
    if (!have_table) {
        /* A version-1 store has no layouts; a later one must. */
        if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK ||
            sqlite3_step(st) != SQLITE_ROW)
            goto dberr;
        int64_t version = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (version >= 2)
            return gm_error_set(err, GM_ECORRUPT, "'%s': trace '%s': the layouts table is missing",
                                gm_store_path(s), name);
        return 0;
    }
    if (sqlite3_prepare_v2(db, "SELECT data FROM layouts WHERE trace_id = ?1", -1, &st, NULL) !=
        SQLITE_OK)
        goto dberr;
    sqlite3_bind_int64(st, 1, id);
    r = sqlite3_step(st);
    if (r == SQLITE_DONE) {
        sqlite3_finalize(st);
        return 0;
    }
    if (r != SQLITE_ROW)
        goto dberr;
    const uint8_t *blob = sqlite3_column_blob(st, 0);
    size_t n = (size_t)sqlite3_column_bytes(st, 0);
    if (sqlite3_column_type(st, 0) != SQLITE_BLOB || n < LAYOUT_HDR + 1 || blob[0] != 'G' ||
        blob[1] != 'L' || blob[2] != LAYOUT_VERSION || blob[3] > 1) {
        why = "bad header";
        goto corrupt;
    }
    layout_rd_t h = {blob + LAYOUT_HDR, blob + n, 0};
    uint64_t rawlen = layout_get(&h);
    size_t body = (size_t)(h.end - h.p);
    /* zlib expands at most ~1032:1 */
    if (h.bad || (blob[3] == 0 && rawlen != body) ||
        (blob[3] == 1 && rawlen / 1032 > body + 64)) {
        why = "bad length";
        goto corrupt;
    }
    const uint8_t *payload = h.p;
    if (blob[3] == 1) {
        if ((raw = malloc(rawlen ? (size_t)rawlen : 1)) == NULL) {
            sqlite3_finalize(st);
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        }
        uLongf dl = (uLongf)rawlen;
        if (uncompress(raw, &dl, payload, (uLong)body) != Z_OK || dl != rawlen) {
            why = "bad compressed data";
            goto corrupt;
        }
        payload = raw;
    }
    gm_layout_t *l = NULL;
    why = layout_decode(payload, (size_t)rawlen, &l);
    if (why && strcmp(why, "out of memory") == 0) {
        sqlite3_finalize(st);
        free(raw);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    if (why)
        goto corrupt;
    sqlite3_finalize(st);
    st = NULL;
    free(raw);
    raw = NULL;
    gm_error_t verr;
    if (gm_layout_validate(l, &verr)) {
        gm_layout_free(l);
        /* "damaged starting layout: segment ... at ...: ..." */
        return gm_error_set(err, GM_ECORRUPT, "'%s': trace '%s': damaged %s", gm_store_path(s),
                            name, verr.msg);
    }
    for (size_t i = 0; i < l->nsegments; i++) {
        uint32_t si = l->segments[i].stream_index;
        if ((int64_t)si >= nstreams) {
            gm_layout_free(l);
            return gm_error_set(err, GM_ECORRUPT,
                                "'%s': trace '%s': damaged layout: segment %zu names stream "
                                "index %u of %lld",
                                gm_store_path(s), name, i, si, (long long)nstreams);
        }
    }
    *out = l;
    return 0;
corrupt:
    sqlite3_finalize(st);
    free(raw);
    return gm_error_set(err, GM_ECORRUPT, "'%s': trace '%s': damaged layout: %s",
                        gm_store_path(s), name, why);
dberr:
    {
        char what[GM_ERROR_MSG_MAX];
        snprintf(what, sizeof what, "cannot read the layout of trace '%s'", name);
        rc = gm__sql_fail(db, gm_store_path(s), sqlite3_errcode(db), what, err);
    }
    sqlite3_finalize(st);
    return rc;
}
