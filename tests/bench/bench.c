/*
 * tests/bench/bench.c — gmsim's benchmark (run by scripts/bench).
 *
 * On one seeded random workload (default 10 million events) it measures, in
 * one process:
 *   - store write and read speed (events/s) and bytes per event on disk;
 *   - replay speed per policy: the engine fed the decoded events from memory
 *     (validation, slot mapping, policy, metrics, timeline), events/s;
 *   - the reference: the same alloc/free sequence through the C library's
 *     malloc/free, from the same in-memory events, so that
 *     ratio_vs_malloc = simulated ns per event ÷ malloc/free ns per event;
 *     glibc serves MiB-sized requests with mmap/munmap, so its figure is
 *     mostly system calls: a second reference runs the sequence again with
 *     mmap and trimming turned off (mallopt), every request from the heap,
 *     the user-space allocator alone (ratio_vs_malloc_heap);
 *   - end-to-end replay from the store (decode + replay) per policy;
 *   - compare's pass: the online policies together from the store on every
 *     core (gm_replay_config_t.threads) and on one, against the sum and the
 *     maximum of their end-to-end times alone ("compare": ratio_vs_sum,
 *     ratio_vs_max; issue 33's target on 2 cores: ≤ 0.6 × the sum);
 * and, with --rss-events N (default 100 million, 0 to skip), writes an
 * N-event trace with a bounded live set and replays it with the gmsim
 * binary (--gmsim PATH) as a child process, reporting its peak resident
 * memory.
 *
 * Every figure is a ratio or rate from this one run; nothing is compared to
 * numbers from elsewhere.
 *
 * Other areas (import, policies, synthesis, sweeps, capture) are sections
 * (bench.h), run after the core one; `--only core,import` picks sections.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

_Noreturn void bench_die(const char *what, const gm_error_t *err)
{
    fprintf(stderr, "gmsim-bench: %s: %s\n", what, err->msg);
    exit(1);
}

typedef struct {
    const char *name;
    double events_per_s;     /* engine on in-memory events */
    double ns_per_event;
    double e2e_events_per_s; /* decode + engine from the store */
    uint64_t peak_reserved;
} bench_policy_t;

/* Replay the in-memory events through one policy; returns seconds. */
static double bench_replay_memory(const gm_policy_ops_t *ops, const gm_event_t *ev, size_t n,
                                  uint64_t *peak)
{
    gm_error_t err;
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    gm_replay_t *r;
    gm_params_t params;
    if (gm_replay_create(&cfg, &r, &err) || gm_params_init(&params, ops, &err) ||
        gm_replay_add(r, &params, &err))
        bench_die("replay setup", &err);
    if (gm_replay_needs_lifetimes(r)) {
        /* A planner: every lifetime first, planned before the clock starts
         * (the policies section times the planning). */
        size_t na = 0;
        for (size_t i = 0; i < n; i++)
            if (ev[i].op == GM_OP_ALLOC && ev[i].id + 1 > na)
                na = (size_t)ev[i].id + 1;
        gm_lifetime_t *lt = calloc(na ? na : 1, sizeof *lt);
        if (lt == NULL)
            exit(1);
        for (size_t i = 0; i < n; i++)
            if (ev[i].op == GM_OP_ALLOC)
                lt[ev[i].id] = (gm_lifetime_t){ev[i].size, i, GM_LIFETIME_OPEN, ev[i].ts_ns, 0};
            else if (ev[i].op == GM_OP_FREE && ev[i].id < na) {
                lt[ev[i].id].end = i;
                lt[ev[i].id].end_ns = ev[i].ts_ns;
            }
        gm_trace_context_t ctx = {.lifetimes = lt, .nlifetimes = na, .events = n};
        if (gm_replay_prepare(r, &ctx, &err))
            bench_die("replay setup", &err);
        free(lt);
    }
    double t0 = bench_now();
    for (size_t i = 0; i < n; i += GM_CHUNK_EVENTS) {
        size_t k = n - i < GM_CHUNK_EVENTS ? n - i : GM_CHUNK_EVENTS;
        if (gm_replay_feed(r, ev + i, k, &err))
            bench_die("replay", &err);
    }
    if (gm_replay_finish(r, &err))
        bench_die("replay", &err);
    double dt = bench_now() - t0;
    *peak = gm_replay_metrics(r, 0)->peak_reserved;
    gm_params_release(&params);
    gm_replay_destroy(r);
    return dt;
}

static double bench_replay_store(const gm_policy_ops_t *ops, gm_store_t *s, const char *trace)
{
    gm_error_t err;
    gm_replay_t *r;
    gm_params_t params;
    if (gm_replay_create(NULL, &r, &err) || gm_params_init(&params, ops, &err) ||
        gm_replay_add(r, &params, &err))
        bench_die("replay setup", &err);
    double t0 = bench_now();
    if (gm_replay_trace(r, s, trace, &err))
        bench_die("replay", &err);
    double dt = bench_now() - t0;
    gm_params_release(&params);
    gm_replay_destroy(r);
    return dt;
}

