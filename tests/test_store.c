/*
 * tests/test_store.c — the trace store: round trips of seeded random traces
 * (read back event by event against the writer's renumbering), many traces
 * in a file, replace/delete/list, attributes, every validation error, files
 * that are not stores, transactions, chunking and the digest.  Damaged and
 * tampered stores are in test_store_tampered.c; what is checked on read,
 * replay results, two writers and the SQLite error map in
 * test_store_read.c; the fixtures all three share (the seeded random trace,
 * its writer and event-by-event check, plain SQL on a store file) in
 * tests/support/store_fixture.c.
 */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/codec.h"
#include "support/store_fixture.h"
#include "util.h"

/* ---- round trips --------------------------------------------------------- */

Test(store, round_trip_random_traces)
{
    gm_store_t *s = st_open_new("roundtrip.db");
    for (uint64_t seed = 1; seed <= 6; seed++) {
        size_t n = seed == 6 ? 150000 : (size_t)(seed * 7777);
        st_trace_t t = st_random(seed, n, (int)(seed % 2));
        char name[32];
        snprintf(name, sizeof name, "trace-%llu", (unsigned long long)seed);
        st_write(s, name, &t, 0);
        st_check(s, name, &t);
        st_trace_free(&t);
    }
    gm_store_close(s);
}

Test(store, memory_store_works)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    cr_assert_str_eq(gm_store_path(s), ":memory:");
    st_trace_t t = st_random(9, 70000, 1);
    st_write(s, "m", &t, 0);
    st_check(s, "m", &t);
    st_trace_free(&t);
    gm_store_close(s);
}

Test(store, interned_tables)
{
    gm_store_t *s = st_open_new("interned.db");
    gm_writer_t *w;
    gm_error_t err;
    uint32_t a, b, c;
    cr_assert_eq(gm_writer_begin(s, "t", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 0x7f00, &a, &err), 0);
    cr_assert_eq(gm_writer_stream(w, UINT64_MAX, &b, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 0x7f00, &c, &err), 0);
    cr_assert(a == 0 && b == 1 && c == 0);
    cr_assert_eq(gm_writer_stream(w, UINT64_MAX, &c, &err), 0);
    cr_assert_eq(c, 1);
    cr_assert_eq(gm_writer_tag(w, "step", &a, &err), 0);
    cr_assert_eq(gm_writer_tag(w, "fwd \"x\"", &b, &err), 0);
    cr_assert_eq(gm_writer_tag(w, "step", &c, &err), 0);
    cr_assert(a == 0 && b == 1 && c == 0);
    cr_assert_eq(gm_writer_frames(w, "a.py:1", &a, &err), 0);
    cr_assert_eq(gm_writer_frames(w, "b.py:2", &b, &err), 0);
    cr_assert_eq(gm_writer_frames(w, "a.py:1", &c, &err), 0);
    cr_assert(a == 1 && b == 2 && c == 1);
    /* many distinct names (the intern table grows) */
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "n%d", i);
        cr_assert_eq(gm_writer_tag(w, name, &a, &err), 0);
        cr_assert_eq(a, (uint32_t)i + 2);
    }
    gm_event_t e = {.op = GM_OP_MARK, .tag = 1};
    cr_assert_eq(gm_writer_add(w, &e, &err), 0);
    gm_event_t al = {.op = GM_OP_ALLOC, .id = 0, .size = 10, .stream = 1, .frames = 2};
    cr_assert_eq(gm_writer_add(w, &al, &err), 0);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);

    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_reader_stream_count(r), 2);
    cr_assert_eq(gm_reader_stream(r, 0), 0x7f00);
    cr_assert_eq(gm_reader_stream(r, 1), UINT64_MAX);
    cr_assert_eq(gm_reader_stream(r, 2), 0);
    cr_assert_eq(gm_reader_tag_count(r), 1002);
    cr_assert_str_eq(gm_reader_tag(r, 0), "step");
    cr_assert_str_eq(gm_reader_tag(r, 1), "fwd \"x\"");
    cr_assert_str_eq(gm_reader_tag(r, 1001), "n999");
    cr_assert_null(gm_reader_tag(r, 1002));
    cr_assert_eq(gm_reader_find_tag(r, "n5"), 7);
    cr_assert_eq(gm_reader_find_tag(r, "nope"), -1);
    cr_assert_null(gm_reader_frames(r, 0));
    cr_assert_str_eq(gm_reader_frames(r, 1), "a.py:1");
    cr_assert_str_eq(gm_reader_frames(r, 2), "b.py:2");
    cr_assert_null(gm_reader_frames(r, 3));
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0);
    cr_assert_eq(n, 2);
    cr_assert_eq(ev[1].stream, 1);
    cr_assert_eq(ev[1].frames, 2);
    gm_reader_close(r);
    /* plain SQL sees the tables */
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    cr_assert_eq(st_sql_int(path, "SELECT handle FROM streams WHERE idx = 1"), -1);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM frames WHERE idx >= 1"), 2);
    gm_store_close(s);
}

