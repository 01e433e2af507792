/*
 * sim/caching/caching.c — PyTorch's CUDA caching allocator (the native
 * backend of c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.x), as a policy:
 * its parameters, create, destroy and ops table.  The policy's files share
 * sim/caching/caching.h (its state, and what each file gives the others,
 * listed there) and sim/caching/sets.h (the block record and its ordered
 * sets); only the ops table is named outside the folder.
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
#include <stdlib.h>
#include <string.h>

#include "sim/caching/caching.h"

/* ---- parameters ------------------------------------------------------------ */

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

static int caching_create(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                          gm_error_t *err)
{
    caching_t *c = gm_policy_new(sizeof *c, &gm__policy_caching, dev, err);
    if (c == NULL)
        return GM_ENOMEM;
    c->pools[CACHING_LARGE].unmapped.by_addr = 1;
    c->pools[CACHING_SMALL].unmapped.by_addr = 1;
    gm__idmap_init(&c->live);
    gm__idmap_init(&c->pre);
    cblk_heap_init(&c->heap); /* slot 0 is NIL */
    int rc = 0;
    c->conf = strdup(v[P_CONF].s ? v[P_CONF].s : "");
    c->divisions = strdup(v[P_DIVISIONS].s ? v[P_DIVISIONS].s : "");
    c->pad = strdup(v[P_PAD].s ? v[P_PAD].s : "");
    c->align = strdup(v[P_ALIGN].s ? v[P_ALIGN].s : "");
    if (c->conf == NULL || c->divisions == NULL || c->pad == NULL || c->align == NULL ||
        caching_reserve(c, 64)) {
        caching_destroy(&c->base);
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'caching'");
    }
    caching_cfg_t *g = &c->given;
    caching_cfg_default(g);
    g->t.max_split = v[P_MAX_SPLIT].size ? v[P_MAX_SPLIT].size : CACHING_UNLIMITED;
    g->t.max_nsr = v[P_MAX_NSR].size;
    g->t.gc = v[P_GC].d;
    g->fraction = v[P_FRACTION].d;
    g->t.expandable = v[P_EXPANDABLE].b;
    c->device_memory = v[P_DEVICE_MEMORY].size;
    c->settings_trace = v[P_SETTINGS].e == 0;
    c->start_recorded = v[P_START].e == 0;
    if (v[P_MAX_SPLIT].size != 0 && v[P_MAX_SPLIT].size < CACHING_LARGE_BUFFER)
        rc = gm_error_set(err, GM_EINVAL, "caching: max_split_size must be 0 (unlimited) or at "
                          "least 20MiB");
    else if (v[P_MAX_NSR].size < CACHING_LARGE_BUFFER)
        rc = gm_error_set(err, GM_EINVAL, "caching: max_non_split_rounding must be at least "
                          "20MiB");
    else if (!(g->t.gc >= 0.0 && g->t.gc < 1.0))
        rc = gm_error_set(err, GM_EINVAL, "caching: garbage_collection_threshold must be in "
                          "[0, 1)");
    else if (!(g->fraction >= 0.0 && g->fraction <= 1.0))
        rc = gm_error_set(err, GM_EINVAL, "caching: memory_fraction must be in [0, 1]");
    if (rc == 0)
        rc = caching_divisions_apply(g->t.div, c->divisions, err);
    if (rc == 0)
        rc = caching_pad_parse(c->pad, &g->pad, &c->pad_trace, err);
    if (rc == 0)
        rc = caching_align_parse(c->align, &g->t.align, &c->align_trace, err);
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

/* ---- the ops table ----------------------------------------------------------------- */

const gm_policy_ops_t gm__policy_caching = {
    .name = "caching",
    .help = "PyTorch's CUDA caching allocator (pools, split rules, expandable segments)",
    GM_POLICY_OPS(caching),
    .empty_cache = caching_empty_cache,
    .role = GM_ROLE_BASELINE,
    .flags = GM_POLICY_RECORDED_ADDRESSES,
    .prepare = caching_prepare,
    .walk = caching_walk,
};
