/*
 * report/report.c — the HTML (or Markdown) report of stored runs (API in
 * gmsim/report.h, user guide in docs/report.md).
 *
 * Data.  Every store given is opened read only; its traces and runs are
 * listed.  Runs are de-duplicated by key (the first store, lowest id wins)
 * and grouped by (trace digest, device): a group is one section of the
 * report.  Its name, attributes and frames come from a trace with that
 * digest in any store given (the runs table keeps the name it ran under
 * as a fallback).  Within a group:
 *   - the offline bound is the least peak of the policies whose role is
 *     GM_ROLE_BOUND (they plan with the whole future);
 *   - the winner is the run with the least peak reserved among the
 *     contenders, without OOMs; references (GM_ROLE_REFERENCE, like native:
 *     a device call per request, at load by construction) and bounds are
 *     not contenders, and count only when nothing else ran (runs with OOMs
 *     last);
 *   - the baseline is the GM_ROLE_BASELINE policy (`caching`) with every
 *     parameter at its default;
 *   - the runs drawn are the best configuration of each policy (the
 *     baseline too when it is not its policy's best), so a sweep of many
 *     parameter values stays readable; the table at the end has them all;
 *   - labels are cut to GM_LABEL_MAX characters among the group's labels
 *     (gm_label_cut: what tells them apart is kept), the whole label a
 *     tooltip (a title attribute, or a <title> inside SVG text).
 * Traces of other names with the same events as one found first are
 * counted (stats->same_content) for the front end to say so.
 *
 * Output.  One HTML file, no reference to anything outside it: inline CSS,
 * SVG drawn here (no xmlns attribute needed inline), one inline script
 * (the table sort, the hover, the legend toggles and a #selftest).  Links
 * are fragments only (the contents, the heat map's rows).  Every text from
 * a store goes through report_esc, which also writes ':' as a character
 * reference, so no text from a trace can form a URL scheme, a tag or an
 * attribute; the script puts texts in the page through textContent only.
 * Timelines are reduced to at most REPORT_POINTS points per line (maxima
 * per bucket, so peaks stay visible) and coordinates are integers.
 *
 * Interaction.  The page works without its script (static SVG); with it:
 *   - hover: every series (polyline.sr) carries its values (data-v, exact
 *     bytes, or fractions) and, when they differ from its chart's, its x
 *     values (data-e); the hover shows, for the pointer's x, the nearest
 *     point of each visible series.  Bars, waste segments and heat map
 *     cells carry data-n (name), data-v (bytes) and data-d (a detail line).
 *     The script formats bytes exactly as gm_format_size does;
 *   - legend: an entry's data-s key hides, in its figure, every element
 *     whose data-s lists that key (a run's two lines share "rN");
 *   - #selftest: the page drives those handlers with dispatched mouse
 *     events and writes what it saw into a pre element (id selftest), which
 *     tests/test_report.c reads from Chromium's --dump-dom.
 *
 * Colours: one per policy, by name (report_palette), in every chart and
 * every report; the baseline, when drawn beside its policy's best, is
 * dash-dotted.
 *
 * Waste at the peak (t*: of the events at the reserved peak, the one with
 * the most allocated bytes; docs/metrics.md) is split from the stored
 * metrics: allocated = reserved × (1 − frag_at_peak); internal (rounding)
 * = internal_waste_at_peak; free = reserved − allocated, of which external
 * (free but unusable: not in the largest free block) = free ×
 * external_frag_at_peak, and the rest is the largest free block.
 *
 * Traces are read (once per digest, not per device) for their MARK events
 * (x-axis ticks: step, forward, backward; REPORT_MARKS at most) and, with
 * frames and sites wanted, for the live allocations at the load peak (the
 * first event at which requested bytes reach their maximum: one instant
 * per trace, the same for every policy, since the live set does not depend
 * on the allocator).  They are grouped by stack (interned frames) and the
 * stacks by site (report_site_frame: the innermost frame of the
 * application), the REPORT_SITES largest sites with their REPORT_STACKS
 * largest stacks; two passes over the trace.
 */
#include "gmsim/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "gmsim/attrs.h"
#include "base/bits.h"
#include "gmsim/device.h"
#include "gmsim/policy.h"
#include "gmsim/replay.h"
#include "gmsim/store.h"
#include "gmsim/advice.h"
#include "gmsim/sweep.h"
#include "gmsim/version.h"

#define REPORT_POINTS 300
#define REPORT_SITES 12       /* sites shown per trace */
#define REPORT_STACKS 5       /* stacks shown per site */
#define REPORT_STACK_LINES 48 /* frames shown per stack */
#define REPORT_LINE_CHARS 200 /* characters shown per frame */
#define REPORT_MARKS 4096     /* MARK events kept per trace */

typedef struct report_store {
    const char *path;
    gm_store_t *s;
    gm_trace_info_t *traces;
    size_t ntraces;
    gm_run_info_t *runs;
    size_t nruns;
} report_store_t;

typedef struct report_run {
    size_t store;
    const gm_run_info_t *info;
    gm_metrics_t m;
    const gm_policy_ops_t *ops; /* NULL for a policy this build lacks */
    char label[160];
    char cut[160]; /* label cut to GM_LABEL_MAX among its group's (gm_label_cut) */
    uint64_t capacity;
    int bound;    /* a planner: drawn as the offline bound */
    int baseline; /* caching with default parameters */
    int reference; /* caches nothing (no empty_cache): not a contender */
    int has_plan;  /* a planner's run stored with its plan (gm_plan_parse) */
    gm_plan_info_t plan;
    size_t group;
} report_run_t;

/* One stack (interned frames) live at the load peak. */
typedef struct report_stack {
    uint32_t frames;
    uint64_t bytes, count;
    char *text; /* its frames, cut for the page (kept stacks only) */
} report_stack_t;

/* An allocation site: the stacks whose site frame (report_site_frame) is
 * the same, by bytes. */
typedef struct report_site {
    char *name;
    uint64_t bytes, count;
    report_stack_t *stacks; /* the REPORT_STACKS largest */
    size_t nstacks, nstacks_all;
} report_site_t;

/* A MARK event of the trace, drawn as an x-axis tick. */
typedef struct report_mark {
    uint64_t event;
    uint32_t tag;
    uint8_t kind; /* REPORT_MARK_* */
} report_mark_t;

enum { REPORT_MARK_STEP, REPORT_MARK_FORWARD, REPORT_MARK_BACKWARD, REPORT_MARK_OTHER };

typedef struct report_group {
    const char *digest;
    const char *device;
    const char *name;
    const char *attrs; /* NULL when no store has the trace */
    size_t store;      /* where the trace is, when attrs */
    int64_t seq_len;
    char model[128];
    uint64_t events, load, capacity;
    size_t *runs; /* by peak reserved, then label */
    size_t nruns;
    size_t *shown; /* the runs drawn */
    size_t nshown;
    ssize_t winner, baseline, bound;
    report_site_t *sites;
    size_t nsites;
    uint64_t sites_total, sites_live, sites_stacks;
    size_t sites_all; /* sites at the peak, nsites of them kept */
    uint64_t peak_event; /* first event at which requested bytes peak */
    size_t trace_of;     /* the group whose read holds this trace's marks */
    report_mark_t *marks;
    size_t nmarks;
    char **tags; /* the trace's tag names, by index */
    uint32_t ntags;
} report_group_t;

typedef struct report {
    const gm_report_config_t *cfg;
    FILE *f;
    report_store_t *stores;
    report_run_t *runs;
    size_t nruns;
    report_group_t *groups;
    size_t ngroups;
    int many_devices;
    gm_error_t *err;
} report_t;

/* One colour per policy, by name, in every chart and every report; a policy
 * this table lacks gets one of report_extra by a hash of its name. */
static const struct {
    const char *policy, *color;
} report_palette[] = {
    {"caching", "#1f77b4"}, {"bfc", "#2ca02c"},    {"pool", "#ff7f0e"},
    {"binning", "#8c564b"}, {"async", "#17becf"},  {"buddy", "#e377c2"},
    {"tlsf", "#d62728"},    {"native", "#7f7f7f"}, {"offline", "#9467bd"},
};
static const char *const report_extra[] = {"#393b79", "#637939", "#8c6d31", "#843c39",
                                           "#7b4173", "#3182bd", "#31a354", "#e6550d"};
#define REPORT_NPALETTE (sizeof report_palette / sizeof report_palette[0])
#define REPORT_NEXTRA (sizeof report_extra / sizeof report_extra[0])

/* A planner's plan as the report shows it: "optimal" (proved), else the
 * status and how far above the lower bound it may be; "" without a plan. */
static const char *report_plan_text(const report_run_t *r, char *buf, size_t len)
{
    if (!r->has_plan)
        return "";
    const gm_plan_info_t *pi = &r->plan;
    double gap = gm_plan_gap(pi);
    if (pi->status == GM_PLAN_OPTIMAL || gap == 0.0)
        snprintf(buf, len, "%s", gm_plan_status_name(pi->status));
    else
        snprintf(buf, len, "%s, at most %.2f%% above the optimum",
                 gm_plan_status_name(pi->status), gap * 100);
    return buf;
}

/* ---- escaping -------------------------------------------------------------- */

/* Text for HTML content and attribute values. */
static void report_esc(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        case ':': fputs("&#58;", f); break;
        case '\n': fputc('\n', f); break;
        case '\t': fputc(' ', f); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fputc('?', f);
            else
                fputc(*p, f);
        }
    }
}

/* Text for a Markdown table cell. */
static void report_md_esc(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            fputc(' ', f);
        else if (*p == '<')
            fputs("&lt;", f);
        else if (*p == '>')
            fputs("&gt;", f);
        else if (*p == '&')
            fputs("&amp;", f);
        else if (strchr("|\\`*_[]()#!~", *p))
            fprintf(f, "\\%c", *p);
        else
            fputc(*p, f);
    }
}

static const char *report_size(uint64_t v, char *buf, size_t len)
{
    gm_format_size(v, buf, (unsigned)len);
    return buf;
}

static const char *report_policy_color(const char *policy)
{
    for (size_t i = 0; i < REPORT_NPALETTE; i++)
        if (strcmp(report_palette[i].policy, policy) == 0)
            return report_palette[i].color;
    unsigned h = 0;
    for (const char *p = policy; *p; p++)
        h = h * 31u + (unsigned char)*p;
    return report_extra[h % REPORT_NEXTRA];
}

static const char *report_color(const report_run_t *r)
{
    return report_policy_color(r->info->policy);
}

/* Palette position of a policy (unknown ones after, by name): the order
 * of the heat map's columns. */
static size_t report_policy_rank(const char *policy)
{
    for (size_t i = 0; i < REPORT_NPALETTE; i++)
        if (strcmp(report_palette[i].policy, policy) == 0)
            return i;
    return REPORT_NPALETTE;
}

/* ---- loading ---------------------------------------------------------------- */

static char *report_key(const gm_run_info_t *ri)
{
    size_t n = strlen(ri->trace_digest) + strlen(ri->policy) + strlen(ri->params) +
               strlen(ri->device) + strlen(ri->version) + 5;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%s\x1f%s\x1f%s\x1f%s\x1f%s", ri->trace_digest, ri->policy, ri->params,
                 ri->device, ri->version);
    return k;
}

typedef struct report_sortkey {
    char *key;
    size_t run;
} report_sortkey_t;

static int report_by_key(const void *a, const void *b)
{
    const report_sortkey_t *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->run < y->run ? -1 : x->run > y->run);
}

static const report_t *report_sort_ctx;

static int report_by_peak(const void *a, const void *b)
{
    const report_run_t *x = &report_sort_ctx->runs[*(const size_t *)a];
    const report_run_t *y = &report_sort_ctx->runs[*(const size_t *)b];
    if (x->m.peak_reserved != y->m.peak_reserved)
        return x->m.peak_reserved < y->m.peak_reserved ? -1 : 1;
    return strcmp(x->label, y->label);
}

static int report_by_group(const void *a, const void *b)
{
    const report_group_t *x = a, *y = b;
    if (x->seq_len != y->seq_len)
        return x->seq_len < y->seq_len ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->capacity < y->capacity ? -1 : x->capacity > y->capacity;
}

static int report_load_stores(report_t *R)
{
    const gm_report_config_t *cfg = R->cfg;
    R->stores = calloc(cfg->nstores ? cfg->nstores : 1, sizeof *R->stores);
    if (R->stores == NULL)
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    size_t total = 0;
    for (size_t i = 0; i < cfg->nstores; i++) {
        report_store_t *st = &R->stores[i];
        st->path = cfg->stores[i];
        int rc = gm_store_open(st->path, GM_STORE_READONLY, &st->s, R->err);
        if (rc == 0)
            rc = gm_store_list(st->s, &st->traces, &st->ntraces, R->err);
        if (rc == 0)
            rc = gm_store_list_runs(st->s, &st->runs, &st->nruns, R->err);
        if (rc)
            return rc;
        total += st->nruns;
    }
    R->runs = calloc(total ? total : 1, sizeof *R->runs);
    if (R->runs == NULL)
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    return 0;
}

