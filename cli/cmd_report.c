/*
 * cli/cmd_report.c — `gmsim report DB... [-o FILE] [--format html|md]
 * [--trace GLOB] [--title TEXT] [--no-sites]`: the report of the runs
 * stored in the stores (gm_report_write, docs/report.md).
 *
 * The report is written to a temporary file beside FILE and renamed over
 * it when complete, so FILE is never left half-written.  Without -o it goes
 * to stdout.  The format follows --format, else FILE's suffix (.md is
 * Markdown), else HTML.
 *
 * No runs in the stores given (`gmsim report S.db` after `gmsim sweep
 * S.db`): the sweep's default results store beside each, S.runs.db
 * (gm__cli_runs_path, the rule sweep uses), is read too where it exists,
 * with a note; where none does, a hint says where a sweep keeps its runs.
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
    "      --no-sites          leave out the allocation sites (no trace reads)\n"
    "  -h, --help              show this help\n";

/* Write the report of cfg to output (stdout when NULL): to a temporary
 * file beside it, renamed over it when complete.  Returns 0 or the GM_E*
 * code with err filled (nothing is left behind on failure). */
static int report_write(const gm_report_config_t *cfg, const char *output,
                        gm_report_stats_t *stats, gm_error_t *err)
{
    if (output == NULL)
        return gm_report_write(cfg, stdout, stats, err);
    size_t n = strlen(output);
    char *tmp = malloc(n + 16);
    if (tmp == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", output);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return gm_error_set(err, GM_EIO, "cannot write '%s': %s", output,
                            gm__cli_strerror(GM_EIO));
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
        return gm_error_set(err, GM_ENOMEM, "cannot write '%s': out of memory", output);
    }
    int rc = gm_report_write(cfg, f, stats, err);
    int closed = fclose(f);
    if (rc == 0 && closed != 0)
        rc = gm_error_set(err, GM_EIO, "cannot write '%s'", output);
    if (rc == 0 && rename(tmp, output) != 0)
        rc = gm_error_set(err, GM_EIO, "cannot write '%s'", output);
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

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
    rc = report_write(&cfg, output, &stats, &err);
    const char **more = NULL;
    if (rc == GM_ENOTFOUND) {
        /* No runs: `gmsim sweep S.db` keeps them in S.runs.db beside S.db.
         * Read those too where they exist and were not given. */
        more = calloc(2 * cfg.nstores + 1, sizeof *more);
        char **found = calloc(cfg.nstores + 1, sizeof *found);
        size_t nmore = 0, nfound = 0;
        if (more == NULL || found == NULL) {
            free(more);
            free(found);
            return gm__cli_error("out of memory");
        }
        for (size_t i = 0; i < cfg.nstores; i++)
            more[nmore++] = cfg.stores[i];
        for (size_t i = 0; i < cfg.nstores; i++) {
            char *runs = gm__cli_runs_path(cfg.stores[i]);
            int given = runs == NULL || access(runs, F_OK) != 0;
            for (size_t k = 0; !given && k < nmore; k++)
                given = gm__cli_same_file(more[k], runs);
            if (given) {
                free(runs);
                continue;
            }
            fprintf(stderr, "gmsim: no runs in '%s': reading the sweep results beside it, '%s'\n",
                    cfg.stores[i], runs);
            more[nmore++] = runs;
            found[nfound++] = runs;
        }
        if (nfound) {
            gm_report_config_t again = cfg;
            again.stores = more;
            again.nstores = nmore;
            memset(&err, 0, sizeof err);
            rc = report_write(&again, output, &stats, &err);
        }
        if (rc == GM_ENOTFOUND && nfound == 0) {
            char *runs = gm__cli_runs_path(cfg.stores[0]);
            gm__cli_error("%s", err.msg);
            fprintf(stderr, "hint: a sweep keeps its runs in its results store: '%s' for "
                            "'gmsim sweep %s', or the file given to its -o; report that one "
                            "(with the traces' store for their names)\n",
                    runs ? runs : "DB.runs.db", cfg.stores[0]);
            free(runs);
            free(found);
            free(more);
            return GM_CLI_ERROR;
        }
        for (size_t i = 0; i < nfound; i++)
            free(found[i]);
        free(found);
    }
    free(more);
    if (rc)
        return gm__cli_error("%s", err.msg);
    if (output) {
        printf("wrote '%s': %zu trace%s, %zu run%s\n", output, stats.traces,
               stats.traces == 1 ? "" : "s", stats.runs, stats.runs == 1 ? "" : "s");
        if (stats.skipped)
            fprintf(stderr, "gmsim: %zu run%s left out: unreadable metrics\n", stats.skipped,
                    stats.skipped == 1 ? "" : "s");
    }
    fflush(stdout); /* in order with the notes on stderr */
    if (stats.same_content)
        fprintf(stderr, "gmsim: note: %s: shown once, under the first name%s\n",
                stats.same_note,
                stats.same_content > 1 ? " (and more traces like it)" : "");
    return GM_CLI_OK;
}
