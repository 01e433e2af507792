/*
 * sim/offline/bands.c — perfect packings rebuilt band by band.
 *
 * A perfect packing cut like a guillotine (a region is either cut in time,
 * where no buffer crosses, or stacked from bands that each span all of its
 * time, every instant of each at the same load) is rebuilt top down, each
 * region by the first of:
 *
 *   - time cuts: the times inside it that no buffer crosses split it into
 *     parts, each filled on its own to the region's height;
 *   - buffers that span all of its time: at its bottom (every band spans
 *     it, so any band may go first);
 *   - parts that no time inside links (a buffer of one never ends or
 *     starts where one of another does): each a set of bands of its own
 *     load, stacked;
 *   - else a band with a time cut of its own, found as a set that holds
 *     the same load at every instant: a pivot (one of the buffers that
 *     start at the region's start) in it, every buffer that crosses its cut
 *     out of it, and at every time the bytes that end in it equal to those
 *     that start in it (a search over which buffers are in, with the sums
 *     propagated time by time, equal buffers taken in one order); the band
 *     and what is left are then filled as regions.
 *
 * Every step is sound for a guillotine packing but the last is a guess (a
 * set at a constant load by chance: pieces of a few bytes balance each
 * other at many times), so a region that cannot be filled is kept as a
 * dead end (by the multiset of its buffers) and the whole runs as restarts
 * of growing quotas (the Luby sequence), each with other pivots and cut
 * orders.  The plan found is the caller's to check against the events.
 */
#include "gmsim/error.h"

#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "sim/offline/offline.h"

/* A band search tries at most this many nodes for one pivot and cut. */
#define BANDS_NODES 1000
/* Dead ends kept per restart (slots; a power of two). */
#define BANDS_MEMO ((size_t)1 << 14)

typedef struct bands {
    const uint64_t *sz;
    const uint32_t *a, *b; /* each buffer's time coordinates */
    const uint64_t *key;   /* each buffer's random key, by (a, b, size) */
    uint64_t *off;
    uint64_t work, limit, rng;
    uint64_t *memo;
    uint32_t *loc; /* scratch: per buffer a local index */
    int oom;
} bands_t;

static int bands_solve(bands_t *g, uint32_t *S, size_t n, uint32_t t0, uint32_t t1, uint64_t h,
                       uint64_t base);

static uint64_t bands_setkey(const bands_t *g, const uint32_t *S, size_t n)
{
    uint64_t k = UINT64_C(0x9e3779b97f4a7c15) * (n + 1);
    for (size_t i = 0; i < n; i++)
        k += g->key[S[i]];
    return k ? k : 1;
}

static int bands_dead(const bands_t *g, uint64_t k)
{
    for (size_t p = 0; p < 8; p++) {
        uint64_t v = g->memo[(k + p) & (BANDS_MEMO - 1)];
        if (v == k)
            return 1;
        if (v == 0)
            return 0;
    }
    return 0;
}

static void bands_kill(bands_t *g, uint64_t k)
{
    for (size_t p = 0; p < 8; p++) {
        uint64_t *v = &g->memo[(k + p) & (BANDS_MEMO - 1)];
        if (*v == 0 || *v == k) {
            *v = k;
            return;
        }
    }
}

/* ---- the band search ----------------------------------------------------------------- */

typedef struct split {
    bands_t *g;
    uint32_t *S; /* the region's buffers (local index → id) */
    size_t n, nt;
    uint32_t t0, t1;
    uint64_t h, base;
    uint32_t *ts, *te;   /* times: entries [ts[t], ts[t + 1]) of te (local index, sign in bit 31) */
    uint32_t *pt;        /* per buffer its two times inside (UINT32_MAX: none) */
    uint32_t *prv, *nxt; /* equal buffers, in one order (UINT32_MAX: none) */
    uint32_t *rk;        /* each buffer's rank by (start, end, size) */
    signed char *x;      /* -1 unknown, 0 out, 1 in */
    uint32_t *trail, *q;
    size_t ntrail, nq, qcap;
    size_t nodes;
    uint64_t *seen;
    size_t nseen, cseen;
    uint32_t *B, *R;
} split_t;

