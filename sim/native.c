/*
 * sim/native.c — no allocator at all: every request is its own device
 * malloc, every free a device free.
 *
 * This is what PyTorch does with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (each
 * tensor a cudaMalloc, each release a cudaFree), and the baseline the other
 * policies are measured against: its peak reserved is the peak requested
 * plus only the device's rounding to its granularity, and it pays a device
 * malloc and free for every event.
 *
 * A block is {device address, device-rounded size}.  The live blocks are
 * kept in the shared id map (base/idmap.h), address → size, so that free()
 * can reject a block that is not live (a double free, a wrong size) instead
 * of corrupting the accounting.  The device never returns address 0 or
 * UINT64_MAX (the map's reserved key): its addresses are non-zero multiples
 * of the granularity.
 *
 * chunk (0 by default: off) models a driver that packs small requests:
 * the real cudaMalloc hands out 1-byte requests 512 bytes apart while its
 * in-use memory grows 2 MiB at a time (`gmsim calibrate` measures both;
 * a profile with them sets chunk).  Then the device's memory comes in
 * chunks of that size, and requests are carved from them as a stream-
 * ordered pool with release threshold 0 carves its chunks (sim/async.c's
 * model: rounded up to the device granularity, best fit, a request larger
 * than a chunk maps its size rounded up to the chunk, a wholly free chunk
 * is released): the policy is an async pool whose every free synchronizes
 * (cudaFree does).  Which free space the driver reuses is not known; that
 * part is the model's.
 *
 * Invariants (check): the live blocks' sizes sum to `allocated`, which
 * equals the device's reserved bytes; their number equals the device's
 * mallocs minus frees; each is a non-empty multiple of the granularity and
 * lies below the device's bump pointer.  Blocks cannot overlap: the device
 * never hands out an address twice.
 */
#include "gmsim/policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/idmap.h"

typedef struct native {
    gm_policy_t base;
    gm_policy_t *packed; /* chunk mode: the pool that carves the chunks */
    gm__idmap_t live; /* live block address → device-rounded size */
    uint64_t allocated;
} native_t;

extern const gm_policy_ops_t gm__policy_native;
extern const gm_policy_ops_t gm__policy_async;

#define NATIVE(p) GM_POLICY_DOWNCAST(native_t, p, gm__policy_native)

static int native_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                         gm_error_t *err)
{
    uint64_t chunk = values[0].size;
    if (chunk != 0 && ((chunk & (chunk - 1)) != 0 || chunk > GM_DEVICE_GRANULARITY_MAX ||
                       chunk < dev->cfg.granularity))
        return gm_error_set(err, GM_EINVAL,
                            "invalid value '%" PRIu64 "' for native.chunk: not 0 or a power of "
                            "two from the device granularity (%" PRIu64 ") up to 1 TiB",
                            chunk, dev->cfg.granularity);
    native_t *n = gm_policy_new(sizeof *n, &gm__policy_native, dev, err);
    if (n == NULL)
        return GM_ENOMEM;
    gm__idmap_init(&n->live);
    if (chunk != 0) {
        /* async's parameters in its order: release_threshold, reuse,
         * granularity, align */
        gm_param_value_t av[4] = {{.size = 0}, {.e = 0}, {.size = chunk},
                                  {.size = dev->cfg.granularity}};
        int rc = gm_policy_create(&gm__policy_async, dev, av, &n->packed, err);
        if (rc) {
            free(n);
            return rc;
        }
    }
    *out = &n->base;
    return 0;
}

static int native_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    native_t *n = NATIVE(p);
    if (n == NULL)
        return GM_EINVAL;
    if (n->packed != NULL) {
        int rc = gm_policy_alloc(n->packed, req, out);
        if (rc == 0)
            n->allocated += out->size;
        return rc;
    }
    uint64_t addr, got;
    if (gm_device_malloc(p->dev, req->size, 0, &addr, &got) != 0)
        return GM_ALLOC_OOM;
    if (gm__idmap_put(&n->live, addr, got) != 0) {
        /* Out of host memory: give the block back.  The device's counters
         * (and peak) keep the round trip; the replay stops on GM_ENOMEM. */
        gm_device_free(p->dev, addr, got);
        return GM_ENOMEM;
    }
    n->allocated += got;
    out->addr = addr;
    out->size = got;
    return 0;
}

