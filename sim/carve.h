/*
 * sim/carve.h — device segments carved into blocks: what the bfc, pool,
 * async and tlsf policies share about them (internal; everything here is
 * static inline).
 *
 * Each of these policies holds segments from the device (bfc's regions,
 * pool's upstream blocks, async's chunks, tlsf's arenas), each tiled by a
 * list of gm__bt_blk_t (sim/blocktree.h) linked through prev/next from the
 * block at its base, and keeps an address map (base/idmap.h) from each live
 * block's address to its handle.  A block is live when its list is
 * GM__BT_USED, else free in list `list`.  What follows reads that shape the
 * same way for all four:
 *
 *   gm__carve_live     the live block a free names, or none
 *   gm__carve_largest  the largest free block of some sets (stats)
 *   gm__carve_walk     one segment's blocks to a walk callback (walk)
 *   gm__carve_first    one segment's blocks, each checked for tiling, links
 *   gm__carve_next     and the address map as the loop reaches it (check),
 *                      tallied over the segments; then gm__carve_sets and
 *                      gm__carve_tallied compare the tallies with the sets,
 *                      the handles in use, the map and the policy's counter
 *
 * A policy's own rules (a block's size unit, the set a free block belongs
 * in, the segment it names) stay in its check, in the body of that loop.
 */
#ifndef GM_SIM_CARVE_H
#define GM_SIM_CARVE_H

#include "gmsim/policy.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>

#include "base/idmap.h"
#include "sim/blocktree.h"

/* The handle of the live block blk names (in the map, of its size, live),
 * or GM__BT_NONE: what a policy's free looks up before releasing it. */
static inline uint32_t gm__carve_live(const gm__bt_heap_t *h, const gm__idmap_t *live,
                                      const gm_block_t *blk)
{
    uint64_t v;
    if (!gm__idmap_get(live, blk->addr, &v))
        return GM__BT_NONE;
    const gm__bt_blk_t *x = &h->b[v];
    return x->size == blk->size && x->list == GM__BT_USED ? (uint32_t)v : GM__BT_NONE;
}

/* The largest free block in sets[0..n) (0 when none): stats' largest_free. */
static inline uint64_t gm__carve_largest(const gm__bt_blk_t *b, const gm__bt_set_t *sets,
                                         uint32_t n)
{
    uint64_t largest = 0;
    for (uint32_t l = 0; l < n; l++) {
        uint32_t m = gm__bt_set_max(b, &sets[l]);
        if (m != GM__BT_NONE && b[m].size > largest)
            largest = b[m].size;
    }
    return largest;
}

/* Visit the blocks of the segment [base, base + size) whose lowest block is
 * `first`, in address order, as serving `stream` (GM_WALK_ANY_STREAM when
 * its free blocks serve every stream).  A broken list ends the walk after
 * as many steps as there are handles. */
static inline void gm__carve_walk(const gm__bt_heap_t *h, uint64_t base, uint64_t size,
                                  uint32_t first, uint32_t stream, gm_walk_fn fn, void *ctx)
{
    const gm__bt_blk_t *b = h->b;
    gm_walk_block_t w = {.seg_addr = base, .seg_size = size, .stream = stream, .pool = -1};
    uint32_t guard = 0;
    for (uint32_t i = first; i != GM__BT_NONE && guard++ <= h->n; i = b[i].next) {
        w.addr = b[i].addr;
        w.size = b[i].size;
        w.allocated = b[i].list == GM__BT_USED;
        fn(ctx, &w);
    }
}

/* ---- checking ------------------------------------------------------------ */

/* What the check of a policy's segments counts over all of them. */
typedef struct gm__carve_tally {
    uint64_t blocks;    /* blocks in the segments' lists */
    uint64_t live;      /* of them live */
    uint64_t free;      /* of them free */
    uint64_t allocated; /* bytes of the live ones */
} gm__carve_tally_t;

/* How a policy's segments are checked. */
typedef struct gm__carve_rules {
    const char *seg;  /* what a segment is called in a reason: "region" */
    uint32_t nsets;   /* a free block's list is below this */
    int merge_any;    /* 1: two free neighbours always merge (bfc, tlsf);
                         0: only two of the same set (pool, async: a set
                         holds one stream's frees) */
} gm__carve_rules_t;

/* One segment being checked, a block at a time: gm__carve_first and
 * gm__carve_next return each block after checking what every such heap
 * keeps, so that the policy checks its own rules on it in the loop:
 *
 *   gm__carve_seg_t s;
 *   for (const gm__bt_blk_t *x = gm__carve_first(&s, ck, &f->heap, &f->live, &rules, &t,
 *                                                r->base, r->size, r->first);
 *        x != NULL; x = gm__carve_next(&s))
 *       ... the policy's own rules on x ...
 *
 * What is checked: the blocks tile [base, base + size) in address order
 * with consistent prev links; a live block is in the address map under its
 * handle (that no free one is follows from the map's count, which
 * gm__carve_tallied compares); a free block's list exists and it has
 * merged with a free neighbour below it as the rules say.  Each block is
 * added to the tally.  The walk ends at the end of the list (then the
 * blocks must cover the segment) or once ck has a violation. */
typedef struct gm__carve_seg {
    gm_check_t *ck;
    const gm__bt_heap_t *h;
    const gm__idmap_t *live;
    const gm__carve_rules_t *r;
    gm__carve_tally_t *t;
    uint64_t base, size, at; /* the segment; where the next block must start */
    uint32_t i, prev;        /* the next block; the one before it */
} gm__carve_seg_t;

