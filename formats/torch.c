/*
 * formats/torch.c — the PyTorch memory snapshot importer (gmsim/torch.h,
 * docs/formats.md for users).
 *
 * Why above 1,500 lines: the rewinder's state already lives in
 * formats/torch_state.c; what is left (reading the snapshot, undoing its
 * entries, frames, writing a device's trace) shares one importer state, and
 * its split into formats/torch/ is issue 31's next step.
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
#include "gmsim/torch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "gmsim/layout.h"
#include "gmsim/store.h"
#include "gmsim/trace.h"
#include "sim/torch_rules.h"
#include "base/bulk.h"
#include "base/idmap.h"
#include "formats/pickle.h"
#include "formats/torch_state.h"

#define TK_MAX_FILE ((size_t)1 << 32)    /* 4 GiB */
#define TK_MAX_DEVICE 65535

enum tk_act {
    TK_ALLOC,
    TK_FREE_REQ,
    TK_FREE,
    TK_SEG_ALLOC,
    TK_SEG_FREE,
    TK_SEG_MAP,
    TK_SEG_UNMAP,
    TK_OOM,
    TK_SNAPSHOT,
    TK_OTHER,
    TK_NACT
};

static const char *const tk_act_names[TK_NACT] = {
    "alloc",       "free_requested", "free_completed", "segment_alloc", "segment_free",
    "segment_map", "segment_unmap",  "oom",            "snapshot",      "",
};

/* The keys and values the importer looks for, as interned nodes. */
#define TK_KEYS(X)                                                                     \
    X(segments) X(device_traces) X(allocator_settings) X(external_annotations) X(device) \
    X(address) X(addr) X(total_size) X(stream) X(segment_type) X(is_expandable) X(blocks) \
    X(size) X(requested_size) X(state) X(frames) X(action) X(time_us) X(name) X(filename) \
    X(line) X(stage) X(history) X(real_size) X(compile_context) X(user_metadata)         \
    X(inactive) X(small) X(large) X(START) X(END) X(empty_cache) X(device_free)

typedef struct tk_keys {
#define TK_KEY_FIELD(k) const gm__pk_t *k;
    TK_KEYS(TK_KEY_FIELD)
#undef TK_KEY_FIELD
    const gm__pk_t *act[TK_NACT];
} tk_keys_t;

typedef struct tk_entry {
    uint64_t addr, size, stream, ts_ns;
    const gm__pk_t *frames; /* list of frame dicts, or NULL */
    uint8_t act;
} tk_entry_t;

/* Frame line table and stack interning (per trace). */
typedef struct tk_stack {
    uint64_t hash;
    uint32_t first, len; /* in tk_frames_t.ids */
    uint32_t index;      /* the writer's frames index (0: none) */
} tk_stack_t;

/* A frames list seen before, by the identity of its frame dicts. */
typedef struct tk_seen {
    uint64_t hash;
    const gm__pk_t *list; /* first list with these frame dicts, NULL: empty cell */
    uint32_t index;
} tk_seen_t;

typedef struct tk_frames {
    uint32_t *ids;
    size_t nids, capids;
    tk_stack_t *stacks;
    size_t nstacks, mask; /* open addressing, capacity mask + 1 */
    tk_seen_t *seen;
    size_t nseen, seen_mask;
    char *text;
    size_t captext;
} tk_frames_t;

/* The text of every visible frame, numbered from 1 (shared by the devices:
 * frame dicts cache their number in their aux field). */
typedef struct tk_lines {
    char **text;
    uint8_t *src; /* 1: a source frame (line > 0) */
    size_t n, cap;
} tk_lines_t;

typedef struct tk_snap {
    const char *filename;
    gm__pickle_t *p;
    tk_keys_t k;
    gm_error_t *err;
    /* settings */
    const gm__pk_t *settings;
    char *settings_json;     /* the settings as JSON, or NULL */
    gm__torch_settings_t ts; /* as decoded (PyTorch's defaults without them) */
    uint64_t pad;       /* detected block padding (0 or 32) */
    int has_time, has_compile_context, has_user_metadata, has_annotations;
    size_t ndevices_traced;
    tk_lines_t lines;
} tk_snap_t;

typedef struct tk_dev {
    tk_snap_t *s;
    unsigned device;
    tk_entry_t *e;
    size_t ne, cap;
    gm__tk_state_t st;
    uint64_t mismatches, skipped;
    uint64_t reserved_end, reserved_start, peak_reserved, seg_allocs, seg_frees;
    uint64_t ooms;         /* oom entries */
    uint64_t oom_capacity; /* the least of reserved then + device_free over them (0: none) */
    int expandable_seen;
    tk_frames_t fr;
} tk_dev_t;

