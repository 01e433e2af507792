/*
 * tests/bench/bench_placement.c — the offline planner on placement
 * instances (section "placement").
 *
 *   - each minimalloc instance in ../shared/data/minimalloc: its plan with
 *     the default budgets and the instance's capacity given (as the DSA
 *     importer records it), the plan's bytes against the capacity and the
 *     load, its status (optimal / feasible / greedy), and the seconds it
 *     took (wall and CPU: planning is single-threaded, and the machine this
 *     runs on may be shared).  MiniMalloc itself cannot be built here, so
 *     its times are not beside ours; the figures are ours alone;
 *   - the perfect packings tests/test_offline.c plans (58: 250-piece
 *     guillotines and 300-piece bottom-left fills of seeds 1-24, the eight
 *     hardest 400-piece guillotines, two more), each planned with the
 *     defaults and with early=0 (the planner before its quick tries at the
 *     bound, the heuristics' whole budget first, as it was): CPU seconds
 *     of each and their ratio, how many are planned at their bound within
 *     20 ms (issue 33's target: all);
 *   - generated perfect packings (tests/util.c gt_perfect_packing, seeds
 *     0-39: 40 guillotine cuts and 40 bottom-left fills of 400 pieces): how
 *     many are packed at their capacity, and the slowest one's seconds;
 *   - one million allocations (the first 2 million events of the seeded
 *     random workload): the plan's seconds and its status (the bound there
 *     is the busiest instant's bytes);
 *   - the planner's memory: bytes per allocation at the peak of offline's
 *     prepare beyond the trace's lifetimes (its peak resident size minus
 *     the resident size before, in a child process, /proc/self/clear_refs
 *     resetting the peak), on the first 2 and 8 million events of the same
 *     workload (issue 33's target: <= 64).
 */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "bench/bench.h"
#include "util.h"

static double bpl_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static gm_lifetime_t *bpl_lifetimes(const gm_event_t *ev, size_t n, size_t *na, uint64_t *load)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].op == GM_OP_ALLOC && ev[i].id + 1 > k)
            k = (size_t)ev[i].id + 1;
    gm_lifetime_t *lt = calloc(k ? k : 1, sizeof *lt);
    if (lt == NULL) {
        fprintf(stderr, "gmsim-bench: out of memory\n");
        exit(1);
    }
    uint64_t cur = 0;
    *load = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].op == GM_OP_ALLOC) {
            lt[ev[i].id] = (gm_lifetime_t){ev[i].size, i, GM_LIFETIME_OPEN, ev[i].ts_ns, 0};
            cur += ev[i].size;
            *load = cur > *load ? cur : *load;
        } else if (ev[i].op == GM_OP_FREE && ev[i].id < k) {
            lt[ev[i].id].end = i;
            lt[ev[i].id].end_ns = ev[i].ts_ns;
            cur -= lt[ev[i].id].size;
        }
    }
    *na = k;
    return lt;
}

typedef struct bpl_result {
    gm_plan_info_t pi;
    double wall_s, cpu_s;
} bpl_result_t;

/* Plan lifetimes with offline's defaults (but `early` when not NULL) and
 * attrs; the plan's figures. */
static bpl_result_t bpl_plan_early(const gm_lifetime_t *lt, size_t na, uint64_t events,
                                   const char *attrs, const char *early)
{
    const gm_policy_ops_t *off = gm_policy_find("offline");
    gm_error_t err;
    gm_params_t params;
    gm_device_t dev;
    gm_policy_t *p;
    gm_device_init(&dev, NULL);
    if (off == NULL || gm_params_init(&params, off, &err) ||
        (early != NULL && gm_params_set(&params, "early", early, &err)) ||
        off->create(&dev, params.values, &p, &err))
        bench_die("offline", &err);
    gm_trace_context_t ctx = {.attrs = attrs, .lifetimes = lt, .nlifetimes = na, .events = events};
    bpl_result_t r;
    double t0 = bench_now(), c0 = bpl_cpu_now();
    if (off->prepare(p, &ctx, &err))
        bench_die("offline", &err);
    r.wall_s = bench_now() - t0;
    r.cpu_s = bpl_cpu_now() - c0;
    if (off->plan(p, &r.pi))
        bench_die("offline", &err);
    r.pi.offset = r.pi.size = NULL;
    off->destroy(p);
    gm_params_release(&params);
    return r;
}

