/*
 * sim/torch_rules.c — PyTorch's request rounding (round_size and
 * roundup_power2_next_division), shared by the caching policy and the
 * snapshot rewinder; the rules and why they live here: sim/torch_rules.h.
 *
 * The division step is a power of two, 2^floor(log2 size) shifted right by
 * floor(log2 d), so the rounding is a mask and an add, exactly PyTorch's
 * arithmetic: a non-power-of-two d behaves as the power of two below it
 * (d = 3 steps by halves, d = 5 by quarters) while the "size > 512·d" test
 * that switches the rule on uses d as given.  Dividing the power of two by
 * d instead would give steps that are not multiples of 512 for such d and
 * blocks the allocator never makes.
 */
#include "sim/torch_rules.h"

#include <stddef.h>

static unsigned tr_log2(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }

unsigned gm__torch_interval(uint64_t size)
{
    unsigned l = tr_log2(size);
    if (l < 20)
        return 0;
    l -= 20;
    return l > GM_TORCH_INTERVALS - 1 ? GM_TORCH_INTERVALS - 1 : l;
}

uint64_t gm__torch_next_division(uint64_t size, uint64_t divisions)
{
    uint64_t floor2 = UINT64_C(1) << tr_log2(size);
    if (floor2 == size)
        return size;
    uint64_t step = floor2 >> tr_log2(divisions);
    if (step == 0)
        return floor2 << 1; /* more divisions than bytes: PyTorch's power-of-two ceiling */
    uint64_t lo = size & ~(step - 1);
    return lo == size ? size : lo + step;
}

uint64_t gm__torch_round(uint64_t size, const uint32_t div[GM_TORCH_INTERVALS])
{
    if (size < GM_TORCH_MIN_BLOCK)
        return GM_TORCH_MIN_BLOCK;
    uint64_t d = div != NULL ? div[gm__torch_interval(size)] : 0;
    if (d > 1 && size > GM_TORCH_MIN_BLOCK * d)
        return gm__torch_next_division(size, d);
    return (size + GM_TORCH_MIN_BLOCK - 1) / GM_TORCH_MIN_BLOCK * GM_TORCH_MIN_BLOCK;
}
