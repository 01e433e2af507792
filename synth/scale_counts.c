/*
 * synth/scale_counts.c — pre-existing allocations whose number depends on
 * the size (synth/scale.c has the method, step 3, "count laws").
 *
 * A warm-up's graph kept alive holds as many tensors as the warm-up made;
 * a loop over chunks of the sequence makes more of them at a larger size.
 * The base's pre-existing allocations are grouped by key (stack frames and
 * stream), size and predicted size at every other capture (one shape of
 * one line of the program).  A group's count in another capture is its
 * members paired there plus that capture's unpaired pre-existing
 * allocations of its key at the group's predicted size there.  Where a
 * group is present in every capture and its counts differ, the count
 * follows a law of the sizes, fitted as sizes are: c · seq^p · batch^q
 * exact at every capture (integer |p|, |q| ≤ 4), else with one dimension
 * varying a polynomial (a line through two captures, unverified; with
 * three or more, through all but the last and verified on it within one
 * half).  Counts that contradict each other, or a capture whose unpaired
 * allocations two groups could claim, leave the group at the base's count
 * (counted in the report).  A group's members of no size law (kept at
 * their size) were found at that size in every capture: they take the
 * constant law.
 *
 * The members that paired with nothing in some capture are the ones the
 * size added (a smaller capture lacks them): they rank last.  Written
 * (synth/scale_write.c): the group's first min(count, members) members by
 * rank (those ranked last left out first), and count − members more after
 * its member of the largest id, copies of the last-ranked members in turn
 * (of all members when every one paired everywhere): each its member's
 * size, stream and frames, freed where that member is freed.
 */
#include "synth/scale_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/vec.h"

/* An allocation by key and size (a capture's unpaired pre-existing ones). */
typedef struct sc_kz {
    uint64_t key, size;
} sc_kz_t;

static int sc_kz_cmp(const void *x, const void *y)
{
    const sc_kz_t *a = x, *b = y;
    int c = gm__cmp_u64(a->key, b->key);
    return c ? c : gm__cmp_u64(a->size, b->size);
}

