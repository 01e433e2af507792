/*
 * gmsim/error.h — error codes and the caller-owned error record.
 *
 * Library functions return 0 on success or a negative GM_E* code, and fill a
 * gm_error_t that the caller owns with a one-line message (lowercase, no full
 * stop, subject quoted: "cannot open 'x.db': file is not a database").  They
 * never print and never exit.  A simulated out-of-memory is a result, not an
 * error: see GM_ALLOC_OOM in policy.h.
 */
#ifndef GMSIM_ERROR_H
#define GMSIM_ERROR_H

#include "gmsim/api.h"

#include <stddef.h>

GM_API_BEGIN

#ifdef __GNUC__
#define GM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GM_PRINTF(f, a)
#endif

/* X(NAME, value, description) — one list makes the enum and gm_strerror. */
#define GM_ERRORS(X)                                              \
    X(OK, 0, "success")                                           \
    X(EINVAL, -1, "invalid argument")                             \
    X(ENOMEM, -2, "out of memory")                                \
    X(EIO, -3, "input/output error")                              \
    X(EFORMAT, -4, "malformed input")                             \
    X(ESCHEMA, -5, "unsupported schema version")                  \
    X(ENOTFOUND, -6, "not found")                                 \
    X(EEXIST, -7, "already exists")                               \
    X(ECORRUPT, -8, "corrupt data")                               \
    X(EDB, -9, "database error")                                  \
    X(ESTATE, -10, "call out of order")                           \
    X(EUNSUPPORTED, -11, "not supported")                         \
    X(EINCOMPLETE, -12, "incomplete")

enum {
#define GM__ERR_ENUM(name, value, text) GM_##name = value,
    GM_ERRORS(GM__ERR_ENUM)
#undef GM__ERR_ENUM
};

#define GM_ERROR_MSG_MAX 512

typedef struct gm_error {
    int code;                   /* last GM_E* code, 0 when none */
    char msg[GM_ERROR_MSG_MAX]; /* one line, no trailing newline */
} gm_error_t;

/* Description of a GM_E* code ("unknown error" for anything else). */
const char *gm_strerror(int code);

/* Fill err (may be NULL) with code and a formatted message; returns code. */
int gm_error_set(gm_error_t *err, int code, const char *fmt, ...) GM_PRINTF(3, 4);

/* Prefix err->msg with "PREFIX: " (used to add a file or trace name). */
void gm_error_prefix(gm_error_t *err, const char *fmt, ...) GM_PRINTF(2, 3);

/* Clear err (may be NULL). */
void gm_error_clear(gm_error_t *err);

GM_API_END

#endif
