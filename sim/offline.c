/*
 * sim/offline.c — the offline planner: knowing every allocation's lifetime
 * before the first event, give each one a fixed offset in one arena.
 *
 * Plan (in prepare, from gm_trace_context_t.lifetimes):
 *
 *   Buffer i holds size_i bytes (rounded up to `align`) over the event
 *   interval [start_i, end_i) (end = the FREE's index; never freed: to the
 *   end of the trace), and lives from t0_i to t1_i in time (the lifetimes'
 *   timestamps; the event indices when the trace has none): events say
 *   which buffers overlap, times how long each lives, which orders the
 *   exact search.  Two buffers conflict when their intervals overlap;
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
 *        ones randomized; above OFFLINE_EXACT_MAX buffers (real traces of
 *        thousands, where the greedy orders cost a quarter of the budget
 *        each and the exact search does not run) the plain pass runs
 *        after the greedy orders even when they have used up the budget;
 *      - an iterated local search over the best greedy order: move one
 *        buffer — half the time the one whose placement set the peak — to
 *        an earlier position (or swap two), re-place everything, keep the
 *        new order when its peak is no worse.
 *      Every step stops as soon as a plan reaches the lower bound LB (the
 *      busiest instant's bytes, by a sweep over the lifetimes: no plan
 *      goes below it).
 *   3. Beyond OFFLINE_EXACT_MAX buffers (up to OFFLINE_REPAIR_MAX), when
 *      the plan is above LB: the window repair (below), under half of
 *      the `search` budget: an exact search over windows of time around
 *      the busiest instants where the plan rises above LB, the rest
 *      re-placed around them; a window proved infeasible raises the bound.
 *   4. For up to OFFLINE_EXACT_MAX buffers, an exact search under its own
 *      budget (`search`): a branch-and-bound for a plan within a target
 *      arena size (see "exact search" below: MiniMalloc's canonical
 *      placements, section bounds, dominance, hatless pruning, decomposition
 *      and preorders by lifetime width in time, Moffitt, ASPLOS 2023, read
 *      for its ideas), a bottom-left fill for perfect packings, and the
 *      targets of offline_exact: the capacity the instance was given
 *      first, then the proved bound and the midpoint to the best plan under
 *      a doubling quota.  A target is proved infeasible only by a search
 *      that ran to its end, never by one given up for budget.
 *   The plan's status (gm_plan_info_t): optimal when its bytes equal the
 *   proved bound (LB, or a target the search proved infeasible, plus
 *   align), feasible when the exact search found it unproved, greedy when
 *   it is the heuristics' and unproved.
 *   Every budget counts work (placements, conflicts, segments and search
 *   entries visited), never time, and the random moves come from a PRNG
 *   seeded by `seed`: the plan is the same on every machine and every run.
 *   The first greedy pass always completes; every step keeps the best plan
 *   so far.
 *
 *   Conflicts are found with a max-end tree over the buffers sorted by
 *   start: the placed buffers with start < end_i are a prefix, and the
 *   tree skips every subtree whose largest end is ≤ start_i, so a query
 *   costs O((k + 1) log n) for k conflicts, never all pairs.  The tree is
 *   16-ary, a node one cache line of its children's 32-bit ends compared
 *   at once (a binary tree's walk was two thirds of a million-buffer plan,
 *   most of it cache misses); the work it counts is the binary tree's over
 *   the same leaves (offline_binary_visits), so every budget falls as
 *   before.  The k conflicting ranges are sorted by offset and swept once
 *   for the gaps.
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

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "base/idmap.h"

typedef struct offline_buf {
    uint64_t size; /* rounded to align */
    uint64_t start, end; /* event indices: which buffers overlap */
    uint64_t t0, t1;     /* times: how long each lives (the exact search's order) */
} offline_buf_t;

typedef struct offline_range {
    uint64_t lo, hi; /* [lo, hi) in the arena */
} offline_range_t;

typedef struct offline {
    gm_policy_t base;
    uint64_t align;
    int64_t effort;
    uint64_t seed;
    int64_t search;

    /* the plan */
    int planned;
    size_t n;
    uint64_t *offset;   /* by allocation id */
    uint64_t *size;     /* by allocation id, rounded */
    uint64_t *reqsize;  /* by allocation id, as requested */
    uint64_t peak;      /* arena bytes the plan needs */
    uint64_t passes;    /* heuristic passes made while planning (diagnostics) */
    uint64_t work;      /* work units spent (diagnostics) */
    uint64_t capacity;  /* the param; 0: the trace's "capacity" attribute, if any */
    uint64_t cap_used;  /* the capacity the plan was asked to fit (0: none) */
    uint64_t lb;        /* proved: no plan needs fewer bytes */
    int status;         /* GM_PLAN_* */

    /* the arena */
    uint64_t arena_addr, arena_got; /* got = 0: not reserved */

    gm__idmap_t live; /* address → allocation id */
    uint64_t allocated;
} offline_t;

extern const gm_policy_ops_t gm__policy_offline;

#define OFFLINE(p) GM_POLICY_DOWNCAST(offline_t, p, gm__policy_offline)

/* ---- planning ----------------------------------------------------------------- */

/* The max-end tree's levels at most: 16 leaves a node, 2^32 leaves. */
#define OFFLINE_LEVELS 8

/* A buffer's event index as the greedy passes keep it: 32 bits, a
 * lifetime that never ends UINT32_MAX (above every start).  offline_plan
 * ranks the indices first when a trace has 2^32 − 1 events or more. */
static inline uint32_t offline_end32(uint64_t end)
{
    return end == UINT64_MAX ? UINT32_MAX : (uint32_t)end;
}

