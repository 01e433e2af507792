/*
 * sim/offline/offline.h — the offline planner's internals, shared by its
 * files: the buffers and arena ranges it plans, the greedy passes' state
 * (plan_t), the skyline's and the exact search's, and the functions each
 * file gives the others.  The policy is sim/offline/offline.c; the plan
 * (the algorithm, its steps and budgets) sim/offline/plan.c, whose
 * offline_plan runs the steps of skyline.c (skyline passes), exact.c (the
 * exact search), packing.c (perfect packings and the exact search's
 * targets), bands.c (perfect packings rebuilt band by band) and repair.c
 * (window repair).  Each function's comment is at its
 * definition.
 */
#ifndef GM_SIM_OFFLINE_OFFLINE_H
#define GM_SIM_OFFLINE_OFFLINE_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/policy.h"
#include "gmsim/trace.h"

typedef struct offline_buf {
    uint64_t size; /* rounded to align */
    uint64_t start, end; /* event indices: which buffers overlap */
    uint64_t t0, t1;     /* times: how long each lives (the exact search's order) */
} offline_buf_t;

/* A lifetime as the planner reads it: its size rounded up to align (a
 * request of 0 bytes takes align; above GM_SIZE_LIMIT, the limit), its end
 * UINT64_MAX when it is never freed and start + 1 when it ends where (or
 * before) it starts. */
static inline uint64_t offline_lt_size(const gm_lifetime_t *l, uint64_t align)
{
    uint64_t sz = l->size > GM_SIZE_LIMIT ? GM_SIZE_LIMIT : l->size;
    uint64_t r = (sz + align - 1) & ~(align - 1);
    return r ? r : align;
}

static inline uint64_t offline_lt_end(const gm_lifetime_t *l)
{
    if (l->end == GM_LIFETIME_OPEN)
        return UINT64_MAX;
    return l->end <= l->start ? l->start + 1 : l->end;
}

typedef struct offline_range {
    uint64_t lo, hi; /* [lo, hi) in the arena */
} offline_range_t;

/* ---- planning (plan.c) ------------------------------------------------------------ */

/* The max-end tree's levels at most: 16 leaves a node, 2^32 leaves. */
#define OFFLINE_LEVELS 8

typedef struct plan {
    size_t n;
    const offline_buf_t *buf; /* by id (NULL beyond OFFLINE_REPAIR_MAX: the passes read lt) */
    const gm_lifetime_t *lt;  /* the passes' instance, by id (offline_lt_size, offline_lt_end) */
    uint64_t align;
    uint32_t *by_start;       /* ids sorted by start (NULL: the ids are) */
    uint64_t *starts;         /* starts in that order (NULL where before[] serves) */
    uint32_t *pos;            /* id → position in by_start (NULL: the id) */
    size_t m;                 /* leaves of the tree (power of two ≥ n) */
    unsigned levels, top_fan; /* the tree's levels; the root's children (16, or fewer) */
    uint32_t *node;           /* the tree: per level (bottom first, at lvl[]) per node 16 max ends
                               * of the placed buffers below each child (0: none); a node is
                               * one cache line, its children's ends compared at once */
    size_t lvl[OFFLINE_LEVELS], nodes; /* each level's first entry; entries in all */
    uint32_t *before;         /* dense starts: before[e] = buffers starting before e (NULL: search) */
    uint64_t top;             /* before[] covers [0, top] */
    uint64_t *off;            /* this pass's offsets, by id (NULL beyond OFFLINE_REPAIR_MAX:
                               * range[] holds them) */
    offline_range_t *range;   /* by position in by_start: the placed buffer's range (between
                               * passes, the orders' sort keys) */
    offline_range_t *scratch; /* the conflicts of one query */
    size_t scratch_cap;
    uint64_t work;
    int oom;
} plan_t;

/* An order's keys, compared as (a, b, c) ascending, then the id. */
typedef struct offline_key {
    uint64_t a, b, c;
    uint32_t id;
} offline_key_t;

/*
 * OFFLINE_SORT_DEFINE(scope, name, T, before, isort) defines
 * `scope void name(T *a, size_t n)`: an in-place quicksort of a by
 * before(const T *x, const T *y) (x goes first), the pivot the median of
 * the first, middle and last, recursing on the smaller side; below isort
 * elements an insertion sort.  Not stable.  A macro, not a function with a
 * comparator, so that each sort's comparison is inlined: the planner sorts
 * on its hot loops (the ranges of a query, the records of every order).
 */
