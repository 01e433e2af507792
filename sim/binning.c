/*
 * sim/binning.c — RAPIDS RMM's binning_memory_resource in front of its
 * pool_memory_resource: requests up to the largest bin get a block of a
 * fixed size from a bin, larger ones go to the pool
 * (rmm/mr/device/binning_memory_resource.hpp, fixed_size_memory_resource.hpp,
 * detail/fixed_size_free_list.hpp, detail/stream_ordered_memory_resource.hpp).
 * Behaviour learned from the source, code our own.
 *
 * Algorithm:
 *   - Bins of 2^min_exponent … 2^max_exponent bytes (default 256 KiB …
 *     4 MiB, as binning_memory_resource(upstream, 18, 22) builds them).  A
 *     request of n bytes goes to the smallest bin ≥ n (RMM's
 *     map::lower_bound on the raw size) and gets a whole block of that bin;
 *     a request above the largest bin goes to the pool (sim/pool.c, the
 *     same device), which serves it as RMM's pool does.
 *   - Each bin (a fixed_size_memory_resource) takes its blocks from the pool
 *     in chunks of block × blocks_to_preallocate (default 128) bytes, cut
 *     into blocks.  It takes its first chunk when it is created (RMM does,
 *     in the constructor: 992 MiB of chunks for the default bins) and
 *     another when a request finds no free block.  If the device cannot
 *     hold a bin's first chunk at creation, the bin takes it at its first
 *     request instead (RMM would fail to construct).
 *   - Free blocks of a bin are kept per stream in FIFO order: a free goes to
 *     the back of its stream's list, an allocation takes the front of its
 *     own stream's list, else the front of the first other stream's list
 *     that has one (the streams in trace-index order, as in sim/pool.c),
 *     else a new chunk whose blocks go to the back of its list (the first
 *     one served).  Chunks are never given back to the pool.
 *   - empty_cache (RMM has none) gives every chunk whose blocks are all free
 *     back to the pool, then the pool's wholly free upstream blocks back to
 *     the device: what destroying and re-creating an idle resource does.
 *
 * Structures: per bin and stream a FIFO ring of block addresses; an address
 * map of every bin block (→ chunk index and a live bit), chunks with their
 * count of free blocks.  The pool is a gm__policy_pool instance on the same
 * device, driven through its ops table.
 *
 * Invariants (check): the pool's own; every bin block is in the address map
 * with a chunk of that bin; a chunk's free count equals its blocks found in
 * the FIFOs, and no block is twice in them or both free and live; live bin
 * blocks and live pool blocks sum to the allocated bytes; chunks are live
 * blocks of the pool of the right size; bytes in use by the pool are the
 * chunks plus the live large blocks.
 */
#include "gmsim/policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "base/vec.h"

#define BIN_MAX_BINS 40

extern const gm_policy_ops_t gm__policy_pool;

typedef struct bin_fifo {
    uint64_t *a; /* ring of block addresses */
    uint32_t head, len, cap; /* cap a power of two */
} bin_fifo_t;

typedef struct bin_chunk {
    uint64_t base;
    uint32_t bin;
    uint32_t nfree; /* blocks of it in the FIFOs */
} bin_chunk_t;

typedef struct bin_bin {
    uint64_t block; /* block size */
    bin_fifo_t *fifo; /* per stream */
    uint32_t nstreams;
} bin_bin_t;

typedef struct binning {
    gm_policy_t base;
    gm_policy_t *pool;
    unsigned nbins;
    uint64_t per_chunk; /* blocks_to_preallocate */
    bin_bin_t bins[BIN_MAX_BINS];

    bin_chunk_t *chunks;
    uint32_t nchunks;
    size_t chunkcap;
    gm__idmap_t blocks;   /* bin block address → chunk index << 1 | live */
    uint64_t allocated;   /* bin blocks and large blocks handed out */
    uint64_t bin_live;    /* bytes of live bin blocks */
    uint64_t large_live;  /* bytes of live pool blocks handed out directly */
} binning_t;

extern const gm_policy_ops_t gm__policy_binning;

#define BINNING(p) GM_POLICY_DOWNCAST(binning_t, p, gm__policy_binning)

