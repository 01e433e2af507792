/*
 * formats/pickle.h — a decoder of Python pickle data (protocols 0–5) into a
 * small read-only value tree, for the PyTorch snapshot importer.
 *
 * Only data opcodes are understood; every opcode that names or runs code
 * (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT*,
 * PERSID, BINPERSID, out-of-band buffers) is refused with its name and byte
 * offset: nothing in the input is ever executed or looked up.
 *
 * Values live in one arena owned by the gm__pickle_t; memo gets share the
 * node (as Python shares the object), so a list may even contain itself:
 * consumers must bound any recursion (gm__pickle_to_json does).  Strings of
 * up to GM__PK_INTERN_MAX bytes are interned: equal strings are one node, so
 * a dict key can be compared by pointer (gm__pickle_find_str).
 */
#ifndef GM_FORMATS_PICKLE_H
#define GM_FORMATS_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"

#define GM__PK_INTERN_MAX 1024 /* longest string interned */
#define GM__PK_MAX_MARKS (1u << 20) /* open MARKs at once */
#define GM__PK_MAX_STACK (1u << 26) /* values on the stack at once */

typedef enum gm__pk_type {
    GM__PK_NONE,
    GM__PK_BOOL,   /* v.i: 0 or 1 */
    GM__PK_INT,    /* v.i, or v.u when flags & GM__PK_UNSIGNED (≥ 2^63) */
    GM__PK_BIGINT, /* beyond 64 bits: v.s, n bytes little-endian two's complement */
    GM__PK_FLOAT,  /* v.f */
    GM__PK_STR,    /* v.s: n bytes, NUL-terminated */
    GM__PK_BYTES,  /* v.s: n bytes, NUL-terminated */
    GM__PK_LIST,   /* v.items: n values */
    GM__PK_TUPLE,
    GM__PK_SET,    /* set or frozenset */
    GM__PK_DICT,   /* v.items: n pairs, key then value */
} gm__pk_type_t;

#define GM__PK_UNSIGNED 0x1u

typedef struct gm__pk gm__pk_t;
struct gm__pk {
    uint8_t type;
    uint8_t flags;
    uint32_t n;   /* bytes (STR, BYTES, BIGINT), items (LIST, TUPLE, SET), pairs (DICT) */
    uint32_t cap; /* capacity of v.items (in pointers) */
    uint32_t aux; /* free for the consumer (0 after decoding) */
    union {
        int64_t i;
        uint64_t u;
        double f;
        const char *s;
        gm__pk_t **items;
    } v;
};

typedef struct gm__pickle gm__pickle_t;

/*
 * Decode data[0, len) up to its STOP.  On success *out owns the tree (free
 * with gm__pickle_free).  GM_EFORMAT with "byte N: ..." in the message for
 * a refused or unknown opcode, truncation, a bad memo reference, a stack
 * underflow or a limit passed; GM_ENOMEM.
 */
int gm__pickle_decode(const void *data, size_t len, gm__pickle_t **out, gm_error_t *err);

const gm__pk_t *gm__pickle_root(const gm__pickle_t *p);
void gm__pickle_free(gm__pickle_t *p);

/* The interned node of string s, or NULL when no such string was decoded. */
const gm__pk_t *gm__pickle_find_str(const gm__pickle_t *p, const char *s);

/* The value of key `key` (an interned string node, compared by pointer; NULL
 * gives NULL) in dict d, or NULL (also when d is not a dict). */
const gm__pk_t *gm__pk_get(const gm__pk_t *d, const gm__pk_t *key);

/* The same, trying first the pair at *hint, which is updated to where the
 * key was found: dicts written by one pickler share their key order, so a
 * loop over them finds each key at the first try. */
const gm__pk_t *gm__pk_geth(const gm__pk_t *d, const gm__pk_t *key, uint32_t *hint);

/* Integer value of v into *out: 1 for an INT or BOOL that fits, else 0. */
int gm__pk_i64(const gm__pk_t *v, int64_t *out);
int gm__pk_u64(const gm__pk_t *v, uint64_t *out);

/* 1 if v is the string s. */
int gm__pk_is_str(const gm__pk_t *v, const char *s);

/* Name of an opcode ("GLOBAL"), or NULL for a byte that is none. */
const char *gm__pickle_opname(unsigned op);

/*
 * Write v as JSON text into a malloc'd string (*out; the caller frees):
 * dict keys that are not strings are written as strings, tuples and sets as
 * arrays, bytes as strings; strings escaped and floats printed as the
 * streaming writer does (base/jsonfmt.h: invalid UTF-8 as U+FFFD, the
 * shortest round-trip double, non-finite floats as null).  GM_EFORMAT when
 * more than `depth` arrays and objects would be open at once (a cycle
 * does), `depth` being at most GM_JSON_MAX_DEPTH; GM_ENOMEM.
 */
int gm__pickle_to_json(const gm__pk_t *v, int depth, char **out, gm_error_t *err);

#endif
