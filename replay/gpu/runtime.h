/*
 * replay/gpu/runtime.h — the CUDA runtime as the real-GPU backend loads it
 * (dlopen, entry points resolved by name: replay/gpu/gpu.c), shared by the
 * replay on a GPU (gpu.c) and the calibration (calibrate.c).
 */
#ifndef GMSIM_REPLAY_GPU_RUNTIME_H
#define GMSIM_REPLAY_GPU_RUNTIME_H

#include <stddef.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "gmsim/gpu.h"

#define GPU_RUNTIME_FUNCS(X)                                                              \
    X(GetDeviceCount, cudaError_t, (int *))                                             \
    X(SetDevice, cudaError_t, (int))                                                    \
    X(GetErrorString, const char *, (cudaError_t))                                      \
    X(DriverGetVersion, cudaError_t, (int *))                                           \
    X(Malloc, cudaError_t, (void **, size_t))                                           \
    X(Free, cudaError_t, (void *))                                                      \
    X(MemsetAsync, cudaError_t, (void *, int, size_t, cudaStream_t))                    \
    X(StreamSynchronize, cudaError_t, (cudaStream_t))                                   \
    X(MemGetInfo, cudaError_t, (size_t *, size_t *))                                    \
    X(DeviceSynchronize, cudaError_t, (void))                                           \
    X(StreamCreateWithFlags, cudaError_t, (cudaStream_t *, unsigned))                   \
    X(StreamDestroy, cudaError_t, (cudaStream_t))                                       \
    X(MemPoolCreate, cudaError_t, (cudaMemPool_t *, const struct cudaMemPoolProps *))   \
    X(MemPoolDestroy, cudaError_t, (cudaMemPool_t))                                     \
    X(MemPoolSetAttribute, cudaError_t, (cudaMemPool_t, enum cudaMemPoolAttr, void *))  \
    X(MemPoolGetAttribute, cudaError_t, (cudaMemPool_t, enum cudaMemPoolAttr, void *))  \
    X(MemPoolTrimTo, cudaError_t, (cudaMemPool_t, size_t))                              \
    X(MallocFromPoolAsync, cudaError_t, (void **, size_t, cudaMemPool_t, cudaStream_t)) \
    X(FreeAsync, cudaError_t, (void *, cudaStream_t))

typedef struct gpu_rt {
    void *lib;
#define GPU_FIELD(name, ret, args) ret(*name) args;
    GPU_RUNTIME_FUNCS(GPU_FIELD)
#undef GPU_FIELD
    /* Optional: the device's name. */
    cudaError_t (*GetDeviceProperties)(struct cudaDeviceProp *, int);
    /* Optional: the driver's entry points (virtual memory). */
    cudaError_t (*GetDriverEntryPointByVersion)(const char *, void **, unsigned,
                                                unsigned long long,
                                                enum cudaDriverEntryPointQueryResult *);
    void *driver; /* libcuda.so.1, when the runtime could not hand them out */
} gpu_rt_t;

/* Load the runtime and select opt's device; GM_EUNSUPPORTED "no CUDA
 * device: …" when any of it is missing.  Close it with gm__gpu_rt_close. */
int gm__gpu_rt_open(gpu_rt_t *rt, const gm_gpu_options_t *opt, gm_error_t *err);
void gm__gpu_rt_close(gpu_rt_t *rt);

/* The device's name ("gpu:N" when the runtime cannot tell). */
void gm__gpu_device_name(gpu_rt_t *rt, int device, char *buf, size_t len);

/* The monotonic clock in ns; a qsort comparison of doubles. */
double gm__gpu_now_ns(void);
int gm__gpu_cmp_double(const void *a, const void *b);

#endif
