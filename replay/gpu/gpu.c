/*
 * replay/gpu/gpu.c — the real-GPU backend (gmsim/gpu.h).
 *
 * The CUDA runtime is loaded with dlopen and its entry points resolved by
 * name, so gmsim needs no GPU, driver or runtime to run, and a test can put
 * a fake runtime in its place (GM_CUDART).  The toolkit's headers give the
 * exact types.
 *
 * Bookkeeping.  Simulated addresses (from the policy's device) or
 * allocation ids (native, async) map to real device pointers in a hash map.
 * In-use device memory is sampled with cudaMemGetInfo after every device
 * malloc; frees only lower it.  Each device call is timed with the
 * monotonic clock; medians and 99th percentiles come from the sorted
 * samples.  On a CUDA error the first error is kept with the event index,
 * no further call is issued, and everything still allocated is freed
 * before returning.
 *
 * Expandable segments.  A policy that reserves a virtual range
 * (gm_device_reserve_va: PyTorch's expandable segments) gets a real range
 * of the same size (cuMemAddressReserve), and its maps and unmaps are done
 * page by page as PyTorch does: each page of the range's size (its
 * alignment, a multiple of the device's granularity) is one cuMemCreate,
 * cuMemMap and cuMemSetAccess, and each page unmapped one cuMemUnmap and
 * cuMemRelease, so an unmap of part of what one map mapped frees exactly
 * those pages.  Pages are keyed by their simulated address; one map or
 * unmap, however many pages, is one latency sample, as it is one device
 * call in the simulation.  The driver's entry points come from the
 * runtime (cudaGetDriverEntryPointByVersion), else from libcuda.so.1.
 *
 * --touch writes each new allocation with cudaMemsetAsync on the stream it
 * was allocated on (pool memory is stream-ordered) and waits for that
 * stream outside the timed calls, so no malloc or free latency includes
 * the write.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "gmsim/gpu.h"
#include "gmsim/json.h"
#include "base/idmap.h"
#include "base/vec.h"
#include "replay/gpu/runtime.h"

/* ---- the runtime, loaded at run time --------------------------------------- */

void gm__gpu_rt_close(gpu_rt_t *rt)
{
    if (rt->driver != NULL)
        dlclose(rt->driver);
    if (rt->lib != NULL)
        dlclose(rt->lib);
    memset(rt, 0, sizeof *rt);
}

/* The driver's virtual memory calls (cuda.h's types). */
#define GPU_DRIVER_FUNCS(X)                                                                     \
    X(cuMemGetAllocationGranularity, (size_t *, const CUmemAllocationProp *,                    \
                                      CUmemAllocationGranularity_flags))                        \
    X(cuMemAddressReserve, (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))    \
    X(cuMemAddressFree, (CUdeviceptr, size_t))                                                  \
    X(cuMemCreate, (CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,        \
                    unsigned long long))                                                        \
    X(cuMemRelease, (CUmemGenericAllocationHandle))                                             \
    X(cuMemMap, (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long)) \
    X(cuMemUnmap, (CUdeviceptr, size_t))                                                        \
    X(cuMemSetAccess, (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t))

typedef struct gpu_drv {
#define GPU_DFIELD(name, args) CUresult (*name) args;
    GPU_DRIVER_FUNCS(GPU_DFIELD)
#undef GPU_DFIELD
} gpu_drv_t;

/* Resolve the driver's virtual memory calls: from the runtime (the driver
 * it runs on), else libcuda.so.1.  GM_EUNSUPPORTED naming the missing one. */
