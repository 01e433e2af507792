/*
 * sim/caching/expandable.c — the caching policy's expandable segments: one virtual
 * range per (stream, pool), pages mapped on demand and unmapped by OOM
 * recovery and empty_cache.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/vec.h"
#include "sim/caching/caching.h"

/* ---- expandable segments ------------------------------------------------------------ */

/* A new virtual range for (stream, pool) as one unmapped block; NIL on
 * failure (host memory or address space). */
uint32_t caching_new_range(caching_t *c, uint32_t stream, int pool, uint64_t min_size)
{
    uint64_t page = gm__torch_page_size(pool == CACHING_SMALL);
    uint64_t mem = caching_memory(c);
    uint64_t want = mem + mem / 8;
    if (want < min_size)
        want = min_size;
    uint64_t size = (want + page - 1) / page * page;
    uint32_t k;
    for (k = 0; k < c->nes && c->es[k].live; k++)
        ;
    if (k == c->nes && GM_VEC_RESERVE(c->es, c->capes, (size_t)c->nes + 1, 8))
        return NIL;
    uint64_t base;
    if (gm_device_reserve_va(c->base.dev, size, page, &base) != 0)
        return NIL; /* c->es[k] not counted: a new slot stays past c->nes */
    if (k == c->nes)
        c->nes++;
    c->es[k] = (cexp_t){base, size, page, 0, stream, (uint8_t)pool, 1};
    uint32_t x = caching_new_segment(c, base, size, stream, pool);
    c->heap.b[x].es = k + 1;
    tree_insert(c->heap.b, &c->pools[pool].unmapped, x, 2);
    return x;
}

static inline int blk_allocatable(const cblk_t *B, uint32_t x)
{
    return x != NIL && !B[x].allocated;
}

/* find_expandable_block: the lowest-addressed place on the stream where a
 * free block and unmapped space after it hold size bytes. */
static uint32_t caching_find_expandable(caching_t *c, cpool_t *pl, uint32_t stream, int pool,
                                        uint64_t size)
{
    cblk_t *B = c->heap.b;
    for (uint32_t it = tree_lower_bound(B, &pl->unmapped, stream, 0, 0);
         it != NIL && B[it].stream == stream; it = tree_next(B, it)) {
        uint32_t cand = it;
        if (blk_allocatable(B, B[cand].prev))
            cand = B[cand].prev;
        uint64_t bytes = 0;
        for (uint32_t w = cand; bytes < size && blk_allocatable(B, w); w = B[w].next)
            bytes += B[w].size;
        if (bytes >= size)
            return cand;
    }
    return caching_new_range(c, stream, pool, size);
}

/* map_block: back the first `size` bytes of unmapped block x with pages
 * (one device malloc), merging them with free mapped neighbours.  Returns
 * the block now holding them (cached), or NIL if the device refused. */
static uint32_t caching_map(caching_t *c, uint32_t x, uint64_t size)
{
    cblk_t *B = c->heap.b;
    cexp_t *es = blk_es(c, &B[x]);
    uint64_t off = B[x].addr - es->base;
    uint64_t begin = off / es->page;
    uint64_t end = (off + size + es->page - 1) / es->page;
    uint64_t bytes = (end - begin) * es->page;
    if (bytes == 0 || gm_device_map(c->base.dev, B[x].addr, bytes) != 0)
        return NIL;
    cpool_t *pl = &c->pools[B[x].pool];
    tree_erase(B, &pl->unmapped, x);
    B[x].mapped = 1;
    if (bytes < B[x].size) {
        uint32_t rest = caching_split_after(c, x, B[x].addr + bytes, B[x].size - bytes);
        B = c->heap.b;
        B[rest].mapped = 0;
        B[x].size = bytes;
        tree_insert(B, &pl->unmapped, rest, 2);
    }
    caching_merge(c, x, B[x].prev);
    caching_merge(c, x, c->heap.b[x].next);
    caching_cache(c, x);
    es->mapped += bytes;
    c->total += bytes;
    c->device_bytes += bytes;
    return x;
}

/* try_allocate_expandable_block: NIL when a map was refused (pages mapped
 * before the refusal stay mapped, as in PyTorch). */
uint32_t caching_alloc_expandable(caching_t *c, cpool_t *pl, uint32_t stream, int pool,
                                  uint64_t size)
{
    uint32_t cand = caching_find_expandable(c, pl, stream, pool, size);
    if (cand == NIL)
        return NIL;
    if (!c->heap.b[cand].mapped) {
        uint64_t m = c->heap.b[cand].size < size ? c->heap.b[cand].size : size;
        cand = caching_map(c, cand, m);
        if (cand == NIL)
            return NIL;
    }
    while (c->heap.b[cand].size < size) {
        uint64_t remaining = size - c->heap.b[cand].size;
        uint32_t nx = c->heap.b[cand].next;
        uint64_t m = c->heap.b[nx].size < remaining ? c->heap.b[nx].size : remaining;
        /* mapping nx merges the free block before it (cand) into it */
        cand = caching_map(c, nx, m);
        if (cand == NIL)
            return NIL;
    }
    set_erase(c->heap.b, pl, cand);
    return cand;
}

/* unmap_block: unmap the whole pages inside free mapped block x (one device
 * free), leaving free mapped slivers before/after.  Returns the unmapped
 * block, or NIL when x holds no whole page (nothing changes). */
uint32_t caching_unmap(caching_t *c, uint32_t x)
{
    cblk_t *B = c->heap.b;
    cexp_t *es = blk_es(c, &B[x]);
    uint64_t lo = B[x].addr - es->base, hi = lo + B[x].size;
    uint64_t begin = (lo + es->page - 1) / es->page, end = hi / es->page;
    if (begin >= end)
        return NIL;
    if (caching_reserve(c, 2) != 0)
        return NIL; /* no host memory: leave it cached */
    B = c->heap.b;
    cpool_t *pl = &c->pools[B[x].pool];
    set_erase(B, pl, x);
    uint64_t ustart = es->base + begin * es->page, ubytes = (end - begin) * es->page;
    uint64_t before = ustart - B[x].addr;
    uint64_t after = B[x].size - before - ubytes;
    if (before > 0) {
        uint32_t y = caching_split_before(c, x, before);
        B = c->heap.b;
        caching_cache(c, y);
    }
    if (after > 0) {
        uint32_t y = caching_split_after(c, x, ustart + ubytes, after);
        B = c->heap.b;
        caching_cache(c, y);
    }
    B[x].addr = ustart;
    B[x].size = ubytes;
    B[x].mapped = 0;
    caching_merge(c, x, B[x].prev);
    caching_merge(c, x, c->heap.b[x].next);
    tree_insert(c->heap.b, &pl->unmapped, x, 2);
    gm_device_free(c->base.dev, ustart, ubytes);
    es->mapped -= ubytes;
    c->total -= ubytes;
    c->device_bytes -= ubytes;
    return x;
}

/* release_expandable_segment: a range with nothing mapped goes away. */
void caching_drop_range(caching_t *c, uint32_t x)
{
    cexp_t *es = blk_es(c, &c->heap.b[x]);
    caching_uncache(c, x);
    es->live = 0;
    caching_delete(c, x);
}
