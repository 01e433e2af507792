/*
 * tests/bench/bench_policies.c — the `policies` section: every registered
 * policy's replay speed, and the offline planner's planning time.
 *
 *   - On the random workload (env->events, default 10 million events) and on
 *     the largest PyTorch snapshot in ../shared/data/snapshots (imported
 *     with the snapshot importer into a scratch store, then read into
 *     memory): each policy replays the in-memory events through the engine
 *     (events/s), and the same alloc/free sequence runs through the C
 *     library's malloc/free in this process: ratio_vs_malloc = the policy's
 *     ns per event ÷ malloc's.  A planner is prepared with the lifetimes
 *     first; its planning is timed apart (plan_s), not in events/s.
 *   - offline_plan_1m_s: seconds the offline planner takes to plan a trace
 *     of one million allocations (a 2-million-event random workload), and
 *     offline_plan_1m_cpu_s, the CPU seconds it took (the same on an idle
 *     machine; on a shared one the wall time also counts the waiting).
 * JSON: {"policies": {"<name>": {"random_events_per_s", "random_ratio_vs_malloc",
 * "snapshot_events_per_s", "snapshot_ratio_vs_malloc", ...}, "snapshot": "file",
 * "offline_plan_1m_s": X}}.  Without the data folder the snapshot figures
 * are left out and "snapshot_skipped" says why.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "gmsim/torch.h"

/* CPU seconds of this process: planning is single-threaded, so on a shared
 * machine this is the figure an idle one would show as wall time. */
static double bp_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct bp_events {
    gm_event_t *ev;
    size_t n;
    gm_lifetime_t *lt;
    size_t nallocs;
} bp_events_t;

static void bp_lifetimes(bp_events_t *e)
{
    size_t na = 0;
    for (size_t i = 0; i < e->n; i++)
        if (e->ev[i].op == GM_OP_ALLOC && e->ev[i].id + 1 > na)
            na = (size_t)e->ev[i].id + 1;
    e->lt = calloc(na ? na : 1, sizeof *e->lt);
    if (e->lt == NULL) {
        fprintf(stderr, "gmsim-bench: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < e->n; i++) {
        const gm_event_t *v = &e->ev[i];
        if (v->op == GM_OP_ALLOC)
            e->lt[v->id] = (gm_lifetime_t){v->size, i, GM_LIFETIME_OPEN, v->ts_ns, 0};
        else if (v->op == GM_OP_FREE && v->id < na) {
            e->lt[v->id].end = i;
            e->lt[v->id].end_ns = v->ts_ns;
        }
    }
    e->nallocs = na;
}

static void bp_workload(uint64_t events, uint64_t seed, bp_events_t *e)
{
    gm_error_t err;
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = events;
    wc.seed = seed;
    gm_workload_t *wl;
    if (gm_workload_create(&wc, &wl, &err))
        bench_die("workload", &err);
    e->ev = malloc(events * sizeof *e->ev);
    if (e->ev == NULL) {
        fprintf(stderr, "gmsim-bench: out of memory for %llu events\n", (unsigned long long)events);
        exit(1);
    }
    e->n = 0;
    for (size_t k; (k = gm_workload_next(wl, e->ev + e->n, events - e->n)) > 0;)
        e->n += k;
    gm_workload_destroy(wl);
    bp_lifetimes(e);
}

/* The reference: the same alloc/free sequence through malloc/free. */
static double bp_malloc(const bp_events_t *e)
{
    void **ptr = calloc(e->nallocs ? e->nallocs : 1, sizeof *ptr);
    double t0 = bench_now();
    for (size_t i = 0; i < e->n; i++) {
        if (e->ev[i].op == GM_OP_ALLOC) {
            ptr[e->ev[i].id] = malloc(e->ev[i].size);
            if (ptr[e->ev[i].id] == NULL) {
                fprintf(stderr, "gmsim-bench: malloc failed\n");
                exit(1);
            }
        } else if (e->ev[i].op == GM_OP_FREE) {
            free(ptr[e->ev[i].id]);
        }
    }
    double dt = bench_now() - t0;
    free(ptr);
    return dt;
}

/* Replay e through ops from memory; seconds of replay (planning apart in
 * *plan_s). */
static double bp_replay(const gm_policy_ops_t *ops, const bp_events_t *e, const char *attrs,
                        double *plan_s)
{
    gm_error_t err;
    gm_replay_t *r;
    gm_params_t params;
    if (gm_replay_create(NULL, &r, &err) || gm_params_init(&params, ops, &err) ||
        gm_replay_add(r, &params, &err))
        bench_die("replay setup", &err);
    gm_trace_context_t ctx = {.name = "bench", .attrs = attrs, .events = e->n};
    if (gm_replay_needs_lifetimes(r)) {
        ctx.lifetimes = e->lt;
        ctx.nlifetimes = e->nallocs;
    }
    double t0 = bench_now();
    if (gm_replay_prepare(r, &ctx, &err))
        bench_die(ops->name, &err);
    *plan_s = bench_now() - t0;
    t0 = bench_now();
    for (size_t i = 0; i < e->n; i += GM_CHUNK_EVENTS) {
        size_t k = e->n - i < GM_CHUNK_EVENTS ? e->n - i : GM_CHUNK_EVENTS;
        if (gm_replay_feed(r, e->ev + i, k, &err))
            bench_die(ops->name, &err);
    }
    if (gm_replay_finish(r, &err))
        bench_die(ops->name, &err);
    double dt = bench_now() - t0;
    gm_params_release(&params);
    gm_replay_destroy(r);
    return dt;
}

/* The largest *.pickle in dir/snapshots (path in buf); 0 when none. */
static int bp_largest_snapshot(const char *data, char *buf, size_t len)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/snapshots", data);
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    off_t best = -1;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        size_t l = strlen(de->d_name);
        if (l < 8 || strcmp(de->d_name + l - 7, ".pickle") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > best) {
            best = st.st_size;
            snprintf(buf, len, "%s", path);
        }
    }
    closedir(d);
    return best >= 0;
}