Test(store, empty_trace)
{
    gm_store_t *s = st_open_new("empty.db");
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "nothing", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "nothing", &info, &err), 0);
    cr_assert_eq(info.events, 0);
    cr_assert_eq(info.chunks, 0);
    cr_assert_str_eq(info.attrs, "{\"dropped_zero_size\": 0}");
    gm_trace_info_release(&info);
    gm_reader_t *r;
    const gm_event_t *ev;
    size_t n = 5;
    cr_assert_eq(gm_reader_open(s, "nothing", &r, &err), 0);
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0);
    cr_assert_eq(n, 0);
    gm_reader_close(r);
    gm_store_close(s);
}

/* ---- many traces, list, replace, delete ---------------------------------- */

Test(store, many_traces_listed_in_name_order)
{
    gm_store_t *s = st_open_new("many.db");
    static const char *const names[] = {"zeta", "alpha", "Mid", "beta-2", "beta-10", "é"};
    st_trace_t t[6];
    for (int i = 0; i < 6; i++) {
        t[i] = st_random(100 + (uint64_t)i, 3000 + 500 * (size_t)i, i % 2);
        st_write(s, names[i], &t[i], 0);
    }
    gm_trace_info_t *list;
    size_t n;
    gm_error_t err;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 6);
    static const char *const sorted[] = {"Mid", "alpha", "beta-10", "beta-2", "zeta", "é"};
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_eq(list[i].name, sorted[i]);
        cr_assert(list[i].bytes > 0);
        cr_assert(list[i].attrs != NULL);
    }
    gm_trace_info_free_list(list, n);
    for (int i = 0; i < 6; i++) {
        st_check(s, names[i], &t[i]);
        st_trace_free(&t[i]);
    }
    gm_store_close(s);
}

Test(store, replace_and_exists)
{
    gm_store_t *s = st_open_new("replace.db");
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    st_trace_t a = st_random(1, 80000, 0), b = st_random(2, 5000, 1);
    st_write(s, "x", &a, 0);
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "x", 0, &w, &err), GM_EEXIST);
    char want[1200];
    snprintf(want, sizeof want, "trace 'x' already exists in '%s'", path);
    cr_assert_str_eq(err.msg, want);

    /* a replacement that is aborted leaves the old trace */
    cr_assert_eq(gm_writer_begin(s, "x", GM_WRITE_REPLACE, &w, &err), 0);
    st_intern(w, &b);
    for (size_t i = 0; i < b.ngiven; i++)
        cr_assert_eq(gm_writer_add(w, &b.given[i], &err), 0);
    /* the old trace stays readable while the replacement is written */
    st_check(s, "x", &a);
    gm_writer_abort(w);
    st_check(s, "x", &a);

    st_write(s, "x", &b, GM_WRITE_REPLACE);
    st_check(s, "x", &b);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM traces"), 1);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM chunks WHERE trace_id NOT IN "
                                  "(SELECT id FROM traces)"),
                 0);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM chunks"), 1);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM streams"), 3);
    st_trace_free(&a);
    st_trace_free(&b);
}

