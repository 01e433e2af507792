/*
 * tests/capture/gmcap_app.c — the program the capture tests run, linked
 * against the fake CUDA runtime and driver.  `gmcap-app MODE [ARGS]`:
 *
 *   basic        one call of every kind on two devices, NVTX ranges, an
 *                out-of-memory failure; prints two lines, exits 3
 *   threads T N  T threads × N cudaMalloc/cudaFree pairs, sizes
 *                t·10^7 + i + 1 (all distinct)
 *   fork         allocates in the parent, forks a child that allocates
 *   kill N       N pairs (sizes 1..N), prints "ready", then goes on (sizes
 *                N+1, …) until killed
 *   segv N       N pairs, then a null-pointer write
 *   exit N       N allocations, then _exit(5)
 *   procaddr     driver calls through cuGetProcAddress[_v2] and
 *                cudaGetDriverEntryPoint
 *   torch        gmsim_torch_alloc/free found with dlsym (exit 4 if absent)
 *   nvtx3        NVTX v3 injection driven by hand (as the NVTX headers do)
 *   inject       CUDA_INJECTION64_PATH's InitializeInjection called by hand
 *                (as the driver does), then one pair of size 4242
 *   bench N      N cudaMalloc/cudaFree pairs; prints the ns per call
 *
 * Every failure of a call prints what failed and exits 1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long long dptr_t;

int cudaSetDevice(int d);
int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);
int cudaMallocAsync(void **p, size_t size, void *stream);
int cudaFreeAsync(void *p, void *stream);
int cudaMallocFromPoolAsync(void **p, size_t size, void *pool, void *stream);
int cudaMallocManaged(void **p, size_t size, unsigned flags);
int cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height);
int cudaGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long flags, int *status);
int cuMemAlloc_v2(dptr_t *p, size_t size);
int cuMemFree_v2(dptr_t p);
int cuMemAllocAsync(dptr_t *p, size_t size, void *stream);
int cuMemFreeAsync(dptr_t p, void *stream);
int cuMemAllocManaged(dptr_t *p, size_t size, unsigned flags);
int cuMemCreate(unsigned long long *h, size_t size, const void *prop, unsigned long long flags);
int cuMemRelease(unsigned long long h);
int cuMemMap(dptr_t p, size_t size, size_t off, unsigned long long h, unsigned long long flags);
int cuMemUnmap(dptr_t p, size_t size);
int cuGetProcAddress(const char *sym, void **pfn, int ver, unsigned long long flags);
int cuGetProcAddress_v2(const char *sym, void **pfn, int ver, unsigned long long flags,
                        int *status);
int nvtxRangePushA(const char *m);
int nvtxRangePop(void);
uint64_t nvtxRangeStartA(const char *m);
void nvtxRangeEnd(uint64_t id);

#define CHECK(call)                                                   \
    do {                                                              \
        int rc_ = (call);                                             \
        if (rc_ != 0) {                                               \
            fprintf(stderr, "gmcap-app: %s failed: %d\n", #call, rc_); \
            exit(1);                                                  \
        }                                                             \
    } while (0)

#define S(x) ((void *)(uintptr_t)(x))

static void app_pair(size_t size)
{
    void *p;
    CHECK(cudaMalloc(&p, size));
    CHECK(cudaFree(p));
}

static int app_basic(void)
{
    void *a, *b, *c, *d, *e;
    dptr_t f, g, h;
    size_t pitch;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&a, 1000));
    CHECK(cudaMallocAsync(&b, 2000, S(0x10)));
    CHECK(cudaMallocManaged(&c, 3000, 1));
    CHECK(cudaMallocPitch(&d, &pitch, 100, 10));
    CHECK(cudaMallocFromPoolAsync(&e, 4000, S(0x77), S(0x20)));
    nvtxRangePushA("forward");
    CHECK(cudaSetDevice(1));
    CHECK(cuMemAlloc_v2(&f, 5000));
    CHECK(cuMemAllocAsync(&g, 6000, S(0x30)));
    CHECK(cuMemAllocManaged(&h, 7000, 1));
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(S(f))); /* a device-1 allocation freed with device 0 current */
    nvtxRangePop();
    int prop[8] = {1, 0, 1, 1, 0, 0, 0, 0}; /* location id (device) 1 at byte 12 */
    unsigned long long handle;
    CHECK(cuMemCreate(&handle, 2 << 20, prop, 0));
    CHECK(cuMemMap(0x7000000, 2 << 20, 0, handle, 0));
    uint64_t r = nvtxRangeStartA("step");
    void *big;
    if (cudaMalloc(&big, (size_t)1 << 50) != 2) {
        fprintf(stderr, "gmcap-app: the huge cudaMalloc did not fail\n");
        return 1;
    }
    CHECK(cudaFree(NULL));
    nvtxRangeEnd(r);
    CHECK(cuMemUnmap(0x7000000, 2 << 20));
    CHECK(cuMemRelease(handle));
    CHECK(cudaFree(a));
    CHECK(cudaFreeAsync(b, S(0x10)));
    CHECK(cudaFree(c));
    CHECK(cudaFree(d));
    CHECK(cudaFreeAsync(e, S(0x20)));
    CHECK(cuMemFreeAsync(g, S(0x30)));
    CHECK(cuMemFree_v2(h));
    printf("gmcap-app: basic done, pitch %zu\n", pitch);
    fprintf(stderr, "gmcap-app: a line on stderr\n");
    return 3;
}

