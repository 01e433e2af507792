/*
 * tests/test_json.c — the JSON writer: escaping (RFC 8259, control
 * characters, invalid UTF-8), nesting and commas, compact and pretty
 * layout, numbers (round trip of doubles, integer limits, non-finite as
 * null); the shared escaper and double formatter of base/jsonfmt.h,
 * including a buffer too small for the literal.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfmt.h"
#include "util.h"

/* Output of the JSON written by fn, in a malloc'd string. */
typedef void (*json_fn)(gm_json_t *j);

static char *render(json_fn fn, int pretty)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f != NULL);
    gm_json_t j;
    gm_json_init(&j, f, pretty);
    fn(&j);
    fclose(f);
    return buf;
}

static char *string_literal(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gm_json_write_string(f, s);
    fclose(f);
    return buf;
}

#define EXPECT_STRING(in, out)                                                           \
    do {                                                                                 \
        char *got_ = string_literal(in);                                                 \
        cr_expect_str_eq(got_, out, "escaping %s", #in);                                 \
        free(got_);                                                                      \
    } while (0)

Test(json, escapes_quotes_backslashes_and_named_controls)
{
    EXPECT_STRING("plain", "\"plain\"");
    EXPECT_STRING("", "\"\"");
    EXPECT_STRING("a\"b", "\"a\\\"b\"");
    EXPECT_STRING("a\\b", "\"a\\\\b\"");
    EXPECT_STRING("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
    EXPECT_STRING("/", "\"/\""); /* the solidus need not be escaped */
}

Test(json, escapes_other_controls_as_u00xx)
{
    EXPECT_STRING("\x01", "\"\\u0001\"");
    EXPECT_STRING("a\x1f" "b", "\"a\\u001fb\"");
    EXPECT_STRING("\x0b", "\"\\u000b\"");
    EXPECT_STRING("\x7f", "\"\x7f\""); /* DEL is not a control for JSON */
}

Test(json, passes_utf8_and_replaces_invalid_bytes)
{
    EXPECT_STRING("µs ≥ 𝄞", "\"µs ≥ 𝄞\"");
    EXPECT_STRING("a\xff" "b", "\"a\\ufffdb\"");
    EXPECT_STRING("\xc3", "\"\\ufffd\"");              /* truncated at the end */
    EXPECT_STRING("\xc0\xaf", "\"\\ufffd\\ufffd\"");   /* overlong */
    EXPECT_STRING("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
}

static void nested(gm_json_t *j)
{
    gm_json_begin_object(j);
    gm_json_key(j, "a");
    gm_json_u64(j, 1);
    gm_json_key(j, "list");
    gm_json_begin_array(j);
    gm_json_i64(j, -2);
    gm_json_begin_object(j);
    gm_json_end_object(j);
    gm_json_begin_array(j);
    gm_json_end_array(j);
    gm_json_str(j, NULL);
    gm_json_bool(j, 1);
    gm_json_bool(j, 0);
    gm_json_null(j);
    gm_json_end_array(j);
    gm_json_key(j, "o");
    gm_json_begin_object(j);
    gm_json_key(j, "k\n");
    gm_json_str(j, "v");
    gm_json_key(j, "raw");
    gm_json_raw(j, "{\"x\":[1,2]}");
    gm_json_end_object(j);
    gm_json_end_object(j);
    gm_json_finish(j);
}

Test(json, nesting_and_commas_compact)
{
    char *s = render(nested, 0);
    cr_expect_str_eq(s, "{\"a\":1,\"list\":[-2,{},[],null,true,false,null],"
                        "\"o\":{\"k\\n\":\"v\",\"raw\":{\"x\":[1,2]}}}\n");
    free(s);
}

static void members(gm_json_t *j)
{
    gm_json_begin_object(j);
    gm_json_kv_str(j, "s", "v");
    gm_json_kv_str(j, "none", NULL);
    gm_json_kv_u64(j, "u", UINT64_MAX);
    gm_json_kv_i64(j, "i", INT64_MIN);
    gm_json_kv_double(j, "d", 0.5);
    gm_json_kv_double(j, "nan", NAN);
    gm_json_kv_bool(j, "t", 1);
    gm_json_kv_bool(j, "f", 0);
    gm_json_end_object(j);
    gm_json_finish(j);
}

Test(json, members_in_one_call)
{
    char *s = render(members, 0);
    cr_expect_str_eq(s, "{\"s\":\"v\",\"none\":null,\"u\":18446744073709551615,"
                        "\"i\":-9223372036854775808,\"d\":0.5,\"nan\":null,\"t\":true,"
                        "\"f\":false}\n");
    free(s);
}

static const char *jv_text = "{\"n\":[18446744073709551615,-2,0.5,true,false,null],"
                             "\"s\":\"k\\u00e9\",\"o\":{\"e\":{},\"a\":[]}}";

static void parsed(gm_json_t *j)
{
    gm_jv_t *v = NULL;
    gm_error_t err = {0};
    cr_assert_eq(gm_json_parse(jv_text, strlen(jv_text), &v, &err), 0, "%s", err.msg);
    gm_json_jv(j, v);
    gm_jv_free(v);
    gm_json_finish(j);
}

Test(json, parsed_value_written_back)
{
    char *s = render(parsed, 0);
    cr_expect_str_eq(s, "{\"n\":[18446744073709551615,-2,0.5,true,false,null],"
                        "\"s\":\"k\xc3\xa9\",\"o\":{\"e\":{},\"a\":[]}}\n");
    free(s);
}

Test(json, nesting_pretty)
{
    char *s = render(nested, 1);
    cr_expect_str_eq(s, "{\n"
                        "  \"a\": 1,\n"
                        "  \"list\": [\n"
                        "    -2,\n"
                        "    {},\n"
                        "    [],\n"
                        "    null,\n"
                        "    true,\n"
                        "    false,\n"
                        "    null\n"
                        "  ],\n"
                        "  \"o\": {\n"
                        "    \"k\\n\": \"v\",\n"
                        "    \"raw\": {\"x\":[1,2]}\n"
                        "  }\n"
                        "}\n");
    free(s);
}

static void top_level_values(gm_json_t *j)
{
    gm_json_u64(j, 7);
    gm_json_finish(j);
    gm_json_begin_array(j);
    gm_json_end_array(j);
    gm_json_finish(j);
}

Test(json, successive_top_level_values)
{
    char *s = render(top_level_values, 0);
    cr_expect_str_eq(s, "7\n[]\n");
    free(s);
}

static void integers(gm_json_t *j)
{
    gm_json_begin_array(j);
    gm_json_u64(j, 0);
    gm_json_u64(j, UINT64_MAX);
    gm_json_i64(j, INT64_MIN);
    gm_json_i64(j, INT64_MAX);
    gm_json_end_array(j);
}

Test(json, integer_limits)
{
    char *s = render(integers, 0);
    cr_expect_str_eq(s, "[0,18446744073709551615,-9223372036854775808,9223372036854775807]");
    free(s);
}

static double dbl_value;
static void one_double(gm_json_t *j) { gm_json_double(j, dbl_value); }

static char *render_double(double v)
{
    dbl_value = v;
    return render(one_double, 0);
}

Test(json, doubles_shortest_round_trip)
{
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0.0, "0"}, {1.0, "1"}, {0.1, "0.1"}, {-2.5, "-2.5"}, {1e300, "1e+300"},
        {1.0 / 3.0, "0.3333333333333333"}, {0.1 + 0.2, "0.30000000000000004"},
        {123456789.0, "123456789"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = render_double(cases[i].v);
        cr_expect_str_eq(s, cases[i].text);
        free(s);
    }
    /* Every value reads back exactly. */
    uint64_t rng = 42;
    for (int i = 0; i < 2000; i++) {
        uint64_t bits = gt_rand(&rng);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        char *s = render_double(v);
        cr_expect(strtod(s, NULL) == v, "%s does not read back", s);
        free(s);
    }
    char *s = render_double(DBL_MIN);
    cr_expect(strtod(s, NULL) == DBL_MIN);
    free(s);
}

Test(json, non_finite_doubles_are_null)
{
    const double vals[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++) {
        char *s = render_double(vals[i]);
        cr_expect_str_eq(s, "null");
        free(s);
    }
}

static void null_and_empty_raw(gm_json_t *j)
{
    gm_json_begin_array(j);
    gm_json_raw(j, NULL);
    gm_json_raw(j, "");
    gm_json_str(j, NULL);
    gm_json_end_array(j);
}

Test(json, raw_null_and_empty)
{
    char *s = render(null_and_empty_raw, 0);
    cr_expect_str_eq(s, "[null,null,null]");
    free(s);
}

static void deep(gm_json_t *j)
{
    for (int i = 0; i < 10; i++)
        gm_json_begin_array(j);
    gm_json_u64(j, 1);
    gm_json_u64(j, 2);
    for (int i = 0; i < 10; i++) {
        gm_json_end_array(j);
        gm_json_u64(j, (uint64_t)i);
    }
}

Test(json, deep_nesting_places_commas_per_level)
{
    char *s = render(deep, 0);
    cr_expect_str_eq(s, "[[[[[[[[[[1,2],0],1],2],3],4],5],6],7],8]9");
    free(s);
}

/* ---- base/jsonfmt.h: the one escaper and double formatter -------------- */

static const char *const escape_inputs[] = {
    "", "plain", "a\"b\\c", "\b\f\n\r\t", "\x01\x1f\x7f", "µs ≥ 𝄞",
    ("a\xff" "b"), "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
    "mixed \"µ\"\x02\xe2\x82 end",
};
#define NINPUTS (sizeof escape_inputs / sizeof escape_inputs[0])

Test(jsonfmt, buffer_and_file_escape_alike)
{
    for (size_t i = 0; i < NINPUTS; i++) {
        const char *in = escape_inputs[i];
        char *want = string_literal(in);
        char buf[256];
        size_t n = gm__json_escape_buf(buf, sizeof buf, in);
        cr_expect_eq(n, strlen(want), "length of input %zu", i);
        cr_expect_str_eq(buf, want, "input %zu", i);
        cr_expect_eq(gm__json_escape_buf(NULL, 0, in), n, "measuring input %zu", i);
        cr_expect(gt_json_string_valid(buf), "input %zu: %s", i, buf);
        free(want);
    }
}

Test(jsonfmt, control_characters_and_invalid_utf8)
{
    char buf[64];
    gm__json_escape_buf(buf, sizeof buf, "\x01\b\x0b\x1f\"\\");
    cr_expect_str_eq(buf, "\"\\u0001\\b\\u000b\\u001f\\\"\\\\\"");
    gm__json_escape_buf(buf, sizeof buf, "a\xff\xc3(\xe2\x82\xac");
    cr_expect_str_eq(buf, "\"a\\ufffd\\ufffd(\xe2\x82\xac\"");
}

/* Every buffer size gives a valid literal that is the full one cut between
 * whole characters and escapes, with the closing quote. */
Test(jsonfmt, truncation_keeps_json_valid)
{
    for (size_t i = 0; i < NINPUTS; i++) {
        const char *in = escape_inputs[i];
        char full[256];
        size_t n = gm__json_escape_buf(full, sizeof full, in);
        for (size_t len = 1; len <= n + 1; len++) {
            char buf[256];
            memset(buf, 'X', sizeof buf);
            cr_expect_eq(gm__json_escape_buf(buf, len, in), n, "input %zu len %zu", i, len);
            size_t got = strlen(buf);
            cr_expect_lt(got, len, "input %zu len %zu overruns", i, len);
            cr_expect_eq(buf[len], 'X', "input %zu len %zu writes past len", i, len);
            if (len < 3) {
                cr_expect_str_eq(buf, "", "input %zu len %zu", i, len);
                continue;
            }
            cr_expect(gt_json_string_valid(buf), "input %zu len %zu: %s", i, len, buf);
            cr_expect_eq(memcmp(buf, full, got - 1), 0, "input %zu len %zu: a prefix", i, len);
            if (len == n + 1)
                cr_expect_str_eq(buf, full, "input %zu fits exactly", i);
            else
                cr_expect_lt(got, n, "input %zu len %zu", i, len);
        }
    }
    char tiny[3] = "ZZ";
    cr_expect_eq(gm__json_escape_buf(tiny, 0, "abc"), 5);
    cr_expect_str_eq(tiny, "ZZ", "len 0 writes nothing");
    cr_expect_eq(gm__json_escape_buf(tiny, sizeof tiny, "abc"), 5);
    cr_expect_str_eq(tiny, "\"\"");
    /* a multi-byte character or an escape is never cut in half */
    char buf[8];
    gm__json_escape_buf(buf, sizeof buf, "ab\xe2\x82\xac");
    cr_expect_str_eq(buf, "\"ab\xe2\x82\xac\"");
    gm__json_escape_buf(buf, 7, "ab\xe2\x82\xac");
    cr_expect_str_eq(buf, "\"ab\"");
    gm__json_escape_buf(buf, 7, "ab\x01");
    cr_expect_str_eq(buf, "\"ab\"");
}

Test(jsonfmt, format_double)
{
    char buf[GM__JSON_DOUBLE_MAX];
    cr_expect_eq(gm__json_format_double(buf, sizeof buf, 0.1), 3);
    cr_expect_str_eq(buf, "0.1");
    gm__json_format_double(buf, sizeof buf, -DBL_MAX);
    cr_expect_str_eq(buf, "-1.7976931348623157e+308");
    gm__json_format_double(buf, sizeof buf, -DBL_TRUE_MIN);
    cr_expect(strtod(buf, NULL) == -DBL_TRUE_MIN, "%s", buf);
    cr_expect_eq(gm__json_format_double(buf, sizeof buf, NAN), 4);
    cr_expect_str_eq(buf, "null");
    gm__json_format_double(buf, sizeof buf, -INFINITY);
    cr_expect_str_eq(buf, "null");
}
