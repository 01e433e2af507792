/*
 * tests/test_offline.c — the offline planner (sim/offline.c).
 *
 * The contract suite (test_policy.c) makes its requests up as it goes, which
 * a planner cannot serve; here the same checks run over op streams that are
 * generated first and planned from their lifetimes: every plan is valid (no
 * two allocations that overlap in time overlap in the arena), its arena is
 * at least the LOAD, the replay through the ops table keeps check() at 0
 * after every operation, results are deterministic, a replay without the
 * trace's lifetimes is refused, the exact search packs generated tight
 * instances exactly, and the minimalloc placement instances
 * (../shared/data/minimalloc, skipped when absent) are placed within 5 % of
 * their known capacity, the tight ones exactly.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Lifetimes of an event list whose ids are ordinals; *load gets the peak of
 * live requested bytes. */
static gm_lifetime_t *ot_lifetimes(const gm_event_t *ev, size_t n, size_t *nalloc, uint64_t *load)
{
    size_t na = 0;
    for (size_t i = 0; i < n; i++)
        na += ev[i].op == GM_OP_ALLOC;
    gm_lifetime_t *lt = calloc(na ? na : 1, sizeof *lt);
    cr_assert_not_null(lt);
    uint64_t cur = 0;
    *load = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].op == GM_OP_ALLOC) {
            cr_assert_lt(ev[i].id, na);
            lt[ev[i].id] = (gm_lifetime_t){ev[i].size, i, GM_LIFETIME_OPEN};
            cur += ev[i].size;
            if (cur > *load)
                *load = cur;
        } else if (ev[i].op == GM_OP_FREE) {
            lt[ev[i].id].end = i;
            cur -= lt[ev[i].id].size;
        }
    }
    *nalloc = na;
    return lt;
}

typedef struct ot_run {
    gm_params_t params;
    gm_device_t dev;
    gm_policy_t *p;
    const gm_policy_ops_t *ops;
} ot_run_t;

static void ot_plan(ot_run_t *o, const gm_lifetime_t *lt, size_t n, const char *const *kv)
{
    memset(o, 0, sizeof *o);
    o->ops = gm_policy_find("offline");
    cr_assert_not_null(o->ops, "offline is not registered");
    cr_assert(o->ops->flags & GM_POLICY_NEEDS_LIFETIMES);
    gm_error_t err = {0};
    cr_assert_eq(gm_params_init(&o->params, o->ops, &err), 0);
    for (; kv && kv[0]; kv += 2)
        cr_assert_eq(gm_params_set(&o->params, kv[0], kv[1], &err), 0, "%s", err.msg);
    gm_device_config_t dc;
    gm_device_config_default(&dc);
    dc.granularity = 1; /* the plan's own figure, not rounded by the device */
    gm_device_init(&o->dev, &dc);
    cr_assert_eq(o->ops->create(&o->dev, o->params.values, &o->p, &err), 0, "%s", err.msg);
    gm_trace_context_t ctx = {.lifetimes = lt, .nlifetimes = n};
    cr_assert_eq(o->ops->prepare(o->p, &ctx, &err), 0, "%s", err.msg);
}

static void ot_release(ot_run_t *o)
{
    o->ops->destroy(o->p);
    gm_params_release(&o->params);
}

typedef struct ot_place {
    uint64_t addr, size, start, end;
} ot_place_t;