int sc_count_note_unpaired(gm_scale_plan_t *pl, size_t k, const int64_t *b_to_a,
                           gm_error_t *err)
{
    const gm_align_trace_t *t = pl->t[k];
    size_t m = 0;
    for (size_t i = 0; i < t->nallocs; i++)
        m += t->allocs[i].preexisting && b_to_a[i] < 0;
    if (m == 0)
        return 0;
    sc_kz_t *v = malloc(m * sizeof *v);
    if (v == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    m = 0;
    for (size_t i = 0; i < t->nallocs; i++)
        if (t->allocs[i].preexisting && b_to_a[i] < 0)
            v[m++] = (sc_kz_t){t->allocs[i].key, t->allocs[i].size};
    qsort(v, m, sizeof *v, sc_kz_cmp);
    pl->upre[k] = v;
    pl->nupre[k] = m;
    return 0;
}

/* How many of capture k's unpaired pre-existing allocations have (key, size). */
static uint64_t sc_unpaired_count(const gm_scale_plan_t *pl, size_t k, uint64_t key,
                                  uint64_t size)
{
    const sc_kz_t *v = pl->upre[k];
    size_t lo = 0, hi = pl->nupre[k];
    sc_kz_t probe = {key, size};
    while (lo < hi) { /* the first not below probe */
        size_t mid = lo + (hi - lo) / 2;
        if (sc_kz_cmp(&v[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t c = 0;
    while (lo + c < pl->nupre[k] && sc_kz_cmp(&v[lo + c], &probe) == 0)
        c++;
    return c;
}

/* The points (x, count) of group g along dimension var, the base first. */
static size_t sc_count_points(const gm_scale_plan_t *pl, const sc_count_t *g, int var,
                              long double *xs, long double *cs)
{
    size_t m = 0;
    for (size_t j = 0; j < pl->n; j++) {
        size_t k = j == 0 ? pl->base : (j <= pl->base ? j - 1 : j);
        xs[m] = (long double)(var ? pl->batch[k] : pl->seq[k]);
        cs[m] = (long double)g->count[k];
        m++;
    }
    return m;
}

/* Fit g's count law: 0 fitted, -1 none (contradicting counts). */
static int sc_count_fit(const gm_scale_plan_t *pl, sc_count_t *g)
{
    size_t b = pl->base, n = pl->n;
    int vs = pl->rep.vary_seq, vb = pl->rep.vary_batch;
    uint64_t sb = pl->seq[b] ? pl->seq[b] : 1, bb = pl->batch[b] ? pl->batch[b] : 1;
    for (size_t e = 1; e < pl->npq[vs][vb]; e++) { /* not the constant: the counts differ */
        int p = pl->pq[vs][vb][e][0], q = pl->pq[vs][vb][e][1], fits = 1;
        for (size_t k = 0; k < n && fits; k++) {
            sc_u128 num, den;
            if (k == b)
                continue;
            fits = sc_power_frac(g->count[b], sb, pl->seq[k] ? pl->seq[k] : 1, bb,
                                 pl->batch[k] ? pl->batch[k] : 1, p, q, &num, &den) == 0 &&
                   num % den == 0 && num / den == g->count[k];
        }
        if (fits) {
            g->p = (int8_t)p;
            g->q = (int8_t)q;
            g->poly = 0;
            g->verified = n >= 3;
            return 0;
        }
    }
    if (vs && vb)
        return -1;
    g->poly = 1;
    g->var = (uint8_t)vb;
    if (n == 2) {
        g->deg = 1;
        g->verified = 0;
        return 0;
    }
    long double xs[GM_SCALE_MAX_CAPTURES], cs[GM_SCALE_MAX_CAPTURES];
    size_t m = sc_count_points(pl, g, g->var, xs, cs);
    size_t deg = m - 2 < 2 ? m - 2 : 2;
    for (size_t k = deg + 1; k < m; k++)
        if (fabsl(sc_lagrange(xs, cs, deg + 1, xs[k]) - cs[k]) >= 0.5L)
            return -1;
    g->deg = (uint8_t)deg;
    g->verified = 1;
    return 0;
}

/* A base pre-existing allocation with its predicted size at every capture
 * (0 past the captures). */
typedef struct sc_pre {
    uint64_t key, size, id;
    uint64_t zk[GM_SCALE_MAX_CAPTURES];
} sc_pre_t;

static int sc_pre_cmp(const void *x, const void *y)
{
    const sc_pre_t *a = x, *b = y;
    int c = gm__cmp_u64(a->key, b->key);
    if (c == 0)
        c = gm__cmp_u64(a->size, b->size);
    if (c == 0)
        c = memcmp(a->zk, b->zk, sizeof a->zk);
    return c ? c : gm__cmp_u64(a->id, b->id);
}

/* (capture's key and size, group) for finding two groups that claim one
 * capture's allocations. */
typedef struct sc_claim {
    uint64_t key, size;
    size_t group;
} sc_claim_t;

static int sc_claim_cmp(const void *x, const void *y)
{
    const sc_claim_t *a = x, *b = y;
    return gm__cmp_u64_keys((const uint64_t[]){a->key, a->size, a->group},
                            (const uint64_t[]){b->key, b->size, b->group}, 3);
}

int sc_count_laws(gm_scale_plan_t *pl, gm_error_t *err)
{
    const gm_align_trace_t *t = pl->t[pl->base];
    size_t n = pl->n, b = pl->base, npre = 0;
    for (uint64_t i = 0; i < pl->nallocs; i++)
        npre += t->allocs[i].preexisting;
    if (npre == 0)
        return 0;
    int rc = 0;
    sc_pre_t *v = calloc(npre, sizeof *v);
    sc_count_t *gs = NULL;
    sc_claim_t *cl = NULL;
    if (v == NULL)
        goto nomem;
    size_t m = 0;
    for (uint64_t i = 0; i < pl->nallocs; i++) {
        if (!t->allocs[i].preexisting)
            continue;
        int ok = 1;
        for (size_t k = 0; k < n && ok; k++)
            ok = gm_scale_predict(pl, i, pl->seq[k], pl->batch[k], NULL, NULL, NULL,
                                  &v[m].zk[k], NULL) == 0;
        if (ok) {
            v[m].key = t->allocs[i].key;
            v[m].size = t->allocs[i].size;
            v[m].id = i;
            m++;
        } else {
            memset(v[m].zk, 0, sizeof v[m].zk);
        }
    }
    qsort(v, m, sizeof *v, sc_pre_cmp);
    /* the groups whose counts differ among the captures */
    size_t ng = 0, capg = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i + 1;
        while (j < m && v[j].key == v[i].key && v[j].size == v[i].size &&
               memcmp(v[j].zk, v[i].zk, sizeof v[i].zk) == 0)
            j++;
        sc_count_t g = {.first = i, .n = j - i};
        int present = 1, differs = 0;
        for (size_t k = 0; k < n; k++) {
            if (k == b) {
                g.count[k] = j - i;
                continue;
            }
            uint64_t c = 0;
            for (size_t x = i; x < j; x++)
                c += pl->z[v[x].id * n + k] != 0;
            c += pl->nupre[k] ? sc_unpaired_count(pl, k, v[i].key, v[i].zk[k]) : 0;
            g.count[k] = c;
            present &= c > 0;
            differs |= c != j - i;
        }
        if (present && differs) {
            if (GM_VEC_RESERVE(gs, capg, ng + 1, 8))
                goto nomem;
            gs[ng++] = g;
        }
        i = j;
    }
    /* two groups that claim one capture's allocations: neither is sure */
    if (ng > 1) {
        if ((cl = malloc(ng * sizeof *cl)) == NULL)
            goto nomem;
        for (size_t k = 0; k < n; k++) {
            if (k == b)
                continue;
            for (size_t g = 0; g < ng; g++)
                cl[g] = (sc_claim_t){v[gs[g].first].key, v[gs[g].first].zk[k], g};
            qsort(cl, ng, sizeof *cl, sc_claim_cmp);
            for (size_t g = 1; g < ng; g++)
                if (cl[g].key == cl[g - 1].key && cl[g].size == cl[g - 1].size)
                    gs[cl[g].group].ambiguous = gs[cl[g - 1].group].ambiguous = 1;
        }
    }
    /* the laws; the groups kept, their members in id order */
    size_t w = 0, nmem = 0;
    for (size_t g = 0; g < ng; g++) {
        if (gs[g].ambiguous || sc_count_fit(pl, &gs[g])) {
            pl->rep.count_unsure += gs[g].n;
            continue;
        }
        gs[w++] = gs[g];
        nmem += gs[g].n;
    }
    if (w == 0)
        goto done;
    pl->cmem = malloc(nmem * sizeof *pl->cmem);
    pl->cgrp = malloc(pl->nallocs * sizeof *pl->cgrp);
    pl->crank = malloc(pl->nallocs * sizeof *pl->crank);
    if (pl->cmem == NULL || pl->cgrp == NULL || pl->crank == NULL)
        goto nomem;
    for (uint64_t i = 0; i < pl->nallocs; i++)
        pl->cgrp[i] = UINT32_MAX;
    size_t at = 0;
    for (size_t g = 0; g < w; g++) {
        sc_count_t *x = &gs[g];
        /* ranks: the members paired in every capture first, then the
         * others (the ones the size added), each in id order */
        const sc_pre_t *mv = &v[x->first];
        size_t lo = 0, hi = 0;
        for (size_t r = 0; r < x->n; r++)
            lo += pl->npts[mv[r].id] >= n;
        x->grow = x->n - lo;
        for (size_t r = 0; r < x->n; r++)
            pl->cmem[at + (pl->npts[mv[r].id] >= n ? hi++ : lo++)] = mv[r].id;
        x->last = 0;
        for (size_t r = 0; r < x->n; r++) {
            uint64_t id = pl->cmem[at + r];
            x->last = id > x->last ? id : x->last;
            pl->cgrp[id] = (uint32_t)g;
            pl->crank[id] = (uint32_t)r;
            if (pl->law[id] == GM_SCALE_LAW_NONE) { /* found at its size everywhere */
                pl->law[id] = GM_SCALE_LAW_CONST;
                pl->pe[id] = pl->qe[id] = 0;
                pl->npts[id] = (uint8_t)n;
            }
        }
        x->first = at;
        at += x->n;
        pl->rep.count_groups++;
        pl->rep.count_allocs += x->n;
        pl->rep.count_verified += x->verified ? x->n : 0;
    }
    pl->counts = gs;
    pl->ncounts = w;
    gs = NULL;
    goto done;
nomem:
    rc = gm_error_set(err, GM_ENOMEM, "out of memory");
done:
    free(v);
    free(gs);
    free(cl);
    return rc;
}

size_t sc_count_template(const sc_count_t *g, uint64_t j)
{
    return g->grow ? g->n - g->grow + (size_t)(j % g->grow) : (size_t)(j % g->n);
}

uint64_t sc_count_copies(const sc_count_t *g, uint64_t c, size_t r)
{
    uint64_t self = r < c;
    if (c <= g->n)
        return self;
    size_t m = g->grow ? g->grow : g->n, base = g->n - m;
    if (r < base)
        return self;
    uint64_t j0 = r - base, extra = c - g->n; /* copies j0, j0 + m, ... below extra */
    return self + (extra > j0 ? (extra - j0 + m - 1) / m : 0);
}

int sc_count_at(const gm_scale_plan_t *pl, size_t g, uint64_t seq, uint64_t batch,
                uint64_t *count, gm_error_t *err)
{
    const sc_count_t *x = &pl->counts[g];
    size_t b = pl->base;
    uint64_t sb = pl->seq[b] ? pl->seq[b] : 1, bb = pl->batch[b] ? pl->batch[b] : 1;
    uint64_t st = seq ? seq : sb, bt = batch ? batch : bb;
    long double c;
    if (!x->poly) {
        sc_u128 num, den;
        if (sc_power_frac(x->count[b], sb, st, bb, bt, x->p, x->q, &num, &den) ||
            num / den > SC_COUNT_LIMIT)
            c = -1;
        else
            c = (long double)(num / den) + ((num % den) * 2 >= den);
    } else {
        long double xs[GM_SCALE_MAX_CAPTURES], cs[GM_SCALE_MAX_CAPTURES];
        size_t m = sc_count_points(pl, x, x->var, xs, cs);
        size_t use = (size_t)x->deg + 1;
        c = roundl(sc_lagrange(xs, cs, use < m ? use : m, (long double)(x->var ? bt : st)));
        if (c < 0)
            c = 0; /* none left at that size */
    }
    if (c >= 0 && c <= (long double)SC_COUNT_LIMIT) {
        *count = (uint64_t)c;
        return 0;
    }
    const gm_align_alloc_t *a = &pl->t[b]->allocs[pl->cmem[x->first]];
    return gm_error_set(err, GM_EINVAL,
                        "the count law of the %" PRIu64 " pre-existing allocations of %" PRIu64
                        " B (the first allocation %" PRIu64 ", event %" PRIu64
                        ") of '%s' gives no count in range at seq %" PRIu64 ", batch %" PRIu64,
                        x->n, a->size, pl->cmem[x->first], a->event, pl->label[b], st, bt);
}
