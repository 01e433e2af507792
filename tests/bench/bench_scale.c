/*
 * tests/bench/bench_scale.c — section `scale`: `gmsim scale` on a pair of
 * 1M-event captures.
 *
 * The pair: gpt2-medium training (batch 8) synthesized at seq 512 and
 * 1024, steps enough for about a million events each; the 1024 capture
 * is cut as a ring buffer would cut it (its first 3% of events dropped,
 * the allocations alive at the cut materialized as pre-existing ones at
 * its start), so the alignment has windows to find, not identical
 * sequences.  Timed: the plan (both traces loaded, aligned, laws fitted:
 * plan_seconds) and writing the base scaled to seq 4096 through the store
 * writer (write_seconds); scale_seconds is their sum (the target is under
 * 2 s), scale_cpu_seconds the process's CPU time over both (the figure a
 * loaded machine does not stretch).  The reference, in the same process: copying the base trace
 * through the reader and the writer unchanged (copy_seconds, and its CPU
 * time copy_cpu_seconds); ratio_vs_copy = scale_seconds ÷ copy_seconds,
 * cpu_ratio_vs_copy the same in CPU time.
 *
 * JSON: "scale": {events, events_other, paired_share, plan_seconds,
 * write_seconds, scale_seconds, scale_cpu_seconds, copy_seconds, ratio_vs_copy,
 * copy_cpu_seconds, cpu_ratio_vs_copy}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "gmsim/scale.h"
#include "gmsim/synth.h"

typedef struct bench_scale_buf {
    gm_event_t *ev;
    size_t n, cap;
} bench_scale_buf_t;

static int bench_scale_sink(void *ctx, const gm_event_t *ev, size_t n, gm_error_t *err)
{
    bench_scale_buf_t *b = ctx;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1 << 20;
        while (cap < b->n + n)
            cap *= 2;
        gm_event_t *nv = realloc(b->ev, cap * sizeof *nv);
        if (nv == NULL)
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        b->ev = nv;
        b->cap = cap;
    }
    memcpy(b->ev + b->n, ev, n * sizeof *ev);
    b->n += n;
    return 0;
}

/* CPU seconds of this process (a loaded machine stretches wall time). */
static double bench_scale_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static gm_synth_config_t bench_scale_config(uint64_t seq, uint64_t steps)
{
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    gm_synth_apply_preset(&c, "gpt2-medium", NULL);
    c.batch = 8;
    c.seq = seq;
    c.steps = steps;
    return c;
}

/* Write cfg's events into trace `name`, the first `cut` events dropped as
 * a ring buffer drops them (live allocations become pre-existing). */
static void bench_scale_write(gm_store_t *s, const char *name, const gm_synth_config_t *cfg,
                              double cut_share)
{
    gm_error_t err = {0};
    bench_scale_buf_t b = {0};
    if (gm_synth_run(cfg, bench_scale_sink, &b, NULL, &err))
        bench_die("scale synth", &err);
    size_t cut = (size_t)((double)b.n * cut_share);
    uint64_t nids = 0;
    for (size_t i = 0; i < b.n; i++)
        if (b.ev[i].op == GM_OP_ALLOC && b.ev[i].id + 1 > nids)
            nids = b.ev[i].id + 1;
    uint64_t *size = calloc(nids + 1, sizeof *size), *map = malloc((nids + 1) * sizeof *map);
    unsigned char *live = calloc(nids + 1, 1);
    if (size == NULL || map == NULL || live == NULL) {
        err.code = GM_ENOMEM;
        snprintf(err.msg, sizeof err.msg, "out of memory");
        bench_die("scale", &err);
    }
    for (size_t i = 0; i < cut; i++) {
        const gm_event_t *e = &b.ev[i];
        if (e->op == GM_OP_ALLOC) {
            live[e->id] = 1;
            size[e->id] = e->size;
        } else if (e->op == GM_OP_FREE)
            live[e->id] = 0;
    }
    gm_writer_t *w;
    uint32_t stream, tags[GM_SYNTH_TAG_COUNT];
    if (gm_writer_begin(s, name, 0, &w, &err) || gm_writer_stream(w, 0, &stream, &err) ||
        gm_writer_attr_int(w, "seq_len", (int64_t)cfg->seq, &err) ||
        gm_writer_attr_int(w, "batch", (int64_t)cfg->batch, &err))
        bench_die("scale write", &err);
    for (unsigned t = 0; t < GM_SYNTH_TAG_COUNT; t++)
        if (gm_writer_tag(w, gm_synth_tag_name(t), &tags[t], &err))
            bench_die("scale write", &err);
    uint64_t next = 0;
    for (uint64_t id = 0; id < nids; id++) {
        map[id] = UINT64_MAX;
        if (!live[id])
            continue;
        gm_event_t e = {.op = GM_OP_ALLOC, .id = next, .size = size[id], .stream = stream,
                        .flags = GM_EVENT_PREEXISTING};
        map[id] = next++;
        if (gm_writer_add(w, &e, &err))
            bench_die("scale write", &err);
    }
    for (size_t i = cut; i < b.n; i++) {
        gm_event_t e = b.ev[i];
        if (e.op == GM_OP_MARK)
            e.tag = tags[e.tag];
        else
            e.stream = stream;
        if (e.op == GM_OP_ALLOC) {
            map[e.id] = next;
            e.id = next++;
        } else if (e.op == GM_OP_FREE) {
            if (map[e.id] == UINT64_MAX)
                continue; /* made and freed before the window */
            e.id = map[e.id];
        }
        if (gm_writer_add(w, &e, &err))
            bench_die("scale write", &err);
    }
    if (gm_writer_finish(w, &err))
        bench_die("scale write", &err);
    free(b.ev);
    free(size);
    free(map);
    free(live);
}

