/*
 * tests/test_capture.c — the capture library (capture/) and the
 * spool reader (formats/spool.c).
 *
 * The library tests run tests/capture/gmcap-app, a program linked against
 * a fake CUDA runtime and driver over host memory, with the library
 * preloaded (both built without sanitizers, in every build), then import
 * its spools and check what was recorded: every call with its size,
 * stream, device and pairing; 8 threads × 100,000 calls with none lost or
 * doubled; fork; SIGKILL mid-run with every whole block recovered (also
 * after cutting and damaging the file); SIGSEGV; _exit with the flush
 * interval at 0; driver entry points obtained by name; the PyTorch
 * pluggable-allocator functions; NVTX v3 injection; and the program's own
 * output and exit status unchanged.  The reader tests build spools by
 * hand (spool_format.h) and run under the sanitizers too.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gmsim/capture.h"
#include "formats/spool_format.h"
#include "util.h"

#define CAP_LIB GM_BINARY_DIR "/libgmsim_capture.so"
#define CAP_APP GM_BINARY_DIR "/tests/capture/gmcap-app"
#define BLOCK_PAIRS 420 /* cudaMalloc/cudaFree pairs in one 16 KiB block, at most */

/* ---- running the program ---------------------------------------------------- */

typedef struct run {
    int status;    /* waitpid status */
    char *out;     /* its stdout and stderr (malloc'd) */
    char *err;
    char dir[512]; /* its spool directory */
} run_t;

static int run_counter;
static long run_fsize; /* > 0: the program's file size limit (SIGXFSZ ignored) */
static const char *run_program = CAP_APP;

/* Run gmcap-app with args, preloading the library when preload, with
 * GMSIM_CAPTURE_DIR set to a fresh directory, and env ("K=V;K2=V2", may
 * be NULL) added. */
static run_t run_app(int preload, const char *env, const char *const *args)
{
    run_t r;
    memset(&r, 0, sizeof r);
    char name[32];
    snprintf(name, sizeof name, "spool%d", run_counter++);
    snprintf(r.dir, sizeof r.dir, "%s", gt_tmpfile(name));
    cr_assert_eq(mkdir(r.dir, 0755), 0, "mkdir %s: %s", r.dir, strerror(errno));
    char outp[600], errp[600];
    snprintf(outp, sizeof outp, "%s.out", r.dir);
    snprintf(errp, sizeof errp, "%s.err", r.dir);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        if (run_fsize > 0) {
            struct rlimit rl = {(rlim_t)run_fsize, (rlim_t)run_fsize};
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        setenv("GMSIM_CAPTURE_DIR", r.dir, 1);
        unsetenv("LD_PRELOAD");
        if (preload)
            setenv("LD_PRELOAD", CAP_LIB, 1);
        char kv[600];
        snprintf(kv, sizeof kv, "%s", env ? env : "");
        for (char *save = NULL, *one = strtok_r(kv, ";", &save); one != NULL;
             one = strtok_r(NULL, ";", &save)) {
            char *eq = strchr(one, '=');
            *eq = '\0';
            setenv(one, eq + 1, 1);
        }
        char *argv[8] = {(char *)run_program};
        for (int i = 0; args[i] && i < 6; i++)
            argv[i + 1] = (char *)args[i];
        execv(run_program, argv);
        _exit(127);
    }
    cr_assert_eq(waitpid(pid, &r.status, 0), pid);
    r.out = gt_read_file(outp, NULL);
    r.err = gt_read_file(errp, NULL);
    cr_assert(r.out && r.err);
    return r;
}

static void run_release(run_t *r)
{
    free(r->out);
    free(r->err);
}

/* ---- reading what was stored ------------------------------------------------ */

typedef struct trace {
    gm_event_t *ev;
    size_t n;
    char **tags; /* per event: its MARK tag (copied) or NULL */
    char *attrs;
    char name[128];
} trace_t;

static trace_t trace_load(gm_store_t *s, const char *name)
{
    trace_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "%s", name);
    gm_reader_t *r;
    gm_error_t err;
    cr_assert_eq(gm_reader_open(s, name, &r, &err), 0, "%s", err.msg);
    t.attrs = strdup(gm_reader_info(r)->attrs);
    size_t cap = 0;
    for (;;) {
        const gm_event_t *ev;
        size_t n;
        cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
        if (n == 0)
            break;
        if (t.n + n > cap) {
            cap = (t.n + n) * 2;
            t.ev = realloc(t.ev, cap * sizeof *t.ev);
            t.tags = realloc(t.tags, cap * sizeof *t.tags);
            cr_assert(t.ev && t.tags);
        }
        for (size_t i = 0; i < n; i++) {
            t.ev[t.n] = ev[i];
            t.tags[t.n] = ev[i].op == GM_OP_MARK ? strdup(gm_reader_tag(r, ev[i].tag)) : NULL;
            t.n++;
        }
    }
    gm_reader_close(r);
    return t;
}

