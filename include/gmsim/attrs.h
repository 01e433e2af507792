/*
 * gmsim/attrs.h — the names of trace attributes that one part of gmsim
 * writes and another reads (importers and the synthesizer write them; the
 * caching policy, replay, compare, scale and the report read them), and
 * reading an integer one.  A trace's attributes are one JSON object
 * (docs/store.md); attributes read only where they are written keep their
 * names as literals there.
 */
#ifndef GMSIM_ATTRS_H
#define GMSIM_ATTRS_H

#include "gmsim/api.h"

#include <stdint.h>

GM_API_BEGIN

#define GM_ATTR_SOURCE "source"                   /* the format or generator: "torch", "synth", … */
#define GM_ATTR_MODEL "model"                     /* the model's name, where known */
#define GM_ATTR_SEQ_LEN "seq_len"                 /* sequence length the job ran at */
#define GM_ATTR_BATCH "batch"                     /* batch size the job ran at */
#define GM_ATTR_CAPACITY "capacity"               /* device capacity in bytes */
#define GM_ATTR_DEVICE "device"                   /* device index */
#define GM_ATTR_PREEXISTING "preexisting"         /* allocations alive before recording began */
#define GM_ATTR_ALLOCATOR_SETTINGS "allocator_settings" /* PyTorch's allocator settings (object) */
#define GM_ATTR_BLOCK_ROUND "block_round"         /* a snapshot's block rounding (bytes) */
#define GM_ATTR_BLOCK_PAD "block_pad"             /* a snapshot's padding added per block (bytes) */
#define GM_ATTR_RECONSTRUCTION_MISMATCHES "reconstruction_mismatches"
#define GM_ATTR_OOMS "ooms"                       /* the allocator's OOMs recorded in the trace */
#define GM_ATTR_OOM_CAPACITY "oom_capacity"       /* the allocator's capacity at the tightest
                                                     recorded OOM: bytes reserved then + the
                                                     device's free bytes (PyTorch's device_free) */
#define GM_ATTR_SCALED_FROM "scaled_from"         /* the captures a scaled trace was predicted from */
#define GM_ATTR_SCALE_LAWS "scale_laws"           /* the share of bytes under each law */

/* Integer attribute `key` of a trace's attributes (e.g. "seq_len"); -1
 * when absent, not a non-negative integer, or above 2^63 - 1. */
int64_t gm_attr_int(const char *attrs, const char *key);

GM_API_END

#endif
