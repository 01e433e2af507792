/*
 * cli/cmd_info.c — `gmsim info DB [--json]`: the traces in a store.
 *
 * The table shows one row per trace (counts, LOAD, compressed bytes on disk
 * and bytes per event) followed by each trace's attributes as stored (JSON
 * text); --json prints the same and more (digest, chunks, live at end) as
 * one object: {"store", "traces": [{"name", "events", …, "attrs": {…}}]}.
 */
#include <inttypes.h>

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
        gm__cli_json_trace(&j, &list[i]);
    gm_json_end_array(&j);
    gm_json_end_object(&j);
    gm_json_finish(&j);
}

static void info_table(const char *path, const gm_trace_info_t *list, size_t n)
{
    if (n == 0) {
        printf("no traces in '%s'\n", path);
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
        printf("%s: %s\n", e->name, e->attrs && e->attrs[0] ? e->attrs : "{}");
        if (e->live_at_end)
            printf("%s: %" PRIu64 " allocations never freed\n", e->name, e->live_at_end);
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