/* Always inlined: the walk's state then lives in registers, as in a loop
 * written out in the policy (called once per block and check, it would
 * otherwise cost a --check replay of bfc half as much again). */
#define GM__CARVE_INLINE static inline __attribute__((always_inline))

GM__CARVE_INLINE const gm__bt_blk_t *gm__carve_next(gm__carve_seg_t *s)
{
    gm_check_t *ck = s->ck;
    const gm__bt_blk_t *b = s->h->b;
    uint32_t i = s->i;
    if (i == GM__BT_NONE || ck->bad != 0) {
        if (ck->bad == 0 && s->at != s->base + s->size)
            gm_check_fail(ck, "blocks of %s 0x%" PRIx64 " cover %" PRIu64 " of %" PRIu64 " bytes",
                          s->r->seg, s->base, s->at - s->base, s->size);
        return NULL;
    }
    if (i >= s->h->n || ++s->t->blocks > s->h->live) {
        gm_check_fail(ck, "%s 0x%" PRIx64 ": block list is broken (a bad handle or a cycle)",
                      s->r->seg, s->base);
        return NULL;
    }
    const gm__bt_blk_t *x = &b[i];
    if (x->addr != s->at || x->prev != s->prev || x->size == 0)
        gm_check_fail(ck,
                      "%s 0x%" PRIx64 ": block at 0x%" PRIx64 " (%" PRIu64
                      " bytes) breaks the tiling (expected at 0x%" PRIx64 ")",
                      s->r->seg, s->base, x->addr, x->size, s->at);
    if (x->list == GM__BT_USED) {
        uint64_t v;
        if (!gm__idmap_get(s->live, x->addr, &v) || v != i)
            gm_check_fail(ck, "live block 0x%" PRIx64 " not in the address map", x->addr);
        s->t->allocated += x->size;
        s->t->live++;
    } else {
        if (x->list >= s->r->nsets)
            gm_check_fail(ck, "free block 0x%" PRIx64 " in list %" PRIu32 ", of %" PRIu32, x->addr,
                          x->list, s->r->nsets);
        uint32_t p = s->prev;
        if (p != GM__BT_NONE && b[p].list != GM__BT_USED &&
            (s->r->merge_any || b[p].list == x->list))
            gm_check_fail(ck,
                          "free block at 0x%" PRIx64 " should have merged with the one "
                          "below it (lists %" PRIu32 " and %" PRIu32 ")",
                          x->addr, b[p].list, x->list);
        s->t->free++;
    }
    s->at = x->addr + x->size;
    s->prev = i;
    s->i = x->next;
    return x;
}

GM__CARVE_INLINE const gm__bt_blk_t *gm__carve_first(gm__carve_seg_t *s, gm_check_t *ck,
                                                    const gm__bt_heap_t *h,
                                                    const gm__idmap_t *live,
                                                    const gm__carve_rules_t *r,
                                                    gm__carve_tally_t *t, uint64_t base,
                                                    uint64_t size, uint32_t first)
{
    *s = (gm__carve_seg_t){.ck = ck, .h = h, .live = live, .r = r, .t = t, .base = base,
                           .size = size, .at = base, .i = first, .prev = GM__BT_NONE};
    return gm__carve_next(s);
}

/* Verify the ordered sets sets[0..n) (gm__bt_set_verify); the free blocks
 * they hold. */
static inline uint64_t gm__carve_sets(gm_check_t *ck, const gm__bt_heap_t *h,
                                      const gm__bt_set_t *sets, uint32_t n)
{
    uint64_t members = 0;
    for (uint32_t l = 0; l < n && ck->bad == 0; l++) {
        uint32_t badh = GM__BT_NONE;
        int64_t m = gm__bt_set_verify(h->b, h->n, &sets[l], l, &badh);
        if (m < 0)
            gm_check_fail(ck,
                          "free list %" PRIu32
                          " is not an ordered set of its blocks (at block 0x%" PRIx64 ")",
                          l, badh < h->n ? h->b[badh].addr : 0);
        else
            members += (uint64_t)m;
    }
    return members;
}

/* Compare the tallies of every segment with `members` (the free blocks the
 * policy's lists hold), the handles in use, the address map and
 * `allocated` (the policy's count of live bytes). */
static inline void gm__carve_tallied(gm_check_t *ck, const gm__bt_heap_t *h,
                                     const gm__idmap_t *live, const gm__carve_tally_t *t,
                                     uint64_t members, uint64_t allocated)
{
    if (ck->bad == 0 && members != t->free)
        gm_check_fail(ck, "free lists hold %" PRIu64 " blocks, the segments %" PRIu64 " free ones",
                      members, t->free);
    if (ck->bad == 0 && t->blocks != h->live)
        gm_check_fail(ck, "%" PRIu64 " blocks but %" PRIu32 " handles in use", t->blocks,
                      h->live);
    if (ck->bad == 0 && t->live != gm__idmap_count(live))
        gm_check_fail(ck, "address map holds %zu blocks, %" PRIu64 " are live",
                      gm__idmap_count(live), t->live);
    if (ck->bad == 0 && t->allocated != allocated)
        gm_check_fail(ck, "allocated %" PRIu64 " differs from the live blocks' %" PRIu64,
                      allocated, t->allocated);
}

#endif
