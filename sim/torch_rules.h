/*
 * sim/torch_rules.h — the size rules of PyTorch's CUDA caching allocator
 * (c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.x: round_size,
 * get_allocation_size, should_split, roundup_power2_next_division and the
 * k* constants; docs/policies.md, `caching`, states them for users),
 * written once for the two places that apply them:
 * the `caching` policy (sim/caching/), which runs them forwards, and the
 * snapshot rewinder (formats/torch/rewind.c), which undoes a snapshot's
 * trace and must cut blocks exactly as the allocator did.  If the two
 * disagreed, a rebuilt starting layout would not be the one the policy
 * replays from.
 *
 * The rules, as PyTorch states them (our own code):
 *   round      below 512 B: 512 B.  Else with d = the divisions of the
 *              size's interval (16 intervals, clamp(floor(log2 size) - 20,
 *              0, 15), i.e. by MiB from 1 to 32 GiB), when d > 1 and
 *              size > 512·d: up to the next multiple of 2^floor(log2 size)
 *              >> floor(log2 d) (a power of two is kept as it is);
 *              otherwise up to a multiple of 512.  A d that is not a power
 *              of two (PyTorch's configuration refuses one, a hand-made
 *              settings table can hold one) thus steps as the power of two
 *              below it, while the threshold 512·d uses d itself.
 *   pool       rounded size <= 1 MiB: small pool, else large.
 *   segment    a new segment for a rounded request: 2 MiB (small), 20 MiB
 *              (large below 10 MiB), else the request rounded up to 2 MiB.
 *   split      small pool or expandable segments: when the remainder is at
 *              least 512 B; large pool: when the request is below
 *              max_split_size and the remainder is more than 1 MiB.
 *   pages      expandable segments map pages of 2 MiB (small pool) or
 *              20 MiB (large pool).
 *
 * The settings those rules read (max_split_size, roundup_power2_divisions,
 * expandable_segments, …) are decoded here too, once for both users, from
 * the two forms PyTorch gives them in (c10/core/AllocatorConfig.cpp
 * parseArgs and the snapshot's `allocator_settings` dict, which
 * torch/csrc/cuda/Module.cpp fills from the parsed configuration):
 *   conf       a PYTORCH_CUDA_ALLOC_CONF string, "key:value,…", cut into
 *              tokens at , : [ ] (each a token), spaces dropped;
 *              max_split_size_mb and max_non_split_rounding_mb in MiB (at
 *              least 20, the most SIZE_MAX / 1 MiB); garbage_collection_
 *              threshold in (0, 1); expandable_segments True or False;
 *              roundup_power2_divisions either "N" (every interval; N a
 *              power of two, or 0 for off) or "[K:N,…,>:N]" with K an
 *              interval start in MiB, a power of two (its interval: floor
 *              log2 K, clamped to the last), N 0 or a power of two: the
 *              first K's N also fills every interval below it, and ">"
 *              fills from the last named interval (included) to the end;
 *   recorded   the snapshot's dict: max_split_size in bytes (SIZE_MAX,
 *              i.e. unlimited, pickled as -1: <= 0 or a number beyond
 *              int64 is unlimited), garbage_collection_threshold,
 *              expandable_segments, and roundup_power2_divisions as a dict
 *              from the interval start in MiB ("1", "2", …, "32768") to
 *              its divisions; a list by interval or a bare number (every
 *              interval) is taken too.  A division count that is not a
 *              power of two is kept (see round above).
 * Anything else in either form is refused with a message naming the item,
 * so that a snapshot the importer takes is one the caching policy replays.
 *
 * Sizes are those PyTorch computes in size_t; every function here is total
 * (no failure) for the sizes a trace can carry: rounding a size within
 * 512 B or one division step of 2^64 would wrap, as it would in PyTorch,
 * and callers never pass such sizes (requests are bounded by device memory).
 */
#ifndef GM_SIM_TORCH_RULES_H
#define GM_SIM_TORCH_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"
#include "gmsim/json.h"

#define GM_TORCH_MIB (UINT64_C(1) << 20)
#define GM_TORCH_MIN_BLOCK UINT64_C(512)              /* kMinBlockSize */
#define GM_TORCH_SMALL_SIZE (1 * GM_TORCH_MIB)        /* kSmallSize: largest small request */
#define GM_TORCH_SMALL_BUFFER (2 * GM_TORCH_MIB)      /* kSmallBuffer: small segment and page */
#define GM_TORCH_MIN_LARGE_ALLOC (10 * GM_TORCH_MIB)  /* kMinLargeAlloc */
#define GM_TORCH_LARGE_BUFFER (20 * GM_TORCH_MIB)     /* kLargeBuffer: shared segment, page */
#define GM_TORCH_ROUND_LARGE (2 * GM_TORCH_MIB)       /* kRoundLarge */
#define GM_TORCH_INTERVALS 16                         /* roundup_power2_divisions intervals */
/* The most divisions gmsim takes: PyTorch reads the count with stoi, so
 * the largest power of two its configuration takes is 2^30. */
#define GM_TORCH_MAX_DIVISIONS (UINT32_C(1) << 30)

/* The roundup_power2_divisions interval of a size (> 0): clamp(floor(log2
 * size) - 20, 0, 15). */
