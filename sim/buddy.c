/*
 * sim/buddy.c — a binary buddy allocator over arenas taken from the device.
 *
 * Algorithm (Knuth's binary buddy system, TAOCP vol. 1 §2.5; SQLite's
 * src/mem5.c is the classic compact C model, which this follows in spirit
 * but not in code):
 *
 *   Blocks are min_block · 2^k bytes, k = 0 … a where min_block · 2^a is the
 *   arena size.  An arena is taken from the device (gm_device_malloc with
 *   align = arena, so each arena owns an aligned address range) when no free
 *   block is large enough, and starts as one free block of order a.  A
 *   request of s ≤ arena bytes gets a block of the smallest order k with
 *   min_block · 2^k ≥ s.  The allocation rule is deterministic:
 *
 *     take the smallest order j ≥ k that has a free block anywhere; among the
 *     arenas with a free block of order j take the one in the lowest arena
 *     slot (slots are numbered from 0, a released arena's slot is reused
 *     first); in it take the free block of order j at the lowest address;
 *     split it down to order k, keeping the lower half each time and freeing
 *     the upper half.
 *
 *   A freed block merges with its buddy (the block at offset XOR size) while
 *   the buddy is free and of the same order, recursively.  With
 *   release=empty an arena that becomes wholly free is returned to the device
 *   at once; with release=never it is kept, and given back only when the
 *   device refuses a new arena (then every wholly free arena is returned and
 *   the device malloc retried once; if it fails again the result is
 *   GM_ALLOC_OOM).
 *
 *   A request larger than an arena gets an arena of its own, the next power
 *   of two ≥ the request, holding exactly that one block (a dedicated
 *   "over-size" arena, like a huge allocation in jemalloc or mimalloc: it is
 *   never split).  When freed it is released (release=empty) or kept whole
 *   and reused by the next over-size request of the same power of two
 *   (release=never).
 *
 * Metadata lives outside the simulated memory (which has no backing).  Each
 * arena has, per order k, a free bitmap of 2^(a−k) bits with summary levels
 * above it (a bit per 64-bit word below), and an allocated bitmap of the
 * same size interleaved word by word with it (so that free() can verify that
 * a block is live, and the allocated bit of a block and the free bit of its
 * buddy share a cache line).  In all about 2^(a+2) bits: half a byte per
 * min-block, 1 MiB for the default 1 GiB arena of 512-byte blocks (a ≤ 24
 * is enforced: at most 8 MiB per arena), allocated when the arena is taken
 * and kept for reuse when it is released (all zero again), so release=empty
 * churn costs no host allocation.  A bit is set only at the start of a
 * current block, and splitting and merging keep this exact: the bitmaps ARE
 * the free lists.  Each set keeps a cursor, its lowest member: taking the
 * lowest free block is one load, and finding the next one after it is
 * taken reads the word just touched, or climbs the summaries
 * (⌈log64 2^a⌉ words at most) — nothing is scanned linearly.  A set of one
 * block, the usual case while splitting and merging, leaves its summaries
 * zero ("sparse") until a second block joins it.  Above the
 * arenas, a set of arena slots per order (same scheme) and a 64-bit mask of
 * the orders with any free block make the search independent of the number
 * of arenas.  An address maps to its arena by a shift (every arena is
 * aligned to the arena size, an over-size block is at its arena's base) and
 * the shared id map (base/idmap.h, arena key → slot) behind a one-entry
 * cache.
 *
 * Invariants (check):
 *   - the blocks (free and allocated) of every arena tile it exactly: every
 *     min-block lies in exactly one block, and no bit is set inside a block;
 *   - no block is both free and allocated;
 *   - no two free buddies are left unmerged ("free block that should have
 *     merged");
 *   - every summary bit says whether the word below is non-zero (all are zero
 *     in a sparse set, which has one member at most), every cursor is its
 *     set's lowest member, an arena is in the slot set of order j iff
 *     it has a free block of order j, bit j of the order mask is set iff some
 *     arena is;
 *   - the address map finds every arena; arenas are aligned to their size;
 *   - per-arena and total allocated bytes equal the sums of the allocated
 *     blocks; the arenas' device bytes sum to the device's reserved bytes;
 *   - with release=empty no arena is wholly free.
 */
#include "gmsim/policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/idmap.h"
#include "base/bits.h"

#define BUDDY_MAX_A 24     /* at most 2^24 min-blocks per arena */
#define BUDDY_LEVELS 5     /* summary levels for up to 2^30 bits */
#define BUDDY_ORDERS 64    /* orders 0 … 63 (over-size included) */
#define BUDDY_SPARES 16    /* metadata of released arenas kept for reuse */
#define BUDDY_RELEASE_NEVER 0
#define BUDDY_RELEASE_EMPTY 1

/* ---- hierarchical bitsets ------------------------------------------------
 * A set of n bits as level 0 (n bits) plus summary levels: bit w of level
 * l+1 is set iff word w of level l is non-zero; the top level is one word.
 * The layout (word offsets of each level in a shared word array) is kept
 * apart from the words so that all arenas share one layout.  Each set also
 * has a cursor, its lowest member (BUDDY_NONE when empty), kept exact by
 * add/del: the lowest member is one load, and deleting it looks for the
 * successor, which is almost always in the word just touched. */

#define BUDDY_NONE UINT32_MAX

typedef struct buddy_hb {
    uint32_t off[BUDDY_LEVELS];   /* word offset of each level */
    uint32_t words[BUDDY_LEVELS]; /* words in each level */
    uint32_t nlev;
} buddy_hb_t;

