/*
 * store/import.c — the import target (gmsim/import.h): the traces one
 * input becomes, written as one unit.
 *
 * The target opens one write transaction on the store's connection when it
 * is created (BEGIN IMMEDIATE; a SAVEPOINT when the caller already has a
 * transaction open) and every trace the importer begins is written by a
 * gm_writer that joins it (store/write.c: a writer begun inside a
 * transaction neither begins nor commits its own).  gm_import_commit
 * commits them all at once; gm_import_abort — or a writer failing, which
 * rolls the transaction back itself — leaves the store exactly as it was,
 * including traces that GM_WRITE_REPLACE would have replaced.  A process
 * killed mid-import leaves nothing either: SQLite never commits half a
 * transaction.
 *
 * Names: "<base>" for the first trace begun with a NULL suffix,
 * "<base>.<suffix>" otherwise; a further NULL suffix gets its position
 * ("<base>.2" for the second trace).  Names are checked by the writer
 * (GM_EEXIST for a taken one without GM_WRITE_REPLACE), and two traces of
 * one import may not share a name.
 */
#include "gmsim/import.h"
#include "gmsim/json.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"
#include "store/store.h"
#include "base/vec.h"

struct gm_import_target {
    gm_store_t *s;
    char *base;
    unsigned flags;
    int savepoint;   /* nested in the caller's transaction */
    int open;        /* the transaction is ours to end */
    gm_writer_t *w;  /* the trace being written, or NULL */
    char *w_name;
    int base_used;   /* a trace named "<base>" was begun */
    int64_t next_id; /* the next trace's row id (the last one's + 1), or 0 */
    int empty;       /* the store had no trace when the import began */
    char **names;    /* finished traces */
    size_t n, cap;
    char **set;      /* the same names hashed (open addressing), for the twice check */
    size_t set_cap;  /* a power of two above 2n, or 0 */
    gm_import_options_t opts;
    char *file;      /* opts.file's copy */
    char **attrs;    /* opts.attrs' copies */
};

static void import_free_attrs(gm_import_target_t *t)
{
    for (size_t i = 0; t->attrs != NULL && i < t->opts.nattrs; i++)
        free(t->attrs[i]);
    free(t->attrs);
    t->attrs = NULL;
}

static void import_free(gm_import_target_t *t)
{
    free(t->set);
    import_free_attrs(t);
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    free(t->w_name);
    free(t->base);
    free(t->file);
    free(t);
}

/* End the transaction: commit (1) or roll back (0).  Rolling back is
 * harmless when a failed writer already did it. */
static int import_end_txn(gm_import_target_t *t, int commit, gm_error_t *err)
{
    sqlite3 *db = gm__store_db(t->s);
    if (!t->open)
        return 0;
    t->open = 0;
    if (commit) {
        if (sqlite3_get_autocommit(db))
            return gm_error_set(err, GM_ESTATE, "'%s': the import's transaction ended early",
                                gm_store_path(t->s));
        return gm__sql_commit(db, gm_store_path(t->s), "gm_import", t->savepoint, "the import",
                              err);
    }
    gm__sql_rollback(db, "gm_import", t->savepoint);
    return 0;
}

int gm__store_import_begin(gm_store_t *s, int *began, gm_error_t *err)
{
    sqlite3 *db = gm__store_db(s);
    *began = 0;
    if (!gm__store_writable(s) || !sqlite3_get_autocommit(db))
        return 0;
    int rc = gm__sql_begin(db, gm_store_path(s), NULL, "the import", NULL, err);
    *began = rc == 0;
    return rc;
}

int gm__store_import_end(gm_store_t *s, int commit, gm_error_t *err)
{
    sqlite3 *db = gm__store_db(s);
    if (commit)
        return gm__sql_commit(db, gm_store_path(s), NULL, 0, "the import", err);
    gm__sql_rollback(db, NULL, 0);
    return 0;
}