Test(store, delete_trace)
{
    gm_store_t *s = st_open_new("delete.db");
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    st_trace_t a = st_random(3, 70000, 1), b = st_random(4, 1000, 1);
    st_write(s, "a", &a, 0);
    st_write(s, "b", &b, 0);
    gm_error_t err;
    cr_assert_eq(gm_store_delete(s, "a", &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "a", &info, &err), GM_ENOTFOUND);
    cr_assert_eq(gm_store_delete(s, "a", &err), GM_ENOTFOUND);
    char want[1200];
    snprintf(want, sizeof want, "no trace 'a' in '%s'", path);
    cr_assert_str_eq(err.msg, want);
    st_check(s, "b", &b);
    /* the name is free again */
    st_write(s, "a", &b, 0);
    st_check(s, "a", &b);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM chunks"), 2);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM tags"), 8);
    st_trace_free(&a);
    st_trace_free(&b);
}

Test(store, missing_trace_name)
{
    gm_store_t *s = st_open_new("missing.db");
    gm_error_t err;
    gm_trace_info_t info;
    char want[1200];
    snprintf(want, sizeof want, "no trace 'ghost' in '%s'", gm_store_path(s));
    cr_assert_eq(gm_store_find(s, "ghost", &info, &err), GM_ENOTFOUND);
    cr_assert_str_eq(err.msg, want);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "ghost", &r, &err), GM_ENOTFOUND);
    cr_assert_str_eq(err.msg, want);
    gm_trace_info_t *list;
    size_t n = 9;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0);
    cr_assert_eq(n, 0);
    gm_trace_info_free_list(list, n);
    gm_store_close(s);
}

/* ---- attributes ---------------------------------------------------------- */

Test(store, attributes_json)
{
    gm_store_t *s = st_open_new("attrs.db");
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "t", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_attr_str(w, "source", "torch", &err), 0);
    cr_assert_eq(gm_writer_attr_int(w, "seq_len", 2048, &err), 0);
    cr_assert_eq(gm_writer_attr_int(w, "neg", INT64_MIN, &err), 0);
    const char *conf = " {\"a\": [1, 2.5e-3, true, null], \"b\": \"\\u00e9\"} ";
    const char *weird = "line\nquote\" back\\ tab\t \x01 é \xff!";
    cr_assert_eq(gm_writer_attr_json(w, "conf", conf, &err), 0);
    cr_assert_eq(gm_writer_attr_str(w, "weird \"key\"", weird, &err), 0);
    cr_assert_eq(gm_writer_attr_str(w, "source", "csv", &err), 0); /* last write wins */
    cr_assert_eq(gm_writer_attr_str(w, "nothing", NULL, &err), 0);
    /* not one JSON value */
    static const char *const bad[] = {"", "{", "[1,]", "01", "1 2", "\"a", "tru", "{\"a\" 1}",
                                      "{1: 2}", "1.", "-", "\"\\x\"", "\"\x01\"", "nulll"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert_eq(gm_writer_attr_json(w, "bad", bad[i], &err), GM_EINVAL, "'%s'", bad[i]);
    cr_assert_eq(gm_writer_attr_json(w, "", "1", &err), GM_EINVAL);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "t", &info, &err), 0);
    cr_assert_str_eq(info.attrs,
                     "{\"source\": \"csv\", \"seq_len\": 2048, \"neg\": -9223372036854775808, "
                     "\"conf\": {\"a\": [1, 2.5e-3, true, null], \"b\": \"\\u00e9\"}, "
                     "\"weird \\\"key\\\"\": "
                     "\"line\\nquote\\\" back\\\\ tab\\t \\u0001 é \\ufffd!\", "
                     "\"nothing\": null, \"dropped_zero_size\": 0}");
    gm_trace_info_release(&info);
    /* SQLite's JSON functions read it */
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    cr_assert_eq(st_sql_int(path, "SELECT json_extract(attrs, '$.seq_len') FROM traces"), 2048);
    cr_assert_eq(st_sql_int(path, "SELECT json_valid(attrs) FROM traces"), 1);
    gm_store_close(s);
}

