/*
 * replay/compare.c — one trace through many configurations in one pass, and
 * what compare, sweep and report share: configurations from --param value
 * lists, their labels, and the canonical JSON texts of the runs table
 * (API in gmsim/sweep.h).
 *
 * Canonical JSON: compact (no spaces), members in a fixed order — a
 * policy's parameters in its spec order, the device as capacity then
 * granularity, the metrics in GM_METRICS order (replay/metrics.c) — with
 * numbers as the library's JSON writer prints them.  Equal runs therefore have equal
 * texts, which is what a run's key compares (store/runs.c).  `replay
 * --save` writes the same texts.
 *
 * Labels (gm_config_label) name a configuration by the parameters that
 * differ from its policy's defaults, sizes through gm_format_param_size;
 * gm_label_cut shortens one for a table column or a chart, dropping first
 * what the labels beside it share.  gm_configs_with_defaults puts each
 * policy's defaults into a sweep's configurations.
 *
 * Reading JSON back (parameters, plans; the metrics in replay/metrics.c)
 * uses the scanner over one object's top-level members in base/jsonscan.c.
 */
#include "gmsim/sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/advice.h"
#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "base/jsonfmt.h"
#include "base/text.h"
#include "replay/metrics.h"

/* ---- canonical JSON -------------------------------------------------------- */

void gm_params_write_json(gm_json_t *j, const gm_params_t *p)
{
    gm_json_begin_object(j);
    for (size_t k = 0; k < p->ops->nparams; k++) {
        char buf[512];
        gm_param_json(&p->ops->params[k], p->values[k], buf, sizeof buf);
        gm_json_key(j, p->ops->params[k].name);
        gm_json_raw(j, buf);
    }
    gm_json_end_object(j);
}

void gm_device_write_json(gm_json_t *j, const gm_device_config_t *dev)
{
    gm_json_begin_object(j);
    gm_json_key(j, "capacity");
    gm_json_u64(j, dev->capacity);
    gm_json_key(j, "granularity");
    gm_json_u64(j, dev->granularity);
    gm_json_end_object(j);
}

void gm_plan_write_json(gm_json_t *j, const gm_plan_info_t *pi)
{
    gm_json_begin_object(j);
    gm_json_key(j, "status");
    gm_json_str(j, gm_plan_status_name(pi->status));
    gm_json_key(j, "peak");
    gm_json_u64(j, pi->peak);
    gm_json_key(j, "lower_bound");
    gm_json_u64(j, pi->lower_bound);
    gm_json_key(j, "gap");
    gm_json_double(j, gm_plan_gap(pi));
    gm_json_key(j, "capacity");
    gm_json_u64(j, pi->capacity);
    gm_json_key(j, "work");
    gm_json_u64(j, pi->work);
    gm_json_end_object(j);
}

typedef struct compare_run_metrics {
    const gm_metrics_t *m;
    const gm_plan_info_t *plan;
    int start;             /* -1: none written; 0 cold, 1 warm */
    uint64_t layout_unfit;
} compare_run_metrics_t;

static void compare_run_metrics_fn(gm_json_t *j, const void *arg)
{
    const compare_run_metrics_t *a = arg;
    gm_json_begin_object(j);
    gm__metrics_write_members(j, a->m);
    if (a->start >= 0) {
        gm_json_key(j, "start");
        gm_json_str(j, a->start ? "warm" : "cold");
    }
    if (a->layout_unfit) {
        gm_json_key(j, "layout_unfit");
        gm_json_u64(j, a->layout_unfit);
    }
    if (a->plan != NULL) {
        gm_json_key(j, "plan");
        gm_plan_write_json(j, a->plan);
    }
    gm_json_end_object(j);
}

static void compare_params_fn(gm_json_t *j, const void *arg) { gm_params_write_json(j, arg); }
static void compare_device_fn(gm_json_t *j, const void *arg) { gm_device_write_json(j, arg); }

char *gm_params_json(const gm_params_t *p) { return gm__json_text(compare_params_fn, p); }
char *gm_device_json(const gm_device_config_t *dev)
{
    return gm__json_text(compare_device_fn, dev);
}
char *gm_run_metrics_json(const gm_metrics_t *m, const gm_plan_info_t *plan)
{
    compare_run_metrics_t a = {m, plan, -1, 0};
    return gm__json_text(compare_run_metrics_fn, &a);
}

