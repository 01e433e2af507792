/*
 * formats/perfetto.c — a stored trace as Chrome trace-event JSON, the
 * format ui.perfetto.dev and chrome://tracing open
 * ({"traceEvents": [...]}, "ph" C = counter, i = instant, M = metadata).
 *
 * Process 1 is the trace: metadata names it "trace NAME"; a counter
 * "requested" (args {"bytes": live requested bytes}) gets one point per
 * ALLOC or FREE; when the trace has SEG_* events a counter "reserved
 * (recorded)" follows the observed segments (alloc/map add, free/unmap
 * subtract); every MARK is an instant event on thread 1 ("marks") named by
 * its tag.  With GM_PERFETTO_RUNS each stored replay run of the trace (the
 * runs whose trace digest is this trace's) is a process of its own, 2, 3,
 * … in run id order, named "POLICY (run ID)", with one counter "memory"
 * whose args are requested, allocated and reserved bytes at each timeline
 * point.
 *
 * Time: "ts" is in microseconds with three decimals (the stored ns).  A
 * trace whose time stamps are all 0 (unknown, e.g. STAlloc logs) uses the
 * event index as its time (1 µs per event), and so do its runs' timelines;
 * metadata says which ("time_base": "ns" or "event_index").  Times are
 * made non-decreasing (a time stamp earlier than the one before is shown
 * at the one before), so every track is monotone.  Every string (trace
 * name, tags, policy names) is written as an escaped JSON string.
 *
 * Cost: two passes over the events when the first finds no time stamps,
 * else one; output one line per event.
 */
#include "gmsim/formats.h"
#include "gmsim/json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/text.h"
#include "base/idmap.h"
#include "base/text.h"

typedef struct perfetto_clock {
    int by_index;  /* no time stamps: the event index is the time */
    uint64_t last; /* last time written (ns) */
} perfetto_clock_t;

static uint64_t perfetto_time(perfetto_clock_t *c, uint64_t ts_ns, uint64_t index)
{
    uint64_t t = c->by_index ? index * 1000 : ts_ns;
    if (t < c->last)
        t = c->last;
    c->last = t;
    return t;
}

