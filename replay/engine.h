/*
 * replay/engine.h — the replay engine's state, inside the library: a run
 * (one policy on its own device), the slots, a block's view of pass 1, and
 * struct gm_replay; the functions replay/engine.c shares with
 * replay/engine_par.c (the feed with policies on threads).  The passes are
 * described at the top of replay/engine.c.
 */
#ifndef GM_REPLAY_ENGINE_H
#define GM_REPLAY_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/idmap.h"
#include "gmsim/replay.h"
#include "store/store.h"

#define ENGINE_BLOCK 16384 /* events per block when several runs share a pass */
#define ENGINE_NO_SLOT UINT32_MAX
#define ENGINE_NO_ADDR UINT64_MAX /* block of an allocation that OOMed; its
                                     size then holds the request */
#define ENGINE_DEAD (UINT64_MAX - 1) /* with defragmentation: a slot with no
                                        live allocation in this run */

typedef struct engine_run {
    gm_params_t params;
    gm_device_t devs[2]; /* a compaction moves the run to the other one */
    gm_device_t *dev;    /* the current state's device */
    gm_policy_t *policy;
    gm_block_t *blocks; /* by slot */
    size_t blocks_cap;
    int prepared;
    int warm;               /* started from the trace's recorded layout */
    uint64_t layout_unfit;  /* the layout's bytes when it did not fit the
                               capacity and the run started cold instead */
    gm_params_t cold;       /* then: params with start=empty (its policy's) */

    /* defragmentation: each slot's request, slots [0, ninit) initialized,
     * device counters of the states compacted away */
    gm_request_t *reqs;
    size_t reqs_cap;
    uint32_t ninit;
    uint64_t dev_mallocs, dev_frees;
    double dev_time_ns;
    gm_defrag_stats_t defrag;

    uint64_t allocated;
    uint64_t peak_allocated;
    uint64_t peak_reserved;
    uint64_t allocated_at_peak; /* state at t*: of the events at the reserved
                                   peak, the one with the most allocated */
    uint64_t largest_free_at_peak;
    int peak_pending; /* GM_POLICY_LAZY_STATS: largest_free_at_peak not yet taken */
    /* state at the load peak t_L: of the events at which requested is at
     * its peak, the one with the most reserved (then the most allocated) */
    uint64_t load_requested; /* requested then (the application's) */
    uint64_t load_served;    /* of it, the requests served (not OOMed) */
    uint64_t load_reserved;
    uint64_t load_allocated;
    uint64_t ooms;
    int64_t first_oom;
    uint64_t failed_live; /* requested bytes of live allocations that OOMed */
    uint64_t oom_asks, oom_asks_failed; /* recorded OOMs asked again; not served */
    double ns; /* time spent in this run's pass 2 */

    gm_timeline_point_t *tl; /* 2 × target capacity */
    size_t ntl;
    uint64_t bucket;   /* events per point */
    uint64_t inbucket; /* events in the open point */
    gm_timeline_point_t open;

    gm_metrics_t m;
} engine_run_t;

typedef struct engine_slot {
    uint64_t size;   /* requested bytes */
    uint32_t stream; /* stream of the ALLOC */
} engine_slot_t;

/* A block of events after pass 1, as pass 2 reads it: the events, where
 * the first stands in the trace, the slots handed out by then, and pass 1's
 * per-event results.  Serially these are the engine's scratch arrays; with
 * policy threads, a ring entry's (see engine_feed_parallel). */
typedef struct engine_view {
    const gm_event_t *ev;
    size_t n;
    uint64_t base;            /* trace index of ev[0] */
    uint32_t nslots;          /* slots ever handed out after pass 1 of ev */
    const uint32_t *slot;     /* ALLOC/FREE: slot, else ENGINE_NO_SLOT */
    const uint64_t *requested; /* requested bytes after the event */
    const uint32_t *stream;   /* FREE: stream of the allocation it ends */
    uint64_t *position;       /* gm_replay_position's; NULL with threads */
} engine_view_t;

struct gm_replay {
    gm_replay_config_t cfg;
    engine_run_t **runs; /* each run apart: its policy points at its device */
    size_t nruns;

    gm__idmap_t live;   /* allocation id → slot */
    uint32_t *free_slots;
    size_t nfree, free_cap;
    uint32_t nslots;    /* slots ever handed out */
    engine_slot_t *slots; /* the live allocation in each slot */
    size_t slot_cap;

    /* Per-chunk scratch from pass 1. */
    uint32_t *ev_slot;     /* ALLOC/FREE: slot, else ENGINE_NO_SLOT */
    uint64_t *ev_requested; /* requested bytes after the event */
    uint32_t *ev_stream;   /* FREE: stream of the allocation it ends */
    size_t scratch_cap;

    uint64_t requested;
    uint64_t peak_requested;
    uint64_t events;
    int64_t empty_cache_tag;
    int64_t sync_tag;
    int64_t oom_tag;
    int64_t defrag_tag;
    int defrag; /* compactions configured (fixed at the first feed) */
    /* the context fresh states are prepared with (defragmentation only) */
    int have_ctx;
    gm_trace_context_t ctx;
    char *ctx_name, *ctx_attrs;
    gm_lifetime_t *ctx_lifetimes;
    uint64_t position; /* the event a policy is serving now (gm_replay_position) */
    int started;
    int finished;
    int failed;
};

/* Pass 1 over n events (validation, slots, requested bytes, the stream
 * each FREE ends), pass 2 of one run over a block's view, and the runs'
 * start before the first event (replay/engine.c). */
int engine_pass1(gm_replay_t *r, const gm_event_t *ev, size_t n, uint32_t *out_slot,
                 uint64_t *out_req, uint32_t *out_stream, gm_error_t *err);
int engine_pass2(const gm_replay_t *r, engine_run_t *run, const engine_view_t *v,
                 gm_error_t *err);
int engine_start(gm_replay_t *r, gm_error_t *err);

/* The feed with the runs on nworkers threads (replay/engine_par.c). */
int engine_feed_parallel(gm_replay_t *r, gm_reader_t *rd, unsigned nworkers, int *replay_failed,
                         gm_error_t *err);

#endif