typedef struct plan {
    size_t n;
    const offline_buf_t *buf; /* by id */
    uint32_t *by_start;       /* ids sorted by start */
    uint64_t *starts;         /* starts in that order */
    uint32_t *pos;            /* id → position in by_start */
    size_t m;                 /* leaves of the tree (power of two ≥ n) */
    unsigned levels, top_fan; /* the tree's levels; the root's children (16, or fewer) */
    uint32_t *node;           /* the tree: per level (bottom first, at lvl[]) per node 16 max ends
                               * of the placed buffers below each child (0: none); a node is
                               * one cache line, its children's ends compared at once */
    size_t lvl[OFFLINE_LEVELS], nodes; /* each level's first entry; entries in all */
    uint32_t *before;         /* dense starts: before[e] = buffers starting before e (NULL: search) */
    uint64_t top;             /* before[] covers [0, top] */
    uint64_t *off;            /* this pass's offsets, by id */
    offline_range_t *range;   /* by position in by_start: the placed buffer's range */
    offline_range_t *scratch; /* the conflicts of one query */
    size_t scratch_cap;
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

/* Up to this many ranges, insertion sort: on large traces a query's
 * conflicts come out of the tree nearly in offset order (most have 8-63),
 * where it is close to linear; on small ones (the local search's passes)
 * they do not, and it is quadratic.  32 rather than 16 took a few percent
 * off both; 64 made the shared instance D 5% slower. */
#define OFFLINE_ISORT 32

static void offline_range_sort(offline_range_t *a, size_t n)
{
    /* Quicksort by lo (median of three), insertion sort below OFFLINE_ISORT. */
    while (n > OFFLINE_ISORT) {
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

/* The work a binary max-end tree over the same leaves would count for one
 * node of this tree (the budgets are in that unit, so the plans are as
 * they were): the binary nodes inside it (4 levels, fewer at a root of
 * fewer than 16 children) that start before the prefix's end (among the
 * first lim children) and hold an end beyond the query's start (mask: the
 * children that do). */
static inline uint64_t offline_binary_visits(unsigned mask, unsigned fan, unsigned lim)
{
    static const unsigned first[4] = {0x5555, 0x1111, 0x0101, 0x0001};
    unsigned below = (1u << lim) - 1, any = mask;
    uint64_t bits = 0; /* level b's nodes in bits [16 b, 16 b + 16) */
    for (unsigned b = 0, width = 2; width <= fan; b++, width *= 2) {
        any |= any >> (width / 2); /* bit i·width: some child of block i */
        bits |= (uint64_t)(any & first[b] & below) << (16 * b);
    }
    /* their count (a population count without the instruction, which the
     * baseline x86-64 build lacks: the library call was 5% of a plan) */
    bits -= (bits >> 1) & UINT64_C(0x5555555555555555);
    bits = (bits & UINT64_C(0x3333333333333333)) + ((bits >> 2) & UINT64_C(0x3333333333333333));
    bits = (bits + (bits >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (bits * UINT64_C(0x0101010101010101)) >> 56;
}

/* The placed buffers at positions [0, P) below node j of level lv (its
 * first leaf `first`) that end after s, left to right, into the scratch. */
static void offline_visit(plan_t *pl, size_t *k, unsigned lv, size_t j, size_t first, uint32_t s,
                          size_t P)
{
    const uint32_t *row = pl->node + pl->lvl[lv] + 16 * j;
    unsigned fan = lv + 1 == pl->levels ? pl->top_fan : 16, mask = 0;
    for (unsigned c = 0; c < 16; c++)
        mask |= (unsigned)(row[c] > s) << c;
    size_t span = (size_t)1 << (4 * lv); /* leaves under each child */
    size_t lim = (P - first + span - 1) / span;
    if (lim > fan)
        lim = fan;
    pl->work += offline_binary_visits(mask, fan, (unsigned)lim);
    mask &= (1u << lim) - 1;
    if (lv == 0) {
        for (; mask != 0; mask &= mask - 1) {
            const offline_range_t *r = &pl->range[first + (unsigned)__builtin_ctz(mask)];
            pl->work++;
            if (offline_push(pl, k, r->lo, r->hi))
                return;
        }
        return;
    }
    /* the children read next: fetch their lines first (the walk is mostly
     * cache misses) */
    for (unsigned m = mask; m != 0; m &= m - 1) {
        size_t c = 16 * j + (unsigned)__builtin_ctz(m);
        __builtin_prefetch(pl->node + pl->lvl[lv - 1] + 16 * c);
        if (lv == 1) /* and the ranges of its leaves: four lines */
            for (unsigned q = 0; q < 16; q += 4)
                __builtin_prefetch(&pl->range[16 * c + q]);
    }
    for (; mask != 0 && !pl->oom; mask &= mask - 1) {
        unsigned c = (unsigned)__builtin_ctz(mask);
        offline_visit(pl, k, lv - 1, 16 * j + c, first + c * span, s, P);
    }
}

/* The ranges of the placed buffers conflicting with [s, e): their count. */
static size_t offline_conflicts(plan_t *pl, uint32_t s, uint64_t e)
{
    /* positions [0, P) start before e: a table lookup where the event
     * indices are dense, else a binary search */
    size_t P;
    if (pl->before != NULL) {
        P = e <= pl->top ? pl->before[e] : pl->n;
    } else {
        size_t lo = 0, hi = pl->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (pl->starts[mid] < e)
                lo = mid + 1;
            else
                hi = mid;
        }
        P = lo;
    }
    size_t k = 0;
    if (P == 0)
        return 0;
    if (pl->m == 1) { /* the root is the one leaf */
        pl->work++;
        if (pl->node[0] > s && offline_push(pl, &k, pl->range[0].lo, pl->range[0].hi))
            return 0;
        return k;
    }
    offline_visit(pl, &k, pl->levels - 1, 0, 0, s, P);
    return pl->oom ? 0 : k;
}

static void offline_place(plan_t *pl, uint32_t id, uint64_t off)
{
    pl->off[id] = off;
    uint32_t e = offline_end32(pl->buf[id].end);
    size_t pos = pl->pos[id];
    pl->range[pos] = (offline_range_t){off, off + pl->buf[id].size};
    pl->node[pos] = e; /* level 0: the leaves' ends */
    for (unsigned lv = 1; lv < pl->levels; lv++) {
        uint32_t *x = &pl->node[pl->lvl[lv] + (pos >> (4 * lv))];
        if (*x >= e)
            break; /* and so is every level above */
        *x = e;
    }
}

/* Whether [lo, lo + size) meets none of the k ranges. */
static int offline_free_at(const offline_range_t *r, size_t k, uint64_t lo, uint64_t size)
{
    for (size_t j = 0; j < k; j++)
        if (r[j].lo < lo + size && lo < r[j].hi)
            return 0;
    return 1;
}

/* One greedy pass in `order`, each buffer into its gap, or where at[] (by
 * id; NULL: none) wants it when nothing placed there conflicts
 * (UINT64_MAX: nowhere); returns the peak (0 and pl->oom on host OOM).
 * *critical gets the index in order of the buffer that reached the peak. */
static uint64_t offline_pass(plan_t *pl, const uint32_t *order, const uint64_t *at, int first_fit,
                             size_t *critical)
{
    memset(pl->node, 0, pl->nodes * sizeof *pl->node);
    uint64_t peak = 0;
    *critical = 0;
    for (size_t i = 0; i < pl->n; i++) {
        uint32_t id = order[i];
        const offline_buf_t *b = &pl->buf[id];
        /* the order is by size, the ids at random: fetch what the next
         * queries read by id (the buffer, then its position and prefix,
         * then its leaf) ahead of them, each from what came in before */
        if (i + 16 < pl->n)
            __builtin_prefetch(&pl->buf[order[i + 16]]);
        if (i + 8 < pl->n) {
            const offline_buf_t *nb = &pl->buf[order[i + 8]];
            __builtin_prefetch(&pl->pos[order[i + 8]]);
            if (pl->before != NULL && nb->end <= pl->top)
                __builtin_prefetch(&pl->before[nb->end]);
        }
        if (i + 4 < pl->n) {
            size_t np = pl->pos[order[i + 4]];
            __builtin_prefetch(&pl->range[np], 1);
            __builtin_prefetch(&pl->node[np], 1);
        }
        size_t k = offline_conflicts(pl, (uint32_t)b->start, b->end);
        if (pl->oom)
            return 0;
        pl->work += 1 + k;
        uint64_t off;
        if (at != NULL && at[id] != UINT64_MAX && offline_free_at(pl->scratch, k, at[id], b->size)) {
            off = at[id]; /* no sort: where it wants to be */
        } else {
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
            off = best != UINT64_MAX ? best : cur;
        }
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

/* An order's keys, compared as (a, b, c) ascending, then the id. */
typedef struct offline_key {
    uint64_t a, b, c;
    uint32_t id;
} offline_key_t;

static inline int offline_key_before(const offline_key_t *x, const offline_key_t *y)
{
    if (x->a != y->a)
        return x->a < y->a;
    if (x->b != y->b)
        return x->b < y->b;
    if (x->c != y->c)
        return x->c < y->c;
    return x->id < y->id;
}

/* Bottom-up merge sort of keys (a total order: the ids break ties). */
static void offline_sort_keys(offline_key_t *k, offline_key_t *tmp, size_t n)
{
    offline_key_t *src = k, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, q = lo;
            while (i < mid && j < hi)
                dst[q++] = offline_key_before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[q++] = src[i++];
            while (j < hi)
                dst[q++] = src[j++];
        }
        offline_key_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != k)
        memcpy(k, src, n * sizeof *k);
}

/* The ids in the order fn gives (ties: the lower id).  The orders by size,
 * length and start sort their keys packed beside the ids (no comparator
 * call, no reading of the buffers at random: the sort of a million ids was
 * a twelfth of a pass); the others through fn. */
static void offline_order(uint32_t *order, uint32_t *tmp, size_t n, const offline_buf_t *buf,
                          offline_cmp_fn fn)
{
    int keyed = fn == offline_cmp_size || fn == offline_cmp_length || fn == offline_cmp_start;
    offline_key_t *k = keyed ? malloc(2 * (n ? n : 1) * sizeof *k) : NULL;
    if (k == NULL) {
        for (size_t i = 0; i < n; i++)
            order[i] = (uint32_t)i;
        offline_sort_ids(order, tmp, n, buf, fn);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const offline_buf_t *b = &buf[i];
        uint64_t size = ~b->size, len = ~offline_len(b); /* descending */
        if (fn == offline_cmp_size)
            k[i] = (offline_key_t){size, len, b->start, (uint32_t)i};
        else if (fn == offline_cmp_length)
            k[i] = (offline_key_t){len, size, b->start, (uint32_t)i};
        else
            k[i] = (offline_key_t){b->start, size, len, (uint32_t)i};
    }
    offline_sort_keys(k, k + n, n);
    for (size_t i = 0; i < n; i++)
        order[i] = k[i].id;
    free(k);
}

/* ---- skyline passes --------------------------------------------------------------
 * The other family of heuristics, for instances of OFFLINE_SKYLINE_MAX
 * buffers at most (a pass costs O(n²): each step scans the unplaced
 * buffers' floors, kept per buffer and raised by each placement beside it;
 * its work is counted as the pass that read the segments of every
 * candidate did, O(n × (n + T)) for T distinct times, so that the budgets
 * fall as they did).  The
 * time axis is cut into T elementary segments; the skyline is the top of
 * the placed buffers over each.  Repeatedly, every unplaced buffer's resting
 * place is the top of the skyline over its lifetime; the one with the
 * lowest resting place goes there (ties: the wider lifetime, then the
 * larger, then the lower id).  A buffer always rests above everything
 * placed beside it, so the plan is valid.  Randomized passes take the
 * second candidate instead of the first a quarter of the time (seeded
 * PRNG). */

#define OFFLINE_SKYLINE_MAX 16384

typedef struct skyline {
    size_t n, T;             /* buffers, elementary segments */
    uint32_t *cs, *ce;       /* each buffer's segments [cs, ce) */
    uint64_t *fl;            /* per buffer: the top of the skyline over its lifetime */
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

/* Sort c[0, k) and keep each value once; returns how many remain. */
static size_t offline_unique(uint64_t *c, size_t k)
{
    qsort(c, k, sizeof *c, offline_u64_cmp);
    size_t d = 0;
    for (size_t i = 0; i < k; i++)
        if (d == 0 || c[i] != c[d - 1])
            c[d++] = c[i];
    return d;
}

/* The distinct starts and ends of buf[0, n) (a lifetime that never ends:
 * UINT64_MAX), sorted, in a new array of 2n; *u gets their count.  NULL
 * on host OOM. */
static uint64_t *offline_times(const offline_buf_t *buf, size_t n, size_t *u)
{
    uint64_t *c = malloc(2 * (n ? n : 1) * sizeof *c);
    if (c == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        c[2 * i] = buf[i].start;
        c[2 * i + 1] = buf[i].end;
    }
    *u = offline_unique(c, 2 * n);
    return c;
}

/* Each buffer's elementary segments [cs, ce) between the distinct starts
 * and ends of buf[0, n) (a lifetime that never ends: to the last); *T gets
 * the segments' count.  0, or GM_ENOMEM. */
static int offline_segments(const offline_buf_t *buf, size_t n, uint32_t *cs, uint32_t *ce,
                            size_t *T)
{
    size_t u;
    uint64_t *c = offline_times(buf, n, &u);
    if (c == NULL)
        return GM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        cs[i] = (uint32_t)offline_coord(c, u, buf[i].start);
        ce[i] = (uint32_t)offline_coord(c, u, buf[i].end);
    }
    *T = u ? u - 1 : 0;
    free(c);
    return 0;
}

static int skyline_init(skyline_t *sk, const offline_buf_t *buf, size_t n)
{
    memset(sk, 0, sizeof *sk);
    sk->cs = malloc(n * sizeof *sk->cs);
    sk->ce = malloc(n * sizeof *sk->ce);
    sk->todo = malloc(n * sizeof *sk->todo);
    sk->fl = malloc(n * sizeof *sk->fl);
    if (!sk->cs || !sk->ce || !sk->todo || !sk->fl ||
        offline_segments(buf, n, sk->cs, sk->ce, &sk->T) != 0)
        return GM_ENOMEM;
    sk->n = n;
    return 0;
}

static void skyline_release(skyline_t *sk)
{
    free(sk->cs);
    free(sk->ce);
    free(sk->fl);
    free(sk->todo);
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
    uint64_t *fl = sk->fl;
    const uint32_t *cs = sk->cs, *ce = sk->ce;
    /* work: as the pass that read each candidate's segments counted it
     * (1 + its segments per candidate and step), so that every budget
     * decision is the same; the pass now keeps each candidate's floor
     * instead (raised by each placement beside it), O(n) a step */
    uint64_t widths = 0;
    for (size_t i = 0; i < sk->n; i++) {
        sk->todo[i] = (uint32_t)i;
        fl[i] = 0;
        widths += ce[i] - cs[i];
    }
    uint64_t peak = 0;
    while (left > 0) {
        size_t best = SIZE_MAX, second = SIZE_MAX;
        uint64_t bf = UINT64_MAX;
        for (size_t k = 0; k < left; k++) {
            uint32_t id = sk->todo[k];
            uint64_t f = fl[id];
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
        /* the skyline over id's segments rises to its top (never lower
         * than it was: id rested on the highest of them), so each unplaced
         * buffer beside id rests at least there */
        uint64_t top = bf + buf[id].size;
        uint32_t a = cs[id], b = ce[id];
        for (size_t k = 0; k < left; k++) {
            uint32_t q = sk->todo[k];
            if (cs[q] < b && a < ce[q] && fl[q] < top)
                fl[q] = top;
        }
        *work += left + 1 + widths;
        widths -= b - a;
        if (top > peak)
            peak = top;
    }
    return peak;
}

/* ---- exact search ----------------------------------------------------------------
 * A branch-and-bound for a plan within a fixed arena size (the target), on
 * the structure MiniMalloc (Moffitt, ASPLOS 2023) describes; our own code.
 *
 *   Sections: the sweep over the lifetimes cuts time into elementary
 *   segments; a section is a segment whose set of live buffers is not
 *   contained in a neighbour's (a maximal clique of the interval graph).
 *   Every buffer spans a contiguous range of sections [sa, sb).
 *
 *   Canonical plans: every buffer rests on a buffer placed beside it (its
 *   offset is the top of one) or on 0, and the buffers are placed in order
 *   of offset, ties by rank in a static preorder.  Any plan can be pushed
 *   down and sorted into that form, so only those are searched: at each
 *   node the candidates are the unplaced buffers at their lowest offset
 *   (minoff: the highest top of their placed neighbours), in (minoff, rank)
 *   order, at or after the last placed (offset, rank).
 *
 *   Pruning: dominance (a candidate at or above the lowest top of any
 *   unplaced buffer leaves a gap that buffer would fill: not tried, nor any
 *   after it); the section bound (per section, its floor — the top of the
 *   placed buffers there, at least the lowest minoff of its unplaced ones
 *   and at least the last placed offset — plus the bytes of its unplaced
 *   buffers must fit in the target).
 *
 *   Decomposition: cuts[s] counts the unplaced buffers alive across the
 *   boundary of sections s and s + 1; when a placement brings one to zero,
 *   the unplaced buffers fall into independent parts, each solved on its own
 *   (its own preorder and canonical order), and a part without a plan fails
 *   the placement that split them, with no retrying of the others.
 *
 *   Hatless pruning: when a placement that no unplaced buffer overlaps
 *   fails, no other candidate of the node is tried: any plan from the node
 *   can place that buffer first at the same offset (nothing rests on it,
 *   and every later placement is at or above it).
 *
 *   Preorders (MiniMalloc's round robin of static orders): WAT, TAW, TWA
 *   with W the lifetime's width in time and A = W × size, T the busiest
 *   section's total, alternating with the same over sections (by total,
 *   width in sections, width in events; by width in sections, area in
 *   sections, total; by total, area in sections, width in sections): on
 *   the minimalloc family neither set alone solves every instance.  Each
 *   is tried under a budget that doubles each round.  The work counter
 *   (entries ordered, neighbours, sections and members visited) bounds
 *   it.
 *
 *   Every part of the state changed by a placement is undone on the way
 *   back (a log of minoff and floor changes; totals and cuts are restored
 *   by adding back), so a failed branch leaves nothing behind.
 */

#define OFFLINE_EXACT_MAX 1024
#define EXACT_HEURS 6 /* static preorders, tried in turn */

enum { EXACT_FOUND = 1, EXACT_NONE = 0, EXACT_ABORT = -1 };

#define EXACT_UNPLACED UINT64_MAX

typedef struct exact_ent {
    uint64_t at;   /* the buffer's minoff when the entry was made */
    uint32_t rank; /* in its part's preorder */
    uint32_t id;
} exact_ent_t;

typedef struct exact_undo {
    uint32_t what; /* index, high bit: a section's floor, else a buffer's minoff */
    uint64_t old;
} exact_undo_t;

#define EXACT_FLOOR UINT32_C(0x80000000)

typedef struct exact {
    size_t n, S;
    const offline_buf_t *buf;
    uint32_t *sa, *sb;       /* each buffer's sections */
    uint32_t *ovs, *ov;      /* overlaps, CSR: ov[ovs[i] .. ovs[i + 1]) */
    uint32_t *mems, *mem;    /* each section's buffers, CSR */
    uint64_t *total0;        /* each section's bytes, all unplaced */
    uint32_t *cuts0;         /* per boundary s | s + 1: the buffers across it */
    uint64_t target;
    uint64_t *minoff;        /* per buffer: the top of its placed neighbours */
    uint64_t *off, *sol;     /* per buffer: offset or EXACT_UNPLACED; the plan */
    uint64_t *floor, *total; /* per section: floor; bytes still unplaced */
    uint32_t *cuts;          /* per boundary: unplaced buffers across it */
    uint32_t *seen;          /* per section: epoch of its last marking */
    uint32_t epoch;
    uint32_t *aff;           /* scratch: affected sections */
    exact_undo_t *undo;
    size_t nundo, undo_cap;
    exact_ent_t *ent;        /* orderings, a stack */
    size_t sp, ent_cap;
    uint32_t *u32;           /* parts' ids, a stack */
    size_t usp, u32_cap;
    uint32_t *partof;        /* scratch: each section's part */
    double *key;             /* preorder keys: 3 per buffer */
    uint32_t *tmp, *tmp2;
    int heur;
    uint64_t work, limit;
    int oom;
} exact_t;

/* Log a value about to change.  0, or -1 on host OOM (m->oom set: the
 * search gives up and its state is not used again). */
static int exact_log(exact_t *m, uint32_t what, uint64_t old)
{
    if (m->nundo == m->undo_cap) {
        size_t cap = m->undo_cap ? 2 * m->undo_cap : 1024;
        exact_undo_t *u = realloc(m->undo, cap * sizeof *u);
        if (u == NULL) {
            m->oom = 1;
            return -1;
        }
        m->undo = u;
        m->undo_cap = cap;
    }
    m->undo[m->nundo++] = (exact_undo_t){what, old};
    return 0;
}

static void exact_release(exact_t *m)
{
    free(m->sa);
    free(m->sb);
    free(m->ovs);
    free(m->ov);
    free(m->mems);
    free(m->mem);
    free(m->total0);
    free(m->cuts0);
    free(m->minoff);
    free(m->off);
    free(m->sol);
    free(m->floor);
    free(m->total);
    free(m->cuts);
    free(m->seen);
    free(m->aff);
    free(m->undo);
    free(m->ent);
    free(m->u32);
    free(m->partof);
    free(m->key);
    free(m->tmp);
    free(m->tmp2);
}

/* Sections, overlaps and cuts of buf[0, n).  0, or GM_ENOMEM with nothing
 * left allocated.  exact_release frees the rest. */
static int exact_init(exact_t *m, const offline_buf_t *buf, size_t n)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    m->buf = buf;
    /* elementary segments between the distinct times */
    size_t u;
    uint64_t *c = offline_times(buf, n, &u);
    uint32_t *segsec = NULL;
    unsigned char *sflag = NULL, *eflag = NULL;
    m->sa = malloc(n * sizeof *m->sa);
    m->sb = malloc(n * sizeof *m->sb);
    if (!c || !m->sa || !m->sb)
        goto oom;
    /* boundary j (time c[j]) has starts and/or ends; segment j is
     * [c[j], c[j + 1]); a segment is a section when its left boundary
     * has a start and its right one an end */
    sflag = calloc(u, 1);
    eflag = calloc(u, 1);
    segsec = malloc(u * sizeof *segsec);
    if (!sflag || !eflag || !segsec)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        sflag[offline_coord(c, u, buf[i].start)] = 1;
        eflag[offline_coord(c, u, buf[i].end)] = 1;
    }
    size_t S = 0;
    for (size_t j = 0; j + 1 < u; j++) {
        segsec[j] = (uint32_t)S; /* the first section at or after segment j */
        if (sflag[j] && eflag[j + 1])
            S++;
    }
    for (size_t i = 0; i < n; i++) {
        size_t cs = offline_coord(c, u, buf[i].start), ce = offline_coord(c, u, buf[i].end);
        /* sections among segments [cs, ce): from the first at or after cs
         * to the first at or after ce (exclusive) */
        /* never empty: walking back from the segment that ends at the
         * buffer's end, the first whose left boundary has a start is one */
        m->sa[i] = segsec[cs];
        m->sb[i] = ce < u - 1 ? segsec[ce] : (uint32_t)S;
    }
    m->S = S;
    free(c);
    free(sflag);
    free(eflag);
    free(segsec);
    c = NULL;
    sflag = eflag = NULL;
    segsec = NULL;
    /* members per section, totals, cuts */
    m->mems = calloc(S + 1, sizeof *m->mems);
    m->total0 = calloc(S ? S : 1, sizeof *m->total0);
    m->cuts0 = calloc(S ? S : 1, sizeof *m->cuts0);
    if (!m->mems || !m->total0 || !m->cuts0)
        goto oom;
    size_t nm = 0;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t s = m->sa[i]; s < m->sb[i]; s++) {
            m->mems[s + 1]++;
            m->total0[s] += buf[i].size;
        }
        for (uint32_t s = m->sa[i]; s + 1 < m->sb[i]; s++)
            m->cuts0[s]++;
        nm += m->sb[i] - m->sa[i];
    }
    for (size_t s = 0; s < S; s++)
        m->mems[s + 1] += m->mems[s];
    m->mem = malloc((nm ? nm : 1) * sizeof *m->mem);
    uint32_t *fill = malloc((S ? S : 1) * sizeof *fill);
    if (!m->mem || !fill) {
        free(fill);
        goto oom;
    }
    memcpy(fill, m->mems, S * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = m->sa[i]; s < m->sb[i]; s++)
            m->mem[fill[s]++] = (uint32_t)i;
    free(fill);
    /* overlaps: two buffers overlap iff their section ranges do */
    m->ovs = calloc(n + 1, sizeof *m->ovs);
    if (!m->ovs)
        goto oom;
    size_t cap = 1024, no = 0;
    m->ov = malloc(cap * sizeof *m->ov);
    if (!m->ov)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < n; k++) {
            if (k == i || m->sa[k] >= m->sb[i] || m->sa[i] >= m->sb[k])
                continue;
            if (no == cap) {
                uint32_t *o = realloc(m->ov, 2 * cap * sizeof *o);
                if (!o)
                    goto oom;
                m->ov = o;
                cap *= 2;
            }
            m->ov[no++] = (uint32_t)k;
        }
        m->ovs[i + 1] = (uint32_t)no;
    }
    m->minoff = malloc(n * sizeof *m->minoff);
    m->off = malloc(n * sizeof *m->off);
    m->sol = malloc(n * sizeof *m->sol);
    m->floor = malloc((S ? S : 1) * sizeof *m->floor);
    m->total = malloc((S ? S : 1) * sizeof *m->total);
    m->cuts = malloc((S ? S : 1) * sizeof *m->cuts);
    m->seen = calloc(S ? S : 1, sizeof *m->seen);
    m->aff = malloc((S ? S : 1) * sizeof *m->aff);
    m->ent_cap = 4 * n + 64;
    m->ent = malloc(m->ent_cap * sizeof *m->ent);
    m->u32_cap = 4 * n + 64;
    m->u32 = malloc(m->u32_cap * sizeof *m->u32);
    m->partof = malloc((S ? S : 1) * sizeof *m->partof);
    m->key = malloc(3 * n * sizeof *m->key);
    m->tmp = malloc(n * sizeof *m->tmp);
    m->tmp2 = malloc(n * sizeof *m->tmp2);
    if (!m->minoff || !m->off || !m->sol || !m->floor || !m->total || !m->cuts || !m->seen ||
        !m->aff || !m->ent || !m->u32 || !m->partof || !m->key || !m->tmp || !m->tmp2)
        goto oom;
    return 0;
