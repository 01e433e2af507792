/*
 * cli/cmd_report.c — `gmsim report DB... [-o FILE] [--format html|md]
 * [--trace GLOB] [--title TEXT] [--no-sites]`: the report of the runs
 * stored in the stores (gm_report_write, docs/report.md).
 *
 * The report is written to a temporary file beside FILE and renamed over
 * it when complete, so FILE is never left half-written.  Without -o it goes
 * to stdout.  The format follows --format, else FILE's suffix (.md is
 * Markdown), else HTML.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gmsim/report.h"

static const char report_usage[] =
    "usage: gmsim report DB... [-o FILE] [--format html|md] [--trace GLOB]\n"
    "                    [--title TEXT] [--no-sites]\n"
    "\n"
    "Write a report of the runs stored in the stores (by 'gmsim sweep' or\n"
    "'gmsim replay --save'): the winner per trace and its saving against\n"
    "PyTorch's caching allocator, memory over time, peak reserved against\n"
    "load, fragmentation and peak against seq_len, the waste at the peak, the\n"
    "top allocation sites, and every metric in a sortable table.  Give the\n"
    "stores holding the traces too, for their names, seq_len and frames.\n"
    "HTML reports are one file that needs nothing else (docs/report.md).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE       write to FILE (default stdout)\n"
    "  -f, --format html|md    HTML (default; .md files: Markdown), or the\n"
    "                          summary as Markdown\n"
    "  -t, --trace GLOB        only traces whose name matches GLOB\n"
    "      --title TEXT        the report's title (default 'gmsim report')\n"
    "      --no-sites          leave out the allocation sites (traces read only for marks)\n"
    "  -h, --help              show this help\n";

int gm__cmd_report(int argc, char **argv)
{
    enum { OPT_TITLE = 256, OPT_NO_SITES };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {"trace", required_argument, NULL, 't'},
        {"title", required_argument, NULL, OPT_TITLE},
        {"no-sites", no_argument, NULL, OPT_NO_SITES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gm_report_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    const char *output = NULL, *format = NULL;
    int c, rc = GM_CLI_OK;
    opterr = 0;
    while (rc == GM_CLI_OK && (c = getopt_long(argc, argv, ":o:f:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'f': format = optarg; break;
        case 't': cfg.trace_glob = optarg; break;
        case OPT_TITLE: cfg.title = optarg; break;
        case OPT_NO_SITES: cfg.no_sites = 1; break;
        case 'h': return gm__cli_help(report_usage);
        default: rc = gm__cli_option_error(report_usage, argv, c); break;
        }
    }
    if (rc)
        return rc;
    if (optind >= argc)
        return gm__cli_usage_error(report_usage, "missing the store to read (DB)");
    if (format == NULL) {
        size_t n = output ? strlen(output) : 0;
        format = n > 3 && strcmp(output + n - 3, ".md") == 0 ? "md" : "html";
    }
    if (strcmp(format, "html") == 0)
        cfg.format = GM_REPORT_HTML;
    else if (strcmp(format, "md") == 0 || strcmp(format, "markdown") == 0)
        cfg.format = GM_REPORT_MD;
    else
        return gm__cli_usage_error(report_usage, "invalid value for --format: '%s' (html or md)",
                                   format);
    cfg.stores = (const char *const *)argv + optind;
    cfg.nstores = (size_t)(argc - optind);
    for (size_t i = 0; i < cfg.nstores; i++)
        if (access(cfg.stores[i], F_OK) != 0)
            return gm__cli_error("cannot open '%s': no such file", cfg.stores[i]);
    if (output && strcmp(output, "-") == 0)
        output = NULL;

    gm_error_t err = {0};
    gm_report_stats_t stats;
    if (output == NULL) {
        if (gm_report_write(&cfg, stdout, &stats, &err) != 0)
            return gm__cli_error("%s", err.msg);
        return GM_CLI_OK;
    }
    size_t n = strlen(output);
    char *tmp = malloc(n + 16);
    if (tmp == NULL)
        return gm__cli_error("out of memory");
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", output);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        rc = gm__cli_error("cannot write '%s': %s", output, gm__cli_strerror(GM_EIO));
        free(tmp);
        return rc;
    }
    /* mkstemp makes 0600; a report is as readable as any file written. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return gm__cli_error("cannot write '%s': out of memory", output);
    }
    rc = gm_report_write(&cfg, f, &stats, &err);
    int closed = fclose(f);
    if (rc == 0 && closed != 0)
        rc = gm_error_set(&err, GM_EIO, "cannot write '%s'", output);
    if (rc == 0 && rename(tmp, output) != 0)
        rc = gm_error_set(&err, GM_EIO, "cannot write '%s'", output);
    if (rc) {
        unlink(tmp);
        free(tmp);
        return gm__cli_error("%s", err.msg);
    }
    free(tmp);
    printf("wrote '%s': %zu trace%s, %zu run%s\n", output, stats.traces,
           stats.traces == 1 ? "" : "s", stats.runs, stats.runs == 1 ? "" : "s");
    if (stats.skipped)
        fprintf(stderr, "gmsim: %zu run%s left out: unreadable metrics\n", stats.skipped,
                stats.skipped == 1 ? "" : "s");
    return GM_CLI_OK;
}
