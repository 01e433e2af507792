/*
 * tests/test_rmm.c — RAPIDS RMM logs.  No real RMM log is in
 * ../shared/data: the fixtures here are written by the test from the
 * documented format (logging_resource_adaptor: header
 * Thread,Time,Action,Pointer,Size,Stream; time %H:%M:%S.%f or epoch
 * seconds; actions allocate, free / deallocate, allocate failure; %p
 * pointers with "(nil)").  Checked: events, ordinals and times; address
 * reuse; allocate-failure marks; pre-existing allocations (a free of an
 * address the log never allocated); null pointers; midnight wrap; the
 * device from the file name; and each row error with its line, leaving
 * nothing in the store.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static gm_event_t *read_events(gm_store_t *s, size_t *n, gm_reader_t **keep)
{
    gm_reader_t *r;
    gm_error_t err;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    size_t m = 0;
    gm_event_t *all = NULL;
    const gm_event_t *evs;
    size_t k;
    while (gm_reader_next(r, &evs, &k, &err) == 0 && k > 0) {
        all = realloc(all, (m + k) * sizeof *all);
        memcpy(all + m, evs, k * sizeof *evs);
        m += k;
    }
    *n = m;
    *keep = r;
    return all;
}

static const char log1[] =
    "Thread,Time,Action,Pointer,Size,Stream\n"
    "140573312345856,10:00:00.000100,allocate,0x7f8a40000000,1024,0x0\n"
    "140573312345856,10:00:00.000200,allocate,0x7f8a40000400,2048,0x7f8a38001020\n"
    "140573312345856,10:00:00.000300,free,0x7f8a40000000,1024,0x0\n"
    "140573312345856,10:00:00.000400,allocate failure,(nil),1099511627776,0x0\n"
    "140573312345856,10:00:00.000500,allocate,0x7f8a40000000,512,0x0\n"
    "140573312345856,10:00:00.000600,deallocate,0x7f8a40000400,2048,0x7f8a38001020\n"
    "140573312345856,10:00:00.000700,free,0x7f8a40000000,512,0x0\n";

Test(rmm, events_ordinals_times_and_failures)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gt_import_text(gm_rmm_import, log1, "log.dev2.csv", &s, &err), 0, "%s", err.msg);
    size_t n;
    gm_reader_t *r;
    gm_event_t *ev = read_events(s, &n, &r);
    cr_assert_eq(n, 7);
    uint8_t ops[] = {GM_OP_ALLOC, GM_OP_ALLOC, GM_OP_FREE, GM_OP_MARK,
                     GM_OP_ALLOC, GM_OP_FREE,  GM_OP_FREE};
    uint64_t ids[] = {0, 1, 0, 0, 2, 1, 2};
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(ev[i].op, ops[i], "event %zu", i);
        if (ev[i].op != GM_OP_MARK)
            cr_expect_eq(ev[i].id, ids[i], "event %zu", i);
        cr_expect_eq(ev[i].ts_ns, UINT64_C(36000000000000) + 100000 * (i + 1), "event %zu", i);
        cr_expect_eq(ev[i].device, 2);
    }
    cr_expect_eq(ev[1].size, 2048);
    cr_expect_eq(ev[1].addr, UINT64_C(0x7f8a40000400));
    cr_expect_eq(gm_reader_stream(r, ev[1].stream), UINT64_C(0x7f8a38001020));
    cr_expect_str_eq(gm_reader_tag(r, ev[3].tag), "alloc_failure");
    const gm_trace_info_t *info = gm_reader_info(r);
    cr_expect_eq(info->load, 1024 + 2048);
    cr_expect(strstr(info->attrs, "\"source\": \"rmm\"") != NULL, "%s", info->attrs);
    cr_expect(strstr(info->attrs, "\"device\": 2") != NULL, "%s", info->attrs);
    cr_expect(strstr(info->attrs, "\"alloc_failures\": 1") != NULL, "%s", info->attrs);
    gm_reader_close(r);
    free(ev);
    gm_store_close(s);
}

Test(rmm, preexisting_allocations_nil_pointers_and_columns_by_name)
{
    /* Columns in another order, epoch-second times, a free of an address
     * never allocated (alive before the log began), a zero-size request
     * with a null pointer, and a free of null with nothing to pair. */
    static const char text[] = "Action,Pointer,Size,Stream,Time,Thread\n"
                               "allocate,0x1000,64,0x0,1634567890.000001,1\n"
                               "free,0x9000,4096,0x5,1634567890.000002,1\n"
                               "allocate,(nil),0,0x0,1634567890.000003,1\n"
                               "free,(nil),0,0x0,1634567890.000004,1\n"
                               "free,(nil),0,0x0,1634567890.000005,1\n"
                               "free,0x1000,64,0x0,1634567890.000006,1\n";
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gt_import_text(gm_rmm_import, text, "rmm.csv", &s, &err), 0, "%s", err.msg);
    size_t n;
    gm_reader_t *r;
    gm_event_t *ev = read_events(s, &n, &r);
    /* pre-existing ALLOC 0x9000 first, then alloc 0x1000, free 0x9000,
     * free 0x1000 (the zero-size pair is dropped by the store). */
    cr_assert_eq(n, 4);
    cr_expect_eq(ev[0].op, GM_OP_ALLOC);
    cr_expect_eq(ev[0].flags & GM_EVENT_PREEXISTING, GM_EVENT_PREEXISTING);
    cr_expect_eq(ev[0].size, 4096);
    cr_expect_eq(ev[0].ts_ns, UINT64_C(1634567890000001000));
    cr_expect_eq(gm_reader_stream(r, ev[0].stream), 5);
    cr_expect_eq(ev[1].op, GM_OP_ALLOC);
    cr_expect_eq(ev[1].flags, 0);
    cr_expect_eq(ev[2].op, GM_OP_FREE);
    cr_expect_eq(ev[2].id, ev[0].id);
    cr_expect_eq(ev[3].op, GM_OP_FREE);
    cr_expect_eq(ev[3].id, ev[1].id);
    const gm_trace_info_t *info = gm_reader_info(r);
    cr_expect(strstr(info->attrs, "\"preexisting\": 1") != NULL, "%s", info->attrs);
    cr_expect(strstr(info->attrs, "\"null_frees_ignored\": 1") != NULL, "%s", info->attrs);
    cr_expect(strstr(info->attrs, "\"dropped_zero_size\": 1") != NULL, "%s", info->attrs);
    gm_reader_close(r);
    free(ev);
    gm_store_close(s);
}

