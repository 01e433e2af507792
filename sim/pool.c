/*
 * sim/pool.c — RAPIDS RMM's pool_memory_resource: a coalescing best-fit
 * sub-allocator over blocks taken from the device, with a free list per
 * stream (rmm/mr/device/pool_memory_resource.hpp, its base
 * detail/stream_ordered_memory_resource.hpp and its free list
 * detail/coalescing_free_list.hpp).  Behaviour learned from the source, code
 * our own.
 *
 * Algorithm:
 *   - Every request is aligned up to 256 bytes (CUDA_ALLOCATION_ALIGNMENT).
 *   - The pool holds *upstream blocks* taken from the device.  Each free
 *     list (one per stream) holds free blocks in address order and merges a
 *     block with its neighbours in the same list when they touch, never
 *     across upstream blocks (RMM's is_head flag).
 *   - A request of s bytes on stream S is served from the first of:
 *       1. the best fit in S's list: the smallest block ≥ s, the lowest
 *          address among equals (RMM scans its list for min_element);
 *       2. the best fit in another stream's list, the streams taken in
 *          order (RMM waits on that stream's event and takes the block; the
 *          remainder stays in that stream's list);
 *       3. for each other stream in order: move all of its free blocks into
 *          S's list (merging), and take the best fit there if there is one
 *          now;
 *       4. a new upstream block (expand_pool).
 *     The block is cut to s bytes (front), the remainder goes back free.
 *   - Growth (size_to_grow / try_to_expand): with no maximum_pool_size,
 *     try max(s, current pool size) — the pool doubles; with a maximum M,
 *     try max(s, (M − pool size)/2) when s fits in what remains, else fail.
 *     When the device refuses, halve the attempt (never below s) and retry;
 *     the attempt of exactly s is made once.  Nothing is returned to the
 *     device before destruction: a refused expansion is an OOM.
 *   - initial_pool_size is taken at creation into the list of stream 0
 *     (RMM puts it in the legacy default stream's list).
 *   - A free goes into the list of the stream it is freed on.
 *
 * Stream order: RMM keeps its lists in a map ordered by CUDA event handle,
 * an order a replay cannot know; here the streams are taken in the order of
 * their trace index.  empty_cache (RMM has none: its memory goes back when
 * the resource is destroyed) gives back every wholly free upstream block, as
 * destroying and re-creating an idle pool would.
 *
 * Structures: blocks of sim/blocktree.h (physical neighbours within an
 * upstream block), one set per stream ordered by (size, address) and split
 * by power-of-two size class — the same choice as RMM's linear best-fit
 * scan, found in a short descent — and an address map of the live blocks.
 *
 * Invariants (check): the blocks of every upstream block tile it in address
 * order with consistent links, each a multiple of 256 bytes but the last
 * (RMM halves a refused expansion, so an upstream block may be any size); every free block is a member of its stream's
 * set and each set is ordered; no two touching free blocks of one list are
 * left unmerged; live blocks are in the address map and nothing else is;
 * allocated bytes equal the live blocks; the pool size is the sum of the
 * upstream blocks, whose device bytes are the device's reserved bytes, and
 * it stays within maximum_pool_size.
 */
#include "gmsim/policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/carve.h"
#include "base/idmap.h"
#include "base/vec.h"

#define POOL_ALIGN 256

typedef struct pool_up {
    uint64_t base;
    uint64_t size; /* bytes asked of the device (the block's size) */
    uint64_t got;  /* bytes the device reserved (its granularity) */
    uint32_t first;
} pool_up_t;

typedef struct pool {
    gm_policy_t base;
    uint64_t maximum; /* 0: none */
    uint64_t pool_size;

    gm__bt_heap_t heap;
    gm__bt_set_t *sets; /* free list per stream */
    uint32_t nstreams;
    pool_up_t *ups;
    size_t nups, upcap;
    gm__idmap_t live; /* address → handle */
    uint64_t allocated;
    uint32_t *scratch; /* handles of a list being moved */
    uint32_t scratchcap;
} pool_t;

extern const gm_policy_ops_t gm__policy_pool;

#define POOL(p) GM_POLICY_DOWNCAST(pool_t, p, gm__policy_pool)

static inline uint64_t pool_align(uint64_t n)
{
    return (n + POOL_ALIGN - 1) & ~(uint64_t)(POOL_ALIGN - 1);
}

