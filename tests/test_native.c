/*
 * tests/test_native.c — the native policy (a device malloc per request):
 * by default each request its own malloc at the device granularity; with
 * native.chunk (what a --device-profile of a driver that packs small
 * requests sets) requests are carved from chunks of that size, a chunk
 * goes back once wholly free, a request above the chunk takes its size
 * rounded up to it; refused values; and the real snapshots with the check
 * walker after every event in both modes.  (The contract suite in
 * test_policy.c covers it too.)
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define POLICY "native"

#include "policy_harness.h"

Test(native, one_malloc_per_request_by_default)
{
    pol_t t;
    pol_new(&t, 0, NULL);
    gm_block_t a = pol_alloc(&t, 1), b = pol_alloc(&t, 1000);
    cr_expect_eq(a.size, 512);
    cr_expect_eq(b.size, 1024);
    cr_expect_eq(t.dev.mallocs, 2);
    cr_expect_eq(t.dev.reserved, 1536);
    pol_free(&t, a);
    cr_expect_eq(t.dev.frees, 1);
    cr_expect_eq(t.dev.reserved, 1024);
    pol_end(&t);
}

Test(native, chunk_packs_small_requests)
{
    pol_t t;
    pol_new(&t, 0, (const char *const[]){"chunk=2MiB", NULL});
    gm_block_t a = pol_alloc(&t, 1), b = pol_alloc(&t, 1000), c = pol_alloc(&t, 100 * KiB);
    cr_expect_eq(a.size, 512, "rounded to the device granularity");
    cr_expect_eq(b.addr, a.addr + 512, "packed next to the first");
    cr_expect_eq(t.dev.mallocs, 1, "one chunk holds all three");
    cr_expect_eq(t.dev.reserved, 2 * MiB);
    pol_free(&t, a);
    pol_free(&t, b);
    cr_expect_eq(t.dev.reserved, 2 * MiB, "the chunk still holds c");
    pol_free(&t, c);
    cr_expect_eq(t.dev.reserved, 0, "a wholly free chunk goes back at once (cudaFree)");
    gm_block_t d = pol_alloc(&t, 5 * MiB);
    cr_expect_eq(t.dev.reserved, 6 * MiB, "above the chunk: rounded up to it");
    gm_block_t e = pol_alloc(&t, 4 * KiB);
    cr_expect_eq(t.dev.reserved, 6 * MiB, "carved from the large request's chunk's tail");
    pol_free(&t, d);
    pol_free(&t, e);
    cr_expect_eq(t.dev.reserved, 0);
    pol_end(&t);
}

Test(native, refused_chunks)
{
    pol_t t;
    gm_error_t err;
    cr_expect_eq(pol_make(&t, 0, (const char *const[]){"chunk=3MiB", NULL}, &err), GM_EINVAL);
    cr_expect(strstr(err.msg, "native.chunk") != NULL, "%s", err.msg);
    cr_expect_eq(pol_make(&t, 0, (const char *const[]){"chunk=256", NULL}, &err), GM_EINVAL,
                 "below the device granularity (512)");
}

/* ---- real data ------------------------------------------------------------------ */

#include "realdata.h"

Test(native, real_snapshots, .timeout = 300)
{
    gt_replay_snapshots(POLICY, NULL);
    gt_replay_snapshots(POLICY, (const char *const[]){"chunk=2MiB", NULL});
}
