/*
 * sim/offline.c — the offline planner: knowing every allocation's lifetime
 * before the first event, give each one a fixed offset in one arena.
 *
 * Plan (in prepare, from gm_trace_context_t.lifetimes):
 *
 *   Buffer i holds size_i bytes (rounded up to `align`) over the event
 *   interval [start_i, end_i) (end = the FREE's index; never freed: to the
 *   end of the trace).  Two buffers conflict when their intervals overlap;
 *   conflicting buffers may not overlap in the arena.  The arena's size is
 *   the largest offset + size: the plan's peak, which is never below the
 *   peak of live requested bytes (LOAD) and is the figure this policy
 *   reports as peak reserved.
 *
 *   1. Greedy by size with best fit, as XLA's heap simulator
 *      (GlobalDecreasingSizeBestFitHeap) and TFLite's greedy-by-size memory
 *      planner do: buffers in decreasing size (ties: longer lifetime, then
 *      earlier start); each goes into the smallest gap, among the buffers
 *      already placed that conflict with it, that holds it (ties: the lowest
 *      offset), or on top of them when no gap does.
 *   2. Improvement while the work budget (`effort`) lasts:
 *      - the same greedy under other orders (first fit instead of best fit;
 *        by size × lifetime; by lifetime; by start);
 *      - for up to OFFLINE_SKYLINE_MAX buffers, skyline passes: each buffer
 *        rests on the buffers placed beside it, lowest resting place first
 *        (the widest lifetime first among equals), the first plain, later
 *        ones randomized;
 *      - for up to OFFLINE_SEARCH_MAX buffers, a depth-first search for a
 *        plan under a target just below the best so far (MiniMalloc,
 *        Moffitt, ASPLOS 2023, was read for its ideas: canonical placements
 *        in offset order, the section bound, dominance, splitting into
 *        groups that share no time, rounds of static preorders under a
 *        doubling node budget); each plan found lowers the target;
 *      - an iterated local search over the best greedy order: move one
 *        buffer — half the time the one whose placement set the peak — to
 *        an earlier position (or swap two), re-place everything, keep the
 *        new order when its peak is no worse.
 *      The budget counts work (placements, conflicts and segments visited),
 *      never time, and the random moves come from a PRNG seeded by `seed`:
 *      the plan is the same on every machine and every run.  The first
 *      greedy pass always completes; every step keeps the best plan so far.
 *
 *   Conflicts are found with a max-end segment tree over the buffers sorted
 *   by start: the placed buffers with start < end_i are a prefix, and the
 *   tree skips every subtree whose largest end is ≤ start_i, so a query
 *   costs O((k + 1) log n) for k conflicts, never all pairs.  The k
 *   conflicting ranges are sorted by offset and swept once for the gaps.
 *
 * Replay: the first alloc reserves the arena with one device malloc (its
 * size the plan's peak); each alloc is served at its planned offset.  An
 * arena the device refuses (capacity) makes every alloc an OOM until it
 * fits.  empty_cache gives the arena back when nothing is live (it is
 * reserved again at the next alloc).  Pre-existing allocations are planned
 * like any other.  Without a context (no prepare, or no lifetimes) the
 * policy refuses to run: the replay engine reports it.
 *
 * Invariants (check): the live blocks are exactly the address map's, each
 * at its allocation's planned offset, inside the arena, and no two overlap;
 * their sizes sum to `allocated`; the device's reserved bytes are the
 * arena's (or 0 before it is reserved).
 */
#include "gmsim/policy.h"
#include "gmsim/trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/idmap.h"

typedef struct offline_buf {
    uint64_t size; /* rounded to align */
    uint64_t start, end;
} offline_buf_t;

typedef struct offline_range {
    uint64_t lo, hi; /* [lo, hi) in the arena */
} offline_range_t;

typedef struct offline {
    gm_policy_t base;
    uint64_t align;
    int64_t effort;
    uint64_t seed;

    /* the plan */
    int planned;
    size_t n;
    uint64_t *offset;   /* by allocation id */
    uint64_t *size;     /* by allocation id, rounded */
    uint64_t *reqsize;  /* by allocation id, as requested */
    uint64_t peak;      /* arena bytes the plan needs */
    uint64_t passes;    /* heuristic passes made while planning (diagnostics) */
    uint64_t work;      /* work units spent (diagnostics) */

    /* the arena */
    uint64_t arena_addr, arena_got; /* got = 0: not reserved */

    gm__idmap_t live; /* address → allocation id */
    uint64_t allocated;
} offline_t;

extern const gm_policy_ops_t gm__policy_offline;

#define OFFLINE(p) GM_POLICY_DOWNCAST(offline_t, p, gm__policy_offline)

/* ---- planning ----------------------------------------------------------------- */

typedef struct plan {
    size_t n;
    const offline_buf_t *buf; /* by id */
    uint32_t *by_start;       /* ids sorted by start */
    uint64_t *starts;         /* starts in that order */
    uint32_t *pos;            /* id → position in by_start */
    size_t m;                 /* leaves of the tree (power of two ≥ n) */
    uint64_t *tree;           /* max end of the placed buffers below; 0 = none */
    uint64_t *off;            /* this pass's offsets, by id */
    uint64_t *leaf_off;       /* the same by position in by_start (cache-friendly) */
    uint64_t *leaf_size;      /* sizes by position */
    offline_range_t *scratch; /* the conflicts of one query */
    size_t scratch_cap;
    uint32_t *stack;
    uint64_t work;
    int oom;
} plan_t;

static uint64_t offline_rand(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static void offline_range_sort(offline_range_t *a, size_t n)
{
    /* Quicksort by lo (median of three), insertion sort below 16. */
    while (n > 16) {
        size_t mid = n / 2;
        uint64_t x = a[0].lo, y = a[mid].lo, z = a[n - 1].lo;
        uint64_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i].lo < pivot)
                i++;
            while (a[j].lo > pivot)
                j--;
            if (i >= j)
                break;
            offline_range_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* [0, j] ≤ pivot ≤ [j+1, n): recurse on the smaller side */
        size_t left = j + 1;
        if (left < n - left) {
            offline_range_sort(a, left);
            a += left;
            n -= left;
        } else {
            offline_range_sort(a + left, n - left);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        offline_range_t t = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1].lo > t.lo) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = t;
    }
}

