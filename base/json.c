/*
 * base/json.c — the streaming JSON writer of gmsim/json.h.
 *
 * State: `depth` open containers; first[d] says whether container d has no
 * element yet (so the next one needs no comma); after_key says a key was
 * just written and its value comes next (no comma, no newline before it).
 * Level 0 is the top level: values there are written one after the other
 * (gm_json_finish ends each with a newline).
 *
 * Strings are escaped per RFC 8259: the quote, the backslash and the control
 * characters U+0000–U+001F (\b \f \n \r \t by name, the rest as \u00XX).
 * Other bytes pass through, except that bytes that are not well-formed UTF-8
 * become U+FFFD, so the output is always valid JSON text whatever the input
 * (tag names and file names come from outside).
 *
 * Doubles are printed in the shortest of %.15g, %.16g, %.17g that reads back
 * to the same value (so 0.1 prints as 0.1 and every value round-trips);
 * NaN and infinities, which JSON cannot express, print as null.
 *
 * The escaper and the double formatter are the library's only ones
 * (base/jsonfmt.h): the store's attrs and gm_param_json use them too.  One
 * escaper serves both a FILE and a caller's buffer; a buffer that is too
 * small gets a shorter literal cut between whole characters and escapes,
 * with its closing quote, so that it stays valid JSON.
 *
 * Nesting deeper than GM_JSON_MAX_DEPTH is a caller bug: the writer keeps
 * writing but shares the deepest level's comma state.  Output errors are left
 * sticky in ferror(f) for the caller to check once at the end.
 */
#include "gmsim/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfmt.h"

static int json_level(const gm_json_t *j)
{
    return j->depth < GM_JSON_MAX_DEPTH ? j->depth : GM_JSON_MAX_DEPTH;
}

static void json_indent(gm_json_t *j)
{
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Comma and indentation before an element (a value, or a key in an object). */
static void json_prefix(gm_json_t *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth == 0)
        return;
    int lv = json_level(j);
    if (!j->first[lv])
        fputc(',', j->f);
    j->first[lv] = 0;
    if (j->pretty)
        json_indent(j);
}

void gm_json_init(gm_json_t *j, FILE *f, int pretty)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->pretty = pretty;
    j->first[0] = 1;
}

char *gm__json_text(void (*fn)(gm_json_t *, const void *), const void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    gm_json_t j;
    gm_json_init(&j, f, 0);
    fn(&j, arg);
    if (ferror(f) | fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void json_open(gm_json_t *j, int c)
{
    json_prefix(j);
    fputc(c, j->f);
    j->depth++;
    j->first[json_level(j)] = 1;
}

static void json_close(gm_json_t *j, int c)
{
    if (j->depth == 0)
        return; /* unbalanced: a caller bug; write nothing rather than garbage */
    int empty = j->first[json_level(j)];
    j->depth--;
    if (j->pretty && !empty)
        json_indent(j);
    fputc(c, j->f);
    j->after_key = 0;
}

void gm_json_begin_object(gm_json_t *j) { json_open(j, '{'); }
void gm_json_end_object(gm_json_t *j) { json_close(j, '}'); }
void gm_json_begin_array(gm_json_t *j) { json_open(j, '['); }
void gm_json_end_array(gm_json_t *j) { json_close(j, ']'); }

void gm_json_key(gm_json_t *j, const char *key)
{
    json_prefix(j);
    gm_json_write_string(j->f, key ? key : "");
    fputs(j->pretty ? ": " : ":", j->f);
    j->after_key = 1;
}

void gm_json_str(gm_json_t *j, const char *s)
{
    json_prefix(j);
    if (s == NULL)
        fputs("null", j->f);
    else
        gm_json_write_string(j->f, s);
}

void gm_json_u64(gm_json_t *j, uint64_t v)
{
    json_prefix(j);
    fprintf(j->f, "%" PRIu64, v);
}

void gm_json_i64(gm_json_t *j, int64_t v)
{
    json_prefix(j);
    fprintf(j->f, "%" PRId64, v);
}

void gm_json_double(gm_json_t *j, double v)
{
    json_prefix(j);
    char buf[GM__JSON_DOUBLE_MAX];
    gm__json_format_double(buf, sizeof buf, v);
    fputs(buf, j->f);
}

void gm_json_bool(gm_json_t *j, int v)
{
    json_prefix(j);
    fputs(v ? "true" : "false", j->f);
}

void gm_json_null(gm_json_t *j)
{
    json_prefix(j);
    fputs("null", j->f);
}

void gm_json_raw(gm_json_t *j, const char *text)
{
    json_prefix(j);
    fputs(text && *text ? text : "null", j->f);
}

#define JSON_KV(suffix, type)                                         \
    void gm_json_kv_##suffix(gm_json_t *j, const char *key, type v)   \
    {                                                                 \
        gm_json_key(j, key);                                          \
        gm_json_##suffix(j, v);                                       \
    }
JSON_KV(str, const char *)
JSON_KV(u64, uint64_t)
JSON_KV(i64, int64_t)
JSON_KV(double, double)
JSON_KV(bool, int)
#undef JSON_KV

void gm_json_jv(gm_json_t *j, const gm_jv_t *v)
{
    uint64_t u;
    int64_t i;
    switch (gm_jv_type(v)) {
    case GM_JV_NULL: gm_json_null(j); break;
    case GM_JV_BOOL: gm_json_bool(j, gm_jv_bool(v)); break;
    case GM_JV_NUMBER:
        if (gm_jv_u64(v, &u) == 0)
            gm_json_u64(j, u);
        else if (gm_jv_i64(v, &i) == 0)
            gm_json_i64(j, i);
        else
            gm_json_double(j, gm_jv_num(v));
        break;
    case GM_JV_STRING: gm_json_str(j, gm_jv_str(v)); break;
    case GM_JV_ARRAY:
        gm_json_begin_array(j);
        for (size_t k = 0; k < gm_jv_len(v); k++)
            gm_json_jv(j, gm_jv_at(v, k));
        gm_json_end_array(j);
        break;
    case GM_JV_OBJECT:
        gm_json_begin_object(j);
        for (size_t k = 0; k < gm_jv_len(v); k++) {
            gm_json_key(j, gm_jv_key_at(v, k));
            gm_json_jv(j, gm_jv_at(v, k));
        }
        gm_json_end_object(j);
        break;
    }
}

void gm_json_finish(gm_json_t *j)
{
    fputc('\n', j->f);
    j->after_key = 0;
}

/* ---- the shared formatters (base/jsonfmt.h) ----------------------------- */

int gm__json_format_double(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        return snprintf(buf, len, "null");
    char tmp[GM__JSON_DOUBLE_MAX];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    return snprintf(buf, len, "%s", tmp);
}

size_t gm__utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4
                                                                                          : 0;
    }
    return 0;
}

