/*
 * tests/test_bits.c — the integer helpers of base/bits.h on hand-worked
 * values and their edges: 0, 1, powers of two either side, UINT64_MAX.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/bits.h"
#include "util.h"

Test(bits, gcd)
{
    cr_assert_eq(gm__gcd_u64(0, 0), 0);
    cr_assert_eq(gm__gcd_u64(0, 7), 7);
    cr_assert_eq(gm__gcd_u64(7, 0), 7);
    cr_assert_eq(gm__gcd_u64(1, UINT64_MAX), 1);
    cr_assert_eq(gm__gcd_u64(12, 18), 6);
    cr_assert_eq(gm__gcd_u64(18, 12), 6);
    cr_assert_eq(gm__gcd_u64(17, 13), 1);
    cr_assert_eq(gm__gcd_u64(UINT64_MAX, UINT64_MAX), UINT64_MAX);
    /* 2^64 - 1 = 3 · 5 · 17 · 257 · 641 · 65537 · 6700417 */
    cr_assert_eq(gm__gcd_u64(UINT64_MAX, 255), 255);
    cr_assert_eq(gm__gcd_u64(UINT64_C(1) << 63, UINT64_C(1) << 21), UINT64_C(1) << 21);
    /* a timeline of reservations in 2 MiB and 512 B steps */
    cr_assert_eq(gm__gcd_u64(20u << 20, 2u << 20), 2u << 20);
    cr_assert_eq(gm__gcd_u64(2u << 20, 1536), 512);
}

Test(bits, zigzag)
{
    cr_assert_eq(gm__zigzag_u64(0), 0);
    cr_assert_eq(gm__zigzag_u64((uint64_t)-1), 1);
    cr_assert_eq(gm__zigzag_u64(1), 2);
    cr_assert_eq(gm__zigzag_u64((uint64_t)-2), 3);
    cr_assert_eq(gm__zigzag_u64(INT64_MAX), UINT64_MAX - 1);
    cr_assert_eq(gm__zigzag_u64((uint64_t)INT64_MIN), UINT64_MAX);
    cr_assert_eq(gm__zigzag_u32(0), 0);
    cr_assert_eq(gm__zigzag_u32(UINT32_MAX), 1); /* -1 */
    cr_assert_eq(gm__zigzag_u32(1), 2);
    cr_assert_eq(gm__zigzag_u32(INT32_MAX), UINT32_MAX - 1);
    cr_assert_eq(gm__zigzag_u32(UINT32_C(1) << 31), UINT32_MAX); /* INT32_MIN */
    const uint64_t v64[] = {0, 1, 2, 63, 64, UINT64_MAX, UINT64_MAX - 1, UINT64_C(1) << 63,
                            (UINT64_C(1) << 63) - 1, UINT64_C(0x123456789abcdef0)};
    for (size_t i = 0; i < sizeof v64 / sizeof v64[0]; i++) {
        cr_assert_eq(gm__unzigzag_u64(gm__zigzag_u64(v64[i])), v64[i]);
        cr_assert_eq(gm__zigzag_u64(gm__unzigzag_u64(v64[i])), v64[i]);
    }
    const uint32_t v32[] = {0, 1, 2, UINT32_MAX, UINT32_MAX - 1, UINT32_C(1) << 31};
    for (size_t i = 0; i < sizeof v32 / sizeof v32[0]; i++) {
        cr_assert_eq(gm__unzigzag_u32(gm__zigzag_u32(v32[i])), v32[i]);
        cr_assert_eq(gm__zigzag_u32(gm__unzigzag_u32(v32[i])), v32[i]);
    }
}

static size_t put(uint64_t v, uint8_t out[10])
{
    return (size_t)(gm__varint_put(out, v) - out);
}

Test(bits, varint_put)
{
    uint8_t b[10];
    cr_assert_eq(put(0, b), 1);
    cr_assert_eq(b[0], 0);
    cr_assert_eq(put(1, b), 1);
    cr_assert_eq(b[0], 1);
    cr_assert_eq(put(127, b), 1);
    cr_assert_eq(b[0], 0x7f);
    cr_assert_eq(put(128, b), 2);
    cr_assert_eq(b[0], 0x80);
    cr_assert_eq(b[1], 0x01);
    cr_assert_eq(put(300, b), 2); /* 300 = 0b10_0101100 */
    cr_assert_eq(b[0], 0xac);
    cr_assert_eq(b[1], 0x02);
    cr_assert_eq(put(16383, b), 2);
    cr_assert_eq(put(16384, b), 3);
    cr_assert_eq(put(UINT64_C(1) << 63, b), 10);
    cr_assert_eq(b[9], 0x01);
    cr_assert_eq(put(UINT64_MAX, b), 10);
    for (int i = 0; i < 9; i++)
        cr_assert_eq(b[i], 0xff);
    cr_assert_eq(b[9], 0x01);
}

