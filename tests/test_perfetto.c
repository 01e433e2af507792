/*
 * tests/test_perfetto.c — the Perfetto / Chrome trace-event JSON export:
 * the output parses as JSON (the library's reader, RFC 8259), the
 * requested-bytes counter follows the events and is monotone in time,
 * mark names with quotes, backslashes, control characters and UTF-8 come
 * back exactly, recorded segments give a reserved counter, stored runs
 * become counter tracks, traces without time stamps use the event index,
 * and write errors are reported.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char nasty[] = "say \"hi\"\\ \n\t\x01 µs/→ end";

static gm_store_t *make_store(int with_times)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, "tr\"ace", 0, &w, &err), 0, "%s", err.msg);
    uint32_t st, tag, tag2;
    cr_assert_eq(gm_writer_stream(w, 0, &st, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_tag(w, nasty, &tag, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_tag(w, "step", &tag2, &err), 0, "%s", err.msg);
    gm_event_t evs[] = {
        {.op = GM_OP_MARK, .tag = tag2, .ts_ns = 1000},
        {.op = GM_OP_SEG_ALLOC, .addr = 0x1000, .size = 4096, .ts_ns = 1500},
        {.op = GM_OP_ALLOC, .id = 0, .size = 100, .ts_ns = 2000},
        {.op = GM_OP_ALLOC, .id = 1, .size = 50, .ts_ns = 2500},
        {.op = GM_OP_MARK, .tag = tag, .ts_ns = 2600},
        {.op = GM_OP_FREE, .id = 0, .ts_ns = 2400}, /* earlier than the one before */
        {.op = GM_OP_FREE, .id = 1, .ts_ns = 4001},
        {.op = GM_OP_SEG_FREE, .addr = 0x1000, .size = 4096, .ts_ns = 5000},
    };
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) {
        evs[i].stream = st;
        if (!with_times)
            evs[i].ts_ns = 0;
        cr_assert_eq(gm_writer_add(w, &evs[i], &err), 0, "%s", err.msg);
    }
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    return s;
}

static char *export_json(gm_store_t *s, unsigned flags, gm_jv_t **root)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gm_error_t err;
    cr_assert_eq(gm_perfetto_export(s, "tr\"ace", flags, f, &err), 0, "%s", err.msg);
    fclose(f);
    cr_assert_eq(gm_json_parse(buf, len, root, &err), 0, "not JSON: %s\n%s", err.msg, buf);
    return buf;
}

/* ts of an event as ns (the text has three decimals of µs). */
static uint64_t ts_ns(const gm_jv_t *e)
{
    return (uint64_t)(gm_jv_num(gm_jv_get(e, "ts")) * 1000.0 + 0.5);
}

Test(perfetto, counters_marks_and_escaping)
{
    gm_store_t *s = make_store(1);
    gm_jv_t *root;
    char *text = export_json(s, 0, &root);
    cr_expect_str_eq(gm_jv_str(gm_jv_get(gm_jv_get(root, "otherData"), "trace")), "tr\"ace");
    cr_expect_str_eq(gm_jv_str(gm_jv_get(gm_jv_get(root, "otherData"), "time_base")), "ns");
    const gm_jv_t *evs = gm_jv_get(root, "traceEvents");
    cr_assert_eq(gm_jv_type(evs), GM_JV_ARRAY);
    uint64_t want_req[] = {100, 150, 50, 0};
    uint64_t want_ts[] = {2000, 2500, 2600, 4001}; /* the late FREE: at the mark before */
    size_t nreq = 0, nmarks = 0, nres = 0;
    uint64_t last = 0;
    int named = 0;
    for (size_t i = 0; i < gm_jv_len(evs); i++) {
        const gm_jv_t *e = gm_jv_at(evs, i);
        const char *ph = gm_jv_str(gm_jv_get(e, "ph"));
        const char *name = gm_jv_str(gm_jv_get(e, "name"));
        cr_assert(ph && name);
        if (strcmp(ph, "M") == 0) {
            const char *n = gm_jv_str(gm_jv_get(gm_jv_get(e, "args"), "name"));
            named |= strcmp(name, "process_name") == 0 && n && strcmp(n, "trace tr\"ace") == 0;
            continue;
        }
        uint64_t t = ts_ns(e);
        cr_expect_geq(t, last, "event %zu goes back in time", i);
        last = t;
        if (strcmp(ph, "C") == 0 && strcmp(name, "requested") == 0) {
            uint64_t v;
            cr_assert_eq(gm_jv_u64(gm_jv_get(gm_jv_get(e, "args"), "bytes"), &v), 0);
            cr_assert_lt(nreq, 4);
            cr_expect_eq(v, want_req[nreq], "point %zu", nreq);
            cr_expect_eq(t, want_ts[nreq], "point %zu", nreq);
            nreq++;
        } else if (strcmp(ph, "C") == 0) {
            cr_expect_str_eq(name, "reserved (recorded)");
            uint64_t v;
            cr_assert_eq(gm_jv_u64(gm_jv_get(gm_jv_get(e, "args"), "bytes"), &v), 0);
            cr_expect_eq(v, nres == 0 ? 4096 : 0);
            nres++;
        } else {
            cr_expect_str_eq(ph, "i");
            cr_expect_str_eq(name, nmarks == 0 ? "step" : nasty);
            nmarks++;
        }
    }
    cr_expect(named, "the trace's process is named");
    cr_expect_eq(nreq, 4);
    cr_expect_eq(nmarks, 2);
    cr_expect_eq(nres, 2);
    gm_jv_free(root);
    free(text);
    gm_store_close(s);
}

