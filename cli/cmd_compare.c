/*
 * cli/cmd_compare.c — `gmsim compare DB... [--trace GLOB] [--policies
 * all|P,P] [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE] [--granularity
 * SIZE] [--by trace|seq_len] [--json|--csv]`.
 *
 * Every trace of the stores (those whose name matches GLOB) is read once
 * and fed to every configuration in the same pass (gm_compare_trace).  A
 * --param with a list of values gives one configuration per value.  The
 * table has one block per trace (--by trace) or, with --by seq_len, one
 * pivot per figure: configurations down, sequence lengths across (the
 * traces' "seq_len" attribute).  A trace whose snapshot recorded an OOM
 * runs at the capacity it fixes unless one is given (gm_replay_config_at_oom,
 * as replay); a trace's first run with OOMs is explained at its first one
 * (gm_oom_explain, as replay).  --json and --csv print every metric of
 * every run; a planner's run (offline) also has its plan's status, a line
 * under its table and a "plan" object in --json.  Argument errors are
 * usage errors (exit 2), a store or trace
 * that cannot be read is exit 1.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/start.h"
#include "gmsim/sweep.h"
#include "base/vec.h"

static const char compare_usage[] =
    "usage: gmsim compare DB... [--trace GLOB] [--policies all|P[,P...]]\n"
    "                     [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]\n"
    "                     [--granularity SIZE] [--start warm|cold]\n"
    "                     [--by trace|seq_len] [--json|--csv] [--no-advice] [--threads N]\n"
    "\n"
    "Replay every trace of the stores through every policy (each trace read\n"
    "once, all policies in the same pass) and compare peak reserved memory,\n"
    "utilization, efficiency, overhead above load, the fragmentation that makes\n"
    "it (internal: rounding; external: reserved but not allocated at the load\n"
    "peak), device mallocs and OOMs; the first run of a trace with OOMs is\n"
    "explained at its first one, as replay explains it (--json: the stacks).\n"
    "\n"
    "options:\n"
    "  -t, --trace GLOB        only traces whose name matches GLOB (default all)\n"
    "  -p, --policies LIST     'all' (default) or policies separated by commas;\n"
    "                          --policy is the same; may be repeated\n"
    "  -P, --param P.KEY=V,... set parameter KEY of policy P; a list of values\n"
    "                          gives one configuration per value; may be repeated\n"
    GM__CLI_DEVICE_HELP
    "      --start warm|cold   policies that can start from the trace's recorded\n"
    "                          layout (caching) start from it (warm) or from an\n"
    "                          empty allocator (cold, the default: the start that\n"
    "                          shows what a setting changes); recorded and empty\n"
    "                          say the same; an explicit --param P.start=... wins\n"
    "      --by trace|seq_len  one table per trace (default), or one pivot per\n"
    "                          figure with sequence lengths across\n"
    "      --json              print JSON (every metric of every run)\n"
    "      --csv               print CSV, one row per run\n"
    "      --no-advice         skip the PyTorch recommendation (for a PyTorch\n"
    "                          trace, compare replays a grid of settings its user\n"
    "                          can set, PYTORCH_CUDA_ALLOC_CONF=..., and names the\n"
    "                          one that reserves least)\n"
    GM__CLI_THREADS_HELP
    "  -h, --help              show this help\n"
    "\n"
    "Sizes take KiB/MiB/GiB/TiB suffixes.\n";

typedef struct compare_item {
    const char *store;
    uint64_t capacity; /* the device's, for the line a layout that did not fit gets */
    int at_oom;        /* the capacity is the trace's recorded OOM's (gm_replay_config_at_oom) */
    gm_compare_trace_t res;
    size_t oom_run;     /* the first run with OOMs, explained in oom (SIZE_MAX: none) */
    gm_oom_report_t oom;
    uint64_t fits_with; /* its peak reserved on an unlimited device (0: not known) */
} compare_item_t;

/* Index of the run with the least peak reserved among the contenders,
 * without OOMs.  Left out unless nothing else ran: references
 * (GM_ROLE_REFERENCE, e.g. native: a device call per request, at load by
 * construction), bounds (GM_ROLE_BOUND: planners know the future), then
 * runs with OOMs. */
