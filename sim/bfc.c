/*
 * sim/bfc.c — TensorFlow's best-fit-with-coalescing allocator (BFC), as its
 * GPU allocator uses it (tensorflow/tsl/framework/bfc_allocator.cc,
 * formerly tensorflow/core/common_runtime/bfc_allocator.cc; XLA and JAX use
 * the same class).  Behaviour learned from the source, code our own.
 *
 * Algorithm:
 *   - Every request is rounded up to a multiple of 256 bytes
 *     (kMinAllocationSize).
 *   - Memory comes from the device in *regions*.  With allow_growth the
 *     first region is min(memory_limit, 2 MiB) and the region size
 *     (curr_region_allocation_bytes) doubles: before a new region it is
 *     doubled until it holds the request, and after a region is taken
 *     without such doubling it is doubled once for the next time.  Each
 *     region is min(region size, memory_limit − bytes already in regions),
 *     and a request larger than that remainder fails at once.  Without
 *     allow_growth the first region is the whole memory_limit.  When the
 *     device refuses a region, the allocator "backpedals" once in its life:
 *     it retries at 90 % of the size until one fits or the size falls below
 *     the request.  Regions are never merged with each other (the GPU
 *     sub-allocator does not support coalescing).
 *   - A region is a list of chunks in address order, each free or in use.
 *     Free chunks sit in 21 bins; bin b holds sizes in [256·2^b, 256·2^(b+1))
 *     (the last bin everything above), each ordered by (size, address).  A
 *     request of r rounded bytes searches from bin(r) upwards and takes the
 *     first chunk of size ≥ r: the smallest such chunk, lowest address among
 *     equals (global best fit).
 *   - The chunk is split when it is at least twice the request, or when the
 *     remainder would be at least max_internal_fragmentation bytes (128 MiB,
 *     or fragmentation_fraction × memory_limit when that is set): the front
 *     r bytes are handed out and the rest becomes a free chunk.  Otherwise
 *     the whole chunk is handed out (the block is larger than r).
 *   - A freed chunk merges with its free neighbours in the region (next,
 *     then previous), and the result goes back into its bin.
 *   - When no chunk fits: take a new region and retry; if that fails and
 *     garbage_collection is on (TF_ENABLE_GPU_GARBAGE_COLLECTION, on by
 *     default), give every wholly free region back to the device when doing
 *     so could make room (the request ≤ limit − regions + free regions), and
 *     take a region again; otherwise the request is an OOM.  (TF then waits
 *     up to 10 s for other threads to free memory; a replay has no other
 *     threads, so that retry finds nothing new.)
 *   - empty_cache gives every wholly free region back (what garbage
 *     collection does, unconditionally); TF has no user-facing call for it.
 *
 * Left out: the freed-at timestamps of the stream-executor "timestamped
 * chunks" mode (off for GPU allocators), and the virtual-memory sub-allocator
 * that can coalesce regions.
 *
 * Memory limit: the memory_limit parameter, else the device's capacity.  On
 * an unlimited device with no memory_limit, allow_growth is unbounded and
 * allow_growth=false reserves BFC_FALLBACK_LIMIT (80 GiB, an 80 GB-class
 * GPU) at the first request.
 *
 * Structures: chunks are blocks of sim/blocktree.h (physical prev/next
 * within the region); each bin is an ordered set by (size, address) with a
 * 21-bit mask of the non-empty bins, so the search is one descent in one
 * bin, or the minimum of the next non-empty one; live chunks are found by
 * address through the id map.
 *
 * Invariants (check):
 *   - every region's chunks tile it exactly, in address order, with
 *     consistent prev/next links, each a multiple of 256 bytes;
 *   - no two neighbouring chunks are both free ("free chunk that should have
 *     merged");
 *   - every free chunk is in the bin of its size and every bin member is a
 *     free chunk of that bin; the bins are ordered sets; the bin mask is
 *     exact;
 *   - every live chunk is in the address map and the map holds nothing else;
 *   - bytes in use equal the live chunks' sizes; region bytes equal the
 *     device's reserved bytes and stay within memory_limit;
 *   - the chunk handles in use are exactly the regions' chunks.
 */
#include "gmsim/policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/carve.h"
#include "base/idmap.h"
#include "base/vec.h"

