/*
 * tests/test_tlsf.c — the TLSF policy (sim/tlsf.c): its two-level classes,
 * good-fit search, immediate coalescing, arenas (own arenas for large
 * requests, release on empty_cache and when the device is full), parameter
 * checks, and a seeded stress in several configurations with check() after
 * every operation.  The shared contract is in test_policy.c.
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

typedef struct tl {
    const gm_policy_ops_t *ops;
    gm_params_t params;
    gm_device_t dev;
    gm_policy_t *p;
} tl_t;

static void tl_init(tl_t *t, uint64_t capacity, const char *const *kv)
{
    memset(t, 0, sizeof *t);
    t->ops = gm_policy_find("tlsf");
    cr_assert_not_null(t->ops, "tlsf is not registered");
    gm_error_t err = {0};
    cr_assert_eq(gm_params_init(&t->params, t->ops, &err), 0);
    for (; kv && kv[0]; kv += 2)
        cr_assert_eq(gm_params_set(&t->params, kv[0], kv[1], &err), 0, "%s", err.msg);
    gm_device_config_t dc;
    gm_device_config_default(&dc);
    dc.capacity = capacity;
    gm_device_init(&t->dev, &dc);
    cr_assert_eq(t->ops->create(&t->dev, t->params.values, &t->p, &err), 0, "%s", err.msg);
}

static void tl_check(tl_t *t)
{
    char why[256];
    int bad = t->ops->check(t->p, why, sizeof why);
    cr_assert_eq(bad, 0, "check: %d: %s", bad, why);
}

static gm_block_t tl_alloc(tl_t *t, uint64_t size)
{
    gm_request_t req = {.size = size};
    gm_block_t b;
    cr_assert_eq(t->ops->alloc(t->p, &req, &b), 0, "alloc(%" PRIu64 ") failed", size);
    cr_assert_geq(b.size, size);
    tl_check(t);
    return b;
}

static void tl_free(tl_t *t, gm_block_t b)
{
    cr_assert_eq(t->ops->free(t->p, &b, 0), 0);
    tl_check(t);
}

static void tl_release(tl_t *t)
{
    t->ops->destroy(t->p);
    gm_params_release(&t->params);
}

Test(tlsf, rounds_to_align_and_packs_an_arena)
{
    tl_t t;
    tl_init(&t, 0, NULL);
    gm_block_t a = tl_alloc(&t, 1), b = tl_alloc(&t, 513), c = tl_alloc(&t, 1000);
    cr_expect_eq(a.size, 512);
    cr_expect_eq(b.size, 1024);
    cr_expect_eq(c.size, 1024);
    /* split from the front of one arena: adjacent, in order */
    cr_expect_eq(b.addr, a.addr + 512);
    cr_expect_eq(c.addr, b.addr + 1024);
    cr_expect_eq(t.dev.reserved, 64 * MiB);
    cr_expect_eq(t.dev.mallocs, 1);
    tl_free(&t, a);
    tl_free(&t, b);
    tl_free(&t, c);
    tl_release(&t);
}

Test(tlsf, immediate_coalescing_restores_the_whole_arena)
{
    tl_t t;
    tl_init(&t, 0, NULL);
    gm_block_t a = tl_alloc(&t, 4 * KiB), b = tl_alloc(&t, 8 * KiB), c = tl_alloc(&t, 16 * KiB);
    tl_free(&t, a);
    tl_free(&t, c); /* merges with the arena's tail */
    gm_policy_stats_t st;
    t.ops->stats(t.p, &st);
    cr_expect_eq(st.largest_free, 64 * MiB - 12 * KiB);
    tl_free(&t, b); /* merges with both neighbours */
    t.ops->stats(t.p, &st);
    cr_expect_eq(st.largest_free, 64 * MiB, "largest free %" PRIu64, st.largest_free);
    cr_expect_eq(st.free_bytes, 64 * MiB);
    /* the whole arena serves a request of its size */
    gm_block_t big = tl_alloc(&t, 48 * MiB);
    cr_expect_eq(big.addr, a.addr);
    cr_expect_eq(t.dev.mallocs, 1);
    tl_free(&t, big);
    tl_release(&t);
}

Test(tlsf, good_fit_reuses_a_freed_block_of_the_class)
{
    tl_t t;
    tl_init(&t, 0, NULL);
    gm_block_t keep1 = tl_alloc(&t, 1 * MiB), x = tl_alloc(&t, 1 * MiB),
               keep2 = tl_alloc(&t, 1 * MiB);
    tl_free(&t, x);
    /* 1 MiB is a class boundary: the freed block is found in O(1) */
    gm_block_t y = tl_alloc(&t, 1 * MiB);
    cr_expect_eq(y.addr, x.addr);
    /* a request just below a boundary rounds its search up to it: a freed
     * block of exactly the request's class-low size is not taken */
    tl_free(&t, y);
    gm_block_t z = tl_alloc(&t, 1 * MiB + 512);
    cr_expect_neq(z.addr, x.addr, "good fit took a block smaller than its search class");
    tl_free(&t, z);
    tl_free(&t, keep1);
    tl_free(&t, keep2);
    tl_release(&t);
}

