/*
 * sim/caching/sets.h — the caching policy's block record and the ordered
 * sets its blocks live in: treaps with parent links (a pool's unmapped
 * ranges by (stream, address)) and, for the free mapped blocks, per stream
 * size classes of treaps by (size, address) with a bitmap of the non-empty
 * classes (sim/caching/caching.c, "Data structures", says why).  Everything
 * here is static inline: the allocation path (sim/caching/alloc.c) inlines
 * what it uses.
 */
#ifndef GM_SIM_CACHING_SETS_H
#define GM_SIM_CACHING_SETS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"

#define NIL 0u

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

/* p's link to its child old (the root's link when p is NIL) made x. */
static inline void tree_relink(cblk_t *B, ctree_t *t, uint32_t p, uint32_t old, uint32_t x)
{
    if (p == NIL)
        t->root = x;
    else if (B[p].l == old)
        B[p].l = x;
    else
        B[p].r = x;
}

static inline void tree_rotate_up(cblk_t *B, ctree_t *t, uint32_t x)
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
    tree_relink(B, t, g, p, x);
}

static inline void tree_insert(cblk_t *B, ctree_t *t, uint32_t x, uint8_t tag)
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

static inline void tree_erase(cblk_t *B, ctree_t *t, uint32_t x)
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
    tree_relink(B, t, B[x].up, x, NIL);
    B[x].up = NIL;
    B[x].inset = 0;
    t->count--;
}

/* The walks below are written once for both directions: right 1 (the
 * right child, toward larger keys), 0 the left.  Each caller passes a
 * constant, so the inlined code reads the one field. */
static inline uint32_t tree_child(const cblk_t *B, uint32_t x, int right)
{
    return right ? B[x].r : B[x].l;
}

/* The last block from x on going one way down (x when it has no child
 * that way); NIL for x NIL. */
static inline uint32_t tree_end(const cblk_t *B, uint32_t x, int right)
{
    if (x == NIL)
        return NIL;
    while (tree_child(B, x, right) != NIL)
        x = tree_child(B, x, right);
    return x;
}

/* x's neighbour in order, the next one (right 1) or the one before. */
static inline uint32_t tree_step(const cblk_t *B, uint32_t x, int right)
{
    if (tree_child(B, x, right) != NIL)
        return tree_end(B, tree_child(B, x, right), !right);
    uint32_t p = B[x].up;
    while (p != NIL && tree_child(B, p, right) == x) {
        x = p;
        p = B[p].up;
    }
    return p;
}

static inline uint32_t tree_first(const cblk_t *B, const ctree_t *t)
{
    return tree_end(B, t->root, 0);
}

static inline uint32_t tree_last(const cblk_t *B, const ctree_t *t)
{
    return tree_end(B, t->root, 1);
}

static inline uint32_t tree_next(const cblk_t *B, uint32_t x) { return tree_step(B, x, 1); }
static inline uint32_t tree_prev(const cblk_t *B, uint32_t x) { return tree_step(B, x, 0); }

/* First block ≥ (stream, size, addr) in t's order, or NIL. */
static inline uint32_t tree_lower_bound(const cblk_t *B, const ctree_t *t, uint32_t stream,
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
static inline int pool_bins_make(cpool_t *pl, uint32_t stream)
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

/* The block after (right 1) or before x among its stream's free blocks,
 * or NIL: in x's bin's tree, else at the near end of the next non-empty
 * bin that way. */
static inline uint32_t set_step(const cblk_t *B, const cpool_t *pl, uint32_t x, int right)
{
    uint32_t y = tree_step(B, x, right);
    if (y != NIL)
        return y;
    const cbins_t *bs = pl->st[B[x].stream];
    unsigned b = bin_of(B[x].size);
    if (right)
        b = bins_next(bs, b + 1);
    else
        b = b == 0 ? CBIN_COUNT : bins_prev(bs, b - 1);
    return b < CBIN_COUNT ? tree_end(B, bs->bin[b].root, !right) : NIL;
}

static inline uint32_t set_next(const cblk_t *B, const cpool_t *pl, uint32_t x)
{
    return set_step(B, pl, x, 1);
}

static inline uint32_t set_prev(const cblk_t *B, const cpool_t *pl, uint32_t x)
{
    return set_step(B, pl, x, 0);
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
static inline uint32_t *set_collect(const cblk_t *B, const cpool_t *pl, uint32_t *n)
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

#endif
