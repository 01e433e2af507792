/*
 * sim/caching/check.c — the caching policy's invariant walker (check) and its
 * segment walk.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/caching/caching.h"

/* ---- check ------------------------------------------------------------------------------ */

/* Walk one set: order, heap, parent links; count its members. */
static void caching_check_tree(const caching_t *c, const ctree_t *t, uint8_t tag, int pool,
                               const char *name, gm_check_t *ck, uint32_t *members)
{
    const cblk_t *B = c->heap.b;
    uint32_t n = 0, prev = NIL;
    if (t->root != NIL && B[t->root].up != NIL)
        gm_check_fail(ck, "%s set: root has a parent", name);
    for (uint32_t x = tree_first(B, t); x != NIL; x = tree_next(B, x)) {
        if (++n > c->heap.n) {
            gm_check_fail(ck, "%s set: cycle", name);
            break;
        }
        if (B[x].inset != tag || B[x].pool != pool)
            gm_check_fail(ck, "%s set: block %" PRIu32 " is marked %u, pool %u", name, x,
                          B[x].inset, B[x].pool);
        if (prev != NIL && !tree_less(t, &B[prev], &B[x]))
            gm_check_fail(ck, "%s set: out of order at block %" PRIu32, name, x);
        if (B[x].l != NIL && (B[B[x].l].up != x || tree_prio(B[x].l) > tree_prio(x)))
            gm_check_fail(ck, "%s set: bad left link at block %" PRIu32, name, x);
        if (B[x].r != NIL && (B[B[x].r].up != x || tree_prio(B[x].r) > tree_prio(x)))
            gm_check_fail(ck, "%s set: bad right link at block %" PRIu32, name, x);
        prev = x;
    }
    if (n != t->count)
        gm_check_fail(ck, "%s set: counts %" PRIu32 " blocks, holds %" PRIu32, name, t->count, n);
    *members += n;
}

