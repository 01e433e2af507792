/*
 * sim/torch_rules.c — PyTorch's roundup_power2_next_division, the step of
 * round_size taken when divisions are on (the rest of the rules are inline
 * in sim/torch_rules.h, on the caching policy's allocation path), and the
 * decoding of the allocator settings (the PYTORCH_CUDA_ALLOC_CONF string
 * and a snapshot's recorded allocator_settings), shared by the caching
 * policy and the snapshot importer.
 *
 * The division step is a power of two, 2^floor(log2 size) shifted right by
 * floor(log2 d), so the rounding is a mask and an add, exactly PyTorch's
 * arithmetic: a non-power-of-two d behaves as the power of two below it
 * (d = 3 steps by halves, d = 5 by quarters) while the "size > 512·d" test
 * that switches the rule on uses d as given.  Dividing the power of two by
 * d instead would give steps that are not multiples of 512 for such d and
 * blocks the allocator never makes.
 *
 * The settings sit here, below both users (formats/ and sim/caching/ may
 * each use sim/), so that the importer, which rebuilds the starting layout
 * with them, and the policy, which replays from that layout with them,
 * cannot read one snapshot two ways.
 */
#include "sim/torch_rules.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/text.h"

uint64_t gm__torch_next_division(uint64_t size, uint64_t divisions)
{
    uint64_t floor2 = UINT64_C(1) << gm__log2_floor(size);
    if (floor2 == size)
        return size;
    uint64_t step = floor2 >> gm__log2_floor(divisions);
    if (step == 0)
        return floor2 << 1; /* more divisions than bytes: PyTorch's power-of-two ceiling */
    uint64_t lo = size & ~(step - 1);
    return lo == size ? size : lo + step;
}

/* ---- the settings ---------------------------------------------------------------- */

void gm__torch_settings_default(gm__torch_settings_t *s)
{
    memset(s, 0, sizeof *s);
    s->max_split = UINT64_MAX;
    s->max_nsr = GM_TORCH_LARGE_BUFFER;
}

/* ---- the conf string ------------------------------------------------------------- */

/* The lexer: tokens split at , : [ ] (each of those a token itself), spaces
 * dropped, as PyTorch's lexArgs; at most 64 tokens of 47 bytes. */
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
                return gm_error_set(err, GM_EINVAL, "%s '%s': too many items", what, text);
            buf[bl] = '\0';
            memcpy(lx->tok[lx->n++], buf, bl + 1);
            bl = 0;
        }
        if (ch == '\0')
            break;
        if (sep) {
            if (lx->n == 64)
                return gm_error_set(err, GM_EINVAL, "%s '%s': too many items", what, text);
            lx->tok[lx->n][0] = ch;
            lx->tok[lx->n][1] = '\0';
            lx->n++;
        } else if (ch != ' ') {
            if (bl + 1 >= sizeof buf)
                return gm_error_set(err, GM_EINVAL, "%s '%s': item too long at byte %zu", what,
                                    text, (size_t)(p - text));
            buf[bl++] = ch;
        }
    }
    return 0;
}

/* A decimal number, digits only, that fits 64 bits: 0; else -1. */
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

/* A division count: a power of two up to GM_TORCH_MAX_DIVISIONS, or 0 where
 * zero_ok (inside a list: that interval off). */
static int conf_division(const char *t, int zero_ok, uint64_t *v)
{
    return conf_uint(t, v) == 0 && (gm__is_pow2(*v) || (zero_ok && *v == 0)) &&
                   *v <= GM_TORCH_MAX_DIVISIONS
               ? 0
               : -1;
}

/*
 * roundup_power2_divisions' value at token i: "N" (every interval; N a
 * power of two, as PyTorch requires of this form) or "[K:N,…,>:N]" with K
 * an interval start in MiB (a power of two) and N 0 or a power of two: the
 * first entry also fills every interval below it, ">" fills from the last
 * named interval on (as PyTorch does, that interval included).  *i is left
 * on the value's last token.
 */
