/*
 * tests/test_compare.c — compare (one pass, many configurations), the
 * configuration grid of --param value lists, labels, and the canonical
 * JSON texts of a run (written and read back).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/sweep.h"
#include "util.h"

/* A store at path with random traces "t0".."t{n-1}" (seeds 1..n); trace i
 * gets seq_len 128 << i. */
static void make_store(const char *path, size_t n, uint64_t events)
{
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%zu", i);
        gm_writer_t *w;
        cr_assert_eq(gm_writer_begin(s, name, 0, &w, &err), 0, "%s", err.msg);
        gm_workload_config_t wc;
        gm_workload_config_default(&wc);
        wc.events = events;
        wc.seed = i + 1;
        wc.live_max = 512u << 20;
        cr_assert_eq(gm_workload_write(&wc, w, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_writer_attr_int(w, "seq_len", 128 << i, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    }
    gm_store_close(s);
}

/* Every registered policy with defaults, plus buddy with a small arena.
 * Under ASan the planners (slow there) are left out: the plain build runs
 * them. */
static gm_params_t *all_configs(size_t *n)
{
    const gm_policy_ops_t *pol[64];
    size_t np = 0;
    gm_error_t err = {0};
    cr_assert_eq(gm_policies_select("all", pol, &np, &err), 0, "%s", err.msg);
#if defined(__SANITIZE_ADDRESS__)
    size_t kept = 0;
    for (size_t i = 0; i < np; i++)
        if (!(pol[i]->flags & GM_POLICY_NEEDS_LIFETIMES))
            pol[kept++] = pol[i];
    np = kept;
#endif
    const char *params[] = {"buddy.arena=256MiB,1GiB"};
    gm_params_t *sets;
    cr_assert_eq(gm_configs_expand(pol, np, params, 1, &sets, n, &err), 0, "%s", err.msg);
    cr_assert_eq(*n, np + 1);
    return sets;
}

/* One pass over every configuration (blocks of events through each in
 * turn) gives what each gives alone, decoding ahead or not. */
Test(compare, one_pass_equals_separate_replays)
{
    const char *path = gt_tmpfile("compare.db");
#if defined(__SANITIZE_ADDRESS__)
    make_store(path, 1, 20000); /* one chunk: enough under ASan */
#else
    make_store(path, 1, 70000); /* two chunks */
#endif
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    size_t n;
    gm_params_t *sets = all_configs(&n);
    gm_compare_trace_t t;
    cr_assert_eq(gm_compare_trace(s, "t0", sets, n, NULL, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.nruns, n);
    cr_assert_eq(t.seq_len, 128);
    cr_assert(t.info.events >= 20000);
    for (size_t i = 0; i < n; i++) {
        /* every other one decoding on the replaying thread, as a sweep's
         * workers do: the same results */
        gm_replay_config_t rc;
        gm_replay_config_default(&rc);
        rc.decode_ahead = (int)(i % 2);
        gm_replay_t *r;
        cr_assert_eq(gm_replay_create(&rc, &r, &err), 0);
        cr_assert_eq(gm_replay_add(r, &sets[i], &err), 0, "%s", err.msg);
        cr_assert_eq(gm_replay_trace(r, s, "t0", &err), 0, "%s", err.msg);
        const gm_metrics_t *a = gm_replay_metrics(r, 0), *b = &t.runs[i].metrics;
        const char *who = sets[i].ops->name;
        /* every metric but the timing, as its descriptor reads it */
        for (size_t k = 0; k < gm_metric_count(); k++) {
            const char *mn = gm_metric_at(k)->name;
            double va = gm_metric_value(a, k), vb = gm_metric_value(b, k);
            int same = gm_metric_at(k)->type == GM_METRIC_F64
                           ? va == vb || (isnan(va) && isnan(vb))
                           : gm_metric_u64(a, k) == gm_metric_u64(b, k) &&
                                 gm_metric_i64(a, k) == gm_metric_i64(b, k);
            if (strcmp(mn, "sim_ns_per_event") != 0)
                cr_expect(same, "%s: %s %g != %g", who, mn, va, vb);
        }
        size_t np;
        const gm_timeline_point_t *tl = gm_replay_timeline(r, 0, &np);
        cr_expect_eq(np, t.runs[i].npoints, "%s: timeline length", who);
        cr_expect(np > 0 && memcmp(tl, t.runs[i].timeline, np * sizeof *tl) == 0,
                  "%s: timeline", who);
        gm_replay_destroy(r);
    }
    /* The two buddy configurations differ, and are labelled apart. */
    size_t b1 = 0;
    while (b1 < n && strcmp(t.runs[b1].ops->name, "buddy") != 0)
        b1++;
    size_t b2 = b1 + 1;
    cr_assert(b2 < n && strcmp(t.runs[b2].ops->name, "buddy") == 0);
    cr_expect_str_eq(t.runs[b1].label, "buddy arena=256MiB");
    cr_expect_str_eq(t.runs[b2].label, "buddy");
    cr_expect_neq(t.runs[b1].metrics.peak_reserved, t.runs[b2].metrics.peak_reserved);
    gm_compare_trace_release(&t);
    gm_configs_free(sets, n);
    gm_store_close(s);
}

Test(compare, refused_value_and_missing_trace_are_errors)
{
    const char *path = gt_tmpfile("compare-err.db");
    make_store(path, 1, 2000);
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    size_t n;
    gm_params_t *sets = all_configs(&n);
    gm_compare_trace_t t;
    cr_expect_eq(gm_compare_trace(s, "nope", sets, n, NULL, &t, &err), GM_ENOTFOUND);
    const gm_policy_ops_t *buddy = gm_policy_find("buddy");
    const char *bad[] = {"buddy.min_block=3"};
    gm_params_t *bsets;
    size_t nb;
    cr_assert_eq(gm_configs_expand(&buddy, 1, bad, 1, &bsets, &nb, &err), 0, "%s", err.msg);
    cr_expect_eq(gm_compare_trace(s, "t0", bsets, nb, NULL, &t, &err), GM_EINVAL);
    cr_expect(strstr(err.msg, "buddy") != NULL, "%s", err.msg);
    gm_configs_free(bsets, nb);
    gm_configs_free(sets, n);
    gm_store_close(s);
}

Test(compare, param_lists_expand_to_their_product)
{
    const gm_policy_ops_t *pol[2] = {gm_policy_find("native"), gm_policy_find("buddy")};
    gm_error_t err = {0};
    gm_params_t *sets;
    size_t n;
    const char *p1[] = {"buddy.arena=256MiB,1GiB,2GiB", "buddy.release=never,empty"};
    cr_assert_eq(gm_configs_expand(pol, 2, p1, 2, &sets, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 1 + 3 * 2);
    cr_expect_eq(sets[0].ops, pol[0]);
    /* Last key fastest; every combination once. */
    char *j1 = gm_params_json(&sets[1]), *j2 = gm_params_json(&sets[2]);
    cr_expect_str_eq(j1, "{\"min_block\":512,\"arena\":268435456,\"release\":\"never\"}");
    cr_expect_str_eq(j2, "{\"min_block\":512,\"arena\":268435456,\"release\":\"empty\"}");
    for (size_t i = 1; i < n; i++)
        for (size_t k = i + 1; k < n; k++) {
            char *a = gm_params_json(&sets[i]), *b = gm_params_json(&sets[k]);
            cr_expect_str_neq(a, b);
            free(a);
            free(b);
        }
    free(j1);
    free(j2);
    gm_configs_free(sets, n);

    /* A later text for the same key replaces the earlier one. */
    const char *p2[] = {"buddy.arena=256MiB,1GiB", "buddy.arena=2GiB"};
    cr_assert_eq(gm_configs_expand(pol + 1, 1, p2, 2, &sets, &n, &err), 0, "%s", err.msg);
    cr_expect_eq(n, 1);
    gm_configs_free(sets, n);

    static const char *const bad[] = {"buddy.arena=", "buddy.arena=1GiB,", "buddyarena=1",
                                      "caching.x=1", "buddy.nokey=1", "buddy.arena=lots",
                                      "buddy.arena=1GiB,,2GiB"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *one[] = {bad[i]};
        gm_error_clear(&err);
        cr_expect_eq(gm_configs_expand(pol, 2, one, 1, &sets, &n, &err), GM_EINVAL, "%s",
                     bad[i]);
        cr_expect(err.msg[0] != '\0', "%s: no message", bad[i]);
    }
}

Test(compare, policies_select)
{
    const gm_policy_ops_t *pol[64];
    size_t n = 0;
    gm_error_t err = {0};
    cr_assert_eq(gm_policies_select("buddy,native,buddy", pol, &n, &err), 0);
    cr_expect_eq(n, 2);
    cr_assert_eq(gm_policies_select("all", pol, &n, &err), 0);
    cr_expect_eq(n, gm_policy_count());
    cr_expect_eq(gm_policies_select("nosuch", pol, &n, &err), GM_EINVAL);
    cr_expect(strstr(err.msg, "'nosuch'") && strstr(err.msg, "buddy"), "%s", err.msg);
    cr_expect_eq(gm_policies_select(",", pol, &n, &err), GM_EINVAL);
}

Test(compare, metrics_json_round_trip)
{
    gm_metrics_t m = {.peak_requested = 1, .peak_allocated = UINT64_C(1) << 62,
                      .peak_reserved = 3, .utilization = 0.1, .efficiency = 1.0 / 3,
                      .overhead = NAN, .internal_frag = 0, .rounding_waste = 7,
                      .external_frag = 1e-9, .device_mallocs = 9, .device_frees = 10,
                      .device_time_ns = 11, .ooms = 12, .first_oom_event = -1, .events = 14,
                      .sim_ns_per_event = 15.5};
    char *j = gm_metrics_json(&m);
    cr_assert_not_null(j);
    gm_metrics_t back;
    gm_error_t err = {0};
    cr_assert_eq(gm_metrics_parse(j, &back, &err), 0, "%s: %s", j, err.msg);
    cr_expect_eq(back.peak_allocated, m.peak_allocated);
    cr_expect_eq(back.efficiency, m.efficiency);
    cr_expect(isnan(back.overhead));
    cr_expect_eq(back.first_oom_event, -1);
    cr_expect_eq(back.external_frag, 1e-9);
    cr_expect_eq(back.rounding_waste, 7);
    free(j);
    cr_expect_eq(gm_metrics_parse("{\"peak_requested\":1}", &back, &err), GM_EFORMAT);
    cr_expect(strstr(err.msg, "peak_allocated") != NULL, "%s", err.msg);
}

/* A member missing from stored metrics (a run stored before the metric
 * existed) reads as absent, shows as "-" and is written back without it;
 * one of the wrong kind is an error naming it. */
Test(compare, metrics_parse_reads_a_missing_metric_as_absent)
{
    const char *old = "{\"peak_requested\":1,\"peak_allocated\":2,\"peak_reserved\":4,"
                      "\"utilization\":0.5,\"ooms\":0}";
    gm_metrics_t m;
    gm_error_t err = {0};
    cr_assert_eq(gm_metrics_parse(old, &m, &err), 0, "%s", err.msg);
    int ext = gm_metric_find("external_frag"), util = gm_metric_find("utilization");
    cr_assert(ext >= 0 && util >= 0);
    cr_expect(!gm_metric_known(&m, (size_t)ext));
    cr_expect(gm_metric_known(&m, (size_t)util));
    cr_expect_eq(m.peak_reserved, 4);
    char cell[32];
    cr_expect_str_eq(gm_metric_text(&m, (size_t)ext, cell, sizeof cell), "-");
    cr_expect_str_eq(gm_metric_text(&m, (size_t)util, cell, sizeof cell), "50.0%");
    char *back = gm_metrics_json(&m);
    cr_assert_not_null(back);
    cr_expect_str_eq(back, old);
    free(back);
    cr_expect_eq(gm_metrics_parse("{\"peak_requested\":1,\"peak_allocated\":2,"
                                  "\"peak_reserved\":4,\"ooms\":\"x\"}",
                                  &m, &err),
                 GM_EFORMAT);
    cr_expect(strstr(err.msg, "'ooms'") != NULL, "%s", err.msg);
    /* every descriptor names a member of its own, and a table column a label */
    for (size_t k = 0; k < gm_metric_count(); k++) {
        cr_expect_eq(gm_metric_find(gm_metric_at(k)->name), (int)k);
        cr_expect(gm_metric_at(k)->label[0] && gm_metric_at(k)->unit[0]);
    }
}

/* A planner's run stores its plan as the metrics' last member; the
 * metrics read back the same, and runs without a plan store what they
 * stored before. */
Test(compare, run_metrics_keep_the_plan)
{
    gm_metrics_t m = {.peak_requested = 5, .peak_reserved = 8, .first_oom_event = -1};
    gm_plan_info_t pi = {.status = GM_PLAN_FEASIBLE, .peak = 8, .lower_bound = 6,
                         .capacity = 8, .work = 1234};
    char *plain = gm_metrics_json(&m), *none = gm_run_metrics_json(&m, NULL);
    char *with = gm_run_metrics_json(&m, &pi);
    cr_assert(plain && none && with);
    cr_expect_str_eq(none, plain);
    gm_metrics_t back;
    gm_error_t err = {0};
    cr_assert_eq(gm_metrics_parse(with, &back, &err), 0, "%s: %s", with, err.msg);
    cr_expect_eq(back.peak_reserved, 8);
    gm_plan_info_t got;
    cr_assert_eq(gm_plan_parse(with, &got), 1, "%s", with);
    cr_expect_eq(got.status, GM_PLAN_FEASIBLE);
    cr_expect_eq(got.peak, 8);
    cr_expect_eq(got.lower_bound, 6);
    cr_expect_eq(got.capacity, 8);
    cr_expect_eq(got.work, 1234);
    cr_expect(strstr(with, "\"gap\":0.33333") != NULL, "%s", with);
    cr_expect_eq(gm_plan_parse(plain, &got), 0);
    cr_expect_eq(gm_plan_parse("{\"plan\":{\"status\":\"best\"}}", &got), 0);
    cr_expect_eq(gm_plan_parse("not json", &got), 0);
    free(plain);
    free(none);
    free(with);
}

/* compare keeps a planner's plan, and only a planner's. */
Test(compare, planner_runs_carry_their_plan)
{
    const char *path = gt_tmpfile("compare_plan.db");
    make_store(path, 1, 4000);
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    const gm_policy_ops_t *pol[2] = {gm_policy_find("buddy"), gm_policy_find("offline")};
    gm_params_t *sets;
    size_t n;
    cr_assert_eq(gm_configs_expand(pol, 2, NULL, 0, &sets, &n, &err), 0, "%s", err.msg);
    gm_compare_trace_t t;
    cr_assert_eq(gm_compare_trace(s, "t0", sets, n, NULL, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.nruns, 2);
    cr_expect_eq(t.runs[0].has_plan, 0);
    cr_assert_eq(t.runs[1].has_plan, 1);
    cr_expect_eq(t.runs[1].plan.peak, t.runs[1].metrics.peak_reserved);
    cr_expect_leq(t.runs[1].plan.lower_bound, t.runs[1].plan.peak);
    cr_expect(t.runs[1].plan.status == GM_PLAN_OPTIMAL
                  ? t.runs[1].plan.lower_bound == t.runs[1].plan.peak
                  : 1);
    cr_expect_null(t.runs[1].plan.offset);
    gm_compare_trace_release(&t);
    gm_configs_free(sets, n);
    gm_store_close(s);
}

Test(compare, json_member_reads_hostile_text_safely)
{
    char buf[64];
    cr_expect(gm_json_member("{\"a\":{\"seq_len\":1},\"seq_len\":512}", "seq_len", buf,
                             sizeof buf));
    cr_expect_str_eq(buf, "512");
    cr_expect(gm_json_member("{ \"k\" : \"v\\\"x\" , \"n\":[1,{\"k\":2}] }", "k", buf, sizeof buf));
    cr_expect_str_eq(buf, "v\\\"x");
    cr_expect_eq(gm_attr_int("{\"seq_len\":-4}", "seq_len"), -1);
    cr_expect_eq(gm_attr_int("{\"seq_len\":\"12\"}", "seq_len"), -1);
    cr_expect_eq(gm_attr_int("{\"seq_len\":1024}", "seq_len"), 1024);
    /* past 2^63 - 1: no value, not INT64_MAX (issue 32) */
    cr_expect_eq(gm_attr_int("{\"seq_len\":18446744073709551616}", "seq_len"), -1);
    cr_expect_eq(gm_attr_int("{\"seq_len\":9223372036854775808}", "seq_len"), -1);
    cr_expect_eq(gm_attr_int("{\"seq_len\":9223372036854775807}", "seq_len"), INT64_MAX);
    static const char *const bad[] = {"", "{", "{\"a\"", "{\"a\":", "{\"a\":\"x", "[1,2]",
                                      "{\"a\":[[[[", "{\"a\":1,", "{\"a\" 1}", "null"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect(!gm_json_member(bad[i], "a", buf, sizeof buf) || strcmp(bad[i], "{\"a\":1,") == 0,
                  "%s", bad[i]);
    /* Deep nesting stops at the depth limit instead of recursing on. */
    char deep[4096];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    memcpy(deep, "{\"a\":", 5);
    cr_expect(!gm_json_member(deep, "a", buf, sizeof buf));
}

Test(compare, label_names_what_differs_from_defaults)
{
    char buf[160];
    gm_config_label("buddy", "{\"min_block\":512,\"arena\":1073741824,\"release\":\"never\"}",
                    buf, sizeof buf);
    cr_expect_str_eq(buf, "buddy");
    gm_config_label("buddy", "{\"min_block\":1024,\"arena\":1073741824,\"release\":\"empty\"}",
                    buf, sizeof buf);
    cr_expect_str_eq(buf, "buddy min_block=1KiB release=empty");
    gm_config_label("gone", "{\"x\":1}", buf, sizeof buf);
    cr_expect_str_eq(buf, "gone");
}

/* Characters of UTF-8 text (continuation bytes not counted). */
static size_t test_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

Test(compare, param_sizes_print_exactly_and_none)
{
    char buf[64];
    static const struct {
        uint64_t v;
        const char *text;
    } cases[] = {{0, "0"},
                 {1000, "1000"},
                 {1024, "1KiB"},
                 {1536 << 10, "1536KiB"},
                 {128ull << 20, "128MiB"},
                 {3ull << 30, "3GiB"},
                 {1ull << 60, "1EiB"},
                 {UINT64_MAX - 1, "18446744073709551614"},
                 {UINT64_MAX, "none"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_format_param_size(cases[i].v, buf, sizeof buf);
        cr_expect_str_eq(buf, cases[i].text);
        /* What is printed reads back as the same value. */
        uint64_t back = 0;
        gm_param_value_t pv;
        const gm_param_spec_t spec = {"s", GM_PARAM_SIZE, "0", "", NULL};
        cr_expect_eq(gm_param_parse(&spec, buf, &pv, NULL), 0, "%s", buf);
        back = pv.size;
        cr_expect_eq(back, cases[i].v, "%s", buf);
    }
    /* A label shows a size parameter set to none as none, never as the
     * number it is stored as. */
    const gm_policy_ops_t *ops = gm_policy_find("async");
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, ops, NULL), 0);
    cr_assert_eq(gm_params_set(&p, "release_threshold", "none", NULL), 0);
    char *json = gm_params_json(&p);
    char label[160];
    gm_config_label("async", json, label, sizeof label);
    cr_expect_str_eq(label, "async release_threshold=none");
    free(json);
    gm_params_release(&p);
}

Test(compare, defaults_join_every_policy_once)
{
    const gm_policy_ops_t *pol[3] = {gm_policy_find("caching"), gm_policy_find("buddy"),
                                     gm_policy_find("native")};
    gm_error_t err = {0};
    gm_params_t *sets;
    size_t n;
    /* caching: no value is its default; buddy: 1GiB is. */
    const char *params[] = {"caching.max_split_size=128MiB,256MiB", "buddy.arena=2GiB,1GiB"};
    cr_assert_eq(gm_configs_expand(pol, 3, params, 2, &sets, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 5);
    cr_assert_eq(gm_configs_with_defaults(&sets, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 6);
    for (size_t pi = 0; pi < 3; pi++) {
        gm_params_t def;
        cr_assert_eq(gm_params_init(&def, pol[pi], NULL), 0);
        char *dj = gm_params_json(&def);
        size_t with = 0, first = SIZE_MAX, last = 0;
        for (size_t i = 0; i < n; i++) {
            if (sets[i].ops != pol[pi])
                continue;
            first = first < i ? first : i;
            last = i;
            char *j = gm_params_json(&sets[i]);
            with += strcmp(j, dj) == 0;
            free(j);
        }
        /* Exactly one default per policy, its configurations together. */
        cr_expect_eq(with, 1, "%s", pol[pi]->name);
        for (size_t i = first; i <= last; i++)
            cr_expect_eq(sets[i].ops, pol[pi]);
        free(dj);
        gm_params_release(&def);
    }
    /* The inserted default comes first among caching's. */
    cr_expect_eq(sets[0].ops, pol[0]);
    cr_expect_eq(sets[0].set, 0);
    /* Again: nothing to add. */
    cr_assert_eq(gm_configs_with_defaults(&sets, &n, &err), 0);
    cr_expect_eq(n, 6);
    gm_configs_free(sets, n);
}

Test(compare, label_cut_keeps_what_tells_labels_apart)
{
    static const char *const labels[] = {
        "caching max_split_size=128MiB garbage_collection_threshold=0.5 roundup_power2_divisions=4",
        "caching max_split_size=128MiB garbage_collection_threshold=0.8 roundup_power2_divisions=4",
        "caching max_split_size=none garbage_collection_threshold=0.5 roundup_power2_divisions=4",
        "caching max_split_size=none garbage_collection_threshold=0.8 roundup_power2_divisions=4",
        "caching",
        "buddy arena=2GiB",
        "tlsf a_very_long_parameter_name_that_alone_is_too_wide=12345",
    };
    enum { N = sizeof labels / sizeof labels[0] };
    static const char *const ellipses[] = {"...", "…"};
    for (size_t e = 0; e < 2; e++)
        for (size_t max = 20; max <= 60; max += 20) {
            char cut[N][256];
            for (size_t i = 0; i < N; i++) {
                gm_label_cut(labels[i], (const char *const *)labels, N, max, ellipses[e], cut[i],
                             sizeof cut[i]);
                cr_expect(test_chars(cut[i]) <= max, "'%s' is %zu wide", cut[i],
                          test_chars(cut[i]));
                if (test_chars(labels[i]) <= max) {
                    cr_expect_str_eq(cut[i], labels[i]);
                    continue;
                }
                cr_expect(strstr(cut[i], ellipses[e]) != NULL, "'%s'", cut[i]);
                /* The policy stays first. */
                size_t plen = strcspn(labels[i], " ");
                cr_expect(strncmp(cut[i], labels[i], plen) == 0, "'%s'", cut[i]);
            }
            if (max < 40)
                continue;
            /* Wide enough for the values: every value that differs
             * between the caching labels is kept, so no two cut labels
             * read the same. */
            for (size_t i = 0; i < 4; i++) {
                cr_expect(strstr(cut[i], i < 2 ? "=128MiB" : "=none") != NULL, "'%s'", cut[i]);
                cr_expect(strstr(cut[i], i % 2 ? "=0.8" : "=0.5") != NULL, "'%s'", cut[i]);
                cr_expect(strstr(cut[i], "=4") == NULL, "'%s' keeps a shared setting", cut[i]);
                for (size_t k = 0; k < i; k++)
                    cr_expect_str_neq(cut[i], cut[k]);
            }
        }
    /* A label alone: cut to fit all the same. */
    char one[64];
    gm_label_cut(labels[0], NULL, 0, 30, "...", one, sizeof one);
    cr_expect(test_chars(one) <= 30, "'%s'", one);
    cr_expect(strncmp(one, "caching ", 8) == 0, "'%s'", one);
}

Test(compare, trace_match_is_a_name_or_a_glob)
{
    cr_expect(gm_trace_match(NULL, "anything"));
    cr_expect(gm_trace_match("gpt2.seq128", "gpt2.seq128"));
    cr_expect(gm_trace_match("gpt2.*", "gpt2.seq128"));
    cr_expect(gm_trace_match("*128", "gpt2.seq128"));
    cr_expect(!gm_trace_match("gpt2.*", "bert.seq128"));
    cr_expect(!gm_trace_match("gpt2", "gpt2.seq128"));
    /* A name with glob characters is picked by itself too. */
    cr_expect(gm_trace_match("run[1]", "run[1]"));
    cr_expect(!gm_trace_match("run[1]", "run[2]"));
    cr_expect(gm_trace_match("run[12]", "run2"));
}

/* A stored run's start (issue 28, item 5): its metrics' "start" member;
 * a run stored before starts were kept reads as its parameters said. */
Test(compare, stored_run_start_reads_old_runs_as_their_params)
{
    uint64_t unfit = 1;
    cr_expect_eq(gm_run_start("caching", "{\"start\":\"recorded\"}", "{\"ooms\":0}", &unfit), 1);
    cr_expect_eq(unfit, 0);
    cr_expect_eq(gm_run_start("caching", "{\"start\":\"empty\"}", "{\"ooms\":0}", NULL), 0);
    cr_expect_eq(gm_run_start("bfc", "{}", "{\"ooms\":0}", NULL), 0);
    cr_expect_eq(gm_run_start("caching", "{\"start\":\"recorded\"}",
                              "{\"ooms\":0,\"start\":\"cold\",\"layout_unfit\":7235174400}", &unfit),
                 0);
    cr_expect_eq(unfit, UINT64_C(7235174400));
    cr_expect_eq(gm_run_start("caching", "{\"start\":\"empty\"}", "{\"start\":\"warm\"}", NULL), 1);
    /* the result JSON carries it before the plan */
    gm_metrics_t m;
    memset(&m, 0, sizeof m);
    char *j = gm_run_result_json(&m, NULL, 0, 42);
    cr_assert_not_null(j);
    cr_expect(strstr(j, "\"start\":\"cold\",\"layout_unfit\":42}") != NULL, "%s", j);
    cr_expect_eq(gm_run_start("caching", "{\"start\":\"recorded\"}", j, &unfit), 0);
    cr_expect_eq(unfit, 42);
    free(j);
}