static int ot_start_cmp(const void *a, const void *b)
{
    const ot_place_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Replay ev through the planned policy with check() after every operation,
 * and verify the plan: time-overlapping allocations never overlap in space
 * (a sweep over starts with the active set), every block inside the one
 * arena.  Returns the peak reserved.
 */
static uint64_t ot_replay(ot_run_t *o, const gm_event_t *ev, size_t n, size_t na, int check_each)
{
    ot_place_t *pl = calloc(na ? na : 1, sizeof *pl);
    gm_block_t *blk = calloc(na ? na : 1, sizeof *blk);
    cr_assert(pl && blk);
    char why[256];
    for (size_t i = 0; i < n; i++) {
        if (ev[i].op == GM_OP_ALLOC) {
            gm_request_t req = {ev[i].size, ev[i].id, ev[i].stream, ev[i].flags};
            cr_assert_eq(o->ops->alloc(o->p, &req, &blk[ev[i].id]), 0, "alloc at event %zu", i);
            cr_assert_geq(blk[ev[i].id].size, ev[i].size);
            pl[ev[i].id] = (ot_place_t){blk[ev[i].id].addr, blk[ev[i].id].size, i, UINT64_MAX};
        } else if (ev[i].op == GM_OP_FREE) {
            cr_assert_eq(o->ops->free(o->p, &blk[ev[i].id], ev[i].stream), 0, "free at event %zu",
                         i);
            pl[ev[i].id].end = i;
        } else {
            continue;
        }
        if (check_each || i + 1 == n)
            cr_assert_eq(o->ops->check(o->p, why, sizeof why), 0, "event %zu: %s", i, why);
    }
    cr_assert_eq(o->dev.mallocs, na ? 1 : 0, "the arena is one device malloc");
    uint64_t base = na ? pl[0].addr : 0;
    for (size_t i = 0; i < na; i++)
        if (pl[i].addr < base)
            base = pl[i].addr;
    qsort(pl, na, sizeof *pl, ot_start_cmp);
    /* active: indices of placements still alive, checked against each new one */
    size_t *act = malloc((na ? na : 1) * sizeof *act), nact = 0;
    for (size_t i = 0; i < na; i++) {
        size_t w = 0;
        for (size_t k = 0; k < nact; k++)
            if (pl[act[k]].end > pl[i].start)
                act[w++] = act[k];
        nact = w;
        for (size_t k = 0; k < nact; k++) {
            const ot_place_t *a = &pl[act[k]], *b = &pl[i];
            cr_assert(a->addr + a->size <= b->addr || b->addr + b->size <= a->addr,
                      "allocations alive together overlap: [%" PRIu64 ", +%" PRIu64
                      ") and [%" PRIu64 ", +%" PRIu64 ")",
                      a->addr - base, a->size, b->addr - base, b->size);
        }
        cr_assert_leq(pl[i].addr + pl[i].size - base, o->dev.peak_reserved, "past the arena");
        act[nact++] = i;
    }
    free(act);
    free(pl);
    free(blk);
    return o->dev.peak_reserved;
}

static gm_event_t *ot_workload(uint64_t events, uint64_t seed, size_t *n)
{
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = events;
    wc.seed = seed;
    wc.live_max = UINT64_C(2) << 30;
    gm_workload_t *wl;
    gm_error_t err = {0};
    cr_assert_eq(gm_workload_create(&wc, &wl, &err), 0, "%s", err.msg);
    gm_event_t *ev = malloc(events * sizeof *ev);
    size_t got = 0;
    for (size_t k; (k = gm_workload_next(wl, ev + got, events - got)) > 0;)
        got += k;
    gm_workload_destroy(wl);
    *n = got;
    return ev;
}

Test(offline, plans_are_valid_and_at_least_the_load)
{
    for (uint64_t seed = 1; seed <= 2; seed++) {
        size_t n, na;
        uint64_t load;
        gm_event_t *ev = ot_workload(5000, seed, &n);
        gm_lifetime_t *lt = ot_lifetimes(ev, n, &na, &load);
        /* the defaults (once), the greedy alone, a fine unit with a small
         * budget and another seed */
        static const char *const cfgs[][7] = {{"effort", "0", NULL},
                                             {"align", "1", "seed", "9", "effort", "5000000", NULL},
                                             {NULL}};
        for (size_t c = 0; c < (seed == 1 ? 3u : 2u); c++) {
            ot_run_t o;
            ot_plan(&o, lt, na, cfgs[c]);
            uint64_t peak = ot_replay(&o, ev, n, na, 1);
            cr_expect_geq(peak, load, "seed %" PRIu64 ": plan %" PRIu64 " below the load %" PRIu64,
                          seed, peak, load);
            cr_expect_leq(peak, load + load / 5, "seed %" PRIu64 ": plan %" PRIu64
                          " more than 20%% above the load %" PRIu64, seed, peak, load);
            ot_release(&o);
        }
        free(lt);
        free(ev);
    }
}

Test(offline, improvement_never_loses_and_is_deterministic)
{
    size_t n, na;
    uint64_t load;
    gm_event_t *ev = ot_workload(3000, 5, &n);
    gm_lifetime_t *lt = ot_lifetimes(ev, n, &na, &load);
    static const char *const greedy[] = {"effort", "0", NULL};
    static const char *const some[] = {"effort", "10000000", NULL};
    ot_run_t a, b, c;
    ot_plan(&a, lt, na, greedy);
    ot_plan(&b, lt, na, some);
    ot_plan(&c, lt, na, some);
    uint64_t pa = ot_replay(&a, ev, n, na, 0), pb = ot_replay(&b, ev, n, na, 0),
             pc = ot_replay(&c, ev, n, na, 0);
    cr_expect_leq(pb, pa, "the improved plan %" PRIu64 " is worse than greedy %" PRIu64, pb, pa);
    cr_expect_eq(pb, pc, "two plans of one trace differ");
    ot_release(&a);
    ot_release(&b);
    ot_release(&c);
    free(lt);
    free(ev);
}

Test(offline, refuses_to_run_without_lifetimes)
{
    const gm_policy_ops_t *ops = gm_policy_find("offline");
    cr_assert_not_null(ops);
    /* through the engine: a feed without gm_replay_trace's context */
    gm_replay_t *r;
    gm_params_t p;
    gm_error_t err = {0};
    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0);
    cr_assert_eq(gm_params_init(&p, ops, &err), 0);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0);
    gm_event_t ev[2] = {{.op = GM_OP_ALLOC, .id = 0, .size = 100}, {.op = GM_OP_FREE, .id = 0}};
    cr_expect_eq(gm_replay_feed(r, ev, 2, &err), GM_ESTATE);
    cr_expect(strstr(err.msg, "offline needs the whole trace") != NULL, "message: %s", err.msg);
    gm_replay_destroy(r);
    /* directly: prepare without lifetimes, alloc unprepared */
    gm_device_t dev;
    gm_device_init(&dev, NULL);
    gm_policy_t *pol;
    cr_assert_eq(ops->create(&dev, p.values, &pol, &err), 0);
    gm_request_t req = {.size = 100};
    gm_block_t blk;
    cr_expect_eq(ops->alloc(pol, &req, &blk), GM_ESTATE);
    gm_trace_context_t ctx = {.name = "t"};
    cr_expect_eq(ops->prepare(pol, &ctx, &err), GM_ESTATE);
    cr_expect(strstr(err.msg, "replay it from a store") != NULL, "message: %s", err.msg);
    ops->destroy(pol);
    gm_params_release(&p);
}

