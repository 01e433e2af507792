/*
 * replay/engine.c — one pass over a trace feeds any number of policies.
 *
 * Each chunk of events is processed in two passes:
 *
 *  1. The engine walks the chunk once, policy-independently: it validates
 *     each ALLOC/FREE, maps the allocation id to a slot (a small index
 *     recycled LIFO through a free list, so the largest slot is bounded by the
 *     peak number of live allocations), tracks requested bytes, and notes for
 *     each FREE the stream of the allocation it ends.
 *  2. The chunk then runs through each policy in turn (policy-major, so each
 *     policy's working set stays in cache and one clock read per chunk times
 *     it).  Per policy the engine keeps the live blocks by slot, allocated
 *     bytes, the reserved peak and the state at t* (of the events at which
 *     reserved is at its peak, the one with the most allocated bytes, the
 *     first on a tie), OOMs, and a downsampled timeline.
 *
 * Memory is bounded by the live set: slots, per-policy blocks and the id map
 * all scale with the peak live count, never with the trace length.
 *
 * Timeline: each point holds the maxima of requested/allocated/reserved over
 * a run of `bucket` events.  The bucket starts at 1 event; whenever the
 * points reach twice the target, neighbouring pairs are merged and the
 * bucket doubles, so any trace length ends with between target and
 * 2 × target points (fewer only for short traces), peaks preserved.
 *
 * Defragmentation (gm_replay_config_t.defrag_every / defrag_at): at those
 * points each run compacts, one mechanism for every policy: a new instance
 * of the same policy (same parameters, prepared again with the trace's
 * context but no starting layout) on a fresh device takes the run's live
 * allocations, largest requested size first (ties: lower id), as ordinary
 * requests (the pre-existing flag cleared).  The old state then frees its
 * blocks and empties its cache, so its device calls are counted, and is
 * destroyed.  Every simulated device hands out addresses from the same base,
 * so an address in the old state and one in the new are comparable offsets:
 * an allocation whose address changed was moved (its requested bytes
 * copied).  A compaction is modelled in place: the reserved peak sees the
 * old state up to the compaction's event and the new one after, never their
 * sum (gm_defrag_stats_t.copy_peak_reserved reports that sum's peak for an
 * out-of-place copy).  If the fresh state cannot hold the live set (device
 * capacity) the compaction is abandoned and counted as aborted.  To know the
 * live set at any event, pass 2 marks each run's freed slots dead and keeps
 * each slot's request (only when defragmentation is on: otherwise nothing
 * changes on the hot path).
 */
#include "gmsim/replay.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/bits.h"
#include "base/idmap.h"
#include "gmsim/advice.h"
#include "gmsim/attrs.h"
#include "store/store.h"

#include "replay/engine.h"
#include "base/vec.h"

static double engine_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void gm_replay_config_default(gm_replay_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    gm_device_config_default(&cfg->device);
    cfg->timeline_points = 2000;
    cfg->decode_ahead = 1;
    /* GM_DEBUG=1 checks every policy at the end, GM_DEBUG=2 after every event. */
    const char *debug = getenv("GM_DEBUG");
    cfg->check_level = debug ? atoi(debug) : 0;
}

int gm_replay_config_at_oom(gm_replay_config_t *cfg, const char *attrs)
{
    int64_t cap = attrs ? gm_attr_int(attrs, GM_ATTR_OOM_CAPACITY) : -1;
    if (cfg->device.capacity != 0 || cap <= 0)
        return 0;
    cfg->device.capacity = (uint64_t)cap;
    cfg->recorded_ooms = 1;
    return 1;
}

int gm_replay_create(const gm_replay_config_t *cfg, gm_replay_t **out, gm_error_t *err)
{
    gm_replay_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    if (cfg)
        r->cfg = *cfg;
    else
        gm_replay_config_default(&r->cfg);
    gm__idmap_init(&r->live);
    r->empty_cache_tag = -1;
    r->sync_tag = -1;
    r->oom_tag = -1;
    r->defrag_tag = -1;
    *out = r;
    return 0;
}

/* Copy a parameter set through the public API (strings are duplicated). */
static int engine_params_copy(gm_params_t *dst, const gm_params_t *src, gm_error_t *err)
{
    int rc = gm_params_init(dst, src->ops, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < src->ops->nparams; i++) {
        const gm_param_spec_t *spec = &src->ops->params[i];
        if (spec->type == GM_PARAM_STRING)
            rc = gm_params_set(dst, spec->name, src->values[i].s ? src->values[i].s : "", err);
        else
            dst->values[i] = src->values[i];
        if (rc) {
            gm_params_release(dst);
            return rc;
        }
    }
    dst->set = src->set;
    return 0;
}

/* A run's device, (re)initialized from the configuration, with hints on
 * for a policy that takes the trace's recorded segment addresses
 * (GM_POLICY_RECORDED_ADDRESSES; SEG_ALLOC places its segments). */
