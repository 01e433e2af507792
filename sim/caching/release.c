/*
 * sim/caching/release.c — the caching policy's new segments and the release of cached
 * memory: alloc_block, release_available_cached_blocks, release_cached_blocks
 * (OOM recovery and empty_cache), garbage collection.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sim/caching/caching.h"

/* ---- releasing cached memory -------------------------------------------------------- */

/* release_blocks: every whole-segment cached block of the pool goes back;
 * every free block of an expandable range has its whole pages unmapped. */
static void caching_release_pool(caching_t *c, cpool_t *pl)
{
    uint32_t n;
    uint32_t *todo = set_collect(c->heap.b, pl, &n);
    if (todo == NULL)
        return; /* nothing cached (or no host memory: it stays cached) */
    /* gather the expandable blocks at the front while releasing the
     * others: unmapping may reuse the slots that releasing frees */
    uint32_t nexp = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t x = todo[k];
        if (c->heap.b[x].es)
            todo[nexp++] = x;
        else if (!blk_split(&c->heap.b[x]))
            caching_release_block(c, x);
    }
    for (uint32_t k = 0; k < nexp; k++) {
        uint32_t u = caching_unmap(c, todo[k]);
        if (u != NIL && !blk_split(&c->heap.b[u]))
            caching_drop_range(c, u);
    }
    free(todo);
}

/* release_cached_blocks (empty_cache): large pool, then small. */
void caching_release_cached(caching_t *c)
{
    caching_release_pool(c, &c->pools[CACHING_LARGE]);
    caching_release_pool(c, &c->pools[CACHING_SMALL]);
}

/* release_available_cached_blocks: with max_split_size set, free oversize
 * cached blocks of the stream — the smallest one ≥ max(size,
 * max_split_size), else the largest ones down until that much is freed.
 * Only whole ordinary segments can go back (blocks ≥ max_split_size are
 * never split by the rules; a recorded layout could hold others). */
int caching_release_available(caching_t *c, cpool_t *pl, uint32_t stream, uint64_t size)
{
    uint64_t ms = c->cfg.t.max_split;
    if (ms == CACHING_UNLIMITED)
        return 0;
    cblk_t *B = c->heap.b;
    uint64_t key = size < ms ? ms : size;
    uint32_t it = set_lower_bound(B, pl, stream, key);
    if (it == NIL) {
        it = set_last(B, pl, stream);
        uint64_t released = 0;
        while (it != NIL && released < key && c->heap.b[it].size >= ms) {
            uint32_t cur = it;
            it = set_prev(c->heap.b, pl, it);
            if (c->heap.b[cur].es || blk_split(&c->heap.b[cur]))
                continue;
            released += c->heap.b[cur].size;
            caching_release_block(c, cur);
        }
        return released >= key;
    }
    if (B[it].es || blk_split(&B[it]))
        return 0;
    caching_release_block(c, it);
    return 1;
}

/* garbage_collect_cached_blocks. */
void caching_gc(caching_t *c)
{
    uint64_t thr = (uint64_t)(c->cfg.t.gc * (double)c->allowed);
    if (c->total <= thr)
        return;
    uint64_t target = c->total - thr, reclaimed = 0;
    cpool_t *pl = &c->pools[CACHING_LARGE];
    uint32_t n;
    uint32_t *cand = set_collect(c->heap.b, pl, &n);
    if (cand == NULL)
        return;
    uint64_t total_age = 0, count = 0;
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++) {
        const cblk_t *b = &c->heap.b[cand[k]];
        if (!blk_split(b) && !b->es) {
            total_age += pl->searches - b->gc_base;
            count++;
            cand[m++] = cand[k];
        }
    }
    int freed = 1;
    while (reclaimed < target && freed && count > 0) {
        double age_thr = (double)total_age / (double)count;
        freed = 0;
        for (uint32_t k = 0; k < m; k++) {
            if (cand[k] == NIL)
                continue;
            cblk_t *b = &c->heap.b[cand[k]];
            uint64_t age = pl->searches - b->gc_base;
            if ((double)age >= age_thr) {
                freed = 1;
                reclaimed += b->size;
                total_age -= age;
                count--;
                caching_release_block(c, cand[k]);
                cand[k] = NIL;
            }
        }
    }
    free(cand);
}

/* alloc_block: a new segment (or mapped pages) for the request; NIL when
 * refused. */
uint32_t caching_alloc_block(caching_t *c, cpool_t *pl, uint32_t stream, int pool,
                             uint64_t size, uint64_t seg)
{
    if (c->set_fraction && (c->total > c->allowed || seg > c->allowed - c->total))
        return NIL;
    if (c->cfg.t.expandable)
        return caching_alloc_expandable(c, pl, stream, pool, size);
    uint64_t addr, got;
    if (gm_device_malloc(c->base.dev, seg, 0, &addr, &got) != 0)
        return NIL;
    uint32_t x = caching_new_segment(c, addr, seg, stream, pool);
    c->heap.b[x].mapped = 1;
    c->total += seg;
    c->device_bytes += got;
    c->nsegments++;
    return x;
}
