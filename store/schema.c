/*
 * store/schema.c — a store's schema: created in an empty file, checked at
 * every open, an older version upgraded when opened for writing
 * (gm__store_check_schema; the store's files in store/store_int.h).
 *
 * Schema (PRAGMA user_version = GM_STORE_SCHEMA_VERSION):
 *
 *   traces    one row per trace: counts, LOAD, digest, attrs (JSON text)
 *   chunks    (trace_id, seq): events [first_event, first_event + nevents)
 *             encoded by store/codec.c; first_alloc is the stored ordinal
 *             of the chunk's first ALLOC, the one number a chunk needs to
 *             decode on its own; nallocs its ALLOC count
 *   streams, tags, frames   the interned tables, (trace_id, idx)
 *   runs, timelines         replay results (gm_store_save_run): one row per
 *             run with params, device and metrics as JSON text; its timeline
 *   layouts   (version 2) one row per trace that has a recorded starting
 *             layout, written by store/layout.c inside the writer's
 *             transaction
 *   shards    (version 3) per sweep grid and shard, the runs it must store
 *             and how many it has (store/runs.c)
 *   (version 4) chunks.crc, the CRC-32 of each chunk's data, checked on
 *             every read before decoding; runs_key, a unique index over a
 *             run's key (a run saved again is kept, not doubled)
 *   An older store is upgraded on a writable open, read as it is otherwise.
 */
#include "gmsim/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "store/codec.h"
#include "store/sql.h"
#include "store/store_int.h"

/* Added in schema version 2 (a version-1 store gains it when opened for
 * writing): the recorded starting layout of a trace (store/layout.c). */
#define STORE_LAYOUTS_SQL                                                  \
    "CREATE TABLE layouts (\n"                                             \
    "  trace_id    INTEGER PRIMARY KEY REFERENCES traces(id) ON DELETE CASCADE\n" \
    "                DEFERRABLE INITIALLY DEFERRED,\n"                     \
    "  data        BLOB NOT NULL\n"                                        \
    ");\n"

/* Added in schema version 3 (older stores gain it when opened for
 * writing): what each sweep shard stored into a results store, so that
 * `gmsim merge` can tell a complete sweep from a partial one (store/runs.c). */
#define STORE_SHARDS_SQL                                                   \
    "CREATE TABLE shards (\n"                                              \
    "  grid        TEXT NOT NULL,\n"                                       \
    "  shard       INTEGER NOT NULL,\n"                                    \
    "  nshards     INTEGER NOT NULL,\n"                                    \
    "  runs        INTEGER NOT NULL,\n"                                    \
    "  done        INTEGER NOT NULL,\n"                                    \
    "  updated     TEXT NOT NULL,\n"                                       \
    "  PRIMARY KEY (grid, shard)\n"                                        \
    ");\n"

/* Added in schema version 4: a run's key is unique (store/runs.c). */
#define STORE_RUNS_KEY_SQL                                                 \
    "CREATE UNIQUE INDEX IF NOT EXISTS runs_key ON runs (trace_digest, policy, params, " \
    "device, gmsim_version);\n"

