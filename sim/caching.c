/*
 * sim/caching.c — PyTorch's CUDA caching allocator (the native backend of
 * c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.x), as a policy.
 *
 * Why above 1,500 lines: one policy's private state (its treaps, free sets,
 * expandable segments and the starting layout) is what every section
 * touches, and a policy keeps everything static but its ops table (design.md,
 * "Adding a policy"); splitting it along its sections with an internal
 * header is issue 31's next step, before the recorded-OOM path grows it.
 *
 * The rules (docs/policies.md, `caching`, for users; the original is the
 * authority, this is our own code; the size rules — rounding, pool, segment
 * size, split, page — are sim/torch_rules.h's, shared with the snapshot
 * rewinder):
 *
 *   Rounding.  A request (plus the recorded block padding `pad`, 32 B on the
 *   Ascend NPU build) below 512 B becomes 512 B.  If roundup_power2_divisions
 *   gives d > 1 for its size interval (16 intervals: ⌊log2 size⌋ − 20,
 *   clamped to 0…15) and size > 512·d, it rounds up to the next of d equal
 *   steps between the surrounding powers of two; otherwise to a multiple of
 *   512.
 *
 *   Pools.  Rounded size ≤ 1 MiB: the small pool, else the large pool.  Each
 *   pool keeps its free blocks in an ordered set by (stream, size, address);
 *   a block serves only its own stream.  Best fit is the first block ≥ the
 *   request on the request's stream.  With max_split_size set, a request
 *   below it may not take a block ≥ it, and a request at or above it only a
 *   block < request + max_non_split_rounding (20 MiB by default).
 *
 *   New segments.  When nothing fits: garbage collection (only with a memory
 *   fraction and a threshold), then a device malloc of 2 MiB (small), 20 MiB
 *   (large below 10 MiB) or the request rounded up to 2 MiB; refused when it
 *   would exceed the fraction of device memory.  On failure: release cached
 *   oversize blocks (max_split_size set: the smallest single block ≥
 *   max(request, max_split_size) on the stream, else the largest ones down
 *   until that much is freed) and retry; then release every cached block
 *   that is a whole segment (large pool, then small) and retry; then OOM.
 *
 *   Splitting.  Small pool (or expandable segments): split when the
 *   remainder ≥ 512 B.  Large pool: split when request < max_split_size and
 *   remainder > 1 MiB.  The front part is handed out, the remainder stays
 *   free.  A freed block merges with its free neighbours of the same
 *   segment (never across segments).  Segments go back to the device only
 *   by OOM recovery, garbage collection and empty_cache.
 *
 *   Garbage collection (memory_fraction > 0 and 0 < threshold < 1).  Every
 *   search of a pool ages its cached blocks by one.  When reserved bytes
 *   exceed threshold × allowed, whole-segment large blocks whose age is at
 *   least the average are released, pass after pass, until enough is freed
 *   or nothing more is.
 *
 *   Expandable segments.  One virtual range per (stream, pool) — a new one
 *   only when no existing range of the stream has room — of 9/8 of device
 *   memory, in pages of 2 MiB (small) or 20 MiB (large).  Allocation maps
 *   pages at the lowest address where a free mapped block and the unmapped
 *   space after it can hold the request (one device malloc per mapped run);
 *   the new pages merge with their free neighbours.  Best fit weighs a free
 *   block followed by unmapped space at its expandable size.  OOM recovery
 *   and empty_cache unmap every page lying wholly inside a free block (one
 *   device free per block) and drop ranges left with nothing mapped.
 *
 *   Cross-stream uses and CUDA events are not in the traces: a FREE is
 *   PyTorch's free_completed.  CUDA graph private pools are not modelled.
 *
 * Warm start (start=recorded).  prepare() rebuilds the trace's recorded
 * starting layout — every segment (adopted from the device: reserved, not
 * counted as a malloc) and every block in it, in recorded address order so
 * that address ties break as they did — and the pre-existing ALLOCs that
 * open the trace get the blocks the layout names for them.  Settings come
 * from, in increasing precedence: the defaults, the trace's
 * "allocator_settings" (settings=trace), the `conf` string (the
 * PYTORCH_CUDA_ALLOC_CONF syntax), parameters given explicitly.
 *
 * The Ascend NPU build follows the same rules with two differences, both
 * parameters here and switched on by a trace's block_pad attribute: blocks
 * are round512(request + 32) (`pad`), and with expandable segments a block
 * of 2 MiB or more starts on a 16 KiB boundary, the bytes before it left
 * cached on their own (`base_addr_align`, torch_npu's base_addr_aligned_kb).
 *
 * Data structures.  Blocks live in one array, sim/blocktree.h's record
 * heap (GM__BT_HEAP_OF) over this policy's one-line record (index 0 is
 * "none"); each has
 * its segment neighbours (prev/next) and the links of the one ordered set it
 * may be in.  A pool's free mapped blocks are kept per stream in size
 * classes (16 of 512 B below 8 KiB, then 16 per power of two), each a treap
 * with parent links ordered by (size, address), with a bitmap of non-empty
 * classes: since classes partition sizes in order, the best fit is the
 * lower bound in the request's class or the first block of the next
 * non-empty class.  Unmapped ranges are one treap per pool by (stream,
 * address).  Live blocks are found by address in the shared id map.
 * Nothing scans the free blocks on the allocation path.
 *
 * Invariants (check): the blocks of every segment tile it (addresses
 * contiguous, prev/next symmetric); an ordinary segment has no two adjacent
 * free blocks, an expandable range no two adjacent free blocks of the same
 * mapping state, and its unmapped blocks are whole pages; a free mapped
 * block is in its pool's size-ordered set, an unmapped one in the
 * address-ordered set, an allocated one in neither but in the address map
 * (or awaiting its pre-existing ALLOC); each set is ordered, a heap by
 * priority, with consistent parent links and count, each free block in the
 * class of its size and stream, the class bitmap exact; allocated bytes
 * equal the sum of allocated blocks; the segments' device bytes plus the
 * mapped pages equal the device's reserved bytes; with a memory fraction
 * (and neither expandable segments, whose page rounding PyTorch does not
 * count, nor a recorded start), reserved bytes stay within it.
 *
 * Failures: a request the device cannot hold after the recovery chain is
 * GM_ALLOC_OOM; host memory exhaustion is GM_ENOMEM (nothing changed) or,
 * inside a release, leaves blocks cached.
 */
#include "gmsim/policy.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "gmsim/trace.h"
#include "base/bits.h"
#include "sim/torch_rules.h"
#include "base/idmap.h"
#include "base/text.h"
#include "sim/blocktree.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

/* PyTorch's constants and size rules: sim/torch_rules.h */
#define CACHING_LARGE_BUFFER GM_TORCH_LARGE_BUFFER
#define CACHING_ROUND_LARGE GM_TORCH_ROUND_LARGE
#define CACHING_INTERVALS GM_TORCH_INTERVALS
#define CACHING_UNLIMITED UINT64_MAX
#define CACHING_DEFAULT_MEMORY (UINT64_C(1) << 40) /* VA sizing when nothing says */

#define CACHING_SMALL 1 /* pool index, as gm_layout_pool_t */
#define CACHING_LARGE 0

#define NIL 0u

/* ---- parameters ------------------------------------------------------------ */

enum {
    P_MAX_SPLIT,
    P_MAX_NSR,
    P_DIVISIONS,
    P_GC,
    P_FRACTION,
    P_EXPANDABLE,
    P_DEVICE_MEMORY,
    P_SETTINGS,
    P_CONF,
    P_START,
    P_PAD,
    P_ALIGN,
    P_COUNT
};

static const gm_param_spec_t caching_params[P_COUNT] = {
    [P_MAX_SPLIT] = {"max_split_size", GM_PARAM_SIZE, "0",
                     "blocks this large are never split (max_split_size_mb); 0 or none = "
                     "unlimited", "none|unlimited"},
    [P_MAX_NSR] = {"max_non_split_rounding", GM_PARAM_SIZE, "20MiB",
                   "an oversize request takes a cached block less than this much larger", NULL},
    [P_DIVISIONS] = {"roundup_power2_divisions", GM_PARAM_STRING, "",
                     "round sizes to power-of-two divisions: N, or [256:1,512:2,>:8] by MiB "
                     "interval; empty = off", NULL},
    [P_GC] = {"garbage_collection_threshold", GM_PARAM_DOUBLE, "0",
              "release aged cached blocks above this fraction of the allowed memory "
              "(needs memory_fraction); 0 = off", NULL},
    [P_FRACTION] = {"memory_fraction", GM_PARAM_DOUBLE, "0",
                    "per-process memory fraction of device_memory; 0 = unlimited", NULL},
    [P_EXPANDABLE] = {"expandable_segments", GM_PARAM_BOOL, "false",
                      "one growing virtual range per stream and pool, pages mapped on demand",
                      NULL},
    [P_DEVICE_MEMORY] = {"device_memory", GM_PARAM_SIZE, "0",
                         "total device memory (fraction base, expandable range size); "
                         "0 = the device capacity", NULL},
    [P_SETTINGS] = {"settings", GM_PARAM_ENUM, "trace",
                    "trace: replay with the trace's recorded allocator settings; default: ignore "
                    "them", "trace|default"},
    [P_CONF] = {"conf", GM_PARAM_STRING, "",
                "a PYTORCH_CUDA_ALLOC_CONF string, e.g. expandable_segments:True,"
                "max_split_size_mb:128", NULL},
    [P_START] = {"start", GM_PARAM_ENUM, "recorded",
                 "recorded: start from the trace's recorded segments and blocks; empty: cold",
                 "recorded|empty"},
    [P_PAD] = {"pad", GM_PARAM_STRING, "trace",
               "bytes added to each request before rounding (trace: the recorded block_pad)",
               NULL},
    [P_ALIGN] = {"base_addr_align", GM_PARAM_STRING, "trace",
                 "expandable segments: start blocks of 2 MiB and more at this alignment "
                 "(Ascend build: 16KiB; trace: 16KiB when the trace has block_pad, else 0)",
                 NULL},
};

typedef struct caching_cfg {
    uint64_t max_split;  /* CACHING_UNLIMITED when unset */
    uint64_t max_nsr;    /* max_non_split_rounding */
    uint32_t div[CACHING_INTERVALS];
    double gc;           /* garbage_collection_threshold, 0 = off */
    double fraction;     /* 0 = unset */
    int expandable;
    uint64_t pad;
    uint64_t align; /* base_addr_align: 0 = off */
} caching_cfg_t;

/* ---- state ------------------------------------------------------------------- */

typedef struct cblk {
    uint64_t addr;
    uint64_t size;
    uint64_t gc_base;   /* pool's search count when the block was cached */
    uint32_t prev, next; /* segment neighbours */
    uint32_t l, r, up;   /* links in the set the block is in */
    uint32_t stream;
    uint32_t es;         /* expandable range index + 1; 0 = ordinary segment */
    uint8_t pool;        /* CACHING_SMALL / CACHING_LARGE */
    uint8_t allocated;
    uint8_t mapped;
    uint8_t inset;       /* 0 none, 1 free set, 2 unmapped set, 3 on the spare list */
    uint32_t spare_;     /* padding: a block is one 64-byte cache line */
} cblk_t;

_Static_assert(sizeof(cblk_t) == 64, "a block is one cache line");

/* The block array and its spare slots: sim/blocktree.h's record heap, over
 * this record (64-byte aligned, so each block is one line). */
