/*
 * tests/test_policy.c — the contract every policy keeps, run over every
 * policy in the registry (a new policy is covered by adding it to
 * GM_POLICY_LIST) and over each of its configurations: the defaults, and
 * each other choice of every enum or bool parameter.
 *
 * The harness drives a policy's ops table directly on its own device and,
 * after every operation, checks:
 *   - no two live blocks overlap (live blocks kept sorted by address);
 *   - block.size ≥ the request;
 *   - device reserved ≥ allocated (sum of live block sizes) ≥ requested,
 *     and reserved ≤ capacity;
 *   - check() == 0 (its reason is printed otherwise);
 *   - stats(): allocated equals the live sum, free_bytes = reserved −
 *     allocated, largest_free ≤ free_bytes;
 *   - walk() (where the policy has one) shows every live block once, each
 *     segment's blocks in address order adding up to the segment, the
 *     segments within reserved.
 * Freeing everything brings allocated to 0; a policy without empty_cache
 * (one that caches nothing) then holds no memory, and one with it holds
 * none after empty_cache.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* ---- configurations ------------------------------------------------------ */

typedef struct config {
    char key[64];
    char value[64]; /* key "" = the defaults */
} config_t;

/* The configurations to run a policy in; returns the count (≤ max). */
static size_t policy_configs(const gm_policy_ops_t *ops, config_t *out, size_t max)
{
    size_t n = 0;
    out[n++] = (config_t){"", ""};
    for (size_t i = 0; i < ops->nparams && n < max; i++) {
        const gm_param_spec_t *sp = &ops->params[i];
        if (sp->type == GM_PARAM_BOOL) {
            gm_param_value_t v;
            cr_assert_eq(gm_param_parse(sp, sp->def, &v, NULL), 0);
            snprintf(out[n].key, sizeof out[n].key, "%s", sp->name);
            snprintf(out[n].value, sizeof out[n].value, "%s", v.b ? "false" : "true");
            n++;
        } else if (sp->type == GM_PARAM_ENUM) {
            char choices[256];
            snprintf(choices, sizeof choices, "%s", sp->choices);
            char *save = NULL;
            for (char *c = strtok_r(choices, "|", &save); c && n < max;
                 c = strtok_r(NULL, "|", &save)) {
                if (strcmp(c, sp->def) == 0)
                    continue;
                snprintf(out[n].key, sizeof out[n].key, "%s", sp->name);
                snprintf(out[n].value, sizeof out[n].value, "%s", c);
                n++;
            }
        }
    }
    return n;
}

/* ---- the harness ------------------------------------------------------------ */

typedef struct live {
    gm_block_t blk;
    uint64_t req;
    uint32_t stream;
    int alive;
} live_t;

typedef struct harness {
    const gm_policy_ops_t *ops;
    gm_params_t params;
    gm_device_t dev;
    gm_policy_t *p;
    char label[160];

    live_t *blocks; /* by harness id */
    size_t nblocks, cap;
    size_t *sorted; /* ids of live blocks by address */
    size_t nlive;

    uint64_t requested, allocated, peak_requested;
    uint64_t ops_done, ooms;
} harness_t;

static void h_init(harness_t *h, const gm_policy_ops_t *ops, const config_t *cfg, uint64_t capacity)
{
    memset(h, 0, sizeof *h);
    h->ops = ops;
    gm_error_t err = {0};
    cr_assert_eq(gm_params_init(&h->params, ops, &err), 0, "%s: %s", ops->name, err.msg);
    if (cfg->key[0] != '\0')
        cr_assert_eq(gm_params_set(&h->params, cfg->key, cfg->value, &err), 0, "%s", err.msg);
    if (snprintf(h->label, sizeof h->label, "%s%s%s%s%s", ops->name, cfg->key[0] ? " " : "",
                 cfg->key, cfg->key[0] ? "=" : "", cfg->value) >= (int)sizeof h->label)
        h->label[sizeof h->label - 2] = '~'; /* cut: a label, not a key */
    gm_device_config_t dc;
    gm_device_config_default(&dc);
    dc.capacity = capacity;
    gm_device_init(&h->dev, &dc);
    cr_assert_eq(gm_policy_create(ops, &h->dev, h->params.values, &h->p, &err), 0, "%s: create: %s",
                 h->label, err.msg);
    cr_assert_not_null(h->p);
    cr_assert_eq(h->p->ops, ops);
    cr_assert_eq(h->p->dev, &h->dev);
}

