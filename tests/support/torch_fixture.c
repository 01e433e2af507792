/*
 * tests/support/torch_fixture.c — checks of an imported PyTorch snapshot
 * (torch_fixture.h).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/torch_fixture.h"
#include "util.h"

#define MIB (UINT64_C(1) << 20)

/* Import data (or the file at path when data is NULL) as `base` into s. */
int tt_import_into(gm_store_t *s, const char *base, const char *path, const void *data,
                   size_t len, gm_error_t *err)
{
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(s, base, 0, &t, err), 0, "%s", err->msg);
    int rc;
    if (data != NULL) {
        rc = gm_torch_import_buffer(data, len, path, t, err);
    } else {
        FILE *in = fopen(path, "rb");
        cr_assert(in != NULL, "cannot open %s", path);
        rc = gm_torch_import(in, path, t, err);
        fclose(in);
    }
    if (rc) {
        gm_import_abort(t);
        return rc;
    }
    return gm_import_commit(t, err);
}

uint64_t tt_attr_u64(const gm_jv_t *o, const char *key)
{
    uint64_t v = UINT64_MAX;
    cr_assert_eq(gm_jv_u64(gm_jv_get(o, key), &v), 0, "attribute %s", key);
    return v;
}

gm_jv_t *tt_trace_attrs(const gm_trace_info_t *t)
{
    gm_jv_t *root;
    gm_error_t err;
    cr_assert_eq(gm_json_parse(t->attrs, strlen(t->attrs), &root, &err), 0, "%s", err.msg);
    return root;
}

uint64_t tt_native_load(gm_store_t *s, const char *name)
{
    gm_error_t err;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0, "%s", err.msg);
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, gm_policy_find("native"), &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
    gm_params_release(&p);
    cr_assert_eq(gm_replay_trace(r, s, name, &err), 0, "%s", err.msg);
    uint64_t load = gm_replay_load(r);
    gm_replay_destroy(r);
    return load;
}

/* Check trace `name`'s layout against its first events (the pre-existing
 * ALLOCs, in layout order) and count what it holds. */
tt_layout_t tt_check_layout(gm_store_t *s, const char *name)
{
    gm_error_t err;
    gm_layout_t *l;
    cr_assert_eq(gm_store_layout(s, name, &l, &err), 0, "%s", err.msg);
    cr_assert(l != NULL, "trace %s has no layout", name);
    cr_assert_eq(gm_layout_validate(l, &err), 0, "%s", err.msg);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, name, &r, &err), 0, "%s", err.msg);
    const gm_event_t *ev = NULL;
    size_t n = 0, at = 0;
    tt_layout_t c = {0};
    for (size_t i = 0; i < l->nsegments; i++) {
        const gm_layout_segment_t *g = &l->segments[i];
        c.reserved += g->size;
        c.segments++;
        cr_assert_eq(gm_reader_stream(r, g->stream_index), g->stream, "%s segment %zu stream",
                     name, i);
        if (g->pool == GM_POOL_SMALL && !g->expandable)
            cr_assert_eq(g->size, 2 * MIB, "%s: small segment %zu", name, i);
        for (size_t k = 0; k < g->nblocks; k++) {
            const gm_layout_block_t *b = &l->blocks[g->first_block + k];
            if (b->id == GM_LAYOUT_FREE)
                continue;
            if (at == n) {
                cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
                cr_assert(n > 0, "%s: fewer events than pre-existing blocks", name);
                at = 0;
            }
            const gm_event_t *e = &ev[at++];
            cr_assert_eq(e->op, GM_OP_ALLOC, "%s: event %" PRIu64, name, c.preexisting);
            cr_assert(e->flags & GM_EVENT_PREEXISTING);
            cr_assert_eq((int64_t)e->id, b->id);
            cr_assert_eq((int64_t)c.preexisting, b->id, "%s: ids in layout order", name);
            cr_assert_eq(e->size, b->requested);
            cr_assert_eq(e->addr, g->address + b->offset);
            c.preexisting++;
        }
    }
    /* the next event, if any, is not pre-existing */
    if (at == n && gm_reader_next(r, &ev, &n, &err) == 0)
        at = 0;
    if (at < n)
        cr_assert(!(ev[at].flags & GM_EVENT_PREEXISTING), "%s: more pre-existing ALLOCs", name);
    gm_reader_close(r);
    gm_layout_free(l);
    return c;
}

