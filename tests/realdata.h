/*
 * tests/realdata.h — replay the real PyTorch snapshots of ../shared/data
 * through one policy with its invariants checked after every event (check
 * level 2, as GM_DEBUG=2 does), for the policy test files.  Included by a
 * test file (static functions); skips the test when the data is absent.
 *
 * Every snapshot (under the sanitizers the small msd_* ones only, to keep CI
 * short) is imported once per process into a temporary store; each of its
 * traces is replayed on an unlimited device.  Asserted per trace: the
 * replay succeeds (no invariant violation, no refused free), no OOM, peak
 * reserved ≥ peak allocated ≥ the load (peak requested), and the device
 * holds nothing after empty_cache when every allocation was freed.
 */
#ifndef GM_TESTS_REALDATA_H
#define GM_TESTS_REALDATA_H

#include <criterion/criterion.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int rd_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The store with every snapshot imported (NULL with *why when the data is
 * absent). */
static gm_store_t *rd_store(const char **why)
{
    static gm_store_t *s;
    if (s != NULL)
        return s;
    const char *dir = gt_data_path("snapshots", why);
    if (dir == NULL)
        return NULL;
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s", dir);
    DIR *d = opendir(dirpath);
    if (d == NULL) {
        *why = "cannot open the snapshots folder";
        return NULL;
    }
    char *names[64];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 64;) {
        size_t len = strlen(e->d_name);
        if (len <= 7 || strcmp(e->d_name + len - 7, ".pickle") != 0)
            continue;
#if defined(__SANITIZE_ADDRESS__)
        if (strncmp(e->d_name, "msd_", 4) != 0) /* under the sanitizers: the small ones */
            continue;
#endif
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n == 0) {
        *why = "no snapshot in the data folder";
        return NULL;
    }
    qsort(names, n, sizeof names[0], rd_name_cmp);
    gm_error_t err = {0};
    cr_assert_eq(gm_store_open(gt_tmpfile("realdata.db"), GM_STORE_WRITE, &s, &err), 0, "%s",
                 err.msg);
    for (size_t i = 0; i < n; i++) {
        char path[8192], base[256];
        snprintf(path, sizeof path, "%s/%s", dirpath, names[i]);
        snprintf(base, sizeof base, "%.*s", (int)(strlen(names[i]) - 7), names[i]);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "cannot open %s", path);
        gm_import_target_t *t;
        cr_assert_eq(gm_import_target_create(s, base, 0, &t, &err), 0, "%s", err.msg);
        int rc = gm_torch_import(f, path, t, &err);
        fclose(f);
        if (rc != 0) {
            gm_import_abort(t);
            cr_assert_fail("import %s: %s", path, err.msg);
        }
        cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
        free(names[i]);
    }
    return s;
}

/* What a caller checks of one snapshot's replay (the one policy at index 0). */
typedef void (*gt_snapshot_fn)(void *ctx, gm_replay_t *r, const gm_trace_info_t *info);

/* Replay every snapshot trace through `policy` with settings kv ("key=value",
 * NULL-terminated, may be NULL), the policy's check run as check_level says
 * (gm_replay_config_t), and hand each finished replay to fn. */
static void gt_each_snapshot(const char *policy, const char *const *kv, int check_level,
                             gt_snapshot_fn fn, void *ctx)
{
    const char *why = NULL;
    gm_store_t *s = rd_store(&why);
    if (s == NULL)
        cr_skip_test("real snapshots not available: %s", why);
    const gm_policy_ops_t *ops = gm_policy_find(policy);
    cr_assert_not_null(ops);
    gm_error_t err = {0};
    gm_trace_info_t *list;
    size_t n;
    cr_assert_eq(gm_store_list(s, &list, &n, &err), 0, "%s", err.msg);
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
        gm_replay_config_t cfg;
        gm_replay_config_default(&cfg);
        cfg.check_level = check_level;
        cfg.timeline_points = 0;
        gm_replay_t *r;
        gm_params_t params;
        cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_params_init(&params, ops, &err), 0, "%s", err.msg);
        for (const char *const *p = kv; p != NULL && *p != NULL; p++) {
            char key[64];
            const char *eq = strchr(*p, '=');
            cr_assert_not_null(eq);
            snprintf(key, sizeof key, "%.*s", (int)(eq - *p), *p);
            cr_assert_eq(gm_params_set(&params, key, eq + 1, &err), 0, "%s", err.msg);
        }
        cr_assert_eq(gm_replay_add(r, &params, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_replay_trace(r, s, list[i].name, &err), 0, "%s on %s: %s", policy,
                     list[i].name, err.msg);
        fn(ctx, r, &list[i]);
        gm_params_release(&params);
        gm_replay_destroy(r);
    }
    gm_trace_info_free_list(list, n);
}

/* The laws every policy keeps on a real snapshot. */
static void gt_snapshot_laws(void *ctx, gm_replay_t *r, const gm_trace_info_t *info)
{
    (void)ctx;
    gm_policy_t *p = gm_replay_policy(r, 0);
    const char *policy = p->ops->name;
    const gm_metrics_t *m = gm_replay_metrics(r, 0);
    cr_expect_eq(m->ooms, 0, "%s on %s: %" PRIu64 " OOMs on an unlimited device", policy,
                 info->name, m->ooms);
    cr_expect_geq(m->peak_reserved, m->peak_allocated, "%s on %s", policy, info->name);
    cr_expect_geq(m->peak_allocated, info->load, "%s on %s: peak allocated below the load",
                  policy, info->name);
    cr_expect_geq(m->peak_requested, info->load, "%s on %s", policy, info->name);
    char cwhy[256] = "";
    cr_expect_eq(gm_policy_check(p, cwhy, sizeof cwhy), 0, "%s on %s: %s", policy, info->name,
                 cwhy);
    if (info->live_at_end == 0 && p->ops->empty_cache != NULL) {
        gm_policy_empty_cache(p);
        cr_expect_eq(p->dev->reserved, 0, "%s on %s: %" PRIu64 " bytes held after everything "
                     "was freed and the cache emptied", policy, info->name, p->dev->reserved);
    }
}

/* Replay every snapshot trace through `policy` with settings kv, checking
 * the policy after every event and the laws of gt_snapshot_laws (inline:
 * a file that needs only gt_each_snapshot need not use it). */
static inline void gt_replay_snapshots(const char *policy, const char *const *kv)
{
    gt_each_snapshot(policy, kv, 2, gt_snapshot_laws, NULL);
}

#endif