static void trace_release(trace_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->tags[i]);
    free(t->tags);
    free(t->ev);
    free(t->attrs);
}

static size_t trace_count(const trace_t *t, int op)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        k += t->ev[i].op == op;
    return k;
}

/* Every FREE names an earlier ALLOC, each freed once (the writer checks it
 * too), and its size is the ALLOC's. */
static void trace_check_pairs(const trace_t *t)
{
    size_t nalloc = trace_count(t, GM_OP_ALLOC);
    char *freed = calloc(nalloc + 1, 1);
    cr_assert(freed);
    size_t seen = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->ev[i].op == GM_OP_ALLOC) {
            cr_assert_eq(t->ev[i].id, seen, "%s: alloc %zu has id %llu", t->name, i,
                         (unsigned long long)t->ev[i].id);
            seen++;
        } else if (t->ev[i].op == GM_OP_FREE) {
            cr_assert_lt(t->ev[i].id, seen, "%s: free of a later id", t->name);
            cr_assert_eq(freed[t->ev[i].id], 0, "%s: id freed twice", t->name);
            freed[t->ev[i].id] = 1;
        }
    }
    free(freed);
}

/* Import a spool directory into a fresh in-memory store. */
static gm_store_t *import_dir(const char *dir, gm_spool_dir_result_t *res)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_spool_import_dir(s, dir, 0, res, &err), 0, "%s", err.msg);
    return s;
}

/* The only trace of a capture (asserted). */
static trace_t import_one(const char *dir)
{
    gm_spool_dir_result_t res;
    gm_store_t *s = import_dir(dir, &res);
    cr_assert_eq(res.n, 1, "%zu traces", res.n);
    trace_t t = trace_load(s, res.names[0]);
    gm_spool_dir_result_release(&res);
    gm_store_close(s);
    return t;
}

