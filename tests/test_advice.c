/*
 * tests/test_advice.c — gmsim/advice.h: warm and cold starts, the PyTorch
 * setting to use, the blockers of an OOM.  Every figure an answer gives is
 * checked against an independent replay of the configuration it names, and
 * the OOM's segments by structure (blocks tile each segment, segments add
 * up to the reserved bytes, no free block holds the request).  Real
 * snapshots from ../shared/data where present (skipped otherwise), and a
 * synthesized GPT-2 medium step.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A store holding snapshot `file` (NULL: the test is skipped). */
static gm_store_t *adv_snapshot(const char *file, char *name, size_t len)
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
    cr_assert_not_null(data);
    static unsigned seq;
    char db[160];
    snprintf(db, sizeof db, "advice_%u.db", seq++);
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(gt_tmpfile(db), GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_import_target_t *t;
    cr_assert_eq(gm_import_target_create(s, "t", 0, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_torch_import_buffer(data, n, file, t, &err), 0, "%s", err.msg);
    snprintf(name, len, "%s", gm_import_name(t, 0));
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    free(data);
    return s;
}

/* A store with a synthesized GPT-2 medium training step (batch 8, seq 1024)
 * named "g", and a random workload named "r". */
static gm_store_t *adv_synth(void)
{
    static unsigned seq;
    char db[64];
    snprintf(db, sizeof db, "advice_synth_%u.db", seq++);
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(gt_tmpfile(db), GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    cr_assert_eq(gm_synth_apply_preset(&c, "gpt2-medium", &err), 0, "%s", err.msg);
    c.batch = 8;
    c.seq = 1024;
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, "g", 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_synth_write(&c, w, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    gm_workload_config_t wc;
    gm_workload_config_default(&wc);
    wc.events = 2000;
    cr_assert_eq(gm_writer_begin(s, "r", 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_workload_write(&wc, w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    return s;
}

/* Policy `policy` with key=value pairs (NULL ends). */
static void adv_params(gm_params_t *p, const char *policy, const char *const *kv)
{
    gm_error_t err = {0};
    cr_assert_eq(gm_params_init(p, gm_policy_find(policy), &err), 0, "%s", err.msg);
    for (size_t k = 0; kv && kv[k]; k += 2)
        cr_assert_eq(gm_params_set(p, kv[k], kv[k + 1], &err), 0, "%s", err.msg);
}

/* One independent replay of trace `name` through policy with kv on a
 * device of capacity cap. */
static gm_metrics_t adv_replay(gm_store_t *s, const char *name, const char *policy,
                               const char *const *kv, uint64_t cap)
{
    gm_params_t p;
    adv_params(&p, policy, kv);
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.device.capacity = cap;
    cfg.timeline_points = 0;
    gm_replay_t *r;
    gm_error_t err = {0};
    cr_assert_eq(gm_replay_create(&cfg, &r, &err), 0);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_trace(r, s, name, &err), 0, "%s", err.msg);
    gm_metrics_t m = *gm_replay_metrics(r, 0);
    gm_replay_destroy(r);
    gm_params_release(&p);
    return m;
}

/* ---- warm and cold ------------------------------------------------------------------------ */

Test(advice, start_compare_names_a_setting_the_layout_leaves_nothing_to_act_on)
{
    char name[64];
    gm_store_t *s = adv_snapshot("lmmedium_ctx128_train_fp32.pickle", name, sizeof name);
    const char *kv[] = {"conf", "expandable_segments:True", NULL};
    gm_params_t p;
    adv_params(&p, "caching", kv);
    gm_start_compare_t c;
    gm_error_t err = {0};
    cr_assert_eq(gm_start_compare(s, name, &p, NULL, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(c.verdict, GM_START_INERT_WARM);
    cr_assert_eq(c.warm.peak_reserved, c.warm_default.peak_reserved);
    cr_assert_lt(c.cold.peak_reserved, c.cold_default.peak_reserved);
    /* the layout is the whole peak: no segment is made warm */
    cr_assert_eq(c.warm_default.device_mallocs, 0);
    cr_assert_eq(c.warm_default.peak_reserved, c.layout_reserved);
    cr_assert_eq(c.recorded, c.layout_reserved, "recorded %llu", (unsigned long long)c.recorded);
    cr_assert_gt(c.layout_segments, 0);
    /* each row is an independent replay of what it names */
    const char *cold[] = {"start", "empty", "conf", "expandable_segments:True", NULL};
    const char *cold_default[] = {"start", "empty", NULL};
    cr_assert_eq(adv_replay(s, name, "caching", cold, 0).peak_reserved, c.cold.peak_reserved);
    cr_assert_eq(adv_replay(s, name, "caching", cold_default, 0).peak_reserved,
                 c.cold_default.peak_reserved);
    cr_assert_eq(adv_replay(s, name, "caching", kv, 0).peak_reserved, c.warm.peak_reserved);
    gm_params_release(&p);
    gm_store_close(s);
}

Test(advice, start_compare_where_the_setting_acts_warm)
{
    char name[64];
    gm_store_t *s = adv_snapshot("lm2.7b_ctx128_train_fp32.pickle", name, sizeof name);
    const char *kv[] = {"conf", "expandable_segments:True", NULL};
    gm_params_t p;
    adv_params(&p, "caching", kv);
    gm_start_compare_t c;
    gm_error_t err = {0};
    cr_assert_eq(gm_start_compare(s, name, &p, NULL, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(c.verdict, GM_START_ACTS);
    cr_assert_lt(c.warm.peak_reserved, c.warm_default.peak_reserved);
    /* the recorded settings from the recorded layout reproduce the recording */
    cr_assert_eq(c.warm_default.peak_reserved, c.recorded);
    gm_params_release(&p);
    gm_store_close(s);
}

Test(advice, start_compare_refusals)
{
    gm_store_t *s = adv_synth();
    gm_params_t p;
    adv_params(&p, "caching", NULL);
    gm_start_compare_t c;
    gm_error_t err = {0};
    cr_assert_eq(gm_start_compare(s, "g", &p, NULL, &c, &err), GM_ENOTFOUND); /* no layout */
    gm_params_release(&p);
    adv_params(&p, "bfc", NULL);
    cr_assert_eq(gm_start_compare(s, "g", &p, NULL, &c, &err), GM_EINVAL);
    cr_assert(!gm_policy_has_start(p.ops));
    cr_assert(gm_policy_has_start(gm_policy_find("caching")));
    gm_params_release(&p);
    gm_store_close(s);
}

/* ---- PyTorch settings --------------------------------------------------------------------- */

/* Every option's figure is that of an independent replay of the setting. */
static void adv_check_options(gm_store_t *s, const char *name, const gm_torch_advice_t *a,
                              uint64_t cap)
{
    const char *base[] = {"start", "empty", NULL};
    cr_assert_eq(adv_replay(s, name, "caching", base, cap).peak_reserved, a->baseline);
    for (size_t i = 0; i < a->noptions; i++) {
        const gm_torch_option_t *o = &a->options[i];
        gm_metrics_t m;
        if (strcmp(o->label, "backend:cudaMallocAsync") == 0) {
            const char *kv[] = {"release_threshold", "none", NULL};
            m = adv_replay(s, name, "async", kv, cap);
        } else if (strstr(o->setting, "memory_fraction")) {
            const char *kv[] = {"start", "empty", "conf", o->label, "memory_fraction", "1", NULL};
            m = adv_replay(s, name, "caching", kv, cap);
        } else {
            const char *kv[] = {"start", "empty", "conf", o->label, NULL};
            m = adv_replay(s, name, "caching", kv, cap);
        }
        cr_assert_eq(m.peak_reserved, o->peak_reserved, "%s", o->setting);
        cr_assert_eq(m.ooms, o->ooms, "%s", o->setting);
        if (a->best >= 0) /* the best reserves least of those without OOMs */
            cr_assert(o->ooms != 0 || o->peak_reserved >= a->options[a->best].peak_reserved,
                      "%s", o->setting);
    }
}

Test(advice, torch_advice_on_a_recorded_run)
{
    char name[64];
    gm_store_t *s = adv_snapshot("lm2.7b_ctx128_train_fp32.pickle", name, sizeof name);
    gm_torch_advice_t a;
    gm_error_t err = {0};
    cr_assert_eq(gm_torch_advise(s, name, NULL, &a, &err), 0, "%s", err.msg);
    cr_assert_eq(a.torch, 1);
    cr_assert_eq(a.synthesized, 0);
    cr_assert_eq(a.recorded, 61111009280ull);
    cr_assert_geq(a.best, 0);
    cr_assert_lt(a.options[a.best].peak_reserved, a.baseline);
    cr_assert_str_eq(a.options[a.best].setting, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
    adv_check_options(s, name, &a, 0);
    char text[768];
    gm_torch_advice_text(&a, text, sizeof text);
    cr_assert(strstr(text, "expandable_segments:True saves ") == strstr(text, "expandable"));
    cr_assert(strstr(text, "against the recorded run's settings") != NULL, "%s", text);
    gm_store_close(s);
}

Test(advice, torch_advice_on_a_synthesized_step_and_not_on_others)
{
    gm_store_t *s = adv_synth();
    gm_torch_advice_t a;
    gm_error_t err = {0};
    cr_assert_eq(gm_torch_advise(s, "g", NULL, &a, &err), 0, "%s", err.msg);
    cr_assert_eq(a.torch, 1);
    cr_assert_eq(a.synthesized, 1);
    cr_assert_eq(a.recorded, 0);
    adv_check_options(s, "g", &a, 0);
    char text[768];
    gm_torch_advice_text(&a, text, sizeof text);
    cr_assert(strstr(text, "PyTorch's defaults") != NULL, "%s", text);
    /* garbage collection is tried only on a finite device */
    for (size_t i = 0; i < a.noptions; i++)
        cr_assert(strstr(a.options[i].label, "garbage") == NULL);
    cr_assert_eq(gm_torch_advise(s, "r", NULL, &a, &err), 0, "%s", err.msg);
    cr_assert_eq(a.torch, 0);
    gm_torch_advice_text(&a, text, sizeof text);
    cr_assert_str_eq(text, "");
    gm_store_close(s);
}

/* ---- OOMs --------------------------------------------------------------------------------- */

/* The structure of a walked OOM report: blocks tile their segments, the
 * segments add up to the reserved bytes, free counts match, no free block
 * is as large as the request, live blocks name allocations that hold at
 * least what they asked for. */
static void adv_check_oom(const gm_oom_report_t *o, int device_full)
{
    cr_assert(o->walked);
    uint64_t seg_total = 0, allocated = 0;
    for (size_t i = 0; i < o->nsegments; i++) {
        const gm_oom_segment_t *sg = &o->segments[i];
        uint64_t at = sg->addr, free_bytes = 0, largest = 0;
        for (size_t k = 0; k < sg->n; k++) {
            const gm_oom_block_t *b = &o->blocks[sg->first + k];
            cr_assert_eq(b->addr, at, "segment %zu block %zu", i, k);
            at += b->size;
            if (b->allocated) {
                allocated += b->size;
                if (b->id != UINT64_MAX)
                    cr_assert_geq(b->size, b->requested);
            } else {
                free_bytes += b->size;
                largest = b->size > largest ? b->size : largest;
                cr_assert_lt(b->size, o->request, "a free block that holds the request");
            }
        }
        cr_assert_eq(at, sg->addr + sg->size);
        cr_assert_eq(free_bytes, sg->free_bytes);
        cr_assert_eq(largest, sg->largest_free);
        if (i > 0 && o->segments[i - 1].serves == sg->serves)
            cr_assert_geq(o->segments[i - 1].free_bytes, sg->free_bytes);
        if (i > 0)
            cr_assert_geq(o->segments[i - 1].serves, sg->serves);
        seg_total += sg->size;
    }
    cr_assert_geq(allocated, o->allocated); /* equal but for unclaimed recorded blocks */
    cr_assert_leq(seg_total, o->reserved);
    cr_assert_leq(o->reserved, o->capacity);
    /* caching asks the device for the request itself (rounded up): it did
     * not fit what was left; bfc asks for a whole doubled region */
    if (device_full)
        cr_assert_gt(o->request + o->reserved, o->capacity, "the request fitted the device");
}

Test(advice, oom_explained_for_caching_and_the_setting_that_fits)
{
    gm_store_t *s = adv_synth();
    uint64_t cap = (uint64_t)(49.8 * 1073741824.0);
    gm_params_t p;
    adv_params(&p, "caching", NULL);
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.device.capacity = cap;
    gm_oom_report_t o;
    gm_error_t err = {0};
    cr_assert_eq(gm_oom_explain(s, "g", &p, &cfg, &o, &err), 0, "%s", err.msg);
    gm_metrics_t m = adv_replay(s, "g", "caching", NULL, cap);
    cr_assert_gt(m.ooms, 0);
    cr_assert_eq(o.event, m.first_oom_event);
    cr_assert_str_eq(o.policy, "caching");
    adv_check_oom(&o, 1);
    uint64_t walked = 0;
    for (size_t i = 0; i < o.nblocks; i++)
        walked += o.blocks[i].allocated ? o.blocks[i].size : 0;
    cr_assert_eq(walked, o.allocated); /* cold: every live block is an allocation's */
    cr_assert_gt(o.nsegments, 0);
    cr_assert_gt(o.segments[0].free_bytes, 0);
    cr_assert_geq(o.best_fit, 0);
    /* the setting named fits, replayed on its own on the same device */
    const gm_torch_option_t *f = &o.fits[o.best_fit];
    const char *kv[] = {"start", "empty", "conf", f->label, NULL};
    gm_metrics_t fm = adv_replay(s, "g", "caching", kv, cap);
    cr_assert_eq(fm.ooms, 0, "%s", f->setting);
    cr_assert_eq(fm.peak_reserved, f->peak_reserved);
    gm_oom_report_release(&o);
    gm_params_release(&p);

    /* bfc walks its regions; its candidates are the other policies */
    adv_params(&p, "bfc", NULL);
    cr_assert_eq(gm_oom_explain(s, "g", &p, &cfg, &o, &err), 0, "%s", err.msg);
    cr_assert_geq(o.event, 0);
    adv_check_oom(&o, 0);
    for (size_t i = 0; i < o.nfits_tried; i++)
        cr_assert_str_neq(o.fits[i].label, "bfc");
    gm_oom_report_release(&o);
    gm_params_release(&p);

    /* a run with no OOM has nothing to explain */
    cfg.device.capacity = 0;
    adv_params(&p, "caching", NULL);
    cr_assert_eq(gm_oom_explain(s, "g", &p, &cfg, &o, &err), 0, "%s", err.msg);
    cr_assert_eq(o.event, -1);
    cr_assert_eq(o.nsegments, 0);
    gm_oom_report_release(&o);
    gm_params_release(&p);
    gm_store_close(s);
}

Test(advice, oom_explained_on_a_real_snapshot_with_frames)
{
    char name[64];
    gm_store_t *s = adv_snapshot("lm2.7b_ctx128_train_fp32.pickle", name, sizeof name);
    gm_params_t p;
    adv_params(&p, "caching", NULL);
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.device.capacity = (uint64_t)(51.3 * 1073741824.0);
    gm_oom_report_t o;
    gm_error_t err = {0};
    cr_assert_eq(gm_oom_explain(s, name, &p, &cfg, &o, &err), 0, "%s", err.msg);
    cr_assert_geq(o.event, 0);
    adv_check_oom(&o, 1);
    size_t named = 0, framed = 0;
    for (size_t i = 0; i < o.nblocks; i++)
        if (o.blocks[i].allocated && o.blocks[i].id != UINT64_MAX) {
            named++;
            framed += o.blocks[i].frames != NULL;
            cr_assert_lt(o.blocks[i].event, (uint64_t)o.event + 1);
        }
    cr_assert_gt(named, 0);
    cr_assert_gt(framed, 0, "the snapshot has stack frames");
    gm_oom_report_release(&o);
    gm_params_release(&p);
    gm_store_close(s);
}

/* The frame a blocker or a site is named by (gm_site_frame): the user's
 * line, not PyTorch's, a package's or the standard library's; in a C++
 * stack (autograd's backward thread) the autograd node, without its
 * arguments. */
Test(advice, site_frame_is_the_users_code)
{
    char f[128];
    const char *py = "??:0:at::detail::empty_strided_cuda(c10::ArrayRef<long>)\n"
                     "torch/functional.py:373:einsum\n"
                     "/usr/lib/python3.12/contextlib.py:81:inner\n"
                     "/home/me/model.py:427:forward\n"
                     "torch/nn/modules/module.py:1750:_call_impl\n";
    gm_site_frame(py, f, sizeof f);
    cr_assert_str_eq(f, "/home/me/model.py:427:forward");
    const char *script = "torch/functional.py:373:einsum\ntrain.py:12:<module>\n";
    gm_site_frame(script, f, sizeof f);
    cr_assert_str_eq(f, "train.py:12:<module>");
    const char *lib = "??:0:at::native::empty(long)\ntorch/functional.py:373:einsum\n";
    gm_site_frame(lib, f, sizeof f); /* no user frame: the innermost Python one */
    cr_assert_str_eq(f, "torch/functional.py:373:einsum");
    const char *bwd = "??:0:at::detail::empty_cuda(c10::ArrayRef<long>)\n"
                      "??:0:torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor>&&)\n";
    gm_site_frame(bwd, f, sizeof f);
    cr_assert_str_eq(f, "??:0:torch::autograd::generated::BmmBackward0::apply");
    gm_site_frame("??:0:at::cuda::getNewWorkspace()", f, sizeof f);
    cr_assert_str_eq(f, "??:0:at::cuda::getNewWorkspace");
    gm_site_frame(NULL, f, sizeof f);
    cr_assert_str_eq(f, "");
    cr_assert_eq(gm_site_frame(py, f, 8), 7, "cut to the buffer");
    cr_assert_str_eq(f, "/home/m");
}