static inline unsigned gm__torch_interval(uint64_t size)
{
    unsigned l = 63u - (unsigned)__builtin_clzll(size);
    if (l < 20)
        return 0;
    return l - 20 > GM_TORCH_INTERVALS - 1 ? GM_TORCH_INTERVALS - 1 : l - 20;
}

/* PyTorch's roundup_power2_next_division: size (> 0) rounded up to the next
 * multiple of 2^floor(log2 size) >> floor(log2 divisions); a power of two
 * stays; divisions must be >= 1 (callers pass d > 1 only). */
uint64_t gm__torch_next_division(uint64_t size, uint64_t divisions);

/* PyTorch's round_size: `size` (the request plus any block padding) rounded
 * as the allocator does, div[GM_TORCH_INTERVALS] the divisions per interval
 * (0 or 1: off), or NULL for none.  Inline: it is on the caching policy's
 * allocation path. */
static inline uint64_t gm__torch_round(uint64_t size, const uint32_t div[GM_TORCH_INTERVALS])
{
    if (size < GM_TORCH_MIN_BLOCK)
        return GM_TORCH_MIN_BLOCK;
    uint64_t d = div != NULL ? div[gm__torch_interval(size)] : 0;
    if (d > 1 && size > GM_TORCH_MIN_BLOCK * d)
        return gm__torch_next_division(size, d);
    return (size + GM_TORCH_MIN_BLOCK - 1) / GM_TORCH_MIN_BLOCK * GM_TORCH_MIN_BLOCK;
}

/* The pool of a rounded request: 1 small, 0 large. */
static inline int gm__torch_is_small(uint64_t rounded) { return rounded <= GM_TORCH_SMALL_SIZE; }

/* PyTorch's get_allocation_size: the device malloc made for a rounded
 * request that no cached block serves. */
static inline uint64_t gm__torch_segment_size(uint64_t rounded)
{
    if (rounded <= GM_TORCH_SMALL_SIZE)
        return GM_TORCH_SMALL_BUFFER;
    if (rounded < GM_TORCH_MIN_LARGE_ALLOC)
        return GM_TORCH_LARGE_BUFFER;
    return (rounded + GM_TORCH_ROUND_LARGE - 1) / GM_TORCH_ROUND_LARGE * GM_TORCH_ROUND_LARGE;
}

/* PyTorch's should_split: whether a block handed out for a rounded request
 * keeps `remaining` bytes apart as a free block.  by_min_block: the block
 * is in the small pool or in an expandable segment (the 512 B rule);
 * max_split: max_split_size, UINT64_MAX when unlimited. */
static inline int gm__torch_should_split(uint64_t rounded, uint64_t remaining, int by_min_block,
                                         uint64_t max_split)
{
    if (by_min_block)
        return remaining >= GM_TORCH_MIN_BLOCK;
    return rounded < max_split && remaining > GM_TORCH_SMALL_SIZE;
}

/* The page of an expandable segment of a pool (1 small, 0 large). */
static inline uint64_t gm__torch_page_size(int small)
{
    return small ? GM_TORCH_SMALL_BUFFER : GM_TORCH_LARGE_BUFFER;
}

/* ---- the settings ------------------------------------------------------------ */

/* The allocator settings the rules read, as PyTorch's configuration holds
 * them. */
typedef struct gm__torch_settings {
    uint64_t max_split; /* max_split_size in bytes; UINT64_MAX: unlimited */
    uint64_t max_nsr;   /* max_non_split_rounding_size in bytes */
    double gc;          /* garbage_collection_threshold; 0: off */
    uint64_t align;     /* base_addr_aligned_kb in bytes (the Ascend build); 0: off */
    uint32_t div[GM_TORCH_INTERVALS]; /* roundup_power2_divisions; 0 or 1: off */
    int expandable;                   /* expandable_segments */
} gm__torch_settings_t;

/* PyTorch's defaults: unlimited max_split_size, max_non_split_rounding of
 * 20 MiB, everything else off. */
void gm__torch_settings_default(gm__torch_settings_t *s);

/* Apply a PYTORCH_CUDA_ALLOC_CONF string over s.  GM_EINVAL with
 * "conf 'TEXT': …" naming the offending item (unknown keys with the nearest
 * known one); s may be partly changed then.  The pinned-memory and lock
 * options are checked and have no effect; backend must be native. */
int gm__torch_conf_apply(gm__torch_settings_t *s, const char *text, gm_error_t *err);

/* A roundup_power2_divisions value alone, "N" or "[K:N,…]" as in the conf
 * string ("" or NULL: all off) into div.  GM_EINVAL with
 * "roundup_power2_divisions 'TEXT': …"; div is unchanged then. */
int gm__torch_divisions_parse(uint32_t div[GM_TORCH_INTERVALS], const char *text,
                              gm_error_t *err);

/* Apply a recorded allocator_settings dict (JSON: the snapshot's dict as
 * the importer stores it) over s; members it does not name are left.
 * GM_EFORMAT with "allocator_settings: …" naming the member; s may be
 * partly changed then. */
int gm__torch_settings_read(const gm_jv_t *dict, gm__torch_settings_t *s, gm_error_t *err);

#endif
