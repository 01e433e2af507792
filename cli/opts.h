/*
 * cli/opts.h — a verb's options as one table: each row names an option
 * (its long name, its letter) and says what its value becomes; one parser
 * (cli/opts.c) makes getopt_long's table and optstring from the rows, reads
 * every value with the same checks and messages (cli.h's gm__cli_*_arg),
 * answers --help and reports an unknown option or a missing value.
 *
 *     const char *output = NULL;
 *     int json = 0, rc;
 *     uint64_t reps = 20;
 *     const gm__cli_opt_t opts[] = {
 *         GM__CLI_OPT("output", 'o', GM__CLI_STR, &output),
 *         GM__CLI_OPT("reps", 0, GM__CLI_COUNT, &reps, .lo = 1, .hi = 100000),
 *         GM__CLI_OPT("json", 0, GM__CLI_FLAG, &json),
 *         GM__CLI_OPTS_END,
 *     };
 *     if (gm__cli_parse(opts, usage, argc, argv, &rc))
 *         return rc;            (after --help: 0; after an error: its status)
 *     ... argv[optind] is the first argument
 *
 * --help and -h are every verb's: they print the usage text (and the help
 * of the tables included), unless the verb's table has a row of its own
 * for them (a GM__CLI_CALL that prints more); the options end there.  The usage text lists every long option; an
 * unknown one is answered with the nearest of them (gm__cli_option_error).
 * Options shared by several verbs are tables or row macros of their own,
 * included by reference: the device and run options below, the model
 * options of cli/synthopt.h.
 */
#ifndef GM_CLI_OPTS_H
#define GM_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"

typedef struct gm__cli_opt gm__cli_opt_t;

/* The handler of a GM__CLI_CALL row: the value `arg` (NULL for an option
 * that takes none) of option `row` into `to` (the row's, or the including
 * row's).  GM_CLI_OK, or the status with its message printed. */
typedef int (*gm__cli_opt_fn)(void *to, const char *usage, const gm__cli_opt_t *row,
                              const char *arg);

typedef enum gm__cli_opt_kind {
    GM__CLI_FLAG,    /* no value: *(int *)to = 1 */
    GM__CLI_BITS,    /* no value: *(unsigned *)to |= bits */
    GM__CLI_STR,     /* *(const char **)to = the value (the last given wins) */
    GM__CLI_LIST,    /* the value appended to *(gm__cli_list_t *)to */
    GM__CLI_ARGS,    /* the value appended to *(gm__cli_args_t *)to (gm__cli_args_add) */
    GM__CLI_SIZE,    /* *(uint64_t *)to: a size (gm__cli_size_arg) */
    GM__CLI_U64,     /* *(uint64_t *)to: an unsigned integer (gm__cli_u64_arg) */
    GM__CLI_COUNT,   /* *(uint64_t *)to: from lo to hi (gm__cli_count_arg) */
    GM__CLI_CHOICE,  /* *(size_t *)to: the value's index in names (gm__cli_choice_arg) */
    GM__CLI_CALL,    /* fn(to, usage, row, value); takes a value when `value` is set */
    GM__CLI_INCLUDE, /* (a row without a name) the rows of the table `rows`, with this row's `to` where
                        theirs is NULL, and `help` printed after the usage text;
                        a row of the verb's own of the same name replaces one */
} gm__cli_opt_kind_t;

struct gm__cli_opt {
    const char *name;  /* the long name without "--"; NULL ends a table */
    int letter;        /* the short option, or 0 */
    gm__cli_opt_kind_t kind;
    void *to;          /* where the value goes */
    uint64_t lo, hi;   /* COUNT */
    const char *const *names; /* CHOICE: the values (NULL-terminated) */
    const char *hint;         /* CHOICE: what the values are, for the message */
    unsigned bits;            /* BITS */
    gm__cli_opt_fn fn;        /* CALL */
    int value;                /* CALL: the option takes a value */
    int code;                 /* CALL: which option, for a handler of several */
    const gm__cli_opt_t *rows; /* INCLUDE */
    const char *help;          /* INCLUDE */
    int *seen;                 /* any kind: set to 1 when the option is given */
};