static const char store_schema[] =
    "CREATE TABLE traces (\n"
    "  id          INTEGER PRIMARY KEY,\n"
    "  name        TEXT NOT NULL UNIQUE,\n"
    "  events      INTEGER NOT NULL,\n"
    "  allocs      INTEGER NOT NULL,\n"
    "  frees       INTEGER NOT NULL,\n"
    "  marks       INTEGER NOT NULL,\n"
    "  segs        INTEGER NOT NULL,\n"
    "  load        INTEGER NOT NULL,\n"
    "  live_at_end INTEGER NOT NULL,\n"
    "  chunks      INTEGER NOT NULL,\n"
    "  bytes       INTEGER NOT NULL,\n"
    "  digest      TEXT NOT NULL,\n"
    "  attrs       TEXT NOT NULL DEFAULT '{}',\n"
    "  created     TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE chunks (\n"
    "  trace_id    INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE\n"
    "                DEFERRABLE INITIALLY DEFERRED,\n"
    "  seq         INTEGER NOT NULL,\n"
    "  first_event INTEGER NOT NULL,\n"
    "  nevents     INTEGER NOT NULL,\n"
    "  first_alloc INTEGER NOT NULL,\n"
    "  nallocs     INTEGER NOT NULL,\n"
    "  data        BLOB NOT NULL,\n"
    "  crc         INTEGER,\n"
    "  PRIMARY KEY (trace_id, seq)\n"
    ");\n"
    "CREATE TABLE streams (\n"
    "  trace_id    INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE\n"
    "                DEFERRABLE INITIALLY DEFERRED,\n"
    "  idx         INTEGER NOT NULL,\n"
    "  handle      INTEGER NOT NULL,\n"
    "  PRIMARY KEY (trace_id, idx)\n"
    ");\n"
    "CREATE TABLE tags (\n"
    "  trace_id    INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE\n"
    "                DEFERRABLE INITIALLY DEFERRED,\n"
    "  idx         INTEGER NOT NULL,\n"
    "  name        TEXT NOT NULL,\n"
    "  PRIMARY KEY (trace_id, idx)\n"
    ");\n"
    "CREATE TABLE frames (\n"
    "  trace_id    INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE\n"
    "                DEFERRABLE INITIALLY DEFERRED,\n"
    "  idx         INTEGER NOT NULL,\n"
    "  text        TEXT NOT NULL,\n"
    "  PRIMARY KEY (trace_id, idx)\n"
    ");\n"
    "CREATE TABLE runs (\n"
    "  id            INTEGER PRIMARY KEY,\n"
    "  trace_digest  TEXT,\n"
    "  trace_name    TEXT,\n"
    "  policy        TEXT,\n"
    "  params        TEXT,\n"
    "  device        TEXT,\n"
    "  gmsim_version TEXT,\n"
    "  metrics       TEXT,\n"
    "  created       TEXT\n"
    ");\n"
    "CREATE INDEX runs_by_digest ON runs (trace_digest);\n"
    STORE_RUNS_KEY_SQL
    STORE_LAYOUTS_SQL
    STORE_SHARDS_SQL
    "CREATE TABLE timelines (\n"
    "  run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE\n"
    "                DEFERRABLE INITIALLY DEFERRED,\n"
    "  point       INTEGER NOT NULL,\n"
    "  event       INTEGER,\n"
    "  ts_ns       INTEGER,\n"
    "  requested   INTEGER,\n"
    "  allocated   INTEGER,\n"
    "  reserved    INTEGER,\n"
    "  PRIMARY KEY (run_id, point)\n"
    ") WITHOUT ROWID;\n"; /* one b-tree, not a table and an index: half the work per point */

/* Create the schema in an empty database (inside a write transaction, so
 * that two processes creating the same file do not both do it). */
static int store_create_schema(gm_store_t *s, gm_error_t *err)
{
    int rc = store_begin(s, err);
    if (rc)
        return rc;
    int64_t version = 0, tables = 0;
    if ((rc = gm__store_query_int(s, "PRAGMA user_version", NULL, &version, err)) < 0 ||
        (rc = gm__store_query_int(s, "SELECT count(*) FROM sqlite_master", NULL, &tables, err)) < 0)
        goto fail;
    if (version == 0 && tables == 0) {
        char *msg = NULL;
        int r = sqlite3_exec(s->db, store_schema, NULL, NULL, &msg);
        sqlite3_free(msg);
        if (r != SQLITE_OK) {
            rc = store_fail(s, err, r, "cannot create the schema");
            goto fail;
        }
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", GM_STORE_SCHEMA_VERSION);
        if ((rc = store_exec(s, pragma, err)))
            goto fail;
    }
    return store_commit(s, err);
fail:
    store_rollback(s);
    return rc;
}

