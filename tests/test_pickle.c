/*
 * tests/test_pickle.c — the pickle data decoder (formats/pickle.c): every
 * data opcode on hand-made pickles, refusal of every code opcode with its
 * name and offset, truncation at every prefix, absurd lengths, stack and
 * memo misuse, deep nesting and cycles, the JSON writer (escaping and
 * doubles as the shared writer's; the one nesting limit across every JSON
 * reader and writer), and the real snapshots walked as trees against
 * Python's own reading of them (skipped without ../shared/data or python3).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "gmsim/store.h"
#include "base/jsonfmt.h"
#include "formats/pickle.h"
#include "util.h"

static gm__pickle_t *decode_ok(const void *data, size_t len)
{
    gm__pickle_t *p = NULL;
    gm_error_t err = {0};
    int rc = gm__pickle_decode(data, len, &p, &err);
    cr_assert_eq(rc, 0, "decode failed: %s", err.msg);
    return p;
}

static int decode_err(const void *data, size_t len, gm_error_t *err)
{
    gm__pickle_t *p = NULL;
    memset(err, 0, sizeof *err);
    int rc = gm__pickle_decode(data, len, &p, err);
    cr_assert(p == NULL || rc == 0);
    gm__pickle_free(p);
    return rc;
}

#define BYTES(s) (const void *)(s), sizeof(s) - 1

/* {'a': [1, -2, 300, 70000, 2**40, 2**64-1, 2**70], 'b': (True, False, None),
 *  'c': 1.5, 'd': b'xy', 'e': ('é',), 'f': ('a','a'), 'g': (), 'h': ()} written
 * by hand with protocol 4 opcodes, memo puts and gets. */
static const char small_pickle[] =
    "\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00" /* PROTO 4, FRAME 0 */
    "}\x94("                                       /* EMPTY_DICT MEMOIZE MARK */
    "\x8c\x01" "a\x94"                             /* 'a' memo 1 */
    "]\x94(K\x01J\xfe\xff\xff\xffM\x2c\x01J\x70\x11\x01\x00" /* [1, -2, 300, 70000 */
    "\x8a\x06\x00\x00\x00\x00\x00\x01"             /* 2**40 */
    "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00" /* 2**64 - 1 */
    "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x40" /* 2**70 */
    "e"                                            /* APPENDS */
    "\x8c\x01" "b\x88\x89N\x87"                   /* 'b': (True, False, None) */
    "\x8c\x01" "cG\x3f\xf8\x00\x00\x00\x00\x00\x00" /* 'c': 1.5 */
    "\x8c\x01" "dC\x02xy"                          /* 'd': b'xy' */
    "\x8c\x01" "eX\x02\x00\x00\x00\xc3\xa9\x85"  /* 'e': ('é',) */
    "\x8c\x01" "fh\x01h\x01\x86"                  /* 'f': (memo 1, memo 1) */
    "\x8c\x01" "g)"                                /* 'g': () */
    "\x8c\x01" "h(t"                               /* 'h': MARK TUPLE */
    "u."; /* SETITEMS STOP */

