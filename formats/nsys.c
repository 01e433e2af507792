/*
 * formats/nsys.c — Nsight Systems SQLite exports (`nsys export --type
 * sqlite` of a report captured with --cuda-memory-usage=true).
 *
 * Read: table CUDA_GPU_MEMORY_USAGE_EVENTS — start (ns), globalPid,
 * deviceId, address, bytes, memKind, memoryOperationType and, in newer
 * exports, streamId (older ones have none: every event is on stream 0).
 * Other columns (contextId, pc, name, correlationId, pool columns) are
 * dropped.  The enum tables give meaning to the codes:
 * ENUM_CUDA_DEV_MEM_EVENT_OPER (an operation whose name says
 * DEALLOCATION frees, ALLOCATION allocates; other operations are dropped
 * and counted) and ENUM_CUDA_MEM_KIND (names CUDA_MEMOPR_MEMORY_KIND_X, or
 * labels "X"); where a table is absent the documented numbering is used
 * (operations 0 allocation, 1 deallocation; kinds 0 pageable, 1 pinned,
 * 2 device, 3 array, 4 managed, 5 device static, 6 managed static, 7
 * unknown).  Only the memory kinds of gm_import_options_t.mem_kinds are
 * kept (device memory alone by default).
 *
 * Traces: one per (process, device) — process = globalPid / 0x1000000 %
 * 0x1000000 — named "<base>.pidP.devD" when there are several, "<base>"
 * when one.  Events in (start, rowid) order; allocation ordinals in that
 * order; frees matched by address within the trace.  As for the other
 * address-based logs (formats/textin.h), a free of an address never seen
 * before is an allocation alive when the capture began: those come first,
 * flagged GM_EVENT_PREEXISTING; an allocation at a live address, or a
 * second free, is an error naming the row (its rowid).  Attributes:
 * "source": "nsys", "pid", "device", "mem_kinds" (the names kept),
 * "preexisting", "other_operations" (events of other operations dropped),
 * "other_kinds_dropped" (events of the memory kinds not kept).  A
 * (process, device) with events of dropped kinds only gives no trace.
 *
 * The database is outside data: it is opened read-only and immutable
 * (no journal, no locks), with SQLite's defensive mode on and untrusted
 * schema objects refused; the table must be a table (not a view); NULL or
 * non-integer values in a used column are an error naming the row, and so
 * is a deviceId outside 0..65535 (the first kept row of its group).
 */
#include "gmsim/formats.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "gmsim/attrs.h"
#include "gmsim/text.h"
#include "formats/textin.h"
#include "store/sql.h"
#include "base/vec.h"

#define NSYS_TABLE "CUDA_GPU_MEMORY_USAGE_EVENTS"
#define NSYS_KINDS 8
#define NSYS_DEFAULT_KINDS (1u << 2) /* device */

/* Canonical kinds, in the documented numbering; the suffix of each in the
 * enum table's names (longest suffixes are tried first). */
static const char *const nsys_kind_names[NSYS_KINDS] = {
    "pageable", "pinned", "device", "array", "managed", "device_static", "managed_static",
    "unknown"};

int gm_nsys_parse_mem_kinds(const char *list, uint32_t *mask, gm_error_t *err)
{
    uint32_t m = 0;
    const char *p = list;
    if (list == NULL || *list == '\0')
        return gm_error_set(err, GM_EINVAL, "empty list of memory kinds");
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char word[32];
        if (n == 0 || n >= sizeof word)
            return gm_error_set(err, GM_EINVAL, "invalid memory kind '%.*s'",
                                (int)(n < 40 ? n : 40), p);
        for (size_t i = 0; i < n; i++)
            word[i] = p[i] == '-' || p[i] == ' ' ? '_' : p[i];
        word[n] = '\0';
        int k = -1;
        if (strcasecmp(word, "all") == 0) {
            m |= (1u << NSYS_KINDS) - 1;
            k = NSYS_KINDS;
        } else if (n == 1 && word[0] >= '0' && word[0] < '0' + NSYS_KINDS) {
            k = word[0] - '0';
        } else {
            for (int i = 0; i < NSYS_KINDS; i++)
                if (strcasecmp(word, nsys_kind_names[i]) == 0)
                    k = i;
        }
        if (k < 0)
            return gm_error_set(err, GM_EINVAL,
                                "unknown memory kind '%s' (known: pageable, pinned, device, "
                                "array, managed, device_static, managed_static, unknown, all)",
                                word);
        if (k < NSYS_KINDS)
            m |= 1u << k;
        p += n;
        if (*p == ',')
            p++;
    }
    *mask = m;
    return 0;
}

