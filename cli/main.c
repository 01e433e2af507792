/*
 * cli/main.c — the gmsim command: a table of verbs, git style.
 *
 * `gmsim VERB [options] [args]` runs cli/cmd_VERB.c's handler with argv
 * starting at the verb.  The table is generated from GM_CLI_VERBS
 * (cli/cli.h), so adding a verb is one line there and one file.  Besides the
 * verbs: `gmsim help [VERB]`, `--help`/`-h`, `--version`.
 *
 * main also owns the last check every verb needs: results are written to
 * stdout, and a write error there (a full disk, a closed pipe) must not pass
 * as success, so stdout is flushed and checked before exiting.  It ignores
 * SIGXFSZ first: past a file-size limit (ulimit -f) a write then fails with
 * EFBIG, which each verb reports ("file too large", the file named) like
 * any write error, instead of the process dying with no message.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/text.h"

typedef struct main_verb {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} main_verb_t;

static const main_verb_t main_verbs[] = {
#define GM__CLI_ENTRY(verb, summary) {#verb, gm__cmd_##verb, summary},
    GM_CLI_VERBS(GM__CLI_ENTRY)
#undef GM__CLI_ENTRY
};

#define MAIN_NVERBS (sizeof main_verbs / sizeof main_verbs[0])

static const main_verb_t *main_find(const char *name)
{
    for (size_t i = 0; i < MAIN_NVERBS; i++)
        if (strcmp(main_verbs[i].name, name) == 0)
            return &main_verbs[i];
    return NULL;
}

/* "unknown verb 'NAME'", with the nearest verbs when one is near. */
static void main_unknown_verb(const char *name)
{
    gm__suggest_t s;
    gm__suggest_init(&s, name);
    for (size_t i = 0; i < MAIN_NVERBS; i++)
        gm__suggest_add(&s, main_verbs[i].name);
    gm__suggest_add(&s, "help");
    gm__suggest_add(&s, "version");
    char msg[GM_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "unknown verb '%s'", name);
    gm__cli_error("%s", gm__suggest_append(&s, msg, sizeof msg));
    fputs("see 'gmsim help' for the list of verbs\n", stderr);
}

static void main_usage(FILE *f)
{
    fputs("usage: gmsim VERB [options] [args]\n"
          "\n"
          "Replay GPU memory-allocation traces through simulated allocators and\n"
          "compare their peak memory and fragmentation.\n"
          "\n"
          "verbs:\n",
          f);
    for (size_t i = 0; i < MAIN_NVERBS; i++)
        fprintf(f, "  %-10s %s\n", main_verbs[i].name, main_verbs[i].summary);
    fputs("\n"
          "  gmsim help VERB, gmsim VERB --help   options of one verb\n"
          "  gmsim --version                      version and CUDA support\n"
          "\n"
          "exit status: 0 ok, 1 error, 2 usage error\n",
          f);
}

static int main_version(void)
{
    printf("gmsim %s\n", gm_version());
    if (gm_have_cuda())
        printf("cuda support: yes (toolkit %s)\n", gm_cuda_version());
    else
        printf("cuda support: no (built without the cuda toolkit)\n");
    return GM_CLI_OK;
}

/* Run a verb with --help, for `gmsim help VERB`. */
static int main_help_verb(const char *name)
{
    const main_verb_t *v = main_find(name);
    if (v == NULL) {
        main_unknown_verb(name);
        return GM_CLI_USAGE;
    }
    char verb[64], help[] = "--help";
    snprintf(verb, sizeof verb, "%s", v->name);
    char *argv[] = {verb, help, NULL};
    return v->fn(2, argv);
}

static int main_dispatch(int argc, char **argv)
{
    if (argc < 2) {
        main_usage(stderr);
        return GM_CLI_USAGE;
    }
    const char *verb = argv[1];
    if (strcmp(verb, "help") == 0 || strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
        if (argc > 2)
            return main_help_verb(argv[2]);
        main_usage(stdout);
        return GM_CLI_OK;
    }
    if (strcmp(verb, "--version") == 0 || strcmp(verb, "version") == 0)
        return main_version();
    const main_verb_t *v = main_find(verb);
    if (v == NULL) {
        if (verb[0] == '-') {
            gm__cli_error("unknown option '%s'", verb);
            fputs("see 'gmsim help' for the list of verbs\n", stderr);
        } else {
            main_unknown_verb(verb);
        }
        return GM_CLI_USAGE;
    }
    return v->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    gm__cli_ignore_xfsz();
    /* On a terminal every verb's output shows control bytes escaped (a
     * trace name cannot drive the terminal); files and pipes get them raw. */
    FILE *real = stdout, *wrapped = isatty(STDOUT_FILENO) ? gm__cli_tty_wrap(real) : NULL;
    if (wrapped != NULL)
        stdout = wrapped;
    int rc = main_dispatch(argc, argv);
    int bad = 0, e = 0;
    if (wrapped != NULL) {
        errno = 0;
        bad = fclose(wrapped) != 0;
        e = errno;
        stdout = real;
    }
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout) || bad) {
        if (e == 0)
            e = errno;
        if (rc == GM_CLI_OK) /* else the verb has reported its failure */
            fprintf(stderr, "gmsim: cannot write to standard output: %s\n",
                    e ? gm__cli_strerror(e) : "write error");
        return rc == GM_CLI_OK ? GM_CLI_ERROR : rc;
    }
    return rc;
}