Test(pickle, data_opcodes)
{
    gm__pickle_t *p = decode_ok(BYTES(small_pickle));
    const gm__pk_t *root = gm__pickle_root(p);
    cr_assert_eq(root->type, GM__PK_DICT);
    cr_assert_eq(root->n, 8);
    const gm__pk_t *ka = gm__pickle_find_str(p, "a");
    cr_assert(ka != NULL);
    cr_assert_null(gm__pickle_find_str(p, "zz"));
    const gm__pk_t *a = gm__pk_get(root, ka);
    cr_assert_eq(a->type, GM__PK_LIST);
    cr_assert_eq(a->n, 7);
    int64_t i;
    uint64_t u;
    cr_assert(gm__pk_i64(a->v.items[0], &i) && i == 1);
    cr_assert(gm__pk_i64(a->v.items[1], &i) && i == -2);
    cr_assert(!gm__pk_u64(a->v.items[1], &u));
    cr_assert(gm__pk_i64(a->v.items[2], &i) && i == 300);
    cr_assert(gm__pk_i64(a->v.items[3], &i) && i == 70000);
    cr_assert(gm__pk_u64(a->v.items[4], &u) && u == UINT64_C(1) << 40);
    cr_assert(gm__pk_u64(a->v.items[5], &u) && u == UINT64_MAX);
    cr_assert(!gm__pk_i64(a->v.items[5], &i));
    cr_assert_eq(a->v.items[6]->type, GM__PK_BIGINT);
    cr_assert_eq(a->v.items[6]->n, 9);

    const gm__pk_t *b = gm__pk_get(root, gm__pickle_find_str(p, "b"));
    cr_assert_eq(b->type, GM__PK_TUPLE);
    cr_assert_eq(b->n, 3);
    cr_assert_eq(b->v.items[0]->type, GM__PK_BOOL);
    cr_assert_eq(b->v.items[0]->v.i, 1);
    cr_assert_eq(b->v.items[1]->v.i, 0);
    cr_assert_eq(b->v.items[2]->type, GM__PK_NONE);
    const gm__pk_t *c = gm__pk_get(root, gm__pickle_find_str(p, "c"));
    cr_assert_eq(c->type, GM__PK_FLOAT);
    cr_assert_float_eq(c->v.f, 1.5, 1e-12);
    const gm__pk_t *d = gm__pk_get(root, gm__pickle_find_str(p, "d"));
    cr_assert_eq(d->type, GM__PK_BYTES);
    cr_assert_str_eq(d->v.s, "xy");
    const gm__pk_t *e = gm__pk_get(root, gm__pickle_find_str(p, "e"));
    cr_assert_eq(e->n, 1);
    cr_assert(gm__pk_is_str(e->v.items[0], "\xc3\xa9"));
    const gm__pk_t *f = gm__pk_get(root, gm__pickle_find_str(p, "f"));
    cr_assert_eq(f->n, 2);
    cr_assert_eq(f->v.items[0], ka, "a memo get is the same node");
    cr_assert_eq(f->v.items[1], ka);
    cr_assert_eq(gm__pk_get(root, gm__pickle_find_str(p, "g"))->n, 0);
    cr_assert_eq(gm__pk_get(root, gm__pickle_find_str(p, "h"))->type, GM__PK_TUPLE);

    /* Hinted lookup finds keys wherever they are. */
    uint32_t hint = 5;
    cr_assert_eq(gm__pk_geth(root, ka, &hint), a);
    cr_assert_eq(hint, 0);
    cr_assert_eq(gm__pk_geth(root, ka, &hint), a);

    char *json;
    gm_error_t err;
    cr_assert_eq(gm__pickle_to_json(root, 8, &json, &err), 0, "%s", err.msg);
    cr_assert_str_eq(json, "{\"a\": [1, -2, 300, 70000, 1099511627776, "
                           "18446744073709551615, null], "
                           "\"b\": [true, false, null], \"c\": 1.5, \"d\": \"xy\", "
                           "\"e\": [\"\xc3\xa9\"], \"f\": [\"a\", \"a\"], \"g\": [], \"h\": []}");
    free(json);
    gm__pickle_free(p);
}

/* Strings are interned: equal strings decoded separately are one node. */
Test(pickle, interning)
{
    static const char pk[] = "\x80\x04(\x8c\x03keyX\x03\x00\x00\x00keyU\x03key" "l.";
    gm__pickle_t *p = decode_ok(BYTES(pk));
    const gm__pk_t *r = gm__pickle_root(p);
    cr_assert_eq(r->type, GM__PK_LIST);
    cr_assert_eq(r->n, 3);
    cr_assert_eq(r->v.items[0], r->v.items[1]);
    cr_assert_eq(r->v.items[1], r->v.items[2]);
    gm__pickle_free(p);
}