uint64_t tt_count_marks(gm_store_t *s, const char *name, const char *tag)
{
    gm_error_t err;
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, name, &r, &err), 0, "%s", err.msg);
    int64_t t = gm_reader_find_tag(r, tag);
    uint64_t count = 0;
    const gm_event_t *ev;
    size_t n;
    while (gm_reader_next(r, &ev, &n, &err) == 0 && n > 0)
        for (size_t i = 0; i < n; i++)
            count += ev[i].op == GM_OP_MARK && t >= 0 && ev[i].tag == (uint32_t)t;
    gm_reader_close(r);
    return count;
}


/* ---- forward check: the layout, replayed by the allocator's rules, must
 * reach the snapshot's final blocks ----------------------------------------- */

typedef struct fw_blk {
    uint64_t addr, size;
    int alloc;
} fw_blk_t;

typedef struct fw_seg {
    uint64_t addr, size;
    int small, exp;
    fw_blk_t *b;
    size_t nb, cap;
} fw_seg_t;

typedef struct fw {
    fw_seg_t *s;
    size_t n, cap;
    uint64_t pad;
    char why[256];
} fw_t;

static void fw_ins_blk(fw_seg_t *g, size_t at, fw_blk_t b)
{
    if (g->nb == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 8;
        g->b = realloc(g->b, g->cap * sizeof *g->b);
        cr_assert(g->b != NULL);
    }
    memmove(g->b + at + 1, g->b + at, (g->nb - at) * sizeof *g->b);
    g->b[at] = b;
    g->nb++;
}

static void fw_del_blk(fw_seg_t *g, size_t at)
{
    memmove(g->b + at, g->b + at + 1, (g->nb - at - 1) * sizeof *g->b);
    g->nb--;
}

static size_t fw_find(const fw_t *f, uint64_t addr)
{
    for (size_t i = 0; i < f->n; i++)
        if (addr >= f->s[i].addr && addr - f->s[i].addr < f->s[i].size)
            return i;
    return SIZE_MAX;
}

static size_t fw_blk_at(const fw_seg_t *g, uint64_t addr)
{
    for (size_t k = 0; k < g->nb; k++)
        if (addr >= g->b[k].addr && addr - g->b[k].addr < g->b[k].size)
            return k;
    return SIZE_MAX;
}

static void fw_add_seg(fw_t *f, uint64_t addr, uint64_t size, int small, int exp)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->s = realloc(f->s, f->cap * sizeof *f->s);
        cr_assert(f->s != NULL);
    }
    size_t at = 0;
    while (at < f->n && f->s[at].addr < addr)
        at++;
    memmove(f->s + at + 1, f->s + at, (f->n - at) * sizeof *f->s);
    f->s[at] = (fw_seg_t){.addr = addr, .size = size, .small = small, .exp = exp};
    fw_ins_blk(&f->s[at], 0, (fw_blk_t){addr, size, 0});
    f->n++;
}

static void fw_release(fw_seg_t *g, size_t k)
{
    g->b[k].alloc = 0;
    if (k + 1 < g->nb && !g->b[k + 1].alloc) {
        g->b[k].size += g->b[k + 1].size;
        fw_del_blk(g, k + 1);
    }
    if (k > 0 && !g->b[k - 1].alloc) {
        g->b[k - 1].size += g->b[k].size;
        fw_del_blk(g, k);
    }
}

