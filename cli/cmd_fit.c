/*
 * cli/cmd_fit.c — `gmsim fit (--capacity SIZE|--device NAME) --policy P[,P...]
 * [--param P.KEY=VALUE]... [--vary batch|seq] [--max N] [model and run
 * options] [--json]`.
 *
 * The offline version of the trial-and-error batch search: for each policy
 * it finds the largest batch (or sequence length) whose synthesized trace
 * replays with no OOM on a device of the given capacity.  Each probe
 * synthesizes the job in memory (one warm step unless --steps is given:
 * weights and optimizer state already allocated, so the step holds both
 * the forward peak and the update peak) and replays it through that one
 * policy (gm_replay_*, with the lifetimes a planner needs).  The search
 * doubles from 1 until a probe fails, then bisects: about 2·log2(answer)
 * probes per policy.  It assumes that a larger batch never needs less
 * memory, which holds for the synthesized traces' requests; an allocator
 * that is not monotone can make the answer a local one.  The first row,
 * "(requested)", is the answer for a device with no allocator overhead:
 * the bound every policy is under.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/scaleopt.h"
#include "cli/start.h"
#include "cli/synthopt.h"
#include "base/vec.h"

static const char fit_usage[] =
    "usage: gmsim fit (--capacity SIZE|--device NAME) [--reserve SIZE] --policy P[,P...]\n"
    "                 [--vary batch|seq] [--max N] --model NAME|--hidden H ... [run options]\n"
    "                 [--json]\n"
    "       gmsim fit --from CAPTURE CAPTURE [CAPTURE...] [--capacity SIZE|--device NAME]\n"
    "                 --policy P[,P...] [--vary batch|seq] [--max N] [--at seq=LIST]\n"
    "                 [--at batch=LIST] [--base N] [--force] [--json]\n"
    "\n"
    "Find, per policy, the largest batch (or sequence length) whose synthesized\n"
    "trace replays without running out of memory, by replaying one warm step\n"
    "per probe (binary search), and print the peak figures at that point.\n"
    "The model and run options are those of 'gmsim synth'.  With --from, the\n"
    "probes are the captured job scaled to each size ('gmsim scale': CAPTURE\n"
    "is DB[:TRACE], --at gives the captures' sizes when their traces lack\n"
    "seq_len / batch attributes) and the search starts at the smallest\n"
    "captured size.\n"
    "\n"
    "options:\n"
    "      --from            the arguments are captures of the job to scale\n"
    "      --at seq=LIST     --from: the captures' sequence lengths, in order\n"
    "      --at batch=LIST   --from: the captures' batch sizes, in order\n"
    "      --base N          --from: the capture (1-based) whose events are\n"
    "                        scaled (default: the largest)\n"
    "      --start warm|cold --from: policies that can start from the capture's\n"
    "                        recorded layout, scaled (caching), start every probe\n"
    "                        from it (warm, the default: a probe whose layout does\n"
    "                        not fit the device does not fit) or from an empty\n"
    "                        allocator (cold); recorded and empty say the same\n"
    "      --force           --from: go on despite a poor alignment or\n"
    "                        contradicting laws\n"
    "      --capacity SIZE   device capacity (e.g. 80GiB), or a device preset; with\n"
    "                        --from, default: the capacity a capture's recorded\n"
    "                        OOM fixes\n"
    "      --device NAME     a device preset ('gmsim devices'), e.g. a100-80gb or\n"
    "                        a100-80gb:3g.40gb\n"
    "      --reserve SIZE    held outside the allocator (the CUDA context; default:\n"
    "                        the preset's, 0 with --capacity): the policies get\n"
    "                        the capacity less this\n"
    "  -p, --policy P[,P...] the policies ('all' for every one); may be repeated;\n"
    "                        --policies is the same\n"
    "  -P, --param P.KEY=VALUE  set parameter KEY of policy P; may be repeated\n"
    "      --vary batch|seq  what to search (default batch; the other is fixed by\n"
    "                        --batch / --seq)\n"
    "      --max N           largest value tried (default 65536 for batch, 1048576\n"
    "                        for seq)\n"
    "      --json            print JSON\n"
    "  -h, --help            show this help\n"
    "\n";

typedef struct fit_events {
    gm_event_t *ev;
    size_t n, cap;
} fit_events_t;

static int fit_sink(void *ctx, const gm_event_t *ev, size_t n, gm_error_t *err)
{
    fit_events_t *b = ctx;
    if (GM_VEC_RESERVE(b->ev, b->cap, b->n + n, 65536))
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    memcpy(b->ev + b->n, ev, n * sizeof *ev);
    b->n += n;
    return 0;
}

typedef struct fit_result {
    const gm_policy_ops_t *ops; /* NULL: the no-overhead bound */
    uint64_t best;              /* largest value with no OOM; 0: none */
    uint64_t first_bad;         /* smallest value that failed; 0: none found */
    gm_metrics_t m;             /* at best */
    uint64_t load;
    unsigned probes;
    int warm;                   /* at best: started from the recorded layout */
} fit_result_t;

