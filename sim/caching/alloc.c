/*
 * sim/caching/alloc.c — the caching policy's allocation path: get_free_block,
 * splitting, the block handed out, freeing and merging, stats.
 */
#include <stdint.h>
#include <string.h>

#include "sim/caching/caching.h"

/* ---- block operations -------------------------------------------------------------- */

/* Merge src (a neighbour of dst, which is in no set) into dst when src is
 * free and of the same mapping state; returns the bytes taken. */
uint64_t caching_merge(caching_t *c, uint32_t dst, uint32_t src)
{
    cblk_t *B = c->heap.b;
    if (src == NIL || B[src].allocated || B[dst].mapped != B[src].mapped)
        return 0;
    caching_uncache(c, src);
    if (B[dst].prev == src) {
        B[dst].addr = B[src].addr;
        B[dst].prev = B[src].prev;
        if (B[dst].prev)
            B[B[dst].prev].next = dst;
    } else {
        B[dst].next = B[src].next;
        if (B[dst].next)
            B[B[dst].next].prev = dst;
    }
    uint64_t sz = B[src].size;
    B[dst].size += sz;
    caching_delete(c, src);
    return sz;
}

/* A block becomes free: merge, then cache it. */
static void caching_free_block(caching_t *c, uint32_t x)
{
    c->heap.b[x].allocated = 0;
    caching_merge(c, x, c->heap.b[x].prev);
    caching_merge(c, x, c->heap.b[x].next);
    caching_cache(c, x);
}

/* Release an ordinary unsplit cached block (a whole segment). */
void caching_release_block(caching_t *c, uint32_t x)
{
    cblk_t *b = &c->heap.b[x];
    uint64_t got = gm_device_round(c->base.dev, b->size);
    caching_uncache(c, x);
    gm_device_free(c->base.dev, b->addr, got);
    c->total -= b->size;
    c->device_bytes -= got;
    c->nsegments--;
    caching_delete(c, x);
}

static inline uint64_t exp_size(const cblk_t *B, uint32_t x)
{
    uint32_t n = B[x].next;
    return B[x].size + (n != NIL && !B[n].mapped ? B[n].size : 0);
}

/* get_free_block: the best fit on the request's stream, removed from the
 * set; NIL when none may be used. */
static uint32_t caching_find(caching_t *c, cpool_t *pl, uint32_t stream, uint64_t size)
{
    cblk_t *B = c->heap.b;
    if (caching_gc_on(c))
        pl->searches++;
    uint32_t it = set_lower_bound(B, pl, stream, size);
    if (it == NIL)
        return NIL;
    if (B[it].es) {
        if (c->cfg.t.expandable) {
            uint32_t nx = set_next(B, pl, it);
            while (B[it].es && nx != NIL && exp_size(B, nx) < exp_size(B, it)) {
                it = nx;
                nx = set_next(B, pl, nx);
            }
        } else {
            do
                it = set_next(B, pl, it);
            while (it != NIL && B[it].es);
            if (it == NIL || B[it].stream != stream)
                return NIL;
        }
    }
    uint64_t ms = c->cfg.t.max_split;
    if (size < ms && B[it].size >= ms)
        return NIL;
    if (size >= ms && B[it].size >= size + c->cfg.t.max_nsr)
        return NIL;
    set_erase(B, pl, it);
    return it;
}

/* ---- ops ------------------------------------------------------------------------------ */

static void caching_take(caching_t *c, uint32_t x, gm_block_t *out)
{
    c->heap.b[x].allocated = 1;
    c->allocated += c->heap.b[x].size;
    out->addr = c->heap.b[x].addr;
    out->size = c->heap.b[x].size;
}

