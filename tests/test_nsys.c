/*
 * tests/test_nsys.c — Nsight Systems SQLite exports.  No real export is in
 * ../shared/data: the fixtures are SQLite files the test builds from the
 * documented schema (`nsys export --type sqlite`: table
 * CUDA_GPU_MEMORY_USAGE_EVENTS with start, globalPid, deviceId, contextId,
 * address, pc, bytes, memKind, memoryOperationType, name, correlationId and,
 * in newer versions, streamId; enum tables ENUM_CUDA_MEM_KIND and
 * ENUM_CUDA_DEV_MEM_EVENT_OPER with id, name, label).  Checked: event order
 * by start, device memory only by default and --mem-kinds widening, one
 * trace per (process, device) with suffixes, schemas with and without
 * streamId and enum tables, pre-existing allocations, groups on either
 * side of the rows the importer keeps between its passes, the file and
 * image entry points, and errors naming the file and row, leaving nothing.
 */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define GPID(pid) ((int64_t)(pid) * 0x1000000)

typedef struct row {
    int64_t start, gpid, dev, addr, bytes, kind, op, stream;
} row_t;

/* Build an export at path with the rows; flags choose the schema. */
enum { FX_STREAM = 1, FX_ENUMS = 2 };

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg);
}

static void build(const char *path, const row_t *rows, size_t n, unsigned flags)
{
    remove(path);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    exec(db, "BEGIN"); /* one commit (one sync), not one per row */
    if (flags & FX_ENUMS) {
        exec(db, "CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT)");
        exec(db, "INSERT INTO ENUM_CUDA_MEM_KIND VALUES "
                 "(0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),"
                 "(1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),"
                 "(2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),"
                 "(3,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),"
                 "(4,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),"
                 "(5,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static'),"
                 "(6,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static'),"
                 "(7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown')");
        exec(db, "CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER (id INTEGER PRIMARY KEY, name TEXT, "
                 "label TEXT)");
        exec(db, "INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES "
                 "(0,'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION','Allocation'),"
                 "(1,'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION','Deallocation')");
    }
    exec(db, flags & FX_STREAM
                 ? "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid "
                   "INTEGER, deviceId INTEGER, contextId INTEGER, address INTEGER, pc INTEGER, "
                   "bytes INTEGER, memKind INTEGER, memoryOperationType INTEGER, name TEXT, "
                   "correlationId INTEGER, streamId INTEGER)"
                 : "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid "
                   "INTEGER, deviceId INTEGER, contextId INTEGER, address INTEGER, pc INTEGER, "
                   "bytes INTEGER, memKind INTEGER, memoryOperationType INTEGER, name TEXT, "
                   "correlationId INTEGER)");
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    flags & FX_STREAM
                                        ? "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES "
                                          "(?1,?2,?3,1,?4,0,?5,?6,?7,NULL,0,?8)"
                                        : "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES "
                                          "(?1,?2,?3,1,?4,0,?5,?6,?7,NULL,0)",
                                    -1, &st, NULL),
                 SQLITE_OK);
    for (size_t i = 0; i < n; i++) {
        const int64_t v[] = {rows[i].start, rows[i].gpid, rows[i].dev,  rows[i].addr,
                             rows[i].bytes, rows[i].kind, rows[i].op,   rows[i].stream};
        sqlite3_reset(st);
        for (int c = 0; c < (flags & FX_STREAM ? 8 : 7); c++)
            sqlite3_bind_int64(st, c + 1, v[c]);
        cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
    }
    sqlite3_finalize(st);
    exec(db, "COMMIT");
    sqlite3_close(db);
}

/* Import path into a fresh store under base "run"; returns the result,
 * the store in *s (caller closes). */