/* The trace with this digest in any store: its info and store index. */
static const gm_trace_info_t *report_find_trace(const report_t *R, const char *digest,
                                                size_t *store)
{
    for (size_t i = 0; i < R->cfg->nstores; i++)
        for (size_t k = 0; k < R->stores[i].ntraces; k++)
            if (strcmp(R->stores[i].traces[k].digest, digest) == 0) {
                *store = i;
                return &R->stores[i].traces[k];
            }
    return NULL;
}

/* Traces of another name with the same events as one listed before them:
 * their runs share a key, so they make one section, under the first name.
 * Counted, and the first named, for the front end to say so. */
static void report_same_content(const report_t *R, gm_report_stats_t *stats)
{
    for (size_t i = 0; i < R->cfg->nstores; i++)
        for (size_t k = 0; k < R->stores[i].ntraces; k++) {
            const gm_trace_info_t *t = &R->stores[i].traces[k];
            if (!gm_trace_match(R->cfg->trace_glob, t->name))
                continue;
            size_t where;
            const gm_trace_info_t *first = report_find_trace(R, t->digest, &where);
            if (first == NULL || first == t || strcmp(first->name, t->name) == 0)
                continue;
            if (stats->same_content++ == 0)
                snprintf(stats->same_note, sizeof stats->same_note,
                         "'%s' in '%s' has the same events as '%s' in '%s'", t->name,
                         R->stores[i].path, first->name, R->stores[where].path);
        }
}

static int report_collect_runs(report_t *R, gm_report_stats_t *stats)
{
    size_t total = 0;
    for (size_t i = 0; i < R->cfg->nstores; i++)
        total += R->stores[i].nruns;
    report_sortkey_t *keys = calloc(total ? total : 1, sizeof *keys);
    if (keys == NULL)
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    int rc = 0;
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < R->cfg->nstores; i++)
        for (size_t k = 0; k < R->stores[i].nruns; k++) {
            const gm_run_info_t *ri = &R->stores[i].runs[k];
            report_run_t *r = &R->runs[n];
            if (gm_metrics_parse(ri->metrics, &r->m, NULL) != 0) {
                stats->skipped++;
                continue;
            }
            if (R->cfg->trace_glob) {
                size_t where;
                const gm_trace_info_t *t = report_find_trace(R, ri->trace_digest, &where);
                if (!gm_trace_match(R->cfg->trace_glob, t ? t->name : ri->trace))
                    continue;
            }
            r->store = i;
            r->info = ri;
            r->ops = gm_policy_find(ri->policy);
            r->bound = r->ops && r->ops->role == GM_ROLE_BOUND;
            r->reference = r->ops && r->ops->role == GM_ROLE_REFERENCE;
            r->has_plan = gm_plan_parse(ri->metrics, &r->plan);
            gm_config_label(ri->policy, ri->params, r->label, sizeof r->label);
            char cap[64];
            r->capacity = gm_json_member(ri->device, "capacity", cap, sizeof cap)
                              ? strtoull(cap, NULL, 10)
                              : 0;
            if (r->ops && r->ops->role == GM_ROLE_BASELINE) {
                gm_params_t def;
                if (gm_params_init(&def, r->ops, NULL) == 0) {
                    char *dj = gm_params_json(&def);
                    r->baseline = dj && strcmp(dj, ri->params) == 0;
                    free(dj);
                    gm_params_release(&def);
                }
            }
            keys[n].run = n;
            if ((keys[n].key = report_key(ri)) == NULL) {
                rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
                break;
            }
            n++;
        }
    /* De-duplicate by key, keeping the first (store order, then id). */
    size_t kept = 0;
    if (rc == 0) {
        qsort(keys, n, sizeof *keys, report_by_key);
        report_run_t *runs = calloc(n ? n : 1, sizeof *runs);
        if (runs == NULL) {
            rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < n; i++)
                if (i == 0 || strcmp(keys[i].key, keys[i - 1].key) != 0)
                    runs[kept++] = R->runs[keys[i].run];
            free(R->runs);
            R->runs = runs;
            R->nruns = kept;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(keys[i].key);
    free(keys);
    return rc;
}

static int report_group_runs(report_t *R)
{
    /* Groups by (digest, device), found by a linear scan per run: reports
     * hold hundreds to a few thousand runs. */
    size_t cap = 0;
    for (size_t i = 0; i < R->nruns; i++) {
        report_run_t *r = &R->runs[i];
        size_t g = 0;
        while (g < R->ngroups && !(strcmp(R->groups[g].digest, r->info->trace_digest) == 0 &&
                                   strcmp(R->groups[g].device, r->info->device) == 0))
            g++;
        if (g == R->ngroups) {
            if (R->ngroups == cap) {
                cap = cap ? 2 * cap : 16;
                report_group_t *ng = realloc(R->groups, cap * sizeof *ng);
                if (ng == NULL)
                    return gm_error_set(R->err, GM_ENOMEM, "out of memory");
                R->groups = ng;
            }
            report_group_t *gr = &R->groups[R->ngroups++];
            memset(gr, 0, sizeof *gr);
            gr->digest = r->info->trace_digest;
            gr->device = r->info->device;
            gr->capacity = r->capacity;
            gr->seq_len = -1;
            gr->name = r->info->trace;
            gr->events = r->m.events;
            gr->load = r->m.peak_requested;
            const gm_trace_info_t *t = report_find_trace(R, gr->digest, &gr->store);
            if (t) {
                gr->name = t->name;
                gr->attrs = t->attrs;
                gr->seq_len = gm_attr_int(t->attrs, GM_ATTR_SEQ_LEN);
                if (!gm_json_member(t->attrs, GM_ATTR_MODEL, gr->model, sizeof gr->model))
                    gr->model[0] = '\0';
            }
        }
        report_group_t *gr = &R->groups[g];
        size_t *nr = realloc(gr->runs, (gr->nruns + 1) * sizeof *nr);
        if (nr == NULL)
            return gm_error_set(R->err, GM_ENOMEM, "out of memory");
        gr->runs = nr;
        gr->runs[gr->nruns++] = i;
        r->group = g;
    }
    for (size_t g = 0; g < R->ngroups; g++)
        if (R->groups[g].capacity != R->groups[0].capacity)
            R->many_devices = 1;
    if (R->ngroups)
        qsort(R->groups, R->ngroups, sizeof *R->groups, report_by_group);
    report_sort_ctx = R;
    for (size_t g = 0; g < R->ngroups; g++) {
        report_group_t *gr = &R->groups[g];
        for (size_t k = 0; k < gr->nruns; k++)
            R->runs[gr->runs[k]].group = g;
        qsort(gr->runs, gr->nruns, sizeof *gr->runs, report_by_peak);
        gr->winner = gr->baseline = gr->bound = -1;
        for (int pass = 0; pass < 4 && gr->winner < 0; pass++)
            for (size_t k = 0; k < gr->nruns && gr->winner < 0; k++) {
                const report_run_t *r = &R->runs[gr->runs[k]];
                if ((pass < 1 && r->reference) || (pass < 2 && r->bound) ||
                    (pass < 3 && r->m.ooms))
                    continue;
                gr->winner = (ssize_t)gr->runs[k];
            }
        for (size_t k = 0; k < gr->nruns; k++) {
            const report_run_t *r = &R->runs[gr->runs[k]];
            if (r->bound && gr->bound < 0 && r->m.ooms == 0)
                gr->bound = (ssize_t)gr->runs[k];
            if (r->baseline && gr->baseline < 0)
                gr->baseline = (ssize_t)gr->runs[k];
        }
        /* Labels as charts and tables show them: cut to GM_LABEL_MAX,
         * told apart from the group's other labels. */
        const char **peers = malloc((gr->nruns ? gr->nruns : 1) * sizeof *peers);
        if (peers == NULL)
            return gm_error_set(R->err, GM_ENOMEM, "out of memory");
        for (size_t k = 0; k < gr->nruns; k++)
            peers[k] = R->runs[gr->runs[k]].label;
        for (size_t k = 0; k < gr->nruns; k++) {
            report_run_t *r = &R->runs[gr->runs[k]];
            gm_label_cut(r->label, peers, gr->nruns, GM_LABEL_MAX, "…", r->cut, sizeof r->cut);
        }
        free(peers);
        /* Shown: the best run of each online policy, and the baseline. */
        gr->shown = malloc((gr->nruns ? gr->nruns : 1) * sizeof *gr->shown);
        if (gr->shown == NULL)
            return gm_error_set(R->err, GM_ENOMEM, "out of memory");
        for (size_t k = 0; k < gr->nruns; k++) {
            const report_run_t *r = &R->runs[gr->runs[k]];
            if (r->bound)
                continue;
            int seen = 0;
            for (size_t s = 0; s < gr->nshown && !seen; s++)
                seen = strcmp(R->runs[gr->shown[s]].info->policy, r->info->policy) == 0;
            if (!seen || (ssize_t)gr->runs[k] == gr->baseline)
                gr->shown[gr->nshown++] = gr->runs[k];
        }
    }
    return 0;
}

typedef struct report_pair {
    uint32_t frames;
    uint64_t size;
} report_pair_t;

static int report_by_frames(const void *a, const void *b)
{
    const report_pair_t *x = a, *y = b;
    return x->frames < y->frames ? -1 : x->frames > y->frames;
}

static int report_stack_by_bytes(const void *a, const void *b)
{
    const report_stack_t *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->frames < y->frames ? -1 : x->frames > y->frames;
}

static int report_site_by_bytes(const void *a, const void *b)
{
    const report_site_t *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int report_mark_kind(const char *tag)
{
    char low[64];
    size_t n = 0;
    for (; tag && tag[n] && n < sizeof low - 1; n++)
        low[n] = (char)((tag[n] >= 'A' && tag[n] <= 'Z') ? tag[n] + 32 : tag[n]);
    low[n] = '\0';
    if (strstr(low, "backward"))
        return REPORT_MARK_BACKWARD;
    if (strstr(low, "forward"))
        return REPORT_MARK_FORWARD;
    if (strstr(low, "step"))
        return REPORT_MARK_STEP;
    return REPORT_MARK_OTHER;
}

/* Whether line[0..len) contains needle. */
static int report_line_has(const char *line, size_t len, const char *needle)
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
 * package's. */
static int report_user_frame(const char *line, size_t len)
{
    size_t path = 0;
    while (path + 4 <= len && memcmp(line + path, ".py:", 4) != 0)
        path++;
    if (path + 4 > len)
        return 0;
    if (report_line_has(line, path, "site-packages/") ||
        report_line_has(line, path, "dist-packages/") || report_line_has(line, path, "/lib/python"))
        return 0;
    return line[0] == '/' || !report_line_has(line, path, "/");
}

/* The site of a stack (innermost frame first, one a line): its innermost
 * frame of the application, else its innermost Python frame, else (a C++
 * stack, such as autograd's backward thread) its innermost autograd node
 * ("...BmmBackward0::apply"), else its innermost frame; a C++ frame without
 * its argument list.  Returns a malloc'd line, NULL when out of memory. */
static char *report_site_frame(const char *text)
{
    if (text == NULL)
        return strdup("(no frames recorded)");
    const char *pick = NULL, *py = NULL, *node = NULL;
    size_t pick_len = 0, py_len = 0, node_len = 0;
    for (const char *p = text; *p && pick == NULL;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len && report_user_frame(p, len)) {
            pick = p;
            pick_len = len;
        } else if (len && py == NULL && report_line_has(p, len, ".py:")) {
            py = p;
            py_len = len;
        } else if (len && node == NULL && report_line_has(p, len, "Backward")) {
            node = p;
            node_len = len;
        }
        p += len + (nl != NULL);
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
        pick = text;
        pick_len = strcspn(text, "\n");
    }
    if (!report_line_has(pick, pick_len, ".py:")) {
        size_t paren = 0;
        while (paren < pick_len && pick[paren] != '(')
            paren++;
        pick_len = paren;
    }
    if (pick_len > REPORT_LINE_CHARS)
        pick_len = REPORT_LINE_CHARS;
    char *out = malloc(pick_len + 1);
    if (out) {
        memcpy(out, pick, pick_len);
        out[pick_len] = '\0';
    }
    return out;
}

/* Frames as shown: each line cut at REPORT_LINE_CHARS, at most
 * REPORT_STACK_LINES lines, then a count of the rest.  Malloc'd or NULL. */
