/*
 * tests/bench/bench_report.c — section `report`: the HTML report of one
 * 1M-event synthesized trace (the workload generator, as `gmsim synth
 * --events 1000000` writes it) replayed by caching, bfc, native and pool
 * (whose free blocks side by side, 122,242 cuts, the page carries): the
 * time to write it (wall and this process's CPU), its size, and the time
 * headless Chromium takes to open it (navigation to the load event, the
 * page's script run; tests/report/browser.py --open, skipped without
 * chromium or python3) with its main thread's CPU seconds (what a loaded
 * machine does not inflate).  The targets (issue 29): under 10 MiB, open in
 * under 3 s.
 *
 * JSON: "report": {"events", "allocs", "report_s", "report_cpu_s",
 * "report_bytes", "open_s" and "open_cpu_s" (absent when skipped, with
 * "open_note" saying why)}.
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

#define BENCH_REPORT_EVENTS 1000000

static void bench_report_remove(const char *db)
{
    static const char *const sfx[] = {"", "-wal", "-shm"};
    char path[1024];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s%s", db, sfx[i]);
        unlink(path);
    }
}

static double bench_report_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

void bench_report(const bench_env_t *env, gm_json_t *j)
{
    char in[1024], out[1024], html[1024];
    snprintf(in, sizeof in, "%s/bench-report-in.db", env->dir);
    snprintf(out, sizeof out, "%s/bench-report-runs.db", env->dir);
    snprintf(html, sizeof html, "%s/bench-report.html", env->dir);
    bench_report_remove(in);
    bench_report_remove(out);
    gm_error_t err = {0};
    gm_store_t *s;
    gm_writer_t *w;
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = BENCH_REPORT_EVENTS;
    wc.seed = env->seed;
    if (gm_store_open(in, GM_STORE_WRITE, &s, &err) != 0 ||
        gm_writer_begin(s, "synth1m", 0, &w, &err) != 0 || gm_workload_write(&wc, w, &err) != 0 ||
        gm_writer_finish(w, &err) != 0)
        bench_die("report", &err);
    gm_trace_info_t info;
    if (gm_store_find(s, "synth1m", &info, &err) != 0)
        bench_die("report", &err);
    uint64_t allocs = info.allocs, events = info.events;
    gm_trace_info_release(&info);
    gm_store_close(s);

    const gm_policy_ops_t *pol[] = {gm_policy_find("caching"), gm_policy_find("bfc"),
                                    gm_policy_find("native"), gm_policy_find("pool")};
    gm_params_t *sets;
    size_t n;
    if (gm_configs_expand(pol, 4, NULL, 0, &sets, &n, &err) != 0)
        bench_die("report", &err);
    gm_sweep_summary_t sum;
    if (gt_sweep_one(in, sets, n, out, 2, &sum, &err) != 0)
        bench_die("report", &err);
    for (size_t i = 0; i < n; i++)
        gm_params_release(&sets[i]);
    free(sets);

    const char *stores[] = {out, in};
    gm_report_config_t rc = {.stores = stores, .nstores = 2, .format = GM_REPORT_HTML};
    FILE *f = fopen(html, "w");
    if (f == NULL) {
        gm_error_set(&err, GM_EIO, "cannot write '%s'", html);
        bench_die("report", &err);
    }
    double c0 = bench_report_cpu(), t0 = bench_now();
    if (gm_report_write(&rc, f, NULL, &err) != 0)
        bench_die("report", &err);
    fclose(f);
    double t = bench_now() - t0, cpu = bench_report_cpu() - c0;
    struct stat st;
    uint64_t bytes = stat(html, &st) == 0 ? (uint64_t)st.st_size : 0;

    /* Chromium's open time: the browser test's driver in its --open mode
     * prints the seconds to the load event (its second load: the first
     * starts the browser's caches). */
    double open_s = -1, open_cpu = -1;
    char cmd[2300], note[320] = "";
    snprintf(cmd, sizeof cmd, "python3 tests/report/browser.py --open '%s' 2>/dev/null", html);
    FILE *p = access("tests/report/browser.py", R_OK) == 0 ? popen(cmd, "r") : NULL;
    if (p != NULL) {
        char line[256] = "";
        if (fgets(line, sizeof line, p) == NULL ||
            sscanf(line, "open_s %lf cpu_s %lf", &open_s, &open_cpu) != 2) {
            open_s = -1;
            snprintf(note, sizeof note, "skipped: %s", line[0] ? line : "no answer");
            note[strcspn(note, "\n")] = '\0';
        }
        pclose(p);
    } else {
        snprintf(note, sizeof note, "skipped: run from the source tree (tests/report/browser.py)");
    }
    fprintf(stderr, "report: 1M events (%llu allocations): %.2f s (%.2f CPU-s), %.2f MiB; "
                    "open in Chromium %s%.2f s (%.2f s of its main thread's CPU)\n",
            (unsigned long long)allocs, t, cpu, (double)bytes / (1 << 20), open_s < 0 ? "n/a " : "",
            open_s < 0 ? 0.0 : open_s, open_cpu < 0 ? 0.0 : open_cpu);
    gm_json_key(j, "report");
    gm_json_begin_object(j);
    gm_json_key(j, "events");
    gm_json_u64(j, events);
    gm_json_key(j, "allocs");
    gm_json_u64(j, allocs);
    gm_json_key(j, "report_s");
    gm_json_double(j, t);
    gm_json_key(j, "report_cpu_s");
    gm_json_double(j, cpu);
    gm_json_key(j, "report_bytes");
    gm_json_u64(j, bytes);
    if (open_s >= 0) {
        gm_json_key(j, "open_s");
        gm_json_double(j, open_s);
        gm_json_key(j, "open_cpu_s");
        gm_json_double(j, open_cpu);
    } else {
        gm_json_key(j, "open_note");
        gm_json_str(j, note);
    }
    gm_json_end_object(j);
    bench_report_remove(in);
    bench_report_remove(out);
}
