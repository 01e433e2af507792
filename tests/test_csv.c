/*
 * tests/test_csv.c — the CSV format: round trips CSV → store → CSV, the
 * optional header, ids reused after their free, quoted fields (commas,
 * quotes, line breaks), streams and tags, zero sizes, and every row error
 * with its line number.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Import csv as trace `name` into a fresh in-memory store (*s, caller
 * closes).  Returns the import's result; the writer is finished on success
 * and aborted otherwise. */
static int import_text(const char *csv, gm_store_t **s, gm_error_t *err)
{
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, s, err), 0, "%s", err->msg);
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(*s, "t", 0, &w, err), 0, "%s", err->msg);
    int rc = gm_csv_import_buffer(csv, strlen(csv), "t.csv", w, err);
    if (rc != 0) {
        gm_writer_abort(w);
        return rc;
    }
    return gm_writer_finish(w, err);
}

static char *export_text(gm_store_t *s)
{
    gm_reader_t *r;
    gm_error_t err;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f != NULL);
    cr_assert_eq(gm_csv_export(r, f, &err), 0, "%s", err.msg);
    fclose(f);
    gm_reader_close(r);
    return buf;
}

/* Import then export; the store is closed. */
static char *round_trip(const char *csv)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_text(csv, &s, &err), 0, "%s", err.msg);
    char *out = export_text(s);
    gm_store_close(s);
    return out;
}

static const char canonical[] = "ts_ns,op,id,size,stream,device\n"
                                "0,mark,step,,,0\n"
                                "10,alloc,0,1024,0x0,0\n"
                                "20,alloc,1,2097152,0x7f0010,1\n"
                                "25,seg_alloc,0x7f0000000000,20971520,0x0,0\n"
                                "30,free,0,1024,0x0,0\n"
                                "40,alloc,2,512,0x0,0\n"
                                "45,mark,\"phase, with a comma\",,,0\n"
                                "50,free,2,512,0x0,0\n"
                                "60,free,1,2097152,0x7f0010,1\n";

Test(csv, canonical_round_trip_is_byte_identical)
{
    char *out = round_trip(canonical);
    cr_expect_str_eq(out, canonical);
    free(out);
}

Test(csv, application_ids_become_ordinals)
{
    /* No header, application ids (reused after free), decimal streams,
     * upper-case ops, spaces, CRLF, comments and blank lines. */
    const char *raw = "# a comment\n"
                      "\n"
                      "100, ALLOC, 9000, 64, 5, 0\r\n"
                      "200,alloc,0x10,128,5,0\n"
                      "  \n"
                      "300,Free,9000,,5,0\n"
                      "400,alloc,9000,256,,\n"
                      "500,free,16,,5,0\n"
                      "600,free,9000,999,,\n";
    const char *want = "ts_ns,op,id,size,stream,device\n"
                       "100,alloc,0,64,0x5,0\n"
                       "200,alloc,1,128,0x5,0\n"
                       "300,free,0,64,0x5,0\n"
                       "400,alloc,2,256,0x0,0\n"
                       "500,free,1,128,0x5,0\n"
                       "600,free,2,256,0x0,0\n";
    char *out = round_trip(raw);
    cr_expect_str_eq(out, want);
    char *again = round_trip(out);
    cr_expect_str_eq(again, want);
    free(out);
    free(again);
}

Test(csv, header_is_optional)
{
    const char *rows = "1,alloc,1,10,0,0\n2,free,1,,0,0\n";
    char with[256];
    snprintf(with, sizeof with, "ts_ns,op,id,size,stream,device\n%s", rows);
    char *a = round_trip(rows), *b = round_trip(with);
    cr_expect_str_eq(a, b);
    free(a);
    free(b);
    /* Case and spaces in the header do not matter. */
    char *c = round_trip("TS_NS, op ,ID,Size,stream,device\n1,alloc,1,10,0,0\n2,free,1,,0,0\n");
    char *d = round_trip(rows);
    cr_expect_str_eq(c, d);
    free(c);
    free(d);
}

