/*
 * sim/offline/offline.c — the offline planner: knowing every allocation's
 * lifetime before the first event, give each one a fixed offset in one arena.
 * This file is the policy (its table, prepare, alloc and free, stats and
 * check); the plan it replays is made in prepare by offline_plan
 * (sim/offline/plan.c, which states the algorithm; the other files of
 * sim/offline/ are its steps: offline.h lists them).
 *
 * Replay: the first alloc reserves the arena with one device malloc (its
 * size the plan's peak); each alloc is served at its planned offset.  An
 * arena the device refuses (capacity) makes every alloc an OOM until it
 * fits.  empty_cache gives the arena back when nothing is live (it is
 * reserved again at the next alloc).  Pre-existing allocations are planned
 * like any other.  Without a context (no prepare, or no lifetimes) the
 * policy refuses to run: the replay engine reports it.
 *
 * Invariants (check): the live blocks are exactly the address map's, each
 * at its allocation's planned offset, inside the arena, and no two overlap;
 * their sizes sum to `allocated`; the device's reserved bytes are the
 * arena's (or 0 before it is reserved).
 */
#include "gmsim/policy.h"
#include "gmsim/trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "base/idmap.h"
#include "sim/offline/offline.h"

typedef struct offline {
    gm_policy_t base;
    uint64_t align;
    int64_t effort;
    uint64_t seed;
    int64_t search;
    int64_t early;

    /* the plan */
    int planned;
    size_t n;
    uint64_t *offset;   /* by allocation id */
    uint64_t *reqsize;  /* by allocation id, as requested (rounded: offline_size) */
    uint64_t *size;     /* by allocation id, rounded: made when plan() asks, else NULL */
    uint64_t peak;      /* arena bytes the plan needs */
    uint64_t passes;    /* heuristic passes made while planning (diagnostics) */
    uint64_t work;      /* work units spent (diagnostics) */
    uint64_t capacity;  /* the param; 0: the trace's "capacity" attribute, if any */
    uint64_t cap_used;  /* the capacity the plan was asked to fit (0: none) */
    uint64_t lb;        /* proved: no plan needs fewer bytes */
    int status;         /* GM_PLAN_* */

    /* the arena */
    uint64_t arena_addr, arena_got; /* got = 0: not reserved */

    gm__idmap_t live; /* address → allocation id */
    uint64_t allocated;
} offline_t;

extern const gm_policy_ops_t gm__policy_offline;

#define OFFLINE(p) GM_POLICY_DOWNCAST(offline_t, p, gm__policy_offline)

/* Allocation id's bytes as planned: its request rounded (offline_lt_size). */
static inline uint64_t offline_size(const offline_t *o, uint64_t id)
{
    gm_lifetime_t l = {.size = o->reqsize[id]};
    return offline_lt_size(&l, o->align);
}

static int offline_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                          gm_error_t *err)
{
    uint64_t align = values[0].size;
    if (align == 0 || (align & (align - 1)) != 0 || align > (UINT64_C(1) << 30))
        return gm_param_invalid(err, &gm__policy_offline, "align", align,
                                "not a power of two up to 1 GiB");
    if (values[1].i < 0)
        return gm_error_set(err, GM_EINVAL,
                            "invalid value '%" PRId64 "' for offline.effort: negative", values[1].i);
    if (values[3].i < 0)
        return gm_error_set(err, GM_EINVAL,
                            "invalid value '%" PRId64 "' for offline.search: negative",
                            values[3].i);
    if (values[5].i < 0)
        return gm_error_set(err, GM_EINVAL,
                            "invalid value '%" PRId64 "' for offline.early: negative",
                            values[5].i);
    offline_t *o = gm_policy_new(sizeof *o, &gm__policy_offline, dev, err);
    if (o == NULL)
        return GM_ENOMEM;
    o->align = align;
    o->effort = values[1].i;
    o->seed = (uint64_t)values[2].i;
    o->search = values[3].i;
    o->capacity = values[4].size;
    o->early = values[5].i;
    gm__idmap_init(&o->live);
    *out = &o->base;
    return 0;
}