static int offline_push(plan_t *pl, size_t *k, uint64_t lo, uint64_t hi)
{
    if (*k == pl->scratch_cap) {
        size_t cap = pl->scratch_cap ? 2 * pl->scratch_cap : 256;
        offline_range_t *s = realloc(pl->scratch, cap * sizeof *s);
        if (s == NULL) {
            pl->oom = 1;
            return -1;
        }
        pl->scratch = s;
        pl->scratch_cap = cap;
    }
    pl->scratch[(*k)++] = (offline_range_t){lo, hi};
    return 0;
}

/* The ranges of the placed buffers conflicting with [s, e): their count. */
static size_t offline_conflicts(plan_t *pl, uint64_t s, uint64_t e)
{
    /* positions [0, P) start before e */
    size_t lo = 0, hi = pl->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pl->starts[mid] < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t P = lo, k = 0;
    if (P == 0 || pl->tree[1] <= s)
        return 0;
    /* nodes: 1 is the root over [0, m); node v at depth d covers a range
     * of m >> d leaves; the stack holds nodes with their first leaf. */
    size_t sp = 0;
    uint32_t *st = pl->stack;
    st[sp++] = 1;
    while (sp > 0) {
        uint32_t v = st[--sp];
        pl->work++;
        if (v >= pl->m) {
            size_t at = v - pl->m;
            if (offline_push(pl, &k, pl->leaf_off[at], pl->leaf_off[at] + pl->leaf_size[at]))
                return 0;
            continue;
        }
        /* node v at depth d covers m >> d leaves from (v − 2^d)(m >> d); its
         * right child starts half way */
        unsigned d = 63u - (unsigned)__builtin_clzll((uint64_t)v);
        size_t span = pl->m >> d;
        size_t rfirst = ((size_t)v - ((size_t)1 << d)) * span + span / 2;
        uint32_t l = 2 * v, r = 2 * v + 1;
        if (rfirst < P && pl->tree[r] > s)
            st[sp++] = r;
        if (pl->tree[l] > s)
            st[sp++] = l;
    }
    return k;
}

static void offline_place(plan_t *pl, uint32_t id, uint64_t off)
{
    pl->off[id] = off;
    pl->leaf_off[pl->pos[id]] = off;
    size_t v = pl->m + pl->pos[id];
    uint64_t e = pl->buf[id].end;
    while (v >= 1 && pl->tree[v] < e) {
        pl->tree[v] = e;
        v >>= 1;
    }
}

/* One greedy pass in `order`; returns the peak (0 and pl->oom on host OOM).
 * *critical gets the index in order of the buffer that reached the peak. */
static uint64_t offline_pass(plan_t *pl, const uint32_t *order, int first_fit, size_t *critical)
{
    memset(pl->tree, 0, 2 * pl->m * sizeof *pl->tree);
    uint64_t peak = 0;
    *critical = 0;
    for (size_t i = 0; i < pl->n; i++) {
        uint32_t id = order[i];
        const offline_buf_t *b = &pl->buf[id];
        size_t k = offline_conflicts(pl, b->start, b->end);
        if (pl->oom)
            return 0;
        pl->work += 1 + k;
        offline_range_sort(pl->scratch, k);
        uint64_t cur = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
        for (size_t j = 0; j < k; j++) {
            const offline_range_t *r = &pl->scratch[j];
            if (r->lo > cur) {
                uint64_t gap = r->lo - cur;
                if (gap >= b->size && gap < best_gap) {
                    best = cur;
                    best_gap = gap;
                    if (first_fit || gap == b->size)
                        break;
                }
            }
            if (r->hi > cur)
                cur = r->hi;
        }
        uint64_t off = best != UINT64_MAX ? best : cur;
        offline_place(pl, id, off);
        if (off + b->size > peak) {
            peak = off + b->size;
            *critical = i;
        }
    }
    return peak;
}

typedef int (*offline_cmp_fn)(const offline_buf_t *, const offline_buf_t *);

static uint64_t offline_len(const offline_buf_t *b) { return b->end - b->start; }

#define OFFLINE_CMP(a, b) \
    if ((a) != (b))       \
        return (a) < (b) ? -1 : 1;

static int offline_cmp_size(const offline_buf_t *x, const offline_buf_t *y)
{
    OFFLINE_CMP(y->size, x->size);
    OFFLINE_CMP(offline_len(y), offline_len(x));
    OFFLINE_CMP(x->start, y->start);
    return 0;
}

static int offline_cmp_area(const offline_buf_t *x, const offline_buf_t *y)
{
    /* size × length compared without overflow (as long double) */
    long double ax = (long double)x->size * (long double)offline_len(x);
    long double ay = (long double)y->size * (long double)offline_len(y);
    if (ax != ay)
        return ax > ay ? -1 : 1;
    return offline_cmp_size(x, y);
}

static int offline_cmp_length(const offline_buf_t *x, const offline_buf_t *y)
{
    OFFLINE_CMP(offline_len(y), offline_len(x));
    return offline_cmp_size(x, y);
}

static int offline_cmp_start(const offline_buf_t *x, const offline_buf_t *y)
{
    OFFLINE_CMP(x->start, y->start);
    return offline_cmp_size(x, y);
}

/* Stable bottom-up merge sort of ids by fn (ties keep id order); tmp holds
 * n ids.  O(n log n), no global state. */
static void offline_sort_ids(uint32_t *ids, uint32_t *tmp, size_t n, const offline_buf_t *buf,
                             offline_cmp_fn fn)
{
    uint32_t *src = ids, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = fn(&buf[src[j]], &buf[src[i]]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != ids)
        memcpy(ids, src, n * sizeof *ids);
}

static void offline_order(uint32_t *order, uint32_t *tmp, size_t n, const offline_buf_t *buf,
                          offline_cmp_fn fn)
{
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    offline_sort_ids(order, tmp, n, buf, fn);
}

/* ---- skyline passes --------------------------------------------------------------
 * The other family of heuristics, for small instances (OFFLINE_SKYLINE_MAX
 * buffers at most: a pass costs O(n × (n + T)) for T distinct times).  The
 * time axis is cut into T elementary segments; the skyline is the top of
 * the placed buffers over each.  Repeatedly, every unplaced buffer's resting
 * place is the top of the skyline over its lifetime; the one with the
 * lowest resting place goes there (ties: the wider lifetime, then the
 * larger, then the lower id).  A buffer always rests above everything
 * placed beside it, so the plan is valid.  Randomized passes take the
 * second candidate instead of the first a quarter of the time (seeded
 * PRNG). */

