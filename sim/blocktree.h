/*
 * sim/blocktree.h — blocks of a coalescing heap and ordered sets of free
 * blocks keyed by (size, address), shared by the bfc, pool, async and tlsf
 * policies (internal; everything here is static inline).  tlsf keeps its
 * segregated free lists in the blocks' left/right links and splits and
 * merges with gm__bt_cut and gm__bt_absorb.  The record array with its
 * spare stack is GM__BT_HEAP_OF, generic over the record type, so that
 * caching's own block record shares it too.
 *
 * What caching keeps its own, and why: its block is one 64-byte line
 * holding what its rules read on every search (stream, pool, mapping
 * state, GC age) and a parent link; its ordered sets are keyed by
 * (stream, size, address) or (stream, address), and it walks them in order
 * from a member (the predecessor and successor steps of its oversize
 * release and expandable-segment search), which the parent links make
 * O(1) amortized.  The treaps here have neither a stream key nor parent
 * links: carrying them would widen every block of bfc, pool and async and
 * add parent upkeep to each of their inserts and removes, and caching's
 * record would outgrow its line.  Its neighbour merge keeps the freed
 * block's handle whichever side the neighbour is on (gm__bt_absorb keeps
 * the lower one's), so it stays caching's too.
 *
 * Blocks live in one growable array and are named by a 32-bit handle (an
 * index), so that the array may move when it grows: take every new handle
 * before holding a pointer into it.  Handles of dropped blocks are kept on a
 * free stack and reused.  Each block carries its physical neighbours
 * (prev/next: the blocks just below and above it in the same device region,
 * so that a freed block finds the neighbours it may merge with in O(1)) and
 * the links of the ordered set it is in while free.
 *
 * An ordered set is a treap: a binary search tree on (size, address) that is
 * also a heap on a priority derived from the handle (a hash kept in the
 * block, so the shape is deterministic and, for the purposes of balance,
 * random: expected depth O(log n)).  The one query the policies need — the
 * free block of the smallest size ≥ s, the lowest address among equals, which is
 * exactly "best fit" as TensorFlow's BFC bins (std::set ordered by size then
 * address) and RMM's coalescing free list (min_element by size, first in
 * address order) define it — is a single descent.  Insert and remove are
 * iterative (split and merge along one path); nothing is scanned.  A
 * gm__bt_set_t splits a set by power-of-two size class (a treap per class
 * and a mask of the non-empty ones), which gives the same answers in
 * shorter descents; gm__bt_put adds a freed block to one of several such
 * sets, merging it with its neighbours in the same set.
 */
#ifndef GM_SIM_BLOCKTREE_H
#define GM_SIM_BLOCKTREE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GM__BT_NONE UINT32_MAX /* no block */
#define GM__BT_USED UINT32_MAX /* gm__bt_blk_t.list of a live block */
#define GM__BT_DROPPED (UINT32_MAX - 1) /* .list of a dropped handle; set ids stay below */

typedef struct gm__bt_blk {
    uint64_t addr;
    uint64_t size;
    uint32_t left, right; /* ordered-set links while free */
    uint32_t prev, next;  /* physical neighbours in the same region, or NONE */
    uint32_t list;        /* the set holding it while free; GM__BT_USED when live */
    uint32_t flags;       /* the policy's own bits */
    uint32_t prio;        /* treap priority: a hash of the handle */
    uint32_t pad_;
} gm__bt_blk_t;

