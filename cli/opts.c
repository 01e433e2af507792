/*
 * cli/opts.c — the one option parser of the verbs (see cli/opts.h): the
 * rows of a verb's table, its included tables' after its own, become
 * getopt_long's long options (the value of row i is 256 + i, or its letter)
 * and optstring; each option found is read by its row's kind.
 */
#include "cli/opts.h"

#include <assert.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

/* The most options a verb has, included ones counted. */
enum { OPTS_MAX = 96, OPTS_INCLUDES = 4 };

typedef struct opts_built {
    struct option longopts[OPTS_MAX + 2];        /* and --help, and the end */
    const gm__cli_opt_t *row[OPTS_MAX];
    void *to[OPTS_MAX];
    size_t n;
    char optstring[2 * OPTS_MAX + 8];
    const char *help[OPTS_INCLUDES];            /* of the tables included */
    size_t nhelp;
} opts_built_t;

static int opts_takes_value(const gm__cli_opt_t *r)
{
    switch (r->kind) {
    case GM__CLI_FLAG:
    case GM__CLI_BITS: return 0;
    case GM__CLI_CALL: return r->value;
    default: return 1;
    }
}

/* The end of a table (an included table's row has no name either). */
static int opts_end(const gm__cli_opt_t *r)
{
    return r->name == NULL && r->kind != GM__CLI_INCLUDE;
}

static int opts_has(const opts_built_t *b, const char *name)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->row[i]->name, name) == 0)
            return 1;
    return 0;
}

/* The rows of t (their `to` NULL: to), those of its includes after them. */
static void opts_add(opts_built_t *b, const gm__cli_opt_t *t, void *to)
{
    for (const gm__cli_opt_t *r = t; !opts_end(r); r++) {
        if (r->kind == GM__CLI_INCLUDE || opts_has(b, r->name))
            continue;
        assert(b->n < OPTS_MAX);
        size_t i = b->n++;
        b->row[i] = r;
        b->to[i] = r->to ? r->to : to;
        b->longopts[i] = (struct option){r->name, opts_takes_value(r) ? required_argument
                                                                       : no_argument,
                                         NULL, r->letter ? r->letter : 256 + (int)i};
        if (r->letter) {
            size_t k = strlen(b->optstring);
            b->optstring[k++] = (char)r->letter;
            if (opts_takes_value(r))
                b->optstring[k++] = ':';
            b->optstring[k] = '\0';
        }
    }
    for (const gm__cli_opt_t *r = t; !opts_end(r); r++)
        if (r->kind == GM__CLI_INCLUDE) {
            assert(b->nhelp < OPTS_INCLUDES);
            if (r->help)
                b->help[b->nhelp++] = r->help;
            opts_add(b, r->rows, r->to);
        }
}

const char *gm__cli_opt_name(const gm__cli_opt_t *row, char *buf, size_t len)
{
    snprintf(buf, len, "--%s", row->name);
    return buf;
}

int gm__cli_json_only(int argc, char **argv, const char *usage, int *json, int *args,
                      int *status)
{
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("json", 0, GM__CLI_FLAG, json),
        GM__CLI_OPTS_END,
    };
    *json = 0;
    if (gm__cli_parse(opts, usage, argc, argv, status))
        return 1;
    if (args == NULL && optind < argc) {
        *status = gm__cli_usage_error(usage, "too many arguments: '%s'", argv[optind]);
        return 1;
    }
    if (args)
        *args = optind;
    return GM_CLI_OK;
}

int gm__cli_args_add(gm__cli_args_t *a, const char *usage, const gm__cli_opt_t *row,
                     const char *arg)
{
    if (a->n == GM__CLI_ARGS_MAX)
        return gm__cli_usage_error(usage, "too many --%s (at most %d)", row->name,
                                   GM__CLI_ARGS_MAX);
    a->v[a->n++] = arg;
    return GM_CLI_OK;
}

