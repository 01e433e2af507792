/*
 * tests/support/torch_fixture.h — checks of an imported PyTorch snapshot,
 * shared by tests/test_torch.c (the synthetic snapshots) and
 * test_torch_real.c (the shared real ones).  Each helper asserts with
 * Criterion: a failed check fails the test that called it.
 */
#ifndef GM_TESTS_SUPPORT_TORCH_FIXTURE_H
#define GM_TESTS_SUPPORT_TORCH_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/gmsim.h"

/* Import data (or the file at path when data is NULL) as `base` into s:
 * 0 once committed, else the importer's code with err filled (the import
 * aborted). */
int tt_import_into(gm_store_t *s, const char *base, const char *path, const void *data,
                   size_t len, gm_error_t *err);

/* Attribute key of the JSON object o as a number. */
uint64_t tt_attr_u64(const gm_jv_t *o, const char *key);

/* A trace's attributes parsed (the caller frees with gm_jv_free). */
gm_jv_t *tt_trace_attrs(const gm_trace_info_t *t);

/* The peak of live requested bytes of a `native` replay of trace name. */
uint64_t tt_native_load(gm_store_t *s, const char *name);

typedef struct tt_layout {
    uint64_t reserved, preexisting, segments;
} tt_layout_t;

/* Check trace `name`'s layout against its first events (the pre-existing
 * ALLOCs, in layout order) and count what it holds. */
tt_layout_t tt_check_layout(gm_store_t *s, const char *name);

/* The MARKs of tag `tag` in trace name. */
uint64_t tt_count_marks(gm_store_t *s, const char *name, const char *tag);

/* The forward check: replay trace `name` from its layout by the caching
 * allocator's rules (blocks split and merged, segments allocated and
 * released; pad: the block padding of a snapshot that has it, else 0);
 * the final blocks' count and hash (as tests/torch_check.py computes
 * them).  An event the rules cannot apply fails the test. */
void tt_forward_check(gm_store_t *s, const char *name, uint64_t pad, uint64_t *nblocks,
                      uint64_t *hash);

#endif
