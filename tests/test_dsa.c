/*
 * tests/test_dsa.c — placement instances (id,lower,upper,size): every file
 * of ../shared/data/minimalloc imports, and its events, ordinals, times and
 * capacity equal an independent reading (gt_minimalloc_events in
 * tests/util.c); the [lower, upper) semantics (a buffer ending at t and
 * one starting at t may share memory: the FREE comes first); optional
 * header and extra columns; and each row error with its line.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* All events of trace t (malloc'd). */
static gm_event_t *read_events(gm_store_t *s, size_t *n)
{
    gm_reader_t *r;
    gm_error_t err;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    size_t cap = 1024, m = 0;
    gm_event_t *all = malloc(cap * sizeof *all);
    const gm_event_t *evs;
    size_t k;
    while (gm_reader_next(r, &evs, &k, &err) == 0 && k > 0) {
        if (m + k > cap) {
            cap = 2 * (m + k);
            all = realloc(all, cap * sizeof *all);
        }
        memcpy(all + m, evs, k * sizeof *evs);
        m += k;
    }
    gm_reader_close(r);
    *n = m;
    return all;
}

static char *attrs_of(gm_store_t *s)
{
    gm_trace_info_t info;
    gm_error_t err;
    cr_assert_eq(gm_store_find(s, "t", &info, &err), 0, "%s", err.msg);
    char *a = strdup(info.attrs);
    gm_trace_info_release(&info);
    return a;
}

Test(dsa, every_minimalloc_file_matches_an_independent_reading)
{
    const char *why;
    const char *dir = gt_data_path("minimalloc", &why);
    if (dir == NULL)
        cr_skip_test("%s", why);
    char dirbuf[4096];
    snprintf(dirbuf, sizeof dirbuf, "%s", dir);
    DIR *d = opendir(dirbuf);
    cr_assert(d != NULL);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dirbuf, e->d_name);
        size_t nref;
        uint64_t cap_ref;
        gm_event_t *ref = gt_minimalloc_events(path, &nref, &cap_ref);
        cr_assert(ref != NULL, "%s", path);
        char *text = gt_read_file(path, NULL);
        gm_store_t *s;
        gm_error_t err;
        cr_assert_eq(gt_import_text(gm_dsa_import, text, path, &s, &err), 0, "%s", err.msg);
        size_t n;
        gm_event_t *ev = read_events(s, &n);
        cr_assert_eq(n, nref, "%s: %zu events, independent reading %zu", path, n, nref);
        for (size_t i = 0; i < n; i++) {
            cr_assert_eq(ev[i].op, ref[i].op, "%s event %zu", path, i);
            cr_assert_eq(ev[i].id, ref[i].id, "%s event %zu", path, i);
            cr_assert_eq(ev[i].ts_ns, ref[i].ts_ns, "%s event %zu", path, i);
            if (ev[i].op == GM_OP_ALLOC)
                cr_assert_eq(ev[i].size, ref[i].size, "%s event %zu", path, i);
        }
        char *attrs = attrs_of(s);
        char want[64];
        snprintf(want, sizeof want, "\"capacity\": %llu", (unsigned long long)cap_ref);
        cr_expect(cap_ref > 0 && strstr(attrs, want) != NULL, "%s: %s", path, attrs);
        cr_expect(strstr(attrs, "\"source\": \"dsa\"") != NULL, "%s", attrs);
        /* Every instance fits its capacity: LOAD never exceeds it. */
        gm_trace_info_t info;
        cr_assert_eq(gm_store_find(s, "t", &info, &err), 0, "%s", err.msg);
        cr_expect_leq(info.load, cap_ref, "%s", path);
        cr_expect_eq(info.live_at_end, 0);
        gm_trace_info_release(&info);
        free(attrs);
        free(ev);
        free(ref);
        free(text);
        gm_store_close(s);
        files++;
    }
    closedir(d);
    cr_expect_geq(files, 7, "the minimalloc folder holds at least 7 instances");
}

