/*
 * sim/async.c — the CUDA stream-ordered allocator: cudaMallocAsync /
 * cudaFreeAsync on a memory pool (the CUDA programming guide's "Stream
 * Ordered Memory Allocator" chapter and the cudaMemPool* attributes), as
 * TensorFlow (TF_GPU_ALLOCATOR=cuda_malloc_async), PyTorch
 * (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync) and RMM's
 * cuda_async_memory_resource use it.
 *
 * What is documented, and modelled as documented:
 *   - Frees return memory to the pool, not to the device.  Memory freed on a
 *     stream is reused by later allocations on the same stream at once.
 *   - Reuse across streams (cudaMemPoolReuse* attributes, all on by default,
 *     and PyTorch's backend sets them on explicitly): with internal
 *     dependencies allowed, an allocation may take memory freed on any
 *     stream (the driver makes the allocating stream wait for the free);
 *     without them, memory freed on another stream is taken once the free
 *     has completed — opportunistically as soon as the GPU has passed it,
 *     and in any case (every flag off) once a synchronization with the CPU
 *     has made it available.  reuse=all models the first, reuse=completed
 *     the second.  A replay has no GPU clock: a free counts as completed
 *     once a synchronization (a MARK "synchronize") follows it — the
 *     conservative bound; opportunistic reuse may come earlier on a GPU.
 *     Reuse through event dependencies (cudaMemPoolReuseFollowEventDependencies)
 *     needs the application's events, which traces do not record.
 *   - The release threshold (cudaMemPoolAttrReleaseThreshold, default 0):
 *     at each synchronization, while the pool holds more than the threshold,
 *     unused memory goes back to the device.  The default releases every
 *     unused byte at every synchronization; PyTorch's backend:cudaMallocAsync
 *     sets UINT64_MAX (set release_threshold to anything above the device,
 *     e.g. 1EiB) and the pool then keeps all it took.
 *     A trace whose recorded PYTORCH_CUDA_ALLOC_CONF names that backend
 *     replays with UINT64_MAX unless release_threshold is given.
 *   - cudaMemPoolTrimTo(pool, 0) (what PyTorch's empty_cache does with this
 *     backend, after a device synchronize) releases every unused byte:
 *     empty_cache synchronizes, then releases every wholly free chunk.
 *
 * What is not documented (the driver is closed), and modelled as follows —
 * an assumption, stated so that results can be read with it in mind:
 *   - Physical memory comes in chunks that are multiples of `granularity`
 *     (2 MiB, the GPU's large-page size, default): a request that nothing
 *     free can hold maps a new chunk of the request rounded up to the
 *     granularity (a 1 KiB request maps 2 MiB; a 5 MiB one maps 6 MiB), and
 *     later requests are carved from the free space of the chunks.  Only a
 *     wholly free chunk is released; the driver may well unmap free 2 MiB
 *     pages inside a larger chunk, which this model does not do (reserved
 *     bytes may be over-estimated after partial frees of large chunks).
 *   - Inside the chunks: best fit by (size, address), a block cut from the
 *     front, free neighbours merged — the classic coalescing heap.  Requests
 *     are rounded up to `align` (512 bytes by default, the alignment
 *     cudaMalloc gives); the driver's own rounding is unknown.
 *   - Free memory is kept per stream until a synchronization completes it;
 *     completed memory is one shared set (it merges across streams).  An
 *     allocation takes the best fit among its stream's frees and the
 *     completed ones; with reuse=all, failing that, the best fit among other
 *     streams' frees.
 *   - Release order at a synchronization: the newest chunk first, until the
 *     pool is within the threshold.
 *   - When the device refuses a new chunk, the pool releases its wholly free
 *     chunks and retries once before the request fails (assumed of the
 *     driver; PyTorch's backend itself reports the OOM without a retry).
 *
 * Structures: blocks of sim/blocktree.h inside chunks (physical neighbours),
 * sets ordered by (size, address), split by power-of-two size class: set 0
 * the completed frees, set s + 1 the pending frees of stream s; chunks in
 * slots with a count of live blocks; live blocks in the address map.
 *
 * Invariants (check): every chunk's blocks tile it with consistent links and
 * its live count is right; every free block is a member of its set and each
 * set is ordered; no two touching free blocks of one set are unmerged; the
 * vacant chunk slots are linked exactly once; live blocks are in the address map and nothing else
 * is; chunk bytes equal the device's reserved bytes.
 */
