/*
 * gmsim/gpu.h — replaying a trace for real on a GPU, and measuring the
 * device's allocator calls.
 *
 * The backend loads the CUDA runtime at run time (dlopen of
 * libcudart.so, or the library named by GM_CUDART or
 * gm_gpu_options_t.runtime), so gmsim runs without CUDA and reports
 * "no CUDA device" cleanly.  It is built only where the CUDA toolkit was
 * found at build time (gm_have_cuda()); elsewhere every call here is
 * GM_EUNSUPPORTED.
 *
 * Modes, by policy:
 *   native  each ALLOC is a cudaMalloc of its size, each FREE a cudaFree;
 *   async   cudaMallocFromPoolAsync / cudaFreeAsync on a pool created with
 *           the async policy's release threshold, one CUDA stream per trace
 *           stream; MARK "synchronize" synchronizes the device, MARK
 *           "empty_cache" also trims the pool;
 *   other   the policy's simulation runs and every device malloc/free it
 *           makes is issued as a cudaMalloc/cudaFree, so the GPU holds
 *           exactly the strategy's reserved memory.
 * In every mode the simulation of the same policy runs too (its metrics
 * are the engine's), so measured and simulated figures sit side by side.
 */
#ifndef GMSIM_GPU_H
#define GMSIM_GPU_H

#include "gmsim/api.h"

#include <stdint.h>
#include <stdio.h>

#include "gmsim/device.h"
#include "gmsim/error.h"
#include "gmsim/policy.h"
#include "gmsim/replay.h"
#include "gmsim/store.h"

GM_API_BEGIN

typedef struct gm_gpu_options {
    int device;          /* CUDA device ordinal */
    int touch;           /* write every new allocation (cudaMemset) so it is backed */
    int force;           /* skip the free-memory check */
    const char *runtime; /* CUDA runtime library; NULL: $GM_CUDART, else libcudart.so */
} gm_gpu_options_t;

typedef struct gm_gpu_latency {
    uint64_t count;
    double median_ns;
    double p99_ns;
    double total_ns;
} gm_gpu_latency_t;

typedef struct gm_gpu_measured {
    char device_name[256];
    uint64_t total_bytes;   /* the device's memory (cudaMemGetInfo) */
    uint64_t baseline_used; /* bytes in use before the replay */
    uint64_t peak_used;     /* peak of in-use bytes sampled at each device call, minus baseline */
    int pool;               /* 1: the async mode's pool figures below are set */
    uint64_t pool_reserved_high;
    uint64_t pool_used_high;
    /* The recorded starting layout a warm start adopts, allocated on the
     * GPU before the trace's first event: its allocations (cudaMalloc, or
     * pages mapped) and bytes, not among the mallocs below. */
    uint64_t adopted;
    uint64_t adopted_bytes;
    gm_gpu_latency_t malloc_latency; /* cudaMalloc / cudaMallocFromPoolAsync, the run's own */
    gm_gpu_latency_t free_latency;   /* cudaFree / cudaFreeAsync */
    double wall_s;                   /* the GPU pass, end to end */
} gm_gpu_measured_t;

/*
 * Replay trace `name` of s on the GPU under the policy of params, with the
 * simulated device of cfg (NULL: defaults).  *out_r receives the engine
 * that simulated the same policy over the same trace (one run; the caller
 * destroys it) and *m what the GPU measured.
 *
 * Before starting, the expected peak (the simulated peak reserved; the
 * trace's load for native and async) is compared with the device's free
 * memory: GM_EINVAL with both figures unless opt->force.  No runtime, no
 * driver or no device: GM_EUNSUPPORTED "no CUDA device: <CUDA's message>".
 * A CUDA error during the replay: everything allocated is freed and the
 * result is GM_EIO naming the event index, the call and CUDA's message.
 */
int gm_gpu_replay(gm_store_t *s, const char *name, const gm_params_t *params,
                  const gm_replay_config_t *cfg, const gm_gpu_options_t *opt,
                  gm_replay_t **out_r, gm_gpu_measured_t *m, gm_error_t *err);

/*
 * Measure cudaMalloc/cudaFree latency on the device over sizes from 512 B
 * up to a quarter of its free memory (powers of four), `reps` times each,
 * and what the device charges (the profile's gran, has_granularity set:
 * cudaMalloc's spacing, packing chunk and large rounding from 1-byte and
 * just-above-the-chunk requests against cudaMemGetInfo; a fresh pool's
 * spacing, chunk, large rounding and release at a synchronization;
 * cuMemGetAllocationGranularity), and return them as a cost profile whose
 * source names the device, driver and date.  The caller frees *out with gm_cost_profile_free.
 * Errors as gm_gpu_replay's.
 */
int gm_gpu_calibrate(const gm_gpu_options_t *opt, unsigned reps, gm_cost_profile_t **out,
                     gm_error_t *err);

/* Write a cost profile as the JSON gm_cost_profile_load reads. */
int gm_cost_profile_write(const gm_cost_profile_t *p, FILE *f);

GM_API_END

#endif
