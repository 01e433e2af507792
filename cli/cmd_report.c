/*
 * cli/cmd_report.c — `gmsim report DB... [-o FILE] [--format html|md]
 * [--trace GLOB] [--title TEXT] [--no-sites]`: the report of the runs
 * stored in the stores (gm_report_write, docs/report.md).
 *
 * FILE is written as every output is (cli/output.c): refused when it is
 * one of the stores, written to a temporary file beside it and renamed over
 * it once complete and synced (never left half-written), straight through
 * to a FIFO or device, through a symlink to its target.  Without -o it
 * goes to stdout.  The format follows --format, else FILE's suffix (.md is
 * Markdown), else HTML.
 *
 * No runs in the stores given (`gmsim report S.db` after `gmsim sweep
 * S.db`): the sweep's default results store beside each, S.runs.db
 * (gm__cli_runs_path, the rule sweep uses), is read too where it exists,
 * with a note; where none does, a hint says where a sweep keeps its runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "gmsim/report.h"

static const char report_usage[] =
    "usage: gmsim report DB... [-o FILE] [--format html|md] [--trace GLOB]\n"
    "                    [--title TEXT] [--no-sites] [--embed-allocs N]\n"
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
    "  -o, --output FILE       write to FILE (default stdout): whole or not at\n"
    "                          all, never over one of the DBs\n"
    "  -f, --format html|md    HTML (default; .md files: Markdown), or the\n"
    "                          summary as Markdown\n"
    "  -t, --trace GLOB        only traces whose name matches GLOB\n"
    "      --title TEXT        the report's title (default 'gmsim report')\n"
    "      --no-sites          leave out the allocation sites (traces read only for marks)\n"
    "      --embed-allocs N    allocations the active-memory views embed, over all\n"
    "                          traces (default 700000, about 12 bytes each); a trace\n"
    "                          past what is left shows its first ones\n"
    "  -h, --help              show this help\n";

/* Whether a and b name one file (links followed); 0 where either is missing. */
static int report_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int gm__cmd_report(int argc, char **argv)
{
    gm_report_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    const char *output = NULL, *format = NULL;
    int rc = GM_CLI_OK;
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("output", 'o', GM__CLI_STR, &output),
        GM__CLI_OPT("format", 'f', GM__CLI_STR, &format),
        GM__CLI_OPT("trace", 't', GM__CLI_STR, &cfg.trace_glob),
        GM__CLI_OPT("title", 0, GM__CLI_STR, &cfg.title),
        GM__CLI_OPT("no-sites", 0, GM__CLI_FLAG, &cfg.no_sites),
        GM__CLI_OPT("embed-allocs", 0, GM__CLI_COUNT, &cfg.embed_allocs, .lo = 1,
                    .hi = UINT64_C(100000000)),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, report_usage, argc, argv, &rc))
        return rc;
    if (optind >= argc)
        return gm__cli_usage_error(report_usage, "missing the store to read (DB)");
    if (format == NULL) {
        size_t n = output ? strlen(output) : 0;
        format = n > 3 && strcmp(output + n - 3, ".md") == 0 ? "md" : "html";
    }
    static const char *const formats[] = {"html", "md", "markdown", NULL};
    size_t f = 0;
    int frc = gm__cli_choice_arg(report_usage, "--format", format, formats, "html or md", &f);
    if (frc != GM_CLI_OK)
        return frc;
    cfg.format = f == 0 ? GM_REPORT_HTML : GM_REPORT_MD;
    cfg.stores = (const char *const *)argv + optind;
    cfg.nstores = (size_t)(argc - optind);
    for (size_t i = 0; i < cfg.nstores; i++)
        if (access(cfg.stores[i], F_OK) != 0)
            return gm__cli_error("cannot open '%s': no such file", cfg.stores[i]);
    if (output && strcmp(output, "-") == 0)
        output = NULL;

    /* `gmsim report S.db` after `gmsim sweep S.db`: the sweep keeps its runs
     * in S.runs.db beside S.db.  Those that exist and were not given are
     * read too when the stores given hold no runs; the output is checked
     * against them as against every input. */
    const char **all = calloc(2 * cfg.nstores + 1, sizeof *all);
    char **beside = calloc(cfg.nstores + 1, sizeof *beside);
    size_t nall = 0, nbeside = 0;
    if (all == NULL || beside == NULL) {
        free(all);
        free(beside);
        return gm__cli_error("out of memory");
    }
    for (size_t i = 0; i < cfg.nstores; i++)
        all[nall++] = cfg.stores[i];
    for (size_t i = 0; i < cfg.nstores; i++) {
        char *runs = gm__cli_runs_path(cfg.stores[i]);
        int skip = runs == NULL || access(runs, F_OK) != 0;
        for (size_t k = 0; !skip && k < nall; k++)
            skip = report_same_file(all[k], runs);
        if (skip) {
            free(runs);
            continue;
        }
        all[nall++] = runs;
        beside[nbeside++] = runs;
    }

    gm_error_t err = {0};
    gm_report_stats_t stats;
    gm__cli_out_t out;
    if ((rc = gm__cli_out_open(&out, report_usage, output, all, nall)))
        goto done;
    errno = 0;
    int wrc = gm_report_write(&cfg, out.f, &stats, &err);
    if (wrc == GM_ENOTFOUND && nbeside) {
        /* Nothing was written: the report starts once it has runs. */
        for (size_t i = 0; i < nbeside; i++)
            fprintf(stderr, "gmsim: no runs in '%s': reading the sweep results beside it, '%s'\n",
                    gm__cli_s(cfg.stores[i < cfg.nstores ? i : 0]), gm__cli_s(beside[i]));
        gm_report_config_t again = cfg;
        again.stores = all;
        again.nstores = nall;
        memset(&err, 0, sizeof err);
        errno = 0;
        wrc = gm_report_write(&again, out.f, &stats, &err);
    }
    if (wrc) {
        int e = errno;
        rc = err.code == GM_EIO && e ? gm__cli_out_error(&out, e) : gm__cli_error("%s", err.msg);
        if (wrc == GM_ENOTFOUND && nbeside == 0) {
            char *runs = gm__cli_runs_path(cfg.stores[0]);
            fprintf(stderr, "hint: a sweep keeps its runs in its results store: '%s' for "
                            "'gmsim sweep %s', or the file given to its -o; report that one "
                            "(with the traces' store for their names)\n",
                    runs ? gm__cli_s(runs) : "DB.runs.db", gm__cli_s(cfg.stores[0]));
            free(runs);
        }
    }
    if ((rc = gm__cli_out_close(&out, rc)))
        goto done;
    if (output) {
        printf("wrote '%s': %zu trace%s, %zu run%s\n", gm__cli_s(output), stats.traces,
               stats.traces == 1 ? "" : "s", stats.runs, stats.runs == 1 ? "" : "s");
        if (stats.skipped)
            fprintf(stderr, "gmsim: %zu run%s left out: unreadable metrics\n", stats.skipped,
                    stats.skipped == 1 ? "" : "s");
    }
    fflush(stdout); /* in order with the notes on stderr */
    if (stats.same_content)
        fprintf(stderr, "gmsim: note: %s: shown once, under the first name%s\n",
                gm__cli_s(stats.same_note),
                stats.same_content > 1 ? " (and more traces like it)" : "");
done:
    for (size_t i = 0; i < nbeside; i++)
        free(beside[i]);
    free(beside);
    free(all);
    return rc;
}