Test(csv, ids_reused_after_free_get_new_ordinals)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_text("1,alloc,5,100,0,0\n2,free,5,,0,0\n3,alloc,5,200,0,0\n"
                             "4,alloc,6,300,0,0\n5,free,5,,0,0\n6,free,6,,0,0\n",
                             &s, &err),
                 0, "%s", err.msg);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 6);
    const uint64_t ids[] = {0, 0, 1, 2, 1, 2};
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(ev[i].id, ids[i], "event %zu", i);
    cr_expect_eq(ev[2].size, 200);
    cr_expect_eq(gm_reader_info(r)->load, 500);
    gm_reader_close(r);
    gm_store_close(s);
}

Test(csv, largest_id_is_an_ordinary_id)
{
    char *out = round_trip("1,alloc,18446744073709551615,7,0,0\n"
                           "2,alloc,0xfffffffffffffffe,8,0,0\n"
                           "3,free,0xffffffffffffffff,,0,0\n"
                           "4,free,18446744073709551614,,0,0\n");
    cr_expect_str_eq(out, "ts_ns,op,id,size,stream,device\n"
                          "1,alloc,0,7,0x0,0\n"
                          "2,alloc,1,8,0x0,0\n"
                          "3,free,0,7,0x0,0\n"
                          "4,free,1,8,0x0,0\n");
    free(out);
}

Test(csv, quoted_fields)
{
    /* Marks whose names hold commas, quotes, line breaks, leading spaces
     * and a '#'; and quoted numbers. */
    const char *in = "1,mark,\"a,b\",,,0\n"
                     "2,mark,\"say \"\"hi\"\"\",,,0\n"
                     "3,mark,\"two\nlines\",,,0\n"
                     "4,mark,\" padded \",,,0\n"
                     "5,mark,#hash,,,0\n"
                     "\"6\",\"alloc\",\"1\",\"10\",\"0x0\",\"0\"\n"
                     "7,free,1,,0,0\n";
    const char *want = "ts_ns,op,id,size,stream,device\n"
                       "1,mark,\"a,b\",,,0\n"
                       "2,mark,\"say \"\"hi\"\"\",,,0\n"
                       "3,mark,\"two\nlines\",,,0\n"
                       "4,mark,\" padded \",,,0\n"
                       "5,mark,\"#hash\",,,0\n"
                       "6,alloc,0,10,0x0,0\n"
                       "7,free,0,10,0x0,0\n";
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_text(in, &s, &err), 0, "%s", err.msg);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    cr_expect_str_eq(gm_reader_tag(r, 0), "a,b");
    cr_expect_str_eq(gm_reader_tag(r, 1), "say \"hi\"");
    cr_expect_str_eq(gm_reader_tag(r, 2), "two\nlines");
    cr_expect_str_eq(gm_reader_tag(r, 3), " padded ");
    cr_expect_str_eq(gm_reader_tag(r, 4), "#hash");
    gm_reader_close(r);
    char *out = export_text(s);
    gm_store_close(s);
    cr_expect_str_eq(out, want);
    char *again = round_trip(out);
    cr_expect_str_eq(again, want);
    free(out);
    free(again);
}

Test(csv, only_a_quote_opening_a_field_spans_lines)
{
    /* A quote in a comment or inside an unquoted field is just a
     * character: the next line is a record of its own. */
    char *out = round_trip("# it's \"quoted\n"
                           "1,mark,a\"b,,,0\n"
                           "2,alloc,1,10,0,0\n"
                           "3,free,1,,0,0\n");
    cr_expect_str_eq(out, "ts_ns,op,id,size,stream,device\n"
                          "1,mark,\"a\"\"b\",,,0\n"
                          "2,alloc,0,10,0x0,0\n"
                          "3,free,0,10,0x0,0\n");
    free(out);
}

Test(csv, streams_and_tags_are_interned)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_text("1,alloc,1,10,0x7f00,0\n2,alloc,2,10,0x7f10,0\n"
                             "3,alloc,3,10,32512,0\n4,mark,step,,,0\n5,mark,step,,,0\n"
                             "6,free,1,,0x7f00,0\n7,free,2,,0x7f10,0\n8,free,3,,0x7f00,0\n",
                             &s, &err),
                 0, "%s", err.msg);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    cr_expect_eq(gm_reader_stream_count(r), 2);
    cr_expect_eq(gm_reader_tag_count(r), 1);
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 8);
    cr_expect_eq(gm_reader_stream(r, ev[0].stream), 0x7f00);
    cr_expect_eq(gm_reader_stream(r, ev[1].stream), 0x7f10);
    cr_expect_eq(ev[2].stream, ev[0].stream, "32512 is 0x7f00");
    cr_expect_eq(ev[3].tag, ev[4].tag);
    cr_expect_eq(ev[3].op, GM_OP_MARK);
    gm_reader_close(r);
    gm_store_close(s);
}