static char *report_stack_text(const char *text)
{
    if (text == NULL)
        return strdup("(no frames recorded)");
    /* A cut line grows by its "..." (3 bytes, at most 2 more than the part
     * left out), then the count of the frames left out. */
    size_t cap = strlen(text) + 3 * REPORT_STACK_LINES + 64, n = 0, lines = 0;
    char *out = malloc(cap);
    if (out == NULL)
        return NULL;
    const char *p = text;
    while (*p && lines < REPORT_STACK_LINES) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        size_t take = len > REPORT_LINE_CHARS ? REPORT_LINE_CHARS : len;
        memcpy(out + n, p, take);
        n += take;
        if (take < len) {
            memcpy(out + n, "...", 3);
            n += 3;
        }
        out[n++] = '\n';
        lines++;
        p += len + (nl != NULL);
    }
    size_t rest = 0;
    for (; *p; p++)
        rest += *p == '\n' || p[1] == '\0';
    if (rest)
        n += (size_t)snprintf(out + n, cap - n, "... %zu more frame%s\n", rest,
                              rest == 1 ? "" : "s");
    if (n && out[n - 1] == '\n')
        n--;
    out[n] = '\0';
    return out;
}

/* The live set (by allocation id) as (frames, size) pairs, grouped into
 * stacks and sites, the REPORT_SITES largest sites kept with their
 * REPORT_STACKS largest stacks.  GM_ENOMEM. */
static int report_group_sites(report_t *R, report_group_t *gr, gm_reader_t *rd,
                              const uint64_t *size, const uint32_t *fr, uint64_t allocs)
{
    report_pair_t *pairs = malloc((allocs ? allocs : 1) * sizeof *pairs);
    if (pairs == NULL)
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    size_t np = 0;
    for (uint64_t id = 0; id < allocs; id++)
        if (size[id])
            pairs[np++] = (report_pair_t){fr[id], size[id]};
    qsort(pairs, np, sizeof *pairs, report_by_frames);
    report_stack_t *stacks = malloc((np ? np : 1) * sizeof *stacks);
    report_site_t *sites = calloc(np ? np : 1, sizeof *sites);
    int rc = 0;
    size_t ns = 0, nsites = 0;
    if (stacks == NULL || sites == NULL)
        rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < np; i++) {
        if (ns == 0 || stacks[ns - 1].frames != pairs[i].frames)
            stacks[ns++] = (report_stack_t){pairs[i].frames, 0, 0, NULL};
        stacks[ns - 1].bytes += pairs[i].size;
        stacks[ns - 1].count++;
        gr->sites_total += pairs[i].size;
        gr->sites_live++;
    }
    gr->sites_stacks = ns;
    if (rc == 0)
        qsort(stacks, ns, sizeof *stacks, report_stack_by_bytes);
    /* Site of each stack; sites found by a linear scan (stacks at one
     * instant: hundreds). */
    size_t *of = rc == 0 ? malloc((ns ? ns : 1) * sizeof *of) : NULL;
    if (rc == 0 && of == NULL)
        rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < ns; i++) {
        const char *t = stacks[i].frames ? gm_reader_frames(rd, stacks[i].frames) : NULL;
        char *name = report_site_frame(t);
        if (name == NULL) {
            rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
            break;
        }
        size_t k = 0;
        while (k < nsites && strcmp(sites[k].name, name) != 0)
            k++;
        if (k == nsites)
            sites[nsites++].name = name;
        else
            free(name);
        sites[k].bytes += stacks[i].bytes;
        sites[k].count += stacks[i].count;
        sites[k].nstacks_all++;
        of[i] = k;
    }
    /* Each site's largest stacks (stacks are by bytes already). */
    for (size_t i = 0; rc == 0 && i < ns; i++) {
        report_site_t *st = &sites[of[i]];
        if (st->nstacks == REPORT_STACKS)
            continue;
        if (st->stacks == NULL && (st->stacks = calloc(REPORT_STACKS, sizeof *st->stacks)) == NULL) {
            rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
            break;
        }
        report_stack_t *k = &st->stacks[st->nstacks++];
        *k = stacks[i];
        k->text = report_stack_text(k->frames ? gm_reader_frames(rd, k->frames) : NULL);
        if (k->text == NULL)
            rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
    }
    if (rc == 0)
        qsort(sites, nsites, sizeof *sites, report_site_by_bytes);
    /* Free the sites not kept (all of them on failure). */
    for (size_t i = rc == 0 ? REPORT_SITES : 0; i < nsites; i++) {
        free(sites[i].name);
        for (size_t k = 0; k < sites[i].nstacks; k++)
            free(sites[i].stacks[k].text);
        free(sites[i].stacks);
    }
    if (rc == 0) {
        gr->sites = sites;
        gr->sites_all = nsites;
        gr->nsites = nsites < REPORT_SITES ? nsites : REPORT_SITES;
        sites = NULL;
    }
    free(sites);
    free(of);
    free(stacks);
    free(pairs);
    return rc;
}

/* Read the trace of a group: its MARK events and the first event at which
 * requested bytes peak (pass 1); with frames and sites wanted, the live set
 * at that event (pass 2), grouped into sites.  Errors from the reader. */
static int report_read_trace(report_t *R, report_group_t *gr, int sites)
{
    gm_store_t *s = R->stores[gr->store].s;
    gm_reader_t *rd;
    int rc = gm_reader_open(s, gr->name, &rd, R->err);
    if (rc)
        return rc;
    sites = sites && gm_reader_frames(rd, 1) != NULL;
    uint32_t ntags = gm_reader_tag_count(rd);
    if (ntags && (gr->tags = calloc(ntags, sizeof *gr->tags)) == NULL)
        rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
    for (uint32_t t = 0; rc == 0 && t < ntags; t++) {
        const char *name = gm_reader_tag(rd, t);
        if ((gr->tags[t] = strdup(name ? name : "")) == NULL)
            rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
        gr->ntags = t + 1;
    }
    uint64_t allocs = gm_reader_info(rd)->allocs;
    /* The live set is tracked only for the sites: a trace read for its
     * marks alone costs its decoding. */
    uint64_t *size = rc == 0 && sites ? calloc(allocs ? allocs : 1, sizeof *size) : NULL;
    uint32_t *fr = rc == 0 && sites ? calloc(allocs ? allocs : 1, sizeof *fr) : NULL;
    size_t mcap = 0;
    if (rc == 0 && sites && (size == NULL || fr == NULL))
        rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
    for (int pass = 0; pass < 1 + sites && rc == 0; pass++) {
        if (pass == 1) {
            gm_reader_close(rd);
            rd = NULL;
            memset(size, 0, allocs * sizeof *size);
            if ((rc = gm_reader_open(s, gr->name, &rd, R->err)))
                break;
        }
        uint64_t requested = 0, peak = 0, index = 0;
        const gm_event_t *ev;
        size_t n;
        int done = 0;
        while (!done && (rc = gm_reader_next(rd, &ev, &n, R->err)) == 0 && n > 0) {
            for (size_t i = 0; i < n; i++, index++) {
                const gm_event_t *e = &ev[i];
                if (pass == 0 && e->op == GM_OP_MARK && e->tag < gr->ntags &&
                    gr->nmarks < REPORT_MARKS) {
                    if (gr->nmarks == mcap) {
                        mcap = mcap ? 2 * mcap : 64;
                        report_mark_t *nm = realloc(gr->marks, mcap * sizeof *nm);
                        if (nm == NULL) {
                            rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
                            done = 1;
                            break;
                        }
                        gr->marks = nm;
                    }
                    gr->marks[gr->nmarks++] = (report_mark_t){
                        index, e->tag, (uint8_t)report_mark_kind(gr->tags[e->tag])};
                }
                if (!sites || (e->op != GM_OP_ALLOC && e->op != GM_OP_FREE) || e->id >= allocs)
                    continue;
                if (e->op == GM_OP_ALLOC) {
                    size[e->id] = e->size;
                    fr[e->id] = e->frames;
                    requested += e->size;
                } else {
                    requested -= size[e->id] <= requested ? size[e->id] : requested;
                    size[e->id] = 0;
                }
                if (pass == 0 && requested > peak) {
                    peak = requested;
                    gr->peak_event = index;
                }
                if (pass == 1 && index == gr->peak_event) {
                    done = 1;
                    break;
                }
            }
        }
    }
    if (rc == 0 && sites)
        rc = report_group_sites(R, gr, rd, size, fr, allocs);
    free(size);
    free(fr);
    if (rd)
        gm_reader_close(rd);
    return rc;
}

/* ---- SVG ------------------------------------------------------------------------ */

#define W 1000
#define H 300
#define ML 80
#define MR 20
#define MT 12
#define MB 36

static double report_nice(double v)
{
    if (v <= 0)
        return 1;
    double p = pow(10, floor(log10(v)));
    double m = v / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* Horizontal grid lines with byte labels; returns the axis maximum. */
static double report_y_axis(FILE *f, double ymax, int bytes)
{
    double step;
    if (bytes) {
        /* Steps of 1, 2 or 5 (times a power of ten) in the largest binary
         * unit below them, so labels read 512 MiB, 1 GiB, 2 GiB. */
        double unit = 1;
        while (unit * 1024 <= ymax / 4)
            unit *= 1024;
        step = report_nice(ymax / 4 / unit) * unit;
    } else {
        step = report_nice(ymax / 4);
    }
    double top = step * ceil(ymax / step);
    if (top <= 0)
        top = 1;
    for (double v = 0; v <= top * 1.0001; v += step) {
        int y = (int)(MT + (H - MT - MB) * (1 - v / top));
        char buf[32];
        if (bytes)
            gm_format_size((uint64_t)v, buf, sizeof buf);
        else
            snprintf(buf, sizeof buf, "%.0f%%", v * 100);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"grid\"/>", ML, y, W - MR,
                y);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">%s</text>", ML - 6,
                y + 4, buf);
    }
    return top;
}

/* A timeline reduced to at most REPORT_POINTS buckets, the maximum of
 * `which` (0 requested, 1 allocated, 2 reserved) per bucket, at the
 * bucket's last event.  Returns the bucket count. */
static size_t report_buckets(const gm_timeline_point_t *pts, size_t n, int which,
                             uint64_t *ev, uint64_t *val)
{
    size_t buckets = n < REPORT_POINTS ? n : REPORT_POINTS;
    for (size_t b = 0; b < buckets; b++) {
        size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;
        uint64_t v = 0;
        for (size_t k = lo; k < hi; k++) {
            uint64_t x = which == 0   ? pts[k].requested
                         : which == 1 ? pts[k].allocated
                                      : pts[k].reserved;
            if (x > v)
                v = x;
        }
        ev[b] = pts[hi - 1].event;
        val[b] = v;
    }
    return buckets;
}

/* Space-separated unsigned integers, as an attribute value. */
static void report_u64_list(FILE *f, const char *attr, const uint64_t *v, size_t n)
{
    fprintf(f, " %s=\"", attr);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu64, i ? " " : "", v[i]);
    fputc('"', f);
}

/* A timeline series' values, exactly and compactly: data-q, the greatest
 * common divisor of the values (reservations are multiples of 2 MiB or
 * 512 B), and data-v, the first value then the difference from the one
 * before, in units of data-q (a flat stretch is a run of "0"). */
static void report_values(FILE *f, const uint64_t *val, size_t n)
{
    uint64_t q = 0;
    for (size_t i = 0; i < n; i++)
        q = gm__gcd_u64(val[i], q);
    if (q == 0)
        q = 1;
    fprintf(f, " data-q=\"%" PRIu64 "\" data-v=\"", q);
    int64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = (int64_t)(val[i] / q);
        fprintf(f, "%s%" PRId64, i ? " " : "", v - prev);
        prev = v;
    }
    fputc('"', f);
}

/* A series of a line chart: a polyline of one timeline, reduced, with its
 * values (data-v, exact bytes) and events (data-e, left out when they are
 * the chart's: shared_ev, nshared) for the page's hover; `key` ties it to
 * its legend item, `name` is the series' name in the hover. */
static void report_line(FILE *f, const gm_timeline_point_t *pts, size_t n, uint64_t events,
                        double top, int which, const char *color, const char *extra,
                        const char *key, const char *name, const uint64_t *shared_ev,
                        size_t nshared)
{
    if (n == 0)
        return;
    uint64_t ev[REPORT_POINTS], val[REPORT_POINTS];
    size_t nb = report_buckets(pts, n, which, ev, val);
    fprintf(f, "<polyline class=\"sr\" fill=\"none\" stroke=\"%s\" %s data-s=\"%s\" data-n=\"",
            color, extra, key);
    report_esc(f, name);
    fputs("\" points=\"", f);
    double xscale = (double)(W - ML - MR) / (double)(events ? events : 1);
    for (size_t b = 0; b < nb; b++) {
        int px = (int)(ML + (double)ev[b] * xscale);
        int py = (int)(MT + (H - MT - MB) * (1 - (double)val[b] / top));
        fprintf(f, "%s%d,%d", b ? " " : "", px, py);
    }
    fputc('"', f);
    report_values(f, val, nb);
    if (nb != nshared || memcmp(ev, shared_ev, nb * sizeof *ev) != 0)
        report_u64_list(f, "data-e", ev, nb);
    fputs("/>", f);
}

static void report_hline(FILE *f, double v, double top, const char *cls, const char *label,
                         const char *key)
{
    int y = (int)(MT + (H - MT - MB) * (1 - v / top));
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"%s\" data-s=\"%s\"/>", ML,
            y, W - MR, y, cls, key);
    int below = strcmp(cls, "load") == 0;
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\" data-s=\"%s\">%s</text>",
            W - MR - 4, below ? y + 13 : y - 4, key, label);
}