Test(offline, replays_from_a_store_beside_online_policies)
{
    const char *path = gt_tmpfile("offline.db");
    gm_store_t *s;
    gm_writer_t *w;
    gm_error_t err = {0};
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = 10000;
    wc.seed = 11;
    wc.live_max = UINT64_C(1) << 30;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_begin(s, "wl", 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_workload_write(&wc, w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.check_level = 2;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0);
    static const char *const names[] = {"native", "tlsf", "offline"};
    for (size_t i = 0; i < 3; i++) {
        gm_params_t p;
        cr_assert_eq(gm_params_init(&p, gm_policy_find(names[i]), &err), 0);
        cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
        gm_params_release(&p);
    }
    cr_assert_eq(gm_replay_trace(r, s, "wl", &err), 0, "%s", err.msg);
    const gm_metrics_t *native = gm_replay_metrics(r, 0), *tlsf = gm_replay_metrics(r, 1),
                       *off = gm_replay_metrics(r, 2);
    uint64_t load = gm_replay_load(r);
    cr_expect_geq(off->peak_reserved, load);
    cr_expect_leq(off->peak_reserved, tlsf->peak_reserved,
                  "the planner (%" PRIu64 ") needs more than tlsf (%" PRIu64 ")",
                  off->peak_reserved, tlsf->peak_reserved);
    cr_expect_eq(off->device_mallocs, 1);
    cr_expect_eq(off->ooms, 0);
    cr_expect_gt(native->device_mallocs, 1000);
    gm_replay_destroy(r);
    gm_store_close(s);
}

/* A tight instance: the rectangle capacity × [0, span) cut at random into
 * `pieces` blocks (each cut across the whole piece, in time or in space), a
 * buffer per block, written as a minimalloc CSV.  Every instant is exactly
 * full, so only an exact packing fits in capacity. */
static void ot_cut(FILE *f, uint64_t *rng, uint64_t lo, uint64_t hi, uint64_t t0, uint64_t t1,
                   size_t pieces, size_t *id)
{
    *rng = *rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    uint64_t r = *rng >> 33;
    int in_time = (r & 1) ? t1 - t0 >= 2 : hi - lo < 2;
    if (pieces <= 1 || (t1 - t0 < 2 && hi - lo < 2)) {
        fprintf(f, "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", (*id)++, t0, t1, hi - lo);
        return;
    }
    size_t left = 1 + (size_t)(r >> 1) % (pieces - 1);
    if (in_time) {
        uint64_t at = t0 + 1 + (r >> 8) % (t1 - t0 - 1);
        ot_cut(f, rng, lo, hi, t0, at, left, id);
        ot_cut(f, rng, lo, hi, at, t1, pieces - left, id);
    } else {
        uint64_t at = lo + 1 + (r >> 8) % (hi - lo - 1);
        ot_cut(f, rng, lo, at, t0, t1, left, id);
        ot_cut(f, rng, at, hi, t0, t1, pieces - left, id);
    }
}

/* The exact search packs tight instances that the greedy alone does not
 * (effort=1: little more than the first greedy pass): with the search the
 * plan is exactly the capacity, without it (search=0) valid but above; the
 * plan is deterministic. */
Test(offline, exact_search_packs_tight_instances, .timeout = 60)
{
    size_t exact = 0, heuristic_short = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        char name[64];
        snprintf(name, sizeof name, "tight%" PRIu64 ".65536.csv", seed);
        const char *path = gt_tmpfile(name);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fprintf(f, "id,lower,upper,size\n");
        uint64_t rng = seed;
        size_t id = 0;
        ot_cut(f, &rng, 0, 65536, 0, 1000, 60, &id);
        fclose(f);
        size_t n, na;
        uint64_t capacity = 0, load;
        gm_event_t *ev = gt_minimalloc_events(path, &n, &capacity);
        cr_assert_not_null(ev);
        gm_lifetime_t *lt = ot_lifetimes(ev, n, &na, &load);
        cr_assert_eq(load, capacity, "the cut leaves no instant unfilled");
        static const char *const with[] = {"align", "1", "effort", "1", NULL};
        static const char *const without[] = {"align", "1", "effort", "1", "search", "0",
                                              NULL};
        ot_run_t a, b, c;
        ot_plan(&a, lt, na, with);
        ot_plan(&b, lt, na, without);
        ot_plan(&c, lt, na, with);
        uint64_t pa = ot_replay(&a, ev, n, na, 0), pb = ot_replay(&b, ev, n, na, 0),
                 pc = ot_replay(&c, ev, n, na, 0);
        cr_expect_geq(pb, load);
        cr_expect_eq(pa, pc, "two plans of one instance differ");
        exact += pa == capacity;
        heuristic_short += pb > capacity;
        fprintf(stderr,
                "tight instance %" PRIu64 " (%zu buffers): %" PRIu64 " with the search, %" PRIu64
                " without, capacity %" PRIu64 "\n",
                seed, na, pa, pb, capacity);
        ot_release(&a);
        ot_release(&b);
        ot_release(&c);
        free(lt);
        free(ev);
    }
    cr_expect_eq(exact, 4, "the search packed %zu of 4 tight instances exactly", exact);
    cr_expect_gt(heuristic_short, 0, "the greedy alone packed every instance: no test");
}

