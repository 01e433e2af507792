/*
 * tests/test_gpu.c — the real-GPU backend against a fake CUDA runtime
 * (tests/gpu/fake_cudart.c, loaded in place of libcudart): the three modes
 * (native, async pool, a simulated policy's device calls), the bookkeeping
 * that measured figures rest on (in-use sampling, pairing of every malloc
 * with its free, latencies counted per call), the free-memory check, CUDA
 * errors named with their event index and followed by freeing everything,
 * the no-device paths, --touch, and calibration into a cost profile that
 * the simulated device then uses.  What only a GPU can tell — real
 * latencies, the driver's own rounding — awaits scripts/gpu-check.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#if GM_HAVE_CUDA

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static gm_store_t *gpu_store;
static void *gpu_fake; /* held open so the fake's state outlives each replay */

static void gpu_env_reset(void)
{
    unsetenv("FAKE_CUDA_TOTAL");
    unsetenv("FAKE_CUDA_BASELINE");
    unsetenv("FAKE_CUDA_FAIL_MALLOC");
    unsetenv("FAKE_CUDA_DEVICES");
    unsetenv("FAKE_CUDA_LOG");
    unsetenv("FAKE_CUDA_GRANULARITY");
    unsetenv("FAKE_CUDA_VMM_GRANULARITY");
    unsetenv("FAKE_CUDA_MEMSET_US");
    unsetenv("FAKE_CUDA_OLD_DRIVER_FOR");
    unsetenv("FAKE_CUDA_POOL_CHUNK");
    unsetenv("FAKE_CUDA_POOL_ALIGN");
}

/* A seeded workload (random sizes, bounded live set) and a small trace
 * with two streams and synchronize/empty_cache marks. */
