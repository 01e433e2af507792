/*
 * sim/profile.c — device cost profiles: the latency table `gmsim calibrate`
 * measures on a GPU and `--device-profile FILE` feeds to the simulated
 * device (gm_cost_profile_t in gmsim/device.h).
 *
 * The file is JSON: {"source": "who/where/when", "points": [{"size": B,
 * "malloc_ns": T, "free_ns": T}, ...]} with sizes strictly ascending and
 * times finite and ≥ 0, and optionally "granularity": {"malloc_align": B,
 * ...} (gm_device_granularity_t's fields, each a power of two up to 1 TiB
 * or 0 for not measured; its two flags true, false or null).  Anything
 * else is refused with the file's name and the point or field at fault.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/device.h"
#include "gmsim/json.h"
#include "gmsim/trace.h"

#define PROFILE_MAX_BYTES (16u << 20) /* a profile is a few KiB */
#define PROFILE_MAX_POINTS 4096

void gm_cost_profile_free(gm_cost_profile_t *p)
{
    if (p == NULL)
        return;
    free(p->sizes);
    free(p->malloc_ns);
    free(p->free_ns);
    free(p->source);
    free(p);
}

static char *profile_read(const char *path, size_t *len, gm_error_t *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        gm_error_set(err, GM_EIO, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(PROFILE_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, PROFILE_MAX_BYTES + 1, f) : 0;
    int bad = buf == NULL || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        gm_error_set(err, buf ? GM_EIO : GM_ENOMEM, "cannot read '%s'", path);
        return NULL;
    }
    if (n > PROFILE_MAX_BYTES) {
        free(buf);
        gm_error_set(err, GM_EFORMAT, "'%s': larger than a cost profile can be (%u bytes)", path,
                     PROFILE_MAX_BYTES);
        return NULL;
    }
    *len = n;
    return buf;
}

static int profile_time(const gm_jv_t *v, double *out)
{
    if (gm_jv_type(v) != GM_JV_NUMBER)
        return -1;
    double d = gm_jv_num(v);
    if (!isfinite(d) || d < 0)
        return -1;
    *out = d;
    return 0;
}

/* The sizes of "granularity", in gm_device_granularity_t's order. */
#define PROFILE_GRAN_SIZES(X)                                                                 \
    X(malloc_align) X(malloc_chunk) X(malloc_large) X(vmm_minimum) X(vmm_recommended)         \
    X(pool_align) X(pool_chunk) X(pool_large)

/* Read the optional "granularity" object g into p; GM_EFORMAT naming the
 * field at fault. */
static int profile_granularity(const gm_jv_t *g, gm_cost_profile_t *p, const char *path,
                               gm_error_t *err)
{
    if (g == NULL)
        return 0;
    if (gm_jv_type(g) != GM_JV_OBJECT)
        return gm_error_set(err, GM_EFORMAT, "'%s': \"granularity\" must be an object", path);
    gm_device_granularity_t *d = &p->gran;
#define PROFILE_GRAN_READ(f)                                                                  \
    {                                                                                         \
        const gm_jv_t *v = gm_jv_get(g, #f);                                                  \
        if (v != NULL && (gm_jv_u64(v, &d->f) != 0 || (d->f & (d->f - 1)) != 0 ||             \
                          d->f > GM_DEVICE_GRANULARITY_MAX))                                  \
            return gm_error_set(err, GM_EFORMAT,                                              \
                                "'%s': granularity." #f " must be a power of two up to 1 TiB " \
                                "(or 0: not measured)",                                        \
                                path);                                                        \
    }
    PROFILE_GRAN_SIZES(PROFILE_GRAN_READ)
#undef PROFILE_GRAN_READ
    static const char *const flags[] = {"pool_releases_at_sync", "pool_keeps_under_threshold"};
    int *fv[] = {&d->pool_releases_at_sync, &d->pool_keeps_under_threshold};
    for (size_t i = 0; i < 2; i++) {
        const gm_jv_t *v = gm_jv_get(g, flags[i]);
        if (v == NULL || gm_jv_type(v) == GM_JV_NULL)
            *fv[i] = -1;
        else if (gm_jv_type(v) == GM_JV_BOOL)
            *fv[i] = gm_jv_bool(v);
        else
            return gm_error_set(err, GM_EFORMAT, "'%s': granularity.%s must be true, false or null",
                                path, flags[i]);
    }
    p->has_granularity = 1;
    return 0;
}

int gm_cost_profile_load(const char *path, gm_cost_profile_t **out, gm_error_t *err)
{
    size_t len;
    char *text = profile_read(path, &len, err);
    if (text == NULL)
        return err ? err->code : GM_EIO;
    gm_jv_t *root;
    int rc = gm_json_parse(text, len, &root, err);
    free(text);
    if (rc) {
        gm_error_prefix(err, "'%s'", path);
        return rc;
    }
    const gm_jv_t *points = gm_jv_get(root, "points");
    size_t n = gm_jv_len(points);
    gm_cost_profile_t *p = calloc(1, sizeof *p);
    if (p == NULL) {
        gm_jv_free(root);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    if (gm_jv_type(points) != GM_JV_ARRAY || n == 0 || n > PROFILE_MAX_POINTS) {
        rc = gm_error_set(err, GM_EFORMAT,
                          "'%s': not a cost profile (needs \"points\": 1 to %d entries)", path,
                          PROFILE_MAX_POINTS);
        goto out;
    }
    p->n = n;
    p->sizes = malloc(n * sizeof *p->sizes);
    p->malloc_ns = malloc(n * sizeof *p->malloc_ns);
    p->free_ns = malloc(n * sizeof *p->free_ns);
    const char *source = gm_jv_str(gm_jv_get(root, "source"));
    p->source = source ? strdup(source) : NULL;
    if (p->sizes == NULL || p->malloc_ns == NULL || p->free_ns == NULL ||
        (source && p->source == NULL)) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const gm_jv_t *pt = gm_jv_at(points, i);
        if (gm_jv_u64(gm_jv_get(pt, "size"), &p->sizes[i]) != 0 || p->sizes[i] == 0 ||
            p->sizes[i] > GM_SIZE_LIMIT ||
            profile_time(gm_jv_get(pt, "malloc_ns"), &p->malloc_ns[i]) != 0 ||
            profile_time(gm_jv_get(pt, "free_ns"), &p->free_ns[i]) != 0) {
            rc = gm_error_set(err, GM_EFORMAT,
                              "'%s': point %zu needs a size (1 to 2^48 bytes) and finite "
                              "malloc_ns and free_ns ≥ 0",
                              path, i);
            goto out;
        }
        if (i > 0 && p->sizes[i] <= p->sizes[i - 1]) {
            rc = gm_error_set(err, GM_EFORMAT, "'%s': point %zu: sizes must ascend", path, i);
            goto out;
        }
    }
    rc = profile_granularity(gm_jv_get(root, "granularity"), p, path, err);
out:
    gm_jv_free(root);
    if (rc) {
        gm_cost_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}
