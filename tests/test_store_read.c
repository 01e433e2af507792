/*
 * tests/test_store_read.c — the trace store beyond its traces: replay
 * results saved with their timelines, what is checked on read (chunk
 * checksums, the upgrade from version 3) and what readers leave beside a
 * store, two writers at once, and the one SQLite error map (store/sql.c).
 * The fixtures are in tests/support/store_fixture.c.
 */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/codec.h"
#include "store/sql.h"
#include "support/store_fixture.h"
#include "util.h"

/* ---- replay results ------------------------------------------------------ */

Test(store, runs_are_saved_with_their_timelines)
{
    const char *path = gt_tmpfile("runs.db");
    unlink(path);
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_timeline_point_t tl[3] = {{0, 10, 100, 512, 1024}, {1, 20, 300, 1024, 2048},
                                 {2, 30, 0, 0, 2048}};
    gm_run_record_t run = {.trace = "t", .trace_digest = "00ff", .policy = "buddy",
                           .params = "{\"arena\": 1024}", .device = "{\"capacity\": 0}",
                           .metrics = "{\"peak_reserved\": 2048}", .timeline = tl, .npoints = 3};
    int64_t id1 = 0, id2 = 0, id3 = 0;
    int found = -1;
    run.found = &found;
    cr_assert_eq(gm_store_save_run(s, &run, &id1, &err), 0, "%s", err.msg);
    cr_assert_eq(found, 0);
    /* the same key again: the stored run is kept, nothing is added */
    run.npoints = 0;
    run.metrics = "{\"peak_reserved\": 1}";
    cr_assert_eq(gm_store_save_run(s, &run, &id3, &err), 0, "%s", err.msg);
    cr_assert_eq(found, 1);
    cr_assert_eq(id3, id1);
    /* another key is another run */
    run.params = "{\"arena\": 2048}";
    cr_assert_eq(gm_store_save_run(s, &run, &id2, &err), 0, "%s", err.msg);
    cr_assert_eq(found, 0);
    cr_assert_gt(id2, id1);
    run.metrics = "{\"peak_reserved\": 2048}";

    /* text that is not JSON is refused, and nothing is saved */
    run.metrics = "{\"peak_reserved\": ";
    cr_assert_eq(gm_store_save_run(s, &run, NULL, &err), GM_EINVAL);
    cr_assert(strstr(err.msg, "metrics is not JSON") != NULL, "%s", err.msg);
    gm_store_close(s);

    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "SELECT count(*), max(reserved), sum(requested), "
                                    "(SELECT count(*) FROM runs), "
                                    "(SELECT json_extract(metrics, '$.peak_reserved') FROM runs "
                                    "WHERE id = ?1) FROM timelines WHERE run_id = ?1",
                                    -1, &st, NULL),
                 SQLITE_OK);
    sqlite3_bind_int64(st, 1, id1);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_eq(sqlite3_column_int64(st, 0), 3);
    cr_assert_eq(sqlite3_column_int64(st, 1), 2048);
    cr_assert_eq(sqlite3_column_int64(st, 2), 400);
    cr_assert_eq(sqlite3_column_int64(st, 3), 2);
    cr_assert_eq(sqlite3_column_int64(st, 4), 2048);
    sqlite3_finalize(st);
    sqlite3_close(db);

    /* a store opened read-only takes no run */
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    run.metrics = "{}";
    cr_assert_eq(gm_store_save_run(s, &run, NULL, &err), GM_EINVAL);
    cr_assert(strstr(err.msg, "read-only") != NULL, "%s", err.msg);
    gm_store_close(s);
}

/* ---- what is checked on read, and what readers leave behind ------------- */

/* An unsigned LEB128 varint at b[*i]; *i moves past it. */
static uint64_t st_varint(const uint8_t *b, size_t *i)
{
    uint64_t x = 0;
    for (int sh = 0;; sh += 7) {
        uint8_t c = b[(*i)++];
        x |= (uint64_t)(c & 0x7f) << sh;
        if (c < 0x80)
            return x;
    }
}

