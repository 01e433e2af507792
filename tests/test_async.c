/*
 * tests/test_async.c — the async policy (the CUDA stream-ordered allocator,
 * cudaMallocAsync): rounding and the chunk granularity, carving and
 * coalescing inside chunks, reuse on the same stream and across streams
 * (all, completed), the release threshold at synchronization,
 * trim (empty_cache), the retry after a trim when the device is full,
 * parameters, a seeded stress under a small capacity with synchronizations,
 * and the real snapshots checked after every event.  (The contract suite in
 * test_policy.c covers it too.)
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define POLICY "async"

typedef struct pol {
    const gm_policy_ops_t *ops;
    gm_device_t dev;
    gm_policy_t *p;
} pol_t;

/* A POLICY on a device of `capacity` bytes, with "key=value" settings
 * (NULL-terminated).  Returns create's code. */
static int pol_make(pol_t *t, uint64_t capacity, const char *const *kv, gm_error_t *err)
{
    memset(t, 0, sizeof *t);
    t->ops = gm_policy_find(POLICY);
    cr_assert_not_null(t->ops);
    gm_params_t params;
    cr_assert_eq(gm_params_init(&params, t->ops, err), 0);
    for (; kv != NULL && *kv != NULL; kv++) {
        char key[64];
        const char *eq = strchr(*kv, '=');
        cr_assert_not_null(eq);
        snprintf(key, sizeof key, "%.*s", (int)(eq - *kv), *kv);
        cr_assert_eq(gm_params_set(&params, key, eq + 1, err), 0, "%s", err->msg);
    }
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    cfg.capacity = capacity;
    gm_device_init(&t->dev, &cfg);
    int rc = t->ops->create(&t->dev, params.values, &t->p, err);
    gm_params_release(&params);
    return rc;
}

static void pol_new(pol_t *t, uint64_t capacity, const char *const *kv)
{
    gm_error_t err = {0};
    cr_assert_eq(pol_make(t, capacity, kv, &err), 0, "%s", err.msg);
}

static void pol_check(pol_t *t)
{
    char why[256] = "";
    cr_assert_eq(t->ops->check(t->p, why, sizeof why), 0, "check: %s", why);
}

static gm_block_t pol_alloc_on(pol_t *t, uint64_t size, uint32_t stream)
{
    gm_request_t req = {.size = size, .stream = stream};
    gm_block_t blk = {0, 0};
    cr_assert_eq(t->ops->alloc(t->p, &req, &blk), 0, "alloc(%" PRIu64 ") failed", size);
    pol_check(t);
    return blk;
}

static gm_block_t pol_alloc(pol_t *t, uint64_t size) { return pol_alloc_on(t, size, 0); }

static int pol_try_on(pol_t *t, uint64_t size, uint32_t stream, gm_block_t *blk)
{
    gm_request_t req = {.size = size, .stream = stream};
    int rc = t->ops->alloc(t->p, &req, blk);
    pol_check(t);
    return rc;
}

static int pol_try(pol_t *t, uint64_t size, gm_block_t *blk) { return pol_try_on(t, size, 0, blk); }

static void pol_free_on(pol_t *t, gm_block_t blk, uint32_t stream)
{
    cr_assert_eq(t->ops->free(t->p, &blk, stream), 0);
    pol_check(t);
}

static void pol_free(pol_t *t, gm_block_t blk) { pol_free_on(t, blk, 0); }

static gm_policy_stats_t pol_stats(pol_t *t)
{
    gm_policy_stats_t st;
    t->ops->stats(t->p, &st);
    return st;
}

static void pol_end(pol_t *t) { t->ops->destroy(t->p); }

static void pol_sync(pol_t *t)
{
    t->ops->sync(t->p);
    pol_check(t);
}

static uint64_t pol_largest(pol_t *t) { return pol_stats(t).largest_free; }

Test(async, rounding_and_chunks)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, 1000);
    cr_expect_eq(a.size, 1024, "rounded up to 512 bytes");
    cr_expect_eq(t.dev.reserved, 2 * MiB, "a 2 MiB chunk for a small request");
    gm_block_t b = pol_alloc(&t, 3000);
    cr_expect_eq(b.addr, a.addr + 1024, "carved from the same chunk");
    cr_expect_eq(t.dev.mallocs, 1);
    pol_alloc(&t, 5 * MiB);
    cr_expect_eq(t.dev.reserved, 8 * MiB, "a large request gets its own chunk, rounded to 2 MiB");
    pol_end(&t);

    pol_new(&t, 0, (const char *const[]){"granularity=32MiB", "align=256", NULL});
    cr_expect_eq(pol_alloc(&t, 300).size, 512);
    cr_expect_eq(t.dev.reserved, 32 * MiB);
    pol_end(&t);
}

