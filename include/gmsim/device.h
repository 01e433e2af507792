/*
 * gmsim/device.h — the simulated device every policy takes memory from.
 *
 * It holds the capacity (0 = unlimited), the allocation granularity (every
 * device malloc is rounded up to it), a latency cost model for device
 * malloc/free, and the reserved-bytes accounting.  Addresses come from a
 * bump pointer in a 64-bit virtual space, or, where the caller gave a hint
 * (gm_device_hint: the address a recorded trace's segment_alloc had), from
 * the hint when that range is free; two live ranges never overlap, so
 * overlapping blocks of two policies, or of one policy, are always a bug in
 * the policy.
 *
 * A device malloc that would exceed the capacity fails with GM_DEVICE_OOM:
 * a normal result the policy reacts to.
 */
#ifndef GMSIM_DEVICE_H
#define GMSIM_DEVICE_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"

GM_API_BEGIN

#define GM_DEVICE_OOM 1 /* result of gm_device_malloc when capacity is exceeded */

/* A measured latency table (`gmsim calibrate`): at sizes[i] bytes a device
 * malloc took malloc_ns[i] and its free free_ns[i]; between two sizes the
 * time is interpolated linearly, beyond the last extrapolated from the last
 * two points (never below the last point's time), below the first the
 * first point's time.  sizes ascend strictly; n ≥ 1. */
typedef struct gm_cost_profile gm_cost_profile_t;

/* What a device charges for memory, measured by `gmsim calibrate` (a field
 * of 0 was not measured; the flags are -1 then).  cudaMalloc hands small
 * requests out malloc_align apart and its in-use memory grows by
 * malloc_chunk at a time (the driver packs small requests into chunks of
 * that size; malloc_chunk == malloc_align: no packing); a request above
 * the chunk takes its size rounded up to malloc_large.  A memory pool
 * (cudaMallocFromPoolAsync) hands requests out pool_align apart from
 * chunks of pool_chunk bytes (a request above it: rounded up to
 * pool_large).  cuMemCreate maps multiples of vmm_minimum
 * (cuMemGetAllocationGranularity; vmm_recommended its recommended one). */
typedef struct gm_device_granularity {
    uint64_t malloc_align, malloc_chunk, malloc_large;
    uint64_t vmm_minimum, vmm_recommended;
    uint64_t pool_align, pool_chunk, pool_large;
    int pool_releases_at_sync; /* release threshold 0: unused memory goes back at a sync */
    int pool_keeps_under_threshold; /* threshold maximum: the pool keeps it */
} gm_device_granularity_t;

struct gm_cost_profile {
    size_t n;
    uint64_t *sizes;
    double *malloc_ns;
    double *free_ns;
    char *source; /* provenance: device name, driver, date (may be NULL) */
    int has_granularity;              /* 1: gran was measured ("granularity" in the file) */
    gm_device_granularity_t gran;
};

/* Latency model: time = base + per_gib × size / GiB, in ns, unless a
 * measured profile is given (then the profile alone). */
typedef struct gm_cost_model {
    double malloc_base_ns;
    double malloc_per_gib_ns;
    double free_base_ns;
    double free_per_gib_ns;
    const gm_cost_profile_t *profile; /* owned by the caller; NULL: linear model */
} gm_cost_model_t;

/* Observers of the device's successful mallocs and frees (the real-GPU
 * backend issues each one on a GPU).  malloc returns 0, or nonzero to make
 * the device refuse the malloc (the policy sees GM_DEVICE_OOM).  A map
 * (gm_device_map, gm_device_adopt) is shown to malloc and an unmap to free,
 * at the mapped address: an observer that wants pages tells them apart by
 * the ranges reserve_va showed it.  reserve_va (optional, NULL: none) sees
 * each range of gm_device_reserve_va with the alignment its caller asked
 * for, before rounding (an expandable segment's page size); nonzero
 * refuses the range. */
typedef struct gm_device_hooks {
    int (*malloc)(void *ctx, uint64_t addr, uint64_t size);
    void (*free)(void *ctx, uint64_t addr, uint64_t size);
    int (*reserve_va)(void *ctx, uint64_t addr, uint64_t size, uint64_t align);
    /* Optional (NULL: malloc sees it): memory gm_device_adopt counts, held
     * before the trace began, so not a malloc of the run; nonzero refuses. */
    int (*adopt)(void *ctx, uint64_t addr, uint64_t size);
} gm_device_hooks_t;

/* Largest granularity (device addresses start at 1 TiB, aligned to it). */
#define GM_DEVICE_GRANULARITY_MAX (UINT64_C(1) << 40)

typedef struct gm_device_config {
    uint64_t capacity;    /* bytes; 0 = unlimited */
    uint64_t granularity; /* power of two, 1 to GM_DEVICE_GRANULARITY_MAX; default 512;
                             gm_device_init rounds any other value up (and caps it) */
    gm_cost_model_t cost;
    const gm_device_hooks_t *hooks; /* NULL: none */
    void *hooks_ctx;
    int hints; /* 1: gm_device_hint places ranges (the device may then hold
                  memory: gm_device_release); 0 (default): hints are ignored */
} gm_device_config_t;

/* A live range placed at a hinted address (gm_device_hint): [addr, end). */
typedef struct gm_device_range {
    uint64_t addr, end;
} gm_device_range_t;

typedef struct gm_device {
    gm_device_config_t cfg;
    uint64_t reserved;      /* bytes currently held by device mallocs */
    uint64_t peak_reserved;
    uint64_t mallocs;       /* successful device mallocs */
    uint64_t frees;
    uint64_t failed;        /* device mallocs refused for capacity */
    double time_ns;         /* modelled time in device malloc/free */
    uint64_t next_addr;     /* bump pointer */
    uint64_t hint_addr;     /* gm_device_hint; hint_size 0: none pending */
    uint64_t hint_size;
    gm_device_range_t *placed; /* live hinted ranges, ascending, from placed_lo
                                  (heap; gm_device_release) */
    size_t placed_lo, nplaced, placed_cap;
} gm_device_t;

