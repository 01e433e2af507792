/*
 * tests/test_caching.c — the caching policy (PyTorch's CUDA caching
 * allocator): each rule on its own (rounding, pools and segment sizes, best
 * fit, split thresholds, oversize blocks, the OOM recovery chain, garbage
 * collection, expandable segments, empty_cache, the conf string and the
 * settings' precedence, the warm start from a recorded layout), a seeded
 * stress with a small capacity checked after every operation, and the
 * fidelity of replaying the real snapshots in ../shared/data (in
 * test_caching_data.c when the importer is present).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/torch.h"
#include "util.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

#include "policy_harness.h"

/* A caching policy with "key=value" settings separated by ';' on a device
 * of the given capacity (0 = unlimited).  Returns pol_open's code. */
static int ca_make(pol_t *c, const char *settings, uint64_t capacity, gm_error_t *err)
{
    char buf[512];
    const char *kv[32];
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", settings);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        cr_assert_lt(n, sizeof kv / sizeof kv[0] - 1, "too many settings");
        kv[n++] = tok;
    }
    kv[n] = NULL;
    gm_device_config_t cfg = pol_device(capacity);
    return pol_open(c, "caching", &cfg, kv, err);
}

static void ca_new(pol_t *c, const char *settings, uint64_t capacity)
{
    gm_error_t err = {0};
    cr_assert_eq(ca_make(c, settings, capacity, &err), 0, "create: %s", err.msg);
}

/* ---- rounding ------------------------------------------------------------ */

static uint64_t block_of(const char *settings, uint64_t size)
{
    pol_t c;
    ca_new(&c, settings, 0);
    gm_block_t b = pol_alloc(&c, size);
    pol_end(&c);
    return b.size;
}

Test(caching, rounding_to_512)
{
    cr_assert_eq(block_of("", 1), 512);
    cr_assert_eq(block_of("", 512), 512);
    cr_assert_eq(block_of("", 513), 1024);
    cr_assert_eq(block_of("", 1200), 1536);
    cr_assert_eq(block_of("", 5 * MiB + 1), 5 * MiB + 512);
}

Test(caching, rounding_power2_divisions)
{
    /* 1200 with 4 divisions: not above 512·4, so plain 512 rounding */
    cr_assert_eq(block_of("roundup_power2_divisions=4", 1200), 1536);
    /* 5000: between 4096 and 8192 in steps of 1024 */
    cr_assert_eq(block_of("roundup_power2_divisions=4", 5000), 5120);
    cr_assert_eq(block_of("roundup_power2_divisions=4", 4096), 4096);
    /* 1.2 MiB: steps of 256 KiB above 1 MiB */
    cr_assert_eq(block_of("roundup_power2_divisions=4", 1258291), 1310720);
    /* per-interval list: below 256 MiB 1 division (off), 512 MiB on: 8 (">"
     * fills from the last named interval, as PyTorch does) */
    const char *list = "roundup_power2_divisions=[256:1,512:2,>:8]";
    cr_assert_eq(block_of(list, 3 * MiB + 1), 3 * MiB + 512);
    cr_assert_eq(block_of(list, 600 * MiB), 640 * MiB);
    cr_assert_eq(block_of(list, 1100 * MiB), 1152 * MiB);
    /* the conf string form */
    cr_assert_eq(block_of("conf=roundup_power2_divisions:[1:4,>:4]", 5 * MiB + 1), 6 * MiB);
}

Test(caching, padding)
{
    /* Ascend build: round512(request + 32) */
    cr_assert_eq(block_of("pad=32", 480), 512);
    cr_assert_eq(block_of("pad=32", 481), 1024);
    cr_assert_eq(block_of("pad=32", 1024), 1536);
}

/* ---- pools, segments, best fit, splitting -------------------------------- */

Test(caching, segment_sizes)
{
    pol_t c;
    ca_new(&c, "", 0);
    pol_alloc(&c, 1 * MiB); /* small: a 2 MiB segment */
    cr_assert_eq(c.dev.reserved, 2 * MiB);
    pol_alloc(&c, 1 * MiB + 1); /* large below 10 MiB: a 20 MiB segment */
    cr_assert_eq(c.dev.reserved, 22 * MiB);
    /* 10 MiB and more (here more than the 19 MiB left): own segment,
     * rounded to 2 MiB */
    pol_alloc(&c, 20 * MiB);
    cr_assert_eq(c.dev.reserved, 42 * MiB);
    pol_alloc(&c, 21 * MiB + 1);
    cr_assert_eq(c.dev.reserved, 64 * MiB);
    cr_assert_eq(c.dev.mallocs, 4);
    pol_end(&c);
}

Test(caching, split_thresholds)
{
    pol_t c;
    ca_new(&c, "", 0);
    /* large: 5 MiB from a 20 MiB segment splits (15 MiB > 1 MiB left) */
    gm_block_t a = pol_alloc(&c, 5 * MiB);
    cr_assert_eq(a.size, 5 * MiB);
    /* 14.5 MiB from the 15 MiB remainder: 0.5 MiB left ≤ 1 MiB, no split */
    gm_block_t b = pol_alloc(&c, 14 * MiB + 512 * KiB);
    cr_assert_eq(b.size, 15 * MiB);
    cr_assert_eq(b.addr, a.addr + 5 * MiB);
    cr_assert_eq(c.dev.mallocs, 1);
    /* small: a remainder of 512 B splits */
    gm_block_t s = pol_alloc(&c, 1 * MiB);
    gm_block_t t = pol_alloc(&c, 1 * MiB - 512);
    cr_assert_eq(t.addr, s.addr + 1 * MiB);
    cr_assert_eq(t.size, 1 * MiB - 512);
    gm_block_t u = pol_alloc(&c, 512);
    cr_assert_eq(u.addr, t.addr + t.size);
    cr_assert_eq(c.dev.mallocs, 2);
    /* freeing merges back into whole segments, which empty_cache returns */
    pol_free(&c, a);
    pol_free(&c, b);
    pol_free(&c, t);
    pol_free(&c, u);
    pol_free(&c, s);
    gm_policy_stats_t st;
    gm_policy_stats(c.p, &st);
    cr_assert_eq(st.largest_free, 20 * MiB);
    pol_empty(&c);
    cr_assert_eq(c.dev.reserved, 0);
    cr_assert_eq(c.dev.frees, 2);
    pol_end(&c);
}

