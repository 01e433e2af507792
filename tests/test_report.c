/*
 * tests/test_report.c — the HTML and Markdown reports: structure (every
 * section, balanced tags, links only to the file's own ids),
 * self-containment (no reference to a network resource), escaping of
 * hostile trace names, tags and frames; against the stores: every series'
 * values (its maximum is its run's peak), every bar, every heat map cell
 * (the policy's best run), the MARK ticks at their events, and the
 * allocation sites (the live set at the load peak, recomputed here from
 * the events the test wrote).  Where Debian's chromium is installed
 * (scripts/deps chromium): a headless screenshot whose chart areas must not
 * be blank (the PNG is decoded here with zlib and kept as
 * build/…/report-screenshot.png), and the page's #selftest, which hovers
 * the highest point of a series and a bar and toggles the series through
 * its legend entry with dispatched mouse events; Chromium's --dump-dom
 * gives what the page showed, checked here against the stored runs.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "gmsim/report.h"
#include "gmsim/sweep.h"
#include "util.h"

#define HOSTILE_NAME "<script>alert(1)</script>.pt"
#define HOSTILE_FRAMES "<script>alert('frame')</script>\nmodel.py:12 in forward http://evil.example/x"

/* The hostile trace: 300 allocations of hostile_size(k) bytes, allocation
 * k freed after allocation k + 50; frames HOSTILE_FRAMES except every third
 * ("other.py:3"); MARK events before allocations mark_at[] with tags
 * HOSTILE_TAGS[mark_tag[]]. */
static const char *const HOSTILE_TAGS[3] = {"step", "forward", "<i>backward</i>"};
static const uint64_t mark_at[5] = {0, 10, 150, 200, 210};
static const int mark_tag[5] = {0, 1, 2, 0, 1};

static uint64_t hostile_size(uint64_t k)
{
    return 4096 + 1000 * (k % 7);
}

/* Random traces with seq_len 128, 256, 512 and one hostile trace with
 * frames and marks, in `in`; every available policy of a small set swept
 * into `out`. */
static void make_inputs(const char *in, const char *out)
{
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(in, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "gpt-seq%d", 128 << i);
        gm_writer_t *w;
        cr_assert_eq(gm_writer_begin(s, name, 0, &w, &err), 0, "%s", err.msg);
        gm_workload_config_t wc;
        gm_workload_config_default(&wc);
        wc.events = 3000;
        wc.seed = (uint64_t)i + 7;
        wc.live_max = (uint64_t)(64 << i) << 20;
        cr_assert_eq(gm_workload_write(&wc, w, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_writer_attr_int(w, "seq_len", 128 << i, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_writer_attr_str(w, "model", "<b>gpt</b>", &err), 0, "%s", err.msg);
        cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    }
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, HOSTILE_NAME, 0, &w, &err), 0, "%s", err.msg);
    uint32_t st, fr[2];
    cr_assert_eq(gm_writer_stream(w, 0, &st, &err), 0);
    cr_assert_eq(gm_writer_frames(w, HOSTILE_FRAMES, &fr[0], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_frames(w, "other.py:3", &fr[1], &err), 0, "%s", err.msg);
    uint32_t tags[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(gm_writer_tag(w, HOSTILE_TAGS[i], &tags[i], &err), 0, "%s", err.msg);
    uint64_t t = 0;
    for (uint64_t k = 0; k < 300; k++) {
        for (int i = 0; i < 5; i++)
            if (k == mark_at[i]) {
                gm_event_t m = {.ts_ns = t++, .tag = tags[mark_tag[i]], .op = GM_OP_MARK};
                cr_assert_eq(gm_writer_add(w, &m, &err), 0, "%s", err.msg);
            }
        gm_event_t e = {.ts_ns = t++, .id = k, .size = hostile_size(k), .stream = st,
                        .frames = fr[k % 3 == 0], .op = GM_OP_ALLOC};
        cr_assert_eq(gm_writer_add(w, &e, &err), 0, "%s", err.msg);
        if (k >= 50) {
            gm_event_t f = {.ts_ns = t++, .id = k - 50, .stream = st, .op = GM_OP_FREE};
            cr_assert_eq(gm_writer_add(w, &f, &err), 0, "%s", err.msg);
        }
    }
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_store_close(s);

    const gm_policy_ops_t *pol[8];
    size_t np = 0;
    /* The planner is slow under ASan; the plain build covers its bound. */
#if defined(__SANITIZE_ADDRESS__)
    const char *want[] = {"caching", "native", "buddy", "bfc"};
#else
    const char *want[] = {"caching", "native", "buddy", "bfc", "offline"};
#endif
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (gm_policy_find(want[i]))
            pol[np++] = gm_policy_find(want[i]);
    gm_params_t *sets;
    size_t nsets;
    const char *params[] = {"buddy.arena=64MiB,1GiB"};
    cr_assert_eq(gm_configs_expand(pol, np, params, 1, &sets, &nsets, &err), 0, "%s", err.msg);
    gm_sweep_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    const char *inputs[] = {in};
    cfg.inputs = inputs;
    cfg.ninputs = 1;
    cfg.sets = sets;
    cfg.nsets = nsets;
    gm_device_config_default(&cfg.device);
    cfg.results = out;
    cfg.jobs = 2;
    gm_sweep_summary_t sum;
    cr_assert_eq(gm_sweep_run(&cfg, &sum, &err), 0, "%s", err.msg);
    cr_assert_eq(sum.ran, 4 * nsets);
    gm_configs_free(sets, nsets);
}

static char *write_report_n(const char *in, const char *out, gm_report_format_t format,
                            const char *path, size_t traces)
{
    const char *stores[] = {out, in};
    gm_report_config_t cfg = {.stores = stores, .nstores = 2, .format = format};
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    gm_error_t err = {0};
    gm_report_stats_t stats;
    cr_assert_eq(gm_report_write(&cfg, f, &stats, &err), 0, "%s", err.msg);
    fclose(f);
    cr_expect_eq(stats.traces, traces);
    size_t len;
    char *text = gt_read_file(path, &len);
    cr_assert_not_null(text);
    return text;
}

static char *write_report(const char *in, const char *out, gm_report_format_t format,
                          const char *path)
{
    return write_report_n(in, out, format, path, 4);
}

static const char *inputs_ready(const char **out)
{
    static char in_path[512], out_path[512];
    if (!in_path[0]) {
        snprintf(in_path, sizeof in_path, "%s", gt_tmpfile("report-in.db"));
        snprintf(out_path, sizeof out_path, "%s", gt_tmpfile("report-runs.db"));
        make_inputs(in_path, out_path);
    }
    *out = out_path;
    return in_path;
}

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
    const char *out, *in = inputs_ready(&out);
    char *html = write_report(in, out, GM_REPORT_HTML, gt_tmpfile("r.html"));
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
    const char *out, *in = inputs_ready(&out);
    char *md = write_report(in, out, GM_REPORT_MD, gt_tmpfile("r.md"));
    cr_expect(strstr(md, "| trace | seq_len | load | winner |") != NULL, "%s", md);
    cr_expect_eq(count(md, "\n| gpt-seq"), 3);
    cr_expect(strstr(md, "<script>") == NULL);
    cr_expect(strstr(md, "&lt;script&gt;alert\\(1\\)&lt;/script&gt;.pt") != NULL, "%s", md);
    free(md);
}

