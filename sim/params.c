/*
 * sim/params.c — policy parameter sets: parse values of each type, resolve
 * defaults then "KEY=VALUE" settings, and print values as JSON.
 *
 * Parsing is strict: the whole text must be one value of the type, so that
 * a typo is an error and not a silently different run.  Values are
 * canonical: two spellings of one setting parse to one value ("none" and 0
 * for a size whose 0 means no limit), so the resolved values — a run's key
 * (gm_params_json) — are the same for the same configuration.  Range rules that
 * depend on the policy (a power of two, arena ≥ min_block) are checked by the
 * policy's create, which has all values at once.
 *
 * Messages: "unknown parameter 'buddy.foo' (buddy takes: min_block, arena,
 * release)" and "invalid value 'x' for buddy.min_block: <why>".
 */
#include "gmsim/policy.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/jsonfmt.h"
#include "base/text.h"

/* Index of text among "a|b|c" choices (case-insensitive), or -1. */
static int params_choice(const char *choices, const char *text)
{
    size_t n = strlen(text);
    int idx = 0;
    for (const char *c = choices; c != NULL; idx++) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && n > 0 && strncasecmp(c, text, n) == 0)
            return idx;
        c = bar ? bar + 1 : NULL;
    }
    return -1;
}

static int params_bool(const char *t)
{
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(t, yes[i]) == 0)
            return 1;
        if (strcasecmp(t, no[i]) == 0)
            return 0;
    }
    return -1;
}

/*
 * Parse text as spec's type.  `policy` (may be NULL) prefixes the key in
 * messages.  GM_PARAM_STRING values point at text (not copied).
 */
static int params_parse(const char *policy, const gm_param_spec_t *spec, const char *text,
                        gm_param_value_t *out, gm_error_t *err)
{
    const char *why = NULL;
    char whybuf[256];
    gm_param_value_t v;
    memset(&v, 0, sizeof v);
    if (text == NULL)
        text = "";

    switch (spec->type) {
    case GM_PARAM_SIZE:
        /* Where 0 means no limit the words for it are 0 (spec->choices), so
         * that one configuration has one value and one run key; elsewhere
         * "none" (or "unlimited") is the largest size there is. */
        if (spec->choices != NULL && params_choice(spec->choices, text) >= 0)
            v.size = 0;
        else if (strcasecmp(text, "none") == 0 || strcasecmp(text, "unlimited") == 0)
            v.size = UINT64_MAX;
        else if (gm_parse_size(text, &v.size, NULL) != 0)
            why = "expected a size in bytes such as 512, 64KiB or 1.5GiB, or none";
        break;
    case GM_PARAM_INT: {
        char *end;
        errno = 0;
        long long x = strtoll(text, &end, 10);
        if (end == text || *end != '\0' || isspace((unsigned char)text[0]))
            why = "expected an integer";
        else if (errno == ERANGE)
            why = "out of range for a 64-bit integer";
        v.i = x;
        break;
    }
    case GM_PARAM_DOUBLE: {
        char *end;
        errno = 0;
        double x = strtod(text, &end);
        if (end == text || *end != '\0' || isspace((unsigned char)text[0]))
            why = "expected a number";
        else if (!isfinite(x) || errno == ERANGE)
            why = "expected a finite number";
        v.d = x;
        break;
    }
    case GM_PARAM_BOOL:
        v.b = params_bool(text);
        if (v.b < 0)
            why = "expected true/false, 1/0, yes/no or on/off";
        break;
    case GM_PARAM_ENUM:
        v.e = params_choice(spec->choices ? spec->choices : "", text);
        if (v.e < 0) {
            snprintf(whybuf, sizeof whybuf, "expected one of %s",
                     spec->choices ? spec->choices : "(no choices)");
            why = whybuf;
        }
        break;
    case GM_PARAM_STRING:
        v.s = text;
        break;
    default:
        why = "parameter of unknown type";
        break;
    }
    if (why != NULL)
        return gm_error_set(err, GM_EINVAL, "invalid value '%s' for %s%s%s: %s", text,
                            policy ? policy : "", policy ? "." : "", spec->name, why);
    *out = v;
    return 0;
}

int gm_param_parse(const gm_param_spec_t *spec, const char *text, gm_param_value_t *out,
                   gm_error_t *err)
{
    return params_parse(NULL, spec, text, out, err);
}

/* Store v as parameter i, owning a copy of a string value. */
static int params_store(gm_params_t *p, size_t i, gm_param_value_t v, gm_error_t *err)
{
    if (p->ops->params[i].type == GM_PARAM_STRING) {
        char *copy = strdup(v.s ? v.s : "");
        if (copy == NULL)
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        free(p->strings[i]);
        p->strings[i] = copy;
        v.s = copy;
    }
    p->values[i] = v;
    return 0;
}

