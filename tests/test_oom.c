/*
 * tests/test_oom.c — the allocator's recorded OOMs.  PyTorch writes an
 * `oom` trace entry when a malloc fails after the caching allocator has
 * released what it could (release_available_cached_blocks, then
 * release_cached_blocks): the request's size, its stream, and the device's
 * free bytes ('device_free', from cudaMemGetInfo).  The importer keeps
 * them (the MARK "oom": size, stream, addr = device_free) and the capacity
 * they give the allocator (attribute oom_capacity: reserved then + free);
 * a replay at that capacity asks each policy for the failed request again.
 *
 * None of the shared snapshots ran out of memory, so the fixtures here are
 * real snapshots with one `oom` entry added: the pickle is decoded
 * (formats/pickle.h), the entry inserted where the recorded reserved bytes
 * are about half their peak, and the tree written again.  Its device_free
 * makes the capacity just under the recorded peak: the replay must release
 * cached memory and go on, never above the capacity.
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "gmsim/layout.h"
#include "gmsim/policy.h"
#include "gmsim/replay.h"
#include "gmsim/store.h"
#include "gmsim/sweep.h"
#include "gmsim/torch.h"
#include "formats/pickle.h"
#include "support/pickle_writer.h"
#include "util.h"

#define MIB (UINT64_C(1) << 20)

/* ---- the fixture ---------------------------------------------------------- */

static const gm__pk_t *pk_get(const gm__pickle_t *p, const gm__pk_t *d, const char *key)
{
    return gm__pk_get(d, gm__pickle_find_str(p, key));
}

static uint64_t pk_u64(const gm__pickle_t *p, const gm__pk_t *d, const char *key)
{
    uint64_t v = 0;
    const gm__pk_t *x = pk_get(p, d, key);
    if (x != NULL)
        gm__pk_u64(x, &v);
    return v;
}

static int pk_action(const gm__pickle_t *p, const gm__pk_t *e, const char *a)
{
    const gm__pk_t *x = pk_get(p, e, "action");
    return x != NULL && gm__pk_is_str(x, a);
}

typedef struct fixture {
    char *data; /* the pickle with the oom entry */
    size_t len;
    uint64_t peak;     /* recorded peak reserved (device 0) */
    uint64_t at;       /* index of the oom entry in device 0's trace */
    uint64_t reserved; /* recorded reserved bytes there */
    uint64_t capacity; /* reserved + device_free */
    uint64_t request;  /* the oom entry's size */
} fixture_t;

/*
 * Real snapshot `name` with an oom entry on device 0 where its recorded
 * reserved bytes first reach half their peak, whose device_free gives a
 * capacity of the peak less `under`; the entry asks for the whole capacity
 * (a request no state of the device can serve).  Skips without the data.
 */