/* ---- the database -------------------------------------------------------- */

typedef struct nsys {
    sqlite3 *db;
    const char *filename;
    int has_stream;
    uint32_t mask;
    char kinds_sql[256];   /* "memKind IN (...)" */
    char kinds_json[256];  /* ["device", ...] */
    int64_t alloc_op[8], free_op[8];
    size_t nalloc_op, nfree_op;
    char ops_sql[256];     /* "memoryOperationType IN (...)" */
} nsys_t;

static int nsys_db_error(const nsys_t *n, gm_error_t *err, const char *what)
{
    return gm__sql_input_fail(n->db, n->filename, what, err);
}

/* 1 if a table (not a view) of that name exists, 0 if not, or negative. */
static int nsys_has_table(nsys_t *n, const char *name, gm_error_t *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db,
                           "SELECT type FROM sqlite_master WHERE name = ?1 COLLATE NOCASE", -1,
                           &st, NULL) != SQLITE_OK)
        return nsys_db_error(n, err, "not a readable SQLite database");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int found = 0, r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *type = sqlite3_column_text(st, 0);
        if (type && strcmp((const char *)type, "table") == 0)
            found = 1;
        else if (type && strcmp((const char *)type, "view") == 0)
            found = -2;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return nsys_db_error(n, err, "not a readable SQLite database");
    if (found == -2)
        return gm_error_set(err, GM_EFORMAT, "'%s': %s is a view, not a table", n->filename,
                            name);
    return found;
}

/* 1 if table has the column, 0 if not, or negative. */
static int nsys_has_column(nsys_t *n, const char *table, const char *column, gm_error_t *err)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
        return nsys_db_error(n, err, "cannot read the table's columns");
    int found = 0, r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(st, 0);
        if (name && strcasecmp((const char *)name, column) == 0)
            found = 1;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return nsys_db_error(n, err, "cannot read the table's columns");
    return found;
}

/* Upper-case, spaces and dashes to '_'. */
static void nsys_norm(const char *s, char *out, size_t len)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < len; i++) {
        char c = s[i];
        out[i] = c == ' ' || c == '-' ? '_' : c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
    }
    out[i] = '\0';
}

/* The canonical kind of an enum entry's name or label, or -1. */
static int nsys_kind_of(const char *name)
{
    char up[128];
    nsys_norm(name, up, sizeof up);
    static const int order[] = {5, 6, 0, 1, 3, 4, 7, 2}; /* longest suffixes first */
    size_t n = strlen(up);
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        char suf[32];
        nsys_norm(nsys_kind_names[order[i]], suf, sizeof suf);
        size_t k = strlen(suf);
        if (n >= k && strcmp(up + n - k, suf) == 0 && (n == k || up[n - k - 1] == '_'))
            return order[i];
    }
    return -1;
}

/* Append ",v" (or "v") to a SQL list. */
static void nsys_list_add(char *buf, size_t len, int64_t v)
{
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%" PRId64, used && buf[used - 1] != '(' ? "," : "", v);
}

/* Read an enum table: for each row call back with its id and its name (or
 * label).  0 when absent (*present 0), negative on error. */
typedef void (*nsys_enum_fn)(nsys_t *n, int64_t id, const char *name);

static int nsys_read_enum(nsys_t *n, const char *table, nsys_enum_fn fn, int *present,
                          gm_error_t *err)
{
    *present = 0;
    int rc = nsys_has_table(n, table, err);
    if (rc <= 0)
        return rc;
    int has_name = nsys_has_column(n, table, "name", err);
    if (has_name < 0)
        return has_name;
    int has_label = nsys_has_column(n, table, "label", err);
    if (has_label < 0)
        return has_label;
    if (!has_name && !has_label)
        return 0; /* unusable: the documented numbering applies */
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT id, %s FROM %s", has_name ? "name" : "label", table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
        return nsys_db_error(n, err, "cannot read an enum table");
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
            continue;
        const unsigned char *name = sqlite3_column_text(st, 1);
        if (name)
            fn(n, sqlite3_column_int64(st, 0), (const char *)name);
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return nsys_db_error(n, err, "cannot read an enum table");
    *present = 1;
    return 0;
}

