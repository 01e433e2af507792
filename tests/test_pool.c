/*
 * tests/test_pool.c — the pool policy (RAPIDS RMM's pool_memory_resource):
 * 256-byte alignment, best fit by (size, address), coalescing within a
 * list and never across upstream blocks, the growth rule (doubling, half
 * of what remains under a maximum, halving when the device refuses),
 * per-stream free lists (own list first, a block taken from another
 * stream's list, lists merged), empty_cache, parameters, a seeded stress
 * under a small capacity, and the real snapshots checked after every event.
 * (The contract suite in test_policy.c covers it too.)
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define POLICY "pool"

#include "policy_harness.h"

Test(pool, aligns_to_256_bytes)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, 1), b = pol_alloc(&t, 300);
    cr_expect_eq(a.size, 256);
    cr_expect_eq(b.size, 512);
    pol_end(&t);
}

Test(pool, grows_by_the_pool_size)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    pol_alloc(&t, MiB);
    cr_expect_eq(t.dev.reserved, MiB, "an empty pool grows by the request");
    pol_alloc(&t, 512);
    cr_expect_eq(t.dev.reserved, 2 * MiB, "then by the pool's size: it doubles");
    pol_alloc(&t, MiB - 512); /* the rest of the second block */
    cr_expect_eq(t.dev.mallocs, 2);
    pol_alloc(&t, 3 * MiB);
    cr_expect_eq(t.dev.reserved, 5 * MiB, "a request above the pool size grows by itself");
    pol_end(&t);
}

Test(pool, grows_by_half_the_rest_under_a_maximum)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"maximum_pool_size=100MiB", NULL});
    pol_alloc(&t, MiB);
    cr_expect_eq(t.dev.reserved, 50 * MiB, "max(request, (100 MiB − 0) / 2)");
    pol_alloc(&t, 49 * MiB);
    pol_alloc(&t, MiB);
    cr_expect_eq(t.dev.reserved, 75 * MiB, "then half of the 50 MiB left");
    gm_block_t x;
    cr_expect_eq(pol_try(&t, 30 * MiB, &x), GM_ALLOC_OOM, "above what remains: refused");
    cr_expect_eq(t.dev.mallocs, 2, "without asking the device");
    pol_end(&t);
}

Test(pool, halves_a_refused_expansion)
{
    pol_t t;
    pol_new(&t, 10 * MiB, (const char *const[]){"initial_pool_size=6MiB", NULL});
    cr_expect_eq(t.dev.reserved, 6 * MiB, "initial_pool_size taken at creation");
    pol_alloc(&t, 6 * MiB);
    pol_alloc(&t, MiB);
    cr_expect_eq(t.dev.failed, 1, "6 MiB refused first");
    cr_expect_eq(t.dev.reserved, 9 * MiB, "then half of it, 3 MiB");
    gm_block_t x;
    cr_expect_eq(pol_try(&t, 2 * MiB, &x), 0, "the 2 MiB left in that block");
    cr_expect_eq(pol_try(&t, 2 * MiB, &x), GM_ALLOC_OOM, "1 MiB left on the device");
    pol_end(&t);
}

Test(pool, best_fit_and_coalescing)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"initial_pool_size=8MiB", NULL});
    gm_block_t w0 = pol_alloc(&t, 64 * KiB), big = pol_alloc(&t, 512 * KiB);
    gm_block_t w1 = pol_alloc(&t, 64 * KiB), s1 = pol_alloc(&t, 256 * KiB);
    gm_block_t w2 = pol_alloc(&t, 64 * KiB), s2 = pol_alloc(&t, 256 * KiB);
    gm_block_t w3 = pol_alloc(&t, 64 * KiB);
    pol_free(&t, s2);
    pol_free(&t, big);
    pol_free(&t, s1);
    gm_block_t x = pol_alloc(&t, 200 * KiB);
    cr_expect_eq(x.addr, s1.addr, "smallest fitting block, lowest address among equals");
    cr_expect_eq(x.size, 200 * KiB, "always cut to the request");
    pol_free(&t, x);
    /* freeing w1 and w2 merges big + w1 + s1 + w2 + s2 into one block of
     * 1152 KiB, the best fit for 1 MiB (the tail is larger) */
    pol_free(&t, w1);
    pol_free(&t, w2);
    gm_block_t y = pol_alloc(&t, MiB);
    cr_expect_eq(y.addr, big.addr, "the merged block serves 1 MiB");
    gm_block_t z = pol_alloc(&t, 128 * KiB);
    cr_expect_eq(z.addr, big.addr + MiB, "and its 128 KiB remainder the next request");
    (void)w0, (void)w3;
    pol_end(&t);
}

Test(pool, upstream_blocks_never_merge)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, MiB), b = pol_alloc(&t, MiB);
    cr_expect_eq(t.dev.mallocs, 2);
    cr_expect_eq(b.addr, a.addr + MiB, "the device placed them side by side");
    pol_free(&t, a);
    pol_free(&t, b);
    cr_expect_eq(pol_stats(&t).largest_free, MiB, "two free blocks, not one of 2 MiB");
    gm_block_t c;
    cr_expect_eq(pol_try(&t, 2 * MiB, &c), 0);
    cr_expect_eq(t.dev.mallocs, 3, "2 MiB needs a new upstream block");
    pol_end(&t);
}