static void gpu_setup(void)
{
    gpu_env_reset();
    gpu_fake = dlopen(GM_FAKE_CUDART, RTLD_NOW);
    cr_assert_not_null(gpu_fake, "%s", dlerror());
    gm_error_t err;
    const char *path = gt_tmpfile("gpu.db");
    unlink(path);
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &gpu_store, &err), 0, "%s", err.msg);
    gm_writer_t *w;
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = 4000;
    wc.seed = 3;
    wc.live_max = 2 * GiB;
    cr_assert_eq(gm_writer_begin(gpu_store, "random", 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_workload_write(&wc, w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);

    cr_assert_eq(gm_writer_begin(gpu_store, "streams", 0, &w, &err), 0, "%s", err.msg);
    uint32_t s0, s1, sync, empty;
    cr_assert_eq(gm_writer_stream(w, 0, &s0, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 7, &s1, &err), 0);
    cr_assert_eq(gm_writer_tag(w, "synchronize", &sync, &err), 0);
    cr_assert_eq(gm_writer_tag(w, "empty_cache", &empty, &err), 0);
    gm_event_t ev[] = {
        {.op = GM_OP_ALLOC, .id = 0, .size = 3 * MiB, .stream = s0},
        {.op = GM_OP_ALLOC, .id = 1, .size = 5 * MiB + 100, .stream = s1},
        {.op = GM_OP_FREE, .id = 0, .stream = s0},
        {.op = GM_OP_MARK, .tag = sync},
        {.op = GM_OP_ALLOC, .id = 2, .size = 1 * MiB, .stream = s0},
        {.op = GM_OP_FREE, .id = 1, .stream = s1},
        {.op = GM_OP_MARK, .tag = empty},
        {.op = GM_OP_FREE, .id = 2, .stream = s0},
    };
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
        cr_assert_eq(gm_writer_add(w, &ev[i], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);

    /* Under caching with expandable segments (20 MiB large pages): 0 maps
     * pages 0-1 in one map, 1 maps page 2; empty_cache then unmaps page 0
     * alone, part of the first map; 3 maps it again, and so on. */
    cr_assert_eq(gm_writer_begin(gpu_store, "pages", 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_stream(w, 0, &s0, &err), 0);
    cr_assert_eq(gm_writer_tag(w, "empty_cache", &empty, &err), 0);
    gm_event_t pv[] = {
        {.op = GM_OP_ALLOC, .id = 0, .size = 30 * MiB, .stream = s0},
        {.op = GM_OP_ALLOC, .id = 1, .size = 30 * MiB, .stream = s0},
        {.op = GM_OP_ALLOC, .id = 2, .size = 100 << 10, .stream = s0},
        {.op = GM_OP_FREE, .id = 0, .stream = s0},
        {.op = GM_OP_MARK, .tag = empty},
        {.op = GM_OP_ALLOC, .id = 3, .size = 15 * MiB, .stream = s0},
        {.op = GM_OP_ALLOC, .id = 4, .size = 45 * MiB, .stream = s0},
        {.op = GM_OP_FREE, .id = 1, .stream = s0},
        {.op = GM_OP_FREE, .id = 2, .stream = s0},
        {.op = GM_OP_MARK, .tag = empty},
        {.op = GM_OP_ALLOC, .id = 5, .size = 70 * MiB, .stream = s0},
        {.op = GM_OP_FREE, .id = 3, .stream = s0},
        {.op = GM_OP_FREE, .id = 4, .stream = s0},
        {.op = GM_OP_MARK, .tag = empty},
        {.op = GM_OP_FREE, .id = 5, .stream = s0},
    };
    for (size_t i = 0; i < sizeof pv / sizeof pv[0]; i++)
        cr_assert_eq(gm_writer_add(w, &pv[i], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);

    /* A recorded starting layout: one 20 MiB segment holding the
     * pre-existing allocation 0 between two free blocks. */
    cr_assert_eq(gm_writer_begin(gpu_store, "warm", 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_stream(w, 0, &s0, &err), 0);
    gm_event_t wv[] = {
        {.op = GM_OP_ALLOC, .id = 0, .size = 6000000, .stream = s0, .flags = GM_EVENT_PREEXISTING},
        {.op = GM_OP_ALLOC, .id = 1, .size = 30 * MiB, .stream = s0},
        {.op = GM_OP_FREE, .id = 0, .stream = s0},
        {.op = GM_OP_FREE, .id = 1, .stream = s0},
    };
    for (size_t i = 0; i < sizeof wv / sizeof wv[0]; i++)
        cr_assert_eq(gm_writer_add(w, &wv[i], &err), 0, "%s", err.msg);
    gm_layout_segment_t seg = {.address = 0x7f0000000000, .size = 20 * MiB,
                               .pool = GM_POOL_LARGE, .first_block = 0, .nblocks = 3};
    gm_layout_block_t blk[] = {{0, 2 * MiB, 0, GM_LAYOUT_FREE},
                               {2 * MiB, 6 * MiB, 6000000, 0},
                               {8 * MiB, 12 * MiB, 0, GM_LAYOUT_FREE}};
    gm_layout_t lay = {&seg, 1, blk, 3};
    cr_assert_eq(gm_writer_layout(w, &lay, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
}

static void gpu_teardown(void)
{
    gm_store_close(gpu_store);
    dlclose(gpu_fake);
    gpu_env_reset();
}

TestSuite(gpu, .init = gpu_setup, .fini = gpu_teardown);

static gm_gpu_options_t gpu_opts(void)
{
    gm_gpu_options_t o = {.device = 0, .runtime = GM_FAKE_CUDART};
    return o;
}

/* Replay trace on the fake GPU under policy, with one parameter set when
 * key is not NULL. */
static int gpu_run_with(const char *trace, const char *policy, const char *key,
                        const char *value, const gm_gpu_options_t *o, gm_replay_t **r,
                        gm_gpu_measured_t *m, gm_error_t *err)
{
    gm_params_t params;
    cr_assert_eq(gm_params_init(&params, gm_policy_find(policy), err), 0);
    if (key != NULL)
        cr_assert_eq(gm_params_set(&params, key, value, err), 0, "%s", err->msg);
    int rc = gm_gpu_replay(gpu_store, trace, &params, NULL, o, r, m, err);
    gm_params_release(&params);
    return rc;
}

static int gpu_run(const char *trace, const char *policy, const gm_gpu_options_t *o,
                   gm_replay_t **r, gm_gpu_measured_t *m, gm_error_t *err)
{
    return gpu_run_with(trace, policy, NULL, NULL, o, r, m, err);
}

/* Occurrences of needle in the text. */
static size_t gpu_count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* The fake's live-block count, through the same loaded library. */
static size_t gpu_fake_live(void)
{
    size_t (*live)(void);
    *(void **)(&live) = dlsym(gpu_fake, "fake_cuda_live");
    return live ? live() : (size_t)-1;
}

Test(gpu, native_measures_what_it_simulates)
{
    gm_gpu_options_t o = gpu_opts();
    gm_replay_t *r;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run("random", "native", &o, &r, &m, &err), 0, "%s", err.msg);
    const gm_metrics_t *mt = gm_replay_metrics(r, 0);
    /* The fake charges each cudaMalloc its size rounded to 512 B, as the
     * simulated device does: measured and simulated peaks agree exactly. */
    cr_assert_eq(m.peak_used, mt->peak_reserved, "measured %llu, simulated %llu",
                 (unsigned long long)m.peak_used, (unsigned long long)mt->peak_reserved);
    cr_assert_eq(m.baseline_used, 300 * MiB);
    cr_assert_eq(m.total_bytes, 16 * GiB);
    cr_assert_eq(m.malloc_latency.count, mt->device_mallocs);
    cr_assert_eq(m.free_latency.count, mt->device_frees);
    cr_assert(m.malloc_latency.median_ns > 0 && m.malloc_latency.p99_ns >= m.malloc_latency.median_ns);
    cr_assert(m.malloc_latency.total_ns >= m.malloc_latency.p99_ns);
    cr_assert_str_eq(m.device_name, "fake GPU");
    cr_assert_eq(gpu_fake_live(), 0, "everything freed");
    gm_replay_destroy(r);
}

Test(gpu, simulated_policy_issues_its_device_calls)
{
    gm_gpu_options_t o = gpu_opts();
    gm_replay_t *r;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run("random", "buddy", &o, &r, &m, &err), 0, "%s", err.msg);
    const gm_metrics_t *mt = gm_replay_metrics(r, 0);
    cr_assert_eq(m.peak_used, mt->peak_reserved, "measured %llu, simulated %llu",
                 (unsigned long long)m.peak_used, (unsigned long long)mt->peak_reserved);
    cr_assert_eq(m.malloc_latency.count, mt->device_mallocs);
    cr_assert(mt->device_mallocs < gm_replay_metrics(r, 0)->events / 2,
              "buddy caches: fewer device calls than requests");
    cr_assert_eq(gpu_fake_live(), 0);
    gm_replay_destroy(r);
}

Test(gpu, async_pool_and_streams)
{
    if (gm_policy_find("async") == NULL)
        cr_skip_test("no async policy registered in this build");
    const char *log = gt_tmpfile("async.log");
    unlink(log);
    setenv("FAKE_CUDA_LOG", log, 1);
    gm_gpu_options_t o = gpu_opts();
    gm_replay_t *r;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run("streams", "async", &o, &r, &m, &err), 0, "%s", err.msg);
    cr_assert_eq(m.pool, 1);
    cr_assert_eq(m.pool_used_high, 8 * MiB + 100, "the two first requests were live at once");
    cr_assert_geq(m.pool_reserved_high, m.pool_used_high);
    cr_assert_eq(m.malloc_latency.count, 3);
    cr_assert_eq(m.free_latency.count, 3);
    size_t len;
    char *text = gt_read_file(log, &len);
    cr_assert_not_null(text);
    /* Two streams of the trace, two CUDA streams; a sync and a trim at the marks. */
    unsigned long long sa = 0, sb = 0;
    char *a = strstr(text, "mallocasync 3145728 ");
    char *b = strstr(text, "mallocasync 5242980 ");
    cr_assert(a && b, "%s", text);
    cr_assert_eq(sscanf(a, "mallocasync %*u %llx", &sa), 1);
    cr_assert_eq(sscanf(b, "mallocasync %*u %llx", &sb), 1);
    cr_assert_neq(sa, sb, "requests on two trace streams go to two CUDA streams");
    cr_assert_not_null(strstr(text, "sync"));
    cr_assert_not_null(strstr(text, "trim 0"));
    free(text);
    cr_assert_eq(gpu_fake_live(), 0);
    gm_replay_destroy(r);
}

Test(gpu, refuses_a_trace_that_does_not_fit)
{
    setenv("FAKE_CUDA_TOTAL", "1073741824", 1); /* 1 GiB, the trace wants up to 2 */
    gm_gpu_options_t o = gpu_opts();
    gm_replay_t *r = NULL;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run("random", "native", &o, &r, &m, &err), GM_EINVAL);
    cr_assert(strstr(err.msg, "needs about") && strstr(err.msg, "--force"), "%s", err.msg);
    cr_assert_null(r);

    /* Forced: the device runs out, the error names the event, and
     * everything is freed. */
    o.force = 1;
    cr_assert_eq(gpu_run("random", "native", &o, &r, &m, &err), GM_EIO);
    cr_assert(strstr(err.msg, "CUDA error at event ") && strstr(err.msg, "cudaMalloc") &&
                  strstr(err.msg, "out of memory"),
              "%s", err.msg);
    cr_assert_eq(gpu_fake_live(), 0);
}

Test(gpu, error_names_the_event)
{
    /* The 3rd cudaMalloc fails: under native that is the 3rd ALLOC, the
     * trace's third event of op ALLOC. */
    setenv("FAKE_CUDA_FAIL_MALLOC", "3", 1);
    gm_gpu_options_t o = gpu_opts();
    gm_replay_t *r = NULL;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run("streams", "native", &o, &r, &m, &err), GM_EIO);
    cr_assert(strstr(err.msg, "at event 4 (cudaMalloc of 1.00 MiB)"), "%s", err.msg);
    cr_assert_eq(gpu_fake_live(), 0);

    /* A simulated policy's device malloc: the index comes from the engine. */
    setenv("FAKE_CUDA_FAIL_MALLOC", "2", 1);
    cr_assert_eq(gpu_run("streams", "native", &o, &r, &m, &err), GM_EIO);
    cr_assert(strstr(err.msg, "at event 1 "), "%s", err.msg);
    cr_assert_eq(gpu_run("streams", "buddy", &o, &r, &m, &err), 0,
                 "buddy makes one device malloc only: %s", err.msg);
    gm_replay_destroy(r);
}

Test(gpu, no_device)
{
    gm_gpu_options_t o = gpu_opts();
    gm_replay_t *r = NULL;
    gm_gpu_measured_t m;
    gm_error_t err;
    setenv("FAKE_CUDA_DEVICES", "0", 1);
    cr_assert_eq(gpu_run("random", "native", &o, &r, &m, &err), GM_EUNSUPPORTED);
    cr_assert_str_eq(err.msg, "no CUDA device: no CUDA-capable device is detected");
    unsetenv("FAKE_CUDA_DEVICES");
    o.device = 3;
    cr_assert_eq(gpu_run("random", "native", &o, &r, &m, &err), GM_EUNSUPPORTED);
    cr_assert(strstr(err.msg, "gpu:3 asked for, 1 present"), "%s", err.msg);
    o = gpu_opts();
    o.runtime = "/nonexistent/libcudart.so";
    cr_assert_eq(gpu_run("random", "native", &o, &r, &m, &err), GM_EUNSUPPORTED);
    cr_assert(strstr(err.msg, "no CUDA device: cannot load the CUDA runtime"), "%s", err.msg);
}

Test(gpu, touch_writes_every_allocation)
{
    const char *log = gt_tmpfile("touch.log");
    unlink(log);
    setenv("FAKE_CUDA_LOG", log, 1);
    gm_gpu_options_t o = gpu_opts();
    o.touch = 1;
    gm_replay_t *r;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run("streams", "native", &o, &r, &m, &err), 0, "%s", err.msg);
    size_t len, memsets = 0, mallocs = 0;
    char *text = gt_read_file(log, &len);
    for (char *p = text; (p = strstr(p, "memsetasync ")) != NULL; p++)
        memsets++;
    for (char *p = text; (p = strstr(p, "malloc ")) != NULL; p++)
        mallocs++;
    cr_assert_eq(mallocs, 3);
    cr_assert_eq(memsets, 3);
    free(text);
    gm_replay_destroy(r);
}

/* Expandable segments map pages on demand and unmap parts of what one map
 * mapped (empty_cache, OOM recovery): the GPU maps each page with its own
 * handle, as PyTorch does, so sub-range unmaps free exactly their pages,
 * and the measured peak is the simulated one (before: sub-range unmaps
 * were ignored and a later map met a duplicate key, "out of memory at
 * event 0"). */
Test(gpu, caching_expandable_maps_and_unmaps_pages)
{
    const char *log = gt_tmpfile("expandable.log");
    unlink(log);
    setenv("FAKE_CUDA_LOG", log, 1);
    gm_gpu_options_t o = gpu_opts();
    o.touch = 1;
    gm_replay_t *r;
    gm_gpu_measured_t m;
    gm_error_t err;
    /* The seeded workload maps without unmapping. */
    cr_assert_eq(gpu_run_with("random", "caching", "expandable_segments", "true", &o, &r, &m,
                              &err),
                 0, "%s", err.msg);
    const gm_metrics_t *mt = gm_replay_metrics(r, 0);
    cr_assert_eq(m.peak_used, mt->peak_reserved, "measured %llu, simulated %llu",
                 (unsigned long long)m.peak_used, (unsigned long long)mt->peak_reserved);
    cr_assert_eq(m.malloc_latency.count, mt->device_mallocs);
    cr_assert_eq(gpu_fake_live(), 0);
    gm_replay_destroy(r);

    unlink(log);
    cr_assert_eq(gpu_run_with("pages", "caching", "expandable_segments", "true", &o, &r, &m,
                              &err),
                 0, "%s", err.msg);
    mt = gm_replay_metrics(r, 0);
    cr_assert_eq(m.peak_used, mt->peak_reserved, "measured %llu, simulated %llu",
                 (unsigned long long)m.peak_used, (unsigned long long)mt->peak_reserved);
    cr_assert_eq(m.malloc_latency.count, mt->device_mallocs);
    cr_assert_eq(m.free_latency.count, mt->device_frees);
    cr_assert_gt(mt->device_frees, 0, "the trace unmaps pages");
    cr_assert_eq(gpu_fake_live(), 0, "every page unmapped and released, every range freed");
    size_t len;
    char *text = gt_read_file(log, &len);
    cr_assert_not_null(text);
    size_t creates = gpu_count(text, "memcreate "), maps = gpu_count(text, "memmap ");
    size_t unmaps = gpu_count(text, "memunmap "), releases = gpu_count(text, "memrelease ");
    cr_assert_gt(creates, mt->device_mallocs, "pages, several to a map");
    cr_assert_eq(maps, creates);
    cr_assert_eq(unmaps, creates);
    cr_assert_eq(releases, creates);
    cr_assert_eq(gpu_count(text, "malloc "), 0, "no cudaMalloc: every byte is a mapped page");
    free(text);
    gm_replay_destroy(r);
}

/* A device whose granularity does not divide the policy's page is refused
 * with both sizes, and nothing is left behind. */
Test(gpu, expandable_page_not_a_multiple_of_the_granularity)
{
    setenv("FAKE_CUDA_VMM_GRANULARITY", "4194304", 1); /* 4 MiB; small pages are 2 MiB */
    gm_gpu_options_t o = gpu_opts();
    gm_replay_t *r = NULL;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run_with("streams", "caching", "expandable_segments", "true", &o, &r, &m,
                              &err),
                 GM_EUNSUPPORTED);
    cr_assert(strstr(err.msg, "cannot map pages of 2.00 MiB: the device maps in multiples of "
                              "4.00 MiB at event 4"),
              "%s", err.msg);
    cr_assert_eq(gpu_fake_live(), 0);
}

