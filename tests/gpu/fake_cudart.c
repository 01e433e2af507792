/*
 * tests/gpu/fake_cudart.c — a fake CUDA runtime for the real-GPU backend's
 * tests: the entry points replay/gpu/gpu.c loads, over no memory at all.
 *
 * Device pointers come from a bump counter (nothing is ever dereferenced);
 * each cudaMalloc takes its size rounded up to FAKE_CUDA_GRANULARITY
 * (default 512) from a device of FAKE_CUDA_TOTAL bytes (default 16 GiB) of
 * which FAKE_CUDA_BASELINE (default 300 MiB) is in use before anything is
 * allocated, and fails with cudaErrorMemoryAllocation beyond it.  Memory
 * pools charge each request rounded up to FAKE_CUDA_POOL_ALIGN (default 1:
 * the request itself), grow by chunks of FAKE_CUDA_POOL_CHUNK (default
 * 2 MiB), keep what they hold up to their release threshold at each
 * synchronization, and track their high-water marks.  Pointers lie the
 * charge rounded up to 512 apart (a 1-byte cudaMalloc at granularity G ≥
 * 512 lies G from the next, as `gmsim calibrate` measures it).
 * FAKE_CUDA_OLD_DRIVER_FOR=TEXT: a copy of the fake loaded from a path
 * containing TEXT answers cudaGetDeviceCount with
 * cudaErrorInsufficientDriver, as a runtime newer than the driver does.
 * FAKE_CUDA_DEVICES (default 1) devices exist; FAKE_CUDA_FAIL_MALLOC=N
 * makes the N-th cudaMalloc (from 1) fail.  Every call is appended to the
 * file FAKE_CUDA_LOG when set, one line each.
 *
 * Virtual memory (the driver's cuMem* calls, handed out by
 * cudaGetDriverEntryPointByVersion as the real runtime does): address
 * ranges from cuMemAddressReserve; cuMemCreate charges its size, which must
 * be a multiple of FAKE_CUDA_VMM_GRANULARITY (default 2 MiB), as the real
 * driver demands; cuMemMap maps a whole handle at a granularity-aligned
 * address inside a reserved range, nowhere already mapped; cuMemUnmap takes
 * whole mappings only; memory goes back once its handle is released and
 * unmapped.  Any misuse fails with CUDA_ERROR_INVALID_VALUE.
 *
 * Work queued on a stream: cudaMemset and cudaMemsetAsync each queue
 * FAKE_CUDA_MEMSET_US microseconds (default 0) of work on their stream (the
 * legacy stream for cudaMemset); a synchronization of that stream or of the
 * device, and a cudaFree (which synchronizes the device, as the real one
 * does), wait for it.  cudaMemsetAsync refuses pool memory on a stream
 * other than its allocation's (the order the real device does not check,
 * and a replay must keep).
 *
 * The state is reset at cudaGetDeviceCount, the backend's first call of
 * each session.  Tests read it back through fake_cuda_live().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define FAKE_MAX_LIVE 65536

typedef struct fake_block {
    uint64_t ptr, size; /* size as charged (rounded, or the request for pools) */
    struct fake_pool *pool;
    cudaStream_t stream; /* a pool allocation's stream */
} fake_block_t;

#define FAKE_MAX_VMM 65536

typedef struct fake_handle {
    uint64_t size;
    int live, released;
    uint64_t mapped_at; /* 0: not mapped */
} fake_handle_t;

typedef struct fake_range {
    uint64_t base, size;
} fake_range_t;

struct fake_pool {
    uint64_t used, reserved, threshold, used_high, reserved_high;
};

static struct {
    uint64_t total, in_use, granularity, next, pool_chunk, pool_align;
    long mallocs, fail_at;
    fake_block_t live[FAKE_MAX_LIVE];
    size_t nlive;
    FILE *log;
    uint64_t vmm_granularity, next_va, memset_ns;
    fake_handle_t handles[FAKE_MAX_VMM]; /* handle h is handles[h - 1] */
    size_t nhandles, handles_live, mappings;
    fake_range_t ranges[FAKE_MAX_VMM];
    size_t nranges;
    double pending_ns; /* queued work, all streams together */
} fake;

/* Exported for the tests: blocks, handles, mappings and address ranges
 * still held. */
