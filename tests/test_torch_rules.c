/*
 * tests/test_torch_rules.c — PyTorch's caching-allocator size rules
 * (sim/torch_rules.h), shared by the caching policy and the snapshot
 * rewinder.  The expected values are worked out by hand from PyTorch's
 * round_size / roundup_power2_next_division / get_allocation_size /
 * should_split (CUDACachingAllocator.cpp); the law test checks the
 * rounding against a second formulation (enumerating the d' equal steps
 * between two powers of two, d' the power of two at or below d).
 */
#include <criterion/criterion.h>

#include <stdint.h>

#include "sim/torch_rules.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static void fill(uint32_t div[GM_TORCH_INTERVALS], uint32_t d)
{
    for (int i = 0; i < GM_TORCH_INTERVALS; i++)
        div[i] = d;
}

static uint64_t round_all(uint64_t size, uint32_t d)
{
    uint32_t div[GM_TORCH_INTERVALS];
    fill(div, d);
    return gm__torch_round(size, div);
}

Test(torch_rules, interval_boundaries)
{
    cr_assert_eq(gm__torch_interval(1), 0);
    cr_assert_eq(gm__torch_interval(MiB - 1), 0);
    cr_assert_eq(gm__torch_interval(MiB), 0);
    cr_assert_eq(gm__torch_interval(2 * MiB - 1), 0);
    cr_assert_eq(gm__torch_interval(2 * MiB), 1);
    cr_assert_eq(gm__torch_interval(4 * MiB - 1), 1);
    cr_assert_eq(gm__torch_interval(4 * MiB), 2);
    cr_assert_eq(gm__torch_interval(32 * GiB - 1), 14);
    cr_assert_eq(gm__torch_interval(32 * GiB), 15);
    cr_assert_eq(gm__torch_interval(64 * GiB), 15);
    cr_assert_eq(gm__torch_interval(UINT64_MAX), 15);
}

/* No divisions (NULL, 0 or 1): 512 B minimum, then multiples of 512. */
Test(torch_rules, round_plain)
{
    for (uint32_t d = 0; d <= 1; d++) {
        cr_assert_eq(round_all(0, d), 512);
        cr_assert_eq(round_all(1, d), 512);
        cr_assert_eq(round_all(511, d), 512);
        cr_assert_eq(round_all(512, d), 512);
        cr_assert_eq(round_all(513, d), 1024);
        cr_assert_eq(round_all(2049, d), 2560);
        cr_assert_eq(round_all(MiB + 1, d), MiB + 512);
        cr_assert_eq(round_all(100 * MiB + 1, d), 100 * MiB + 512);
    }
    cr_assert_eq(gm__torch_round(1, NULL), 512);
    cr_assert_eq(gm__torch_round(2049, NULL), 2560);
    cr_assert_eq(gm__torch_round(MiB + 1, NULL), MiB + 512);
}

/* d = 2: on above 1024 B; steps of half the power of two below. */
Test(torch_rules, round_two)
{
    cr_assert_eq(round_all(1024, 2), 1024);
    cr_assert_eq(round_all(1025, 2), 1536);
    cr_assert_eq(round_all(2049, 2), 3072); /* 512-rounding would give 2560 */
    cr_assert_eq(round_all(MiB + 1, 2), MiB + MiB / 2);
    cr_assert_eq(round_all(3 * MiB, 2), 3 * MiB);
    cr_assert_eq(round_all(3 * MiB + 1, 2), 4 * MiB);
    cr_assert_eq(round_all(4 * MiB - 1, 2), 4 * MiB);
    cr_assert_eq(round_all(4 * MiB, 2), 4 * MiB);
}

/* d = 4: on above 2048 B; quarters. */
Test(torch_rules, round_four)
{
    cr_assert_eq(round_all(1200, 4), 1536); /* 1200 <= 512*4: plain rounding */
    cr_assert_eq(round_all(2048, 4), 2048);
    cr_assert_eq(round_all(2049, 4), 2560);
    cr_assert_eq(round_all(4097, 4), 5120); /* 512-rounding would give 4608 */
    cr_assert_eq(round_all(5 * MiB + 1, 4), 6 * MiB);
    cr_assert_eq(round_all(10 * MiB, 4), 10 * MiB);
    cr_assert_eq(round_all(10 * MiB + 1, 4), 12 * MiB);
    cr_assert_eq(round_all(16 * MiB, 4), 16 * MiB);
}