Test(caching, best_fit_size_then_address_per_stream)
{
    pol_t c;
    ca_new(&c, "", 0);
    gm_block_t a = pol_alloc(&c, 12 * MiB);
    gm_block_t g1 = pol_alloc(&c, 12 * MiB);
    gm_block_t b = pol_alloc(&c, 14 * MiB);
    gm_block_t g2 = pol_alloc(&c, 12 * MiB);
    gm_block_t d = pol_alloc(&c, 12 * MiB);
    (void)g1;
    (void)g2;
    pol_free(&c, b);
    pol_free(&c, d);
    pol_free(&c, a);
    /* 11 MiB: the 12 MiB blocks fit best; the lower address wins */
    gm_block_t e = pol_alloc(&c, 11 * MiB);
    cr_assert_eq(e.addr, a.addr);
    cr_assert_eq(e.size, 12 * MiB); /* 1 MiB left is not > 1 MiB: no split */
    /* 13 MiB: only the 14 MiB block */
    gm_block_t f = pol_alloc(&c, 13 * MiB);
    cr_assert_eq(f.addr, b.addr);
    /* another stream never takes stream 0's blocks */
    uint64_t before = c.dev.mallocs;
    gm_block_t h = pol_alloc_on(&c, 11 * MiB, 1);
    cr_assert_neq(h.addr, d.addr);
    cr_assert_eq(c.dev.mallocs, before + 1);
    pol_end(&c);
}

/* ---- max_split_size ------------------------------------------------------ */

Test(caching, oversize_rules)
{
    pol_t c;
    ca_new(&c, "max_split_size=40MiB", 0);
    gm_block_t a = pol_alloc(&c, 50 * MiB);
    pol_free(&c, a);
    /* below max_split_size: may not take the 50 MiB oversize block */
    gm_block_t b = pol_alloc(&c, 30 * MiB);
    cr_assert_neq(b.addr, a.addr);
    cr_assert_eq(c.dev.mallocs, 2);
    pol_free(&c, b);
    /* at or above: takes it whole if it is < request + 20 MiB */
    gm_block_t d = pol_alloc(&c, 45 * MiB);
    cr_assert_eq(d.addr, a.addr);
    cr_assert_eq(d.size, 50 * MiB);
    pol_free(&c, d);
    /* 41 MiB: 50 < 61, still taken whole */
    gm_block_t e = pol_alloc(&c, 41 * MiB);
    cr_assert_eq(e.size, 50 * MiB);
    pol_free(&c, e);
    /* a 70 MiB block is too big for a 45 MiB request (70 ≥ 65) */
    gm_block_t f = pol_alloc(&c, 70 * MiB);
    gm_block_t g = pol_alloc(&c, 50 * MiB);
    pol_free(&c, f);
    uint64_t before = c.dev.mallocs;
    gm_block_t h = pol_alloc(&c, 45 * MiB);
    cr_assert_neq(h.addr, f.addr);
    cr_assert_eq(c.dev.mallocs, before + 1);
    (void)g;
    /* a large block under max_split_size splits as usual */
    pol_free(&c, h);
    pol_end(&c);

    ca_new(&c, "max_split_size=40MiB;max_non_split_rounding=40MiB", 0);
    f = pol_alloc(&c, 70 * MiB);
    pol_free(&c, f);
    h = pol_alloc(&c, 45 * MiB); /* 70 < 85 now */
    cr_assert_eq(h.addr, f.addr);
    pol_end(&c);
}

/* ---- OOM recovery -------------------------------------------------------- */

Test(caching, oom_chain)
{
    pol_t c;
    ca_new(&c, "max_split_size=40MiB", 60 * MiB);
    gm_block_t a = pol_alloc(&c, 50 * MiB);
    pol_free(&c, a);
    /* 12 MiB does not fit beside the cached 50 MiB: the oversize block goes */
    gm_block_t b = pol_alloc(&c, 12 * MiB);
    cr_assert_eq(c.dev.frees, 1);
    cr_assert_eq(c.dev.reserved, 12 * MiB);
    gm_block_t s = pol_alloc(&c, 2 * KiB);
    pol_free(&c, s);
    pol_free(&c, b);
    cr_assert_eq(c.dev.reserved, 14 * MiB);
    /* 50 MiB: no oversize block to release; every whole cached segment goes */
    gm_block_t d = pol_alloc(&c, 50 * MiB);
    cr_assert_eq(c.dev.frees, 3);
    cr_assert_eq(c.dev.reserved, 50 * MiB);
    /* nothing left to release: OOM */
    gm_request_t req = {.size = 20 * MiB};
    gm_block_t e;
    cr_assert_eq(gm_policy_alloc(c.p, &req, &e), GM_ALLOC_OOM);
    pol_check(&c);
    pol_free(&c, d);
    pol_end(&c);
}

Test(caching, oom_keeps_split_segments)
{
    pol_t c;
    ca_new(&c, "", 40 * MiB);
    gm_block_t a = pol_alloc(&c, 5 * MiB);  /* 20 MiB segment, split */
    gm_block_t b = pol_alloc(&c, 16 * MiB); /* 16 MiB segment */
    pol_free(&c, b);
    /* 20 MiB: 36 + 20 > 40; the whole 16 MiB segment goes, the split one stays */
    gm_block_t d = pol_alloc(&c, 18 * MiB + 1);
    cr_assert_eq(c.dev.reserved, 40 * MiB);
    cr_assert_eq(c.dev.frees, 1);
    (void)a;
    (void)d;
    pol_end(&c);
}