size_t fake_cuda_live(void);
size_t fake_cuda_live(void)
{
    size_t ranges = 0;
    for (size_t i = 0; i < fake.nranges; i++)
        ranges += fake.ranges[i].size != 0;
    return fake.nlive + fake.handles_live + fake.mappings + ranges;
}

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
    const char *old = getenv("FAKE_CUDA_OLD_DRIVER_FOR");
    Dl_info self;
    if (old && *old && dladdr((void *)cudaGetDeviceCount, &self) != 0 && self.dli_fname &&
        strstr(self.dli_fname, old) != NULL) {
        *count = 0;
        return cudaErrorInsufficientDriver;
    }
    if (fake.log != NULL)
        fclose(fake.log);
    memset(&fake, 0, sizeof fake);
    fake.total = fake_env("FAKE_CUDA_TOTAL", UINT64_C(16) << 30);
    fake.in_use = fake_env("FAKE_CUDA_BASELINE", UINT64_C(300) << 20);
    fake.granularity = fake_env("FAKE_CUDA_GRANULARITY", 512);
    fake.pool_chunk = fake_env("FAKE_CUDA_POOL_CHUNK", UINT64_C(2) << 20);
    fake.pool_align = fake_env("FAKE_CUDA_POOL_ALIGN", 1);
    fake.fail_at = (long)fake_env("FAKE_CUDA_FAIL_MALLOC", 0);
    fake.next = UINT64_C(0x7f0000000000);
    fake.next_va = UINT64_C(0x600000000000);
    fake.vmm_granularity = fake_env("FAKE_CUDA_VMM_GRANULARITY", UINT64_C(2) << 20);
    fake.memset_ns = fake_env("FAKE_CUDA_MEMSET_US", 0) * 1000;
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
    case cudaErrorInsufficientDriver:
        return "CUDA driver version is insufficient for CUDA runtime version";
    default: return "unknown error";
    }
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

#if CUDART_VERSION >= 13000
/* CUDA 13's name (CUDA 12 headers map it to the _v2 below). */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    (void)device;
    snprintf(prop->name, sizeof prop->name, "fake GPU");
    return cudaSuccess;
}
#endif

/* Not declared by every toolkit's header under this name. */
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device);
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device)
{
    (void)device;
    snprintf(prop->name, sizeof prop->name, "fake GPU");
    return cudaSuccess;
}

static cudaError_t fake_take(void **ptr, uint64_t size, struct fake_pool *pool,
                             cudaStream_t stream)
{
    uint64_t unit = pool ? fake.pool_align : fake.granularity;
    uint64_t charge = (size + unit - 1) / unit * unit;
    if (pool != NULL) {
        uint64_t need = pool->used + charge;
        if (need > pool->reserved) {
            uint64_t grow = (need - pool->reserved + fake.pool_chunk - 1) / fake.pool_chunk *
                            fake.pool_chunk;
            if (fake.in_use + grow > fake.total)
                return cudaErrorMemoryAllocation;
            pool->reserved += grow;
            fake.in_use += grow;
        }
        pool->used += charge;
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
    fake.next += charge ? (charge + 511) / 512 * 512 : 512;
    fake.live[fake.nlive++] = (fake_block_t){p, charge, pool, stream};
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
    cudaError_t e = fake_take(ptr, size, NULL, NULL);
    fake_log("malloc %llu %llx", (unsigned long long)size,
             e == cudaSuccess ? (unsigned long long)(uintptr_t)*ptr : 0ULL);
    return e;
}

/* Wait for the queued work (a busy wait: the time must show in the
 * caller's clock). */
static void fake_wait(void)
{
    if (fake.pending_ns <= 0)
        return;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) * 1e9 + (double)(t.tv_nsec - t0.tv_nsec) <
           fake.pending_ns);
    fake.pending_ns = 0;
}

cudaError_t cudaFree(void *ptr)
{
    fake_log("free %llx", (unsigned long long)(uintptr_t)ptr);
    fake_wait();
    return ptr == NULL ? cudaSuccess : fake_give(ptr);
}

