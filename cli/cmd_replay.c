/*
 * cli/cmd_replay.c — `gmsim replay DB [--trace NAME|GLOB] --policy P[,P...]
 * [--param P.KEY=VALUE]... [--capacity SIZE] [--granularity SIZE] [--check]
 * [--json [--timeline]] [--save] [--defrag every=N|at=MARK]`.
 *
 * Parses the policies and their parameters (defaults, then each --param in
 * command-line order), hands them to one gm_replay (one pass over the trace
 * feeds every policy) and prints one table row, or one JSON run, per
 * policy.  Every argument error — an unknown policy, a --param for a policy
 * not selected, bad --param syntax, a value the policy refuses — is a usage
 * error (exit 2); a trace that cannot be read or replayed is exit 1.  An
 * OOM is a result, not an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/start.h"
#include "gmsim/sweep.h"

static const char replay_usage[] =
    "usage: gmsim replay DB [--trace NAME] --policy P[,P...] [--param P.KEY=VALUE]...\n"
    "                    [--capacity SIZE|--device NAME] [--reserve SIZE]\n"
    "                    [--granularity SIZE] [--start warm|cold] [--check]\n"
    "                    [--json [--timeline]] [--save] [--defrag every=N|at=MARK]\n"
    "                    [--device-profile FILE] [--on gpu[:N] [--touch] [--force]]\n"
    "                    [--threads N]\n"
    "\n"
    "Replay a stored trace through simulated allocator policies, all in one\n"
    "pass, and print their peak memory and fragmentation (docs/metrics.md).\n"
    "\n"
    "options:\n"
    "  -t, --trace NAME        the trace: its name, or a glob matching only it\n"
    "                          (may be left out when DB holds one)\n"
    "  -p, --policy P[,P...]   the policies to run ('all' for every one; see\n"
    "      --policies P[,P...] 'gmsim policies'); may be repeated\n"
    "  -P, --param P.KEY=VALUE set parameter KEY of policy P; may be repeated\n"
    "      --capacity SIZE     device capacity (e.g. 80GiB; default unlimited):\n"
    "                          requests beyond it count as OOMs\n"
    "      --device NAME       the capacity of a GPU preset ('gmsim devices'),\n"
    "                          e.g. a100-80gb or a100-80gb:1g.10gb\n"
    "      --reserve SIZE      held outside the allocator (the CUDA context;\n"
    "                          default: the preset's, 0 with --capacity): the\n"
    "                          policies get the capacity less this, and each\n"
    "                          run's margin is printed\n"
    "      --start warm|cold   policies that can start from the trace's recorded\n"
    "                          layout (caching) start from it (warm, the default)\n"
    "                          or from an empty allocator (cold); with parameters\n"
    "                          given, replay also shows both beside the recorded\n"
    "                          figure and warns when they cannot act\n"
    "      --granularity SIZE  device allocation granularity, a power of two\n"
    "                          (default 512)\n"
    "      --check             check every policy's invariants after every\n"
    "                          event (slow)\n"
    "      --json              print JSON instead of a table (docs/formats.md)\n"
    "      --timeline          with --json: add each run's memory timeline (about\n"
    "                          2,000 points of requested/allocated/reserved)\n"
    "      --save              keep each run (parameters, device, metrics and\n"
    "                          timeline) in DB's runs and timelines tables; a\n"
    "                          run saved before (same trace, policy, parameters,\n"
    "                          device and gmsim version) is kept, not doubled\n"
    "      --defrag every=N|at=MARK\n"
    "                          compact every run after every N events, or at\n"
    "                          each MARK named MARK: its live allocations are\n"
    "                          re-placed, largest first, into a fresh state of\n"
    "                          its policy; reports bytes moved and reserved\n"
    "                          bytes before and after\n"
    "      --device-profile FILE  model device time with a measured cost profile\n"
    "                          ('gmsim calibrate')\n"
    "      --on gpu[:N]        also replay for real on a GPU (one policy): native\n"
    "                          and async issue every request, other policies their\n"
    "                          device mallocs and frees; measured figures are\n"
    "                          printed beside the simulated ones\n"
    "      --touch             with --on: write every new allocation\n"
    "      --force             with --on: start even if the trace's expected peak\n"
    "                          exceeds the GPU's free memory\n"
    GM__CLI_THREADS_HELP
    "  -h, --help              show this help\n"
    "\n"
    "Sizes take KiB/MiB/GiB/TiB suffixes.\n";

typedef struct replay_args {
    const gm_policy_ops_t **ops; /* selected policies, in order, no repeats */
    size_t nops;
    const char **params;         /* the --param texts, in order */
    size_t nparams;
    const char *start;           /* --start: "recorded" or "empty", NULL: each policy's own */
    const gm_cost_profile_t *profile; /* --device-profile, NULL: none */
} replay_args_t;

static int replay_select(replay_args_t *a, const gm_policy_ops_t *ops)
{
    for (size_t i = 0; i < a->nops; i++)
        if (a->ops[i] == ops)
            return 0;
    a->ops[a->nops++] = ops;
    return 0;
}

/* "all, native, buddy, …" for messages. */
static void replay_known(char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "all");
    for (size_t i = 0; i < gm_policy_count() && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, ", %s", gm_policy_at(i)->name);
}