GM__BT_HEAP_OF(cblk_heap, cblk_t, next, NIL, 1)

typedef struct ctree {
    uint32_t root;
    uint32_t count;
    int by_addr; /* 0: (stream, size, addr); 1: (stream, addr) */
} ctree_t;

/* One stream's free mapped blocks of a pool: size classes (16 linear
 * classes of 512 B below 8 KiB, then 16 per power of two), each a set
 * ordered by (size, address), and a bitmap of the non-empty classes.
 * Classes partition sizes in order, so the set order is (size, address)
 * across them: the best fit is the lower bound in the request's class, or
 * the first block of the next non-empty class. */
#define CBIN_COUNT 832
#define CBIN_WORDS (CBIN_COUNT / 64)

typedef struct cbins {
    uint64_t map[CBIN_WORDS];
    ctree_t bin[CBIN_COUNT];
} cbins_t;

typedef struct cpool {
    cbins_t **st;      /* free mapped blocks by stream (NULL: none yet) */
    uint32_t nst;
    uint32_t nfree;    /* blocks in all of them */
    ctree_t unmapped;  /* unmapped ranges of expandable segments */
    uint64_t searches; /* get_free_block calls (the GC clock) */
} cpool_t;

typedef struct cexp {
    uint64_t base, size, page;
    uint64_t mapped; /* bytes mapped */
    uint32_t stream;
    uint8_t pool;
    uint8_t live;
} cexp_t;

typedef struct caching {
    gm_policy_t base;
    caching_cfg_t cfg;
    caching_cfg_t given; /* create's values (explicit ones override in prepare) */
    char *conf;          /* copies of the string parameters */
    char *divisions;
    char *pad;
    char *align;
    int settings_trace, start_recorded, pad_trace, align_trace;
    uint64_t device_memory; /* device_memory parameter */
    uint64_t allowed;       /* allowed_memory_maximum when a fraction is set */
    int set_fraction;
    int warm; /* started from a recorded layout */
    uint64_t differs; /* bit i: parameter i differs from its default */

    cblk_heap_t heap; /* the blocks; slot 0 is NIL */
    cpool_t pools[2];
    cexp_t *es;
    uint32_t nes, capes;

    gm__idmap_t live;    /* allocated block address → index */
    gm__idmap_t pre;     /* pre-existing allocation id → block index */
    uint64_t allocated;  /* bytes in allocated blocks */
    uint64_t total;      /* PyTorch's total_allocated_memory: segments + mapped pages */
    uint64_t device_bytes; /* what the device counts for them (granularity) */
    uint64_t nsegments;  /* ordinary segments */
} caching_t;

extern const gm_policy_ops_t gm__policy_caching;

#define CACHING(p) GM_POLICY_DOWNCAST(caching_t, p, gm__policy_caching)

/* ---- block slots --------------------------------------------------------------- */

/* Make sure n slots can be taken without allocating; -1 on ENOMEM. */
static inline int caching_reserve(caching_t *c, uint32_t n)
{
    return cblk_heap_reserve(&c->heap, n);
}

/* Take a slot (caching_reserve made sure one exists), zeroed. */
static inline uint32_t caching_new(caching_t *c)
{
    uint32_t i = cblk_heap_take(&c->heap);
    memset(&c->heap.b[i], 0, sizeof c->heap.b[i]);
    return i;
}

static inline void caching_delete(caching_t *c, uint32_t i)
{
    memset(&c->heap.b[i], 0, sizeof c->heap.b[i]);
    c->heap.b[i].inset = 3;
    cblk_heap_give(&c->heap, i);
}

/* ---- ordered sets (treaps with parent links) ------------------------------------ */

static inline uint32_t tree_prio(uint32_t i)
{
    uint32_t x = i * UINT32_C(0x9e3779b1);
    x ^= x >> 15;
    x *= UINT32_C(0x85ebca6b);
    x ^= x >> 13;
    return x;
}

/* a < b in t's order. */
static inline int tree_less(const ctree_t *t, const cblk_t *a, const cblk_t *b)
{
    if (a->stream != b->stream)
        return a->stream < b->stream;
    if (!t->by_addr && a->size != b->size)
        return a->size < b->size;
    return a->addr < b->addr;
}

static void tree_rotate_up(cblk_t *B, ctree_t *t, uint32_t x)
{
    uint32_t p = B[x].up, g = B[p].up;
    if (B[p].l == x) {
        B[p].l = B[x].r;
        if (B[x].r)
            B[B[x].r].up = p;
        B[x].r = p;
    } else {
        B[p].r = B[x].l;
        if (B[x].l)
            B[B[x].l].up = p;
        B[x].l = p;
    }
    B[p].up = x;
    B[x].up = g;
    if (g == NIL)
        t->root = x;
    else if (B[g].l == p)
        B[g].l = x;
    else
        B[g].r = x;
}

static void tree_insert(cblk_t *B, ctree_t *t, uint32_t x, uint8_t tag)
{
    B[x].l = B[x].r = NIL;
    B[x].inset = tag;
    uint32_t p = NIL, cur = t->root;
    int left = 0;
    while (cur != NIL) {
        p = cur;
        left = tree_less(t, &B[x], &B[cur]);
        cur = left ? B[cur].l : B[cur].r;
    }
    B[x].up = p;
    if (p == NIL)
        t->root = x;
    else if (left)
        B[p].l = x;
    else
        B[p].r = x;
    uint32_t px = tree_prio(x);
    while (B[x].up != NIL && tree_prio(B[x].up) < px)
        tree_rotate_up(B, t, x);
    t->count++;
}

static void tree_erase(cblk_t *B, ctree_t *t, uint32_t x)
{
    while (B[x].l != NIL || B[x].r != NIL) {
        uint32_t c;
        if (B[x].l == NIL)
            c = B[x].r;
        else if (B[x].r == NIL)
            c = B[x].l;
        else
            c = tree_prio(B[x].l) > tree_prio(B[x].r) ? B[x].l : B[x].r;
        tree_rotate_up(B, t, c);
    }
    uint32_t p = B[x].up;
    if (p == NIL)
        t->root = NIL;
    else if (B[p].l == x)
        B[p].l = NIL;
    else
        B[p].r = NIL;
    B[x].up = NIL;
    B[x].inset = 0;
    t->count--;
}

static uint32_t tree_first(const cblk_t *B, const ctree_t *t)
{
    uint32_t x = t->root;
    if (x == NIL)
        return NIL;
    while (B[x].l != NIL)
        x = B[x].l;
    return x;
}

static uint32_t tree_last(const cblk_t *B, const ctree_t *t)
{
    uint32_t x = t->root;
    if (x == NIL)
        return NIL;
    while (B[x].r != NIL)
        x = B[x].r;
    return x;
}

static uint32_t tree_next(const cblk_t *B, uint32_t x)
{
    if (B[x].r != NIL) {
        x = B[x].r;
        while (B[x].l != NIL)
            x = B[x].l;
        return x;
    }
    uint32_t p = B[x].up;
    while (p != NIL && B[p].r == x) {
        x = p;
        p = B[p].up;
    }
    return p;
}

static uint32_t tree_prev(const cblk_t *B, uint32_t x)
{
    if (B[x].l != NIL) {
        x = B[x].l;
        while (B[x].r != NIL)
            x = B[x].r;
        return x;
    }
    uint32_t p = B[x].up;
    while (p != NIL && B[p].l == x) {
        x = p;
        p = B[p].up;
    }
    return p;
}

/* First block ≥ (stream, size, addr) in t's order, or NIL. */
static uint32_t tree_lower_bound(const cblk_t *B, const ctree_t *t, uint32_t stream,
                                 uint64_t size, uint64_t addr)
{
    cblk_t key;
    key.stream = stream;
    key.size = size;
    key.addr = addr;
    uint32_t x = t->root, best = NIL;
    while (x != NIL) {
        if (tree_less(t, &B[x], &key)) {
            x = B[x].r;
        } else {
            best = x;
            x = B[x].l;
        }
    }
    return best;
}

/* ---- free sets: size classes of treaps ------------------------------------------ */

static inline unsigned bin_of(uint64_t size)
{
    if (size < 8192)
        return (unsigned)(size >> 9);
    unsigned e = gm__log2_floor(size);
    return 16u + (e - 13u) * 16u + (unsigned)((size >> (e - 4u)) & 15u);
}

/* First non-empty class ≥ b, or CBIN_COUNT. */
static inline unsigned bins_next(const cbins_t *bs, unsigned b)
{
    if (b >= CBIN_COUNT)
        return CBIN_COUNT;
    unsigned w = b >> 6;
    uint64_t m = bs->map[w] & (~UINT64_C(0) << (b & 63));
    for (;;) {
        if (m != 0)
            return (w << 6) | (unsigned)__builtin_ctzll(m);
        if (++w == CBIN_WORDS)
            return CBIN_COUNT;
        m = bs->map[w];
    }
}

/* Last non-empty class ≤ b (b < CBIN_COUNT), or CBIN_COUNT. */
static inline unsigned bins_prev(const cbins_t *bs, unsigned b)
{
    unsigned w = b >> 6;
    uint64_t m = bs->map[w] & (~UINT64_C(0) >> (63 - (b & 63)));
    for (;;) {
        if (m != 0)
            return (w << 6) | (63u - (unsigned)__builtin_clzll(m));
        if (w-- == 0)
            return CBIN_COUNT;
        m = bs->map[w];
    }
}

static inline cbins_t *pool_bins(const cpool_t *pl, uint32_t stream)
{
    return stream < pl->nst ? pl->st[stream] : NULL;
}

/* Make sure the stream has its classes; -1 on ENOMEM. */
static int pool_bins_make(cpool_t *pl, uint32_t stream)
{
    if (stream < pl->nst && pl->st[stream] != NULL)
        return 0;
    if (stream >= pl->nst) {
        uint32_t n = pl->nst ? pl->nst : 4;
        while (n <= stream)
            n *= 2;
        cbins_t **st = realloc(pl->st, n * sizeof *st);
        if (st == NULL)
            return -1;
        memset(st + pl->nst, 0, (n - pl->nst) * sizeof *st);
        pl->st = st;
        pl->nst = n;
    }
    pl->st[stream] = calloc(1, sizeof *pl->st[stream]);
    return pl->st[stream] != NULL ? 0 : -1;
}

static inline void set_insert(cblk_t *B, cpool_t *pl, uint32_t x)
{
    cbins_t *bs = pl->st[B[x].stream];
    unsigned b = bin_of(B[x].size);
    tree_insert(B, &bs->bin[b], x, 1);
    bs->map[b >> 6] |= UINT64_C(1) << (b & 63);
    pl->nfree++;
}

static inline void set_erase(cblk_t *B, cpool_t *pl, uint32_t x)
{
    cbins_t *bs = pl->st[B[x].stream];
    unsigned b = bin_of(B[x].size);
    tree_erase(B, &bs->bin[b], x);
    if (bs->bin[b].root == NIL)
        bs->map[b >> 6] &= ~(UINT64_C(1) << (b & 63));
    pl->nfree--;
}