/* ---- record heaps ----------------------------------------------------------
 * GM__BT_HEAP_OF(H, T, LINK, NONE, FIRST) defines H##_t, a growable array of
 * records of type T named by 32-bit handles, with a stack of dropped
 * handles linked through the uint32_t member LINK of T, and its functions:
 *
 *   H##_init(h)        empty; handles start at FIRST (below it are reserved:
 *                      caching keeps 0 as its "none"), NONE ends the stack
 *   H##_release(h)     free the array, empty again
 *   H##_reserve(h, k)  make sure k handles can be taken without allocating
 *                      (0, or −1 when out of memory); may move h->b
 *   H##_take(h)        a handle, after a reserve: the last one dropped, else
 *                      the next above the high water h->n; its record is
 *                      left as it was (the caller initializes it)
 *   H##_give(h, i)     drop handle i onto the stack (LINK is overwritten)
 *
 * h->b is the array, h->n the high water (FIRST + handles ever taken),
 * h->cap its capacity, h->live the handles in use.  The array is aligned to
 * 64 bytes, so that records of a cache line's size each take one line.  The
 * heap of these blocks is gm__bt_heap_t (below); sim/caching/caching.h instantiates the
 * same machinery for its own one-line block record. */
#define GM__BT_HEAP_OF(H, T, LINK, NONE, FIRST)                                          \
    typedef struct H {                                                                   \
        T *b;                                                                            \
        uint32_t n, cap; /* high water (handles ever used, from FIRST), capacity */      \
        uint32_t spare;  /* stack of dropped handles, linked through .LINK */            \
        uint32_t live;   /* handles in use */                                            \
    } H##_t;                                                                             \
                                                                                         \
    static inline void H##_init(H##_t *h)                                                \
    {                                                                                    \
        h->b = NULL;                                                                     \
        h->n = (FIRST);                                                                  \
        h->cap = h->live = 0;                                                            \
        h->spare = (NONE);                                                               \
    }                                                                                    \
                                                                                         \
    static inline void H##_release(H##_t *h)                                             \
    {                                                                                    \
        free(h->b);                                                                      \
        H##_init(h);                                                                     \
    }                                                                                    \
                                                                                         \
    static inline int H##_reserve(H##_t *h, uint32_t k)                                  \
    {                                                                                    \
        uint32_t dropped = h->n - (FIRST) - h->live;                                     \
        if (dropped + (h->cap > h->n ? h->cap - h->n : 0) >= k)                          \
            return 0;                                                                    \
        uint64_t want = (uint64_t)h->cap * 2 + k + 64;                                   \
        if (want >= GM__BT_HANDLES)                                                      \
            return -1;                                                                   \
        void *mem = NULL;                                                                \
        if (posix_memalign(&mem, 64, (size_t)want * sizeof(T)) != 0)                     \
            return -1;                                                                   \
        if (h->b != NULL)                                                                \
            memcpy(mem, h->b, (size_t)h->n * sizeof(T));                                 \
        free(h->b);                                                                      \
        h->b = mem;                                                                      \
        h->cap = (uint32_t)want;                                                         \
        return 0;                                                                        \
    }                                                                                    \
                                                                                         \
    static inline uint32_t H##_take(H##_t *h)                                            \
    {                                                                                    \
        uint32_t i = h->spare;                                                           \
        if (i != (NONE))                                                                 \
            h->spare = h->b[i].LINK;                                                     \
        else                                                                             \
            i = h->n++;                                                                  \
        h->live++;                                                                       \
        return i;                                                                        \
    }                                                                                    \
                                                                                         \
    static inline void H##_give(H##_t *h, uint32_t i)                                    \
    {                                                                                    \
        h->b[i].LINK = h->spare;                                                         \
        h->spare = i;                                                                    \
        h->live--;                                                                       \
    }

/* Handles stay below this (so below GM__BT_DROPPED and GM__BT_NONE). */
#define GM__BT_HANDLES (UINT32_MAX - 1)

GM__BT_HEAP_OF(gm__bt_heap, gm__bt_blk_t, next, GM__BT_NONE, 0)

/* The treap priority of a handle: murmur3's finalizer, a bijection, so
 * that no two handles share one. */
static inline uint32_t gm__bt_hash(uint32_t i)
{
    uint32_t x = i + 1;
    x ^= x >> 16;
    x *= UINT32_C(0x85EBCA6B);
    x ^= x >> 13;
    x *= UINT32_C(0xC2B2AE35);
    return x ^ (x >> 16);
}

/* A fresh handle (its block zeroed but for NONE links), or GM__BT_NONE when
 * out of memory.  May move h->b. */
