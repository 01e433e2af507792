/*
 * tests/capture/gmcap_local.c — the way PyTorch reaches the CUDA runtime:
 * this program does not link it; it loads libgmcap_user.so with
 * RTLD_LOCAL, and that library (linked against the fake runtime) makes
 * the calls.  The runtime is then outside the global scope, out of
 * dlsym(RTLD_NEXT)'s reach: the capture library must still find the real
 * functions.  Prints "gmcap-local: done" and exits 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    if (n <= 0)
        return 1;
    path[n] = '\0';
    strcpy(strrchr(path, '/') + 1, "libgmcap_user.so");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "gmcap-local: %s\n", dlerror());
        return 1;
    }
    int (*run)(void) = (int (*)(void))dlsym(h, "gmcap_user_run");
    if (run == NULL || run() != 0) {
        fprintf(stderr, "gmcap-local: the calls failed\n");
        return 1;
    }
    printf("gmcap-local: done\n");
    return 0;
}