/* ---- garbage collection -------------------------------------------------- */

Test(caching, garbage_collection_needs_a_fraction)
{
    pol_t c;
    ca_new(&c, "garbage_collection_threshold=0.5", 0);
    pol_free(&c, pol_alloc(&c, 30 * MiB));
    pol_free(&c, pol_alloc(&c, 32 * MiB));
    pol_alloc(&c, 40 * MiB);
    cr_assert_eq(c.dev.reserved, 102 * MiB);
    cr_assert_eq(c.dev.frees, 0);
    pol_end(&c);

    ca_new(&c, "garbage_collection_threshold=0.5;memory_fraction=0.5;device_memory=200MiB", 0);
    gm_block_t a = pol_alloc(&c, 30 * MiB);
    gm_block_t b = pol_alloc(&c, 32 * MiB);
    pol_free(&c, a);
    pol_free(&c, b);
    /* 62 MiB reserved > 0.5 × 100 MiB: both cached segments are as old as
     * the average, so both go before the new segment */
    pol_alloc(&c, 40 * MiB);
    cr_assert_eq(c.dev.frees, 2);
    cr_assert_eq(c.dev.reserved, 40 * MiB);
    pol_end(&c);
}

Test(caching, garbage_collection_frees_old_blocks_first)
{
    pol_t c;
    ca_new(&c, "garbage_collection_threshold=0.5;memory_fraction=0.5;device_memory=300MiB", 0);
    gm_block_t a = pol_alloc(&c, 30 * MiB); /* large-pool search 1 */
    gm_block_t b = pol_alloc(&c, 32 * MiB); /* search 2 */
    pol_free(&c, a);                        /* cached at 2 */
    gm_block_t y = pol_alloc(&c, 40 * MiB); /* search 3: 62 MiB ≤ 75, no GC */
    pol_free(&c, y);                        /* cached at 3 */
    pol_free(&c, b);                        /* cached at 3 */
    cr_assert_eq(c.dev.reserved, 102 * MiB);
    /* search 4 finds nothing for 50 MiB; 102 > 75: ages a 2, y 1, b 1,
     * average 4/3: only a goes, and its 30 MiB cover the 27 needed */
    pol_alloc(&c, 50 * MiB);
    cr_assert_eq(c.dev.frees, 1);
    cr_assert_eq(c.dev.reserved, 122 * MiB);
    pol_end(&c);
}

Test(caching, memory_fraction_caps_reserved)
{
    pol_t c;
    ca_new(&c, "memory_fraction=0.25;device_memory=100MiB", 0);
    pol_alloc(&c, 20 * MiB);
    gm_request_t req = {.size = 6 * MiB};
    gm_block_t e;
    cr_assert_eq(gm_policy_alloc(c.p, &req, &e), GM_ALLOC_OOM);
    pol_check(&c);
    pol_end(&c);
}

/* ---- expandable segments ------------------------------------------------- */

Test(caching, expandable_maps_pages_on_demand)
{
    pol_t c;
    ca_new(&c, "expandable_segments=true", 0);
    gm_block_t a = pol_alloc(&c, 5 * MiB);
    cr_assert_eq(c.dev.reserved, 20 * MiB); /* one 20 MiB page */
    cr_assert_eq(c.dev.mallocs, 1);
    /* 30 MiB: the 15 MiB free tail grows into one more page, in place */
    gm_block_t b = pol_alloc(&c, 30 * MiB);
    cr_assert_eq(b.addr, a.addr + 5 * MiB);
    cr_assert_eq(c.dev.reserved, 40 * MiB);
    cr_assert_eq(c.dev.mallocs, 2);
    /* 45 MiB past the mapped end: three more pages, one map */
    gm_block_t d = pol_alloc(&c, 45 * MiB);
    cr_assert_eq(d.addr, b.addr + 30 * MiB);
    cr_assert_eq(c.dev.reserved, 80 * MiB); /* [35, 40) was free: two pages */
    cr_assert_eq(c.dev.mallocs, 3);
    /* small requests have their own range of 2 MiB pages */
    gm_block_t s = pol_alloc(&c, 4 * KiB);
    cr_assert_eq(c.dev.reserved, 82 * MiB);
    /* empty_cache unmaps whole free pages only */
    pol_free(&c, b);
    pol_empty(&c);
    /* b spanned [5, 35) MiB: neither [0, 20) nor [20, 40) is wholly free */
    cr_assert_eq(c.dev.reserved, 82 * MiB);
    pol_free(&c, d);
    pol_empty(&c);
    /* free [5, 80): pages [20, 40) [40, 60) [60, 80) go */
    cr_assert_eq(c.dev.reserved, 22 * MiB);
    pol_free(&c, a);
    pol_free(&c, s);
    pol_empty(&c);
    cr_assert_eq(c.dev.reserved, 0);
    /* a request reuses the lowest unmapped space: a new range */
    gm_block_t e = pol_alloc(&c, 25 * MiB);
    cr_assert_eq(c.dev.reserved, 40 * MiB);
    (void)e;
    pol_end(&c);
}

Test(caching, expandable_splits_by_512)
{
    pol_t c;
    ca_new(&c, "expandable_segments=true", 0);
    /* 0.5 MiB left in the page: split (it would not be without expandable
     * segments, being ≤ 1 MiB) */
    gm_block_t a = pol_alloc(&c, 19 * MiB + 512 * KiB);
    cr_assert_eq(a.size, 19 * MiB + 512 * KiB);
    /* 1.25 MiB: the 0.5 MiB free block grows into the next page */
    gm_block_t b = pol_alloc(&c, 1 * MiB + 256 * KiB);
    cr_assert_eq(b.addr, a.addr + a.size);
    cr_assert_eq(c.dev.reserved, 40 * MiB);
    pol_end(&c);
}

