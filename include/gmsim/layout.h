/*
 * gmsim/layout.h — an allocator's recorded state at the start of a trace.
 *
 * Recordings usually begin mid-run: PyTorch's snapshot trace is a ring
 * buffer, captures attach late.  Undoing the recorded events backwards from
 * the snapshot's final segments gives every segment the caching allocator
 * held when recording began and every block in it.  The importer stores
 * that layout with the trace (gm_writer_layout); a policy that models the
 * recorded allocator may start warm from it (gm_trace_context_t.layout)
 * instead of from an empty device.
 *
 * Blocks of a segment are listed in address order and tile it exactly
 * (offsets from 0, each block starting where the previous one ends, the
 * last ending at the segment's size).  An allocated block names the
 * pre-existing ALLOC event that owns it (`id`, the allocation ordinal of an
 * ALLOC flagged GM_EVENT_PREEXISTING at the start of the trace).
 */
#ifndef GMSIM_LAYOUT_H
#define GMSIM_LAYOUT_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"

GM_API_BEGIN

#define GM_LAYOUT_FREE INT64_C(-1) /* gm_layout_block_t.id of a free block */

typedef enum gm_layout_pool {
    GM_POOL_LARGE = 0, /* PyTorch's large pool (segments for requests > 1 MiB) */
    GM_POOL_SMALL = 1, /* PyTorch's small pool (2 MiB segments, requests ≤ 1 MiB) */
} gm_layout_pool_t;

typedef struct gm_layout_block {
    uint64_t offset;    /* from the segment's address */
    uint64_t size;      /* block bytes (as the allocator sized it) */
    uint64_t requested; /* bytes the application asked for; 0 for a free block */
    int64_t id;         /* owning pre-existing ALLOC's id, or GM_LAYOUT_FREE */
} gm_layout_block_t;

typedef struct gm_layout_segment {
    uint64_t address;    /* device address as recorded */
    uint64_t size;       /* reserved bytes (mapped bytes for an expandable one) */
    uint64_t stream;     /* stream handle as recorded (not interned) */
    uint32_t stream_index; /* the trace's interned index of `stream` */
    uint16_t device;
    uint8_t pool;        /* gm_layout_pool_t */
    uint8_t expandable;  /* 1: an expandable segment (a mapped virtual range) */
    size_t first_block;  /* index of its first block in gm_layout_t.blocks */
    size_t nblocks;
} gm_layout_segment_t;

typedef struct gm_layout {
    gm_layout_segment_t *segments; /* in address order */
    size_t nsegments;
    gm_layout_block_t *blocks;
    size_t nblocks;
} gm_layout_t;

/* Check the invariants above (tiling, ids ≥ 0 or GM_LAYOUT_FREE, requested ≤
 * size, sizes ≤ GM_SIZE_LIMIT); GM_EFORMAT naming the segment and block. */
int gm_layout_validate(const gm_layout_t *l, gm_error_t *err);

/* Free a layout returned by the store (NULL is a no-op). */
void gm_layout_free(gm_layout_t *l);

GM_API_END

#endif