static size_t compare_winner(const gm_compare_trace_t *t)
{
    size_t best = SIZE_MAX;
    for (int pass = 0; pass < 4 && best == SIZE_MAX; pass++)
        for (size_t i = 0; i < t->nruns; i++) {
            const gm_compare_run_t *r = &t->runs[i];
            if (pass < 1 && r->ops->role == GM_ROLE_REFERENCE)
                continue;
            if (pass < 2 && r->ops->role == GM_ROLE_BOUND)
                continue;
            if (pass < 3 && r->metrics.ooms)
                continue;
            if (best == SIZE_MAX || r->metrics.peak_reserved < t->runs[best].metrics.peak_reserved)
                best = i;
        }
    return best;
}

/* The labels of t's runs, the peers a cut label is told apart from
 * (gm_label_cut); NULL when out of memory (labels are then cut alone). */
static const char **compare_labels(const gm_compare_trace_t *t)
{
    const char **peers = malloc((t->nruns ? t->nruns : 1) * sizeof *peers);
    for (size_t i = 0; peers && i < t->nruns; i++)
        peers[i] = t->runs[i].label;
    return peers;
}

static void compare_block(const compare_item_t *it)
{
    const gm_compare_trace_t *t = &it->res;
    printf("trace '%s' (%s): %" PRIu64 " events, load %s", gm__cli_s(t->info.name),
           gm__cli_s(it->store),
           t->info.events, gm__cli_size(t->load));
    if (t->seq_len >= 0)
        printf(", seq_len %" PRId64, t->seq_len);
    if (it->at_oom)
        gm__cli_oom_capacity_note(it->capacity);
    printf("\n\n");
    /* policy, start, and the metrics of compare's table (GM_METRIC_BRIEF:
     * replay's, less the columns only a replay prints) */
    gm__cli_table_t tab;
    size_t cols[GM__CLI_METRIC_COLS], ncols = gm__cli_metric_table(&tab, GM_METRIC_BRIEF, cols);
    const char **peers = compare_labels(t);
    for (size_t i = 0; i < t->nruns; i++) {
        const gm_compare_run_t *r = &t->runs[i];
        const gm_metrics_t *m = &r->metrics;
        char cut[GM_LABEL_MAX * 4];
        gm_label_cut(r->label, peers, peers ? t->nruns : 0, GM_LABEL_MAX, "...", cut,
                     sizeof cut);
        gm__cli_table_cell(&tab, "%s", cut);
        gm__cli_table_cell(&tab, "%s", gm__cli_start_name(r->warm));
        for (size_t c = 0; c < ncols; c++) {
            char cell[64];
            gm__cli_table_cell(&tab, "%s", gm_metric_text(m, cols[c], cell, sizeof cell));
        }
    }
    free(peers);
    gm__cli_table_print(&tab, stdout, NULL);
    gm__cli_table_release(&tab);
    for (size_t i = 0; i < t->nruns; i++)
        if (t->runs[i].layout_unfit)
            gm__cli_start_unfit(t->runs[i].label, t->runs[i].layout_unfit, it->capacity);
    for (size_t i = 0; i < t->nruns; i++)
        gm__cli_oom_asked(t->runs[i].label, t->runs[i].oom_asked, t->runs[i].oom_failed);
    for (size_t i = 0; i < t->nruns; i++)
        gm__cli_oom_count(t->runs[i].label, &t->runs[i].metrics);
    /* a planner's plan: how good it is known to be, as replay says it */
    for (size_t i = 0; i < t->nruns; i++)
        if (t->runs[i].has_plan)
            gm__cli_plan_line(t->runs[i].label, &t->runs[i].plan);
    size_t w = compare_winner(t);
    if (w != SIZE_MAX && t->runs[w].metrics.ooms) {
        printf("no configuration fits in %s: every one ran out of memory\n",
               gm__cli_size(it->capacity));
    } else if (w != SIZE_MAX) {
        const gm_compare_run_t *r = &t->runs[w];
        printf("least reserved (of the policies that cache): %s, %s (%+.1f%% above load)\n", r->label,
               gm__cli_size(r->metrics.peak_reserved), r->metrics.overhead * 100.0);
    }
    gm__cli_torch_print(&t->torch);
    if (it->oom_run != SIZE_MAX)
        gm__cli_oom_print(&it->oom);
    if (it->fits_with)
        gm__cli_fits_with_print(it->fits_with, t->runs[it->oom_run].warm);
}