Test(caching, expandable_oom_unmaps_then_retries)
{
    pol_t c;
    ca_new(&c, "expandable_segments=true", 60 * MiB);
    gm_block_t a = pol_alloc(&c, 40 * MiB);
    gm_block_t s = pol_alloc(&c, 4 * KiB);
    pol_free(&c, a);
    pol_free(&c, s);
    cr_assert_eq(c.dev.reserved, 42 * MiB);
    /* another stream: its own range; 42 + 40 > 60, so the cached pages go */
    gm_block_t b = pol_alloc_on(&c, 40 * MiB, 1);
    cr_assert_eq(c.dev.reserved, 40 * MiB);
    (void)b;
    pol_end(&c);
}

/* ---- empty_cache --------------------------------------------------------- */

Test(caching, empty_cache_keeps_used_segments)
{
    pol_t c;
    ca_new(&c, "", 0);
    gm_block_t a = pol_alloc(&c, 5 * MiB);
    gm_block_t b = pol_alloc(&c, 16 * MiB);
    gm_block_t s = pol_alloc(&c, 100);
    pol_free(&c, b);
    pol_free(&c, s);
    pol_empty(&c);
    cr_assert_eq(c.dev.reserved, 20 * MiB);
    cr_assert_eq(c.dev.frees, 2);
    pol_free(&c, a);
    pol_empty(&c);
    cr_assert_eq(c.dev.reserved, 0);
    pol_end(&c);
}

/* ---- the device's virtual-memory calls (added for expandable segments) ---- */

Test(caching, device_virtual_memory)
{
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    cfg.capacity = 100 * MiB;
    gm_device_t d;
    gm_device_init(&d, &cfg);
    uint64_t va, va2;
    /* address space only: no reserved bytes, no malloc, no capacity check */
    cr_assert_eq(gm_device_reserve_va(&d, 1ull << 40, 32 * MiB, &va), 0);
    cr_assert_eq(va % (32 * MiB), 0);
    cr_assert_eq(gm_device_reserve_va(&d, 2 * MiB, 0, &va2), 0);
    cr_assert_geq(va2, va + (1ull << 40));
    cr_assert_eq(d.reserved, 0);
    cr_assert_eq(d.mallocs, 0);
    /* a map is a malloc: counted, timed, refused over capacity */
    cr_assert_eq(gm_device_map(&d, va, 60 * MiB), 0);
    cr_assert_eq(d.reserved, 60 * MiB);
    cr_assert_eq(d.mallocs, 1);
    cr_assert_gt(d.time_ns, 0);
    cr_assert_eq(gm_device_map(&d, va + 60 * MiB, 60 * MiB), GM_DEVICE_OOM);
    cr_assert_eq(d.failed, 1);
    cr_assert_eq(d.reserved, 60 * MiB);
    /* adopting held memory: reserved, not a malloc, not timed */
    double t = d.time_ns;
    cr_assert_eq(gm_device_adopt(&d, va2, 20 * MiB), 0);
    cr_assert_eq(d.reserved, 80 * MiB);
    cr_assert_eq(d.mallocs, 1);
    cr_assert_eq(d.time_ns, t);
    cr_assert_eq(d.peak_reserved, 80 * MiB);
    cr_assert_eq(gm_device_adopt(&d, va2, 40 * MiB), GM_DEVICE_OOM);
    /* unmapping is a free */
    gm_device_free(&d, va, 60 * MiB);
    cr_assert_eq(d.reserved, 20 * MiB);
    cr_assert_eq(d.frees, 1);
}

/* ---- parameters and the conf string -------------------------------------- */

Test(caching, conf_parsing)
{
    pol_t c;
    ca_new(&c, "conf=expandable_segments:True,max_split_size_mb:128,"
               "roundup_power2_divisions:[256:1,512:2,>:8],garbage_collection_threshold:0.6",
           0);
    pol_alloc(&c, 5 * MiB);
    cr_assert_eq(c.dev.reserved, 20 * MiB); /* one large page */
    pol_end(&c);
    ca_new(&c, "conf= backend:native , release_lock_on_cudamalloc:True,"
               "pinned_use_cuda_host_register:False,pinned_num_register_threads:8", 0);
    pol_end(&c);

    static const char *const bad[] = {
        "conf=foo:1",
        "conf=max_split_size_mb:10",
        "conf=max_split_size_mb:abc",
        "conf=expandable_segments:yes",
        "conf=roundup_power2_divisions:3",
        "conf=roundup_power2_divisions:[256:1,",
        "conf=roundup_power2_divisions:[300:2]",
        "conf=garbage_collection_threshold:1.5",
        "conf=backend:cudaMallocAsync",
        "conf=expandable_segments",
        "conf=expandable_segments:True,",
        "roundup_power2_divisions=5",
        "roundup_power2_divisions=[1:2]x",
        "max_split_size=10MiB",
        "pad=lots",
        "memory_fraction=2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gm_error_t err = {0};
        int rc = ca_make(&c, bad[i], 0, &err);
        cr_assert_eq(rc, GM_EINVAL, "'%s' accepted", bad[i]);
        cr_assert(strstr(err.msg, "caching") != NULL, "'%s': message '%s'", bad[i], err.msg);
        gm_params_release(&c.params);
    }
}

static void ca_prepare(pol_t *c, const char *attrs, const gm_layout_t *layout, uint64_t set)
{
    gm_trace_context_t ctx = {.name = "t", .attrs = attrs, .layout = layout,
                              .params_set = set | c->params.set};
    gm_error_t err = {0};
    cr_assert_eq(gm_policy_prepare(c->p, &ctx, &err), 0, "prepare: %s", err.msg);
    pol_check(c);
}