static fixture_t make_fixture(const char *name, uint64_t under)
{
    const char *why = NULL;
    const char *dir = gt_data_path("snapshots", &why);
    if (dir == NULL)
        cr_skip_test("%s", why);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.pickle", dir, name);
    size_t len;
    char *raw = gt_read_file(path, &len);
    if (raw == NULL)
        cr_skip_test("%s is absent", path);
    gm__pickle_t *pk;
    gm_error_t err = {0};
    cr_assert_eq(gm__pickle_decode(raw, len, &pk, &err), 0, "%s", err.msg);
    const gm__pk_t *root = gm__pickle_root(pk);
    const gm__pk_t *traces = pk_get(pk, root, "device_traces");
    cr_assert(traces != NULL && traces->type == GM__PK_LIST && traces->n > 0);
    const gm__pk_t *tr = traces->v.items[0];

    /* reserved bytes along the trace: the final segments less the trace's net */
    uint64_t final = 0;
    const gm__pk_t *segs = pk_get(pk, root, "segments");
    for (uint32_t i = 0; i < segs->n; i++)
        if (pk_u64(pk, segs->v.items[i], "device") == 0)
            final += pk_u64(pk, segs->v.items[i], "total_size");
    int64_t net = 0;
    for (uint32_t i = 0; i < tr->n; i++) {
        const gm__pk_t *e = tr->v.items[i];
        uint64_t sz = pk_u64(pk, e, "size");
        if (pk_action(pk, e, "segment_alloc") || pk_action(pk, e, "segment_map"))
            net += (int64_t)sz;
        else if (pk_action(pk, e, "segment_free") || pk_action(pk, e, "segment_unmap"))
            net -= (int64_t)sz;
    }
    fixture_t f = {0};
    uint64_t cur = (uint64_t)((int64_t)final - net);
    uint64_t *at_entry = calloc(tr->n + 1, sizeof *at_entry);
    cr_assert(at_entry != NULL);
    f.peak = cur;
    for (uint32_t i = 0; i < tr->n; i++) {
        at_entry[i] = cur;
        const gm__pk_t *e = tr->v.items[i];
        uint64_t sz = pk_u64(pk, e, "size");
        if (pk_action(pk, e, "segment_alloc") || pk_action(pk, e, "segment_map"))
            cur += sz;
        else if (pk_action(pk, e, "segment_free") || pk_action(pk, e, "segment_unmap"))
            cur -= sz;
        if (cur > f.peak)
            f.peak = cur;
    }
    at_entry[tr->n] = cur;
    f.at = tr->n;
    for (uint32_t i = 0; i < tr->n; i++)
        if (at_entry[i] >= f.peak / 2) {
            f.at = i;
            break;
        }
    f.reserved = at_entry[f.at];
    free(at_entry);
    f.capacity = f.peak - under;
    cr_assert(f.capacity > f.reserved, "the fixture needs room after the oom");
    f.request = f.capacity;

    /* write it again with the entry */
    pw_t w = {0};
    pw_raw(&w, "\x80\x02", 2);
    pw_op(&w, '}');
    pw_op(&w, '(');
    for (uint32_t k = 0; k < root->n; k++) {
        const gm__pk_t *key = root->v.items[2 * k], *val = root->v.items[2 * k + 1];
        pw_node(&w, key, 1);
        if (val != traces) {
            pw_node(&w, val, 1);
            continue;
        }
        pw_op(&w, ']');
        pw_op(&w, '(');
        for (uint32_t d = 0; d < traces->n; d++) {
            const gm__pk_t *t = traces->v.items[d];
            pw_op(&w, ']');
            pw_op(&w, '(');
            for (uint32_t i = 0; i <= t->n; i++) {
                if (d == 0 && i == f.at) {
                    const gm__pk_t *prev = t->v.items[i ? i - 1 : 0];
                    pw_op(&w, '}');
                    pw_op(&w, '(');
                    pw_str(&w, "action");
                    pw_str(&w, "oom");
                    pw_kv_int(&w, "device_free", f.capacity - f.reserved);
                    pw_kv_int(&w, "size", f.request);
                    pw_kv_int(&w, "stream", pk_u64(pk, prev, "stream"));
                    pw_kv_int(&w, "time_us", pk_u64(pk, prev, "time_us"));
                    pw_op(&w, 'u');
                }
                if (i < t->n)
                    pw_node(&w, t->v.items[i], 2);
            }
            pw_op(&w, 'e');
        }
        pw_op(&w, 'e');
    }
    pw_op(&w, 'u');
    pw_op(&w, '.');
    gm__pickle_free(pk);
    free(raw);
    f.data = w.p;
    f.len = w.n;
    return f;
}

/* Import the fixture into a fresh store; the trace is `name` (device 0's
 * name when the snapshot has several: name.dev0). */
