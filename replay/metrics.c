/*
 * replay/metrics.c — the metrics' descriptors, made from the one table
 * GM_METRICS (gmsim/replay.h), and everything that goes by them: a
 * metric's value and table text, and the metrics' canonical JSON, written
 * and read back (API in gmsim/replay.h and gmsim/sweep.h).
 *
 * JSON: the members in GM_METRICS order, numbers as the library's JSON
 * writer prints them (a ratio that is not a number as null), a metric not
 * known left out.  Read back, a member that is missing reads as absent
 * (a run stored before the metric existed) unless the metric is
 * GM_METRIC_REQUIRED; a member of the wrong kind is an error naming it.
 */
#include "gmsim/replay.h"
#include "gmsim/sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/json.h"
#include "base/jsonfmt.h"
#include "replay/metrics.h"

static const gm_metric_desc_t metric_descs[] = {
#define METRIC_UNIT_BYTES "B"
#define METRIC_UNIT_RATIO "ratio"
#define METRIC_UNIT_EXCESS "ratio"
#define METRIC_UNIT_COUNT "count"
#define METRIC_UNIT_EVENT "event"
#define METRIC_UNIT_DURATION "ns"
#define METRIC_UNIT_RATE "ns/event"
#define METRIC_DESC(name, type, kind, column, flags, label, title)                          \
    {#name, label, title, METRIC_UNIT_##kind, GM_METRIC_##type, GM_METRIC_##kind, column, \
     flags, offsetof(gm_metrics_t, name)},
    GM_METRICS(METRIC_DESC)
#undef METRIC_DESC
};

enum { METRIC_COUNT = sizeof metric_descs / sizeof metric_descs[0] };
_Static_assert(METRIC_COUNT <= 64, "gm_metrics_t.absent has a bit per metric");

size_t gm_metric_count(void) { return METRIC_COUNT; }

const gm_metric_desc_t *gm_metric_at(size_t k) { return k < METRIC_COUNT ? &metric_descs[k] : NULL; }

int gm_metric_find(const char *name)
{
    for (size_t k = 0; k < METRIC_COUNT; k++)
        if (strcmp(metric_descs[k].name, name) == 0)
            return (int)k;
    return -1;
}

size_t gm_metric_columns(unsigned flags, size_t *idx)
{
    size_t n = 0;
    for (size_t k = 0; k < METRIC_COUNT; k++)
        if (metric_descs[k].column && (metric_descs[k].flags & flags) == flags)
            idx[n++] = k;
    /* insertion sort by column: a handful of entries */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && metric_descs[idx[j - 1]].column > metric_descs[idx[j]].column;
             j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    return n;
}

static const void *metric_ptr(const gm_metrics_t *m, size_t k)
{
    return (const char *)m + metric_descs[k].offset;
}

int gm_metric_known(const gm_metrics_t *m, size_t k)
{
    return k < METRIC_COUNT && !(m->absent >> k & 1);
}

uint64_t gm_metric_u64(const gm_metrics_t *m, size_t k)
{
    uint64_t v = 0;
    if (k < METRIC_COUNT && metric_descs[k].type == GM_METRIC_U64)
        memcpy(&v, metric_ptr(m, k), sizeof v);
    return v;
}

int64_t gm_metric_i64(const gm_metrics_t *m, size_t k)
{
    int64_t v = 0;
    if (k < METRIC_COUNT && metric_descs[k].type == GM_METRIC_I64)
        memcpy(&v, metric_ptr(m, k), sizeof v);
    return v;
}

double gm_metric_value(const gm_metrics_t *m, size_t k)
{
    if (k >= METRIC_COUNT)
        return NAN;
    double d;
    switch (metric_descs[k].type) {
    case GM_METRIC_U64: return (double)gm_metric_u64(m, k);
    case GM_METRIC_I64: return (double)gm_metric_i64(m, k);
    case GM_METRIC_F64: memcpy(&d, metric_ptr(m, k), sizeof d); return d;
    }
    return NAN;
}