static inline uint32_t gm__bt_new(gm__bt_heap_t *h)
{
    if (h->spare == GM__BT_NONE && h->n == h->cap && gm__bt_heap_reserve(h, 1) != 0)
        return GM__BT_NONE;
    uint32_t i = gm__bt_heap_take(h);
    gm__bt_blk_t *x = &h->b[i];
    x->addr = x->size = 0;
    x->left = x->right = x->prev = x->next = GM__BT_NONE;
    x->list = GM__BT_USED;
    x->flags = 0;
    x->prio = gm__bt_hash(i);
    return i;
}

static inline void gm__bt_drop(gm__bt_heap_t *h, uint32_t i)
{
    h->b[i].list = GM__BT_DROPPED;
    gm__bt_heap_give(h, i);
}

/* (size, addr) of a below b's. */
static inline int gm__bt_less(const gm__bt_blk_t *a, const gm__bt_blk_t *b)
{
    return a->size < b->size || (a->size == b->size && a->addr < b->addr);
}

/* Insert free block i into the set rooted at *root. */
static inline void gm__bt_insert(gm__bt_blk_t *b, uint32_t *root, uint32_t i)
{
    uint32_t pi = b[i].prio, *link = root;
    gm__bt_blk_t *x = &b[i];
    while (*link != GM__BT_NONE && b[*link].prio >= pi)
        link = gm__bt_less(x, &b[*link]) ? &b[*link].left : &b[*link].right;
    /* split the subtree at *link around x into x's two children */
    uint32_t t = *link, *lp = &x->left, *rp = &x->right;
    while (t != GM__BT_NONE) {
        if (gm__bt_less(&b[t], x)) {
            *lp = t;
            lp = &b[t].right;
            t = b[t].right;
        } else {
            *rp = t;
            rp = &b[t].left;
            t = b[t].left;
        }
    }
    *lp = *rp = GM__BT_NONE;
    *link = i;
}

/* Remove block i (a member) from the set rooted at *root. */
static inline void gm__bt_remove(gm__bt_blk_t *b, uint32_t *root, uint32_t i)
{
    uint32_t *link = root;
    const gm__bt_blk_t *x = &b[i];
    while (*link != i)
        link = gm__bt_less(x, &b[*link]) ? &b[*link].left : &b[*link].right;
    uint32_t l = x->left, r = x->right;
    while (l != GM__BT_NONE && r != GM__BT_NONE) {
        if (b[l].prio > b[r].prio) {
            *link = l;
            link = &b[l].right;
            l = b[l].right;
        } else {
            *link = r;
            link = &b[r].left;
            r = b[r].left;
        }
    }
    *link = l != GM__BT_NONE ? l : r;
}

/* The member of the smallest size ≥ size, the lowest address among equals;
 * GM__BT_NONE when every member is smaller. */
static inline uint32_t gm__bt_fit(const gm__bt_blk_t *b, uint32_t root, uint64_t size)
{
    uint32_t best = GM__BT_NONE;
    while (root != GM__BT_NONE) {
        if (b[root].size >= size) {
            best = root;
            root = b[root].left;
        } else {
            root = b[root].right;
        }
    }
    return best;
}

/* The largest member (GM__BT_NONE when empty). */
static inline uint32_t gm__bt_max(const gm__bt_blk_t *b, uint32_t root)
{
    if (root == GM__BT_NONE)
        return GM__BT_NONE;
    while (b[root].right != GM__BT_NONE)
        root = b[root].right;
    return root;
}

/*
 * Verify the set rooted at root: in-order keys strictly increasing, the heap
 * property of the priorities, every member free and in `list`.  Returns the
 * number of members, or −1 on the first violation with *bad set to the
 * offending handle.  Recursion depth is the tree's depth.
 */
