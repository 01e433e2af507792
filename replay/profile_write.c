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
    gm_json_end_object(&j);
    gm_json_finish(&j);
    return ferror(f) ? GM_EIO : 0;
}
