/*
 * gmsim/text.h — small text helpers that the library and the command line
 * share (implemented in base/text.c): errno text in the style of gmsim
 * messages, the one rule for an unsigned 64-bit number, and the one
 * escaping of user-controlled text for a terminal.
 */
#ifndef GMSIM_TEXT_H
#define GMSIM_TEXT_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

GM_API_BEGIN

/* strerror(e) into buf (len > 0) with its first letter lowercased, as
 * messages are lowercase ("No such file" → "no such file"; an all-caps
 * word such as "EOF" stays); returns buf. */
const char *gm_errno_text(int e, char *buf, size_t len);

enum {
    GM_U64_INVALID = -1, /* not a number */
    GM_U64_RANGE = -2    /* a number, but above UINT64_MAX */
};

/*
 * Parse the whole of s as an unsigned integer: decimal digits, or "0x"/"0X"
 * and hex digits (either case).  Nothing else is allowed: no sign, no
 * spaces, no second "0x", no empty digits.  0 with *out set, or
 * GM_U64_INVALID / GM_U64_RANGE (*out untouched).
 */
int gm_parse_u64(const char *s, uint64_t *out);

/*
 * The one escaping of user-controlled text (trace names, attribute values,
 * tags, file names) for text written to a terminal or standard output:
 * s copied into buf (len > 0) with every byte a terminal could act on made
 * visible as "\xHH": the C0 controls (newline and tab too), DEL, the C1
 * controls U+0080..U+009F in their UTF-8 form (0xc2 0x80..0x9f, escaped
 * byte by byte) and bytes that are not valid UTF-8.  Printable ASCII and
 * valid UTF-8 pass unchanged.  Output that does not fit ends in "..."
 * (always NUL-terminated, never a cut escape).  Returns buf.  JSON output
 * escapes by JSON's own rules instead (gm_json_write_string).
 */
const char *gm_text_escape(const char *s, char *buf, size_t len);

GM_API_END

#endif
