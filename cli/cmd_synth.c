/*
 * cli/cmd_synth.c — `gmsim synth`: write a synthetic trace into a store.
 *
 *   gmsim synth [--workload random] --events N --seed S [--live-max BYTES] -o DB
 *   gmsim synth --model NAME | --hidden H ... [run options] -o DB
 *
 * Workloads are a registry (CMD_SYNTH_WORKLOADS): `random`, the seeded mix
 * of gmsim/workload.h, and `model`, a training or inference trace
 * synthesized from a transformer config (gmsim/synth.h, docs/synth.md).
 * Without --workload, any model option means `model`, else `random`.
 * Each entry validates its configuration before the store is touched (a
 * bad option is a usage error and creates no file) and then writes through
 * gm__cli_write_trace, which leaves nothing behind on failure.  A --seq
 * list writes one trace per length, named NAME.seqN.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/synthopt.h"

static const char synth_usage[] =
    "usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]\n"
    "                   -o DB [--name NAME] [--replace] [--json]\n"
    "\n"
    "       gmsim synth [--workload model] --model NAME|--hidden H ... [run options]\n"
    "                   -o DB [--name NAME] [--replace] [--json] [--explain]\n"
    "       gmsim synth --list-models [--json]\n"
    "\n"
    "Write a synthetic allocation trace into the store DB (created if missing).\n"
    "\n"
    "workloads:\n"
    "  random    a seeded random deep-learning-like mix: a few large long-lived\n"
    "            allocations, activations freed in reverse order, many small\n"
    "            short-lived temporaries, 10% of traffic on a second stream, a\n"
    "            'step' mark every 4096 events; the same seed gives the same trace\n"
    "  model     a tensor-level training or inference trace of a transformer\n"
    "            (docs/synth.md): weights, per-layer saved activations and\n"
    "            temporaries, gradients, lazily created optimizer state, logits;\n"
    "            marks 'step', 'forward', 'backward', 'optimizer'\n"
    "\n"
    "options:\n"
    "  -w, --workload NAME  random or model (default: model when a model option\n"
    "                       is given, else random)\n"
    "  -e, --events N       random: exact number of events (default 100000, at\n"
    "                       least 2)\n"
    "  -s, --seed S         random seed (default 1)\n"
    "      --live-max SIZE  random: bound on live requested bytes (default 8GiB,\n"
    "                       at least 4KiB)\n"
    "  -o, --output DB      the store to write into (required)\n"
    "  -n, --name NAME      the trace's name (default: the workload's or model's\n"
    "                       name; with a --seq list NAME.seqN per length)\n"
    "      --replace        replace a trace of the same name\n"
    "      --json           report the stored trace as JSON (as 'gmsim info --json')\n"
    "      --explain        model: where the bytes are, by class (weights, their\n"
    "                       16-bit copies, optimizer state, gradients, inputs,\n"
    "                       saved activations, 16-bit input copies, logits and\n"
    "                       loss, temporaries), at the peak and at the end of\n"
    "                       forward; without -o nothing is written\n"
    "  -h, --help           show this help\n"
    "\n";

static int synth_random_check(const void *cfg, gm_error_t *err)
{
    gm_workload_t *wl;
    int rc = gm_workload_create(cfg, &wl, err);
    if (rc == 0)
        gm_workload_destroy(wl);
    return rc;
}

static int synth_random_fill(gm_writer_t *w, void *ctx, gm_error_t *err)
{
    const gm_workload_config_t *cfg = ctx;
    gm__cli_status("writing %" PRIu64 " events...", cfg->events);
    return gm_workload_write(cfg, w, err);
}

static int synth_model_check(const void *cfg, gm_error_t *err) { return gm_synth_check(cfg, err); }

static int synth_model_fill(gm_writer_t *w, void *ctx, gm_error_t *err)
{
    const gm_synth_config_t *cfg = ctx;
    gm__cli_status("synthesizing '%s'...", cfg->model);
    return gm_synth_write(cfg, w, NULL, err);
}

/* X(name, check, fill): check validates the config (no side effects). */
#define CMD_SYNTH_WORKLOADS(X)                      \
    X(random, synth_random_check, synth_random_fill) \
    X(model, synth_model_check, synth_model_fill)

typedef struct synth_workload {
    const char *name;
    int (*check)(const void *cfg, gm_error_t *err);
    gm__cli_fill_fn fill;
} synth_workload_t;

static const synth_workload_t synth_workloads[] = {
#define SYNTH_ENTRY(name, check, fill) {#name, check, fill},
    CMD_SYNTH_WORKLOADS(SYNTH_ENTRY)
#undef SYNTH_ENTRY
};

/* --explain: the trace's bytes by class at its peak and at the end of its
 * last forward pass (gm_synth_explain). */
static int synth_explain(const char *tname, const gm_synth_config_t *cfg)
{
    gm_error_t err = {0};
    gm_synth_explain_t ex;
    if (gm_synth_explain(cfg, &ex, &err) != 0)
        return gm__cli_error("'%s': %s", tname, err.msg);
    printf("where the bytes of '%s' are: at its peak (in %s, event %" PRIu64
           ") and at the end of its last forward pass\n",
           tname, gm_synth_tag_name(ex.peak_phase), ex.peak_event);
    gm__cli_table_t t;
    gm__cli_table_head(&t, "lrrrr", "class", "at the peak", "allocations", "end of forward",
                       "allocations", NULL);
    uint64_t np = 0, ne = 0;
    for (unsigned k = 0; k < GM_SYNTH_CLASS_COUNT; k++) {
        np += ex.peak_allocs[k];
        ne += ex.end_allocs[k];
        if (ex.peak_allocs[k] == 0 && ex.end_allocs[k] == 0)
            continue;
        gm__cli_table_cell(&t, "%s", gm_synth_class_name(k));
        gm__cli_table_cell(&t, "%s", gm__cli_size(ex.peak_bytes[k]));
        gm__cli_table_cell(&t, "%" PRIu64, ex.peak_allocs[k]);
        gm__cli_table_cell(&t, "%s", gm__cli_size(ex.end_bytes[k]));
        gm__cli_table_cell(&t, "%" PRIu64, ex.end_allocs[k]);
    }
    gm__cli_table_cell(&t, "total");
    gm__cli_table_cell(&t, "%s", gm__cli_size(ex.peak));
    gm__cli_table_cell(&t, "%" PRIu64, np);
    gm__cli_table_cell(&t, "%s", gm__cli_size(ex.forward_end));
    gm__cli_table_cell(&t, "%" PRIu64, ne);
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
    return 0;
}