Test(perfetto, stored_runs_become_counter_tracks)
{
    gm_store_t *s = make_store(1);
    gm_error_t err;
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "tr\"ace", &info, &err), 0, "%s", err.msg);
    gm_timeline_point_t pts[] = {{2, 2000, 100, 512, 2048}, {6, 4001, 0, 0, 2048}};
    gm_run_record_t run = {.trace = "tr\"ace", .trace_digest = info.digest, .policy = "bu\"ddy",
                           .params = "{}", .device = "{}", .metrics = "{}", .timeline = pts,
                           .npoints = 2};
    cr_assert_eq(gm_store_save_run(s, &run, NULL, &err), 0, "%s", err.msg);
    run.trace_digest = "0123456789abcdef0123456789abcdef"; /* another trace's run */
    cr_assert_eq(gm_store_save_run(s, &run, NULL, &err), 0, "%s", err.msg);
    gm_trace_info_release(&info);

    gm_jv_t *root;
    char *text = export_json(s, GM_PERFETTO_RUNS, &root);
    const gm_jv_t *evs = gm_jv_get(root, "traceEvents");
    size_t points = 0;
    int named = 0;
    for (size_t i = 0; i < gm_jv_len(evs); i++) {
        const gm_jv_t *e = gm_jv_at(evs, i);
        int64_t pid;
        cr_assert_eq(gm_jv_i64(gm_jv_get(e, "pid"), &pid), 0);
        if (pid == 1)
            continue;
        cr_expect_eq(pid, 2, "only this trace's run");
        const char *ph = gm_jv_str(gm_jv_get(e, "ph"));
        if (strcmp(ph, "M") == 0) {
            named = strstr(gm_jv_str(gm_jv_get(gm_jv_get(e, "args"), "name")), "bu\"ddy (run ") !=
                    NULL;
            continue;
        }
        const gm_jv_t *args = gm_jv_get(e, "args");
        uint64_t req, alloc, res;
        cr_assert_eq(gm_jv_u64(gm_jv_get(args, "requested"), &req), 0);
        cr_assert_eq(gm_jv_u64(gm_jv_get(args, "allocated"), &alloc), 0);
        cr_assert_eq(gm_jv_u64(gm_jv_get(args, "reserved"), &res), 0);
        cr_expect_eq(req, pts[points].requested);
        cr_expect_eq(alloc, pts[points].allocated);
        cr_expect_eq(res, pts[points].reserved);
        cr_expect_eq(ts_ns(e), pts[points].ts_ns);
        points++;
    }
    cr_expect(named);
    cr_expect_eq(points, 2);
    gm_jv_free(root);
    free(text);
    gm_store_close(s);
}

Test(perfetto, no_time_stamps_use_the_event_index)
{
    gm_store_t *s = make_store(0);
    gm_jv_t *root;
    char *text = export_json(s, 0, &root);
    cr_expect_str_eq(gm_jv_str(gm_jv_get(gm_jv_get(root, "otherData"), "time_base")),
                     "event_index");
    const gm_jv_t *evs = gm_jv_get(root, "traceEvents");
    size_t seen = 0;
    for (size_t i = 0; i < gm_jv_len(evs); i++) {
        const gm_jv_t *e = gm_jv_at(evs, i);
        const char *name = gm_jv_str(gm_jv_get(e, "name"));
        if (strcmp(name, "requested") == 0) {
            /* ALLOCs are events 2 and 3, FREEs 5 and 6: 1 µs per event. */
            static const uint64_t want[] = {2000, 3000, 5000, 6000};
            cr_expect_eq(ts_ns(e), want[seen]);
            seen++;
        }
    }
    cr_expect_eq(seen, 4);
    gm_jv_free(root);
    free(text);
    gm_store_close(s);
}

Test(perfetto, write_errors_and_missing_traces)
{
    gm_store_t *s = make_store(1);
    gm_error_t err;
    FILE *full = fopen("/dev/full", "w");
    if (full != NULL) {
        cr_expect_eq(gm_perfetto_export(s, "tr\"ace", 0, full, &err), GM_EIO);
        fclose(full);
    }
    FILE *null = fopen("/dev/null", "w");
    cr_expect_eq(gm_perfetto_export(s, "nope", 0, null, &err), GM_ENOTFOUND);
    fclose(null);
    gm_store_close(s);
}