/* The online policies (no planner) of the trace in one replay from the
 * store on `threads` threads (compare's pass); returns seconds. */
static double bench_replay_store_all(const gm_policy_ops_t *const *ops, size_t n, unsigned threads,
                                     gm_store_t *s, const char *trace)
{
    gm_error_t err;
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.threads = threads;
    gm_replay_t *r;
    if (gm_replay_create(&cfg, &r, &err))
        bench_die("replay setup", &err);
    for (size_t i = 0; i < n; i++) {
        gm_params_t params;
        if (gm_params_init(&params, ops[i], &err) || gm_replay_add(r, &params, &err))
            bench_die("replay setup", &err);
        gm_params_release(&params);
    }
    double t0 = bench_now();
    if (gm_replay_trace(r, s, trace, &err))
        bench_die("replay", &err);
    double dt = bench_now() - t0;
    gm_replay_destroy(r);
    return dt;
}

/* The reference: malloc/free of the same sequence; returns seconds. */
static double bench_malloc(const gm_event_t *ev, size_t n, uint64_t nallocs)
{
    void **ptr = calloc(nallocs ? nallocs : 1, sizeof *ptr);
    double t0 = bench_now();
    for (size_t i = 0; i < n; i++) {
        if (ev[i].op == GM_OP_ALLOC) {
            ptr[ev[i].id] = malloc(ev[i].size);
            if (ptr[ev[i].id] == NULL) {
                fprintf(stderr, "gmsim-bench: malloc failed\n");
                exit(1);
            }
        } else if (ev[i].op == GM_OP_FREE) {
            free(ptr[ev[i].id]);
        }
    }
    double dt = bench_now() - t0;
    free(ptr);
    return dt;
}

static long bench_child_rss_kib(char *const argv[], double *seconds)
{
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    *seconds = bench_now() - t0;
    return ru.ru_maxrss;
}

static void bench_usage(void)
{
    fprintf(stderr, "usage: gmsim-bench [--json] [--only SECTION,...] [--events N] [--seed S] [--rss-events N]"
                    " [--gmsim PATH] [--dir DIR] [--data DIR]\n");
    exit(2);
}

/* The core section: store, replay per policy, malloc references, long
 * replay.  In JSON mode its members go straight into the open top-level
 * object j; otherwise it prints its table. */
