/*
 * tests/test_codec.c — the chunk codec: round trips on edge cases and seeded
 * random event lists, encoder validation, hostile input to the decoder
 * (every truncation, byte flips, crafted headers and columns), and the
 * MurmurHash3 digest against its published verification value.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "store/codec.h"
#include "util.h"

/* ---- helpers ------------------------------------------------------------- */

static void cd_put(uint8_t **p, uint64_t v)
{
    while (v >= 0x80) {
        *(*p)++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *(*p)++ = (uint8_t)v;
}

/* Field-by-field equality with the failing event and field in the message. */
static void cd_assert_same(const gm_event_t *a, const gm_event_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(a[i].op, b[i].op, "event %zu: op %u != %u", i, a[i].op, b[i].op);
        cr_assert_eq(a[i].ts_ns, b[i].ts_ns, "event %zu: ts", i);
        cr_assert_eq(a[i].id, b[i].id, "event %zu: id %llu != %llu", i,
                     (unsigned long long)a[i].id, (unsigned long long)b[i].id);
        cr_assert_eq(a[i].size, b[i].size, "event %zu: size", i);
        cr_assert_eq(a[i].addr, b[i].addr, "event %zu: addr", i);
        cr_assert_eq(a[i].stream, b[i].stream, "event %zu: stream", i);
        cr_assert_eq(a[i].tag, b[i].tag, "event %zu: tag", i);
        cr_assert_eq(a[i].frames, b[i].frames, "event %zu: frames", i);
        cr_assert_eq(a[i].device, b[i].device, "event %zu: device", i);
        cr_assert_eq(a[i].flags, b[i].flags, "event %zu: flags", i);
    }
}

/* Encode, decode, compare; returns the blob length. */
static size_t cd_roundtrip(const gm_event_t *ev, size_t n, uint64_t first_alloc)
{
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_error_t err = {0};
    const uint8_t *blob;
    size_t len, got = 12345;
    uint64_t na_enc, na_dec;
    int rc = gm__chunk_encode(&c, ev, n, first_alloc, &blob, &len, &na_enc, &err);
    cr_assert_eq(rc, 0, "encode: %s", err.msg);
    uint8_t *copy = malloc(len);
    memcpy(copy, blob, len);
    cr_assert_eq(gm__chunk_peek(copy, len), (long)n);
    gm_event_t *out = malloc((n ? n : 1) * sizeof *out);
    rc = gm__chunk_decode(&c, copy, len, first_alloc, out, n, &got, &na_dec, &err);
    cr_assert_eq(rc, 0, "decode: %s", err.msg);
    cr_assert_eq(got, n);
    cr_assert_eq(na_enc, na_dec);
    size_t allocs = 0;
    for (size_t i = 0; i < n; i++)
        allocs += ev[i].op == GM_OP_ALLOC;
    cr_assert_eq(na_dec, allocs);
    cd_assert_same(ev, out, n);
    free(out);
    free(copy);
    gm__codec_release(&c);
    return len;
}

typedef struct cd_opts {
    int all_ops;      /* MARK and SEG_* too */
    int optional;     /* random device/addr/frames/flags and aux fields */
    int us_time;      /* time stamps in whole µs */
    int backwards;    /* time may go backwards */
} cd_opts_t;

