/*
 * synth/scale_laws.c — the size laws of `gmsim scale` (synth/scale.c has
 * the method, step 3): exact power laws checked in 128-bit integers,
 * Lagrange polynomials verified on an extra capture, and call-site laws
 * for the allocations of the base that paired in no other capture.
 */
#include "synth/scale_int.h"
#include "base/bits.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- exact power laws ------------------------------------------------------------ */


/* x · base^e, or 0 past 2^120. */
static sc_u128 sc_mulpow(sc_u128 x, uint64_t base, unsigned e)
{
    const sc_u128 lim = (sc_u128)1 << 120;
    for (unsigned i = 0; i < e; i++) {
        if (base != 0 && x > lim / base)
            return 0;
        x *= base;
    }
    return x;
}

/* num/den of z · (s1/s0)^p · (b1/b0)^q, with negative powers crossed over;
 * 0 on overflow. */
int sc_power_frac(uint64_t z, uint64_t s0, uint64_t s1, uint64_t b0, uint64_t b1, int p,
                         int q, sc_u128 *num, sc_u128 *den)
{
    unsigned ap = (unsigned)(p < 0 ? -p : p), aq = (unsigned)(q < 0 ? -q : q);
    sc_u128 n = sc_mulpow(z, p >= 0 ? s1 : s0, ap);
    n = n ? sc_mulpow(n, q >= 0 ? b1 : b0, aq) : 0;
    sc_u128 d = sc_mulpow(1, p >= 0 ? s0 : s1, ap);
    d = d ? sc_mulpow(d, q >= 0 ? b0 : b1, aq) : 0;
    if (n == 0 || d == 0)
        return -1;
    *num = n;
    *den = d;
    return 0;
}

size_t sc_exponents(int vary_seq, int vary_batch, int8_t pq[SC_EXPONENTS][2])
{
    int pm = vary_seq ? SC_MAXP : 0, qm = vary_batch ? SC_MAXP : 0;
    size_t k = 0;
    for (int tot = 0; tot <= pm + qm; tot++)
        for (int p = -pm; p <= pm; p++) {
            int rest = tot - (p < 0 ? -p : p);
            if (rest < 0 || rest > qm)
                continue;
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                if (rest == 0 && sgn > 0)
                    continue;
                pq[k][0] = (int8_t)p;
                pq[k][1] = (int8_t)(sgn * rest);
                k++;
            }
        }
    return k;
}

/* 1 if every point of allocation i follows c · seq^p · batch^q exactly. */
int sc_power_fits(const gm_scale_plan_t *pl, uint64_t i, int p, int q)
{
    size_t b = pl->base;
    uint64_t zb = pl->z[i * pl->n + b];
    for (size_t k = 0; k < pl->n; k++) {
        uint64_t zk = pl->z[i * pl->n + k];
        if (k == b || zk == 0)
            continue;
        sc_u128 num, den;
        if (sc_power_frac(zb, pl->seq[b] ? pl->seq[b] : 1, pl->seq[k] ? pl->seq[k] : 1,
                          pl->batch[b] ? pl->batch[b] : 1, pl->batch[k] ? pl->batch[k] : 1, p, q,
                          &num, &den))
            return 0;
        /* zk == num / den exactly (den ≤ 2^120 and zk < 2^48: compare
         * zk·den with num, no 128-bit division) */
        if (den > ((sc_u128)1 << 79) || (sc_u128)zk * den != num)
            return 0;
    }
    return 1;
}

/* ---- polynomials ----------------------------------------------------------------- */

/* The points of allocation i along dimension var: xs, zs; returns count. */
size_t sc_points(const gm_scale_plan_t *pl, uint64_t i, int var, long double *xs,
                        long double *zs)
{
    size_t m = 0;
    /* the base first, then the others in order */
    for (size_t j = 0; j < pl->n; j++) {
        size_t k = j == 0 ? pl->base : (j <= pl->base ? j - 1 : j);
        uint64_t zk = pl->z[i * pl->n + k];
        if (zk == 0)
            continue;
        xs[m] = (long double)(var ? pl->batch[k] : pl->seq[k]);
        zs[m] = (long double)zk;
        m++;
    }
    return m;
}

/* Lagrange's polynomial through (xs, zs)[0..m) at x. */
long double sc_lagrange(const long double *xs, const long double *zs, size_t m,
                               long double x)
{
    long double sum = 0;
    for (size_t k = 0; k < m; k++) {
        long double t = zs[k];
        for (size_t j = 0; j < m; j++)
            if (j != k)
                t *= (x - xs[j]) / (xs[k] - xs[j]);
        sum += t;
    }
    return sum;
}

/* ---- call-site laws ----------------------------------------------------------------- */

typedef struct sc_site {
    uint64_t key;
    uint64_t size; /* the base's size (0 in the per-key table) */
    int8_t p, q;
} sc_site_t;

static int sc_site_cmp(const void *x, const void *y)
{
    const sc_site_t *a = x, *b = y;
    int c = gm__cmp_u64(a->key, b->key);
    return c ? c : gm__cmp_u64(a->size, b->size);
}