typedef struct fit_job {
    gm_synth_config_t cfg;
    const char **params; /* --param texts, checked */
    size_t nparams;
    const char *start;   /* --start: "recorded" or "empty", NULL: the policy's */
    int vary_seq;
    uint64_t capacity;
    fit_events_t buf;
    gm_lifetime_t *life;
    size_t lifecap;
    /* --from: the captures' plan, the in-memory store the probes are
     * written into, and the smallest captured value searched from */
    gm_scale_plan_t *plan;
    gm_store_t *mem;
    uint64_t from_min;
    const gm__cli_captures_t *caps;
    size_t ncaps;
    ssize_t at_oom; /* --from without a capacity: the capture whose recorded OOM gave it, -1 none */
    int warm;       /* the last probe replayed started from a recorded layout */
} fit_job_t;

/* The job's configuration at value v (of the sequence length or the batch). */
static gm_synth_config_t fit_config(const fit_job_t *j, uint64_t v)
{
    gm_synth_config_t c = j->cfg;
    if (j->vary_seq) {
        c.seq_kind = GM_SYNTH_SEQ_FIXED;
        c.seq = v;
    } else {
        c.batch = v;
    }
    return c;
}

/* Synthesize the job at value v into j->buf; 0 or an error code. */
static int fit_synth(fit_job_t *j, uint64_t v, gm_synth_stats_t *st, gm_error_t *err)
{
    gm_synth_config_t c = fit_config(j, v);
    j->buf.n = 0;
    return gm_synth_run(&c, fit_sink, &j->buf, st, err);
}

