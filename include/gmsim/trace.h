/*
 * gmsim/trace.h — the event model.
 *
 * A trace is an ordered stream of events of one process (one rank).
 *
 *   ALLOC      the application asked for `size` bytes; `id` is the allocation's
 *              ordinal in the trace (0, 1, 2, … in ALLOC order, never reused)
 *   FREE       the application released allocation `id`
 *   MARK       a named point (iteration, phase, NVTX range edge): `tag` indexes
 *              the trace's interned tag names; a MARK "oom" (an allocator's
 *              recorded OOM) carries the request that failed in `size` and
 *              `stream` (0: not recorded) and the device's free bytes then
 *              in `addr` (0: unknown)
 *   SEG_*      device-level segment events observed in a snapshot or capture
 *              (`addr`, `size`); kept for validation, never replayed as requests
 *
 * Raw addresses (`addr`) are kept for validation and export but are never
 * needed to replay: allocation ids are dense ordinals.  Streams are interned
 * per trace (`stream` is an index into the trace's stream table).
 */
#ifndef GMSIM_TRACE_H
#define GMSIM_TRACE_H

#include "gmsim/api.h"

#include <stdint.h>

GM_API_BEGIN

/* X(ENUM, name) — op codes fit in 3 bits (the chunk codec relies on it). */
#define GM_OPS(X)              \
    X(ALLOC, "alloc")          \
    X(FREE, "free")            \
    X(MARK, "mark")            \
    X(SEG_ALLOC, "seg_alloc")  \
    X(SEG_FREE, "seg_free")    \
    X(SEG_MAP, "seg_map")      \
    X(SEG_UNMAP, "seg_unmap")

typedef enum gm_op {
#define GM__OP_ENUM(e, s) GM_OP_##e,
    GM_OPS(GM__OP_ENUM)
#undef GM__OP_ENUM
    GM_OP_COUNT
} gm_op_t;

/* Largest size accepted in a trace (2^48 bytes); larger is rejected. */
#define GM_SIZE_LIMIT (UINT64_C(1) << 48)

/* Largest sum of live requested bytes (2^62): an allocation that would pass
 * it is rejected, so every byte figure fits a signed 64-bit integer (SQLite,
 * JSON consumers) with room for a policy's rounding. */
#define GM_LIVE_LIMIT (UINT64_C(1) << 62)

/* Event flags. */
#define GM_EVENT_PREEXISTING 0x01u /* ALLOC alive before recording started */

typedef struct gm_event {
    uint64_t ts_ns;  /* time stamp in ns (0 when unknown) */
    uint64_t id;     /* ALLOC/FREE: allocation ordinal */
    uint64_t size;   /* ALLOC, SEG_*: bytes */
    uint64_t addr;   /* raw device address when known, else 0 */
    uint32_t stream; /* ALLOC/FREE: interned stream index */
    uint32_t tag;    /* MARK: interned tag index */
    uint32_t frames; /* ALLOC: interned stack-frames index, 0 = none */
    uint16_t device; /* device ordinal */
    uint8_t op;      /* gm_op_t */
    uint8_t flags;   /* GM_EVENT_* */
} gm_event_t;

/* "alloc", "free", … or NULL for an unknown op. */
const char *gm_op_name(unsigned op);

/* Op code for a name, or -1. */
int gm_op_parse(const char *name);

GM_API_END

#endif
