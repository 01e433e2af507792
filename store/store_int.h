/*
 * store/store_int.h — what the files of the trace store share, inside
 * store/: the connection's state (struct gm_store), its kept statements,
 * the thin SQLite helpers, and the functions one file gives another.
 *
 *   store/open.c     opening and closing a store file, the kept statements
 *   store/schema.c   the schema: created, checked, older versions upgraded
 *   store/traces.c   trace summaries: listed, found, deleted
 *   store/write.c    the streaming writer (gm_writer_*)
 *   store/read.c     the reader (gm_reader_*)
 *
 * The API is gmsim/store.h, the schema and chunk format docs/store.md.
 *
 * A store file is outside data (damaged, or edited by hand with SQL), so
 * what is read is checked to be what the writer could have written, and
 * anything else is refused with the file or trace and the place named: at
 * open, the tables and the columns read (GM_EFORMAT, schema.c); in every
 * summary row, counts that are integers >= 0 and attrs that are a JSON
 * object (traces.c); at reader open, counts that add up, interned tables
 * dense from their base, and as many chunk rows as the summary says; in
 * every chunk, events that refer only to rows of the interned tables
 * (GM_ECORRUPT, read.c).  What reading does not depend on (digest, LOAD,
 * bytes, creation time) is shown as it is.
 */
#ifndef GM_STORE_STORE_INT_H
#define GM_STORE_STORE_INT_H

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "base/jsonfmt.h"
#include "gmsim/store.h"
#include "store/sql.h"

/* The columns of a trace summary, in the order traces.c reads them. */
#define STORE_INFO_COLUMNS                                                              \
    "id, name, events, allocs, frees, marks, segs, load, live_at_end, chunks, bytes, " \
    "digest, attrs"

/*
 * The statements a writer runs once per trace, and the lookup of a trace by
 * name, are compiled once per store and kept (reset after each use, never
 * finalized before gm_store_close): an import of 100,000 one-event traces
 * (an nsys export of 100,000 processes) otherwise spends most of its time
 * compiling SQL.
 */
#define STORE_QUERIES(X)                                                                    \
    X(NAME_ID, "SELECT id FROM traces WHERE name = ?1")                                     \
    X(NEXT_ID, "SELECT max(coalesce((SELECT max(id) FROM traces), 0), "                     \
               "coalesce((SELECT max(trace_id) FROM chunks), 0), "                          \
               "coalesce((SELECT max(trace_id) FROM streams), 0), "                         \
               "coalesce((SELECT max(trace_id) FROM tags), 0), "                            \
               "coalesce((SELECT max(trace_id) FROM frames), 0), "                          \
               "coalesce((SELECT max(trace_id) FROM layouts), 0)) + 1")                     \
    X(INS_STREAM, "INSERT INTO streams (trace_id, idx, handle) VALUES (?1, ?2, ?3)")        \
    X(INS_TAG, "INSERT INTO tags (trace_id, idx, name) VALUES (?1, ?2, ?3)")                \
    X(INS_FRAME, "INSERT INTO frames (trace_id, idx, text) VALUES (?1, ?2, ?3)")            \
    X(INS_TRACE, "INSERT INTO traces (id, name, events, allocs, frees, marks, segs, "       \
                 "load, live_at_end, chunks, bytes, digest, attrs, created) VALUES "        \
                 "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)")           \
    X(FIND, "SELECT " STORE_INFO_COLUMNS " FROM traces WHERE name = ?1")

enum {
#define STORE_Q_ENUM(name, sql) STORE_Q_##name,
    STORE_QUERIES(STORE_Q_ENUM)
#undef STORE_Q_ENUM
    STORE_NQUERIES
};

struct gm_store {
    sqlite3 *db;
    char *path;
    unsigned flags;
    int writer_active;
    sqlite3_stmt *queries[STORE_NQUERIES]; /* compiled on first use */
    sqlite3_stmt *kept;                    /* gm__store_prepare_kept's statement */
    char *kept_sql;                        /* and its text */
    time_t created_at;                     /* gm__store_created's last second */
    char created[32];                      /* and its text */
    struct gm_writer *spare; /* a finished writer's small buffers, for the next one */
    int version; /* the file's schema version (older ones are read as they are) */
    int opened;  /* gm_store_open succeeded: the file is a store of ours */
};

