/*
 * tests/bench/bench_sweep.c — section `sweep`: a 200-run sweep (25 random
 * traces × 8 configurations: the registered policies but the planners,
 * completed with buddy arena sizes when they are fewer) with one
 * worker and with two, each into a fresh results store, in this one run;
 * then the same grid as 4 shards run one after the other with one worker
 * each (a cluster's tasks); then the HTML report of the 200 runs (its size
 * and the time to write it).  The targets: -j 2 at least 1.8× faster than
 * -j 1 on two cores, the shards' summed time within 10% of the one
 * process, a report under 5 MB.
 *
 * JSON: "sweep": {"runs", "events_per_trace", "j1_s", "j2_s",
 * "speedup_j2" (j1_s ÷ j2_s), "shards", "shards_s" (their summed wall
 * time), "shards_overhead" (shards_s ÷ j1_s − 1), "j1_parent_cpu_s", "j1_worker_cpu_s",
 * "j2_parent_cpu_s", "j2_worker_cpu_s" (CPU seconds of the writing parent
 * and of the workers: how the work divides, whatever else the machine
 * runs), "report_bytes", "report_s", "cpus"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "gmsim/report.h"
#include "gmsim/sweep.h"
#include "util.h"

#define BENCH_SWEEP_TRACES 25
#define BENCH_SWEEP_EVENTS 1000000
#define BENCH_SWEEP_SHARDS 4

static void bench_sweep_remove(const char *db)
{
    static const char *const sfx[] = {"", "-wal", "-shm"};
    char path[1024];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s%s", db, sfx[i]);
        unlink(path);
    }
}

static double bench_sweep_cpu(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Wall seconds of one sweep (shard `shard` of `nshards`, 0 for all);
 * *parent_cpu and *worker_cpu get the CPU seconds of this process (the
 * writer) and of its workers. */
static double bench_sweep_once(const char *in, const char *out, gm_params_t *sets, size_t n,
                               unsigned jobs, unsigned shard, unsigned nshards,
                               double *parent_cpu, double *worker_cpu)
{
    bench_sweep_remove(out);
    const char *inputs[] = {in};
    gm_sweep_config_t cfg;
    gt_sweep_config(&cfg, inputs, 1, sets, n, out, jobs);
    cfg.shard = shard;
    cfg.nshards = nshards;
    gm_sweep_summary_t sum;
    gm_error_t err = {0};
    double c0 = bench_sweep_cpu(RUSAGE_SELF), w0 = bench_sweep_cpu(RUSAGE_CHILDREN);
    double t0 = bench_now();
    if (gm_sweep_run(&cfg, &sum, &err) != 0)
        bench_die("sweep", &err);
    double t = bench_now() - t0;
    *parent_cpu = bench_sweep_cpu(RUSAGE_SELF) - c0;
    *worker_cpu = bench_sweep_cpu(RUSAGE_CHILDREN) - w0;
    if (sum.ran != sum.runs || (nshards == 0 && sum.ran != BENCH_SWEEP_TRACES * n)) {
        gm_error_set(&err, GM_ESTATE, "%zu runs instead of %zu", sum.ran,
                     nshards ? sum.runs : (size_t)BENCH_SWEEP_TRACES * n);
        bench_die("sweep", &err);
    }
    return t;
}

