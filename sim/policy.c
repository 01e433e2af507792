/*
 * sim/policy.c — calling a policy: the layer between a policy's table and
 * everything that uses it (gmsim/policy.h, "calling a policy"), the
 * report every check op writes through, and the object every create
 * starts from (gm_policy_new).
 *
 * What every policy would compute alike is computed here once (stats'
 * free_bytes), an optional operation a policy leaves NULL is answered
 * here, and in a debug build each state-changing call is followed, on a
 * schedule, by the policy's own check (GM_POLICY_ASSERT).
 */
#include "gmsim/policy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a check's report ------------------------------------------------------ */

void gm_check_begin(gm_check_t *ck, char *why, size_t whylen)
{
    ck->why = whylen > 0 ? why : NULL;
    ck->whylen = whylen;
    ck->bad = 0;
    if (ck->why != NULL)
        ck->why[0] = '\0';
}

int gm_check_fail(gm_check_t *ck, const char *fmt, ...)
{
    if (ck->bad++ == 0 && ck->why != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ck->why, ck->whylen, fmt, ap);
        va_end(ap);
    }
    return ck->bad;
}

/* ---- the debug build's checks ---------------------------------------------- */

void gm_policy_assert(gm_policy_t *p, const char *op)
{
    uint64_t n = ++p->calls;
    if (n > GM_POLICY_ASSERT_FIRST && n % GM_POLICY_ASSERT_EVERY != 0)
        return;
    char why[256];
    int bad = gm_policy_check(p, why, sizeof why);
    if (bad == 0)
        return;
    fprintf(stderr,
            "gmsim: policy %s: invariant broken after %s (call %llu): %s (%d violation%s)\n",
            p->ops->name, op, (unsigned long long)n, why, bad, bad == 1 ? "" : "s");
    abort();
}

/* ---- making a policy ------------------------------------------------------- */

void *gm_policy_new(size_t size, const gm_policy_ops_t *ops, gm_device_t *dev, gm_error_t *err)
{
    gm_policy_t *p = calloc(1, size);
    if (p == NULL) {
        gm_error_set(err, GM_ENOMEM, "out of memory creating policy '%s'", ops->name);
        return NULL;
    }
    p->ops = ops;
    p->dev = dev;
    return p;
}

/* ---- calling a policy ------------------------------------------------------ */

int gm_policy_create(const gm_policy_ops_t *ops, gm_device_t *dev, const gm_param_value_t *values,
                     gm_policy_t **out, gm_error_t *err)
{
    int rc = ops->create(dev, values, out, err);
    if (rc == 0)
        (*out)->calls = 0;
    return rc;
}

void gm_policy_destroy(gm_policy_t *p)
{
    if (p != NULL)
        p->ops->destroy(p);
}

void gm_policy_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    memset(out, 0, sizeof *out);
    p->ops->stats(p, out);
    uint64_t reserved = p->dev->reserved;
    out->free_bytes = reserved > out->allocated ? reserved - out->allocated : 0;
}

int gm_policy_check(gm_policy_t *p, char *why, size_t whylen)
{
    gm_check_t ck;
    gm_check_begin(&ck, why, whylen);
    return p->ops->check(p, &ck);
}

void gm_policy_empty_cache(gm_policy_t *p)
{
    if (p->ops->empty_cache != NULL) {
        p->ops->empty_cache(p);
        GM_POLICY_ASSERT(p, "empty_cache");
    }
}

void gm_policy_sync(gm_policy_t *p)
{
    if (p->ops->sync != NULL) {
        p->ops->sync(p);
        GM_POLICY_ASSERT(p, "sync");
    }
}

int gm_policy_prepare(gm_policy_t *p, const gm_trace_context_t *ctx, gm_error_t *err)
{
    if (p->ops->prepare == NULL)
        return 0;
    int rc = p->ops->prepare(p, ctx, err);
    GM_POLICY_ASSERT(p, "prepare");
    return rc;
}

int gm_policy_plan(gm_policy_t *p, gm_plan_info_t *out)
{
    return p->ops->plan != NULL ? p->ops->plan(p, out) : GM_ESTATE;
}

int gm_policy_walk(gm_policy_t *p, gm_walk_fn fn, void *ctx)
{
    if (p->ops->walk == NULL)
        return GM_EUNSUPPORTED;
    p->ops->walk(p, fn, ctx);
    return 0;
}
