/*
 * replay/advice.c — answers a user can act on (API and definitions in
 * gmsim/advice.h; docs/cli.md replay and compare, docs/report.md Summary).
 *
 * Each answer is a handful of configurations replayed in one pass
 * (gm_compare_trace), so it costs one read of the trace and one policy run
 * per configuration:
 *
 *  - warm and cold (gm_start_compare): four runs of a policy that can start
 *    from the recorded layout — warm and cold, with the parameters given
 *    and with the trace's own settings.  Parameters "cannot act" when the
 *    warm runs are equal and the cold ones are not: the recorded layout
 *    decides (PyTorch applies a setting only to segments made after it is
 *    set; a layout that holds the whole peak before the first event leaves
 *    none to make).
 *  - PyTorch settings (gm_torch_advise): the recorded settings and a grid
 *    of settings a PyTorch user can set, each on top of the recorded ones,
 *    all cold (a setting acts from the process start, as a new job starts),
 *    so the saving is like for like: the same trace, the same start, one
 *    setting changed.  The recorded figure is shown beside it, not
 *    subtracted from it: a recording that began mid-run (a ring buffer) has
 *    a history the replay does not.
 *  - OOMs (gm_oom_explain): the trace is replayed up to its first OOM by
 *    feeding the engine the exact prefix (so the state is the one right
 *    after the failed request), then the policy's optional walk op lists
 *    its segments and blocks, and the engine's live set (gm_replay_live)
 *    names the allocation behind each live block, with the stack frames of
 *    its ALLOC from the trace.  The candidates are replayed on the same
 *    device; one with no OOM "would have let it fit".
 *
 * Failure: every function returns 0 or a GM_E* code with err filled, and
 * fills its output on success only.
 */
#include "gmsim/advice.h"
#include "gmsim/attrs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/device.h"
#include "gmsim/sweep.h"
#include "base/bits.h"
#include "base/vec.h"
#include "sim/torch_rules.h"

/* ---- helpers ----------------------------------------------------------------- */

/* dst = src's policy with src's values (keep != 0) or its defaults, then
 * key=value when key is not NULL.  The errors of gm_params_init/set. */
static int advice_params(gm_params_t *dst, const gm_params_t *src, int keep, const char *key,
                         const char *value, gm_error_t *err)
{
    int rc = gm_params_init(dst, src->ops, err);
    for (size_t i = 0; rc == 0 && keep && i < src->ops->nparams; i++) {
        const gm_param_spec_t *spec = &src->ops->params[i];
        if (spec->type == GM_PARAM_STRING)
            rc = gm_params_set(dst, spec->name, src->values[i].s ? src->values[i].s : "", err);
        else
            dst->values[i] = src->values[i];
    }
    if (rc == 0 && keep)
        dst->set = src->set;
    if (rc == 0 && key != NULL)
        rc = gm_params_set(dst, key, value, err);
    if (rc)
        gm_params_release(dst);
    return rc;
}

/* A fresh parameter set of policy `name` with key=value pairs (NULL
 * ends); GM_EINVAL for an unknown policy. */
static int advice_set(gm_params_t *dst, const char *name, const char *const *kv, gm_error_t *err)
{
    const gm_policy_ops_t *ops = gm_policy_find(name);
    if (ops == NULL)
        return gm_error_set(err, GM_EINVAL, "no policy '%s'", name);
    int rc = gm_params_init(dst, ops, err);
    for (size_t k = 0; rc == 0 && kv && kv[k]; k += 2)
        rc = gm_params_set(dst, kv[k], kv[k + 1], err);
    if (rc)
        gm_params_release(dst);
    return rc;
}

/* ---- the frame to show of a stack ------------------------------------------------- */

/* Whether line[0..len) contains needle. */
static int advice_line_has(const char *line, size_t len, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= len; i++)
        if (memcmp(line + i, needle, k) == 0)
            return 1;
    return 0;
}

