/*
 * tests/test_report.c — the HTML and Markdown reports: structure (every
 * section, balanced tags, links only to the file's own ids),
 * self-containment (no reference to a network resource), escaping of
 * hostile trace names, tags and frames; against the stores: every series'
 * values (its maximum is its run's peak), every bar, every heat map cell
 * (the policy's best run), the MARK ticks at their events, and the
 * allocation sites (the live set at the load peak, recomputed here from
 * the events the test wrote).  The page in Chromium and the real snapshot
 * are in test_report_render.c; the inputs both share in
 * tests/support/report_fixture.c.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/report.h"
#include "gmsim/sweep.h"
#include "support/report_fixture.h"
#include "util.h"

/* Non-void elements balance; returns NULL when they do, else a reason. */
static const char *html_balanced(const char *html, char *why, size_t len)
{
    static const char *const void_el[] = {"meta", "br", "hr", "img", "input", "link",
                                          "line", "rect", "circle", "polyline", "path"};
    char stack[256][32];
    int depth = 0;
    for (const char *p = html; (p = strchr(p, '<')) != NULL;) {
        if (strncmp(p, "<!DOCTYPE", 9) == 0 || strncmp(p, "<!--", 4) == 0) {
            p++;
            continue;
        }
        int close = p[1] == '/';
        const char *n = p + 1 + close;
        char name[32];
        size_t k = 0;
        while (isalnum((unsigned char)n[k]) && k < sizeof name - 1) {
            name[k] = (char)tolower((unsigned char)n[k]);
            k++;
        }
        name[k] = '\0';
        if (k == 0) {
            snprintf(why, len, "a '<' that opens no tag: %.40s", p);
            return why;
        }
        const char *end = strchr(p, '>');
        if (end == NULL) {
            snprintf(why, len, "unterminated tag %s", name);
            return why;
        }
        int self = end[-1] == '/';
        int is_void = 0;
        for (size_t v = 0; v < sizeof void_el / sizeof void_el[0]; v++)
            is_void |= strcmp(name, void_el[v]) == 0;
        if (close) {
            if (depth == 0 || strcmp(stack[depth - 1], name) != 0) {
                snprintf(why, len, "</%s> closes <%s>", name, depth ? stack[depth - 1] : "");
                return why;
            }
            depth--;
        } else if (!self && !is_void) {
            if (depth == 256)
                return "too deep";
            snprintf(stack[depth++], sizeof stack[0], "%s", name);
            if (strcmp(name, "script") == 0 || strcmp(name, "style") == 0) {
                char closing[40];
                snprintf(closing, sizeof closing, "</%s>", name);
                const char *c = strstr(end, closing);
                if (c == NULL) {
                    snprintf(why, len, "<%s> never closed", name);
                    return why;
                }
                end = c - 1;
            }
        }
        p = end + 1;
    }
    if (depth != 0) {
        snprintf(why, len, "<%s> never closed", stack[depth - 1]);
        return why;
    }
    return NULL;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

Test(report, html_has_every_section_and_is_self_contained)
{
    const char *out, *in = rt_inputs_ready(&out);
    char *html = rt_write_report(in, out, GM_REPORT_HTML, gt_tmpfile("r.html"));
    cr_expect(strncmp(html, "<!DOCTYPE html>\n<html", 21) == 0);
    cr_expect(strstr(html, "<meta charset=\"utf-8\">") != NULL);
    size_t n = strlen(html);
    cr_expect(n > 7 && strcmp(html + n - 8, "</html>\n") == 0);
    char why[256];
    const char *bad = html_balanced(html, why, sizeof why);
    cr_expect(bad == NULL, "unbalanced HTML: %s", bad);
    static const char *const sections[] = {"heatmap",       "summary",          "memory-over-time",
                                           "peak-reserved", "seq-len",          "waste-at-peak",
                                           "allocation-sites", "metrics"};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        char id[64];
        snprintf(id, sizeof id, "<section id=\"%s\">", sections[i]);
        cr_expect_eq(count(html, id), 1, "section %s", sections[i]);
    }
    /* Charts: a memory, a peak and a waste chart per trace, two seq_len ones. */
    cr_expect_eq(count(html, "<svg class=\"chart"), 4 * 3 + 2);
    cr_expect(count(html, "<polyline") >= 4 * 3, "memory lines missing");
    /* Nothing outside the file. */
    static const char *const net[] = {"http://", "https://", "src=", "url(",
                                      "@import", "<link", "<img", "<iframe"};
    for (size_t i = 0; i < sizeof net / sizeof net[0]; i++)
        cr_expect(strstr(html, net[i]) == NULL, "the report contains '%s'", net[i]);
    /* Links only inside the file, each to an element that exists. */
    size_t links = 0;
    for (const char *p = html; (p = strstr(p, "href=\"")) != NULL; p++) {
        links++;
        cr_expect(p[6] == '#', "a link out of the file: %.60s", p);
        char id[80];
        size_t k = 0;
        for (const char *q = p + 7; *q != '"' && k < 60; q++)
            k++;
        snprintf(id, sizeof id, " id=\"%.*s\"", (int)k, p + 7);
        cr_expect(strstr(html, id) != NULL, "a link to a missing %s", id);
    }
    cr_expect(links >= 4 + 6, "the contents and the heat map rows link: %zu links", links);
    cr_expect(strstr(html, "<nav id=\"toc\">") != NULL, "no table of contents");
    /* One script (report/page.js), no script from a trace; the views'
     * data in inert elements (types the browser does not run): per trace
     * its allocations (base64) and stacks (JSON), per address-space
     * figure its JSON; their text with no '<' (JSON writes \u003c). */
    cr_expect_eq(count(html, "<script>"), 1);
    size_t bin = count(html, "<script type=\"application/octet-stream\""),
           json = count(html, "<script type=\"application/json\"");
    cr_expect_eq(count(html, "<script"), 1 + bin + json);
    cr_expect(bin >= 1 && json >= bin, "%zu + %zu data elements", bin, json);
    cr_expect_eq(count(html, "class=\"ams\""), bin, "a stacks element per trace");
    size_t data = 0;
    for (const char *p = strstr(html, "<script type=\"application/"); p;
         p = strstr(p + 1, "<script type=\"application/"), data++) {
        const char *body = strchr(p, '>') + 1, *end = strstr(body, "</script>");
        cr_assert_not_null(end);
        cr_expect(memchr(body, '<', (size_t)(end - body)) == NULL, "a '<' in the views' data");
    }
    cr_expect_eq(data, bin + json);
    cr_expect(strstr(html, "<script>alert") == NULL, "a hostile script came through");
    cr_expect(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;.pt") != NULL,
              "the hostile name is not shown escaped");
    cr_expect(strstr(html, "&lt;script&gt;alert(&#39;frame&#39;)&lt;/script&gt;") == NULL ||
                  strstr(html, "allocation-sites") != NULL,
              "frames shown outside their section");
    cr_expect(strstr(html, "&lt;b&gt;gpt&lt;/b&gt;") != NULL, "model attribute not escaped");
    const char *sites = strstr(html, "<section id=\"allocation-sites\">");
    cr_assert_not_null(sites);
    cr_expect(strstr(sites, "&lt;script&gt;") != NULL, "hostile frames missing from the sites");
    cr_expect(strstr(sites, "other.py&#58;3") != NULL, "second site missing");
    /* The summary names a winner for each trace; the baseline when caching ran. */
    const char *summary = strstr(html, "<section id=\"summary\">");
    const char *end = strstr(summary, "</section>");
    size_t wins = 0;
    for (const char *p = summary; (p = strstr(p, "<td class=\"win\">")) && p < end; p++)
        wins++;
    cr_expect_eq(wins, 4);
    if (gm_policy_find("caching"))
        cr_expect(strstr(summary, "no run") == NULL, "baseline missing from the summary");
    free(html);
}