#include "gmsim/policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "sim/carve.h"
#include "base/idmap.h"
#include "base/vec.h"

#define ASYNC_REUSE_ALL 0
#define ASYNC_REUSE_COMPLETED 1
#define ASYNC_DONE 0 /* the set of completed frees */
#define ASYNC_VACANT UINT32_MAX

typedef struct async_chunk {
    uint64_t base, size;
    uint64_t seq;   /* creation order */
    uint32_t first; /* handle of its lowest block; ASYNC_VACANT: the slot is free */
    uint32_t live;  /* live blocks in it */
} async_chunk_t;

typedef struct async {
    gm_policy_t base;
    uint64_t threshold, gran, align;
    int reuse;

    gm__bt_heap_t heap;
    gm__bt_set_t *sets; /* set 0: completed; set s + 1: pending frees of stream s */
    uint32_t nsets;
    async_chunk_t *chunks;
    uint32_t nchunks, vacant; /* slots; a vacant slot's .live links the next */
    size_t chunkcap;
    uint64_t seq;
    gm__idmap_t live; /* address → handle */
    uint64_t allocated, in_chunks;
    uint32_t *scratch;
    uint32_t scratchcap;
    uint64_t syncs, releases; /* counters, for tests and reports */
} async_t;

extern const gm_policy_ops_t gm__policy_async;

#define ASYNC(p) GM_POLICY_DOWNCAST(async_t, p, gm__policy_async)

static int async_sets(async_t *a, uint32_t s)
{
    if (s >= GM__BT_DROPPED - 1)
        return GM_EINVAL;
    uint32_t need = s + 2;
    if (need <= a->nsets)
        return 0;
    uint32_t n = a->nsets ? a->nsets : 4;
    while (n < need)
        n = n > UINT32_MAX / 2 ? GM__BT_DROPPED : 2 * n;
    gm__bt_set_t *r = realloc(a->sets, (size_t)n * sizeof *r);
    if (r == NULL)
        return GM_ENOMEM;
    for (uint32_t i = a->nsets; i < n; i++)
        gm__bt_set_init(&r[i]);
    a->sets = r;
    a->nsets = n;
    return 0;
}

static int async_scratch(async_t *a)
{
    if (a->scratchcap >= a->heap.cap + 1)
        return 0;
    uint32_t cap = a->heap.cap + 256;
    uint32_t *sc = realloc(a->scratch, (size_t)cap * sizeof *sc);
    if (sc == NULL)
        return GM_ENOMEM;
    a->scratch = sc;
    a->scratchcap = cap;
    return 0;
}

/* ---- chunks ----------------------------------------------------------------- */

/* Release chunk slot i (wholly free): its blocks leave their sets. */
static void async_chunk_release(async_t *a, uint32_t i)
{
    async_chunk_t *c = &a->chunks[i];
    gm__bt_blk_t *b = a->heap.b;
    for (uint32_t h = c->first; h != GM__BT_NONE;) {
        uint32_t nx = b[h].next;
        gm__bt_set_remove(b, &a->sets[b[h].list], h);
        gm__bt_drop(&a->heap, h);
        h = nx;
    }
    gm_device_free(a->base.dev, c->base, c->size);
    a->in_chunks -= c->size;
    c->first = ASYNC_VACANT;
    c->live = a->vacant;
    a->vacant = i;
    a->releases++;
}

static int async_seq_desc(const void *x, const void *y)
{
    uint64_t p = ((const uint64_t *)x)[0], q = ((const uint64_t *)y)[0];
    return p < q ? 1 : p > q ? -1 : 0;
}

/* Release wholly free chunks, newest first, while the pool holds more than
 * `keep` bytes. */
static void async_release(async_t *a, uint64_t keep)
{
    if (a->in_chunks <= keep)
        return;
    uint64_t *cand = malloc((size_t)(a->nchunks ? a->nchunks : 1) * 2 * sizeof *cand);
    if (cand == NULL)
        return;
    uint32_t n = 0;
    for (uint32_t i = 0; i < a->nchunks; i++)
        if (a->chunks[i].first != ASYNC_VACANT && a->chunks[i].live == 0) {
            cand[2 * n] = a->chunks[i].seq;
            cand[2 * n + 1] = i;
            n++;
        }
    qsort(cand, n, 2 * sizeof *cand, async_seq_desc);
    for (uint32_t k = 0; k < n && a->in_chunks > keep; k++)
        async_chunk_release(a, (uint32_t)cand[2 * k + 1]);
    free(cand);
}