static void split_set(split_t *s, uint32_t i, int v)
{
    s->x[i] = (signed char)v;
    s->trail[s->ntrail++] = i;
    for (int k = 0; k < 2; k++)
        if (s->pt[2 * i + k] != UINT32_MAX)
            s->q[s->nq++] = s->pt[2 * i + k];
    uint32_t j = v ? s->prv[i] : s->nxt[i];
    if (j != UINT32_MAX)
        s->q[s->nq++] = UINT32_C(0x80000000) | j << 1 | (uint32_t)v;
}

/* The sums at time t: 0 when they cannot balance, else what they force set. */
static int split_check(split_t *s, uint32_t t)
{
    int64_t f = 0, up = 0, un = 0;
    int unk = 0;
    const uint64_t *sz = s->g->sz;
    s->g->work += s->ts[t + 1] - s->ts[t] + 1;
    for (uint32_t e = s->ts[t]; e < s->ts[t + 1]; e++) {
        uint32_t i = s->te[e] & 0x7fffffff;
        int sg = s->te[e] >> 31 ? -1 : 1;
        int64_t w = (int64_t)sz[s->S[i]];
        if (s->x[i] < 0) {
            unk = 1;
            if (sg > 0)
                up += w;
            else
                un += w;
        } else if (s->x[i]) {
            f += sg * w;
        }
    }
    int64_t d = -f;
    if (d > up || -d > un)
        return 0;
    if (!unk || (d != up && -d != un))
        return 1;
    int toend = d != up; /* -d == un: the ends in, the starts out */
    for (uint32_t e = s->ts[t]; e < s->ts[t + 1]; e++) {
        uint32_t i = s->te[e] & 0x7fffffff;
        if (s->x[i] < 0)
            split_set(s, i, (int)(s->te[e] >> 31) == toend);
    }
    return 1;
}

static int split_prop(split_t *s)
{
    while (s->nq) {
        uint32_t v = s->q[--s->nq];
        if (v >> 31) {
            uint32_t j = (v & 0x7fffffff) >> 1;
            int val = (int)(v & 1);
            if (s->x[j] >= 0) {
                if (s->x[j] != val) {
                    s->nq = 0;
                    return 0;
                }
            } else {
                split_set(s, j, val);
            }
        } else if (!split_check(s, v)) {
            s->nq = 0;
            return 0;
        }
    }
    return 1;
}

static void split_undo(split_t *s, size_t to)
{
    while (s->ntrail > to)
        s->x[s->trail[--s->ntrail]] = -1;
}

/* A set found: the band (x = 1) and the rest filled as regions. */
static int split_try(split_t *s)
{
    bands_t *g = s->g;
    size_t nb = 0, nr = 0;
    uint64_t hb = 0, k = UINT64_C(0x9e3779b97f4a7c15);
    for (size_t i = 0; i < s->n; i++) {
        if (s->x[i] == 1) {
            s->B[nb++] = s->S[i];
            k += g->key[s->S[i]];
            if (g->a[s->S[i]] == s->t0)
                hb += g->sz[s->S[i]];
        } else {
            s->R[nr++] = s->S[i];
        }
    }
    g->work += s->n;
    for (size_t j = 0; j < s->nseen; j++)
        if (s->seen[j] == k)
            return 0;
    if (s->nseen == s->cseen) {
        size_t c = s->cseen ? 2 * s->cseen : 16;
        uint64_t *p = realloc(s->seen, c * sizeof *p);
        if (p == NULL) {
            g->oom = 1;
            return -1;
        }
        s->seen = p;
        s->cseen = c;
    }
    s->seen[s->nseen++] = k;
    if (nb == 0 || nr == 0)
        return 0;
    int r = bands_solve(g, s->B, nb, s->t0, s->t1, hb, s->base);
    if (r != 1)
        return r;
    return bands_solve(g, s->R, nr, s->t0, s->t1, s->h - hb, s->base + hb);
}

