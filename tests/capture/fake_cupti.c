/*
 * tests/capture/fake_cupti.c — a libcupti that says where it was loaded
 * from and accepts the subscription, for the tests of where CUPTI mode
 * looks for libcupti (a CUDA 13 wheel's nvidia/cu13/lib beside the
 * runtime).  It never calls back: what it tells is that it was found.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include <cupti.h>

__attribute__((visibility("default"))) CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub,
                                                                  CUpti_CallbackFunc cb, void *ud)
{
    (void)cb;
    (void)ud;
    Dl_info info;
    if (dladdr((void *)cuptiSubscribe, &info) != 0 && info.dli_fname != NULL)
        fprintf(stderr, "fake cupti: subscribed from %s\n", info.dli_fname);
    *sub = NULL;
    return CUPTI_SUCCESS;
}

__attribute__((visibility("default"))) CUptiResult cuptiEnableCallback(uint32_t enable,
                                                                       CUpti_SubscriberHandle sub,
                                                                       CUpti_CallbackDomain domain,
                                                                       CUpti_CallbackId cbid)
{
    (void)enable;
    (void)sub;
    (void)domain;
    (void)cbid;
    return CUPTI_SUCCESS;
}