static int conf_divisions(const conf_lex_t *lx, size_t *i, uint32_t div[GM_TORCH_INTERVALS],
                          const char *what, const char *text, gm_error_t *err)
{
    size_t k = *i;
    uint64_t v;
    if (k >= lx->n)
        return gm_error_set(err, GM_EINVAL, "%s '%s': roundup_power2_divisions needs a value",
                            what, text);
    if (!conf_expect(lx, k, '[')) {
        if (conf_division(lx->tok[k], 0, &v))
            return gm_error_set(err, GM_EINVAL, "%s '%s': divisions '%s' must be a power of "
                                "two up to 2^30", what, text, lx->tok[k]);
        for (size_t j = 0; j < GM_TORCH_INTERVALS; j++)
            div[j] = (uint32_t)v;
        *i = k;
        return 0;
    }
    int first = 1;
    size_t last = 0;
    for (k++; k < lx->n && !conf_expect(lx, k, ']'); k++) {
        const char *key = lx->tok[k];
        if (!conf_expect(lx, k + 1, ':') || k + 2 >= lx->n)
            return gm_error_set(err, GM_EINVAL, "%s '%s': expected 'interval:divisions' at "
                                "'%s'", what, text, key);
        k += 2;
        if (conf_division(lx->tok[k], 1, &v))
            return gm_error_set(err, GM_EINVAL, "%s '%s': divisions '%s' must be 0 or a power "
                                "of two up to 2^30", what, text, lx->tok[k]);
        if (strcmp(key, ">") == 0) {
            for (size_t j = last; j < GM_TORCH_INTERVALS; j++)
                div[j] = (uint32_t)v;
        } else {
            uint64_t mb;
            if (conf_uint(key, &mb) || !gm__is_pow2(mb))
                return gm_error_set(err, GM_EINVAL, "%s '%s': interval '%s' must be a power of "
                                    "two (MiB)", what, text, key);
            size_t idx = gm__log2_floor(mb);
            if (idx > GM_TORCH_INTERVALS - 1)
                idx = GM_TORCH_INTERVALS - 1;
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
                return gm_error_set(err, GM_EINVAL, "%s '%s': expected ',' after '%s'", what,
                                    text, lx->tok[k]);
            k++;
        }
    }
    if (k >= lx->n)
        return gm_error_set(err, GM_EINVAL, "%s '%s': missing ']'", what, text);
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
        return gm_error_set(err, GM_EINVAL, "conf '%s': %s takes True or False", text, key);
    return 0;
}

/* The keys gm__torch_conf_apply takes, for "did you mean" (base/text.h):
 * keep in step with its chain of comparisons. */
static const char *const conf_keys[] = {
    "max_split_size_mb", "max_non_split_rounding_mb", "garbage_collection_threshold",
    "roundup_power2_divisions", "expandable_segments", "base_addr_aligned_kb", "backend",
    "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
    "pinned_use_background_threads", "graph_capture_record_stream_reuse",
    "pinned_num_register_threads", "pinned_reserve_segment_size_mb",
};

/* "conf 'TEXT': unknown option 'KEY'", with the nearest key. */
static int conf_unknown(const char *text, const char *key, gm_error_t *err)
{
    gm__suggest_t s;
    gm__suggest_init(&s, key);
    for (size_t i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++)
        gm__suggest_add(&s, conf_keys[i]);
    char msg[GM_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "conf '%s': unknown option '%s'", text, key);
    return gm_error_set(err, GM_EINVAL, "%s", gm__suggest_append(&s, msg, sizeof msg));
}

