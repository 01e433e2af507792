/*
 * formats/torch/snapshot.c — the PyTorch memory snapshot importer
 * (gmsim/torch.h, docs/formats.md for users): sniffing, reading the
 * snapshot, each device's import.  Beside it: rewind.c (step 3 below),
 * state.c (the regions and blocks it undoes), frames.c (stack frames),
 * write.c (step 4); torch.h holds what they share.
 *
 * Input: the pickle of torch.cuda.memory._snapshot() (PyTorch >= 2.0): a
 * dict with `segments` (the allocator's state when the snapshot was taken:
 * segments and the blocks tiling them) and `device_traces` (per device, a
 * ring buffer of entries: alloc, free_requested, free_completed,
 * segment_alloc/free/map/unmap, oom, snapshot), optionally
 * `allocator_settings` and `external_annotations`.  A pre-2.0 snapshot (the
 * bare list of segments) is refused with a message saying so.
 *
 * Per device, the importer
 *   1. reads the trace entries into a compact array (checking their types);
 *   2. builds the final state from the device's segments: regions (a
 *      segment, or a contiguous mapped range of an expandable segment, as
 *      the snapshot lists them) holding blocks in address order, allocated
 *      (active_allocated, active_pending_free) or free (inactive);
 *   3. undoes the entries backwards, as PyTorch's viewer does to rebuild
 *      the past (MemoryViz.js process_alloc_data), but on the block level:
 *        alloc          the block at addr becomes free and merges with free
 *                       neighbours (free blocks never touch in the
 *                       allocator: it always merges them); but first a
 *                       free gap just before it, after a block carved by an
 *                       undone free_completed that the allocator would not
 *                       have split from the gap, joins that block: the
 *                       allocator hands a block out at the start of a free
 *                       block, so the gap was not free then; it is the
 *                       unsplit tail the carved block lacked (its free
 *                       undone where the rest of its free block was
 *                       larger than when it was allocated)
 *        free_completed the free block holding addr is split around an
 *                       allocated block [addr, addr + s) with requested size
 *                       `size`; s is the allocator's rounding of the request
 *                       (512 B, the detected padding, roundup_power2_divisions)
 *                       grown to the end of the free block where the
 *                       allocator would not have split the remainder (large
 *                       pool: remainder <= 1 MiB or the block oversize;
 *                       small pool and expandable segments: remainder < 512)
 *        segment_alloc  the (by now wholly free) segment disappears
 *        segment_free   a wholly free segment appears (pool small iff it is
 *                       2 MiB, PyTorch's small-segment size)
 *        segment_map    the mapped range (free by now) is cut out of its
 *                       region, splitting it
 *        segment_unmap  a free mapped range appears and joins adjacent
 *                       ranges of the same stream
 *      Whatever does not fit the state (a free at an address no free block
 *      holds, …) is skipped and counted in the attribute
 *      "reconstruction_mismatches"; real snapshots have none.  The state
 *      reached is the allocator's at the first entry: its allocated blocks
 *      are the allocations alive then (requested size and frames from the
 *      final block, or from the entry that frees it — the free's stack, as
 *      the viewer shows it), and it is stored as the starting layout;
 *   4. writes the trace: the pre-existing ALLOCs first (layout order,
 *      ids 0..P-1, time of the first entry), then the entries in order:
 *      alloc → ALLOC, free_completed → FREE (matched by address),
 *      segment_* → SEG_*, oom → MARK "oom" (the failed request's size,
 *      stream and stack, and in addr the entry's device_free: the device's
 *      free bytes, as PyTorch's TraceEntry keeps them), a run of segment_free/unmap
 *      that no adjacent oom and no retried segment allocation of the same
 *      call explains → MARK "empty_cache" before it, external annotations →
 *      MARK named after them (start and end, merged by time).
 *      free_requested and snapshot entries are dropped.
 *
 * The recorded reserved bytes come from the segment entries: at the end the
 * final segments' total, at the start that total undone backwards, the peak
 * along the way forwards; at each oom entry, reserved then + device_free is
 * the allocator's capacity (attribute oom_capacity: the least of them).
 *
 * Block padding: the Ascend NPU build of PyTorch sizes blocks as
 * round512(request + 32).  Allocated final blocks whose two roundings
 * differ decide it when there are any; otherwise the trace does: an
 * allocation followed in the address space by another allocation exactly
 * one padded block later votes for padding, one plain block later against.
 *
 * Stack frames: frame dicts are shared in the pickle (memo), so a frames
 * list made of the same dicts as an earlier one is found by their
 * addresses (a hash of a few of them, then memcmp) without looking inside.
 * A new list is formatted frame by frame, each frame once per snapshot
 * ("file:line:name"; the viewer's hidden C++ and interpreter frames
 * dropped; only the Python source frames, line > 0, when the stack has
 * any; paths from site-packages/ on cut to the package); its text is
 * interned through a second table and given to the writer once.
 *
 * Cost: a region's blocks are one sorted array, so an undo costs a binary
 * search and a move of the blocks after it: linear in its region's blocks.
 * A 2 MiB small segment holds at most 4096 blocks and large ones a few, so
 * real snapshots import in milliseconds; a huge expandable range holding
 * tens of thousands of live blocks over a long trace is quadratic.
 *
 * The reconstruction is checked, in tests/test_torch.c, by replaying the
 * stored layout forwards with the allocator's rules: every real snapshot
 * ends in exactly its final blocks.
 */