char *gm_run_result_json(const gm_metrics_t *m, const gm_plan_info_t *plan, int warm,
                         uint64_t layout_unfit)
{
    compare_run_metrics_t a = {m, plan, warm != 0, layout_unfit};
    return gm__json_text(compare_run_metrics_fn, &a);
}

/* ---- reading JSON (the scanner is base/jsonscan.c) ------------------------ */

static int compare_u64(const char *t, uint64_t *out)
{
    if (*t < '0' || *t > '9')
        return 0;
    char *end;
    *out = strtoull(t, &end, 10);
    return *end == '\0';
}

int gm_plan_parse(const char *metrics_json, gm_plan_info_t *pi)
{
    char obj[1024], buf[64];
    memset(pi, 0, sizeof *pi);
    if (!gm_json_member(metrics_json, "plan", obj, sizeof obj) ||
        !gm_json_member(obj, "status", buf, sizeof buf))
        return 0;
    int status = -1;
    for (int k = GM_PLAN_GREEDY; k <= GM_PLAN_OPTIMAL; k++)
        if (strcmp(buf, gm_plan_status_name(k)) == 0)
            status = k;
    if (status < 0)
        return 0;
    pi->status = status;
    static const char *const keys[] = {"peak", "lower_bound", "capacity", "work"};
    uint64_t *dst[] = {&pi->peak, &pi->lower_bound, &pi->capacity, &pi->work};
    for (size_t k = 0; k < 4; k++)
        if (gm_json_member(obj, keys[k], buf, sizeof buf) && !compare_u64(buf, dst[k]))
            *dst[k] = 0;
    return 1;
}

/* ---- configurations ------------------------------------------------------ */

static void compare_select(const gm_policy_ops_t **list, size_t *n, const gm_policy_ops_t *ops)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i] == ops)
            return;
    list[(*n)++] = ops;
}

int gm_policies_select(const char *text, const gm_policy_ops_t **list, size_t *n,
                       gm_error_t *err)
{
    char *copy = strdup(text), *save = NULL;
    if (copy == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    int rc = 0, any = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        any = 1;
        if (strcmp(tok, "all") == 0) {
            for (size_t i = 0; i < gm_policy_count(); i++)
                compare_select(list, n, gm_policy_at(i));
            continue;
        }
        const gm_policy_ops_t *ops = gm_policy_find(tok);
        if (ops == NULL) {
            char known[256];
            size_t used = (size_t)snprintf(known, sizeof known, "all");
            for (size_t i = 0; i < gm_policy_count() && used < sizeof known; i++)
                used += (size_t)snprintf(known + used, sizeof known - used, ", %s",
                                         gm_policy_at(i)->name);
            char msg[GM_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "unknown policy '%.64s' (known: %s; see 'gmsim policies')",
                     tok, known);
            gm__suggest_t s; /* did you mean (base/text.h) */
            gm__suggest_init(&s, tok);
            for (size_t i = 0; i < gm_policy_count(); i++)
                gm__suggest_add(&s, gm_policy_at(i)->name);
            rc = gm_error_set(err, GM_EINVAL, "%s", gm__suggest_append(&s, msg, sizeof msg));
        } else {
            compare_select(list, n, ops);
        }
    }
    if (!any && rc == 0)
        rc = gm_error_set(err, GM_EINVAL, "no policy named");
    free(copy);
    return rc;
}

void gm_configs_free(gm_params_t *sets, size_t n)
{
    for (size_t i = 0; sets && i < n; i++)
        gm_params_release(&sets[i]);
    free(sets);
}

typedef struct compare_key {
    char key[128];
    char *values; /* the text after '=' (copied) */
    size_t nvalues;
} compare_key_t;