oom:
    free(c);
    free(sflag);
    free(eflag);
    free(segsec);
    exact_release(m);
    memset(m, 0, sizeof *m);
    return GM_ENOMEM;
}

static int exact_part(exact_t *m, const exact_ent_t *from, size_t k, uint32_t slo, uint32_t shi);

/* Room for k more entries on the ordering stack (it may move: callers keep
 * indices across calls that push).  0, or -1 (m->oom). */
static int exact_reserve(exact_t *m, size_t k)
{
    if (m->sp + k <= m->ent_cap)
        return 0;
    size_t cap = 2 * (m->sp + k);
    exact_ent_t *e = realloc(m->ent, cap * sizeof *e);
    if (e == NULL) {
        m->oom = 1;
        return -1;
    }
    m->ent = e;
    m->ent_cap = cap;
    return 0;
}

/* The same for the ids stack. */
static int exact_reserve32(exact_t *m, size_t k)
{
    if (m->usp + k <= m->u32_cap)
        return 0;
    size_t cap = 2 * (m->usp + k);
    uint32_t *e = realloc(m->u32, cap * sizeof *e);
    if (e == NULL) {
        m->oom = 1;
        return -1;
    }
    m->u32 = e;
    m->u32_cap = cap;
    return 0;
}

static inline int exact_before(const exact_ent_t *x, const exact_ent_t *y)
{
    return x->at < y->at || (x->at == y->at && x->rank < y->rank);
}

