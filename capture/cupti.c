/*
 * capture/cupti.c — CUPTI mode of libgmsim_capture.so (built only
 * where the CUDA toolkit is found).
 *
 * Loaded through CUDA_INJECTION64_PATH, the driver calls
 * InitializeInjection() at initialization.  We load libcupti (dlopen, so
 * that the library itself never needs it), subscribe one callback and
 * enable it for the runtime and driver allocation calls that the
 * interposer records.  At the API exit of each call the callback reads the
 * call's parameters (the generated *_params structures) and result and
 * records it as the interposer would; frees are stamped at entry (the
 * time is kept in the callback's correlation slot).  Driver calls made by
 * the runtime inside a recorded runtime call are not recorded twice (the
 * same per-thread nesting count as the interposer).
 *
 * `gmsim capture --mode cupti` also preloads the library: once the
 * subscription succeeds the interposed entry points only forward; if it
 * fails — CUPTI allows one subscriber per process, and nsys or ncu may be
 * that one — we say so and the interposed entry points keep recording.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "capture/capture.h"

typedef CUptiResult (*cupti_subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*cupti_enable_fn)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                       CUpti_CallbackId);

#define U(p) ((uint64_t)(uintptr_t)(p))

static void cupti_runtime(CUpti_CallbackId cbid, const CUpti_CallbackData *d, uint64_t t0)
{
    int rc = d->functionReturnValue ? *(const int *)d->functionReturnValue : 0;
    uint64_t now = gm__cap_now();
    uint8_t fl = SPOOL_F_CUPTI;
    switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: {
        const cudaMalloc_v3020_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CUDA_MALLOC, now, rc == 0 && p->devPtr ? U(*p->devPtr) : 0,
                     p->size, 0, 0, rc, gm__cap_rt_device(), fl, NULL);
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020: {
        const cudaFree_v3020_params *p = d->functionParams;
        if (p->devPtr != NULL)
            gm__cap_emit(SPOOL_OP_CUDA_FREE, t0, U(p->devPtr), 0, 0, 0, rc, -1, fl, NULL);
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020: {
        const cudaMallocAsync_v11020_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CUDA_MALLOC_ASYNC, now, rc == 0 && p->devPtr ? U(*p->devPtr) : 0,
                     p->size, U(p->hStream), 0, rc, gm__cap_rt_device(), fl, NULL);
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020: {
        const cudaFreeAsync_v11020_params *p = d->functionParams;
        if (p->devPtr != NULL)
            gm__cap_emit(SPOOL_OP_CUDA_FREE_ASYNC, t0, U(p->devPtr), 0, U(p->hStream), 0, rc,
                         -1, fl, NULL);
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020: {
        const cudaMallocFromPoolAsync_v11020_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CUDA_MALLOC_POOL, now, rc == 0 && p->ptr ? U(*p->ptr) : 0,
                     p->size, U(p->stream), U(p->memPool), rc, gm__cap_rt_device(), fl, NULL);
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000: {
        const cudaMallocManaged_v6000_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CUDA_MALLOC_MANAGED, now, rc == 0 && p->devPtr ? U(*p->devPtr) : 0,
                     p->size, 0, p->flags, rc, gm__cap_rt_device(), fl, NULL);
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020: {
        const cudaMallocPitch_v3020_params *p = d->functionParams;
        uint64_t bytes = rc == 0 && p->pitch ? (uint64_t)*p->pitch * p->height
                                             : (uint64_t)p->width * p->height;
        gm__cap_emit(SPOOL_OP_CUDA_MALLOC_PITCH, now, rc == 0 && p->devPtr ? U(*p->devPtr) : 0,
                     bytes, 0, (uint64_t)p->width * p->height, rc, gm__cap_rt_device(), fl,
                     NULL);
        break;
    }
    default: break;
    }
}

static void cupti_driver(CUpti_CallbackId cbid, const CUpti_CallbackData *d, uint64_t t0)
{
    int rc = d->functionReturnValue ? *(const int *)d->functionReturnValue : 0;
    uint64_t now = gm__cap_now();
    uint8_t fl = SPOOL_F_CUPTI;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
        const cuMemAlloc_v2_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CU_MEM_ALLOC, now, rc == 0 && p->dptr ? *p->dptr : 0, p->bytesize,
                     0, 0, rc, gm__cap_drv_device(), fl, NULL);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2: {
        const cuMemFree_v2_params *p = d->functionParams;
        if (p->dptr != 0)
            gm__cap_emit(SPOOL_OP_CU_MEM_FREE, t0, p->dptr, 0, 0, 0, rc, -1, fl, NULL);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz: {
        const cuMemAllocAsync_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CU_MEM_ALLOC_ASYNC, now, rc == 0 && p->dptr ? *p->dptr : 0,
                     p->bytesize, U(p->hStream), 0, rc, gm__cap_drv_device(), fl, NULL);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz: {
        const cuMemFreeAsync_params *p = d->functionParams;
        if (p->dptr != 0)
            gm__cap_emit(SPOOL_OP_CU_MEM_FREE_ASYNC, t0, p->dptr, 0, U(p->hStream), 0, rc, -1,
                         fl, NULL);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged: {
        const cuMemAllocManaged_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CU_MEM_ALLOC_MANAGED, now, rc == 0 && p->dptr ? *p->dptr : 0,
                     p->bytesize, 0, p->flags, rc, gm__cap_drv_device(), fl, NULL);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate: {
        const cuMemCreate_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CU_MEM_CREATE, now, 0, p->size, 0,
                     rc == 0 && p->handle ? *p->handle : 0, rc,
                     p->prop ? p->prop->location.id : -1, fl, NULL);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease: {
        const cuMemRelease_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CU_MEM_RELEASE, t0, 0, 0, 0, p->handle, rc, -1, fl, NULL);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
        const cuMemMap_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CU_MEM_MAP, now, p->ptr, p->size, p->offset, p->handle, rc, -1, fl,
                     NULL);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: {
        const cuMemUnmap_params *p = d->functionParams;
        gm__cap_emit(SPOOL_OP_CU_MEM_UNMAP, t0, p->ptr, p->size, 0, 0, rc, -1, fl, NULL);
        break;
    }
    default: break;
    }
}

static void CUPTIAPI cupti_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                    const void *data)
{
    (void)ud;
    const CUpti_CallbackData *d = data;
    if (gm__cap_tls.torch > 0)
        return; /* the pluggable allocator records its own calls */
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (d->callbackSite == CUPTI_API_ENTER) {
            gm__cap_tls.cupti_inside++;
            *d->correlationData = gm__cap_now();
            return;
        }
        if (--gm__cap_tls.cupti_inside == 0)
            cupti_runtime(cbid, d, *d->correlationData);
    } else if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
        if (gm__cap_tls.cupti_inside > 0)
            return; /* inside a recorded runtime call */
        if (d->callbackSite == CUPTI_API_ENTER) {
            *d->correlationData = gm__cap_now();
            return;
        }
        cupti_driver(cbid, d, *d->correlationData);
    }
}

