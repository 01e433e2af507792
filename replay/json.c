/*
 * replay/json.c — the streaming JSON writer of gmsim/json.h.
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
 * Nesting deeper than GM_JSON_DEPTH − 1 is a caller bug: the writer keeps
 * writing but shares the deepest level's comma state.  Output errors are left
 * sticky in ferror(f) for the caller to check once at the end.
 */
#include "gmsim/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int json_level(const gm_json_t *j)
{
    return j->depth < GM_JSON_DEPTH ? j->depth : GM_JSON_DEPTH - 1;
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
    if (!isfinite(v)) {
        fputs("null", j->f);
        return;
    }
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
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

void gm_json_finish(gm_json_t *j)
{
    fputc('\n', j->f);
    j->after_key = 0;
}

/* Length of the well-formed UTF-8 sequence at s (1–4), or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are not). */
static size_t json_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
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

void gm_json_write_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        unsigned c = *p;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            /* Copy the run of plain ASCII in one call. */
            const unsigned char *q = p;
            while (*q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
                q++;
            fwrite(p, 1, (size_t)(q - p), f);
            p = q;
            continue;
        }
        if (c >= 0x80) {
            /* The NUL terminator stops json_utf8_len reading past the end:
             * a continuation byte is never 0. */
            size_t n = json_utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", f);
                p++;
            } else {
                fwrite(p, 1, n, f);
                p += n;
            }
            continue;
        }
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default: fprintf(f, "\\u%04x", c); break;
        }
        p++;
    }
    fputc('"', f);
}
