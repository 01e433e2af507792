/*
 * gmsim/replay.h — the replay engine: one pass over a trace feeds any number
 * of policies, each on its own simulated device, and computes the metrics of
 * docs/metrics.md per policy, a downsampled timeline, and the OOMs.
 *
 * Events are fed a chunk at a time.  For each chunk the engine first walks
 * the events once to assign each live allocation a slot (a small recycled
 * index, so per-policy state is bounded by the live set, not the trace
 * length) and to track requested bytes; then it runs the chunk through each
 * policy in turn.  Memory is bounded by the live allocations.
 */
#ifndef GMSIM_REPLAY_H
#define GMSIM_REPLAY_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gmsim/device.h"
#include "gmsim/error.h"
#include "gmsim/policy.h"
#include "gmsim/store.h"
#include "gmsim/trace.h"

GM_API_BEGIN

/* The metrics (docs/metrics.md), one line each: the one table every
 * figure of a run comes from.  The struct below, the descriptors
 * (gm_metric_at), the JSON a run is written and stored as and read back
 * from, the CSV columns, the tables of replay and compare and the
 * report's table of every run are all made from it.
 *
 * X(name, type, kind, column, flags, label, title):
 *   name    the member of gm_metrics_t, of the JSON and the CSV column,
 *           in the order JSON and CSV give them
 *   type    U64, I64 or F64: how it is held, written and read
 *   kind    what it measures, so how it is shown (gm_metric_kind_t)
 *   column  its place among the metrics of replay's table (0: in no table)
 *   flags   GM_METRIC_BRIEF: compare's table too; GM_METRIC_PIVOT: a
 *           figure of compare --by seq_len; GM_METRIC_REQUIRED: a stored
 *           run without it is unreadable (the others read as absent: a
 *           run stored before the metric existed)
 *   label   its column's header; title: a phrase for a heading */
#define GM_METRICS(X)                                                                          \
    X(peak_requested, U64, BYTES, 0, GM_METRIC_REQUIRED, "peak requested", "peak requested")   \
    X(peak_allocated, U64, BYTES, 20, GM_METRIC_REQUIRED, "peak allocated", "peak allocated")  \
    X(peak_reserved, U64, BYTES, 10, GM_METRIC_REQUIRED | GM_METRIC_BRIEF | GM_METRIC_PIVOT,   \
      "peak reserved", "peak reserved")                                                        \
    X(utilization, F64, RATIO, 30, GM_METRIC_BRIEF, "util", "utilization")                     \
    X(efficiency, F64, RATIO, 40, GM_METRIC_BRIEF, "efficiency", "efficiency")                 \
    X(overhead, F64, EXCESS, 50, GM_METRIC_BRIEF | GM_METRIC_PIVOT, "overhead",                \
      "overhead above load")                                                                   \
    X(internal_frag, F64, RATIO, 60, GM_METRIC_BRIEF | GM_METRIC_PIVOT, "int frag",            \
      "internal fragmentation (rounding)")                                                     \
    X(external_frag, F64, RATIO, 70, GM_METRIC_BRIEF | GM_METRIC_PIVOT, "ext frag",            \
      "external fragmentation")                                                                \
    X(rounding_waste, U64, BYTES, 80, GM_METRIC_BRIEF, "rounding", "rounding at the load peak") \
    X(reserved_at_load_peak, U64, BYTES, 0, 0, "reserved@load", "reserved at the load peak")   \
    X(largest_free_at_peak, U64, BYTES, 0, 0, "largest free",                                  \
      "largest free block at the reserved peak")                                               \
    X(device_mallocs, U64, COUNT, 90, GM_METRIC_BRIEF, "dev mallocs", "device mallocs")        \
    X(device_frees, U64, COUNT, 100, 0, "dev frees", "device frees")                           \
    X(device_time_ns, U64, DURATION, 110, 0, "dev time", "device time")                        \
    X(ooms, U64, COUNT, 120, GM_METRIC_BRIEF, "ooms", "OOMs")                                  \
    X(first_oom_event, I64, EVENT, 0, 0, "first oom", "first OOM")                             \
    X(events, U64, COUNT, 0, 0, "events", "events")                                            \
    X(sim_ns_per_event, F64, RATE, 130, 0, "ns/event", "simulation time per event")

#define GM__METRIC_TYPE_U64 uint64_t
#define GM__METRIC_TYPE_I64 int64_t
#define GM__METRIC_TYPE_F64 double

typedef struct gm_metrics {
#define GM__METRIC_FIELD(name, type, ...) GM__METRIC_TYPE_##type name;
    GM_METRICS(GM__METRIC_FIELD)
#undef GM__METRIC_FIELD
    /* Bit k (GM_METRICS order): metric k is not known, for a stored run
     * written before it existed (gm_metrics_parse).  0 from a replay. */
    uint64_t absent;
} gm_metrics_t;