static inline int64_t gm__bt_verify(const gm__bt_blk_t *b, uint32_t n, uint32_t root,
                                    uint32_t list, const gm__bt_blk_t **lo, uint32_t *bad)
{
    if (root == GM__BT_NONE)
        return 0;
    if (root >= n || b[root].list != list) {
        *bad = root;
        return -1;
    }
    const gm__bt_blk_t *x = &b[root];
    if (x->prio != gm__bt_hash(root) ||
        (x->left != GM__BT_NONE && (x->left >= n || b[x->left].prio > x->prio)) ||
        (x->right != GM__BT_NONE && (x->right >= n || b[x->right].prio > x->prio))) {
        *bad = root;
        return -1;
    }
    int64_t l = gm__bt_verify(b, n, x->left, list, lo, bad);
    if (l < 0)
        return -1;
    if (*lo != NULL && !gm__bt_less(*lo, x)) {
        *bad = root;
        return -1;
    }
    *lo = x;
    int64_t r = gm__bt_verify(b, n, x->right, list, lo, bad);
    if (r < 0)
        return -1;
    return l + r + 1;
}

/* Append the members of the set rooted at root to out (in order); returns
 * the new count.  out must have room for every member. */
static inline uint32_t gm__bt_collect(const gm__bt_blk_t *b, uint32_t root, uint32_t *out,
                                      uint32_t k)
{
    while (root != GM__BT_NONE) {
        k = gm__bt_collect(b, b[root].left, out, k);
        out[k++] = root;
        root = b[root].right;
    }
    return k;
}

/* ---- size-binned sets ------------------------------------------------------
 * A set split by size class: bin k holds the members of size in
 * [2^k, 2^(k+1)), each bin an ordered set, and a mask of the non-empty bins.
 * Same answers as one ordered set (the best fit is in the request's bin or
 * is the smallest member of the next non-empty bin), in shorter descents. */

typedef struct gm__bt_set {
    uint64_t mask;
    uint32_t root[64];
} gm__bt_set_t;

static inline void gm__bt_set_init(gm__bt_set_t *t)
{
    t->mask = 0;
    for (unsigned k = 0; k < 64; k++)
        t->root[k] = GM__BT_NONE;
}

static inline unsigned gm__bt_class(uint64_t size)
{
    return 63u - (unsigned)__builtin_clzll(size | 1);
}

static inline void gm__bt_set_insert(gm__bt_blk_t *b, gm__bt_set_t *t, uint32_t i)
{
    unsigned k = gm__bt_class(b[i].size);
    gm__bt_insert(b, &t->root[k], i);
    t->mask |= UINT64_C(1) << k;
}

static inline void gm__bt_set_remove(gm__bt_blk_t *b, gm__bt_set_t *t, uint32_t i)
{
    unsigned k = gm__bt_class(b[i].size);
    gm__bt_remove(b, &t->root[k], i);
    if (t->root[k] == GM__BT_NONE)
        t->mask &= ~(UINT64_C(1) << k);
}

/* Best fit: the member of the smallest size ≥ size, lowest address among
 * equals; GM__BT_NONE when none. */
static inline uint32_t gm__bt_set_fit(const gm__bt_blk_t *b, const gm__bt_set_t *t,
                                      uint64_t size)
{
    unsigned k = gm__bt_class(size);
    if (t->mask >> k & 1) {
        uint32_t h = gm__bt_fit(b, t->root[k], size);
        if (h != GM__BT_NONE)
            return h;
    }
    uint64_t above = k == 63 ? 0 : t->mask & (~UINT64_C(0) << (k + 1));
    if (above == 0)
        return GM__BT_NONE;
    uint32_t h = t->root[__builtin_ctzll(above)];
    while (b[h].left != GM__BT_NONE)
        h = b[h].left;
    return h;
}

static inline uint32_t gm__bt_set_max(const gm__bt_blk_t *b, const gm__bt_set_t *t)
{
    return t->mask == 0 ? GM__BT_NONE : gm__bt_max(b, t->root[63 - __builtin_clzll(t->mask)]);
}

/* Verify every bin (see gm__bt_verify) and the mask; members, or −1 with
 * *bad set (GM__BT_NONE when the mask is wrong). */
