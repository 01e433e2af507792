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
 */
#include <dirent.h>
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