/* Option i of b with value arg: the status. */
static int opts_read(const opts_built_t *b, size_t i, const char *usage, const char *arg)
{
    const gm__cli_opt_t *r = b->row[i];
    void *to = b->to[i];
    char name[64];
    gm__cli_opt_name(r, name, sizeof name);
    switch (r->kind) {
    case GM__CLI_FLAG: *(int *)to = 1; return GM_CLI_OK;
    case GM__CLI_BITS: *(unsigned *)to |= r->bits; return GM_CLI_OK;
    case GM__CLI_STR: *(const char **)to = arg; return GM_CLI_OK;
    case GM__CLI_LIST: {
        gm__cli_list_t *l = to;
        if (GM_VEC_RESERVE(l->v, l->cap, l->n + 1, 8))
            return gm__cli_error("out of memory");
        l->v[l->n++] = arg;
        return GM_CLI_OK;
    }
    case GM__CLI_ARGS: return gm__cli_args_add(to, usage, r, arg);
    case GM__CLI_SIZE: return gm__cli_size_arg(usage, name, arg, to);
    case GM__CLI_U64: return gm__cli_u64_arg(usage, name, arg, to);
    case GM__CLI_COUNT: return gm__cli_count_arg(usage, name, arg, r->lo, r->hi, to);
    case GM__CLI_CHOICE: return gm__cli_choice_arg(usage, name, arg, r->names, r->hint, to);
    case GM__CLI_CALL: return r->fn(to, usage, r, arg);
    case GM__CLI_INCLUDE: break;
    }
    return GM_CLI_ERROR; /* not reached: included rows are resolved */
}

static int opts_parse(const gm__cli_opt_t *opts, const char *usage, int argc, char **argv,
                      int *status, const char *how)
{
    opts_built_t b;
    memset(&b, 0, sizeof b);
    snprintf(b.optstring, sizeof b.optstring, "%s:", how);
    opts_add(&b, opts, NULL);
    int own_help = opts_has(&b, "help");
    if (!own_help) {
        b.longopts[b.n] = (struct option){"help", no_argument, NULL, 'h'};
        strcat(b.optstring, "h");
    }
    *status = GM_CLI_OK;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, b.optstring, b.longopts, NULL)) != -1) {
        size_t i = 0;
        if (c >= 256) {
            i = (size_t)(c - 256);
        } else if (c == 'h' && !own_help) {
            fputs(usage, stdout);
            for (size_t k = 0; k < b.nhelp; k++)
                fputs(b.help[k], stdout);
            return 1;
        } else if (c == '?' || c == ':') {
            *status = gm__cli_option_error(usage, argv, c);
            return 1;
        } else {
            while (i < b.n && b.row[i]->letter != c)
                i++;
        }
        assert(i < b.n);
        if (b.row[i]->seen)
            *b.row[i]->seen = 1;
        if ((*status = opts_read(&b, i, usage, opts_takes_value(b.row[i]) ? optarg : NULL)) ||
            b.row[i]->letter == 'h')
            return 1;
    }
    return 0;
}

int gm__cli_parse(const gm__cli_opt_t *opts, const char *usage, int argc, char **argv,
                  int *status)
{
    return opts_parse(opts, usage, argc, argv, status, "");
}

int gm__cli_parse_to_command(const gm__cli_opt_t *opts, const char *usage, int argc,
                             char **argv, int *status)
{
    return opts_parse(opts, usage, argc, argv, status, "+");
}

int gm__cli_policies_fn(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg)
{
    gm__cli_policies_t *p = to;
    gm_error_t err = {0};
    (void)row;
    if (p->v == NULL && (p->v = calloc(gm_policy_count() + 1, sizeof *p->v)) == NULL)
        return gm__cli_error("out of memory");
    if (gm_policies_select(arg, p->v, &p->n, &err) != 0)
        return gm__cli_usage_error(usage, "%s", err.msg);
    return GM_CLI_OK;
}

int gm__cli_devopt_fn(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg)
{
    return gm__cli_devopt(to, usage, row->code, arg);
}
