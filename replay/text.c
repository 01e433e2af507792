/*
 * replay/text.c — text helpers shared by the library and the command line
 * (see replay/text.h).
 */
#include "replay/text.h"

#include <stdio.h>
#include <string.h>

const char *gm__strerror(int e, char *buf, size_t len)
{
    snprintf(buf, len, "%s", strerror(e));
    if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
        buf[0] = (char)(buf[0] - 'A' + 'a');
    return buf;
}

/* Overflow is caught before each step: v > (UINT64_MAX − d) / 10 for
 * decimal, a nonzero top nibble for hex. */
int gm__parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        if (*s == '\0')
            return GM__U64_INVALID;
        for (; *s; s++) {
            unsigned d;
            if (*s >= '0' && *s <= '9')
                d = (unsigned)(*s - '0');
            else if (*s >= 'a' && *s <= 'f')
                d = (unsigned)(*s - 'a' + 10);
            else if (*s >= 'A' && *s <= 'F')
                d = (unsigned)(*s - 'A' + 10);
            else
                return GM__U64_INVALID;
            if (v >> 60)
                return GM__U64_RANGE;
            v = v << 4 | d;
        }
    } else {
        if (*s == '\0')
            return GM__U64_INVALID;
        for (; *s; s++) {
            if (*s < '0' || *s > '9')
                return GM__U64_INVALID;
            unsigned d = (unsigned)(*s - '0');
            if (v > (UINT64_MAX - d) / 10)
                return GM__U64_RANGE;
            v = v * 10 + d;
        }
    }
    *out = v;
    return 0;
}
