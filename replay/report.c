/*
 * replay/report.c — the HTML (or Markdown) report of stored runs (API in
 * gmsim/report.h, user guide in docs/report.md).
 *
 * Data.  Every store given is opened read only; its traces and runs are
 * listed.  Runs are de-duplicated by key (the first store, lowest id wins)
 * and grouped by (trace digest, device): a group is one section of the
 * report.  Its name, attributes and frames come from a trace with that
 * digest in any store given (the runs table keeps the name it ran under
 * as a fallback).  Within a group:
 *   - the offline bound is the least peak of the policies that plan with
 *     the whole future (GM_POLICY_NEEDS_LIFETIMES);
 *   - the winner is the run with the least peak reserved among the
 *     policies that cache, without OOMs; policies that cache nothing (no
 *     empty_cache, like native: a device call per request, at load by
 *     construction) and planners are references, not contenders, and count
 *     only when nothing else ran (runs with OOMs last);
 *   - the baseline is `caching` with every parameter at its default;
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
 * that sorts the metrics table.  Every text from a store goes through
 * report_esc, which also writes ':' as a character reference, so no text
 * from a trace can form a URL scheme, a tag or an attribute.  Timelines are
 * reduced to at most REPORT_POINTS points per line (maxima per bucket, so
 * peaks stay visible) and coordinates are integers: a report of a few
 * hundred runs stays around a megabyte.
 *
 * Waste at the peak (t*: of the events at the reserved peak, the one with
 * the most allocated bytes; docs/metrics.md) is split from the
 * stored metrics: allocated = reserved × (1 − frag_at_peak); internal
 * (rounding) = internal_waste_at_peak; free = reserved − allocated, of which
 * external (free but unusable: not in the largest free block) = free ×
 * external_frag_at_peak, and the rest is the largest free block.
 *
 * Allocation sites: for traces that carry stack frames, the live
 * allocations at the first peak of requested bytes (LOAD), summed by
 * frames, top REPORT_SITES by bytes; two passes over the trace.
 */
#include "gmsim/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "gmsim/device.h"
#include "gmsim/policy.h"
#include "gmsim/replay.h"
#include "gmsim/store.h"
#include "gmsim/advice.h"
#include "gmsim/sweep.h"
#include "gmsim/version.h"

#define REPORT_POINTS 300
#define REPORT_SITES 10
#define REPORT_FRAME_CHARS 600

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
    size_t group;
} report_run_t;

typedef struct report_site {
    uint32_t frames;
    uint64_t bytes;
    uint64_t count;
    char *text;
} report_site_t;

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
    uint64_t sites_total;
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

static const char *const report_colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                            "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                            "#bcbd22", "#7f7f7f"};
#define REPORT_NCOLORS (sizeof report_colors / sizeof report_colors[0])

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