static bpl_result_t bpl_plan(const gm_lifetime_t *lt, size_t na, uint64_t events, const char *attrs)
{
    return bpl_plan_early(lt, na, events, attrs, NULL);
}

/* The perfect packings tests/test_offline.c plans (style, pieces, seed),
 * in its order: perfect_packings_are_packed_exactly,
 * hard_guillotine_packings_are_packed_exactly, plan_status_says_what_is_proved
 * and placement_export_is_a_valid_plan. */
static size_t bpl_test_packings(int *style, size_t *pieces, uint64_t *seed)
{
    static const uint64_t hard[] = {22, 51, 80, 91, 116, 4, 6, 8};
    size_t k = 0;
    for (int s = 0; s < 2; s++)
        for (uint64_t q = 1; q <= 24; q++, k++) {
            style[k] = s;
            pieces[k] = s ? 300 : 250;
            seed[k] = q;
        }
    for (size_t i = 0; i < sizeof hard / sizeof hard[0]; i++, k++) {
        style[k] = 0;
        pieces[k] = 400;
        seed[k] = hard[i];
    }
    style[k] = 1, pieces[k] = 100, seed[k++] = 3;
    style[k] = 0, pieces[k] = 200, seed[k++] = 7;
    return k;
}

/* The tests' perfect packings, each planned with the defaults and with
 * early=0 (the planner before its quick tries at the bound: the
 * heuristics' whole budget first): CPU seconds of each, their ratio, and
 * how many are planned at their bound within 20 ms. */
static void bpl_test_perfect(const bench_env_t *env, gm_json_t *j)
{
    int style[64];
    size_t pieces[64];
    uint64_t seed[64];
    size_t k = bpl_test_packings(style, pieces, seed);
    size_t fast = 0, exact = 0;
    double sum = 0, sum0 = 0, slowest = 0, logr = 0;
    gm_json_key(j, "perfect_tests");
    gm_json_begin_object(j);
    gm_json_key(j, "plans");
    gm_json_begin_array(j);
    for (size_t i = 0; i < k; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/perfect.1048576.csv", env->dir);
        FILE *f = fopen(path, "w");
        if (f == NULL)
            break;
        gt_perfect_packing(f, seed[i], style[i], 1048576, 1048576, 1024, pieces[i]);
        fclose(f);
        size_t n, na;
        uint64_t cap, load;
        gm_event_t *ev = gt_minimalloc_events(path, &n, &cap);
        remove(path);
        if (ev == NULL)
            break;
        gm_lifetime_t *lt = bpl_lifetimes(ev, n, &na, &load);
        bpl_result_t r = bpl_plan(lt, na, n, "{\"capacity\": 1048576}");
        bpl_result_t r0 = bpl_plan_early(lt, na, n, "{\"capacity\": 1048576}", "0");
        int at = r.pi.peak == load;
        exact += at;
        fast += at && r.cpu_s <= 0.020;
        sum += r.cpu_s;
        sum0 += r0.cpu_s;
        slowest = r.cpu_s > slowest ? r.cpu_s : slowest;
        double ratio = r0.cpu_s > 0 ? r.cpu_s / r0.cpu_s : 1.0;
        logr += log(ratio > 1e-9 ? ratio : 1e-9);
        fprintf(stderr,
                "placement: test packing %s %zu #%" PRIu64 " (%zu buffers): %s, %.4f s of CPU, "
                "%.4f s with early=0 (%.3fx)\n",
                style[i] ? "bottom-left" : "guillotine", pieces[i], seed[i], na,
                at ? "at its bound" : "ABOVE its bound", r.cpu_s, r0.cpu_s, ratio);
        gm_json_begin_object(j);
        gm_json_key(j, "style");
        gm_json_str(j, style[i] ? "bottom-left" : "guillotine");
        gm_json_key(j, "pieces");
        gm_json_u64(j, pieces[i]);
        gm_json_key(j, "seed");
        gm_json_u64(j, seed[i]);
        gm_json_key(j, "buffers");
        gm_json_u64(j, na);
        gm_json_key(j, "at_bound");
        gm_json_bool(j, at);
        gm_json_key(j, "cpu_s");
        gm_json_double(j, r.cpu_s);
        gm_json_key(j, "early0_cpu_s");
        gm_json_double(j, r0.cpu_s);
        gm_json_key(j, "ratio");
        gm_json_double(j, ratio);
        gm_json_end_object(j);
        free(lt);
        free(ev);
    }
    gm_json_end_array(j);
    double geo = k ? exp(logr / (double)k) : 1.0;
    fprintf(stderr,
            "placement: the tests' %zu perfect packings: %zu at their bound, %zu of them within "
            "20 ms; %.2f s of CPU in all (%.2f s with early=0: %.3fx), slowest %.4f s; "
            "geometric mean of the ratios %.3f\n",
            k, exact, fast, sum, sum0, sum0 > 0 ? sum / sum0 : 1.0, slowest, geo);
    gm_json_key(j, "instances");
    gm_json_u64(j, k);
    gm_json_key(j, "at_bound");
    gm_json_u64(j, exact);
    gm_json_key(j, "within_20ms");
    gm_json_u64(j, fast);
    gm_json_key(j, "cpu_s");
    gm_json_double(j, sum);
    gm_json_key(j, "early0_cpu_s");
    gm_json_double(j, sum0);
    gm_json_key(j, "slowest_cpu_s");
    gm_json_double(j, slowest);
    gm_json_key(j, "ratio_geomean");
    gm_json_double(j, geo);
    gm_json_end_object(j);
}