static gm_store_t *import_fixture(const fixture_t *f, const char *name)
{
    gm_store_t *s;
    gm_error_t err = {0};
    char db[256];
    snprintf(db, sizeof db, "oom_%s.db", name);
    remove(gt_tmpfile(db));
    cr_assert_eq(gm_store_open(gt_tmpfile(db), GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(s, name, 0, &t, &err), 0, "%s", err.msg);
    int rc = gm_torch_import_buffer(f->data, f->len, name, t, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    return s;
}

/* The first trace of s whose name starts with name. */
static void first_trace(gm_store_t *s, const char *name, gm_trace_info_t *info)
{
    gm_error_t err = {0};
    if (gm_store_find(s, name, info, &err) == 0)
        return;
    char dev0[256];
    snprintf(dev0, sizeof dev0, "%s.dev0", name);
    cr_assert_eq(gm_store_find(s, dev0, info, &err), 0, "%s", err.msg);
}

typedef struct oom_run {
    gm_metrics_t m;
    uint64_t asked, failed;
    uint64_t released_after; /* bytes empty_cache released right after the oom (UINT64_MAX: not run) */
} oom_run_t;

/* Replay the trace through caching (parameters `conf` over the trace's
 * settings) on a device of `capacity` (0 unlimited), asking for the
 * recorded OOMs when `ask`. */
static oom_run_t replay(gm_store_t *s, const char *trace, const char *conf, uint64_t capacity,
                        int ask)
{
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.device.capacity = capacity;
    cfg.recorded_ooms = ask;
    cfg.check_level = 1;
    gm_replay_t *r;
    gm_error_t err = {0};
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0, "%s", err.msg);
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, gm_policy_find("caching"), &err), 0, "%s", err.msg);
    if (conf != NULL)
        cr_assert_eq(gm_params_set(&p, "conf", conf, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
    gm_params_release(&p);
    cr_assert_eq(gm_replay_trace(r, s, trace, &err), 0, "%s", err.msg);
    oom_run_t o = {.m = *gm_replay_metrics(r, 0), .released_after = UINT64_MAX};
    o.asked = gm_replay_recorded_ooms(r, 0, &o.failed);
    gm_replay_destroy(r);
    return o;
}

/*
 * The same replay fed by hand up to the oom MARK (included): then
 * empty_cache must release nothing, since the failed request released
 * every cached block that could go (PyTorch's release_cached_blocks).
 */
static uint64_t released_after_oom(gm_store_t *s, const char *trace, uint64_t capacity)
{
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.device.capacity = capacity;
    cfg.recorded_ooms = 1;
    gm_replay_t *r;
    gm_error_t err = {0};
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0, "%s", err.msg);
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, gm_policy_find("caching"), &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
    gm_params_release(&p);
    gm_reader_t *rd;
    cr_assert_eq(gm_reader_open(s, trace, &rd, &err), 0, "%s", err.msg);
    int64_t tag = gm_reader_find_tag(rd, "oom");
    cr_assert(tag >= 0, "the trace has no oom mark");
    gm_replay_set_oom_tag(r, tag);
    const gm_trace_info_t *info = gm_reader_info(rd);
    gm_layout_t *layout = NULL;
    cr_assert_eq(gm_store_layout(s, trace, &layout, &err), 0, "%s", err.msg);
    gm_trace_context_t ctx = {.name = trace, .attrs = info->attrs, .events = info->events,
                              .layout = layout};
    cr_assert_eq(gm_replay_prepare(r, &ctx, &err), 0, "%s", err.msg);
    gm_layout_free(layout);
    const gm_event_t *ev;
    size_t n;
    int found = 0;
    while (!found && gm_reader_next(rd, &ev, &n, &err) == 0 && n > 0) {
        size_t upto = n;
        for (size_t i = 0; i < n; i++)
            if (ev[i].op == GM_OP_MARK && (int64_t)ev[i].tag == tag) {
                upto = i + 1;
                found = 1;
                break;
            }
        cr_assert_eq(gm_replay_feed(r, ev, upto, &err), 0, "%s", err.msg);
    }
    cr_assert(found, "no oom mark in the trace");
    uint64_t failed;
    cr_assert_eq(gm_replay_recorded_ooms(r, 0, &failed), 1);
    cr_assert_eq(failed, 1, "the request no device state can hold was served");
    gm_policy_t *pol = gm_replay_policy(r, 0);
    uint64_t before = pol->dev->reserved;
    gm_policy_empty_cache(pol);
    uint64_t released = before - pol->dev->reserved;
    gm_reader_close(rd);
    gm_replay_destroy(r);
    return released;
}

