/*
 * tests/test_sweep.c — sweeps: results keyed so that reruns and killed
 * sweeps resume without duplicates or losses, shards that partition the
 * grid by work, merges without duplicates, and the run queries of
 * traces/runs.c.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gmsim/sweep.h"
#include "util.h"

static void make_store(const char *path, size_t n, uint64_t events)
{
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%zu", i);
        gm_writer_t *w;
        cr_assert_eq(gm_writer_begin(s, name, 0, &w, &err), 0, "%s", err.msg);
        gm_workload_config_t wc;
        gm_workload_config_default(&wc);
        wc.events = events + 1000 * i; /* unequal work */
        wc.seed = i + 1;
        wc.live_max = 256u << 20;
        cr_assert_eq(gm_workload_write(&wc, w, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    }
    gm_store_close(s);
}

typedef struct grid {
    gm_params_t *sets;
    size_t nsets;
} grid_t;

/* native, buddy with two arenas: 3 configurations. */
static grid_t make_grid(void)
{
    const gm_policy_ops_t *pol[2] = {gm_policy_find("native"), gm_policy_find("buddy")};
    const char *params[] = {"buddy.arena=256MiB,1GiB"};
    grid_t g;
    gm_error_t err = {0};
    cr_assert_eq(gm_configs_expand(pol, 2, params, 1, &g.sets, &g.nsets, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(g.nsets, 3);
    return g;
}

static gm_sweep_config_t sweep_cfg(const char *const *inputs, size_t ninputs, grid_t *g,
                                   const char *results, unsigned jobs)
{
    gm_sweep_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.inputs = inputs;
    cfg.ninputs = ninputs;
    cfg.sets = g->sets;
    cfg.nsets = g->nsets;
    gm_device_config_default(&cfg.device);
    cfg.results = results;
    cfg.jobs = jobs;
    return cfg;
}

/* The runs of a results store as "key|metrics without timing" lines.  The
 * caller frees with free_keys. */
static char **run_keys(const char *path, size_t *n)
{
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_run_info_t *runs;
    cr_assert_eq(gm_store_list_runs(s, &runs, n, &err), 0, "%s", err.msg);
    char **keys = calloc(*n + 1, sizeof *keys);
    for (size_t i = 0; i < *n; i++) {
        gm_metrics_t m;
        cr_assert_eq(gm_metrics_parse(runs[i].metrics, &m, &err), 0, "%s", err.msg);
        m.sim_ns_per_event = 0;
        char *mj = gm_metrics_json(&m);
        size_t len = strlen(runs[i].trace_digest) + strlen(runs[i].policy) +
                     strlen(runs[i].params) + strlen(runs[i].device) + strlen(mj) + 64;
        keys[i] = malloc(len);
        snprintf(keys[i], len, "%s|%s|%s|%s|%s", runs[i].trace_digest, runs[i].policy,
                 runs[i].params, runs[i].device, mj);
        free(mj);
        /* Every run has its timeline. */
        cr_expect(runs[i].npoints > 0, "run %lld has no timeline", (long long)runs[i].id);
    }
    gm_run_info_free_list(runs, *n);
    gm_store_close(s);
    return keys;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* run_keys sorted; fails the test on a duplicate key. */
static char **sorted_keys(const char *path, size_t *n)
{
    char **k = run_keys(path, n);
    qsort(k, *n, sizeof *k, cmp_str);
    for (size_t i = 1; i < *n; i++) {
        /* The key is everything before the metrics. */
        const char *a = k[i - 1], *b = k[i];
        const char *ma = strrchr(a, '|'), *mb = strrchr(b, '|');
        cr_expect(!(ma - a == mb - b && strncmp(a, b, (size_t)(ma - a)) == 0),
                  "duplicate run in '%s': %.80s", path, a);
    }
    return k;
}

static void free_keys(char **k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(k[i]);
    free(k);
}

static void expect_same_runs(const char *a, const char *b)
{
    size_t na, nb;
    char **ka = sorted_keys(a, &na), **kb = sorted_keys(b, &nb);
    cr_expect_eq(na, nb, "'%s' has %zu runs, '%s' %zu", a, na, b, nb);
    for (size_t i = 0; i < na && i < nb; i++)
        cr_expect_str_eq(ka[i], kb[i]);
    free_keys(ka, na);
    free_keys(kb, nb);
}

typedef struct killer {
    size_t after; /* SIGKILL this process once this many runs ran */
} killer_t;

static void kill_after(void *ctx, const gm_sweep_progress_t *p)
{
    const killer_t *k = ctx;
    if (p->runs_done - p->runs_reused >= k->after)
        raise(SIGKILL);
}

Test(sweep, killed_sweep_resumes_without_duplicates_or_losses)
{
    const char *in = gt_tmpfile("kill-in.db");
    char results[512], full[512];
    snprintf(results, sizeof results, "%s", gt_tmpfile("kill-out.db"));
    snprintf(full, sizeof full, "%s", gt_tmpfile("kill-full.db"));
    make_store(in, 6, 20000);
    grid_t g = make_grid();
    const char *inputs[] = {in};

    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        killer_t k = {5};
        gm_sweep_config_t cfg = sweep_cfg(inputs, 1, &g, results, 2);
        cfg.progress = kill_after;
        cfg.progress_ctx = &k;
        gm_error_t err = {0};
        gm_sweep_run(&cfg, NULL, &err);
        _exit(0); /* not reached when the kill works */
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the sweep was not killed");

    size_t saved;
    char **saved_keys = sorted_keys(results, &saved);
    free_keys(saved_keys, saved);
    cr_expect(saved >= 5 && saved < 18, "%zu runs saved before the kill", saved);

    gm_sweep_config_t cfg = sweep_cfg(inputs, 1, &g, results, 2);
    gm_sweep_summary_t sum;
    gm_error_t err = {0};
    cr_assert_eq(gm_sweep_run(&cfg, &sum, &err), 0, "%s", err.msg);
    cr_expect_eq(sum.grid, 18);
    cr_expect_eq(sum.reused, saved);
    cr_expect_eq(sum.ran, 18 - saved);
    cr_expect_eq(sum.failed, 0);

    /* A third run does nothing; the whole equals an uninterrupted sweep. */
    cr_assert_eq(gm_sweep_run(&cfg, &sum, &err), 0, "%s", err.msg);
    cr_expect_eq(sum.reused, 18);
    cr_expect_eq(sum.ran, 0);
    gm_sweep_config_t fcfg = sweep_cfg(inputs, 1, &g, full, 1);
    cr_assert_eq(gm_sweep_run(&fcfg, &sum, &err), 0, "%s", err.msg);
    cr_expect_eq(sum.ran, 18);
    expect_same_runs(results, full);
    gm_configs_free(g.sets, g.nsets);
}

Test(sweep, shards_partition_the_grid_and_merge_back)
{
    const char *in = gt_tmpfile("shard-in.db");
    make_store(in, 5, 8000);
    grid_t g = make_grid();
    const char *inputs[] = {in};
    char full[512], merged[512], shard[3][512];
    snprintf(full, sizeof full, "%s", gt_tmpfile("shard-full.db"));
    snprintf(merged, sizeof merged, "%s", gt_tmpfile("shard-merged.db"));
    gm_error_t err = {0};
    gm_sweep_summary_t sum;
    gm_sweep_config_t cfg = sweep_cfg(inputs, 1, &g, full, 2);
    cr_assert_eq(gm_sweep_run(&cfg, &sum, &err), 0, "%s", err.msg);
    cr_expect_eq(sum.ran, 15);
    size_t total = 0;
    gm_store_t *out;
    cr_assert_eq(gm_store_open(merged, GM_STORE_WRITE, &out, &err), 0, "%s", err.msg);
    for (unsigned i = 0; i < 3; i++) {
        snprintf(shard[i], sizeof shard[i], "%s", gt_tmpfile(i == 0 ? "s0.db" : i == 1 ? "s1.db" : "s2.db"));
        gm_sweep_config_t sc = sweep_cfg(inputs, 1, &g, shard[i], 1);
        sc.shard = i;
        sc.nshards = 3;
        cr_assert_eq(gm_sweep_run(&sc, &sum, &err), 0, "%s", err.msg);
        cr_expect_eq(sum.grid, 15);
        cr_expect(sum.runs >= 4 && sum.runs <= 6, "shard %u has %zu runs", i, sum.runs);
        total += sum.ran;
        gm_store_t *src;
        size_t copied, skipped;
        cr_assert_eq(gm_store_open(shard[i], GM_STORE_READONLY, &src, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_store_copy_runs(out, src, &copied, &skipped, &err), 0, "%s", err.msg);
        cr_expect_eq(copied, sum.ran);
        cr_expect_eq(skipped, 0, "shards overlap");
        /* Merging the same shard again copies nothing. */
        cr_assert_eq(gm_store_copy_runs(out, src, &copied, &skipped, &err), 0, "%s", err.msg);
        cr_expect_eq(copied, 0);
        cr_expect_eq(skipped, sum.ran);
        gm_store_close(src);
    }
    gm_store_close(out);
    cr_expect_eq(total, 15);
    expect_same_runs(merged, full);

    /* Timelines survive the copy point for point. */
    gm_store_t *a, *b;
    cr_assert_eq(gm_store_open(full, GM_STORE_READONLY, &a, &err), 0);
    cr_assert_eq(gm_store_open(merged, GM_STORE_READONLY, &b, &err), 0);
    gm_run_info_t *ra, *rb;
    size_t na, nb;
    cr_assert_eq(gm_store_list_runs(a, &ra, &na, &err), 0);
    cr_assert_eq(gm_store_list_runs(b, &rb, &nb, &err), 0);
    for (size_t i = 0; i < nb; i++) {
        int64_t id;
        cr_assert_eq(gm_store_find_run(a, rb[i].trace_digest, rb[i].policy, rb[i].params,
                                       rb[i].device, rb[i].version, &id, &err),
                     0, "%s", err.msg);
        gm_timeline_point_t *ta, *tb;
        size_t pa, pb;
        cr_assert_eq(gm_store_run_timeline(a, id, &ta, &pa, &err), 0);
        cr_assert_eq(gm_store_run_timeline(b, rb[i].id, &tb, &pb, &err), 0);
        cr_expect_eq(pa, pb);
        cr_expect(pa > 0 && memcmp(ta, tb, pa * sizeof *ta) == 0, "timeline of run %zu", i);
        free(ta);
        free(tb);
    }
    cr_expect_eq(gm_store_run_timeline(a, 999999, &(gm_timeline_point_t *){0}, &na, &err),
                 GM_ENOTFOUND);
    gm_run_info_free_list(ra, na);
    gm_run_info_free_list(rb, nb);
    gm_store_close(a);
    gm_store_close(b);
    gm_configs_free(g.sets, g.nsets);
}

Test(sweep, shards_are_balanced_by_work)
{
    uint64_t w[200], rng = 42, load[7] = {0}, maxw = 0;
    unsigned out[200], again[200];
    for (size_t i = 0; i < 200; i++) {
        w[i] = 1 + gt_rand(&rng) % 1000000;
        if (w[i] > maxw)
            maxw = w[i];
    }
    gm_error_t err = {0};
    cr_assert_eq(gm_sweep_shards(w, 200, 7, out, &err), 0);
    cr_assert_eq(gm_sweep_shards(w, 200, 7, again, &err), 0);
    cr_expect(memcmp(out, again, sizeof out) == 0, "shards are not deterministic");
    for (size_t i = 0; i < 200; i++) {
        cr_assert(out[i] < 7);
        load[out[i]] += w[i];
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int s = 0; s < 7; s++) {
        lo = load[s] < lo ? load[s] : lo;
        hi = load[s] > hi ? load[s] : hi;
    }
    cr_expect(hi - lo <= maxw, "shards unbalanced: %llu vs %llu", (unsigned long long)hi,
              (unsigned long long)lo);
    cr_expect_eq(gm_sweep_shards(w, 200, 0, out, &err), GM_EINVAL);
}

Test(sweep, inputs_are_never_written)
{
    const char *in = gt_tmpfile("ro-in.db");
    make_store(in, 1, 2000);
    grid_t g = make_grid();
    const char *inputs[] = {in};
    gm_sweep_config_t cfg = sweep_cfg(inputs, 1, &g, in, 1);
    gm_error_t err = {0};
    cr_expect_eq(gm_sweep_run(&cfg, NULL, &err), GM_EINVAL);
    cr_expect(strstr(err.msg, "input") != NULL, "%s", err.msg);
    size_t n;
    char **keys = sorted_keys(in, &n);
    free_keys(keys, n);
    cr_expect_eq(n, 0);
    cfg = sweep_cfg(inputs, 1, &g, gt_tmpfile("ro-out.db"), 1);
    cfg.trace_glob = "zz*";
    cr_expect_eq(gm_sweep_run(&cfg, NULL, &err), GM_ENOTFOUND);
    cfg.trace_glob = NULL;
    cfg.shard = 3;
    cfg.nshards = 3;
    cr_expect_eq(gm_sweep_run(&cfg, NULL, &err), GM_EINVAL);
    gm_configs_free(g.sets, g.nsets);
}

Test(sweep, same_content_under_two_names_runs_once)
{
    const char *a = gt_tmpfile("dup-a.db"), *b = gt_tmpfile("dup-b.db");
    make_store(a, 2, 3000);
    make_store(b, 1, 3000); /* t0 again: the same content */
    grid_t g = make_grid();
    const char *inputs[] = {a, b};
    gm_sweep_config_t cfg = sweep_cfg(inputs, 2, &g, gt_tmpfile("dup-out.db"), 2);
    gm_sweep_summary_t sum;
    gm_error_t err = {0};
    cr_assert_eq(gm_sweep_run(&cfg, &sum, &err), 0, "%s", err.msg);
    cr_expect_eq(sum.traces, 2);
    cr_expect_eq(sum.ran, 6);
    gm_configs_free(g.sets, g.nsets);
}

Test(sweep, a_damaged_trace_fails_alone)
{
    const char *in = gt_tmpfile("damaged-in.db");
    make_store(in, 3, 3000);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(in, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db,
                              "UPDATE chunks SET data = x'0badf00d' WHERE trace_id = "
                              "(SELECT id FROM traces WHERE name = 't1')",
                              NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(db);
    grid_t g = make_grid();
    const char *inputs[] = {in};
    char out[512];
    snprintf(out, sizeof out, "%s", gt_tmpfile("damaged-out.db"));
    gm_sweep_config_t cfg = sweep_cfg(inputs, 1, &g, out, 2);
    gm_sweep_summary_t sum;
    gm_error_t err = {0};
    cr_expect_eq(gm_sweep_run(&cfg, &sum, &err), GM_ECORRUPT, "%s", err.msg);
    cr_expect(strstr(err.msg, "t1") != NULL, "%s", err.msg);
    cr_expect_eq(sum.failed, 3);
    cr_expect_eq(sum.ran, 6);
    size_t n;
    char **keys = sorted_keys(out, &n);
    cr_expect_eq(n, 6);
    free_keys(keys, n);
    gm_configs_free(g.sets, g.nsets);
}