static void nsys_kind_entry(nsys_t *n, int64_t id, const char *name)
{
    int k = nsys_kind_of(name);
    if (k >= 0 && (n->mask & (1u << k)))
        nsys_list_add(n->kinds_sql, sizeof n->kinds_sql, id);
}

static void nsys_oper_entry(nsys_t *n, int64_t id, const char *name)
{
    char up[128];
    nsys_norm(name, up, sizeof up);
    if (strstr(up, "DEALLOC") != NULL || strstr(up, "FREE") != NULL) {
        if (n->nfree_op < 8)
            n->free_op[n->nfree_op++] = id;
    } else if (strstr(up, "ALLOC") != NULL) {
        if (n->nalloc_op < 8)
            n->alloc_op[n->nalloc_op++] = id;
    }
}

/* Check the table, read the enums, build the filters. */
static int nsys_prepare(nsys_t *n, gm_error_t *err)
{
    int rc = nsys_has_table(n, NSYS_TABLE, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return gm_error_set(err, GM_EFORMAT,
                            "'%s': not an Nsight Systems export with memory usage: no table "
                            NSYS_TABLE " (capture with --cuda-memory-usage=true)",
                            n->filename);
    static const char *const cols[] = {"start",  "globalPid", "deviceId",           "address",
                                       "bytes", "memKind",   "memoryOperationType"};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        if ((rc = nsys_has_column(n, NSYS_TABLE, cols[i], err)) < 0)
            return rc;
        if (rc == 0)
            return gm_error_set(err, GM_EFORMAT, "'%s': table " NSYS_TABLE " has no column '%s'",
                                n->filename, cols[i]);
    }
    if ((rc = nsys_has_column(n, NSYS_TABLE, "streamId", err)) < 0)
        return rc;
    n->has_stream = rc;

    int present;
    strcpy(n->kinds_sql, "memKind IN (");
    if ((rc = nsys_read_enum(n, "ENUM_CUDA_MEM_KIND", nsys_kind_entry, &present, err)))
        return rc;
    if (!present)
        for (int k = 0; k < NSYS_KINDS; k++)
            if (n->mask & (1u << k))
                nsys_list_add(n->kinds_sql, sizeof n->kinds_sql, k);
    strcat(n->kinds_sql, ")");

    if ((rc = nsys_read_enum(n, "ENUM_CUDA_DEV_MEM_EVENT_OPER", nsys_oper_entry, &present, err)))
        return rc;
    if (!present || n->nalloc_op == 0 || n->nfree_op == 0) {
        n->nalloc_op = n->nfree_op = 1;
        n->alloc_op[0] = 0;
        n->free_op[0] = 1;
    }
    strcpy(n->ops_sql, "memoryOperationType IN (");
    for (size_t i = 0; i < n->nalloc_op; i++)
        nsys_list_add(n->ops_sql, sizeof n->ops_sql, n->alloc_op[i]);
    for (size_t i = 0; i < n->nfree_op; i++)
        nsys_list_add(n->ops_sql, sizeof n->ops_sql, n->free_op[i]);
    strcat(n->ops_sql, ")");

    size_t used = (size_t)snprintf(n->kinds_json, sizeof n->kinds_json, "[");
    for (int k = 0; k < NSYS_KINDS; k++)
        if (n->mask & (1u << k))
            used += (size_t)snprintf(n->kinds_json + used, sizeof n->kinds_json - used, "%s\"%s\"",
                                     used > 1 ? "," : "", nsys_kind_names[k]);
    snprintf(n->kinds_json + used, sizeof n->kinds_json - used, "]");
    return 0;
}

static int nsys_is_free(const nsys_t *n, int64_t op)
{
    for (size_t i = 0; i < n->nfree_op; i++)
        if (n->free_op[i] == op)
            return 1;
    return 0;
}

/* ---- one trace per (process, device) ------------------------------------------ */

typedef struct nsys_group {
    int64_t gpid, dev;
    int64_t other_ops, other_kinds; /* events dropped (the attributes) */
} nsys_group_t;

/* The parts of a globalPid (nsys's serialized global id): bits 63-56 the
 * hardware (host) id, 55-48 the VM id, 47-24 the process id. */
