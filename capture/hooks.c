/*
 * capture/hooks.c — the interposed CUDA runtime and driver allocation
 * calls of libgmsim_capture.so (capture.c says how they record), the real
 * functions they forward to, resolved lazily, and the driver entry points
 * handed out by name (cuGetProcAddress[_v2], cudaGetDriverEntryPoint
 * [ByVersion]), which hand out our wrappers for the names we record.
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

/* ---- resolving the real functions -------------------------------------------- */

static const char *const cap_hook_names[H_COUNT] = {
#define CAP_H_NAME(n) #n,
    CAP_HOOKS(CAP_H_NAME)
#undef CAP_H_NAME
};

static void *_Atomic cap_real[H_COUNT];

/* 1 if p lies in this library. */
static int cap_is_ours(const void *p)
{
    Dl_info a, b;
    if (dladdr(p, &a) == 0 || dladdr((const void *)cap_is_ours, &b) == 0)
        return 0;
    return a.dli_fbase == b.dli_fbase;
}

typedef struct cap_objs {
    const char *names[128];
    int n;
} cap_objs_t;

static int cap_collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    cap_objs_t *o = data;
    if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0' && o->n < 128)
        o->names[o->n++] = info->dlpi_name;
    return 0;
}

/* `name` in any loaded library but this one (runtimes loaded RTLD_LOCAL
 * are out of RTLD_NEXT's reach). */
static void *cap_find_loaded(const char *name)
{
    cap_objs_t objs;
    objs.n = 0;
    dl_iterate_phdr(cap_collect, &objs);
    for (int i = 0; i < objs.n; i++) {
        void *h = dlopen(objs.names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h == NULL)
            continue;
        void *p = dlsym(h, name);
        dlclose(h);
        if (p != NULL && !cap_is_ours(p))
            return p;
    }
    return NULL;
}

void *gm__cap_resolve(int h)
{
    void *p = atomic_load_explicit(&cap_real[h], memory_order_acquire);
    if (p != NULL)
        return p;
    int saved = errno;
    p = dlsym(RTLD_NEXT, cap_hook_names[h]);
    if (p == NULL || cap_is_ours(p))
        p = cap_find_loaded(cap_hook_names[h]);
    if (p != NULL) {
        void *expect = NULL;
        if (!atomic_compare_exchange_strong(&cap_real[h], &expect, p))
            p = expect;
    }
    errno = saved;
    return p;
}

int32_t gm__cap_rt_device(void)
{
    int (*fn)(int *) = (int (*)(int *))gm__cap_resolve(H_cudaGetDevice);
    int d = -1;
    if (fn == NULL || fn(&d) != 0)
        d = -1;
    return d;
}

int32_t gm__cap_drv_device(void)
{
    int (*fn)(int *) = (int (*)(int *))gm__cap_resolve(H_cuCtxGetDevice);
    int d = -1;
    if (fn == NULL || fn(&d) != 0)
        d = -1;
    return d;
}

/* ---- the wrappers ------------------------------------------------------------ */

GM_CAP_EXPORT cap_err_t cudaMalloc(void **p, size_t size);
GM_CAP_EXPORT cap_err_t cudaMalloc(void **p, size_t size)
{
    cap_malloc_fn real = CAP_REAL(H_cudaMalloc, cap_malloc_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    CAP_ENTER();
    cap_err_t rc = real(p, size);
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_CUDA_MALLOC, gm__cap_now(), rc == 0 && p ? CAP_U(*p) : 0, size, 0,
                     0, rc, gm__cap_rt_device(), 0, NULL);
    return rc;
}

