/*
 * cli/cmd_import.c — `gmsim import FILE... -o DB [--format FMT] [--name NAME]
 * [--mem-kinds LIST] [--attr KEY=VALUE]... [--replace] [--json]`.
 *
 * Import formats are the library's registry (gm_format_at, in
 * formats/registry.c): each has a name, a one-line description, an
 * importer (a gm_import_fn) and a content sniffer for `--format auto` (the
 * default), tried in list order.
 *
 * Each FILE is read in turn:
 *   1. it is opened by gm_import_input_open (formats/input.c): gzip data
 *      inflated, a non-seekable input spooled to a temporary file, its
 *      head read;
 *   2. the format is detected from the head unless --format
 *      (gm_import_input_detect);
 *   3. the importer writes through an import target: one transaction, so a
 *      file that fails leaves nothing of itself in the store.
 * A failing FILE is reported (file and place) and the next FILE is
 * imported all the same; the command exits 1 if any failed, and the
 * traces of the files that imported are kept.  A store the command created
 * is removed if nothing at all was imported into it.
 *
 * Traces are named after the file's base name without ".gz" and then
 * without its last extension ("runs/step1.csv.gz" → "step1") unless --name
 * (one FILE only); stdin gives "stdin".  An importer writing several traces
 * (devices, processes) adds suffixes ("run.dev1").  Two files of one
 * command may not give the same trace name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "gmsim/formats.h"
#include "gmsim/capture.h"
#include "gmsim/import.h"
#include "base/vec.h"

static const char import_usage[] =
    "usage: gmsim import FILE... -o DB [--format FMT] [--name NAME] [--mem-kinds LIST]\n"
    "                    [--attr KEY=VALUE]... [--replace] [--json]\n"
    "\n"
    "Read trace files and store them as traces in the store DB (created if\n"
    "missing).  FILE '-' reads standard input; gzip'd files are read as they\n"
    "are.  Each file is one unit: a file that fails leaves nothing of itself,\n"
    "the other files are imported all the same, and the exit status is 1.\n"
    "A directory is read as a capture's spool directory (docs/capture.md).\n"
    "\n"
    "options:\n"
    "  -o, --output DB     the store to write into (required)\n"
    "  -f, --format FMT    the input format: auto (the default: detect it from\n"
    "                      the content) or one of the formats below\n"
    "  -n, --name NAME     the trace's name (one FILE only; default: FILE's\n"
    "                      base name without .gz and its extension, 'stdin'\n"
    "                      for standard input); several traces of one file\n"
    "                      get suffixes: NAME.dev1, NAME.pid42.dev0\n"
    "      --mem-kinds LIST\n"
    "                      nsys: the memory kinds to keep, comma-separated:\n"
    "                      pageable, pinned, device, array, managed,\n"
    "                      device_static, managed_static, unknown, or all\n"
    "                      (default: device)\n"
    "      --attr KEY=VALUE\n"
    "                      set attribute KEY of every trace imported (after the\n"
    "                      importer's own); VALUE is JSON when it is a JSON\n"
    "                      value (seq_len=128), else a string; may be repeated\n"
    "      --replace       replace traces of the same names\n"
    "      --json          report the stored traces as JSON: {\"store\": DB,\n"
    "                      \"traces\": [...]} (each as 'gmsim info --json')\n"
    "  -h, --help          show this help\n"
    "\n"
    "formats (docs/formats.md), detected in this order:\n";

/* "auto, csv, …" for messages. */
static void import_format_names(char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "auto");
    for (size_t i = 0; i < gm_format_count() && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, ", %s", gm_format_at(i)->name);
}

/* --help: the usage text and the formats of the registry. */
static int import_help(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg)
{
    (void)to, (void)row, (void)arg;
    fputs(usage, stdout);
    for (size_t i = 0; i < gm_format_count(); i++)
        printf("  %-9s%s\n", gm_format_at(i)->name, gm_format_at(i)->help);
    return GM_CLI_OK;
}

/* --attr KEY=VALUE, into a gm__cli_args_t. */
static int import_attr_arg(void *to, const char *usage, const gm__cli_opt_t *row,
                           const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg)
        return gm__cli_usage_error(usage, "invalid value for --attr: '%s' (KEY=VALUE)", arg);
    return gm__cli_args_add(to, usage, row, arg);
}

/* ---- one input ------------------------------------------------------------- */

/* The default trace name: the base name without ".gz", then without its
 * last extension. */