static int compare_by_seq(const void *a, const void *b)
{
    const compare_item_t *x = a, *y = b;
    if (x->res.seq_len != y->res.seq_len)
        return x->res.seq_len < y->res.seq_len ? -1 : 1;
    return strcmp(x->res.info.name, y->res.info.name);
}

/* A pivot's table (align: its columns', kept until it is printed) and its
 * header row: policy, start, the seq_len cells, the trace's name beside a
 * seq_len two traces share. */
static void compare_pivot_head(gm__cli_table_t *t, const char *align, const compare_item_t *first,
                               size_t with)
{
    gm__cli_table_init(t, with + 2, align);
    gm__cli_table_cell(t, "policy");
    gm__cli_table_cell(t, "start");
    for (size_t i = 0; i < with; i++) {
        int dup = (i > 0 && first[i - 1].res.seq_len == first[i].res.seq_len) ||
                  (i + 1 < with && first[i + 1].res.seq_len == first[i].res.seq_len);
        if (dup)
            gm__cli_table_cell(t, "%" PRId64 " (%s)", first[i].res.seq_len,
                               first[i].res.info.name);
        else
            gm__cli_table_cell(t, "%" PRId64, first[i].res.seq_len);
    }
}

/* Configuration c's start in a pivot: its runs' one start, or "mixed"
 * (a layout that did not fit some capacity started cold; a line under the
 * pivots says where). */
static const char *compare_pivot_start(const compare_item_t *first, size_t with, size_t c)
{
    for (size_t i = 1; i < with; i++)
        if (first[i].res.runs[c].warm != first[0].res.runs[c].warm)
            return "mixed";
    return gm__cli_start_name(first[0].res.runs[c].warm);
}

/* The planners' plans by seq_len (none printed when no run planned): the
 * status, and for a plan not proved optimal its bytes above the bound. */
static void compare_plan_pivot(const compare_item_t *first, size_t with, const char *align)
{
    size_t nconf = first->res.nruns, planners = 0;
    for (size_t c = 0; c < nconf; c++)
        planners += first->res.runs[c].has_plan;
    if (planners == 0)
        return;
    printf("\nplan by seq_len (optimal: proved; else how far above the lower bound)\n\n");
    gm__cli_table_t t;
    compare_pivot_head(&t, align, first, with);
    const char **peers = compare_labels(&first->res);
    for (size_t c = 0; c < nconf; c++) {
        if (!first->res.runs[c].has_plan)
            continue;
        char cut[GM_LABEL_MAX * 4];
        gm_label_cut(first->res.runs[c].label, peers, peers ? nconf : 0, GM_LABEL_MAX, "...",
                     cut, sizeof cut);
        gm__cli_table_cell(&t, "%s", cut);
        gm__cli_table_cell(&t, "%s", compare_pivot_start(first, with, c));
        for (size_t i = 0; i < with; i++) {
            const gm_plan_info_t *pi = &first[i].res.runs[c].plan;
            if (pi->status == GM_PLAN_OPTIMAL)
                gm__cli_table_cell(&t, "optimal");
            else
                gm__cli_table_cell(&t, "%s +%s", gm_plan_status_name(pi->status),
                                   gm__cli_size(pi->peak > pi->lower_bound
                                                    ? pi->peak - pi->lower_bound
                                                    : 0));
        }
    }
    free(peers);
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
}

