/*
 * gmsim/import.h — importers of outside trace formats.
 *
 * An importer reads one input (already decompressed: `gmsim import` reads
 * .gz through zlib before the importer sees it) and writes one or more
 * traces through an import target: one per device, and per process where
 * the source has several.  The whole import is one unit: if the importer
 * fails, or the target is aborted, no trace of it is left in the store.
 *
 * Traces are named after the target's base name: the first trace begun
 * with a NULL suffix is "<base>", others "<base>.<suffix>" ("run.dev1",
 * "run.pid42.dev0").  An importer that may write several traces passes a
 * suffix for every trace when there are several ("dev0", "dev1") and NULL
 * when there is just one.
 */
#ifndef GMSIM_IMPORT_H
#define GMSIM_IMPORT_H

#include "gmsim/api.h"

#include <stdint.h>
#include <stdio.h>

#include "gmsim/error.h"
#include "gmsim/store.h"

GM_API_BEGIN

typedef struct gm_import_target gm_import_target_t;

/* A target writing into s (opened with GM_STORE_WRITE); flags as for
 * gm_writer_begin (GM_WRITE_REPLACE).  GM_ENOMEM. */
int gm_import_target_create(gm_store_t *s, const char *base, unsigned flags,
                            gm_import_target_t **out, gm_error_t *err);

/* Begin the next trace; *w stays valid until gm_import_end.  One trace at a
 * time.  The errors of gm_writer_begin (GM_EEXIST for a taken name). */
int gm_import_begin(gm_import_target_t *t, const char *suffix, gm_writer_t **w, gm_error_t *err);

/* Finish the trace begun last (gm_writer_finish). */
int gm_import_end(gm_import_target_t *t, gm_error_t *err);

/* Number of traces finished so far and the name of the i-th. */
size_t gm_import_count(const gm_import_target_t *t);
const char *gm_import_name(const gm_import_target_t *t, size_t i);

/* Keep everything imported (after the importer returned 0) and free t. */
int gm_import_commit(gm_import_target_t *t, gm_error_t *err);

/* Drop everything this target wrote (an open trace is aborted, finished
 * ones deleted) and free t.  NULL is a no-op. */
void gm_import_abort(gm_import_target_t *t);

/* Options some importers read; all zero means every importer's defaults.
 * Set them after gm_import_target_create, before the importer runs. */
typedef struct gm_import_options {
    /* nsys: bit k keeps the events of memKind k (ENUM_CUDA_MEM_KIND: 0
     * pageable, 1 pinned, 2 device, 3 array, 4 managed, 5 device static,
     * 6 managed static, 7 unknown); 0 keeps device memory only (bit 2). */
    uint32_t mem_kinds;
    /* Recorded as the "file" attribute of every trace begun (NULL: none);
     * the text is copied when the options are set. */
    const char *file;
    /* Attributes set on every trace finished, after the importer's own (so
     * they win): "KEY=VALUE" texts, VALUE stored as JSON when it is one
     * JSON value (seq_len=128 a number), else as a string (model=gpt2).
     * Copied when the options are set; a text without '=' or with an empty
     * key makes gm_import_end fail with GM_EINVAL. */
    const char *const *attrs;
    size_t nattrs;
} gm_import_options_t;

void gm_import_set_options(gm_import_target_t *t, const gm_import_options_t *opts);
const gm_import_options_t *gm_import_get_options(const gm_import_target_t *t);

/* The signature every importer has: read `in` (named `filename` in
 * messages) and write through t.  0, or a negative code with a message
 * naming the file and the place (byte offset, line, row, event index). */
typedef int (*gm_import_fn)(FILE *in, const char *filename, gm_import_target_t *t,
                            gm_error_t *err);

GM_API_END

#endif
