/*
 * store/codec.c — the chunk codec (see codec.h; docs/store.md for users).
 *
 * Blob layout (varints are unsigned LEB128: 7 bits a byte, low bits first,
 * high bit set on every byte but the last; at most 10 bytes):
 *
 *   'G' 'C' version(1)
 *   varint nevents                 at most GM_CHUNK_EVENTS
 *   mask                           one byte: bit k set when optional column
 *                                  GM__COL_DEVICE + k is present (k = 0..4)
 *   varint ts_first                time stamp of the first event (0 if none)
 *   varint zigzag(ts_min)          the smallest time delta in the chunk
 *   varint ts_scale                >= 1: divides every delta − ts_min
 *   for each present column:       (MAIN, TS, STREAM always; then the mask's)
 *     varint raw_len               its length uncompressed
 *     varint stored_len            its length in the blob: equal to raw_len
 *                                  when stored as is, else the length of a
 *                                  zlib stream (RFC 1950) of the column
 *   the present columns' stored bytes, in order, to the end of the blob
 *
 * Columns, one value per event in event order (ALLOC/FREE only for STREAM):
 *
 *   MAIN    varint (payload << 3) | op, payload by op:
 *             ALLOC  size (1 .. 2^48); the id is implicit: first_alloc + the
 *                    number of ALLOCs before it in the chunk
 *             FREE   age = allocs_before − 1 − id, allocs_before counting
 *                    every ALLOC before this event in the trace (0 frees the
 *                    latest allocation)
 *             MARK   tag
 *             SEG_*  size (0 .. 2^48)
 *   TS      varint q, ts − previous ts = ts_min + q × ts_scale (64-bit
 *           wrapping); "previous" is ts_first − ts_min for the first event,
 *           whose q is 0
 *   STREAM  varint zigzag32(stream − previous stream), 32-bit wrapping,
 *           previous 0 at the chunk start
 *   DEVICE  varint device                      (present if any device != 0)
 *   ADDR    varint zigzag(addr − previous addr), over every event, from 0
 *   FRAMES  varint frames
 *   FLAGS   one byte flags
 *   AUX     the fields the op does not use, as varints: ALLOC tag; FREE size,
 *           tag; MARK id, size, stream; SEG_* id, stream, tag
 *
 * zigzag(d) = (d << 1) ^ (d >> 63, arithmetic) maps small negative deltas to
 * small numbers.  Time deltas are stored above the chunk's smallest one,
 * which needs no sign bit (time mostly runs forward, but need not), and
 * divided by their gcd: traces timed in µs (PyTorch's time_us) then cost a
 * byte a time stamp, not two.
 *
 * Compression is chosen per column: zlib at the codec's level (GM__CHUNK_LEVEL
 * in the store, measurements in codec.h) when it saves at least a quarter of
 * the column (CODEC_ZLIB_GAIN), else the column is stored.
 * Measured on 10 M-event random workloads (this machine, one core): inflate
 * runs at ~3.5 ns per output byte against ~0.1 for a copy, and near-random
 * columns (ns-jittered time deltas) shrink by only ~10%, so inflating them
 * would cost a third of the decode time for 0.2 byte an event.
 *
 * Decoder invariants, whatever the input: reads stay inside the blob; the
 * columns are copied or inflated into one buffer followed by CODEC_SLACK
 * zero bytes; a cursor is checked against its column's end after every
 * event and one event reads at most 38 bytes from a column (three 10-byte
 * varints, the last by an 8-byte load), so the unchecked varint reader never
 * leaves the buffer; allocation is bounded by the per-column maxima
 * (codec_col_max × nevents, nevents <= GM_CHUNK_EVENTS) and zlib's largest
 * ratio; every event returned passes the encoder's checks.  Varints longer
 * than 10 bytes are cut at 10 bytes (the value is then garbage, but range
 * checks still apply), so no input makes the decoder loop or overflow.
 */
#include "store/codec.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/bits.h"
#include "base/vec.h"

#define CODEC_MAGIC0 'G'
#define CODEC_MAGIC1 'C'

/* Largest bytes one event can take in each column. */
static const unsigned codec_col_max[GM__COL_COUNT] = {10, 10, 5, 3, 10, 5, 1, 30};
/* Zero bytes after the decoded columns: one event reads at most 3 varints
 * of 10 bytes from a column, the last with an 8-byte load, before its
 * cursor is checked. */
#define CODEC_SLACK 64u
#define CODEC_MASK_ALL 0x1fu
#define CODEC_AGE_LIMIT (UINT64_C(1) << 61)
/* Compress a column only if zlib saves a quarter of it, and only columns
 * of at least CODEC_ZLIB_MIN bytes (zlib's own overhead is ~10 bytes). */
#define CODEC_ZLIB_GAIN(raw) ((raw) - (raw) / 4)
#define CODEC_ZLIB_MIN 64u
/* Largest directory: magic, version, n, mask, 3 varints, 8 × 2 varints. */
#define CODEC_DIR_MAX (3u + 10u + 1u + 30u + 16u * 10u)

#if defined(__GNUC__)
#define CODEC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CODEC_LIKELY(x) __builtin_expect(!!(x), 1)
#define CODEC_INLINE static inline __attribute__((always_inline))
#else
#define CODEC_UNLIKELY(x) (x)
#define CODEC_LIKELY(x) (x)
#define CODEC_INLINE static inline
#endif