/* ---- FIFOs ------------------------------------------------------------------ */

static int bin_fifo_push(bin_fifo_t *f, uint64_t addr)
{
    if (f->len == f->cap) {
        uint32_t cap = f->cap ? 2 * f->cap : 64;
        if (cap <= f->cap)
            return GM_ENOMEM;
        uint64_t *a = malloc((size_t)cap * sizeof *a);
        if (a == NULL)
            return GM_ENOMEM;
        for (uint32_t i = 0; i < f->len; i++)
            a[i] = f->a[(f->head + i) & (f->cap - 1)];
        free(f->a);
        f->a = a;
        f->head = 0;
        f->cap = cap;
    }
    f->a[(f->head + f->len) & (f->cap - 1)] = addr;
    f->len++;
    return 0;
}

static uint64_t bin_fifo_pop(bin_fifo_t *f)
{
    uint64_t addr = f->a[f->head];
    f->head = (f->head + 1) & (f->cap - 1);
    f->len--;
    return addr;
}

static int bin_streams(bin_bin_t *bn, uint32_t s)
{
    if (s < bn->nstreams)
        return 0;
    if (s == UINT32_MAX)
        return GM_EINVAL;
    uint32_t n = bn->nstreams ? bn->nstreams : 4;
    while (n <= s)
        n = n > UINT32_MAX / 2 ? UINT32_MAX : 2 * n;
    bin_fifo_t *f = realloc(bn->fifo, (size_t)n * sizeof *f);
    if (f == NULL)
        return GM_ENOMEM;
    memset(f + bn->nstreams, 0, (size_t)(n - bn->nstreams) * sizeof *f);
    bn->fifo = f;
    bn->nstreams = n;
    return 0;
}

/* ---- chunks ----------------------------------------------------------------- */

/* Take a chunk for bin k from the pool on stream s; its blocks go to the
 * back of s's FIFO.  0, GM_ALLOC_OOM, or GM_ENOMEM. */
static int bin_chunk_new(binning_t *m, unsigned k, uint32_t s)
{
    bin_bin_t *bn = &m->bins[k];
    int rc = bin_streams(bn, s);
    if (rc != 0)
        return rc;
    if (GM_VEC_RESERVE(m->chunks, m->chunkcap, (size_t)m->nchunks + 1, 16))
        return GM_ENOMEM;
    gm_request_t req = {.size = bn->block * m->per_chunk, .stream = s};
    gm_block_t blk;
    rc = gm_policy_alloc(m->pool, &req, &blk);
    if (rc != 0)
        return rc;
    uint32_t ci = m->nchunks;
    uint64_t i = 0;
    for (; i < m->per_chunk && rc == 0; i++) {
        uint64_t a = blk.addr + i * bn->block;
        rc = gm__idmap_put(&m->blocks, a, (uint64_t)ci << 1);
        if (rc == 0 && (rc = bin_fifo_push(&bn->fifo[s], a)) != 0)
            gm__idmap_remove(&m->blocks, a, NULL);
    }
    if (rc != 0) { /* out of host memory: undo (the pushed blocks are the FIFO's last) */
        uint64_t pushed = i - 1;
        for (uint64_t j = 0; j < pushed; j++)
            gm__idmap_remove(&m->blocks, blk.addr + j * bn->block, NULL);
        bn->fifo[s].len -= (uint32_t)pushed;
        gm_policy_free(m->pool, &blk, s);
        return GM_ENOMEM;
    }
    m->chunks[m->nchunks++] = (bin_chunk_t){blk.addr, k, (uint32_t)m->per_chunk};
    return 0;
}

/* ---- the interface ---------------------------------------------------------- */

static void bin_release_all(binning_t *m)
{
    for (unsigned k = 0; k < m->nbins; k++) {
        for (uint32_t s = 0; s < m->bins[k].nstreams; s++)
            free(m->bins[k].fifo[s].a);
        free(m->bins[k].fifo);
    }
    free(m->chunks);
    gm__idmap_release(&m->blocks);
    if (m->pool != NULL)
        gm_policy_destroy(m->pool);
    free(m);
}

