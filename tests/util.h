/*
 * tests/util.h — helpers shared by the tests, fuzz targets and benchmark.
 */
#ifndef GM_TESTS_UTIL_H
#define GM_TESTS_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "gmsim/gmsim.h"

/* Path of a file in ../shared/data (static buffer), or NULL with a reason in
 * *why when the data folder or the file is absent. */
const char *gt_data_path(const char *rel, const char **why);

/* A fresh empty temporary directory (created once per process, removed
 * with its files when that process exits unless GM_KEEP_TMP is set) and a
 * path inside it (static buffer, rotates over 8 slots). */
const char *gt_tmpdir(void);
const char *gt_tmpfile(const char *name);

/* Import text (NUL-terminated) with `import` as a file named `filename`
 * into trace "t" of a fresh in-memory store, *s (the caller closes it, also
 * when the import fails; NULL when the store could not be opened).
 * Returns 0 once committed, else the import's code (the target aborted) or
 * the code of the store's setup, with err filled. */
int gt_import_text(gm_import_fn import, const char *text, const char *filename, gm_store_t **s,
                   gm_error_t *err);

/* A sweep's configuration on the default device: the traces of the
 * ninputs stores inputs[] (which must outlive cfg) through sets[0..nsets)
 * into the results store `results`, with `jobs` workers; the rest zero. */
void gt_sweep_config(gm_sweep_config_t *cfg, const char *const *inputs, size_t ninputs,
                     const gm_params_t *sets, size_t nsets, const char *results, unsigned jobs);

/* gt_sweep_config of the one store `in`, then gm_sweep_run: its code, with
 * *sum and err filled. */
int gt_sweep_one(const char *in, const gm_params_t *sets, size_t nsets, const char *results,
                 unsigned jobs, gm_sweep_summary_t *sum, gm_error_t *err);

/* Deterministic 64-bit PRNG (splitmix64). */
uint64_t gt_rand(uint64_t *state);

/* Read a whole file into a malloc'd buffer (NUL-terminated); NULL on error. */
char *gt_read_file(const char *path, size_t *len);

/*
 * A minimalloc instance (CSV id,lower,upper,size) as a trace event list: an
 * ALLOC at lower, a FREE at upper, frees before allocs at equal times, ids
 * renumbered to ordinals.  Returns a malloc'd array (caller frees) and its
 * length in *n, or NULL on error.
 */
gm_event_t *gt_minimalloc_events(const char *path, size_t *n, uint64_t *capacity);

/*
 * A perfect packing written to f as a minimalloc CSV (id,lower,upper,size):
 * the rectangle capacity x [0, span) tiled by `pieces` (about) buffers, so
 * that every instant holds exactly capacity bytes and only an exact packing
 * fits in capacity.  Sizes, times and cuts are multiples of unit (capacity
 * and span must be).  style 0: recursive guillotine cuts (each across the
 * whole piece, in time or in space); style 1: bottom-left fill (the lowest
 * step of the skyline gets a buffer over a random part of its interval, of
 * a random height: not guillotine).  Seeded: the same instance every run.
 * Returns the buffers written.
 */
size_t gt_perfect_packing(FILE *f, uint64_t seed, int style, uint64_t capacity, uint64_t span,
                          uint64_t unit, size_t pieces);

/* 1 if s is exactly one JSON string literal (RFC 8259: quotes, well-formed
 * escapes, no raw control characters, well-formed UTF-8), else 0.  Written
 * apart from the library's escaper, to check it. */
int gt_json_string_valid(const char *s);

#endif