Test(dsa, half_open_intervals_free_before_alloc)
{
    /* b ends at 5 where c starts: their memory may be shared, so the peak
     * is 30 (a + c), not 50.  Non-numeric ids, rows out of time order. */
    static const char text[] = "id,lower,upper,size\n"
                               "c,5,9,20\n"
                               "a,0,9,10\n"
                               "b,2,5,20\n";
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gt_import_text(gm_dsa_import, text, "dir/x.100.csv", &s, &err), 0, "%s", err.msg);
    size_t n;
    gm_event_t *ev = read_events(s, &n);
    cr_assert_eq(n, 6);
    /* t=0 alloc a (#0), t=2 alloc b (#1), t=5 free b then alloc c (#2),
     * t=9 free c then free a (file order among equal times). */
    uint8_t ops[] = {GM_OP_ALLOC, GM_OP_ALLOC, GM_OP_FREE, GM_OP_ALLOC, GM_OP_FREE, GM_OP_FREE};
    uint64_t ids[] = {0, 1, 1, 2, 2, 0};
    uint64_t ts[] = {0, 2, 5, 5, 9, 9};
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(ev[i].op, ops[i], "event %zu", i);
        cr_expect_eq(ev[i].id, ids[i], "event %zu", i);
        cr_expect_eq(ev[i].ts_ns, ts[i], "event %zu", i);
    }
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "t", &info, &err), 0, "%s", err.msg);
    cr_expect_eq(info.load, 30);
    cr_expect(strstr(info.attrs, "\"capacity\": 100") != NULL, "%s", info.attrs);
    gm_trace_info_release(&info);
    free(ev);
    gm_store_close(s);
}

Test(dsa, header_optional_extra_columns_ignored)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gt_import_text(gm_dsa_import, "0,0,4,8\n1,4,8,8\n", "plain.csv", &s, &err),
                 0, "%s", err.msg);
    char *a = attrs_of(s);
    cr_expect(strstr(a, "capacity") == NULL, "no capacity in the name: %s", a);
    free(a);
    gm_store_close(s);
    cr_assert_eq(gt_import_text(gm_dsa_import, "size,upper,lower,id,alignment\n8,4,0,x,64\n",
                                "i.5.csv", &s, &err),
                 0, "%s", err.msg);
    size_t n;
    gm_event_t *ev = read_events(s, &n);
    cr_assert_eq(n, 2);
    cr_expect_eq(ev[0].size, 8);
    cr_expect_eq(ev[1].ts_ns, 4);
    free(ev);
    gm_store_close(s);
}

Test(dsa, row_errors_name_the_line)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"id,lower,upper,size\n0,0,4,8\n1,4,4,8\n", "line 3: lower 4 is not below upper 4"},
        {"id,lower,upper,size\n0,0,4\n", "line 2: expected 4 fields"},
        {"id,lower,upper,size\n0,0,x,8\n", "line 2: invalid upper 'x'"},
        {"id,lower,upper,size\n0,0,4,999999999999999999\n", "line 2: size 999999999999999999 is "
                                                            "above the limit"},
        {"id,lower,upper\n0,0,4\n", "line 1: the header has no 'size' column"},
        {"id,lower,upper,size\n,0,4,8\n", "line 2: missing id"},
        {"id,lower,upper,size\n0,0,99999999999999999999,8\n", "line 2: upper "
                                                              "'99999999999999999999' is too "
                                                              "large"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_store_t *s;
        gm_error_t err;
        cr_expect_eq(gt_import_text(gm_dsa_import, cases[i].text, "bad.csv", &s, &err),
                     GM_EFORMAT, "case %zu", i);
        cr_expect(strstr(err.msg, "'bad.csv' ") == err.msg && strstr(err.msg, cases[i].msg),
                  "case %zu: %s", i, err.msg);
        gm_trace_info_t *list;
        size_t n;
        cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 0, "nothing half-imported");
        gm_trace_info_free_list(list, n);
        gm_store_close(s);
    }
}

Test(dsa, sniffer)
{
    cr_expect(gm_dsa_sniff("id,lower,upper,size\n0,1,2,3\n", 26));
    cr_expect(gm_dsa_sniff("\xef\xbb\xbfid,lower,upper,size,alignment\n", 34));
    cr_expect(!gm_dsa_sniff("id,lower,upper,sizes\n", 21));
    cr_expect(!gm_dsa_sniff("ts_ns,op,id,size,stream,device\n", 31));
    cr_expect(!gm_dsa_sniff("id,lower", 8));
}