Test(async, same_stream_reuse_and_coalescing)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, 512 * KiB), b = pol_alloc(&t, 512 * KiB);
    gm_block_t c = pol_alloc(&t, 512 * KiB);
    pol_free(&t, b);
    cr_expect_eq(pol_alloc(&t, 512 * KiB).addr, b.addr, "best fit: the hole");
    pol_free_on(&t, a, 0);
    pol_free_on(&t, b, 1); /* freed on another stream: not merged with a */
    cr_expect_eq(pol_largest(&t), 512 * KiB);
    pol_free_on(&t, c, 0);
    cr_expect_eq(pol_largest(&t), MiB, "c merged with the tail, not with b");
    pol_end(&t);

    /* after a synchronization every free is complete: one set, merged */
    pol_new(&t, 0, (const char *const[]){"release_threshold=1EiB", NULL});
    a = pol_alloc(&t, 512 * KiB), b = pol_alloc(&t, 512 * KiB);
    pol_free_on(&t, a, 0);
    pol_free_on(&t, b, 1);
    pol_sync(&t);
    cr_expect_eq(pol_largest(&t), 2 * MiB, "the whole chunk free as one block");
    cr_expect_eq(t.dev.reserved, 2 * MiB, "kept: under the threshold");
    pol_end(&t);
}

/* x (a whole 2 MiB chunk) freed on stream 1, a live 1 KiB block on stream 0
 * in a second chunk; then 2 MiB on stream 0: does it reuse x? */
static uint64_t cross_stream_mallocs(const char *reuse, int sync)
{
    pol_t t;
    char kv[64];
    snprintf(kv, sizeof kv, "reuse=%s", reuse);
    pol_new(&t, 0, (const char *const[]){kv, "release_threshold=1EiB", NULL});
    gm_block_t x = pol_alloc_on(&t, 2 * MiB, 1);
    pol_alloc_on(&t, 1024, 0);
    pol_free_on(&t, x, 1);
    if (sync)
        pol_sync(&t);
    uint64_t before = t.dev.mallocs;
    gm_block_t y = pol_alloc_on(&t, 2 * MiB, 0);
    uint64_t n = t.dev.mallocs - before;
    if (n == 0)
        cr_expect_eq(y.addr, x.addr);
    pol_end(&t);
    return n;
}

Test(async, reuse_across_streams)
{
    cr_expect_eq(cross_stream_mallocs("all", 0), 0, "all: another stream's free at once");
    cr_expect_eq(cross_stream_mallocs("completed", 0), 1, "completed: not before a sync");
    cr_expect_eq(cross_stream_mallocs("completed", 1), 0, "completed: after a sync");
}

Test(async, release_threshold_at_sync)
{
    pol_t t;
    pol_new(&t, 0, NULL); /* threshold 0 */
    gm_block_t a = pol_alloc(&t, 2 * MiB), b = pol_alloc(&t, 2 * MiB);
    pol_free(&t, a);
    cr_expect_eq(t.dev.reserved, 4 * MiB, "nothing released before a synchronization");
    pol_sync(&t);
    cr_expect_eq(t.dev.reserved, 2 * MiB, "threshold 0: every unused chunk released");
    pol_free(&t, b);
    pol_sync(&t);
    cr_expect_eq(t.dev.reserved, 0);
    pol_end(&t);

    pol_new(&t, 0, (const char *const[]){"release_threshold=4MiB", NULL});
    gm_block_t c[3];
    for (int i = 0; i < 3; i++)
        c[i] = pol_alloc(&t, 2 * MiB);
    for (int i = 0; i < 3; i++)
        pol_free(&t, c[i]);
    pol_sync(&t);
    cr_expect_eq(t.dev.reserved, 4 * MiB, "released down to the threshold");
    cr_expect_eq(t.dev.frees, 1);
    cr_expect_eq(pol_alloc(&t, 2 * MiB).addr, c[0].addr, "the oldest two chunks stay");
    cr_expect_eq(pol_alloc(&t, 2 * MiB).addr, c[1].addr, "the newest chunk went first");
    uint64_t before = t.dev.mallocs;
    pol_alloc(&t, 2 * MiB);
    cr_expect_eq(t.dev.mallocs, before + 1, "c[2]'s chunk is gone: a new one is mapped");
    pol_end(&t);

    pol_new(&t, 0, (const char *const[]){"release_threshold=1EiB", NULL});
    gm_block_t d = pol_alloc(&t, 2 * MiB);
    pol_free(&t, d);
    pol_sync(&t);
    cr_expect_eq(t.dev.reserved, 2 * MiB, "PyTorch's setting: the pool keeps everything");
    t.ops->empty_cache(t.p);
    pol_check(&t);
    cr_expect_eq(t.dev.reserved, 0, "trim to 0 releases it");
    pol_end(&t);
}