/* ---- charts, heat map, marks and sites against the stores ----------------- */

/* Text as the report escapes it (written apart from report/report.c's
 * report_esc, to check it). */
static void esc(const char *in, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 8 < len; p++) {
        const char *r = *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;"
                      : *p == '"' ? "&quot;" : *p == '\'' ? "&#39;" : *p == ':' ? "&#58;" : NULL;
        if (r) {
            memcpy(out + n, r, strlen(r));
            n += strlen(r);
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

/* The value of attribute `name` in the tag that starts at `tag`, malloc'd;
 * NULL when the tag lacks it. */
static char *attr(const char *tag, const char *name)
{
    const char *end = strchr(tag, '>');
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(tag, key);
    if (p == NULL || (end && p > end))
        return NULL;
    p += strlen(key);
    const char *q = strchr(p, '"');
    char *v = malloc((size_t)(q - p) + 1);
    memcpy(v, p, (size_t)(q - p));
    v[q - p] = '\0';
    return v;
}

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

/* Whether a space-separated list of integers holds v. */
static int list_has(const char *list, uint64_t v)
{
    for (const char *p = list; *p;) {
        char *e;
        unsigned long long x = strtoull(p, &e, 10);
        if (e == p)
            break;
        if (x == v)
            return 1;
        p = e;
    }
    return 0;
}

typedef struct trun {
    char trace[128]; /* escaped as in the report */
    char label[200]; /* escaped */
    char policy[32];
    gm_metrics_t m;
    int has_plan; /* a planner's run, stored with its plan */
    gm_plan_info_t plan;
} trun_t;

static size_t load_runs(const char *out, trun_t **runs)
{
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(out, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_run_info_t *ri;
    size_t n;
    cr_assert_eq(gm_store_list_runs(s, &ri, &n, &err), 0, "%s", err.msg);
    *runs = calloc(n, sizeof **runs);
    for (size_t i = 0; i < n; i++) {
        trun_t *r = &(*runs)[i];
        char label[160];
        gm_config_label(ri[i].policy, ri[i].params, label, sizeof label);
        const gm_policy_ops_t *ops = gm_policy_find(ri[i].policy);
        if (ops && gm_policy_has_start(ops)) /* the report says the start beside the label */
            snprintf(label + strlen(label), sizeof label - strlen(label), " (%s)",
                     gm_run_start(ri[i].policy, ri[i].params, ri[i].metrics, NULL) ? "warm"
                                                                                   : "cold");
        esc(label, r->label, sizeof r->label);
        esc(ri[i].trace, r->trace, sizeof r->trace);
        snprintf(r->policy, sizeof r->policy, "%s", ri[i].policy);
        cr_assert_eq(gm_metrics_parse(ri[i].metrics, &r->m, NULL), 0);
        r->has_plan = gm_plan_parse(ri[i].metrics, &r->plan);
    }
    gm_run_info_free_list(ri, n);
    gm_store_close(s);
    return n;
}

static const trun_t *find_run(const trun_t *runs, size_t n, const char *trace, const char *label)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(runs[i].trace, trace) == 0 && strcmp(runs[i].label, label) == 0)
            return &runs[i];
    return NULL;
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
    const char *out, *in = inputs_ready(&out);
    char *html = write_report(in, out, GM_REPORT_HTML, gt_tmpfile("series.html"));
    trun_t *runs;
    size_t nruns = load_runs(out, &runs);
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
            char *pts = attr(pl, "points"), *v = attr(pl, "data-v"), *name = attr(pl, "data-n");
            char *key = attr(pl, "data-s"), *q = attr(pl, "data-q");
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
                const trun_t *r = find_run(runs, nruns, trace, name);
                cr_assert_not_null(r, "no run %s of %s", name, trace);
                cr_expect_eq((uint64_t)max, r->m.peak_reserved, "%s %s", trace, name);
                checked++;
            } else if (nl > 10 && strcmp(name + nl - 10, " allocated") == 0) {
                name[nl - 10] = '\0';
                const trun_t *r = find_run(runs, nruns, trace, name);
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
        char *v = attr(p, "data-v"), *name = attr(p, "data-n");
        if (v == NULL) /* a legend swatch */
            continue;
        const trun_t *r = find_run(runs, nruns, trace, name);
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
    const char *out, *in = inputs_ready(&out);
    char *html = write_report(in, out, GM_REPORT_HTML, gt_tmpfile("heat.html"));
    trun_t *runs;
    size_t nruns = load_runs(out, &runs);
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
            char *v = attr(td, "data-v");
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
    const char *out, *in = inputs_ready(&out);
    char *html = write_report(in, out, GM_REPORT_HTML, gt_tmpfile("plan.html"));
    trun_t *runs;
    size_t nruns = load_runs(out, &runs);
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
        const trun_t *r = find_run(runs, nruns, trace, label);
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
    const char *out, *in = inputs_ready(&out);
    char *html = write_report(in, out, GM_REPORT_HTML, gt_tmpfile("marks.html"));
    /* The hostile trace sorts first (no seq_len). */
    const char *fig = strstr(html, "<figure id=\"g0\">");
    cr_assert_not_null(fig);
    char trace[128], want[128];
    figure_trace(fig, trace, sizeof trace);
    esc(HOSTILE_NAME, want, sizeof want);
    cr_assert_str_eq(trace, want);
    const char *fig_end = strstr(fig, "</figure>");
    /* Event index of each mark: marks go before allocation mark_at[i]; each
     * allocation k is followed by the free of k - 50 from k = 50 on. */
    static const char *const cls[3] = {"mk-s", "mk-f", "mk-b"};
    size_t found = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t index = 0;
        for (uint64_t k = 0; k < mark_at[i]; k++)
            index += 1 + (k >= 50);
        for (int j = 0; j < i; j++)
            index++;
        /* The tag's ticks: a path of its kind, named, listing the event. */
        char name[64], path[128];
        esc(HOSTILE_TAGS[mark_tag[i]], name, sizeof name);
        snprintf(path, sizeof path, "<path class=\"%s\" d=\"", cls[mark_tag[i]]);
        const char *t = strstr(fig, path);
        cr_expect(t && t < fig_end, "no ticks for %s", name);
        if (t == NULL || t > fig_end)
            continue;
        char *n = attr(t, "data-n"), *e = attr(t, "data-e");
        cr_assert(n && e);
        cr_expect_str_eq(n, name);
        cr_expect(list_has(e, index), "%s: event %" PRIu64 " not in '%s'", name, index, e);
        found += list_has(e, index);
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
    const char *out, *in = inputs_ready(&out);
    char *html = write_report(in, out, GM_REPORT_HTML, gt_tmpfile("sites.html"));
    /* The live set at the first peak of requested bytes, by frames: the
     * events as make_inputs writes them. */
    uint64_t live = 0, peak = 0, peak_k = 0, index = 0, peak_index = 0;
    for (uint64_t k = 0; k < 300; k++) {
        for (int i = 0; i < 5; i++)
            index += k == mark_at[i];
        live += hostile_size(k);
        if (live > peak) {
            peak = live;
            peak_k = k;
            peak_index = index;
        }
        index++;
        if (k >= 50) {
            live -= hostile_size(k - 50);
            index++;
        }
    }
    uint64_t bytes[2] = {0, 0}, allocs[2] = {0, 0};
    for (uint64_t k = peak_k >= 50 ? peak_k - 50 : 0; k <= peak_k; k++) {
        bytes[k % 3 == 0] += hostile_size(k);
        allocs[k % 3 == 0]++;
    }
    cr_expect_eq(bytes[0] + bytes[1], peak);
    const char *sec = strstr(html, "<section id=\"allocation-sites\">");
    cr_assert_not_null(sec);
    const char *sec_end = strstr(sec, "</section>");
    char name[2][256];
    esc("model.py:12 in forward http://evil.example/x", name[0], sizeof name[0]);
    esc("other.py:3", name[1], sizeof name[1]);
    for (int i = 0; i < 2; i++) {
        char code[300];
        snprintf(code, sizeof code, "<code>%s</code>", name[i]);
        const char *c = strstr(sec, code);
        cr_assert(c && c < sec_end, "site %s missing", name[i]);
        const char *d = c;
        while (strncmp(d, "<details class=\"site\">", 22) != 0)
            d--;
        char *v = attr(strstr(d, "<span class=\"sv\""), "data-v");
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

/* ---- the screenshot ------------------------------------------------------ */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Decode an 8-bit RGB or RGBA, non-interlaced PNG into RGB rows. */
static unsigned char *png_decode(const unsigned char *d, size_t n, uint32_t *w, uint32_t *h)
{
    if (n < 33 || memcmp(d, "\x89PNG\r\n\x1a\n", 8) != 0)
        return NULL;
    uint32_t width = be32(d + 16), height = be32(d + 20);
    int depth = d[24], type = d[25], interlace = d[28];
    if (depth != 8 || (type != 2 && type != 6) || interlace)
        return NULL;
    int bpp = type == 6 ? 4 : 3;
    size_t stride = (size_t)width * (size_t)bpp;
    unsigned char *idat = malloc(n), *raw = malloc((stride + 1) * height);
    size_t ni = 0;
    for (size_t p = 8; p + 12 <= n;) {
        uint32_t len = be32(d + p);
        if (p + 12 + len > n)
            break;
        if (memcmp(d + p + 4, "IDAT", 4) == 0) {
            memcpy(idat + ni, d + p + 8, len);
            ni += len;
        }
        p += 12 + len;
    }
    uLongf rawlen = (uLongf)((stride + 1) * height);
    if (uncompress(raw, &rawlen, idat, ni) != Z_OK || rawlen != (stride + 1) * height) {
        free(idat);
        free(raw);
        return NULL;
    }
    free(idat);
    unsigned char *px = malloc(stride * height), *rgb = malloc((size_t)width * height * 3);
    for (uint32_t y = 0; y < height; y++) {
        const unsigned char *src = raw + y * (stride + 1) + 1;
        int filter = src[-1];
        unsigned char *row = px + y * stride;
        const unsigned char *up = y ? row - stride : NULL;
        for (size_t x = 0; x < stride; x++) {
            int a = x >= (size_t)bpp ? row[x - bpp] : 0, b = up ? up[x] : 0;
            int c = up && x >= (size_t)bpp ? up[x - bpp] : 0;
            int v = src[x];
            switch (filter) {
            case 1: v += a; break;
            case 2: v += b; break;
            case 3: v += (a + b) / 2; break;
            case 4: v += paeth(a, b, c); break;
            default: break;
            }
            row[x] = (unsigned char)v;
        }
        for (uint32_t x = 0; x < width; x++)
            memcpy(rgb + ((size_t)y * width + x) * 3, row + (size_t)x * bpp, 3);
    }
    free(raw);
    free(px);
    *w = width;
    *h = height;
    return rgb;
}

/* An executable named chromium on PATH (or $GM_CHROMIUM); NULL if none. */
static const char *find_chromium(void)
{
    static char found[1024];
    const char *env = getenv("GM_CHROMIUM");
    if (env && access(env, X_OK) == 0)
        return env;
    const char *path = getenv("PATH");
    static const char *const names[] = {"chromium", "chromium-browser"};
    for (size_t k = 0; path && k < 2; k++) {
        for (const char *p = path; *p;) {
            const char *colon = strchr(p, ':');
            size_t len = colon ? (size_t)(colon - p) : strlen(p);
            snprintf(found, sizeof found, "%.*s/%s", (int)len, p, names[k]);
            if (access(found, X_OK) == 0)
                return found;
            p += len + (colon != NULL);
        }
    }
    return NULL;
}

Test(report, chromium_renders_the_charts, .timeout = 120)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("the screenshot runs in the plain build only (chromium is not under test)");
#endif
    const char *chromium = find_chromium();
    if (chromium == NULL)
        cr_skip_test("chromium is not installed: run 'scripts/deps chromium' to test the "
                     "report's rendering");
    const char *out, *in = inputs_ready(&out);
    char html_path[512], png_path[512], shot_arg[600], url[600];
    snprintf(html_path, sizeof html_path, "%s", gt_tmpfile("shot.html"));
    free(write_report(in, out, GM_REPORT_HTML, html_path));
    snprintf(png_path, sizeof png_path, "%s/report-screenshot.png", GM_BINARY_DIR);
    unlink(png_path);
    snprintf(shot_arg, sizeof shot_arg, "--screenshot=%s", png_path);
    snprintf(url, sizeof url, "file://%s", html_path);
    char profile[512];
    snprintf(profile, sizeof profile, "--user-data-dir=%s", gt_tmpfile("chromium-profile"));
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execl(chromium, chromium, "--headless", "--no-sandbox", "--disable-gpu",
              "--hide-scrollbars", "--no-first-run", "--window-size=1200,3600", profile,
              shot_arg, url, (char *)NULL);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "chromium failed (status %d)",
              status);
    size_t n;
    unsigned char *png = (unsigned char *)gt_read_file(png_path, &n);
    cr_assert_not_null(png, "no screenshot at %s", png_path);
    uint32_t w, h;
    unsigned char *rgb = png_decode(png, n, &w, &h);
    cr_assert_not_null(rgb, "cannot decode %s", png_path);
    cr_expect_eq(w, 1200);
    /* Chart ink is coloured (the palette); text and tables are grey.  Count
     * coloured pixels per row and find the bands they form. */
    size_t coloured = 0, bands = 0, gap = 1000;
    for (uint32_t y = 0; y < h; y++) {
        size_t row = 0;
        for (uint32_t x = 0; x < w; x++) {
            const unsigned char *p = rgb + ((size_t)y * w + x) * 3;
            int mx = p[0] > p[1] ? (p[0] > p[2] ? p[0] : p[2]) : (p[1] > p[2] ? p[1] : p[2]);
            int mn = p[0] < p[1] ? (p[0] < p[2] ? p[0] : p[2]) : (p[1] < p[2] ? p[1] : p[2]);
            row += mx - mn > 60;
        }
        coloured += row;
        if (row) {
            if (gap > 30)
                bands++;
            gap = 0;
        } else {
            gap++;
        }
    }
    cr_expect(coloured > 20000, "charts look blank: %zu coloured pixels", coloured);
    cr_expect(bands >= 4, "only %zu chart areas have ink", bands);
    free(rgb);
    free(png);
}

/* The value of `key=` in the self-test's result lines, malloc'd; NULL when
 * absent.  The DOM dump escapes '&', '<' and '>' in text. */
static char *selftest_value(const char *result, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\n%s=", key);
    const char *p = strstr(result, k);
    if (p == NULL)
        return NULL;
    p += strlen(k);
    size_t n = strcspn(p, "\n<");
    char *v = malloc(n + 1);
    memcpy(v, p, n);
    v[n] = '\0';
    return v;
}

Test(report, chromium_hovers_and_toggles_a_series, .timeout = 120)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("chromium runs in the plain build only (chromium is not under test)");
#endif
    const char *chromium = find_chromium();
    if (chromium == NULL)
        cr_skip_test("chromium is not installed: run 'scripts/deps chromium' to test the "
                     "report's hover and legend");
    const char *out, *in = inputs_ready(&out);
    char html_path[512], dom_path[512], url[600], profile[512];
    snprintf(html_path, sizeof html_path, "%s", gt_tmpfile("selftest.html"));
    snprintf(dom_path, sizeof dom_path, "%s", gt_tmpfile("selftest.dom"));
    free(write_report(in, out, GM_REPORT_HTML, html_path));
    snprintf(url, sizeof url, "file://%s#selftest", html_path);
    snprintf(profile, sizeof profile, "--user-data-dir=%s", gt_tmpfile("chromium-profile2"));
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int dom = open(dom_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(dom, 1);
        dup2(devnull, 2);
        execl(chromium, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
              "--window-size=1200,900", profile, "--dump-dom", url, (char *)NULL);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "chromium failed (status %d)",
              status);
    size_t n;
    char *dom = gt_read_file(dom_path, &n);
    cr_assert_not_null(dom);
    const char *res = strstr(dom, "<pre id=\"selftest\">");
    cr_assert_not_null(res, "the page's self-test wrote nothing");
    res += strlen("<pre id=\"selftest\">");
    char *result = malloc(strlen(res) + 2);
    result[0] = '\n';
    strcpy(result + 1, res);
    char *error = selftest_value(result, "error");
    cr_assert_null(error, "the self-test failed: %s", error);

    /* The series hovered: the first drawn run of the first trace (the
     * hostile one, which sorts first), at its highest point. */
    trun_t *runs;
    size_t nruns = load_runs(out, &runs);
    char trace[128];
    esc(HOSTILE_NAME, trace, sizeof trace);
    char *series = selftest_value(result, "series");
    cr_assert_not_null(series);
    size_t sl = strlen(series);
    cr_assert(sl > 9 && strcmp(series + sl - 9, " reserved") == 0, "%s", series);
    series[sl - 9] = '\0';
    char label[200];
    esc(series, label, sizeof label); /* the dump left ':' as is */
    const trun_t *r = find_run(runs, nruns, trace, label);
    cr_assert_not_null(r, "no run '%s' of the hostile trace", series);
    char want[32];
    gm_format_size(r->m.peak_reserved, want, sizeof want);
    char *value = selftest_value(result, "value"), *tip = selftest_value(result, "tip");
    cr_expect_eq(strtoull(value, NULL, 10), r->m.peak_reserved, "hovered value %s", value);
    cr_expect_str_eq(tip, want, "the hover shows '%s' for %s", tip, want);
    char *shown = selftest_value(result, "tip-display");
    cr_expect_str_eq(shown, "block", "the hover is not displayed");
    /* The legend hides the series (both its lines), the hover leaves it
     * out, a second click brings it back. */
    char *hidden = selftest_value(result, "hidden"), *hidden2 = selftest_value(result, "hidden-allocated");
    char *after = selftest_value(result, "tip-after-hide"), *back = selftest_value(result, "shown");
    char *pressed = selftest_value(result, "legend-pressed");
    cr_expect_str_eq(hidden, "none");
    cr_expect_str_eq(hidden2, "none");
    cr_expect_str_eq(pressed, "false");
    cr_expect_str_eq(after, "absent", "a hidden series still in the hover");
    cr_expect(back && strcmp(back, "none") != 0, "the series did not come back");
    /* A bar's hover: its run's peak. */
    char *bar = selftest_value(result, "bar"), *bar_tip = selftest_value(result, "bar-tip");
    cr_assert_not_null(bar);
    esc(bar, label, sizeof label);
    const trun_t *b = find_run(runs, nruns, trace, label);
    cr_assert_not_null(b, "no run '%s'", bar);
    gm_format_size(b->m.peak_reserved, want, sizeof want);
    cr_expect_str_eq(bar_tip, want);
    char *gone = selftest_value(result, "bar-tip-after-out");
    cr_expect_str_eq(gone, "none");
    free(series);
    free(value);
    free(tip);
    free(shown);
    free(hidden);
    free(hidden2);
    free(after);
    free(back);
    free(pressed);
    free(bar);
    free(bar_tip);
    free(gone);
    free(runs);
    free(result);
    free(dom);
}