/* Pivots: one per figure, configurations down, seq_len across. */
static int compare_pivot(compare_item_t *items, size_t n)
{
    size_t with = 0;
    for (size_t i = 0; i < n; i++)
        with += items[i].res.seq_len >= 0;
    if (with == 0)
        return gm__cli_error("no trace carries a 'seq_len' attribute (use --by trace)");
    if (with < n)
        fprintf(stderr, "gmsim: %zu trace%s without 'seq_len' left out of the pivot\n", n - with,
                n - with == 1 ? "" : "s");
    qsort(items, n, sizeof *items, compare_by_seq);
    compare_item_t *first = items + (n - with);
    /* the figures: the metrics marked GM_METRIC_PIVOT, in table order */
    size_t figures[64], nfig = gm_metric_columns(GM_METRIC_PIVOT, figures);
    /* Configurations are the same for every trace, in the same order. */
    size_t nconf = first->res.nruns;
    char *align = malloc(with + 3); /* the policy and start left, the figures right */
    if (align == NULL)
        return gm__cli_error("out of memory");
    memset(align, 'r', with + 2);
    align[0] = align[1] = 'l';
    align[with + 2] = '\0';
    for (size_t f = 0; f < nfig; f++) {
        const gm_metric_desc_t *fd = gm_metric_at(figures[f]);
        printf("%s%s by seq_len\n\n", f ? "\n" : "", fd->title);
        gm__cli_table_t t;
        compare_pivot_head(&t, align, first, with);
        if (fd->kind == GM_METRIC_BYTES) { /* beside bytes, the floor */
            gm__cli_table_cell(&t, "load");
            gm__cli_table_cell(&t, "%s", "");
            for (size_t i = 0; i < with; i++)
                gm__cli_table_cell(&t, "%s", gm__cli_size(first[i].res.load));
        }
        const char **peers = compare_labels(&first->res);
        for (size_t c = 0; c < nconf; c++) {
            char cut[GM_LABEL_MAX * 4];
            gm_label_cut(first->res.runs[c].label, peers, peers ? nconf : 0, GM_LABEL_MAX,
                         "...", cut, sizeof cut);
            gm__cli_table_cell(&t, "%s", cut);
            gm__cli_table_cell(&t, "%s", compare_pivot_start(first, with, c));
            for (size_t i = 0; i < with; i++) {
                char cell[64];
                gm__cli_table_cell(&t, "%s", gm_metric_text(&first[i].res.runs[c].metrics,
                                                            figures[f], cell, sizeof cell));
            }
        }
        free(peers);
        gm__cli_table_print(&t, stdout, NULL);
        gm__cli_table_release(&t);
    }
    compare_plan_pivot(first, with, align);
    free(align);
    /* where a configuration's start is mixed: each seq_len's */
    for (size_t c = 0, said = 0; c < nconf; c++) {
        if (strcmp(compare_pivot_start(first, with, c), "mixed") != 0)
            continue;
        printf("%s'%s' started", said++ ? "" : "\n", first->res.runs[c].label);
        for (size_t i = 0; i < with; i++)
            printf("%s %s at %" PRId64, i ? "," : "", gm__cli_start_name(first[i].res.runs[c].warm),
                   first[i].res.seq_len);
        printf(" (cold where the recorded layout did not fit the capacity)\n");
    }
    return GM_CLI_OK;
}

