/*
 * synth/align.c — allocation-by-allocation alignment of two captures of
 * one program at different sizes (gmsim/align.h).
 *
 * Tokens.  Each allocation becomes a token (kind, key, size): the key hashes
 * its stack frames (file name and function of each, not the line nor the
 * directories: a script edited between two captures moves lines, real
 * ones do, and a checkout moved moves paths) and its stream's
 * index in the trace (indices, not
 * raw handles: a CUDA stream's handle is a pointer that changes from run to
 * run, its order of first use does not).  A MARK becomes a token keyed by
 * its tag name.  Two tokens are "equal" for the diff when kind and key are
 * equal and, for allocations, when their sizes are related: equal, or one
 * a power (|p| ≤ 4) of the captures' sequence ratio times a power of their
 * batch ratio times the other (gm_align_size_related).  Traces without
 * stack frames (synthesized ones, CSV imports) are aligned by that size
 * relation and the marks alone.
 *
 * Windows.  A PyTorch snapshot is a ring buffer: two captures start at
 * different points of the program and end where the snapshot was taken,
 * the same point.  So the non-pre-existing tokens are diffed anchored at
 * the ends (the sequences reversed, the diff stopping when either runs
 * out: the longer capture's extra beginning costs nothing); when that pairs
 * fewer than 90% of the shorter sequence, anchoring at the starts (a
 * capture that began with the job) is tried too and the better kept.
 *
 * Diff.  Myers' O((N+M)·D) greedy algorithm over the equality above, with
 * the furthest point of every diagonal kept per edit count for the
 * traceback (D²/2 positions; D is capped by max_edits, default 4096: past
 * it the diff stops, keeps the pairs it found from the anchor and reports
 * where it stopped).  Captures of one program differ by a few edits, so
 * this is linear in practice: the tokens of a 1M-event pair diff in tens of
 * milliseconds.
 *
 * Left-overs.  Between two consecutive pairs, the tokens neither side
 * paired (an allocation whose size follows no power law, e.g. a + b·s) are
 * paired by key alone (when the key names a call site: tokens without
 * stack frames never pair this way), in order, by a longest-common-
 * subsequence over the keys (a greedy scan when the gap is over 2^22 cells), and so are those
 * past the last pair at the free end (the LCS takes the earliest match, the
 * one nearest the anchor).  Those pairs count as matched but not in
 * matched_size.
 *
 * Pre-existing allocations are listed in address order, which differs
 * between captures, so they are sorted by (key, the order the program
 * frees them in, size, id) on both sides (those never freed last, by
 * size) and diffed globally (same equality, left-overs as above): two of
 * one size whose laws differ pair by when they die, not by where they
 * lie.  One left over after that was alive when its window began: it
 * pairs with an allocation the other capture made before that point and
 * still held there (al_cross_pre, in the order both free them), so ring
 * buffers that began at different points pair their tensors across the
 * boundary.
 *
 * Hints, not keys.  Annotations (record_function ranges, marks) come and
 * go with small edits of a script: the marks are first diffed by name
 * alone, and only the marks paired there enter the allocations' diff (as
 * anchors); the others are left out, and those inside the aligned window
 * are reported by name (notes).  An edit of the script itself (the loop
 * moved into a function) changes the outer frames of every stack it
 * holds, so every key: when the whole alignment pairs under 90% of the
 * windows, it is done again with each allocation keyed by its call site
 * (its frames less the outermost file's: synth/align_load.c) and the one
 * pairing more is kept (site_keys).  Those keys are hashed only then.
 *
 * Invariants: a_to_b and b_to_a are inverse partial maps; a pair never
 * mixes a pre-existing allocation with a later one, nor an allocation with
 * a mark; pairs of the main sequence preserve order (a crossing-free
 * alignment).
 */
#include "gmsim/align.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/vec.h"
#define AL_KIND_ALLOC 0
#define AL_KIND_MARK 1
#define AL_MAX_P 4
#define AL_DEFAULT_EDITS 4096
#define AL_LCS_CELLS ((uint64_t)1 << 22)
#define AL_NONE INT64_MIN

typedef struct al_tok {
    uint64_t key;
    uint64_t size;
    uint64_t ref; /* allocation id or mark index */
    uint8_t kind;
    uint8_t framed; /* an allocation with stack frames (or a mark): its key
                       names a call site, so it may pair by key alone */
} al_tok_t;

typedef struct al_ctx {
    uint64_t seq_a, seq_b, batch_a, batch_b;
    /* per allocation: its call site's key (gm_align_site_keys), or NULL:
     * its whole stack's */
    const uint64_t *site_a, *site_b;
    const int64_t *mkeep_a, *mkeep_b; /* per mark: >= 0 to take part in the diff */
} al_ctx_t;

/* ---- sizes ------------------------------------------------------------------ */

/* x * base^e, or 0 when it passes 2^120 (then no relation is claimed). */
static unsigned __int128 al_mulpow(unsigned __int128 x, uint64_t base, unsigned e)
{
    const unsigned __int128 lim = (unsigned __int128)1 << 120;
    for (unsigned i = 0; i < e; i++) {
        if (base != 0 && x > lim / base)
            return 0;
        x *= base;
    }
    return x;
}