/* A run's label, cut (r->cut); where the cut left something out, the
 * whole label is the tooltip: a <title> child inside SVG text (svg), a
 * title attribute elsewhere. */
static void report_label(FILE *f, const report_run_t *r, int svg)
{
    int cut = strcmp(r->cut, r->label) != 0;
    if (cut && !svg) {
        fputs("<span title=\"", f);
        report_esc(f, r->label);
        fputs("\">", f);
    }
    report_esc(f, r->cut);
    if (cut) {
        fputs(svg ? "<title>" : "</span>", f);
        if (svg) {
            report_esc(f, r->label);
            fputs("</title>", f);
        }
    }
}

/* A legend item that hides and shows the series carrying `key` (the
 * page's script; without it, a plain legend). */
static void report_legend_item(FILE *f, const char *color, const char *dash, const char *label,
                               const char *key)
{
    fprintf(f, "<span class=\"lg\" data-s=\"%s\" role=\"button\" tabindex=\"0\" "
               "aria-pressed=\"true\"><svg width=\"22\" height=\"10\"><line x1=\"0\" y1=\"5\" "
               "x2=\"22\" y2=\"5\" stroke=\"%s\" stroke-width=\"2\"%s/></svg> ",
            key, color, dash);
    report_esc(f, label);
    fputs("</span>", f);
}

/* Whether shown run k is the baseline drawn beside its policy's best
 * configuration (same colour: drawn dash-dotted). */
static int report_dashed_baseline(const report_t *R, const report_group_t *gr, size_t k)
{
    const report_run_t *r = &R->runs[gr->shown[k]];
    if ((ssize_t)gr->shown[k] != gr->baseline)
        return 0;
    for (size_t i = 0; i < gr->nshown; i++)
        if (i != k && strcmp(R->runs[gr->shown[i]].info->policy, r->info->policy) == 0)
            return 1;
    return 0;
}

/* Event counts for axis labels: 800, 12k, 1.5M. */
static const char *report_count_short(uint64_t v, char *buf, size_t len)
{
    if (v < 10000)
        snprintf(buf, len, "%" PRIu64, v);
    else if (v < 1000000)
        snprintf(buf, len, v % 1000 ? "%.1fk" : "%.0fk", (double)v / 1e3);
    else
        snprintf(buf, len, v % 1000000 ? "%.1fM" : "%.0fM", (double)v / 1e6);
    return buf;
}

/* The x axis of a timeline: event ticks, and the trace's MARK events as
 * ticks by kind (step: a grid line and "step N"; forward F, backward B;
 * other tags small and grey, named on hover), labels thinned so they do
 * not overlap. */
static void report_x_axis(FILE *f, const report_group_t *gr, uint64_t events)
{
    double xscale = (double)(W - ML - MR) / (double)(events ? events : 1);
    int y0 = H - MB;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"xa\"/>", ML, y0, W - MR, y0);
    double step = report_nice((double)events / 8);
    for (double e = 0; e <= (double)events; e += step) {
        char b[32];
        int x = (int)(ML + e * xscale);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"xa\"/>", x, y0, x, y0 + 4);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">%s</text>", x,
                y0 + 14, report_count_short((uint64_t)e, b, sizeof b));
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">event</text>", ML - 6,
            y0 + 26);
    if (gr->nmarks == 0)
        return;
    static const char *const cls[] = {"mk-s", "mk-f", "mk-b", "mk-o"};
    fputs("<g class=\"marks\">", f);
    /* Ticks: one path per tag, with the events it marks (data-e) for the
     * hover; a tick within 2 units of the one before is left out.  Step
     * ticks also draw a grid line through the plot. */
    for (uint32_t t = 0; t < gr->ntags; t++) {
        int kind = -1, last = -100;
        for (size_t i = 0; i < gr->nmarks; i++)
            if (gr->marks[i].tag == t)
                kind = gr->marks[i].kind;
        if (kind < 0)
            continue;
        for (int grid = kind == REPORT_MARK_STEP ? 1 : 0; grid >= 0; grid--) {
            fprintf(f, "<path class=\"%s\" d=\"", grid ? "mk-g" : cls[kind]);
            last = -100;
            for (size_t i = 0; i < gr->nmarks; i++) {
                const report_mark_t *m = &gr->marks[i];
                int x = (int)(ML + (double)m->event * xscale);
                if (m->tag != t || x - last < 2)
                    continue;
                last = x;
                if (grid)
                    fprintf(f, "M%d %dV%d", x, MT, y0);
                else
                    fprintf(f, "M%d %dv%d", x, y0 + (kind == REPORT_MARK_OTHER), kind == REPORT_MARK_OTHER ? 4 : 9);
            }
            fputc('"', f);
            if (grid) {
                fputs("/>", f);
                continue;
            }
            fputs(" data-n=\"", f);
            report_esc(f, gr->tags[t]);
            fputs("\" data-e=\"", f);
            last = -100;
            int first = 1;
            for (size_t i = 0; i < gr->nmarks; i++) {
                const report_mark_t *m = &gr->marks[i];
                int x = (int)(ML + (double)m->event * xscale);
                if (m->tag != t || x - last < 2)
                    continue;
                last = x;
                fprintf(f, "%s%" PRIu64, first ? "" : " ", m->event);
                first = 0;
            }
            fputs("\"/>", f);
        }
    }
    /* Labels, in event order, where they do not overlap the one before. */
    int last_label = -1000, last_half = 0;
    uint64_t steps = 0;
    for (size_t i = 0; i < gr->nmarks; i++) {
        const report_mark_t *m = &gr->marks[i];
        const char *tag = gr->tags[m->tag];
        int numbered = m->kind == REPORT_MARK_STEP && strcasecmp(tag, "step") == 0;
        steps += numbered;
        if (m->kind == REPORT_MARK_OTHER)
            continue;
        int x = (int)(ML + (double)m->event * xscale);
        char label[32];
        if (numbered)
            snprintf(label, sizeof label, "step %" PRIu64, steps);
        else if (m->kind == REPORT_MARK_STEP) /* "Optimizer.step#AdamW.step": to its '#' */
            snprintf(label, sizeof label, "%.*s", (int)(strcspn(tag, "#") < 24 ? strcspn(tag, "#") : 24), tag);
        else
            snprintf(label, sizeof label, "%s", m->kind == REPORT_MARK_FORWARD ? "F" : "B");
        /* About 6 units a character at the axis' font size. */
        if (x - last_label < (int)strlen(label) * 3 + last_half + 6)
            continue;
        last_label = x;
        last_half = (int)strlen(label) * 3;
        /* Kept inside the chart at its right edge. */
        int at_end = x + last_half > W - 2;
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"%s\" text-anchor=\"%s\">", at_end ? W - 2 : x,
                y0 + 26, cls[m->kind], at_end ? "end" : "middle");
        report_esc(f, label);
        fputs("</text>", f);
    }
    fputs("</g>", f);
}

static int report_memory_chart(report_t *R, const report_group_t *gr)
{
    FILE *f = R->f;
    gm_timeline_point_t **tl = calloc(gr->nshown ? gr->nshown : 1, sizeof *tl);
    size_t *ntl = calloc(gr->nshown ? gr->nshown : 1, sizeof *ntl);
    if (tl == NULL || ntl == NULL) {
        free(tl);
        free(ntl);
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    }
    int rc = 0;
    double ymax = (double)gr->load;
    uint64_t events = gr->events;
    for (size_t k = 0; rc == 0 && k < gr->nshown; k++) {
        const report_run_t *r = &R->runs[gr->shown[k]];
        rc = gm_store_run_timeline(R->stores[r->store].s, r->info->id, &tl[k], &ntl[k], R->err);
        if (rc == 0 && (double)r->m.peak_reserved > ymax)
            ymax = (double)r->m.peak_reserved;
        if (rc == 0 && ntl[k] && tl[k][ntl[k] - 1].event + 1 > events)
            events = tl[k][ntl[k] - 1].event + 1;
    }
    size_t with = 0, first = 0;
    for (size_t k = gr->nshown; k-- > 0;)
        if (ntl[k]) {
            with++;
            first = k;
        }
    if (rc == 0 && with == 0) {
        fputs("<p class=\"note\">no timeline stored for these runs</p>", f);
    } else if (rc == 0) {
        /* The chart's events: those of the first timeline's buckets; a
         * series with others carries its own. */
        uint64_t shared[REPORT_POINTS], scratch[REPORT_POINTS];
        size_t nshared = report_buckets(tl[first], ntl[first], 0, shared, scratch);
        fprintf(f, "<svg class=\"chart ln\" viewBox=\"0 0 %d %d\" role=\"img\" data-xn=\"event\" "
                   "data-u=\"b\"",
                W, H);
        report_u64_list(f, "data-e", shared, nshared);
        fputc('>', f);
        double top = report_y_axis(f, ymax * 1.05, 1);
        report_x_axis(f, &R->groups[gr->trace_of], events);
        for (size_t k = 0; k < gr->nshown; k++) {
            const report_run_t *r = &R->runs[gr->shown[k]];
            const char *c = report_color(r);
            char key[32], name[200];
            snprintf(key, sizeof key, "r%zu al", k);
            snprintf(name, sizeof name, "%s allocated", r->label);
            report_line(f, tl[k], ntl[k], events, top, 1, c,
                        "stroke-width=\"1\" stroke-dasharray=\"4 3\" opacity=\"0.8\"", key, name,
                        shared, nshared);
            snprintf(key, sizeof key, "r%zu", k);
            snprintf(name, sizeof name, "%s reserved", r->label);
            report_line(f, tl[k], ntl[k], events, top, 2, c,
                        report_dashed_baseline(R, gr, k)
                            ? "stroke-width=\"1.6\" stroke-dasharray=\"10 3 2 3\""
                            : "stroke-width=\"1.6\"",
                        key, name, shared, nshared);
        }
        report_line(f, tl[first], ntl[first], events, top, 0, "#000", "stroke-width=\"1.2\"", "rq",
                    "requested", shared, nshared);
        report_hline(f, (double)gr->load, top, "load", "load", "ld");
        if (gr->bound >= 0)
            report_hline(f, (double)R->runs[gr->bound].m.peak_reserved, top, "bound",
                         "offline bound", "bd");
        fputs("</svg><div class=\"legend\">", f);
        report_legend_item(f, "#000", "", "requested", "rq");
        for (size_t k = 0; k < gr->nshown; k++) {
            const report_run_t *r = &R->runs[gr->shown[k]];
            char lab[200], key[32];
            snprintf(lab, sizeof lab, "%s reserved", r->cut);
            snprintf(key, sizeof key, "r%zu", k);
            report_legend_item(f, report_color(r),
                               report_dashed_baseline(R, gr, k) ? " stroke-dasharray=\"10 3 2 3\""
                                                                : "",
                               lab, key);
        }
        report_legend_item(f, "#666", " stroke-dasharray=\"4 3\"", "allocated (same colour)",
                           "al");
        report_legend_item(f, "#000", " stroke-dasharray=\"6 4\"", "load", "ld");
        if (gr->bound >= 0)
            report_legend_item(f, "#9467bd", " stroke-dasharray=\"2 3\"", "offline bound", "bd");
        fputs("</div>", f);
    }
    for (size_t k = 0; k < gr->nshown; k++)
        free(tl[k]);
    free(tl);
    free(ntl);
    return rc;
}

/* A rect of a bar chart, with what the page's hover shows: the name, the
 * value in bytes (data-v) and a detail line (data-d). */
static void report_bar_rect(FILE *f, int x, int y, int w, int h, const char *paint,
                            const char *name, uint64_t v, const char *detail)
{
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" %s data-n=\"", x, y, w, h,
            paint);
    report_esc(f, name);
    fprintf(f, "\" data-v=\"%" PRIu64 "\" data-d=\"", v);
    report_esc(f, detail);
    fputs("\"/>", f);
}

/* Horizontal bars: peak reserved per run shown, against load (and the
 * bound); with waste = 1 the bars are split at t*.  Every rect carries its
 * value for the hover. */
