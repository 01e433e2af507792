/*
 * tests/test_replay.c — the replay engine: exact metrics on hand-built
 * traces, OOM recording, bad events, one pass over many policies equal to
 * separate passes, the timeline, empty_cache marks, store-fed replay, and
 * policies on threads equal to one thread (figures, timelines, compactions
 * and errors) on every snapshot and a synthesized trace.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static gm_event_t ev_alloc(uint64_t id, uint64_t size)
{
    return (gm_event_t){.op = GM_OP_ALLOC, .id = id, .size = size};
}

static gm_event_t ev_free(uint64_t id) { return (gm_event_t){.op = GM_OP_FREE, .id = id}; }

/* Replay events through the named policies (with KEY=VALUE settings applied
 * to every policy that has the key); returns the engine, finished. */
static gm_replay_t *replay_events(const gm_event_t *ev, size_t n, const char *const *policies,
                                  size_t npolicies, uint64_t capacity, int check_level,
                                  const char *const *settings)
{
    gm_error_t err = {0};
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.device.capacity = capacity;
    cfg.check_level = check_level;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0);
    for (size_t i = 0; i < npolicies; i++) {
        const gm_policy_ops_t *ops = gm_policy_find(policies[i]);
        cr_assert_not_null(ops, "policy %s", policies[i]);
        gm_params_t p;
        cr_assert_eq(gm_params_init(&p, ops, &err), 0, "%s", err.msg);
        for (size_t k = 0; settings && settings[k]; k += 2) {
            for (size_t q = 0; q < ops->nparams; q++)
                if (strcmp(ops->params[q].name, settings[k]) == 0)
                    cr_assert_eq(gm_params_set(&p, settings[k], settings[k + 1], &err), 0, "%s",
                                 err.msg);
        }
        cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
        gm_params_release(&p);
    }
    cr_assert_eq(gm_replay_feed(r, ev, n, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_finish(r, &err), 0, "%s", err.msg);
    return r;
}

Test(replay, native_metrics_are_exact)
{
    /* Device granularity 512: 1000 → 1024, 3000 → 3072, 100 → 512. */
    gm_event_t ev[] = {ev_alloc(0, 1000), ev_alloc(1, 3000), ev_free(0),
                       ev_alloc(2, 100),  ev_free(1),         ev_free(2)};
    const char *pol[] = {"native"};
    gm_replay_t *r = replay_events(ev, 6, pol, 1, 0, 2, NULL);
    const gm_metrics_t *m = gm_replay_metrics(r, 0);
    cr_assert_eq(gm_replay_load(r), 4000);
    cr_assert_eq(m->peak_requested, 4000);
    cr_assert_eq(m->peak_allocated, 4096);
    cr_assert_eq(m->peak_reserved, 4096);
    cr_assert_float_eq(m->utilization, 1.0, 1e-12);
    cr_assert_float_eq(m->efficiency, 4000.0 / 4096.0, 1e-12);
    cr_assert_float_eq(m->overhead, 4096.0 / 4000.0 - 1.0, 1e-12);
    /* t_L is event 1 (4000 requested, 4096 allocated and reserved) */
    cr_assert_eq(m->rounding_waste, 96);
    cr_assert_eq(m->reserved_at_load_peak, 4096);
    cr_assert_float_eq(m->internal_frag, 96.0 / 4096.0, 1e-12);
    cr_assert_float_eq(m->external_frag, 0.0, 1e-12);
    cr_assert_float_eq(m->internal_frag + m->external_frag, 1.0 - m->efficiency, 1e-12);
    cr_assert_eq(m->device_mallocs, 3);
    cr_assert_eq(m->device_frees, 3);
    cr_assert_gt(m->device_time_ns, 0);
    cr_assert_eq(m->ooms, 0);
    cr_assert_eq(m->first_oom_event, -1);
    cr_assert_eq(m->events, 6);
    gm_replay_destroy(r);
}

/* gm_replay_block: the block a live allocation got, the one gm_replay_live
 * visits; nothing for one freed or never made; an OOM's request without an
 * address. */
static void block_visit(void *ctx, uint64_t id, const gm_block_t *blk)
{
    gm_block_t *seen = ctx;
    if (id < 3)
        seen[id] = *blk;
}

Test(replay, block_of_a_live_allocation)
{
    gm_event_t ev[] = {ev_alloc(0, 1000), ev_alloc(1, 3000), ev_free(0), ev_alloc(2, 8192)};
    const char *pol[] = {"native"};
    gm_replay_t *r = replay_events(ev, 4, pol, 1, 8192, 2, NULL);
    gm_block_t b, seen[3];
    memset(seen, 0, sizeof seen);
    cr_assert_eq(gm_replay_live(r, 0, block_visit, seen), 2);
    cr_assert_eq(gm_replay_block(r, 0, 1, &b), 1);
    cr_assert_eq(b.size, 3072);
    cr_assert_eq(b.addr, seen[1].addr);
    cr_assert_neq(b.addr, UINT64_MAX);
    cr_assert_eq(gm_replay_block(r, 0, 0, &b), 0, "freed");
    cr_assert_eq(gm_replay_block(r, 0, 7, &b), 0, "never made");
    cr_assert_eq(gm_replay_block(r, 1, 1, &b), 0, "no such run");
    /* 3072 + 8192 > 8192: the last request ran out */
    cr_assert_eq(gm_replay_block(r, 0, 2, &b), 1);
    cr_assert_eq(b.addr, UINT64_MAX);
    cr_assert_eq(b.size, 8192);
    gm_replay_destroy(r);
}