/* Import the snapshot into a scratch store and read its first trace into e
 * (attributes into *attrs, caller frees); 0, or nonzero with a reason. */
static int bp_snapshot(const bench_env_t *env, const char *path, bp_events_t *e, char **attrs,
                       const char **why)
{
    char db[4096];
    snprintf(db, sizeof db, "%s/gmsim-bench-policies-%d.db", env->dir, (int)getpid());
    unlink(db);
    gm_error_t err;
    gm_store_t *s;
    gm_import_target_t *t;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        *why = "cannot open the snapshot";
        return 1;
    }
    if (gm_store_open(db, GM_STORE_WRITE, &s, &err) ||
        gm_import_target_create(s, "snap", 0, &t, &err))
        bench_die(db, &err);
    if (gm_torch_import(f, path, t, &err)) {
        fclose(f);
        gm_import_abort(t);
        bench_die(path, &err);
    }
    fclose(f);
    char name[256];
    snprintf(name, sizeof name, "%s", gm_import_count(t) ? gm_import_name(t, 0) : "snap");
    if (gm_import_commit(t, &err))
        bench_die(path, &err);
    gm_reader_t *rd;
    if (gm_reader_open(s, name, &rd, &err))
        bench_die(name, &err);
    const gm_trace_info_t *info = gm_reader_info(rd);
    *attrs = info->attrs ? strdup(info->attrs) : NULL;
    e->ev = malloc((info->events ? info->events : 1) * sizeof *e->ev);
    e->n = 0;
    const gm_event_t *ev;
    size_t k;
    int rc;
    while ((rc = gm_reader_next(rd, &ev, &k, &err)) == 0 && k > 0) {
        memcpy(e->ev + e->n, ev, k * sizeof *ev);
        e->n += k;
    }
    if (rc)
        bench_die(name, &err);
    gm_reader_close(rd);
    gm_store_close(s);
    unlink(db);
    bp_lifetimes(e);
    return 0;
}

typedef struct bp_fig {
    double events_per_s, ratio, plan_s;
} bp_fig_t;