static void h_release(harness_t *h)
{
    gm_policy_destroy(h->p);
    gm_params_release(&h->params);
    free(h->blocks);
    free(h->sorted);
}

/* Position of the first live block with address ≥ addr in h->sorted. */
static size_t h_lower(const harness_t *h, uint64_t addr)
{
    size_t lo = 0, hi = h->nlive;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->blocks[h->sorted[mid]].blk.addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* What a policy's walk showed (see h_walk). */
typedef struct h_walked {
    uint64_t seg_addr, seg_sum, seg_size, end, total, allocated, nallocated, bad;
    int open;
} h_walked_t;

static void h_walk_fn(void *ctx, const gm_walk_block_t *b)
{
    h_walked_t *w = ctx;
    if (!w->open || b->seg_addr != w->seg_addr) {
        if (w->open && w->seg_sum != w->seg_size)
            w->bad++; /* the previous segment's blocks do not add up to it */
        w->open = 1;
        w->seg_addr = b->seg_addr;
        w->seg_size = b->seg_size;
        w->seg_sum = 0;
        w->end = b->seg_addr;
        w->total += b->seg_size;
    }
    if (b->addr < w->end || b->size == 0)
        w->bad++; /* out of order, overlapping, or before its segment */
    w->end = b->addr + b->size;
    w->seg_sum += b->size;
    if (b->allocated) {
        w->allocated += b->size;
        w->nallocated++;
    }
}

/* A policy with a walk op shows every live block once, its segments'
 * blocks in address order adding up to each segment, within reserved. */
static void h_walk(harness_t *h, const char *what, uint64_t nlive)
{
    if (h->ops->walk == NULL)
        return;
    h_walked_t w = {0};
    gm_policy_walk(h->p, h_walk_fn, &w);
    if (w.open && w.seg_sum != w.seg_size)
        w.bad++;
    cr_assert_eq(w.bad, 0, "%s: after %s: walk shows %" PRIu64 " misplaced blocks", h->label,
                 what, w.bad);
    cr_assert_eq(w.allocated, h->allocated, "%s: after %s: walk's allocated %" PRIu64, h->label,
                 what, w.allocated);
    cr_assert_eq(w.nallocated, nlive, "%s: after %s: walk shows %" PRIu64 " live blocks",
                 h->label, what, w.nallocated);
    cr_assert_leq(w.total, h->dev.reserved, "%s: after %s: segments above reserved", h->label,
                  what);
}

static void h_verify(harness_t *h, const char *what)
{
    char why[512] = "";
    int bad = gm_policy_check(h->p, why, sizeof why);
    cr_assert_eq(bad, 0, "%s: after %s (op %" PRIu64 "): check() = %d: %s", h->label, what,
                 h->ops_done, bad, why);
    gm_policy_stats_t st;
    memset(&st, 0xa5, sizeof st);
    gm_policy_stats(h->p, &st);
    cr_assert_eq(st.allocated, h->allocated, "%s: after %s: stats.allocated %" PRIu64
                 " but live blocks sum to %" PRIu64, h->label, what, st.allocated, h->allocated);
    cr_assert_geq(h->dev.reserved, h->allocated, "%s: reserved %" PRIu64 " < allocated %" PRIu64,
                  h->label, h->dev.reserved, h->allocated);
    cr_assert_geq(h->allocated, h->requested, "%s: allocated < requested", h->label);
    cr_assert_eq(st.free_bytes, h->dev.reserved - h->allocated, "%s: free_bytes %" PRIu64,
                 h->label, st.free_bytes);
    cr_assert_leq(st.largest_free, st.free_bytes, "%s: largest_free > free_bytes", h->label);
    if (h->dev.cfg.capacity != 0)
        cr_assert_leq(h->dev.reserved, h->dev.cfg.capacity, "%s: over capacity", h->label);
    cr_assert_geq(h->dev.peak_reserved, h->dev.reserved);
    h_walk(h, what, h->nlive);
}

/* Allocate; returns the harness id, or -1 on GM_ALLOC_OOM. */
static int64_t h_alloc(harness_t *h, uint64_t size, uint32_t stream)
{
    if (h->nblocks == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 256;
        h->blocks = realloc(h->blocks, h->cap * sizeof *h->blocks);
        h->sorted = realloc(h->sorted, h->cap * sizeof *h->sorted);
        cr_assert(h->blocks && h->sorted);
    }
    gm_request_t req = {.size = size, .id = h->nblocks, .stream = stream};
    gm_block_t blk = {0, 0};
    uint64_t allocated_before = h->allocated;
    int rc = gm_policy_alloc(h->p, &req, &blk);
    h->ops_done++;
    if (rc == GM_ALLOC_OOM) {
        h->ooms++;
        cr_assert_eq(h->allocated, allocated_before);
        h_verify(h, "an OOM");
        return -1;
    }
    cr_assert_eq(rc, 0, "%s: alloc(%" PRIu64 ") returned %d", h->label, size, rc);
    cr_assert_geq(blk.size, size, "%s: block of %" PRIu64 " for a request of %" PRIu64, h->label,
                  blk.size, size);

    size_t pos = h_lower(h, blk.addr);
    if (pos > 0) {
        const gm_block_t *prev = &h->blocks[h->sorted[pos - 1]].blk;
        cr_assert_leq(prev->addr + prev->size, blk.addr,
                      "%s: block [0x%" PRIx64 ", +%" PRIu64 ") overlaps [0x%" PRIx64 ", +%" PRIu64 ")",
                      h->label, blk.addr, blk.size, prev->addr, prev->size);
    }
    if (pos < h->nlive) {
        const gm_block_t *next = &h->blocks[h->sorted[pos]].blk;
        cr_assert_leq(blk.addr + blk.size, next->addr,
                      "%s: block [0x%" PRIx64 ", +%" PRIu64 ") overlaps [0x%" PRIx64 ", +%" PRIu64 ")",
                      h->label, blk.addr, blk.size, next->addr, next->size);
    }
    size_t id = h->nblocks++;
    h->blocks[id] = (live_t){blk, size, stream, 1};
    memmove(&h->sorted[pos + 1], &h->sorted[pos], (h->nlive - pos) * sizeof *h->sorted);
    h->sorted[pos] = id;
    h->nlive++;
    h->requested += size;
    h->allocated += blk.size;
    if (h->requested > h->peak_requested)
        h->peak_requested = h->requested;
    h_verify(h, "an alloc");
    return (int64_t)id;
}

static void h_free(harness_t *h, size_t id)
{
    live_t *l = &h->blocks[id];
    cr_assert(l->alive);
    int rc = gm_policy_free(h->p, &l->blk, l->stream);
    h->ops_done++;
    cr_assert_eq(rc, 0, "%s: free(0x%" PRIx64 ", %" PRIu64 ") returned %d", h->label, l->blk.addr,
                 l->blk.size, rc);
    size_t pos = h_lower(h, l->blk.addr);
    cr_assert(pos < h->nlive && h->sorted[pos] == id);
    memmove(&h->sorted[pos], &h->sorted[pos + 1], (h->nlive - pos - 1) * sizeof *h->sorted);
    h->nlive--;
    l->alive = 0;
    h->requested -= l->req;
    h->allocated -= l->blk.size;
    h_verify(h, "a free");
}

/* Free every live block (in a scrambled order), then check the end state. */
static void h_free_all(harness_t *h, uint64_t *rng)
{
    while (h->nlive > 0)
        h_free(h, h->sorted[gt_rand(rng) % h->nlive]);
    cr_assert_eq(h->allocated, 0);
    gm_policy_stats_t st;
    gm_policy_stats(h->p, &st);
    cr_assert_eq(st.allocated, 0, "%s: allocated %" PRIu64 " with nothing live", h->label,
                 st.allocated);
    if (h->ops->empty_cache == NULL) {
        cr_assert_eq(h->dev.reserved, 0, "%s: caches nothing, yet holds %" PRIu64 " bytes",
                     h->label, h->dev.reserved);
    } else {
        gm_policy_empty_cache(h->p);
        h_verify(h, "empty_cache");
        cr_assert_eq(h->dev.reserved, 0, "%s: holds %" PRIu64 " bytes after empty_cache",
                     h->label, h->dev.reserved);
    }
}

/* 1 B … 4 GiB, mostly small: 60 % ≤ 64 KiB, 30 % ≤ 64 MiB, 8 % ≤ 1 GiB,
 * 2 % ≤ 4 GiB, each log-uniform within its class. */
static uint64_t rand_size(uint64_t *rng)
{
    uint64_t r = gt_rand(rng) % 100;
    unsigned lo = r < 60 ? 0 : r < 90 ? 16 : r < 98 ? 26 : 30;
    unsigned hi = r < 60 ? 16 : r < 90 ? 26 : r < 98 ? 30 : 32;
    unsigned bits = lo + (unsigned)(gt_rand(rng) % (hi - lo + 1));
    return 1 + gt_rand(rng) % (UINT64_C(1) << bits);
}

/* ---- the contract ------------------------------------------------------------ */

#define MAX_CONFIGS 16

/* A planner (GM_POLICY_NEEDS_LIFETIMES) serves only the trace it planned,
 * and this harness makes its requests up as it goes: the same contract is
 * checked for planners in tests/test_offline.c, over op streams generated
 * first and planned from their lifetimes. */
static int plans_ahead(const gm_policy_ops_t *ops)
{
    return (ops->flags & GM_POLICY_NEEDS_LIFETIMES) != 0;
}

Test(contract, registry)
{
    cr_assert_geq(gm_policy_count(), 2);
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        cr_assert_not_null(ops);
        cr_expect_not_null(ops->name);
        cr_expect_not_null(ops->help);
        cr_expect(ops->nparams == 0 || ops->params != NULL);
        cr_expect(ops->create && ops->alloc && ops->free && ops->stats && ops->check &&
                  ops->destroy);
    }
}

