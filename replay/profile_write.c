/*
 * replay/profile_write.c — writing a device cost profile as JSON (read
 * back by gm_cost_profile_load in sim/profile.c).
 */
#include <stdio.h>

#include "gmsim/gpu.h"
#include "gmsim/json.h"

int gm_cost_profile_write(const gm_cost_profile_t *p, FILE *f)
{
    gm_json_t j;
    gm_json_init(&j, f, 1);
    gm_json_begin_object(&j);
    gm_json_key(&j, "source");
    gm_json_str(&j, p->source ? p->source : "");
    gm_json_key(&j, "points");
    gm_json_begin_array(&j);
    for (size_t i = 0; i < p->n; i++) {
        gm_json_begin_object(&j);
        gm_json_key(&j, "size");
        gm_json_u64(&j, p->sizes[i]);
        gm_json_key(&j, "malloc_ns");
        gm_json_double(&j, p->malloc_ns[i]);
        gm_json_key(&j, "free_ns");
        gm_json_double(&j, p->free_ns[i]);
        gm_json_end_object(&j);
    }
    gm_json_end_array(&j);
    if (p->has_granularity) {
        const gm_device_granularity_t *g = &p->gran;
        gm_json_key(&j, "granularity");
        gm_json_begin_object(&j);
#define PROFILE_GRAN_WRITE(f)                                                                 \
    gm_json_key(&j, #f);                                                                      \
    gm_json_u64(&j, g->f);
        PROFILE_GRAN_WRITE(malloc_align)
        PROFILE_GRAN_WRITE(malloc_chunk)
        PROFILE_GRAN_WRITE(malloc_large)
        PROFILE_GRAN_WRITE(vmm_minimum)
        PROFILE_GRAN_WRITE(vmm_recommended)
        PROFILE_GRAN_WRITE(pool_align)
        PROFILE_GRAN_WRITE(pool_chunk)
        PROFILE_GRAN_WRITE(pool_large)
#undef PROFILE_GRAN_WRITE
        const char *flags[] = {"pool_releases_at_sync", "pool_keeps_under_threshold"};
        int fv[] = {g->pool_releases_at_sync, g->pool_keeps_under_threshold};
        for (size_t i = 0; i < 2; i++) {
            gm_json_key(&j, flags[i]);
            if (fv[i] < 0)
                gm_json_null(&j);
            else
                gm_json_bool(&j, fv[i]);
        }
        gm_json_end_object(&j);
    }
    gm_json_end_object(&j);
    gm_json_finish(&j);
    return ferror(f) ? GM_EIO : 0;
}
