/*
 * cli/cmd_info.c — `gmsim info DB [--json]`: the traces in a store.
 *
 * The table shows one row per trace (counts, LOAD, compressed bytes on disk
 * and bytes per event) followed by each trace's attributes as stored (JSON
 * text); --json prints the same and more (digest, chunks, live at end) as
 * one object: {"store", "traces": [{"name", "events", …, "attrs": {…}}]}.
 *
 * A trace imported from a PyTorch snapshot carries the device-level truth
 * recorded with it (the attribute "recorded": peak, start and end reserved
 * bytes, segment allocations and frees).  --json repeats it as the trace's
 * "recorded" member, next to "attrs", so that a policy's figures can be
 * compared with it directly; the table shows it on one line per trace.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char info_usage[] =
    "usage: gmsim info DB [--json]\n"
    "\n"
    "List the traces in the store DB: events, allocations, frees, marks, LOAD\n"
    "(the peak of requested bytes, the floor for every allocator), the bytes the\n"
    "trace takes on disk, and its attributes.\n"
    "\n"
    "options:\n"
    "      --json          print JSON instead of a table (docs/formats.md)\n"
    "  -h, --help          show this help\n";

static double info_bytes_per_event(const gm_trace_info_t *t)
{
    return t->events ? (double)t->bytes / (double)t->events : 0.0;
}

/* The fields of the "recorded" attribute, in this order. */
static const char *const info_recorded_keys[] = {"peak_reserved", "reserved_at_start",
                                                 "reserved_at_end", "segment_allocs",
                                                 "segment_frees"};
#define INFO_NRECORDED (sizeof info_recorded_keys / sizeof info_recorded_keys[0])

/* Read the "recorded" attribute of t into v[]: 1 when present and whole. */
static int info_recorded(const gm_trace_info_t *t, uint64_t v[INFO_NRECORDED])
{
    if (t->attrs == NULL || strstr(t->attrs, "\"recorded\"") == NULL)
        return 0;
    gm_jv_t *root;
    gm_error_t err = {0};
    if (gm_json_parse(t->attrs, strlen(t->attrs), &root, &err) != 0)
        return 0;
    const gm_jv_t *rec = gm_jv_get(root, "recorded");
    int ok = gm_jv_type(rec) == GM_JV_OBJECT;
    for (size_t i = 0; ok && i < INFO_NRECORDED; i++)
        ok = gm_jv_u64(gm_jv_get(rec, info_recorded_keys[i]), &v[i]) == 0;
    gm_jv_free(root);
    return ok;
}

/* Write JSON value v through j (numbers as integers when they are). */
static void info_emit(gm_json_t *j, const gm_jv_t *v)
{
    uint64_t u;
    int64_t i;
    switch (gm_jv_type(v)) {
    case GM_JV_NULL: gm_json_null(j); break;
    case GM_JV_BOOL: gm_json_bool(j, gm_jv_bool(v)); break;
    case GM_JV_NUMBER:
        if (gm_jv_u64(v, &u) == 0)
            gm_json_u64(j, u);
        else if (gm_jv_i64(v, &i) == 0)
            gm_json_i64(j, i);
        else
            gm_json_double(j, gm_jv_num(v));
        break;
    case GM_JV_STRING: gm_json_str(j, gm_jv_str(v)); break;
    case GM_JV_ARRAY:
        gm_json_begin_array(j);
        for (size_t k = 0; k < gm_jv_len(v); k++)
            info_emit(j, gm_jv_at(v, k));
        gm_json_end_array(j);
        break;
    case GM_JV_OBJECT:
        gm_json_begin_object(j);
        for (size_t k = 0; k < gm_jv_len(v); k++) {
            gm_json_key(j, gm_jv_key_at(v, k));
            info_emit(j, gm_jv_at(v, k));
        }
        gm_json_end_object(j);
        break;
    }
}

/* One trace as gm__cli_json_trace writes it, plus "recorded": its members
 * are read back from that writer's output (so they stay the same as every
 * other verb's) and written again with "recorded" after "attrs". */
