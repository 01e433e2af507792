/*
 * base/vec.c — the growable array's slow path and the byte buffer
 * (base/vec.h).
 */
#include "base/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/error.h"

int gm__vec_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : (first ? first : 1);
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return GM_ENOMEM;
        c *= 2;
    }
    if (elem != 0 && c > SIZE_MAX / elem)
        return GM_ENOMEM;
    void *p;
    memcpy(&p, pp, sizeof p); /* pp is the address of the caller's T * */
    size_t bytes = c * elem;
    void *q = realloc(p, bytes ? bytes : 1);
    if (q == NULL)
        return GM_ENOMEM;
    memcpy(pp, &q, sizeof q);
    *cap = c;
    return 0;
}

int gm__buf_room(gm__buf_t *b, size_t len)
{
    if (b->oom)
        return -1;
    if (len > SIZE_MAX - 1 - b->n) {
        b->oom = 1;
        return -1;
    }
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap, n = b->n;
        char *p = b->p;
        if (gm__vec_grow(&p, &cap, n + len + 1, 1, 64)) {
            b->oom = 1;
            return -1;
        }
        b->p = p;
        b->cap = cap;
    }
    return 0;
}

void gm__buf_add(gm__buf_t *b, const void *s, size_t len)
{
    if (gm__buf_room(b, len))
        return;
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

void gm__buf_str(gm__buf_t *b, const char *s) { gm__buf_add(b, s, strlen(s)); }

void gm__buf_release(gm__buf_t *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}