/*
 * One node: place one of the unplaced buffers among the k entries at
 * ent[ord_at] (a part spanning sections [slo, shi)), the last placement
 * having been at (min_at, min_rank), and recurse.  EXACT_FOUND (the part's
 * offsets in m->sol), EXACT_NONE (no plan under this node) or EXACT_ABORT
 * (the work limit, or host OOM with m->oom set).  The state is as on entry
 * when it returns.
 */
/* Aligned to a cache line: the search spends most of its time in this
 * function's loops, and where they fell in the binary after unrelated
 * changes elsewhere moved the shared instances' times by up to a tenth. */
__attribute__((aligned(64))) static int exact_node(exact_t *m, size_t ord_at, size_t k,
                                                   uint32_t slo, uint32_t shi, uint64_t min_at,
                                                   uint32_t min_rank)
{
    if (m->work >= m->limit)
        return EXACT_ABORT;
    if (exact_reserve(m, k))
        return EXACT_ABORT;
    size_t base = m->sp;
    exact_ent_t *cur = m->ent + base;
    const exact_ent_t *ord = m->ent + ord_at;
    size_t nc = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t id = ord[i].id;
        if (m->off[id] != EXACT_UNPLACED)
            continue;
        exact_ent_t e = {m->minoff[id], ord[i].rank, id};
        size_t j = nc++;
        while (j > 0 && exact_before(&e, &cur[j - 1])) {
            cur[j] = cur[j - 1];
            j--;
        }
        cur[j] = e;
    }
    m->work += 1 + k;
    if (nc == 0)
        return EXACT_FOUND;
    m->sp += nc;
    uint64_t min_top = UINT64_MAX;
    for (size_t i = 0; i < nc; i++) {
        uint64_t t = cur[i].at + m->buf[cur[i].id].size;
        if (t < min_top)
            min_top = t;
    }
    int rc = EXACT_NONE;
    for (size_t i = 0; i < nc && rc == EXACT_NONE; i++) {
        cur = m->ent + base; /* a deeper node may have moved the stack */
        const exact_ent_t e = cur[i];
        if (e.at >= min_top)
            break; /* dominated: an unplaced buffer fits under it */
        if (e.at < min_at || (e.at == min_at && e.rank < min_rank))
            continue; /* not canonical */
        uint32_t id = e.id;
        uint64_t size = m->buf[id].size, top = e.at + size;
        if (top > m->target)
            continue;
        size_t mark = m->nundo;
        m->off[id] = e.at;
        m->sol[id] = e.at;
        /* neighbours rest at least on its top */
        size_t naff = 0;
        uint32_t ep = ++m->epoch;
        int hatless = 1; /* no unplaced neighbour: nothing rests on it */
        for (uint32_t q = m->ovs[id]; q < m->ovs[id + 1]; q++) {
            uint32_t o = m->ov[q];
            if (m->off[o] != EXACT_UNPLACED)
                continue;
            hatless = 0;
            if (m->minoff[o] >= top)
                continue;
            if (exact_log(m, o, m->minoff[o]))
                break;
            m->minoff[o] = top;
            for (uint32_t s = m->sa[o]; s < m->sb[o]; s++)
                if (m->seen[s] != ep) {
                    m->seen[s] = ep;
                    m->aff[naff++] = s;
                }
        }
        m->work += m->ovs[id + 1] - m->ovs[id];
        for (uint32_t s = m->sa[id]; s < m->sb[id]; s++) {
            if (exact_log(m, EXACT_FLOOR | s, m->floor[s]))
                break;
            m->floor[s] = top;
            m->total[s] -= size;
        }
        /* a section's floor is at least its unplaced buffers' lowest minoff */
        for (size_t a = 0; a < naff; a++) {
            uint32_t s = m->aff[a];
            uint64_t lo = UINT64_MAX;
            for (uint32_t q = m->mems[s]; q < m->mems[s + 1]; q++) {
                uint32_t b = m->mem[q];
                if (m->off[b] == EXACT_UNPLACED && m->minoff[b] < lo)
                    lo = m->minoff[b];
            }
            m->work += m->mems[s + 1] - m->mems[s];
            if (lo != UINT64_MAX && lo > m->floor[s]) {
                if (exact_log(m, EXACT_FLOOR | s, m->floor[s]))
                    break;
                m->floor[s] = lo;
            }
        }
        if (m->oom) {
            rc = EXACT_ABORT;
        } else {
            int fits = 1;
            for (uint32_t s = slo; s < shi; s++) {
                uint64_t f = m->floor[s] > e.at ? m->floor[s] : e.at;
                if (f + m->total[s] > m->target) {
                    fits = 0;
                    break;
                }
            }
            m->work += shi - slo;
            if (fits) {
                int split = 0;
                for (uint32_t s = m->sa[id]; s + 1 < m->sb[id]; s++)
                    if (--m->cuts[s] == 0 && s >= slo && s + 1 < shi)
                        split = 1;
                rc = split ? exact_part(m, cur, nc, slo, shi)
                           : exact_node(m, base, nc, slo, shi, e.at, e.rank);
                for (uint32_t s = m->sa[id]; s + 1 < m->sb[id]; s++)
                    m->cuts[s]++;
            }
        }
        for (uint32_t s = m->sa[id]; s < m->sb[id]; s++)
            m->total[s] += size;
        while (m->nundo > mark) {
            const exact_undo_t *u = &m->undo[--m->nundo];
            if (u->what & EXACT_FLOOR)
                m->floor[u->what & ~EXACT_FLOOR] = u->old;
            else
                m->minoff[u->what] = u->old;
        }
        m->off[id] = EXACT_UNPLACED;
        if (hatless && rc == EXACT_NONE)
            break; /* no other first placement can do better (see above) */
    }
    m->sp -= nc;
    return rc;
}

/* Whether buffer x goes before y in the preorder: larger keys first, then
 * the lower id. */
static inline int exact_pre_before(const double *key, uint32_t x, uint32_t y)
{
    for (int k = 0; k < 3; k++)
        if (key[3 * x + k] != key[3 * y + k])
            return key[3 * x + k] > key[3 * y + k];
    return x < y;
}