/* The roles a comparison reads (gm_policy_role_t) agree with what the ops
 * do: one baseline; a bound plans with lifetimes and every planner is a
 * bound; a reference caches nothing and what caches nothing is a
 * reference. */
Test(contract, roles)
{
    size_t baselines = 0;
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        int planner = (ops->flags & GM_POLICY_NEEDS_LIFETIMES) != 0;
        baselines += ops->role == GM_ROLE_BASELINE;
        cr_expect_eq(ops->role == GM_ROLE_BOUND, planner, "%s: role %d, planner %d", ops->name,
                     (int)ops->role, planner);
        cr_expect_eq(ops->role == GM_ROLE_REFERENCE, ops->empty_cache == NULL,
                     "%s: role %d, caches %s", ops->name, (int)ops->role,
                     ops->empty_cache ? "something" : "nothing");
    }
    cr_expect_eq(baselines, 1, "%zu baseline policies", baselines);
    cr_expect_eq(gm_policy_find("caching")->role, GM_ROLE_BASELINE);
}

/* Seeded random stress: grow, churn, shrink, free everything. */
static void stress(const gm_policy_ops_t *ops, const config_t *cfg, uint64_t seed, int nops)
{
    harness_t h;
    h_init(&h, ops, cfg, 0);
    h_verify(&h, "create");
    uint64_t rng = seed;
    for (int i = 0; i < nops; i++) {
        /* first half grows (60 % allocs), second half shrinks (40 %) */
        unsigned p_alloc = i < nops / 2 ? 60 : 40;
        if (h.nlive == 0 || gt_rand(&rng) % 100 < p_alloc) {
            cr_assert_geq(h_alloc(&h, rand_size(&rng), (uint32_t)(gt_rand(&rng) & 1)), 0,
                          "%s: OOM with unlimited capacity", h.label);
        } else {
            size_t id = h.sorted[gt_rand(&rng) % h.nlive]; /* any live block */
            h_free(&h, id);
        }
    }
    h_free_all(&h, &rng);
    h_release(&h);
}

