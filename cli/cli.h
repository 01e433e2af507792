/*
 * cli/cli.h — what the files of the gmsim front end share: the verb list
 * and the helpers every verb uses for messages, option errors, stores,
 * tables and writing a trace.
 *
 * Conventions (docs/cli.md): results go to stdout, diagnostics to stderr
 * as "gmsim: ERROR 'SUBJECT': DETAIL", lowercase, no full stop.  A verb
 * returns the process exit status: GM_CLI_OK, GM_CLI_ERROR (the work failed:
 * a bad file, a missing trace, a write error) or GM_CLI_USAGE (the command
 * line is wrong: an unknown option, a missing or malformed argument, an
 * unknown policy).  Each helper below that prints a diagnostic returns the
 * status to exit with, so verbs end with `return gm__cli_...(...)`.
 */
#ifndef GM_CLI_CLI_H
#define GM_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "gmsim/gmsim.h"

enum { GM_CLI_OK = 0, GM_CLI_ERROR = 1, GM_CLI_USAGE = 2 };

#if defined(__GNUC__) || defined(__clang__)
#define GM__CLI_SENTINEL __attribute__((sentinel))
#else
#define GM__CLI_SENTINEL
#endif

/* X(verb, summary): the verb table, in the order `gmsim help` lists it.
 * Each verb is `int gm__cmd_VERB(int argc, char **argv)` in cli/cmd_VERB.c,
 * called with argv[0] the verb's name. */
#define GM_CLI_VERBS(X)                                                    \
    X(import, "import traces (PyTorch snapshots, nsys, RMM, STAlloc, csv, ...)") \
    X(capture, "run a command and capture its device allocations")     \
    X(export, "write a stored trace out as csv or Perfetto JSON")       \
    X(info, "list the traces in a store")                                 \
    X(synth, "synthesize training/inference traces from a model config")   \
    X(replay, "replay a trace through simulated allocators")              \
    X(compare, "compare policies over traces, one pass per trace")        \
    X(sweep, "run traces x policies x parameters into a results store")  \
    X(merge, "combine sweep results without duplicates")                 \
    X(report, "write an HTML or Markdown report of stored runs")        \
    X(policies, "list the allocator policies and their parameters")      \
    X(estimate, "estimate a transformer job's memory, formula by formula") \
    X(fit, "find the largest batch or sequence that fits, per policy")   \
    X(scale, "predict a captured job at other sequence lengths or batch sizes") \
    X(devices, "list the GPU presets for --device")                       \
    X(calibrate, "measure a GPU's cudaMalloc/cudaFree latency into a cost profile")

#define GM__CLI_DECLARE(verb, summary) int gm__cmd_##verb(int argc, char **argv);
GM_CLI_VERBS(GM__CLI_DECLARE)
#undef GM__CLI_DECLARE

/* ---- messages ------------------------------------------------------------ */

/* Print "gmsim: MESSAGE" on stderr (stdout flushed first, so that merged
 * output stays in order); returns GM_CLI_ERROR. */
int gm__cli_error(const char *fmt, ...) GM_PRINTF(1, 2);

/* Print "gmsim: MESSAGE" and the synopsis of `usage` (its first paragraph)
 * on stderr; returns GM_CLI_USAGE. */
int gm__cli_usage_error(const char *usage, const char *fmt, ...) GM_PRINTF(2, 3);

/* The diagnostic for getopt_long's '?' (unknown option) or ':' (missing
 * value) result c (the option parser's, cli/opts.h); returns GM_CLI_USAGE. */
int gm__cli_option_error(const char *usage, char **argv, int c);

/* A progress bar on stderr for gm_replay_config_t.progress (ctx: the
 * label, a const char *), when stdout and stderr are terminals; at most ten
 * updates a second; cleared by gm__cli_status_clear. */
void gm__cli_progress(void *ctx, uint64_t done, uint64_t total);