/* How a metric is held. */
typedef enum gm_metric_type { GM_METRIC_U64, GM_METRIC_I64, GM_METRIC_F64 } gm_metric_type_t;

/* What a metric measures, and so how a table shows it. */
typedef enum gm_metric_kind {
    GM_METRIC_BYTES,    /* bytes: 1.5 GiB */
    GM_METRIC_RATIO,    /* a share, 0..1: 12.3% */
    GM_METRIC_EXCESS,   /* a ratio above a floor, signed: +12.3% */
    GM_METRIC_COUNT,    /* how many: 12 */
    GM_METRIC_EVENT,    /* an event's index, -1 none */
    GM_METRIC_DURATION, /* nanoseconds, shown as ms: 1.2 ms */
    GM_METRIC_RATE      /* nanoseconds per event: 12.3 */
} gm_metric_kind_t;

enum {
    GM_METRIC_BRIEF = 1,    /* in compare's table, beside replay's */
    GM_METRIC_PIVOT = 2,    /* a figure of compare --by seq_len */
    GM_METRIC_REQUIRED = 4, /* a stored run without it cannot be read */
};

typedef struct gm_metric_desc {
    const char *name;  /* as JSON and CSV name it, and docs/metrics.md */
    const char *label; /* a table column's header */
    const char *title; /* a phrase for a heading or a chart */
    const char *unit;  /* "B", "ratio", "count", "event", "ns", "ns/event" */
    gm_metric_type_t type;
    gm_metric_kind_t kind;
    unsigned column; /* its place in replay's table; 0: in no table */
    unsigned flags;  /* GM_METRIC_* */
    size_t offset;   /* of its member in gm_metrics_t */
} gm_metric_desc_t;

/* The descriptors, in GM_METRICS order. */
size_t gm_metric_count(void);
const gm_metric_desc_t *gm_metric_at(size_t k);
/* The index of the metric named name, or -1. */
int gm_metric_find(const char *name);

/* The metrics a table shows, in column order: replay's (flags 0: every
 * metric with a column) or those with every bit of flags set (compare's:
 * GM_METRIC_BRIEF).  Fills idx (room for gm_metric_count()) and returns
 * how many. */
size_t gm_metric_columns(unsigned flags, size_t *idx);

/* Metric k of m: whether it is known (not absent), and its value as
 * stored (the accessor of its type) or as a double (any type). */
int gm_metric_known(const gm_metrics_t *m, size_t k);
uint64_t gm_metric_u64(const gm_metrics_t *m, size_t k);
int64_t gm_metric_i64(const gm_metrics_t *m, size_t k);
double gm_metric_value(const gm_metrics_t *m, size_t k);

/* Metric k of m as a table shows it ("1.5 GiB", "12.3%", "+12.3%", "12",
 * "1.2 ms"; "-" for a ratio that is not a number or a metric not known).
 * Returns buf. */
const char *gm_metric_text(const gm_metrics_t *m, size_t k, char *buf, size_t len);

typedef struct gm_replay_config {
    gm_device_config_t device; /* each policy gets a device with this config */
    size_t timeline_points;    /* target points (default 2000); 0 = none */
    int check_level;           /* 0 none, 1 at the end, 2 after every event */
    /* Optional: gm_replay_trace calls it after each chunk with the events
     * replayed so far and the trace's total (a progress bar's input). */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* Defragmentation (compaction): after every defrag_every-th event
     * (0: never), and at every MARK named defrag_at (NULL: none; resolved by
     * gm_replay_trace, or set the tag with gm_replay_set_defrag_tag), each
     * run re-places its live allocations, largest first, into a fresh state
     * of its policy on a fresh device (gm_replay_defrag reports the cost). */
    uint64_t defrag_every;
    const char *defrag_at;
    /* gm_replay_trace decodes the next chunk on a second thread while this
     * one replays (1, the default), or decodes and replays in turn on the
     * calling thread (0: one core, as a sweep's workers, each given a core
     * of their own, run).  The results are the same. */
    int decode_ahead;
    /* Threads that run the policies in gm_replay_trace (0 or 1, the
     * default: the calling thread runs them all in turn).  With N > 1 and
     * several policies, the calling thread reads, decodes and validates the
     * chunks into a bounded ring and min(N, policies) threads take them,
     * each running its own policies (policy i on thread i mod N), none
     * waiting for another but through the ring's bound.  Every metric,
     * timeline and error is the same as with one thread (the timing
     * sim_ns_per_event aside).  A device with hooks runs on one thread. */
    unsigned threads;
    /* The recorded OOMs (MARKs of the tag set by gm_replay_set_oom_tag,
     * which carry the request that failed: its size, its stream): 1, each
     * run's policy is asked for that request again where the recorded
     * allocator was, and gives back at once what it serves, so that what
     * the failed request set off (PyTorch releasing its cached blocks)
     * happens in the replay too; 0 (the default), those MARKs are ignored.
     * Meant for a replay at the capacity the trace recorded (its
     * "oom_capacity" attribute): on a larger device the request would not
     * have failed, and on an unlimited one (capacity 0) nothing is asked.
     * Policies that plan from lifetimes are never asked. */
    int recorded_ooms;
} gm_replay_config_t;

