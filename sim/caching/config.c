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
    cfg->max_split = CACHING_UNLIMITED;
    cfg->max_nsr = CACHING_LARGE_BUFFER;
}

/* The PYTORCH_CUDA_ALLOC_CONF lexer: tokens split at , : [ ] (each of those
 * a token itself), spaces dropped. */
typedef struct conf_lex {
    char tok[64][48];
    size_t n;
} conf_lex_t;

static int conf_lex(const char *text, conf_lex_t *lx, const char *what, gm_error_t *err)
{
    lx->n = 0;
    char buf[48];
    size_t bl = 0;
    for (const char *p = text;; p++) {
        char ch = *p;
        int sep = ch == ',' || ch == ':' || ch == '[' || ch == ']' || ch == '\0';
        if (sep && bl > 0) {
            if (lx->n == 64)
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': too many items", what, text);
            buf[bl] = '\0';
            memcpy(lx->tok[lx->n++], buf, bl + 1);
            bl = 0;
        }
        if (ch == '\0')
            break;
        if (sep) {
            if (lx->n == 64)
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': too many items", what, text);
            lx->tok[lx->n][0] = ch;
            lx->tok[lx->n][1] = '\0';
            lx->n++;
        } else if (ch != ' ') {
            if (bl + 1 >= sizeof buf)
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': item too long at byte %zu",
                                    what, text, (size_t)(p - text));
            buf[bl++] = ch;
        }
    }
    return 0;
}

