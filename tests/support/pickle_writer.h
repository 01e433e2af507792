/*
 * tests/support/pickle_writer.h — a small pickle writer (protocol 2
 * opcodes) for the tests that make PyTorch snapshots: test_torch.c writes
 * synthetic snapshots with it, test_oom.c writes a decoded real snapshot
 * back with an `oom` entry added.  The bytes grow in a malloc'd buffer
 * (w->p, w->n bytes; the caller frees w->p); an allocation failure fails
 * the calling test.
 */
#ifndef GM_TESTS_SUPPORT_PICKLE_WRITER_H
#define GM_TESTS_SUPPORT_PICKLE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "formats/pickle.h"

typedef struct pw {
    char *p;
    size_t n, cap;
} pw_t;

/* n bytes as they are; one opcode. */
void pw_raw(pw_t *w, const void *s, size_t n);
void pw_op(pw_t *w, unsigned char op);

/* BINUNICODE ('X') or BINBYTES ('B') of n bytes; a NUL-terminated string. */
void pw_bytes(pw_t *w, unsigned char op, const char *s, uint32_t n);
void pw_str(pw_t *w, const char *s);

/* LONG1 of 8 bytes (signed) or of 9 (any uint64_t, as Python writes it). */
void pw_int(pw_t *w, int64_t v);
void pw_uint(pw_t *w, uint64_t v);

/* A dict entry: key k, then v (pw_uint) or the string v. */
void pw_kv_int(pw_t *w, const char *k, uint64_t v);
void pw_kv_str(pw_t *w, const char *k, const char *v);

#define PW_BEGIN_DICT(w) (pw_op(w, '}'), pw_op(w, '('))
#define PW_END_DICT(w) pw_op(w, 'u')
#define PW_BEGIN_LIST(w) (pw_op(w, ']'), pw_op(w, '('))
#define PW_END_LIST(w) pw_op(w, 'e')

/* A decoded value (formats/pickle.h) written out again: lists, tuples and
 * sets as lists, memoized values each time they are used, big integers
 * as None (snapshots have none).  depth: the caller's nesting (under 64). */
void pw_node(pw_t *w, const gm__pk_t *v, int depth);

#endif