Test(replay, buddy_fragmentation)
{
    /* One 600-byte request in a 1 MiB arena: block 1024, largest free block
     * the 512 KiB buddy at the top. */
    gm_event_t ev[] = {ev_alloc(0, 600), ev_free(0)};
    const char *pol[] = {"buddy"};
    const char *set[] = {"arena", "1MiB", "min_block", "512", NULL};
    gm_replay_t *r = replay_events(ev, 2, pol, 1, 0, 2, set);
    const gm_metrics_t *m = gm_replay_metrics(r, 0);
    uint64_t arena = 1 << 20;
    cr_assert_eq(m->peak_reserved, arena);
    cr_assert_eq(m->peak_allocated, 1024);
    cr_assert_eq(m->rounding_waste, 1024 - 600);
    cr_assert_float_eq(m->internal_frag, (1024.0 - 600) / (double)arena, 1e-12);
    /* the arena beyond the one block is reserved, never used: external */
    cr_assert_float_eq(m->external_frag, 1.0 - 1024.0 / (double)arena, 1e-12);
    cr_assert_float_eq(m->internal_frag + m->external_frag, 1.0 - m->efficiency, 1e-12);
    cr_assert_eq(m->reserved_at_load_peak, arena);
    cr_assert_eq(m->largest_free_at_peak, arena / 2);
    cr_assert_float_eq(m->utilization, 1024.0 / (double)arena, 1e-12);
    gm_replay_destroy(r);
}

Test(replay, oom_is_recorded_with_event_index)
{
    gm_event_t ev[] = {ev_alloc(0, 2048), ev_alloc(1, 2048), ev_alloc(2, 512),
                       ev_free(2),        ev_free(0),        ev_alloc(3, 512),
                       ev_free(1),        ev_free(3)};
    const char *pol[] = {"native"};
    gm_replay_t *r = replay_events(ev, 8, pol, 1, 4096, 2, NULL);
    const gm_metrics_t *m = gm_replay_metrics(r, 0);
    cr_assert_eq(m->ooms, 1);
    cr_assert_eq(m->first_oom_event, 2);
    cr_assert_eq(m->peak_reserved, 4096);
    cr_assert_eq(m->device_mallocs, 3);
    cr_assert_eq(m->device_frees, 3);
    gm_replay_destroy(r);
}

static void expect_feed_error(const gm_event_t *ev, size_t n, const char *needle)
{
    gm_error_t err = {0};
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0);
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, gm_policy_find("native"), &err), 0);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0);
    gm_params_release(&p);
    int rc = gm_replay_feed(r, ev, n, &err);
    cr_assert_eq(rc, GM_EFORMAT, "rc %d", rc);
    cr_assert_not_null(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
    cr_assert_neq(gm_replay_finish(r, &err), 0, "a failed replay cannot finish");
    gm_replay_destroy(r);
}

Test(replay, bad_events_are_errors_with_index)
{
    gm_event_t unknown[] = {ev_alloc(0, 10), ev_free(5)};
    expect_feed_error(unknown, 2, "event 1: free of id 5");
    gm_event_t twice[] = {ev_alloc(0, 10), ev_free(0), ev_free(0)};
    expect_feed_error(twice, 3, "event 2: free of id 0");
    gm_event_t zero[] = {ev_alloc(0, 0)};
    expect_feed_error(zero, 1, "event 0: invalid size 0");
    gm_event_t huge[] = {ev_alloc(0, 10), ev_alloc(1, GM_SIZE_LIMIT + 1)};
    expect_feed_error(huge, 2, "event 1: invalid size");
    gm_event_t dup[] = {ev_alloc(3, 10), ev_alloc(3, 10)};
    expect_feed_error(dup, 2, "event 1: allocation id 3 is already live");
}

/* A seeded random trace with a bounded live set. */
static gm_event_t *random_events(size_t n, uint64_t seed)
{
    gm_event_t *ev = calloc(n, sizeof *ev);
    uint64_t *live = malloc(n * sizeof *live);
    size_t nlive = 0;
    uint64_t next = 0, rng = seed, ts = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = gt_rand(&rng);
        ts += 100 + x % 1000;
        size_t left = n - i;
        int do_free = nlive > 0 && (nlive >= left || nlive > 200 || x % 100 < 45);
        if (do_free) {
            size_t k = (x >> 8) % 4 ? nlive - 1 : (size_t)((x >> 16) % nlive);
            ev[i] = ev_free(live[k]);
            live[k] = live[--nlive];
        } else {
            uint64_t size = (x >> 20) % 10 == 0 ? (x >> 32) % (64u << 20) + 1 : (x >> 32) % 70000 + 1;
            ev[i] = ev_alloc(next, size);
            ev[i].stream = (x >> 40) % 8 == 0;
            live[nlive++] = next++;
        }
        ev[i].ts_ns = ts;
    }
    free(live);
    return ev;
}