static int native_free(gm_policy_t *p, const gm_block_t *blk, uint32_t stream)
{
    (void)stream;
    native_t *n = NATIVE(p);
    if (n == NULL || blk->addr == 0)
        return GM_EINVAL;
    if (n->packed != NULL) {
        int rc = gm_policy_free(n->packed, blk, stream);
        if (rc == 0) {
            n->allocated -= blk->size;
            gm_policy_sync(n->packed);
        }
        return rc;
    }
    uint64_t size;
    if (!gm__idmap_get(&n->live, blk->addr, &size) || size != blk->size)
        return GM_EINVAL;
    gm__idmap_remove(&n->live, blk->addr, NULL);
    n->allocated -= blk->size;
    gm_device_free(p->dev, blk->addr, blk->size);
    return 0;
}

static void native_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    native_t *n = NATIVE(p);
    if (n != NULL && n->packed != NULL) {
        gm_policy_stats(n->packed, out);
        return;
    }
    out->allocated = n ? n->allocated : 0;
    out->largest_free = 0; /* nothing is cached */
}

static int native_check(gm_policy_t *p, gm_check_t *ck)
{
    native_t *n = NATIVE(p);
    if (n == NULL)
        return gm_check_fail(ck, "not a native policy");
    if (n->packed != NULL) {
        gm_policy_stats_t st;
        gm_policy_stats(n->packed, &st);
        if (st.allocated != n->allocated)
            gm_check_fail(
                ck, "the chunks hold %" PRIu64 " bytes in live blocks but allocated is %" PRIu64,
                st.allocated, n->allocated);
        if (ck->bad)
            return ck->bad;
        return n->packed->ops->check(n->packed, ck);
    }
    const gm_device_t *dev = p->dev;
    const gm__idmap_t *m = &n->live;
    uint64_t g = dev->cfg.granularity, count = 0, sum = 0;
    uint64_t addr, size, found;
    for (size_t pos = 0; gm__idmap_next(m, &pos, &addr, &size);) {
        count++;
        sum += size;
        if (size == 0 || size % g != 0)
            gm_check_fail(ck,
                          "block at 0x%" PRIx64 " has size %" PRIu64
                          ", not a multiple of the granularity",
                          addr, size);
        if (addr == 0 || addr % g != 0 || addr + size > dev->next_addr)
            gm_check_fail(ck, "block at 0x%" PRIx64 " was not handed out by the device", addr);
        if (!gm__idmap_get(m, addr, &found) || found != size)
            gm_check_fail(ck, "block at 0x%" PRIx64 " cannot be found in the table", addr);
    }
    if (count != gm__idmap_count(m))
        gm_check_fail(ck, "table holds %" PRIu64 " blocks but counts %zu", count,
                      gm__idmap_count(m));
    if (sum != n->allocated)
        gm_check_fail(ck, "live blocks sum to %" PRIu64 " bytes but allocated is %" PRIu64, sum,
                      n->allocated);
    if (n->allocated != dev->reserved)
        gm_check_fail(ck,
                      "allocated %" PRIu64 " bytes differs from the device's reserved %" PRIu64,
                      n->allocated, dev->reserved);
    if (count != dev->mallocs - dev->frees)
        gm_check_fail(ck, "%" PRIu64 " live blocks but the device holds %" PRIu64 " mallocs",
                      count, dev->mallocs - dev->frees);
    return ck->bad;
}

static void native_destroy(gm_policy_t *p)
{
    native_t *n = NATIVE(p);
    if (n == NULL)
        return;
    if (n->packed != NULL)
        gm_policy_destroy(n->packed);
    gm__idmap_release(&n->live);
    free(n);
}

static const gm_param_spec_t native_params[] = {
    {"chunk", GM_PARAM_SIZE, "0",
     "the driver packs requests into chunks of this size (0: none, each request its own device "
     "malloc; a --device-profile from 'gmsim calibrate' sets the measured one)", NULL},
};

const gm_policy_ops_t gm__policy_native = {
    .name = "native",
    .help = "no caching: a device malloc per request, a device free per free "
            "(PYTORCH_NO_CUDA_MEMORY_CACHING=1)",
    GM_POLICY_OPS(native),
    .empty_cache = NULL,
    .role = GM_ROLE_REFERENCE,
};