/* A Python frame of the application: a .py file named by an absolute path
 * outside installed packages, or by a bare file name (a script run from its
 * folder).  Snapshots write the frames of installed packages relative to
 * site-packages ("torch/nn/modules/module.py:1750:_call_impl",
 * "einops/einops.py:916:einsum"), so a relative path with a folder is a
 * package's, and the standard library sits under ".../lib/pythonX.Y/". */
static int advice_user_frame(const char *line, size_t len)
{
    size_t path = 0;
    while (path + 4 <= len && memcmp(line + path, ".py:", 4) != 0)
        path++;
    if (path + 4 > len)
        return 0;
    if (advice_line_has(line, path, "site-packages/") ||
        advice_line_has(line, path, "dist-packages/") || advice_line_has(line, path, "/lib/python"))
        return 0;
    return line[0] == '/' || !advice_line_has(line, path, "/");
}

size_t gm_site_frame(const char *frames, char *buf, size_t len)
{
    if (len == 0)
        return 0;
    const char *pick = NULL, *py = NULL, *node = NULL;
    size_t pick_len = 0, py_len = 0, node_len = 0;
    for (const char *p = frames ? frames : ""; *p && pick == NULL;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n && advice_user_frame(p, n)) {
            pick = p;
            pick_len = n;
        } else if (n && py == NULL && advice_line_has(p, n, ".py:")) {
            py = p;
            py_len = n;
        } else if (n && node == NULL && advice_line_has(p, n, "Backward")) {
            node = p;
            node_len = n;
        }
        p += n + (nl != NULL);
    }
    if (pick == NULL && py) {
        pick = py;
        pick_len = py_len;
    }
    if (pick == NULL && node) {
        pick = node;
        pick_len = node_len;
    }
    if (pick == NULL) {
        pick = frames ? frames : "";
        pick_len = strcspn(pick, "\n");
    }
    if (!advice_line_has(pick, pick_len, ".py:")) { /* a C++ frame without its arguments */
        size_t paren = 0;
        while (paren < pick_len && pick[paren] != '(')
            paren++;
        pick_len = paren;
    }
    if (pick_len >= len)
        pick_len = len - 1;
    memcpy(buf, pick, pick_len);
    buf[pick_len] = '\0';
    return pick_len;
}

int gm_policy_has_start(const gm_policy_ops_t *ops)
{
    for (size_t i = 0; i < ops->nparams; i++)
        if (strcmp(ops->params[i].name, "start") == 0 && ops->params[i].type == GM_PARAM_ENUM &&
            ops->params[i].choices && strcmp(ops->params[i].choices, "recorded|empty") == 0)
            return 1;
    return 0;
}

/* The recording's own peak reserved (attribute recorded.peak_reserved), 0
 * when absent. */
static uint64_t advice_recorded(const char *attrs)
{
    char rec[1024], num[64];
    if (attrs == NULL || !gm_json_member(attrs, "recorded", rec, sizeof rec) ||
        !gm_json_member(rec, "peak_reserved", num, sizeof num))
        return 0;
    char *end;
    unsigned long long v = strtoull(num, &end, 10);
    return *end == '\0' && num[0] >= '0' && num[0] <= '9' ? (uint64_t)v : 0;
}

static void advice_sets_free(gm_params_t *sets, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gm_params_release(&sets[i]);
}

/* The same answer: peak reserved and OOMs (a setting may move blocks
 * about, and so allocated bytes, without changing what the job needs). */
static int advice_same(const gm_metrics_t *a, const gm_metrics_t *b)
{
    return a->peak_reserved == b->peak_reserved && a->ooms == b->ooms;
}

/* The replay settings of an advice run: cfg's (the defaults when NULL),
 * without a timeline or a progress callback. */
static void advice_config(gm_replay_config_t *c, const gm_replay_config_t *cfg)
{
    if (cfg)
        *c = *cfg;
    else
        gm_replay_config_default(c);
    c->timeline_points = 0;
    c->progress = NULL;
}

/* ---- warm and cold ----------------------------------------------------------------- */