Test(report, markdown_summary_is_escaped)
{
    const char *out, *in = rt_inputs_ready(&out);
    char *md = rt_write_report(in, out, GM_REPORT_MD, gt_tmpfile("r.md"));
    cr_expect(strstr(md, "| trace | seq_len | load | winner |") != NULL, "%s", md);
    cr_expect_eq(count(md, "\n| gpt-seq"), 3);
    cr_expect(strstr(md, "<script>") == NULL);
    cr_expect(strstr(md, "&lt;script&gt;alert\\(1\\)&lt;/script&gt;.pt") != NULL, "%s", md);
    free(md);
}

/* ---- charts, heat map, marks and sites against the stores ----------------- */

/* Numbers of a space-separated list: count and maximum.  With q (a
 * series' data-q), the list is delta-coded in units of q. */
static size_t list_max(const char *list, const char *q, double *max)
{
    size_t n = 0;
    double sum = 0, unit = q ? strtod(q, NULL) : 0;
    *max = -1;
    for (const char *p = list; *p;) {
        char *e;
        double v = strtod(p, &e);
        if (e == p)
            break;
        n++;
        if (q) {
            sum += v;
            v = sum * unit;
        }
        if (v > *max)
            *max = v;
        p = e;
    }
    return n;
}

/* The trace a memory figure draws: its caption up to " · " or the tag's end. */
static void figure_trace(const char *fig, char *out, size_t len)
{
    const char *c = strstr(fig, "<figcaption>") + 12;
    size_t k = strcspn(c, "<");
    const char *dot = strstr(c, " · ");
    if (dot && (size_t)(dot - c) < k)
        k = (size_t)(dot - c);
    snprintf(out, len, "%.*s", (int)k, c);
}

