/*
 * capture/torch_nvtx.c — the PyTorch pluggable-allocator pair
 * gmsim_torch_alloc/gmsim_torch_free, and the NVTX v2 range calls and NVTX
 * v3 injection (InitializeInjectionNvtx2), of libgmsim_capture.so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "capture/capture.h"
#include "capture/hooks.h"

/* ---- PyTorch pluggable allocator ---------------------------------------------- */

GM_CAP_EXPORT void *gmsim_torch_alloc(ssize_t size, int device, void *stream);
GM_CAP_EXPORT void *gmsim_torch_alloc(ssize_t size, int device, void *stream)
{
    cap_malloc_async_fn real = CAP_REAL(H_cudaMallocAsync, cap_malloc_async_fn);
    if (real == NULL || size < 0)
        return NULL;
    void *p = NULL;
    CAP_ENTER();
    gm__cap_tls.torch++;
    cap_err_t rc = real(&p, (size_t)size, stream);
    gm__cap_tls.torch--;
    gm__cap_tls.inside--;
    /* Recorded whatever the mode: the pluggable allocator is its own source. */
    gm__cap_emit(SPOOL_OP_TORCH_ALLOC, gm__cap_now(), rc == 0 ? CAP_U(p) : 0, (uint64_t)size,
                 CAP_U(stream), 0, rc, device, 0, NULL);
    return rc == 0 ? p : NULL;
}

GM_CAP_EXPORT void gmsim_torch_free(void *ptr, ssize_t size, int device, void *stream);
GM_CAP_EXPORT void gmsim_torch_free(void *ptr, ssize_t size, int device, void *stream)
{
    cap_free_async_fn real = CAP_REAL(H_cudaFreeAsync, cap_free_async_fn);
    if (real == NULL)
        return;
    uint64_t ts = gm__cap_now();
    CAP_ENTER();
    gm__cap_tls.torch++;
    cap_err_t rc = real(ptr, stream);
    gm__cap_tls.torch--;
    gm__cap_tls.inside--;
    if (ptr != NULL)
        gm__cap_emit(SPOOL_OP_TORCH_FREE, ts, CAP_U(ptr), size > 0 ? (uint64_t)size : 0,
                     CAP_U(stream), 0, rc, device, 0, NULL);
}

/* ---- NVTX ---------------------------------------------------------------------- */

static atomic_uint_fast64_t cap_range_id = 1;

static void cap_range_push(const char *name)
{
    gm__cap_emit(SPOOL_OP_RANGE_PUSH, gm__cap_now(), 0, 0, 0, 0, 0, -1, 0,
                 name ? name : "(null)");
}

GM_CAP_EXPORT int nvtxRangePushA(const char *message);
GM_CAP_EXPORT int nvtxRangePushA(const char *message)
{
    int (*real)(const char *) = CAP_REAL(H_nvtxRangePushA, int (*)(const char *));
    CAP_ENTER();
    int rc = real ? real(message) : gm__cap_tls.nvtx_depth;
    if (CAP_LEAVE())
        cap_range_push(message);
    gm__cap_tls.nvtx_depth++;
    return rc;
}

GM_CAP_EXPORT int nvtxRangePop(void);
GM_CAP_EXPORT int nvtxRangePop(void)
{
    int (*real)(void) = CAP_REAL(H_nvtxRangePop, int (*)(void));
    CAP_ENTER();
    int rc = real ? real() : gm__cap_tls.nvtx_depth - 1;
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_RANGE_POP, gm__cap_now(), 0, 0, 0, 0, 0, -1, 0, NULL);
    if (gm__cap_tls.nvtx_depth > 0)
        gm__cap_tls.nvtx_depth--;
    return rc;
}

GM_CAP_EXPORT uint64_t nvtxRangeStartA(const char *message);
GM_CAP_EXPORT uint64_t nvtxRangeStartA(const char *message)
{
    uint64_t (*real)(const char *) = CAP_REAL(H_nvtxRangeStartA, uint64_t (*)(const char *));
    CAP_ENTER();
    uint64_t id = real ? real(message) : atomic_fetch_add(&cap_range_id, 1);
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_RANGE_START, gm__cap_now(), 0, 0, 0, id, 0, -1, 0,
                     message ? message : "(null)");
    return id;
}