static const char *report_color(const report_run_t *r)
{
    if (r->ops) {
        for (size_t i = 0; i < gm_policy_count(); i++)
            if (gm_policy_at(i) == r->ops)
                return report_colors[i % REPORT_NCOLORS];
    }
    unsigned h = 0;
    for (const char *p = r->info->policy; *p; p++)
        h = h * 31u + (unsigned char)*p;
    return report_colors[h % REPORT_NCOLORS];
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
            r->bound = r->ops && (r->ops->flags & GM_POLICY_NEEDS_LIFETIMES);
            r->reference = r->ops && r->ops->empty_cache == NULL;
            gm_config_label(ri->policy, ri->params, r->label, sizeof r->label);
            char cap[64];
            r->capacity = gm_json_member(ri->device, "capacity", cap, sizeof cap)
                              ? strtoull(cap, NULL, 10)
                              : 0;
            if (r->ops && strcmp(ri->policy, "caching") == 0) {
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
                gr->seq_len = gm_attr_int(t->attrs, "seq_len");
                if (!gm_json_member(t->attrs, "model", gr->model, sizeof gr->model))
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

static int report_by_bytes(const void *a, const void *b)
{
    const report_site_t *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->frames < y->frames ? -1 : x->frames > y->frames;
}

/* The top allocation sites live at the first peak of requested bytes. */
static int report_sites(report_t *R, report_group_t *gr)
{
    gm_store_t *s = R->stores[gr->store].s;
    gm_reader_t *rd;
    int rc = gm_reader_open(s, gr->name, &rd, R->err);
    if (rc)
        return rc;
    if (gm_reader_frames(rd, 1) == NULL) {
        gm_reader_close(rd);
        return 0;
    }
    uint64_t allocs = gm_reader_info(rd)->allocs;
    uint64_t *size = calloc(allocs ? allocs : 1, sizeof *size);
    uint32_t *fr = calloc(allocs ? allocs : 1, sizeof *fr);
    if (size == NULL || fr == NULL) {
        free(size);
        free(fr);
        gm_reader_close(rd);
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    }
    /* Pass 1: the index of the first peak; pass 2: the live set there. */
    uint64_t peak_at = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        if (pass == 1) {
            gm_reader_close(rd);
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
                if ((e->op != GM_OP_ALLOC && e->op != GM_OP_FREE) || e->id >= allocs)
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
                    peak_at = index;
                }
                if (pass == 1 && index == peak_at) {
                    done = 1;
                    break;
                }
            }
        }
        if (pass == 0)
            memset(size, 0, allocs * sizeof *size);
    }
    report_pair_t *pairs = NULL;
    size_t np = 0;
    if (rc == 0 && (pairs = malloc((allocs ? allocs : 1) * sizeof *pairs)) == NULL)
        rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
    for (uint64_t id = 0; rc == 0 && id < allocs; id++)
        if (size[id])
            pairs[np++] = (report_pair_t){fr[id], size[id]};
    if (rc == 0) {
        qsort(pairs, np, sizeof *pairs, report_by_frames);
        report_site_t *sites = malloc((np ? np : 1) * sizeof *sites);
        size_t ns = 0;
        if (sites == NULL) {
            rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < np; i++) {
                if (ns == 0 || sites[ns - 1].frames != pairs[i].frames)
                    sites[ns++] = (report_site_t){pairs[i].frames, 0, 0, NULL};
                sites[ns - 1].bytes += pairs[i].size;
                sites[ns - 1].count++;
                gr->sites_total += pairs[i].size;
            }
            qsort(sites, ns, sizeof *sites, report_by_bytes);
            if (ns > REPORT_SITES)
                ns = REPORT_SITES;
            for (size_t i = 0; i < ns; i++) {
                const char *t = sites[i].frames ? gm_reader_frames(rd, sites[i].frames) : NULL;
                sites[i].text = strdup(t ? t : "(no frames recorded)");
            }
            gr->sites = sites;
            gr->nsites = ns;
        }
    }
    free(pairs);
    free(size);
    free(fr);
    gm_reader_close(rd);
    return rc;
}

/* ---- SVG ------------------------------------------------------------------------ */

#define W 1000
#define H 300
#define ML 80
#define MR 20
#define MT 12
#define MB 34

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

/* A polyline of points (x from x0..x1 as event index, y value) reduced to
 * REPORT_POINTS buckets (maximum per bucket). */
static void report_line(FILE *f, const gm_timeline_point_t *pts, size_t n, uint64_t events,
                        double top, int which, const char *color, const char *extra)
{
    if (n == 0)
        return;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" %s points=\"", color, extra);
    double xscale = (double)(W - ML - MR) / (double)(events ? events : 1);
    size_t buckets = n < REPORT_POINTS ? n : REPORT_POINTS;
    for (size_t b = 0; b < buckets; b++) {
        size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;
        uint64_t v = 0, ev = pts[hi - 1].event;
        for (size_t k = lo; k < hi; k++) {
            uint64_t x = which == 0 ? pts[k].requested
                         : which == 1 ? pts[k].allocated
                                      : pts[k].reserved;
            if (x > v)
                v = x;
        }
        int px = (int)(ML + (double)ev * xscale);
        int py = (int)(MT + (H - MT - MB) * (1 - (double)v / top));
        fprintf(f, "%s%d,%d", b ? " " : "", px, py);
    }
    fputs("\"/>", f);
}