/* Lay out a set of nbits at word offset `at`; returns the next free offset.
 * Level-0 words are every other word: the words between are the caller's
 * (an arena keeps its allocated bitmap there; slot sets leave them unused),
 * and a constant stride keeps the index arithmetic cheap. */
static uint32_t buddy_hb_layout(buddy_hb_t *h, uint64_t nbits, uint32_t at)
{
    uint64_t words = (nbits + 63) / 64;
    h->nlev = 0;
    for (;;) {
        h->off[h->nlev] = at;
        h->words[h->nlev] = (uint32_t)words;
        at += (uint32_t)(h->nlev == 0 ? 2 * words : words);
        h->nlev++;
        if (words <= 1)
            return at;
        words = (words + 63) / 64;
    }
}

/* Index of the word of level l holding bit i of that level. */
static inline uint64_t buddy_hb_at(const buddy_hb_t *h, uint32_t l, uint64_t i)
{
    return h->off[l] + ((i >> 6) << (l == 0));
}

static inline int buddy_hb_has(const uint64_t *w, const buddy_hb_t *h, uint64_t i)
{
    return (int)(w[buddy_hb_at(h, 0, i)] >> (i & 63)) & 1;
}

/* Lowest member ≥ i, or BUDDY_NONE. */
static inline uint32_t buddy_hb_next(const uint64_t *w, const buddy_hb_t *h, uint64_t i)
{
    for (uint32_t l = 0; l < h->nlev; l++) {
        uint64_t wi = i >> 6;
        if (wi >= h->words[l])
            return BUDDY_NONE;
        uint64_t x = w[buddy_hb_at(h, l, i)] & (~UINT64_C(0) << (i & 63));
        if (x != 0) {
            i = (wi << 6) | (uint64_t)__builtin_ctzll(x);
            while (l-- > 0)
                i = (i << 6) | (uint64_t)__builtin_ctzll(w[buddy_hb_at(h, l, i << 6)]);
            return (uint32_t)i;
        }
        i = wi + 1;
    }
    return BUDDY_NONE;
}

static inline void buddy_hb_add(uint64_t *w, const buddy_hb_t *h, uint32_t *min, uint64_t i)
{
    if (i < *min)
        *min = (uint32_t)i;
    for (uint32_t l = 0; l < h->nlev; l++) {
        uint64_t *p = w + buddy_hb_at(h, l, i);
        uint64_t old = *p;
        *p = old | (UINT64_C(1) << (i & 63));
        if (old != 0)
            return;
        i >>= 6;
    }
}

static inline void buddy_hb_del(uint64_t *w, const buddy_hb_t *h, uint32_t *min, uint64_t i)
{
    uint64_t j = i;
    for (uint32_t l = 0; l < h->nlev; l++) {
        uint64_t *p = w + buddy_hb_at(h, l, j);
        *p &= ~(UINT64_C(1) << (j & 63));
        if (*p != 0) {
            if (i == *min) /* the successor is near: often in this very word */
                *min = l == 0 ? (uint32_t)((i & ~UINT64_C(63)) | (uint64_t)__builtin_ctzll(*p))
                              : buddy_hb_next(w, h, i + 1);
            return;
        }
        j >>= 6;
    }
    *min = BUDDY_NONE; /* the top word is empty: so is the set */
}

/* ---- state ---------------------------------------------------------------- */

enum { BUDDY_OVER_FREE = 1, BUDDY_OVER_USED = 2 };

typedef struct buddy_arena {
    uint64_t base;      /* device address, aligned to the arena's size */
    uint64_t got;       /* bytes reserved from the device for it */
    uint64_t allocated; /* bytes in its live blocks */
    uint64_t *bits;     /* regular arena: bitmaps per the shared layout;
                           over-size arena: NULL */
    uint32_t slot;      /* index in buddy_t.arenas */
    uint32_t order;     /* a for a regular arena, > a for an over-size one */
    int over;           /* over-size only: BUDDY_OVER_FREE or BUDDY_OVER_USED */
    uint32_t min[BUDDY_MAX_A + 1]; /* regular: lowest free block per order */
    uint32_t sparse;               /* regular: bit j: order j's set is sparse */
} buddy_arena_t;

typedef struct buddy {
    gm_policy_t base;
    /* parameters */
    uint64_t min_block, arena;
    unsigned min_shift, arena_shift, a; /* a = arena_shift − min_shift */
    int release;

    /* per-arena bitmap layout (the same for every regular arena) */
    buddy_hb_t lay_free[BUDDY_MAX_A + 1];
    uint32_t off0[BUDDY_MAX_A + 1]; /* lay_free[k].off[0], for the hot paths */
    uint32_t lay_words;

    /* arenas by slot; slot sets per order (and of vacant slots) */
    buddy_arena_t **arenas;
    uint32_t nslots, slotcap; /* slots in use (high water), capacity */
    uint64_t *sets;           /* BUDDY_ORDERS + 1 sets of slotcap bits, set_words each */
    buddy_hb_t setlay;        /* layout of one set, offsets relative to its start */
    uint32_t set_words;
    uint32_t set_min[BUDDY_ORDERS + 1]; /* the sets' cursors */
    uint64_t order_mask; /* bit j: some arena has a free block of order j */

    /* address → arena: key (base >> arena_shift) + 1 → slot; key 0 is
     * never stored, so last_key = 0 marks the cache empty */
    gm__idmap_t map;
    uint64_t last_key; /* one-entry cache of the map */
    buddy_arena_t *last;

    uint64_t *spares[BUDDY_SPARES];
    unsigned nspares;

    uint64_t allocated; /* bytes in live blocks */
} buddy_t;