Test(store, zero_size_allocations_dropped_and_counted)
{
    gm_store_t *s = st_open_new("zero.db");
    gm_event_t ev[] = {
        {.op = GM_OP_ALLOC, .id = 0, .size = 100, .ts_ns = 1},
        {.op = GM_OP_ALLOC, .id = 1, .size = 0, .ts_ns = 2},
        {.op = GM_OP_ALLOC, .id = 2, .size = 50, .ts_ns = 3},
        {.op = GM_OP_FREE, .id = 1, .ts_ns = 4},
        {.op = GM_OP_ALLOC, .id = 3, .size = 0, .ts_ns = 5},
        {.op = GM_OP_FREE, .id = 0, .ts_ns = 6},
        {.op = GM_OP_ALLOC, .id = 4, .size = 7, .ts_ns = 7},
        {.op = GM_OP_FREE, .id = 4, .ts_ns = 8},
    };
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "z", 0, &w, &err), 0);
    /* a nested member of the same name does not confuse info.dropped */
    cr_assert_eq(gm_writer_attr_json(w, "source", "{\"dropped_zero_size\": 5}", &err), 0);
    cr_assert_eq(gm_writer_attr_int(w, "dropped_zero_size", 99, &err), 0); /* overridden */
    for (size_t i = 0; i < sizeof ev / sizeof *ev; i++)
        cr_assert_eq(gm_writer_add(w, &ev[i], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_position(w), 8);
    cr_assert_eq(gm_writer_finish(w, &err), 0);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "z", &info, &err), 0);
    cr_assert_str_eq(info.attrs,
                     "{\"source\": {\"dropped_zero_size\": 5}, \"dropped_zero_size\": 2}");
    cr_assert_eq(info.dropped, 2);
    cr_assert_eq(info.events, 5);
    cr_assert_eq(info.allocs, 3);
    cr_assert_eq(info.frees, 2);
    cr_assert_eq(info.load, 150);
    cr_assert_eq(info.live_at_end, 1);
    gm_trace_info_release(&info);
    gm_reader_t *r;
    const gm_event_t *got;
    size_t n;
    cr_assert_eq(gm_reader_open(s, "z", &r, &err), 0);
    cr_assert_eq(gm_reader_next(r, &got, &n, &err), 0);
    cr_assert_eq(n, 5);
    uint64_t ids[5] = {0, 1, 0, 2, 2}, ts[5] = {1, 3, 6, 7, 8};
    uint8_t ops[5] = {GM_OP_ALLOC, GM_OP_ALLOC, GM_OP_FREE, GM_OP_ALLOC, GM_OP_FREE};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(got[i].op, ops[i], "event %d", i);
        cr_assert_eq(got[i].id, ids[i], "event %d", i);
        cr_assert_eq(got[i].ts_ns, ts[i], "event %d", i);
    }
    gm_reader_close(r);
    gm_store_close(s);
}

/* ---- validation ---------------------------------------------------------- */

