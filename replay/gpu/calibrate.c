/*
 * replay/gpu/calibrate.c — `gmsim calibrate`'s measurements on a GPU
 * (gmsim/gpu.h: gm_gpu_calibrate): cudaMalloc/cudaFree latency by size,
 * and what the device charges for memory (gm_device_granularity_t).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmsim/gpu.h"
#include "replay/gpu/runtime.h"

/* ---- calibration ------------------------------------------------------------- */

/* In-use bytes on the device (0 when it cannot tell). */
static uint64_t gpu_rt_used(gpu_rt_t *rt)
{
    size_t free_b = 0, total = 0;
    if (rt->MemGetInfo(&free_b, &total) != cudaSuccess)
        return 0;
    return (uint64_t)(total - free_b);
}

/* The smallest positive distance between two pointers of p[0..n). */
static uint64_t gpu_min_spacing(void *const *p, size_t n)
{
    uint64_t best = 0;
    for (size_t i = 1; i < n; i++) {
        uint64_t a = (uint64_t)(uintptr_t)p[i - 1], b = (uint64_t)(uintptr_t)p[i];
        uint64_t d = a > b ? a - b : b - a;
        if (d > 0 && (best == 0 || d < best))
            best = d;
    }
    return best;
}

/* A power of two, or 0. */
static uint64_t gpu_pow2_or_0(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0 && v <= GM_DEVICE_GRANULARITY_MAX ? v : 0;
}

#define GPU_GRAN_SMALL 8192 /* 1-byte cudaMallocs at most: 4 MiB of 512-byte slots */

/* cudaMalloc: the spacing of 1-byte requests (align), the step in-use
 * memory grows by as they accumulate (chunk: the driver's packing), and
 * the rounding of a request just above the chunk (large). */
static cudaError_t gpu_gran_malloc(gpu_rt_t *rt, gm_device_granularity_t *g, void **p)
{
    cudaError_t e = cudaSuccess;
    size_t n = 0;
    uint64_t step = 0, steps = 0, before = gpu_rt_used(rt), prev = before;
    int every = 1; /* every request grew the in-use memory */
    while (n < GPU_GRAN_SMALL && (n < 64 || steps < 2)) {
        if ((e = rt->Malloc(&p[n], 1)) != cudaSuccess)
            break;
        n++;
        uint64_t now = gpu_rt_used(rt);
        if (now > prev) {
            steps++;
            if (step == 0 || now - prev < step)
                step = now - prev;
        } else {
            every = 0;
        }
        prev = now;
    }
    uint64_t spacing = gpu_min_spacing(p, n);
    for (size_t i = 0; i < n; i++)
        rt->Free(p[i]);
    if (e != cudaSuccess)
        return e;
    /* Every request a step of its own: no packing, the step is the
     * rounding (pointers may lie further apart). */
    g->malloc_align = gpu_pow2_or_0(every && step ? step : spacing);
    g->malloc_chunk = gpu_pow2_or_0(step > g->malloc_align ? step : g->malloc_align);
    uint64_t base = g->malloc_chunk > (UINT64_C(1) << 20) ? g->malloc_chunk : UINT64_C(1) << 20;
    uint64_t large = 0;
    for (int i = 0; i < 4; i++) {
        void *q = NULL;
        uint64_t u0 = gpu_rt_used(rt);
        if ((e = rt->Malloc(&q, (size_t)base + 1)) != cudaSuccess)
            return e;
        uint64_t d = gpu_rt_used(rt) - u0;
        rt->Free(q);
        if (d > base && (large == 0 || d - base < large))
            large = d - base;
    }
    g->malloc_large = gpu_pow2_or_0(large);
    return cudaSuccess;
}

/* A fresh pool on stream st with release threshold thr. */
static cudaError_t gpu_gran_pool(gpu_rt_t *rt, int device, uint64_t thr, cudaMemPool_t *pool)
{
    struct cudaMemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = cudaMemAllocationTypePinned;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = device;
    cudaError_t e = rt->MemPoolCreate(pool, &pp);
    if (e == cudaSuccess && (e = rt->MemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold,
                                                         &thr)) != cudaSuccess)
        rt->MemPoolDestroy(*pool);
    return e;
}