Test(bits, powers_of_two)
{
    cr_assert_eq(gm__is_pow2(0), 0);
    cr_assert_eq(gm__is_pow2(1), 1);
    cr_assert_eq(gm__is_pow2(2), 1);
    cr_assert_eq(gm__is_pow2(3), 0);
    cr_assert_eq(gm__is_pow2(512), 1);
    cr_assert_eq(gm__is_pow2(UINT64_C(1) << 63), 1);
    cr_assert_eq(gm__is_pow2(UINT64_MAX), 0);
    for (unsigned k = 1; k < 64; k++) {
        uint64_t p = UINT64_C(1) << k;
        cr_assert_eq(gm__is_pow2(p), 1);
        cr_assert_eq(gm__is_pow2(p - 1), k == 1);
        cr_assert_eq(gm__is_pow2(p + 1), 0);
    }

    cr_assert_eq(gm__pow2_ceil(0), 1);
    cr_assert_eq(gm__pow2_ceil(1), 1);
    cr_assert_eq(gm__pow2_ceil(2), 2);
    cr_assert_eq(gm__pow2_ceil(3), 4);
    cr_assert_eq(gm__pow2_ceil(1000), 1024);
    cr_assert_eq(gm__pow2_ceil(UINT64_C(1) << 63), UINT64_C(1) << 63);
    cr_assert_eq(gm__pow2_ceil((UINT64_C(1) << 63) + 1), 0);
    cr_assert_eq(gm__pow2_ceil(UINT64_MAX), 0);
    for (unsigned k = 1; k < 63; k++) {
        uint64_t p = UINT64_C(1) << k;
        cr_assert_eq(gm__pow2_ceil(p), p);
        cr_assert_eq(gm__pow2_ceil(p + 1), 2 * p);
        cr_assert_eq(gm__pow2_ceil(p - 1), k == 1 ? 1 : p);
    }
}

Test(bits, logarithms)
{
    cr_assert_eq(gm__log2_floor(1), 0);
    cr_assert_eq(gm__log2_floor(2), 1);
    cr_assert_eq(gm__log2_floor(3), 1);
    cr_assert_eq(gm__log2_floor(1u << 20), 20);
    cr_assert_eq(gm__log2_floor((1u << 20) + 1), 20);
    cr_assert_eq(gm__log2_floor(UINT64_MAX), 63);
    cr_assert_eq(gm__log2_ceil(0), 0);
    cr_assert_eq(gm__log2_ceil(1), 0);
    cr_assert_eq(gm__log2_ceil(2), 1);
    cr_assert_eq(gm__log2_ceil(3), 2);
    cr_assert_eq(gm__log2_ceil(UINT64_C(1) << 63), 63);
    cr_assert_eq(gm__log2_ceil(UINT64_MAX), 64);
    for (unsigned k = 1; k < 64; k++) {
        uint64_t p = UINT64_C(1) << k;
        cr_assert_eq(gm__log2_floor(p), k);
        cr_assert_eq(gm__log2_floor(p - 1), k - 1);
        cr_assert_eq(gm__log2_ceil(p), k);
        cr_assert_eq(gm__log2_ceil(p + 1), k + 1);
    }
}

Test(bits, rotate)
{
    cr_assert_eq(gm__rotl_u64(1, 1), 2);
    cr_assert_eq(gm__rotl_u64(UINT64_C(1) << 63, 1), 1);
    cr_assert_eq(gm__rotl_u64(UINT64_C(0x8000000000000001), 4), 0x18);
    cr_assert_eq(gm__rotl_u64(UINT64_MAX, 17), UINT64_MAX);
    cr_assert_eq(gm__rotl_u64(0, 33), 0);
    cr_assert_eq(gm__rotl_u64(UINT64_C(0x0123456789abcdef), 32), UINT64_C(0x89abcdef01234567));
}

/* The expected outputs are what MurmurHash3's fmix64 and Vigna's
 * splitmix64.c give for the same inputs (splitmix64 seeded with 0). */
Test(bits, mixers)
{
    cr_assert_eq(gm__fmix64(0), 0);
    cr_assert_eq(gm__fmix64(1), UINT64_C(0xb456bcfc34c2cb2c));
    cr_assert_eq(gm__fmix64(UINT64_MAX), UINT64_C(0x64b5720b4b825f21));

    uint64_t s = 0;
    cr_assert_eq(gm__splitmix64(&s), UINT64_C(0xe220a8397b1dcdaf));
    cr_assert_eq(s, UINT64_C(0x9e3779b97f4a7c15));
    cr_assert_eq(gm__splitmix64(&s), UINT64_C(0x6e789e6aa1b965f4));
    cr_assert_eq(gm__splitmix64(&s), UINT64_C(0x06c45d188009454f));
    uint64_t t = 0;
    cr_assert_eq(gt_rand(&t), UINT64_C(0xe220a8397b1dcdaf));
}

/* The three-way comparison at the edges of each type: a subtraction
 * (a - b) or an int cast would get these wrong. */
Test(bits, compare)
{
    cr_assert_eq(gm__cmp_u64(0, 0), 0);
    cr_assert_eq(gm__cmp_u64(0, UINT64_MAX), -1);
    cr_assert_eq(gm__cmp_u64(UINT64_MAX, 0), 1);
    cr_assert_eq(gm__cmp_u64(UINT64_C(1) << 32, 1), 1);
    const uint64_t a[] = {1, 2, UINT64_MAX}, b[] = {1, 3, 0}, c[] = {1, 2, UINT64_MAX};
    cr_assert_eq(gm__cmp_u64_keys(a, b, 3), -1);
    cr_assert_eq(gm__cmp_u64_keys(b, a, 3), 1);
    cr_assert_eq(gm__cmp_u64_keys(a, c, 3), 0);
    cr_assert_eq(gm__cmp_u64_keys(a, b, 1), 0);
    cr_assert_eq(gm__cmp_u64_keys(c, (const uint64_t[]){1, 2, 0}, 3), 1);
    uint64_t v[] = {UINT64_MAX, 3, UINT64_C(1) << 63, 0, 3};
    qsort(v, 5, sizeof *v, gm__cmp_u64_qsort);
    uint64_t want[] = {0, 3, 3, UINT64_C(1) << 63, UINT64_MAX};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(v[i], want[i]);
    uint64_t key = 3;
    cr_assert_not_null(bsearch(&key, v, 5, sizeof *v, gm__cmp_u64_qsort));
}
