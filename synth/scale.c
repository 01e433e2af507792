/*
 * synth/scale.c — predict a captured job at other sizes from two or more
 * captures of it (gmsim/scale.h; docs/validation.md for users).
 *
 * Method.
 *   1. Sizes.  Each capture's (seq, batch) comes from the caller or its
 *      trace attributes.  Two captures of equal sizes, or one capture, are
 *      refused: they determine no law.
 *   2. Alignment.  The base capture (by default the largest) gives the
 *      event sequence.  Every other capture is aligned with it allocation
 *      by allocation (synth/align.c: frames, marks and the action
 *      sequence, anchored at the windows' ends).  A capture whose aligned
 *      windows pair less than min_matched of their allocations is refused,
 *      naming where the alignment broke: another program, or the same one
 *      taking another path.
 *   3. Laws.  Per base allocation, the points (seq_k, batch_k, size_k) of
 *      the captures it paired with give its law, the first that fits:
 *        constant / power   size = c · seq^p · batch^q, integers |p|,|q| ≤ 4,
 *                           checked exactly (cross-multiplied in 128-bit
 *                           integers) at every point; the smallest |p|+|q|
 *                           that fits wins;
 *        polynomial         with three or more points along one dimension:
 *                           a + b·x (three points) or a + b·x + c·x² (four
 *                           or more) through all points but the last,
 *                           verified on it (within half a byte);
 *        affine             two points: the line through them (nothing to
 *                           verify it on: reported apart);
 *        site               paired in no other capture, but the paired
 *                           allocations of its call site (stack frames)
 *                           of its size in the base, else two or more of
 *                           any size, all follow one power law: that law,
 *                           from its own size (sc_site_laws);
 *        none               paired in no other capture: the captured size.
 *      Three or more points that fit neither a power law nor the verified
 *      polynomial contradict each other: refused, naming the allocation and
 *      its sizes, unless force (then kept at its captured size).
 *   4. Writing a target.  The base's events are streamed through the store
 *      writer with each ALLOC's size from its law (a power law's quotient
 *      rounded to the nearest byte; polynomials evaluated in long double
 *      and rounded); segment events are dropped (they record the captured
 *      run's allocator, which the replays re-derive).  Every size is
 *      predicted before the writer begins, so a law that gives a size out
 *      of range fails with nothing written.
 *   5. The layout.  The base's recorded starting layout is scaled: each
 *      allocated block gets its pre-existing allocation's new size (plus
 *      the slack the allocator had given it beyond its rounded request),
 *      free blocks grow as their segment's allocated bytes grew, large
 *      segments round up to 2 MiB, small ones keep their 2 MiB (blocks
 *      that no longer fit are left out: the replay then serves those
 *      allocations by the allocator's rules), addresses shift so segments
 *      stay in order without overlapping.  Wholly free segments are left
 *      out: they are the allocator's cache of earlier iterations'
 *      tensors, sized by that history and not by any law (scaling them
 *      with the activations put the lmmedium training job 256 -> 128 23%
 *      over the real reserved peak; leaving them out, the replay
 *      re-creates what the window needs: within 0.5% both ways,
 *      docs/validation.md).
 *
 * Invariant: the scaled trace has the base's events, ids, streams, marks
 * and frames one for one; only ALLOC sizes, the layout and attributes
 * differ.  Memory: the captures' allocation tables (gm_align_trace_t) and
 * sizes per (allocation, capture); events stream a chunk at a time.
 */
#include "gmsim/scale.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/align.h"
#include "gmsim/json.h"
#include "gmsim/layout.h"
#include "gmsim/attrs.h"

#define SC_MAXP 4
#define SC_MIB (UINT64_C(1) << 20)
#define SC_SMALL_SEGMENT (2 * SC_MIB)
#define SC_ROUND_LARGE (2 * SC_MIB)
#define SC_CONTRADICT 0xff

static const char *const sc_law_names[GM_SCALE_LAW_COUNT] = {
#define SC_LAW_NAME(e, s, d) s,
    GM_SCALE_LAWS(SC_LAW_NAME)
#undef SC_LAW_NAME
};

const char *gm_scale_law_name(unsigned law)
{
    return law < GM_SCALE_LAW_COUNT ? sc_law_names[law] : NULL;
}

struct gm_scale_plan {
    size_t n, base;
    gm_store_t *store[GM_SCALE_MAX_CAPTURES];
    char *trace[GM_SCALE_MAX_CAPTURES];
    char *label[GM_SCALE_MAX_CAPTURES];
    uint64_t seq[GM_SCALE_MAX_CAPTURES], batch[GM_SCALE_MAX_CAPTURES];
    gm_align_trace_t *t[GM_SCALE_MAX_CAPTURES];
    uint64_t nallocs; /* of the base */
    uint64_t *z;      /* [alloc * n + capture]: size, 0 = not paired */
    uint8_t *law;     /* gm_scale_law_t */
    int8_t *pe, *qe;  /* power exponents */
    uint8_t *deg;     /* polynomial degree (AFFINE: 1) */
    uint8_t *var;     /* 0: polynomial in seq, 1: in batch */
    gm_scale_report_t rep;
};

static char *sc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

