/*
 * base/idmap.h — an open-addressing hash map from 64-bit keys to 64-bit
 * values, for live sets: the store writer's id renumbering, the importers'
 * address maps, the replay engine's id → slot map, the policies' address
 * and arena maps.  Its size follows the peak number of live entries (it
 * never shrinks), not the number ever inserted.
 *
 * Linear probing with backward-shift deletion (no tombstones), so lookups
 * stay short however many inserts and removes a long trace makes; key and
 * value share a cell, so a probe touches one cache line.  The key UINT64_MAX
 * is reserved (it marks empty cells) and may not be inserted.  Lookups are
 * inline: they sit on every replay hot path.
 */
#ifndef GM_BASE_IDMAP_H
#define GM_BASE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct gm__idmap_cell {
    uint64_t key;
    uint64_t val;
} gm__idmap_cell_t;

typedef struct gm__idmap {
    gm__idmap_cell_t *cells;
    size_t mask;  /* capacity − 1; capacity is a power of two */
    size_t count;
} gm__idmap_t;

#define GM__IDMAP_EMPTY UINT64_MAX

/* Initialize empty (no allocation until the first put). */
void gm__idmap_init(gm__idmap_t *m);
void gm__idmap_release(gm__idmap_t *m);

/* Remove every entry; the table keeps its size. */
void gm__idmap_clear(gm__idmap_t *m);

/* Insert or overwrite.  0, GM_EINVAL for the reserved key, or GM_ENOMEM
 * (the map is unchanged then). */
int gm__idmap_put(gm__idmap_t *m, uint64_t key, uint64_t val);

/* Insert key only if absent: 0 when inserted, 1 when the key was already
 * present (nothing changes), GM_EINVAL, GM_ENOMEM.  One probe run. */
int gm__idmap_insert(gm__idmap_t *m, uint64_t key, uint64_t val);

/* Remove key; 1 and *val (may be NULL) filled if it was present, else 0. */
int gm__idmap_remove(gm__idmap_t *m, uint64_t key, uint64_t *val);

/* Iterate: start with *pos = 0; each call returning 1 gives one entry, in
 * no particular order; 0 at the end.  No insert or remove meanwhile. */
int gm__idmap_next(const gm__idmap_t *m, size_t *pos, uint64_t *key, uint64_t *val);

static inline size_t gm__idmap_count(const gm__idmap_t *m) { return m->count; }

static inline size_t gm__idmap_home(uint64_t key, size_t mask)
{
    /* Fibonacci hashing spreads both ordinals and addresses. */
    return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
}

/* 1 and *val filled if present, else 0. */
static inline int gm__idmap_get(const gm__idmap_t *m, uint64_t key, uint64_t *val)
{
    if (m->cells == NULL || key == GM__IDMAP_EMPTY)
        return 0;
    for (size_t i = gm__idmap_home(key, m->mask);; i = (i + 1) & m->mask) {
        uint64_t k = m->cells[i].key;
        if (k == key) {
            *val = m->cells[i].val;
            return 1;
        }
        if (k == GM__IDMAP_EMPTY)
            return 0;
    }
}

#endif