int gm_start_compare(gm_store_t *s, const char *name, const gm_params_t *set,
                     const gm_replay_config_t *cfg, gm_start_compare_t *out, gm_error_t *err)
{
    if (!gm_policy_has_start(set->ops))
        return gm_error_set(err, GM_EINVAL, "policy %s cannot start from a recorded layout",
                            set->ops->name);
    gm_layout_t *layout = NULL;
    int rc = gm_store_layout(s, name, &layout, err);
    if (rc)
        return rc;
    gm_start_compare_t c;
    memset(&c, 0, sizeof c);
    if (layout != NULL) {
        c.layout_segments = layout->nsegments;
        for (size_t k = 0; k < layout->nsegments; k++)
            c.layout_reserved += layout->segments[k].size;
    }
    gm_layout_free(layout);
    if (c.layout_segments == 0)
        return gm_error_set(err, GM_ENOTFOUND, "trace '%s' has no recorded starting layout",
                            name);
    gm_params_t sets[4];
    size_t n = 0;
    static const char *const start[4] = {"recorded", "recorded", "empty", "empty"};
    for (; rc == 0 && n < 4; n++)
        if ((rc = advice_params(&sets[n], set, n % 2, "start", start[n], err)) != 0)
            break;
    gm_compare_trace_t t;
    gm_replay_config_t rc_cfg;
    advice_config(&rc_cfg, cfg);
    if (rc == 0 && (rc = gm_compare_trace(s, name, sets, 4, &rc_cfg, &t, err)) == 0) {
        c.recorded = advice_recorded(t.info.attrs);
        c.warm_default = t.runs[0].metrics;
        c.warm = t.runs[1].metrics;
        c.cold_default = t.runs[2].metrics;
        c.cold = t.runs[3].metrics;
        c.verdict = !advice_same(&c.warm, &c.warm_default)  ? GM_START_ACTS
                    : !advice_same(&c.cold, &c.cold_default) ? GM_START_INERT_WARM
                                                             : GM_START_INERT;
        gm_compare_trace_release(&t);
        *out = c;
    }
    advice_sets_free(sets, n);
    return rc;
}

/* ---- PyTorch settings ----------------------------------------------------------------- */

/* The grid: a conf string for caching (NULL: the cudaMallocAsync backend,
 * the async policy with PyTorch's release threshold). */
typedef struct advice_cand {
    const char *conf;
    int finite_only; /* needs a finite device (a memory fraction to act on) */
} advice_cand_t;

static const advice_cand_t advice_grid[] = {
    {"expandable_segments:True", 0},
    {"max_split_size_mb:128", 0},
    {"max_split_size_mb:512", 0},
    {"roundup_power2_divisions:4", 0},
    {"roundup_power2_divisions:8", 0},
    {"expandable_segments:True,roundup_power2_divisions:4", 0},
    {"garbage_collection_threshold:0.8", 1},
    {NULL, 0},
};

/* Whether attrs are a PyTorch trace's: 2 synthesized (no recorded run), 1
 * recorded, 0 not PyTorch. */
static int advice_torch_kind(const char *attrs)
{
    char src[64];
    if (attrs == NULL)
        return 0;
    if (gm_json_member(attrs, GM_ATTR_SOURCE, src, sizeof src)) {
        if (strcmp(src, "torch_snapshot") == 0)
            return 1;
        if (strcmp(src, "synth") == 0 && gm_json_member(attrs, GM_ATTR_MODEL, src, sizeof src))
            return 2; /* a model trace, as PyTorch runs it */
    }
    char *buf = malloc(65536); /* read only for its presence */
    int found = buf != NULL && gm_json_member(attrs, GM_ATTR_ALLOCATOR_SETTINGS, buf, 65536);
    free(buf);
    return found;
}

/* Fill sets with the baseline (sets[0]) and the grid's candidates for a
 * device of capacity cap; opt[i] describes sets[i + 1].  *n: sets made.
 * The errors of gm_params_*. */