int gm_align_size_related(uint64_t za, uint64_t zb, uint64_t seq_a, uint64_t seq_b,
                          uint64_t batch_a, uint64_t batch_b)
{
    if (za == zb)
        return 1;
    if (za == 0 || zb == 0)
        return 0;
    /* ratios in lowest terms: seq_b/seq_a = sn/sd, batch_b/batch_a = bn/bd */
    uint64_t sn = 1, sd = 1, bn = 1, bd = 1;
    if (seq_a && seq_b && seq_a != seq_b) {
        uint64_t g = gm__gcd_u64(seq_a, seq_b);
        sn = seq_b / g;
        sd = seq_a / g;
    }
    if (batch_a && batch_b && batch_a != batch_b) {
        uint64_t g = gm__gcd_u64(batch_a, batch_b);
        bn = batch_b / g;
        bd = batch_a / g;
    }
    int pmax = (sn != sd) ? AL_MAX_P : 0, qmax = (bn != bd) ? AL_MAX_P : 0;
    for (int p = -pmax; p <= pmax; p++)
        for (int q = -qmax; q <= qmax; q++) {
            /* zb = za · (sn/sd)^p · (bn/bd)^q, negative powers crossed over */
            unsigned __int128 l = zb, rr = za;
            l = al_mulpow(l, p > 0 ? sd : sn, (unsigned)(p > 0 ? p : -p));
            l = al_mulpow(l, q > 0 ? bd : bn, (unsigned)(q > 0 ? q : -q));
            rr = al_mulpow(rr, p > 0 ? sn : sd, (unsigned)(p > 0 ? p : -p));
            rr = al_mulpow(rr, q > 0 ? bn : bd, (unsigned)(q > 0 ? q : -q));
            if (l != 0 && l == rr)
                return 1;
        }
    return 0;
}

static int al_eq(const al_ctx_t *c, const al_tok_t *x, const al_tok_t *y)
{
    if (x->kind != y->kind || x->key != y->key)
        return 0;
    if (x->kind == AL_KIND_MARK)
        return 1;
    return gm_align_size_related(x->size, y->size, c->seq_a, c->seq_b, c->batch_a, c->batch_b);
}

/* ---- Myers' diff -------------------------------------------------------------- */

typedef struct al_diff {
    int64_t *hist; /* per d: furthest x of diagonals k = -d, -d+2, …, d */
    size_t hcap;
} al_diff_t;

static size_t al_hidx(int64_t d, int64_t k)
{
    return (size_t)(d * (d + 1) / 2 + (k + d) / 2);
}

/* x after the edit that reaches diagonal k at cost d from row d-1 (*from
 * gets the diagonal it came from), or AL_NONE when no valid move does. */
static int64_t al_pick(const int64_t *prev, int64_t d, int64_t k, int64_t N, int64_t M,
                       int64_t *from)
{
    int64_t best = AL_NONE;
    if (k > -(d - 1) - 1 && k - 1 >= -(d - 1)) { /* right move from k-1: skip X[x] */
        int64_t px = prev[(k - 1 + (d - 1)) / 2];
        if (px != AL_NONE) {
            int64_t x = px + 1, y = x - k;
            if (x <= N && y >= 0 && y <= M) {
                best = x;
                *from = k - 1;
            }
        }
    }
    if (k + 1 <= d - 1) { /* down move from k+1: skip Y[y] */
        int64_t px = prev[(k + 1 + (d - 1)) / 2];
        if (px != AL_NONE) {
            int64_t x = px, y = x - k;
            if (x <= N && y >= 0 && y <= M && (best == AL_NONE || x > best)) {
                best = x;
                *from = k + 1;
            }
        }
    }
    return best;
}

/*
 * Diff X against Y; xm[i] gets the index in Y paired with X[i] or -1.
 * free_end: stop as soon as either sequence is consumed (the rest of the
 * other is unpaired at no cost).  *complete is 0 when maxd was reached (the
 * pairs found up to the furthest point are kept).  GM_ENOMEM.
 */
