/*
 * capture/capture.h — what the files of libgmsim_capture.so share
 * (the recorder in capture.c, the interposed entry points in hooks.c and
 * torch_nvtx.c, the CUPTI subscriber in cupti.c).  Nothing
 * here is exported from the library: it is built with hidden visibility
 * and exports only the interposed CUDA/NVTX entry points, the PyTorch
 * pluggable-allocator functions and the injection entry points.
 */
#ifndef GM_CAPTURE_CAPTURE_H
#define GM_CAPTURE_CAPTURE_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "formats/spool_format.h"

#define GM_CAP_EXPORT __attribute__((visibility("default")))

/* Per-thread state.  initial-exec: one static TLS slot, no allocation and
 * no __tls_get_addr call on the hot path. */
typedef struct gm__cap_tls {
    struct cap_slot *slot; /* this thread's buffer, NULL until its first record */
    int inside;            /* >0 while a recorded call forwards (nested calls
                              are not recorded twice) */
    int nvtx_depth;        /* push/pop nesting, for nvtxRangePushA's result */
    int cupti_inside;      /* the same as `inside`, for CUPTI callbacks */
    int torch;             /* >0 inside gmsim_torch_alloc/free (recorded there) */
    uint32_t tid;
} gm__cap_tls_t;

extern __thread gm__cap_tls_t gm__cap_tls __attribute__((tls_model("initial-exec")));

/* 1 while the interposed entry points record (0 once a CUPTI subscription
 * records the same calls instead). */
extern atomic_int gm__cap_hooks_on;

/* The recorder's state (capture.c): CAP_STOPPED once recording stopped. */
enum { CAP_IDLE = 0, CAP_STARTING, CAP_ON, CAP_STOPPED };
extern atomic_int gm__cap_state;

/* The clock: CLOCK_MONOTONIC ns.  On x86-64 with an invariant TSC that
 * the kernel itself uses as its clock source, it is read from the TSC
 * (about 10 ns instead of 25, and no slower under virtualization load),
 * converted with a rate measured over 0.5 ms when recording starts and
 * anchored there: the same monotonic function in every thread, so the
 * order of records across threads is kept.  gm__cap_tsc_mult is 0 until
 * then, or for good where the TSC is not usable (GMSIM_CAPTURE_CLOCK=mono
 * also keeps clock_gettime). */
extern _Atomic uint64_t gm__cap_tsc_mult; /* ns per tick, 32.32 fixed point */
extern uint64_t gm__cap_tsc0, gm__cap_mono0;

static inline uint64_t gm__cap_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static inline uint64_t gm__cap_now(void)
{
#if defined(__x86_64__)
    uint64_t m = atomic_load_explicit(&gm__cap_tsc_mult, memory_order_acquire);
    if (m != 0) {
        uint64_t d = __rdtsc() - gm__cap_tsc0;
        return gm__cap_mono0 + (uint64_t)(((unsigned __int128)d * m) >> 32);
    }
#endif
    return gm__cap_mono();
}

/* Record one call.  Never fails: on an internal failure recording stops
 * (one message on stderr) and the call is simply not recorded.  text may
 * be NULL (kept up to SPOOL_TEXT_MAX − 1 bytes). */
void gm__cap_emit(uint8_t op, uint64_t ts, uint64_t addr, uint64_t size, uint64_t stream,
                  uint64_t aux, int32_t result, int32_t device, uint8_t flags, const char *text);

/* The current device through the runtime (cudaGetDevice) or the driver
 * (cuCtxGetDevice); −1 when unknown. */
int32_t gm__cap_rt_device(void);
int32_t gm__cap_drv_device(void);

/* Write "gmsim capture: MESSAGE\n" on stderr (no allocation). */
void gm__cap_say(const char *msg);

/* Set when CUPTI mode could not subscribe: the spool header then says
 * "cupti-fallback" instead of "cupti" as the mode. */
extern atomic_int gm__cap_cupti_fallback;

/* 1 when this process records at all (GMSIM_CAPTURE_DIR is set). */
int gm__cap_wanted(void);

#endif