static void report_bars(report_t *R, const report_group_t *gr, int waste)
{
    FILE *f = R->f;
    size_t n = gr->nshown + (gr->bound >= 0 && !waste);
    int rowh = 22, h = (int)n * rowh + 30, lw = 260;
    double max = (double)gr->load;
    for (size_t k = 0; k < gr->nshown; k++)
        if ((double)R->runs[gr->shown[k]].m.peak_reserved > max)
            max = (double)R->runs[gr->shown[k]].m.peak_reserved;
    if (max <= 0)
        max = 1;
    double scale = (double)(W - lw - (waste ? 340 : 150)) / max;
    fprintf(f, "<svg class=\"chart bars\" viewBox=\"0 0 %d %d\" role=\"img\">", W, h);
    for (size_t k = 0; k < n; k++) {
        size_t ri = k < gr->nshown ? gr->shown[k] : (size_t)gr->bound;
        const report_run_t *r = &R->runs[ri];
        int y = 6 + (int)k * rowh;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"8\" height=\"8\" fill=\"%s\"/>", lw - 14,
                y + 6, report_color(r));
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lb\" text-anchor=\"end\">", lw - 20, y + 14);
        report_label(f, r, 1);
        if (k < gr->nshown && (ssize_t)ri == gr->winner)
            fputs(" ★", f);
        fputs("</text>", f);
        const gm_metrics_t *m = &r->m;
        double R_ = (double)m->peak_reserved;
        char detail[160], b1[32], b2[32];
        if (!waste) {
            char paint[64];
            snprintf(paint, sizeof paint, "fill=\"%s\"%s", report_color(r),
                     r->bound ? " opacity=\"0.5\"" : "");
            snprintf(detail, sizeof detail, "peak reserved, %+.1f%% above load (%s)%s",
                     m->overhead * 100, report_size(gr->load, b1, sizeof b1),
                     m->ooms ? ", with OOMs" : "");
            report_bar_rect(f, lw, y, (int)(R_ * scale + 0.5), rowh - 6, paint, r->label,
                            m->peak_reserved, detail);
        } else {
            double A = R_ * (1 - (isfinite(m->frag_at_peak) ? m->frag_at_peak : 0));
            double internal = (double)m->internal_waste_at_peak;
            if (internal > A)
                internal = A;
            double freeb = R_ - A;
            double ext = freeb * (isfinite(m->external_frag_at_peak) ? m->external_frag_at_peak : 0);
            double seg[4] = {A - internal, internal, ext, freeb - ext};
            static const char *const cls[4] = {"class=\"s-req\"", "class=\"s-int\"",
                                               "class=\"s-ext\"", "class=\"s-free\""};
            static const char *const what[4] = {"in use", "rounding (internal)",
                                                "unusable free (external)", "largest free block"};
            double x = lw;
            for (int s = 0; s < 4; s++) {
                if (seg[s] > 0) {
                    char name[220];
                    snprintf(name, sizeof name, "%s: %s", r->label, what[s]);
                    snprintf(detail, sizeof detail, "%.1f%% of %s reserved at the peak",
                             R_ > 0 ? 100 * seg[s] / R_ : 0,
                             report_size(m->peak_reserved, b1, sizeof b1));
                    report_bar_rect(f, (int)x, y, (int)(seg[s] * scale + 0.5), rowh - 6, cls[s],
                                    name, (uint64_t)(seg[s] + 0.5), detail);
                }
                x += seg[s] * scale;
            }
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lb\">%s", (int)(lw + R_ * scale) + 6, y + 14,
                report_size(m->peak_reserved, b1, sizeof b1));
        if (!waste && gr->load)
            fprintf(f, " (%+.1f%%)", m->overhead * 100);
        if (waste && m->peak_reserved) {
            char b3[32];
            double A = R_ * (1 - m->frag_at_peak), freeb = R_ - A;
            fprintf(f, " · rounding %s · unusable free %s",
                    report_size(m->internal_waste_at_peak, b2, sizeof b2),
                    report_size((uint64_t)(freeb * m->external_frag_at_peak + 0.5), b3,
                                sizeof b3));
        }
        fputs("</text>", f);
    }
    int lx = (int)(lw + (double)gr->load * scale);
    fprintf(f, "<line x1=\"%d\" y1=\"2\" x2=\"%d\" y2=\"%d\" class=\"load\"/>", lx, lx, h - 18);
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">load</text></svg>", lx,
            h - 4);
}

/* ---- sections ---------------------------------------------------------------------- */

static void report_trace_title(report_t *R, const report_group_t *gr)
{
    FILE *f = R->f;
    report_esc(f, gr->name);
    if (gr->seq_len >= 0)
        fprintf(f, " · seq_len %" PRId64, gr->seq_len);
    if (gr->model[0]) {
        fputs(" · ", f);
        report_esc(f, gr->model);
    }
    if (R->many_devices || gr->capacity) {
        char b[32];
        if (gr->capacity)
            fprintf(f, " · capacity %s", report_size(gr->capacity, b, sizeof b));
        else
            fputs(" · unlimited device", f);
    }
}