/* Stable bottom-up merge sort of ids[0, k) by the preorder keys. */
static void exact_pre_sort(exact_t *m, uint32_t *ids, size_t k)
{
    uint32_t *src = ids, *dst = m->tmp2;
    for (size_t w = 1; w < k; w *= 2) {
        for (size_t lo = 0; lo < k; lo += 2 * w) {
            size_t mid = lo + w < k ? lo + w : k, hi = lo + 2 * w < k ? lo + 2 * w : k;
            size_t i = lo, j = mid, q = lo;
            while (i < mid && j < hi)
                dst[q++] = exact_pre_before(m->key, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[q++] = src[i++];
            while (j < hi)
                dst[q++] = src[j++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != ids)
        memcpy(ids, src, k * sizeof *ids);
    m->work += k;
}

/* Solve a part: its preorder, then its search. */
static int exact_solve(exact_t *m, const uint32_t *ids, size_t k, uint32_t slo, uint32_t shi)
{
    /* keys: 0 width (its lifetime's length in time), 1 area (that width ×
     * size), 2 the busiest section's total among the buffer's sections,
     * 3 width in sections, 4 width in events, 5 area in sections (3 × size).
     * MiniMalloc's orders (WAT, TAW, TWA: W and A in time) alternate with
     * the same ones over sections: neither family solves every instance. */
    static const int order[EXACT_HEURS][3] = {{0, 1, 2}, {2, 3, 4}, {2, 1, 0},
                                              {3, 5, 2}, {2, 0, 1}, {2, 5, 3}};
    const int *o = order[m->heur];
    uint32_t *tmp = m->tmp;
    for (size_t i = 0; i < k; i++) {
        uint32_t id = ids[i];
        const offline_buf_t *b = &m->buf[id];
        uint64_t tot = 0;
        for (uint32_t s = m->sa[id]; s < m->sb[id]; s++)
            if (m->total[s] > tot)
                tot = m->total[s];
        double w = (double)(b->t1 - b->t0), ws = (double)(m->sb[id] - m->sa[id]);
        double v[6] = {w,  w * (double)b->size,          (double)tot,
                       ws, (double)(b->end - b->start), ws * (double)b->size};
        for (int q = 0; q < 3; q++)
            m->key[3 * id + q] = v[o[q]];
        tmp[i] = id;
    }
    m->work += 4 * k;
    exact_pre_sort(m, tmp, k);
    if (exact_reserve(m, k))
        return EXACT_ABORT;
    size_t at = m->sp;
    for (size_t i = 0; i < k; i++)
        m->ent[at + i] = (exact_ent_t){0, (uint32_t)i, tmp[i]};
    m->sp += k;
    int rc = exact_node(m, at, k, slo, shi, 0, 0);
    m->sp -= k;
    return rc;
}

/* The unplaced buffers of from[0, k) within sections [slo, shi), split at
 * the boundaries no unplaced buffer crosses; each part solved in turn. */
static int exact_part(exact_t *m, const exact_ent_t *from, size_t k, uint32_t slo, uint32_t shi)
{
    /* the parts: partof[s] for the sections, then the ids bucketed by part
     * (counting sort) with each part's first index and first section */
    uint32_t np = 0;
    for (uint32_t s = slo; s < shi; s++) {
        m->partof[s] = np;
        if (s + 1 == shi || m->cuts[s] == 0)
            np++;
    }
    /* sorted (k), first (np + 1), psec (np + 1), fill (np) */
    size_t need = k + 3 * (size_t)np + 2;
    if (exact_reserve32(m, need))
        return EXACT_ABORT;
    size_t base = m->usp;
    uint32_t *u = m->u32 + base, *sorted = u, *first = u + k, *psec = first + np + 1;
    memset(first, 0, (np + 1) * sizeof *first);
    size_t cnt = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t id = from[i].id;
        if (m->off[id] == EXACT_UNPLACED) {
            first[m->partof[m->sa[id]] + 1]++;
            cnt++;
        }
    }
    for (uint32_t p = 0; p < np; p++)
        first[p + 1] += first[p];
    uint32_t *fill = psec + np + 1; /* np entries */
    memcpy(fill, first, np * sizeof *fill);
    for (size_t i = 0; i < k; i++) {
        uint32_t id = from[i].id;
        if (m->off[id] == EXACT_UNPLACED)
            sorted[fill[m->partof[m->sa[id]]]++] = id;
    }
    for (uint32_t s = slo, p = 0; s < shi; s++)
        if (s == slo || m->partof[s] != m->partof[s - 1])
            psec[p++] = s;
    psec[np] = shi;
    m->usp += need;
    m->work += k + (shi - slo);
    (void)cnt;
    int rc = EXACT_FOUND;
    for (uint32_t p = 0; p < np && rc == EXACT_FOUND; p++) {
        u = m->u32 + base; /* a deeper part may have moved the stack */
        first = u + k;
        psec = first + np + 1;
        if (first[p + 1] > first[p])
            rc = exact_solve(m, u + first[p], first[p + 1] - first[p], psec[p], psec[p + 1]);
    }
    m->usp = base;
    return rc;
}

/* Search for a plan within target, at most `limit` work (a round robin of
 * the preorders under a doubling node budget).  EXACT_FOUND (m->sol holds
 * it), EXACT_NONE (proven: none), EXACT_ABORT (the budget ran out). */
static int exact_target(exact_t *m, uint64_t target, uint64_t limit)
{
    size_t n = m->n, S = m->S;
    m->target = target;
    for (uint64_t quota = 16 * (uint64_t)(n + S); m->work < limit;
         quota = quota < limit / 2 ? 2 * quota : limit) {
        for (int h = 0; h < EXACT_HEURS && m->work < limit; h++) {
            m->heur = h;
            m->limit = m->work + quota < limit ? m->work + quota : limit;
            for (size_t i = 0; i < n; i++) {
                m->minoff[i] = 0;
                m->off[i] = EXACT_UNPLACED;
            }
            memset(m->floor, 0, S * sizeof *m->floor);
            memcpy(m->total, m->total0, S * sizeof *m->total);
            memcpy(m->cuts, m->cuts0, S * sizeof *m->cuts);
            m->sp = 0;
            m->usp = 0;
            m->nundo = 0;
            exact_ent_t *all = m->ent;
            for (size_t i = 0; i < n; i++)
                all[i] = (exact_ent_t){0, 0, (uint32_t)i};
            m->sp = n;
            int rc = exact_part(m, all, n, 0, (uint32_t)S);
            m->sp = 0;
            if (m->oom)
                return EXACT_ABORT;
            if (rc != EXACT_ABORT)
                return rc;
        }
    }
    return EXACT_ABORT;
}

/* Keep m's plan in off when it beats *best. */
static void offline_exact_keep(const exact_t *m, const offline_buf_t *buf, size_t n, uint64_t *best,
                               uint64_t *off)
{
    uint64_t peak = 0;
    for (size_t i = 0; i < n; i++)
        if (m->sol[i] + buf[i].size > peak)
            peak = m->sol[i] + buf[i].size;
    if (peak < *best) {
        *best = peak;
        memcpy(off, m->sol, n * sizeof *off);
    }
}

/* ---- perfect packings --------------------------------------------------------
 * When every instant of the instance holds exactly LB bytes (a perfect
 * packing: a rectangle LB × time tiled by the buffers), a plan of LB bytes
 * leaves no gap anywhere, and a stronger rule than the canonical search's
 * holds: the lowest point of the skyline (its leftmost lowest step, over
 * time segments [j, k)) is covered by a buffer that starts exactly at j
 * (left of j everything is filled higher) and ends by k (right of k too).
 * So the search branches only over the unplaced buffers that start at j
 * and end by k (bottom-left fill), equal ones (same end, same size) tried
 * once.  Times are the lifetimes' t0/t1; the plan found is checked against
 * the event overlaps before it is kept, and a search that finds none
 * proves nothing (times and events could disagree): it is only a faster
 * way to the plan of the one case where the canonical search thrashes
 * (many regions of the arena filled in lockstep, a dead end in one
 * undone through all).
 */

/* The Luby sequence, i from 1: 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ... */
static uint64_t offline_luby(uint64_t i)
{
    for (;;) {
        uint64_t p = 1;
        while (2 * p <= i + 1)
            p *= 2; /* p: the largest power of two at most i + 1 */
        if (p == i + 1)
            return p / 2;
        i -= p - 1;
    }
}

typedef struct corner {
    size_t n, T;
    const offline_buf_t *buf;
    uint32_t *cs, *ce;     /* each buffer's time segments [cs, ce) */
    uint32_t *first, *ids; /* buffers by first segment, CSR; each run by (ce, size) descending */
    uint64_t *h;           /* skyline per segment */
    uint64_t *off;         /* offsets, UINT64_MAX = unplaced */
    uint64_t target, work, limit;
    uint64_t rng; /* 0: candidates in order; else a seeded rotation at each node */
} corner_t;

/* Whether every valley of the skyline (a step lower than both its
 * neighbours, or than one at the edge) can still be entered: its left cell
 * must be covered by a buffer starting there that ends by the valley's end
 * and fits under the target. */
static int corner_valleys_ok(corner_t *c)
{
    size_t T = c->T;
    for (size_t a = 0; a < T;) {
        size_t b = a + 1;
        while (b < T && c->h[b] == c->h[a])
            b++;
        c->work += b - a;
        uint64_t H = c->h[a];
        if (H < c->target && (a == 0 || c->h[a - 1] > H) && (b == T || c->h[b] > H)) {
            int ok = 0;
            for (uint32_t q = c->first[a]; q < c->first[a + 1] && !ok; q++) {
                uint32_t id = c->ids[q];
                c->work++;
                ok = c->off[id] == UINT64_MAX && c->ce[id] <= b && H + c->buf[id].size <= c->target;
            }
            if (!ok)
                return 0;
        }
        a = b;
    }
    return 1;
}

static int corner_dfs(corner_t *c, size_t left)
{
    if (left == 0)
        return EXACT_FOUND;
    if (c->work >= c->limit)
        return EXACT_ABORT;
    size_t j = 0;
    for (size_t s = 1; s < c->T; s++)
        if (c->h[s] < c->h[j])
            j = s;
    uint64_t hj = c->h[j];
    size_t k = j + 1;
    while (k < c->T && c->h[k] == hj)
        k++;
    c->work += c->T + 1;
    uint32_t last = UINT32_MAX, nb = c->first[j + 1] - c->first[j];
    uint32_t rot = c->rng && nb > 1 ? (uint32_t)(offline_rand(&c->rng) % nb) : 0;
    for (uint32_t x = 0; x < nb; x++) {
        uint32_t id = c->ids[c->first[j] + (x + rot) % nb];
        const offline_buf_t *b = &c->buf[id];
        c->work++;
        if (c->off[id] != UINT64_MAX || c->ce[id] > k || hj + b->size > c->target)
            continue;
        if (last != UINT32_MAX && c->ce[last] == c->ce[id] && c->buf[last].size == b->size)
            continue; /* the same as the one just tried */
        last = id;
        c->off[id] = hj;
        for (uint32_t s = c->cs[id]; s < c->ce[id]; s++)
            c->h[s] = hj + b->size;
        c->work += c->ce[id] - c->cs[id];
        int rc = left == 1 || corner_valleys_ok(c) ? corner_dfs(c, left - 1) : EXACT_NONE;
        if (rc == EXACT_FOUND)
            return rc; /* the plan stays in off */
        for (uint32_t s = c->cs[id]; s < c->ce[id]; s++)
            c->h[s] = hj;
        c->off[id] = UINT64_MAX;
        if (rc != EXACT_NONE)
            return rc;
    }
    return EXACT_NONE;
}

/* Whether buffer x goes before y in a segment's run: the later end first,
 * then the larger, then the lower id. */
static int corner_before(const corner_t *c, uint32_t x, uint32_t y)
{
    if (c->ce[x] != c->ce[y])
        return c->ce[x] > c->ce[y];
    if (c->buf[x].size != c->buf[y].size)
        return c->buf[x].size > c->buf[y].size;
    return x < y;
}

/* Insertion sort of ids[0, k) by corner_before (runs are short; n is at
 * most OFFLINE_EXACT_MAX).  No global state: planners may run in threads. */
static void corner_sort(const corner_t *c, uint32_t *ids, size_t k)
{
    for (size_t i = 1; i < k; i++) {
        uint32_t t = ids[i];
        size_t q = i;
        while (q > 0 && corner_before(c, t, ids[q - 1])) {
            ids[q] = ids[q - 1];
            q--;
        }
        ids[q] = t;
    }
}

/*
 * Look for a plan of lb bytes by bottom-left fill when buf is a perfect
 * packing of lb (else nothing is tried).  EXACT_FOUND with off filled (a
 * plan checked against the event overlaps ovs/ov), else EXACT_ABORT;
 * GM_ENOMEM through *rc.  *work grows by the work done, at most limit.
 */
static int corner_search(const offline_buf_t *buf, size_t n, const uint32_t *ovs,
                         const uint32_t *ov, uint64_t lb, uint64_t limit, uint64_t *off,
                         uint64_t *work, int *rc)
{
    corner_t c;
    memset(&c, 0, sizeof c);
    uint64_t *t = malloc(2 * n * sizeof *t);
    c.cs = malloc(n * sizeof *c.cs);
    c.ce = malloc(n * sizeof *c.ce);
    c.ids = malloc(n * sizeof *c.ids);
    c.off = malloc(n * sizeof *c.off);
    int r = EXACT_ABORT;
    if (!t || !c.cs || !c.ce || !c.ids || !c.off) {
        *rc = GM_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (buf[i].t1 <= buf[i].t0)
            goto out; /* a lifetime of no length: no skyline to fill */
        t[2 * i] = buf[i].t0;
        t[2 * i + 1] = buf[i].t1;
    }
    size_t u = offline_unique(t, 2 * n);
    c.T = u - 1;
    c.first = calloc(c.T + 2, sizeof *c.first);
    c.h = calloc(c.T + 1, sizeof *c.h);
    if (!c.first || !c.h) {
        *rc = GM_ENOMEM;
        goto out;
    }
    /* totals per segment (in h for now): all must be lb */
    for (size_t i = 0; i < n; i++) {
        c.cs[i] = (uint32_t)offline_coord(t, u, buf[i].t0);
        c.ce[i] = (uint32_t)offline_coord(t, u, buf[i].t1);
        c.first[c.cs[i] + 1]++;
        for (uint32_t s = c.cs[i]; s < c.ce[i]; s++)
            c.h[s] += buf[i].size;
        *work += c.ce[i] - c.cs[i];
    }
    for (size_t s = 0; s < c.T; s++)
        if (c.h[s] != lb)
            goto out;
    for (size_t s = 0; s < c.T; s++)
        c.first[s + 1] += c.first[s];
    {
        uint32_t *fill = malloc((c.T + 1) * sizeof *fill);
        if (!fill) {
            *rc = GM_ENOMEM;
            goto out;
        }
        memcpy(fill, c.first, (c.T + 1) * sizeof *fill);
        for (size_t i = 0; i < n; i++)
            c.ids[fill[c.cs[i]]++] = (uint32_t)i;
        free(fill);
    }
    c.n = n;
    c.buf = buf;
    for (size_t s = 0; s < c.T; s++)
        corner_sort(&c, c.ids + c.first[s], c.first[s + 1] - c.first[s]);
    c.target = lb;
    c.work = *work;
    /* restarts under quotas of the Luby sequence (1 1 2 1 1 2 4 ... units of
     * 16 (n + T) work), the first in order, the others with seeded
     * rotations of each node's candidates: a wrong choice low down costs
     * less to leave by a restart than by backtracking, and many short
     * randomized tries find a fill where a few long ones thrash (a
     * 400-piece guillotine cut that quotas growing by half from 64 (n + T)
     * never filled in 10^9 units is filled in 10^8) */
    r = EXACT_ABORT;
    uint64_t unit = 16 * (uint64_t)(n + c.T);
    for (uint64_t k = 0; r == EXACT_ABORT && c.work < limit; k++) {
        uint64_t quota = unit * offline_luby(k + 1);
        c.rng = k ? k * UINT64_C(0x9e3779b97f4a7c15) : 0;
        c.limit = c.work + quota < limit ? c.work + quota : limit;
        for (size_t i = 0; i < n; i++)
            c.off[i] = UINT64_MAX;
        memset(c.h, 0, (c.T + 1) * sizeof *c.h);
        r = corner_dfs(&c, n);
        if (r == EXACT_NONE)
            break; /* with every candidate tried: none */
    }
    *work = c.work;
    if (r == EXACT_FOUND) {
        /* the plan against the event overlaps */
        for (size_t i = 0; i < n && r == EXACT_FOUND; i++)
            for (uint32_t q = ovs[i]; q < ovs[i + 1]; q++) {
                uint32_t o = ov[q];
                if (c.off[i] < c.off[o] + buf[o].size && c.off[o] < c.off[i] + buf[i].size) {
                    r = EXACT_ABORT;
                    break;
                }
            }
        *work += ovs[n];
        if (r == EXACT_FOUND)
            memcpy(off, c.off, n * sizeof *off);
    } else {
        r = EXACT_ABORT; /* none found proves nothing here */
    }
out:
    free(t);
    free(c.cs);
    free(c.ce);
    free(c.ids);
    free(c.off);
    free(c.first);
    free(c.h);
    return r;
}

/*
 * The exact search's targets.  lo is a proved bound (no plan below it): at
 * first LB, the busiest section's bytes; it rises only when the search
 * proves a target infeasible (EXACT_NONE), never when a target is given up
 * for budget (EXACT_ABORT).  *best (the best plan so far) falls with every
 * plan found.
 *
 *   1. The capacity the instance was given (capacity, rounded down to
 *      align), when it lies in [lo, *best): with up to 7/8 of the budget.
 *      That is the question a placement instance asks.
 *   2. Then rounds with a quota that doubles, starting at 1/64 of what is
 *      left: lo, and when lo is given up, the midpoint of [lo, *best), each
 *      under the round's quota.  A plan at lo is optimal; a plan at the
 *      midpoint halves the interval; a proof at either raises lo.  Once the
 *      capacity is met, targets below it get at most 1/16 of the budget:
 *      going below what was asked is a bonus, not the question.
 *
 * *lb_out gets lo (never above *best), *found whether a plan of the search
 * replaced the heuristics'.  GM_ENOMEM or 0; *spent gets the work.
 */
static int offline_exact(const offline_buf_t *buf, size_t n, uint64_t align, uint64_t budget,
                         uint64_t capacity, uint64_t *best, uint64_t *off, uint64_t *spent,
                         uint64_t *lb_out, int *found)
{
    exact_t m;
    *found = 0;
    if (exact_init(&m, buf, n) != 0)
        return GM_ENOMEM;
    uint64_t lb = 0;
    for (size_t s = 0; s < m.S; s++)
        if (m.total0[s] > lb)
            lb = m.total0[s];
    uint64_t lo = (lb + align - 1) / align * align, before = *best;
    uint64_t cap = capacity / align * align, limit = budget;
    if (lo < *best) { /* a perfect packing: bottom-left fill, with a quarter of the budget */
        int rc = 0;
        if (corner_search(buf, n, m.ovs, m.ov, lo, m.work + budget / 4, m.sol, &m.work, &rc) ==
            EXACT_FOUND)
            offline_exact_keep(&m, buf, n, best, off);
        if (rc)
            m.oom = 1;
    }
    if (capacity && cap >= lo && cap < *best) {
        int r = exact_target(&m, cap, m.work + budget - budget / 8);
        if (r == EXACT_FOUND)
            offline_exact_keep(&m, buf, n, best, off);
        else if (r == EXACT_NONE)
            lo = cap + align;
    }
    if (capacity && *best <= capacity) {
        uint64_t below = m.work + budget / 16;
        if (below < limit)
            limit = below;
    }
    uint64_t quota = limit > m.work ? (limit - m.work) / 64 : 0;
    if (quota < 16 * (uint64_t)(n + m.S))
        quota = 16 * (uint64_t)(n + m.S);
    while (!m.oom && lo < *best && m.work < limit) {
        uint64_t end = m.work + quota < limit ? m.work + quota : limit;
        int r = exact_target(&m, lo, end);
        if (r == EXACT_FOUND) {
            offline_exact_keep(&m, buf, n, best, off);
            break; /* at the bound: optimal */
        }
        if (r == EXACT_NONE) {
            lo += align;
            continue;
        }
        if (m.oom)
            break;
        uint64_t t = (lo + (*best - lo) / 2) / align * align;
        if (t > lo && t < *best && m.work < limit) {
            end = m.work + quota < limit ? m.work + quota : limit;
            r = exact_target(&m, t, end);
            if (r == EXACT_FOUND)
                offline_exact_keep(&m, buf, n, best, off);
            else if (r == EXACT_NONE)
                lo = t + align;
        }
        quota = quota < UINT64_MAX / 2 ? 2 * quota : quota;
    }
    int oom = m.oom;
    *spent = m.work;
    *found = *best < before;
    *lb_out = lo < *best ? lo : *best;
    exact_release(&m);
    return oom ? GM_ENOMEM : 0;
}

/* ---- window repair ---------------------------------------------------------------
 * For traces beyond the exact search (real ones: thousands of buffers, the
 * heuristics' plan a few alignment units above the bound), an exact
 * search over a window of time around a busiest instant, the rest placed
 * around it; a round per window.
 *
 *   The centre: among the runs of elementary segments where the plan rises
 *   above the target (the bound), the busiest run not yet given up; in it,
 *   the midpoint of its first and last busiest segments (a tight stretch's
 *   middle: the event order cuts one instant into segments a free apart).
 *   The window: a run of segments [a, b) around it.  The instance: each
 *   buffer alive in the window, its lifetime clipped to it.  Two intervals
 *   that meet each other and each meet the window meet inside it, so the
 *   instance keeps every conflict among its buffers, and a plan of it,
 *   fixed, is consistent.
 *
 *   A buffer alive over the whole window takes no part: in any plan the
 *   strip it fills across the window can be swapped down with everything
 *   beneath it, so those buffers stack at the bottom (F bytes) and the
 *   rest must fit in target − F.  The instance is a relaxation (fewer
 *   buffers, shorter lifetimes: every plan of the trace within the target
 *   gives one of it), so a search that runs to its end without a plan
 *   proves the target infeasible and the bound rises by one alignment
 *   unit.  One that finds a plan fixes it: the whole buffers stacked in the
 *   order of their offsets in the best plan so far, the clipped ones at
 *   F + their offsets in the instance's plan; then the buffers of the
 *   windows of earlier rounds, then every other buffer, each in the order
 *   of its offset in the best plan, at that offset where nothing placed
 *   conflicts (no sort of its conflicts), else by best fit: the best plan
 *   kept around the window wherever it can be.  The new plan replaces the best when
 *   its peak is lower, or equal and above the target over fewer segments.
 *
 *   Windows, in turn while no plan improves: the tight stretch (the run
 *   around the centre of segments at least as busy, or of no length in
 *   time: in a perfect packing, all of it), then the widest symmetric
 *   windows of at most REPAIR_PARTS[w] clipped buffers (a binary search:
 *   their count grows with the width).  A centre none of them improves is
 *   given up.  The search's work is counted in the budget.
 */

/* Traces of more buffers are not repaired: each round re-places them all
 * (a million: seconds a pass). */
#define OFFLINE_REPAIR_MAX 65536

static const size_t repair_parts[] = {64, 256, OFFLINE_EXACT_MAX};
#define REPAIR_ROUNDS 16

typedef struct repair {
    size_t n, S;
    uint32_t *cs, *ce;     /* each buffer's segments [cs, ce) */
    uint64_t *load;        /* per segment: its bytes */
    uint64_t *tm;          /* per segment boundary: its time (the t0 or t1 of a buffer there) */
    int64_t *over;         /* per segment (difference array): buffers of the plan above the target */
    unsigned char *tried;  /* per segment: a centre given up */
    unsigned char *pinned; /* per buffer: in the window of a round that improved */
    offline_buf_t *sub;    /* the instance's clipped buffers */
    uint32_t *subid;       /* their ids */
    uint64_t *at;          /* the composed plan's wanted offsets, by id */
    offline_key_t *key;    /* 2n: the composed order's keys */
    uint32_t *order;
    uint32_t given[REPAIR_ROUNDS][2]; /* tight stretches given up for budget */
    size_t ngiven;
} repair_t;

static void repair_release(repair_t *r)
{
    free(r->cs);
    free(r->ce);
    free(r->load);
    free(r->tm);
    free(r->over);
    free(r->tried);
    free(r->pinned);
    free(r->sub);
    free(r->subid);
    free(r->at);
    free(r->key);
    free(r->order);
}

static int repair_init(repair_t *r, const offline_buf_t *buf, size_t n)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->cs = malloc(n * sizeof *r->cs);
    r->ce = malloc(n * sizeof *r->ce);
    if (!r->cs || !r->ce || offline_segments(buf, n, r->cs, r->ce, &r->S) != 0) {
        repair_release(r);
        return GM_ENOMEM;
    }
    size_t u = r->S + 1; /* segment boundaries */
    r->load = calloc(u, sizeof *r->load);
    r->tm = calloc(u, sizeof *r->tm);
    r->over = malloc(u * sizeof *r->over);
    r->tried = calloc(u, 1);
    r->pinned = calloc(n, 1);
    r->sub = malloc(OFFLINE_EXACT_MAX * sizeof *r->sub);
    r->subid = malloc(OFFLINE_EXACT_MAX * sizeof *r->subid);
    r->at = malloc(n * sizeof *r->at);
    r->key = malloc(2 * n * sizeof *r->key);
    r->order = malloc(n * sizeof *r->order);
    if (!r->load || !r->tm || !r->over || !r->tried || !r->pinned || !r->sub || !r->subid ||
        !r->at || !r->key || !r->order) {
        repair_release(r);
        return GM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        r->load[r->cs[i]] += buf[i].size;
        r->load[r->ce[i]] -= buf[i].size; /* wraps back in the sum */
        r->tm[r->cs[i]] = buf[i].t0;
        r->tm[r->ce[i]] = buf[i].t1;
    }
    for (size_t s = 1; s <= r->S; s++)
        r->load[s] += r->load[s - 1];
    return 0;
}

/* The segments where a buffer of the plan off rises above target: their
 * count; *centre gets the centre of the busiest run of them not given up
 * (S: none). */
static size_t repair_over(repair_t *r, const offline_buf_t *buf, const uint64_t *off,
                          uint64_t target, size_t *centre)
{
    memset(r->over, 0, (r->S + 1) * sizeof *r->over);
    for (size_t i = 0; i < r->n; i++)
        if (off[i] + buf[i].size > target) {
            r->over[r->cs[i]]++;
            r->over[r->ce[i]]--;
        }
    /* top, end: the run's first and last busiest segments so far (top S:
     * no run) */
    size_t count = 0, top = r->S, end = 0;
    int64_t live = 0;
    *centre = r->S;
    for (size_t s = 0; s <= r->S; s++) {
        live += r->over[s];
        if (s < r->S && live > 0) {
            count++;
            if (top == r->S || r->load[s] > r->load[top])
                top = end = s;
            else if (r->load[s] == r->load[top])
                end = s;
        } else if (top != r->S) {
            size_t c = top + (end - top) / 2;
            if (!r->tried[c] && (*centre == r->S || r->load[c] > r->load[*centre]))
                *centre = c;
            top = r->S;
        }
    }
    return count;
}

/* The tight stretch around c: segments at least as busy as it, or of no
 * length in time (between a free and an alloc of one instant). */
static void repair_tight(const repair_t *r, size_t c, uint32_t *a, uint32_t *b)
{
    size_t x = c, y = c + 1;
    while (x > 0 && (r->load[x - 1] >= r->load[c] || r->tm[x - 1] == r->tm[x]))
        x--;
    while (y < r->S && (r->load[y] >= r->load[c] || r->tm[y] == r->tm[y + 1]))
        y++;
    *a = (uint32_t)x;
    *b = (uint32_t)y;
}

/* The instance of window [a, b) (at most max clipped buffers: more gives
 * max + 1 and stops); *full gets the bytes alive across all of it. */
static size_t repair_window(repair_t *r, const offline_buf_t *buf, uint32_t a, uint32_t b,
                            size_t max, uint64_t *full)
{
    size_t k = 0;
    *full = 0;
    for (size_t i = 0; i < r->n; i++) {
        uint32_t x = r->cs[i] > a ? r->cs[i] : a, y = r->ce[i] < b ? r->ce[i] : b;
        if (x >= y)
            continue;
        if (x == a && y == b) {
            *full += buf[i].size;
            continue;
        }
        if (k == max)
            return max + 1;
        r->subid[k] = (uint32_t)i;
        r->sub[k++] = (offline_buf_t){buf[i].size, x - a, y - a, r->tm[x], r->tm[y]};
    }
    return k;
}

/* The plan of window [a, b)'s k clipped buffers in m.sol (over F = full
 * bytes), fixed, and every other buffer around it, in pl->off: its
 * peak. */
static uint64_t repair_compose(repair_t *r, plan_t *pl, const exact_t *m, size_t k, uint32_t a,
                               uint32_t b, uint64_t full, const uint64_t *off)
{
    const offline_buf_t *buf = pl->buf;
    size_t n = r->n;
    /* groups: 0 whole in the window, 1 clipped, 2 pinned, 3 the rest */
    for (size_t i = 0; i < n; i++) {
        uint64_t g = r->cs[i] <= a && r->ce[i] >= b ? 0 : r->pinned[i] ? 2 : 3;
        r->key[i] = (offline_key_t){g, off[i], 0, (uint32_t)i};
        r->at[i] = g == 0 ? UINT64_MAX : off[i];
    }
    for (size_t j = 0; j < k; j++) {
        r->at[r->subid[j]] = full + m->sol[j];
        r->key[r->subid[j]].a = 1;
    }
    offline_sort_keys(r->key, r->key + n, n);
    uint64_t stack = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = r->key[i].id;
        r->order[i] = id;
        if (r->key[i].a == 0) {
            r->at[id] = stack;
            stack += buf[id].size;
        }
    }
    size_t critical;
    return offline_pass(pl, r->order, r->at, 0, &critical);
}

