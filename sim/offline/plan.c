/*
 * sim/offline/plan.c — the offline planner's plan: the greedy passes over
 * the max-end tree, their orders, the bound and offline_plan, which runs
 * every step in turn.
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
 */
#include "gmsim/policy.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "sim/offline/offline.h"

/* ---- planning ----------------------------------------------------------------- */

/* A buffer's event index as the greedy passes keep it: 32 bits, a
 * lifetime that never ends UINT32_MAX (above every start).  offline_plan
 * ranks the indices first when a trace has 2^32 − 1 events or more. */
static inline uint32_t offline_end32(uint64_t end)
{
    return end == UINT64_MAX ? UINT32_MAX : (uint32_t)end;
}

/* Buffer id of the lifetimes lt as the planner reads it (no times). */
static inline offline_buf_t offline_view(const gm_lifetime_t *lt, uint64_t align, uint32_t id)
{
    return (offline_buf_t){offline_lt_size(&lt[id], align), lt[id].start, offline_lt_end(&lt[id]),
                           0, 0};
}

/* Position of id in by_start. */
static inline size_t offline_pos(const plan_t *pl, uint32_t id)
{
    return pl->pos != NULL ? pl->pos[id] : id;
}

/* The Luby sequence, i from 1: 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ... */
uint64_t offline_luby(uint64_t i)
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

uint64_t offline_rand(uint64_t *s)
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

static inline int offline_range_before(const offline_range_t *x, const offline_range_t *y)
{
    return x->lo < y->lo;
}

/* Quicksort by lo (median of three), insertion sort below OFFLINE_ISORT. */
OFFLINE_SORT_DEFINE(, offline_range_sort, offline_range_t, offline_range_before, OFFLINE_ISORT)