static void info_json_trace(gm_json_t *j, const gm_trace_info_t *t)
{
    uint64_t rec[INFO_NRECORDED];
    char *text = NULL;
    size_t len = 0;
    FILE *mem = info_recorded(t, rec) ? open_memstream(&text, &len) : NULL;
    if (mem == NULL) {
        gm__cli_json_trace(j, t);
        return;
    }
    gm_json_t sub;
    gm_json_init(&sub, mem, 0);
    gm__cli_json_trace(&sub, t);
    fclose(mem);
    gm_jv_t *root = NULL;
    gm_error_t err = {0};
    if (text == NULL || gm_json_parse(text, len, &root, &err) != 0 ||
        gm_jv_type(root) != GM_JV_OBJECT) {
        gm_jv_free(root);
        free(text);
        gm__cli_json_trace(j, t);
        return;
    }
    gm_json_begin_object(j);
    for (size_t k = 0; k < gm_jv_len(root); k++) {
        const char *key = gm_jv_key_at(root, k);
        gm_json_key(j, key);
        if (strcmp(key, "attrs") == 0)
            gm_json_raw(j, t->attrs && t->attrs[0] ? t->attrs : "{}");
        else
            info_emit(j, gm_jv_at(root, k));
    }
    gm_json_key(j, "recorded");
    gm_json_begin_object(j);
    for (size_t k = 0; k < INFO_NRECORDED; k++) {
        gm_json_key(j, info_recorded_keys[k]);
        gm_json_u64(j, rec[k]);
    }
    gm_json_end_object(j);
    gm_json_end_object(j);
    gm_jv_free(root);
    free(text);
}

static void info_json(const char *path, const gm_trace_info_t *list, size_t n)
{
    gm_json_t j;
    gm_json_init(&j, stdout, 1);
    gm_json_begin_object(&j);
    gm_json_key(&j, "store");
    gm_json_str(&j, path);
    gm_json_key(&j, "traces");
    gm_json_begin_array(&j);
    for (size_t i = 0; i < n; i++)
        info_json_trace(&j, &list[i]);
    gm_json_end_array(&j);
    gm_json_end_object(&j);
    gm_json_finish(&j);
}

static void info_table(const char *path, const gm_trace_info_t *list, size_t n)
{
    if (n == 0) {
        printf("no traces in '%s'\n", gm__cli_s(path));
        return;
    }
    gm__cli_table_t t;
    gm__cli_table_init(&t, 8, "lrrrrrrr");
    static const char *const head[] = {"trace", "events", "allocs", "frees",
                                       "marks", "load",   "on disk", "bytes/event"};
    for (size_t i = 0; i < 8; i++)
        gm__cli_table_cell(&t, "%s", head[i]);
    for (size_t i = 0; i < n; i++) {
        const gm_trace_info_t *e = &list[i];
        gm__cli_table_cell(&t, "%s", e->name);
        gm__cli_table_cell(&t, "%" PRIu64, e->events);
        gm__cli_table_cell(&t, "%" PRIu64, e->allocs);
        gm__cli_table_cell(&t, "%" PRIu64, e->frees);
        gm__cli_table_cell(&t, "%" PRIu64, e->marks);
        gm__cli_table_cell(&t, "%s", gm__cli_size(e->load));
        gm__cli_table_cell(&t, "%s", gm__cli_size(e->bytes));
        gm__cli_table_cell(&t, "%.2f", info_bytes_per_event(e));
    }
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
    putchar('\n');
    for (size_t i = 0; i < n; i++) {
        const gm_trace_info_t *e = &list[i];
        printf("%s: %s\n", gm__cli_s(e->name), gm__cli_s(e->attrs && e->attrs[0] ? e->attrs : "{}"));
        if (e->live_at_end)
            printf("%s: %" PRIu64 " allocations never freed\n", gm__cli_s(e->name),
                   e->live_at_end);
        uint64_t rec[INFO_NRECORDED];
        if (info_recorded(e, rec)) {
            printf("%s: recorded reserved peak %s", gm__cli_s(e->name), gm__cli_size(rec[0]));
            printf(" (start %s", gm__cli_size(rec[1]));
            printf(", end %s), %" PRIu64 " segment allocations, %" PRIu64 " segment frees\n",
                   gm__cli_size(rec[2]), rec[3], rec[4]);
        }
    }
}

int gm__cmd_info(int argc, char **argv)
{
    int json, first, status;
    if (gm__cli_json_only(argc, argv, info_usage, &json, &first, &status))
        return status;
    if (first >= argc)
        return gm__cli_usage_error(info_usage, "missing the store to read (DB)");
    if (argc - first > 1)
        return gm__cli_usage_error(info_usage, "too many arguments: '%s'", argv[first + 1]);

    gm_store_t *s;
    int rc = gm__cli_open_store(argv[first], GM_STORE_READONLY, &s);
    if (rc)
        return rc;
    gm_trace_info_t *list;
    size_t n;
    gm_error_t err = {0};
    if (gm_store_list(s, &list, &n, &err) != 0) {
        rc = gm__cli_error("%s", err.msg);
    } else {
        if (json)
            info_json(argv[first], list, n);
        else
            info_table(argv[first], list, n);
        gm_trace_info_free_list(list, n);
    }
    gm_store_close(s);
    return rc;
}
