/*
 * report/html.c — the report as one HTML page: its sections, the heat map,
 * the contents, the allocation sites, the table of every run, and the
 * page's CSS and script.
 *
 * Output.  One HTML file, no reference to anything outside it: inline CSS,
 * SVG drawn by report/svg.c (no xmlns attribute needed inline), one inline script
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
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/device.h"
#include "gmsim/replay.h"
#include "gmsim/advice.h"
#include "gmsim/version.h"
#include "report/report.h"

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

int report_html(report_t *R)
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