Test(store, chunk_checksum_catches_what_the_codec_accepts)
{
    /* Three bytes of chunk 1 changed so that the chunk still decodes, to
     * the same number of events but other values: without the checksum
     * the reader would hand them out. */
    const char *path = st_tampered("flip3.db", NULL);
    sqlite3 *db;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "SELECT data, nevents, first_alloc, crc FROM chunks WHERE "
                                    "seq = 1 AND trace_id = " ST_T,
                                    -1, &st, NULL),
                 SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    size_t len = (size_t)sqlite3_column_bytes(st, 0);
    uint8_t *orig = malloc(len), *blob = malloc(len);
    cr_assert(orig && blob);
    memcpy(orig, sqlite3_column_blob(st, 0), len);
    size_t nevents = (size_t)sqlite3_column_int64(st, 1);
    uint64_t first_alloc = (uint64_t)sqlite3_column_int64(st, 2);
    uint32_t stored = (uint32_t)sqlite3_column_int64(st, 3);
    sqlite3_finalize(st);
    cr_assert_eq(stored, gm__chunk_crc(orig, len));

    gm__codec_t c;
    gm__codec_init(&c, -1);
    gm_event_t *a = malloc(GM_CHUNK_EVENTS * sizeof *a), *b = malloc(GM_CHUNK_EVENTS * sizeof *b);
    cr_assert(a && b);
    size_t n = 0, m = 0;
    gm_error_t err;
    cr_assert_eq(gm__chunk_decode(&c, orig, len, first_alloc, a, GM_CHUNK_EVENTS, &n, NULL, &err),
                 0, "%s", err.msg);
    cr_assert_eq(n, nevents);
    /* the chunk's directory (docs/store.md): magic, nevents, mask,
     * ts_first, ts_min, ts_scale, then (raw_len, stored_len) per column;
     * find the time stamps' column (1) stored as is */
    size_t i = 3, col_at = 0, col_len = 0;
    st_varint(orig, &i);
    unsigned mask = orig[i++];
    for (int k = 0; k < 3; k++)
        st_varint(orig, &i);
    int cols = 3 + __builtin_popcount(mask & 0x1f);
    uint64_t raw[8], stored_len[8];
    for (int k = 0; k < cols; k++) {
        raw[k] = st_varint(orig, &i);
        stored_len[k] = st_varint(orig, &i);
    }
    for (int k = 0, off = (int)i; k < cols; off += (int)stored_len[k], k++)
        if (k == 1 && raw[k] == stored_len[k])
            col_at = (size_t)off, col_len = (size_t)raw[k];
    cr_assert_gt(col_at, 0, "chunk 1's time stamps are compressed");
    size_t at = 0;
    for (size_t pos = col_at + col_len / 2; pos + 3 < col_at + col_len && at == 0; pos++) {
        memcpy(blob, orig, len);
        for (size_t k = 0; k < 3; k++)
            blob[pos + k] ^= 0x01; /* bit 7 kept: every varint keeps its length */
        if (gm__chunk_decode(&c, blob, len, first_alloc, b, GM_CHUNK_EVENTS, &m, NULL,
                                   &err) == 0 &&
            m == n && memcmp(a, b, n * sizeof *a) != 0)
            at = pos;
    }
    cr_assert_gt(at, 0, "no 3-byte change the codec accepts");
    gm__codec_release(&c);
    uint32_t crc = gm__chunk_crc(blob, len);
    cr_assert_neq(crc, stored);
    cr_assert_eq(sqlite3_prepare_v2(db, "UPDATE chunks SET data = ?1 WHERE seq = 1 AND trace_id = " ST_T,
                                    -1, &st, NULL),
                 SQLITE_OK);
    sqlite3_bind_blob(st, 1, blob, (int)len, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);

    /* the reader refuses the chunk, naming the store, trace and chunk */
    int rc;
    cr_assert_eq(st_read_back(path, "t", NULL, &rc, &err), ST_AT_NEXT, "%s", err.msg);
    cr_assert_eq(rc, GM_ECORRUPT);
    char want[GM_ERROR_MSG_MAX];
    snprintf(want, sizeof want,
             "'%s': trace 't' chunk 1 (from event 65536): damaged: checksum %08x, %08x stored",
             path, crc, stored);
    cr_assert_str_eq(err.msg, want);
    /* the other trace is read as before */
    cr_assert_eq(st_read_back(path, "u", NULL, &rc, &err), ST_READ_OK, "%s", err.msg);
    free(orig);
    free(blob);
    free(a);
    free(b);

    /* no checksum is damage too (the trigger keeps st_tampered from
     * sealing the chunk again) */
    st_expect("nocrc.db", "UPDATE chunks SET crc = NULL WHERE seq = 2 AND trace_id = " ST_T "; "
              "CREATE TRIGGER keep BEFORE UPDATE ON chunks BEGIN SELECT RAISE(IGNORE); END",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 2 (from event 131072): damaged: no checksum stored");
}