/* d = 8: on above 4096 B; eighths. */
Test(torch_rules, round_eight)
{
    cr_assert_eq(round_all(4096, 8), 4096);
    cr_assert_eq(round_all(4097, 8), 4608);
    cr_assert_eq(round_all(8193, 8), 9216); /* 512-rounding would give 8704 */
    cr_assert_eq(round_all(100 * MiB + 1, 8), 104 * MiB);
    cr_assert_eq(round_all(120 * MiB + 1, 8), 128 * MiB);
}

/* d = 3: PyTorch steps by 2^floor(log2 size) >> floor(log2 3), i.e. halves
 * as d = 2 does, with the switch-on threshold 512*3 = 1536 B.  Dividing by
 * 3 instead would give 2728 and 1398100 below: not multiples of 512. */
Test(torch_rules, round_three_is_halves)
{
    cr_assert_eq(round_all(1536, 3), 1536);
    cr_assert_eq(round_all(1537, 3), 2048);
    cr_assert_eq(round_all(2049, 3), 3072);
    cr_assert_eq(round_all(MiB + 1, 3), MiB + MiB / 2);
    cr_assert_eq(round_all(3 * MiB + 1, 3), 4 * MiB);
    for (uint64_t s = 1537; s < 64 * MiB; s = s * 3 / 2 + 1)
        cr_assert_eq(round_all(s, 3), round_all(s, 2), "size %llu", (unsigned long long)s);
}

/* d = 5: quarters, as d = 4, threshold 2560 B. */
Test(torch_rules, round_five_is_quarters)
{
    cr_assert_eq(round_all(2560, 5), 2560);
    cr_assert_eq(round_all(2561, 5), 3072);
    cr_assert_eq(round_all(4097, 5), 5120);
    cr_assert_eq(round_all(3 * MiB + 1, 5), 3 * MiB + MiB / 2); /* /5 would give 3355440 */
    cr_assert_eq(round_all(10 * MiB + 1, 5), 12 * MiB);
    for (uint64_t s = 2561; s < 64 * MiB; s = s * 3 / 2 + 1)
        cr_assert_eq(round_all(s, 5), round_all(s, 4), "size %llu", (unsigned long long)s);
}

/* Each interval has its own divisions. */
Test(torch_rules, round_per_interval)
{
    uint32_t div[GM_TORCH_INTERVALS] = {0};
    div[1] = 4; /* [2 MiB, 4 MiB) */
    div[15] = 2; /* 32 GiB and up */
    cr_assert_eq(gm__torch_round(2 * MiB - 1, div), 2 * MiB);
    cr_assert_eq(gm__torch_round(MiB + 1, div), MiB + 512);
    cr_assert_eq(gm__torch_round(2 * MiB + 1, div), 2 * MiB + MiB / 2);
    cr_assert_eq(gm__torch_round(4 * MiB - 1, div), 4 * MiB);
    cr_assert_eq(gm__torch_round(4 * MiB + 1, div), 4 * MiB + 512);
    cr_assert_eq(gm__torch_round(32 * GiB - 1, div), 32 * GiB);
    cr_assert_eq(gm__torch_round(32 * GiB + 1, div), 48 * GiB);
    cr_assert_eq(gm__torch_round(100 * GiB, div), 128 * GiB); /* floor 64 GiB: halves */
}

Test(torch_rules, next_division)
{
    cr_assert_eq(gm__torch_next_division(1200, 4), 1280); /* PyTorch's own example */
    cr_assert_eq(gm__torch_next_division(4096, 8), 4096);  /* a power of two stays */
    cr_assert_eq(gm__torch_next_division(3 * MiB, 2), 3 * MiB);
    cr_assert_eq(gm__torch_next_division(3000, 3), 3072);
    cr_assert_eq(gm__torch_next_division(2500, 5), 2560);
    cr_assert_eq(gm__torch_next_division(1000, 1024), 1024); /* step 0: the power-of-two ceiling */
    cr_assert_eq(gm__torch_next_division(1000, 1), 1024);
}