Test(tlsf, large_requests_get_their_own_arena)
{
    tl_t t;
    tl_init(&t, 0, NULL);
    gm_block_t small = tl_alloc(&t, 1 * MiB);
    gm_block_t big = tl_alloc(&t, 100 * MiB);
    cr_expect_eq(t.dev.mallocs, 2);
    cr_expect_eq(t.dev.reserved, 64 * MiB + 100 * MiB);
    tl_free(&t, big);
    /* kept until empty_cache, which releases only wholly free arenas */
    cr_expect_eq(t.dev.reserved, 164 * MiB);
    t.ops->empty_cache(t.p);
    tl_check(&t);
    cr_expect_eq(t.dev.reserved, 64 * MiB);
    tl_free(&t, small);
    t.ops->empty_cache(t.p);
    tl_check(&t);
    cr_expect_eq(t.dev.reserved, 0);
    cr_expect_eq(t.dev.frees, 2);
    tl_release(&t);
}

Test(tlsf, full_device_releases_free_arenas_and_retries)
{
    tl_t t;
    tl_init(&t, 128 * MiB, NULL);
    gm_block_t a = tl_alloc(&t, 60 * MiB), b = tl_alloc(&t, 60 * MiB);
    cr_expect_eq(t.dev.reserved, 128 * MiB);
    tl_free(&t, a);
    tl_free(&t, b);
    gm_block_t c = tl_alloc(&t, 100 * MiB); /* needs its own arena: both go back */
    cr_expect_eq(t.dev.reserved, 100 * MiB);
    gm_request_t req = {.size = 64 * MiB};
    gm_block_t d;
    cr_expect_eq(t.ops->alloc(t.p, &req, &d), GM_ALLOC_OOM);
    tl_check(&t);
    tl_free(&t, c);
    tl_release(&t);
}

Test(tlsf, refuses_bad_parameters)
{
    const gm_policy_ops_t *ops = gm_policy_find("tlsf");
    cr_assert_not_null(ops);
    static const char *const bad[][2] = {{"sl_count", "3"}, {"sl_count", "128"},
                                         {"sl_count", "0"}, {"align", "384"},
                                         {"arena", "100"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gm_params_t p;
        gm_error_t err = {0};
        cr_assert_eq(gm_params_init(&p, ops, &err), 0);
        int rc = gm_params_set(&p, bad[i][0], bad[i][1], &err);
        if (rc == 0) {
            gm_device_t dev;
            gm_device_init(&dev, NULL);
            gm_policy_t *pol = NULL;
            rc = ops->create(&dev, p.values, &pol, &err);
            cr_expect_eq(rc, GM_EINVAL, "%s=%s accepted", bad[i][0], bad[i][1]);
            cr_expect(strstr(err.msg, bad[i][0]) != NULL, "message '%s'", err.msg);
        }
        gm_params_release(&p);
    }
}

/* Seeded stress with check() after every operation, in configurations that
 * exercise the first level (sl_count 1), many lists (64), a fine unit. */
Test(tlsf, seeded_stress_in_every_shape)
{
    static const char *const cfgs[][6] = {
        {NULL},
        {"sl_count", "1", NULL},
        {"sl_count", "64", "arena", "8MiB", NULL},
        {"align", "1", "sl_count", "4", NULL},
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        tl_t t;
        tl_init(&t, 0, cfgs[c]);
        enum { N = 512 };
        gm_block_t live[N];
        int used[N] = {0};
        uint64_t rng = 77 + c;
        for (int k = 0; k < 6000; k++) {
            size_t i = (size_t)(gt_rand(&rng) % N);
            if (used[i]) {
                tl_free(&t, live[i]);
                used[i] = 0;
            } else {
                unsigned bits = (unsigned)(gt_rand(&rng) % 27);
                live[i] = tl_alloc(&t, 1 + gt_rand(&rng) % (UINT64_C(1) << bits));
                used[i] = 1;
            }
        }
        for (size_t i = 0; i < N; i++)
            if (used[i])
                tl_free(&t, live[i]);
        t.ops->empty_cache(t.p);
        tl_check(&t);
        cr_expect_eq(t.dev.reserved, 0, "config %zu holds %" PRIu64 " bytes", c, t.dev.reserved);
        tl_release(&t);
    }
}

Test(tlsf, double_and_foreign_frees_are_rejected)
{
    tl_t t;
    tl_init(&t, 0, NULL);
    gm_block_t a = tl_alloc(&t, 4096);
    tl_free(&t, a);
    cr_expect_lt(t.ops->free(t.p, &a, 0), 0);
    gm_block_t wrong = tl_alloc(&t, 4096);
    gm_block_t bad = {wrong.addr, wrong.size + 512};
    cr_expect_lt(t.ops->free(t.p, &bad, 0), 0);
    tl_check(&t);
    tl_free(&t, wrong);
    tl_release(&t);
}