/* Add the policies of one --policy value ("a,b" or "all"). */
static int replay_add_policies(replay_args_t *a, const char *text)
{
    if (a->ops == NULL && (a->ops = calloc(gm_policy_count() + 1, sizeof *a->ops)) == NULL)
        return gm__cli_error("out of memory");
    char *copy = strdup(text), *save = NULL;
    if (copy == NULL)
        return gm__cli_error("out of memory");
    int rc = 0;
    int any = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        any = 1;
        if (strcmp(tok, "all") == 0) {
            for (size_t i = 0; i < gm_policy_count(); i++)
                replay_select(a, gm_policy_at(i));
            continue;
        }
        const gm_policy_ops_t *ops = gm_policy_find(tok);
        if (ops == NULL) {
            char known[256], msg[GM_ERROR_MSG_MAX];
            replay_known(known, sizeof known);
            snprintf(msg, sizeof msg, "unknown policy '%s' (known: %s; see 'gmsim policies')",
                     tok, known);
            rc = gm__cli_usage_error(replay_usage, "%s",
                                     gm__cli_suggest_policy(tok, msg, sizeof msg));
        } else {
            replay_select(a, ops);
        }
    }
    if (!any && rc == 0)
        rc = gm__cli_usage_error(replay_usage, "invalid value for --policy: no policy named");
    free(copy);
    return rc;
}

/* Set key of set to the size v (v 0: not measured, left alone). */
static int replay_profile_param(gm_params_t *set, const char *key, uint64_t v)
{
    if (v == 0)
        return 0;
    char text[32];
    gm_error_t err = {0};
    gm_format_param_size(v, text, sizeof text);
    if (gm_params_set(set, key, text, &err) != 0)
        return gm__cli_usage_error(replay_usage, "--device-profile: %s", err.msg);
    return 0;
}

/* Apply --start, then the granularity a --device-profile measured (native's
 * packing chunk, the async pool's chunk and spacing), then every --param,
 * to the selected policies' parameter sets (an explicit --param wins over
 * both). */
static int replay_apply_params(const replay_args_t *a, gm_params_t *sets)
{
    for (size_t k = 0; a->start && k < a->nops; k++) {
        gm_error_t err = {0};
        if (gm_policy_has_start(a->ops[k]) && gm_params_set(&sets[k], "start", a->start, &err))
            return gm__cli_usage_error(replay_usage, "%s", err.msg);
    }
    const gm_device_granularity_t *g =
        a->profile && a->profile->has_granularity ? &a->profile->gran : NULL;
    for (size_t k = 0; g && k < a->nops; k++) {
        int rc = 0;
        if (strcmp(a->ops[k]->name, "native") == 0 && g->malloc_chunk > g->malloc_align)
            rc = replay_profile_param(&sets[k], "chunk", g->malloc_chunk);
        else if (strcmp(a->ops[k]->name, "async") == 0 && g->pool_chunk) {
            rc = replay_profile_param(&sets[k], "granularity", g->pool_chunk);
            if (rc == 0 && g->pool_align <= g->pool_chunk)
                rc = replay_profile_param(&sets[k], "align", g->pool_align);
        }
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < a->nparams; i++) {
        const char *text = a->params[i];
        const char *dot = strchr(text, '.'), *eq = strchr(text, '=');
        if (dot == NULL || eq == NULL || dot > eq || dot == text || eq == dot + 1)
            return gm__cli_usage_error(replay_usage,
                                       "invalid --param '%s' (expected POLICY.KEY=VALUE)", text);
        char policy[128], key[128];
        size_t np = (size_t)(dot - text), nk = (size_t)(eq - dot - 1);
        if (np >= sizeof policy || nk >= sizeof key)
            return gm__cli_usage_error(replay_usage, "invalid --param '%s' (name too long)",
                                       text);
        memcpy(policy, text, np);
        policy[np] = '\0';
        memcpy(key, dot + 1, nk);
        key[nk] = '\0';
        const gm_policy_ops_t *ops = gm_policy_find(policy);
        if (ops == NULL) {
            char msg[GM_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "unknown policy '%s' in --param '%s' (see 'gmsim policies')",
                     policy, text);
            return gm__cli_usage_error(replay_usage, "%s",
                                       gm__cli_suggest_policy(policy, msg, sizeof msg));
        }
        size_t k = 0;
        while (k < a->nops && a->ops[k] != ops)
            k++;
        if (k == a->nops)
            return gm__cli_usage_error(replay_usage,
                                       "--param '%s' is for policy '%s', which --policy does "
                                       "not select",
                                       text, policy);
        gm_error_t err = {0};
        if (gm_params_set(&sets[k], key, eq + 1, &err) != 0)
            return gm__cli_usage_error(replay_usage, "%s", err.msg);
    }
    return 0;
}

/* Run i's label (gm_config_label: the policy and the settings that
 * differ from its defaults), as compare and report name it. */
static void replay_label(gm_replay_t *r, size_t i, char *buf, size_t len)
{
    const gm_params_t *p = gm_replay_params(r, i);
    char *json = gm_params_json(p);
    if (json == NULL) {
        snprintf(buf, len, "%s", p->ops->name);
        return;
    }
    gm_config_label(p->ops->name, json, buf, len);
    free(json);
}