static void metrics_equal(const gm_metrics_t *a, const gm_metrics_t *b)
{
#define CMP(name, ...) \
    if (strcmp(#name, "sim_ns_per_event") != 0) cr_assert(a->name == b->name, "metric " #name " differs");
    GM_METRICS(CMP)
#undef CMP
}

Test(replay, one_pass_over_many_policies_equals_separate_passes)
{
    size_t n = 200000;
    gm_event_t *ev = random_events(n, 11);
    const char *all[] = {"native", "buddy", "buddy"};
    const char *set[] = {"release", "empty", NULL};
    gm_replay_t *together = replay_events(ev, n, all, 3, 0, 1, set);
    for (size_t i = 0; i < 3; i++) {
        gm_replay_t *alone = replay_events(ev, n, &all[i], 1, 0, 1, set);
        metrics_equal(gm_replay_metrics(together, i), gm_replay_metrics(alone, 0));
        gm_replay_destroy(alone);
    }
    /* And every policy respects the floor. */
    for (size_t i = 0; i < 3; i++)
        cr_assert_geq(gm_replay_metrics(together, i)->peak_reserved, gm_replay_load(together));
    gm_replay_destroy(together);
    free(ev);
}

Test(replay, chunked_feed_equals_one_feed)
{
    size_t n = 50000;
    gm_event_t *ev = random_events(n, 5);
    const char *pol[] = {"buddy"};
    gm_replay_t *whole = replay_events(ev, n, pol, 1, 0, 0, NULL);

    gm_error_t err;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0);
    gm_params_t p;
    gm_params_init(&p, gm_policy_find("buddy"), &err);
    gm_replay_add(r, &p, &err);
    gm_params_release(&p);
    for (size_t i = 0; i < n; i += 777)
        cr_assert_eq(gm_replay_feed(r, ev + i, n - i < 777 ? n - i : 777, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_finish(r, &err), 0);
    metrics_equal(gm_replay_metrics(whole, 0), gm_replay_metrics(r, 0));
    gm_replay_destroy(r);
    gm_replay_destroy(whole);
    free(ev);
}

Test(replay, timeline_is_downsampled_and_keeps_peaks)
{
    size_t n = 300000;
    gm_event_t *ev = random_events(n, 3);
    const char *pol[] = {"native", "buddy"};
    gm_replay_t *r = replay_events(ev, n, pol, 2, 0, 0, NULL);
    for (size_t i = 0; i < 2; i++) {
        size_t np;
        const gm_timeline_point_t *tl = gm_replay_timeline(r, i, &np);
        cr_assert_geq(np, 1000);
        cr_assert_leq(np, 4000);
        uint64_t maxreq = 0, maxres = 0, maxall = 0;
        for (size_t k = 0; k < np; k++) {
            if (k)
                cr_assert_gt(tl[k].event, tl[k - 1].event);
            cr_assert_geq(tl[k].reserved, tl[k].allocated);
            maxreq = tl[k].requested > maxreq ? tl[k].requested : maxreq;
            maxres = tl[k].reserved > maxres ? tl[k].reserved : maxres;
            maxall = tl[k].allocated > maxall ? tl[k].allocated : maxall;
        }
        const gm_metrics_t *m = gm_replay_metrics(r, i);
        cr_assert_eq(tl[np - 1].event, n - 1);
        cr_assert_eq(tl[np - 1].ts_ns, ev[n - 1].ts_ns);
        cr_assert_eq(maxreq, m->peak_requested);
        cr_assert_eq(maxres, m->peak_reserved);
        cr_assert_eq(maxall, m->peak_allocated);
    }
    gm_replay_destroy(r);
    free(ev);
}

/* A policy that counts empty_cache calls, to test MARK handling. */
typedef struct {
    gm_policy_t base;
    int emptied;
} counting_t;
static const gm_policy_ops_t counting_ops;
static int counting_create(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                           gm_error_t *err)
{
    (void)v;
    (void)err;
    counting_t *c = calloc(1, sizeof *c);
    c->base.ops = &counting_ops;
    c->base.dev = dev;
    *out = &c->base;
    return 0;
}
static int counting_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    uint64_t got;
    if (gm_device_malloc(p->dev, req->size, 0, &out->addr, &got))
        return GM_ALLOC_OOM;
    out->size = got;
    return 0;
}
static int counting_free(gm_policy_t *p, const gm_block_t *b, uint32_t stream)
{
    (void)stream;
    gm_device_free(p->dev, b->addr, b->size);
    return 0;
}
static void counting_stats(gm_policy_t *p, gm_policy_stats_t *st)
{
    (void)p;
    memset(st, 0, sizeof *st);
}
static int counting_check(gm_policy_t *p, gm_check_t *ck)
{
    (void)p;
    return ck->bad;
}
static void counting_destroy(gm_policy_t *p) { free(p); }
static void counting_empty(gm_policy_t *p)
{
    GM_POLICY_DOWNCAST(counting_t, p, counting_ops)->emptied++;
}
static const gm_policy_ops_t counting_ops = {
    .name = "counting", .help = "test policy", .create = counting_create,
    .alloc = counting_alloc, .free = counting_free, .stats = counting_stats,
    .check = counting_check, .destroy = counting_destroy, .empty_cache = counting_empty};

Test(replay, empty_cache_marks_reach_the_policy)
{
    gm_event_t ev[] = {ev_alloc(0, 10), {.op = GM_OP_MARK, .tag = 1}, {.op = GM_OP_MARK, .tag = 0},
                       ev_free(0), {.op = GM_OP_MARK, .tag = 1}};
    gm_error_t err;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0);
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, &counting_ops, &err), 0);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
    gm_params_release(&p);
    gm_replay_set_empty_cache_tag(r, 1);
    cr_assert_eq(gm_replay_feed(r, ev, 5, &err), 0);
    cr_assert_eq(gm_replay_finish(r, &err), 0);
    counting_t *c = GM_POLICY_DOWNCAST(counting_t, gm_replay_policy(r, 0), counting_ops);
    cr_assert_not_null(c);
    cr_assert_eq(c->emptied, 2);
    cr_assert_eq(gm_replay_metrics(r, 0)->events, 5);
    gm_replay_destroy(r);
}

Test(replay, add_after_feed_is_refused)
{
    gm_error_t err;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0);
    gm_event_t e = ev_alloc(0, 1);
    cr_assert_eq(gm_replay_feed(r, &e, 1, &err), 0);
    gm_params_t p;
    gm_params_init(&p, gm_policy_find("native"), &err);
    cr_assert_eq(gm_replay_add(r, &p, &err), GM_ESTATE);
    gm_params_release(&p);
    gm_replay_destroy(r);
}

