/*
 * tests/test_jsonread.c — the JSON reader: every value type, exact 64-bit
 * integers, string escapes and surrogate pairs, duplicate keys, every
 * malformed input class with its byte offset, nesting limits, and a round
 * trip through the writer.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static gm_jv_t *jr_parse(const char *text)
{
    gm_error_t err = {0};
    gm_jv_t *v = NULL;
    int rc = gm_json_parse(text, strlen(text), &v, &err);
    cr_assert_eq(rc, 0, "parse '%s': %s", text, err.msg);
    return v;
}

static void jr_refuse(const char *text, const char *want)
{
    gm_error_t err = {0};
    gm_jv_t *v = NULL;
    int rc = gm_json_parse(text, strlen(text), &v, &err);
    cr_assert_eq(rc, GM_EFORMAT, "'%s' parsed (rc %d)", text, rc);
    cr_assert(strstr(err.msg, want) != NULL, "'%s': message '%s' lacks '%s'", text, err.msg,
              want);
}

Test(jsonread, object_of_every_type)
{
    gm_jv_t *v = jr_parse(" {\"a\": 1, \"b\": -2.5e1, \"c\": \"x\", \"d\": true, \"e\": false,"
                          " \"f\": null, \"g\": [1, [2], {}], \"h\": {\"k\": \"v\"}} ");
    cr_assert_eq(gm_jv_type(v), GM_JV_OBJECT);
    cr_assert_eq(gm_jv_len(v), 8);
    cr_assert_str_eq(gm_jv_key_at(v, 6), "g");
    uint64_t u;
    cr_assert_eq(gm_jv_u64(gm_jv_get(v, "a"), &u), 0);
    cr_assert_eq(u, 1);
    cr_assert_float_eq(gm_jv_num(gm_jv_get(v, "b")), -25.0, 1e-12);
    cr_assert_eq(gm_jv_u64(gm_jv_get(v, "b"), &u), -1, "a fraction is not an integer");
    cr_assert_str_eq(gm_jv_str(gm_jv_get(v, "c")), "x");
    cr_assert_eq(gm_jv_bool(gm_jv_get(v, "d")), 1);
    cr_assert_eq(gm_jv_bool(gm_jv_get(v, "e")), 0);
    cr_assert_eq(gm_jv_type(gm_jv_get(v, "e")), GM_JV_BOOL);
    cr_assert_eq(gm_jv_type(gm_jv_get(v, "f")), GM_JV_NULL);
    const gm_jv_t *g = gm_jv_get(v, "g");
    cr_assert_eq(gm_jv_len(g), 3);
    cr_assert_eq(gm_jv_len(gm_jv_at(g, 1)), 1);
    cr_assert_eq(gm_jv_type(gm_jv_at(g, 2)), GM_JV_OBJECT);
    cr_assert_null(gm_jv_at(g, 3));
    cr_assert_str_eq(gm_jv_str(gm_jv_get(gm_jv_get(v, "h"), "k")), "v");
    cr_assert_null(gm_jv_get(v, "missing"));
    cr_assert_null(gm_jv_get(g, "a"), "arrays have no members");
    cr_assert_null(gm_jv_str(NULL));
    gm_jv_free(v);
}

Test(jsonread, exact_integers)
{
    gm_jv_t *v = jr_parse("[18446744073709551615, 18446744073709551616, -9223372036854775808,"
                          " -9223372036854775809, 9007199254740993, -0, 0]");
    uint64_t u;
    int64_t i;
    cr_assert_eq(gm_jv_u64(gm_jv_at(v, 0), &u), 0);
    cr_assert_eq(u, UINT64_MAX);
    cr_assert_eq(gm_jv_u64(gm_jv_at(v, 1), &u), -1, "2^64 does not fit");
    cr_assert_eq(gm_jv_i64(gm_jv_at(v, 2), &i), 0);
    cr_assert_eq(i, INT64_MIN);
    cr_assert_eq(gm_jv_i64(gm_jv_at(v, 3), &i), -1);
    cr_assert_eq(gm_jv_u64(gm_jv_at(v, 4), &u), 0);
    cr_assert_eq(u, UINT64_C(9007199254740993), "above 2^53 stays exact");
    cr_assert_eq(gm_jv_u64(gm_jv_at(v, 5), &u), 0);
    cr_assert_eq(u, 0);
    cr_assert_eq(gm_jv_i64(gm_jv_at(v, 0), &i), -1, "2^64-1 is no int64");
    cr_assert_eq(gm_jv_u64(gm_jv_at(v, 2), &u), -1, "negative is no uint64");
    gm_jv_free(v);
}

Test(jsonread, strings)
{
    gm_jv_t *v = jr_parse("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\", \"\\u00e9\\u20ac\\ud83d\\ude00\","
                          " \"\\u0000x\", \"\"]");
    cr_assert_str_eq(gm_jv_str(gm_jv_at(v, 0)), "a\"b\\c/d\b\f\n\r\t");
    cr_assert_str_eq(gm_jv_str(gm_jv_at(v, 1)), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    cr_assert_eq(gm_jv_strlen(gm_jv_at(v, 2)), 2, "an escaped NUL is kept");
    cr_assert_str_eq(gm_jv_str(gm_jv_at(v, 3)), "");
    gm_jv_free(v);
}

Test(jsonread, duplicate_keys_last_wins)
{
    gm_jv_t *v = jr_parse("{\"k\": 1, \"k\": 2}");
    uint64_t u = 0;
    cr_assert_eq(gm_jv_u64(gm_jv_get(v, "k"), &u), 0);
    cr_assert_eq(u, 2);
    gm_jv_free(v);
}

Test(jsonread, malformed)
{
    jr_refuse("", "byte 0: expected a value");
    jr_refuse("   ", "byte 3");
    jr_refuse("{\"a\" 1}", "byte 5: expected ':'");
    jr_refuse("{\"a\": 1,}", "expected a member name");
    jr_refuse("[1, 2", "expected ',' or ']'");
    jr_refuse("[1 2]", "byte 3");
    jr_refuse("\"abc", "unterminated string");
    jr_refuse("\"a\x01\"", "control character");
    jr_refuse("\"\\x\"", "bad escape");
    jr_refuse("\"\\u12zz\"", "bad hex digit");
    jr_refuse("\"\\u12\"", "truncated \\u escape");
    jr_refuse("\"\\ud800\"", "unpaired high surrogate");
    jr_refuse("\"\\udc00\"", "unpaired low surrogate");
    jr_refuse("01", "text after the value");
    jr_refuse("-", "expected a digit");
    jr_refuse("1.", "after '.'");
    jr_refuse("1e+", "exponent");
    jr_refuse("tru", "expected a value");
    jr_refuse("nul", "expected a value");
    jr_refuse("{} {}", "text after the value");
    jr_refuse("{\"a\": 1", "expected ',' or '}'");
}

Test(jsonread, nesting_limit)
{
    char deep[2 * 600 + 1];
    memset(deep, '[', 600);
    memset(deep + 600, ']', 600);
    deep[1200] = '\0';
    jr_refuse(deep, "nested too deeply");
    deep[0] = '\0';
    char ok[2 * 500 + 1];
    memset(ok, '[', 500);
    memset(ok + 500, ']', 500);
    ok[1000] = '\0';
    gm_jv_free(jr_parse(ok));
}

Test(jsonread, round_trip_through_the_writer)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gm_json_t j;
    gm_json_init(&j, f, 0);
    gm_json_begin_object(&j);
    gm_json_key(&j, "name");
    gm_json_str(&j, "we\"ird\n<script>\x7f");
    gm_json_key(&j, "bytes");
    gm_json_u64(&j, UINT64_MAX - 1);
    gm_json_key(&j, "ratio");
    gm_json_double(&j, 0.1);
    gm_json_end_object(&j);
    gm_json_finish(&j);
    fclose(f);
    gm_jv_t *v = jr_parse(buf);
    cr_assert_str_eq(gm_jv_str(gm_jv_get(v, "name")), "we\"ird\n<script>\x7f");
    uint64_t u;
    cr_assert_eq(gm_jv_u64(gm_jv_get(v, "bytes"), &u), 0);
    cr_assert_eq(u, UINT64_MAX - 1);
    cr_assert_float_eq(gm_jv_num(gm_jv_get(v, "ratio")), 0.1, 1e-15);
    gm_jv_free(v);
    free(buf);
}

Test(jsonread, large_array)
{
    size_t n = 100000;
    char *text = malloc(n * 8 + 3);
    size_t k = 0;
    text[k++] = '[';
    for (size_t i = 0; i < n; i++)
        k += (size_t)sprintf(text + k, "%s%zu", i ? "," : "", i);
    text[k++] = ']';
    text[k] = '\0';
    gm_jv_t *v = jr_parse(text);
    cr_assert_eq(gm_jv_len(v), n);
    uint64_t u;
    cr_assert_eq(gm_jv_u64(gm_jv_at(v, n - 1), &u), 0);
    cr_assert_eq(u, n - 1);
    gm_jv_free(v);
    free(text);
}
