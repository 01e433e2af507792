/*
 * store/store.h — library-internal store functions for the other floors
 * (and for the parts of the store kept in their own files).  None of them
 * hands out SQLite: the connection and the SQL path are store/sql.h, for
 * store/ only.
 */
#ifndef GM_STORE_STORE_H
#define GM_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/store.h"

/* Whether the store was opened with GM_STORE_WRITE. */
int gm__store_writable(const gm_store_t *s);

/* Whether a writer is open on the store (writes elsewhere must wait). */
int gm__store_writer_active(const gm_store_t *s);

/* 0 when s may be written now, else the error of a write that may not:
 * GM_EINVAL "cannot WHAT: 'PATH' is open read-only", or GM_ESTATE "cannot
 * WHAT: a writer is active on 'PATH'", WHAT formatted from fmt. */
int gm__store_can_write(const gm_store_t *s, gm_error_t *err, const char *fmt, ...) GM_PRINTF(3, 4);

/* gm_writer_begin for an import target (store/import.c), inside its
 * transaction: trace_id > 0 is the new trace's row id (above every id in
 * use; 0: the writer finds it), and name_free says that no trace of the
 * store has that name (the writer does not look it up). */
int gm__writer_begin_in(gm_store_t *s, const char *name, unsigned flags, int64_t trace_id,
                        int name_free, gm_writer_t **out, gm_error_t *err);

/* The store, row id and name of the trace w is writing (rows of other
 * tables written meanwhile join its transaction); -1 if w has failed. */
int gm__writer_target(gm_writer_t *w, gm_store_t **s, int64_t *trace_id, const char **name);

/* Open one write transaction around several imports into s (each import
 * target then nests in it, store/import.c): *began is 1 when this call
 * opened it, 0 when s is read-only or a transaction is open already (then
 * there is nothing to end).  "'PATH': cannot begin the import: MESSAGE". */
int gm__store_import_begin(gm_store_t *s, int *began, gm_error_t *err);

/* End what gm__store_import_begin opened: commit (rolled back if that
 * fails: "'PATH': cannot commit the import: MESSAGE"), or roll back, which
 * leaves err as it is and returns 0. */
int gm__store_import_end(gm_store_t *s, int commit, gm_error_t *err);

/* Whether text is one valid JSON value (what a run's params, device and
 * metrics must be). */
int gm__store_json_valid(const char *text);

/* gm_reader_next, decoding into dst (room for GM_CHUNK_EVENTS events)
 * rather than the reader's own buffer: a reader that decodes ahead on
 * another thread (replay/engine.c) saves a copy of every chunk. */
int gm__reader_next_into(gm_reader_t *r, gm_event_t *dst, size_t *n, gm_error_t *err);

#endif
