/*
 * tests/gpu/fake_cudart.c — a fake CUDA runtime for the real-GPU backend's
 * tests: the entry points replay/gpu/gpu.c loads, over no memory at all.
 *
 * Device pointers come from a bump counter (nothing is ever dereferenced);
 * each cudaMalloc takes its size rounded up to FAKE_CUDA_GRANULARITY
 * (default 512) from a device of FAKE_CUDA_TOTAL bytes (default 16 GiB) of
 * which FAKE_CUDA_BASELINE (default 300 MiB) is in use before anything is
 * allocated, and fails with cudaErrorMemoryAllocation beyond it.  Memory
 * pools grow by 2 MiB chunks, keep what they hold up to their release
 * threshold at each synchronization, and track their high-water marks.
 * FAKE_CUDA_DEVICES (default 1) devices exist; FAKE_CUDA_FAIL_MALLOC=N
 * makes the N-th cudaMalloc (from 1) fail.  Every call is appended to the
 * file FAKE_CUDA_LOG when set, one line each.
 *
 * The state is reset at cudaGetDeviceCount, the backend's first call of
 * each session.  Tests read it back through fake_cuda_live().
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define FAKE_MAX_LIVE 65536
#define FAKE_POOL_CHUNK (UINT64_C(2) << 20)

typedef struct fake_block {
    uint64_t ptr, size; /* size as charged (rounded, or the request for pools) */
    struct fake_pool *pool;
} fake_block_t;

struct fake_pool {
    uint64_t used, reserved, threshold, used_high, reserved_high;
};

static struct {
    uint64_t total, in_use, granularity, next;
    long mallocs, fail_at;
    fake_block_t live[FAKE_MAX_LIVE];
    size_t nlive;
    FILE *log;
} fake;

/* Exported for the tests: blocks still allocated. */
size_t fake_cuda_live(void);
size_t fake_cuda_live(void) { return fake.nlive; }

static uint64_t fake_env(const char *name, uint64_t def)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : def;
}

static void fake_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fake_log(const char *fmt, ...)
{
    if (fake.log != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(fake.log, fmt, ap);
        va_end(ap);
        fputc('\n', fake.log);
        fflush(fake.log);
    }
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (fake.log != NULL)
        fclose(fake.log);
    memset(&fake, 0, sizeof fake);
    fake.total = fake_env("FAKE_CUDA_TOTAL", UINT64_C(16) << 30);
    fake.in_use = fake_env("FAKE_CUDA_BASELINE", UINT64_C(300) << 20);
    fake.granularity = fake_env("FAKE_CUDA_GRANULARITY", 512);
    fake.fail_at = (long)fake_env("FAKE_CUDA_FAIL_MALLOC", 0);
    fake.next = UINT64_C(0x7f0000000000);
    const char *log = getenv("FAKE_CUDA_LOG");
    if (log && *log)
        fake.log = fopen(log, "a");
    *count = (int)fake_env("FAKE_CUDA_DEVICES", 1);
    return *count > 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaSetDevice(int device)
{
    return device >= 0 && device < (int)fake_env("FAKE_CUDA_DEVICES", 1) ? cudaSuccess
                                                                         : cudaErrorInvalidDevice;
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidValue: return "invalid argument";
    default: return "unknown error";
    }
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

/* Not declared by every toolkit's header under this name. */
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device);
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device)
{
    (void)device;
    snprintf(prop->name, sizeof prop->name, "fake GPU");
    return cudaSuccess;
}

static cudaError_t fake_take(void **ptr, uint64_t size, struct fake_pool *pool)
{
    uint64_t charge = pool ? size : (size + fake.granularity - 1) / fake.granularity * fake.granularity;
    if (pool != NULL) {
        uint64_t need = pool->used + size;
        if (need > pool->reserved) {
            uint64_t grow = (need - pool->reserved + FAKE_POOL_CHUNK - 1) / FAKE_POOL_CHUNK *
                            FAKE_POOL_CHUNK;
            if (fake.in_use + grow > fake.total)
                return cudaErrorMemoryAllocation;
            pool->reserved += grow;
            fake.in_use += grow;
        }
        pool->used += size;
        if (pool->used > pool->used_high)
            pool->used_high = pool->used;
        if (pool->reserved > pool->reserved_high)
            pool->reserved_high = pool->reserved;
    } else {
        if (fake.in_use + charge > fake.total)
            return cudaErrorMemoryAllocation;
        fake.in_use += charge;
    }
    if (fake.nlive == FAKE_MAX_LIVE)
        abort(); /* a test bigger than the fake */
    uint64_t p = fake.next;
    fake.next += charge + 512;
    fake.live[fake.nlive++] = (fake_block_t){p, charge, pool};
    *ptr = (void *)(uintptr_t)p;
    return cudaSuccess;
}