/* Compact sorted v[0..m) to one entry per (key, size); p = INT8_MIN marks
 * an entry whose allocations disagree or that has fewer than `least`.
 * Returns the count kept. */
static size_t sc_site_compact(sc_site_t *v, size_t m, size_t least)
{
    size_t w = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i;
        int agree = 1;
        while (j < m && v[j].key == v[i].key && v[j].size == v[i].size) {
            agree &= v[j].p == v[i].p && v[j].q == v[i].q;
            j++;
        }
        v[w] = v[i];
        if (!agree || j - i < least)
            v[w].p = INT8_MIN;
        w++;
        i = j;
    }
    return w;
}

/*
 * An allocation of the base that paired in no other capture (law NONE)
 * but has stack frames takes the power law of its call site: that of the
 * paired allocations of its call site with its very size in the base (the
 * same tensor shape from the same line: another layer's, another step's),
 * when they agree; else that of all the paired allocations of its call
 * site, when there are two or more and they all agree.  A tensor made
 * before the other capture's window began, or in a step that window does
 * not hold, is shaped by its line of code as its siblings are.  GM_ENOMEM.
 */
int sc_site_laws(gm_scale_plan_t *pl, gm_error_t *err)
{
    const gm_align_trace_t *t = pl->t[pl->base];
    size_t m = 0;
    for (uint64_t i = 0; i < pl->nallocs; i++)
        m += (pl->law[i] == GM_SCALE_LAW_CONST || pl->law[i] == GM_SCALE_LAW_POWER) &&
             t->allocs[i].frames != 0;
    if (m == 0)
        return 0;
    sc_site_t *bysize = malloc(m * sizeof *bysize), *bykey = malloc(m * sizeof *bykey);
    if (bysize == NULL || bykey == NULL) {
        free(bysize);
        free(bykey);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (uint64_t i = 0; i < pl->nallocs; i++)
        if ((pl->law[i] == GM_SCALE_LAW_CONST || pl->law[i] == GM_SCALE_LAW_POWER) &&
            t->allocs[i].frames != 0) {
            bysize[k] = (sc_site_t){t->allocs[i].key, t->allocs[i].size, pl->pe[i], pl->qe[i]};
            bykey[k] = (sc_site_t){t->allocs[i].key, 0, pl->pe[i], pl->qe[i]};
            k++;
        }
    qsort(bysize, m, sizeof *bysize, sc_site_cmp);
    qsort(bykey, m, sizeof *bykey, sc_site_cmp);
    size_t ws = sc_site_compact(bysize, m, 1), wk = sc_site_compact(bykey, m, 2);
    for (uint64_t i = 0; i < pl->nallocs; i++) {
        if (pl->law[i] != GM_SCALE_LAW_NONE || t->allocs[i].frames == 0)
            continue;
        sc_site_t probe = {t->allocs[i].key, t->allocs[i].size, 0, 0};
        const sc_site_t *f = bsearch(&probe, bysize, ws, sizeof *bysize, sc_site_cmp);
        if (f == NULL || f->p == INT8_MIN) {
            probe.size = 0;
            f = bsearch(&probe, bykey, wk, sizeof *bykey, sc_site_cmp);
        }
        if (f == NULL || f->p == INT8_MIN)
            continue;
        pl->law[i] = GM_SCALE_LAW_SITE;
        pl->pe[i] = f->p;
        pl->qe[i] = f->q;
    }
    free(bysize);
    free(bykey);
    return 0;
}

/* ---- pre-existing allocations ------------------------------------------------------- */

/* (size, order, id) of one allocation, for grouping by size in order. */
typedef struct sc_zid {
    uint64_t size, order, id;
} sc_zid_t;

static int sc_zid_cmp(const void *x, const void *y)
{
    const sc_zid_t *a = x, *b = y;
    return gm__cmp_u64_keys((const uint64_t[]){a->size, a->order, a->id},
                            (const uint64_t[]){b->size, b->order, b->id}, 3);
}

/* An allocation's key with its lifetime mixed in: freed in the window or
 * never (a weight kept for good and a warm-up's tensor of its size and
 * call site are different tensors). */
static uint64_t sc_lifetime_key(const gm_align_alloc_t *a)
{
    return a->key ^ (a->free_event == UINT64_MAX ? 0 : UINT64_C(0x9e3779b97f4a7c15));
}

static int sc_has_law(const gm_scale_plan_t *pl, uint64_t i)
{
    return pl->law[i] == GM_SCALE_LAW_CONST || pl->law[i] == GM_SCALE_LAW_POWER ||
           pl->law[i] == GM_SCALE_LAW_SITE;
}

/*
 * A pre-existing allocation of the base still without a law (no frames:
 * made before the recording began; or frames whose call site has no law:
 * the stack of the free that released it) is the tensor of an earlier
 * pass kept alive: a warm-up's graph, held until the recorded pass
 * replaces it, holds the tensors the recorded pass holds at its end.  So,
 * by size: when the base's allocations of that size alive at its end and
 * following a law are as many as these, the k-th of these takes the law
 * of the k-th of those, these in the reverse of the order they are freed
 * in (a graph is released from its outputs back: the last freed was made
 * first), those in allocation order, so that twins of one size whose
 * laws differ are told apart by their lifetimes and not by the order a
 * snapshot lists them in (address order); else each takes the law its
 * paired pre-existing siblings agree on (of its key, size and lifetime:
 * freed in the window or never; the chunks of a warm-up's loop whose
 * number grows with the size, some paired and some not, synth/
 * scale_counts.c); else, when the paired
 * allocations of that size in the base all agree on one law, that law.
 * Otherwise it keeps its size (NONE).  GM_ENOMEM.
 */
int sc_pre_laws(gm_scale_plan_t *pl, gm_error_t *err)
{
    const gm_align_trace_t *t = pl->t[pl->base];
    size_t nu = 0, ne = 0, nz = 0, np = 0;
    for (uint64_t i = 0; i < pl->nallocs; i++) {
        const gm_align_alloc_t *a = &t->allocs[i];
        int law = pl->law[i] == GM_SCALE_LAW_CONST || pl->law[i] == GM_SCALE_LAW_POWER;
        nu += a->preexisting && pl->law[i] == GM_SCALE_LAW_NONE;
        ne += !a->preexisting && a->free_event == UINT64_MAX && sc_has_law(pl, i);
        nz += law;
        np += law && a->preexisting;
    }
    if (nu == 0 || (ne == 0 && nz == 0))
        return 0;
    sc_zid_t *u = malloc(nu * sizeof *u), *e = malloc((ne ? ne : 1) * sizeof *e);
    sc_site_t *byz = malloc((nz ? nz : 1) * sizeof *byz);
    sc_site_t *bypre = malloc((np ? np : 1) * sizeof *bypre);
    if (u == NULL || e == NULL || byz == NULL || bypre == NULL) {
        free(u);
        free(e);
        free(byz);
        free(bypre);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    nu = ne = nz = np = 0;
    for (uint64_t i = 0; i < pl->nallocs; i++) {
        const gm_align_alloc_t *a = &t->allocs[i];
        /* the earlier pass's graph freed from its outputs back (the
         * last freed made first); those never freed after, by id */
        if (a->preexisting && pl->law[i] == GM_SCALE_LAW_NONE)
            u[nu++] = (sc_zid_t){a->size,
                                 a->free_event == UINT64_MAX ? UINT64_MAX
                                                             : UINT64_MAX - 1 - a->free_event,
                                 i};
        if (!a->preexisting && a->free_event == UINT64_MAX && sc_has_law(pl, i))
            e[ne++] = (sc_zid_t){a->size, 0, i};
        if (pl->law[i] == GM_SCALE_LAW_CONST || pl->law[i] == GM_SCALE_LAW_POWER) {
            byz[nz++] = (sc_site_t){0, a->size, pl->pe[i], pl->qe[i]};
            if (a->preexisting)
                bypre[np++] = (sc_site_t){sc_lifetime_key(a), a->size, pl->pe[i], pl->qe[i]};
        }
    }
    qsort(u, nu, sizeof *u, sc_zid_cmp);
    qsort(e, ne, sizeof *e, sc_zid_cmp);
    qsort(byz, nz, sizeof *byz, sc_site_cmp);
    qsort(bypre, np, sizeof *bypre, sc_site_cmp);
    size_t wz = sc_site_compact(byz, nz, 1), wp = sc_site_compact(bypre, np, 1);
    size_t j = 0;
    for (size_t i = 0; i < nu;) {
        size_t i1 = i;
        while (i1 < nu && u[i1].size == u[i].size)
            i1++;
        while (j < ne && e[j].size < u[i].size)
            j++;
        size_t j1 = j;
        while (j1 < ne && e[j1].size == u[i].size)
            j1++;
        if (j1 - j == i1 - i) { /* the recorded pass's twins, one for one */
            for (size_t k = 0; k < i1 - i; k++) {
                uint64_t id = u[i + k].id, tw = e[j + k].id;
                pl->law[id] = GM_SCALE_LAW_SITE;
                pl->pe[id] = pl->pe[tw];
                pl->qe[id] = pl->qe[tw];
            }
        } else {
            sc_site_t probe = {0, u[i].size, 0, 0};
            const sc_site_t *f = bsearch(&probe, byz, wz, sizeof *byz, sc_site_cmp);
            for (size_t k = i; k < i1; k++) {
                /* its paired siblings: of its key, size and lifetime */
                sc_site_t pp = {sc_lifetime_key(&t->allocs[u[k].id]), u[k].size, 0, 0};
                const sc_site_t *g = bsearch(&pp, bypre, wp, sizeof *bypre, sc_site_cmp);
                if (g == NULL || g->p == INT8_MIN)
                    g = f;
                if (g == NULL || g->p == INT8_MIN)
                    continue;
                pl->law[u[k].id] = GM_SCALE_LAW_SITE;
                pl->pe[u[k].id] = g->p;
                pl->qe[u[k].id] = g->q;
            }
        }
        i = i1;
    }
    free(u);
    free(e);
    free(byz);
    free(bypre);
    return 0;
}