static int gpu_drv_open(gpu_rt_t *rt, gpu_drv_t *d, gm_error_t *err)
{
    memset(d, 0, sizeof *d);
#define GPU_DRESOLVE(name, args)                                                              \
    {                                                                                         \
        void *fn = NULL;                                                                      \
        enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;          \
        if (rt->GetDriverEntryPointByVersion != NULL &&                                       \
            (rt->GetDriverEntryPointByVersion(#name, &fn, 12000, cudaEnableDefault, &q) !=    \
                 cudaSuccess ||                                                               \
             q != cudaDriverEntryPointSuccess))                                               \
            fn = NULL;                                                                        \
        if (fn == NULL) {                                                                     \
            if (rt->driver == NULL)                                                           \
                rt->driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);                   \
            if (rt->driver != NULL)                                                           \
                fn = dlsym(rt->driver, #name);                                                \
        }                                                                                     \
        if (fn == NULL)                                                                       \
            return gm_error_set(err, GM_EUNSUPPORTED,                                         \
                                "cannot map expandable segments: the driver lacks " #name);   \
        *(void **)(&d->name) = fn;                                                            \
    }
    GPU_DRIVER_FUNCS(GPU_DRESOLVE)
#undef GPU_DRESOLVE
    return 0;
}

/* The runtime's names, newest first, and the folders searched after the
 * library path ($CUDA_HOME and $CUDA_PATH first, "" for an unset one). */
static const char *const gpu_rt_names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};

/* dlopen dir/name for each name (dir NULL: the library path), appending
 * what was tried to the list in tried (cut, never overflowing).  The first
 * *skip runtimes that load are closed again and counted down (the runtimes
 * a caller already found wanting). */
static void *gpu_rt_try(const char *dir, unsigned *skip, char *tried, size_t len, char *why,
                        size_t wlen)
{
    for (size_t i = 0; i < sizeof gpu_rt_names / sizeof *gpu_rt_names; i++) {
        char path[4096];
        if (dir == NULL)
            snprintf(path, sizeof path, "%s", gpu_rt_names[i]);
        else if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, gpu_rt_names[i]) >= sizeof path)
            continue;
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (lib != NULL && *skip > 0) {
            (*skip)--;
            dlclose(lib);
            continue;
        }
        if (lib != NULL)
            return lib;
        const char *e = dlerror();
        /* dlerror repeats the path: keep what follows it */
        const char *colon = e ? strstr(e, ": ") : NULL;
        snprintf(why, wlen, "%s", colon ? colon + 2 : e ? e : "cannot open");
        size_t used = strlen(tried), n = strlen(path);
        if (used + 2 + n + 4 < len) { /* room for ", " path and a closing "..." */
            if (used) {
                memcpy(tried + used, ", ", 2);
                used += 2;
            }
            memcpy(tried + used, path, n + 1);
        } else if (used + 4 < len && strcmp(tried + used - 3, "...") != 0) {
            memcpy(tried + used, "...", 4);
        }
    }
    return NULL;
}

/* Load a runtime: the library opt->runtime or $GM_CUDART names, or the
 * CUDA 13, 12 and unversioned names in the folder it names; else those
 * names on the library path, then in $CUDA_HOME, $CUDA_PATH and the usual
 * install folders (lib64 and lib of each).  The first `skip` that load are
 * passed over.  *named: a library was named (no other is tried).
 * GM_EUNSUPPORTED listing what was tried when none loads. */
