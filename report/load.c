/*
 * report/load.c — the report's data: the stores' runs, de-duplicated and
 * grouped, and the traces read for their marks and allocation sites.
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
#include <stdlib.h>
#include <string.h>

#include "gmsim/advice.h"
#include "gmsim/attrs.h"
#include "gmsim/policy.h"
#include "gmsim/replay.h"
#include "gmsim/store.h"
#include "gmsim/sweep.h"
#include "report/report.h"
#include "base/bits.h"

#define REPORT_SITES 12       /* sites shown per trace */
#define REPORT_STACKS 5       /* stacks shown per site */
#define REPORT_STACK_LINES 48 /* frames shown per stack */
#define REPORT_LINE_CHARS 200 /* characters shown per frame */
#define REPORT_MARKS 4096     /* MARK events kept per trace */

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
    return c ? c : gm__cmp_u64(x->run, y->run);
}

static const report_t *report_sort_ctx;

static int report_by_peak(const void *a, const void *b)
{
    const report_run_t *x = &report_sort_ctx->runs[*(const size_t *)a];
    const report_run_t *y = &report_sort_ctx->runs[*(const size_t *)b];
    int c = gm__cmp_u64(x->m.peak_reserved, y->m.peak_reserved);
    return c ? c : strcmp(x->label, y->label);
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

int report_load_stores(report_t *R)
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
const gm_trace_info_t *report_find_trace(const report_t *R, const char *digest,
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
void report_same_content(const report_t *R, gm_report_stats_t *stats)
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

int report_collect_runs(report_t *R, gm_report_stats_t *stats)
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
            r->warm = gm_run_start(ri->policy, ri->params, ri->metrics, NULL);
            if (r->ops && gm_policy_has_start(r->ops)) { /* the start, said beside the label */
                size_t used = strlen(r->label);
                snprintf(r->label + used, sizeof r->label - used, " (%s)",
                         r->warm ? "warm" : "cold");
            }
            char cap[64];
            r->capacity = gm_json_member(ri->device, "capacity", cap, sizeof cap)
                              ? strtoull(cap, NULL, 10)
                              : 0;
            if (r->ops && r->ops->role == GM_ROLE_BASELINE) {
                gm_params_t def;
                if (gm_params_init(&def, r->ops, NULL) == 0) {
                    /* the defaults at the run's start: a sweep compares at one */
                    char st[32];
                    if (gm_policy_has_start(r->ops) &&
                        gm_json_member(ri->params, "start", st, sizeof st))
                        gm_params_set(&def, "start", st, NULL);
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

int report_group_runs(report_t *R)
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
        /* A saving compares at one start: the baseline at the winner's,
         * where the runs have both (caching.start=recorded,empty). */
        for (size_t k = 0; gr->winner >= 0 && gr->baseline >= 0 && k < gr->nruns; k++) {
            const report_run_t *r = &R->runs[gr->runs[k]];
            if (r->baseline && R->runs[gr->baseline].warm != R->runs[gr->winner].warm &&
                r->warm == R->runs[gr->winner].warm) {
                gr->baseline = (ssize_t)gr->runs[k];
                break;
            }
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
    return gm__cmp_u64(x->frames, y->frames);
}

static int report_stack_by_bytes(const void *a, const void *b)
{
    const report_stack_t *x = a, *y = b;
    int c = gm__cmp_u64(y->bytes, x->bytes);
    return c ? c : gm__cmp_u64(x->frames, y->frames);
}

static int report_site_by_bytes(const void *a, const void *b)
{
    const report_site_t *x = a, *y = b;
    int c = gm__cmp_u64(y->bytes, x->bytes);
    return c ? c : strcmp(x->name, y->name);
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

/* The site of a stack (gm_site_frame), malloc'd, at most REPORT_LINE_CHARS;
 * NULL when out of memory. */
static char *report_site_frame(const char *text)
{
    if (text == NULL)
        return strdup("(no frames recorded)");
    char buf[REPORT_LINE_CHARS + 1];
    gm_site_frame(text, buf, sizeof buf);
    return strdup(buf);
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
int report_read_trace(report_t *R, report_group_t *gr, int sites)
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