static int offline_prepare(gm_policy_t *p, const gm_trace_context_t *ctx, gm_error_t *err)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL)
        return gm_error_set(err, GM_EINVAL, "not an offline policy");
    if (ctx == NULL || ctx->lifetimes == NULL)
        return gm_error_set(err, GM_ESTATE,
                            "offline needs the whole trace: replay it from a store");
    if (o->planned)
        return gm_error_set(err, GM_ESTATE, "offline: already planned");
    size_t n = ctx->nlifetimes;
    if (n > UINT32_MAX - 1)
        return gm_error_set(err, GM_EINVAL, "offline: %zu allocations, more than it can plan", n);
    /* the planner's arrays beyond the lifetimes (issue 33: at most 64
     * bytes an allocation at its peak): the plan's offsets and the
     * requests, kept for the replay; the buffers with their times
     * (offline_buf_t, 40 bytes) only where the steps that read them run
     * (skyline, window repair, exact search: up to OFFLINE_REPAIR_MAX
     * allocations) or where event indices need ranks (2^32 or more); the
     * greedy passes read the lifetimes themselves */
    int wide = 0;
    for (size_t i = 0; i < n && !wide; i++) {
        uint64_t end = offline_lt_end(&ctx->lifetimes[i]);
        wide = ctx->lifetimes[i].start >= UINT32_MAX - 1 ||
               (end != UINT64_MAX && end >= UINT32_MAX - 1);
    }
    int full = n <= OFFLINE_REPAIR_MAX || wide;
    offline_buf_t *buf = full ? malloc((n ? n : 1) * sizeof *buf) : NULL;
    o->offset = malloc((n ? n : 1) * sizeof *o->offset);
    o->reqsize = malloc((n ? n : 1) * sizeof *o->reqsize);
    if ((full && buf == NULL) || o->offset == NULL || o->reqsize == NULL) {
        free(buf);
        return gm_error_set(err, GM_ENOMEM, "offline: out of memory for %zu allocations", n);
    }
    for (size_t i = 0; i < n; i++)
        o->reqsize[i] = ctx->lifetimes[i].size;
    /* times: the lifetimes' timestamps when they say anything (some
     * lifetime has a length), else the event indices */
    int timed = 0;
    uint64_t tmax = 0, emax = 0;
    for (size_t i = 0; i < n && full; i++) {
        const gm_lifetime_t *lt = &ctx->lifetimes[i];
        if (lt->end != GM_LIFETIME_OPEN && lt->end_ns > lt->start_ns)
            timed = 1;
        if (lt->start_ns > tmax)
            tmax = lt->start_ns;
        if (lt->end != GM_LIFETIME_OPEN && lt->end_ns > tmax)
            tmax = lt->end_ns;
        if (lt->start > emax)
            emax = lt->start;
        if (lt->end != GM_LIFETIME_OPEN && lt->end > emax)
            emax = lt->end;
    }
    for (size_t i = 0; i < n && full; i++) {
        const gm_lifetime_t *lt = &ctx->lifetimes[i];
        buf[i] = (offline_buf_t){offline_lt_size(lt, o->align), lt->start, offline_lt_end(lt), 0,
                                 0};
        if (timed) {
            buf[i].t0 = lt->start_ns;
            buf[i].t1 = lt->end == GM_LIFETIME_OPEN ? tmax + 1 : lt->end_ns;
        } else {
            buf[i].t0 = lt->start;
            buf[i].t1 = lt->end == GM_LIFETIME_OPEN ? emax + 1 : lt->end;
        }
        if (buf[i].t1 < buf[i].t0)
            buf[i].t1 = buf[i].t0;
    }
    /* the capacity to fit: the param, else the trace's "capacity"
     * attribute (a placement instance's); attributes that do not parse are
     * ignored, as a hint */
    o->cap_used = o->capacity;
    if (o->cap_used == 0 && ctx->attrs != NULL && ctx->attrs[0] != '\0') {
        gm_jv_t *root = NULL;
        gm_error_t perr = {0};
        uint64_t cap;
        if (gm_json_parse(ctx->attrs, strlen(ctx->attrs), &root, &perr) == 0 &&
            gm_jv_u64(gm_jv_get(root, GM_ATTR_CAPACITY), &cap) == 0)
            o->cap_used = cap;
        gm_jv_free(root);
    }
    int rc;
    o->peak = offline_plan(ctx->lifetimes, buf, n, o->align, o->effort, o->search, o->early,
                           o->seed, o->cap_used, o->offset, &o->passes, &o->work, &o->lb,
                           &o->status, &rc);
    free(buf);
    if (rc)
        return gm_error_set(err, rc, "offline: out of memory while planning %zu allocations", n);
    /* the rounded sizes, for plan(): made once the planner's own arrays
     * are gone */
    o->size = malloc((n ? n : 1) * sizeof *o->size);
    if (o->size == NULL)
        return gm_error_set(err, GM_ENOMEM, "offline: out of memory for %zu allocations", n);
    for (size_t i = 0; i < n; i++)
        o->size[i] = offline_size(o, i);
    o->n = n;
    o->planned = 1;
    return 0;
}

