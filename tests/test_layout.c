/*
 * tests/test_layout.c — recorded starting layouts in the store
 * (store/layout.c): round trips (stored and zlib-compressed encodings),
 * the writer's refusals, rollback with the trace, replacement and deletion
 * with it, damaged rows refused as GM_ECORRUPT naming file and trace, and
 * version-1 stores (before layouts): read as they are when opened
 * read-only, upgraded when opened for writing.
 */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util.h"

#define MIB (UINT64_C(1) << 20)

typedef struct lay_buf {
    gm_layout_t l;
    gm_layout_segment_t seg[64];
    gm_layout_block_t blk[4096];
} lay_buf_t;

/* Two segments: a large one on device 0 with an allocation between two
 * free blocks, a small expandable one on device 1 wholly allocated. */
static void small_layout(lay_buf_t *b, uint32_t stream_index)
{
    memset(b, 0, sizeof *b);
    b->seg[0] = (gm_layout_segment_t){.address = 0x7f0000000000, .size = 20 * MIB,
                                      .stream = 0, .stream_index = 0, .device = 0,
                                      .pool = GM_POOL_LARGE, .first_block = 0, .nblocks = 3};
    b->blk[0] = (gm_layout_block_t){0, 2 * MIB, 0, GM_LAYOUT_FREE};
    b->blk[1] = (gm_layout_block_t){2 * MIB, 6 * MIB, 6000000, 0};
    b->blk[2] = (gm_layout_block_t){8 * MIB, 12 * MIB, 0, GM_LAYOUT_FREE};
    b->seg[1] = (gm_layout_segment_t){.address = 0x10000, .size = 2 * MIB, .stream = 77,
                                      .stream_index = stream_index, .device = 1,
                                      .pool = GM_POOL_SMALL, .expandable = 1, .first_block = 3,
                                      .nblocks = 1};
    b->blk[3] = (gm_layout_block_t){0, 2 * MIB, 1, 1};
    b->l = (gm_layout_t){b->seg, 2, b->blk, 4};
}

/* Many small segments of many blocks (its encoding compresses). */
static void big_layout(lay_buf_t *b)
{
    memset(b, 0, sizeof *b);
    size_t nb = 0;
    for (size_t i = 0; i < 64; i++) {
        b->seg[i] = (gm_layout_segment_t){.address = 0x20000000 + i * 2 * MIB, .size = 2 * MIB,
                                          .pool = GM_POOL_SMALL, .first_block = nb,
                                          .nblocks = 64};
        for (size_t k = 0; k < 64; k++, nb++)
            b->blk[nb] = (gm_layout_block_t){k * 32768, 32768, k % 3 ? 30000 : 0,
                                             k % 3 ? (int64_t)(nb % 1000) : GM_LAYOUT_FREE};
    }
    b->l = (gm_layout_t){b->seg, 64, b->blk, nb};
}

static void assert_same(const gm_layout_t *a, const gm_layout_t *b)
{
    cr_assert_eq(a->nsegments, b->nsegments);
    cr_assert_eq(a->nblocks, b->nblocks);
    for (size_t i = 0; i < a->nsegments; i++) {
        const gm_layout_segment_t *x = &a->segments[i], *y = &b->segments[i];
        cr_assert(x->address == y->address && x->size == y->size && x->stream == y->stream &&
                      x->stream_index == y->stream_index && x->device == y->device &&
                      x->pool == y->pool && x->expandable == y->expandable &&
                      x->first_block == y->first_block && x->nblocks == y->nblocks,
                  "segment %zu differs", i);
    }
    for (size_t i = 0; i < a->nblocks; i++)
        cr_assert(a->blocks[i].offset == b->blocks[i].offset &&
                      a->blocks[i].size == b->blocks[i].size &&
                      a->blocks[i].requested == b->blocks[i].requested &&
                      a->blocks[i].id == b->blocks[i].id,
                  "block %zu differs", i);
}

/* Write trace `name` with two allocations and, when l != NULL, layout l. */
static void write_trace(gm_store_t *s, const char *name, const gm_layout_t *l, unsigned flags)
{
    gm_error_t err;
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, name, flags, &w, &err), 0, "%s", err.msg);
    uint32_t si;
    cr_assert_eq(gm_writer_stream(w, 0, &si, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 77, &si, &err), 0);
    for (uint64_t i = 0; i < 2; i++) {
        gm_event_t e = {.op = GM_OP_ALLOC, .id = i, .size = 100 + i,
                        .flags = GM_EVENT_PREEXISTING};
        cr_assert_eq(gm_writer_add(w, &e, &err), 0, "%s", err.msg);
    }
    if (l)
        cr_assert_eq(gm_writer_layout(w, l, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
}

static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void sql_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
    sqlite3_close(db);
}