static void replay_table(const char *name, gm_replay_t *r, const gm_device_config_t *dev,
                         int cfg_oom)
{
    printf("trace '%s': %" PRIu64 " events, load %s (peak requested: the floor for every "
           "policy)",
           gm__cli_s(name), gm_replay_events(r), gm__cli_size(gm_replay_load(r)));
    const gm__cli_device_t *d = gm__cli_device();
    if (dev->capacity && d->given && d->reserve)
        printf(", capacity %s (%s%s%s less %s outside the allocator)", gm__cli_size(dev->capacity),
               d->preset ? d->preset->name : "", d->preset ? ": " : "", gm__cli_size(d->total),
               gm__cli_size(d->reserve));
    else if (dev->capacity && cfg_oom)
        gm__cli_oom_capacity_note(dev->capacity);
    else if (dev->capacity)
        printf(", capacity %s", gm__cli_size(dev->capacity));
    printf("\n\n");

    /* policy, start, then the metrics of replay's table (GM_METRICS) */
    gm__cli_table_t t;
    size_t cols[GM__CLI_METRIC_COLS], ncols = gm__cli_metric_table(&t, 0, cols);
    size_t n = gm_replay_count(r);
    char(*labels)[160] = calloc(n ? n : 1, sizeof *labels);
    const char **peers = calloc(n ? n : 1, sizeof *peers);
    for (size_t i = 0; labels && peers && i < n; i++) {
        replay_label(r, i, labels[i], sizeof labels[i]);
        peers[i] = labels[i];
    }
    for (size_t i = 0; i < n; i++) {
        const gm_metrics_t *m = gm_replay_metrics(r, i);
        char cut[GM_LABEL_MAX * 4];
        if (labels && peers)
            gm_label_cut(labels[i], peers, n, GM_LABEL_MAX, "...", cut, sizeof cut);
        else
            snprintf(cut, sizeof cut, "%s", gm_replay_params(r, i)->ops->name);
        gm__cli_table_cell(&t, "%s", cut);
        gm__cli_table_cell(&t, "%s", gm__cli_start_name(gm_replay_started_warm(r, i, NULL)));
        for (size_t c = 0; c < ncols; c++) {
            char cell[64];
            gm__cli_table_cell(&t, "%s", gm_metric_text(m, cols[c], cell, sizeof cell));
        }
    }
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
    for (size_t i = 0; d->given && i < n; i++) {
        char margin[256];
        if (gm_replay_metrics(r, i)->ooms) /* its peak is the capacity's: no margin */
            snprintf(margin, sizeof margin, "does not fit: it ran out of memory (below)");
        else
            gm__cli_margin(gm_replay_metrics(r, i)->peak_reserved, margin, sizeof margin);
        printf("'%s' %s\n", labels ? labels[i] : gm_replay_params(r, i)->ops->name, margin);
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t unfit;
        gm_replay_started_warm(r, i, &unfit);
        if (unfit)
            gm__cli_start_unfit(labels ? labels[i] : gm_replay_params(r, i)->ops->name, unfit,
                                dev->capacity);
    }
    for (size_t i = 0; cfg_oom && i < n; i++) {
        uint64_t failed, asked = gm_replay_recorded_ooms(r, i, &failed);
        gm__cli_oom_asked(labels ? labels[i] : gm_replay_params(r, i)->ops->name, asked, failed);
    }
    for (size_t i = 0; i < n; i++)
        gm__cli_oom_count(labels ? labels[i] : gm_replay_params(r, i)->ops->name,
                          gm_replay_metrics(r, i));
    /* A label cut to fit the table is given whole below it. */
    for (size_t i = 0; labels && peers && i < n; i++) {
        char cut[GM_LABEL_MAX * 4];
        gm_label_cut(labels[i], peers, n, GM_LABEL_MAX, "...", cut, sizeof cut);
        if (strcmp(cut, labels[i]) != 0)
            printf("'%s' is %s\n", cut, labels[i]);
    }
    free(labels);
    free(peers);
}

/* A planner's plan (offline): how good it is known to be, one line per run
 * that has one (docs/metrics.md, "plan"). */
static void replay_plan_lines(gm_replay_t *r)
{
    for (size_t i = 0; i < gm_replay_count(r); i++) {
        gm_policy_t *p = gm_replay_policy(r, i);
        gm_plan_info_t pi;
        if (p == NULL || gm_policy_plan(p, &pi) != 0)
            continue;
        gm__cli_plan_line(p->ops->name, &pi);
    }
}

/* The plan of run i as a JSON object, when its policy plans. */
static void replay_json_plan(gm_json_t *j, gm_replay_t *r, size_t i)
{
    gm_policy_t *p = gm_replay_policy(r, i);
    gm_plan_info_t pi;
    if (p == NULL || gm_policy_plan(p, &pi) != 0)
        return;
    gm_json_key(j, "plan");
    gm_plan_write_json(j, &pi);
}

