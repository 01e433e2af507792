/*
 * tests/test_defrag.c — defragmentation in the replay engine
 * (gm_replay_config_t.defrag_every / defrag_at, gm_replay_defrag): a small
 * case whose figures are known, every registered policy compacted with its
 * invariants checked after every event, compactions at named marks, and
 * results identical to a plain replay when no compaction happens.
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MiB (UINT64_C(1) << 20)

static gm_replay_t *df_replay(const gm_replay_config_t *cfg, const char *policy,
                              const char *const *kv)
{
    gm_replay_t *r;
    gm_params_t p;
    gm_error_t err = {0};
    cr_assert_eq(gm_replay_create(cfg, &r, &err), 0);
    const gm_policy_ops_t *ops = gm_policy_find(policy);
    cr_assert_not_null(ops, "no policy %s", policy);
    cr_assert_eq(gm_params_init(&p, ops, &err), 0);
    for (; kv && kv[0]; kv += 2)
        cr_assert_eq(gm_params_set(&p, kv[0], kv[1], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
    gm_params_release(&p);
    return r;
}

/* Two 40 MiB allocations in two 64 MiB tlsf arenas; the first is freed;
 * a compaction at the mark puts the survivor into one arena at the base. */
Test(defrag, known_figures_on_tlsf)
{
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.check_level = 2;
    gm_replay_t *r = df_replay(&cfg, "tlsf", NULL);
    gm_replay_set_defrag_tag(r, 0);
    cr_assert(gm_replay_defrag_enabled(r));
    gm_event_t ev[] = {
        {.op = GM_OP_ALLOC, .id = 0, .size = 40 * MiB},
        {.op = GM_OP_ALLOC, .id = 1, .size = 40 * MiB},
        {.op = GM_OP_FREE, .id = 0},
        {.op = GM_OP_MARK, .tag = 0},
        {.op = GM_OP_ALLOC, .id = 2, .size = 10 * MiB},
        {.op = GM_OP_FREE, .id = 1},
        {.op = GM_OP_FREE, .id = 2},
    };
    gm_error_t err = {0};
    cr_assert_eq(gm_replay_feed(r, ev, sizeof ev / sizeof ev[0], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_finish(r, &err), 0, "%s", err.msg);
    const gm_defrag_stats_t *d = gm_replay_defrag(r, 0);
    const gm_metrics_t *m = gm_replay_metrics(r, 0);
    cr_expect_eq(d->compactions, 1);
    cr_expect_eq(d->aborted, 0);
    cr_expect_eq(d->blocks_moved, 1);
    cr_expect_eq(d->bytes_moved, 40 * MiB);
    cr_expect_eq(d->reserved_before, 128 * MiB);
    cr_expect_eq(d->reserved_after, 64 * MiB);
    cr_expect_eq(d->max_reclaimed, 64 * MiB);
    cr_expect_eq(d->copy_peak_reserved, 192 * MiB);
    /* in place: the peak is the old state's, never the sum */
    cr_expect_eq(m->peak_reserved, 128 * MiB);
    /* the 10 MiB request after the compaction fits in the one arena */
    cr_expect_eq(m->device_mallocs, 2 + 1);
    cr_expect_eq(m->device_frees, 2, "the old state's two arenas go back");
    gm_replay_destroy(r);
}

static const char *df_store(uint64_t events)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s", gt_tmpfile("defrag.db"));
    gm_store_t *s;
    gm_writer_t *w;
    gm_error_t err = {0};
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = events;
    wc.seed = 21;
    wc.live_max = UINT64_C(1) << 30;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_begin(s, "wl", 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_workload_write(&wc, w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_store_close(s);
    return path;
}

static const char *const *df_quick(const gm_policy_ops_t *ops);

static gm_replay_t *df_trace(const char *path, const gm_replay_config_t *cfg, const char *policy)
{
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_replay_t *r = df_replay(cfg, policy, df_quick(gm_policy_find(policy)));
    cr_assert_eq(gm_replay_trace(r, s, "wl", &err), 0, "%s: %s", policy, err.msg);
    gm_store_close(s);
    return r;
}

/* A planner re-plans for each fresh state: plan with the greedy alone here
 * (effort 0) to keep the test fast; the plan's quality is test_offline's. */
static const char *const *df_quick(const gm_policy_ops_t *ops)
{
    static const char *const quick[] = {"effort", "0", NULL};
    if (ops->flags & GM_POLICY_NEEDS_LIFETIMES)
        for (size_t k = 0; k < ops->nparams; k++)
            if (strcmp(ops->params[k].name, "effort") == 0)
                return quick;
    return NULL;
}

/* Every policy, compacted every `every` events, its check() run right after
 * each compaction (and at the end), from events in memory. */
Test(defrag, every_policy_compacts_with_its_invariants_kept)
{
    const uint64_t events = 12000, every = 2500;
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = events;
    wc.seed = 21;
    wc.live_max = UINT64_C(1) << 30;
    gm_workload_t *wl;
    gm_error_t err = {0};
    cr_assert_eq(gm_workload_create(&wc, &wl, &err), 0, "%s", err.msg);
    gm_event_t *ev = malloc(events * sizeof *ev);
    size_t n = 0;
    for (size_t k; (k = gm_workload_next(wl, ev + n, events - n)) > 0;)
        n += k;
    gm_workload_destroy(wl);
    size_t na = 0;
    for (size_t i = 0; i < n; i++)
        na += ev[i].op == GM_OP_ALLOC;
    gm_lifetime_t *lt = calloc(na, sizeof *lt);
    for (size_t i = 0; i < n; i++)
        if (ev[i].op == GM_OP_ALLOC)
            lt[ev[i].id] = (gm_lifetime_t){ev[i].size, i, GM_LIFETIME_OPEN, ev[i].ts_ns, 0};
        else if (ev[i].op == GM_OP_FREE) {
            lt[ev[i].id].end = i;
            lt[ev[i].id].end_ns = ev[i].ts_ns;
        }
    for (size_t p = 0; p < gm_policy_count(); p++) {
        const gm_policy_ops_t *ops = gm_policy_at(p);
        gm_replay_config_t cfg;
        gm_replay_config_default(&cfg);
        cfg.check_level = 1;
        cfg.defrag_every = every;
        gm_replay_t *r = df_replay(&cfg, ops->name, df_quick(ops));
        gm_trace_context_t ctx = {.name = "wl", .lifetimes = lt, .nlifetimes = na, .events = n};
        cr_assert_eq(gm_replay_prepare(r, &ctx, &err), 0, "%s: %s", ops->name, err.msg);
        for (size_t i = 0; i < n; i += every) {
            size_t k = n - i < every ? n - i : every;
            cr_assert_eq(gm_replay_feed(r, ev + i, k, &err), 0, "%s: %s", ops->name, err.msg);
            char why[256];
            gm_policy_t *pol = gm_replay_policy(r, 0);
            int bad = gm_policy_check(pol, why, sizeof why);
            cr_assert_eq(bad, 0, "%s after the compaction at event %zu: %s", ops->name,
                         i + k - 1, why);
        }
        cr_assert_eq(gm_replay_finish(r, &err), 0, "%s: %s", ops->name, err.msg);
        const gm_defrag_stats_t *d = gm_replay_defrag(r, 0);
        const gm_metrics_t *m = gm_replay_metrics(r, 0);
        uint64_t load = gm_replay_load(r);
        cr_expect_eq(d->compactions + d->aborted, events / every, "%s", ops->name);
        cr_expect_eq(d->aborted, 0, "%s: unlimited device, yet a compaction was abandoned",
                     ops->name);
        cr_expect_leq(d->bytes_moved, d->compactions * load, "%s", ops->name);
        cr_expect_eq(d->blocks_moved > 0, d->bytes_moved > 0, "%s", ops->name);
        cr_expect_geq(m->peak_reserved, load, "%s", ops->name);
        /* before and after are each at most the peak; the copy's sum at most twice it */
        cr_expect_leq(d->copy_peak_reserved, 2 * m->peak_reserved, "%s", ops->name);
        cr_expect_gt(d->copy_peak_reserved, 0, "%s", ops->name);
        if (ops->flags & GM_POLICY_NEEDS_LIFETIMES) {
            /* a plan is a plan: the fresh state puts everything where it was */
            cr_expect_eq(d->bytes_moved, 0, "%s moved %" PRIu64 " bytes", ops->name,
                         d->bytes_moved);
            cr_expect_eq(d->reserved_before, d->reserved_after, "%s", ops->name);
        }
        cr_expect_eq(m->ooms, 0, "%s", ops->name);
        gm_replay_destroy(r);
    }
    free(lt);
    free(ev);
}

Test(defrag, at_named_marks)
{
    const uint64_t events = 10000;
    const char *path = df_store(events);
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.defrag_at = "step"; /* the workload's only mark: one per step */
    gm_store_t *s;
    gm_trace_info_t info;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_store_find(s, "wl", &info, &err), 0, "%s", err.msg);
    uint64_t marks = info.marks;
    gm_trace_info_release(&info);
    gm_store_close(s);
    cr_assert_gt(marks, 1);
    gm_replay_t *r = df_trace(path, &cfg, "buddy");
    cr_expect_eq(gm_replay_defrag(r, 0)->compactions, marks, "%" PRIu64 " compactions, %" PRIu64
                 " marks", gm_replay_defrag(r, 0)->compactions, marks);
    gm_replay_destroy(r);
    cfg.defrag_at = "no such mark";
    r = df_trace(path, &cfg, "buddy");
    cr_expect(gm_replay_defrag_enabled(r));
    cr_expect_eq(gm_replay_defrag(r, 0)->compactions, 0);
    gm_replay_destroy(r);
}

Test(defrag, results_identical_without_a_compaction)
{
    const uint64_t events = 8000;
    const char *path = df_store(events);
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        gm_replay_config_t off, on;
        gm_replay_config_default(&off);
        on = off;
        on.defrag_every = events + 1; /* configured, never reached */
        gm_replay_t *a = df_trace(path, &off, ops->name), *b = df_trace(path, &on, ops->name);
        cr_expect(!gm_replay_defrag_enabled(a));
        cr_expect(gm_replay_defrag_enabled(b));
        const gm_metrics_t *ma = gm_replay_metrics(a, 0), *mb = gm_replay_metrics(b, 0);
#define DF_SAME(field, ...)                                                                 \
    if (strcmp(#field, "sim_ns_per_event") != 0)                                            \
        cr_expect(ma->field == mb->field, "%s: %s differs with defragmentation configured", \
                  ops->name, #field);
        GM_METRICS(DF_SAME)
#undef DF_SAME
        cr_expect_eq(gm_replay_defrag(b, 0)->compactions, 0);
        size_t na, nb;
        const gm_timeline_point_t *ta = gm_replay_timeline(a, 0, &na),
                                  *tb = gm_replay_timeline(b, 0, &nb);
        cr_expect_eq(na, nb);
        cr_expect(na == nb && memcmp(ta, tb, na * sizeof *ta) == 0, "%s: timelines differ",
                  ops->name);
        gm_replay_destroy(a);
        gm_replay_destroy(b);
    }
}

/* ---- an abandoned compaction ---------------------------------------------------
 * A policy of the test's own: each request its own device malloc (like
 * native), but every instance after the first refuses everything, so a
 * compaction's fresh state cannot hold the live set. */

typedef struct df_pol {
    gm_policy_t base;
    int refuse;
    uint64_t allocated;
} df_pol_t;

static const gm_policy_ops_t df_ops;
static int df_created;

static int df_create(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                     gm_error_t *err)
{
    (void)v;
    (void)err;
    df_pol_t *p = calloc(1, sizeof *p);
    cr_assert_not_null(p);
    p->base.ops = &df_ops;
    p->base.dev = dev;
    p->refuse = df_created++ > 0;
    *out = &p->base;
    return 0;
}

static int df_alloc(gm_policy_t *pol, const gm_request_t *req, gm_block_t *out)
{
    df_pol_t *p = (df_pol_t *)pol;
    uint64_t addr, got;
    if (p->refuse || gm_device_malloc(pol->dev, req->size, 0, &addr, &got) != 0)
        return GM_ALLOC_OOM;
    p->allocated += got;
    *out = (gm_block_t){addr, got};
    return 0;
}

static int df_free(gm_policy_t *pol, const gm_block_t *blk, uint32_t stream)
{
    (void)stream;
    ((df_pol_t *)pol)->allocated -= blk->size;
    gm_device_free(pol->dev, blk->addr, blk->size);
    return 0;
}

static void df_stats(gm_policy_t *pol, gm_policy_stats_t *out)
{
    out->allocated = ((df_pol_t *)pol)->allocated;
    out->largest_free = 0;
    out->free_bytes = pol->dev->reserved - out->allocated;
}

static int df_check(gm_policy_t *pol, gm_check_t *ck)
{
    if (((df_pol_t *)pol)->allocated != pol->dev->reserved)
        gm_check_fail(ck, "allocated differs from the device's reserved");
    return ck->bad;
}

static void df_destroy(gm_policy_t *pol) { free(pol); }

static const gm_policy_ops_t df_ops = {
    .name = "refusing", .help = "test policy", .create = df_create, .alloc = df_alloc,
    .free = df_free, .stats = df_stats, .check = df_check, .destroy = df_destroy,
};

Test(defrag, a_fresh_state_that_cannot_hold_the_live_set_is_abandoned)
{
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.check_level = 2;
    cfg.defrag_every = 3;
    gm_replay_t *r;
    gm_params_t p;
    gm_error_t err = {0};
    df_created = 0;
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0);
    cr_assert_eq(gm_params_init(&p, &df_ops, &err), 0);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
    gm_params_release(&p);
    gm_event_t ev[] = {
        {.op = GM_OP_ALLOC, .id = 0, .size = 1000},
        {.op = GM_OP_ALLOC, .id = 1, .size = 2000},
        {.op = GM_OP_ALLOC, .id = 2, .size = 3000}, /* compaction after this one */
        {.op = GM_OP_FREE, .id = 0},
        {.op = GM_OP_FREE, .id = 1},
        {.op = GM_OP_FREE, .id = 2}, /* and this one: nothing live, nothing refused */
    };
    cr_assert_eq(gm_replay_feed(r, ev, 6, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_finish(r, &err), 0, "%s", err.msg);
    const gm_defrag_stats_t *d = gm_replay_defrag(r, 0);
    const gm_metrics_t *m = gm_replay_metrics(r, 0);
    cr_expect_eq(d->aborted, 1);
    cr_expect_eq(d->compactions, 1, "the second one, with nothing live, succeeds");
    cr_expect_eq(d->bytes_moved, 0);
    cr_expect_eq(m->ooms, 0, "an abandoned compaction is not an OOM of the application");
    cr_expect_eq(m->device_mallocs, 3, "the old state served everything");
    cr_expect_eq(m->device_frees, 3);
    cr_expect_eq(m->peak_reserved, 1024 + 2048 + 3072); /* 512-byte granularity */
    gm_replay_destroy(r);
}
