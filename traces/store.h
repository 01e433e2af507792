/*
 * traces/store.h — library-internal access to a store's SQLite handle, for
 * the parts of the store kept in their own files (layouts, run queries).
 * Everything outside traces/ goes through gmsim/store.h.
 */
#ifndef GMSIM_TRACES_STORE_H
#define GMSIM_TRACES_STORE_H

#include <sqlite3.h>

#include "gmsim/store.h"

/* The store's connection (owned by the store). */
sqlite3 *gm__store_db(gm_store_t *s);

/* Whether the store was opened with GM_STORE_WRITE. */
int gm__store_writable(const gm_store_t *s);

/* Whether a writer is open on the store (writes elsewhere must wait). */
int gm__store_writer_active(const gm_store_t *s);

/* gm_writer_begin for an import target (traces/import.c), inside its
 * transaction: trace_id > 0 is the new trace's row id (above every id in
 * use; 0: the writer finds it), and name_free says that no trace of the
 * store has that name (the writer does not look it up). */
int gm__writer_begin_in(gm_store_t *s, const char *name, unsigned flags, int64_t trace_id,
                        int name_free, gm_writer_t **out, gm_error_t *err);

/* The store, row id and name of the trace w is writing (rows of other
 * tables written meanwhile join its transaction); -1 if w has failed. */
int gm__writer_target(gm_writer_t *w, gm_store_t **s, int64_t *trace_id, const char **name);

/* gm_reader_next, decoding into dst (room for GM_CHUNK_EVENTS events)
 * rather than the reader's own buffer: a reader that decodes ahead on
 * another thread (replay/engine.c) saves a copy of every chunk. */
int gm__reader_next_into(gm_reader_t *r, gm_event_t *dst, size_t *n, gm_error_t *err);

#endif