static char *import_default_name(const char *path)
{
    if (strcmp(path, "-") == 0)
        return strdup("stdin");
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *name = strdup(*base ? base : path);
    if (name == NULL)
        return NULL;
    size_t n = strlen(name);
    if (n > 3 && strcmp(name + n - 3, ".gz") == 0)
        name[n - 3] = '\0';
    char *dot = strrchr(name, '.');
    if (dot != NULL && dot != name)
        *dot = '\0';
    return name;
}

/* ---- the command ------------------------------------------------------------ */

typedef struct import_run {
    gm_store_t *s;
    const char *db;
    unsigned store_flags; /* GM_WRITE_REPLACE */
    gm_import_options_t opts;
    const char *format, *name;
    int json;
    char **names;   /* traces imported by this command */
    char **sources; /* the file each came from */
    size_t n, names_cap, sources_cap;
} import_run_t;

/* The one-line report of an imported trace (the line gm__cli_write_trace
 * prints for one trace). */
static void import_report(const char *db, const gm_trace_info_t *info)
{
    printf("imported '%s' into '%s': %" PRIu64 " events (%" PRIu64 " allocs, %" PRIu64
           " frees, %" PRIu64 " marks), load %s",
           gm__cli_s(info->name), gm__cli_s(db), info->events, info->allocs, info->frees, info->marks,
           gm__cli_size(info->load));
    if (info->dropped)
        printf(", %" PRIu64 " zero-size request%s dropped", info->dropped,
               info->dropped == 1 ? "" : "s");
    putchar('\n');
}

static int import_remember(import_run_t *run, const char *name, const char *source)
{
    if (GM_VEC_RESERVE(run->names, run->names_cap, run->n + 1, 8) ||
        GM_VEC_RESERVE(run->sources, run->sources_cap, run->n + 1, 8))
        return -1;
    if ((run->names[run->n] = strdup(name)) == NULL)
        return -1;
    if ((run->sources[run->n] = strdup(source)) == NULL) {
        free(run->names[run->n]);
        return -1;
    }
    run->n++;
    return 0;
}

/* Import one FILE as one unit; GM_CLI_OK or GM_CLI_ERROR (printed). */
/* A spool directory left by `gmsim capture` (gmsim/capture.h): every spool
 * in it, all or nothing, each named after its process. */
static int import_spool_dir(import_run_t *run, const char *path)
{
    if (run->name != NULL)
        return gm__cli_error("cannot name the traces of spool directory '%s' (--name): they "
                             "are named after their processes", path);
    gm_spool_dir_result_t res;
    gm_error_t err = {0};
    gm__cli_status("importing the spools of '%s'...", path);
    int rc = gm_spool_import_dir(run->s, path, run->store_flags, &res, &err);
    gm__cli_status_clear();
    if (rc != 0)
        return gm__cli_error("%s", err.msg);
    for (size_t i = 0; i < res.n && rc == 0; i++) {
        if (import_remember(run, res.names[i], path) != 0) {
            rc = gm__cli_error("out of memory");
            break;
        }
        gm_trace_info_t info;
        if (!run->json && gm_store_find(run->s, res.names[i], &info, &err) == 0) {
            import_report(run->db, &info);
            gm__cli_same_content(run->s, run->db, &info, 1);
            gm_trace_info_release(&info);
        }
    }
    if (rc == 0 && res.n == 0)
        rc = gm__cli_error("'%s': no process in it made a device allocation", path);
    gm_spool_dir_result_release(&res);
    return rc;
}

/* 1 when the traces t wrote (read inside the import's transaction) hold
 * no event at all: the library takes an empty input as an empty trace,
 * the command refuses it rather than store a trace nothing can replay.
 * A trace it cannot read counts as holding events (the commit says why). */
static int import_no_events(gm_store_t *s, const gm_import_target_t *t)
{
    for (size_t i = 0; i < gm_import_count(t); i++) {
        gm_trace_info_t info;
        if (gm_store_find(s, gm_import_name(t, i), &info, NULL) != 0)
            return 0;
        uint64_t events = info.events;
        gm_trace_info_release(&info);
        if (events)
            return 0;
    }
    return 1;
}