static int split_dfs(split_t *s)
{
    bands_t *g = s->g;
    if (g->work >= g->limit)
        return -1;
    if (++s->nodes > BANDS_NODES)
        return 0;
    /* the time whose sums are off with the fewest buffers undecided */
    uint32_t best = UINT32_MAX;
    size_t fewest = SIZE_MAX;
    for (uint32_t t = 0; t < s->nt; t++) {
        int64_t f = 0;
        size_t unk = 0;
        for (uint32_t e = s->ts[t]; e < s->ts[t + 1]; e++) {
            uint32_t i = s->te[e] & 0x7fffffff;
            if (s->x[i] < 0)
                unk++;
            else if (s->x[i])
                f += (s->te[e] >> 31 ? -1 : 1) * (int64_t)g->sz[s->S[i]];
        }
        if (f != 0 && unk && unk < fewest) {
            fewest = unk;
            best = t;
        }
    }
    g->work += s->ts[s->nt] + s->nt;
    if (best == UINT32_MAX) {
        /* every time balanced: the buffers in so far are a band */
        size_t mark = s->ntrail;
        int r = split_try(s);
        split_undo(s, mark);
        return r;
    }
    /* the largest undecided buffer there (the first of equal ones) */
    uint32_t pick = UINT32_MAX;
    for (uint32_t e = s->ts[best]; e < s->ts[best + 1]; e++) {
        uint32_t i = s->te[e] & 0x7fffffff;
        if (s->x[i] < 0 && (pick == UINT32_MAX || g->sz[s->S[i]] > g->sz[s->S[pick]] ||
                            (g->sz[s->S[i]] == g->sz[s->S[pick]] && s->rk[i] < s->rk[pick])))
            pick = i;
    }
    for (int v = 1; v >= 0; v--) {
        size_t mark = s->ntrail;
        split_set(s, pick, v);
        int r = split_prop(s) ? split_dfs(s) : 0;
        split_undo(s, mark);
        if (r != 0)
            return r;
    }
    return 0;
}

static int bands_before(const bands_t *g, uint32_t i, uint32_t j);

static inline int bands_id_before(const bands_t *g, const uint32_t *x, const uint32_t *y)
{
    return bands_before(g, *x, *y);
}

/* ids sorted by bands_before, through tmp. */
OFFLINE_MERGE_SORT_DEFINE(static, bands_sort, uint32_t, const bands_t *, bands_id_before)

typedef struct bands_cand {
    uint64_t score;
    uint32_t t;
} bands_cand_t;

static int bands_bycand(const void *x, const void *y)
{
    const bands_cand_t *p = x, *q = y;
    return gm__cmp_u64_keys((const uint64_t[]){p->score, p->t}, (const uint64_t[]){q->score, q->t},
                            2);
}

/* A region with no time cut, no buffer over all of it, linked: a band
 * taken out of it. */
