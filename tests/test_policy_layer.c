/*
 * tests/test_policy_layer.c — the layer every caller reaches a policy
 * through (sim/policy.c): the figures it fills, the answers it gives for
 * optional operations, the check report, and the debug build's invariant
 * checks, which must abort on a corrupted state.
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- a bare policy: the required operations only ------------------------- */

typedef struct bare {
    gm_policy_t base;
    uint64_t allocated;
    int broken; /* its check reports a violation */
} bare_t;

static const gm_policy_ops_t bare_ops;

static int bare_create(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                       gm_error_t *err)
{
    (void)v;
    (void)err;
    bare_t *b = malloc(sizeof *b);
    cr_assert_not_null(b);
    memset(b, 0x5a, sizeof *b); /* the layer, not the policy, starts the call count */
    b->base.ops = &bare_ops;
    b->base.dev = dev;
    b->allocated = 0;
    b->broken = 0;
    *out = &b->base;
    return 0;
}

static int bare_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    uint64_t got;
    if (gm_device_malloc(p->dev, req->size, 0, &out->addr, &got) != 0)
        return GM_ALLOC_OOM;
    out->size = got;
    ((bare_t *)p)->allocated += got;
    return 0;
}

static int bare_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    (void)stream;
    gm_device_free(p->dev, blk->addr, blk->size);
    ((bare_t *)p)->allocated -= blk->size;
    return 0;
}

static void bare_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    out->allocated = ((bare_t *)p)->allocated;
}

static int bare_check(gm_policy_t *p, gm_check_t *ck)
{
    if (((bare_t *)p)->broken)
        gm_check_fail(ck, "deliberately broken");
    return ck->bad;
}

static void bare_destroy(gm_policy_t *p) { free(p); }

static const gm_policy_ops_t bare_ops = {
    .name = "bare", .help = "test policy", .create = bare_create, .alloc = bare_alloc,
    .free = bare_free, .stats = bare_stats, .check = bare_check, .destroy = bare_destroy,
};

static gm_policy_t *bare_new(gm_device_t *dev)
{
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    gm_device_init(dev, &cfg);
    gm_policy_t *p = NULL;
    gm_error_t err;
    cr_assert_eq(gm_policy_create(&bare_ops, dev, NULL, &p, &err), 0);
    cr_assert_eq(p->calls, 0, "create starts the call count");
    return p;
}

static void walk_count(void *ctx, const gm_walk_block_t *b)
{
    (void)b;
    ++*(int *)ctx;
}

/* ---- what the layer fills and answers ------------------------------------ */

Test(policy_layer, stats_fill_free_bytes_from_the_device)
{
    gm_device_t dev;
    gm_policy_t *p = bare_new(&dev);
    gm_request_t req = {.size = 1000};
    gm_block_t blk;
    cr_assert_eq(gm_policy_alloc(p, &req, &blk), 0);
    dev.reserved += 4096; /* bytes the device holds for no live block */
    gm_policy_stats_t st;
    memset(&st, 0xa5, sizeof st);
    gm_policy_stats(p, &st);
    cr_expect_eq(st.allocated, blk.size);
    cr_expect_eq(st.largest_free, 0, "a field the policy leaves is zero");
    cr_expect_eq(st.free_bytes, 4096);
    ((bare_t *)p)->allocated = dev.reserved + 1; /* more allocated than reserved: none free */
    gm_policy_stats(p, &st);
    cr_expect_eq(st.free_bytes, 0);
    gm_policy_destroy(p);
    gm_policy_destroy(NULL);
}

Test(policy_layer, optional_operations_have_answers)
{
    gm_device_t dev;
    gm_policy_t *p = bare_new(&dev);
    gm_error_t err = {0};
    gm_trace_context_t ctx = {0};
    cr_expect_eq(gm_policy_prepare(p, &ctx, &err), 0, "no prepare: nothing to learn");
    gm_plan_info_t pi;
    cr_expect_eq(gm_policy_plan(p, &pi), GM_ESTATE, "no plan");
    int n = 0;
    cr_expect_eq(gm_policy_walk(p, walk_count, &n), GM_EUNSUPPORTED);
    cr_expect_eq(n, 0);
    gm_policy_empty_cache(p); /* nothing cached, nothing to do */
    gm_policy_sync(p);
    cr_expect_eq(dev.mallocs + dev.frees, 0);
    gm_policy_destroy(p);
}

Test(policy_layer, a_check_counts_every_violation_and_keeps_the_first)
{
    char why[16];
    memset(why, 'x', sizeof why);
    gm_check_t ck;
    gm_check_begin(&ck, why, sizeof why);
    cr_expect_str_eq(why, "", "begin clears the reason");
    gm_check_fail(&ck, "first %d", 1);
    gm_check_fail(&ck, "second");
    gm_check_fail(&ck, "third");
    cr_expect_eq(ck.bad, 3);
    cr_expect_str_eq(why, "first 1");
    gm_check_begin(&ck, why, 6);
    gm_check_fail(&ck, "a long reason");
    cr_expect_str_eq(why, "a lon", "cut to the room given");
    gm_check_begin(&ck, NULL, 0);
    gm_check_fail(&ck, "counted only");
    cr_expect_eq(ck.bad, 1);
    gm_device_t dev;
    gm_policy_t *p = bare_new(&dev);
    ((bare_t *)p)->broken = 1;
    cr_expect_eq(gm_policy_check(p, why, sizeof why), 1);
    cr_expect_str_eq(why, "deliberately br");
    gm_policy_destroy(p);
}

