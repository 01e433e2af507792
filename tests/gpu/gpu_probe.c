/*
 * tests/gpu/gpu_probe.c — gmsim-gpu-probe, the small program the device
 * script (scripts/gpu-check) runs on a GPU.  Linked with the CUDA runtime
 * as any CUDA program is (so `gmsim capture` sees its calls the way it
 * sees a user's), it prints JSON lines on standard output:
 *
 *   gmsim-gpu-probe env          the device, driver and runtime, memory
 *   gmsim-gpu-probe granularity  what the device really charges: the
 *                                driver's mapping granularity
 *                                (cuMemGetAllocationGranularity), the
 *                                in-use growth and pointer spacing of
 *                                cudaMalloc at sizes from 1 B to 2 MiB + 1,
 *                                and the memory a pool reserves for one
 *                                allocation of each size (its chunking)
 *   gmsim-gpu-probe calls N      a known count of calls for the capture
 *                                checks: N cudaMalloc then N cudaFree,
 *                                N/4 cudaMallocFromPoolAsync/cudaFreeAsync
 *                                pairs and 2 pages through cuMemCreate,
 *                                cuMemMap, cuMemUnmap and cuMemRelease;
 *                                the counts and bytes are printed
 *
 * Exit status 0, or 1 after a line {"error": "..."} naming the failed call.
 * Against the fake runtime (tests/gpu/fake_cudart.c) it runs the same way:
 * the device script's --dry-run does that.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define MiB (UINT64_C(1) << 20)

static int probe_fail(const char *call, cudaError_t e)
{
    printf("{\"error\": \"%s: %s\"}\n", call, cudaGetErrorString(e));
    return 1;
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return probe_fail(#call, e_);                                                          \
    } while (0)

static uint64_t probe_used(void)
{
    size_t f = 0, t = 0;
    if (cudaMemGetInfo(&f, &t) != cudaSuccess)
        return 0;
    return (uint64_t)(t - f);
}

typedef CUresult (*probe_gran_fn)(size_t *, const CUmemAllocationProp *,
                                  CUmemAllocationGranularity_flags);
typedef CUresult (*probe_create_fn)(CUmemGenericAllocationHandle *, size_t,
                                    const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*probe_release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*probe_reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
                                     unsigned long long);
typedef CUresult (*probe_afree_fn)(CUdeviceptr, size_t);
typedef CUresult (*probe_map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                                 unsigned long long);
typedef CUresult (*probe_unmap_fn)(CUdeviceptr, size_t);
typedef CUresult (*probe_access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);

/* A driver entry point through the runtime (what PyTorch and gmsim do). */
static void *probe_driver(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        return NULL;
    return fn;
}

static CUmemAllocationProp probe_prop(void)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
}

static int probe_env(void)
{
    int n = 0, drv = 0, rtv = 0;
    CHECK(cudaGetDeviceCount(&n));
    CHECK(cudaDriverGetVersion(&drv));
    CHECK(cudaRuntimeGetVersion(&rtv));
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    CHECK(cudaGetDeviceProperties(&prop, 0));
    size_t f = 0, t = 0;
    CHECK(cudaMemGetInfo(&f, &t));
    prop.name[sizeof prop.name - 1] = '\0';
    for (char *c = prop.name; *c; c++)
        if (*c == '"' || *c == '\\')
            *c = ' ';
    printf("{\"probe\": \"env\", \"devices\": %d, \"name\": \"%s\", \"driver\": %d, "
           "\"runtime\": %d, \"total_bytes\": %zu, \"free_bytes\": %zu}\n",
           n, prop.name, drv, rtv, t, f);
    return 0;
}

static int probe_granularity(void)
{
    /* the driver's mapping granularity */
    probe_gran_fn gran = (probe_gran_fn)probe_driver("cuMemGetAllocationGranularity");
    CUmemAllocationProp prop = probe_prop();
    size_t gmin = 0, grec = 0;
    if (gran != NULL) {
        gran(&gmin, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        gran(&grec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    }
    printf("{\"probe\": \"vmm_granularity\", \"minimum\": %zu, \"recommended\": %zu}\n", gmin,
           grec);

    /* cudaMalloc: in-use growth and spacing over K allocations of each size */
    enum { K = 64 };
    static const uint64_t sizes[] = {1, 512, 4096, 65536, 1 * MiB, 2 * MiB, 2 * MiB + 1};
    void *p[K];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint64_t before = probe_used();
        for (int i = 0; i < K; i++)
            CHECK(cudaMalloc(&p[i], (size_t)sizes[s]));
        uint64_t after = probe_used();
        uint64_t spacing = UINT64_MAX;
        for (int i = 1; i < K; i++) {
            uint64_t a = (uint64_t)(uintptr_t)p[i - 1], b = (uint64_t)(uintptr_t)p[i];
            uint64_t d = a > b ? a - b : b - a;
            if (d < spacing)
                spacing = d;
        }
        for (int i = 0; i < K; i++)
            CHECK(cudaFree(p[i]));
        printf("{\"probe\": \"malloc_granularity\", \"size\": %llu, \"count\": %d, "
               "\"used_growth\": %llu, \"per_alloc\": %.1f, \"min_spacing\": %llu}\n",
               (unsigned long long)sizes[s], K, (unsigned long long)(after - before),
               (double)(after - before) / K, (unsigned long long)spacing);
    }

    /* a pool: what one allocation of each size reserves, in a fresh pool */
    static const uint64_t psizes[] = {1, 512, 65536, 1 * MiB, 2 * MiB + 1, 3 * MiB, 33 * MiB};
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (size_t s = 0; s < sizeof psizes / sizeof psizes[0]; s++) {
        struct cudaMemPoolProps pp;
        memset(&pp, 0, sizeof pp);
        pp.allocType = cudaMemAllocationTypePinned;
        pp.location.type = cudaMemLocationTypeDevice;
        pp.location.id = 0;
        cudaMemPool_t pool;
        CHECK(cudaMemPoolCreate(&pool, &pp));
        void *q = NULL;
        CHECK(cudaMallocFromPoolAsync(&q, (size_t)psizes[s], pool, st));
        CHECK(cudaStreamSynchronize(st));
        uint64_t reserved = 0, used = 0;
        CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reserved));
        CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used));
        CHECK(cudaFreeAsync(q, st));
        CHECK(cudaStreamSynchronize(st));
        CHECK(cudaMemPoolDestroy(pool));
        printf("{\"probe\": \"pool_granularity\", \"size\": %llu, \"reserved\": %llu, "
               "\"used\": %llu}\n",
               (unsigned long long)psizes[s], (unsigned long long)reserved,
               (unsigned long long)used);
    }
    CHECK(cudaStreamDestroy(st));
    return 0;
}

