/*
 * tests/fuzz/fuzz_caching_conf.c — fuzz target for the caching policy's
 * settings: the PYTORCH_CUDA_ALLOC_CONF string, the other text parameters,
 * and a trace's attributes (its recorded allocator_settings).  The conf
 * string, the divisions and the recorded settings are decoded by
 * sim/torch_rules.c, which the snapshot importer shares (fuzz_pickle
 * reaches it through the snapshots' allocator_settings).
 *
 * The first byte picks what the rest of the input is (up to its first NUL):
 * 0 the `conf` parameter, 1 `roundup_power2_divisions`, 2 `pad`,
 * 3 `base_addr_align`, 4 the trace attributes handed to prepare.  When the
 * policy accepts them, a few allocations and frees run on a small device
 * with check() after each; check() finding anything, a crash, a sanitizer
 * report or a leak is the bug.  A refusal is fine.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fuzz_keys[] = {"conf", "roundup_power2_divisions", "pad",
                                        "base_addr_align"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned mode = data[0] % 5;
    size_t n = 0;
    while (1 + n < size && data[1 + n] != 0)
        n++;
    char *text = malloc(n + 1);
    if (text == NULL)
        abort();
    memcpy(text, data + 1, n);
    text[n] = '\0';

    const gm_policy_ops_t *ops = gm_policy_find("caching");
    gm_error_t err;
    gm_params_t params;
    if (ops == NULL || gm_params_init(&params, ops, &err) != 0)
        abort();
    gm_device_config_t cfg;
    gm_device_config_default(&cfg);
    cfg.capacity = UINT64_C(256) << 20;
    gm_device_t dev;
    gm_device_init(&dev, &cfg);
    gm_policy_t *p = NULL;
    int ok = mode == 4 || gm_params_set(&params, fuzz_keys[mode], text, &err) == 0;
    if (ok)
        ok = gm_policy_create(ops, &dev, params.values, &p, &err) == 0;
    if (ok && mode == 4) {
        gm_trace_context_t ctx = {.name = "fuzz", .attrs = text, .params_set = params.set};
        ok = gm_policy_prepare(p, &ctx, &err) == 0;
    }
    if (ok) {
        gm_block_t live[8];
        int used[8] = {0};
        uint64_t st = n;
        for (int i = 0; i < 64; i++) {
            uint64_t r = gt_rand(&st);
            int k = (int)(r % 8);
            if (used[k]) {
                if (gm_policy_free(p, &live[k], 0) != 0)
                    abort();
                used[k] = 0;
            } else {
                gm_request_t req = {.size = 1 + (r >> 8) % (UINT64_C(48) << 20),
                                    .stream = (uint32_t)(r >> 62)};
                int rc = gm_policy_alloc(p, &req, &live[k]);
                if (rc < 0)
                    abort();
                used[k] = rc == 0;
            }
            if (i % 16 == 15)
                gm_policy_empty_cache(p);
            char why[256];
            if (gm_policy_check(p, why, sizeof why) != 0)
                abort();
        }
    }
    if (p != NULL)
        gm_policy_destroy(p);
    gm_params_release(&params);
    free(text);
    return 0;
}

static const char *const fuzz_seed_texts[] = {
    "\x00" "expandable_segments:True,max_split_size_mb:128,"
    "roundup_power2_divisions:[256:1,512:2,>:8],garbage_collection_threshold:0.6",
    "\x00" "backend:native,release_lock_on_cudamalloc:True,max_non_split_rounding_mb:40",
    "\x00" "roundup_power2_divisions:4,base_addr_aligned_kb:16,expandable_segments:False",
    "\x01" "[1:4,2:8,>:2]",
    "\x01" "16",
    "\x02" "32",
    "\x03" "16KiB",
    "\x04" "{\"allocator_settings\":{\"max_split_size\":134217728,"
    "\"garbage_collection_threshold\":0.5,\"expandable_segments\":true,"
    "\"roundup_power2_divisions\":{\"1\":4,\"2\":0,\"32768\":8}},\"block_pad\":32}",
    "\x04" "{\"allocator_settings\":{\"max_split_size\":-1,\"roundup_power2_divisions\":[1,2,4]},"
    "\"expandable_segments\":false}",
    "\x04" "{\"allocator_settings\":{\"PYTORCH_CUDA_ALLOC_CONF\":\"\",\"max_split_size\":-1,"
    "\"max_non_split_rounding_size\":41943040,\"roundup_power2_divisions\":{\"1\":131072,"
    "\"4\":3}}}",
    "\x04" "{\"allocator_settings\":{\"roundup_power2_divisions\":4}}",
};

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    size_t n = sizeof fuzz_seed_texts / sizeof fuzz_seed_texts[0];
    gm_fuzz_seed_t *seeds = calloc(n, sizeof *seeds);
    if (seeds == NULL) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        seeds[i].len = 1 + strlen(fuzz_seed_texts[i] + 1);
        seeds[i].data = malloc(seeds[i].len);
        if (seeds[i].data == NULL) {
            gm_fuzz_seeds_free(seeds, i);
            *out = NULL;
            return 0;
        }
        memcpy(seeds[i].data, fuzz_seed_texts[i], seeds[i].len);
    }
    *out = seeds;
    return n;
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; seeds != NULL && i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