static int offline_push(plan_t *pl, size_t *k, uint64_t lo, uint64_t hi)
{
    if (GM_VEC_RESERVE(pl->scratch, pl->scratch_cap, *k + 1, 256)) {
        pl->oom = 1;
        return -1;
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
            for (unsigned q = 0; q < 16 && 16 * c + q < pl->n; q += 4)
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

static void offline_place(plan_t *pl, uint32_t id, const offline_buf_t *b, uint64_t off)
{
    if (pl->off != NULL)
        pl->off[id] = off;
    uint32_t e = offline_end32(b->end);
    size_t pos = offline_pos(pl, id);
    pl->range[pos] = (offline_range_t){off, off + b->size};
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
uint64_t offline_pass(plan_t *pl, const uint32_t *order, const uint64_t *at, int first_fit,
                      size_t *critical)
{
    memset(pl->node, 0, pl->nodes * sizeof *pl->node);
    uint64_t peak = 0;
    *critical = 0;
    for (size_t i = 0; i < pl->n; i++) {
        uint32_t id = order[i];
        const offline_buf_t bv = offline_view(pl->lt, pl->align, id), *b = &bv;
        /* the order is by size, the ids at random: fetch what the next
         * queries read by id (the lifetime, then its position and prefix,
         * then its leaf) ahead of them, each from what came in before */
        if (i + 16 < pl->n)
            __builtin_prefetch(&pl->lt[order[i + 16]]);
        if (i + 8 < pl->n) {
            uint64_t ne = offline_lt_end(&pl->lt[order[i + 8]]);
            if (pl->pos != NULL)
                __builtin_prefetch(&pl->pos[order[i + 8]]);
            if (pl->before != NULL && ne <= pl->top)
                __builtin_prefetch(&pl->before[ne]);
        }
        if (i + 4 < pl->n) {
            size_t np = offline_pos(pl, order[i + 4]);
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
        offline_place(pl, id, b, off);
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

/* What offline_sort_ids orders by: an order's comparison of the buffers. */
typedef struct offline_by {
    const gm_lifetime_t *lt;
    uint64_t align;
    offline_cmp_fn fn;
} offline_by_t;

static inline int offline_id_before(const offline_by_t *by, const uint32_t *x, const uint32_t *y)
{
    offline_buf_t vx = offline_view(by->lt, by->align, *x);
    offline_buf_t vy = offline_view(by->lt, by->align, *y);
    return by->fn(&vx, &vy) < 0;
}

/* Stable sort of ids by an order's comparison (ties keep id order); tmp
 * holds n ids. */
OFFLINE_MERGE_SORT_DEFINE(static, offline_sort_ids_by, uint32_t, const offline_by_t *,
                          offline_id_before)

static void offline_sort_ids(uint32_t *ids, uint32_t *tmp, size_t n, const gm_lifetime_t *lt,
                             uint64_t align, offline_cmp_fn fn)
{
    offline_by_t by = {lt, align, fn};
    offline_sort_ids_by(ids, tmp, n, &by);
}

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

static inline int offline_key_in_order(const void *ctx, const offline_key_t *x,
                                    const offline_key_t *y)
{
    (void)ctx;
    return offline_key_before(x, y);
}

OFFLINE_MERGE_SORT_DEFINE(static, offline_merge_keys, offline_key_t, const void *,
                          offline_key_in_order)

/* Merge sort of keys (a total order: the ids break ties). */
void offline_sort_keys(offline_key_t *k, offline_key_t *tmp, size_t n)
{
    offline_merge_keys(k, tmp, n, NULL);
}

/* A sort record of the orders: key, then tie (unique), and the id. */
typedef struct offline_rec {
    uint64_t key;
    uint32_t tie, id;
} offline_rec_t;

static inline int offline_rec_before(const offline_rec_t *x, const offline_rec_t *y)
{
    return x->key != y->key ? x->key < y->key : x->tie < y->tie;
}

/* In-place quicksort of records by (key, tie) (median of three, insertion
 * sort below 16; the ties are unique: a total order). */
OFFLINE_SORT_DEFINE(static, offline_rec_sort, offline_rec_t, offline_rec_before, 16)

enum { OFFLINE_KEY_LEN, OFFLINE_KEY_SIZE, OFFLINE_KEY_START };

/* Lifetime id's key of one stage of an order: its length or size
 * descending, or its start. */
static inline uint64_t offline_stage_key(const gm_lifetime_t *lt, uint64_t align, uint32_t id,
                                         int what)
{
    if (what == OFFLINE_KEY_SIZE)
        return ~offline_lt_size(&lt[id], align);
    if (what == OFFLINE_KEY_LEN)
        return ~(offline_lt_end(&lt[id]) - lt[id].start);
    return lt[id].start;
}

/* The ids in the order fn gives (ties: the lower id), of the lifetimes lt
 * (the orders read the event indices themselves, not pl's ranks).  The
 * orders by size, length and start, where the ids are in start order (pl
 * without by_start: every recorded trace), sort 16-byte records in
 * pl->range (free between passes: no memory of their own) one key at a
 * time, least significant first, each stage's ties broken by the position
 * the one before gave (by size: length, then size; by length: size, then
 * length; by start: length, size, start; the id order is the start order);
 * no comparator call, no reading of the lifetimes at random.  The others
 * (and every order where the ids are not in start order) through fn,
 * stable, tmp holding n ids. */
static void offline_order(plan_t *pl, uint32_t *order, uint32_t *tmp, const gm_lifetime_t *lt,
                          offline_cmp_fn fn)
{
    size_t n = pl->n;
    int stages[3], ns = 0;
    if (fn == offline_cmp_size) {
        stages[ns++] = OFFLINE_KEY_LEN;
        stages[ns++] = OFFLINE_KEY_SIZE;
    } else if (fn == offline_cmp_length) {
        stages[ns++] = OFFLINE_KEY_SIZE;
        stages[ns++] = OFFLINE_KEY_LEN;
    } else if (fn == offline_cmp_start) {
        stages[ns++] = OFFLINE_KEY_LEN;
        stages[ns++] = OFFLINE_KEY_SIZE;
        stages[ns++] = OFFLINE_KEY_START;
    }
    if (ns == 0 || pl->pos != NULL) {
        for (size_t i = 0; i < n; i++)
            order[i] = (uint32_t)i;
        offline_sort_ids(order, tmp, n, lt, pl->align, fn);
        return;
    }
    offline_rec_t *r = (offline_rec_t *)(void *)pl->range; /* n of them: 16 bytes each */
    for (size_t i = 0; i < n; i++)
        r[i] = (offline_rec_t){offline_stage_key(lt, pl->align, (uint32_t)i, stages[0]),
                               (uint32_t)i, (uint32_t)i};
    offline_rec_sort(r, n);
    for (int st = 1; st < ns; st++) {
        for (size_t i = 0; i < n; i++)
            r[i] = (offline_rec_t){offline_stage_key(lt, pl->align, r[i].id, stages[st]),
                                   (uint32_t)i, r[i].id};
        offline_rec_sort(r, n);
    }
    for (size_t i = 0; i < n; i++)
        order[i] = r[i].id;
}

/* This pass's offsets into off (by id). */
static void offline_take(const plan_t *pl, uint64_t *off)
{
    if (pl->off != NULL) {
        memcpy(off, pl->off, pl->n * sizeof *off);
        return;
    }
    for (size_t i = 0; i < pl->n; i++)
        off[i] = pl->range[offline_pos(pl, (uint32_t)i)].lo;
}

/* ---- the plan --------------------------------------------------------------------- */

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
static uint64_t offline_lower_bound(const gm_lifetime_t *lt, size_t n, uint64_t align, int *rc)
{
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t end = offline_lt_end(&lt[i]);
        if (lt[i].start + 1 > top)
            top = lt[i].start + 1;
        if (end != UINT64_MAX && end + 1 > top)
            top = end + 1;
    }
    uint64_t live = 0, lb = 0;
    if (top <= 4 * (uint64_t)n + 64) {
        int64_t *d = calloc((size_t)top + 1, sizeof *d);
        if (d == NULL) {
            *rc = GM_ENOMEM;
            return 0;
        }
        for (size_t i = 0; i < n; i++) {
            offline_buf_t b = offline_view(lt, align, (uint32_t)i);
            d[b.start] += (int64_t)b.size;
            if (b.end != UINT64_MAX)
                d[b.end] -= (int64_t)b.size;
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
        offline_buf_t b = offline_view(lt, align, (uint32_t)i);
        e[k++] = (offline_edge_t){b.start, (int64_t)b.size};
        if (b.end != UINT64_MAX)
            e[k++] = (offline_edge_t){b.end, -(int64_t)b.size};
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
 * Plan the lifetimes lt[0..n) into off (by id); buf is the same buffers
 * with their times, which the skyline, window repair and exact search read
 * (NULL beyond OFFLINE_REPAIR_MAX allocations, where none of them runs,
 * unless event indices reach 2^32 − 2).  Returns the peak; GM_ENOMEM
 * through *rc.  effort bounds the work of the improvement passes, search
 * that of the exact search (up to OFFLINE_EXACT_MAX buffers; none with
 * effort 0), which tries capacity first when one is given (0: none), early
 * that of its quick tries before the heuristics.  *lb_out gets the proved
 * bound, *status the plan's GM_PLAN_* status.
 *
 * Memory (beyond lt, off and the caller's buf): per buffer, about 4.3–8.5
 * bytes of tree, 16 of ranges (which hold the orders' sort records between
 * passes), 12 of orders, 8 of dense starts (before[]), 8 of this pass's
 * offsets only up to OFFLINE_REPAIR_MAX, 8 of by_start and pos only where
 * the ids are not in start order, 8 of starts only where event indices are
 * not dense; the bound's sweep (up to 32) comes and goes before them.
 */
uint64_t offline_plan(const gm_lifetime_t *lt, const offline_buf_t *buf, size_t n,
                      uint64_t align, int64_t effort, int64_t search, int64_t early,
                      uint64_t seed, uint64_t capacity, uint64_t *off, uint64_t *passes,
                      uint64_t *work, uint64_t *lb_out, int *status, int *rc)
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
    pl.lt = lt;
    pl.align = align;
    uint64_t best = UINT64_MAX, greedy_best = UINT64_MAX;
    offline_buf_t *ranked = NULL;
    gm_lifetime_t *ranked_lt = NULL;
    uint32_t *order = NULL, *best_order = NULL, *trial = NULL;
    skyline_t sk;
    memset(&sk, 0, sizeof sk);
    offline_early_t pre;
    memset(&pre, 0, sizeof pre);

    /* the bound no plan goes below: the busiest instant (first: its sweep
     * comes and goes before the passes' arrays) */
    uint64_t lb = offline_lower_bound(lt, n, align, rc);
    if (*rc)
        goto out;

    /* the passes' ends are 32-bit (offline_end32): event indices beyond
     * are replaced by their ranks, which keeps every overlap (the orders
     * still read the indices themselves); buf is there (offline.c) */
    int wide = 0;
    for (size_t i = 0; i < n && !wide; i++) {
        uint64_t end = offline_lt_end(&lt[i]);
        wide = lt[i].start >= UINT32_MAX - 1 || (end != UINT64_MAX && end >= UINT32_MAX - 1);
    }
    if (wide) {
        ranked = buf != NULL ? offline_rank(buf, n) : NULL;
        ranked_lt = malloc(n * sizeof *ranked_lt);
        if (ranked == NULL || ranked_lt == NULL) {
            *rc = GM_ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            ranked_lt[i] = (gm_lifetime_t){ranked[i].size, ranked[i].start,
                                           ranked[i].end == UINT64_MAX ? GM_LIFETIME_OPEN
                                                                       : ranked[i].end,
                                           0, 0};
        pl.buf = ranked;
        pl.lt = ranked_lt;
    }

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
    pl.node = aligned_alloc(64, pl.nodes * sizeof *pl.node); /* a multiple of 64 bytes */
    pl.off = n <= OFFLINE_REPAIR_MAX ? malloc(n * sizeof *pl.off) : NULL;
    pl.range = malloc(n * sizeof *pl.range);
    order = malloc(n * sizeof *order);
    best_order = malloc(n * sizeof *best_order);
    trial = malloc(n * sizeof *trial);
    if (!pl.node || (n <= OFFLINE_REPAIR_MAX && !pl.off) || !pl.range || !order ||
        !best_order || !trial) {
        *rc = GM_ENOMEM;
        goto out;
    }
    /* by start: the ids themselves where they are in start order (every
     * recorded trace: an id is given at its ALLOC), else sorted */
    int sorted = 1;
    uint64_t last = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && pl.lt[i].start < pl.lt[i - 1].start)
            sorted = 0;
        if (pl.lt[i].start > last)
            last = pl.lt[i].start;
    }
    if (!sorted) {
        pl.by_start = malloc(n * sizeof *pl.by_start);
        pl.pos = malloc(n * sizeof *pl.pos);
        if (!pl.by_start || !pl.pos) {
            *rc = GM_ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            pl.by_start[i] = (uint32_t)i;
        offline_sort_ids(pl.by_start, trial, n, pl.lt, align, offline_cmp_start);
        for (size_t i = 0; i < n; i++)
            pl.pos[pl.by_start[i]] = (uint32_t)i;
    }
    /* event indices dense (the usual case, at most 4n + 64 of them): the
     * count of starts before each index, so that a query's prefix is one
     * lookup (a binary search over a million starts was a sixth of a
     * pass, most of it cache misses); else the starts for that search */
    if (last < 4 * (uint64_t)n + 64) {
        pl.top = last + 1;
        pl.before = malloc(((size_t)pl.top + 1) * sizeof *pl.before);
        if (pl.before != NULL) {
            size_t at = 0;
            for (uint64_t t = 0; t <= pl.top; t++) {
                while (at < n && pl.lt[pl.by_start ? pl.by_start[at] : at].start < t)
                    at++;
                pl.before[t] = (uint32_t)at;
            }
        }
    }
    if (pl.before == NULL) {
        pl.starts = malloc(n * sizeof *pl.starts);
        if (pl.starts == NULL) {
            *rc = GM_ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            pl.starts[i] = pl.lt[pl.by_start ? pl.by_start[i] : i].start;
    }

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
        if (v == 0 || orders[v] != orders[v - 1]) /* the same order: as it is */
            offline_order(&pl, order, trial, lt, orders[v]);
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
            offline_take(&pl, off);
        }
    }
    /* Where the greedy orders miss the bound, the exact search's quick
     * ways to it, before the heuristics spend their budget (a plan at the
     * bound ends the planning at once), under `early`: for a perfect
     * packing (every instant of the instance exactly full) its bottom-left
     * fill, up to `early` of its work (when it has found none by then,
     * offline_exact goes on from there, with the same restarts as one run:
     * the plans are those of the fill run after the heuristics); for any
     * other instance the search at the bound, with half of it (its work
     * apart, so that the searches after the heuristics run as they would
     * without it; on perfect packings it thrashes). */
    int exact_on = effort > 0 && search > 0 && n > 1 && n <= OFFLINE_EXACT_MAX;
    if (exact_on && best > lb) {
        if (exact_init(&pre.m, buf, n) != 0) {
            *rc = GM_ENOMEM;
            goto out;
        }
        pre.lo = offline_exact_lo(&pre.m, align);
        if (pre.lo < best) {
            pre.c = corner_begin(buf, n, pre.lo, &pre.work, rc);
            if (*rc)
                goto out;
            uint64_t lim = (uint64_t)search / 4, stop = (uint64_t)early;
            if (pre.c != NULL &&
                corner_run(pre.c, stop < lim ? stop : lim, lim,
                           pre.m.ovs, pre.m.ov, pre.m.sol, &pre.work) == EXACT_FOUND)
                offline_exact_keep(&pre.m, buf, n, &best, off);
        }
        if (pre.lo < best && pre.c == NULL && early > 1) {
            uint64_t w = pre.m.work;
            pre.m.record = 1; /* the restarts that end for budget: not run again */
            int r = exact_target(&pre.m, pre.lo, w + (uint64_t)early / 2);
            pre.m.record = 0;
            pre.tried = pre.m.work - w;
            pre.m.work = w;
            if (pre.m.oom) {
                *rc = GM_ENOMEM;
                goto out;
            }
            if (r == EXACT_FOUND)
                offline_exact_keep(&pre.m, buf, n, &best, off);
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
                offline_take(&pl, off);
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
    if (exact_on && best > lb) {
        uint64_t spent = 0;
        int found = 0;
        int src = offline_exact(&pre, buf, n, align, (uint64_t)search, capacity, &best, off,
                                &spent, &proved, &found);
        pre.work = 0; /* in spent */
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
    *work = pl.work + pre.work + pre.tried - pre.m.charged; /* charged: in both */
    exact_release(&pre.m);
    corner_end(pre.c);
    skyline_release(&sk);
    free(ranked);
    free(ranked_lt);
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