/* Path of the only spool file in dir (static). */
static const char *only_spool(const char *dir)
{
    static char path[700];
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls %s/*.spool", dir);
    FILE *p = popen(cmd, "r");
    cr_assert(p && fgets(path, sizeof path, p));
    pclose(p);
    path[strcspn(path, "\n")] = '\0';
    return path;
}

/* ---- the library ------------------------------------------------------------- */

Test(capture, every_call_recorded_output_unchanged)
{
    const char *args[] = {"basic", NULL};
    run_t plain = run_app(0, NULL, args);
    run_t r = run_app(1, NULL, args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3, "status %d", r.status);
    cr_assert_eq(plain.status, r.status);
    cr_assert_str_eq(r.out, plain.out);
    cr_assert_str_eq(r.err, plain.err);
    cr_assert_str_eq(r.out, "gmcap-app: basic done, pitch 512\n");

    gm_spool_dir_result_t res;
    gm_store_t *s = import_dir(r.dir, &res);
    cr_assert_eq(res.n, 2);
    cr_assert(strstr(res.names[0], ".dev0") && strstr(res.names[1], ".dev1"), "%s %s",
              res.names[0], res.names[1]);
    trace_t d0 = trace_load(s, res.names[0]), d1 = trace_load(s, res.names[1]);

    /* device 0: the runtime calls, in order, with their streams */
    static const uint64_t sizes0[] = {1000, 2000, 3000, 5120, 4000};
    size_t k = 0;
    for (size_t i = 0; i < d0.n; i++)
        if (d0.ev[i].op == GM_OP_ALLOC) {
            cr_assert_lt(k, 5);
            cr_assert_eq(d0.ev[i].size, sizes0[k], "alloc %zu: %llu", k,
                         (unsigned long long)d0.ev[i].size);
            k++;
        }
    cr_assert_eq(k, 5);
    cr_assert_eq(trace_count(&d0, GM_OP_FREE), 5);
    trace_check_pairs(&d0);
    static const char *const tags0[] = {"nvtx:forward", "nvtx_end:forward", "nvtx:step", "oom",
                                        "nvtx_end:step"};
    k = 0;
    for (size_t i = 0; i < d0.n; i++)
        if (d0.ev[i].op == GM_OP_MARK) {
            cr_assert_lt(k, 5);
            cr_assert_str_eq(d0.tags[i], tags0[k]);
            k++;
        }
    cr_assert_eq(k, 5);
    cr_assert(strstr(d0.attrs, "\"source\": \"capture\""), "%s", d0.attrs);
    cr_assert(strstr(d0.attrs, "\"cudaMallocPitch\": 1"), "%s", d0.attrs);
    cr_assert(strstr(d0.attrs, "\"unmatched_frees\": 0"), "%s", d0.attrs);

    /* device 1: the driver calls, the free made with device 0 current, the
     * virtual-memory calls */
    static const uint64_t sizes1[] = {5000, 6000, 7000};
    k = 0;
    for (size_t i = 0; i < d1.n; i++) {
        cr_assert_eq(d1.ev[i].device, 1);
        if (d1.ev[i].op == GM_OP_ALLOC) {
            cr_assert_lt(k, 3);
            cr_assert_eq(d1.ev[i].size, sizes1[k]);
            k++;
        }
    }
    cr_assert_eq(k, 3);
    cr_assert_eq(trace_count(&d1, GM_OP_FREE), 3);
    trace_check_pairs(&d1);
    cr_assert_eq(trace_count(&d1, GM_OP_SEG_ALLOC), 1);
    cr_assert_eq(trace_count(&d1, GM_OP_SEG_FREE), 1);
    cr_assert_eq(trace_count(&d1, GM_OP_SEG_MAP), 1);
    cr_assert_eq(trace_count(&d1, GM_OP_SEG_UNMAP), 1);
    for (size_t i = 0; i < d1.n; i++)
        if (d1.ev[i].op == GM_OP_SEG_MAP || d1.ev[i].op == GM_OP_SEG_FREE)
            cr_assert_eq(d1.ev[i].size, 2u << 20);
    cr_assert_eq(trace_count(&d1, GM_OP_MARK), 4); /* the ranges, not the oom */

    trace_release(&d0);
    trace_release(&d1);
    gm_spool_dir_result_release(&res);
    gm_store_close(s);
    run_release(&plain);
    run_release(&r);
}

Test(capture, eight_threads_nothing_lost_or_doubled, .timeout = 300)
{
    enum { T = 8, N = 100000 };
    const char *args[] = {"threads", "8", "100000", NULL};
    run_t r = run_app(1, NULL, args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d", r.status);
    trace_t t = import_one(r.dir);
    cr_assert_eq(trace_count(&t, GM_OP_ALLOC), (size_t)T * N);
    cr_assert_eq(trace_count(&t, GM_OP_FREE), (size_t)T * N);
    char *seen = calloc((size_t)T * N, 1);
    cr_assert(seen);
    for (size_t i = 0; i < t.n; i++) {
        if (t.ev[i].op != GM_OP_ALLOC)
            continue;
        uint64_t sz = t.ev[i].size - 1, th = sz / 10000000u, k = sz % 10000000u;
        cr_assert(th < T && k < N, "unexpected size %llu", (unsigned long long)t.ev[i].size);
        cr_assert_eq(seen[th * N + k], 0, "size %llu twice", (unsigned long long)t.ev[i].size);
        seen[th * N + k] = 1;
    }
    free(seen);
    trace_check_pairs(&t);
    trace_release(&t);
    run_release(&r);
}

/* More threads alive at once than the library has buffers (256): the
 * others write each record at once. */
Test(capture, more_threads_than_buffers, .timeout = 300)
{
    enum { T = 300, N = 200 };
    const char *args[] = {"threads", "300", "200", NULL};
    run_t r = run_app(1, NULL, args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    trace_t t = import_one(r.dir);
    cr_assert_eq(trace_count(&t, GM_OP_ALLOC), (size_t)T * N);
    cr_assert_eq(trace_count(&t, GM_OP_FREE), (size_t)T * N);
    char *seen = calloc((size_t)T * N, 1);
    cr_assert(seen);
    for (size_t i = 0; i < t.n; i++) {
        if (t.ev[i].op != GM_OP_ALLOC)
            continue;
        uint64_t sz = t.ev[i].size - 1, th = sz / 10000000u, k = sz % 10000000u;
        cr_assert(th < T && k < N && !seen[th * N + k]);
        seen[th * N + k] = 1;
    }
    free(seen);
    trace_check_pairs(&t);
    trace_release(&t);
    run_release(&r);
}

/* Internal failures: recording stops with one message, the program runs
 * on with its own output and status. */
Test(capture, failures_stop_recording_not_the_program)
{
    const char *args[] = {"basic", NULL};
    run_t r = run_app(1, "GMSIM_CAPTURE_DIR=/nonexistent/gmsim-spool", args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3);
    cr_assert_str_eq(r.out, "gmcap-app: basic done, pitch 512\n");
    cr_assert(strncmp(r.err, "gmsim capture: cannot create the spool file '/nonexistent/", 58) ==
                  0 &&
                  strstr(r.err, ": No such file or directory; recording stopped, the program "
                                "runs on\ngmcap-app: a line on stderr\n"),
              "%s", r.err);
    run_release(&r);

    /* the spool cannot grow past 64 KiB: a write fails midway */
    const char *args2[] = {"threads", "4", "20000", NULL};
    run_fsize = 65536;
    run_t w = run_app(1, NULL, args2);
    run_fsize = 0;
    cr_assert(WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0, "status %d", w.status);
    cr_assert_str_eq(w.out, "gmcap-app: 4 threads done\n");
    cr_assert_str_eq(w.err, "gmsim capture: cannot write the spool file: File too large; "
                            "recording stopped, the program runs on\n");
    /* what was written before is whole */
    trace_t t = import_one(w.dir);
    cr_assert_gt(trace_count(&t, GM_OP_ALLOC), 0);
    trace_check_pairs(&t);
    trace_release(&t);
    run_release(&w);
}

Test(capture, fork_child_has_its_own_spool)
{
    const char *args[] = {"fork", NULL};
    run_t r = run_app(1, NULL, args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d", r.status);
    cr_assert_str_eq(r.out, "gmcap-app: child ok\n");
    gm_spool_dir_result_t res;
    gm_store_t *s = import_dir(r.dir, &res);
    cr_assert_eq(res.n, 2);
    int parent = 0, child = 0;
    for (size_t i = 0; i < 2; i++) {
        trace_t t = trace_load(s, res.names[i]);
        size_t n = trace_count(&t, GM_OP_ALLOC);
        uint64_t first = 0;
        for (size_t j = 0; j < t.n && !first; j++)
            if (t.ev[j].op == GM_OP_ALLOC)
                first = t.ev[j].size;
        if (n == 2 && first == 111)
            parent++;
        else if (n == 1 && first == 222)
            child++;
        else
            cr_assert_fail("%s: %zu allocs, first %llu", t.name, n, (unsigned long long)first);
        trace_check_pairs(&t);
        trace_release(&t);
    }
    cr_assert(parent == 1 && child == 1);
    gm_spool_dir_result_release(&res);
    gm_store_close(s);
    run_release(&r);
}

/* ALLOC sizes 1, 2, …, k in order (the kill and segv programs); returns k. */
static size_t prefix_length(const trace_t *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].op == GM_OP_ALLOC) {
            cr_assert_eq(t->ev[i].size, k + 1, "alloc %zu has size %llu", k,
                         (unsigned long long)t->ev[i].size);
            k++;
        }
    return k;
}

static char *copy_file(const char *from, const char *dir, long cut, long flip)
{
    size_t len;
    char *data = gt_read_file(from, &len);
    cr_assert(data);
    cr_assert_eq(mkdir(dir, 0755), 0);
    char *path = malloc(strlen(dir) + 16);
    sprintf(path, "%s/x.spool", dir);
    if (cut > 0 && (size_t)cut < len)
        len = (size_t)cut;
    if (flip > 0 && (size_t)flip < len)
        data[flip] ^= 0x5a;
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(data, 1, len, f) == len);
    fclose(f);
    free(data);
    return path;
}

Test(capture, sigkill_keeps_every_whole_block)
{
    enum { N = 20000 };
    char outp[600], errp[600];
    snprintf(outp, sizeof outp, "%s", gt_tmpfile("kill.err"));
    const char *dir = gt_tmpfile("killspool");
    cr_assert_eq(mkdir(dir, 0755), 0);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        setenv("GMSIM_CAPTURE_DIR", dir, 1);
        setenv("LD_PRELOAD", CAP_LIB, 1);
        execl(CAP_APP, CAP_APP, "kill", "20000", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[16] = "";
    size_t got = 0;
    while (got < 6) {
        ssize_t k = read(fds[0], buf + got, 6 - got);
        cr_assert_gt(k, 0, "the program ended early");
        got += (size_t)k;
    }
    cr_assert_eq(memcmp(buf, "ready\n", 6), 0);
    kill(pid, SIGKILL); /* while it goes on allocating */
    int st;
    waitpid(pid, &st, 0);
    close(fds[0]);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    (void)errp;

    trace_t t = import_one(dir);
    size_t k = prefix_length(&t);
    /* Everything up to "ready" but the records of the last, unwritten
     * block (at most 16 KiB / 40 B a pair: BLOCK_PAIRS pairs). */
    cr_assert_geq(k, (size_t)N - BLOCK_PAIRS, "only %zu of %d recovered", k, N);
    size_t frees = trace_count(&t, GM_OP_FREE);
    cr_assert(frees == k || frees + 1 == k);
    trace_release(&t);

    /* The file cut in the middle of a block: every block before it. */
    const char *spool = only_spool(dir);
    struct stat sb;
    cr_assert_eq(stat(spool, &sb), 0);
    char *cut = copy_file(spool, gt_tmpfile("cutspool"), (long)sb.st_size - 1000, 0);
    trace_t c = import_one(gt_tmpfile("cutspool"));
    size_t kc = prefix_length(&c);
    cr_assert_leq(kc, k); /* equal when the kill left a torn last block of ≥ 1000 bytes */
    /* (the last 1000 bytes may hold a short last block and part of the
     * one before it: both are lost) */
    cr_assert_geq(kc + 2 * BLOCK_PAIRS, k, "cut: %zu of %zu", kc, k);
    cr_assert(strstr(c.attrs, "\"truncated_bytes\": 0") == NULL, "%s", c.attrs);
    trace_release(&c);
    free(cut);

    /* A damaged block in the middle: skipped, the ones after it kept. */
    char *bad = copy_file(spool, gt_tmpfile("badspool"), 0, (long)sb.st_size / 2);
    trace_t d = import_one(gt_tmpfile("badspool"));
    size_t nd = trace_count(&d, GM_OP_ALLOC);
    cr_assert(nd < k && nd + BLOCK_PAIRS >= k, "damaged: %zu of %zu", nd, k);
    cr_assert(strstr(d.attrs, "\"damaged_bytes\": 0") == NULL, "%s", d.attrs);
    trace_release(&d);
    free(bad);
}

Test(capture, sigsegv_flushes_and_dies_as_before)
{
    const char *args[] = {"segv", "1000", NULL};
    run_t plain = run_app(0, NULL, args);
    run_t r = run_app(1, NULL, args);
    cr_assert(WIFSIGNALED(plain.status) && WTERMSIG(plain.status) == SIGSEGV);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV, "status %d", r.status);
    trace_t t = import_one(r.dir);
    cr_assert_eq(prefix_length(&t), 1000);
    cr_assert_eq(trace_count(&t, GM_OP_FREE), 1000);
    trace_release(&t);
    run_release(&plain);
    run_release(&r);
}

/* (also: time stamps from clock_gettime rather than the TSC) */
Test(capture, underscore_exit_with_zero_flush_interval)
{
    const char *args[] = {"exit", "500", NULL};
    run_t r = run_app(1, "GMSIM_CAPTURE_FLUSH_MS=0;GMSIM_CAPTURE_CLOCK=mono", args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 5, "status %d", r.status);
    trace_t t = import_one(r.dir);
    cr_assert_eq(prefix_length(&t), 500);
    cr_assert(strstr(t.attrs, "\"recovery\": {\"blocks\": 500,"), "%s", t.attrs);
    trace_release(&t);
    run_release(&r);
}

/* The runtime loaded RTLD_LOCAL by a library the program dlopens (as
 * Python loads PyTorch): out of dlsym(RTLD_NEXT)'s reach, found anyway. */
Test(capture, runtime_in_a_local_scope)
{
    const char *args[] = {NULL};
    run_program = GM_BINARY_DIR "/tests/capture/gmcap-local";
    run_t r = run_app(1, NULL, args);
    run_program = CAP_APP;
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    cr_assert_str_eq(r.out, "gmcap-local: done\n");
    trace_t t = import_one(r.dir);
    cr_assert_eq(trace_count(&t, GM_OP_ALLOC), 1);
    cr_assert_eq(t.ev[0].size, 777);
    cr_assert_eq(trace_count(&t, GM_OP_FREE), 1);
    trace_release(&t);
    run_release(&r);
}

Test(capture, driver_entry_points_by_name)
{
    const char *args[] = {"procaddr", NULL};
    run_t plain = run_app(0, NULL, args);
    run_t r = run_app(1, NULL, args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    cr_assert_str_eq(r.out, plain.out);
    trace_t t = import_one(r.dir);
    cr_assert_eq(trace_count(&t, GM_OP_ALLOC), 2);
    cr_assert_eq(trace_count(&t, GM_OP_FREE), 2);
    uint64_t sizes[2];
    size_t k = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].op == GM_OP_ALLOC)
            sizes[k++] = t.ev[i].size;
    cr_assert(sizes[0] == 4096 && sizes[1] == 8192);
    cr_assert(strstr(t.attrs, "\"cuMemAlloc_v2\": 1, \"cuMemFree_v2\": 1, \"cuMemAllocAsync\": "
                              "1, \"cuMemFreeAsync\": 1"),
              "%s", t.attrs);
    trace_check_pairs(&t);
    trace_release(&t);
    run_release(&plain);
    run_release(&r);
}