Test(replay, from_store_equals_from_memory)
{
    size_t n = 150000;
    gm_event_t *ev = random_events(n, 21);
    gm_error_t err = {0};
    const char *path = gt_tmpfile("replay-store.db");
    gm_store_t *s;
    cr_assert_eq(gm_store_open(path, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_writer_t *w;
    uint32_t idx;
    cr_assert_eq(gm_writer_begin(s, "t", GM_WRITE_REPLACE, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_stream(w, 0, &idx, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 1, &idx, &err), 0);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(gm_writer_add(w, &ev[i], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);

    const char *pol[] = {"native", "buddy"};
    gm_replay_t *mem = replay_events(ev, n, pol, 2, 0, 0, NULL);
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0);
    for (size_t i = 0; i < 2; i++) {
        gm_params_t p;
        gm_params_init(&p, gm_policy_find(pol[i]), &err);
        cr_assert_eq(gm_replay_add(r, &p, &err), 0);
        gm_params_release(&p);
    }
    cr_assert_eq(gm_replay_trace(r, s, "t", &err), 0, "%s", err.msg);
    for (size_t i = 0; i < 2; i++)
        metrics_equal(gm_replay_metrics(mem, i), gm_replay_metrics(r, i));
    gm_replay_destroy(r);
    gm_replay_destroy(mem);

    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0);
    cr_assert_eq(gm_replay_trace(r, s, "missing", &err), GM_ENOTFOUND);
    gm_replay_destroy(r);
    gm_store_close(s);
    free(ev);
}

Test(replay, rounding_counts_only_served_requests)
{
    /* The 3000-byte request fails; at the load peak the policy holds 1024
     * bytes for the 1000-byte request: rounding 24, whatever failed beside
     * it, and external 0: every reserved byte is allocated there. */
    gm_event_t ev[] = {ev_alloc(0, 1000), ev_alloc(1, 3000), ev_free(1), ev_free(0)};
    const char *pol[] = {"native"};
    gm_replay_t *r = replay_events(ev, 4, pol, 1, 2048, 2, NULL);
    const gm_metrics_t *m = gm_replay_metrics(r, 0);
    cr_assert_eq(m->ooms, 1);
    cr_assert_eq(m->first_oom_event, 1);
    cr_assert_eq(m->peak_reserved, 1024);
    cr_assert_eq(m->rounding_waste, 24);
    cr_assert_float_eq(m->external_frag, 0.0, 1e-12);
    cr_assert_eq(m->peak_requested, 4000);
    gm_replay_destroy(r);
}

Test(replay, absurd_totals_and_ids_are_format_errors)
{
    /* 2^14 live allocations of 2^48 bytes reach the 2^62 limit; one more
     * passes it. */
    size_t n = ((size_t)1 << 14) + 1;
    gm_event_t *ev = calloc(n, sizeof *ev);
    for (size_t i = 0; i < n; i++)
        ev[i] = ev_alloc(i, GM_SIZE_LIMIT);
    expect_feed_error(ev, n, "event 16384: live requested bytes would pass the 2^62 limit");
    free(ev);
    gm_event_t bad_id[] = {ev_alloc(UINT64_MAX, 10)};
    expect_feed_error(bad_id, 1, "event 0: invalid allocation id");
}

typedef struct {
    uint64_t calls, last, total;
    int decreasing;
} progress_t;

static void progress_note(void *ctx, uint64_t done, uint64_t total)
{
    progress_t *p = ctx;
    p->decreasing |= done < p->last;
    p->calls++;
    p->last = done;
    p->total = total;
}

Test(replay, progress_is_reported_per_chunk)
{
    size_t n = 150000; /* three chunks */
    gm_event_t *ev = random_events(n, 8);
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(gt_tmpfile("progress.db"), GM_STORE_WRITE, &s, &err), 0, "%s",
                 err.msg);
    gm_writer_t *w;
    uint32_t idx;
    cr_assert_eq(gm_writer_begin(s, "p", GM_WRITE_REPLACE, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_stream(w, 0, &idx, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 1, &idx, &err), 0);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(gm_writer_add(w, &ev[i], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);

    progress_t pr = {0};
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.progress = progress_note;
    cfg.progress_ctx = &pr;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0);
    gm_params_t p;
    gm_params_init(&p, gm_policy_find("buddy"), &err);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0);
    gm_params_release(&p);
    cr_assert_eq(gm_replay_trace(r, s, "p", &err), 0, "%s", err.msg);
    cr_assert_eq(pr.calls, 3);
    cr_assert_eq(pr.last, n);
    cr_assert_eq(pr.total, n);
    cr_assert_eq(pr.decreasing, 0);
    gm_replay_destroy(r);
    gm_store_close(s);
    free(ev);
}

/* ---- t*: the state at the reserved peak (docs/metrics.md) ----------------- */

/* Import snapshot `file` of ../shared/data into a fresh store; NULL (the
 * test skipped) when the data is absent.  *name gets its first trace. */
static gm_store_t *tstar_snapshot(const char *file, char *name, size_t len)
{
    char rel[128];
    snprintf(rel, sizeof rel, "snapshots/%s", file);
    const char *why = NULL;
    const char *path = gt_data_path(rel, &why);
    if (path == NULL) {
        cr_skip_test("%s: %s", file, why);
        return NULL;
    }
    size_t n;
    char *data = gt_read_file(path, &n);
    cr_assert_not_null(data, "cannot read %s", path);
    static unsigned seq;
    char db[160];
    snprintf(db, sizeof db, "tstar_%u_%s.db", seq++, file);
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(gt_tmpfile(db), GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(s, "t", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_torch_import_buffer(data, n, file, t, &err), 0, "%s: %s", file, err.msg);
    snprintf(name, len, "%s", gm_import_name(t, 0));
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    free(data);
    return s;
}

/*
 * Every policy on a real snapshot, with a timeline of one point per event
 * (so it holds requested, allocated and reserved after each event): t* is,
 * of the events at which reserved equals its peak, the one with the most
 * allocated bytes (the first on a tie); t_L, of the events at which
 * requested equals the load, the one with the most reserved (then
 * allocated) bytes, the first on a tie; rounding_waste,
 * reserved_at_load_peak and external_frag are t_L's, by their definitions.
 */
static void tstar_check(const char *file)
{
    char name[64];
    gm_store_t *s = tstar_snapshot(file, name, sizeof name);
    gm_error_t err = {0};
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, name, &info, &err), 0, "%s", err.msg);
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.timeline_points = (size_t)info.events + 1; /* one point per event */
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0);
    for (size_t i = 0; i < gm_policy_count(); i++) {
        gm_params_t p;
        cr_assert_eq(gm_params_init(&p, gm_policy_at(i), &err), 0, "%s", err.msg);
        cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
        gm_params_release(&p);
    }
    cr_assert_eq(gm_replay_trace(r, s, name, &err), 0, "%s", err.msg);
    for (size_t i = 0; i < gm_replay_count(r); i++) {
        const char *pol = gm_replay_params(r, i)->ops->name;
        const gm_metrics_t *m = gm_replay_metrics(r, i);
        size_t n;
        const gm_timeline_point_t *tl = gm_replay_timeline(r, i, &n);
        cr_assert_eq(n, info.events, "%s %s: one point per event", file, pol);
        cr_assert_eq(m->ooms, 0);
        size_t best = SIZE_MAX;
        uint64_t peak = 0;
        for (size_t k = 0; k < n; k++) {
            cr_assert_eq(tl[k].event, k);
            if (tl[k].reserved > peak)
                peak = tl[k].reserved;
        }
        for (size_t k = 0; k < n; k++)
            if (tl[k].reserved == peak && (best == SIZE_MAX || tl[k].allocated > tl[best].allocated))
                best = k;
        cr_assert_eq(m->peak_reserved, peak, "%s %s", file, pol);
        cr_assert_neq(best, SIZE_MAX);
        /* t_L */
        size_t tl_at = SIZE_MAX;
        for (size_t k = 0; k < n; k++) {
            if (tl[k].requested != m->peak_requested)
                continue;
            if (tl_at == SIZE_MAX || tl[k].reserved > tl[tl_at].reserved ||
                (tl[k].reserved == tl[tl_at].reserved && tl[k].allocated > tl[tl_at].allocated))
                tl_at = k;
        }
        cr_assert_neq(tl_at, SIZE_MAX);
        cr_assert_eq(m->rounding_waste, tl[tl_at].allocated - tl[tl_at].requested,
                     "%s %s: rounding at t_L = event %zu", file, pol, tl_at);
        cr_assert_eq(m->reserved_at_load_peak, tl[tl_at].reserved, "%s %s", file, pol);
        cr_assert_float_eq(m->external_frag, (double)(peak - tl[tl_at].allocated) / (double)peak,
                           1e-12, "%s %s", file, pol);
        /* t* is never before the first event at the peak's allocated */
        for (size_t k = 0; k < n; k++)
            if (tl[k].reserved == peak) {
                cr_assert_geq(tl[best].allocated, tl[k].allocated);
                break;
            }
    }
    gm_replay_destroy(r);
    gm_trace_info_release(&info);
    gm_store_close(s);
}