static int conf_uint(const char *t, uint64_t *out)
{
    if (!isdigit((unsigned char)t[0]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(t, &end, 10);
    if (errno || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int conf_expect(const conf_lex_t *lx, size_t i, char c)
{
    return i < lx->n && lx->tok[i][0] == c && lx->tok[i][1] == '\0';
}

/*
 * roundup_power2_divisions' value at token i: "N" (every interval) or
 * "[K:N,…,>:N]" with K an interval start in MiB (a power of two): the first
 * entry also fills every interval below it, ">" fills from the last named
 * interval on (as PyTorch does, that interval included).  *i is left on the
 * value's last token.
 */
static int conf_divisions(const conf_lex_t *lx, size_t *i, uint32_t div[CACHING_INTERVALS],
                          const char *what, const char *text, gm_error_t *err)
{
    size_t k = *i;
    uint64_t v;
    if (k >= lx->n)
        return gm_error_set(err, GM_EINVAL, "caching: %s '%s': roundup_power2_divisions needs "
                            "a value", what, text);
    if (!conf_expect(lx, k, '[')) {
        if (conf_uint(lx->tok[k], &v) || (v != 0 && !gm__is_pow2(v)) || v > GM_TORCH_MAX_DIVISIONS)
            return gm_error_set(err, GM_EINVAL, "caching: %s '%s': divisions '%s' must be a "
                                "power of two", what, text, lx->tok[k]);
        for (size_t j = 0; j < CACHING_INTERVALS; j++)
            div[j] = (uint32_t)v;
        *i = k;
        return 0;
    }
    int first = 1;
    size_t last = 0;
    for (k++; k < lx->n && !conf_expect(lx, k, ']'); k++) {
        const char *key = lx->tok[k];
        if (!conf_expect(lx, k + 1, ':') || k + 2 >= lx->n)
            return gm_error_set(err, GM_EINVAL, "caching: %s '%s': expected 'interval:divisions' "
                                "at '%s'", what, text, key);
        k += 2;
        if (conf_uint(lx->tok[k], &v) || (v != 0 && !gm__is_pow2(v)) || v > GM_TORCH_MAX_DIVISIONS)
            return gm_error_set(err, GM_EINVAL, "caching: %s '%s': divisions '%s' must be 0 or a "
                                "power of two", what, text, lx->tok[k]);
        if (strcmp(key, ">") == 0) {
            for (size_t j = last; j < CACHING_INTERVALS; j++)
                div[j] = (uint32_t)v;
        } else {
            uint64_t mb;
            if (conf_uint(key, &mb) || !gm__is_pow2(mb))
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': interval '%s' must be a "
                                    "power of two (MiB)", what, text, key);
            size_t idx = gm__log2_floor(mb);
            if (idx > CACHING_INTERVALS - 1)
                idx = CACHING_INTERVALS - 1;
            if (first) {
                for (size_t j = 0; j < idx; j++)
                    div[j] = (uint32_t)v;
                first = 0;
            }
            div[idx] = (uint32_t)v;
            last = idx;
        }
        if (k + 1 < lx->n && !conf_expect(lx, k + 1, ']')) {
            if (!conf_expect(lx, k + 1, ','))
                return gm_error_set(err, GM_EINVAL, "caching: %s '%s': expected ',' after '%s'",
                                    what, text, lx->tok[k]);
            k++;
        }
    }
    if (k >= lx->n)
        return gm_error_set(err, GM_EINVAL, "caching: %s '%s': missing ']'", what, text);
    *i = k;
    return 0;
}

static int conf_bool(const conf_lex_t *lx, size_t k, int *out, const char *key, const char *text,
                     gm_error_t *err)
{
    if (k < lx->n && strcmp(lx->tok[k], "True") == 0)
        *out = 1;
    else if (k < lx->n && strcmp(lx->tok[k], "False") == 0)
        *out = 0;
    else
        return gm_error_set(err, GM_EINVAL, "caching: conf '%s': %s takes True or False", text,
                            key);
    return 0;
}

/* Apply a PYTORCH_CUDA_ALLOC_CONF string over cfg.  GM_EINVAL naming the
 * string and the offending item; cfg may be partly changed then. */
/* The keys conf_apply takes, for "did you mean" (base/text.h): keep in
 * step with its chain of comparisons. */
static const char *const conf_keys[] = {
    "max_split_size_mb", "max_non_split_rounding_mb", "garbage_collection_threshold",
    "roundup_power2_divisions", "expandable_segments", "base_addr_aligned_kb", "backend",
    "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
    "pinned_use_background_threads", "graph_capture_record_stream_reuse",
    "pinned_num_register_threads", "pinned_reserve_segment_size_mb",
};

/* "caching: conf 'TEXT': unknown option 'KEY'", with the nearest key. */
static int conf_unknown(const char *text, const char *key, gm_error_t *err)
{
    gm__suggest_t s;
    gm__suggest_init(&s, key);
    for (size_t i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++)
        gm__suggest_add(&s, conf_keys[i]);
    char msg[GM_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "caching: conf '%s': unknown option '%s'", text, key);
    return gm_error_set(err, GM_EINVAL, "%s", gm__suggest_append(&s, msg, sizeof msg));
}

static int conf_apply(caching_cfg_t *cfg, const char *text, gm_error_t *err)
{
    conf_lex_t lx;
    int rc = conf_lex(text, &lx, "conf", err);
    if (rc)
        return rc;
    for (size_t i = 0; i < lx.n; i++) {
        const char *key = lx.tok[i];
        if (!conf_expect(&lx, i + 1, ':'))
            return gm_error_set(err, GM_EINVAL, "caching: conf '%s': expected ':' after '%s'",
                                text, key);
        i += 2;
        const char *val = i < lx.n ? lx.tok[i] : "";
        uint64_t v;
        if (strcmp(key, "max_split_size_mb") == 0 ||
            strcmp(key, "max_non_split_rounding_mb") == 0) {
            if (conf_uint(val, &v))
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': %s takes a number of "
                                    "MiB, not '%s'", text, key, val);
            if (v < CACHING_LARGE_BUFFER / MiB)
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': %s must be >= %" PRIu64,
                                    text, key, CACHING_LARGE_BUFFER / MiB);
            if (v > UINT64_MAX / MiB)
                v = UINT64_MAX / MiB;
            if (key[4] == 's')
                cfg->max_split = v * MiB;
            else
                cfg->max_nsr = v * MiB;
        } else if (strcmp(key, "garbage_collection_threshold") == 0) {
            char *end;
            errno = 0;
            double d = strtod(val, &end);
            if (errno || end == val || *end != '\0' || !(d > 0.0 && d < 1.0))
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': "
                                    "garbage_collection_threshold '%s' must be in (0, 1)", text,
                                    val);
            cfg->gc = d;
        } else if (strcmp(key, "roundup_power2_divisions") == 0) {
            rc = conf_divisions(&lx, &i, cfg->div, "conf", text, err);
            if (rc)
                return rc;
        } else if (strcmp(key, "expandable_segments") == 0) {
            rc = conf_bool(&lx, i, &cfg->expandable, key, text, err);
            if (rc)
                return rc;
        } else if (strcmp(key, "base_addr_aligned_kb") == 0) {
            if (conf_uint(val, &v) || v > 16)
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': base_addr_aligned_kb "
                                    "takes 0 to 16, not '%s'", text, val);
            cfg->align = v * KiB;
        } else if (strcmp(key, "backend") == 0) {
            if (strcmp(val, "native") != 0)
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': backend '%s' is not "
                                    "this policy (native only; cudaMallocAsync is the 'async' "
                                    "policy)", text, val);
        } else if (strcmp(key, "release_lock_on_cudamalloc") == 0 ||
                   strcmp(key, "pinned_use_cuda_host_register") == 0 ||
                   strcmp(key, "pinned_use_background_threads") == 0 ||
                   strcmp(key, "graph_capture_record_stream_reuse") == 0) {
            int ignored;
            rc = conf_bool(&lx, i, &ignored, key, text, err);
            if (rc)
                return rc;
        } else if (strcmp(key, "pinned_num_register_threads") == 0 ||
                   strcmp(key, "pinned_reserve_segment_size_mb") == 0) {
            if (conf_uint(val, &v))
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': %s takes a number, not "
                                    "'%s'", text, key, val);
        } else {
            return conf_unknown(text, key, err);
        }
        if (i + 1 < lx.n) {
            if (!conf_expect(&lx, i + 1, ','))
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': expected ',' after '%s'",
                                    text, lx.tok[i]);
            i++;
            if (i + 1 >= lx.n)
                return gm_error_set(err, GM_EINVAL, "caching: conf '%s': trailing ','", text);
        }
    }
    return 0;
}