/* n valid events whose ALLOC ids start at first_alloc. */
static gm_event_t *cd_random(uint64_t seed, size_t n, uint64_t first_alloc, cd_opts_t o)
{
    static const uint64_t sizes[] = {512, 1024, 4096, 65536, 2097152, 3, 1000000, 40 << 20};
    gm_event_t *ev = calloc(n ? n : 1, sizeof *ev);
    uint64_t rng = seed, nalloc = first_alloc, ts = gt_rand(&rng) >> 4;
    for (size_t i = 0; i < n; i++) {
        gm_event_t *e = &ev[i];
        uint64_t r = gt_rand(&rng);
        if (o.us_time)
            ts += 1000 * (1 + r % 20);
        else if (o.backwards && r % 7 == 0)
            ts -= r % 100000;
        else
            ts += 500 + r % 20000;
        e->ts_ns = ts;
        unsigned pick = (unsigned)(r >> 40) % 100;
        if (!o.all_ops || pick < 90) {
            if (nalloc == 0 || pick % 2 == 0) {
                e->op = GM_OP_ALLOC;
                e->id = nalloc++;
                e->size = (r >> 20) % 5 == 0 ? 1 + (r >> 8) % GM_SIZE_LIMIT : sizes[(r >> 12) % 8];
            } else {
                e->op = GM_OP_FREE;
                uint64_t back = (r >> 24) % 16 == 0 ? (r >> 30) % nalloc : (r >> 30) % 8;
                e->id = back < nalloc ? nalloc - 1 - back : 0;
            }
            e->stream = (r >> 50) % 10 == 0 ? (uint32_t)((r >> 52) % 3) : 0;
        } else if (pick < 94) {
            e->op = GM_OP_MARK;
            e->tag = (uint32_t)(r >> 33) % 5;
        } else {
            e->op = (uint8_t)(GM_OP_SEG_ALLOC + pick % 4);
            e->size = (r >> 9) % (GM_SIZE_LIMIT + 1);
        }
        if (o.optional) {
            uint64_t q = gt_rand(&rng);
            e->device = q % 3 == 0 ? (uint16_t)(q >> 8) : 0;
            e->addr = q % 2 ? 0x7f0000000000 + ((q >> 16) & 0xffffff) * 512 : 0;
            e->frames = q % 5 == 0 ? (uint32_t)(q >> 32) : 0;
            e->flags = q % 11 == 0 ? (uint8_t)(q >> 24) : 0;
            if (q % 13 == 0) {
                /* fields the op does not use */
                uint64_t x = gt_rand(&rng);
                if (e->op == GM_OP_ALLOC || e->op == GM_OP_FREE || e->op >= GM_OP_SEG_ALLOC)
                    e->tag = (uint32_t)x;
                if (e->op == GM_OP_FREE || e->op == GM_OP_MARK)
                    e->size = x >> 3;
                if (e->op == GM_OP_MARK || e->op >= GM_OP_SEG_ALLOC) {
                    e->id = x * 3;
                    e->stream = (uint32_t)(x >> 17);
                }
            }
        }
    }
    return ev;
}