static int import_file(const char *path, uint32_t kinds, gm_store_t **s, gm_error_t *err)
{
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, s, err), 0, "%s", err->msg);
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(*s, "run", 0, &t, err), 0, "%s", err->msg);
    gm_import_options_t o = {.mem_kinds = kinds};
    gm_import_set_options(t, &o);
    FILE *in = fopen(path, "rb");
    cr_assert(in != NULL);
    int rc = gm_nsys_import(in, "rep.sqlite", t, err);
    fclose(in);
    if (rc) {
        gm_import_abort(t);
        return rc;
    }
    return gm_import_commit(t, err);
}

static size_t ntraces(gm_store_t *s)
{
    gm_trace_info_t *list;
    size_t n;
    gm_error_t err;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
    gm_trace_info_free_list(list, n);
    return n;
}

/* Device memory (2) of one process on one device, rows out of order, with
 * pinned (1) and device-static (5) rows mixed in. */
static const row_t one[] = {
    {300, GPID(42), 0, 0x7000, 4096, 2, 1, 7},  /* free A */
    {100, GPID(42), 0, 0x7000, 4096, 2, 0, 7},  /* alloc A */
    {200, GPID(42), 0, 0x9000, 1024, 2, 0, 0},  /* alloc B */
    {150, GPID(42), 0, 0x100, 64, 1, 0, 0},     /* pinned host memory */
    {160, GPID(42), 0, 0x200, 1, 5, 0, 0},      /* device static */
    {400, GPID(42), 0, 0x9000, 1024, 2, 1, 0},  /* free B */
};