/* Append the configurations of one policy to *out. */
static int compare_expand_policy(const gm_policy_ops_t *ops, const char *const *params,
                                 size_t nparams, gm_params_t **out, size_t *n, size_t *cap,
                                 gm_error_t *err)
{
    compare_key_t keys[64];
    size_t nkeys = 0;
    int rc = 0;
    size_t plen = strlen(ops->name);
    for (size_t i = 0; i < nparams; i++) {
        const char *t = params[i];
        if (strncmp(t, ops->name, plen) != 0 || t[plen] != '.')
            continue;
        const char *k = t + plen + 1, *eq = strchr(k, '=');
        size_t klen = (size_t)(eq - k);
        size_t j = 0;
        while (j < nkeys && !(strlen(keys[j].key) == klen && strncmp(keys[j].key, k, klen) == 0))
            j++;
        if (j == nkeys) {
            if (nkeys == sizeof keys / sizeof keys[0] || klen >= sizeof keys[0].key) {
                rc = gm_error_set(err, GM_EINVAL, "invalid --param '%s' (too many keys)", t);
                break;
            }
            memcpy(keys[j].key, k, klen);
            keys[j].key[klen] = '\0';
            keys[j].values = NULL;
            nkeys++;
        }
        free(keys[j].values);
        keys[j].values = strdup(eq + 1);
        if (keys[j].values == NULL) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
        keys[j].nvalues = 1;
        for (const char *c = keys[j].values; *c; c++)
            keys[j].nvalues += *c == ',';
        /* Each value must parse: an error names this text. */
        gm_params_t probe;
        if ((rc = gm_params_init(&probe, ops, err)))
            break;
        for (size_t v = 0; rc == 0 && v < keys[j].nvalues; v++) {
            char val[256];
            gm__text_field(keys[j].values, ',', v, val, sizeof val);
            rc = gm_params_set(&probe, keys[j].key, val, err);
        }
        gm_params_release(&probe);
        if (rc)
            break;
    }
    size_t combos = 1;
    for (size_t j = 0; rc == 0 && j < nkeys; j++) {
        if (combos > SIZE_MAX / 2 / keys[j].nvalues || combos * keys[j].nvalues > 1000000)
            rc = gm_error_set(err, GM_EINVAL, "too many combinations of %s parameters", ops->name);
        else
            combos *= keys[j].nvalues;
    }
    size_t odo[64] = {0};
    for (size_t c = 0; rc == 0 && c < combos; c++) {
        if (*n == *cap) {
            size_t ncap = *cap ? 2 * *cap : 16;
            gm_params_t *s = realloc(*out, ncap * sizeof *s);
            if (s == NULL) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                break;
            }
            *out = s;
            *cap = ncap;
        }
        gm_params_t *set = &(*out)[*n];
        if ((rc = gm_params_init(set, ops, err)))
            break;
        for (size_t j = 0; rc == 0 && j < nkeys; j++) {
            char val[256];
            gm__text_field(keys[j].values, ',', odo[j], val, sizeof val);
            rc = gm_params_set(set, keys[j].key, val, err);
        }
        if (rc) {
            gm_params_release(set);
            break;
        }
        (*n)++;
        /* Last key varies fastest. */
        for (size_t j = nkeys; j-- > 0;) {
            if (++odo[j] < keys[j].nvalues)
                break;
            odo[j] = 0;
        }
    }
    for (size_t j = 0; j < nkeys; j++)
        free(keys[j].values);
    return rc;
}

int gm_configs_expand(const gm_policy_ops_t *const *policies, size_t npolicies,
                      const char *const *params, size_t nparams, gm_params_t **out, size_t *n,
                      gm_error_t *err)
{
    /* Syntax and selection first, so the message names the text. */
    for (size_t i = 0; i < nparams; i++) {
        const char *t = params[i];
        const char *dot = strchr(t, '.'), *eq = strchr(t, '=');
        if (dot == NULL || eq == NULL || dot > eq || dot == t || eq == dot + 1)
            return gm_error_set(err, GM_EINVAL,
                                "invalid --param '%s' (expected POLICY.KEY=VALUE[,VALUE...])", t);
        size_t np = (size_t)(dot - t);
        size_t k = 0;
        while (k < npolicies &&
               !(strlen(policies[k]->name) == np && strncmp(policies[k]->name, t, np) == 0))
            k++;
        if (k == npolicies)
            return gm_error_set(err, GM_EINVAL,
                                "--param '%s' is for a policy that is not selected (or unknown)",
                                t);
        for (const char *c = eq + 1;; c++) {
            if (*c == '\0' || *c == ',') {
                if (c == eq + 1 || c[-1] == ',')
                    return gm_error_set(err, GM_EINVAL, "invalid --param '%s' (an empty value)",
                                        t);
                if (*c == '\0')
                    break;
            }
        }
    }
    gm_params_t *sets = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < npolicies; i++)
        rc = compare_expand_policy(policies[i], params, nparams, &sets, &count, &cap, err);
    if (rc) {
        gm_configs_free(sets, count);
        return rc;
    }
    *out = sets;
    *n = count;
    return 0;
}

