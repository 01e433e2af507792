/*
 * tests/capture/fake_cudart.c — a stand-in for the CUDA runtime (libcudart)
 * and NVTX v2 (libnvToolsExt) over host memory, exporting the entry points
 * the capture library interposes with their real signatures.  Like the
 * real runtime, its allocation calls go through the driver (the fake one),
 * which exercises the interposer's rule that a call is recorded once, at
 * the outermost level.  Only for the capture tests.
 */
#include <stdint.h>
#include <stdlib.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

typedef unsigned long long dptr_t;

void gmfake_set_device(int d);
int gmfake_get_device(void);
int cuMemAlloc_v2(dptr_t *p, size_t size);
int cuMemFree_v2(dptr_t p);
int cuGetProcAddress_v2(const char *sym, void **pfn, int ver, unsigned long long flags,
                        int *status);

FAKE_EXPORT int cudaSetDevice(int d);
FAKE_EXPORT int cudaGetDevice(int *d);
FAKE_EXPORT int cudaMalloc(void **p, size_t size);
FAKE_EXPORT int cudaFree(void *p);
FAKE_EXPORT int cudaMallocAsync(void **p, size_t size, void *stream);
FAKE_EXPORT int cudaFreeAsync(void *p, void *stream);
FAKE_EXPORT int cudaMallocFromPoolAsync(void **p, size_t size, void *pool, void *stream);
FAKE_EXPORT int cudaMallocManaged(void **p, size_t size, unsigned flags);
FAKE_EXPORT int cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height);
FAKE_EXPORT int cudaGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long flags,
                                        int *status);
FAKE_EXPORT int nvtxRangePushA(const char *m);
FAKE_EXPORT int nvtxRangePop(void);
FAKE_EXPORT uint64_t nvtxRangeStartA(const char *m);
FAKE_EXPORT void nvtxRangeEnd(uint64_t id);

int cudaSetDevice(int d)
{
    gmfake_set_device(d);
    return 0;
}

int cudaGetDevice(int *d)
{
    *d = gmfake_get_device();
    return 0;
}

int cudaMalloc(void **p, size_t size)
{
    dptr_t d = 0;
    int rc = cuMemAlloc_v2(&d, size);
    if (rc == 0)
        *p = (void *)(uintptr_t)d;
    return rc;
}

int cudaFree(void *p) { return cuMemFree_v2((dptr_t)(uintptr_t)p); }

int cudaMallocAsync(void **p, size_t size, void *stream)
{
    (void)stream;
    return cudaMalloc(p, size);
}

int cudaFreeAsync(void *p, void *stream)
{
    (void)stream;
    return cudaFree(p);
}

int cudaMallocFromPoolAsync(void **p, size_t size, void *pool, void *stream)
{
    (void)pool;
    return cudaMallocAsync(p, size, stream);
}

int cudaMallocManaged(void **p, size_t size, unsigned flags)
{
    (void)flags;
    return cudaMalloc(p, size);
}

int cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    *pitch = (width + 511) / 512 * 512;
    return cudaMalloc(p, *pitch * height);
}

int cudaGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long flags, int *status)
{
    return cuGetProcAddress_v2(sym, pfn, 13000, flags, status);
}

static __thread int fake_depth;
static uint64_t fake_range;

int nvtxRangePushA(const char *m)
{
    (void)m;
    return fake_depth++;
}

int nvtxRangePop(void) { return fake_depth > 0 ? --fake_depth : -1; }

uint64_t nvtxRangeStartA(const char *m)
{
    (void)m;
    return __atomic_add_fetch(&fake_range, 1, __ATOMIC_RELAXED);
}

void nvtxRangeEnd(uint64_t id) { (void)id; }
