/*
 * tests/bench/bench_capture.c — section `capture`: what the capture library
 * adds to one intercepted call.  tests/capture/gmcap-app times N
 * cudaMalloc/cudaFree pairs against the fake runtime (host malloc behind
 * it), once as is and once with libgmsim_capture.so preloaded and
 * recording into a spool under the scratch folder; best of
 * BENCH_CAPTURE_RUNS each, alternating, in this one run.
 *
 * JSON: "capture": {"ns_per_call" (captured − plain, ns per call; the
 * target is < 100), "ratio_vs_uninstrumented" (captured ÷ plain),
 * "plain_ns", "captured_ns", "calls"}; "skipped" when the program or the
 * library is not built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"

#define BENCH_CAPTURE_RUNS 5
#define BENCH_CAPTURE_PAIRS 1000000

#ifndef GM_BINARY_DIR
#define GM_BINARY_DIR "."
#endif

/* ns per call printed by one run of the program; < 0 on failure. */
static double bench_capture_run(const char *app, const char *lib, const char *dir)
{
    char cmd[16384]; /* three paths of up to 4 KiB each, quoted */
    int w;
    if (lib != NULL)
        w = snprintf(cmd, sizeof cmd, "GMSIM_CAPTURE_DIR='%s' LD_PRELOAD='%s' '%s' bench %d", dir,
                     lib, app, BENCH_CAPTURE_PAIRS);
    else
        w = snprintf(cmd, sizeof cmd, "env -u LD_PRELOAD '%s' bench %d", app, BENCH_CAPTURE_PAIRS);
    if (w < 0 || (size_t)w >= sizeof cmd)
        return -1;
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    double ns = -1;
    if (fscanf(p, "%lf", &ns) != 1)
        ns = -1;
    if (pclose(p) != 0)
        ns = -1;
    if (lib != NULL) {
        snprintf(cmd, sizeof cmd, "rm -f '%s'/*.spool", dir); /* shorter than the above */
        if (system(cmd) != 0)
            ns = -1;
    }
    return ns;
}

void bench_capture(const bench_env_t *env, gm_json_t *j)
{
    const char *app = GM_BINARY_DIR "/tests/capture/gmcap-app";
    const char *lib = GM_BINARY_DIR "/libgmsim_capture.so";
    gm_json_key(j, "capture");
    gm_json_begin_object(j);
    if (access(app, X_OK) != 0 || access(lib, R_OK) != 0) {
        fprintf(stderr, "gmsim-bench: capture: skipped: gmcap-app or the library not built\n");
        gm_json_key(j, "skipped");
        gm_json_str(j, "tests/capture/gmcap-app or libgmsim_capture.so not built");
        gm_json_end_object(j);
        return;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/gmsim-bench-capture.XXXXXX", env->dir ? env->dir : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "gmsim-bench: capture: cannot create '%s'\n", dir);
        exit(1);
    }
    double plain = 1e30, captured = 1e30;
    for (int r = 0; r < BENCH_CAPTURE_RUNS; r++) {
        double a = bench_capture_run(app, NULL, dir);
        double b = bench_capture_run(app, lib, dir);
        if (a < 0 || b < 0) {
            rmdir(dir);
            fprintf(stderr, "gmsim-bench: capture: gmcap-app failed\n");
            exit(1);
        }
        plain = a < plain ? a : plain;
        captured = b < captured ? b : captured;
    }
    rmdir(dir);
    fprintf(stderr, "gmsim-bench: capture: %.1f ns per call plain, %.1f captured\n", plain,
            captured);
    gm_json_key(j, "ns_per_call");
    gm_json_double(j, captured - plain);
    gm_json_key(j, "ratio_vs_uninstrumented");
    gm_json_double(j, captured / plain);
    gm_json_key(j, "plain_ns");
    gm_json_double(j, plain);
    gm_json_key(j, "captured_ns");
    gm_json_double(j, captured);
    gm_json_key(j, "calls");
    gm_json_u64(j, 2u * BENCH_CAPTURE_PAIRS);
    gm_json_end_object(j);
}