static int al_myers(al_diff_t *df, const al_ctx_t *c, const al_tok_t *X, int64_t N,
                    const al_tok_t *Y, int64_t M, int free_end, int64_t maxd, int64_t *xm,
                    uint64_t *edits, int *complete, gm_error_t *err)
{
    for (int64_t i = 0; i < N; i++)
        xm[i] = -1;
    *complete = 1;
    int64_t dend = -1, kend = 0;
    for (int64_t d = 0; d <= maxd; d++) {
        size_t need = al_hidx(d, d) + 1;
        if (GM_VEC_RESERVE(df->hist, df->hcap, need, 1024))
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        int64_t *row = df->hist + al_hidx(d, -d);
        const int64_t *prev = d > 0 ? df->hist + al_hidx(d - 1, -(d - 1)) : NULL;
        int any = 0;
        for (int64_t k = -d; k <= d; k += 2) {
            int64_t x, from;
            if (d == 0)
                x = 0;
            else
                x = al_pick(prev, d, k, N, M, &from);
            if (x == AL_NONE) {
                row[(k + d) / 2] = AL_NONE;
                continue;
            }
            any = 1;
            int64_t y = x - k;
            while (x < N && y < M && al_eq(c, &X[x], &Y[y])) {
                x++;
                y++;
            }
            row[(k + d) / 2] = x;
            if (free_end ? (x >= N || y >= M) : (x >= N && y >= M)) {
                dend = d;
                kend = k;
                break;
            }
        }
        if (dend >= 0)
            break;
        if (!any)
            break;
        if (d == maxd) { /* give up: trace back from the furthest point */
            *complete = 0;
            int64_t bestsum = -1;
            for (int64_t k = -d; k <= d; k += 2) {
                int64_t x = row[(k + d) / 2];
                if (x != AL_NONE && 2 * x - k > bestsum) {
                    bestsum = 2 * x - k;
                    kend = k;
                }
            }
            dend = d;
        }
    }
    if (dend < 0) { /* unreachable for non-empty rows; keep no pairs */
        *complete = 0;
        *edits = 0;
        return 0;
    }
    *edits = (uint64_t)dend;
    int64_t k = kend;
    for (int64_t d = dend; d >= 0; d--) {
        int64_t x = df->hist[al_hidx(d, k)];
        int64_t xs, from = k;
        if (d == 0)
            xs = 0;
        else
            xs = al_pick(df->hist + al_hidx(d - 1, -(d - 1)), d, k, N, M, &from);
        for (int64_t i = xs; i < x; i++)
            xm[i] = i - k;
        k = from;
    }
    return 0;
}

/* Whether two left-over tokens may pair by key alone: the same kind and
 * key, and a key that names a call site (without frames every allocation
 * of a stream has the same key, which says nothing). */
static int al_weak_eq(const al_tok_t *x, const al_tok_t *y)
{
    return x->kind == y->kind && x->key == y->key && x->framed && y->framed;
}

/* Pair the unpaired tokens X[i0,i1) and Y[j0,j1) by key in order (LCS);
 * GM_ENOMEM. */
