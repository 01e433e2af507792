/*
 * report/report.c — the HTML (or Markdown) report of stored runs (API in
 * gmsim/report.h, user guide in docs/report.md): gm_report_write loads the
 * stores (report/load.c) and writes the page (report/html.c, its charts
 * drawn by report/svg.c) or the Markdown summary (report/md.c); here too
 * the escaping and the colours every output shares.
 *
 * Colours: one per policy, by name (report_palette), in every chart and
 * every report; the baseline, when drawn beside its policy's best, is
 * dash-dotted.
 */
#include <stdlib.h>
#include <string.h>

#include "gmsim/advice.h"
#include "gmsim/device.h"
#include "report/report.h"

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

/* ---- escaping -------------------------------------------------------------- */

/* A JSON string safe inside a script element (the active-memory and
 * address-space views' data): '<', '>' and '&' as \u escapes, and ':' as
 * \u003a so that no text of a trace reads as a URL in the file. */
void report_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == ':' || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* A summary row's trace: its name and, where the report needs it (several
 * devices, or a capacity), the capacity or "unlimited"; escaped for the
 * page, or for Markdown (md 1). */
void report_summary_trace(const report_t *R, const report_group_t *gr, int md)
{
    FILE *f = R->f;
    if (md)
        report_md_esc(f, gr->name);
    else
        report_esc(f, gr->name);
    if (!R->many_devices && !gr->capacity)
        return;
    char b[32];
    const char *cap = gr->capacity ? report_size(gr->capacity, b, sizeof b) : "unlimited";
    fprintf(f, md ? " (%s)" : " · %s", cap);
}

/* The winner's saving against the baseline: 1 - its peak reserved over the
 * baseline's (0 for a baseline of 0 bytes). */
double report_saving(const report_run_t *baseline, const report_run_t *winner)
{
    return baseline->m.peak_reserved ? 1.0 - (double)winner->m.peak_reserved /
                                                 (double)baseline->m.peak_reserved
                                     : 0.0;
}

/* Text for HTML content and attribute values. */
void report_esc(FILE *f, const char *s)
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
void report_md_esc(FILE *f, const char *s)
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

const char *report_size(uint64_t v, char *buf, size_t len)
{
    gm_format_size(v, buf, (unsigned)len);
    return buf;
}

int report_group_advice(const report_t *R, const report_group_t *gr, char *text, size_t len)
{
    gm_torch_advice_t a;
    gm_replay_config_t rc;
    gm_replay_config_default(&rc);
    rc.device.capacity = gr->capacity;
    if (gr->attrs == NULL || gm_torch_advise(R->stores[gr->store].s, gr->name, &rc, &a, NULL) ||
        !a.torch)
        return 0;
    gm_torch_advice_text(&a, text, len);
    return 1;
}

int report_metric_known(const gm_metrics_t *m, const char *name)
{
    int k = gm_metric_find(name);
    return k >= 0 && gm_metric_known(m, (size_t)k);
}

const char *report_policy_color(const char *policy)
{
    for (size_t i = 0; i < REPORT_NPALETTE; i++)
        if (strcmp(report_palette[i].policy, policy) == 0)
            return report_palette[i].color;
    unsigned h = 0;
    for (const char *p = policy; *p; p++)
        h = h * 31u + (unsigned char)*p;
    return report_extra[h % REPORT_NEXTRA];
}

const char *report_color(const report_run_t *r)
{
    return report_policy_color(r->info->policy);
}

/* Palette position of a policy (unknown ones after, by name): the order
 * of the heat map's columns. */
size_t report_policy_rank(const char *policy)
{
    for (size_t i = 0; i < REPORT_NPALETTE; i++)
        if (strcmp(report_palette[i].policy, policy) == 0)
            return i;
    return REPORT_NPALETTE;
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