Test(async, pytorch_backend_setting_from_the_trace)
{
    const char *attrs = "{\"source\":\"torch_snapshot\",\"allocator_settings\":"
                        "{\"PYTORCH_CUDA_ALLOC_CONF\":\"backend:cudaMallocAsync\"}}";
    for (int given = 0; given < 2; given++) {
        pol_t t;
        pol_new(&t, 0, NULL);
        gm_trace_context_t ctx = {.attrs = attrs, .params_set = given ? 1 : 0};
        gm_error_t err = {0};
        cr_assert_eq(t.ops->prepare(t.p, &ctx, &err), 0, "%s", err.msg);
        gm_block_t a = pol_alloc(&t, MiB);
        pol_free(&t, a);
        pol_sync(&t);
        cr_expect_eq(t.dev.reserved, given ? 0 : 2 * MiB, "%s",
                     given ? "an explicit release_threshold (0) wins"
                           : "the recorded backend keeps everything (UINT64_MAX)");
        pol_end(&t);
    }
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_trace_context_t ctx = {.attrs = "not json"};
    gm_error_t err = {0};
    cr_expect_eq(t.ops->prepare(t.p, &ctx, &err), 0, "unreadable attributes are ignored");
    pol_end(&t);
}

Test(async, live_blocks_pin_their_chunk)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, MiB);
    pol_alloc(&t, 512);
    pol_free(&t, a);
    pol_sync(&t);
    cr_expect_eq(t.dev.reserved, 2 * MiB, "a chunk with a live block stays whole");
    pol_end(&t);
}

Test(async, trims_and_retries_when_the_device_is_full)
{
    pol_t t;
    pol_new(&t, 4 * MiB, (const char *const[]){"release_threshold=1EiB", NULL});
    gm_block_t a = pol_alloc(&t, 2 * MiB);
    pol_free(&t, a);
    gm_block_t b;
    cr_expect_eq(pol_try(&t, 4 * MiB, &b), 0, "the free chunk is released and the malloc retried");
    cr_expect_eq(t.dev.frees, 1);
    cr_expect_eq(pol_try(&t, 512, &b), GM_ALLOC_OOM);
    pol_end(&t);
}

Test(async, bad_parameters)
{
    pol_t t;
    gm_error_t err = {0};
    cr_expect_neq(pol_make(&t, 0, (const char *const[]){"granularity=3MiB", NULL}, &err), 0);
    cr_expect(strstr(err.msg, "async.granularity") != NULL, "%s", err.msg);
    cr_expect_neq(pol_make(&t, 0, (const char *const[]){"align=4MiB", NULL}, &err), 0);
    cr_expect(strstr(err.msg, "async.align") != NULL, "%s", err.msg);
}

Test(async, stress_small_capacity)
{
    static const char *const all[] = {NULL};
    static const char *const completed[] = {"reuse=completed", "release_threshold=16MiB", NULL};
    static const char *const kept[] = {"reuse=completed", "release_threshold=1EiB", NULL};
    const char *const *cfgs[] = {all, completed, kept};
    for (size_t c = 0; c < 3; c++) {
        pol_t t;
        pol_new(&t, 64 * MiB, cfgs[c]);
        gm_block_t live[256];
        size_t n = 0;
        uint64_t rng = 31 + c, ooms = 0, ok = 0;
        for (int k = 0; k < 6000; k++) {
            if (k % 97 == 0)
                pol_sync(&t);
            if (n < 256 && (n == 0 || gt_rand(&rng) % 100 < 55)) {
                uint64_t size = 1 + gt_rand(&rng) % (gt_rand(&rng) % 8 == 0 ? 16 * MiB : 256 * KiB);
                int rc = pol_try_on(&t, size, (uint32_t)(gt_rand(&rng) % 3), &live[n]);
                cr_assert(rc == 0 || rc == GM_ALLOC_OOM);
                if (rc == 0) {
                    n++;
                    ok++;
                } else {
                    ooms++;
                }
            } else {
                size_t i = gt_rand(&rng) % n;
                pol_free_on(&t, live[i], (uint32_t)(gt_rand(&rng) % 3));
                live[i] = live[--n];
            }
            cr_assert_leq(t.dev.reserved, 64 * MiB);
        }
        cr_expect_gt(ooms, 0, "config %zu: no OOM on 64 MiB", c);
        cr_expect_gt(ok, 1000);
        while (n > 0)
            pol_free_on(&t, live[--n], 1);
        t.ops->empty_cache(t.p);
        pol_check(&t);
        cr_expect_eq(t.dev.reserved, 0);
        pol_end(&t);
    }
}

/* ---- real data ------------------------------------------------------------------ */

#include "realdata.h"

Test(async, real_snapshots, .timeout = 300)
{
    gt_replay_snapshots(POLICY, NULL);
    gt_replay_snapshots(POLICY, (const char *const[]){"release_threshold=1EiB", "reuse=completed",
                                                      NULL});
}