GM_CAP_EXPORT cap_err_t cudaFree(void *p);
GM_CAP_EXPORT cap_err_t cudaFree(void *p)
{
    cap_free_fn real = CAP_REAL(H_cudaFree, cap_free_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    uint64_t ts = CAP_STAMP();
    CAP_ENTER();
    cap_err_t rc = real(p);
    if (CAP_LEAVE() && p != NULL)
        gm__cap_emit(SPOOL_OP_CUDA_FREE, ts, CAP_U(p), 0, 0, 0, rc, -1, 0, NULL);
    return rc;
}

#define CAP_MALLOC_ASYNC(fname, h)                                                          \
    GM_CAP_EXPORT cap_err_t fname(void **p, size_t size, void *stream);                    \
    GM_CAP_EXPORT cap_err_t fname(void **p, size_t size, void *stream)                     \
    {                                                                                        \
        cap_malloc_async_fn real = CAP_REAL(h, cap_malloc_async_fn);                        \
        if (real == NULL)                                                                    \
            return CAP_ERR_NOT_FOUND;                                                        \
        CAP_ENTER();                                                                         \
        cap_err_t rc = real(p, size, stream);                                                \
        if (CAP_LEAVE())                                                                     \
            gm__cap_emit(SPOOL_OP_CUDA_MALLOC_ASYNC, gm__cap_now(),                          \
                         rc == 0 && p ? CAP_U(*p) : 0, size, CAP_U(stream), 0, rc,           \
                         gm__cap_rt_device(), 0, NULL);                                      \
        return rc;                                                                           \
    }
CAP_MALLOC_ASYNC(cudaMallocAsync, H_cudaMallocAsync)
CAP_MALLOC_ASYNC(cudaMallocAsync_ptsz, H_cudaMallocAsync_ptsz)

#define CAP_FREE_ASYNC(fname, h)                                                             \
    GM_CAP_EXPORT cap_err_t fname(void *p, void *stream);                                   \
    GM_CAP_EXPORT cap_err_t fname(void *p, void *stream)                                    \
    {                                                                                        \
        cap_free_async_fn real = CAP_REAL(h, cap_free_async_fn);                            \
        if (real == NULL)                                                                    \
            return CAP_ERR_NOT_FOUND;                                                        \
        uint64_t ts = CAP_STAMP();                                                           \
        CAP_ENTER();                                                                         \
        cap_err_t rc = real(p, stream);                                                      \
        if (CAP_LEAVE() && p != NULL)                                                        \
            gm__cap_emit(SPOOL_OP_CUDA_FREE_ASYNC, ts, CAP_U(p), 0, CAP_U(stream), 0, rc, -1, \
                         0, NULL);                                                           \
        return rc;                                                                           \
    }
CAP_FREE_ASYNC(cudaFreeAsync, H_cudaFreeAsync)
CAP_FREE_ASYNC(cudaFreeAsync_ptsz, H_cudaFreeAsync_ptsz)

#define CAP_MALLOC_POOL(fname, h)                                                            \
    GM_CAP_EXPORT cap_err_t fname(void **p, size_t size, void *pool, void *stream);         \
    GM_CAP_EXPORT cap_err_t fname(void **p, size_t size, void *pool, void *stream)          \
    {                                                                                        \
        cap_malloc_pool_fn real = CAP_REAL(h, cap_malloc_pool_fn);                          \
        if (real == NULL)                                                                    \
            return CAP_ERR_NOT_FOUND;                                                        \
        CAP_ENTER();                                                                         \
        cap_err_t rc = real(p, size, pool, stream);                                          \
        if (CAP_LEAVE())                                                                     \
            gm__cap_emit(SPOOL_OP_CUDA_MALLOC_POOL, gm__cap_now(),                           \
                         rc == 0 && p ? CAP_U(*p) : 0, size, CAP_U(stream), CAP_U(pool), rc, \
                         gm__cap_rt_device(), 0, NULL);                                      \
        return rc;                                                                           \
    }
CAP_MALLOC_POOL(cudaMallocFromPoolAsync, H_cudaMallocFromPoolAsync)
CAP_MALLOC_POOL(cudaMallocFromPoolAsync_ptsz, H_cudaMallocFromPoolAsync_ptsz)

GM_CAP_EXPORT cap_err_t cudaMallocManaged(void **p, size_t size, unsigned flags);
GM_CAP_EXPORT cap_err_t cudaMallocManaged(void **p, size_t size, unsigned flags)
{
    cap_malloc_managed_fn real = CAP_REAL(H_cudaMallocManaged, cap_malloc_managed_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    CAP_ENTER();
    cap_err_t rc = real(p, size, flags);
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_CUDA_MALLOC_MANAGED, gm__cap_now(), rc == 0 && p ? CAP_U(*p) : 0,
                     size, 0, flags, rc, gm__cap_rt_device(), 0, NULL);
    return rc;
}

GM_CAP_EXPORT cap_err_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height);
GM_CAP_EXPORT cap_err_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    cap_malloc_pitch_fn real = CAP_REAL(H_cudaMallocPitch, cap_malloc_pitch_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    CAP_ENTER();
    cap_err_t rc = real(p, pitch, width, height);
    if (CAP_LEAVE()) {
        /* The allocation is pitch × height bytes; the request width × height. */
        uint64_t bytes = rc == 0 && pitch ? (uint64_t)*pitch * height : (uint64_t)width * height;
        gm__cap_emit(SPOOL_OP_CUDA_MALLOC_PITCH, gm__cap_now(), rc == 0 && p ? CAP_U(*p) : 0,
                     bytes, 0, (uint64_t)width * height, rc, gm__cap_rt_device(), 0, NULL);
    }
    return rc;
}

