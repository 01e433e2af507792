/*
 * tests/test_bfc.c — the bfc policy (TensorFlow's BFC allocator): rounding,
 * best fit by (size, address), the split rule, coalescing, region growth
 * (doubling, one whole region, backpedal), garbage collection on OOM,
 * empty_cache, parameters, a seeded stress under a small capacity, and the
 * real snapshots with a check after every event.  (The contract suite in
 * test_policy.c covers it too.)
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define POLICY "bfc"

#include "policy_harness.h"

Test(bfc, rounds_to_256_bytes)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, 1), b = pol_alloc(&t, 256), c = pol_alloc(&t, 257);
    cr_expect_eq(a.size, 256);
    cr_expect_eq(b.size, 256);
    cr_expect_eq(c.size, 512);
    cr_expect_eq(b.addr, a.addr + 256, "blocks are cut in address order from the region");
    cr_expect_eq(c.addr, b.addr + 256);
    cr_expect_eq(pol_stats(&t).allocated, 1024);
    pol_end(&t);
}

Test(bfc, regions_double_with_allow_growth)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    pol_alloc(&t, MiB);
    cr_expect_eq(t.dev.reserved, 2 * MiB, "first region 2 MiB");
    pol_alloc(&t, MiB);
    cr_expect_eq(t.dev.mallocs, 1, "the 2 MiB region holds both");
    pol_alloc(&t, MiB);
    cr_expect_eq(t.dev.reserved, 6 * MiB, "second region doubled to 4 MiB");
    pol_alloc(&t, 3 * MiB);
    pol_alloc(&t, MiB); /* fills the 4 MiB region: 1 + 3 */
    cr_expect_eq(t.dev.mallocs, 3);
    cr_expect_eq(t.dev.reserved, 14 * MiB, "third region 8 MiB");
    /* a request above the region size doubles it first (8 → 16 → 32) and
     * keeps it: the next region is the same size */
    pol_alloc(&t, 20 * MiB);
    cr_expect_eq(t.dev.reserved, 46 * MiB, "32 MiB region for a 20 MiB request");
    pol_alloc(&t, 16 * MiB);
    cr_expect_eq(t.dev.reserved, 78 * MiB, "next region 32 MiB again (no doubling after growth)");
    pol_alloc(&t, 20 * MiB); /* 16 MiB left in the last region: a new one */
    cr_expect_eq(t.dev.reserved, 78 * MiB + 64 * MiB, "then 64 MiB");
    pol_end(&t);
}

Test(bfc, one_region_of_the_whole_limit)
{
    pol_t t;
    pol_new(&t, GiB, (const char *const[]){"allow_growth=false", NULL});
    pol_alloc(&t, 1000);
    cr_expect_eq(t.dev.reserved, GiB, "the whole device at the first request");
    gm_block_t big;
    cr_expect_eq(pol_try(&t, GiB, &big), GM_ALLOC_OOM, "nothing beyond the one region");
    cr_expect_eq(t.dev.mallocs, 1);
    pol_end(&t);

    pol_new(&t, 0, (const char *const[]){"allow_growth=false", "memory_limit=3GiB", NULL});
    pol_alloc(&t, 1);
    cr_expect_eq(t.dev.reserved, 3 * GiB, "memory_limit sets the region on an unlimited device");
    pol_end(&t);
}

Test(bfc, split_rule)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    /* 2 MiB region: a request of just over half takes it whole (2 MiB <
     * twice the request, remainder below 128 MiB) */
    gm_block_t a = pol_alloc(&t, MiB + 1);
    cr_expect_eq(a.size, 2 * MiB, "not split: the chunk is under twice the request");
    pol_free(&t, a);
    gm_block_t b = pol_alloc(&t, MiB);
    cr_expect_eq(b.size, MiB, "split: the chunk is exactly twice the request");
    pol_end(&t);

    /* the 128 MiB rule: one 1 GiB region */
    pol_new(&t, 0, (const char *const[]){"allow_growth=false", "memory_limit=1GiB", NULL});
    gm_block_t c = pol_alloc(&t, 700 * MiB);
    cr_expect_eq(c.size, 700 * MiB, "split: the remainder (324 MiB) is at least 128 MiB");
    gm_block_t d = pol_alloc(&t, 200 * MiB);
    cr_expect_eq(d.size, 324 * MiB, "not split: remainder 124 MiB, under twice the request");
    pol_end(&t);

    /* fragmentation_fraction moves the threshold: 0.5 × 1 GiB = 512 MiB */
    pol_new(&t, 0, (const char *const[]){"allow_growth=false", "memory_limit=1GiB",
                                         "fragmentation_fraction=0.5", NULL});
    gm_block_t e = pol_alloc(&t, 700 * MiB);
    cr_expect_eq(e.size, GiB, "not split: 324 MiB < 512 MiB and under twice the request");
    pol_end(&t);
}

Test(bfc, best_fit_by_size_then_address)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"allow_growth=false", "memory_limit=64MiB", NULL});
    /* free chunks of 512 KiB (low), 256 KiB, 256 KiB (high), each walled in
     * by live blocks so that nothing merges */
    gm_block_t w0 = pol_alloc(&t, 64 * KiB), big = pol_alloc(&t, 512 * KiB);
    gm_block_t w1 = pol_alloc(&t, 64 * KiB), s1 = pol_alloc(&t, 256 * KiB);
    gm_block_t w2 = pol_alloc(&t, 64 * KiB), s2 = pol_alloc(&t, 256 * KiB);
    gm_block_t w3 = pol_alloc(&t, 64 * KiB);
    pol_free(&t, s2);
    pol_free(&t, big);
    pol_free(&t, s1);
    gm_block_t x = pol_alloc(&t, 200 * KiB);
    cr_expect_eq(x.addr, s1.addr, "smallest fitting chunk, lowest address among equals");
    cr_expect_eq(x.size, 256 * KiB, "256 KiB < 2 × 200 KiB: handed out whole");
    gm_block_t y = pol_alloc(&t, 256 * KiB);
    cr_expect_eq(y.addr, s2.addr, "the other 256 KiB chunk before the 512 KiB one");
    gm_block_t z = pol_alloc(&t, 100 * KiB);
    cr_expect_eq(z.addr, big.addr, "then the 512 KiB chunk, split");
    cr_expect_eq(z.size, 100 * KiB);
    (void)w0, (void)w1, (void)w2, (void)w3;
    pol_end(&t);
}