Test(report, every_series_carries_its_values)
{
    const char *out, *in = rt_inputs_ready(&out);
    char *html = rt_write_report(in, out, GM_REPORT_HTML, gt_tmpfile("series.html"));
    trun_t *runs;
    size_t nruns = rt_load_runs(out, &runs);
    const char *mem = strstr(html, "<section id=\"memory-over-time\">");
    const char *mem_end = strstr(mem, "</section>");
    size_t figures = 0, checked = 0;
    for (const char *fig = mem; (fig = strstr(fig, "<figure id=\"g")) && fig < mem_end; fig++) {
        figures++;
        char trace[128];
        figure_trace(fig, trace, sizeof trace);
        const char *fig_end = strstr(fig, "</figure>");
        /* Every series: as many values as points; its maximum is the run's
         * peak (timelines keep maxima, so the peak survives reduction). */
        for (const char *pl = fig; (pl = strstr(pl, "<polyline class=\"sr\"")) && pl < fig_end;
             pl++) {
            char *pts = rt_attr(pl, "points"), *v = rt_attr(pl, "data-v"), *name = rt_attr(pl, "data-n");
            char *key = rt_attr(pl, "data-s"), *q = rt_attr(pl, "data-q");
            cr_assert(pts && v && name && key && q, "a series without its values");
            double max;
            size_t nv = list_max(v, q, &max);
            cr_expect_eq(nv, count(pts, ",") , "%s: %zu values for its points", name, nv);
            cr_expect(nv > 0 && nv <= 300);
            /* Its legend entry exists in the same figure. */
            char lg[64];
            snprintf(lg, sizeof lg, "class=\"lg\" data-s=\"%.*s\"", (int)strcspn(key, " "), key);
            const char *l = strstr(fig, lg);
            cr_expect(l && l < fig_end, "no legend entry for %s", key);
            size_t nl = strlen(name);
            if (strcmp(name, "requested") == 0) {
                const trun_t *any = NULL;
                for (size_t i = 0; i < nruns && !any; i++)
                    if (strcmp(runs[i].trace, trace) == 0)
                        any = &runs[i];
                cr_assert_not_null(any, "no run of %s", trace);
                cr_expect_eq((uint64_t)max, any->m.peak_requested, "%s requested", trace);
                checked++;
            } else if (nl > 9 && strcmp(name + nl - 9, " reserved") == 0) {
                name[nl - 9] = '\0';
                const trun_t *r = rt_find_run(runs, nruns, trace, name);
                cr_assert_not_null(r, "no run %s of %s", name, trace);
                cr_expect_eq((uint64_t)max, r->m.peak_reserved, "%s %s", trace, name);
                checked++;
            } else if (nl > 10 && strcmp(name + nl - 10, " allocated") == 0) {
                name[nl - 10] = '\0';
                const trun_t *r = rt_find_run(runs, nruns, trace, name);
                cr_assert_not_null(r, "no run %s of %s", name, trace);
                cr_expect_eq((uint64_t)max, r->m.peak_allocated, "%s %s", trace, name);
                checked++;
            }
            free(pts);
            free(v);
            free(q);
            free(name);
            free(key);
        }
    }
    cr_expect_eq(figures, 4);
    cr_expect(checked >= 4 * 3, "only %zu series checked", checked);
    /* Every bar of the peak chart: the run's peak reserved. */
    const char *peak = strstr(html, "<section id=\"peak-reserved\">");
    const char *peak_end = strstr(peak, "</section>");
    size_t bars = 0;
    const char *fig = peak;
    char trace[128] = "";
    for (const char *p = peak; (p = strstr(p, "<rect ")) && p < peak_end; p++) {
        const char *f2 = strstr(fig + 1, "<figure>");
        while (f2 && f2 < p) {
            fig = f2;
            figure_trace(fig, trace, sizeof trace);
            f2 = strstr(fig + 1, "<figure>");
        }
        char *v = rt_attr(p, "data-v"), *name = rt_attr(p, "data-n");
        if (v == NULL) /* a legend swatch */
            continue;
        const trun_t *r = rt_find_run(runs, nruns, trace, name);
        cr_assert_not_null(r, "no run %s of %s", name, trace);
        cr_expect_eq(strtoull(v, NULL, 10), r->m.peak_reserved, "%s %s", trace, name);
        bars++;
        free(v);
        free(name);
    }
    cr_expect(bars >= 4 * 3, "only %zu bars", bars);
    free(runs);
    free(html);
}

