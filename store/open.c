/*
 * store/open.c — a trace store's connection: opening and closing the
 * file, and the kept statements the store's files share (API in
 * gmsim/store.h; the store's files and what they share in
 * store/store_int.h; schema and chunk format in docs/store.md).
 *
 * Journal.  A writer works in WAL mode (readers in other processes are not
 * blocked) and its close, when it is the last connection, switches the
 * file back to the rollback journal: a store at rest is the file alone, and
 * a read-only open creates nothing beside it (a read-only directory or file
 * reads; nothing read-only is left to stop a later write).  A file left in
 * WAL mode with no -wal beside it (an older gmsim) is read `immutable`.
 * docs/store.md says what this means for concurrent readers and writers.
 */
#include "gmsim/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gmsim/json.h"
#include "gmsim/text.h"
#include "store/sql.h"
#include "store/store.h"
#include "store/store_int.h"

#define STORE_BUSY_MS 5000

static const char *const store_query_sql[STORE_NQUERIES] = {
#define STORE_Q_SQL(name, sql) sql,
    STORE_QUERIES(STORE_Q_SQL)
#undef STORE_Q_SQL
};

/* ---- SQLite helpers ------------------------------------------------------ */

/* The kept statement `which` (STORE_Q_*), compiled on first use; the
 * caller gives it back with store_query_done.  0 or a negative code. */
int gm__store_query(gm_store_t *s, int which, sqlite3_stmt **st, gm_error_t *err)
{
    if (s->queries[which] == NULL) {
        int rc = sqlite3_prepare_v3(s->db, store_query_sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                                    &s->queries[which], NULL);
        if (rc != SQLITE_OK) {
            s->queries[which] = NULL;
            *st = NULL;
            return store_fail(s, err, rc, "cannot prepare a statement");
        }
    }
    *st = s->queries[which];
    return 0;
}

/* Like store_prepare, but the statement stays compiled in s for the next
 * call with the same text (one at a time: the writer's chunk insert, run
 * once per trace).  Give it back with gm__store_release_kept. */
int gm__store_prepare_kept(gm_store_t *s, const char *sql, sqlite3_stmt **st, gm_error_t *err)
{
    if (s->kept != NULL && strcmp(s->kept_sql, sql) == 0) {
        *st = s->kept;
        return 0;
    }
    char *copy = strdup(sql);
    if (copy == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
    if (rc != SQLITE_OK) {
        free(copy);
        *st = NULL;
        return store_fail(s, err, rc, "cannot prepare a statement");
    }
    sqlite3_finalize(s->kept);
    free(s->kept_sql);
    s->kept = *st;
    s->kept_sql = copy;
    return 0;
}

/* Give back a statement of gm__store_prepare_kept (finalized if it is not the
 * kept one any more). */
void gm__store_release_kept(gm_store_t *s, sqlite3_stmt *st)
{
    if (st != NULL && st == s->kept) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    } else {
        sqlite3_finalize(st);
    }
}

/* The time now as a trace's `created` (UTC, 2025-01-31T12:00:00Z), what
 * SQLite's strftime('%Y-%m-%dT%H:%M:%SZ', 'now') gives (the same clock,
 * whole seconds), formatted once per second: an import of 100,000 small
 * traces writes most of them within the same one. */
const char *gm__store_created(gm_store_t *s)
{
    time_t now = time(NULL);
    if (now != s->created_at || s->created[0] == '\0') {
        struct tm tm;
        if (now == (time_t)-1 || gmtime_r(&now, &tm) == NULL ||
            strftime(s->created, sizeof s->created, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
            s->created[0] = '\0';
            return NULL;
        }
        s->created_at = now;
    }
    return s->created;
}

/* One integer from a one-row query with an optional text parameter.
 * 1 and *v on a row, 0 when no row, or a negative code. */
int gm__store_query_int(gm_store_t *s, const char *sql, const char *param, int64_t *v,
                        gm_error_t *err)
{
    sqlite3_stmt *st;
    int rc = store_prepare(s, sql, &st, err);
    if (rc)
        return rc;
    if (param)
        sqlite3_bind_text(st, 1, param, -1, SQLITE_STATIC);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        *v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return 1;
    }
    sqlite3_finalize(st);
    if (r == SQLITE_DONE)
        return 0;
    return store_fail(s, err, r, "query failed");
}

