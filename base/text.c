/*
 * base/text.c — text helpers shared by the library and the command line
 * (see gmsim/text.h), and "did you mean" for names a user types (see
 * base/text.h).
 */
#include "gmsim/text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gmsim/error.h"
#include "base/jsonfmt.h"
#include "base/text.h"

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

/* ---- did you mean (base/text.h) ------------------------------------------- */

static int text_lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* Three rows of the optimal-string-alignment table (Wagner–Fischer with
 * the transposition step): row i holds the distances of a's first i
 * characters to each prefix of b.  A row whose smallest value is above the
 * cap ends the search: later rows only grow. */
size_t gm__text_distance(const char *a, const char *b, size_t cap)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na == nb && strncasecmp(a, b, na) == 0)
        return 0;
    if (na > GM__SUGGEST_MAX_LEN || nb > GM__SUGGEST_MAX_LEN || (na > nb ? na - nb : nb - na) > cap)
        return cap + 1;
    size_t rows[3][GM__SUGGEST_MAX_LEN + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= nb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = i;
        size_t low = cur[0];
        for (size_t j = 1; j <= nb; j++) {
            int ca = text_lower((unsigned char)a[i - 1]), cb = text_lower((unsigned char)b[j - 1]);
            size_t cost = ca != cb;
            size_t d = prev[j] + 1;                 /* delete a[i-1] */
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;                 /* insert b[j-1] */
            if (prev[j - 1] + cost < d)
                d = prev[j - 1] + cost;             /* substitute */
            if (i > 1 && j > 1 && ca == text_lower((unsigned char)b[j - 2]) &&
                text_lower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;               /* swap two neighbours */
            cur[j] = d;
            if (d < low)
                low = d;
        }
        if (low > cap)
            return cap + 1;
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[nb] > cap ? cap + 1 : prev[nb];
}

void gm__suggest_init(gm__suggest_t *s, const char *word)
{
    memset(s, 0, sizeof *s);
    s->word = word ? word : "";
    size_t n = strlen(s->word);
    s->limit = n <= 3 ? 1 : GM__SUGGEST_MAX_EDITS;
    s->best = s->limit + 1;
}

void gm__suggest_add(gm__suggest_t *s, const char *candidate)
{
    if (candidate == NULL || candidate[0] == '\0')
        return;
    size_t n = strlen(s->word);
    if (n >= 3 && strlen(candidate) > n && strncasecmp(candidate, s->word, n) == 0 &&
        (s->prefix == NULL || strcasecmp(s->prefix, candidate) != 0)) {
        if (s->nprefix++ == 0)
            s->prefix = candidate;
    }
    size_t d = gm__text_distance(s->word, candidate, s->limit);
    if (d > s->limit || d > s->best)
        return;
    if (d < s->best) {
        s->best = d;
        s->nbest = 0;
    }
    for (size_t i = 0; i < s->nbest && i < GM__SUGGEST_KEEP; i++)
        if (strcasecmp(s->near[i], candidate) == 0)
            return;
    if (s->nbest < GM__SUGGEST_KEEP)
        s->near[s->nbest] = candidate;
    s->nbest++;
}

const char *gm__suggest_text(const gm__suggest_t *s, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *const *names;
    size_t n;
    if (s->best == 0)
        return NULL; /* the word itself is known */
    if (s->nbest > 0) {
        names = s->near;
        n = s->nbest < GM__SUGGEST_KEEP ? s->nbest : GM__SUGGEST_KEEP;
    } else if (s->nprefix == 1) {
        names = &s->prefix;
        n = 1;
    } else {
        return NULL;
    }
    size_t used = 0;
    for (size_t i = 0; i < n && used < len; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        int w = snprintf(buf + used, len - used, "%s'%s'", sep, names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

char *gm__suggest_append(const gm__suggest_t *s, char *msg, size_t len)
{
    char names[4 * (GM__SUGGEST_MAX_LEN + 8)];
    if (gm__suggest_text(s, names, sizeof names) != NULL) {
        size_t used = strlen(msg);
        if (used < len)
            snprintf(msg + used, len - used, "; did you mean %s?", names);
    }
    return msg;
}

void gm__text_field(const char *list, char sep, size_t idx, char *buf, size_t len)
{
    const char *p = list;
    for (size_t i = 0; p != NULL && i < idx; i++) {
        p = strchr(p, sep);
        if (p != NULL)
            p++;
    }
    if (p == NULL) {
        buf[0] = '\0';
        return;
    }
    const char *end = strchr(p, sep);
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n >= len)
        n = len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

int gm__text_flushed(FILE *out, const char *what, gm_error_t *err)
{
    if (fflush(out) == 0 && !ferror(out))
        return 0;
    char why[128];
    return gm_error_set(err, GM_EIO, "cannot write %s: %s", what,
                        errno ? gm_errno_text(errno, why, sizeof why) : "output error");
}