Test(report, heat_map_holds_each_policys_best)
{
    const char *out, *in = rt_inputs_ready(&out);
    char *html = rt_write_report(in, out, GM_REPORT_HTML, gt_tmpfile("heat.html"));
    trun_t *runs;
    size_t nruns = rt_load_runs(out, &runs);
    const char *heat = strstr(html, "<section id=\"heatmap\">");
    cr_assert_not_null(heat);
    cr_expect(heat < strstr(html, "<section id=\"summary\">"), "the heat map is not at the top");
    const char *end = strstr(heat, "</table>");
    /* Columns: the policies that ran, each once. */
    char cols[16][32];
    size_t ncol = 0;
    const char *body = strstr(heat, "<tbody>");
    for (const char *p = heat; (p = strstr(p, "<th><span class=\"sw\"")) && p < body; p++) {
        const char *name = strstr(p, "</span>") + 7;
        snprintf(cols[ncol], sizeof cols[0], "%.*s", (int)strcspn(name, "<"), name);
        ncol++;
    }
    size_t policies = 0;
    for (size_t i = 0; i < nruns; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= strcmp(runs[j].policy, runs[i].policy) == 0;
        policies += !seen;
    }
    cr_expect_eq(ncol, policies);
    size_t rows = 0;
    for (const char *tr = body; (tr = strstr(tr, "<tr>")) && tr < end; tr++) {
        rows++;
        const char *a = strstr(tr, "\">") + 2;
        char trace[128];
        snprintf(trace, sizeof trace, "%.*s", (int)strcspn(a, "<"), a);
        const char *td = strstr(tr, "</td>");
        for (size_t c = 0; c < ncol; c++) {
            td = strstr(td + 1, "<td");
            /* The least peak of the policy's runs without OOMs. */
            uint64_t best = UINT64_MAX;
            for (size_t i = 0; i < nruns; i++)
                if (strcmp(runs[i].trace, trace) == 0 && strcmp(runs[i].policy, cols[c]) == 0 &&
                    runs[i].m.ooms == 0 && runs[i].m.peak_reserved < best)
                    best = runs[i].m.peak_reserved;
            char *v = rt_attr(td, "data-v");
            cr_assert_not_null(v, "%s × %s: no value", trace, cols[c]);
            cr_expect_eq(strtoull(v, NULL, 10), best, "%s × %s", trace, cols[c]);
            free(v);
        }
    }
    cr_expect_eq(rows, 4);
    free(runs);
    free(html);
}

/* The table of all runs says each planner run's plan, as stored with it
 * (its status, and how far above the optimum it may be unless proved). */