#define OFFLINE_SKYLINE_MAX 4096

typedef struct skyline {
    size_t n, T;             /* buffers, elementary segments */
    uint32_t *cs, *ce;       /* each buffer's segments [cs, ce) */
    uint64_t *h;             /* skyline height per segment */
    uint32_t *todo;          /* unplaced buffers */
} skyline_t;

static int offline_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t offline_coord(const uint64_t *c, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int skyline_init(skyline_t *sk, const offline_buf_t *buf, size_t n)
{
    memset(sk, 0, sizeof *sk);
    uint64_t *c = malloc(2 * n * sizeof *c);
    sk->cs = malloc(n * sizeof *sk->cs);
    sk->ce = malloc(n * sizeof *sk->ce);
    sk->todo = malloc(n * sizeof *sk->todo);
    sk->h = malloc(2 * n * sizeof *sk->h);
    if (!c || !sk->cs || !sk->ce || !sk->todo || !sk->h) {
        free(c);
        return GM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        c[2 * i] = buf[i].start;
        c[2 * i + 1] = buf[i].end;
    }
    qsort(c, 2 * n, sizeof *c, offline_u64_cmp);
    size_t u = 0;
    for (size_t i = 0; i < 2 * n; i++)
        if (u == 0 || c[i] != c[u - 1])
            c[u++] = c[i];
    for (size_t i = 0; i < n; i++) {
        sk->cs[i] = (uint32_t)offline_coord(c, u, buf[i].start);
        sk->ce[i] = (uint32_t)offline_coord(c, u, buf[i].end);
    }
    sk->n = n;
    sk->T = u - 1;
    free(c);
    return 0;
}

static void skyline_release(skyline_t *sk)
{
    free(sk->cs);
    free(sk->ce);
    free(sk->h);
    free(sk->todo);
}

/* The floor of buffer id: the top of the skyline over its lifetime. */
static inline uint64_t skyline_floor(const skyline_t *sk, uint32_t id)
{
    uint64_t top = 0;
    for (size_t j = sk->cs[id]; j < sk->ce[id]; j++)
        if (sk->h[j] > top)
            top = sk->h[j];
    return top;
}

/* Whether buffer x goes before y among candidates of one floor: wider,
 * then larger, then lower id. */
static inline int skyline_before(const offline_buf_t *buf, uint32_t x, uint32_t y)
{
    uint64_t wx = buf[x].end - buf[x].start, wy = buf[y].end - buf[y].start;
    if (wx != wy)
        return wx > wy;
    if (buf[x].size != buf[y].size)
        return buf[x].size > buf[y].size;
    return x < y;
}

/* One pass; off gets the offsets; returns the peak.  rng NULL: no
 * randomness. */
static uint64_t skyline_pass(skyline_t *sk, const offline_buf_t *buf, uint64_t *off,
                             uint64_t *rng, uint64_t *work)
{
    size_t left = sk->n;
    memset(sk->h, 0, sk->T * sizeof *sk->h);
    for (size_t i = 0; i < sk->n; i++)
        sk->todo[i] = (uint32_t)i;
    uint64_t peak = 0;
    while (left > 0) {
        size_t best = SIZE_MAX, second = SIZE_MAX;
        uint64_t bf = UINT64_MAX;
        for (size_t k = 0; k < left; k++) {
            uint32_t id = sk->todo[k];
            uint64_t f = skyline_floor(sk, id);
            *work += 1 + sk->ce[id] - sk->cs[id];
            if (f < bf || (f == bf && skyline_before(buf, id, sk->todo[best]))) {
                second = f == bf ? best : SIZE_MAX;
                best = k;
                bf = f;
            } else if (f == bf && second == SIZE_MAX) {
                second = k;
            }
        }
        if (rng != NULL && second != SIZE_MAX && (offline_rand(rng) & 3) == 0)
            best = second;
        uint32_t id = sk->todo[best];
        sk->todo[best] = sk->todo[--left];
        off[id] = bf;
        for (size_t j = sk->cs[id]; j < sk->ce[id]; j++)
            sk->h[j] = bf + buf[id].size;
        if (bf + buf[id].size > peak)
            peak = bf + buf[id].size;
    }
    return peak;
}

/* ---- skyline search ----------------------------------------------------------
 * A depth-first search over the same placements (the canonical solutions of
 * MiniMalloc, Moffitt 2023, in a simpler form: every buffer rests on the
 * skyline, and the buffers are placed lowest floor first): at each step try
 * every buffer of the lowest floor (in the pass's order, one of each
 * identical lifetime and size).  It looks for a plan of at most `target`
 * bytes and prunes with the section bound — over every time segment the
 * skyline plus the unplaced buffers alive there must fit under the target,
 * as every buffer still to come goes above the skyline — and with each
 * buffer's floor + size.  The work budget bounds it. */

#define OFFLINE_SEARCH_MAX 1024

typedef struct sky_dfs {
    skyline_t *sk;
    const offline_buf_t *buf;
    uint64_t target;
    uint64_t *sum;    /* per segment: bytes of the unplaced buffers alive there */
    uint64_t *hf;     /* per buffer: the top of the placed buffers beside it */
    uint64_t *low;    /* per segment: scratch of the section bound */
    uint32_t *rank;   /* per buffer: its place in the static preorder */
    uint64_t *off, *found_off;
    uint64_t *undo;   /* (buffer, old hf) pairs, a stack */
    size_t nundo;
    struct sky_group *pending; /* groups waiting for their turn */
    size_t npending, pending_cap;
    unsigned unwind; /* frames deeper than this give up (a later group failed) */
    uint64_t work, limit;
    int oom;
} sky_dfs_t;

typedef struct sky_cand {
    uint64_t at;
    uint32_t rank;
    uint32_t k; /* index in todo */
} sky_cand_t;

static int sky_cand_cmp(const void *a, const void *b)
{
    const sky_cand_t *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* A group of unplaced buffers that share no time with the others: a
 * subproblem solved on its own (todo[0, left), segments [sa, sb)). */
typedef struct sky_group {
    uint32_t *todo;
    size_t left;
    size_t sa, sb;
    uint64_t level;
    uint32_t last_rank;
    unsigned depth; /* of the search frame that split the problem */
} sky_group_t;

static int sky_span_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b; /* (cs << 32 | ce, id) pairs */
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int sky_dfs(sky_dfs_t *d, uint32_t *todo, size_t left, size_t sa, size_t sb,
                   uint64_t level, uint32_t last_rank, unsigned depth);

/* The group is done: go on with the next pending one, or record the plan. */
static int sky_next_group(sky_dfs_t *d)
{
    if (d->npending == 0) {
        memcpy(d->found_off, d->off, d->sk->n * sizeof *d->off);
        return 1;
    }
    sky_group_t g = d->pending[--d->npending];
    int ok = sky_dfs(d, g.todo, g.left, g.sa, g.sb, g.level, g.last_rank, g.depth + 1);
    d->pending[d->npending++] = g;
    if (!ok && !d->oom && d->unwind > g.depth + 1)
        d->unwind = g.depth + 1; /* not the other groups' fault: no retrying them */
    return ok;
}

/*
 * Place the `left` buffers of todo[0, left) (all within segments [sa, sb)),
 * in canonical order: by offset, then by preorder rank (a buffer at
 * `level`, the last one's offset, must rank after it), each resting on the
 * placed buffers beside it or on 0 — any plan can be pushed down and sorted
 * into that form.  A buffer whose offset would reach the top of another
 * unplaced one is not tried: that one could go first, below it
 * (dominance).  When the buffers left fall into groups that share no time
 * (MiniMalloc's dynamic decomposition), each group is solved on its own and
 * a group that fails fails the placement that split them, without retrying
 * the other groups' choices.  1 when a plan under the target was found (in
 * d->found_off).
 */
static int sky_dfs(sky_dfs_t *d, uint32_t *todo, size_t left, size_t sa, size_t sb,
                   uint64_t level, uint32_t last_rank, unsigned depth)
{
    skyline_t *sk = d->sk;
    const offline_buf_t *buf = d->buf;
    if (left == 0)
        return sky_next_group(d);
    if (d->work >= d->limit)
        return 0;
    /* the section bound: over every segment of the group, what is still to
     * come goes above the skyline, the level, and the lowest resting place
     * of the unplaced buffers alive there */
    uint64_t *low = d->low;
    for (size_t j = sa; j < sb; j++)
        low[j] = UINT64_MAX;
    for (size_t k = 0; k < left; k++) {
        uint32_t id = todo[k];
        for (size_t j = sk->cs[id]; j < sk->ce[id]; j++)
            if (d->hf[id] < low[j])
                low[j] = d->hf[id];
        d->work += sk->ce[id] - sk->cs[id];
    }
    for (size_t j = sa; j < sb; j++) {
        uint64_t base = sk->h[j] > level ? sk->h[j] : level;
        if (low[j] != UINT64_MAX && low[j] > base)
            base = low[j];
        if (d->sum[j] && base + d->sum[j] > d->target)
            return 0;
    }
    d->work += (sb - sa) + 8 * left;
    sky_cand_t *cand = malloc(left * sizeof *cand);
    uint64_t *pairs = malloc(2 * left * sizeof *pairs);
    uint32_t *keep = malloc(left * sizeof *keep);
    if (cand == NULL || pairs == NULL || keep == NULL) {
        free(cand);
        free(pairs);
        free(keep);
        d->oom = 1;
        return 0;
    }
    uint64_t min_top = UINT64_MAX;
    size_t nc = 0;
    for (size_t k = 0; k < left; k++) {
        uint32_t id = todo[k];
        uint64_t f = d->hf[id];
        if ((f > level ? f : level) + buf[id].size > d->target) {
            nc = 0;
            min_top = 0; /* it cannot fit any more */
            break;
        }
        if (f + buf[id].size < min_top)
            min_top = f + buf[id].size;
        /* a buffer rests on those placed (or on 0); one whose resting place
         * is below the level must wait until something under it rises */
        if (f > level || (f == level && d->rank[id] >= last_rank))
            cand[nc++] = (sky_cand_t){f, d->rank[id], (uint32_t)k};
    }
    qsort(cand, nc, sizeof *cand, sky_cand_cmp);
    int ok = 0;
    for (size_t i = 0; i < nc && !ok; i++) {
        size_t k = cand[i].k;
        uint64_t at = cand[i].at;
        if (at >= min_top)
            break; /* dominated, and so is everything after it */
        uint32_t id = todo[k];
        uint64_t top = at + buf[id].size;
        uint64_t *saved = malloc((sk->ce[id] - sk->cs[id] + 1) * sizeof *saved);
        if (saved == NULL) {
            d->oom = 1;
            break;
        }
        for (size_t j = sk->cs[id]; j < sk->ce[id]; j++) {
            saved[j - sk->cs[id]] = sk->h[j];
            sk->h[j] = top;
            d->sum[j] -= buf[id].size;
        }
        todo[k] = todo[left - 1];
        todo[left - 1] = id;
        d->off[id] = at;
        /* the buffers alive beside id now rest at least on its top */
        size_t mark = d->nundo;
        for (size_t q = 0; q + 1 < left; q++) {
            uint32_t b = todo[q];
            if (sk->cs[b] < sk->ce[id] && sk->cs[id] < sk->ce[b] && d->hf[b] < top) {
                d->undo[2 * d->nundo] = b;
                d->undo[2 * d->nundo + 1] = d->hf[b];
                d->nundo++;
                d->hf[b] = top;
            }
        }
        /* split what is left into groups that share no time */
        size_t rest = left - 1, ngroups = 0;
        for (size_t q = 0; q < rest; q++) {
            pairs[2 * q] = (uint64_t)sk->cs[todo[q]] << 32 | sk->ce[todo[q]];
            pairs[2 * q + 1] = todo[q];
        }
        if (rest > 1) {
            qsort(pairs, rest, 2 * sizeof *pairs, sky_span_cmp);
            uint64_t reach = 0;
            for (size_t q = 0; q < rest; q++) {
                uint64_t cs = pairs[2 * q] >> 32, ce = pairs[2 * q] & UINT32_MAX;
                if (q == 0 || cs >= reach)
                    ngroups++;
                if (ce > reach)
                    reach = ce;
            }
        }
        if (ngroups > 1 && d->npending + ngroups <= d->pending_cap) {
            memcpy(keep, todo, rest * sizeof *keep);
            for (size_t q = 0; q < rest; q++)
                todo[q] = (uint32_t)pairs[2 * q + 1];
            /* groups in time order: the first is searched now, the others
             * are pushed last-first so that they come out in order */
            size_t g0 = 0;
            sky_group_t *gs = d->pending + d->npending;
            size_t ng = 0;
            uint64_t reach = 0;
            for (size_t q = 0; q <= rest; q++) {
                uint64_t cs = q < rest ? sk->cs[todo[q]] : UINT64_MAX;
                if (q > 0 && (q == rest || cs >= reach)) {
                    size_t gsa = sk->cs[todo[g0]];
                    /* a group shares no time with the rest: its own
                     * canonical order starts afresh */
                    gs[ng++] = (sky_group_t){todo + g0, q - g0, gsa, (size_t)reach, 0, 0, depth};
                    g0 = q;
                }
                if (q < rest && sk->ce[todo[q]] > reach)
                    reach = sk->ce[todo[q]];
            }
            /* reverse gs[1..ng) onto the stack top */
            sky_group_t first = gs[0];
            for (size_t a = 1, b = ng - 1; a < b; a++, b--) {
                sky_group_t t = gs[a];
                gs[a] = gs[b];
                gs[b] = t;
            }
            for (size_t a = 0; a + 1 < ng; a++)
                gs[a] = gs[a + 1];
            d->npending += ng - 1;
            ok = sky_dfs(d, first.todo, first.left, first.sa, first.sb, 0, 0, depth + 1);
            d->npending -= ng - 1;
            memcpy(todo, keep, rest * sizeof *keep);
        } else {
            ok = sky_dfs(d, todo, rest, sa, sb, at, cand[i].rank, depth + 1);
        }
        while (d->nundo > mark) {
            d->nundo--;
            d->hf[d->undo[2 * d->nundo]] = d->undo[2 * d->nundo + 1];
        }
        todo[left - 1] = todo[k];
        todo[k] = id;
        for (size_t j = sk->cs[id]; j < sk->ce[id]; j++) {
            sk->h[j] = saved[j - sk->cs[id]];
            d->sum[j] += buf[id].size;
        }
        free(saved);
        if (d->oom || d->work >= d->limit)
            break;
        if (d->unwind <= depth)
            break; /* a later group failed: nothing here can help it */
        if (d->unwind == depth + 1)
            d->unwind = UINT32_MAX; /* our placement failed: try the next */
    }
    free(cand);
    free(pairs);
    free(keep);
    return ok;
}

/* Preorders of the search (MiniMalloc's round robin of static orders): the
 * busiest time first (the largest sum of sizes over the buffer's segments),
 * then wider, then larger; or wider, larger, busier; or larger, wider. */
typedef struct sky_pre {
    uint64_t total, width, size;
    uint32_t id;
} sky_pre_t;

static int sky_pre_twa(const void *a, const void *b)
{
    const sky_pre_t *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    if (x->width != y->width)
        return x->width > y->width ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int sky_pre_wst(const void *a, const void *b)
{
    const sky_pre_t *x = a, *y = b;
    if (x->width != y->width)
        return x->width > y->width ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int sky_pre_swt(const void *a, const void *b)
{
    const sky_pre_t *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->width != y->width)
        return x->width > y->width ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Search for a plan of at most d->target within d->limit work: rounds of
 * the three preorders under a node budget that doubles each round. */
static int offline_search_target(sky_dfs_t *d, sky_pre_t *pre, uint64_t stop)
{
    skyline_t *sk = d->sk;
    size_t n = sk->n;
    static int (*const orders[])(const void *, const void *) = {sky_pre_twa, sky_pre_wst,
                                                                 sky_pre_swt};
    for (uint64_t quota = 64 * (uint64_t)(n + sk->T); d->work < stop; quota *= 2) {
        for (size_t o = 0; o < sizeof orders / sizeof orders[0] && d->work < stop; o++) {
            qsort(pre, n, sizeof *pre, orders[o]);
            for (size_t i = 0; i < n; i++)
                d->rank[pre[i].id] = (uint32_t)i;
            d->limit = d->work + quota < stop ? d->work + quota : stop;
            memset(sk->h, 0, sk->T * sizeof *sk->h);
            memset(d->hf, 0, n * sizeof *d->hf);
            for (size_t i = 0; i < n; i++)
                sk->todo[i] = (uint32_t)i;
            d->unwind = UINT32_MAX;
            d->npending = 0;
            if (sky_dfs(d, sk->todo, n, 0, sk->T, 0, 0, 0))
                return 1;
            if (d->oom)
                return 0;
            if (d->work < d->limit)
                return 0; /* the whole tree was searched: no such plan */
        }
    }
    return 0;
}

/* Search for plans below *best (offsets into off) within `limit` work;
 * returns the work spent.  GM_ENOMEM through *rc.  Targets go down from
 * just below *best in steps of 0.5 % (each found plan lowers *best); a
 * target not reached within its share of the budget (a quarter of what is
 * left) halves the step, down to one `align`. */
static uint64_t offline_search(skyline_t *sk, const offline_buf_t *buf, uint64_t align,
                               uint64_t *best, uint64_t *off, uint64_t limit, int *rc)
{
    size_t n = sk->n, T = sk->T;
    sky_dfs_t d;
    memset(&d, 0, sizeof d);
    d.sk = sk;
    d.buf = buf;
    d.sum = calloc(T ? T : 1, sizeof *d.sum);
    d.hf = calloc(n, sizeof *d.hf);
    d.low = malloc((T ? T : 1) * sizeof *d.low);
    d.rank = malloc(n * sizeof *d.rank);
    d.off = malloc(n * sizeof *d.off);
    d.found_off = malloc(n * sizeof *d.found_off);
    /* each level of the search pushes at most n − 1 entries */
    d.undo = malloc(2 * (n * n + 1) * sizeof *d.undo);
    sky_pre_t *pre = malloc(n * sizeof *pre);
    d.pending_cap = 4 * n + 16;
    d.pending = malloc(d.pending_cap * sizeof *d.pending);
    if (!d.pending ||
        !d.sum || !d.hf || !d.low || !d.rank || !d.off || !d.found_off || !d.undo || !pre) {
        *rc = GM_ENOMEM;
        goto out;
    }
    uint64_t floor = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = sk->cs[i]; j < sk->ce[i]; j++)
            d.sum[j] += buf[i].size;
    for (size_t j = 0; j < T; j++)
        if (d.sum[j] > floor)
            floor = d.sum[j];
    for (size_t i = 0; i < n; i++) {
        uint64_t total = 0;
        for (size_t j = sk->cs[i]; j < sk->ce[i]; j++)
            if (d.sum[j] > total)
                total = d.sum[j];
        pre[i] = (sky_pre_t){total, buf[i].end - buf[i].start, buf[i].size, (uint32_t)i};
    }
    uint64_t step = *best / 200;
    while (*best > floor && d.work < limit && step >= align) {
        uint64_t target = *best - step < floor ? floor : *best - step;
        target = target / align * align;
        if (target < floor)
            target = (floor + align - 1) / align * align;
        if (target >= *best)
            break;
        d.target = target;
        if (!offline_search_target(&d, pre, d.work + (limit - d.work) / 4 + 1)) {
            if (d.oom)
                break;
            step /= 2; /* too far for this budget: a smaller step */
            continue;
        }
        uint64_t peak = 0;
        for (size_t i = 0; i < n; i++)
            if (d.found_off[i] + buf[i].size > peak)
                peak = d.found_off[i] + buf[i].size;
        *best = peak;
        memcpy(off, d.found_off, n * sizeof *off);
    }
    if (d.oom)
        *rc = GM_ENOMEM;
out:
    free(d.sum);
    free(d.hf);
    free(d.low);
    free(d.rank);
    free(d.off);
    free(d.found_off);
    free(d.undo);
    free(d.pending);
    free(pre);
    return d.work;
}

/*
 * Plan buf[0..n) into off (by id).  Returns the peak; GM_ENOMEM through
 * *rc.  effort bounds the work of the improvement passes.
 */
static uint64_t offline_plan(const offline_buf_t *buf, size_t n, uint64_t align, int64_t effort,
                             uint64_t seed, uint64_t *off, uint64_t *passes, uint64_t *work, int *rc)
{
    *rc = 0;
    *passes = 0;
    *work = 0;
    if (n == 0)
        return 0;
    plan_t pl;
    memset(&pl, 0, sizeof pl);
    pl.n = n;
    pl.buf = buf;
    pl.m = 1;
    while (pl.m < n)
        pl.m *= 2;
    pl.by_start = malloc(n * sizeof *pl.by_start);
    pl.starts = malloc(n * sizeof *pl.starts);
    pl.pos = malloc(n * sizeof *pl.pos);
    pl.tree = malloc(2 * pl.m * sizeof *pl.tree);
    pl.off = malloc(n * sizeof *pl.off);
    pl.leaf_off = malloc(n * sizeof *pl.leaf_off);
    pl.leaf_size = malloc(n * sizeof *pl.leaf_size);
    pl.stack = malloc(2 * 64 * sizeof *pl.stack + 2 * sizeof *pl.stack);
    uint32_t *order = malloc(n * sizeof *order), *best_order = malloc(n * sizeof *best_order);
    uint32_t *trial = malloc(n * sizeof *trial);
    uint64_t best = UINT64_MAX, greedy_best = UINT64_MAX;
    skyline_t sk;
    memset(&sk, 0, sizeof sk);
    if (!pl.by_start || !pl.starts || !pl.pos || !pl.tree || !pl.off || !pl.leaf_off ||
        !pl.leaf_size || !pl.stack || !order ||
        !best_order || !trial) {
        *rc = GM_ENOMEM;
        goto out;
    }
    /* the stack holds at most one pending right child per level plus a
     * left child: 2 × depth + 2 entries; depth ≤ 64 */
    int sorted = 1;
    for (size_t i = 0; i < n; i++) {
        pl.by_start[i] = (uint32_t)i;
        if (i > 0 && buf[i].start < buf[i - 1].start)
            sorted = 0;
    }
    if (!sorted)
        offline_sort_ids(pl.by_start, trial, n, buf, offline_cmp_start);
    for (size_t i = 0; i < n; i++) {
        pl.starts[i] = buf[pl.by_start[i]].start;
        pl.leaf_size[i] = buf[pl.by_start[i]].size;
        pl.pos[pl.by_start[i]] = (uint32_t)i;
    }

    static const offline_cmp_fn orders[] = {offline_cmp_size, offline_cmp_size, offline_cmp_area,
                                            offline_cmp_length, offline_cmp_start};
    static const int first_fit[] = {0, 1, 0, 0, 0};
    size_t critical, best_critical = 0;
    int best_ff = 0;
    uint64_t budget = effort > 0 ? (uint64_t)effort : 0;
    for (size_t v = 0; v < sizeof orders / sizeof orders[0]; v++) {
        if (v > 0 && pl.work >= budget)
            break;
        offline_order(order, trial, n, buf, orders[v]);
        uint64_t peak = offline_pass(&pl, order, first_fit[v], &critical);
        ++*passes;
        if (pl.oom) {
            *rc = GM_ENOMEM;
            goto out;
        }
        if (peak < best) {
            best = greedy_best = peak;
            best_critical = critical;
            best_ff = first_fit[v];
            memcpy(best_order, order, n * sizeof *order);
            memcpy(off, pl.off, n * sizeof *off);
        }
    }
    /* Then, while the budget lasts: skyline passes (small instances: one
     * plain, then randomized ones with a quarter of what is left), the
     * local search over the best greedy order (a third of what is left when
     * the search comes after it, else all), and the search (the rest). */
    uint64_t rng = seed;
    int small = n > 1 && n <= OFFLINE_SKYLINE_MAX, tiny = n > 1 && n <= OFFLINE_SEARCH_MAX;
    if (small && pl.work < budget) {
        if (skyline_init(&sk, buf, n) != 0) {
            *rc = GM_ENOMEM;
            goto out;
        }
        uint64_t stop = pl.work + (budget - pl.work) / 4;
        for (int k = 0; k == 0 || pl.work < stop; k++) {
            uint64_t peak = skyline_pass(&sk, buf, pl.off, k ? &rng : NULL, &pl.work);
            ++*passes;
            if (peak < best) {
                best = peak;
                memcpy(off, pl.off, n * sizeof *off);
            }
        }
    }
    uint64_t stop = pl.work < budget ? budget - (tiny ? (budget - pl.work) * 2 / 3 : 0) : 0;
    while (n > 1 && pl.work < stop) {
        memcpy(trial, best_order, n * sizeof *trial);
        uint64_t r = offline_rand(&rng);
        size_t i, j;
        if ((r & 1) && best_critical > 0) {
            i = best_critical;
            j = (size_t)(offline_rand(&rng) % best_critical);
        } else {
            i = (size_t)(offline_rand(&rng) % n);
            j = (size_t)(offline_rand(&rng) % n);
        }
        if (i == j)
            continue;
        if (r & 2) { /* swap */
            uint32_t t = trial[i];
            trial[i] = trial[j];
            trial[j] = t;
        } else { /* move i to j */
            uint32_t t = trial[i];
            if (j < i)
                memmove(trial + j + 1, trial + j, (i - j) * sizeof *trial);
            else
                memmove(trial + i, trial + i + 1, (j - i) * sizeof *trial);
            trial[j] = t;
        }
        uint64_t peak = offline_pass(&pl, trial, best_ff, &critical);
        ++*passes;
        if (pl.oom) {
            *rc = GM_ENOMEM;
            goto out;
        }
        if (peak <= greedy_best) { /* equal peaks too: the search drifts over plateaus */
            greedy_best = peak;
            best_critical = critical;
            memcpy(best_order, trial, n * sizeof *trial);
            if (peak < best) {
                best = peak;
                memcpy(off, pl.off, n * sizeof *off);
            }
        }
    }
    if (tiny && pl.work < budget && sk.n == n) {
        int src = 0;
        pl.work += offline_search(&sk, buf, align, &best, off, budget - pl.work, &src);
        if (src) {
            *rc = src;
            goto out;
        }
    }
out:
    *work = pl.work;
    skyline_release(&sk);
    free(pl.by_start);
    free(pl.starts);
    free(pl.pos);
    free(pl.tree);
    free(pl.off);
    free(pl.leaf_off);
    free(pl.leaf_size);
    free(pl.stack);
    free(pl.scratch);
    free(order);
    free(best_order);
    free(trial);
    return *rc ? 0 : best;
}

/* ---- the interface --------------------------------------------------------------- */

static int offline_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                          gm_error_t *err)
{
    uint64_t align = values[0].size;
    if (align == 0 || (align & (align - 1)) != 0 || align > (UINT64_C(1) << 30))
        return gm_error_set(err, GM_EINVAL,
                            "invalid value '%" PRIu64 "' for offline.align: not a power of two up "
                            "to 1 GiB",
                            align);
    if (values[1].i < 0)
        return gm_error_set(err, GM_EINVAL,
                            "invalid value '%" PRId64 "' for offline.effort: negative", values[1].i);
    offline_t *o = calloc(1, sizeof *o);
    if (o == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'offline'");
    o->base.ops = &gm__policy_offline;
    o->base.dev = dev;
    o->align = align;
    o->effort = values[1].i;
    o->seed = (uint64_t)values[2].i;
    gm__idmap_init(&o->live);
    *out = &o->base;
    return 0;
}

static int offline_prepare(gm_policy_t *p, const gm_trace_context_t *ctx, gm_error_t *err)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL)
        return gm_error_set(err, GM_EINVAL, "not an offline policy");
    if (ctx == NULL || ctx->lifetimes == NULL)
        return gm_error_set(err, GM_ESTATE,
                            "offline needs the whole trace: replay it from a store");
    if (o->planned)
        return gm_error_set(err, GM_ESTATE, "offline: already planned");
    size_t n = ctx->nlifetimes;
    if (n > UINT32_MAX - 1)
        return gm_error_set(err, GM_EINVAL, "offline: %zu allocations, more than it can plan", n);
    offline_buf_t *buf = malloc((n ? n : 1) * sizeof *buf);
    o->offset = malloc((n ? n : 1) * sizeof *o->offset);
    o->size = malloc((n ? n : 1) * sizeof *o->size);
    o->reqsize = malloc((n ? n : 1) * sizeof *o->reqsize);
    if (buf == NULL || o->offset == NULL || o->size == NULL || o->reqsize == NULL) {
        free(buf);
        return gm_error_set(err, GM_ENOMEM, "offline: out of memory for %zu allocations", n);
    }
    for (size_t i = 0; i < n; i++) {
        const gm_lifetime_t *lt = &ctx->lifetimes[i];
        uint64_t sz = lt->size;
        if (sz > GM_SIZE_LIMIT)
            sz = GM_SIZE_LIMIT;
        uint64_t r = (sz + o->align - 1) & ~(o->align - 1);
        uint64_t end = lt->end == GM_LIFETIME_OPEN || lt->end <= lt->start ? UINT64_MAX : lt->end;
        if (lt->end != GM_LIFETIME_OPEN && lt->end <= lt->start)
            end = lt->start + 1;
        buf[i] = (offline_buf_t){r ? r : o->align, lt->start, end};
        o->size[i] = buf[i].size;
        o->reqsize[i] = lt->size;
    }
    int rc;
    o->peak = offline_plan(buf, n, o->align, o->effort, o->seed, o->offset, &o->passes, &o->work, &rc);
    free(buf);
    if (rc)
        return gm_error_set(err, rc, "offline: out of memory while planning %zu allocations", n);
    o->n = n;
    o->planned = 1;
    return 0;
}

static int offline_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL)
        return GM_EINVAL;
    if (!o->planned)
        return GM_ESTATE;
    if (req->id >= o->n || req->size != o->reqsize[req->id])
        return GM_EINVAL; /* not the trace that was planned */
    if (o->arena_got == 0) {
        uint64_t addr, got;
        if (gm_device_malloc(p->dev, o->peak ? o->peak : o->align, o->align, &addr, &got) != 0)
            return GM_ALLOC_OOM;
        o->arena_addr = addr;
        o->arena_got = got;
    }
    uint64_t addr = o->arena_addr + o->offset[req->id];
    if (gm__idmap_insert(&o->live, addr, req->id) != 0)
        return GM_EINVAL; /* its place is taken: a live allocation the plan did not expect */
    o->allocated += o->size[req->id];
    out->addr = addr;
    out->size = o->size[req->id];
    return 0;
}