/* --touch writes pool memory with cudaMemsetAsync on the stream it was
 * allocated on, and a slow write shows in no free's latency (before: a
 * cudaMemset on the legacy stream, which the fake refuses for pool memory
 * of another stream, and cudaFree waited for the writes). */
Test(gpu, touch_on_the_allocation_stream_outside_the_latencies)
{
    if (gm_policy_find("async") == NULL)
        cr_skip_test("no async policy registered in this build");
    const char *log = gt_tmpfile("touch-async.log");
    unlink(log);
    setenv("FAKE_CUDA_LOG", log, 1);
    gm_gpu_options_t o = gpu_opts();
    o.touch = 1;
    gm_replay_t *r;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run("streams", "async", &o, &r, &m, &err), 0, "%s", err.msg);
    size_t len;
    char *text = gt_read_file(log, &len);
    cr_assert_eq(gpu_count(text, "memsetasync "), 3, "%s", text);
    unsigned long long sa = 0, ma = 0;
    char *a = strstr(text, "mallocasync 5242980 ");
    cr_assert_not_null(a);
    cr_assert_eq(sscanf(a, "mallocasync %*u %llx", &sa), 1);
    char *w = strstr(a, "memsetasync ");
    cr_assert_not_null(w);
    cr_assert_eq(sscanf(w, "memsetasync %*x 5242980 %llx", &ma), 1, "%s", w);
    cr_assert_eq(ma, sa, "written on its allocation's stream");
    free(text);
    gm_replay_destroy(r);

    /* Each write takes 20 ms on the device: no malloc or free waits for it. */
    setenv("FAKE_CUDA_MEMSET_US", "20000", 1);
    unsetenv("FAKE_CUDA_LOG");
    cr_assert_eq(gpu_run("streams", "native", &o, &r, &m, &err), 0, "%s", err.msg);
    cr_assert_lt(m.free_latency.p99_ns, 10e6, "free p99 %.0f ns", m.free_latency.p99_ns);
    cr_assert_lt(m.malloc_latency.p99_ns, 10e6, "malloc p99 %.0f ns", m.malloc_latency.p99_ns);
    cr_assert_geq(m.wall_s, 0.06, "the writes were waited for: %.3f s", m.wall_s);
    gm_replay_destroy(r);
}