static int offline_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL)
        return GM_EINVAL;
    if (!o->planned)
        return GM_ESTATE;
    if (req->id >= o->n || req->size != o->reqsize[req->id])
        return GM_EINVAL; /* not the trace that was planned */
    uint64_t size = o->size[req->id];
    if (o->arena_got == 0) {
        uint64_t addr, got;
        if (gm_device_malloc(p->dev, o->peak ? o->peak : o->align, o->align, &addr, &got) != 0)
            return GM_ALLOC_OOM;
        o->arena_addr = addr;
        o->arena_got = got;
    }
    uint64_t addr = o->arena_addr + o->offset[req->id];
    if (gm__idmap_insert(&o->live, addr, req->id) != 0)
        return GM_EINVAL; /* its place is taken: a live allocation the plan did not expect */
    o->allocated += size;
    out->addr = addr;
    out->size = size;
    return 0;
}

static int offline_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    (void)stream;
    offline_t *o = OFFLINE(p);
    uint64_t id;
    if (o == NULL || blk->addr == UINT64_MAX || !gm__idmap_get(&o->live, blk->addr, &id) ||
        o->size[id] != blk->size)
        return GM_EINVAL;
    gm__idmap_remove(&o->live, blk->addr, NULL);
    o->allocated -= blk->size;
    return 0;
}

static void offline_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL)
        return;
    out->allocated = o->allocated;
    /* The arena is fixed: the largest free gap is computed from the live
     * blocks only when something asks (the peak), so it is exact but not
     * cheap: sort the live blocks by address. */
    size_t n = gm__idmap_count(&o->live);
    if (o->arena_got == 0)
        return;
    offline_range_t *r = malloc((n ? n : 1) * sizeof *r);
    if (r == NULL)
        return;
    size_t k = 0;
    uint64_t addr, id;
    for (size_t pos = 0; gm__idmap_next(&o->live, &pos, &addr, &id);)
        r[k++] = (offline_range_t){addr, addr + o->size[id]};
    offline_range_sort(r, k);
    uint64_t cur = o->arena_addr, largest = 0;
    for (size_t i = 0; i < k; i++) {
        if (r[i].lo > cur && r[i].lo - cur > largest)
            largest = r[i].lo - cur;
        if (r[i].hi > cur)
            cur = r[i].hi;
    }
    uint64_t end = o->arena_addr + o->arena_got;
    if (end > cur && end - cur > largest)
        largest = end - cur;
    out->largest_free = largest;
    free(r);
}