static void report_summary(report_t *R)
{
    FILE *f = R->f;
    fputs("<section id=\"summary\"><h2>Summary</h2>\n", f);
    fputs("<p>For each trace: the allocator that reserves the least device memory "
          "without running out (the winner), how far it is above <b>load</b> (the most the "
          "application ever held at once, the floor for every allocator), what it saves against "
          "the baseline, PyTorch's caching allocator with default settings, and the offline "
          "bound (a planner that knows the future).  A policy that caches nothing (native) sits "
          "at load at the price of a device call per request, and is shown as a reference.</p>\n",
          f);
    fputs("<div class=\"wide\"><table class=\"sortable\"><thead><tr><th>trace</th><th>seq_len</th><th>load</th>"
          "<th>winner</th><th>peak reserved</th><th>above load</th><th>baseline</th>"
          "<th>saving</th><th>offline bound</th></tr></thead><tbody>\n",
          f);
    for (size_t g = 0; g < R->ngroups; g++) {
        const report_group_t *gr = &R->groups[g];
        char b[32];
        fputs("<tr><td>", f);
        report_esc(f, gr->name);
        if (R->many_devices || gr->capacity)
            fprintf(f, " · %s", gr->capacity ? report_size(gr->capacity, b, sizeof b)
                                              : "unlimited");
        fprintf(f, "</td><td data-v=\"%" PRId64 "\">", gr->seq_len);
        if (gr->seq_len >= 0)
            fprintf(f, "%" PRId64, gr->seq_len);
        fprintf(f, "</td><td data-v=\"%" PRIu64 "\">%s</td>", gr->load,
                report_size(gr->load, b, sizeof b));
        if (gr->winner >= 0) {
            const report_run_t *w = &R->runs[gr->winner];
            fputs("<td class=\"win\">", f);
            report_label(f, w, 0);
            fprintf(f, "</td><td data-v=\"%" PRIu64 "\">%s</td><td data-v=\"%.6f\">%+.1f%%</td>",
                    w->m.peak_reserved, report_size(w->m.peak_reserved, b, sizeof b),
                    w->m.overhead, w->m.overhead * 100);
        } else {
            fputs("<td>-</td><td></td><td></td>", f);
        }
        if (gr->baseline >= 0 && gr->winner >= 0) {
            const report_run_t *bl = &R->runs[gr->baseline], *w = &R->runs[gr->winner];
            double save = bl->m.peak_reserved
                              ? 1.0 - (double)w->m.peak_reserved / (double)bl->m.peak_reserved
                              : 0.0;
            char b2[32];
            int64_t diff = (int64_t)bl->m.peak_reserved - (int64_t)w->m.peak_reserved;
            fprintf(f, "<td data-v=\"%" PRIu64 "\">%s</td><td data-v=\"%.6f\">%.1f%% (%s%s)</td>",
                    bl->m.peak_reserved, report_size(bl->m.peak_reserved, b, sizeof b), save,
                    save * 100, diff < 0 ? "-" : "",
                    report_size((uint64_t)(diff < 0 ? -diff : diff), b2, sizeof b2));
        } else {
            fputs("<td>no run</td><td></td>", f);
        }
        if (gr->bound >= 0)
            fprintf(f, "<td data-v=\"%" PRIu64 "\">%s</td>", R->runs[gr->bound].m.peak_reserved,
                    report_size(R->runs[gr->bound].m.peak_reserved, b, sizeof b));
        else
            fputs("<td>not run</td>", f);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
    /* For PyTorch traces in the stores: the setting their user can set
     * (gm_torch_advise; a trace read, skipped with no_sites). */
    for (size_t g = 0; g < R->ngroups && !R->cfg->no_sites; g++) {
        const report_group_t *gr = &R->groups[g];
        gm_torch_advice_t a;
        gm_replay_config_t rc;
        gm_replay_config_default(&rc);
        rc.device.capacity = gr->capacity;
        char text[768];
        if (gr->attrs == NULL || gm_torch_advise(R->stores[gr->store].s, gr->name, &rc, &a, NULL) ||
            !a.torch)
            continue;
        gm_torch_advice_text(&a, text, sizeof text);
        fputs("<p class=\"advice\"><b>recommendation</b> for ", f);
        report_esc(f, gr->name);
        fputs(": ", f);
        report_esc(f, text);
        fputs("</p>\n", f);
    }
    fputs("</section>\n", f);
}

/* ---- heat map, contents, allocation sites ------------------------------------ */

static int report_by_rank(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t rx = report_policy_rank(x), ry = report_policy_rank(y);
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return strcmp(x, y);
}

/* The policy's best run in a group: least peak reserved without OOMs,
 * else least peak; -1 when it did not run. */
static ssize_t report_best_of(const report_t *R, const report_group_t *gr, const char *policy)
{
    ssize_t any = -1;
    for (size_t k = 0; k < gr->nruns; k++) {
        const report_run_t *r = &R->runs[gr->runs[k]];
        if (strcmp(r->info->policy, policy) != 0)
            continue;
        if (r->m.ooms == 0)
            return (ssize_t)gr->runs[k];
        if (any < 0)
            any = (ssize_t)gr->runs[k];
    }
    return any;
}

/* Colour of a heat map cell: green at load, yellow at +25%, red from
 * +100% on (log scale, so small differences near load stay visible). */
static void report_heat_color(double overhead, char *buf, size_t len)
{
    static const double stops[3][3] = {{26, 152, 80}, {254, 224, 139}, {215, 48, 39}};
    double t = overhead > 0 ? log1p(overhead) / log1p(1.0) : 0;
    if (t > 1)
        t = 1;
    double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    const double *a = stops[t < 0.5 ? 0 : 1], *b = stops[t < 0.5 ? 1 : 2];
    /* Paler (mixed 45% with white) so the text on it reads. */
    int c[3];
    for (int i = 0; i < 3; i++)
        c[i] = (int)((a[i] + (b[i] - a[i]) * u) * 0.55 + 255 * 0.45 + 0.5);
    snprintf(buf, len, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* Traces x policies: each policy's best configuration, its peak reserved
 * above load, coloured; the winner starred; a row links to its trace. */
static int report_heatmap(report_t *R)
{
    FILE *f = R->f;
    const char **pols = malloc((R->nruns ? R->nruns : 1) * sizeof *pols);
    if (pols == NULL)
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    size_t np = 0;
    for (size_t i = 0; i < R->nruns; i++) {
        size_t k = 0;
        while (k < np && strcmp(pols[k], R->runs[i].info->policy) != 0)
            k++;
        if (k == np)
            pols[np++] = R->runs[i].info->policy;
    }
    qsort(pols, np, sizeof *pols, report_by_rank);
    fputs("<section id=\"heatmap\"><h2>At a glance</h2><p>Each policy's best configuration per "
          "trace: its peak reserved above load (green near load, red at twice load or more; ★ "
          "the winner, OOM where every configuration ran out; in grey the references that "
          "cache nothing and the offline bound, which are not contenders).  Hover a cell for "
          "the configuration and the bytes; click a trace for its charts.</p>\n"
          "<div class=\"wide\"><table class=\"heat\"><thead><tr><th>trace</th>",
          f);
    for (size_t p = 0; p < np; p++) {
        fprintf(f, "<th><span class=\"sw\" style=\"background:%s\"></span>",
                report_policy_color(pols[p]));
        report_esc(f, pols[p]);
        fputs("</th>", f);
    }
    fputs("</tr></thead><tbody>\n", f);
    for (size_t g = 0; g < R->ngroups; g++) {
        const report_group_t *gr = &R->groups[g];
        fprintf(f, "<tr><td><a href=\"#g%zu\">", g);
        report_esc(f, gr->name);
        if (R->many_devices || gr->capacity) {
            char b[32];
            fprintf(f, " · %s", gr->capacity ? report_size(gr->capacity, b, sizeof b)
                                              : "unlimited");
        }
        fputs("</a></td>", f);
        for (size_t p = 0; p < np; p++) {
            ssize_t ri = report_best_of(R, gr, pols[p]);
            if (ri < 0) {
                fputs("<td class=\"na\">–</td>", f);
                continue;
            }
            const report_run_t *r = &R->runs[ri];
            char color[16], b[32], detail[300], name[400], plan[96];
            report_heat_color(r->m.overhead, color, sizeof color);
            snprintf(name, sizeof name, "%s · %s", gr->name, r->label);
            double vs = gr->winner >= 0 && R->runs[gr->winner].m.peak_reserved
                            ? (double)r->m.peak_reserved /
                                      (double)R->runs[gr->winner].m.peak_reserved -
                                  1
                            : 0;
            snprintf(detail, sizeof detail, "%+.1f%% above load (%s), %+.1f%% against the "
                     "winner%s%s%s%s",
                     r->m.overhead * 100, report_size(gr->load, b, sizeof b), vs * 100,
                     r->bound ? "; a bound, not a contender" : r->reference ? "; a reference" : "",
                     r->has_plan ? "; plan " : "", report_plan_text(r, plan, sizeof plan),
                     r->m.ooms ? "; ran out of memory" : "");
            if (r->m.ooms)
                fputs("<td class=\"oom\"", f);
            else if ((r->reference || r->bound) && ri != gr->winner)
                fputs("<td class=\"ref\"", f); /* not a contender: no colour */
            else
                fprintf(f, "<td style=\"background:%s\"%s", color,
                        ri == gr->winner ? " class=\"win\"" : "");
            fputs(" data-n=\"", f);
            report_esc(f, name);
            fprintf(f, "\" data-v=\"%" PRIu64 "\" data-d=\"", r->m.peak_reserved);
            report_esc(f, detail);
            if (r->m.ooms)
                fputs("\">OOM</td>", f);
            else
                fprintf(f, "\">%+.1f%%%s</td>", r->m.overhead * 100, ri == gr->winner ? " ★" : "");
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div></section>\n", f);
    free(pols);
    return 0;
}

/* Whether the seq_len section is drawn: two distinct seq_len values. */
static int report_has_seq(const report_t *R)
{
    size_t distinct = 0;
    for (size_t g = 0; g < R->ngroups; g++)
        if (R->groups[g].seq_len >= 0 &&
            (distinct == 0 || g == 0 || R->groups[g].seq_len != R->groups[g - 1].seq_len))
            distinct++;
    return distinct >= 2;
}

static int report_has_sites(const report_t *R)
{
    for (size_t g = 0; g < R->ngroups; g++)
        if (R->groups[g].nsites)
            return 1;
    return 0;
}

/* The table of contents: the sections written, in order. */
static void report_toc(report_t *R)
{
    FILE *f = R->f;
    fputs("<nav id=\"toc\"><b>Contents</b><ol>", f);
    fputs("<li><a href=\"#heatmap\">At a glance</a></li><li><a href=\"#summary\">Summary</a></li>"
          "<li><a href=\"#memory-over-time\">Memory over time</a></li>"
          "<li><a href=\"#peak-reserved\">Peak reserved</a></li>",
          f);
    if (report_has_seq(R))
        fputs("<li><a href=\"#seq-len\">Against sequence length</a></li>", f);
    fputs("<li><a href=\"#waste-at-peak\">Waste at the peak</a></li>", f);
    if (report_has_sites(R))
        fputs("<li><a href=\"#allocation-sites\">Allocation sites at the peak</a></li>", f);
    fputs("<li><a href=\"#metrics\">All runs</a></li></ol></nav>\n", f);
}

/* Per trace with frames: the live allocations at the load peak by site,
 * each site a <details> holding its largest stacks, each stack a
 * <details> holding its frames. */
static void report_sites_section(report_t *R)
{
    FILE *f = R->f;
    if (!report_has_sites(R))
        return;
    fputs("<section id=\"allocation-sites\"><h2>Allocation sites at the peak</h2><p>The "
          "allocations live at the load peak (the first event at which the application's "
          "requested bytes reach their maximum; the same instant for every policy), grouped "
          "by site: the innermost frame of the application's own code (else the innermost "
          "Python frame, else the innermost frame).  Open a site for its stacks, a stack for "
          "its frames (innermost first).</p>\n",
          f);
    for (size_t g = 0; g < R->ngroups; g++) {
        const report_group_t *gr = &R->groups[g];
        if (gr->nsites == 0)
            continue;
        char b[32], b2[32];
        fputs("<h3>", f);
        report_trace_title(R, gr);
        fprintf(f, "</h3><p class=\"note\">At event %" PRIu64 ": %" PRIu64 " live allocation%s, "
                   "%s, from %" PRIu64 " stack%s at %zu site%s",
                gr->peak_event, gr->sites_live, gr->sites_live == 1 ? "" : "s",
                report_size(gr->sites_total, b, sizeof b), gr->sites_stacks,
                gr->sites_stacks == 1 ? "" : "s", gr->sites_all, gr->sites_all == 1 ? "" : "s");
        if (gr->sites_all > gr->nsites)
            fprintf(f, "; the %zu largest", gr->nsites);
        fputs(".</p>\n<div class=\"sites\">", f);
        for (size_t k = 0; k < gr->nsites; k++) {
            const report_site_t *s = &gr->sites[k];
            double share = gr->sites_total ? 100.0 * (double)s->bytes / (double)gr->sites_total : 0;
            fprintf(f, "<details class=\"site\"><summary><span class=\"sb\"><span style=\"width:"
                       "%.1f%%\"></span></span><span class=\"sv\" data-v=\"%" PRIu64 "\">%s</span>"
                       "<span class=\"sp\">%.1f%%</span><span class=\"sc\">%" PRIu64 " alloc%s, "
                       "%zu stack%s</span><code>",
                    share, s->bytes, report_size(s->bytes, b, sizeof b), share, s->count,
                    s->count == 1 ? "" : "s", s->nstacks_all, s->nstacks_all == 1 ? "" : "s");
            report_esc(f, s->name);
            fputs("</code></summary>\n", f);
            for (size_t i = 0; i < s->nstacks; i++) {
                const report_stack_t *st = &s->stacks[i];
                fprintf(f, "<details class=\"stack\"><summary>stack %zu: %s in %" PRIu64
                           " alloc%s</summary><pre class=\"frames\">",
                        i + 1, report_size(st->bytes, b2, sizeof b2), st->count,
                        st->count == 1 ? "" : "s");
                report_esc(f, st->text);
                fputs("</pre></details>\n", f);
            }
            if (s->nstacks_all > s->nstacks)
                fprintf(f, "<p class=\"note\">and %zu smaller stacks</p>",
                        s->nstacks_all - s->nstacks);
            fputs("</details>\n", f);
        }
        fputs("</div>\n", f);
    }
    fputs("</section>\n", f);
}

/* Per policy (best configuration), a figure against seq_len. */
static void report_seq_chart(report_t *R, int frag)
{
    FILE *f = R->f;
    int64_t *lens = malloc((R->ngroups ? R->ngroups : 1) * sizeof *lens);
    if (lens == NULL)
        return;
    size_t nl = 0;
    for (size_t g = 0; g < R->ngroups; g++) {
        int64_t s = R->groups[g].seq_len;
        if (s >= 0 && (nl == 0 || lens[nl - 1] != s))
            lens[nl++] = s; /* groups are sorted by seq_len */
    }
    /* Policies: those drawn in any group. */
    const char *pols[64];
    const report_run_t *polrun[64];
    size_t np = 0;
    for (size_t g = 0; g < R->ngroups; g++)
        for (size_t k = 0; k < R->groups[g].nshown; k++) {
            const report_run_t *r = &R->runs[R->groups[g].shown[k]];
            size_t i = 0;
            while (i < np && strcmp(pols[i], r->info->policy) != 0)
                i++;
            if (i == np && np < 64) {
                pols[np] = r->info->policy;
                polrun[np++] = r;
            }
        }
    /* value[p][l]: max over groups with that seq_len of the policy's best. */
    double *val = calloc((np + 1) * nl + 1, sizeof *val);
    if (val == NULL) {
        free(lens);
        return;
    }
    for (size_t i = 0; i < (np + 1) * nl; i++)
        val[i] = -1;
    double ymax = 0;
    for (size_t g = 0; g < R->ngroups; g++) {
        const report_group_t *gr = &R->groups[g];
        if (gr->seq_len < 0)
            continue;
        size_t l = 0;
        while (lens[l] != gr->seq_len)
            l++;
        for (size_t p = 0; p < np; p++)
            for (size_t k = 0; k < gr->nshown; k++) {
                const report_run_t *r = &R->runs[gr->shown[k]];
                if (strcmp(r->info->policy, pols[p]) != 0)
                    continue;
                double v = frag ? r->m.frag_at_peak : (double)r->m.peak_reserved;
                if (!isfinite(v))
                    continue;
                if (v > val[p * nl + l])
                    val[p * nl + l] = v;
                if (v > ymax)
                    ymax = v;
                break;
            }
        if (!frag && (double)gr->load > val[np * nl + l]) {
            val[np * nl + l] = (double)gr->load;
            if ((double)gr->load > ymax)
                ymax = (double)gr->load;
        }
    }
    fprintf(f, "<figure><figcaption>%s against seq_len (best configuration of each "
               "policy)</figcaption><svg class=\"chart ln\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "data-xn=\"seq_len\" data-u=\"%s\">",
            frag ? "fragmentation at the peak" : "peak reserved", W, H, frag ? "%" : "b");
    double top = report_y_axis(f, ymax > 0 ? ymax * 1.05 : 1, !frag);
    for (size_t l = 0; l < nl; l++) {
        int x = (int)(ML + 30 + (double)(W - ML - MR - 60) * (nl > 1 ? (double)l / (double)(nl - 1) : 0.5));
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">%" PRId64 "</text>",
                x, H - 14, lens[l]);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">seq_len</text>",
            (W + ML) / 2, H - 3);
    for (size_t p = 0; p <= np; p++) {
        if (p == np && frag)
            break;
        const char *color = p == np ? "#000" : report_color(polrun[p]);
        char key[24];
        if (p == np)
            snprintf(key, sizeof key, "ld");
        else
            snprintf(key, sizeof key, "p%zu", p);
        fprintf(f, "<polyline class=\"sr\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
                   "data-s=\"%s\" data-n=\"",
                color, p == np ? " stroke-dasharray=\"6 4\"" : "", key);
        report_esc(f, p == np ? "load" : pols[p]);
        fputs("\" points=\"", f);
        int first = 1;
        for (size_t l = 0; l < nl; l++) {
            double v = val[p * nl + l];
            if (v < 0)
                continue;
            int x = (int)(ML + 30 + (double)(W - ML - MR - 60) * (nl > 1 ? (double)l / (double)(nl - 1) : 0.5));
            int y = (int)(MT + (H - MT - MB) * (1 - v / top));
            fprintf(f, "%s%d,%d", first ? "" : " ", x, y);
            first = 0;
        }
        /* Values and seq_len of the points drawn, for the hover. */
        fputs("\" data-v=\"", f);
        first = 1;
        for (size_t l = 0; l < nl; l++)
            if (val[p * nl + l] >= 0) {
                fprintf(f, frag ? "%s%.6g" : "%s%.0f", first ? "" : " ", val[p * nl + l]);
                first = 0;
            }
        fputs("\" data-e=\"", f);
        first = 1;
        for (size_t l = 0; l < nl; l++)
            if (val[p * nl + l] >= 0) {
                fprintf(f, "%s%" PRId64, first ? "" : " ", lens[l]);
                first = 0;
            }
        fputs("\"/>", f);
        for (size_t l = 0; l < nl; l++) {
            double v = val[p * nl + l];
            if (v < 0)
                continue;
            int x = (int)(ML + 30 + (double)(W - ML - MR - 60) * (nl > 1 ? (double)l / (double)(nl - 1) : 0.5));
            int y = (int)(MT + (H - MT - MB) * (1 - v / top));
            fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"%s\" data-s=\"%s\"/>", x, y,
                    color, key);
        }
    }
    fputs("</svg><div class=\"legend\">", f);
    for (size_t p = 0; p < np; p++) {
        char key[24];
        snprintf(key, sizeof key, "p%zu", p);
        report_legend_item(f, report_color(polrun[p]), "", pols[p], key);
    }
    if (!frag)
        report_legend_item(f, "#000", " stroke-dasharray=\"6 4\"", "load", "ld");
    fputs("</div></figure>\n", f);
    free(val);
    free(lens);
}

static void report_metrics_table(report_t *R)
{
    FILE *f = R->f;
    fputs("<section id=\"metrics\"><h2>All runs</h2><p>Every stored run, every metric of "
          "docs/metrics.md.  Click a column to sort.</p>\n<div class=\"wide\"><table "
          "class=\"sortable\"><thead><tr><th>trace</th><th>seq_len</th><th>configuration</th>"
          "<th>capacity</th><th>plan</th>",
          f);
#define REPORT_TH(name, type) fputs("<th>" #name "</th>", f);
    GM_METRICS(REPORT_TH)
#undef REPORT_TH
    fputs("</tr></thead><tbody>\n", f);
    for (size_t g = 0; g < R->ngroups; g++) {
        const report_group_t *gr = &R->groups[g];
        for (size_t k = 0; k < gr->nruns; k++) {
            const report_run_t *r = &R->runs[gr->runs[k]];
            const gm_metrics_t *m = &r->m;
            char b[32];
            fputs("<tr><td>", f);
            report_esc(f, gr->name);
            fprintf(f, "</td><td data-v=\"%" PRId64 "\">", gr->seq_len);
            if (gr->seq_len >= 0)
                fprintf(f, "%" PRId64, gr->seq_len);
            fputs("</td><td>", f);
            report_label(f, r, 0);
            fprintf(f, "</td><td data-v=\"%" PRIu64 "\">%s</td>", r->capacity,
                    r->capacity ? report_size(r->capacity, b, sizeof b) : "unlimited");
            char plan[96];
            fputs("<td>", f);
            report_esc(f, r->has_plan ? report_plan_text(r, plan, sizeof plan) : "–");
            fputs("</td>", f);
#define REPORT_TD_U64(v)                                                                       \
    if (strstr(#v, "peak_") || strstr(#v, "waste"))                                            \
        fprintf(f, "<td data-v=\"%" PRIu64 "\">%s</td>", v, report_size(v, b, sizeof b));      \
    else                                                                                       \
        fprintf(f, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", v, v);
#define REPORT_TD_I64(v) fprintf(f, "<td data-v=\"%" PRId64 "\">%" PRId64 "</td>", v, v);
#define REPORT_TD_F64(v)                                                                       \
    if (isfinite(v))                                                                           \
        fprintf(f, "<td data-v=\"%.6g\">%.4g</td>", v, v);                                     \
    else                                                                                       \
        fputs("<td data-v=\"0\">-</td>", f);
#define REPORT_TD(name, type) REPORT_TD_##type(m->name)
            GM_METRICS(REPORT_TD)
#undef REPORT_TD
#undef REPORT_TD_U64
#undef REPORT_TD_I64
#undef REPORT_TD_F64
            fputs("</tr>\n", f);
        }
    }
    fputs("</tbody></table></div></section>\n", f);
}

static const char report_css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
    "max-width:1100px;padding:0 16px 40px;color:#222}"
    "h1{margin:18px 0 4px}h2{border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:32px}"
    "h3{margin:22px 0 6px;font-size:15px}"
    "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;border-bottom:1px "
    "solid #e4e4e4;text-align:right;white-space:nowrap}td:first-child,th:first-child{text-align:"
    "left}th{background:#f3f3f3;cursor:pointer;user-select:none}td.win{font-weight:600;"
    "text-align:left}.wide{overflow-x:auto}"
    "svg.chart{width:100%;height:auto;background:#fcfcfc;border:1px solid #eee}"
    ".grid{stroke:#e6e6e6}.ax{font-size:11px;fill:#555}.lb{font-size:12px;fill:#222}"
    ".load{stroke:#000;stroke-dasharray:6 4;stroke-width:1.2}"
    ".bound{stroke:#9467bd;stroke-dasharray:2 3;stroke-width:1.5}"
    ".s-req{fill:#9aa9b8}.s-int{fill:#f2a541}.s-ext{fill:#d64545}.s-free{fill:#9fd49f}"
    ".legend{font-size:12px;margin:4px 0 10px}.lg{margin-right:14px;white-space:nowrap}"
    ".note{color:#666}figure{margin:10px 0}figcaption{font-weight:600}"
    "a{color:#1f5fa8;text-decoration:none}a:hover{text-decoration:underline}"
    "#toc{background:#f7f7f7;border:1px solid #e4e4e4;padding:6px 12px;margin:12px 0;"
    "font-size:13px}#toc ol{display:flex;flex-wrap:wrap;gap:2px 20px;margin:4px 0 2px;"
    "padding-left:18px}"
    ".tip{position:fixed;display:none;z-index:10;pointer-events:none;background:#fff;"
    "border:1px solid #bbb;border-radius:4px;box-shadow:0 2px 6px rgba(0,0,0,.15);"
    "padding:5px 8px;font-size:12px;max-width:460px}.tip .th{font-weight:600;margin-bottom:2px}"
    ".tip .tr{display:flex;align-items:center;white-space:nowrap}.tip .tr b{margin-left:auto;"
    "padding-left:14px}.tip .dd{color:#555}"
    ".sw{display:inline-block;width:9px;height:9px;margin-right:5px;border-radius:2px}"
    ".lg{cursor:pointer;user-select:none}.lg.off{opacity:.35;text-decoration:line-through}"
    ".hid{display:none}svg.ln{cursor:crosshair}.cross{stroke:#888;stroke-width:.6}"
    ".xa{stroke:#999}.marks path{fill:none}.mk-g{stroke:#c8c8c8;stroke-dasharray:3 3}"
    "path.mk-s{stroke:#333;stroke-width:1.5}path.mk-f{stroke:#2a7f3f;stroke-width:1.5}"
    "path.mk-b{stroke:#b5541c;stroke-width:1.5}path.mk-o{stroke:#aaa}text.mk-s{font-size:10px;fill:#333}"
    "text.mk-f{font-size:10px;fill:#2a7f3f;font-weight:600}text.mk-b{font-size:10px;"
    "fill:#b5541c;font-weight:600}"
    "table.heat td{text-align:center;min-width:58px;border:1px solid #fff}"
    "table.heat td:first-child{text-align:left;border:0;border-bottom:1px solid #e4e4e4}"
    "table.heat th{cursor:default;text-align:center}table.heat td.win{font-weight:700;"
    "text-align:center}table.heat td.oom{background:repeating-linear-gradient(45deg,#eee,"
    "#eee 4px,#ddd 4px,#ddd 8px);color:#a00}table.heat td.na{color:#bbb}"
    "table.heat td.ref{background:#f1f1f1;color:#777}"
    ".sites summary{cursor:pointer;padding:2px 0;font-size:13px}details.site{border-bottom:"
    "1px solid #eee}.sb{display:inline-block;width:110px;height:8px;background:#eee;"
    "margin:0 8px 0 4px}.sb span{display:block;height:100%;background:#5b8bd0}"
    ".sv{display:inline-block;width:76px;text-align:right}.sp{display:inline-block;width:52px;"
    "text-align:right;color:#555}.sc{display:inline-block;width:150px;padding-left:10px;"
    "color:#666;font-size:12px}.site code{font-size:12px}details.stack{margin:2px 0 2px 30px}"
    "details.stack summary{font-size:12px;color:#444}pre.frames{font-size:11px;"
    "margin:2px 0 6px 14px;white-space:pre-wrap;word-break:break-all;background:#fafafa;"
    "padding:4px 6px}";

static const char report_js[] =
    "document.querySelectorAll('table.sortable th').forEach(function(th){"
    "th.addEventListener('click',function(){var t=th.closest('table'),i=th.cellIndex,"
    "b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),asc=th.dataset.dir!=='asc';"
    "th.dataset.dir=asc?'asc':'desc';rows.sort(function(a,c){var x=a.cells[i],y=c.cells[i];"
    "var p=x.dataset.v!==undefined?parseFloat(x.dataset.v):x.textContent,"
    "q=y.dataset.v!==undefined?parseFloat(y.dataset.v):y.textContent;"
    "return (p<q?-1:p>q?1:0)*(asc?1:-1);});rows.forEach(function(r){b.appendChild(r);});});});";

/* Hover, legend toggles and the #selftest of the charts (tests/test_report.c
 * loads the page with #selftest in headless Chromium and reads its result).
 * Texts from the page reach the hover through textContent only. */
static const char report_js_ui[] =
    "(function(){\n"
    "'use strict';\n"
    "var U=['KiB','MiB','GiB','TiB','PiB','EiB'];\n"
    "/* Bytes as gmsim writes them (gm_format_size): 512 B, 1.50 GiB; ties to even, as printf. */\n"
    "function size(b){\n"
    "if(b<1024)return b+' B';\n"
    "var u=0,v=b/1024;\n"
    "while(u+1<U.length&&v>=1023.995){v/=1024;u++;}\n"
    "var c=v*100,r=Math.round(c);\n"
    "if(r-c===0.5&&r%2)r--;\n"
    "return (r/100).toFixed(2)+' '+U[u];\n"
    "}\n"
    "function fmt(u,v){return u==='%'?(v*100).toFixed(1)+'%':size(v);}\n"
    "/* A list attribute's numbers; a series' data-v is delta-coded in units of its data-q. */\n"
    "function nums(el,a){\n"
    "var k='_'+a;if(el[k])return el[k];\n"
    "var v=(el.getAttribute(a)||'').split(' ').map(Number),q=el.getAttribute('data-q');\n"
    "if(a==='data-v'&&q){q=+q;for(var i=0,s=0;i<v.length;i++){s+=v[i];v[i]=s*q;}}\n"
    "return (el[k]=v);\n"
    "}\n"
    "var tip=document.createElement('div');\n"
    "tip.className='tip';tip.setAttribute('role','tooltip');document.body.appendChild(tip);\n"
    "function line(cls,color,name,value,key){\n"
    "var d=document.createElement('div');d.className=cls;if(key)d.setAttribute('data-s',key);\n"
    "if(color){var s=document.createElement('span');s.className='sw';s.style.background=color;d.appendChild(s);}\n"
    "var n=document.createElement('span');n.textContent=name;d.appendChild(n);\n"
    "if(value!==undefined){var b=document.createElement('b');b.textContent=value;d.appendChild(b);}\n"
    "tip.appendChild(d);\n"
    "}\n"
    "function place(ev){\n"
    "tip.style.display='block';\n"
    "var x=ev.clientX+14,y=ev.clientY+14,w=tip.offsetWidth,h=tip.offsetHeight;\n"
    "if(x+w>innerWidth-4)x=Math.max(4,ev.clientX-14-w);\n"
    "if(y+h>innerHeight-4)y=Math.max(4,ev.clientY-14-h);\n"
    "tip.style.left=x+'px';tip.style.top=y+'px';\n"
    "}\n"
    "function hide(){tip.style.display='none';}\n"
    "/* Line charts: the point of each visible series nearest the pointer in x. */\n"
    "function lineHover(svg,ev){\n"
    "var m=svg.getScreenCTM();if(!m)return;\n"
    "var p=svg.createSVGPoint();p.x=ev.clientX;p.y=ev.clientY;p=p.matrixTransform(m.inverse());\n"
    "var ns=svg.namespaceURI,g=svg.querySelector('g.hov');\n"
    "if(!g){g=document.createElementNS(ns,'g');g.setAttribute('class','hov');svg.appendChild(g);}\n"
    "while(g.firstChild)g.removeChild(g.firstChild);\n"
    "tip.textContent='';\n"
    "var head=null,at=0,rows=[],u=svg.getAttribute('data-u'),all=svg.querySelectorAll('polyline.sr');\n"
    "for(var i=0;i<all.length;i++){\n"
    "var pl=all[i];if(pl.classList.contains('hid'))continue;\n"
    "var pts=pl.points,n=pts.numberOfItems;if(!n)continue;\n"
    "var lo=0,hi=n-1;\n"
    "while(lo<hi){var mid=(lo+hi)>>1;if(pts.getItem(mid).x<p.x)lo=mid+1;else hi=mid;}\n"
    "if(lo>0&&p.x-pts.getItem(lo-1).x<=pts.getItem(lo).x-p.x)lo--;\n"
    "var q=pts.getItem(lo),ev_=pl.hasAttribute('data-e')?nums(pl,'data-e'):nums(svg,'data-e');\n"
    "if(head===null){\n"
    "head=svg.getAttribute('data-xn')+' '+ev_[lo];at=ev_[lo];\n"
    "var x=document.createElementNS(ns,'line');\n"
    "x.setAttribute('x1',q.x);x.setAttribute('x2',q.x);x.setAttribute('y1',0);x.setAttribute('y2',svg.viewBox.baseVal.height);\n"
    "x.setAttribute('class','cross');g.appendChild(x);\n"
    "}\n"
    "var c=document.createElementNS(ns,'circle');\n"
    "c.setAttribute('cx',q.x);c.setAttribute('cy',q.y);c.setAttribute('r',3.5);c.setAttribute('fill',pl.getAttribute('stroke'));\n"
    "g.appendChild(c);\n"
    "rows.push([nums(pl,'data-v')[lo],pl]);\n"
    "}\n"
    "if(head===null){hide();return;}\n"
    "/* Highest first, as the lines lie on the chart. */\n"
    "rows.sort(function(a,b){return b[0]-a[0];});\n"
    "rows.forEach(function(r){line('tr',r[1].getAttribute('stroke'),r[1].getAttribute('data-n'),fmt(u,r[0]),r[1].getAttribute('data-s'));});\n"
    "/* The last mark at or before the point: where in the step it is. */\n"
    "var mk=svg.querySelectorAll('.marks path[data-e]'),last=null,le=-1;\n"
    "for(var k=0;k<mk.length;k++){var es=nums(mk[k],'data-e');for(var j=0;j<es.length&&es[j]<=at;j++)if(es[j]>le){le=es[j];last=mk[k];}}\n"
    "var h=document.createElement('div');h.className='th';\n"
    "h.textContent=head+(last?' · after '+last.getAttribute('data-n')+' (event '+le+')':'');\n"
    "tip.insertBefore(h,tip.firstChild);\n"
    "place(ev);\n"
    "}\n"
    "document.querySelectorAll('svg.ln').forEach(function(svg){\n"
    "svg.addEventListener('mousemove',function(ev){lineHover(svg,ev);});\n"
    "svg.addEventListener('mouseleave',function(){hide();var g=svg.querySelector('g.hov');if(g)g.textContent='';});\n"
    "});\n"
    "/* Bars, waste segments, heat map cells, site sizes: their own value. */\n"
    "function valued(t){return t&&t.closest?t.closest('[data-n][data-v]:not(polyline)'):null;}\n"
    "document.addEventListener('mouseover',function(ev){\n"
    "var t=valued(ev.target);if(!t)return;\n"
    "tip.textContent='';\n"
    "line('th',null,t.getAttribute('data-n'));\n"
    "line('tr',null,'',size(+t.getAttribute('data-v')));\n"
    "if(t.getAttribute('data-d'))line('dd',null,t.getAttribute('data-d'));\n"
    "place(ev);\n"
    "});\n"
    "document.addEventListener('mouseout',function(ev){if(valued(ev.target))hide();});\n"
    "/* Legend: an entry hides or shows every element of its figure with its key. */\n"
    "function toggle(lg){\n"
    "var fig=lg.closest('figure');if(!fig)return;\n"
    "var off=lg.classList.toggle('off'),keys={};\n"
    "lg.setAttribute('aria-pressed',off?'false':'true');\n"
    "fig.querySelectorAll('.lg.off').forEach(function(l){keys[l.getAttribute('data-s')]=1;});\n"
    "fig.querySelectorAll('svg [data-s]').forEach(function(el){\n"
    "el.classList.toggle('hid',el.getAttribute('data-s').split(' ').some(function(k){return keys[k];}));\n"
    "});\n"
    "}\n"
    "document.querySelectorAll('.lg[data-s]').forEach(function(lg){\n"
    "lg.addEventListener('click',function(){toggle(lg);});\n"
    "lg.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();toggle(lg);}});\n"
    "});\n"
    "/* #selftest: drive the handlers above with real events and write what the\n"
    " * page shows into a pre element, id selftest (tests/test_report.c reads it). */\n"
    "function selftest(){\n"
    "var out=[];function put(k,v){out.push(k+'='+v);}\n"
    "try{\n"
    "var fig=document.querySelector('#memory-over-time figure'),svg=fig.querySelector('svg.ln');\n"
    "var lg=fig.querySelector('.lg[data-s=\"r0\"]'),pl=svg.querySelector('polyline[data-s=\"r0\"]');\n"
    "var al=svg.querySelector('polyline[data-s=\"r0 al\"]'),v=nums(pl,'data-v'),i=0;\n"
    "for(var k=1;k<v.length;k++)if(v[k]>v[i])i=k;\n"
    "var q=pl.points.getItem(i),pt=svg.createSVGPoint();\n"
    "pt.x=q.x;pt.y=q.y;pt=pt.matrixTransform(svg.getScreenCTM());\n"
    "function move(){svg.dispatchEvent(new MouseEvent('mousemove',{bubbles:true,clientX:pt.x,clientY:pt.y}));}\n"
    "move();\n"
    "var r=tip.querySelector('[data-s=\"r0\"] b');\n"
    "put('series',pl.getAttribute('data-n'));put('value',v[i]);put('tip',r?r.textContent:'');\n"
    "put('tip-display',getComputedStyle(tip).display);\n"
    "lg.dispatchEvent(new MouseEvent('click',{bubbles:true}));\n"
    "put('hidden',getComputedStyle(pl).display);put('hidden-allocated',getComputedStyle(al).display);\n"
    "put('legend-pressed',lg.getAttribute('aria-pressed'));\n"
    "move();put('tip-after-hide',tip.querySelector('[data-s=\"r0\"]')?'present':'absent');\n"
    "lg.dispatchEvent(new MouseEvent('click',{bubbles:true}));\n"
    "put('shown',getComputedStyle(pl).display);\n"
    "var bar=document.querySelector('#peak-reserved svg rect[data-v]');\n"
    "bar.dispatchEvent(new MouseEvent('mouseover',{bubbles:true,clientX:20,clientY:20}));\n"
    "put('bar',bar.getAttribute('data-n'));put('bar-tip',(tip.querySelector('b')||{}).textContent);\n"
    "bar.dispatchEvent(new MouseEvent('mouseout',{bubbles:true}));\n"
    "put('bar-tip-after-out',getComputedStyle(tip).display);\n"
    "}catch(e){put('error',e);}\n"
    "var pre=document.createElement('pre');pre.id='selftest';pre.textContent=out.join('\\n');\n"
    "document.body.appendChild(pre);\n"
    "}\n"
    "if(location.hash==='#selftest')selftest();\n"
    "})();\n";

static int report_html(report_t *R)
{
    FILE *f = R->f;
    const char *title = R->cfg->title ? R->cfg->title : "gmsim report";
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    report_esc(f, title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", report_css);
    report_esc(f, title);
    fprintf(f, "</h1>\n<p class=\"note\">%zu trace%s, %zu run%s, gmsim %s.</p>\n", R->ngroups,
            R->ngroups == 1 ? "" : "s", R->nruns, R->nruns == 1 ? "" : "s", gm_version());
    report_toc(R);
    int hrc = report_heatmap(R);
    if (hrc)
        return hrc;
    report_summary(R);

    fputs("<section id=\"memory-over-time\"><h2>Memory over time</h2><p>Requested (black), "
          "reserved (solid) and allocated (dashed) bytes per policy over the trace's events, "
          "with load and, when an offline planner ran, its bound.  Ticks under the axis mark "
          "the trace's steps and its forward (F) and backward (B) passes.  Hover for the "
          "values; click a legend entry to hide or show its line.</p>\n",
          f);
    for (size_t g = 0; g < R->ngroups; g++) {
        fprintf(f, "<figure id=\"g%zu\"><figcaption>", g);
        report_trace_title(R, &R->groups[g]);
        fputs("</figcaption>", f);
        int rc = report_memory_chart(R, &R->groups[g]);
        if (rc)
            return rc;
        fputs("</figure>\n", f);
    }
    fputs("</section>\n<section id=\"peak-reserved\"><h2>Peak reserved</h2><p>The most each "
          "policy held from the device, against load (★ the winner; the offline bound "
          "faded).</p>\n",
          f);
    for (size_t g = 0; g < R->ngroups; g++) {
        fputs("<figure><figcaption>", f);
        report_trace_title(R, &R->groups[g]);
        fputs("</figcaption>", f);
        report_bars(R, &R->groups[g], 0);
        fputs("</figure>\n", f);
    }
    fputs("</section>\n", f);

    if (report_has_seq(R)) {
        fputs("<section id=\"seq-len\"><h2>Against sequence length</h2>\n", f);
        report_seq_chart(R, 0);
        report_seq_chart(R, 1);
        fputs("</section>\n", f);
    }

    fputs("<section id=\"waste-at-peak\"><h2>Waste at the peak</h2><p>At the moment each "
          "policy's reservation peaks: bytes in use by the application (grey), rounding inside "
          "blocks (internal, orange), free but unusable for a new request (external: outside "
          "the largest free block, red) and the largest free block (green).</p>\n",
          f);
    for (size_t g = 0; g < R->ngroups; g++) {
        fputs("<figure><figcaption>", f);
        report_trace_title(R, &R->groups[g]);
        fputs("</figcaption>", f);
        report_bars(R, &R->groups[g], 1);
        fputs("</figure>\n", f);
    }
    fputs("</section>\n", f);

    report_sites_section(R);
    report_metrics_table(R);
    fprintf(f, "<script>%s\n%s</script>\n</body>\n</html>\n", report_js, report_js_ui);
    return 0;
}

static int report_md(report_t *R)
{
    FILE *f = R->f;
    fputs("## ", f);
    report_md_esc(f, R->cfg->title ? R->cfg->title : "gmsim report");
    fprintf(f, "\n\n%zu trace%s, %zu run%s.  Winner: the allocator with the least peak "
               "reserved and no OOM (native, a device call per request, is a reference, not a "
               "contender); saving against PyTorch's caching allocator with default "
               "settings.\n\n",
            R->ngroups, R->ngroups == 1 ? "" : "s", R->nruns, R->nruns == 1 ? "" : "s");
    fputs("| trace | seq_len | load | winner | peak reserved | above load | baseline | saving | "
          "offline bound |\n|---|--:|--:|---|--:|--:|--:|--:|--:|\n",
          f);
    for (size_t g = 0; g < R->ngroups; g++) {
        const report_group_t *gr = &R->groups[g];
        char b[32];
        fputs("| ", f);
        report_md_esc(f, gr->name);
        if (R->many_devices || gr->capacity) {
            fprintf(f, " (%s)", gr->capacity ? report_size(gr->capacity, b, sizeof b)
                                             : "unlimited");
        }
        fputs(" | ", f);
        if (gr->seq_len >= 0)
            fprintf(f, "%" PRId64, gr->seq_len);
        fprintf(f, " | %s | ", report_size(gr->load, b, sizeof b));
        if (gr->winner >= 0) {
            const report_run_t *w = &R->runs[gr->winner];
            report_md_esc(f, w->cut);
            fprintf(f, " | %s | %+.1f%% | ", report_size(w->m.peak_reserved, b, sizeof b),
                    w->m.overhead * 100);
        } else {
            fputs("- | | | ", f);
        }
        if (gr->baseline >= 0 && gr->winner >= 0) {
            const report_run_t *bl = &R->runs[gr->baseline], *w = &R->runs[gr->winner];
            double save = bl->m.peak_reserved
                              ? 1.0 - (double)w->m.peak_reserved / (double)bl->m.peak_reserved
                              : 0.0;
            fprintf(f, "%s | %.1f%% | ", report_size(bl->m.peak_reserved, b, sizeof b),
                    save * 100);
        } else {
            fputs("no run | | ", f);
        }
        if (gr->bound >= 0)
            fprintf(f, "%s |\n", report_size(R->runs[gr->bound].m.peak_reserved, b, sizeof b));
        else
            fputs("not run |\n", f);
    }
    return 0;
}

static void report_group_release(report_group_t *gr)
{
    free(gr->runs);
    free(gr->shown);
    for (size_t k = 0; k < gr->nsites; k++) {
        free(gr->sites[k].name);
        for (size_t i = 0; i < gr->sites[k].nstacks; i++)
            free(gr->sites[k].stacks[i].text);
        free(gr->sites[k].stacks);
    }
    free(gr->sites);
    free(gr->marks);
    for (uint32_t t = 0; t < gr->ntags; t++)
        free(gr->tags[t]);
    free(gr->tags);
}

int gm_report_write(const gm_report_config_t *cfg, FILE *out, gm_report_stats_t *stats,
                    gm_error_t *err)
{
    gm_report_stats_t local;
    if (stats == NULL)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    report_t R = {.cfg = cfg, .f = out, .err = err};
    int rc = report_load_stores(&R);
    if (rc == 0) {
        report_same_content(&R, stats);
        rc = report_collect_runs(&R, stats);
    }
    if (rc == 0)
        rc = report_group_runs(&R);
    if (rc == 0 && R.ngroups == 0)
        rc = gm_error_set(err, GM_ENOTFOUND,
                          "no runs%s%s%s in '%s'%s (run 'gmsim sweep' or 'gmsim replay --save' "
                          "first)",
                          cfg->trace_glob ? " of a trace matching '" : "",
                          cfg->trace_glob ? cfg->trace_glob : "", cfg->trace_glob ? "'" : "",
                          cfg->nstores ? cfg->stores[0] : "", cfg->nstores > 1 ? " and the others" : "");
    for (size_t g = 0; rc == 0 && cfg->format == GM_REPORT_HTML && g < R.ngroups; g++) {
        /* Marks and sites are the trace's, not the device's: read each
         * trace once, the first group of its digest, and only when it has
         * marks, or frames and sites are wanted. */
        report_group_t *gr = &R.groups[g];
        size_t same = 0;
        while (same < g && strcmp(R.groups[same].digest, gr->digest) != 0)
            same++;
        gr->trace_of = same;
        size_t where;
        const gm_trace_info_t *t = gr->attrs ? report_find_trace(&R, gr->digest, &where) : NULL;
        if (same < g || t == NULL || (t->marks == 0 && cfg->no_sites))
            continue;
        rc = report_read_trace(&R, gr, !cfg->no_sites);
    }
    if (rc == 0) {
        stats->traces = R.ngroups;
        stats->runs = R.nruns;
        rc = cfg->format == GM_REPORT_MD ? report_md(&R) : report_html(&R);
    }
    if (rc == 0 && (fflush(out) != 0 || ferror(out)))
        rc = gm_error_set(err, GM_EIO, "cannot write the report");
    for (size_t g = 0; g < R.ngroups; g++)
        report_group_release(&R.groups[g]);
    free(R.groups);
    free(R.runs);
    for (size_t i = 0; R.stores && i < cfg->nstores; i++) {
        gm_run_info_free_list(R.stores[i].runs, R.stores[i].nruns);
        gm_trace_info_free_list(R.stores[i].traces, R.stores[i].ntraces);
        if (R.stores[i].s)
            gm_store_close(R.stores[i].s);
    }
    free(R.stores);
    return rc;
}
