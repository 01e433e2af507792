/*
 * tests/test_buddy.c — the buddy policy: splitting, merging, the allocation
 * rule, arenas (growth, release, over-size), OOM recovery and parameters.
 * (The contract suite in test_policy.c covers it too.)
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "util.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

#include "policy_harness.h"

/* A buddy with the given parameters ("" keeps a default) on a device of the
 * given capacity and granularity (0: defaults).  Returns pol_open's code. */
static int bud_make(pol_t *b, const char *min_block, const char *arena, const char *release,
                    uint64_t capacity, uint64_t granularity, gm_error_t *err)
{
    const char *const names[3] = {"min_block", "arena", "release"};
    const char *const values[3] = {min_block, arena, release};
    char set[3][64];
    const char *kv[4];
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        if (values[i][0]) {
            snprintf(set[n], sizeof set[n], "%s=%s", names[i], values[i]);
            kv[n] = set[n];
            n++;
        }
    kv[n] = NULL;
    gm_device_config_t cfg = pol_device(capacity);
    if (granularity)
        cfg.granularity = granularity;
    return pol_open(b, "buddy", &cfg, kv, err);
}

static void bud_new(pol_t *b, const char *min_block, const char *arena, const char *release,
                    uint64_t capacity)
{
    gm_error_t err = {0};
    cr_assert_eq(bud_make(b, min_block, arena, release, capacity, 0, &err), 0, "%s", err.msg);
}

Test(buddy, two_min_blocks_are_buddies_and_merge)
{
    pol_t b;
    bud_new(&b, "512", "8KiB", "", 0);
    gm_block_t x = pol_alloc(&b, 512), y = pol_alloc(&b, 512);
    uint64_t base = x.addr;
    cr_expect_eq(base % (8 * KiB), 0, "arena aligned to its size");
    cr_expect_eq(x.size, 512);
    cr_expect_eq(y.addr, base + 512, "second block is the first's buddy");
    cr_expect_eq(b.dev.mallocs, 1);
    cr_expect_eq(b.dev.reserved, 8 * KiB);
    gm_policy_stats_t st = pol_stats(&b);
    cr_expect_eq(st.allocated, 1024);
    cr_expect_eq(st.free_bytes, 7 * KiB);
    cr_expect_eq(st.largest_free, 4 * KiB, "the upper half of the arena");

    pol_free(&b, x);
    st = pol_stats(&b);
    cr_expect_eq(st.largest_free, 4 * KiB, "x cannot merge while y is live");
    pol_free(&b, y);
    st = pol_stats(&b);
    cr_expect_eq(st.allocated, 0);
    cr_expect_eq(st.largest_free, 8 * KiB, "merged all the way up to the arena");
    cr_expect_eq(b.dev.reserved, 8 * KiB, "release=never keeps the arena");
    cr_expect_eq(b.dev.frees, 0);

    /* and in the other order, at every level */
    gm_block_t blk[16];
    for (int i = 0; i < 16; i++) {
        blk[i] = pol_alloc(&b, 512);
        cr_expect_eq(blk[i].addr, base + 512 * (uint64_t)i, "fills bottom up");
    }
    cr_expect_eq(pol_stats(&b).largest_free, 0);
    for (int i = 15; i >= 0; i--)
        pol_free(&b, blk[i]);
    cr_expect_eq(pol_stats(&b).largest_free, 8 * KiB);
    pol_end(&b);
}

Test(buddy, split_sizes)
{
    pol_t b;
    bud_new(&b, "512", "64KiB", "", 0);
    gm_block_t a = pol_alloc(&b, 3000); /* 4 KiB */
    cr_expect_eq(a.size, 4 * KiB);
    gm_block_t c = pol_alloc(&b, 512);
    cr_expect_eq(c.addr, a.addr + 4 * KiB, "from the split upper half");
    gm_block_t d = pol_alloc(&b, 16 * KiB);
    cr_expect_eq(d.addr, a.addr + 16 * KiB);
    gm_block_t e = pol_alloc(&b, 32 * KiB);
    cr_expect_eq(e.addr, a.addr + 32 * KiB);
    cr_expect_eq(pol_stats(&b).allocated, 4 * KiB + 512 + 16 * KiB + 32 * KiB);
    cr_expect_eq(pol_stats(&b).largest_free, 8 * KiB, "free: 512 B, 1, 2 and 8 KiB");
    pol_free(&b, e);
    pol_free(&b, a);
    pol_free(&b, d);
    pol_free(&b, c);
    cr_expect_eq(pol_stats(&b).largest_free, 64 * KiB);
    pol_end(&b);
}

