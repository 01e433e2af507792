/*
 * cli/cmd_capture.c — `gmsim capture -o DB [--mode preload|cupti] [--torch]
 * -- CMD [ARGS...]`: run a command with the capture library loaded, then
 * import what every process of it recorded.
 *
 * The library (libgmsim_capture.so) is looked for in $GMSIM_CAPTURE_LIB,
 * next to the gmsim binary, then in ../lib, ../lib64 and
 * ../lib/<multiarch> from it (an installed tree).  The command runs with:
 * LD_PRELOAD (the library appended to any value already there),
 * GMSIM_CAPTURE_DIR (a fresh spool directory "DB.spool.XXXXXX" beside the
 * store), GMSIM_CAPTURE_MODE, GMSIM_CAPTURE_LIB (the library's path, for
 * PyTorch's pluggable allocator), NVTX_INJECTION64_PATH (unless already set:
 * NVTX v3 ranges), and in CUPTI mode CUDA_INJECTION64_PATH; --torch adds
 * PYTORCH_NO_CUDA_MEMORY_CACHING=1.  Every process the command starts
 * inherits them, so each one that touches the device writes its own spool.
 *
 * While the command runs, gmsim ignores SIGINT and SIGQUIT (a terminal
 * sends them to the command too, which decides) and passes SIGTERM and
 * SIGHUP on to it.  The exit status is the command's (128+N when a signal
 * N ended it; 127 when it could not be started).  Then every spool is
 * imported into DB in one transaction (gmsim/capture.h) and the spool
 * directory removed; if the import fails, the directory is kept and the
 * message says how to import it later (`gmsim import DIR -o DB`), and the
 * status is 1 if the command itself succeeded.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "gmsim/capture.h"

static const char capture_usage[] =
    "usage: gmsim capture -o DB [--mode preload|cupti] [--torch] [--replace]\n"
    "                     [--keep-spool] -- CMD [ARGS...]\n"
    "\n"
    "Run CMD with the capture library loaded, then store every device\n"
    "allocation and free its processes made as traces in DB (created if\n"
    "missing): one trace per process and device, named HOST.PID[.rankR].devD.\n"
    "The exit status is CMD's (128+N if signal N ended it).\n"
    "\n"
    "options:\n"
    "  -o, --output DB     the store to write into (required)\n"
    "  -m, --mode MODE     preload (the default: interpose the CUDA runtime and\n"
    "                      driver calls) or cupti (CUPTI callbacks; falls back\n"
    "                      to preload when another CUPTI tool is attached)\n"
    "      --torch         set PYTORCH_NO_CUDA_MEMORY_CACHING=1 so that PyTorch\n"
    "                      allocates per tensor (a tensor-level trace; the job\n"
    "                      runs slower)\n"
    "      --replace       replace traces of the same names\n"
    "      --keep-spool    keep the spool directory after importing it\n"
    "  -h, --help          show this help\n"
    "\n"
    "If gmsim is killed before it imports, the spool directory DB.spool.XXXXXX\n"
    "stays: 'gmsim import DIR -o DB' recovers it.  See docs/capture.md.\n";

/* The capture library's absolute path into buf; 0, or −1 when not found. */
static int capture_find_lib(char *buf, size_t len)
{
    const char *env = getenv("GMSIM_CAPTURE_LIB");
    if (env != NULL && env[0] != '\0') {
        if (realpath(env, buf) == NULL || strlen(buf) >= len)
            return -1;
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL)
        return -1;
    *slash = '\0';
    static const char *const rel[] = {"", "/../lib", "/../lib64", "/../lib/x86_64-linux-gnu",
                                      "/../lib/aarch64-linux-gnu"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof cand, "%s%s/libgmsim_capture.so", exe, rel[i]);
        char real[PATH_MAX];
        if (access(cand, R_OK) == 0 && realpath(cand, real) != NULL && strlen(real) < len) {
            strcpy(buf, real);
            return 0;
        }
    }
    return -1;
}

/* 1 if dir holds a "*.spool" file. */
static int capture_has_spool(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        found = l > 6 && strcmp(e->d_name + l - 6, ".spool") == 0;
    }
    closedir(d);
    return found;
}