/* What the compactions of one run bought and cost.  Reserved bytes are the
 * device's just before and just after each compaction; a compaction is
 * modelled in place (blocks slide inside memory already held), so the two
 * states never count together in peak_reserved: copy_peak_reserved is the
 * peak had each compaction held both while copying. */
typedef struct gm_defrag_stats {
    uint64_t compactions;     /* done */
    uint64_t aborted;         /* the fresh state could not hold the live set (capacity):
                                 the run went on in its old state */
    uint64_t blocks_moved;    /* live allocations whose address changed */
    uint64_t bytes_moved;     /* their requested bytes: what a compaction copies */
    uint64_t reserved_before; /* summed over the compactions */
    uint64_t reserved_after;
    uint64_t max_reclaimed;   /* largest before − after of one compaction (0 if none shrank) */
    uint64_t copy_peak_reserved;
} gm_defrag_stats_t;

typedef struct gm_replay gm_replay_t;

void gm_replay_config_default(gm_replay_config_t *cfg);

/* The capacity a trace's recorded OOM fixes (its "oom_capacity"
 * attribute; attrs as gm_trace_info_t's): when cfg's device is unlimited
 * (capacity 0: no capacity was given) and the trace has one, cfg's
 * capacity becomes it and recorded_ooms 1.  Returns 1 then, 0 (cfg as it
 * was) otherwise.  What replay, compare, sweep and fit do without
 * --capacity or --device. */
int gm_replay_config_at_oom(gm_replay_config_t *cfg, const char *attrs);

/* Create an engine (cfg NULL: defaults).  GM_ENOMEM; the caller destroys
 * *out. */
int gm_replay_create(const gm_replay_config_t *cfg, gm_replay_t **out, gm_error_t *err);

/* Add a policy with resolved parameter values (copied) and create it on its
 * own device.  Before any feed, else GM_ESTATE; GM_EINVAL when the policy
 * refuses a value (the message names policy, parameter and value);
 * GM_ENOMEM.  On failure r is as before. */
int gm_replay_add(gm_replay_t *r, const gm_params_t *params, gm_error_t *err);

/* Index of the tag that means "empty the caches here" (MARK events with it
 * call each policy's empty_cache); -1 (the default) for none. */
void gm_replay_set_empty_cache_tag(gm_replay_t *r, int64_t tag);

/* Index of the tag whose MARKs mean "the device synchronized" (each
 * policy's sync); -1 (the default) for none. */
void gm_replay_set_sync_tag(gm_replay_t *r, int64_t tag);

/* Index of the tag whose MARKs are the allocator's recorded OOMs (see
 * gm_replay_config_t.recorded_ooms); -1 (the default) for none. */
void gm_replay_set_oom_tag(gm_replay_t *r, int64_t tag);

/* Index of the tag whose MARKs trigger a compaction (see
 * gm_replay_config_t.defrag_at); -1 (the default) for none.  Before the
 * first feed (and before gm_replay_prepare, which keeps the context the
 * fresh states are prepared with); ignored after. */
void gm_replay_set_defrag_tag(gm_replay_t *r, int64_t tag);

/* Whether compactions are configured (every N events or at a tag). */
int gm_replay_defrag_enabled(const gm_replay_t *r);

/* Run i's compaction figures (all zero without defragmentation); NULL when
 * i is out of range. */
const gm_defrag_stats_t *gm_replay_defrag(const gm_replay_t *r, size_t i);

/* Whether a policy added needs every lifetime in its context (a planner). */
int gm_replay_needs_lifetimes(const gm_replay_t *r);

/* Hand each policy the trace context (its prepare op), before the first
 * feed (GM_ESTATE after).  A policy's refusal is returned with its name
 * prefixed.  gm_replay_trace does this itself. */
int gm_replay_prepare(gm_replay_t *r, const gm_trace_context_t *ctx, gm_error_t *err);

