/*
 * sim/tlsf.c — Two-Level Segregated Fit over device arenas.
 *
 * Algorithm (M. Masoni, I. Ripoll, A. Crespo, J. Real, "TLSF: a New Dynamic
 * Memory Allocator for Real-Time Systems", ECRTS 2004; the public C
 * implementation mattconte/tlsf was read for its mapping, not copied):
 *
 *   Sizes are counted in units of `align` bytes (every block is a whole
 *   number of units).  Free blocks sit in segregated lists indexed by two
 *   levels: the first level (fl) is the power of two of the size, the second
 *   (sl) splits each power-of-two range into `sl_count` equal parts.  Sizes
 *   below sl_count units are all in fl 0, one list per unit count:
 *
 *     u < sl_count:  fl = 0, sl = u
 *     otherwise:     f = floor(log2 u), sl = (u >> (f − log2 sl_count)) − sl_count,
 *                    fl = f − log2 sl_count + 1
 *
 *   A bitmap of non-empty first levels and one of non-empty second levels
 *   per first level make the search two find-first-set operations (O(1)).
 *   A request is rounded up to the next class boundary before the search
 *   ("good fit"): any block of the class found is large enough, so the head
 *   of its list is taken without looking at its size; a block in the
 *   request's own class that would have fit is not found (TLSF's bounded
 *   internal fragmentation, the price of O(1)).  The block taken is split
 *   when the rest is at least one unit; the rest goes back as a free block.
 *   A freed block merges at once with its free physical neighbours
 *   (immediate coalescing), so no two free blocks are ever adjacent.  Lists
 *   are LIFO (a freed block goes to the head).
 *
 *   Memory comes from the device in arenas of `arena` bytes; a request
 *   larger than that gets an arena of its own size (which, once free, serves
 *   any request like every other arena).  When no list holds a large enough
 *   block a new arena is taken; if the device refuses, every wholly free
 *   arena is given back and the device malloc retried once, else the result
 *   is GM_ALLOC_OOM.  empty_cache gives every wholly free arena back.
 *
 * Metadata lives outside the simulated memory (it has no backing): blocks
 * are the records of sim/blocktree.h (gm__bt_heap_t: one array, handles
 * recycled through its spare stack), split with gm__bt_cut and merged with
 * gm__bt_absorb along their physical neighbour links (prev/next).  A free
 * block's left/right links are its free list's (previous, next) and its
 * .list names that list (fl × sl_count + sl); a used one's .list is
 * GM__BT_USED.  .flags is the block's arena.  An arena is its base, size
 * and first block; the live blocks are found by address through the shared
 * id map (base/idmap.h).
 *
 * Invariants (check):
 *   - the blocks of every arena tile it exactly, in address order, with
 *     consistent neighbour links; every block is a non-zero number of units;
 *   - no two physically adjacent blocks are both free ("should have merged");
 *   - every free block is in the list its size maps to, every listed block is
 *     free, the lists' links are consistent, a second-level bit is set iff
 *     its list is non-empty and a first-level bit iff any of its lists is;
 *   - every used block is in the address map and nothing else is;
 *   - per-arena and total allocated bytes equal the used blocks' sizes; the
 *     arenas' bytes sum to the device's reserved bytes.
 */
#include "gmsim/policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/idmap.h"
#include "base/vec.h"
#include "sim/carve.h"

#define TLSF_NIL UINT32_MAX
#define TLSF_FL_MAX 64
#define TLSF_SL_MAX 64

/* A block: gm__bt_blk_t, size in bytes (a multiple of align), prev/next its
 * physical neighbours in the arena, left/right its free list links, list its
 * list while free (GM__BT_USED when used), flags its arena. */
typedef gm__bt_blk_t tlsf_block_t;

static inline int tlsf_is_free(const tlsf_block_t *blk) { return blk->list != GM__BT_USED; }

typedef struct tlsf_arena {
    uint64_t base;
    uint64_t size;      /* bytes reserved from the device */
    uint64_t allocated; /* bytes in its used blocks */
    uint32_t first;     /* lowest block; TLSF_NIL when the slot is vacant */
    uint32_t next_vacant;
} tlsf_arena_t;

