/*
 * formats/pickle.c — a pickle data decoder that never executes anything
 * (API and value model in formats/pickle.h).
 *
 * The decoder is the pickle virtual machine restricted to data: a value
 * stack, a stack of MARK positions, and the memo.  A pop may never cross
 * the innermost MARK (Python keeps the values above a MARK in a separate
 * list, so the same pickle fails there too).  Every opcode's operands are
 * checked against the bytes left before they are read, lengths and memo
 * indices against the input size, and the stack and MARK depth against
 * fixed limits, so any input ends in a value or a "byte N: ..." error, in
 * time and memory linear in its length.  Opcodes that name code (GLOBAL,
 * STACK_GLOBAL, INST) or call it (REDUCE, BUILD, OBJ, NEWOBJ, NEWOBJ_EX,
 * EXT1/2/4, PERSID, BINPERSID) and the out-of-band buffer opcodes are
 * refused by name.  Protocol 0's quoted string opcodes (STRING, UNICODE)
 * are refused as unsupported; its numeric and memo opcodes are read.
 *
 * Speed: nodes, string bytes and container item arrays come from a bump
 * arena freed at once (its blocks of 2 MiB and more in huge pages where
 * the system gives them, base/bulk.h: the arena of a 3.9 MB snapshot is
 * 10.7 MB, 2,600 page faults in small pages); None, True, False and the ints 0..255 are shared
 * nodes; strings up to GM__PK_INTERN_MAX bytes are interned in an
 * open-addressing table, so the thousands of repeated keys and frame
 * strings of a PyTorch snapshot cost one node each.  A container's item
 * array doubles when it grows (APPENDS/SETITEMS batches of a pickler are
 * up to 1000 items), leaving the old array in the arena.
 *
 * Format facts come from CPython's Lib/pickle.py and Lib/pickletools.py
 * (opcode bytes and operand encodings), read, not copied.
 */
#include "formats/pickle.h"

#include "gmsim/json.h"
#include "base/bits.h"
#include "base/bulk.h"
#include "base/jsonfmt.h"
#include "base/vec.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* X(NAME, byte, kind): kind D = data, C = code (refused), U = unsupported. */
#define PK_OPCODES(X)                 \
    X(MARK, 0x28, D)                  \
    X(STOP, 0x2e, D)                  \
    X(POP, 0x30, D)                   \
    X(POP_MARK, 0x31, D)              \
    X(DUP, 0x32, D)                   \
    X(FLOAT, 0x46, D)                 \
    X(INT, 0x49, D)                   \
    X(BININT, 0x4a, D)                \
    X(BININT1, 0x4b, D)               \
    X(LONG, 0x4c, D)                  \
    X(BININT2, 0x4d, D)               \
    X(NONE, 0x4e, D)                  \
    X(PERSID, 0x50, C)                \
    X(BINPERSID, 0x51, C)             \
    X(REDUCE, 0x52, C)                \
    X(STRING, 0x53, U)                \
    X(BINSTRING, 0x54, D)             \
    X(SHORT_BINSTRING, 0x55, D)       \
    X(UNICODE, 0x56, U)               \
    X(BINUNICODE, 0x58, D)            \
    X(APPEND, 0x61, D)                \
    X(BUILD, 0x62, C)                 \
    X(GLOBAL, 0x63, C)                \
    X(DICT, 0x64, D)                  \
    X(EMPTY_DICT, 0x7d, D)            \
    X(APPENDS, 0x65, D)               \
    X(GET, 0x67, D)                   \
    X(BINGET, 0x68, D)                \
    X(INST, 0x69, C)                  \
    X(LONG_BINGET, 0x6a, D)           \
    X(LIST, 0x6c, D)                  \
    X(EMPTY_LIST, 0x5d, D)            \
    X(OBJ, 0x6f, C)                   \
    X(PUT, 0x70, D)                   \
    X(BINPUT, 0x71, D)                \
    X(LONG_BINPUT, 0x72, D)           \
    X(SETITEM, 0x73, D)               \
    X(TUPLE, 0x74, D)                 \
    X(EMPTY_TUPLE, 0x29, D)           \
    X(SETITEMS, 0x75, D)              \
    X(BINFLOAT, 0x47, D)              \
    X(PROTO, 0x80, D)                 \
    X(NEWOBJ, 0x81, C)                \
    X(EXT1, 0x82, C)                  \
    X(EXT2, 0x83, C)                  \
    X(EXT4, 0x84, C)                  \
    X(TUPLE1, 0x85, D)                \
    X(TUPLE2, 0x86, D)                \
    X(TUPLE3, 0x87, D)                \
    X(NEWTRUE, 0x88, D)               \
    X(NEWFALSE, 0x89, D)              \
    X(LONG1, 0x8a, D)                 \
    X(LONG4, 0x8b, D)                 \
    X(BINBYTES, 0x42, D)              \
    X(SHORT_BINBYTES, 0x43, D)        \
    X(SHORT_BINUNICODE, 0x8c, D)      \
    X(BINUNICODE8, 0x8d, D)           \
    X(BINBYTES8, 0x8e, D)             \
    X(EMPTY_SET, 0x8f, D)             \
    X(ADDITEMS, 0x90, D)              \
    X(FROZENSET, 0x91, D)             \
    X(NEWOBJ_EX, 0x92, C)             \
    X(STACK_GLOBAL, 0x93, C)          \
    X(MEMOIZE, 0x94, D)               \
    X(FRAME, 0x95, D)                 \
    X(BYTEARRAY8, 0x96, D)            \
    X(NEXT_BUFFER, 0x97, C)           \
    X(READONLY_BUFFER, 0x98, C)