static uint64_t gpu_pool_reserved(gpu_rt_t *rt, cudaMemPool_t pool)
{
    uint64_t v = 0;
    if (rt->MemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &v) != cudaSuccess)
        return 0;
    return v;
}

/* A pool: the spacing of 1-byte requests (align), what a fresh pool
 * reserves for them (chunk), for a request just above the chunk (large),
 * and what it keeps at a synchronization under release threshold 0 and
 * under the maximum. */
static cudaError_t gpu_gran_pools(gpu_rt_t *rt, int device, gm_device_granularity_t *g, void **p)
{
    enum { K = 16 };
    cudaStream_t st = NULL;
    cudaMemPool_t pool;
    cudaError_t e = rt->StreamCreateWithFlags(&st, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return e;
    if ((e = gpu_gran_pool(rt, device, 0, &pool)) != cudaSuccess)
        goto out;
    size_t n = 0;
    while (n < K && (e = rt->MallocFromPoolAsync(&p[n], 1, pool, st)) == cudaSuccess)
        n++;
    if (e == cudaSuccess)
        e = rt->StreamSynchronize(st);
    uint64_t chunk = gpu_pool_reserved(rt, pool);
    g->pool_align = gpu_pow2_or_0(gpu_min_spacing(p, n));
    g->pool_chunk = gpu_pow2_or_0(chunk);
    for (size_t i = 0; i < n; i++)
        rt->FreeAsync(p[i], st);
    if (e == cudaSuccess)
        e = rt->DeviceSynchronize();
    g->pool_releases_at_sync = e == cudaSuccess ? gpu_pool_reserved(rt, pool) == 0 : -1;
    rt->MemPoolDestroy(pool);
    if (e != cudaSuccess || chunk == 0)
        goto out;
    /* a request just above the chunk, in a fresh pool */
    if ((e = gpu_gran_pool(rt, device, 0, &pool)) != cudaSuccess)
        goto out;
    if ((e = rt->MallocFromPoolAsync(&p[0], (size_t)chunk + 1, pool, st)) == cudaSuccess) {
        if ((e = rt->StreamSynchronize(st)) == cudaSuccess) {
            uint64_t r = gpu_pool_reserved(rt, pool);
            g->pool_large = r > chunk ? gpu_pow2_or_0(r - chunk) : 0;
        }
        rt->FreeAsync(p[0], st);
        rt->DeviceSynchronize();
    }
    rt->MemPoolDestroy(pool);
    if (e != cudaSuccess)
        goto out;
    /* the maximum threshold keeps what was freed */
    if ((e = gpu_gran_pool(rt, device, UINT64_MAX, &pool)) != cudaSuccess)
        goto out;
    if ((e = rt->MallocFromPoolAsync(&p[0], 1, pool, st)) == cudaSuccess) {
        rt->FreeAsync(p[0], st);
        if ((e = rt->DeviceSynchronize()) == cudaSuccess)
            g->pool_keeps_under_threshold = gpu_pool_reserved(rt, pool) >= chunk;
    }
    rt->MemPoolTrimTo(pool, 0);
    rt->MemPoolDestroy(pool);
out:
    rt->StreamDestroy(st);
    return e;
}

/* cuMemGetAllocationGranularity, minimum and recommended (0 when the
 * driver does not hand the call out). */
static void gpu_gran_vmm(gpu_rt_t *rt, int device, gm_device_granularity_t *g)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (rt->GetDriverEntryPointByVersion == NULL ||
        rt->GetDriverEntryPointByVersion("cuMemGetAllocationGranularity", &fn, 12000,
                                         cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || fn == NULL)
        return;
    CUresult (*gran)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
    *(void **)(&gran) = fn;
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    size_t v = 0;
    if (gran(&v, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS)
        g->vmm_minimum = gpu_pow2_or_0(v);
    v = 0;
    if (gran(&v, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) == CUDA_SUCCESS)
        g->vmm_recommended = gpu_pow2_or_0(v);
}

/* Measure what the device charges (gm_device_granularity_t); GM_EIO
 * naming the CUDA error. */
static int gpu_granularity(gpu_rt_t *rt, int device, gm_device_granularity_t *g,
                           gm_error_t *err)
{
    memset(g, 0, sizeof *g);
    g->pool_releases_at_sync = g->pool_keeps_under_threshold = -1;
    void **p = calloc(GPU_GRAN_SMALL, sizeof *p);
    if (p == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    cudaError_t e = gpu_gran_malloc(rt, g, p);
    const char *what = "cudaMalloc";
    if (e == cudaSuccess) {
        what = "the memory pool";
        e = gpu_gran_pools(rt, device, g, p);
    }
    free(p);
    if (e != cudaSuccess)
        return gm_error_set(err, GM_EIO, "CUDA error measuring the granularity of %s: %s", what,
                            rt->GetErrorString(e));
    gpu_gran_vmm(rt, device, g);
    return 0;
}

int gm_gpu_calibrate(const gm_gpu_options_t *opt, unsigned reps, gm_cost_profile_t **out,
                     gm_error_t *err)
{
    gpu_rt_t rt;
    int rc = gm__gpu_rt_open(&rt, opt, err);
    if (rc)
        return rc;
    if (reps == 0)
        reps = 1;
    size_t free_b = 0, total = 0;
    cudaError_t e = rt.MemGetInfo(&free_b, &total);
    gm_cost_profile_t *p = calloc(1, sizeof *p);
    enum { MAX_POINTS = 24 };
    double *tm = malloc(reps * sizeof *tm), *tf = malloc(reps * sizeof *tf);
    if (p != NULL) {
        p->sizes = calloc(MAX_POINTS, sizeof *p->sizes);
        p->malloc_ns = calloc(MAX_POINTS, sizeof *p->malloc_ns);
        p->free_ns = calloc(MAX_POINTS, sizeof *p->free_ns);
    }
    if (p == NULL || p->sizes == NULL || p->malloc_ns == NULL || p->free_ns == NULL ||
        tm == NULL || tf == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    if (e != cudaSuccess) {
        rc = gm_error_set(err, GM_EIO, "cudaMemGetInfo: %s", rt.GetErrorString(e));
        goto out;
    }
    for (uint64_t size = 512; size <= free_b / 4 && p->n < MAX_POINTS; size *= 4) {
        for (unsigned k = 0; k < reps; k++) {
            void *ptr = NULL;
            double t0 = gm__gpu_now_ns();
            e = rt.Malloc(&ptr, (size_t)size);
            double t1 = gm__gpu_now_ns();
            if (e == cudaSuccess) {
                e = rt.Free(ptr);
                tf[k] = gm__gpu_now_ns() - t1;
            }
            tm[k] = t1 - t0;
            if (e != cudaSuccess) {
                char sz[32];
                gm_format_size(size, sz, sizeof sz);
                rc = gm_error_set(err, GM_EIO, "CUDA error calibrating at %s: %s", sz,
                                  rt.GetErrorString(e));
                goto out;
            }
        }
        qsort(tm, reps, sizeof *tm, gm__gpu_cmp_double);
        qsort(tf, reps, sizeof *tf, gm__gpu_cmp_double);
        p->sizes[p->n] = size;
        p->malloc_ns[p->n] = tm[reps / 2];
        p->free_ns[p->n] = tf[reps / 2];
        p->n++;
    }
    if (p->n == 0) {
        rc = gm_error_set(err, GM_EIO, "gpu:%d has too little free memory to calibrate",
                          opt->device);
        goto out;
    }
    if ((rc = gpu_granularity(&rt, opt->device, &p->gran, err)) != 0)
        goto out;
    p->has_granularity = 1;
    char name[256], source[512];
    gm__gpu_device_name(&rt, opt->device, name, sizeof name);
    int driver = 0;
    rt.DriverGetVersion(&driver);
    time_t now = time(NULL);
    struct tm tmv;
    char date[32] = "";
    if (gmtime_r(&now, &tmv) != NULL)
        strftime(date, sizeof date, "%Y-%m-%d", &tmv);
    snprintf(source, sizeof source,
             "measured by gmsim calibrate on %s (gpu:%d), driver %d.%d, %s, median of %u", name,
             opt->device, driver / 1000, (driver % 1000) / 10, date, reps);
    p->source = strdup(source);
out:
    free(tm);
    free(tf);
    gm__gpu_rt_close(&rt);
    if (rc) {
        gm_cost_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}
