/*
 * tests/policy_harness.h — one policy on a simulated device, driven a call
 * at a time with its check() walker run after every operation, for the
 * per-policy test files (test_<policy>.c).  Included by a test file (static
 * inline functions; Criterion asserts fail the calling test).
 *
 * pol_open makes any policy on any device; a file about one policy defines
 * POLICY ("bfc") before including this header and gets pol_make/pol_new
 * for it on a device of a given capacity.  Settings are "key=value" strings
 * as gm_params_set takes them, in a NULL-terminated array.  The resolved
 * parameters stay in the harness until pol_end (their `set` bits serve
 * tests of prepare).
 */
#ifndef GM_TESTS_POLICY_HARNESS_H
#define GM_TESTS_POLICY_HARNESS_H

#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

typedef struct pol {
    const gm_policy_ops_t *ops;
    gm_device_t dev;
    gm_policy_t *p;
    gm_params_t params;
} pol_t;

/* A default device configuration of `capacity` bytes (0: unlimited). */
static inline gm_device_config_t pol_device(uint64_t capacity)
{
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    cfg.capacity = capacity;
    return cfg;
}

/* The policy named `policy` on a device configured by cfg, with the "key=
 * value" settings of kv (NULL-terminated; NULL for none).  Returns 0, or
 * the code of the first setting refused or of create, with err filled, the
 * parameters released and t->p NULL (pol_end is then optional). */
static inline int pol_open(pol_t *t, const char *policy, const gm_device_config_t *cfg,
                           const char *const *kv, gm_error_t *err)
{
    memset(t, 0, sizeof *t);
    t->ops = gm_policy_find(policy);
    cr_assert_not_null(t->ops, "%s is not registered", policy);
    cr_assert_eq(gm_params_init(&t->params, t->ops, err), 0);
    int rc = 0;
    for (; rc == 0 && kv != NULL && *kv != NULL; kv++) {
        char key[64];
        const char *eq = strchr(*kv, '=');
        cr_assert_not_null(eq, "'%s' is not key=value", *kv);
        snprintf(key, sizeof key, "%.*s", (int)(eq - *kv), *kv);
        rc = gm_params_set(&t->params, key, eq + 1, err);
    }
    if (rc == 0) {
        gm_device_init(&t->dev, cfg);
        rc = gm_policy_create(t->ops, &t->dev, t->params.values, &t->p, err);
    }
    if (rc != 0) {
        t->p = NULL;
        gm_params_release(&t->params);
    }
    return rc;
}

#ifdef POLICY
/* A POLICY on a device of `capacity` bytes, with "key=value" settings
 * (NULL-terminated).  Returns pol_open's code. */
static inline int pol_make(pol_t *t, uint64_t capacity, const char *const *kv, gm_error_t *err)
{
    gm_device_config_t cfg = pol_device(capacity);
    return pol_open(t, POLICY, &cfg, kv, err);
}

/* pol_make that must succeed. */
static inline void pol_new(pol_t *t, uint64_t capacity, const char *const *kv)
{
    gm_error_t err = {0};
    cr_assert_eq(pol_make(t, capacity, kv, &err), 0, "%s", err.msg);
}
#endif

/* The policy's invariants hold (check() finds no violation). */
static inline void pol_check(pol_t *t)
{
    char why[256] = "";
    int bad = gm_policy_check(t->p, why, sizeof why);
    cr_assert_eq(bad, 0, "check: %d: %s", bad, why);
}

/* Allocations that must succeed, with a block at least as large as asked. */
static inline gm_block_t pol_alloc_on(pol_t *t, uint64_t size, uint32_t stream)
{
    gm_request_t req = {.size = size, .stream = stream};
    gm_block_t blk = {0, 0};
    int rc = gm_policy_alloc(t->p, &req, &blk);
    cr_assert_eq(rc, 0, "alloc(%" PRIu64 ") = %d", size, rc);
    cr_assert_geq(blk.size, size);
    pol_check(t);
    return blk;
}

static inline gm_block_t pol_alloc(pol_t *t, uint64_t size) { return pol_alloc_on(t, size, 0); }