extern const gm_policy_ops_t gm__policy_buddy;

#define BUDDY(p) GM_POLICY_DOWNCAST(buddy_t, p, gm__policy_buddy)
#define BUDDY_VACANT BUDDY_ORDERS /* index of the vacant-slot set */

static inline uint64_t *buddy_set(const buddy_t *b, unsigned j)
{
    return b->sets + (size_t)j * b->set_words;
}

/* The allocated bitmap of order k is interleaved with the level-0 words of
 * the free set (free word w, then allocated word w), so that the free bit of
 * a buddy and the allocated bit of a block share a cache line. */
static inline int buddy_alloc_has(const buddy_t *b, const buddy_arena_t *ar, unsigned k,
                                  uint64_t i)
{
    return (int)(ar->bits[buddy_hb_at(&b->lay_free[k], 0, i) + 1] >> (i & 63)) & 1;
}

/* ---- slot sets -------------------------------------------------------------- */

/* Grow every slot set to newcap bits (members and cursors are kept).
 * GM_ENOMEM (nothing changed) on failure. */
static int buddy_sets_grow(buddy_t *b, uint32_t newcap)
{
    if (newcap == 0 || newcap > (UINT32_C(1) << 30)) /* BUDDY_LEVELS levels hold 2^30 bits */
        return GM_ENOMEM;
    buddy_hb_t lay;
    uint32_t words = buddy_hb_layout(&lay, newcap, 0);
    uint64_t *sets = calloc((size_t)(BUDDY_ORDERS + 1) * words, sizeof *sets);
    buddy_arena_t **arenas = realloc(b->arenas, newcap * sizeof *arenas);
    if (sets == NULL || arenas == NULL) {
        free(sets);
        if (arenas != NULL)
            b->arenas = arenas;
        return GM_ENOMEM;
    }
    b->arenas = arenas;
    for (uint32_t s = b->slotcap; s < newcap; s++)
        arenas[s] = NULL;
    for (unsigned j = 0; j <= BUDDY_ORDERS && b->sets != NULL; j++) {
        const uint64_t *old = buddy_set(b, j);
        uint32_t min = BUDDY_NONE;
        for (uint32_t s = 0; s < b->slotcap; s++)
            if (buddy_hb_has(old, &b->setlay, s))
                buddy_hb_add(sets + (size_t)j * words, &lay, &min, s);
    }
    free(b->sets);
    b->sets = sets;
    b->setlay = lay;
    b->set_words = words;
    b->slotcap = newcap;
    return 0;
}

/* Add a slot to set j (j = BUDDY_VACANT: the vacant slots); with at most 64
 * slots (the usual case) a set is one word. */
static inline void buddy_slots_add(buddy_t *b, unsigned j, uint32_t slot)
{
    uint64_t *set = buddy_set(b, j);
    if (b->setlay.nlev == 1) {
        set[0] |= UINT64_C(1) << slot;
        if (slot < b->set_min[j])
            b->set_min[j] = slot;
    } else {
        buddy_hb_add(set, &b->setlay, &b->set_min[j], slot);
    }
}

static inline void buddy_slots_del(buddy_t *b, unsigned j, uint32_t slot)
{
    uint64_t *set = buddy_set(b, j);
    if (b->setlay.nlev == 1) {
        set[0] &= ~(UINT64_C(1) << slot);
        b->set_min[j] = set[0] ? (uint32_t)__builtin_ctzll(set[0]) : BUDDY_NONE;
    } else {
        buddy_hb_del(set, &b->setlay, &b->set_min[j], slot);
    }
}

/* ---- address map ---------------------------------------------------------- */

/* The arena whose first arena-sized range holds addr, or NULL. */
static inline buddy_arena_t *buddy_lookup(buddy_t *b, uint64_t addr)
{
    uint64_t key = (addr >> b->arena_shift) + 1;
    if (key == b->last_key)
        return b->last;
    uint64_t slot;
    if (!gm__idmap_get(&b->map, key, &slot))
        return NULL;
    b->last_key = key;
    b->last = b->arenas[slot];
    return b->last;
}

/* ---- free blocks ------------------------------------------------------------ */

/* Level-0 word pair of order j holding bit i: [0] the free bits, [1] the
 * allocated bits (a block and its buddy share the pair). */
static inline uint64_t *buddy_pair(const buddy_t *b, const buddy_arena_t *ar, unsigned j,
                                   uint64_t i)
{
    return ar->bits + b->off0[j] + ((i >> 6) << 1);
}

/* Arena `slot` now has (on) or no longer has (off) a free block of order j. */
static inline void buddy_order_on(buddy_t *b, uint32_t slot, unsigned j)
{
    buddy_slots_add(b, j, slot);
    b->order_mask |= UINT64_C(1) << j;
}

static inline void buddy_order_off(buddy_t *b, uint32_t slot, unsigned j)
{
    buddy_slots_del(b, j, slot);
    if (b->set_min[j] == BUDDY_NONE)
        b->order_mask &= ~(UINT64_C(1) << j);
}

/*
 * The free sets of an arena keep their summary levels lazily: a set with at
 * most one member may be "sparse" (bit j of ar->sparse), its member in the
 * level-0 bitmap and the cursor only, every summary word zero.  The second
 * member writes the first one's summary path; the set turns sparse again
 * when it empties.  Buddies split and merge mostly through sets of one
 * block, so most adds and deletes touch one word instead of every level;
 * the general case is out of line.
 */
