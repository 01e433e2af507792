/*
 * traces/idmap.c — open-addressing hash map for live sets (see idmap.h).
 *
 * Invariant: every present key sits in the probe run that starts at its home
 * cell, with no empty cell between home and its position; backward-shift
 * deletion keeps it so.  Load factor stays at most 1/2.
 */
#include "traces/idmap.h"

#include <stdlib.h>

#include "gmsim/error.h"

static inline size_t idmap_home(uint64_t key, size_t mask)
{
    /* Fibonacci hashing: ordinals and addresses are both well spread by it. */
    return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
}

void gm__idmap_init(gm__idmap_t *m)
{
    m->keys = NULL;
    m->vals = NULL;
    m->mask = 0;
    m->count = 0;
}

void gm__idmap_release(gm__idmap_t *m)
{
    free(m->keys);
    free(m->vals);
    gm__idmap_init(m);
}

static int idmap_grow(gm__idmap_t *m)
{
    size_t cap = m->keys ? (m->mask + 1) * 2 : 64;
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint64_t *vals = malloc(cap * sizeof *vals);
    if (keys == NULL || vals == NULL) {
        free(keys);
        free(vals);
        return GM_ENOMEM;
    }
    for (size_t i = 0; i < cap; i++)
        keys[i] = GM__IDMAP_EMPTY;
    size_t mask = cap - 1;
    if (m->keys) {
        for (size_t i = 0; i <= m->mask; i++) {
            if (m->keys[i] == GM__IDMAP_EMPTY)
                continue;
            size_t j = idmap_home(m->keys[i], mask);
            while (keys[j] != GM__IDMAP_EMPTY)
                j = (j + 1) & mask;
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->mask = mask;
    return 0;
}

/* Find key's cell, or the empty cell ending its probe run (growing first so
 * that an insert there keeps the load at most 1/2).  Negative on error. */
static int64_t idmap_probe(gm__idmap_t *m, uint64_t key)
{
    if (key == GM__IDMAP_EMPTY)
        return GM_EINVAL;
    if (m->keys == NULL || 2 * (m->count + 1) > m->mask + 1) {
        int rc = idmap_grow(m);
        if (rc)
            return rc;
    }
    size_t i = idmap_home(key, m->mask);
    while (m->keys[i] != GM__IDMAP_EMPTY && m->keys[i] != key)
        i = (i + 1) & m->mask;
    return (int64_t)i;
}

int gm__idmap_put(gm__idmap_t *m, uint64_t key, uint64_t val)
{
    int64_t i = idmap_probe(m, key);
    if (i < 0)
        return (int)i;
    if (m->keys[i] == GM__IDMAP_EMPTY) {
        m->keys[i] = key;
        m->count++;
    }
    m->vals[i] = val;
    return 0;
}

int gm__idmap_insert(gm__idmap_t *m, uint64_t key, uint64_t val)
{
    int64_t i = idmap_probe(m, key);
    if (i < 0)
        return (int)i;
    if (m->keys[i] == key)
        return 1;
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return 0;
}

int gm__idmap_get(const gm__idmap_t *m, uint64_t key, uint64_t *val)
{
    if (m->keys == NULL)
        return 0;
    for (size_t i = idmap_home(key, m->mask);; i = (i + 1) & m->mask) {
        uint64_t k = m->keys[i];
        if (k == key && key != GM__IDMAP_EMPTY) {
            *val = m->vals[i];
            return 1;
        }
        if (k == GM__IDMAP_EMPTY)
            return 0;
    }
}

int gm__idmap_remove(gm__idmap_t *m, uint64_t key, uint64_t *val)
{
    if (m->keys == NULL || key == GM__IDMAP_EMPTY)
        return 0;
    size_t i = idmap_home(key, m->mask);
    while (m->keys[i] != key) {
        if (m->keys[i] == GM__IDMAP_EMPTY)
            return 0;
        i = (i + 1) & m->mask;
    }
    if (val)
        *val = m->vals[i];
    /* Backward shift: pull later members of the run into the hole when the
     * hole lies on the path from their home cell to where they sit. */
    size_t hole = i;
    for (size_t j = (i + 1) & m->mask; m->keys[j] != GM__IDMAP_EMPTY; j = (j + 1) & m->mask) {
        size_t home = idmap_home(m->keys[j], m->mask);
        if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->keys[hole] = GM__IDMAP_EMPTY;
    m->count--;
    return 1;
}