int gm_import_target_create(gm_store_t *s, const char *base, unsigned flags,
                            gm_import_target_t **out, gm_error_t *err)
{
    *out = NULL;
    if (base == NULL || *base == '\0')
        return gm_error_set(err, GM_EINVAL, "trace name is empty");
    int rc = gm__store_can_write(s, err, "import '%s'", base);
    if (rc)
        return rc;
    gm_import_target_t *t = calloc(1, sizeof *t);
    if (t == NULL || (t->base = strdup(base)) == NULL) {
        free(t);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    t->s = s;
    t->flags = flags;
    rc = gm__sql_begin(gm__store_db(s), gm_store_path(s), "gm_import", "the import",
                           &t->savepoint, err);
    if (rc) {
        import_free(t);
        return rc;
    }
    t->open = 1;
    /* An empty store (in the transaction, so nobody else adds a trace
     * meanwhile) has no trace of any name but the ones this import
     * writes, which the import's own set knows: its writers skip the
     * lookup of their name. */
    sqlite3_stmt *st;
    sqlite3 *db = gm__store_db(s);
    if (sqlite3_prepare_v2(db, "SELECT NOT EXISTS (SELECT 1 FROM traces)", -1, &st, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            t->empty = sqlite3_column_int(st, 0) == 1;
        sqlite3_finalize(st);
    }
    *out = t;
    return 0;
}

void gm_import_set_options(gm_import_target_t *t, const gm_import_options_t *opts)
{
    free(t->file);
    t->file = NULL;
    import_free_attrs(t);
    if (opts)
        t->opts = *opts;
    else
        memset(&t->opts, 0, sizeof t->opts);
    /* Out of memory only loses the "file" attribute. */
    if (t->opts.file != NULL)
        t->file = strdup(t->opts.file);
    t->opts.file = t->file;
    /* Out of memory here fails gm_import_end (attrs NULL, nattrs > 0). */
    if (t->opts.nattrs > 0 && (t->attrs = calloc(t->opts.nattrs, sizeof *t->attrs)) != NULL)
        for (size_t i = 0; i < t->opts.nattrs; i++)
            if (t->opts.attrs[i] == NULL || (t->attrs[i] = strdup(t->opts.attrs[i])) == NULL) {
                import_free_attrs(t);
                break;
            }
    t->opts.attrs = (const char *const *)t->attrs;
}

/* Set the --attr attributes on w (gm_import_options_t.attrs). */
static int import_user_attrs(gm_import_target_t *t, gm_writer_t *w, gm_error_t *err)
{
    if (t->opts.nattrs > 0 && t->attrs == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->opts.nattrs; i++) {
        const char *kv = t->attrs[i], *eq = strchr(kv, '=');
        if (eq == NULL || eq == kv)
            return gm_error_set(err, GM_EINVAL, "invalid attribute '%s' (KEY=VALUE)", kv);
        char *key = strndup(kv, (size_t)(eq - kv));
        if (key == NULL)
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        gm_jv_t *v = NULL;
        gm_error_t perr;
        int rc;
        if (gm_json_parse(eq + 1, strlen(eq + 1), &v, &perr) == 0)
            rc = gm_writer_attr_json(w, key, eq + 1, err);
        else
            rc = gm_writer_attr_str(w, key, eq + 1, err);
        gm_jv_free(v);
        free(key);
        if (rc)
            return rc;
    }
    return 0;
}

const gm_import_options_t *gm_import_get_options(const gm_import_target_t *t)
{
    return &t->opts;
}

/* FNV-1a of a name. */
static size_t import_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

/* The slot of name in the set: where it is, or the empty one it would go
 * to.  The set is never full (set_cap > 2n). */
static size_t import_slot(const gm_import_target_t *t, const char *name)
{
    size_t i = import_hash(name) & (t->set_cap - 1);
    while (t->set[i] != NULL && strcmp(t->set[i], name) != 0)
        i = (i + 1) & (t->set_cap - 1);
    return i;
}

/* Whether an earlier trace of this import has that name: constant time,
 * so that an input of 100,000 traces does not compare 10^10 names. */
static int import_seen(const gm_import_target_t *t, const char *name)
{
    return t->set_cap != 0 && t->set[import_slot(t, name)] != NULL;
}

/* Add names[n - 1] to the set; GM_ENOMEM when it cannot grow. */
static int import_remember(gm_import_target_t *t)
{
    if (2 * t->n >= t->set_cap) {
        size_t cap = t->set_cap ? 2 * t->set_cap : 16;
        char **set = calloc(cap, sizeof *set);
        if (set == NULL)
            return GM_ENOMEM;
        free(t->set);
        t->set = set;
        t->set_cap = cap;
        for (size_t i = 0; i + 1 < t->n; i++)
            t->set[import_slot(t, t->names[i])] = t->names[i];
    }
    t->set[import_slot(t, t->names[t->n - 1])] = t->names[t->n - 1];
    return 0;
}

/* The name of the next trace (malloc'd), or NULL when out of memory. */
static char *import_name(gm_import_target_t *t, const char *suffix)
{
    char num[24];
    if (suffix == NULL && !t->base_used) {
        t->base_used = 1;
        return strdup(t->base);
    }
    if (suffix == NULL) {
        snprintf(num, sizeof num, "%zu", t->n + 1);
        suffix = num;
    }
    size_t a = strlen(t->base), b = strlen(suffix);
    char *name = malloc(a + b + 2);
    if (name) {
        memcpy(name, t->base, a);
        name[a] = '.';
        memcpy(name + a + 1, suffix, b + 1);
    }
    return name;
}

int gm_import_begin(gm_import_target_t *t, const char *suffix, gm_writer_t **w, gm_error_t *err)
{
    *w = NULL;
    if (t->w != NULL)
        return gm_error_set(err, GM_ESTATE, "cannot begin a trace: trace '%s' is still open",
                            t->w_name);
    /* A failed writer rolled the transaction back: nothing may follow. */
    if (!t->open || sqlite3_get_autocommit(gm__store_db(t->s)))
        return gm_error_set(err, GM_ESTATE, "cannot begin a trace: the import has failed");
    if (suffix != NULL && *suffix == '\0')
        return gm_error_set(err, GM_EINVAL, "empty trace name suffix");
    char *name = import_name(t, suffix);
    if (name == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    if (import_seen(t, name)) {
        if (t->file != NULL)
            gm_error_set(err, GM_EEXIST, "'%s': trace '%s' is imported twice", t->file, name);
        else
            gm_error_set(err, GM_EEXIST, "trace '%s' is imported twice", name);
        free(name);
        return GM_EEXIST;
    }
    /* Each trace takes the row id after the previous one's: nothing else
     * writes in the import's transaction, so that is what the writer's
     * lookup of the ids in use would find. */
    int rc = gm__writer_begin_in(t->s, name, t->flags, t->next_id, t->empty, &t->w, err);
    if (rc) {
        free(name);
        t->w = NULL;
        return rc;
    }
    t->w_name = name;
    if (t->file != NULL && (rc = gm_writer_attr_str(t->w, "file", t->file, err)))
        return rc; /* the open trace is aborted with the target */
    *w = t->w;
    return 0;
}

int gm_import_end(gm_import_target_t *t, gm_error_t *err)
{
    if (t->w == NULL)
        return gm_error_set(err, GM_ESTATE, "no trace is open");
    if (GM_VEC_RESERVE(t->names, t->cap, t->n + 1, 4)) {
        gm_writer_abort(t->w);
        t->w = NULL;
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    gm_writer_t *w = t->w;
    t->w = NULL;
    int rc = import_user_attrs(t, w, err);
    if (rc) {
        gm_writer_abort(w);
        free(t->w_name);
        t->w_name = NULL;
        return rc;
    }
    gm_store_t *ws;
    int64_t id = 0;
    const char *wname;
    if (gm__writer_target(w, &ws, &id, &wname) != 0)
        id = 0;
    t->next_id = 0;
    rc = gm_writer_finish(w, err);
    if (rc) {
        free(t->w_name);
        t->w_name = NULL;
        return rc;
    }
    if (id > 0 && id < INT64_MAX)
        t->next_id = id + 1;
    t->names[t->n++] = t->w_name;
    t->w_name = NULL;
    if (import_remember(t) != 0)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    return 0;
}

size_t gm_import_count(const gm_import_target_t *t) { return t->n; }

const char *gm_import_name(const gm_import_target_t *t, size_t i)
{
    return i < t->n ? t->names[i] : NULL;
}

int gm_import_commit(gm_import_target_t *t, gm_error_t *err)
{
    int rc = 0;
    if (t->w != NULL) {
        rc = gm_error_set(err, GM_ESTATE, "trace '%s' was not finished", t->w_name);
        gm_writer_abort(t->w);
        t->w = NULL;
    }
    if (rc == 0)
        rc = import_end_txn(t, 1, err);
    else
        import_end_txn(t, 0, NULL);
    import_free(t);
    return rc;
}

void gm_import_abort(gm_import_target_t *t)
{
    if (t == NULL)
        return;
    if (t->w != NULL) {
        gm_writer_abort(t->w);
        t->w = NULL;
    }
    import_end_txn(t, 0, NULL);
    import_free(t);
}
