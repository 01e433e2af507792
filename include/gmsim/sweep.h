/*
 * gmsim/sweep.h — batch comparisons: many policy configurations over many
 * traces (docs/report.md, docs/cli.md `compare`, `sweep`, `merge`).
 *
 * compare: one trace is read once and fed to every configuration in the
 * same pass (gm_replay_trace); the result keeps, per configuration, the
 * metrics and the timeline.
 *
 * sweep: the grid traces × configurations, each (trace, configuration) a
 * run, executed by worker processes and stored by the parent alone (SQLite
 * has one writer) in a results store, one transaction per run.  A run is
 * identified by its key — trace content digest, policy, parameters
 * (canonical JSON), device (canonical JSON) and gmsim version — so a sweep
 * that is run again, or was killed, does only what is missing.
 *
 * Configurations are gm_params_t (a policy with resolved values); a
 * parameter list ("caching.max_split_size=none,128MiB") expands to one
 * configuration per value, lists of several parameters to their product.
 */
#ifndef GMSIM_SWEEP_H
#define GMSIM_SWEEP_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/advice.h"
#include "gmsim/attrs.h"
#include "gmsim/error.h"
#include "gmsim/json.h"
#include "gmsim/policy.h"
#include "gmsim/replay.h"
#include "gmsim/store.h"

GM_API_BEGIN

/* ---- canonical JSON texts (the runs table's columns) --------------------- */

/* Compact JSON object of every parameter of p, resolved, in the policy's
 * parameter order: {"min_block":512,"arena":0}.  The same policy and
 * values give the same text (a run's key).  NULL when out of memory; the
 * caller frees the result. */
char *gm_params_json(const gm_params_t *p);

/* {"capacity":C,"granularity":G}; NULL when out of memory; caller frees. */
char *gm_device_json(const gm_device_config_t *dev);

/* The metrics of docs/metrics.md as a compact JSON object, in GM_METRICS
 * order, a metric not known (gm_metric_known) left out; NULL when out of
 * memory; caller frees.  These three and gm_metrics_parse are
 * replay/metrics.c's. */
char *gm_metrics_json(const gm_metrics_t *m);

/* The same three objects written as one value to a JSON writer (pretty or
 * compact, as j was set up); output errors are sticky in ferror(j->f). */
void gm_params_write_json(gm_json_t *j, const gm_params_t *p);
void gm_device_write_json(gm_json_t *j, const gm_device_config_t *dev);
void gm_metrics_write_json(gm_json_t *j, const gm_metrics_t *m);

/* Read metrics written by gm_metrics_json (or any JSON object with those
 * members).  A missing member reads as absent (m->absent: a run stored
 * before the metric existed) but for the GM_METRIC_REQUIRED ones, whose
 * absence is GM_EFORMAT naming it, as is a value of the wrong kind; *m is
 * filled on success only. */
int gm_metrics_parse(const char *json, gm_metrics_t *m, gm_error_t *err);

/* A planner's plan (docs/metrics.md, "The plan"): {"status":"optimal",
 * "peak":P,"lower_bound":L,"gap":G,"capacity":C,"work":W} written as one
 * value (its offsets and sizes are not written). */
void gm_plan_write_json(gm_json_t *j, const gm_plan_info_t *pi);

/* The metrics a run stores (the runs table's metrics column): those of
 * gm_metrics_json, and for a planner's run (plan not NULL) its plan as a
 * last member "plan"; runs of other policies store gm_metrics_json's text
 * unchanged.  NULL when out of memory; the caller frees. */
char *gm_run_metrics_json(const gm_metrics_t *m, const gm_plan_info_t *plan);

/* As gm_run_metrics_json, with the run's start before the plan: "start":
 * "warm" (warm 1: from the trace's recorded layout) or "cold", and, when
 * the recorded layout did not fit the capacity (layout_unfit, its bytes,
 * not 0), "layout_unfit".  What sweep and replay --save store. */