static inline int codec_present(unsigned mask, int k)
{
    return k < GM__COL_FIRST_OPTIONAL || (mask >> (k - GM__COL_FIRST_OPTIONAL) & 1u);
}

void gm__codec_init(gm__codec_t *c, int level)
{
    memset(c, 0, sizeof *c);
    c->level = level < 1 || level > 9 ? GM__CHUNK_LEVEL : level;
}

void gm__codec_release(gm__codec_t *c)
{
    if (c->zdef) {
        deflateEnd(c->zdef);
        free(c->zdef);
    }
    if (c->zinf) {
        inflateEnd(c->zinf);
        free(c->zinf);
    }
    for (int k = 0; k < GM__COL_COUNT; k++)
        free(c->col[k]);
    free(c->raw);
    free(c->out);
    memset(c, 0, sizeof *c);
}

/* Make *buf hold at least need bytes.  0 or GM_ENOMEM (buffer unchanged). */
static int codec_reserve(uint8_t **buf, size_t *cap, size_t need)
{
    return GM_VEC_RESERVE(*buf, *cap, need, 256);
}

/* ---- varints ------------------------------------------------------------- */

/* Read a varint of at most 10 bytes, without a bound: the caller guarantees
 * 10 readable bytes at *pp (the column block's slack) and checks its cursor
 * against the column end afterwards.  Longer varints are cut at 10 bytes. */
static uint64_t codec_get_slow(const uint8_t **pp)
{
    const uint8_t *p = *pp;
    uint64_t b, v = 0;
    unsigned shift = 0;
    do {
        b = *p++;
        v |= (b & 0x7f) << shift;
        shift += 7;
    } while (b >= 0x80 && shift < 70);
    *pp = p;
    return v;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Branch-free for varints of up to 8 bytes (every value below 2^56): one
 * unaligned load, the stop byte found with ctz, the 7-bit groups gathered
 * by three mask-and-shift steps.  Needs 8 readable bytes at *pp. */
static inline uint64_t codec_get(const uint8_t **pp)
{
    const uint8_t *p = *pp;
    uint64_t x;
    memcpy(&x, p, 8);
    uint64_t stop = ~x & UINT64_C(0x8080808080808080);
    if (CODEC_UNLIKELY(stop == 0))
        return codec_get_slow(pp);
    unsigned bits = (unsigned)__builtin_ctzll(stop) + 1; /* 8, 16, …, 64 */
    *pp = p + bits / 8;
    x &= UINT64_MAX >> (64 - bits);
    x = (x & UINT64_C(0x007f007f007f007f)) | ((x & UINT64_C(0x7f007f007f007f00)) >> 1);
    x = (x & UINT64_C(0x00003fff00003fff)) | ((x & UINT64_C(0x3fff00003fff0000)) >> 2);
    x = (x & UINT64_C(0x000000000fffffff)) | ((x & UINT64_C(0x0fffffff00000000)) >> 4);
    return x;
}
#else
static inline uint64_t codec_get(const uint8_t **pp) { return codec_get_slow(pp); }
#endif

/* For columns whose values often fit one byte (stream deltas; frees' ages
 * in MAIN): a well-predicted branch beats the branch-free gathering.
 * Measured: +9% decode speed on STREAM, +5% more on MAIN; none on TS. */
static inline uint64_t codec_get_small(const uint8_t **pp)
{
    uint8_t b = **pp;
    if (CODEC_LIKELY(b < 0x80)) {
        (*pp)++;
        return b;
    }
    return codec_get(pp);
}

/* Bounded varint read for headers: 1 and *v, or 0 if it runs past end or is
 * longer than 10 bytes. */
static int codec_get_bounded(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return 0;
        uint64_t b = *p++;
        r |= (b & 0x7f) << shift;
        if (b < 0x80) {
            *v = r;
            *pp = p;
            return 1;
        }
    }
    return 0;
}

/* ---- zlib ---------------------------------------------------------------- */

/* c's compressor (deflating) or decompressor, made on first use and reset
 * on each later one. */