/* The laws, for the snapshot `name` (recorded with or without expandable
 * segments) replayed as recorded, or with `conf` when not NULL, at a
 * capacity `under` its recorded peak reserved. */
static void check_snapshot(const char *name, const char *conf, uint64_t under)
{
    fixture_t f = make_fixture(name, under);
    gm_store_t *s = import_fixture(&f, name);
    gm_trace_info_t info;
    first_trace(s, name, &info);
    char trace[256];
    snprintf(trace, sizeof trace, "%s", info.name);

    /* the importer keeps the entry and the capacity it gives */
    cr_assert_eq(gm_attr_int(info.attrs, GM_ATTR_OOMS), 1, "%s", info.attrs);
    cr_assert_eq((uint64_t)gm_attr_int(info.attrs, GM_ATTR_OOM_CAPACITY), f.capacity,
                 "capacity %" PRIu64 " = reserved %" PRIu64 " + free; attrs %s", f.capacity,
                 f.reserved, info.attrs);
    gm_trace_info_release(&info);
    gm_reader_t *rd;
    gm_error_t err = {0};
    cr_assert_eq(gm_reader_open(s, trace, &rd, &err), 0, "%s", err.msg);
    int64_t tag = gm_reader_find_tag(rd, "oom");
    cr_assert(tag >= 0);
    const gm_event_t *ev;
    size_t n, marks = 0;
    while (gm_reader_next(rd, &ev, &n, &err) == 0 && n > 0)
        for (size_t i = 0; i < n; i++)
            if (ev[i].op == GM_OP_MARK && (int64_t)ev[i].tag == tag) {
                marks++;
                cr_assert_eq(ev[i].size, f.request, "the failed request's size");
                cr_assert_eq(ev[i].addr, f.capacity - f.reserved, "the device's free bytes");
            }
    gm_reader_close(rd);
    cr_assert_eq(marks, 1);

    /* unlimited, the replay goes above the capacity the oom gives */
    oom_run_t u = replay(s, trace, conf, 0, 0);
    cr_assert_gt(u.m.peak_reserved, f.capacity, "%s: unlimited peak %" PRIu64, name,
                 u.m.peak_reserved);
    /* on an unlimited device the failed request is not asked: it would not
     * have failed (the replays that size a device stay as they were) */
    oom_run_t ua = replay(s, trace, conf, 0, 1);
    cr_assert_eq(ua.asked, 0);
    cr_assert_eq(ua.m.peak_reserved, u.m.peak_reserved);
    /* at that capacity it releases cached memory and goes on */
    oom_run_t c = replay(s, trace, conf, f.capacity, 1);
    cr_assert_eq(c.m.ooms, 0, "%s: the replay ran out of memory at %" PRId64, name,
                 c.m.first_oom_event);
    cr_assert_leq(c.m.peak_reserved, f.capacity, "%s: peak %" PRIu64 " above %" PRIu64, name,
                  c.m.peak_reserved, f.capacity);
    cr_assert_gt(c.m.device_frees, u.m.device_frees, "%s: nothing released", name);
    cr_assert_eq(c.asked, 1);
    cr_assert_eq(c.failed, 1, "%s: the failed request was served", name);
    /* the failed request released what PyTorch releases before failing */
    if (conf == NULL)
        cr_assert_eq(released_after_oom(s, trace, f.capacity), 0,
                     "%s: empty_cache after the oom still released memory", name);
    /* not asked, the replay still fits */
    oom_run_t q = replay(s, trace, conf, f.capacity, 0);
    cr_assert_eq(q.m.ooms, 0);
    cr_assert_eq(q.asked, 0);
    gm_store_close(s);
    free(f.data);
}

/* Capacities a few percent under the recorded peaks: 32 MiB under
 * msd_basic's 526 MiB; 16 MiB under msd_expandable's 614 MiB, whose load
 * (570 MiB) and 20 MiB pages leave less to release; msd_basic replayed with
 * expandable segments peaks at 494 MiB unlimited (load 450 MiB), so 48 MiB
 * under. */