static int advice_torch_sets(uint64_t cap, int npu, gm_params_t *sets, size_t *n,
                             gm_torch_option_t *opt, size_t *nopt, gm_error_t *err)
{
    const char *env = npu ? "PYTORCH_NPU_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
    static const char *const cold[] = {"start", "empty", NULL};
    *n = *nopt = 0;
    int rc = advice_set(&sets[0], "caching", cold, err);
    if (rc)
        return rc;
    *n = 1;
    for (size_t g = 0; g < sizeof advice_grid / sizeof advice_grid[0]; g++) {
        const advice_cand_t *c = &advice_grid[g];
        if ((c->finite_only && cap == 0) || (c->conf == NULL && npu))
            continue; /* no fraction to collect under; no cudaMallocAsync on an NPU */
        gm_torch_option_t *o = &opt[*nopt];
        memset(o, 0, sizeof *o);
        if (c->conf == NULL) {
            static const char *const async[] = {"release_threshold", "none", NULL};
            rc = advice_set(&sets[*n], "async", async, err);
            snprintf(o->label, sizeof o->label, "backend:cudaMallocAsync");
        } else if (c->finite_only) {
            /* garbage collection acts only under a memory fraction */
            const char *kv[] = {"start", "empty", "conf", c->conf, "memory_fraction", "1", NULL};
            rc = advice_set(&sets[*n], "caching", kv, err);
            snprintf(o->label, sizeof o->label, "%s", c->conf);
        } else {
            const char *kv[] = {"start", "empty", "conf", c->conf, NULL};
            rc = advice_set(&sets[*n], "caching", kv, err);
            snprintf(o->label, sizeof o->label, "%s", c->conf);
        }
        if (rc)
            return rc;
        snprintf(o->setting, sizeof o->setting, "%s=%s%s", env, o->label,
                 c->finite_only ? " with set_per_process_memory_fraction(1.0)" : "");
        (*n)++;
        (*nopt)++;
    }
    return 0;
}

int gm_torch_advise(gm_store_t *s, const char *name, const gm_replay_config_t *cfg,
                    gm_torch_advice_t *out, gm_error_t *err)
{
    gm_torch_advice_t a;
    memset(&a, 0, sizeof a);
    a.best = -1;
    gm_trace_info_t info;
    int rc = gm_store_find(s, name, &info, err);
    if (rc)
        return rc;
    int kind = advice_torch_kind(info.attrs);
    char pad[32];
    int npu = gm_json_member(info.attrs, GM_ATTR_BLOCK_PAD, pad, sizeof pad); /* the Ascend build */
    a.recorded = advice_recorded(info.attrs);
    gm_trace_info_release(&info);
    if (kind == 0) {
        *out = a;
        return 0;
    }
    a.torch = 1;
    a.synthesized = kind == 2;
    gm_replay_config_t c;
    advice_config(&c, cfg);
    gm_params_t sets[GM_TORCH_OPTIONS + 1];
    size_t n = 0;
    rc = advice_torch_sets(c.device.capacity, npu, sets, &n, a.options, &a.noptions, err);
    gm_compare_trace_t t;
    if (rc == 0 && (rc = gm_compare_trace(s, name, sets, n, &c, &t, err)) == 0) {
        a.baseline = t.runs[0].metrics.peak_reserved;
        a.baseline_ooms = t.runs[0].metrics.ooms;
        for (size_t i = 0; i < a.noptions; i++) {
            const gm_metrics_t *m = &t.runs[i + 1].metrics;
            a.options[i].peak_reserved = m->peak_reserved;
            a.options[i].ooms = m->ooms;
            if (m->ooms == 0 &&
                (m->peak_reserved < a.baseline || a.baseline_ooms != 0) &&
                (a.best < 0 || m->peak_reserved < a.options[a.best].peak_reserved))
                a.best = (int)i;
        }
        gm_compare_trace_release(&t);
        *out = a;
    }
    advice_sets_free(sets, n);
    return rc;
}

