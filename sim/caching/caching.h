/*
 * sim/caching/caching.h — the caching policy's internals, shared by its
 * files: its configuration, its state, the small block operations every
 * file uses, and the functions each file gives the others.  The rules, the
 * data structures and the invariants are described at the top of
 * sim/caching/caching.c (the policy: parameters, create, destroy, the ops
 * table); config.c resolves the settings (PYTORCH_CUDA_ALLOC_CONF, the
 * trace's recorded settings, the parameters); alloc.c is the allocation
 * path (get_free_block, splitting, freeing, stats); release.c new segments
 * and the release of cached memory (OOM recovery, garbage collection,
 * empty_cache); expandable.c expandable segments; layout.c the recorded
 * starting layout and prepare; check.c the invariant walker and walk.  Each
 * function's comment is at its definition.
 */
#ifndef GM_SIM_CACHING_CACHING_H
#define GM_SIM_CACHING_CACHING_H

#include <stdint.h>
#include <string.h>

#include "gmsim/json.h"
#include "gmsim/policy.h"
#include "gmsim/trace.h"
#include "base/idmap.h"
#include "sim/blocktree.h"
#include "sim/caching/sets.h"
#include "sim/torch_rules.h"

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

typedef struct caching_cfg {
    /* PyTorch's allocator settings (sim/torch_rules.h): max_split
     * (CACHING_UNLIMITED when unset), max_nsr, div, gc (0 = off),
     * expandable, align (base_addr_align: 0 = off) */
    gm__torch_settings_t t;
    double fraction; /* 0 = unset */
    uint64_t pad;
} caching_cfg_t;

/* ---- state ------------------------------------------------------------------- */

/* The block array and its spare slots: sim/blocktree.h's record heap, over
 * this record (64-byte aligned, so each block is one line). */
GM__BT_HEAP_OF(cblk_heap, cblk_t, next, NIL, 1)

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
    uint32_t nes;
    size_t capes;

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

/* A new block of a new or recorded segment: [addr, addr + size) of stream
 * and pool, unlinked, the rest zero (caching_new). */
static inline uint32_t caching_new_segment(caching_t *c, uint64_t addr, uint64_t size,
                                           uint32_t stream, int pool)
{
    uint32_t x = caching_new(c);
    cblk_t *b = &c->heap.b[x];
    b->addr = addr;
    b->size = size;
    b->stream = stream;
    b->pool = (uint8_t)pool;
    return x;
}

/* A new block split off x's end: a copy of x at [addr, addr + size),
 * linked in as x's next.  x's own bytes are the caller's to cut.  A slot
 * was reserved (caching_reserve); the heap may have moved: callers reload
 * c->heap.b. */
static inline uint32_t caching_split_after(caching_t *c, uint32_t x, uint64_t addr, uint64_t size)
{
    uint32_t y = caching_new(c);
    cblk_t *B = c->heap.b;
    B[y] = B[x];
    B[y].addr = addr;
    B[y].size = size;
    B[y].prev = x;
    B[y].next = B[x].next;
    if (B[x].next)
        B[B[x].next].prev = y;
    B[x].next = y;
    return y;
}

/* The same at x's start: a copy of x of its first size bytes, linked in as
 * x's prev (x's address is the caller's to move). */
static inline uint32_t caching_split_before(caching_t *c, uint32_t x, uint64_t size)
{
    uint32_t y = caching_new(c);
    cblk_t *B = c->heap.b;
    B[y] = B[x];
    B[y].size = size;
    B[y].next = x;
    if (B[x].prev)
        B[B[x].prev].next = y;
    B[x].prev = y;
    return y;
}

static inline void caching_delete(caching_t *c, uint32_t i)
{
    memset(&c->heap.b[i], 0, sizeof c->heap.b[i]);
    c->heap.b[i].inset = 3;
    cblk_heap_give(&c->heap, i);
}

/* ---- small block operations and sizes ---------------------------------------- */

static inline uint64_t caching_round(const caching_t *c, uint64_t req)
{
    return gm__torch_round(req + c->cfg.pad, c->cfg.t.div);
}

static inline int caching_gc_on(const caching_t *c)
{
    return c->set_fraction && c->cfg.t.gc > 0.0;
}

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

static inline cexp_t *blk_es(caching_t *c, const cblk_t *b) { return &c->es[b->es - 1]; }

/* ---- between the files ---------------------------------------------------------- */

/* config.c */
void caching_cfg_default(caching_cfg_t *cfg);
int caching_configure(caching_t *c, const gm_jv_t *attrs, uint64_t set, gm_error_t *err);
int caching_divisions_apply(uint32_t div[CACHING_INTERVALS], const char *text, gm_error_t *err);
int caching_pad_parse(const char *text, uint64_t *pad, int *is_trace, gm_error_t *err);
int caching_align_parse(const char *text, uint64_t *align, int *is_trace, gm_error_t *err);
uint64_t caching_memory(const caching_t *c);

/* alloc.c */
uint64_t caching_merge(caching_t *c, uint32_t dst, uint32_t src);
void caching_release_block(caching_t *c, uint32_t x);
int caching_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out);
int caching_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream);
void caching_empty_cache(gm_policy_t *p);
void caching_stats(gm_policy_t *p, gm_policy_stats_t *out);

/* release.c */
void caching_release_cached(caching_t *c);
int caching_release_available(caching_t *c, cpool_t *pl, uint32_t stream, uint64_t size);
void caching_gc(caching_t *c);
uint32_t caching_alloc_block(caching_t *c, cpool_t *pl, uint32_t stream, int pool,
                             uint64_t size, uint64_t seg);

/* expandable.c */
uint32_t caching_new_range(caching_t *c, uint32_t stream, int pool, uint64_t min_size);
uint32_t caching_alloc_expandable(caching_t *c, cpool_t *pl, uint32_t stream, int pool,
                                  uint64_t size);
uint32_t caching_unmap(caching_t *c, uint32_t x);
void caching_drop_range(caching_t *c, uint32_t x);

/* layout.c */
int caching_prepare(gm_policy_t *p, const gm_trace_context_t *ctx, gm_error_t *err);

/* check.c */
int caching_check(gm_policy_t *p, gm_check_t *ck);
void caching_walk(gm_policy_t *p, gm_walk_fn fn, void *ctx);

#endif