#define OFFLINE_SORT_DEFINE(scope, name, T, before, isort)                          \
    scope void name(T *a, size_t n)                                               \
    {                                                                             \
        while (n > (isort)) {                                                     \
            T x = a[0], y = a[n / 2], z = a[n - 1];                               \
            T pivot = before(&x, &y) ? (before(&y, &z) ? y : before(&x, &z) ? z : x) \
                                     : (before(&x, &z) ? x : before(&y, &z) ? z : y); \
            size_t i = 0, j = n - 1;                                              \
            for (;;) {                                                            \
                while (before(&a[i], &pivot))                                     \
                    i++;                                                          \
                while (before(&pivot, &a[j]))                                     \
                    j--;                                                          \
                if (i >= j)                                                       \
                    break;                                                        \
                T t = a[i];                                                       \
                a[i] = a[j];                                                      \
                a[j] = t;                                                         \
                i++;                                                              \
                j--;                                                              \
            }                                                                     \
            /* [0, j] are not after the pivot, [j+1, n) not before it */          \
            size_t left = j + 1;                                                  \
            if (left < n - left) {                                                \
                name(a, left);                                                    \
                a += left;                                                        \
                n -= left;                                                        \
            } else {                                                              \
                name(a + left, n - left);                                         \
                n = left;                                                         \
            }                                                                     \
        }                                                                         \
        for (size_t i = 1; i < n; i++) {                                          \
            T t = a[i];                                                           \
            size_t j = i;                                                         \
            while (j > 0 && before(&t, &a[j - 1])) {                              \
                a[j] = a[j - 1];                                                  \
                j--;                                                              \
            }                                                                     \
            a[j] = t;                                                             \
        }                                                                         \
    }

/*
 * OFFLINE_MERGE_SORT_DEFINE(scope, name, T, C, before) defines
 * `scope void name(T *a, T *tmp, size_t n, C ctx)`: a stable bottom-up merge
 * sort of a (tmp holds n elements) by before(ctx, const T *x, const T *y),
 * x strictly before y; ties keep their order.  O(n log n), no global state.
 * A macro for the reason OFFLINE_SORT_DEFINE is one.
 */
#define OFFLINE_MERGE_SORT_DEFINE(scope, name, T, C, before)                         \
    scope void name(T *a, T *tmp, size_t n, C ctx)                                  \
    {                                                                               \
        T *src = a, *dst = tmp;                                                     \
        for (size_t w = 1; w < n; w *= 2) {                                         \
            for (size_t lo = 0; lo < n; lo += 2 * w) {                              \
                size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n; \
                size_t i = lo, j = mid, q = lo;                                     \
                while (i < mid && j < hi)                                           \
                    dst[q++] = before(ctx, &src[j], &src[i]) ? src[j++] : src[i++]; \
                while (i < mid)                                                     \
                    dst[q++] = src[i++];                                            \
                while (j < hi)                                                      \
                    dst[q++] = src[j++];                                            \
            }                                                                       \
            T *t = src;                                                             \
            src = dst;                                                              \
            dst = t;                                                                \
        }                                                                           \
        if (src != a)                                                               \
            memcpy(a, src, n * sizeof *a);                                          \
    }

uint64_t offline_rand(uint64_t *s);
/* The Luby sequence, i from 1: 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ... (restart quotas) */
uint64_t offline_luby(uint64_t i);
void offline_range_sort(offline_range_t *a, size_t n);
uint64_t offline_pass(plan_t *pl, const uint32_t *order, const uint64_t *at, int first_fit,
                      size_t *critical);
void offline_sort_keys(offline_key_t *k, offline_key_t *tmp, size_t n);
uint64_t offline_plan(const gm_lifetime_t *lt, const offline_buf_t *buf, size_t n, uint64_t align, int64_t effort,
                      int64_t search, int64_t early, uint64_t seed, uint64_t capacity, uint64_t *off,
                      uint64_t *passes, uint64_t *work, uint64_t *lb_out, int *status,
                      int *rc);

/* ---- skyline passes (skyline.c) ----------------------------------------------------- */

#define OFFLINE_SKYLINE_MAX 16384