int gm__torch_conf_apply(gm__torch_settings_t *s, const char *text, gm_error_t *err)
{
    conf_lex_t lx;
    int rc = conf_lex(text, &lx, "conf", err);
    if (rc)
        return rc;
    for (size_t i = 0; i < lx.n; i++) {
        const char *key = lx.tok[i];
        if (!conf_expect(&lx, i + 1, ':'))
            return gm_error_set(err, GM_EINVAL, "conf '%s': expected ':' after '%s'", text, key);
        i += 2;
        const char *val = i < lx.n ? lx.tok[i] : "";
        uint64_t v;
        if (strcmp(key, "max_split_size_mb") == 0 ||
            strcmp(key, "max_non_split_rounding_mb") == 0) {
            if (conf_uint(val, &v))
                return gm_error_set(err, GM_EINVAL, "conf '%s': %s takes a number of MiB, not "
                                    "'%s'", text, key, val);
            if (v < GM_TORCH_LARGE_BUFFER / GM_TORCH_MIB)
                return gm_error_set(err, GM_EINVAL, "conf '%s': %s must be >= %" PRIu64, text,
                                    key, GM_TORCH_LARGE_BUFFER / GM_TORCH_MIB);
            if (v > UINT64_MAX / GM_TORCH_MIB)
                v = UINT64_MAX / GM_TORCH_MIB;
            if (key[4] == 's')
                s->max_split = v * GM_TORCH_MIB;
            else
                s->max_nsr = v * GM_TORCH_MIB;
        } else if (strcmp(key, "garbage_collection_threshold") == 0) {
            char *end;
            errno = 0;
            double d = strtod(val, &end);
            if (errno || end == val || *end != '\0' || !(d > 0.0 && d < 1.0))
                return gm_error_set(err, GM_EINVAL, "conf '%s': garbage_collection_threshold "
                                    "'%s' must be in (0, 1)", text, val);
            s->gc = d;
        } else if (strcmp(key, "roundup_power2_divisions") == 0) {
            rc = conf_divisions(&lx, &i, s->div, "conf", text, err);
            if (rc)
                return rc;
        } else if (strcmp(key, "expandable_segments") == 0) {
            rc = conf_bool(&lx, i, &s->expandable, key, text, err);
            if (rc)
                return rc;
        } else if (strcmp(key, "base_addr_aligned_kb") == 0) {
            if (conf_uint(val, &v) || v > 16)
                return gm_error_set(err, GM_EINVAL, "conf '%s': base_addr_aligned_kb takes 0 "
                                    "to 16, not '%s'", text, val);
            s->align = v * 1024;
        } else if (strcmp(key, "backend") == 0) {
            if (strcmp(val, "native") != 0)
                return gm_error_set(err, GM_EINVAL, "conf '%s': backend '%s' is not this policy "
                                    "(native only; cudaMallocAsync is the 'async' policy)", text,
                                    val);
        } else if (strcmp(key, "release_lock_on_cudamalloc") == 0 ||
                   strcmp(key, "pinned_use_cuda_host_register") == 0 ||
                   strcmp(key, "pinned_use_background_threads") == 0 ||
                   strcmp(key, "graph_capture_record_stream_reuse") == 0) {
            int ignored;
            rc = conf_bool(&lx, i, &ignored, key, text, err);
            if (rc)
                return rc;
        } else if (strcmp(key, "pinned_num_register_threads") == 0) {
            if (conf_uint(val, &v) || !gm__is_pow2(v) || v > 128)
                return gm_error_set(err, GM_EINVAL, "conf '%s': %s takes a power of two up to "
                                    "128, not '%s'", text, key, val);
        } else if (strcmp(key, "pinned_reserve_segment_size_mb") == 0) {
            if (conf_uint(val, &v) || v == 0)
                return gm_error_set(err, GM_EINVAL, "conf '%s': %s takes a number above 0, not "
                                    "'%s'", text, key, val);
        } else {
            return conf_unknown(text, key, err);
        }
        if (i + 1 < lx.n) {
            if (!conf_expect(&lx, i + 1, ','))
                return gm_error_set(err, GM_EINVAL, "conf '%s': expected ',' after '%s'", text,
                                    lx.tok[i]);
            i++;
            if (i + 1 >= lx.n)
                return gm_error_set(err, GM_EINVAL, "conf '%s': trailing ','", text);
        }
    }
    return 0;
}

int gm__torch_divisions_parse(uint32_t div[GM_TORCH_INTERVALS], const char *text,
                              gm_error_t *err)
{
    if (text == NULL || text[0] == '\0') {
        memset(div, 0, GM_TORCH_INTERVALS * sizeof div[0]);
        return 0;
    }
    conf_lex_t lx;
    int rc = conf_lex(text, &lx, "roundup_power2_divisions", err);
    if (rc)
        return rc;
    size_t i = 0;
    uint32_t d[GM_TORCH_INTERVALS] = {0};
    rc = conf_divisions(&lx, &i, d, "roundup_power2_divisions", text, err);
    if (rc)
        return rc;
    if (i + 1 != lx.n)
        return gm_error_set(err, GM_EINVAL, "roundup_power2_divisions '%s': unexpected '%s'",
                            text, lx.tok[i + 1]);
    memcpy(div, d, sizeof d);
    return 0;
}

/* ---- the recorded settings ----------------------------------------------------------- */

/* A recorded division count: an integer 0 to GM_TORCH_MAX_DIVISIONS. */
static int rec_division(const gm_jv_t *v, uint32_t *out)
{
    uint64_t d;
    if (gm_jv_type(v) != GM_JV_NUMBER || gm_jv_u64(v, &d) || d > GM_TORCH_MAX_DIVISIONS)
        return -1;
    *out = (uint32_t)d;
    return 0;
}