/* Make the store at path look as schema version 3 left it: no chunk
 * checksums, no unique run key. */
static void st_make_v3(const char *path)
{
    cr_assert_eq(st_sql(path, "DROP INDEX runs_key; ALTER TABLE chunks DROP COLUMN crc; "
                              "PRAGMA user_version = 3"),
                 SQLITE_OK);
}

Test(store, upgrade_to_version_4)
{
    /* a version-3 store with one run saved three times, and a damaged chunk */
    const char *path = st_tampered("v3.db", NULL);
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_timeline_point_t tl[2] = {{0, 1, 2, 3, 4}, {1, 2, 3, 4, 5}};
    gm_run_record_t run = {.trace = "t", .trace_digest = "ab", .policy = "buddy",
                           .params = "{}", .device = "{}", .metrics = "{\"x\": 1}",
                           .timeline = tl, .npoints = 2};
    int64_t id;
    cr_assert_eq(gm_store_save_run(s, &run, &id, &err), 0, "%s", err.msg);
    run.policy = "tlsf";
    cr_assert_eq(gm_store_save_run(s, &run, &id, &err), 0, "%s", err.msg);
    gm_store_close(s);
    st_make_v3(path);
    cr_assert_eq(st_sql(path, "INSERT INTO runs (trace_digest, trace_name, policy, params, device, "
                              "gmsim_version, metrics) SELECT trace_digest, trace_name, policy, "
                              "params, device, gmsim_version, '{\"x\": 2}' FROM runs WHERE "
                              "policy = 'buddy'; "
                              "INSERT INTO timelines SELECT 3, point, event, ts_ns, requested, "
                              "allocated, reserved FROM timelines WHERE run_id = 1; "
                              "INSERT INTO runs (trace_digest, trace_name, policy, params, device, "
                              "gmsim_version, metrics) SELECT trace_digest, trace_name, policy, "
                              "params, device, gmsim_version, '{\"x\": 3}' FROM runs WHERE "
                              "id = 1"),
                 SQLITE_OK);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs"), 4);

    /* read-only, it is read as it is: no checksums, every run */
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_run_info_t *runs;
    size_t n;
    cr_assert_eq(gm_store_list_runs(s, &runs, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 4);
    gm_run_info_free_list(runs, n);
    gm_store_close(s);
    int rc;
    cr_assert_eq(st_read_back(path, "t", &st_tmpl_t, &rc, &err), ST_READ_OK, "%s", err.msg);
    cr_assert_eq(st_sql_int(path, "PRAGMA user_version"), 3, "a read-only open changed the file");

    /* opened for writing, it is upgraded: the first of each key kept with
     * its timeline, the repeats and theirs gone, every chunk checksummed */
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "PRAGMA user_version"), GM_STORE_SCHEMA_VERSION);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs"), 2);
    cr_assert_eq(st_sql_int(path, "SELECT group_concat(id) = '1,2' FROM runs ORDER BY id"), 1);
    cr_assert_eq(st_sql_int(path, "SELECT json_extract(metrics, '$.x') FROM runs WHERE id = 1"), 1);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM timelines"), 4);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM timelines WHERE run_id > 2"), 0);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM chunks WHERE crc IS NULL"), 0);
    cr_assert_eq(st_read_back(path, "t", &st_tmpl_t, &rc, &err), ST_READ_OK, "%s", err.msg);
    /* the key is unique in the schema itself */
    cr_assert_eq(st_sql(path, "INSERT INTO runs (trace_digest, policy, params, device, "
                              "gmsim_version) SELECT trace_digest, policy, params, device, "
                              "gmsim_version FROM runs WHERE id = 1"),
                 SQLITE_CONSTRAINT);
    /* and the checksums catch a later edit */
    cr_assert_eq(st_sql(path, "UPDATE chunks SET data = substr(data, 1, 100) || x'00' || "
                              "substr(data, 102) WHERE seq = 0 AND trace_id = " ST_T),
                 SQLITE_OK);
    cr_assert_eq(st_read_back(path, "t", NULL, &rc, &err), ST_AT_NEXT, "%s", err.msg);
    cr_assert(strstr(err.msg, "chunk 0 (from event 0): damaged: checksum") != NULL, "%s",
              err.msg);
}