static int al_pair_gap(const al_tok_t *X, int64_t i0, int64_t i1, const al_tok_t *Y, int64_t j0,
                       int64_t j1, int64_t *xm, gm_error_t *err)
{
    int64_t n = i1 - i0, m = j1 - j0;
    if (n <= 0 || m <= 0)
        return 0;
    if ((uint64_t)n * (uint64_t)m > AL_LCS_CELLS) { /* greedy, bounded lookahead */
        int64_t j = j0;
        for (int64_t i = i0; i < i1 && j < j1; i++)
            for (int64_t t = j; t < j1 && t < j + 64; t++)
                if (al_weak_eq(&X[i], &Y[t])) {
                    xm[i] = t;
                    j = t + 1;
                    break;
                }
        return 0;
    }
    uint32_t *L = malloc((size_t)(n + 1) * (size_t)(m + 1) * sizeof *L);
    if (L == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
#define AL_L(a, b) L[(size_t)(a) * (size_t)(m + 1) + (size_t)(b)]
    for (int64_t a = n; a >= 0; a--)
        for (int64_t b = m; b >= 0; b--) {
            if (a == n || b == m)
                AL_L(a, b) = 0;
            else if (al_weak_eq(&X[i0 + a], &Y[j0 + b]))
                AL_L(a, b) = AL_L(a + 1, b + 1) + 1;
            else
                AL_L(a, b) = AL_L(a + 1, b) > AL_L(a, b + 1) ? AL_L(a + 1, b) : AL_L(a, b + 1);
        }
    int64_t a = 0, b = 0;
    while (a < n && b < m) {
        if (al_weak_eq(&X[i0 + a], &Y[j0 + b]) && AL_L(a, b) == AL_L(a + 1, b + 1) + 1) {
            xm[i0 + a] = j0 + b;
            a++;
            b++;
        } else if (AL_L(a + 1, b) >= AL_L(a, b + 1))
            a++;
        else
            b++;
    }
#undef AL_L
    free(L);
    return 0;
}

/* Pair left-overs between consecutive pairs of xm; the region before the
 * first pair only when lead, after the last only when trail. */
static int al_pair_leftovers(const al_tok_t *X, int64_t N, const al_tok_t *Y, int64_t M,
                             int64_t *xm, int lead, int trail, gm_error_t *err)
{
    int64_t pi = -1, pj = -1;
    int rc;
    for (int64_t i = 0; i <= N; i++) {
        if (i < N && xm[i] < 0)
            continue;
        int64_t j = i < N ? xm[i] : M;
        int first = pi < 0, last = i == N;
        if ((!first || lead) && (!last || trail) &&
            (rc = al_pair_gap(X, pi + 1, i, Y, pj + 1, j, xm, err)))
            return rc;
        pi = i;
        pj = j;
    }
    return 0;
}

/* ---- the alignment ------------------------------------------------------------ */

void gm_align_result_release(gm_align_result_t *r)
{
    if (r == NULL)
        return;
    free(r->a_to_b);
    free(r->b_to_a);
    memset(r, 0, sizeof *r);
}

/* An allocation's key: its whole stack's, or its innermost call sites'. */
static uint64_t al_key(const gm_align_trace_t *t, const uint64_t *sites, size_t i)
{
    return sites ? sites[i] : t->allocs[i].key;
}

/* The main-sequence tokens of t (non-pre-existing allocations and the
 * marks kept, mkeep[m] >= 0, in event order), reversed when rev. */
static al_tok_t *al_main_tokens(const gm_align_trace_t *t, int rev, const uint64_t *sites,
                                const int64_t *mkeep, int64_t *n)
{
    size_t cnt = 0;
    for (size_t m = 0; m < t->nmarks; m++)
        cnt += mkeep[m] >= 0;
    for (size_t i = 0; i < t->nallocs; i++)
        cnt += !t->allocs[i].preexisting;
    al_tok_t *v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (v == NULL)
        return NULL;
    size_t k = 0, m = 0;
    for (size_t i = 0; i <= t->nallocs; i++) {
        uint64_t ev = i < t->nallocs ? t->allocs[i].event : UINT64_MAX;
        while (m < t->nmarks && t->marks[m].event < ev) {
            if (mkeep[m] >= 0)
                v[k++] = (al_tok_t){t->marks[m].key, 0, m, AL_KIND_MARK, 1};
            m++;
        }
        if (i < t->nallocs && !t->allocs[i].preexisting)
            v[k++] = (al_tok_t){al_key(t, sites, i), t->allocs[i].size, i,
                                AL_KIND_ALLOC, t->allocs[i].frames != 0};
    }
    if (rev)
        for (size_t i = 0; i < cnt / 2; i++) {
            al_tok_t x = v[i];
            v[i] = v[cnt - 1 - i];
            v[cnt - 1 - i] = x;
        }
    *n = (int64_t)cnt;
    return v;
}

/* A pre-existing token with the event that frees it in its window. */
typedef struct al_pre {
    al_tok_t tok;
    uint64_t free_event; /* UINT64_MAX: never freed */
} al_pre_t;

static int al_pre_cmp(const void *x, const void *y)
{
    const al_pre_t *a = x, *b = y;
    return gm__cmp_u64_keys((const uint64_t[]){a->tok.key, a->free_event, a->tok.size, a->tok.ref},
                            (const uint64_t[]){b->tok.key, b->free_event, b->tok.size, b->tok.ref},
                            4);
}

/* The pre-existing tokens of t, by (key, the order they are freed in,
 * size, id): a snapshot lists them in address order, which differs
 * between captures, while the program frees them in its own order in
 * both; those never freed follow by size. */
static al_tok_t *al_pre_tokens(const gm_align_trace_t *t, const uint64_t *sites, int64_t *n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < t->nallocs; i++)
        cnt += t->allocs[i].preexisting;
    al_tok_t *v = malloc((cnt ? cnt : 1) * sizeof *v);
    al_pre_t *p = malloc((cnt ? cnt : 1) * sizeof *p);
    if (v == NULL || p == NULL) {
        free(v);
        free(p);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < t->nallocs; i++)
        if (t->allocs[i].preexisting)
            p[k++] = (al_pre_t){{al_key(t, sites, i), t->allocs[i].size, i, AL_KIND_ALLOC,
                                 t->allocs[i].frames != 0},
                                t->allocs[i].free_event};
    qsort(p, cnt, sizeof *p, al_pre_cmp);
    for (size_t i = 0; i < cnt; i++)
        v[i] = p[i].tok;
    free(p);
    *n = (int64_t)cnt;
    return v;
}

static int64_t al_count_pairs(const int64_t *xm, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += xm[i] >= 0;
    return c;
}