Test(layout, round_trip)
{
    const char *path = gt_tmpfile("rt.db");
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    lay_buf_t a, b;
    small_layout(&a, 1);
    big_layout(&b);
    write_trace(s, "small", &a.l, 0);
    write_trace(s, "big", &b.l, 0);
    write_trace(s, "none", NULL, 0);
    gm_layout_t *got;
    cr_assert_eq(gm_store_layout(s, "small", &got, &err), 0, "%s", err.msg);
    cr_assert(got != NULL);
    assert_same(&a.l, got);
    gm_layout_free(got);
    cr_assert_eq(gm_store_layout(s, "big", &got, &err), 0, "%s", err.msg);
    assert_same(&b.l, got);
    gm_layout_free(got);
    cr_assert_eq(gm_store_layout(s, "none", &got, &err), 0, "%s", err.msg);
    cr_assert_null(got);
    cr_assert_eq(gm_store_layout(s, "absent", &got, &err), GM_ENOTFOUND);
    cr_assert_null(got);
    gm_store_close(s);
    /* the big one is stored compressed, the small one as it is */
    cr_assert_eq(sql_int(path, "SELECT count(*) FROM layouts"), 2);
    cr_assert_eq(sql_int(path, "SELECT substr(data, 4, 1) = x'01' FROM layouts WHERE trace_id = "
                               "(SELECT id FROM traces WHERE name = 'big')"),
                 1);
    cr_assert_eq(sql_int(path, "PRAGMA user_version"), GM_STORE_SCHEMA_VERSION);
}

Test(layout, writer_refusals_and_rollback)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0);
    lay_buf_t a;
    small_layout(&a, 1);
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, "t", 0, &w, &err), 0);
    /* blocks that do not tile their segment */
    a.blk[2].size -= 512;
    cr_assert_eq(gm_writer_layout(w, &a.l, &err), GM_EINVAL);
    cr_assert(strstr(err.msg, "trace 't'") != NULL, "%s", err.msg);
    a.blk[2].size += 512;
    cr_assert_eq(gm_writer_layout(w, &a.l, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_layout(w, &a.l, &err), GM_ESTATE);
    gm_writer_abort(w);
    gm_layout_t *got;
    cr_assert_eq(gm_store_layout(s, "t", &got, &err), GM_ENOTFOUND);

    /* Written again after the abort: the aborted layout left nothing. */
    gm_store_close(s);
    const char *path = gt_tmpfile("rb.db");
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    cr_assert_eq(gm_writer_begin(s, "t", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_layout(w, &a.l, &err), 0, "%s", err.msg);
    gm_writer_abort(w);
    gm_store_close(s);
    cr_assert_eq(sql_int(path, "SELECT count(*) FROM layouts"), 0);
}

/* A refusal names the place plainly, addresses included, and says what
 * is wrong (it said "layout segment 0 block 1: bad owner or requested
 * size"). */
Test(layout, refusals_name_the_segment_and_block)
{
    lay_buf_t a;
    gm_error_t err;
    small_layout(&a, 0);
    a.blk[1].requested = 0;
    cr_assert_eq(gm_layout_validate(&a.l, &err), GM_EFORMAT);
    cr_expect_str_eq(err.msg, "starting layout: segment 0 at 0x7f0000000000 (20971520 bytes): "
                              "block 1 at 0x7f0000200000 (6291456 bytes, owner 0, 0 requested) "
                              "is allocated but requests 0 bytes");
    a.blk[1].requested = 7 * MIB;
    cr_assert_eq(gm_layout_validate(&a.l, &err), GM_EFORMAT);
    cr_expect(strstr(err.msg, "requests more bytes than it has") != NULL, "%s", err.msg);
    small_layout(&a, 0);
    a.blk[2].requested = 1;
    cr_assert_eq(gm_layout_validate(&a.l, &err), GM_EFORMAT);
    cr_expect(strstr(err.msg, "block 2 at 0x7f0000800000 (12582912 bytes, owner -1, 1 "
                              "requested) is free but requests bytes") != NULL,
              "%s", err.msg);
    small_layout(&a, 0);
    a.blk[2].offset += 512;
    cr_assert_eq(gm_layout_validate(&a.l, &err), GM_EFORMAT);
    cr_expect(strstr(err.msg, "segment 0 at 0x7f0000000000 (20971520 bytes): block 2 at "
                              "0x7f0000800200 (12582912 bytes) does not tile the segment "
                              "(expected at 0x7f0000800000)") != NULL,
              "%s", err.msg);
}

Test(layout, replaced_and_deleted_with_the_trace)
{
    const char *path = gt_tmpfile("rd.db");
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    lay_buf_t a, b;
    small_layout(&a, 1);
    big_layout(&b);
    write_trace(s, "t", &a.l, 0);
    write_trace(s, "t", &b.l, GM_WRITE_REPLACE);
    gm_layout_t *got;
    cr_assert_eq(gm_store_layout(s, "t", &got, &err), 0, "%s", err.msg);
    assert_same(&b.l, got);
    gm_layout_free(got);
    cr_assert_eq(sql_int(path, "SELECT count(*) FROM layouts"), 1);
    cr_assert_eq(gm_store_delete(s, "t", &err), 0, "%s", err.msg);
    gm_store_close(s);
    cr_assert_eq(sql_int(path, "SELECT count(*) FROM layouts"), 0);
}

/* Damaged rows: every byte flipped, the blob cut short, a stream index the
 * trace lacks, a missing table in a version-2 store. */
Test(layout, damaged_rows, .timeout = 120)
{
    const char *path = gt_tmpfile("dm.db");
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    lay_buf_t a;
    small_layout(&a, 1);
    write_trace(s, "t", &a.l, 0);
    gm_store_close(s);
    int64_t len = sql_int(path, "SELECT length(data) FROM layouts");
    cr_assert(len > 8);
    size_t refused = 0;
    for (int64_t i = 1; i <= len; i++) {
        /* flip byte i of the blob */
        sqlite3 *db;
        cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
        sqlite3_stmt *st;
        cr_assert_eq(sqlite3_prepare_v2(db, "SELECT data FROM layouts", -1, &st, NULL),
                     SQLITE_OK);
        cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
        unsigned char *blob = malloc((size_t)len);
        memcpy(blob, sqlite3_column_blob(st, 0), (size_t)len);
        sqlite3_finalize(st);
        blob[i - 1] ^= 0x5a;
        cr_assert_eq(sqlite3_prepare_v2(db, "UPDATE layouts SET data = ?1", -1, &st, NULL),
                     SQLITE_OK);
        sqlite3_bind_blob(st, 1, blob, (int)len, SQLITE_TRANSIENT);
        cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
        sqlite3_finalize(st);
        cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
        gm_layout_t *got = NULL;
        int rc = gm_store_layout(s, "t", &got, &err);
        cr_assert(rc == 0 || rc == GM_ECORRUPT, "byte %lld: %d %s", (long long)i, rc, err.msg);
        if (rc == 0) {
            cr_assert(got != NULL);
            cr_assert_eq(gm_layout_validate(got, &err), 0);
        } else {
            refused++;
            cr_assert(strstr(err.msg, path) != NULL && strstr(err.msg, "trace 't'") != NULL,
                      "%s", err.msg);
        }
        gm_layout_free(got);
        gm_store_close(s);
        /* restore */
        blob[i - 1] ^= 0x5a;
        cr_assert_eq(sqlite3_prepare_v2(db, "UPDATE layouts SET data = ?1", -1, &st, NULL),
                     SQLITE_OK);
        sqlite3_bind_blob(st, 1, blob, (int)len, SQLITE_TRANSIENT);
        cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
        sqlite3_finalize(st);
        free(blob);
        sqlite3_close(db);
    }
    cr_assert(refused > 0);

    sql_exec(path, "UPDATE layouts SET data = substr(data, 1, 6)");
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0);
    gm_layout_t *got;
    cr_assert_eq(gm_store_layout(s, "t", &got, &err), GM_ECORRUPT);
    gm_store_close(s);

    /* a stream index beyond the trace's streams */
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    small_layout(&a, 9);
    write_trace(s, "t", &a.l, GM_WRITE_REPLACE);
    cr_assert_eq(gm_store_layout(s, "t", &got, &err), GM_ECORRUPT);
    cr_assert(strstr(err.msg, "stream index 9") != NULL, "%s", err.msg);
    gm_store_close(s);

    sql_exec(path, "DROP TABLE layouts");
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_store_layout(s, "t", &got, &err), GM_ECORRUPT);
    cr_assert(strstr(err.msg, "layouts table is missing") != NULL, "%s", err.msg);
    gm_store_close(s);
}