typedef struct tlsf {
    gm_policy_t base;
    /* parameters */
    uint64_t arena_size, align;
    unsigned align_shift, sl_log, sl_count;

    uint64_t fl_map;
    uint64_t sl_map[TLSF_FL_MAX];
    uint32_t *heads; /* TLSF_FL_MAX × sl_count list heads */

    gm__bt_heap_t heap; /* the block records */

    tlsf_arena_t *arenas;
    uint32_t narenas;
    size_t arenas_cap;
    uint32_t vacant; /* chain of vacant arena slots */

    gm__idmap_t live; /* address of a used block → its record */
    uint64_t allocated;
} tlsf_t;

extern const gm_policy_ops_t gm__policy_tlsf;

#define TLSF(p) GM_POLICY_DOWNCAST(tlsf_t, p, gm__policy_tlsf)

/* ---- the two-level mapping -------------------------------------------------- */

/* The list a free block of u units belongs to. */
static inline void tlsf_map_insert(const tlsf_t *t, uint64_t u, unsigned *fl, unsigned *sl)
{
    if (u < t->sl_count) {
        *fl = 0;
        *sl = (unsigned)u;
    } else {
        unsigned f = gm__log2_floor(u);
        *sl = (unsigned)(u >> (f - t->sl_log)) ^ t->sl_count;
        *fl = f - t->sl_log + 1;
    }
}

/* The first list whose every block holds u units: u rounded up to the next
 * class boundary, then mapped. */
static inline void tlsf_map_search(const tlsf_t *t, uint64_t u, unsigned *fl, unsigned *sl)
{
    if (u >= t->sl_count)
        u += (UINT64_C(1) << (gm__log2_floor(u) - t->sl_log)) - 1;
    tlsf_map_insert(t, u, fl, sl);
}

static inline uint32_t *tlsf_head(tlsf_t *t, unsigned fl, unsigned sl)
{
    return &t->heads[(size_t)fl * t->sl_count + sl];
}

/* Put free block b at the head of the list its size maps to. */
static inline void tlsf_list_add(tlsf_t *t, uint32_t b)
{
    tlsf_block_t *blocks = t->heap.b, *blk = &blocks[b];
    unsigned fl, sl;
    tlsf_map_insert(t, blk->size >> t->align_shift, &fl, &sl);
    uint32_t list = fl * t->sl_count + sl, *head = &t->heads[list];
    blk->left = TLSF_NIL;
    blk->right = *head;
    if (*head != TLSF_NIL)
        blocks[*head].left = b;
    *head = b;
    blk->list = list;
    t->sl_map[fl] |= UINT64_C(1) << sl;
    t->fl_map |= UINT64_C(1) << fl;
}

/* Take free block b out of its list; it is used from here on. */
static inline void tlsf_list_del(tlsf_t *t, uint32_t b)
{
    tlsf_block_t *blocks = t->heap.b, *blk = &blocks[b];
    uint32_t list = blk->list, *head = &t->heads[list];
    if (blk->left != TLSF_NIL)
        blocks[blk->left].right = blk->right;
    else
        *head = blk->right;
    if (blk->right != TLSF_NIL)
        blocks[blk->right].left = blk->left;
    if (*head == TLSF_NIL) {
        unsigned fl = list >> t->sl_log, sl = list & (t->sl_count - 1);
        t->sl_map[fl] &= ~(UINT64_C(1) << sl);
        if (t->sl_map[fl] == 0)
            t->fl_map &= ~(UINT64_C(1) << fl);
    }
    blk->list = GM__BT_USED;
}

/* Head of the first non-empty list at or above (fl, sl), or TLSF_NIL. */
static inline uint32_t tlsf_find(tlsf_t *t, unsigned fl, unsigned sl)
{
    uint64_t bits = sl < 64 ? t->sl_map[fl] & (~UINT64_C(0) << sl) : 0;
    if (bits == 0) {
        uint64_t fbits = fl + 1 < 64 ? t->fl_map & (~UINT64_C(0) << (fl + 1)) : 0;
        if (fbits == 0)
            return TLSF_NIL;
        fl = (unsigned)__builtin_ctzll(fbits);
        bits = t->sl_map[fl];
    }
    return *tlsf_head(t, fl, (unsigned)__builtin_ctzll(bits));
}

/* ---- arenas ------------------------------------------------------------------- */