/* gm__store_query_int of the trace id of `name` (the kept STORE_Q_NAME_ID). */
int gm__store_name_id(gm_store_t *s, const char *name, int64_t *v, gm_error_t *err)
{
    sqlite3_stmt *st;
    int rc = gm__store_query(s, STORE_Q_NAME_ID, &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW)
        *v = sqlite3_column_int64(st, 0);
    store_query_done(st);
    if (r == SQLITE_ROW)
        return 1;
    if (r == SQLITE_DONE)
        return 0;
    return store_fail(s, err, r, "query failed");
}

int gm__store_json_valid(const char *text) { return store_json_valid(text, GM_JSON_MAX_DEPTH); }

/* ---- open / close -------------------------------------------------------- */

static int store_is_memory(const char *path) { return strcmp(path, ":memory:") == 0 || !*path; }

/*
 * Whether the file at path is an SQLite database in WAL mode (header bytes
 * 18 and 19 both 2) with no write-ahead log beside it: a store left so by
 * an older gmsim (or another SQLite tool), with no connection open on it.
 * A plain read-only open of such a file creates -wal and -shm beside it (with
 * the file's permissions, so a read-only store leaves read-only files that
 * make later writes fail) or fails in a read-only directory.
 */
static int store_wal_at_rest(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;
    unsigned char h[100];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n != sizeof h || memcmp(h, "SQLite format 3", 16) != 0 || h[18] != 2 || h[19] != 2)
        return 0;
    size_t len = strlen(path);
    char *wal = malloc(len + 5);
    if (wal == NULL)
        return 0;
    memcpy(wal, path, len);
    memcpy(wal + len, "-wal", 5);
    struct stat st;
    int absent = stat(wal, &st) != 0 && errno == ENOENT;
    free(wal);
    return absent;
}

/* "file:PATH?immutable=1" with PATH escaped for a URI (RFC 3986: '%', '?'
 * and '#' and every byte outside printable ASCII as %XX); a relative path
 * stays relative.  NULL when out of memory; the caller frees the result. */
static char *store_immutable_uri(const char *path)
{
    size_t len = strlen(path);
    char *u = malloc(3 * len + 32);
    if (u == NULL)
        return NULL;
    size_t k = (size_t)sprintf(u, "file:");
    /* "file://x" would name host x: a path starting with "//" keeps it */
    if (path[0] == '/' && path[1] == '/')
        k += (size_t)sprintf(u + k, "//");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p <= 0x20 || *p >= 0x7f)
            k += (size_t)sprintf(u + k, "%%%02X", *p);
        else
            u[k++] = (char)*p;
    }
    sprintf(u + k, "?immutable=1");
    return u;
}

/* Remove path and the -wal, -shm and -journal files beside it. */
static void store_unlink_all(const char *path)
{
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    size_t len = strlen(path);
    char *p = malloc(len + 9);
    if (p == NULL)
        return;
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        memcpy(p, path, len);
        strcpy(p + len, sfx[i]);
        unlink(p);
    }
    free(p);
}

