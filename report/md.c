/*
 * report/md.c — the report's summary as Markdown (gmsim report --format md):
 * the summary table and the recommendation lines of the HTML summary
 * (gm_torch_advise; left out with --no-sites, as there).
 */
#include <inttypes.h>

#include "report/report.h"

int report_md(report_t *R)
{
    FILE *f = R->f;
    fputs("## ", f);
    report_md_esc(f, R->cfg->title ? R->cfg->title : "gmsim report");
    fprintf(f, "\n\n%zu trace%s, %zu run%s.  Winner: the allocator with the least peak "
               "reserved and no OOM (native, a device call per request, is a reference, not a "
               "contender); saving against PyTorch's caching allocator with default "
               "settings.\n\n",
            R->ngroups, R->ngroups == 1 ? "" : "s", R->nruns, R->nruns == 1 ? "" : "s");
    fputs("| trace | seq_len | load | winner | peak reserved | above load | baseline | saving | "
          "offline bound |\n|---|--:|--:|---|--:|--:|--:|--:|--:|\n",
          f);
    for (size_t g = 0; g < R->ngroups; g++) {
        const report_group_t *gr = &R->groups[g];
        char b[32];
        fputs("| ", f);
        report_summary_trace(R, gr, 1);
        fputs(" | ", f);
        if (gr->seq_len >= 0)
            fprintf(f, "%" PRId64, gr->seq_len);
        fprintf(f, " | %s | ", report_size(gr->load, b, sizeof b));
        if (gr->winner >= 0) {
            const report_run_t *w = &R->runs[gr->winner];
            report_md_esc(f, w->cut);
            fprintf(f, " | %s | %+.1f%% | ", report_size(w->m.peak_reserved, b, sizeof b),
                    w->m.overhead * 100);
        } else {
            fputs("- | | | ", f);
        }
        if (gr->baseline >= 0 && gr->winner >= 0) {
            const report_run_t *bl = &R->runs[gr->baseline], *w = &R->runs[gr->winner];
            double save = report_saving(bl, w);
            fprintf(f, "%s | %.1f%% | ", report_size(bl->m.peak_reserved, b, sizeof b),
                    save * 100);
        } else {
            fputs("no run | | ", f);
        }
        if (gr->bound >= 0)
            fprintf(f, "%s |\n", report_size(R->runs[gr->bound].m.peak_reserved, b, sizeof b));
        else
            fputs("not run |\n", f);
    }
    /* The recommendation lines of the HTML summary. */
    int first = 1;
    for (size_t g = 0; g < R->ngroups && !R->cfg->no_sites; g++) {
        const report_group_t *gr = &R->groups[g];
        char text[768];
        if (!report_group_advice(R, gr, text, sizeof text))
            continue;
        fputs(first ? "\n" : "", f);
        first = 0;
        fputs("- **recommendation** for ", f);
        report_md_esc(f, gr->name);
        fputs(": ", f);
        report_md_esc(f, text);
        fputc('\n', f);
    }
    return 0;
}