/* Give every wholly free arena back to the device; returns how many. */
static unsigned tlsf_release_empty(tlsf_t *t)
{
    unsigned n = 0;
    for (uint32_t a = 0; a < t->narenas; a++) {
        tlsf_arena_t *ar = &t->arenas[a];
        if (ar->first == TLSF_NIL)
            continue;
        tlsf_block_t *blk = &t->heap.b[ar->first];
        if (!tlsf_is_free(blk) || blk->size != ar->size)
            continue;
        tlsf_list_del(t, ar->first);
        gm__bt_drop(&t->heap, ar->first);
        gm_device_free(t->base.dev, ar->base, ar->size);
        ar->first = TLSF_NIL;
        ar->allocated = 0;
        ar->next_vacant = t->vacant;
        t->vacant = a;
        n++;
    }
    return n;
}

/*
 * Take an arena of at least `size` bytes from the device (retrying once
 * after giving wholly free arenas back); its one block, not in any list, is
 * returned in *out.  0, GM_ALLOC_OOM, or GM_ENOMEM.
 */
static int tlsf_arena_new(tlsf_t *t, uint64_t size, uint32_t *out)
{
    gm_device_t *dev = t->base.dev;
    uint64_t want = size > t->arena_size ? size : t->arena_size;
    uint64_t addr, got;
    if (gm_device_malloc(dev, want, t->align, &addr, &got) != 0) {
        if (tlsf_release_empty(t) == 0 || gm_device_malloc(dev, want, t->align, &addr, &got) != 0)
            return GM_ALLOC_OOM;
    }
    uint32_t a;
    if (t->vacant != TLSF_NIL) {
        a = t->vacant;
        t->vacant = t->arenas[a].next_vacant;
    } else {
        if (GM_VEC_RESERVE(t->arenas, t->arenas_cap, (size_t)t->narenas + 1, 16)) {
            gm_device_free(dev, addr, got);
            return GM_ENOMEM;
        }
        a = t->narenas++;
    }
    uint32_t b = gm__bt_new(&t->heap);
    if (b == GM__BT_NONE) {
        gm_device_free(dev, addr, got);
        t->arenas[a].first = TLSF_NIL;
        t->arenas[a].next_vacant = t->vacant;
        t->vacant = a;
        return GM_ENOMEM;
    }
    t->arenas[a] = (tlsf_arena_t){addr, got, 0, b, TLSF_NIL};
    tlsf_block_t *blk = &t->heap.b[b]; /* used, in no list, no neighbours */
    blk->addr = addr;
    blk->size = got;
    blk->flags = a;
    *out = b;
    return 0;
}

/* ---- the interface --------------------------------------------------------------- */

static int tlsf_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                       gm_error_t *err)
{
    uint64_t arena = values[0].size, align = values[2].size;
    int64_t slc = values[1].i;
    if (slc < 1 || slc > TLSF_SL_MAX || (slc & (slc - 1)) != 0)
        return gm_error_set(err, GM_EINVAL,
                            "invalid value '%" PRId64 "' for tlsf.sl_count: not a power of two "
                            "from 1 to 64",
                            slc);
    if (align == 0 || (align & (align - 1)) != 0 || align > (UINT64_C(1) << 30))
        return gm_param_invalid(err, &gm__policy_tlsf, "align", align,
                                "not a power of two up to 1 GiB");
    if (arena < align || arena > (UINT64_C(1) << 48))
        return gm_param_invalid(err, &gm__policy_tlsf, "arena", arena,
                                "not between align and 256 TiB");
    tlsf_t *t = gm_policy_new(sizeof *t, &gm__policy_tlsf, dev, err);
    if (t == NULL)
        return GM_ENOMEM;
    t->align = align;
    t->align_shift = (unsigned)__builtin_ctzll(align);
    t->arena_size = (arena + align - 1) & ~(align - 1);
    t->sl_count = (unsigned)slc;
    t->sl_log = (unsigned)__builtin_ctzll((uint64_t)slc);
    gm__bt_heap_init(&t->heap);
    t->vacant = TLSF_NIL;
    t->heads = malloc((size_t)TLSF_FL_MAX * t->sl_count * sizeof *t->heads);
    if (t->heads == NULL) {
        free(t);
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'tlsf'");
    }
    for (size_t i = 0; i < (size_t)TLSF_FL_MAX * t->sl_count; i++)
        t->heads[i] = TLSF_NIL;
    gm__idmap_init(&t->live);
    *out = &t->base;
    return 0;
}