/* First block of the stream with size ≥ size (in (size, address) order). */
static inline uint32_t set_lower_bound(const cblk_t *B, const cpool_t *pl, uint32_t stream,
                                       uint64_t size)
{
    const cbins_t *bs = pool_bins(pl, stream);
    if (bs == NULL)
        return NIL;
    unsigned b = bin_of(size);
    if (bs->map[b >> 6] >> (b & 63) & 1) {
        uint32_t x = tree_lower_bound(B, &bs->bin[b], stream, size, 0);
        if (x != NIL)
            return x;
    }
    b = bins_next(bs, b + 1);
    return b < CBIN_COUNT ? tree_first(B, &bs->bin[b]) : NIL;
}

/* The block after / before x among its stream's free blocks, or NIL. */
static inline uint32_t set_next(const cblk_t *B, const cpool_t *pl, uint32_t x)
{
    uint32_t y = tree_next(B, x);
    if (y != NIL)
        return y;
    const cbins_t *bs = pl->st[B[x].stream];
    unsigned b = bins_next(bs, bin_of(B[x].size) + 1);
    return b < CBIN_COUNT ? tree_first(B, &bs->bin[b]) : NIL;
}

static inline uint32_t set_prev(const cblk_t *B, const cpool_t *pl, uint32_t x)
{
    uint32_t y = tree_prev(B, x);
    if (y != NIL)
        return y;
    const cbins_t *bs = pl->st[B[x].stream];
    unsigned b = bin_of(B[x].size);
    b = b == 0 ? CBIN_COUNT : bins_prev(bs, b - 1);
    return b < CBIN_COUNT ? tree_last(B, &bs->bin[b]) : NIL;
}

/* The stream's largest free block, or NIL. */
static inline uint32_t set_last(const cblk_t *B, const cpool_t *pl, uint32_t stream)
{
    const cbins_t *bs = pool_bins(pl, stream);
    if (bs == NULL)
        return NIL;
    unsigned b = bins_prev(bs, CBIN_COUNT - 1);
    return b < CBIN_COUNT ? tree_last(B, &bs->bin[b]) : NIL;
}

/* Every free block of the pool, in (stream, size, address) order, into a
 * malloc'd array (*n of them); NULL on ENOMEM or when there is none. */
static uint32_t *set_collect(const cblk_t *B, const cpool_t *pl, uint32_t *n)
{
    *n = 0;
    if (pl->nfree == 0)
        return NULL;
    uint32_t *out = malloc(pl->nfree * sizeof *out);
    if (out == NULL)
        return NULL;
    for (uint32_t st = 0; st < pl->nst; st++) {
        if (pl->st[st] == NULL)
            continue;
        for (uint32_t x = set_lower_bound(B, pl, st, 0); x != NIL && *n < pl->nfree;
             x = set_next(B, pl, x))
            out[(*n)++] = x;
    }
    return out;
}

/* ---- configuration -------------------------------------------------------------- */

static void cfg_default(caching_cfg_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->max_split = CACHING_UNLIMITED;
    cfg->max_nsr = CACHING_LARGE_BUFFER;
}

/* The PYTORCH_CUDA_ALLOC_CONF lexer: tokens split at , : [ ] (each of those
 * a token itself), spaces dropped. */
typedef struct conf_lex {
    char tok[64][48];
    size_t n;
} conf_lex_t;

static int conf_lex(const char *text, conf_lex_t *lx, const char *what, gm_error_t *err)
{
    lx->n = 0;
    char buf[48];
    size_t bl = 0;
    for (const char *p = text;; p++) {
        char ch = *p;
        int sep = ch == ',' || ch == ':' || ch == '[' || ch == ']' || ch == '\0';
        if (sep && bl > 0) {
            if (lx->n == 64)
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': too many items", what, text);
            buf[bl] = '\0';
            memcpy(lx->tok[lx->n++], buf, bl + 1);
            bl = 0;
        }
        if (ch == '\0')
            break;
        if (sep) {
            if (lx->n == 64)
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': too many items", what, text);
            lx->tok[lx->n][0] = ch;
            lx->tok[lx->n][1] = '\0';
            lx->n++;
        } else if (ch != ' ') {
            if (bl + 1 >= sizeof buf)
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': item too long at byte %zu",
                                    what, text, (size_t)(p - text));
            buf[bl++] = ch;
        }
    }
    return 0;
}

static int conf_uint(const char *t, uint64_t *out)
{
    if (!isdigit((unsigned char)t[0]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(t, &end, 10);
    if (errno || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int conf_expect(const conf_lex_t *lx, size_t i, char c)
{
    return i < lx->n && lx->tok[i][0] == c && lx->tok[i][1] == '\0';
}

/*
 * roundup_power2_divisions' value at token i: "N" (every interval) or
 * "[K:N,…,>:N]" with K an interval start in MiB (a power of two): the first
 * entry also fills every interval below it, ">" fills from the last named
 * interval on (as PyTorch does, that interval included).  *i is left on the
 * value's last token.
 */
static int conf_divisions(const conf_lex_t *lx, size_t *i, uint32_t div[CACHING_INTERVALS],
                          const char *what, const char *text, gm_error_t *err)
{
    size_t k = *i;
    uint64_t v;
    if (k >= lx->n)
        return gm_error_set(err, GM_EINVAL, "caching: %s '%s': roundup_power2_divisions needs "
                            "a value", what, text);
    if (!conf_expect(lx, k, '[')) {
        if (conf_uint(lx->tok[k], &v) || (v != 0 && !gm__is_pow2(v)) || v > GM_TORCH_MAX_DIVISIONS)
            return gm_error_set(err, GM_EINVAL, "caching: %s '%s': divisions '%s' must be a "
                                "power of two", what, text, lx->tok[k]);
        for (size_t j = 0; j < CACHING_INTERVALS; j++)
            div[j] = (uint32_t)v;
        *i = k;
        return 0;
    }
    int first = 1;
    size_t last = 0;
    for (k++; k < lx->n && !conf_expect(lx, k, ']'); k++) {
        const char *key = lx->tok[k];
        if (!conf_expect(lx, k + 1, ':') || k + 2 >= lx->n)
            return gm_error_set(err, GM_EINVAL, "caching: %s '%s': expected 'interval:divisions' "
                                "at '%s'", what, text, key);
        k += 2;
        if (conf_uint(lx->tok[k], &v) || (v != 0 && !gm__is_pow2(v)) || v > GM_TORCH_MAX_DIVISIONS)
            return gm_error_set(err, GM_EINVAL, "caching: %s '%s': divisions '%s' must be 0 or a "
                                "power of two", what, text, lx->tok[k]);
        if (strcmp(key, ">") == 0) {
            for (size_t j = last; j < CACHING_INTERVALS; j++)
                div[j] = (uint32_t)v;
        } else {
            uint64_t mb;
            if (conf_uint(key, &mb) || !gm__is_pow2(mb))
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': interval '%s' must be a "
                                    "power of two (MiB)", what, text, key);
            size_t idx = gm__log2_floor(mb);
            if (idx > CACHING_INTERVALS - 1)
                idx = CACHING_INTERVALS - 1;
            if (first) {
                for (size_t j = 0; j < idx; j++)
                    div[j] = (uint32_t)v;
                first = 0;
            }
            div[idx] = (uint32_t)v;
            last = idx;
        }
        if (k + 1 < lx->n && !conf_expect(lx, k + 1, ']')) {
            if (!conf_expect(lx, k + 1, ','))
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': expected ',' after '%s'",
                                    what, text, lx->tok[k]);
            k++;
        }
    }
    if (k >= lx->n)
        return gm_error_set(err, GM_EINVAL, "caching: %s '%s': missing ']'", what, text);
    *i = k;
    return 0;
}

static int conf_bool(const conf_lex_t *lx, size_t k, int *out, const char *key, const char *text,
                     gm_error_t *err)
{
    if (k < lx->n && strcmp(lx->tok[k], "True") == 0)
        *out = 1;
    else if (k < lx->n && strcmp(lx->tok[k], "False") == 0)
        *out = 0;
    else
        return gm_error_set(err, GM_EINVAL, "caching: conf '%s': %s takes True or False", text,
                            key);
    return 0;
}

/* Apply a PYTORCH_CUDA_ALLOC_CONF string over cfg.  GM_EINVAL naming the
 * string and the offending item; cfg may be partly changed then. */
/* The keys conf_apply takes, for "did you mean" (base/text.h): keep in
 * step with its chain of comparisons. */
static const char *const conf_keys[] = {
    "max_split_size_mb", "max_non_split_rounding_mb", "garbage_collection_threshold",
    "roundup_power2_divisions", "expandable_segments", "base_addr_aligned_kb", "backend",
    "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
    "pinned_use_background_threads", "graph_capture_record_stream_reuse",
    "pinned_num_register_threads", "pinned_reserve_segment_size_mb",
};

/* "caching: conf 'TEXT': unknown option 'KEY'", with the nearest key. */
static int conf_unknown(const char *text, const char *key, gm_error_t *err)
{
    gm__suggest_t s;
    gm__suggest_init(&s, key);
    for (size_t i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++)
        gm__suggest_add(&s, conf_keys[i]);
    char msg[GM_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "caching: conf '%s': unknown option '%s'", text, key);
    return gm_error_set(err, GM_EINVAL, "%s", gm__suggest_append(&s, msg, sizeof msg));
}

static int conf_apply(caching_cfg_t *cfg, const char *text, gm_error_t *err)
{
    conf_lex_t lx;
    int rc = conf_lex(text, &lx, "conf", err);
    if (rc)
        return rc;
    for (size_t i = 0; i < lx.n; i++) {
        const char *key = lx.tok[i];
        if (!conf_expect(&lx, i + 1, ':'))
            return gm_error_set(err, GM_EINVAL, "caching: conf '%s': expected ':' after '%s'",
                                text, key);
        i += 2;
        const char *val = i < lx.n ? lx.tok[i] : "";
        uint64_t v;
        if (strcmp(key, "max_split_size_mb") == 0 ||
            strcmp(key, "max_non_split_rounding_mb") == 0) {
            if (conf_uint(val, &v))
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': %s takes a number of "
                                    "MiB, not '%s'", text, key, val);
            if (v < CACHING_LARGE_BUFFER / MiB)
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': %s must be >= %" PRIu64,
                                    text, key, CACHING_LARGE_BUFFER / MiB);
            if (v > UINT64_MAX / MiB)
                v = UINT64_MAX / MiB;
            if (key[4] == 's')
                cfg->max_split = v * MiB;
            else
                cfg->max_nsr = v * MiB;
        } else if (strcmp(key, "garbage_collection_threshold") == 0) {
            char *end;
            errno = 0;
            double d = strtod(val, &end);
            if (errno || end == val || *end != '\0' || !(d > 0.0 && d < 1.0))
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': "
                                    "garbage_collection_threshold '%s' must be in (0, 1)", text,
                                    val);
            cfg->gc = d;
        } else if (strcmp(key, "roundup_power2_divisions") == 0) {
            rc = conf_divisions(&lx, &i, cfg->div, "conf", text, err);
            if (rc)
                return rc;
        } else if (strcmp(key, "expandable_segments") == 0) {
            rc = conf_bool(&lx, i, &cfg->expandable, key, text, err);
            if (rc)
                return rc;
        } else if (strcmp(key, "base_addr_aligned_kb") == 0) {
            if (conf_uint(val, &v) || v > 16)
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': base_addr_aligned_kb "
                                    "takes 0 to 16, not '%s'", text, val);
            cfg->align = v * KiB;
        } else if (strcmp(key, "backend") == 0) {
            if (strcmp(val, "native") != 0)
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': backend '%s' is not "
                                    "this policy (native only; cudaMallocAsync is the 'async' "
                                    "policy)", text, val);
        } else if (strcmp(key, "release_lock_on_cudamalloc") == 0 ||
                   strcmp(key, "pinned_use_cuda_host_register") == 0 ||
                   strcmp(key, "pinned_use_background_threads") == 0 ||
                   strcmp(key, "graph_capture_record_stream_reuse") == 0) {
            int ignored;
            rc = conf_bool(&lx, i, &ignored, key, text, err);
            if (rc)
                return rc;
        } else if (strcmp(key, "pinned_num_register_threads") == 0 ||
                   strcmp(key, "pinned_reserve_segment_size_mb") == 0) {
            if (conf_uint(val, &v))
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': %s takes a number, not "
                                    "'%s'", text, key, val);
        } else {
            return conf_unknown(text, key, err);
        }
        if (i + 1 < lx.n) {
            if (!conf_expect(&lx, i + 1, ','))
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': expected ',' after '%s'",
                                    text, lx.tok[i]);
            i++;
            if (i + 1 >= lx.n)
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': trailing ','", text);
        }
    }
    return 0;
}