/* Map a new chunk for `size` bytes; its handle (a free block in no set),
 * GM__BT_NONE with *rc = 0 when the device refuses, or *rc < 0. */
static uint32_t async_chunk_new(async_t *a, uint64_t size, int *rc)
{
    *rc = 0;
    uint64_t bytes = size > UINT64_MAX - (a->gran - 1) ? 0 : (size + a->gran - 1) & ~(a->gran - 1);
    if (bytes == 0)
        return GM__BT_NONE;
    uint32_t slot = a->vacant;
    if (slot == ASYNC_VACANT &&
        GM_VEC_RESERVE(a->chunks, a->chunkcap, (size_t)a->nchunks + 1, 16)) {
        *rc = GM_ENOMEM;
        return GM__BT_NONE;
    }
    uint32_t h = gm__bt_new(&a->heap);
    if (h == GM__BT_NONE) {
        *rc = GM_ENOMEM;
        return GM__BT_NONE;
    }
    uint64_t addr, got;
    if (gm_device_malloc(a->base.dev, bytes, a->gran, &addr, &got) != 0) {
        async_release(a, 0);
        if (gm_device_malloc(a->base.dev, bytes, a->gran, &addr, &got) != 0) {
            gm__bt_drop(&a->heap, h);
            return GM__BT_NONE;
        }
    }
    slot = a->vacant; /* the release may have freed slots */
    if (slot != ASYNC_VACANT)
        a->vacant = a->chunks[slot].live;
    else
        slot = a->nchunks++;
    a->chunks[slot] = (async_chunk_t){addr, got, a->seq++, h, 0};
    a->in_chunks += got;
    gm__bt_blk_t *x = &a->heap.b[h];
    x->addr = addr;
    x->size = got;
    x->flags = slot;
    return h;
}

/* Move every pending free into the completed set. */
static void async_complete(async_t *a)
{
    for (uint32_t l = 1; l < a->nsets; l++) {
        if (a->sets[l].mask == 0)
            continue;
        uint32_t k = gm__bt_set_collect(a->heap.b, &a->sets[l], a->scratch, 0);
        gm__bt_set_init(&a->sets[l]);
        for (uint32_t i = 0; i < k; i++) {
            uint32_t h = a->scratch[i];
            a->heap.b[h].left = a->heap.b[h].right = GM__BT_NONE;
            gm__bt_put(&a->heap, a->sets, h, ASYNC_DONE);
        }
    }
}

/* ---- the interface ---------------------------------------------------------- */

static int async_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                        gm_error_t *err)
{
    uint64_t threshold = values[0].size, gran = values[2].size, align = values[3].size;
    int reuse = values[1].e;
    if (gran == 0 || (gran & (gran - 1)) != 0 || gran > (UINT64_C(1) << 40))
        return gm_param_invalid(err, &gm__policy_async, "granularity", gran,
                                "not a power of two up to 1 TiB");
    if (align == 0 || (align & (align - 1)) != 0 || align > gran)
        return gm_param_invalid(err, &gm__policy_async, "align", align,
                                "not a power of two up to the granularity");
    if (reuse != ASYNC_REUSE_ALL && reuse != ASYNC_REUSE_COMPLETED)
        return gm_error_set(err, GM_EINVAL, "invalid value for async.reuse: expected "
                            "all|completed");
    async_t *a = gm_policy_new(sizeof *a, &gm__policy_async, dev, err);
    if (a == NULL)
        return GM_ENOMEM;
    a->threshold = threshold;
    a->gran = gran;
    a->align = align;
    a->reuse = reuse;
    a->vacant = ASYNC_VACANT;
    gm__bt_heap_init(&a->heap);
    gm__idmap_init(&a->live);
    if (async_sets(a, 0) != 0) {
        free(a);
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'async'");
    }
    *out = &a->base;
    return 0;
}

/* The better fit of two candidates (GM__BT_NONE when neither). */
static inline uint32_t async_better(const gm__bt_blk_t *b, uint32_t x, uint32_t y)
{
    if (x == GM__BT_NONE)
        return y;
    if (y == GM__BT_NONE)
        return x;
    return gm__bt_less(&b[y], &b[x]) ? y : x;
}