/* The compactions of every run, after the main table (--defrag). */
static void replay_defrag_table(gm_replay_t *r)
{
    printf("\ndefragmentation (reserved before/after: summed over the compactions)\n\n");
    gm__cli_table_t t;
    gm__cli_table_head(&t, "lrrrrrrrr", "policy", "compactions", "aborted", "moved", "bytes moved",
                       "reserved before", "reserved after", "largest cut", "peak if copied", NULL);
    for (size_t i = 0; i < gm_replay_count(r); i++) {
        const gm_defrag_stats_t *d = gm_replay_defrag(r, i);
        gm__cli_table_cell(&t, "%s", gm_replay_params(r, i)->ops->name);
        gm__cli_table_cell(&t, "%" PRIu64, d->compactions);
        gm__cli_table_cell(&t, "%" PRIu64, d->aborted);
        gm__cli_table_cell(&t, "%" PRIu64, d->blocks_moved);
        gm__cli_table_cell(&t, "%s", gm__cli_size(d->bytes_moved));
        gm__cli_table_cell(&t, "%s", gm__cli_size(d->reserved_before));
        gm__cli_table_cell(&t, "%s", gm__cli_size(d->reserved_after));
        gm__cli_table_cell(&t, "%s", gm__cli_size(d->max_reclaimed));
        gm__cli_table_cell(&t, "%s", gm__cli_size(d->copy_peak_reserved));
    }
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
}

static void replay_json_defrag(gm_json_t *j, const gm_defrag_stats_t *d)
{
    gm_json_begin_object(j);
#define REPLAY_DEFRAG(name) gm_json_kv_u64(j, #name, d->name);
    REPLAY_DEFRAG(compactions)
    REPLAY_DEFRAG(aborted)
    REPLAY_DEFRAG(blocks_moved)
    REPLAY_DEFRAG(bytes_moved)
    REPLAY_DEFRAG(reserved_before)
    REPLAY_DEFRAG(reserved_after)
    REPLAY_DEFRAG(max_reclaimed)
    REPLAY_DEFRAG(copy_peak_reserved)
#undef REPLAY_DEFRAG
    gm_json_end_object(j);
}

/* One run's timeline: the columns once, then a compact row per point. */
static void replay_json_timeline(gm_json_t *j, const gm_replay_t *r, size_t i)
{
    size_t n;
    const gm_timeline_point_t *tl = gm_replay_timeline(r, i, &n);
    gm_json_key(j, "timeline");
    gm_json_begin_object(j);
    gm_json_key(j, "columns");
    gm_json_raw(j, "[\"event\", \"ts_ns\", \"requested\", \"allocated\", \"reserved\"]");
    gm_json_key(j, "points");
    gm_json_begin_array(j);
    for (size_t k = 0; k < n; k++) {
        char row[128];
        snprintf(row, sizeof row, "[%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "]",
                 tl[k].event, tl[k].ts_ns, tl[k].requested, tl[k].allocated, tl[k].reserved);
        gm_json_raw(j, row);
    }
    gm_json_end_array(j);
    gm_json_end_object(j);
}

/* What replay adds under its table, per run: warm and cold beside the
 * recorded figure (a policy that starts from the recorded layout, given
 * parameters, on a trace with a layout), and the first OOM explained. */
typedef struct replay_advice_run {
    int start;
    char given[512]; /* the run's --param texts */
    gm_start_compare_t starts;
    int oom;
    gm_oom_report_t oom_report;
    uint64_t fits_with; /* an OOM run: its peak reserved on an unlimited
                           device, started as it was (0: not known) */
} replay_advice_run_t;

typedef struct replay_advice {
    replay_advice_run_t *runs;
    size_t n;
} replay_advice_t;

static void replay_advice_release(replay_advice_t *adv)
{
    for (size_t i = 0; i < adv->n; i++)
        if (adv->runs[i].oom)
            gm_oom_report_release(&adv->runs[i].oom_report);
    free(adv->runs);
    adv->runs = NULL;
    adv->n = 0;
}

/* Fill adv for every run of r (trace `name` of s).  GM_CLI_* status: a
 * store or replay error is an error. */
static int replay_advice(const replay_args_t *a, const gm_replay_config_t *cfg, gm_store_t *s,
                         const char *name, gm_replay_t *r, replay_advice_t *adv)
{
    size_t n = gm_replay_count(r);
    adv->runs = calloc(n ? n : 1, sizeof *adv->runs);
    if (adv->runs == NULL)
        return gm__cli_error("out of memory");
    adv->n = n;
    gm_replay_config_t c = *cfg;
    c.progress = NULL;
    for (size_t i = 0; i < n; i++) {
        const gm_params_t *p = gm_replay_params(r, i);
        replay_advice_run_t *ar = &adv->runs[i];
        gm_error_t err = {0};
        int start_bit = -1;
        for (size_t k = 0; k < p->ops->nparams; k++)
            if (strcmp(p->ops->params[k].name, "start") == 0)
                start_bit = (int)k;
        uint64_t given = p->set & ~(start_bit >= 0 ? UINT64_C(1) << start_bit : 0);
        if (gm_policy_has_start(p->ops) && given != 0) {
            size_t len = strlen(p->ops->name), used = 0;
            for (size_t k = 0; k < a->nparams; k++) {
                const char *t = a->params[k];
                if (strncmp(t, p->ops->name, len) != 0 || t[len] != '.' ||
                    strncmp(t + len + 1, "start=", 6) == 0)
                    continue;
                used += (size_t)snprintf(ar->given + used, used < sizeof ar->given
                                                               ? sizeof ar->given - used : 0,
                                         "%s%s", used ? ", " : "", t);
                if (used >= sizeof ar->given)
                    used = sizeof ar->given - 1;
            }
            gm__cli_status("replaying '%s' warm and cold...", name);
            int rc = gm_start_compare(s, name, p, &c, &ar->starts, &err);
            gm__cli_status_clear();
            if (rc == 0)
                ar->start = 1;
            else if (rc != GM_ENOTFOUND)
                return gm__cli_error("%s", err.msg);
        }
        if (gm_replay_metrics(r, i)->ooms) {
            gm__cli_status("explaining the first out-of-memory of '%s'...", p->ops->name);
            int rc = gm_oom_explain(s, name, p, &c, &ar->oom_report, &err);
            gm__cli_status_clear();
            if (rc)
                return gm__cli_error("%s", err.msg);
            ar->oom = 1;
            gm__cli_status("replaying '%s' on an unlimited device...", p->ops->name);
            rc = gm__cli_unlimited_peak(s, name, p, gm_replay_started_warm(r, i, NULL), &c,
                                        &ar->fits_with, &err);
            gm__cli_status_clear();
            if (rc)
                return gm__cli_error("%s", err.msg);
        }
    }
    return GM_CLI_OK;
}