void bench_scale(const bench_env_t *env, gm_json_t *j)
{
    gm_error_t err = {0};
    const uint64_t target = 1000000;
    gm_synth_config_t c = bench_scale_config(512, 2);
    gm_synth_stats_t st;
    if (gm_synth_run(&c, NULL, NULL, &st, &err))
        bench_die("scale synth", &err);
    uint64_t steps = target / (st.events / 2);
    if (steps < 1)
        steps = 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/bench-scale.db", env->dir);
    unlink(path);
    gm_store_t *s;
    if (gm_store_open(path, GM_STORE_WRITE, &s, &err))
        bench_die("scale store", &err);
    c = bench_scale_config(512, steps);
    bench_scale_write(s, "s512", &c, 0.0);
    c = bench_scale_config(1024, steps);
    bench_scale_write(s, "s1024", &c, 0.03);

    gm_trace_info_t ia, ib;
    if (gm_store_find(s, "s512", &ia, &err) || gm_store_find(s, "s1024", &ib, &err))
        bench_die("scale", &err);

    /* the reference: the base copied through the reader and the writer */
    double cc0 = bench_scale_cpu();
    double t0 = bench_now();
    gm_reader_t *r;
    gm_writer_t *w;
    if (gm_reader_open(s, "s512", &r, &err) || gm_writer_begin(s, "copy", 0, &w, &err))
        bench_die("scale copy", &err);
    uint32_t stream, tags[GM_SYNTH_TAG_COUNT];
    if (gm_writer_stream(w, 0, &stream, &err))
        bench_die("scale copy", &err);
    for (unsigned t = 0; t < GM_SYNTH_TAG_COUNT && t < gm_reader_tag_count(r); t++)
        if (gm_writer_tag(w, gm_reader_tag(r, t), &tags[t], &err))
            bench_die("scale copy", &err);
    for (;;) {
        const gm_event_t *ev;
        size_t n;
        if (gm_reader_next(r, &ev, &n, &err))
            bench_die("scale copy", &err);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++)
            if (gm_writer_add(w, &ev[i], &err))
                bench_die("scale copy", &err);
    }
    gm_reader_close(r);
    if (gm_writer_finish(w, &err))
        bench_die("scale copy", &err);
    double copy = bench_now() - t0;
    double copy_cpu = bench_scale_cpu() - cc0;

    /* scale: plan (load, align, laws), then the base at seq 4096 */
    gm_scale_capture_t caps[] = {{s, "s512", NULL, 0, 0, NULL}, {s, "s1024", NULL, 0, 0, NULL}};
    gm_scale_options_t o = {.base = 0};
    gm_scale_plan_t *p;
    double c0 = bench_scale_cpu();
    t0 = bench_now();
    if (gm_scale_plan_create(caps, 2, &o, &p, &err))
        bench_die("scale plan", &err);
    double plan = bench_now() - t0;
    t0 = bench_now();
    if (gm_scale_write(p, 4096, 0, s, "s4096", 0, &err))
        bench_die("scale write", &err);
    double write = bench_now() - t0;
    double cpu = bench_scale_cpu() - c0;
    double share = gm_scale_plan_report(p)->pairing[1].share;
    gm_scale_plan_destroy(p);
    fprintf(stderr,
            "gmsim-bench: scale: %llu + %llu events: plan %.3f s, write %.3f s (cpu %.3f s), "
            "copy %.3f s (cpu %.3f s), paired %.1f%%\n",
            (unsigned long long)ia.events, (unsigned long long)ib.events, plan, write, cpu, copy,
            copy_cpu, 100.0 * share);
    gm_json_key(j, "scale");
    gm_json_begin_object(j);
    gm_json_key(j, "events");
    gm_json_u64(j, ia.events);
    gm_json_key(j, "events_other");
    gm_json_u64(j, ib.events);
    gm_json_key(j, "paired_share");
    gm_json_double(j, share);
    gm_json_key(j, "plan_seconds");
    gm_json_double(j, plan);
    gm_json_key(j, "write_seconds");
    gm_json_double(j, write);
    gm_json_key(j, "scale_seconds");
    gm_json_double(j, plan + write);
    gm_json_key(j, "scale_cpu_seconds");
    gm_json_double(j, cpu);
    gm_json_key(j, "copy_seconds");
    gm_json_double(j, copy);
    gm_json_key(j, "ratio_vs_copy");
    gm_json_double(j, (plan + write) / copy);
    gm_json_key(j, "copy_cpu_seconds");
    gm_json_double(j, copy_cpu);
    gm_json_key(j, "cpu_ratio_vs_copy");
    gm_json_double(j, cpu / copy_cpu);
    gm_json_end_object(j);
    gm_trace_info_release(&ia);
    gm_trace_info_release(&ib);
    gm_store_close(s);
    unlink(path);
}