static int probe_calls(long n)
{
    void **p = calloc((size_t)n + 1, sizeof *p);
    if (p == NULL)
        return 1;
    uint64_t bytes = 0;
    for (long i = 0; i < n; i++) {
        CHECK(cudaMalloc(&p[i], (size_t)(4096 + 512 * i)));
        bytes += (uint64_t)(4096 + 512 * i);
    }
    for (long i = 0; i < n; i++)
        CHECK(cudaFree(p[i]));
    free(p);

    long m = n / 4;
    struct cudaMemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = cudaMemAllocationTypePinned;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = 0;
    cudaMemPool_t pool;
    cudaStream_t st;
    CHECK(cudaMemPoolCreate(&pool, &pp));
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (long i = 0; i < m; i++) {
        void *q = NULL;
        CHECK(cudaMallocFromPoolAsync(&q, (size_t)(8192 + i), pool, st));
        CHECK(cudaFreeAsync(q, st));
        bytes += (uint64_t)(8192 + i);
    }
    CHECK(cudaStreamSynchronize(st));
    CHECK(cudaMemPoolDestroy(pool));
    CHECK(cudaStreamDestroy(st));

    /* two pages, mapped and unmapped as an expandable segment is */
    int pages = 0;
    probe_gran_fn gran = (probe_gran_fn)probe_driver("cuMemGetAllocationGranularity");
    probe_create_fn create = (probe_create_fn)probe_driver("cuMemCreate");
    probe_release_fn release = (probe_release_fn)probe_driver("cuMemRelease");
    probe_reserve_fn reserve = (probe_reserve_fn)probe_driver("cuMemAddressReserve");
    probe_afree_fn afree = (probe_afree_fn)probe_driver("cuMemAddressFree");
    probe_map_fn map = (probe_map_fn)probe_driver("cuMemMap");
    probe_unmap_fn unmap = (probe_unmap_fn)probe_driver("cuMemUnmap");
    probe_access_fn access = (probe_access_fn)probe_driver("cuMemSetAccess");
    CUmemAllocationProp prop = probe_prop();
    size_t g = 0;
    if (gran && create && release && reserve && afree && map && unmap && access &&
        gran(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS && g > 0) {
        CUdeviceptr base = 0;
        if (reserve(&base, 2 * g, 0, 0, 0) != CUDA_SUCCESS) {
            printf("{\"error\": \"cuMemAddressReserve failed\"}\n");
            return 1;
        }
        CUmemAccessDesc ad;
        memset(&ad, 0, sizeof ad);
        ad.location = prop.location;
        ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CUmemGenericAllocationHandle h[2];
        for (int i = 0; i < 2; i++) {
            if (create(&h[i], g, &prop, 0) != CUDA_SUCCESS ||
                map(base + (CUdeviceptr)(i * g), g, 0, h[i], 0) != CUDA_SUCCESS ||
                access(base + (CUdeviceptr)(i * g), g, &ad, 1) != CUDA_SUCCESS) {
                printf("{\"error\": \"cuMemCreate/cuMemMap/cuMemSetAccess failed\"}\n");
                return 1;
            }
            pages++;
        }
        for (int i = 0; i < 2; i++) {
            unmap(base + (CUdeviceptr)(i * g), g);
            release(h[i]);
        }
        afree(base, 2 * g);
    }
    printf("{\"probe\": \"calls\", \"cudaMalloc\": %ld, \"cudaFree\": %ld, "
           "\"cudaMallocFromPoolAsync\": %ld, \"cudaFreeAsync\": %ld, \"cuMemCreate\": %d, "
           "\"cuMemMap\": %d, \"cuMemUnmap\": %d, \"cuMemRelease\": %d, \"allocs\": %ld, "
           "\"requested_bytes\": %llu, \"page_bytes\": %zu}\n",
           n, n, m, m, pages, pages, pages, pages, n + m, (unsigned long long)bytes, g);
    return 0;
}

int main(int argc, char **argv)
{
    int count = 0;
    CHECK(cudaGetDeviceCount(&count)); /* the first call, as in any program */
    if (argc >= 2 && strcmp(argv[1], "env") == 0)
        return probe_env();
    if (argc >= 2 && strcmp(argv[1], "granularity") == 0) {
        CHECK(cudaSetDevice(0));
        return probe_granularity();
    }
    if (argc >= 3 && strcmp(argv[1], "calls") == 0) {
        long n = strtol(argv[2], NULL, 10);
        if (n < 1 || n > 100000)
            n = 100;
        CHECK(cudaSetDevice(0));
        return probe_calls(n);
    }
    fprintf(stderr, "usage: gmsim-gpu-probe env | granularity | calls N\n");
    return 2;
}
