/*
 * tests/bench/bench_import.c — section `import`: gmsim's whole import of
 * the largest PyTorch snapshot in ../shared/data/snapshots (read, decode,
 * validate, reconstruct, write and commit a fresh store) against Python's
 * C unpickler loading the same file with a safe Unpickler (find_class
 * refuses), timed inside python3 (its own decode time, from memory, no
 * process start).  Best of BENCH_IMPORT_RUNS each.
 *
 * Both sides are timed in CPU time of their process (gmsim:
 * CLOCK_PROCESS_CPUTIME_ID around the import; Python: time.process_time()
 * around the load) and in wall time.  The ratio is taken on CPU time: on a
 * shared machine wall time mostly measures the neighbours, and the store's
 * wait for the disk to sync is not work gmsim does; the wall-time figures
 * and their ratio are reported beside it.
 *
 * JSON: "import": {"torch_mb_per_s" (file MB per CPU second),
 * "ratio_vs_python_pickle" (gmsim's CPU time ÷ Python's; the target is
 * ≤ 0.5), "ratio_wall", "file", "bytes", "gmsim_s", "python_s" (CPU),
 * "gmsim_wall_s", "python_wall_s"}; "skipped" when the data or python3 is
 * absent.
 *
 * Section `nsys` (here too): an Nsight Systems export of N one-event
 * processes (N = 10,000 and 100,000, built with SQLite in the scratch
 * folder, one device allocation per process as in the 12,000-
 * process case) imported into a fresh store file, one trace per process.
 * The import must be linear in processes: "linearity" is the CPU time per
 * process at 100,000 over that at 10,000 (1 is linear; the old import, one
 * table scan per process, was quadratic: about 10), and the target is 100,000
 * processes in under 2 s.  JSON: "nsys": {"processes", "cpu_s" and
 * "wall_s" (at 100,000), "us_per_process", "cpu_s_10k", "linearity"}.
 */
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"

#define BENCH_IMPORT_RUNS 7

static const char bench_import_py[] =
    "import io, pickle, sys, time\n"
    "class U(pickle.Unpickler):\n"
    "    def find_class(self, m, n):\n"
    "        raise pickle.UnpicklingError('refused')\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "best = wall = 1e9\n"
    "for _ in range(int(sys.argv[2])):\n"
    "    t, c = time.perf_counter(), time.process_time()\n"
    "    U(io.BytesIO(data)).load()\n"
    "    best = min(best, time.process_time() - c)\n"
    "    wall = min(wall, time.perf_counter() - t)\n"
    "print('%.9f %.9f' % (best, wall))\n";

static void bench_import_skip(gm_json_t *j, const char *why)
{
    fprintf(stderr, "gmsim-bench: import: skipped: %s\n", why);
    gm_json_key(j, "import");
    gm_json_begin_object(j);
    gm_json_key(j, "skipped");
    gm_json_str(j, why);
    gm_json_end_object(j);
}

/* The largest *.pickle in dir (malloc'd path) and its size. */
static char *bench_import_largest(const char *dir, off_t *size)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return NULL;
    char *best = NULL;
    *size = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 8 || strcmp(e->d_name + n - 7, ".pickle") != 0)
            continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > *size) {
            free(best);
            best = strdup(path);
            *size = st.st_size;
        }
    }
    closedir(d);
    return best;
}

static double bench_import_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One whole import into a fresh store; CPU seconds (wall into *wall). */
static double bench_import_once(const char *path, const char *db, double *wall)
{
    unlink(db);
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", db);
    unlink(wal);
    gm_error_t err = {0};
    double t0 = bench_now(), c0 = bench_import_cpu();
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        fprintf(stderr, "gmsim-bench: import: cannot open '%s'\n", path);
        exit(1);
    }
    gm_store_t *s;
    gm_import_target_t *t;
    if (gm_store_open(db, GM_STORE_WRITE, &s, &err) ||
        gm_import_target_create(s, "bench", 0, &t, &err))
        bench_die("import", &err);
    if (gm_torch_import(in, path, t, &err)) {
        gm_import_abort(t);
        bench_die("import", &err);
    }
    if (gm_import_commit(t, &err))
        bench_die("import", &err);
    gm_store_close(s);
    fclose(in);
    *wall = bench_now() - t0;
    return bench_import_cpu() - c0;
}

void bench_import(const bench_env_t *env, gm_json_t *j)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/snapshots", env->data_dir ? env->data_dir : "");
    off_t size;
    char *path = bench_import_largest(dir, &size);
    if (path == NULL) {
        bench_import_skip(j, "no snapshots in the data folder");
        return;
    }
    char db[4096];
    snprintf(db, sizeof db, "%s/bench-import.db", env->dir);
    double best = 1e9, best_wall = 1e9;
    for (int i = 0; i < BENCH_IMPORT_RUNS; i++) {
        double w, s = bench_import_once(path, db, &w);
        if (s < best)
            best = s;
        if (w < best_wall)
            best_wall = w;
    }
    unlink(db);

    /* Python's decode of the same file. */
    char script[4096], cmd[8192];
    snprintf(script, sizeof script, "%s/bench-import.py", env->dir);
    FILE *f = fopen(script, "w");
    if (f == NULL || fputs(bench_import_py, f) == EOF || fclose(f) != 0) {
        free(path);
        bench_import_skip(j, "cannot write the python script");
        return;
    }
    snprintf(cmd, sizeof cmd, "python3 '%s' '%s' %d 2>/dev/null", script, path,
             BENCH_IMPORT_RUNS);
    FILE *p = popen(cmd, "r");
    double py = 0, py_wall = 0;
    int ok = p != NULL && fscanf(p, "%lf %lf", &py, &py_wall) == 2 && py > 0 && py_wall > 0;
    if (p != NULL && pclose(p) != 0)
        ok = 0;
    unlink(script);
    if (!ok) {
        free(path);
        bench_import_skip(j, "python3 is not available");
        return;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    fprintf(stderr,
            "gmsim-bench: import: %s: gmsim %.2f ms CPU (%.2f wall), python pickle %.2f ms CPU "
            "(%.2f wall)\n",
            base, best * 1e3, best_wall * 1e3, py * 1e3, py_wall * 1e3);
    gm_json_key(j, "import");
    gm_json_begin_object(j);
    gm_json_key(j, "torch_mb_per_s");
    gm_json_double(j, (double)size / 1e6 / best);
    gm_json_key(j, "ratio_vs_python_pickle");
    gm_json_double(j, best / py);
    gm_json_key(j, "ratio_wall");
    gm_json_double(j, best_wall / py_wall);
    gm_json_key(j, "file");
    gm_json_str(j, base);
    gm_json_key(j, "bytes");
    gm_json_u64(j, (uint64_t)size);
    gm_json_key(j, "gmsim_s");
    gm_json_double(j, best);
    gm_json_key(j, "python_s");
    gm_json_double(j, py);
    gm_json_key(j, "gmsim_wall_s");
    gm_json_double(j, best_wall);
    gm_json_key(j, "python_wall_s");
    gm_json_double(j, py_wall);
    gm_json_end_object(j);
    free(path);
}