static int bin_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                      gm_error_t *err)
{
    int64_t lo = values[0].i, hi = values[1].i, per = values[2].i;
    if (lo < 8 || lo > 40)
        return gm_error_set(err, GM_EINVAL, "invalid value '%" PRId64
                            "' for binning.min_exponent: expected 8 to 40", lo);
    if (hi < lo || hi > 40 || hi - lo + 1 > BIN_MAX_BINS)
        return gm_error_set(err, GM_EINVAL, "invalid value '%" PRId64
                            "' for binning.max_exponent: expected min_exponent to 40", hi);
    if (per < 1 || per > (INT64_C(1) << 20))
        return gm_error_set(err, GM_EINVAL, "invalid value '%" PRId64
                            "' for binning.blocks_to_preallocate: expected 1 to 1048576", per);
    binning_t *m = gm_policy_new(sizeof *m, &gm__policy_binning, dev, err);
    if (m == NULL)
        return GM_ENOMEM;
    m->nbins = (unsigned)(hi - lo + 1);
    m->per_chunk = (uint64_t)per;
    for (unsigned k = 0; k < m->nbins; k++)
        m->bins[k].block = UINT64_C(1) << (lo + k);
    gm__idmap_init(&m->blocks);
    int rc = gm_policy_create(&gm__policy_pool, dev, values + 3, &m->pool, err);
    if (rc != 0) {
        m->pool = NULL;
        bin_release_all(m);
        return rc;
    }
    /* the bins take their first chunk now, as RMM's constructors do */
    for (unsigned k = 0; k < m->nbins; k++) {
        rc = bin_chunk_new(m, k, 0);
        if (rc < 0) {
            bin_release_all(m);
            return gm_error_set(err, rc, "out of memory creating policy 'binning'");
        }
    }
    *out = &m->base;
    return 0;
}

/* The bin for n bytes, or nbins when n goes to the pool. */
static inline unsigned bin_for(const binning_t *m, uint64_t n)
{
    if (n > m->bins[m->nbins - 1].block)
        return m->nbins;
    uint64_t lo = m->bins[0].block;
    if (n <= lo)
        return 0;
    return (unsigned)(64 - __builtin_clzll(n - 1)) - (unsigned)__builtin_ctzll(lo);
}

static int bin_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    binning_t *m = BINNING(p);
    if (m == NULL)
        return GM_EINVAL;
    unsigned k = bin_for(m, req->size);
    if (k == m->nbins) {
        int rc = gm_policy_alloc(m->pool, req, out);
        if (rc == 0) {
            m->allocated += out->size;
            m->large_live += out->size;
        }
        return rc;
    }
    bin_bin_t *bn = &m->bins[k];
    uint32_t s = req->stream;
    int rc = bin_streams(bn, s);
    if (rc != 0)
        return rc;
    bin_fifo_t *f = &bn->fifo[s];
    if (f->len == 0) {
        for (uint32_t t = 0; t < bn->nstreams; t++) {
            if (t != s && bn->fifo[t].len != 0) {
                f = &bn->fifo[t];
                break;
            }
        }
    }
    if (f->len == 0) {
        if ((rc = bin_chunk_new(m, k, s)) != 0)
            return rc;
        f = &bn->fifo[s];
    }
    uint64_t a = bin_fifo_pop(f), v = 0;
    gm__idmap_get(&m->blocks, a, &v);
    gm__idmap_put(&m->blocks, a, v | 1); /* present already: cannot fail */
    m->chunks[v >> 1].nfree--;
    m->allocated += bn->block;
    m->bin_live += bn->block;
    out->addr = a;
    out->size = bn->block;
    return 0;
}

static int bin_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    binning_t *m = BINNING(p);
    if (m == NULL)
        return GM_EINVAL;
    uint64_t v;
    if (!gm__idmap_get(&m->blocks, blk->addr, &v)) {
        int rc = gm_policy_free(m->pool, blk, stream);
        if (rc == 0) {
            m->allocated -= blk->size;
            m->large_live -= blk->size;
        }
        return rc;
    }
    bin_chunk_t *c = &m->chunks[v >> 1];
    bin_bin_t *bn = &m->bins[c->bin];
    if (!(v & 1) || blk->size != bn->block)
        return GM_EINVAL;
    int rc = bin_streams(bn, stream);
    if (rc == 0)
        rc = bin_fifo_push(&bn->fifo[stream], blk->addr);
    if (rc != 0)
        return rc;
    gm__idmap_put(&m->blocks, blk->addr, v & ~UINT64_C(1));
    c->nfree++;
    m->allocated -= blk->size;
    m->bin_live -= blk->size;
    return 0;
}