static void perfetto_ts(FILE *out, uint64_t ns)
{
    fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void perfetto_meta(FILE *out, int pid, const char *what, const char *name, int *first)
{
    fprintf(out, "%s\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"args\":{\"name\":",
            *first ? "" : ",", pid, strcmp(what, "thread_name") == 0 ? 1 : 0, what);
    gm_json_write_string(out, name);
    fputs("}}", out);
    *first = 0;
}

/* Whether any event of the trace has a time stamp. */
static int perfetto_has_times(gm_store_t *s, const char *name, int *has, gm_error_t *err)
{
    gm_reader_t *r;
    int rc = gm_reader_open(s, name, &r, err);
    if (rc)
        return rc;
    const gm_event_t *evs;
    size_t n;
    *has = 0;
    while (!*has && (rc = gm_reader_next(r, &evs, &n, err)) == 0 && n > 0)
        for (size_t i = 0; i < n; i++)
            if (evs[i].ts_ns != 0) {
                *has = 1;
                break;
            }
    gm_reader_close(r);
    return rc;
}

static int perfetto_events(gm_store_t *s, const char *name, perfetto_clock_t *clock, FILE *out,
                           gm_error_t *err)
{
    gm_reader_t *r;
    int rc = gm_reader_open(s, name, &r, err);
    if (rc)
        return rc;
    gm__idmap_t sizes; /* live ordinal → size */
    gm__idmap_init(&sizes);
    uint64_t requested = 0, reserved = 0, index = 0;
    const gm_event_t *evs;
    size_t n;
    while (rc == 0 && (rc = gm_reader_next(r, &evs, &n, err)) == 0 && n > 0) {
        for (size_t i = 0; i < n; i++, index++) {
            const gm_event_t *ev = &evs[i];
            uint64_t t = perfetto_time(clock, ev->ts_ns, index), size;
            switch (ev->op) {
            case GM_OP_ALLOC:
                if (gm__idmap_put(&sizes, ev->id, ev->size)) {
                    rc = gm_error_set(err, GM_ENOMEM, "out of memory exporting '%s'", name);
                    break;
                }
                requested += ev->size;
                goto counter;
            case GM_OP_FREE:
                if (gm__idmap_remove(&sizes, ev->id, &size))
                    requested -= size;
            counter:
                fputs(",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"requested\",\"ts\":", out);
                perfetto_ts(out, t);
                fprintf(out, ",\"args\":{\"bytes\":%" PRIu64 "}}", requested);
                break;
            case GM_OP_MARK: {
                const char *tag = gm_reader_tag(r, ev->tag);
                fputs(",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"name\":", out);
                gm_json_write_string(out, tag ? tag : "");
                fputs(",\"ts\":", out);
                perfetto_ts(out, t);
                fputs("}", out);
                break;
            }
            case GM_OP_SEG_ALLOC:
            case GM_OP_SEG_MAP:
                reserved += ev->size;
                goto seg;
            case GM_OP_SEG_FREE:
            case GM_OP_SEG_UNMAP:
                reserved = ev->size > reserved ? 0 : reserved - ev->size;
            seg:
                fputs(",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"reserved (recorded)\",\"ts\":", out);
                perfetto_ts(out, t);
                fprintf(out, ",\"args\":{\"bytes\":%" PRIu64 "}}", reserved);
                break;
            default:
                break;
            }
            if (rc)
                break;
        }
    }
    gm__idmap_release(&sizes);
    gm_reader_close(r);
    return rc;
}

static int perfetto_runs(gm_store_t *s, const gm_trace_info_t *info, int by_index, FILE *out,
                         int *first, gm_error_t *err)
{
    gm_run_info_t *runs;
    size_t nruns;
    int rc = gm_store_list_runs(s, &runs, &nruns, err);
    if (rc)
        return rc;
    int pid = 2;
    for (size_t k = 0; rc == 0 && k < nruns; k++) {
        if (strcmp(runs[k].trace_digest, info->digest) != 0)
            continue;
        gm_timeline_point_t *pts = NULL;
        size_t npts = 0;
        if ((rc = gm_store_run_timeline(s, runs[k].id, &pts, &npts, err)))
            break;
        char label[256];
        snprintf(label, sizeof label, "%s (run %" PRId64 ")", runs[k].policy, runs[k].id);
        perfetto_meta(out, pid, "process_name", label, first);
        perfetto_clock_t clock = {.by_index = by_index};
        for (size_t i = 0; i < npts; i++) {
            uint64_t t = perfetto_time(&clock, pts[i].ts_ns, pts[i].event);
            fprintf(out, ",\n{\"ph\":\"C\",\"pid\":%d,\"name\":\"memory\",\"ts\":", pid);
            perfetto_ts(out, t);
            fprintf(out,
                    ",\"args\":{\"requested\":%" PRIu64 ",\"allocated\":%" PRIu64
                    ",\"reserved\":%" PRIu64 "}}",
                    pts[i].requested, pts[i].allocated, pts[i].reserved);
        }
        free(pts);
        pid++;
    }
    gm_run_info_free_list(runs, nruns);
    return rc;
}

int gm_perfetto_export(gm_store_t *s, const char *name, unsigned flags, FILE *out,
                       gm_error_t *err)
{
    gm_trace_info_t info;
    int rc = gm_store_find(s, name, &info, err);
    if (rc)
        return rc;
    int has_times = 0;
    if ((rc = perfetto_has_times(s, name, &has_times, err)) == 0) {
        int first = 1;
        fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"trace\":", out);
        gm_json_write_string(out, name);
        fprintf(out, ",\"time_base\":\"%s\"},\"traceEvents\":[", has_times ? "ns" : "event_index");
        char label[GM_ERROR_MSG_MAX];
        snprintf(label, sizeof label, "trace %s", name);
        perfetto_meta(out, 1, "process_name", label, &first);
        perfetto_meta(out, 1, "thread_name", "marks", &first);
        perfetto_clock_t clock = {.by_index = !has_times};
        rc = perfetto_events(s, name, &clock, out, err);
        if (rc == 0 && (flags & GM_PERFETTO_RUNS))
            rc = perfetto_runs(s, &info, !has_times, out, &first, err);
        fputs("\n]}\n", out);
    }
    gm_trace_info_release(&info);
    return rc ? rc : gm__text_flushed(out, "the perfetto json", err);
}
