/*
 * sim/torch_rules.c — PyTorch's roundup_power2_next_division, the step of
 * round_size taken when divisions are on (the rest of the rules are inline
 * in sim/torch_rules.h, on the caching policy's allocation path), shared by
 * the caching policy and the snapshot rewinder.
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

#include "base/bits.h"

uint64_t gm__torch_next_division(uint64_t size, uint64_t divisions)
{
    uint64_t floor2 = UINT64_C(1) << gm__log2_floor(size);
    if (floor2 == size)
        return size;
    uint64_t step = floor2 >> gm__log2_floor(divisions);
    if (step == 0)
        return floor2 << 1; /* more divisions than bytes: PyTorch's power-of-two ceiling */
    uint64_t lo = size & ~(step - 1);
    return lo == size ? size : lo + step;
}
