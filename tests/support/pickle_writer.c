/*
 * tests/support/pickle_writer.c — a small pickle writer for the snapshot
 * tests (pickle_writer.h).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "support/pickle_writer.h"

void pw_raw(pw_t *w, const void *s, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->p = realloc(w->p, w->cap);
        cr_assert(w->p != NULL);
    }
    memcpy(w->p + w->n, s, n);
    w->n += n;
}

void pw_op(pw_t *w, unsigned char op) { pw_raw(w, &op, 1); }

void pw_bytes(pw_t *w, unsigned char op, const char *s, uint32_t n)
{
    unsigned char h[5] = {op, (unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
                          (unsigned char)(n >> 24)};
    pw_raw(w, h, 5);
    pw_raw(w, s, n);
}

void pw_str(pw_t *w, const char *s) { pw_bytes(w, 'X', s, (uint32_t)strlen(s)); }

void pw_int(pw_t *w, int64_t v)
{
    unsigned char b[10] = {0x8a, 8};
    for (int i = 0; i < 8; i++)
        b[2 + i] = (unsigned char)((uint64_t)v >> (8 * i));
    pw_raw(w, b, 10);
}

void pw_uint(pw_t *w, uint64_t v)
{
    unsigned char b[11] = {0x8a, 9};
    for (int i = 0; i < 8; i++)
        b[2 + i] = (unsigned char)(v >> (8 * i));
    b[10] = 0;
    pw_raw(w, b, 11);
}

void pw_kv_int(pw_t *w, const char *k, uint64_t v)
{
    pw_str(w, k);
    pw_uint(w, v);
}

void pw_kv_str(pw_t *w, const char *k, const char *v)
{
    pw_str(w, k);
    pw_str(w, v);
}

void pw_node(pw_t *w, const gm__pk_t *v, int depth)
{
    cr_assert(depth < 64, "the fixture's tree is too deep");
    switch (v->type) {
    case GM__PK_NONE: pw_op(w, 'N'); break;
    case GM__PK_BOOL: pw_op(w, v->v.i ? 0x88 : 0x89); break;
    case GM__PK_INT:
        if (v->flags & GM__PK_UNSIGNED)
            pw_uint(w, v->v.u);
        else
            pw_int(w, v->v.i);
        break;
    case GM__PK_FLOAT: {
        unsigned char b[9] = {'G'};
        uint64_t u;
        memcpy(&u, &v->v.f, 8);
        for (int i = 0; i < 8; i++)
            b[1 + i] = (unsigned char)(u >> (56 - 8 * i));
        pw_raw(w, b, 9);
        break;
    }
    case GM__PK_STR: pw_bytes(w, 'X', v->v.s, v->n); break;
    case GM__PK_BYTES: pw_bytes(w, 'B', v->v.s, v->n); break;
    case GM__PK_LIST:
    case GM__PK_TUPLE:
    case GM__PK_SET:
        PW_BEGIN_LIST(w);
        for (uint32_t i = 0; i < v->n; i++)
            pw_node(w, v->v.items[i], depth + 1);
        PW_END_LIST(w);
        break;
    case GM__PK_DICT:
        PW_BEGIN_DICT(w);
        for (uint32_t i = 0; i < 2 * v->n; i++)
            pw_node(w, v->v.items[i], depth + 1);
        PW_END_DICT(w);
        break;
    default: pw_op(w, 'N'); break; /* big integers: none in snapshots */
    }
}
