/*
 * base/jsonscan.c — reading single members of a JSON object text without
 * building a tree (gm_json_member, gm_attr_int, and gm__json_member for
 * the library): the runs table's canonical texts and trace attributes are
 * read this way wherever one value is wanted.
 *
 * A small scanner over one object's top-level members: values are skipped
 * by their syntax (strings with escapes, nesting to GM_JSON_MAX_DEPTH), so any
 * text, however hostile, is read without crash; a text that is not an
 * object reads as having no members.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "base/jsonfmt.h"

static const char *scan_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* Past one JSON value starting at p (no validation beyond what is needed to
 * find its end), or NULL when the text ends first or nests too deep: depth
 * is the number of containers open around p, and a container there may open
 * only while depth < GM_JSON_MAX_DEPTH. */
static const char *scan_skip(const char *p, int depth)
{
    p = scan_ws(p);
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && *++p == '\0')
                return NULL;
        return *p == '"' ? p + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        if (depth >= GM_JSON_MAX_DEPTH)
            return NULL;
        p = scan_ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (close == '}') {
                if ((p = scan_skip(p, depth + 1)) == NULL) /* key */
                    return NULL;
                p = scan_ws(p);
                if (*p++ != ':')
                    return NULL;
            }
            if ((p = scan_skip(p, depth + 1)) == NULL)
                return NULL;
            p = scan_ws(p);
            if (*p == close)
                return p + 1;
            if (*p++ != ',')
                return NULL;
        }
    }
    const char *start = p;
    while (*p && strchr(",}]: \t\r\n", *p) == NULL)
        p++;
    return p == start ? NULL : p;
}

/* The raw text [*v, *end) of top-level member `key`; 1 when found. */
int gm__json_member(const char *json, const char *key, const char **vout,
                          const char **eout)
{
    if (json == NULL || key == NULL)
        return 0;
    size_t klen = strlen(key);
    const char *p = scan_ws(json);
    if (*p++ != '{')
        return 0;
    p = scan_ws(p);
    while (*p == '"') {
        const char *k = p + 1;
        const char *end = scan_skip(p, 1);
        if (end == NULL)
            return 0;
        int match = (size_t)(end - 1 - k) == klen && strncmp(k, key, klen) == 0;
        p = scan_ws(end);
        if (*p++ != ':')
            return 0;
        p = scan_ws(p);
        const char *v = p;
        if ((end = scan_skip(p, 1)) == NULL)
            return 0;
        if (match) {
            *vout = v;
            *eout = end;
            return 1;
        }
        p = scan_ws(end);
        if (*p != ',')
            return 0;
        p = scan_ws(p + 1);
    }
    return 0;
}

int gm_json_member(const char *json, const char *key, char *buf, size_t len)
{
    const char *v, *end;
    if (len == 0 || !gm__json_member(json, key, &v, &end))
        return 0;
    if (*v == '"') {
        v++;
        end--;
    }
    size_t n = (size_t)(end - v);
    if (n >= len)
        return 0;
    memcpy(buf, v, n);
    buf[n] = '\0';
    return 1;
}

int64_t gm_attr_int(const char *attrs, const char *key)
{
    char buf[64];
    const char *v, *end;
    if (!gm__json_member(attrs, key, &v, &end) || *v < '0' || *v > '9' ||
        (size_t)(end - v) >= sizeof buf)
        return -1;
    memcpy(buf, v, (size_t)(end - v));
    buf[end - v] = '\0';
    char *stop;
    errno = 0;
    long long n = strtoll(buf, &stop, 10);
    /* past 2^63 - 1 is no value here (not 2^63 - 1) */
    return *stop == '\0' && n >= 0 && errno != ERANGE ? (int64_t)n : -1;
}