int gm__cmd_synth(int argc, char **argv)
{
    gm_workload_config_t rcfg;
    gm_workload_config_default(&rcfg);
    gm__synth_opts_t so;
    gm__synth_opts_init(&so);
    const char *workload = NULL, *db = NULL, *name = NULL;
    unsigned flags = 0;
    int rc = 0, random_opts = 0, seed = 0, explain = 0;
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("workload", 'w', GM__CLI_STR, &workload),
        GM__CLI_OPT("events", 'e', GM__CLI_U64, &rcfg.events, .seen = &random_opts),
        GM__CLI_OPT("live-max", 0, GM__CLI_SIZE, &rcfg.live_max, .seen = &random_opts),
        GM__CLI_OPT("seed", 's', GM__CLI_U64, &rcfg.seed, .seen = &seed), /* both seeds */
        GM__CLI_OPT("output", 'o', GM__CLI_STR, &db),
        GM__CLI_OPT("name", 'n', GM__CLI_STR, &name),
        GM__CLI_OPT("replace", 0, GM__CLI_BITS, &flags, .bits = GM__CLI_REPLACE),
        GM__CLI_OPT("json", 0, GM__CLI_BITS, &flags, .bits = GM__CLI_JSON),
        GM__CLI_OPT("explain", 0, GM__CLI_FLAG, &explain),
        GM__SYNTH_OPTS(&so),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, synth_usage, argc, argv, &rc))
        goto out;
    if (seed)
        so.run.seed = rcfg.seed;
    so.any_model = so.first != NULL; /* every shared option is a model workload's */
    if (so.list_models) {
        rc = gm__synth_list_models(flags & GM__CLI_JSON);
        goto out;
    }
    if (optind < argc) {
        rc = gm__cli_usage_error(synth_usage, "too many arguments: '%s'", argv[optind]);
        goto out;
    }
    if (workload == NULL)
        workload = so.any_model ? "model" : "random";
    const synth_workload_t *wl = NULL;
    for (size_t i = 0; i < sizeof synth_workloads / sizeof synth_workloads[0]; i++)
        if (strcmp(synth_workloads[i].name, workload) == 0)
            wl = &synth_workloads[i];
    if (wl == NULL) {
        rc = gm__cli_usage_error(synth_usage, "unknown workload '%s' (known: random, model)",
                                 workload);
        goto out;
    }
    int is_model = strcmp(wl->name, "model") == 0;
    if (is_model && random_opts) {
        rc = gm__cli_usage_error(synth_usage,
                                 "--events and --live-max go with --workload random");
        goto out;
    }
    if (!is_model && so.any_model) {
        rc = gm__cli_usage_error(synth_usage, "model and run options go with --workload model");
        goto out;
    }
    if (explain && (!is_model || (flags & GM__CLI_JSON))) {
        rc = gm__cli_usage_error(synth_usage, !is_model ? "--explain goes with --workload model"
                                                        : "--explain prints a table: leave out --json");
        goto out;
    }
    if (db == NULL && !explain) {
        rc = gm__cli_usage_error(synth_usage, "missing the store to write (-o DB)");
        goto out;
    }
    if (name != NULL && name[0] == '\0') {
        rc = gm__cli_usage_error(synth_usage, "invalid value for --name: empty name");
        goto out;
    }
    if (db && (rc = gm__cli_check_output(synth_usage, db, &so.seq_file, 1)))
        goto out;
    gm_error_t err = {0};
    if (!is_model) {
        if (wl->check(&rcfg, &err) != 0) {
            rc = gm__cli_usage_error(synth_usage, "%s", err.msg);
            goto out;
        }
        rc = gm__cli_write_trace(db, name ? name : wl->name, flags, "wrote", wl->fill, &rcfg);
        goto out;
    }
    /* Every config first (usage errors before any file), then the traces. */
    size_t ntraces = so.nseqs > 1 ? so.nseqs : 1;
    gm_synth_config_t *cfgs = calloc(ntraces, sizeof *cfgs);
    if (cfgs == NULL) {
        rc = gm__cli_error("out of memory");
        goto out;
    }
    for (size_t k = 0; k < ntraces && rc == 0; k++)
        rc = gm__synth_resolve(&so, synth_usage, k, &cfgs[k]);
    for (size_t k = 0; k < ntraces && rc == 0; k++) {
        char tname[256];
        const char *base = name ? name : cfgs[k].model;
        if (ntraces > 1)
            snprintf(tname, sizeof tname, "%s.seq%" PRIu64, base, cfgs[k].seq);
        else
            snprintf(tname, sizeof tname, "%s", base);
        if (db)
            rc = gm__cli_write_trace(db, tname, flags, "synthesized", wl->fill, &cfgs[k]);
        if (rc == 0 && explain)
            rc = synth_explain(tname, &cfgs[k]);
    }
    free(cfgs);
out:
    gm__synth_opts_release(&so);
    return rc;
}