/* Apply the --param settings meant for p's policy; 0 or GM_EINVAL. */
static int fit_apply_params(const fit_job_t *j, gm_params_t *p, gm_error_t *err)
{
    if (j->start && gm_policy_has_start(p->ops)) {
        int rc = gm_params_set(p, "start", j->start, err); /* a --param wins: set after */
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < j->nparams; i++) {
        const char *t = j->params[i], *dot = strchr(t, '.'), *eq = strchr(t, '=');
        size_t np = (size_t)(dot - t), nk = (size_t)(eq - dot - 1);
        if (np != strlen(p->ops->name) || strncmp(t, p->ops->name, np) != 0)
            continue;
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)nk, dot + 1);
        int rc = gm_params_set(p, key, eq + 1, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* A replay of ops alone, with the job's --param values, on a device of
 * capacity bytes (0: unlimited), into *r.  0 or an error code (*r NULL). */
static int fit_replay_create(const fit_job_t *j, const gm_policy_ops_t *ops, uint64_t capacity,
                             gm_replay_t **r, gm_error_t *err)
{
    gm_replay_config_t rcfg;
    gm_replay_config_default(&rcfg);
    rcfg.device.capacity = capacity;
    rcfg.timeline_points = 0;
    *r = NULL;
    gm_params_t p;
    int rc = gm_params_init(&p, ops, err);
    if (rc)
        return rc;
    if ((rc = fit_apply_params(j, &p, err)) == 0 && (rc = gm_replay_create(&rcfg, r, err)) == 0 &&
        (rc = gm_replay_add(*r, &p, err)) != 0) {
        gm_replay_destroy(*r);
        *r = NULL;
    }
    gm_params_release(&p);
    return rc;
}

/* Replay j->buf through one policy; *ok = no OOM.  0 or an error code. */
static int fit_replay(fit_job_t *j, const gm_policy_ops_t *ops, int *ok, gm_metrics_t *m,
                      uint64_t *load, gm_error_t *err)
{
    gm_replay_t *r;
    int rc = fit_replay_create(j, ops, j->capacity, &r, err);
    if (rc == 0) {
        gm_trace_context_t ctx = {.name = "fit", .attrs = "{\"source\": \"synth\"}",
                                  .events = j->buf.n, .params_set = gm_replay_params(r, 0)->set};
        if (gm_replay_needs_lifetimes(r)) {
            size_t nalloc = 0;
            for (size_t i = 0; i < j->buf.n; i++)
                nalloc += j->buf.ev[i].op == GM_OP_ALLOC;
            if (GM_VEC_RESERVE(j->life, j->lifecap, nalloc, 64))
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            for (size_t i = 0; rc == 0 && i < j->buf.n; i++) {
                const gm_event_t *e = &j->buf.ev[i];
                if (e->op == GM_OP_ALLOC)
                    j->life[e->id] = (gm_lifetime_t){e->size, i, GM_LIFETIME_OPEN, e->ts_ns, 0};
                else if (e->op == GM_OP_FREE) {
                    j->life[e->id].end = i;
                    j->life[e->id].end_ns = e->ts_ns;
                }
            }
            ctx.lifetimes = j->life;
            ctx.nlifetimes = nalloc;
        }
        if (rc == 0)
            rc = gm_replay_prepare(r, &ctx, err);
        for (size_t i = 0; rc == 0 && i < j->buf.n; i += GM_CHUNK_EVENTS) {
            size_t k = j->buf.n - i < GM_CHUNK_EVENTS ? j->buf.n - i : GM_CHUNK_EVENTS;
            rc = gm_replay_feed(r, j->buf.ev + i, k, err);
        }
        if (rc == 0)
            rc = gm_replay_finish(r, err);
        if (rc == 0) {
            *m = *gm_replay_metrics(r, 0);
            *load = gm_replay_load(r);
            *ok = m->ooms == 0;
            j->warm = gm_replay_started_warm(r, 0, NULL);
        }
        gm_replay_destroy(r);
    }
    return rc;
}

/* Replay the scaled probe in j->mem through ops on a device of capacity
 * bytes (0: unlimited); *ok = no OOM.  0 or an error code. */
static int fit_replay_probe(fit_job_t *j, const gm_policy_ops_t *ops, uint64_t capacity, int *ok,
                            gm_metrics_t *m, gm_error_t *err)
{
    gm_replay_t *r;
    int rc = fit_replay_create(j, ops, capacity, &r, err);
    if (rc == 0 && (rc = gm_replay_trace(r, j->mem, "probe", err)) == 0) {
        *m = *gm_replay_metrics(r, 0);
        uint64_t unfit;
        j->warm = gm_replay_started_warm(r, 0, &unfit);
        /* one start for every probe: a warm probe whose scaled layout does
         * not fit the device (replayed cold instead) does not fit */
        *ok = m->ooms == 0 && unfit == 0;
    }
    if (r)
        gm_replay_destroy(r);
    return rc;
}

/* One probe of the captured job scaled to v (--from). */
static int fit_probe_scaled(fit_job_t *j, const gm_policy_ops_t *ops, uint64_t v, int *ok,
                            gm_metrics_t *m, uint64_t *load, gm_error_t *err)
{
    int rc = gm_scale_write(j->plan, j->vary_seq ? v : 0, j->vary_seq ? 0 : v, j->mem, "probe",
                            GM_WRITE_REPLACE, err);
    if (rc)
        return rc;
    gm_trace_info_t info;
    if ((rc = gm_store_find(j->mem, "probe", &info, err)))
        return rc;
    *load = info.load;
    gm_trace_info_release(&info);
    if (ops == NULL) {
        memset(m, 0, sizeof *m);
        m->peak_requested = *load;
        m->first_oom_event = -1;
        *ok = *load <= j->capacity;
        return 0;
    }
    rc = fit_replay_probe(j, ops, j->capacity, ok, m, err);
    if (rc != 0 && rc != GM_ENOMEM) {
        /* A policy that starts from the capture's recorded layout refuses a
         * device too small to hold that layout (an error, not an OOM).  If
         * the same probe replays on an unlimited device, it was the
         * capacity: the value does not fit. */
        gm_error_t again = {0};
        gm_metrics_t mm;
        int okk;
        if (fit_replay_probe(j, ops, 0, &okk, &mm, &again) == 0) {
            gm_error_clear(err);
            memset(m, 0, sizeof *m);
            *ok = 0;
            rc = 0;
        }
    }
    return rc;
}

/* One probe at v for policy ops (NULL: peak requested ≤ capacity). */
static int fit_probe(fit_job_t *j, const gm_policy_ops_t *ops, uint64_t v, int *ok,
                     gm_metrics_t *m, uint64_t *load, gm_error_t *err)
{
    if (j->plan != NULL)
        return fit_probe_scaled(j, ops, v, ok, m, load, err);
    gm_synth_stats_t st;
    gm_synth_config_t probe = j->cfg;
    if (j->vary_seq)
        probe.seq = v;
    else
        probe.batch = v;
    gm_error_t why = {0};
    if (gm_synth_check(&probe, &why) != 0) { /* a tensor past the trace limit: too big */
        *ok = 0;
        return 0;
    }
    if (ops == NULL) {
        gm_synth_config_t c = fit_config(j, v);
        int rc = gm_synth_run(&c, NULL, NULL, &st, err);
        if (rc)
            return rc;
        memset(m, 0, sizeof *m);
        m->peak_requested = st.peak;
        m->first_oom_event = -1;
        *load = st.peak;
        *ok = st.peak <= j->capacity;
        return 0;
    }
    int rc = fit_synth(j, v, &st, err);
    return rc ? rc : fit_replay(j, ops, ok, m, load, err);
}

static int fit_search(fit_job_t *j, fit_result_t *res, uint64_t max, gm_error_t *err)
{
    gm_metrics_t m;
    uint64_t load;
    int ok, rc;
    /* --from starts at the smallest captured value (within --max); when that
     * fails already, the bisection below goes down to 1 (good = 0 stands
     * for "none fits yet"), so "even 1 does not fit" is a probe's answer */
    uint64_t good = 0, bad = 0, v = j->from_min ? j->from_min : 1;
    if (v > max)
        v = max;
    while (v <= max) {
        res->probes++;
        if ((rc = fit_probe(j, res->ops, v, &ok, &m, &load, err)) != 0)
            return rc;
        if (!ok) {
            bad = v;
            break;
        }
        good = v;
        res->m = m;
        res->load = load;
        res->warm = j->warm;
        if (v == max)
            break;
        v = v > max / 2 ? max : 2 * v;
    }
    while (bad && bad - good > 1) {
        uint64_t mid = good + (bad - good) / 2;
        res->probes++;
        if ((rc = fit_probe(j, res->ops, mid, &ok, &m, &load, err)) != 0)
            return rc;
        if (ok) {
            good = mid;
            res->m = m;
            res->load = load;
            res->warm = j->warm;
        } else {
            bad = mid;
        }
    }
    res->best = good;
    res->first_bad = bad;
    return 0;
}

/* --policy P[,P...] into the gm__cli_policies_t at to: each policy once
 * ("all" adds those not given yet; a policy named twice is an error). */
static int fit_policies_arg(void *to, const char *usage, const gm__cli_opt_t *row,
                            const char *text)
{
    gm__cli_policies_t *p = to;
    const gm_policy_ops_t **sel = p->v;
    size_t *n = &p->n;
    (void)row;
    char *copy = strdup(text), *save = NULL;
    if (copy == NULL)
        return gm__cli_error("out of memory");
    int rc = 0, any = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        any = 1;
        for (size_t i = 0; i < gm_policy_count(); i++) {
            const gm_policy_ops_t *ops = gm_policy_at(i);
            if (strcmp(tok, "all") != 0 && strcmp(tok, ops->name) != 0)
                continue;
            size_t k = 0;
            while (k < *n && sel[k] != ops)
                k++;
            if (k == *n)
                sel[(*n)++] = ops;
            else if (strcmp(tok, "all") != 0 && rc == 0)
                rc = gm__cli_usage_error(usage, "policy '%s' given twice", tok);
        }
        if (strcmp(tok, "all") != 0 && gm_policy_find(tok) == NULL) {
            char msg[GM_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "unknown policy '%s' (see 'gmsim policies')", tok);
            rc = gm__cli_usage_error(usage, "%s", gm__cli_suggest_policy(tok, msg, sizeof msg));
        }
    }
    if (!any && rc == 0)
        rc = gm__cli_usage_error(usage, "invalid value for --policy: no policy named");
    free(copy);
    return rc;
}