Test(store, validation_errors_name_the_event)
{
    gm_store_t *s = st_open_new("validate.db");
    int rc;
    uint64_t at;
    gm_error_t err;
    gm_event_t a[16];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 16; i++) {
        a[i].op = GM_OP_ALLOC;
        a[i].id = (uint64_t)i;
        a[i].size = 64;
    }

    /* free of an id never allocated */
    gm_event_t e1[4] = {a[0], a[1], a[2], {.op = GM_OP_FREE, .id = 99}};
    err = st_add_until_error(s, e1, 4, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 3: free of unknown id 99");

    /* double free, counting a zero-size ALLOC in the ids and the index */
    gm_event_t e2[14];
    for (int i = 0; i < 12; i++)
        e2[i] = a[i];
    e2[3].size = 0;
    e2[12] = (gm_event_t){.op = GM_OP_FREE, .id = 5};
    e2[13] = (gm_event_t){.op = GM_OP_FREE, .id = 5};
    err = st_add_until_error(s, e2, 14, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 13: double free of id 5");

    /* double free of a dropped zero-size allocation */
    gm_event_t e3[3] = {a[0], {.op = GM_OP_FREE, .id = 0}, {.op = GM_OP_FREE, .id = 0}};
    e3[0].size = 0;
    err = st_add_until_error(s, e3, 3, &rc, &at);
    cr_assert_str_eq(err.msg, "event 2: double free of id 0");

    /* size above 2^48 */
    gm_event_t e4[8];
    memcpy(e4, a, sizeof e4);
    e4[7].size = GM_SIZE_LIMIT + 1;
    err = st_add_until_error(s, e4, 8, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 7: size 281474976710657 above the 2^48 limit");
    /* exactly 2^48 is fine */
    e4[7].size = GM_SIZE_LIMIT;
    err = st_add_until_error(s, e4, 8, &rc, &at);
    cr_assert_eq(rc, 0, "%s", err.msg);
    /* and a segment above it is not */
    gm_event_t e5[2] = {a[0], {.op = GM_OP_SEG_ALLOC, .size = GM_SIZE_LIMIT + 2}};
    err = st_add_until_error(s, e5, 2, &rc, &at);
    cr_assert_str_eq(err.msg, "event 1: size 281474976710658 above the 2^48 limit");

    /* live requested bytes past 2^62: 2^14 + 1 live allocations of 2^48 */
    size_t nbig = ((size_t)1 << 14) + 1;
    gm_event_t *big = calloc(nbig, sizeof *big);
    for (size_t i = 0; i < nbig; i++)
        big[i] = (gm_event_t){.op = GM_OP_ALLOC, .id = i, .size = GM_SIZE_LIMIT};
    err = st_add_until_error(s, big, nbig, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 16384: live requested bytes would pass the 2^62 limit");
    free(big);

    /* ALLOC ids out of order */
    gm_event_t e6[3] = {a[0], a[2], a[1]};
    err = st_add_until_error(s, e6, 3, &rc, &at);
    cr_assert_eq(rc, GM_EFORMAT);
    cr_assert_str_eq(err.msg, "event 1: alloc id 2 out of order, expected 1");

    /* unknown op */
    gm_event_t e7[2] = {a[0], {.op = 9}};
    err = st_add_until_error(s, e7, 2, &rc, &at);
    cr_assert_str_eq(err.msg, "event 1: unknown op 9");

    /* interned indices never interned (one tag and one stream exist) */
    gm_event_t e8[2] = {{.op = GM_OP_MARK, .tag = 0}, {.op = GM_OP_MARK, .tag = 1}};
    err = st_add_until_error(s, e8, 2, &rc, &at);
    cr_assert_str_eq(err.msg, "event 1: tag index 1 was never interned");
    gm_event_t e9[2] = {a[0], a[1]};
    e9[1].stream = 1;
    err = st_add_until_error(s, e9, 2, &rc, &at);
    cr_assert_str_eq(err.msg, "event 1: stream index 1 was never interned");
    gm_event_t e10[1] = {a[0]};
    e10[0].frames = 1;
    err = st_add_until_error(s, e10, 1, &rc, &at);
    cr_assert_str_eq(err.msg, "event 0: frames index 1 was never interned");
    gm_trace_info_t *list;
    size_t n;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0);
    cr_assert_eq(n, 0);
    gm_trace_info_free_list(list, n);
    gm_store_close(s);
}

Test(store, writer_state_rules)
{
    gm_store_t *s = st_open_new("state.db");
    gm_writer_t *w, *w2;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "", 0, &w, &err), GM_EINVAL);
    cr_assert_eq(gm_writer_begin(s, "one", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_begin(s, "two", 0, &w2, &err), GM_ESTATE);
    cr_assert_eq(gm_store_delete(s, "one", &err), GM_ESTATE);
    gm_writer_abort(w);
    gm_writer_abort(NULL);
    cr_assert_eq(gm_writer_begin(s, "two", 0, &w2, &err), 0);
    cr_assert_eq(gm_writer_finish(w2, &err), 0);
    gm_store_close(s);
}

/* ---- files that are not stores ------------------------------------------- */

Test(store, file_that_is_not_a_database)
{
    const char *path = gt_tmpfile("garbage.db");
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 4096; i++)
        fputc((i * 7919) & 0xff, f);
    fclose(f);
    char want[1200];
    snprintf(want, sizeof want, "cannot open '%s': file is not a database", path);
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        gm_store_t *s = (gm_store_t *)1;
        gm_error_t err = {0};
        cr_assert_eq(gm_store_open(path, flags, &s, &err), GM_EFORMAT, "%s", err.msg);
        cr_assert_str_eq(err.msg, want);
        cr_assert_null(s);
    }
}

