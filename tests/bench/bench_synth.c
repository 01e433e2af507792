/*
 * tests/bench/bench_synth.c — section `synth`: model-config synthesis
 * speed and `gmsim fit` time.
 *
 *   - gpt2-medium training steps (batch 8, seq 1024) until about
 *     min(--events, 4M) events: generation alone, events counted and
 *     dropped (gen_events_per_s); generation written through gm_synth_write into a
 *     store (synth_events_per_s, the target is ≥ 10 M/s); the store's raw
 *     write of the same events from memory (raw_write_events_per_s); and
 *     ratio_vs_raw_write = synth ÷ raw (1.0 = synthesis costs nothing on
 *     top of storing);
 *   - `gmsim fit` for a 24-layer model (gpt2-medium, seq 1024, on an
 *     a100-80gb) over up to four registered policies, run as a child
 *     process: fit_seconds (the target is "seconds") and the same search
 *     for the no-overhead bound alone in process (fit_bound_seconds), as
 *     the reference.
 *
 * JSON: "synth": {events, gen_events_per_s, synth_events_per_s,
 * raw_write_events_per_s, ratio_vs_raw_write, fit_seconds, fit_policies}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "gmsim/synth.h"

typedef struct bench_synth_buf {
    gm_event_t *ev;
    size_t n, cap;
} bench_synth_buf_t;

static int bench_synth_sink(void *ctx, const gm_event_t *ev, size_t n, gm_error_t *err)
{
    bench_synth_buf_t *b = ctx;
    if (b->ev == NULL) { /* counting only */
        b->n += n;
        return 0;
    }
    if (b->n + n > b->cap)
        return gm_error_set(err, GM_ENOMEM, "buffer full");
    memcpy(b->ev + b->n, ev, n * sizeof *ev);
    b->n += n;
    return 0;
}

static gm_synth_config_t bench_synth_config(uint64_t steps)
{
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    gm_synth_apply_preset(&c, "gpt2-medium", NULL);
    c.batch = 8;
    c.seq = 1024;
    c.steps = steps;
    return c;
}

void bench_synth(const bench_env_t *env, gm_json_t *j)
{
    gm_error_t err = {0};
    uint64_t target = env->events < 4000000 ? env->events : 4000000;
    /* events per step, from one counted step */
    gm_synth_config_t c = bench_synth_config(2);
    gm_synth_stats_t st;
    if (gm_synth_run(&c, NULL, NULL, &st, &err))
        bench_die("synth", &err);
    uint64_t per_step = st.events / 2;
    c = bench_synth_config(target / per_step ? target / per_step : 1);

    /* 1. generation alone (events counted and dropped) */
    bench_synth_buf_t buf = {0};
    double t0 = bench_now();
    if (gm_synth_run(&c, bench_synth_sink, &buf, &st, &err))
        bench_die("synth", &err);
    double gen = bench_now() - t0;
    /* the same events in memory for the raw write (untimed) */
    buf.n = 0;
    buf.cap = st.events;
    buf.ev = malloc(buf.cap * sizeof *buf.ev);
    if (buf.ev == NULL) {
        err.code = GM_ENOMEM;
        snprintf(err.msg, sizeof err.msg, "out of memory");
        bench_die("synth", &err);
    }
    if (gm_synth_run(&c, bench_synth_sink, &buf, &st, &err))
        bench_die("synth", &err);

    /* 2. synthesis into the store, 3. the raw write of the same events */
    char path[4096];
    snprintf(path, sizeof path, "%s/bench-synth.db", env->dir);
    unlink(path);
    gm_store_t *s;
    if (gm_store_open(path, GM_STORE_WRITE, &s, &err))
        bench_die("synth store", &err);
    gm_writer_t *w;
    t0 = bench_now();
    if (gm_writer_begin(s, "synth", 0, &w, &err) || gm_synth_write(&c, w, NULL, &err) ||
        gm_writer_finish(w, &err))
        bench_die("synth write", &err);
    double synth = bench_now() - t0;
    t0 = bench_now();
    uint32_t stream, tags[GM_SYNTH_TAG_COUNT];
    if (gm_writer_begin(s, "raw", 0, &w, &err) || gm_writer_stream(w, 0, &stream, &err))
        bench_die("raw write", &err);
    for (unsigned t = 0; t < GM_SYNTH_TAG_COUNT; t++)
        if (gm_writer_tag(w, gm_synth_tag_name(t), &tags[t], &err))
            bench_die("raw write", &err);
    for (size_t i = 0; i < buf.n; i++) {
        gm_event_t e = buf.ev[i];
        if (e.op == GM_OP_MARK)
            e.tag = tags[e.tag];
        else
            e.stream = stream;
        if (gm_writer_add(w, &e, &err))
            bench_die("raw write", &err);
    }
    if (gm_writer_finish(w, &err))
        bench_die("raw write", &err);
    double raw = bench_now() - t0;
    gm_store_close(s);
    unlink(path);
    free(buf.ev);
    double n = (double)st.events;
    fprintf(stderr,
            "gmsim-bench: synth: %.0f events: generate %.1f M/s, synthesize into the store "
            "%.1f M/s, raw store write %.1f M/s\n",
            n, n / gen / 1e6, n / synth / 1e6, n / raw / 1e6);

    /* 4. fit over up to four policies, as a user runs it */
    static const char *const wanted[] = {"caching", "bfc", "pool", "buddy", "tlsf", "native"};
    char policies[256] = "";
    int np = 0;
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0] && np < 4; i++)
        if (gm_policy_find(wanted[i])) {
            snprintf(policies + strlen(policies), sizeof policies - strlen(policies), "%s%s",
                     np ? "," : "", wanted[i]);
            np++;
        }
    double fit = -1;
    if (env->gmsim && np > 0) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd,
                 "'%s' fit --model gpt2-medium --seq 1024 --device a100-80gb --policy %s "
                 "> /dev/null",
                 env->gmsim, policies);
        t0 = bench_now();
        if (system(cmd) == 0)
            fit = bench_now() - t0;
        fprintf(stderr, "gmsim-bench: synth: fit over %s: %.2f s\n", policies, fit);
    }
    gm_json_key(j, "synth");
    gm_json_begin_object(j);
    gm_json_key(j, "events");
    gm_json_u64(j, st.events);
    gm_json_key(j, "gen_events_per_s");
    gm_json_double(j, n / gen);
    gm_json_key(j, "synth_events_per_s");
    gm_json_double(j, n / synth);
    gm_json_key(j, "raw_write_events_per_s");
    gm_json_double(j, n / raw);
    gm_json_key(j, "ratio_vs_raw_write");
    gm_json_double(j, raw / synth);
    gm_json_key(j, "fit_seconds");
    if (fit >= 0)
        gm_json_double(j, fit);
    else
        gm_json_null(j);
    gm_json_key(j, "fit_policies");
    gm_json_str(j, policies);
    gm_json_end_object(j);
}
