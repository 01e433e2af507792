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
#define POLICY "tlsf"

#include "policy_harness.h"

Test(tlsf, rounds_to_align_and_packs_an_arena)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, 1), b = pol_alloc(&t, 513), c = pol_alloc(&t, 1000);
    cr_expect_eq(a.size, 512);
    cr_expect_eq(b.size, 1024);
    cr_expect_eq(c.size, 1024);
    /* split from the front of one arena: adjacent, in order */
    cr_expect_eq(b.addr, a.addr + 512);
    cr_expect_eq(c.addr, b.addr + 1024);
    cr_expect_eq(t.dev.reserved, 64 * MiB);
    cr_expect_eq(t.dev.mallocs, 1);
    pol_free(&t, a);
    pol_free(&t, b);
    pol_free(&t, c);
    pol_end(&t);
}

Test(tlsf, immediate_coalescing_restores_the_whole_arena)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, 4 * KiB), b = pol_alloc(&t, 8 * KiB), c = pol_alloc(&t, 16 * KiB);
    pol_free(&t, a);
    pol_free(&t, c); /* merges with the arena's tail */
    gm_policy_stats_t st;
    gm_policy_stats(t.p, &st);
    cr_expect_eq(st.largest_free, 64 * MiB - 12 * KiB);
    pol_free(&t, b); /* merges with both neighbours */
    gm_policy_stats(t.p, &st);
    cr_expect_eq(st.largest_free, 64 * MiB, "largest free %" PRIu64, st.largest_free);
    cr_expect_eq(st.free_bytes, 64 * MiB);
    /* the whole arena serves a request of its size */
    gm_block_t big = pol_alloc(&t, 48 * MiB);
    cr_expect_eq(big.addr, a.addr);
    cr_expect_eq(t.dev.mallocs, 1);
    pol_free(&t, big);
    pol_end(&t);
}

Test(tlsf, good_fit_reuses_a_freed_block_of_the_class)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t keep1 = pol_alloc(&t, 1 * MiB), x = pol_alloc(&t, 1 * MiB),
               keep2 = pol_alloc(&t, 1 * MiB);
    pol_free(&t, x);
    /* 1 MiB is a class boundary: the freed block is found in O(1) */
    gm_block_t y = pol_alloc(&t, 1 * MiB);
    cr_expect_eq(y.addr, x.addr);
    /* a request just below a boundary rounds its search up to it: a freed
     * block of exactly the request's class-low size is not taken */
    pol_free(&t, y);
    gm_block_t z = pol_alloc(&t, 1 * MiB + 512);
    cr_expect_neq(z.addr, x.addr, "good fit took a block smaller than its search class");
    pol_free(&t, z);
    pol_free(&t, keep1);
    pol_free(&t, keep2);
    pol_end(&t);
}

Test(tlsf, large_requests_get_their_own_arena)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t small = pol_alloc(&t, 1 * MiB);
    gm_block_t big = pol_alloc(&t, 100 * MiB);
    cr_expect_eq(t.dev.mallocs, 2);
    cr_expect_eq(t.dev.reserved, 64 * MiB + 100 * MiB);
    pol_free(&t, big);
    /* kept until empty_cache, which releases only wholly free arenas */
    cr_expect_eq(t.dev.reserved, 164 * MiB);
    pol_empty(&t);
    cr_expect_eq(t.dev.reserved, 64 * MiB);
    pol_free(&t, small);
    pol_empty(&t);
    cr_expect_eq(t.dev.reserved, 0);
    cr_expect_eq(t.dev.frees, 2);
    pol_end(&t);
}

Test(tlsf, full_device_releases_free_arenas_and_retries)
{
    pol_t t;
    pol_new(&t, 128 * MiB, NULL);
    gm_block_t a = pol_alloc(&t, 60 * MiB), b = pol_alloc(&t, 60 * MiB);
    cr_expect_eq(t.dev.reserved, 128 * MiB);
    pol_free(&t, a);
    pol_free(&t, b);
    gm_block_t c = pol_alloc(&t, 100 * MiB); /* needs its own arena: both go back */
    cr_expect_eq(t.dev.reserved, 100 * MiB);
    gm_request_t req = {.size = 64 * MiB};
    gm_block_t d;
    cr_expect_eq(gm_policy_alloc(t.p, &req, &d), GM_ALLOC_OOM);
    pol_check(&t);
    pol_free(&t, c);
    pol_end(&t);
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
            rc = gm_policy_create(ops, &dev, p.values, &pol, &err);
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
    static const char *const cfgs[][3] = {
        {NULL},
        {"sl_count=1", NULL},
        {"sl_count=64", "arena=8MiB", NULL},
        {"align=1", "sl_count=4", NULL},
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        pol_t t;
        pol_new(&t, 0, cfgs[c]);
        enum { N = 512 };
        gm_block_t live[N];
        int used[N] = {0};
        uint64_t rng = 77 + c;
        for (int k = 0; k < 6000; k++) {
            size_t i = (size_t)(gt_rand(&rng) % N);
            if (used[i]) {
                pol_free(&t, live[i]);
                used[i] = 0;
            } else {
                unsigned bits = (unsigned)(gt_rand(&rng) % 27);
                live[i] = pol_alloc(&t, 1 + gt_rand(&rng) % (UINT64_C(1) << bits));
                used[i] = 1;
            }
        }
        for (size_t i = 0; i < N; i++)
            if (used[i])
                pol_free(&t, live[i]);
        pol_empty(&t);
        cr_expect_eq(t.dev.reserved, 0, "config %zu holds %" PRIu64 " bytes", c, t.dev.reserved);
        pol_end(&t);
    }
}

Test(tlsf, double_and_foreign_frees_are_rejected)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, 4096);
    pol_free(&t, a);
    cr_expect_lt(gm_policy_free(t.p, &a, 0), 0);
    gm_block_t wrong = pol_alloc(&t, 4096);
    gm_block_t bad = {wrong.addr, wrong.size + 512};
    cr_expect_lt(gm_policy_free(t.p, &bad, 0), 0);
    pol_check(&t);
    pol_free(&t, wrong);
    pol_end(&t);
}