static int async_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    async_t *a = ASYNC(p);
    if (a == NULL)
        return GM_EINVAL;
    if (req->size > (UINT64_C(1) << 62))
        return GM_ALLOC_OOM;
    uint64_t size = (req->size + a->align - 1) & ~(a->align - 1);
    uint32_t s = req->stream;
    int rc = async_sets(a, s);
    if (rc != 0)
        return rc;
    uint32_t spare = gm__bt_new(&a->heap);
    if (spare == GM__BT_NONE)
        return GM_ENOMEM;
    gm__bt_blk_t *b = a->heap.b;
    uint32_t own = s + 1;
    uint32_t h = gm__bt_set_fit(b, &a->sets[own], size);
    h = async_better(b, h, gm__bt_set_fit(b, &a->sets[ASYNC_DONE], size));
    if (h == GM__BT_NONE && a->reuse == ASYNC_REUSE_ALL)
        for (uint32_t l = 1; l < a->nsets; l++)
            if (l != own)
                h = async_better(b, h, gm__bt_set_fit(b, &a->sets[l], size));
    uint32_t list;
    if (h != GM__BT_NONE) {
        list = b[h].list;
        gm__bt_set_remove(b, &a->sets[list], h);
    } else {
        h = async_chunk_new(a, size, &rc);
        if (h == GM__BT_NONE) {
            gm__bt_drop(&a->heap, spare);
            return rc != 0 ? rc : GM_ALLOC_OOM;
        }
        list = own;
    }
    if (a->heap.b[h].size > size) {
        gm__bt_cut(&a->heap, h, size, spare);
        a->heap.b[spare].flags = a->heap.b[h].flags;
        gm__bt_put(&a->heap, a->sets, spare, list);
    } else {
        gm__bt_drop(&a->heap, spare);
    }
    gm__bt_blk_t *c = &a->heap.b[h];
    c->list = GM__BT_USED;
    if (gm__idmap_put(&a->live, c->addr, h) != 0) {
        gm__bt_put(&a->heap, a->sets, h, list);
        return GM_ENOMEM;
    }
    a->chunks[c->flags].live++;
    a->allocated += c->size;
    out->addr = c->addr;
    out->size = c->size;
    return 0;
}

static int async_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    async_t *a = ASYNC(p);
    if (a == NULL)
        return GM_EINVAL;
    uint32_t h = gm__carve_live(&a->heap, &a->live, blk);
    if (h == GM__BT_NONE)
        return GM_EINVAL;
    int rc = async_sets(a, stream);
    if (rc != 0)
        return rc;
    gm__idmap_remove(&a->live, blk->addr, NULL);
    a->allocated -= blk->size;
    a->chunks[a->heap.b[h].flags].live--;
    gm__bt_put(&a->heap, a->sets, h, stream + 1);
    return 0;
}

static void async_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    async_t *a = ASYNC(p);
    if (a == NULL)
        return;
    out->allocated = a->allocated;
    out->largest_free = gm__carve_largest(a->heap.b, a->sets, a->nsets);
}

/* A synchronization: every free completes; memory above the threshold goes
 * back to the device. */
static void async_sync(gm_policy_t *p)
{
    async_t *a = ASYNC(p);
    if (a == NULL || async_scratch(a) != 0)
        return;
    a->syncs++;
    async_complete(a);
    async_release(a, a->threshold);
}

/* A trace recorded with PyTorch's backend:cudaMallocAsync (its
 * allocator_settings' PYTORCH_CUDA_ALLOC_CONF says so) replays with that
 * backend's release threshold, UINT64_MAX, unless release_threshold was
 * given.  Attributes that do not parse are ignored: the context is a hint. */
static int async_prepare(gm_policy_t *p, const gm_trace_context_t *ctx, gm_error_t *err)
{
    (void)err;
    async_t *a = ASYNC(p);
    if (a == NULL || ctx == NULL || ctx->attrs == NULL || (ctx->params_set & 1))
        return 0;
    gm_jv_t *root = NULL;
    gm_error_t perr = {0};
    if (gm_json_parse(ctx->attrs, strlen(ctx->attrs), &root, &perr) != 0)
        return 0;
    const char *conf =
        gm_jv_str(gm_jv_get(gm_jv_get(root, GM_ATTR_ALLOCATOR_SETTINGS), "PYTORCH_CUDA_ALLOC_CONF"));
    if (conf != NULL && strstr(conf, "backend:cudaMallocAsync") != NULL)
        a->threshold = UINT64_MAX;
    gm_jv_free(root);
    return 0;
}

