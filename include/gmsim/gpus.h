/*
 * gmsim/gpus.h — device presets: the memory capacity of common GPUs and
 * of their MIG slices, for `--device NAME` wherever a capacity is taken.
 *
 * A capacity is the total the runtime reports inside a process
 * (cudaMemGetInfo's total, torch.cuda.get_device_properties().total_memory,
 * the "total capacity" of PyTorch's out-of-memory message): less than the
 * marketing figure, as ECC and the driver keep some.  Of that, a process
 * cannot give PyTorch's allocator all: its CUDA context and the libraries'
 * kernels take a few hundred MiB (the preset's reserve, an estimate by
 * architecture).  Sources and assumptions per entry are in sim/gpus.c and
 * docs/synth.md.
 */
#ifndef GMSIM_GPUS_H
#define GMSIM_GPUS_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"

GM_API_BEGIN

typedef struct gm_gpu_preset {
    const char *name;     /* "a100-80gb", "a100-80gb:1g.10gb" */
    const char *desc;     /* "NVIDIA A100 80GB (SXM4/PCIe)" */
    uint64_t capacity;    /* bytes */
    const char *parent;   /* MIG slice: the card's name; NULL for a card */
    const char *source;   /* where the figure comes from */
    uint64_t reserve;     /* bytes a process holds outside the allocator (the CUDA
                             context, by architecture: an estimate, sim/gpus.c) */
} gm_gpu_preset_t;

size_t gm_gpu_count(void);
const gm_gpu_preset_t *gm_gpu_at(size_t i); /* NULL out of range */

/* The preset named `name` (case-insensitive; aliases such as "h100" or
 * "a100" are accepted), or NULL. */
const gm_gpu_preset_t *gm_gpu_find(const char *name);

/* How a device name resolved, for what the user is told. */
typedef struct gm_gpu_lookup {
    const gm_gpu_preset_t *preset; /* NULL when the name is no preset */
    int alias;                     /* a short name ("a100", "h100", "4090") taken as preset */
    const char *others;            /* an alias's other boards ("a100-40gb"), or NULL */
    int ambiguous;                 /* no preset: the name starts several presets... */
    char candidates[256];          /* ...listed here ("'rtx3090', 'rtx4090'"); else the
                                      nearest names ("'rtx4090'"), or "" */
} gm_gpu_lookup_t;

/* Resolve `name` as gm_gpu_find does, saying how: 0 with out->preset set,
 * or GM_ENOTFOUND with out->candidates filled as far as any are near. */
int gm_gpu_lookup(const char *name, gm_gpu_lookup_t *out);

/* Capacity of device `name`: 0 with *capacity set, or GM_ENOTFOUND with a
 * message naming it (and suggesting `gmsim devices`). */
int gm_gpu_capacity(const char *name, uint64_t *capacity, gm_error_t *err);

GM_API_END

#endif
