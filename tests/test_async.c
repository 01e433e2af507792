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

#include "policy_harness.h"

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
    pol_empty(&t);
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
        cr_assert_eq(gm_policy_prepare(t.p, &ctx, &err), 0, "%s", err.msg);
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
    cr_expect_eq(gm_policy_prepare(t.p, &ctx, &err), 0, "unreadable attributes are ignored");
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
        char what[32];
        snprintf(what, sizeof what, "config %zu", c);
        pol_churn(&t,
                  &(pol_churn_t){.seed = 31 + c, .small = 256 * KiB, .large = 16 * MiB,
                                 .streams = 3, .drain_stream = 1, .sync_every = 97},
                  what);
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