#define BFC_MIN_ALLOC 256 /* kMinAllocationSize */
#define BFC_BINS 21       /* kNumBins */
#define BFC_FIRST_REGION (UINT64_C(2) << 20)
#define BFC_DEFAULT_MAX_FRAG (UINT64_C(128) << 20)
#define BFC_FALLBACK_LIMIT (UINT64_C(80) << 30)
#define BFC_UNLIMITED (UINT64_C(1) << 62)

typedef struct bfc_region {
    uint64_t base, size; /* size: bytes the device gave (bytes_received) */
    uint32_t first;      /* handle of the chunk at base */
} bfc_region_t;

typedef struct bfc {
    gm_policy_t base;
    /* parameters */
    uint64_t limit;    /* memory_limit_ */
    uint64_t max_frag; /* max_internal_fragmentation_bytes */
    int growth, gc;

    uint64_t curr_region; /* curr_region_allocation_bytes_ */
    uint64_t in_regions;  /* total_region_allocated_bytes_ */
    int backpedaled;      /* started_backpedal_ */

    gm__bt_heap_t heap;
    uint32_t bin[BFC_BINS];
    uint32_t bin_mask;
    bfc_region_t *regions; /* in address order (the device's addresses only grow) */
    size_t nregions, regcap;
    gm__idmap_t live; /* address of a chunk in use → handle */
    uint64_t in_use;  /* bytes_in_use */
} bfc_t;

extern const gm_policy_ops_t gm__policy_bfc;

#define BFC(p) GM_POLICY_DOWNCAST(bfc_t, p, gm__policy_bfc)

static inline uint64_t bfc_round(uint64_t n)
{
    return (n + BFC_MIN_ALLOC - 1) & ~(uint64_t)(BFC_MIN_ALLOC - 1);
}

/* BinNumForSize: min(floor(log2(bytes / 256)), 20). */
static inline unsigned bfc_bin_for(uint64_t bytes)
{
    uint64_t v = bytes >> 8;
    unsigned b = v == 0 ? 0 : 63u - (unsigned)__builtin_clzll(v);
    return b < BFC_BINS - 1 ? b : BFC_BINS - 1;
}

static inline void bfc_bin_insert(bfc_t *f, uint32_t h)
{
    unsigned k = bfc_bin_for(f->heap.b[h].size);
    f->heap.b[h].list = k;
    gm__bt_insert(f->heap.b, &f->bin[k], h);
    f->bin_mask |= UINT32_C(1) << k;
}

static inline void bfc_bin_remove(bfc_t *f, uint32_t h)
{
    unsigned k = f->heap.b[h].list;
    gm__bt_remove(f->heap.b, &f->bin[k], h);
    if (f->bin[k] == GM__BT_NONE)
        f->bin_mask &= ~(UINT32_C(1) << k);
}

/* ---- regions ----------------------------------------------------------------- */

/* Extend: take a new region for a request of `rounded` bytes, as one free
 * chunk in its bin.  1 on success, 0 when it cannot (limit, device),
 * GM_ENOMEM. */
static int bfc_extend(bfc_t *f, uint64_t rounded)
{
    gm_device_t *dev = f->base.dev;
    uint64_t avail = f->limit > f->in_regions ? f->limit - f->in_regions : 0;
    avail = avail / BFC_MIN_ALLOC * BFC_MIN_ALLOC;
    if (rounded > avail)
        return 0;
    int increased = 0;
    while (rounded > f->curr_region) {
        f->curr_region = f->curr_region < BFC_UNLIMITED ? 2 * f->curr_region : f->curr_region;
        increased = 1;
    }
    uint64_t bytes = f->curr_region < avail ? f->curr_region : avail;
    uint64_t addr = 0, got = 0;
    int ok = gm_device_malloc(dev, bytes, 0, &addr, &got) == 0;
    if (!ok && !f->backpedaled) {
        f->backpedaled = 1;
        while (!ok) {
            bytes = bfc_round((uint64_t)((double)bytes * 0.9));
            if (bytes < rounded)
                break;
            ok = gm_device_malloc(dev, bytes, 0, &addr, &got) == 0;
        }
    }
    if (!ok)
        return 0;

    uint32_t h = gm__bt_new(&f->heap);
    if (h == GM__BT_NONE || (f->nregions == f->regcap && f->regcap >= SIZE_MAX / 2)) {
        gm_device_free(dev, addr, got);
        if (h != GM__BT_NONE)
            gm__bt_drop(&f->heap, h);
        return GM_ENOMEM;
    }
    if (GM_VEC_RESERVE(f->regions, f->regcap, f->nregions + 1, 16)) {
        gm_device_free(dev, addr, got);
        gm__bt_drop(&f->heap, h);
        return GM_ENOMEM;
    }
    if (!increased)
        f->curr_region = f->curr_region < BFC_UNLIMITED ? 2 * f->curr_region : f->curr_region;
    f->in_regions += got;
    gm__bt_blk_t *c = &f->heap.b[h];
    c->addr = addr;
    c->size = got;
    f->regions[f->nregions++] = (bfc_region_t){addr, got, h};
    bfc_bin_insert(f, h);
    return 1;
}