Test(rmm, wall_clock_wraps_at_midnight)
{
    static const char text[] = "Thread,Time,Action,Pointer,Size,Stream\n"
                               "1,23:59:59.999999,allocate,0x10,8,0x0\n"
                               "1,00:00:00.000001,free,0x10,8,0x0\n";
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gt_import_text(gm_rmm_import, text, "r.csv", &s, &err), 0, "%s", err.msg);
    size_t n;
    gm_reader_t *r;
    gm_event_t *ev = read_events(s, &n, &r);
    cr_assert_eq(n, 2);
    cr_expect_eq(ev[1].ts_ns - ev[0].ts_ns, 2000);
    gm_reader_close(r);
    free(ev);
    gm_store_close(s);
}

Test(rmm, row_errors_name_the_line)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"Thread,Time,Size\n", "line 1: expected the header"},
        {"Thread,Time,Action,Pointer,Size,Stream\n1,00:00:01.0,grab,0x10,8,0x0\n",
         "line 2: unknown action 'grab'"},
        {"Thread,Time,Action,Pointer,Size,Stream\n1,00:00:01.0,allocate,0x10,8\n",
         "line 2: expected 6 fields"},
        {"Thread,Time,Action,Pointer,Size,Stream\n1,25:00:01.0,allocate,0x10,8,0x0\n",
         "line 2: invalid time '25:00:01.0'"},
        {"Thread,Time,Action,Pointer,Size,Stream\n1,00:00:01.0,allocate,zz,8,0x0\n",
         "line 2: invalid pointer 'zz'"},
        {"Thread,Time,Action,Pointer,Size,Stream\n1,00:00:01.0,allocate,0x10,-8,0x0\n",
         "line 2: invalid size '-8'"},
        {"Thread,Time,Action,Pointer,Size,Stream\n1,1.0,allocate,0x10,8,0x0\n"
         "1,2.0,allocate,0x10,8,0x0\n",
         "line 3: allocation at 0x10 which is live (allocated at line 2"},
        {"Thread,Time,Action,Pointer,Size,Stream\n1,1.0,allocate,0x10,8,0x0\n"
         "1,2.0,free,0x10,8,0x0\n1,3.0,free,0x10,8,0x0\n",
         "line 4: free of 0x10 which is not live (already freed)"},
        {"Thread,Time,Action,Pointer,Size,Stream\n1,1.0,allocate,0x10,281474976710657,0x0\n",
         "line 2: size 281474976710657 is above the limit"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_store_t *s;
        gm_error_t err;
        cr_expect_eq(gt_import_text(gm_rmm_import, cases[i].text, "bad.csv", &s, &err),
                     GM_EFORMAT, "case %zu", i);
        cr_expect(strstr(err.msg, "'bad.csv' ") == err.msg && strstr(err.msg, cases[i].msg),
                  "case %zu: %s", i, err.msg);
        gm_trace_info_t *list;
        size_t n;
        cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 0);
        gm_trace_info_free_list(list, n);
        gm_store_close(s);
    }
}

Test(rmm, sniffer)
{
    cr_expect(gm_rmm_sniff(log1, sizeof log1 - 1));
    cr_expect(gm_rmm_sniff("\n thread,time,action,pointer,size,stream\n", 41));
    cr_expect(!gm_rmm_sniff("Thread,Time,Action", 18));
    cr_expect(!gm_rmm_sniff("id,lower,upper,size\n", 20));
}