static void bench_core(const bench_env_t *env, uint64_t rss_events, gm_json_t *jout)
{
    uint64_t events = env->events, seed = env->seed;
    const char *gmsim = env->gmsim, *dir = env->dir;
    gm_error_t err;
    char path[4096];
    snprintf(path, sizeof path, "%s/gmsim-bench-%d.db", dir, (int)getpid());
    unlink(path);

    /* The workload, in memory. */
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = events;
    wc.seed = seed;
    gm_workload_t *wl;
    if (gm_workload_create(&wc, &wl, &err))
        bench_die("workload", &err);
    gm_event_t *ev = malloc(events * sizeof *ev);
    if (ev == NULL) {
        fprintf(stderr, "gmsim-bench: out of memory for %llu events\n", (unsigned long long)events);
        exit(1);
    }
    size_t n = 0;
    for (size_t k; (k = gm_workload_next(wl, ev + n, events - n)) > 0;)
        n += k;
    gm_workload_destroy(wl);
    uint64_t nallocs = 0;
    for (size_t i = 0; i < n; i++)
        nallocs += ev[i].op == GM_OP_ALLOC;

    /* Store: write, then read. */
    gm_store_t *s;
    gm_writer_t *w;
    if (gm_store_open(path, GM_STORE_WRITE, &s, &err))
        bench_die(path, &err);
    uint32_t idx;
    double t0 = bench_now();
    if (gm_writer_begin(s, "bench", 0, &w, &err) || gm_writer_stream(w, 0, &idx, &err) ||
        gm_writer_stream(w, 1, &idx, &err) || gm_writer_tag(w, "step", &idx, &err))
        bench_die("writer", &err);
    for (size_t i = 0; i < n; i++)
        if (gm_writer_add(w, &ev[i], &err))
            bench_die("write", &err);
    if (gm_writer_finish(w, &err))
        bench_die("write", &err);
    double write_s = bench_now() - t0;
    gm_store_close(s);
    struct stat st;
    stat(path, &st);
    double bytes_per_event = (double)st.st_size / (double)n;

    if (gm_store_open(path, GM_STORE_READONLY, &s, &err))
        bench_die(path, &err);
    gm_reader_t *rd;
    const gm_event_t *got;
    size_t k, nread = 0;
    uint64_t checksum = 0;
    t0 = bench_now();
    if (gm_reader_open(s, "bench", &rd, &err))
        bench_die("reader", &err);
    while (gm_reader_next(rd, &got, &k, &err) == 0 && k > 0) {
        nread += k;
        checksum += got[k - 1].size;
    }
    double read_s = bench_now() - t0;
    gm_reader_close(rd);
    if (nread != n) {
        fprintf(stderr, "gmsim-bench: read %zu events of %zu\n", nread, n);
        exit(1);
    }

    double malloc_s = bench_malloc(ev, n, nallocs);
    double malloc_ns = malloc_s * 1e9 / (double)n;

    size_t np = gm_policy_count();
    bench_policy_t *pol = calloc(np, sizeof *pol);
    const gm_policy_ops_t **online = calloc(np ? np : 1, sizeof *online);
    size_t nonline = 0;
    double sum_s = 0, max_s = 0;
    for (size_t i = 0; i < np; i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        pol[i].name = ops->name;
        double dt = bench_replay_memory(ops, ev, n, &pol[i].peak_reserved);
        pol[i].events_per_s = (double)n / dt;
        pol[i].ns_per_event = dt * 1e9 / (double)n;
        double e2e = bench_replay_store(ops, s, "bench");
        pol[i].e2e_events_per_s = (double)n / e2e;
        if (!(ops->flags & GM_POLICY_NEEDS_LIFETIMES)) {
            online[nonline++] = ops;
            sum_s += e2e;
            max_s = e2e > max_s ? e2e : max_s;
        }
    }
    /* compare's pass over the online policies: on every core, and on one
     * (the chunks still decoded ahead on a second thread). */
    long ncores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned cores = ncores > 1 ? (unsigned)ncores : 1;
    double all_s = bench_replay_store_all(online, nonline, cores, s, "bench");
    double all1_s = bench_replay_store_all(online, nonline, 1, s, "bench");
    free(online);
    gm_store_close(s);
    unlink(path);

    /* Last, as it changes malloc's settings for the rest of the process. */
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT32_MAX);
    double heap_ns = bench_malloc(ev, n, nallocs) * 1e9 / (double)n;
    free(ev);

    /* Resident memory of a long replay, in a child process. */
    long rss_kib = -1;
    double rss_s = 0;
    if (rss_events && gmsim) {
        wc.events = rss_events;
        if (gm_store_open(path, GM_STORE_WRITE, &s, &err) ||
            gm_writer_begin(s, "long", 0, &w, &err) || gm_workload_write(&wc, w, &err) ||
            gm_writer_finish(w, &err))
            bench_die("long trace", &err);
        gm_store_close(s);
        char *args[] = {(char *)gmsim, "replay", path, "--policy", "buddy", NULL};
        rss_kib = bench_child_rss_kib(args, &rss_s);
        unlink(path);
    }

    if (jout != NULL) {
        gm_json_t j = *jout; /* shorthand; copied back below */
        gm_json_key(&j, "events");
        gm_json_u64(&j, n);
        gm_json_key(&j, "store");
        gm_json_begin_object(&j);
        gm_json_key(&j, "write_events_per_s");
        gm_json_double(&j, (double)n / write_s);
        gm_json_key(&j, "read_events_per_s");
        gm_json_double(&j, (double)n / read_s);
        gm_json_key(&j, "bytes_per_event");
        gm_json_double(&j, bytes_per_event);
        gm_json_end_object(&j);
        gm_json_key(&j, "malloc");
        gm_json_begin_object(&j);
        gm_json_key(&j, "ns_per_event");
        gm_json_double(&j, malloc_ns);
        gm_json_key(&j, "heap_only_ns_per_event");
        gm_json_double(&j, heap_ns);
        gm_json_end_object(&j);
        gm_json_key(&j, "replay");
        gm_json_begin_object(&j);
        for (size_t i = 0; i < np; i++) {
            gm_json_key(&j, pol[i].name);
            gm_json_begin_object(&j);
            gm_json_key(&j, "events_per_s");
            gm_json_double(&j, pol[i].events_per_s);
            gm_json_key(&j, "ratio_vs_malloc");
            gm_json_double(&j, pol[i].ns_per_event / malloc_ns);
            gm_json_key(&j, "ratio_vs_malloc_heap");
            gm_json_double(&j, pol[i].ns_per_event / heap_ns);
            gm_json_key(&j, "end_to_end_events_per_s");
            gm_json_double(&j, pol[i].e2e_events_per_s);
            gm_json_key(&j, "peak_reserved");
            gm_json_u64(&j, pol[i].peak_reserved);
            gm_json_end_object(&j);
        }
        gm_json_end_object(&j);
        if (rss_kib >= 0) {
            gm_json_key(&j, "long_replay");
            gm_json_begin_object(&j);
            gm_json_key(&j, "events");
            gm_json_u64(&j, rss_events);
            gm_json_key(&j, "max_rss_bytes");
            gm_json_u64(&j, (uint64_t)rss_kib * 1024);
            gm_json_key(&j, "seconds");
            gm_json_double(&j, rss_s);
            gm_json_end_object(&j);
        }
        gm_json_key(&j, "compare");
        gm_json_begin_object(&j);
        gm_json_key(&j, "policies");
        gm_json_u64(&j, nonline);
        gm_json_key(&j, "threads");
        gm_json_u64(&j, cores);
        gm_json_key(&j, "seconds");
        gm_json_double(&j, all_s);
        gm_json_key(&j, "one_thread_seconds");
        gm_json_double(&j, all1_s);
        gm_json_key(&j, "sum_single_seconds");
        gm_json_double(&j, sum_s);
        gm_json_key(&j, "max_single_seconds");
        gm_json_double(&j, max_s);
        gm_json_key(&j, "ratio_vs_sum");
        gm_json_double(&j, all_s / sum_s);
        gm_json_key(&j, "ratio_vs_max");
        gm_json_double(&j, all_s / max_s);
        gm_json_end_object(&j);
        *jout = j;
    } else {
        printf("workload: %zu events (seed %llu), checksum %llu\n", n, (unsigned long long)seed,
               (unsigned long long)checksum);
        printf("store:  write %8.2f M events/s   read %8.2f M events/s   %.2f bytes/event\n",
               (double)n / write_s / 1e6, (double)n / read_s / 1e6, bytes_per_event);
        printf("malloc: %.1f ns/event (reference; heap only, no mmap: %.1f ns/event)\n",
               malloc_ns, heap_ns);
        printf("%-10s %14s %10s %15s %18s\n", "policy", "M events/s", "vs malloc", "vs heap malloc",
               "from store M ev/s");
        for (size_t i = 0; i < np; i++)
            printf("%-10s %14.2f %10.2f %15.2f %18.2f\n", pol[i].name, pol[i].events_per_s / 1e6,
                   pol[i].ns_per_event / malloc_ns, pol[i].ns_per_event / heap_ns,
                   pol[i].e2e_events_per_s / 1e6);
        printf("compare: %zu policies from the store, %u threads %.2f s (1 thread %.2f s); "
               "alone: sum %.2f s, max %.2f s; %.2fx the sum, %.2fx the max\n",
               nonline, cores, all_s, all1_s, sum_s, max_s, all_s / sum_s, all_s / max_s);
        if (rss_kib >= 0)
            printf("long replay: %llu events, buddy, %.1f s, max RSS %.1f MiB\n",
                   (unsigned long long)rss_events, rss_s, (double)rss_kib / 1024.0);
        else if (rss_events && !gmsim)
            printf("long replay: skipped (no --gmsim binary given)\n");
    }
    free(pol);
}