/* Make room for stream s's list.  0 or GM_ENOMEM. */
static int pool_stream(pool_t *q, uint32_t s)
{
    if (s < q->nstreams)
        return 0;
    if (s >= GM__BT_DROPPED)
        return GM_EINVAL;
    uint32_t n = q->nstreams ? q->nstreams : 4;
    while (n <= s)
        n = n > UINT32_MAX / 2 ? GM__BT_DROPPED : 2 * n;
    gm__bt_set_t *r = realloc(q->sets, (size_t)n * sizeof *r);
    if (r == NULL)
        return GM_ENOMEM;
    for (uint32_t i = q->nstreams; i < n; i++)
        gm__bt_set_init(&r[i]);
    q->sets = r;
    q->nstreams = n;
    return 0;
}

/* try_to_expand: a new upstream block of at least `size` bytes, as a free
 * block in no set.  Its handle, or GM__BT_NONE (device refused, or out of
 * host memory: *rc says which). */
static uint32_t pool_expand(pool_t *q, uint64_t try_size, uint64_t size, int *rc)
{
    *rc = 0;
    if (GM_VEC_RESERVE(q->ups, q->upcap, q->nups + 1, 16)) {
        *rc = GM_ENOMEM;
        return GM__BT_NONE;
    }
    uint32_t h = gm__bt_new(&q->heap);
    if (h == GM__BT_NONE) {
        *rc = GM_ENOMEM;
        return GM__BT_NONE;
    }
    while (try_size >= size && try_size != 0) {
        uint64_t addr, got;
        if (gm_device_malloc(q->base.dev, try_size, POOL_ALIGN, &addr, &got) == 0) {
            q->pool_size += try_size;
            q->ups[q->nups++] = (pool_up_t){addr, try_size, got, h};
            q->heap.b[h].addr = addr;
            q->heap.b[h].size = try_size;
            return h;
        }
        if (try_size == size)
            break;
        try_size = try_size / 2 > size ? try_size / 2 : size;
    }
    gm__bt_drop(&q->heap, h);
    return GM__BT_NONE;
}

/* size_to_grow */
static uint64_t pool_grow_size(const pool_t *q, uint64_t size)
{
    if (q->maximum != 0) {
        uint64_t remaining = pool_align(q->maximum > q->pool_size ? q->maximum - q->pool_size : 0);
        if (size > remaining)
            return 0;
        return size > remaining / 2 ? size : remaining / 2;
    }
    return size > q->pool_size ? size : q->pool_size;
}

/* Move every block of list t into list s (merging). */
static void pool_move_list(pool_t *q, uint32_t t, uint32_t s)
{
    if (q->sets[t].mask == 0)
        return;
    uint32_t k = gm__bt_set_collect(q->heap.b, &q->sets[t], q->scratch, 0);
    gm__bt_set_init(&q->sets[t]);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t h = q->scratch[i];
        q->heap.b[h].left = q->heap.b[h].right = GM__BT_NONE;
        gm__bt_put(&q->heap, q->sets, h, s);
    }
}

static int pool_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                       gm_error_t *err)
{
    uint64_t initial = values[0].size, maximum = values[1].size;
    if (initial % POOL_ALIGN != 0)
        return gm_param_invalid(err, &gm__policy_pool, "initial_pool_size", initial,
                                "not a multiple of 256");
    if (maximum % POOL_ALIGN != 0)
        return gm_param_invalid(err, &gm__policy_pool, "maximum_pool_size", maximum,
                                "not a multiple of 256");
    if (maximum != 0 && initial > maximum)
        return gm_error_set(err, GM_EINVAL, "invalid value '%" PRIu64 "' for pool.initial_pool_size: "
                            "above maximum_pool_size (%" PRIu64 ")", initial, maximum);
    pool_t *q = gm_policy_new(sizeof *q, &gm__policy_pool, dev, err);
    if (q == NULL)
        return GM_ENOMEM;
    q->maximum = maximum;
    gm__bt_heap_init(&q->heap);
    gm__idmap_init(&q->live);
    int rc = pool_stream(q, 0);
    if (rc == 0 && initial > 0) {
        uint32_t h = pool_expand(q, initial, initial, &rc);
        if (h != GM__BT_NONE)
            gm__bt_put(&q->heap, q->sets, h, 0);
        else if (rc == 0)
            rc = GM_EINVAL;
    }
    if (rc != 0) {
        for (size_t i = 0; i < q->nups; i++)
            gm_device_free(dev, q->ups[i].base, q->ups[i].got);
        free(q->sets);
        free(q->ups);
        gm__bt_heap_release(&q->heap);
        free(q);
        if (rc == GM_EINVAL)
            return gm_param_invalid(err, &gm__policy_pool, "initial_pool_size", initial,
                                    "the device cannot hold it");
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'pool'");
    }
    *out = &q->base;
    return 0;
}