#define NSYS_PID(gpid) ((int64_t)(((uint64_t)(gpid) >> 24) & 0xffffff))
#define NSYS_HOST(gpid) ((uint64_t)(gpid) >> 48)

typedef struct nsys_pre {
    uint64_t addr, size, stream;
} nsys_pre_t;

/* A row of the events query, with the group it belongs to. */
typedef struct nsys_row {
    int64_t rowid, gpid, dev;
    uint64_t ts, addr, size, stream;
    int is_free;
} nsys_row_t;

/*
 * A cursor over every kept event of the table in (globalPid, deviceId,
 * start, rowid) order: one sorted pass serves all the groups in turn (a
 * query per group would scan the whole table once per process, which is
 * quadratic in processes).  `have` is 1 while `row` holds the next row
 * not yet taken, 0 at the end.
 */
typedef struct nsys_cursor {
    sqlite3_stmt *st;
    nsys_row_t row;
    int have;
} nsys_cursor_t;

static int nsys_next(nsys_t *n, sqlite3_stmt *st, nsys_row_t *row, gm_error_t *err);

/*
 * The rows of one group as the first pass took them, for the second pass:
 * a group of up to NSYS_KEEP_ROWS rows (every group of an export of many
 * small processes) is written from here, a larger one from the second
 * cursor, opened when the first such group comes (each cursor sorts the
 * whole table once).  `whole` is 1 when v holds all of the group's rows.
 */
#define NSYS_KEEP_ROWS 4096

typedef struct nsys_rows {
    nsys_row_t *v;
    size_t n, cap;
    int whole;
} nsys_rows_t;

/* Prepare the cursor and read its first row; 0 or negative. */
static int nsys_cursor_open(nsys_t *n, nsys_cursor_t *c, gm_error_t *err)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT rowid, start, address, bytes, memoryOperationType, %s, globalPid, deviceId "
             "FROM " NSYS_TABLE " WHERE %s AND %s ORDER BY globalPid, deviceId, start, rowid",
             n->has_stream ? "streamId" : "0", n->kinds_sql, n->ops_sql);
    c->have = 0;
    if (sqlite3_prepare_v2(n->db, sql, -1, &c->st, NULL) != SQLITE_OK)
        return nsys_db_error(n, err, "cannot query " NSYS_TABLE);
    int rc = nsys_next(n, c->st, &c->row, err);
    if (rc < 0)
        return rc;
    c->have = rc;
    return 0;
}

/* Take the cursor's next row into *row if it belongs to group g: 1 taken,
 * 0 the group's rows are over, negative on error. */
static int nsys_take(nsys_t *n, nsys_cursor_t *c, const nsys_group_t *g, nsys_row_t *row,
                     gm_error_t *err)
{
    if (!c->have || c->row.gpid != g->gpid || c->row.dev != g->dev)
        return 0;
    *row = c->row;
    int rc = nsys_next(n, c->st, &c->row, err);
    if (rc < 0)
        return rc;
    c->have = rc;
    return 1;
}

/* Step st into *row: 1 a row, 0 the end, negative on error. */
static int nsys_next(nsys_t *n, sqlite3_stmt *st, nsys_row_t *row, gm_error_t *err)
{
    int r = sqlite3_step(st);
    if (r == SQLITE_DONE)
        return 0;
    if (r != SQLITE_ROW)
        return nsys_db_error(n, err, "cannot read " NSYS_TABLE);
    row->rowid = sqlite3_column_int64(st, 0);
    row->gpid = sqlite3_column_int64(st, 6);
    row->dev = sqlite3_column_int64(st, 7);
    static const char *const names[] = {"start", "address", "bytes", "memoryOperationType",
                                        "streamId"};
    for (int c = 1; c <= 5; c++) {
        if (sqlite3_column_type(st, c) != SQLITE_INTEGER)
            return gm_error_set(err, GM_EFORMAT,
                                "'%s': " NSYS_TABLE " row %" PRId64 ": %s is %s, not an integer",
                                n->filename, row->rowid, names[c - 1],
                                sqlite3_column_type(st, c) == SQLITE_NULL ? "NULL"
                                                                          : "of another type");
    }
    int64_t ts = sqlite3_column_int64(st, 1), bytes = sqlite3_column_int64(st, 3);
    if (ts < 0 || bytes < 0)
        return gm_error_set(err, GM_EFORMAT, "'%s': " NSYS_TABLE " row %" PRId64 ": negative %s",
                            n->filename, row->rowid, ts < 0 ? "start" : "bytes");
    row->ts = (uint64_t)ts;
    row->addr = (uint64_t)sqlite3_column_int64(st, 2);
    row->size = (uint64_t)bytes;
    row->is_free = nsys_is_free(n, sqlite3_column_int64(st, 4));
    row->stream = (uint64_t)sqlite3_column_int64(st, 5);
    if (row->size > GM_SIZE_LIMIT)
        return gm_error_set(err, GM_EFORMAT,
                            "'%s': " NSYS_TABLE " row %" PRId64
                            ": bytes %" PRIu64 " is above the limit of 2^48",
                            n->filename, row->rowid, row->size);
    return 1;
}