enum {
#define PK_ENUM(name, byte, kind) PK_##name = byte,
    PK_OPCODES(PK_ENUM)
#undef PK_ENUM
};

const char *gm__pickle_opname(unsigned op)
{
    switch (op) {
#define PK_NAME(name, byte, kind) \
    case byte: return #name;
        PK_OPCODES(PK_NAME)
#undef PK_NAME
    default: return NULL;
    }
}

/* ---- arena ----------------------------------------------------------------- */

typedef struct pk_block {
    struct pk_block *next;
    size_t used, cap;
    gm__bulk_t mem; /* the block itself (huge pages from 2 MiB: base/bulk.h) */
    /* data follows, 16-aligned */
} pk_block_t;

#define PK_BLOCK_HDR ((sizeof(pk_block_t) + 15) & ~(size_t)15)

struct gm__pickle {
    pk_block_t *blocks;
    size_t next_cap;
    gm__pk_t *root;
    gm__pk_t **itab; /* interned strings, open addressing */
    size_t imask, icount;
    gm__pk_t none, yes, no, small[256]; /* shared nodes */
};

static void *pk_alloc_slow(gm__pickle_t *p, size_t n)
{
    size_t cap = p->next_cap;
    if (cap < n)
        cap = n;
    gm__bulk_t mem;
    if (gm__bulk_alloc(&mem, PK_BLOCK_HDR + cap))
        return NULL;
    pk_block_t *b = mem.p;
    b->mem = mem;
    b->next = p->blocks;
    b->used = 0;
    b->cap = cap;
    p->blocks = b;
    if (p->next_cap < (size_t)16 << 20)
        p->next_cap *= 2;
    void *r = (char *)b + PK_BLOCK_HDR + b->used;
    b->used += n;
    return r;
}

static inline void *pk_alloc(gm__pickle_t *p, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    pk_block_t *b = p->blocks;
    if (__builtin_expect(b == NULL || b->cap - b->used < n, 0))
        return pk_alloc_slow(p, n);
    void *r = (char *)b + PK_BLOCK_HDR + b->used;
    b->used += n;
    return r;
}

void gm__pickle_free(gm__pickle_t *p)
{
    if (p == NULL)
        return;
    for (pk_block_t *b = p->blocks, *n; b; b = n) {
        n = b->next;
        gm__bulk_t mem = b->mem;
        gm__bulk_release(&mem);
    }
    free(p->itab);
    free(p);
}

const gm__pk_t *gm__pickle_root(const gm__pickle_t *p) { return p->root; }

/* ---- interning --------------------------------------------------------------- */

static uint64_t pk_hash(const char *s, size_t n) { return gm__hash_bytes(s, n); }

static int pk_intern_grow(gm__pickle_t *p)
{
    size_t cap = p->itab ? 2 * (p->imask + 1) : 4096;
    gm__pk_t **t = calloc(cap, sizeof *t);
    if (t == NULL)
        return -1;
    for (size_t i = 0; p->itab && i <= p->imask; i++) {
        gm__pk_t *v = p->itab[i];
        if (v == NULL)
            continue;
        size_t j = pk_hash(v->v.s, v->n) & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = v;
    }
    free(p->itab);
    p->itab = t;
    p->imask = cap - 1;
    return 0;
}

const gm__pk_t *gm__pickle_find_str(const gm__pickle_t *p, const char *s)
{
    size_t n = strlen(s);
    if (p->itab == NULL || n > GM__PK_INTERN_MAX)
        return NULL;
    for (size_t j = pk_hash(s, n) & p->imask; p->itab[j]; j = (j + 1) & p->imask) {
        const gm__pk_t *v = p->itab[j];
        if (v->n == n && memcmp(v->v.s, s, n) == 0)
            return v;
    }
    return NULL;
}

/* ---- decoder state ------------------------------------------------------------- */

typedef struct pk_dec {
    gm__pickle_t *p;
    const uint8_t *d;
    size_t len, pos, at; /* at: offset of the opcode being run */
    gm__pk_t **stack;
    size_t sp, scap;
    size_t *marks;
    size_t nmarks, mcap;
    gm__pk_t **memo;
    size_t memo_cap, memo_len; /* memo_len: distinct indices stored */
    gm_error_t *err;
} pk_dec_t;

