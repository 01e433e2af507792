/*
 * base/error.c — error codes, messages and the library's version.
 */
#include "gmsim/error.h"
#include "gmsim/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *gm_strerror(int code)
{
    switch (code) {
#define GM__ERR_CASE(name, value, text) \
    case value:                         \
        return text;
        GM_ERRORS(GM__ERR_CASE)
#undef GM__ERR_CASE
    }
    return "unknown error";
}

int gm_error_set(gm_error_t *err, int code, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void gm_error_prefix(gm_error_t *err, const char *fmt, ...)
{
    if (err == NULL)
        return;
    char prefix[GM_ERROR_MSG_MAX], old[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* "PREFIX: OLD", truncated to the buffer. */
    size_t n = strlen(prefix), cap = sizeof err->msg - 1;
    if (n > cap)
        n = cap;
    memcpy(err->msg, prefix, n);
    for (const char *q = ": "; *q && n < cap; q++)
        err->msg[n++] = *q;
    size_t k = strlen(old);
    if (k > cap - n)
        k = cap - n;
    memcpy(err->msg + n, old, k);
    err->msg[n + k] = '\0';
}

void gm_error_clear(gm_error_t *err)
{
    if (err != NULL) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

const char *gm_version(void) { return GM_VERSION; }
int gm_have_cuda(void) { return GM_HAVE_CUDA; }
const char *gm_cuda_version(void) { return GM_CUDA_VERSION; }