/* The case: warm-started caching and offline reserve at event 0
 * (lmmedium's layout holds its whole 6.74 GiB before the first event), so
 * the first event at the reserved peak has almost nothing allocated; the
 * fragmentation is what the run costs above its floor, a few percent. */
Test(replay, tstar_is_the_most_allocated_event_at_the_peak_warm_start)
{
    tstar_check("lmmedium_ctx128_train_fp32.pickle");
    char name[64];
    gm_store_t *s = tstar_snapshot("lmmedium_ctx128_train_fp32.pickle", name, sizeof name);
    const char *pol[] = {"caching", "offline"};
    gm_error_t err = {0};
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0);
    for (size_t i = 0; i < 2; i++) {
        gm_params_t p;
        cr_assert_eq(gm_params_init(&p, gm_policy_find(pol[i]), &err), 0);
        cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
        gm_params_release(&p);
    }
    cr_assert_eq(gm_replay_trace(r, s, name, &err), 0, "%s", err.msg);
    for (size_t i = 0; i < 2; i++) {
        const gm_metrics_t *m = gm_replay_metrics(r, i);
        /* where the first peak event's free share gave 99.9% */
        double frag = m->internal_frag + m->external_frag;
        cr_assert_float_eq(frag, 1.0 - m->efficiency, 1e-12, "%s", pol[i]);
        cr_assert_leq(frag, m->overhead, "%s", pol[i]);
        cr_assert_lt(frag, 0.05, "%s: %g", pol[i], frag);
        cr_assert_lt(m->overhead, 0.05);
    }
    gm_replay_destroy(r);
    gm_store_close(s);
}

Test(replay, tstar_is_the_most_allocated_event_at_the_peak_cold)
{
    tstar_check("lm2.7b_ctx128_forward_fp32.pickle");
    tstar_check("msd_empty_cache.pickle");
}

/* By hand: a fixed arena (buddy, 4 KiB) reserved at the first ALLOC; the
 * allocated peak comes later at the same reserved bytes. */
Test(replay, tstar_hand_built)
{
    gm_event_t ev[] = {ev_alloc(0, 512), ev_alloc(1, 1024), ev_free(0), ev_alloc(2, 2048),
                       ev_free(1), ev_alloc(3, 1024), ev_free(2), ev_free(3)};
    const char *pol[] = {"buddy"};
    const char *set[] = {"arena", "4KiB", "min_block", "512", NULL};
    gm_replay_t *r = replay_events(ev, 8, pol, 1, 0, 2, set);
    const gm_metrics_t *m = gm_replay_metrics(r, 0);
    cr_assert_eq(m->peak_reserved, 4096);
    /* reserved is 4 KiB from event 0 to the end; requested and allocated
     * peak at event 3 (1024 + 2048) and again at event 5 (2048 + 1024):
     * t_L and t* are the first */
    cr_assert_eq(m->rounding_waste, 0);
    cr_assert_float_eq(m->internal_frag, 0.0, 1e-12);
    cr_assert_float_eq(m->external_frag, 1.0 - 3072.0 / 4096.0, 1e-12);
    cr_assert_eq(m->reserved_at_load_peak, 4096);
    /* at event 3: [0, 1K) free (0's block merged back with its buddy),
     * [1K, 2K) live, [2K, 4K) live: the free KiB is one block */
    cr_assert_eq(m->largest_free_at_peak, 1024);
    gm_replay_destroy(r);
}

/* ---- policies on threads (gm_replay_config_t.threads) ------------------------ */

#include "realdata.h"

/* Replay trace `name` of s through pols with `threads` threads (and a
 * capacity and compactions every defrag_every events); *rc and err get
 * the outcome, the engine is returned, finished on success. */
