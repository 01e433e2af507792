/*
 * sim/caching/config.c — the caching policy's settings: the PYTORCH_CUDA_ALLOC_CONF
 * parser, the trace's recorded allocator_settings, the parameters, and how
 * they resolve (defaults < trace settings < conf < explicit).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "base/text.h"

#include "sim/caching/caching.h"

/* ---- configuration -------------------------------------------------------------- */

void caching_cfg_default(caching_cfg_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    gm__torch_settings_default(&cfg->t);
}

/* The roundup_power2_divisions parameter: "" (off), "N" or "[…]"
 * (sim/torch_rules.c decodes it). */
int caching_divisions_apply(uint32_t div[CACHING_INTERVALS], const char *text, gm_error_t *err)
{
    int rc = gm__torch_divisions_parse(div, text, err);
    if (rc)
        gm_error_prefix(err, "caching");
    return rc;
}

/* pad: "trace" (keep *pad) or a byte count. */
int caching_pad_parse(const char *text, uint64_t *pad, int *is_trace, gm_error_t *err)
{
    *is_trace = text == NULL || strcmp(text, "trace") == 0;
    if (*is_trace)
        return 0;
    if (gm_parse_size(text, pad, NULL) != 0 || *pad > MiB)
        return gm_error_set(err, GM_EINVAL, "caching: pad '%s' must be 'trace' or a size up to "
                            "1 MiB", text);
    return 0;
}

/* base_addr_align: "trace" (keep *align) or a power of two up to 2 MiB (0 = off). */
int caching_align_parse(const char *text, uint64_t *align, int *is_trace, gm_error_t *err)
{
    *is_trace = text == NULL || strcmp(text, "trace") == 0;
    if (*is_trace)
        return 0;
    if (gm_parse_size(text, align, NULL) != 0 || (*align != 0 && !gm__is_pow2(*align)) ||
        *align > CACHING_ROUND_LARGE)
        return gm_error_set(err, GM_EINVAL, "caching: base_addr_align '%s' must be 'trace', 0 "
                            "or a power of two up to 2MiB", text);
    return 0;
}

/* ---- sizes ------------------------------------------------------------------------ */

uint64_t caching_memory(const caching_t *c)
{
    if (c->device_memory)
        return c->device_memory;
    if (c->base.dev->cfg.capacity)
        return c->base.dev->cfg.capacity;
    return CACHING_DEFAULT_MEMORY;
}

static void caching_set_fraction(caching_t *c)
{
    c->set_fraction = c->cfg.fraction > 0.0;
    c->allowed = c->set_fraction ? (uint64_t)(c->cfg.fraction * (double)caching_memory(c)) : 0;
}

/* ---- settings ---------------------------------------------------------------------- */

/* The trace's allocator_settings (a snapshot's dict, decoded by
 * sim/torch_rules.c as the importer decoded it) over cfg; cfg may be
 * partly changed on an error. */
static int caching_trace_settings(const gm_jv_t *attrs, caching_cfg_t *cfg, gm_error_t *err)
{
    const gm_jv_t *s = gm_jv_get(attrs, GM_ATTR_ALLOCATOR_SETTINGS);
    if (gm_jv_type(s) != GM_JV_OBJECT) {
        const gm_jv_t *e = gm_jv_get(attrs, "expandable_segments");
        if (gm_jv_type(e) == GM_JV_BOOL)
            cfg->t.expandable = gm_jv_bool(e);
        return 0;
    }
    int rc = gm__torch_settings_read(s, &cfg->t, err);
    if (rc)
        gm_error_prefix(err, "caching: trace");
    return rc;
}

/* The conf parameter (a PYTORCH_CUDA_ALLOC_CONF string) over cfg; cfg
 * may be partly changed on an error. */
static int conf_apply(caching_cfg_t *cfg, const char *text, gm_error_t *err)
{
    int rc = gm__torch_conf_apply(&cfg->t, text, err);
    if (rc)
        gm_error_prefix(err, "caching");
    return rc;
}

/* Resolve the configuration: defaults < trace settings < conf < explicit. */
int caching_configure(caching_t *c, const gm_jv_t *attrs, uint64_t set, gm_error_t *err)
{
    caching_cfg_t cfg;
    caching_cfg_default(&cfg);
    int rc;
    if (c->settings_trace && attrs != NULL && (rc = caching_trace_settings(attrs, &cfg, err)))
        return rc;
    if (attrs != NULL) {
        uint64_t pad;
        if (gm_jv_u64(gm_jv_get(attrs, GM_ATTR_BLOCK_PAD), &pad) == 0 && pad <= MiB) {
            /* the Ascend build: padded blocks, 16 KiB-aligned large blocks
             * in expandable segments (its base_addr_aligned_kb default) */
            if (c->pad_trace)
                cfg.pad = pad;
            if (c->align_trace)
                cfg.t.align = 16 * KiB;
        }
    }
    if (c->conf != NULL && c->conf[0] != '\0' && (rc = conf_apply(&cfg, c->conf, err)))
        return rc;
    const caching_cfg_t *g = &c->given;
    if (set & (UINT64_C(1) << P_MAX_SPLIT))
        cfg.t.max_split = g->t.max_split;
    if (set & (UINT64_C(1) << P_MAX_NSR))
        cfg.t.max_nsr = g->t.max_nsr;
    if (set & (UINT64_C(1) << P_DIVISIONS))
        memcpy(cfg.t.div, g->t.div, sizeof cfg.t.div);
    if (set & (UINT64_C(1) << P_GC))
        cfg.t.gc = g->t.gc;
    if (set & (UINT64_C(1) << P_FRACTION))
        cfg.fraction = g->fraction;
    if (set & (UINT64_C(1) << P_EXPANDABLE))
        cfg.t.expandable = g->t.expandable;
    if (!c->pad_trace)
        cfg.pad = g->pad;
    if (!c->align_trace)
        cfg.t.align = g->t.align;
    c->cfg = cfg;
    caching_set_fraction(c);
    return 0;
}