/* The captures' sizes of --at seq=LIST|batch=LIST (read with --from). */
typedef struct fit_at {
    const char *seq, *batch;
} fit_at_t;

static int fit_at_arg(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg)
{
    fit_at_t *at = to;
    (void)row;
    if (strncmp(arg, "seq=", 4) == 0)
        at->seq = arg + 4;
    else if (strncmp(arg, "batch=", 6) == 0)
        at->batch = arg + 6;
    else
        return gm__cli_usage_error(usage, "invalid value for --at: '%s' (seq=LIST or batch=LIST)",
                                   arg);
    return GM_CLI_OK;
}

/* The run options that decide the memory, as the header's second line:
 * what was judged, so that an answer is not read for another setting. */
static void fit_config_line(const gm_synth_config_t *c)
{
    printf("configuration: %s, %s, zero %d, dp %" PRIu64 ", tp %" PRIu64 ", optimizer %s, recompute "
           "%s, attention %s, offload %s, grad accum %" PRIu64 "\n",
           gm_synth_name(GM_SYNTH_LIST_MODE, c->mode),
           gm_synth_name(GM_SYNTH_LIST_PRECISION, c->precision), c->zero, c->dp, c->tp,
           gm_synth_name(GM_SYNTH_LIST_OPTIMIZER, c->optimizer),
           gm_synth_name(GM_SYNTH_LIST_RECOMPUTE, c->recompute),
           gm_synth_name(GM_SYNTH_LIST_ATTENTION, c->attention),
           gm_synth_name(GM_SYNTH_LIST_OFFLOAD, c->offload), c->grad_accum);
}