/* A version-1 store: read-only it has no layouts; writable it is upgraded
 * (to the current version: layouts, then shards) and keeps its traces. */
Test(layout, version1_store)
{
    const char *path = gt_tmpfile("v1.db");
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    write_trace(s, "old", NULL, 0);
    gm_store_close(s);
    sql_exec(path, "DROP TABLE layouts; DROP TABLE shards; PRAGMA user_version = 1;");

    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_layout_t *got = (gm_layout_t *)1;
    cr_assert_eq(gm_store_layout(s, "old", &got, &err), 0, "%s", err.msg);
    cr_assert_null(got);
    gm_trace_info_t t;
    cr_assert_eq(gm_store_find(s, "old", &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.allocs, 2);
    gm_trace_info_release(&t);
    gm_store_close(s);
    cr_assert_eq(sql_int(path, "PRAGMA user_version"), 1, "a read-only open changed the file");

    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    lay_buf_t a;
    small_layout(&a, 1);
    write_trace(s, "new", &a.l, 0);
    cr_assert_eq(gm_store_layout(s, "new", &got, &err), 0, "%s", err.msg);
    assert_same(&a.l, got);
    gm_layout_free(got);
    cr_assert_eq(gm_store_find(s, "old", &t, &err), 0, "%s", err.msg);
    gm_trace_info_release(&t);
    gm_store_close(s);
    cr_assert_eq(sql_int(path, "PRAGMA user_version"), GM_STORE_SCHEMA_VERSION);
    cr_assert_eq(sql_int(path, "SELECT count(*) FROM shards"), 0);

    /* another version is still refused */
    sql_exec(path, "PRAGMA user_version = 7");
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), GM_ESCHEMA);
}