/* A row: the long name, the letter (or 0), the kind and where the value
 * goes, then what the kind needs (.lo = 1, .hi = 64; .fn = ...). */
#define GM__CLI_OPT(long_name, short_letter, what, where, ...) \
    {.name = long_name, .letter = short_letter, .kind = what, .to = where, __VA_ARGS__}
#define GM__CLI_OPTS_END {.name = NULL}

/* The values of a GM__CLI_LIST option, in order; free(v) when done. */
typedef struct gm__cli_list {
    const char **v;
    size_t n, cap;
} gm__cli_list_t;

/*
 * Options of a verb whose only option is --json (besides --help): *json is
 * set and *args gets the index of the first argument (args NULL: the verb
 * takes none, and one is a usage error).  Returns GM_CLI_OK to go on;
 * otherwise the verb returns *status at once (after --help, 0; after an
 * option or argument error, the usage status).
 */
int gm__cli_json_only(int argc, char **argv, const char *usage, int *json, int *args,
                      int *status);

/* At most GM__CLI_ARGS_MAX values of an option, in order (no memory to free). */
#define GM__CLI_ARGS_MAX 64
typedef struct gm__cli_args {
    const char *v[GM__CLI_ARGS_MAX];
    size_t n;
} gm__cli_args_t;

/* Append arg to a, or the usage error "too many --NAME (at most 64)". */
int gm__cli_args_add(gm__cli_args_t *a, const char *usage, const gm__cli_opt_t *row,
                     const char *arg);

/*
 * Read the options of argv (argv[0] the verb) by the table opts.  Returns
 * 0 to go on, optind at the first argument (options and arguments may
 * mix; "--" ends the options); else the verb stops and returns *status:
 * GM_CLI_OK after --help, the status of the first bad option (its message
 * printed) otherwise.
 */
int gm__cli_parse(const gm__cli_opt_t *opts, const char *usage, int argc, char **argv,
                  int *status);

/* The same, the options ending at the first argument (a command to run,
 * whose own options are not gmsim's). */
int gm__cli_parse_to_command(const gm__cli_opt_t *opts, const char *usage, int argc,
                             char **argv, int *status);

/* The option's name as messages write it: "--NAME". */
const char *gm__cli_opt_name(const gm__cli_opt_t *row, char *buf, size_t len);

/* The device of a replay (--capacity, --device, --reserve) and how the
 * replay runs on it (--granularity, --threads, --start): rows into the
 * gm__cli_devopts_t at `dev` (gm__cli_devopt, cli/cli.h). */
int gm__cli_devopt_fn(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg);
#define GM__CLI_DEVOPT_ROW(long_name, option, dev) \
    GM__CLI_OPT(long_name, 0, GM__CLI_CALL, dev, .fn = gm__cli_devopt_fn, .value = 1, .code = option)
#define GM__CLI_DEVICE_OPTS(dev)                                   \
    GM__CLI_DEVOPT_ROW("capacity", GM__CLI_OPT_CAPACITY, dev),     \
    GM__CLI_DEVOPT_ROW("device", GM__CLI_OPT_DEVICE, dev),         \
    GM__CLI_DEVOPT_ROW("reserve", GM__CLI_OPT_RESERVE, dev)
#define GM__CLI_RUN_OPTS(dev)                                      \
    GM__CLI_DEVOPT_ROW("granularity", GM__CLI_OPT_GRANULARITY, dev), \
    GM__CLI_DEVOPT_ROW("threads", GM__CLI_OPT_THREADS, dev),       \
    GM__CLI_DEVOPT_ROW("start", GM__CLI_OPT_START, dev)

/* --policy P[,P...] of compare and sweep: the policies named (or all) added
 * to the gm__cli_policies_t at `to` (cli/cli.h), each once
 * (gm_policies_select). */
int gm__cli_policies_fn(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg);

/* --on gpu[:N]: the device number ("gpu" is 0) into the int at `to`. */
int gm__cli_on_fn(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg);

#endif
