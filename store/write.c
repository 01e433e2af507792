/*
 * store/write.c — the streaming writer (gm_writer_*, API in gmsim/store.h;
 * the store's files in store/store_int.h).
 *
 * Writer.  gm_writer_begin opens a write transaction (BEGIN IMMEDIATE) that
 * gm_writer_finish commits and anything else rolls back, so no reader ever
 * sees part of a trace.  A writer begun while the connection already has a
 * transaction open (an import target's, store/import.c) joins it: finish
 * does not commit, and a failure rolls the whole transaction back.  The
 * new trace's rows use a fresh id (max + 1); its
 * `traces` row and, with GM_WRITE_REPLACE, the deletion of the old trace
 * happen only in finish, so the old trace stays readable on this connection
 * until then.  Memory is one chunk of events, the codec's buffers, the live
 * set (caller id → slot with stored id and size), and the interned tables;
 * a finished writer's buffers, when they come to 64 KiB or less, stay with
 * the store (emptied) for its next writer.
 *
 * Validation (gm_writer_add): the k-th ALLOC given must carry id k (zero-size
 * ones included); stored ids are renumbered densely over the ALLOCs kept.
 * Zero-size ALLOCs stay in the live set with the mark STORE_DROPPED so that
 * their FREE is dropped too (and a second FREE is still a double free).
 *
 * Digest: MurmurHash3_x64_128 over the canonical content: each chunk's
 * uncompressed columns and directory (gm__chunk_digest), then the interned
 * tables ('S' count handles as 8-byte little-endian, 'T' count then
 * length-prefixed names, 'F' likewise).  It does not depend on zlib, the
 * trace name, its attributes or the time it was written.
 */
#include "gmsim/store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/json.h"
#include "base/bits.h"
#include "base/idmap.h"
#include "base/jsonfmt.h"
#include "base/vec.h"
#include "store/codec.h"
#include "store/sql.h"
#include "store/store.h"
#include "store/store_int.h"

#define STORE_DROPPED UINT64_MAX /* live-set value of a dropped zero-size ALLOC */

/* ---- JSON text (into a base/vec.h byte buffer) ---------------------------- */

/* m in decimal, '-' first if neg, as printf's "%llu" or "%lld" prints it:
 * the text ends at buf + STORE_DECIMAL_MAX (not NUL-terminated); returns
 * its start. */
