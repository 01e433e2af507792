/*
 * tests/fuzz/fuzz_spool.c — fuzz target for the capture spool reader.
 *
 * A spool left by a killed process, or any file handed to `gmsim import`,
 * is outside data.  Each input is imported with gm_spool_import_buffer
 * into an in-memory store (the target committed when the import succeeds,
 * aborted otherwise).  Most mutations break a block's checksum and
 * exercise the recovery paths (resynchronization, cut and duplicate
 * blocks); so that the record checks behind the checksum are reached too,
 * an input whose last byte is odd is imported a second time with every
 * block's checksum recomputed.  Any result is fine; a crash, a sanitizer
 * report or a leak is the bug.  Seeds are spools built here (the format
 * has no real files in ../shared/data).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gmsim/capture.h"
#include "formats/spool_format.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gm_store_t *fuzz_store;

static void fuzz_import(const uint8_t *data, size_t size)
{
    gm_error_t err;
    gm_import_target_t *t;
    if (gm_import_target_create(fuzz_store, "fuzz", GM_WRITE_REPLACE, &t, &err) != 0)
        abort();
    if (gm_spool_import_buffer(data, size, "fuzz.spool", t, &err) != 0)
        gm_import_abort(t);
    else if (gm_import_commit(t, &err) != 0)
        abort();
}

/* Recompute the checksum of every block that fits. */
static void fuzz_resum(uint8_t *p, size_t size)
{
    size_t pos = 0;
    while (pos + SPOOL_HDR_BYTES <= size) {
        spool_hdr_t h;
        memcpy(&h, p + pos, sizeof h);
        if (h.len % 8 != 0 || h.len > size - pos - SPOOL_HDR_BYTES)
            break;
        h.sum = spool_sum(p + pos, p + pos + SPOOL_HDR_BYTES, h.len);
        memcpy(p + pos + 40, &h.sum, 8);
        pos += SPOOL_HDR_BYTES + h.len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_error_t err;
    if (fuzz_store == NULL && gm_store_open(":memory:", GM_STORE_WRITE, &fuzz_store, &err) != 0)
        abort();
    fuzz_import(data, size);
    if (size > 0 && (data[size - 1] & 1)) {
        uint8_t *copy = malloc(size);
        if (copy == NULL)
            abort();
        memcpy(copy, data, size);
        fuzz_resum(copy, size);
        fuzz_import(copy, size);
        free(copy);
    }
    return 0;
}

/* ---- seeds -------------------------------------------------------------------- */

typedef struct fuzz_buf {
    uint8_t *p;
    size_t n;
} fuzz_buf_t;

static void fuzz_block(fuzz_buf_t *b, uint16_t type, uint64_t seq, const void *payload,
                       uint32_t len, uint32_t nrec)
{
    uint8_t *np = realloc(b->p, b->n + SPOOL_HDR_BYTES + len);
    if (np == NULL)
        abort();
    b->p = np;
    spool_hdr_t h = {SPOOL_MAGIC, SPOOL_VERSION, type, len, nrec, 9, 0, seq, 100, 0};
    h.sum = spool_sum(&h, payload, len);
    memcpy(b->p + b->n, &h, sizeof h);
    memcpy(b->p + b->n + SPOOL_HDR_BYTES, payload, len);
    b->n += SPOOL_HDR_BYTES + len;
}

typedef struct fuzz_pl {
    unsigned char p[2048];
    uint32_t n, nrec;
} fuzz_pl_t;

static void fuzz_rec(fuzz_pl_t *pl, uint8_t op, uint64_t ts, uint64_t addr, uint64_t size,
                     int32_t dev, int64_t result, const char *text)
{
    pl->n += (uint32_t)spool_encode(pl->p + pl->n, 100, ts, op, 0, dev, addr, size, 0x10, 0x77,
                                    result, text);
    pl->nrec++;
}

static fuzz_buf_t fuzz_seed(int variant)
{
    fuzz_buf_t b = {NULL, 0};
    char text[160] = "gmsim_spool=1\nhost=h\npid=7\nrank=0\nt0_mono_ns=100\nmode=preload\n";
    fuzz_block(&b, SPOOL_BLOCK_HEADER, 1, text, sizeof text, 0);
    fuzz_pl_t r = {0};
    fuzz_rec(&r, SPOOL_OP_CUDA_MALLOC, 200, 0x1000, 512, 0, 0, NULL);
    fuzz_rec(&r, SPOOL_OP_CU_MEM_CREATE, 210, 0, 1 << 21, 1, 0, NULL);
    fuzz_rec(&r, SPOOL_OP_CU_MEM_MAP, 220, 0x9000, 1 << 21, -1, 0, NULL);
    fuzz_rec(&r, SPOOL_OP_CUDA_FREE, 230, 0x1000, 0, -1, 0, NULL);
    fuzz_rec(&r, SPOOL_OP_CU_MEM_UNMAP, 240, 0x9000, 1 << 21, -1, 0, NULL);
    fuzz_rec(&r, SPOOL_OP_CU_MEM_RELEASE, 250, 0, 0, -1, 0, NULL);
    fuzz_block(&b, SPOOL_BLOCK_RECORDS, 2, r.p, r.n, r.nrec);
    fuzz_pl_t m = {0};
    fuzz_rec(&m, SPOOL_OP_RANGE_PUSH, 150, 0, 0, -1, 0, "forward");
    fuzz_rec(&m, SPOOL_OP_RANGE_START, 155, 0, 0, -1, 0, "step");
    fuzz_block(&b, SPOOL_BLOCK_RECORDS, 3, m.p, m.n, m.nrec);
    fuzz_pl_t e = {0};
    fuzz_rec(&e, SPOOL_OP_RANGE_POP, 260, 0, 0, -1, 0, NULL);
    fuzz_rec(&e, SPOOL_OP_RANGE_END, 270, 0, 0, -1, 0, NULL);
    fuzz_block(&b, SPOOL_BLOCK_RECORDS, 4, e.p, e.n, e.nrec);
    if (variant == 1) { /* a duplicate and a cut tail */
        fuzz_block(&b, SPOOL_BLOCK_RECORDS, 2, r.p, 16, 1);
        b.n -= 5;
    }
    if (variant == 2) { /* an out-of-memory failure and a free of an unknown address */
        fuzz_pl_t f = {0};
        fuzz_rec(&f, SPOOL_OP_CUDA_MALLOC, 300, 0, 1ull << 50, 0, 2, NULL);
        fuzz_rec(&f, SPOOL_OP_CUDA_FREE_ASYNC, 310, 0x5555, 0, 0, 0, NULL);
        fuzz_block(&b, SPOOL_BLOCK_RECORDS, 5, f.p, f.n, f.nrec);
    }
    /* last byte odd: the driver also tries the re-checksummed copy */
    uint8_t *np = realloc(b.p, b.n + 1);
    if (np == NULL)
        abort();
    b.p = np;
    b.p[b.n++] = 1;
    return b;
}

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    enum { N = 3 };
    gm_fuzz_seed_t *seeds = calloc(N, sizeof *seeds);
    if (seeds == NULL) {
        *out = NULL;
        return 0;
    }
    for (int i = 0; i < N; i++) {
        fuzz_buf_t b = fuzz_seed(i);
        seeds[i].data = b.p;
        seeds[i].len = b.n;
    }
    *out = seeds;
    return N;
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; seeds != NULL && i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