Test(buddy, allocation_rule_smallest_order_then_lowest_address)
{
    pol_t b;
    bud_new(&b, "512", "8KiB", "", 0);
    gm_block_t blk[8];
    for (int i = 0; i < 8; i++)
        blk[i] = pol_alloc(&b, 512);
    uint64_t base = blk[0].addr;
    pol_free(&b, blk[5]);
    pol_free(&b, blk[1]);
    pol_free(&b, blk[3]);
    gm_block_t n = pol_alloc(&b, 512);
    cr_expect_eq(n.addr, base + 512, "lowest free block of the order");
    pol_free(&b, blk[0]); /* its buddy n is live: no merge */
    pol_free(&b, n);      /* merges with block 0 into an order-1 block */
    /* free now: order 1 at 0, order 0 at 3 and 5, order 3 at 8 */
    gm_block_t m = pol_alloc(&b, 512);
    cr_expect_eq(m.addr, base + 3 * 512, "an order-0 block before splitting the order-1 one");
    gm_block_t k = pol_alloc(&b, 1024);
    cr_expect_eq(k.addr, base, "the order-1 block at the bottom");
    gm_block_t big = pol_alloc(&b, 4 * KiB);
    cr_expect_eq(big.addr, base + 4 * KiB);
    pol_end(&b);
}

Test(buddy, arena_growth)
{
    pol_t b;
    bud_new(&b, "512", "8KiB", "", 0);
    gm_block_t blk[17];
    for (int i = 0; i < 16; i++)
        blk[i] = pol_alloc(&b, 512);
    cr_expect_eq(b.dev.mallocs, 1);
    blk[16] = pol_alloc(&b, 512);
    cr_expect_eq(b.dev.mallocs, 2, "a second arena when the first is full");
    cr_expect_eq(b.dev.reserved, 16 * KiB);
    cr_expect_eq(blk[16].addr % (8 * KiB), 0);
    cr_expect(blk[16].addr >= blk[0].addr + 8 * KiB);
    /* freeing in the first arena: new requests go back to it (lowest slot) */
    pol_free(&b, blk[7]);
    gm_block_t again = pol_alloc(&b, 512);
    cr_expect_eq(again.addr, blk[7].addr);
    gm_block_t x = pol_alloc(&b, 512);
    cr_expect_eq(x.addr, blk[16].addr + 512);
    pol_end(&b);
}

Test(buddy, release_empty_returns_arenas)
{
    pol_t b;
    bud_new(&b, "512", "8KiB", "empty", 0);
    gm_block_t x = pol_alloc(&b, 512);
    cr_expect_eq(b.dev.reserved, 8 * KiB);
    pol_free(&b, x);
    cr_expect_eq(b.dev.reserved, 0, "the arena went back at once");
    cr_expect_eq(b.dev.frees, 1);
    cr_expect_eq(pol_stats(&b).largest_free, 0);
    /* churn: an arena each time, no leak of slots or metadata */
    for (int i = 0; i < 100; i++) {
        gm_block_t y = pol_alloc(&b, 1 + (uint64_t)i * 50);
        pol_free(&b, y);
    }
    cr_expect_eq(b.dev.mallocs, 101);
    cr_expect_eq(b.dev.frees, 101);
    cr_expect_eq(b.dev.reserved, 0);
    /* two arenas, the first empties while the second is live */
    gm_block_t blk[17];
    for (int i = 0; i < 17; i++)
        blk[i] = pol_alloc(&b, 512);
    for (int i = 0; i < 16; i++)
        pol_free(&b, blk[i]);
    cr_expect_eq(b.dev.reserved, 8 * KiB);
    pol_free(&b, blk[16]);
    cr_expect_eq(b.dev.reserved, 0);
    pol_end(&b);
}

