/*
 * cli/cmd_export.c — `gmsim export DB [--trace NAME] [--format FMT] [--runs]
 * [-o FILE]`.
 *
 * Export formats are a registry like the import ones (CMD_EXPORT_FORMATS):
 * each has a name, a one-line description and an exporter that writes one
 * stored trace to a FILE.  Output goes to stdout unless -o.  FILE is written
 * as every output is (cli/output.c): refused when it is the store, written
 * to a temporary file renamed over FILE once complete (a failed export
 * leaves FILE as it was), straight through to a FIFO or device.  --trace
 * may be left out when the store holds one trace.  --runs (perfetto only) adds the stored replay runs of the
 * trace as counter tracks.  placement plans the trace with the offline
 * policy (--param offline.KEY=VALUE) and writes the plan
 * (gm_placement_export); its status goes to stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "gmsim/formats.h"
#include "gmsim/replay.h"

static const char export_usage[] =
    "usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]\n"
    "                   [--param offline.KEY=VALUE]... [-o FILE]\n"
    "\n"
    "Write a stored trace out in a text format.\n"
    "\n"
    "options:\n"
    "  -t, --trace NAME    the trace to export: its name, or a glob matching\n"
    "                      only it (may be left out when DB holds exactly\n"
    "                      one trace)\n"
    "  -f, --format FMT    the output format: csv (the default), perfetto or\n"
    "                      placement\n"
    "      --runs          perfetto: add the trace's stored replay runs, one\n"
    "                      counter track (requested, allocated, reserved) each\n"
    "  -P, --param offline.KEY=VALUE\n"
    "                      placement: a parameter of the planner (gmsim\n"
    "                      policies); may be repeated\n"
    "  -o, --output FILE   write to FILE instead of standard output: whole or\n"
    "                      not at all (a temporary file renamed over FILE),\n"
    "                      never over DB\n"
    "  -h, --help          show this help\n"
    "\n"
    "formats (docs/formats.md):\n"
    "  csv       ts_ns,op,id,size,stream,device rows (gmsim import reads them)\n"
    "  perfetto  Chrome trace-event JSON for ui.perfetto.dev and chrome://tracing:\n"
    "            the requested-bytes counter and the marks\n"
    "  placement id,lower,upper,size,offset rows: the offline planner's plan\n"
    "            (minimalloc's columns plus each allocation's offset); the\n"
    "            plan's status (optimal, feasible, greedy) goes to stderr\n";

/* Write trace `name` of s to out; flags are GM_PERFETTO_* bits. */
typedef int (*export_fn)(gm_store_t *s, const char *name, unsigned flags, FILE *out,
                         gm_error_t *err);

static int export_csv(gm_store_t *s, const char *name, unsigned flags, FILE *out,
                      gm_error_t *err)
{
    (void)flags;
    gm_reader_t *r;
    int rc = gm_reader_open(s, name, &r, err);
    if (rc)
        return rc;
    rc = gm_csv_export(r, out, err);
    gm_reader_close(r);
    return rc;
}

/* The offline planner's params for placement (set by gm__cmd_export). */
static gm_params_t *export_plan_params;

static int export_placement(gm_store_t *s, const char *name, unsigned flags, FILE *out,
                            gm_error_t *err)
{
    (void)flags;
    gm_plan_info_t pi;
    int rc = gm_placement_export(s, name, export_plan_params, out, &pi, err);
    if (rc == 0) {
        fprintf(stderr, "plan of '%s': %s, %" PRIu64 " bytes, lower bound %" PRIu64, name,
                gm_plan_status_name(pi.status), pi.peak, pi.lower_bound);
        if (pi.capacity)
            fprintf(stderr, ", capacity %" PRIu64 " %s", pi.capacity,
                    pi.peak <= pi.capacity ? "met" : "not met");
        fprintf(stderr, "\n");
    }
    return rc;
}

/* X(name, takes_runs, exporter) */
#define CMD_EXPORT_FORMATS(X) \
    X(csv, 0, export_csv)     \
    X(perfetto, 1, gm_perfetto_export) \
    X(placement, 0, export_placement)

typedef struct export_format {
    const char *name;
    int takes_runs;
    export_fn run;
} export_format_t;