/* The columns the store reads, table by table. */
static const char *const store_columns[][2] = {
    {"traces", "id, name, events, allocs, frees, marks, segs, load, live_at_end, chunks, bytes, "
               "digest, attrs, created"},
    {"chunks", "trace_id, seq, first_event, nevents, first_alloc, nallocs, data"},
    {"streams", "trace_id, idx, handle"},
    {"tags", "trace_id, idx, name"},
    {"frames", "trace_id, idx, text"},
};

/* Check that a file of our version has our tables with their columns, so
 * that a damaged or hand-edited schema is refused at open with the table
 * named, not at the first query.  0 or GM_EFORMAT. */
static int store_check_tables(gm_store_t *s, gm_error_t *err)
{
    for (size_t i = 0; i < sizeof store_columns / sizeof store_columns[0]; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT %s FROM %s", store_columns[i][1], store_columns[i][0]);
        sqlite3_stmt *st;
        int r = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
        sqlite3_finalize(st);
        if (r == SQLITE_ERROR && strncmp(sqlite3_errmsg(s->db), "no such table", 13) == 0)
            return gm_error_set(err, GM_EFORMAT, "'%s' is not a gmsim trace store: no table %s",
                                s->path, store_columns[i][0]);
        if (r == SQLITE_ERROR)
            return gm_error_set(err, GM_EFORMAT, "'%s' is not a gmsim trace store: table %s: %s",
                                s->path, store_columns[i][0], sqlite3_errmsg(s->db));
        if (r != SQLITE_OK)
            return store_fail(s, err, r, "cannot read the schema");
    }
    if (s->version >= 4) {
        sqlite3_stmt *st;
        int r = sqlite3_prepare_v2(s->db, "SELECT crc FROM chunks", -1, &st, NULL);
        sqlite3_finalize(st);
        if (r == SQLITE_ERROR)
            return gm_error_set(err, GM_EFORMAT,
                                "'%s' is not a gmsim trace store: table chunks: %s", s->path,
                                sqlite3_errmsg(s->db));
        if (r != SQLITE_OK)
            return store_fail(s, err, r, "cannot read the schema");
    }
    return 0;
}

/* SQL function gm_crc32(blob): the chunk checksum (store_chunk_crc), for
 * the upgrade to version 4. */
static void store_sql_crc32(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const uint8_t *p = sqlite3_value_blob(argv[0]);
    int n = sqlite3_value_bytes(argv[0]);
    sqlite3_result_int64(ctx, (sqlite3_int64)gm__chunk_crc(p ? p : (const uint8_t *)"",
                                                           n > 0 ? (size_t)n : 0));
}

/* Version 4: chunks gain their checksum (computed from the data as it is
 * now: the upgrade cannot know an older chunk's original bytes), and runs
 * a unique key; runs repeated under one key are cut to the first (lowest
 * id), with their timelines.  Idempotent: a file whose version was set
 * back by hand may have the column and index already. */
static int store_upgrade_v4(gm_store_t *s, gm_error_t *err)
{
    int64_t has_crc = 0;
    int rc = gm__store_query_int(s, "SELECT count(*) FROM pragma_table_info('chunks') "
                                    "WHERE name = 'crc'", NULL, &has_crc, err);
    if (rc < 0)
        return rc;
    int r = sqlite3_create_function(s->db, "gm_crc32", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                    NULL, store_sql_crc32, NULL, NULL);
    if (r != SQLITE_OK)
        return store_fail(s, err, r, "cannot upgrade the schema to version 4");
    char sql[1024];
    snprintf(sql, sizeof sql,
             "%s"
             "UPDATE chunks SET crc = gm_crc32(data) WHERE crc IS NULL;\n"
             "CREATE TEMP TABLE gm_dup_runs AS SELECT id FROM runs WHERE id NOT IN "
             "(SELECT min(id) FROM runs GROUP BY trace_digest, policy, params, device, "
             "gmsim_version);\n"
             "DELETE FROM timelines WHERE run_id IN (SELECT id FROM gm_dup_runs);\n"
             "DELETE FROM runs WHERE id IN (SELECT id FROM gm_dup_runs);\n"
             "DROP TABLE gm_dup_runs;\n"
             STORE_RUNS_KEY_SQL
             "PRAGMA user_version = 4;",
             has_crc ? "" : "ALTER TABLE chunks ADD COLUMN crc INTEGER;\n");
    char *msg = NULL;
    r = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    sqlite3_free(msg);
    sqlite3_create_function(s->db, "gm_crc32", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL);
    if (r != SQLITE_OK)
        return store_fail(s, err, r, "cannot upgrade the schema to version 4");
    return 0;
}

