/*
 * synth/scale.c — predict a captured job at other sizes from two or more
 * captures of it (gmsim/scale.h; docs/validation.md for users).
 *
 * Method.
 *   1. Sizes.  Each capture's (seq, batch) comes from the caller, its
 *      trace attributes, or else its trace's or file's name (synth/
 *      scale_names.c).  Two captures of equal sizes, or one capture, are
 *      refused: they determine no law.
 *   2. Alignment.  The base capture (by default the largest) gives the
 *      event sequence.  Every other capture is aligned with it allocation
 *      by allocation (synth/align.c: frames, marks and the action
 *      sequence, anchored at the windows' ends; marks that differ and
 *      the script's own frames are hints, left out where they differ and
 *      reported).  A capture of another
 *      precision (sc_against: pairs 2^k larger at the smaller size) is
 *      refused first.  A capture whose aligned windows pair less than
 *      min_matched of their allocations is refused, naming where the
 *      alignment broke: another program, or the same one taking another
 *      path.
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
 *                           from its own size (sc_site_laws); a
 *                           pre-existing one still without: its twin's
 *                           among the allocations alive at the base's end
 *                           (a warm-up's graph kept alive), else the law
 *                           its paired pre-existing siblings (key, size,
 *                           lifetime) agree on, else the one the paired
 *                           allocations of its size agree on
 *                           (sc_pre_laws);
 *        none               paired in no other capture: the captured size
 *                           (reported in bytes and as a share).
 *      Count laws (synth/scale_counts.c): the base's pre-existing
 *      allocations grouped by call site, size and predicted sizes; a group
 *      present in every capture whose count differs among them gets a law
 *      of its count (power, else a line or polynomial, as sizes), and a
 *      target holds that many (a warm-up's graph of a loop over chunks).
 *      Three or more points that fit neither a power law nor the verified
 *      polynomial contradict each other: refused, naming the allocation and
 *      its sizes, unless force (then kept at its captured size).
 *   4. Writing a target (synth/scale_write.c; its band, synth/scale_band.c).  The base's events are streamed through the store
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
 * differ — but for pre-existing allocations under a count law, of which
 * the target holds its own number (the ids after them shift).  Memory: the captures' allocation tables (gm_align_trace_t) and
 * sizes per (allocation, capture); events stream a chunk at a time.
 */
#include "synth/scale_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "base/bits.h"

/* A capture is refused as of another precision when this many of its
 * pairs, and this share of them, move against the sizes (sc_against). */
#define SC_AGAINST_LEAST 8
#define SC_AGAINST_SHARE 0.01

const char *const sc_law_names[GM_SCALE_LAW_COUNT] = {
#define SC_LAW_NAME(e, s, d) s,
    GM_SCALE_LAWS(SC_LAW_NAME)
#undef SC_LAW_NAME
};

const char *gm_scale_law_name(unsigned law)
{
    return law < GM_SCALE_LAW_COUNT ? sc_law_names[law] : NULL;
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
    free(p->npts);
    for (size_t k = 0; k < GM_SCALE_MAX_CAPTURES; k++)
        free(p->upre[k]);
    free(p->counts);
    free(p->cmem);
    free(p->cgrp);
    free(p->crank);
    free(p);
}

