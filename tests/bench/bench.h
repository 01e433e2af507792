/*
 * tests/bench/bench.h — sections of gmsim-bench.
 *
 * The core section (store, replay, malloc reference, long replay) lives in
 * bench.c.  Every other area adds a file tests/bench/bench_<name>.c that
 * defines `void bench_<name>(const bench_env_t *env, gm_json_t *j)` and one
 * X line below.  A section measures what its issue asks, each figure as a
 * rate or as a ratio against a reference run in the same process, and
 * writes exactly one JSON member — the key "<name>" and an object — into j.
 * It prints progress or notes to stderr only.  A section whose input is
 * missing (no ../shared/data) writes {"skipped": "why"}.
 */
#ifndef GMSIM_BENCH_H
#define GMSIM_BENCH_H

#include <stdint.h>

#include "gmsim/gmsim.h"

typedef struct bench_env {
    const char *gmsim;    /* the gmsim binary (may be NULL) */
    const char *dir;      /* a scratch folder for temporary files */
    const char *data_dir; /* the real data (GM_DATA_DIR); may not exist */
    uint64_t events;      /* size of the random workload (--events) */
    uint64_t seed;
} bench_env_t;

/* X(name): bench_<name>() in tests/bench/bench_<name>.c. */
#define BENCH_SECTIONS(X) \
    X(capture)            \
    X(import)             \
    X(nsys)               \
    X(placement)          \
    X(policies)           \
    X(report)             \
    X(scale)              \
    X(sweep)              \
    X(synth)

#define BENCH__DECLARE(name) void bench_##name(const bench_env_t *env, gm_json_t *j);
BENCH_SECTIONS(BENCH__DECLARE)
#undef BENCH__DECLARE

/* Wall-clock seconds (monotonic). */
double bench_now(void);

/* Print "gmsim-bench: what: message" and exit 1. */
_Noreturn void bench_die(const char *what, const gm_error_t *err);

#endif