static void replay_json_starts(gm_json_t *j, const gm_start_compare_t *c)
{
    static const char *const verdicts[] = {"acts", "inert_warm", "inert"};
    gm_json_key(j, "starts");
    gm_json_begin_object(j);
    gm__cli_json_nonzero(j, "recorded", c->recorded);
    gm_json_kv_u64(j, "layout_reserved", c->layout_reserved);
    const gm_metrics_t *rows[4] = {&c->warm_default, &c->warm, &c->cold_default, &c->cold};
    static const char *const keys[4] = {"warm_default", "warm", "cold_default", "cold"};
    for (size_t i = 0; i < 4; i++) {
        gm_json_key(j, keys[i]);
        gm_metrics_write_json(j, rows[i]);
    }
    gm_json_kv_str(j, "verdict", verdicts[c->verdict]);
    gm_json_end_object(j);
}

static void replay_json(const char *name, gm_replay_t *r, const gm_device_config_t *dev,
                        int cfg_oom, int timeline, const int64_t *run_ids,
                        const gm_gpu_measured_t *measured, const replay_advice_run_t *adv)
{
    gm_json_t j;
    gm_json_init(&j, stdout, 1);
    gm_json_begin_object(&j);
    gm_json_kv_str(&j, "trace", name);
    gm_json_kv_u64(&j, "events", gm_replay_events(r));
    gm_json_kv_u64(&j, "load", gm_replay_load(r));
    gm_json_key(&j, "device");
    gm_device_write_json(&j, dev);
    if (cfg_oom) /* the capacity is the recorded OOM's */
        gm_json_kv_str(&j, "capacity_from", "recorded_oom");
    const gm__cli_device_t *d = gm__cli_device();
    if (d->given) { /* the device's total and what is outside the allocator */
        gm_json_kv_u64(&j, "device_total", d->total);
        gm_json_kv_u64(&j, "reserve", d->reserve);
    }
    gm_json_key(&j, "runs");
    gm_json_begin_array(&j);
    for (size_t i = 0; i < gm_replay_count(r); i++) {
        const gm_params_t *p = gm_replay_params(r, i);
        gm_json_begin_object(&j);
        gm_json_kv_str(&j, "policy", p->ops->name);
        if (run_ids)
            gm_json_kv_i64(&j, "run_id", run_ids[i]);
        gm_json_key(&j, "params");
        gm_params_write_json(&j, p);
        uint64_t unfit;
        gm_json_kv_str(&j, "start", gm__cli_start_name(gm_replay_started_warm(r, i, &unfit)));
        if (unfit) /* the recorded layout's bytes, above the capacity */
            gm_json_kv_u64(&j, "layout_unfit", unfit);
        gm_json_key(&j, "metrics");
        gm_metrics_write_json(&j, gm_replay_metrics(r, i));
        if (cfg_oom) {
            uint64_t failed, asked = gm_replay_recorded_ooms(r, i, &failed);
            gm__cli_oom_asked_json(&j, asked, failed);
        }
        if (d->given) { /* total − reserve − peak reserved; negative: short */
            gm_json_key(&j, "fits"); /* no OOM: the margin below means what it says */
            gm_json_bool(&j, gm_replay_metrics(r, i)->ooms == 0);
            gm_json_kv_i64(&j, "margin", (int64_t)(d->total - d->reserve) -
                                             (int64_t)gm_replay_metrics(r, i)->peak_reserved);
        }
        replay_json_plan(&j, r, i);
        if (measured)
            gm__cli_gpu_json(&j, measured, gm_replay_metrics(r, i));
        if (gm_replay_defrag_enabled(r)) {
            gm_json_key(&j, "defrag");
            replay_json_defrag(&j, gm_replay_defrag(r, i));
        }
        if (adv && adv[i].start)
            replay_json_starts(&j, &adv[i].starts);
        if (adv && adv[i].oom)
            gm__cli_oom_json(&j, &adv[i].oom_report);
        if (adv && adv[i].fits_with)
            gm_json_kv_u64(&j, "fits_with", adv[i].fits_with);
        if (timeline)
            replay_json_timeline(&j, r, i);
        gm_json_end_object(&j);
    }
    gm_json_end_array(&j);
    gm_json_end_object(&j);
    gm_json_finish(&j);
}