const gm_scale_report_t *gm_scale_plan_report(const gm_scale_plan_t *p)
{
    return &p->rep;
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
    pl->npts[i] = (uint8_t)npts;
    if (npts <= 1) {
        pl->law[i] = GM_SCALE_LAW_NONE;
        return;
    }
    for (size_t e = 0; e < pl->npq[vs][vb]; e++) {
        int p = pl->pq[vs][vb][e][0], q = pl->pq[vs][vb][e][1];
        if (sc_power_fits(pl, i, p, q)) {
            pl->pe[i] = (int8_t)p;
            pl->qe[i] = (int8_t)q;
            pl->law[i] = p == 0 && q == 0 ? GM_SCALE_LAW_CONST : GM_SCALE_LAW_POWER;
            return;
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

/* The sizes that the trace's name, else the file's (its last component
 * less an extension of letters), states: GM_SCALE_FROM_NAME in the
 * report where one is taken. */
static void sc_sizes_from_names(gm_scale_plan_t *pl, const gm_scale_capture_t *c, size_t k)
{
    uint64_t s = 0, b = 0;
    char st[GM_SCALE_TOKEN], bt[GM_SCALE_TOKEN];
    gm_scale_sizes_from_name(c->trace, &s, &b, st, bt);
    if ((!pl->seq[k] && !s) || (!pl->batch[k] && !b)) {
        if (c->file != NULL) {
            const char *slash = strrchr(c->file, '/');
            char base[256];
            snprintf(base, sizeof base, "%s", slash ? slash + 1 : c->file);
            char *dot = strrchr(base, '.');
            if (dot != NULL && dot != base) {
                size_t i = 1;
                while (dot[i] && ((dot[i] >= 'a' && dot[i] <= 'z') || (dot[i] >= 'A' && dot[i] <= 'Z')))
                    i++;
                if (dot[i] == '\0')
                    *dot = '\0';
            }
            uint64_t fs, fb;
            char fst[GM_SCALE_TOKEN], fbt[GM_SCALE_TOKEN];
            gm_scale_sizes_from_name(base, &fs, &fb, fst, fbt);
            if (!s && fs) {
                s = fs;
                memcpy(st, fst, sizeof st);
            }
            if (!b && fb) {
                b = fb;
                memcpy(bt, fbt, sizeof bt);
            }
        }
    }
    if (!pl->seq[k] && s) {
        pl->seq[k] = s;
        pl->rep.seq_from[k] = GM_SCALE_FROM_NAME;
        memcpy(pl->rep.seq_token[k], st, sizeof st);
    }
    if (!pl->batch[k] && b) {
        pl->batch[k] = b;
        pl->rep.batch_from[k] = GM_SCALE_FROM_NAME;
        memcpy(pl->rep.batch_token[k], bt, sizeof bt);
    }
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
    pl->rep.seq_from[k] = c->seq ? GM_SCALE_FROM_GIVEN : s > 0 ? GM_SCALE_FROM_ATTR : GM_SCALE_FROM_NONE;
    pl->rep.batch_from[k] = c->batch ? GM_SCALE_FROM_GIVEN : b > 0 ? GM_SCALE_FROM_ATTR : GM_SCALE_FROM_NONE;
    if (!pl->seq[k] || !pl->batch[k])
        sc_sizes_from_names(pl, c, k);
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
    int c = gm__cmp_u64(a->key, b->key);
    return c ? c : gm__cmp_u64(a->first, b->first);
}

static int sc_none_bytes_cmp(const void *x, const void *y)
{
    const sc_none_t *a = x, *b = y;
    int c = gm__cmp_u64(b->bytes, a->bytes);
    return c ? c : gm__cmp_u64(a->first, b->first);
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

/*
 * Precision (issue 30, item 4).  A program's tensors do not shrink when its
 * sequence length or batch grows; an fp32 tensor of one capture beside the
 * 16-bit one of an autocast capture does: the fp32 capture's matmul output
 * is twice the autocast one's at the same size, its softmax (fp32 under
 * autocast too) four times a 16-bit score's, its weights twice the 16-bit
 * copies autocast makes.  Counted here: the pairs whose size moves against
 * the captures' sizes by an exact power of two (2 to 256), the capture
 * with the larger sizes (seq and batch both at least the other's) holding
 * the smaller allocation.  Captures whose sizes do not order that way
 * (more seq but less batch) count none.  *first: the first such pair's
 * base allocation.
 */
static uint64_t sc_against(const gm_scale_plan_t *pl, size_t k, uint64_t *first)
{
    size_t b = pl->base, n = pl->n;
    int up = pl->seq[k] >= pl->seq[b] && pl->batch[k] >= pl->batch[b];
    int down = pl->seq[k] <= pl->seq[b] && pl->batch[k] <= pl->batch[b];
    if (up == down) /* equal, or not ordered */
        return 0;
    uint64_t count = 0;
    for (uint64_t i = 0; i < pl->nallocs; i++) {
        uint64_t zb = pl->z[i * n + b], zk = pl->z[i * n + k];
        if (zk == 0 || zb == 0)
            continue;
        /* down: the other is the smaller capture, its allocation larger */
        uint64_t hi = down ? zk : zb, lo = down ? zb : zk;
        if (hi <= lo || hi % lo != 0)
            continue;
        uint64_t q = hi / lo;
        if ((q & (q - 1)) != 0 || q > 256)
            continue;
        if (count++ == 0)
            *first = i;
    }
    return count;
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
        pl->trace[k] = strdup(caps[k].trace);
        pl->label[k] = strdup(caps[k].label ? caps[k].label : caps[k].trace);
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
                                  "'%s' and '%s' have equal sizes (%s%s): captures at different "
                                  "sizes are needed",
                                  pl->label[j], pl->label[k], sz,
                                  pl->rep.seq_from[j] == GM_SCALE_FROM_NAME ||
                                          pl->rep.seq_from[k] == GM_SCALE_FROM_NAME ||
                                          pl->rep.batch_from[j] == GM_SCALE_FROM_NAME ||
                                          pl->rep.batch_from[k] == GM_SCALE_FROM_NAME
                                      ? ", read from their names: --at gives them"
                                      : "");
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
    pl->npts = calloc(na, 1);
    if (pl->z == NULL || pl->law == NULL || pl->pe == NULL || pl->qe == NULL ||
        pl->deg == NULL || pl->var == NULL || pl->npts == NULL) {
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
        pr->site_keys = r.site_keys;
        pr->marks_only_base = r.marks_only_a;
        pr->marks_only_other = r.marks_only_b;
        pr->nnotes = r.nnotes;
        memcpy(pr->notes, r.notes, sizeof pr->notes);
        for (uint64_t i = 0; i < pl->nallocs; i++)
            if (r.a_to_b[i] >= 0)
                pl->z[i * n + k] = pl->t[k]->allocs[r.a_to_b[i]].size;
        rc = sc_count_note_unpaired(pl, k, r.b_to_a, err);
        gm_align_result_release(&r);
        if (rc)
            goto fail;
        uint64_t first = 0;
        pr->against = sc_against(pl, k, &first);
        if (pr->against >= SC_AGAINST_LEAST &&
            (double)pr->against >= SC_AGAINST_SHARE * (double)pr->matched && !o.force) {
            char what[400];
            sc_describe(pl, first, what, sizeof what);
            rc = gm_error_set(err, GM_EFORMAT,
                              "'%s' and '%s' differ in precision: an fp32 capture and an "
                              "autocast one of a script are different programs (%" PRIu64
                              " of %" PRIu64 " pairs, %.1f%%, 2x or 4x larger at the smaller "
                              "size, as fp32 beside 16-bit; the first %s) (--force to go on)",
                              pl->label[k], pl->label[b], pr->against, pr->matched,
                              100.0 * (double)pr->against / (double)pr->matched, what);
            goto fail;
        }
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
    for (int vs = 0; vs < 2; vs++)
        for (int vb = 0; vb < 2; vb++)
            pl->npq[vs][vb] = sc_exponents(vs, vb, pl->pq[vs][vb]);
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
    if ((rc = sc_site_laws(pl, err)) || (rc = sc_pre_laws(pl, err)) ||
        (rc = sc_count_laws(pl, err)))
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
