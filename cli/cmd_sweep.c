/*
 * cli/cmd_sweep.c — `gmsim sweep DB... [--trace GLOB] [--policies LIST]
 * [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE] [--granularity SIZE]
 * [-j N] [--results OUT] [--shard I/N] [--json]`.
 *
 * The grid traces × configurations runs in N worker processes and lands in
 * the results store, each run in its own transaction, keyed by trace
 * digest, policy, parameters, device and gmsim version (gm_sweep_run).  A
 * second run of the same command does only what is missing.
 *
 * Every policy's default configuration is in the grid (added where the
 * --param lists leave it out, gm_configs_with_defaults): it is the
 * baseline a report measures savings against.  Traces with the same
 * events as one listed before run once; the summary says so.
 *
 * Results never go into an input store: without --results they go to
 * DB.runs.db next to the first DB (its .db suffix replaced), so reruns
 * find them.  --shard I/N (1-based) runs one deterministic slice of the
 * grid, and then --results is required (shards run apart, each into its
 * own file; `gmsim merge` combines them).
 *
 * Policies that can start from a trace's recorded layout (caching) start
 * cold, from an empty allocator, unless --start warm (or P.start) says
 * otherwise: a sweep compares settings, and a setting acts on the
 * segments made after it is set (docs/metrics.md, "Warm and cold").
 *
 * --synth 'OPTIONS' runs `gmsim synth OPTIONS --replace -o OUT` first (its
 * report on stderr), and OUT's traces join the inputs: the results store
 * then holds the traces and their runs, all a report needs.  Rerunning
 * rewrites the same traces (same content, same digests), so every run is
 * found done.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/slurm.h"
#include "cli/start.h"
#include "gmsim/sweep.h"

static const char sweep_usage[] =
    "usage: gmsim sweep DB... [--trace GLOB] [--policies all|P[,P...]]\n"
    "                   [--param P.KEY=V[,V...]]... [--capacity SIZE] [--reserve SIZE]\n"
    "                   [--granularity SIZE] [-j N] [--results OUT] [--shard I/N]\n"
    "                   [--start warm|cold] [--timeline-points N] [--threads N]\n"
    "                   [--json]\n"
    "       gmsim sweep --synth 'SYNTH OPTIONS'... -o OUT [DB...] [options]\n"
    "       gmsim sweep DB... -o OUT --slurm [--tasks N] [--partition P] [--time T]\n"
    "                   [--sbatch-arg ARG]... [--dry-run] [options]\n"
    "\n"
    "Run every trace of the stores through every configuration (policies times\n"
    "parameter values) in N worker processes and keep each run, with its\n"
    "timeline, in the results store.  Runs already there (same trace content,\n"
    "policy, parameters, device and gmsim version) are not run again, so an\n"
    "interrupted sweep resumes where it stopped.\n"
    "\n"
    "options:\n"
    "  -t, --trace GLOB        only traces whose name matches GLOB (default all)\n"
    "  -p, --policies LIST     'all' (default) or policies separated by commas;\n"
    "                          --policy is the same; may be repeated; each\n"
    "                          policy's defaults are always swept (the baseline)\n"
    "  -P, --param P.KEY=V,... parameter values of policy P, one configuration\n"
    "                          per value (several keys: every combination)\n"
    GM__CLI_DEVICE_HELP
    "      --start warm|cold   policies that can start from the trace's recorded\n"
    "                          layout (caching) start from it (warm) or from an\n"
    "                          empty allocator (cold, the default: the start that\n"
    "                          shows what a setting changes); recorded and empty\n"
    "                          say the same; a --param P.start=... list wins\n"
    "  -j, --jobs N            worker processes (default: the number of CPUs)\n"
    "      --threads N         each worker's threads for its policies (default:\n"
    "                          the CPUs over the workers, at least 1); the\n"
    "                          results are the same for any N\n"
    "  -o, --results OUT       the results store (default: DB.runs.db beside the\n"
    "                          first DB); never one of the inputs\n"
    "      --shard I/N         run only slice I of N of the grid (balanced by\n"
    "                          events x runs); needs --results\n"
    "      --timeline-points N points kept of each run's memory timeline\n"
    "                          (default 500)\n"
    "      --synth 'OPTIONS'   synthesize traces into the results store first, as\n"
    "                          'gmsim synth OPTIONS' (e.g. '--model gpt2 --seq\n"
    "                          128,256,512'), and sweep them with the DBs; may\n"
    "                          be repeated; words split at blanks\n"
    "      --json              print the summary as JSON\n"
    "  -h, --help              show this help\n"
    "\n"
    "on a Slurm cluster (docs/cluster.md):\n"
    "      --slurm             write OUT.shards/sweep.sbatch (a job array, one task\n"
    "                          per shard) and merge.sbatch (merges the shards into\n"
    "                          OUT once every task has succeeded), submit both\n"
    "                          with sbatch and print the job ids\n"
    "      --tasks N           array tasks (default: one per trace, at most 64)\n"
    "      --partition P       the jobs' partition\n"
    "      --time T            the jobs' time limit (sbatch --time)\n"
    "      --sbatch-arg ARG    one more #SBATCH line (e.g. --sbatch-arg=--mem=8G);\n"
    "                          may be repeated\n"
    "      --dry-run           print the scripts; write and submit nothing\n"
    "\n"
    "Combine shards with 'gmsim merge', look at results with 'gmsim report'.\n";

static void sweep_progress(void *ctx, const gm_sweep_progress_t *p)
{
    char label[128];
    snprintf(label, sizeof label, "%s %zu/%zu runs", (const char *)ctx, p->runs_done,
             p->runs_total);
    gm__cli_progress(label, p->work_done, p->work_total);
}

/* Run `gmsim synth OPTIONS --replace -o results` (options split at blanks;
 * replacing keeps reruns cheap: the same options give the same content,
 * so the runs stored for it are reused).  Returns the exit status. */