Test(capture, torch_pluggable_allocator)
{
    const char *args[] = {"torch", NULL};
    run_t plain = run_app(0, NULL, args);
    cr_assert(WIFEXITED(plain.status) && WEXITSTATUS(plain.status) == 4);
    run_t r = run_app(1, NULL, args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.out);
    trace_t t = import_one(r.dir);
    cr_assert_eq(trace_count(&t, GM_OP_ALLOC), 2);
    cr_assert_eq(trace_count(&t, GM_OP_FREE), 2);
    cr_assert(strstr(t.attrs, "\"gmsim_torch_alloc\": 2, \"gmsim_torch_free\": 2"), "%s",
              t.attrs);
    /* recorded once: not again as cudaMallocAsync */
    cr_assert(strstr(t.attrs, "cudaMallocAsync") == NULL, "%s", t.attrs);
    trace_release(&t);
    run_release(&plain);
    run_release(&r);
}

Test(capture, nvtx3_injection)
{
    const char *args[] = {"nvtx3", NULL};
    run_t r = run_app(1, "NVTX_INJECTION64_PATH=" CAP_LIB, args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.out);
    trace_t t = import_one(r.dir);
    cr_assert_eq(trace_count(&t, GM_OP_MARK), 2);
    cr_assert_str_eq(t.tags[0], "nvtx:layer1");
    cr_assert_eq(t.ev[1].op, GM_OP_ALLOC);
    cr_assert_str_eq(t.tags[3], "nvtx_end:layer1");
    trace_release(&t);
    run_release(&r);
}

