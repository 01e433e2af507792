/*
 * base/jsonread.c — a small JSON reader (gmsim/json.h): recursive descent
 * into a tree whose nodes and text live in one arena per document, so a
 * document is freed at once.
 *
 * Strings are decoded (escapes, \u surrogate pairs → UTF-8; an unpaired
 * surrogate is refused).  Numbers keep their double value and, when written
 * as an integer, their exact 64-bit value, so byte counts above 2^53 stay
 * exact.  Object members keep their order; lookups scan (attribute objects
 * are small).
 *
 * gm__json_check (base/jsonfmt.h) runs the same descent building nothing:
 * the store's check of the JSON texts it keeps, so that what it stores is
 * exactly what this reader reads.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/json.h"
#include "base/jsonfmt.h"
#include "base/vec.h"

#define JV_ARENA_MIN 4096

struct gm_jv {
    gm_jv_type_t type;
    int int_kind; /* numbers: 0 not an integer, 1 fits u64 (≥ 0), 2 fits i64 (< 0) */
    union {
        int b;
        struct {
            double d;
            uint64_t u; /* |value| as written, for int_kind ≠ 0 */
        } num;
        struct {
            char *s;
            size_t len;
        } str;
        struct {
            gm_jv_t **items;
            char **keys; /* objects only */
            size_t n;
        } list;
    } u;
};

typedef struct jv_chunk {
    struct jv_chunk *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
} jv_chunk_t;

/* The root node is the first allocation of the first chunk; the chunk list
 * hangs before it.  gm_jv_free finds the list through jv_root_t. */
typedef struct jv_root {
    jv_chunk_t *chunks;
    gm_jv_t node;
} jv_root_t;

typedef struct jv_parser {
    const char *p, *start, *end;
    jv_chunk_t *chunks;
    gm_error_t *err;
    int depth;
    int max_depth;
    int check; /* gm__json_check: build nothing, and refuse strings that are not UTF-8 */
} jv_parser_t;

static void *jv_alloc(jv_parser_t *ps, size_t n)
{
    n = (n + _Alignof(max_align_t) - 1) & ~(size_t)(_Alignof(max_align_t) - 1);
    jv_chunk_t *c = ps->chunks;
    if (c == NULL || c->cap - c->used < n) {
        size_t cap = n > JV_ARENA_MIN ? n : JV_ARENA_MIN;
        if (c != NULL && c->cap * 2 > cap && c->cap < (size_t)1 << 24)
            cap = c->cap * 2 > n ? c->cap * 2 : n;
        c = malloc(sizeof *c + cap);
        if (c == NULL)
            return NULL;
        c->next = ps->chunks;
        c->used = 0;
        c->cap = cap;
        ps->chunks = c;
    }
    void *r = c->data + c->used;
    c->used += n;
    return r;
}

static int jv_fail(jv_parser_t *ps, const char *what)
{
    if (ps->err != NULL && ps->err->code == 0)
        gm_error_set(ps->err, GM_EFORMAT, "invalid JSON at byte %zu: %s",
                     (size_t)(ps->p - ps->start), what);
    return -1;
}

static int jv_oom(jv_parser_t *ps)
{
    if (ps->err != NULL && ps->err->code == 0)
        gm_error_set(ps->err, GM_ENOMEM, "out of memory reading JSON");
    return -1;
}

