/*
 * formats/torch/state.h — the state the PyTorch snapshot importer
 * (formats/torch/rewind.c) rewinds: the allocator's regions (a segment, or a
 * contiguous mapped range of an expandable segment) in address order, each
 * tiled by its blocks in address order, allocated or free.
 *
 * Invariants (the importer keeps them; every function here preserves them):
 * regions never overlap; a region's blocks tile it exactly; two free blocks
 * never touch (the allocator always merges them).
 */
#ifndef GM_FORMATS_TORCH_STATE_H
#define GM_FORMATS_TORCH_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/torch_rules.h"
#include "formats/pickle.h"

typedef struct gm__tk_block {
    uint64_t addr, size, req;
    const gm__pk_t *frames;
    int64_t id; /* pre-existing ALLOC id once numbered */
    uint8_t alloc;
    uint8_t carved; /* sized by an undone free_completed (a guess), not by the snapshot */
} gm__tk_block_t;

typedef struct gm__tk_region {
    uint64_t addr, size, stream;
    uint8_t pool, expandable;
    gm__tk_block_t *b;
    size_t nb, cap;
} gm__tk_region_t;

typedef struct gm__tk_state {
    gm__tk_region_t *r;
    size_t n, cap;
} gm__tk_state_t;

/* Free every region's blocks and the regions; the state is empty after. */
void gm__tk_state_release(gm__tk_state_t *st);

/* Index of the region holding addr, or SIZE_MAX. */
size_t gm__tk_region_find(const gm__tk_state_t *st, uint64_t addr);

/* Index of the first region with address >= addr. */
size_t gm__tk_region_lower(const gm__tk_state_t *st, uint64_t addr);

/* Whether [addr, addr + size) overlaps no region. */
int gm__tk_range_clear(const gm__tk_state_t *st, uint64_t addr, uint64_t size);

/* Insert region *r (its blocks owned by the state from now on) in order:
 * 0, or -1 out of memory (the state unchanged, r's blocks still the
 * caller's). */
int gm__tk_region_insert(gm__tk_state_t *st, const gm__tk_region_t *r);

/* Remove region i and free its blocks. */
void gm__tk_region_remove(gm__tk_state_t *st, size_t i);

/* Index of the block of r holding addr (r must hold addr). */
size_t gm__tk_block_find(const gm__tk_region_t *r, uint64_t addr);

/* Replace block i of r by the n blocks nb[] (tiling the same bytes): 0, or
 * -1 out of memory with r unchanged. */
int gm__tk_block_replace(gm__tk_region_t *r, size_t i, const gm__tk_block_t *nb, size_t n);

/* Make block i free and merge it with free neighbours. */
void gm__tk_block_release(gm__tk_region_t *r, size_t i);

/* Before allocated block i is undone (freed): the allocator hands out a
 * block at the start of a free block, so at that allocation the bytes
 * just before block i were not free.  Where the rewound state has a free
 * block there anyway, after an allocated block whose size was guessed
 * (carved: its free undone, its allocation not) and which the allocator
 * would not have split from those bytes (gm__torch_should_split with the
 * block's request rounded as round(req + pad, div), max_split UINT64_MAX
 * when unlimited), those bytes are that block's unsplit tail: they join
 * it.  Returns block i's index after (i - 1 when they joined, else i). */
size_t gm__tk_block_take_tail(gm__tk_region_t *r, size_t i, uint64_t pad,
                              const uint32_t div[GM_TORCH_INTERVALS], uint64_t max_split);

/* A region [addr, addr + size) of one free block: 0, or -1 out of memory. */
int gm__tk_region_whole_free(uint64_t addr, uint64_t size, uint64_t stream, uint8_t pool,
                             uint8_t expandable, gm__tk_region_t *r);

#endif
