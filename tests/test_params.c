/*
 * tests/test_params.c — parameter parsing, parameter sets and their JSON.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A policy table with one parameter of each type (never created). */
static const gm_param_spec_t all_specs[] = {
    {"bytes", GM_PARAM_SIZE, "2MiB", "a size", NULL},
    {"count", GM_PARAM_INT, "-3", "an integer", NULL},
    {"ratio", GM_PARAM_DOUBLE, "0.25", "a real", NULL},
    {"flag", GM_PARAM_BOOL, "on", "a bool", NULL},
    {"mode", GM_PARAM_ENUM, "fast", "an enum", "slow|fast|auto"},
    {"label", GM_PARAM_STRING, "a \"b\"\\", "a string", NULL},
};

static const gm_policy_ops_t all_ops = {
    .name = "toy",
    .help = "test table",
    .params = all_specs,
    .nparams = sizeof all_specs / sizeof all_specs[0],
};

static const gm_param_spec_t *spec_of(gm_param_type_t t)
{
    for (size_t i = 0; i < all_ops.nparams; i++)
        if (all_specs[i].type == t)
            return &all_specs[i];
    return NULL;
}

Test(params, defaults_all_types)
{
    gm_params_t p;
    gm_error_t err = {0};
    cr_assert_eq(gm_params_init(&p, &all_ops, &err), 0, "%s", err.msg);
    cr_expect_eq(p.ops, &all_ops);
    cr_expect_eq(p.values[0].size, UINT64_C(2) << 20);
    cr_expect_eq(p.values[1].i, -3);
    cr_expect_float_eq(p.values[2].d, 0.25, 1e-15);
    cr_expect_eq(p.values[3].b, 1);
    cr_expect_eq(p.values[4].e, 1);
    cr_expect_str_eq(p.values[5].s, "a \"b\"\\");
    cr_expect_neq(p.values[5].s, all_specs[5].def, "strings are owned copies");
    gm_params_release(&p);
    cr_expect_null(p.values);
    gm_params_release(&p); /* twice is harmless */
}

Test(params, buddy_defaults)
{
    const gm_policy_ops_t *ops = gm_policy_find("buddy");
    cr_assert_not_null(ops);
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, ops, NULL), 0);
    cr_expect_eq(p.values[0].size, 512);
    cr_expect_eq(p.values[1].size, UINT64_C(1) << 30);
    cr_expect_eq(p.values[2].e, 0);
    gm_params_release(&p);
}

Test(params, every_registered_default_parses)
{
    for (size_t i = 0; i < gm_policy_count(); i++) {
        gm_params_t p;
        gm_error_t err = {0};
        const gm_policy_ops_t *ops = gm_policy_at(i);
        cr_expect_eq(gm_params_init(&p, ops, &err), 0, "%s: %s", ops->name, err.msg);
        for (size_t k = 0; k < ops->nparams; k++) {
            cr_expect_not_null(ops->params[k].name);
            cr_expect_not_null(ops->params[k].help);
            cr_expect_not_null(ops->params[k].def);
            if (ops->params[k].type == GM_PARAM_ENUM)
                cr_expect_not_null(ops->params[k].choices);
        }
        gm_params_release(&p);
    }
}

Test(params, set_values)
{
    gm_params_t p;
    gm_error_t err = {0};
    cr_assert_eq(gm_params_init(&p, &all_ops, NULL), 0);
    cr_expect_eq(gm_params_set(&p, "bytes", "1.5GiB", &err), 0, "%s", err.msg);
    cr_expect_eq(p.values[0].size, UINT64_C(3) << 29);
    cr_expect_eq(gm_params_set(&p, "toy.count", "9223372036854775807", &err), 0, "%s", err.msg);
    cr_expect_eq(p.values[1].i, INT64_MAX);
    cr_expect_eq(gm_params_set(&p, "count", "-42", &err), 0);
    cr_expect_eq(p.values[1].i, -42);
    cr_expect_eq(gm_params_set(&p, "ratio", "1e-3", &err), 0);
    cr_expect_float_eq(p.values[2].d, 1e-3, 1e-18);
    cr_expect_eq(gm_params_set(&p, "mode", "AUTO", &err), 0, "enum names are case-insensitive");
    cr_expect_eq(p.values[4].e, 2);
    cr_expect_eq(gm_params_set(&p, "mode", "slow", &err), 0);
    cr_expect_eq(p.values[4].e, 0);
    cr_expect_eq(gm_params_set(&p, "label", "hello", &err), 0);
    cr_expect_str_eq(p.values[5].s, "hello");
    cr_expect_eq(gm_params_set(&p, "label", "", &err), 0);
    cr_expect_str_eq(p.values[5].s, "");
    /* later settings win */
    cr_expect_eq(gm_params_set(&p, "bytes", "4K", &err), 0);
    cr_expect_eq(p.values[0].size, 4096);
    gm_params_release(&p);
}