void gm_torch_advice_text(const gm_torch_advice_t *a, char *buf, size_t len)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    if (!a->torch)
        return;
    char base[32], best[32], rec[64] = "", save[32];
    gm_format_size(a->baseline, base, sizeof base);
    if (a->recorded) {
        char r[32];
        gm_format_size(a->recorded, r, sizeof r);
        snprintf(rec, sizeof rec, "; recorded: %s", r);
    }
    const char *against = a->synthesized ? "PyTorch's defaults" : "the recorded run's settings";
    if (a->best < 0) {
        snprintf(buf, len,
                 "keep %s: none of the %zu settings tried reserves less than their %s "
                 "(replayed from an empty allocator, as a new job starts%s)",
                 a->synthesized ? "PyTorch's defaults" : "the recorded settings", a->noptions,
                 base, rec);
        return;
    }
    const gm_torch_option_t *o = &a->options[a->best];
    gm_format_size(o->peak_reserved, best, sizeof best);
    if (a->baseline_ooms) {
        snprintf(buf, len, "%s fits where %s run out of memory: %s (replayed from an empty "
                 "allocator, as a new job starts%s)", o->setting, against, best, rec);
        return;
    }
    gm_format_size(a->baseline - o->peak_reserved, save, sizeof save);
    snprintf(buf, len,
             "%s saves %s (%.1f%%) against %s: %s instead of %s, both replayed from an "
             "empty allocator as a new job starts%s",
             o->setting, save,
             100.0 * (double)(a->baseline - o->peak_reserved) / (double)a->baseline, against,
             best, base, rec);
}

/* ---- OOMs ------------------------------------------------------------------------ */

typedef struct advice_live {
    uint64_t addr, id;
} advice_live_t;

void gm_oom_walk_fn(void *ctx, const gm_walk_block_t *w)
{
    gm_oom_walk_t *a = ctx;
    if (a->nomem)
        return;
    if (a->nseg == 0 || a->seg[a->nseg - 1].addr != w->seg_addr) {
        if (GM_VEC_RESERVE(a->seg, a->segcap, a->nseg + 1, 64)) {
            a->nomem = 1;
            return;
        }
        a->seg[a->nseg++] = (gm_oom_segment_t){.addr = w->seg_addr, .size = w->seg_size,
                                               .stream = w->stream, .pool = w->pool,
                                               .first = a->n};
    }
    if (GM_VEC_RESERVE(a->b, a->cap, a->n + 1, 256)) {
        a->nomem = 1;
        return;
    }
    gm_oom_segment_t *s = &a->seg[a->nseg - 1];
    a->b[a->n++] = (gm_oom_block_t){.addr = w->addr, .size = w->size, .allocated = w->allocated,
                                    .id = UINT64_MAX};
    s->n++;
    if (!w->allocated) {
        s->free_bytes += w->size;
        if (w->size > s->largest_free)
            s->largest_free = w->size;
    }
}

typedef struct advice_lives {
    advice_live_t *v;
    size_t n;
    uint64_t bytes; /* their blocks' sizes */
} advice_lives_t;

static void advice_live_fn(void *ctx, uint64_t id, const gm_block_t *blk)
{
    advice_lives_t *l = ctx;
    if (blk->addr != UINT64_MAX) {
        l->v[l->n++] = (advice_live_t){blk->addr, id};
        l->bytes += blk->size;
    }
}

static int advice_live_cmp(const void *x, const void *y)
{
    const advice_live_t *a = x, *b = y;
    return gm__cmp_u64(a->addr, b->addr);
}

/* Segments that could have served the request first, then by free bytes. */
static int advice_seg_cmp(const void *x, const void *y)
{
    const gm_oom_segment_t *a = x, *b = y;
    if (a->serves != b->serves)
        return a->serves ? -1 : 1;
    int c = gm__cmp_u64(b->free_bytes, a->free_bytes);
    return c ? c : gm__cmp_u64(a->addr, b->addr);
}

void gm_oom_report_release(gm_oom_report_t *r)
{
    for (size_t i = 0; i < r->nblocks; i++)
        free(r->blocks[i].frames);
    free(r->blocks);
    free(r->segments);
    memset(r, 0, sizeof *r);
    r->event = -1;
    r->best_fit = -1;
}

/* Per allocation id: its ALLOC's event, size and frames (ids are dense). */
typedef struct advice_alloc {
    uint64_t event, size;
    uint32_t frames;
} advice_alloc_t;

/* Replay `name` through set up to and including event `stop`, then walk
 * the policy into o.  The errors of the reader and the engine. */
