/*
 * tests/capture/gmcap_user.c — a library that calls the (fake) CUDA
 * runtime, loaded RTLD_LOCAL by gmcap-local (see there).
 */
#include <stddef.h>

int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);

__attribute__((visibility("default"))) int gmcap_user_run(void);

int gmcap_user_run(void)
{
    void *p;
    if (cudaMalloc(&p, 777) != 0)
        return 1;
    return cudaFree(p);
}