/* Hand out the first `size` bytes of block h (in no set); the remainder
 * goes into list `rest`.  `spare` is a fresh handle, dropped when unused. */
static int pool_take(pool_t *q, uint32_t h, uint64_t size, uint32_t rest, uint32_t spare,
                     gm_block_t *out)
{
    if (q->heap.b[h].size > size) {
        gm__bt_cut(&q->heap, h, size, spare);
        gm__bt_put(&q->heap, q->sets, spare, rest);
    } else {
        gm__bt_drop(&q->heap, spare);
    }
    gm__bt_blk_t *c = &q->heap.b[h];
    c->list = GM__BT_USED;
    if (gm__idmap_put(&q->live, c->addr, h) != 0) {
        gm__bt_put(&q->heap, q->sets, h, rest);
        return GM_ENOMEM;
    }
    q->allocated += c->size;
    out->addr = c->addr;
    out->size = c->size;
    return 0;
}

static int pool_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    pool_t *q = POOL(p);
    if (q == NULL)
        return GM_EINVAL;
    if (req->size > (UINT64_C(1) << 62))
        return GM_ALLOC_OOM;
    uint64_t size = pool_align(req->size);
    uint32_t s = req->stream;
    int rc = pool_stream(q, s);
    if (rc != 0)
        return rc;
    if (q->scratchcap < q->heap.cap + 1) { /* room to move any list */
        uint32_t cap = q->heap.cap + 256;
        uint32_t *sc = realloc(q->scratch, (size_t)cap * sizeof *sc);
        if (sc == NULL)
            return GM_ENOMEM;
        q->scratch = sc;
        q->scratchcap = cap;
    }
    uint32_t spare = gm__bt_new(&q->heap);
    if (spare == GM__BT_NONE)
        return GM_ENOMEM;
    gm__bt_blk_t *b = q->heap.b;
    /* 1. this stream's list */
    uint32_t h = gm__bt_set_fit(b, &q->sets[s], size);
    if (h != GM__BT_NONE) {
        gm__bt_set_remove(b, &q->sets[s], h);
        return pool_take(q, h, size, s, spare, out);
    }
    /* 2. another stream's list, taken as it is */
    for (uint32_t t = 0; t < q->nstreams; t++) {
        if (t == s || (h = gm__bt_set_fit(b, &q->sets[t], size)) == GM__BT_NONE)
            continue;
        gm__bt_set_remove(b, &q->sets[t], h);
        return pool_take(q, h, size, t, spare, out);
    }
    /* 3. merge the other lists into this one, one at a time */
    for (uint32_t t = 0; t < q->nstreams; t++) {
        if (t == s || q->sets[t].mask == 0)
            continue;
        pool_move_list(q, t, s);
        if ((h = gm__bt_set_fit(q->heap.b, &q->sets[s], size)) != GM__BT_NONE) {
            gm__bt_set_remove(q->heap.b, &q->sets[s], h);
            return pool_take(q, h, size, s, spare, out);
        }
    }
    /* 4. grow */
    h = pool_expand(q, pool_grow_size(q, size), size, &rc);
    if (h == GM__BT_NONE) {
        gm__bt_drop(&q->heap, spare);
        return rc != 0 ? rc : GM_ALLOC_OOM;
    }
    return pool_take(q, h, size, s, spare, out);
}

static int pool_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    pool_t *q = POOL(p);
    if (q == NULL)
        return GM_EINVAL;
    uint32_t h = gm__carve_live(&q->heap, &q->live, blk);
    if (h == GM__BT_NONE)
        return GM_EINVAL;
    int rc = pool_stream(q, stream);
    if (rc != 0)
        return rc;
    gm__idmap_remove(&q->live, blk->addr, NULL);
    q->allocated -= blk->size;
    gm__bt_put(&q->heap, q->sets, h, stream);
    return 0;
}

static void pool_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    pool_t *q = POOL(p);
    if (q == NULL)
        return;
    out->allocated = q->allocated;
    out->largest_free = gm__carve_largest(q->heap.b, q->sets, q->nstreams);
}