static inline int64_t gm__bt_set_verify(const gm__bt_blk_t *b, uint32_t n, const gm__bt_set_t *t,
                                        uint32_t list, uint32_t *bad)
{
    int64_t total = 0;
    for (unsigned k = 0; k < 64; k++) {
        const gm__bt_blk_t *lo = NULL;
        int64_t m = gm__bt_verify(b, n, t->root[k], list, &lo, bad);
        if (m < 0)
            return -1;
        if ((m != 0) != (int)(t->mask >> k & 1)) {
            *bad = GM__BT_NONE;
            return -1;
        }
        if (m != 0) { /* every member in the bin of its size */
            uint32_t lo_h = t->root[k], hi_h = gm__bt_max(b, t->root[k]);
            while (b[lo_h].left != GM__BT_NONE)
                lo_h = b[lo_h].left;
            if (gm__bt_class(b[lo_h].size) != k || gm__bt_class(b[hi_h].size) != k) {
                *bad = gm__bt_class(b[lo_h].size) != k ? lo_h : hi_h;
                return -1;
            }
        }
        total += m;
    }
    return total;
}

/* Append the members of set t to out; returns the new count. */
static inline uint32_t gm__bt_set_collect(const gm__bt_blk_t *b, const gm__bt_set_t *t,
                                          uint32_t *out, uint32_t k)
{
    for (uint64_t m = t->mask; m != 0; m &= m - 1)
        k = gm__bt_collect(b, t->root[__builtin_ctzll(m)], out, k);
    return k;
}

/* ---- coalescing free lists -------------------------------------------------
 * For heaps whose free blocks are kept in several sets (one per stream, say)
 * and merge only with neighbours of the same set: sets[list] is set `list`.  A block whose prev is NONE starts its region and never merges
 * with what lies below it. */

/* Unlink block x (with handle xi) from the physical list: prev absorbs it. */
static inline void gm__bt_absorb(gm__bt_heap_t *h, uint32_t pi, uint32_t xi)
{
    gm__bt_blk_t *b = h->b, *x = &b[xi];
    b[pi].size += x->size;
    b[pi].next = x->next;
    if (x->next != GM__BT_NONE)
        b[x->next].prev = pi;
    gm__bt_drop(h, xi);
}

/* Put free block i (in no set) into set `list` (sets[list]), merging it
 * with its neighbours that are free in the same set.  Returns the handle of
 * the resulting block (i, or the neighbour below that absorbed it). */
static inline uint32_t gm__bt_put(gm__bt_heap_t *h, gm__bt_set_t *sets, uint32_t i,
                                  uint32_t list)
{
    gm__bt_blk_t *b = h->b;
    uint32_t nx = b[i].next, pv = b[i].prev;
    b[i].list = list;
    if (nx != GM__BT_NONE && b[nx].list == list) {
        gm__bt_set_remove(b, &sets[list], nx);
        gm__bt_absorb(h, i, nx);
    }
    if (pv != GM__BT_NONE && b[pv].list == list) {
        gm__bt_set_remove(b, &sets[list], pv);
        gm__bt_absorb(h, pv, i);
        i = pv;
    }
    gm__bt_set_insert(b, &sets[list], i);
    return i;
}

/* Cut block i (taken out of its set, about to be handed out: it is marked
 * live here, so that the remainder does not merge back into it) to `size`
 * bytes, making block `spare` (a fresh handle) its remainder just above it;
 * the caller puts the remainder in a set. */
static inline void gm__bt_cut(gm__bt_heap_t *h, uint32_t i, uint64_t size, uint32_t spare)
{
    gm__bt_blk_t *b = h->b, *x = &b[i], *r = &b[spare];
    r->addr = x->addr + size;
    r->size = x->size - size;
    r->prev = i;
    r->next = x->next;
    if (x->next != GM__BT_NONE)
        b[x->next].prev = spare;
    x->next = spare;
    x->size = size;
    x->list = GM__BT_USED;
}

#endif
