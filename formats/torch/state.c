/*
 * formats/torch/state.c — the regions and blocks the PyTorch snapshot
 * importer rewinds (formats/torch/state.h states the invariants).
 *
 * A region's blocks are one sorted array: a lookup is a binary search, a
 * split or a merge a move of the blocks after it.
 */
#include "formats/torch/state.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/layout.h"
#include "base/vec.h"

void gm__tk_state_release(gm__tk_state_t *st)
{
    for (size_t i = 0; i < st->n; i++)
        free(st->r[i].b);
    free(st->r);
    memset(st, 0, sizeof *st);
}

/* How many of the n records at a (stride bytes each, ascending by the
 * uint64_t address at byte off of each) start at or below addr: a binary
 * search, inlined with the constant stride and offset of its callers. */
static inline size_t tk_upper(const void *a, size_t n, size_t stride, size_t off, uint64_t addr)
{
    const char *p = a;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t at;
        memcpy(&at, p + mid * stride + off, sizeof at);
        if (at <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t gm__tk_region_find(const gm__tk_state_t *st, uint64_t addr)
{
    size_t lo = tk_upper(st->r, st->n, sizeof *st->r, offsetof(gm__tk_region_t, addr), addr);
    if (lo == 0)
        return SIZE_MAX;
    const gm__tk_region_t *r = &st->r[lo - 1];
    return addr - r->addr < r->size ? lo - 1 : SIZE_MAX;
}

size_t gm__tk_region_lower(const gm__tk_state_t *st, uint64_t addr)
{
    size_t lo = 0, hi = st->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->r[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int gm__tk_range_clear(const gm__tk_state_t *st, uint64_t addr, uint64_t size)
{
    size_t i = gm__tk_region_lower(st, addr);
    if (i < st->n && st->r[i].addr < addr + size)
        return 0;
    if (i > 0 && st->r[i - 1].addr + st->r[i - 1].size > addr)
        return 0;
    return 1;
}

int gm__tk_region_insert(gm__tk_state_t *st, const gm__tk_region_t *r)
{
    if (GM_VEC_RESERVE(st->r, st->cap, st->n + 1, 16))
        return -1;
    size_t i = gm__tk_region_lower(st, r->addr);
    memmove(st->r + i + 1, st->r + i, (st->n - i) * sizeof *st->r);
    st->r[i] = *r;
    st->n++;
    return 0;
}

void gm__tk_region_remove(gm__tk_state_t *st, size_t i)
{
    free(st->r[i].b);
    memmove(st->r + i, st->r + i + 1, (st->n - i - 1) * sizeof *st->r);
    st->n--;
}

size_t gm__tk_block_find(const gm__tk_region_t *r, uint64_t addr)
{
    return tk_upper(r->b, r->nb, sizeof *r->b, offsetof(gm__tk_block_t, addr), addr) - 1;
}

int gm__tk_block_replace(gm__tk_region_t *r, size_t i, const gm__tk_block_t *nb, size_t n)
{
    if (n > 1 && GM_VEC_RESERVE(r->b, r->cap, r->nb + n - 1, 16))
        return -1;
    memmove(r->b + i + n, r->b + i + 1, (r->nb - i - 1) * sizeof *r->b);
    memcpy(r->b + i, nb, n * sizeof *nb);
    r->nb = r->nb + n - 1;
    return 0;
}

void gm__tk_block_release(gm__tk_region_t *r, size_t i)
{
    gm__tk_block_t *b = &r->b[i];
    b->alloc = 0;
    b->carved = 0;
    b->req = 0;
    b->frames = NULL;
    if (i + 1 < r->nb && !r->b[i + 1].alloc) {
        b->size += r->b[i + 1].size;
        memmove(r->b + i + 1, r->b + i + 2, (r->nb - i - 2) * sizeof *r->b);
        r->nb--;
    }
    if (i > 0 && !r->b[i - 1].alloc) {
        r->b[i - 1].size += b->size;
        memmove(r->b + i, r->b + i + 1, (r->nb - i - 1) * sizeof *r->b);
        r->nb--;
    }
}

size_t gm__tk_block_take_tail(gm__tk_region_t *r, size_t i, uint64_t pad,
                              const uint32_t div[GM_TORCH_INTERVALS], uint64_t max_split)
{
    assert(i < r->nb && r->b[i].alloc);
    if (i < 2 || r->b[i - 1].alloc || !r->b[i - 2].alloc || !r->b[i - 2].carved)
        return i;
    gm__tk_block_t *p = &r->b[i - 2];
    uint64_t rounded = gm__torch_round(p->req + pad, div), gap = r->b[i - 1].size;
    if (rounded > p->size ||
        gm__torch_should_split(rounded, p->size + gap - rounded,
                               r->expandable || r->pool == GM_POOL_SMALL, max_split))
        return i;
    p->size += gap;
    memmove(r->b + i - 1, r->b + i, (r->nb - i) * sizeof *r->b);
    r->nb--;
    return i - 1;
}

int gm__tk_region_whole_free(uint64_t addr, uint64_t size, uint64_t stream, uint8_t pool,
                             uint8_t expandable, gm__tk_region_t *r)
{
    memset(r, 0, sizeof *r);
    r->addr = addr;
    r->size = size;
    r->stream = stream;
    r->pool = pool;
    r->expandable = expandable;
    r->b = malloc(4 * sizeof *r->b);
    if (r->b == NULL)
        return -1;
    r->cap = 4;
    r->nb = 1;
    r->b[0] = (gm__tk_block_t){.addr = addr, .size = size, .id = GM_LAYOUT_FREE};
    return 0;
}