static void report_hline(FILE *f, double v, double top, const char *cls, const char *label)
{
    int y = (int)(MT + (H - MT - MB) * (1 - v / top));
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"%s\"/>", ML, y, W - MR, y,
            cls);
    int below = strcmp(cls, "load") == 0;
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">%s</text>", W - MR - 4,
            below ? y + 13 : y - 4, label);
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

static void report_legend_item(FILE *f, const char *color, const char *dash, const char *label)
{
    fprintf(f, "<span class=\"lg\"><svg width=\"22\" height=\"10\"><line x1=\"0\" y1=\"5\" "
               "x2=\"22\" y2=\"5\" stroke=\"%s\" stroke-width=\"2\"%s/></svg> ",
            color, dash);
    report_esc(f, label);
    fputs("</span>", f);
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
    size_t with = 0;
    for (size_t k = 0; k < gr->nshown; k++)
        with += ntl[k] > 0;
    if (rc == 0 && with == 0) {
        fputs("<p class=\"note\">no timeline stored for these runs</p>", f);
    } else if (rc == 0) {
        fprintf(f, "<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\">", W, H);
        double top = report_y_axis(f, ymax * 1.05, 1);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">event</text>",
                (W + ML) / 2, H - 4);
        for (size_t k = 0; k < gr->nshown; k++) {
            const char *c = report_color(&R->runs[gr->shown[k]]);
            report_line(f, tl[k], ntl[k], events, top, 1, c,
                        "stroke-width=\"1\" stroke-dasharray=\"4 3\" opacity=\"0.8\"");
            report_line(f, tl[k], ntl[k], events, top, 2, c, "stroke-width=\"1.6\"");
        }
        for (size_t k = 0; k < gr->nshown; k++)
            if (ntl[k]) {
                report_line(f, tl[k], ntl[k], events, top, 0, "#000", "stroke-width=\"1.2\"");
                break;
            }
        report_hline(f, (double)gr->load, top, "load", "load");
        if (gr->bound >= 0)
            report_hline(f, (double)R->runs[gr->bound].m.peak_reserved, top, "bound",
                         "offline bound");
        fputs("</svg><div class=\"legend\">", f);
        report_legend_item(f, "#000", "", "requested");
        for (size_t k = 0; k < gr->nshown; k++) {
            const report_run_t *r = &R->runs[gr->shown[k]];
            char lab[200];
            snprintf(lab, sizeof lab, "%s reserved", r->cut);
            report_legend_item(f, report_color(r), "", lab);
        }
        report_legend_item(f, "#666", " stroke-dasharray=\"4 3\"", "allocated (same colour)");
        fputs("</div>", f);
    }
    for (size_t k = 0; k < gr->nshown; k++)
        free(tl[k]);
    free(tl);
    free(ntl);
    return rc;
}