static void fit_print(const fit_job_t *j, const fit_result_t *res, size_t n, const char *device,
                      int json)
{
    const gm__cli_device_t *dev = gm__cli_device();
    /* the device: the one given, or the capacity a capture's recorded OOM fixes */
    uint64_t total = dev->given ? dev->total : j->capacity;
    const char *what = j->vary_seq ? "seq" : "batch";
    if (json) {
        gm_json_t js;
        gm_json_init(&js, stdout, 1);
        gm_json_begin_object(&js);
        gm_json_kv_str(&js, "vary", what);
        gm_json_kv_u64(&js, "capacity", total);
        gm_json_kv_u64(&js, "reserve", dev->reserve);
        gm_json_kv_str(&js, "device", device);
        if (j->at_oom >= 0)
            gm_json_kv_str(&js, "capacity_from", "recorded_oom");
        if (j->plan != NULL) {
            const gm_scale_report_t *sr = gm_scale_plan_report(j->plan);
            gm_json_key(&js, "from");
            gm_json_begin_array(&js);
            for (size_t i = 0; i < j->ncaps; i++)
                gm_json_str(&js, gm__cli_captures_label(j->caps, i));
            gm_json_end_array(&js);
            gm_json_kv_str(&js, "base", gm__cli_captures_label(j->caps, sr->base));
        } else {
            gm_json_key(&js, "config");
            gm_synth_config_json(&j->cfg, &js);
        }
        gm_json_key(&js, "results");
        gm_json_begin_array(&js);
        for (size_t i = 0; i < n; i++) {
            const fit_result_t *r = &res[i];
            gm_json_begin_object(&js);
            gm_json_kv_str(&js, "policy", r->ops ? r->ops->name : NULL);
            /* the start of the probe at best; null: the bound, or none fits */
            gm_json_kv_str(&js, "start", r->ops && r->best ? gm__cli_start_name(r->warm) : NULL);
            gm_json_kv_u64(&js, what, r->best);
            gm__cli_json_nonzero(&js, "first_oom_at", r->first_bad);
            gm_json_kv_u64(&js, "peak_requested", r->best ? r->load : 0);
            gm_json_kv_u64(&js, "peak_reserved", r->best ? r->m.peak_reserved : 0);
            gm_json_key(&js, "overhead"); /* and the shares of docs/metrics.md */
            gm_json_double(&js, r->best && r->ops ? r->m.overhead : 0.0);
            gm_json_kv_double(&js, "internal_frag", r->best && r->ops ? r->m.internal_frag : 0.0);
            gm_json_kv_double(&js, "external_frag", r->best && r->ops ? r->m.external_frag : 0.0);
            uint64_t peak = r->ops ? r->m.peak_reserved : r->load;
            gm_json_key(&js, "margin"); /* capacity − reserve − peak (reserved; requested for
                                           the bound); null when nothing fits */
            if (r->best)
                gm_json_i64(&js, (int64_t)j->capacity - (int64_t)peak);
            else
                gm_json_null(&js);
            char margin[256];
            gm_json_kv_bool(&js, "at_edge",
                            r->best && gm__cli_margin_of(total, total - j->capacity, peak, margin,
                                                         sizeof margin));
            gm_json_kv_u64(&js, "probes", r->probes);
            gm_json_end_object(&js);
        }
        gm_json_end_array(&js);
        gm_json_end_object(&js);
        gm_json_finish(&js);
        return;
    }
    if (j->plan != NULL) {
        const gm_scale_report_t *sr = gm_scale_plan_report(j->plan);
        printf("largest %s with no OOM: '%s' scaled (laws from", what,
               gm__cli_s(gm__cli_captures_label(j->caps, sr->base)));
        for (size_t i = 0; i < j->ncaps; i++)
            printf(" '%s'", gm__cli_s(gm__cli_captures_label(j->caps, i)));
        if (j->at_oom >= 0) {
            printf("), on the device of '%s'",
                   gm__cli_s(gm__cli_captures_label(j->caps, (size_t)j->at_oom)));
            gm__cli_oom_capacity_note(total);
            printf("\n");
        } else {
            printf("), on %s (%s)\n", device ? device : "capacity", gm__cli_size(total));
        }
    } else {
    printf("largest %s with no OOM: %s, ", what, j->cfg.model);
    if (j->vary_seq)
        printf("batch %" PRIu64, j->cfg.batch);
    else if (j->cfg.seq_kind == GM_SYNTH_SEQ_FIXED)
        printf("seq %" PRIu64, j->cfg.seq);
    else
        printf("seq %s", gm_synth_name(GM_SYNTH_LIST_SEQ, j->cfg.seq_kind));
    printf(", %s %s, %" PRIu64 " %s step%s, on %s (%s)\n",
           gm_synth_name(GM_SYNTH_LIST_MODE, j->cfg.mode),
           gm_synth_name(GM_SYNTH_LIST_PRECISION, j->cfg.precision), j->cfg.steps,
           j->cfg.warm ? "warm" : "cold", j->cfg.steps == 1 ? "" : "s",
           device ? device : "capacity", gm__cli_size(total));
    fit_config_line(&j->cfg);
    }
    if (dev->reserve)
        printf("the policies get %s: %s less %s outside the allocator (%s)\n",
               gm__cli_size(j->capacity), gm__cli_size(total), gm__cli_size(dev->reserve),
               dev->reserve_given ? "--reserve" : "the preset's CUDA context, an estimate");
    printf("\n");
    int said = 0; /* how sure each answer is (issue 30) */
    for (size_t i = 0; j->plan != NULL && i < n; i++)
        said |= res[i].best &&
                gm__cli_captures_band(j->caps, j->vary_seq, res[i].best,
                                      res[i].ops ? res[i].ops->name : "requested",
                                      res[i].ops ? res[i].m.peak_reserved : res[i].load,
                                      j->capacity);
    if (said)
        printf("\n");
    gm__cli_table_t t;
    gm__cli_table_head(&t, "llrrrrrrr", "policy", "start", what, "peak requested", "peak reserved",
                       "margin", "overhead", "first OOM at", "probes", NULL);
    for (size_t i = 0; i < n; i++) {
        const fit_result_t *r = &res[i];
        gm__cli_table_cell(&t, "%s", r->ops ? r->ops->name : "(requested)");
        gm__cli_table_cell(&t, "%s", r->ops && r->best ? gm__cli_start_name(r->warm) : "-");
        gm__cli_table_cell(&t, "%" PRIu64, r->best);
        gm__cli_table_cell(&t, "%s", r->best ? gm__cli_size(r->load) : "-");
        gm__cli_table_cell(&t, "%s", r->best && r->ops ? gm__cli_size(r->m.peak_reserved) : "-");
        uint64_t peak = r->ops ? r->m.peak_reserved : r->load;
        gm__cli_table_cell(&t, "%s", r->best && peak <= j->capacity
                                         ? gm__cli_size(j->capacity - peak) : "-");
        if (r->best && r->ops)
            gm__cli_table_cell(&t, "%+.1f%%", r->m.overhead * 100.0);
        else
            gm__cli_table_cell(&t, "-");
        if (r->first_bad)
            gm__cli_table_cell(&t, "%" PRIu64, r->first_bad);
        else
            gm__cli_table_cell(&t, "-");
        gm__cli_table_cell(&t, "%u", r->probes);
    }
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
    for (size_t i = 0; i < n; i++)
        if (res[i].best == 0 && res[i].first_bad == 1)
            printf("'%s': even %s 1 does not fit\n", res[i].ops ? res[i].ops->name : "requested",
                   what);
    /* margin: capacity − reserve − peak; under 2% of the device is the edge, where a
     * little more outside the allocator (NCCL, a library's workspace) is an OOM */
    for (size_t i = 0; i < n; i++) {
        const fit_result_t *r = &res[i];
        char margin[256];
        if (r->best && r->ops &&
            gm__cli_margin_of(total, total - j->capacity, r->m.peak_reserved, margin,
                              sizeof margin))
            printf("'%s' %s %" PRIu64 ": %s\n", r->ops->name, what, r->best, margin);
    }
}