/* Without a driver (or under nsys/ncu) the CUPTI subscription fails: the
 * library says so and the interposed entry points record instead. */
Test(capture, cupti_falls_back_to_interposition)
{
    if (!gm_have_cuda())
        cr_skip_test("built without the cuda toolkit: no cupti mode");
    const char *args[] = {"inject", NULL};
    run_t r = run_app(1,
                      "CUDA_INJECTION64_PATH=" CAP_LIB ";GMSIM_CAPTURE_MODE=cupti;"
                      "GMSIM_CUPTI_LIB=/nonexistent/libcupti.so.13",
                      args);
    if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 4)
        cr_skip_test("the library was built without cupti.h: no cupti mode");
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.out);
    /* the library named is the only one tried */
    cr_assert(strstr(r.err, "cannot load libcupti (tried /nonexistent/libcupti.so.13; set "
                            "GMSIM_CUPTI_LIB): recording by interposition"),
              "%s", r.err);
    trace_t t = import_one(r.dir);
    cr_assert(strstr(t.attrs, "\"mode\": \"cupti-fallback\""), "%s", t.attrs);
    cr_assert_eq(trace_count(&t, GM_OP_ALLOC), 1);
    cr_assert_eq(t.ev[0].size, 4242);
    trace_release(&t);
    run_release(&r);
}