static void buddy_put_slow(buddy_t *b, buddy_arena_t *ar, unsigned j, uint64_t i)
{
    const buddy_hb_t *h = &b->lay_free[j];
    uint32_t bit = UINT32_C(1) << j;
    int was_empty = ar->min[j] == BUDDY_NONE;
    if ((ar->sparse & bit) && !was_empty) {
        for (uint64_t l = 1, m = ar->min[j] >> 6; l < h->nlev; l++, m >>= 6)
            ar->bits[buddy_hb_at(h, (uint32_t)l, m)] |= UINT64_C(1) << (m & 63);
        ar->sparse &= ~bit;
    }
    buddy_hb_add(ar->bits, h, &ar->min[j], i);
    if (was_empty)
        buddy_order_on(b, ar->slot, j);
}

static void buddy_take_slow(buddy_t *b, buddy_arena_t *ar, unsigned j, uint64_t i)
{
    buddy_hb_del(ar->bits, &b->lay_free[j], &ar->min[j], i);
    if (ar->min[j] == BUDDY_NONE) { /* empty: every summary word is zero again */
        ar->sparse |= UINT32_C(1) << j;
        buddy_order_off(b, ar->slot, j);
    }
}

/* Mark block (j, i) of a regular arena free; w = buddy_pair(b, ar, j, i). */
static inline void buddy_put(buddy_t *b, buddy_arena_t *ar, unsigned j, uint64_t i, uint64_t *w)
{
    if ((ar->sparse >> j & 1) && ar->min[j] == BUDDY_NONE) {
        w[0] |= UINT64_C(1) << (i & 63);
        ar->min[j] = (uint32_t)i;
        buddy_order_on(b, ar->slot, j);
    } else {
        buddy_put_slow(b, ar, j, i);
    }
}

/* Take free block (j, i) of a regular arena out of its set. */
static inline void buddy_take(buddy_t *b, buddy_arena_t *ar, unsigned j, uint64_t i, uint64_t *w)
{
    if (ar->sparse >> j & 1) { /* i is the only member */
        w[0] &= ~(UINT64_C(1) << (i & 63));
        ar->min[j] = BUDDY_NONE;
        buddy_order_off(b, ar->slot, j);
    } else {
        buddy_take_slow(b, ar, j, i);
    }
}

/* Mark block (j, i) of a regular arena free, or an over-size arena (j > a). */
static void buddy_free_add(buddy_t *b, buddy_arena_t *ar, unsigned j, uint64_t i)
{
    if (ar->bits != NULL)
        buddy_put(b, ar, j, i, buddy_pair(b, ar, j, i));
    else
        buddy_order_on(b, ar->slot, j);
}

static void buddy_free_del(buddy_t *b, buddy_arena_t *ar, unsigned j, uint64_t i)
{
    if (ar->bits != NULL)
        buddy_take(b, ar, j, i, buddy_pair(b, ar, j, i));
    else
        buddy_order_off(b, ar->slot, j);
}

/* ---- arenas ------------------------------------------------------------------ */

/*
 * An arena's bitmaps: zeroed memory taken straight from the kernel when it
 * is large (mmap), so that a new arena costs only the pages its blocks
 * touch, not a memset of the whole map (1 MiB for a 1 GiB arena of 512-byte
 * blocks) — what a short trace or a sweep of many runs would otherwise pay
 * per arena.  Small maps come from calloc.
 */
#define BUDDY_MMAP_BYTES (64u << 10)