static int sweep_synth(const char *options, const char *results)
{
    char *copy = strdup(options), *save = NULL;
    size_t n = strlen(options) / 2 + 8;
    char **av = calloc(n, sizeof *av);
    if (copy == NULL || av == NULL) {
        free(copy);
        free(av);
        return gm__cli_error("out of memory");
    }
    int ac = 0;
    av[ac++] = "synth";
    for (char *tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
        av[ac++] = tok;
    av[ac++] = "--replace";
    av[ac++] = "-o";
    av[ac++] = (char *)results;
    av[ac] = NULL;
    optind = 0; /* a fresh getopt scan for the synth verb */
    /* What synth reports is a note here: on stderr, so that stdout holds
     * the sweep's summary (and --json stays one JSON value). */
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved >= 0)
        dup2(STDERR_FILENO, STDOUT_FILENO);
    int rc = gm__cmd_synth(ac, av);
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    free(av);
    free(copy);
    return rc;
}

/* --slurm: synthesize first, also for --dry-run (into OUT.shards/traces.db,
 * an input of every task), then write and submit the jobs (cli/slurm.c). */
static int sweep_slurm(gm__slurm_t *so, const gm_sweep_config_t *cfg, char **dbs, size_t ndbs,
                       const char **synth, size_t nsynth, const gm_policy_ops_t **pol,
                       size_t npol, const char **params, size_t nparams, const char *start,
                       const char **sbatch_args, int json)
{
    const char **inputs = calloc(ndbs + 2, sizeof *inputs);
    char *folder = gm__slurm_folder(cfg->results), *traces = NULL, *names = NULL;
    size_t names_len = 0;
    int rc = GM_CLI_OK;
    if (inputs == NULL || folder == NULL) {
        rc = gm__cli_error("out of memory");
        goto out;
    }
    for (size_t i = 0; i < ndbs; i++)
        inputs[i] = dbs[i];
    size_t ninputs = ndbs;
    if (nsynth) {
        size_t len = strlen(folder) + sizeof "/traces.db";
        if ((traces = malloc(len)) == NULL) {
            rc = gm__cli_error("out of memory");
            goto out;
        }
        snprintf(traces, len, "%s/traces.db", folder);
        if (mkdir(folder, 0777) != 0 && errno != EEXIST) {
            rc = gm__cli_error("cannot make '%s': %s", folder, gm__cli_strerror(errno));
            goto out;
        }
        for (size_t i = 0; i < nsynth; i++)
            if ((rc = sweep_synth(synth[i], traces)) != GM_CLI_OK)
                goto out;
        inputs[ninputs++] = traces;
    }
    if (npol) {
        FILE *f = open_memstream(&names, &names_len);
        if (f == NULL) {
            rc = gm__cli_error("out of memory");
            goto out;
        }
        for (size_t i = 0; i < npol; i++)
            fprintf(f, "%s%s", i ? "," : "", pol[i]->name);
        if (fclose(f) != 0) {
            rc = gm__cli_error("out of memory");
            goto out;
        }
    }
    so->sbatch_args = sbatch_args;
    so->json = json;
    gm__slurm_sweep_t sw = {.inputs = inputs,
                            .ninputs = ninputs,
                            .trace_glob = cfg->trace_glob,
                            .policies = names,
                            .params = params,
                            .nparams = nparams,
                            .start = start,
                            .device = &cfg->device,
                            .timeline_points = cfg->timeline_points,
                            .results = cfg->results};
    rc = gm__slurm_submit(so, &sw);
out:
    free(inputs);
    free(folder);
    free(traces);
    free(names);
    return rc;
}