char *gm_run_result_json(const gm_metrics_t *m, const gm_plan_info_t *plan, int warm,
                         uint64_t layout_unfit);

/* The start of a stored run: 1 warm, 0 cold, from its metrics' "start"
 * member; a run stored before starts were kept reads as its parameters
 * said (params_json's "start" of a policy that has one: "recorded" is
 * warm), as those runs were replayed.  *layout_unfit (may be NULL) gets
 * the member "layout_unfit", else 0. */
int gm_run_start(const char *policy, const char *params_json, const char *metrics_json,
                 uint64_t *layout_unfit);

/* The plan stored with a run's metrics (gm_run_metrics_json) into *pi
 * (offset and size NULL, n 0): 1 when there is one whose status reads,
 * else 0 (a run of a policy that makes no plan, or one stored before plans
 * were kept). */
int gm_plan_parse(const char *metrics_json, gm_plan_info_t *pi);

/* ---- configurations -------------------------------------------------------- */

/* Add the policies named in `text` ("all", or names separated by commas)
 * to list (capacity gm_policy_count(), no repeats, registry order for
 * "all").  GM_EINVAL naming an unknown policy (and listing the known
 * ones) or an empty list. */
int gm_policies_select(const char *text, const gm_policy_ops_t **list, size_t *n,
                       gm_error_t *err);

/*
 * Expand policies and --param texts into configurations.  policies: the
 * selected policies (no repeats).  params: "POLICY.KEY=V1,V2,..." texts in
 * order; each value list multiplies that policy's configurations (the
 * product over its keys, in order; later texts for the same key replace
 * earlier ones).  *out (caller frees with gm_configs_free) holds, policy by
 * policy, every combination.  GM_EINVAL (message naming the text) for bad
 * syntax, a policy not selected, an unknown key or a value the policy
 * refuses to parse; GM_ENOMEM.
 */
int gm_configs_expand(const gm_policy_ops_t *const *policies, size_t npolicies,
                      const char *const *params, size_t nparams, gm_params_t **out, size_t *n,
                      gm_error_t *err);
void gm_configs_free(gm_params_t *sets, size_t n);

/* "caching" or "caching max_split_size=128MiB …": the policy and the
 * parameters that differ from its defaults, given as params JSON text;
 * sizes as gm_format_param_size writes them ("none", "128MiB").  Written
 * into buf (truncated to len). */
void gm_config_label(const char *policy, const char *params_json, char *buf, size_t len);

/*
 * A label cut to at most `max` characters (UTF-8 characters, at least the
 * ellipsis and two more) for a table column or a chart legend, into buf
 * (len bytes).  peers: the labels shown beside it (it may be among them;
 * NULL entries are skipped).  Settings that every peer of the same policy
 * with settings shares (its bare defaults stand apart anyway) are what a
 * cut drops first (one `ellipsis` at the end stands for
 * every dropped setting); then the keys of the others are shortened, the
 * longest first, to four characters and the ellipsis ("max_...=128MiB":
 * the values are what tells configurations apart); then settings are
 * dropped from the left, the last one kept; a text still too long keeps
 * its start and ends in the ellipsis.  A label that fits is copied as it
 * is.  Never fails.
 */
void gm_label_cut(const char *label, const char *const *peers, size_t npeers, size_t max,
                  const char *ellipsis, char *buf, size_t len);

/* Widest label gm_label_cut leaves in text tables and report charts. */
#define GM_LABEL_MAX 40

/*
 * Make sure every policy of sets has its default configuration (every
 * parameter at its default), so that a sweep of parameter values always
 * holds the baseline it is measured against: where none of a policy's
 * configurations has the default parameters (compared as gm_params_json
 * texts), one is inserted before the policy's first configuration.
 * GM_ENOMEM (or an error of gm_params_init) leaves *sets and *n as they
 * were; the caller still frees them with gm_configs_free.
 */