static int pk_fail(pk_dec_t *d, const char *fmt, ...) GM_PRINTF(2, 3);
static int pk_fail(pk_dec_t *d, const char *fmt, ...)
{
    char msg[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *name = gm__pickle_opname(d->d[d->at]);
    return gm_error_set(d->err, GM_EFORMAT, "byte %zu: %s%s%s", d->at, name ? name : "",
                        name ? ": " : "", msg);
}

static int pk_nomem(pk_dec_t *d) { return gm_error_set(d->err, GM_ENOMEM, "out of memory"); }

/* Bytes [pos, pos + n) are present. */
static int pk_need(pk_dec_t *d, size_t n)
{
    if (d->len - d->pos < n)
        return pk_fail(d, "truncated: needs %zu bytes, %zu left", n, d->len - d->pos);
    return 0;
}

static uint64_t pk_le(const uint8_t *s, int n)
{
    uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    assert(n >= 0 && n <= 8);
    memcpy(&v, s, (size_t)n); /* the pickle's order is the host's */
#else
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | s[i];
#endif
    return v;
}

/* The next n bytes (1 to 8) as a little-endian number, read past.  0, or
 * the truncation error. */
static inline int pk_uint(pk_dec_t *d, size_t n, uint64_t *v)
{
    int rc = pk_need(d, n);
    if (rc)
        return rc;
    *v = pk_le(d->d + d->pos, (int)n);
    d->pos += n;
    return 0;
}

static inline gm__pk_t *pk_node(pk_dec_t *d, uint8_t type)
{
    gm__pk_t *v = pk_alloc(d->p, sizeof *v);
    if (v != NULL) {
        memset(v, 0, sizeof *v);
        v->type = type;
    }
    return v;
}

static int pk_push_slow(pk_dec_t *d, gm__pk_t *v)
{
    if (v == NULL)
        return pk_nomem(d);
    if (d->scap >= GM__PK_MAX_STACK)
        return pk_fail(d, "more than %u values on the stack", GM__PK_MAX_STACK);
    if (GM_VEC_RESERVE(d->stack, d->scap, d->sp + 1, 256))
        return pk_nomem(d);
    d->stack[d->sp++] = v;
    return 0;
}

static inline int pk_push(pk_dec_t *d, gm__pk_t *v)
{
    if (__builtin_expect(v != NULL && d->sp < d->scap, 1)) {
        d->stack[d->sp++] = v;
        return 0;
    }
    return pk_push_slow(d, v);
}

/* Values above the innermost MARK. */
static size_t pk_avail(const pk_dec_t *d)
{
    return d->sp - (d->nmarks ? d->marks[d->nmarks - 1] : 0);
}

static int pk_need_stack(pk_dec_t *d, size_t n)
{
    if (pk_avail(d) < n)
        return pk_fail(d, "stack underflow (needs %zu values, %zu above the last MARK)", n,
                       pk_avail(d));
    return 0;
}

/* Pop the innermost MARK into *k (the stack position it marks). */
static int pk_pop_mark(pk_dec_t *d, size_t *k)
{
    if (d->nmarks == 0)
        return pk_fail(d, "no MARK to pop");
    *k = d->marks[--d->nmarks];
    return 0;
}

static gm__pk_t *pk_str(pk_dec_t *d, const uint8_t *src, size_t n, uint8_t type)
{
    gm__pickle_t *p = d->p;
    int intern = type == GM__PK_STR && n <= GM__PK_INTERN_MAX;
    size_t j = 0;
    if (intern) {
        if (2 * (p->icount + 1) > (p->itab ? p->imask + 1 : 0) && pk_intern_grow(p))
            return NULL;
        j = pk_hash((const char *)src, n) & p->imask;
        for (; p->itab[j]; j = (j + 1) & p->imask) {
            gm__pk_t *v = p->itab[j];
            if (v->n == n && memcmp(v->v.s, src, n) == 0)
                return v;
        }
    }
    gm__pk_t *v = pk_node(d, type);
    char *s = pk_alloc(p, n + 1);
    if (v == NULL || s == NULL)
        return NULL;
    memcpy(s, src, n);
    s[n] = '\0';
    v->v.s = s;
    v->n = (uint32_t)n;
    if (intern) {
        p->itab[j] = v;
        p->icount++;
    }
    return v;
}

/* The string and bytes opcodes: how many bytes their length takes. */
static const uint8_t pk_str_lenbytes[256] = {
    [PK_SHORT_BINUNICODE] = 1, [PK_SHORT_BINSTRING] = 1, [PK_SHORT_BINBYTES] = 1,
    [PK_BINUNICODE] = 4,       [PK_BINSTRING] = 4,       [PK_BINBYTES] = 4,
    [PK_BINUNICODE8] = 8,      [PK_BINBYTES8] = 8,       [PK_BYTEARRAY8] = 8,
};

/* Push the string or bytes value of string opcode op, whose length is the
 * next pk_str_lenbytes[op] bytes (little-endian; BINSTRING's is signed: a
 * negative length is an error). */
static int pk_op_str(pk_dec_t *d, unsigned op)
{
    uint64_t n;
    int rc = pk_uint(d, pk_str_lenbytes[op], &n);
    if (rc)
        return rc;
    if (op == PK_BINSTRING && (n & 0x80000000u))
        return pk_fail(d, "negative length");
    uint8_t type = op == PK_SHORT_BINBYTES || op == PK_BINBYTES || op == PK_BINBYTES8 ||
                           op == PK_BYTEARRAY8
                       ? GM__PK_BYTES
                       : GM__PK_STR;
    if (n > UINT32_MAX - 1)
        return pk_fail(d, "length %llu above the limit", (unsigned long long)n);
    if ((rc = pk_need(d, (size_t)n)))
        return rc;
    gm__pk_t *v = pk_str(d, d->d + d->pos, (size_t)n, type);
    d->pos += (size_t)n;
    return pk_push(d, v);
}

static gm__pk_t *pk_int(pk_dec_t *d, int64_t i)
{
    if (i >= 0 && i < 256)
        return &d->p->small[i];
    gm__pk_t *v = pk_node(d, GM__PK_INT);
    if (v)
        v->v.i = i;
    return v;
}

/* LONG1/LONG4 payload: n bytes little-endian two's complement. */
static int pk_long(pk_dec_t *d, const uint8_t *s, size_t n)
{
    /* Drop redundant sign bytes (a minimal encoder writes none). */
    while (n > 1 && ((s[n - 1] == 0 && !(s[n - 2] & 0x80)) ||
                     (s[n - 1] == 0xff && (s[n - 2] & 0x80))))
        n--;
    if (n == 0)
        return pk_push(d, pk_int(d, 0));
    if (n <= 8) {
        uint64_t u = pk_le(s, (int)n);
        if (n < 8 && (s[n - 1] & 0x80))
            u |= ~UINT64_C(0) << (8 * n);
        return pk_push(d, pk_int(d, (int64_t)u));
    }
    if (n == 9 && s[8] == 0) {
        gm__pk_t *v = pk_node(d, GM__PK_INT);
        if (v) {
            v->v.u = pk_le(s, 8);
            v->flags = GM__PK_UNSIGNED;
        }
        return pk_push(d, v);
    }
    if (n > UINT32_MAX - 1)
        return pk_fail(d, "integer of %zu bytes above the limit", n);
    gm__pk_t *v = pk_node(d, GM__PK_BIGINT);
    char *b = v ? pk_alloc(d->p, n + 1) : NULL;
    if (b == NULL)
        return pk_nomem(d);
    memcpy(b, s, n);
    b[n] = 0;
    v->v.s = b;
    v->n = (uint32_t)n;
    return pk_push(d, v);
}

/* The text operand of a protocol-0 opcode: up to '\n', copied NUL-terminated
 * into buf (at most 63 characters). */
static int pk_line(pk_dec_t *d, char *buf, size_t cap)
{
    const uint8_t *nl = memchr(d->d + d->pos, '\n', d->len - d->pos);
    if (nl == NULL)
        return pk_fail(d, "truncated: no end of line");
    size_t n = (size_t)(nl - (d->d + d->pos));
    if (n >= cap)
        return pk_fail(d, "operand of %zu characters is too long", n);
    memcpy(buf, d->d + d->pos, n);
    buf[n] = '\0';
    d->pos += n + 1;
    return 0;
}

static int pk_text_int(pk_dec_t *d, int is_long)
{
    char buf[64];
    int rc = pk_line(d, buf, sizeof buf);
    if (rc)
        return rc;
    if (!is_long && (strcmp(buf, "00") == 0 || strcmp(buf, "01") == 0))
        return pk_push(d, buf[1] == '1' ? &d->p->yes : &d->p->no);
    size_t n = strlen(buf);
    if (is_long && n > 0 && buf[n - 1] == 'L')
        buf[--n] = '\0';
    char *end;
    errno = 0;
    if (buf[0] != '-') {
        unsigned long long u = strtoull(buf, &end, 10);
        if (n == 0 || *end != '\0' || errno || buf[0] == '+' || buf[0] == ' ')
            return pk_fail(d, "bad integer '%s'", buf);
        if (u > INT64_MAX) {
            gm__pk_t *v = pk_node(d, GM__PK_INT);
            if (v) {
                v->v.u = u;
                v->flags = GM__PK_UNSIGNED;
            }
            return pk_push(d, v);
        }
        return pk_push(d, pk_int(d, (int64_t)u));
    }
    long long i = strtoll(buf, &end, 10);
    if (n < 2 || *end != '\0' || errno)
        return pk_fail(d, "bad integer '%s'", buf);
    return pk_push(d, pk_int(d, i));
}

/* A memo index from a GET/PUT operand. */
static int pk_text_index(pk_dec_t *d, uint64_t *idx)
{
    char buf[64], *end;
    int rc = pk_line(d, buf, sizeof buf);
    if (rc)
        return rc;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (buf[0] < '0' || buf[0] > '9' || *end != '\0' || errno)
        return pk_fail(d, "bad memo index '%s'", buf);
    *idx = v;
    return 0;
}

static inline int pk_memo_get(pk_dec_t *d, uint64_t idx)
{
    if (idx >= d->memo_cap || d->memo[idx] == NULL)
        return pk_fail(d, "memo index %llu was never stored", (unsigned long long)idx);
    return pk_push(d, d->memo[idx]);
}

static int pk_memo_put(pk_dec_t *d, uint64_t idx)
{
    if (pk_avail(d) < 1)
        return pk_fail(d, "nothing to store in the memo");
    /* A sane pickler numbers memo entries densely: an index can not pass
     * the number of bytes read so far. */
    if (idx > d->pos)
        return pk_fail(d, "memo index %llu out of range", (unsigned long long)idx);
    if (idx >= d->memo_cap) {
        size_t old = d->memo_cap;
        if (GM_VEC_RESERVE(d->memo, d->memo_cap, idx + 1, 1024))
            return pk_nomem(d);
        memset(d->memo + old, 0, (d->memo_cap - old) * sizeof *d->memo);
    }
    if (d->memo[idx] == NULL)
        d->memo_len++;
    d->memo[idx] = d->stack[d->sp - 1];
    return 0;
}

/* Make room for `extra` more item pointers in container c. */
static int pk_reserve(pk_dec_t *d, gm__pk_t *c, size_t used, size_t extra)
{
    if (extra > (size_t)UINT32_MAX - 2 - used)
        return pk_fail(d, "container of more than %u items", UINT32_MAX - 2);
    if (used + extra <= c->cap)
        return 0;
    size_t cap = c->cap ? 2 * (size_t)c->cap : 4;
    if (cap < used + extra)
        cap = used + extra;
    if (cap > (size_t)UINT32_MAX - 1)
        cap = (size_t)UINT32_MAX - 1;
    gm__pk_t **items = pk_alloc(d->p, cap * sizeof *items);
    if (items == NULL)
        return pk_nomem(d);
    if (used)
        memcpy(items, c->v.items, used * sizeof *items);
    c->v.items = items;
    c->cap = (uint32_t)cap;
    return 0;
}

/* A new container of `type` holding stack[k, sp) (pairs for a dict). */
static int pk_build(pk_dec_t *d, size_t k, uint8_t type)
{
    size_t n = d->sp - k;
    if (type == GM__PK_DICT && n % 2)
        return pk_fail(d, "odd number of values (%zu) for a dict", n);
    gm__pk_t *c = pk_node(d, type);
    if (c == NULL)
        return pk_nomem(d);
    int rc = pk_reserve(d, c, 0, n ? n : 0);
    if (rc)
        return rc;
    if (n)
        memcpy(c->v.items, d->stack + k, n * sizeof *c->v.items);
    c->n = (uint32_t)(type == GM__PK_DICT ? n / 2 : n);
    d->sp = k;
    return pk_push(d, c);
}

/* Add stack[k, sp) to the container at stack[k - 1]. */
static int pk_extend(pk_dec_t *d, size_t k, uint8_t type)
{
    size_t floor = d->nmarks ? d->marks[d->nmarks - 1] : 0;
    if (k < floor + 1)
        return pk_fail(d, "no container below the values");
    gm__pk_t *c = d->stack[k - 1];
    if (c->type != type)
        return pk_fail(d, "the target is not a %s",
                       type == GM__PK_LIST ? "list" : type == GM__PK_DICT ? "dict" : "set");
    size_t n = d->sp - k;
    if (type == GM__PK_DICT && n % 2)
        return pk_fail(d, "odd number of values (%zu) for a dict", n);
    size_t used = type == GM__PK_DICT ? 2 * (size_t)c->n : c->n;
    int rc = pk_reserve(d, c, used, n);
    if (rc)
        return rc;
    if (n)
        memcpy(c->v.items + used, d->stack + k, n * sizeof *c->v.items);
    c->n += (uint32_t)(type == GM__PK_DICT ? n / 2 : n);
    d->sp = k;
    return 0;
}

/* The container each container opcode makes or adds to. */
static const uint8_t pk_container[256] = {
    [PK_EMPTY_LIST] = GM__PK_LIST,   [PK_LIST] = GM__PK_LIST,      [PK_APPENDS] = GM__PK_LIST,
    [PK_EMPTY_DICT] = GM__PK_DICT,   [PK_DICT] = GM__PK_DICT,      [PK_SETITEMS] = GM__PK_DICT,
    [PK_EMPTY_SET] = GM__PK_SET,     [PK_FROZENSET] = GM__PK_SET,  [PK_ADDITEMS] = GM__PK_SET,
    [PK_EMPTY_TUPLE] = GM__PK_TUPLE, [PK_TUPLE] = GM__PK_TUPLE,
};

static int pk_run(pk_dec_t *d)
{
    int rc;
    uint64_t idx = 0;
    size_t k = 0;
    while (d->pos < d->len) {
        d->at = d->pos;
        unsigned op = d->d[d->pos++];
        switch (op) {
        case PK_SHORT_BINUNICODE:
        case PK_BINUNICODE:
        case PK_BINUNICODE8:
        case PK_SHORT_BINSTRING:
        case PK_BINSTRING:
        case PK_SHORT_BINBYTES:
        case PK_BINBYTES:
        case PK_BINBYTES8:
        case PK_BYTEARRAY8:
            if ((rc = pk_op_str(d, op)))
                return rc;
            break;
        case PK_PROTO:
            if ((rc = pk_uint(d, 1, &idx)))
                return rc;
            if (idx > 5)
                return pk_fail(d, "unsupported protocol %u", (unsigned)idx);
            break;
        case PK_FRAME:
            if ((rc = pk_uint(d, 8, &idx)))
                return rc;
            if (idx > d->len - d->pos)
                return pk_fail(d, "truncated: frame of %llu bytes, %zu left",
                               (unsigned long long)idx, d->len - d->pos);
            break;
        case PK_STOP:
            if (d->nmarks != 0 || d->sp != 1)
                return pk_fail(d, "%zu values and %zu MARKs left on the stack", d->sp,
                               d->nmarks);
            d->p->root = d->stack[0];
            return 0;
        case PK_MARK:
            if (d->nmarks == d->mcap) {
                if (d->mcap >= GM__PK_MAX_MARKS)
                    return pk_fail(d, "more than %u nested MARKs", GM__PK_MAX_MARKS);
                if (GM_VEC_RESERVE(d->marks, d->mcap, d->nmarks + 1, 64))
                    return pk_nomem(d);
            }
            d->marks[d->nmarks++] = d->sp;
            break;
        case PK_POP:
            if (pk_avail(d) > 0)
                d->sp--;
            else if ((rc = pk_pop_mark(d, &k)))
                return rc;
            break;
        case PK_POP_MARK:
            if ((rc = pk_pop_mark(d, &k)))
                return rc;
            d->sp = k;
            break;
        case PK_DUP:
            if ((rc = pk_need_stack(d, 1)) || (rc = pk_push(d, d->stack[d->sp - 1])))
                return rc;
            break;
        case PK_NONE:
            if ((rc = pk_push(d, &d->p->none)))
                return rc;
            break;
        case PK_NEWTRUE:
        case PK_NEWFALSE:
            if ((rc = pk_push(d, op == PK_NEWTRUE ? &d->p->yes : &d->p->no)))
                return rc;
            break;
        case PK_BININT:
            if ((rc = pk_uint(d, 4, &idx)) ||
                (rc = pk_push(d, pk_int(d, (int32_t)(uint32_t)idx))))
                return rc;
            break;
        case PK_BININT1:
            if ((rc = pk_uint(d, 1, &idx)) || (rc = pk_push(d, &d->p->small[idx])))
                return rc;
            break;
        case PK_BININT2:
            if ((rc = pk_uint(d, 2, &idx)) || (rc = pk_push(d, pk_int(d, (int64_t)idx))))
                return rc;
            break;
        case PK_LONG1:
        case PK_LONG4: {
            uint64_t n;
            if ((rc = pk_uint(d, op == PK_LONG1 ? 1 : 4, &n)))
                return rc;
            if (op == PK_LONG4 && (n & 0x80000000u))
                return pk_fail(d, "negative length");
            if ((rc = pk_need(d, (size_t)n)))
                return rc;
            const uint8_t *s = d->d + d->pos;
            d->pos += (size_t)n;
            if ((rc = pk_long(d, s, (size_t)n)))
                return rc;
            break;
        }
        case PK_INT:
        case PK_LONG:
            if ((rc = pk_text_int(d, op == PK_LONG)))
                return rc;
            break;
        case PK_FLOAT: {
            char buf[64], *end;
            if ((rc = pk_line(d, buf, sizeof buf)))
                return rc;
            double f = strtod(buf, &end);
            if (end == buf || *end != '\0')
                return pk_fail(d, "bad float '%s'", buf);
            gm__pk_t *v = pk_node(d, GM__PK_FLOAT);
            if (v)
                v->v.f = f;
            if ((rc = pk_push(d, v)))
                return rc;
            break;
        }
        case PK_BINFLOAT: {
            if ((rc = pk_need(d, 8)))
                return rc;
            uint64_t u = 0;
            for (int i = 0; i < 8; i++)
                u = u << 8 | d->d[d->pos + (size_t)i];
            d->pos += 8;
            gm__pk_t *v = pk_node(d, GM__PK_FLOAT);
            if (v)
                memcpy(&v->v.f, &u, sizeof u);
            if ((rc = pk_push(d, v)))
                return rc;
            break;
        }
        case PK_EMPTY_LIST:
        case PK_EMPTY_DICT:
        case PK_EMPTY_TUPLE:
        case PK_EMPTY_SET:
            if ((rc = pk_push(d, pk_node(d, pk_container[op]))))
                return rc;
            break;
        case PK_LIST:
        case PK_TUPLE:
        case PK_DICT:
        case PK_FROZENSET:
        case PK_APPENDS:
        case PK_SETITEMS:
        case PK_ADDITEMS:
            /* The values above the last MARK: a new container of them
             * (LIST ... FROZENSET), or added to the one below the MARK. */
            if ((rc = pk_pop_mark(d, &k)) ||
                (rc = op == PK_APPENDS || op == PK_SETITEMS || op == PK_ADDITEMS
                          ? pk_extend(d, k, pk_container[op])
                          : pk_build(d, k, pk_container[op])))
                return rc;
            break;
        case PK_TUPLE1:
        case PK_TUPLE2:
        case PK_TUPLE3: {
            size_t n = (size_t)(op - PK_TUPLE1 + 1);
            if ((rc = pk_need_stack(d, n)) || (rc = pk_build(d, d->sp - n, GM__PK_TUPLE)))
                return rc;
            break;
        }
        case PK_APPEND:
            if ((rc = pk_need_stack(d, 2)) || (rc = pk_extend(d, d->sp - 1, GM__PK_LIST)))
                return rc;
            break;
        case PK_SETITEM:
            if ((rc = pk_need_stack(d, 3)) || (rc = pk_extend(d, d->sp - 2, GM__PK_DICT)))
                return rc;
            break;
        case PK_BINGET:
        case PK_LONG_BINGET: {
            /* Runs of memo gets (a stack's shared frame dicts, repeated
             * keys) are taken in this loop, on local copies of the cursor
             * and the stack, not through the dispatch; the offset of the
             * get being run is worked out only when one fails. */
            const uint8_t *base = d->d, *p = base + d->pos, *end = base + d->len;
            const uint8_t *opp = p - 1; /* the opcode of the get being run */
            gm__pk_t **stack = d->stack, **memo = d->memo;
            size_t sp = d->sp, scap = d->scap, mcap = d->memo_cap;
            int done = 0;
            for (;;) {
                gm__pk_t *v;
                if (*opp == PK_BINGET) {
                    if (__builtin_expect(p >= end, 0))
                        break;
                    idx = *p++;
                } else {
                    if (__builtin_expect(end - p < 4, 0))
                        break;
                    idx = pk_le(p, 4);
                    p += 4;
                }
                if (__builtin_expect(idx >= mcap || (v = memo[idx]) == NULL || sp >= scap, 0))
                    break;
                stack[sp++] = v;
                /* BINGET (0x68) and LONG_BINGET (0x6a) differ in bit 1 alone */
                if (p >= end || (*p | 2) != PK_LONG_BINGET) {
                    done = 1;
                    break;
                }
                opp = p++;
            }
            d->sp = sp;
            if (done) {
                d->pos = (size_t)(p - base);
                break;
            }
            /* A get the loop did not take: truncated, not in the memo, or
             * the stack full.  Redo it on the checked path. */
            d->at = (size_t)(opp - base);
            d->pos = d->at + 1;
            op = *opp;
            if ((rc = pk_uint(d, op == PK_BINGET ? 1 : 4, &idx)) || (rc = pk_memo_get(d, idx)))
                return rc;
            break;
        }
        case PK_GET:
        case PK_PUT: /* protocol 0: the index as a line of text */
            if ((rc = pk_text_index(d, &idx)) ||
                (rc = op == PK_GET ? pk_memo_get(d, idx) : pk_memo_put(d, idx)))
                return rc;
            break;
        case PK_BINPUT:
        case PK_LONG_BINPUT:
            if ((rc = pk_uint(d, op == PK_BINPUT ? 1 : 4, &idx)) || (rc = pk_memo_put(d, idx)))
                return rc;
            break;
        case PK_MEMOIZE: /* memo[len(memo)] = top */
            if (__builtin_expect(d->memo_len < d->memo_cap && d->memo[d->memo_len] == NULL &&
                                     pk_avail(d) > 0,
                                 1)) {
                d->memo[d->memo_len++] = d->stack[d->sp - 1];
                break;
            }
            if ((rc = pk_memo_put(d, d->memo_len)))
                return rc;
            break;
        default: {
            const char *name = gm__pickle_opname(op);
            if (name == NULL)
                return gm_error_set(d->err, GM_EFORMAT, "byte %zu: unknown opcode 0x%02x",
                                    d->at, op);
            if (op == PK_STRING || op == PK_UNICODE)
                return gm_error_set(d->err, GM_EFORMAT,
                                    "opcode %s at byte %zu is not supported (protocol 0 "
                                    "quoted text)",
                                    name, d->at);
            return gm_error_set(d->err, GM_EFORMAT,
                                "opcode %s at byte %zu refused: it would run code, and a pickle "
                                "is never executed",
                                name, d->at);
        }
        }
    }
    d->at = d->len;
    return gm_error_set(d->err, GM_EFORMAT, "byte %zu: truncated: the data ends before STOP",
                        d->len);
}

int gm__pickle_decode(const void *data, size_t len, gm__pickle_t **out, gm_error_t *err)
{
    *out = NULL;
    gm__pickle_t *p = calloc(1, sizeof *p);
    pk_dec_t *d = calloc(1, sizeof *d);
    if (p == NULL || d == NULL) {
        free(p);
        free(d);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    p->next_cap = len > ((size_t)1 << 16) ? len : (size_t)1 << 16;
    d->p = p;
    d->d = data;
    d->len = len;
    d->err = err;
    p->none.type = GM__PK_NONE;
    p->yes.type = p->no.type = GM__PK_BOOL;
    p->yes.v.i = 1;
    for (int i = 0; i < 256; i++) {
        p->small[i].type = GM__PK_INT;
        p->small[i].v.i = i;
    }
    int rc = len == 0 ? gm_error_set(err, GM_EFORMAT, "byte 0: empty input, not a pickle")
                      : pk_run(d);
    free(d->stack);
    free(d->marks);
    free(d->memo);
    free(d);
    if (rc) {
        gm__pickle_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* ---- reading the tree ---------------------------------------------------------- */

const gm__pk_t *gm__pk_get(const gm__pk_t *d, const gm__pk_t *key)
{
    if (d == NULL || key == NULL || d->type != GM__PK_DICT)
        return NULL;
    for (uint32_t i = 0; i < d->n; i++)
        if (d->v.items[2 * i] == key)
            return d->v.items[2 * i + 1];
    return NULL;
}

const gm__pk_t *gm__pk_geth(const gm__pk_t *d, const gm__pk_t *key, uint32_t *hint)
{
    if (d == NULL || key == NULL || d->type != GM__PK_DICT)
        return NULL;
    uint32_t h = *hint;
    if (h < d->n && d->v.items[2 * h] == key)
        return d->v.items[2 * h + 1];
    for (uint32_t i = 0; i < d->n; i++) {
        if (d->v.items[2 * i] == key) {
            *hint = i;
            return d->v.items[2 * i + 1];
        }
    }
    return NULL;
}

int gm__pk_i64(const gm__pk_t *v, int64_t *out)
{
    if (v == NULL || (v->type != GM__PK_INT && v->type != GM__PK_BOOL) ||
        (v->flags & GM__PK_UNSIGNED))
        return 0;
    *out = v->v.i;
    return 1;
}

int gm__pk_u64(const gm__pk_t *v, uint64_t *out)
{
    if (v == NULL || (v->type != GM__PK_INT && v->type != GM__PK_BOOL))
        return 0;
    if (!(v->flags & GM__PK_UNSIGNED) && v->v.i < 0)
        return 0;
    *out = v->v.u;
    return 1;
}

int gm__pk_is_str(const gm__pk_t *v, const char *s)
{
    return v != NULL && v->type == GM__PK_STR && strcmp(v->v.s, s) == 0;
}

/* ---- JSON ------------------------------------------------------------------------ */


/* s[0..n) as a JSON string literal, by the library's one escaper. */
static void pk_json_string(gm__buf_t *b, const char *s, size_t n)
{
    size_t need = gm__json_escape_mem(NULL, 0, s, n);
    char *lit = malloc(need + 1);
    if (lit == NULL) {
        b->oom = 1;
        return;
    }
    gm__json_escape_mem(lit, need + 1, s, n);
    gm__buf_add(b, lit, need);
    free(lit);
}

/* v, inside `open` arrays and objects, as JSON; a container may open only
 * while open < max. */
static int pk_json(gm__buf_t *b, const gm__pk_t *v, int open, int max, gm_error_t *err)
{
    char num[40];
    switch (v->type) {
    case GM__PK_NONE:
        gm__buf_str(b, "null");
        return 0;
    case GM__PK_BOOL:
        gm__buf_str(b, v->v.i ? "true" : "false");
        return 0;
    case GM__PK_INT:
        if (v->flags & GM__PK_UNSIGNED)
            snprintf(num, sizeof num, "%llu", (unsigned long long)v->v.u);
        else
            snprintf(num, sizeof num, "%lld", (long long)v->v.i);
        gm__buf_str(b, num);
        return 0;
    case GM__PK_BIGINT:
        gm__buf_str(b, "null");
        return 0;
    case GM__PK_FLOAT:
        gm__json_format_double(num, sizeof num, v->v.f);
        gm__buf_str(b, num);
        return 0;
    case GM__PK_STR:
    case GM__PK_BYTES:
        pk_json_string(b, v->v.s, v->n);
        return 0;
    default:
        break;
    }
    if (open >= max)
        return gm_error_set(err, GM_EFORMAT, "value nested too deeply (or a cycle)");
    if (v->type == GM__PK_DICT) {
        gm__buf_str(b, "{");
        for (uint32_t i = 0; i < v->n; i++) {
            const gm__pk_t *k = v->v.items[2 * i];
            if (i)
                gm__buf_str(b, ", ");
            if (k->type == GM__PK_STR || k->type == GM__PK_BYTES) {
                pk_json_string(b, k->v.s, k->n);
            } else {
                gm__buf_t kb = {0};
                int rc = pk_json(&kb, k, open + 1, max, err);
                if (rc == 0 && kb.oom)
                    rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                if (rc == 0)
                    pk_json_string(b, kb.p, kb.n);
                free(kb.p);
                if (rc)
                    return rc;
            }
            gm__buf_str(b, ": ");
            int rc = pk_json(b, v->v.items[2 * i + 1], open + 1, max, err);
            if (rc)
                return rc;
        }
        gm__buf_str(b, "}");
        return 0;
    }
    /* list, tuple, set */
    gm__buf_str(b, "[");
    for (uint32_t i = 0; i < v->n; i++) {
        if (i)
            gm__buf_str(b, ", ");
        int rc = pk_json(b, v->v.items[i], open + 1, max, err);
        if (rc)
            return rc;
    }
    gm__buf_str(b, "]");
    return 0;
}

int gm__pickle_to_json(const gm__pk_t *v, int depth, char **out, gm_error_t *err)
{
    *out = NULL;
    gm__buf_t b = {0};
    int rc = pk_json(&b, v, 0, depth < GM_JSON_MAX_DEPTH ? depth : GM_JSON_MAX_DEPTH, err);
    if (rc == 0 && b.oom)
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
    if (rc) {
        free(b.p);
        return rc;
    }
    *out = b.p;
    return 0;
}
