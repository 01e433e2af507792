/*
 * cli/start.c — warm and cold starts on the command line (cli/start.h).
 *
 * A policy that can start from a trace's recorded layout (`caching`, its
 * `start` parameter) replays warm (from the segments and blocks the
 * allocator held when recording began) or cold (from an empty allocator,
 * as a new job starts).  Every other run is cold.  The start decides what a
 * setting can change (docs/metrics.md, "Warm and cold"), so every row says
 * which it had, and the verbs that compare settings use one for all.
 */
#include "cli/start.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int gm__cli_start_arg(const char *usage, const char *text, const char **out)
{
    static const char *const names[] = {"warm", "recorded", "cold", "empty", NULL};
    size_t i = 0;
    int rc = gm__cli_choice_arg(usage, "--start", text, names,
                                "warm or cold; recorded and empty say the same", &i);
    if (rc == GM_CLI_OK)
        *out = i < 2 ? "recorded" : "empty";
    return rc;
}

void gm__cli_start_apply(gm_params_t *sets, size_t n, const char *value)
{
    for (size_t i = 0; i < n; i++) {
        if (!gm_policy_has_start(sets[i].ops))
            continue;
        size_t k = 0;
        while (k < sets[i].ops->nparams && strcmp(sets[i].ops->params[k].name, "start") != 0)
            k++;
        if (sets[i].set & (UINT64_C(1) << k))
            continue;
        gm_error_t err = {0};
        gm_params_set(&sets[i], "start", value, &err); /* a value of its choices */
    }
}

const char *gm__cli_start_name(int warm) { return warm ? "warm" : "cold"; }

void gm__cli_start_unfit(const char *label, uint64_t layout, uint64_t capacity)
{
    char held[64];
    snprintf(held, sizeof held, "%s", gm__cli_size(layout));
    const gm__cli_device_t *d = gm__cli_device();
    printf("'%s': the recorded layout (%s) does not fit %s%s: replayed from an empty allocator\n",
           label, held, gm__cli_size(capacity),
           d->given && d->reserve ? " (the device less its reserve)" : "");
}

void gm__cli_fits_with_print(uint64_t need, int warm)
{
    const gm__cli_device_t *d = gm__cli_device();
    char alloc[64];
    snprintf(alloc, sizeof alloc, "%s", gm__cli_size(need));
    if (d->given && d->reserve) /* the device holds the reserve too */
        printf("  it fits on a device of %s or more: %s for the allocator (its peak reserved on "
               "an unlimited device, %s) and the reserve of %s\n",
               gm__cli_size(need + d->reserve), alloc, warm ? "warm" : "cold",
               gm__cli_size(d->reserve));
    else
        printf("  it fits on a device of %s or more (its peak reserved on an unlimited device, "
               "%s)\n",
               alloc, warm ? "warm" : "cold");
}

int gm__cli_unlimited_peak(gm_store_t *s, const char *name, const gm_params_t *params, int warm,
                           const gm_replay_config_t *cfg, uint64_t *peak, gm_error_t *err)
{
    gm_replay_config_t c = *cfg;
    c.device.capacity = 0;
    c.progress = NULL;
    c.timeline_points = 0;
    c.device.hooks = NULL;
    c.device.hooks_ctx = NULL;
    gm_params_t p;
    int rc = gm_params_init(&p, params->ops, err);
    if (rc)
        return rc;
    for (size_t k = 0; rc == 0 && k < params->ops->nparams; k++) {
        const gm_param_spec_t *spec = &params->ops->params[k];
        if (spec->type == GM_PARAM_STRING)
            rc = gm_params_set(&p, spec->name, params->values[k].s ? params->values[k].s : "",
                               err);
        else
            p.values[k] = params->values[k];
    }
    if (rc == 0) {
        p.set = params->set;
        if (gm_policy_has_start(p.ops))
            rc = gm_params_set(&p, "start", warm ? "recorded" : "empty", err);
    }
    gm_replay_t *r = NULL;
    if (rc == 0 && (rc = gm_replay_create(&c, &r, err)) == 0 &&
        (rc = gm_replay_add(r, &p, err)) == 0 && (rc = gm_replay_trace(r, s, name, err)) == 0)
        *peak = gm_replay_metrics(r, 0)->peak_reserved;
    gm_replay_destroy(r);
    gm_params_release(&p);
    return rc;
}