Test(csv, zero_sizes_reach_the_writer)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_text("1,alloc,1,0,0,0\n2,alloc,2,10,0,0\n3,free,1,,0,0\n"
                             "4,free,2,,0,0\n",
                             &s, &err),
                 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "t", &info, &err), 0, "%s", err.msg);
    cr_expect_eq(info.allocs, 1);
    cr_expect_eq(info.frees, 1);
    cr_expect(strstr(info.attrs, "dropped_zero_size") != NULL, "%s", info.attrs);
    gm_trace_info_release(&info);
    char *out = export_text(s);
    cr_expect_str_eq(out, "ts_ns,op,id,size,stream,device\n"
                          "2,alloc,0,10,0x0,0\n"
                          "4,free,0,10,0x0,0\n");
    free(out);
    gm_store_close(s);
}

Test(csv, import_from_a_file_stream)
{
    FILE *f = tmpfile();
    cr_assert(f != NULL);
    fputs(canonical, f);
    rewind(f);
    gm_store_t *s;
    gm_import_target_t *t;
    gm_error_t err;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_target_create(s, "t", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_csv_import(f, "file.csv", t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_import_count(t), 1);
    cr_expect_str_eq(gm_import_name(t, 0), "t");
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    fclose(f);
    char *out = export_text(s);
    cr_expect_str_eq(out, canonical);
    free(out);
    gm_store_close(s);
}

Test(csv, cr_only_line_ends_are_named)
{
    static const char *const texts[] = {
        "ts_ns,op,id,size,stream,device\r0,alloc,1,10,0,0\r1,free,1,10,0,0\r",
        "0,alloc,1,10,0,0\r1,free,1,10,0,0\r",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        gm_store_t *s;
        gm_error_t err;
        cr_expect_eq(import_text(texts[i], &s, &err), GM_EFORMAT);
        cr_expect(strstr(err.msg, "'t.csv' line 1: a carriage return inside the line") != NULL &&
                      strstr(err.msg, "CR alone") != NULL,
                  "%s", err.msg);
        gm_store_close(s);
    }
    /* CRLF, and a CR inside a quoted field, still read */
    char *out = round_trip("ts_ns,op,id,size,stream,device\r\n0,mark,\"a\rb\",,,0\r\n");
    cr_expect_str_eq(out, "ts_ns,op,id,size,stream,device\n0,mark,\"a\rb\",,,0\n");
    free(out);
}

Test(csv, empty_input_is_an_empty_trace)
{
    char *out = round_trip("");
    cr_expect_str_eq(out, "ts_ns,op,id,size,stream,device\n");
    free(out);
    out = round_trip("ts_ns,op,id,size,stream,device\n# nothing\n");
    cr_expect_str_eq(out, "ts_ns,op,id,size,stream,device\n");
    free(out);
}

Test(csv, export_reports_write_errors)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_text(canonical, &s, &err), 0, "%s", err.msg);
    FILE *full = fopen("/dev/full", "w");
    if (full == NULL) {
        gm_store_close(s);
        cr_skip_test("/dev/full is absent");
    }
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), 0, "%s", err.msg);
    cr_expect_eq(gm_csv_export(r, full, &err), GM_EIO);
    cr_expect(strstr(err.msg, "cannot write") != NULL, "%s", err.msg);
    fclose(full);
    gm_reader_close(r);
    gm_store_close(s);
}

