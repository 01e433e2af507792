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

typedef struct pol {
    const gm_policy_ops_t *ops;
    gm_device_t dev;
    gm_policy_t *p;
} pol_t;

/* A POLICY on a device of `capacity` bytes, with "key=value" settings
 * (NULL-terminated).  Returns create's code. */
static int pol_make(pol_t *t, uint64_t capacity, const char *const *kv, gm_error_t *err)
{
    memset(t, 0, sizeof *t);
    t->ops = gm_policy_find(POLICY);
    cr_assert_not_null(t->ops);
    gm_params_t params;
    cr_assert_eq(gm_params_init(&params, t->ops, err), 0);
    for (; kv != NULL && *kv != NULL; kv++) {
        char key[64];
        const char *eq = strchr(*kv, '=');
        cr_assert_not_null(eq);
        snprintf(key, sizeof key, "%.*s", (int)(eq - *kv), *kv);
        cr_assert_eq(gm_params_set(&params, key, eq + 1, err), 0, "%s", err->msg);
    }
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    cfg.capacity = capacity;
    gm_device_init(&t->dev, &cfg);
    int rc = t->ops->create(&t->dev, params.values, &t->p, err);
    gm_params_release(&params);
    return rc;
}

static void pol_new(pol_t *t, uint64_t capacity, const char *const *kv)
{
    gm_error_t err = {0};
    cr_assert_eq(pol_make(t, capacity, kv, &err), 0, "%s", err.msg);
}

static void pol_check(pol_t *t)
{
    char why[256] = "";
    cr_assert_eq(t->ops->check(t->p, why, sizeof why), 0, "check: %s", why);
}

static gm_block_t pol_alloc_on(pol_t *t, uint64_t size, uint32_t stream)
{
    gm_request_t req = {.size = size, .stream = stream};
    gm_block_t blk = {0, 0};
    cr_assert_eq(t->ops->alloc(t->p, &req, &blk), 0, "alloc(%" PRIu64 ") failed", size);
    pol_check(t);
    return blk;
}

static gm_block_t pol_alloc(pol_t *t, uint64_t size) { return pol_alloc_on(t, size, 0); }

static int pol_try_on(pol_t *t, uint64_t size, uint32_t stream, gm_block_t *blk)
{
    gm_request_t req = {.size = size, .stream = stream};
    int rc = t->ops->alloc(t->p, &req, blk);
    pol_check(t);
    return rc;
}

static int pol_try(pol_t *t, uint64_t size, gm_block_t *blk) { return pol_try_on(t, size, 0, blk); }

static void pol_free_on(pol_t *t, gm_block_t blk, uint32_t stream)
{
    cr_assert_eq(t->ops->free(t->p, &blk, stream), 0);
    pol_check(t);
}

static void pol_free(pol_t *t, gm_block_t blk) { pol_free_on(t, blk, 0); }

static gm_policy_stats_t pol_stats(pol_t *t)
{
    gm_policy_stats_t st;
    t->ops->stats(t->p, &st);
    return st;
}

static void pol_end(pol_t *t) { t->ops->destroy(t->p); }

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
    t.ops->empty_cache(t.p);
    pol_check(&t);
    cr_expect_eq(t.dev.reserved, MiB + 64 * MiB,
                 "idle chunks went back through the pool; the 256 KiB bin's chunk (a is live) "
                 "and the large block stay");
    pol_free(&t, a);
    pol_free(&t, big);
    t.ops->empty_cache(t.p);
    pol_check(&t);
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
    gm_block_t live[256];
    size_t n = 0;
    uint64_t rng = 4711, ooms = 0, ok = 0;
    for (int k = 0; k < 6000; k++) {
        if (n < 256 && (n == 0 || gt_rand(&rng) % 100 < 55)) {
            uint64_t size = 1 + gt_rand(&rng) % (gt_rand(&rng) % 8 == 0 ? 24 * MiB : 3 * MiB);
            int rc = pol_try_on(&t, size, (uint32_t)(gt_rand(&rng) % 2), &live[n]);
            cr_assert(rc == 0 || rc == GM_ALLOC_OOM);
            if (rc == 0) {
                n++;
                ok++;
            } else {
                ooms++;
            }
        } else {
            size_t i = gt_rand(&rng) % n;
            pol_free_on(&t, live[i], (uint32_t)(gt_rand(&rng) % 2));
            live[i] = live[--n];
        }
        cr_assert_leq(t.dev.reserved, 96 * MiB);
    }
    cr_expect_gt(ooms, 0, "no OOM on 96 MiB");
    cr_expect_gt(ok, 1000);
    while (n > 0)
        pol_free(&t, live[--n]);
    t.ops->empty_cache(t.p);
    pol_check(&t);
    cr_expect_eq(t.dev.reserved, 0);
    pol_end(&t);
}

/* ---- real data ------------------------------------------------------------------ */

#include "realdata.h"

Test(binning, real_snapshots, .timeout = 300)
{
    gt_replay_snapshots(POLICY, NULL);
}