/* Defaults: unlimited capacity, 512-byte granularity, the shipped cost model. */
void gm_device_config_default(gm_device_config_t *cfg);

/* Initialize an embedded device (no allocation).  A device configured with
 * hints may hold memory: gm_device_release it before it is dropped or
 * initialized again (harmless on any device initialized or zeroed). */
void gm_device_init(gm_device_t *dev, const gm_device_config_t *cfg);
void gm_device_release(gm_device_t *dev);

/*
 * The address a recorded trace gave the next segment of `size` bytes (its
 * segment_alloc, written just before the request that caused it): the next
 * gm_device_malloc or gm_device_reserve_va whose size rounds to what size
 * rounds to takes addr, if addr is nonzero and aligned as that call asks,
 * and the range overlaps no live range the device handed out (the bump
 * region below next_addr counts as taken); otherwise it is placed as
 * without a hint.  That call consumes the hint, as does the next hint or
 * gm_device_hint(dev, 0, 0); a call of another size leaves it pending.
 * Placing a range by its recorded address lets a policy that orders equal
 * blocks by address (PyTorch's best fit) break ties as the recorded run
 * did.  Cannot fail (a hinted range that cannot be tracked for lack of
 * memory is placed as without a hint).  Ignored unless cfg.hints is set
 * (the replay engine sets it for a policy flagged
 * GM_POLICY_RECORDED_ADDRESSES).
 */
void gm_device_hint(gm_device_t *dev, uint64_t addr, uint64_t size);

/*
 * Reserve size bytes (rounded up to the granularity) aligned to `align`
 * (a power of two; 0 means the granularity).  On success *addr gets the
 * address and *got the rounded size, and the result is 0; GM_DEVICE_OOM if
 * the capacity would be exceeded (nothing changes then).
 */
int gm_device_malloc(gm_device_t *dev, uint64_t size, uint64_t align, uint64_t *addr,
                     uint64_t *got);

/* Release a block of `got` bytes obtained from gm_device_malloc. */
void gm_device_free(gm_device_t *dev, uint64_t addr, uint64_t got);

/*
 * Virtual memory, for policies that map physical pages on demand into a
 * range of their own (PyTorch's expandable segments):
 *
 * gm_device_reserve_va takes size bytes of address space aligned to `align`
 * (as gm_device_malloc, 0 = the granularity) without reserving memory: no
 * capacity check, no malloc counted.  GM_DEVICE_OOM only when the 64-bit
 * space is exhausted.  Address space is never given back, but for a range
 * placed at a hint, which a gm_device_free of its whole extent returns.
 *
 * gm_device_map backs `bytes` at addr (inside such a range) with memory:
 * counted, timed, refused for capacity and shown to the hooks exactly as a
 * gm_device_malloc of that size (no granularity rounding: the policy maps
 * whole pages of its own size).
 * Unmapping is gm_device_free of the mapped bytes.
 *
 * gm_device_adopt counts `bytes` at addr (from gm_device_reserve_va) as
 * reserved without a malloc or its time: memory the device held before the
 * trace began (a recorded starting layout); the hooks' adopt sees it (their malloc when they have none).
 * GM_DEVICE_OOM (nothing changes) if it would exceed the capacity.
 */
int gm_device_reserve_va(gm_device_t *dev, uint64_t size, uint64_t align, uint64_t *addr);
int gm_device_map(gm_device_t *dev, uint64_t addr, uint64_t bytes);
int gm_device_adopt(gm_device_t *dev, uint64_t addr, uint64_t bytes);

/* Round size up to the device granularity (saturating at UINT64_MAX). */
uint64_t gm_device_round(const gm_device_t *dev, uint64_t size);

/*
 * Parse a size: plain bytes ("1048576") or a number with a binary suffix
 * KiB/MiB/GiB/TiB (also K/M/G/T, KB/MB/GB/TB meaning the same powers of
 * 1024, case-insensitive), fractions allowed ("1.5GiB").  GM_EINVAL with a
 * message quoting the text on anything else, or on overflow.
 */
int gm_parse_size(const char *text, uint64_t *out, gm_error_t *err);

/* Format bytes for people: "1.50 GiB", "512 B". */
void gm_format_size(uint64_t bytes, char *buf, unsigned len);

/* Format a size setting exactly, as gm_parse_size reads it back: in the
 * largest unit that divides it ("128MiB", "1536KiB", "1000"), and
 * UINT64_MAX, which a size parameter's "none" (no limit) parses to, as
 * "none".  The one formatter of parameter values in labels and tables. */
void gm_format_param_size(uint64_t bytes, char *buf, unsigned len);

/*
 * Read a cost profile written by `gmsim calibrate` (JSON: {"source": "...",
 * "points": [{"size": B, "malloc_ns": T, "free_ns": T}, ...]}).  GM_EIO
 * naming the file, GM_EFORMAT naming the file and what is wrong; the
 * caller frees *out with gm_cost_profile_free.
 */
int gm_cost_profile_load(const char *path, gm_cost_profile_t **out, gm_error_t *err);
void gm_cost_profile_free(gm_cost_profile_t *p);

/* Modelled ns of one device malloc / free of `bytes` under model m. */
double gm_cost_malloc_ns(const gm_cost_model_t *m, uint64_t bytes);
double gm_cost_free_ns(const gm_cost_model_t *m, uint64_t bytes);

GM_API_END

#endif