/* ---- every policy's check sees a corrupted state ------------------------- */

/* A registered policy with its default parameters (in *params, released by
 * the caller) on a default device. */
static gm_policy_t *registered_new(const gm_policy_ops_t *ops, gm_device_t *dev,
                                   gm_params_t *params)
{
    gm_error_t err;
    cr_assert_eq(gm_params_init(params, ops, &err), 0);
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    gm_device_init(dev, &cfg);
    gm_policy_t *p = NULL;
    cr_assert_eq(gm_policy_create(ops, dev, params->values, &p, &err), 0, "%s: %s", ops->name,
                 err.msg);
    return p;
}

/* Each registered policy, with a few blocks live (none for a planner,
 * which serves only what it planned): its check passes; with the device's
 * reserved count off by one granule, what the policy holds and what the
 * device counts disagree, and its check must say so, by name. */
Test(policy_layer, every_policy_check_finds_a_corrupted_state)
{
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        gm_params_t params;
        gm_device_t dev;
        gm_policy_t *p = registered_new(ops, &dev, &params);
        gm_block_t blk[3];
        int n = ops->flags & GM_POLICY_NEEDS_LIFETIMES ? 0 : 3;
        for (int k = 0; k < n; k++) {
            gm_request_t req = {.size = (uint64_t)(k + 1) * 3000, .id = (uint64_t)k};
            cr_assert_eq(gm_policy_alloc(p, &req, &blk[k]), 0, "%s: alloc", ops->name);
        }
        if (n > 0)
            cr_assert_eq(gm_policy_free(p, &blk[1], 0), 0, "%s: free", ops->name);
        char why[256];
        cr_expect_eq(gm_policy_check(p, why, sizeof why), 0, "%s: %s", ops->name, why);
        cr_expect_str_eq(why, "", "%s: no reason when nothing is wrong", ops->name);
        dev.reserved += dev.cfg.granularity;
        int bad = gm_policy_check(p, why, sizeof why);
        cr_expect_gt(bad, 0, "%s: a device count off by %" PRIu64 " bytes passes its check",
                     ops->name, dev.cfg.granularity);
        cr_expect_neq(why[0], '\0', "%s: a violation with no reason", ops->name);
        dev.reserved -= dev.cfg.granularity;
        cr_expect_eq(gm_policy_check(p, why, sizeof why), 0, "%s: %s", ops->name, why);
        gm_policy_destroy(p);
        gm_params_release(&params);
    }
}

/* ---- the debug build's checks -------------------------------------------- */

/* The check behind GM_POLICY_ASSERT, called directly (a release build has
 * it too): a corrupted tlsf state aborts. */
Test(policy_layer, the_assert_aborts_on_a_corrupted_state, .signal = SIGABRT)
{
    gm_params_t params;
    gm_device_t dev;
    gm_policy_t *p = registered_new(gm_policy_find("tlsf"), &dev, &params);
    gm_request_t req = {.size = 5000};
    gm_block_t blk;
    cr_assert_eq(gm_policy_alloc(p, &req, &blk), 0);
    gm_policy_assert(p, "alloc"); /* intact: returns */
    dev.reserved += dev.cfg.granularity;
    gm_policy_assert(p, "alloc");
}

/* After the first GM_POLICY_ASSERT_FIRST calls, the schedule: a broken
 * state is seen on the next checked call, the GM_POLICY_ASSERT_EVERY-th. */
Test(policy_layer, the_assert_checks_on_a_schedule)
{
    gm_device_t dev;
    gm_policy_t *p = bare_new(&dev);
    p->calls = GM_POLICY_ASSERT_FIRST;
    ((bare_t *)p)->broken = 1;
    for (unsigned k = GM_POLICY_ASSERT_FIRST + 1; k < GM_POLICY_ASSERT_EVERY; k++)
        gm_policy_assert(p, "alloc"); /* calls 129 .. 1023: not checked */
    cr_expect_eq(p->calls, GM_POLICY_ASSERT_EVERY - 1);
    gm_policy_destroy(p);
}

#ifndef NDEBUG
/* A debug build checks after each call while the count is small: the
 * alloc after the corruption aborts. */
Test(policy_layer, a_debug_build_checks_after_a_call, .signal = SIGABRT)
{
    gm_device_t dev;
    gm_policy_t *p = bare_new(&dev);
    gm_request_t req = {.size = 1000};
    gm_block_t blk;
    cr_assert_eq(gm_policy_alloc(p, &req, &blk), 0);
    ((bare_t *)p)->broken = 1;
    gm_policy_alloc(p, &req, &blk);
}
#else
/* A release build compiles the checks out: a broken state goes on. */
Test(policy_layer, a_release_build_checks_nothing)
{
    gm_device_t dev;
    gm_policy_t *p = bare_new(&dev);
    ((bare_t *)p)->broken = 1;
    gm_request_t req = {.size = 1000};
    gm_block_t blk;
    cr_expect_eq(gm_policy_alloc(p, &req, &blk), 0);
    cr_expect_eq(gm_policy_free(p, &blk, 0), 0);
    cr_expect_eq(p->calls, 0);
    gm_policy_destroy(p);
}
#endif