/* cudaDeviceSynchronize + cudaMemPoolTrimTo(pool, 0). */
static void async_empty_cache(gm_policy_t *p)
{
    async_t *a = ASYNC(p);
    if (a == NULL || async_scratch(a) != 0)
        return;
    async_complete(a);
    async_release(a, 0);
}

/* ---- check ------------------------------------------------------------------ */

static int async_check(gm_policy_t *p, gm_check_t *ck)
{
    async_t *a = ASYNC(p);
    if (a == NULL)
        return gm_check_fail(ck, "not an async policy");
    const gm__carve_rules_t rules = {.seg = "chunk", .nsets = a->nsets};
    gm__carve_tally_t t = {0};
    uint64_t in_chunks = 0, nvacant = 0;
    for (uint32_t i = 0; i < a->nchunks && ck->bad == 0; i++) {
        const async_chunk_t *c = &a->chunks[i];
        if (c->first == ASYNC_VACANT) {
            nvacant++;
            continue;
        }
        in_chunks += c->size;
        if (c->size % a->gran != 0 || c->base % a->gran != 0)
            gm_check_fail(ck, "chunk 0x%" PRIx64 " (%" PRIu64 " bytes) is not granular", c->base,
                          c->size);
        uint64_t live = t.live;
        gm__carve_seg_t s;
        for (const gm__bt_blk_t *x = gm__carve_first(&s, ck, &a->heap, &a->live, &rules, &t,
                                                     c->base, c->size, c->first);
             x != NULL; x = gm__carve_next(&s))
            if (x->flags != i)
                gm_check_fail(ck, "chunk 0x%" PRIx64 ": block at 0x%" PRIx64 " names another chunk",
                              c->base, x->addr);
        live = t.live - live;
        if (ck->bad == 0 && live != c->live)
            gm_check_fail(ck, "chunk 0x%" PRIx64 " counts %" PRIu32 " live blocks, holds %" PRIu64,
                          c->base, c->live, live);
    }
    uint64_t v = 0;
    for (uint32_t i = a->vacant; i != ASYNC_VACANT && ck->bad == 0; i = a->chunks[i].live)
        if (i >= a->nchunks || a->chunks[i].first != ASYNC_VACANT || ++v > nvacant)
            gm_check_fail(ck, "vacant chunk slots are mislinked");
    if (ck->bad == 0 && v != nvacant)
        gm_check_fail(ck, "%" PRIu64 " vacant chunk slots, %" PRIu64 " linked", nvacant, v);
    uint64_t members = gm__carve_sets(ck, &a->heap, a->sets, a->nsets);
    gm__carve_tallied(ck, &a->heap, &a->live, &t, members, a->allocated);
    if (in_chunks != a->in_chunks || in_chunks != p->dev->reserved)
        gm_check_fail(
            ck, "chunks hold %" PRIu64 " bytes, counted %" PRIu64 ", device reserved %" PRIu64,
            in_chunks, a->in_chunks, p->dev->reserved);
    return ck->bad;
}

static void async_destroy(gm_policy_t *p)
{
    async_t *a = ASYNC(p);
    if (a == NULL)
        return;
    gm__bt_heap_release(&a->heap);
    gm__idmap_release(&a->live);
    free(a->sets);
    free(a->chunks);
    free(a->scratch);
    free(a);
}

static const gm_param_spec_t async_params[] = {
    {"release_threshold", GM_PARAM_SIZE, "0",
     "unused bytes the pool keeps at a synchronization (cudaMemPoolAttrReleaseThreshold; "
     "PyTorch's backend uses the maximum: give 1EiB)", NULL},
    {"reuse", GM_PARAM_ENUM, "all",
     "memory freed on other streams: all (at once, CUDA's defaults), completed (once a "
     "synchronization has completed the free)", "all|completed"},
    {"granularity", GM_PARAM_SIZE, "2MiB",
     "physical chunk granularity: a new chunk is the request rounded up to it (assumed)", NULL},
    {"align", GM_PARAM_SIZE, "512", "requests are rounded up to this (assumed)", NULL},
};

const gm_policy_ops_t gm__policy_async = {
    .name = "async",
    .help = "CUDA stream-ordered allocator (cudaMallocAsync pool): release threshold, "
            "cross-stream reuse, release at synchronization",
    GM_POLICY_OPS(async),
    .empty_cache = async_empty_cache,
    .sync = async_sync,
    .prepare = async_prepare,
};
