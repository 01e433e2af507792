/*
 * base/layout.c — recorded starting layouts (gmsim/layout.h): the checks a
 * layout must pass and its release.  Storing one in a store is
 * store/layout.c; policies that start from one (sim/caching.c) use only
 * what is here.
 */
#include <stdlib.h>

#include "gmsim/layout.h"
#include "gmsim/trace.h"

int gm_layout_validate(const gm_layout_t *l, gm_error_t *err)
{
    if (l == NULL)
        return gm_error_set(err, GM_EINVAL, "no layout");
    size_t next_block = 0;
    for (size_t i = 0; i < l->nsegments; i++) {
        const gm_layout_segment_t *seg = &l->segments[i];
        if (seg->size == 0 || seg->size > GM_SIZE_LIMIT)
            return gm_error_set(err, GM_EFORMAT, "layout segment %zu: size %llu out of range", i,
                                (unsigned long long)seg->size);
        if (i > 0 && seg->address < l->segments[i - 1].address + l->segments[i - 1].size &&
            seg->device == l->segments[i - 1].device)
            return gm_error_set(err, GM_EFORMAT,
                                "layout segment %zu: overlaps or precedes segment %zu", i, i - 1);
        if (seg->pool > GM_POOL_SMALL || seg->expandable > 1)
            return gm_error_set(err, GM_EFORMAT, "layout segment %zu: bad pool or kind", i);
        if (seg->first_block != next_block || seg->nblocks == 0 ||
            seg->nblocks > l->nblocks - seg->first_block)
            return gm_error_set(err, GM_EFORMAT,
                                "layout segment %zu: blocks %zu..+%zu do not follow the "
                                "previous segment's",
                                i, seg->first_block, seg->nblocks);
        uint64_t offset = 0;
        for (size_t k = 0; k < seg->nblocks; k++) {
            const gm_layout_block_t *b = &l->blocks[seg->first_block + k];
            if (b->offset != offset || b->size == 0 || b->size > seg->size - offset)
                return gm_error_set(err, GM_EFORMAT,
                                    "layout segment %zu block %zu: [%llu, +%llu) does not tile "
                                    "the segment",
                                    i, k, (unsigned long long)b->offset,
                                    (unsigned long long)b->size);
            if (b->id < GM_LAYOUT_FREE || b->requested > b->size ||
                (b->id == GM_LAYOUT_FREE && b->requested != 0) ||
                (b->id != GM_LAYOUT_FREE && b->requested == 0))
                return gm_error_set(err, GM_EFORMAT,
                                    "layout segment %zu block %zu: bad owner or requested size",
                                    i, k);
            offset += b->size;
        }
        if (offset != seg->size)
            return gm_error_set(err, GM_EFORMAT,
                                "layout segment %zu: blocks cover %llu of its %llu bytes", i,
                                (unsigned long long)offset, (unsigned long long)seg->size);
        next_block += seg->nblocks;
    }
    if (next_block != l->nblocks)
        return gm_error_set(err, GM_EFORMAT, "layout: %zu blocks belong to no segment",
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