static size_t param_index(const gm_policy_ops_t *ops, const char *name)
{
    for (size_t i = 0; i < ops->nparams; i++)
        if (strcmp(ops->params[i].name, name) == 0)
            return i;
    cr_assert_fail("no parameter %s", name);
    return 0;
}

Test(caching, settings_precedence)
{
    static const char attrs[] =
        "{\"source\":\"torch_snapshot\",\"allocator_settings\":{\"max_split_size\":-1,"
        "\"garbage_collection_threshold\":0.0,\"expandable_segments\":true,"
        "\"roundup_power2_divisions\":{\"1\":0,\"2\":0,\"4\":4}}}";
    pol_t c;
    /* trace settings apply */
    ca_new(&c, "", 0);
    ca_prepare(&c, attrs, NULL, 0);
    pol_alloc(&c, 5 * MiB);
    cr_assert_eq(c.dev.reserved, 20 * MiB); /* expandable: one page */
    gm_block_t b = pol_alloc(&c, 5 * MiB + 1); /* interval 2 (4 MiB): 4 divisions */
    cr_assert_eq(b.size, 6 * MiB);
    pol_end(&c);
    /* settings=default ignores them */
    ca_new(&c, "settings=default", 0);
    ca_prepare(&c, attrs, NULL, 0);
    b = pol_alloc(&c, 5 * MiB + 1);
    cr_assert_eq(b.size, 5 * MiB + 512);
    pol_end(&c);
    /* the conf string beats the trace */
    ca_new(&c, "conf=expandable_segments:False", 0);
    ca_prepare(&c, attrs, NULL, 0);
    pol_alloc(&c, 12 * MiB);
    cr_assert_eq(c.dev.reserved, 12 * MiB);
    pol_end(&c);
    /* an explicit parameter beats the conf string */
    ca_new(&c, "conf=expandable_segments:False;expandable_segments=true", 0);
    ca_prepare(&c, attrs, NULL,
               UINT64_C(1) << param_index(c.ops, "expandable_segments") |
                   UINT64_C(1) << param_index(c.ops, "conf"));
    pol_alloc(&c, 12 * MiB);
    cr_assert_eq(c.dev.reserved, 20 * MiB);
    pol_end(&c);
    /* recorded padding */
    ca_new(&c, "", 0);
    ca_prepare(&c, "{\"block_pad\":32,\"block_round\":512}", NULL, 0);
    cr_assert_eq(pol_alloc(&c, 481).size, 1024);
    pol_end(&c);
    ca_new(&c, "pad=0", 0);
    ca_prepare(&c, "{\"block_pad\":32,\"block_round\":512}", NULL, 0);
    cr_assert_eq(pol_alloc(&c, 481).size, 512);
    pol_end(&c);
    /* observed expandable segments when no settings were recorded */
    ca_new(&c, "", 0);
    ca_prepare(&c, "{\"expandable_segments\":true}", NULL, 0);
    pol_alloc(&c, 12 * MiB);
    cr_assert_eq(c.dev.reserved, 20 * MiB);
    pol_end(&c);
}

/* ---- warm start ---------------------------------------------------------- */

Test(caching, warm_start_from_layout)
{
    gm_layout_block_t blocks[] = {
        {0, 5 * MiB, 5 * MiB - 100, 0},             /* large seg: allocated by id 0 */
        {5 * MiB, 15 * MiB, 0, GM_LAYOUT_FREE},     /* free */
        {0, 512, 500, 1},                           /* small seg: id 1 */
        {512, 2 * MiB - 512, 0, GM_LAYOUT_FREE},
        {0, 12 * MiB, 0, GM_LAYOUT_FREE},           /* a whole free 12 MiB segment */
    };
    gm_layout_segment_t segs[] = {
        {.address = 0x10000000, .size = 20 * MiB, .pool = GM_POOL_LARGE, .first_block = 0,
         .nblocks = 2},
        {.address = 0x20000000, .size = 2 * MiB, .pool = GM_POOL_SMALL, .first_block = 2,
         .nblocks = 2},
        {.address = 0x30000000, .size = 12 * MiB, .pool = GM_POOL_LARGE, .first_block = 4,
         .nblocks = 1},
    };
    gm_layout_t l = {segs, 3, blocks, 5};
    pol_t c;
    ca_new(&c, "", 0);
    ca_prepare(&c, "{}", &l, 0);
    cr_assert_eq(c.dev.reserved, 34 * MiB);
    cr_assert_eq(c.dev.mallocs, 0);
    gm_request_t r0 = {.size = 5 * MiB - 100, .id = 0, .flags = GM_EVENT_PREEXISTING};
    gm_request_t r1 = {.size = 500, .id = 1, .flags = GM_EVENT_PREEXISTING};
    gm_block_t b0, b1;
    cr_assert_eq(gm_policy_alloc(c.p, &r0, &b0), 0);
    cr_assert_eq(gm_policy_alloc(c.p, &r1, &b1), 0);
    pol_check(&c);
    cr_assert_eq(b0.size, 5 * MiB);
    cr_assert_eq(b1.size, 512);
    /* 10 MiB: best fit is the 12 MiB segment (before the 15 MiB block in
     * size order), split; no device malloc */
    gm_block_t d = pol_alloc(&c, 10 * MiB);
    cr_assert_eq(d.size, 10 * MiB);
    gm_block_t e = pol_alloc(&c, 14 * MiB);
    cr_assert_eq(e.addr, b0.addr + 5 * MiB);
    cr_assert_eq(c.dev.mallocs, 0);
    pol_free(&c, b0);
    pol_free(&c, e);
    pol_free(&c, d);
    pol_free(&c, b1);
    pol_empty(&c);
    cr_assert_eq(c.dev.reserved, 0);
    pol_end(&c);

    /* a pre-existing request larger than its recorded block: the block is
     * freed and the request served by the rules */
    ca_new(&c, "", 0);
    ca_prepare(&c, "{}", &l, 0);
    gm_request_t big = {.size = 6 * MiB, .id = 0, .flags = GM_EVENT_PREEXISTING};
    cr_assert_eq(gm_policy_alloc(c.p, &big, &b0), 0);
    pol_check(&c);
    cr_assert_geq(b0.size, 6 * MiB);
    pol_end(&c);

    /* start=empty: the same trace from a cold allocator */
    ca_new(&c, "start=empty", 0);
    ca_prepare(&c, "{}", &l, 0);
    cr_assert_eq(c.dev.reserved, 0);
    cr_assert_eq(gm_policy_alloc(c.p, &r0, &b0), 0);
    cr_assert_eq(c.dev.mallocs, 1);
    pol_end(&c);
}

