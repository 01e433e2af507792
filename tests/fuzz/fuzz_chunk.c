/*
 * tests/fuzz/fuzz_chunk.c — fuzz target for the chunk decoder.
 *
 * Each input is decoded as a chunk whose first ALLOC has ordinal FUZZ_FIRST
 * (the seeds are encoded with it too).  Any input may fail, with GM_ECORRUPT
 * and a message; a crash, a sanitizer report or a leak is the bug.  An input
 * that decodes must hold only events the encoder accepts: it is re-encoded
 * and decoded again, and the two event lists must be equal (abort otherwise).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "store/codec.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FIRST 5

static gm__codec_t fuzz_dec, fuzz_enc;
static gm_event_t *fuzz_a, *fuzz_b;

static void fuzz_init(void)
{
    if (fuzz_a)
        return;
    gm__codec_init(&fuzz_dec, -1);
    gm__codec_init(&fuzz_enc, -1);
    fuzz_a = malloc(GM_CHUNK_EVENTS * sizeof *fuzz_a);
    fuzz_b = malloc(GM_CHUNK_EVENTS * sizeof *fuzz_b);
    if (fuzz_a == NULL || fuzz_b == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    gm_error_t err = {0};
    size_t n, n2;
    uint64_t na, na2;
    int rc = gm__chunk_decode(&fuzz_dec, data, size, FUZZ_FIRST, fuzz_a, GM_CHUNK_EVENTS, &n,
                              &na, &err);
    if (rc != 0) {
        if ((rc != GM_ECORRUPT && rc != GM_ENOMEM) || err.code != rc || err.msg[0] == '\0')
            abort();
        return 0;
    }
    if (n > GM_CHUNK_EVENTS || gm__chunk_peek(data, size) != (long)n)
        abort();
    const uint8_t *blob;
    size_t len;
    if (gm__chunk_encode(&fuzz_enc, fuzz_a, n, FUZZ_FIRST, &blob, &len, &na2, &err) != 0)
        abort(); /* the decoder returned an event the format cannot hold */
    if (na2 != na)
        abort();
    if (gm__chunk_decode(&fuzz_dec, blob, len, FUZZ_FIRST, fuzz_b, GM_CHUNK_EVENTS, &n2, &na2,
                         &err) != 0)
        abort();
    if (n2 != n || na2 != na || (n && memcmp(fuzz_a, fuzz_b, n * sizeof *fuzz_a) != 0))
        abort();
    return 0;
}

/* A seed: n events of a mix chosen by `kind`, encoded. */
static gm_fuzz_seed_t fuzz_seed(size_t n, unsigned kind, uint64_t seed)
{
    gm_event_t *ev = calloc(n ? n : 1, sizeof *ev);
    uint64_t rng = seed, nalloc = FUZZ_FIRST, ts = 1700000000000000000ULL;
    for (size_t i = 0; i < n; i++) {
        gm_event_t *e = &ev[i];
        uint64_t r = gt_rand(&rng);
        ts += kind & 1 ? 1000 * (1 + r % 9) : 500 + r % 20000;
        e->ts_ns = ts;
        unsigned pick = (unsigned)(r >> 32) % 10;
        if (pick < 4) {
            e->op = GM_OP_ALLOC;
            e->id = nalloc++;
            e->size = 512u << ((r >> 8) % 10);
            e->stream = (r >> 40) % 8 == 0;
        } else if (pick < 8) {
            e->op = GM_OP_FREE;
            e->id = nalloc - 1 - (r >> 12) % (nalloc < 6 ? nalloc : 6);
            e->stream = (r >> 40) % 8 == 0;
        } else if (pick == 8) {
            e->op = GM_OP_MARK;
            e->tag = (uint32_t)(r >> 20) % 3;
        } else {
            e->op = (uint8_t)(GM_OP_SEG_ALLOC + (r >> 20) % 4);
            e->size = 2u << 20;
        }
        if (kind & 2) {
            e->device = (uint16_t)((r >> 44) % 2);
            e->addr = 0x7f0000000000 + ((r >> 24) & 0xfff) * 512;
            e->frames = (uint32_t)(r >> 50) % 4;
            e->flags = i < 3;
            if ((r >> 56) % 5 == 0 && e->op != GM_OP_MARK)
                e->tag = 1; /* an unused field: the AUX column */
        }
    }
    gm__codec_t c;
    gm__codec_init(&c, -1);
    const uint8_t *blob;
    size_t len;
    gm_error_t err;
    if (gm__chunk_encode(&c, ev, n, FUZZ_FIRST, &blob, &len, NULL, &err) != 0)
        abort();
    gm_fuzz_seed_t s = {malloc(len), len};
    memcpy(s.data, blob, len);
    gm__codec_release(&c);
    free(ev);
    return s;
}

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    static const struct {
        size_t n;
        unsigned kind;
    } specs[] = {{0, 0}, {1, 0}, {12, 0}, {40, 2}, {60, 3}, {300, 1}, {700, 2}};
    size_t count = sizeof specs / sizeof specs[0];
    *out = malloc(count * sizeof **out);
    for (size_t i = 0; i < count; i++)
        (*out)[i] = fuzz_seed(specs[i].n, specs[i].kind, 1 + i);
    return count;
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