int gm_run_start(const char *policy, const char *params_json, const char *metrics_json,
                 uint64_t *layout_unfit)
{
    char v[64];
    uint64_t u = 0;
    if (layout_unfit)
        *layout_unfit = metrics_json && gm_json_member(metrics_json, "layout_unfit", v, sizeof v) &&
                                compare_u64(v, &u)
                            ? u
                            : 0;
    if (metrics_json && gm_json_member(metrics_json, "start", v, sizeof v))
        return strcmp(v, "warm") == 0;
    const gm_policy_ops_t *ops = gm_policy_find(policy);
    return ops && gm_policy_has_start(ops) && params_json &&
           gm_json_member(params_json, "start", v, sizeof v) && strcmp(v, "recorded") == 0;
}

void gm_config_label(const char *policy, const char *params_json, char *buf, size_t len)
{
    if (len == 0)
        return;
    size_t used = (size_t)snprintf(buf, len, "%s", policy);
    const gm_policy_ops_t *ops = gm_policy_find(policy);
    gm_params_t def;
    if (ops == NULL || gm_params_init(&def, ops, NULL) != 0)
        return;
    for (size_t k = 0; k < ops->nparams && used < len; k++) {
        const gm_param_spec_t *spec = &ops->params[k];
        char want[512], have[512], dtext[512];
        if (!gm_json_member(params_json, spec->name, have, sizeof have))
            continue;
        /* the start is said beside the label (its own column, member or
         * mark), not in it: configurations compare at one start */
        if (strcmp(spec->name, "start") == 0 && gm_policy_has_start(ops))
            continue;
        gm_param_json(spec, def.values[k], dtext, sizeof dtext);
        /* Compare as the member reader gives it (strings unquoted). */
        char wrap[600];
        snprintf(wrap, sizeof wrap, "{\"v\":%s}", dtext);
        if (!gm_json_member(wrap, "v", want, sizeof want))
            want[0] = '\0';
        if (strcmp(want, have) == 0)
            continue;
        char shown[512];
        uint64_t v;
        if (spec->type == GM_PARAM_SIZE && compare_u64(have, &v))
            gm_format_param_size(v, shown, sizeof shown);
        else
            snprintf(shown, sizeof shown, "%s", have);
        used += (size_t)snprintf(buf + used, len - used, " %s=%s", spec->name, shown);
    }
    gm_params_release(&def);
}