static int tk_fail(tk_snap_t *s, const char *fmt, ...) GM_PRINTF(2, 3);
static int tk_fail(tk_snap_t *s, const char *fmt, ...)
{
    char msg[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gm_error_set(s->err, GM_EFORMAT, "'%s': %s", s->filename, msg);
}

static int tk_nomem(tk_snap_t *s)
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

/* ---- value helpers ------------------------------------------------------------ */

static const gm__pk_t *tk_get(const gm__pk_t *d, const gm__pk_t *key) { return gm__pk_get(d, key); }

static int tk_is_list(const gm__pk_t *v)
{
    return v != NULL && (v->type == GM__PK_LIST || v->type == GM__PK_TUPLE);
}

/* Round a request as the allocator does (sim/torch_rules.h). */
static uint64_t tk_round(const tk_snap_t *s, uint64_t req)
{
    return gm__torch_round(req + s->pad, s->ts.div);
}

/* ---- undoing entries ------------------------------------------------------------- */

/* Undo an alloc at addr: 1 done, 0 mismatch. */
static int tk_undo_alloc(tk_dev_t *dv, uint64_t addr)
{
    size_t ri = gm__tk_region_find(&dv->st, addr);
    if (ri == SIZE_MAX)
        return 0;
    gm__tk_region_t *r = &dv->st.r[ri];
    size_t bi = gm__tk_block_find(r, addr);
    if (r->b[bi].addr != addr || !r->b[bi].alloc)
        return 0;
    /* it was handed out at the start of a free block: a free gap the
     * rewind left before it is the unsplit tail of the block before */
    bi = gm__tk_block_take_tail(r, bi, dv->s->pad, dv->s->ts.div,
                                dv->s->ts.max_split);
    gm__tk_block_release(r, bi);
    return 1;
}

/* Undo a free_completed of a block at addr requested `req`: 1, 0 mismatch,
 * -1 out of memory. */
static int tk_undo_free(tk_dev_t *dv, const tk_entry_t *e)
{
    size_t ri = gm__tk_region_find(&dv->st, e->addr);
    if (ri == SIZE_MAX)
        return 0;
    gm__tk_region_t *r = &dv->st.r[ri];
    size_t bi = gm__tk_block_find(r, e->addr);
    gm__tk_block_t f = r->b[bi];
    if (f.alloc)
        return 0;
    uint64_t fe = f.addr + f.size, room = fe - e->addr;
    uint64_t s = tk_round(dv->s, e->size);
    if (s >= room ||
        !gm__torch_should_split(s, room - s, r->expandable || r->pool == GM_POOL_SMALL,
                                dv->s->ts.max_split))
        s = room;
    gm__tk_block_t nb[3];
    size_t n = 0;
    if (e->addr > f.addr)
        nb[n++] = (gm__tk_block_t){
            .addr = f.addr, .size = e->addr - f.addr, .id = GM_LAYOUT_FREE};
    nb[n++] = (gm__tk_block_t){.addr = e->addr,
                               .size = s,
                               .req = e->size ? e->size : s,
                               .frames = e->frames,
                               .id = GM_LAYOUT_FREE,
                               .alloc = 1,
                               .carved = 1};
    if (e->addr + s < fe)
        nb[n++] = (gm__tk_block_t){
            .addr = e->addr + s, .size = fe - e->addr - s, .id = GM_LAYOUT_FREE};
    return gm__tk_block_replace(r, bi, nb, n) ? -1 : 1;
}

static int tk_undo_seg_alloc(tk_dev_t *dv, const tk_entry_t *e)
{
    size_t ri = gm__tk_region_find(&dv->st, e->addr);
    if (ri == SIZE_MAX)
        return 0;
    gm__tk_region_t *r = &dv->st.r[ri];
    if (r->addr != e->addr || r->size != e->size || r->nb != 1 || r->b[0].alloc)
        return 0;
    gm__tk_region_remove(&dv->st, ri);
    return 1;
}

static int tk_undo_seg_free(tk_dev_t *dv, const tk_entry_t *e)
{
    if (e->size == 0 || e->addr + e->size < e->addr ||
        !gm__tk_range_clear(&dv->st, e->addr, e->size))
        return 0;
    gm__tk_region_t r;
    uint8_t pool = e->size <= GM_TORCH_SMALL_BUFFER ? GM_POOL_SMALL : GM_POOL_LARGE;
    if (gm__tk_region_whole_free(e->addr, e->size, e->stream, pool, 0, &r))
        return -1;
    if (gm__tk_region_insert(&dv->st, &r)) {
        free(r.b);
        return -1;
    }
    return 1;
}

/* Undo a segment_map: cut the (free) range out of its region. */
static int tk_undo_map(tk_dev_t *dv, const tk_entry_t *e)
{
    size_t ri = gm__tk_region_find(&dv->st, e->addr);
    if (ri == SIZE_MAX || e->size == 0)
        return 0;
    gm__tk_region_t *r = &dv->st.r[ri];
    size_t bi = gm__tk_block_find(r, e->addr);
    const gm__tk_block_t f = r->b[bi];
    if (f.alloc || e->size > f.addr + f.size - e->addr)
        return 0;
    uint64_t end = e->addr + e->size;
    gm__tk_region_t right = {0};
    int have_right = end < r->addr + r->size;
    if (have_right) {
        right.addr = end;
        right.size = r->addr + r->size - end;
        right.stream = r->stream;
        right.pool = r->pool;
        right.expandable = r->expandable;
        size_t n = r->nb - bi; /* block bi (its part after end, if any) and the rest */
        right.b = malloc((n + 1) * sizeof *right.b);
        if (right.b == NULL)
            return -1;
        right.cap = n + 1;
        size_t k = 0;
        if (f.addr + f.size > end)
            right.b[k++] = (gm__tk_block_t){.addr = end, .size = f.addr + f.size - end,
                                            .id = GM_LAYOUT_FREE};
        for (size_t j = bi + 1; j < r->nb; j++)
            right.b[k++] = r->b[j];
        right.nb = k;
    }
    /* The left part keeps blocks before bi and the part of bi before addr. */
    r->nb = bi;
    if (e->addr > f.addr)
        r->b[r->nb++] = (gm__tk_block_t){.addr = f.addr, .size = e->addr - f.addr,
                                         .id = GM_LAYOUT_FREE};
    r->size = e->addr - r->addr;
    if (r->size == 0)
        gm__tk_region_remove(&dv->st, ri);
    if (have_right && gm__tk_region_insert(&dv->st, &right)) {
        free(right.b);
        return -1;
    }
    return 1;
}

/* The pool of a new expandable range: the nearest expandable region's of
 * the same stream, else by page size (20 MiB pages are the large pool's). */
static uint8_t tk_guess_pool(const tk_dev_t *dv, const tk_entry_t *e)
{
    uint64_t best = UINT64_MAX;
    uint8_t pool = e->size % gm__torch_page_size(0) == 0 ? GM_POOL_LARGE : GM_POOL_SMALL;
    for (size_t i = 0; i < dv->st.n; i++) {
        const gm__tk_region_t *r = &dv->st.r[i];
        if (!r->expandable || r->stream != e->stream)
            continue;
        uint64_t d = r->addr > e->addr ? r->addr - e->addr : e->addr - r->addr;
        if (d < best) {
            best = d;
            pool = r->pool;
        }
    }
    return pool;
}

/* Undo a segment_unmap: a free mapped range joins its neighbours. */
static int tk_undo_unmap(tk_dev_t *dv, const tk_entry_t *e)
{
    if (e->size == 0 || e->addr + e->size < e->addr ||
        !gm__tk_range_clear(&dv->st, e->addr, e->size))
        return 0;
    gm__tk_region_t r;
    if (gm__tk_region_whole_free(e->addr, e->size, e->stream, tk_guess_pool(dv, e), 1, &r))
        return -1;
    size_t i = gm__tk_region_lower(&dv->st, e->addr);
    gm__tk_state_t *st = &dv->st;
    /* Join the next region. */
    if (i < st->n && st->r[i].addr == e->addr + e->size && st->r[i].expandable &&
        st->r[i].stream == e->stream) {
        gm__tk_region_t *nx = &st->r[i];
        r.pool = nx->pool;
        if (gm__tk_grow((void **)&r.b, &r.cap, 1 + nx->nb, sizeof *r.b)) {
            free(r.b);
            return -1;
        }
        size_t k = 0;
        if (!nx->b[0].alloc) {
            r.b[0].size += nx->b[0].size;
            k = 1;
        }
        memcpy(r.b + 1, nx->b + k, (nx->nb - k) * sizeof *r.b);
        r.nb = 1 + nx->nb - k;
        r.size += nx->size;
        gm__tk_region_remove(st, i);
    }
    /* Join the previous region. */
    if (i > 0 && st->r[i - 1].addr + st->r[i - 1].size == e->addr && st->r[i - 1].expandable &&
        st->r[i - 1].stream == e->stream) {
        gm__tk_region_t *pv = &st->r[i - 1];
        if (gm__tk_grow((void **)&pv->b, &pv->cap, pv->nb + r.nb, sizeof *pv->b)) {
            free(r.b);
            return -1;
        }
        size_t k = 0;
        if (!pv->b[pv->nb - 1].alloc) {
            pv->b[pv->nb - 1].size += r.b[0].size;
            k = 1;
        }
        memcpy(pv->b + pv->nb, r.b + k, (r.nb - k) * sizeof *r.b);
        pv->nb += r.nb - k;
        pv->size += r.size;
        free(r.b);
        return 1;
    }
    if (gm__tk_region_insert(st, &r)) {
        free(r.b);
        return -1;
    }
    return 1;
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
            return tk_fail(s, "%s %zu: no '%s'", where, idx, kname);
        return 0;
    }
    if (!gm__pk_u64(v, out))
        return tk_fail(s, "%s %zu: '%s' is not a non-negative integer", where, idx, kname);
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
        return tk_fail(s, "device_traces[%u] is not a list", dv->device);
    dv->e = malloc((list->n ? list->n : 1) * sizeof *dv->e);
    if (dv->e == NULL)
        return tk_nomem(s);
    /* key position hints: entries share their key order */
    uint32_t h_act = 0, h_addr = 0, h_size = 0, h_stream = 0, h_time = 0, h_frames = 0,
             h_cc = 0, h_um = 0, h_free = 0;
    for (uint32_t i = 0; i < list->n; i++) {
        const gm__pk_t *d = list->v.items[i];
        if (d->type != GM__PK_DICT)
            return tk_fail(s, "%s %u is not a dict", where, i);
        const gm__pk_t *a = gm__pk_geth(d, k->action, &h_act);
        if (a == NULL || a->type != GM__PK_STR)
            return tk_fail(s, "%s %u: no 'action' string", where, i);
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
            return tk_fail(s, "%s %u: size %llu above the 2^48 limit", where, i,
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
                return tk_fail(s, "%s %u: 'time_us' is not an integer", where, i);
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
    return x->addr < y->addr ? -1 : x->addr > y->addr;
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
            return tk_fail(s, "segment %u: size %llu out of range", i, (unsigned long long)size);
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
            return tk_nomem(s);
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
                return tk_fail(s, "segment %u at 0x%llx: block %zu address 0x%llx (%llu bytes) "
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
            return tk_nomem(s);
        }
        for (size_t j = 0; j <= r.nb; j++) {
            uint64_t start = j < r.nb ? r.b[j].addr : addr + size;
            if (start < at || (j < r.nb && (r.b[j].size == 0 ||
                                            r.b[j].size > addr + size - start))) {
                free(tiled);
                free(r.b);
                return tk_fail(s, "segment %u at 0x%llx: block %zu overlaps another or leaves "
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
            return tk_fail(s, "segment %u at 0x%llx overlaps another segment", i,
                           (unsigned long long)addr);
        }
        if (gm__tk_region_insert(&dv->st, &r)) {
            free(r.b);
            return tk_nomem(s);
        }
        dv->reserved_end += size;
    }
    return 0;
}

/* ---- the backward pass ------------------------------------------------------------ */

static int tk_undo_all(tk_dev_t *dv)
{
    int64_t reserved = (int64_t)dv->reserved_end;
    for (size_t i = dv->ne; i-- > 0;) {
        const tk_entry_t *e = &dv->e[i];
        int r = 1;
        switch (e->act) {
        case TK_ALLOC: r = tk_undo_alloc(dv, e->addr); break;
        case TK_FREE: r = tk_undo_free(dv, e); break;
        case TK_SEG_ALLOC:
            r = tk_undo_seg_alloc(dv, e);
            reserved -= (int64_t)e->size;
            break;
        case TK_SEG_MAP:
            r = tk_undo_map(dv, e);
            reserved -= (int64_t)e->size;
            break;
        case TK_SEG_FREE:
            r = tk_undo_seg_free(dv, e);
            reserved += (int64_t)e->size;
            break;
        case TK_SEG_UNMAP:
            r = tk_undo_unmap(dv, e);
            reserved += (int64_t)e->size;
            break;
        default: break;
        }
        if (r < 0)
            return tk_nomem(dv->s);
        if (r == 0)
            dv->mismatches++;
        if (reserved < 0) {
            dv->mismatches++;
            reserved = 0;
        }
    }
    dv->reserved_start = (uint64_t)reserved;
    /* Forward: the peak and the counts. */
    uint64_t cur = dv->reserved_start;
    dv->peak_reserved = cur;
    for (size_t i = 0; i < dv->ne; i++) {
        const tk_entry_t *e = &dv->e[i];
        if (e->act == TK_SEG_ALLOC || e->act == TK_SEG_MAP) {
            cur += e->size;
            dv->seg_allocs++;
        } else if (e->act == TK_SEG_FREE || e->act == TK_SEG_UNMAP) {
            cur = cur >= e->size ? cur - e->size : 0;
            dv->seg_frees++;
        }
        if (cur > dv->peak_reserved)
            dv->peak_reserved = cur;
        if (e->act == TK_OOM) {
            /* the allocator's capacity then: what it held (its cached
             * blocks already released, as their segment_free entries
             * before this one say) and what the device still had free */
            dv->ooms++;
            if (e->addr != 0 && (dv->oom_capacity == 0 || cur + e->addr < dv->oom_capacity))
                dv->oom_capacity = cur + e->addr;
        }
    }
    return 0;
}

/* ---- frames -------------------------------------------------------------------------- */

static void tk_frames_release(tk_frames_t *f)
{
    free(f->seen);
    free(f->ids);
    free(f->stacks);
    free(f->text);
    memset(f, 0, sizeof *f);
}

/* PyTorch's viewer hides these frames (unwinding, dispatch, interpreter). */
static int tk_frame_hidden(const char *name, const char *file)
{
    static const char *const names[] = {"unwind::unwind", "CapturedTraceback::gather",
                                        "gather_with_cpp", "_start", "__libc_start_main",
                                        "PyEval_", "PyObject_", "PyFunction_"};
    static const char *const files[] = {"core/boxing", "/Register", "/Redispatch",
                                        "pythonrun.c", "Modules/main.c", "Objects/call.c",
                                        "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
                                        "cpython/abstract.h"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strstr(name, names[i]))
            return 1;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (strstr(file, files[i]))
            return 1;
    return 0;
}

/* The number (1-based) of frame dict fd's line, 0 when it is hidden, or -1
 * when out of memory.  The number is cached in the dict node's aux field:
 * aux = number + 1, so 1 means hidden. */
static int64_t tk_frame_line(tk_dev_t *dv, gm__pk_t *fd)
{
    if (fd->aux)
        return (int64_t)fd->aux - 1;
    const tk_keys_t *k = &dv->s->k;
    const gm__pk_t *nm = tk_get(fd, k->name), *fl = tk_get(fd, k->filename),
                   *ln = tk_get(fd, k->line);
    const char *name = nm && nm->type == GM__PK_STR ? nm->v.s : "?";
    const char *file = fl && fl->type == GM__PK_STR ? fl->v.s : "?";
    int64_t line = 0;
    gm__pk_i64(ln, &line);
    if (fd->type != GM__PK_DICT || tk_frame_hidden(name, file)) {
        fd->aux = 1;
        return 0;
    }
    tk_lines_t *f = &dv->s->lines;
    if (f->n >= UINT32_MAX - 2)
        return -1;
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 256;
        char **t = realloc(f->text, cap * sizeof *t);
        if (t == NULL)
            return -1;
        f->text = t;
        uint8_t *src = realloc(f->src, cap);
        if (src == NULL)
            return -1;
        f->src = src;
        f->cap = cap;
    }
    size_t len = strlen(name) + strlen(file) + 32;
    char *text = malloc(len);
    if (text == NULL)
        return -1;
    /* One line of the frames text: no newline inside. */
    /* Installed packages are named from their package folder on. */
    static const char *const roots[] = {"/site-packages/", "/dist-packages/"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        const char *r = strstr(file, roots[i]);
        if (r != NULL && r[strlen(roots[i])] != '\0')
            file = r + strlen(roots[i]);
    }
    snprintf(text, len, "%s:%lld:%s", file, (long long)line, name);
    for (char *c = text; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    f->src[f->n] = line > 0;
    f->text[f->n++] = text;
    fd->aux = (uint32_t)f->n + 1;
    return (int64_t)f->n;
}

static int tk_frames_rehash(tk_frames_t *f)
{
    size_t cap = f->stacks ? 2 * (f->mask + 1) : 1024;
    tk_stack_t *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return -1;
    for (size_t i = 0; f->stacks && i <= f->mask; i++) {
        if (f->stacks[i].len == 0)
            continue;
        size_t j = f->stacks[i].hash & (cap - 1);
        while (t[j].len)
            j = (j + 1) & (cap - 1);
        t[j] = f->stacks[i];
    }
    free(f->stacks);
    f->stacks = t;
    f->mask = cap - 1;
    return 0;
}

/* The writer's frames index of stack `list` (0 when it has no visible frame). */
static int tk_frames_index_new(tk_dev_t *dv, gm_writer_t *w, const gm__pk_t *list,
                               uint32_t *index);

/* The writer's frames index of stack `list` (0 when it has no visible
 * frame).  Frame dicts are shared nodes, so a list of the same dicts as one
 * seen before is looked up by their addresses, without formatting. */
static int tk_frames_index(tk_dev_t *dv, gm_writer_t *w, const gm__pk_t *list, uint32_t *index)
{
    *index = 0;
    if (list == NULL)
        return 0;
    tk_frames_t *f = &dv->fr;
    /* A few frames make the hash; memcmp settles equality. */
    uint64_t h = list->n;
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t at = (uint32_t)((uint64_t)i * list->n / 8);
        h = (h ^ (uint64_t)(uintptr_t)list->v.items[at]) * UINT64_C(0x9e3779b97f4a7c15);
    }
    h ^= h >> 29;
    if (f->seen == NULL || 2 * (f->nseen + 1) > f->seen_mask + 1) {
        size_t cap = f->seen ? 2 * (f->seen_mask + 1) : 1024;
        tk_seen_t *t = calloc(cap, sizeof *t);
        if (t == NULL)
            return tk_nomem(dv->s);
        for (size_t i = 0; f->seen && i <= f->seen_mask; i++) {
            if (f->seen[i].list == NULL)
                continue;
            size_t j = f->seen[i].hash & (cap - 1);
            while (t[j].list)
                j = (j + 1) & (cap - 1);
            t[j] = f->seen[i];
        }
        free(f->seen);
        f->seen = t;
        f->seen_mask = cap - 1;
    }
    size_t j = h & f->seen_mask;
    for (; f->seen[j].list; j = (j + 1) & f->seen_mask) {
        const tk_seen_t *c = &f->seen[j];
        if (c->hash == h && c->list->n == list->n &&
            memcmp(c->list->v.items, list->v.items, list->n * sizeof *list->v.items) == 0) {
            *index = c->index;
            return 0;
        }
    }
    int rc = tk_frames_index_new(dv, w, list, index);
    if (rc)
        return rc;
    f->seen[j] = (tk_seen_t){.hash = h, .list = list, .index = *index};
    f->nseen++;
    return 0;
}

/* tk_frames_index for a list of frame dicts not seen in this order. */
static int tk_frames_index_new(tk_dev_t *dv, gm_writer_t *w, const gm__pk_t *list,
                               uint32_t *index)
{
    tk_frames_t *f = &dv->fr;
    size_t first = f->nids;
    if (gm__tk_grow((void **)&f->ids, &f->capids, f->nids + list->n, sizeof *f->ids))
        return tk_nomem(dv->s);
    const tk_lines_t *ln = &dv->s->lines;
    size_t nsrc = 0;
    for (uint32_t i = 0; i < list->n; i++) {
        int64_t n = tk_frame_line(dv, list->v.items[i]);
        if (n < 0)
            return tk_nomem(dv->s);
        if (n == 0)
            continue;
        f->ids[f->nids++] = (uint32_t)n;
        nsrc += ln->src[n - 1];
    }
    /* Source frames only when there are any (see the file comment). */
    if (nsrc > 0 && nsrc < f->nids - first) {
        size_t k = first;
        for (size_t i = first; i < f->nids; i++)
            if (ln->src[f->ids[i] - 1])
                f->ids[k++] = f->ids[i];
        f->nids = k;
    }
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = first; i < f->nids; i++)
        h = (h ^ f->ids[i]) * UINT64_C(0x100000001b3);
    size_t len = f->nids - first;
    if (len == 0)
        return 0;
    h ^= h >> 31;
    if ((f->stacks == NULL || 2 * (f->nstacks + 1) > f->mask + 1) && tk_frames_rehash(f))
        return tk_nomem(dv->s);
    size_t j = h & f->mask;
    for (; f->stacks[j].len; j = (j + 1) & f->mask) {
        const tk_stack_t *st = &f->stacks[j];
        if (st->hash == h && st->len == len &&
            memcmp(f->ids + st->first, f->ids + first, len * sizeof *f->ids) == 0) {
            f->nids = first; /* drop the duplicate */
            *index = st->index;
            return 0;
        }
    }
    /* A new stack: its text, interned by the writer. */
    size_t need = 1;
    for (size_t i = 0; i < len; i++)
        need += strlen(ln->text[f->ids[first + i] - 1]) + 1;
    if (gm__tk_grow((void **)&f->text, &f->captext, need, 1))
        return tk_nomem(dv->s);
    size_t at = 0;
    for (size_t i = 0; i < len; i++) {
        const char *line = ln->text[f->ids[first + i] - 1];
        size_t l = strlen(line);
        if (i)
            f->text[at++] = '\n';
        memcpy(f->text + at, line, l);
        at += l;
    }
    f->text[at] = '\0';
    int rc = gm_writer_frames(w, f->text, index, dv->s->err);
    if (rc)
        return rc;
    f->stacks[j] = (tk_stack_t){.hash = h, .first = (uint32_t)first, .len = (uint32_t)len,
                                .index = *index};
    f->nstacks++;
    return 0;
}

/* ---- writing one device's trace --------------------------------------------------------- */

typedef struct tk_note {
    uint64_t ts_ns;
    const char *name;
    size_t order; /* position in the snapshot: equal times keep it */
} tk_note_t;

static int tk_note_cmp(const void *a, const void *b)
{
    const tk_note_t *x = a, *y = b;
    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Same non-empty frames (frame dicts are shared nodes). */
static int tk_same_frames(const gm__pk_t *a, const gm__pk_t *b)
{
    if (a == NULL || b == NULL || a->n != b->n)
        return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->v.items[i] != b->v.items[i])
            return 0;
    return 1;
}

static int tk_frames_name(const tk_keys_t *k, const gm__pk_t *fr, const gm__pk_t *name)
{
    if (fr == NULL || name == NULL)
        return 0;
    for (uint32_t i = 0; i < fr->n; i++)
        if (tk_get(fr->v.items[i], k->name) == name)
            return 1;
    return 0;
}

/* Whether the run of segment frees [i, j) is the allocator's own (an OOM
 * next to it, or the same call retrying a segment allocation right after). */
static int tk_run_explained(const tk_dev_t *dv, size_t i, size_t j)
{
    const tk_entry_t *e = dv->e;
    if ((i > 0 && e[i - 1].act == TK_OOM) || (j < dv->ne && e[j].act == TK_OOM))
        return 1;
    if (j < dv->ne && (e[j].act == TK_SEG_ALLOC || e[j].act == TK_SEG_MAP) &&
        tk_same_frames(e[i].frames, e[j].frames) &&
        !tk_frames_name(&dv->s->k, e[i].frames, dv->s->k.empty_cache))
        return 1;
    return 0;
}

/* Stream handle → writer index with a one-entry cache. */
typedef struct tk_streams {
    uint64_t last;
    uint32_t index;
    int have;
} tk_streams_t;

static int tk_stream(gm_writer_t *w, tk_streams_t *c, uint64_t handle, uint32_t *index,
                     gm_error_t *err)
{
    if (c->have && c->last == handle) {
        *index = c->index;
        return 0;
    }
    int rc = gm_writer_stream(w, handle, index, err);
    if (rc == 0) {
        c->have = 1;
        c->last = handle;
        c->index = *index;
    }
    return rc;
}

static int tk_attrs(tk_dev_t *dv, gm_writer_t *w, uint64_t npre)
{
    tk_snap_t *s = dv->s;
    gm_error_t *err = s->err;
    char buf[512];
    int rc;
    if ((rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "torch_snapshot", err)) ||
        (rc = gm_writer_attr_int(w, GM_ATTR_DEVICE, (int64_t)dv->device, err)))
        return rc;
    if (s->settings_json != NULL &&
        (rc = gm_writer_attr_json(w, GM_ATTR_ALLOCATOR_SETTINGS, s->settings_json, err)))
        return rc;
    if (s->pad && ((rc = gm_writer_attr_int(w, GM_ATTR_BLOCK_PAD, (int64_t)s->pad, err)) ||
                   (rc = gm_writer_attr_int(w, GM_ATTR_BLOCK_ROUND, 512, err))))
        return rc;
    int expandable = dv->expandable_seen || (s->settings != NULL && s->ts.expandable);
    if ((rc = gm_writer_attr_json(w, "expandable_segments", expandable ? "true" : "false", err)))
        return rc;
    snprintf(buf, sizeof buf,
             "{\"peak_reserved\": %llu, \"reserved_at_start\": %llu, \"reserved_at_end\": %llu, "
             "\"segment_allocs\": %llu, \"segment_frees\": %llu}",
             (unsigned long long)dv->peak_reserved, (unsigned long long)dv->reserved_start,
             (unsigned long long)dv->reserved_end, (unsigned long long)dv->seg_allocs,
             (unsigned long long)dv->seg_frees);
    if ((rc = gm_writer_attr_json(w, "recorded", buf, err)) ||
        (rc = gm_writer_attr_int(w, GM_ATTR_PREEXISTING, (int64_t)npre, err)))
        return rc;
    if (dv->ooms && (rc = gm_writer_attr_int(w, GM_ATTR_OOMS, (int64_t)dv->ooms, err)))
        return rc;
    if (dv->oom_capacity &&
        (rc = gm_writer_attr_int(w, GM_ATTR_OOM_CAPACITY, (int64_t)dv->oom_capacity, err)))
        return rc;
    /* Features: what this snapshot's PyTorch recorded. */
    int has[TK_NACT] = {0};
    for (size_t i = 0; i < dv->ne; i++)
        has[dv->e[i].act] = 1;
    size_t at = 0;
    const char *feat[16];
    size_t nf = 0;
    if (s->has_time)
        feat[nf++] = "time_us";
    if (s->settings)
        feat[nf++] = "allocator_settings";
    if (s->has_annotations)
        feat[nf++] = "external_annotations";
    if (s->has_compile_context)
        feat[nf++] = "compile_context";
    if (s->has_user_metadata)
        feat[nf++] = "user_metadata";
    if (has[TK_SEG_ALLOC] || has[TK_SEG_FREE])
        feat[nf++] = "segment_events";
    if (has[TK_SEG_MAP] || has[TK_SEG_UNMAP])
        feat[nf++] = "segment_map";
    if (expandable)
        feat[nf++] = "expandable_segments";
    if (has[TK_OOM])
        feat[nf++] = "oom";
    if (s->ndevices_traced > 1)
        feat[nf++] = "multi_device";
    at += (size_t)snprintf(buf + at, sizeof buf - at, "[");
    for (size_t i = 0; i < nf; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s\"%s\"", i ? ", " : "", feat[i]);
    snprintf(buf + at, sizeof buf - at, "]");
    if ((rc = gm_writer_attr_json(w, "features", buf, err)))
        return rc;
    if (dv->mismatches &&
        (rc = gm_writer_attr_int(w, GM_ATTR_RECONSTRUCTION_MISMATCHES, (int64_t)dv->mismatches, err)))
        return rc;
    if (dv->skipped && (rc = gm_writer_attr_int(w, "skipped_entries", (int64_t)dv->skipped, err)))
        return rc;
    return 0;
}

