/*
 * traces/idmap.h — an open-addressing hash map from 64-bit keys to 64-bit
 * values, for live-allocation sets (the store writer's id renumbering, the
 * importers' address maps, the replay engine's id → slot map).  Its size
 * follows the number of live entries, not the number ever inserted.
 *
 * Linear probing with backward-shift deletion (no tombstones), so lookups
 * stay short however many inserts and removes a long trace makes.  The key
 * UINT64_MAX is reserved (it marks empty cells) and may not be inserted.
 */
#ifndef GM_TRACES_IDMAP_H
#define GM_TRACES_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct gm__idmap {
    uint64_t *keys;
    uint64_t *vals;
    size_t mask;  /* capacity − 1; capacity is a power of two */
    size_t count;
} gm__idmap_t;

#define GM__IDMAP_EMPTY UINT64_MAX

/* Initialize empty (no allocation until the first put). */
void gm__idmap_init(gm__idmap_t *m);
void gm__idmap_release(gm__idmap_t *m);

/* Insert or overwrite.  0, or GM_ENOMEM (the map is unchanged then). */
int gm__idmap_put(gm__idmap_t *m, uint64_t key, uint64_t val);

/* Insert key only if absent: 0 when inserted, 1 when the key was already
 * present (nothing changes), GM_ENOMEM.  One probe run instead of get+put. */
int gm__idmap_insert(gm__idmap_t *m, uint64_t key, uint64_t val);

/* 1 and *val filled if present, else 0. */
int gm__idmap_get(const gm__idmap_t *m, uint64_t key, uint64_t *val);

/* Remove key; 1 and *val (may be NULL) filled if it was present, else 0. */
int gm__idmap_remove(gm__idmap_t *m, uint64_t key, uint64_t *val);

static inline size_t gm__idmap_count(const gm__idmap_t *m) { return m->count; }

#endif