/* Whether path-SUFFIX exists. */
static int st_side_exists(const char *path, const char *suffix)
{
    char side[700];
    snprintf(side, sizeof side, "%s%s", path, suffix);
    struct stat st;
    return stat(side, &st) == 0;
}

static void st_assert_alone(const char *path, const char *when)
{
    cr_assert(!st_side_exists(path, "-wal"), "%s: %s-wal left", when, path);
    cr_assert(!st_side_exists(path, "-shm"), "%s: %s-shm left", when, path);
    cr_assert(!st_side_exists(path, "-journal"), "%s: %s-journal left", when, path);
}

/* In a child process, as user nobody when run as root (root ignores
 * permissions): open path read-only, list it, read trace t to its end.
 * The child's exit status: 0 when all of it worked. */
static int st_read_as_nobody(const char *path)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(9);
        gm_store_t *s;
        gm_error_t err = {0};
        gm_trace_info_t *list;
        size_t n;
        if (gm_store_open(path, GM_STORE_READONLY, &s, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            _exit(1);
        }
        if (gm_store_list(s, &list, &n, &err) != 0 || n != 2)
            _exit(2);
        gm_trace_info_free_list(list, n);
        gm_reader_t *r;
        const gm_event_t *ev;
        size_t got, total = 0;
        if (gm_reader_open(s, "t", &r, &err) != 0)
            _exit(3);
        while (gm_reader_next(r, &ev, &got, &err) == 0 && got > 0)
            total += got;
        int bad = err.code != 0 || total != gm_reader_info(r)->events;
        gm_reader_close(r);
        gm_store_close(s);
        _exit(bad ? 4 : 0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

Test(store, readers_leave_nothing_beside_a_store)
{
    /* a store at rest is in rollback-journal mode: nothing beside it */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/ro", gt_tmpdir());
    cr_assert_eq(mkdir(dir, 0755), 0);
    chmod(gt_tmpdir(), 0755); /* nobody may reach it */
    char path[700];
    snprintf(path, sizeof path, "%s/s.db", dir);
    size_t len;
    char *bytes = gt_read_file(st_template(), &len);
    cr_assert_not_null(bytes);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    free(bytes);
    st_assert_alone(path, "a copy");
    cr_assert_eq(st_header_byte(path, 18), 1, "not in rollback-journal mode at rest");
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
    st_assert_alone(path, "after a writer");

    /* a read-only file in a read-only directory reads, and leaves nothing */
    cr_assert_eq(chmod(path, 0444), 0);
    cr_assert_eq(chmod(dir, 0555), 0);
    cr_assert_eq(st_read_as_nobody(path), 0);
    st_assert_alone(path, "a read in a read-only directory");
    cr_assert_eq(chmod(dir, 0755), 0);
    cr_assert_eq(st_read_as_nobody(path), 0);
    st_assert_alone(path, "a read of a read-only file");

    /* a store an older gmsim left in WAL mode (no -wal beside it) is read
     * without creating one, in a read-only directory too */
    cr_assert_eq(chmod(path, 0644), 0);
    cr_assert_eq(st_sql(path, "PRAGMA journal_mode = WAL"), SQLITE_OK);
    st_assert_alone(path, "sqlite3 in WAL mode, closed");
    cr_assert_eq(chmod(path, 0444), 0);
    cr_assert_eq(st_read_as_nobody(path), 0);
    st_assert_alone(path, "a read of a WAL-mode store");
    cr_assert_eq(chmod(dir, 0555), 0);
    cr_assert_eq(st_read_as_nobody(path), 0);
    st_assert_alone(path, "a read of a WAL-mode store in a read-only directory");

    /* then a writer works (nothing read-only was left to stop it), and
     * leaves the store in rollback-journal mode */
    cr_assert_eq(chmod(dir, 0755), 0);
    cr_assert_eq(chmod(path, 0644), 0);
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    st_write(s, "later", &st_tmpl_t, 0);
    gm_store_close(s);
    st_assert_alone(path, "a later import");
    cr_assert_eq(st_header_byte(path, 18), 1, "not in rollback-journal mode at rest");
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM traces"), 3);

    /* a reader open while a writer works sees the writer's files; once
     * both are closed nothing is left */
    gm_store_t *w, *r;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &r, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(r, "later", &info, &err), 0, "%s", err.msg);
    gm_trace_info_release(&info);
    cr_assert_eq(gm_store_delete(w, "later", &err), 0, "%s", err.msg);
    gm_store_close(r);
    gm_store_close(w);
    st_assert_alone(path, "a reader during a write");
}

/* ---- two writers ----------------------------------------------------------- */

#define ST_WRITERS 3
#define ST_KEYS 60

/* Child k of ST_WRITERS: save runs of keys 0..ST_KEYS-1 (each writer in
 * its own order) and ST_KEYS + k, each in its own transaction. */
static void st_writer_child(const char *path, int k)
{
    gm_store_t *s;
    gm_error_t err = {0};
    if (gm_store_open(path, GM_STORE_WRITE, &s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        _exit(1);
    }
    gm_timeline_point_t tl[3] = {{0, 1, 2, 3, 4}, {1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}};
    for (int i = 0; i <= ST_KEYS; i++) {
        int key = i == ST_KEYS ? ST_KEYS + k : (k % 2 ? ST_KEYS - 1 - i : i);
        char params[64], metrics[64];
        snprintf(params, sizeof params, "{\"key\":%d}", key);
        snprintf(metrics, sizeof metrics, "{\"writer\":%d}", k);
        gm_run_record_t run = {.trace = "t", .trace_digest = "d", .policy = "buddy",
                               .params = params, .device = "{}", .metrics = metrics,
                               .timeline = tl, .npoints = 3};
        if (gm_store_save_run(s, &run, NULL, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            _exit(2);
        }
    }
    gm_store_close(s);
    _exit(0);
}

Test(store, two_writers_store_each_run_once)
{
    const char *path = gt_tmpfile("writers.db");
    unlink(path);
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
    pid_t pids[ST_WRITERS];
    for (int k = 0; k < ST_WRITERS; k++) {
        pids[k] = fork();
        cr_assert_geq(pids[k], 0);
        if (pids[k] == 0)
            st_writer_child(path, k);
    }
    /* a reader meanwhile sees whole runs only */
    for (int i = 0; i < 20; i++) {
        cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
        gm_run_info_t *runs;
        size_t n;
        cr_assert_eq(gm_store_list_runs(s, &runs, &n, &err), 0, "%s", err.msg);
        for (size_t j = 0; j < n; j++)
            cr_assert_eq(runs[j].npoints, 3);
        gm_run_info_free_list(runs, n);
        gm_store_close(s);
    }
    for (int k = 0; k < ST_WRITERS; k++) {
        int status;
        cr_assert_eq(waitpid(pids[k], &status, 0), pids[k]);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", k);
    }
    /* every key once, none lost, each with its whole timeline */
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs"), ST_KEYS + ST_WRITERS);
    cr_assert_eq(st_sql_int(path, "SELECT count(DISTINCT params) FROM runs"), ST_KEYS + ST_WRITERS);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM timelines"), 3 * (ST_KEYS + ST_WRITERS));
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs WHERE (SELECT count(*) FROM "
                                  "timelines WHERE run_id = runs.id) != 3"),
                 0);
    st_assert_alone(path, "three writers and a reader");
}

/* ---- the one SQLite error map (store/sql.c) --------------------------------- */

Test(store, sql_error_map)
{
    static const struct {
        int rc, store, input;
    } map[] = {
        {SQLITE_NOMEM, GM_ENOMEM, GM_ENOMEM},
        {SQLITE_IOERR, GM_EIO, GM_EIO},
        {SQLITE_IOERR_WRITE, GM_EIO, GM_EIO}, /* extended codes map as their primary */
        {SQLITE_FULL, GM_EIO, GM_EIO},
        {SQLITE_CANTOPEN, GM_EIO, GM_EIO},
        {SQLITE_READONLY, GM_EIO, GM_EIO},
        {SQLITE_READONLY_DBMOVED, GM_EIO, GM_EIO},
        {SQLITE_PERM, GM_EIO, GM_EIO},
        {SQLITE_CORRUPT, GM_ECORRUPT, GM_EFORMAT},
        {SQLITE_NOTADB, GM_ECORRUPT, GM_EFORMAT},
        {SQLITE_ERROR, GM_EDB, GM_EFORMAT},
        {SQLITE_BUSY, GM_EDB, GM_EFORMAT},
        {SQLITE_LOCKED, GM_EDB, GM_EFORMAT},
        {SQLITE_CONSTRAINT_UNIQUE, GM_EDB, GM_EFORMAT},
        {SQLITE_MISUSE, GM_EDB, GM_EFORMAT},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        int rc = map[i].rc;
        cr_expect_eq(gm__sql_code(rc), map[i].store, "%s", sqlite3_errstr(rc));
        cr_expect_eq(gm__sql_input_code(rc), map[i].input, "%s", sqlite3_errstr(rc));
        gm_error_t err = {0};
        cr_expect_eq(gm__sql_fail(NULL, "x.db", rc, "cannot save a run", &err), map[i].store);
        cr_expect_eq(err.code, map[i].store);
        char want[GM_ERROR_MSG_MAX];
        snprintf(want, sizeof want, "'x.db': cannot save a run: %s", sqlite3_errstr(rc));
        cr_expect_str_eq(err.msg, want);
        /* Opening: NOTADB is a file of another kind; the rest, I/O at worst. */
        gm_error_t oerr = {0};
        int want_open = (rc & 0xff) == SQLITE_NOTADB ? GM_EFORMAT
                        : map[i].store == GM_EDB    ? GM_EIO
                                                    : map[i].store;
        cr_expect_eq(gm__sql_open_fail(NULL, "x.db", rc, &oerr), want_open);
        if ((rc & 0xff) == SQLITE_NOTADB)
            cr_expect_str_eq(oerr.msg, "cannot open 'x.db': file is not a database");
        else
            cr_expect(strncmp(oerr.msg, "cannot open 'x.db': ", 20) == 0, "%s", oerr.msg);
    }
    cr_expect_eq(gm__sql_code(SQLITE_OK), 0);
    cr_expect_eq(gm__sql_code(SQLITE_ROW), 0);
    cr_expect_eq(gm__sql_code(SQLITE_DONE), 0);

    /* A real failure on a connection: the file named, SQLite's message. */
    sqlite3 *db;
    cr_assert_eq(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    gm_error_t err = {0};
    sqlite3_stmt *st = NULL;
    cr_expect_eq(gm__sql_prepare(db, "y.db", "SELECT * FROM nowhere", &st, &err), GM_EDB);
    cr_expect_null(st);
    cr_expect_str_eq(err.msg, "'y.db': cannot prepare a statement: no such table: nowhere");
    cr_expect_eq(gm__sql_input_fail(db, "y.nsys-rep", "cannot read the table", &err), GM_EFORMAT);
    cr_expect_str_eq(err.msg, "'y.nsys-rep': cannot read the table: no such table: nowhere");
    /* Transactions: a savepoint inside an open one; commit and roll back. */
    int nested = -1;
    cr_expect_eq(gm__sql_begin(db, "y.db", "sp", "the import", &nested, &err), 0);
    cr_expect_eq(nested, 0);
    cr_expect_eq(gm__sql_begin(db, "y.db", "sp", "the import", &nested, &err), 0);
    cr_expect_eq(nested, 1);
    cr_expect_eq(gm__sql_exec(db, "y.db", "CREATE TABLE t (a)", &err), 0);
    gm__sql_rollback(db, "sp", 1);
    cr_expect_eq(sqlite3_get_autocommit(db), 0);
    cr_expect_eq(gm__sql_exec(db, "y.db", "CREATE TABLE u (a)", &err), 0);
    cr_expect_eq(gm__sql_commit(db, "y.db", NULL, 0, "the import", &err), 0);
    cr_expect_neq(sqlite3_get_autocommit(db), 0);
    cr_expect_eq(gm__sql_exec(db, "y.db", "SELECT * FROM t", &err), GM_EDB);
    cr_expect_str_eq(err.msg, "'y.db': SELECT * FROM t: no such table: t");
    cr_expect_eq(gm__sql_exec(db, "y.db", "SELECT * FROM u", &err), 0);
    cr_expect_eq(gm__sql_commit(db, "y.db", NULL, 0, "the import", &err), GM_EDB);
    cr_expect_str_eq(err.msg,
                     "'y.db': cannot commit the import: cannot commit - no transaction is active");
    sqlite3_close(db);
}