static int offline_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    (void)stream;
    offline_t *o = OFFLINE(p);
    uint64_t id;
    if (o == NULL || blk->addr == UINT64_MAX || !gm__idmap_get(&o->live, blk->addr, &id) ||
        o->size[id] != blk->size)
        return GM_EINVAL;
    gm__idmap_remove(&o->live, blk->addr, NULL);
    o->allocated -= blk->size;
    return 0;
}

static void offline_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    offline_t *o = OFFLINE(p);
    memset(out, 0, sizeof *out);
    if (o == NULL)
        return;
    out->allocated = o->allocated;
    out->free_bytes = p->dev->reserved > o->allocated ? p->dev->reserved - o->allocated : 0;
    /* The arena is fixed: the largest free gap is computed from the live
     * blocks only when something asks (the peak), so it is exact but not
     * cheap: sort the live blocks by address. */
    size_t n = gm__idmap_count(&o->live);
    if (o->arena_got == 0)
        return;
    offline_range_t *r = malloc((n ? n : 1) * sizeof *r);
    if (r == NULL)
        return;
    size_t k = 0;
    uint64_t addr, id;
    for (size_t pos = 0; gm__idmap_next(&o->live, &pos, &addr, &id);)
        r[k++] = (offline_range_t){addr, addr + o->size[id]};
    offline_range_sort(r, k);
    uint64_t cur = o->arena_addr, largest = 0;
    for (size_t i = 0; i < k; i++) {
        if (r[i].lo > cur && r[i].lo - cur > largest)
            largest = r[i].lo - cur;
        if (r[i].hi > cur)
            cur = r[i].hi;
    }
    uint64_t end = o->arena_addr + o->arena_got;
    if (end > cur && end - cur > largest)
        largest = end - cur;
    out->largest_free = largest;
    free(r);
}