/* Protocol 0 numeric, memo and container opcodes, and sets. */
Test(pickle, protocol0_and_sets)
{
    static const char pk[] = "(I42\nI01\nL-7L\nF2.5\np0\ng0\n(lp1\n0(dI1\nI2\nsS"
                             "\x8f(K\x01K\x02\x90(K\x03\x91t.";
    /* S (STRING) is refused: cut before it and close the tuple. */
    char buf[64];
    size_t cut = (size_t)(strchr(pk, 'S') - pk);
    memcpy(buf, pk, cut);
    memcpy(buf + cut, "t.", 2);
    gm__pickle_t *p = decode_ok(buf, cut + 2);
    const gm__pk_t *r = gm__pickle_root(p);
    cr_assert_eq(r->type, GM__PK_TUPLE);
    cr_assert_eq(r->n, 6, "%u", r->n);
    int64_t i;
    cr_assert(gm__pk_i64(r->v.items[0], &i) && i == 42);
    cr_assert_eq(r->v.items[1]->type, GM__PK_BOOL);
    cr_assert(gm__pk_i64(r->v.items[2], &i) && i == -7);
    cr_assert_float_eq(r->v.items[3]->v.f, 2.5, 1e-12);
    cr_assert_eq(r->v.items[4], r->v.items[3]);
    cr_assert_eq(r->v.items[5]->type, GM__PK_DICT);
    gm__pickle_free(p);

    static const char sets[] = "\x80\x04\x8f(K\x01K\x02\x90(K\x03\x91\x86.";
    p = decode_ok(BYTES(sets));
    r = gm__pickle_root(p);
    cr_assert_eq(r->v.items[0]->type, GM__PK_SET);
    cr_assert_eq(r->v.items[0]->n, 2);
    cr_assert_eq(r->v.items[1]->type, GM__PK_SET);
    gm__pickle_free(p);

    gm_error_t err;
    cr_assert_eq(decode_err(pk, sizeof pk - 1, &err), GM_EFORMAT);
    cr_assert(strstr(err.msg, "opcode STRING at byte") != NULL, "%s", err.msg);
}

Test(pickle, code_opcodes_refused)
{
    static const struct {
        const char *name;
        const char *data;
        size_t len;
    } cases[] = {
        {"GLOBAL", "\x80\x02" "cos\nsystem\n", 13},
        {"STACK_GLOBAL", "\x80\x04\x8c\x02os\x8c\x06system\x93", 15},
        {"REDUCE", "\x80\x02N)R", 5},
        {"BUILD", "\x80\x02}}b", 5},
        {"INST", "\x80\x02(ios\nsystem\n", 14},
        {"OBJ", "\x80\x02(No", 5},
        {"NEWOBJ", "\x80\x02N)\x81", 5},
        {"NEWOBJ_EX", "\x80\x04N)}\x92", 6},
        {"EXT1", "\x80\x02\x82\x01", 4},
        {"EXT2", "\x80\x02\x83\x01\x00", 5},
        {"EXT4", "\x80\x02\x84\x01\x00\x00\x00", 7},
        {"PERSID", "\x80\x02P1\n", 5},
        {"BINPERSID", "\x80\x02NQ", 4},
        {"NEXT_BUFFER", "\x80\x05\x97", 3},
        {"READONLY_BUFFER", "\x80\x05N\x98", 4},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gm_error_t err;
        cr_assert_eq(decode_err(cases[k].data, cases[k].len, &err), GM_EFORMAT, "%s",
                     cases[k].name);
        char want[64];
        /* the opcode is the first byte that is no data opcode */
        size_t at = 0;
        for (size_t i = 0; i < cases[k].len; i++) {
            const char *nm = gm__pickle_opname((unsigned char)cases[k].data[i]);
            if (nm && strcmp(nm, cases[k].name) == 0) {
                at = i;
                break;
            }
        }
        snprintf(want, sizeof want, "opcode %s at byte %zu", cases[k].name, at);
        cr_assert(strstr(err.msg, want) != NULL, "%s: %s", want, err.msg);
        cr_assert(strstr(err.msg, "never executed") != NULL, "%s", err.msg);
    }
}

Test(pickle, truncation_at_every_prefix)
{
    for (size_t n = 0; n < sizeof small_pickle - 1; n++) {
        gm_error_t err;
        cr_assert_eq(decode_err(small_pickle, n, &err), GM_EFORMAT, "prefix %zu", n);
        cr_assert(strncmp(err.msg, "byte ", 5) == 0, "prefix %zu: %s", n, err.msg);
    }
}