/* ---- a real snapshot -------------------------------------------------------- */

/* One shown stack of the sites section: "stack N: SIZE in K alloc(s)". */
typedef struct shown_stack {
    char size[32];
    uint64_t count;
} shown_stack_t;

Test(report, real_snapshot_sites_and_marks, .timeout = 300)
{
#if defined(__SANITIZE_ADDRESS__)
    const char *file = "snapshots/msd_basic.pickle"; /* small: frames, no marks */
#else
    const char *file = "snapshots/lmmedium_ctx128_train_fp32.pickle"; /* frames and marks */
#endif
    const char *why;
    const char *path = gt_data_path(file, &why);
    if (path == NULL)
        cr_skip_test("%s: %s", file, why);
    char in[512], out[512];
    snprintf(in, sizeof in, "%s", gt_tmpfile("real-in.db"));
    snprintf(out, sizeof out, "%s", gt_tmpfile("real-runs.db"));
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(in, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(s, "snap", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_torch_import(f, path, t, &err), 0, "%s", err.msg);
    fclose(f);
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);

    /* Independently: the live set at the first peak of requested bytes,
     * per stack (bytes, count), and every MARK with its event index. */
    gm_reader_t *rd;
    cr_assert_eq(gm_reader_open(s, "snap", &rd, &err), 0, "%s", err.msg);
    uint64_t allocs = gm_reader_info(rd)->allocs, events = gm_reader_info(rd)->events;
    uint64_t *size = calloc(allocs + 1, sizeof *size), *peak_size = calloc(allocs + 1, sizeof *size);
    uint32_t *frames = calloc(allocs + 1, sizeof *frames);
    uint64_t *mark_ev = calloc(events + 1, sizeof *mark_ev);
    uint32_t *mark_tags = calloc(events + 1, sizeof *mark_tags);
    size_t nmarks = 0;
    uint64_t live = 0, peak = 0, peak_at = 0, index = 0;
    const gm_event_t *ev;
    size_t n;
    while (gm_reader_next(rd, &ev, &n, &err) == 0 && n > 0)
        for (size_t i = 0; i < n; i++, index++) {
            const gm_event_t *e = &ev[i];
            if (e->op == GM_OP_MARK) {
                mark_ev[nmarks] = index;
                mark_tags[nmarks++] = e->tag;
            } else if (e->op == GM_OP_ALLOC) {
                size[e->id] = e->size;
                frames[e->id] = e->frames;
                live += e->size;
                if (live > peak) {
                    peak = live;
                    peak_at = index;
                    memcpy(peak_size, size, (allocs + 1) * sizeof *size);
                }
            } else if (e->op == GM_OP_FREE) {
                live -= size[e->id];
                size[e->id] = 0;
            }
        }
    uint64_t live_n = 0;
    for (uint64_t id = 0; id < allocs; id++)
        live_n += peak_size[id] != 0;
    uint32_t nframes = 0;
    while (gm_reader_frames(rd, nframes + 1) != NULL)
        nframes++;
    uint64_t *stack_bytes = calloc(nframes + 1, sizeof *stack_bytes);
    uint64_t *stack_count = calloc(nframes + 1, sizeof *stack_count);
    for (uint64_t id = 0; id < allocs; id++)
        if (peak_size[id]) {
            stack_bytes[frames[id]] += peak_size[id];
            stack_count[frames[id]]++;
        }

    /* A replay of one policy, the report of it. */
    const gm_policy_ops_t *pol[] = {gm_policy_find("native")};
    cr_assert_not_null(pol[0]);
    gm_params_t *sets;
    size_t nsets;
    cr_assert_eq(gm_configs_expand(pol, 1, NULL, 0, &sets, &nsets, &err), 0, "%s", err.msg);
    gm_sweep_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    const char *inputs[] = {in};
    cfg.inputs = inputs;
    cfg.ninputs = 1;
    cfg.sets = sets;
    cfg.nsets = nsets;
    gm_device_config_default(&cfg.device);
    cfg.results = out;
    cfg.jobs = 1;
    gm_sweep_summary_t sum;
    cr_assert_eq(gm_sweep_run(&cfg, &sum, &err), 0, "%s", err.msg);
    gm_configs_free(sets, nsets);
    char *html = write_report_n(in, out, GM_REPORT_HTML, gt_tmpfile("real.html"), 1);

    /* The instant and the live set named. */
    char b[32], at[160];
    gm_format_size(peak, b, sizeof b);
    snprintf(at, sizeof at, "At event %" PRIu64 ": %" PRIu64 " live allocation%s, %s,", peak_at,
             live_n, live_n == 1 ? "" : "s", b);
    const char *sec = strstr(html, "<section id=\"allocation-sites\">");
    cr_assert_not_null(sec, "no sites for a snapshot with frames");
    cr_expect(strstr(sec, at) != NULL, "expected '%s'", at);
    /* Sites by bytes, each no more than the live set; each shown stack is
     * one of the trace's stacks live at the peak, with its bytes and count. */
    const char *end = strstr(sec, "</section>");
    uint64_t prev = UINT64_MAX, total = 0;
    size_t sites = 0, stacks = 0;
    for (const char *p = sec; (p = strstr(p, "<span class=\"sv\"")) && p < end; p++) {
        char *v = attr(p, "data-v");
        uint64_t bytes = strtoull(v, NULL, 10);
        free(v);
        cr_expect(bytes <= prev, "sites not by bytes");
        prev = bytes;
        total += bytes;
        sites++;
        const char *next = strstr(p + 1, "<span class=\"sv\"");
        if (next == NULL || next > end)
            next = end;
        for (const char *q = p; (q = strstr(q, "<details class=\"stack\"><summary>stack ")) && q < next;
             q++) {
            shown_stack_t st;
            const char *c = strchr(q + 38, ':') + 2;
            const char *in_ = strstr(c, " in ");
            snprintf(st.size, sizeof st.size, "%.*s", (int)(in_ - c), c);
            st.count = strtoull(in_ + 4, NULL, 10);
            int match = 0;
            for (uint32_t k = 0; k <= nframes && !match; k++) {
                char sb[32];
                gm_format_size(stack_bytes[k], sb, sizeof sb);
                match = stack_count[k] == st.count && strcmp(sb, st.size) == 0;
            }
            cr_expect(match, "stack %s in %" PRIu64 " is none of the live stacks", st.size, st.count);
            stacks++;
        }
    }
    cr_expect(sites > 0 && stacks >= sites, "%zu sites, %zu stacks", sites, stacks);
    cr_expect(total <= peak, "the sites hold %" PRIu64 " of %" PRIu64, total, peak);
    /* Every MARK is a tick of a path named by its tag. */
    for (size_t i = 0; i < nmarks; i++) {
        char name[512], key[600];
        esc(gm_reader_tag(rd, mark_tags[i]), name, sizeof name);
        snprintf(key, sizeof key, "data-n=\"%s\" data-e=\"", name);
        const char *p = strstr(html, key);
        cr_assert_not_null(p, "no ticks for tag %s", name);
        char *e = attr(p - 1, "data-e");
        cr_expect(list_has(e, mark_ev[i]), "tag %s: event %" PRIu64 " not in '%s'", name,
                  mark_ev[i], e);
        free(e);
    }
    gm_reader_close(rd);
    gm_store_close(s);
    free(size);
    free(peak_size);
    free(frames);
    free(mark_ev);
    free(mark_tags);
    free(stack_bytes);
    free(stack_count);
    free(html);
}