static int tlsf_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    tlsf_t *t = TLSF(p);
    if (t == NULL)
        return GM_EINVAL;
    uint64_t size = (req->size + t->align - 1) & ~(t->align - 1);
    unsigned fl, sl;
    tlsf_map_search(t, size >> t->align_shift, &fl, &sl);
    uint32_t b = fl < TLSF_FL_MAX ? tlsf_find(t, fl, sl) : TLSF_NIL;
    if (b != TLSF_NIL) {
        tlsf_list_del(t, b);
    } else {
        int rc = tlsf_arena_new(t, size, &b);
        if (rc)
            return rc;
    }
    tlsf_block_t *blk = &t->heap.b[b];
    if (blk->size > size) {
        uint32_t r = gm__bt_new(&t->heap);
        if (r == GM__BT_NONE) {
            tlsf_list_add(t, b);
            return GM_ENOMEM;
        }
        gm__bt_cut(&t->heap, b, size, r);
        blk = &t->heap.b[b]; /* the array may have moved */
        t->heap.b[r].flags = blk->flags;
        tlsf_list_add(t, r);
    }
    if (gm__idmap_put(&t->live, blk->addr, b) != 0) {
        /* Out of host memory: the block stays free (unmerged pieces merge
         * at the next free of a neighbour; check() would name them). */
        tlsf_list_add(t, b);
        return GM_ENOMEM;
    }
    t->allocated += size;
    t->arenas[blk->flags].allocated += size;
    out->addr = blk->addr;
    out->size = size;
    return 0;
}

static int tlsf_free(gm_policy_t *p, const gm_block_t *blkp, uint32_t stream)
{
    (void)stream;
    tlsf_t *t = TLSF(p);
    if (t == NULL)
        return GM_EINVAL;
    uint32_t b = gm__carve_live(&t->heap, &t->live, blkp);
    if (b == GM__BT_NONE)
        return GM_EINVAL;
    tlsf_block_t *blocks = t->heap.b, *blk = &blocks[b];
    gm__idmap_remove(&t->live, blkp->addr, NULL);
    t->allocated -= blk->size;
    t->arenas[blk->flags].allocated -= blk->size;
    uint32_t prev = blk->prev, next = blk->next;
    if (prev != TLSF_NIL && tlsf_is_free(&blocks[prev])) {
        /* b merges into its lower neighbour */
        tlsf_list_del(t, prev);
        gm__bt_absorb(&t->heap, prev, b);
        b = prev;
    }
    if (next != TLSF_NIL && tlsf_is_free(&blocks[next])) {
        tlsf_list_del(t, next);
        gm__bt_absorb(&t->heap, b, next);
    }
    tlsf_list_add(t, b);
    return 0;
}

static void tlsf_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    tlsf_t *t = TLSF(p);
    if (t == NULL)
        return;
    out->allocated = t->allocated;
    if (t->fl_map == 0)
        return;
    /* The largest free block is in the highest non-empty list. */
    unsigned fl = gm__log2_floor(t->fl_map), sl = gm__log2_floor(t->sl_map[fl]);
    for (uint32_t b = *tlsf_head(t, fl, sl); b != TLSF_NIL; b = t->heap.b[b].right)
        if (t->heap.b[b].size > out->largest_free)
            out->largest_free = t->heap.b[b].size;
}

