/*
 * gmsim/capture.h — reading what the capture library (libgmsim_capture.so,
 * `gmsim capture`) recorded: spool files, one per process, in a spool
 * directory.  docs/capture.md describes the capture; the file format is in
 * formats/spool_format.h.
 *
 * A spool becomes one trace per device the process allocated on, named
 * "<host>.<pid>[.rank<R>].dev<D>" (the base name comes from the spool's
 * header; RANK, LOCAL_RANK and WORLD_SIZE are kept as attributes).  Frees
 * are paired with allocations by address; allocation ids are ordinals per
 * trace.  Damage is tolerated where a killed process leaves it — a block
 * cut short at the end, a torn block between whole ones — and counted in
 * the "recovery" attribute; every whole (checksummed) block is used.  A
 * checksummed block whose content is malformed is an error (GM_EFORMAT,
 * with the file and byte offset).
 */
#ifndef GMSIM_CAPTURE_H
#define GMSIM_CAPTURE_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdio.h>

#include "gmsim/error.h"
#include "gmsim/import.h"
#include "gmsim/store.h"

GM_API_BEGIN

/* gm_import_fn for one spool file: one trace per device (suffix "dev<D>";
 * a spool without allocations gives one trace "dev0" of its marks). */
int gm_spool_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err);

/* The same from memory (the fuzz target's entry). */
int gm_spool_import_buffer(const void *data, size_t len, const char *filename,
                           gm_import_target_t *t, gm_error_t *err);

/* 1 if head (len bytes) starts like a spool file. */
int gm_spool_sniff(const void *head, size_t len);

/* What gm_spool_import_dir did. */
typedef struct gm_spool_dir_result {
    size_t files;   /* spool files read */
    size_t skipped; /* of which without a single allocation (no trace) */
    char **names;   /* the traces written, in order (malloc'd) */
    size_t n;
} gm_spool_dir_result_t;

void gm_spool_dir_result_release(gm_spool_dir_result_t *r);

/*
 * Import every "*.spool" file of directory `dir` into s (opened with
 * GM_STORE_WRITE), each under the base name its header gives; flags as for
 * gm_writer_begin.  All or nothing: on any failure no trace of it is left.
 * GM_EIO (cannot read the directory or a file), GM_ENOTFOUND (no spool
 * file in it), the errors of gm_spool_import and of the store.  On
 * success the caller releases *out.
 */
int gm_spool_import_dir(gm_store_t *s, const char *dir, unsigned flags,
                        gm_spool_dir_result_t *out, gm_error_t *err);

GM_API_END

#endif