static fake_block_t *fake_find(void *ptr)
{
    for (size_t i = 0; i < fake.nlive; i++)
        if (fake.live[i].ptr == (uint64_t)(uintptr_t)ptr)
            return &fake.live[i];
    return NULL;
}

static cudaError_t fake_give(void *ptr)
{
    fake_block_t *b = fake_find(ptr);
    if (b == NULL)
        return cudaErrorInvalidValue;
    if (b->pool != NULL)
        b->pool->used -= b->size;
    else
        fake.in_use -= b->size;
    *b = fake.live[--fake.nlive];
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t size)
{
    if (++fake.mallocs == fake.fail_at)
        return cudaErrorMemoryAllocation;
    cudaError_t e = fake_take(ptr, size, NULL);
    fake_log("malloc %llu %llx", (unsigned long long)size,
             e == cudaSuccess ? (unsigned long long)(uintptr_t)*ptr : 0ULL);
    return e;
}

cudaError_t cudaFree(void *ptr)
{
    fake_log("free %llx", (unsigned long long)(uintptr_t)ptr);
    return ptr == NULL ? cudaSuccess : fake_give(ptr);
}

cudaError_t cudaMemset(void *ptr, int value, size_t size)
{
    (void)value;
    fake_log("memset %llx %llu", (unsigned long long)(uintptr_t)ptr, (unsigned long long)size);
    return fake_find(ptr) ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total)
{
    *free_b = (size_t)(fake.total - fake.in_use);
    *total = (size_t)fake.total;
    return cudaSuccess;
}

static void fake_pool_release(struct fake_pool *p, uint64_t keep)
{
    uint64_t floor = (p->used + FAKE_POOL_CHUNK - 1) / FAKE_POOL_CHUNK * FAKE_POOL_CHUNK;
    if (keep < floor)
        keep = floor;
    if (p->reserved > keep) {
        fake.in_use -= p->reserved - keep;
        p->reserved = keep;
    }
}

static struct fake_pool fake_pools[8];
static size_t fake_npools;

cudaError_t cudaDeviceSynchronize(void)
{
    fake_log("sync");
    for (size_t i = 0; i < fake_npools; i++)
        fake_pool_release(&fake_pools[i], fake_pools[i].threshold);
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    static uintptr_t next = 0x1000;
    *s = (cudaStream_t)(next += 0x10);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    (void)props;
    if (fake_npools == sizeof fake_pools / sizeof *fake_pools)
        return cudaErrorMemoryAllocation;
    memset(&fake_pools[fake_npools], 0, sizeof fake_pools[0]);
    *pool = (cudaMemPool_t)(void *)&fake_pools[fake_npools++];
    return cudaSuccess;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    struct fake_pool *p = (struct fake_pool *)(void *)pool;
    fake_pool_release(p, 0);
    fake_npools--;
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    struct fake_pool *p = (struct fake_pool *)(void *)pool;
    if (attr != cudaMemPoolAttrReleaseThreshold)
        return cudaErrorInvalidValue;
    p->threshold = *(uint64_t *)value;
    return cudaSuccess;
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    struct fake_pool *p = (struct fake_pool *)(void *)pool;
    switch (attr) {
    case cudaMemPoolAttrReservedMemHigh: *(uint64_t *)value = p->reserved_high; break;
    case cudaMemPoolAttrUsedMemHigh: *(uint64_t *)value = p->used_high; break;
    case cudaMemPoolAttrReleaseThreshold: *(uint64_t *)value = p->threshold; break;
    default: return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    fake_log("trim %llu", (unsigned long long)keep);
    fake_pool_release((struct fake_pool *)(void *)pool, keep);
    return cudaSuccess;
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool,
                                    cudaStream_t stream)
{
    cudaError_t e = fake_take(ptr, size, (struct fake_pool *)(void *)pool);
    fake_log("mallocasync %llu %llx", (unsigned long long)size,
             (unsigned long long)(uintptr_t)stream);
    return e;
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    fake_log("freeasync %llx %llx", (unsigned long long)(uintptr_t)ptr,
             (unsigned long long)(uintptr_t)stream);
    return fake_give(ptr);
}
