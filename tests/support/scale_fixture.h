/*
 * tests/support/scale_fixture.h — captures for the `scale` tests
 * (tests/test_scale.c, test_scale_hints.c): the real lmmedium snapshots as
 * a pair of traces, a trace's peak requested bytes, and a trace cut as a
 * recording begun later would hold it.  Each helper asserts with
 * Criterion: a failed set-up fails the test that called it.
 */
#ifndef GM_TESTS_SUPPORT_SCALE_FIXTURE_H
#define GM_TESTS_SUPPORT_SCALE_FIXTURE_H

#include <stdint.h>

#include "gmsim/gmsim.h"

/* The lmmedium `job` ("train", "inference") snapshots at ctx128 and ctx256
 * of ../shared/data as traces "c128" and "c256" of a new store; NULL
 * (with *why) where the data is absent. */
gm_store_t *sc_real(const char *job, const char **why);

/* Trace name's peak requested bytes (its LOAD). */
uint64_t sc_load(gm_store_t *s, const char *name);

/* Pre-existing allocations a cut adds, their number depending on the size
 * (a loop over chunks of the sequence in a warm-up): per group, count and
 * size; freed when the recording's window begins. */
typedef struct sc_chunks {
    uint64_t count[2], size[2];
} sc_chunks_t;

/* How sc_cut copies: frames kept (interned again) or dropped (made before
 * the recording); MARKs kept (their tags interned again) or dropped; the
 * pre-existing allocations listed in allocation order or in reverse (a
 * snapshot lists them in address order); chunks added after them (NULL:
 * none). */
typedef struct sc_cut_how {
    int keep_frames, keep_marks, reversed;
    const sc_chunks_t *chunks;
} sc_cut_how_t;

/* Copy trace src of s into dst as a recording begun at event `cut` holds
 * it: the allocations alive then are pre-existing (on stream 0), the
 * events before are dropped, and every later ALLOC and FREE (and MARK,
 * with keep_marks) follows on stream 0, ids renumbered. */
void sc_cut(gm_store_t *s, const char *src, const char *dst, uint64_t cut,
            const sc_cut_how_t *how);

#endif