static int advice_oom_state(gm_store_t *s, const char *name, const gm_params_t *set,
                            const gm_replay_config_t *cfg, uint64_t stop, gm_oom_report_t *o,
                            gm_error_t *err)
{
    gm_reader_t *rd = NULL;
    gm_replay_t *r = NULL;
    gm_layout_t *layout = NULL;
    advice_alloc_t *al = NULL;
    gm_oom_walk_t w = {0};
    advice_lives_t lives = {0};
    int rc = gm_reader_open(s, name, &rd, err);
    if (rc)
        return rc;
    const gm_trace_info_t *info = gm_reader_info(rd);
    size_t nal = (size_t)info->allocs;
    if ((al = calloc(nal ? nal : 1, sizeof *al)) == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = gm_replay_create(cfg, &r, err)) || (rc = gm_replay_add(r, set, err)) ||
        (rc = gm_store_layout(s, name, &layout, err)))
        goto out;
    gm_replay_set_empty_cache_tag(r, gm_reader_find_tag(rd, "empty_cache"));
    gm_replay_set_sync_tag(r, gm_reader_find_tag(rd, "synchronize"));
    gm_trace_context_t ctx = {.name = name, .attrs = info->attrs, .layout = layout,
                              .events = info->events};
    if ((rc = gm_replay_prepare(r, &ctx, err)))
        goto out;
    uint64_t index = 0;
    const gm_event_t *ev;
    size_t n;
    while (index <= stop && (rc = gm_reader_next(rd, &ev, &n, err)) == 0 && n > 0) {
        size_t m = stop - index + 1 < n ? (size_t)(stop - index + 1) : n;
        for (size_t i = 0; i < m; i++)
            if (ev[i].op == GM_OP_ALLOC && ev[i].id < nal)
                al[ev[i].id] = (advice_alloc_t){index + i, ev[i].size, ev[i].frames};
        if (index + m - 1 == stop) {
            o->request = ev[m - 1].size;
            o->stream = ev[m - 1].stream;
        }
        if ((rc = gm_replay_feed(r, ev, m, err)))
            goto out;
        index += m;
    }
    if (rc)
        goto out;
    gm_policy_t *p = gm_replay_policy(r, 0);
    o->reserved = p->dev->reserved;
    o->capacity = cfg->device.capacity;
    lives.v = malloc((nal + 1) * sizeof *lives.v);
    if (lives.v == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    gm_replay_live(r, 0, advice_live_fn, &lives);
    o->allocated = lives.bytes;
    qsort(lives.v, lives.n, sizeof *lives.v, advice_live_cmp);
    for (size_t i = 0; i < lives.n; i++) {
        if (lives.v[i].id < nal) {
            o->requested_live += al[lives.v[i].id].size;
        }
    }
    if (gm_policy_walk(p, gm_oom_walk_fn, &w) != 0)
        goto out;
    if (w.nomem) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    o->walked = 1;
    for (size_t i = 0; i < w.n; i++) {
        gm_oom_block_t *b = &w.b[i];
        if (!b->allocated)
            continue;
        advice_live_t key = {b->addr, 0};
        advice_live_t *hit = bsearch(&key, lives.v, lives.n, sizeof *lives.v, advice_live_cmp);
        if (hit == NULL || hit->id >= nal)
            continue; /* a recorded block its ALLOC has not claimed yet */
        b->id = hit->id;
        b->requested = al[hit->id].size;
        b->event = al[hit->id].event;
        const char *fr = al[hit->id].frames ? gm_reader_frames(rd, al[hit->id].frames) : NULL;
        if (fr != NULL && fr[0] != '\0' && (b->frames = strdup(fr)) == NULL) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            goto out;
        }
    }
    /* caching serves a request from its stream's pool: requests above
     * 1 MiB (kSmallSize) from the large one (0); other policies from any
     * segment */
    int pool = strcmp(p->ops->name, "caching") == 0 ? (o->request > GM_TORCH_SMALL_SIZE ? 0 : 1)
                                                    : -1;
    for (size_t i = 0; i < w.nseg; i++)
        w.seg[i].serves = pool < 0 || (w.seg[i].stream == o->stream && w.seg[i].pool == pool);
    qsort(w.seg, w.nseg, sizeof *w.seg, advice_seg_cmp);
    o->blocks = w.b;
    o->nblocks = w.n;
    o->segments = w.seg;
    o->nsegments = w.nseg;
    w.b = NULL;
    w.seg = NULL;
    w.n = 0;