/* Save every run of r, with its timeline, into the store at path (reopened
 * for writing); run_ids[i] gets run i's id, *kept counts the runs whose key
 * the store held already (those are kept as they were).  GM_CLI_* status. */
static int replay_save(const char *path, const char *name, gm_replay_t *r,
                       const gm_device_config_t *dev, int64_t *run_ids, size_t *kept)
{
    *kept = 0;
    gm_store_t *s;
    gm_error_t err = {0};
    int rc = gm__cli_open_store(path, GM_STORE_WRITE, &s);
    if (rc)
        return rc;
    gm_trace_info_t info;
    if (gm_store_find(s, name, &info, &err) != 0) {
        gm_store_close(s);
        return gm__cli_error("%s", err.msg);
    }
    char *device = gm_device_json(dev);
    for (size_t i = 0; rc == GM_CLI_OK && i < gm_replay_count(r); i++) {
        const gm_params_t *p = gm_replay_params(r, i);
        char *params = gm_params_json(p);
        gm_policy_t *pol = gm_replay_policy(r, i);
        gm_plan_info_t pi;
        int planned = pol != NULL && gm_policy_plan(pol, &pi) == 0;
        uint64_t unfit;
        int warm = gm_replay_started_warm(r, i, &unfit);
        char *metrics = gm_run_result_json(gm_replay_metrics(r, i), planned ? &pi : NULL, warm,
                                           unfit);
        int found = 0;
        gm_run_record_t run = {.trace = name, .trace_digest = info.digest,
                               .policy = p->ops->name, .params = params, .device = device,
                               .metrics = metrics, .found = &found};
        run.timeline = gm_replay_timeline(r, i, &run.npoints);
        if (params == NULL || metrics == NULL || device == NULL)
            rc = gm__cli_error("out of memory");
        else if (gm_store_save_run(s, &run, &run_ids[i], &err) != 0)
            rc = gm__cli_error("%s", err.msg);
        else
            *kept += found != 0;
        free(params);
        free(metrics);
    }
    free(device);
    gm_trace_info_release(&info);
    gm_store_close(s);
    return rc;
}

/* Replay trace `name` on the GPU with the one selected policy: *out gets
 * the simulation of the same run, *m what the GPU measured.  GM_CLI_*. */
static int replay_on_gpu(const replay_args_t *a, const gm_replay_config_t *cfg, gm_store_t *s,
                         const char *name, const gm_gpu_options_t *opt, gm_replay_t **out,
                         gm_gpu_measured_t *m)
{
    gm_params_t set;
    gm_error_t err = {0};
    if (gm_params_init(&set, a->ops[0], &err) != 0)
        return gm__cli_error("%s", err.msg);
    int rc = replay_apply_params(a, &set);
    if (rc == GM_CLI_OK) {
        gm__cli_status("replaying '%s' on gpu:%d...", name, opt->device);
        if (gm_gpu_replay(s, name, &set, cfg, opt, out, m, &err) != 0)
            rc = gm__cli_error("%s", err.msg);
        gm__cli_status_clear();
    }
    gm_params_release(&set);
    return rc;
}

/* --defrag every=N (N ≥ 1) or at=MARK into cfg; GM_CLI_* status. */
/* --defrag every=N|at=MARK into the gm_replay_config_t at `to`. */
static int replay_defrag_arg(void *to, const char *usage, const gm__cli_opt_t *row,
                             const char *text)
{
    gm_replay_config_t *cfg = to;
    (void)row;
    if (strncmp(text, "every=", 6) == 0) {
        const char *num = text + 6;
        char *end;
        errno = 0;
        unsigned long long n = strtoull(num, &end, 10);
        if (num[0] >= '0' && num[0] <= '9' && *end == '\0' && errno == 0 && n > 0) {
            cfg->defrag_every = n;
            cfg->defrag_at = NULL;
            return GM_CLI_OK;
        }
    } else if (strncmp(text, "at=", 3) == 0 && text[3] != '\0') {
        cfg->defrag_at = text + 3;
        cfg->defrag_every = 0;
        return GM_CLI_OK;
    }
    return gm__cli_usage_error(usage,
                               "invalid value for --defrag: '%s' (expected every=N with N >= 1, "
                               "or at=MARK)",
                               text);
}

/* Whether trace `name`'s recorded OOM fixes cfg's capacity (set then:
 * gm_replay_config_at_oom), as no --capacity or --device was given. */
static int replay_at_oom(gm_store_t *s, const char *name, gm_replay_config_t *cfg)
{
    gm_trace_info_t info;
    gm_error_t err = {0};
    if (gm_store_find(s, name, &info, &err) != 0)
        return 0; /* the replay says what is wrong with it */
    int at = gm_replay_config_at_oom(cfg, info.attrs);
    gm_trace_info_release(&info);
    return at;
}