static int import_file(import_run_t *run, const char *path)
{
    struct stat sb;
    if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return import_spool_dir(run, path);
    gm_import_input_t ii;
    gm_error_t err = {0};
    if (gm_import_input_open(path, &ii, &err) != 0)
        return gm__cli_error("%s", err.msg);
    const gm_format_t *fmt = strcmp(run->format, "auto") == 0 ? gm_import_input_detect(&ii, &err)
                                                              : gm_format_find(run->format);
    char *owned = NULL;
    const char *name = run->name;
    if (fmt == NULL) {
        gm_import_input_close(&ii);
        return gm__cli_error("%s", err.msg);
    }
    if (name == NULL && (name = owned = import_default_name(path)) == NULL) {
        gm_import_input_close(&ii);
        return gm__cli_error("out of memory");
    }
    gm_import_target_t *t = NULL;
    gm_import_options_t opts = run->opts;
    if (strcmp(path, "-") != 0)
        opts.file = path;
    int rc = gm_import_target_create(run->s, name, run->store_flags, &t, &err);
    if (rc == 0) {
        gm_import_set_options(t, &opts);
        gm__cli_status("importing '%s' (%s)...", ii.shown, fmt->name);
        rc = fmt->import(ii.in, ii.shown, t, &err);
        gm__cli_status_clear();
        if (rc == 0 && gm_import_count(t) == 0)
            rc = gm_error_set(&err, GM_EFORMAT, "'%s': no trace in it", ii.shown);
        if (rc == 0 && import_no_events(run->s, t))
            rc = gm_error_set(&err, GM_EFORMAT,
                              "'%s': no events in it: nothing to import",
                              ii.shown);
        /* Two files of one command may not write the same trace. */
        for (size_t i = 0; rc == 0 && i < gm_import_count(t); i++)
            for (size_t k = 0; rc == 0 && k < run->n; k++)
                if (strcmp(gm_import_name(t, i), run->names[k]) == 0)
                    rc = gm_error_set(&err, GM_EEXIST,
                                      "trace '%s' of '%s' is already imported from '%s' (give "
                                      "the files different names)",
                                      run->names[k], ii.shown, run->sources[k]);
        /* A name taken by an earlier file of this command: say so. */
        for (size_t k = 0; rc == GM_EEXIST && k < run->n; k++) {
            char quoted[GM_ERROR_MSG_MAX];
            snprintf(quoted, sizeof quoted, "trace '%s' ", run->names[k]);
            if (strstr(err.msg, quoted) == err.msg)
                gm_error_set(&err, GM_EEXIST,
                             "trace '%s' of '%s' is already imported from '%s' (give the files "
                             "different names)",
                             run->names[k], ii.shown, run->sources[k]);
        }
        size_t count = rc == 0 ? gm_import_count(t) : 0;
        char **names = count ? calloc(count, sizeof *names) : NULL;
        /* The summaries are read inside the import's transaction (one read
         * of the store, not one per trace) and printed once it commits. */
        gm_trace_info_t *infos = count && !run->json ? calloc(count, sizeof *infos) : NULL;
        char *found = infos ? calloc(count, 1) : NULL;
        for (size_t i = 0; names && i < count; i++) {
            names[i] = strdup(gm_import_name(t, i));
            if (found && names[i] && gm_store_find(run->s, names[i], &infos[i], NULL) == 0)
                found[i] = 1;
        }
        if (rc == 0) {
            rc = gm_import_commit(t, &err);
        } else {
            gm_import_abort(t);
        }
        t = NULL;
        for (size_t i = 0; rc == 0 && i < count; i++) {
            if (names == NULL || names[i] == NULL || import_remember(run, names[i], ii.shown)) {
                rc = gm_error_set(&err, GM_ENOMEM, "out of memory");
                break;
            }
            if (!run->json) {
                if (found && !found[i] &&
                    gm_store_find(run->s, names[i], &infos[i], &err) == 0)
                    found[i] = 1;
                if (found && found[i])
                    import_report(run->db, &infos[i]);
            }
        }
        /* Found ones first: infos may have gaps where a find failed. */
        size_t nfound = 0;
        for (size_t i = 0; rc == 0 && found && i < count; i++)
            if (found[i] && nfound != i) {
                gm_trace_info_t tmp = infos[nfound];
                infos[nfound] = infos[i];
                infos[i] = tmp;
                found[nfound] = 1;
                found[i] = 0;
                nfound++;
            } else if (found[i]) {
                nfound++;
            }
        if (rc == 0 && nfound)
            gm__cli_same_content(run->s, run->db, infos, nfound);
        for (size_t i = 0; names && i < count; i++)
            free(names[i]);
        free(names);
        for (size_t i = 0; found && i < count; i++)
            if (found[i])
                gm_trace_info_release(&infos[i]);
        free(infos);
        free(found);
    }
    gm_import_input_close(&ii);
    free(owned);
    if (rc != 0) {
        gm__cli_error("%s", err.msg);
        if (rc == GM_EEXIST && run->store_flags == 0 && strstr(err.msg, "already exists"))
            fputs("hint: use --replace to overwrite it\n", stderr);
        return GM_CLI_ERROR;
    }
    return GM_CLI_OK;
}