/* Pass 1 over a group: the pairing checks and the pre-existing list. */
static int nsys_scan(nsys_t *n, nsys_cursor_t *cur, const nsys_group_t *g, nsys_pre_t **pre,
                     size_t *npre, nsys_rows_t *rows, gm_error_t *err)
{
    int rc;
    gm__addrlive_t live, seen;
    gm__addrlive_init(&live);
    gm__addrlive_init(&seen);
    size_t cap = 0;
    nsys_row_t row;
    rows->n = 0;
    rows->whole = 1;
    while ((rc = nsys_take(n, cur, g, &row, err)) == 1) {
        uint64_t v;
        if (rows->whole && rows->n == rows->cap) {
            size_t c = rows->cap ? 2 * rows->cap : 16;
            nsys_row_t *p = c <= NSYS_KEEP_ROWS ? realloc(rows->v, c * sizeof *p) : NULL;
            if (p != NULL) {
                rows->v = p;
                rows->cap = c;
            } else {
                rows->whole = 0; /* too many (or no memory): the second cursor reads them */
            }
        }
        if (rows->whole)
            rows->v[rows->n++] = row;
        if (!row.is_free) {
            if (gm__addrlive_get(&live, row.addr, &v)) {
                rc = gm_error_set(err, GM_EFORMAT,
                                  "'%s': " NSYS_TABLE " row %" PRId64 ": allocation at 0x%" PRIx64
                                  " which is live (allocated in row %" PRIu64 ")",
                                  n->filename, row.rowid, row.addr, v);
                break;
            }
            if (gm__addrlive_put(&live, row.addr, (uint64_t)row.rowid) ||
                gm__addrlive_put(&seen, row.addr, 1)) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                break;
            }
            continue;
        }
        if (gm__addrlive_remove(&live, row.addr, NULL))
            continue;
        if (gm__addrlive_get(&seen, row.addr, &v)) {
            rc = gm_error_set(err, GM_EFORMAT,
                              "'%s': " NSYS_TABLE " row %" PRId64 ": free of 0x%" PRIx64
                              " which is not live (already freed)",
                              n->filename, row.rowid, row.addr);
            break;
        }
        if (GM_VEC_RESERVE(*pre, cap, *npre + 1, 64)) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
        (*pre)[(*npre)++] = (nsys_pre_t){row.addr, row.size, row.stream};
        if (gm__addrlive_put(&seen, row.addr, 1)) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
    }
    gm__addrlive_release(&live);
    gm__addrlive_release(&seen);
    return rc < 0 ? rc : 0;
}

static int nsys_stream(gm_writer_t *w, uint64_t handle, uint64_t *last, uint32_t *idx, int *have,
                       gm_error_t *err)
{
    if (*have && *last == handle)
        return 0;
    int rc = gm_writer_stream(w, handle, idx, err);
    if (rc == 0) {
        *have = 1;
        *last = handle;
    }
    return rc;
}

/* The second pass's rows of group g: the kept ones, or the second cursor's
 * (opened on first use, and moved past the groups before g when g's first
 * row is taken). */
typedef struct nsys_src {
    const nsys_rows_t *rows;
    size_t i; /* rows taken */
    nsys_cursor_t *cur;
} nsys_src_t;