/* Diff the main sequences with one anchoring; *xm is malloc'd. */
static int al_main(al_diff_t *df, const al_ctx_t *c, const gm_align_trace_t *a,
                   const gm_align_trace_t *b, int rev, int64_t maxd, al_tok_t **xa, int64_t *na,
                   al_tok_t **yb, int64_t *nb, int64_t **xm, uint64_t *edits, int *complete,
                   gm_error_t *err)
{
    *xa = al_main_tokens(a, rev, c->site_a, c->mkeep_a, na);
    *yb = al_main_tokens(b, rev, c->site_b, c->mkeep_b, nb);
    *xm = malloc((size_t)(*na ? *na : 1) * sizeof **xm);
    if (*xa == NULL || *yb == NULL || *xm == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    int rc = al_myers(df, c, *xa, *na, *yb, *nb, 1, maxd, *xm, edits, complete, err);
    if (rc)
        return rc;
    /* left-overs at the free end too: where the diff consumed one side by
     * insertions rather than pair tokens whose sizes are unrelated, the
     * tokens nearest the anchor pair by key */
    return al_pair_leftovers(*xa, *na, *yb, *nb, *xm, 1, 1, err);
}

static void al_describe(const gm_align_trace_t *a, const gm_align_trace_t *b, uint64_t aid,
                        uint64_t b_event, gm_align_result_t *out)
{
    const gm_align_alloc_t *x = &a->allocs[aid];
    const char *mark = x->mark ? a->marks[x->mark - 1].name : NULL;
    const char *fr = x->frames && x->frames < a->nframes && a->frames[x->frames]
                         ? a->frames[x->frames]
                         : NULL;
    char fbuf[96] = "";
    if (fr != NULL) {
        const char *nl = strchr(fr, '\n');
        int len = nl ? (int)(nl - fr) : (int)strlen(fr);
        if (len > 80)
            len = 80;
        snprintf(fbuf, sizeof fbuf, ", frames '%.*s'", len, fr);
    }
    char mbuf[96] = "";
    if (mark != NULL)
        snprintf(mbuf, sizeof mbuf, ", after mark '%.60s'", mark);
    int n = snprintf(out->where, sizeof out->where,
                     "event %llu of '%.60s' (allocation %llu, %llu bytes%s%s), event %llu of "
                     "'%.60s'",
                     (unsigned long long)x->event, a->name, (unsigned long long)aid,
                     (unsigned long long)x->size, mbuf, fbuf, (unsigned long long)b_event,
                     b->name);
    if (n < 0 || (size_t)n >= sizeof out->where) /* a description: cut where it does not fit */
        memcpy(out->where + sizeof out->where - 4, "...", 4);
}

/*
 * The allocations of t inside the aligned window (every pre-existing one,
 * and the others from t's first pair with a non-pre-existing allocation of
 * u on when anchored at the ends, up to its last when anchored at the
 * starts; all of them when the diff
 * gave up or paired nothing); *run_len and *run_start get the longest run
 * of unpaired ones in it (0 when none).
 */
static uint64_t al_window(const gm_align_trace_t *t, const gm_align_trace_t *u,
                          const int64_t *map, int end_anchored, int complete, uint64_t *run_len,
                          uint64_t *run_start)
{
    size_t lo = 0, hi = t->nallocs; /* window of non-pre-existing ids [lo, hi) */
    int any = 0;
    /* bounded by the pairs of the two windows (not by a pair across the
     * other's boundary with one of its pre-existing allocations) */
    for (size_t i = 0; i < t->nallocs; i++)
        if (!t->allocs[i].preexisting && map[i] >= 0 && !u->allocs[map[i]].preexisting) {
            if (!any && end_anchored)
                lo = i;
            if (!end_anchored)
                hi = i + 1;
            any = 1;
        }
    if (!any || !complete) {
        lo = 0;
        hi = t->nallocs;
    }
    uint64_t window = 0, run = 0, rs = 0;
    *run_len = 0;
    *run_start = 0;
    for (size_t i = 0; i < t->nallocs; i++) {
        if (t->allocs[i].preexisting) {
            window++;
            continue;
        }
        if (i < lo || i >= hi)
            continue;
        window++;
        if (map[i] >= 0) {
            run = 0;
            continue;
        }
        if (run++ == 0)
            rs = i;
        if (run > *run_len) {
            *run_len = run;
            *run_start = rs;
        }
    }
    return window;
}

/* The event index in u just after the pair of t's last paired allocation
 * before id (0 when none). */
static uint64_t al_after_pair(const gm_align_trace_t *t, const gm_align_trace_t *u,
                              const int64_t *map, uint64_t id)
{
    for (size_t i = id; i-- > 0;)
        if (!t->allocs[i].preexisting && map[i] >= 0)
            return u->allocs[map[i]].event + 1;
    return 0;
}

/*
 * Ring buffers that began at different points: a pre-existing allocation
 * of `late` (alive when its window began) that paired with nothing is one
 * `early` made before that point and had not freed by then.  The point in
 * early is the partner of late's first paired allocation of its window;
 * candidates are early's unpaired allocations made before it and alive at
 * it.  Both sides are taken in the order the program frees them (the
 * windows end at one point of the program: a tensor alive at late's start
 * is freed at the same place in both, and one freed in neither is never
 * freed in either; those follow by size, then id), and each pre-existing
 * allocation takes the first candidate of its key in that order, freed in
 * its window as it is, whose size is related, looking at most
 * AL_CROSS_LOOK candidates of that key ahead.  Adds to *pairs and
 * *related; GM_ENOMEM.
 */
#define AL_CROSS_LOOK 256

static int al_cross_pre(const gm_align_trace_t *late, const gm_align_trace_t *early,
                        int64_t *late_map, int64_t *early_map, uint64_t s_late, uint64_t s_early,
                        uint64_t b_late, uint64_t b_early, const uint64_t *site_late,
                        const uint64_t *site_early, uint64_t *pairs,
                        uint64_t *related, gm_error_t *err)
{
    uint64_t at = UINT64_MAX;
    for (size_t i = 0; i < late->nallocs; i++)
        if (!late->allocs[i].preexisting && late_map[i] >= 0) {
            at = early->allocs[late_map[i]].event;
            break;
        }
    if (at == UINT64_MAX)
        return 0;
    size_t np = 0, nc = 0;
    for (size_t i = 0; i < late->nallocs; i++)
        np += late->allocs[i].preexisting && late_map[i] < 0;
    for (size_t i = 0; i < early->nallocs && early->allocs[i].event < at; i++) {
        const gm_align_alloc_t *x = &early->allocs[i];
        nc += !x->preexisting && early_map[i] < 0 && x->free_event > at;
    }
    if (np == 0 || nc == 0)
        return 0;
    al_pre_t *pv = malloc(np * sizeof *pv), *cv = malloc(nc * sizeof *cv);
    if (pv == NULL || cv == NULL) {
        free(pv);
        free(cv);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    np = nc = 0;
    for (size_t i = 0; i < late->nallocs; i++) {
        const gm_align_alloc_t *x = &late->allocs[i];
        if (x->preexisting && late_map[i] < 0)
            pv[np++] = (al_pre_t){{al_key(late, site_late, i), x->size, i, 0, 0}, x->free_event};
    }
    for (size_t i = 0; i < early->nallocs && early->allocs[i].event < at; i++) {
        const gm_align_alloc_t *x = &early->allocs[i];
        if (!x->preexisting && early_map[i] < 0 && x->free_event > at)
            cv[nc++] = (al_pre_t){{al_key(early, site_early, i), x->size, i, 0, 0}, x->free_event};
    }
    qsort(pv, np, sizeof *pv, al_pre_cmp);
    qsort(cv, nc, sizeof *cv, al_pre_cmp);
    size_t c0 = 0;
    for (size_t i = 0; i < np; i++) {
        const al_tok_t *p = &pv[i].tok;
        while (c0 < nc && cv[c0].tok.key < p->key)
            c0++;
        size_t look = 0;
        for (size_t k = c0; k < nc && cv[k].tok.key == p->key && look < AL_CROSS_LOOK; k++) {
            al_tok_t *c = &cv[k].tok;
            if (c->kind || (cv[k].free_event == UINT64_MAX) != (pv[i].free_event == UINT64_MAX))
                continue; /* taken, or freed in one window only */
            look++;
            if (!gm_align_size_related(c->size, p->size, s_early, s_late, b_early, b_late))
                continue;
            c->kind = 1;
            late_map[p->ref] = (int64_t)c->ref;
            early_map[c->ref] = (int64_t)p->ref;
            (*pairs)++;
            (*related)++;
            break;
        }
    }
    free(pv);
    free(cv);
    return 0;
}

/* The alignment with one choice of keys and marks (c). */
static int al_align(const gm_align_trace_t *a, const gm_align_trace_t *b, const al_ctx_t *cp,
                    int64_t maxd, gm_align_result_t *out, gm_error_t *err)
{
    memset(out, 0, sizeof *out);
    al_ctx_t c = *cp;
    int rc = 0;
    al_diff_t df = {0};
    al_tok_t *xa = NULL, *yb = NULL, *xa2 = NULL, *yb2 = NULL, *pa = NULL, *pb = NULL;
    int64_t *xm = NULL, *xm2 = NULL, *pm = NULL;
    int64_t na = 0, nb = 0, na2 = 0, nb2 = 0, npa = 0, npb = 0;

    out->na = a->nallocs;
    out->nb = b->nallocs;
    out->a_to_b = malloc((a->nallocs ? a->nallocs : 1) * sizeof *out->a_to_b);
    out->b_to_a = malloc((b->nallocs ? b->nallocs : 1) * sizeof *out->b_to_a);
    if (out->a_to_b == NULL || out->b_to_a == NULL)
        goto nomem;
    for (size_t i = 0; i < a->nallocs; i++)
        out->a_to_b[i] = -1;
    for (size_t i = 0; i < b->nallocs; i++)
        out->b_to_a[i] = -1;

    /* pre-existing allocations */
    pa = al_pre_tokens(a, c.site_a, &npa);
    pb = al_pre_tokens(b, c.site_b, &npb);
    pm = malloc((size_t)(npa ? npa : 1) * sizeof *pm);
    if (pa == NULL || pb == NULL || pm == NULL)
        goto nomem;
    uint64_t pedits = 0;
    int pcomplete = 0;
    if ((rc = al_myers(&df, &c, pa, npa, pb, npb, 0, maxd, pm, &pedits, &pcomplete, err)) ||
        (rc = al_pair_leftovers(pa, npa, pb, npb, pm, 1, 1, err)))
        goto done;

    /* the main sequence: anchored at the ends, else at the starts */
    uint64_t edits, edits2;
    int complete, complete2;
    if ((rc = al_main(&df, &c, a, b, 1, maxd, &xa, &na, &yb, &nb, &xm, &edits, &complete, err)))
        goto done;
    int rev = 1;
    int64_t shorter = na < nb ? na : nb;
    if (al_count_pairs(xm, na) * 10 < shorter * 9) {
        if ((rc = al_main(&df, &c, a, b, 0, maxd, &xa2, &na2, &yb2, &nb2, &xm2, &edits2,
                          &complete2, err)))
            goto done;
        if (al_count_pairs(xm2, na2) > al_count_pairs(xm, na)) {
            al_tok_t *t;
            int64_t *tm;
            t = xa, xa = xa2, xa2 = t;
            t = yb, yb = yb2, yb2 = t;
            tm = xm, xm = xm2, xm2 = tm;
            edits = edits2;
            complete = complete2;
            rev = 0;
        }
    }
    out->end_anchored = rev;
    out->complete = complete && pcomplete;
    out->edits = edits + pedits;

    for (int64_t i = 0; i < npa; i++)
        if (pm[i] >= 0) {
            uint64_t ia = pa[i].ref, ib = pb[pm[i]].ref;
            out->a_to_b[ia] = (int64_t)ib;
            out->b_to_a[ib] = (int64_t)ia;
            out->matched++;
            out->matched_pre++;
            out->matched_size += gm_align_size_related(pa[i].size, pb[pm[i]].size, c.seq_a,
                                                       c.seq_b, c.batch_a, c.batch_b);
        }
    for (int64_t i = 0; i < na; i++) {
        if (xm[i] < 0)
            continue;
        const al_tok_t *x = &xa[i], *y = &yb[xm[i]];
        if (x->kind == AL_KIND_MARK) {
            out->marks_matched++;
            continue;
        }
        out->a_to_b[x->ref] = (int64_t)y->ref;
        out->b_to_a[y->ref] = (int64_t)x->ref;
        out->matched++;
        out->matched_size +=
            gm_align_size_related(x->size, y->size, c.seq_a, c.seq_b, c.batch_a, c.batch_b);
    }

    /* ring buffers begun at different points: either side's left-over
     * pre-existing allocations against the other's window */
    uint64_t cross = 0;
    if ((rc = al_cross_pre(b, a, out->b_to_a, out->a_to_b, c.seq_b, c.seq_a, c.batch_b,
                           c.batch_a, c.site_b, c.site_a, &cross, &out->matched_size, err)) ||
        (rc = al_cross_pre(a, b, out->a_to_b, out->b_to_a, c.seq_a, c.seq_b, c.batch_a,
                           c.batch_b, c.site_a, c.site_b, &cross, &out->matched_size, err)))
        goto done;
    out->matched += cross;
    out->matched_pre += cross;

    uint64_t ra_len, ra_start, rb_len, rb_start;
    out->window_a = al_window(a, b, out->a_to_b, rev, out->complete, &ra_len, &ra_start);
    out->window_b = al_window(b, a, out->b_to_a, rev, out->complete, &rb_len, &rb_start);
    if (ra_len > 0 && ra_len >= rb_len) {
        out->gap_len = ra_len;
        out->gap_a_event = a->allocs[ra_start].event;
        out->gap_b_event = al_after_pair(a, b, out->a_to_b, ra_start);
        al_describe(a, b, ra_start, out->gap_b_event, out);
    } else if (rb_len > 0) {
        out->gap_len = rb_len;
        out->gap_b_event = b->allocs[rb_start].event;
        out->gap_a_event = al_after_pair(b, a, out->b_to_a, rb_start);
        al_describe(b, a, rb_start, out->gap_a_event, out);
    }
    goto done;
nomem:
    rc = gm_error_set(err, GM_ENOMEM, "out of memory");
done:
    free(df.hist);
    free(xa);
    free(yb);
    free(xa2);
    free(yb2);
    free(pa);
    free(pb);
    free(xm);
    free(xm2);
    free(pm);
    return rc;
}

/* ---- marks as hints ------------------------------------------------------------ */

/* The marks of t as tokens (keyed by name), reversed when rev. */
static al_tok_t *al_mark_tokens(const gm_align_trace_t *t, int rev)
{
    size_t n = t->nmarks;
    al_tok_t *v = malloc((n ? n : 1) * sizeof *v);
    if (v == NULL)
        return NULL;
    for (size_t m = 0; m < n; m++)
        v[rev ? n - 1 - m : m] = (al_tok_t){t->marks[m].key, 0, m, AL_KIND_MARK, 1};
    return v;
}

/*
 * Pair the marks of a and b by name alone (anchored at the ends, else at
 * the starts when that pairs more, as the allocations are): ma[m] / mb[m]
 * get the partner's index or -1.  GM_ENOMEM.
 */
static int al_marks(const gm_align_trace_t *a, const gm_align_trace_t *b, int64_t maxd,
                    int64_t *ma, int64_t *mb, gm_error_t *err)
{
    int64_t na = (int64_t)a->nmarks, nb = (int64_t)b->nmarks;
    for (int64_t m = 0; m < na; m++)
        ma[m] = -1;
    for (int64_t m = 0; m < nb; m++)
        mb[m] = -1;
    if (na == 0 || nb == 0)
        return 0;
    al_diff_t df = {0};
    al_ctx_t c = {0};
    int64_t *xm[2] = {malloc((size_t)na * sizeof **xm), malloc((size_t)na * sizeof **xm)};
    int64_t best = -1, got[2] = {0, 0};
    int rc = 0;
    for (int rev = 1; rev >= 0; rev--) {
        al_tok_t *x = al_mark_tokens(a, rev), *y = al_mark_tokens(b, rev);
        uint64_t edits;
        int complete;
        if (x == NULL || y == NULL || xm[rev] == NULL)
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        else if ((rc = al_myers(&df, &c, x, na, y, nb, 1, maxd, xm[rev], &edits, &complete,
                                err)) == 0)
            rc = al_pair_leftovers(x, na, y, nb, xm[rev], 1, 1, err);
        free(x);
        free(y);
        if (rc)
            break;
        got[rev] = al_count_pairs(xm[rev], na);
        if (best < 0 || got[rev] > got[best])
            best = rev;
        if (rev == 1 && got[1] * 10 >= (na < nb ? na : nb) * 9)
            break;
    }
    if (rc == 0)
        for (int64_t i = 0; i < na; i++) {
            int64_t j = xm[best][i];
            if (j < 0)
                continue;
            int64_t ia = best ? na - 1 - i : i, ib = best ? nb - 1 - j : j;
            ma[ia] = ib;
            mb[ib] = ia;
        }
    free(df.hist);
    free(xm[0]);
    free(xm[1]);
    return rc;
}

/* The event span [lo, hi] of t's aligned window: from its first
 * allocation paired with one made inside the other's window to the end
 * when anchored at the ends, from the start to its last such allocation
 * when anchored at the starts; lo > hi when none paired. */
static void al_span(const gm_align_trace_t *t, const gm_align_trace_t *u, const int64_t *map,
                    int end_anchored, uint64_t *lo, uint64_t *hi)
{
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < t->nallocs; i++)
        if (!t->allocs[i].preexisting && map[i] >= 0 && !u->allocs[map[i]].preexisting) {
            if (first == UINT64_MAX)
                first = t->allocs[i].event;
            last = t->allocs[i].event;
        }
    *lo = first;
    *hi = last;
    if (first != UINT64_MAX) {
        if (end_anchored)
            *hi = UINT64_MAX;
        else
            *lo = 0;
    }
}

/* Count t's unpaired marks inside its span into out's notes (side 0: a). */
static void al_note_marks(const gm_align_trace_t *t, const int64_t *mm, uint64_t lo, uint64_t hi,
                          int side, gm_align_result_t *out)
{
    for (size_t m = 0; m < t->nmarks; m++) {
        const gm_align_mark_t *x = &t->marks[m];
        if (mm[m] >= 0 || x->event < lo || x->event > hi)
            continue;
        if (side == 0)
            out->marks_only_a++;
        else
            out->marks_only_b++;
        size_t k = 0;
        const size_t cmp = sizeof out->notes[0].name - 1;
        while (k < out->nnotes && strncmp(out->notes[k].name, x->name, cmp) != 0)
            k++;
        if (k == out->nnotes) {
            if (k == GM_ALIGN_NOTES)
                continue;
            snprintf(out->notes[k].name, sizeof out->notes[k].name, "%s", x->name);
            out->nnotes++;
        }
        if (side == 0)
            out->notes[k].in_a++;
        else
            out->notes[k].in_b++;
    }
}

/* 1 when some allocation's call site differs from its whole stack
 * (keying by them may pair more). */
static int al_sites_differ(const gm_align_trace_t *t, const uint64_t *sites)
{
    for (size_t i = 0; i < t->nallocs; i++)
        if (sites[i] != t->allocs[i].key)
            return 1;
    return 0;
}

static int al_poor(const gm_align_result_t *r)
{
    uint64_t win = r->window_a > r->window_b ? r->window_a : r->window_b;
    return r->matched * 10 < win * 9;
}

int gm_align_traces(const gm_align_trace_t *a, const gm_align_trace_t *b,
                    const gm_align_options_t *opts, gm_align_result_t *out, gm_error_t *err)
{
    memset(out, 0, sizeof *out);
    gm_align_options_t o = {0};
    if (opts != NULL)
        o = *opts;
    int64_t maxd = o.max_edits ? (int64_t)o.max_edits : AL_DEFAULT_EDITS;
    int64_t *ma = malloc((a->nmarks ? a->nmarks : 1) * sizeof *ma);
    int64_t *mb = malloc((b->nmarks ? b->nmarks : 1) * sizeof *mb);
    uint64_t *sa = NULL, *sb = NULL;
    int rc = 0;
    if (ma == NULL || mb == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = al_marks(a, b, maxd, ma, mb, err)))
        goto done;
    al_ctx_t c = {o.seq_a, o.seq_b, o.batch_a, o.batch_b, NULL, NULL, ma, mb};
    if ((rc = al_align(a, b, &c, maxd, out, err)))
        goto done;
    if (al_poor(out)) { /* the call sites are hashed only then */
        sa = malloc((a->nallocs ? a->nallocs : 1) * sizeof *sa);
        sb = malloc((b->nallocs ? b->nallocs : 1) * sizeof *sb);
        if (sa == NULL || sb == NULL || gm_align_site_keys(a, sa) || gm_align_site_keys(b, sb)) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            goto done;
        }
    }
    if (sa != NULL && (al_sites_differ(a, sa) || al_sites_differ(b, sb))) {
        gm_align_result_t alt;
        c.site_a = sa;
        c.site_b = sb;
        if ((rc = al_align(a, b, &c, maxd, &alt, err))) {
            gm_align_result_release(&alt);
            goto done;
        }
        if (alt.matched > out->matched) {
            gm_align_result_release(out);
            *out = alt;
            out->site_keys = 1;
        } else {
            gm_align_result_release(&alt);
        }
    }
    uint64_t lo, hi;
    al_span(a, b, out->a_to_b, out->end_anchored, &lo, &hi);
    al_note_marks(a, ma, lo, hi, 0, out);
    al_span(b, a, out->b_to_a, out->end_anchored, &lo, &hi);
    al_note_marks(b, mb, lo, hi, 1, out);
done:
    free(ma);
    free(mb);
    free(sa);
    free(sb);
    return rc;
}
