/*
 * tests/fuzz/fuzz_nsys.c — fuzz target for the Nsight Systems importer
 * (gm_nsys_import).  No real export is in ../shared/data, and mutating a
 * database file byte by byte mostly fuzzes SQLite; so an input is read as
 * a schema choice and rows: byte 0 picks the schema (with or without
 * streamId, with or without the enum tables, NULLs allowed or not), then
 * every 8 bytes are one CUDA_GPU_MEMORY_USAGE_EVENTS row (start, process,
 * device, address, bytes, memKind, memoryOperationType, streamId, each from
 * one byte, so that rows pair up, repeat and collide often).  The database
 * is built in memory, serialized, and imported through a FILE as the
 * command line does.  An input that already is an SQLite image is imported
 * as it is.
 */
#include <sqlite3.h>

#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_exec(sqlite3 *db, const char *sql)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 16 && memcmp(data, "SQLite format 3", 16) == 0) {
        fuzz_import_run(gm_nsys_import, data, size, "fuzz.sqlite");
        return 0;
    }
    unsigned flags = size ? data[0] : 0;
    int with_stream = flags & 1, with_enums = flags & 2, nulls = flags & 4;
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        abort();
    if (with_enums) {
        fuzz_exec(db, "CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, "
                      "label TEXT); INSERT INTO ENUM_CUDA_MEM_KIND VALUES "
                      "(0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),"
                      "(1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),"
                      "(2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),"
                      "(5,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static'),"
                      "(8,'SOMETHING_NEW','New');"
                      "CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER (id INTEGER PRIMARY KEY, "
                      "name TEXT, label TEXT); INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES "
                      "(0,'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION','Allocation'),"
                      "(1,'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION','Deallocation'),"
                      "(2,'CUDA_DEV_MEM_EVENT_OPR_OTHER','Other')");
    }
    fuzz_exec(db, with_stream
                      ? "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid "
                        "INTEGER, deviceId INTEGER, address INTEGER, bytes INTEGER, memKind "
                        "INTEGER, memoryOperationType INTEGER, streamId INTEGER)"
                      : "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid "
                        "INTEGER, deviceId INTEGER, address INTEGER, bytes INTEGER, memKind "
                        "INTEGER, memoryOperationType INTEGER)");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           with_stream ? "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES "
                                         "(?1,?2,?3,?4,?5,?6,?7,?8)"
                                       : "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES "
                                         "(?1,?2,?3,?4,?5,?6,?7)",
                           -1, &st, NULL) != SQLITE_OK)
        abort();
    for (size_t off = 1; off + 8 <= size && off < 1 + 8 * 4096; off += 8) {
        const uint8_t *b = data + off;
        int64_t v[8] = {
            (int64_t)b[0] * 16,
            (int64_t)(b[1] % 3) * 0x1000000,
            b[2] % 3,
            (int64_t)(b[3] % 8) * 0x1000,
            b[4] == 255 ? (INT64_C(1) << 50) : (int64_t)b[4] * 64,
            b[5] % 9,
            b[6] % 3,
            b[7] % 4,
        };
        sqlite3_reset(st);
        for (int c = 0; c < (with_stream ? 8 : 7); c++) {
            if (nulls && b[c] == 0xfe)
                sqlite3_bind_null(st, c + 1);
            else
                sqlite3_bind_int64(st, c + 1, v[c]);
        }
        if (sqlite3_step(st) != SQLITE_DONE)
            abort();
    }
    sqlite3_finalize(st);
    sqlite3_int64 len = 0;
    unsigned char *image = sqlite3_serialize(db, "main", &len, 0);
    sqlite3_close(db);
    if (image == NULL)
        abort();
    fuzz_import_run(gm_nsys_import, image, (size_t)len, "fuzz.sqlite");
    sqlite3_free(image);
    return 0;
}

/* Seeds as rows (see above): a paired alloc/free on device memory, two
 * processes and devices, a pre-existing free, a double allocation. */
static const char *const fuzz_texts[] = {
    /* (no NUL bytes: 3 stands for 0 in the fields taken modulo 3, 4 in the
     * stream taken modulo 4) */
    "\x03" "\x01\x01\x03\x01\x10\x02\x03\x01" "\x02\x01\x03\x01\x10\x02\x01\x01",
    "\x01" "\x01\x01\x03\x01\x10\x02\x03\x04" "\x02\x02\x01\x01\x10\x02\x03\x04"
           "\x03\x02\x01\x02\x20\x02\x03\x04" "\x04\x01\x03\x01\x10\x02\x01\x04",
    "\x02" "\x05\x01\x03\x03\x30\x02\x01\x02" "\x06\x01\x03\x04\x08\x01\x03\x02",
    "\x07" "\x01\x01\x03\x01\x10\x02\x03\x01" "\x02\x01\x03\x01\x10\x02\x03\x01",
};

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    return fuzz_import_seeds(out, fuzz_texts, sizeof fuzz_texts / sizeof fuzz_texts[0], NULL, 0);
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; seeds != NULL && i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
