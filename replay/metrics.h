/*
 * replay/metrics.h — between replay/metrics.c and the writers of a run's
 * JSON beside it (internal).
 */
#ifndef GM_REPLAY_METRICS_H
#define GM_REPLAY_METRICS_H

#include "gmsim/json.h"
#include "gmsim/replay.h"

/* The members of a metrics object (no braces), in GM_METRICS order, a
 * metric not known left out. */
void gm__metrics_write_members(gm_json_t *j, const gm_metrics_t *m);

#endif