int gm_configs_with_defaults(gm_params_t **sets, size_t *n, gm_error_t *err)
{
    size_t count = *n;
    /* Per configuration: its JSON text; a policy lacking its default gets
     * one inserted before its first configuration. */
    char **texts = calloc(count ? count : 1, sizeof *texts);
    unsigned char *insert = calloc(count ? count : 1, 1);
    size_t add = 0;
    int rc = 0;
    if (texts == NULL || insert == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < count; i++)
        if ((texts[i] = gm_params_json(&(*sets)[i])) == NULL) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            goto out;
        }
    for (size_t i = 0; i < count; i++) {
        const gm_policy_ops_t *ops = (*sets)[i].ops;
        size_t first = 0;
        while ((*sets)[first].ops != ops)
            first++;
        if (first != i)
            continue; /* the policy was seen at its first configuration */
        gm_params_t def;
        if ((rc = gm_params_init(&def, ops, err)))
            goto out;
        char *dj = gm_params_json(&def);
        gm_params_release(&def);
        if (dj == NULL) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            goto out;
        }
        int found = 0;
        for (size_t k = i; k < count && !found; k++)
            found = (*sets)[k].ops == ops && strcmp(texts[k], dj) == 0;
        free(dj);
        if (!found) {
            insert[i] = 1;
            add++;
        }
    }
    if (add == 0)
        goto out;
    /* Make the defaults first, so that a failure leaves *sets as it was. */
    gm_params_t *grown = calloc(count + add, sizeof *grown);
    if (grown == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    size_t m = 0;
    for (size_t i = 0; i < count; i++) {
        if (insert[i] && (rc = gm_params_init(&grown[m], (*sets)[i].ops, err))) {
            gm_configs_free(grown, m);
            goto out;
        }
        m += insert[i];
    }
    /* Spread: default before its policy's first configuration. */
    gm_params_t *defs = grown;
    gm_params_t *tmp = malloc(add * sizeof *tmp);
    if (tmp == NULL) {
        gm_configs_free(grown, m);
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(tmp, defs, add * sizeof *tmp);
    m = 0;
    for (size_t i = 0, d = 0; i < count; i++) {
        if (insert[i])
            grown[m++] = tmp[d++];
        grown[m++] = (*sets)[i];
    }
    free(tmp);
    free(*sets);
    *sets = grown;
    *n = m;
out:
    if (texts)
        for (size_t i = 0; i < count; i++)
            free(texts[i]);
    free(texts);
    free(insert);
    return rc;
}

/* Bytes of the UTF-8 text s, counted in characters (continuation bytes
 * skipped), as the width a label takes. */
static size_t compare_width(const char *s, size_t bytes)
{
    size_t w = 0;
    for (size_t i = 0; i < bytes; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

/* Whether text holds word as a whole word (bounded by spaces or ends). */
static int compare_has_word(const char *text, const char *word)
{
    size_t wl = strlen(word);
    for (const char *at = text; (at = strstr(at, word)) != NULL; at++)
        if ((at == text || at[-1] == ' ') && (at[wl] == ' ' || at[wl] == '\0'))
            return 1;
    return 0;
}

#define COMPARE_KEY_MIN 4

/* Render a cut label: the words not dropped, keys cut to keylen[k]
 * characters (then the ellipsis) where shorter than keyfull[k], and one
 * ellipsis at the end for the words dropped (where they were matters less
 * than the room).  Returns the bytes written. */
static size_t compare_cut_render(char *const *words, size_t nw, const unsigned char *drop,
                                 const size_t *keylen, const size_t *keyfull,
                                 const char *ellipsis, char *out, size_t len)
{
    size_t o = 0;
    int gap = 0;
    out[0] = '\0';
    for (size_t k = 0; k < nw && o < len; k++) {
        if (drop[k])
            gap = 1;
        else if (keylen[k] < keyfull[k])
            o += (size_t)snprintf(out + o, len - o, "%s%.*s%s%s", k ? " " : "", (int)keylen[k],
                                  words[k], ellipsis, words[k] + keyfull[k]);
        else
            o += (size_t)snprintf(out + o, len - o, "%s%s", k ? " " : "", words[k]);
    }
    if (gap && o < len)
        o += (size_t)snprintf(out + o, len - o, " %s", ellipsis);
    return o < len ? o : len - 1;
}

void gm_label_cut(const char *label, const char *const *peers, size_t npeers, size_t max,
                  const char *ellipsis, char *buf, size_t len)
{
    if (len == 0)
        return;
    size_t ew = compare_width(ellipsis, strlen(ellipsis));
    if (max < ew + 2)
        max = ew + 2;
    size_t llen = strlen(label);
    char out[1024];
    if (compare_width(label, llen) <= max || llen >= sizeof out) {
        snprintf(buf, len, "%s", label);
        if (llen < sizeof out)
            return;
        snprintf(out, sizeof out, "%s", label);
    } else {
        /* Words: the policy, then "key=value" settings.  A setting that
         * every other label of the same policy with settings has too (the
         * defaults, the bare policy name, stand apart anyway) does not tell this
         * label from them: those are dropped first (one ellipsis at the
         * end stands for every dropped word). */
        char copy[1024];
        memcpy(copy, label, llen + 1);
        char *words[64], *save = NULL;
        size_t nw = 0;
        for (char *w = strtok_r(copy, " ", &save); w && nw < 64; w = strtok_r(NULL, " ", &save))
            words[nw++] = w;
        unsigned char drop[64] = {0};
        size_t plen = nw ? strlen(words[0]) : 0;
        for (size_t k = 1; k < nw; k++) {
            int common = 1, others = 0;
            for (size_t j = 0; j < npeers && common; j++) {
                const char *p = peers[j];
                /* Peers: other labels of the policy with settings (its
                 * defaults, the bare name, stand apart anyway). */
                if (p == NULL || strcmp(p, label) == 0 || strncmp(p, label, plen) != 0 ||
                    p[plen] != ' ')
                    continue;
                others = 1;
                common = compare_has_word(p, words[k]);
            }
            drop[k] = (unsigned char)(others && common);
        }
        /* Then the keys of the settings kept are shortened (the longest
         * first, to no less than COMPARE_KEY_MIN characters and the
         * ellipsis: the values are what tells configurations apart), and
         * then settings are dropped from the left, the last one kept. */
        size_t keylen[64], keyfull[64];
        for (size_t k = 0; k < nw; k++) {
            const char *eq = k ? strchr(words[k], '=') : NULL;
            keyfull[k] = keylen[k] = eq ? (size_t)(eq - words[k]) : 0;
        }
        for (;;) {
            for (size_t k = 0; k < nw; k++)
                keylen[k] = keyfull[k];
            for (;;) {
                size_t o = compare_cut_render(words, nw, drop, keylen, keyfull, ellipsis, out,
                                              sizeof out);
                if (compare_width(out, o) <= max)
                    break;
                size_t pick = 0;
                for (size_t k = 1; k < nw; k++)
                    if (!drop[k] && keylen[k] > COMPARE_KEY_MIN &&
                        (pick == 0 || keylen[k] > keylen[pick]))
                        pick = k;
                if (pick == 0)
                    break;
                keylen[pick]--;
            }
            if (compare_width(out, strlen(out)) <= max)
                break;
            size_t pick = 1;
            while (pick + 1 < nw && drop[pick])
                pick++;
            if (pick + 1 >= nw)
                break;
            drop[pick] = 1;
        }
    }
    /* Still too long (one long word): the start, then the ellipsis. */
    size_t o = strlen(out);
    if (compare_width(out, o) > max) {
        size_t keep = 0, w = 0;
        while (keep < o && w + ew < max) {
            keep++;
            while (keep < o && ((unsigned char)out[keep] & 0xC0) == 0x80)
                keep++;
            w++;
        }
        snprintf(out + keep, sizeof out - keep, "%s", ellipsis);
    }
    snprintf(buf, len, "%s", out);
}

/* ---- compare ------------------------------------------------------------------ */

void gm_compare_trace_release(gm_compare_trace_t *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->nruns; i++) {
        free(t->runs[i].params);
        free(t->runs[i].timeline);
    }
    free(t->runs);
    gm_trace_info_release(&t->info);
    memset(t, 0, sizeof *t);
}

int gm_compare_trace(gm_store_t *s, const char *name, const gm_params_t *sets, size_t nsets,
                     const gm_replay_config_t *cfg, gm_compare_trace_t *out, gm_error_t *err)
{
    gm_compare_trace_t t;
    memset(&t, 0, sizeof t);
    int rc = gm_store_find(s, name, &t.info, err);
    if (rc)
        return rc;
    gm_replay_t *r = NULL;
    t.runs = calloc(nsets ? nsets : 1, sizeof *t.runs);
    if (t.runs == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = gm_replay_create(cfg, &r, err)))
        goto fail;
    for (size_t i = 0; i < nsets; i++)
        if ((rc = gm_replay_add(r, &sets[i], err)))
            goto fail;
    if ((rc = gm_replay_trace(r, s, name, err)))
        goto fail;
    t.seq_len = gm_attr_int(t.info.attrs, GM_ATTR_SEQ_LEN);
    t.load = gm_replay_load(r);
    for (size_t i = 0; i < nsets; i++, t.nruns++) {
        gm_compare_run_t *run = &t.runs[i];
        run->ops = sets[i].ops;
        run->metrics = *gm_replay_metrics(r, i);
        if ((run->params = gm_params_json(gm_replay_params(r, i))) == NULL) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            goto fail;
        }
        gm_config_label(run->ops->name, run->params, run->label, sizeof run->label);
        run->warm = gm_replay_started_warm(r, i, &run->layout_unfit);
        run->oom_asked = gm_replay_recorded_ooms(r, i, &run->oom_failed);
        gm_policy_t *pol = gm_replay_policy(r, i);
        if (pol != NULL && gm_policy_plan(pol, &run->plan) == 0) {
            run->has_plan = 1;
            run->plan.offset = run->plan.size = NULL; /* they go with the policy */
        }
        size_t n;
        const gm_timeline_point_t *tl = gm_replay_timeline(r, i, &n);
        if (n) {
            run->timeline = malloc(n * sizeof *tl);
            if (run->timeline == NULL) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                goto fail;
            }
            memcpy(run->timeline, tl, n * sizeof *tl);
            run->npoints = n;
        }
    }
    gm_replay_destroy(r);
    *out = t;
    return 0;
fail:
    gm_replay_destroy(r);
    gm_compare_trace_release(&t);
    return rc;
}
