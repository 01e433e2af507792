/*
 * tests/test_import.c — the import target (gmsim/import.h): names with and
 * without suffixes, several traces committed as one unit, abort (explicit,
 * or after a writer failed) leaving the store exactly as it was — a trace
 * that --replace would have replaced included —, the "file" option, and
 * the store's own transactions working again afterwards.  The gzip and
 * multi-file behaviour of `gmsim import` is in tests/cli/import.t.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static gm_store_t *open_store(void)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    return s;
}

/* Write a trace of n allocations (each freed) through w. */
static void fill(gm_writer_t *w, int n)
{
    gm_error_t err;
    uint32_t stream;
    cr_assert_eq(gm_writer_stream(w, 0, &stream, &err), 0, "%s", err.msg);
    for (int i = 0; i < n; i++) {
        gm_event_t a = {.op = GM_OP_ALLOC, .id = (uint64_t)i, .size = 64, .ts_ns = (uint64_t)i};
        cr_assert_eq(gm_writer_add(w, &a, &err), 0, "%s", err.msg);
    }
    for (int i = 0; i < n; i++) {
        gm_event_t f = {.op = GM_OP_FREE, .id = (uint64_t)i, .ts_ns = (uint64_t)(n + i)};
        cr_assert_eq(gm_writer_add(w, &f, &err), 0, "%s", err.msg);
    }
}

static size_t count_traces(gm_store_t *s)
{
    gm_trace_info_t *list;
    size_t n;
    gm_error_t err;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
    gm_trace_info_free_list(list, n);
    return n;
}

static uint64_t trace_events(gm_store_t *s, const char *name)
{
    gm_trace_info_t info;
    gm_error_t err;
    if (gm_store_find(s, name, &info, &err) != 0)
        return UINT64_MAX;
    uint64_t n = info.events;
    gm_trace_info_release(&info);
    return n;
}