Test(oom, ordinary_segments, .timeout = 300) { check_snapshot("msd_basic", NULL, 32 * MIB); }

Test(oom, expandable_segments, .timeout = 300)
{
    check_snapshot("msd_expandable", NULL, 16 * MIB);
}

Test(oom, multi_device_expandable, .timeout = 300)
{
    check_snapshot("msd_multi_device", NULL, 16 * MIB);
}

Test(oom, ordinary_replayed_expandable, .timeout = 300)
{
    check_snapshot("msd_basic", "expandable_segments:True", 48 * MIB);
}

/* A snapshot whose oom entry has no device_free (as written before
 * PyTorch kept it) imports as before: a mark, no capacity. */
Test(oom, without_device_free)
{
    fixture_t f = make_fixture("msd_basic", 32 * MIB);
    /* drop the key: rename it so the importer does not see it */
    char *k = NULL;
    for (size_t i = 0; k == NULL && i + 11 <= f.len; i++)
        if (memcmp(f.data + i, "device_free", 11) == 0)
            k = f.data + i;
    cr_assert(k != NULL);
    memcpy(k, "device_frex", 11);
    gm_store_t *s = import_fixture(&f, "msd_basic");
    gm_trace_info_t info;
    first_trace(s, "msd_basic", &info);
    cr_assert_eq(gm_attr_int(info.attrs, GM_ATTR_OOMS), 1, "%s", info.attrs);
    cr_assert_eq(gm_attr_int(info.attrs, GM_ATTR_OOM_CAPACITY), -1, "%s", info.attrs);
    gm_trace_info_release(&info);
    gm_store_close(s);
    free(f.data);
}

/* ---- the command line -------------------------------------------------------- */

/* Run `gmsim ARGS` (stderr with stdout) into a malloc'd string. */
static char *run_gmsim(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s/gmsim' %s 2>&1", GM_BINARY_DIR, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    for (size_t k; (k = fread(out + n, 1, cap - 1 - n, p)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            cap *= 2;
            out = realloc(out, cap);
            cr_assert_not_null(out);
        }
    }
    out[n] = '\0';
    pclose(p);
    return out;
}

/* replay takes the recorded OOM's capacity when none is given, says so,
 * and asks for the failed request; --capacity overrides it. */