/* The runtime is searched for: GM_CUDART may name a folder, where the
 * CUDA 13 name is found; what was tried is in the error. */
Test(gpu, runtime_found_in_a_folder_and_the_error_says_what_was_tried)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%.900s", gt_tmpfile("cudart-dir"));
    mkdir(dir, 0755);
    char link[1100];
    snprintf(link, sizeof link, "%s/libcudart.so.13", dir);
    unlink(link);
    cr_assert_eq(symlink(GM_FAKE_CUDART, link), 0);
    gm_gpu_options_t o = gpu_opts();
    o.runtime = dir;
    gm_replay_t *r = NULL;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run("streams", "native", &o, &r, &m, &err), 0, "%s", err.msg);
    cr_assert_str_eq(m.device_name, "fake GPU");
    gm_replay_destroy(r);

    /* An empty folder (another one: the loader remembers the name it
     * opened the fake by). */
    unlink(link);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%.900s", gt_tmpfile("empty-dir"));
    mkdir(dir, 0755);
    r = NULL;
    cr_assert_eq(gpu_run("streams", "native", &o, &r, &m, &err), GM_EUNSUPPORTED);
    char want[4400];
    snprintf(want, sizeof want,
             "no CUDA device: cannot load the CUDA runtime: tried %s/libcudart.so.13, "
             "%s/libcudart.so.12, %s/libcudart.so",
             dir, dir, dir);
    cr_assert(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    cr_assert(strstr(err.msg, "set GM_CUDART to the library or its folder"), "%s", err.msg);
    rmdir(dir);
}

