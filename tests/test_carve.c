/*
 * tests/test_carve.c — the segment helpers bfc, pool, async and tlsf share
 * (sim/carve.h), on a heap built by hand: one segment of three blocks,
 * checked intact and then broken one invariant at a time, the walk
 * visiting every block as a policy's own rules would.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "sim/carve.h"
#include "util.h"

#define BASE UINT64_C(0x10000)

typedef struct seg {
    gm__bt_heap_t heap;
    gm__idmap_t live;
    uint32_t h[3];
} seg_t;

/* [BASE, BASE + 3072): a live block of 1024 bytes, a free one in list 0,
 * a live one; the live ones in the address map. */
static void seg_init(seg_t *s)
{
    gm__bt_heap_init(&s->heap);
    gm__idmap_init(&s->live);
    for (int i = 0; i < 3; i++) {
        s->h[i] = gm__bt_new(&s->heap);
        cr_assert_neq(s->h[i], GM__BT_NONE);
    }
    for (int i = 0; i < 3; i++) {
        gm__bt_blk_t *x = &s->heap.b[s->h[i]];
        x->addr = BASE + (uint64_t)i * 1024;
        x->size = 1024;
        x->prev = i > 0 ? s->h[i - 1] : GM__BT_NONE;
        x->next = i < 2 ? s->h[i + 1] : GM__BT_NONE;
        x->list = i == 1 ? 0 : GM__BT_USED;
        if (x->list == GM__BT_USED)
            cr_assert_eq(gm__idmap_put(&s->live, x->addr, s->h[i]), 0);
    }
}

static void seg_release(seg_t *s)
{
    gm__bt_heap_release(&s->heap);
    gm__idmap_release(&s->live);
}

/* Walk the segment's blocks as a policy's check does; the blocks seen. */
static int seg_walk(seg_t *s, gm_check_t *ck, const gm__carve_rules_t *r, gm__carve_tally_t *t)
{
    gm__carve_seg_t it;
    int seen = 0;
    for (const gm__bt_blk_t *x = gm__carve_first(&it, ck, &s->heap, &s->live, r, t, BASE, 3072,
                                                 s->h[0]);
         x != NULL; x = gm__carve_next(&it))
        seen++;
    return seen;
}

/* Check the segment with rules r; the violations, *t the tallies. */
static int seg_check(seg_t *s, const gm__carve_rules_t *r, gm__carve_tally_t *t, char *why,
                     size_t whylen)
{
    gm_check_t ck;
    gm_check_begin(&ck, why, whylen);
    memset(t, 0, sizeof *t);
    seg_walk(s, &ck, r, t);
    gm__carve_tallied(&ck, &s->heap, &s->live, t, 1, 2048);
    return ck.bad;
}

static const gm__carve_rules_t rules = {.seg = "segment", .nsets = 1, .merge_any = 1};

Test(carve, an_intact_segment_passes_and_is_tallied)
{
    seg_t s;
    seg_init(&s);
    gm__carve_tally_t t;
    char why[128];
    cr_expect_eq(seg_check(&s, &rules, &t, why, sizeof why), 0, "%s", why);
    cr_expect_eq(t.blocks, 3);
    cr_expect_eq(t.live, 2);
    cr_expect_eq(t.free, 1);
    cr_expect_eq(t.allocated, 2048);
    gm_block_t blk = {BASE + 2048, 1024};
    cr_expect_eq(gm__carve_live(&s.heap, &s.live, &blk), s.h[2]);
    blk.size = 512; /* the right address, the wrong size */
    cr_expect_eq(gm__carve_live(&s.heap, &s.live, &blk), GM__BT_NONE);
    blk = (gm_block_t){BASE + 1024, 1024}; /* the free one */
    cr_expect_eq(gm__carve_live(&s.heap, &s.live, &blk), GM__BT_NONE);
    seg_release(&s);
}