static const export_format_t export_formats[] = {
#define EXPORT_ENTRY(name, runs, fn) {#name, runs, fn},
    CMD_EXPORT_FORMATS(EXPORT_ENTRY)
#undef EXPORT_ENTRY
};

static const export_format_t *export_find(const char *name)
{
    for (size_t i = 0; i < sizeof export_formats / sizeof export_formats[0]; i++)
        if (strcmp(export_formats[i].name, name) == 0)
            return &export_formats[i];
    return NULL;
}

int gm__cmd_export(int argc, char **argv)
{
    gm__cli_args_t sets = {.n = 0}; /* --param */
    const char *trace = NULL, *format = "csv", *output = NULL;
    unsigned flags = 0;
    int rc;
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("trace", 't', GM__CLI_STR, &trace),
        GM__CLI_OPT("format", 'f', GM__CLI_STR, &format),
        GM__CLI_OPT("output", 'o', GM__CLI_STR, &output),
        GM__CLI_OPT("runs", 0, GM__CLI_BITS, &flags, .bits = GM_PERFETTO_RUNS),
        GM__CLI_OPT("param", 'P', GM__CLI_ARGS, &sets),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, export_usage, argc, argv, &rc))
        return rc;
    if (optind >= argc)
        return gm__cli_usage_error(export_usage, "missing the store to read (DB)");
    if (argc - optind > 1)
        return gm__cli_usage_error(export_usage, "too many arguments: '%s'", argv[optind + 1]);
    const export_format_t *fmt = export_find(format);
    if (fmt == NULL)
        return gm__cli_usage_error(export_usage,
                                   "unknown format '%s' (known: csv, perfetto, placement)",
                                   format);
    if ((flags & GM_PERFETTO_RUNS) && !fmt->takes_runs)
        return gm__cli_usage_error(export_usage, "--runs needs --format perfetto");
    if (sets.n > 0 && fmt->run != export_placement)
        return gm__cli_usage_error(export_usage, "--param needs --format placement");
    gm_params_t plan;
    gm_error_t perr = {0};
    if (fmt->run == export_placement) {
        if (gm_params_init(&plan, gm_policy_find("offline"), &perr) != 0)
            return gm__cli_error("%s", perr.msg);
        for (size_t i = 0; i < sets.n; i++) {
            const char *eq = strchr(sets.v[i], '=');
            if (strncmp(sets.v[i], "offline.", 8) != 0 || eq == NULL) {
                gm_params_release(&plan);
                return gm__cli_usage_error(export_usage,
                                           "invalid --param '%s' (expected offline.KEY=VALUE)",
                                           sets.v[i]);
            }
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(eq - sets.v[i] - 8), sets.v[i] + 8);
            if (gm_params_set(&plan, key, eq + 1, &perr) != 0) {
                gm_params_release(&plan);
                return gm__cli_usage_error(export_usage, "%s", perr.msg);
            }
        }
        export_plan_params = &plan;
    }
    if (output != NULL && strcmp(output, "-") == 0)
        output = NULL;

    /* Checked before the store is opened: nothing of the input is touched. */
    const char *db = argv[optind];
    rc = gm__cli_check_output(export_usage, output, &db, 1);
    gm_store_t *s = NULL;
    if (rc == 0)
        rc = gm__cli_open_store(db, GM_STORE_READONLY, &s);
    if (rc) {
        if (export_plan_params)
            gm_params_release(export_plan_params);
        export_plan_params = NULL;
        return rc;
    }
    char *name = NULL;
    gm_error_t err = {0};
    gm__cli_out_t out;
    if ((rc = gm__cli_pick_trace(s, export_usage, trace, &name)))
        goto done;
    if ((rc = gm__cli_out_open(&out, export_usage, output, &db, 1)))
        goto done;
    errno = 0;
    if (fmt->run(s, name, flags, out.f, &err) != 0) {
        int e = errno;
        if (err.code != GM_EIO)
            rc = gm__cli_error("%s", err.msg);
        else
            rc = e ? gm__cli_out_error(&out, e) : gm__cli_error("%s", err.msg);
    }
    rc = gm__cli_out_close(&out, rc);
done:
    gm_store_close(s);
    free(name);
    if (export_plan_params)
        gm_params_release(export_plan_params);
    export_plan_params = NULL;
    return rc;
}