/* A /proc/self/status field in KiB (VmRSS, VmHWM), or -1. */
static long bpl_status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long v = -1;
    size_t len = strlen(field);
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            v = strtol(line + len + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* The planner's memory on the first `events` events of the seeded random
 * workload (the bench trace's generator), in a child process: the
 * lifetimes made (the trace's own array) and the events freed, the peak
 * resident size reset (/proc/self/clear_refs 5), then offline's prepare;
 * its bytes = the peak resident size after it minus the resident size
 * before, over the allocations.  -1 where /proc cannot say. */
static double bpl_plan_bytes(const bench_env_t *env, uint64_t events, size_t *nalloc)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        double per = -1;
        size_t na = 0;
        gm_error_t err;
        gm_workload_config_t wc;
        gm_workload_config_default(&wc);
        wc.events = events;
        wc.seed = env->seed;
        gm_workload_t *wl;
        gm_event_t *ev = malloc(events * sizeof *ev);
        if (ev != NULL && gm_workload_create(&wc, &wl, &err) == 0) {
            size_t n = 0;
            for (size_t k; (k = gm_workload_next(wl, ev + n, events - n)) > 0;)
                n += k;
            gm_workload_destroy(wl);
            uint64_t load;
            gm_lifetime_t *lt = bpl_lifetimes(ev, n, &na, &load);
            free(ev);
            const gm_policy_ops_t *off = gm_policy_find("offline");
            gm_params_t params;
            gm_device_t dev;
            gm_policy_t *p;
            gm_device_init(&dev, NULL);
            FILE *cr = fopen("/proc/self/clear_refs", "w");
            int reset = cr != NULL && fputs("5", cr) >= 0;
            if (cr != NULL && fclose(cr) != 0)
                reset = 0;
            long before = bpl_status_kib("VmRSS");
            if (reset && before >= 0 && off != NULL && gm_params_init(&params, off, &err) == 0 &&
                off->create(&dev, params.values, &p, &err) == 0) {
                gm_trace_context_t ctx = {.lifetimes = lt, .nlifetimes = na, .events = n};
                if (off->prepare(p, &ctx, &err) == 0) {
                    long hwm = bpl_status_kib("VmHWM");
                    if (hwm >= before && na > 0)
                        per = (double)(hwm - before) * 1024.0 / (double)na;
                }
            }
        }
        double out[2] = {per, (double)na};
        ssize_t w = write(fd[1], out, sizeof out);
        _exit(w == (ssize_t)sizeof out ? 0 : 1);
    }
    close(fd[1]);
    double in[2] = {-1, 0};
    if (pid < 0 || read(fd[0], in, sizeof in) != (ssize_t)sizeof in)
        in[0] = -1;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    *nalloc = (size_t)in[1];
    return in[0];
}

static int bpl_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void bench_placement(const bench_env_t *env, gm_json_t *j)
{
    gm_json_key(j, "placement");
    gm_json_begin_object(j);
    gm_json_key(j, "minimalloc_times");
    gm_json_str(j, "not measured: MiniMalloc cannot be built on this machine");

    /* the shared instances */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/minimalloc", env->data_dir);
    DIR *d = opendir(dir);
    gm_json_key(j, "instances");
    gm_json_begin_object(j);
    if (d != NULL) {
        char *names[64];
        size_t nn = 0;
        for (struct dirent *e; (e = readdir(d)) != NULL && nn < 64;) {
            size_t len = strlen(e->d_name);
            if (len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0)
                names[nn++] = strdup(e->d_name);
        }
        closedir(d);
        qsort(names, nn, sizeof names[0], bpl_name_cmp);
        for (size_t i = 0; i < nn; i++) {
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            size_t n, na;
            uint64_t cap = 0, load;
            gm_event_t *ev = gt_minimalloc_events(path, &n, &cap);
            if (ev == NULL) {
                free(names[i]);
                continue;
            }
            gm_lifetime_t *lt = bpl_lifetimes(ev, n, &na, &load);
            char attrs[64];
            snprintf(attrs, sizeof attrs, "{\"capacity\": %" PRIu64 "}", cap);
            bpl_result_t r = bpl_plan(lt, na, n, attrs);
            fprintf(stderr,
                    "placement: %s: %" PRIu64 " bytes (capacity %" PRIu64 ", load %" PRIu64
                    "), %s, %.2f s (%.2f s of CPU)\n",
                    names[i], r.pi.peak, cap, load, gm_plan_status_name(r.pi.status), r.wall_s,
                    r.cpu_s);
            gm_json_key(j, names[i]);
            gm_json_begin_object(j);
            gm_json_key(j, "buffers");
            gm_json_u64(j, na);
            gm_json_key(j, "capacity");
            gm_json_u64(j, cap);
            gm_json_key(j, "load");
            gm_json_u64(j, load);
            gm_json_key(j, "peak");
            gm_json_u64(j, r.pi.peak);
            gm_json_key(j, "status");
            gm_json_str(j, gm_plan_status_name(r.pi.status));
            gm_json_key(j, "plan_s");
            gm_json_double(j, r.wall_s);
            gm_json_key(j, "plan_cpu_s");
            gm_json_double(j, r.cpu_s);
            gm_json_end_object(j);
            free(lt);
            free(ev);
            free(names[i]);
        }
    }
    gm_json_end_object(j);

    /* the tests' perfect packings, against the planner without its quick
     * tries */
    bpl_test_perfect(env, j);

    /* generated perfect packings */
    static const int styles[2] = {0, 1};
    static const size_t pieces[2] = {400, 400};
    for (int s = 0; s < 2; s++) {
        size_t exact = 0, total = 0;
        double slowest = 0, sum = 0;
        for (uint64_t seed = 0; seed < 40; seed++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/perfect.1048576.csv", env->dir);
            FILE *f = fopen(path, "w");
            if (f == NULL)
                break;
            gt_perfect_packing(f, seed, styles[s], 1048576, 1048576, 1024, pieces[s]);
            fclose(f);
            size_t n, na;
            uint64_t cap, load;
            gm_event_t *ev = gt_minimalloc_events(path, &n, &cap);
            remove(path);
            if (ev == NULL)
                break;
            gm_lifetime_t *lt = bpl_lifetimes(ev, n, &na, &load);
            bpl_result_t r = bpl_plan(lt, na, n, "{\"capacity\": 1048576}");
            exact += r.pi.peak == cap;
            total++;
            sum += r.cpu_s;
            slowest = r.cpu_s > slowest ? r.cpu_s : slowest;
            free(lt);
            free(ev);
        }
        fprintf(stderr,
                "placement: perfect packings (%s, %zu pieces): %zu of %zu exact, %.2f s of CPU "
                "in all, slowest %.2f s\n",
                s ? "bottom-left" : "guillotine", pieces[s], exact, total, sum, slowest);
        gm_json_key(j, s ? "perfect_bottom_left" : "perfect_guillotine");
        gm_json_begin_object(j);
        gm_json_key(j, "pieces");
        gm_json_u64(j, pieces[s]);
        gm_json_key(j, "exact");
        gm_json_u64(j, exact);
        gm_json_key(j, "instances");
        gm_json_u64(j, total);
        gm_json_key(j, "cpu_s");
        gm_json_double(j, sum);
        gm_json_key(j, "slowest_cpu_s");
        gm_json_double(j, slowest);
        gm_json_end_object(j);
    }

    /* one million allocations */
    gm_error_t err;
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = 2000000;
    wc.seed = env->seed;
    gm_workload_t *wl;
    if (gm_workload_create(&wc, &wl, &err))
        bench_die("workload", &err);
    gm_event_t *ev = malloc(wc.events * sizeof *ev);
    if (ev == NULL)
        exit(1);
    size_t n = 0;
    for (size_t k; (k = gm_workload_next(wl, ev + n, wc.events - n)) > 0;)
        n += k;
    gm_workload_destroy(wl);
    size_t na;
    uint64_t load;
    gm_lifetime_t *lt = bpl_lifetimes(ev, n, &na, &load);
    bpl_result_t r = bpl_plan(lt, na, n, NULL);
    fprintf(stderr,
            "placement: offline plans %zu allocations in %.2f s (%.2f s of CPU): %" PRIu64
            " bytes, bound %" PRIu64 ", %s\n",
            na, r.wall_s, r.cpu_s, r.pi.peak, r.pi.lower_bound, gm_plan_status_name(r.pi.status));
    gm_json_key(j, "plan_1m_s");
    gm_json_double(j, r.wall_s);
    gm_json_key(j, "plan_1m_cpu_s");
    gm_json_double(j, r.cpu_s);
    gm_json_key(j, "plan_1m_status");
    gm_json_str(j, gm_plan_status_name(r.pi.status));
    free(lt);
    free(ev);

    /* the planner's memory per allocation, on two sizes of the trace (the
     * figure does not grow with it) */
    static const uint64_t sizes[2] = {2000000, 8000000};
    gm_json_key(j, "plan_bytes_per_allocation");
    gm_json_begin_object(j);
    for (int k = 0; k < 2; k++) {
        size_t nalloc = 0;
        double per = bpl_plan_bytes(env, sizes[k], &nalloc);
        char key[32];
        snprintf(key, sizeof key, "%" PRIu64, sizes[k]);
        gm_json_key(j, key);
        if (per < 0) {
            gm_json_str(j, "not measured: /proc/self/clear_refs or VmHWM unavailable");
            fprintf(stderr, "placement: planner memory not measured (no /proc/self/clear_refs)\n");
            continue;
        }
        gm_json_double(j, per);
        fprintf(stderr,
                "placement: offline's planning of %zu allocations (%" PRIu64
                " events): %.1f bytes per allocation at its peak, beyond the lifetimes "
                "(target <= 64)\n",
                nalloc, sizes[k], per);
    }
    gm_json_end_object(j);
    gm_json_end_object(j);
}