Test(pickle, absurd_lengths_and_misuse)
{
    static const struct {
        const char *data;
        size_t len;
        const char *msg;
    } cases[] = {
#define C(s, m) {s, sizeof(s) - 1, m}
        C("\x80\x04X\xff\xff\xff\xff", "above the limit"),
        C("\x80\x04X\x00\x00\x00\x7f", "truncated"),
        C("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\xff", "above the limit"),
        C("\x80\x04\x8e\x00\x00\x00\x00\x01\x00\x00\x00", "above the limit"),
        C("\x80\x04\x8e\x00\x00\x00\x01\x00\x00\x00\x00", "truncated"),
        C("\x80\x04\x8b\xff\xff\xff\xff", "negative length"),
        C("\x80\x04T\xff\xff\xff\xff", "negative length"),
        C("\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\x7f", "frame"),
        C("\x80\x09N.", "unsupported protocol"),
        C("\x80\x04h\x05", "memo index 5 was never stored"),
        C("\x80\x04j\x00\x00\x00\x40", "never stored"),
        C("\x80\x04N\x94N\x94r\xff\xff\xff\x7f", "out of range"),
        {"\x80\x04" "a", 3, "stack underflow"},
        C("\x80\x04K\x01(a", "stack underflow"),
        C("\x80\x04K\x01(0a", "stack underflow"),
        C("\x80\x04NN.", "2 values"),
        C("\x80\x04(N.", "MARKs"),
        C("\x80\x04" "e", "no MARK"),
        C("\x80\x04N(K\x01" "e", "not a list"),
        C("\x80\x04}(K\x01u", "odd number"),
        C("\x80\x04(K\x01" "d", "odd number"),
        C("\x80\x04\xff", "unknown opcode 0xff"),
        C("", "empty"),
        C("\x80\x04I12x\n", "bad integer"),
        C("\x80\x04I123", "no end of line"),
        C("\x80\x04g1x\n", "bad memo index"),
#undef C
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gm_error_t err;
        cr_assert_eq(decode_err(cases[k].data, cases[k].len, &err), GM_EFORMAT, "case %zu", k);
        cr_assert(strstr(err.msg, cases[k].msg) != NULL, "case %zu: '%s' not in '%s'", k,
                  cases[k].msg, err.msg);
        cr_assert(strncmp(err.msg, "byte ", 5) == 0, "case %zu: %s", k, err.msg);
    }
}

/* 200000 nested lists decode (no recursion); the JSON writer stops at its
 * depth; a list holding itself is a cycle the writer reports too. */
Test(pickle, deep_nesting_and_cycles)
{
    size_t depth = 200000;
    size_t len = 2 + depth + (depth - 1) + 1;
    char *buf = malloc(len);
    cr_assert(buf != NULL);
    memcpy(buf, "\x80\x04", 2);
    memset(buf + 2, ']', depth);
    memset(buf + 2 + depth, 'a', depth - 1);
    buf[len - 1] = '.';
    gm__pickle_t *p = decode_ok(buf, len);
    char *json;
    gm_error_t err;
    cr_assert_eq(gm__pickle_to_json(gm__pickle_root(p), 32, &json, &err), GM_EFORMAT);
    cr_assert(strstr(err.msg, "nested too deeply") != NULL, "%s", err.msg);
    gm__pickle_free(p);
    free(buf);

    static const char cyc[] = "\x80\x04]\x94h\x00" "a.";
    p = decode_ok(BYTES(cyc));
    const gm__pk_t *r = gm__pickle_root(p);
    cr_assert_eq(r->v.items[0], r);
    cr_assert_eq(gm__pickle_to_json(r, 32, &json, &err), GM_EFORMAT);
    gm__pickle_free(p);

    /* Too many open MARKs. */
    size_t nm = (size_t)GM__PK_MAX_MARKS + 2;
    buf = malloc(nm + 2);
    memcpy(buf, "\x80\x04", 2);
    memset(buf + 2, '(', nm);
    cr_assert_eq(decode_err(buf, nm + 2, &err), GM_EFORMAT);
    cr_assert(strstr(err.msg, "nested MARKs") != NULL, "%s", err.msg);
    free(buf);
}