#define OFFLINE_BAD(...)                             \
    do {                                             \
        if (bad++ == 0 && why != NULL && whylen > 0) \
            snprintf(why, whylen, __VA_ARGS__);      \
    } while (0)

static int offline_check(gm_policy_t *p, char *why, size_t whylen)
{
    int bad = 0;
    if (why != NULL && whylen > 0)
        why[0] = '\0';
    offline_t *o = OFFLINE(p);
    if (o == NULL) {
        OFFLINE_BAD("not an offline policy");
        return bad;
    }
    size_t n = gm__idmap_count(&o->live);
    if (n > 0 && o->arena_got == 0)
        OFFLINE_BAD("%zu live blocks but no arena", n);
    if (p->dev->reserved != o->arena_got)
        OFFLINE_BAD("the arena holds %" PRIu64 " bytes but the device's reserved is %" PRIu64,
                    o->arena_got, p->dev->reserved);
    if (o->arena_got != 0 && o->arena_got < o->peak)
        OFFLINE_BAD("arena of %" PRIu64 " bytes below the plan's %" PRIu64, o->arena_got, o->peak);
    offline_range_t *r = malloc((n ? n : 1) * sizeof *r);
    if (r == NULL)
        return bad;
    size_t k = 0;
    uint64_t addr, id, sum = 0;
    for (size_t pos = 0; gm__idmap_next(&o->live, &pos, &addr, &id);) {
        if (id >= o->n) {
            OFFLINE_BAD("live block at 0x%" PRIx64 " has unknown id %" PRIu64, addr, id);
            continue;
        }
        if (addr != o->arena_addr + o->offset[id])
            OFFLINE_BAD("allocation %" PRIu64 " at 0x%" PRIx64 ", planned at offset %" PRIu64, id,
                        addr, o->offset[id]);
        if (o->offset[id] + o->size[id] > o->arena_got)
            OFFLINE_BAD("allocation %" PRIu64 " ends past the arena", id);
        sum += o->size[id];
        r[k++] = (offline_range_t){addr, addr + o->size[id]};
    }
    offline_range_sort(r, k);
    for (size_t i = 1; i < k; i++)
        if (r[i].lo < r[i - 1].hi)
            OFFLINE_BAD("live blocks at 0x%" PRIx64 " and 0x%" PRIx64 " overlap", r[i - 1].lo,
                        r[i].lo);
    free(r);
    if (sum != o->allocated)
        OFFLINE_BAD("allocated bytes %" PRIu64 " differ from the live blocks' %" PRIu64,
                    o->allocated, sum);
    return bad;
}

