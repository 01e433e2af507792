/*
 * cli/cmd_info.c — `gmsim info DB [--json]`: the traces in a store.
 *
 * The table shows one row per trace, what a user looks for first: where
 * it comes from (source, device, capacity), its size (events, LOAD), the
 * workload (seq_len, batch), what the recording's allocator reserved at
 * its peak, and only those allocator settings that differ from PyTorch's
 * defaults, written as PYTORCH_CUDA_ALLOC_CONF would set them.  Everything
 * else (allocation counts, bytes on disk, digest, chunks, live at end,
 * every attribute as stored) is --json's: one object {"store", "traces":
 * [{"name", "events", …, "attrs": {…}}]}.
 *
 * A trace imported from a PyTorch snapshot carries the device-level truth
 * recorded with it (the attribute "recorded": peak, start and end reserved
 * bytes, segment allocations and frees).  --json repeats it as the trace's
 * "recorded" member, next to "attrs", so that a policy's figures can be
 * compared with it directly; the table shows its peak.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "gmsim/attrs.h"
#include "sim/torch_rules.h"

static const char info_usage[] =
    "usage: gmsim info DB [--json]\n"
    "\n"
    "List the traces in the store DB: source, device, capacity, events, LOAD\n"
    "(the peak of requested bytes, the floor for every allocator), seq_len and\n"
    "batch, the peak the recording's allocator reserved, and the allocator\n"
    "settings that differ from PyTorch's defaults (as PYTORCH_CUDA_ALLOC_CONF\n"
    "sets them).  --json has every count and attribute.\n"
    "\n"
    "options:\n"
    "      --json          print JSON instead of a table (docs/formats.md)\n"
    "  -h, --help          show this help\n";

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
            gm_json_jv(j, gm_jv_at(root, k));
    }
    gm_json_key(j, "recorded");
    gm_json_begin_object(j);
    for (size_t k = 0; k < INFO_NRECORDED; k++)
        gm_json_kv_u64(j, info_recorded_keys[k], rec[k]);
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
    gm_json_kv_str(&j, "store", path);
    gm_json_key(&j, "traces");
    gm_json_begin_array(&j);
    for (size_t i = 0; i < n; i++)
        info_json_trace(&j, &list[i]);
    gm_json_end_array(&j);
    gm_json_end_object(&j);
    gm_json_finish(&j);
}

/* Append ", TEXT" (or TEXT first) to the settings text. */
static void info_add(char *buf, size_t len, const char *fmt, ...) GM_PRINTF(3, 4);
static void info_add(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 3 >= len)
        return;
    if (used)
        used += (size_t)snprintf(buf + used, len - used, ",");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* PyTorch's defaults of the allocator settings a snapshot records
 * (c10/cuda/CUDAAllocatorConfig.h): what `info` leaves out.  Sizes in
 * bytes; max_split_size is "unlimited" when -1 or SIZE_MAX. */
#define INFO_TORCH_NSR_DEFAULT (20ull << 20) /* max_non_split_rounding_size */

/* roundup_power2_divisions (an object {"MiB": divisions}, an array of
 * divisions by power-of-two interval, or one number) as the setting reads:
 * "4" when every interval has the same divisions, else "[1:4,64:8]" over
 * the intervals that have any; "" when every one is 0 (the default). */