static int codec_zstream(gm__codec_t *c, int deflating, gm_error_t *err)
{
    void **zp = deflating ? &c->zdef : &c->zinf;
    const char *what = deflating ? "compressor" : "decompressor";
    if (*zp) {
        if ((deflating ? deflateReset(*zp) : inflateReset(*zp)) != Z_OK)
            return gm_error_set(err, GM_EIO, "zlib: cannot reset the %s", what);
        return 0;
    }
    z_stream *z = calloc(1, sizeof *z);
    if (z == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    if ((deflating ? deflateInit(z, c->level) : inflateInit(z)) != Z_OK) {
        free(z);
        return gm_error_set(err, GM_ENOMEM, "zlib: cannot start the %s", what);
    }
    *zp = z;
    return 0;
}

/* ---- encoder ------------------------------------------------------------- */

/* Which optional columns the events need (GM__COL_DEVICE + k → bit k). */
static unsigned codec_mask(const gm_event_t *ev, size_t n)
{
    unsigned mask = 0;
    for (size_t i = 0; i < n; i++) {
        const gm_event_t *e = &ev[i];
        if (e->device)
            mask |= 1u << (GM__COL_DEVICE - GM__COL_FIRST_OPTIONAL);
        if (e->addr)
            mask |= 1u << (GM__COL_ADDR - GM__COL_FIRST_OPTIONAL);
        if (e->frames)
            mask |= 1u << (GM__COL_FRAMES - GM__COL_FIRST_OPTIONAL);
        if (e->flags)
            mask |= 1u << (GM__COL_FLAGS - GM__COL_FIRST_OPTIONAL);
        int aux;
        switch (e->op) {
        case GM_OP_ALLOC:
            aux = e->tag != 0;
            break;
        case GM_OP_FREE:
            aux = e->size != 0 || e->tag != 0;
            break;
        case GM_OP_MARK:
            aux = e->id != 0 || e->size != 0 || e->stream != 0;
            break;
        default:
            aux = e->id != 0 || e->stream != 0 || e->tag != 0;
            break;
        }
        if (aux)
            mask |= 1u << (GM__COL_AUX - GM__COL_FIRST_OPTIONAL);
    }
    return mask;
}

/* The smallest time delta (as a signed number) and the largest scale
 * dividing every delta minus it (1 when none does better). */
static void codec_ts_params(const gm_event_t *ev, size_t n, uint64_t *min, uint64_t *scale)
{
    int64_t dmin = INT64_MAX;
    for (size_t i = 1; i < n; i++) {
        int64_t d = (int64_t)(ev[i].ts_ns - ev[i - 1].ts_ns);
        if (d < dmin)
            dmin = d;
    }
    if (n < 2)
        dmin = 0;
    uint64_t g = 0;
    for (size_t i = 1; i < n && g != 1; i++) {
        uint64_t u = ev[i].ts_ns - ev[i - 1].ts_ns - (uint64_t)dmin;
        if (u)
            g = gm__gcd_u64(u, g);
    }
    *min = (uint64_t)dmin;
    *scale = g ? g : 1;
}

/* Validate the events and write the columns into c->col[]; fills the
 * c->last_* description. */
static int codec_columns(gm__codec_t *c, const gm_event_t *ev, size_t n, uint64_t first_alloc,
                         uint64_t *nallocs, gm_error_t *err)
{
    unsigned mask = codec_mask(ev, n);
    for (int k = 0; k < GM__COL_COUNT; k++)
        if (codec_present(mask, k) &&
            codec_reserve(&c->col[k], &c->col_cap[k], n * codec_col_max[k] + 1))
            return gm_error_set(err, GM_ENOMEM, "out of memory");

    uint64_t ts_first = n ? ev[0].ts_ns : 0, ts_min, scale;
    codec_ts_params(ev, n, &ts_min, &scale);
    uint64_t nalloc = first_alloc, prev_ts = ts_first - ts_min, prev_addr = 0;
    uint32_t prev_stream = 0;
    uint8_t *pm = c->col[GM__COL_MAIN], *pt = c->col[GM__COL_TS], *ps = c->col[GM__COL_STREAM];
    for (size_t i = 0; i < n; i++) {
        const gm_event_t *e = &ev[i];
        uint64_t payload;
        switch (e->op) {
        case GM_OP_ALLOC:
            if (e->id != nalloc)
                return gm_error_set(err, GM_EINVAL, "event %zu: alloc id %llu, expected %llu",
                                    i, (unsigned long long)e->id, (unsigned long long)nalloc);
            if (e->size == 0 || e->size > GM_SIZE_LIMIT)
                return gm_error_set(err, GM_EINVAL, "event %zu: alloc size %llu out of range",
                                    i, (unsigned long long)e->size);
            payload = e->size;
            nalloc++;
            break;
        case GM_OP_FREE:
            if (e->id >= nalloc)
                return gm_error_set(err, GM_EINVAL,
                                    "event %zu: free of id %llu, not yet allocated", i,
                                    (unsigned long long)e->id);
            payload = nalloc - 1 - e->id;
            if (payload >= CODEC_AGE_LIMIT)
                return gm_error_set(err, GM_EINVAL, "event %zu: free of id %llu too old", i,
                                    (unsigned long long)e->id);
            break;
        case GM_OP_MARK:
            payload = e->tag;
            break;
        case GM_OP_SEG_ALLOC:
        case GM_OP_SEG_FREE:
        case GM_OP_SEG_MAP:
        case GM_OP_SEG_UNMAP:
            if (e->size > GM_SIZE_LIMIT)
                return gm_error_set(err, GM_EINVAL, "event %zu: segment size %llu out of range",
                                    i, (unsigned long long)e->size);
            payload = e->size;
            break;
        default:
            return gm_error_set(err, GM_EINVAL, "event %zu: unknown op %u", i, e->op);
        }
        pm = gm__varint_put(pm, payload << 3 | e->op);
        pt = gm__varint_put(pt, (e->ts_ns - prev_ts - ts_min) / scale);
        prev_ts = e->ts_ns;
        if (e->op <= GM_OP_FREE) {
            ps = gm__varint_put(ps, gm__zigzag_u32(e->stream - prev_stream));
            prev_stream = e->stream;
        }
    }
    c->last_len[GM__COL_MAIN] = (size_t)(pm - c->col[GM__COL_MAIN]);
    c->last_len[GM__COL_TS] = (size_t)(pt - c->col[GM__COL_TS]);
    c->last_len[GM__COL_STREAM] = (size_t)(ps - c->col[GM__COL_STREAM]);

    if (mask) {
        uint8_t *pd = c->col[GM__COL_DEVICE], *pa = c->col[GM__COL_ADDR];
        uint8_t *pf = c->col[GM__COL_FRAMES], *pg = c->col[GM__COL_FLAGS];
        uint8_t *px = c->col[GM__COL_AUX];
        for (size_t i = 0; i < n; i++) {
            const gm_event_t *e = &ev[i];
            if (mask & 0x01)
                pd = gm__varint_put(pd, e->device);
            if (mask & 0x02) {
                pa = gm__varint_put(pa, gm__zigzag_u64(e->addr - prev_addr));
                prev_addr = e->addr;
            }
            if (mask & 0x04)
                pf = gm__varint_put(pf, e->frames);
            if (mask & 0x08)
                *pg++ = e->flags;
            if (mask & 0x10) {
                switch (e->op) {
                case GM_OP_ALLOC:
                    px = gm__varint_put(px, e->tag);
                    break;
                case GM_OP_FREE:
                    px = gm__varint_put(px, e->size);
                    px = gm__varint_put(px, e->tag);
                    break;
                case GM_OP_MARK:
                    px = gm__varint_put(px, e->id);
                    px = gm__varint_put(px, e->size);
                    px = gm__varint_put(px, e->stream);
                    break;
                default:
                    px = gm__varint_put(px, e->id);
                    px = gm__varint_put(px, e->stream);
                    px = gm__varint_put(px, e->tag);
                    break;
                }
            }
        }
        c->last_len[GM__COL_DEVICE] = (size_t)(pd - c->col[GM__COL_DEVICE]);
        c->last_len[GM__COL_ADDR] = (size_t)(pa - c->col[GM__COL_ADDR]);
        c->last_len[GM__COL_FRAMES] = (size_t)(pf - c->col[GM__COL_FRAMES]);
        c->last_len[GM__COL_FLAGS] = (size_t)(pg - c->col[GM__COL_FLAGS]);
        c->last_len[GM__COL_AUX] = (size_t)(px - c->col[GM__COL_AUX]);
    }
    for (int k = 0; k < GM__COL_COUNT; k++) {
        c->last_col[k] = codec_present(mask, k) ? c->col[k] : NULL;
        if (!codec_present(mask, k))
            c->last_len[k] = 0;
    }
    c->last_n = n;
    c->last_mask = mask;
    c->last_ts_first = ts_first;
    c->last_ts_min = ts_min;
    c->last_ts_scale = scale;
    *nallocs = nalloc - first_alloc;
    return 0;
}

/* Deflate src into dst (room for cap bytes).  The compressed length, or 0
 * when it would not fit (the caller then stores the column). */
static size_t codec_deflate(gm__codec_t *c, const uint8_t *src, size_t len, uint8_t *dst,
                            size_t cap, gm_error_t *err, int *rc)
{
    *rc = codec_zstream(c, 1, err);
    if (*rc)
        return 0;
    z_stream *z = c->zdef;
    z->next_in = (Bytef *)(uintptr_t)src; /* zlib does not write through it */
    z->avail_in = (uInt)len;
    z->next_out = dst;
    z->avail_out = (uInt)cap;
    int zr = deflate(z, Z_FINISH);
    if (zr == Z_STREAM_END)
        return z->total_out;
    if (zr != Z_OK && zr != Z_BUF_ERROR)
        *rc = gm_error_set(err, GM_EIO, "zlib: compression failed (%d)", zr);
    return 0;
}

int gm__chunk_encode(gm__codec_t *c, const gm_event_t *ev, size_t n, uint64_t first_alloc,
                     const uint8_t **blob, size_t *len, uint64_t *nallocs, gm_error_t *err)
{
    if (n > GM_CHUNK_EVENTS)
        return gm_error_set(err, GM_EINVAL, "chunk of %zu events, above %d", n,
                            GM_CHUNK_EVENTS);
    if (first_alloc > UINT64_MAX - GM_CHUNK_EVENTS)
        return gm_error_set(err, GM_EINVAL, "first alloc ordinal %llu out of range",
                            (unsigned long long)first_alloc);
    uint64_t na = 0;
    int rc = codec_columns(c, ev, n, first_alloc, &na, err);
    if (rc)
        return rc;

    /* Payloads go after room for the largest directory, which is then
     * written and the payloads moved down to meet it. */
    size_t total = 0;
    for (int k = 0; k < GM__COL_COUNT; k++)
        total += c->last_len[k];
    if (codec_reserve(&c->out, &c->out_cap, CODEC_DIR_MAX + total))
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    size_t stored[GM__COL_COUNT] = {0};
    uint8_t *pay = c->out + CODEC_DIR_MAX;
    for (int k = 0; k < GM__COL_COUNT; k++) {
        size_t l = c->last_len[k];
        if (!codec_present(c->last_mask, k) || l == 0)
            continue;
        size_t z = 0;
        if (l >= CODEC_ZLIB_MIN) {
            z = codec_deflate(c, c->col[k], l, pay, CODEC_ZLIB_GAIN(l), err, &rc);
            if (rc)
                return rc;
        }
        if (z == 0) {
            memcpy(pay, c->col[k], l);
            z = l;
        }
        stored[k] = z;
        pay += z;
    }

    uint8_t *h = c->out;
    *h++ = CODEC_MAGIC0;
    *h++ = CODEC_MAGIC1;
    *h++ = GM__CHUNK_VERSION;
    h = gm__varint_put(h, n);
    *h++ = (uint8_t)c->last_mask;
    h = gm__varint_put(h, c->last_ts_first);
    h = gm__varint_put(h, gm__zigzag_u64(c->last_ts_min));
    h = gm__varint_put(h, c->last_ts_scale);
    for (int k = 0; k < GM__COL_COUNT; k++) {
        if (!codec_present(c->last_mask, k))
            continue;
        h = gm__varint_put(h, c->last_len[k]);
        h = gm__varint_put(h, stored[k]);
    }
    size_t plen = (size_t)(pay - (c->out + CODEC_DIR_MAX));
    memmove(h, c->out + CODEC_DIR_MAX, plen);
    *blob = c->out;
    *len = (size_t)(h - c->out) + plen;
    if (nallocs)
        *nallocs = na;
    return 0;
}

/* ---- decoder ------------------------------------------------------------- */

long gm__chunk_peek(const uint8_t *blob, size_t len)
{
    if (len < 3 || blob[0] != CODEC_MAGIC0 || blob[1] != CODEC_MAGIC1 ||
        blob[2] != GM__CHUNK_VERSION)
        return -1;
    const uint8_t *p = blob + 3;
    uint64_t n;
    if (!codec_get_bounded(&p, blob + len, &n) || n > GM_CHUNK_EVENTS)
        return -1;
    return (long)n;
}

/* Parse the directory and fill c->raw with the uncompressed columns (and
 * zeroed slack); sets c->last_*. */
static int codec_load(gm__codec_t *c, const uint8_t *blob, size_t len, gm_error_t *err)
{
    if (len < 3 || blob[0] != CODEC_MAGIC0 || blob[1] != CODEC_MAGIC1)
        return gm_error_set(err, GM_ECORRUPT, "chunk header: bad magic");
    if (blob[2] != GM__CHUNK_VERSION)
        return gm_error_set(err, GM_ECORRUPT, "chunk header: unknown format version %u",
                            blob[2]);
    const uint8_t *p = blob + 3, *end = blob + len;
    uint64_t n, ts_first, ts_min, scale;
    if (!codec_get_bounded(&p, end, &n) || p >= end)
        return gm_error_set(err, GM_ECORRUPT, "chunk header: truncated");
    unsigned mask = *p++;
    if (!codec_get_bounded(&p, end, &ts_first) || !codec_get_bounded(&p, end, &ts_min) ||
        !codec_get_bounded(&p, end, &scale))
        return gm_error_set(err, GM_ECORRUPT, "chunk header: truncated");
    if (n > GM_CHUNK_EVENTS)
        return gm_error_set(err, GM_ECORRUPT, "chunk header: %llu events, above %d",
                            (unsigned long long)n, GM_CHUNK_EVENTS);
    if (mask & ~CODEC_MASK_ALL)
        return gm_error_set(err, GM_ECORRUPT, "chunk header: unknown columns 0x%02x", mask);
    if (scale == 0)
        return gm_error_set(err, GM_ECORRUPT, "chunk header: time scale 0");
    uint64_t raw[GM__COL_COUNT] = {0}, stored[GM__COL_COUNT] = {0};
    size_t total = 0, in = 0;
    for (int k = 0; k < GM__COL_COUNT; k++) {
        if (!codec_present(mask, k))
            continue;
        if (!codec_get_bounded(&p, end, &raw[k]) || !codec_get_bounded(&p, end, &stored[k]))
            return gm_error_set(err, GM_ECORRUPT, "chunk header: truncated");
        if (raw[k] > n * codec_col_max[k])
            return gm_error_set(err, GM_ECORRUPT,
                                "chunk header: column %d of %llu bytes for %llu events", k,
                                (unsigned long long)raw[k], (unsigned long long)n);
        if (stored[k] != raw[k] && (stored[k] > UINT_MAX || raw[k] > stored[k] * 1032 + 64))
            return gm_error_set(err, GM_ECORRUPT,
                                "chunk header: column %d of %llu bytes impossible from %llu", k,
                                (unsigned long long)raw[k], (unsigned long long)stored[k]);
        if (stored[k] > (uint64_t)(end - p) - in)
            return gm_error_set(err, GM_ECORRUPT, "chunk header: column %d overruns the chunk",
                                k);
        total += (size_t)raw[k];
        in += (size_t)stored[k];
    }
    if (in != (size_t)(end - p))
        return gm_error_set(err, GM_ECORRUPT, "chunk header: %zu bytes after the columns",
                            (size_t)(end - p) - in);
    if (codec_reserve(&c->raw, &c->raw_cap, total + CODEC_SLACK))
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    uint8_t *dst = c->raw;
    for (int k = 0; k < GM__COL_COUNT; k++) {
        c->last_col[k] = dst;
        c->last_len[k] = (size_t)raw[k];
        if (!codec_present(mask, k) || raw[k] == 0) {
            if (stored[k] != 0)
                return gm_error_set(err, GM_ECORRUPT, "chunk data: column %d: empty, %llu bytes",
                                    k, (unsigned long long)stored[k]);
            continue;
        }
        if (stored[k] == raw[k]) {
            memcpy(dst, p, (size_t)raw[k]);
        } else {
            int rc = codec_zstream(c, 0, err);
            if (rc)
                return rc;
            z_stream *z = c->zinf;
            z->next_in = (Bytef *)(uintptr_t)p; /* zlib does not write through it */
            z->avail_in = (uInt)stored[k];
            z->next_out = dst;
            z->avail_out = (uInt)raw[k];
            int zr = inflate(z, Z_FINISH);
            if (zr == Z_MEM_ERROR)
                return gm_error_set(err, GM_ENOMEM, "zlib: out of memory");
            if (zr == Z_DATA_ERROR)
                return gm_error_set(err, GM_ECORRUPT, "chunk data: column %d: zlib: %s", k,
                                    z->msg ? z->msg : "data error");
            if (zr != Z_STREAM_END || z->avail_out != 0)
                return gm_error_set(err, GM_ECORRUPT,
                                    "chunk data: column %d: not %llu bytes uncompressed", k,
                                    (unsigned long long)raw[k]);
            if (z->avail_in != 0)
                return gm_error_set(err, GM_ECORRUPT,
                                    "chunk data: column %d: %u bytes after the zlib stream", k,
                                    z->avail_in);
        }
        p += stored[k];
        dst += raw[k];
    }
    memset(dst, 0, CODEC_SLACK);
    c->last_n = (size_t)n;
    c->last_mask = mask;
    c->last_ts_first = ts_first;
    c->last_ts_min = gm__unzigzag_u64(ts_min);
    c->last_ts_scale = scale;
    return 0;
}

enum {
    CODEC_BAD_ALLOC = 1,
    CODEC_BAD_FREE,
    CODEC_BAD_TAG,
    CODEC_BAD_OP,
    CODEC_BAD_SEG,
    CODEC_BAD_DEVICE,
    CODEC_BAD_FRAMES,
    CODEC_BAD_INDEX,
    CODEC_BAD_SHORT,
    CODEC_BAD_LONG
};

/* The GM_ECORRUPT message for event i of a chunk (kept out of the loop). */
static int codec_bad(gm_error_t *err, size_t i, int why, uint64_t what, uint64_t nalloc)
{
    unsigned long long w = what;
    switch (why) {
    case CODEC_BAD_ALLOC:
        return gm_error_set(err, GM_ECORRUPT, "event %zu: alloc size %llu out of range", i, w);
    case CODEC_BAD_FREE:
        return gm_error_set(err, GM_ECORRUPT,
                            "event %zu: free at age %llu with only %llu allocations before it",
                            i, w, (unsigned long long)nalloc);
    case CODEC_BAD_TAG:
        return gm_error_set(err, GM_ECORRUPT, "event %zu: mark tag %llu out of range", i, w);
    case CODEC_BAD_OP:
        return gm_error_set(err, GM_ECORRUPT, "event %zu: unknown op %llu", i, w);
    case CODEC_BAD_SEG:
        return gm_error_set(err, GM_ECORRUPT, "event %zu: segment size %llu out of range", i, w);
    case CODEC_BAD_DEVICE:
        return gm_error_set(err, GM_ECORRUPT, "event %zu: device %llu out of range", i, w);
    case CODEC_BAD_FRAMES:
        return gm_error_set(err, GM_ECORRUPT, "event %zu: frames index %llu out of range", i, w);
    case CODEC_BAD_INDEX:
        return gm_error_set(err, GM_ECORRUPT, "event %zu: stream or tag index %llu out of range",
                            i, w);
    case CODEC_BAD_SHORT:
        return gm_error_set(err, GM_ECORRUPT, "event %zu: column data ends early", i);
    default:
        return gm_error_set(err, GM_ECORRUPT,
                            "event %zu: column data goes on after the last event", i);
    }
}

/* In codec_events: when cond holds, stop at this event with the reason
 * and the value out of range, for codec_bad's message. */
#define CODEC_REJECT_IF(cond, reason, value) \
    do {                                     \
        if (CODEC_UNLIKELY(cond)) {          \
            why = (reason);                  \
            what = (value);                  \
            goto bad;                        \
        }                                    \
    } while (0)

/* The decode loop, inlined twice: with mask 0 (no optional column: the
 * common case, three cursors) and with the chunk's mask. */
CODEC_INLINE int codec_events(gm__codec_t *c, unsigned mask, uint64_t first_alloc,
                              gm_event_t *out, uint64_t *nallocs, gm_error_t *err)
{
    const size_t n = c->last_n;
    const uint64_t scale = c->last_ts_scale, ts_min = c->last_ts_min;
    const uint8_t *pm = c->last_col[GM__COL_MAIN], *em = pm + c->last_len[GM__COL_MAIN];
    const uint8_t *pt = c->last_col[GM__COL_TS], *et = pt + c->last_len[GM__COL_TS];
    const uint8_t *ps = c->last_col[GM__COL_STREAM], *es = ps + c->last_len[GM__COL_STREAM];
    const uint8_t *pd = c->last_col[GM__COL_DEVICE], *ed = pd + c->last_len[GM__COL_DEVICE];
    const uint8_t *pa = c->last_col[GM__COL_ADDR], *ea = pa + c->last_len[GM__COL_ADDR];
    const uint8_t *pf = c->last_col[GM__COL_FRAMES], *ef = pf + c->last_len[GM__COL_FRAMES];
    const uint8_t *pg = c->last_col[GM__COL_FLAGS], *eg = pg + c->last_len[GM__COL_FLAGS];
    const uint8_t *px = c->last_col[GM__COL_AUX], *ex = px + c->last_len[GM__COL_AUX];
    uint64_t nalloc = first_alloc, ts = c->last_ts_first - ts_min, addr = 0, what = 0;
    /* The ORs of the indices (codec.h).  or_mark lives in c: MARKs are
     * rare, and one more register in this loop costs ~1% of decode speed. */
    uint32_t stream = 0, or_stream = 0, or_tag = 0, or_frames = 0;
    c->or_mark = 0;
    int why = 0;
    gm_event_t *e = out, *const end = out + n;
    for (; e != end; e++) {
        /* Fields gathered in scalars and stored once, so the event is
         * written straight into out[] rather than built and copied. */
        uint64_t id = 0, size = 0, v = codec_get_small(&pm);
        uint32_t estream = 0, tag = 0, frames = 0;
        uint16_t device = 0;
        uint8_t flags = 0;
        unsigned op = (unsigned)(v & 7);
        uint64_t pay = v >> 3;
        ts += codec_get(&pt) * scale + ts_min;
        if (CODEC_LIKELY(op <= GM_OP_FREE)) {
            /* ALLOC or FREE, without a branch on which: the mix of the two
             * is what a trace is made of, and it is unpredictable. */
            uint64_t is_free = op;
            id = is_free ? nalloc - 1 - pay : nalloc;
            size = is_free ? 0 : pay;
            uint64_t wrong = is_free ? pay >= nalloc : pay - 1 >= GM_SIZE_LIMIT;
            CODEC_REJECT_IF(wrong, is_free ? CODEC_BAD_FREE : CODEC_BAD_ALLOC, pay);
            nalloc += 1 - is_free;
            stream += gm__unzigzag_u32((uint32_t)codec_get_small(&ps));
            estream = stream;
            or_stream |= stream;
        } else if (op == GM_OP_MARK) {
            CODEC_REJECT_IF(pay > UINT32_MAX, CODEC_BAD_TAG, pay);
            tag = (uint32_t)pay;
            c->or_mark |= pay + 1;
        } else if (op == GM_OP_COUNT) { /* 7: the only value of 3 bits that is no op */
            why = CODEC_BAD_OP;
            what = op;
            goto bad;
        } else {
            CODEC_REJECT_IF(pay > GM_SIZE_LIMIT, CODEC_BAD_SEG, pay);
            size = pay;
        }
        if (mask) {
            if (mask & 0x01) {
                v = codec_get(&pd);
                CODEC_REJECT_IF(v > UINT16_MAX, CODEC_BAD_DEVICE, v);
                device = (uint16_t)v;
            }
            if (mask & 0x02)
                addr += gm__unzigzag_u64(codec_get(&pa));
            if (mask & 0x04) {
                v = codec_get(&pf);
                CODEC_REJECT_IF(v > UINT32_MAX, CODEC_BAD_FRAMES, v);
                frames = (uint32_t)v;
                or_frames |= frames;
            }
            if (mask & 0x08)
                flags = *pg++;
            if (mask & 0x10) {
                uint64_t a = codec_get(&px), b, d;
                if (op == GM_OP_ALLOC) {
                    tag = (uint32_t)a;
                    what = a;
                } else if (op == GM_OP_FREE) {
                    b = codec_get(&px);
                    size = a;
                    tag = (uint32_t)b;
                    what = b;
                } else if (op == GM_OP_MARK) {
                    b = codec_get(&px);
                    d = codec_get(&px);
                    id = a;
                    size = b;
                    estream = (uint32_t)d;
                    what = d;
                } else {
                    b = codec_get(&px);
                    d = codec_get(&px);
                    id = a;
                    estream = (uint32_t)b;
                    tag = (uint32_t)d;
                    what = b > d ? b : d;
                }
                CODEC_REJECT_IF(what > UINT32_MAX, CODEC_BAD_INDEX, what);
                or_stream |= estream;
                or_tag |= tag;
            }
            CODEC_REJECT_IF((pd > ed) | (pa > ea) | (pf > ef) | (pg > eg) | (px > ex),
                            CODEC_BAD_SHORT, what);
        }
        CODEC_REJECT_IF((pm > em) | (pt > et) | (ps > es), CODEC_BAD_SHORT, what);
        e->ts_ns = ts;
        e->id = id;
        e->size = size;
        e->addr = addr;
        e->stream = estream;
        e->tag = tag;
        e->frames = frames;
        e->device = device;
        e->op = (uint8_t)op;
        e->flags = flags;
    }
    if ((pm != em) | (pt != et) | (ps != es) | (pd != ed) | (pa != ea) | (pf != ef) |
        (pg != eg) | (px != ex)) {
        why = CODEC_BAD_LONG;
        goto bad;
    }
    *nallocs = nalloc - first_alloc;
    c->or_stream = or_stream;
    c->or_tag = or_tag;
    c->or_frames = or_frames;
    return 0;
bad:
    return codec_bad(err, (size_t)(e - out), why, what, nalloc);
}
#undef CODEC_REJECT_IF

int gm__chunk_decode(gm__codec_t *c, const uint8_t *blob, size_t len, uint64_t first_alloc,
                     gm_event_t *out, size_t cap, size_t *n, uint64_t *nallocs,
                     gm_error_t *err)
{
    c->last_n = 0;
    int rc = codec_load(c, blob, len, err);
    if (rc) {
        c->last_n = 0;
        c->last_mask = 0;
        for (int k = 0; k < GM__COL_COUNT; k++)
            c->last_len[k] = 0;
        return rc;
    }
    if (c->last_n > cap)
        return gm_error_set(err, GM_ECORRUPT, "chunk header: %zu events, room for %zu",
                            c->last_n, cap);
    if (first_alloc > UINT64_MAX - GM_CHUNK_EVENTS)
        return gm_error_set(err, GM_ECORRUPT, "first alloc ordinal %llu out of range",
                            (unsigned long long)first_alloc);
    uint64_t na = 0;
    rc = c->last_mask ? codec_events(c, c->last_mask, first_alloc, out, &na, err)
                      : codec_events(c, 0, first_alloc, out, &na, err);
    if (rc)
        return rc;
    *n = c->last_n;
    if (nallocs)
        *nallocs = na;
    return 0;
}

void gm__chunk_digest(const gm__codec_t *c, gm__digest_t *d)
{
    uint8_t head[5 * 10 + 1 + GM__COL_COUNT * 10], *h = head;
    h = gm__varint_put(h, c->last_n);
    *h++ = (uint8_t)c->last_mask;
    h = gm__varint_put(h, c->last_ts_first);
    h = gm__varint_put(h, gm__zigzag_u64(c->last_ts_min));
    h = gm__varint_put(h, c->last_ts_scale);
    for (int k = 0; k < GM__COL_COUNT; k++)
        if (codec_present(c->last_mask, k))
            h = gm__varint_put(h, c->last_len[k]);
    gm__digest_update(d, head, (size_t)(h - head));
    for (int k = 0; k < GM__COL_COUNT; k++)
        if (codec_present(c->last_mask, k) && c->last_len[k])
            gm__digest_update(d, c->last_col[k], c->last_len[k]);
}

/* ---- digest: MurmurHash3_x64_128 (Austin Appleby, public domain), streamed */

#define DIGEST_C1 UINT64_C(0x87c37b91114253d5)
#define DIGEST_C2 UINT64_C(0x4cf5ad432745937f)

static inline uint64_t digest_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

/* A key word mixed before it joins its lane's hash, in each block and in
 * the tail: k1's, and k2's with the constants swapped and another turn. */
static inline uint64_t digest_k1(uint64_t k) { return gm__rotl_u64(k * DIGEST_C1, 31) * DIGEST_C2; }
static inline uint64_t digest_k2(uint64_t k) { return gm__rotl_u64(k * DIGEST_C2, 33) * DIGEST_C1; }

static inline void digest_block(gm__digest_t *d, const uint8_t *b)
{
    uint64_t h1 = d->h1, h2 = d->h2;
    h1 ^= digest_k1(digest_le64(b));
    h1 = gm__rotl_u64(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    h2 ^= digest_k2(digest_le64(b + 8));
    h2 = gm__rotl_u64(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
    d->h1 = h1;
    d->h2 = h2;
}

void gm__digest_init(gm__digest_t *d) { memset(d, 0, sizeof *d); }

void gm__digest_update(gm__digest_t *d, const void *data, size_t len)
{
    const uint8_t *p = data;
    d->total += len;
    if (d->nbuf) {
        size_t k = 16 - d->nbuf < len ? 16 - d->nbuf : len;
        memcpy(d->buf + d->nbuf, p, k);
        d->nbuf += (unsigned)k;
        p += k;
        len -= k;
        if (d->nbuf < 16)
            return;
        digest_block(d, d->buf);
        d->nbuf = 0;
    }
    for (; len >= 16; p += 16, len -= 16)
        digest_block(d, p);
    if (len) {
        memcpy(d->buf, p, len);
        d->nbuf = (unsigned)len;
    }
}

void gm__digest_final(gm__digest_t *d, char hex[33])
{
    uint64_t h1 = d->h1, h2 = d->h2, k1 = 0, k2 = 0;
    const uint8_t *t = d->buf;
    unsigned n = d->nbuf;
    for (unsigned i = n; i > 8; i--)
        k2 ^= (uint64_t)t[i - 1] << ((i - 9) * 8);
    if (n > 8)
        h2 ^= digest_k2(k2);
    for (unsigned i = n < 8 ? n : 8; i > 0; i--)
        k1 ^= (uint64_t)t[i - 1] << ((i - 1) * 8);
    if (n > 0)
        h1 ^= digest_k1(k1);
    h1 ^= d->total;
    h2 ^= d->total;
    h1 += h2;
    h2 += h1;
    h1 = gm__fmix64(h1);
    h2 = gm__fmix64(h2);
    h1 += h2;
    h2 += h1;
    /* The 16 output bytes as MurmurHash3 writes them (h1 then h2, little
     * endian), in hex: what Python's mmh3.hash_bytes(data).hex() prints. */
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++) {
        uint8_t b1 = (uint8_t)(h1 >> (8 * i)), b2 = (uint8_t)(h2 >> (8 * i));
        hex[2 * i] = digits[b1 >> 4];
        hex[2 * i + 1] = digits[b1 & 15];
        hex[16 + 2 * i] = digits[b2 >> 4];
        hex[16 + 2 * i + 1] = digits[b2 & 15];
    }
    hex[32] = '\0';
}

uint32_t gm__chunk_crc(const uint8_t *blob, size_t len)
{
    uLong c = crc32(0L, Z_NULL, 0);
    while (len > 0) {
        uInt n = len > (size_t)UINT_MAX ? UINT_MAX : (uInt)len;
        c = crc32(c, blob, n);
        blob += n;
        len -= n;
    }
    return (uint32_t)c;
}
