/*
 * tests/test_sweep.c — sweeps: results keyed so that reruns and killed
 * sweeps resume without duplicates or losses, shards that partition the
 * grid by work, merges without duplicates, and the run queries of
 * store/runs.c.
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
    gt_sweep_config(&cfg, inputs, ninputs, g->sets, g->nsets, results, jobs);
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

/* The shard records of a results store. */
static gm_shard_record_t *shard_records(const char *path, size_t *n)
{
    gm_store_t *s;
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_shard_record_t *r;
    cr_assert_eq(gm_store_list_shards(s, &r, n, &err), 0, "%s", err.msg);
    gm_store_close(s);
    return r;
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
    size_t nrec;
    gm_shard_record_t *rec = shard_records(results, &nrec);
    cr_assert_eq(nrec, 1);
    cr_expect(rec[0].shard == 1 && rec[0].nshards == 1 && rec[0].runs == 18 &&
                  rec[0].done == saved,
              "killed sweep recorded %u/%u, %llu of %llu runs", rec[0].shard, rec[0].nshards,
              (unsigned long long)rec[0].done, (unsigned long long)rec[0].runs);
    free(rec);

    gm_sweep_config_t cfg = sweep_cfg(inputs, 1, &g, results, 2);
    gm_sweep_summary_t sum;
    gm_error_t err = {0};
    cr_assert_eq(gm_sweep_run(&cfg, &sum, &err), 0, "%s", err.msg);
    cr_expect_eq(sum.grid, 18);
    cr_expect_eq(sum.reused, saved);
    cr_expect_eq(sum.ran, 18 - saved);
    cr_expect_eq(sum.failed, 0);
    rec = shard_records(results, &nrec);
    cr_assert_eq(nrec, 1);
    cr_expect(rec[0].runs == 18 && rec[0].done == 18, "%llu of %llu runs after the resume",
              (unsigned long long)rec[0].done, (unsigned long long)rec[0].runs);
    free(rec);

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
    /* Each shard recorded itself; the merge holds all three records, of
     * the grid the whole sweep recorded as 1/1. */
    size_t nrec, nfull;
    gm_shard_record_t *whole = shard_records(full, &nfull);
    gm_shard_record_t *rec = shard_records(merged, &nrec);
    cr_assert_eq(nfull, 1);
    cr_assert_eq(nrec, 3);
    for (unsigned i = 0; i < 3; i++) {
        cr_expect_str_eq(rec[i].grid, whole[0].grid);
        cr_expect(rec[i].shard == i + 1 && rec[i].nshards == 3 && rec[i].done == rec[i].runs,
                  "record %u: %u/%u, %llu of %llu", i, rec[i].shard, rec[i].nshards,
                  (unsigned long long)rec[i].done, (unsigned long long)rec[i].runs);
    }
    cr_expect_eq(rec[0].runs + rec[1].runs + rec[2].runs, 15);
    free(rec);
    free(whole);

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
    enum { NT = 60, NS = 3, NSH = 7 };
    uint64_t ev[NT], rng = 42, load[NSH] = {0}, maxw = 0;
    unsigned out[NT * NS], again[NT * NS];
    for (size_t i = 0; i < NT; i++) {
        ev[i] = gt_rand(&rng) % 1000000;
        if (ev[i] + 1 > maxw)
            maxw = ev[i] + 1;
    }
    ev[7] = 40000000; /* one huge trace: its runs spread over several shards */
    maxw = ev[7] + 1;
    gm_error_t err = {0};
    cr_assert_eq(gm_sweep_plan(ev, NT, NS, NSH, out, &err), 0);
    cr_assert_eq(gm_sweep_plan(ev, NT, NS, NSH, again, &err), 0);
    cr_expect(memcmp(out, again, sizeof out) == 0, "shards are not deterministic");
    unsigned split = 0;
    for (size_t t = 0; t < NT; t++) {
        for (size_t k = 0; k < NS; k++) {
            unsigned sh = out[t * NS + k];
            cr_assert(sh < NSH);
            load[sh] += ev[t] + 1;
            /* grid order is shard order: each shard one stretch */
            if (t * NS + k > 0)
                cr_expect(sh >= out[t * NS + k - 1], "run %zu goes back to shard %u", t * NS + k, sh);
        }
        split += out[t * NS] != out[t * NS + NS - 1];
    }
    uint64_t total = 0;
    for (int s = 0; s < NSH; s++)
        total += load[s];
    for (int s = 0; s < NSH; s++) /* within a run's weight of the mean, or one huge run */
        cr_expect(load[s] + maxw >= total / NSH && load[s] <= total / NSH + maxw,
                  "shard %d: %llu against a mean of %llu", s, (unsigned long long)load[s],
                  (unsigned long long)(total / NSH));
    cr_expect(split <= NSH - 1, "%u traces split between shards", split);
    cr_expect(out[7 * NS] != out[7 * NS + NS - 1], "the huge trace stays in one shard");
    /* One shard: everything in it; more shards than runs: every run alone. */
    cr_assert_eq(gm_sweep_plan(ev, 2, 1, 1, out, &err), 0);
    cr_expect(out[0] == 0 && out[1] == 0);
    uint64_t same[3] = {10, 10, 10};
    cr_assert_eq(gm_sweep_plan(same, 3, 1, 3, out, &err), 0);
    cr_expect(out[0] == 0 && out[1] == 1 && out[2] == 2, "%u %u %u", out[0], out[1], out[2]);
    cr_expect_eq(gm_sweep_plan(ev, NT, NS, 0, out, &err), GM_EINVAL);
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

/* A results store from before the shards table: read as it is (no
 * records), upgraded when a sweep writes to it. */
Test(sweep, version2_results_store)
{
    const char *in = gt_tmpfile("v2-in.db"), *out = gt_tmpfile("v2-out.db");
    make_store(in, 2, 2000);
    grid_t g = make_grid();
    const char *inputs[] = {in};
    gm_sweep_config_t cfg = sweep_cfg(inputs, 1, &g, out, 1);
    gm_error_t err = {0};
    cr_assert_eq(gm_sweep_run(&cfg, NULL, &err), 0, "%s", err.msg);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(out, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "DROP TABLE shards; PRAGMA user_version = 2;", NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(db);
    size_t n;
    gm_shard_record_t *r = shard_records(out, &n);
    cr_expect_eq(n, 0);
    free(r);
    gm_sweep_summary_t sum;
    cr_assert_eq(gm_sweep_run(&cfg, &sum, &err), 0, "%s", err.msg);
    cr_expect_eq(sum.reused, 6);
    r = shard_records(out, &n);
    cr_assert_eq(n, 1);
    cr_expect(r[0].runs == 6 && r[0].done == 6);
    free(r);
    gm_configs_free(g.sets, g.nsets);
}

Test(sweep, shards_check_names_what_is_missing)
{
    gm_shard_record_t r[] = {
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, 4, 10, 10},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 3, 4, 10, 4},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 3, 4, 10, 7}, /* merged twice: the best counts */
        {"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 2, 2, 5, 5},
        {"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 1, 2, 5, 5},
        {"cccccccccccccccccccccccccccccccc", 1, 1, 3, 3},
    };
    gm_error_t err = {0};
    cr_expect_eq(gm_shards_check(r + 3, 3, &err), 0, "%s", err.msg);
    cr_expect_eq(gm_shards_check(r, 0, &err), 0);
    cr_assert_eq(gm_shards_check(r, 6, &err), GM_EINCOMPLETE);
    cr_expect_str_eq(err.msg, "sweep aaaaaaaa (4 shards): shard 2/4 missing, shard 3/4 has 7 of "
                              "10 runs, shard 4/4 missing");
    /* a shard recorded under two shard counts is two sweeps */
    gm_shard_record_t odd[] = {{"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 1, 2, 5, 5},
                               {"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 2, 3, 5, 5}};
    cr_assert_eq(gm_shards_check(odd, 2, &err), GM_EINCOMPLETE);
    cr_expect_str_eq(err.msg, "sweep bbbbbbbb (2 shards): shard 2/2 missing; sweep bbbbbbbb "
                              "(3 shards): shard 1/3 missing, shard 3/3 missing");
    /* many missing: the message stays short and counts the rest */
    gm_shard_record_t one = {"dddddddddddddddddddddddddddddddd", 1000, 1000, 1, 1};
    cr_assert_eq(gm_shards_check(&one, 1, &err), GM_EINCOMPLETE);
    cr_expect(strlen(err.msg) < 460 && strstr(err.msg, "more") != NULL, "%s", err.msg);
}