static uint64_t *buddy_bits_new(size_t words)
{
    size_t bytes = words * sizeof(uint64_t);
    if (bytes < BUDDY_MMAP_BYTES)
        return calloc(words, sizeof(uint64_t));
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void buddy_bits_drop(uint64_t *bits, size_t words)
{
    if (bits == NULL)
        return;
    size_t bytes = words * sizeof(uint64_t);
    if (bytes < BUDDY_MMAP_BYTES)
        free(bits);
    else
        munmap(bits, bytes);
}

/* Return a wholly free arena (already out of every free set) to the device. */
static void buddy_release(buddy_t *b, buddy_arena_t *ar)
{
    gm_device_free(b->base.dev, ar->base, ar->got);
    gm__idmap_remove(&b->map, (ar->base >> b->arena_shift) + 1, NULL);
    b->last_key = 0;
    b->last = NULL;
    b->arenas[ar->slot] = NULL;
    buddy_slots_add(b, BUDDY_VACANT, ar->slot);
    if (ar->bits != NULL) {
        if (b->nspares < BUDDY_SPARES)
            b->spares[b->nspares++] = ar->bits; /* all zero again */
        else
            buddy_bits_drop(ar->bits, b->lay_words);
    }
    free(ar);
}

/* Return every wholly free arena to the device; the number returned. */
static unsigned buddy_release_free(buddy_t *b)
{
    unsigned n = 0;
    for (uint32_t s = 0; s < b->nslots; s++) {
        buddy_arena_t *ar = b->arenas[s];
        if (ar == NULL)
            continue;
        if (ar->bits != NULL ? buddy_hb_has(ar->bits, &b->lay_free[b->a], 0)
                             : ar->over == BUDDY_OVER_FREE) {
            buddy_free_del(b, ar, ar->order, 0);
            buddy_release(b, ar);
            n++;
        }
    }
    return n;
}

/*
 * Take a new arena of order `order` (a: regular; > a: over-size) from the
 * device, retrying once after returning wholly free arenas when the device
 * refuses.  The new arena is free (in the free sets).  Returns 0,
 * GM_ALLOC_OOM when the device refuses, or GM_ENOMEM.
 */
static int buddy_arena_new(buddy_t *b, unsigned order, buddy_arena_t **out)
{
    gm_device_t *dev = b->base.dev;
    uint64_t bytes = UINT64_C(1) << (order + b->min_shift);
    uint64_t addr, got;
    if (gm_device_malloc(dev, bytes, bytes, &addr, &got) != 0) {
        if (b->release != BUDDY_RELEASE_NEVER || buddy_release_free(b) == 0 ||
            gm_device_malloc(dev, bytes, bytes, &addr, &got) != 0)
            return GM_ALLOC_OOM;
    }

    buddy_arena_t *ar = calloc(1, sizeof *ar);
    uint64_t *bits = NULL;
    int rc = ar == NULL ? GM_ENOMEM : 0;
    if (rc == 0 && order == b->a) {
        bits = b->nspares > 0 ? b->spares[--b->nspares] : buddy_bits_new(b->lay_words);
        if (bits == NULL)
            rc = GM_ENOMEM;
    }
    uint32_t slot = b->set_min[BUDDY_VACANT]; /* the lowest vacant slot, else a new one */
    if (rc == 0 && slot == BUDDY_NONE) {
        slot = b->nslots;
        if (slot == b->slotcap && buddy_sets_grow(b, 2 * b->slotcap) != 0)
            rc = GM_ENOMEM;
    }
    if (rc == 0) /* the last step that can fail: nothing after it does */
        rc = gm__idmap_put(&b->map, (addr >> b->arena_shift) + 1, slot);
    if (rc != 0) {
        buddy_bits_drop(bits, b->lay_words);
        free(ar);
        gm_device_free(dev, addr, got);
        return rc;
    }
    if (slot == b->nslots)
        b->nslots++;
    else
        buddy_slots_del(b, BUDDY_VACANT, slot);
    for (unsigned k = 0; k <= BUDDY_MAX_A; k++)
        ar->min[k] = BUDDY_NONE;
    ar->sparse = ~UINT32_C(0);

    ar->base = addr;
    ar->got = got;
    ar->bits = bits;
    ar->slot = slot;
    ar->order = order;
    ar->over = order > b->a ? BUDDY_OVER_FREE : 0;
    b->arenas[slot] = ar;
    buddy_free_add(b, ar, order, 0);
    *out = ar;
    return 0;
}

/* ---- the interface ------------------------------------------------------------ */

static int buddy_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                        gm_error_t *err)
{
    uint64_t min = values[0].size, arena = values[1].size;
    int release = values[2].e;
    if (min == 0 || (min & (min - 1)) != 0)
        return gm_param_invalid(err, &gm__policy_buddy, "min_block", min,
                                "not a power of two");
    if (arena == 0 || (arena & (arena - 1)) != 0)
        return gm_param_invalid(err, &gm__policy_buddy, "arena", arena,
                                "not a power of two");
    if (arena < min) {
        char why[64];
        snprintf(why, sizeof why, "smaller than min_block (%" PRIu64 ")", min);
        return gm_param_invalid(err, &gm__policy_buddy, "arena", arena, why);
    }
    unsigned min_shift = (unsigned)__builtin_ctzll(min), arena_shift = (unsigned)__builtin_ctzll(arena);
    if (arena_shift - min_shift > BUDDY_MAX_A)
        return gm_param_invalid(err, &gm__policy_buddy, "arena", arena,
                                "more than 2^24 min-blocks per arena (raise min_block)");
    if (release != BUDDY_RELEASE_NEVER && release != BUDDY_RELEASE_EMPTY)
        return gm_error_set(err, GM_EINVAL, "invalid value for buddy.release: expected never|empty");

    buddy_t *b = gm_policy_new(sizeof *b, &gm__policy_buddy, dev, err);
    if (b == NULL)
        return GM_ENOMEM;
    b->min_block = min;
    b->arena = arena;
    b->min_shift = min_shift;
    b->arena_shift = arena_shift;
    b->a = arena_shift - min_shift;
    b->release = release;

    uint32_t at = 0;
    for (unsigned k = 0; k <= b->a; k++) {
        uint64_t nbits = UINT64_C(1) << (b->a - k);
        at = buddy_hb_layout(&b->lay_free[k], nbits, at);
        b->off0[k] = b->lay_free[k].off[0];
    }
    b->lay_words = at;
    for (unsigned j = 0; j <= BUDDY_ORDERS; j++)
        b->set_min[j] = BUDDY_NONE;

    gm__idmap_init(&b->map);
    if (buddy_sets_grow(b, 64) != 0) {
        free(b->arenas);
        free(b);
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'buddy'");
    }
    *out = &b->base;
    return 0;
}