/* ---- option values -------------------------------------------------------- */

/* Parse a size (gm_parse_size) given to option `opt`; on failure print a
 * usage error and return GM_CLI_USAGE, else 0. */
int gm__cli_size_arg(const char *usage, const char *opt, const char *text, uint64_t *out);

/* Parse an unsigned integer (decimal, or 0x hex: the strict rule of
 * gm_parse_u64, as for CSV fields) given to `opt`; as above. */
int gm__cli_u64_arg(const char *usage, const char *opt, const char *text, uint64_t *out);

/* An unsigned integer from lo to hi given to `opt` (a count: --jobs,
 * --tasks); as above. */
int gm__cli_count_arg(const char *usage, const char *opt, const char *text, uint64_t lo,
                      uint64_t hi, uint64_t *out);

/* --threads of replay, compare and sweep: the policies' threads (1 to
 * 1024, gm_replay_config_t.threads) into *out; as above. */
static inline int gm__cli_threads_arg(const char *usage, const char *text, unsigned *out)
{
    uint64_t v;
    int rc = gm__cli_count_arg(usage, "--threads", text, 1, 1024, &v);
    if (rc == 0)
        *out = (unsigned)v;
    return rc;
}

/* --threads' default: the cores available (sysconf), at least 1. */
static inline unsigned gm__cli_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 1 ? (unsigned)(n < 1024 ? n : 1024) : 1;
}

/* A device capacity given to `opt` (--capacity or --device): a size
 * (gm_parse_size, more than 0) or a GPU preset name ('gmsim devices',
 * gmsim/gpus.h); as above. */
int gm__cli_capacity_arg(const char *usage, const char *opt, const char *text, uint64_t *out);

/*
 * The device of this command, as --capacity / --device and --reserve gave
 * it (docs/cli.md, "Devices"): the total a process sees, and what the
 * process holds outside the allocator (the CUDA context: --reserve, else
 * the preset's figure, else 0 for --capacity SIZE).  The allocator gets
 * total − reserve.  gm__cli_capacity_arg and gm__cli_size_capacity_arg
 * record it (and give total − reserve at once); --reserve may come later,
 * so a verb that takes it calls gm__cli_device_usable after its options.
 */
typedef struct gm__cli_device {
    int given;                      /* a capacity was given */
    const gm_gpu_preset_t *preset;  /* --device NAME (or a preset given to --capacity) */
    uint64_t total;                 /* bytes */
    uint64_t reserve;               /* bytes outside the allocator */
    int reserve_given;              /* --reserve */
} gm__cli_device_t;

const gm__cli_device_t *gm__cli_device(void);

/* --reserve SIZE (0 allowed: nothing outside the allocator); as above. */
int gm__cli_reserve_arg(const char *usage, const char *text);

/* After the options: *capacity = total − reserve when a device was given
 * (untouched otherwise).  A --reserve without a device, or one that
 * leaves nothing, is a usage error. */
int gm__cli_device_usable(const char *usage, uint64_t *capacity);

/* "margin M = TOTAL - reserve R - peak P" (the reserve left out when 0; or
 * "short by S = peak P - (TOTAL - reserve R)"), with
 * "; at the edge: within 2% of the device" when the margin is under 2% of
 * the total, into buf; returns 1 at the edge.  The one wording of the margin
 * and the edge for replay --device, estimate and fit.  reserve <= total. */
int gm__cli_margin_of(uint64_t total, uint64_t reserve, uint64_t peak, char *buf, size_t len);

/* gm__cli_margin_of on the device given (--capacity/--device, --reserve). */
int gm__cli_margin(uint64_t peak, char *buf, size_t len);

/* The usage error of a second --capacity / --device (one capacity only). */
int gm__cli_capacity_twice(const char *usage);

/* A --capacity: a size of more than 0 bytes; as above. */
int gm__cli_size_capacity_arg(const char *usage, const char *text, uint64_t *out);