static int tlsf_check(gm_policy_t *p, gm_check_t *ck)
{
    tlsf_t *t = TLSF(p);
    if (t == NULL)
        return gm_check_fail(ck, "not a tlsf policy");
    const gm__carve_rules_t rules = {.seg = "arena", .nsets = TLSF_FL_MAX * t->sl_count,
                                     .merge_any = 1};
    gm__carve_tally_t tally = {0};
    uint64_t reserved = 0;
    for (uint32_t a = 0; a < t->narenas; a++) {
        const tlsf_arena_t *ar = &t->arenas[a];
        if (ar->first == TLSF_NIL)
            continue;
        reserved += ar->size;
        uint64_t alloc = tally.allocated;
        gm__carve_seg_t s;
        for (const tlsf_block_t *blk = gm__carve_first(&s, ck, &t->heap, &t->live, &rules, &tally,
                                                       ar->base, ar->size, ar->first);
             blk != NULL; blk = gm__carve_next(&s)) {
            if ((blk->size & (t->align - 1)) != 0)
                gm_check_fail(ck, "block at 0x%" PRIx64 " has size %" PRIu64 ", not whole units",
                              blk->addr, blk->size);
            if (blk->flags != a)
                gm_check_fail(ck, "block at 0x%" PRIx64 " names arena %" PRIu32 ", not %" PRIu32,
                              blk->addr, blk->flags, a);
        }
        alloc = tally.allocated - alloc;
        if (ck->bad == 0 && alloc != ar->allocated)
            gm_check_fail(
                ck, "arena 0x%" PRIx64 " counts %" PRIu64 " allocated bytes, blocks hold %" PRIu64,
                ar->base, ar->allocated, alloc);
    }
    uint64_t listed = 0;
    for (unsigned fl = 0; fl < TLSF_FL_MAX; fl++) {
        for (unsigned sl = 0; sl < t->sl_count; sl++) {
            uint32_t prev = TLSF_NIL, b = *tlsf_head(t, fl, sl);
            if ((b != TLSF_NIL) != (int)(t->sl_map[fl] >> sl & 1))
                gm_check_fail(ck, "second-level bit (%u, %u) out of date", fl, sl);
            for (uint64_t steps = 0; b != TLSF_NIL; b = t->heap.b[b].right) {
                if (b >= t->heap.n || ++steps > t->heap.n) {
                    gm_check_fail(ck, "list (%u, %u): broken chain", fl, sl);
                    break;
                }
                const tlsf_block_t *blk = &t->heap.b[b];
                unsigned f2, s2;
                tlsf_map_insert(t, blk->size >> t->align_shift, &f2, &s2);
                if (!tlsf_is_free(blk))
                    gm_check_fail(ck, "used block at 0x%" PRIx64 " is in a free list", blk->addr);
                else if (blk->list != fl * t->sl_count + sl)
                    gm_check_fail(ck,
                                  "block at 0x%" PRIx64 " in list (%u, %u) names list %" PRIu32,
                                  blk->addr, fl, sl, blk->list);
                if (f2 != fl || s2 != sl)
                    gm_check_fail(
                        ck, "block of %" PRIu64 " bytes in list (%u, %u), belongs in (%u, %u)",
                        blk->size, fl, sl, f2, s2);
                if (blk->left != prev)
                    gm_check_fail(ck, "list (%u, %u): wrong back link", fl, sl);
                prev = b;
                listed++;
            }
        }
        if ((t->sl_map[fl] != 0) != (int)(t->fl_map >> fl & 1))
            gm_check_fail(ck, "first-level bit %u out of date", fl);
    }
    gm__carve_tallied(ck, &t->heap, &t->live, &tally, listed, t->allocated);
    if (reserved != p->dev->reserved)
        gm_check_fail(ck, "arenas hold %" PRIu64 " bytes but the device's reserved is %" PRIu64,
                      reserved, p->dev->reserved);
    return ck->bad;
}

static void tlsf_empty_cache(gm_policy_t *p)
{
    tlsf_t *t = TLSF(p);
    if (t != NULL)
        tlsf_release_empty(t);
}

/* The device is left as it is: its arenas die with it. */
static void tlsf_destroy(gm_policy_t *p)
{
    tlsf_t *t = TLSF(p);
    if (t == NULL)
        return;
    gm__idmap_release(&t->live);
    free(t->heads);
    gm__bt_heap_release(&t->heap);
    free(t->arenas);
    free(t);
}

static const gm_param_spec_t tlsf_params[] = {
    {"arena", GM_PARAM_SIZE, "64MiB",
     "bytes taken from the device at a time; a larger request gets an arena of its own size",
     NULL},
    {"sl_count", GM_PARAM_INT, "32",
     "second-level lists per power of two (SL_INDEX_COUNT; a power of two, 1 to 64)", NULL},
    {"align", GM_PARAM_SIZE, "512",
     "block alignment and size unit (a power of two); requests round up to it", NULL},
};

const gm_policy_ops_t gm__policy_tlsf = {
    .name = "tlsf",
    .help = "Two-Level Segregated Fit: O(1) good fit over power-of-two and linear size classes, "
            "immediate coalescing, over device arenas",
    GM_POLICY_OPS(tlsf),
    .empty_cache = tlsf_empty_cache,
};