Test(contract, random_stress)
{
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        if (plans_ahead(ops))
            continue;
        config_t cfgs[MAX_CONFIGS];
        size_t n = policy_configs(ops, cfgs, MAX_CONFIGS);
        for (size_t c = 0; c < n; c++)
            for (uint64_t seed = 1; seed <= 2; seed++)
                stress(ops, &cfgs[c], seed * 7919, 2500);
    }
}

Test(contract, small_requests_churn)
{
    /* many small short-lived requests on two streams, LIFO-ish */
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        if (plans_ahead(ops))
            continue;
        config_t cfgs[MAX_CONFIGS];
        size_t n = policy_configs(ops, cfgs, MAX_CONFIGS);
        for (size_t c = 0; c < n; c++) {
            harness_t h;
            h_init(&h, ops, &cfgs[c], 0);
            uint64_t rng = 99;
            for (int k = 0; k < 3000; k++) {
                if (h.nlive < 8 || gt_rand(&rng) % 2) {
                    h_alloc(&h, 1 + gt_rand(&rng) % 8192, (uint32_t)(k & 1));
                } else {
                    size_t back = gt_rand(&rng) % (h.nlive < 4 ? h.nlive : 4);
                    h_free(&h, h.sorted[h.nlive - 1 - back]);
                }
            }
            h_free_all(&h, &rng);
            h_release(&h);
        }
    }
}