GM_CAP_EXPORT void nvtxRangeEnd(uint64_t id);
GM_CAP_EXPORT void nvtxRangeEnd(uint64_t id)
{
    void (*real)(uint64_t) = CAP_REAL(H_nvtxRangeEnd, void (*)(uint64_t));
    CAP_ENTER();
    if (real)
        real(id);
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_RANGE_END, gm__cap_now(), 0, 0, 0, id, 0, -1, 0, NULL);
}

/* NVTX v3 injection: the NVTX headers compiled into the program load the
 * library named by NVTX_INJECTION64_PATH and call this; we fill the core
 * module's slots for the range calls (the rest stay no-ops). */
typedef void (*cap_nvtx_fp)(void);
typedef struct cap_nvtx_callbacks {
    size_t struct_size;
    int (*get_module_table)(int module, cap_nvtx_fp ***table, unsigned *size);
} cap_nvtx_callbacks_t;

enum { NVTX_MODULE_CORE = 1, NVTX_ETID_CALLBACKS = 1 };
enum { NVTX_CORE_RANGE_START_A = 5, NVTX_CORE_RANGE_END = 7, NVTX_CORE_RANGE_PUSH_EX = 8,
       NVTX_CORE_RANGE_PUSH_A = 9, NVTX_CORE_RANGE_POP = 11 };

static uint64_t cap_nvtx_start_a(const char *m)
{
    uint64_t id = atomic_fetch_add(&cap_range_id, 1);
    if (gm__cap_tls.inside == 0)
        gm__cap_emit(SPOOL_OP_RANGE_START, gm__cap_now(), 0, 0, 0, id, 0, -1, 0,
                     m ? m : "(null)");
    return id;
}

static void cap_nvtx_end(uint64_t id)
{
    if (gm__cap_tls.inside == 0)
        gm__cap_emit(SPOOL_OP_RANGE_END, gm__cap_now(), 0, 0, 0, id, 0, -1, 0, NULL);
}

static int cap_nvtx_push_a(const char *m)
{
    if (gm__cap_tls.inside == 0)
        cap_range_push(m);
    return gm__cap_tls.nvtx_depth++;
}

/* nvtxEventAttributes_t: the message type (1 = ASCII) is the int at byte
 * 32 and the message pointer at byte 40. */
static int cap_nvtx_push_ex(const void *attr)
{
    const char *m = "(unnamed)";
    int type = 0;
    if (attr != NULL) {
        memcpy(&type, (const char *)attr + 32, sizeof type);
        if (type == 1)
            memcpy(&m, (const char *)attr + 40, sizeof m);
    }
    return cap_nvtx_push_a(m);
}

static int cap_nvtx_pop(void)
{
    if (gm__cap_tls.inside == 0)
        gm__cap_emit(SPOOL_OP_RANGE_POP, gm__cap_now(), 0, 0, 0, 0, 0, -1, 0, NULL);
    if (gm__cap_tls.nvtx_depth == 0)
        return -1;
    return --gm__cap_tls.nvtx_depth;
}

GM_CAP_EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));
GM_CAP_EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
    if (get_export_table == NULL || !gm__cap_wanted())
        return 0;
    const cap_nvtx_callbacks_t *cb = get_export_table(NVTX_ETID_CALLBACKS);
    cap_nvtx_fp **table = NULL;
    unsigned size = 0;
    if (cb == NULL || cb->get_module_table == NULL ||
        !cb->get_module_table(NVTX_MODULE_CORE, &table, &size) || table == NULL ||
        size <= NVTX_CORE_RANGE_POP)
        return 0;
    *table[NVTX_CORE_RANGE_START_A] = (cap_nvtx_fp)cap_nvtx_start_a;
    *table[NVTX_CORE_RANGE_END] = (cap_nvtx_fp)cap_nvtx_end;
    *table[NVTX_CORE_RANGE_PUSH_EX] = (cap_nvtx_fp)cap_nvtx_push_ex;
    *table[NVTX_CORE_RANGE_PUSH_A] = (cap_nvtx_fp)cap_nvtx_push_a;
    *table[NVTX_CORE_RANGE_POP] = (cap_nvtx_fp)cap_nvtx_pop;
    return 1;
}
