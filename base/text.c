/*
 * base/text.c — text helpers shared by the library and the command line
 * (see gmsim/text.h).
 */
#include "gmsim/text.h"

#include <stdio.h>
#include <string.h>

#include "gmsim/error.h"
#include "base/jsonfmt.h"

const char *gm_errno_text(int e, char *buf, size_t len)
{
    /* A negative value is a GM_E* code, not an errno: its own text. */
    if (e < 0)
        snprintf(buf, len, "%s", gm_strerror(e));
    else
        snprintf(buf, len, "%s", strerror(e));
    if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
        buf[0] = (char)(buf[0] - 'A' + 'a');
    return buf;
}

/* Overflow is caught before each step: v > (UINT64_MAX − d) / 10 for
 * decimal, a nonzero top nibble for hex. */
int gm_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        if (*s == '\0')
            return GM_U64_INVALID;
        for (; *s; s++) {
            unsigned d;
            if (*s >= '0' && *s <= '9')
                d = (unsigned)(*s - '0');
            else if (*s >= 'a' && *s <= 'f')
                d = (unsigned)(*s - 'a' + 10);
            else if (*s >= 'A' && *s <= 'F')
                d = (unsigned)(*s - 'A' + 10);
            else
                return GM_U64_INVALID;
            if (v >> 60)
                return GM_U64_RANGE;
            v = v << 4 | d;
        }
    } else {
        if (*s == '\0')
            return GM_U64_INVALID;
        for (; *s; s++) {
            if (*s < '0' || *s > '9')
                return GM_U64_INVALID;
            unsigned d = (unsigned)(*s - '0');
            if (v > (UINT64_MAX - d) / 10)
                return GM_U64_RANGE;
            v = v * 10 + d;
        }
    }
    *out = v;
    return 0;
}

/* Bytes of s's next unit at p: *n bytes of input, escaped or not. */
static int text_esc_unit(const unsigned char *p, size_t *n)
{
    *n = 1;
    if (*p < 0x20 || *p == 0x7f)
        return 1;
    if (*p < 0x80)
        return 0;
    size_t k = gm__utf8_len(p);
    /* Invalid UTF-8, or a C1 control (U+0080..U+009F): byte by byte. */
    if (k == 0 || (p[0] == 0xc2 && p[1] < 0xa0))
        return 1;
    *n = k;
    return 0;
}

const char *gm_text_escape(const char *s, char *buf, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t o = 0, cap = len - 1, total = 0, n;
    for (const unsigned char *q = p; *q; q += n)
        total += text_esc_unit(q, &n) ? 4 : n;
    /* Room for "..." is kept only when the whole will not fit. */
    size_t room = total > cap ? (cap >= 3 ? cap - 3 : 0) : cap;
    for (; *p; p += n) {
        int esc = text_esc_unit(p, &n);
        if (o + (esc ? 4 : n) > room) {
            if (o + 3 <= cap) {
                memcpy(buf + o, "...", 3);
                o += 3;
            }
            break;
        }
        if (esc) {
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[*p >> 4];
            buf[o++] = hex[*p & 15];
        } else {
            memcpy(buf + o, p, n);
            o += n;
        }
    }
    buf[o] = '\0';
    return buf;
}