int gm_configs_with_defaults(gm_params_t **sets, size_t *n, gm_error_t *err);

/* ---- compare: one trace, many configurations, one pass ----------------- */

typedef struct gm_compare_run {
    const gm_policy_ops_t *ops;
    char *params; /* gm_params_json */
    char label[160];
    gm_metrics_t metrics;
    gm_timeline_point_t *timeline; /* copied when cfg->timeline_points */
    size_t npoints;
    int has_plan;         /* a planner's run: its plan's status in plan */
    gm_plan_info_t plan;  /* offset and size NULL: only the figures are kept */
    int warm;              /* gm_replay_started_warm: 1 from the recorded layout */
    uint64_t layout_unfit; /* the layout's bytes when it did not fit the capacity */
    uint64_t oom_asked, oom_failed; /* gm_replay_recorded_ooms (cfg->recorded_ooms) */
} gm_compare_run_t;

typedef struct gm_compare_trace {
    gm_trace_info_t info; /* name, digest, attributes, events, load */
    int64_t seq_len;      /* the "seq_len" attribute, -1 when absent */
    uint64_t load;        /* peak requested as replayed */
    gm_compare_run_t *runs;
    size_t nruns;
    /* For a PyTorch trace, the setting its user can set (gm_torch_advise):
     * gm_compare_trace leaves it zero (torch = 0); compare fills it. */
    gm_torch_advice_t torch;
} gm_compare_trace_t;

/*
 * Replay trace `name` of s through every configuration in one pass.  cfg
 * NULL: defaults.  Errors of gm_replay_create/add/trace (a refused value is
 * GM_EINVAL); *out is filled on success only; release it with
 * gm_compare_trace_release.
 */
int gm_compare_trace(gm_store_t *s, const char *name, const gm_params_t *sets, size_t nsets,
                     const gm_replay_config_t *cfg, gm_compare_trace_t *out, gm_error_t *err);
void gm_compare_trace_release(gm_compare_trace_t *t);

/* ---- sweep ------------------------------------------------------------------ */

typedef struct gm_sweep_progress {
    size_t runs_total; /* runs of this shard */
    size_t runs_done;  /* stored, including those found done at the start */
    size_t runs_reused;
    uint64_t work_total; /* events × runs */
    uint64_t work_done;
} gm_sweep_progress_t;

/* A sweep's runs keep timelines of 500 points by default: above what a
 * report draws (300 per line), a quarter of a replay's 2000, so that a
 * results store of thousands of runs stays small and quick to write. */
#define GM_SWEEP_TIMELINE_POINTS 500

typedef struct gm_sweep_config {
    const char *const *inputs; /* stores holding the traces (read only) */
    size_t ninputs;
    const char *trace_glob;    /* fnmatch pattern on trace names; NULL: all */
    const gm_params_t *sets;   /* configurations (gm_configs_expand) */
    size_t nsets;
    gm_device_config_t device;
    size_t timeline_points;    /* 0: GM_SWEEP_TIMELINE_POINTS */
    const char *results;       /* the results store (created if missing) */
    int results_traces;        /* 1: the results store's own traces are inputs
                                  too (traces the sweep synthesized there) */
    unsigned jobs;             /* worker processes; 0 or 1: one */
    unsigned threads;          /* each worker's policy threads (gm_replay_config_t
                                  .threads); 0 or 1: one */
    unsigned shard, nshards;   /* run slice `shard` of `nshards` (0-based); nshards 0: all */
    /* Called by the parent after each stored run (and once at the start). */
    void (*progress)(void *ctx, const gm_sweep_progress_t *p);
    void *progress_ctx;
} gm_sweep_config_t;