static void bin_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    binning_t *m = BINNING(p);
    if (m == NULL)
        return;
    gm_policy_stats_t ps;
    gm_policy_stats(m->pool, &ps);
    out->allocated = m->allocated;
    out->largest_free = ps.largest_free;
    for (unsigned k = m->nbins; k-- > 0;) {
        int any = 0;
        for (uint32_t s = 0; s < m->bins[k].nstreams && !any; s++)
            any = m->bins[k].fifo[s].len != 0;
        if (any) {
            if (m->bins[k].block > out->largest_free)
                out->largest_free = m->bins[k].block;
            break;
        }
    }
}

/* Give wholly free chunks back to the pool, then the pool's free memory to
 * the device. */
static void bin_empty_cache(gm_policy_t *p)
{
    binning_t *m = BINNING(p);
    if (m == NULL)
        return;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < m->nchunks; i++) {
        bin_chunk_t c = m->chunks[i];
        uint64_t block = m->bins[c.bin].block;
        if (c.nfree == m->per_chunk) {
            for (uint64_t j = 0; j < m->per_chunk; j++)
                gm__idmap_remove(&m->blocks, c.base + j * block, NULL);
            gm_block_t blk = {c.base, block * m->per_chunk};
            gm_policy_free(m->pool, &blk, 0);
        } else {
            m->chunks[kept++] = c;
        }
    }
    if (kept != m->nchunks) {
        /* drop the given-back blocks from the FIFOs (order kept), renumber
         * the chunks that stay */
        for (unsigned k = 0; k < m->nbins; k++) {
            for (uint32_t s = 0; s < m->bins[k].nstreams; s++) {
                bin_fifo_t *f = &m->bins[k].fifo[s];
                uint32_t n = f->len, w = 0;
                for (uint32_t r = 0; r < n; r++) {
                    uint64_t a = f->a[(f->head + r) & (f->cap - 1)], v;
                    if (gm__idmap_get(&m->blocks, a, &v))
                        f->a[(f->head + w++) & (f->cap - 1)] = a;
                }
                f->len = w;
            }
        }
        for (uint32_t i = 0; i < kept; i++) {
            const bin_chunk_t *c = &m->chunks[i];
            uint64_t block = m->bins[c->bin].block;
            for (uint64_t j = 0; j < m->per_chunk; j++) {
                uint64_t a = c->base + j * block, v = 0;
                gm__idmap_get(&m->blocks, a, &v);
                gm__idmap_put(&m->blocks, a, ((uint64_t)i << 1) | (v & 1));
            }
        }
        m->nchunks = kept;
    }
    gm_policy_empty_cache(m->pool);
}

