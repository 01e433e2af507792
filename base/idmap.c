/*
 * base/idmap.c — open-addressing hash map for live sets (see idmap.h).
 *
 * Invariant: every present key sits in the probe run that starts at its home
 * cell, with no empty cell between home and its position; backward-shift
 * deletion keeps it so.  Load factor stays at most 1/2.
 */
#include "base/idmap.h"

#include <stdlib.h>

#include "gmsim/error.h"

void gm__idmap_init(gm__idmap_t *m)
{
    m->cells = NULL;
    m->mask = 0;
    m->count = 0;
}

void gm__idmap_release(gm__idmap_t *m)
{
    free(m->cells);
    gm__idmap_init(m);
}

void gm__idmap_clear(gm__idmap_t *m)
{
    for (size_t i = 0; m->cells != NULL && i <= m->mask; i++)
        m->cells[i].key = GM__IDMAP_EMPTY;
    m->count = 0;
}

static int idmap_grow(gm__idmap_t *m)
{
    size_t cap = m->cells ? (m->mask + 1) * 2 : 16;
    gm__idmap_cell_t *cells = malloc(cap * sizeof *cells);
    if (cells == NULL)
        return GM_ENOMEM;
    for (size_t i = 0; i < cap; i++)
        cells[i].key = GM__IDMAP_EMPTY;
    size_t mask = cap - 1;
    for (size_t i = 0; m->cells && i <= m->mask; i++) {
        if (m->cells[i].key == GM__IDMAP_EMPTY)
            continue;
        size_t j = gm__idmap_home(m->cells[i].key, mask);
        while (cells[j].key != GM__IDMAP_EMPTY)
            j = (j + 1) & mask;
        cells[j] = m->cells[i];
    }
    free(m->cells);
    m->cells = cells;
    m->mask = mask;
    return 0;
}

/* Find key's cell, or the empty cell ending its probe run (growing first so
 * that an insert there keeps the load at most 1/2).  Negative on error. */
static int64_t idmap_probe(gm__idmap_t *m, uint64_t key)
{
    if (key == GM__IDMAP_EMPTY)
        return GM_EINVAL;
    if (m->cells == NULL || 2 * (m->count + 1) > m->mask + 1) {
        int rc = idmap_grow(m);
        if (rc)
            return rc;
    }
    size_t i = gm__idmap_home(key, m->mask);
    while (m->cells[i].key != GM__IDMAP_EMPTY && m->cells[i].key != key)
        i = (i + 1) & m->mask;
    return (int64_t)i;
}

int gm__idmap_put(gm__idmap_t *m, uint64_t key, uint64_t val)
{
    int64_t i = idmap_probe(m, key);
    if (i < 0)
        return (int)i;
    if (m->cells[i].key == GM__IDMAP_EMPTY) {
        m->cells[i].key = key;
        m->count++;
    }
    m->cells[i].val = val;
    return 0;
}

int gm__idmap_insert(gm__idmap_t *m, uint64_t key, uint64_t val)
{
    int64_t i = idmap_probe(m, key);
    if (i < 0)
        return (int)i;
    if (m->cells[i].key == key)
        return 1;
    m->cells[i].key = key;
    m->cells[i].val = val;
    m->count++;
    return 0;
}

int gm__idmap_remove(gm__idmap_t *m, uint64_t key, uint64_t *val)
{
    if (m->cells == NULL || key == GM__IDMAP_EMPTY)
        return 0;
    size_t i = gm__idmap_home(key, m->mask);
    while (m->cells[i].key != key) {
        if (m->cells[i].key == GM__IDMAP_EMPTY)
            return 0;
        i = (i + 1) & m->mask;
    }
    if (val)
        *val = m->cells[i].val;
    /* Backward shift: pull later members of the run into the hole when the
     * hole lies on the path from their home cell to where they sit. */
    size_t hole = i;
    for (size_t j = (i + 1) & m->mask; m->cells[j].key != GM__IDMAP_EMPTY; j = (j + 1) & m->mask) {
        size_t home = gm__idmap_home(m->cells[j].key, m->mask);
        if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
            m->cells[hole] = m->cells[j];
            hole = j;
        }
    }
    m->cells[hole].key = GM__IDMAP_EMPTY;
    m->count--;
    return 1;
}

int gm__idmap_next(const gm__idmap_t *m, size_t *pos, uint64_t *key, uint64_t *val)
{
    for (size_t i = *pos; m->cells != NULL && i <= m->mask; i++) {
        if (m->cells[i].key != GM__IDMAP_EMPTY) {
            *key = m->cells[i].key;
            *val = m->cells[i].val;
            *pos = i + 1;
            return 1;
        }
    }
    *pos = m->mask + 1;
    return 0;
}