/* Apply one event; 0, or 1 with f->why set. */
static int fw_apply(fw_t *f, const gm_event_t *e)
{
    size_t i, k;
    switch (e->op) {
    case GM_OP_ALLOC: {
        /* The padding backend (Ascend NPU) starts a request of 2 MiB or more
         * in an expandable segment at the next 16 KiB boundary of its free
         * block (its final blocks show the gaps left): split the gap off. */
        if (f->pad && e->size >= 2 * MIB && (i = fw_find(f, e->addr)) != SIZE_MAX &&
            f->s[i].exp && (k = fw_blk_at(&f->s[i], e->addr)) != SIZE_MAX &&
            !f->s[i].b[k].alloc && f->s[i].b[k].addr != e->addr && e->addr % 16384 == 0 &&
            e->addr - f->s[i].b[k].addr < 16384) {
            fw_blk_t *fb = &f->s[i].b[k];
            uint64_t gap = e->addr - fb->addr;
            fw_blk_t rest = {e->addr, fb->size - gap, 0};
            fb->size = gap;
            fw_ins_blk(&f->s[i], k + 1, rest);
        }
        if ((i = fw_find(f, e->addr)) == SIZE_MAX || (k = fw_blk_at(&f->s[i], e->addr)) ==
                SIZE_MAX || f->s[i].b[k].addr != e->addr || f->s[i].b[k].alloc) {
            snprintf(f->why, sizeof f->why, "alloc at 0x%" PRIx64 " is not at a free block",
                     e->addr);
            return 1;
        }
        fw_seg_t *g = &f->s[i];
        uint64_t r = (e->size + f->pad + 511) / 512 * 512;
        if (r < 512)
            r = 512;
        if (r > g->b[k].size) {
            snprintf(f->why, sizeof f->why, "alloc at 0x%" PRIx64 " does not fit its block",
                     e->addr);
            return 1;
        }
        uint64_t rem = g->b[k].size - r;
        int split = g->small || g->exp ? rem >= 512 : rem > MIB;
        g->b[k].alloc = 1;
        if (split) {
            g->b[k].size = r;
            fw_ins_blk(g, k + 1, (fw_blk_t){e->addr + r, rem, 0});
        }
        return 0;
    }
    case GM_OP_FREE:
        if ((i = fw_find(f, e->addr)) == SIZE_MAX || (k = fw_blk_at(&f->s[i], e->addr)) ==
                SIZE_MAX || f->s[i].b[k].addr != e->addr || !f->s[i].b[k].alloc) {
            snprintf(f->why, sizeof f->why, "free at 0x%" PRIx64 " of no allocated block",
                     e->addr);
            return 1;
        }
        fw_release(&f->s[i], k);
        return 0;
    case GM_OP_SEG_ALLOC:
        fw_add_seg(f, e->addr, e->size, e->size <= 2 * MIB, 0);
        return 0;
    case GM_OP_SEG_FREE:
        i = fw_find(f, e->addr);
        if (i == SIZE_MAX || f->s[i].addr != e->addr || f->s[i].nb != 1 ||
            f->s[i].b[0].alloc) {
            snprintf(f->why, sizeof f->why, "segment_free of 0x%" PRIx64 " not wholly free",
                     e->addr);
            return 1;
        }
        free(f->s[i].b);
        memmove(f->s + i, f->s + i + 1, (f->n - i - 1) * sizeof *f->s);
        f->n--;
        return 0;
    case GM_OP_SEG_MAP: {
        fw_add_seg(f, e->addr, e->size, 0, 1);
        /* join the expandable neighbours */
        for (i = 0; i + 1 < f->n; i++) {
            fw_seg_t *a = &f->s[i], *b = &f->s[i + 1];
            if (a->exp && b->exp && a->addr + a->size == b->addr &&
                (b->addr == e->addr || b->addr == e->addr + e->size)) {
                for (k = 0; k < b->nb; k++) {
                    if (k == 0 && !a->b[a->nb - 1].alloc && !b->b[0].alloc)
                        a->b[a->nb - 1].size += b->b[0].size;
                    else
                        fw_ins_blk(a, a->nb, b->b[k]);
                }
                a->size += b->size;
                free(b->b);
                memmove(f->s + i + 1, f->s + i + 2, (f->n - i - 2) * sizeof *f->s);
                f->n--;
                i--;
            }
        }
        return 0;
    }
    case GM_OP_SEG_UNMAP: {
        i = fw_find(f, e->addr);
        if (i == SIZE_MAX || (k = fw_blk_at(&f->s[i], e->addr)) == SIZE_MAX ||
            f->s[i].b[k].alloc || e->addr + e->size > f->s[i].b[k].addr + f->s[i].b[k].size) {
            snprintf(f->why, sizeof f->why, "unmap of 0x%" PRIx64 " not in a free block",
                     e->addr);
            return 1;
        }
        fw_seg_t g = f->s[i];
        uint64_t end = e->addr + e->size, gend = g.addr + g.size;
        fw_blk_t blk = g.b[k];
        memmove(f->s + i, f->s + i + 1, (f->n - i - 1) * sizeof *f->s);
        f->n--;
        if (e->addr > g.addr) {
            fw_add_seg(f, g.addr, e->addr - g.addr, g.small, 1);
            size_t j = fw_find(f, g.addr);
            f->s[j].nb = 0;
            for (size_t x = 0; x < k; x++)
                fw_ins_blk(&f->s[j], f->s[j].nb, g.b[x]);
            if (e->addr > blk.addr)
                fw_ins_blk(&f->s[j], f->s[j].nb, (fw_blk_t){blk.addr, e->addr - blk.addr, 0});
        }
        if (end < gend) {
            fw_add_seg(f, end, gend - end, g.small, 1);
            size_t j = fw_find(f, end);
            f->s[j].nb = 0;
            if (blk.addr + blk.size > end)
                fw_ins_blk(&f->s[j], 0, (fw_blk_t){end, blk.addr + blk.size - end, 0});
            for (size_t x = k + 1; x < g.nb; x++)
                fw_ins_blk(&f->s[j], f->s[j].nb, g.b[x]);
        }
        free(g.b);
        return 0;
    }
    default:
        return 0;
    }
}