Test(oom, replay_says_where_the_capacity_came_from, .timeout = 300)
{
    fixture_t f = make_fixture("msd_basic", 32 * MIB);
    char pickle[512], db[512], args[2048];
    snprintf(pickle, sizeof pickle, "%s", gt_tmpfile("oom_cli.pickle"));
    snprintf(db, sizeof db, "%s", gt_tmpfile("oom_cli.db"));
    remove(db);
    FILE *o = fopen(pickle, "wb");
    cr_assert_not_null(o);
    cr_assert_eq(fwrite(f.data, 1, f.len, o), f.len);
    fclose(o);
    snprintf(args, sizeof args, "import '%s' -o '%s'", pickle, db);
    free(run_gmsim(args));
    snprintf(args, sizeof args, "replay '%s' --policy caching", db);
    char *out = run_gmsim(args);
    cr_assert(strstr(out, "(from the recorded OOM: reserved then + the device's free bytes)"),
              "%s", out);
    cr_assert(strstr(out, "'caching': the recorded OOM asked again: 1 of 1 failed as recorded, 0 served"), "%s", out);
    cr_assert(!strstr(out, "ran out of memory"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "replay '%s' --policy caching --json", db);
    out = run_gmsim(args);
    cr_assert(strstr(out, "\"capacity_from\": \"recorded_oom\""), "%s", out);
    char want[64];
    snprintf(want, sizeof want, "\"capacity\": %" PRIu64, f.capacity);
    cr_assert(strstr(out, want), "%s not in %s", want, out);
    free(out);
    snprintf(args, sizeof args, "replay '%s' --policy caching --capacity 1GiB --json", db);
    out = run_gmsim(args);
    cr_assert(!strstr(out, "capacity_from"), "%s", out);
    cr_assert(!strstr(out, "recorded_ooms"), "%s", out);
    free(out);
    free(f.data);
}

/* compare (gm_compare_trace) and sweep (gm_sweep_run) given an unlimited
 * device take the capacity the recorded OOM fixes, as replay does
 * (gm_replay_config_at_oom): the failed request is asked again, the runs
 * stay within that capacity, and a sweep stores them with that device;
 * given a capacity, they keep it and ask nothing. */
Test(oom, compare_and_sweep_take_the_recorded_capacity, .timeout = 300)
{
    fixture_t f = make_fixture("msd_basic", 32 * MIB);
    gm_store_t *s = import_fixture(&f, "msd_sweep");
    gm_trace_info_t info;
    first_trace(s, "msd_sweep", &info);
    gm_error_t err = {0};
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, gm_policy_find("caching"), &err), 0, "%s", err.msg);

    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cr_assert_eq(gm_replay_config_at_oom(&cfg, info.attrs), 1);
    cr_assert_eq(cfg.device.capacity, f.capacity);
    cr_assert_eq(cfg.recorded_ooms, 1);
    gm_compare_trace_t t;
    cr_assert_eq(gm_compare_trace(s, info.name, &p, 1, &cfg, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.runs[0].oom_asked, 1);
    cr_assert_eq(t.runs[0].oom_failed, 1);
    cr_assert_eq(t.runs[0].metrics.ooms, 0);
    cr_assert_leq(t.runs[0].metrics.peak_reserved, f.capacity);
    gm_compare_trace_release(&t);
    /* a capacity given wins: nothing changes, nothing is asked */
    gm_replay_config_t given;
    gm_replay_config_default(&given);
    given.device.capacity = 1024 * MIB;
    cr_assert_eq(gm_replay_config_at_oom(&given, info.attrs), 0);
    cr_assert_eq(given.device.capacity, 1024 * MIB);
    cr_assert_eq(given.recorded_ooms, 0);
    /* a trace without a recorded OOM: nothing changes */
    gm_replay_config_t plain;
    gm_replay_config_default(&plain);
    cr_assert_eq(gm_replay_config_at_oom(&plain, "{\"source\": \"synth\"}"), 0);
    cr_assert_eq(plain.device.capacity, 0);

    char db[512], results[512];
    snprintf(db, sizeof db, "%s", gm_store_path(s));
    snprintf(results, sizeof results, "%s", gt_tmpfile("oom_sweep.runs.db"));
    remove(results);
    gm_store_close(s);
    const char *inputs[1] = {db};
    gm_sweep_config_t sc = {.inputs = inputs, .ninputs = 1, .sets = &p, .nsets = 1,
                            .results = results, .jobs = 1};
    gm_device_config_default(&sc.device);
    gm_sweep_summary_t sum;
    cr_assert_eq(gm_sweep_run(&sc, &sum, &err), 0, "%s", err.msg);
    cr_assert_eq(sum.ran, 1);
    cr_assert_eq(sum.at_oom, 1);
    cr_assert_eq(sum.at_oom_capacity, f.capacity);
    cr_assert_str_eq(sum.at_oom_trace, info.name);
    /* stored with the device of that capacity, and found done the next time */
    gm_device_config_t dev = sc.device;
    dev.capacity = f.capacity;
    char *dj = gm_device_json(&dev), *pj = gm_params_json(&p);
    gm_store_t *out;
    cr_assert_eq(gm_store_open(results, GM_STORE_READONLY, &out, &err), 0, "%s", err.msg);
    int64_t id;
    cr_assert_eq(gm_store_find_run(out, info.digest, "caching", pj, dj, NULL, &id, &err), 0,
                 "no run stored with %s: %s", dj, err.msg);
    gm_store_close(out);
    cr_assert_eq(gm_sweep_run(&sc, &sum, &err), 0, "%s", err.msg);
    cr_assert_eq(sum.reused, 1);
    cr_assert_eq(sum.ran, 0);
    free(dj);
    free(pj);
    gm_params_release(&p);
    gm_trace_info_release(&info);
    free(f.data);
}
