/*
 * formats/torch/rewind.c — the PyTorch snapshot importer's backward pass
 * (step 3 in formats/torch/snapshot.c): each device's entries undone, last
 * first, on its regions and blocks (state.c), sizing a carved block by the
 * caching allocator's own rules (sim/torch_rules.h).
 */
#include "formats/torch/torch.h"

#include "base/vec.h"

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
        if (GM_VEC_RESERVE(r.b, r.cap, 1 + nx->nb, 16)) {
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
        if (GM_VEC_RESERVE(pv->b, pv->cap, pv->nb + r.nb, 16)) {
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

/* ---- the backward pass ------------------------------------------------------------ */

int gm__tk_undo_all(tk_dev_t *dv)
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
            return gm__tk_nomem(dv->s);
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