Test(pickle, json_strings)
{
    /* control characters, quotes, invalid UTF-8, a non-string key, NaN */
    static const char pk[] = "\x80\x04}(\x8c\x05" "a\"\x01\xff" "b"
                             "G\x7f\xf8\x00\x00\x00\x00\x00\x00"
                             "K\x07\x8c\x02\xe2\x82" "u.";
    gm__pickle_t *p = decode_ok(BYTES(pk));
    char *json;
    gm_error_t err;
    cr_assert_eq(gm__pickle_to_json(gm__pickle_root(p), 8, &json, &err), 0, "%s", err.msg);
    cr_assert_str_eq(json, "{\"a\\\"\\u0001\\ufffdb\": null, \"7\": \"\\ufffd\\ufffd\"}");
    free(json);
    gm__pickle_free(p);
}

/* ---- real snapshots against Python ------------------------------------------ */

typedef struct walk {
    uint64_t dicts, lists, tuples, strs, ints, floats, bools, nones, int_sum, str_bytes;
} walk_t;

static void walk(const gm__pk_t *v, walk_t *w, int depth)
{
    cr_assert(depth < 64, "snapshot nested too deeply");
    switch (v->type) {
    case GM__PK_NONE: w->nones++; break;
    case GM__PK_BOOL: w->bools++; break;
    case GM__PK_INT:
        w->ints++;
        w->int_sum += v->v.u;
        break;
    case GM__PK_FLOAT: w->floats++; break;
    case GM__PK_STR:
        w->strs++;
        w->str_bytes += v->n;
        break;
    case GM__PK_DICT:
        w->dicts++;
        for (uint32_t i = 0; i < 2 * v->n; i++)
            walk(v->v.items[i], w, depth + 1);
        break;
    case GM__PK_LIST:
    case GM__PK_TUPLE:
        if (v->type == GM__PK_LIST)
            w->lists++;
        else
            w->tuples++;
        for (uint32_t i = 0; i < v->n; i++)
            walk(v->v.items[i], w, depth + 1);
        break;
    default: cr_assert_fail("unexpected type %d", v->type);
    }
}

static void compare_with_python(const char *rel)
{
    const char *why;
    const char *path = gt_data_path(rel, &why);
    if (path == NULL)
        cr_skip_test("%s", why);
    if (system("python3 -c 'import pickle' >/dev/null 2>&1") != 0)
        cr_skip_test("python3 is not available");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/torch_check.py' --digest '%s'", GM_SOURCE_DIR,
             path);
    FILE *f = popen(cmd, "r");
    cr_assert(f != NULL);
    walk_t py = {0};
    int n = fscanf(f,
                   "dicts=%" SCNu64 " lists=%" SCNu64 " tuples=%" SCNu64 " strs=%" SCNu64
                   " ints=%" SCNu64 " floats=%" SCNu64 " bools=%" SCNu64 " nones=%" SCNu64
                   " int_sum=%" SCNu64 " str_bytes=%" SCNu64,
                   &py.dicts, &py.lists, &py.tuples, &py.strs, &py.ints, &py.floats, &py.bools,
                   &py.nones, &py.int_sum, &py.str_bytes);
    cr_assert_eq(pclose(f), 0, "python3 failed on %s", rel);
    cr_assert_eq(n, 10);

    size_t len;
    char *data = gt_read_file(path, &len);
    cr_assert(data != NULL);
    gm__pickle_t *p = decode_ok(data, len);
    walk_t c = {0};
    walk(gm__pickle_root(p), &c, 0);
    cr_assert_eq(c.dicts, py.dicts);
    cr_assert_eq(c.lists, py.lists);
    cr_assert_eq(c.tuples, py.tuples);
    cr_assert_eq(c.strs, py.strs);
    cr_assert_eq(c.ints, py.ints);
    cr_assert_eq(c.floats, py.floats);
    cr_assert_eq(c.bools, py.bools);
    cr_assert_eq(c.nones, py.nones);
    cr_assert_eq(c.int_sum, py.int_sum);
    cr_assert_eq(c.str_bytes, py.str_bytes);
    gm__pickle_free(p);
    free(data);
}