void gm_scale_plan_destroy(gm_scale_plan_t *p)
{
    if (p == NULL)
        return;
    for (size_t k = 0; k < p->n; k++) {
        free(p->trace[k]);
        free(p->label[k]);
        gm_align_trace_free(p->t[k]);
    }
    free(p->z);
    free(p->law);
    free(p->pe);
    free(p->qe);
    free(p->deg);
    free(p->var);
    free(p);
}

const gm_scale_report_t *gm_scale_plan_report(const gm_scale_plan_t *p)
{
    return &p->rep;
}

/* ---- exact power laws ------------------------------------------------------------ */

typedef unsigned __int128 sc_u128;

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
static int sc_power_frac(uint64_t z, uint64_t s0, uint64_t s1, uint64_t b0, uint64_t b1, int p,
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

/* 1 if every point of allocation i follows c · seq^p · batch^q exactly. */
static int sc_power_fits(const gm_scale_plan_t *pl, uint64_t i, int p, int q)
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
static size_t sc_points(const gm_scale_plan_t *pl, uint64_t i, int var, long double *xs,
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
static long double sc_lagrange(const long double *xs, const long double *zs, size_t m,
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
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->size < b->size ? -1 : a->size > b->size;
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
static int sc_site_laws(gm_scale_plan_t *pl, gm_error_t *err)
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

/* ---- the plan ---------------------------------------------------------------------- */

static void sc_describe(const gm_scale_plan_t *pl, uint64_t i, char *buf, size_t len)
{
    const gm_align_trace_t *t = pl->t[pl->base];
    const gm_align_alloc_t *a = &t->allocs[i];
    const char *fr = a->frames && a->frames < t->nframes ? t->frames[a->frames] : NULL;
    int flen = 0;
    if (fr != NULL) {
        const char *nl = strchr(fr, '\n');
        flen = nl ? (int)(nl - fr) : (int)strlen(fr);
        if (flen > 80)
            flen = 80;
    }
    int off = snprintf(buf, len, "allocation %" PRIu64 " (event %" PRIu64 ") of '%s'%s%.*s%s", i,
                       a->event, pl->label[pl->base], fr ? ", frames '" : "", flen,
                       fr ? fr : "", fr ? "'" : "");
    int first = 1;
    for (size_t k = 0; k < pl->n && off > 0 && (size_t)off < len; k++) {
        uint64_t zk = pl->z[i * pl->n + k];
        if (zk == 0)
            continue;
        off += snprintf(buf + off, len - (size_t)off, "%s%" PRIu64 " B at seq %" PRIu64,
                        first ? ": " : ", ", zk, pl->seq[k]);
        first = 0;
        if (pl->rep.vary_batch && off > 0 && (size_t)off < len)
            off += snprintf(buf + off, len - (size_t)off, " batch %" PRIu64, pl->batch[k]);
    }
}

/* Fit allocation i's law. */
static void sc_fit(gm_scale_plan_t *pl, uint64_t i)
{
    size_t n = pl->n;
    size_t npts = 0;
    int vs = 0, vb = 0;
    uint64_t s0 = 0, b0 = 0;
    for (size_t k = 0; k < n; k++) {
        if (pl->z[i * n + k] == 0)
            continue;
        if (npts++ == 0) {
            s0 = pl->seq[k];
            b0 = pl->batch[k];
        } else {
            vs |= pl->seq[k] != s0;
            vb |= pl->batch[k] != b0;
        }
    }
    pl->pe[i] = pl->qe[i] = 0;
    pl->deg[i] = pl->var[i] = 0;
    if (npts <= 1) {
        pl->law[i] = GM_SCALE_LAW_NONE;
        return;
    }
    int pm = vs ? SC_MAXP : 0, qm = vb ? SC_MAXP : 0;
    for (int tot = 0; tot <= pm + qm; tot++)
        for (int p = -pm; p <= pm; p++) {
            int rest = tot - (p < 0 ? -p : p);
            if (rest < 0 || rest > qm)
                continue;
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                int q = sgn * rest;
                if (rest == 0 && sgn > 0)
                    continue;
                if (sc_power_fits(pl, i, p, q)) {
                    pl->pe[i] = (int8_t)p;
                    pl->qe[i] = (int8_t)q;
                    pl->law[i] = p == 0 && q == 0 ? GM_SCALE_LAW_CONST : GM_SCALE_LAW_POWER;
                    return;
                }
            }
        }
    if (vs && vb) { /* no polynomial in two dimensions */
        pl->law[i] = npts >= 3 ? SC_CONTRADICT : GM_SCALE_LAW_NONE;
        return;
    }
    int var = vb;
    pl->var[i] = (uint8_t)var;
    if (npts == 2) {
        pl->law[i] = GM_SCALE_LAW_AFFINE;
        pl->deg[i] = 1;
        return;
    }
    long double xs[GM_SCALE_MAX_CAPTURES], zs[GM_SCALE_MAX_CAPTURES];
    size_t m = sc_points(pl, i, var, xs, zs);
    size_t deg = m - 2 < 2 ? m - 2 : 2;
    /* fit on deg+1 points (all but the last when m = deg+2), verify on the rest */
    for (size_t k = deg + 1; k < m; k++) {
        long double v = sc_lagrange(xs, zs, deg + 1, xs[k]);
        if (fabsl(v - zs[k]) >= 0.5L) {
            pl->law[i] = SC_CONTRADICT;
            return;
        }
    }
    pl->law[i] = GM_SCALE_LAW_POLY;
    pl->deg[i] = (uint8_t)deg;
}

/* "seq S, batch B", leaving out an unknown (0) one. */
static void sc_sizes_text(uint64_t seq, uint64_t batch, char *buf, size_t len)
{
    if (seq && batch)
        snprintf(buf, len, "seq %" PRIu64 ", batch %" PRIu64, seq, batch);
    else if (seq)
        snprintf(buf, len, "seq %" PRIu64, seq);
    else
        snprintf(buf, len, "batch %" PRIu64, batch);
}

static int sc_sizes_of(gm_scale_plan_t *pl, const gm_scale_capture_t *c, size_t k,
                       int *has_seq, int *has_batch, gm_error_t *err)
{
    gm_trace_info_t info;
    int rc = gm_store_find(c->store, c->trace, &info, err);
    if (rc)
        return rc;
    int64_t s = gm_attr_int(info.attrs, GM_ATTR_SEQ_LEN), b = gm_attr_int(info.attrs, GM_ATTR_BATCH);
    gm_trace_info_release(&info);
    pl->seq[k] = c->seq ? c->seq : (s > 0 ? (uint64_t)s : 0);
    pl->batch[k] = c->batch ? c->batch : (b > 0 ? (uint64_t)b : 0);
    *has_seq = pl->seq[k] != 0;
    *has_batch = pl->batch[k] != 0;
    return 0;
}

/* Group the allocations of law NONE by key into rep.none_sites, the most
 * bytes first.  GM_ENOMEM. */
typedef struct sc_none {
    uint64_t key, allocs, bytes, first;
} sc_none_t;

static int sc_none_key_cmp(const void *x, const void *y)
{
    const sc_none_t *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

static int sc_none_bytes_cmp(const void *x, const void *y)
{
    const sc_none_t *a = x, *b = y;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

static int sc_none_sites(gm_scale_plan_t *pl, gm_error_t *err)
{
    const gm_align_trace_t *t = pl->t[pl->base];
    size_t m = (size_t)pl->rep.law_allocs[GM_SCALE_LAW_NONE];
    if (m == 0)
        return 0;
    sc_none_t *v = malloc(m * sizeof *v);
    if (v == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    size_t k = 0;
    for (uint64_t i = 0; i < pl->nallocs && k < m; i++)
        if (pl->law[i] == GM_SCALE_LAW_NONE)
            v[k++] = (sc_none_t){t->allocs[i].key, 1, t->allocs[i].size, i};
    qsort(v, k, sizeof *v, sc_none_key_cmp);
    size_t w = 0;
    for (size_t i = 0; i < k;) {
        size_t j = i + 1;
        v[w] = v[i];
        while (j < k && v[j].key == v[i].key) {
            v[w].allocs++;
            v[w].bytes += v[j].bytes;
            j++;
        }
        w++;
        i = j;
    }
    qsort(v, w, sizeof *v, sc_none_bytes_cmp);
    gm_scale_report_t *r = &pl->rep;
    for (size_t i = 0; i < w && i < GM_SCALE_NONE_SITES; i++) {
        r->none_sites[i].allocs = v[i].allocs;
        r->none_sites[i].bytes = v[i].bytes;
        r->none_sites[i].first = v[i].first;
        sc_describe(pl, v[i].first, r->none_sites[i].where, sizeof r->none_sites[i].where);
        r->nnone_sites++;
    }
    free(v);
    return 0;
}

int gm_scale_plan_create(const gm_scale_capture_t *caps, size_t n, const gm_scale_options_t *opts,
                         gm_scale_plan_t **out, gm_error_t *err)
{
    *out = NULL;
    gm_scale_options_t o = {.base = -1};
    if (opts != NULL)
        o = *opts;
    double minm = o.min_matched > 0 ? o.min_matched : 0.9;
    if (n < 2)
        return gm_error_set(err, GM_EINVAL,
                            "scaling needs two or more captures of the job at different sizes "
                            "(got %zu)", n);
    if (n > GM_SCALE_MAX_CAPTURES)
        return gm_error_set(err, GM_EINVAL, "too many captures (%zu, at most %d)", n,
                            GM_SCALE_MAX_CAPTURES);
    gm_scale_plan_t *pl = calloc(1, sizeof *pl);
    if (pl == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    pl->n = n;
    int rc = 0, any_seq = 0, any_batch = 0, hs[GM_SCALE_MAX_CAPTURES], hb[GM_SCALE_MAX_CAPTURES];
    for (size_t k = 0; k < n; k++) {
        pl->store[k] = caps[k].store;
        pl->trace[k] = sc_strdup(caps[k].trace);
        pl->label[k] = sc_strdup(caps[k].label ? caps[k].label : caps[k].trace);
        if (pl->trace[k] == NULL || pl->label[k] == NULL) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            goto fail;
        }
        if ((rc = sc_sizes_of(pl, &caps[k], k, &hs[k], &hb[k], err)))
            goto fail;
        any_seq |= hs[k];
        any_batch |= hb[k];
    }
    for (size_t k = 0; k < n; k++) {
        if ((any_seq && !hs[k]) || (any_batch && !hb[k]) || (!any_seq && !any_batch)) {
            rc = gm_error_set(err, GM_EINVAL,
                              "'%s' has no %s (give it, or tag the trace with a '%s' attribute)",
                              pl->label[k], any_seq && !hs[k] ? "sequence length" : "batch size",
                              any_seq && !hs[k] ? "seq_len" : "batch");
            if (!any_seq && !any_batch)
                rc = gm_error_set(err, GM_EINVAL,
                                  "'%s' has no sequence length or batch size (give them, or "
                                  "tag the trace with 'seq_len' / 'batch' attributes)",
                                  pl->label[k]);
            goto fail;
        }
        for (size_t j = 0; j < k; j++)
            if (pl->seq[j] == pl->seq[k] && pl->batch[j] == pl->batch[k]) {
                char sz[64];
                sc_sizes_text(pl->seq[k], pl->batch[k], sz, sizeof sz);
                rc = gm_error_set(err, GM_EINVAL,
                                  "'%s' and '%s' have equal sizes (%s): captures at different "
                                  "sizes are needed",
                                  pl->label[j], pl->label[k], sz);
                goto fail;
            }
    }
    /* the base */
    if (o.base >= 0) {
        if ((size_t)o.base >= n) {
            rc = gm_error_set(err, GM_EINVAL, "base capture %d out of range (1 to %zu)",
                              o.base + 1, n);
            goto fail;
        }
        pl->base = (size_t)o.base;
    } else {
        sc_u128 best = 0;
        for (size_t k = 0; k < n; k++) {
            sc_u128 v = (sc_u128)(pl->seq[k] ? pl->seq[k] : 1) * (pl->batch[k] ? pl->batch[k] : 1);
            if (v > best) {
                best = v;
                pl->base = k;
            }
        }
    }
    size_t b = pl->base;
    gm_scale_report_t *rep = &pl->rep;
    rep->ncaptures = n;
    rep->base = b;
    rep->none_first = -1;
    for (size_t k = 0; k < n; k++) {
        rep->seq[k] = pl->seq[k];
        rep->batch[k] = pl->batch[k];
        rep->vary_seq |= pl->seq[k] != pl->seq[0];
        rep->vary_batch |= pl->batch[k] != pl->batch[0];
        if ((rc = gm_align_trace_load(pl->store[k], pl->trace[k], &pl->t[k], err))) {
            gm_error_prefix(err, "'%s'", pl->label[k]);
            goto fail;
        }
    }
    pl->nallocs = pl->t[b]->nallocs;
    size_t na = pl->nallocs ? pl->nallocs : 1;
    pl->z = calloc(na * n, sizeof *pl->z);
    pl->law = calloc(na, 1);
    pl->pe = calloc(na, 1);
    pl->qe = calloc(na, 1);
    pl->deg = calloc(na, 1);
    pl->var = calloc(na, 1);
    if (pl->z == NULL || pl->law == NULL || pl->pe == NULL || pl->qe == NULL ||
        pl->deg == NULL || pl->var == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto fail;
    }
    for (uint64_t i = 0; i < pl->nallocs; i++)
        pl->z[i * n + b] = pl->t[b]->allocs[i].size;

    /* align every other capture with the base */
    for (size_t k = 0; k < n; k++) {
        if (k == b)
            continue;
        gm_align_options_t ao = {pl->seq[b], pl->seq[k], pl->batch[b], pl->batch[k], o.max_edits};
        gm_align_result_t r;
        if ((rc = gm_align_traces(pl->t[b], pl->t[k], &ao, &r, err))) {
            gm_align_result_release(&r);
            goto fail;
        }
        gm_scale_pairing_t *pr = &rep->pairing[k];
        pr->matched = r.matched;
        pr->matched_size = r.matched_size;
        pr->window_base = r.window_a;
        pr->window_other = r.window_b;
        uint64_t win = r.window_a > r.window_b ? r.window_a : r.window_b;
        pr->share = win ? (double)r.matched / (double)win : 0.0;
        snprintf(pr->where, sizeof pr->where, "%s", r.where);
        for (uint64_t i = 0; i < pl->nallocs; i++)
            if (r.a_to_b[i] >= 0)
                pl->z[i * n + k] = pl->t[k]->allocs[r.a_to_b[i]].size;
        gm_align_result_release(&r);
        if (pr->share < minm && !o.force) {
            rc = gm_error_set(err, GM_EFORMAT,
                              "'%s' does not align with '%s': %" PRIu64 " of %" PRIu64
                              " allocations paired (%.1f%%, below %.0f%%)%s%s; different "
                              "programs? (--force to go on)",
                              pl->label[k], pl->label[b], pr->matched, win, 100.0 * pr->share,
                              100.0 * minm, pr->where[0] ? "; it breaks at " : "", pr->where);
            goto fail;
        }
    }

    /* the laws */
    for (uint64_t i = 0; i < pl->nallocs; i++) {
        sc_fit(pl, i);
        if (pl->law[i] == SC_CONTRADICT && !o.force) {
            char what[400];
            sc_describe(pl, i, what, sizeof what);
            rc = gm_error_set(err, GM_EFORMAT,
                              "contradicting laws: %s follow neither a power law nor a "
                              "polynomial (--force keeps it at its captured size)",
                              what);
            goto fail;
        }
    }
    if ((rc = sc_site_laws(pl, err)))
        goto fail;
    for (uint64_t i = 0; i < pl->nallocs; i++) {
        const gm_align_alloc_t *a = &pl->t[b]->allocs[i];
        if (pl->law[i] == SC_CONTRADICT) {
            rep->contradicting++;
            pl->law[i] = GM_SCALE_LAW_NONE;
        }
        rep->allocs++;
        rep->bytes += a->size;
        rep->law_allocs[pl->law[i]]++;
        rep->law_bytes[pl->law[i]] += a->size;
        if (pl->law[i] <= GM_SCALE_LAW_POWER || pl->law[i] == GM_SCALE_LAW_SITE) {
            rep->power_p[pl->pe[i] + SC_MAXP]++;
            rep->power_q[pl->qe[i] + SC_MAXP]++;
        }
        if (a->preexisting) {
            rep->preexisting++;
            for (size_t k = 0; k < n; k++)
                if (k != b && pl->z[i * n + k] != 0) {
                    rep->preexisting_paired++;
                    break;
                }
        }
        if (pl->law[i] == GM_SCALE_LAW_NONE && rep->none_first < 0) {
            rep->none_first = (int64_t)i;
            sc_describe(pl, i, rep->none_where, sizeof rep->none_where);
        }
    }
    if ((rc = sc_none_sites(pl, err)))
        goto fail;
    *out = pl;
    return 0;
fail:
    gm_scale_plan_destroy(pl);
    return rc;
}

int gm_scale_check_target(const gm_scale_plan_t *p, uint64_t seq, uint64_t batch,
                          gm_error_t *err)
{
    const gm_scale_report_t *r = &p->rep;
    size_t b = p->base;
    if (seq && !p->seq[b])
        return gm_error_set(err, GM_EINVAL, "the captures have no sequence length: cannot "
                                            "scale to seq %" PRIu64, seq);
    if (batch && !p->batch[b])
        return gm_error_set(err, GM_EINVAL, "the captures have no batch size: cannot scale "
                                            "to batch %" PRIu64, batch);
    if (seq && seq != p->seq[b] && !r->vary_seq)
        return gm_error_set(err, GM_EINVAL,
                            "the sequence length does not vary among the captures (all %" PRIu64
                            "): cannot scale to seq %" PRIu64,
                            p->seq[b], seq);
    if (batch && batch != p->batch[b] && !r->vary_batch)
        return gm_error_set(err, GM_EINVAL,
                            "the batch size does not vary among the captures (all %" PRIu64
                            "): cannot scale to batch %" PRIu64,
                            p->batch[b], batch);
    return 0;
}

int gm_scale_predict(const gm_scale_plan_t *p, uint64_t id, uint64_t seq, uint64_t batch,
                     gm_scale_law_t *law, int *pexp, int *qexp, uint64_t *size, gm_error_t *err)
{
    if (id >= p->nallocs)
        return gm_error_set(err, GM_EINVAL, "allocation %" PRIu64 " out of range", id);
    size_t b = p->base, n = p->n;
    uint64_t sb = p->seq[b] ? p->seq[b] : 1, bb = p->batch[b] ? p->batch[b] : 1;
    uint64_t st = seq ? seq : sb, bt = batch ? batch : bb;
    uint64_t zb = p->z[id * n + b];
    gm_scale_law_t l = (gm_scale_law_t)p->law[id];
    if (law)
        *law = l;
    if (pexp)
        *pexp = p->pe[id];
    if (qexp)
        *qexp = p->qe[id];
    switch (l) {
    case GM_SCALE_LAW_POWER:
    case GM_SCALE_LAW_SITE: {
        sc_u128 num, den;
        if (sc_power_frac(zb, sb, st, bb, bt, p->pe[id], p->qe[id], &num, &den) == 0 &&
            num / den < GM_SIZE_LIMIT) {
            *size = (uint64_t)(num / den) + ((num % den) * 2 >= den);
            if (*size > 0)
                return 0;
        }
        break;
    }
    case GM_SCALE_LAW_POLY:
    case GM_SCALE_LAW_AFFINE: {
        long double xs[GM_SCALE_MAX_CAPTURES], zs[GM_SCALE_MAX_CAPTURES];
        size_t m = sc_points(p, id, p->var[id], xs, zs);
        size_t use = (size_t)p->deg[id] + 1;
        long double v = roundl(
            sc_lagrange(xs, zs, use < m ? use : m, (long double)(p->var[id] ? bt : st)));
        if (v >= 1 && v <= (long double)GM_SIZE_LIMIT) {
            *size = (uint64_t)v;
            return 0;
        }
        break;
    }
    default:
        *size = zb;
        return 0;
    }
    char what[400];
    sc_describe(p, id, what, sizeof what);
    char sz[64];
    sc_sizes_text(p->seq[b] ? st : 0, p->batch[b] ? bt : 0, sz, sizeof sz);
    return gm_error_set(err, GM_EINVAL, "the %s law of %s gives no size in range at %s",
                        sc_law_names[l], what, sz);
}

/* ---- writing --------------------------------------------------------------------- */

/* Write v as JSON text through j. */
static void sc_json_value(gm_json_t *j, const gm_jv_t *v)
{
    switch (gm_jv_type(v)) {
    case GM_JV_NULL:
        gm_json_null(j);
        break;
    case GM_JV_BOOL:
        gm_json_bool(j, gm_jv_bool(v));
        break;
    case GM_JV_NUMBER: {
        uint64_t u;
        int64_t s;
        if (gm_jv_u64(v, &u) == 0)
            gm_json_u64(j, u);
        else if (gm_jv_i64(v, &s) == 0)
            gm_json_i64(j, s);
        else
            gm_json_double(j, gm_jv_num(v));
        break;
    }
    case GM_JV_STRING:
        gm_json_str(j, gm_jv_str(v));
        break;
    case GM_JV_ARRAY:
        gm_json_begin_array(j);
        for (size_t i = 0; i < gm_jv_len(v); i++)
            sc_json_value(j, gm_jv_at(v, i));
        gm_json_end_array(j);
        break;
    case GM_JV_OBJECT:
        gm_json_begin_object(j);
        for (size_t i = 0; i < gm_jv_len(v); i++) {
            gm_json_key(j, gm_jv_key_at(v, i));
            sc_json_value(j, gm_jv_at(v, i));
        }
        gm_json_end_object(j);
        break;
    }
}

/* Attributes of the base that no longer describe the scaled trace. */
static int sc_attr_dropped(const char *key)
{
    static const char *const drop[] = {"seq_len", "batch", "recorded", "dropped_zero_size",
                                       "config", "source", "scaled_from", "scale_laws",
                                       "reconstruction_mismatches", "digest"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
        if (strcmp(key, drop[i]) == 0)
            return 1;
    return 0;
}

static int sc_write_attrs(gm_scale_plan_t *p, gm_writer_t *w, const char *attrs, uint64_t seq,
                          uint64_t batch, gm_error_t *err)
{
    gm_jv_t *root = NULL;
    int rc = gm_json_parse(attrs, strlen(attrs), &root, err);
    if (rc)
        return rc;
    char *buf = NULL;
    size_t len = 0;
    for (size_t i = 0; rc == 0 && i < gm_jv_len(root); i++) {
        const char *key = gm_jv_key_at(root, i);
        if (key == NULL || sc_attr_dropped(key))
            continue;
        FILE *f = open_memstream(&buf, &len);
        if (f == NULL) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
        gm_json_t j;
        gm_json_init(&j, f, 0);
        sc_json_value(&j, gm_jv_at(root, i));
        int bad = ferror(f);
        fclose(f);
        if (bad)
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        else
            rc = gm_writer_attr_json(w, key, buf, err);
        free(buf);
        buf = NULL;
    }
    gm_jv_free(root);
    if (rc)
        return rc;
    /* scaled_from and the laws */
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    gm_json_t j;
    gm_json_init(&j, f, 0);
    gm_json_begin_array(&j);
    for (size_t k = 0; k < p->n; k++) {
        gm_json_begin_object(&j);
        gm_json_key(&j, "trace");
        gm_json_str(&j, p->label[k]);
        if (p->seq[k]) {
            gm_json_key(&j, "seq_len");
            gm_json_u64(&j, p->seq[k]);
        }
        if (p->batch[k]) {
            gm_json_key(&j, "batch");
            gm_json_u64(&j, p->batch[k]);
        }
        gm_json_key(&j, "base");
        gm_json_bool(&j, k == p->base);
        gm_json_end_object(&j);
    }
    gm_json_end_array(&j);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    rc = gm_writer_attr_json(w, GM_ATTR_SCALED_FROM, buf, err);
    free(buf);
    buf = NULL;
    if (rc)
        return rc;
    f = open_memstream(&buf, &len);
    if (f == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    gm_json_init(&j, f, 0);
    gm_json_begin_object(&j);
    for (unsigned l = 0; l < GM_SCALE_LAW_COUNT; l++) {
        gm_json_key(&j, sc_law_names[l]);
        gm_json_u64(&j, p->rep.law_allocs[l]);
    }
    gm_json_end_object(&j);
    bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    rc = gm_writer_attr_json(w, GM_ATTR_SCALE_LAWS, buf, err);
    free(buf);
    if (rc || (rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "scale", err)))
        return rc;
    if (seq && (rc = gm_writer_attr_int(w, GM_ATTR_SEQ_LEN, (int64_t)seq, err)))
        return rc;
    if (batch && (rc = gm_writer_attr_int(w, GM_ATTR_BATCH, (int64_t)batch, err)))
        return rc;
    return 0;
}

static uint64_t sc_round512(uint64_t x)
{
    return (x + 511) / 512 * 512;
}

/* The base's layout scaled (see the file comment); *out NULL when the base
 * has none. */
static int sc_scale_layout(gm_scale_plan_t *p, const uint64_t *nsize, gm_layout_t **out,
                           gm_error_t *err)
{
    *out = NULL;
    gm_layout_t *l = NULL;
    size_t b = p->base;
    int rc = gm_store_layout(p->store[b], p->trace[b], &l, err);
    if (rc || l == NULL)
        return rc;
    gm_layout_t *nl = calloc(1, sizeof *nl);
    if (nl == NULL)
        goto nomem;
    nl->segments = calloc(l->nsegments ? l->nsegments : 1, sizeof *nl->segments);
    nl->blocks = calloc(2 * l->nblocks + l->nsegments + 1, sizeof *nl->blocks);
    if (nl->segments == NULL || nl->blocks == NULL)
        goto nomem;
    int64_t shift = 0;
    for (size_t si = 0; si < l->nsegments; si++) {
        const gm_layout_segment_t *s = &l->segments[si];
        gm_layout_segment_t *d = &nl->segments[nl->nsegments];
        *d = *s;
        d->first_block = nl->nblocks;
        d->nblocks = 0;
        uint64_t old_alloc = 0, new_alloc = 0;
        for (size_t k = 0; k < s->nblocks; k++) {
            const gm_layout_block_t *x = &l->blocks[s->first_block + k];
            if (x->id != GM_LAYOUT_FREE)
                old_alloc += x->size;
        }
        if (old_alloc == 0) { /* a wholly free segment: cache, left out */
            shift -= (int64_t)s->size;
            continue;
        }
        /* allocated blocks resized; those that do not fit a small segment
         * left out (in order: the first that do not fit) */
        uint64_t cap = s->pool == GM_POOL_SMALL && !s->expandable ? s->size : UINT64_MAX;
        for (size_t k = 0; k < s->nblocks; k++) {
            const gm_layout_block_t *x = &l->blocks[s->first_block + k];
            gm_layout_block_t *y = &nl->blocks[nl->nblocks];
            if (x->id == GM_LAYOUT_FREE) {
                *y = *x;
                nl->nblocks++;
                continue;
            }
            if ((uint64_t)x->id >= p->nallocs)
                continue; /* names no allocation of the trace: drop it */
            uint64_t req = nsize[x->id];
            uint64_t slack = x->size > sc_round512(x->requested) ? x->size - sc_round512(x->requested) : 0;
            uint64_t sz = sc_round512(req) + slack;
            if (new_alloc + sz > cap)
                continue;
            y->id = x->id;
            y->requested = req;
            y->size = sz;
            new_alloc += sz;
            nl->nblocks++;
        }
        /* free space: grown as the segment's allocations grew */
        double ratio = (double)new_alloc / (double)old_alloc;
        uint64_t total = new_alloc;
        size_t lastfree = SIZE_MAX;
        size_t w = d->first_block;
        for (size_t k = d->first_block; k < nl->nblocks; k++) {
            gm_layout_block_t y = nl->blocks[k];
            if (y.id == GM_LAYOUT_FREE) {
                uint64_t fs = cap != UINT64_MAX ? y.size : sc_round512((uint64_t)((double)y.size * ratio));
                if (fs == 0)
                    continue;
                y.size = fs;
                total += fs;
                if (lastfree != SIZE_MAX && lastfree == w - 1) { /* merge */
                    nl->blocks[lastfree].size += fs;
                    continue;
                }
                lastfree = w;
            }
            nl->blocks[w++] = y;
        }
        nl->nblocks = w;
        /* the segment's size: small ones keep theirs, the free space
         * adjusted to tile it; large ones round up to 2 MiB */
        uint64_t size = cap != UINT64_MAX ? s->size
                                          : (total + SC_ROUND_LARGE - 1) / SC_ROUND_LARGE * SC_ROUND_LARGE;
        if (size == 0)
            size = SC_ROUND_LARGE;
        if (total > size) { /* small segment: free space shrinks to fit */
            uint64_t excess = total - size;
            for (size_t k = nl->nblocks; k-- > d->first_block && excess > 0;) {
                gm_layout_block_t *y = &nl->blocks[k];
                if (y->id != GM_LAYOUT_FREE)
                    continue;
                uint64_t cut = y->size < excess ? y->size : excess;
                y->size -= cut;
                excess -= cut;
            }
            total = size;
            /* drop emptied free blocks */
            size_t ww = d->first_block;
            for (size_t k = d->first_block; k < nl->nblocks; k++)
                if (nl->blocks[k].id != GM_LAYOUT_FREE || nl->blocks[k].size > 0)
                    nl->blocks[ww++] = nl->blocks[k];
            nl->nblocks = ww;
        }
        if (total < size) {
            uint64_t rest = size - total;
            if (nl->nblocks > d->first_block && nl->blocks[nl->nblocks - 1].id == GM_LAYOUT_FREE)
                nl->blocks[nl->nblocks - 1].size += rest;
            else
                nl->blocks[nl->nblocks++] = (gm_layout_block_t){0, rest, 0, GM_LAYOUT_FREE};
        }
        /* offsets */
        uint64_t off = 0;
        for (size_t k = d->first_block; k < nl->nblocks; k++) {
            nl->blocks[k].offset = off;
            off += nl->blocks[k].size;
        }
        d->nblocks = nl->nblocks - d->first_block;
        d->size = size;
        d->address = (uint64_t)((int64_t)s->address + shift);
        shift += (int64_t)size - (int64_t)s->size;
        nl->nsegments++;
    }
    gm_layout_free(l);
    if ((rc = gm_layout_validate(nl, err))) {
        gm_error_prefix(err, "the scaled layout");
        gm_layout_free(nl);
        return rc;
    }
    *out = nl;
    return 0;
nomem:
    gm_layout_free(l);
    gm_layout_free(nl);
    return gm_error_set(err, GM_ENOMEM, "out of memory");
}

#define SC_UNMAPPED UINT32_MAX

/* A cache of interned indices, base's → the writer's. */
typedef struct sc_map {
    uint32_t *v;
    size_t n;
} sc_map_t;

static int sc_map_get(sc_map_t *m, uint32_t i, uint32_t **slot)
{
    if (i >= m->n) {
        size_t nn = m->n ? m->n : 64;
        while (nn <= i)
            nn *= 2;
        uint32_t *nv = realloc(m->v, nn * sizeof *nv);
        if (nv == NULL)
            return -1;
        for (size_t k = m->n; k < nn; k++)
            nv[k] = SC_UNMAPPED;
        m->v = nv;
        m->n = nn;
    }
    *slot = &m->v[i];
    return 0;
}

int gm_scale_write(gm_scale_plan_t *p, uint64_t seq, uint64_t batch, gm_store_t *dst,
                   const char *name, unsigned flags, gm_error_t *err)
{
    int rc = gm_scale_check_target(p, seq, batch, err);
    if (rc)
        return rc;
    size_t b = p->base;
    if (seq == 0)
        seq = p->seq[b];
    if (batch == 0)
        batch = p->batch[b];
    uint64_t *nsize = malloc((p->nallocs ? p->nallocs : 1) * sizeof *nsize);
    if (nsize == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    for (uint64_t i = 0; i < p->nallocs; i++) {
        if ((rc = gm_scale_predict(p, i, seq, batch, NULL, NULL, NULL, &nsize[i], err))) {
            free(nsize);
            return rc;
        }
    }
    gm_layout_t *layout = NULL;
    if ((rc = sc_scale_layout(p, nsize, &layout, err))) {
        free(nsize);
        return rc;
    }
    gm_reader_t *r = NULL;
    gm_writer_t *w = NULL;
    sc_map_t streams = {0}, tags = {0}, frames = {0};
    if ((rc = gm_reader_open(p->store[b], p->trace[b], &r, err)))
        goto done;
    if ((rc = gm_writer_begin(dst, name, flags, &w, err)))
        goto done;
    if ((rc = sc_write_attrs(p, w, gm_reader_info(r)->attrs, seq, batch, err)))
        goto done;
    /* the base's streams and tags interned in its order, so that indices
     * (the layout's stream_index among them) stay the same */
    for (uint32_t i = 0; i < gm_reader_stream_count(r); i++) {
        uint32_t *slot;
        if (sc_map_get(&streams, i, &slot))
            goto nomem;
        if ((rc = gm_writer_stream(w, gm_reader_stream(r, i), slot, err)))
            goto done;
    }
    for (uint32_t i = 0; i < gm_reader_tag_count(r); i++) {
        uint32_t *slot;
        if (sc_map_get(&tags, i, &slot))
            goto nomem;
        const char *tag = gm_reader_tag(r, i);
        if ((rc = gm_writer_tag(w, tag ? tag : "", slot, err)))
            goto done;
    }
    for (;;) {
        const gm_event_t *ev;
        size_t n;
        if ((rc = gm_reader_next(r, &ev, &n, err)))
            goto done;
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            gm_event_t e = ev[i];
            if (e.op == GM_OP_SEG_ALLOC || e.op == GM_OP_SEG_FREE || e.op == GM_OP_SEG_MAP ||
                e.op == GM_OP_SEG_UNMAP)
                continue;
            uint32_t *slot;
            if (e.op == GM_OP_ALLOC || e.op == GM_OP_FREE) {
                if (sc_map_get(&streams, e.stream, &slot))
                    goto nomem;
                if (*slot == SC_UNMAPPED &&
                    (rc = gm_writer_stream(w, gm_reader_stream(r, e.stream), slot, err)))
                    goto done;
                e.stream = *slot;
            }
            if (e.op == GM_OP_ALLOC) {
                if (e.id >= p->nallocs) {
                    rc = gm_error_set(err, GM_ECORRUPT, "'%s': allocation %" PRIu64
                                      " beyond the %" PRIu64 " loaded",
                                      p->label[b], e.id, p->nallocs);
                    goto done;
                }
                e.size = nsize[e.id];
                if (e.frames) {
                    if (sc_map_get(&frames, e.frames, &slot))
                        goto nomem;
                    if (*slot == SC_UNMAPPED) {
                        const char *text = gm_reader_frames(r, e.frames);
                        if ((rc = gm_writer_frames(w, text ? text : "", slot, err)))
                            goto done;
                    }
                    e.frames = *slot;
                }
            } else if (e.op == GM_OP_MARK) {
                if (sc_map_get(&tags, e.tag, &slot))
                    goto nomem;
                if (*slot == SC_UNMAPPED) {
                    const char *tag = gm_reader_tag(r, e.tag);
                    if ((rc = gm_writer_tag(w, tag ? tag : "", slot, err)))
                        goto done;
                }
                e.tag = *slot;
            }
            if ((rc = gm_writer_add(w, &e, err)))
                goto done;
        }
    }
    if (layout != NULL && (rc = gm_writer_layout(w, layout, err)))
        goto done;
    rc = gm_writer_finish(w, err);
    w = NULL;
    goto done;
nomem:
    rc = gm_error_set(err, GM_ENOMEM, "out of memory");
done:
    gm_writer_abort(w);
    gm_reader_close(r);
    gm_layout_free(layout);
    free(streams.v);
    free(tags.v);
    free(frames.v);
    free(nsize);
    return rc;
}