static int buddy_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    buddy_t *b = BUDDY(p);
    if (b == NULL)
        return GM_EINVAL;
    uint64_t size = req->size;
    if (size > (UINT64_C(1) << 63))
        return GM_ALLOC_OOM;
    unsigned bits = gm__log2_ceil(size);
    unsigned k = bits > b->min_shift ? bits - b->min_shift : 0;
    buddy_arena_t *ar;
    int rc;

    if (k > b->a) { /* over-size: a dedicated arena, reused only whole */
        if (b->order_mask >> k & 1) {
            ar = b->arenas[b->set_min[k]];
        } else if ((rc = buddy_arena_new(b, k, &ar)) != 0) {
            return rc;
        }
        buddy_free_del(b, ar, k, 0);
        ar->over = BUDDY_OVER_USED;
        uint64_t bytes = UINT64_C(1) << bits;
        ar->allocated = bytes;
        b->allocated += bytes;
        out->addr = ar->base;
        out->size = bytes;
        return 0;
    }

    uint64_t usable = b->order_mask & ((UINT64_C(2) << b->a) - 1) & (~UINT64_C(0) << k);
    unsigned j;
    uint64_t i;
    if (usable != 0) {
        j = (unsigned)__builtin_ctzll(usable);
        ar = b->arenas[b->set_min[j]];
        i = ar->min[j];
    } else {
        if ((rc = buddy_arena_new(b, b->a, &ar)) != 0)
            return rc;
        j = b->a;
        i = 0;
    }
    buddy_take(b, ar, j, i, buddy_pair(b, ar, j, i));
    while (j > k) { /* split: keep the lower half, free the upper */
        j--;
        i <<= 1;
        buddy_put(b, ar, j, i | 1, buddy_pair(b, ar, j, i));
    }
    buddy_pair(b, ar, k, i)[1] |= UINT64_C(1) << (i & 63);
    uint64_t bytes = b->min_block << k;
    ar->allocated += bytes;
    b->allocated += bytes;
    out->addr = ar->base + (i << (k + b->min_shift));
    out->size = bytes;
    return 0;
}

static int buddy_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    (void)stream;
    buddy_t *b = BUDDY(p);
    if (b == NULL)
        return GM_EINVAL;
    uint64_t size = blk->size;
    if (size < b->min_block || (size & (size - 1)) != 0)
        return GM_EINVAL;
    buddy_arena_t *ar = buddy_lookup(b, blk->addr);
    if (ar == NULL)
        return GM_EINVAL;
    unsigned k = (unsigned)__builtin_ctzll(size) - b->min_shift;
    uint64_t off = blk->addr - ar->base;

    if (ar->bits == NULL) { /* over-size */
        if (off != 0 || k != ar->order || ar->over != BUDDY_OVER_USED)
            return GM_EINVAL;
        ar->allocated = 0;
        b->allocated -= size;
        if (b->release == BUDDY_RELEASE_EMPTY) {
            buddy_release(b, ar);
        } else {
            ar->over = BUDDY_OVER_FREE;
            buddy_free_add(b, ar, k, 0);
        }
        return 0;
    }

    if (k > b->a || (off & (size - 1)) != 0)
        return GM_EINVAL;
    uint64_t i = off >> (k + b->min_shift);
    uint64_t *w = buddy_pair(b, ar, k, i), bit = UINT64_C(1) << (i & 63);
    if ((w[1] & bit) == 0)
        return GM_EINVAL; /* not a live block: double free or wrong size */
    w[1] &= ~bit;
    ar->allocated -= size;
    b->allocated -= size;
    /* merge while the buddy (i ^ 1, in the same word) is free */
    while (k < b->a && (w[0] >> ((i ^ 1) & 63) & 1)) {
        buddy_take(b, ar, k, i ^ 1, w);
        i >>= 1;
        k++;
        w = buddy_pair(b, ar, k, i);
    }
    if (k == b->a && b->release == BUDDY_RELEASE_EMPTY)
        buddy_release(b, ar);
    else
        buddy_put(b, ar, k, i, w);
    return 0;
}

static void buddy_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    buddy_t *b = BUDDY(p);
    if (b == NULL)
        return;
    out->allocated = b->allocated;
    if (b->order_mask != 0)
        out->largest_free = b->min_block << (63 - __builtin_clzll(b->order_mask));
}

/* ---- check ------------------------------------------------------------------------ */

typedef struct buddy_ck {
    gm_check_t c;
    uint64_t blocks, free_bytes, alloc_bytes;
} buddy_ck_t;

/* Walk the blocks under node (k, i) of a regular arena. */
static void buddy_walk(buddy_t *b, const buddy_arena_t *ar, unsigned k, uint64_t i,
                       buddy_ck_t *ck)
{
    int f = buddy_hb_has(ar->bits, &b->lay_free[k], i), u = buddy_alloc_has(b, ar, k, i);
    uint64_t addr = ar->base + (i << (k + b->min_shift)), bytes = b->min_block << k;
    if (f && u)
        gm_check_fail(&ck->c, "block at 0x%" PRIx64 " (order %u) is both free and allocated", addr,
                      k);
    if (f || u) {
        ck->blocks++;
        if (f)
            ck->free_bytes += bytes;
        else
            ck->alloc_bytes += bytes;
        return;
    }
    if (k == 0) {
        gm_check_fail(&ck->c,
                      "min-block at 0x%" PRIx64 " lies in no block (hole in arena 0x%" PRIx64 ")",
                      addr, ar->base);
        return;
    }
    buddy_walk(b, ar, k - 1, 2 * i, ck);
    buddy_walk(b, ar, k - 1, 2 * i + 1, ck);
    if (buddy_hb_has(ar->bits, &b->lay_free[k - 1], 2 * i) &&
        buddy_hb_has(ar->bits, &b->lay_free[k - 1], 2 * i + 1))
        gm_check_fail(
            &ck->c, "free block at 0x%" PRIx64 " (order %u) that should have merged with its buddy",
            addr, k - 1);
}

/* Summary levels of a set consistent with the words below (all zero for a
 * sparse set, which has at most one member), and its cursor its lowest
 * member; returns the level-0 population.  Level 0 is read once (it is
 * nearly all of the set); with `other` (an interleaved layout) the
 * population of the words that follow each level-0 word is added to it. */