Test(offline, refuses_a_negative_search_budget)
{
    const gm_policy_ops_t *ops = gm_policy_find("offline");
    cr_assert_not_null(ops);
    gm_params_t p;
    gm_error_t err = {0};
    cr_assert_eq(gm_params_init(&p, ops, &err), 0);
    cr_assert_eq(gm_params_set(&p, "search", "-1", &err), 0, "%s", err.msg);
    gm_device_t dev;
    gm_device_init(&dev, NULL);
    gm_policy_t *pol = NULL;
    cr_expect_eq(ops->create(&dev, p.values, &pol, &err), GM_EINVAL);
    cr_expect(strstr(err.msg, "offline.search") != NULL, "message: %s", err.msg);
    gm_params_release(&p);
}

static int ot_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every instance in ../shared/data/minimalloc: a valid plan, at least its
 * load, within 5 % of the known capacity (the exact search reaches it or
 * comes within 0.4 %: see docs/validation.md for each file's figure), and
 * exactly the capacity where the load equals it (a tight instance: only an
 * exact packing fits, and the search finds it).  Under the sanitizers (ten
 * times slower) the files that need the least search only. */
Test(offline, minimalloc_instances, .timeout = 120)
{
    const char *why = NULL;
    const char *dir = gt_data_path("minimalloc", &why);
    if (dir == NULL)
        cr_skip_test("minimalloc instances not available: %s", why);
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s", dir);
    DIR *d = opendir(dirpath);
    cr_assert_not_null(d, "cannot open %s", dirpath);
    char *names[256];
    size_t nnames = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && nnames < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0)
            names[nnames++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, nnames, sizeof names[0], ot_name_cmp);
    cr_assert_gt(nnames, 0);
    static const char *const exact[] = {"align", "1", NULL};
    size_t ran = 0;
    for (size_t f = 0; f < nnames; f++) {
#if defined(__SANITIZE_ADDRESS__)
        /* A and D take the most search (1–2.5 s in a normal build) */
        if (names[f][0] == 'A' || names[f][0] == 'D') {
            free(names[f]);
            continue;
        }
#endif
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dirpath, names[f]);
        size_t n, na;
        uint64_t capacity = 0, load;
        gm_event_t *ev = gt_minimalloc_events(path, &n, &capacity);
        cr_assert_not_null(ev, "cannot read %s", path);
        gm_lifetime_t *lt = ot_lifetimes(ev, n, &na, &load);
        ot_run_t o;
        ot_plan(&o, lt, na, exact);
        uint64_t peak = ot_replay(&o, ev, n, na, 0);
        cr_expect_geq(peak, load, "%s", names[f]);
        if (capacity) {
            cr_expect_leq(peak, capacity + capacity / 20,
                          "%s: plan %" PRIu64 " vs capacity %" PRIu64, names[f], peak, capacity);
            if (load == capacity)
                cr_expect_eq(peak, capacity, "%s: a tight instance, plan %" PRIu64
                             " vs capacity %" PRIu64, names[f], peak, capacity);
        }
        fprintf(stderr, "offline on %s: %" PRIu64 " bytes, %.4f x capacity %" PRIu64 "\n",
                names[f], peak, capacity ? (double)peak / (double)capacity : 0.0, capacity);
        ot_release(&o);
        free(lt);
        free(ev);
        free(names[f]);
        ran++;
    }
    cr_assert_gt(ran, 0);
}