static void jv_ws(jv_parser_t *ps)
{
    while (ps->p < ps->end &&
           (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int jv_hex4(jv_parser_t *ps, unsigned *out)
{
    if (ps->end - ps->p < 4)
        return jv_fail(ps, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *ps->p++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return jv_fail(ps, "bad hex digit in \\u escape");
    }
    *out = v;
    return 0;
}

/* One decoded byte into buf, or only counted when checking. */
#define JV_PUT(c)                 \
    do {                          \
        if (buf != NULL)          \
            buf[n] = (char)(c);   \
        n++;                      \
    } while (0)

/* A string literal at ps->p (the opening quote); decoded into the arena,
 * or when checking only read (and its UTF-8 checked). */
static int jv_string(jv_parser_t *ps, char **out, size_t *outlen)
{
    ps->p++; /* the quote */
    if (ps->check) {
        /* the run of plain ASCII before anything to look at */
        const unsigned char *u = (const unsigned char *)ps->p;
        const unsigned char *e = (const unsigned char *)ps->end;
        while (u < e && *u >= 0x20 && *u < 0x80 && *u != '"' && *u != '\\')
            u++;
        ps->p = (const char *)u;
        if (u < e && *u == '"') {
            ps->p++;
            *out = NULL;
            *outlen = 0;
            return 0;
        }
    }
    /* Decoded text is never longer than the literal. */
    const char *q = ps->p;
    while (q < ps->end && *q != '"') {
        if (*q == '\\')
            q++;
        q++;
    }
    if (q >= ps->end)
        return jv_fail(ps, "unterminated string");

    char *buf = NULL; /* NULL when checking: the text is decoded nowhere */
    if (!ps->check && (buf = jv_alloc(ps, (size_t)(q - ps->p) + 1)) == NULL)
        return jv_oom(ps);
    size_t n = 0;
    while (*ps->p != '"') {
        /* a run of bytes copied as they are (not UTF-8 checked unless checking) */
        const unsigned char *r = (const unsigned char *)ps->p;
        while (*r != '"' && *r != '\\' && *r >= 0x20 && (*r < 0x80 || !ps->check))
            r++;
        if (r != (const unsigned char *)ps->p) {
            size_t k = (size_t)(r - (const unsigned char *)ps->p);
            if (buf != NULL)
                memcpy(buf + n, ps->p, k);
            n += k;
            ps->p = (const char *)r;
            continue;
        }
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20)
            return jv_fail(ps, "control character in string");
        if (c != '\\') {
            size_t k = 1;
            /* a sequence cut short stops at the closing quote */
            if (c >= 0x80 && ps->check && (k = gm__utf8_len((const unsigned char *)ps->p)) == 0)
                return jv_fail(ps, "invalid UTF-8 in string");
            for (; k > 0; k--, ps->p++)
                JV_PUT(*ps->p);
            continue;
        }
        ps->p++;
        char e = *ps->p++;
        switch (e) {
        case '"': JV_PUT('"'); break;
        case '\\': JV_PUT('\\'); break;
        case '/': JV_PUT('/'); break;
        case 'b': JV_PUT('\b'); break;
        case 'f': JV_PUT('\f'); break;
        case 'n': JV_PUT('\n'); break;
        case 'r': JV_PUT('\r'); break;
        case 't': JV_PUT('\t'); break;
        case 'u': {
            unsigned cp;
            if (jv_hex4(ps, &cp))
                return -1;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return jv_fail(ps, "unpaired low surrogate");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
                    return jv_fail(ps, "unpaired high surrogate");
                ps->p += 2;
                if (jv_hex4(ps, &lo))
                    return -1;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return jv_fail(ps, "unpaired high surrogate");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            /* UTF-8 of cp: at most 4 bytes, never more than the 6 or 12
             * bytes of its escape. */
            if (cp < 0x80) {
                JV_PUT((char)cp);
            } else if (cp < 0x800) {
                JV_PUT((char)(0xC0 | (cp >> 6)));
                JV_PUT((char)(0x80 | (cp & 0x3F)));
            } else if (cp < 0x10000) {
                JV_PUT((char)(0xE0 | (cp >> 12)));
                JV_PUT((char)(0x80 | ((cp >> 6) & 0x3F)));
                JV_PUT((char)(0x80 | (cp & 0x3F)));
            } else {
                JV_PUT((char)(0xF0 | (cp >> 18)));
                JV_PUT((char)(0x80 | ((cp >> 12) & 0x3F)));
                JV_PUT((char)(0x80 | ((cp >> 6) & 0x3F)));
                JV_PUT((char)(0x80 | (cp & 0x3F)));
            }
            break;
        }
        default:
            ps->p--;
            return jv_fail(ps, "bad escape in string");
        }
    }
    ps->p++; /* the closing quote */
    if (buf != NULL)
        buf[n] = '\0';
    *out = buf;
    *outlen = n;
    return 0;
}

static int jv_number(jv_parser_t *ps, gm_jv_t *v)
{
    const char *s = ps->p;
    int neg = 0, integer = 1;
    if (ps->p < ps->end && *ps->p == '-') {
        neg = 1;
        ps->p++;
    }
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
        return jv_fail(ps, "expected a digit");
    uint64_t u = 0;
    int overflow = 0;
    if (*ps->p == '0') {
        ps->p++;
    } else {
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
            unsigned d = (unsigned)(*ps->p++ - '0');
            if (u > (UINT64_MAX - d) / 10)
                overflow = 1;
            else
                u = u * 10 + d;
        }
    }
    if (ps->p < ps->end && *ps->p == '.') {
        integer = 0;
        ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return jv_fail(ps, "expected a digit after '.'");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        integer = 0;
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return jv_fail(ps, "expected a digit in the exponent");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->check)
        return 0; /* the syntax is all a check wants */
    /* strtod needs a terminated copy: numbers are short. */
    char tmp[64];
    size_t len = (size_t)(ps->p - s);
    if (len < sizeof tmp) {
        memcpy(tmp, s, len);
        tmp[len] = '\0';
        v->u.num.d = strtod(tmp, NULL);
    } else {
        v->u.num.d = neg ? -HUGE_VAL : HUGE_VAL; /* only absurdly long numbers */
    }
    v->type = GM_JV_NUMBER;
    v->u.num.u = u;
    if (integer && !overflow)
        v->int_kind = neg ? (u == 0 ? 1 : 2) : 1;
    return 0;
}

static int jv_value(jv_parser_t *ps, gm_jv_t *v);

/* Elements or members up to the closing bracket, gathered on the heap
 * then copied into the arena. */
static int jv_list(jv_parser_t *ps, gm_jv_t *v, int object)
{
    if (++ps->depth > ps->max_depth)
        return jv_fail(ps, "nested too deeply");
    ps->p++; /* [ or { */
    v->type = object ? GM_JV_OBJECT : GM_JV_ARRAY;
    size_t n = 0, cap = 0, capkeys = 0;
    gm_jv_t **items = NULL;
    char **keys = NULL;
    int rc = 0;
    char close = object ? '}' : ']';
    jv_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
    } else {
        for (;;) {
            char *key = NULL;
            size_t klen;
            jv_ws(ps);
            if (object) {
                if (ps->p >= ps->end || *ps->p != '"') {
                    rc = jv_fail(ps, "expected a member name");
                    break;
                }
                if ((rc = jv_string(ps, &key, &klen)) != 0)
                    break;
                jv_ws(ps);
                if (ps->p >= ps->end || *ps->p != ':') {
                    rc = jv_fail(ps, "expected ':'");
                    break;
                }
                ps->p++;
            }
            gm_jv_t scratch;
            gm_jv_t *item = ps->check ? &scratch : jv_alloc(ps, sizeof *item);
            if (item == NULL) {
                rc = jv_oom(ps);
                break;
            }
            if ((rc = jv_value(ps, item)) != 0)
                break;
            if (!ps->check) {
                if (GM_VEC_RESERVE(items, cap, n + 1, 8) ||
                    (object && GM_VEC_RESERVE(keys, capkeys, n + 1, 8))) {
                    rc = jv_oom(ps);
                    break;
                }
                items[n] = item;
                if (object)
                    keys[n] = key;
            }
            n++;
            jv_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == close) {
                ps->p++;
                break;
            }
            rc = jv_fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
            break;
        }
    }
    if (rc == 0 && n > 0 && !ps->check) {
        v->u.list.items = jv_alloc(ps, n * sizeof *items);
        v->u.list.keys = object ? jv_alloc(ps, n * sizeof *keys) : NULL;
        if (v->u.list.items == NULL || (object && v->u.list.keys == NULL)) {
            rc = jv_oom(ps);
        } else {
            memcpy(v->u.list.items, items, n * sizeof *items);
            if (object)
                memcpy(v->u.list.keys, keys, n * sizeof *keys);
            v->u.list.n = n;
        }
    }
    free(items);
    free(keys);
    ps->depth--;
    return rc;
}