/* Copy the file src to dst (a copy, not a link: the loader takes each copy
 * for a library of its own). */
static void gpu_copy(const char *src, const char *dst)
{
    size_t len;
    char *bytes = gt_read_file(src, &len);
    cr_assert_not_null(bytes);
    FILE *f = fopen(dst, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    fclose(f);
    free(bytes);
}

/* A runtime the search found but the driver is too old for (CUDA 13 on a
 * CUDA 12 driver) is passed over for the next one found; when every one
 * is too old, the error says so. */
Test(gpu, runtime_too_new_for_the_driver_passed_over)
{
    char dir[1024], a[1100], b[1100];
    snprintf(dir, sizeof dir, "%.900s", gt_tmpfile("two-runtimes"));
    mkdir(dir, 0755);
    snprintf(a, sizeof a, "%s/libcudart.so.13", dir);
    snprintf(b, sizeof b, "%s/libcudart.so.12", dir);
    gpu_copy(GM_FAKE_CUDART, a);
    gpu_copy(GM_FAKE_CUDART, b);
    setenv("FAKE_CUDA_OLD_DRIVER_FOR", "libcudart.so.13", 1);
    gm_gpu_options_t o = gpu_opts();
    o.runtime = dir;
    gm_replay_t *r = NULL;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run("streams", "native", &o, &r, &m, &err), 0, "%s", err.msg);
    cr_assert_str_eq(m.device_name, "fake GPU");
    gm_replay_destroy(r);

    setenv("FAKE_CUDA_OLD_DRIVER_FOR", "libcudart", 1);
    r = NULL;
    cr_assert_eq(gpu_run("streams", "native", &o, &r, &m, &err), GM_EUNSUPPORTED);
    cr_assert_str_eq(err.msg, "no CUDA device: the driver is older than every CUDA runtime found "
                              "(CUDA driver version is insufficient for CUDA runtime version)");

    /* a runtime named is the only one tried */
    o.runtime = a;
    cr_assert_eq(gpu_run("streams", "native", &o, &r, &m, &err), GM_EUNSUPPORTED);
    cr_assert_str_eq(err.msg,
                     "no CUDA device: CUDA driver version is insufficient for CUDA runtime version");
    unsetenv("FAKE_CUDA_OLD_DRIVER_FOR");
    unlink(a);
    unlink(b);
    rmdir(dir);
}