Test(report, all_runs_show_the_plan)
{
    const char *out, *in = rt_inputs_ready(&out);
    char *html = rt_write_report(in, out, GM_REPORT_HTML, gt_tmpfile("plan.html"));
    trun_t *runs;
    size_t nruns = rt_load_runs(out, &runs);
    const char *sec = strstr(html, "<section id=\"metrics\">");
    cr_assert_not_null(sec);
    cr_assert_not_null(strstr(sec, "<th>capacity</th><th>plan</th>"));
    size_t rows = 0, planned = 0;
    for (const char *tr = strstr(sec, "<tbody>"); (tr = strstr(tr, "<tr><td>")) != NULL; tr++) {
        rows++;
        char trace[128], label[200];
        const char *p = tr + 8;
        snprintf(trace, sizeof trace, "%.*s", (int)(strstr(p, "</td>") - p), p);
        /* trace, seq_len, configuration (its label, maybe inside a <span>) */
        const char *cfg = strstr(strstr(p, "</td>") + 5, "</td>") + 5;
        const char *lab = strstr(cfg, "<td>") + 4;
        if (strncmp(lab, "<span", 5) == 0)
            lab = strchr(lab, '>') + 1;
        snprintf(label, sizeof label, "%.*s", (int)strcspn(lab, "<"), lab);
        const trun_t *r = rt_find_run(runs, nruns, trace, label);
        cr_assert_not_null(r, "no stored run for row %s · %s", trace, label);
        /* capacity, then the plan */
        const char *cap = strstr(strstr(cfg + 4, "</td>") + 5, "</td>") + 5;
        cr_assert_eq(strncmp(cap, "<td>", 4), 0);
        char cell[128];
        snprintf(cell, sizeof cell, "%.*s", (int)(strstr(cap + 4, "</td>") - cap - 4), cap + 4);
        if (!r->has_plan) {
            cr_expect_str_eq(cell, "–", "%s · %s", trace, label);
            continue;
        }
        planned++;
        const char *st = gm_plan_status_name(r->plan.status);
        cr_expect_eq(strncmp(cell, st, strlen(st)), 0, "%s · %s: '%s', stored %s", trace, label,
                     cell, st);
        cr_expect_eq(strstr(cell, "above the optimum") != NULL,
                     r->plan.status != GM_PLAN_OPTIMAL && r->plan.peak > r->plan.lower_bound,
                     "%s · %s: '%s'", trace, label, cell);
    }
    cr_expect_eq(rows, nruns);
    size_t stored = 0;
    for (size_t i = 0; i < nruns; i++)
        stored += runs[i].has_plan;
    cr_expect_eq(planned, stored);
#if !defined(__SANITIZE_ADDRESS__)
    cr_expect_gt(stored, 0, "no planner run to show");
#endif
    free(runs);
    free(html);
}

Test(report, marks_are_x_axis_ticks)
{
    const char *out, *in = rt_inputs_ready(&out);
    char *html = rt_write_report(in, out, GM_REPORT_HTML, gt_tmpfile("marks.html"));
    /* The hostile trace sorts first (no seq_len). */
    const char *fig = strstr(html, "<figure id=\"g0\">");
    cr_assert_not_null(fig);
    char trace[128], want[128];
    figure_trace(fig, trace, sizeof trace);
    rt_esc(HOSTILE_NAME, want, sizeof want);
    cr_assert_str_eq(trace, want);
    const char *fig_end = strstr(fig, "</figure>");
    /* Event index of each mark: marks go before allocation rt_mark_at[i]; each
     * allocation k is followed by the free of k - 50 from k = 50 on. */
    static const char *const cls[3] = {"mk-s", "mk-f", "mk-b"};
    size_t found = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t index = 0;
        for (uint64_t k = 0; k < rt_mark_at[i]; k++)
            index += 1 + (k >= 50);
        for (int j = 0; j < i; j++)
            index++;
        /* The tag's ticks: a path of its kind, named, listing the event. */
        char name[64], path[128];
        rt_esc(HOSTILE_TAGS[rt_mark_tag[i]], name, sizeof name);
        snprintf(path, sizeof path, "<path class=\"%s\" d=\"", cls[rt_mark_tag[i]]);
        const char *t = strstr(fig, path);
        cr_expect(t && t < fig_end, "no ticks for %s", name);
        if (t == NULL || t > fig_end)
            continue;
        char *n = rt_attr(t, "data-n"), *e = rt_attr(t, "data-e");
        cr_assert(n && e);
        cr_expect_str_eq(n, name);
        cr_expect(rt_list_has(e, index), "%s: event %" PRIu64 " not in '%s'", name, index, e);
        found += rt_list_has(e, index);
        free(n);
        free(e);
    }
    cr_expect_eq(found, 5);
    const char *s1 = strstr(fig, ">step 1</text>"), *s2 = strstr(fig, ">step 2</text>");
    cr_expect(s1 && s1 < fig_end && s2 && s2 < fig_end, "steps not labelled");
    cr_expect(strstr(fig, "<i>") == NULL || strstr(fig, "<i>") > fig_end, "a tag came through");
    free(html);
}

