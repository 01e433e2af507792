/*
 * store/runs.c — queries over the runs and timelines tables (API in
 * gmsim/store.h, "run queries"): list runs, find one by key, read a
 * timeline, copy runs between stores without duplicates; and the shards
 * table, the record of what each sweep shard stored.
 *
 * A run's key is (trace_digest, policy, params, device, gmsim_version),
 * each text compared exactly, and unique from schema version 4 (index
 * runs_key; a store of version 3 or older read as it is may still repeat
 * one).  Lookups use that index; saves (gm_store_save_run) and copies
 * check the key before each insert, on the destination's connection and
 * inside its write transaction, so a key lands once whatever the number of
 * writers, and runs repeated in a source are copied once.
 *
 * The store is outside data: columns read may be NULL or of another type;
 * texts read that way become "" and numbers 0, never a crash.
 */
#include "gmsim/store.h"
#include "gmsim/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"
#include "store/store.h"
#include "store/store_int.h"
#include "base/vec.h"

static int runs_fail(gm_store_t *s, gm_error_t *err, int rc, const char *what)
{
    return gm__sql_fail(gm__store_db(s), gm_store_path(s), rc, what, err);
}

static int runs_prepare(gm_store_t *s, const char *sql, sqlite3_stmt **st, gm_error_t *err)
{
    return gm__sql_prepare(gm__store_db(s), gm_store_path(s), sql, st, err);
}

static int runs_begin(gm_store_t *s, gm_error_t *err)
{
    return gm__sql_begin(gm__store_db(s), gm_store_path(s), NULL, NULL, NULL, err);
}

static int runs_commit(gm_store_t *s, gm_error_t *err)
{
    return gm__sql_commit(gm__store_db(s), gm_store_path(s), NULL, 0, NULL, err);
}

/* A malloc'd copy of a text column ("" for NULL); NULL when out of memory. */
static char *runs_text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return strdup(t ? (const char *)t : "");
}

/* A gm_run_info_t's text fields, in the order of gm_store_list_runs'
 * columns 1 to 8. */
#define RUNS_INFO_TEXTS(r)                                                                 \
    {&(r)->trace,  &(r)->trace_digest, &(r)->policy,  &(r)->params,                        \
     &(r)->device, &(r)->version,      &(r)->metrics, &(r)->created}

static void runs_info_release(gm_run_info_t *r)
{
    char **text[] = RUNS_INFO_TEXTS(r);
    for (int i = 0; i < 8; i++)
        free(*text[i]);
}

void gm_run_info_free_list(gm_run_info_t *list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        runs_info_release(&list[i]);
    free(list);
}

/* A row of gm_store_list_runs' query. */
static int runs_info_row(void *ctx, sqlite3_stmt *st, void *e, gm_error_t *err)
{
    (void)ctx;
    gm_run_info_t *ri = e;
    ri->id = sqlite3_column_int64(st, 0);
    char **text[] = RUNS_INFO_TEXTS(ri);
    int nomem = 0;
    for (int i = 0; i < 8; i++)
        nomem |= (*text[i] = runs_text(st, i + 1)) == NULL;
    sqlite3_int64 np = sqlite3_column_int64(st, 9);
    ri->npoints = np > 0 ? (uint64_t)np : 0;
    return nomem ? gm_error_set(err, GM_ENOMEM, "out of memory") : 0;
}

int gm_store_list_runs(gm_store_t *s, gm_run_info_t **out, size_t *n, gm_error_t *err)
{
    sqlite3_stmt *st;
    int rc = runs_prepare(s,
                          "SELECT id, trace_name, trace_digest, policy, params, device, "
                          "gmsim_version, metrics, created, "
                          "(SELECT count(*) FROM timelines WHERE run_id = runs.id) "
                          "FROM runs ORDER BY id",
                          &st, err);
    if (rc)
        return rc;
    gm_run_info_t *list = NULL;
    size_t count = 0;
    rc = gm__sql_rows(gm__store_db(s), gm_store_path(s), st, &list, &count, sizeof *list, 64,
                      runs_info_row, NULL, "cannot read the runs", err);
    if (rc) {
        gm_run_info_free_list(list, count);
        return rc;
    }
    *out = list;
    *n = count;
    return 0;
}

