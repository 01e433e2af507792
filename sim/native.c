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
 * kept in an open-addressing hash table keyed by address (linear probing,
 * backward-shift deletion) so that free() can reject a block that is not
 * live (a double free, a wrong size) instead of corrupting the accounting.
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

typedef struct native_slot {
    uint64_t addr; /* 0 = empty (the device never returns 0) */
    uint64_t size;
} native_slot_t;

typedef struct native {
    gm_policy_t base;
    native_slot_t *slots;
    uint64_t mask; /* capacity − 1, capacity a power of two */
    unsigned shift; /* 64 − log2(capacity): the hash takes the top bits */
    uint64_t count;
    uint64_t allocated;
} native_t;

extern const gm_policy_ops_t gm__policy_native;

#define NATIVE(p) GM_POLICY_DOWNCAST(native_t, p, gm__policy_native)

static uint64_t native_hash(const native_t *n, uint64_t addr)
{
    return (addr * UINT64_C(0x9e3779b97f4a7c15)) >> n->shift;
}

/* Insert a key that is not present; the table has room (load ≤ 1/2). */
static void native_put(native_t *n, uint64_t addr, uint64_t size)
{
    uint64_t i = native_hash(n, addr);
    while (n->slots[i].addr != 0)
        i = (i + 1) & n->mask;
    n->slots[i].addr = addr;
    n->slots[i].size = size;
    n->count++;
}

/* Double the table.  GM_ENOMEM (table unchanged) when out of host memory. */
static int native_grow(native_t *n)
{
    uint64_t oldcap = n->mask + 1, cap = 2 * oldcap;
    native_slot_t *old = n->slots, *slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return GM_ENOMEM;
    n->slots = slots;
    n->mask = cap - 1;
    n->shift--;
    n->count = 0;
    for (uint64_t i = 0; i < oldcap; i++)
        if (old[i].addr != 0)
            native_put(n, old[i].addr, old[i].size);
    free(old);
    return 0;
}

/* Index of addr in the table, or −1. */
static int64_t native_find(const native_t *n, uint64_t addr)
{
    for (uint64_t i = native_hash(n, addr);; i = (i + 1) & n->mask) {
        if (n->slots[i].addr == addr)
            return (int64_t)i;
        if (n->slots[i].addr == 0)
            return -1;
    }
}

/* Remove slot i, shifting later members of its probe run back. */
static void native_remove(native_t *n, uint64_t i)
{
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & n->mask;
        if (n->slots[j].addr == 0)
            break;
        uint64_t home = native_hash(n, n->slots[j].addr);
        /* Move j into the hole at i unless its home lies in (i, j]. */
        if (((j - home) & n->mask) >= ((j - i) & n->mask)) {
            n->slots[i] = n->slots[j];
            i = j;
        }
    }
    n->slots[i].addr = 0;
    n->slots[i].size = 0;
    n->count--;
}

static int native_create(gm_device_t *dev, const gm_param_value_t *values, gm_policy_t **out,
                         gm_error_t *err)
{
    (void)values;
    native_t *n = calloc(1, sizeof *n);
    if (n != NULL)
        n->slots = calloc(64, sizeof *n->slots);
    if (n == NULL || n->slots == NULL) {
        free(n);
        return gm_error_set(err, GM_ENOMEM, "out of memory creating policy 'native'");
    }
    n->base.ops = &gm__policy_native;
    n->base.dev = dev;
    n->mask = 63;
    n->shift = 64 - 6;
    *out = &n->base;
    return 0;
}

static int native_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    native_t *n = NATIVE(p);
    if (n == NULL)
        return GM_EINVAL;
    if (2 * (n->count + 1) > n->mask + 1 && native_grow(n) != 0)
        return GM_ENOMEM;
    uint64_t addr, got;
    if (gm_device_malloc(p->dev, req->size, 0, &addr, &got) != 0)
        return GM_ALLOC_OOM;
    native_put(n, addr, got);
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
    int64_t i = native_find(n, blk->addr);
    if (i < 0 || n->slots[i].size != blk->size)
        return GM_EINVAL;
    native_remove(n, (uint64_t)i);
    n->allocated -= blk->size;
    gm_device_free(p->dev, blk->addr, blk->size);
    return 0;
}

static void native_stats(gm_policy_t *p, gm_policy_stats_t *out)
{
    native_t *n = NATIVE(p);
    out->allocated = n ? n->allocated : 0;
    out->largest_free = 0; /* nothing is cached */
    out->free_bytes = n && p->dev->reserved > n->allocated ? p->dev->reserved - n->allocated : 0;
}

#define NATIVE_BAD(...)                                  \
    do {                                                 \
        if (bad++ == 0 && why != NULL && whylen > 0)     \
            snprintf(why, whylen, __VA_ARGS__);          \
    } while (0)

static int native_check(gm_policy_t *p, char *why, size_t whylen)
{
    native_t *n = NATIVE(p);
    int bad = 0;
    if (why != NULL && whylen > 0)
        why[0] = '\0';
    if (n == NULL) {
        NATIVE_BAD("not a native policy");
        return bad;
    }
    const gm_device_t *dev = p->dev;
    uint64_t g = dev->cfg.granularity, count = 0, sum = 0;
    for (uint64_t i = 0; i <= n->mask; i++) {
        const native_slot_t *s = &n->slots[i];
        if (s->addr == 0)
            continue;
        count++;
        sum += s->size;
        if (s->size == 0 || s->size % g != 0)
            NATIVE_BAD("block at 0x%" PRIx64 " has size %" PRIu64
                       ", not a multiple of the granularity",
                       s->addr, s->size);
        if (s->addr % g != 0 || s->addr + s->size > dev->next_addr)
            NATIVE_BAD("block at 0x%" PRIx64 " was not handed out by the device", s->addr);
        if (native_find(n, s->addr) != (int64_t)i)
            NATIVE_BAD("block at 0x%" PRIx64 " cannot be found in the table", s->addr);
    }
    if (count != n->count)
        NATIVE_BAD("table holds %" PRIu64 " blocks but counts %" PRIu64, count, n->count);
    if (sum != n->allocated)
        NATIVE_BAD("live blocks sum to %" PRIu64 " bytes but allocated is %" PRIu64, sum,
                   n->allocated);
    if (n->allocated != dev->reserved)
        NATIVE_BAD("allocated %" PRIu64 " bytes differs from the device's reserved %" PRIu64,
                   n->allocated, dev->reserved);
    if (count != dev->mallocs - dev->frees)
        NATIVE_BAD("%" PRIu64 " live blocks but the device holds %" PRIu64 " mallocs", count,
                   dev->mallocs - dev->frees);
    return bad;
}

static void native_destroy(gm_policy_t *p)
{
    native_t *n = NATIVE(p);
    if (n == NULL)
        return;
    free(n->slots);
    free(n);
}

const gm_policy_ops_t gm__policy_native = {
    .name = "native",
    .help = "no caching: a device malloc per request, a device free per free "
            "(PYTORCH_NO_CUDA_MEMORY_CACHING=1)",
    .params = NULL,
    .nparams = 0,
    .create = native_create,
    .alloc = native_alloc,
    .free = native_free,
    .stats = native_stats,
    .check = native_check,
    .destroy = native_destroy,
    .empty_cache = NULL,
};
