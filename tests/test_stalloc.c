/*
 * tests/test_stalloc.c — STAlloc trace logs.  No real STAlloc log is in
 * ../shared/data: the fixtures are written by the test from the format
 * STAlloc's tracing allocator writes (one "STATUS PTR SIZE STREAM" line per
 * malloc (1) or free (0), C++-printed pointers, "0" for null) and the
 * marker lines its model hooks write ("Iteration Index : N",
 * "micro-batch : F", "NAME->MODULE Layer : F-start").  Checked: events,
 * ordinals, marks in place, the device from the file name, pre-existing
 * allocations, and each line error with its line number.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char log1[] = "Iteration Index : 0\n"
                           "micro-batch : F\n"
                           "1 0x7f1e41329c00 1048576 0\n"
                           "decoder.layers.0.mlp->MoELayer Layer : F-start\n"
                           "1 0x7f1e41429c00 4096 0x55d1c0a0\n"
                           "0 0x7f1e41429c00 4096 0x55d1c0a0\n"
                           "decoder.layers.0.mlp->MoELayer Layer : F-end\n"
                           "\n"
                           "micro-batch : B\n"
                           "0 0x7f1e41329c00 1048576 0\n"
                           "Iteration Index : end\n";

Test(stalloc, device_out_of_range_in_the_name)
{
    gm_store_t *s = NULL;
    gm_error_t err;
    cr_assert_eq(gt_import_text(gm_stalloc_import, log1, "trace/mem_log_dev70000.txt", &s, &err),
                 GM_EFORMAT);
    cr_expect_str_eq(err.msg, "'trace/mem_log_dev70000.txt': the device in the file name is out "
                              "of range (at most 65535)");
    gm_store_close(s);
    cr_assert_eq(gt_import_text(gm_stalloc_import, log1, "mem_log_dev65535.txt", &s, &err), 0,
                 "%s", err.msg);
    gm_store_close(s);
}

Test(stalloc, events_marks_and_device)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gt_import_text(gm_stalloc_import, log1, "trace/mem_log_dev3.txt", &s, &err),
                 0, "%s", err.msg);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 10);
    uint8_t ops[] = {GM_OP_MARK, GM_OP_MARK, GM_OP_ALLOC, GM_OP_MARK, GM_OP_ALLOC,
                     GM_OP_FREE, GM_OP_MARK, GM_OP_MARK,  GM_OP_FREE, GM_OP_MARK};
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(ev[i].op, ops[i], "event %zu", i);
        cr_expect_eq(ev[i].device, 3);
        cr_expect_eq(ev[i].ts_ns, 0);
    }
    cr_expect_str_eq(gm_reader_tag(r, ev[0].tag), "Iteration Index : 0");
    cr_expect_str_eq(gm_reader_tag(r, ev[3].tag), "decoder.layers.0.mlp->MoELayer Layer : F-start");
    cr_expect_eq(ev[4].id, 1);
    cr_expect_eq(ev[5].id, 1);
    cr_expect_eq(ev[8].id, 0);
    cr_expect_eq(gm_reader_stream(r, ev[4].stream), 0x55d1c0a0);
    const gm_trace_info_t *info = gm_reader_info(r);
    cr_expect_eq(info->load, 1048576 + 4096);
    cr_expect(strstr(info->attrs, "\"source\": \"stalloc\"") != NULL, "%s", info->attrs);
    cr_expect(strstr(info->attrs, "\"device\": 3") != NULL, "%s", info->attrs);
    gm_reader_close(r);
    gm_store_close(s);
}

Test(stalloc, preexisting_and_null)
{
    static const char text[] = "0 0x2000 256 0\n"  /* allocated before the log */
                               "1 0x2000 128 0\n"  /* address reused */
                               "0 0 0 0\n"         /* free(nullptr): ignored */
                               "0 0x2000 128 0\n";
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gt_import_text(gm_stalloc_import, text, "log.txt", &s, &err), 0, "%s", err.msg);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 4);
    cr_expect_eq(ev[0].op, GM_OP_ALLOC);
    cr_expect_eq(ev[0].flags, GM_EVENT_PREEXISTING);
    cr_expect_eq(ev[0].size, 256);
    cr_expect_eq(ev[1].op, GM_OP_FREE);
    cr_expect_eq(ev[1].id, 0);
    cr_expect_eq(ev[2].op, GM_OP_ALLOC);
    cr_expect_eq(ev[3].id, 1);
    const gm_trace_info_t *info = gm_reader_info(r);
    cr_expect(strstr(info->attrs, "\"null_frees_ignored\": 1") != NULL, "%s", info->attrs);
    cr_expect(strstr(info->attrs, "\"device\"") == NULL, "%s", info->attrs);
    gm_reader_close(r);
    gm_store_close(s);
}

Test(stalloc, line_errors)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"1 0x10 8 0\nhello world\n", "line 2: unrecognized line 'hello world'"},
        {"1 0x10 8\n", "line 1: expected 4 fields"},
        {"1 0x10 8 0 9\n", "line 1: expected 4 fields"},
        {"10 0x10 8 0\n", "line 1: invalid status '10'"},
        {"1 0xzz 8 0\n", "line 1: invalid pointer '0xzz'"},
        {"1 0x10 eight 0\n", "line 1: invalid size 'eight'"},
        {"1 0x10 8 s\n", "line 1: invalid stream 's'"},
        {"1 0x10 8 0\n1 0x10 8 0\n", "line 2: allocation at 0x10 which is live"},
        {"1 0x10 8 0\n0 0x10 8 0\n0 0x10 8 0\n", "line 3: free of 0x10 which is not live"},
        {"1 0x10 8 0\n1 0x\0 8 0\n", "line 2: NUL byte"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_store_t *s;
        gm_error_t err;
        size_t len = strlen(cases[i].text);
        if (i == sizeof cases / sizeof cases[0] - 1)
            len = 21; /* the NUL byte case: "1 0x10 8 0\n1 0x" NUL " 8 0\n" */
        char *buf = malloc(len + 1);
        memcpy(buf, cases[i].text, len);
        buf[len] = '\0';
        cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
        gm_import_target_t *t;
        cr_assert_eq(gm_import_target_create(s, "t", 0, &t, &err), 0, "%s", err.msg);
        FILE *in = fmemopen(buf, len, "r");
        int rc = gm_stalloc_import(in, "bad.txt", t, &err);
        fclose(in);
        gm_import_abort(t);
        cr_expect_eq(rc, GM_EFORMAT, "case %zu", i);
        cr_expect(strstr(err.msg, "'bad.txt' ") == err.msg && strstr(err.msg, cases[i].msg),
                  "case %zu: %s", i, err.msg);
        gm_trace_info_t *list;
        size_t n;
        cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 0);
        gm_trace_info_free_list(list, n);
        gm_store_close(s);
        free(buf);
    }
}

Test(stalloc, sniffer)
{
    cr_expect(gm_stalloc_sniff(log1, sizeof log1 - 1));
    cr_expect(gm_stalloc_sniff("1 0x7f1e41329c00 1 0\n", 21));
    cr_expect(gm_stalloc_sniff("0 0 0 0", 7));
    cr_expect(!gm_stalloc_sniff("1,alloc,1,10,0,0\n", 17));
    cr_expect(!gm_stalloc_sniff("1 2 3\n", 6));
    cr_expect(!gm_stalloc_sniff("hello\n", 6));
}