/* Where libcupti is looked for, one name at a time, and what was tried. */
typedef struct cupti_search {
    char tried[400]; /* names tried, ", "-separated, "..." once cut */
    void *lib;
} cupti_search_t;

static void cupti_try(cupti_search_t *cs, const char *path, int flags)
{
    if (cs->lib != NULL || path == NULL || path[0] == '\0')
        return;
    cs->lib = dlopen(path, flags);
    if (cs->lib != NULL || (flags & RTLD_NOLOAD))
        return;
    size_t used = strlen(cs->tried), n = strlen(path);
    if (used + 2 + n + 4 < sizeof cs->tried) {
        if (used) {
            memcpy(cs->tried + used, ", ", 2);
            used += 2;
        }
        memcpy(cs->tried + used, path, n + 1);
    } else if (used + 4 < sizeof cs->tried && (used < 3 || strcmp(cs->tried + used - 3, "...") != 0)) {
        memcpy(cs->tried + used, "...", 4);
    }
}

static const char *const cupti_names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};

/* The folder of the CUDA runtime this process loaded (a libcudart.so*, or
 * whichever library defines cudaMalloc after this one), into dir. */
static int cupti_runtime_dir_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
    if (base != NULL && strncmp(base + 1, "libcudart.so", 12) == 0) {
        snprintf(data, 4096, "%.*s", (int)(base - name), name);
        return 1;
    }
    return 0;
}

static int cupti_runtime_dir(char dir[4096])
{
    dir[0] = '\0';
    if (dl_iterate_phdr(cupti_runtime_dir_cb, dir) == 1 && dir[0])
        return 0;
    Dl_info info;
    void *fn = dlsym(RTLD_NEXT, "cudaMalloc");
    if (fn != NULL && dladdr(fn, &info) != 0 && info.dli_fname != NULL) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash != NULL) {
            snprintf(dir, 4096, "%.*s", (int)(slash - info.dli_fname), info.dli_fname);
            return 0;
        }
    }
    return -1;
}