/* ---- section nsys --------------------------------------------------------- */

/* An export at path with n processes of one device allocation each. */
static void bench_nsys_build(const char *path, int n)
{
    unlink(path);
    sqlite3 *db;
    sqlite3_stmt *st;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "PRAGMA journal_mode = OFF; BEGIN; CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS "
                     "(start INTEGER NOT NULL, globalPid INTEGER, deviceId INTEGER, contextId "
                     "INTEGER, address INTEGER, pc INTEGER, bytes INTEGER, memKind INTEGER, "
                     "memoryOperationType INTEGER, name TEXT, correlationId INTEGER, streamId "
                     "INTEGER)",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES "
                           "(?1, ?2, 0, 1, 4096, 0, 512, 2, 0, NULL, 0, 7)",
                           -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "gmsim-bench: nsys: cannot build '%s': %s\n", path, sqlite3_errmsg(db));
        exit(1);
    }
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, 1000 + i);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)(i + 1) << 24);
        if (sqlite3_step(st) != SQLITE_DONE) {
            fprintf(stderr, "gmsim-bench: nsys: cannot build '%s'\n", path);
            exit(1);
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
}

/* Import path into a fresh store db; CPU seconds (wall into *wall). */
static double bench_nsys_once(const char *path, const char *db, size_t expect, double *wall)
{
    char side[4200];
    unlink(db);
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    gm_error_t err = {0};
    double t0 = bench_now(), c0 = bench_import_cpu();
    FILE *in = fopen(path, "rb");
    gm_store_t *s;
    gm_import_target_t *t;
    if (in == NULL) {
        fprintf(stderr, "gmsim-bench: nsys: cannot open '%s'\n", path);
        exit(1);
    }
    if (gm_store_open(db, GM_STORE_WRITE, &s, &err) ||
        gm_import_target_create(s, "bench", 0, &t, &err))
        bench_die("nsys", &err);
    if (gm_nsys_import(in, path, t, &err)) {
        gm_import_abort(t);
        bench_die("nsys", &err);
    }
    if (gm_import_count(t) != expect) {
        fprintf(stderr, "gmsim-bench: nsys: %zu traces, %zu expected\n", gm_import_count(t),
                expect);
        exit(1);
    }
    if (gm_import_commit(t, &err))
        bench_die("nsys", &err);
    gm_store_close(s);
    fclose(in);
    *wall = bench_now() - t0;
    return bench_import_cpu() - c0;
}

void bench_nsys(const bench_env_t *env, gm_json_t *j)
{
    static const int sizes[2] = {10000, 100000};
    double cpu[2], wall[2];
    char path[4096], db[4096];
    snprintf(db, sizeof db, "%s/bench-nsys.db", env->dir);
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/bench-nsys-%d.sqlite", env->dir, sizes[k]);
        bench_nsys_build(path, sizes[k]);
        cpu[k] = wall[k] = 1e9;
        for (int r = 0; r < 3; r++) {
            double w, c = bench_nsys_once(path, db, (size_t)sizes[k], &w);
            cpu[k] = c < cpu[k] ? c : cpu[k];
            wall[k] = w < wall[k] ? w : wall[k];
        }
        unlink(path);
        unlink(db);
    }
    char side[4200];
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    double linearity = (cpu[1] / sizes[1]) / (cpu[0] / sizes[0]);
    fprintf(stderr,
            "gmsim-bench: nsys: %d processes in %.2f s CPU (%.2f wall), %.1f us each; "
            "%d in %.3f s; linearity %.2f\n",
            sizes[1], cpu[1], wall[1], cpu[1] / sizes[1] * 1e6, sizes[0], cpu[0], linearity);
    gm_json_key(j, "nsys");
    gm_json_begin_object(j);
    gm_json_key(j, "processes");
    gm_json_u64(j, (uint64_t)sizes[1]);
    gm_json_key(j, "cpu_s");
    gm_json_double(j, cpu[1]);
    gm_json_key(j, "wall_s");
    gm_json_double(j, wall[1]);
    gm_json_key(j, "us_per_process");
    gm_json_double(j, cpu[1] / sizes[1] * 1e6);
    gm_json_key(j, "cpu_s_10k");
    gm_json_double(j, cpu[0]);
    gm_json_key(j, "linearity");
    gm_json_double(j, linearity);
    gm_json_end_object(j);
}