/* A device granularity given to --granularity: a size that is a power of
 * two from 1 B to GM_DEVICE_GRANULARITY_MAX; as above. */
int gm__cli_granularity_arg(const char *usage, const char *text, uint64_t *out);

/* The options of the device a verb replays on, shared by the verbs that
 * replay: the device (--capacity, --device, --reserve) and how a replay
 * runs on it (--granularity, --threads, --start); their rows of a verb's
 * option table are GM__CLI_DEVICE_OPTS and GM__CLI_RUN_OPTS (cli/opts.h). */
enum {
    GM__CLI_OPT_CAPACITY = 2000, GM__CLI_OPT_DEVICE, GM__CLI_OPT_RESERVE,
    GM__CLI_OPT_GRANULARITY, GM__CLI_OPT_THREADS, GM__CLI_OPT_START
};
/* The help of --capacity, --device, --reserve and --granularity in the
 * usage texts of compare and sweep. */
#define GM__CLI_DEVICE_HELP                                                    \
    "      --capacity SIZE     device capacity (default unlimited; a trace whose\n" \
    "                          snapshot recorded an OOM: the capacity it fixes)\n"  \
    "      --device NAME       the capacity of a GPU preset ('gmsim devices')\n"    \
    "      --reserve SIZE      held outside the allocator (the CUDA context;\n"     \
    "                          default: the preset's, 0 with --capacity): the\n"    \
    "                          policies get the capacity less this\n"               \
    "      --granularity SIZE  device allocation granularity (default 512)\n"

/* The help of --threads in the usage texts of replay and compare. */
#define GM__CLI_THREADS_HELP                                                   \
    "      --threads N         threads that run the policies, each policy on one\n" \
    "                          (default: the cores available; 1: one thread);\n"   \
    "                          the results are the same for any N\n"

/* Where those options go (a verb sets the pointers of the options it
 * takes and the two rules), and what they said. */
typedef struct gm__cli_devopts {
    uint64_t *capacity;      /* --capacity, --device: total − reserve so far */
    uint64_t *granularity;   /* --granularity */
    unsigned *threads;       /* --threads */
    const char **start;      /* --start: "recorded" or "empty" (gm__cli_start_arg) */
    int once;                /* a second capacity is a usage error */
    int presets;             /* --capacity takes a preset's name too */
    const char *device;      /* --device's preset (an alias resolved), else its
                                text; NULL when not given */
    int granularity_given;
    const char *start_given; /* --start's text; NULL when not given */
} gm__cli_devopts_t;

/* Option c (GM__CLI_OPT_*) with value arg: GM_CLI_OK, or the usage status
 * with the message printed. */
int gm__cli_devopt(gm__cli_devopts_t *o, const char *usage, int c, const char *arg);

/* The policies of --policy (compare, sweep: gm__cli_policies_fn), each
 * once; v is allocated by the first (free it), NULL while none is given. */
typedef struct gm__cli_policies {
    const gm_policy_ops_t **v;
    size_t n;
} gm__cli_policies_t;

/* The configurations of --policy and --param (every policy when none was
 * given), each added to a trial replay on `device` so that a value the
 * policy refuses is a usage error before any store is read.  GM_CLI_*
 * status; *sets and *nsets as gm_configs_expand left them (the caller
 * frees them with gm_configs_free, also on failure). */
int gm__cli_configs(const char *usage, const gm__cli_policies_t *pol,
                    const char *const *params, size_t nparams, const gm_device_config_t *device,
                    gm_params_t **sets, size_t *nsets);

/* ---- did you mean (base/text.h) -------------------------------------------- */

/* Append "; did you mean 'P'?" to msg (room len) when a policy's name (or
 * "all") is near `name`; returns msg. */
char *gm__cli_suggest_policy(const char *name, char *msg, size_t len);