static int jv_literal(jv_parser_t *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return jv_fail(ps, "expected a value");
    ps->p += n;
    return 0;
}

static int jv_value(jv_parser_t *ps, gm_jv_t *v)
{
    memset(v, 0, sizeof *v);
    jv_ws(ps);
    if (ps->p >= ps->end)
        return jv_fail(ps, "expected a value, found the end");
    switch (*ps->p) {
    case '{': return jv_list(ps, v, 1);
    case '[': return jv_list(ps, v, 0);
    case '"':
        v->type = GM_JV_STRING;
        return jv_string(ps, &v->u.str.s, &v->u.str.len);
    case 't':
        v->type = GM_JV_BOOL;
        v->u.b = 1;
        return jv_literal(ps, "true");
    case 'f':
        v->type = GM_JV_BOOL;
        return jv_literal(ps, "false");
    case 'n':
        v->type = GM_JV_NULL;
        return jv_literal(ps, "null");
    default: return jv_number(ps, v);
    }
}

static void jv_chunks_free(jv_chunk_t *c)
{
    while (c != NULL) {
        jv_chunk_t *next = c->next;
        free(c);
        c = next;
    }
}

int gm_json_parse(const char *text, size_t len, gm_jv_t **out, gm_error_t *err)
{
    if (err != NULL)
        err->code = 0;
    jv_parser_t ps = {.p = text, .start = text, .end = text + len, .err = err,
                      .max_depth = GM_JSON_MAX_DEPTH};
    jv_root_t *root = jv_alloc(&ps, sizeof *root);
    if (root == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory reading JSON");
    int rc = jv_value(&ps, &root->node);
    if (rc == 0) {
        jv_ws(&ps);
        if (ps.p != ps.end)
            rc = jv_fail(&ps, "text after the value");
    }
    if (rc != 0) {
        jv_chunks_free(ps.chunks);
        return err != NULL && err->code ? err->code : GM_EFORMAT;
    }
    root->chunks = ps.chunks;
    *out = &root->node;
    return 0;
}

int gm__json_check(const char *text, size_t len, int max_depth)
{
    jv_parser_t ps = {.p = text, .start = text, .end = text + len, .check = 1,
                      .max_depth = max_depth < GM_JSON_MAX_DEPTH ? max_depth : GM_JSON_MAX_DEPTH};
    gm_jv_t v;
    if (jv_value(&ps, &v) != 0)
        return 0;
    jv_ws(&ps);
    return ps.p == ps.end;
}

void gm_jv_free(gm_jv_t *v)
{
    if (v == NULL)
        return;
    jv_root_t *root = (jv_root_t *)(void *)((char *)v - offsetof(jv_root_t, node));
    jv_chunks_free(root->chunks);
}

gm_jv_type_t gm_jv_type(const gm_jv_t *v) { return v ? v->type : GM_JV_NULL; }

const gm_jv_t *gm_jv_get(const gm_jv_t *obj, const char *key)
{
    if (obj == NULL || obj->type != GM_JV_OBJECT)
        return NULL;
    for (size_t i = obj->u.list.n; i-- > 0;)
        if (strcmp(obj->u.list.keys[i], key) == 0)
            return obj->u.list.items[i];
    return NULL;
}

size_t gm_jv_len(const gm_jv_t *v)
{
    return v && (v->type == GM_JV_ARRAY || v->type == GM_JV_OBJECT) ? v->u.list.n : 0;
}

const gm_jv_t *gm_jv_at(const gm_jv_t *v, size_t i)
{
    return i < gm_jv_len(v) ? v->u.list.items[i] : NULL;
}

const char *gm_jv_key_at(const gm_jv_t *obj, size_t i)
{
    return obj && obj->type == GM_JV_OBJECT && i < obj->u.list.n ? obj->u.list.keys[i] : NULL;
}

double gm_jv_num(const gm_jv_t *v) { return v && v->type == GM_JV_NUMBER ? v->u.num.d : 0; }

int gm_jv_u64(const gm_jv_t *v, uint64_t *out)
{
    if (v == NULL || v->type != GM_JV_NUMBER || v->int_kind != 1)
        return -1;
    *out = v->u.num.u;
    return 0;
}

int gm_jv_i64(const gm_jv_t *v, int64_t *out)
{
    if (v == NULL || v->type != GM_JV_NUMBER || v->int_kind == 0)
        return -1;
    uint64_t u = v->u.num.u;
    if (v->int_kind == 1) {
        if (u > (uint64_t)INT64_MAX)
            return -1;
        *out = (int64_t)u;
    } else {
        if (u > (uint64_t)INT64_MAX + 1)
            return -1;
        *out = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    }
    return 0;
}

const char *gm_jv_str(const gm_jv_t *v) { return v && v->type == GM_JV_STRING ? v->u.str.s : NULL; }

size_t gm_jv_strlen(const gm_jv_t *v) { return v && v->type == GM_JV_STRING ? v->u.str.len : 0; }

int gm_jv_bool(const gm_jv_t *v) { return v && v->type == GM_JV_BOOL && v->u.b; }
