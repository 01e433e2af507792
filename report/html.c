/*
 * report/html.c — the report as one HTML page: its sections, the heat map,
 * the contents, the allocation sites, the table of every run, and the
 * page around them.
 *
 * Output.  One HTML file, no reference to anything outside it: inline CSS
 * (report/page.css), SVG drawn by report/svg.c (no xmlns attribute needed
 * inline), one inline script (report/page.js: the table sort, the hover,
 * the legend toggles and a #selftest); both files are embedded at build
 * time (cmake/embed.cmake).  Links
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
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/device.h"
#include "gmsim/replay.h"
#include "gmsim/advice.h"
#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "gmsim/version.h"
#include "report/report.h"
/* The page's style and script (report/page.css, report/page.js), C arrays
 * made at build time by cmake/embed.cmake. */
#include "report/page_css.h"
#include "report/page_js.h"
#include "base/bits.h"

/* A planner's plan as the report shows it: "optimal" (proved), else the
 * status and how far above the lower bound it may be; "" without a plan. */
const char *report_plan_text(const report_run_t *r, char *buf, size_t len)
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

/* ---- sections ---------------------------------------------------------------------- */

/* What a trace is, from its "source" attribute: predicted (scale, synth:
 * the trace is a model's), a random workload (synth --events), else
 * captured (a snapshot, a capture, an import); "" when unknown. */
const char *report_trace_kind(const report_group_t *gr, char *buf, size_t len)
{
    char src[64];
    if (gr->attrs == NULL || !gm_json_member(gr->attrs, GM_ATTR_SOURCE, src, sizeof src))
        return "";
    int predicted = strcmp(src, "scale") == 0 || strcmp(src, "synth") == 0;
    if (strcmp(src, "random") == 0)
        snprintf(buf, len, "random workload");
    else
        snprintf(buf, len, "%s (%s)", predicted ? "predicted" : "captured", src);
    return buf;
}