Test(report, sites_are_the_live_set_at_the_load_peak)
{
    const char *out, *in = rt_inputs_ready(&out);
    char *html = rt_write_report(in, out, GM_REPORT_HTML, gt_tmpfile("sites.html"));
    /* The live set at the first peak of requested bytes, by frames: the
     * events as rt_make_inputs writes them. */
    uint64_t live = 0, peak = 0, peak_k = 0, index = 0, peak_index = 0;
    for (uint64_t k = 0; k < 300; k++) {
        for (int i = 0; i < 5; i++)
            index += k == rt_mark_at[i];
        live += rt_hostile_size(k);
        if (live > peak) {
            peak = live;
            peak_k = k;
            peak_index = index;
        }
        index++;
        if (k >= 50) {
            live -= rt_hostile_size(k - 50);
            index++;
        }
    }
    uint64_t bytes[2] = {0, 0}, allocs[2] = {0, 0};
    for (uint64_t k = peak_k >= 50 ? peak_k - 50 : 0; k <= peak_k; k++) {
        bytes[k % 3 == 0] += rt_hostile_size(k);
        allocs[k % 3 == 0]++;
    }
    cr_expect_eq(bytes[0] + bytes[1], peak);
    const char *sec = strstr(html, "<section id=\"allocation-sites\">");
    cr_assert_not_null(sec);
    const char *sec_end = strstr(sec, "</section>");
    char name[2][256];
    rt_esc("model.py:12 in forward http://evil.example/x", name[0], sizeof name[0]);
    rt_esc("other.py:3", name[1], sizeof name[1]);
    for (int i = 0; i < 2; i++) {
        char code[300];
        snprintf(code, sizeof code, "<code>%s</code>", name[i]);
        const char *c = strstr(sec, code);
        cr_assert(c && c < sec_end, "site %s missing", name[i]);
        const char *d = c;
        while (strncmp(d, "<details class=\"site\">", 22) != 0)
            d--;
        char *v = rt_attr(strstr(d, "<span class=\"sv\""), "data-v");
        cr_expect_eq(strtoull(v, NULL, 10), bytes[i], "site %s", name[i]);
        free(v);
        char n[64];
        snprintf(n, sizeof n, "<span class=\"sc\">%" PRIu64 " alloc%s, 1 stack</span>", allocs[i],
                 allocs[i] == 1 ? "" : "s");
        const char *sc = strstr(d, n);
        cr_expect(sc && sc < c, "site %s: %s", name[i], n);
        /* Its stack is collapsible and holds the escaped frames. */
        const char *st = strstr(c, "<details class=\"stack\">");
        cr_expect(st && st < sec_end && strstr(st, "<pre class=\"frames\">") != NULL);
    }
    char at[64];
    snprintf(at, sizeof at, "At event %" PRIu64 ":", peak_index);
    cr_expect(strstr(sec, at) != NULL, "the instant is not named: %s", at);
    free(html);
}

Test(report, no_runs_is_not_found)
{
    const char *path = gt_tmpfile("empty.db");
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    gm_store_close(s);
    const char *stores[] = {path};
    gm_report_config_t cfg = {.stores = stores, .nstores = 1};
    FILE *f = fopen("/dev/null", "w");
    cr_expect_eq(gm_report_write(&cfg, f, NULL, &err), GM_ENOTFOUND);
    cr_expect(strstr(err.msg, "empty.db") != NULL, "%s", err.msg);
    const char *missing[] = {gt_tmpfile("absent/x.db")};
    cfg.stores = missing;
    cr_expect_neq(gm_report_write(&cfg, f, NULL, &err), 0);
    fclose(f);
}