/* {"store": DB, "traces": [...]} for the traces imported. */
static void import_json(const import_run_t *run)
{
    gm_json_t j;
    gm_json_init(&j, stdout, 1);
    gm_json_begin_object(&j);
    gm_json_kv_str(&j, "store", run->db);
    gm_json_key(&j, "traces");
    gm_json_begin_array(&j);
    for (size_t i = 0; i < run->n; i++) {
        gm_trace_info_t info;
        gm_error_t err = {0};
        if (gm_store_find(run->s, run->names[i], &info, &err) == 0) {
            gm__cli_json_trace(&j, &info);
            gm_trace_info_release(&info);
        }
    }
    gm_json_end_array(&j);
    gm_json_end_object(&j);
    gm_json_finish(&j);
}

int gm__cmd_import(int argc, char **argv)
{
    import_run_t run = {.format = "auto"};
    const char *mem_kinds = NULL;
    gm__cli_args_t attrs = {.n = 0};
    int rc;
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("output", 'o', GM__CLI_STR, &run.db),
        GM__CLI_OPT("format", 'f', GM__CLI_STR, &run.format),
        GM__CLI_OPT("name", 'n', GM__CLI_STR, &run.name),
        GM__CLI_OPT("mem-kinds", 0, GM__CLI_STR, &mem_kinds),
        GM__CLI_OPT("attr", 0, GM__CLI_CALL, &attrs, .fn = import_attr_arg, .value = 1),
        GM__CLI_OPT("replace", 0, GM__CLI_BITS, &run.store_flags, .bits = GM_WRITE_REPLACE),
        GM__CLI_OPT("json", 0, GM__CLI_FLAG, &run.json),
        GM__CLI_OPT("help", 'h', GM__CLI_CALL, NULL, .fn = import_help),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, import_usage, argc, argv, &rc))
        return rc;
    run.opts.attrs = attrs.v;
    run.opts.nattrs = attrs.n;
    if (optind >= argc)
        return gm__cli_usage_error(import_usage, "missing the file to import");
    if (run.db == NULL)
        return gm__cli_usage_error(import_usage, "missing the store to write (-o DB)");
    if (run.name != NULL && run.name[0] == '\0')
        return gm__cli_usage_error(import_usage, "invalid value for --name: empty name");
    if (run.name != NULL && argc - optind > 1)
        return gm__cli_usage_error(import_usage, "--name names one file's traces; %d files given",
                                   argc - optind);
    if (strcmp(run.format, "auto") != 0 && gm_format_find(run.format) == NULL) {
        char names[128];
        import_format_names(names, sizeof names);
        return gm__cli_usage_error(import_usage, "unknown format '%s' (known: %s)", run.format,
                                   names);
    }
    if (mem_kinds != NULL) {
        gm_error_t err = {0};
        if (gm_nsys_parse_mem_kinds(mem_kinds, &run.opts.mem_kinds, &err) != 0)
            return gm__cli_usage_error(import_usage, "invalid value for --mem-kinds: %s", err.msg);
    }
    int nstdin = 0;
    for (int i = optind; i < argc; i++)
        nstdin += strcmp(argv[i], "-") == 0;
    if (nstdin > 1)
        return gm__cli_usage_error(import_usage, "standard input ('-') given %d times", nstdin);

    if (run.db[0] == '\0' || strcmp(run.db, ":memory:") == 0)
        return gm__cli_error("cannot write to '%s': a store is a file; give its name", run.db);
    int same = gm__cli_check_output(import_usage, run.db, (const char *const *)argv + optind,
                                    (size_t)(argc - optind));
    if (same)
        return same;
    struct stat st;
    int existed = stat(run.db, &st) == 0;
    gm_error_t err = {0};
    if (gm_store_open(run.db, GM_STORE_WRITE, &run.s, &err) != 0) {
        if (!existed)
            gm__cli_remove_store(run.db);
        return gm__cli_error("%s", err.msg);
    }
    rc = GM_CLI_OK;
    for (int i = optind; i < argc; i++)
        if (import_file(&run, argv[i]) != GM_CLI_OK)
            rc = GM_CLI_ERROR;
    if (run.json && run.n > 0)
        import_json(&run);
    gm_store_close(run.s);
    if (run.n == 0 && !existed)
        gm__cli_remove_store(run.db);
    for (size_t i = 0; i < run.n; i++) {
        free(run.names[i]);
        free(run.sources[i]);
    }
    free(run.names);
    free(run.sources);
    return rc;
}