Test(contract, oom_is_a_clean_result)
{
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        if (plans_ahead(ops))
            continue;
        config_t cfgs[MAX_CONFIGS];
        size_t n = policy_configs(ops, cfgs, MAX_CONFIGS);
        for (size_t c = 0; c < n; c++) {
            harness_t h;
            h_init(&h, ops, &cfgs[c], 4 * GiB);
            uint64_t rng = 4242;
            uint64_t ok = 0;
            for (int k = 0; k < 1500; k++) {
                if (h.nlive == 0 || gt_rand(&rng) % 100 < 60) {
                    uint64_t size = gt_rand(&rng) % 4 == 0 ? 1 + gt_rand(&rng) % (2 * GiB)
                                                           : 1 + gt_rand(&rng) % (64 * MiB);
                    ok += h_alloc(&h, size, (uint32_t)(gt_rand(&rng) & 1)) >= 0;
                } else {
                    h_free(&h, h.sorted[gt_rand(&rng) % h.nlive]);
                }
            }
            cr_expect_gt(h.ooms, 0, "%s: no OOM under a 4 GiB capacity", h.label);
            cr_expect_gt(ok, 0, "%s: nothing fit in 4 GiB", h.label);
            /* after OOMs the policy still serves what fits */
            h_free_all(&h, &rng);
            cr_assert_geq(h_alloc(&h, 1024, 0), 0, "%s: cannot allocate after OOMs", h.label);
            cr_assert_eq(h_alloc(&h, 5 * GiB, 0), -1, "%s: 5 GiB fit in 4", h.label);
            h_free_all(&h, &rng);
            h_release(&h);
        }
    }
}

Test(contract, bad_free_is_rejected)
{
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        if (plans_ahead(ops))
            continue;
        harness_t h;
        config_t def = {"", ""};
        h_init(&h, ops, &def, 0);
        int64_t a = h_alloc(&h, 1000, 0), b = h_alloc(&h, 3000, 1);
        cr_assert(a >= 0 && b >= 0);
        gm_block_t freed = h.blocks[a].blk;
        h_free(&h, (size_t)a);
        gm_policy_stats_t before, after;
        uint64_t reserved = h.dev.reserved;
        gm_policy_stats(h.p, &before);
        cr_expect_lt(gm_policy_free(h.p, &freed, 0), 0, "%s: double free accepted", h.label);
        gm_block_t foreign = {UINT64_C(0x10), 512};
        cr_expect_lt(gm_policy_free(h.p, &foreign, 0), 0, "%s: foreign block accepted", h.label);
        gm_policy_stats(h.p, &after);
        cr_expect_eq(before.allocated, after.allocated);
        cr_expect_eq(reserved, h.dev.reserved);
        h_verify(&h, "rejected frees");
        uint64_t rng = 1;
        h_free_all(&h, &rng);
        h_release(&h);
    }
}