/*
 * Feed n events in trace order.  Errors (GM_EFORMAT, with the event index):
 * a FREE of an id that is not live, an ALLOC of an id already live, a size
 * of 0 or above GM_SIZE_LIMIT; GM_ESTATE if a policy that plans from the
 * lifetimes was never prepared; GM_ECORRUPT if a policy's check fails (the
 * message names the policy, event and reason).  A simulated OOM is not an
 * error: it is counted in the metrics.
 */
int gm_replay_feed(gm_replay_t *r, const gm_event_t *events, size_t n, gm_error_t *err);

/* Finish: compute the derived metrics.  No feed after this.  GM_ESTATE
 * after a failed feed; GM_ECORRUPT if check_level ≥ 1 and a policy's final
 * check fails. */
int gm_replay_finish(gm_replay_t *r, gm_error_t *err);

size_t gm_replay_count(const gm_replay_t *r);
const gm_params_t *gm_replay_params(const gm_replay_t *r, size_t i);
const gm_metrics_t *gm_replay_metrics(const gm_replay_t *r, size_t i);
const gm_timeline_point_t *gm_replay_timeline(const gm_replay_t *r, size_t i, size_t *n);
/* How run i started, after gm_replay_prepare: 1 warm (from the trace's
 * recorded layout: a policy with a `start` parameter at "recorded", on a
 * trace with a layout), 0 cold (from an empty allocator: every other run).
 * When the recorded layout did not fit the device's capacity, prepare
 * starts such a run cold instead of failing: *layout_unfit (may be NULL)
 * then gets the bytes the layout holds, else 0.  0 when i is out of
 * range. */
int gm_replay_started_warm(const gm_replay_t *r, size_t i, uint64_t *layout_unfit);
/* The recorded OOMs run i's policy was asked for again (recorded_ooms):
 * how many, and in *failed (may be NULL) how many it could not serve
 * either (as the recorded allocator could not).  0 when i is out of
 * range. */
uint64_t gm_replay_recorded_ooms(const gm_replay_t *r, size_t i, uint64_t *failed);
uint64_t gm_replay_load(const gm_replay_t *r); /* peak requested (LOAD) */
uint64_t gm_replay_events(const gm_replay_t *r);
/* Index of the event being replayed, for observers called from inside a
 * policy (device hooks); after a feed, the last event's. */
uint64_t gm_replay_position(const gm_replay_t *r);

/* Visit the live allocations of run i between feeds (after
 * gm_replay_feed returned): each allocation's id and the block run i's
 * policy gave it (addr UINT64_MAX for a request that OOMed), in no
 * particular order.  Returns how many were visited. */
size_t gm_replay_live(const gm_replay_t *r, size_t i,
                      void (*fn)(void *ctx, uint64_t id, const gm_block_t *blk), void *ctx);

/* The block run i's policy gave live allocation id (addr UINT64_MAX for
 * a request that OOMed), between feeds; returns 0 when id is not live. */
int gm_replay_block(const gm_replay_t *r, size_t i, uint64_t id, gm_block_t *blk);

/* The policy instance of run i (for tests: check, stats). */
gm_policy_t *gm_replay_policy(gm_replay_t *r, size_t i);

void gm_replay_destroy(gm_replay_t *r);

/* Stream trace `name` of store s through r, chunk by chunk (sets the
 * empty_cache and synchronize tags, and the defrag_at tag, from the
 * trace's tags), then finish.
 * Before the first event it prepares every policy with the trace's
 * attributes, stored starting layout and, when a policy needs them, every
 * allocation's lifetime (a first pass over the trace).  The errors of
 * gm_reader_open/next (GM_ENOTFOUND, GM_ECORRUPT, …) and of
 * gm_replay_feed/finish, the latter prefixed with the trace's name. */
int gm_replay_trace(gm_replay_t *r, gm_store_t *s, const char *name, gm_error_t *err);

/*
 * Plan trace `name` of s with a planning policy (params: its policy and
 * values, e.g. offline's) and write the plan to out as a placement CSV,
 * minimalloc's columns plus the offset: `id,lower,upper,size,offset`, one
 * row per allocation in ordinal order.  lower/upper are the ALLOC's and
 * FREE's timestamps when those order the events (never decreasing, every
 * lifetime longer than 0), else their event indices; a lifetime never freed
 * ends one past the last.  size is the bytes the plan gives the allocation
 * (its request rounded to the policy's alignment), offset where it starts
 * in the arena.  *info (may be NULL) gets the plan's figures (its offset
 * and size pointers are not valid after the call).  GM_EINVAL for a
 * policy that makes no plan; the replay's and reader's errors; GM_EIO when
 * out cannot be written.
 */
int gm_placement_export(gm_store_t *s, const char *name, const gm_params_t *params, FILE *out,
                        gm_plan_info_t *info, gm_error_t *err);

GM_API_END

#endif
