/*
 * tests/test_workload.c — the seeded random workload: config checks,
 * determinism, exact event counts, the live bound, everything freed, valid
 * events (ordinals, streams, time, marks), a plausible mix, and that
 * gm_workload_write stores exactly what gm_workload_next produces.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

/* All events of a workload in one malloc'd array (chunk: events per call). */
static gm_event_t *generate(const gm_workload_config_t *cfg, size_t chunk)
{
    gm_workload_t *wl;
    gm_error_t err;
    cr_assert_eq(gm_workload_create(cfg, &wl, &err), 0, "%s", err.msg);
    gm_event_t *ev = malloc((size_t)(cfg->events + 1) * sizeof *ev);
    cr_assert(ev != NULL);
    size_t total = 0, n;
    while ((n = gm_workload_next(wl, ev + total, chunk)) > 0) {
        cr_assert_leq(n, chunk);
        total += n;
        cr_assert_leq(total, cfg->events);
    }
    cr_assert_eq(gm_workload_next(wl, ev, chunk), 0, "more events after the end");
    gm_workload_destroy(wl);
    cr_assert_eq(total, cfg->events, "%zu events for a config of %llu", total,
                 (unsigned long long)cfg->events);
    return ev;
}

static int same_event(const gm_event_t *a, const gm_event_t *b)
{
    return a->ts_ns == b->ts_ns && a->id == b->id && a->size == b->size &&
           a->addr == b->addr && a->stream == b->stream && a->tag == b->tag &&
           a->frames == b->frames && a->device == b->device && a->op == b->op &&
           a->flags == b->flags;
}

typedef struct stats {
    uint64_t allocs, frees, marks, stream1, peak_live;
    uint64_t small, medium, large; /* ≤ 1 MiB, ≤ 64 MiB, more */
    uint64_t medium_life;          /* summed lifetimes (events) of medium ones */
    uint64_t distinct_sizes;
} stats_t;

/* Check every invariant of the event list; return its statistics. */
static stats_t validate(const gm_workload_config_t *cfg, const gm_event_t *ev)
{
    stats_t st = {0};
    uint64_t n = cfg->events;
    uint64_t *size = calloc(n, sizeof *size), *born = calloc(n, sizeof *born);
    uint32_t *stream = calloc(n, sizeof *stream);
    uint8_t *live = calloc(n, 1);
    uint64_t live_bytes = 0, live_count = 0, prev_ts = 0, last_mark = 0;
    uint64_t seen[256];
    cr_assert(size && born && stream && live);
    for (uint64_t i = 0; i < n; i++) {
        const gm_event_t *e = &ev[i];
        cr_assert_eq(e->device, 0);
        cr_assert_eq(e->flags, 0);
        cr_assert_eq(e->frames, 0);
        cr_assert_gt(e->ts_ns, prev_ts, "time goes back at event %llu", (unsigned long long)i);
        cr_assert_geq(e->ts_ns - prev_ts, 500);
        cr_assert_leq(e->ts_ns - prev_ts, 20000);
        prev_ts = e->ts_ns;
        switch (e->op) {
        case GM_OP_ALLOC:
            cr_assert_eq(e->id, st.allocs, "ids are ordinals");
            cr_assert_geq(e->size, 1);
            cr_assert_leq(e->size, GM_SIZE_LIMIT);
            cr_assert_leq(e->stream, 1);
            size[e->id] = e->size;
            born[e->id] = i;
            stream[e->id] = e->stream;
            live[e->id] = 1;
            live_bytes += e->size;
            live_count++;
            cr_assert_leq(live_bytes, cfg->live_max, "live bound broken at event %llu",
                          (unsigned long long)i);
            if (live_bytes > st.peak_live)
                st.peak_live = live_bytes;
            st.allocs++;
            st.stream1 += e->stream;
            if (e->size <= MIB)
                st.small++;
            else if (e->size <= 64 * MIB)
                st.medium++;
            else
                st.large++;
            {
                uint64_t k = 0;
                while (k < st.distinct_sizes && k < 256 && seen[k] != e->size)
                    k++;
                if (k == st.distinct_sizes && k < 256)
                    seen[st.distinct_sizes++] = e->size;
            }
            break;
        case GM_OP_FREE:
            cr_assert_lt(e->id, st.allocs, "free of an id never allocated");
            cr_assert(live[e->id], "double free of %llu", (unsigned long long)e->id);
            cr_assert_eq(e->stream, stream[e->id], "free on another stream");
            live[e->id] = 0;
            live_bytes -= size[e->id];
            live_count--;
            if (size[e->id] > MIB && size[e->id] <= 64 * MIB)
                st.medium_life += i - born[e->id];
            st.frees++;
            break;
        case GM_OP_MARK:
            cr_assert_eq(e->tag, 0);
            /* A step is 4096 events; only the last event may be a mark out
             * of turn (when nothing is live and one event is left). */
            if (st.marks && i + 1 < n)
                cr_assert_geq(i - last_mark, 4096, "marks too close");
            last_mark = i;
            st.marks++;
            break;
        default:
            cr_assert_fail("unexpected op %u", e->op);
        }
    }
    cr_assert_eq(live_count, 0, "%llu allocations left live", (unsigned long long)live_count);
    cr_assert_eq(live_bytes, 0);
    cr_assert_eq(st.allocs, st.frees);
    free(size);
    free(born);
    free(stream);
    free(live);
    return st;
}