/* Write device dv's trace through w: layout, pre-existing ALLOCs, entries. */
static int tk_write(tk_dev_t *dv, gm_writer_t *w, const tk_note_t *notes, size_t nnotes)
{
    tk_snap_t *s = dv->s;
    gm_error_t *err = s->err;
    int rc = 0;
    tk_streams_t sc = {0};
    gm__idmap_t live;
    gm__idmap_init(&live);
    gm_layout_t lay = {0};
    uint64_t ts0 = dv->ne ? dv->e[0].ts_ns : nnotes ? notes[0].ts_ns : 0;
    /* Number the pre-existing allocations in layout order. */
    size_t nblocks = 0;
    uint64_t npre = 0;
    for (size_t i = 0; i < dv->st.n; i++) {
        nblocks += dv->st.r[i].nb;
        for (size_t j = 0; j < dv->st.r[i].nb; j++)
            if (dv->st.r[i].b[j].alloc)
                dv->st.r[i].b[j].id = (int64_t)npre++;
    }
    lay.segments = calloc(dv->st.n ? dv->st.n : 1, sizeof *lay.segments);
    lay.blocks = calloc(nblocks ? nblocks : 1, sizeof *lay.blocks);
    if (lay.segments == NULL || lay.blocks == NULL) {
        rc = tk_nomem(s);
        goto out;
    }
    uint64_t next_id = 0;
    for (size_t i = 0; i < dv->st.n; i++) {
        const gm__tk_region_t *r = &dv->st.r[i];
        gm_layout_segment_t *ls = &lay.segments[lay.nsegments++];
        ls->address = r->addr;
        ls->size = r->size;
        ls->stream = r->stream;
        ls->device = (uint16_t)dv->device;
        ls->pool = r->pool;
        ls->expandable = r->expandable;
        ls->first_block = lay.nblocks;
        ls->nblocks = r->nb;
        if ((rc = tk_stream(w, &sc, r->stream, &ls->stream_index, err)))
            goto out;
        for (size_t j = 0; j < r->nb; j++) {
            const gm__tk_block_t *b = &r->b[j];
            gm_layout_block_t *lb = &lay.blocks[lay.nblocks++];
            lb->offset = b->addr - r->addr;
            lb->size = b->size;
            lb->requested = b->alloc ? b->req : 0;
            lb->id = b->alloc ? b->id : GM_LAYOUT_FREE;
            if (!b->alloc)
                continue;
            gm_event_t ev = {.op = GM_OP_ALLOC, .id = next_id++, .size = b->req, .addr = b->addr,
                             .stream = ls->stream_index, .device = (uint16_t)dv->device,
                             .ts_ns = ts0, .flags = GM_EVENT_PREEXISTING};
            if ((rc = tk_frames_index(dv, w, b->frames, &ev.frames)) ||
                (rc = gm_writer_add(w, &ev, err)))
                goto out;
            if (b->addr == GM__IDMAP_EMPTY || gm__idmap_put(&live, b->addr, ev.id)) {
                rc = tk_nomem(s);
                goto out;
            }
        }
    }
    if ((rc = gm_writer_layout(w, &lay, err))) {
        gm_error_prefix(err, "'%s' device %u", s->filename, dv->device);
        goto out;
    }
    uint32_t tag_oom = 0, tag_empty = 0;
    int have_oom = 0, have_empty = 0;
    size_t note = 0;
    for (size_t i = 0; i < dv->ne; i++) {
        const tk_entry_t *e = &dv->e[i];
        gm_event_t ev = {.ts_ns = e->ts_ns, .addr = e->addr, .device = (uint16_t)dv->device};
        for (; note < nnotes && s->has_time && notes[note].ts_ns <= e->ts_ns; note++) {
            gm_event_t m = {.op = GM_OP_MARK, .ts_ns = notes[note].ts_ns,
                            .device = (uint16_t)dv->device};
            if ((rc = gm_writer_tag(w, notes[note].name, &m.tag, err)) ||
                (rc = gm_writer_add(w, &m, err)))
                goto out;
        }
        switch (e->act) {
        case TK_ALLOC:
            ev.op = GM_OP_ALLOC;
            ev.id = next_id++;
            ev.size = e->size;
            if ((rc = tk_stream(w, &sc, e->stream, &ev.stream, err)) ||
                (rc = tk_frames_index(dv, w, e->frames, &ev.frames)))
                goto out;
            if (e->addr != GM__IDMAP_EMPTY) {
                /* an address still live: its earlier allocation's free was
                 * lost; the new one takes the address */
                int r = gm__idmap_insert(&live, e->addr, ev.id);
                if (r == 1) {
                    dv->mismatches++;
                    r = gm__idmap_put(&live, e->addr, ev.id);
                }
                if (r < 0) {
                    rc = tk_nomem(s);
                    goto out;
                }
            }
            break;
        case TK_FREE:
            if (!gm__idmap_remove(&live, e->addr, &ev.id)) {
                dv->mismatches++;
                continue;
            }
            ev.op = GM_OP_FREE;
            if ((rc = tk_stream(w, &sc, e->stream, &ev.stream, err)))
                goto out;
            break;
        case TK_SEG_FREE:
        case TK_SEG_UNMAP:
            if (i == 0 || (dv->e[i - 1].act != TK_SEG_FREE && dv->e[i - 1].act != TK_SEG_UNMAP)) {
                size_t j = i;
                while (j < dv->ne && (dv->e[j].act == TK_SEG_FREE || dv->e[j].act == TK_SEG_UNMAP))
                    j++;
                if (!tk_run_explained(dv, i, j)) {
                    if (!have_empty && (rc = gm_writer_tag(w, "empty_cache", &tag_empty, err)))
                        goto out;
                    have_empty = 1;
                    gm_event_t m = {.op = GM_OP_MARK, .tag = tag_empty, .ts_ns = e->ts_ns,
                                    .device = (uint16_t)dv->device};
                    if ((rc = gm_writer_add(w, &m, err)))
                        goto out;
                }
            }
            /* fall through */
        case TK_SEG_ALLOC:
        case TK_SEG_MAP:
            ev.op = e->act == TK_SEG_ALLOC   ? GM_OP_SEG_ALLOC
                    : e->act == TK_SEG_FREE  ? GM_OP_SEG_FREE
                    : e->act == TK_SEG_MAP   ? GM_OP_SEG_MAP
                                             : GM_OP_SEG_UNMAP;
            ev.size = e->size;
            if ((rc = tk_stream(w, &sc, e->stream, &ev.stream, err)))
                goto out;
            break;
        case TK_OOM:
            if (!have_oom && (rc = gm_writer_tag(w, "oom", &tag_oom, err)))
                goto out;
            have_oom = 1;
            /* the request that failed (the allocator's rounding of it),
             * its stream and stack, and the device's free bytes then in
             * addr, as PyTorch keeps them (docs/formats.md) */
            ev.op = GM_OP_MARK;
            ev.tag = tag_oom;
            ev.size = e->size;
            if ((rc = tk_stream(w, &sc, e->stream, &ev.stream, err)) ||
                (rc = tk_frames_index(dv, w, e->frames, &ev.frames)))
                goto out;
            break;
        default:
            continue;
        }
        if ((rc = gm_writer_add(w, &ev, err)))
            goto out;
    }
    for (; note < nnotes; note++) {
        gm_event_t m = {.op = GM_OP_MARK, .ts_ns = notes[note].ts_ns,
                        .device = (uint16_t)dv->device};
        if ((rc = gm_writer_tag(w, notes[note].name, &m.tag, err)) ||
            (rc = gm_writer_add(w, &m, err)))
            goto out;
    }
    rc = tk_attrs(dv, w, npre);
out:
    if (rc && err->msg[0] != '\'')
        gm_error_prefix(err, "'%s' device %u", s->filename, dv->device);
    gm__idmap_release(&live);
    free(lay.segments);
    free(lay.blocks);
    return rc;
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

static int tk_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

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
        return tk_nomem(s);
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
    qsort(addrs, n, sizeof *addrs, tk_u64_cmp);
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
            vote_pad += bsearch(&x, addrs, n, sizeof *addrs, tk_u64_cmp) != NULL;
            vote_plain += bsearch(&y, addrs, n, sizeof *addrs, tk_u64_cmp) != NULL;
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
    tk_frames_release(&dv->fr);
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
        return tk_fail(s, "a memory snapshot from PyTorch before 2.0 (a bare list of segments, "
                          "without a trace): gmsim needs a PyTorch 2.x snapshot recorded with "
                          "torch.cuda.memory._record_memory_history()");
    if (root->type != GM__PK_DICT)
        return tk_fail(s, "not a PyTorch memory snapshot: the pickle holds no dict");
    const gm__pk_t *segs = tk_get(root, k->segments), *traces = tk_get(root, k->device_traces);
    if (!tk_is_list(segs) || !tk_is_list(traces))
        return tk_fail(s, "not a PyTorch memory snapshot: no '%s' list",
                       tk_is_list(segs) ? "device_traces" : "segments");
    int rc;
    if ((rc = tk_settings(s, root)) || (rc = tk_detect_pad(s, segs, traces)))
        return rc;

    /* The devices: those with entries or segments. */
    unsigned char *used = calloc(TK_MAX_DEVICE + 1, 1);
    if (used == NULL)
        return tk_nomem(s);
    for (uint32_t i = 0; i < traces->n && i <= TK_MAX_DEVICE; i++)
        if (tk_is_list(traces->v.items[i]) && traces->v.items[i]->n)
            used[i] = 1;
    if (traces->n > TK_MAX_DEVICE + 1) {
        free(used);
        return tk_fail(s, "%u device traces, more than gmsim's %u devices", traces->n,
                       TK_MAX_DEVICE + 1);
    }
    for (uint32_t i = 0; i < segs->n; i++) {
        uint64_t dev;
        const gm__pk_t *sg = segs->v.items[i];
        if (sg->type != GM__PK_DICT) {
            free(used);
            return tk_fail(s, "segment %u is not a dict", i);
        }
        if (!gm__pk_u64(tk_get(sg, k->device), &dev))
            dev = 0;
        if (dev > TK_MAX_DEVICE) {
            free(used);
            return tk_fail(s, "segment %u: device %llu out of range", i, (unsigned long long)dev);
        }
        used[dev] = 1;
    }
    size_t ndev = 0;
    for (size_t d = 0; d <= TK_MAX_DEVICE; d++)
        ndev += used[d];
    s->ndevices_traced = ndev;
    if (ndev == 0) {
        free(used);
        return tk_fail(s, "the snapshot records nothing: no segments and no trace entries "
                          "(was _record_memory_history enabled?)");
    }

    /* External annotations, by device. */
    const gm__pk_t *ann = tk_get(root, k->external_annotations);
    tk_note_t *notes = NULL;
    size_t nann = tk_is_list(ann) ? ann->n : 0;
    s->has_annotations = ann != NULL;
    if (nann && (notes = malloc(nann * sizeof *notes)) == NULL) {
        free(used);
        return tk_nomem(s);
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
            qsort(notes, nnotes, sizeof *notes, tk_note_cmp);
        char suffix[16];
        snprintf(suffix, sizeof suffix, "dev%zu", d);
        gm_writer_t *w = NULL;
        if ((rc = tk_read_entries(&dv, d < traces->n ? traces->v.items[d] : NULL)) == 0 &&
            (rc = tk_read_segments(&dv, segs)) == 0 && (rc = tk_undo_all(&dv)) == 0 &&
            (rc = gm_import_begin(t, ndev > 1 ? suffix : NULL, &w, s->err)) == 0 &&
            (rc = tk_write(&dv, w, notes, nnotes)) == 0)
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