/* A value of `opt` that must be one of names (NULL-terminated): its index in
 * *out, or the usage error "invalid value for OPT: 'TEXT' (HINT)" with
 * "; did you mean 'N'?" where a name is near. */
int gm__cli_choice_arg(const char *usage, const char *opt, const char *text,
                       const char *const *names, const char *hint, size_t *out);

/* ---- stores and traces ---------------------------------------------------- */

/* ---- output files (cli/output.c) -------------------------------------------- */

/*
 * Refuse an output that is one of the inputs: the same existing file, by
 * device and inode once symbolic links are followed (so a symlink or a hard
 * link is caught), or an input's -wal/-shm/-journal file.  out NULL or "-" is standard output:
 * checked when it is redirected to a regular file.  inputs may hold NULL
 * and "-" (standard input), which are skipped.  GM_CLI_OK, or a usage
 * error "cannot write 'OUT': it is the input 'IN'" (GM_CLI_USAGE).
 */
int gm__cli_check_output(const char *usage, const char *out, const char *const *inputs,
                         size_t ninputs);

/*
 * A text output (a CSV, JSON or HTML file, a profile, a script) written
 * whole or not at all (cli/output.c's header): a regular file (or a
 * missing one, or what a symlink leads to) is written to a temporary file
 * beside it and renamed over it by gm__cli_out_close once flushed and
 * fsync'd; a FIFO, device or /dev/stdout is written straight through;
 * NULL or "-" is stdout.
 */
typedef struct gm__cli_out {
    FILE *f;            /* write here */
    const char *path;   /* as given (messages); NULL for stdout */
    char *target;       /* the file replaced (symlinks followed) */
    char *tmp;          /* the temporary file, NULL when written straight through */
} gm__cli_out_t;

/* Check path against the inputs (gm__cli_check_output) and open it.
 * GM_CLI_OK, or the status with the diagnostic printed (o->f NULL). */
int gm__cli_out_open(gm__cli_out_t *o, const char *usage, const char *path,
                     const char *const *inputs, size_t ninputs);

/* Print "cannot write 'PATH': REASON" (strerror(e); e 0: input/output
 * error); returns GM_CLI_ERROR. */
int gm__cli_out_error(const gm__cli_out_t *o, int e);

/* Finish an output opened by gm__cli_out_open.  status GM_CLI_OK: flush,
 * fsync, close and rename into place, printing "cannot write 'PATH':
 * REASON" on failure (the target then untouched); any other status: the
 * temporary file is removed, the target untouched.  Returns status, or
 * GM_CLI_ERROR if finishing failed.  Does nothing when o->f is NULL. */
int gm__cli_out_close(gm__cli_out_t *o, int status);

/* A stream that writes to `real` with every C0 control byte but newline
 * and tab, and DEL, shown as \xHH: main() puts standard output behind it
 * when it is a terminal.  NULL when it cannot be made. */
FILE *gm__cli_tty_wrap(FILE *real);

/* s escaped for a terminal (gm_text_escape: control bytes as \xHH) in a static
 * rotating buffer (8 slots of 1 KiB; longer text ends in "..."): for
 * printf of user-controlled strings (trace names, attributes, tags, file
 * names). */
const char *gm__cli_s(const char *s);

/* Remove a store file this command created, with its -wal, -shm and
 * -journal companions (never call it on a store that existed before). */
void gm__cli_remove_store(const char *db);

/* Where `gmsim sweep DB` keeps its runs by default: DB with its .db
 * suffix replaced by .runs.db ("s.db" -> "s.runs.db", "s" -> "s.runs.db").
 * malloc'd (the caller frees it); NULL when out of memory. */
char *gm__cli_runs_path(const char *db);

/* Open a store, printing the library's message on failure (GM_CLI_ERROR). */
int gm__cli_open_store(const char *path, unsigned flags, gm_store_t **out);

