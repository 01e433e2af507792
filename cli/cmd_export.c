/*
 * cli/cmd_export.c — `gmsim export DB [--trace NAME] [--format FMT] [--runs]
 * [-o FILE]`.
 *
 * Export formats are a registry like the import ones (CMD_EXPORT_FORMATS):
 * each has a name, a one-line description and an exporter that writes one
 * stored trace to a FILE.  Output goes to stdout unless -o.  FILE is written
 * as every output is (cli/output.c): refused when it is the store, written
 * to a temporary file renamed over FILE once complete (a failed export
 * leaves FILE as it was), straight through to a FIFO or device.  --trace may be left out when the store holds
 * one trace.  --runs (perfetto only) adds the stored replay runs of the
 * trace as counter tracks.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "gmsim/formats.h"

static const char export_usage[] =
    "usage: gmsim export DB [--trace NAME] [--format FMT] [--runs] [-o FILE]\n"
    "\n"
    "Write a stored trace out in a text format.\n"
    "\n"
    "options:\n"
    "  -t, --trace NAME    the trace to export: its name, or a glob matching\n"
    "                      only it (may be left out when DB holds exactly\n"
    "                      one trace)\n"
    "  -f, --format FMT    the output format: csv (the default) or perfetto\n"
    "      --runs          perfetto: add the trace's stored replay runs, one\n"
    "                      counter track (requested, allocated, reserved) each\n"
    "  -o, --output FILE   write to FILE instead of standard output: whole or\n"
    "                      not at all (a temporary file renamed over FILE),\n"
    "                      never over DB\n"
    "  -h, --help          show this help\n"
    "\n"
    "formats (docs/formats.md):\n"
    "  csv       ts_ns,op,id,size,stream,device rows (gmsim import reads them)\n"
    "  perfetto  Chrome trace-event JSON for ui.perfetto.dev and chrome://tracing:\n"
    "            the requested-bytes counter and the marks\n";

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

/* X(name, takes_runs, exporter) */
#define CMD_EXPORT_FORMATS(X) \
    X(csv, 0, export_csv)     \
    X(perfetto, 1, gm_perfetto_export)

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
    enum { OPT_RUNS = 256 };
    static const struct option longopts[] = {
        {"trace", required_argument, NULL, 't'},  {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'}, {"runs", no_argument, NULL, OPT_RUNS},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *trace = NULL, *format = "csv", *output = NULL;
    unsigned flags = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't': trace = optarg; break;
        case 'f': format = optarg; break;
        case 'o': output = optarg; break;
        case OPT_RUNS: flags |= GM_PERFETTO_RUNS; break;
        case 'h': return gm__cli_help(export_usage);
        default: return gm__cli_option_error(export_usage, argv, c);
        }
    }
    if (optind >= argc)
        return gm__cli_usage_error(export_usage, "missing the store to read (DB)");
    if (argc - optind > 1)
        return gm__cli_usage_error(export_usage, "too many arguments: '%s'", argv[optind + 1]);
    const export_format_t *fmt = export_find(format);
    if (fmt == NULL)
        return gm__cli_usage_error(export_usage, "unknown format '%s' (known: csv, perfetto)",
                                   format);
    if ((flags & GM_PERFETTO_RUNS) && !fmt->takes_runs)
        return gm__cli_usage_error(export_usage, "--runs needs --format perfetto");
    if (output != NULL && strcmp(output, "-") == 0)
        output = NULL;

    /* Checked before the store is opened: nothing of the input is touched. */
    const char *db = argv[optind];
    int rc = gm__cli_check_output(export_usage, output, &db, 1);
    if (rc)
        return rc;
    gm_store_t *s;
    if ((rc = gm__cli_open_store(db, GM_STORE_READONLY, &s)))
        return rc;
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
    return rc;
}