Test(store, database_of_another_schema_version)
{
    const char *path = gt_tmpfile("v7.db");
    unlink(path);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "PRAGMA user_version"), GM_STORE_SCHEMA_VERSION);
    cr_assert_eq(st_sql(path, "PRAGMA user_version = 7; PRAGMA journal_mode = WAL"), SQLITE_OK);
    char want[1200];
    snprintf(want, sizeof want, "'%s' has schema version 7, this gmsim reads version %d", path,
             GM_STORE_SCHEMA_VERSION);
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        cr_assert_eq(gm_store_open(path, flags, &s, &err), GM_ESCHEMA);
        cr_assert_str_eq(err.msg, want);
    }
    /* never rewritten, not even its journal mode */
    cr_assert_eq(st_sql_int(path, "PRAGMA user_version"), 7);
    cr_assert_eq(st_header_byte(path, 18), 2, "a refused file was taken out of WAL mode");
}

Test(store, sqlite_file_without_our_schema)
{
    const char *path = gt_tmpfile("foreign.db");
    unlink(path);
    cr_assert_eq(st_sql(path, "CREATE TABLE t (x)"), SQLITE_OK);
    char want[1200];
    snprintf(want, sizeof want, "'%s' is not a gmsim trace store", path);
    gm_store_t *s;
    gm_error_t err;
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        cr_assert_eq(gm_store_open(path, flags, &s, &err), GM_EFORMAT);
        cr_assert_str_eq(err.msg, want);
    }
    /* an empty file is a database with nothing in it */
    const char *empty = gt_tmpfile("empty-file.db");
    fclose(fopen(empty, "wb"));
    snprintf(want, sizeof want, "'%s' is not a gmsim trace store", empty);
    cr_assert_eq(gm_store_open(empty, GM_STORE_READONLY, &s, &err), GM_EFORMAT);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(gm_store_open(empty, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
    cr_assert_eq(gm_store_open(empty, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
}

Test(store, missing_file_read_only)
{
    const char *path = gt_tmpfile("does-not-exist.db");
    unlink(path);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), GM_EIO);
    cr_assert(strstr(err.msg, path) != NULL, "%s", err.msg);
    char want[1200];
    snprintf(want, sizeof want, "cannot open '%s': no such file", path);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(access(path, F_OK), -1); /* not created */
    cr_assert_eq(gm_store_open(gt_tmpdir(), GM_STORE_WRITE, &s, &err), GM_EIO);
}

Test(store, reopen_read_only)
{
    const char *path = gt_tmpfile("ro.db");
    unlink(path);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0);
    st_trace_t t = st_random(77, 100000, 1);
    st_write(s, "t", &t, 0);
    gm_store_close(s);
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    st_check(s, "t", &t);
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, "u", 0, &w, &err), GM_EINVAL);
    cr_assert_eq(gm_store_delete(s, "t", &err), GM_EINVAL);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM runs"), 0);
    cr_assert_eq(st_sql_int(path, "SELECT count(*) FROM timelines"), 0);
    st_trace_free(&t);
}

/* ---- transactions -------------------------------------------------------- */