Test(report, long_stacks_are_cut)
{
    char in[512], out[512];
    snprintf(in, sizeof in, "%s", gt_tmpfile("long-in.db"));
    snprintf(out, sizeof out, "%s", gt_tmpfile("long-runs.db"));
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(in, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, "long", 0, &w, &err), 0, "%s", err.msg);
    /* Frames of 201 characters each, every line cut: 60 of them (12 left
     * out) for the larger stack, exactly 48 (the most the page shows, the
     * most growth from the cuts) for the other. */
    char *text = malloc(60 * 202 + 1);
    uint32_t st, fr[2];
    cr_assert_eq(gm_writer_stream(w, 0, &st, &err), 0);
    for (int k = 0; k < 2; k++) {
        size_t n = 0;
        for (int i = 0; i < (k ? 48 : 60); i++) {
            n += (size_t)sprintf(text + n, "/app/%c%02d.py:1:", k ? 'g' : 'f', i);
            while (n % 202 != 201)
                text[n++] = 'x';
            text[n++] = '\n';
        }
        text[n - 1] = '\0';
        cr_assert_eq(gm_writer_frames(w, text, &fr[k], &err), 0, "%s", err.msg);
    }
    for (uint64_t k = 0; k < 4; k++) {
        gm_event_t e = {.ts_ns = k, .id = k, .size = (k ? 1 : 8) << 20, .stream = st,
                        .frames = fr[k != 0], .op = GM_OP_ALLOC};
        cr_assert_eq(gm_writer_add(w, &e, &err), 0, "%s", err.msg);
    }
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_store_close(s);
    const gm_policy_ops_t *pol[] = {gm_policy_find("native")};
    gm_params_t *sets;
    size_t nsets;
    cr_assert_eq(gm_configs_expand(pol, 1, NULL, 0, &sets, &nsets, &err), 0, "%s", err.msg);
    gm_sweep_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    const char *inputs[] = {in};
    cfg.inputs = inputs;
    cfg.ninputs = 1;
    cfg.sets = sets;
    cfg.nsets = nsets;
    gm_device_config_default(&cfg.device);
    cfg.results = out;
    cfg.jobs = 1;
    gm_sweep_summary_t sum;
    cr_assert_eq(gm_sweep_run(&cfg, &sum, &err), 0, "%s", err.msg);
    gm_configs_free(sets, nsets);
    char *html = write_report_n(in, out, GM_REPORT_HTML, gt_tmpfile("long.html"), 1);
    const char *pre = strstr(html, "<pre class=\"frames\">");
    cr_assert_not_null(pre);
    pre += 20;
    const char *end = strstr(pre, "</pre>");
    size_t lines = 0;
    for (const char *p = pre; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        lines++;
        if (lines <= 48) /* the escaped ':' take 5 bytes each; 2 a line */
            cr_expect(len == 200 + 2 * 4 + 3 && strncmp(p + len - 3, "...", 3) == 0,
                      "line %zu: %zu bytes: %.20s", lines, len, p);
        p = nl ? nl + 1 : end;
    }
    cr_expect_eq(lines, 49);
    cr_expect(strstr(pre, "... 12 more frames</pre>") == end - 18, "no count of the rest");
    /* The other stack: its 48 lines, all cut, nothing left out. */
    const char *pre2 = strstr(end, "<pre class=\"frames\">");
    cr_assert_not_null(pre2);
    const char *end2 = strstr(pre2, "</pre>");
    size_t lines2 = 0;
    for (const char *p = pre2; p < end2; p++)
        lines2 += *p == '\n';
    cr_expect_eq(lines2 + 1, 48);
    cr_expect(strncmp(end2 - 3, "...", 3) == 0);
    /* The site is the innermost frame, cut. */
    cr_expect(strstr(html, "<code>/app/f00.py&#58;1&#58;xxx") != NULL);
    free(text);
    free(html);
}
