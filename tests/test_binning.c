/*
 * tests/test_binning.c — the binning policy (RAPIDS RMM's
 * binning_memory_resource in front of its pool): the bin for each size,
 * chunks taken from the pool (at creation and when a bin runs dry), FIFO
 * reuse per stream and taking from another stream's list, large requests
 * in the pool, empty_cache, parameters, a seeded stress under a small
 * capacity, and the real snapshots checked after every event.  (The
 * contract suite in test_policy.c covers it too.)
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define POLICY "binning"

#include "policy_harness.h"

Test(binning, preallocates_a_chunk_per_bin)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    /* 128 blocks of 256 KiB, 512 KiB, 1, 2 and 4 MiB, through the pool,
     * which grows by exactly each (each is larger than the pool so far) */
    cr_expect_eq(t.dev.reserved, 992 * MiB);
    cr_expect_eq(t.dev.mallocs, 5);
    gm_policy_stats_t st = pol_stats(&t);
    cr_expect_eq(st.allocated, 0, "chunks are not allocations");
    cr_expect_eq(st.largest_free, 4 * MiB, "the largest block on hand: a 4 MiB bin block");
    cr_expect_eq(st.free_bytes, 992 * MiB);
    pol_end(&t);
}

Test(binning, the_smallest_bin_that_holds_the_request)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    uint64_t sizes[] = {1, 256 * KiB, 256 * KiB + 1, 3 * MiB, 4 * MiB};
    uint64_t bins[] = {256 * KiB, 256 * KiB, 512 * KiB, 4 * MiB, 4 * MiB};
    for (size_t i = 0; i < 5; i++)
        cr_expect_eq(pol_alloc(&t, sizes[i]).size, bins[i], "request %" PRIu64, sizes[i]);
    cr_expect_eq(t.dev.mallocs, 5, "all from the preallocated chunks");
    gm_block_t big = pol_alloc(&t, 4 * MiB + 1);
    cr_expect_eq(big.size, 4 * MiB + 256, "above the largest bin: the pool, aligned to 256");
    cr_expect_eq(t.dev.mallocs, 6);
    pol_free(&t, big);
    pol_end(&t);
}

Test(binning, fifo_reuse_and_new_chunks)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"blocks_to_preallocate=4", NULL});
    cr_expect_eq(t.dev.reserved, 31 * MiB, "4 blocks per bin: 1 + 2 + 4 + 8 + 16 MiB");
    gm_block_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = pol_alloc(&t, 100 * KiB);
    for (int i = 1; i < 4; i++)
        cr_expect_eq(b[i].addr, b[0].addr + (uint64_t)i * 256 * KiB, "blocks in chunk order");
    pol_free(&t, b[2]);
    pol_free(&t, b[0]);
    cr_expect_eq(pol_alloc(&t, 1).addr, b[2].addr, "first freed, first reused");
    cr_expect_eq(pol_alloc(&t, 1).addr, b[0].addr);
    uint64_t before = t.dev.reserved;
    gm_block_t e = pol_alloc(&t, 1);
    cr_expect_gt(t.dev.reserved, before, "the bin ran dry: a new chunk from the pool");
    gm_block_t f = pol_alloc(&t, 1);
    cr_expect_eq(f.addr, e.addr + 256 * KiB, "the next block of the new chunk");
    pol_end(&t);
}

Test(binning, per_stream_lists)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"blocks_to_preallocate=4", NULL});
    gm_block_t a = pol_alloc_on(&t, 1, 0), b = pol_alloc_on(&t, 1, 0);
    pol_free_on(&t, a, 1); /* a goes to stream 1's list */
    gm_block_t c = pol_alloc_on(&t, 1, 1);
    cr_expect_eq(c.addr, a.addr, "stream 1 reuses its own free block");
    gm_block_t d = pol_alloc_on(&t, 1, 1);
    cr_expect_eq(d.addr, b.addr + 256 * KiB, "then takes the front of stream 0's list");
    gm_block_t e = pol_alloc_on(&t, 1, 0);
    cr_expect_eq(e.addr, b.addr + 512 * KiB);
    pol_end(&t);
}

Test(binning, small_device_defers_the_chunks)
{
    pol_t t;
    pol_new(&t, 16 * MiB, (const char *const[]){"blocks_to_preallocate=4", NULL});
    cr_expect_eq(t.dev.reserved, 15 * MiB, "the 16 MiB chunk of the 4 MiB bin did not fit");
    gm_block_t x;
    cr_expect_eq(pol_try(&t, 4 * MiB, &x), GM_ALLOC_OOM);
    cr_expect_eq(pol_try(&t, 2 * MiB, &x), 0, "the other bins work");
    pol_end(&t);
}

Test(binning, empty_cache_returns_everything_idle)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"blocks_to_preallocate=4", NULL});
    gm_block_t a = pol_alloc(&t, 1), big = pol_alloc(&t, 64 * MiB);
    pol_empty(&t);
    cr_expect_eq(t.dev.reserved, MiB + 64 * MiB,
                 "idle chunks went back through the pool; the 256 KiB bin's chunk (a is live) "
                 "and the large block stay");
    pol_free(&t, a);
    pol_free(&t, big);
    pol_empty(&t);
    cr_expect_eq(t.dev.reserved, 0);
    gm_block_t b = pol_alloc(&t, 1);
    cr_expect_eq(b.size, 256 * KiB, "a bin takes a chunk again after empty_cache");
    pol_end(&t);
}

Test(binning, bad_parameters)
{
    pol_t t;
    gm_error_t err = {0};
    cr_expect_neq(pol_make(&t, 0, (const char *const[]){"min_exponent=3", NULL}, &err), 0);
    cr_expect(strstr(err.msg, "binning.min_exponent") != NULL, "%s", err.msg);
    cr_expect_neq(pol_make(&t, 0, (const char *const[]){"max_exponent=10", NULL}, &err), 0);
    cr_expect(strstr(err.msg, "binning.max_exponent") != NULL, "%s", err.msg);
    cr_expect_neq(pol_make(&t, 0, (const char *const[]){"blocks_to_preallocate=0", NULL}, &err), 0);
    cr_expect_neq(pol_make(&t, 0, (const char *const[]){"initial_pool_size=100", NULL}, &err), 0);
    cr_expect(strstr(err.msg, "pool.initial_pool_size") != NULL, "%s", err.msg);
}

Test(binning, stress_small_capacity)
{
    pol_t t;
    pol_new(&t, 96 * MiB, (const char *const[]){"blocks_to_preallocate=8", NULL});
    pol_churn(&t,
              &(pol_churn_t){.seed = 4711, .small = 3 * MiB, .large = 24 * MiB, .streams = 2},
              "blocks_to_preallocate=8");
    pol_end(&t);
}

/* ---- real data ------------------------------------------------------------------ */

#include "realdata.h"

Test(binning, real_snapshots, .timeout = 300)
{
    gt_replay_snapshots(POLICY, NULL);
}