static int bands_split(bands_t *g, uint32_t *S, size_t n, uint32_t t0, uint32_t t1, uint64_t h,
                       uint64_t base)
{
    split_t s = {.g = g, .S = S, .n = n, .t0 = t0, .t1 = t1, .h = h, .base = base};
    size_t span = t1 - t0;
    int r = -1;
    s.nt = span - 1;
    s.ts = calloc(span + 1, sizeof *s.ts);
    s.te = malloc(2 * n * sizeof *s.te);
    s.pt = malloc(2 * n * sizeof *s.pt);
    s.prv = malloc(n * sizeof *s.prv);
    s.nxt = malloc(n * sizeof *s.nxt);
    s.rk = malloc(n * sizeof *s.rk);
    s.x = malloc(n);
    s.trail = malloc(n * sizeof *s.trail);
    s.qcap = 6 * n + 4;
    s.q = malloc(s.qcap * sizeof *s.q);
    s.B = malloc(n * sizeof *s.B);
    s.R = malloc(n * sizeof *s.R);
    uint32_t *ord = malloc(n * sizeof *ord), *piv = malloc(n * sizeof *piv);
    uint64_t *load = calloc(span + 1, sizeof *load);
    bands_cand_t *cand = malloc(span * sizeof *cand);
    uint32_t *fill = NULL;
    if (!s.ts || !s.te || !s.pt || !s.prv || !s.nxt || !s.rk || !s.x || !s.trail || !s.q || !s.B ||
        !s.R || !ord || !piv || !load || !cand) {
        g->oom = 1;
        goto out;
    }
    /* the times inside, CSR over t - t0 - 1 */
    for (size_t i = 0; i < n; i++) {
        uint32_t a = g->a[S[i]], b = g->b[S[i]];
        if (a > t0)
            s.ts[a - t0]++;
        if (b < t1)
            s.ts[b - t0]++;
    }
    for (size_t t = 1; t <= span; t++)
        s.ts[t] += s.ts[t - 1];
    fill = malloc((span + 1) * sizeof *fill);
    if (fill == NULL) {
        g->oom = 1;
        goto out;
    }
    /* ts[u]: the entries of the times up to t0 + u, those of t0 + u from ts[u - 1] */
    for (size_t t = 0; t < span; t++)
        fill[t] = s.ts[t];
    for (size_t i = 0; i < n; i++) {
        uint32_t a = g->a[S[i]], b = g->b[S[i]];
        s.pt[2 * i] = s.pt[2 * i + 1] = UINT32_MAX;
        if (a > t0) {
            s.te[fill[a - t0 - 1]++] = (uint32_t)i;
            s.pt[2 * i] = a - t0 - 1;
        }
        if (b < t1) {
            s.te[fill[b - t0 - 1]++] = (uint32_t)i | UINT32_C(0x80000000);
            s.pt[2 * i + 1] = b - t0 - 1;
        }
        s.x[i] = -1;
    }
    /* ts[0..nt]: the entries of time t (t0 + t + 1) are [ts[t], ts[t + 1]) */
    g->work += 2 * n + 2 * span;
    /* equal buffers (same times, same size) in one order */
    /* by buffer (ids, then local indices by the ids' order) */
    memcpy(ord, S, n * sizeof *ord);
    bands_sort(ord, s.B, n, g);
    for (size_t i = 0; i < n; i++)
        g->loc[S[i]] = (uint32_t)i;
    for (size_t k = 0; k < n; k++) {
        ord[k] = g->loc[ord[k]];
        s.rk[ord[k]] = (uint32_t)k;
    }
    g->work += 4 * n + n * (64 - (uint64_t)__builtin_clzll(n | 1));
    for (size_t i = 0; i < n; i++) {
        s.prv[ord[i]] = s.nxt[ord[i]] = UINT32_MAX;
        if (i > 0) {
            uint32_t p = S[ord[i - 1]], c = S[ord[i]];
            if (g->a[p] == g->a[c] && g->b[p] == g->b[c] && g->sz[p] == g->sz[c]) {
                s.prv[ord[i]] = ord[i - 1];
                s.nxt[ord[i - 1]] = ord[i];
            }
        }
    }
    /* the pivot: one of the buffers at the start, at random */
    size_t np = 0;
    for (size_t i = 0; i < n; i++)
        if (g->a[S[ord[i]]] == t0)
            piv[np++] = ord[i];
    if (np == 0) {
        r = 0; /* no load: not a region */
        goto out;
    }
    uint32_t p = piv[offline_rand(&g->rng) % np];
    /* bytes crossing each time: its band's cut is one the pivot does not cross */
    for (size_t i = 0; i < n; i++) {
        uint32_t a = g->a[S[i]], b = g->b[S[i]];
        for (uint32_t t = a + 1; t < b; t++)
            load[t - t0] += g->sz[S[i]];
        g->work += b - a;
    }
    size_t nc = 0;
    for (uint32_t t = g->b[S[p]]; t < t1; t++) {
        uint64_t L = load[t - t0];
        uint64_t sc = L + (L >> 10) * (offline_rand(&g->rng) & 1023);
        cand[nc++] = (bands_cand_t){sc, t}; /* by that load, perturbed */
    }
    qsort(cand, nc, sizeof *cand, bands_bycand);
    g->work += nc * (64 - (uint64_t)__builtin_clzll(nc | 1));
    r = 0;
    for (size_t c = 0; c < nc && r == 0; c++) {
        uint32_t cut = cand[c].t;
        s.nodes = 0;
        s.nq = 0;
        split_set(&s, p, 1);
        for (size_t i = 0; i < n; i++)
            if (g->a[S[i]] < cut && cut < g->b[S[i]] && s.x[i] < 0)
                split_set(&s, (uint32_t)i, 0);
        g->work += n;
        if (s.x[p] == 1 && split_prop(&s))
            r = split_dfs(&s);
        split_undo(&s, 0);
        if (g->oom)
            r = -1;
    }
out:
    free(s.ts);
    free(s.te);
    free(s.pt);
    free(s.prv);
    free(s.nxt);
    free(s.rk);
    free(s.x);
    free(s.trail);
    free(s.q);
    free(s.B);
    free(s.R);
    free(s.seen);
    free(ord);
    free(piv);
    free(load);
    free(cand);
    free(fill);
    return r;
}