/* Law: with d > 1 and size > 512*d, the result is the smallest of the
 * points p + k*(p/d'), k = 0..d', p = 2^floor(log2 size), d' the power of
 * two at or below d, that is >= size; it is a multiple of 512. */
Test(torch_rules, round_law)
{
    static const uint32_t ds[] = {2, 3, 4, 5, 6, 7, 8, 12, 16, 64, 100, 1024};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        uint64_t d = ds[i], dp = 1;
        while (dp * 2 <= d)
            dp *= 2;
        for (uint64_t s = 512 * d + 1; s < 2 * GiB; s += s / 7 + 511) {
            uint64_t p = 1;
            while (p * 2 <= s)
                p *= 2;
            uint64_t want = 0;
            for (uint64_t k = 0; k <= dp && want == 0; k++)
                if (p + k * (p / dp) >= s)
                    want = p + k * (p / dp);
            uint64_t got = round_all(s, (uint32_t)d);
            cr_assert_eq(got, want, "d %llu size %llu: %llu, want %llu", (unsigned long long)d,
                         (unsigned long long)s, (unsigned long long)got, (unsigned long long)want);
            cr_assert_eq(got % 512, 0, "d %llu size %llu", (unsigned long long)d,
                         (unsigned long long)s);
        }
    }
}

Test(torch_rules, pool_boundary)
{
    cr_assert(gm__torch_is_small(512));
    cr_assert(gm__torch_is_small(MiB));
    cr_assert(!gm__torch_is_small(MiB + 512));
    cr_assert(gm__torch_is_small(gm__torch_round(MiB, NULL)));
    cr_assert(!gm__torch_is_small(gm__torch_round(MiB + 1, NULL)));
}

Test(torch_rules, segment_size)
{
    cr_assert_eq(gm__torch_segment_size(512), 2 * MiB);
    cr_assert_eq(gm__torch_segment_size(MiB), 2 * MiB);
    cr_assert_eq(gm__torch_segment_size(MiB + 512), 20 * MiB);
    cr_assert_eq(gm__torch_segment_size(10 * MiB - 512), 20 * MiB);
    cr_assert_eq(gm__torch_segment_size(10 * MiB), 10 * MiB);
    cr_assert_eq(gm__torch_segment_size(10 * MiB + 512), 12 * MiB);
    cr_assert_eq(gm__torch_segment_size(12 * MiB), 12 * MiB);
    cr_assert_eq(gm__torch_segment_size(GiB + 512), GiB + 2 * MiB);
}

Test(torch_rules, should_split)
{
    /* small pool or expandable: remainder >= 512 */
    cr_assert(!gm__torch_should_split(512, 0, 1, UINT64_MAX));
    cr_assert(!gm__torch_should_split(512, 511, 1, UINT64_MAX));
    cr_assert(gm__torch_should_split(512, 512, 1, UINT64_MAX));
    cr_assert(gm__torch_should_split(200 * MiB, 512, 1, 100 * MiB)); /* max_split ignored */
    /* large pool: request < max_split_size and remainder > 1 MiB */
    cr_assert(!gm__torch_should_split(2 * MiB, MiB, 0, UINT64_MAX));
    cr_assert(gm__torch_should_split(2 * MiB, MiB + 512, 0, UINT64_MAX));
    cr_assert(gm__torch_should_split(100 * MiB - 512, 2 * MiB, 0, 100 * MiB));
    cr_assert(!gm__torch_should_split(100 * MiB, 2 * MiB, 0, 100 * MiB));
    cr_assert(!gm__torch_should_split(100 * MiB, 64 * KiB, 0, UINT64_MAX));
}

Test(torch_rules, page_size)
{
    cr_assert_eq(gm__torch_page_size(1), 2 * MiB);
    cr_assert_eq(gm__torch_page_size(0), 20 * MiB);
}
