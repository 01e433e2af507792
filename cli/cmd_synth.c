/*
 * cli/cmd_synth.c — `gmsim synth --workload random --events N --seed S
 * [--live-max BYTES] -o DB [--name NAME] [--replace]`.
 *
 * Workloads are a registry (CMD_SYNTH_WORKLOADS) so that model-config
 * synthesis can join the seeded random mix; each entry validates its
 * configuration before the store is touched (a bad --events is a usage
 * error and creates no file) and then writes through gm__cli_write_trace,
 * which leaves nothing behind on failure.
 */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "cli/cli.h"

static const char synth_usage[] =
    "usage: gmsim synth [--workload random] [--events N] [--seed S] [--live-max SIZE]\n"
    "                   -o DB [--name NAME] [--replace] [--json]\n"
    "\n"
    "Write a synthetic allocation trace into the store DB (created if missing).\n"
    "\n"
    "workloads:\n"
    "  random    a seeded random deep-learning-like mix: a few large long-lived\n"
    "            allocations, activations freed in reverse order, many small\n"
    "            short-lived temporaries, 10% of traffic on a second stream, a\n"
    "            'step' mark every 4096 events; the same seed gives the same trace\n"
    "\n"
    "options:\n"
    "  -w, --workload NAME  the workload (default random)\n"
    "  -e, --events N       exact number of events (default 100000, at least 2)\n"
    "  -s, --seed S         random seed (default 1)\n"
    "      --live-max SIZE  bound on live requested bytes (default 8GiB, at\n"
    "                       least 4KiB)\n"
    "  -o, --output DB      the store to write into (required)\n"
    "  -n, --name NAME      the trace's name (default: the workload's name)\n"
    "      --replace        replace a trace of the same name\n"
    "      --json           report the stored trace as JSON (as 'gmsim info --json')\n"
    "  -h, --help           show this help\n";

static int synth_random_check(const gm_workload_config_t *cfg, gm_error_t *err)
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

/* X(name, check, fill): check validates the config (no side effects). */
#define CMD_SYNTH_WORKLOADS(X) X(random, synth_random_check, synth_random_fill)

typedef struct synth_workload {
    const char *name;
    int (*check)(const gm_workload_config_t *cfg, gm_error_t *err);
    gm__cli_fill_fn fill;
} synth_workload_t;

static const synth_workload_t synth_workloads[] = {
#define SYNTH_ENTRY(name, check, fill) {#name, check, fill},
    CMD_SYNTH_WORKLOADS(SYNTH_ENTRY)
#undef SYNTH_ENTRY
};

int gm__cmd_synth(int argc, char **argv)
{
    enum { OPT_LIVE_MAX = 256, OPT_REPLACE, OPT_JSON };
    static const struct option longopts[] = {
        {"workload", required_argument, NULL, 'w'},
        {"events", required_argument, NULL, 'e'},
        {"seed", required_argument, NULL, 's'},
        {"live-max", required_argument, NULL, OPT_LIVE_MAX},
        {"output", required_argument, NULL, 'o'},
        {"name", required_argument, NULL, 'n'},
        {"replace", no_argument, NULL, OPT_REPLACE},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gm_workload_config_t cfg;
    gm_workload_config_default(&cfg);
    const char *workload = "random", *db = NULL, *name = NULL;
    unsigned flags = 0;
    int c, rc = 0;
    opterr = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":w:e:s:o:n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'w': workload = optarg; break;
        case 'e': rc = gm__cli_u64_arg(synth_usage, "--events", optarg, &cfg.events); break;
        case 's': rc = gm__cli_u64_arg(synth_usage, "--seed", optarg, &cfg.seed); break;
        case OPT_LIVE_MAX:
            rc = gm__cli_size_arg(synth_usage, "--live-max", optarg, &cfg.live_max);
            break;
        case 'o': db = optarg; break;
        case 'n': name = optarg; break;
        case OPT_REPLACE: flags |= GM__CLI_REPLACE; break;
        case OPT_JSON: flags |= GM__CLI_JSON; break;
        case 'h': return gm__cli_help(synth_usage);
        default: return gm__cli_option_error(synth_usage, argv, c);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return gm__cli_usage_error(synth_usage, "too many arguments: '%s'", argv[optind]);
    if (db == NULL)
        return gm__cli_usage_error(synth_usage, "missing the store to write (-o DB)");
    if (name != NULL && name[0] == '\0')
        return gm__cli_usage_error(synth_usage, "invalid value for --name: empty name");
    const synth_workload_t *wl = NULL;
    for (size_t i = 0; i < sizeof synth_workloads / sizeof synth_workloads[0]; i++)
        if (strcmp(synth_workloads[i].name, workload) == 0)
            wl = &synth_workloads[i];
    if (wl == NULL)
        return gm__cli_usage_error(synth_usage, "unknown workload '%s' (known: random)",
                                   workload);
    gm_error_t err = {0};
    if (wl->check(&cfg, &err) != 0)
        return gm__cli_usage_error(synth_usage, "%s", err.msg);
    return gm__cli_write_trace(db, name ? name : wl->name, flags, "wrote", wl->fill, &cfg);
}