/*
 * Where an escaped literal goes: a FILE, or a buffer that keeps the longest
 * prefix of whole pieces for which there is room, keeping back one byte for
 * the closing quote and one for the NUL.  `need` counts every byte of the
 * whole literal, kept or not.
 */
typedef struct json_out {
    FILE *f;     /* the file, or NULL for the buffer */
    char *buf;
    size_t cap;  /* bytes of buf pieces may fill: len − 2, 0 when len < 3 */
    size_t used; /* bytes of pieces in buf */
    size_t need;
    int full;    /* a piece did not fit: drop every later one */
} json_out_t;

/* n bytes of output.  Only a prefix of a `split` piece (a run of plain
 * ASCII) may be kept; any other piece (an escape, a UTF-8 sequence) is kept
 * whole or not at all. */
static void json_put(json_out_t *o, const void *p, size_t n, int split)
{
    o->need += n;
    if (o->f != NULL) {
        fwrite(p, 1, n, o->f);
        return;
    }
    if (o->full)
        return;
    size_t room = o->cap - o->used;
    if (n > room) {
        o->full = 1;
        if (!split || room == 0)
            return;
        n = room;
    }
    memcpy(o->buf + o->used, p, n);
    o->used += n;
}

/* The length of the well-formed UTF-8 sequence at p, whose buffer ends at
 * end (not NUL-terminated: a sequence cut by the end is not well-formed). */
static size_t json_utf8_len(const unsigned char *p, const unsigned char *end)
{
    if (end - p >= 4)
        return gm__utf8_len(p);
    unsigned char tail[4] = {0};
    memcpy(tail, p, (size_t)(end - p));
    return gm__utf8_len(tail);
}

/* The escaped text of s[0..n), without the quotes around it. */
static void json_escape(json_out_t *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        unsigned c = *p;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            /* The run of plain ASCII in one piece. */
            const unsigned char *q = p;
            while (q < end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
                q++;
            json_put(o, p, (size_t)(q - p), 1);
            p = q;
            continue;
        }
        if (c >= 0x80) {
            size_t k = json_utf8_len(p, end);
            if (k == 0) {
                json_put(o, "\\ufffd", 6, 0);
                p++;
            } else {
                json_put(o, p, k, 0);
                p += k;
            }
            continue;
        }
        const char *named = NULL;
        switch (c) {
        case '"': named = "\\\""; break;
        case '\\': named = "\\\\"; break;
        case '\b': named = "\\b"; break;
        case '\f': named = "\\f"; break;
        case '\n': named = "\\n"; break;
        case '\r': named = "\\r"; break;
        case '\t': named = "\\t"; break;
        }
        if (named != NULL) {
            json_put(o, named, 2, 0);
        } else {
            const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            json_put(o, esc, sizeof esc, 0);
        }
        p++;
    }
}

size_t gm__json_escape_buf(char *buf, size_t len, const char *s)
{
    return gm__json_escape_mem(buf, len, s, strlen(s));
}

size_t gm__json_escape_mem(char *buf, size_t len, const char *s, size_t n)
{
    json_out_t o = {.buf = buf, .cap = len >= 3 ? len - 2 : 0};
    json_put(&o, "\"", 1, 0);
    json_escape(&o, s, n);
    if (len > 0) {
        if (o.used > 0)
            buf[o.used++] = '"'; /* the byte kept back for it */
        buf[o.used] = '\0';
    }
    return o.need + 1;
}

void gm_json_write_string(FILE *f, const char *s)
{
    json_out_t o = {.f = f};
    json_put(&o, "\"", 1, 0);
    json_escape(&o, s, strlen(s));
    json_put(&o, "\"", 1, 0);
}
