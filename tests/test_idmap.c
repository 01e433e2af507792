/*
 * tests/test_idmap.c — the live-set hash map against a plain reference.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "base/idmap.h"
#include "util.h"

Test(idmap, empty_map_finds_nothing)
{
    gm__idmap_t m;
    gm__idmap_init(&m);
    uint64_t v;
    cr_assert_eq(gm__idmap_get(&m, 7, &v), 0);
    cr_assert_eq(gm__idmap_remove(&m, 7, &v), 0);
    cr_assert_eq(gm__idmap_count(&m), 0);
    gm__idmap_release(&m);
}

Test(idmap, reserved_key_is_refused)
{
    gm__idmap_t m;
    gm__idmap_init(&m);
    cr_assert_eq(gm__idmap_put(&m, GM__IDMAP_EMPTY, 1), GM_EINVAL);
    uint64_t v;
    cr_assert_eq(gm__idmap_get(&m, GM__IDMAP_EMPTY, &v), 0);
    gm__idmap_release(&m);
}

/* Random puts/overwrites/removes over a small key space (so runs collide),
 * checked against an array after every operation, and fully at the end. */
Test(idmap, random_operations_match_reference)
{
    enum { KEYS = 5000, OPS = 400000 };
    uint64_t *ref = malloc(KEYS * sizeof *ref);
    for (int i = 0; i < KEYS; i++)
        ref[i] = UINT64_MAX;
    gm__idmap_t m;
    gm__idmap_init(&m);
    uint64_t rng = 1, v;
    size_t live = 0;
    for (int op = 0; op < OPS; op++) {
        uint64_t r = gt_rand(&rng);
        uint64_t k = r % KEYS;
        uint64_t key = k * 4096 + (k & 3); /* address-like keys */
        if ((r >> 32) % 3 != 0) {
            cr_assert_eq(gm__idmap_put(&m, key, r), 0);
            live += ref[k] == UINT64_MAX;
            ref[k] = r;
        } else {
            int had = gm__idmap_remove(&m, key, &v);
            cr_assert_eq(had, ref[k] != UINT64_MAX);
            if (had) {
                cr_assert_eq(v, ref[k]);
                ref[k] = UINT64_MAX;
                live--;
            }
        }
        cr_assert_eq(gm__idmap_count(&m), live);
        uint64_t probe = gt_rand(&rng) % KEYS;
        int has = gm__idmap_get(&m, probe * 4096 + (probe & 3), &v);
        cr_assert_eq(has, ref[probe] != UINT64_MAX, "op %d key %llu", op,
                     (unsigned long long)probe);
        if (has)
            cr_assert_eq(v, ref[probe]);
    }
    for (int k = 0; k < KEYS; k++) {
        int has = gm__idmap_get(&m, (uint64_t)k * 4096 + (k & 3), &v);
        cr_assert_eq(has, ref[k] != UINT64_MAX);
    }
    gm__idmap_release(&m);
    free(ref);
}

/* Capacity follows the live count: a long insert/remove churn with few live
 * keys never grows the table past a small size. */
Test(idmap, size_follows_live_set)
{
    gm__idmap_t m;
    gm__idmap_init(&m);
    for (uint64_t id = 0; id < 1000000; id++) {
        cr_assert_eq(gm__idmap_put(&m, id, id), 0);
        if (id >= 10)
            cr_assert_eq(gm__idmap_remove(&m, id - 10, NULL), 1);
    }
    cr_assert_eq(gm__idmap_count(&m), 10);
    cr_assert_leq(m.mask + 1, 64);
    gm__idmap_release(&m);
}

Test(idmap, iteration_visits_every_entry_once)
{
    gm__idmap_t m;
    gm__idmap_init(&m);
    size_t pos = 0;
    uint64_t k, v;
    cr_assert_eq(gm__idmap_next(&m, &pos, &k, &v), 0);
    for (uint64_t key = 0; key < 1000; key++)
        cr_assert_eq(gm__idmap_put(&m, key * 3, key), 0);
    for (uint64_t key = 0; key < 1000; key += 2)
        cr_assert_eq(gm__idmap_remove(&m, key * 3, NULL), 1);
    unsigned char seen[1000] = {0};
    size_t n = 0;
    for (pos = 0; gm__idmap_next(&m, &pos, &k, &v);) {
        cr_assert_eq(k, v * 3);
        cr_assert_eq(v % 2, 1);
        cr_assert_eq(seen[v], 0);
        seen[v] = 1;
        n++;
    }
    cr_assert_eq(n, 500);
    gm__idmap_release(&m);
}