Test(params, bools)
{
    static const struct {
        const char *text;
        int want;
    } cases[] = {{"true", 1}, {"false", 0}, {"1", 1},  {"0", 0},    {"yes", 1},
                 {"no", 0},   {"on", 1},    {"off", 0}, {"TRUE", 1}, {"Off", 0}};
    const gm_param_spec_t *spec = spec_of(GM_PARAM_BOOL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_param_value_t v;
        cr_expect_eq(gm_param_parse(spec, cases[i].text, &v, NULL), 0, "%s", cases[i].text);
        cr_expect_eq(v.b, cases[i].want, "%s", cases[i].text);
    }
}

Test(params, unknown_key)
{
    const gm_policy_ops_t *ops = gm_policy_find("buddy");
    gm_params_t p;
    gm_error_t err = {0};
    cr_assert_eq(gm_params_init(&p, ops, NULL), 0);
    cr_expect_eq(gm_params_set(&p, "foo", "1", &err), GM_EINVAL);
    cr_expect_str_eq(err.msg, "unknown parameter 'buddy.foo' (buddy takes: min_block, arena, release)");
    cr_expect_eq(gm_params_set(&p, "buddy.foo", "1", &err), GM_EINVAL);
    cr_expect_str_eq(err.msg, "unknown parameter 'buddy.foo' (buddy takes: min_block, arena, release)");
    cr_expect_eq(gm_params_set(&p, "min", "1", &err), GM_EINVAL, "no prefix matching");
    cr_expect_eq(gm_params_set(&p, "MIN_BLOCK", "1", &err), GM_EINVAL, "keys are exact");
    gm_params_release(&p);

    const gm_policy_ops_t *native = gm_policy_find("native");
    cr_assert_not_null(native);
    cr_assert_eq(gm_params_init(&p, native, NULL), 0);
    cr_expect_eq(gm_params_set(&p, "native.x", "1", &err), GM_EINVAL);
    cr_expect_str_eq(err.msg, "unknown parameter 'native.x' (native takes: chunk)");
    gm_params_release(&p);
}