/* Every row error: the text, the line it must name, a part of the reason. */
static const struct {
    const char *csv;
    int line;
    const char *reason;
} bad_rows[] = {
    {"1,alloc,1,10,0,0\n2,free,2,,0,0\n", 2,
     "free of id 2 which is not live (never allocated, or already freed)"},
    {"1,alloc,1,10,0,0\n2,free,1,,0,0\n3,free,1,,0,0\n", 3,
     "free of id 1 which is not live (never allocated, or already freed)"},
    {"1,alloc,1,10,0,0\n\n# c\n2,alloc,1,5,0,0\n", 4, "alloc of id 1 which is already live"},
    {"ts_ns,op,id,size,stream,device\n1,allocate,1,1,0,0\n", 2, "unknown op 'allocate'"},
    {"1,,1,1,0,0\n", 1, "unknown op ''"},
    {"1,alloc,1,12x,0,0\n", 1, "invalid size '12x'"},
    {"1,alloc,1,-5,0,0\n", 1, "invalid size '-5'"},
    {"x,alloc,1,1,0,0\n", 1, "invalid ts_ns 'x'"},
    {"1,alloc,1,1,zz,0\n", 1, "invalid stream 'zz'"},
    {"1,alloc,1,1,0,0.5\n", 1, "invalid device '0.5'"},
    {"1,alloc,1,1,0,70000\n", 1, "device 70000 is out of range"},
    {"1,alloc,1,1,0x,0\n", 1, "invalid stream '0x'"},
    {"1,alloc,99999999999999999999,1,0,0\n", 1, "id '99999999999999999999' is too large"},
    {"1,alloc,1,10,0\n", 1, "expected 6 fields (ts_ns,op,id,size,stream,device), found 5"},
    {"1,alloc,1,10,0,0,7\n", 1, "expected 6 fields (ts_ns,op,id,size,stream,device), found 7"},
    {"1,alloc,1,281474976710657,0,0\n", 1, "size 281474976710657 is above the limit of 2^48"},
    {"1,seg_alloc,0x1000,281474976710657,0,0\n", 1, "is above the limit of 2^48"},
    {"1,alloc,,1,0,0\n", 1, "missing id"},
    {"1,alloc,1,,0,0\n", 1, "missing size"},
    {"1,free,,,0,0\n", 1, "missing id"},
    {"1,mark,,,,0\n", 1, "mark without a name"},
    {"1,mark,\"abc,,,0\n2,alloc,1,1,0,0\n", 1, "unterminated quoted field"},
    {"1,mark,\"a\"b,,,0\n", 1, "text after the closing quote of field 3"},
    {"ts,op,id,size,stream,dev\n", 1, "unexpected header"},
    {"1,mark,\"two\nlines\",,,0\n2,alloc,1,x,0,0\n", 3, "invalid size 'x'"},
    {"1,alloc,1,1,0,0\n2,alloc,2\0,1,0,0\n", 2, "NUL byte"},
    /* segment events against the live segments and mapped ranges */
    {"1,seg_alloc,0x1000,4096,0,0\n2,seg_free,0x1000,4096,0,0\n3,seg_free,0x1000,4096,0,0\n", 3,
     "seg_free of 0x1000 which is not a live segment (never allocated, or already freed)"},
    {"1,seg_free,0x1000,4096,0,0\n", 1, "seg_free of 0x1000 which is not a live segment"},
    {"1,seg_alloc,0x1000,4096,0,1\n2,seg_free,0x1000,4096,0,0\n", 2,
     "seg_free of 0x1000 which is not a live segment"},
    {"1,seg_alloc,0x1000,4096,0,0\n2,seg_free,0x1000,8192,0,0\n", 2,
     "seg_free of 0x1000 of 8192 bytes, but the segment allocated on line 1 has 4096"},
    {"1,seg_alloc,0x1000,8192,0,0\n2,seg_free,0x2000,4096,0,0\n", 2,
     "seg_free of 0x2000 which is not a live segment"},
    {"1,seg_alloc,0x1000,8192,0,0\n2,seg_alloc,0x2000,4096,0,0\n", 2,
     "seg_alloc at 0x2000 of 4096 bytes overlaps the segment allocated on line 1 (0x1000 to "
     "0x3000)"},
    {"1,seg_alloc,0x2000,4096,0,0\n2,seg_alloc,0x1000,4097,0,0\n", 2,
     "overlaps the segment allocated on line 1"},
    {"1,seg_unmap,0x1000,4096,0,0\n", 1,
     "seg_unmap at 0x1000 of 4096 bytes which is not mapped (never mapped, or already unmapped)"},
    {"1,seg_map,0x1000,4096,0,0\n2,seg_unmap,0x1000,4096,0,0\n3,seg_unmap,0x1000,4096,0,0\n", 3,
     "seg_unmap at 0x1000 of 4096 bytes which is not mapped"},
    {"1,seg_map,0x1000,4096,0,0\n2,seg_unmap,0x1000,8192,0,0\n", 2, "which is not mapped"},
    {"1,seg_alloc,0x1000,4096,0,0\n2,seg_unmap,0x1000,4096,0,0\n", 2, "which is not mapped"},
    {"1,seg_map,0x1000,4096,0,0\n2,seg_map,0x1800,4096,0,0\n", 2,
     "seg_map at 0x1800 of 4096 bytes overlaps the range mapped on line 1 (0x1000 to 0x2000)"},
    {"1,seg_map,0x1000,4096,0,0\n2,seg_free,0x1000,4096,0,0\n", 2, "which is not a live segment"},
    {"1,seg_alloc,0x1000,0,0,0\n", 1, "seg_alloc at 0x1000 of 0 bytes"},
    {"1,seg_map,0xffffffffffffff00,4096,0,0\n", 1,
     "seg_map at 0xffffffffffffff00 of 4096 bytes ends past 2^64"},
};