int caching_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    caching_t *c = CACHING(p);
    if (c == NULL || req->size == 0 || req->size > GM_SIZE_LIMIT)
        return GM_EINVAL;
    if ((req->flags & GM_EVENT_PREEXISTING) && gm__idmap_count(&c->pre) > 0) {
        uint64_t x;
        if (gm__idmap_remove(&c->pre, req->id, &x)) {
            if (c->heap.b[x].size < req->size) {
                /* the layout disagrees with the trace: free the recorded
                 * block and serve the request by the rules */
                caching_free_block(c, (uint32_t)x);
            } else {
                if (gm__idmap_put(&c->live, c->heap.b[x].addr, x) != 0) {
                    gm__idmap_put(&c->pre, req->id, x); /* its cell was just freed */
                    return GM_ENOMEM;
                }
                caching_take(c, (uint32_t)x, out);
                return 0;
            }
        }
    }
    if (caching_reserve(c, 8) != 0)
        return GM_ENOMEM;
    uint64_t size = caching_round(c, req->size);
    int pool = gm__torch_is_small(size) ? CACHING_SMALL : CACHING_LARGE;
    cpool_t *pl = &c->pools[pool];
    if (pool_bins(pl, req->stream) == NULL && pool_bins_make(pl, req->stream) != 0)
        return GM_ENOMEM;
    uint64_t seg = gm__torch_segment_size(size);
    uint32_t stream = req->stream;

    uint32_t x = caching_find(c, pl, stream, size);
    if (x == NIL) {
        if (caching_gc_on(c))
            caching_gc(c);
        x = caching_alloc_block(c, pl, stream, pool, size, seg);
        if (x == NIL && caching_release_available(c, pl, stream, size))
            x = caching_alloc_block(c, pl, stream, pool, size, seg);
        if (x == NIL) {
            caching_release_cached(c);
            if (caching_reserve(c, 8) != 0)
                return GM_ENOMEM;
            x = caching_alloc_block(c, pl, stream, pool, size, seg);
        }
        if (x == NIL)
            return GM_ALLOC_OOM;
    }
    cblk_t *B = c->heap.b;
    uint64_t al = c->cfg.t.align;
    if (al != 0 && size >= CACHING_ROUND_LARGE && c->cfg.t.expandable && B[x].addr % al != 0) {
        /* the Ascend build's base_addr_aligned_kb: a block of 2 MiB or more
         * starts aligned; the bytes before it stay cached on their own */
        uint64_t lead = al - B[x].addr % al;
        if (lead + size <= B[x].size) {
            uint32_t f = caching_split_before(c, x, lead);
            B = c->heap.b;
            B[x].addr += lead;
            B[x].size -= lead;
            caching_cache(c, f);
        }
    }
    uint64_t remaining = B[x].size - size;
    if (gm__torch_should_split(size, remaining, B[x].pool == CACHING_SMALL || c->cfg.t.expandable,
                               c->cfg.t.max_split)) {
        uint32_t r = caching_split_after(c, x, B[x].addr + size, remaining);
        B = c->heap.b;
        B[x].size = size;
        caching_cache(c, r);
    }
    if (gm__idmap_put(&c->live, c->heap.b[x].addr, x) != 0) {
        caching_free_block(c, x);
        return GM_ENOMEM;
    }
    caching_take(c, x, out);
    return 0;
}

int caching_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    (void)stream;
    caching_t *c = CACHING(p);
    if (c == NULL)
        return GM_EINVAL;
    uint64_t x;
    if (!gm__idmap_remove(&c->live, blk->addr, &x))
        return GM_EINVAL;
    if (c->heap.b[x].size != blk->size) {
        if (gm__idmap_put(&c->live, blk->addr, x) != 0)
            return GM_ENOMEM;
        return GM_EINVAL;
    }
    c->allocated -= c->heap.b[x].size;
    caching_free_block(c, (uint32_t)x);
    return 0;
}

void caching_empty_cache(gm_policy_t *p)
{
    caching_t *c = CACHING(p);
    if (c != NULL)
        caching_release_cached(c);
}

/* The largest free mapped block over every stream: the last block of each
 * stream in the size-ordered sets. */
static uint64_t caching_largest(const caching_t *c)
{
    uint64_t best = 0;
    for (int k = 0; k < 2; k++) {
        const cpool_t *pl = &c->pools[k];
        for (uint32_t st = 0; st < pl->nst; st++) {
            uint32_t it = set_last(c->heap.b, pl, st);
            if (it != NIL && c->heap.b[it].size > best)
                best = c->heap.b[it].size;
        }
    }
    return best;
}

void caching_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    caching_t *c = CACHING(p);
    if (c == NULL)
        return;
    out->allocated = c->allocated;
    out->largest_free = caching_largest(c);
}