static int nsys_src_take(nsys_t *n, nsys_src_t *src, const nsys_group_t *g, nsys_row_t *row,
                         gm_error_t *err)
{
    if (src->rows->whole) {
        if (src->i == src->rows->n)
            return 0;
        *row = src->rows->v[src->i++];
        return 1;
    }
    nsys_cursor_t *c = src->cur;
    int rc;
    if (src->i++ == 0) {
        if (c->st == NULL && (rc = nsys_cursor_open(n, c, err)) < 0)
            return rc;
        while (c->have && (c->row.gpid != g->gpid || c->row.dev != g->dev)) {
            if ((rc = nsys_next(n, c->st, &c->row, err)) < 0)
                return rc;
            c->have = rc;
        }
    }
    return nsys_take(n, c, g, row, err);
}

static int nsys_write(nsys_t *n, nsys_src_t *cur, const nsys_group_t *g,
                      const nsys_pre_t *pre, size_t npre, gm_writer_t *w, gm_error_t *err)
{
    uint16_t dev = (uint16_t)g->dev; /* 0..65535: nsys_import_db checked */
    int rc = 0;
    gm__addrlive_t live;
    gm__addrlive_init(&live);
    uint64_t next = 0, last = 0;
    uint32_t sidx = 0;
    int have = 0;
    nsys_row_t row;
    /* The pre-existing allocations take the time of the first row. */
    int first = nsys_src_take(n, cur, g, &row, err);
    if (first < 0)
        rc = first;
    for (size_t i = 0; rc == 0 && i < npre; i++) {
        gm_event_t ev = {.op = GM_OP_ALLOC, .flags = GM_EVENT_PREEXISTING, .device = dev,
                         .ts_ns = first == 1 ? row.ts : 0, .id = next++, .size = pre[i].size,
                         .addr = pre[i].addr};
        if ((rc = nsys_stream(w, pre[i].stream, &last, &sidx, &have, err)))
            break;
        ev.stream = sidx;
        if ((rc = gm_writer_add(w, &ev, err)))
            break;
        if (gm__addrlive_put(&live, ev.addr, ev.id))
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    int more = first;
    while (rc == 0 && more == 1) {
        gm_event_t ev = {.ts_ns = row.ts, .device = dev, .addr = row.addr};
        if ((rc = nsys_stream(w, row.stream, &last, &sidx, &have, err)))
            break;
        ev.stream = sidx;
        if (row.is_free) {
            ev.op = GM_OP_FREE;
            if (!gm__addrlive_remove(&live, row.addr, &ev.id)) {
                rc = gm_error_set(err, GM_EFORMAT,
                                  "'%s': " NSYS_TABLE " row %" PRId64 ": free of 0x%" PRIx64
                                  " which is not live",
                                  n->filename, row.rowid, row.addr);
                break;
            }
        } else {
            ev.op = GM_OP_ALLOC;
            ev.id = next++;
            ev.size = row.size;
            if (gm__addrlive_put(&live, row.addr, ev.id)) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                break;
            }
        }
        if ((rc = gm_writer_add(w, &ev, err))) {
            gm_error_prefix(err, "'%s': " NSYS_TABLE " row %" PRId64, n->filename, row.rowid);
            break;
        }
        more = nsys_src_take(n, cur, g, &row, err);
        if (more < 0)
            rc = more;
    }
    gm__addrlive_release(&live);
    return rc;
}

/* Append v in decimal ('-' first when negative) at p; the end. */
static char *nsys_decimal(char *p, int64_t v)
{
    char tmp[24], *q = tmp + sizeof tmp;
    uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--q = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    if (v < 0)
        *--q = '-';
    size_t len = (size_t)(tmp + sizeof tmp - q);
    memcpy(p, q, len);
    return p + len;
}

/* A group's trace name suffix, "[hostH.]pidP.devD", into buf (room for 96):
 * what snprintf with PRIu64 / PRId64 prints, without its machinery (one per
 * process). */
static void nsys_suffix(char *buf, int hosts, uint64_t host, int64_t pid, int64_t dev)
{
    char *p = buf;
    if (hosts) {
        memcpy(p, "host", 4);
        p = nsys_decimal(p + 4, (int64_t)host); /* host < 2^16 */
        *p++ = '.';
    }
    memcpy(p, "pid", 3);
    p = nsys_decimal(p + 3, pid);
    memcpy(p, ".dev", 4);
    p = nsys_decimal(p + 4, dev);
    *p = '\0';
}