/* Horizontal bars: peak reserved per run shown, against load (and the
 * bound); with waste = 1 the bars are split at t*. */
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
    fprintf(f, "<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\">", W, h);
    for (size_t k = 0; k < n; k++) {
        size_t ri = k < gr->nshown ? gr->shown[k] : (size_t)gr->bound;
        const report_run_t *r = &R->runs[ri];
        int y = 6 + (int)k * rowh;
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lb\" text-anchor=\"end\">", lw - 8, y + 14);
        report_label(f, r, 1);
        if (k < gr->nshown && (ssize_t)ri == gr->winner)
            fputs(" ★", f);
        fputs("</text>", f);
        const gm_metrics_t *m = &r->m;
        double R_ = (double)m->peak_reserved;
        if (!waste) {
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"%s/>", lw, y,
                    (int)(R_ * scale + 0.5), rowh - 6, report_color(r),
                    r->bound ? " opacity=\"0.5\"" : "");
        } else {
            double A = R_ * (1 - (isfinite(m->frag_at_peak) ? m->frag_at_peak : 0));
            double internal = (double)m->internal_waste_at_peak;
            if (internal > A)
                internal = A;
            double freeb = R_ - A;
            double ext = freeb * (isfinite(m->external_frag_at_peak) ? m->external_frag_at_peak : 0);
            double seg[4] = {A - internal, internal, ext, freeb - ext};
            static const char *const cls[4] = {"s-req", "s-int", "s-ext", "s-free"};
            double x = lw;
            for (int s = 0; s < 4; s++) {
                if (seg[s] > 0)
                    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"%s\"/>",
                            (int)x, y, (int)(seg[s] * scale + 0.5), rowh - 6, cls[s]);
                x += seg[s] * scale;
            }
        }
        char b1[32];
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lb\">%s", (int)(lw + R_ * scale) + 6, y + 14,
                report_size(m->peak_reserved, b1, sizeof b1));
        if (!waste && gr->load)
            fprintf(f, " (%+.1f%%)", m->overhead * 100);
        if (waste && m->peak_reserved) {
            char b2[32], b3[32];
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
               "policy)</figcaption><svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\">",
            frag ? "fragmentation at the peak" : "peak reserved", W, H);
    double top = report_y_axis(f, ymax > 0 ? ymax * 1.05 : 1, !frag);
    for (size_t l = 0; l < nl; l++) {
        int x = (int)(ML + 30 + (double)(W - ML - MR - 60) * (nl > 1 ? (double)l / (double)(nl - 1) : 0.5));
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">%" PRId64 "</text>",
                x, H - 14, lens[l]);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">seq_len</text>",
            (W + ML) / 2, H - 1);
    for (size_t p = 0; p <= np; p++) {
        if (p == np && frag)
            break;
        const char *color = p == np ? "#000" : report_color(polrun[p]);
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color,
                p == np ? " stroke-dasharray=\"6 4\"" : "");
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
        fputs("\"/>", f);
        for (size_t l = 0; l < nl; l++) {
            double v = val[p * nl + l];
            if (v < 0)
                continue;
            int x = (int)(ML + 30 + (double)(W - ML - MR - 60) * (nl > 1 ? (double)l / (double)(nl - 1) : 0.5));
            int y = (int)(MT + (H - MT - MB) * (1 - v / top));
            fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"%s\"/>", x, y, color);
        }
    }
    fputs("</svg><div class=\"legend\">", f);
    for (size_t p = 0; p < np; p++)
        report_legend_item(f, report_color(polrun[p]), "", pols[p]);
    if (!frag)
        report_legend_item(f, "#000", " stroke-dasharray=\"6 4\"", "load");
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
          "<th>capacity</th>",
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
    ".note{color:#666}pre.frames{font-size:11px;margin:0;white-space:pre-wrap;text-align:left;"
    "max-width:700px}td.fr{text-align:left}figure{margin:10px 0}figcaption{font-weight:600}";

