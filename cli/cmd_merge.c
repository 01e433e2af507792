/*
 * cli/cmd_merge.c — `gmsim merge OUT IN... [--allow-partial] [--json]`:
 * copy the runs (and their timelines) of each IN into OUT, skipping runs
 * OUT already holds by key (trace digest, policy, parameters, device, gmsim
 * version), so shards of a sweep, or the same results merged twice, give
 * one copy of each run.
 *
 * A merge of sweep shards must not pass a part of a sweep off as the
 * whole: every IN's shard records (and OUT's, when it exists: merging in
 * steps is fine) are checked first (gm_shards_check) and a sweep with a
 * shard missing or incomplete is refused, naming the shards, before OUT
 * is touched; --allow-partial merges what there is (also skipping an IN
 * that does not exist) and says what is missing.  Each IN is copied in
 * one transaction: a failure leaves OUT with the inputs before it.  OUT
 * is created if missing; an IN that is OUT itself is refused.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "gmsim/sweep.h"

static const char merge_usage[] =
    "usage: gmsim merge OUT IN... [--allow-partial] [--json]\n"
    "\n"
    "Copy the runs of the stores IN (sweep results, shards) into the store OUT\n"
    "(created if missing), each run once: runs OUT already holds, with the same\n"
    "trace content, policy, parameters, device and gmsim version, are skipped.\n"
    "A sweep whose shards are not all there and complete is refused, naming\n"
    "them, and nothing is written.\n"
    "\n"
    "options:\n"
    "      --allow-partial merge an incomplete sweep anyway (and skip an IN that\n"
    "                      does not exist), saying what is missing\n"
    "      --json          print what was copied as JSON\n"
    "  -h, --help          show this help\n";

/* Append the shard records of the store at path to *all. */
static int merge_gather(const char *path, gm_shard_record_t **all, size_t *n)
{
    gm_store_t *s;
    int rc = gm__cli_open_store(path, GM_STORE_READONLY, &s);
    if (rc)
        return rc;
    gm_shard_record_t *r;
    size_t k;
    gm_error_t err = {0};
    if (gm_store_list_shards(s, &r, &k, &err) != 0) {
        gm_store_close(s);
        return gm__cli_error("%s", err.msg);
    }
    gm_store_close(s);
    gm_shard_record_t *grown = realloc(*all, (*n + k + 1) * sizeof *grown);
    if (grown == NULL) {
        free(r);
        return gm__cli_error("out of memory");
    }
    if (k)
        memcpy(grown + *n, r, k * sizeof *r);
    *all = grown;
    *n += k;
    free(r);
    return GM_CLI_OK;
}

int gm__cmd_merge(int argc, char **argv)
{
    int json = 0, partial = 0, status;
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("json", 0, GM__CLI_FLAG, &json),
        GM__CLI_OPT("allow-partial", 0, GM__CLI_FLAG, &partial),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, merge_usage, argc, argv, &status))
        return status;
    int args = optind;
    if (argc - args < 2)
        return gm__cli_usage_error(merge_usage, argc - args < 1 ? "missing OUT and IN"
                                                                 : "missing IN (the stores to merge)");
    const char *out = argv[args];
    int same = gm__cli_check_output(merge_usage, out, (const char *const *)argv + args + 1,
                                    (size_t)(argc - args - 1));
    if (same)
        return same;

    /* Check the sweeps before anything is written. */
    gm_shard_record_t *records = NULL;
    size_t nrecords = 0;
    int rc = GM_CLI_OK;
    char *skip = calloc((size_t)argc, 1);
    if (skip == NULL)
        return gm__cli_error("out of memory");
    for (int i = args + 1; rc == GM_CLI_OK && i < argc; i++) {
        if (access(argv[i], F_OK) != 0) {
            if (!partial) {
                rc = gm__cli_error("'%s' does not exist (a shard that has not run? "
                                   "--allow-partial merges the others)",
                                   argv[i]);
                break;
            }
            fprintf(stderr, "gmsim: '%s' does not exist: left out\n", gm__cli_s(argv[i]));
            skip[i] = 1;
            continue;
        }
        rc = merge_gather(argv[i], &records, &nrecords);
    }
    if (rc == GM_CLI_OK && access(out, F_OK) == 0)
        rc = merge_gather(out, &records, &nrecords);
    char partial_msg[GM_ERROR_MSG_MAX] = "";
    if (rc == GM_CLI_OK) {
        gm_error_t err = {0};
        int crc = gm_shards_check(records, nrecords, &err);
        if (crc == GM_EINCOMPLETE && !partial)
            rc = gm__cli_error("cannot merge an incomplete sweep: %s (rerun those shards and "
                               "merge them too, or pass --allow-partial)",
                               err.msg);
        else if (crc == GM_EINCOMPLETE) {
            fprintf(stderr, "gmsim: merging an incomplete sweep: %s\n", gm__cli_s(err.msg));
            snprintf(partial_msg, sizeof partial_msg, "%s", err.msg);
        } else if (crc != 0)
            rc = gm__cli_error("%s", err.msg);
    }
    free(records);
    if (rc) {
        free(skip);
        return rc;
    }

    gm_store_t *dst;
    if ((rc = gm__cli_open_store(out, GM_STORE_WRITE, &dst))) {
        free(skip);
        return rc;
    }
    gm_json_t j;
    if (json) {
        gm_json_init(&j, stdout, 1);
        gm_json_begin_object(&j);
        gm_json_kv_str(&j, "store", out);
        gm_json_key(&j, "inputs");
        gm_json_begin_array(&j);
    }
    size_t total = 0;
    for (int i = args + 1; rc == GM_CLI_OK && i < argc; i++) {
        if (skip[i])
            continue;
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
            gm_json_kv_str(&j, "store", argv[i]);
            gm_json_kv_u64(&j, "copied", copied);
            gm_json_kv_u64(&j, "skipped", skipped);
            gm_json_end_object(&j);
        } else {
            printf("merged '%s' into '%s': %zu run%s copied, %zu already there\n",
                   gm__cli_s(argv[i]), gm__cli_s(out),
                   copied, copied == 1 ? "" : "s", skipped);
        }
    }
    if (json) {
        gm_json_end_array(&j);
        gm_json_kv_u64(&j, "copied", total);
        gm_json_kv_str(&j, "incomplete", partial_msg[0] ? partial_msg : NULL);
        gm_json_end_object(&j);
        if (rc == GM_CLI_OK)
            gm_json_finish(&j);
        else
            putchar('\n');
    }
    gm_store_close(dst);
    free(skip);
    return rc;
}