/* Repair pl's plan *best (offsets in off) toward *lb within budget work
 * (counted into pl->work); a plan that improves replaces it, a target
 * proved infeasible raises *lb.  0, or GM_ENOMEM. */
static int offline_repair(plan_t *pl, uint64_t align, uint64_t budget, uint64_t *best,
                          uint64_t *off, uint64_t *lb)
{
    const offline_buf_t *buf = pl->buf;
    size_t n = pl->n, c;
    repair_t r;
    if (repair_init(&r, buf, n) != 0)
        return GM_ENOMEM;
    int rc = 0;
    uint64_t stop = pl->work + budget;
    size_t over = repair_over(&r, buf, off, *lb, &c);
    for (int round = 0; round < REPAIR_ROUNDS && *best > *lb && pl->work < stop && !rc; round++) {
        if (c == r.S)
            break;
        int moved = 0;
        /* w 0: the tight stretch; then symmetric windows */
        for (size_t w = 0; w <= sizeof repair_parts / sizeof repair_parts[0] && !moved && !rc &&
                           pl->work < stop;
             w++) {
            size_t max = w ? repair_parts[w - 1] : OFFLINE_EXACT_MAX;
            uint64_t full;
            uint32_t a, b;
            if (w == 0) {
                repair_tight(&r, c, &a, &b);
                int seen = 0; /* a stretch given up before: not again */
                for (size_t q = 0; q < r.ngiven && !seen; q++)
                    seen = r.given[q][0] == a && r.given[q][1] == b;
                if (seen)
                    continue;
            } else {
                size_t lo = 0, hi = r.S;
                while (lo < hi) {
                    size_t h = lo + (hi - lo + 1) / 2;
                    pl->work += n;
                    a = c > h ? (uint32_t)(c - h) : 0;
                    b = c + 1 + h < r.S ? (uint32_t)(c + 1 + h) : (uint32_t)r.S;
                    if (repair_window(&r, buf, a, b, max, &full) <= max)
                        lo = h;
                    else
                        hi = h - 1;
                }
                a = c > lo ? (uint32_t)(c - lo) : 0;
                b = c + 1 + lo < r.S ? (uint32_t)(c + 1 + lo) : (uint32_t)r.S;
            }
            pl->work += n;
            size_t k = repair_window(&r, buf, a, b, max, &full);
            if (k == 0 || k > max || full > *lb || pl->work >= stop)
                continue; /* none clipped (nothing to search), too many, no budget */
            exact_t m;
            if (exact_init(&m, r.sub, k) != 0) {
                rc = GM_ENOMEM;
                break;
            }
            /* half of what is left (a quarter for the tight stretch): for
             * the bottom-left fill when the window is a perfect packing a
             * quarter of it (three for the tight stretch, where the
             * canonical search thrashes), the rest for the canonical
             * search */
            uint64_t slice = (stop - pl->work) / (w ? 2 : 4) + 1;
            int crc = 0;
            int found = corner_search(r.sub, k, m.ovs, m.ov, *lb - full,
                                      w ? slice / 4 : slice / 4 * 3, m.sol, &m.work, &crc);
            if (crc)
                m.oom = 1;
            else if (found != EXACT_FOUND)
                found = exact_target(&m, *lb - full, slice);
            pl->work += m.work;
            if (w == 0 && found == EXACT_ABORT && r.ngiven < REPAIR_ROUNDS) {
                r.given[r.ngiven][0] = a;
                r.given[r.ngiven++][1] = b;
            }
            if (m.oom) {
                rc = GM_ENOMEM;
            } else if (found == EXACT_NONE) {
                *lb += align; /* proved: no plan fits the target */
                moved = 1;
            } else if (found == EXACT_FOUND) {
                uint64_t peak = repair_compose(&r, pl, &m, k, a, b, full, off);
                size_t next, o = pl->oom ? 0 : repair_over(&r, buf, pl->off, *lb, &next);
                if (pl->oom) {
                    rc = GM_ENOMEM;
                } else if (peak < *best || (peak == *best && o < over)) {
                    *best = peak;
                    memcpy(off, pl->off, n * sizeof *off);
                    for (size_t i = 0; i < n; i++)
                        r.pinned[i] |= r.cs[i] < b && a < r.ce[i];
                    moved = 1;
                }
            }
            exact_release(&m);
        }
        if (!moved)
            r.tried[c] = 1;
        over = repair_over(&r, buf, off, *lb, &c);
    }
    repair_release(&r);
    return rc;
}