#define STORE_DECIMAL_MAX 21
static char *store_decimal(char buf[STORE_DECIMAL_MAX], uint64_t m, int neg)
{
    char *p = buf + STORE_DECIMAL_MAX;
    do {
        *--p = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    if (neg)
        *--p = '-';
    return p;
}

/* Append s as a JSON string literal (gm__json_escape_buf: quotes,
 * backslashes and control characters escaped, invalid UTF-8 bytes replaced
 * by U+FFFD).  Out of memory sets b->oom. */
static void store_json_string(gm__buf_t *b, const char *s)
{
    /* Printable ASCII without a quote or a backslash (attribute keys,
     * mostly) is its own literal between quotes. */
    size_t k = 0;
    while (s[k] >= 0x20 && s[k] < 0x7f && s[k] != '"' && s[k] != '\\')
        k++;
    if (s[k] == '\0') {
        if (gm__buf_room(b, k + 2))
            return;
        b->p[b->n] = '"';
        memcpy(b->p + b->n + 1, s, k);
        b->p[b->n + 1 + k] = '"';
        b->n += k + 2;
        b->p[b->n] = '\0';
        return;
    }
    size_t n = gm__json_escape_buf(NULL, 0, s);
    if (gm__buf_room(b, n))
        return;
    gm__json_escape_buf(b->p + b->n, n + 1, s);
    b->n += n;
}

/* ---- interned string tables ---------------------------------------------- */

typedef struct store_strtab {
    char **items;    /* in index order */
    size_t n, cap;
    uint32_t *slots; /* open addressing over items: 0 empty, else position + 1 */
    size_t mask;     /* slots capacity − 1 */
} store_strtab_t;

/* The frames texts are whole stacks, often kilobytes: hashed 8 bytes at
 * a time (a byte at a time was 2.4% of an import's instructions). */
static uint64_t store_strhash(const char *s) { return gm__hash_bytes(s, strlen(s)); }

static void store_strtab_release(store_strtab_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->items[i]);
    free(t->items);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* Position of text in t (interning it if new) into *pos.  0 or GM_ENOMEM. */
static int store_strtab_intern(store_strtab_t *t, const char *text, size_t *pos)
{
    if (t->slots == NULL || 2 * (t->n + 1) > t->mask + 1) {
        size_t cap = t->slots ? 2 * (t->mask + 1) : 64;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (slots == NULL)
            return GM_ENOMEM;
        for (size_t i = 0; i < t->n; i++) {
            size_t j = store_strhash(t->items[i]) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = (uint32_t)(i + 1);
        }
        free(t->slots);
        t->slots = slots;
        t->mask = cap - 1;
    }
    size_t j = store_strhash(text) & t->mask;
    for (; t->slots[j]; j = (j + 1) & t->mask) {
        if (strcmp(t->items[t->slots[j] - 1], text) == 0) {
            *pos = t->slots[j] - 1;
            return 0;
        }
    }
    if (GM_VEC_RESERVE(t->items, t->cap, t->n + 1, 16))
        return GM_ENOMEM;
    char *copy = strdup(text);
    if (copy == NULL)
        return GM_ENOMEM;
    t->items[t->n] = copy;
    t->slots[j] = (uint32_t)(t->n + 1);
    *pos = t->n++;
    return 0;
}

/* ---- writer -------------------------------------------------------------- */

/* An attribute: one block "KEY\0VALUE\0" (val points into it). */
typedef struct store_attr {
    char *key, *val;
} store_attr_t;

typedef struct store_slot {
    uint64_t stored_id;
    uint64_t size; /* the next free slot's index while on the free list */
} store_slot_t;

/* A writer's arrays and tables, each with its capacity: what a parked
 * writer keeps, emptied, for the next one (store_writer_park).  Their
 * counts are the writer's. */
typedef struct store_kept {
    gm_event_t *buf; /* the chunk being filled: room for capbuf events, grown */
    size_t capbuf;   /* up to GM_CHUNK_EVENTS (most traces of an nsys export
                      * hold one event: 40 bytes, not 2.5 MB) */
    gm__idmap_t live; /* caller id → slot index, or STORE_DROPPED */
    store_slot_t *slots;
    size_t capslots;
    uint64_t *streams;
    size_t capstreams;
    gm__idmap_t stream_index; /* handle → index */
    store_attr_t *attrs;      /* in first-set order */
    size_t capattrs;
} store_kept_t;

struct gm_writer {
    gm_store_t *s;
    char *name;
    unsigned flags;
    int failed;
    int joined; /* inside the caller's transaction: finish does not commit */
    int64_t trace_id;
    sqlite3_stmt *ins_chunk;
    gm__codec_t codec;
    gm__digest_t digest;
    store_kept_t kept;
    size_t nbuf; /* events in kept.buf */

    uint64_t position;    /* events given */
    uint64_t caller_next; /* the id the next ALLOC must carry */
    size_t nslots, free_slot; /* free list head, SIZE_MAX if empty */

    uint64_t events, allocs, frees, marks, segs, dropped;
    uint64_t requested, load, chunks, bytes;
    uint64_t chunk_first_alloc; /* stored ALLOCs before the buffered chunk */

    size_t nstreams;
    int64_t stream_max_handle; /* index of handle UINT64_MAX (not an idmap key), or -1 */
    store_strtab_t tags, frames;
    size_t nattrs;
};

/* The chunk buffer doubles from 16 events and so ends at GM_CHUNK_EVENTS. */
_Static_assert(GM_CHUNK_EVENTS >= 16 && (GM_CHUNK_EVENTS & (GM_CHUNK_EVENTS - 1)) == 0,
               "GM_CHUNK_EVENTS is a power of two");

/* A finished writer's buffers are kept by its store for the next writer
 * when they are small, STORE_SPARE_MAX bytes in all: an import of many
 * small traces (an nsys export of 100,000 processes) would otherwise
 * allocate and free some twenty blocks per trace.  Larger ones are freed,
 * so what a store keeps is bounded whatever it has written. */
#define STORE_SPARE_MAX (64 * 1024)

static size_t store_idmap_bytes(const gm__idmap_t *m)
{
    return m->cells ? (m->mask + 1) * sizeof *m->cells : 0;
}

/* The bytes of w's buffers that a spare would keep (SIZE_MAX: zlib's). */
static size_t store_writer_held(const gm_writer_t *w)
{
    if (w->codec.zdef != NULL || w->codec.zinf != NULL)
        return SIZE_MAX;
    size_t n = w->kept.capbuf * sizeof *w->kept.buf + w->kept.capslots * sizeof *w->kept.slots +
               w->kept.capstreams * sizeof *w->kept.streams + store_idmap_bytes(&w->kept.live) +
               store_idmap_bytes(&w->kept.stream_index) + w->kept.capattrs * sizeof *w->kept.attrs +
               w->codec.out_cap + w->codec.raw_cap;
    for (int k = 0; k < GM__COL_COUNT; k++)
        n += w->codec.col_cap[k];
    return n;
}

/* Free w and everything it holds (its statement is the store's). */
void gm__store_writer_destroy(gm_writer_t *w)
{
    gm__codec_release(&w->codec);
    free(w->kept.buf);
    gm__idmap_release(&w->kept.live);
    free(w->kept.slots);
    free(w->kept.streams);
    gm__idmap_release(&w->kept.stream_index);
    store_strtab_release(&w->tags);
    store_strtab_release(&w->frames);
    for (size_t i = 0; i < w->nattrs; i++)
        free(w->kept.attrs[i].key); /* the value is in the same block */
    free(w->kept.attrs);
    free(w->name);
    free(w);
}

/* Make w the store's spare: as calloc and gm_writer_begin's initialization
 * leave a writer, but with the buffers of the codec, the chunk, the live
 * set, the slots, the streams and the attribute arrays kept (empty). */
static void store_writer_park(gm_store_t *s, gm_writer_t *w)
{
    store_strtab_release(&w->tags);
    store_strtab_release(&w->frames);
    for (size_t i = 0; i < w->nattrs; i++)
        free(w->kept.attrs[i].key);
    free(w->name);
    gm__codec_t codec = w->codec; /* encoding sets everything else it reads */
    store_kept_t kept = w->kept;
    memset(w, 0, sizeof *w);
    w->codec = codec;
    w->kept = kept;
    gm__idmap_clear(&w->kept.live);
    gm__idmap_clear(&w->kept.stream_index);
    s->spare = w;
}

static void store_writer_free(gm_writer_t *w)
{
    gm_store_t *s = w->s;
    if (s) {
        s->writer_active = 0;
        gm__store_release_kept(s, w->ins_chunk);
    } else {
        sqlite3_finalize(w->ins_chunk);
    }
    w->ins_chunk = NULL;
    if (s && s->spare == NULL && store_writer_held(w) <= STORE_SPARE_MAX)
        store_writer_park(s, w);
    else
        gm__store_writer_destroy(w);
}

int gm_writer_begin(gm_store_t *s, const char *name, unsigned flags, gm_writer_t **out,
                    gm_error_t *err)
{
    return gm__writer_begin_in(s, name, flags, 0, 0, out, err);
}

int gm__writer_begin_in(gm_store_t *s, const char *name, unsigned flags, int64_t trace_id,
                        int name_free, gm_writer_t **out, gm_error_t *err)
{
    *out = NULL;
    if (name == NULL || *name == '\0')
        return gm_error_set(err, GM_EINVAL, "trace name is empty");
    int rc = gm__store_can_write(s, err, "write trace '%s'", name);
    if (rc)
        return rc;
    gm_writer_t *w = s->spare;
    if (w != NULL) {
        s->spare = NULL;
    } else {
        if ((w = calloc(1, sizeof *w)) == NULL)
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        gm__codec_init(&w->codec, GM__CHUNK_LEVEL);
        gm__idmap_init(&w->kept.live);
        gm__idmap_init(&w->kept.stream_index);
    }
    gm__digest_init(&w->digest);
    w->stream_max_handle = -1;
    w->free_slot = SIZE_MAX;
    w->flags = flags;
    if ((w->name = strdup(name)) == NULL) {
        store_writer_free(w);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }

    w->joined = !sqlite3_get_autocommit(s->db);
    rc = w->joined ? 0 : store_begin(s, err);
    if (rc) {
        store_writer_free(w);
        return rc;
    }
    w->s = s;
    s->writer_active = 1;
    int64_t v;
    rc = name_free ? 0 : gm__store_name_id(s, name, &v, err);
    if (rc > 0 && !(flags & GM_WRITE_REPLACE))
        rc = gm_error_set(err, GM_EEXIST, "trace '%s' already exists in '%s'", name, s->path);
    if (rc < 0)
        goto fail;
    /* Above every id in use, orphan rows' too (a trace row deleted by hand
     * with foreign keys off leaves its chunks): the new rows never collide
     * with them.  Each max() is one lookup in a primary key.  An import
     * target gives the id that follows its previous trace's instead (the
     * same: nothing else writes in its transaction). */
    w->trace_id = trace_id;
    if (trace_id <= 0) {
        sqlite3_stmt *next;
        if ((rc = gm__store_query(s, STORE_Q_NEXT_ID, &next, err)))
            goto fail;
        rc = sqlite3_step(next);
        w->trace_id = sqlite3_column_int64(next, 0);
        store_query_done(next);
        if (rc != SQLITE_ROW) {
            rc = store_fail(s, err, rc, "query failed");
            goto fail;
        }
    }
    if ((rc = gm__store_prepare_kept(s,
                                     "INSERT INTO chunks (trace_id, seq, first_event, nevents, "
                                     "first_alloc, nallocs, data, crc) VALUES (?1, ?2, ?3, ?4, "
                                     "?5, ?6, ?7, ?8)",
                                     &w->ins_chunk, err)))
        goto fail;
    *out = w;
    return 0;
fail:
    store_rollback(s);
    store_writer_free(w);
    return rc;
}

/* Mark w failed with the error already in err. */
static int store_writer_failed(gm_writer_t *w, int rc)
{
    w->failed = 1;
    return rc;
}

int gm_writer_stream(gm_writer_t *w, uint64_t handle, uint32_t *index, gm_error_t *err)
{
    if (w->failed)
        return gm_error_set(err, GM_ESTATE, "writer of trace '%s' failed earlier", w->name);
    uint64_t v;
    int known = handle == UINT64_MAX ? w->stream_max_handle >= 0
                                     : gm__idmap_get(&w->kept.stream_index, handle, &v);
    if (known) {
        *index = handle == UINT64_MAX ? (uint32_t)w->stream_max_handle : (uint32_t)v;
        return 0;
    }
    if (w->nstreams >= UINT32_MAX)
        return gm_error_set(err, GM_EINVAL, "trace '%s': too many streams", w->name);
    if (GM_VEC_RESERVE(w->kept.streams, w->kept.capstreams, w->nstreams + 1, 8))
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    if (handle == UINT64_MAX)
        w->stream_max_handle = (int64_t)w->nstreams;
    else if (gm__idmap_put(&w->kept.stream_index, handle, w->nstreams))
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    w->kept.streams[w->nstreams] = handle;
    *index = (uint32_t)w->nstreams++;
    return 0;
}

static int store_writer_intern(gm_writer_t *w, store_strtab_t *t, const char *text,
                               uint32_t base, uint32_t *index, const char *what, gm_error_t *err)
{
    if (w->failed)
        return gm_error_set(err, GM_ESTATE, "writer of trace '%s' failed earlier", w->name);
    if (text == NULL)
        return gm_error_set(err, GM_EINVAL, "trace '%s': no %s text given", w->name, what);
    if (t->n >= UINT32_MAX - 1)
        return gm_error_set(err, GM_EINVAL, "trace '%s': too many %s", w->name, what);
    size_t pos;
    if (store_strtab_intern(t, text, &pos))
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    *index = (uint32_t)pos + base;
    return 0;
}

int gm_writer_tag(gm_writer_t *w, const char *name, uint32_t *index, gm_error_t *err)
{
    return store_writer_intern(w, &w->tags, name, 0, index, "tag", err);
}

int gm_writer_frames(gm_writer_t *w, const char *text, uint32_t *index, gm_error_t *err)
{
    return store_writer_intern(w, &w->frames, text, 1, index, "frames", err);
}

/* Set attribute key to the JSON text value[0 .. len) (copied). */
static int store_writer_attr(gm_writer_t *w, const char *key, const char *value, size_t len,
                             gm_error_t *err)
{
    if (w->failed)
        return gm_error_set(err, GM_ESTATE, "writer of trace '%s' failed earlier", w->name);
    if (key == NULL || *key == '\0')
        return gm_error_set(err, GM_EINVAL, "trace '%s': attribute key is empty", w->name);
    size_t klen = strlen(key);
    char *k = malloc(klen + len + 2);
    if (k == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    memcpy(k, key, klen + 1);
    char *v = k + klen + 1;
    memcpy(v, value, len);
    v[len] = '\0';
    for (size_t i = 0; i < w->nattrs; i++) {
        if (strcmp(w->kept.attrs[i].key, key) == 0) {
            free(w->kept.attrs[i].key);
            w->kept.attrs[i] = (store_attr_t){k, v};
            return 0;
        }
    }
    if (GM_VEC_RESERVE(w->kept.attrs, w->kept.capattrs, w->nattrs + 1, 8)) {
        free(k);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    w->kept.attrs[w->nattrs++] = (store_attr_t){k, v};
    return 0;
}

int gm_writer_attr_json(gm_writer_t *w, const char *key, const char *json_value, gm_error_t *err)
{
    /* one level less: the value sits in the trace's attrs object */
    if (json_value == NULL || !store_json_valid(json_value, GM_JSON_MAX_DEPTH - 1))
        return gm_error_set(err, GM_EINVAL, "trace '%s': attribute '%s' is not one JSON value",
                            w->name, key ? key : "");
    /* kept without the whitespace around it */
    const char *start = store_json_ws(json_value);
    size_t len = strlen(start);
    while (len && strchr(" \t\n\r", start[len - 1]))
        len--;
    return store_writer_attr(w, key, start, len, err);
}

int gm_writer_attr_str(gm_writer_t *w, const char *key, const char *value, gm_error_t *err)
{
    if (value == NULL)
        return store_writer_attr(w, key, "null", 4, err);
    gm__buf_t b = {0};
    store_json_string(&b, value);
    if (b.oom) {
        free(b.p);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    int rc = store_writer_attr(w, key, b.p, b.n, err);
    free(b.p);
    return rc;
}

int gm_writer_attr_int(gm_writer_t *w, const char *key, int64_t value, gm_error_t *err)
{
    /* what "%lld" prints, without printf's machinery (an nsys import sets
     * three of these per process) */
    char num[STORE_DECIMAL_MAX];
    const char *p =
        store_decimal(num, value < 0 ? 0 - (uint64_t)value : (uint64_t)value, value < 0);
    return store_writer_attr(w, key, p, (size_t)(num + sizeof num - p), err);
}

uint64_t gm_writer_position(const gm_writer_t *w) { return w->position; }

int gm__writer_target(gm_writer_t *w, gm_store_t **s, int64_t *trace_id, const char **name)
{
    *s = w->s;
    *trace_id = w->trace_id;
    *name = w->name;
    return w->failed ? -1 : 0;
}

/* The buffered events encoded (blob and len point into the codec, valid
 * until its next use) and fed into the digest. */
static int store_writer_encode(gm_writer_t *w, const uint8_t **blob, size_t *len,
                               uint64_t *nallocs, gm_error_t *err)
{
    int rc = gm__chunk_encode(&w->codec, w->kept.buf, w->nbuf, w->chunk_first_alloc, blob, len,
                              nallocs, err);
    if (rc) {
        gm_error_prefix(err, "trace '%s' chunk %llu", w->name, (unsigned long long)w->chunks);
        return rc;
    }
    gm__chunk_digest(&w->codec, &w->digest);
    return 0;
}

/* Insert the encoded buffered events as the next chunk. */
static int store_writer_insert_chunk(gm_writer_t *w, const uint8_t *blob, size_t len,
                                     uint64_t nallocs, gm_error_t *err)
{
    sqlite3_stmt *st = w->ins_chunk;
    sqlite3_bind_int64(st, 1, w->trace_id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)w->chunks);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)(w->events - w->nbuf));
    sqlite3_bind_int64(st, 4, (sqlite3_int64)w->nbuf);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)w->chunk_first_alloc);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)nallocs);
    sqlite3_bind_blob(st, 7, blob, (int)len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, (sqlite3_int64)gm__chunk_crc(blob, len));
    int r = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (r != SQLITE_DONE)
        return store_fail(w->s, err, r, "cannot write a chunk");
    w->chunks++;
    w->bytes += len;
    w->chunk_first_alloc += nallocs;
    w->nbuf = 0;
    return 0;
}