/* Give back every wholly free region; the number given back. */
static size_t bfc_release_free(bfc_t *f)
{
    size_t kept = 0, n = 0;
    for (size_t i = 0; i < f->nregions; i++) {
        bfc_region_t r = f->regions[i];
        const gm__bt_blk_t *c = &f->heap.b[r.first];
        if (c->list != GM__BT_USED && c->size == r.size) {
            bfc_bin_remove(f, r.first);
            gm__bt_drop(&f->heap, r.first);
            gm_device_free(f->base.dev, r.base, r.size);
            f->in_regions -= r.size;
            n++;
        } else {
            f->regions[kept++] = r;
        }
    }
    f->nregions = kept;
    return n;
}

/* DeallocateFreeRegions: only with garbage collection, and only when giving
 * back the free regions could make room for the request. */
static int bfc_collect(bfc_t *f, uint64_t rounded)
{
    if (!f->gc)
        return 0;
    uint64_t free_bytes = 0;
    for (size_t i = 0; i < f->nregions; i++) {
        const gm__bt_blk_t *c = &f->heap.b[f->regions[i].first];
        if (c->list != GM__BT_USED && c->size == f->regions[i].size)
            free_bytes += f->regions[i].size;
    }
    if (free_bytes == 0)
        return 0;
    uint64_t avail = (f->limit > f->in_regions ? f->limit - f->in_regions : 0) + free_bytes;
    if (rounded > avail)
        return 0;
    bfc_release_free(f);
    return 1;
}

/* ---- the interface ---------------------------------------------------------- */

static int bfc_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                      gm_error_t *err)
{
    uint64_t limit = values[0].size;
    int growth = values[1].b, gc = values[2].b;
    double frac = values[3].d;
    if (!(frac >= 0.0 && frac <= 1.0))
        return gm_error_set(err, GM_EINVAL,
                            "invalid value '%g' for bfc.fragmentation_fraction: expected 0 to 1",
                            frac);
    bfc_t *f = gm_policy_new(sizeof *f, &gm__policy_bfc, dev, err);
    if (f == NULL)
        return GM_ENOMEM;
    if (limit == 0)
        limit = dev->cfg.capacity;
    if (limit == 0)
        limit = growth ? BFC_UNLIMITED : BFC_FALLBACK_LIMIT;
    f->limit = limit;
    f->growth = growth;
    f->gc = gc;
    f->max_frag = frac > 0.0 ? (uint64_t)(frac * (double)limit) : BFC_DEFAULT_MAX_FRAG;
    f->curr_region = bfc_round(growth ? (limit < BFC_FIRST_REGION ? limit : BFC_FIRST_REGION)
                                      : limit);
    for (unsigned k = 0; k < BFC_BINS; k++)
        f->bin[k] = GM__BT_NONE;
    gm__bt_heap_init(&f->heap);
    gm__idmap_init(&f->live);
    *out = &f->base;
    return 0;
}

/* FindChunkPtr: the best-fitting free chunk, split when the rule says so. */
static uint32_t bfc_find(bfc_t *f, uint64_t rounded)
{
    unsigned k = bfc_bin_for(rounded);
    uint32_t h = GM__BT_NONE;
    if (f->bin_mask >> k & 1)
        h = gm__bt_fit(f->heap.b, f->bin[k], rounded);
    if (h == GM__BT_NONE) {
        uint32_t above = f->bin_mask & ~((UINT32_C(2) << k) - 1);
        if (above == 0)
            return GM__BT_NONE;
        k = (unsigned)__builtin_ctz(above);
        h = f->bin[k];
        while (f->heap.b[h].left != GM__BT_NONE) /* the bin's smallest */
            h = f->heap.b[h].left;
    }
    return h;
}