/* Whether [ptr, ptr+size) lies in a live block or a mapping. */
static int fake_writable(void *ptr, size_t size, cudaStream_t stream)
{
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    fake_block_t *b = fake_find(ptr);
    if (b != NULL)
        return size <= b->size && (b->pool == NULL || b->stream == stream);
    for (size_t i = 0; i < fake.nhandles; i++) {
        fake_handle_t *h = &fake.handles[i];
        if (h->live && h->mapped_at && p >= h->mapped_at && p - h->mapped_at < h->size) {
            /* a range of consecutive mappings */
            uint64_t end = p + size, at = h->mapped_at + h->size;
            while (at < end) {
                size_t k;
                for (k = 0; k < fake.nhandles; k++)
                    if (fake.handles[k].live && fake.handles[k].mapped_at == at)
                        break;
                if (k == fake.nhandles)
                    return 0;
                at += fake.handles[k].size;
            }
            return 1;
        }
    }
    return 0;
}

cudaError_t cudaMemset(void *ptr, int value, size_t size)
{
    (void)value;
    fake_log("memset %llx %llu", (unsigned long long)(uintptr_t)ptr, (unsigned long long)size);
    if (!fake_writable(ptr, size, NULL))
        return cudaErrorInvalidValue;
    fake.pending_ns += (double)fake.memset_ns;
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t size, cudaStream_t stream)
{
    (void)value;
    fake_log("memsetasync %llx %llu %llx", (unsigned long long)(uintptr_t)ptr,
             (unsigned long long)size, (unsigned long long)(uintptr_t)stream);
    if (!fake_writable(ptr, size, stream))
        return cudaErrorInvalidValue;
    fake.pending_ns += (double)fake.memset_ns;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    fake_log("streamsync %llx", (unsigned long long)(uintptr_t)stream);
    fake_wait();
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total)
{
    *free_b = (size_t)(fake.total - fake.in_use);
    *total = (size_t)fake.total;
    return cudaSuccess;
}

