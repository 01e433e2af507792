/*
 * gmsim/advice.h — answers a user can act on, each from a few replays of
 * one trace (docs/cli.md replay and compare, docs/report.md Summary):
 *
 *  - gm_start_compare: a policy that can start from the trace's recorded
 *    layout (a `start` parameter, recorded|empty: `caching`), replayed warm
 *    and cold, with and without the parameters given, beside the recorded
 *    figure — and whether the parameters act at all, warm or cold.
 *  - gm_torch_advise: for a PyTorch trace, the allocator setting a PyTorch
 *    user can set (PYTORCH_CUDA_ALLOC_CONF=…, or the cudaMallocAsync
 *    backend) that reserves least, against the recorded settings.
 *  - gm_oom_explain: at a run's first OOM, the failing request, the
 *    segments with their free blocks and the live blocks pinning them
 *    (with stack frames where the trace has them), and the candidate
 *    settings that fit on the same device.
 *
 * All replay cold settings from an empty allocator (start=empty) where they
 * stand for a new job: a setting acts from the process start.
 */
#ifndef GMSIM_ADVICE_H
#define GMSIM_ADVICE_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"
#include "gmsim/policy.h"
#include "gmsim/replay.h"
#include "gmsim/store.h"

GM_API_BEGIN

/* ---- warm and cold starts ---------------------------------------------- */

/* "Change" means change the answer: peak reserved or the OOM count. */
typedef enum gm_start_verdict {
    GM_START_ACTS,       /* the parameters change the warm replay */
    GM_START_INERT_WARM, /* they change nothing warm (the recorded layout
                            decides), but change the cold replay */
    GM_START_INERT,      /* they change nothing, warm or cold */
} gm_start_verdict_t;

typedef struct gm_start_compare {
    uint64_t recorded;        /* the recording's own peak reserved (attribute
                                 "recorded"), 0 when unknown */
    uint64_t layout_reserved; /* bytes the layout holds before the first event */
    size_t layout_segments;
    gm_metrics_t warm_default; /* start=recorded, the trace's settings alone */
    gm_metrics_t warm;         /* start=recorded, with the parameters */
    gm_metrics_t cold_default; /* start=empty, the trace's settings alone */
    gm_metrics_t cold;         /* start=empty, with the parameters */
    gm_start_verdict_t verdict;
} gm_start_compare_t;

/* Whether policy ops can start from a recorded layout (it has a `start`
 * parameter, recorded|empty). */
int gm_policy_has_start(const gm_policy_ops_t *ops);

/*
 * Replay trace `name` four ways in one pass — set's policy warm and cold,
 * with set's values and with its defaults (set->set bits tell which were
 * given; `start` itself is overridden) — on cfg's device.  GM_EINVAL when
 * set's policy has no `start`; GM_ENOTFOUND when the trace has no recorded
 * layout (nothing to compare); the errors of gm_store_layout and
 * gm_replay_trace.  *out filled on success only.
 */
int gm_start_compare(gm_store_t *s, const char *name, const gm_params_t *set,
                     const gm_replay_config_t *cfg, gm_start_compare_t *out, gm_error_t *err);

/* ---- the setting a PyTorch user can set --------------------------------- */

#define GM_TORCH_OPTIONS 12

typedef struct gm_torch_option {
    char setting[160]; /* "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" */
    char label[64];     /* "expandable_segments:True", "backend:cudaMallocAsync" */
    uint64_t peak_reserved;
    uint64_t ooms;
} gm_torch_option_t;

typedef struct gm_torch_advice {
    int torch;           /* 1: a PyTorch trace (snapshot, or synthesized as
                            PyTorch runs it); 0: nothing below is set */
    int synthesized;     /* 1: no recorded run: the baseline is PyTorch's defaults */
    uint64_t recorded;   /* the recording's peak reserved, 0 when unknown */
    uint64_t baseline;   /* the recorded settings (or defaults), replayed cold */
    uint64_t baseline_ooms;
    gm_torch_option_t options[GM_TORCH_OPTIONS]; /* the grid, replayed cold */
    size_t noptions;
    int best;            /* the option reserving least without OOMs, below
                            the baseline (ties: the first); -1 when none */
} gm_torch_advice_t;

/*
 * Replay PyTorch trace `name` cold through its recorded settings and each
 * of a small grid of settings a user can set (expandable_segments,
 * max_split_size_mb, roundup_power2_divisions, garbage_collection_threshold
 * when the device is finite, and the cudaMallocAsync backend), each on top
 * of the recorded settings, in one pass on cfg's device.  A trace that is
 * not PyTorch's gives out->torch = 0 and no replay.  The errors of
 * gm_store_find and gm_replay_trace.
 */
