/*
 * gmsim/json.h — a small streaming JSON writer to a FILE, and a small
 * reader of JSON text into a tree (trace attributes, stored run results).
 *
 * The writer tracks nesting to place commas, escapes strings per RFC 8259,
 * and prints non-finite doubles as null.  Output errors are sticky in
 * ferror(f).
 */
#ifndef GMSIM_JSON_H
#define GMSIM_JSON_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gmsim/error.h"

GM_API_BEGIN

/*
 * The one nesting limit of every JSON text gmsim reads or writes: at most
 * this many arrays and objects open at once.  The tree reader
 * (gm_json_parse), the member scanner (gm_json_member, gm_attr_int), the
 * store's check of attribute JSON and the pickle-to-JSON writer refuse a
 * deeper text; the streaming writer tracks commas this deep.
 */
#define GM_JSON_MAX_DEPTH 512

typedef struct gm_json {
    FILE *f;
    int depth;
    int pretty;                     /* indent two spaces per level */
    unsigned char first[GM_JSON_MAX_DEPTH + 1]; /* no element yet at this level */
    int after_key;                  /* a key was written; value comes next */
} gm_json_t;

void gm_json_init(gm_json_t *j, FILE *f, int pretty);
void gm_json_begin_object(gm_json_t *j);
void gm_json_end_object(gm_json_t *j);
void gm_json_begin_array(gm_json_t *j);
void gm_json_end_array(gm_json_t *j);
void gm_json_key(gm_json_t *j, const char *key);
void gm_json_str(gm_json_t *j, const char *s); /* NULL prints null */
void gm_json_u64(gm_json_t *j, uint64_t v);
void gm_json_i64(gm_json_t *j, int64_t v);
void gm_json_double(gm_json_t *j, double v);
void gm_json_bool(gm_json_t *j, int v);
void gm_json_null(gm_json_t *j);
void gm_json_raw(gm_json_t *j, const char *text); /* an already valid JSON value */
/* A member of the open object in one call: gm_json_key(j, key) and then
 * the value, as the calls above write them (jemalloc's emitter_json_kv). */
void gm_json_kv_str(gm_json_t *j, const char *key, const char *s);
void gm_json_kv_u64(gm_json_t *j, const char *key, uint64_t v);
void gm_json_kv_i64(gm_json_t *j, const char *key, int64_t v);
void gm_json_kv_double(gm_json_t *j, const char *key, double v);
void gm_json_kv_bool(gm_json_t *j, const char *key, int v);
/* Newline after the top-level value. */
void gm_json_finish(gm_json_t *j);

/* Write s as a JSON string literal (with quotes) to f. */
void gm_json_write_string(FILE *f, const char *s);

/* ---- reader -------------------------------------------------------------- */

typedef enum gm_jv_type {
    GM_JV_NULL,
    GM_JV_BOOL,
    GM_JV_NUMBER,
    GM_JV_STRING,
    GM_JV_ARRAY,
    GM_JV_OBJECT,
} gm_jv_type_t;

typedef struct gm_jv gm_jv_t;

/* Parse one JSON value (RFC 8259; surrounding white space allowed) from
 * text[0..len).  GM_EFORMAT with the byte offset and what was expected;
 * GM_ENOMEM.  Nesting deeper than GM_JSON_MAX_DEPTH is refused.  The caller frees *out
 * with gm_jv_free. */
int gm_json_parse(const char *text, size_t len, gm_jv_t **out, gm_error_t *err);
void gm_jv_free(gm_jv_t *root);

/* Accessors take NULL (an absent value) and answer as for a mismatch. */
gm_jv_type_t gm_jv_type(const gm_jv_t *v);            /* NULL → GM_JV_NULL */
const gm_jv_t *gm_jv_get(const gm_jv_t *obj, const char *key); /* last of duplicate keys; NULL if absent */
size_t gm_jv_len(const gm_jv_t *v);                   /* members/elements; 0 otherwise */
const gm_jv_t *gm_jv_at(const gm_jv_t *v, size_t i);  /* i-th element or member value */
const char *gm_jv_key_at(const gm_jv_t *obj, size_t i); /* i-th member's key */
double gm_jv_num(const gm_jv_t *v);                   /* 0 unless a number */
/* Exact integers: 0 when v is a number written as an integer that fits
 * (no fraction, no exponent), else -1 and *out untouched. */
int gm_jv_u64(const gm_jv_t *v, uint64_t *out);
int gm_jv_i64(const gm_jv_t *v, int64_t *out);
const char *gm_jv_str(const gm_jv_t *v);              /* decoded UTF-8; NULL unless a string */
size_t gm_jv_strlen(const gm_jv_t *v);                /* its length in bytes (may hold NULs) */
int gm_jv_bool(const gm_jv_t *v);                     /* 1 for true, else 0 */

/* Write the value v (a whole tree) through the writer j: a number as an
 * integer when it is one (unsigned, else signed), else as a double; a
 * string up to its first NUL. */
void gm_json_jv(gm_json_t *j, const gm_jv_t *v);

/* Value text of top-level member `key` of JSON object `json`, copied into
 * buf (strings without their quotes, escapes kept as written; numbers,
 * true/false/null and nested values as they appear).  Returns 1 when found
 * and it fits, 0 otherwise (also for text that is not a JSON object, or
 * that nests deeper than GM_JSON_MAX_DEPTH before the member is found). */
int gm_json_member(const char *json, const char *key, char *buf, size_t len);

GM_API_END

#endif