/* A run stored before a metric existed (its metrics JSON lacks the member)
 * is shown, the metric as not known, beside a run that has it; a run
 * without one of the metrics every stored run has is left out, counted. */
Test(report, a_run_stored_before_a_metric_existed_is_shown)
{
    const char *path = gt_tmpfile("old-runs.db");
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, "old", 0, &w, &err), 0, "%s", err.msg);
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = 400;
    cr_assert_eq(gm_workload_write(&wc, w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_trace_info_t ti;
    cr_assert_eq(gm_store_find(s, "old", &ti, &err), 0, "%s", err.msg);
    gm_metrics_t m = {.peak_requested = 1000, .peak_allocated = 1024, .peak_reserved = 2048,
                      .utilization = 0.5, .efficiency = 1000.0 / 2048, .overhead = 1.048,
                      .internal_frag = 0.01, .rounding_waste = 24, .external_frag = 0.5,
                      .reserved_at_load_peak = 2048, .device_mallocs = 3, .first_oom_event = -1,
                      .events = 400};
    char *now = gm_metrics_json(&m);
    cr_assert_not_null(now);
    /* the old format: the same, without external_frag */
    char old[2048];
    const char *cut = strstr(now, ",\"external_frag\":");
    cr_assert_not_null(cut, "%s", now);
    const char *rest = strchr(cut + 1, ',');
    snprintf(old, sizeof old, "%.*s%s", (int)(cut - now), now, rest);
    /* unreadable: no peak_reserved */
    char bad[2048];
    cut = strstr(now, ",\"peak_reserved\":");
    snprintf(bad, sizeof bad, "%.*s%s", (int)(cut - now), now, strchr(cut + 1, ','));
    const char *policy[3] = {"caching", "bfc", "tlsf"}, *metrics[3] = {now, old, bad};
    for (int i = 0; i < 3; i++) {
        const gm_policy_ops_t *ops = gm_policy_find(policy[i]);
        cr_assert_not_null(ops);
        gm_params_t p;
        cr_assert_eq(gm_params_init(&p, ops, &err), 0, "%s", err.msg);
        char *pj = gm_params_json(&p);
        gm_params_release(&p);
        gm_run_record_t rec = {.trace = "old", .trace_digest = ti.digest, .policy = policy[i],
                               .params = pj, .device = "{\"capacity\":0,\"granularity\":512}",
                               .metrics = metrics[i]};
        cr_assert_eq(gm_store_save_run(s, &rec, NULL, &err), 0, "%s", err.msg);
        free(pj);
    }
    gm_trace_info_release(&ti);
    gm_store_close(s);

    const char *stores[] = {path};
    gm_report_config_t cfg = {.stores = stores, .nstores = 1, .format = GM_REPORT_HTML};
    const char *html_path = gt_tmpfile("old-runs.html");
    FILE *f = fopen(html_path, "w");
    cr_assert_not_null(f);
    gm_report_stats_t stats;
    cr_assert_eq(gm_report_write(&cfg, f, &stats, &err), 0, "%s", err.msg);
    fclose(f);
    cr_expect_eq(stats.runs, 2, "runs shown: %zu", stats.runs);
    cr_expect_eq(stats.skipped, 1, "runs left out: %zu", stats.skipped);
    size_t len;
    char *html = gt_read_file(html_path, &len);
    cr_assert_not_null(html);
    const char *sec = strstr(html, "<section id=\"metrics\">");
    cr_assert_not_null(sec);
    cr_expect_eq(count(sec, "<tr><td>"), 2);
    cr_expect_eq(count(sec, "title=\"not stored with this run\""), 1);
    /* the old run's row: its other metrics are shown */
    const char *row = strstr(sec, ">bfc<");
    cr_assert_not_null(row, "no row for the old run");
    cr_expect(strstr(row, "not stored with this run") != NULL);
    free(html);
    free(now);
}