Test(pickle, real_snapshot_msd) { compare_with_python("snapshots/msd_basic.pickle"); }

Test(pickle, real_snapshot_newest_format)
{
    compare_with_python("snapshots/lmmedium_ctx128_inference_fp32.pickle");
}

/* ---- one JSON: the pickle writer and the shared escaper and formatter ----- */

static char *pk_file_literal(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f != NULL);
    gm_json_write_string(f, s);
    fclose(f);
    return buf;
}

static char *pk_file_double(double v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f != NULL);
    gm_json_t j;
    gm_json_init(&j, f, 0);
    gm_json_double(&j, v);
    fclose(f);
    return buf;
}

/* Strings (a control character by name and by number, a quote, a byte that
 * is not UTF-8, a NUL) and doubles (0.1, 1e300, NaN, -0.0) come out of the
 * pickle path exactly as the streaming writer prints them. */
Test(pickle, json_as_the_shared_writer)
{
    static const char pk[] = "\x80\x04](" /* [ */
                             "\x8c\x05" "a\n\x01\xff\""                  /* str */
                             "C\x03" "x\x00y"                            /* bytes with a NUL */
                             "G\x3f\xb9\x99\x99\x99\x99\x99\x9a"         /* 0.1 */
                             "G\x7e\x37\xe4\x3c\x88\x00\x75\x9c"         /* 1e300 */
                             "G\x7f\xf8\x00\x00\x00\x00\x00\x00"         /* NaN */
                             "G\x80\x00\x00\x00\x00\x00\x00\x00"         /* -0.0 */
                             "e.";
    gm__pickle_t *p = decode_ok(BYTES(pk));
    char *json;
    gm_error_t err;
    cr_assert_eq(gm__pickle_to_json(gm__pickle_root(p), 8, &json, &err), 0, "%s", err.msg);

    char *s = pk_file_literal("a\n\x01\xff\"");
    cr_assert_str_eq(s, "\"a\\n\\u0001\\ufffd\\\"\"");
    char nul[32];
    cr_assert_eq(gm__json_escape_mem(nul, sizeof nul, "x\0y", 3), 10);
    cr_assert_str_eq(nul, "\"x\\u0000y\"");
    char *d1 = pk_file_double(0.1), *d2 = pk_file_double(1e300), *d3 = pk_file_double(NAN),
         *d4 = pk_file_double(-0.0);
    cr_assert_str_eq(d1, "0.1");
    cr_assert_str_eq(d2, "1e+300");
    cr_assert_str_eq(d3, "null");
    char want[256];
    snprintf(want, sizeof want, "[%s, %s, %s, %s, %s, %s]", s, nul, d1, d2, d3, d4);
    cr_assert_str_eq(json, want);
    free(s);
    free(d1);
    free(d2);
    free(d3);
    free(d4);
    free(json);
    gm__pickle_free(p);
}

/* "[[...]]": n arrays nested (with an object around them when object). */
static char *pk_nested_text(size_t n, int object)
{
    char *t = malloc(2 * n + 16);
    cr_assert(t != NULL);
    size_t k = 0;
    if (object)
        k += (size_t)sprintf(t, "{\"k\":");
    size_t arrays = object ? n - 1 : n;
    memset(t + k, '[', arrays);
    memset(t + k + arrays, ']', arrays);
    k += 2 * arrays;
    if (object)
        k += (size_t)sprintf(t + k, ",\"n\":5}");
    t[k] = '\0';
    return t;
}

/* n lists nested, as a pickle. */
static char *pk_nested_pickle(size_t n, size_t *len)
{
    *len = 2 + n + (n - 1) + 1;
    char *buf = malloc(*len);
    cr_assert(buf != NULL);
    memcpy(buf, "\x80\x04", 2);
    memset(buf + 2, ']', n);
    memset(buf + 2 + n, 'a', n - 1);
    buf[*len - 1] = '.';
    return buf;
}

/* One nesting limit: a text nested GM_JSON_MAX_DEPTH deep is read by the
 * tree reader, the member scanner, gm_attr_int and the store (a trace's
 * attrs object with a value nested one level less, written and read back),
 * and written by the pickle writer and the streaming writer (commas right
 * at every level); one level more fails in each. */