static const char report_js[] =
    "document.querySelectorAll('table.sortable th').forEach(function(th){"
    "th.addEventListener('click',function(){var t=th.closest('table'),i=th.cellIndex,"
    "b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),asc=th.dataset.dir!=='asc';"
    "th.dataset.dir=asc?'asc':'desc';rows.sort(function(a,c){var x=a.cells[i],y=c.cells[i];"
    "var p=x.dataset.v!==undefined?parseFloat(x.dataset.v):x.textContent,"
    "q=y.dataset.v!==undefined?parseFloat(y.dataset.v):y.textContent;"
    "return (p<q?-1:p>q?1:0)*(asc?1:-1);});rows.forEach(function(r){b.appendChild(r);});});});";

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
    report_summary(R);

    fputs("<section id=\"memory-over-time\"><h2>Memory over time</h2><p>Requested (black), "
          "reserved (solid) and allocated (dashed) bytes per policy over the trace's events, "
          "with load and, when an offline planner ran, its bound.</p>\n",
          f);
    for (size_t g = 0; g < R->ngroups; g++) {
        fputs("<figure><figcaption>", f);
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

    size_t distinct = 0;
    for (size_t g = 0; g < R->ngroups; g++)
        if (R->groups[g].seq_len >= 0 &&
            (distinct == 0 || g == 0 || R->groups[g].seq_len != R->groups[g - 1].seq_len))
            distinct++;
    if (distinct >= 2) {
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

    size_t with_sites = 0;
    for (size_t g = 0; g < R->ngroups; g++)
        with_sites += R->groups[g].nsites > 0;
    if (with_sites) {
        fputs("<section id=\"allocation-sites\"><h2>Top allocation sites at the peak</h2><p>"
              "Live allocations at the first peak of requested bytes, by stack.</p>\n",
              f);
        for (size_t g = 0; g < R->ngroups; g++) {
            const report_group_t *gr = &R->groups[g];
            if (gr->nsites == 0)
                continue;
            fputs("<h3>", f);
            report_trace_title(R, gr);
            fputs("</h3><table><thead><tr><th>bytes</th><th>share</th><th>allocations</th>"
                  "<th>frames</th></tr></thead><tbody>\n",
                  f);
            for (size_t k = 0; k < gr->nsites; k++) {
                const report_site_t *s = &gr->sites[k];
                char b[32];
                fprintf(f, "<tr><td>%s</td><td>%.1f%%</td><td>%" PRIu64 "</td><td class=\"fr\">"
                           "<pre class=\"frames\">",
                        report_size(s->bytes, b, sizeof b),
                        gr->sites_total ? 100.0 * (double)s->bytes / (double)gr->sites_total : 0,
                        s->count);
                char shown[REPORT_FRAME_CHARS + 4];
                snprintf(shown, sizeof shown, "%s", s->text ? s->text : "");
                if (s->text && strlen(s->text) > REPORT_FRAME_CHARS)
                    strcpy(shown + REPORT_FRAME_CHARS, "...");
                report_esc(f, shown);
                fputs("</pre></td></tr>\n", f);
            }
            fputs("</tbody></table>\n", f);
        }
        fputs("</section>\n", f);
    }
    report_metrics_table(R);
    fprintf(f, "<script>%s</script>\n</body>\n</html>\n", report_js);
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
    for (size_t g = 0; rc == 0 && cfg->format == GM_REPORT_HTML && !cfg->no_sites &&
                       g < R.ngroups;
         g++) {
        /* Sites are the trace's, not the device's: compute once per trace. */
        report_group_t *gr = &R.groups[g];
        if (gr->attrs == NULL)
            continue;
        size_t same = 0;
        while (same < g && strcmp(R.groups[same].digest, gr->digest) != 0)
            same++;
        if (same < g) {
            continue;
        }
        rc = report_sites(&R, gr);
    }
    if (rc == 0) {
        stats->traces = R.ngroups;
        stats->runs = R.nruns;
        rc = cfg->format == GM_REPORT_MD ? report_md(&R) : report_html(&R);
    }
    if (rc == 0 && (fflush(out) != 0 || ferror(out)))
        rc = gm_error_set(err, GM_EIO, "cannot write the report");
    for (size_t g = 0; g < R.ngroups; g++) {
        free(R.groups[g].runs);
        free(R.groups[g].shown);
        for (size_t k = 0; k < R.groups[g].nsites; k++)
            free(R.groups[g].sites[k].text);
        free(R.groups[g].sites);
    }
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