static void fake_pool_release(struct fake_pool *p, uint64_t keep)
{
    uint64_t floor = (p->used + fake.pool_chunk - 1) / fake.pool_chunk * fake.pool_chunk;
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
    fake_wait();
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
    case cudaMemPoolAttrReservedMemCurrent: *(uint64_t *)value = p->reserved; break;
    case cudaMemPoolAttrUsedMemCurrent: *(uint64_t *)value = p->used; break;
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
    cudaError_t e = fake_take(ptr, size, (struct fake_pool *)(void *)pool, stream);
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

/* ---- the driver's virtual memory calls --------------------------------------------- */

static CUresult fake_cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
                                                   CUmemAllocationGranularity_flags option)
{
    (void)prop;
    (void)option;
    *g = (size_t)fake.vmm_granularity;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align,
                                         CUdeviceptr addr, unsigned long long flags)
{
    (void)addr;
    (void)flags;
    uint64_t g = fake.vmm_granularity;
    if (size == 0 || size % g != 0 || (align != 0 && align % g != 0) ||
        fake.nranges == sizeof fake.ranges / sizeof fake.ranges[0])
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t a = align ? align : g;
    uint64_t base = (fake.next_va + a - 1) / a * a;
    fake.next_va = base + size + g;
    fake.ranges[fake.nranges++] = (fake_range_t){base, size};
    *ptr = (CUdeviceptr)base;
    fake_log("reserve %llx %llu", (unsigned long long)base, (unsigned long long)size);
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    fake_log("addressfree %llx %llu", (unsigned long long)ptr, (unsigned long long)size);
    for (size_t i = 0; i < fake.nranges; i++) {
        fake_range_t *r = &fake.ranges[i];
        if (r->base == ptr && r->size == size && size != 0) {
            for (size_t k = 0; k < fake.nhandles; k++)
                if (fake.handles[k].live && fake.handles[k].mapped_at >= r->base &&
                    fake.handles[k].mapped_at < r->base + r->size)
                    return CUDA_ERROR_INVALID_VALUE; /* still mapped */
            r->size = 0;
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                 const CUmemAllocationProp *prop, unsigned long long flags)
{
    (void)flags;
    fake_log("memcreate %llu", (unsigned long long)size);
    if (size == 0 || size % fake.vmm_granularity != 0 || prop == NULL ||
        prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (fake.in_use + size > fake.total)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (fake.nhandles == FAKE_MAX_VMM)
        abort(); /* a test bigger than the fake */
    fake.in_use += size;
    fake.handles[fake.nhandles++] = (fake_handle_t){size, 1, 0, 0};
    fake.handles_live++;
    *handle = fake.nhandles;
    return CUDA_SUCCESS;
}

static fake_handle_t *fake_handle(CUmemGenericAllocationHandle h)
{
    return h >= 1 && h <= fake.nhandles && fake.handles[h - 1].live ? &fake.handles[h - 1] : NULL;
}

/* Memory goes back when its handle is released and unmapped. */
static void fake_handle_settle(fake_handle_t *h)
{
    if (h->released && h->mapped_at == 0) {
        fake.in_use -= h->size;
        h->live = 0;
        fake.handles_live--;
    }
}

static CUresult fake_cuMemRelease(CUmemGenericAllocationHandle handle)
{
    fake_log("memrelease %llu", (unsigned long long)handle);
    fake_handle_t *h = fake_handle(handle);
    if (h == NULL || h->released)
        return CUDA_ERROR_INVALID_VALUE;
    h->released = 1;
    fake_handle_settle(h);
    return CUDA_SUCCESS;
}

static int fake_in_range(uint64_t p, uint64_t size)
{
    for (size_t i = 0; i < fake.nranges; i++)
        if (fake.ranges[i].size && p >= fake.ranges[i].base &&
            p + size <= fake.ranges[i].base + fake.ranges[i].size)
            return 1;
    return 0;
}

static CUresult fake_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                              CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    (void)flags;
    fake_log("memmap %llx %llu", (unsigned long long)ptr, (unsigned long long)size);
    fake_handle_t *h = fake_handle(handle);
    if (h == NULL || h->released || h->mapped_at || offset != 0 || size != h->size ||
        ptr % fake.vmm_granularity != 0 || !fake_in_range(ptr, size))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < fake.nhandles; k++) {
        fake_handle_t *o = &fake.handles[k];
        if (o->live && o->mapped_at && o->mapped_at < ptr + size && ptr < o->mapped_at + o->size)
            return CUDA_ERROR_INVALID_VALUE; /* overlaps a mapping */
    }
    h->mapped_at = ptr;
    fake.mappings++;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                    size_t count)
{
    if (count == 0 || desc == NULL || desc->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE ||
        !fake_writable((void *)(uintptr_t)ptr, size, NULL))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* Whole mappings only, as the real driver. */
static CUresult fake_cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    fake_log("memunmap %llx %llu", (unsigned long long)ptr, (unsigned long long)size);
    uint64_t covered = 0;
    for (size_t k = 0; k < fake.nhandles; k++) {
        fake_handle_t *o = &fake.handles[k];
        if (!o->live || !o->mapped_at || o->mapped_at + o->size <= ptr || o->mapped_at >= ptr + size)
            continue;
        if (o->mapped_at < ptr || o->mapped_at + o->size > ptr + size)
            return CUDA_ERROR_INVALID_VALUE; /* would cut a mapping */
        covered += o->size;
    }
    if (size == 0 || covered != size)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < fake.nhandles; k++) {
        fake_handle_t *o = &fake.handles[k];
        if (o->live && o->mapped_at >= ptr && o->mapped_at < ptr + size) {
            o->mapped_at = 0;
            fake.mappings--;
            fake_handle_settle(o);
        }
    }
    return CUDA_SUCCESS;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *status)
{
    (void)version;
    (void)flags;
    static const struct {
        const char *name;
        void *fn;
    } table[] = {
#define FAKE_ENTRY(f) {#f, (void *)fake_##f}
        FAKE_ENTRY(cuMemGetAllocationGranularity),
        FAKE_ENTRY(cuMemAddressReserve),
        FAKE_ENTRY(cuMemAddressFree),
        FAKE_ENTRY(cuMemCreate),
        FAKE_ENTRY(cuMemRelease),
        FAKE_ENTRY(cuMemMap),
        FAKE_ENTRY(cuMemUnmap),
        FAKE_ENTRY(cuMemSetAccess),
#undef FAKE_ENTRY
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].name, symbol) == 0) {
            *fn = table[i].fn;
            if (status)
                *status = cudaDriverEntryPointSuccess;
            return cudaSuccess;
        }
    }
    *fn = NULL;
    if (status)
        *status = cudaDriverEntryPointSymbolNotFound;
    return cudaErrorSymbolNotFound;
}