/* The error for a --trace GLOB that matched nothing in the stores dbs[0..n)
 * (or, glob NULL, stores without traces): the names they hold, as far as
 * they fit.  GM_CLI_ERROR. */
int gm__cli_no_trace(const char *glob, char *const *dbs, size_t n);

/*
 * The trace to work on: the one --trace `name` picks (gm_trace_match: its
 * name, or a glob matching only it), else the store's only trace.  On
 * success *out is a malloc'd copy of the name (the caller frees it).  No
 * traces, or a name that picks none, is GM_CLI_ERROR; several traces and
 * no --trace, or a glob matching several, is GM_CLI_USAGE with the names
 * listed.
 */
int gm__cli_pick_trace(gm_store_t *s, const char *usage, const char *name, char **out);
/* The same, for a trace named as DB:TRACE when colon is nonzero (scale, fit
 * --from): the hint then says "choose one as 'DB:TRACE'". */
int gm__cli_pick_trace_as(gm_store_t *s, const char *usage, const char *name, int colon,
                          char **out);

/* Fills a started writer (an importer, a generator); 0 or a GM_E* code
 * with err filled.  ctx is the caller's. */
typedef int (*gm__cli_fill_fn)(gm_writer_t *w, void *ctx, gm_error_t *err);

#define GM__CLI_REPLACE 0x1u /* replace a trace of the same name */
#define GM__CLI_JSON 0x2u    /* report as JSON */

/*
 * Write trace `name` into the store at `db` (created if missing) with fill,
 * then report it on stdout: one line ("VERB 'name' into 'db': …") or, with
 * GM__CLI_JSON, {"store": DB, "trace": {…}} (the trace object of `info
 * --json`).  On any failure the diagnostic is printed, the writer is
 * aborted and, if db did not exist before, the files it created are
 * removed, so a failed import leaves nothing behind.  An existing trace of
 * that name is an error unless GM__CLI_REPLACE.  Returns the exit status.
 */
int gm__cli_write_trace(const char *db, const char *name, unsigned flags, const char *verb,
                        gm__cli_fill_fn fill, void *ctx);

/* After writing the n traces `infos` into store s (at path db): where
 * another trace of s has the same events (digest), say so on stderr, as
 * sweeps and reports take such traces as one (a run's key is the content):
 * a note for each of the first few, then how many more.  One listing of
 * the store whatever n (an import of 100,000 traces stays linear).  Only a
 * note: a store that cannot be listed is passed over. */
void gm__cli_same_content(gm_store_t *s, const char *db, const gm_trace_info_t *infos, size_t n);

/* The member key of the open JSON object j: v, or null when v is 0 (none). */
void gm__cli_json_nonzero(gm_json_t *j, const char *key, uint64_t v);

/* Write one trace's summary as a JSON object (the shape of `info --json`). */
void gm__cli_json_trace(gm_json_t *j, const gm_trace_info_t *t);

/* ---- output helpers ------------------------------------------------------- */

/* A one-line status on stderr ("replaying …") shown only when stdout and
 * stderr are both terminals; gm__cli_status_clear erases it. */
void gm__cli_status(const char *fmt, ...) GM_PRINTF(1, 2);
void gm__cli_status_clear(void);

/* A text table: cells are added row by row (the first row is the header)
 * and printed with each column as wide as its widest cell, separated by
 * two spaces.  align has one letter per column: 'l' or 'r'.  Out of memory
 * aborts the process (tables are small). */
typedef struct gm__cli_table {
    size_t ncols;
    size_t ncells, cap;
    char **cells;
    char *align; /* a copy of init's */
} gm__cli_table_t;

void gm__cli_table_init(gm__cli_table_t *t, size_t ncols, const char *align);
/* A table of one column per letter of align, its header row the strings
 * that follow: one per column, then NULL. */