static int nsys_import_db(nsys_t *n, gm_import_target_t *t, gm_error_t *err)
{
    sqlite3_db_config(n->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
    sqlite3_db_config(n->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
#endif
    sqlite3_exec(n->db, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
    const gm_import_options_t *o = gm_import_get_options(t);
    n->mask = o && o->mem_kinds ? o->mem_kinds : NSYS_DEFAULT_KINDS;
    int rc = nsys_prepare(n, err);
    if (rc)
        return rc;

    /* The (process, device) groups with kept events, and per group the
     * events dropped (other operations among the kept kinds; other kinds),
     * in one grouped pass over the table. */
    char sql[4096];
    snprintf(sql, sizeof sql,
             "SELECT globalPid, deviceId, sum(CASE WHEN %s AND %s THEN 1 ELSE 0 END) AS kept, "
             "sum(CASE WHEN %s AND NOT %s THEN 1 ELSE 0 END), "
             "sum(CASE WHEN NOT %s THEN 1 ELSE 0 END), "
             "min(CASE WHEN %s AND %s THEN rowid END) FROM " NSYS_TABLE
             " GROUP BY globalPid, deviceId HAVING kept > 0 ORDER BY globalPid, deviceId",
             n->kinds_sql, n->ops_sql, n->kinds_sql, n->ops_sql, n->kinds_sql, n->kinds_sql,
             n->ops_sql);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
        return nsys_db_error(n, err, "cannot query " NSYS_TABLE);
    nsys_group_t *groups = NULL;
    size_t ng = 0, cap = 0;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
            sqlite3_column_type(st, 1) != SQLITE_INTEGER) {
            rc = gm_error_set(err, GM_EFORMAT,
                              "'%s': " NSYS_TABLE " has a globalPid or deviceId that is not an "
                              "integer",
                              n->filename);
            break;
        }
        /* An event holds a device up to 65535: another is refused, not
         * written as device 0. */
        int64_t dev = sqlite3_column_int64(st, 1);
        if (dev < 0 || dev > UINT16_MAX) {
            rc = gm_error_set(err, GM_EFORMAT,
                              "'%s': " NSYS_TABLE " row %" PRId64 ": deviceId %" PRId64
                              " is out of range (0 to 65535)",
                              n->filename, (int64_t)sqlite3_column_int64(st, 5), dev);
            break;
        }
        if (GM_VEC_RESERVE(groups, cap, ng + 1, 8)) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
        groups[ng++] = (nsys_group_t){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                      sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4)};
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = nsys_db_error(n, err, "cannot read " NSYS_TABLE);
    sqlite3_finalize(st);
    if (rc == 0 && ng == 0)
        rc = gm_error_set(err, GM_EFORMAT,
                          "'%s': no allocation or deallocation events of the memory kinds %s "
                          "(choose others with --mem-kinds)",
                          n->filename, n->kinds_json);
    /* Several hosts (or VMs) in one export: their PIDs may be equal, so
     * every trace name says its host. */
    int hosts = 0;
    for (size_t i = 1; i < ng && !hosts; i++)
        hosts = NSYS_HOST(groups[i].gpid) != NSYS_HOST(groups[0].gpid);

    /* Two cursors over the same sorted events, one for each pass over a
     * group (pairing checks, then writing): linear in groups.  The second
     * is opened only for a group too large to keep (nsys_rows_t). */
    nsys_cursor_t scan = {0}, write = {0};
    nsys_rows_t rows = {0};
    if (rc == 0)
        rc = nsys_cursor_open(n, &scan, err);
    for (size_t i = 0; rc == 0 && i < ng; i++) {
        const nsys_group_t *g = &groups[i];
        int64_t pid = NSYS_PID(g->gpid);
        nsys_pre_t *pre = NULL;
        size_t npre = 0;
        gm_writer_t *w;
        char suffix[96];
        nsys_suffix(suffix, hosts, NSYS_HOST(g->gpid), pid, g->dev);
        nsys_src_t src = {&rows, 0, &write};
        if ((rc = nsys_scan(n, &scan, g, &pre, &npre, &rows, err)) == 0 &&
            (rc = gm_import_begin(t, ng > 1 ? suffix : NULL, &w, err)) == 0) {
            if ((rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "nsys", err)) == 0 &&
                (rc = gm_writer_attr_int(w, "pid", pid, err)) == 0 &&
                (rc = gm_writer_attr_int(w, GM_ATTR_DEVICE, g->dev, err)) == 0 &&
                (rc = gm_writer_attr_json(w, "mem_kinds", n->kinds_json, err)) == 0 &&
                (rc = gm_writer_attr_int(w, "global_pid", g->gpid, err)) == 0 &&
                (!hosts ||
                 (rc = gm_writer_attr_int(w, "host", (int64_t)NSYS_HOST(g->gpid), err)) == 0) &&
                (rc = nsys_write(n, &src, g, pre, npre, w, err)) == 0) {
                if (npre)
                    rc = gm_writer_attr_int(w, GM_ATTR_PREEXISTING, (int64_t)npre, err);
                if (rc == 0 && g->other_ops)
                    rc = gm_writer_attr_int(w, "other_operations", g->other_ops, err);
                if (rc == 0 && g->other_kinds)
                    rc = gm_writer_attr_int(w, "other_kinds_dropped", g->other_kinds, err);
                if (rc == 0)
                    rc = gm_import_end(t, err);
            }
        }
        free(pre);
    }
    sqlite3_finalize(scan.st);
    sqlite3_finalize(write.st);
    free(rows.v);
    free(groups);
    return rc;
}