static int gpu_rt_load(gpu_rt_t *rt, const gm_gpu_options_t *opt, unsigned skip, int *named,
                       gm_error_t *err)
{
    memset(rt, 0, sizeof *rt);
    const char *path = opt->runtime ? opt->runtime : getenv("GM_CUDART");
    char tried[1024] = "", why[256] = "";
    struct stat st;
    *named = path != NULL && *path && !(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    if (*named) {
        rt->lib = skip == 0 ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
        if (rt->lib == NULL) {
            const char *e = skip == 0 ? dlerror() : "passed over";
            const char *colon = e ? strstr(e, ": ") : NULL;
            snprintf(why, sizeof why, "%s", colon ? colon + 2 : e ? e : "cannot open");
            snprintf(tried, sizeof tried, "%s", path);
        }
    } else if (path != NULL && *path) {
        rt->lib = gpu_rt_try(path, &skip, tried, sizeof tried, why, sizeof why);
    } else {
        rt->lib = gpu_rt_try(NULL, &skip, tried, sizeof tried, why, sizeof why);
        const char *home = getenv("CUDA_HOME"), *cpath = getenv("CUDA_PATH");
        const char *roots[] = {home && *home ? home : NULL, cpath && *cpath ? cpath : NULL,
                               "/usr/local/cuda", "/usr/local/cuda-13", "/usr/local/cuda-12",
                               "/opt/cuda", "/usr"};
        for (size_t i = 0; i < sizeof roots / sizeof *roots && rt->lib == NULL; i++) {
            static const char *const subs[] = {"lib64", "lib", "targets/x86_64-linux/lib",
                                               "targets/sbsa-linux/lib"};
            for (size_t k = 0; k < sizeof subs / sizeof *subs && rt->lib == NULL; k++) {
                char dir[2048];
                if (roots[i] == NULL ||
                    (size_t)snprintf(dir, sizeof dir, "%s/%s", roots[i], subs[k]) >= sizeof dir ||
                    stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
                    continue;
                rt->lib = gpu_rt_try(dir, &skip, tried, sizeof tried, why, sizeof why);
            }
        }
    }
    if (rt->lib == NULL)
        return gm_error_set(err, GM_EUNSUPPORTED,
                            "no CUDA device: cannot load the CUDA runtime: tried %s (%s; set "
                            "GM_CUDART to the library or its folder)",
                            tried, why);
#define GPU_RESOLVE(name, ret, args)                                                        \
    *(void **)(&rt->name) = dlsym(rt->lib, "cuda" #name);                                   \
    if (rt->name == NULL) {                                                                 \
        gm__gpu_rt_close(rt);                                                                   \
        return gm_error_set(err, GM_EUNSUPPORTED,                                           \
                            "no CUDA device: the CUDA runtime lacks cuda" #name);           \
    }
    GPU_RUNTIME_FUNCS(GPU_RESOLVE)
#undef GPU_RESOLVE
    *(void **)(&rt->GetDriverEntryPointByVersion) =
        dlsym(rt->lib, "cudaGetDriverEntryPointByVersion");
    *(void **)(&rt->GetDeviceProperties) = dlsym(rt->lib, "cudaGetDeviceProperties_v2");
    if (rt->GetDeviceProperties == NULL)
        *(void **)(&rt->GetDeviceProperties) = dlsym(rt->lib, "cudaGetDeviceProperties");
    return 0;
}

/* Load the runtime and select the device; GM_EUNSUPPORTED "no CUDA
 * device: …" when any of it is missing.  A runtime found by the search
 * whose driver is too old for it is passed over for the next one found
 * (libcudart.so.13 on a CUDA 12 driver, libcudart.so.12 beside it). */
int gm__gpu_rt_open(gpu_rt_t *rt, const gm_gpu_options_t *opt, gm_error_t *err)
{
    int count = 0, named = 0, rc;
    cudaError_t e = cudaSuccess;
    for (unsigned skip = 0;; skip++) {
        gm_error_t next;
        if ((rc = gpu_rt_load(rt, opt, skip, &named, skip == 0 ? err : &next)) != 0) {
            if (skip == 0)
                return rc;
            /* none further: the earlier runtime's error stands */
            return gm_error_set(err, GM_EUNSUPPORTED,
                                "no CUDA device: the driver is older than every CUDA runtime "
                                "found (%s)",
                                "CUDA driver version is insufficient for CUDA runtime version");
        }
        count = 0;
        e = rt->GetDeviceCount(&count);
        if (e != cudaErrorInsufficientDriver || named)
            break;
        gm__gpu_rt_close(rt);
    }
    if (e != cudaSuccess || count == 0) {
        const char *msg = e != cudaSuccess ? rt->GetErrorString(e) : "no CUDA-capable device";
        gm_error_set(err, GM_EUNSUPPORTED, "no CUDA device: %s", msg ? msg : "unknown error");
        gm__gpu_rt_close(rt);
        return GM_EUNSUPPORTED;
    }
    if (opt->device < 0 || opt->device >= count) {
        gm__gpu_rt_close(rt);
        return gm_error_set(err, GM_EUNSUPPORTED, "no CUDA device: gpu:%d asked for, %d present",
                            opt->device, count);
    }
    if ((e = rt->SetDevice(opt->device)) != cudaSuccess) {
        gm_error_set(err, GM_EUNSUPPORTED, "no CUDA device: gpu:%d: %s", opt->device,
                     rt->GetErrorString(e));
        gm__gpu_rt_close(rt);
        return GM_EUNSUPPORTED;
    }
    return 0;
}

void gm__gpu_device_name(gpu_rt_t *rt, int device, char *buf, size_t len)
{
    snprintf(buf, len, "gpu:%d", device);
    if (rt->GetDeviceProperties == NULL)
        return;
    /* Room beyond this toolkit's struct, in case the runtime's is larger. */
    union {
        struct cudaDeviceProp prop;
        unsigned char room[sizeof(struct cudaDeviceProp) + 4096];
    } u;
    memset(&u, 0, sizeof u);
    if (rt->GetDeviceProperties(&u.prop, device) == cudaSuccess && u.prop.name[0]) {
        u.prop.name[sizeof u.prop.name - 1] = '\0';
        snprintf(buf, len, "%s", u.prop.name);
    }
}

/* ---- one GPU pass ------------------------------------------------------------ */

typedef struct gpu_samples {
    double *ns;
    size_t n, cap;
} gpu_samples_t;

/* A real virtual range standing for a simulated one. */
typedef struct gpu_range {
    uint64_t sim, size, page; /* simulated base, size, page size */
    CUdeviceptr real;
} gpu_range_t;

typedef struct gpu_pass {
    gpu_rt_t *rt;
    const gm_gpu_options_t *opt;
    gm__idmap_t ptrs;     /* simulated address or allocation id → device pointer */
    gm__idmap_t pages;    /* simulated page address → its handle (expandable ranges) */
    gpu_range_t *ranges;  /* ascending by sim: the device's bump pointer hands them out so */
    size_t nranges, capranges;
    gpu_drv_t drv;        /* resolved at the first range */
    uint64_t granularity; /* the device's, for mapping */
    uint64_t baseline;    /* bytes in use before the pass */
    uint64_t peak_used;   /* in use, minus baseline */
    gpu_samples_t mallocs, frees;
    uint64_t event;       /* index of the event being replayed (direct mode) */
    const gm_replay_t *r; /* the hooked engine, which knows the event (hooked mode) */
    int adopting;         /* the call is an adoption: untimed, not a malloc of the run */
    uint64_t adopted, adopted_bytes; /* the starting layout's allocations and pages */
    int failed;           /* a CUDA error happened: issue nothing more */
    gm_error_t err;       /* the first error */
} gpu_pass_t;

double gm__gpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int gpu_sample_add(gpu_samples_t *s, double ns)
{
    if (GM_VEC_RESERVE(s->ns, s->cap, s->n + 1, 4096))
        return -1;
    s->ns[s->n++] = ns;
    return 0;
}

int gm__gpu_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void gpu_latency(gpu_samples_t *s, gm_gpu_latency_t *out)
{
    memset(out, 0, sizeof *out);
    out->count = s->n;
    if (s->n == 0)
        return;
    qsort(s->ns, s->n, sizeof *s->ns, gm__gpu_cmp_double);
    for (size_t i = 0; i < s->n; i++)
        out->total_ns += s->ns[i];
    out->median_ns = s->n % 2 ? s->ns[s->n / 2] : (s->ns[s->n / 2 - 1] + s->ns[s->n / 2]) / 2;
    size_t k = (size_t)((double)(s->n - 1) * 0.99 + 0.5);
    out->p99_ns = s->ns[k < s->n ? k : s->n - 1];
}

/* The event being replayed: the hooked engine's, in hooked mode. */
static void gpu_where(gpu_pass_t *g)
{
    if (g->r != NULL)
        g->event = gm_replay_position(g->r);
}

/* Keep the first failure (code and message) and stop issuing calls. */
static int gpu_fail_with(gpu_pass_t *g, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int gpu_fail_with(gpu_pass_t *g, int code, const char *fmt, ...)
{
    gpu_where(g);
    if (!g->failed) {
        char what[GM_ERROR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        gm_error_set(&g->err, code, "%s at event %llu", what, (unsigned long long)g->event);
        g->failed = 1;
    }
    return -1;
}

/* A failed call (call, on size bytes) that says why, as gpu_fail_with. */
static int gpu_fail_call(gpu_pass_t *g, const char *call, uint64_t size, const char *why)
{
    gpu_where(g);
    if (!g->failed) {
        char sz[32];
        gm_format_size(size, sz, sizeof sz);
        gm_error_set(&g->err, GM_EIO, "CUDA error at event %llu (%s of %s): %s",
                     (unsigned long long)g->event, call, sz, why);
        g->failed = 1;
    }
    return -1;
}

/* A runtime call's failure. */
static int gpu_fail(gpu_pass_t *g, const char *call, uint64_t size, cudaError_t e)
{
    return gpu_fail_call(g, call, size, g->rt->GetErrorString(e));
}

/* A driver call's failure. */
static int gpu_fail_drv(gpu_pass_t *g, const char *call, uint64_t size, CUresult e)
{
    char why[48];
    snprintf(why, sizeof why, "driver error %d%s", (int)e,
             e == CUDA_ERROR_OUT_OF_MEMORY ? " (out of memory)" : "");
    return gpu_fail_call(g, call, size, why);
}

static uint64_t gpu_used(gpu_pass_t *g)
{
    size_t free_b = 0, total = 0;
    if (g->rt->MemGetInfo(&free_b, &total) != cudaSuccess)
        return 0;
    return (uint64_t)(total - free_b);
}

static void gpu_sample_used(gpu_pass_t *g)
{
    uint64_t used = gpu_used(g);
    uint64_t over = used > g->baseline ? used - g->baseline : 0;
    if (over > g->peak_used)
        g->peak_used = over;
}

/* --touch: write size bytes at ptr on stream, and wait for it untimed, so
 * the write is neither in this malloc's latency nor in a later free's. */
static int gpu_touch(gpu_pass_t *g, void *ptr, uint64_t size, cudaStream_t stream)
{
    if (!g->opt->touch)
        return 0;
    cudaError_t e = g->rt->MemsetAsync(ptr, 0xA5, (size_t)size, stream);
    if (e != cudaSuccess)
        return gpu_fail(g, "cudaMemsetAsync", size, e);
    if ((e = g->rt->StreamSynchronize(stream)) != cudaSuccess)
        return gpu_fail(g, "cudaStreamSynchronize", size, e);
    return 0;
}

/* A device allocation of size bytes recorded under key (cudaMalloc, or
 * from the pool on stream). */
static int gpu_alloc(gpu_pass_t *g, uint64_t key, uint64_t size, cudaMemPool_t pool,
                     cudaStream_t stream)
{
    if (g->failed)
        return -1;
    void *ptr = NULL;
    double t0 = gm__gpu_now_ns();
    cudaError_t e = pool ? g->rt->MallocFromPoolAsync(&ptr, (size_t)size, pool, stream)
                         : g->rt->Malloc(&ptr, (size_t)size);
    double dt = gm__gpu_now_ns() - t0;
    if (e != cudaSuccess)
        return gpu_fail(g, pool ? "cudaMallocFromPoolAsync" : "cudaMalloc", size, e);
    int in = gm__idmap_insert(&g->ptrs, key, (uint64_t)(uintptr_t)ptr);
    if (in != 0 || (!g->adopting && gpu_sample_add(&g->mallocs, dt) != 0)) {
        if (in != 1)
            gm__idmap_remove(&g->ptrs, key, NULL);
        if (pool)
            g->rt->FreeAsync(ptr, stream);
        else
            g->rt->Free(ptr);
        if (in == 1)
            return gpu_fail_with(g, GM_EINVAL,
                                 "a second device allocation under key 0x%llx, whose first "
                                 "is still live,",
                                 (unsigned long long)key);
        return gpu_fail_with(g, GM_ENOMEM, "out of memory");
    }
    if (g->adopting) {
        g->adopted++;
        g->adopted_bytes += size;
    }
    if (gpu_touch(g, ptr, size, stream) != 0)
        return -1;
    gpu_sample_used(g);
    return 0;
}

static void gpu_release(gpu_pass_t *g, uint64_t key, uint64_t size, int async,
                        cudaStream_t stream)
{
    uint64_t ptr;
    if (gm__idmap_remove(&g->ptrs, key, &ptr) != 1)
        return; /* its malloc failed or was never issued */
    if (g->failed) {
        g->rt->Free((void *)(uintptr_t)ptr);
        return;
    }
    double t0 = gm__gpu_now_ns();
    cudaError_t e = async ? g->rt->FreeAsync((void *)(uintptr_t)ptr, stream)
                          : g->rt->Free((void *)(uintptr_t)ptr);
    double dt = gm__gpu_now_ns() - t0;
    if (e != cudaSuccess) {
        gpu_fail(g, async ? "cudaFreeAsync" : "cudaFree", size, e);
        return;
    }
    if (gpu_sample_add(&g->frees, dt) != 0)
        gpu_fail_with(g, GM_ENOMEM, "out of memory");
}

/* ---- expandable ranges: pages mapped as PyTorch maps them ------------------------ */

/* The range holding [addr, addr + size), or NULL. */
static gpu_range_t *gpu_range_find(gpu_pass_t *g, uint64_t addr, uint64_t size)
{
    size_t lo = 0, hi = g->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->ranges[mid].sim <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    gpu_range_t *r = &g->ranges[lo - 1];
    return addr - r->sim < r->size && size <= r->size - (addr - r->sim) ? r : NULL;
}

static CUmemAllocationProp gpu_page_prop(const gpu_pass_t *g)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = g->opt->device;
    return prop;
}

/* Hook: a simulated range of size bytes at addr whose pages are `page`
 * bytes.  The first one resolves the driver and its granularity.  Only a
 * range of whole pages is mapped page by page. */
static int gpu_hook_reserve(void *ctx, uint64_t addr, uint64_t size, uint64_t page)
{
    gpu_pass_t *g = ctx;
    if (g->failed)
        return -1;
    if (g->granularity == 0) {
        gm_error_t e;
        if (gpu_drv_open(g->rt, &g->drv, &e) != 0)
            return gpu_fail_with(g, e.code, "%s", e.msg);
        CUmemAllocationProp prop = gpu_page_prop(g);
        size_t gran = 0;
        CUresult r = g->drv.cuMemGetAllocationGranularity(&gran, &prop,
                                                          CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        if (r != CUDA_SUCCESS || gran == 0)
            return gpu_fail_drv(g, "cuMemGetAllocationGranularity", 0, r);
        g->granularity = gran;
    }
    /* A range that is not whole pages (a recorded ordinary segment adopted
     * at an alignment) holds one block: cudaMalloc serves it. */
    if (page == 0 || size % page != 0)
        return 0;
    if (page % g->granularity != 0) {
        char p[32], gr[32];
        gm_format_size(page, p, sizeof p);
        gm_format_size(g->granularity, gr, sizeof gr);
        return gpu_fail_with(g, GM_EUNSUPPORTED,
                             "cannot map pages of %s: the device maps in multiples of %s", p, gr);
    }
    if (g->nranges > 0 && g->ranges[g->nranges - 1].sim >= addr)
        return gpu_fail_with(g, GM_EINVAL, "simulated ranges out of order");
    if (GM_VEC_RESERVE(g->ranges, g->capranges, g->nranges + 1, 8))
        return gpu_fail_with(g, GM_ENOMEM, "out of memory");
    CUdeviceptr real = 0;
    CUresult r = g->drv.cuMemAddressReserve(&real, (size_t)size, 0, 0, 0);
    if (r != CUDA_SUCCESS)
        return gpu_fail_drv(g, "cuMemAddressReserve", size, r);
    g->ranges[g->nranges++] = (gpu_range_t){addr, size, page, real};
    return 0;
}

/* Unmap and release the page at simulated address at (handle h) of range
 * rg. */
static CUresult gpu_page_drop(gpu_pass_t *g, const gpu_range_t *rg, uint64_t at, uint64_t h)
{
    CUresult r = g->drv.cuMemUnmap(rg->real + (at - rg->sim), (size_t)rg->page);
    CUresult r2 = g->drv.cuMemRelease((CUmemGenericAllocationHandle)h);
    return r != CUDA_SUCCESS ? r : r2;
}

/* Map [addr, addr + size) of range rg, page by page. */
static int gpu_map(gpu_pass_t *g, gpu_range_t *rg, uint64_t addr, uint64_t size)
{
    CUmemAllocationProp prop = gpu_page_prop(g);
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    double t0 = gm__gpu_now_ns();
    for (uint64_t at = addr; at < addr + size; at += rg->page) {
        CUmemGenericAllocationHandle h = 0;
        CUdeviceptr real = rg->real + (at - rg->sim);
        CUresult r = g->drv.cuMemCreate(&h, (size_t)rg->page, &prop, 0);
        if (r != CUDA_SUCCESS)
            return gpu_fail_drv(g, "cuMemCreate", rg->page, r);
        if ((r = g->drv.cuMemMap(real, (size_t)rg->page, 0, h, 0)) != CUDA_SUCCESS) {
            g->drv.cuMemRelease(h);
            return gpu_fail_drv(g, "cuMemMap", rg->page, r);
        }
        int in = gm__idmap_insert(&g->pages, at, (uint64_t)h);
        if (in != 0) {
            g->drv.cuMemUnmap(real, (size_t)rg->page);
            g->drv.cuMemRelease(h);
            if (in == 1)
                return gpu_fail_with(g, GM_EINVAL,
                                     "a page mapped twice (simulated address 0x%llx)",
                                     (unsigned long long)at);
            return gpu_fail_with(g, GM_ENOMEM, "out of memory");
        }
        if ((r = g->drv.cuMemSetAccess(real, (size_t)rg->page, &access, 1)) != CUDA_SUCCESS)
            return gpu_fail_drv(g, "cuMemSetAccess", rg->page, r);
    }
    if (g->adopting) {
        g->adopted++;
        g->adopted_bytes += size;
    } else if (gpu_sample_add(&g->mallocs, gm__gpu_now_ns() - t0) != 0) {
        return gpu_fail_with(g, GM_ENOMEM, "out of memory");
    }
    if (gpu_touch(g, (void *)(uintptr_t)(rg->real + (addr - rg->sim)), size, NULL) != 0)
        return -1;
    gpu_sample_used(g);
    return 0;
}

/* Unmap [addr, addr + size) of range rg, page by page. */
static void gpu_unmap(gpu_pass_t *g, const gpu_range_t *rg, uint64_t addr, uint64_t size)
{
    double t0 = gm__gpu_now_ns();
    for (uint64_t at = addr; at < addr + size; at += rg->page) {
        uint64_t h;
        if (gm__idmap_remove(&g->pages, at, &h) != 1) {
            if (!g->failed) /* after a failure, pages may never have been mapped */
                gpu_fail_with(g, GM_EINVAL, "an unmap of a page not mapped (simulated address 0x%llx)",
                              (unsigned long long)at);
            continue;
        }
        CUresult r = gpu_page_drop(g, rg, at, h);
        if (r != CUDA_SUCCESS && !g->failed)
            gpu_fail_drv(g, "cuMemUnmap", rg->page, r);
    }
    if (!g->failed && gpu_sample_add(&g->frees, gm__gpu_now_ns() - t0) != 0)
        gpu_fail_with(g, GM_ENOMEM, "out of memory");
}

/* Free everything still allocated (after an error, or what the trace left
 * live), without timing it: blocks, pages, then the ranges. */
static void gpu_release_all(gpu_pass_t *g)
{
    size_t pos = 0;
    uint64_t key, ptr;
    while (gm__idmap_next(&g->ptrs, &pos, &key, &ptr))
        g->rt->Free((void *)(uintptr_t)ptr);
    gm__idmap_release(&g->ptrs);
    gm__idmap_init(&g->ptrs);
    pos = 0;
    while (gm__idmap_next(&g->pages, &pos, &key, &ptr)) {
        const gpu_range_t *rg = gpu_range_find(g, key, 1);
        if (rg != NULL)
            gpu_page_drop(g, rg, key, ptr);
    }
    gm__idmap_release(&g->pages);
    gm__idmap_init(&g->pages);
    for (size_t i = 0; i < g->nranges; i++)
        g->drv.cuMemAddressFree(g->ranges[i].real, (size_t)g->ranges[i].size);
    g->nranges = 0;
}

static void gpu_pass_release(gpu_pass_t *g)
{
    gm__idmap_release(&g->ptrs);
    gm__idmap_release(&g->pages);
    free(g->ranges);
    free(g->mallocs.ns);
    free(g->frees.ns);
}

/* Device hooks of the simulated-policy mode: the key is the simulated
 * address; inside a reserved range whole pages are mapped instead. */
static int gpu_hook_malloc(void *ctx, uint64_t addr, uint64_t size)
{
    gpu_pass_t *g = ctx;
    gpu_where(g);
    gpu_range_t *rg = gpu_range_find(g, addr, size);
    if (rg != NULL && (addr - rg->sim) % rg->page == 0 && size % rg->page == 0)
        return g->failed ? -1 : gpu_map(g, rg, addr, size);
    return gpu_alloc(g, addr, size, NULL, NULL);
}

static void gpu_hook_free(void *ctx, uint64_t addr, uint64_t size)
{
    gpu_pass_t *g = ctx;
    gpu_where(g);
    gpu_range_t *rg = gpu_range_find(g, addr, size);
    if (rg != NULL && (addr - rg->sim) % rg->page == 0 && size % rg->page == 0) {
        gpu_unmap(g, rg, addr, size);
        return;
    }
    gpu_release(g, addr, size, 0, NULL);
}

/* The starting layout's memory (gm_device_adopt): allocated on the GPU as
 * the policy's mallocs are, but untimed and counted apart, since the
 * recorded allocator held it before the trace began. */
static int gpu_hook_adopt(void *ctx, uint64_t addr, uint64_t size)
{
    gpu_pass_t *g = ctx;
    g->adopting = 1;
    int rc = gpu_hook_malloc(ctx, addr, size);
    g->adopting = 0;
    return rc;
}

static const gm_device_hooks_t gpu_hooks = {
    .malloc = gpu_hook_malloc,
    .free = gpu_hook_free,
    .reserve_va = gpu_hook_reserve,
    .adopt = gpu_hook_adopt,
};

/* Direct mode (native, async): read the trace and issue each request. */
static int gpu_direct(gpu_pass_t *g, gm_store_t *s, const char *name, int async,
                      uint64_t threshold, gm_gpu_measured_t *m, gm_error_t *err)
{
    gpu_rt_t *rt = g->rt;
    gm_reader_t *rd;
    int rc = gm_reader_open(s, name, &rd, err);
    if (rc)
        return rc;
    int64_t sync_tag = gm_reader_find_tag(rd, "synchronize");
    int64_t empty_tag = gm_reader_find_tag(rd, "empty_cache");
    uint32_t nstreams = gm_reader_stream_count(rd);
    cudaStream_t *streams = calloc(nstreams ? nstreams : 1, sizeof *streams);
    cudaMemPool_t pool = NULL;
    uint64_t *sizes = NULL; /* live sizes by id, for messages */
    if (streams == NULL) {
        gm_reader_close(rd);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    cudaError_t e = cudaSuccess;
    if (async) {
        struct cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = g->opt->device;
        e = rt->MemPoolCreate(&pool, &props);
        if (e == cudaSuccess) {
            uint64_t t = threshold;
            e = rt->MemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &t);
        }
        for (uint32_t i = 0; e == cudaSuccess && i < nstreams; i++)
            e = rt->StreamCreateWithFlags(&streams[i], cudaStreamNonBlocking);
        if (e != cudaSuccess)
            gpu_fail(g, "pool and stream set-up", 0, e);
    }
    const gm_event_t *ev;
    size_t n;
    uint64_t index = 0;
    (void)sizes;
    while (!g->failed && (rc = gm_reader_next(rd, &ev, &n, err)) == 0 && n > 0) {
        for (size_t i = 0; i < n && !g->failed; i++, index++) {
            const gm_event_t *x = &ev[i];
            g->event = index;
            cudaStream_t st = async && x->stream < nstreams ? streams[x->stream] : NULL;
            switch (x->op) {
            case GM_OP_ALLOC: gpu_alloc(g, x->id, x->size, pool, st); break;
            case GM_OP_FREE: gpu_release(g, x->id, 0, async, st); break;
            case GM_OP_MARK:
                if (async && ((int64_t)x->tag == sync_tag || (int64_t)x->tag == empty_tag)) {
                    e = rt->DeviceSynchronize();
                    if (e == cudaSuccess && (int64_t)x->tag == empty_tag)
                        e = rt->MemPoolTrimTo(pool, 0);
                    if (e != cudaSuccess)
                        gpu_fail(g, "cudaDeviceSynchronize", 0, e);
                    else
                        gpu_sample_used(g);
                }
                break;
            default: break;
            }
        }
    }
    gm_reader_close(rd);
    if (async && pool != NULL) {
        /* What the trace left live goes back to the pool before its figures
         * are read. */
        size_t pos = 0;
        uint64_t key, ptr;
        while (gm__idmap_next(&g->ptrs, &pos, &key, &ptr))
            rt->FreeAsync((void *)(uintptr_t)ptr, NULL);
        gm__idmap_release(&g->ptrs);
        gm__idmap_init(&g->ptrs);
        rt->DeviceSynchronize();
        uint64_t v = 0;
        if (rt->MemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &v) == cudaSuccess)
            m->pool_reserved_high = v;
        v = 0;
        if (rt->MemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &v) == cudaSuccess)
            m->pool_used_high = v;
        m->pool = 1;
        rt->MemPoolDestroy(pool);
    }
    for (uint32_t i = 0; i < nstreams; i++)
        if (streams[i] != NULL)
            rt->StreamDestroy(streams[i]);
    free(streams);
    return rc;
}

/* The async policy's release threshold parameter, if it has one. */
static uint64_t gpu_threshold(const gm_params_t *params)
{
    for (size_t i = 0; i < params->ops->nparams; i++) {
        const gm_param_spec_t *spec = &params->ops->params[i];
        if (strcmp(spec->name, "release_threshold") == 0 && spec->type == GM_PARAM_SIZE)
            return params->values[i].size;
    }
    return 0;
}

/* Simulate the policy over the trace with cfg (and hooks, when given). */
static int gpu_simulate(gm_store_t *s, const char *name, const gm_params_t *params,
                        const gm_replay_config_t *cfg, gm_replay_t **out, gm_error_t *err)
{
    gm_replay_t *r;
    int rc = gm_replay_create(cfg, &r, err);
    if (rc == 0 && (rc = gm_replay_add(r, params, err)) == 0)
        rc = gm_replay_trace(r, s, name, err);
    if (rc) {
        gm_replay_destroy(r);
        return rc;
    }
    *out = r;
    return 0;
}

int gm_gpu_replay(gm_store_t *s, const char *name, const gm_params_t *params,
                  const gm_replay_config_t *cfg, const gm_gpu_options_t *opt,
                  gm_replay_t **out_r, gm_gpu_measured_t *m, gm_error_t *err)
{
    gm_replay_config_t base;
    if (cfg == NULL) {
        gm_replay_config_default(&base);
        cfg = &base;
    }
    memset(m, 0, sizeof *m);
    gpu_rt_t rt;
    int rc = gm__gpu_rt_open(&rt, opt, err);
    if (rc)
        return rc;
    gm__gpu_device_name(&rt, opt->device, m->device_name, sizeof m->device_name);

    /* The simulation first: its peak is what the GPU must hold. */
    gm_replay_t *sim = NULL;
    if ((rc = gpu_simulate(s, name, params, cfg, &sim, err)) != 0) {
        gm__gpu_rt_close(&rt);
        return rc;
    }
    const char *policy = params->ops->name;
    int native = strcmp(policy, "native") == 0, async = strcmp(policy, "async") == 0;
    uint64_t expected = native || async ? gm_replay_load(sim) : gm_replay_metrics(sim, 0)->peak_reserved;
    size_t free_b = 0, total = 0;
    cudaError_t e = rt.MemGetInfo(&free_b, &total);
    if (e != cudaSuccess) {
        gm_replay_destroy(sim);
        gm_error_set(err, GM_EIO, "cudaMemGetInfo: %s", rt.GetErrorString(e));
        gm__gpu_rt_close(&rt);
        return GM_EIO;
    }
    m->total_bytes = total;
    if (expected > free_b && !opt->force) {
        char need[32], have[32];
        gm_format_size(expected, need, sizeof need);
        gm_format_size(free_b, have, sizeof have);
        gm_replay_destroy(sim);
        gm__gpu_rt_close(&rt);
        return gm_error_set(err, GM_EINVAL,
                            "trace '%s' needs about %s under %s but %s (gpu:%d) has %s free "
                            "(--force to try anyway)",
                            name, need, policy, m->device_name, opt->device, have);
    }

    gpu_pass_t g;
    memset(&g, 0, sizeof g);
    g.rt = &rt;
    g.opt = opt;
    gm__idmap_init(&g.ptrs);
    gm__idmap_init(&g.pages);
    g.baseline = (uint64_t)(total - free_b);
    m->baseline_used = g.baseline;
    double t0 = gm__gpu_now_ns();
    if (native || async) {
        rc = gpu_direct(&g, s, name, async, gpu_threshold(params), m, err);
    } else {
        /* The policy's own device calls, issued as they happen. */
        gm_replay_config_t hooked = *cfg;
        hooked.device.hooks = &gpu_hooks;
        hooked.device.hooks_ctx = &g;
        gm_replay_t *r2 = NULL;
        rc = gm_replay_create(&hooked, &r2, err);
        if (rc == 0) {
            g.r = r2;
            if ((rc = gm_replay_add(r2, params, err)) == 0)
                rc = gm_replay_trace(r2, s, name, err);
        }
        if (rc == 0) {
            gm_replay_destroy(sim);
            sim = r2;
        } else {
            gm_replay_destroy(r2);
        }
    }
    rt.DeviceSynchronize();
    m->wall_s = (gm__gpu_now_ns() - t0) * 1e-9;
    gpu_release_all(&g);
    if (rc == 0 && g.failed) {
        *err = g.err;
        rc = g.err.code;
    }
    m->peak_used = g.peak_used;
    m->adopted = g.adopted;
    m->adopted_bytes = g.adopted_bytes;
    gpu_latency(&g.mallocs, &m->malloc_latency);
    gpu_latency(&g.frees, &m->free_latency);
    gpu_pass_release(&g);
    gm__gpu_rt_close(&rt);
    if (rc) {
        gm_replay_destroy(sim);
        return rc;
    }
    *out_r = sim;
    return 0;
}