static int offline_check(gm_policy_t *p, gm_check_t *ck)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL)
        return gm_check_fail(ck, "not an offline policy");
    size_t n = gm__idmap_count(&o->live);
    if (n > 0 && o->arena_got == 0)
        gm_check_fail(ck, "%zu live blocks but no arena", n);
    if (p->dev->reserved != o->arena_got)
        gm_check_fail(ck,
                      "the arena holds %" PRIu64 " bytes but the device's reserved is %" PRIu64,
                      o->arena_got, p->dev->reserved);
    if (o->arena_got != 0 && o->arena_got < o->peak)
        gm_check_fail(ck, "arena of %" PRIu64 " bytes below the plan's %" PRIu64, o->arena_got,
                      o->peak);
    offline_range_t *r = malloc((n ? n : 1) * sizeof *r);
    if (r == NULL)
        return ck->bad;
    size_t k = 0;
    uint64_t addr, id, sum = 0;
    for (size_t pos = 0; gm__idmap_next(&o->live, &pos, &addr, &id);) {
        if (id >= o->n) {
            gm_check_fail(ck, "live block at 0x%" PRIx64 " has unknown id %" PRIu64, addr, id);
            continue;
        }
        if (addr != o->arena_addr + o->offset[id])
            gm_check_fail(ck,
                          "allocation %" PRIu64 " at 0x%" PRIx64 ", planned at offset %" PRIu64, id,
                          addr, o->offset[id]);
        uint64_t size = o->size[id];
        if (o->offset[id] + size > o->arena_got)
            gm_check_fail(ck, "allocation %" PRIu64 " ends past the arena", id);
        sum += size;
        r[k++] = (offline_range_t){addr, addr + size};
    }
    offline_range_sort(r, k);
    for (size_t i = 1; i < k; i++)
        if (r[i].lo < r[i - 1].hi)
            gm_check_fail(ck, "live blocks at 0x%" PRIx64 " and 0x%" PRIx64 " overlap",
                          r[i - 1].lo, r[i].lo);
    free(r);
    if (sum != o->allocated)
        gm_check_fail(ck, "allocated bytes %" PRIu64 " differ from the live blocks' %" PRIu64,
                      o->allocated, sum);
    return ck->bad;
}

static void offline_empty_cache(gm_policy_t *p)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL || o->arena_got == 0 || gm__idmap_count(&o->live) != 0)
        return;
    gm_device_free(p->dev, o->arena_addr, o->arena_got);
    o->arena_got = 0;
}

static int offline_plan_info(gm_policy_t *p, gm_plan_info_t *out)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL || !o->planned)
        return GM_ESTATE;
    if (o->size == NULL) { /* the rounded sizes, made once asked for */
        o->size = malloc((o->n ? o->n : 1) * sizeof *o->size);
        if (o->size == NULL)
            return GM_ENOMEM;
        for (size_t i = 0; i < o->n; i++)
            o->size[i] = offline_size(o, i);
    }
    *out = (gm_plan_info_t){.status = o->status, .peak = o->peak, .lower_bound = o->lb,
                            .capacity = o->cap_used, .work = o->work, .n = o->n,
                            .offset = o->offset, .size = o->size};
    return 0;
}

static void offline_destroy(gm_policy_t *p)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL)
        return;
    gm__idmap_release(&o->live);
    free(o->offset);
    free(o->size);
    free(o->reqsize);
    free(o);
}

static const gm_param_spec_t offline_params[] = {
    {"align", GM_PARAM_SIZE, "512", "offset alignment and size unit (a power of two)", NULL},
    {"effort", GM_PARAM_INT, "100000000",
     "improvement budget in work units (placements and conflicts visited), not time: the plan "
     "is the same on every machine; 0 = greedy by size alone",
     NULL},
    {"seed", GM_PARAM_INT, "1", "seed of the local search's random moves", NULL},
    {"search", GM_PARAM_INT, "4000000000",
     "work budget of the exact search (branch and bound: the capacity first, then up from the "
     "proved bound, for traces of up to 1,024 allocations; beyond, half of it for the "
     "search over windows of time around the busiest instants; about 10^9 units a second), "
     "not time; 0 = none (nor with effort 0)",
     NULL},
    {"capacity", GM_PARAM_SIZE, "0",
     "the arena size to fit, tried first by the exact search; 0 = the trace's capacity "
     "attribute (a placement instance's), if any",
     NULL},
    {"early", GM_PARAM_INT, "16777216",
     "work budget of the exact search's quick try at the bound before the heuristics, for "
     "traces of up to 1,024 allocations the greedy orders leave above it (a perfect packing's "
     "bottom-left fill; else the search at the bound, with half of it); a plan at the bound "
     "ends the planning; 0 = none",
     NULL},
};

const gm_policy_ops_t gm__policy_offline = {
    .name = "offline",
    .help = "offline planner: every allocation at a fixed offset in one arena, planned from the "
            "whole trace (greedy by size, best fit, local search, then an exact search for small "
            "traces); the achievable bound",
    GM_POLICY_OPS(offline),
    .flags = GM_POLICY_NEEDS_LIFETIMES | GM_POLICY_LAZY_STATS, /* stats sorts the live set */
    .empty_cache = offline_empty_cache,
    .role = GM_ROLE_BOUND,
    .prepare = offline_prepare,
    .plan = offline_plan_info,
};