/* Encode and insert the buffered events as the next chunk. */
static int store_writer_flush(gm_writer_t *w, gm_error_t *err)
{
    if (w->nbuf == 0)
        return 0;
    const uint8_t *blob;
    size_t len;
    uint64_t nallocs;
    int rc = store_writer_encode(w, &blob, &len, &nallocs, err);
    return rc ? rc : store_writer_insert_chunk(w, blob, len, nallocs, err);
}

/* The error of event w->position: "trace 'NAME': event N: ...". */
static int store_reject(gm_writer_t *w, gm_error_t *err, const char *fmt, ...) GM_PRINTF(3, 4);
static int store_reject(gm_writer_t *w, gm_error_t *err, const char *fmt, ...)
{
    char msg[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w->failed = 1;
    return gm_error_set(err, GM_EFORMAT, "event %llu: %s", (unsigned long long)w->position, msg);
}

static int store_slot_new(gm_writer_t *w, uint64_t stored_id, uint64_t size, size_t *slot)
{
    if (w->free_slot != SIZE_MAX) {
        *slot = w->free_slot;
        w->free_slot = (size_t)w->kept.slots[*slot].size;
    } else {
        if (GM_VEC_RESERVE(w->kept.slots, w->kept.capslots, w->nslots + 1, 1024))
            return GM_ENOMEM;
        *slot = w->nslots++;
    }
    w->kept.slots[*slot] = (store_slot_t){stored_id, size};
    return 0;
}

int gm_writer_add(gm_writer_t *w, const gm_event_t *ev, gm_error_t *err)
{
    if (w->failed)
        return gm_error_set(err, GM_ESTATE, "writer of trace '%s' failed earlier", w->name);
    /* below GM_CHUNK_EVENTS: a full chunk is flushed */
    if (GM_VEC_RESERVE(w->kept.buf, w->kept.capbuf, w->nbuf + 1, 16))
        goto nomem;
    gm_event_t e = *ev;
    uint64_t v;
    if (e.op >= GM_OP_COUNT)
        return store_reject(w, err, "unknown op %u", e.op);
    if (e.stream != 0 && e.stream >= w->nstreams)
        return store_reject(w, err, "stream index %u was never interned", e.stream);
    if ((e.tag != 0 || e.op == GM_OP_MARK) && e.tag >= w->tags.n)
        return store_reject(w, err, "tag index %u was never interned", e.tag);
    if (e.frames != 0 && e.frames > w->frames.n)
        return store_reject(w, err, "frames index %u was never interned", e.frames);

    switch (e.op) {
    case GM_OP_ALLOC:
        if (e.id != w->caller_next)
            return store_reject(w, err, "alloc id %llu out of order, expected %llu",
                                (unsigned long long)e.id, (unsigned long long)w->caller_next);
        if (e.size > GM_SIZE_LIMIT)
            return store_reject(w, err, "size %llu above the 2^48 limit",
                                (unsigned long long)e.size);
        if (e.size > GM_LIVE_LIMIT - w->requested)
            return store_reject(w, err, "live requested bytes would pass the 2^62 limit");
        if (e.size == 0) {
            if (gm__idmap_put(&w->kept.live, e.id, STORE_DROPPED))
                goto nomem;
            w->caller_next++;
            w->dropped++;
            w->position++;
            return 0;
        } else {
            size_t slot;
            if (store_slot_new(w, w->allocs, e.size, &slot))
                goto nomem;
            if (gm__idmap_put(&w->kept.live, e.id, slot)) {
                w->kept.slots[slot].size = w->free_slot;
                w->free_slot = slot;
                goto nomem;
            }
            w->caller_next++;
            e.id = w->allocs++;
            w->requested += e.size;
            if (w->requested > w->load)
                w->load = w->requested;
        }
        break;
    case GM_OP_FREE:
        if (e.id >= w->caller_next)
            return store_reject(w, err, "free of unknown id %llu", (unsigned long long)e.id);
        if (!gm__idmap_remove(&w->kept.live, e.id, &v))
            return store_reject(w, err, "double free of id %llu", (unsigned long long)e.id);
        if (v == STORE_DROPPED) {
            w->position++;
            return 0;
        }
        e.id = w->kept.slots[v].stored_id;
        w->requested -= w->kept.slots[v].size;
        w->kept.slots[v].size = w->free_slot;
        w->free_slot = (size_t)v;
        w->frees++;
        break;
    case GM_OP_MARK:
        w->marks++;
        break;
    default:
        if (e.size > GM_SIZE_LIMIT)
            return store_reject(w, err, "size %llu above the 2^48 limit",
                                (unsigned long long)e.size);
        w->segs++;
        break;
    }
    w->kept.buf[w->nbuf++] = e;
    w->events++;
    w->position++;
    if (w->nbuf == GM_CHUNK_EVENTS) {
        int rc = store_writer_flush(w, err);
        if (rc)
            return store_writer_failed(w, rc);
    }
    return 0;
nomem:
    return store_writer_failed(w, gm_error_set(err, GM_ENOMEM, "out of memory"));
}

/* Feed the interned tables into the digest (see the file comment). */
static void store_digest_tables(gm_writer_t *w)
{
    uint8_t b[9];
    b[0] = 'S';
    for (int i = 0; i < 8; i++)
        b[1 + i] = (uint8_t)((uint64_t)w->nstreams >> (8 * i));
    gm__digest_update(&w->digest, b, 9);
    for (size_t k = 0; k < w->nstreams; k++) {
        for (int i = 0; i < 8; i++)
            b[i] = (uint8_t)(w->kept.streams[k] >> (8 * i));
        gm__digest_update(&w->digest, b, 8);
    }
    const store_strtab_t *tabs[2] = {&w->tags, &w->frames};
    for (int t = 0; t < 2; t++) {
        b[0] = t == 0 ? 'T' : 'F';
        for (int i = 0; i < 8; i++)
            b[1 + i] = (uint8_t)((uint64_t)tabs[t]->n >> (8 * i));
        gm__digest_update(&w->digest, b, 9);
        for (size_t k = 0; k < tabs[t]->n; k++) {
            uint64_t len = strlen(tabs[t]->items[k]);
            for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(len >> (8 * i));
            gm__digest_update(&w->digest, b, 8);
            gm__digest_update(&w->digest, tabs[t]->items[k], (size_t)len);
        }
    }
}

/* Insert the interned tables' rows. */
static int store_write_tables(gm_writer_t *w, gm_error_t *err)
{
    gm_store_t *s = w->s;
    sqlite3_stmt *st;
    int rc = gm__store_query(s, STORE_Q_INS_STREAM, &st, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < w->nstreams; i++) {
        sqlite3_bind_int64(st, 1, w->trace_id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)w->kept.streams[i]);
        int r = sqlite3_step(st);
        sqlite3_reset(st);
        if (r != SQLITE_DONE) {
            store_query_done(st);
            return store_fail(s, err, r, "cannot write streams");
        }
    }
    store_query_done(st);
    static const int query[2] = {STORE_Q_INS_TAG, STORE_Q_INS_FRAME};
    const store_strtab_t *tabs[2] = {&w->tags, &w->frames};
    for (int t = 0; t < 2; t++) {
        if ((rc = gm__store_query(s, query[t], &st, err)))
            return rc;
        for (size_t i = 0; i < tabs[t]->n; i++) {
            sqlite3_bind_int64(st, 1, w->trace_id);
            sqlite3_bind_int64(st, 2, (sqlite3_int64)(i + (size_t)t));
            sqlite3_bind_text(st, 3, tabs[t]->items[i], -1, SQLITE_STATIC);
            int r = sqlite3_step(st);
            sqlite3_reset(st);
            if (r != SQLITE_DONE) {
                store_query_done(st);
                return store_fail(s, err, r, t == 0 ? "cannot write tags" : "cannot write frames");
            }
        }
        store_query_done(st);
    }
    return 0;
}