/* Buffers by start, end, size (larger first), then id: equal ones together. */
static int bands_before(const bands_t *g, uint32_t i, uint32_t j)
{
    if (g->a[i] != g->a[j])
        return g->a[i] < g->a[j];
    if (g->b[i] != g->b[j])
        return g->b[i] < g->b[j];
    if (g->sz[i] != g->sz[j])
        return g->sz[i] > g->sz[j];
    return i < j;
}

/* ---- regions ------------------------------------------------------------------------- */

static uint32_t bands_root(uint32_t *par, uint32_t x)
{
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

/* The regions of S (over [t0, t1), h high, at base) with no time cut and
 * no buffer over all of it: its unlinked parts stacked, or a band split. */
static int bands_parts(bands_t *g, uint32_t *S, size_t n, uint32_t t0, uint32_t t1, uint64_t h,
                       uint64_t base)
{
    size_t span = t1 - t0;
    uint32_t *par = malloc(n * sizeof *par);
    uint32_t *first = malloc((span + 1 > n ? span + 1 : n) * sizeof *first);
    uint32_t *cnt = NULL, *out = NULL;
    int r = -1;
    if (par == NULL || first == NULL) {
        g->oom = 1;
        goto out;
    }
    for (size_t t = 0; t <= span; t++)
        first[t] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        par[i] = (uint32_t)i;
        uint32_t ends[2] = {g->a[S[i]], g->b[S[i]]};
        for (int k = 0; k < 2; k++) {
            uint32_t t = ends[k];
            if (t == t0 || t == t1)
                continue;
            if (first[t - t0] == UINT32_MAX)
                first[t - t0] = (uint32_t)i;
            else
                par[bands_root(par, (uint32_t)i)] = bands_root(par, first[t - t0]);
        }
    }
    g->work += 2 * n + span;
    size_t parts = 0;
    for (size_t i = 0; i < n; i++)
        parts += bands_root(par, (uint32_t)i) == i;
    if (parts == 1) {
        r = bands_split(g, S, n, t0, t1, h, base);
        goto out;
    }
    cnt = calloc(n + 1, sizeof *cnt);
    out = malloc(n * sizeof *out);
    if (cnt == NULL || out == NULL) {
        g->oom = 1;
        goto out;
    }
    /* parts numbered in the order of their least buffer (start, end, size) */
    for (size_t i = 0; i < n; i++)
        par[i] = bands_root(par, (uint32_t)i);
    memcpy(out, S, n * sizeof *out);
    bands_sort(out, first, n, g);
    for (size_t i = 0; i < n; i++)
        g->loc[S[i]] = (uint32_t)i;
    uint32_t parts_seen = 0;
    for (size_t i = 0; i < n; i++)
        first[i] = UINT32_MAX;
    for (size_t k = 0; k < n; k++) {
        uint32_t rt = par[g->loc[out[k]]];
        if (first[rt] == UINT32_MAX)
            first[rt] = parts_seen++;
    }
    for (size_t i = 0; i < n; i++)
        par[i] = first[par[i]];
    for (size_t i = 0; i < n; i++)
        cnt[par[i] + 1]++;
    for (size_t i = 0; i < n; i++)
        cnt[i + 1] += cnt[i];
    for (size_t i = 0; i < n; i++)
        out[cnt[par[i]]++] = S[i];
    memcpy(S, out, n * sizeof *S);
    g->work += 6 * n + n * (64 - (uint64_t)__builtin_clzll(n | 1));
    /* cnt[p] is now the end of part p: the parts in turn, stacked */
    r = 1;
    size_t lo = 0;
    for (size_t p = 0; p < parts && r == 1; p++) {
        size_t hi = cnt[p];
        if (hi == lo)
            continue;
        uint64_t hc = 0;
        for (size_t j = lo; j < hi; j++)
            if (g->a[S[j]] == t0)
                hc += g->sz[S[j]];
        r = bands_solve(g, S + lo, hi - lo, t0, t1, hc, base);
        base += hc;
        lo = hi;
    }
out:
    free(par);
    free(first);
    free(cnt);
    free(out);
    return r;
}