Test(buddy, release_never_keeps_arenas)
{
    pol_t b;
    bud_new(&b, "512", "8KiB", "never", 0);
    gm_block_t x = pol_alloc(&b, 512);
    pol_free(&b, x);
    cr_expect_eq(b.dev.reserved, 8 * KiB);
    cr_expect_eq(b.dev.frees, 0);
    gm_block_t y = pol_alloc(&b, 8 * KiB);
    cr_expect_eq(y.addr, x.addr, "the kept arena serves the next request");
    cr_expect_eq(b.dev.mallocs, 1);
    pol_free(&b, y);
    cr_assert_not_null(b.ops->empty_cache);
    pol_empty(&b);
    cr_expect_eq(b.dev.reserved, 0, "empty_cache gives it back");
    pol_end(&b);
}

Test(buddy, over_size_request_gets_its_own_arena)
{
    pol_t b;
    bud_new(&b, "512", "8KiB", "never", 0);
    gm_block_t small = pol_alloc(&b, 512);
    gm_block_t big = pol_alloc(&b, 20000);
    cr_expect_eq(big.size, 32 * KiB, "next power of two");
    cr_expect_eq(big.addr % (32 * KiB), 0, "aligned to its size");
    cr_expect_eq(b.dev.reserved, 8 * KiB + 32 * KiB);
    cr_expect_eq(pol_stats(&b).allocated, 512 + 32 * KiB);
    pol_free(&b, big);
    cr_expect_eq(b.dev.reserved, 40 * KiB, "kept with release=never");
    cr_expect_eq(pol_stats(&b).largest_free, 32 * KiB);
    gm_block_t again = pol_alloc(&b, 17000);
    cr_expect_eq(again.addr, big.addr, "reused whole by the same power of two");
    cr_expect_eq(b.dev.mallocs, 2);
    gm_block_t other = pol_alloc(&b, 9000);
    cr_expect_eq(other.size, 16 * KiB);
    cr_expect_eq(b.dev.mallocs, 3, "a different power of two gets a new arena");
    gm_block_t exact = pol_alloc(&b, 8 * KiB);
    cr_expect_eq(exact.size, 8 * KiB, "an arena-sized request is a regular block");
    cr_expect_eq(b.dev.mallocs, 4);
    pol_free(&b, again);
    pol_free(&b, other);
    pol_free(&b, exact);
    pol_free(&b, small);
    pol_end(&b);

    bud_new(&b, "512", "8KiB", "empty", 0);
    big = pol_alloc(&b, 8 * KiB + 1);
    cr_expect_eq(big.size, 16 * KiB);
    pol_free(&b, big);
    cr_expect_eq(b.dev.reserved, 0, "released with release=empty");
    pol_end(&b);

    /* huge: the default 1 GiB arena and a 3 GiB request */
    bud_new(&b, "", "", "", 0);
    big = pol_alloc(&b, 3 * GiB);
    cr_expect_eq(big.size, 4 * GiB);
    cr_expect_eq(big.addr % (4 * GiB), 0);
    pol_free(&b, big);
    pol_end(&b);
}

Test(buddy, oom_recovery_returns_free_arenas)
{
    pol_t b;
    bud_new(&b, "512", "8KiB", "never", 36 * KiB);
    gm_block_t big = pol_alloc(&b, 20000); /* 32 KiB */
    pol_free(&b, big);
    cr_expect_eq(b.dev.reserved, 32 * KiB);
    gm_block_t x = pol_alloc(&b, 512); /* an 8 KiB arena does not fit beside it */
    cr_expect_eq(b.dev.failed, 1, "the device refused once");
    cr_expect_eq(b.dev.frees, 1, "the free over-size arena went back");
    cr_expect_eq(b.dev.reserved, 8 * KiB);
    (void)x;

    /* nothing to give back: a clean OOM */
    for (int i = 0; i < 15; i++)
        (void)pol_alloc(&b, 512); /* the arena is full */
    for (int i = 0; i < 3; i++)
        (void)pol_alloc(&b, 8 * KiB); /* three more arenas: 32 KiB */
    gm_request_t req = {.size = 512};
    gm_block_t out;
    gm_policy_stats_t before = pol_stats(&b);
    cr_expect_eq(gm_policy_alloc(b.p, &req, &out), GM_ALLOC_OOM);
    pol_check(&b);
    cr_expect_eq(pol_stats(&b).allocated, before.allocated);
    req.size = 64 * KiB;
    cr_expect_eq(gm_policy_alloc(b.p, &req, &out), GM_ALLOC_OOM);
    pol_check(&b);
    pol_end(&b);

    /* an arena larger than the capacity: every request is an OOM */
    bud_new(&b, "", "1GiB", "", 256 * MiB);
    req.size = 1;
    cr_expect_eq(gm_policy_alloc(b.p, &req, &out), GM_ALLOC_OOM);
    pol_check(&b);
    pol_end(&b);
}

