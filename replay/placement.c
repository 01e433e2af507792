/*
 * replay/placement.c — a planner's plan as a placement CSV (minimalloc's
 * columns id,lower,upper,size plus offset), for tools that take placement
 * instances and for checking a plan without gmsim.
 *
 * The plan is made by replaying the trace through the planning policy
 * (gm_replay_trace: its prepare plans from every lifetime) and read back
 * through the policy's plan op.  A second pass over the trace gives each
 * allocation its times.  Timestamps are written when they order the events
 * (never decreasing in event order, every lifetime longer than 0): then two
 * rows overlap in [lower, upper) exactly when the allocations were live
 * together (a FREE at t comes before an ALLOC at t in such a trace, and
 * half-open intervals meeting at t do not overlap).  Otherwise the event
 * indices are written, which always say it.  Nothing is written until the
 * plan and the times are known.
 */
#include "gmsim/replay.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct placement_life {
    uint64_t t0, t1, i0, i1; /* times and event indices; i1 = UINT64_MAX: open */
} placement_life_t;

int gm_placement_export(gm_store_t *s, const char *name, const gm_params_t *params, FILE *out,
                        gm_plan_info_t *info, gm_error_t *err)
{
    if (params == NULL || params->ops->plan == NULL)
        return gm_error_set(err, GM_EINVAL, "policy '%s' makes no plan to export",
                            params ? params->ops->name : "?");
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.timeline_points = 0;
    gm_replay_t *r = NULL;
    gm_reader_t *rd = NULL;
    placement_life_t *life = NULL;
    int rc = gm_replay_create(&cfg, &r, err);
    if (rc == 0)
        rc = gm_replay_add(r, params, err);
    if (rc == 0)
        rc = gm_replay_trace(r, s, name, err);
    gm_plan_info_t pi;
    if (rc == 0) {
        gm_policy_t *p = gm_replay_policy(r, 0);
        if (gm_policy_plan(p, &pi) != 0)
            rc = gm_error_set(err, GM_ESTATE, "trace '%s': policy '%s' made no plan", name,
                              p->ops->name);
    }
    if (rc == 0)
        rc = gm_reader_open(s, name, &rd, err);
    if (rc == 0 && (life = calloc(pi.n ? pi.n : 1, sizeof *life)) == NULL)
        rc = gm_error_set(err, GM_ENOMEM, "out of memory for %zu allocations", pi.n);
    uint64_t index = 0, last_ts = 0;
    int ordered = 1;
    if (rc == 0) {
        for (size_t i = 0; i < pi.n; i++)
            life[i].i1 = UINT64_MAX;
        const gm_event_t *ev;
        size_t k;
        while ((rc = gm_reader_next(rd, &ev, &k, err)) == 0 && k > 0) {
            for (size_t i = 0; i < k; i++, index++) {
                const gm_event_t *e = &ev[i];
                if (e->ts_ns < last_ts)
                    ordered = 0;
                last_ts = e->ts_ns > last_ts ? e->ts_ns : last_ts;
                if ((e->op != GM_OP_ALLOC && e->op != GM_OP_FREE) || e->id >= pi.n)
                    continue;
                if (e->op == GM_OP_ALLOC) {
                    life[e->id].t0 = e->ts_ns;
                    life[e->id].i0 = index;
                } else {
                    life[e->id].t1 = e->ts_ns;
                    life[e->id].i1 = index;
                }
            }
        }
    }
    if (rc == 0) {
        for (size_t i = 0; i < pi.n && ordered; i++)
            if (life[i].i1 != UINT64_MAX && life[i].t1 <= life[i].t0)
                ordered = 0;
        fprintf(out, "id,lower,upper,size,offset\n");
        for (size_t i = 0; i < pi.n; i++) {
            uint64_t lo = ordered ? life[i].t0 : life[i].i0, hi;
            if (life[i].i1 == UINT64_MAX)
                hi = ordered ? last_ts + 1 : index;
            else
                hi = ordered ? life[i].t1 : life[i].i1;
            fprintf(out, "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", i, lo, hi,
                    pi.size[i], pi.offset[i]);
        }
        if (fflush(out) != 0 || ferror(out))
            rc = gm_error_set(err, GM_EIO, "cannot write the placement of trace '%s'", name);
        if (info) {
            *info = pi;
            info->offset = info->size = NULL;
        }
    }
    free(life);
    if (rd)
        gm_reader_close(rd);
    if (r)
        gm_replay_destroy(r);
    return rc;
}