Test(import, names_and_commit_of_several_traces)
{
    gm_store_t *s = open_store();
    gm_import_target_t *t;
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_import_target_create(s, "run", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_begin(t, "dev0", &w, &err), 0, "%s", err.msg);
    fill(w, 2);
    /* One trace at a time. */
    gm_writer_t *w2;
    cr_expect_eq(gm_import_begin(t, "dev1", &w2, &err), GM_ESTATE);
    cr_assert_eq(gm_import_end(t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_begin(t, "dev1", &w, &err), 0, "%s", err.msg);
    fill(w, 3);
    cr_assert_eq(gm_import_end(t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_begin(t, NULL, &w, &err), 0, "%s", err.msg);
    fill(w, 1);
    cr_assert_eq(gm_import_end(t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_begin(t, NULL, &w, &err), 0, "%s", err.msg);
    fill(w, 1);
    cr_assert_eq(gm_import_end(t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_count(t), 4);
    cr_expect_str_eq(gm_import_name(t, 0), "run.dev0");
    cr_expect_str_eq(gm_import_name(t, 1), "run.dev1");
    cr_expect_str_eq(gm_import_name(t, 2), "run");
    cr_expect_str_eq(gm_import_name(t, 3), "run.4"); /* a second NULL suffix: its position */
    cr_expect_null(gm_import_name(t, 4));
    /* Nothing is visible on another connection before the commit... but
     * this connection sees its own writes. */
    cr_expect_eq(trace_events(s, "run.dev1"), 6);
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    cr_expect_eq(count_traces(s), 4);
    cr_expect_eq(trace_events(s, "run.dev0"), 4);
    /* The store's own transactions work again after the import. */
    cr_expect_eq(gm_store_delete(s, "run.4", &err), 0, "%s", err.msg);
    cr_expect_eq(count_traces(s), 3);
    gm_store_close(s);
}

Test(import, duplicate_names_are_refused)
{
    gm_store_t *s = open_store();
    gm_import_target_t *t;
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_import_target_create(s, "x", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_begin(t, "a", &w, &err), 0, "%s", err.msg);
    fill(w, 1);
    cr_assert_eq(gm_import_end(t, &err), 0, "%s", err.msg);
    cr_expect_eq(gm_import_begin(t, "a", &w, &err), GM_EEXIST);
    cr_expect(strstr(err.msg, "'x.a'") != NULL, "%s", err.msg);
    cr_expect_eq(gm_import_begin(t, "", &w, &err), GM_EINVAL);
    gm_import_abort(t);
    cr_expect_eq(count_traces(s), 0);
    gm_store_close(s);
}

Test(import, duplicate_names_name_the_file_and_are_found_among_many)
{
    /* 5,000 traces, then a repeat of an early and a late name: refused,
     * naming the input file (the set of names is hashed, not scanned). */
    gm_store_t *s = open_store();
    gm_import_target_t *t;
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_import_target_create(s, "x", 0, &t, &err), 0, "%s", err.msg);
    gm_import_options_t o = {.file = "in/rep.sqlite"};
    gm_import_set_options(t, &o);
    char suffix[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(suffix, sizeof suffix, "p%d", i);
        cr_assert_eq(gm_import_begin(t, suffix, &w, &err), 0, "%s", err.msg);
        fill(w, 1);
        cr_assert_eq(gm_import_end(t, &err), 0, "%s", err.msg);
    }
    static const char *const again[] = {"p0", "p4999", "p2500"};
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(gm_import_begin(t, again[i], &w, &err), GM_EEXIST, "%s", again[i]);
        cr_expect(strstr(err.msg, "'in/rep.sqlite': trace 'x.") == err.msg, "%s", err.msg);
        cr_expect(strstr(err.msg, "is imported twice") != NULL, "%s", err.msg);
    }
    cr_expect_eq(gm_import_begin(t, "p5000", &w, &err), 0, "%s", err.msg);
    fill(w, 1);
    cr_expect_eq(gm_import_end(t, &err), 0, "%s", err.msg);
    cr_expect_eq(gm_import_count(t), 5001);
    cr_expect_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    cr_expect_eq(count_traces(s), 5001);
    gm_store_close(s);
}

Test(import, abort_leaves_the_store_as_it_was)
{
    gm_store_t *s = open_store();
    gm_error_t err;
    gm_writer_t *w;
    /* An existing trace "run.dev0" of 2 events... */
    cr_assert_eq(gm_writer_begin(s, "run.dev0", 0, &w, &err), 0, "%s", err.msg);
    fill(w, 1);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);

    /* ...an import that replaces it, writes another, then aborts with one
     * trace open. */
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(s, "run", GM_WRITE_REPLACE, &t, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(gm_import_begin(t, "dev0", &w, &err), 0, "%s", err.msg);
    fill(w, 5);
    cr_assert_eq(gm_import_end(t, &err), 0, "%s", err.msg);
    cr_expect_eq(trace_events(s, "run.dev0"), 10); /* replaced, inside the import */
    cr_assert_eq(gm_import_begin(t, "dev1", &w, &err), 0, "%s", err.msg);
    fill(w, 2);
    gm_import_abort(t);

    cr_expect_eq(count_traces(s), 1);
    cr_expect_eq(trace_events(s, "run.dev0"), 2, "the replaced trace is back");
    cr_expect_eq(trace_events(s, "run.dev1"), UINT64_MAX);
    gm_import_abort(NULL);
    gm_store_close(s);
}

Test(import, a_failed_writer_fails_the_whole_import)
{
    gm_store_t *s = open_store();
    gm_error_t err;
    gm_import_target_t *t;
    gm_writer_t *w;
    cr_assert_eq(gm_import_target_create(s, "run", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_begin(t, "dev0", &w, &err), 0, "%s", err.msg);
    fill(w, 3);
    cr_assert_eq(gm_import_end(t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_begin(t, "dev1", &w, &err), 0, "%s", err.msg);
    gm_event_t bad = {.op = GM_OP_FREE, .id = 7};
    cr_assert_eq(gm_writer_add(w, &bad, &err), GM_EFORMAT);
    cr_expect_neq(gm_import_end(t, &err), 0, "finishing a failed writer fails");
    /* Nothing may follow a failure. */
    cr_expect_eq(gm_import_begin(t, "dev2", &w, &err), GM_ESTATE);
    gm_import_abort(t);
    cr_expect_eq(count_traces(s), 0);
    gm_store_close(s);
}

Test(import, commit_with_a_trace_open_is_refused)
{
    gm_store_t *s = open_store();
    gm_error_t err;
    gm_import_target_t *t;
    gm_writer_t *w;
    cr_assert_eq(gm_import_target_create(s, "run", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_begin(t, NULL, &w, &err), 0, "%s", err.msg);
    fill(w, 1);
    cr_expect_eq(gm_import_commit(t, &err), GM_ESTATE);
    cr_expect_eq(count_traces(s), 0);
    gm_store_close(s);
}

Test(import, file_option_and_read_only_stores)
{
    const char *path = gt_tmpfile("ro.db");
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(s, "f", 0, &t, &err), 0, "%s", err.msg);
    char file[] = "some/where.csv";
    gm_import_options_t o = {.file = file};
    gm_import_set_options(t, &o);
    file[0] = 'X'; /* the target keeps its own copy */
    cr_expect_eq(gm_import_get_options(t)->mem_kinds, 0);
    FILE *in = fmemopen((void *)"1,alloc,1,8,0,0\n", 16, "r");
    cr_assert(in != NULL);
    cr_assert_eq(gm_csv_import(in, "in.csv", t, &err), 0, "%s", err.msg);
    fclose(in);
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "f", &info, &err), 0, "%s", err.msg);
    cr_expect(strstr(info.attrs, "\"file\": \"some/where.csv\"") != NULL, "%s", info.attrs);
    gm_trace_info_release(&info);
    gm_store_close(s);

    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    cr_expect_eq(gm_import_target_create(s, "g", 0, &t, &err), GM_EINVAL);
    cr_expect_eq(gm_import_target_create(s, "", 0, &t, &err), GM_EINVAL);
    gm_store_close(s);
}

Test(import, a_failed_csv_import_leaves_nothing)
{
    gm_store_t *s = open_store();
    gm_error_t err;
    gm_import_target_t *t;
    static const char csv[] = "1,alloc,1,8,0,0\n2,free,2,,0,0\n";
    FILE *in = fmemopen((void *)csv, sizeof csv - 1, "r");
    cr_assert(in != NULL);
    cr_assert_eq(gm_import_target_create(s, "bad", 0, &t, &err), 0, "%s", err.msg);
    cr_expect_eq(gm_csv_import(in, "bad.csv", t, &err), GM_EFORMAT);
    cr_expect(strstr(err.msg, "'bad.csv' line 2") != NULL, "%s", err.msg);
    gm_import_abort(t);
    fclose(in);
    cr_expect_eq(count_traces(s), 0);
    gm_store_close(s);
}

/* ---- the registry of import formats (formats/registry.c) ------------------ */

Test(import, the_format_registry_is_complete_and_ordered)
{
    cr_assert_geq(gm_format_count(), 7);
    for (size_t i = 0; i < gm_format_count(); i++) {
        const gm_format_t *f = gm_format_at(i);
        cr_assert_not_null(f);
        cr_expect(f->name && f->help && f->import && f->sniff, "format %zu incomplete", i);
        cr_expect_eq(gm_format_find(f->name), f, "%s is not found by name", f->name);
    }
    cr_expect_null(gm_format_at(gm_format_count()));
    cr_expect_null(gm_format_find("auto"));
    cr_expect_null(gm_format_find("pickle"));
    /* csv sniffs last: it takes any text whose second field is an op */
    cr_expect_str_eq(gm_format_at(gm_format_count() - 1)->name, "csv");
    static const char csv[] = "# a comment\nts_ns,op,id,size,stream,device\n0,alloc,1,512,0,0\n";
    cr_expect_str_eq(gm_format_sniff(csv, sizeof csv - 1)->name, "csv");
    static const char rows[] = "0,ALLOC,1,512,0,0\n";
    cr_expect_str_eq(gm_format_sniff(rows, sizeof rows - 1)->name, "csv");
    static const char other[] = "hello,world\n";
    cr_expect_null(gm_format_sniff(other, sizeof other - 1));
    cr_expect_null(gm_format_sniff("", 0));
}

/* Real files are told apart by their first bytes alone. */
Test(import, the_registry_sniffs_real_files)
{
    static const struct {
        const char *file, *format;
    } cases[] = {
        {"snapshots/lm2.7b_ctx128_forward_fp32.pickle", "torch"},
        {"snapshots/msd_basic.pickle", "torch"},
        {"minimalloc/A.1048576.csv", "dsa"},
    };
    size_t found = 0;
    const char *why = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = gt_data_path(cases[i].file, &why);
        size_t n = 0;
        char *data = path ? gt_read_file(path, &n) : NULL;
        if (data == NULL)
            continue;
        found++;
        const gm_format_t *f = gm_format_sniff(data, n < 4096 ? n : 4096);
        cr_assert_not_null(f, "%s: no format", cases[i].file);
        cr_expect_str_eq(f->name, cases[i].format, "%s", cases[i].file);
        free(data);
    }
    if (found == 0)
        cr_skip_test("no real files to sniff: %s", why ? why : "none found");
}