void bench_sweep(const bench_env_t *env, gm_json_t *j)
{
    char in[1024], out1[1024], out2[1024], html[1024];
    snprintf(in, sizeof in, "%s/bench-sweep-in.db", env->dir);
    snprintf(out1, sizeof out1, "%s/bench-sweep-j1.db", env->dir);
    snprintf(out2, sizeof out2, "%s/bench-sweep-j2.db", env->dir);
    snprintf(html, sizeof html, "%s/bench-sweep-report.html", env->dir);
    bench_sweep_remove(in);
    gm_error_t err = {0};
    gm_store_t *s;
    if (gm_store_open(in, GM_STORE_WRITE, &s, &err) != 0)
        bench_die("sweep", &err);
    for (int i = 0; i < BENCH_SWEEP_TRACES; i++) {
        char name[32];
        snprintf(name, sizeof name, "random%02d", i);
        gm_writer_t *w;
        gm_workload_config_t wc;
        gm_workload_config_default(&wc);
        wc.events = BENCH_SWEEP_EVENTS;
        wc.seed = env->seed + (uint64_t)i;
        wc.live_max = UINT64_C(4) << 30;
        if (gm_writer_begin(s, name, 0, &w, &err) != 0 || gm_workload_write(&wc, w, &err) != 0 ||
            gm_writer_attr_int(w, "seq_len", 128 * (1 + i % 5), &err) != 0 ||
            gm_writer_finish(w, &err) != 0)
            bench_die("sweep", &err);
    }
    gm_store_close(s);

    /* Every policy but the planners (their cost is another question): the
     * first 8, or all of them and buddy arena sizes up to 8. */
    const gm_policy_ops_t *pol[64];
    size_t np = 0;
    for (size_t i = 0; i < gm_policy_count() && np < 8; i++)
        if (!(gm_policy_at(i)->flags & GM_POLICY_NEEDS_LIFETIMES))
            pol[np++] = gm_policy_at(i);
    gm_params_t *sets, *extra = NULL;
    size_t n, nextra = 0;
    if (gm_configs_expand(pol, np, NULL, 0, &sets, &n, &err) != 0)
        bench_die("sweep", &err);
    if (n < 8) {
        static const char *const arenas[] = {
            "buddy.arena=64MiB",
            "buddy.arena=64MiB,128MiB",
            "buddy.arena=64MiB,128MiB,256MiB",
            "buddy.arena=64MiB,128MiB,256MiB,512MiB",
            "buddy.arena=64MiB,128MiB,256MiB,512MiB,2GiB",
            "buddy.arena=64MiB,128MiB,256MiB,512MiB,2GiB,4GiB",
            "buddy.arena=64MiB,128MiB,256MiB,512MiB,2GiB,4GiB,8GiB",
        };
        const gm_policy_ops_t *buddy = gm_policy_find("buddy");
        const char *params[] = {arenas[8 - n - 1]};
        if (gm_configs_expand(&buddy, 1, params, 1, &extra, &nextra, &err) != 0)
            bench_die("sweep", &err);
        gm_params_t *all = realloc(sets, (n + nextra) * sizeof *all);
        if (all == NULL) {
            gm_error_set(&err, GM_ENOMEM, "out of memory");
            bench_die("sweep", &err);
        }
        sets = all;
        memcpy(sets + n, extra, nextra * sizeof *extra); /* moved, not copied */
        free(extra);
        n += nextra;
    }
    fprintf(stderr, "gmsim-bench: sweep: %d runs, -j 1, -j 2, then 4 shards\n",
            (int)(BENCH_SWEEP_TRACES * n));
    double p1, w1, p2, w2, ps, ws, tshards = 0;
    double t1 = bench_sweep_once(in, out1, sets, n, 1, 0, 0, &p1, &w1);
    double t2 = bench_sweep_once(in, out2, sets, n, 2, 0, 0, &p2, &w2);
    /* The same grid as BENCH_SWEEP_SHARDS shards one after the other, one
     * worker each (as cluster tasks would run them): their summed time
     * against the one-process -j 1 sweep is the cost of sharding. */
    for (unsigned i = 0; i < BENCH_SWEEP_SHARDS; i++) {
        char shard[1024];
        snprintf(shard, sizeof shard, "%s/bench-sweep-shard%u.db", env->dir, i);
        tshards += bench_sweep_once(in, shard, sets, n, 1, i, BENCH_SWEEP_SHARDS, &ps, &ws);
        bench_sweep_remove(shard);
    }

    const char *stores[] = {out2, in};
    gm_report_config_t rc = {.stores = stores, .nstores = 2, .format = GM_REPORT_HTML};
    FILE *f = fopen(html, "w");
    if (f == NULL) {
        gm_error_set(&err, GM_EIO, "cannot write '%s'", html);
        bench_die("sweep", &err);
    }
    double r0 = bench_now();
    if (gm_report_write(&rc, f, NULL, &err) != 0)
        bench_die("sweep report", &err);
    fclose(f);
    double tr = bench_now() - r0;
    struct stat st;
    long long bytes = stat(html, &st) == 0 ? (long long)st.st_size : -1;

    gm_json_key(j, "sweep");
    gm_json_begin_object(j);
    gm_json_key(j, "runs");
    gm_json_u64(j, BENCH_SWEEP_TRACES * n);
    gm_json_key(j, "events_per_trace");
    gm_json_u64(j, BENCH_SWEEP_EVENTS);
    gm_json_key(j, "j1_s");
    gm_json_double(j, t1);
    gm_json_key(j, "j2_s");
    gm_json_double(j, t2);
    gm_json_key(j, "speedup_j2");
    gm_json_double(j, t1 / t2);
    gm_json_key(j, "shards");
    gm_json_u64(j, BENCH_SWEEP_SHARDS);
    gm_json_key(j, "shards_s");
    gm_json_double(j, tshards);
    gm_json_key(j, "shards_overhead");
    gm_json_double(j, tshards / t1 - 1.0);
    /* CPU seconds: on a machine busy with other work the wall-clock
     * speedup says little; these say how the work divides.  With two idle
     * cores the speedup is about (parent + workers) / max(parent, workers / 2)
     * capped at 2. */
    gm_json_key(j, "j1_parent_cpu_s");
    gm_json_double(j, p1);
    gm_json_key(j, "j1_worker_cpu_s");
    gm_json_double(j, w1);
    gm_json_key(j, "j2_parent_cpu_s");
    gm_json_double(j, p2);
    gm_json_key(j, "j2_worker_cpu_s");
    gm_json_double(j, w2);
    gm_json_key(j, "report_bytes");
    gm_json_i64(j, bytes);
    gm_json_key(j, "report_s");
    gm_json_double(j, tr);
    gm_json_key(j, "cpus");
    gm_json_i64(j, sysconf(_SC_NPROCESSORS_ONLN));
    gm_json_end_object(j);
    gm_configs_free(sets, n);
    bench_sweep_remove(in);
    bench_sweep_remove(out1);
    bench_sweep_remove(out2);
    unlink(html);
}