static gm_replay_t *par_replay(gm_store_t *s, const char *name, const gm_policy_ops_t *const *pols,
                               size_t npols, unsigned threads, uint64_t capacity,
                               uint64_t defrag_every, int *rc, gm_error_t *err)
{
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.threads = threads;
    cfg.device.capacity = capacity;
    cfg.defrag_every = defrag_every;
    cfg.timeline_points = 300;
    gm_replay_t *r;
    cr_assert_eq(gm_replay_create(&cfg, &r, err), 0);
    for (size_t i = 0; i < npols; i++) {
        gm_params_t p;
        cr_assert_eq(gm_params_init(&p, pols[i], err), 0, "%s", err->msg);
        cr_assert_eq(gm_replay_add(r, &p, err), 0, "%s", err->msg);
        gm_params_release(&p);
    }
    *rc = gm_replay_trace(r, s, name, err);
    return r;
}

/* Every figure of every run the same in a and b (the timing aside). */
static void par_equal(gm_replay_t *a, gm_replay_t *b, const char *what)
{
    cr_assert_eq(gm_replay_count(a), gm_replay_count(b));
    cr_assert_eq(gm_replay_load(a), gm_replay_load(b), "%s: load", what);
    cr_assert_eq(gm_replay_events(a), gm_replay_events(b), "%s: events", what);
    cr_assert_eq(gm_replay_position(a), gm_replay_position(b), "%s: position", what);
    for (size_t i = 0; i < gm_replay_count(a); i++) {
        const char *pol = gm_replay_params(a, i)->ops->name;
        gm_metrics_t ma = *gm_replay_metrics(a, i), mb = *gm_replay_metrics(b, i);
        ma.sim_ns_per_event = mb.sim_ns_per_event = 0;
        cr_assert(memcmp(&ma, &mb, sizeof ma) == 0, "%s: %s: metrics differ", what, pol);
        cr_assert(memcmp(gm_replay_defrag(a, i), gm_replay_defrag(b, i),
                         sizeof(gm_defrag_stats_t)) == 0,
                  "%s: %s: compactions differ", what, pol);
        size_t na, nb;
        const gm_timeline_point_t *ta = gm_replay_timeline(a, i, &na),
                                  *tb = gm_replay_timeline(b, i, &nb);
        cr_assert_eq(na, nb, "%s: %s: timeline length", what, pol);
        cr_assert(na == 0 || memcmp(ta, tb, na * sizeof *ta) == 0, "%s: %s: timeline differs",
                  what, pol);
    }
}

/* The policies, one thread against 3 (one worker with a run more than
 * another), with a planner (GM_POLICY_NEEDS_LIFETIMES) when `planners`;
 * then without planners (each costs a planning per replay and per
 * compaction): against as many threads as runs, and on devices of 3/4 and
 * 5/4 of the load (OOMs) compacting three times, where the recorded layout
 * does not fit, the same refusal. */
static void par_check_trace(gm_store_t *s, const char *name, int planners)
{
    size_t np = 0, nonline = 0;
    const gm_policy_ops_t *pols[64];
    cr_assert_leq(gm_policy_count(), 64);
    for (size_t i = 0; i < gm_policy_count(); i++)
        if (!(gm_policy_at(i)->flags & GM_POLICY_NEEDS_LIFETIMES))
            pols[np++] = gm_policy_at(i);
    nonline = np;
    for (size_t i = 0; planners && i < gm_policy_count(); i++)
        if (gm_policy_at(i)->flags & GM_POLICY_NEEDS_LIFETIMES)
            pols[np++] = gm_policy_at(i);
    gm_error_t err = {0}, err1 = {0};
    int rc, rc1;
    gm_replay_t *one = par_replay(s, name, pols, np, 1, 0, 0, &rc, &err);
    cr_assert_eq(rc, 0, "%s: %s", name, err.msg);
    gm_replay_t *par = par_replay(s, name, pols, np, 3, 0, 0, &rc, &err);
    cr_assert_eq(rc, 0, "%s, 3 threads: %s", name, err.msg);
    par_equal(one, par, name);
    gm_replay_destroy(one);
    gm_replay_destroy(par);

    one = par_replay(s, name, pols, nonline, 1, 0, 0, &rc, &err);
    cr_assert_eq(rc, 0, "%s: %s", name, err.msg);
    uint64_t load = gm_replay_load(one), every = gm_replay_events(one) / 4 + 1;
    par = par_replay(s, name, pols, nonline, (unsigned)nonline, 0, 0, &rc, &err);
    cr_assert_eq(rc, 0, "%s, %zu threads: %s", name, nonline, err.msg);
    par_equal(one, par, name);
    gm_replay_destroy(one);
    gm_replay_destroy(par);
    for (uint64_t q = 3; q <= 5; q += 2) {
        uint64_t cap = load / 4 * q + 1;
        one = par_replay(s, name, pols, nonline, 1, cap, every, &rc1, &err1);
        par = par_replay(s, name, pols, nonline, 4, cap, every, &rc, &err);
        cr_assert_eq(rc, rc1, "%s: %s / %s", name, err1.msg, err.msg);
        if (rc == 0)
            par_equal(one, par, name);
        else
            cr_assert_str_eq(err.msg, err1.msg);
        gm_replay_destroy(one);
        gm_replay_destroy(par);
    }
}

Test(replay, threads_equal_one_thread_on_every_snapshot, .timeout = 600)
{
    const char *why = NULL;
    gm_store_t *s = rd_store(&why);
    if (s == NULL)
        cr_skip_test("real snapshots not available: %s", why);
    gm_error_t err = {0};
    gm_trace_info_t *list;
    size_t n;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++)
        par_check_trace(s, list[i].name, 1);
    gm_trace_info_free_list(list, n);
}

Test(replay, threads_equal_one_thread_on_a_synthesized_trace, .timeout = 600)
{
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(gt_tmpfile("threads-synth.db"), GM_STORE_WRITE, &s, &err), 0,
                 "%s", err.msg);
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    cr_assert_eq(gm_synth_apply_preset(&c, "gpt2", &err), 0, "%s", err.msg);
    c.batch = 2;
    c.seq = 256;
    c.steps = 200; /* more chunks than the ring holds */
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, "syn", GM_WRITE_REPLACE, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_synth_write(&c, w, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "syn", &info, &err), 0, "%s", err.msg);
    cr_assert_gt(info.events, 5 * GM_CHUNK_EVENTS, "%" PRIu64 " events", info.events);
    gm_trace_info_release(&info);
    par_check_trace(s, "syn", 0);
    gm_store_close(s);
}

