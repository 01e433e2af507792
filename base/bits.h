/*
 * base/bits.h — the small integer helpers more than one floor needs: the
 * greatest common divisor, zigzag signed-to-unsigned mapping, the LEB128
 * varint writer, powers of two and base-2 logarithms, a 64-bit rotate, the
 * MurmurHash3 finaliser, the interning tables' byte hash, the splitmix64
 * step and the three-way comparison of sort keys.
 *
 * Each was written again in the floors that use it (store's codec and
 * layouts, sim's device and policies, synth, report); one copy here keeps
 * them the same.  Everything is static inline: the codec and the policies
 * call these on their hot paths, so a call must cost what the expression
 * it replaces cost.  Where a helper's argument has a domain (the logarithms
 * want x > 0) it says so; none of them checks it.
 */
#ifndef GM_BASE_BITS_H
#define GM_BASE_BITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* gcd(a, b) by Euclid; gcd(a, 0) = a, so gcd(0, 0) = 0 and a running gcd
 * may start from 0. */
static inline uint64_t gm__gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Zigzag: a two's-complement difference d (as unsigned) to 0, -1, 1, -2, …
 * → 0, 1, 2, 3, …, so small magnitudes of either sign make short varints. */
static inline uint64_t gm__zigzag_u64(uint64_t d) { return (d << 1) ^ (0 - (d >> 63)); }
static inline uint64_t gm__unzigzag_u64(uint64_t v) { return (v >> 1) ^ (0 - (v & 1)); }
static inline uint32_t gm__zigzag_u32(uint32_t d) { return (d << 1) ^ (0u - (d >> 31)); }
static inline uint32_t gm__unzigzag_u32(uint32_t v) { return (v >> 1) ^ (0u - (v & 1)); }

/* Write v as an LEB128 varint (7 bits a byte, low first, the high bit set on
 * all but the last) at p, which has room for 10 bytes; the byte after it. */
static inline uint8_t *gm__varint_put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* 1 when x is a power of two (0 is not). */
static inline int gm__is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* floor(log2 x), the index of the highest set bit; x > 0. */
static inline unsigned gm__log2_floor(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }

/* ceil(log2 x): the smallest k with 2^k ≥ x; 0 for x ≤ 1. */
static inline unsigned gm__log2_ceil(uint64_t x)
{
    return x <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(x - 1);
}

/* The smallest power of two ≥ x (1 for x ≤ 1); 0 when that does not fit in
 * 64 bits (x > 2^63). */
static inline uint64_t gm__pow2_ceil(uint64_t x)
{
    if (x <= 1)
        return 1;
    if (x > (UINT64_C(1) << 63))
        return 0;
    return UINT64_C(1) << gm__log2_ceil(x);
}

/* x rotated left by r bits, 0 < r < 64. */
static inline uint64_t gm__rotl_u64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* MurmurHash3's 64-bit finaliser (fmix64): a bijection that spreads every
 * input bit over the output; fmix64(0) = 0. */
static inline uint64_t gm__fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return k;
}

/* A hash of the bytes s[0 .. n) for the interning tables (the pickle
 * decoder's strings, the store writer's tags and frames): FNV-1a over
 * 8-byte words, then over the bytes left, folded; frames texts are whole
 * stacks, kilobytes long, so a byte at a time would cost. */
static inline uint64_t gm__hash_bytes(const void *s, size_t n)
{
    const unsigned char *b = s;
    uint64_t h = UINT64_C(0xcbf29ce484222325) ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * UINT64_C(0x100000001b3);
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    return h ^ (h >> 32);
}

/* One splitmix64 step (Steele, Lea and Flood): advance *state by the golden
 * gamma and return the mixed value.  Seeds the xoshiro generators and is the
 * tests' generator. */
static inline uint64_t gm__splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A sort comparator's answer for one key: -1, 0 or 1 as a < b, a == b,
 * a > b.  A comparator of several keys takes the first that is not 0
 * (`int c = gm__cmp_u64(x->k1, y->k1); return c ? c : gm__cmp_u64(…)`);
 * a descending key passes y's before x's. */
static inline int gm__cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

/* The lexicographic order of the tuples a[0 .. n) and b[0 .. n) of
 * unsigned keys: the first key that differs decides.  With literal tuples a
 * comparator reads as what it sorts by:
 *   return gm__cmp_u64_keys((const uint64_t[]){x->ts, x->seq},
 *                           (const uint64_t[]){y->ts, y->seq}, 2); */
static inline int gm__cmp_u64_keys(const uint64_t *a, const uint64_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* qsort's and bsearch's comparator for an array of uint64_t, ascending. */
static inline int gm__cmp_u64_qsort(const void *a, const void *b)
{
    return gm__cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

#endif