/* A CUDA 13 wheel keeps libcupti.so.13 beside libcudart in nvidia/cu13/lib:
 * CUPTI mode finds it beside the runtime the process loaded (before: only
 * the build's toolkit and the library path were tried). */
Test(capture, cupti_found_beside_the_runtime)
{
    char fake[600];
    snprintf(fake, sizeof fake, "%s/tests/capture/libgmcap_fakecupti.so", GM_BINARY_DIR);
    if (!gm_have_cuda() || access(fake, F_OK) != 0)
        cr_skip_test("built without the cuda toolkit's cupti.h: no cupti mode");
    char wheel[600], dir[700], link[800], target[800];
    snprintf(wheel, sizeof wheel, "%s", gt_tmpfile("site"));
    snprintf(dir, sizeof dir, "%s/nvidia", wheel);
    mkdir(wheel, 0755);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/nvidia/cu13", wheel);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/nvidia/cu13/lib", wheel);
    mkdir(dir, 0755);
    snprintf(link, sizeof link, "%s/libgmcap_fakecudart.so", dir);
    snprintf(target, sizeof target, "%s/tests/capture/libgmcap_fakecudart.so", GM_BINARY_DIR);
    cr_assert_eq(symlink(target, link), 0, "%s", strerror(errno));
    snprintf(link, sizeof link, "%s/libcupti.so.13", dir);
    cr_assert_eq(symlink(fake, link), 0, "%s", strerror(errno));
    char env[1200];
    snprintf(env, sizeof env,
             "CUDA_INJECTION64_PATH=" CAP_LIB ";GMSIM_CAPTURE_MODE=cupti;LD_LIBRARY_PATH=%s;"
             "GMSIM_CUPTI_LIB=",
             dir);
    const char *args[] = {"inject", NULL};
    run_t r = run_app(1, env, args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s%s", r.out, r.err);
    char want[900];
    snprintf(want, sizeof want, "fake cupti: subscribed from %s/libcupti.so.13", dir);
    cr_assert(strstr(r.err, want), "%s", r.err);
    cr_assert(strstr(r.err, "recording by interposition") == NULL, "%s", r.err);
    run_release(&r);
}

