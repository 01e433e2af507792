/*
 * cli/cmd_merge.c — `gmsim merge OUT.db IN.db... [--json]`: copy the runs
 * (and their timelines) of each IN into OUT, skipping runs OUT already
 * holds by key (trace digest, policy, parameters, device, gmsim version),
 * so shards of a sweep, or the same results merged twice, give one copy of
 * each run.  Each IN is copied in one transaction: a failure leaves OUT
 * with the inputs before it.  OUT is created if missing; an IN that is
 * OUT itself is refused.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char merge_usage[] =
    "usage: gmsim merge OUT IN... [--json]\n"
    "\n"
    "Copy the runs of the stores IN (sweep results, shards) into the store OUT\n"
    "(created if missing), each run once: runs OUT already holds, with the same\n"
    "trace content, policy, parameters, device and gmsim version, are skipped.\n"
    "\n"
    "options:\n"
    "      --json          print what was copied as JSON\n"
    "  -h, --help          show this help\n";

static int merge_same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (realpath(a, ra) == NULL || realpath(b, rb) == NULL)
        return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0;
}

int gm__cmd_merge(int argc, char **argv)
{
    int json, args, status;
    if (gm__cli_json_only(argc, argv, merge_usage, &json, &args, &status) != GM_CLI_OK)
        return status;
    if (argc - args < 2)
        return gm__cli_usage_error(merge_usage, argc - args < 1 ? "missing OUT and IN"
                                                                 : "missing IN (the stores to merge)");
    const char *out = argv[args];
    for (int i = args + 1; i < argc; i++)
        if (merge_same_file(out, argv[i]))
            return gm__cli_usage_error(merge_usage, "'%s' is both OUT and IN", argv[i]);
    gm_store_t *dst;
    int rc = gm__cli_open_store(out, GM_STORE_WRITE, &dst);
    if (rc)
        return rc;
    gm_json_t j;
    if (json) {
        gm_json_init(&j, stdout, 1);
        gm_json_begin_object(&j);
        gm_json_key(&j, "store");
        gm_json_str(&j, out);
        gm_json_key(&j, "inputs");
        gm_json_begin_array(&j);
    }
    size_t total = 0;
    for (int i = args + 1; rc == GM_CLI_OK && i < argc; i++) {
        gm_store_t *src;
        if ((rc = gm__cli_open_store(argv[i], GM_STORE_READONLY, &src)))
            break;
        size_t copied = 0, skipped = 0;
        gm_error_t err = {0};
        if (gm_store_copy_runs(dst, src, &copied, &skipped, &err) != 0)
            rc = gm__cli_error("%s", err.msg);
        gm_store_close(src);
        if (rc)
            break;
        total += copied;
        if (json) {
            gm_json_begin_object(&j);
            gm_json_key(&j, "store");
            gm_json_str(&j, argv[i]);
            gm_json_key(&j, "copied");
            gm_json_u64(&j, copied);
            gm_json_key(&j, "skipped");
            gm_json_u64(&j, skipped);
            gm_json_end_object(&j);
        } else {
            printf("merged '%s' into '%s': %zu run%s copied, %zu already there\n", argv[i], out,
                   copied, copied == 1 ? "" : "s", skipped);
        }
    }
    if (json) {
        gm_json_end_array(&j);
        gm_json_key(&j, "copied");
        gm_json_u64(&j, total);
        gm_json_end_object(&j);
        if (rc == GM_CLI_OK)
            gm_json_finish(&j);
        else
            putchar('\n');
    }
    gm_store_close(dst);
    return rc;
}