Test(params, bad_values)
{
    static const struct {
        gm_param_type_t type;
        const char *text;
    } cases[] = {
        {GM_PARAM_SIZE, "x"},     {GM_PARAM_SIZE, "-1"},      {GM_PARAM_SIZE, "1Q"},
        {GM_PARAM_SIZE, ""},      {GM_PARAM_INT, "1.5"},      {GM_PARAM_INT, "12x"},
        {GM_PARAM_INT, ""},       {GM_PARAM_INT, " 1"},       {GM_PARAM_INT, "99999999999999999999"},
        {GM_PARAM_DOUBLE, "abc"}, {GM_PARAM_DOUBLE, "1.0x"},  {GM_PARAM_DOUBLE, "nan"},
        {GM_PARAM_DOUBLE, "inf"}, {GM_PARAM_DOUBLE, ""},      {GM_PARAM_DOUBLE, "1e999"},
        {GM_PARAM_BOOL, "maybe"}, {GM_PARAM_BOOL, "2"},       {GM_PARAM_BOOL, ""},
        {GM_PARAM_BOOL, "truee"}, {GM_PARAM_ENUM, "fastest"}, {GM_PARAM_ENUM, ""},
        {GM_PARAM_ENUM, "slow|fast"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const gm_param_spec_t *spec = spec_of(cases[i].type);
        gm_param_value_t v;
        gm_error_t err = {0};
        cr_expect_eq(gm_param_parse(spec, cases[i].text, &v, &err), GM_EINVAL, "%s '%s' accepted",
                     spec->name, cases[i].text);
        char prefix[128];
        snprintf(prefix, sizeof prefix, "invalid value '%s' for %s: ", cases[i].text, spec->name);
        cr_expect_eq(strncmp(err.msg, prefix, strlen(prefix)), 0, "message: %s", err.msg);
        cr_expect_gt(strlen(err.msg), strlen(prefix), "a reason follows");
    }
}

Test(params, bad_value_names_policy_and_keeps_old_value)
{
    const gm_policy_ops_t *ops = gm_policy_find("buddy");
    gm_params_t p;
    gm_error_t err = {0};
    cr_assert_eq(gm_params_init(&p, ops, NULL), 0);
    cr_expect_eq(gm_params_set(&p, "min_block", "x", &err), GM_EINVAL);
    cr_expect_str_eq(err.msg, "invalid value 'x' for buddy.min_block: "
                              "expected a size in bytes such as 512, 64KiB or 1.5GiB, or none");
    cr_expect_eq(p.values[0].size, 512, "unchanged");
    const gm_param_spec_t size_spec = {"limit", GM_PARAM_SIZE, "0", "a limit", NULL};
    gm_param_value_t v;
    cr_expect_eq(gm_param_parse(&size_spec, "none", &v, &err), 0);
    cr_expect_eq(v.size, UINT64_MAX, "none: no limit");
    cr_expect_eq(gm_param_parse(&size_spec, "Unlimited", &v, &err), 0);
    cr_expect_eq(v.size, UINT64_MAX);
    cr_expect_eq(gm_params_set(&p, "buddy.release", "sometimes", &err), GM_EINVAL);
    cr_expect_str_eq(err.msg, "invalid value 'sometimes' for buddy.release: expected one of never|empty");
    cr_expect_eq(gm_params_set(&p, "buddy.release", "empty", &err), 0);
    cr_expect_eq(p.values[2].e, 1);
    gm_params_release(&p);
}

Test(params, bad_default_is_reported)
{
    static const gm_param_spec_t specs[] = {{"n", GM_PARAM_INT, "ten", "broken", NULL}};
    static const gm_policy_ops_t ops = {.name = "broken", .params = specs, .nparams = 1};
    gm_params_t p;
    gm_error_t err = {0};
    cr_expect_eq(gm_params_init(&p, &ops, &err), GM_EINVAL);
    cr_expect_not_null(strstr(err.msg, "invalid value 'ten' for broken.n"), "%s", err.msg);
    cr_expect_null(p.values);
    cr_expect_eq(gm_params_init(&p, NULL, &err), GM_EINVAL);
}

static void json_of(gm_param_type_t t, const char *text, const char *want)
{
    const gm_param_spec_t *spec = spec_of(t);
    gm_param_value_t v;
    cr_assert_eq(gm_param_parse(spec, text, &v, NULL), 0, "%s", text);
    char buf[128];
    gm_param_json(spec, v, buf, sizeof buf);
    cr_expect_str_eq(buf, want, "json of %s '%s'", spec->name, text);
}

Test(params, json)
{
    json_of(GM_PARAM_SIZE, "1GiB", "1073741824");
    json_of(GM_PARAM_SIZE, "0", "0");
    json_of(GM_PARAM_INT, "-42", "-42");
    json_of(GM_PARAM_DOUBLE, "0.1", "0.1");
    json_of(GM_PARAM_DOUBLE, "2", "2");
    json_of(GM_PARAM_DOUBLE, "1e-300", "1e-300");
    json_of(GM_PARAM_DOUBLE, "0.30000000000000004", "0.30000000000000004");
    json_of(GM_PARAM_BOOL, "yes", "true");
    json_of(GM_PARAM_BOOL, "off", "false");
    json_of(GM_PARAM_ENUM, "auto", "\"auto\"");
    json_of(GM_PARAM_STRING, "plain", "\"plain\"");
    json_of(GM_PARAM_STRING, "a \"q\" \\ \n\t\x01", "\"a \\\"q\\\" \\\\ \\n\\t\\u0001\"");

    char buf[32];
    gm_param_value_t v = {.d = NAN};
    gm_param_json(spec_of(GM_PARAM_DOUBLE), v, buf, sizeof buf);
    cr_expect_str_eq(buf, "null");
    v.s = NULL;
    gm_param_json(spec_of(GM_PARAM_STRING), v, buf, sizeof buf);
    cr_expect_str_eq(buf, "null");
    v.e = 7;
    gm_param_json(spec_of(GM_PARAM_ENUM), v, buf, sizeof buf);
    cr_expect_str_eq(buf, "\"\"", "out-of-range enum");

    /* a parameter set's values, from defaults */
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, gm_policy_find("buddy"), NULL), 0);
    const char *want[] = {"512", "1073741824", "\"never\""};
    for (size_t i = 0; i < 3; i++) {
        gm_param_json(&p.ops->params[i], p.values[i], buf, sizeof buf);
        cr_expect_str_eq(buf, want[i]);
    }
    gm_params_release(&p);

    char tiny[4];
    v.s = "abcdef";
    gm_param_json(spec_of(GM_PARAM_STRING), v, tiny, sizeof tiny);
    cr_expect_eq(strlen(tiny), 3, "truncated and terminated");
}

/* A value too long for the buffer still gives valid JSON: a string is cut
 * between whole characters and escapes and keeps its closing quote; a
 * number or bool becomes null (a number cut short would be another value). */