Test(caching, warm_start_expandable)
{
    gm_layout_block_t blocks[] = {
        {0, 30 * MiB, 30 * MiB, 0},
        {30 * MiB, 10 * MiB, 0, GM_LAYOUT_FREE},
        {0, 20 * MiB, 0, GM_LAYOUT_FREE},
    };
    gm_layout_segment_t segs[] = {
        {.address = 0x100000000, .size = 40 * MiB, .pool = GM_POOL_LARGE, .expandable = 1,
         .first_block = 0, .nblocks = 2},
        {.address = 0x100000000 + 100 * MiB, .size = 20 * MiB, .pool = GM_POOL_LARGE,
         .expandable = 1, .first_block = 2, .nblocks = 1},
    };
    gm_layout_t l = {segs, 2, blocks, 3};
    pol_t c;
    ca_new(&c, "expandable_segments=true", 0);
    ca_prepare(&c, "{}", &l, 0);
    cr_assert_eq(c.dev.reserved, 60 * MiB);
    gm_request_t r0 = {.size = 30 * MiB, .id = 0, .flags = GM_EVENT_PREEXISTING};
    gm_block_t b0;
    cr_assert_eq(gm_policy_alloc(c.p, &r0, &b0), 0);
    pol_check(&c);
    /* 25 MiB: no free block is that large; the 10 MiB one grows by one
     * page into the unmapped gap */
    gm_block_t d = pol_alloc(&c, 25 * MiB);
    cr_assert_eq(d.addr, b0.addr + 30 * MiB, "d at +%lld", (long long)(d.addr - b0.addr));
    cr_assert_eq(c.dev.reserved, 80 * MiB);
    pol_empty(&c); /* the free recorded range [100, 120) MiB goes */
    cr_assert_eq(c.dev.reserved, 60 * MiB);
    pol_free(&c, d);
    pol_free(&c, b0);
    pol_empty(&c);
    cr_assert_eq(c.dev.reserved, 0);
    pol_end(&c);
}

/* ---- seeded stress ------------------------------------------------------- */

static void stress(const char *settings, uint64_t capacity, uint64_t seed, int ops)
{
    pol_t c;
    ca_new(&c, settings, capacity);
    enum { LIVE = 256 };
    gm_block_t live[LIVE];
    int used[LIVE] = {0};
    uint64_t st = seed, ooms = 0;
    for (int i = 0; i < ops; i++) {
        uint64_t r = gt_rand(&st);
        int k = (int)(r % LIVE);
        if (used[k]) {
            cr_assert_eq(gm_policy_free(c.p, &live[k], 0), 0);
            used[k] = 0;
        } else if (r % 97 == 0) {
            gm_policy_empty_cache(c.p);
        } else {
            uint64_t kind = (r >> 8) % 8, size;
            if (kind < 4)
                size = 1 + (r >> 16) % (64 * KiB);
            else if (kind < 6)
                size = 1 + (r >> 16) % (12 * MiB);
            else
                size = 1 + (r >> 16) % (48 * MiB);
            gm_request_t req = {.size = size, .stream = (uint32_t)((r >> 60) & 1)};
            int rc = gm_policy_alloc(c.p, &req, &live[k]);
            cr_assert(rc == 0 || rc == GM_ALLOC_OOM, "alloc rc %d", rc);
            if (rc == 0)
                used[k] = 1;
            else
                ooms++;
        }
        char why[256] = "";
        cr_assert_eq(gm_policy_check(c.p, why, sizeof why), 0, "%s: op %d: %s", settings, i, why);
        if (capacity)
            cr_assert_leq(c.dev.reserved, capacity);
    }
    cr_assert_gt(ooms, 0, "%s: the stress never ran out of memory", settings);
    for (int k = 0; k < LIVE; k++)
        if (used[k])
            cr_assert_eq(gm_policy_free(c.p, &live[k], 0), 0);
    pol_empty(&c);
    cr_assert_eq(c.dev.reserved, 0, "%s: %llu bytes left after empty_cache", settings,
                 (unsigned long long)c.dev.reserved);
    pol_end(&c);
}

Test(caching, stress_small_capacity)
{
    stress("", 256 * MiB, 1, 20000);
    stress("max_split_size=24MiB", 256 * MiB, 2, 20000);
    stress("expandable_segments=true", 256 * MiB, 3, 20000);
    stress("garbage_collection_threshold=0.6;memory_fraction=0.9", 256 * MiB, 4, 20000);
    stress("roundup_power2_divisions=[1:2,4:4,>:8];max_split_size=20MiB", 200 * MiB, 5, 20000);
    stress("expandable_segments=true;garbage_collection_threshold=0.5;memory_fraction=0.8",
           256 * MiB, 6, 20000);
}

/* ---- real snapshots ------------------------------------------------------ */

