/*
 * gmsim/json.h — a small streaming JSON writer to a FILE.
 *
 * It tracks nesting to place commas, escapes strings per RFC 8259, and prints
 * non-finite doubles as null.  Output errors are sticky in ferror(f).
 */
#ifndef GMSIM_JSON_H
#define GMSIM_JSON_H

#include <stdint.h>
#include <stdio.h>

#define GM_JSON_DEPTH 32

typedef struct gm_json {
    FILE *f;
    int depth;
    int pretty;                     /* indent two spaces per level */
    unsigned char first[GM_JSON_DEPTH]; /* no element yet at this level */
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
/* Newline after the top-level value. */
void gm_json_finish(gm_json_t *j);

/* Write s as a JSON string literal (with quotes) to f. */
void gm_json_write_string(FILE *f, const char *s);

#endif