/* A policy that fails (GM_EINVAL, an error, not an OOM) at one allocation. */
typedef struct {
    gm_policy_t base;
    uint64_t at;
} failing_t;
static const gm_policy_ops_t failing_early_ops, failing_late_ops, failing_early_b_ops;
static int failing_create_early_b(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                                  gm_error_t *err);
static int failing_create_early(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                                gm_error_t *err);
static int failing_create_late(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                               gm_error_t *err);
static int failing_alloc(gm_policy_t *p, const gm_request_t *req, gm_block_t *out)
{
    failing_t *f = (failing_t *)p;
    if (req->id == f->at)
        return GM_EINVAL;
    return counting_alloc(p, req, out);
}
static void failing_destroy(gm_policy_t *p) { free(p); }
#define FAILING_OPS(var, nm, cr)                                                              \
    static const gm_policy_ops_t var = {                                                      \
        .name = nm, .help = "test policy", .create = cr, .alloc = failing_alloc,             \
        .free = counting_free, .stats = counting_stats, .check = counting_check,             \
        .destroy = failing_destroy}
FAILING_OPS(failing_early_ops, "failing-early", failing_create_early);
FAILING_OPS(failing_late_ops, "failing-late", failing_create_late);
FAILING_OPS(failing_early_b_ops, "failing-early-b", failing_create_early_b);
#define FAILING_EARLY_ID 60000
#define FAILING_LATE_ID 80000
static int failing_create(gm_device_t *dev, const gm_policy_ops_t *ops, uint64_t at,
                          gm_policy_t **out)
{
    failing_t *f = calloc(1, sizeof *f);
    f->base.ops = ops;
    f->base.dev = dev;
    f->at = at;
    *out = &f->base;
    return 0;
}
static int failing_create_early(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                                gm_error_t *err)
{
    (void)v;
    (void)err;
    return failing_create(dev, &failing_early_ops, FAILING_EARLY_ID, out);
}
static int failing_create_early_b(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                                  gm_error_t *err)
{
    (void)v;
    (void)err;
    return failing_create(dev, &failing_early_b_ops, FAILING_EARLY_ID, out);
}
static int failing_create_late(gm_device_t *dev, const gm_param_value_t *v, gm_policy_t **out,
                               gm_error_t *err)
{
    (void)v;
    (void)err;
    return failing_create(dev, &failing_late_ops, FAILING_LATE_ID, out);
}

