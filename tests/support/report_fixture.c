/*
 * tests/support/report_fixture.c — the report tests' inputs and readers
 * (report_fixture.h): three random traces and a hostile one swept by a
 * small set of policies, the report written and read back, the runs as
 * the report shows them.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/report.h"
#include "gmsim/sweep.h"
#include "support/report_fixture.h"
#include "util.h"

const char *const HOSTILE_TAGS[3] = {"step", "forward", "<i>backward</i>"};
const uint64_t rt_mark_at[5] = {0, 10, 150, 200, 210};
const int rt_mark_tag[5] = {0, 1, 2, 0, 1};

uint64_t rt_hostile_size(uint64_t k)
{
    return 4096 + 1000 * (k % 7);
}

/* Random traces with seq_len 128, 256, 512 and one hostile trace with
 * frames and marks, in `in`; every available policy of a small set swept
 * into `out`. */
static void rt_make_inputs(const char *in, const char *out)
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
            if (k == rt_mark_at[i]) {
                gm_event_t m = {.ts_ns = t++, .tag = tags[rt_mark_tag[i]], .op = GM_OP_MARK};
                cr_assert_eq(gm_writer_add(w, &m, &err), 0, "%s", err.msg);
            }
        gm_event_t e = {.ts_ns = t++, .id = k, .size = rt_hostile_size(k), .stream = st,
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
    gm_sweep_summary_t sum;
    cr_assert_eq(gt_sweep_one(in, sets, nsets, out, 2, &sum, &err), 0, "%s", err.msg);
    cr_assert_eq(sum.ran, 4 * nsets);
    gm_configs_free(sets, nsets);
}

char *rt_write_report_n(const char *in, const char *out, gm_report_format_t format,
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

char *rt_write_report(const char *in, const char *out, gm_report_format_t format,
                      const char *path)
{
    return rt_write_report_n(in, out, format, path, 4);
}

const char *rt_inputs_ready(const char **out)
{
    static char in_path[512], out_path[512];
    if (!in_path[0]) {
        snprintf(in_path, sizeof in_path, "%s", gt_tmpfile("report-in.db"));
        snprintf(out_path, sizeof out_path, "%s", gt_tmpfile("report-runs.db"));
        rt_make_inputs(in_path, out_path);
    }
    *out = out_path;
    return in_path;
}

/* Text as the report escapes it (written apart from report/report.c's
 * report_esc, to check it). */
void rt_esc(const char *in, char *out, size_t len)
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
char *rt_attr(const char *tag, const char *name)
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

/* Whether a space-separated list of integers holds v. */
int rt_list_has(const char *list, uint64_t v)
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

size_t rt_load_runs(const char *out, trun_t **runs)
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
        rt_esc(label, r->label, sizeof r->label);
        rt_esc(ri[i].trace, r->trace, sizeof r->trace);
        snprintf(r->policy, sizeof r->policy, "%s", ri[i].policy);
        cr_assert_eq(gm_metrics_parse(ri[i].metrics, &r->m, NULL), 0);
        r->has_plan = gm_plan_parse(ri[i].metrics, &r->plan);
    }
    gm_run_info_free_list(ri, n);
    gm_store_close(s);
    return n;
}

const trun_t *rt_find_run(const trun_t *runs, size_t n, const char *trace,
                          const char *label)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(runs[i].trace, trace) == 0 && strcmp(runs[i].label, label) == 0)
            return &runs[i];
    return NULL;
}

void rt_sweep_native(const char *in, const char *out)
{
    const gm_policy_ops_t *pol[] = {gm_policy_find("native")};
    cr_assert_not_null(pol[0]);
    gm_params_t *sets;
    size_t nsets;
    gm_error_t err = {0};
    cr_assert_eq(gm_configs_expand(pol, 1, NULL, 0, &sets, &nsets, &err), 0, "%s", err.msg);
    gm_sweep_summary_t sum;
    cr_assert_eq(gt_sweep_one(in, sets, nsets, out, 1, &sum, &err), 0, "%s", err.msg);
    gm_configs_free(sets, nsets);
}