Test(buddy, min_block_rounding)
{
    pol_t b;
    bud_new(&b, "4KiB", "1MiB", "", 0);
    cr_expect_eq(pol_alloc(&b, 1).size, 4 * KiB);
    cr_expect_eq(pol_alloc(&b, 4096).size, 4 * KiB);
    cr_expect_eq(pol_alloc(&b, 4097).size, 8 * KiB);
    cr_expect_eq(pol_alloc(&b, 100000).size, 128 * KiB);
    cr_expect_eq(pol_alloc(&b, MiB).size, MiB);
    pol_end(&b);
    bud_new(&b, "", "", "", 0);
    cr_expect_eq(pol_alloc(&b, 1).size, 512);
    cr_expect_eq(pol_alloc(&b, 513).size, 1024);
    cr_expect_eq(pol_alloc(&b, 700 * MiB).size, GiB);
    pol_end(&b);
}

Test(buddy, bad_params_rejected)
{
    static const struct {
        const char *min_block, *arena, *want;
    } cases[] = {
        {"1000", "", "invalid value '1000' for buddy.min_block: not a power of two"},
        {"0", "", "invalid value '0' for buddy.min_block: not a power of two"},
        {"", "3MiB", "invalid value '3145728' for buddy.arena: not a power of two"},
        {"", "256", "invalid value '256' for buddy.arena: smaller than min_block (512)"},
        {"1", "1GiB", "invalid value '1073741824' for buddy.arena: more than 2^24 min-blocks per "
                      "arena (raise min_block)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pol_t b;
        gm_error_t err = {0};
        cr_expect_eq(bud_make(&b, cases[i].min_block, cases[i].arena, "", 0, 0, &err), GM_EINVAL);
        cr_expect_str_eq(err.msg, cases[i].want);
    }
    pol_t b;
    gm_error_t err = {0};
    cr_expect_eq(bud_make(&b, "1", "16MiB", "", 0, 0, &err), 0, "2^24 min-blocks is the limit");
    pol_end(&b);
    cr_expect_eq(bud_make(&b, "512", "512", "", 0, 0, &err), 0, "arena = min_block is fine");
    pol_end(&b);
}

Test(buddy, bad_frees_rejected)
{
    pol_t b;
    bud_new(&b, "512", "64KiB", "", 0);
    gm_block_t x = pol_alloc(&b, 512), y = pol_alloc(&b, 4096);
    gm_block_t wrong = x;
    wrong.size = 1024;
    cr_expect_lt(gm_policy_free(b.p, &wrong, 0), 0, "wrong size");
    wrong = y;
    wrong.addr += 512;
    wrong.size = 512;
    cr_expect_lt(gm_policy_free(b.p, &wrong, 0), 0, "inside a live block");
    wrong = y;
    wrong.addr += 4096;
    cr_expect_lt(gm_policy_free(b.p, &wrong, 0), 0, "a free block");
    wrong.size = 1000;
    cr_expect_lt(gm_policy_free(b.p, &wrong, 0), 0, "not a power of two");
    wrong = x;
    wrong.size = 128 * KiB;
    cr_expect_lt(gm_policy_free(b.p, &wrong, 0), 0, "larger than the arena");
    pol_check(&b);
    cr_expect_eq(pol_stats(&b).allocated, 512 + 4096);
    pol_free(&b, x);
    cr_expect_lt(gm_policy_free(b.p, &x, 0), 0, "double free");
    pol_free(&b, y);
    gm_block_t big = pol_alloc(&b, 100 * KiB);
    wrong = big;
    wrong.size = 64 * KiB;
    cr_expect_lt(gm_policy_free(b.p, &wrong, 0), 0, "over-size block with the wrong size");
    wrong = big;
    wrong.addr += 64 * KiB;
    cr_expect_lt(gm_policy_free(b.p, &wrong, 0), 0, "inside an over-size block");
    pol_free(&b, big);
    cr_expect_lt(gm_policy_free(b.p, &big, 0), 0, "over-size double free");
    pol_check(&b);
    pol_end(&b);
}

Test(buddy, coarse_device_granularity)
{
    /* the device rounds each 8 KiB arena up to 64 KiB: accounted, not used */
    pol_t b;
    gm_error_t err = {0};
    cr_assert_eq(bud_make(&b, "512", "8KiB", "never", 0, 64 * KiB, &err), 0, "%s", err.msg);
    gm_block_t x = pol_alloc(&b, 512);
    cr_expect_eq(b.dev.reserved, 64 * KiB);
    gm_policy_stats_t st = pol_stats(&b);
    cr_expect_eq(st.free_bytes, 64 * KiB - 512);
    cr_expect_eq(st.largest_free, 4 * KiB);
    pol_free(&b, x);
    pol_end(&b);
}

Test(buddy, many_arenas)
{
    /* arena = min_block: every block is an arena; slot tables grow past 64 */
    pol_t b;
    bud_new(&b, "512", "512", "never", 0);
    enum { N = 300 };
    gm_block_t blk[N];
    for (int i = 0; i < N; i++) {
        gm_request_t req = {.size = 100};
        cr_assert_eq(gm_policy_alloc(b.p, &req, &blk[i]), 0);
    }
    pol_check(&b);
    cr_expect_eq(b.dev.mallocs, N);
    for (int i = 0; i < N; i += 2)
        cr_assert_eq(gm_policy_free(b.p, &blk[i], 0), 0);
    pol_check(&b);
    for (int i = 0; i < N; i += 2) {
        gm_request_t req = {.size = 512};
        gm_block_t again;
        cr_assert_eq(gm_policy_alloc(b.p, &req, &again), 0);
        cr_assert_eq(again.addr, blk[i].addr, "lowest slot first");
    }
    cr_expect_eq(b.dev.mallocs, N);
    pol_check(&b);
    pol_end(&b);

    bud_new(&b, "512", "1KiB", "empty", 0);
    for (int i = 0; i < N; i++)
        blk[i] = pol_alloc(&b, 1024);
    for (int i = N - 1; i >= 0; i -= 3)
        pol_free(&b, blk[i]);
    for (int i = 0; i < N / 3; i++)
        (void)pol_alloc(&b, 1024);
    cr_expect_eq(b.dev.reserved, (uint64_t)N * KiB);
    pol_end(&b);
}

Test(buddy, deterministic)
{
    uint64_t addrs[2][500];
    for (int run = 0; run < 2; run++) {
        pol_t b;
        bud_new(&b, "", "16MiB", "", 0);
        uint64_t rng = 3;
        gm_block_t live[500];
        size_t n = 0;
        for (int i = 0; i < 500; i++) {
            if (n > 0 && gt_rand(&rng) % 3 == 0) {
                size_t k = gt_rand(&rng) % n;
                cr_assert_eq(gm_policy_free(b.p, &live[k], 0), 0);
                live[k] = live[--n];
            }
            gm_request_t req = {.size = 1 + gt_rand(&rng) % (4 * MiB)};
            cr_assert_eq(gm_policy_alloc(b.p, &req, &live[n]), 0);
            addrs[run][i] = live[n++].addr;
        }
        pol_check(&b);
        pol_end(&b);
    }
    cr_expect_eq(memcmp(addrs[0], addrs[1], sizeof addrs[0]), 0, "same trace, same addresses");
}

Test(buddy, check_reports_reason_buffers)
{
    pol_t b;
    bud_new(&b, "", "", "", 0);
    (void)pol_alloc(&b, 1000);
    cr_expect_eq(gm_policy_check(b.p, NULL, 0), 0);
    char why[4] = "xyz";
    cr_expect_eq(gm_policy_check(b.p, why, sizeof why), 0);
    cr_expect_str_eq(why, "", "cleared when all is well");
    pol_end(&b);
}