/* Give every upstream block with no live block back to the device. */
static void pool_empty_cache(gm_policy_t *p)
{
    pool_t *q = POOL(p);
    if (q == NULL)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < q->nups; i++) {
        pool_up_t u = q->ups[i];
        gm__bt_blk_t *b = q->heap.b;
        uint32_t h = u.first;
        while (h != GM__BT_NONE && b[h].list != GM__BT_USED)
            h = b[h].next;
        if (h == GM__BT_NONE) { /* every block free (maybe in several lists) */
            for (h = u.first; h != GM__BT_NONE;) {
                uint32_t nx = b[h].next;
                gm__bt_set_remove(b, &q->sets[b[h].list], h);
                gm__bt_drop(&q->heap, h);
                h = nx;
            }
            gm_device_free(p->dev, u.base, u.got);
            q->pool_size -= u.size;
        } else {
            q->ups[kept++] = u;
        }
    }
    q->nups = kept;
}

/* ---- check ------------------------------------------------------------------ */

static int pool_check(gm_policy_t *p, gm_check_t *ck)
{
    pool_t *q = POOL(p);
    if (q == NULL)
        return gm_check_fail(ck, "not a pool policy");
    const gm__carve_rules_t rules = {.seg = "upstream block", .nsets = q->nstreams};
    gm__carve_tally_t t = {0};
    uint64_t got = 0, size = 0;
    for (size_t i = 0; i < q->nups && ck->bad == 0; i++) {
        const pool_up_t *u = &q->ups[i];
        got += u->got;
        size += u->size;
        if (u->got < u->size)
            gm_check_fail(
                ck, "upstream block 0x%" PRIx64 " holds %" PRIu64 " device bytes for %" PRIu64,
                u->base, u->got, u->size);
        gm__carve_seg_t s;
        for (const gm__bt_blk_t *c = gm__carve_first(&s, ck, &q->heap, &q->live, &rules, &t,
                                                     u->base, u->size, u->first);
             c != NULL; c = gm__carve_next(&s))
            if (c->size % POOL_ALIGN != 0 && c->next != GM__BT_NONE) /* all but the last */
                gm_check_fail(ck,
                              "block at 0x%" PRIx64 " (%" PRIu64 " bytes) is not 256-byte aligned",
                              c->addr, c->size);
    }
    uint64_t members = gm__carve_sets(ck, &q->heap, q->sets, q->nstreams);
    gm__carve_tallied(ck, &q->heap, &q->live, &t, members, q->allocated);
    if (size != q->pool_size || got != p->dev->reserved)
        gm_check_fail(ck,
                      "upstream blocks hold %" PRIu64 " bytes (pool size %" PRIu64 "), %" PRIu64
                      " device bytes, device reserved %" PRIu64,
                      size, q->pool_size, got, p->dev->reserved);
    if (q->maximum != 0 && q->pool_size > q->maximum)
        gm_check_fail(ck, "pool size %" PRIu64 " above maximum_pool_size %" PRIu64, q->pool_size,
                      q->maximum);
    return ck->bad;
}

static void pool_destroy(gm_policy_t *p)
{
    pool_t *q = POOL(p);
    if (q == NULL)
        return;
    gm__bt_heap_release(&q->heap);
    gm__idmap_release(&q->live);
    free(q->sets);
    free(q->ups);
    free(q->scratch);
    free(q);
}

static const gm_param_spec_t pool_params[] = {
    {"initial_pool_size", GM_PARAM_SIZE, "0",
     "bytes taken from the device at creation (a multiple of 256)", NULL},
    {"maximum_pool_size", GM_PARAM_SIZE, "0",
     "most bytes the pool may hold (a multiple of 256; 0 or none: no maximum, the pool "
     "doubles)", "none|unlimited"},
};

/* Every upstream block's list of blocks, in address order. */
static void pool_walk(gm_policy_t *p, gm_walk_fn fn, void *ctx)
{
    pool_t *q = POOL(p);
    if (q == NULL)
        return;
    for (size_t i = 0; i < q->nups; i++)
        gm__carve_walk(&q->heap, q->ups[i].base, q->ups[i].size, q->ups[i].first,
                       GM_WALK_ANY_STREAM, fn, ctx);
}

const gm_policy_ops_t gm__policy_pool = {
    .name = "pool",
    .help = "RAPIDS RMM pool_memory_resource: coalescing best fit, per-stream free lists, "
            "growing pool",
    GM_POLICY_OPS(pool),
    .empty_cache = pool_empty_cache,
    .walk = pool_walk,
};