static void info_roundup(const gm_jv_t *v, char *buf, size_t len)
{
    uint64_t d[64] = {0}, mib[64] = {0};
    size_t n = 0;
    buf[0] = '\0';
    if (gm_jv_type(v) == GM_JV_NUMBER) {
        if (gm_jv_u64(v, &d[0]) == 0 && d[0])
            snprintf(buf, len, "%" PRIu64, d[0]);
        return;
    }
    for (size_t k = 0; k < gm_jv_len(v) && n < 64; k++, n++) {
        if (gm_jv_u64(gm_jv_at(v, k), &d[n]) != 0)
            d[n] = 0;
        mib[n] = gm_jv_type(v) == GM_JV_OBJECT ? strtoull(gm_jv_key_at(v, k), NULL, 10)
                                               : (uint64_t)1 << (k < 63 ? k : 63);
    }
    int any = 0, same = n > 0;
    for (size_t k = 0; k < n; k++) {
        any |= d[k] != 0;
        same &= d[k] == d[0];
    }
    if (!any)
        return;
    if (same) {
        snprintf(buf, len, "%" PRIu64, d[0]);
        return;
    }
    size_t used = (size_t)snprintf(buf, len, "[");
    for (size_t k = 0, shown = 0; k < n && used < len; k++)
        if (d[k])
            used += (size_t)snprintf(buf + used, len - used, "%s%" PRIu64 ":%" PRIu64,
                                     shown++ ? "," : "", mib[k], d[k]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

/*
 * The allocator settings of a trace that differ from PyTorch's defaults,
 * as PYTORCH_CUDA_ALLOC_CONF would set them ("expandable_segments:True,
 * max_split_size_mb:128"): from a snapshot's "allocator_settings", else
 * the "expandable_segments" attribute; a recording's block rounding where
 * it is not CUDA's (an NPU build: "block_pad:32").  Settings this table
 * does not know are shown as key:value when they are not false, 0 or "".
 * "" when everything is at its default.
 */
static void info_settings(const gm_jv_t *attrs, char *buf, size_t len)
{
    buf[0] = '\0';
    const gm_jv_t *s = gm_jv_get(attrs, GM_ATTR_ALLOCATOR_SETTINGS);
    uint64_t u;
    int64_t i;
    if (gm_jv_type(s) == GM_JV_OBJECT) {
        for (size_t k = 0; k < gm_jv_len(s); k++) {
            const char *key = gm_jv_key_at(s, k);
            const gm_jv_t *v = gm_jv_at(s, k);
            if (strcmp(key, "PYTORCH_CUDA_ALLOC_CONF") == 0) {
                /* The settings below are what it set; only a backend
                 * choice is not among them. */
                const char *conf = gm_jv_str(v);
                if (conf && strstr(conf, "cudaMallocAsync"))
                    info_add(buf, len, "backend:cudaMallocAsync");
            } else if (strcmp(key, "max_split_size") == 0) {
                if (gm_jv_i64(v, &i) == 0 && i > 0 && (uint64_t)i < (UINT64_MAX >> 1))
                    info_add(buf, len, "max_split_size_mb:%" PRId64, (int64_t)(i >> 20));
            } else if (strcmp(key, "max_non_split_rounding_size") == 0) {
                if (gm_jv_u64(v, &u) == 0 && u != INFO_TORCH_NSR_DEFAULT && u > 0)
                    info_add(buf, len, "max_non_split_rounding_mb:%" PRIu64, u >> 20);
            } else if (strcmp(key, "garbage_collection_threshold") == 0) {
                if (gm_jv_num(v) != 0)
                    info_add(buf, len, "garbage_collection_threshold:%g", gm_jv_num(v));
            } else if (strcmp(key, "roundup_power2_divisions") == 0) {
                char r[256];
                info_roundup(v, r, sizeof r);
                if (r[0])
                    info_add(buf, len, "roundup_power2_divisions:%s", r);
            } else if (strcmp(key, "pinned_num_register_threads") == 0) {
                if (gm_jv_u64(v, &u) == 0 && u != 1)
                    info_add(buf, len, "pinned_num_register_threads:%" PRIu64, u);
            } else if (gm_jv_type(v) == GM_JV_BOOL) {
                /* expandable_segments, release_lock_on_cudamalloc,
                 * pinned_use_cuda_host_register, ...: false by default */
                if (gm_jv_bool(v))
                    info_add(buf, len, "%s:True", key);
            } else if (gm_jv_type(v) == GM_JV_NUMBER) {
                if (gm_jv_num(v) != 0)
                    info_add(buf, len, "%s:%g", key, gm_jv_num(v));
            } else if (gm_jv_type(v) == GM_JV_STRING) {
                if (gm_jv_str(v)[0])
                    info_add(buf, len, "%s:%s", key, gm_jv_str(v));
            }
        }
    } else if (gm_jv_bool(gm_jv_get(attrs, "expandable_segments"))) {
        info_add(buf, len, "expandable_segments:True");
    }
    if (gm_jv_u64(gm_jv_get(attrs, GM_ATTR_BLOCK_PAD), &u) == 0 && u != 0)
        info_add(buf, len, "block_pad:%" PRIu64, u);
    if (gm_jv_u64(gm_jv_get(attrs, GM_ATTR_BLOCK_ROUND), &u) == 0 && u != GM_TORCH_MIN_BLOCK)
        info_add(buf, len, "block_round:%" PRIu64, u);
}

/* An attribute as a table cell: an integer or a string as it is, a size
 * (size != 0) formatted, "-" when absent. */
static void info_attr_cell(gm__cli_table_t *t, const gm_jv_t *attrs, const char *key, int size)
{
    const gm_jv_t *v = gm_jv_get(attrs, key);
    uint64_t u;
    int64_t i;
    if (gm_jv_type(v) == GM_JV_STRING)
        gm__cli_table_cell(t, "%s", gm_jv_str(v));
    else if (size && gm_jv_u64(v, &u) == 0 && u > 0)
        gm__cli_table_cell(t, "%s", gm__cli_size(u));
    else if (!size && gm_jv_i64(v, &i) == 0)
        gm__cli_table_cell(t, "%" PRId64, i);
    else
        gm__cli_table_cell(t, "-");
}

static void info_table(const char *path, const gm_trace_info_t *list, size_t n)
{
    if (n == 0) {
        printf("no traces in '%s'\n", gm__cli_s(path));
        return;
    }
    gm__cli_table_t t;
    gm__cli_table_head(&t, "llrrrrrrrl", "trace", "source", "device", "capacity", "events", "load",
                       "seq_len", "batch", "recorded reserved",
                       "settings (not PyTorch's defaults)", NULL);
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const gm_trace_info_t *e = &list[i];
        gm_jv_t *attrs = NULL;
        gm_error_t err = {0};
        if (e->attrs == NULL || gm_json_parse(e->attrs, strlen(e->attrs), &attrs, &err) != 0)
            attrs = NULL; /* shown as "-" everywhere: --json has the text */
        gm__cli_table_cell(&t, "%s", e->name);
        info_attr_cell(&t, attrs, GM_ATTR_SOURCE, 0);
        info_attr_cell(&t, attrs, GM_ATTR_DEVICE, 0);
        info_attr_cell(&t, attrs, GM_ATTR_CAPACITY, 1);
        gm__cli_table_cell(&t, "%" PRIu64, e->events);
        gm__cli_table_cell(&t, "%s", gm__cli_size(e->load));
        info_attr_cell(&t, attrs, GM_ATTR_SEQ_LEN, 0);
        info_attr_cell(&t, attrs, GM_ATTR_BATCH, 0);
        uint64_t rec[INFO_NRECORDED];
        if (info_recorded(e, rec))
            gm__cli_table_cell(&t, "%s", gm__cli_size(rec[0]));
        else
            gm__cli_table_cell(&t, "-");
        char set[512];
        info_settings(attrs, set, sizeof set);
        gm__cli_table_cell(&t, "%s", set[0] ? set : "-");
        gm_jv_free(attrs);
        bytes += e->bytes;
    }
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
    printf("\n%zu trace%s, %s on disk; every count and attribute: gmsim info --json %s\n", n,
           n == 1 ? "" : "s", gm__cli_size(bytes), gm__cli_s(path));
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