Test(contract, downcast_rejects_other_policies)
{
    /* Each policy's calls on another policy's object fail cleanly. */
    if (gm_policy_count() < 2)
        cr_skip_test("one policy only");
    const gm_policy_ops_t *x = gm_policy_at(0), *y = gm_policy_at(1);
    harness_t h;
    config_t def = {"", ""};
    h_init(&h, x, &def, 0);
    gm_request_t req = {.size = 512};
    gm_block_t blk;
    cr_expect_lt(y->alloc(h.p, &req, &blk), 0);
    gm_check_t ck;
    gm_check_begin(&ck, NULL, 0);
    cr_expect_gt(y->check(h.p, &ck), 0);
    h_release(&h);
}

/* ---- real data: minimalloc instances -------------------------------------------- */

static void replay_instance(const gm_policy_ops_t *ops, const config_t *cfg, const char *path,
                            const char *name)
{
    size_t n = 0;
    uint64_t capacity = 0;
    gm_event_t *ev = gt_minimalloc_events(path, &n, &capacity);
    cr_assert_not_null(ev, "cannot read %s", path);

    uint64_t load = 0, cur = 0, maxid = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].op == GM_OP_ALLOC && ev[i].id + 1 > maxid)
            maxid = ev[i].id + 1;
    uint64_t *sizes = calloc(maxid + 1, sizeof *sizes);
    int64_t *hid = calloc(maxid + 1, sizeof *hid);
    for (size_t i = 0; i < n; i++) {
        if (ev[i].op == GM_OP_ALLOC) {
            sizes[ev[i].id] = ev[i].size;
            cur += ev[i].size;
            if (cur > load)
                load = cur;
        } else if (ev[i].op == GM_OP_FREE) {
            cur -= sizes[ev[i].id];
        }
    }
    cr_assert_eq(cur, 0, "%s: allocations left live", name);

    harness_t h;
    h_init(&h, ops, cfg, 0);
    snprintf(h.label + strlen(h.label), sizeof h.label - strlen(h.label), " on %s", name);
    for (size_t i = 0; i < n; i++) {
        if (ev[i].op == GM_OP_ALLOC) {
            hid[ev[i].id] = h_alloc(&h, ev[i].size, ev[i].stream);
            cr_assert_geq(hid[ev[i].id], 0, "%s: OOM with unlimited capacity", h.label);
        } else if (ev[i].op == GM_OP_FREE) {
            h_free(&h, (size_t)hid[ev[i].id]);
        }
    }
    cr_assert_eq(h.peak_requested, load);
    cr_assert_geq(h.dev.peak_reserved, load, "%s: peak reserved %" PRIu64 " below the load %" PRIu64,
                  h.label, h.dev.peak_reserved, load);
    uint64_t rng = 5;
    h_free_all(&h, &rng);
    h_release(&h);
    free(sizes);
    free(hid);
    free(ev);
}

static int csv_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

Test(contract, minimalloc_instances)
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
    qsort(names, nnames, sizeof names[0], csv_name_cmp);
    cr_assert_gt(nnames, 0, "no instance in %s", dirpath);

    size_t replayed = 0;
    for (size_t f = 0; f < nnames; f++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dirpath, names[f]);
        size_t n = 0;
        gm_event_t *ev = gt_minimalloc_events(path, &n, NULL);
        cr_assert_not_null(ev, "cannot read %s", path);
        free(ev);
        cr_assert_gt(n, 0, "%s: no buffers read", names[f]);
        replayed++;
        for (size_t i = 0; i < gm_policy_count(); i++) {
            const gm_policy_ops_t *ops = gm_policy_at(i);
            if (plans_ahead(ops))
                continue;
            config_t cfgs[MAX_CONFIGS];
            size_t nc = policy_configs(ops, cfgs, MAX_CONFIGS);
            for (size_t c = 0; c < nc; c++)
                replay_instance(ops, &cfgs[c], path, names[f]);
        }
    }
    for (size_t f = 0; f < nnames; f++)
        free(names[f]);
    cr_assert_gt(replayed, 0, "no instance could be replayed");
}