static void report_trace_title(report_t *R, const report_group_t *gr)
{
    FILE *f = R->f;
    report_esc(f, gr->name);
    char kind[96];
    if (report_trace_kind(gr, kind, sizeof kind)[0]) {
        fputs(" · ", f);
        report_esc(f, kind);
    }
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

/* A bar chart per trace (report_bars: waste 0 peak reserved, 1 its split at
 * the load peak), each a figure, and the section's end. */
static void report_bars_section(report_t *R, int waste)
{
    FILE *f = R->f;
    for (size_t g = 0; g < R->ngroups; g++) {
        fputs("<figure><figcaption>", f);
        report_trace_title(R, &R->groups[g]);
        fputs("</figcaption>", f);
        report_bars(R, &R->groups[g], waste);
        fputs("</figure>\n", f);
    }
    fputs("</section>\n", f);
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
        report_summary_trace(R, gr, 0);
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
            double save = report_saving(bl, w);
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
        char text[768];
        if (!report_group_advice(R, gr, text, sizeof text))
            continue;
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
    int c = gm__cmp_u64(rx, ry);
    return c ? c : strcmp(x, y);
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

/* Whether the active-memory section is drawn: a trace in the stores. */
static int report_has_active(const report_t *R)
{
    for (size_t g = 0; g < R->ngroups; g++)
        if (R->groups[g].attrs != NULL)
            return 1;
    return 0;
}

/* The table of contents: the sections written, in order. */
static void report_toc(report_t *R)
{
    FILE *f = R->f;
    fputs("<nav id=\"toc\"><b>Contents</b><ol>", f);
    fputs("<li><a href=\"#heatmap\">At a glance</a></li><li><a href=\"#summary\">Summary</a></li>"
          "<li><a href=\"#memory-over-time\">Memory over time</a></li>",
          f);
    if (report_has_active(R))
        fputs("<li><a href=\"#active-memory\">Active memory</a></li>", f);
    if (report_has_space(R))
        fputs("<li><a href=\"#address-space\">Address space</a></li>", f);
    fputs("<li><a href=\"#peak-reserved\">Peak reserved</a></li>", f);
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

static void report_metrics_table(report_t *R)
{
    FILE *f = R->f;
    fputs("<section id=\"metrics\"><h2>All runs</h2><p>Every stored run, every metric of "
          "docs/metrics.md.  Click a column to sort.</p>\n<div class=\"wide\"><table "
          "class=\"sortable\"><thead><tr><th>trace</th><th>seq_len</th><th>configuration</th>"
          "<th>capacity</th><th>plan</th>",
          f);
    for (size_t k = 0; k < gm_metric_count(); k++)
        fprintf(f, "<th>%s</th>", gm_metric_at(k)->name);
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
            for (size_t mk = 0; mk < gm_metric_count(); mk++) {
                const gm_metric_desc_t *d = gm_metric_at(mk);
                double v = gm_metric_value(m, mk);
                if (!gm_metric_known(m, mk)) /* stored before the metric existed */
                    fputs("<td data-v=\"0\" title=\"not stored with this run\">-</td>", f);
                else if (d->type == GM_METRIC_U64 && d->kind == GM_METRIC_BYTES)
                    fprintf(f, "<td data-v=\"%" PRIu64 "\">%s</td>", gm_metric_u64(m, mk),
                            report_size(gm_metric_u64(m, mk), b, sizeof b));
                else if (d->type == GM_METRIC_U64)
                    fprintf(f, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", gm_metric_u64(m, mk),
                            gm_metric_u64(m, mk));
                else if (d->type == GM_METRIC_I64)
                    fprintf(f, "<td data-v=\"%" PRId64 "\">%" PRId64 "</td>", gm_metric_i64(m, mk),
                            gm_metric_i64(m, mk));
                else if (isfinite(v))
                    fprintf(f, "<td data-v=\"%.6g\">%.4g</td>", v, v);
                else
                    fputs("<td data-v=\"0\">-</td>", f);
            }
            fputs("</tr>\n", f);
        }
    }
    fputs("</tbody></table></div></section>\n", f);
}

int report_html(report_t *R)
{
    FILE *f = R->f;
    const char *title = R->cfg->title ? R->cfg->title : "gmsim report";
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    report_esc(f, title);
    fputs("</title>\n<style>", f);
    fwrite(report_page_css, 1, report_page_css_len, f);
    fputs("</style>\n</head>\n<body>\n<h1>", f);
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
    fputs("</section>\n", f);
    if (report_has_active(R)) {
        fputs("<section id=\"active-memory\"><h2>Active memory</h2><p>Every allocation of "
              "the trace as a band, stacked in the order they were made (a band drops as older "
              "ones are freed); the height is the bytes the application held.  Bands thinner "
              "than a pixel merge; zoom to split them.  Hover a band for its size, lifetime, "
              "stream and stack (the application's own frame first); click to pin it.  Wheel "
              "to zoom, drag to pan, drag on the strip below to pick a window, double-click to "
              "reset: the trace's memory chart above follows.</p>\n",
              f);
        uint64_t budget = R->cfg->embed_allocs ? R->cfg->embed_allocs : REPORT_ACTIVE_BUDGET;
        for (size_t g = 0; g < R->ngroups; g++) {
            report_group_t *gr = &R->groups[g];
            if (gr->trace_of != g || gr->attrs == NULL)
                continue;
            int rc = report_active_figure(R, gr, g, &budget);
            if (rc)
                return rc;
        }
        fputs("</section>\n", f);
    }
    if (report_has_space(R)) {
        fputs("<section id=\"address-space\"><h2>Address space</h2><p>The segments each "
              "policy holds from the device, side by side on one scale, with their blocks: "
              "live allocations (grey; gold when pinned in the view above) and free blocks "
              "coloured by why they could not serve the request that made the policy take a "
              "new segment at its peak.  Pick any event with the slider, or click the trace's "
              "memory chart, to see every policy after it.  Hover a block for its bytes and "
              "allocation.</p>\n",
              f);
        uint64_t budget = REPORT_SPACE_BUDGET, any_budget = REPORT_SPACE_ANY_BUDGET;
        for (size_t g = 0; g < R->ngroups; g++) {
            int rc = report_space_figure(R, &R->groups[g], g, &budget, &any_budget);
            if (rc)
                return rc;
        }
        fputs("</section>\n", f);
    }
    fputs("<section id=\"peak-reserved\"><h2>Peak reserved</h2><p>The most each "
          "policy held from the device, against load (★ the winner; the offline bound "
          "faded).</p>\n",
          f);
    report_bars_section(R, 0);

    if (report_has_seq(R)) {
        fputs("<section id=\"seq-len\"><h2>Against sequence length</h2>\n", f);
        report_seq_chart(R, 0);
        report_seq_chart(R, 1);
        fputs("</section>\n", f);
    }

    fputs("<section id=\"waste-at-peak\"><h2>Waste at the peak</h2><p>Each policy's peak "
          "reservation, split at the load peak (the moment the application's live bytes are at "
          "their maximum): bytes in use by the application (grey), rounding inside blocks "
          "(internal fragmentation, orange), and the external fragmentation: free bytes the "
          "policy held then (red) and what it reserved beyond that at another moment "
          "(green).</p>\n",
          f);
    report_bars_section(R, 1);

    report_sites_section(R);
    report_metrics_table(R);
    fputs("<script>", f);
    fwrite(report_page_js, 1, report_page_js_len, f);
    fputs("</script>\n</body>\n</html>\n", f);
    return 0;
}