out:
    for (size_t i = 0; i < w.n; i++)
        free(w.b[i].frames);
    free(w.b);
    free(w.seg);
    free(lives.v);
    free(al);
    gm_layout_free(layout);
    gm_replay_destroy(r);
    gm_reader_close(rd);
    return rc;
}

int gm_oom_explain(gm_store_t *s, const char *name, const gm_params_t *set,
                   const gm_replay_config_t *cfg, gm_oom_report_t *out, gm_error_t *err)
{
    gm_oom_report_t o;
    memset(&o, 0, sizeof o);
    o.event = -1;
    o.best_fit = -1;
    snprintf(o.policy, sizeof o.policy, "%s", set->ops->name);
    gm_replay_config_t c;
    advice_config(&c, cfg);
    c.defrag_every = 0;
    c.defrag_at = NULL;

    /* the candidates first: the run itself, then the settings to try */
    gm_params_t sets[GM_TORCH_OPTIONS + 2];
    size_t n = 0, nopt = 0;
    int rc = advice_params(&sets[0], set, 1, NULL, NULL, err);
    if (rc)
        return rc;
    n = 1;
    size_t first = 1; /* sets[first + i] is o.fits[i] */
    if (strcmp(set->ops->name, "caching") == 0) {
        size_t m = 0; /* sets[1]: the trace's settings cold, then the grid */
        gm_trace_info_t info;
        char pad[32];
        int npu = 0;
        if ((rc = gm_store_find(s, name, &info, err)) != 0) {
            advice_sets_free(sets, n);
            return rc;
        }
        npu = gm_json_member(info.attrs, GM_ATTR_BLOCK_PAD, pad, sizeof pad);
        gm_trace_info_release(&info);
        rc = advice_torch_sets(c.device.capacity, npu, sets + 1, &m, o.fits, &nopt, err);
        n += m;
        first = 2;
    } else {
        for (size_t i = 0; rc == 0 && i < gm_policy_count() && nopt < GM_TORCH_OPTIONS; i++) {
            const gm_policy_ops_t *ops = gm_policy_at(i);
            if (ops == set->ops || ops->role == GM_ROLE_BOUND || ops->role == GM_ROLE_REFERENCE)
                continue; /* planners cannot be set; native caches nothing */
            if ((rc = gm_params_init(&sets[n], ops, err)) != 0)
                break;
            n++;
            snprintf(o.fits[nopt].label, sizeof o.fits[nopt].label, "%s", ops->name);
            snprintf(o.fits[nopt].setting, sizeof o.fits[nopt].setting, "--policy %s",
                     ops->name);
            nopt++;
        }
    }
    gm_compare_trace_t t;
    if (rc == 0 && (rc = gm_compare_trace(s, name, sets, n, &c, &t, err)) == 0) {
        o.event = t.runs[0].metrics.first_oom_event;
        for (size_t i = 0; i < nopt; i++) {
            o.fits[i].peak_reserved = t.runs[first + i].metrics.peak_reserved;
            o.fits[i].ooms = t.runs[first + i].metrics.ooms;
            if (o.fits[i].ooms == 0 &&
                (o.best_fit < 0 || o.fits[i].peak_reserved < o.fits[o.best_fit].peak_reserved))
                o.best_fit = (int)i;
        }
        o.nfits_tried = nopt;
        gm_compare_trace_release(&t);
    }
    advice_sets_free(sets, n);
    if (rc == 0 && o.event >= 0 && (set->ops->flags & GM_POLICY_NEEDS_LIFETIMES) == 0)
        rc = advice_oom_state(s, name, set, &c, (uint64_t)o.event, &o, err);
    if (rc) {
        gm_oom_report_release(&o);
        return rc;
    }
    *out = o;
    return 0;
}
