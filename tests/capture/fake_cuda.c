/*
 * tests/capture/fake_cuda.c — a stand-in for the CUDA driver (libcuda) over
 * host memory, exporting the driver entry points the capture library
 * interposes, with their real signatures (opaque types), plus
 * cuGetProcAddress[_v2] handing out its own functions by name.  Device
 * "memory" is malloc'd; the current device is a thread-local number set
 * by the fake runtime (gmfake_set_device).  Only for the capture tests.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_OOM 2
#define FAKE_LIMIT (UINT64_C(1) << 40)

typedef unsigned long long dptr_t;

static __thread int fake_device;

FAKE_EXPORT void gmfake_set_device(int d);
FAKE_EXPORT int gmfake_get_device(void);
FAKE_EXPORT int cuCtxGetDevice(int *d);
FAKE_EXPORT int cuMemAlloc_v2(dptr_t *p, size_t size);
FAKE_EXPORT int cuMemFree_v2(dptr_t p);
FAKE_EXPORT int cuMemAllocAsync(dptr_t *p, size_t size, void *stream);
FAKE_EXPORT int cuMemAllocAsync_ptsz(dptr_t *p, size_t size, void *stream);
FAKE_EXPORT int cuMemFreeAsync(dptr_t p, void *stream);
FAKE_EXPORT int cuMemFreeAsync_ptsz(dptr_t p, void *stream);
FAKE_EXPORT int cuMemAllocManaged(dptr_t *p, size_t size, unsigned flags);
FAKE_EXPORT int cuMemCreate(unsigned long long *h, size_t size, const void *prop,
                            unsigned long long flags);
FAKE_EXPORT int cuMemRelease(unsigned long long h);
FAKE_EXPORT int cuMemMap(dptr_t p, size_t size, size_t off, unsigned long long h,
                         unsigned long long flags);
FAKE_EXPORT int cuMemUnmap(dptr_t p, size_t size);
FAKE_EXPORT int cuGetProcAddress(const char *sym, void **pfn, int ver, unsigned long long flags);
FAKE_EXPORT int cuGetProcAddress_v2(const char *sym, void **pfn, int ver,
                                    unsigned long long flags, int *status);

void gmfake_set_device(int d) { fake_device = d; }
int gmfake_get_device(void) { return fake_device; }

int cuCtxGetDevice(int *d)
{
    *d = fake_device;
    return 0;
}

static int fake_alloc(dptr_t *p, size_t size)
{
    if (p == NULL)
        return 1;
    if (size > FAKE_LIMIT)
        return FAKE_OOM;
    *p = size ? (dptr_t)(uintptr_t)malloc(size) : 0;
    return size && *p == 0 ? FAKE_OOM : 0;
}

int cuMemAlloc_v2(dptr_t *p, size_t size) { return fake_alloc(p, size); }
int cuMemFree_v2(dptr_t p)
{
    free((void *)(uintptr_t)p);
    return 0;
}
int cuMemAllocAsync(dptr_t *p, size_t size, void *stream)
{
    (void)stream;
    return fake_alloc(p, size);
}
int cuMemAllocAsync_ptsz(dptr_t *p, size_t size, void *stream)
{
    return cuMemAllocAsync(p, size, stream);
}
int cuMemFreeAsync(dptr_t p, void *stream)
{
    (void)stream;
    return cuMemFree_v2(p);
}
int cuMemFreeAsync_ptsz(dptr_t p, void *stream) { return cuMemFreeAsync(p, stream); }
int cuMemAllocManaged(dptr_t *p, size_t size, unsigned flags)
{
    (void)flags;
    return fake_alloc(p, size);
}

static unsigned long long fake_next_handle = 0x1000;

int cuMemCreate(unsigned long long *h, size_t size, const void *prop, unsigned long long flags)
{
    (void)size;
    (void)prop;
    (void)flags;
    *h = __atomic_fetch_add(&fake_next_handle, 1, __ATOMIC_RELAXED);
    return 0;
}
int cuMemRelease(unsigned long long h)
{
    (void)h;
    return 0;
}
int cuMemMap(dptr_t p, size_t size, size_t off, unsigned long long h, unsigned long long flags)
{
    (void)p;
    (void)size;
    (void)off;
    (void)h;
    (void)flags;
    return 0;
}
int cuMemUnmap(dptr_t p, size_t size)
{
    (void)p;
    (void)size;
    return 0;
}

static const struct {
    const char *name;
    void *fn, *fn_ptsz;
} fake_table[] = {
    {"cuMemAlloc", (void *)cuMemAlloc_v2, NULL},
    {"cuMemFree", (void *)cuMemFree_v2, NULL},
    {"cuMemAllocAsync", (void *)cuMemAllocAsync, (void *)cuMemAllocAsync_ptsz},
    {"cuMemFreeAsync", (void *)cuMemFreeAsync, (void *)cuMemFreeAsync_ptsz},
    {"cuMemAllocManaged", (void *)cuMemAllocManaged, NULL},
    {"cuMemCreate", (void *)cuMemCreate, NULL},
    {"cuMemRelease", (void *)cuMemRelease, NULL},
    {"cuMemMap", (void *)cuMemMap, NULL},
    {"cuMemUnmap", (void *)cuMemUnmap, NULL},
    {"cuCtxGetDevice", (void *)cuCtxGetDevice, NULL},
};

static int fake_lookup(const char *sym, void **pfn, int ver, unsigned long long flags)
{
    if (strcmp(sym, "cuGetProcAddress") == 0) {
        *pfn = ver >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
        return 0;
    }
    for (size_t i = 0; i < sizeof fake_table / sizeof fake_table[0]; i++)
        if (strcmp(sym, fake_table[i].name) == 0) {
            *pfn = (flags & 2) && fake_table[i].fn_ptsz ? fake_table[i].fn_ptsz : fake_table[i].fn;
            return 0;
        }
    *pfn = NULL;
    return 500; /* CUDA_ERROR_NOT_FOUND */
}

int cuGetProcAddress(const char *sym, void **pfn, int ver, unsigned long long flags)
{
    return fake_lookup(sym, pfn, ver, flags);
}

int cuGetProcAddress_v2(const char *sym, void **pfn, int ver, unsigned long long flags,
                        int *status)
{
    int rc = fake_lookup(sym, pfn, ver, flags);
    if (status != NULL)
        *status = rc == 0 ? 1 : 2;
    return rc;
}