Test(params, json_truncation_stays_valid)
{
    gm_param_value_t v = {.s = "tab\there \"µ\" \x01 bad\xff end"};
    char full[128];
    gm_param_json(spec_of(GM_PARAM_STRING), v, full, sizeof full);
    cr_expect_str_eq(full, "\"tab\\there \\\"µ\\\" \\u0001 bad\\ufffd end\"");
    for (size_t len = 3; len <= strlen(full) + 1; len++) {
        char buf[128];
        gm_param_json(spec_of(GM_PARAM_STRING), v, buf, len);
        cr_expect(gt_json_string_valid(buf), "len %zu: %s", len, buf);
        cr_expect_lt(strlen(buf), len);
    }
    for (size_t len = 1; len < 3; len++) {
        char buf[4] = "XXX";
        gm_param_json(spec_of(GM_PARAM_STRING), v, buf, len);
        cr_expect_str_eq(buf, "", "len %zu", len);
    }

    char buf[8];
    v.size = UINT64_C(1073741824);
    gm_param_json(spec_of(GM_PARAM_SIZE), v, buf, sizeof buf);
    cr_expect_str_eq(buf, "null", "a size that does not fit");
    gm_param_json(spec_of(GM_PARAM_SIZE), v, buf, 4);
    cr_expect_str_eq(buf, "", "not even null fits");
    v.b = 0;
    gm_param_json(spec_of(GM_PARAM_BOOL), v, buf, 6);
    cr_expect_str_eq(buf, "false");
    gm_param_json(spec_of(GM_PARAM_BOOL), v, buf, 5);
    cr_expect_str_eq(buf, "null");
    v.d = 0.1 + 0.2;
    gm_param_json(spec_of(GM_PARAM_DOUBLE), v, buf, sizeof buf);
    cr_expect_str_eq(buf, "null");
    v.e = 1;
    gm_param_json(spec_of(GM_PARAM_ENUM), v, buf, 5);
    cr_expect_str_eq(buf, "\"fa\"", "an enum name is a string: shortened");
}

Test(params, registry)
{
    cr_assert_geq(gm_policy_count(), 2);
    cr_expect_str_eq(gm_policy_at(0)->name, "native");
    cr_expect_not_null(gm_policy_find("buddy"));
    cr_expect_null(gm_policy_at(gm_policy_count()));
    for (size_t i = 0; i < gm_policy_count(); i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        cr_expect_eq(gm_policy_find(ops->name), ops);
        cr_expect_not_null(ops->help);
        cr_expect_not_null(ops->create);
        cr_expect_not_null(ops->alloc);
        cr_expect_not_null(ops->free);
        cr_expect_not_null(ops->stats);
        cr_expect_not_null(ops->check);
        cr_expect_not_null(ops->destroy);
        for (size_t j = 0; j < i; j++)
            cr_expect_str_neq(gm_policy_at(j)->name, ops->name, "duplicate name");
    }
    cr_expect_null(gm_policy_find("nonesuch"));
    cr_expect_null(gm_policy_find(NULL));
    cr_expect_null(gm_policy_find("Buddy"));
}

Test(params, one_setting_one_value)
{
    /* Where 0 means no limit, "none" is 0: the same configuration gives
     * the same resolved values, hence one run key (gm_params_json). */
    static const char *const keys[][2] = {{"caching", "max_split_size"},
                                          {"pool", "maximum_pool_size"},
                                          {"binning", "maximum_pool_size"}};
    gm_error_t err = {0};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const gm_policy_ops_t *ops = gm_policy_find(keys[i][0]);
        cr_assert_not_null(ops, "%s", keys[i][0]);
        gm_params_t dflt;
        cr_assert_eq(gm_params_init(&dflt, ops, &err), 0, "%s", err.msg);
        char *want = gm_params_json(&dflt);
        cr_assert_not_null(want);
        static const char *const spellings[] = {"none", "None", "unlimited", "0", "0KiB"};
        for (size_t k = 0; k < sizeof spellings / sizeof spellings[0]; k++) {
            gm_params_t p;
            cr_assert_eq(gm_params_init(&p, ops, &err), 0);
            cr_assert_eq(gm_params_set(&p, keys[i][1], spellings[k], &err), 0, "%s", err.msg);
            char *got = gm_params_json(&p);
            cr_assert_str_eq(got, want, "%s.%s=%s", keys[i][0], keys[i][1], spellings[k]);
            free(got);
            gm_params_release(&p);
        }
        /* a real limit is another value */
        gm_params_t p;
        cr_assert_eq(gm_params_init(&p, ops, &err), 0);
        cr_assert_eq(gm_params_set(&p, keys[i][1], "128MiB", &err), 0, "%s", err.msg);
        char *got = gm_params_json(&p);
        cr_assert_str_neq(got, want);
        free(got);
        gm_params_release(&p);
        free(want);
        gm_params_release(&dflt);
    }
    /* elsewhere "none" is still the largest size */
    gm_params_t b;
    cr_assert_eq(gm_params_init(&b, gm_policy_find("buddy"), &err), 0);
    cr_assert_eq(gm_params_set(&b, "arena", "none", &err), 0);
    cr_assert_eq(b.values[1].size, UINT64_MAX);
    gm_params_release(&b);
}