/* On failure *p is left released (safe to release again). */
int gm_params_init(gm_params_t *p, const gm_policy_ops_t *ops, gm_error_t *err)
{
    memset(p, 0, sizeof *p);
    if (ops == NULL)
        return gm_error_set(err, GM_EINVAL, "no policy given");
    size_t n = ops->nparams ? ops->nparams : 1;
    p->ops = ops;
    p->values = calloc(n, sizeof *p->values);
    p->strings = calloc(n, sizeof *p->strings);
    if (p->values == NULL || p->strings == NULL) {
        gm_params_release(p);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < ops->nparams; i++) {
        gm_param_value_t v;
        int rc = params_parse(ops->name, &ops->params[i], ops->params[i].def, &v, err);
        if (rc == 0)
            rc = params_store(p, i, v, err);
        if (rc != 0) {
            gm_error_prefix(err, "bad default in policy '%s'", ops->name);
            gm_params_release(p);
            return rc;
        }
    }
    return 0;
}

/* "buddy.min_block" and "min_block" name the same key of buddy. */
int gm_params_set(gm_params_t *p, const char *key, const char *value, gm_error_t *err)
{
    const gm_policy_ops_t *ops = p->ops;
    if (ops == NULL)
        return gm_error_set(err, GM_ESTATE, "parameter set not initialized");
    if (key == NULL)
        key = "";
    size_t nl = strlen(ops->name);
    const char *k = key;
    if (strncmp(k, ops->name, nl) == 0 && k[nl] == '.')
        k += nl + 1;
    for (size_t i = 0; i < ops->nparams; i++) {
        if (strcmp(ops->params[i].name, k) != 0)
            continue;
        gm_param_value_t v;
        int rc = params_parse(ops->name, &ops->params[i], value, &v, err);
        if (rc == 0)
            rc = params_store(p, i, v, err);
        if (rc == 0 && i < 64)
            p->set |= UINT64_C(1) << i;
        return rc;
    }

    char list[GM_ERROR_MSG_MAX / 2];
    size_t used = 0;
    list[0] = '\0';
    for (size_t i = 0; i < ops->nparams && used < sizeof list; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                         ops->params[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (ops->nparams == 0)
        return gm_error_set(err, GM_EINVAL, "unknown parameter '%s.%s' (%s takes no parameters)",
                            ops->name, k, ops->name);
    gm__suggest_t s;
    gm__suggest_init(&s, k);
    for (size_t i = 0; i < ops->nparams; i++)
        gm__suggest_add(&s, ops->params[i].name);
    char msg[GM_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "unknown parameter '%s.%s' (%s takes: %s)", ops->name, k, ops->name,
             list);
    return gm_error_set(err, GM_EINVAL, "%s", gm__suggest_append(&s, msg, sizeof msg));
}

void gm_params_release(gm_params_t *p)
{
    if (p == NULL)
        return;
    if (p->strings != NULL && p->ops != NULL)
        for (size_t i = 0; i < p->ops->nparams; i++)
            free(p->strings[i]);
    free(p->strings);
    free(p->values);
    memset(p, 0, sizeof *p);
}

/* text into buf if it fits whole, else null (or "" when len < 5): a number
 * cut short would be valid JSON but a different value. */
static void params_json_put(char *buf, size_t len, const char *text)
{
    if (strlen(text) >= len)
        text = len > strlen("null") ? "null" : "";
    memcpy(buf, text, strlen(text) + 1);
}

/*
 * Sizes and integers as numbers, doubles in the shortest form that reads
 * back exactly (null when not finite), bools as true/false, an enum as its
 * choice's name in quotes, a string quoted and escaped (gm__json_escape_buf:
 * invalid UTF-8 becomes \ufffd).
 *
 * buf always holds valid JSON when len >= 5, however long the value: a
 * string or enum name that does not fit is shortened (whole characters, the
 * closing quote kept); any other value that does not fit is written as null.
 * With len < 5 a value that does not fit leaves buf the empty C string (a
 * string is still shortened when len is 3 or 4).
 */
void gm_param_json(const gm_param_spec_t *spec, gm_param_value_t v, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return;
    char num[GM__JSON_DOUBLE_MAX]; /* also holds any 64-bit integer */
    switch (spec->type) {
    case GM_PARAM_SIZE:
        snprintf(num, sizeof num, "%" PRIu64, v.size);
        params_json_put(buf, len, num);
        break;
    case GM_PARAM_INT:
        snprintf(num, sizeof num, "%" PRId64, v.i);
        params_json_put(buf, len, num);
        break;
    case GM_PARAM_DOUBLE:
        gm__json_format_double(num, sizeof num, v.d);
        params_json_put(buf, len, num);
        break;
    case GM_PARAM_BOOL:
        params_json_put(buf, len, v.b ? "true" : "false");
        break;
    case GM_PARAM_ENUM: {
        char name[128];
        gm__text_field(v.e >= 0 ? spec->choices : NULL, '|', (size_t)v.e, name, sizeof name);
        gm__json_escape_buf(buf, len, name);
        break;
    }
    case GM_PARAM_STRING:
        if (v.s == NULL)
            params_json_put(buf, len, "null");
        else
            gm__json_escape_buf(buf, len, v.s);
        break;
    default:
        params_json_put(buf, len, "null");
        break;
    }
}

int gm_param_invalid(gm_error_t *err, const gm_policy_ops_t *ops, const char *key, uint64_t v,
                     const char *why)
{
    return gm_error_set(err, GM_EINVAL, "invalid value '%" PRIu64 "' for %s.%s: %s", v, ops->name,
                        key, why);
}
