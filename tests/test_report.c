/*
 * tests/test_report.c — the HTML and Markdown reports: structure (every
 * section, balanced tags), self-containment (no reference to a network
 * resource), escaping of hostile trace names and frames, and, where
 * Debian's chromium is installed (scripts/deps chromium), a headless
 * screenshot whose chart areas must not be blank (the PNG is decoded here
 * with zlib and kept as build/…/report-screenshot.png).
 */
#include <criterion/criterion.h>
#include <ctype.h>
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

/* Random traces with seq_len 128, 256, 512 and one hostile trace with
 * frames, in `in`; every available policy of a small set swept into `out`. */
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
    uint64_t t = 0;
    for (uint64_t k = 0; k < 300; k++) {
        gm_event_t e = {.ts_ns = t++, .id = k, .size = 4096 + 1000 * (k % 7), .stream = st,
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

static char *write_report(const char *in, const char *out, gm_report_format_t format,
                          const char *path)
{
    const char *stores[] = {out, in};
    gm_report_config_t cfg = {.stores = stores, .nstores = 2, .format = format};
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    gm_error_t err = {0};
    gm_report_stats_t stats;
    cr_assert_eq(gm_report_write(&cfg, f, &stats, &err), 0, "%s", err.msg);
    fclose(f);
    cr_expect_eq(stats.traces, 4);
    size_t len;
    char *text = gt_read_file(path, &len);
    cr_assert_not_null(text);
    return text;
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
    static const char *const sections[] = {"summary", "memory-over-time", "peak-reserved",
                                           "seq-len", "waste-at-peak", "allocation-sites",
                                           "metrics"};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        char id[64];
        snprintf(id, sizeof id, "<section id=\"%s\">", sections[i]);
        cr_expect_eq(count(html, id), 1, "section %s", sections[i]);
    }
    /* Charts: a memory, a peak and a waste chart per trace, two seq_len ones. */
    cr_expect_eq(count(html, "<svg class=\"chart\""), 4 * 3 + 2);
    cr_expect(count(html, "<polyline") >= 4 * 3, "memory lines missing");
    /* Nothing outside the file. */
    static const char *const net[] = {"http://", "https://", "src=", "href=", "url(",
                                      "@import", "<link", "<img", "<iframe"};
    for (size_t i = 0; i < sizeof net / sizeof net[0]; i++)
        cr_expect(strstr(html, net[i]) == NULL, "the report contains '%s'", net[i]);
    /* One script (the table sort), no script from a trace. */
    cr_expect_eq(count(html, "<script"), 1);
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