static const char *const snapshot_files[] = {
    "lm2.7b_ctx128_forward_fp32.pickle",
    "lm2.7b_ctx128_forward_mixed.pickle",
    "lm2.7b_ctx128_train_fp32.pickle",
    "lmmedium_ctx128_inference_fp32.pickle",
    "lmmedium_ctx128_train_fp32.pickle",
    "lmmedium_ctx256_inference_fp32.pickle",
    "lmmedium_ctx256_train_fp32.pickle",
    "lmmedium_ctx512_train_mixed.pickle",
    "msd_basic.pickle",
    "msd_empty_cache.pickle",
    "msd_empty_cache_expandable.pickle",
    "msd_expandable.pickle",
    "msd_multi_device.pickle",
};
#define NSNAPSHOTS (sizeof snapshot_files / sizeof snapshot_files[0])

/* Import snapshot i into a fresh store; NULL (test skipped) without data.
 * *names gets the trace names (at most 8). */
static gm_store_t *snapshot_store(size_t i, char names[8][64], size_t *ntraces)
{
    char rel[128];
    snprintf(rel, sizeof rel, "snapshots/%s", snapshot_files[i]);
    const char *why = NULL;
    const char *path = gt_data_path(rel, &why);
    if (path == NULL)
        return NULL;
    size_t len;
    char *data = gt_read_file(path, &len);
    cr_assert_not_null(data, "cannot read %s", path);
    char db[96];
    snprintf(db, sizeof db, "caching_%zu.db", i);
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(gt_tmpfile(db), GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(s, "t", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_torch_import_buffer(data, len, snapshot_files[i], t, &err), 0, "%s: %s",
                 snapshot_files[i], err.msg);
    *ntraces = gm_import_count(t);
    cr_assert_leq(*ntraces, 8);
    for (size_t k = 0; k < *ntraces; k++)
        snprintf(names[k], 64, "%s", gm_import_name(t, k));
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    free(data);
    return s;
}

/* The recorded figures from a trace's attributes. */
static void snapshot_recorded(gm_store_t *s, const char *name, uint64_t *peak, uint64_t *mallocs,
                              uint64_t *frees)
{
    gm_error_t err = {0};
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, name, &info, &err), 0, "%s", err.msg);
    gm_jv_t *root;
    cr_assert_eq(gm_json_parse(info.attrs, strlen(info.attrs), &root, &err), 0, "%s", err.msg);
    const gm_jv_t *rec = gm_jv_get(root, "recorded");
    cr_assert_eq(gm_jv_u64(gm_jv_get(rec, "peak_reserved"), peak), 0, "%s: no recorded peak", name);
    cr_assert_eq(gm_jv_u64(gm_jv_get(rec, "segment_allocs"), mallocs), 0,
                 "%s: no recorded segment_allocs", name);
    cr_assert_eq(gm_jv_u64(gm_jv_get(rec, "segment_frees"), frees), 0,
                 "%s: no recorded segment_frees", name);
    gm_jv_free(root);
    gm_trace_info_release(&info);
}

/* Replay one trace through caching with settings ("k=v;…"); fills m. */
static void snapshot_replay(gm_store_t *s, const char *name, const char *settings, int check_level,
                            gm_metrics_t *m)
{
    gm_error_t err = {0};
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.timeline_points = 0;
    cfg.check_level = check_level;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0, "%s", err.msg);
    gm_params_t params;
    cr_assert_eq(gm_params_init(&params, gm_policy_find("caching"), &err), 0);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", settings);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        cr_assert_eq(gm_params_set(&params, kv, eq + 1, &err), 0, "%s", err.msg);
    }
    cr_assert_eq(gm_replay_add(r, &params, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_trace(r, s, name, &err), 0, "%s", err.msg);
    *m = *gm_replay_metrics(r, 0);
    gm_replay_destroy(r);
    gm_params_release(&params);
}

static double rel_error(uint64_t sim, uint64_t rec)
{
    if (rec == 0)
        return sim == 0 ? 0.0 : 1.0;
    return ((double)sim - (double)rec) / (double)rec;
}

/* Replaying every snapshot (under the sanitizers the small msd_* files
 * only) with its recorded settings from its recorded starting layout
 * reproduces the recorded peak reserved bytes and device
 * malloc and free counts (segment_alloc / segment_map, segment_free /
 * segment_unmap entries) within 1 %; the cold start (start=empty) is
 * printed beside it. */
Test(caching_data, fidelity_on_real_snapshots, .timeout = 300)
{
    size_t done = 0;
    fprintf(stderr, "%-40s %14s %14s %8s %6s %6s | %14s %6s\n", "trace", "recorded peak",
            "simulated", "error", "rec.m", "sim.m", "cold peak", "cold.m");
    for (size_t i = 0; i < NSNAPSHOTS; i++) {
#if defined(__SANITIZE_ADDRESS__)
        if (strncmp(snapshot_files[i], "msd_", 4) != 0)
            continue; /* the large files: in the normal build only */
#endif
        char names[8][64];
        size_t n = 0;
        gm_store_t *s = snapshot_store(i, names, &n);
        if (s == NULL)
            continue;
        for (size_t k = 0; k < n; k++) {
            uint64_t rpeak, rmallocs, rfrees;
            snapshot_recorded(s, names[k], &rpeak, &rmallocs, &rfrees);
            gm_metrics_t warm, cold;
            snapshot_replay(s, names[k], "", 0, &warm);
            snapshot_replay(s, names[k], "start=empty", 0, &cold);
            char label[128];
            snprintf(label, sizeof label, "%s%s%s", snapshot_files[i], n > 1 ? ":" : "",
                     n > 1 ? names[k] : "");
            double e = rel_error(warm.peak_reserved, rpeak);
            fprintf(stderr, "%-40s %14llu %14llu %+7.3f%% %6llu %6llu | %14llu %6llu\n", label,
                    (unsigned long long)rpeak, (unsigned long long)warm.peak_reserved, 100 * e,
                    (unsigned long long)rmallocs, (unsigned long long)warm.device_mallocs,
                    (unsigned long long)cold.peak_reserved,
                    (unsigned long long)cold.device_mallocs);
            cr_expect_leq(e < 0 ? -e : e, 0.01, "%s: peak reserved %llu, recorded %llu", label,
                          (unsigned long long)warm.peak_reserved, (unsigned long long)rpeak);
            double em = rel_error(warm.device_mallocs, rmallocs);
            cr_expect_leq(em < 0 ? -em : em, 0.01, "%s: %llu device mallocs, recorded %llu",
                          label, (unsigned long long)warm.device_mallocs,
                          (unsigned long long)rmallocs);
            double ef = rel_error(warm.device_frees, rfrees);
            cr_expect_leq(ef < 0 ? -ef : ef, 0.01, "%s: %llu device frees, recorded %llu", label,
                          (unsigned long long)warm.device_frees, (unsigned long long)rfrees);
            cr_expect_eq(warm.ooms, 0, "%s: simulated OOM", label);
            done++;
        }
        gm_store_close(s);
    }
    if (done == 0)
        cr_skip_test("no snapshots in ../shared/data/snapshots");
}