typedef struct app_thread {
    int t;
    long n;
} app_thread_t;

static pthread_barrier_t app_barrier;

static void *app_thread(void *arg)
{
    app_thread_t *a = arg;
    pthread_barrier_wait(&app_barrier); /* all alive at once */
    for (long i = 0; i < a->n; i++)
        app_pair((size_t)a->t * 10000000u + (size_t)i + 1);
    return NULL;
}

static int app_threads(int t, long n)
{
    static pthread_t th[512];
    static app_thread_t args[512];
    if (t > 512)
        t = 512;
    pthread_barrier_init(&app_barrier, NULL, (unsigned)t);
    for (int i = 0; i < t; i++) {
        args[i] = (app_thread_t){i, n};
        if (pthread_create(&th[i], NULL, app_thread, &args[i]) != 0)
            return 1;
    }
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    printf("gmcap-app: %d threads done\n", t);
    return 0;
}

static int app_fork(void)
{
    void *p, *q;
    CHECK(cudaMalloc(&p, 111));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        app_pair(222);
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(cudaMalloc(&q, 333));
    CHECK(cudaFree(q));
    CHECK(cudaFree(p));
    printf("gmcap-app: child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "failed");
    return 0;
}

static _Noreturn void app_kill(long n)
{
    for (long i = 0; i < n; i++)
        app_pair((size_t)i + 1);
    printf("ready\n");
    fflush(stdout);
    for (long i = n;; i++)
        app_pair((size_t)i + 1);
}

static int app_procaddr(void)
{
    void *fn;
    int status;
    dptr_t p;
    CHECK(cuGetProcAddress_v2("cuMemAlloc", &fn, 12000, 0, &status));
    CHECK(((int (*)(dptr_t *, size_t))fn)(&p, 4096));
    CHECK(cuGetProcAddress("cuMemFree", &fn, 3020, 0));
    CHECK(((int (*)(dptr_t))fn)(p));
    CHECK(cudaGetDriverEntryPoint("cuMemAllocAsync", &fn, 2, NULL));
    CHECK(((int (*)(dptr_t *, size_t, void *))fn)(&p, 8192, S(0x40)));
    CHECK(cuGetProcAddress_v2("cuGetProcAddress", &fn, 12000, 0, NULL));
    void *fn2;
    CHECK(((int (*)(const char *, void **, int, unsigned long long, int *))fn)(
        "cuMemFreeAsync", &fn2, 12000, 2, NULL));
    CHECK(((int (*)(dptr_t, void *))fn2)(p, S(0x40)));
    printf("gmcap-app: procaddr done\n");
    return 0;
}

static int app_torch(void)
{
    void *(*alloc)(ssize_t, int, void *) =
        (void *(*)(ssize_t, int, void *))dlsym(RTLD_DEFAULT, "gmsim_torch_alloc");
    void (*fr)(void *, ssize_t, int, void *) =
        (void (*)(void *, ssize_t, int, void *))dlsym(RTLD_DEFAULT, "gmsim_torch_free");
    if (alloc == NULL || fr == NULL) {
        printf("gmcap-app: no torch hook\n");
        return 4;
    }
    void *p = alloc(512, 0, S(0x5));
    void *q = alloc(1536, 0, S(0x5));
    if (p == NULL || q == NULL)
        return 1;
    fr(p, 512, 0, S(0x5));
    fr(q, 1536, 0, S(0x5));
    printf("gmcap-app: torch done\n");
    return 0;
}

/* What the NVTX v3 headers do with NVTX_INJECTION64_PATH: load the library,
 * call InitializeInjectionNvtx2 with an export-table getter, then call
 * through the function table it filled. */
typedef void (*nvtx_fp)(void);
static nvtx_fp nvtx_slots[32];
static nvtx_fp *nvtx_table[32];

static int nvtx_get_module(int module, nvtx_fp ***table, unsigned *size)
{
    if (module != 1)
        return 0;
    for (int i = 0; i < 32; i++)
        nvtx_table[i] = &nvtx_slots[i];
    *table = nvtx_table;
    *size = 31;
    return 1;
}

static const struct {
    size_t size;
    int (*get)(int, nvtx_fp ***, unsigned *);
} nvtx_callbacks = {sizeof nvtx_callbacks, nvtx_get_module};

static const void *nvtx_export(uint32_t id) { return id == 1 ? &nvtx_callbacks : NULL; }

static int app_nvtx3(void)
{
    const char *path = getenv("NVTX_INJECTION64_PATH");
    void *lib = path ? dlopen(path, RTLD_NOW) : NULL;
    int (*init)(const void *(*)(uint32_t)) =
        lib ? (int (*)(const void *(*)(uint32_t)))dlsym(lib, "InitializeInjectionNvtx2") : NULL;
    if (init == NULL || !init(nvtx_export)) {
        printf("gmcap-app: no nvtx injection\n");
        return 4;
    }
    ((int (*)(const char *))nvtx_slots[9])("layer1");
    app_pair(64);
    ((int (*)(void))nvtx_slots[11])();
    printf("gmcap-app: nvtx3 done\n");
    return 0;
}

static int app_inject(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    void *lib = path ? dlopen(path, RTLD_NOW) : NULL;
    int (*init)(void) = lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
    if (init == NULL) {
        printf("gmcap-app: no cuda injection\n");
        return 4;
    }
    init();
    app_pair(4242);
    printf("gmcap-app: inject done\n");
    return 0;
}

static int app_bench(long n)
{
    struct timespec t0, t1;
    app_pair(16); /* resolve everything first */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++)
        app_pair(256);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%.3f\n", ns / (2.0 * (double)n));
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    long n = argc > 2 ? atol(argv[2]) : 0;
    if (strcmp(mode, "basic") == 0)
        return app_basic();
    if (strcmp(mode, "threads") == 0 && argc > 3)
        return app_threads((int)n, atol(argv[3]));
    if (strcmp(mode, "fork") == 0)
        return app_fork();
    if (strcmp(mode, "kill") == 0)
        app_kill(n);
    if (strcmp(mode, "segv") == 0) {
        for (long i = 0; i < n; i++)
            app_pair((size_t)i + 1);
        *(volatile int *)(uintptr_t)argc = 1; /* argc is small: not a valid address */
        return 0;
    }
    if (strcmp(mode, "exit") == 0) {
        void *p;
        for (long i = 0; i < n; i++)
            CHECK(cudaMalloc(&p, (size_t)i + 1));
        _exit(5);
    }
    if (strcmp(mode, "procaddr") == 0)
        return app_procaddr();
    if (strcmp(mode, "torch") == 0)
        return app_torch();
    if (strcmp(mode, "nvtx3") == 0)
        return app_nvtx3();
    if (strcmp(mode, "inject") == 0)
        return app_inject();
    if (strcmp(mode, "bench") == 0)
        return app_bench(n);
    fprintf(stderr, "usage: gmcap-app basic|threads T N|fork|kill N|segv N|exit N|procaddr|"
                    "torch|nvtx3|inject|bench N\n");
    return 2;
}
