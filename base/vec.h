/*
 * base/vec.h — the growable array and the byte buffer every floor shares,
 * in place of the doubling written out by hand at each array.
 *
 * An array is fields of the caller's own struct: a pointer, a count and a
 * size_t capacity.  GM_VEC_RESERVE(p, cap, need, first) makes room for
 * `need` elements: nothing when cap >= need; else the capacity doubles
 * from `first` (cap when not 0) until it holds need, and the array is
 * reallocated.  It is 0, or GM_ENOMEM with the array and cap untouched:
 * out of memory, or a byte size that would pass SIZE_MAX (checked, never
 * wrapped).  The count is the caller's: GM_VEC_RESERVE(a, cap, n + 1, 16)
 * then a[n++] = x.  cap and need are read more than once: no side effects
 * in them.  (The slow path reads and writes the caller's pointer through
 * memcpy as a void *: every object pointer has one representation on the
 * systems gmsim builds for.)
 *
 * The byte buffer (gm__buf_t) is text or bytes appended at its end, always
 * NUL-terminated after its n bytes; a failed growth sets oom, and every
 * later append does nothing, so a writer of many pieces checks oom once at
 * the end.
 */
#ifndef GM_BASE_VEC_H
#define GM_BASE_VEC_H

#include <stddef.h>

/* GM_VEC_RESERVE's slow path: *(T **)pp grown to at least need elements of
 * elem bytes.  0 or GM_ENOMEM. */
int gm__vec_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t first);

#define GM_VEC_RESERVE(p, cap, need, first)                                          \
    (__builtin_expect((size_t)(need) <= (cap), 1)                                    \
         ? 0                                                                         \
         : gm__vec_grow(&(p), &(cap), (size_t)(need), sizeof *(p), (size_t)(first)))

typedef struct gm__buf {
    char *p;  /* n bytes and a NUL; NULL while nothing was added */
    size_t n, cap;
    int oom;  /* a growth failed: p holds what came before it */
} gm__buf_t;

/* Room for len more bytes and the NUL (capacity doubling from 64).  0, or
 * -1 with b->oom set (and when b->oom was set already). */
int gm__buf_room(gm__buf_t *b, size_t len);

/* Append s[0 .. len) / the string s (nothing once b->oom is set). */
void gm__buf_add(gm__buf_t *b, const void *s, size_t len);
void gm__buf_str(gm__buf_t *b, const char *s);

/* Free b's bytes and leave it empty. */
void gm__buf_release(gm__buf_t *b);

#endif