static void offline_empty_cache(gm_policy_t *p)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL || o->arena_got == 0 || gm__idmap_count(&o->live) != 0)
        return;
    gm_device_free(p->dev, o->arena_addr, o->arena_got);
    o->arena_got = 0;
}

static void offline_destroy(gm_policy_t *p)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL)
        return;
    gm__idmap_release(&o->live);
    free(o->offset);
    free(o->size);
    free(o->reqsize);
    free(o);
}

static const gm_param_spec_t offline_params[] = {
    {"align", GM_PARAM_SIZE, "512", "offset alignment and size unit (a power of two)", NULL},
    {"effort", GM_PARAM_INT, "100000000",
     "improvement budget in work units (placements and conflicts visited), not time: the plan "
     "is the same on every machine; 0 = greedy by size alone",
     NULL},
    {"seed", GM_PARAM_INT, "1", "seed of the local search's random moves", NULL},
};

const gm_policy_ops_t gm__policy_offline = {
    .name = "offline",
    .help = "offline planner: every allocation at a fixed offset in one arena, planned from the "
            "whole trace (greedy by size, best fit, then local search); the achievable bound",
    .params = offline_params,
    .nparams = sizeof offline_params / sizeof offline_params[0],
    .flags = GM_POLICY_NEEDS_LIFETIMES,
    .create = offline_create,
    .alloc = offline_alloc,
    .free = offline_free,
    .stats = offline_stats,
    .check = offline_check,
    .destroy = offline_destroy,
    .empty_cache = offline_empty_cache,
    .prepare = offline_prepare,
};
