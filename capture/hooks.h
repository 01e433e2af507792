/*
 * capture/hooks.h — what the interposed entry points share (hooks.c: the
 * CUDA runtime and driver calls, the entry points handed out by name;
 * torch_nvtx.c: the PyTorch pluggable allocator and NVTX): the functions
 * forwarded to, resolved lazily, and the brackets that record a call once.
 */
#ifndef GM_CAPTURE_HOOKS_H
#define GM_CAPTURE_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

/* X(name): every function we forward to or call. */
#define CAP_HOOKS(X)                                                                       \
    X(cudaMalloc) X(cudaFree) X(cudaMallocAsync) X(cudaMallocAsync_ptsz) X(cudaFreeAsync) \
    X(cudaFreeAsync_ptsz) X(cudaMallocFromPoolAsync) X(cudaMallocFromPoolAsync_ptsz)      \
    X(cudaMallocManaged) X(cudaMallocPitch) X(cudaGetDevice) X(cudaGetDriverEntryPoint)   \
    X(cudaGetDriverEntryPointByVersion) X(cuMemAlloc_v2) X(cuMemFree_v2)                   \
    X(cuMemAllocAsync) X(cuMemAllocAsync_ptsz) X(cuMemFreeAsync) X(cuMemFreeAsync_ptsz)    \
    X(cuMemAllocManaged) X(cuMemCreate) X(cuMemMap) X(cuMemUnmap) X(cuMemRelease)          \
    X(cuGetProcAddress) X(cuGetProcAddress_v2) X(cuCtxGetDevice) X(nvtxRangePushA)         \
    X(nvtxRangePop) X(nvtxRangeStartA) X(nvtxRangeEnd)

enum {
#define CAP_H_ENUM(n) H_##n,
    CAP_HOOKS(CAP_H_ENUM)
#undef CAP_H_ENUM
    H_COUNT
};

/* The real function behind hook h (dlsym(RTLD_NEXT), then any loaded
 * library but this one), resolved once; NULL when none is found. */
void *gm__cap_resolve(int h);

/* Opaque CUDA types: the library builds without the toolkit. */
typedef int cap_err_t;                    /* cudaError_t, CUresult */
typedef unsigned long long cap_dptr_t;    /* CUdeviceptr */
typedef unsigned long long cap_handle_t;  /* CUmemGenericAllocationHandle */
#define CAP_ERR_NOT_FOUND 3               /* cudaErrorInitializationError / CUDA_ERROR_NOT_INITIALIZED */

#define CAP_REAL(h, type) ((type)gm__cap_resolve(h))
/* The interposed entry points record: not when a CUPTI subscription does,
 * nor once recording has stopped (or was never wanted). */
#define CAP_ON_HOOKS()                                                     \
    (atomic_load_explicit(&gm__cap_hooks_on, memory_order_relaxed) &&     \
     atomic_load_explicit(&gm__cap_state, memory_order_relaxed) != CAP_STOPPED)
#define CAP_U(p) ((uint64_t)(uintptr_t)(p))

/* Forwarding brackets: nested calls (the runtime calling the driver
 * through our symbols, the NVTX v2 library calling its injection) are
 * recorded once, at the outermost level. */
#define CAP_ENTER() (gm__cap_tls.inside++)
#define CAP_LEAVE() (--gm__cap_tls.inside == 0 && CAP_ON_HOOKS())
/* The entry time of a free-like call, read only when it will be recorded. */
#define CAP_STAMP() (gm__cap_tls.inside == 0 && CAP_ON_HOOKS() ? gm__cap_now() : 0)

typedef cap_err_t (*cap_malloc_fn)(void **, size_t);
typedef cap_err_t (*cap_free_fn)(void *);
typedef cap_err_t (*cap_malloc_async_fn)(void **, size_t, void *);
typedef cap_err_t (*cap_free_async_fn)(void *, void *);
typedef cap_err_t (*cap_malloc_pool_fn)(void **, size_t, void *, void *);
typedef cap_err_t (*cap_malloc_managed_fn)(void **, size_t, unsigned);
typedef cap_err_t (*cap_malloc_pitch_fn)(void **, size_t *, size_t, size_t);
typedef cap_err_t (*cap_cualloc_fn)(cap_dptr_t *, size_t);
typedef cap_err_t (*cap_cufree_fn)(cap_dptr_t);
typedef cap_err_t (*cap_cualloc_async_fn)(cap_dptr_t *, size_t, void *);
typedef cap_err_t (*cap_cufree_async_fn)(cap_dptr_t, void *);
typedef cap_err_t (*cap_cualloc_managed_fn)(cap_dptr_t *, size_t, unsigned);
typedef cap_err_t (*cap_create_fn)(cap_handle_t *, size_t, const void *, unsigned long long);
typedef cap_err_t (*cap_map_fn)(cap_dptr_t, size_t, size_t, cap_handle_t, unsigned long long);
typedef cap_err_t (*cap_unmap_fn)(cap_dptr_t, size_t);
typedef cap_err_t (*cap_release_fn)(cap_handle_t);
typedef cap_err_t (*cap_gpa1_fn)(const char *, void **, int, unsigned long long);
typedef cap_err_t (*cap_gpa2_fn)(const char *, void **, int, unsigned long long, int *);
typedef cap_err_t (*cap_dep_fn)(const char *, void **, unsigned long long, int *);
typedef cap_err_t (*cap_depv_fn)(const char *, void **, unsigned, unsigned long long, int *);

#endif