/* Decode that must fail with GM_ECORRUPT and a message containing want. */
static void cd_expect_corrupt(const uint8_t *blob, size_t len, uint64_t first_alloc,
                              const char *want)
{
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_error_t err = {0};
    gm_event_t *out = malloc(GM_CHUNK_EVENTS * sizeof *out);
    size_t n;
    int rc = gm__chunk_decode(&c, blob, len, first_alloc, out, GM_CHUNK_EVENTS, &n, NULL, &err);
    cr_assert_eq(rc, GM_ECORRUPT, "rc %d (%s)", rc, err.msg);
    cr_assert_eq(err.code, GM_ECORRUPT);
    if (want)
        cr_assert(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
    free(out);
    gm__codec_release(&c);
}

/* A chunk with the given (stored, uncompressed) columns; MAIN, TS and STREAM
 * are always present, the rest per mask.  Returns the length in buf. */
static size_t cd_build(uint8_t *buf, uint64_t n, unsigned mask, uint64_t ts_first,
                       uint64_t ts_min_zz, uint64_t scale, const uint8_t *const cols[8],
                       const size_t lens[8])
{
    uint8_t *p = buf;
    *p++ = 'G';
    *p++ = 'C';
    *p++ = GM__CHUNK_VERSION;
    cd_put(&p, n);
    *p++ = (uint8_t)mask;
    cd_put(&p, ts_first);
    cd_put(&p, ts_min_zz);
    cd_put(&p, scale);
    for (int k = 0; k < 8; k++) {
        if (k >= 3 && !(mask >> (k - 3) & 1))
            continue;
        cd_put(&p, lens[k]);
        cd_put(&p, lens[k]);
    }
    for (int k = 0; k < 8; k++) {
        if (k >= 3 && !(mask >> (k - 3) & 1))
            continue;
        if (lens[k])
            memcpy(p, cols[k], lens[k]);
        p += lens[k];
    }
    return (size_t)(p - buf);
}

/* ---- round trips --------------------------------------------------------- */

Test(codec, empty_chunk)
{
    size_t len = cd_roundtrip(NULL, 0, 0);
    cr_assert(len > 0 && len < 32);
    cd_roundtrip(NULL, 0, 123456789);
}

Test(codec, one_event_of_each_op)
{
    for (unsigned op = 0; op < GM_OP_COUNT; op++) {
        gm_event_t e = {.ts_ns = 1700000000123456789ULL, .op = (uint8_t)op};
        if (op == GM_OP_ALLOC) {
            e.id = 7;
            e.size = 4096;
        } else if (op == GM_OP_FREE) {
            e.id = 3;
        } else if (op == GM_OP_MARK) {
            e.tag = 2;
        } else {
            e.size = 2 << 20;
            e.addr = 0x7f0000000000;
        }
        cd_roundtrip(&e, 1, 7);
    }
}

Test(codec, extreme_values)
{
    gm_event_t ev[8] = {
        {.ts_ns = UINT64_MAX, .op = GM_OP_ALLOC, .id = 0, .size = GM_SIZE_LIMIT,
         .addr = UINT64_MAX, .stream = UINT32_MAX, .tag = UINT32_MAX, .frames = UINT32_MAX,
         .device = UINT16_MAX, .flags = 0xff},
        {.ts_ns = 0, .op = GM_OP_ALLOC, .id = 1, .size = 1},
        {.ts_ns = UINT64_MAX, .op = GM_OP_FREE, .id = 0, .size = UINT64_MAX,
         .stream = UINT32_MAX, .tag = UINT32_MAX},
        {.ts_ns = 1, .op = GM_OP_MARK, .tag = UINT32_MAX, .id = UINT64_MAX, .size = UINT64_MAX,
         .stream = UINT32_MAX},
        {.ts_ns = (uint64_t)INT64_MAX + 1, .op = GM_OP_SEG_ALLOC, .size = GM_SIZE_LIMIT,
         .id = UINT64_MAX, .stream = UINT32_MAX, .tag = UINT32_MAX, .addr = 1},
        {.ts_ns = (uint64_t)INT64_MAX, .op = GM_OP_SEG_UNMAP, .size = 0},
        {.ts_ns = 5, .op = GM_OP_FREE, .id = 1},
        {.ts_ns = UINT64_MAX - 1, .op = GM_OP_ALLOC, .id = 2, .size = GM_SIZE_LIMIT},
    };
    cd_roundtrip(ev, 8, 0);
    /* and far into a trace */
    for (int i = 0; i < 8; i++)
        if (ev[i].op == GM_OP_ALLOC || ev[i].op == GM_OP_FREE)
            ev[i].id += UINT64_MAX - GM_CHUNK_EVENTS - 10;
    cd_roundtrip(ev, 8, UINT64_MAX - GM_CHUNK_EVENTS - 10);
}

Test(codec, timestamps_going_backwards)
{
    cd_opts_t o = {.all_ops = 1, .backwards = 1};
    gm_event_t *ev = cd_random(11, 5000, 0, o);
    cd_roundtrip(ev, 5000, 0);
    /* a time that wraps around and stays put */
    for (size_t i = 0; i < 100; i++)
        ev[i].ts_ns = i % 3 == 0 ? UINT64_MAX - i : i % 3 == 1 ? 0 : 42;
    cd_roundtrip(ev, 5000, 0);
    for (size_t i = 0; i < 5000; i++)
        ev[i].ts_ns = 77;
    cd_roundtrip(ev, 5000, 0);
    free(ev);
}

Test(codec, optional_columns_only_when_needed)
{
    cd_opts_t o = {0};
    gm_event_t *ev = cd_random(5, 2000, 0, o);
    size_t plain = cd_roundtrip(ev, 2000, 0);
    /* each optional field alone, set on one event, costs bytes */
    for (int f = 0; f < 5; f++) {
        gm_event_t *e2 = malloc(2000 * sizeof *e2);
        memcpy(e2, ev, 2000 * sizeof *e2);
        gm_event_t *e = &e2[1234];
        switch (f) {
        case 0: e->device = 1; break;
        case 1: e->addr = 0x1000; break;
        case 2: e->frames = 9; break;
        case 3: e->flags = GM_EVENT_PREEXISTING; break;
        default: e->tag = 4; break; /* an ALLOC or FREE: tag goes to AUX */
        }
        size_t with = cd_roundtrip(e2, 2000, 0);
        cr_assert(with > plain, "field %d: %zu <= %zu", f, with, plain);
        free(e2);
    }
    /* the mask byte: zero without optional fields */
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_error_t err;
    const uint8_t *blob;
    size_t len;
    cr_assert_eq(gm__chunk_encode(&c, ev, 2000, 0, &blob, &len, NULL, &err), 0);
    cr_assert_eq(blob[5], 0); /* 'G' 'C' version n(2 bytes) mask */
    ev[0].device = 3;
    ev[1].flags = 1;
    cr_assert_eq(gm__chunk_encode(&c, ev, 2000, 0, &blob, &len, NULL, &err), 0);
    cr_assert_eq(blob[5], 0x09);
    gm__codec_release(&c);
    free(ev);
}

Test(codec, all_columns_random)
{
    cd_opts_t o = {.all_ops = 1, .optional = 1};
    for (uint64_t seed = 1; seed <= 20; seed++) {
        size_t n = (size_t)(seed * 977 % 9000);
        uint64_t first = seed % 3 == 0 ? 0 : seed * 1000003;
        gm_event_t *ev = cd_random(seed, n, first, o);
        cd_roundtrip(ev, n, first);
        free(ev);
    }
}

Test(codec, full_chunk_of_65536_events)
{
    cd_opts_t o = {.all_ops = 1};
    gm_event_t *ev = cd_random(3, GM_CHUNK_EVENTS + 1, 0, o);
    size_t len = cd_roundtrip(ev, GM_CHUNK_EVENTS, 0);
    cr_assert(len < 6 * GM_CHUNK_EVENTS, "%zu bytes", len);
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_error_t err;
    const uint8_t *blob;
    cr_assert_eq(gm__chunk_encode(&c, ev, GM_CHUNK_EVENTS + 1, 0, &blob, &len, NULL, &err),
                 GM_EINVAL);
    gm__codec_release(&c);
    free(ev);
}

Test(codec, microsecond_times_are_scaled)
{
    cd_opts_t ns = {0}, us = {.us_time = 1};
    gm_event_t *a = cd_random(8, 20000, 0, ns), *b = cd_random(8, 20000, 0, us);
    size_t la = cd_roundtrip(a, 20000, 0), lb = cd_roundtrip(b, 20000, 0);
    cr_assert(lb < la, "µs %zu, ns %zu", lb, la);
    free(a);
    free(b);
}

Test(codec, random_lists_many_seeds)
{
    for (uint64_t seed = 100; seed < 160; seed++) {
        cd_opts_t o = {.all_ops = (int)(seed & 1), .optional = (int)(seed >> 1 & 1),
                       .us_time = (int)(seed >> 2 & 1), .backwards = (int)(seed >> 3 & 1)};
        size_t n = 1 + (size_t)(seed * 7919 % 3000);
        gm_event_t *ev = cd_random(seed, n, seed * 17, o);
        cd_roundtrip(ev, n, seed * 17);
        free(ev);
    }
}

Test(codec, a_chunk_decodes_only_its_own_context)
{
    /* first_alloc is what makes FREE ids absolute: decoding with another
     * value shifts every id by the difference. */
    cd_opts_t o = {0};
    gm_event_t *ev = cd_random(21, 500, 1000, o);
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_error_t err;
    const uint8_t *blob;
    size_t len, n;
    cr_assert_eq(gm__chunk_encode(&c, ev, 500, 1000, &blob, &len, NULL, &err), 0);
    uint8_t *copy = malloc(len);
    memcpy(copy, blob, len);
    gm_event_t *out = malloc(500 * sizeof *out);
    cr_assert_eq(gm__chunk_decode(&c, copy, len, 1010, out, 500, &n, NULL, &err), 0);
    for (size_t i = 0; i < n; i++)
        if (out[i].op <= GM_OP_FREE)
            cr_assert_eq(out[i].id, ev[i].id + 10);
    free(out);
    free(copy);
    free(ev);
    gm__codec_release(&c);
}

/* ---- encoder validation -------------------------------------------------- */

static void cd_expect_einval(const gm_event_t *ev, size_t n, uint64_t first, const char *want)
{
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_error_t err = {0};
    const uint8_t *blob;
    size_t len;
    int rc = gm__chunk_encode(&c, ev, n, first, &blob, &len, NULL, &err);
    cr_assert_eq(rc, GM_EINVAL);
    cr_assert_str_eq(err.msg, want);
    gm__codec_release(&c);
}

Test(codec, encoder_refuses_what_it_cannot_hold)
{
    gm_event_t ev[3] = {
        {.op = GM_OP_ALLOC, .id = 0, .size = 8},
        {.op = GM_OP_ALLOC, .id = 1, .size = 8},
        {.op = GM_OP_FREE, .id = 1},
    };
    ev[1].id = 5;
    cd_expect_einval(ev, 3, 0, "event 1: alloc id 5, expected 1");
    ev[1].id = 1;
    ev[1].size = 0;
    cd_expect_einval(ev, 3, 0, "event 1: alloc size 0 out of range");
    ev[1].size = GM_SIZE_LIMIT + 1;
    cd_expect_einval(ev, 3, 0, "event 1: alloc size 281474976710657 out of range");
    ev[1].size = 8;
    ev[2].id = 2;
    cd_expect_einval(ev, 3, 0, "event 2: free of id 2, not yet allocated");
    ev[2].op = 7;
    cd_expect_einval(ev, 3, 0, "event 2: unknown op 7");
    ev[2].op = GM_OP_SEG_FREE;
    ev[2].size = GM_SIZE_LIMIT + 1;
    cd_expect_einval(ev, 3, 0, "event 2: segment size 281474976710657 out of range");
}

/* ---- hostile input ------------------------------------------------------- */

/* A small valid blob of every op and column, zlib-compressed columns too. */
static uint8_t *cd_sample(size_t n, uint64_t seed, size_t *len, gm_event_t **events)
{
    cd_opts_t o = {.all_ops = 1, .optional = 1, .us_time = (int)(seed & 1)};
    gm_event_t *ev = cd_random(seed, n, 3, o);
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_error_t err;
    const uint8_t *blob;
    cr_assert_eq(gm__chunk_encode(&c, ev, n, 3, &blob, len, NULL, &err), 0, "%s", err.msg);
    uint8_t *copy = malloc(*len);
    memcpy(copy, blob, *len);
    gm__codec_release(&c);
    if (events)
        *events = ev;
    else
        free(ev);
    return copy;
}

/* Decode data; when it decodes, every event must pass the encoder (so the
 * result re-encodes and decodes to itself). */
static void cd_decode_any(gm__codec_t *c, const uint8_t *data, size_t len, gm_event_t *out,
                          gm_event_t *out2)
{
    gm_error_t err = {0};
    size_t n, n2;
    int rc = gm__chunk_decode(c, data, len, 3, out, GM_CHUNK_EVENTS, &n, NULL, &err);
    if (rc != 0) {
        cr_assert_eq(rc, GM_ECORRUPT, "rc %d: %s", rc, err.msg);
        cr_assert(err.msg[0] != '\0');
        return;
    }
    gm__codec_t e;
    gm__codec_init(&e, -1);
    const uint8_t *blob;
    size_t blen;
    rc = gm__chunk_encode(&e, out, n, 3, &blob, &blen, NULL, &err);
    cr_assert_eq(rc, 0, "a decoded chunk does not re-encode: %s", err.msg);
    rc = gm__chunk_decode(&e, blob, blen, 3, out2, GM_CHUNK_EVENTS, &n2, NULL, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    cr_assert_eq(n, n2);
    cd_assert_same(out, out2, n);
    gm__codec_release(&e);
}

Test(codec, every_truncation_is_corrupt)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        size_t len;
        uint8_t *blob = cd_sample(40 + 30 * seed, seed, &len, NULL);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *t = malloc(cut ? cut : 1);
            memcpy(t, blob, cut);
            cd_expect_corrupt(t, cut, 3, NULL);
            free(t);
        }
        free(blob);
    }
}

