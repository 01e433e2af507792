/*
 * store/codec.h — the chunk codec: up to GM_CHUNK_EVENTS events to one
 * self-contained blob and back (format in store/codec.c and docs/store.md).
 *
 * A chunk decodes on its own given one number kept beside it in the chunks
 * table: `first_alloc`, the stored ordinal of the chunk's first ALLOC (the
 * number of ALLOCs in the chunks before it).  ALLOC ids are implicit
 * (first_alloc, first_alloc + 1, …); a FREE stores the age of its allocation.
 *
 * The encoder accepts exactly the events a store holds: op < GM_OP_COUNT,
 * ALLOC ids in ordinal order with 1 <= size <= GM_SIZE_LIMIT, FREE ids below
 * the number of ALLOCs so far, SEG_* sizes <= GM_SIZE_LIMIT; every other
 * field is kept verbatim.  The decoder accepts any byte string and either
 * returns such events or GM_ECORRUPT, so decode → encode → decode is the
 * identity on events.
 *
 * A gm__codec_t holds the reusable buffers and zlib streams; one per writer
 * or reader, not shared between threads.
 */
#ifndef GM_STORE_CODEC_H
#define GM_STORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"
#include "gmsim/store.h"
#include "gmsim/trace.h"

#define GM__CHUNK_VERSION 1

/* zlib level the store writes with.  Measured on the 10 M-event workload of
 * gm_workload (seed 1) on this 2-core x86-64: levels 1, 4, 6, 9 give 3.46,
 * 3.37, 3.30, 3.27 bytes an event, encode at 11.5, 7.9, 3.7, 1.2 M events/s,
 * and decode at the same speed within noise (43-46 M events/s); on µs-timed
 * traces (more columns worth compressing) 1.92, 1.80, 1.74 bytes an event
 * for 1, 4, 6.  Level 4 is the first with lazy matching: within 3% of 6 on
 * size at twice its write speed. */
#define GM__CHUNK_LEVEL 4

/* Columns of a chunk, in the order they are laid out. */
enum {
    GM__COL_MAIN,   /* (payload << 3) | op */
    GM__COL_TS,     /* (ts delta − chunk's smallest delta) / chunk's scale */
    GM__COL_STREAM, /* zigzag 32-bit delta of stream, ALLOC/FREE only */
    GM__COL_DEVICE, /* optional: device */
    GM__COL_ADDR,   /* optional: zigzag delta of addr */
    GM__COL_FRAMES, /* optional: frames */
    GM__COL_FLAGS,  /* optional: flags, one byte */
    GM__COL_AUX,    /* optional: the fields the op does not use */
    GM__COL_COUNT
};
#define GM__COL_FIRST_OPTIONAL GM__COL_DEVICE

typedef struct gm__codec {
    int level;                   /* zlib level for encoding */
    void *zdef;                  /* z_stream for deflate, made on first encode */
    void *zinf;                  /* z_stream for inflate, made on first decode */
    uint8_t *col[GM__COL_COUNT]; /* encoder: column scratch */
    size_t col_cap[GM__COL_COUNT];
    uint8_t *raw;                /* decoder: the columns, uncompressed */
    size_t raw_cap;
    uint8_t *out;                /* encoder: the last blob */
    size_t out_cap;
    /* The last chunk encoded or decoded, for gm__chunk_digest. */
    size_t last_n;
    unsigned last_mask;
    uint64_t last_ts_first, last_ts_min, last_ts_scale;
    const uint8_t *last_col[GM__COL_COUNT];
    size_t last_len[GM__COL_COUNT];
    /* Decoder: bounds on the interned indices of the last chunk decoded, so
     * that the store checks them against its tables without another pass
     * over the events: the bitwise OR of the events' streams, of their tags,
     * of each MARK's tag + 1 (0 without MARKs), and of their frames.  An OR
     * is at least the largest value: OR < limit proves every value is. */
    uint64_t or_stream, or_tag, or_mark, or_frames;
} gm__codec_t;

/* Initialize with a zlib level (1-9; anything else means GM__CHUNK_LEVEL).
 * Allocates nothing until used. */
void gm__codec_init(gm__codec_t *c, int level);
void gm__codec_release(gm__codec_t *c);

/*
 * Encode n events (n <= GM_CHUNK_EVENTS) whose first ALLOC has ordinal
 * first_alloc.  On success *blob and *len give the blob (in c, valid until
 * the next call on c) and *nallocs (may be NULL) the number of ALLOCs.
 * Fails with GM_EINVAL and "event I: REASON" (I the index in ev) for an
 * event the format cannot hold, GM_ENOMEM, or GM_EIO on a zlib failure.
 */
int gm__chunk_encode(gm__codec_t *c, const gm_event_t *ev, size_t n, uint64_t first_alloc,
                     const uint8_t **blob, size_t *len, uint64_t *nallocs, gm_error_t *err);

/*
 * Decode a blob into out (room for cap events; GM_CHUNK_EVENTS always
 * suffices).  *n receives the event count and *nallocs (may be NULL) the
 * number of ALLOCs.  Any malformed input is GM_ECORRUPT with "event I: REASON"
 * (I the index in the chunk) or "chunk header: REASON" / "chunk data: REASON";
 * GM_ENOMEM if buffers cannot grow.  Never reads outside blob[0..len), never
 * allocates more than a bound set by GM_CHUNK_EVENTS.  out may be partly
 * written on failure.
 */
int gm__chunk_decode(gm__codec_t *c, const uint8_t *blob, size_t len, uint64_t first_alloc,
                     gm_event_t *out, size_t cap, size_t *n, uint64_t *nallocs,
                     gm_error_t *err);

/* The checksum stored beside each chunk (docs/store.md): CRC-32 (zlib's
 * crc32, the polynomial of gzip and PNG) of the encoded blob as stored.
 * Checked on every read, before decoding. */
uint32_t gm__chunk_crc(const uint8_t *blob, size_t len);

/* Event count in a blob's header, or -1 if the header is malformed. */
long gm__chunk_peek(const uint8_t *blob, size_t len);

/* ---- 128-bit content digest (MurmurHash3_x64_128, seed 0, streamed) ---- */

typedef struct gm__digest {
    uint64_t h1, h2; /* running state (both the seed at the start) */
    uint64_t total;  /* bytes fed */
    uint8_t buf[16]; /* pending tail */
    unsigned nbuf;
} gm__digest_t;

void gm__digest_init(gm__digest_t *d);
void gm__digest_update(gm__digest_t *d, const void *data, size_t len);
/* 32 lowercase hex digits and a NUL into hex[33]. */
void gm__digest_final(gm__digest_t *d, char hex[33]);

/* Feed the canonical content of the last chunk encoded or decoded by c into
 * d: its event count, column mask, time parameters, column lengths and
 * uncompressed columns — everything but zlib's output, so that the digest
 * does not depend on the zlib version or on which columns were compressed. */
void gm__chunk_digest(const gm__codec_t *c, gm__digest_t *d);

#endif