/* The roundup_power2_divisions parameter: "" (off), "N" or "[…]". */
static int divisions_apply(uint32_t div[CACHING_INTERVALS], const char *text, gm_error_t *err)
{
    if (text == NULL || text[0] == '\0') {
        memset(div, 0, CACHING_INTERVALS * sizeof div[0]);
        return 0;
    }
    conf_lex_t lx;
    int rc = conf_lex(text, &lx, "roundup_power2_divisions", err);
    if (rc)
        return rc;
    size_t i = 0;
    uint32_t d[CACHING_INTERVALS] = {0};
    rc = conf_divisions(&lx, &i, d, "roundup_power2_divisions", text, err);
    if (rc)
        return rc;
    if (i + 1 != lx.n)
        return gm_error_set(err, GM_EINVAL, "caching: roundup_power2_divisions '%s': unexpected "
                            "'%s'", text, lx.tok[i + 1]);
    memcpy(div, d, sizeof d);
    return 0;
}

/* pad: "trace" (keep *pad) or a byte count. */
static int pad_parse(const char *text, uint64_t *pad, int *is_trace, gm_error_t *err)
{
    *is_trace = text == NULL || strcmp(text, "trace") == 0;
    if (*is_trace)
        return 0;
    if (gm_parse_size(text, pad, NULL) != 0 || *pad > MiB)
        return gm_error_set(err, GM_EINVAL, "caching: pad '%s' must be 'trace' or a size up to "
                            "1 MiB", text);
    return 0;
}

/* base_addr_align: "trace" (keep *align) or a power of two up to 2 MiB (0 = off). */
static int align_parse(const char *text, uint64_t *align, int *is_trace, gm_error_t *err)
{
    *is_trace = text == NULL || strcmp(text, "trace") == 0;
    if (*is_trace)
        return 0;
    if (gm_parse_size(text, align, NULL) != 0 || (*align != 0 && !gm__is_pow2(*align)) ||
        *align > CACHING_ROUND_LARGE)
        return gm_error_set(err, GM_EINVAL, "caching: base_addr_align '%s' must be 'trace', 0 "
                            "or a power of two up to 2MiB", text);
    return 0;
}

/* ---- sizes ------------------------------------------------------------------------ */

static inline uint64_t caching_round(const caching_t *c, uint64_t req)
{
    return gm__torch_round(req + c->cfg.pad, c->cfg.div);
}

static uint64_t caching_memory(const caching_t *c)
{
    if (c->device_memory)
        return c->device_memory;
    if (c->base.dev->cfg.capacity)
        return c->base.dev->cfg.capacity;
    return CACHING_DEFAULT_MEMORY;
}

static void caching_set_fraction(caching_t *c)
{
    c->set_fraction = c->cfg.fraction > 0.0;
    c->allowed = c->set_fraction ? (uint64_t)(c->cfg.fraction * (double)caching_memory(c)) : 0;
}

static inline int caching_gc_on(const caching_t *c)
{
    return c->set_fraction && c->cfg.gc > 0.0;
}

/* ---- block operations -------------------------------------------------------------- */

static inline int blk_split(const cblk_t *b) { return b->prev != NIL || b->next != NIL; }

/* Cache a free mapped block in its pool (PyTorch's insert_into_blocks). */
static inline void caching_cache(caching_t *c, uint32_t x)
{
    cpool_t *pl = &c->pools[c->heap.b[x].pool];
    c->heap.b[x].gc_base = pl->searches;
    set_insert(c->heap.b, pl, x);
}

static inline void caching_uncache(caching_t *c, uint32_t x)
{
    cblk_t *b = &c->heap.b[x];
    cpool_t *pl = &c->pools[b->pool];
    if (b->inset == 2)
        tree_erase(c->heap.b, &pl->unmapped, x);
    else
        set_erase(c->heap.b, pl, x);
}

/* Merge src (a neighbour of dst, which is in no set) into dst when src is
 * free and of the same mapping state; returns the bytes taken. */
static uint64_t caching_merge(caching_t *c, uint32_t dst, uint32_t src)
{
    cblk_t *B = c->heap.b;
    if (src == NIL || B[src].allocated || B[dst].mapped != B[src].mapped)
        return 0;
    caching_uncache(c, src);
    if (B[dst].prev == src) {
        B[dst].addr = B[src].addr;
        B[dst].prev = B[src].prev;
        if (B[dst].prev)
            B[B[dst].prev].next = dst;
    } else {
        B[dst].next = B[src].next;
        if (B[dst].next)
            B[B[dst].next].prev = dst;
    }
    uint64_t sz = B[src].size;
    B[dst].size += sz;
    caching_delete(c, src);
    return sz;
}

/* A block becomes free: merge, then cache it. */
static void caching_free_block(caching_t *c, uint32_t x)
{
    c->heap.b[x].allocated = 0;
    caching_merge(c, x, c->heap.b[x].prev);
    caching_merge(c, x, c->heap.b[x].next);
    caching_cache(c, x);
}

/* Release an ordinary unsplit cached block (a whole segment). */
static void caching_release_block(caching_t *c, uint32_t x)
{
    cblk_t *b = &c->heap.b[x];
    uint64_t got = gm_device_round(c->base.dev, b->size);
    caching_uncache(c, x);
    gm_device_free(c->base.dev, b->addr, got);
    c->total -= b->size;
    c->device_bytes -= got;
    c->nsegments--;
    caching_delete(c, x);
}

static inline uint64_t exp_size(const cblk_t *B, uint32_t x)
{
    uint32_t n = B[x].next;
    return B[x].size + (n != NIL && !B[n].mapped ? B[n].size : 0);
}

/* get_free_block: the best fit on the request's stream, removed from the
 * set; NIL when none may be used. */
static uint32_t caching_find(caching_t *c, cpool_t *pl, uint32_t stream, uint64_t size)
{
    cblk_t *B = c->heap.b;
    if (caching_gc_on(c))
        pl->searches++;
    uint32_t it = set_lower_bound(B, pl, stream, size);
    if (it == NIL)
        return NIL;
    if (B[it].es) {
        if (c->cfg.expandable) {
            uint32_t nx = set_next(B, pl, it);
            while (B[it].es && nx != NIL && exp_size(B, nx) < exp_size(B, it)) {
                it = nx;
                nx = set_next(B, pl, nx);
            }
        } else {
            do
                it = set_next(B, pl, it);
            while (it != NIL && B[it].es);
            if (it == NIL || B[it].stream != stream)
                return NIL;
        }
    }
    uint64_t ms = c->cfg.max_split;
    if (size < ms && B[it].size >= ms)
        return NIL;
    if (size >= ms && B[it].size >= size + c->cfg.max_nsr)
        return NIL;
    set_erase(B, pl, it);
    return it;
}

/* ---- expandable segments ------------------------------------------------------------ */

static inline cexp_t *blk_es(caching_t *c, const cblk_t *b) { return &c->es[b->es - 1]; }

/* A new virtual range for (stream, pool) as one unmapped block; NIL on
 * failure (host memory or address space). */
static uint32_t caching_new_range(caching_t *c, uint32_t stream, int pool, uint64_t min_size)
{
    uint64_t page = gm__torch_page_size(pool == CACHING_SMALL);
    uint64_t mem = caching_memory(c);
    uint64_t want = mem + mem / 8;
    if (want < min_size)
        want = min_size;
    uint64_t size = (want + page - 1) / page * page;
    uint32_t k;
    for (k = 0; k < c->nes && c->es[k].live; k++)
        ;
    if (k == c->nes) {
        if (c->nes == c->capes) {
            uint32_t nc = c->capes ? c->capes * 2 : 8;
            cexp_t *ne = realloc(c->es, nc * sizeof *ne);
            if (ne == NULL)
                return NIL;
            c->es = ne;
            c->capes = nc;
        }
        c->nes++;
    }
    uint64_t base;
    if (gm_device_reserve_va(c->base.dev, size, page, &base) != 0)
        return NIL;
    c->es[k] = (cexp_t){base, size, page, 0, stream, (uint8_t)pool, 1};
    uint32_t x = caching_new(c);
    cblk_t *b = &c->heap.b[x];
    b->addr = base;
    b->size = size;
    b->stream = stream;
    b->pool = (uint8_t)pool;
    b->es = k + 1;
    b->mapped = 0;
    tree_insert(c->heap.b, &c->pools[pool].unmapped, x, 2);
    return x;
}

static inline int blk_allocatable(const cblk_t *B, uint32_t x)
{
    return x != NIL && !B[x].allocated;
}

/* find_expandable_block: the lowest-addressed place on the stream where a
 * free block and unmapped space after it hold size bytes. */
static uint32_t caching_find_expandable(caching_t *c, cpool_t *pl, uint32_t stream, int pool,
                                        uint64_t size)
{
    cblk_t *B = c->heap.b;
    for (uint32_t it = tree_lower_bound(B, &pl->unmapped, stream, 0, 0);
         it != NIL && B[it].stream == stream; it = tree_next(B, it)) {
        uint32_t cand = it;
        if (blk_allocatable(B, B[cand].prev))
            cand = B[cand].prev;
        uint64_t bytes = 0;
        for (uint32_t w = cand; bytes < size && blk_allocatable(B, w); w = B[w].next)
            bytes += B[w].size;
        if (bytes >= size)
            return cand;
    }
    return caching_new_range(c, stream, pool, size);
}

/* map_block: back the first `size` bytes of unmapped block x with pages
 * (one device malloc), merging them with free mapped neighbours.  Returns
 * the block now holding them (cached), or NIL if the device refused. */
static uint32_t caching_map(caching_t *c, uint32_t x, uint64_t size)
{
    cblk_t *B = c->heap.b;
    cexp_t *es = blk_es(c, &B[x]);
    uint64_t off = B[x].addr - es->base;
    uint64_t begin = off / es->page;
    uint64_t end = (off + size + es->page - 1) / es->page;
    uint64_t bytes = (end - begin) * es->page;
    if (bytes == 0 || gm_device_map(c->base.dev, B[x].addr, bytes) != 0)
        return NIL;
    cpool_t *pl = &c->pools[B[x].pool];
    tree_erase(B, &pl->unmapped, x);
    B[x].mapped = 1;
    if (bytes < B[x].size) {
        uint32_t rest = caching_new(c);
        B = c->heap.b;
        B[rest] = B[x];
        B[rest].addr = B[x].addr + bytes;
        B[rest].size = B[x].size - bytes;
        B[rest].mapped = 0;
        B[rest].prev = x;
        B[rest].next = B[x].next;
        if (B[x].next)
            B[B[x].next].prev = rest;
        B[x].next = rest;
        B[x].size = bytes;
        tree_insert(B, &pl->unmapped, rest, 2);
    }
    caching_merge(c, x, B[x].prev);
    caching_merge(c, x, c->heap.b[x].next);
    caching_cache(c, x);
    es->mapped += bytes;
    c->total += bytes;
    c->device_bytes += bytes;
    return x;
}

