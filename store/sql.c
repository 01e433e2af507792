/*
 * store/sql.c — the one SQL path (store/sql.h): SQLite result codes as
 * GM_E* codes and messages, statements, transactions.
 */
#include "store/sql.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/vec.h"

int gm__sql_code(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
        return 0;
    case SQLITE_NOMEM:
        return GM_ENOMEM;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
        return GM_EIO;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return GM_ECORRUPT;
    default:
        return GM_EDB;
    }
}

int gm__sql_input_code(int rc)
{
    int code = gm__sql_code(rc);
    /* What is wrong with an input file is malformed input. */
    return code == GM_ECORRUPT || code == GM_EDB ? GM_EFORMAT : code;
}

/* 1 when a write error of db is the file-size limit (ulimit -f, SIGXFSZ
 * ignored: write(2) fails with EFBIG, which SQLite calls a "disk I/O
 * error" and whose errno it may lose while rolling back): the errno says
 * EFBIG, or the database, its WAL or its journal has reached within two of
 * the largest pages of a finite limit. */
static int sql_file_too_large(sqlite3 *db)
{
    if (sqlite3_system_errno(db) == EFBIG)
        return 1;
    struct rlimit rl;
    const char *path = sqlite3_db_filename(db, "main");
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || path == NULL ||
        path[0] == '\0')
        return 0;
    static const char *const suffixes[] = {"", "-wal", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char p[4096];
        struct stat st;
        if (snprintf(p, sizeof p, "%s%s", path, suffixes[i]) < (int)sizeof p &&
            stat(p, &st) == 0 && (uint64_t)st.st_size + 2 * 65536 >= (uint64_t)rl.rlim_cur)
            return 1;
    }
    return 0;
}

/* SQLite's message for rc, except that a write past the file-size limit is
 * named for what it is. */
static const char *sql_msg(sqlite3 *db, int rc)
{
    int prim = rc & 0xff;
    if (db && (prim == SQLITE_IOERR || prim == SQLITE_FULL) && sql_file_too_large(db))
        return "file too large";
    return db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
}

int gm__sql_fail(sqlite3 *db, const char *file, int rc, const char *what, gm_error_t *err)
{
    int code = gm__sql_code(rc);
    return gm_error_set(err, code ? code : GM_EDB, "'%s': %s: %s", file, what, sql_msg(db, rc));
}

int gm__sql_input_fail(sqlite3 *db, const char *file, const char *what, gm_error_t *err)
{
    int code = gm__sql_input_code(sqlite3_errcode(db));
    return gm_error_set(err, code ? code : GM_EFORMAT, "'%s': %s: %s", file, what,
                        sqlite3_errmsg(db));
}

int gm__sql_open_fail(sqlite3 *db, const char *file, int rc, gm_error_t *err)
{
    if ((rc & 0xff) == SQLITE_NOTADB)
        return gm_error_set(err, GM_EFORMAT, "cannot open '%s': file is not a database", file);
    int code = gm__sql_code(rc);
    return gm_error_set(err, code == GM_EDB || code == 0 ? GM_EIO : code, "cannot open '%s': %s",
                        file, sql_msg(db, rc));
}

int gm__sql_prepare(sqlite3 *db, const char *file, const char *sql, sqlite3_stmt **st,
                    gm_error_t *err)
{
    int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(*st);
        *st = NULL;
        return gm__sql_fail(db, file, rc, "cannot prepare a statement", err);
    }
    return 0;
}

int gm__sql_rows(sqlite3 *db, const char *file, sqlite3_stmt *st, void *list, size_t *n,
                 size_t elem, size_t first, gm__sql_row_fn row, void *ctx, const char *what,
                 gm_error_t *err)
{
    size_t cap = 0;
    int rc = 0, r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n + 1 > cap && gm__vec_grow(list, &cap, *n + 1, elem, first)) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
        char *e;
        memcpy(&e, list, sizeof e);
        e += *n * elem;
        memset(e, 0, elem);
        (*n)++;
        if ((rc = row(ctx, st, e, err)) != 0)
            break;
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = gm__sql_fail(db, file, r, what, err);
    sqlite3_finalize(st);
    return rc;
}

int gm__sql_exec(sqlite3 *db, const char *file, const char *sql, gm_error_t *err)
{
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : gm__sql_fail(db, file, rc, sql, err);
}

/* "'FILE': cannot VERB WHAT: MESSAGE", or "'FILE': SQL: MESSAGE" without WHAT. */
static int sql_txn_fail(sqlite3 *db, const char *file, int rc, const char *verb,
                        const char *what, const char *sql, gm_error_t *err)
{
    if (what == NULL)
        return gm__sql_fail(db, file, rc, sql, err);
    char buf[160];
    snprintf(buf, sizeof buf, "cannot %s %s", verb, what);
    return gm__sql_fail(db, file, rc, buf, err);
}

int gm__sql_begin(sqlite3 *db, const char *file, const char *savepoint, const char *what,
                  int *nested, gm_error_t *err)
{
    int inner = savepoint != NULL && !sqlite3_get_autocommit(db);
    char sql[96];
    if (inner)
        snprintf(sql, sizeof sql, "SAVEPOINT %s", savepoint);
    else
        snprintf(sql, sizeof sql, "BEGIN IMMEDIATE");
    if (nested)
        *nested = inner;
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sql_txn_fail(db, file, rc, "begin", what, sql, err);
}

int gm__sql_commit(sqlite3 *db, const char *file, const char *savepoint, int nested,
                   const char *what, gm_error_t *err)
{
    char sql[96];
    if (nested)
        snprintf(sql, sizeof sql, "RELEASE %s", savepoint);
    else
        snprintf(sql, sizeof sql, "COMMIT");
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        return 0;
    int code = sql_txn_fail(db, file, rc, "commit", what, sql, err);
    gm__sql_rollback(db, savepoint, nested);
    return code;
}

void gm__sql_rollback(sqlite3 *db, const char *savepoint, int nested)
{
    if (sqlite3_get_autocommit(db))
        return;
    if (nested) {
        char sql[160];
        snprintf(sql, sizeof sql, "ROLLBACK TO %s; RELEASE %s", savepoint, savepoint);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
    } else {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
}