/* Replay trace `name` from its layout; the final blocks' count and hash
 * (as tests/torch_check.py computes them), or a failure reason. */
void tt_forward_check(gm_store_t *s, const char *name, uint64_t pad, uint64_t *nblocks,
                      uint64_t *hash)
{
    gm_error_t err;
    gm_layout_t *l;
    cr_assert_eq(gm_store_layout(s, name, &l, &err), 0, "%s", err.msg);
    fw_t f = {.pad = pad};
    for (size_t i = 0; i < l->nsegments; i++) {
        const gm_layout_segment_t *g = &l->segments[i];
        fw_add_seg(&f, g->address, g->size, g->pool == GM_POOL_SMALL, g->expandable);
        fw_seg_t *fg = &f.s[fw_find(&f, g->address)];
        fg->nb = 0;
        for (size_t k = 0; k < g->nblocks; k++) {
            const gm_layout_block_t *b = &l->blocks[g->first_block + k];
            fw_ins_blk(fg, fg->nb, (fw_blk_t){g->address + b->offset, b->size,
                                              b->id != GM_LAYOUT_FREE});
        }
    }
    gm_layout_free(l);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, name, &r, &err), 0, "%s", err.msg);
    const gm_event_t *ev;
    size_t n;
    uint64_t index = 0;
    while (gm_reader_next(r, &ev, &n, &err) == 0 && n > 0) {
        for (size_t i = 0; i < n; i++, index++) {
            if (ev[i].flags & GM_EVENT_PREEXISTING)
                continue;
            cr_assert_eq(fw_apply(&f, &ev[i]), 0, "%s: event %" PRIu64 ": %s", name, index,
                         f.why);
        }
    }
    gm_reader_close(r);
    *nblocks = 0;
    *hash = 0;
    for (size_t i = 0; i < f.n; i++) {
        for (size_t k = 0; k < f.s[i].nb; k++) {
            const fw_blk_t *b = &f.s[i].b[k];
            (*nblocks)++;
            *hash += (b->addr * 31 + b->size) * 2 + (uint64_t)b->alloc;
        }
        free(f.s[i].b);
    }
    free(f.s);
}