/* try_allocate_expandable_block: NIL when a map was refused (pages mapped
 * before the refusal stay mapped, as in PyTorch). */
static uint32_t caching_alloc_expandable(caching_t *c, cpool_t *pl, uint32_t stream, int pool,
                                         uint64_t size)
{
    uint32_t cand = caching_find_expandable(c, pl, stream, pool, size);
    if (cand == NIL)
        return NIL;
    if (!c->heap.b[cand].mapped) {
        uint64_t m = c->heap.b[cand].size < size ? c->heap.b[cand].size : size;
        cand = caching_map(c, cand, m);
        if (cand == NIL)
            return NIL;
    }
    while (c->heap.b[cand].size < size) {
        uint64_t remaining = size - c->heap.b[cand].size;
        uint32_t nx = c->heap.b[cand].next;
        uint64_t m = c->heap.b[nx].size < remaining ? c->heap.b[nx].size : remaining;
        /* mapping nx merges the free block before it (cand) into it */
        cand = caching_map(c, nx, m);
        if (cand == NIL)
            return NIL;
    }
    set_erase(c->heap.b, pl, cand);
    return cand;
}

/* unmap_block: unmap the whole pages inside free mapped block x (one device
 * free), leaving free mapped slivers before/after.  Returns the unmapped
 * block, or NIL when x holds no whole page (nothing changes). */
static uint32_t caching_unmap(caching_t *c, uint32_t x)
{
    cblk_t *B = c->heap.b;
    cexp_t *es = blk_es(c, &B[x]);
    uint64_t lo = B[x].addr - es->base, hi = lo + B[x].size;
    uint64_t begin = (lo + es->page - 1) / es->page, end = hi / es->page;
    if (begin >= end)
        return NIL;
    if (caching_reserve(c, 2) != 0)
        return NIL; /* no host memory: leave it cached */
    B = c->heap.b;
    cpool_t *pl = &c->pools[B[x].pool];
    set_erase(B, pl, x);
    uint64_t ustart = es->base + begin * es->page, ubytes = (end - begin) * es->page;
    uint64_t before = ustart - B[x].addr;
    uint64_t after = B[x].size - before - ubytes;
    if (before > 0) {
        uint32_t y = caching_new(c);
        B = c->heap.b;
        B[y] = B[x];
        B[y].size = before;
        B[y].prev = B[x].prev;
        B[y].next = x;
        if (B[x].prev)
            B[B[x].prev].next = y;
        B[x].prev = y;
        caching_cache(c, y);
    }
    if (after > 0) {
        uint32_t y = caching_new(c);
        B = c->heap.b;
        B[y] = B[x];
        B[y].addr = ustart + ubytes;
        B[y].size = after;
        B[y].prev = x;
        B[y].next = B[x].next;
        if (B[x].next)
            B[B[x].next].prev = y;
        B[x].next = y;
        caching_cache(c, y);
    }
    B[x].addr = ustart;
    B[x].size = ubytes;
    B[x].mapped = 0;
    caching_merge(c, x, B[x].prev);
    caching_merge(c, x, c->heap.b[x].next);
    tree_insert(c->heap.b, &pl->unmapped, x, 2);
    gm_device_free(c->base.dev, ustart, ubytes);
    es->mapped -= ubytes;
    c->total -= ubytes;
    c->device_bytes -= ubytes;
    return x;
}

/* release_expandable_segment: a range with nothing mapped goes away. */
static void caching_drop_range(caching_t *c, uint32_t x)
{
    cexp_t *es = blk_es(c, &c->heap.b[x]);
    caching_uncache(c, x);
    es->live = 0;
    caching_delete(c, x);
}

/* ---- releasing cached memory -------------------------------------------------------- */

/* release_blocks: every whole-segment cached block of the pool goes back;
 * every free block of an expandable range has its whole pages unmapped. */
static void caching_release_pool(caching_t *c, cpool_t *pl)
{
    uint32_t n;
    uint32_t *todo = set_collect(c->heap.b, pl, &n);
    if (todo == NULL)
        return; /* nothing cached (or no host memory: it stays cached) */
    /* gather the expandable blocks at the front while releasing the
     * others: unmapping may reuse the slots that releasing frees */
    uint32_t nexp = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t x = todo[k];
        if (c->heap.b[x].es)
            todo[nexp++] = x;
        else if (!blk_split(&c->heap.b[x]))
            caching_release_block(c, x);
    }
    for (uint32_t k = 0; k < nexp; k++) {
        uint32_t u = caching_unmap(c, todo[k]);
        if (u != NIL && !blk_split(&c->heap.b[u]))
            caching_drop_range(c, u);
    }
    free(todo);
}

/* release_cached_blocks (empty_cache): large pool, then small. */
static void caching_release_cached(caching_t *c)
{
    caching_release_pool(c, &c->pools[CACHING_LARGE]);
    caching_release_pool(c, &c->pools[CACHING_SMALL]);
}

/* release_available_cached_blocks: with max_split_size set, free oversize
 * cached blocks of the stream — the smallest one ≥ max(size,
 * max_split_size), else the largest ones down until that much is freed.
 * Only whole ordinary segments can go back (blocks ≥ max_split_size are
 * never split by the rules; a recorded layout could hold others). */
static int caching_release_available(caching_t *c, cpool_t *pl, uint32_t stream, uint64_t size)
{
    uint64_t ms = c->cfg.max_split;
    if (ms == CACHING_UNLIMITED)
        return 0;
    cblk_t *B = c->heap.b;
    uint64_t key = size < ms ? ms : size;
    uint32_t it = set_lower_bound(B, pl, stream, key);
    if (it == NIL) {
        it = set_last(B, pl, stream);
        uint64_t released = 0;
        while (it != NIL && released < key && c->heap.b[it].size >= ms) {
            uint32_t cur = it;
            it = set_prev(c->heap.b, pl, it);
            if (c->heap.b[cur].es || blk_split(&c->heap.b[cur]))
                continue;
            released += c->heap.b[cur].size;
            caching_release_block(c, cur);
        }
        return released >= key;
    }
    if (B[it].es || blk_split(&B[it]))
        return 0;
    caching_release_block(c, it);
    return 1;
}

/* garbage_collect_cached_blocks. */
static void caching_gc(caching_t *c)
{
    uint64_t thr = (uint64_t)(c->cfg.gc * (double)c->allowed);
    if (c->total <= thr)
        return;
    uint64_t target = c->total - thr, reclaimed = 0;
    cpool_t *pl = &c->pools[CACHING_LARGE];
    uint32_t n;
    uint32_t *cand = set_collect(c->heap.b, pl, &n);
    if (cand == NULL)
        return;
    uint64_t total_age = 0, count = 0;
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++) {
        const cblk_t *b = &c->heap.b[cand[k]];
        if (!blk_split(b) && !b->es) {
            total_age += pl->searches - b->gc_base;
            count++;
            cand[m++] = cand[k];
        }
    }
    int freed = 1;
    while (reclaimed < target && freed && count > 0) {
        double age_thr = (double)total_age / (double)count;
        freed = 0;
        for (uint32_t k = 0; k < m; k++) {
            if (cand[k] == NIL)
                continue;
            cblk_t *b = &c->heap.b[cand[k]];
            uint64_t age = pl->searches - b->gc_base;
            if ((double)age >= age_thr) {
                freed = 1;
                reclaimed += b->size;
                total_age -= age;
                count--;
                caching_release_block(c, cand[k]);
                cand[k] = NIL;
            }
        }
    }
    free(cand);
}

/* alloc_block: a new segment (or mapped pages) for the request; NIL when
 * refused. */
static uint32_t caching_alloc_block(caching_t *c, cpool_t *pl, uint32_t stream, int pool,
                                    uint64_t size, uint64_t seg)
{
    if (c->set_fraction && (c->total > c->allowed || seg > c->allowed - c->total))
        return NIL;
    if (c->cfg.expandable)
        return caching_alloc_expandable(c, pl, stream, pool, size);
    uint64_t addr, got;
    if (gm_device_malloc(c->base.dev, seg, 0, &addr, &got) != 0)
        return NIL;
    uint32_t x = caching_new(c);
    cblk_t *b = &c->heap.b[x];
    b->addr = addr;
    b->size = seg;
    b->stream = stream;
    b->pool = (uint8_t)pool;
    b->mapped = 1;
    c->total += seg;
    c->device_bytes += got;
    c->nsegments++;
    return x;
}

/* ---- ops ------------------------------------------------------------------------------ */

static void caching_take(caching_t *c, uint32_t x, gm_block_t *out)
{
    c->heap.b[x].allocated = 1;
    c->allocated += c->heap.b[x].size;
    out->addr = c->heap.b[x].addr;
    out->size = c->heap.b[x].size;
}

static int caching_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    caching_t *c = CACHING(p);
    if (c == NULL || req->size == 0 || req->size > GM_SIZE_LIMIT)
        return GM_EINVAL;
    if ((req->flags & GM_EVENT_PREEXISTING) && gm__idmap_count(&c->pre) > 0) {
        uint64_t x;
        if (gm__idmap_remove(&c->pre, req->id, &x)) {
            if (c->heap.b[x].size < req->size) {
                /* the layout disagrees with the trace: free the recorded
                 * block and serve the request by the rules */
                caching_free_block(c, (uint32_t)x);
            } else {
                if (gm__idmap_put(&c->live, c->heap.b[x].addr, x) != 0) {
                    gm__idmap_put(&c->pre, req->id, x); /* its cell was just freed */
                    return GM_ENOMEM;
                }
                caching_take(c, (uint32_t)x, out);
                return 0;
            }
        }
    }
    if (caching_reserve(c, 8) != 0)
        return GM_ENOMEM;
    uint64_t size = caching_round(c, req->size);
    int pool = gm__torch_is_small(size) ? CACHING_SMALL : CACHING_LARGE;
    cpool_t *pl = &c->pools[pool];
    if (pool_bins(pl, req->stream) == NULL && pool_bins_make(pl, req->stream) != 0)
        return GM_ENOMEM;
    uint64_t seg = gm__torch_segment_size(size);
    uint32_t stream = req->stream;

    uint32_t x = caching_find(c, pl, stream, size);
    if (x == NIL) {
        if (caching_gc_on(c))
            caching_gc(c);
        x = caching_alloc_block(c, pl, stream, pool, size, seg);
        if (x == NIL && caching_release_available(c, pl, stream, size))
            x = caching_alloc_block(c, pl, stream, pool, size, seg);
        if (x == NIL) {
            caching_release_cached(c);
            if (caching_reserve(c, 8) != 0)
                return GM_ENOMEM;
            x = caching_alloc_block(c, pl, stream, pool, size, seg);
        }
        if (x == NIL)
            return GM_ALLOC_OOM;
    }
    cblk_t *B = c->heap.b;
    uint64_t al = c->cfg.align;
    if (al != 0 && size >= CACHING_ROUND_LARGE && c->cfg.expandable && B[x].addr % al != 0) {
        /* the Ascend build's base_addr_aligned_kb: a block of 2 MiB or more
         * starts aligned; the bytes before it stay cached on their own */
        uint64_t lead = al - B[x].addr % al;
        if (lead + size <= B[x].size) {
            uint32_t f = caching_new(c);
            B = c->heap.b;
            B[f] = B[x];
            B[f].size = lead;
            B[f].next = x;
            if (B[x].prev)
                B[B[x].prev].next = f;
            B[x].prev = f;
            B[x].addr += lead;
            B[x].size -= lead;
            caching_cache(c, f);
        }
    }
    uint64_t remaining = B[x].size - size;
    if (gm__torch_should_split(size, remaining, B[x].pool == CACHING_SMALL || c->cfg.expandable,
                               c->cfg.max_split)) {
        uint32_t r = caching_new(c);
        B = c->heap.b;
        B[r] = B[x];
        B[r].addr = B[x].addr + size;
        B[r].size = remaining;
        B[r].prev = x;
        B[r].next = B[x].next;
        if (B[x].next)
            B[B[x].next].prev = r;
        B[x].next = r;
        B[x].size = size;
        caching_cache(c, r);
    }
    if (gm__idmap_put(&c->live, c->heap.b[x].addr, x) != 0) {
        caching_free_block(c, x);
        return GM_ENOMEM;
    }
    caching_take(c, x, out);
    return 0;
}