/* ---- thin SQLite helpers (store/sql.c on the store's connection) -------- */

/* Set err from the connection's last error: "'PATH': WHAT: MESSAGE"
 * (store/sql.c's map); returns the code. */
static inline int store_fail(const gm_store_t *s, gm_error_t *err, int rc, const char *what)
{
    return gm__sql_fail(s->db, s->path, rc, what, err);
}

static inline int store_prepare(gm_store_t *s, const char *sql, sqlite3_stmt **st,
                                gm_error_t *err)
{
    return gm__sql_prepare(s->db, s->path, sql, st, err);
}

/* Reset a kept statement for its next use (its transaction ends with it). */
static inline void store_query_done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Run a statement without parameters or results (transaction control). */
static inline int store_exec(gm_store_t *s, const char *sql, gm_error_t *err)
{
    return gm__sql_exec(s->db, s->path, sql, err);
}

/* A write transaction: "'PATH': BEGIN IMMEDIATE: MESSAGE" on failure. */
static inline int store_begin(gm_store_t *s, gm_error_t *err)
{
    return gm__sql_begin(s->db, s->path, NULL, NULL, NULL, err);
}

static inline int store_commit(gm_store_t *s, gm_error_t *err)
{
    return gm__sql_commit(s->db, s->path, NULL, 0, NULL, err);
}

static inline void store_rollback(gm_store_t *s) { gm__sql_rollback(s->db, NULL, 0); }

/* ---- JSON text ------------------------------------------------------------ */

static inline const char *store_json_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* 1 if text is exactly one JSON value (whitespace around it allowed), as
 * the tree reader reads it, nested at most max_depth deep, well-formed
 * UTF-8 in its strings (gm__json_check). */
static inline int store_json_valid(const char *text, int max_depth)
{
    return gm__json_check(text, strlen(text), max_depth);
}

/* ---- between the store's files ------------------------------------------- */

/* store/open.c */

/* The kept statement `which` (STORE_Q_*), compiled on first use; the
 * caller gives it back with store_query_done.  0 or a negative code. */
int gm__store_query(gm_store_t *s, int which, sqlite3_stmt **st, gm_error_t *err);

/* Like store_prepare, but the statement stays compiled in s for the next
 * call with the same text (one at a time: the writer's chunk insert, run
 * once per trace).  Give it back with gm__store_release_kept. */
int gm__store_prepare_kept(gm_store_t *s, const char *sql, sqlite3_stmt **st, gm_error_t *err);

/* Give back a statement of gm__store_prepare_kept (finalized if it is not
 * the kept one any more). */
void gm__store_release_kept(gm_store_t *s, sqlite3_stmt *st);

/* The time now as a trace's `created` (UTC, 2025-01-31T12:00:00Z); NULL
 * if the clock cannot be read. */
const char *gm__store_created(gm_store_t *s);

/* One integer from a one-row query with an optional text parameter.
 * 1 and *v on a row, 0 when no row, or a negative code. */
int gm__store_query_int(gm_store_t *s, const char *sql, const char *param, int64_t *v,
                        gm_error_t *err);

/* gm__store_query_int of the trace id of `name` (the kept STORE_Q_NAME_ID). */
int gm__store_name_id(gm_store_t *s, const char *name, int64_t *v, gm_error_t *err);

/* store/schema.c: check the file holds our schema (creating it in an empty
 * file opened for writing, upgrading an older one opened for writing) and
 * set s->version; the errors of gm_store_open. */
int gm__store_check_schema(gm_store_t *s, gm_error_t *err);

/* store/traces.c: a copy of a text column (dflt when NULL); NULL when out
 * of memory.  The caller frees it. */
char *gm__store_strdup_col(sqlite3_stmt *st, int col, const char *dflt);

/* store/traces.c: delete every row of trace `id` (inside the caller's
 * transaction).  0 or a negative code. */
int gm__store_delete_id(gm_store_t *s, int64_t id, gm_error_t *err);

/* store/write.c: free a writer and everything it holds (a store's spare). */
void gm__store_writer_destroy(gm_writer_t *w);

#endif