static int bfc_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    bfc_t *f = BFC(p);
    if (f == NULL)
        return GM_EINVAL;
    if (req->size > BFC_UNLIMITED)
        return GM_ALLOC_OOM;
    uint64_t rounded = bfc_round(req->size);
    /* the split may need a handle: take it first (the array may move) */
    uint32_t spare = gm__bt_new(&f->heap);
    if (spare == GM__BT_NONE)
        return GM_ENOMEM;
    uint32_t h = bfc_find(f, rounded);
    int rc = 0;
    if (h == GM__BT_NONE && (rc = bfc_extend(f, rounded)) == 1)
        h = bfc_find(f, rounded);
    if (h == GM__BT_NONE && rc >= 0 && bfc_collect(f, rounded) && (rc = bfc_extend(f, rounded)) == 1)
        h = bfc_find(f, rounded);
    if (h == GM__BT_NONE || rc < 0) {
        gm__bt_drop(&f->heap, spare);
        return rc < 0 ? rc : GM_ALLOC_OOM;
    }
    gm__bt_blk_t *b = f->heap.b, *c = &b[h];
    bfc_bin_remove(f, h);
    if (c->size >= 2 * rounded || c->size - rounded >= f->max_frag) {
        gm__bt_cut(&f->heap, h, rounded, spare);
        bfc_bin_insert(f, spare);
    } else {
        gm__bt_drop(&f->heap, spare);
    }
    c->list = GM__BT_USED;
    if (gm__idmap_put(&f->live, c->addr, h) != 0) {
        /* undo: the chunk goes back free (and merges with its remainder) */
        c->list = 0;
        uint32_t nx = c->next;
        if (nx != GM__BT_NONE && b[nx].list != GM__BT_USED) {
            bfc_bin_remove(f, nx);
            gm__bt_absorb(&f->heap, h, nx);
        }
        bfc_bin_insert(f, h);
        return GM_ENOMEM;
    }
    f->in_use += c->size;
    out->addr = c->addr;
    out->size = c->size;
    return 0;
}

static int bfc_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    (void)stream;
    bfc_t *f = BFC(p);
    if (f == NULL)
        return GM_EINVAL;
    uint32_t h = gm__carve_live(&f->heap, &f->live, blk);
    if (h == GM__BT_NONE)
        return GM_EINVAL;
    gm__bt_blk_t *b = f->heap.b, *c = &b[h];
    gm__idmap_remove(&f->live, blk->addr, NULL);
    f->in_use -= c->size;
    c->list = 0;
    /* TryToCoalesce: the next chunk into c, then c into the previous one */
    uint32_t nx = c->next;
    if (nx != GM__BT_NONE && b[nx].list != GM__BT_USED) {
        bfc_bin_remove(f, nx);
        gm__bt_absorb(&f->heap, h, nx);
    }
    uint32_t pv = c->prev;
    if (pv != GM__BT_NONE && b[pv].list != GM__BT_USED) {
        bfc_bin_remove(f, pv);
        gm__bt_absorb(&f->heap, pv, h);
        h = pv;
    }
    bfc_bin_insert(f, h);
    return 0;
}

static void bfc_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    bfc_t *f = BFC(p);
    if (f == NULL)
        return;
    out->allocated = f->in_use;
    if (f->bin_mask != 0) {
        unsigned k = 31u - (unsigned)__builtin_clz(f->bin_mask);
        out->largest_free = f->heap.b[gm__bt_max(f->heap.b, f->bin[k])].size;
    }
}

static void bfc_empty_cache(gm_policy_t *p)
{
    bfc_t *f = BFC(p);
    if (f != NULL)
        bfc_release_free(f);
}

/* ---- check ------------------------------------------------------------------ */