typedef struct offline_edge {
    uint64_t at;
    int64_t delta;
} offline_edge_t;

static int offline_edge_cmp(const void *a, const void *b)
{
    const offline_edge_t *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->delta < y->delta ? -1 : x->delta > y->delta; /* ends first */
}

/* LB: the most bytes live at once (rounded sizes; a lifetime that ends at
 * an index does not meet one that starts there).  No plan needs fewer
 * bytes.  A difference array over the event indices when they are dense
 * (the usual case: at most 4n + 64 of them), else a sort of the 2n edges.
 * GM_ENOMEM through *rc. */
static uint64_t offline_lower_bound(const offline_buf_t *buf, size_t n, int *rc)
{
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++) {
        if (buf[i].start + 1 > top)
            top = buf[i].start + 1;
        if (buf[i].end != UINT64_MAX && buf[i].end + 1 > top)
            top = buf[i].end + 1;
    }
    uint64_t live = 0, lb = 0;
    if (top <= 4 * (uint64_t)n + 64) {
        int64_t *d = calloc((size_t)top + 1, sizeof *d);
        if (d == NULL) {
            *rc = GM_ENOMEM;
            return 0;
        }
        for (size_t i = 0; i < n; i++) {
            d[buf[i].start] += (int64_t)buf[i].size;
            if (buf[i].end != UINT64_MAX)
                d[buf[i].end] -= (int64_t)buf[i].size;
        }
        for (uint64_t t = 0; t < top; t++) {
            live += (uint64_t)d[t]; /* wraps back: the sum never goes below 0 */
            if (live > lb)
                lb = live;
        }
        free(d);
        return lb;
    }
    offline_edge_t *e = malloc(2 * (n ? n : 1) * sizeof *e);
    if (e == NULL) {
        *rc = GM_ENOMEM;
        return 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        e[k++] = (offline_edge_t){buf[i].start, (int64_t)buf[i].size};
        if (buf[i].end != UINT64_MAX)
            e[k++] = (offline_edge_t){buf[i].end, -(int64_t)buf[i].size};
    }
    qsort(e, k, sizeof *e, offline_edge_cmp);
    for (size_t i = 0; i < k; i++) {
        live += (uint64_t)e[i].delta;
        if (live > lb)
            lb = live;
    }
    free(e);
    return lb;
}

/* A copy of buf[0, n) with each start and end replaced by its rank among
 * the distinct ones (a lifetime that never ends stays UINT64_MAX): the
 * same overlaps, indices below 2n.  NULL on host OOM. */
static offline_buf_t *offline_rank(const offline_buf_t *buf, size_t n)
{
    offline_buf_t *r = malloc(n * sizeof *r);
    size_t d;
    uint64_t *c = offline_times(buf, n, &d);
    if (r == NULL || c == NULL) {
        free(r);
        free(c);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        r[i] = buf[i];
        r[i].start = offline_coord(c, d, buf[i].start);
        if (buf[i].end != UINT64_MAX)
            r[i].end = offline_coord(c, d, buf[i].end);
    }
    free(c);
    return r;
}

/*
 * Plan buf[0..n) into off (by id).  Returns the peak; GM_ENOMEM through
 * *rc.  effort bounds the work of the improvement passes, search that of
 * the exact search (up to OFFLINE_EXACT_MAX buffers; none with effort 0),
 * which tries capacity first when one is given (0: none).  *lb_out gets the
 * proved bound, *status the plan's GM_PLAN_* status.
 */
