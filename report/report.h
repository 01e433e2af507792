/*
 * report/report.h — the report's internals, shared by its files: the stores,
 * runs and groups it loads (report/load.c) and the functions each file gives
 * the others (report/report.c: escaping, the views' JSON strings and colours; svg.c: the charts;
 * active.c and space.c: the data of the active-memory and address-space
 * views; html.c and md.c: the two outputs).  Each function's comment is at its
 * definition.
 */
#ifndef GM_REPORT_REPORT_H
#define GM_REPORT_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "gmsim/policy.h"
#include "gmsim/replay.h"
#include "gmsim/report.h"
#include "gmsim/store.h"

typedef struct report_store {
    const char *path;
    gm_store_t *s;
    gm_trace_info_t *traces;
    size_t ntraces;
    gm_run_info_t *runs;
    size_t nruns;
} report_store_t;

typedef struct report_run {
    size_t store;
    const gm_run_info_t *info;
    gm_metrics_t m;
    const gm_policy_ops_t *ops; /* NULL for a policy this build lacks */
    char label[160];
    char cut[160]; /* label cut to GM_LABEL_MAX among its group's (gm_label_cut) */
    uint64_t capacity;
    int bound;    /* a planner: drawn as the offline bound */
    int baseline; /* caching with default parameters */
    int warm;     /* started from the recorded layout (gm_run_start) */
    int reference; /* caches nothing (no empty_cache): not a contender */
    int has_plan;  /* a planner's run stored with its plan (gm_plan_parse) */
    gm_plan_info_t plan;
    size_t group;
} report_run_t;

/* One stack (interned frames) live at the load peak. */
typedef struct report_stack {
    uint32_t frames;
    uint64_t bytes, count;
    char *text; /* its frames, cut for the page (kept stacks only) */
} report_stack_t;

/* An allocation site: the stacks whose site frame (report_site_frame) is
 * the same, by bytes. */
typedef struct report_site {
    char *name;
    uint64_t bytes, count;
    report_stack_t *stacks; /* the REPORT_STACKS largest */
    size_t nstacks, nstacks_all;
} report_site_t;

/* A MARK event of the trace, drawn as an x-axis tick. */
typedef struct report_mark {
    uint64_t event;
    uint32_t tag;
    uint8_t kind; /* REPORT_MARK_* */
} report_mark_t;

enum { REPORT_MARK_STEP, REPORT_MARK_FORWARD, REPORT_MARK_BACKWARD, REPORT_MARK_OTHER };

typedef struct report_group {
    const char *digest;
    const char *device;
    const char *name;
    const char *attrs; /* NULL when no store has the trace */
    size_t store;      /* where the trace is, when attrs */
    int64_t seq_len;
    char model[128];
    uint64_t events, load, capacity;
    size_t *runs; /* by peak reserved, then label */
    size_t nruns;
    size_t *shown; /* the runs drawn */
    size_t nshown;
    ssize_t winner, baseline, bound;
    report_site_t *sites;
    size_t nsites;
    uint64_t sites_total, sites_live, sites_stacks;
    size_t sites_all; /* sites at the peak, nsites of them kept */
    uint64_t peak_event; /* first event at which requested bytes peak */
    size_t trace_of;     /* the group whose read holds this trace's marks */
    report_mark_t *marks;
    size_t nmarks;
    char **tags; /* the trace's tag names, by index */
    uint32_t ntags;
    int active; /* its active-memory data is in the page (report_active_figure):
                   1 all of it, 2 its first allocations */
} report_group_t;

typedef struct report {
    const gm_report_config_t *cfg;
    FILE *f;
    report_store_t *stores;
    report_run_t *runs;
    size_t nruns;
    report_group_t *groups;
    size_t ngroups;
    int many_devices;
    gm_error_t *err;
} report_t;

/* ---- escaping and colours (report.c) -------------------------------------- */

void report_json_str(FILE *f, const char *s);
void report_summary_trace(const report_t *R, const report_group_t *gr, int md);
double report_saving(const report_run_t *baseline, const report_run_t *winner);
void report_esc(FILE *f, const char *s);
void report_md_esc(FILE *f, const char *s);
const char *report_size(uint64_t v, char *buf, size_t len);
/* The setting a PyTorch trace's user can set (gm_torch_advise at the
 * group's capacity), as one line in text; 0 where there is none to give. */
int report_group_advice(const report_t *R, const report_group_t *gr, char *text, size_t len);
/* Whether m knows the metric named name (a run stored before it existed
 * does not; gm_metric_known). */
int report_metric_known(const gm_metrics_t *m, const char *name);
const char *report_policy_color(const char *policy);
const char *report_color(const report_run_t *r);
size_t report_policy_rank(const char *policy);

/* ---- loading (load.c) ----------------------------------------------------- */

int report_load_stores(report_t *R);
const gm_trace_info_t *report_find_trace(const report_t *R, const char *digest,
                                         size_t *store);
void report_same_content(const report_t *R, gm_report_stats_t *stats);
int report_collect_runs(report_t *R, gm_report_stats_t *stats);
int report_group_runs(report_t *R);
int report_read_trace(report_t *R, report_group_t *gr, int sites);

/* ---- charts (svg.c) ------------------------------------------------------- */

void report_label(FILE *f, const report_run_t *r, int svg);
int report_memory_chart(report_t *R, const report_group_t *gr);
void report_bars(report_t *R, const report_group_t *gr, int waste);
void report_seq_chart(report_t *R, int frag);

/* ---- the active-memory view's data (active.c) ------------------------------ */

/* Bytes written as base64 (three bytes in four characters), for the data
 * the page decodes. */
typedef struct report_b64 {
    FILE *f;
    unsigned char in[3];
    int n;
    uint64_t bytes; /* base64 characters written */
} report_b64_t;

void report_b64_byte(report_b64_t *b, unsigned char c);
void report_varint(report_b64_t *b, uint64_t v);
void report_b64_flush(report_b64_t *b);

/* The allocations a page embeds, over all its traces (about 12 bytes
 * each; gm_report_config_t.embed_allocs overrides it): a trace that would
 * pass it shows its first allocations, and the note says what is left
 * out. */
#define REPORT_ACTIVE_BUDGET 700000u

int report_active_figure(report_t *R, report_group_t *gr, size_t g, uint64_t *budget);

/* ---- the address-space view's data (space.c) ------------------------------- */

/* The events times runs a page replays for its address-space views (each
 * replayed twice, one event a feed). */
#define REPORT_SPACE_BUDGET 8000000u

/* The allocations times runs whose blocks a page embeds for the address
 * space at any instant (about 1.5 to 2 bytes each; the three policies that
 * walk on a trace of 500,000 allocations): a run past it is shown at the
 * nearest of the precomputed instants. */
#define REPORT_SPACE_ANY_BUDGET 1500000u

int report_has_space(const report_t *R);
int report_space_figure(report_t *R, const report_group_t *gr, size_t g, uint64_t *budget,
                        uint64_t *any_budget);

/* ---- outputs (html.c, md.c) ----------------------------------------------- */

const char *report_plan_text(const report_run_t *r, char *buf, size_t len);
const char *report_trace_kind(const report_group_t *gr, char *buf, size_t len);
int report_html(report_t *R);
int report_md(report_t *R);

#endif
