/*
 * base/jsonfmt.h — the library's one JSON string escaper and one double
 * formatter (internal; implemented in base/json.c).  The streaming writer
 * of gmsim/json.h, the store's attrs (store/write.c) and gm_param_json
 * (sim/params.c) all print through these, so that every JSON text gmsim
 * writes escapes and rounds the same way.
 *
 * To write a string literal to a FILE, use gm_json_write_string
 * (gmsim/json.h): it is the FILE form of gm__json_escape_buf.
 */
#ifndef GM_BASE_JSONFMT_H
#define GM_BASE_JSONFMT_H

#include <stddef.h>

/* A buffer this long holds any double gm__json_format_double prints. */
#define GM__JSON_DOUBLE_MAX 32

/*
 * Length (1–4) of the well-formed UTF-8 sequence at s, 1 for any ASCII byte
 * (NUL included), or 0 if the bytes there are not well-formed UTF-8: a
 * stray continuation byte, an overlong form, a surrogate, a code point above
 * U+10FFFF, or a sequence cut short.  Reads no byte past the first one that
 * breaks the sequence, so never past a NUL terminator.
 */
size_t gm__utf8_len(const unsigned char *s);

/*
 * s (NUL-terminated) as a JSON string literal, quotes included, into buf:
 * the quote, the backslash and U+0000–U+001F escaped (\b \f \n \r \t by
 * name, the others as \u00xx), bytes that are not well-formed UTF-8 written
 * as \ufffd, so the literal is valid JSON whatever s holds.
 *
 * Returns the length of the whole literal (without the NUL), as snprintf
 * does: a result >= len means it did not fit.  Then buf holds a shorter
 * literal that is still valid JSON: the longest run of whole characters and
 * escapes that fits, then the closing quote and the NUL.  That needs
 * len >= 3 (room for ""); with len 1 or 2, buf is the empty C string; with
 * len 0, buf (which may then be NULL) is not touched.
 */
size_t gm__json_escape_buf(char *buf, size_t len, const char *s);

/*
 * The same for the n bytes at s, which may hold NULs (each written as
 * \u0000) and need not be NUL-terminated: a UTF-8 sequence cut by the end
 * is not well-formed.  For text that carries its length (pickle strings).
 */
size_t gm__json_escape_mem(char *buf, size_t len, const char *s, size_t n);

/*
 * v as a JSON number into buf: the shortest of %.15g, %.16g and %.17g that
 * reads back as exactly v (so 0.1 prints as 0.1 and every value round-trips),
 * or null when v is NaN or infinite (JSON has no such numbers).  Returns the
 * length of that text, as snprintf does; with len >= GM__JSON_DOUBLE_MAX it
 * always fits.  A text that does not fit is cut short (not valid JSON).
 */
int gm__json_format_double(char *buf, size_t len, double v);

/*
 * 1 if text[0..len) is one JSON value as gm_json_parse reads it (white
 * space around it allowed), nested at most max_depth deep (at most
 * GM_JSON_MAX_DEPTH), with every string well-formed UTF-8; 0 otherwise.
 * The tree reader's own grammar (base/jsonread.c), building no tree.
 */
int gm__json_check(const char *text, size_t len, int max_depth);

/*
 * The raw text [*vout, *eout) of top-level member `key` of the JSON object
 * text `json` (base/jsonscan.c): 1 when found, 0 when absent or when json
 * is not an object (any text is scanned without crash).
 */
int gm__json_member(const char *json, const char *key, const char **vout, const char **eout);

/*
 * The compact JSON text fn writes for arg, in a malloc'd string (the
 * caller frees it); NULL when out of memory.
 */
struct gm_json;
char *gm__json_text(void (*fn)(struct gm_json *, const void *), const void *arg);

#endif