/*
 * libcupti, in this order: GMSIM_CUPTI_LIB alone when set; one the process
 * already loaded (PyTorch's: never a second copy beside it); beside the
 * runtime the process loaded (CUDA 13 wheels put both in nvidia/cu13/lib;
 * CUDA 12 wheels have nvidia/cuda_runtime/lib and nvidia/cuda_cupti/lib; a
 * toolkit has lib64 and extras/CUPTI/lib64); the toolkit gmsim was built
 * with; the library path.  NULL when none loads, cs->tried saying what was
 * tried.
 */
static void *cupti_open(cupti_search_t *cs)
{
    memset(cs, 0, sizeof *cs);
    const char *env = getenv("GMSIM_CUPTI_LIB");
    if (env != NULL && env[0] != '\0') {
        cupti_try(cs, env, RTLD_NOW | RTLD_LOCAL);
        return cs->lib;
    }
    size_t nn = sizeof cupti_names / sizeof cupti_names[0];
    for (size_t i = 0; i < nn; i++)
        cupti_try(cs, cupti_names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    char dir[4096], path[4200];
    if (cs->lib == NULL && cupti_runtime_dir(dir) == 0) {
        static const char *const subs[] = {"", "/../../cuda_cupti/lib", "/../extras/CUPTI/lib64"};
        for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++)
            for (size_t i = 0; i < nn; i++) {
                snprintf(path, sizeof path, "%s%s/%s", dir, subs[k], cupti_names[i]);
                cupti_try(cs, path, RTLD_NOW | RTLD_LOCAL);
            }
    }
#ifdef GM_CUPTI_PATH
    cupti_try(cs, GM_CUPTI_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
    for (size_t i = 0; i < nn; i++)
        cupti_try(cs, cupti_names[i], RTLD_NOW | RTLD_LOCAL);
    return cs->lib;
}

GM_CAP_EXPORT int InitializeInjection(void);
GM_CAP_EXPORT int InitializeInjection(void)
{
    static int done;
    if (done++ || !gm__cap_wanted())
        return 1;
    static cupti_search_t cs; /* static: no allocation on this path */
    void *lib = cupti_open(&cs);
    cupti_subscribe_fn subscribe = lib ? (cupti_subscribe_fn)dlsym(lib, "cuptiSubscribe") : NULL;
    cupti_enable_fn enable = lib ? (cupti_enable_fn)dlsym(lib, "cuptiEnableCallback") : NULL;
    atomic_store(&gm__cap_cupti_fallback, 1); /* until the subscription works */
    if (subscribe == NULL || enable == NULL) {
        static char msg[480];
        snprintf(msg, sizeof msg,
                 "cannot load libcupti (tried %s; set GMSIM_CUPTI_LIB): recording by interposition",
                 lib ? "a library without cuptiSubscribe" : cs.tried);
        gm__cap_say(msg);
        return 1;
    }
    CUpti_SubscriberHandle sub;
    CUptiResult r = subscribe(&sub, (CUpti_CallbackFunc)cupti_callback, NULL);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        gm__cap_say("another cupti subscriber is active (nsys, ncu?): recording by interposition");
        return 1;
    }
    if (r != CUPTI_SUCCESS) {
        char msg[96];
        snprintf(msg, sizeof msg, "cuptiSubscribe failed (%d): recording by interposition",
                 (int)r);
        gm__cap_say(msg);
        return 1;
    }
    static const CUpti_CallbackId rt[] = {
        CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
        CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
        CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
    };
    static const CUpti_CallbackId drv[] = {
        CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,      CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,     CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,  CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
        CUPTI_DRIVER_TRACE_CBID_cuMemRelease,       CUPTI_DRIVER_TRACE_CBID_cuMemMap,
        CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
        ok &= enable(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, rt[i]) == CUPTI_SUCCESS;
    for (size_t i = 0; i < sizeof drv / sizeof drv[0]; i++)
        ok &= enable(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, drv[i]) == CUPTI_SUCCESS;
    if (!ok) {
        gm__cap_say("cannot enable the cupti callbacks: recording by interposition");
        return 1;
    }
    atomic_store(&gm__cap_cupti_fallback, 0);
    atomic_store(&gm__cap_hooks_on, 0);
    return 1;
}