const char *gm_metric_text(const gm_metrics_t *m, size_t k, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    if (!gm_metric_known(m, k)) {
        snprintf(buf, len, "-");
        return buf;
    }
    const gm_metric_desc_t *d = &metric_descs[k];
    double v = gm_metric_value(m, k);
    switch (d->kind) {
    case GM_METRIC_BYTES: gm_format_size(gm_metric_u64(m, k), buf, (unsigned)len); break;
    case GM_METRIC_RATIO:
    case GM_METRIC_EXCESS:
        if (!isfinite(v))
            snprintf(buf, len, "-");
        else
            snprintf(buf, len, d->kind == GM_METRIC_EXCESS ? "%+.1f%%" : "%.1f%%", v * 100.0);
        break;
    case GM_METRIC_COUNT: snprintf(buf, len, "%" PRIu64, gm_metric_u64(m, k)); break;
    case GM_METRIC_EVENT: snprintf(buf, len, "%" PRId64, gm_metric_i64(m, k)); break;
    case GM_METRIC_DURATION: snprintf(buf, len, "%.1f ms", v / 1e6); break;
    case GM_METRIC_RATE: snprintf(buf, len, "%.1f", v); break;
    }
    return buf;
}

/* ---- JSON ------------------------------------------------------------------ */

void gm__metrics_write_members(gm_json_t *j, const gm_metrics_t *m)
{
    for (size_t k = 0; k < METRIC_COUNT; k++) {
        if (!gm_metric_known(m, k))
            continue;
        gm_json_key(j, metric_descs[k].name);
        switch (metric_descs[k].type) {
        case GM_METRIC_U64: gm_json_u64(j, gm_metric_u64(m, k)); break;
        case GM_METRIC_I64: gm_json_i64(j, gm_metric_i64(m, k)); break;
        case GM_METRIC_F64: gm_json_double(j, gm_metric_value(m, k)); break;
        }
    }
}

void gm_metrics_write_json(gm_json_t *j, const gm_metrics_t *m)
{
    gm_json_begin_object(j);
    gm__metrics_write_members(j, m);
    gm_json_end_object(j);
}

static void metrics_json_fn(gm_json_t *j, const void *m) { gm_metrics_write_json(j, m); }

char *gm_metrics_json(const gm_metrics_t *m) { return gm__json_text(metrics_json_fn, m); }

static int metric_read(const char *t, gm_metric_type_t type, void *out)
{
    char *end;
    if (type == GM_METRIC_F64 && strcmp(t, "null") == 0) {
        double d = NAN;
        memcpy(out, &d, sizeof d);
        return 1;
    }
    if (type == GM_METRIC_U64 ? (*t < '0' || *t > '9') : (*t != '-' && (*t < '0' || *t > '9')))
        return 0;
    if (type == GM_METRIC_U64) {
        uint64_t v = strtoull(t, &end, 10);
        memcpy(out, &v, sizeof v);
    } else if (type == GM_METRIC_I64) {
        int64_t v = strtoll(t, &end, 10);
        memcpy(out, &v, sizeof v);
    } else {
        double v = strtod(t, &end);
        memcpy(out, &v, sizeof v);
    }
    return *end == '\0';
}

int gm_metrics_parse(const char *json, gm_metrics_t *out, gm_error_t *err)
{
    gm_metrics_t m;
    memset(&m, 0, sizeof m);
    char buf[64];
    for (size_t k = 0; k < METRIC_COUNT; k++) {
        const gm_metric_desc_t *d = &metric_descs[k];
        if (!gm_json_member(json, d->name, buf, sizeof buf)) {
            if (d->flags & GM_METRIC_REQUIRED)
                return gm_error_set(err, GM_EFORMAT, "metrics have no '%s'", d->name);
            m.absent |= UINT64_C(1) << k;
            continue;
        }
        if (!metric_read(buf, d->type, (char *)&m + d->offset))
            return gm_error_set(err, GM_EFORMAT, "metric '%s' is not a number of its kind",
                                d->name);
    }
    *out = m;
    return 0;
}