Test(codec, byte_flips_decode_or_fail_cleanly)
{
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_event_t *out = malloc(GM_CHUNK_EVENTS * sizeof *out);
    gm_event_t *out2 = malloc(GM_CHUNK_EVENTS * sizeof *out2);
    static const uint8_t masks[] = {0x01, 0x80, 0xff, 0x7f, 0x10};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        size_t len;
        uint8_t *blob = cd_sample(seed == 3 ? 3000 : 120, seed, &len, NULL);
        uint8_t *t = malloc(len);
        size_t step = len > 2000 ? 7 : 1;
        for (size_t pos = 0; pos < len; pos += step) {
            for (size_t m = 0; m < sizeof masks; m++) {
                memcpy(t, blob, len);
                t[pos] ^= masks[m];
                cd_decode_any(&c, t, len, out, out2);
            }
        }
        /* random multi-byte damage */
        uint64_t rng = seed;
        for (int k = 0; k < 2000; k++) {
            memcpy(t, blob, len);
            for (int j = 0; j < 4; j++)
                t[gt_rand(&rng) % len] = (uint8_t)gt_rand(&rng);
            cd_decode_any(&c, t, len, out, out2);
        }
        free(t);
        free(blob);
    }
    free(out);
    free(out2);
    gm__codec_release(&c);
}

