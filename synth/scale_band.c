/*
 * synth/scale_band.c — how sure a prediction of `gmsim scale` is
 * (gm_scale_band; docs/validation.md, "How sure a prediction is").
 *
 * A target's predicted bytes fall in three classes by their allocation's
 * law: verified (a constant or power law over three or more captures, a
 * polynomial verified on an extra capture), two-point (a constant or
 * power law over two captures, the affine line through two, a call
 * site's law borrowed by an allocation that paired in no other capture),
 * and captured (no law: the captured size); a group of pre-existing
 * allocations under a count law counts its copies at the target, verified
 * only when both its count law and its size law are.  The band, relative to the
 * prediction, is
 *
 *     ( C·|r − 1| + (0.01·T + 0.0025·V) · max(1, log2 X) ) / bytes
 *
 * with C, T, V the captured, two-point and verified bytes at the target,
 * r the target's seq·batch over the base's and X how far the target lies
 * beyond the captures (the product over the dimensions that vary of
 * target / largest capture, or smallest / target below them; 1 within).
 * Bytes kept at their captured size are wrong by all their growth if
 * they in truth grow as the activations do (linearly: |r − 1| of them);
 * an unverified law is taken as wrong by 1% of its bytes per doubling of
 * the extrapolation, a verified one by a quarter of that — the size of
 * the errors measured on held-out real captures at 2x to 4x (issue 30:
 * 11 of 14 jobs within 1%, 10 of 16 predictions within 0.1%).
 */
#include "synth/scale_int.h"

#include <inttypes.h>
#include <math.h>

int sc_verified(const gm_scale_plan_t *pl, uint64_t i)
{
    switch (pl->law[i]) {
    case GM_SCALE_LAW_POLY:
        return 1;
    case GM_SCALE_LAW_CONST:
    case GM_SCALE_LAW_POWER:
        return pl->npts[i] >= 3;
    default:
        return 0;
    }
}

/* How far t lies beyond [lo, hi]: t/hi above, lo/t below, 1 within. */
static double sb_beyond(uint64_t t, uint64_t lo, uint64_t hi)
{
    if (t == 0 || lo == 0)
        return 1.0;
    if (t > hi)
        return (double)t / (double)hi;
    if (t < lo)
        return (double)lo / (double)t;
    return 1.0;
}

int gm_scale_band(const gm_scale_plan_t *p, uint64_t seq, uint64_t batch, gm_scale_band_t *out,
                  gm_error_t *err)
{
    *out = (gm_scale_band_t){0};
    int rc = gm_scale_check_target(p, seq, batch, err);
    if (rc)
        return rc;
    size_t b = p->base;
    uint64_t st = seq ? seq : p->seq[b], bt = batch ? batch : p->batch[b];
    uint64_t slo = UINT64_MAX, shi = 0, blo = UINT64_MAX, bhi = 0;
    for (size_t k = 0; k < p->n; k++) {
        slo = p->seq[k] < slo ? p->seq[k] : slo;
        shi = p->seq[k] > shi ? p->seq[k] : shi;
        blo = p->batch[k] < blo ? p->batch[k] : blo;
        bhi = p->batch[k] > bhi ? p->batch[k] : bhi;
    }
    out->beyond = sb_beyond(st, slo, shi) * sb_beyond(bt, blo, bhi);
    double sb = p->seq[b] ? (double)p->seq[b] : 1.0, bb = p->batch[b] ? (double)p->batch[b] : 1.0;
    out->ratio = ((st ? (double)st : 1.0) * (bt ? (double)bt : 1.0)) / (sb * bb);
    for (uint64_t i = 0; i < p->nallocs; i++) {
        uint64_t z, copies = 1;
        if ((rc = gm_scale_predict(p, i, seq, batch, NULL, NULL, NULL, &z, err)))
            return rc;
        int verified = sc_verified(p, i);
        if (p->ncounts > 0 && p->cgrp[i] != UINT32_MAX) {
            /* a count law: this member and the copies of it the target
             * adds (none if the target has fewer than its rank) */
            const sc_count_t *g = &p->counts[p->cgrp[i]];
            uint64_t c;
            if ((rc = sc_count_at(p, p->cgrp[i], seq, batch, &c, err)))
                return rc;
            copies = sc_count_copies(g, c, p->crank[i]);
            out->count_allocs += copies;
            verified &= g->verified;
        }
        if (copies > 1 && z > GM_LIVE_LIMIT / copies)
            return gm_error_set(err, GM_EINVAL, "the count law of allocation %" PRIu64
                                " gives %" PRIu64 " copies of %" PRIu64 " B: past the limit "
                                "of live bytes", i, copies, z);
        z *= copies;
        out->bytes += z;
        if (p->law[i] == GM_SCALE_LAW_NONE) {
            out->captured += z;
            out->captured_allocs += copies;
        } else if (verified) {
            out->verified += z;
        } else {
            out->two_point += z;
        }
    }
    double doublings = out->beyond > 2.0 ? log2(out->beyond) : 1.0;
    double bytes = (double)out->captured * fabs(out->ratio - 1.0) +
                   (0.01 * (double)out->two_point + 0.0025 * (double)out->verified) * doublings;
    out->band = out->bytes ? bytes / (double)out->bytes : 0.0;
    return 0;
}