static void engine_device_init(const gm_replay_t *r, gm_device_t *dev,
                               const gm_policy_ops_t *ops)
{
    gm_device_release(dev);
    gm_device_init(dev, &r->cfg.device);
    dev->cfg.hints = (ops->flags & GM_POLICY_RECORDED_ADDRESSES) != 0;
}

int gm_replay_add(gm_replay_t *r, const gm_params_t *params, gm_error_t *err)
{
    if (r->started)
        return gm_error_set(err, GM_ESTATE, "policies must be added before the first event");
    engine_run_t **runs = realloc(r->runs, (r->nruns + 1) * sizeof *runs);
    if (runs == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    r->runs = runs;
    engine_run_t *run = calloc(1, sizeof *run);
    if (run == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    int rc = engine_params_copy(&run->params, params, err);
    if (rc) {
        free(run);
        return rc;
    }
    run->dev = &run->devs[0];
    engine_device_init(r, run->dev, params->ops);
    rc = gm_policy_create(params->ops, run->dev, run->params.values, &run->policy, err);
    if (rc) {
        gm_params_release(&run->params);
        free(run);
        return rc;
    }
    run->first_oom = -1;
    run->bucket = 1;
    if (r->cfg.timeline_points) {
        run->tl = malloc(2 * r->cfg.timeline_points * sizeof *run->tl);
        if (run->tl == NULL) {
            gm_policy_destroy(run->policy);
            gm_device_release(run->dev);
            gm_params_release(&run->params);
            free(run);
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        }
    }
    r->runs[r->nruns++] = run;
    return 0;
}

void gm_replay_set_empty_cache_tag(gm_replay_t *r, int64_t tag) { r->empty_cache_tag = tag; }
void gm_replay_set_sync_tag(gm_replay_t *r, int64_t tag) { r->sync_tag = tag; }
void gm_replay_set_oom_tag(gm_replay_t *r, int64_t tag) { r->oom_tag = tag; }

void gm_replay_set_defrag_tag(gm_replay_t *r, int64_t tag)
{
    if (!r->started)
        r->defrag_tag = tag;
}

int gm_replay_defrag_enabled(const gm_replay_t *r)
{
    return r->cfg.defrag_every != 0 || r->cfg.defrag_at != NULL || r->defrag_tag >= 0;
}

const gm_defrag_stats_t *gm_replay_defrag(const gm_replay_t *r, size_t i)
{
    return i < r->nruns ? &r->runs[i]->defrag : NULL;
}

/* Keep a copy of ctx (no layout: a fresh state starts cold) to prepare the
 * fresh states of compactions with.  GM_ENOMEM. */
static int engine_keep_ctx(gm_replay_t *r, const gm_trace_context_t *ctx)
{
    r->ctx = *ctx;
    r->ctx.layout = NULL;
    r->ctx.name = r->ctx.attrs = NULL;
    r->ctx.lifetimes = NULL;
    r->ctx.nlifetimes = 0;
    if (ctx->name && (r->ctx_name = strdup(ctx->name)) == NULL)
        return GM_ENOMEM;
    if (ctx->attrs && (r->ctx_attrs = strdup(ctx->attrs)) == NULL)
        return GM_ENOMEM;
    if (ctx->lifetimes) {
        size_t n = ctx->nlifetimes;
        r->ctx_lifetimes = malloc((n ? n : 1) * sizeof *r->ctx_lifetimes);
        if (r->ctx_lifetimes == NULL)
            return GM_ENOMEM;
        memcpy(r->ctx_lifetimes, ctx->lifetimes, n * sizeof *r->ctx_lifetimes);
        r->ctx.lifetimes = r->ctx_lifetimes;
        r->ctx.nlifetimes = n;
    }
    r->ctx.name = r->ctx_name;
    r->ctx.attrs = r->ctx_attrs;
    r->have_ctx = 1;
    return 0;
}

int gm_replay_needs_lifetimes(const gm_replay_t *r)
{
    for (size_t i = 0; i < r->nruns; i++)
        if (r->runs[i]->policy->ops->flags & GM_POLICY_NEEDS_LIFETIMES)
            return 1;
    return 0;
}

/* Whether params would start from ctx's recorded layout: a `start`
 * parameter (gm_policy_has_start) at "recorded", and a layout with
 * segments (the rule the policies with a start follow). */
static int engine_would_start_warm(const gm_params_t *params, const gm_trace_context_t *ctx)
{
    if (ctx->layout == NULL || ctx->layout->nsegments == 0 || !gm_policy_has_start(params->ops))
        return 0;
    for (size_t k = 0; k < params->ops->nparams; k++)
        if (strcmp(params->ops->params[k].name, "start") == 0)
            return params->values[k].e == 0; /* "recorded|empty" */
    return 0;
}

/*
 * Run `run` failed (code failed) to prepare warm on r's finite device.
 * If the same policy prepares warm on an unlimited device, the recorded
 * layout does not fit the capacity: the run is replaced by one that starts
 * from an empty allocator (its parameters with start=empty, prepared
 * again), and run->layout_unfit records the bytes the layout holds.  Every
 * question about a capacity then gets an answer (docs/cli.md, replay).
 * Otherwise failed is returned as it was, err untouched; GM_ENOMEM, or the
 * cold policy's refusal, leave run as it was.
 */
static int engine_start_cold(gm_replay_t *r, engine_run_t *run, const gm_trace_context_t *c,
                             int failed, gm_error_t *err)
{
    const gm_policy_ops_t *ops = run->policy->ops;
    gm_device_config_t unlimited = r->cfg.device;
    unlimited.capacity = 0;
    unlimited.hooks = NULL; /* a probe: no observer sees it */
    unlimited.hooks_ctx = NULL;
    gm_device_t probe_dev;
    gm_device_init(&probe_dev, &unlimited);
    gm_policy_t *probe = NULL;
    gm_error_t perr = {0};
    if (gm_policy_create(ops, &probe_dev, run->params.values, &probe, &perr) != 0)
        return failed;
    int fits_unlimited = gm_policy_prepare(probe, c, &perr) == 0;
    uint64_t layout = probe_dev.reserved;
    gm_policy_destroy(probe);
    if (!fits_unlimited)
        return failed;

    gm_params_t cold;
    int rc = engine_params_copy(&cold, &run->params, err);
    if (rc == 0 && (rc = gm_params_set(&cold, "start", "empty", err)) != 0)
        gm_params_release(&cold);
    if (rc)
        return rc;
    gm_device_t *dev = &run->devs[run->dev == &run->devs[0] ? 1 : 0];
    engine_device_init(r, dev, ops);
    gm_policy_t *np = NULL;
    gm_trace_context_t cc = *c;
    cc.params_set = cold.set;
    rc = gm_policy_create(ops, dev, cold.values, &np, err);
    if (rc == 0 && (rc = gm_policy_prepare(np, &cc, err)) != 0)
        gm_policy_destroy(np);
    if (rc) {
        gm_params_release(&cold);
        return rc;
    }
    gm_policy_destroy(run->policy);
    run->policy = np;
    run->dev = dev;
    run->cold = cold;
    run->warm = 0;
    run->layout_unfit = layout;
    return 0;
}

int gm_replay_prepare(gm_replay_t *r, const gm_trace_context_t *ctx, gm_error_t *err)
{
    if (r->started)
        return gm_error_set(err, GM_ESTATE, "prepare must come before the first event");
    if (gm_replay_defrag_enabled(r) && !r->have_ctx && engine_keep_ctx(r, ctx) != 0)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->nruns; i++) {
        engine_run_t *run = r->runs[i];
        gm_trace_context_t c = *ctx;
        c.params_set = run->params.set;
        int warm = engine_would_start_warm(&run->params, ctx);
        int rc = gm_policy_prepare(run->policy, &c, err);
        if (rc && warm && r->cfg.device.capacity != 0)
            rc = engine_start_cold(r, run, &c, rc, err);
        else
            run->warm = warm && rc == 0;
        if (rc) {
            gm_error_prefix(err, "policy %s", run->policy->ops->name);
            return rc;
        }
        run->prepared = 1;
    }
    return 0;
}

static int engine_scratch(gm_replay_t *r, size_t n)
{
    /* three arrays of one capacity: each grows from a copy of it */
    size_t c1 = r->scratch_cap, c2 = c1, c3 = c1;
    if (GM_VEC_RESERVE(r->ev_slot, c1, n, 1024) || GM_VEC_RESERVE(r->ev_requested, c2, n, 1024) ||
        GM_VEC_RESERVE(r->ev_stream, c3, n, 1024))
        return GM_ENOMEM;
    r->scratch_cap = c1;
    return 0;
}

/* Pass 1: validate, assign slots, track requested bytes; per event, its
 * slot, the requested bytes after it and a FREE's stream into out_slot,
 * out_req, out_stream (n each).  The events are r->events onwards. */
int engine_pass1(gm_replay_t *r, const gm_event_t *ev, size_t n, uint32_t *out_slot,
                        uint64_t *out_req, uint32_t *out_stream, gm_error_t *err)
{
    for (size_t i = 0; i < n; i++) {
        const gm_event_t *e = &ev[i];
        uint64_t index = r->events + i;
        uint64_t slot64;
        uint32_t slot = ENGINE_NO_SLOT;
        switch (e->op) {
        case GM_OP_ALLOC:
            if (e->size == 0 || e->size > GM_SIZE_LIMIT)
                return gm_error_set(err, GM_EFORMAT, "event %llu: invalid size %llu",
                                    (unsigned long long)index, (unsigned long long)e->size);
            if (e->size > GM_LIVE_LIMIT - r->requested)
                return gm_error_set(err, GM_EFORMAT,
                                    "event %llu: live requested bytes would pass the 2^62 limit",
                                    (unsigned long long)index);
            if (r->nfree) {
                slot = r->free_slots[--r->nfree];
            } else {
                if (r->nslots == ENGINE_NO_SLOT - 1)
                    return gm_error_set(err, GM_ENOMEM, "event %llu: too many live allocations",
                                        (unsigned long long)index);
                if (GM_VEC_RESERVE(r->slots, r->slot_cap, r->nslots + 1, 256))
                    return gm_error_set(err, GM_ENOMEM, "out of memory");
                slot = r->nslots++;
            }
            switch (gm__idmap_insert(&r->live, e->id, slot)) {
            case 0:
                break;
            case 1:
                /* The slot leaks, harmlessly: the replay has failed. */
                return gm_error_set(err, GM_EFORMAT, "event %llu: allocation id %llu is already live",
                                    (unsigned long long)index, (unsigned long long)e->id);
            case GM_EINVAL:
                return gm_error_set(err, GM_EFORMAT, "event %llu: invalid allocation id %llu",
                                    (unsigned long long)index, (unsigned long long)e->id);
            default:
                return gm_error_set(err, GM_ENOMEM, "out of memory");
            }
            r->slots[slot] = (engine_slot_t){e->size, e->stream};
            r->requested += e->size;
            if (r->requested > r->peak_requested)
                r->peak_requested = r->requested;
            break;
        case GM_OP_FREE:
            if (!gm__idmap_remove(&r->live, e->id, &slot64))
                return gm_error_set(err, GM_EFORMAT, "event %llu: free of id %llu that is not live",
                                    (unsigned long long)index, (unsigned long long)e->id);
            slot = (uint32_t)slot64;
            out_stream[i] = r->slots[slot].stream;
            r->requested -= r->slots[slot].size;
            if (GM_VEC_RESERVE(r->free_slots, r->free_cap, r->nfree + 1, 256))
                return gm_error_set(err, GM_ENOMEM, "out of memory");
            r->free_slots[r->nfree++] = slot;
            break;
        default:
            if (e->op >= GM_OP_COUNT)
                return gm_error_set(err, GM_EFORMAT, "event %llu: unknown op %u",
                                    (unsigned long long)index, e->op);
            break;
        }
        out_slot[i] = slot;
        out_req[i] = r->requested;
    }
    return 0;
}

static void engine_timeline_push(const gm_replay_t *r, engine_run_t *run)
{
    size_t target = r->cfg.timeline_points;
    run->tl[run->ntl++] = run->open;
    run->inbucket = 0;
    if (run->ntl < 2 * target)
        return;
    /* Merge neighbouring pairs; the bucket doubles. */
    for (size_t k = 0; k < target; k++) {
        gm_timeline_point_t a = run->tl[2 * k], b = run->tl[2 * k + 1];
        gm_timeline_point_t *m = &run->tl[k];
        *m = b;
        if (a.requested > m->requested)
            m->requested = a.requested;
        if (a.allocated > m->allocated)
            m->allocated = a.allocated;
        if (a.reserved > m->reserved)
            m->reserved = a.reserved;
    }
    run->ntl = target;
    run->bucket *= 2;
}

static inline void engine_timeline_add(const gm_replay_t *r, engine_run_t *run, uint64_t index,
                                       uint64_t ts, uint64_t requested)
{
    gm_timeline_point_t *o = &run->open;
    if (run->inbucket == 0) {
        o->requested = requested;
        o->allocated = run->allocated;
        o->reserved = run->dev->reserved;
    } else {
        if (requested > o->requested)
            o->requested = requested;
        if (run->allocated > o->allocated)
            o->allocated = run->allocated;
        if (run->dev->reserved > o->reserved)
            o->reserved = run->dev->reserved;
    }
    o->event = index;
    o->ts_ns = ts;
    if (++run->inbucket == run->bucket)
        engine_timeline_push(r, run);
}

static int engine_check(engine_run_t *run, uint64_t index, gm_error_t *err)
{
    char why[256] = "";
    int bad = gm_policy_check(run->policy, why, sizeof why);
    if (bad)
        return gm_error_set(err, GM_ECORRUPT, "policy %s: %d invariant violation%s after event %llu: %s",
                            run->policy->ops->name, bad, bad == 1 ? "" : "s",
                            (unsigned long long)index, why);
    return 0;
}

/* Note the state at t_L, the load peak, and at t* (docs/metrics.md):
 * among the events at which reserved equals its peak, the one with the
 * most allocated bytes, the first of those on a tie.  A new reserved peak
 * at event i, or the peak again with more allocated than at the t* so
 * far, makes i the t*. */
static inline void engine_peak(engine_run_t *run, uint64_t requested)
{
    /* t_L (docs/metrics.md): the load peak with the most reserved, then
     * the most allocated, the first of those on a tie */
    if (requested >= run->load_requested &&
        (requested > run->load_requested || run->dev->reserved > run->load_reserved ||
         (run->dev->reserved == run->load_reserved && run->allocated > run->load_allocated))) {
        run->load_requested = requested;
        run->load_served = requested - run->failed_live;
        run->load_reserved = run->dev->reserved;
        run->load_allocated = run->allocated;
    }
    if (run->dev->reserved > run->peak_reserved ||
        (run->dev->reserved == run->peak_reserved && run->allocated > run->allocated_at_peak)) {
        run->peak_reserved = run->dev->reserved;
        run->allocated_at_peak = run->allocated;
        if (run->policy->ops->flags & GM_POLICY_LAZY_STATS) {
            run->peak_pending = 1; /* engine_peak_settle, before the state changes */
            return;
        }
        gm_policy_stats_t st;
        gm_policy_stats(run->policy, &st);
        run->largest_free_at_peak = st.largest_free;
    }
}

/* A policy with GM_POLICY_LAZY_STATS is asked for its largest free block
 * at t* only before the next FREE or MARK (an ALLOC, by that flag's
 * contract, either fails and changes nothing or makes a new t*): a run of
 * ALLOCs at the peak costs one stats call, not one each. */
static inline void engine_peak_settle(engine_run_t *run)
{
    if (run->peak_pending) {
        gm_policy_stats_t st;
        gm_policy_stats(run->policy, &st);
        run->largest_free_at_peak = st.largest_free;
        run->peak_pending = 0;
    }
}

typedef struct engine_live {
    uint64_t size, id;
    uint32_t slot;
} engine_live_t;

/* Largest first, then lower id: the order a compaction re-places in. */
static int engine_live_cmp(const void *a, const void *b)
{
    const engine_live_t *x = a, *y = b;
    int c = gm__cmp_u64(y->size, x->size);
    return c ? c : gm__cmp_u64(x->id, y->id);
}

/*
 * Compact run at event `index` (see the file header): its live allocations
 * into a fresh state of its policy.  0 (also when the fresh state cannot
 * hold them: the compaction is then counted as aborted), or an error that
 * fails the replay.
 */
static int engine_defrag(const gm_replay_t *r, engine_run_t *run, uint64_t index, gm_error_t *err)
{
    const gm_policy_ops_t *ops = run->policy->ops;
    gm_block_t *blocks = run->blocks;
    size_t nlive = 0;
    for (uint32_t s = 0; s < run->ninit; s++)
        nlive += blocks[s].addr != ENGINE_DEAD && blocks[s].addr != ENGINE_NO_ADDR;
    engine_live_t *live = malloc((nlive ? nlive : 1) * sizeof *live);
    gm_block_t *nb = malloc((nlive ? nlive : 1) * sizeof *nb);
    if (live == NULL || nb == NULL) {
        free(live);
        free(nb);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (uint32_t s = 0; s < run->ninit; s++)
        if (blocks[s].addr != ENGINE_DEAD && blocks[s].addr != ENGINE_NO_ADDR)
            live[k++] = (engine_live_t){run->reqs[s].size, run->reqs[s].id, s};
    qsort(live, nlive, sizeof *live, engine_live_cmp);

    gm_device_t *old = run->dev, *fresh = old == &run->devs[0] ? &run->devs[1] : &run->devs[0];
    engine_device_init(r, fresh, ops);
    gm_policy_t *np = NULL;
    int rc = gm_policy_create(ops, fresh, run->params.values, &np, err);
    if (rc == 0 && r->have_ctx) {
        gm_trace_context_t c = r->ctx;
        c.params_set = run->params.set;
        rc = gm_policy_prepare(np, &c, err);
    }
    int aborted = 0;
    for (size_t j = 0; rc == 0 && j < nlive; j++) {
        gm_request_t req = run->reqs[live[j].slot];
        req.flags &= ~(uint32_t)GM_EVENT_PREEXISTING;
        rc = gm_policy_alloc(np, &req, &nb[j]);
        if (rc == GM_ALLOC_OOM) {
            aborted = 1;
            rc = 0;
            break;
        }
        if (rc < 0)
            gm_error_set(err, rc, "%s", gm_strerror(rc));
    }
    if (rc != 0 || aborted) {
        gm_policy_destroy(np);
        free(live);
        free(nb);
        if (rc) {
            gm_error_prefix(err, "policy %s: compaction at event %llu", ops->name,
                            (unsigned long long)index);
            return rc;
        }
        run->defrag.aborted++;
        return 0;
    }

    /* The old state lets go of everything: its device calls are counted. */
    gm_defrag_stats_t *d = &run->defrag;
    uint64_t before = old->reserved, allocated = 0;
    for (size_t j = 0; j < nlive; j++) {
        uint32_t s = live[j].slot;
        if (gm_policy_free(run->policy, &blocks[s], run->reqs[s].stream) != 0) {
            gm_policy_destroy(np);
            free(live);
            free(nb);
            return gm_error_set(err, GM_ECORRUPT,
                                "policy %s refused to free a live block while compacting at "
                                "event %llu",
                                ops->name, (unsigned long long)index);
        }
        if (nb[j].addr != blocks[s].addr) {
            d->blocks_moved++;
            d->bytes_moved += live[j].size;
        }
        blocks[s] = nb[j];
        allocated += nb[j].size;
    }
    gm_policy_empty_cache(run->policy);
    run->dev_mallocs += old->mallocs;
    run->dev_frees += old->frees;
    run->dev_time_ns += old->time_ns;
    gm_policy_destroy(run->policy);
    run->policy = np;
    run->dev = fresh;
    run->allocated = allocated;
    if (allocated > run->peak_allocated)
        run->peak_allocated = allocated;

    uint64_t after = fresh->reserved;
    d->compactions++;
    d->reserved_before += before;
    d->reserved_after += after;
    if (before > after && before - after > d->max_reclaimed)
        d->max_reclaimed = before - after;
    if (before + after > d->copy_peak_reserved)
        d->copy_peak_reserved = before + after;
    free(live);
    free(nb);
    return 0;
}

/*
 * A recorded OOM (gm_replay_config_t.recorded_ooms): the request the
 * recorded allocator could not serve (the MARK's size and stream) is asked
 * of the run's policy again.  PyTorch's caching allocator, before it gave
 * up, released its cached blocks (release_available_cached_blocks, then
 * release_cached_blocks) and retried; the policy does the same on its
 * device.  When the policy serves it after all, the block goes back at
 * once: the application never got it.  A MARK without a request (an older
 * store, or a trace that did not record it), a policy that plans from
 * lifetimes and an unlimited device (where the request would not have
 * failed: the unlimited replays that size a device, say) are left alone.  0, or the policy's error naming the event.
 */
static int engine_oom_ask(engine_run_t *run, const gm_event_t *e, uint64_t at, gm_error_t *err)
{
    gm_policy_t *p = run->policy;
    const gm_policy_ops_t *ops = p->ops;
    if (e->size == 0 || e->size > GM_SIZE_LIMIT || (ops->flags & GM_POLICY_NEEDS_LIFETIMES) ||
        run->dev->cfg.capacity == 0)
        return 0;
    gm_request_t req = {e->size, UINT64_MAX, e->stream, 0};
    gm_block_t b;
    int rc = gm_policy_alloc(p, &req, &b);
    run->oom_asks++;
    if (rc == GM_ALLOC_OOM) {
        run->oom_asks_failed++;
        return 0;
    }
    if (rc == 0)
        rc = gm_policy_free(p, &b, e->stream);
    if (rc)
        return gm_error_set(err, rc, "policy %s failed at the recorded OOM, event %llu (%s)",
                            ops->name, (unsigned long long)at, gm_strerror(rc));
    return 0;
}

/* Pass 2: the block through one policy.  It touches run and its policy,
 * and of r only what stays constant while events are fed (the
 * configuration, tags and context): with policy threads, each run's pass 2
 * is called from one thread only, several runs at once. */
int engine_pass2(const gm_replay_t *r, engine_run_t *run, const engine_view_t *v,
                        gm_error_t *err)
{
    const gm_event_t *ev = v->ev;
    size_t n = v->n;
    uint64_t base = v->base;
    if (GM_VEC_RESERVE(run->blocks, run->blocks_cap, v->nslots ? v->nslots : 1, 256))
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    int defrag = r->defrag;
    if (defrag) {
        if (GM_VEC_RESERVE(run->reqs, run->reqs_cap, v->nslots ? v->nslots : 1, 256))
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        for (; run->ninit < v->nslots; run->ninit++)
            run->blocks[run->ninit].addr = ENGINE_DEAD;
    }
    gm_policy_t *p = run->policy;
    const gm_policy_ops_t *ops = p->ops;
    gm_block_t *blocks = run->blocks;
    int check_each = r->cfg.check_level >= 2;
    int timeline = r->cfg.timeline_points != 0;

    double t0 = engine_now_ns();
    for (size_t i = 0; i < n; i++) {
        const gm_event_t *e = &ev[i];
        uint32_t slot = v->slot[i];
        if (v->position)
            *v->position = base + i;
        int rc;
        if (e->op == GM_OP_FREE || e->op == GM_OP_MARK)
            engine_peak_settle(run); /* the events that may change the state but an ALLOC */
        switch (e->op) {
        case GM_OP_ALLOC: {
            gm_request_t req = {e->size, e->id, e->stream, e->flags};
            if (defrag)
                run->reqs[slot] = req;
            rc = gm_policy_alloc(p, &req, &blocks[slot]);
            if (run->dev->hint_size != 0)
                gm_device_hint(run->dev, 0, 0); /* it was this request's or none's */
            if (rc == 0) {
                run->allocated += blocks[slot].size;
                if (run->allocated > run->peak_allocated)
                    run->peak_allocated = run->allocated;
            } else if (rc == GM_ALLOC_OOM) {
                blocks[slot].addr = ENGINE_NO_ADDR;
                blocks[slot].size = e->size; /* the request, to undo at its free */
                run->failed_live += e->size;
                if (run->ooms++ == 0)
                    run->first_oom = (int64_t)(base + i);
            } else {
                return gm_error_set(err, rc, "policy %s failed at event %llu (%s)", ops->name,
                                    (unsigned long long)(base + i), gm_strerror(rc));
            }
            break;
        }
        case GM_OP_FREE:
            if (blocks[slot].addr == ENGINE_NO_ADDR) {
                run->failed_live -= blocks[slot].size;
                break;
            }
            rc = gm_policy_free(p, &blocks[slot], v->stream[i]);
            if (rc)
                return gm_error_set(err, rc, "policy %s refused the free at event %llu (%s)",
                                    ops->name, (unsigned long long)(base + i),
                                    gm_strerror(rc));
            run->allocated -= blocks[slot].size;
            if (defrag)
                blocks[slot].addr = ENGINE_DEAD;
            break;
        case GM_OP_MARK:
            if ((int64_t)e->tag == r->empty_cache_tag)
                gm_policy_empty_cache(p);
            else if ((int64_t)e->tag == r->sync_tag)
                gm_policy_sync(p);
            else if ((int64_t)e->tag == r->oom_tag && r->cfg.recorded_ooms &&
                     (rc = engine_oom_ask(run, e, base + i, err)) != 0)
                return rc;
            break;
        case GM_OP_SEG_ALLOC:
            /* an observation, never a request: the address CUDA gave the
             * segment the next request made, for the device to place it
             * alike (gm_device_hint) */
            if (e->addr != 0)
                gm_device_hint(run->dev, e->addr, e->size);
            break;
        default:
            break; /* the other SEG_* are observations, never requests */
        }
        engine_peak(run, v->requested[i]);
        if (timeline)
            engine_timeline_add(r, run, base + i, e->ts_ns, v->requested[i]);
        if (check_each && (rc = engine_check(run, base + i, err)) != 0)
            return rc;
        if (defrag && ((r->cfg.defrag_every && (base + i + 1) % r->cfg.defrag_every == 0) ||
                       (e->op == GM_OP_MARK && (int64_t)e->tag == r->defrag_tag))) {
            engine_peak_settle(run);
            if ((rc = engine_defrag(r, run, base + i, err)) != 0)
                return rc;
            p = run->policy;
            engine_peak(run, v->requested[i]);
            if (check_each && (rc = engine_check(run, base + i, err)) != 0)
                return rc;
        }
    }
    run->ns += engine_now_ns() - t0;
    return 0;
}

/* Before the first event: every planner prepared; compactions fixed.
 * GM_ESTATE (the replay can still be prepared and fed). */
int engine_start(gm_replay_t *r, gm_error_t *err)
{
    if (!r->started) {
        for (size_t k = 0; k < r->nruns; k++) {
            const gm_policy_ops_t *ops = r->runs[k]->policy->ops;
            if ((ops->flags & GM_POLICY_NEEDS_LIFETIMES) && !r->runs[k]->prepared)
                return gm_error_set(err, GM_ESTATE,
                                    "policy %s needs the whole trace: replay it from a store",
                                    ops->name);
        }
        r->defrag = gm_replay_defrag_enabled(r);
    }
    r->started = 1;
    return 0;
}

int gm_replay_feed(gm_replay_t *r, const gm_event_t *events, size_t n, gm_error_t *err)
{
    if (r->finished || r->failed)
        return gm_error_set(err, GM_ESTATE, "replay already %s", r->finished ? "finished" : "failed");
    int rc = engine_start(r, err);
    if (rc)
        return rc;
    /* Several runs take the events a block at a time, each block through
     * every run while it is in the core's cache, rather than each run
     * through the whole chunk (the same result: feeding is incremental). */
    size_t block = r->nruns > 1 ? ENGINE_BLOCK : n;
    rc = engine_scratch(r, n < block ? n : block);
    if (rc)
        return gm_error_set(err, rc, "out of memory");
    for (size_t off = 0; off < n; off += block) {
        size_t m = n - off < block ? n - off : block;
        rc = engine_pass1(r, events + off, m, r->ev_slot, r->ev_requested, r->ev_stream, err);
        engine_view_t v = {events + off, m,           r->events,     r->nslots,
                           r->ev_slot,   r->ev_requested, r->ev_stream, &r->position};
        for (size_t k = 0; rc == 0 && k < r->nruns; k++)
            rc = engine_pass2(r, r->runs[k], &v, err);
        if (rc) {
            r->failed = 1;
            return rc;
        }
        r->events += m;
    }
    return 0;
}

static double engine_ratio(uint64_t num, uint64_t den, double if_zero)
{
    return den ? (double)num / (double)den : if_zero;
}

int gm_replay_finish(gm_replay_t *r, gm_error_t *err)
{
    if (r->failed)
        return gm_error_set(err, GM_ESTATE, "replay failed earlier");
    if (r->finished)
        return 0;
    for (size_t k = 0; k < r->nruns; k++) {
        engine_run_t *run = r->runs[k];
        if (r->cfg.check_level >= 1) {
            int rc = engine_check(run, r->events ? r->events - 1 : 0, err);
            if (rc)
                return rc;
        }
        engine_peak_settle(run);
        if (run->tl && run->inbucket)
            engine_timeline_push(r, run);
        gm_metrics_t *m = &run->m;
        m->peak_requested = r->peak_requested;
        m->peak_allocated = run->peak_allocated;
        m->peak_reserved = run->peak_reserved;
        m->utilization = engine_ratio(run->peak_allocated, run->peak_reserved, 1.0);
        m->efficiency = engine_ratio(r->peak_requested, run->peak_reserved, 1.0);
        m->overhead = r->peak_requested
                          ? (double)run->peak_reserved / (double)r->peak_requested - 1.0
                          : 0.0;
        /* the bytes above the floor, split at t_L: rounding, and what is
         * reserved beyond the allocated bytes there (docs/metrics.md) */
        uint64_t alloc_l = run->load_allocated;
        m->rounding_waste = alloc_l > run->load_served ? alloc_l - run->load_served : 0;
        m->reserved_at_load_peak = run->load_reserved;
        m->largest_free_at_peak = run->largest_free_at_peak;
        m->internal_frag = engine_ratio(m->rounding_waste, run->peak_reserved, 0.0);
        m->external_frag = engine_ratio(
            run->peak_reserved > alloc_l ? run->peak_reserved - alloc_l : 0, run->peak_reserved,
            0.0);
        m->device_mallocs = run->dev_mallocs + run->dev->mallocs;
        m->device_frees = run->dev_frees + run->dev->frees;
        m->device_time_ns = (uint64_t)(run->dev_time_ns + run->dev->time_ns + 0.5);
        m->ooms = run->ooms;
        m->first_oom_event = run->first_oom;
        m->events = r->events;
        m->sim_ns_per_event = r->events ? run->ns / (double)r->events : 0.0;
    }
    r->finished = 1;
    return 0;
}

size_t gm_replay_count(const gm_replay_t *r) { return r->nruns; }

const gm_params_t *gm_replay_params(const gm_replay_t *r, size_t i)
{
    return i < r->nruns ? &r->runs[i]->params : NULL;
}

const gm_metrics_t *gm_replay_metrics(const gm_replay_t *r, size_t i)
{
    return i < r->nruns && r->finished ? &r->runs[i]->m : NULL;
}

const gm_timeline_point_t *gm_replay_timeline(const gm_replay_t *r, size_t i, size_t *n)
{
    if (i >= r->nruns) {
        *n = 0;
        return NULL;
    }
    *n = r->runs[i]->ntl;
    return r->runs[i]->tl;
}

int gm_replay_started_warm(const gm_replay_t *r, size_t i, uint64_t *layout_unfit)
{
    if (layout_unfit)
        *layout_unfit = i < r->nruns ? r->runs[i]->layout_unfit : 0;
    return i < r->nruns && r->runs[i]->warm;
}

uint64_t gm_replay_recorded_ooms(const gm_replay_t *r, size_t i, uint64_t *failed)
{
    if (failed)
        *failed = i < r->nruns ? r->runs[i]->oom_asks_failed : 0;
    return i < r->nruns ? r->runs[i]->oom_asks : 0;
}

uint64_t gm_replay_load(const gm_replay_t *r) { return r->peak_requested; }
uint64_t gm_replay_events(const gm_replay_t *r) { return r->events; }
uint64_t gm_replay_position(const gm_replay_t *r) { return r->position; }

size_t gm_replay_live(const gm_replay_t *r, size_t i,
                      void (*fn)(void *ctx, uint64_t id, const gm_block_t *blk), void *ctx)
{
    if (i >= r->nruns || r->runs[i]->blocks == NULL)
        return 0;
    size_t pos = 0, n = 0;
    uint64_t id, slot;
    while (gm__idmap_next(&r->live, &pos, &id, &slot)) {
        gm_block_t b = r->runs[i]->blocks[slot];
        if (b.addr == ENGINE_NO_ADDR)
            b.addr = UINT64_MAX;
        fn(ctx, id, &b);
        n++;
    }
    return n;
}

int gm_replay_block(const gm_replay_t *r, size_t i, uint64_t id, gm_block_t *blk)
{
    uint64_t slot;
    if (i >= r->nruns || r->runs[i]->blocks == NULL || !gm__idmap_get(&r->live, id, &slot))
        return 0;
    *blk = r->runs[i]->blocks[slot];
    if (blk->addr == ENGINE_NO_ADDR || blk->addr == ENGINE_DEAD)
        blk->addr = UINT64_MAX;
    return 1;
}

gm_policy_t *gm_replay_policy(gm_replay_t *r, size_t i)
{
    return i < r->nruns ? r->runs[i]->policy : NULL;
}

void gm_replay_destroy(gm_replay_t *r)
{
    if (r == NULL)
        return;
    for (size_t k = 0; k < r->nruns; k++) {
        engine_run_t *run = r->runs[k];
        gm_policy_destroy(run->policy);
        gm_device_release(&run->devs[0]);
        gm_device_release(&run->devs[1]);
        gm_params_release(&run->params);
        if (run->layout_unfit)
            gm_params_release(&run->cold);
        free(run->blocks);
        free(run->reqs);
        free(run->tl);
        free(run);
    }
    free(r->ctx_name);
    free(r->ctx_attrs);
    free(r->ctx_lifetimes);
    free(r->runs);
    gm__idmap_release(&r->live);
    free(r->free_slots);
    free(r->slots);
    free(r->ev_slot);
    free(r->ev_requested);
    free(r->ev_stream);
    free(r);
}