Test(bfc, coalescing_with_both_neighbours)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"allow_growth=false", "memory_limit=8MiB", NULL});
    gm_block_t a = pol_alloc(&t, MiB), b = pol_alloc(&t, MiB), c = pol_alloc(&t, MiB);
    gm_block_t d = pol_alloc(&t, MiB);
    cr_expect_eq(pol_stats(&t).largest_free, 4 * MiB);
    pol_free(&t, a);
    pol_free(&t, c);
    cr_expect_eq(pol_stats(&t).largest_free, 4 * MiB, "the tail chunk is still the largest");
    pol_free(&t, d); /* merges with c and the tail: 6 MiB */
    cr_expect_eq(pol_stats(&t).largest_free, 6 * MiB);
    pol_free(&t, b); /* a + b + the rest: the whole region */
    gm_policy_stats_t st = pol_stats(&t);
    cr_expect_eq(st.largest_free, 8 * MiB, "one free chunk again");
    cr_expect_eq(st.allocated, 0);
    gm_block_t e = pol_alloc(&t, 8 * MiB);
    cr_expect_eq(e.addr, a.addr);
    pol_end(&t);
}

Test(bfc, regions_never_merge)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, 2 * MiB), b = pol_alloc(&t, 4 * MiB);
    cr_expect_eq(t.dev.mallocs, 2);
    pol_free(&t, a);
    pol_free(&t, b);
    cr_expect_eq(pol_stats(&t).largest_free, 4 * MiB, "two free regions, never one chunk");
    pol_end(&t);
}

Test(bfc, garbage_collection_on_oom)
{
    /* 8 MiB device: a 2 MiB region, freed; a 7 MiB request does not fit
     * beside it, so the free region goes back and an 8 MiB one comes */
    for (int gc = 0; gc < 2; gc++) {
        pol_t t;
        pol_new(&t, 8 * MiB,
                (const char *const[]){gc ? "garbage_collection=true" : "garbage_collection=false",
                                      NULL});
        gm_block_t a = pol_alloc(&t, 2 * MiB);
        pol_free(&t, a);
        gm_block_t b;
        int rc = pol_try(&t, 7 * MiB, &b);
        if (gc) {
            cr_expect_eq(rc, 0, "garbage collection makes room");
            cr_expect_eq(t.dev.frees, 1);
            cr_expect_eq(t.dev.reserved, 8 * MiB);
        } else {
            cr_expect_eq(rc, GM_ALLOC_OOM);
            cr_expect_eq(t.dev.reserved, 2 * MiB, "nothing given back without it");
        }
        pol_end(&t);
    }
}

Test(bfc, backpedal_when_the_device_refuses)
{
    pol_t t;
    pol_new(&t, 100 * MiB,
            (const char *const[]){"allow_growth=false", "memory_limit=1GiB", NULL});
    pol_alloc(&t, MiB);
    cr_expect_eq(t.dev.mallocs, 1);
    cr_expect_gt(t.dev.failed, 0, "the 1 GiB region was refused first");
    cr_expect_leq(t.dev.reserved, 100 * MiB);
    cr_expect_gt(t.dev.reserved, 90 * MiB, "then 90 %% steps down to the first that fits");
    pol_end(&t);
}

Test(bfc, empty_cache_returns_free_regions)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, MiB), b = pol_alloc(&t, 3 * MiB);
    cr_expect_eq(t.dev.mallocs, 2);
    pol_free(&t, b);
    pol_empty(&t);
    cr_expect_eq(t.dev.reserved, 2 * MiB, "the wholly free 4 MiB region went back");
    pol_free(&t, a);
    pol_empty(&t);
    cr_expect_eq(t.dev.reserved, 0);
    pol_end(&t);
}

Test(bfc, bad_parameters)
{
    pol_t t;
    gm_error_t err = {0};
    cr_expect_neq(pol_make(&t, 0, (const char *const[]){"fragmentation_fraction=2", NULL}, &err),
                  0);
    cr_expect(strstr(err.msg, "bfc.fragmentation_fraction") != NULL, "%s", err.msg);
}

Test(bfc, stress_small_capacity)
{
    /* seeded churn on a 64 MiB device: OOMs happen, garbage collection
     * runs, and every state passes check */
    static const char *const growth[] = {"allow_growth=true", NULL};
    static const char *const whole[] = {"allow_growth=false", NULL};
    static const char *const nogc[] = {"garbage_collection=false", NULL};
    const char *const *cfgs[] = {growth, whole, nogc};
    for (size_t c = 0; c < 3; c++) {
        pol_t t;
        pol_new(&t, 64 * MiB, cfgs[c]);
        char what[32];
        snprintf(what, sizeof what, "config %zu", c);
        pol_churn(&t, &(pol_churn_t){.seed = 1234 + c, .small = 256 * KiB, .large = 24 * MiB},
                  what);
        pol_end(&t);
    }
}

/* ---- real data ------------------------------------------------------------------ */

#include "realdata.h"

Test(bfc, real_snapshots, .timeout = 300)
{
    gt_replay_snapshots(POLICY, NULL);
}