static int caching_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    (void)stream;
    caching_t *c = CACHING(p);
    if (c == NULL)
        return GM_EINVAL;
    uint64_t x;
    if (!gm__idmap_remove(&c->live, blk->addr, &x))
        return GM_EINVAL;
    if (c->heap.b[x].size != blk->size) {
        if (gm__idmap_put(&c->live, blk->addr, x) != 0)
            return GM_ENOMEM;
        return GM_EINVAL;
    }
    c->allocated -= c->heap.b[x].size;
    caching_free_block(c, (uint32_t)x);
    return 0;
}

static void caching_empty_cache(gm_policy_t *p)
{
    caching_t *c = CACHING(p);
    if (c != NULL)
        caching_release_cached(c);
}

/* The largest free mapped block over every stream: the last block of each
 * stream in the size-ordered sets. */
static uint64_t caching_largest(const caching_t *c)
{
    uint64_t best = 0;
    for (int k = 0; k < 2; k++) {
        const cpool_t *pl = &c->pools[k];
        for (uint32_t st = 0; st < pl->nst; st++) {
            uint32_t it = set_last(c->heap.b, pl, st);
            if (it != NIL && c->heap.b[it].size > best)
                best = c->heap.b[it].size;
        }
    }
    return best;
}

static void caching_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    caching_t *c = CACHING(p);
    memset(out, 0, sizeof *out);
    if (c == NULL)
        return;
    out->allocated = c->allocated;
    out->largest_free = caching_largest(c);
    out->free_bytes = c->device_bytes - c->allocated;
}

/* ---- settings and the starting layout ----------------------------------------------- */

/* The trace's allocator_settings (a snapshot's dict) over cfg. */
static int caching_trace_settings(const gm_jv_t *attrs, caching_cfg_t *cfg, gm_error_t *err)
{
    const gm_jv_t *s = gm_jv_get(attrs, GM_ATTR_ALLOCATOR_SETTINGS);
    if (gm_jv_type(s) != GM_JV_OBJECT) {
        const gm_jv_t *e = gm_jv_get(attrs, "expandable_segments");
        if (gm_jv_type(e) == GM_JV_BOOL)
            cfg->expandable = gm_jv_bool(e);
        return 0;
    }
    const gm_jv_t *v;
    int64_t i64;
    if ((v = gm_jv_get(s, "max_split_size")) != NULL && gm_jv_type(v) == GM_JV_NUMBER) {
        if (gm_jv_i64(v, &i64) == 0)
            cfg->max_split = i64 <= 0 ? CACHING_UNLIMITED : (uint64_t)i64;
        else
            cfg->max_split = CACHING_UNLIMITED; /* SIZE_MAX printed as a large number */
    }
    if ((v = gm_jv_get(s, "max_non_split_rounding_size")) != NULL &&
        gm_jv_i64(v, &i64) == 0 && i64 > 0)
        cfg->max_nsr = (uint64_t)i64;
    if ((v = gm_jv_get(s, "garbage_collection_threshold")) != NULL &&
        gm_jv_type(v) == GM_JV_NUMBER)
        cfg->gc = gm_jv_num(v);
    if ((v = gm_jv_get(s, "expandable_segments")) != NULL && gm_jv_type(v) == GM_JV_BOOL)
        cfg->expandable = gm_jv_bool(v);
    v = gm_jv_get(s, "roundup_power2_divisions");
    if (gm_jv_type(v) == GM_JV_OBJECT) {
        /* {"1": d, "2": d, …, "32768": d}: interval start in MiB → divisions */
        for (size_t k = 0; k < gm_jv_len(v); k++) {
            uint64_t mb, d;
            if (conf_uint(gm_jv_key_at(v, k), &mb) || !gm__is_pow2(mb) ||
                gm_jv_u64(gm_jv_at(v, k), &d) || d > GM_TORCH_MAX_DIVISIONS)
                return gm_error_set(err, GM_EFORMAT, "caching: trace allocator_settings: bad "
                                    "roundup_power2_divisions entry '%s'", gm_jv_key_at(v, k));
            size_t idx = gm__log2_floor(mb);
            if (idx < CACHING_INTERVALS)
                cfg->div[idx] = (uint32_t)d;
        }
    } else if (gm_jv_type(v) == GM_JV_ARRAY) {
        for (size_t k = 0; k < gm_jv_len(v) && k < CACHING_INTERVALS; k++) {
            uint64_t d;
            if (gm_jv_u64(gm_jv_at(v, k), &d) || d > GM_TORCH_MAX_DIVISIONS)
                return gm_error_set(err, GM_EFORMAT, "caching: trace allocator_settings: bad "
                                    "roundup_power2_divisions element %zu", k);
            cfg->div[k] = (uint32_t)d;
        }
    } else if (gm_jv_type(v) == GM_JV_NUMBER) {
        uint64_t d;
        if (gm_jv_u64(v, &d) == 0 && d <= GM_TORCH_MAX_DIVISIONS)
            for (size_t k = 0; k < CACHING_INTERVALS; k++)
                cfg->div[k] = (uint32_t)d;
    }
    return 0;
}

/* Add one recorded block to segment chain (prev = last). */
static uint32_t caching_layout_block(caching_t *c, uint32_t last, uint64_t addr,
                                     const gm_layout_block_t *lb, uint32_t stream, int pool,
                                     uint32_t es, gm_error_t *err, int *rc)
{
    uint32_t x = caching_new(c);
    cblk_t *b = &c->heap.b[x];
    b->addr = addr;
    b->size = lb->size;
    b->stream = stream;
    b->pool = (uint8_t)pool;
    b->es = es;
    b->mapped = 1;
    b->prev = last;
    if (last != NIL)
        c->heap.b[last].next = x;
    if (lb->id == GM_LAYOUT_FREE) {
        if (last != NIL && !c->heap.b[last].allocated && c->heap.b[last].mapped) {
            /* two adjacent free blocks as recorded: keep the allocator's
             * invariant by merging them */
            c->heap.b[last].next = NIL;
            c->heap.b[last].size += lb->size;
            caching_delete(c, x);
            return last;
        }
        return x;
    }
    b->allocated = 1;
    int r = gm__idmap_insert(&c->pre, (uint64_t)lb->id, x);
    if (r != 0)
        *rc = r == 1 ? gm_error_set(err, GM_EFORMAT, "caching: layout names allocation %" PRId64
                                    " twice", lb->id)
                     : gm_error_set(err, GM_ENOMEM, "out of memory");
    return x;
}

/* Cache the free mapped blocks of a rebuilt chain starting at head. */
static void caching_layout_cache(caching_t *c, uint32_t head)
{
    for (uint32_t x = head; x != NIL; x = c->heap.b[x].next)
        if (!c->heap.b[x].allocated && c->heap.b[x].mapped)
            caching_cache(c, x);
}

static int caching_layout_ordinary(caching_t *c, const gm_layout_t *l,
                                   const gm_layout_segment_t *s, gm_error_t *err)
{
    uint64_t addr, got = gm_device_round(c->base.dev, s->size);
    if (gm_device_reserve_va(c->base.dev, s->size, CACHING_ROUND_LARGE, &addr) != 0 ||
        gm_device_adopt(c->base.dev, addr, got) != 0)
        return gm_error_set(err, GM_EINVAL, "caching: the recorded starting layout (%" PRIu64
                            " bytes reserved so far) does not fit the device capacity",
                            c->device_bytes + got);
    c->total += s->size;
    c->device_bytes += got;
    c->nsegments++;
    int rc = 0;
    uint32_t last = NIL, head = NIL;
    for (size_t k = 0; k < s->nblocks && rc == 0; k++) {
        const gm_layout_block_t *lb = &l->blocks[s->first_block + k];
        if (caching_reserve(c, 1) != 0)
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        last = caching_layout_block(c, last, addr + lb->offset, lb, s->stream_index,
                                    s->pool ? CACHING_SMALL : CACHING_LARGE, 0, err, &rc);
        if (head == NIL)
            head = last;
    }
    caching_layout_cache(c, head);
    return rc;
}

/* Expandable segments as recorded: each mapped range of one (stream, pool)
 * goes into one virtual range at its recorded distance from the group's
 * lowest range (rounded to pages), unmapped space between and after. */