static int rec_divisions(const gm_jv_t *v, uint32_t div[GM_TORCH_INTERVALS], gm_error_t *err)
{
    static const char what[] = "allocator_settings: roundup_power2_divisions";
    uint32_t d[GM_TORCH_INTERVALS];
    memcpy(d, div, sizeof d);
    switch (gm_jv_type(v)) {
    case GM_JV_OBJECT:
        /* {"1": d, "2": d, …, "32768": d}: interval start in MiB -> divisions;
         * a start beyond the last interval names none */
        for (size_t k = 0; k < gm_jv_len(v); k++) {
            const char *key = gm_jv_key_at(v, k);
            uint64_t mb;
            uint32_t n;
            if (conf_uint(key, &mb) || !gm__is_pow2(mb))
                return gm_error_set(err, GM_EFORMAT, "%s: key '%s' is not an interval start "
                                    "(a power of two, in MiB)", what, key);
            if (rec_division(gm_jv_at(v, k), &n))
                return gm_error_set(err, GM_EFORMAT, "%s: '%s' is not a count of divisions "
                                    "(an integer from 0 to 2^30)", what, key);
            if (gm__log2_floor(mb) < GM_TORCH_INTERVALS)
                d[gm__log2_floor(mb)] = n;
        }
        break;
    case GM_JV_ARRAY:
        /* by interval; elements beyond the last interval name none */
        for (size_t k = 0; k < gm_jv_len(v); k++) {
            uint32_t n;
            if (rec_division(gm_jv_at(v, k), &n))
                return gm_error_set(err, GM_EFORMAT, "%s: element %zu is not a count of "
                                    "divisions (an integer from 0 to 2^30)", what, k);
            if (k < GM_TORCH_INTERVALS)
                d[k] = n;
        }
        break;
    case GM_JV_NUMBER: {
        uint32_t n;
        if (rec_division(v, &n))
            return gm_error_set(err, GM_EFORMAT, "%s: not a count of divisions (an integer "
                                "from 0 to 2^30)", what);
        for (size_t k = 0; k < GM_TORCH_INTERVALS; k++)
            d[k] = n;
        break;
    }
    default:
        return gm_error_set(err, GM_EFORMAT, "%s: neither a dict by interval, a list nor a "
                            "number", what);
    }
    memcpy(div, d, sizeof d);
    return 0;
}

int gm__torch_settings_read(const gm_jv_t *dict, gm__torch_settings_t *s, gm_error_t *err)
{
    if (gm_jv_type(dict) != GM_JV_OBJECT)
        return gm_error_set(err, GM_EFORMAT, "allocator_settings: not a dict");
    const gm_jv_t *v;
    int64_t i64;
    if ((v = gm_jv_get(dict, "max_split_size")) != NULL) {
        if (gm_jv_type(v) != GM_JV_NUMBER)
            return gm_error_set(err, GM_EFORMAT, "allocator_settings: max_split_size is not a "
                                "number");
        /* SIZE_MAX (unlimited) is pickled as -1, or printed as a number
         * beyond int64 */
        if (gm_jv_i64(v, &i64) == 0 && i64 > 0)
            s->max_split = (uint64_t)i64;
        else
            s->max_split = UINT64_MAX;
    }
    if ((v = gm_jv_get(dict, "max_non_split_rounding_size")) != NULL) {
        if (gm_jv_type(v) != GM_JV_NUMBER || gm_jv_i64(v, &i64) || i64 < 0)
            return gm_error_set(err, GM_EFORMAT, "allocator_settings: "
                                "max_non_split_rounding_size is not a byte count");
        if (i64 > 0)
            s->max_nsr = (uint64_t)i64;
    }
    if ((v = gm_jv_get(dict, "garbage_collection_threshold")) != NULL) {
        double d = gm_jv_num(v);
        if (gm_jv_type(v) != GM_JV_NUMBER || !(d >= 0.0 && d < 1.0))
            return gm_error_set(err, GM_EFORMAT, "allocator_settings: "
                                "garbage_collection_threshold is not a number in [0, 1)");
        s->gc = d;
    }
    if ((v = gm_jv_get(dict, "expandable_segments")) != NULL) {
        if (gm_jv_type(v) != GM_JV_BOOL)
            return gm_error_set(err, GM_EFORMAT, "allocator_settings: expandable_segments is "
                                "not true or false");
        s->expandable = gm_jv_bool(v);
    }
    if ((v = gm_jv_get(dict, "roundup_power2_divisions")) != NULL)
        return rec_divisions(v, s->div, err);
    return 0;
}
