/*
 * store/sql.h — the one SQL path of the library (store/sql.c): what an
 * SQLite result code means as a GM_E* code and a message naming the file,
 * statements, and transactions.
 *
 * The store's own connection is reached only from store/ (gm__store_db,
 * below); the other floors go through gmsim/store.h and store/store.h.  A
 * format decoder that reads an outside SQLite file (formats/nsys.c) has its
 * own connection and maps its errors with gm__sql_input_fail.
 */
#ifndef GM_STORE_SQL_H
#define GM_STORE_SQL_H

#include <sqlite3.h>

#include "gmsim/error.h"
#include "gmsim/store.h"

/*
 * The map, one table (docs/store.md):
 *
 *   SQLite (primary code)                      a store       an input file
 *   NOMEM                                      GM_ENOMEM     GM_ENOMEM
 *   IOERR, FULL, CANTOPEN, READONLY, PERM      GM_EIO        GM_EIO
 *   CORRUPT, NOTADB                            GM_ECORRUPT   GM_EFORMAT
 *   anything else (ERROR, BUSY, CONSTRAINT...) GM_EDB        GM_EFORMAT
 *
 * OK, ROW and DONE are 0.
 */
int gm__sql_code(int rc);
int gm__sql_input_code(int rc);

/* Set err to gm__sql_code(rc) and "'FILE': WHAT: MESSAGE" (db's last error
 * message, or SQLite's text for rc when db is NULL); returns the code. */
int gm__sql_fail(sqlite3 *db, const char *file, int rc, const char *what, gm_error_t *err);

/* The same for an outside database read as input: gm__sql_input_code of
 * db's last error. */
int gm__sql_input_fail(sqlite3 *db, const char *file, const char *what, gm_error_t *err);

/* A store that cannot be opened (rc from the open or its first read):
 * NOTADB is GM_EFORMAT "cannot open 'FILE': file is not a database";
 * otherwise "cannot open 'FILE': MESSAGE" with gm__sql_code, GM_EIO where
 * that is GM_EDB. */
int gm__sql_open_fail(sqlite3 *db, const char *file, int rc, gm_error_t *err);

/* sqlite3_prepare_v2; *st NULL and "cannot prepare a statement" on failure. */
int gm__sql_prepare(sqlite3 *db, const char *file, const char *sql, sqlite3_stmt **st,
                    gm_error_t *err);

/* Step st to its end, each row read by row(ctx, st, e, err) into e, a new
 * zeroed element of elem bytes at the end of the array *(T **)list (count
 * *n; NULL and 0 at the start; the capacity doubling from first).  An
 * element counts once made, so the caller's release of its *n elements
 * frees what a failing row kept.  0; row's first nonzero return;
 * GM_ENOMEM; or a failed step, "'FILE': WHAT: MESSAGE".  st is finalized. */
typedef int (*gm__sql_row_fn)(void *ctx, sqlite3_stmt *st, void *e, gm_error_t *err);
int gm__sql_rows(sqlite3 *db, const char *file, sqlite3_stmt *st, void *list, size_t *n,
                 size_t elem, size_t first, gm__sql_row_fn row, void *ctx, const char *what,
                 gm_error_t *err);

/* Run SQL without results (one statement or several); failure names SQL. */
int gm__sql_exec(sqlite3 *db, const char *file, const char *sql, gm_error_t *err);

/*
 * Transactions.  gm__sql_begin opens a write transaction (BEGIN IMMEDIATE)
 * or, when savepoint is not NULL and db is inside one already, the
 * savepoint of that name (*nested = 1).  gm__sql_commit ends it (COMMIT or
 * RELEASE) and rolls it back if that fails; gm__sql_rollback rolls back
 * what is open (nothing if the transaction ended already).  what names it
 * in messages ("'FILE': cannot begin WHAT: MESSAGE"); NULL names the
 * statement ("'FILE': BEGIN IMMEDIATE: MESSAGE").
 */
int gm__sql_begin(sqlite3 *db, const char *file, const char *savepoint, const char *what,
                  int *nested, gm_error_t *err);
int gm__sql_commit(sqlite3 *db, const char *file, const char *savepoint, int nested,
                   const char *what, gm_error_t *err);
void gm__sql_rollback(sqlite3 *db, const char *savepoint, int nested);

/* The store's connection (owned by the store; store/ only). */
sqlite3 *gm__store_db(gm_store_t *s);

#endif
