/*
 * sim/caching/layout.c — the caching policy's warm start: the trace's recorded
 * starting layout rebuilt (segments adopted from the device, blocks in
 * recorded address order), and prepare.
 */
#include <inttypes.h>
#include <string.h>

#include "gmsim/json.h"
#include "gmsim/trace.h"

#include "sim/caching/caching.h"

/* ---- the starting layout ------------------------------------------------------------ */

/* Add one recorded block to segment chain (prev = last). */
static uint32_t caching_layout_block(caching_t *c, uint32_t last, uint64_t addr,
                                     const gm_layout_block_t *lb, uint32_t stream, int pool,
                                     uint32_t es, gm_error_t *err, int *rc)
{
    uint32_t x = caching_new_segment(c, addr, lb->size, stream, pool);
    cblk_t *b = &c->heap.b[x];
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
    gm_device_hint(c->base.dev, s->address, s->size); /* at its recorded address if free */
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

int caching_prepare(gm_policy_t *p, const gm_trace_context_t *ctx, gm_error_t *err)
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