GM_CAP_EXPORT cap_err_t cuMemAlloc_v2(cap_dptr_t *p, size_t size);
GM_CAP_EXPORT cap_err_t cuMemAlloc_v2(cap_dptr_t *p, size_t size)
{
    cap_cualloc_fn real = CAP_REAL(H_cuMemAlloc_v2, cap_cualloc_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    CAP_ENTER();
    cap_err_t rc = real(p, size);
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_CU_MEM_ALLOC, gm__cap_now(), rc == 0 && p ? *p : 0, size, 0, 0, rc,
                     gm__cap_drv_device(), 0, NULL);
    return rc;
}

GM_CAP_EXPORT cap_err_t cuMemFree_v2(cap_dptr_t p);
GM_CAP_EXPORT cap_err_t cuMemFree_v2(cap_dptr_t p)
{
    cap_cufree_fn real = CAP_REAL(H_cuMemFree_v2, cap_cufree_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    uint64_t ts = CAP_STAMP();
    CAP_ENTER();
    cap_err_t rc = real(p);
    if (CAP_LEAVE() && p != 0)
        gm__cap_emit(SPOOL_OP_CU_MEM_FREE, ts, p, 0, 0, 0, rc, -1, 0, NULL);
    return rc;
}

#define CAP_CUALLOC_ASYNC(fname, h)                                                          \
    GM_CAP_EXPORT cap_err_t fname(cap_dptr_t *p, size_t size, void *stream);                \
    GM_CAP_EXPORT cap_err_t fname(cap_dptr_t *p, size_t size, void *stream)                 \
    {                                                                                        \
        cap_cualloc_async_fn real = CAP_REAL(h, cap_cualloc_async_fn);                      \
        if (real == NULL)                                                                    \
            return CAP_ERR_NOT_FOUND;                                                        \
        CAP_ENTER();                                                                         \
        cap_err_t rc = real(p, size, stream);                                                \
        if (CAP_LEAVE())                                                                     \
            gm__cap_emit(SPOOL_OP_CU_MEM_ALLOC_ASYNC, gm__cap_now(), rc == 0 && p ? *p : 0,  \
                         size, CAP_U(stream), 0, rc, gm__cap_drv_device(), 0, NULL);         \
        return rc;                                                                           \
    }
CAP_CUALLOC_ASYNC(cuMemAllocAsync, H_cuMemAllocAsync)
CAP_CUALLOC_ASYNC(cuMemAllocAsync_ptsz, H_cuMemAllocAsync_ptsz)

#define CAP_CUFREE_ASYNC(fname, h)                                                           \
    GM_CAP_EXPORT cap_err_t fname(cap_dptr_t p, void *stream);                              \
    GM_CAP_EXPORT cap_err_t fname(cap_dptr_t p, void *stream)                               \
    {                                                                                        \
        cap_cufree_async_fn real = CAP_REAL(h, cap_cufree_async_fn);                        \
        if (real == NULL)                                                                    \
            return CAP_ERR_NOT_FOUND;                                                        \
        uint64_t ts = CAP_STAMP();                                                           \
        CAP_ENTER();                                                                         \
        cap_err_t rc = real(p, stream);                                                      \
        if (CAP_LEAVE() && p != 0)                                                           \
            gm__cap_emit(SPOOL_OP_CU_MEM_FREE_ASYNC, ts, p, 0, CAP_U(stream), 0, rc, -1, 0,  \
                         NULL);                                                              \
        return rc;                                                                           \
    }
CAP_CUFREE_ASYNC(cuMemFreeAsync, H_cuMemFreeAsync)
CAP_CUFREE_ASYNC(cuMemFreeAsync_ptsz, H_cuMemFreeAsync_ptsz)

GM_CAP_EXPORT cap_err_t cuMemAllocManaged(cap_dptr_t *p, size_t size, unsigned flags);
GM_CAP_EXPORT cap_err_t cuMemAllocManaged(cap_dptr_t *p, size_t size, unsigned flags)
{
    cap_cualloc_managed_fn real = CAP_REAL(H_cuMemAllocManaged, cap_cualloc_managed_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    CAP_ENTER();
    cap_err_t rc = real(p, size, flags);
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_CU_MEM_ALLOC_MANAGED, gm__cap_now(), rc == 0 && p ? *p : 0, size,
                     0, flags, rc, gm__cap_drv_device(), 0, NULL);
    return rc;
}

GM_CAP_EXPORT cap_err_t cuMemCreate(cap_handle_t *h, size_t size, const void *prop,
                                    unsigned long long flags);
GM_CAP_EXPORT cap_err_t cuMemCreate(cap_handle_t *h, size_t size, const void *prop,
                                    unsigned long long flags)
{
    cap_create_fn real = CAP_REAL(H_cuMemCreate, cap_create_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    CAP_ENTER();
    cap_err_t rc = real(h, size, prop, flags);
    if (CAP_LEAVE()) {
        /* CUmemAllocationProp: type, requestedHandleTypes, then the
         * location {type, id}: the device is the int at byte 12. */
        int32_t dev = -1;
        if (prop != NULL)
            memcpy(&dev, (const char *)prop + 12, sizeof dev);
        gm__cap_emit(SPOOL_OP_CU_MEM_CREATE, gm__cap_now(), 0, size, 0, rc == 0 && h ? *h : 0,
                     rc, dev, 0, NULL);
    }
    return rc;
}

GM_CAP_EXPORT cap_err_t cuMemRelease(cap_handle_t h);
GM_CAP_EXPORT cap_err_t cuMemRelease(cap_handle_t h)
{
    cap_release_fn real = CAP_REAL(H_cuMemRelease, cap_release_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    uint64_t ts = CAP_STAMP();
    CAP_ENTER();
    cap_err_t rc = real(h);
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_CU_MEM_RELEASE, ts, 0, 0, 0, h, rc, -1, 0, NULL);
    return rc;
}

GM_CAP_EXPORT cap_err_t cuMemMap(cap_dptr_t p, size_t size, size_t offset, cap_handle_t h,
                                 unsigned long long flags);
GM_CAP_EXPORT cap_err_t cuMemMap(cap_dptr_t p, size_t size, size_t offset, cap_handle_t h,
                                 unsigned long long flags)
{
    cap_map_fn real = CAP_REAL(H_cuMemMap, cap_map_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    CAP_ENTER();
    cap_err_t rc = real(p, size, offset, h, flags);
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_CU_MEM_MAP, gm__cap_now(), p, size, offset, h, rc, -1, 0, NULL);
    return rc;
}

GM_CAP_EXPORT cap_err_t cuMemUnmap(cap_dptr_t p, size_t size);
GM_CAP_EXPORT cap_err_t cuMemUnmap(cap_dptr_t p, size_t size)
{
    cap_unmap_fn real = CAP_REAL(H_cuMemUnmap, cap_unmap_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    uint64_t ts = CAP_STAMP();
    CAP_ENTER();
    cap_err_t rc = real(p, size);
    if (CAP_LEAVE())
        gm__cap_emit(SPOOL_OP_CU_MEM_UNMAP, ts, p, size, 0, 0, rc, -1, 0, NULL);
    return rc;
}

/* ---- entry points handed out by name ----------------------------------------- */

GM_CAP_EXPORT cap_err_t cuGetProcAddress(const char *sym, void **pfn, int ver,
                                         unsigned long long flags);
GM_CAP_EXPORT cap_err_t cuGetProcAddress_v2(const char *sym, void **pfn, int ver,
                                            unsigned long long flags, int *status);

typedef struct cap_named {
    const char *name; /* as asked for (no version suffix) */
    int min_version;  /* below it the driver hands out an older ABI: left alone */
    int hook, hook_ptsz;
    void *wrapper, *wrapper_ptsz;
} cap_named_t;

#define CAP_PTSZ_FLAG 2ull /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */

static const cap_named_t cap_named[] = {
    {"cuMemAlloc", 3020, H_cuMemAlloc_v2, -1, (void *)cuMemAlloc_v2, NULL},
    {"cuMemFree", 3020, H_cuMemFree_v2, -1, (void *)cuMemFree_v2, NULL},
    {"cuMemAllocAsync", 11020, H_cuMemAllocAsync, H_cuMemAllocAsync_ptsz,
     (void *)cuMemAllocAsync, (void *)cuMemAllocAsync_ptsz},
    {"cuMemFreeAsync", 11020, H_cuMemFreeAsync, H_cuMemFreeAsync_ptsz, (void *)cuMemFreeAsync,
     (void *)cuMemFreeAsync_ptsz},
    {"cuMemAllocManaged", 6000, H_cuMemAllocManaged, -1, (void *)cuMemAllocManaged, NULL},
    {"cuMemCreate", 10020, H_cuMemCreate, -1, (void *)cuMemCreate, NULL},
    {"cuMemRelease", 10020, H_cuMemRelease, -1, (void *)cuMemRelease, NULL},
    {"cuMemMap", 10020, H_cuMemMap, -1, (void *)cuMemMap, NULL},
    {"cuMemUnmap", 10020, H_cuMemUnmap, -1, (void *)cuMemUnmap, NULL},
    {"cuGetProcAddress", 12000, H_cuGetProcAddress_v2, -1, (void *)cuGetProcAddress_v2, NULL},
};

/* Adopt `real` as the function behind hook h if none is known yet; 1 when
 * h forwards to real. */
static int cap_adopt(int h, void *real)
{
    void *expect = NULL;
    if (atomic_compare_exchange_strong(&cap_real[h], &expect, real))
        return 1;
    return expect == real;
}

/* The pointer to hand out for driver entry point `sym` whose real
 * function is `real`: our wrapper when we record that name and it
 * forwards to that very function, else real unchanged. */
static void *cap_wrap_proc(const char *sym, void *real, int ver, unsigned long long flags)
{
    if (sym == NULL || real == NULL || cap_is_ours(real))
        return real; /* already ours (a runtime asking through our symbols) */
    if (strcmp(sym, "cuGetProcAddress") == 0 && ver < 12000)
        return cap_adopt(H_cuGetProcAddress, real) ? (void *)cuGetProcAddress : real;
    for (size_t i = 0; i < sizeof cap_named / sizeof cap_named[0]; i++) {
        const cap_named_t *n = &cap_named[i];
        if (strcmp(sym, n->name) != 0)
            continue;
        if (ver < n->min_version)
            return real;
        int first = (flags & CAP_PTSZ_FLAG) && n->hook_ptsz >= 0;
        int hooks[2] = {first ? n->hook_ptsz : n->hook, first ? n->hook : n->hook_ptsz};
        void *wraps[2] = {first ? n->wrapper_ptsz : n->wrapper,
                          first ? n->wrapper : n->wrapper_ptsz};
        for (int k = 0; k < 2; k++)
            if (hooks[k] >= 0 && cap_adopt(hooks[k], real))
                return wraps[k];
        return real;
    }
    return real;
}

GM_CAP_EXPORT cap_err_t cuGetProcAddress(const char *sym, void **pfn, int ver,
                                         unsigned long long flags)
{
    cap_gpa1_fn real = CAP_REAL(H_cuGetProcAddress, cap_gpa1_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    cap_err_t rc = real(sym, pfn, ver, flags);
    if (rc == 0 && pfn != NULL)
        *pfn = cap_wrap_proc(sym, *pfn, ver, flags);
    return rc;
}

GM_CAP_EXPORT cap_err_t cuGetProcAddress_v2(const char *sym, void **pfn, int ver,
                                            unsigned long long flags, int *status)
{
    cap_gpa2_fn real = CAP_REAL(H_cuGetProcAddress_v2, cap_gpa2_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    cap_err_t rc = real(sym, pfn, ver, flags, status);
    if (rc == 0 && pfn != NULL)
        *pfn = cap_wrap_proc(sym, *pfn, ver, flags);
    return rc;
}

GM_CAP_EXPORT cap_err_t cudaGetDriverEntryPoint(const char *sym, void **pfn,
                                                unsigned long long flags, int *status);
GM_CAP_EXPORT cap_err_t cudaGetDriverEntryPoint(const char *sym, void **pfn,
                                                unsigned long long flags, int *status)
{
    cap_dep_fn real = CAP_REAL(H_cudaGetDriverEntryPoint, cap_dep_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    cap_err_t rc = real(sym, pfn, flags, status);
    if (rc == 0 && pfn != NULL)
        *pfn = cap_wrap_proc(sym, *pfn, 1 << 30, flags);
    return rc;
}

GM_CAP_EXPORT cap_err_t cudaGetDriverEntryPointByVersion(const char *sym, void **pfn,
                                                         unsigned ver, unsigned long long flags,
                                                         int *status);
GM_CAP_EXPORT cap_err_t cudaGetDriverEntryPointByVersion(const char *sym, void **pfn,
                                                         unsigned ver, unsigned long long flags,
                                                         int *status)
{
    cap_depv_fn real = CAP_REAL(H_cudaGetDriverEntryPointByVersion, cap_depv_fn);
    if (real == NULL)
        return CAP_ERR_NOT_FOUND;
    cap_err_t rc = real(sym, pfn, ver, flags, status);
    if (rc == 0 && pfn != NULL)
        *pfn = cap_wrap_proc(sym, *pfn, (int)(ver > (1u << 30) ? 1u << 30 : ver), flags);
    return rc;
}