/* Bring an older store up to this version, in a write transaction
 * (another process may have done it meanwhile): version 2 added the
 * layouts table, version 3 the shards table, version 4 chunk checksums and
 * unique run keys.  An older store opened read-only is read as it is: its
 * traces have no layouts, its runs no shard records, its chunks no
 * checksums, and its runs may repeat a key. */
static int store_upgrade(gm_store_t *s, gm_error_t *err)
{
    int rc = store_begin(s, err);
    if (rc)
        return rc;
    int64_t version = 0;
    if ((rc = gm__store_query_int(s, "PRAGMA user_version", NULL, &version, err)) < 0)
        goto fail;
    static const char *const steps[] = {STORE_LAYOUTS_SQL "PRAGMA user_version = 2;",
                                        STORE_SHARDS_SQL "PRAGMA user_version = 3;"};
    for (; version >= 1 && version < GM_STORE_SCHEMA_VERSION; version++) {
        if (version == 3) {
            if ((rc = store_upgrade_v4(s, err)))
                goto fail;
            continue;
        }
        char *msg = NULL;
        int r = sqlite3_exec(s->db, steps[version - 1], NULL, NULL, &msg);
        sqlite3_free(msg);
        if (r != SQLITE_OK) {
            char what[64];
            snprintf(what, sizeof what, "cannot upgrade the schema to version %lld",
                     (long long)version + 1);
            rc = store_fail(s, err, r, what);
            goto fail;
        }
    }
    return store_commit(s, err);
fail:
    store_rollback(s);
    return rc;
}

/* Check the file holds our schema (creating it in an empty file opened for
 * writing); the errors of gm_store_open. */
int gm__store_check_schema(gm_store_t *s, gm_error_t *err)
{
    sqlite3_stmt *st;
    int r = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
    if (r == SQLITE_OK) {
        r = sqlite3_step(st);
        if (r == SQLITE_ROW) {
            int64_t version = sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
            int64_t tables = 0, ours = 0;
            int rc =
                gm__store_query_int(s, "SELECT count(*) FROM sqlite_master", NULL, &tables, err);
            if (rc < 0)
                return rc;
            rc = gm__store_query_int(
                s,
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                "name IN ('traces', 'chunks', 'streams', 'tags', 'frames')",
                NULL, &ours, err);
            if (rc < 0)
                return rc;
            if (version == 0 && tables == 0 && (s->flags & GM_STORE_WRITE)) {
                rc = store_create_schema(s, err);
                if (rc)
                    return rc;
                return gm__store_check_schema(s, err);
            }
            /* version 0 is no version, unless the tables say the file is a
             * store whose version was reset */
            if (version == 0 && ours != 5)
                return gm_error_set(err, GM_EFORMAT, "'%s' is not a gmsim trace store", s->path);
            int older = version >= 1 && version < GM_STORE_SCHEMA_VERSION;
            if (older && ours == 5 && (s->flags & GM_STORE_WRITE)) {
                rc = store_upgrade(s, err);
                if (rc)
                    return rc;
                return gm__store_check_schema(s, err);
            }
            if (version != GM_STORE_SCHEMA_VERSION && !older)
                return gm_error_set(err, GM_ESCHEMA,
                                    "'%s' has schema version %lld, this gmsim reads version %d",
                                    s->path, (long long)version, GM_STORE_SCHEMA_VERSION);
            s->version = (int)version;
            return store_check_tables(s, err);
        }
        sqlite3_finalize(st);
    }
    return gm__sql_open_fail(s->db, s->path, r, err);
}
