/*
 * gmsim/workload.h — seeded random workloads for tests and benchmarks.
 *
 * A realistic mix for a deep-learning job: many small short-lived requests
 * (scalars, per-op temporaries), medium activation-sized ones that live for a
 * while, and a few large long-lived ones (weights, optimizer state), on one
 * main stream with some traffic on a second.  Sizes repeat (tensors have a
 * few shapes), time advances by a few µs per event, a MARK "step" falls
 * every few thousand events.  Live bytes never exceed live_max.  The same
 * config and seed always give the same events; every allocation is freed by
 * the last event, and exactly `events` events are produced.
 */
#ifndef GMSIM_WORKLOAD_H
#define GMSIM_WORKLOAD_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"
#include "gmsim/store.h"
#include "gmsim/trace.h"

GM_API_BEGIN

typedef struct gm_workload_config {
    uint64_t events;   /* exact number of events (default 100000) */
    uint64_t seed;     /* default 1 */
    uint64_t live_max; /* bound on live requested bytes (default 8 GiB) */
} gm_workload_config_t;

typedef struct gm_workload gm_workload_t;

void gm_workload_config_default(gm_workload_config_t *cfg);

/* GM_EINVAL if the config is unusable (events < 2, live_max < 4 KiB). */
int gm_workload_create(const gm_workload_config_t *cfg, gm_workload_t **out, gm_error_t *err);

/*
 * Produce up to max next events into buf; returns how many (0 at the end).
 * ALLOC ids are ordinals from 0; stream indices are 0 and 1; MARK events use
 * tag index 0, meaning "step".
 */
size_t gm_workload_next(gm_workload_t *wl, gm_event_t *buf, size_t max);

void gm_workload_destroy(gm_workload_t *wl);

/* Write a whole workload into w (interning the streams and the "step" tag,
 * and recording the config in the trace attributes); does not finish w.
 * GM_EINVAL for an unusable config, or the writer's errors (w can then only
 * be aborted). */
int gm_workload_write(const gm_workload_config_t *cfg, gm_writer_t *w, gm_error_t *err);

GM_API_END

#endif