/* Remove the spool files and the directory (best effort). */
static void capture_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t l = strlen(e->d_name);
            if (l > 6 && strcmp(e->d_name + l - 6, ".spool") == 0) {
                char p[PATH_MAX + 256];
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                unlink(p);
            }
        }
        closedir(d);
    }
    rmdir(dir);
}

static volatile sig_atomic_t capture_child;

static void capture_forward(int sig)
{
    if (capture_child > 0)
        kill(capture_child, sig);
}

/* Set up the environment (in the child, before exec). */
static int capture_env(const char *lib, const char *dir, int cupti, int torch)
{
    const char *old = getenv("LD_PRELOAD");
    size_t len = (old ? strlen(old) : 0) + strlen(lib) + 2;
    char *pre = malloc(len);
    if (pre == NULL)
        return -1;
    if (old != NULL && old[0] != '\0')
        snprintf(pre, len, "%s:%s", old, lib);
    else
        snprintf(pre, len, "%s", lib);
    const char *mode = cupti ? (torch ? "cupti,torch" : "cupti")
                             : (torch ? "preload,torch" : "preload");
    int rc = setenv("LD_PRELOAD", pre, 1) | setenv("GMSIM_CAPTURE_DIR", dir, 1) |
             setenv("GMSIM_CAPTURE_MODE", mode, 1) | setenv("GMSIM_CAPTURE_LIB", lib, 1) |
             setenv("NVTX_INJECTION64_PATH", lib, 0);
    if (cupti)
        rc |= setenv("CUDA_INJECTION64_PATH", lib, 1);
    if (torch)
        rc |= setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "1", 1);
    free(pre);
    return rc;
}

/* Run argv; its exit status as a shell reports it. */
static int capture_run(char **argv, const char *lib, const char *dir, int cupti, int torch)
{
    fflush(stdout);
    fflush(stderr);
    struct sigaction ign, fwd, old_int, old_quit, old_term, old_hup;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    fwd = ign;
    fwd.sa_handler = capture_forward;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);
    pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        gm__cli_restore_xfsz();
        if (capture_env(lib, dir, cupti, torch) != 0) {
            fprintf(stderr, "gmsim: cannot set the environment of '%s'\n", gm__cli_s(argv[0]));
            _exit(127);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "gmsim: cannot run '%s': %s\n", gm__cli_s(argv[0]),
                gm__cli_strerror(errno));
        _exit(127);
    }
    int status = 0, rc;
    if (pid < 0) {
        gm__cli_error("cannot start '%s': %s", argv[0], gm__cli_strerror(errno));
        rc = -1;
    } else {
        capture_child = pid;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        capture_child = 0;
        rc = WIFEXITED(status) ? WEXITSTATUS(status)
             : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                   : 1;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    return rc;
}

/* Import the spools; 0 or GM_CLI_ERROR (message printed).  A store this
 * import created is removed again when it fails or imports no trace: a
 * capture that captured nothing leaves nothing behind. */
static int capture_import(const char *db, const char *dir, unsigned flags)
{
    gm_store_t *s;
    struct stat st;
    int existed = stat(db, &st) == 0;
    int rc = gm__cli_open_store(db, GM_STORE_WRITE, &s);
    if (rc != GM_CLI_OK) {
        if (!existed)
            gm__cli_remove_store(db);
        return rc;
    }
    gm_spool_dir_result_t res;
    gm_error_t err = {0};
    gm__cli_status("importing the capture...");
    int e = gm_spool_import_dir(s, dir, flags, &res, &err);
    gm__cli_status_clear();
    if (e != 0) {
        gm_store_close(s);
        if (!existed)
            gm__cli_remove_store(db);
        return gm__cli_error("%s", err.msg);
    }
    for (size_t i = 0; i < res.n; i++) {
        gm_trace_info_t info;
        if (gm_store_find(s, res.names[i], &info, &err) != 0)
            continue;
        fprintf(stderr,
                "gmsim: captured '%s' into '%s': %" PRIu64 " allocs, %" PRIu64
                " frees, %" PRIu64 " marks, peak %s requested\n",
                gm__cli_s(info.name), gm__cli_s(db), info.allocs, info.frees, info.marks, gm__cli_size(info.load));
        gm_trace_info_release(&info);
    }
    size_t n = res.n;
    gm_spool_dir_result_release(&res);
    gm_store_close(s);
    if (n == 0) {
        if (!existed)
            gm__cli_remove_store(db);
        fprintf(stderr, "gmsim: no process made a device allocation: nothing captured\n");
    }
    return GM_CLI_OK;
}