/* --shard I/N, 1 ≤ I ≤ N, into the gm_sweep_config_t at `to`. */
static int sweep_shard_arg(void *to, const char *usage, const gm__cli_opt_t *row,
                           const char *text)
{
    gm_sweep_config_t *cfg = to;
    char *end;
    (void)row;
    unsigned long i = strtoul(text, &end, 10), n = 0;
    const char *n_text = end + 1;
    if (end != text && *end == '/' && text[0] != '-')
        n = strtoul(n_text, &end, 10);
    if (n < 1 || end == n_text || *end != '\0' || n_text[0] == '-' || i < 1 || i > n ||
        n > 1000000)
        return gm__cli_usage_error(usage, "invalid value for --shard: '%s' (I/N with 1 <= I <= N)",
                                   text);
    cfg->shard = (unsigned)(i - 1);
    cfg->nshards = (unsigned)n;
    return GM_CLI_OK;
}

int gm__cmd_sweep(int argc, char **argv)
{
    gm_sweep_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    gm_device_config_default(&cfg.device);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t jobs = ncpu > 0 ? (uint64_t)ncpu : 1, points = 0, tasks = 0;
    int json = 0, rc = GM_CLI_OK;
    size_t nsets = 0;
    gm__cli_policies_t pol = {NULL, 0};
    gm__cli_list_t params = {0}, synth = {0}, sbatch_args = {0};
    gm_params_t *sets = NULL;
    gm_param_value_t **given_values = NULL; /* the configurations given, before the defaults */
    char *results = NULL;
    int slurm = 0;
    const char *start = "empty"; /* one start for all: cold by default */
    gm__cli_devopts_t dev = {.capacity = &cfg.device.capacity,
                             .granularity = &cfg.device.granularity,
                             .threads = &cfg.threads,
                             .start = &start};
    gm__slurm_t so;
    memset(&so, 0, sizeof so);
    gm_error_t err = {0};
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("trace", 't', GM__CLI_STR, &cfg.trace_glob),
        GM__CLI_OPT("policies", 'p', GM__CLI_CALL, &pol, .fn = gm__cli_policies_fn, .value = 1),
        GM__CLI_OPT("policy", 'p', GM__CLI_CALL, &pol, .fn = gm__cli_policies_fn, .value = 1),
        GM__CLI_OPT("param", 'P', GM__CLI_LIST, &params),
        GM__CLI_DEVICE_OPTS(&dev),
        GM__CLI_RUN_OPTS(&dev),
        GM__CLI_OPT("jobs", 'j', GM__CLI_COUNT, &jobs, .lo = 1, .hi = 256),
        GM__CLI_OPT("results", 'o', GM__CLI_STR, &cfg.results),
        GM__CLI_OPT("shard", 0, GM__CLI_CALL, &cfg, .fn = sweep_shard_arg, .value = 1),
        GM__CLI_OPT("json", 0, GM__CLI_FLAG, &json),
        GM__CLI_OPT("synth", 0, GM__CLI_LIST, &synth),
        GM__CLI_OPT("timeline-points", 0, GM__CLI_COUNT, &points, .lo = 1, .hi = 1000000),
        GM__CLI_OPT("slurm", 0, GM__CLI_FLAG, &slurm),
        GM__CLI_OPT("tasks", 0, GM__CLI_COUNT, &tasks, .lo = 1, .hi = 100000),
        GM__CLI_OPT("partition", 0, GM__CLI_STR, &so.partition),
        GM__CLI_OPT("time", 0, GM__CLI_STR, &so.time),
        GM__CLI_OPT("sbatch-arg", 0, GM__CLI_LIST, &sbatch_args),
        GM__CLI_OPT("dry-run", 0, GM__CLI_FLAG, &so.dry_run),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, sweep_usage, argc, argv, &rc))
        goto out;
    cfg.jobs = (unsigned)jobs;
    cfg.timeline_points = (size_t)points;
    so.tasks = (unsigned)tasks;
    so.nsbatch_args = sbatch_args.n;
    /* the capacity less the reserve, whichever came first (as replay) */
    if ((rc = gm__cli_device_usable(sweep_usage, &cfg.device.capacity)))
        goto out;
    if (cfg.threads == 0) /* the CPUs the workers leave */
        cfg.threads = gm__cli_cores() / (cfg.jobs ? cfg.jobs : 1) ? gm__cli_cores() / (cfg.jobs ? cfg.jobs : 1) : 1;
    int first = optind; /* --synth runs getopt again */
    if (optind >= argc && synth.n == 0) {
        rc = gm__cli_usage_error(sweep_usage, "missing the store to read (DB)");
        goto out;
    }
    if (synth.n && cfg.results == NULL) {
        rc = gm__cli_usage_error(sweep_usage, "--synth needs --results (the store the "
                                 "traces and the runs go to)");
        goto out;
    }
    if (slurm && cfg.nshards) {
        rc = gm__cli_usage_error(sweep_usage, "--slurm makes the shards itself: no --shard");
        goto out;
    }
    if (!slurm && (so.tasks || so.partition || so.time || so.nsbatch_args || so.dry_run)) {
        rc = gm__cli_usage_error(sweep_usage, "--tasks, --partition, --time, --sbatch-arg and "
                                 "--dry-run go with --slurm");
        goto out;
    }
    if (cfg.nshards > 1 && cfg.results == NULL) {
        rc = gm__cli_usage_error(sweep_usage, "--shard needs --results (each shard writes its "
                                 "own file)");
        goto out;
    }
    rc = gm__cli_configs(sweep_usage, &pol, params.v, params.n, &cfg.device, &sets, &nsets);
    if (rc)
        goto out;
    /* Every policy's defaults are in the grid: the baseline a report
     * measures each configuration against (a --param list that leaves
     * them out would leave every saving blank). */
    size_t given = nsets;
    given_values = malloc((given ? given : 1) * sizeof *given_values);
    if (given_values == NULL) {
        rc = gm__cli_error("out of memory");
        goto out;
    }
    for (size_t i = 0; i < given; i++)
        given_values[i] = sets[i].values;
    if (gm_configs_with_defaults(&sets, &nsets, &err) != 0) {
        rc = gm__cli_error("%s", err.msg);
        goto out;
    }
    gm__cli_start_apply(sets, nsets, start); /* the defaults too: one start for all */
    if (cfg.results == NULL) {
        results = gm__cli_runs_path(argv[optind]);
        if (results == NULL) {
            rc = gm__cli_error("out of memory");
            goto out;
        }
        cfg.results = results;
    }
    /* A sweep only reads its inputs: the results store is none of them. */
    if ((rc = gm__cli_check_output(sweep_usage, cfg.results, (const char *const *)argv + first,
                                   (size_t)(argc - first))))
        goto out;
    if (slurm) {
        rc = sweep_slurm(&so, &cfg, argv + first, (size_t)(argc - first), synth.v, synth.n, pol.v,
                         pol.n, params.v, params.n, dev.start_given, sbatch_args.v, json);
        goto out;
    }
    for (size_t i = 0; i < synth.n; i++)
        if ((rc = sweep_synth(synth.v[i], cfg.results)) != GM_CLI_OK)
            goto out;
    cfg.results_traces = synth.n > 0;
    cfg.inputs = (const char *const *)argv + first;
    cfg.ninputs = (size_t)(argc - first);
    cfg.sets = sets;
    cfg.nsets = nsets;
    cfg.progress = sweep_progress;
    cfg.progress_ctx = "sweep";
    gm_sweep_summary_t sum;
    int src = gm_sweep_run(&cfg, &sum, &err);
    gm__cli_status_clear();
    if (src != 0 && sum.runs == 0) {
        rc = err.code == GM_EINVAL      ? gm__cli_usage_error(sweep_usage, "%s", err.msg)
             : err.code == GM_ENOTFOUND && sum.traces == 0 && cfg.trace_glob
                 ? gm__cli_no_trace(cfg.trace_glob, argv + first, (size_t)(argc - first))
                 : gm__cli_error("%s", err.msg);
        goto out;
    }
    if (json) {
        gm_json_t j;
        gm_json_init(&j, stdout, 1);
        gm_json_begin_object(&j);
        gm_json_kv_str(&j, "results", cfg.results);
        gm_json_kv_u64(&j, "traces", sum.traces);
        gm_json_kv_u64(&j, "configurations", nsets);
        gm_json_kv_u64(&j, "grid", sum.grid);
        gm_json_key(&j, "shard");
        if (cfg.nshards > 1) {
            char sh[64];
            snprintf(sh, sizeof sh, "%u/%u", cfg.shard + 1, cfg.nshards);
            gm_json_str(&j, sh);
        } else {
            gm_json_null(&j);
        }
        gm_json_kv_u64(&j, "runs", sum.runs);
        gm_json_kv_u64(&j, "reused", sum.reused);
        gm_json_kv_u64(&j, "ran", sum.ran);
        gm_json_kv_u64(&j, "failed", sum.failed);
        gm_json_kv_u64(&j, "defaults_added", nsets - given);
        gm_json_kv_u64(&j, "same_content", sum.same_content);
        gm_json_key(&j, "layout_unfit"); /* ran cold: the layout did not fit */
        gm_json_u64(&j, sum.layout_unfit);
        if (sum.at_oom) { /* traces run at the capacity their recorded OOM fixes */
            gm_json_kv_str(&j, "capacity_from", "recorded_oom");
            gm_json_kv_u64(&j, "recorded_oom_traces", sum.at_oom);
        }
        if (sum.plans[0] + sum.plans[1] + sum.plans[2] > 0) {
            gm_json_key(&j, "plans");
            gm_json_begin_object(&j);
            for (int k = GM_PLAN_OPTIMAL; k >= GM_PLAN_GREEDY; k--)
                gm_json_kv_u64(&j, gm_plan_status_name(k), sum.plans[k]);
            gm_json_kv_double(&j, "gap_max", sum.plan_gap_max);
            gm_json_end_object(&j);
        }
        gm_json_end_object(&j);
        gm_json_finish(&j);
    } else {
        printf("sweep: %zu trace%s x %zu configuration%s = %zu runs", sum.traces,
               sum.traces == 1 ? "" : "s", nsets, nsets == 1 ? "" : "s", sum.grid);
        if (cfg.nshards > 1)
            printf(", shard %u/%u: %zu runs", cfg.shard + 1, cfg.nshards, sum.runs);
        printf("\n");
        if (sum.at_oom) {
            printf("trace '%s'", gm__cli_s(sum.at_oom_trace));
            gm__cli_oom_capacity_note(sum.at_oom_capacity);
            if (sum.at_oom > 1)
                printf("; %zu more trace%s at their own", sum.at_oom - 1,
                       sum.at_oom == 2 ? "" : "s");
            printf("\n");
        }
        for (size_t i = 0; i < nsets; i++) {
            if (!gm_policy_has_start(sets[i].ops))
                continue;
            int by_param = 0; /* a --param P.start=... list decides */
            for (size_t k = 0; k < params.n; k++)
                by_param |= strncmp(params.v[k], sets[i].ops->name, strlen(sets[i].ops->name)) == 0 &&
                            strstr(params.v[k], ".start=") != NULL;
            if (by_param)
                printf("start of %s: as --param gives it, warm or cold per configuration\n",
                       sets[i].ops->name);
            else if (strcmp(start, "empty") == 0)
                printf("start of %s: cold, from an empty allocator (the start that shows what a "
                       "setting changes; --start warm for the recorded layout)\n",
                       sets[i].ops->name);
            else
                printf("start of %s: warm, from each trace's recorded layout where it has one\n",
                       sets[i].ops->name);
            break;
        }
        if (sum.layout_unfit)
            printf("%zu run%s started cold: the recorded layout did not fit the capacity "
                   "(a stored run's start says which)\n",
                   sum.layout_unfit, sum.layout_unfit == 1 ? "" : "s");
        printf("%zu already done, %zu ran, %zu failed; results in '%s'\n", sum.reused, sum.ran,
               sum.failed, gm__cli_s(cfg.results));
        if (nsets > given) {
            printf("added the default configuration of");
            for (size_t i = 0, k = 0; i < nsets; i++) {
                size_t g = 0;
                while (g < given && given_values[g] != sets[i].values)
                    g++;
                if (g == given) /* not one of the configurations given */
                    printf("%s %s", k++ ? "," : "", sets[i].ops->name);
            }
            printf(" (the baseline of every saving)\n");
        }
        if (sum.plans[0] + sum.plans[1] + sum.plans[2] > 0) {
            /* the planners' runs: how good their plans are known to be */
            printf("plans of the runs that ran: %zu optimal, %zu feasible, %zu greedy",
                   sum.plans[GM_PLAN_OPTIMAL], sum.plans[GM_PLAN_FEASIBLE],
                   sum.plans[GM_PLAN_GREEDY]);
            if (sum.plans[GM_PLAN_FEASIBLE] + sum.plans[GM_PLAN_GREEDY] > 0)
                printf(" (not proved: at most %.2f%% above the lower bound)",
                       100.0 * sum.plan_gap_max);
            printf("\n");
        }
        if (sum.same_content)
            printf("%s: swept once for both%s\n", gm__cli_s(sum.same_note),
                   sum.same_content > 1 ? " (and more traces like it: 'gmsim info --json' "
                                          "shows each trace's digest)"
                                        : "");
    }
    if (src != 0)
        rc = gm__cli_error("%s", err.msg);
out:
    free(given_values);
    free(results);
    free(sbatch_args.v);
    gm_configs_free(sets, nsets);
    free(pol.v);
    free(params.v);
    free(synth.v);
    return rc;
}