Test(gpu, calibrate_and_use_the_profile)
{
    setenv("FAKE_CUDA_TOTAL", "4294967296", 1);
    gm_gpu_options_t o = gpu_opts();
    gm_cost_profile_t *p;
    gm_error_t err;
    cr_assert_eq(gm_gpu_calibrate(&o, 5, &p, &err), 0, "%s", err.msg);
    cr_assert_geq(p->n, 5);
    cr_assert_eq(p->sizes[0], 512);
    for (size_t i = 1; i < p->n; i++)
        cr_assert_gt(p->sizes[i], p->sizes[i - 1]);
    cr_assert_leq(p->sizes[p->n - 1], (4 * GiB - 300 * MiB) / 4);
    cr_assert(strstr(p->source, "fake GPU") && strstr(p->source, "driver 13.0"), "%s", p->source);
    cr_assert_eq(gpu_fake_live(), 0);

    const char *path = gt_tmpfile("profile.json");
    FILE *f = fopen(path, "w");
    cr_assert_eq(gm_cost_profile_write(p, f), 0);
    fclose(f);
    gm_cost_profile_t *q;
    cr_assert_eq(gm_cost_profile_load(path, &q, &err), 0, "%s", err.msg);
    cr_assert_eq(q->n, p->n);
    for (size_t i = 0; i < p->n; i++) {
        cr_assert_eq(q->sizes[i], p->sizes[i]);
        cr_assert_float_eq(q->malloc_ns[i], p->malloc_ns[i], 1e-6 * (1 + p->malloc_ns[i]));
    }
    cr_assert_str_eq(q->source, p->source);

    /* The simulated device charges the profile's time. */
    gm_device_config_t dc;
    gm_device_config_default(&dc);
    dc.cost.profile = q;
    gm_device_t dev;
    gm_device_init(&dev, &dc);
    uint64_t addr, got;
    cr_assert_eq(gm_device_malloc(&dev, q->sizes[1], 0, &addr, &got), 0);
    cr_assert_float_eq(dev.time_ns, q->malloc_ns[1], 1e-6 * (1 + q->malloc_ns[1]));
    gm_cost_profile_free(p);
    gm_cost_profile_free(q);
}