typedef struct gm_sweep_summary {
    size_t traces;     /* traces matched */
    size_t grid;       /* runs in the whole grid */
    size_t runs;       /* runs in this shard */
    size_t reused;     /* found done in the results store */
    size_t ran;        /* replayed and stored now */
    size_t failed;     /* replays that failed (first error in err) */
    size_t same_content; /* traces left out as the same events as another
                            one listed before (swept once, for both) */
    char same_note[512]; /* the first of them: "'b' in 'y.db' has the same
                            events as 'a' in 'x.db'" ("" when none) */
    /* Traces replayed at the capacity their recorded OOM fixes (the device
     * has none: gm_replay_config_at_oom), their runs stored with it; the
     * first of them and its capacity. */
    size_t at_oom;
    char at_oom_trace[256];
    uint64_t at_oom_capacity;
    /* Runs that ran now and were to start from the recorded layout, which
     * did not fit the capacity: they started cold (gm_compare_run_t
     * .layout_unfit); reused runs are not read back. */
    size_t layout_unfit;
    /* The plans of the planners' runs that ran now (reused runs are not
     * read back): how many of each gm_plan_status_t, and the largest gap
     * ((peak - lower_bound) / lower_bound) of those not proved optimal. */
    size_t plans[3];
    double plan_gap_max;
} gm_sweep_summary_t;

/*
 * Run the grid (or its shard) into cfg->results.  Input stores are only
 * read; runs whose key is already in the results store are not run again.
 * Each run is stored in its own transaction as soon as a worker returns
 * it, so a killed sweep loses at most the runs in flight.
 *
 * Shards: gm_sweep_plan deals the runs, so the slices are deterministic,
 * disjoint, cover the grid and are balanced by work (events × runs).  The
 * results store records the shard (gm_store_put_shard) under the grid's
 * digest, at the start and with every run stored, for `gmsim merge` to
 * check.
 *
 * Returns 0 when every run of the shard is stored; a replay that fails
 * (a damaged trace, a refused value) is counted in sum->failed, the other
 * runs go on, and the first failure is returned (GM_E*, message naming
 * trace and policy).  Errors opening or listing stores (GM_EIO, GM_EFORMAT,
 * …), GM_ENOTFOUND when no trace matches, GM_EINVAL for a bad shard or a
 * results store that is one of the inputs.
 */
int gm_sweep_run(const gm_sweep_config_t *cfg, gm_sweep_summary_t *sum, gm_error_t *err);

/* The traces a sweep with cfg would run (cfg->inputs, cfg->trace_glob;
 * each content once) into *n.  The errors of listing the stores. */
int gm_sweep_count_traces(const gm_sweep_config_t *cfg, size_t *n, gm_error_t *err);

/*
 * Deal the runs of a grid of ntraces traces (events[t] each) × nsets
 * configurations, in grid order (trace-major), to nshards shards: out[t *
 * nsets + k] gets run (t, k)'s shard, 0-based.  The line of runs, each
 * weighing its trace's events + 1, is cut into nshards stretches of equal
 * work and a run goes to the stretch holding its middle: deterministic,
 * every shard within one run's weight of the mean, and a trace split
 * between shards only at a stretch's end (so each shard reads each of its
 * traces once, and at most nshards − 1 traces are read twice).  GM_EINVAL
 * for nshards 0.
 */
int gm_sweep_plan(const uint64_t *events, size_t ntraces, size_t nsets, unsigned nshards,
                  unsigned *out, gm_error_t *err);

/*
 * Whether shard records (gm_store_list_shards, gathered from every store
 * to merge) make whole sweeps: for each grid and shard count, every shard
 * 1..N present and with all its runs stored.  0 when they do (or there are
 * none); else GM_EINCOMPLETE, the message naming the missing and the
 * incomplete shards ("sweep 1a2b3c4d, 4 shards: shard 2/4 missing, shard
 * 3/4 has 12 of 50 runs"); GM_ENOMEM.
 */
int gm_shards_check(const gm_shard_record_t *records, size_t n, gm_error_t *err);

GM_API_END

#endif