Test(workload, defaults)
{
    gm_workload_config_t cfg;
    gm_workload_config_default(&cfg);
    cr_expect_eq(cfg.events, 100000);
    cr_expect_eq(cfg.seed, 1);
    cr_expect_eq(cfg.live_max, 8 * GIB);
}

Test(workload, rejects_unusable_configs)
{
    gm_workload_config_t cfg;
    gm_workload_t *wl = (gm_workload_t *)1;
    gm_error_t err = {0};
    gm_workload_config_default(&cfg);
    cfg.events = 1;
    cr_expect_eq(gm_workload_create(&cfg, &wl, &err), GM_EINVAL);
    cr_expect_null(wl);
    cr_expect(strstr(err.msg, "events") != NULL, "%s", err.msg);
    gm_workload_config_default(&cfg);
    cfg.live_max = 4095;
    cr_expect_eq(gm_workload_create(&cfg, &wl, &err), GM_EINVAL);
    cr_expect(strstr(err.msg, "4 KiB") != NULL, "%s", err.msg);
    cfg.live_max = 4096;
    cr_expect_eq(gm_workload_create(&cfg, &wl, &err), 0);
    gm_workload_destroy(wl);
}

Test(workload, deterministic_for_a_seed)
{
    gm_workload_config_t cfg;
    gm_workload_config_default(&cfg);
    cfg.events = 50000;
    cfg.seed = 7;
    gm_event_t *a = generate(&cfg, 4096);
    gm_event_t *b = generate(&cfg, 333); /* chunking does not matter */
    for (uint64_t i = 0; i < cfg.events; i++)
        cr_assert(same_event(&a[i], &b[i]), "event %llu differs", (unsigned long long)i);
    cfg.seed = 8;
    gm_event_t *c = generate(&cfg, 4096);
    uint64_t differ = 0;
    for (uint64_t i = 0; i < cfg.events; i++)
        differ += !same_event(&a[i], &c[i]);
    cr_expect_gt(differ, cfg.events / 2, "seeds 7 and 8 give nearly the same trace");
    free(a);
    free(b);
    free(c);
}

Test(workload, exact_count_and_everything_freed)
{
    static const uint64_t counts[] = {2, 3, 4, 5, 6, 7, 10, 33, 100, 4095, 4096, 4097, 12345};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        for (uint64_t seed = 1; seed <= 5; seed++) {
            gm_workload_config_t cfg;
            gm_workload_config_default(&cfg);
            cfg.events = counts[i];
            cfg.seed = seed;
            gm_event_t *ev = generate(&cfg, 64);
            stats_t st = validate(&cfg, ev);
            cr_expect_eq(ev[0].op, GM_OP_MARK, "the first event opens step 0");
            (void)st;
            free(ev);
        }
    }
}