Test(capture, silent_without_a_spool_directory)
{
    const char *args[] = {"basic", NULL};
    run_t r = run_app(1, "GMSIM_CAPTURE_DIR=", args);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3);
    cr_assert_str_eq(r.err, "gmcap-app: a line on stderr\n");
    gm_store_t *s;
    gm_error_t err;
    gm_spool_dir_result_t res;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0);
    cr_assert_eq(gm_spool_import_dir(s, r.dir, 0, &res, &err), GM_ENOTFOUND);
    cr_assert(strstr(err.msg, "no spool file"), "%s", err.msg);
    gm_store_close(s);
    run_release(&r);
}

/* ---- the reader, on spools built by hand ------------------------------------- */

typedef struct sbuf {
    unsigned char *p;
    size_t n;
} sbuf_t;

static void sb_block(sbuf_t *b, uint16_t type, uint64_t seq, const void *payload, uint32_t len,
                     uint32_t nrec)
{
    b->p = realloc(b->p, b->n + SPOOL_HDR_BYTES + len);
    spool_hdr_t h = {SPOOL_MAGIC, SPOOL_VERSION, type, len, nrec, 7, 0, seq, 0, 0};
    h.sum = spool_sum(&h, payload, len);
    memcpy(b->p + b->n, &h, sizeof h);
    memcpy(b->p + b->n + SPOOL_HDR_BYTES, payload, len);
    b->n += SPOOL_HDR_BYTES + len;
}

static void sb_header(sbuf_t *b)
{
    char text[256] = "gmsim_spool=1\nhost=node7\npid=42\nppid=1\nrank=3\nlocal_rank=1\n"
                     "world_size=8\nmode=preload\nt0_mono_ns=1000\nt0_real_ns=5\nexe=/bin/x\n";
    sb_block(b, SPOOL_BLOCK_HEADER, 1, text, sizeof text, 0);
}

/* A payload under construction. */
typedef struct pl {
    unsigned char p[4096];
    uint32_t n, nrec;
} pl_t;

static void pl_rec(pl_t *pl, uint8_t op, uint64_t ts, uint64_t addr, uint64_t size,
                   int64_t result, int32_t device, uint64_t aux)
{
    pl->n += (uint32_t)spool_encode(pl->p + pl->n, 0, ts, op, 0, device, addr, size, 0, aux,
                                    result, NULL);
    pl->nrec++;
}

static int import_buf(const sbuf_t *b, gm_store_t **s, gm_error_t *err)
{
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, s, err), 0);
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(*s, "cap", 0, &t, err), 0, "%s", err->msg);
    int rc = gm_spool_import_buffer(b->p, b->n, "x.spool", t, err);
    if (rc != 0) {
        gm_import_abort(t);
        return rc;
    }
    return gm_import_commit(t, err);
}

Test(spool, duplicates_torn_blocks_unmatched_and_oom)
{
    sbuf_t b = {NULL, 0};
    sb_header(&b);
    pl_t r1 = {0};
    pl_rec(&r1, SPOOL_OP_CUDA_MALLOC, 2000, 0x100, 64, 0, 0, 0);
    pl_rec(&r1, SPOOL_OP_CUDA_FREE, 2500, 0x999, 0, 0, -1, 0); /* unknown address */
    uint32_t two = r1.n;
    pl_rec(&r1, SPOOL_OP_CUDA_MALLOC, 2600, 0, 1ull << 50, 2, 0, 0); /* out of memory */
    sb_block(&b, SPOOL_BLOCK_RECORDS, 10, r1.p, two, 2);
    /* the same block again, whole: it replaces the shorter copy */
    sb_block(&b, SPOOL_BLOCK_RECORDS, 10, r1.p, r1.n, 3);
    /* a torn block (48 + 24 bytes) */
    size_t torn = b.n;
    pl_t r2 = {0};
    pl_rec(&r2, SPOOL_OP_CUDA_MALLOC, 2700, 0x200, 32, 0, 0, 0);
    sb_block(&b, SPOOL_BLOCK_RECORDS, 11, r2.p, r2.n, 1);
    b.p[torn + SPOOL_HDR_BYTES + 9] ^= 1;
    pl_t r3 = {0};
    pl_rec(&r3, SPOOL_OP_CUDA_FREE, 3000, 0x100, 0, 0, -1, 0);
    sb_block(&b, SPOOL_BLOCK_RECORDS, 12, r3.p, r3.n, 1);
    /* a block cut short at the end */
    sb_block(&b, SPOOL_BLOCK_RECORDS, 13, r2.p, r2.n, 1);
    b.n -= 10;

    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_buf(&b, &s, &err), 0, "%s", err.msg);
    trace_t t = trace_load(s, "cap.dev0");
    cr_assert_eq(t.n, 3);
    cr_assert(t.ev[0].op == GM_OP_ALLOC && t.ev[0].size == 64 && t.ev[0].ts_ns == 1000);
    cr_assert(t.ev[1].op == GM_OP_MARK);
    cr_assert_str_eq(t.tags[1], "oom");
    cr_assert(t.ev[2].op == GM_OP_FREE && t.ev[2].id == 0);
    cr_assert(strstr(t.attrs, "\"duplicate_blocks\": 1"), "%s", t.attrs);
    cr_assert(strstr(t.attrs, "\"damaged_bytes\": 72"), "%s", t.attrs);
    cr_assert(strstr(t.attrs, "\"truncated_bytes\": 62"), "%s", t.attrs);
    cr_assert(strstr(t.attrs, "\"unmatched_frees\": 1"), "%s", t.attrs);
    cr_assert(strstr(t.attrs, "\"rank\": 3"), "%s", t.attrs);
    cr_assert(strstr(t.attrs, "\"local_rank\": 1"), "%s", t.attrs);
    cr_assert(strstr(t.attrs, "\"world_size\": 8"), "%s", t.attrs);
    trace_release(&t);
    gm_store_close(s);
    free(b.p);
}