int gm_store_open(const char *path, unsigned flags, gm_store_t **out, gm_error_t *err)
{
    *out = NULL;
    if (path == NULL)
        return gm_error_set(err, GM_EINVAL, "no store path given");
    if (flags & ~GM_STORE_WRITE)
        return gm_error_set(err, GM_EINVAL, "cannot open '%s': unknown flags 0x%x", path, flags);
    int memory = store_is_memory(path);
    struct stat st;
    int created = !memory && (flags & GM_STORE_WRITE) && lstat(path, &st) != 0 && errno == ENOENT;
    if (!memory && !(flags & GM_STORE_WRITE) && stat(path, &st) != 0) {
        int e = errno;
        return gm_error_set(err, GM_EIO, "cannot open '%s': %s", path,
                            e == ENOENT ? "no such file" : strerror(e));
    }
    /* Before anything opens it: an open(2) of a FIFO blocks until a writer
     * comes, and a device or socket is no database either. */
    if (!memory && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return gm_error_set(err, GM_EIO, "cannot open '%s': %s", path,
                            S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");

    /* A new store is created here, not by SQLite, whose "unable to open
     * database file" would hide why (permission denied, no such directory) */
    int fd = created ? open(path, O_WRONLY | O_CREAT | O_EXCL, 0644) : -1;
    if (created && fd < 0 && errno != EEXIST) {
        char why[128];
        return gm_error_set(err, GM_EIO, "cannot create '%s': %s", path,
                            gm_errno_text(errno, why, sizeof why));
    }
    if (fd >= 0)
        close(fd);
    else
        created = 0; /* another process made it meanwhile: not ours to remove */

    gm_store_t *s = calloc(1, sizeof *s);
    if (s == NULL || (s->path = strdup(path)) == NULL) {
        free(s);
        if (created)
            unlink(path);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    s->flags = flags;
    int oflags = flags & GM_STORE_WRITE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                        : SQLITE_OPEN_READONLY;
    char *uri = NULL;
    if (!(flags & GM_STORE_WRITE) && !memory && store_wal_at_rest(path)) {
        uri = store_immutable_uri(path);
        if (uri == NULL) {
            free(s->path);
            free(s);
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        }
        oflags |= SQLITE_OPEN_URI;
    }
    int r = sqlite3_open_v2(uri ? uri : path, &s->db, oflags, NULL);
    free(uri);
    int rc;
    if (r != SQLITE_OK) {
        rc = gm__sql_open_fail(s->db, path, r, err);
        goto fail;
    }
    sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
    sqlite3_extended_result_codes(s->db, 0);
    if (created)
        /* A file this open made is empty and ours: its schema is created,
         * and the file switched to WAL below, without syncs (a crash can
         * lose only a file that held nothing).  With them the two were
         * four syncs each (journal, directory, journal, file): a new
         * store's import took 15 fdatasync calls, now 7.  The import's
         * own writes sync as before (WAL with synchronous = NORMAL, set
         * below, and the checkpoint at close). */
        sqlite3_exec(s->db, "PRAGMA synchronous = OFF", NULL, NULL, NULL);
    if ((rc = gm__store_check_schema(s, err)))
        goto fail;
    if ((flags & GM_STORE_WRITE) && !memory) {
        /* WAL: readers in other processes are not blocked by a writer.  It
         * may be refused (some network file systems); the store works
         * without it, so a failure here is not an error. */
        sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    }
    if ((rc = store_exec(s, "PRAGMA foreign_keys = ON", err)))
        goto fail;
    s->opened = 1;
    *out = s;
    return 0;
fail:
    gm_store_close(s);
    if (created) /* a file this open made (a full disk: 0 bytes) is not left behind */
        store_unlink_all(path);
    return rc;
}

void gm_store_close(gm_store_t *s)
{
    if (s == NULL)
        return;
    if (s->db) {
        store_rollback(s);
        for (int i = 0; i < STORE_NQUERIES; i++)
            sqlite3_finalize(s->queries[i]);
        sqlite3_finalize(s->kept);
        if (s->opened && (s->flags & GM_STORE_WRITE) && !store_is_memory(s->path)) {
            /* Leave the store at rest in rollback-journal mode, so that
             * readers create nothing beside it.  Leaving WAL needs every
             * other connection gone: with another one open this fails at
             * once (no busy wait) and the last writer to close does it.
             * A file refused at open (another version, not ours) is left
             * as it was. */
            sqlite3_busy_timeout(s->db, 0);
            sqlite3_exec(s->db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
        }
        sqlite3_close_v2(s->db);
    }
    if (s->spare)
        gm__store_writer_destroy(s->spare);
    free(s->kept_sql);
    free(s->path);
    free(s);
}

const char *gm_store_path(const gm_store_t *s) { return s->path; }
int gm_store_version(const gm_store_t *s) { return s->version; }
sqlite3 *gm__store_db(gm_store_t *s) { return s->db; }
int gm__store_writable(const gm_store_t *s) { return (s->flags & GM_STORE_WRITE) != 0; }
int gm__store_writer_active(const gm_store_t *s) { return s->writer_active; }

int gm__store_can_write(const gm_store_t *s, gm_error_t *err, const char *fmt, ...)
{
    if (gm__store_writable(s) && !s->writer_active)
        return 0;
    char what[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!gm__store_writable(s))
        return gm_error_set(err, GM_EINVAL, "cannot %s: '%s' is open read-only", what, s->path);
    return gm_error_set(err, GM_ESTATE, "cannot %s: a writer is active on '%s'", what, s->path);
}