int gm__cmd_fit(int argc, char **argv)
{
    gm__synth_opts_t so;
    gm__synth_opts_init(&so);
    fit_job_t job;
    memset(&job, 0, sizeof job);
    job.at_oom = -1;
    gm__cli_policies_t sel = {.v = calloc(gm_policy_count() + 1, sizeof *sel.v)};
    gm__cli_list_t params = {0};
    fit_result_t *res = NULL;
    int json = 0, rc = sel.v ? 0 : gm__cli_error("out of memory");
    uint64_t max = 0, base = 0;
    size_t vary = 0;
    fit_at_t at = {NULL, NULL};
    int from = 0, force = 0;
    gm__cli_devopts_t dev = {.capacity = &job.capacity, .start = &job.start, .once = 1,
                             .presets = 1};
    gm__cli_captures_t *caps = NULL;
    static const char *const vary_names[] = {"batch", "seq", NULL};
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("json", 0, GM__CLI_FLAG, &json),
        GM__CLI_DEVICE_OPTS(&dev),
        GM__CLI_OPT("policy", 'p', GM__CLI_CALL, &sel, .fn = fit_policies_arg, .value = 1),
        /* the same, as compare and sweep spell it */
        GM__CLI_OPT("policies", 'p', GM__CLI_CALL, &sel, .fn = fit_policies_arg, .value = 1),
        GM__CLI_OPT("param", 'P', GM__CLI_LIST, &params),
        GM__CLI_OPT("vary", 0, GM__CLI_CHOICE, &vary, .names = vary_names,
                    .hint = "batch or seq"),
        GM__CLI_OPT("max", 0, GM__CLI_COUNT, &max, .lo = 1, .hi = UINT64_C(1) << 40),
        GM__CLI_OPT("from", 0, GM__CLI_FLAG, &from),
        GM__CLI_OPT("at", 0, GM__CLI_CALL, &at, .fn = fit_at_arg, .value = 1),
        GM__CLI_OPT("base", 0, GM__CLI_COUNT, &base, .lo = 1, .hi = GM_SCALE_MAX_CAPTURES),
        GM__CLI_OPT("force", 0, GM__CLI_FLAG, &force),
        GM__CLI_DEVOPT_ROW("start", GM__CLI_OPT_START, &dev),
        GM__SYNTH_OPTS(&so),
        GM__CLI_OPTS_END,
    };
    if (rc || gm__cli_parse(opts, fit_usage, argc, argv, &rc))
        goto out;
    job.vary_seq = vary == 1;
    job.params = params.v;
    job.nparams = params.n;
    const char *synth_opt = so.first; /* the first model or run option, which --from refuses */
    if (so.list_models) {
        rc = gm__synth_list_models(json);
        goto out;
    }
    if (!from && (at.seq || at.batch || base || force)) {
        rc = gm__cli_usage_error(fit_usage, "--at, --base and --force need --from");
        goto out;
    }
    if (from && synth_opt) { /* the captures are the job: nothing of synth's applies */
        rc = gm__cli_usage_error(fit_usage, "'--%s' conflicts with --from (the captures give "
                                            "the model and the run)", synth_opt);
        goto out;
    }
    if (optind < argc && !from) {
        rc = gm__cli_usage_error(fit_usage, "too many arguments: '%s'", argv[optind]);
        goto out;
    }
    if (from && argc - optind < 2) {
        rc = gm__cli_usage_error(fit_usage, argc - optind ? "--from needs two or more captures "
                                                            "of the job at different sizes"
                                                          : "--from needs the captures "
                                                            "(CAPTURE CAPTURE...)");
        goto out;
    }
    if (job.capacity == 0 && !from) { /* --from: a capture's recorded OOM may give it */
        rc = gm__cli_usage_error(fit_usage, "missing --capacity or --device");
        goto out;
    }
    rc = gm__cli_device_usable(fit_usage, &job.capacity);
    if (rc)
        goto out;
    if (sel.n == 0) {
        rc = gm__cli_usage_error(fit_usage, "missing --policy (see 'gmsim policies', or use "
                                            "--policy all)");
        goto out;
    }
    for (size_t i = 0; i < job.nparams; i++) { /* every --param, checked now */
        const char *t = job.params[i], *dot = strchr(t, '.'), *eq = strchr(t, '=');
        if (dot == NULL || eq == NULL || dot > eq || dot == t || eq == dot + 1 ||
            dot - t >= 64) {
            rc = gm__cli_usage_error(fit_usage, "invalid --param '%s' (expected POLICY.KEY=VALUE)",
                                     t);
            goto out;
        }
        char pol[64];
        snprintf(pol, sizeof pol, "%.*s", (int)(dot - t), t);
        const gm_policy_ops_t *ops = gm_policy_find(pol);
        size_t k = 0;
        while (ops && k < sel.n && sel.v[k] != ops)
            k++;
        if (ops == NULL || k == sel.n) {
            rc = gm__cli_usage_error(fit_usage, "--param '%s' is for policy '%s', which --policy "
                                                "does not select",
                                     t, pol);
            goto out;
        }
        gm_params_t p;
        gm_error_t perr = {0};
        if (gm_params_init(&p, ops, &perr) != 0) {
            rc = gm__cli_error("%s", perr.msg);
            goto out;
        }
        int bad = fit_apply_params(&job, &p, &perr);
        gm_params_release(&p);
        if (bad) {
            rc = gm__cli_usage_error(fit_usage, "%s", perr.msg);
            goto out;
        }
    }
    if (from) {
        size_t n = (size_t)(argc - optind);
        uint64_t sv[GM_SCALE_MAX_CAPTURES], bv[GM_SCALE_MAX_CAPTURES];
        const char *lists[2] = {at.seq, at.batch};
        uint64_t *outs[2] = {sv, bv};
        for (int d = 0; d < 2 && rc == 0; d++) {
            if (lists[d] == NULL)
                continue;
            size_t k = 0;
            char *copy = strdup(lists[d]), *save = NULL;
            if (copy == NULL) {
                rc = gm__cli_error("out of memory");
                goto out;
            }
            for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0;
                 tok = strtok_r(NULL, ",", &save)) {
                if (k == n || k == GM_SCALE_MAX_CAPTURES)
                    rc = gm__cli_usage_error(fit_usage, "--at %s gives more values than the "
                                                        "%zu captures", d ? "batch" : "seq", n);
                else
                    rc = gm__cli_count_arg(fit_usage, "--at", tok, 1, UINT64_C(1) << 40,
                                           &outs[d][k++]);
            }
            free(copy);
            if (rc == 0 && k != n)
                rc = gm__cli_usage_error(fit_usage, "--at %s gives %zu values for %zu captures",
                                         d ? "batch" : "seq", k, n);
        }
        if (rc)
            goto out;
        gm_scale_options_t o = {.base = base ? (int)base - 1 : -1, .force = force};
        if ((rc = gm__cli_captures_open(fit_usage, argv + optind, n, at.seq ? sv : NULL,
                                        at.batch ? bv : NULL, &o, &caps)))
            goto out;
        job.plan = gm__cli_captures_plan(caps);
        job.caps = caps;
        job.ncaps = n;
        /* without --capacity or --device, the capacity the first capture
         * with a recorded OOM fixes (as replay, compare and sweep take it) */
        for (size_t k = 0; job.capacity == 0 && k < n; k++) {
            gm_trace_info_t info;
            gm_error_t e = {0};
            gm_replay_config_t oc;
            gm_replay_config_default(&oc);
            if (gm_store_find(gm__cli_captures_store(caps, k), gm__cli_captures_trace(caps, k),
                              &info, &e) != 0)
                continue;
            if (gm_replay_config_at_oom(&oc, info.attrs)) {
                job.capacity = oc.device.capacity;
                job.at_oom = (ssize_t)k;
            }
            gm_trace_info_release(&info);
        }
        if (job.capacity == 0) {
            rc = gm__cli_usage_error(fit_usage, "missing --capacity or --device (no capture "
                                                "recorded an OOM, whose capacity would do)");
            goto out;
        }
        const gm_scale_report_t *sr = gm_scale_plan_report(job.plan);
        gm_error_t e = {0};
        uint64_t probe_s = job.vary_seq ? 1 : 0, probe_b = job.vary_seq ? 0 : 1;
        if (gm_scale_check_target(job.plan, probe_s * (sr->seq[sr->base] + 1),
                                  probe_b * (sr->batch[sr->base] + 1), &e)) {
            rc = gm__cli_error("%s", e.msg);
            goto out;
        }
        for (size_t k = 0; k < n; k++) {
            uint64_t v = job.vary_seq ? sr->seq[k] : sr->batch[k];
            if (job.from_min == 0 || v < job.from_min)
                job.from_min = v;
        }
        if (gm_store_open(":memory:", GM_STORE_WRITE, &job.mem, &e)) {
            rc = gm__cli_error("%s", e.msg);
            goto out;
        }
    }
    if (!from && so.nseqs > 1) {
        rc = gm__cli_usage_error(fit_usage, "--seq takes one length here (or a distribution)");
        goto out;
    }
    if (!so.steps_set) { /* one step with the state in place holds both peaks */
        so.run.steps = 1;
        so.run.warm = 1;
    }
    if (!from && (rc = gm__synth_resolve(&so, fit_usage, 0, &job.cfg)) != 0)
        goto out;
    if (!from && job.vary_seq && job.cfg.seq_kind != GM_SYNTH_SEQ_FIXED) {
        rc = gm__cli_usage_error(fit_usage, "--vary seq needs no --seq distribution");
        goto out;
    }
    if (max == 0)
        max = job.vary_seq ? (1u << 20) : 65536;
    if (max > (job.vary_seq ? (1u << 20) : 65536))
        max = job.vary_seq ? (1u << 20) : 65536;
    res = calloc(sel.n + 1, sizeof *res);
    if (res == NULL) {
        rc = gm__cli_error("out of memory");
        goto out;
    }
    gm_error_t err = {0};
    char label[128];
    for (size_t i = 0; i <= sel.n && rc == 0; i++) {
        res[i].ops = i ? sel.v[i - 1] : NULL;
        snprintf(label, sizeof label, "fitting %s...", res[i].ops ? res[i].ops->name : "");
        gm__cli_status("%s", label);
        if (fit_search(&job, &res[i], max, &err) != 0)
            rc = gm__cli_error("%s", err.msg);
    }
    gm__cli_status_clear();
    if (rc == 0)
        fit_print(&job, res, sel.n + 1, dev.device, json);
out:
    if (job.mem)
        gm_store_close(job.mem);
    gm__cli_captures_close(caps);
    free(job.buf.ev);
    free(job.life);
    free(params.v);
    free(res);
    free(sel.v);
    gm__synth_opts_release(&so);
    return rc;
}