static void bp_measure(const bp_events_t *e, const char *attrs, bp_fig_t *fig, size_t np,
                       const char *what)
{
    double malloc_ns = bp_malloc(e) * 1e9 / (double)e->n;
    for (size_t i = 0; i < np; i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        double dt = bp_replay(ops, e, attrs, &fig[i].plan_s);
        fig[i].events_per_s = (double)e->n / dt;
        fig[i].ratio = dt * 1e9 / (double)e->n / malloc_ns;
        fprintf(stderr, "policies: %s %-10s %8.2f M events/s  %6.2f x malloc\n", what, ops->name,
                fig[i].events_per_s / 1e6, fig[i].ratio);
    }
}

void bench_policies(const bench_env_t *env, gm_json_t *j)
{
    size_t np = gm_policy_count();
    bp_fig_t *rnd = calloc(np, sizeof *rnd), *snap = calloc(np, sizeof *snap);
    bp_events_t e = {0};
    bp_workload(env->events, env->seed, &e);
    bp_measure(&e, NULL, rnd, np, "random");
    free(e.ev);
    free(e.lt);

    char path[8192];
    const char *why = NULL, *snapname = NULL;
    char *attrs = NULL;
    if (!bp_largest_snapshot(env->data_dir, path, sizeof path)) {
        why = "no snapshots in the data folder";
    } else if (bp_snapshot(env, path, &e, &attrs, &why) == 0) {
        snapname = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        bp_measure(&e, attrs, snap, np, "snapshot");
        free(e.ev);
        free(e.lt);
    }

    /* one million allocations: the first 2 million events of the workload */
    bp_events_t m = {0};
    bp_workload(2000000, env->seed, &m);
    double plan_s = 0, plan_cpu_s = 0;
    const gm_policy_ops_t *off = gm_policy_find("offline");
    if (off != NULL) {
        gm_error_t err;
        gm_params_t params;
        gm_device_t dev;
        gm_policy_t *p;
        gm_device_init(&dev, NULL);
        if (gm_params_init(&params, off, &err) || off->create(&dev, params.values, &p, &err))
            bench_die("offline", &err);
        gm_trace_context_t ctx = {.lifetimes = m.lt, .nlifetimes = m.nallocs, .events = m.n};
        double t0 = bench_now(), c0 = bp_cpu_now();
        if (off->prepare(p, &ctx, &err))
            bench_die("offline", &err);
        plan_s = bench_now() - t0;
        plan_cpu_s = bp_cpu_now() - c0;
        fprintf(stderr, "policies: offline plans %zu allocations in %.2f s (%.2f s of CPU)\n",
                m.nallocs, plan_s, plan_cpu_s);
        off->destroy(p);
        gm_params_release(&params);
    }
    free(m.ev);
    free(m.lt);

    gm_json_key(j, "policies");
    gm_json_begin_object(j);
    for (size_t i = 0; i < np; i++) {
        const gm_policy_ops_t *ops = gm_policy_at(i);
        gm_json_key(j, ops->name);
        gm_json_begin_object(j);
        gm_json_key(j, "random_events_per_s");
        gm_json_double(j, rnd[i].events_per_s);
        gm_json_key(j, "random_ratio_vs_malloc");
        gm_json_double(j, rnd[i].ratio);
        if (ops->flags & GM_POLICY_NEEDS_LIFETIMES) {
            gm_json_key(j, "random_plan_s");
            gm_json_double(j, rnd[i].plan_s);
        }
        if (snapname) {
            gm_json_key(j, "snapshot_events_per_s");
            gm_json_double(j, snap[i].events_per_s);
            gm_json_key(j, "snapshot_ratio_vs_malloc");
            gm_json_double(j, snap[i].ratio);
            if (ops->flags & GM_POLICY_NEEDS_LIFETIMES) {
                gm_json_key(j, "snapshot_plan_s");
                gm_json_double(j, snap[i].plan_s);
            }
        }
        gm_json_end_object(j);
    }
    if (snapname) {
        gm_json_key(j, "snapshot");
        gm_json_str(j, snapname);
    } else {
        gm_json_key(j, "snapshot_skipped");
        gm_json_str(j, why);
    }
    gm_json_key(j, "offline_plan_1m_s");
    gm_json_double(j, plan_s);
    gm_json_key(j, "offline_plan_1m_cpu_s");
    gm_json_double(j, plan_cpu_s);
    gm_json_end_object(j);
    free(attrs);
    free(rnd);
    free(snap);
}