static void compare_json(const compare_item_t *items, size_t n, const gm_device_config_t *dev)
{
    gm_json_t j;
    gm_json_init(&j, stdout, 1);
    gm_json_begin_object(&j);
    gm_json_key(&j, "device");
    char *d = gm_device_json(dev);
    gm_json_raw(&j, d ? d : "null");
    free(d);
    gm_json_key(&j, "traces");
    gm_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
        const gm_compare_trace_t *t = &items[i].res;
        gm_json_begin_object(&j);
        gm_json_kv_str(&j, "store", items[i].store);
        gm_json_kv_str(&j, "trace", t->info.name);
        gm_json_kv_str(&j, "digest", t->info.digest);
        gm_json_kv_u64(&j, "events", t->info.events);
        gm_json_kv_u64(&j, "load", t->load);
        gm_json_key(&j, "seq_len");
        if (t->seq_len >= 0)
            gm_json_i64(&j, t->seq_len);
        else
            gm_json_null(&j);
        if (items[i].at_oom) { /* the trace's own capacity, not the device's above */
            gm_json_kv_u64(&j, "capacity", items[i].capacity);
            gm_json_kv_str(&j, "capacity_from", "recorded_oom");
        }
        size_t w = compare_winner(t);
        /* null: none, or every run ran out of memory */
        gm_json_kv_str(&j, "winner",
                       w != SIZE_MAX && t->runs[w].metrics.ooms == 0 ? t->runs[w].label : NULL);
        gm__cli_torch_json(&j, &t->torch);
        gm_json_key(&j, "runs");
        gm_json_begin_array(&j);
        for (size_t k = 0; k < t->nruns; k++) {
            const gm_compare_run_t *r = &t->runs[k];
            gm_json_begin_object(&j);
            gm_json_kv_str(&j, "policy", r->ops->name);
            gm_json_kv_str(&j, "label", r->label);
            gm_json_key(&j, "params");
            gm_json_raw(&j, r->params);
            gm_json_kv_str(&j, "start", gm__cli_start_name(r->warm));
            if (r->layout_unfit) /* the recorded layout's bytes, above the capacity */
                gm_json_kv_u64(&j, "layout_unfit", r->layout_unfit);
            gm_json_key(&j, "metrics");
            char *m = gm_metrics_json(&r->metrics);
            gm_json_raw(&j, m ? m : "null");
            free(m);
            if (items[i].at_oom)
                gm__cli_oom_asked_json(&j, r->oom_asked, r->oom_failed);
            if (k == items[i].oom_run) { /* the first run with OOMs: its blockers */
                gm__cli_oom_json(&j, &items[i].oom);
                if (items[i].fits_with)
                    gm_json_kv_u64(&j, "fits_with", items[i].fits_with);
            }
            if (r->has_plan) {
                gm_json_key(&j, "plan");
                gm_plan_write_json(&j, &r->plan);
            }
            gm_json_end_object(&j);
        }
        gm_json_end_array(&j);
        gm_json_end_object(&j);
    }
    gm_json_end_array(&j);
    gm_json_end_object(&j);
    gm_json_finish(&j);
}

/* One CSV field (RFC 4180: quoted when it holds a comma, quote or line
 * break; quotes doubled). */
static void compare_csv_field(const char *s, int sep)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, stdout);
    } else {
        putchar('"');
        for (; *s; s++) {
            if (*s == '"')
                putchar('"');
            putchar(*s);
        }
        putchar('"');
    }
    if (sep)
        putchar(sep);
}

static void compare_csv(const compare_item_t *items, size_t n)
{
    fputs("store,trace,digest,seq_len,events,load,policy,label,start,params", stdout);
    for (size_t k = 0; k < gm_metric_count(); k++)
        printf(",%s", gm_metric_at(k)->name);
    fputs(",plan,plan_peak,plan_lower_bound,plan_gap,plan_capacity\n", stdout);
    for (size_t i = 0; i < n; i++) {
        const gm_compare_trace_t *t = &items[i].res;
        for (size_t k = 0; k < t->nruns; k++) {
            const gm_compare_run_t *r = &t->runs[k];
            char num[64];
            compare_csv_field(items[i].store, ',');
            compare_csv_field(t->info.name, ',');
            compare_csv_field(t->info.digest, ',');
            if (t->seq_len >= 0)
                snprintf(num, sizeof num, "%" PRId64, t->seq_len);
            else
                num[0] = '\0';
            compare_csv_field(num, ',');
            snprintf(num, sizeof num, "%" PRIu64, t->info.events);
            compare_csv_field(num, ',');
            snprintf(num, sizeof num, "%" PRIu64, t->load);
            compare_csv_field(num, ',');
            compare_csv_field(r->ops->name, ',');
            compare_csv_field(r->label, ',');
            compare_csv_field(gm__cli_start_name(r->warm), ',');
            compare_csv_field(r->params, 0); /* the metrics follow, each after a comma */
            for (size_t mk = 0; mk < gm_metric_count(); mk++) {
                double v = gm_metric_value(&r->metrics, mk);
                if (!gm_metric_known(&r->metrics, mk))
                    fputs(",", stdout);
                else if (gm_metric_at(mk)->type == GM_METRIC_U64)
                    printf(",%" PRIu64, gm_metric_u64(&r->metrics, mk));
                else if (gm_metric_at(mk)->type == GM_METRIC_I64)
                    printf(",%" PRId64, gm_metric_i64(&r->metrics, mk));
                else
                    printf(isfinite(v) ? ",%.17g" : ",", v);
            }
            /* a planner's plan, empty for the other policies */
            if (r->has_plan)
                printf(",%s,%" PRIu64 ",%" PRIu64 ",%.17g,%" PRIu64 "\n",
                       gm_plan_status_name(r->plan.status), r->plan.peak, r->plan.lower_bound,
                       gm_plan_gap(&r->plan), r->plan.capacity);
            else
                fputs(",,,,,\n", stdout);
        }
    }
}