/* The roundup_power2_divisions parameter: "" (off), "N" or "[…]". */
int caching_divisions_apply(uint32_t div[CACHING_INTERVALS], const char *text, gm_error_t *err)
{
    if (text == NULL || text[0] == '\0') {
        memset(div, 0, CACHING_INTERVALS * sizeof div[0]);
        return 0;
    }
    conf_lex_t lx;
    int rc = conf_lex(text, &lx, "roundup_power2_divisions", err);
    if (rc)
        return rc;
    size_t i = 0;
    uint32_t d[CACHING_INTERVALS] = {0};
    rc = conf_divisions(&lx, &i, d, "roundup_power2_divisions", text, err);
    if (rc)
        return rc;
    if (i + 1 != lx.n)
        return gm_error_set(err, GM_EINVAL, "caching: roundup_power2_divisions '%s': unexpected "
                            "'%s'", text, lx.tok[i + 1]);
    memcpy(div, d, sizeof d);
    return 0;
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

/* The trace's allocator_settings (a snapshot's dict) over cfg. */
static int caching_trace_settings(const gm_jv_t *attrs, caching_cfg_t *cfg, gm_error_t *err)
{
    const gm_jv_t *s = gm_jv_get(attrs, GM_ATTR_ALLOCATOR_SETTINGS);
    if (gm_jv_type(s) != GM_JV_OBJECT) {
        const gm_jv_t *e = gm_jv_get(attrs, "expandable_segments");
        if (gm_jv_type(e) == GM_JV_BOOL)
            cfg->expandable = gm_jv_bool(e);
        return 0;
    }
    const gm_jv_t *v;
    int64_t i64;
    if ((v = gm_jv_get(s, "max_split_size")) != NULL && gm_jv_type(v) == GM_JV_NUMBER) {
        if (gm_jv_i64(v, &i64) == 0)
            cfg->max_split = i64 <= 0 ? CACHING_UNLIMITED : (uint64_t)i64;
        else
            cfg->max_split = CACHING_UNLIMITED; /* SIZE_MAX printed as a large number */
    }
    if ((v = gm_jv_get(s, "max_non_split_rounding_size")) != NULL &&
        gm_jv_i64(v, &i64) == 0 && i64 > 0)
        cfg->max_nsr = (uint64_t)i64;
    if ((v = gm_jv_get(s, "garbage_collection_threshold")) != NULL &&
        gm_jv_type(v) == GM_JV_NUMBER)
        cfg->gc = gm_jv_num(v);
    if ((v = gm_jv_get(s, "expandable_segments")) != NULL && gm_jv_type(v) == GM_JV_BOOL)
        cfg->expandable = gm_jv_bool(v);
    v = gm_jv_get(s, "roundup_power2_divisions");
    if (gm_jv_type(v) == GM_JV_OBJECT) {
        /* {"1": d, "2": d, …, "32768": d}: interval start in MiB → divisions */
        for (size_t k = 0; k < gm_jv_len(v); k++) {
            uint64_t mb, d;
            if (conf_uint(gm_jv_key_at(v, k), &mb) || !gm__is_pow2(mb) ||
                gm_jv_u64(gm_jv_at(v, k), &d) || d > GM_TORCH_MAX_DIVISIONS)
                return gm_error_set(err, GM_EFORMAT, "caching: trace allocator_settings: bad "
                                    "roundup_power2_divisions entry '%s'", gm_jv_key_at(v, k));
            size_t idx = gm__log2_floor(mb);
            if (idx < CACHING_INTERVALS)
                cfg->div[idx] = (uint32_t)d;
        }
    } else if (gm_jv_type(v) == GM_JV_ARRAY) {
        for (size_t k = 0; k < gm_jv_len(v) && k < CACHING_INTERVALS; k++) {
            uint64_t d;
            if (gm_jv_u64(gm_jv_at(v, k), &d) || d > GM_TORCH_MAX_DIVISIONS)
                return gm_error_set(err, GM_EFORMAT, "caching: trace allocator_settings: bad "
                                    "roundup_power2_divisions element %zu", k);
            cfg->div[k] = (uint32_t)d;
        }
    } else if (gm_jv_type(v) == GM_JV_NUMBER) {
        uint64_t d;
        if (gm_jv_u64(v, &d) == 0 && d <= GM_TORCH_MAX_DIVISIONS)
            for (size_t k = 0; k < CACHING_INTERVALS; k++)
                cfg->div[k] = (uint32_t)d;
    }
    return 0;
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
                cfg.align = 16 * KiB;
        }
    }
    if (c->conf != NULL && c->conf[0] != '\0' && (rc = conf_apply(&cfg, c->conf, err)))
        return rc;
    const caching_cfg_t *g = &c->given;
    if (set & (UINT64_C(1) << P_MAX_SPLIT))
        cfg.max_split = g->max_split;
    if (set & (UINT64_C(1) << P_MAX_NSR))
        cfg.max_nsr = g->max_nsr;
    if (set & (UINT64_C(1) << P_DIVISIONS))
        memcpy(cfg.div, g->div, sizeof cfg.div);
    if (set & (UINT64_C(1) << P_GC))
        cfg.gc = g->gc;
    if (set & (UINT64_C(1) << P_FRACTION))
        cfg.fraction = g->fraction;
    if (set & (UINT64_C(1) << P_EXPANDABLE))
        cfg.expandable = g->expandable;
    if (!c->pad_trace)
        cfg.pad = g->pad;
    if (!c->align_trace)
        cfg.align = g->align;
    c->cfg = cfg;
    caching_set_fraction(c);
    return 0;
}
