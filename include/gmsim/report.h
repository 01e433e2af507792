/*
 * gmsim/report.h — a report of stored runs: one self-contained HTML file
 * (inline CSS, inline SVG charts, one inline script for the table sort,
 * the hover values and the legend toggles; nothing fetched from anywhere)
 * or a Markdown summary (docs/report.md).
 *
 * Runs are read from the runs and timelines tables of every store given,
 * once per key (trace digest, policy, parameters, device, gmsim version);
 * trace names, attributes (seq_len, model) and stack frames come from the
 * traces of those stores with the same content digest, when present.
 * Every text taken from a store (names, attributes, frames) is escaped.
 */
#ifndef GMSIM_REPORT_H
#define GMSIM_REPORT_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdio.h>

#include "gmsim/error.h"

GM_API_BEGIN

typedef enum gm_report_format {
    GM_REPORT_HTML,
    GM_REPORT_MD,
} gm_report_format_t;

typedef struct gm_report_config {
    const char *const *stores; /* store paths, read only */
    size_t nstores;
    const char *trace_glob;    /* gm_trace_match on trace names; NULL: all */
    gm_report_format_t format;
    const char *title;         /* NULL: "gmsim report" */
    int no_sites;              /* 1: skip the allocation sites (traces are then read
                                  only for their marks, when they have any) */
    uint64_t embed_allocs;     /* allocations the active-memory views embed, over
                                  all traces; 0: 700,000 (docs/report.md) */
} gm_report_config_t;

typedef struct gm_report_stats {
    size_t traces;  /* trace sections written */
    size_t runs;    /* runs shown (after de-duplication) */
    size_t skipped; /* runs left out: unreadable metrics */
    size_t same_content; /* traces with the same events as one of another
                            name listed before: one section for both */
    char same_note[512]; /* the first: "'b' in 'y.db' has the same events
                            as 'a' in 'x.db'" ("" when none) */
} gm_report_stats_t;

/*
 * Write the report to out.  Errors opening or reading a store (GM_EIO,
 * GM_EFORMAT, GM_EDB, …, naming the file), GM_ENOTFOUND when the stores
 * hold no run (of a trace matching the glob), GM_EIO when writing to out
 * fails, GM_ENOMEM.  On failure out may hold part of a report: write to a
 * temporary file and rename it.  stats may be NULL.
 */
int gm_report_write(const gm_report_config_t *cfg, FILE *out, gm_report_stats_t *stats,
                    gm_error_t *err);

GM_API_END

#endif
