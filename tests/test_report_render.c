/*
 * tests/test_report_render.c — the HTML report as a browser shows it, and
 * on real data.  Where Debian's chromium is installed (scripts/deps
 * chromium): a headless screenshot whose chart areas must not be blank
 * (the PNG is decoded here with zlib and kept as
 * build/…/report-screenshot.png), and the page's #selftest, which hovers
 * the highest point of a series and a bar and toggles the series through
 * its legend entry with dispatched mouse events; Chromium's --dump-dom
 * gives what the page showed, checked here against the stored runs.  A
 * real snapshot's allocation sites and marks, and long stacks cut.  The
 * inputs are those of test_report.c (tests/support/report_fixture.c).
 */
#include <criterion/criterion.h>
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
#include "support/report_fixture.h"
#include "util.h"

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

/* The chromium to run, or the test skipped (`what`: what it would test). */
static const char *chromium_or_skip(const char *what)
{
    const char *chromium = find_chromium();
    if (chromium == NULL)
        cr_skip_test("chromium is not installed: run 'scripts/deps chromium' to test the "
                     "report's %s",
                     what);
    return chromium;
}

/* Run chromium headless on url with a fresh profile (gt_tmpfile(profile)),
 * the window size and options opt[] (NULL-terminated), its standard output
 * to out_path (NULL: discarded); the test fails unless it exits 0. */
static void run_chromium(const char *chromium, const char *profile, const char *window,
                         const char *const opt[], const char *url, const char *out_path)
{
    char profile_arg[512];
    snprintf(profile_arg, sizeof profile_arg, "--user-data-dir=%s", gt_tmpfile(profile));
    const char *argv[16] = {chromium,         "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", window,       profile_arg};
    size_t n = 7;
    for (size_t i = 0; opt[i] != NULL && n < 14; i++)
        argv[n++] = opt[i];
    argv[n++] = url;
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        int out = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : devnull;
        dup2(out, 1);
        dup2(devnull, 2);
        execv(chromium, (char *const *)argv);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "chromium failed (status %d)",
              status);
}

Test(report, chromium_renders_the_charts, .timeout = 120)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("the screenshot runs in the plain build only (chromium is not under test)");
#endif
    const char *chromium = chromium_or_skip("rendering");
    const char *out, *in = rt_inputs_ready(&out);
    char html_path[512], png_path[512], shot_arg[600], url[600];
    snprintf(html_path, sizeof html_path, "%s", gt_tmpfile("shot.html"));
    free(rt_write_report(in, out, GM_REPORT_HTML, html_path));
    snprintf(png_path, sizeof png_path, "%s/report-screenshot.png", GM_BINARY_DIR);
    unlink(png_path);
    snprintf(shot_arg, sizeof shot_arg, "--screenshot=%s", png_path);
    snprintf(url, sizeof url, "file://%s", html_path);
    const char *opt[] = {"--hide-scrollbars", shot_arg, NULL};
    run_chromium(chromium, "chromium-profile", "--window-size=1200,3600", opt, url, NULL);
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
    const char *chromium = chromium_or_skip("hover and legend");
    const char *out, *in = rt_inputs_ready(&out);
    char html_path[512], dom_path[512], url[600];
    snprintf(html_path, sizeof html_path, "%s", gt_tmpfile("selftest.html"));
    snprintf(dom_path, sizeof dom_path, "%s", gt_tmpfile("selftest.dom"));
    free(rt_write_report(in, out, GM_REPORT_HTML, html_path));
    snprintf(url, sizeof url, "file://%s#selftest", html_path);
    const char *opt[] = {"--dump-dom", NULL};
    run_chromium(chromium, "chromium-profile2", "--window-size=1200,900", opt, url, dom_path);
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
    size_t nruns = rt_load_runs(out, &runs);
    char trace[128];
    rt_esc(HOSTILE_NAME, trace, sizeof trace);
    char *series = selftest_value(result, "series");
    cr_assert_not_null(series);
    size_t sl = strlen(series);
    cr_assert(sl > 9 && strcmp(series + sl - 9, " reserved") == 0, "%s", series);
    series[sl - 9] = '\0';
    char label[200];
    rt_esc(series, label, sizeof label); /* the dump left ':' as is */
    const trun_t *r = rt_find_run(runs, nruns, trace, label);
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
    rt_esc(bar, label, sizeof label);
    const trun_t *b = rt_find_run(runs, nruns, trace, label);
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
    rt_sweep_native(in, out);
    char *html = rt_write_report_n(in, out, GM_REPORT_HTML, gt_tmpfile("real.html"), 1);

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
        char *v = rt_attr(p, "data-v");
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
        rt_esc(gm_reader_tag(rd, mark_tags[i]), name, sizeof name);
        snprintf(key, sizeof key, "data-n=\"%s\" data-e=\"", name);
        const char *p = strstr(html, key);
        cr_assert_not_null(p, "no ticks for tag %s", name);
        char *e = rt_attr(p - 1, "data-e");
        cr_expect(rt_list_has(e, mark_ev[i]), "tag %s: event %" PRIu64 " not in '%s'", name,
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
    rt_sweep_native(in, out);
    char *html = rt_write_report_n(in, out, GM_REPORT_HTML, gt_tmpfile("long.html"), 1);
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