/* Create the replay with every selected policy; GM_CLI_* status. */
static int replay_setup(const replay_args_t *a, const gm_replay_config_t *cfg, gm_replay_t **out)
{
    gm_params_t *sets = calloc(a->nops, sizeof *sets);
    if (sets == NULL)
        return gm__cli_error("out of memory");
    gm_error_t err = {0};
    size_t ready = 0;
    int rc = GM_CLI_OK;
    for (; ready < a->nops; ready++) {
        if (gm_params_init(&sets[ready], a->ops[ready], &err) != 0) {
            rc = gm__cli_error("%s", err.msg);
            break;
        }
    }
    if (rc == GM_CLI_OK)
        rc = replay_apply_params(a, sets);
    *out = NULL;
    if (rc == GM_CLI_OK && gm_replay_create(cfg, out, &err) != 0)
        rc = gm__cli_error("%s", err.msg);
    for (size_t i = 0; rc == GM_CLI_OK && i < a->nops; i++)
        if (gm_replay_add(*out, &sets[i], &err) != 0)
            /* GM_EINVAL: a value the policy refuses (checked at create). */
            rc = err.code == GM_EINVAL ? gm__cli_usage_error(replay_usage, "%s", err.msg)
                                       : gm__cli_error("%s", err.msg);
    for (size_t i = 0; i < ready; i++)
        gm_params_release(&sets[i]);
    free(sets);
    if (rc != GM_CLI_OK && *out != NULL) {
        gm_replay_destroy(*out);
        *out = NULL;
    }
    return rc;
}