Test(nsys, device_memory_in_time_order)
{
    const char *path = gt_tmpfile("one.sqlite");
    build(path, one, sizeof one / sizeof one[0], FX_STREAM | FX_ENUMS);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_file(path, 0, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(ntraces(s), 1);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "run", &r, &err), 0, "%s", err.msg);
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 4);
    uint8_t ops[] = {GM_OP_ALLOC, GM_OP_ALLOC, GM_OP_FREE, GM_OP_FREE};
    uint64_t ids[] = {0, 1, 0, 1}, ts[] = {100, 200, 300, 400};
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(ev[i].op, ops[i], "event %zu", i);
        cr_expect_eq(ev[i].id, ids[i], "event %zu", i);
        cr_expect_eq(ev[i].ts_ns, ts[i], "event %zu", i);
    }
    cr_expect_eq(gm_reader_stream(r, ev[0].stream), 7);
    cr_expect_eq(ev[0].addr, 0x7000);
    const gm_trace_info_t *info = gm_reader_info(r);
    cr_expect_eq(info->load, 4096 + 1024);
    cr_expect(strstr(info->attrs, "\"source\": \"nsys\", \"pid\": 42, \"device\": 0, "
                                  "\"mem_kinds\": [\"device\"]") != NULL,
              "%s", info->attrs);
    cr_expect(strstr(info->attrs, "\"other_kinds_dropped\": 2") != NULL, "%s", info->attrs);
    gm_reader_close(r);
    gm_store_close(s);

    /* --mem-kinds pinned,device,device_static keeps the other two. */
    uint32_t kinds;
    cr_assert_eq(gm_nsys_parse_mem_kinds("pinned,device,device-static", &kinds, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(import_file(path, kinds, &s, &err), 0, "%s", err.msg);
    gm_trace_info_t ti;
    cr_assert_eq(gm_store_find(s, "run", &ti, &err), 0, "%s", err.msg);
    cr_expect_eq(ti.allocs, 4);
    cr_expect_eq(ti.live_at_end, 2);
    gm_trace_info_release(&ti);
    gm_store_close(s);
}

Test(nsys, one_trace_per_process_and_device)
{
    const row_t rows[] = {
        {10, GPID(7), 0, 0x1000, 100, 2, 0, 0}, {11, GPID(7), 1, 0x1000, 200, 2, 0, 0},
        {12, GPID(9), 0, 0x1000, 300, 2, 0, 0}, {13, GPID(7), 0, 0x1000, 100, 2, 1, 0},
        {14, GPID(9), 0, 0x2000, 50, 2, 0, 0},
    };
    const char *path = gt_tmpfile("multi.sqlite");
    build(path, rows, sizeof rows / sizeof rows[0], FX_STREAM | FX_ENUMS);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_file(path, 0, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(ntraces(s), 3);
    static const struct {
        const char *name;
        uint64_t events, load;
    } want[] = {{"run.pid7.dev0", 2, 100}, {"run.pid7.dev1", 1, 200}, {"run.pid9.dev0", 2, 350}};
    for (size_t i = 0; i < 3; i++) {
        gm_trace_info_t ti;
        cr_assert_eq(gm_store_find(s, want[i].name, &ti, &err), 0, "%s", err.msg);
        cr_expect_eq(ti.events, want[i].events, "%s", want[i].name);
        cr_expect_eq(ti.load, want[i].load, "%s", want[i].name);
        gm_trace_info_release(&ti);
    }
    gm_store_close(s);
}

/* globalPid of process pid on host (hardware id) hw, VM vm. */
#define GPID_AT(hw, vm, pid) ((int64_t)(((uint64_t)(hw) << 56) | ((uint64_t)(vm) << 48)) | GPID(pid))

Test(nsys, multi_host_equal_pids)
{
    /* Two hosts, each with a process 42 on device 0 (the same addresses),
     * and host 1 also a process 7: one trace each, named by host. */
    const row_t rows[] = {
        {10, GPID_AT(0, 0, 42), 0, 0x1000, 100, 2, 0, 0},
        {11, GPID_AT(1, 0, 42), 0, 0x1000, 300, 2, 0, 0},
        {12, GPID_AT(1, 0, 42), 0, 0x1000, 300, 2, 1, 0},
        {13, GPID_AT(0, 0, 42), 0, 0x1000, 100, 2, 1, 0},
        {14, GPID_AT(1, 0, 7), 0, 0x2000, 50, 2, 0, 0},
    };
    const char *path = gt_tmpfile("hosts.sqlite");
    build(path, rows, sizeof rows / sizeof rows[0], FX_STREAM | FX_ENUMS);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_file(path, 0, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(ntraces(s), 3);
    static const struct {
        const char *name, *attrs;
        uint64_t events, load;
    } want[] = {
        {"run.host0.pid42.dev0", "\"pid\": 42, \"device\": 0, \"mem_kinds\": [\"device\"], "
                                 "\"global_pid\": 704643072, \"host\": 0",
         2, 100},
        {"run.host256.pid42.dev0", "\"global_pid\": 72057594742571008, \"host\": 256", 2, 300},
        {"run.host256.pid7.dev0", "\"pid\": 7", 1, 50},
    };
    for (size_t i = 0; i < 3; i++) {
        gm_trace_info_t ti;
        cr_assert_eq(gm_store_find(s, want[i].name, &ti, &err), 0, "%s", err.msg);
        cr_expect_eq(ti.events, want[i].events, "%s", want[i].name);
        cr_expect_eq(ti.load, want[i].load, "%s", want[i].name);
        cr_expect(strstr(ti.attrs, want[i].attrs) != NULL, "%s: %s", want[i].name, ti.attrs);
        gm_trace_info_release(&ti);
    }
    gm_store_close(s);
}

Test(nsys, many_processes_interleaved)
{
    /* 3,000 processes whose rows are interleaved in time (the table is not
     * grouped): each trace gets exactly its own alloc/free pair, in order. */
    enum { N = 3000 };
    row_t *rows = calloc(2 * N, sizeof *rows);
    cr_assert(rows != NULL);
    for (int i = 0; i < N; i++) {
        rows[i] = (row_t){1000 + i, GPID(i + 1), i % 2, 0x1000, (int64_t)(i + 1), 2, 0, 0};
        rows[N + i] = (row_t){5000 + (N - i), GPID(i + 1), i % 2, 0x1000, (int64_t)(i + 1), 2, 1, 0};
    }
    const char *path = gt_tmpfile("many.sqlite");
    build(path, rows, 2 * N, FX_STREAM);
    free(rows);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_file(path, 0, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(ntraces(s), N);
    for (int i = 0; i < N; i += 97) {
        char name[64];
        snprintf(name, sizeof name, "run.pid%d.dev%d", i + 1, i % 2);
        gm_reader_t *r;
        cr_assert_eq(gm_reader_open(s, name, &r, &err), 0, "%s", err.msg);
        const gm_event_t *ev;
        size_t n;
        cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
        cr_assert_eq(n, 2, "%s", name);
        cr_expect_eq(ev[0].op, GM_OP_ALLOC, "%s", name);
        cr_expect_eq(ev[0].size, (uint64_t)(i + 1), "%s", name);
        cr_expect_eq(ev[0].ts_ns, (uint64_t)(1000 + i), "%s", name);
        cr_expect_eq(ev[1].op, GM_OP_FREE, "%s", name);
        cr_expect_eq(ev[1].ts_ns, (uint64_t)(5000 + (N - i)), "%s", name);
        gm_reader_close(r);
    }
    gm_store_close(s);
}

Test(nsys, large_groups_among_small_ones)
{
    /* The importer keeps up to 4,096 rows of a group from its first pass
     * for the second and reads a larger group again from a second cursor:
     * groups of 2, 10,000, 6,000 (two large ones in a row), 2, 4,099 (just
     * over), 4,096 (just kept) and 2 rows, out of order in the table, each
     * trace exactly its own events.  pid5 also frees an address it never
     * allocated (pre-existing, written first). */
    static const int64_t pairs[] = {1, 5000, 3000, 1, 2049, 2048, 1};
    enum { NG = sizeof pairs / sizeof pairs[0] };
    size_t total = 1;
    for (int g = 0; g < NG; g++)
        total += 2 * (size_t)pairs[g];
    row_t *rows = calloc(total, sizeof *rows);
    cr_assert(rows != NULL);
    size_t n = 0;
    for (int g = NG - 1; g >= 0; g--)
        for (int64_t k = pairs[g] - 1; k >= 0; k--) {
            int64_t addr = 0x100000 + 0x1000 * k, ts = 10 * k + g;
            rows[n++] = (row_t){ts + 5, GPID(g + 1), 0, addr, 64 + k, 2, 1, g};
            rows[n++] = (row_t){ts, GPID(g + 1), 0, addr, 64 + k, 2, 0, g};
        }
    rows[n++] = (row_t){7, GPID(5), 0, 0x42, 99, 2, 1, 3};
    cr_assert_eq(n, total);
    const char *path = gt_tmpfile("groups.sqlite");
    build(path, rows, n, FX_STREAM);
    free(rows);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_file(path, 0, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(ntraces(s), NG);
    for (int g = 0; g < NG; g++) {
        char name[64];
        snprintf(name, sizeof name, "run.pid%d.dev0", g + 1);
        gm_reader_t *r;
        cr_assert_eq(gm_reader_open(s, name, &r, &err), 0, "%s", err.msg);
        const gm_event_t *ev;
        size_t m;
        cr_assert_eq(gm_reader_next(r, &ev, &m, &err), 0, "%s", err.msg);
        size_t pre = g == 4;
        cr_assert_eq(m, 2 * (size_t)pairs[g] + 2 * pre, "%s", name);
        if (pre) {
            cr_expect_eq(ev[0].op, GM_OP_ALLOC, "%s", name);
            cr_expect_eq(ev[0].flags, GM_EVENT_PREEXISTING, "%s", name);
            cr_expect_eq(ev[0].size, 99, "%s", name);
            cr_expect_eq(ev[0].ts_ns, 4, "%s", name); /* the group's first row's */
        }
        /* In time order: alloc k at 10k + g, its free 5 ns later. */
        uint64_t allocs = 0, frees = 0, last = 0;
        for (size_t i = 0; i < m; i++) {
            cr_expect_geq(ev[i].ts_ns, last, "%s event %zu", name, i);
            last = ev[i].ts_ns;
            if (ev[i].flags & GM_EVENT_PREEXISTING)
                continue;
            if (ev[i].op == GM_OP_ALLOC) {
                cr_expect_eq(ev[i].size, 64 + allocs, "%s event %zu", name, i);
                cr_expect_eq(ev[i].ts_ns, 10 * allocs + (uint64_t)g, "%s event %zu", name, i);
                allocs++;
            } else {
                cr_expect_eq(ev[i].op, GM_OP_FREE, "%s event %zu", name, i);
                frees++;
            }
        }
        cr_expect_eq(allocs, (uint64_t)pairs[g], "%s", name);
        cr_expect_eq(frees, (uint64_t)pairs[g] + pre, "%s", name);
        gm_reader_close(r);
    }
    gm_store_close(s);
}

Test(nsys, old_schema_without_stream_or_enums_and_preexisting)
{
    const row_t rows[] = {
        {5, GPID(1), 0, 0xa000, 512, 2, 1, 0}, /* freed, never allocated: pre-existing */
        {6, GPID(1), 0, 0xb000, 256, 2, 0, 0},
        {7, GPID(1), 0, 0xb000, 256, 2, 1, 0},
    };
    const char *path = gt_tmpfile("old.sqlite");
    build(path, rows, 3, 0);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_file(path, 0, &s, &err), 0, "%s", err.msg);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "run", &r, &err), 0, "%s", err.msg);
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 4);
    cr_expect_eq(ev[0].op, GM_OP_ALLOC);
    cr_expect_eq(ev[0].flags, GM_EVENT_PREEXISTING);
    cr_expect_eq(ev[0].size, 512);
    cr_expect_eq(ev[0].ts_ns, 5);
    cr_expect_eq(ev[1].op, GM_OP_FREE);
    cr_expect_eq(ev[1].id, 0);
    cr_expect_eq(gm_reader_stream(r, ev[2].stream), 0);
    cr_expect(strstr(gm_reader_info(r)->attrs, "\"preexisting\": 1") != NULL, "%s",
              gm_reader_info(r)->attrs);
    gm_reader_close(r);
    gm_store_close(s);

    /* The same file through the in-memory entry point. */
    size_t len;
    char *image = gt_read_file(path, &len);
    cr_assert(image != NULL);
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(s, "img", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_nsys_import_image(image, len, "img.sqlite", t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    gm_trace_info_t ti;
    cr_assert_eq(gm_store_find(s, "img", &ti, &err), 0, "%s", err.msg);
    cr_expect_eq(ti.events, 4);
    gm_trace_info_release(&ti);
    gm_store_close(s);
    free(image);
}

/* Expect an import of path to fail with msg, leaving no trace. */
static void expect_error(const char *path, const char *msg)
{
    gm_store_t *s;
    gm_error_t err;
    cr_expect_neq(import_file(path, 0, &s, &err), 0, "%s", path);
    cr_expect(strstr(err.msg, "'rep.sqlite'") == err.msg && strstr(err.msg, msg), "%s", err.msg);
    cr_expect_eq(ntraces(s), 0);
    gm_store_close(s);
}

Test(nsys, errors_name_the_file_and_row)
{
    const char *path = gt_tmpfile("bad.sqlite");
    FILE *f = fopen(path, "w");
    fputs("not a database at all, but long enough to be read as a header\n", f);
    fclose(f);
    expect_error(path, "not an SQLite database");

    /* A gmsim store is SQLite but not an export. */
    gm_store_t *s;
    gm_error_t err;
    remove(path);
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
    expect_error(path, "no table CUDA_GPU_MEMORY_USAGE_EVENTS");

    const row_t twice[] = {{1, GPID(1), 0, 0x10, 8, 2, 0, 0}, {2, GPID(1), 0, 0x10, 8, 2, 0, 0}};
    build(path, twice, 2, FX_STREAM | FX_ENUMS);
    expect_error(path, "row 2: allocation at 0x10 which is live (allocated in row 1)");

    const row_t double_free[] = {{1, GPID(1), 0, 0x10, 8, 2, 0, 0},
                                 {2, GPID(1), 0, 0x10, 8, 2, 1, 0},
                                 {3, GPID(1), 0, 0x10, 8, 2, 1, 0}};
    build(path, double_free, 3, FX_STREAM);
    expect_error(path, "row 3: free of 0x10 which is not live (already freed)");

    build(path, twice, 1, FX_STREAM);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    exec(db, "UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET bytes = NULL");
    sqlite3_close(db);
    expect_error(path, "row 1: bytes is NULL, not an integer");

    build(path, twice, 1, FX_STREAM);
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    exec(db, "UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET bytes = 281474976710657");
    sqlite3_close(db);
    expect_error(path, "row 1: bytes 281474976710657 is above the limit");

    /* A device an event cannot hold is refused, not written as device 0;
     * the row named is the group's first kept one. */
    const row_t far[] = {{1, GPID(1), 0, 0x10, 8, 2, 0, 0},
                         {2, GPID(1), 70000, 0x20, 8, 1, 0, 0},
                         {3, GPID(1), 70000, 0x20, 8, 2, 0, 0}};
    build(path, far, 3, FX_STREAM | FX_ENUMS);
    expect_error(path, "row 3: deviceId 70000 is out of range (0 to 65535)");
    const row_t negative[] = {{1, GPID(1), -1, 0x10, 8, 2, 0, 0}};
    build(path, negative, 1, FX_STREAM);
    expect_error(path, "row 1: deviceId -1 is out of range (0 to 65535)");

    /* Only pinned memory: nothing of the default kinds. */
    const row_t pinned[] = {{1, GPID(1), 0, 0x10, 8, 1, 0, 0}};
    build(path, pinned, 1, FX_STREAM | FX_ENUMS);
    expect_error(path, "no allocation or deallocation events of the memory kinds [\"device\"]");

    /* The table as a view is refused. */
    remove(path);
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    exec(db, "CREATE TABLE t (x); CREATE VIEW CUDA_GPU_MEMORY_USAGE_EVENTS AS SELECT x FROM t");
    sqlite3_close(db);
    expect_error(path, "is a view, not a table");
}

Test(nsys, mem_kinds_lists)
{
    uint32_t m;
    gm_error_t err;
    cr_expect_eq(gm_nsys_parse_mem_kinds("device", &m, &err), 0);
    cr_expect_eq(m, 1u << 2);
    cr_expect_eq(gm_nsys_parse_mem_kinds("all", &m, &err), 0);
    cr_expect_eq(m, 0xffu);
    cr_expect_eq(gm_nsys_parse_mem_kinds("managed,0,Managed_Static", &m, &err), 0);
    cr_expect_eq(m, (1u << 4) | 1u | (1u << 6));
    cr_expect_eq(gm_nsys_parse_mem_kinds("device,hbm", &m, &err), GM_EINVAL);
    cr_expect(strstr(err.msg, "unknown memory kind 'hbm'") != NULL, "%s", err.msg);
    cr_expect_eq(gm_nsys_parse_mem_kinds("", &m, &err), GM_EINVAL);
    cr_expect_eq(gm_nsys_parse_mem_kinds("device,,pinned", &m, &err), GM_EINVAL);
    cr_expect(gm_nsys_sniff("SQLite format 3\0xxxx", 20));
    cr_expect(!gm_nsys_sniff("SQLite format 2\0xxxx", 20));
}