Test(carve, a_gap_breaks_the_tiling)
{
    seg_t s;
    seg_init(&s);
    s.heap.b[s.h[1]].size = 512;
    gm__carve_tally_t t;
    char why[128];
    cr_expect_gt(seg_check(&s, &rules, &t, why, sizeof why), 0);
    cr_expect(strstr(why, "breaks the tiling") != NULL, "%s", why);
    cr_expect_eq(t.blocks, 3, "the walk ends at the block that breaks it");
    seg_release(&s);
}

Test(carve, a_live_block_missing_from_the_map_is_found)
{
    seg_t s;
    seg_init(&s);
    gm__idmap_remove(&s.live, BASE + 2048, NULL);
    gm__carve_tally_t t;
    char why[128];
    cr_expect_gt(seg_check(&s, &rules, &t, why, sizeof why), 0);
    cr_expect(strstr(why, "not in the address map") != NULL, "%s", why);
    seg_release(&s);
}

/* Two free neighbours: unmerged when any two merge, fine when they are in
 * different lists and only one list's merge. */
Test(carve, free_neighbours_merge_as_the_rules_say)
{
    seg_t s;
    seg_init(&s);
    gm__idmap_remove(&s.live, BASE + 2048, NULL);
    s.heap.b[s.h[2]].list = 1;
    gm_check_t ck;
    char why[128];
    gm__carve_tally_t t = {0};
    gm__carve_rules_t r = {.seg = "segment", .nsets = 2, .merge_any = 1};
    gm_check_begin(&ck, why, sizeof why);
    cr_expect_eq(seg_walk(&s, &ck, &r, &t), 3);
    cr_expect_eq(ck.bad, 1);
    cr_expect(strstr(why, "should have merged") != NULL, "%s", why);
    r.merge_any = 0;
    memset(&t, 0, sizeof t);
    gm_check_begin(&ck, why, sizeof why);
    cr_expect_eq(seg_walk(&s, &ck, &r, &t), 3);
    cr_expect_eq(ck.bad, 0, "%s", why);
    cr_expect_eq(t.free, 2);
    seg_release(&s);
}

Test(carve, a_cycle_ends_the_walk_and_the_check)
{
    seg_t s;
    seg_init(&s);
    s.heap.b[s.h[2]].next = s.h[0];
    gm__carve_tally_t t;
    char why[128];
    cr_expect_gt(seg_check(&s, &rules, &t, why, sizeof why), 0);
    cr_expect(strstr(why, "block list is broken") != NULL, "%s", why);
    seg_release(&s);
}

static void count_blocks(void *ctx, const gm_walk_block_t *b)
{
    uint64_t *seen = ctx;
    cr_expect_eq(b->seg_addr, BASE);
    cr_expect_eq(b->seg_size, 3072);
    cr_expect_eq(b->addr, BASE + seen[0] * 1024, "block %" PRIu64 " out of order", seen[0]);
    cr_expect_eq(b->allocated, seen[0] != 1);
    seen[0]++;
}

Test(carve, the_walk_shows_each_block_in_address_order)
{
    seg_t s;
    seg_init(&s);
    uint64_t seen[1] = {0};
    gm__carve_walk(&s.heap, BASE, 3072, s.h[0], GM_WALK_ANY_STREAM, count_blocks, seen);
    cr_expect_eq(seen[0], 3);
    seg_release(&s);
}

/* The largest free block of several sets. */
Test(carve, largest_spans_every_set)
{
    seg_t s;
    seg_init(&s);
    gm__bt_set_t sets[2];
    gm__bt_set_init(&sets[0]);
    gm__bt_set_init(&sets[1]);
    cr_expect_eq(gm__carve_largest(s.heap.b, sets, 2), 0);
    gm__bt_set_insert(s.heap.b, &sets[0], s.h[1]);
    cr_expect_eq(gm__carve_largest(s.heap.b, sets, 2), 1024);
    gm__carve_tally_t t;
    cr_expect_eq(seg_check(&s, &rules, &t, NULL, 0), 0);
    gm_check_t ck;
    gm_check_begin(&ck, NULL, 0);
    cr_expect_eq(gm__carve_sets(&ck, &s.heap, sets, 2), 1);
    cr_expect_eq(ck.bad, 0);
    seg_release(&s);
}