#include "formats/torch/torch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/bits.h"
#include "base/bulk.h"

static const char *const tk_act_names[TK_NACT] = {
    "alloc",       "free_requested", "free_completed", "segment_alloc", "segment_free",
    "segment_map", "segment_unmap",  "oom",            "snapshot",      "",
};

int gm__tk_fail(tk_snap_t *s, const char *fmt, ...)
{
    char msg[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gm_error_set(s->err, GM_EFORMAT, "'%s': %s", s->filename, msg);
}

int gm__tk_nomem(tk_snap_t *s)
{
    return gm_error_set(s->err, GM_ENOMEM, "out of memory importing '%s'", s->filename);
}

/* ---- sniffing ---------------------------------------------------------------- */

int gm_torch_sniff(const void *head, size_t len)
{
    const unsigned char *h = (const unsigned char *)head;
    if (len < 4 || h[0] != 0x80 || h[1] < 2 || h[1] > 5)
        return 0;
    static const char *const keys[] = {"segments", "device_traces", "total_size"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        size_t n = strlen(keys[k]);
        for (size_t i = 2; i + n <= len; i++)
            if (memcmp(h + i, keys[k], n) == 0)
                return 1;
    }
    return 0;
}

/* ---- reading the snapshot ----------------------------------------------------------- */

/* The non-negative integer under key (absent or None: 0, an error when
 * required), found with a position hint (gm__pk_geth). */
static int tk_u64_fieldh(tk_snap_t *s, const gm__pk_t *d, const gm__pk_t *key, uint32_t *hint,
                         const char *kname, int required, uint64_t *out, const char *where,
                         size_t idx)
{
    const gm__pk_t *v = gm__pk_geth(d, key, hint);
    if (v == NULL || v->type == GM__PK_NONE) {
        *out = 0;
        if (required)
            return gm__tk_fail(s, "%s %zu: no '%s'", where, idx, kname);
        return 0;
    }
    if (!gm__pk_u64(v, out))
        return gm__tk_fail(s, "%s %zu: '%s' is not a non-negative integer", where, idx, kname);
    return 0;
}

static int tk_u64_field(tk_snap_t *s, const gm__pk_t *d, const gm__pk_t *key, const char *kname,
                        int required, uint64_t *out, const char *where, size_t idx)
{
    uint32_t hint = 0;
    return tk_u64_fieldh(s, d, key, &hint, kname, required, out, where, idx);
}

/* Read device dv's trace entries. */
static int tk_read_entries(tk_dev_t *dv, const gm__pk_t *list)
{
    tk_snap_t *s = dv->s;
    const tk_keys_t *k = &s->k;
    char where[48];
    snprintf(where, sizeof where, "device %u trace entry", dv->device);
    if (list == NULL)
        return 0;
    if (!tk_is_list(list))
        return gm__tk_fail(s, "device_traces[%u] is not a list", dv->device);
    dv->e = malloc((list->n ? list->n : 1) * sizeof *dv->e);
    if (dv->e == NULL)
        return gm__tk_nomem(s);
    /* key position hints: entries share their key order */
    uint32_t h_act = 0, h_addr = 0, h_size = 0, h_stream = 0, h_time = 0, h_frames = 0,
             h_cc = 0, h_um = 0, h_free = 0;
    for (uint32_t i = 0; i < list->n; i++) {
        const gm__pk_t *d = list->v.items[i];
        if (d->type != GM__PK_DICT)
            return gm__tk_fail(s, "%s %u is not a dict", where, i);
        const gm__pk_t *a = gm__pk_geth(d, k->action, &h_act);
        if (a == NULL || a->type != GM__PK_STR)
            return gm__tk_fail(s, "%s %u: no 'action' string", where, i);
        tk_entry_t e = {.act = TK_OTHER};
        for (int j = 0; j < TK_OTHER; j++)
            if (a == k->act[j])
                e.act = (uint8_t)j;
        if (e.act == TK_OTHER) {
            dv->skipped++;
            continue;
        }
        int rc;
        int need = e.act != TK_OOM && e.act != TK_SNAPSHOT;
        if ((rc = tk_u64_fieldh(s, d, k->addr, &h_addr, "addr", need, &e.addr, where, i)) ||
            (rc = tk_u64_fieldh(s, d, k->size, &h_size, "size", need, &e.size, where, i)) ||
            (rc = tk_u64_fieldh(s, d, k->stream, &h_stream, "stream", 0, &e.stream, where, i)))
            return rc;
        if (e.size > GM_SIZE_LIMIT && need)
            return gm__tk_fail(s, "%s %u: size %llu above the 2^48 limit", where, i,
                           (unsigned long long)e.size);
        if (e.act == TK_OOM) {
            /* PyTorch writes the device's free bytes (cudaMemGetInfo)
             * where other entries have their address, as 'device_free' */
            uint64_t fr;
            if ((rc = tk_u64_fieldh(s, d, k->device_free, &h_free, "device_free", 0, &fr, where,
                                    i)))
                return rc;
            if (fr != 0)
                e.addr = fr;
            if (e.addr > GM_LIVE_LIMIT)
                e.addr = 0; /* not a device's memory: unknown */
            if (e.size > GM_SIZE_LIMIT)
                e.size = 0; /* not a request the allocator could take: unknown */
        }
        const gm__pk_t *t = gm__pk_geth(d, k->time_us, &h_time);
        if (t != NULL && t->type != GM__PK_NONE) {
            int64_t us;
            if (!gm__pk_i64(t, &us))
                return gm__tk_fail(s, "%s %u: 'time_us' is not an integer", where, i);
            e.ts_ns = us > 0 ? (uint64_t)us * 1000u : 0;
            s->has_time = 1;
        }
        const gm__pk_t *fr = gm__pk_geth(d, k->frames, &h_frames);
        e.frames = tk_is_list(fr) && fr->n ? fr : NULL;
        if (!s->has_compile_context && gm__pk_geth(d, k->compile_context, &h_cc))
            s->has_compile_context = 1;
        if (!s->has_user_metadata && gm__pk_geth(d, k->user_metadata, &h_um))
            s->has_user_metadata = 1;
        if (e.act == TK_SEG_MAP || e.act == TK_SEG_UNMAP)
            dv->expandable_seen = 1;
        dv->e[dv->ne++] = e;
    }
    return 0;
}

static int tk_block_cmp(const void *a, const void *b)
{
    const gm__tk_block_t *x = a, *y = b;
    return gm__cmp_u64(x->addr, y->addr);
}

/* Build the final state of device dv from the snapshot's segments. */
static int tk_read_segments(tk_dev_t *dv, const gm__pk_t *segs)
{
    tk_snap_t *s = dv->s;
    const tk_keys_t *k = &s->k;
    for (uint32_t i = 0; i < segs->n; i++) {
        const gm__pk_t *sg = segs->v.items[i];
        uint64_t dev, addr, size, stream;
        int rc;
        if ((rc = tk_u64_field(s, sg, k->device, "device", 0, &dev, "segment", i)))
            return rc;
        if (dev != dv->device)
            continue;
        if ((rc = tk_u64_field(s, sg, k->address, "address", 1, &addr, "segment", i)) ||
            (rc = tk_u64_field(s, sg, k->total_size, "total_size", 1, &size, "segment", i)) ||
            (rc = tk_u64_field(s, sg, k->stream, "stream", 0, &stream, "segment", i)))
            return rc;
        if (size == 0 || size > GM_SIZE_LIMIT || addr + size < addr)
            return gm__tk_fail(s, "segment %u: size %llu out of range", i,
                               (unsigned long long)size);
        const gm__pk_t *ty = tk_get(sg, k->segment_type);
        gm__tk_region_t r = {.addr = addr, .size = size, .stream = stream};
        r.pool = ty != NULL && ty == k->small   ? GM_POOL_SMALL
                 : ty != NULL && ty == k->large ? GM_POOL_LARGE
                 : size <= GM_TORCH_SMALL_BUFFER ? GM_POOL_SMALL
                                                : GM_POOL_LARGE;
        const gm__pk_t *ex = tk_get(sg, k->is_expandable);
        r.expandable = ex != NULL && ex->type == GM__PK_BOOL && ex->v.i;
        if (r.expandable)
            dv->expandable_seen = 1;
        const gm__pk_t *bl = tk_get(sg, k->blocks);
        size_t nb = tk_is_list(bl) ? bl->n : 0;
        r.b = malloc((2 * nb + 2) * sizeof *r.b);
        if (r.b == NULL)
            return gm__tk_nomem(s);
        r.cap = 2 * nb + 2;
        for (size_t j = 0; j < nb; j++) {
            const gm__pk_t *b = bl->v.items[j];
            gm__tk_block_t x = {.id = GM_LAYOUT_FREE};
            char bw[48];
            snprintf(bw, sizeof bw, "segment %u block", i);
            const gm__pk_t *akey = tk_get(b, k->address) ? k->address : k->addr;
            if ((rc = tk_u64_field(s, b, akey, "address", 1, &x.addr, bw, j)) ||
                (rc = tk_u64_field(s, b, k->size, "size", 1, &x.size, bw, j))) {
                free(r.b);
                return rc;
            }
            /* inside [addr, addr + size), compared without a sum that could
             * wrap past 2^64 */
            if (x.addr < addr || x.addr - addr >= size || x.size > size - (x.addr - addr)) {
                free(r.b);
                return gm__tk_fail(s, "segment %u at 0x%llx: block %zu address 0x%llx (%llu bytes) "
                               "out of range: the segment ends at 0x%llx", i,
                               (unsigned long long)addr, j, (unsigned long long)x.addr,
                               (unsigned long long)x.size, (unsigned long long)(addr + size));
            }
            /* allocated unless inactive (active_allocated,
             * active_pending_free: the free has not completed) */
            const gm__pk_t *state = tk_get(b, k->state);
            x.alloc = state == NULL || state != k->inactive;
            if (x.alloc) {
                uint64_t req = 0;
                const gm__pk_t *rq = tk_get(b, k->requested_size);
                const gm__pk_t *hist = tk_get(b, k->history);
                if (rq == NULL && tk_is_list(hist) && hist->n)
                    rq = tk_get(hist->v.items[0], k->real_size);
                if (!gm__pk_u64(rq, &req) || req == 0 || req > x.size)
                    req = x.size;
                x.req = req;
                const gm__pk_t *fr = tk_get(b, k->frames);
                if (!tk_is_list(fr) && tk_is_list(hist) && hist->n)
                    fr = tk_get(hist->v.items[0], k->frames);
                x.frames = tk_is_list(fr) && fr->n ? fr : NULL;
            }
            r.b[r.nb++] = x;
        }
        qsort(r.b, r.nb, sizeof *r.b, tk_block_cmp);
        /* Tile the segment: gaps become free, free neighbours merge. */
        size_t out = 0;
        uint64_t at = addr;
        gm__tk_block_t *tiled = malloc((2 * r.nb + 1) * sizeof *tiled);
        if (tiled == NULL) {
            free(r.b);
            return gm__tk_nomem(s);
        }
        for (size_t j = 0; j <= r.nb; j++) {
            uint64_t start = j < r.nb ? r.b[j].addr : addr + size;
            if (start < at || (j < r.nb && (r.b[j].size == 0 ||
                                            r.b[j].size > addr + size - start))) {
                free(tiled);
                free(r.b);
                return gm__tk_fail(s, "segment %u at 0x%llx: block %zu overlaps another or leaves "
                               "the segment", i, (unsigned long long)addr, j);
            }
            if (start > at)
                tiled[out++] = (gm__tk_block_t){
                    .addr = at, .size = start - at, .id = GM_LAYOUT_FREE};
            if (j < r.nb) {
                tiled[out++] = r.b[j];
                at = r.b[j].addr + r.b[j].size;
            }
        }
        size_t m = 0;
        for (size_t j = 0; j < out; j++) {
            if (m > 0 && !tiled[j].alloc && !tiled[m - 1].alloc)
                tiled[m - 1].size += tiled[j].size;
            else
                tiled[m++] = tiled[j];
        }
        free(r.b);
        r.b = tiled;
        r.nb = m;
        r.cap = 2 * nb + 1;
        if (!gm__tk_range_clear(&dv->st, addr, size)) {
            free(r.b);
            return gm__tk_fail(s, "segment %u at 0x%llx overlaps another segment", i,
                           (unsigned long long)addr);
        }
        if (gm__tk_region_insert(&dv->st, &r)) {
            free(r.b);
            return gm__tk_nomem(s);
        }
        dv->reserved_end += size;
    }
    return 0;
}

/* ---- the snapshot -------------------------------------------------------------------- */

/* The recorded allocator_settings: kept as JSON for the trace's attribute
 * and decoded by sim/torch_rules.c, as the caching policy decodes that
 * attribute when it replays the trace. */
static int tk_settings(tk_snap_t *s, const gm__pk_t *root)
{
    const gm__pk_t *set = tk_get(root, s->k.allocator_settings);
    gm__torch_settings_default(&s->ts);
    if (set == NULL || set->type != GM__PK_DICT)
        return 0;
    s->settings = set;
    int rc = gm__pickle_to_json(set, GM_JSON_MAX_DEPTH, &s->settings_json, s->err);
    if (rc) {
        gm_error_prefix(s->err, "'%s': allocator_settings", s->filename);
        return rc;
    }
    gm_jv_t *jv;
    if ((rc = gm_json_parse(s->settings_json, strlen(s->settings_json), &jv, s->err)) == 0) {
        rc = gm__torch_settings_read(jv, &s->ts, s->err);
        gm_jv_free(jv);
    }
    if (rc)
        gm_error_prefix(s->err, "'%s'", s->filename);
    return rc;
}

/* Round to 512 B alone (no divisions), as the padding vote compares. */
static uint64_t tk_r512(uint64_t x) { return gm__torch_round(x, NULL); }

/* Detect the 32-byte padding (see the file comment). */
static int tk_detect_pad(tk_snap_t *s, const gm__pk_t *segs, const gm__pk_t *traces)
{
    const tk_keys_t *k = &s->k;
    uint64_t pad_blocks = 0, plain_blocks = 0;
    size_t naddr = 0;
    for (uint32_t i = 0; i < segs->n; i++) {
        const gm__pk_t *bl = tk_get(segs->v.items[i], k->blocks);
        if (!tk_is_list(bl))
            continue;
        for (uint32_t j = 0; j < bl->n; j++) {
            const gm__pk_t *b = bl->v.items[j];
            uint64_t size, req;
            naddr++;
            const gm__pk_t *state = tk_get(b, k->state);
            if ((state != NULL && state == k->inactive) ||
                !gm__pk_u64(tk_get(b, k->size), &size) ||
                !gm__pk_u64(tk_get(b, k->requested_size), &req) || req > GM_SIZE_LIMIT)
                continue;
            uint64_t a = tk_r512(req + 32), p = tk_r512(req);
            if (a == p)
                continue;
            pad_blocks += size == a;
            plain_blocks += size == p;
        }
    }
    if (pad_blocks + plain_blocks > 0) {
        s->pad = pad_blocks > 0 && plain_blocks == 0 ? 32 : 0;
        return 0;
    }
    /* No deciding block: vote over the trace's allocation addresses. */
    size_t nalloc = 0;
    for (uint32_t d = 0; d < traces->n; d++)
        if (tk_is_list(traces->v.items[d]))
            nalloc += traces->v.items[d]->n;
    uint64_t *addrs = malloc((nalloc + naddr + 1) * sizeof *addrs);
    if (addrs == NULL)
        return gm__tk_nomem(s);
    size_t n = 0;
    for (uint32_t d = 0; d < traces->n; d++) {
        const gm__pk_t *t = traces->v.items[d];
        for (uint32_t i = 0; tk_is_list(t) && i < t->n; i++)
            if (tk_get(t->v.items[i], k->action) == k->act[TK_ALLOC] &&
                gm__pk_u64(tk_get(t->v.items[i], k->addr), &addrs[n]))
                n++;
    }
    for (uint32_t i = 0; i < segs->n; i++) {
        const gm__pk_t *bl = tk_get(segs->v.items[i], k->blocks);
        for (uint32_t j = 0; tk_is_list(bl) && j < bl->n; j++)
            if (gm__pk_u64(tk_get(bl->v.items[j], k->address), &addrs[n]))
                n++;
    }
    qsort(addrs, n, sizeof *addrs, gm__cmp_u64_qsort);
    uint64_t vote_pad = 0, vote_plain = 0;
    for (uint32_t d = 0; d < traces->n; d++) {
        const gm__pk_t *t = traces->v.items[d];
        for (uint32_t i = 0; tk_is_list(t) && i < t->n; i++) {
            const gm__pk_t *e = t->v.items[i];
            uint64_t a, q;
            if (tk_get(e, k->action) != k->act[TK_ALLOC] || !gm__pk_u64(tk_get(e, k->addr), &a) ||
                !gm__pk_u64(tk_get(e, k->size), &q) || q > GM_SIZE_LIMIT)
                continue;
            uint64_t pa = tk_r512(q + 32), pp = tk_r512(q);
            if (pa == pp)
                continue;
            uint64_t x = a + pa, y = a + pp;
            vote_pad += bsearch(&x, addrs, n, sizeof *addrs, gm__cmp_u64_qsort) != NULL;
            vote_plain += bsearch(&y, addrs, n, sizeof *addrs, gm__cmp_u64_qsort) != NULL;
        }
    }
    free(addrs);
    if (vote_pad >= 16 && vote_pad > 4 * vote_plain)
        s->pad = 32;
    return 0;
}

static void tk_dev_release(tk_dev_t *dv)
{
    free(dv->e);
    gm__tk_state_release(&dv->st);
    gm__tk_frames_release(&dv->fr);
}

static int tk_import(tk_snap_t *s, gm_import_target_t *t)
{
    const gm__pk_t *root = gm__pickle_root(s->p);
    tk_keys_t *k = &s->k;
#define TK_KEY_FIND(name) k->name = gm__pickle_find_str(s->p, #name);
    TK_KEYS(TK_KEY_FIND)
#undef TK_KEY_FIND
    for (int i = 0; i < TK_OTHER; i++)
        k->act[i] = gm__pickle_find_str(s->p, tk_act_names[i]);

    if (tk_is_list(root))
        return gm__tk_fail(s, "a memory snapshot from PyTorch before 2.0 (a bare list of segments, "
                          "without a trace): gmsim needs a PyTorch 2.x snapshot recorded with "
                          "torch.cuda.memory._record_memory_history()");
    if (root->type != GM__PK_DICT)
        return gm__tk_fail(s, "not a PyTorch memory snapshot: the pickle holds no dict");
    const gm__pk_t *segs = tk_get(root, k->segments), *traces = tk_get(root, k->device_traces);
    if (!tk_is_list(segs) || !tk_is_list(traces))
        return gm__tk_fail(s, "not a PyTorch memory snapshot: no '%s' list",
                       tk_is_list(segs) ? "device_traces" : "segments");
    int rc;
    if ((rc = tk_settings(s, root)) || (rc = tk_detect_pad(s, segs, traces)))
        return rc;

    /* The devices: those with entries or segments. */
    unsigned char *used = calloc(TK_MAX_DEVICE + 1, 1);
    if (used == NULL)
        return gm__tk_nomem(s);
    for (uint32_t i = 0; i < traces->n && i <= TK_MAX_DEVICE; i++)
        if (tk_is_list(traces->v.items[i]) && traces->v.items[i]->n)
            used[i] = 1;
    if (traces->n > TK_MAX_DEVICE + 1) {
        free(used);
        return gm__tk_fail(s, "%u device traces, more than gmsim's %u devices", traces->n,
                       TK_MAX_DEVICE + 1);
    }
    for (uint32_t i = 0; i < segs->n; i++) {
        uint64_t dev;
        const gm__pk_t *sg = segs->v.items[i];
        if (sg->type != GM__PK_DICT) {
            free(used);
            return gm__tk_fail(s, "segment %u is not a dict", i);
        }
        if (!gm__pk_u64(tk_get(sg, k->device), &dev))
            dev = 0;
        if (dev > TK_MAX_DEVICE) {
            free(used);
            return gm__tk_fail(s, "segment %u: device %llu out of range", i,
                               (unsigned long long)dev);
        }
        used[dev] = 1;
    }
    size_t ndev = 0;
    for (size_t d = 0; d <= TK_MAX_DEVICE; d++)
        ndev += used[d];
    s->ndevices_traced = ndev;
    if (ndev == 0) {
        free(used);
        return gm__tk_fail(s, "the snapshot records nothing: no segments and no trace entries "
                          "(was _record_memory_history enabled?)");
    }

    /* External annotations, by device. */
    const gm__pk_t *ann = tk_get(root, k->external_annotations);
    tk_note_t *notes = NULL;
    size_t nann = tk_is_list(ann) ? ann->n : 0;
    s->has_annotations = ann != NULL;
    if (nann && (notes = malloc(nann * sizeof *notes)) == NULL) {
        free(used);
        return gm__tk_nomem(s);
    }

    rc = 0;
    for (size_t d = 0; d <= TK_MAX_DEVICE && rc == 0; d++) {
        if (!used[d])
            continue;
        tk_dev_t dv = {.s = s, .device = (unsigned)d};
        size_t nnotes = 0;
        for (uint32_t i = 0; i < nann; i++) {
            const gm__pk_t *a = ann->v.items[i];
            uint64_t dev = 0;
            int64_t us = 0;
            const gm__pk_t *nm = tk_get(a, k->name);
            if (nm == NULL || nm->type != GM__PK_STR || nm->n == 0 ||
                !gm__pk_i64(tk_get(a, k->time_us), &us))
                continue;
            if (gm__pk_u64(tk_get(a, k->device), &dev) && dev != d)
                continue;
            notes[nnotes] = (tk_note_t){.ts_ns = us > 0 ? (uint64_t)us * 1000u : 0,
                                        .name = nm->v.s, .order = nnotes};
            nnotes++;
        }
        if (nnotes > 1)
            qsort(notes, nnotes, sizeof *notes, gm__tk_note_cmp);
        char suffix[16];
        snprintf(suffix, sizeof suffix, "dev%zu", d);
        gm_writer_t *w = NULL;
        if ((rc = tk_read_entries(&dv, d < traces->n ? traces->v.items[d] : NULL)) == 0 &&
            (rc = tk_read_segments(&dv, segs)) == 0 && (rc = gm__tk_undo_all(&dv)) == 0 &&
            (rc = gm_import_begin(t, ndev > 1 ? suffix : NULL, &w, s->err)) == 0 &&
            (rc = gm__tk_write(&dv, w, notes, nnotes)) == 0)
            rc = gm_import_end(t, s->err);
        tk_dev_release(&dv);
    }
    free(notes);
    free(used);
    return rc;
}

int gm_torch_import_buffer(const void *data, size_t len, const char *filename,
                           gm_import_target_t *t, gm_error_t *err)
{
    tk_snap_t s = {.filename = filename ? filename : "<input>", .err = err};
    int rc = gm__pickle_decode(data, len, &s.p, err);
    if (rc) {
        gm_error_prefix(err, "'%s'", s.filename);
        return rc;
    }
    rc = tk_import(&s, t);
    /* Every message names the file (the store's ones do not). */
    if (rc && err != NULL) {
        char quoted[256];
        snprintf(quoted, sizeof quoted, "'%s'", s.filename);
        if (strstr(err->msg, quoted) == NULL)
            gm_error_prefix(err, "'%s'", s.filename);
    }
    for (size_t i = 0; i < s.lines.n; i++)
        free(s.lines.text[i]);
    free(s.lines.text);
    free(s.lines.src);
    free(s.settings_json);
    gm__pickle_free(s.p);
    return rc;
}

int gm_torch_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err)
{
    const char *name = filename ? filename : "<input>";
    size_t cap = 1 << 20, len = 0;
    struct stat st;
    /* A regular file is read in one piece (one more byte shows its end). */
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < TK_MAX_FILE) {
        off_t at = ftello(in);
        if (at >= 0 && at <= st.st_size)
            cap = (size_t)(st.st_size - at) + 1;
    }
    /* huge pages for a large file (base/bulk.h): a 3.9 MB snapshot is 944
     * page faults in small pages */
    gm__bulk_t mem;
    if (gm__bulk_alloc(&mem, cap))
        return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", name);
    char *buf = mem.p;
    for (;;) {
        if (len == cap) {
            gm__bulk_t more;
            if (cap >= TK_MAX_FILE) {
                gm__bulk_release(&mem);
                return gm_error_set(err, GM_EFORMAT, "'%s': larger than %zu bytes", name,
                                    (size_t)TK_MAX_FILE);
            }
            if (gm__bulk_alloc(&more, cap * 2)) {
                gm__bulk_release(&mem);
                return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", name);
            }
            memcpy(more.p, buf, len);
            gm__bulk_release(&mem);
            mem = more;
            buf = mem.p;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, in);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(in)) {
        int e = errno;
        gm__bulk_release(&mem);
        return gm_error_set(err, GM_EIO, "cannot read '%s': %s", name,
                            e ? strerror(e) : "read error");
    }
    int rc = gm_torch_import_buffer(buf, len, name, t, err);
    gm__bulk_release(&mem);
    return rc;
}
