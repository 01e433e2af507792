/*
 * store/traces.c — trace summaries, the rows of the traces table: listed,
 * found by name, deleted with their rows (API in gmsim/store.h; the
 * store's files in store/store_int.h).  A summary row is checked as it is
 * read: it is shown and trusted as it is.
 */
#include "gmsim/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "store/store.h"
#include "store/store_int.h"
#include "base/vec.h"

/* ---- trace summaries ----------------------------------------------------- */

void gm_trace_info_release(gm_trace_info_t *info)
{
    if (info == NULL)
        return;
    free(info->name);
    free(info->attrs);
    memset(info, 0, sizeof *info);
}

void gm_trace_info_free_list(gm_trace_info_t *list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        gm_trace_info_release(&list[i]);
    free(list);
}

char *gm__store_strdup_col(sqlite3_stmt *st, int col, const char *dflt)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return strdup(t ? (const char *)t : dflt);
}

/*
 * Fill info from a row of STORE_INFO_COLUMNS.  A row gmsim cannot have
 * written (a count that is not an integer >= 0, attrs that are not a JSON
 * object) is GM_ECORRUPT naming the file, trace and column: the summary
 * is shown and trusted as it is, so it is checked as it is read.  0,
 * GM_ECORRUPT or GM_ENOMEM, with err filled; info is released on failure.
 */
static int store_info_row(const gm_store_t *s, sqlite3_stmt *st, gm_trace_info_t *info,
                          gm_error_t *err)
{
    memset(info, 0, sizeof *info);
    info->id = sqlite3_column_int64(st, 0);
    info->name = gm__store_strdup_col(st, 1, "");
    info->attrs = gm__store_strdup_col(st, 12, "{}");
    if (info->name == NULL || info->attrs == NULL) {
        gm_trace_info_release(info);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    uint64_t *const counts[] = {&info->events, &info->allocs,      &info->frees,
                                &info->marks,  &info->segs,        &info->load,
                                &info->live_at_end, &info->chunks, &info->bytes};
    for (int k = 0; k < (int)(sizeof counts / sizeof counts[0]); k++) {
        int64_t v = sqlite3_column_int64(st, 2 + k);
        int type = sqlite3_column_type(st, 2 + k);
        if (type != SQLITE_INTEGER || v < 0) {
            static const char *const types[] = {"?", "an integer", "a real", "text", "a blob",
                                                "null"};
            const char *column = sqlite3_column_name(st, 2 + k);
            if (type == SQLITE_INTEGER)
                gm_error_set(err, GM_ECORRUPT, "'%s': trace '%s': %s is %lld, not a count",
                             s->path, info->name, column, (long long)v);
            else
                gm_error_set(err, GM_ECORRUPT, "'%s': trace '%s': %s is %s, not a count",
                             s->path, info->name, column, types[type >= 1 && type <= 5 ? type : 0]);
            gm_trace_info_release(info);
            return GM_ECORRUPT;
        }
        *counts[k] = (uint64_t)v;
    }
    const unsigned char *d = sqlite3_column_text(st, 11);
    snprintf(info->digest, sizeof info->digest, "%s", d ? (const char *)d : "");
    if (*store_json_ws(info->attrs) != '{' || !store_json_valid(info->attrs, GM_JSON_MAX_DEPTH)) {
        gm_error_set(err, GM_ECORRUPT, "'%s': trace '%s': attrs is not a JSON object", s->path,
                     info->name);
        gm_trace_info_release(info);
        return GM_ECORRUPT;
    }
    int64_t dropped = gm_attr_int(info->attrs, "dropped_zero_size");
    info->dropped = dropped > 0 ? (uint64_t)dropped : 0;
    return 0;
}

/* A row of gm_store_list's query (ctx: the store). */
static int store_list_row(void *ctx, sqlite3_stmt *st, void *e, gm_error_t *err)
{
    return store_info_row(ctx, st, e, err);
}

int gm_store_list(gm_store_t *s, gm_trace_info_t **out, size_t *n, gm_error_t *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int rc = store_prepare(s, "SELECT " STORE_INFO_COLUMNS " FROM traces ORDER BY name", &st, err);
    if (rc)
        return rc;
    gm_trace_info_t *list = NULL;
    size_t cnt = 0;
    rc = gm__sql_rows(s->db, s->path, st, &list, &cnt, sizeof *list, 16, store_list_row, s,
                      "cannot list traces", err);
    if (rc) {
        gm_trace_info_free_list(list, cnt);
        return rc;
    }
    *out = list;
    *n = cnt;
    return 0;
}

int gm_store_find(gm_store_t *s, const char *name, gm_trace_info_t *out, gm_error_t *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    int rc = gm__store_query(s, STORE_Q_FIND, &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        rc = store_info_row(s, st, out, err);
    } else if (r == SQLITE_DONE) {
        rc = gm_error_set(err, GM_ENOTFOUND, "no trace '%s' in '%s'", name, s->path);
    } else {
        rc = store_fail(s, err, r, "cannot read traces");
    }
    store_query_done(st);
    return rc;
}

/* Delete every row of trace `id` (inside the caller's transaction). */
int gm__store_delete_id(gm_store_t *s, int64_t id, gm_error_t *err)
{
    static const char *const sql[] = {
        "DELETE FROM chunks WHERE trace_id = ?1", "DELETE FROM streams WHERE trace_id = ?1",
        "DELETE FROM tags WHERE trace_id = ?1",   "DELETE FROM frames WHERE trace_id = ?1",
        "DELETE FROM layouts WHERE trace_id = ?1",
        "DELETE FROM traces WHERE id = ?1",
    };
    for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
        sqlite3_stmt *st;
        int rc = store_prepare(s, sql[i], &st, err);
        if (rc)
            return rc;
        sqlite3_bind_int64(st, 1, id);
        int r = sqlite3_step(st);
        sqlite3_finalize(st);
        if (r != SQLITE_DONE)
            return store_fail(s, err, r, "cannot delete a trace");
    }
    return 0;
}

int gm_store_delete(gm_store_t *s, const char *name, gm_error_t *err)
{
    int rc = gm__store_can_write(s, err, "delete trace '%s'", name);
    if (rc == 0)
        rc = store_begin(s, err);
    if (rc)
        return rc;
    int64_t id;
    rc = gm__store_query_int(s, "SELECT id FROM traces WHERE name = ?1", name, &id, err);
    if (rc == 0)
        rc = gm_error_set(err, GM_ENOTFOUND, "no trace '%s' in '%s'", name, s->path);
    if (rc < 0)
        goto fail;
    if ((rc = gm__store_delete_id(s, id, err)) || (rc = store_commit(s, err)))
        goto fail;
    return 0;
fail:
    store_rollback(s);
    return rc;
}