Test(pickle, one_nesting_limit)
{
    gm_error_t err;
    gm_store_t *s;
    gm_writer_t *w;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_begin(s, "t", 0, &w, &err), 0, "%s", err.msg);
    for (size_t n = GM_JSON_MAX_DEPTH; n <= GM_JSON_MAX_DEPTH + 1; n++) {
        int ok = n == GM_JSON_MAX_DEPTH;
        char *arr = pk_nested_text(n, 0), *obj = pk_nested_text(n, 1);
        gm_jv_t *v = NULL;
        cr_expect_eq(gm_json_parse(arr, strlen(arr), &v, &err) == 0, ok, "parse %zu", n);
        gm_jv_free(v);
        v = NULL;
        cr_expect_eq(gm_json_parse(obj, strlen(obj), &v, &err) == 0, ok, "parse {} %zu", n);
        gm_jv_free(v);
        char buf[2 * GM_JSON_MAX_DEPTH + 16];
        cr_expect_eq(gm_json_member(obj, "k", buf, sizeof buf), ok, "member %zu", n);
        cr_expect_eq(gm_attr_int(obj, "n"), ok ? 5 : -1, "gm_attr_int %zu", n);
        /* an attribute's value sits in the attrs object: one level less */
        char *val = pk_nested_text(n - 1, 0);
        cr_expect_eq(gm_writer_attr_json(w, "a", val, &err) == 0, ok, "attr %zu", n);
        free(val);
        free(arr);
        free(obj);

        size_t len;
        char *pk = pk_nested_pickle(n, &len);
        gm__pickle_t *p = decode_ok(pk, len);
        char *json = NULL;
        int rc = gm__pickle_to_json(gm__pickle_root(p), GM_JSON_MAX_DEPTH, &json, &err);
        cr_expect_eq(rc == 0, ok, "pickle %zu", n);
        if (rc == 0) {
            cr_expect_eq(strlen(json), 2 * n);
            cr_expect_eq(gm_json_parse(json, strlen(json), &v, &err), 0, "%s", err.msg);
            gm_jv_free(v);
            v = NULL;
        } else {
            cr_expect(strstr(err.msg, "nested too deeply") != NULL, "%s", err.msg);
        }
        free(json);
        gm__pickle_free(p);
        free(pk);
    }
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "t", &info, &err), 0, "%s", err.msg);
    gm_jv_t *attrs = NULL;
    cr_expect_eq(gm_json_parse(info.attrs, strlen(info.attrs), &attrs, &err), 0, "%s", err.msg);
    gm_jv_free(attrs);
    gm_trace_info_release(&info);
    gm_store_close(s);

    /* The streaming writer: an element before and after every nested array. */
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    cr_assert(f != NULL);
    gm_json_t j;
    gm_json_init(&j, f, 0);
    for (int i = 0; i < GM_JSON_MAX_DEPTH; i++) {
        gm_json_begin_array(&j);
        gm_json_u64(&j, (uint64_t)i);
    }
    for (int i = 0; i < GM_JSON_MAX_DEPTH; i++) {
        gm_json_end_array(&j);
        if (i < GM_JSON_MAX_DEPTH - 1)
            gm_json_u64(&j, 7);
    }
    fclose(f);
    char *want = malloc(16 * GM_JSON_MAX_DEPTH);
    cr_assert(want != NULL);
    size_t k = 0;
    for (int i = 0; i < GM_JSON_MAX_DEPTH; i++)
        k += (size_t)sprintf(want + k, "%s[%d", i ? "," : "", i);
    for (int i = 0; i < GM_JSON_MAX_DEPTH; i++)
        k += (size_t)sprintf(want + k, "]%s", i < GM_JSON_MAX_DEPTH - 1 ? ",7" : "");
    cr_expect_str_eq(out, want);
    gm_jv_t *v = NULL;
    cr_expect_eq(gm_json_parse(out, strlen(out), &v, &err), 0, "%s", err.msg);
    gm_jv_free(v);
    free(want);
    free(out);
}