static uint64_t buddy_hb_verify(const uint64_t *w, const buddy_hb_t *h, uint64_t nbits,
                                uint32_t min, int sparse, const char *what, buddy_ck_t *ck,
                                uint64_t *other)
{
    uint64_t words = (nbits + 63) / 64, pop = 0, lowest = BUDDY_NONE;
    int summary_ok = 1;
    for (uint64_t x = 0; x < words; x++) {
        uint64_t word = w[buddy_hb_at(h, 0, 64 * x)];
        if (h->nlev > 1) {
            int bit = (int)(w[buddy_hb_at(h, 1, x)] >> (x % 64)) & 1;
            summary_ok &= bit == (!sparse && word != 0);
        }
        if (other != NULL) {
            uint64_t next = w[buddy_hb_at(h, 0, 64 * x) + 1];
            if (next != 0)
                *other += (uint64_t)__builtin_popcountll(next);
        }
        if (word == 0) /* most are; and popcount may be a libgcc call */
            continue;
        if (lowest == BUDDY_NONE)
            lowest = 64 * x + (uint64_t)__builtin_ctzll(word);
        pop += (uint64_t)__builtin_popcountll(word);
    }
    if (lowest != min)
        gm_check_fail(&ck->c, "%s: cursor %" PRIu32 " but the lowest member is %" PRIu64, what, min,
                      lowest);
    if (sparse && pop > 1)
        gm_check_fail(&ck->c, "%s: sparse but %" PRIu64 " members", what, pop);
    if (!summary_ok)
        gm_check_fail(&ck->c, "%s: summary level 1 out of date", what);
    for (uint32_t l = 1; l + 1 < h->nlev; l++) {
        words = h->words[l];
        for (uint64_t x = 0; x < h->words[l + 1] * 64; x++) {
            int nonzero = x < words && w[buddy_hb_at(h, l, 64 * x)] != 0;
            int bit = (int)(w[buddy_hb_at(h, l + 1, x)] >> (x % 64)) & 1;
            if (nonzero != bit) {
                gm_check_fail(&ck->c, "%s: summary level %u out of date", what, l + 1);
                return pop;
            }
        }
    }
    /* level-1 bits above the last level-0 word must be clear */
    if (h->nlev > 1) {
        for (uint64_t x = h->words[0]; x < h->words[1] * 64; x++)
            if ((w[buddy_hb_at(h, 1, x)] >> (x % 64)) & 1) {
                gm_check_fail(&ck->c, "%s: summary level 1 has a bit past the end", what);
                break;
            }
    }
    return pop;
}

static void buddy_check_arena(buddy_t *b, const buddy_arena_t *ar, uint32_t s,
                              uint64_t *order_count, buddy_ck_t *ck)
{
    uint64_t size = UINT64_C(1) << (ar->order + b->min_shift);
    if (ar->slot != s)
        gm_check_fail(&ck->c, "arena 0x%" PRIx64 " in slot %u says slot %u", ar->base, s, ar->slot);
    if ((ar->base & (size - 1)) != 0 || ar->got < size)
        gm_check_fail(&ck->c,
                      "arena 0x%" PRIx64 " is not an aligned device block of %" PRIu64 " bytes",
                      ar->base, size);
    if (buddy_lookup(b, ar->base) != ar)
        gm_check_fail(&ck->c, "arena 0x%" PRIx64 " cannot be found from its address", ar->base);

    if (ar->bits == NULL) {
        if (ar->order <= b->a || (ar->over != BUDDY_OVER_FREE && ar->over != BUDDY_OVER_USED)) {
            gm_check_fail(&ck->c, "over-size arena 0x%" PRIx64 " has a bad order or state",
                          ar->base);
            return;
        }
        int is_free = ar->over == BUDDY_OVER_FREE;
        if (buddy_hb_has(buddy_set(b, ar->order), &b->setlay, s) != is_free)
            gm_check_fail(&ck->c,
                          "free list of order %u out of date for over-size arena 0x%" PRIx64,
                          ar->order, ar->base);
        order_count[ar->order] += (uint64_t)is_free;
        if (ar->allocated != (is_free ? 0 : size))
            gm_check_fail(&ck->c,
                          "over-size arena 0x%" PRIx64 " counts %" PRIu64 " allocated bytes",
                          ar->base, ar->allocated);
        ck->alloc_bytes += is_free ? 0 : size;
        if (is_free && b->release == BUDDY_RELEASE_EMPTY)
            gm_check_fail(&ck->c, "wholly free arena 0x%" PRIx64 " kept with release=empty",
                          ar->base);
        return;
    }

    if (ar->order != b->a) {
        gm_check_fail(&ck->c, "arena 0x%" PRIx64 " has order %u, not %u", ar->base, ar->order,
                      b->a);
        return;
    }
    buddy_ck_t local = *ck;
    local.blocks = local.free_bytes = local.alloc_bytes = 0;
    buddy_walk(b, ar, b->a, 0, &local);
    uint64_t bits = 0;
    char what[96];
    for (unsigned k = 0; k <= b->a; k++) {
        uint64_t nbits = UINT64_C(1) << (b->a - k);
        snprintf(what, sizeof what, "arena 0x%" PRIx64 " order %u free set", ar->base, k);
        /* free bits, and the allocated bits interleaved with them */
        uint64_t alloc_bits = 0;
        bits += buddy_hb_verify(ar->bits, &b->lay_free[k], nbits, ar->min[k],
                                (int)(ar->sparse >> k) & 1, what, &local, &alloc_bits);
        bits += alloc_bits;
        int nonempty = ar->min[k] != BUDDY_NONE;
        if (buddy_hb_has(buddy_set(b, k), &b->setlay, s) != nonempty)
            gm_check_fail(&local.c, "free list of order %u out of date for arena 0x%" PRIx64, k,
                          ar->base);
        order_count[k] += (uint64_t)nonempty;
    }
    if (bits != local.blocks)
        gm_check_fail(&local.c,
                      "arena 0x%" PRIx64 " has %" PRIu64 " block bits for %" PRIu64
                      " blocks (a stray bit inside a block)",
                      ar->base, bits, local.blocks);
    if (local.free_bytes + local.alloc_bytes != size && local.c.bad == ck->c.bad)
        gm_check_fail(&local.c,
                      "blocks of arena 0x%" PRIx64 " cover %" PRIu64 " of %" PRIu64 " bytes",
                      ar->base, local.free_bytes + local.alloc_bytes, size);
    if (local.alloc_bytes != ar->allocated)
        gm_check_fail(&local.c,
                      "arena 0x%" PRIx64 " counts %" PRIu64
                      " allocated bytes, blocks hold %" PRIu64,
                      ar->base, ar->allocated, local.alloc_bytes);
    if (local.free_bytes == size && b->release == BUDDY_RELEASE_EMPTY)
        gm_check_fail(&local.c, "wholly free arena 0x%" PRIx64 " kept with release=empty",
                      ar->base);
    ck->c.bad = local.c.bad;
    ck->alloc_bytes += local.alloc_bytes;
}