Test(spool, malformed_whole_block_is_an_error)
{
    sbuf_t b = {NULL, 0};
    sb_header(&b);
    pl_t r = {0};
    pl_rec(&r, 99, 2000, 0x100, 64, 0, 0, 0);
    sb_block(&b, SPOOL_BLOCK_RECORDS, 10, r.p, r.n, 1);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_buf(&b, &s, &err), GM_EFORMAT);
    cr_assert(strstr(err.msg, "'x.spool': byte 352: unknown call 99"), "%s", err.msg);
    gm_store_close(s);

    /* a record claiming a word past its block */
    pl_t q = {0};
    pl_rec(&q, SPOOL_OP_CUDA_MALLOC, 2000, 0x100, 64, 0, 0, 0);
    q.p[5] |= SPOOL_F_STREAM;
    b.n = 0;
    sb_header(&b);
    sb_block(&b, SPOOL_BLOCK_RECORDS, 10, q.p, q.n, 1);
    cr_assert_eq(import_buf(&b, &s, &err), GM_EFORMAT);
    cr_assert(strstr(err.msg, "byte 352: malformed record 0 of 1"), "%s", err.msg);
    gm_store_close(s);

    /* not a spool at all */
    static const char text[] = "ts_ns,op,id,size,stream,device\n0,alloc,0,1,0,0\n";
    sbuf_t c = {(unsigned char *)text, sizeof text};
    cr_assert_eq(import_buf(&c, &s, &err), GM_EFORMAT);
    cr_assert_str_eq(err.msg, "'x.spool': byte 0: not a gmsim capture spool");
    gm_store_close(s);
    free(b.p);
}

Test(spool, devices_and_virtual_memory)
{
    sbuf_t b = {NULL, 0};
    sb_header(&b);
    pl_t r = {0};
    pl_rec(&r, SPOOL_OP_CU_MEM_ALLOC, 2000, 0x100, 64, 0, 2, 0);
    pl_rec(&r, SPOOL_OP_CU_MEM_CREATE, 2100, 0, 4096, 0, 1, 0x77); /* aux: the handle */
    pl_rec(&r, SPOOL_OP_CU_MEM_MAP, 2200, 0x8000, 4096, 0, -1, 0x77);
    pl_rec(&r, SPOOL_OP_CU_MEM_UNMAP, 2300, 0x8000, 4096, 0, -1, 0);
    pl_rec(&r, SPOOL_OP_CU_MEM_RELEASE, 2400, 0, 0, 0, -1, 0x77);
    pl_rec(&r, SPOOL_OP_CUDA_FREE, 2500, 0x100, 0, 0, 0, 0); /* device 0 current */
    sb_block(&b, SPOOL_BLOCK_RECORDS, 10, r.p, r.n, r.nrec);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(import_buf(&b, &s, &err), 0, "%s", err.msg);
    trace_t t1 = trace_load(s, "cap.dev1"), t2 = trace_load(s, "cap.dev2");
    cr_assert_eq(t2.n, 2);
    cr_assert(t2.ev[0].op == GM_OP_ALLOC && t2.ev[1].op == GM_OP_FREE && t2.ev[1].device == 2);
    cr_assert_eq(t1.n, 4);
    cr_assert(t1.ev[0].op == GM_OP_SEG_ALLOC && t1.ev[0].size == 4096);
    cr_assert(t1.ev[1].op == GM_OP_SEG_MAP && t1.ev[1].addr == 0x8000);
    cr_assert(t1.ev[2].op == GM_OP_SEG_UNMAP);
    cr_assert(t1.ev[3].op == GM_OP_SEG_FREE && t1.ev[3].size == 4096);
    trace_release(&t1);
    trace_release(&t2);
    gm_store_close(s);
    free(b.p);
}