typedef struct skyline {
    size_t n, T;             /* buffers, elementary segments */
    uint32_t *cs, *ce;       /* each buffer's segments [cs, ce) */
    uint64_t *fl;            /* per buffer: the top of the skyline over its lifetime */
    uint32_t *todo;          /* unplaced buffers */
} skyline_t;

size_t offline_coord(const uint64_t *c, size_t n, uint64_t v);
size_t offline_unique(uint64_t *c, size_t k);
uint64_t *offline_times(const offline_buf_t *buf, size_t n, size_t *u);
int offline_segments(const offline_buf_t *buf, size_t n, uint32_t *cs, uint32_t *ce,
                     size_t *T);
int skyline_init(skyline_t *sk, const offline_buf_t *buf, size_t n);
void skyline_release(skyline_t *sk);
uint64_t skyline_pass(skyline_t *sk, const offline_buf_t *buf, uint64_t *off,
                      uint64_t *rng, uint64_t *work);

/* ---- exact search (exact.c) --------------------------------------------------------- */

#define OFFLINE_EXACT_MAX 1024


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
    int record;              /* exact_target notes its restarts ended for budget (known_*) */
    uint64_t known;          /* the target they were at (0: none), until a call at it skips them */
    unsigned known_round;    /* each restart before (known_round, known_heur) ended so */
    int known_heur;
    uint64_t known_work;     /* their work, from the call's start */
    uint64_t known_need;     /* the call's work up to the last one's quota */
    uint64_t charged;        /* the work of the restarts skipped, counted in work */
} exact_t;

void exact_release(exact_t *m);
int exact_init(exact_t *m, const offline_buf_t *buf, size_t n);
int exact_target(exact_t *m, uint64_t target, uint64_t limit);
void offline_exact_keep(const exact_t *m, const offline_buf_t *buf, size_t n, uint64_t *best,
                        uint64_t *off);

/* ---- perfect packings and the exact search's targets (packing.c) ----------------- */

typedef struct corner corner_t;

corner_t *corner_begin(const offline_buf_t *buf, size_t n, uint64_t lb, uint64_t *work, int *rc);
int corner_run(corner_t *c, uint64_t stop, uint64_t limit, const uint32_t *ovs,
               const uint32_t *ov, uint64_t *off, uint64_t *work);
void corner_end(corner_t *c);
int corner_search(const offline_buf_t *buf, size_t n, const uint32_t *ovs,
                  const uint32_t *ov, uint64_t lb, uint64_t limit, uint64_t *off,
                  uint64_t *work, int *rc);

/* ---- perfect packings rebuilt band by band (bands.c) -------------------------------- */

/* A plan of lb bytes for buf, a perfect packing of lb, rebuilt as
 * guillotine cuts (time cuts, bands), with at most limit work (added to
 * *work): EXACT_FOUND with off set (not yet checked against the events),
 * else EXACT_ABORT; GM_ENOMEM through *rc. */
int bands_search(const offline_buf_t *buf, size_t n, uint64_t lb, uint64_t limit, uint64_t *off,
                 uint64_t *work, int *rc);

/* The bottom-left fill begun before the heuristics (offline_plan's early
 * try), handed to offline_exact to go on with. */
typedef struct offline_early {
    exact_t m;      /* initialized (exact_init) */
    corner_t *c;    /* NULL: not a perfect packing */
    uint64_t work;  /* the fill's work so far (counted as the exact search's) */
    uint64_t lo;    /* the bound it fills to */
    uint64_t tried; /* the work of the exact search's try at lo (apart) */
} offline_early_t;

uint64_t offline_exact_lo(const exact_t *m, uint64_t align);
int offline_exact(offline_early_t *e, const offline_buf_t *buf, size_t n, uint64_t align,
                  uint64_t budget, uint64_t capacity, uint64_t *best, uint64_t *off,
                  uint64_t *spent, uint64_t *lb_out, int *found);

/* ---- window repair (repair.c) ------------------------------------------------------- */

/* Traces of more buffers are not repaired: each round re-places them all
 * (a million: seconds a pass). */
#define OFFLINE_REPAIR_MAX 65536

int offline_repair(plan_t *pl, uint64_t align, uint64_t budget, uint64_t *best,
                   uint64_t *off, uint64_t *lb);

#endif