Test(replay, threads_report_the_error_one_thread_reports)
{
    size_t n = 400000;
    gm_event_t *ev = random_events(n, 21);
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(gt_tmpfile("threads-err.db"), GM_STORE_WRITE, &s, &err), 0, "%s",
                 err.msg);
    gm_writer_t *w;
    uint32_t idx;
    cr_assert_eq(gm_writer_begin(s, "e", GM_WRITE_REPLACE, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_stream(w, 0, &idx, &err), 0);
    cr_assert_eq(gm_writer_stream(w, 1, &idx, &err), 0);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(gm_writer_add(w, &ev[i], &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    /* Run 3 fails before run 1 (whose worker runs ahead of run 3's); then
     * runs 1 and 3 fail at the same event: the serial order names run 1. */
    const gm_policy_ops_t *cases[2][4] = {
        {gm_policy_find("native"), &failing_late_ops, gm_policy_find("buddy"), &failing_early_ops},
        {gm_policy_find("native"), &failing_early_ops, gm_policy_find("buddy"),
         &failing_early_b_ops},
    };
    const char *expect[2] = {"policy failing-early failed", "policy failing-early failed"};
    for (size_t k = 0; k < 2; k++) {
        int rc1, rc3;
        gm_error_t e1 = {0}, e3 = {0};
        gm_replay_t *one = par_replay(s, "e", cases[k], 4, 1, 0, 0, &rc1, &e1);
        gm_replay_t *par = par_replay(s, "e", cases[k], 4, 3, 0, 0, &rc3, &e3);
        cr_assert_eq(rc1, GM_EINVAL);
        cr_assert_eq(rc1, rc3);
        cr_assert_str_eq(e1.msg, e3.msg);
        cr_assert(strstr(e1.msg, expect[k]) != NULL, "%s", e1.msg);
        gm_replay_destroy(one);
        gm_replay_destroy(par);
    }
    gm_store_close(s);
    free(ev);
}

/* A trace's recorded layout that does not fit the capacity: the run of a
 * policy that starts from it (caching, start=recorded) starts cold instead
 * of failing, and says so (issue 28, item 1); one that fits starts warm;
 * the other policies are cold either way (item 5). */
Test(replay, layout_that_does_not_fit_starts_cold)
{
    const uint64_t MB = UINT64_C(1) << 20;
    gm_layout_block_t blocks[] = {
        {0, 5 * MB, 5 * MB - 100, 0},
        {5 * MB, 35 * MB, 0, GM_LAYOUT_FREE},
    };
    gm_layout_segment_t segs[] = {
        {.address = 0x10000000, .size = 40 * MB, .pool = GM_POOL_LARGE, .first_block = 0,
         .nblocks = 2},
    };
    gm_layout_t l = {segs, 1, blocks, 2};
    gm_event_t ev[] = {
        {.op = GM_OP_ALLOC, .id = 0, .size = 5 * MB - 100, .flags = GM_EVENT_PREEXISTING},
        {.op = GM_OP_ALLOC, .id = 1, .size = 2 * MB},
        {.op = GM_OP_FREE, .id = 1},
        {.op = GM_OP_FREE, .id = 0},
    };
    for (int fits = 0; fits < 2; fits++) {
        gm_replay_config_t cfg;
        gm_replay_config_default(&cfg);
        cfg.device.capacity = fits ? 64 * MB : 32 * MB; /* the layout holds 40 MiB */
        gm_replay_t *r;
        gm_error_t err = {0};
        cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0);
        const char *names[] = {"caching", "bfc"};
        for (size_t i = 0; i < 2; i++) {
            gm_params_t p;
            cr_assert_eq(gm_params_init(&p, gm_policy_find(names[i]), &err), 0);
            cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
            gm_params_release(&p);
        }
        gm_trace_context_t ctx = {.name = "t", .attrs = "{}", .layout = &l, .events = 4};
        cr_assert_eq(gm_replay_prepare(r, &ctx, &err), 0, "%s", err.msg);
        uint64_t unfit = 1;
        cr_expect_eq(gm_replay_started_warm(r, 0, &unfit), fits, "fits %d", fits);
        cr_expect_eq(unfit, fits ? 0 : 40 * MB, "the layout's bytes when it does not fit");
        cr_expect_eq(gm_replay_started_warm(r, 1, &unfit), 0);
        cr_expect_eq(unfit, 0);
        /* the parameters stay as given: start=recorded, the run's key */
        const gm_params_t *p0 = gm_replay_params(r, 0);
        for (size_t k = 0; k < p0->ops->nparams; k++)
            if (strcmp(p0->ops->params[k].name, "start") == 0)
                cr_expect_eq(p0->values[k].e, 0);
        cr_assert_eq(gm_replay_feed(r, ev, 4, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_replay_finish(r, &err), 0, "%s", err.msg);
        const gm_metrics_t *m = gm_replay_metrics(r, 0);
        cr_expect_eq(m->ooms, 0);
        /* warm: the layout's 40 MiB; cold: one 20 MiB segment (PyTorch's
         * for requests of 1 to 10 MiB) */
        cr_expect_eq(m->peak_reserved, fits ? 40 * MB : 20 * MB);
        cr_expect_leq(m->peak_reserved, cfg.device.capacity);
        cr_expect_eq(m->device_mallocs > 0, !fits);
        gm_replay_destroy(r);
    }
}

/* ---- fragmentation on the real snapshots (docs/metrics.md) --------------- */

/*
 * Every policy, at its defaults, on every shared snapshot: the relations
 * fragmentation's definitions promise.  The two shares split the bytes
 * above the floor (internal + external = 1 − efficiency), so neither
 * exceeds the overhead (a run a few percent above its floor has a few
 * percent of fragmentation), external is at least 1 − utilization, and
 * rounding is counted in bytes and as a share alike (buddy's powers of two
 * show as internal fragmentation, not as a few percent).
 */
Test(replay, fragmentation_relations_on_every_snapshot_and_policy)
{
    const char *why = NULL;
    gm_store_t *s = rd_store(&why);
    if (s == NULL)
        cr_skip_test("real snapshots not available: %s", why);
    gm_error_t err = {0};
    gm_trace_info_t *list;
    size_t n;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
    size_t buddy_runs = 0;
    for (size_t t = 0; t < n; t++) {
        gm_replay_config_t cfg;
        gm_replay_config_default(&cfg);
        cfg.timeline_points = 0;
        gm_replay_t *r;
        cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0, "%s", err.msg);
        for (size_t i = 0; i < gm_policy_count(); i++) {
            gm_params_t p;
            cr_assert_eq(gm_params_init(&p, gm_policy_at(i), &err), 0, "%s", err.msg);
            cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
            gm_params_release(&p);
        }
        cr_assert_eq(gm_replay_trace(r, s, list[t].name, &err), 0, "%s: %s", list[t].name,
                     err.msg);
        const gm_metrics_t *buddy = NULL;
        for (size_t i = 0; i < gm_replay_count(r); i++) {
            const char *pol = gm_replay_params(r, i)->ops->name, *tr = list[t].name;
            const gm_metrics_t *m = gm_replay_metrics(r, i);
            double R = (double)m->peak_reserved, in = m->internal_frag, ex = m->external_frag;
            cr_assert_eq(m->ooms, 0, "%s on %s", pol, tr);
            cr_expect_geq(in, 0.0, "%s on %s", pol, tr);
            cr_expect_geq(ex, 0.0, "%s on %s", pol, tr);
            cr_expect_float_eq(in + ex, 1.0 - m->efficiency, 1e-9,
                               "%s on %s: internal %g + external %g, 1 - efficiency %g", pol, tr,
                               in, ex, 1.0 - m->efficiency);
            cr_expect_leq(in + ex, m->overhead + 1e-12, "%s on %s: fragmentation %g above the "
                          "overhead %g", pol, tr, in + ex, m->overhead);
            cr_expect_geq(ex, 1.0 - m->utilization - 1e-12, "%s on %s", pol, tr);
            cr_expect_float_eq(in * R, (double)m->rounding_waste, 1e-6 * R + 1, "%s on %s", pol,
                               tr);
            /* allocated(t_L) ≤ reserved(t_L) ≤ peak reserved */
            cr_expect_leq(m->reserved_at_load_peak, m->peak_reserved, "%s on %s", pol, tr);
            cr_expect_geq((double)m->reserved_at_load_peak, R * (1 - ex) - 1e-6 * R - 1,
                          "%s on %s", pol, tr);
            cr_expect_leq(m->largest_free_at_peak, m->peak_reserved, "%s on %s", pol, tr);
            if (strcmp(pol, "buddy") == 0)
                buddy = m;
        }
        /* buddy hands out a block of 2^k for every request: its rounding
         * is its cost, shown as such, above that of the policies that round
         * to 512 bytes (binning's size classes may round more) */
        cr_assert_not_null(buddy);
        buddy_runs++;
        for (size_t i = 0; i < gm_replay_count(r); i++)
            if (strstr(" native caching async tlsf ", gm_replay_params(r, i)->ops->name))
                cr_expect_gt(buddy->rounding_waste, gm_replay_metrics(r, i)->rounding_waste,
                             "buddy on %s: rounding %" PRIu64 " not above %s's %" PRIu64,
                             list[t].name, buddy->rounding_waste,
                             gm_replay_params(r, i)->ops->name,
                             gm_replay_metrics(r, i)->rounding_waste);
        cr_expect_gt(buddy->internal_frag, 0.0, "buddy on %s", list[t].name);
        gm_replay_destroy(r);
    }
    cr_expect_eq(buddy_runs, n);
    gm_trace_info_free_list(list, n);
}