void gm__cli_table_head(gm__cli_table_t *t, const char *align, ...) GM__CLI_SENTINEL;
/* A table of runs, one a row: "policy", "start", then the metrics
 * gm_metric_columns(flags) gives, their indices into cols (room for
 * GM__CLI_METRIC_COLS, at least gm_metric_count()); returns how many. */
#define GM__CLI_METRIC_COLS 64
size_t gm__cli_metric_table(gm__cli_table_t *t, unsigned flags, size_t *cols);
void gm__cli_table_cell(gm__cli_table_t *t, const char *fmt, ...) GM_PRINTF(2, 3);
void gm__cli_table_print(const gm__cli_table_t *t, FILE *f, const char *indent);
void gm__cli_table_release(gm__cli_table_t *t);

/* gm_errno_text(e) (lowercase first letter, as messages are lowercase) in a
 * static buffer, valid until the next call. */
const char *gm__cli_strerror(int e);

/* Ignore SIGXFSZ (main does, first), so that a write past the file-size
 * limit fails with EFBIG instead of killing the process; a child about to
 * exec another program calls gm__cli_restore_xfsz to give it back the
 * disposition gmsim was started with. */
void gm__cli_ignore_xfsz(void);
void gm__cli_restore_xfsz(void);

/* gm_format_size into a static rotating buffer (8 slots): for printf. */
const char *gm__cli_size(uint64_t bytes);

/* A planner's plan, one line on stdout: "'NAME' plan: optimal, 1 MiB (proved:
 * no plan needs fewer bytes)", or the gap to the lower bound when not
 * proved; then the capacity asked, met or not (docs/metrics.md, "The
 * plan").  name is printed escaped. */
void gm__cli_plan_line(const char *name, const gm_plan_info_t *pi);

/* ---- the real GPU (cli/gpu.c) --------------------------------------------- */

/* --on gpu[:N]: gm__cli_on_fn (cli/opts.h). */

/* What the GPU measured beside what was simulated: a table, or (json) the
 * members "device" and "measured" of the open JSON object j. */
void gm__cli_gpu_table(const gm_gpu_measured_t *m, const gm_metrics_t *sim, uint64_t load,
                       const char *policy);
void gm__cli_gpu_json(gm_json_t *j, const gm_gpu_measured_t *m, const gm_metrics_t *sim);

/* ---- advice (cli/advice.c; gmsim/advice.h) --------------------------------- */

/* Warm and cold beside the recorded figure, for `policy` with the
 * parameters `given` ("caching.conf=…"), and a warning on stderr when they
 * cannot act. */
void gm__cli_start_print(const char *policy, const char *given, const gm_start_compare_t *c);

/* "recommendation: …" (nothing for a trace that is not PyTorch's), or the
 * member "pytorch" of the open JSON object j. */
void gm__cli_torch_print(const gm_torch_advice_t *a);
void gm__cli_torch_json(gm_json_t *j, const gm_torch_advice_t *a);

/* The blockers of a run's first OOM and the settings that fit: text, or
 * the member "oom" of the open JSON object j (each block's site and its
 * whole stack, "frames"). */
void gm__cli_oom_print(const gm_oom_report_t *o);
void gm__cli_oom_json(gm_json_t *j, const gm_oom_report_t *o);

/* A capacity a trace's recorded OOM fixed (gm_replay_config_at_oom): ",
 * capacity SIZE (from the recorded OOM: ...)" after a trace's first line;
 * a run's line "'LABEL': the recorded OOM asked again: ..." (nothing when
 * none was asked), or its member "recorded_ooms" of the open JSON object j. */
void gm__cli_oom_capacity_note(uint64_t capacity);
void gm__cli_oom_asked(const char *label, uint64_t asked, uint64_t failed);
void gm__cli_oom_asked_json(gm_json_t *j, uint64_t asked, uint64_t failed);

/* "'LABEL' ran out of memory N times, first at event E" (nothing without OOMs). */
void gm__cli_oom_count(const char *label, const gm_metrics_t *m);

#endif