static int buddy_check(gm_policy_t *p, gm_check_t *ck)
{
    buddy_t *b = BUDDY(p);
    if (b == NULL)
        return gm_check_fail(ck, "not a buddy policy");
    buddy_ck_t bk = {.c = *ck}; /* the report, with the walk's tallies */
    uint64_t order_count[BUDDY_ORDERS] = {0}, reserved = 0, narenas = 0;
    const uint64_t *vacant = buddy_set(b, BUDDY_VACANT);
    for (uint32_t s = 0; s < b->nslots; s++) {
        const buddy_arena_t *ar = b->arenas[s];
        if ((ar == NULL) != buddy_hb_has(vacant, &b->setlay, s))
            gm_check_fail(&bk.c, "slot %u is %s but %s the vacant set", s, ar ? "used" : "empty",
                          ar ? "in" : "not in");
        if (ar == NULL)
            continue;
        narenas++;
        reserved += ar->got;
        buddy_check_arena(b, ar, s, order_count, &bk);
    }
    for (uint32_t s = b->nslots; s < b->slotcap; s++)
        if (b->arenas[s] != NULL)
            gm_check_fail(&bk.c, "slot %u above the high-water mark is in use", s);
    for (unsigned j = 0; j <= BUDDY_ORDERS; j++) {
        char what[48];
        snprintf(what, sizeof what, "slot set %u", j);
        uint64_t pop =
            buddy_hb_verify(buddy_set(b, j), &b->setlay, b->slotcap, b->set_min[j], 0, what, &bk,
                            NULL);
        if (j == BUDDY_VACANT)
            continue;
        if (pop != order_count[j])
            gm_check_fail(&bk.c,
                          "free list of order %u holds %" PRIu64 " arenas, %" PRIu64 " expected", j,
                          pop, order_count[j]);
        if ((int)(b->order_mask >> j & 1) != (pop != 0))
            gm_check_fail(&bk.c, "order mask bit %u out of date", j);
    }
    if (narenas != gm__idmap_count(&b->map))
        gm_check_fail(&bk.c, "address map holds %zu arenas, %" PRIu64 " exist",
                      gm__idmap_count(&b->map), narenas);
    if (bk.alloc_bytes != b->allocated)
        gm_check_fail(&bk.c, "allocated bytes %" PRIu64 " differ from the blocks' %" PRIu64,
                      b->allocated, bk.alloc_bytes);
    if (reserved != p->dev->reserved)
        gm_check_fail(&bk.c, "arenas hold %" PRIu64 " bytes but the device's reserved is %" PRIu64,
                      reserved, p->dev->reserved);
    *ck = bk.c;
    return ck->bad;
}

/* torch.cuda.empty_cache(): give every wholly free arena back (with
 * release=empty there is none). */
static void buddy_empty_cache(gm_policy_t *p)
{
    buddy_t *b = BUDDY(p);
    if (b != NULL)
        buddy_release_free(b);
}

/* The device is left as it is: its blocks die with it. */
static void buddy_destroy(gm_policy_t *p)
{
    buddy_t *b = BUDDY(p);
    if (b == NULL)
        return;
    for (uint32_t s = 0; s < b->nslots; s++) {
        if (b->arenas[s] != NULL) {
            buddy_bits_drop(b->arenas[s]->bits, b->lay_words);
            free(b->arenas[s]);
        }
    }
    for (unsigned i = 0; i < b->nspares; i++)
        buddy_bits_drop(b->spares[i], b->lay_words);
    free(b->arenas);
    free(b->sets);
    gm__idmap_release(&b->map);
    free(b);
}

static const gm_param_spec_t buddy_params[] = {
    {"min_block", GM_PARAM_SIZE, "512",
     "smallest block (a power of two); requests round up to a power of two", NULL},
    {"arena", GM_PARAM_SIZE, "1GiB",
     "bytes taken from the device at a time (a power of two >= min_block)", NULL},
    {"release", GM_PARAM_ENUM, "never",
     "give a wholly free arena back to the device: never (only when it is full) or when empty",
     "never|empty"},
};

const gm_policy_ops_t gm__policy_buddy = {
    .name = "buddy",
    .help = "binary buddy system: power-of-two blocks split and merged inside power-of-two arenas",
    GM_POLICY_OPS(buddy),
    .empty_cache = buddy_empty_cache,
};