/* The attrs JSON object: the attributes in first-set order, then
 * dropped_zero_size (or in its place if the caller set it). */
static char *store_attrs_json(const gm_writer_t *w)
{
    gm__buf_t b = {0};
    char numbuf[STORE_DECIMAL_MAX];
    const char *numstart = store_decimal(numbuf, w->dropped, 0);
    size_t numlen = (size_t)(numbuf + sizeof numbuf - numstart);
    int have_dropped = 0;
    gm__buf_room(&b, 255); /* most objects fit */
    gm__buf_str(&b, "{");
    for (size_t i = 0; i < w->nattrs; i++) {
        if (i)
            gm__buf_str(&b, ", ");
        store_json_string(&b, w->kept.attrs[i].key);
        gm__buf_str(&b, ": ");
        if (strcmp(w->kept.attrs[i].key, "dropped_zero_size") == 0) {
            gm__buf_add(&b, numstart, numlen);
            have_dropped = 1;
        } else {
            gm__buf_str(&b, w->kept.attrs[i].val);
        }
    }
    if (!have_dropped) {
        gm__buf_str(&b, w->nattrs ? ", \"dropped_zero_size\": " : "\"dropped_zero_size\": ");
        gm__buf_add(&b, numstart, numlen);
    }
    gm__buf_str(&b, "}");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

int gm_writer_finish(gm_writer_t *w, gm_error_t *err)
{
    gm_store_t *s = w->s;
    int rc;
    char *attrs = NULL;
    if (w->failed) {
        rc = gm_error_set(err, GM_ESTATE, "writer of trace '%s' failed earlier", w->name);
        goto fail;
    }
    /* The last chunk is encoded (it completes the digest) but inserted
     * after the summary row, with the interned tables.  A row inserted
     * before its trace row is a deferred foreign-key violation, which
     * SQLite settles when the trace row comes by searching each of the
     * five tables that refer to traces; inserted after it, each row costs
     * one lookup of its trace.  (A trace of several chunks still inserts
     * all but the last before.) */
    const uint8_t *blob = NULL;
    size_t len = 0;
    uint64_t nallocs = 0;
    if (w->nbuf > 0 && (rc = store_writer_encode(w, &blob, &len, &nallocs, err)))
        goto fail;
    store_digest_tables(w);
    char digest[33];
    gm__digest_final(&w->digest, digest);
    if ((attrs = store_attrs_json(w)) == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto fail;
    }
    if (w->flags & GM_WRITE_REPLACE) {
        int64_t old;
        rc = gm__store_name_id(s, w->name, &old, err);
        if (rc < 0 || (rc > 0 && (rc = gm__store_delete_id(s, old, err))))
            goto fail;
    }
    sqlite3_stmt *st;
    if ((rc = gm__store_query(s, STORE_Q_INS_TRACE, &st, err)))
        goto fail;
    sqlite3_bind_int64(st, 1, w->trace_id);
    sqlite3_bind_text(st, 2, w->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)w->events);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)w->allocs);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)w->frees);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)w->marks);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)w->segs);
    sqlite3_bind_int64(st, 8, (sqlite3_int64)w->load);
    sqlite3_bind_int64(st, 9, (sqlite3_int64)(w->allocs - w->frees));
    sqlite3_bind_int64(st, 10, (sqlite3_int64)(w->chunks + (w->nbuf > 0)));
    sqlite3_bind_int64(st, 11, (sqlite3_int64)(w->bytes + len));
    sqlite3_bind_text(st, 12, digest, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 13, attrs, -1, SQLITE_STATIC);
    const char *created = gm__store_created(s);
    if (created == NULL) {
        store_query_done(st);
        rc = gm_error_set(err, GM_EIO, "'%s': cannot read the clock", s->path);
        goto fail;
    }
    sqlite3_bind_text(st, 14, created, -1, SQLITE_STATIC);
    int r = sqlite3_step(st);
    store_query_done(st);
    if (r != SQLITE_DONE) {
        rc = store_fail(s, err, r, "cannot write the trace summary");
        goto fail;
    }
    if ((w->nbuf > 0 && (rc = store_writer_insert_chunk(w, blob, len, nallocs, err))) ||
        (rc = store_write_tables(w, err)))
        goto fail;
    if (!w->joined && (rc = store_commit(s, err)))
        goto fail;
    free(attrs);
    store_writer_free(w);
    return 0;
fail:
    free(attrs);
    store_rollback(s);
    store_writer_free(w);
    return rc;
}

void gm_writer_abort(gm_writer_t *w)
{
    if (w == NULL)
        return;
    store_rollback(w->s);
    store_writer_free(w);
}