int gm__cmd_replay(int argc, char **argv)
{
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.threads = gm__cli_cores();
    const char *trace = NULL;
    int json = 0, timeline = 0, save = 0, check = 0, on_gpu, rc = GM_CLI_OK;
    size_t kept = 0;
    gm_gpu_options_t gpu = {.device = -1}; /* --on gpu[:N] sets it */
    gm_gpu_measured_t measured;
    const char *profile_path = NULL;
    gm_cost_profile_t *profile = NULL;
    int64_t *run_ids = NULL;
    gm_replay_t *r = NULL;
    gm_store_t *s = NULL;
    replay_advice_t adv = {0};
    char *name = NULL;
    gm_error_t err = {0};
    replay_args_t a = {.ops = NULL};
    gm__cli_devopts_t dev = {.capacity = &cfg.device.capacity,
                             .granularity = &cfg.device.granularity,
                             .threads = &cfg.threads,
                             .start = &a.start,
                             .once = 1};
    gm__cli_list_t policies = {0}, params = {0};
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("trace", 't', GM__CLI_STR, &trace),
        GM__CLI_OPT("policy", 'p', GM__CLI_LIST, &policies),
        GM__CLI_OPT("policies", 'p', GM__CLI_LIST, &policies),
        GM__CLI_OPT("param", 'P', GM__CLI_LIST, &params),
        GM__CLI_DEVICE_OPTS(&dev),
        GM__CLI_RUN_OPTS(&dev),
        GM__CLI_OPT("check", 0, GM__CLI_FLAG, &check),
        GM__CLI_OPT("json", 0, GM__CLI_FLAG, &json),
        GM__CLI_OPT("timeline", 0, GM__CLI_FLAG, &timeline),
        GM__CLI_OPT("save", 0, GM__CLI_FLAG, &save),
        GM__CLI_OPT("defrag", 0, GM__CLI_CALL, &cfg, .fn = replay_defrag_arg, .value = 1),
        GM__CLI_OPT("on", 0, GM__CLI_CALL, &gpu.device, .fn = gm__cli_on_fn, .value = 1),
        GM__CLI_OPT("touch", 0, GM__CLI_FLAG, &gpu.touch),
        GM__CLI_OPT("force", 0, GM__CLI_FLAG, &gpu.force),
        GM__CLI_OPT("device-profile", 0, GM__CLI_STR, &profile_path),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, replay_usage, argc, argv, &rc))
        goto out;
    a.params = params.v;
    a.nparams = params.n;
    on_gpu = gpu.device >= 0;
    if (!on_gpu)
        gpu.device = 0;
    if (check)
        cfg.check_level = 2;
    if (rc == 0)
        rc = gm__cli_device_usable(replay_usage, &cfg.device.capacity);
    if (rc)
        goto out;
    if (optind >= argc) {
        rc = gm__cli_usage_error(replay_usage, "missing the store to read (DB)");
        goto out;
    }
    if (argc - optind > 1) {
        rc = gm__cli_usage_error(replay_usage, "too many arguments: '%s'", argv[optind + 1]);
        goto out;
    }
    if (timeline && !json) {
        rc = gm__cli_usage_error(replay_usage, "--timeline goes with --json");
        goto out;
    }
    if (policies.n == 0) {
        rc = gm__cli_usage_error(replay_usage,
                                 "missing --policy (see 'gmsim policies', or use --policy all)");
        goto out;
    }
    for (size_t i = 0; i < policies.n && rc == GM_CLI_OK; i++)
        rc = replay_add_policies(&a, policies.v[i]);
    if (rc)
        goto out;
    if ((gpu.touch || gpu.force) && !on_gpu) {
        rc = gm__cli_usage_error(replay_usage, "--touch and --force go with --on gpu");
        goto out;
    }
    if (on_gpu && (cfg.defrag_every || cfg.defrag_at)) {
        /* a compaction holds two device states at once: the real device
         * would see both under the same addresses */
        rc = gm__cli_usage_error(replay_usage, "--defrag does not go with --on gpu");
        goto out;
    }
    if (on_gpu && a.nops != 1) {
        rc = gm__cli_usage_error(replay_usage, "--on gpu replays one policy at a time (%zu given)",
                                 a.nops);
        goto out;
    }
    if (profile_path != NULL) {
        if (gm_cost_profile_load(profile_path, &profile, &err) != 0) {
            rc = gm__cli_error("%s", err.msg);
            goto out;
        }
        cfg.device.cost.profile = profile;
        a.profile = profile;
        /* the measured cudaMalloc spacing is the device's rounding, unless
         * --granularity says otherwise */
        if (profile->has_granularity && profile->gran.malloc_align && !dev.granularity_given)
            cfg.device.granularity = profile->gran.malloc_align;
    }

    /* Arguments first (usage errors win over file errors), then the store. */
    char label[256] = "replaying"; /* the progress bar's, filled in below */
    cfg.progress = gm__cli_progress;
    cfg.progress_ctx = label;
    if (on_gpu) {
        if ((rc = gm__cli_open_store(argv[optind], GM_STORE_READONLY, &s)) ||
            (rc = gm__cli_pick_trace(s, replay_usage, trace, &name)) ||
            (rc = replay_on_gpu(&a, &cfg, s, name, &gpu, &r, &measured)))
            goto out;
    } else if ((rc = replay_setup(&a, &cfg, &r)) ||
               (rc = gm__cli_open_store(argv[optind], GM_STORE_READONLY, &s)) ||
               (rc = gm__cli_pick_trace(s, replay_usage, trace, &name))) {
        goto out;
    } else if (!gm__cli_device()->given && replay_at_oom(s, name, &cfg)) {
        /* the capacity the recorded OOM fixes: the runs are set up again
         * on a device of that size, which asks for the failed requests */
        gm_replay_destroy(r);
        r = NULL;
        if ((rc = replay_setup(&a, &cfg, &r)))
            goto out;
    }
    snprintf(label, sizeof label, "replaying '%s' through %zu polic%s", name, a.nops,
             a.nops == 1 ? "y" : "ies");
    gm__cli_status("%s...", label);
    if (!on_gpu && gm_replay_trace(r, s, name, &err) != 0) {
        gm__cli_status_clear();
        rc = gm__cli_error("%s", err.msg);
        goto out;
    }
    gm__cli_status_clear();
    if (!on_gpu && (rc = replay_advice(&a, &cfg, s, name, r, &adv)) != GM_CLI_OK)
        goto out;
    if (save) {
        gm_store_close(s); /* reopened for writing */
        s = NULL;
        run_ids = calloc(gm_replay_count(r), sizeof *run_ids);
        if (run_ids == NULL)
            rc = gm__cli_error("out of memory");
        else
            rc = replay_save(argv[optind], name, r, &cfg.device, run_ids, &kept);
        if (rc)
            goto out;
    }
    if (json) {
        replay_json(name, r, &cfg.device, cfg.recorded_ooms, timeline, run_ids,
                    on_gpu ? &measured : NULL, adv.runs);
    } else {
        replay_table(name, r, &cfg.device, cfg.recorded_ooms);
        replay_plan_lines(r);
        if (gm_replay_defrag_enabled(r))
            replay_defrag_table(r);
        for (size_t i = 0; adv.runs && i < gm_replay_count(r); i++) {
            if (adv.runs[i].oom)
                gm__cli_oom_print(&adv.runs[i].oom_report);
            if (adv.runs[i].fits_with)
                gm__cli_fits_with_print(adv.runs[i].fits_with, gm_replay_started_warm(r, i, NULL));
            if (adv.runs[i].start)
                gm__cli_start_print(gm_replay_params(r, i)->ops->name, adv.runs[i].given,
                                    &adv.runs[i].starts);
        }
        if (on_gpu) {
            printf("\n");
            gm__cli_gpu_table(&measured, gm_replay_metrics(r, 0), gm_replay_load(r),
                              a.ops[0]->name);
        }
        size_t n = gm_replay_count(r);
        if (save && n == 1 && kept)
            printf("the run was saved before in '%s' (table runs, id %" PRId64 "): kept it\n",
                   gm__cli_s(argv[optind]), run_ids[0]);
        else if (save && n == 1)
            printf("saved the run in '%s' (table runs, id %" PRId64 ")\n", gm__cli_s(argv[optind]),
                   run_ids[0]);
        else if (save && kept == n)
            printf("the %zu runs were saved before in '%s' (table runs): kept them\n", n,
                   gm__cli_s(argv[optind]));
        else if (save && kept)
            printf("saved %zu run%s in '%s' (table runs); %zu saved before: kept\n", n - kept,
                   n - kept == 1 ? "" : "s", gm__cli_s(argv[optind]), kept);
        else if (save)
            printf("saved %zu runs in '%s' (table runs, ids %" PRId64 " to %" PRId64 ")\n", n,
                   gm__cli_s(argv[optind]), run_ids[0], run_ids[n - 1]);
    }
out:
    replay_advice_release(&adv);
    gm_cost_profile_free(profile);
    free(run_ids);
    free(name);
    if (s)
        gm_store_close(s);
    if (r)
        gm_replay_destroy(r);
    free(a.ops);
    free(params.v);
    free(policies.v);
    return rc;
}