int caching_check(gm_policy_t *p, gm_check_t *ck)
{
    caching_t *c = CACHING(p);
    if (c == NULL)
        return gm_check_fail(ck, "not a caching policy");
    const cblk_t *B = c->heap.b;
    uint32_t in_sets = 0;
    static const char *const names[2][2] = {{"large free", "large unmapped"},
                                            {"small free", "small unmapped"}};
    for (int k = 0; k < 2; k++) {
        const cpool_t *pl = &c->pools[k];
        uint32_t nfree = 0;
        for (uint32_t st = 0; st < pl->nst; st++) {
            const cbins_t *bs = pl->st[st];
            if (bs == NULL)
                continue;
            for (unsigned b = 0; b < CBIN_COUNT; b++) {
                const ctree_t *t = &bs->bin[b];
                int has = (int)(bs->map[b >> 6] >> (b & 63) & 1);
                if (has != (t->root != NIL))
                    gm_check_fail(ck, "%s set: class %u of stream %" PRIu32 " is %s but marked %s",
                                  names[k][0], b, st, t->root != NIL ? "used" : "empty",
                                  has ? "used" : "empty");
                if (t->root == NIL && t->count == 0)
                    continue;
                uint32_t before = in_sets;
                caching_check_tree(c, t, 1, k, names[k][0], ck, &in_sets);
                nfree += in_sets - before;
                for (uint32_t x = tree_first(B, t); x != NIL && in_sets - before < c->heap.n;
                     x = tree_next(B, x))
                    if (bin_of(B[x].size) != b || B[x].stream != st) {
                        gm_check_fail(ck, "%s set: block at %#" PRIx64 " in the wrong class",
                                      names[k][0], B[x].addr);
                        break;
                    }
            }
        }
        if (nfree != pl->nfree)
            gm_check_fail(ck, "%s set: counts %" PRIu32 " blocks, holds %" PRIu32, names[k][0],
                          pl->nfree, nfree);
        caching_check_tree(c, &c->pools[k].unmapped, 2, k, names[k][1], ck, &in_sets);
    }
    uint64_t claimed = 0, unclaimed = 0, seg_total = 0, seg_dev = 0, nseg = 0, nalloc = 0;
    uint64_t *es_mapped = calloc(c->nes ? c->nes : 1, sizeof *es_mapped);
    uint32_t expect_sets = 0;
    for (uint32_t x = 1; x < c->heap.n; x++) {
        const cblk_t *b = &B[x];
        if (b->inset == 3)
            continue;
        if (b->size == 0)
            gm_check_fail(ck, "block %" PRIu32 " is empty", x);
        if (b->allocated) {
            uint64_t v;
            if (!b->mapped || b->inset != 0)
                gm_check_fail(ck, "allocated block at %#" PRIx64 " is unmapped or cached",
                              b->addr);
            if (gm__idmap_get(&c->live, b->addr, &v)) {
                if (v != x)
                    gm_check_fail(ck, "address map: %#" PRIx64 " names another block", b->addr);
                nalloc++;
                claimed += b->size;
            } else {
                unclaimed++; /* a recorded block its pre-existing ALLOC has not claimed yet */
            }
        } else {
            expect_sets++;
            if (b->inset != (b->mapped ? 1 : 2))
                gm_check_fail(ck, "free block at %#" PRIx64 " is not in its pool's %s set",
                              b->addr, b->mapped ? "free" : "unmapped");
        }
        if (b->prev != NIL &&
            (B[b->prev].next != x || B[b->prev].addr + B[b->prev].size != b->addr))
            gm_check_fail(ck, "block at %#" PRIx64 ": bad link to its predecessor", b->addr);
        if (b->next != NIL && (B[b->next].prev != x || b->addr + b->size != B[b->next].addr))
            gm_check_fail(ck, "block at %#" PRIx64 ": bad link to its successor", b->addr);
        if (b->next != NIL && (B[b->next].stream != b->stream || B[b->next].es != b->es ||
                               B[b->next].pool != b->pool))
            gm_check_fail(ck, "block at %#" PRIx64 ": neighbour of another segment", b->addr);
        if (b->es == 0) {
            if (!b->mapped)
                gm_check_fail(ck, "ordinary block at %#" PRIx64 " is unmapped", b->addr);
            if (!b->allocated && b->next != NIL && !B[b->next].allocated)
                gm_check_fail(ck, "free block at %#" PRIx64 " should have merged with the next",
                              b->addr);
            if (b->prev == NIL) { /* a segment head: walk it */
                uint64_t sz = 0;
                uint32_t guard = 0;
                for (uint32_t y = x; y != NIL && guard <= c->heap.n; y = B[y].next, guard++)
                    sz += B[y].size;
                seg_total += sz;
                seg_dev += gm_device_round(c->base.dev, sz);
                nseg++;
            }
        } else {
            if (b->es > c->nes || !c->es[b->es - 1].live) {
                gm_check_fail(ck, "block at %#" PRIx64 " in a dropped expandable range", b->addr);
                continue;
            }
            const cexp_t *es = &c->es[b->es - 1];
            if (b->addr < es->base || b->addr + b->size > es->base + es->size)
                gm_check_fail(ck, "block at %#" PRIx64 " outside its expandable range", b->addr);
            if (b->mapped)
                es_mapped[b->es - 1] += b->size;
            else if ((b->addr - es->base) % es->page || b->size % es->page)
                gm_check_fail(ck, "unmapped block at %#" PRIx64 " is not whole pages", b->addr);
            if (!b->allocated && b->next != NIL && !B[b->next].allocated &&
                B[b->next].mapped == b->mapped)
                gm_check_fail(ck, "free block at %#" PRIx64 " should have merged with the next",
                              b->addr);
            if (b->prev == NIL && b->addr != es->base)
                gm_check_fail(ck, "expandable range at %#" PRIx64 " does not start with a block",
                              es->base);
            if (b->next == NIL && b->addr + b->size != es->base + es->size)
                gm_check_fail(ck, "expandable range at %#" PRIx64 " does not end with a block",
                              es->base);
        }
    }
    if (in_sets != expect_sets)
        gm_check_fail(ck, "sets hold %" PRIu32 " blocks, %" PRIu32 " are free", in_sets,
                      expect_sets);
    uint64_t mapped = 0;
    for (uint32_t k = 0; k < c->nes; k++) {
        if (!c->es[k].live)
            continue;
        if (es_mapped != NULL && es_mapped[k] != c->es[k].mapped)
            gm_check_fail(
                ck, "expandable range at %#" PRIx64 ": %" PRIu64 " bytes mapped, counted %" PRIu64,
                c->es[k].base, es_mapped[k], c->es[k].mapped);
        mapped += c->es[k].mapped;
    }
    free(es_mapped);
    if (nalloc != gm__idmap_count(&c->live))
        gm_check_fail(ck, "address map holds %zu blocks, %" PRIu64 " are allocated and claimed",
                      gm__idmap_count(&c->live), nalloc);
    if (claimed != c->allocated)
        gm_check_fail(ck, "allocated bytes %" PRIu64 ", blocks sum to %" PRIu64, c->allocated,
                      claimed);
    if (unclaimed != gm__idmap_count(&c->pre))
        gm_check_fail(ck, "%" PRIu64 " recorded blocks await their allocation, %zu are named",
                      unclaimed, gm__idmap_count(&c->pre));
    if (nseg != c->nsegments)
        gm_check_fail(ck, "%" PRIu64 " segments, counted %" PRIu64, nseg, c->nsegments);
    if (seg_total + mapped != c->total)
        gm_check_fail(ck, "segments and pages hold %" PRIu64 " bytes, counted %" PRIu64,
                      seg_total + mapped, c->total);
    if (seg_dev + mapped != c->device_bytes || c->device_bytes != c->base.dev->reserved)
        gm_check_fail(ck,
                      "device bytes %" PRIu64 " (counted %" PRIu64 "), device reserved %" PRIu64,
                      seg_dev + mapped, c->device_bytes, c->base.dev->reserved);
    if (c->set_fraction && !c->cfg.t.expandable && !c->warm && c->total > c->allowed)
        gm_check_fail(ck, "%" PRIu64 " bytes reserved over the allowed %" PRIu64, c->total,
                      c->allowed);
    return ck->bad;
}

/* Every segment head (an ordinary segment's first block, or an expandable
 * range's first block), then its chain: mapped blocks only. */
void caching_walk(gm_policy_t *p, gm_walk_fn fn, void *ctx)
{
    caching_t *c = CACHING(p);
    if (c == NULL)
        return;
    const cblk_t *B = c->heap.b;
    for (uint32_t x = 1; x < c->heap.n; x++) {
        if (B[x].inset == 3 || B[x].prev != NIL)
            continue;
        gm_walk_block_t w = {.stream = B[x].stream, .pool = B[x].pool};
        if (B[x].es) {
            const cexp_t *es = &c->es[B[x].es - 1];
            w.seg_addr = es->base;
            w.seg_size = es->mapped;
        } else {
            w.seg_addr = B[x].addr;
            for (uint32_t y = x, guard = 0; y != NIL && guard < c->heap.n; y = B[y].next, guard++)
                w.seg_size += B[y].size;
        }
        for (uint32_t y = x, guard = 0; y != NIL && guard < c->heap.n; y = B[y].next, guard++) {
            if (!B[y].mapped)
                continue;
            w.addr = B[y].addr;
            w.size = B[y].size;
            w.allocated = B[y].allocated;
            fn(ctx, &w);
        }
    }
}