/* What the device charges, measured: the fake set to granularities other
 * than its defaults, and the profile carries them (written and read back). */
Test(gpu, calibrate_measures_the_granularity)
{
    setenv("FAKE_CUDA_TOTAL", "4294967296", 1);
    gm_gpu_options_t o = gpu_opts();
    gm_cost_profile_t *p;
    gm_error_t err;
    cr_assert_eq(gm_gpu_calibrate(&o, 1, &p, &err), 0, "%s", err.msg);
    cr_assert(p->has_granularity);
    /* the fake's defaults: 512-byte cudaMalloc, 2 MiB pool chunks and pages */
    cr_assert_eq(p->gran.malloc_align, 512);
    cr_assert_eq(p->gran.malloc_chunk, 512, "the fake does not pack");
    cr_assert_eq(p->gran.pool_chunk, 2 * MiB);
    cr_assert_eq(p->gran.vmm_minimum, 2 * MiB);
    gm_cost_profile_free(p);

    setenv("FAKE_CUDA_GRANULARITY", "4096", 1);
    setenv("FAKE_CUDA_POOL_CHUNK", "4194304", 1);
    setenv("FAKE_CUDA_POOL_ALIGN", "1024", 1);
    setenv("FAKE_CUDA_VMM_GRANULARITY", "8388608", 1);
    cr_assert_eq(gm_gpu_calibrate(&o, 1, &p, &err), 0, "%s", err.msg);
    const gm_device_granularity_t *g = &p->gran;
    cr_assert_eq(g->malloc_align, 4096);
    cr_assert_eq(g->malloc_chunk, 4096);
    cr_assert_eq(g->malloc_large, 4096);
    cr_assert_eq(g->pool_align, 1024);
    cr_assert_eq(g->pool_chunk, 4 * MiB);
    cr_assert_eq(g->pool_large, 4 * MiB);
    cr_assert_eq(g->vmm_minimum, 8 * MiB);
    cr_assert_eq(g->vmm_recommended, 8 * MiB);
    cr_assert_eq(g->pool_releases_at_sync, 1);
    cr_assert_eq(g->pool_keeps_under_threshold, 1);
    cr_assert_eq(gpu_fake_live(), 0, "the measurement freed what it took");

    const char *path = gt_tmpfile("gran-profile.json");
    FILE *f = fopen(path, "w");
    cr_assert_eq(gm_cost_profile_write(p, f), 0);
    fclose(f);
    gm_cost_profile_t *q;
    cr_assert_eq(gm_cost_profile_load(path, &q, &err), 0, "%s", err.msg);
    cr_assert(q->has_granularity);
    cr_assert_eq(memcmp(&q->gran, &p->gran, sizeof q->gran), 0, "the granularity round-trips");
    gm_cost_profile_free(p);
    gm_cost_profile_free(q);

    /* a profile without one (as written before) reads as not measured */
    FILE *h = fopen(path, "w");
    fputs("{\"points\": [{\"size\": 512, \"malloc_ns\": 1, \"free_ns\": 1}]}", h);
    fclose(h);
    cr_assert_eq(gm_cost_profile_load(path, &q, &err), 0, "%s", err.msg);
    cr_assert_not(q->has_granularity);
    gm_cost_profile_free(q);
    h = fopen(path, "w");
    fputs("{\"points\": [{\"size\": 512, \"malloc_ns\": 1, \"free_ns\": 1}], "
          "\"granularity\": {\"pool_chunk\": 3000000}}", h);
    fclose(h);
    cr_assert_eq(gm_cost_profile_load(path, &q, &err), GM_EFORMAT);
    cr_assert(strstr(err.msg, "granularity.pool_chunk") != NULL, "%s", err.msg);
}

/* A warm start allocates the recorded layout on the GPU before the first
 * event: not one of the run's mallocs (the simulated device does not count
 * it either), but said apart. */
Test(gpu, adopted_layout_is_not_a_malloc_of_the_run)
{
    gm_gpu_options_t o = gpu_opts();
    gm_replay_t *r;
    gm_gpu_measured_t m;
    gm_error_t err;
    cr_assert_eq(gpu_run_with("warm", "caching", NULL, NULL, &o, &r, &m, &err), 0, "%s", err.msg);
    const gm_metrics_t *sim = gm_replay_metrics(r, 0);
    cr_assert(gm_replay_started_warm(r, 0, NULL), "caching starts from the recorded layout");
    cr_assert_eq(m.adopted, 1);
    cr_assert_eq(m.adopted_bytes, 20 * MiB);
    cr_assert_eq(m.malloc_latency.count, sim->device_mallocs, "%llu measured, %llu simulated",
                 (unsigned long long)m.malloc_latency.count,
                 (unsigned long long)sim->device_mallocs);
    cr_assert_eq(m.free_latency.count, sim->device_frees);
    cr_assert_eq(m.peak_used, sim->peak_reserved, "the layout's memory is in both peaks");
    cr_assert_eq(gpu_fake_live(), 0);
    gm_replay_destroy(r);
}