/* Fill S (its buffers over [t0, t1), h high at every instant) from base:
 * 1 filled (g->off set), 0 none found, -1 out of work or memory.  S is
 * reordered. */
static int bands_solve(bands_t *g, uint32_t *S, size_t n, uint32_t t0, uint32_t t1, uint64_t h,
                       uint64_t base)
{
    if (g->work >= g->limit || g->oom)
        return -1;
    g->work++;
    if (n == 1) {
        g->off[S[0]] = base;
        return 1;
    }
    uint64_t k = bands_setkey(g, S, n) ^ ((uint64_t)t0 << 32 | t1);
    k = k ? k : 1;
    if (bands_dead(g, k))
        return 0;
    size_t span = t1 - t0;
    uint32_t *cross = calloc(span + 1, sizeof *cross), *out = NULL;
    int r = -1;
    if (cross == NULL) {
        g->oom = 1;
        return -1;
    }
    /* buffers crossing each time inside: none there is a time cut */
    for (size_t i = 0; i < n; i++) {
        cross[g->a[S[i]] - t0 + 1]++;
        cross[g->b[S[i]] - t0]--;
    }
    size_t cuts = 0;
    uint32_t run = 0;
    for (size_t t = 1; t < span; t++) {
        run += cross[t];
        cross[t] = run; /* crossing t0 + t */
        cuts += run == 0;
    }
    g->work += n + span;
    if (cuts) {
        /* each part between cuts (part[t]: the cuts at or before t0 + t) */
        uint32_t *part = cross;
        uint32_t c = 0;
        part[0] = 0;
        for (size_t t = 1; t < span; t++) {
            c += part[t] == 0;
            part[t] = c;
        }
        out = malloc(n * sizeof *out);
        uint32_t *cnt = calloc(cuts + 2, sizeof *cnt), *bd = malloc((cuts + 2) * sizeof *bd);
        if (out == NULL || cnt == NULL || bd == NULL) {
            free(cnt);
            free(bd);
            g->oom = 1;
            goto out;
        }
        bd[0] = t0;
        bd[cuts + 1] = t1;
        for (size_t t = 1, j = 1; t < span; t++)
            if (part[t] != part[t - 1])
                bd[j++] = t0 + (uint32_t)t;
        for (size_t i = 0; i < n; i++)
            cnt[part[g->a[S[i]] - t0] + 1]++;
        for (size_t j = 0; j <= cuts; j++)
            cnt[j + 1] += cnt[j];
        uint32_t *fill = malloc((cuts + 1) * sizeof *fill);
        if (fill == NULL) {
            free(cnt);
            free(bd);
            g->oom = 1;
            goto out;
        }
        memcpy(fill, cnt, (cuts + 1) * sizeof *fill);
        for (size_t i = 0; i < n; i++)
            out[fill[part[g->a[S[i]] - t0]]++] = S[i];
        free(fill);
        memcpy(S, out, n * sizeof *S);
        g->work += n;
        r = 1;
        for (size_t j = 0; j <= cuts && r == 1; j++)
            r = bands_solve(g, S + cnt[j], cnt[j + 1] - cnt[j], bd[j], bd[j + 1], h, base);
        free(cnt);
        free(bd);
        goto out;
    }
    /* buffers over all of it: at the bottom */
    size_t m = 0;
    uint64_t full = 0;
    for (size_t i = 0; i < n; i++) {
        if (g->a[S[i]] == t0 && g->b[S[i]] == t1) {
            g->off[S[i]] = base + full;
            full += g->sz[S[i]];
        } else {
            S[m++] = S[i]; /* the others first; the full ones are placed */
        }
    }
    if (full)
        r = m ? bands_solve(g, S, m, t0, t1, h - full, base + full) : 1;
    else
        r = bands_parts(g, S, n, t0, t1, h, base);
out:
    free(cross);
    free(out);
    if (r == 0)
        bands_kill(g, k);
    return r;
}