Test(pool, own_stream_list_first)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"initial_pool_size=8MiB", NULL});
    gm_block_t a = pol_alloc_on(&t, MiB, 0), b = pol_alloc_on(&t, MiB, 0);
    pol_free_on(&t, a, 1); /* a now sits in stream 1's list */
    gm_block_t c = pol_alloc_on(&t, MiB, 0);
    cr_expect_eq(c.addr, b.addr + MiB, "stream 0 takes from its own list (the tail)");
    gm_block_t d = pol_alloc_on(&t, MiB, 1);
    cr_expect_eq(d.addr, a.addr, "stream 1 reuses what it freed");
    pol_end(&t);
}

Test(pool, block_taken_from_another_stream)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"initial_pool_size=8MiB", NULL});
    gm_block_t a = pol_alloc_on(&t, MiB, 0);
    /* stream 1 has no list yet: it takes the best fit from stream 0's list
     * (the 7 MiB tail); the remainder stays in stream 0's list */
    gm_block_t b = pol_alloc_on(&t, MiB, 1);
    cr_expect_eq(b.addr, a.addr + MiB);
    cr_expect_eq(t.dev.mallocs, 1);
    pol_free_on(&t, b, 1); /* b in stream 1's list, the tail in stream 0's: not merged */
    gm_block_t c = pol_alloc_on(&t, MiB, 0);
    cr_expect_eq(c.addr, a.addr + 2 * MiB, "stream 0 serves itself from the tail it kept");
    gm_block_t d = pol_alloc_on(&t, 512 * KiB, 1);
    cr_expect_eq(d.addr, b.addr, "stream 1 from its own list");
    pol_free_on(&t, d, 1);
    pol_free_on(&t, a, 0);
    gm_block_t e = pol_alloc_on(&t, 5 * MiB, 0);
    cr_expect_eq(e.addr, c.addr + MiB, "the rest of the tail, in stream 0's list");
    gm_block_t f = pol_alloc_on(&t, 768 * KiB, 0);
    cr_expect_eq(f.addr, a.addr, "own list first (stream 1 holds an equal block)");
    pol_end(&t);
}

Test(pool, lists_merge_when_no_single_block_fits)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"initial_pool_size=4MiB", NULL});
    gm_block_t x = pol_alloc_on(&t, 2 * MiB, 0), y = pol_alloc_on(&t, 2 * MiB, 0);
    pol_free_on(&t, x, 0);
    pol_free_on(&t, y, 1);
    gm_block_t z = pol_alloc_on(&t, 3 * MiB, 0);
    cr_expect_eq(z.addr, x.addr, "stream 1's list merged into stream 0's: x + y coalesce");
    cr_expect_eq(t.dev.mallocs, 1, "no expansion");
    pol_end(&t);
}

Test(pool, empty_cache_returns_idle_upstream_blocks)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc_on(&t, MiB, 0), b = pol_alloc_on(&t, 512 * KiB, 0);
    gm_block_t c = pol_alloc_on(&t, 512 * KiB, 1);
    cr_expect_eq(t.dev.mallocs, 2);
    pol_free_on(&t, b, 0);
    pol_free_on(&t, c, 1); /* the second upstream block: free, in two lists */
    pol_empty(&t);
    cr_expect_eq(t.dev.reserved, MiB, "the idle upstream block went back");
    pol_free(&t, a);
    pol_empty(&t);
    cr_expect_eq(t.dev.reserved, 0);
    pol_end(&t);
}

Test(pool, bad_parameters)
{
    pol_t t;
    gm_error_t err = {0};
    cr_expect_neq(pol_make(&t, 0, (const char *const[]){"initial_pool_size=1000", NULL}, &err), 0);
    cr_expect(strstr(err.msg, "pool.initial_pool_size") != NULL, "%s", err.msg);
    cr_expect_neq(pol_make(&t, 0, (const char *const[]){"initial_pool_size=2MiB",
                                                        "maximum_pool_size=1MiB", NULL}, &err), 0);
    cr_expect(strstr(err.msg, "maximum_pool_size") != NULL, "%s", err.msg);
    cr_expect_neq(pol_make(&t, MiB, (const char *const[]){"initial_pool_size=2MiB", NULL}, &err),
                  0, "an initial pool the device cannot hold");
    cr_expect_eq(t.dev.reserved, 0);
}

Test(pool, stress_small_capacity)
{
    /* seeded churn on two streams, frees on either, 64 MiB device */
    static const char *const none[] = {NULL};
    static const char *const maxed[] = {"maximum_pool_size=48MiB", NULL};
    const char *const *cfgs[] = {none, maxed};
    for (size_t c = 0; c < 2; c++) {
        pol_t t;
        pol_new(&t, 64 * MiB, cfgs[c]);
        char what[32];
        snprintf(what, sizeof what, "config %zu", c);
        pol_churn(&t,
                  &(pol_churn_t){.seed = 99 + c, .small = 256 * KiB, .large = 16 * MiB,
                                 .streams = 3, .drain_stream = 2},
                  what);
        pol_end(&t);
    }
}

/* ---- real data ------------------------------------------------------------------ */

#include "realdata.h"

Test(pool, real_snapshots, .timeout = 300)
{
    gt_replay_snapshots(POLICY, NULL);
}