#else

Test(gpu, built_without_cuda)
{
    gm_gpu_options_t o = {0};
    gm_cost_profile_t *p;
    gm_error_t err;
    cr_assert_eq(gm_gpu_calibrate(&o, 1, &p, &err), GM_EUNSUPPORTED);
    cr_assert(strstr(err.msg, "no CUDA device"), "%s", err.msg);
}

#endif

Test(gpu_profile, interpolation_and_bad_files)
{
    uint64_t sizes[] = {1000, 2000, 4000};
    double mns[] = {10, 20, 30}, fns[] = {1, 2, 3};
    gm_cost_profile_t p = {.n = 3, .sizes = sizes, .malloc_ns = mns, .free_ns = fns};
    gm_cost_model_t m = {0};
    m.profile = &p;
    cr_assert_float_eq(gm_cost_malloc_ns(&m, 10), 10, 1e-9);
    cr_assert_float_eq(gm_cost_malloc_ns(&m, 1500), 15, 1e-9);
    cr_assert_float_eq(gm_cost_malloc_ns(&m, 3000), 25, 1e-9);
    cr_assert_float_eq(gm_cost_malloc_ns(&m, 8000), 50, 1e-9, "extrapolated");
    cr_assert_float_eq(gm_cost_free_ns(&m, 4000), 3, 1e-9);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"", "invalid JSON at byte 0"},
        {"{}", "not a cost profile"},
        {"{\"points\": []}", "not a cost profile"},
        {"{\"points\": [{\"size\": 0, \"malloc_ns\": 1, \"free_ns\": 1}]}", "point 0"},
        {"{\"points\": [{\"size\": 10, \"malloc_ns\": -1, \"free_ns\": 1}]}", "point 0"},
        {"{\"points\": [{\"size\": 10, \"malloc_ns\": 1, \"free_ns\": 1},"
         " {\"size\": 10, \"malloc_ns\": 1, \"free_ns\": 1}]}",
         "point 1: sizes must ascend"},
    };
    const char *path = gt_tmpfile("bad-profile.json");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i].text, f);
        fclose(f);
        gm_cost_profile_t *q = NULL;
        gm_error_t err;
        cr_assert_eq(gm_cost_profile_load(path, &q, &err), GM_EFORMAT, "case %zu", i);
        cr_assert(strstr(err.msg, path) && strstr(err.msg, bad[i].want), "case %zu: %s", i,
                  err.msg);
    }
    gm_cost_profile_t *q;
    gm_error_t err;
    cr_assert_eq(gm_cost_profile_load("/nonexistent/p.json", &q, &err), GM_EIO);
    cr_assert(strstr(err.msg, "cannot open '/nonexistent/p.json'"), "%s", err.msg);
}

/* The shipped profile is the built-in linear model written out: the two
 * agree at every point and in between. */
Test(gpu_profile, shipped_default_matches_the_builtin_model)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/profiles/default.json", GM_SOURCE_DIR);
    gm_cost_profile_t *p;
    gm_error_t err;
    cr_assert_eq(gm_cost_profile_load(path, &p, &err), 0, "%s", err.msg);
    cr_assert(strstr(p->source, "uncalibrated"), "the provenance says what it is");
    gm_device_config_t dc;
    gm_device_config_default(&dc);
    gm_cost_model_t prof = dc.cost;
    prof.profile = p;
    for (size_t i = 0; i + 1 < p->n; i++) {
        uint64_t sizes[] = {p->sizes[i], (p->sizes[i] + p->sizes[i + 1]) / 2};
        for (size_t k = 0; k < 2; k++) {
            double a = gm_cost_malloc_ns(&dc.cost, sizes[k]), b = gm_cost_malloc_ns(&prof, sizes[k]);
            cr_assert_float_eq(a, b, 1e-9 * a, "malloc at %llu: %f vs %f",
                               (unsigned long long)sizes[k], a, b);
            a = gm_cost_free_ns(&dc.cost, sizes[k]);
            b = gm_cost_free_ns(&prof, sizes[k]);
            cr_assert_float_eq(a, b, 1e-9 * a, "free at %llu", (unsigned long long)sizes[k]);
        }
    }
    gm_cost_profile_free(p);
}