int gm_store_find_run(gm_store_t *s, const char *trace_digest, const char *policy,
                      const char *params, const char *device, const char *version, int64_t *id,
                      gm_error_t *err)
{
    sqlite3_stmt *st;
    int rc = runs_prepare(s,
                          "SELECT id FROM runs WHERE trace_digest = ?1 AND policy = ?2 AND "
                          "params = ?3 AND device = ?4 AND gmsim_version = ?5 ORDER BY id "
                          "LIMIT 1",
                          &st, err);
    if (rc)
        return rc;
    const char *key[] = {trace_digest, policy, params, device, version ? version : gm_version()};
    for (int i = 0; i < 5; i++)
        sqlite3_bind_text(st, i + 1, key[i] ? key[i] : "", -1, SQLITE_STATIC);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        if (id)
            *id = sqlite3_column_int64(st, 0);
        rc = 0;
    } else if (r == SQLITE_DONE) {
        rc = gm_error_set(err, GM_ENOTFOUND, "no run of policy '%s' on trace %s in '%s'",
                          policy ? policy : "", trace_digest ? trace_digest : "",
                          gm_store_path(s));
    } else {
        rc = runs_fail(s, err, r, "cannot look up a run");
    }
    sqlite3_finalize(st);
    return rc;
}

/* A row of gm_store_run_timeline's query. */
static int runs_point_row(void *ctx, sqlite3_stmt *st, void *e, gm_error_t *err)
{
    (void)ctx;
    (void)err;
    gm_timeline_point_t *p = e;
    uint64_t *f[] = {&p->event, &p->ts_ns, &p->requested, &p->allocated, &p->reserved};
    for (int i = 0; i < 5; i++) {
        sqlite3_int64 v = sqlite3_column_int64(st, i);
        *f[i] = v > 0 ? (uint64_t)v : 0;
    }
    return 0;
}