int gm_torch_advise(gm_store_t *s, const char *name, const gm_replay_config_t *cfg,
                    gm_torch_advice_t *out, gm_error_t *err);

/* "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True saves 5.21 GiB (9.2%)
 * against the recorded run's settings …" (or "keep the recorded settings:
 * …") into buf; an empty string when !a->torch. */
void gm_torch_advice_text(const gm_torch_advice_t *a, char *buf, size_t len);

/* ---- what blocks a request at an OOM ------------------------------------ */

typedef struct gm_oom_block {
    uint64_t addr, size;
    int allocated;
    uint64_t id;        /* allocated: the allocation's id (UINT64_MAX unknown) */
    uint64_t requested; /* allocated: the bytes it asked for */
    uint64_t event;     /* allocated: its ALLOC's event index */
    char *frames;       /* allocated: its stack frames (owned), NULL when none */
} gm_oom_block_t;

typedef struct gm_oom_segment {
    uint64_t addr, size;
    uint32_t stream;
    int pool;          /* the policy's pool (caching: 0 large, 1 small), -1 none */
    size_t first, n;   /* its blocks in gm_oom_report_t.blocks */
    uint64_t free_bytes, largest_free;
    int serves;        /* 1: the request's stream and pool (those come first) */
} gm_oom_segment_t;

typedef struct gm_oom_report {
    char policy[64];
    int64_t event;           /* the first OOM's event index, -1: none */
    uint64_t request;        /* bytes asked for */
    uint32_t stream;
    uint64_t capacity, reserved;
    uint64_t allocated;      /* the live allocations' block bytes (a warm
                                start's recorded blocks not yet claimed by
                                their ALLOC are in the segments only) */
    uint64_t requested_live; /* the bytes they asked for */
    int walked;              /* 1: the policy showed its segments */
    gm_oom_segment_t *segments; /* those that could serve the request
                                   first, then the most free bytes first */
    size_t nsegments;
    gm_oom_block_t *blocks;
    size_t nblocks;
    gm_torch_option_t fits[GM_TORCH_OPTIONS]; /* settings tried cold on
                                                 the same device */
    size_t nfits_tried;
    int best_fit;            /* fits[best_fit]: no OOM, least reserved; -1 none */
} gm_oom_report_t;

/*
 * Replay trace `name` through set on cfg's device up to its first OOM and
 * describe it: the request, the segments and blocks the policy shows (its
 * optional walk op; walked = 0 without one), the live allocations in them,
 * and which candidate settings (gm_torch_advise's grid for caching, the
 * other policies otherwise) replay the trace without an OOM.  out->event
 * is −1 when the run has no OOM.  Release with gm_oom_report_release.  The
 * errors of gm_replay_trace; GM_ENOMEM.
 */
int gm_oom_explain(gm_store_t *s, const char *name, const gm_params_t *set,
                   const gm_replay_config_t *cfg, gm_oom_report_t *out, gm_error_t *err);
void gm_oom_report_release(gm_oom_report_t *r);

/* A policy's segments and their blocks as its walk shows them, collected
 * by passing gm_oom_walk_fn and a zeroed gm_oom_walk_t to gm_policy_walk:
 * segment k's blocks are b[seg[k].first .. + seg[k].n), its free_bytes and
 * largest_free counted; each block's id is UINT64_MAX, its frames NULL.
 * nomem is set when memory ran out (what was kept stays to be freed). */
typedef struct gm_oom_walk {
    gm_oom_segment_t *seg;
    size_t nseg, segcap;
    gm_oom_block_t *b;
    size_t n, cap;
    int nomem;
} gm_oom_walk_t;
void gm_oom_walk_fn(void *ctx, const gm_walk_block_t *w);

/* The frame to show of a stack (frames one a line, innermost first, as
 * the store keeps them): its innermost frame of the application (a .py
 * file outside installed packages and Python's standard library), else
 * its innermost Python frame, else its innermost autograd node
 * ("...Backward0::apply"), else its innermost frame; a C++ frame without
 * its argument list.  Written to buf (at most len − 1 bytes and a NUL;
 * frames NULL gives ""); returns its length.  The text, JSON ("site") and
 * HTML outputs all name a block or a site by it. */
size_t gm_site_frame(const char *frames, char *buf, size_t len);

GM_API_END

#endif