/* The invariant walker after every event of every snapshot (GM_DEBUG=2),
 * warm, cold, and with expandable segments forced on; under the sanitizers
 * the small msd_* files, warm only. */
Test(caching_data, check_after_every_event, .timeout = 300)
{
    size_t done = 0;
    for (size_t i = 0; i < NSNAPSHOTS; i++) {
#if defined(__SANITIZE_ADDRESS__)
        if (strncmp(snapshot_files[i], "msd_", 4) != 0)
            continue;
#endif
        char names[8][64];
        size_t n = 0;
        gm_store_t *s = snapshot_store(i, names, &n);
        if (s == NULL)
            continue;
        for (size_t k = 0; k < n; k++) {
            gm_metrics_t m;
            snapshot_replay(s, names[k], "", 2, &m);
#if !defined(__SANITIZE_ADDRESS__)
            snapshot_replay(s, names[k], "start=empty", 2, &m);
            snapshot_replay(s, names[k], "expandable_segments=true;settings=default", 2, &m);
#endif
            done++;
        }
        gm_store_close(s);
    }
    if (done == 0)
        cr_skip_test("no snapshots in ../shared/data/snapshots");
}

/* ---- segment addresses as recorded ---------------------------------------- */

typedef struct seg_log {
    uint64_t *addr, *size;
    size_t n, cap;
} seg_log_t;

static void seg_log_add(seg_log_t *l, uint64_t addr, uint64_t size)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->addr = realloc(l->addr, l->cap * sizeof *l->addr);
        l->size = realloc(l->size, l->cap * sizeof *l->size);
        cr_assert(l->addr != NULL && l->size != NULL);
    }
    l->addr[l->n] = addr;
    l->size[l->n++] = size;
}

static int seg_log_malloc(void *ctx, uint64_t addr, uint64_t size)
{
    seg_log_add(ctx, addr, size);
    return 0;
}

static int seg_log_adopt(void *ctx, uint64_t addr, uint64_t size)
{
    (void)ctx, (void)addr, (void)size;
    return 0;
}

/* The warm replay of lm2.7b_ctx128_train_fp32 (CUDA put 668 of its 783
 * segment_allocs below the one before) allocates every segment at the
 * address and of the size its segment_alloc recorded, in the recorded
 * order (gm_device_hint): the best fit's ties by address fall as they fell
 * in the recorded run. */
Test(caching_data, segments_at_recorded_addresses, .timeout = 300)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("a large file: in the normal build only");
#endif
    size_t i = 0;
    while (i < NSNAPSHOTS && strcmp(snapshot_files[i], "lm2.7b_ctx128_train_fp32.pickle") != 0)
        i++;
    cr_assert(i < NSNAPSHOTS);
    char names[8][64];
    size_t n = 0;
    gm_store_t *s = snapshot_store(i, names, &n);
    if (s == NULL)
        cr_skip_test("lm2.7b_ctx128_train_fp32 is absent");
    gm_error_t err = {0};
    seg_log_t rec = {0}, sim = {0};
    gm_reader_t *rd;
    cr_assert_eq(gm_reader_open(s, names[0], &rd, &err), 0, "%s", err.msg);
    const gm_event_t *ev;
    size_t nev;
    while (gm_reader_next(rd, &ev, &nev, &err) == 0 && nev > 0)
        for (size_t k = 0; k < nev; k++)
            if (ev[k].op == GM_OP_SEG_ALLOC)
                seg_log_add(&rec, ev[k].addr, ev[k].size);
    gm_reader_close(rd);
    cr_assert_eq(rec.n, 783, "%zu segment_allocs", rec.n);

    gm_device_hooks_t hooks = {.malloc = seg_log_malloc, .adopt = seg_log_adopt};
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.timeline_points = 0;
    cfg.device.hooks = &hooks;
    cfg.device.hooks_ctx = &sim;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0, "%s", err.msg);
    gm_params_t params;
    cr_assert_eq(gm_params_init(&params, gm_policy_find("caching"), &err), 0);
    cr_assert_eq(gm_replay_add(r, &params, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_trace(r, s, names[0], &err), 0, "%s", err.msg);
    gm_replay_destroy(r);
    gm_params_release(&params);
    gm_store_close(s);

    cr_assert_eq(sim.n, rec.n, "%zu device mallocs, %zu recorded", sim.n, rec.n);
    size_t same = 0;
    for (size_t k = 0; k < sim.n; k++)
        same += sim.addr[k] == rec.addr[k] && sim.size[k] == rec.size[k];
    cr_expect_eq(same, rec.n, "%zu of %zu segments at their recorded address and size", same,
                 rec.n);
    free(rec.addr), free(rec.size), free(sim.addr), free(sim.size);
}