int gm__cmd_capture(int argc, char **argv)
{
    const char *db = NULL, *mode = "preload";
    int torch = 0, keep = 0, rc;
    unsigned flags = 0;
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("output", 'o', GM__CLI_STR, &db),
        GM__CLI_OPT("mode", 'm', GM__CLI_STR, &mode),
        GM__CLI_OPT("torch", 0, GM__CLI_FLAG, &torch),
        GM__CLI_OPT("replace", 0, GM__CLI_BITS, &flags, .bits = GM_WRITE_REPLACE),
        GM__CLI_OPT("keep-spool", 0, GM__CLI_FLAG, &keep),
        GM__CLI_OPTS_END,
    };
    /* The options end at the command. */
    if (gm__cli_parse_to_command(opts, capture_usage, argc, argv, &rc))
        return rc;
    if (db == NULL)
        return gm__cli_usage_error(capture_usage, "missing the store to write (-o DB)");
    if (strcmp(mode, "preload") != 0 && strcmp(mode, "cupti") != 0)
        return gm__cli_usage_error(capture_usage, "unknown mode '%s' (known: preload, cupti)",
                                   mode);
    if (optind >= argc)
        return gm__cli_usage_error(capture_usage, "missing the command to run (after --)");
    /* The store is never the program run (its other arguments may well be
     * stores: 'gmsim capture -o c.db -- gmsim replay s.db ...'). */
    int same = gm__cli_check_output(capture_usage, db, (const char *const *)argv + optind, 1);
    if (same)
        return same;
    int cupti = strcmp(mode, "cupti") == 0;
    if (cupti && !gm_have_cuda())
        return gm__cli_error("cannot capture with --mode cupti: gmsim was built without the "
                             "cuda toolkit");
    char lib[PATH_MAX];
    if (capture_find_lib(lib, sizeof lib) != 0)
        return gm__cli_error("cannot find 'libgmsim_capture.so' next to gmsim or in its lib "
                             "directory (set GMSIM_CAPTURE_LIB)");
    size_t dlen = strlen(db) + 16;
    char *dir = malloc(dlen);
    if (dir == NULL)
        return gm__cli_error("out of memory");
    snprintf(dir, dlen, "%s.spool.XXXXXX", db);
    if (mkdtemp(dir) == NULL) {
        int e = errno;
        free(dir);
        return gm__cli_error("cannot create a spool directory beside '%s': %s", db,
                             gm__cli_strerror(e));
    }
    char abs[PATH_MAX];
    const char *spool = realpath(dir, abs) ? abs : dir;
    int status = capture_run(argv + optind, lib, spool, cupti, torch);
    if (status < 0) {
        capture_remove_dir(dir);
        free(dir);
        return GM_CLI_ERROR;
    }
    if (!capture_has_spool(dir)) {
        if (status != 127) /* 127: it did not start (said so) */
            fprintf(stderr, "gmsim: '%s' made no device allocation: nothing captured\n",
                    gm__cli_s(argv[optind]));
        capture_remove_dir(dir);
        free(dir);
        return status;
    }
    rc = capture_import(db, dir, flags);
    if (rc != GM_CLI_OK) {
        fprintf(stderr,
                "gmsim: the spool is kept in '%s': import it with 'gmsim import %s -o %s'\n",
                gm__cli_s(dir), gm__cli_s(dir), gm__cli_s(db));
        free(dir);
        return status != 0 ? status : rc;
    }
    if (keep)
        fprintf(stderr, "gmsim: spool kept in '%s'\n", gm__cli_s(dir));
    else
        capture_remove_dir(dir);
    free(dir);
    return status;
}