Test(store, abort_leaves_nothing)
{
    gm_store_t *s = st_open_new("abort.db");
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    st_trace_t t = st_random(5, 140000, 1);
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "gone", 0, &w, &err), 0);
    st_intern(w, &t);
    for (size_t i = 0; i < t.ngiven; i++)
        cr_assert_eq(gm_writer_add(w, &t.given[i], &err), 0);
    /* another connection sees nothing of the unfinished trace */
    gm_store_t *other;
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &other, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(other, "gone", &info, &err), GM_ENOTFOUND);
    gm_store_close(other);
    gm_writer_abort(w);
    cr_assert_eq(gm_store_find(s, "gone", &info, &err), GM_ENOTFOUND);
    gm_store_close(s);
    static const char *const tables[] = {"traces", "chunks", "streams", "tags", "frames"};
    char sql[64];
    for (int i = 0; i < 5; i++) {
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]);
        cr_assert_eq(st_sql_int(path, sql), 0, "%s", tables[i]);
    }
    st_trace_free(&t);
}

Test(store, two_hundred_thousand_events_make_four_chunks)
{
    gm_store_t *s = st_open_new("chunks.db");
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "big", 0, &w, &err), 0);
    for (uint64_t i = 0; i < 200000; i++) {
        gm_event_t e = {.ts_ns = i * 1000};
        if (i % 2 == 0) {
            e.op = GM_OP_ALLOC;
            e.id = i / 2;
            e.size = 4096 + (i % 7) * 512;
        } else {
            e.op = GM_OP_FREE;
            e.id = i / 2;
        }
        cr_assert_eq(gm_writer_add(w, &e, &err), 0);
    }
    cr_assert_eq(gm_writer_finish(w, &err), 0);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "big", &info, &err), 0);
    cr_assert_eq(info.chunks, 4);
    cr_assert_eq(info.events, 200000);
    cr_assert_eq(info.load, 4096 + 6 * 512);
    cr_assert(info.bytes < 200000 * 2, "%llu bytes", (unsigned long long)info.bytes);
    gm_trace_info_release(&info);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "big", &r, &err), 0);
    const gm_event_t *ev;
    size_t n, calls = 0, total = 0;
    while (gm_reader_next(r, &ev, &n, &err) == 0 && n > 0) {
        cr_assert_eq(ev[0].ts_ns, total * 1000);
        calls++;
        total += n;
    }
    cr_assert_eq(calls, 4);
    cr_assert_eq(total, 200000);
    gm_reader_close(r);
    gm_store_close(s);
    cr_assert_eq(st_sql_int(path, "SELECT group_concat(first_event) = '0,65536,131072,196608' "
                                  "FROM (SELECT first_event FROM chunks ORDER BY seq)"),
                 1);
    cr_assert_eq(st_sql_int(path, "SELECT sum(nevents) FROM chunks"), 200000);
    cr_assert_eq(st_sql_int(path, "SELECT first_alloc FROM chunks WHERE seq = 3"), 98304);
}

/* ---- digest -------------------------------------------------------------- */

Test(store, digest_follows_content_not_name)
{
    gm_store_t *s = st_open_new("digest.db");
    st_trace_t a = st_random(8, 20000, 1), b = st_random(9, 20000, 1);
    st_write(s, "a1", &a, 0);
    gm_writer_t *w;
    gm_error_t err;
    cr_assert_eq(gm_writer_begin(s, "a2", 0, &w, &err), 0);
    cr_assert_eq(gm_writer_attr_str(w, "note", "other attrs", &err), 0);
    st_intern(w, &a);
    for (size_t i = 0; i < a.ngiven; i++)
        cr_assert_eq(gm_writer_add(w, &a.given[i], &err), 0);
    cr_assert_eq(gm_writer_finish(w, &err), 0);
    st_write(s, "b", &b, 0);
    gm_trace_info_t i1, i2, i3;
    cr_assert_eq(gm_store_find(s, "a1", &i1, &err), 0);
    cr_assert_eq(gm_store_find(s, "a2", &i2, &err), 0);
    cr_assert_eq(gm_store_find(s, "b", &i3, &err), 0);
    cr_assert_str_eq(i1.digest, i2.digest);
    cr_assert_str_neq(i1.digest, i3.digest);
    gm_trace_info_release(&i1);
    gm_trace_info_release(&i2);
    gm_trace_info_release(&i3);
    st_trace_free(&a);
    st_trace_free(&b);
    gm_store_close(s);
}