Test(codec, random_bytes_never_crash)
{
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_event_t *out = malloc(GM_CHUNK_EVENTS * sizeof *out);
    gm_event_t *out2 = malloc(GM_CHUNK_EVENTS * sizeof *out2);
    uint64_t rng = 99;
    uint8_t buf[300];
    for (int k = 0; k < 20000; k++) {
        size_t len = gt_rand(&rng) % sizeof buf;
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)gt_rand(&rng);
        if (len >= 3 && k % 2) { /* a valid prefix gets further in */
            buf[0] = 'G';
            buf[1] = 'C';
            buf[2] = GM__CHUNK_VERSION;
        }
        cd_decode_any(&c, buf, len, out, out2);
    }
    free(out);
    free(out2);
    gm__codec_release(&c);
}

Test(codec, crafted_headers)
{
    uint8_t buf[256];
    const uint8_t *cols[8] = {0};
    size_t lens[8] = {0};
    size_t len = cd_build(buf, 0, 0, 0, 0, 1, cols, lens);
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_event_t out[4];
    size_t n = 9;
    gm_error_t err;
    cr_assert_eq(gm__chunk_decode(&c, buf, len, 0, out, 4, &n, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 0);
    gm__codec_release(&c);

    cd_expect_corrupt((const uint8_t *)"XC\x01", 3, 0, "bad magic");
    cd_expect_corrupt((const uint8_t *)"GC\x09\x00", 4, 0, "unknown format version 9");
    len = cd_build(buf, GM_CHUNK_EVENTS + 1, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "65537 events, above 65536");
    len = cd_build(buf, 1, 0x20, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "unknown columns 0x20");
    len = cd_build(buf, 1, 0, 0, 0, 0, cols, lens);
    cd_expect_corrupt(buf, len, 0, "time scale 0");
    /* a column longer than its events allow */
    uint8_t big[64] = {0};
    cols[0] = big;
    lens[0] = 11;
    len = cd_build(buf, 1, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "column 0 of 11 bytes for 1 events");
    /* a zlib column claiming a huge expansion */
    uint8_t *p = buf;
    memcpy(p, "GC\x01", 3);
    p += 3;
    cd_put(&p, 60000);
    *p++ = 0;
    cd_put(&p, 0);
    cd_put(&p, 0);
    cd_put(&p, 1);
    cd_put(&p, 500000); /* MAIN: 500000 bytes from 5 */
    cd_put(&p, 5);
    memset(p, 0, 5);
    p += 5;
    cd_expect_corrupt(buf, (size_t)(p - buf), 0, "impossible from 5");
    /* trailing bytes */
    lens[0] = 0;
    len = cd_build(buf, 0, 0, 0, 0, 1, cols, lens);
    buf[len++] = 0;
    cd_expect_corrupt(buf, len, 0, "1 bytes after the columns");
    /* first_alloc so large that ids would overflow */
    len = cd_build(buf, 0, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, UINT64_MAX - 5, "first alloc ordinal");
}

Test(codec, crafted_events)
{
    uint8_t buf[256], m[32], t[32], s[32], d[32];
    const uint8_t *cols[8] = {m, t, s, d, d, d, d, d};
    size_t lens[8] = {0};
    uint8_t *p;
    size_t len;
#define CD_COL(arr, k, ...)                                       \
    do {                                                          \
        uint64_t vals_[] = {__VA_ARGS__};                         \
        p = arr;                                                  \
        for (size_t i_ = 0; i_ < sizeof vals_ / sizeof *vals_; i_++) \
            cd_put(&p, vals_[i_]);                                \
        lens[k] = (size_t)(p - arr);                              \
    } while (0)
    /* ALLOC of size 0 at event 1 */
    CD_COL(m, 0, (8u << 3) | GM_OP_ALLOC, (0u << 3) | GM_OP_ALLOC);
    CD_COL(t, 1, 0, 0);
    CD_COL(s, 2, 0, 0);
    len = cd_build(buf, 2, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "event 1: alloc size 0 out of range");
    /* ALLOC above 2^48 */
    CD_COL(m, 0, ((GM_SIZE_LIMIT + 1) << 3) | GM_OP_ALLOC);
    CD_COL(t, 1, 0);
    CD_COL(s, 2, 0);
    len = cd_build(buf, 1, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "event 0: alloc size 281474976710657 out of range");
    /* FREE of an allocation before the first: age 1 with one alloc */
    CD_COL(m, 0, (8u << 3) | GM_OP_ALLOC, (1u << 3) | GM_OP_FREE);
    CD_COL(t, 1, 0, 0);
    CD_COL(s, 2, 0, 0);
    len = cd_build(buf, 2, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "event 1: free at age 1 with only 1 allocations before it");
    /* ... which is fine with an earlier allocation in the trace */
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_event_t out[4];
    size_t n;
    gm_error_t err;
    cr_assert_eq(gm__chunk_decode(&c, buf, len, 1, out, 4, &n, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(out[1].id, 0);
    cr_assert_eq(out[0].id, 1);
    /* cap smaller than the chunk */
    cr_assert_eq(gm__chunk_decode(&c, buf, len, 1, out, 1, &n, NULL, &err), GM_ECORRUPT);
    gm__codec_release(&c);
    /* op 7 */
    CD_COL(m, 0, (1u << 3) | 7u);
    CD_COL(t, 1, 0);
    CD_COL(s, 2, 0);
    len = cd_build(buf, 1, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "event 0: unknown op 7");
    /* MARK tag above 2^32 */
    CD_COL(m, 0, ((uint64_t)UINT32_MAX + 1) << 3 | GM_OP_MARK);
    lens[2] = 0;
    len = cd_build(buf, 1, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "event 0: mark tag 4294967296 out of range");
    /* SEG size above 2^48 */
    CD_COL(m, 0, (GM_SIZE_LIMIT + 1) << 3 | GM_OP_SEG_MAP);
    len = cd_build(buf, 1, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "event 0: segment size 281474976710657 out of range");
    /* device above 2^16 */
    CD_COL(m, 0, 0u << 3 | GM_OP_MARK);
    CD_COL(d, 3, 70000);
    len = cd_build(buf, 1, 0x01, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "event 0: device 70000 out of range");
    /* a column that runs out: two events, one time delta */
    CD_COL(m, 0, 0u << 3 | GM_OP_MARK, 0u << 3 | GM_OP_MARK);
    CD_COL(t, 1, 0);
    len = cd_build(buf, 2, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "event 1: column data ends early");
    /* a column with bytes left over */
    CD_COL(m, 0, 0u << 3 | GM_OP_MARK);
    CD_COL(t, 1, 0, 0);
    len = cd_build(buf, 1, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, "event 1: column data goes on after the last event");
    /* a varint of 12 continuation bytes cannot run away */
    memset(m, 0xff, 12);
    m[12] = 0x01;
    lens[0] = 13;
    CD_COL(t, 1, 0);
    len = cd_build(buf, 2, 0, 0, 0, 1, cols, lens);
    cd_expect_corrupt(buf, len, 0, NULL);
#undef CD_COL
}

/* ---- digest -------------------------------------------------------------- */

static void cd_murmur(const void *data, size_t len, uint32_t seed, uint8_t out[16])
{
    gm__digest_t d;
    gm__digest_init(&d);
    d.h1 = d.h2 = seed;
    gm__digest_update(&d, data, len);
    char hex[33];
    gm__digest_final(&d, hex);
    for (int i = 0; i < 16; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

Test(codec, digest_is_murmur3_x64_128)
{
    /* SMHasher's verification: hash keys {}, {0}, {0,1}, … {0..254} with
     * seed 256 − i, hash the concatenated results with seed 0; the first 4
     * bytes, little endian, are 0x6384BA69 for MurmurHash3_x64_128. */
    uint8_t key[256], hashes[256 * 16], final[16];
    for (int i = 0; i < 256; i++) {
        key[i] = (uint8_t)i;
        cd_murmur(key, (size_t)i, 256u - (unsigned)i, &hashes[i * 16]);
    }
    cd_murmur(hashes, sizeof hashes, 0, final);
    uint32_t v = (uint32_t)final[0] | (uint32_t)final[1] << 8 | (uint32_t)final[2] << 16 |
                 (uint32_t)final[3] << 24;
    cr_assert_eq(v, 0x6384BA69u, "verification 0x%08X", v);

    gm__digest_t d;
    char hex[33];
    gm__digest_init(&d);
    gm__digest_final(&d, hex);
    cr_assert_str_eq(hex, "00000000000000000000000000000000");
}

Test(codec, digest_streams_in_any_pieces)
{
    uint8_t data[1000];
    uint64_t rng = 5;
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)gt_rand(&rng);
    gm__digest_t d;
    char whole[33], parts[33];
    gm__digest_init(&d);
    gm__digest_update(&d, data, sizeof data);
    gm__digest_final(&d, whole);
    for (int trial = 0; trial < 50; trial++) {
        gm__digest_init(&d);
        for (size_t at = 0; at < sizeof data;) {
            size_t k = 1 + gt_rand(&rng) % 40;
            if (k > sizeof data - at)
                k = sizeof data - at;
            gm__digest_update(&d, data + at, k);
            at += k;
        }
        gm__digest_final(&d, parts);
        cr_assert_str_eq(parts, whole);
    }
}

Test(codec, chunk_digest_same_after_encode_and_decode)
{
    cd_opts_t o = {.all_ops = 1, .optional = 1};
    gm_event_t *ev = cd_random(4, 3000, 0, o);
    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_error_t err;
    const uint8_t *blob;
    size_t len, n;
    cr_assert_eq(gm__chunk_encode(&c, ev, 3000, 0, &blob, &len, NULL, &err), 0);
    uint8_t *copy = malloc(len);
    memcpy(copy, blob, len);
    gm__digest_t d1, d2;
    char h1[33], h2[33];
    gm__digest_init(&d1);
    gm__chunk_digest(&c, &d1);
    gm__digest_final(&d1, h1);
    gm__codec_t c2;
    gm__codec_init(&c2, 9); /* another level: same canonical content */
    gm_event_t *out = malloc(3000 * sizeof *out);
    cr_assert_eq(gm__chunk_decode(&c2, copy, len, 0, out, 3000, &n, NULL, &err), 0);
    gm__digest_init(&d2);
    gm__chunk_digest(&c2, &d2);
    gm__digest_final(&d2, h2);
    cr_assert_str_eq(h1, h2);
    /* a changed event changes it */
    ev[100].ts_ns++;
    cr_assert_eq(gm__chunk_encode(&c, ev, 3000, 0, &blob, &len, NULL, &err), 0);
    gm__digest_init(&d1);
    gm__chunk_digest(&c, &d1);
    gm__digest_final(&d1, h1);
    cr_assert_str_neq(h1, h2);
    free(out);
    free(copy);
    free(ev);
    gm__codec_release(&c);
    gm__codec_release(&c2);
}