Test(workload, live_bound_respected)
{
    static const uint64_t bounds[] = {4096, 5000, 65536, MIB, 100 * MIB, GIB, 64 * GIB};
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        gm_workload_config_t cfg;
        gm_workload_config_default(&cfg);
        cfg.events = 200000;
        cfg.seed = 11 + i;
        cfg.live_max = bounds[i];
        gm_event_t *ev = generate(&cfg, 4096);
        stats_t st = validate(&cfg, ev);
        cr_expect_leq(st.peak_live, bounds[i]);
        /* A tight bound is used, not just respected (a loose one is not
         * reached: the mix has its own scale). */
        if (bounds[i] <= GIB)
            cr_expect_gt(st.peak_live, bounds[i] / 4, "peak %llu for a bound of %llu",
                         (unsigned long long)st.peak_live, (unsigned long long)bounds[i]);
        free(ev);
    }
}

Test(workload, plausible_mix)
{
    gm_workload_config_t cfg;
    gm_workload_config_default(&cfg);
    cfg.events = 1000000;
    gm_event_t *ev = generate(&cfg, 4096);
    stats_t st = validate(&cfg, ev);
    double allocs = (double)st.allocs;
    cr_expect_gt(allocs, 0.45 * (double)cfg.events, "mostly allocs and frees");
    cr_expect_gt(st.small / allocs, 0.75, "small requests dominate");
    cr_expect(st.medium / allocs > 0.03 && st.medium / allocs < 0.25, "medium share %.3f",
              st.medium / allocs);
    cr_expect_geq(st.large, 1, "a few large long-lived ones");
    cr_expect_leq(st.large, 12);
    double s1 = st.stream1 / allocs;
    cr_expect(s1 > 0.07 && s1 < 0.13, "stream 1 share %.3f", s1);
    /* One per step, plus possibly one at the very end (the parity of the
     * event count can leave one event that only a mark fits). */
    cr_expect(st.marks >= cfg.events / 4096 && st.marks <= cfg.events / 4096 + 2,
              "%llu marks", (unsigned long long)st.marks);
    cr_expect_leq(st.distinct_sizes, 100, "sizes come from a small pool of shapes");
    double life = (double)st.medium_life / (double)st.medium;
    cr_expect(life > 100 && life < 2000, "medium allocations live %.0f events on average",
              life);
    cr_expect_gt(st.peak_live, GIB, "peak live %llu", (unsigned long long)st.peak_live);
    free(ev);
}

Test(workload, write_stores_the_generated_events)
{
    gm_store_t *s;
    gm_writer_t *w;
    gm_reader_t *r;
    gm_error_t err;
    gm_workload_config_t cfg;
    gm_workload_config_default(&cfg);
    cfg.events = 30000;
    cfg.seed = 3;
    cfg.live_max = 2 * GIB;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_begin(s, "random", 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_workload_write(&cfg, w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);

    gm_event_t *want = generate(&cfg, 4096);
    cr_assert_eq(gm_reader_open(s, "random", &r, &err), 0, "%s", err.msg);
    const gm_trace_info_t *info = gm_reader_info(r);
    cr_expect_eq(info->events, cfg.events);
    cr_expect_eq(info->live_at_end, 0);
    cr_expect(strstr(info->attrs, "\"random\"") != NULL, "%s", info->attrs);
    cr_expect(strstr(info->attrs, "live_max") != NULL, "%s", info->attrs);
    cr_expect_str_eq(gm_reader_tag(r, 0), "step");
    cr_expect_eq(gm_reader_stream(r, 0), 0x0);
    cr_expect_eq(gm_reader_stream(r, 1), 0x1);
    const gm_event_t *ev;
    size_t n, at = 0;
    while (gm_reader_next(r, &ev, &n, &err) == 0 && n > 0) {
        for (size_t i = 0; i < n; i++, at++) {
            cr_assert_lt(at, cfg.events);
            cr_assert_eq(ev[i].op, want[at].op, "op of event %zu", at);
            cr_assert_eq(ev[i].ts_ns, want[at].ts_ns, "ts of event %zu", at);
            if (ev[i].op != GM_OP_MARK) {
                cr_assert_eq(ev[i].id, want[at].id, "id of event %zu", at);
                cr_assert_eq(gm_reader_stream(r, ev[i].stream), want[at].stream);
            }
            if (ev[i].op == GM_OP_ALLOC)
                cr_assert_eq(ev[i].size, want[at].size);
        }
    }
    cr_expect_eq(at, cfg.events);
    gm_reader_close(r);
    gm_store_close(s);
    free(want);
}