static uint64_t offline_plan(const offline_buf_t *buf, size_t n, uint64_t align, int64_t effort,
                             int64_t search, uint64_t seed, uint64_t capacity, uint64_t *off,
                             uint64_t *passes, uint64_t *work, uint64_t *lb_out, int *status,
                             int *rc)
{
    *rc = 0;
    *passes = 0;
    *work = 0;
    *lb_out = 0;
    *status = GM_PLAN_OPTIMAL;
    if (n == 0)
        return 0;
    plan_t pl;
    memset(&pl, 0, sizeof pl);
    pl.n = n;
    pl.buf = buf;
    pl.m = 1;
    unsigned depth = 0;
    while (pl.m < n) {
        pl.m *= 2;
        depth++;
    }
    /* the 16-ary tree over the m leaves: level lv has m >> 4 lv entries
     * (at least a node's 16), the root 2^(depth − 4 (levels − 1)) */
    pl.levels = depth ? (depth + 3) / 4 : 1;
    pl.top_fan = 1u << (depth - 4 * (pl.levels - 1));
    for (unsigned lv = 0; lv < pl.levels; lv++) {
        size_t e = pl.m >> (4 * lv);
        pl.lvl[lv] = pl.nodes;
        pl.nodes += e < 16 ? 16 : e;
    }
    pl.by_start = malloc(n * sizeof *pl.by_start);
    pl.starts = malloc(n * sizeof *pl.starts);
    pl.pos = malloc(n * sizeof *pl.pos);
    pl.node = aligned_alloc(64, pl.nodes * sizeof *pl.node); /* a multiple of 64 bytes */
    pl.off = malloc(n * sizeof *pl.off);
    pl.range = malloc(pl.m * sizeof *pl.range);
    uint32_t *order = malloc(n * sizeof *order), *best_order = malloc(n * sizeof *best_order);
    uint32_t *trial = malloc(n * sizeof *trial);
    uint64_t best = UINT64_MAX, greedy_best = UINT64_MAX;
    offline_buf_t *ranked = NULL;
    skyline_t sk;
    memset(&sk, 0, sizeof sk);
    if (!pl.by_start || !pl.starts || !pl.pos || !pl.node || !pl.off || !pl.range || !order ||
        !best_order || !trial) {
        *rc = GM_ENOMEM;
        goto out;
    }
    /* the passes' ends are 32-bit (offline_end32): event indices beyond
     * are replaced by their ranks, which keeps every overlap (the orders
     * still read the indices themselves) */
    int wide = 0;
    for (size_t i = 0; i < n && !wide; i++)
        wide = buf[i].start >= UINT32_MAX - 1 ||
               (buf[i].end != UINT64_MAX && buf[i].end >= UINT32_MAX - 1);
    if (wide) {
        ranked = offline_rank(buf, n);
        if (ranked == NULL) {
            *rc = GM_ENOMEM;
            goto out;
        }
        pl.buf = ranked;
    }
    int sorted = 1;
    for (size_t i = 0; i < n; i++) {
        pl.by_start[i] = (uint32_t)i;
        if (i > 0 && pl.buf[i].start < pl.buf[i - 1].start)
            sorted = 0;
    }
    if (!sorted)
        offline_sort_ids(pl.by_start, trial, n, pl.buf, offline_cmp_start);
    for (size_t i = 0; i < n; i++) {
        pl.starts[i] = pl.buf[pl.by_start[i]].start;
        pl.pos[pl.by_start[i]] = (uint32_t)i;
    }
    /* event indices dense (the usual case, at most 4n + 64 of them): the
     * count of starts before each index, so that a query's prefix is one
     * lookup (a binary search over a million starts was a sixth of a
     * pass, most of it cache misses) */
    if (pl.starts[n - 1] < 4 * (uint64_t)n + 64) {
        pl.top = pl.starts[n - 1] + 1;
        pl.before = malloc(((size_t)pl.top + 1) * sizeof *pl.before);
        if (pl.before != NULL) {
            size_t at = 0;
            for (uint64_t t = 0; t <= pl.top; t++) {
                while (at < n && pl.starts[at] < t)
                    at++;
                pl.before[t] = (uint32_t)at;
            }
        }
    }

    /* the bound no plan goes below: the busiest instant */
    uint64_t lb = offline_lower_bound(buf, n, rc);
    if (*rc)
        goto out;
    static const offline_cmp_fn orders[] = {offline_cmp_size, offline_cmp_size, offline_cmp_area,
                                            offline_cmp_length, offline_cmp_start};
    static const int first_fit[] = {0, 1, 0, 0, 0};
    size_t critical, best_critical = 0;
    int best_ff = 0;
    uint64_t budget = effort > 0 ? (uint64_t)effort : 0;
    int small = n > 1 && n <= OFFLINE_SKYLINE_MAX;
    uint64_t rng = seed;
    for (size_t v = 0; v < sizeof orders / sizeof orders[0]; v++) {
        if (v > 0 && (pl.work >= budget || best <= lb))
            break;
        offline_order(order, trial, n, buf, orders[v]);
        uint64_t peak = offline_pass(&pl, order, NULL, first_fit[v], &critical);
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
     * plain, then randomized ones with a quarter of what is left) and the
     * local search over the best greedy order (the rest). */
    /* Instances beyond the exact search but within the skyline's reach
     * (real traces of thousands of allocations) get the plain skyline pass
     * whatever the budget: there the greedy orders cost a quarter of the
     * default budget each (a persistent buffer meets every other one),
     * and the plain pass is what places them at the bound. */
    int sky_always = small && n > OFFLINE_EXACT_MAX && effort > 0;
    if (small && (pl.work < budget || sky_always) && best > lb) {
        if (skyline_init(&sk, buf, n) != 0) {
            *rc = GM_ENOMEM;
            goto out;
        }
        uint64_t stop = pl.work < budget ? pl.work + (budget - pl.work) / 4 : pl.work;
        for (int k = 0; best > lb && (k == 0 || pl.work < stop); k++) {
            uint64_t peak = skyline_pass(&sk, buf, pl.off, k ? &rng : NULL, &pl.work);
            ++*passes;
            if (peak < best) {
                best = peak;
                memcpy(off, pl.off, n * sizeof *off);
            }
        }
    }
    while (n > 1 && pl.work < budget && best > lb) {
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
        uint64_t peak = offline_pass(&pl, trial, NULL, best_ff, &critical);
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
    /* Beyond the exact search, whatever the budget left: the window
     * repair, under half the search's. */
    uint64_t proved = lb;
    if (n > OFFLINE_EXACT_MAX && n <= OFFLINE_REPAIR_MAX && effort > 0 && search > 0 && best > lb) {
        *rc = offline_repair(&pl, align, (uint64_t)search / 2, &best, off, &proved);
        if (*rc)
            goto out;
    }
    *lb_out = proved;
    *status = best <= proved ? GM_PLAN_OPTIMAL : GM_PLAN_GREEDY;
    if (effort > 0 && search > 0 && n > 1 && n <= OFFLINE_EXACT_MAX && best > lb) {
        uint64_t spent = 0;
        int found = 0;
        int src = offline_exact(buf, n, align, (uint64_t)search, capacity, &best, off, &spent,
                                &proved, &found);
        pl.work += spent;
        if (src) {
            *rc = src;
            goto out;
        }
        if (proved > *lb_out)
            *lb_out = proved;
        *status = best <= *lb_out ? GM_PLAN_OPTIMAL : found ? GM_PLAN_FEASIBLE : GM_PLAN_GREEDY;
    }
out:
    *work = pl.work;
    skyline_release(&sk);
    free(ranked);
    free(pl.by_start);
    free(pl.starts);
    free(pl.pos);
    free(pl.node);
    free(pl.off);
    free(pl.range);
    free(pl.before);
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
    if (values[3].i < 0)
        return gm_error_set(err, GM_EINVAL,
                            "invalid value '%" PRId64 "' for offline.search: negative",
                            values[3].i);
    offline_t *o = calloc(1, sizeof *o);
    if (o == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'offline'");
    o->base.ops = &gm__policy_offline;
    o->base.dev = dev;
    o->align = align;
    o->effort = values[1].i;
    o->seed = (uint64_t)values[2].i;
    o->search = values[3].i;
    o->capacity = values[4].size;
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
    /* times: the lifetimes' timestamps when they say anything (some
     * lifetime has a length), else the event indices */
    int timed = 0;
    uint64_t tmax = 0, emax = 0;
    for (size_t i = 0; i < n; i++) {
        const gm_lifetime_t *lt = &ctx->lifetimes[i];
        if (lt->end != GM_LIFETIME_OPEN && lt->end_ns > lt->start_ns)
            timed = 1;
        if (lt->start_ns > tmax)
            tmax = lt->start_ns;
        if (lt->end != GM_LIFETIME_OPEN && lt->end_ns > tmax)
            tmax = lt->end_ns;
        if (lt->start > emax)
            emax = lt->start;
        if (lt->end != GM_LIFETIME_OPEN && lt->end > emax)
            emax = lt->end;
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
        buf[i] = (offline_buf_t){r ? r : o->align, lt->start, end, 0, 0};
        if (timed) {
            buf[i].t0 = lt->start_ns;
            buf[i].t1 = lt->end == GM_LIFETIME_OPEN ? tmax + 1 : lt->end_ns;
        } else {
            buf[i].t0 = lt->start;
            buf[i].t1 = lt->end == GM_LIFETIME_OPEN ? emax + 1 : lt->end;
        }
        if (buf[i].t1 < buf[i].t0)
            buf[i].t1 = buf[i].t0;
        o->size[i] = buf[i].size;
        o->reqsize[i] = lt->size;
    }
    /* the capacity to fit: the param, else the trace's "capacity"
     * attribute (a placement instance's); attributes that do not parse are
     * ignored, as a hint */
    o->cap_used = o->capacity;
    if (o->cap_used == 0 && ctx->attrs != NULL && ctx->attrs[0] != '\0') {
        gm_jv_t *root = NULL;
        gm_error_t perr = {0};
        uint64_t cap;
        if (gm_json_parse(ctx->attrs, strlen(ctx->attrs), &root, &perr) == 0 &&
            gm_jv_u64(gm_jv_get(root, GM_ATTR_CAPACITY), &cap) == 0)
            o->cap_used = cap;
        gm_jv_free(root);
    }
    int rc;
    o->peak = offline_plan(buf, n, o->align, o->effort, o->search, o->seed, o->cap_used,
                           o->offset, &o->passes, &o->work, &o->lb, &o->status, &rc);
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

static int offline_plan_info(gm_policy_t *p, gm_plan_info_t *out)
{
    offline_t *o = OFFLINE(p);
    if (o == NULL || !o->planned)
        return GM_ESTATE;
    *out = (gm_plan_info_t){.status = o->status, .peak = o->peak, .lower_bound = o->lb,
                            .capacity = o->cap_used, .work = o->work, .n = o->n,
                            .offset = o->offset, .size = o->size};
    return 0;
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
    {"search", GM_PARAM_INT, "4000000000",
     "work budget of the exact search (branch and bound: the capacity first, then up from the "
     "proved bound, for traces of up to 1,024 allocations; beyond, half of it for the "
     "search over windows of time around the busiest instants; about 10^9 units a second), "
     "not time; 0 = none (nor with effort 0)",
     NULL},
    {"capacity", GM_PARAM_SIZE, "0",
     "the arena size to fit, tried first by the exact search; 0 = the trace's capacity "
     "attribute (a placement instance's), if any",
     NULL},
};

const gm_policy_ops_t gm__policy_offline = {
    .name = "offline",
    .help = "offline planner: every allocation at a fixed offset in one arena, planned from the "
            "whole trace (greedy by size, best fit, local search, then an exact search for small "
            "traces); the achievable bound",
    .params = offline_params,
    .nparams = sizeof offline_params / sizeof offline_params[0],
    .flags = GM_POLICY_NEEDS_LIFETIMES | GM_POLICY_LAZY_STATS, /* stats sorts the live set */
    .create = offline_create,
    .alloc = offline_alloc,
    .free = offline_free,
    .stats = offline_stats,
    .check = offline_check,
    .destroy = offline_destroy,
    .empty_cache = offline_empty_cache,
    .role = GM_ROLE_BOUND,
    .prepare = offline_prepare,
    .plan = offline_plan_info,
};