int gm__cmd_compare(int argc, char **argv)
{
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.threads = gm__cli_cores();
    const char *glob = NULL, *start = "empty"; /* one start for all: cold by default */
    gm__cli_devopts_t dev = {.capacity = &cfg.device.capacity,
                             .granularity = &cfg.device.granularity,
                             .threads = &cfg.threads,
                             .start = &start};
    int json = 0, csv = 0, no_advice = 0, by_seq, rc = GM_CLI_OK;
    size_t by = 0, nsets = 0, nitems = 0;
    gm__cli_policies_t pol = {NULL, 0};
    gm__cli_list_t params = {0};
    gm_params_t *sets = NULL;
    compare_item_t *items = NULL;
    gm_error_t err = {0};
    static const char *const by_names[] = {"trace", "seq_len", NULL};
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("trace", 't', GM__CLI_STR, &glob),
        GM__CLI_OPT("policies", 'p', GM__CLI_CALL, &pol, .fn = gm__cli_policies_fn, .value = 1),
        GM__CLI_OPT("policy", 'p', GM__CLI_CALL, &pol, .fn = gm__cli_policies_fn, .value = 1),
        GM__CLI_OPT("param", 'P', GM__CLI_LIST, &params),
        GM__CLI_DEVICE_OPTS(&dev),
        GM__CLI_RUN_OPTS(&dev),
        GM__CLI_OPT("by", 0, GM__CLI_CHOICE, &by, .names = by_names, .hint = "trace or seq_len"),
        GM__CLI_OPT("json", 0, GM__CLI_FLAG, &json),
        GM__CLI_OPT("csv", 0, GM__CLI_FLAG, &csv),
        GM__CLI_OPT("no-advice", 0, GM__CLI_FLAG, &no_advice),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, compare_usage, argc, argv, &rc))
        goto out;
    by_seq = by == 1;
    /* the capacity less the reserve, whichever came first (as replay) */
    if ((rc = gm__cli_device_usable(compare_usage, &cfg.device.capacity)))
        goto out;
    if (optind >= argc) {
        rc = gm__cli_usage_error(compare_usage, "missing the store to read (DB)");
        goto out;
    }
    if (json && csv) {
        rc = gm__cli_usage_error(compare_usage, "--json and --csv do not go together");
        goto out;
    }
    rc = gm__cli_configs(compare_usage, &pol, params.v, params.n, &cfg.device, &sets, &nsets);
    if (rc)
        goto out;
    gm__cli_start_apply(sets, nsets, start);

    char label[512] = "comparing";
    cfg.progress = gm__cli_progress;
    cfg.progress_ctx = label;
    size_t cap = 0;
    for (int a = optind; rc == GM_CLI_OK && a < argc; a++) {
        gm_store_t *s;
        if ((rc = gm__cli_open_store(argv[a], GM_STORE_READONLY, &s)))
            break;
        gm_trace_info_t *list;
        size_t n;
        if (gm_store_list(s, &list, &n, &err) != 0) {
            rc = gm__cli_error("%s", err.msg);
            gm_store_close(s);
            break;
        }
        for (size_t k = 0; rc == GM_CLI_OK && k < n; k++) {
            if (!gm_trace_match(glob, list[k].name))
                continue;
            if (GM_VEC_RESERVE(items, cap, nitems + 1, 8)) {
                rc = gm__cli_error("out of memory");
                break;
            }
            snprintf(label, sizeof label, "comparing '%s' through %zu configuration%s",
                     list[k].name, nsets, nsets == 1 ? "" : "s");
            gm__cli_status("%s...", label);
            compare_item_t *it = &items[nitems];
            memset(it, 0, sizeof *it);
            it->store = argv[a];
            it->oom_run = SIZE_MAX;
            /* without --capacity or --device, the capacity a recorded OOM fixes */
            gm_replay_config_t tcfg = cfg;
            it->at_oom = gm_replay_config_at_oom(&tcfg, list[k].attrs);
            it->capacity = tcfg.device.capacity;
            if (gm_compare_trace(s, list[k].name, sets, nsets, &tcfg, &it->res, &err) != 0) {
                gm__cli_status_clear();
                rc = gm__cli_error("%s", err.msg);
                break;
            }
            if (!no_advice && !csv && !by_seq) { /* the pivots and CSV do not show it */
                /* the setting a PyTorch user can set, against the recorded one */
                snprintf(label, sizeof label, "trying PyTorch settings on '%s'", list[k].name);
                gm__cli_status("%s...", label);
                if (gm_torch_advise(s, list[k].name, &tcfg, &items[nitems].res.torch, &err) != 0) {
                    gm__cli_status_clear();
                    gm_compare_trace_release(&items[nitems].res);
                    rc = gm__cli_error("%s", err.msg);
                    break;
                }
            }
            gm__cli_status_clear();
            /* the first run with OOMs, a contender's first (not native's
             * or a planner's): what blocks its first one, as replay says it,
             * and the device it needs */
            size_t r = SIZE_MAX;
            for (int pass = 0; pass < 2 && r == SIZE_MAX; pass++)
                for (size_t q = 0; r == SIZE_MAX && q < it->res.nruns; q++)
                    if (it->res.runs[q].metrics.ooms &&
                        (pass || it->res.runs[q].ops->role < GM_ROLE_REFERENCE))
                        r = q;
            if (r != SIZE_MAX && !csv && !by_seq) {
                gm__cli_status("explaining the first out-of-memory of '%s'...",
                               it->res.runs[r].label);
                tcfg.progress = NULL;
                int orc = gm_oom_explain(s, list[k].name, &sets[r], &tcfg, &it->oom, &err);
                if (orc == 0) {
                    it->oom_run = r;
                    orc = gm__cli_unlimited_peak(s, list[k].name, &sets[r], it->res.runs[r].warm,
                                                 &tcfg, &it->fits_with, &err);
                }
                gm__cli_status_clear();
                if (orc != 0) {
                    gm_compare_trace_release(&it->res);
                    if (it->oom_run != SIZE_MAX)
                        gm_oom_report_release(&it->oom);
                    rc = gm__cli_error("%s", err.msg);
                }
            }
            if (rc)
                break;
            nitems++;
        }
        gm_trace_info_free_list(list, n);
        gm_store_close(s);
    }
    if (rc)
        goto out;
    if (nitems == 0) {
        rc = gm__cli_no_trace(glob, argv + optind, (size_t)(argc - optind));
        goto out;
    }
    if (json)
        compare_json(items, nitems, &cfg.device);
    else if (csv)
        compare_csv(items, nitems);
    else if (by_seq)
        rc = compare_pivot(items, nitems);
    else
        for (size_t i = 0; i < nitems; i++) {
            if (i)
                putchar('\n');
            compare_block(&items[i]);
        }
out:
    for (size_t i = 0; i < nitems; i++) {
        gm_compare_trace_release(&items[i].res);
        if (items[i].oom_run != SIZE_MAX)
            gm_oom_report_release(&items[i].oom);
    }
    free(items);
    gm_configs_free(sets, nsets);
    free(pol.v);
    free(params.v);
    return rc;
}