static int caching_layout_expandable(caching_t *c, const gm_layout_t *l, size_t first,
                                     gm_error_t *err)
{
    const gm_layout_segment_t *s0 = &l->segments[first];
    int pool = s0->pool ? CACHING_SMALL : CACHING_LARGE;
    uint64_t page = gm__torch_page_size(pool == CACHING_SMALL);
    uint64_t lo = s0->address, span = 0;
    for (size_t k = first; k < l->nsegments; k++) {
        const gm_layout_segment_t *s = &l->segments[k];
        if (!s->expandable || s->stream_index != s0->stream_index || s->pool != s0->pool)
            continue;
        uint64_t end = (s->address - lo + page - 1) / page * page +
                       (s->size + page - 1) / page * page;
        if (end > span)
            span = end;
    }
    if (caching_reserve(c, 4) != 0)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    uint32_t tail = caching_new_range(c, s0->stream_index, pool, span);
    if (tail == NIL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    cexp_t *es = blk_es(c, &c->heap.b[tail]);
    uint32_t esi = c->heap.b[tail].es;
    tree_erase(c->heap.b, &c->pools[pool].unmapped, tail);
    uint64_t cursor = 0; /* offset of the first byte not yet laid out */
    uint32_t last = NIL, head = NIL;
    int rc = 0;
    for (size_t k = first; k < l->nsegments && rc == 0; k++) {
        const gm_layout_segment_t *s = &l->segments[k];
        if (!s->expandable || s->stream_index != s0->stream_index || s->pool != s0->pool)
            continue;
        uint64_t off = (s->address - lo + page - 1) / page * page;
        if (off < cursor)
            off = (cursor + page - 1) / page * page;
        uint64_t mapped = (s->size + page - 1) / page * page;
        if (caching_reserve(c, (uint32_t)s->nblocks + 8) != 0)
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        if (off > cursor) { /* unmapped gap */
            uint32_t g = caching_new(c);
            c->heap.b[g] = (cblk_t){.addr = es->base + cursor, .size = off - cursor,
                               .stream = s0->stream_index, .pool = (uint8_t)pool, .es = esi,
                               .prev = last};
            if (last != NIL)
                c->heap.b[last].next = g;
            if (head == NIL)
                head = g;
            last = g;
        }
        if (gm_device_adopt(c->base.dev, es->base + off, mapped) != 0)
            return gm_error_set(err, GM_EINVAL, "caching: the recorded starting layout does not "
                                "fit the device capacity");
        es->mapped += mapped;
        c->total += mapped;
        c->device_bytes += mapped;
        for (size_t j = 0; j <= s->nblocks && rc == 0; j++) {
            gm_layout_block_t lb;
            if (j < s->nblocks)
                lb = l->blocks[s->first_block + j];
            else if (mapped > s->size) /* a range recorded short of a page */
                lb = (gm_layout_block_t){s->size, mapped - s->size, 0, GM_LAYOUT_FREE};
            else
                break;
            last = caching_layout_block(c, last, es->base + off + lb.offset, &lb,
                                        s0->stream_index, pool, esi, err, &rc);
            if (head == NIL)
                head = last;
        }
        cursor = off + mapped;
    }
    if (rc)
        return rc;
    /* the rest of the range stays unmapped */
    if (cursor < es->size) {
        cblk_t *t = &c->heap.b[tail];
        t->addr = es->base + cursor;
        t->size = es->size - cursor;
        t->prev = last;
        if (last != NIL)
            c->heap.b[last].next = tail;
        if (head == NIL)
            head = tail;
    } else {
        caching_delete(c, tail);
    }
    for (uint32_t x = head; x != NIL; x = c->heap.b[x].next) {
        if (!c->heap.b[x].mapped)
            tree_insert(c->heap.b, &c->pools[pool].unmapped, x, 2);
        else if (!c->heap.b[x].allocated)
            caching_cache(c, x);
    }
    return 0;
}

static int caching_layout(caching_t *c, const gm_layout_t *l, gm_error_t *err)
{
    int rc = gm_layout_validate(l, err);
    if (rc)
        return rc;
    for (size_t k = 0; k < l->nsegments && rc == 0; k++) {
        const gm_layout_segment_t *s = &l->segments[k];
        if (pool_bins_make(&c->pools[s->pool ? CACHING_SMALL : CACHING_LARGE], s->stream_index))
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        if (!s->expandable) {
            rc = caching_layout_ordinary(c, l, s, err);
            continue;
        }
        /* the first range of its (stream, pool) group lays out the group */
        int seen = 0;
        for (size_t j = 0; j < k && !seen; j++)
            seen = l->segments[j].expandable && l->segments[j].stream_index == s->stream_index &&
                   l->segments[j].pool == s->pool;
        if (!seen)
            rc = caching_layout_expandable(c, l, k, err);
    }
    return rc;
}

/* Resolve the configuration: defaults < trace settings < conf < explicit. */
static int caching_configure(caching_t *c, const gm_jv_t *attrs, uint64_t set, gm_error_t *err)
{
    caching_cfg_t cfg;
    cfg_default(&cfg);
    int rc;
    if (c->settings_trace && attrs != NULL && (rc = caching_trace_settings(attrs, &cfg, err)))
        return rc;
    if (attrs != NULL) {
        uint64_t pad;
        if (gm_jv_u64(gm_jv_get(attrs, GM_ATTR_BLOCK_PAD), &pad) == 0 && pad <= MiB) {
            /* the Ascend build: padded blocks, 16 KiB-aligned large blocks
             * in expandable segments (its base_addr_aligned_kb default) */
            if (c->pad_trace)
                cfg.pad = pad;
            if (c->align_trace)
                cfg.align = 16 * KiB;
        }
    }
    if (c->conf != NULL && c->conf[0] != '\0' && (rc = conf_apply(&cfg, c->conf, err)))
        return rc;
    const caching_cfg_t *g = &c->given;
    if (set & (UINT64_C(1) << P_MAX_SPLIT))
        cfg.max_split = g->max_split;
    if (set & (UINT64_C(1) << P_MAX_NSR))
        cfg.max_nsr = g->max_nsr;
    if (set & (UINT64_C(1) << P_DIVISIONS))
        memcpy(cfg.div, g->div, sizeof cfg.div);
    if (set & (UINT64_C(1) << P_GC))
        cfg.gc = g->gc;
    if (set & (UINT64_C(1) << P_FRACTION))
        cfg.fraction = g->fraction;
    if (set & (UINT64_C(1) << P_EXPANDABLE))
        cfg.expandable = g->expandable;
    if (!c->pad_trace)
        cfg.pad = g->pad;
    if (!c->align_trace)
        cfg.align = g->align;
    c->cfg = cfg;
    caching_set_fraction(c);
    return 0;
}

static int caching_prepare(gm_policy_t *p, const gm_trace_context_t *ctx, gm_error_t *err)
{
    caching_t *c = CACHING(p);
    if (c == NULL)
        return gm_error_set(err, GM_EINVAL, "caching: not a caching policy");
    if (c->heap.n > 1 || c->base.dev->reserved != 0)
        return gm_error_set(err, GM_ESTATE, "caching: prepare must come before the first event");
    gm_jv_t *attrs = NULL;
    int rc = 0;
    if (ctx->attrs != NULL && ctx->attrs[0] != '\0') {
        rc = gm_json_parse(ctx->attrs, strlen(ctx->attrs), &attrs, err);
        if (rc) {
            gm_error_prefix(err, "caching: trace attributes");
            return rc;
        }
        if (gm_jv_type(attrs) != GM_JV_OBJECT) {
            gm_jv_free(attrs);
            attrs = NULL;
        }
    }
    /* a value other than its default was necessarily given */
    rc = caching_configure(c, attrs, ctx->params_set | c->differs, err);
    gm_jv_free(attrs);
    if (rc == 0 && c->start_recorded && ctx->layout != NULL && ctx->layout->nsegments > 0) {
        c->warm = 1;
        rc = caching_layout(c, ctx->layout, err);
    }
    return rc;
}

/* ---- create / destroy ------------------------------------------------------------------ */

static void caching_destroy(gm_policy_t *p)
{
    caching_t *c = CACHING(p);
    if (c == NULL)
        return;
    gm__idmap_release(&c->live);
    gm__idmap_release(&c->pre);
    for (int k = 0; k < 2; k++) {
        for (uint32_t st = 0; st < c->pools[k].nst; st++)
            free(c->pools[k].st[st]);
        free(c->pools[k].st);
    }
    cblk_heap_release(&c->heap);
    free(c->es);
    free(c->conf);
    free(c->divisions);
    free(c->pad);
    free(c->align);
    free(c);
}

static char *caching_strdup(const char *s)
{
    if (s == NULL)
        s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

static int caching_create(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                          gm_error_t *err)
{
    caching_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'caching'");
    c->base.ops = &gm__policy_caching;
    c->base.dev = dev;
    c->pools[CACHING_LARGE].unmapped.by_addr = 1;
    c->pools[CACHING_SMALL].unmapped.by_addr = 1;
    gm__idmap_init(&c->live);
    gm__idmap_init(&c->pre);
    cblk_heap_init(&c->heap); /* slot 0 is NIL */
    int rc = 0;
    c->conf = caching_strdup(v[P_CONF].s);
    c->divisions = caching_strdup(v[P_DIVISIONS].s);
    c->pad = caching_strdup(v[P_PAD].s);
    c->align = caching_strdup(v[P_ALIGN].s);
    if (c->conf == NULL || c->divisions == NULL || c->pad == NULL || c->align == NULL ||
        caching_reserve(c, 64)) {
        caching_destroy(&c->base);
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'caching'");
    }
    caching_cfg_t *g = &c->given;
    cfg_default(g);
    g->max_split = v[P_MAX_SPLIT].size ? v[P_MAX_SPLIT].size : CACHING_UNLIMITED;
    g->max_nsr = v[P_MAX_NSR].size;
    g->gc = v[P_GC].d;
    g->fraction = v[P_FRACTION].d;
    g->expandable = v[P_EXPANDABLE].b;
    c->device_memory = v[P_DEVICE_MEMORY].size;
    c->settings_trace = v[P_SETTINGS].e == 0;
    c->start_recorded = v[P_START].e == 0;
    if (v[P_MAX_SPLIT].size != 0 && v[P_MAX_SPLIT].size < CACHING_LARGE_BUFFER)
        rc = gm_error_set(err, GM_EINVAL, "caching: max_split_size must be 0 (unlimited) or at "
                          "least 20MiB");
    else if (v[P_MAX_NSR].size < CACHING_LARGE_BUFFER)
        rc = gm_error_set(err, GM_EINVAL, "caching: max_non_split_rounding must be at least "
                          "20MiB");
    else if (!(g->gc >= 0.0 && g->gc < 1.0))
        rc = gm_error_set(err, GM_EINVAL, "caching: garbage_collection_threshold must be in "
                          "[0, 1)");
    else if (!(g->fraction >= 0.0 && g->fraction <= 1.0))
        rc = gm_error_set(err, GM_EINVAL, "caching: memory_fraction must be in [0, 1]");
    if (rc == 0)
        rc = divisions_apply(g->div, c->divisions, err);
    if (rc == 0)
        rc = pad_parse(c->pad, &g->pad, &c->pad_trace, err);
    if (rc == 0)
        rc = align_parse(c->align, &g->align, &c->align_trace, err);
    /* Without prepare (no trace context): a value other than its default
     * counts as given, and the conf string sits below such values. */
    uint64_t set = 0;
    for (size_t i = 0; rc == 0 && i < P_COUNT; i++) {
        const gm_param_spec_t *sp = &caching_params[i];
        gm_param_value_t d;
        if (gm_param_parse(sp, sp->def, &d, NULL) != 0)
            continue;
        int differs = 0;
        switch (sp->type) {
        case GM_PARAM_SIZE: differs = d.size != v[i].size; break;
        case GM_PARAM_DOUBLE: differs = d.d != v[i].d; break;
        case GM_PARAM_BOOL: differs = d.b != v[i].b; break;
        case GM_PARAM_STRING: differs = strcmp(v[i].s ? v[i].s : "", sp->def) != 0; break;
        default: break;
        }
        if (differs)
            set |= UINT64_C(1) << i;
    }
    c->differs = set;
    if (rc == 0)
        rc = caching_configure(c, NULL, set, err);
    if (rc) {
        caching_destroy(&c->base);
        return rc;
    }
    *out = &c->base;
    return 0;
}

/* ---- check ------------------------------------------------------------------------------ */

#define CHECK_FAIL(...)                                   \
    do {                                                  \
        if (bad++ == 0 && why != NULL && whylen > 0)      \
            snprintf(why, whylen, __VA_ARGS__);           \
    } while (0)

/* Walk one set: order, heap, parent links; count its members. */
static int caching_check_tree(const caching_t *c, const ctree_t *t, uint8_t tag, int pool,
                              const char *name, char *why, size_t whylen, uint32_t *members)
{
    int bad = 0;
    const cblk_t *B = c->heap.b;
    uint32_t n = 0, prev = NIL;
    if (t->root != NIL && B[t->root].up != NIL)
        CHECK_FAIL("%s set: root has a parent", name);
    for (uint32_t x = tree_first(B, t); x != NIL; x = tree_next(B, x)) {
        if (++n > c->heap.n) {
            CHECK_FAIL("%s set: cycle", name);
            break;
        }
        if (B[x].inset != tag || B[x].pool != pool)
            CHECK_FAIL("%s set: block %" PRIu32 " is marked %u, pool %u", name, x, B[x].inset,
                       B[x].pool);
        if (prev != NIL && !tree_less(t, &B[prev], &B[x]))
            CHECK_FAIL("%s set: out of order at block %" PRIu32, name, x);
        if (B[x].l != NIL && (B[B[x].l].up != x || tree_prio(B[x].l) > tree_prio(x)))
            CHECK_FAIL("%s set: bad left link at block %" PRIu32, name, x);
        if (B[x].r != NIL && (B[B[x].r].up != x || tree_prio(B[x].r) > tree_prio(x)))
            CHECK_FAIL("%s set: bad right link at block %" PRIu32, name, x);
        prev = x;
    }
    if (n != t->count)
        CHECK_FAIL("%s set: counts %" PRIu32 " blocks, holds %" PRIu32, name, t->count, n);
    *members += n;
    return bad;
}

static int caching_check(gm_policy_t *p, char *why, size_t whylen)
{
    caching_t *c = CACHING(p);
    if (c == NULL) {
        if (why && whylen)
            snprintf(why, whylen, "not a caching policy");
        return 1;
    }
    int bad = 0;
    const cblk_t *B = c->heap.b;
    uint32_t in_sets = 0;
    static const char *const names[2][2] = {{"large free", "large unmapped"},
                                            {"small free", "small unmapped"}};
    for (int k = 0; k < 2; k++) {
        const cpool_t *pl = &c->pools[k];
        uint32_t nfree = 0;
        for (uint32_t st = 0; st < pl->nst; st++) {
            const cbins_t *bs = pl->st[st];
            if (bs == NULL)
                continue;
            for (unsigned b = 0; b < CBIN_COUNT; b++) {
                const ctree_t *t = &bs->bin[b];
                int has = (int)(bs->map[b >> 6] >> (b & 63) & 1);
                if (has != (t->root != NIL))
                    CHECK_FAIL("%s set: class %u of stream %" PRIu32 " is %s but marked %s",
                               names[k][0], b, st, t->root != NIL ? "used" : "empty",
                               has ? "used" : "empty");
                if (t->root == NIL && t->count == 0)
                    continue;
                uint32_t before = in_sets;
                bad += caching_check_tree(c, t, 1, k, names[k][0], bad ? NULL : why, whylen,
                                          &in_sets);
                nfree += in_sets - before;
                for (uint32_t x = tree_first(B, t); x != NIL && in_sets - before < c->heap.n;
                     x = tree_next(B, x))
                    if (bin_of(B[x].size) != b || B[x].stream != st) {
                        CHECK_FAIL("%s set: block at %#" PRIx64 " in the wrong class",
                                   names[k][0], B[x].addr);
                        break;
                    }
            }
        }
        if (nfree != pl->nfree)
            CHECK_FAIL("%s set: counts %" PRIu32 " blocks, holds %" PRIu32, names[k][0],
                       pl->nfree, nfree);
        bad += caching_check_tree(c, &c->pools[k].unmapped, 2, k, names[k][1],
                                  bad ? NULL : why, whylen, &in_sets);
    }
    uint64_t claimed = 0, unclaimed = 0, seg_total = 0, seg_dev = 0, nseg = 0, nalloc = 0;
    uint64_t *es_mapped = calloc(c->nes ? c->nes : 1, sizeof *es_mapped);
    uint32_t expect_sets = 0;
    for (uint32_t x = 1; x < c->heap.n; x++) {
        const cblk_t *b = &B[x];
        if (b->inset == 3)
            continue;
        if (b->size == 0)
            CHECK_FAIL("block %" PRIu32 " is empty", x);
        if (b->allocated) {
            uint64_t v;
            if (!b->mapped || b->inset != 0)
                CHECK_FAIL("allocated block at %#" PRIx64 " is unmapped or cached", b->addr);
            if (gm__idmap_get(&c->live, b->addr, &v)) {
                if (v != x)
                    CHECK_FAIL("address map: %#" PRIx64 " names another block", b->addr);
                nalloc++;
                claimed += b->size;
            } else {
                unclaimed++; /* a recorded block its pre-existing ALLOC has not claimed yet */
            }
        } else {
            expect_sets++;
            if (b->inset != (b->mapped ? 1 : 2))
                CHECK_FAIL("free block at %#" PRIx64 " is not in its pool's %s set", b->addr,
                           b->mapped ? "free" : "unmapped");
        }
        if (b->prev != NIL &&
            (B[b->prev].next != x || B[b->prev].addr + B[b->prev].size != b->addr))
            CHECK_FAIL("block at %#" PRIx64 ": bad link to its predecessor", b->addr);
        if (b->next != NIL && (B[b->next].prev != x || b->addr + b->size != B[b->next].addr))
            CHECK_FAIL("block at %#" PRIx64 ": bad link to its successor", b->addr);
        if (b->next != NIL && (B[b->next].stream != b->stream || B[b->next].es != b->es ||
                               B[b->next].pool != b->pool))
            CHECK_FAIL("block at %#" PRIx64 ": neighbour of another segment", b->addr);
        if (b->es == 0) {
            if (!b->mapped)
                CHECK_FAIL("ordinary block at %#" PRIx64 " is unmapped", b->addr);
            if (!b->allocated && b->next != NIL && !B[b->next].allocated)
                CHECK_FAIL("free block at %#" PRIx64 " should have merged with the next",
                           b->addr);
            if (b->prev == NIL) { /* a segment head: walk it */
                uint64_t sz = 0;
                uint32_t guard = 0;
                for (uint32_t y = x; y != NIL && guard <= c->heap.n; y = B[y].next, guard++)
                    sz += B[y].size;
                seg_total += sz;
                seg_dev += gm_device_round(c->base.dev, sz);
                nseg++;
            }
        } else {
            if (b->es > c->nes || !c->es[b->es - 1].live) {
                CHECK_FAIL("block at %#" PRIx64 " in a dropped expandable range", b->addr);
                continue;
            }
            const cexp_t *es = &c->es[b->es - 1];
            if (b->addr < es->base || b->addr + b->size > es->base + es->size)
                CHECK_FAIL("block at %#" PRIx64 " outside its expandable range", b->addr);
            if (b->mapped)
                es_mapped[b->es - 1] += b->size;
            else if ((b->addr - es->base) % es->page || b->size % es->page)
                CHECK_FAIL("unmapped block at %#" PRIx64 " is not whole pages", b->addr);
            if (!b->allocated && b->next != NIL && !B[b->next].allocated &&
                B[b->next].mapped == b->mapped)
                CHECK_FAIL("free block at %#" PRIx64 " should have merged with the next",
                           b->addr);
            if (b->prev == NIL && b->addr != es->base)
                CHECK_FAIL("expandable range at %#" PRIx64 " does not start with a block",
                           es->base);
            if (b->next == NIL && b->addr + b->size != es->base + es->size)
                CHECK_FAIL("expandable range at %#" PRIx64 " does not end with a block",
                           es->base);
        }
    }
    if (in_sets != expect_sets)
        CHECK_FAIL("sets hold %" PRIu32 " blocks, %" PRIu32 " are free", in_sets, expect_sets);
    uint64_t mapped = 0;
    for (uint32_t k = 0; k < c->nes; k++) {
        if (!c->es[k].live)
            continue;
        if (es_mapped != NULL && es_mapped[k] != c->es[k].mapped)
            CHECK_FAIL("expandable range at %#" PRIx64 ": %" PRIu64 " bytes mapped, counted %"
                       PRIu64, c->es[k].base, es_mapped[k], c->es[k].mapped);
        mapped += c->es[k].mapped;
    }
    free(es_mapped);
    if (nalloc != gm__idmap_count(&c->live))
        CHECK_FAIL("address map holds %zu blocks, %" PRIu64 " are allocated and claimed",
                   gm__idmap_count(&c->live), nalloc);
    if (claimed != c->allocated)
        CHECK_FAIL("allocated bytes %" PRIu64 ", blocks sum to %" PRIu64, c->allocated,
                   claimed);
    if (unclaimed != gm__idmap_count(&c->pre))
        CHECK_FAIL("%" PRIu64 " recorded blocks await their allocation, %zu are named",
                   unclaimed, gm__idmap_count(&c->pre));
    if (nseg != c->nsegments)
        CHECK_FAIL("%" PRIu64 " segments, counted %" PRIu64, nseg, c->nsegments);
    if (seg_total + mapped != c->total)
        CHECK_FAIL("segments and pages hold %" PRIu64 " bytes, counted %" PRIu64,
                   seg_total + mapped, c->total);
    if (seg_dev + mapped != c->device_bytes || c->device_bytes != c->base.dev->reserved)
        CHECK_FAIL("device bytes %" PRIu64 " (counted %" PRIu64 "), device reserved %" PRIu64,
                   seg_dev + mapped, c->device_bytes, c->base.dev->reserved);
    if (c->set_fraction && !c->cfg.expandable && !c->warm && c->total > c->allowed)
        CHECK_FAIL("%" PRIu64 " bytes reserved over the allowed %" PRIu64, c->total, c->allowed);
    return bad;
}

/* Every segment head (an ordinary segment's first block, or an expandable
 * range's first block), then its chain: mapped blocks only. */
static void caching_walk(gm_policy_t *p, gm_walk_fn fn, void *ctx)
{
    caching_t *c = CACHING(p);
    if (c == NULL)
        return;
    const cblk_t *B = c->heap.b;
    for (uint32_t x = 1; x < c->heap.n; x++) {
        if (B[x].inset == 3 || B[x].prev != NIL)
            continue;
        gm_walk_block_t w = {.stream = B[x].stream, .pool = B[x].pool};
        if (B[x].es) {
            const cexp_t *es = &c->es[B[x].es - 1];
            w.seg_addr = es->base;
            w.seg_size = es->mapped;
        } else {
            w.seg_addr = B[x].addr;
            for (uint32_t y = x, guard = 0; y != NIL && guard < c->heap.n; y = B[y].next, guard++)
                w.seg_size += B[y].size;
        }
        for (uint32_t y = x, guard = 0; y != NIL && guard < c->heap.n; y = B[y].next, guard++) {
            if (!B[y].mapped)
                continue;
            w.addr = B[y].addr;
            w.size = B[y].size;
            w.allocated = B[y].allocated;
            fn(ctx, &w);
        }
    }
}

const gm_policy_ops_t gm__policy_caching = {
    .name = "caching",
    .help = "PyTorch's CUDA caching allocator (pools, split rules, expandable segments)",
    .params = caching_params,
    .nparams = P_COUNT,
    .create = caching_create,
    .alloc = caching_alloc,
    .free = caching_free,
    .stats = caching_stats,
    .check = caching_check,
    .destroy = caching_destroy,
    .empty_cache = caching_empty_cache,
    .role = GM_ROLE_BASELINE,
    .prepare = caching_prepare,
    .walk = caching_walk,
};