typedef struct bench_section {
    const char *name;
    void (*run)(const bench_env_t *env, gm_json_t *j);
} bench_section_t;

static const bench_section_t bench_sections[] = {
#define BENCH__ENTRY(name) {#name, bench_##name},
    BENCH_SECTIONS(BENCH__ENTRY)
#undef BENCH__ENTRY
    {NULL, NULL},
};

/* Whether section `name` is in the comma list `only` (NULL: all). */
static int bench_selected(const char *only, const char *name)
{
    if (only == NULL)
        return 1;
    size_t len = strlen(name);
    for (const char *p = only; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, name, n) == 0)
            return 1;
        p += n + (end != NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int json = 0;
    uint64_t rss_events = 100000000;
    const char *only = NULL;
    bench_env_t env = {.dir = "/tmp", .data_dir = GM_DATA_DIR, .events = 10000000, .seed = 42};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
            env.events = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            env.seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rss-events") == 0 && i + 1 < argc)
            rss_events = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--gmsim") == 0 && i + 1 < argc)
            env.gmsim = argv[++i];
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            env.dir = argv[++i];
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            env.data_dir = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else
            bench_usage();
    }
    /* JSON mode: one object, the core members first, then one member per
     * section.  Text mode: the core table, then each section's JSON. */
    gm_json_t j;
    gm_json_init(&j, stdout, 1);
    if (json)
        gm_json_begin_object(&j);
    if (bench_selected(only, "core"))
        bench_core(&env, rss_events, json ? &j : NULL);
    if (!json)
        gm_json_begin_object(&j);
    for (const bench_section_t *sec = bench_sections; sec->name; sec++)
        if (bench_selected(only, sec->name))
            sec->run(&env, &j);
    gm_json_end_object(&j);
    gm_json_finish(&j);
    return 0;
}