static int bin_check(gm_policy_t *p, gm_check_t *ck)
{
    binning_t *m = BINNING(p);
    if (m == NULL)
        return gm_check_fail(ck, "not a binning policy");
    if (m->pool->ops->check(m->pool, ck) != 0)
        return ck->bad; /* the pool's own invariants first */
    uint64_t nblocks = 0, chunk_bytes = 0, bin_live = 0;
    uint32_t *seen = calloc((size_t)m->nchunks + 1, sizeof *seen);
    if (seen == NULL)
        return 0; /* cannot check without memory: report nothing rather than a false fault */
    for (unsigned k = 0; k < m->nbins && ck->bad == 0; k++) {
        for (uint32_t s = 0; s < m->bins[k].nstreams && ck->bad == 0; s++) {
            const bin_fifo_t *f = &m->bins[k].fifo[s];
            for (uint32_t r = 0; r < f->len; r++) {
                uint64_t a = f->a[(f->head + r) & (f->cap - 1)], v;
                if (!gm__idmap_get(&m->blocks, a, &v) || (v >> 1) >= m->nchunks) {
                    gm_check_fail(ck, "free block 0x%" PRIx64 " of bin %u is no bin block", a, k);
                    break;
                }
                if (v & 1) {
                    gm_check_fail(ck, "block 0x%" PRIx64 " is both free and live", a);
                    break;
                }
                if (m->chunks[v >> 1].bin != k) {
                    gm_check_fail(ck,
                                  "block 0x%" PRIx64 " in the lists of bin %u belongs to bin %u", a,
                                  k, m->chunks[v >> 1].bin);
                    break;
                }
                seen[v >> 1]++;
            }
        }
    }
    for (uint32_t i = 0; i < m->nchunks && ck->bad == 0; i++) {
        const bin_chunk_t *c = &m->chunks[i];
        uint64_t block = m->bins[c->bin].block;
        chunk_bytes += block * m->per_chunk;
        if (seen[i] != c->nfree)
            gm_check_fail(ck,
                          "chunk 0x%" PRIx64 " counts %" PRIu32
                          " free blocks, the lists hold %" PRIu32 " (a block listed twice or lost)",
                          c->base, c->nfree, seen[i]);
        for (uint64_t j = 0; j < m->per_chunk && ck->bad == 0; j++) {
            uint64_t v;
            if (!gm__idmap_get(&m->blocks, c->base + j * block, &v) || (v >> 1) != i) {
                gm_check_fail(ck, "block 0x%" PRIx64 " of chunk 0x%" PRIx64 " is not mapped to it",
                              c->base + j * block, c->base);
                break;
            }
            bin_live += (v & 1) ? block : 0;
            nblocks++;
        }
    }
    free(seen);
    if (ck->bad == 0 && nblocks != gm__idmap_count(&m->blocks))
        gm_check_fail(ck, "address map holds %zu bin blocks, the chunks %" PRIu64,
                      gm__idmap_count(&m->blocks), nblocks);
    if (ck->bad == 0 && bin_live != m->bin_live)
        gm_check_fail(ck, "live bin bytes %" PRIu64 " differ from the blocks' %" PRIu64,
                      m->bin_live, bin_live);
    if (ck->bad == 0 && m->bin_live + m->large_live != m->allocated)
        gm_check_fail(ck, "allocated %" PRIu64 " is not bin %" PRIu64 " + large %" PRIu64,
                      m->allocated, m->bin_live, m->large_live);
    gm_policy_stats_t ps;
    gm_policy_stats(m->pool, &ps);
    if (ck->bad == 0 && ps.allocated != chunk_bytes + m->large_live)
        gm_check_fail(ck,
                      "the pool has %" PRIu64 " bytes out, chunks %" PRIu64 " + large %" PRIu64,
                      ps.allocated, chunk_bytes, m->large_live);
    return ck->bad;
}

static void bin_destroy(gm_policy_t *p)
{
    binning_t *m = BINNING(p);
    if (m != NULL)
        bin_release_all(m);
}

/* The pool's parameters follow the binning ones, in the pool's order
 * (create passes values + 3 to the pool). */
static const gm_param_spec_t bin_params[] = {
    {"min_exponent", GM_PARAM_INT, "18", "smallest bin: 2^min_exponent bytes (18: 256 KiB)", NULL},
    {"max_exponent", GM_PARAM_INT, "22",
     "largest bin: 2^max_exponent bytes (22: 4 MiB); larger requests go to the pool", NULL},
    {"blocks_to_preallocate", GM_PARAM_INT, "128",
     "blocks per chunk a bin takes from the pool (one chunk at creation)", NULL},
    {"initial_pool_size", GM_PARAM_SIZE, "0", "the pool's initial size (a multiple of 256)", NULL},
    {"maximum_pool_size", GM_PARAM_SIZE, "0",
     "the pool's maximum size (a multiple of 256; 0 or none: no maximum)", "none|unlimited"},
};

const gm_policy_ops_t gm__policy_binning = {
    .name = "binning",
    .help = "RAPIDS RMM binning_memory_resource: fixed-size bins (256 KiB to 4 MiB) in front of "
            "the pool",
    GM_POLICY_OPS(bin),
    .empty_cache = bin_empty_cache,
};
