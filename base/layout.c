/*
 * base/layout.c — recorded starting layouts (gmsim/layout.h): the checks a
 * layout must pass and its release.  Storing one in a store is
 * store/layout.c; policies that start from one (sim/caching/) use only
 * what is here.
 */
#include <stdlib.h>

#include "gmsim/layout.h"
#include "gmsim/trace.h"

/* The messages name the place plainly: "starting layout: segment I at
 * ADDRESS (SIZE bytes)" and, for a block, "block K at ADDRESS (SIZE
 * bytes)" (K counted within its segment), then what is wrong with it. */
#define LAYOUT_SEG_FMT "starting layout: segment %zu at 0x%llx (%llu bytes)"
#define LAYOUT_SEG_ARGS(i, seg) \
    (i), (unsigned long long)(seg)->address, (unsigned long long)(seg)->size

int gm_layout_validate(const gm_layout_t *l, gm_error_t *err)
{
    if (l == NULL)
        return gm_error_set(err, GM_EINVAL, "no layout");
    size_t next_block = 0;
    for (size_t i = 0; i < l->nsegments; i++) {
        const gm_layout_segment_t *seg = &l->segments[i];
        if (seg->size == 0 || seg->size > GM_SIZE_LIMIT)
            return gm_error_set(err, GM_EFORMAT, LAYOUT_SEG_FMT ": size out of range",
                                LAYOUT_SEG_ARGS(i, seg));
        if (i > 0 && seg->address < l->segments[i - 1].address + l->segments[i - 1].size &&
            seg->device == l->segments[i - 1].device)
            return gm_error_set(err, GM_EFORMAT,
                                LAYOUT_SEG_FMT ": overlaps or precedes segment %zu at 0x%llx",
                                LAYOUT_SEG_ARGS(i, seg), i - 1,
                                (unsigned long long)l->segments[i - 1].address);
        if (seg->pool > GM_POOL_SMALL || seg->expandable > 1)
            return gm_error_set(err, GM_EFORMAT, LAYOUT_SEG_FMT ": bad pool %u or kind %u",
                                LAYOUT_SEG_ARGS(i, seg), seg->pool, seg->expandable);
        if (seg->first_block != next_block || seg->nblocks == 0 ||
            seg->nblocks > l->nblocks - seg->first_block)
            return gm_error_set(err, GM_EFORMAT,
                                LAYOUT_SEG_FMT ": blocks %zu..+%zu do not follow the previous "
                                "segment's",
                                LAYOUT_SEG_ARGS(i, seg), seg->first_block, seg->nblocks);
        uint64_t offset = 0;
        for (size_t k = 0; k < seg->nblocks; k++) {
            const gm_layout_block_t *b = &l->blocks[seg->first_block + k];
            unsigned long long at = (unsigned long long)(seg->address + b->offset),
                               size = (unsigned long long)b->size,
                               req = (unsigned long long)b->requested;
            if (b->offset != offset || b->size == 0 || b->size > seg->size - offset)
                return gm_error_set(err, GM_EFORMAT,
                                    LAYOUT_SEG_FMT ": block %zu at 0x%llx (%llu bytes) does not "
                                    "tile the segment (expected at 0x%llx)",
                                    LAYOUT_SEG_ARGS(i, seg), k, at, size,
                                    (unsigned long long)(seg->address + offset));
            const char *why = NULL;
            if (b->id < GM_LAYOUT_FREE)
                why = "has no valid owner";
            else if (b->requested > b->size)
                why = "requests more bytes than it has";
            else if (b->id == GM_LAYOUT_FREE && b->requested != 0)
                why = "is free but requests bytes";
            else if (b->id != GM_LAYOUT_FREE && b->requested == 0)
                why = "is allocated but requests 0 bytes";
            if (why)
                return gm_error_set(err, GM_EFORMAT,
                                    LAYOUT_SEG_FMT ": block %zu at 0x%llx (%llu bytes, owner "
                                    "%lld, %llu requested) %s",
                                    LAYOUT_SEG_ARGS(i, seg), k, at, size, (long long)b->id, req,
                                    why);
            offset += b->size;
        }
        if (offset != seg->size)
            return gm_error_set(err, GM_EFORMAT, LAYOUT_SEG_FMT ": its blocks cover %llu bytes",
                                LAYOUT_SEG_ARGS(i, seg), (unsigned long long)offset);
        next_block += seg->nblocks;
    }
    if (next_block != l->nblocks)
        return gm_error_set(err, GM_EFORMAT, "starting layout: %zu blocks belong to no segment",
                            l->nblocks - next_block);
    return 0;
}

void gm_layout_free(gm_layout_t *l)
{
    if (l == NULL)
        return;
    free(l->segments);
    free(l->blocks);
    free(l);
}