/* ---- restarts ------------------------------------------------------------------------ */

int bands_search(const offline_buf_t *buf, size_t n, uint64_t lb, uint64_t limit, uint64_t *off,
                 uint64_t *work, int *rc)
{
    bands_t g = {0};
    uint64_t *t = malloc(2 * (n ? n : 1) * sizeof *t), *sz = malloc((n ? n : 1) * sizeof *sz);
    uint64_t *key = malloc((n ? n : 1) * sizeof *key);
    uint32_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    uint32_t *S = malloc((n ? n : 1) * sizeof *S), *loc = malloc((n ? n : 1) * sizeof *loc);
    uint64_t *memo = malloc(BANDS_MEMO * sizeof *memo);
    int r = EXACT_ABORT;
    if (!t || !sz || !key || !a || !b || !S || !loc || !memo) {
        *rc = GM_ENOMEM;
        goto out;
    }
    if (n < 2 || n >= UINT32_C(0x40000000))
        goto out;
    for (size_t i = 0; i < n; i++) {
        t[2 * i] = buf[i].t0;
        t[2 * i + 1] = buf[i].t1;
    }
    size_t u = offline_unique(t, 2 * n);
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint32_t)offline_coord(t, u, buf[i].t0);
        b[i] = (uint32_t)offline_coord(t, u, buf[i].t1);
        sz[i] = buf[i].size;
        uint64_t h = ((uint64_t)a[i] << 32 | b[i]) * UINT64_C(0xff51afd7ed558ccd) ^ sz[i];
        key[i] = offline_rand(&h);
    }
    g = (bands_t){.sz = sz, .a = a, .b = b, .key = key, .off = off, .memo = memo, .loc = loc};
    g.work = *work;
    uint64_t end = *work + limit, quota = 8 * (uint64_t)(n + u);
    for (uint64_t k = 1; g.work < end && r != EXACT_FOUND; k++) {
        uint64_t q = quota * offline_luby(k);
        g.limit = g.work + q < end ? g.work + q : end;
        g.rng = k * UINT64_C(0x9e3779b97f4a7c15);
        memset(memo, 0, BANDS_MEMO * sizeof *memo);
        g.work += BANDS_MEMO / 64;
        for (size_t i = 0; i < n; i++)
            S[i] = (uint32_t)i;
        g.work += n;
        int s = bands_solve(&g, S, n, 0, (uint32_t)(u - 1), lb, 0);
        if (g.oom) {
            *rc = GM_ENOMEM;
            break;
        }
        if (s == 1)
            r = EXACT_FOUND;
    }
    *work = g.work < end ? g.work : end;
out:
    free(t);
    free(sz);
    free(key);
    free(a);
    free(b);
    free(S);
    free(loc);
    free(memo);
    return r;
}