int gm_store_run_timeline(gm_store_t *s, int64_t id, gm_timeline_point_t **out, size_t *n,
                          gm_error_t *err)
{
    sqlite3_stmt *st;
    int rc = runs_prepare(s, "SELECT count(*) FROM runs WHERE id = ?", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int r = sqlite3_step(st);
    int found = r == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
    sqlite3_finalize(st);
    if (r != SQLITE_ROW)
        return runs_fail(s, err, r, "cannot look up a run");
    if (!found)
        return gm_error_set(err, GM_ENOTFOUND, "no run %lld in '%s'", (long long)id,
                            gm_store_path(s));
    rc = runs_prepare(s,
                      "SELECT event, ts_ns, requested, allocated, reserved FROM timelines "
                      "WHERE run_id = ? ORDER BY point",
                      &st, err);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    gm_timeline_point_t *pts = NULL;
    size_t count = 0;
    rc = gm__sql_rows(gm__store_db(s), gm_store_path(s), st, &pts, &count, sizeof *pts, 1024,
                      runs_point_row, NULL, "cannot read a timeline", err);
    if (rc) {
        free(pts);
        return rc;
    }
    *out = pts;
    *n = count;
    return 0;
}


/* ---- inserting a run ------------------------------------------------------ */

#define RUNS_TL_ROWS 64 /* timeline points per INSERT (7 parameters each) */

/* Bind timeline point k of run run_id at parameter `first` (7 values). */
static void runs_bind_point(sqlite3_stmt *st, int first, int64_t run_id, size_t k,
                             const gm_timeline_point_t *p)
{
    /* Byte and event figures stay below 2^63 (sizes are capped at 2^48). */
    int64_t v[] = {run_id,          (int64_t)k,           (int64_t)p->event, (int64_t)p->ts_ns,
                   (int64_t)p->requested, (int64_t)p->allocated, (int64_t)p->reserved};
    for (int i = 0; i < 7; i++)
        sqlite3_bind_int64(st, first + i, v[i]);
}

/* Insert a row of runs, text[] its trace digest, trace name, policy,
 * params, device, gmsim version, metrics and created, and its timeline
 * pts[0 .. n); the row's id in *id.  In the caller's transaction.  0, or
 * the store's error, as "cannot copy …" (copy) or "cannot save …". */
static int runs_insert(gm_store_t *s, const char *const text[8], const gm_timeline_point_t *pts,
                       size_t n, int copy, int64_t *id, gm_error_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = runs_prepare(s,
                          "INSERT INTO runs (trace_digest, trace_name, policy, params, device, "
                          "gmsim_version, metrics, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          &st, err);
    if (rc)
        return rc;
    for (int i = 0; i < 8; i++)
        sqlite3_bind_text(st, i + 1, text[i], -1, SQLITE_STATIC);
    int r = sqlite3_step(st);
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return runs_fail(s, err, r, copy ? "cannot copy a run" : "cannot save a run");
    const char *tl_fail = copy ? "cannot copy a timeline" : "cannot save a run's timeline";
    int64_t run_id = sqlite3_last_insert_rowid(gm__store_db(s));
    /* The timeline goes in RUNS_TL_ROWS points per statement (one step
     * instead of 64: a sweep's writer spends most of its time here), the
     * remainder one point at a time. */
    sqlite3_stmt *many = NULL;
    st = NULL;
    size_t k = 0;
    if (n >= RUNS_TL_ROWS) {
        char sql[64 + RUNS_TL_ROWS * 24];
        size_t len = (size_t)snprintf(sql, sizeof sql,
                                      "INSERT INTO timelines (run_id, point, event, ts_ns, "
                                      "requested, allocated, reserved) VALUES ");
        for (int i = 0; i < RUNS_TL_ROWS; i++)
            len += (size_t)snprintf(sql + len, sizeof sql - len, "%s(?,?,?,?,?,?,?)", i ? "," : "");
        if ((rc = runs_prepare(s, sql, &many, err)))
            return rc;
    }
    for (; k + RUNS_TL_ROWS <= n; k += RUNS_TL_ROWS) {
        sqlite3_reset(many);
        for (int i = 0; i < RUNS_TL_ROWS; i++)
            runs_bind_point(many, 7 * i + 1, run_id, k + (size_t)i, &pts[k + (size_t)i]);
        if ((r = sqlite3_step(many)) != SQLITE_DONE) {
            sqlite3_finalize(many);
            return runs_fail(s, err, r, tl_fail);
        }
    }
    sqlite3_finalize(many);
    if (k < n &&
        (rc = runs_prepare(s,
                           "INSERT INTO timelines (run_id, point, event, ts_ns, requested, "
                           "allocated, reserved) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           &st, err)))
        return rc;
    for (; k < n; k++) {
        sqlite3_reset(st);
        runs_bind_point(st, 1, run_id, k, &pts[k]);
        if ((r = sqlite3_step(st)) != SQLITE_DONE) {
            sqlite3_finalize(st);
            return runs_fail(s, err, r, tl_fail);
        }
    }
    sqlite3_finalize(st);
    *id = run_id;
    return 0;
}

/* Copy one run (row and timeline) from src to dst; in dst's transaction. */
static int runs_copy_one(gm_store_t *dst, gm_store_t *src, const gm_run_info_t *ri,
                         gm_error_t *err)
{
    gm_timeline_point_t *pts = NULL;
    size_t n = 0;
    int64_t id;
    int rc = gm_store_run_timeline(src, ri->id, &pts, &n, err);
    if (rc)
        return rc;
    const char *text[] = {ri->trace_digest, ri->trace,   ri->policy,  ri->params,
                          ri->device,       ri->version, ri->metrics, ri->created};
    rc = runs_insert(dst, text, pts, n, 1, &id, err);
    free(pts);
    return rc;
}

/* ---- shard records ------------------------------------------------------- */

/* Insert or update one shard record; in the caller's transaction or its
 * own statement. */
static int runs_put_shard(gm_store_t *s, const gm_shard_record_t *r, gm_error_t *err)
{
    sqlite3_stmt *st;
    int rc = runs_prepare(s,
                          "INSERT INTO shards (grid, shard, nshards, runs, done, updated) "
                          "VALUES (?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) "
                          "ON CONFLICT (grid, shard) DO UPDATE SET nshards = excluded.nshards, "
                          "runs = excluded.runs, done = max(done, excluded.done), "
                          "updated = excluded.updated",
                          &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, r->grid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, r->shard);
    sqlite3_bind_int64(st, 3, r->nshards);
    sqlite3_bind_int64(st, 4, (int64_t)r->runs);
    sqlite3_bind_int64(st, 5, (int64_t)r->done);
    int q = sqlite3_step(st);
    sqlite3_finalize(st);
    return q == SQLITE_DONE ? 0 : runs_fail(s, err, q, "cannot record a sweep shard");
}

int gm_store_put_shard(gm_store_t *s, const gm_shard_record_t *r, gm_error_t *err)
{
    if (!gm__store_writable(s))
        return gm_error_set(err, GM_EINVAL, "cannot record a sweep shard: '%s' is open read-only",
                            gm_store_path(s));
    return runs_put_shard(s, r, err);
}

int gm_store_list_shards(gm_store_t *s, gm_shard_record_t **out, size_t *n, gm_error_t *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(gm__store_db(s),
                                "SELECT grid, shard, nshards, runs, done FROM shards "
                                "ORDER BY grid, shard",
                                -1, &st, NULL);
    if (rc == SQLITE_ERROR &&
        strncmp(sqlite3_errmsg(gm__store_db(s)), "no such table", 13) == 0)
        return 0; /* a store from before schema version 3 */
    if (rc != SQLITE_OK)
        return runs_fail(s, err, rc, "cannot prepare a statement");
    gm_shard_record_t *list = NULL;
    size_t count = 0, cap = 0;
    int q;
    while ((q = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *grid = sqlite3_column_text(st, 0);
        int64_t v[4];
        int ok = grid != NULL && strlen((const char *)grid) == 32;
        for (int i = 0; i < 4; i++) {
            ok = ok && sqlite3_column_type(st, i + 1) == SQLITE_INTEGER;
            v[i] = sqlite3_column_int64(st, i + 1);
        }
        /* shard in 1..nshards, done ≤ runs */
        ok = ok && v[1] >= 1 && v[1] <= 1000000 && v[0] >= 1 && v[0] <= v[1] && v[2] >= 0 &&
             v[3] >= 0 && v[3] <= v[2];
        if (!ok) {
            rc = gm_error_set(err, GM_EFORMAT, "'%s': shard record %zu is not one a sweep writes",
                              gm_store_path(s), count + 1);
            break;
        }
        if (GM_VEC_RESERVE(list, cap, count + 1, 16)) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
        gm_shard_record_t *r = &list[count++];
        memcpy(r->grid, grid, 33);
        r->shard = (unsigned)v[0];
        r->nshards = (unsigned)v[1];
        r->runs = (uint64_t)v[2];
        r->done = (uint64_t)v[3];
    }
    if (rc == 0 && q != SQLITE_DONE)
        rc = runs_fail(s, err, q, "cannot read the shard records");
    sqlite3_finalize(st);
    if (rc) {
        free(list);
        return rc;
    }
    *out = list;
    *n = count;
    return 0;
}

int gm_store_copy_runs(gm_store_t *dst, gm_store_t *src, size_t *copied, size_t *skipped,
                       gm_error_t *err)
{
    int rc = gm__store_can_write(dst, err, "copy runs");
    if (rc)
        return rc;
    gm_run_info_t *list;
    size_t n, ncopied = 0, nskipped = 0;
    rc = gm_store_list_runs(src, &list, &n, err);
    if (rc)
        return rc;
    if ((rc = runs_begin(dst, err))) {
        gm_run_info_free_list(list, n);
        return rc;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const gm_run_info_t *ri = &list[i];
        rc = gm_store_find_run(dst, ri->trace_digest, ri->policy, ri->params, ri->device,
                               ri->version, NULL, err);
        if (rc == 0) {
            nskipped++;
        } else if (rc == GM_ENOTFOUND) {
            gm_error_clear(err);
            rc = runs_copy_one(dst, src, ri, err);
            ncopied++;
        }
    }
    gm_shard_record_t *shards = NULL;
    size_t nshards = 0;
    if (rc == 0)
        rc = gm_store_list_shards(src, &shards, &nshards, err);
    for (size_t i = 0; rc == 0 && i < nshards; i++)
        rc = runs_put_shard(dst, &shards[i], err);
    free(shards);
    if (rc == 0)
        rc = runs_commit(dst, err);
    if (rc)
        gm__sql_rollback(gm__store_db(dst), NULL, 0);
    gm_run_info_free_list(list, n);
    if (rc)
        return rc;
    if (copied)
        *copied = ncopied;
    if (skipped)
        *skipped = nskipped;
    return 0;
}

/* ---- saving a run --------------------------------------------------------- */


int gm_store_save_run(gm_store_t *s, const gm_run_record_t *run, int64_t *id, gm_error_t *err)
{
    int rc = gm__store_can_write(s, err, "save a run");
    if (rc)
        return rc;
    const char *json[] = {run->params, run->device, run->metrics};
    for (size_t i = 0; i < 3; i++)
        if (json[i] == NULL || !gm__store_json_valid(json[i]))
            return gm_error_set(err, GM_EINVAL, "cannot save a run of '%s': %s is not JSON",
                                run->policy, i == 0 ? "params" : i == 1 ? "device" : "metrics");
    if (run->found)
        *run->found = 0;
    rc = runs_begin(s, err);
    if (rc)
        return rc;
    /* A run's key is unique (the runs_key index): a run stored already,
     * by this process or another writer, is kept as it is.  The lookup is
     * inside the write transaction, so two writers cannot both miss it. */
    int64_t old_id = 0;
    rc = gm_store_find_run(s, run->trace_digest, run->policy, run->params, run->device, NULL,
                           &old_id, err);
    if (rc == 0) {
        if (run->shard && (rc = gm_store_put_shard(s, run->shard, err)))
            goto fail;
        if ((rc = runs_commit(s, err)))
            goto fail;
        if (run->found)
            *run->found = 1;
        if (id)
            *id = old_id;
        return 0;
    }
    if (rc != GM_ENOTFOUND)
        goto fail;
    gm_error_clear(err);
    const char *text[] = {run->trace_digest, run->trace,   run->policy,  run->params,
                          run->device,       gm_version(), run->metrics, gm__store_created(s)};
    int64_t run_id;
    if ((rc = runs_insert(s, text, run->timeline, run->npoints, 0, &run_id, err)))
        goto fail;
    if (run->shard && (rc = gm_store_put_shard(s, run->shard, err)))
        goto fail;
    if ((rc = runs_commit(s, err)))
        goto fail;
    if (id)
        *id = run_id;
    return 0;
fail:
    gm__sql_rollback(gm__store_db(s), NULL, 0);
    return rc;
}