static int bfc_check(gm_policy_t *p, gm_check_t *ck)
{
    bfc_t *f = BFC(p);
    if (f == NULL)
        return gm_check_fail(ck, "not a bfc policy");
    const gm__bt_blk_t *b = f->heap.b;
    const gm__carve_rules_t rules = {.seg = "region", .nsets = BFC_BINS, .merge_any = 1};
    gm__carve_tally_t t = {0};
    uint64_t in_regions = 0;
    for (size_t i = 0; i < f->nregions && ck->bad == 0; i++) {
        const bfc_region_t *r = &f->regions[i];
        in_regions += r->size;
        if (i > 0 && f->regions[i - 1].base + f->regions[i - 1].size > r->base)
            gm_check_fail(ck,
                          "regions 0x%" PRIx64 " and 0x%" PRIx64 " overlap or are out of order",
                          f->regions[i - 1].base, r->base);
        gm__carve_seg_t s;
        for (const gm__bt_blk_t *c = gm__carve_first(&s, ck, &f->heap, &f->live, &rules, &t,
                                                     r->base, r->size, r->first);
             c != NULL; c = gm__carve_next(&s)) {
            if (c->size % BFC_MIN_ALLOC != 0)
                gm_check_fail(ck, "chunk 0x%" PRIx64 " has size %" PRIu64 ", not a multiple of 256",
                              c->addr, c->size);
            if (c->list != GM__BT_USED && c->list != bfc_bin_for(c->size))
                gm_check_fail(ck, "free chunk 0x%" PRIx64 " of %" PRIu64 " bytes in bin %u, not %u",
                              c->addr, c->size, c->list, bfc_bin_for(c->size));
        }
    }
    uint64_t members = 0;
    for (unsigned k = 0; k < BFC_BINS && ck->bad == 0; k++) {
        const gm__bt_blk_t *lo = NULL;
        uint32_t badh = GM__BT_NONE;
        int64_t m = gm__bt_verify(b, f->heap.n, f->bin[k], k, &lo, &badh);
        if (m < 0) {
            gm_check_fail(
                ck, "bin %u is not an ordered set of its free chunks (at chunk 0x%" PRIx64 ")", k,
                badh < f->heap.n ? b[badh].addr : 0);
            break;
        }
        if ((m != 0) != (int)(f->bin_mask >> k & 1))
            gm_check_fail(ck, "bin mask bit %u out of date", k);
        members += (uint64_t)m;
    }
    gm__carve_tallied(ck, &f->heap, &f->live, &t, members, f->in_use);
    if (in_regions != f->in_regions || in_regions != p->dev->reserved)
        gm_check_fail(
            ck, "regions hold %" PRIu64 " bytes, counted %" PRIu64 ", device reserved %" PRIu64,
            in_regions, f->in_regions, p->dev->reserved);
    if (in_regions > f->limit)
        gm_check_fail(ck, "regions hold %" PRIu64 " bytes, over the memory limit %" PRIu64,
                      in_regions, f->limit);
    return ck->bad;
}

static void bfc_destroy(gm_policy_t *p)
{
    bfc_t *f = BFC(p);
    if (f == NULL)
        return;
    gm__bt_heap_release(&f->heap);
    gm__idmap_release(&f->live);
    free(f->regions);
    free(f);
}

static const gm_param_spec_t bfc_params[] = {
    {"memory_limit", GM_PARAM_SIZE, "0",
     "bytes the allocator may hold (0: the device's capacity; unlimited device: no limit with "
     "allow_growth, else 80GiB)", NULL},
    {"allow_growth", GM_PARAM_BOOL, "true",
     "take regions as needed, 2 MiB then doubling (TF_FORCE_GPU_ALLOW_GROWTH); false: one region "
     "of the whole memory_limit", NULL},
    {"garbage_collection", GM_PARAM_BOOL, "true",
     "on OOM give wholly free regions back and retry (TF_ENABLE_GPU_GARBAGE_COLLECTION)", NULL},
    {"fragmentation_fraction", GM_PARAM_DOUBLE, "0",
     "split a chunk when the remainder is at least this fraction of memory_limit (0: 128 MiB), "
     "or when the chunk is twice the request", NULL},
};

/* Every region's chunk list, in address order. */
static void bfc_walk(gm_policy_t *p, gm_walk_fn fn, void *ctx)
{
    bfc_t *f = BFC(p);
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->nregions; i++)
        gm__carve_walk(&f->heap, f->regions[i].base, f->regions[i].size, f->regions[i].first,
                       GM_WALK_ANY_STREAM, fn, ctx);
}

const gm_policy_ops_t gm__policy_bfc = {
    .name = "bfc",
    .help = "TensorFlow/XLA best-fit-with-coalescing: 256-byte rounding, 21 size bins, "
            "doubling regions",
    GM_POLICY_OPS(bfc),
    .empty_cache = bfc_empty_cache,
    .walk = bfc_walk,
};