int gm_nsys_import_image(const void *data, size_t len, const char *filename,
                         gm_import_target_t *t, gm_error_t *err)
{
    nsys_t n = {.filename = filename};
    if (len < 100 || memcmp(data, "SQLite format 3", 16) != 0)
        return gm_error_set(err, GM_EFORMAT, "'%s': not an SQLite database", filename);
    /* A WAL-mode image (header bytes 18-19 = 2) reads as a rollback one. */
    unsigned char *copy = sqlite3_malloc64(len);
    if (copy == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", filename);
    memcpy(copy, data, len);
    if (copy[18] == 2)
        copy[18] = 1;
    if (copy[19] == 2)
        copy[19] = 1;
    if (sqlite3_open_v2(":memory:", &n.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_free(copy);
        sqlite3_close(n.db);
        return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", filename);
    }
    int rc;
    if (sqlite3_deserialize(n.db, "main", copy, (sqlite3_int64)len, (sqlite3_int64)len,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) !=
        SQLITE_OK)
        rc = nsys_db_error(&n, err, "cannot read the database");
    else
        rc = nsys_import_db(&n, t, err);
    sqlite3_close(n.db);
    return rc;
}

int gm_nsys_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err)
{
    char head[16];
    if (fseek(in, 0, SEEK_SET) != 0 || fread(head, 1, sizeof head, in) != sizeof head ||
        memcmp(head, "SQLite format 3", 16) != 0)
        return gm_error_set(err, GM_EFORMAT, "'%s': not an SQLite database", filename);
    /* A regular file is opened in place through its descriptor. */
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode)) {
        char uri[64];
        snprintf(uri, sizeof uri, "file:/proc/self/fd/%d?immutable=1", fileno(in));
        nsys_t n = {.filename = filename};
        if (sqlite3_open_v2(uri, &n.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) ==
            SQLITE_OK) {
            int rc = nsys_import_db(&n, t, err);
            sqlite3_close(n.db);
            return rc;
        }
        sqlite3_close(n.db);
    }
    /* Otherwise the whole file is read into memory. */
    if (fseek(in, 0, SEEK_SET) != 0)
        return gm_error_set(err, GM_EINVAL, "cannot read '%s': the input is not seekable",
                            filename);
    size_t cap = 1 << 20, len = 0;
    unsigned char *buf = malloc(cap);
    size_t k;
    while (buf != NULL && (k = fread(buf + len, 1, cap - len, in)) > 0) {
        len += k;
        if (GM_VEC_RESERVE(buf, cap, len + 1, 1)) {
            free(buf);
            buf = NULL;
            break;
        }
    }
    if (buf == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", filename);
    if (ferror(in)) {
        free(buf);
        char why[128];
        return gm_error_set(err, GM_EIO, "cannot read '%s': %s", filename,
                            gm_errno_text(errno, why, sizeof why));
    }
    int rc = gm_nsys_import_image(buf, len, filename, t, err);
    free(buf);
    return rc;
}

int gm_nsys_sniff(const void *head, size_t len)
{
    return len >= 16 && memcmp(head, "SQLite format 3", 16) == 0;
}