/* What real traces do with segments reads: maps merged with their
 * neighbours and unmapped in other pieces, a segment freed and its
 * address taken again, the same address on two devices. */
Test(csv, segment_events_that_fit_the_live_ranges)
{
    static const char ok[] = "1,seg_map,0x200000,0x200000,0,0\n"
                             "2,seg_map,0x600000,0x200000,0,0\n"
                             "3,seg_map,0x400000,0x200000,0,0\n"
                             "4,seg_unmap,0x300000,0x400000,0,0\n"
                             "5,seg_unmap,0x200000,0x100000,0,0\n"
                             "6,seg_unmap,0x700000,0x100000,0,0\n"
                             "7,seg_alloc,0x200000,0x500000,0,0\n"
                             "8,seg_alloc,0x200000,0x500000,0,1\n"
                             "9,seg_free,0x200000,0x500000,0,0\n"
                             "10,seg_alloc,0x200000,0x100000,0,0\n"
                             "11,seg_map,0x300000,0x100000,0,0\n";
    gm_store_t *s;
    gm_error_t err;
    cr_expect_eq(import_text(ok, &s, &err), 0, "%s", err.msg);
    gm_store_close(s);
}

Test(csv, every_row_error_names_file_and_line)
{
    for (size_t i = 0; i < sizeof bad_rows / sizeof bad_rows[0]; i++) {
        gm_store_t *s;
        gm_writer_t *w;
        gm_error_t err = {0};
        cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_writer_begin(s, "t", 0, &w, &err), 0, "%s", err.msg);
        /* Buffers may hold a NUL: take the length up to the last newline. */
        const char *csv = bad_rows[i].csv;
        size_t len = strlen(csv);
        if (strstr(bad_rows[i].reason, "NUL"))
            len += 1 + strlen(csv + len + 1);
        int rc = gm_csv_import_buffer(csv, len, "t.csv", w, &err);
        gm_writer_abort(w);
        gm_store_close(s);
        cr_expect_eq(rc, GM_EFORMAT, "case %zu: rc %d (%s)", i, rc, err.msg);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "'t.csv' line %d: ", bad_rows[i].line);
        cr_expect(strncmp(err.msg, prefix, strlen(prefix)) == 0,
                  "case %zu: '%s' should start with '%s'", i, err.msg, prefix);
        cr_expect(strstr(err.msg, bad_rows[i].reason) != NULL,
                  "case %zu: '%s' should say '%s'", i, err.msg, bad_rows[i].reason);
    }
}

Test(csv, failed_import_leaves_no_trace)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_text("1,alloc,1,10,0,0\n2,free,9,,0,0\n", &s, &err), GM_EFORMAT);
    gm_trace_info_t *list;
    size_t n;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
    cr_expect_eq(n, 0);
    gm_trace_info_free_list(list, n);
    gm_store_close(s);
}