/* Allocations that may fail: alloc's code. */
static inline int pol_try_on(pol_t *t, uint64_t size, uint32_t stream, gm_block_t *blk)
{
    gm_request_t req = {.size = size, .stream = stream};
    int rc = gm_policy_alloc(t->p, &req, blk);
    pol_check(t);
    return rc;
}

static inline int pol_try(pol_t *t, uint64_t size, gm_block_t *blk)
{
    return pol_try_on(t, size, 0, blk);
}

/* Frees that must succeed. */
static inline void pol_free_on(pol_t *t, gm_block_t blk, uint32_t stream)
{
    cr_assert_eq(gm_policy_free(t->p, &blk, stream), 0);
    pol_check(t);
}

static inline void pol_free(pol_t *t, gm_block_t blk) { pol_free_on(t, blk, 0); }

static inline void pol_empty(pol_t *t)
{
    gm_policy_empty_cache(t->p);
    pol_check(t);
}

/* For policies with a sync hook (a MARK tagged "synchronize"). */
static inline void pol_sync(pol_t *t)
{
    gm_policy_sync(t->p);
    pol_check(t);
}

static inline gm_policy_stats_t pol_stats(pol_t *t)
{
    gm_policy_stats_t st;
    gm_policy_stats(t->p, &st);
    return st;
}

/* A seeded churn on a small device (pol_churn). */
typedef struct pol_churn {
    uint64_t seed;
    uint64_t small, large;  /* a request is 1 to `small` bytes, one in eight 1 to `large` */
    uint32_t streams;       /* each alloc and free on a random stream below this; 0 or 1: 0 */
    uint32_t drain_stream;  /* the stream of the frees at the end */
    int sync_every;         /* pol_sync before every sync_every-th step (0: never) */
} pol_churn_t;

/* 6000 seeded steps on t's device (a capacity is set): an alloc (55 %, at
 * most 256 live) that may run out of memory, or a free of a random live
 * block, checked after each, reserved never above the capacity.  Then
 * every block is freed and the cache emptied: the device must hold
 * nothing.  The run must see OOMs and more than 1000 successes; `what`
 * names it in messages. */
static inline void pol_churn(pol_t *t, const pol_churn_t *c, const char *what)
{
    const uint64_t capacity = t->dev.cfg.capacity;
    gm_block_t live[256];
    size_t n = 0;
    uint64_t rng = c->seed, ooms = 0, ok = 0;
    for (int k = 0; k < 6000; k++) {
        if (c->sync_every > 0 && k % c->sync_every == 0)
            pol_sync(t);
        if (n < 256 && (n == 0 || gt_rand(&rng) % 100 < 55)) {
            uint64_t size = 1 + gt_rand(&rng) % (gt_rand(&rng) % 8 == 0 ? c->large : c->small);
            uint32_t stream = c->streams > 1 ? (uint32_t)(gt_rand(&rng) % c->streams) : 0;
            int rc = pol_try_on(t, size, stream, &live[n]);
            cr_assert(rc == 0 || rc == GM_ALLOC_OOM);
            if (rc == 0) {
                n++;
                ok++;
            } else {
                ooms++;
            }
        } else {
            size_t i = gt_rand(&rng) % n;
            uint32_t stream = c->streams > 1 ? (uint32_t)(gt_rand(&rng) % c->streams) : 0;
            pol_free_on(t, live[i], stream);
            live[i] = live[--n];
        }
        cr_assert_leq(t->dev.reserved, capacity);
    }
    cr_expect_gt(ooms, 0, "%s: no OOM on %" PRIu64 " bytes", what, capacity);
    cr_expect_gt(ok, 1000, "%s", what);
    while (n > 0)
        pol_free_on(t, live[--n], c->drain_stream);
    pol_empty(t);
    cr_expect_eq(t->dev.reserved, 0, "%s", what);
}

/* The policy destroyed and its parameters released; t->p may be NULL. */
static inline void pol_end(pol_t *t)
{
    if (t->p != NULL)
        gm_policy_destroy(t->p);
    t->p = NULL;
    gm_params_release(&t->params);
}

#endif
