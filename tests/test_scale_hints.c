/*
 * tests/test_scale_hints.c — `gmsim scale` on captures that differ in what
 * the alignment takes as hints (issue 30, items 1 and 2): annotations
 * (record_function ranges) present in one capture and not the other, stack
 * frames that differ in the script's own functions, and a warm-up pass's
 * graph alive before the recording began, its tensors listed in another
 * order (issue 30, item 2).
 *
 * The differing captures are made here from the real lmmedium ctx128
 * training snapshot of ../shared/data (skipped with a message where it is
 * absent) and from synthesized forward passes; each prediction is held
 * against the one the aligned captures give, allocation by allocation, and
 * against the real capture at the target.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "gmsim/align.h"
#include "gmsim/scale.h"
#include "gmsim/synth.h"
#include "gmsim/torch.h"
#include "support/scale_fixture.h"
#include "util.h"

#define TH_RANGE "Optimizer.zero_grad#AdamW.zero_grad"
#define TH_STEP "Optimizer.step#AdamW.step"

enum { TH_ADD_RANGE, TH_DROP_STEP, TH_SCRIPT_EDIT };

/*
 * Copy trace src into dst (events, frames, tags, layout) as another run
 * of the script would have recorded it:
 *   TH_ADD_RANGE   a record_function range (start and end marks) the
 *                  source lacks, before allocation `at`;
 *   TH_DROP_STEP   without the optimizer step's range;
 *   TH_SCRIPT_EDIT every stack whose outermost frame is the script's gets
 *                  one more frame of the script below it (the loop moved
 *                  into a function `main`).
 */
static void th_copy(gm_store_t *s, const char *src, const char *dst, int how, uint64_t at)
{
    gm_error_t err;
    gm_reader_t *r;
    gm_writer_t *w;
    gm_layout_t *lay = NULL;
    cr_assert_eq(gm_reader_open(s, src, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_begin(s, dst, GM_WRITE_REPLACE, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_store_layout(s, src, &lay, &err), 0, "%s", err.msg);
    if (lay != NULL)
        cr_assert_eq(gm_writer_layout(w, lay, &err), 0, "%s", err.msg);
    gm_layout_free(lay);
    uint32_t rtag;
    cr_assert_eq(gm_writer_tag(w, TH_RANGE, &rtag, &err), 0, "%s", err.msg);
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    for (;;) {
        const gm_event_t *ev;
        size_t n;
        cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            gm_event_t e = ev[i];
            if (e.op == GM_OP_MARK) {
                const char *tag = gm_reader_tag(r, e.tag);
                if (how == TH_DROP_STEP && strcmp(tag, TH_STEP) == 0)
                    continue;
                cr_assert_eq(gm_writer_tag(w, tag, &e.tag, &err), 0, "%s", err.msg);
            } else if (e.op == GM_OP_FREE || e.op == GM_OP_ALLOC) {
                uint32_t st;
                cr_assert_eq(gm_writer_stream(w, gm_reader_stream(r, e.stream), &st, &err), 0);
                e.stream = st;
            }
            if (e.op == GM_OP_ALLOC) {
                if (how == TH_ADD_RANGE && e.id == at) {
                    gm_event_t m = {.op = GM_OP_MARK, .tag = rtag, .ts_ns = e.ts_ns};
                    cr_assert_eq(gm_writer_add(w, &m, &err), 0, "%s", err.msg);
                    cr_assert_eq(gm_writer_add(w, &m, &err), 0, "%s", err.msg);
                }
                const char *fr = e.frames ? gm_reader_frames(r, e.frames) : NULL;
                e.frames = 0;
                if (fr != NULL) {
                    const char *nl = strrchr(fr, '\n');
                    if (how == TH_SCRIPT_EDIT && nl != NULL && strstr(nl, ".py:") != NULL) {
                        /* the outermost frame's file, another function of it */
                        const char *colon = strchr(nl + 1, ':');
                        cr_assert_not_null(colon);
                        size_t need = strlen(fr) + (size_t)(colon - nl) + 32;
                        if (need > cap) {
                            cap = need;
                            buf = realloc(buf, cap);
                            cr_assert_not_null(buf);
                        }
                        snprintf(buf, cap, "%.*s%.*s:300:main%s", (int)(nl - fr), fr,
                                 (int)(colon - nl), nl, nl);
                        fr = buf;
                    }
                    cr_assert_eq(gm_writer_frames(w, fr, &e.frames, &err), 0, "%s", err.msg);
                }
            }
            cr_assert_eq(gm_writer_add(w, &e, &err), 0, "%s", err.msg);
        }
    }
    free(buf);
    gm_reader_close(r);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
}

static gm_scale_plan_t *th_plan(gm_store_t *s, const char *a, uint64_t sa, const char *b,
                                uint64_t sb, int base, double min_matched)
{
    gm_scale_capture_t caps[] = {{s, a, NULL, sa, 4, NULL}, {s, b, NULL, sb, 4, NULL}};
    gm_scale_options_t o = {.base = base, .min_matched = min_matched};
    gm_scale_plan_t *p;
    gm_error_t err;
    cr_assert_eq(gm_scale_plan_create(caps, 2, &o, &p, &err), 0, "%s", err.msg);
    return p;
}

/* Every allocation of the base predicted at seq by p as by ref (the plan
 * of the aligned captures): law and size. */
static void th_same_predictions(const gm_scale_plan_t *p, const gm_scale_plan_t *ref, uint64_t n,
                                uint64_t seq)
{
    gm_error_t err;
    for (uint64_t i = 0; i < n; i++) {
        gm_scale_law_t lp, lr;
        uint64_t zp, zr;
        cr_assert_eq(gm_scale_predict(p, i, seq, 0, &lp, NULL, NULL, &zp, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_scale_predict(ref, i, seq, 0, &lr, NULL, NULL, &zr, &err), 0, "%s",
                     err.msg);
        cr_assert_eq(zp, zr, "allocation %llu at seq %llu: %llu (%s), aligned %llu (%s)",
                     (unsigned long long)i, (unsigned long long)seq, (unsigned long long)zp,
                     gm_scale_law_name(lp), (unsigned long long)zr, gm_scale_law_name(lr));
    }
}

static const gm_align_note_t *th_note(const gm_scale_pairing_t *pr, const char *name)
{
    for (size_t i = 0; i < pr->nnotes; i++)
        if (strcmp(pr->notes[i].name, name) == 0)
            return &pr->notes[i];
    return NULL;
}

/*
 * ctx128 with a zero_grad range added in the middle of its step and its
 * optimizer step's range removed, against ctx256: both differences
 * reported by name and capture, the allocations aligned as without them
 * (7190 pairs, 98.7%), every allocation of the ctx256 base predicted at
 * 128 and at 1024 as from the unedited pair, and the prediction at 128
 * the real ctx128 capture's peak requested bytes.
 */
Test(scale_hints, real_annotations_differ, .timeout = 300)
{
    const char *why;
    gm_store_t *s = sc_real("train", &why);
    if (s == NULL)
        cr_skip_test("%s", why);
    th_copy(s, "c128", "tmp128", TH_ADD_RANGE, 3000);
    th_copy(s, "tmp128", "ann128", TH_DROP_STEP, 0);
    gm_scale_plan_t *ref = th_plan(s, "c128", 128, "c256", 256, 1, 0);
    gm_scale_plan_t *p = th_plan(s, "ann128", 128, "c256", 256, 1, 0);
    const gm_scale_report_t *rr = gm_scale_plan_report(ref), *r = gm_scale_plan_report(p);
    const gm_scale_pairing_t *pr = &r->pairing[0];
    cr_assert_eq(rr->pairing[0].marks_only_base + rr->pairing[0].marks_only_other, 0);
    cr_assert_eq(pr->matched, rr->pairing[0].matched);
    cr_assert_gt(pr->share, 0.98, "%f", pr->share);
    cr_assert_eq(pr->site_keys, 0);
    /* the range added: in the other capture only; the step's: in the base only */
    const gm_align_note_t *added = th_note(pr, TH_RANGE), *dropped = th_note(pr, TH_STEP);
    cr_assert_not_null(added, "%zu notes", pr->nnotes);
    cr_assert_not_null(dropped, "%zu notes", pr->nnotes);
    cr_assert_eq(added->in_a, 0);
    cr_assert_eq(added->in_b, 2);
    cr_assert_eq(dropped->in_a, 2, "%u %u; %zu notes: %s %u %u", dropped->in_a, dropped->in_b,
                 pr->nnotes, pr->notes[0].name, pr->notes[0].in_a, pr->notes[0].in_b);
    cr_assert_eq(dropped->in_b, 0);
    cr_assert_eq(pr->marks_only_base, 2);
    cr_assert_eq(pr->marks_only_other, 2);
    th_same_predictions(p, ref, r->allocs, 128);
    th_same_predictions(p, ref, r->allocs, 1024);
    gm_error_t err;
    cr_assert_eq(gm_scale_write(p, 128, 0, s, "pred", GM_WRITE_REPLACE, &err), 0, "%s", err.msg);
    cr_assert_eq(sc_load(s, "pred"), sc_load(s, "c128"));
    gm_scale_plan_destroy(p);
    /* and the other way: the edited capture as the base */
    p = th_plan(s, "ann128", 128, "c256", 256, 0, 0);
    r = gm_scale_plan_report(p);
    pr = &r->pairing[1];
    added = th_note(pr, TH_RANGE);
    cr_assert_not_null(added);
    cr_assert_eq(added->in_a, 2);
    cr_assert_eq(added->in_b, 0);
    cr_assert_gt(pr->share, 0.98, "%f", pr->share);
    cr_assert_eq(gm_scale_write(p, 256, 0, s, "pred", GM_WRITE_REPLACE, &err), 0, "%s", err.msg);
    cr_assert_eq(sc_load(s, "pred"), sc_load(s, "c256"));
    gm_scale_plan_destroy(p);
    gm_scale_plan_destroy(ref);
    gm_store_close(s);
}

/*
 * ctx128 recorded by an edited script (the step moved into a function:
 * every stack from the script gains a frame) against ctx256: keyed by
 * whole stacks under 90% pair, so the allocations are keyed by the call
 * sites below the script's frames (site_keys), pair as the unedited
 * captures do, and every prediction is the unedited pair's.
 */
Test(scale_hints, real_script_edited, .timeout = 300)
{
    const char *why;
    gm_store_t *s = sc_real("train", &why);
    if (s == NULL)
        cr_skip_test("%s", why);
    th_copy(s, "c128", "ed128", TH_SCRIPT_EDIT, 0);
    gm_scale_plan_t *ref = th_plan(s, "c128", 128, "c256", 256, 1, 0);
    gm_scale_plan_t *p = th_plan(s, "ed128", 128, "c256", 256, 1, 0);
    const gm_scale_report_t *rr = gm_scale_plan_report(ref), *r = gm_scale_plan_report(p);
    cr_assert_eq(r->pairing[0].site_keys, 1);
    cr_assert_eq(rr->pairing[0].site_keys, 0);
    cr_assert_eq(r->pairing[0].matched, rr->pairing[0].matched);
    th_same_predictions(p, ref, r->allocs, 128);
    th_same_predictions(p, ref, r->allocs, 2048);
    /* whole stacks alone: refused, as before call sites were tried */
    gm_align_trace_t *ta, *tb;
    gm_error_t err;
    cr_assert_eq(gm_align_trace_load(s, "ed128", &ta, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_align_trace_load(s, "c256", &tb, &err), 0, "%s", err.msg);
    size_t keyed = 0;
    for (size_t i = 0; i < ta->nallocs; i++)
        for (size_t j = 0; j < tb->nallocs && ta->allocs[i].frames; j++)
            if (ta->allocs[i].key == tb->allocs[j].key) {
                keyed++;
                break;
            }
    cr_assert_lt(keyed * 10, ta->nallocs * 9, "%zu of %zu", keyed, ta->nallocs);
    gm_align_trace_free(ta);
    gm_align_trace_free(tb);
    gm_scale_plan_destroy(p);
    gm_scale_plan_destroy(ref);
    gm_store_close(s);
}

/* ---- a warm-up's graph alive before the recording --------------------------------- */

static void th_synth(gm_store_t *s, const char *name, uint64_t seq, uint32_t steps)
{
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    gm_error_t err;
    cr_assert_eq(gm_synth_apply_preset(&c, "gpt2", &err), 0, "%s", err.msg);
    c.layers = 2;
    c.mode = GM_SYNTH_MODE_FORWARD;
    c.seq = seq;
    c.batch = 2;
    c.steps = steps;
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, name, 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_synth_write(&c, w, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
}

/* The index of the k-th MARK `tag` of trace name (k from 1). */
static uint64_t th_mark(gm_store_t *s, const char *name, const char *tag, int k)
{
    gm_error_t err;
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, name, &r, &err), 0, "%s", err.msg);
    int64_t t = gm_reader_find_tag(r, tag);
    cr_assert_geq(t, 0);
    uint64_t index = 0, at = UINT64_MAX;
    for (;;) {
        const gm_event_t *ev;
        size_t n;
        cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++, index++)
            if (ev[i].op == GM_OP_MARK && ev[i].tag == (uint32_t)t && --k == 0)
                at = index;
    }
    gm_reader_close(r);
    cr_assert_neq(at, UINT64_MAX);
    return at;
}

/* Trace src as a recording begun at event `cut` holds it (sc_cut): the
 * allocations alive then pre-existing without frames (made before the
 * recording), the MARKs kept. */
static void th_cut(gm_store_t *s, const char *src, const char *dst, uint64_t cut)
{
    sc_cut(s, src, dst, cut, &(sc_cut_how_t){.keep_marks = 1});
}

/*
 * A forward pass with autograd on, recorded after a warm-up pass whose
 * graph (saved activations, logits) is still alive: the capture at seq
 * 256 begins at its second pass, the warm-up's tensors pre-existing and
 * without frames; the capture at 128 is one pass recorded from the start
 * (no warm-up).  The base's weights pair across the window's boundary;
 * the warm-up's graph, a third of this small model's allocations, pairs
 * with nothing (the share is taken at 60%: every pre-existing allocation
 * counts in the window);
 * the warm-up's tensors pair with nothing and take the law of the
 * recorded pass's tensors of their size: the prediction at 128 is the
 * real warmed-up capture at 128, allocation by allocation, and nothing is
 * left at its captured size.
 */
Test(scale_hints, warm_up_graph_preexisting)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(gt_tmpfile("warm.db"), GM_STORE_WRITE, &s, &err), 0, "%s",
                 err.msg);
    th_synth(s, "f256", 256, 2);
    th_synth(s, "f128", 128, 2);
    th_synth(s, "one128", 128, 1);
    th_cut(s, "f256", "warm256", th_mark(s, "f256", "step", 2));
    th_cut(s, "f128", "warm128", th_mark(s, "f128", "step", 2));
    gm_scale_plan_t *p = th_plan(s, "one128", 128, "warm256", 256, 1, 0.6);
    const gm_scale_report_t *r = gm_scale_plan_report(p);
    cr_assert_gt(r->preexisting, 0);
    /* the weights pair across the boundary, the warm-up's graph does not */
    cr_assert_gt(r->preexisting_paired, 0);
    cr_assert_lt(r->preexisting_paired, r->preexisting);
    cr_assert_eq(r->law_allocs[GM_SCALE_LAW_NONE], 0, "%llu unscaled: %s",
                 (unsigned long long)r->law_allocs[GM_SCALE_LAW_NONE], r->none_where);
    cr_assert_eq(r->law_allocs[GM_SCALE_LAW_SITE], r->preexisting - r->preexisting_paired);
    cr_assert_eq(gm_scale_write(p, 128, 0, s, "pred", GM_WRITE_REPLACE, &err), 0, "%s", err.msg);
    gm_align_trace_t *a, *b;
    cr_assert_eq(gm_align_trace_load(s, "pred", &a, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_align_trace_load(s, "warm128", &b, &err), 0, "%s", err.msg);
    cr_assert_eq(a->nallocs, b->nallocs);
    for (size_t i = 0; i < a->nallocs; i++)
        cr_assert_eq(a->allocs[i].size, b->allocs[i].size, "allocation %zu%s: %llu, real %llu",
                     i, b->allocs[i].preexisting ? " (pre-existing)" : "",
                     (unsigned long long)a->allocs[i].size,
                     (unsigned long long)b->allocs[i].size);
    gm_align_trace_free(a);
    gm_align_trace_free(b);
    cr_assert_eq(sc_load(s, "pred"), sc_load(s, "warm128"));
    gm_scale_plan_destroy(p);
    gm_store_close(s);
}

/* Every allocation of trace a has the size of trace b's of its id. */
static void th_same_sizes(gm_store_t *s, const char *a, const char *b)
{
    gm_error_t err;
    gm_align_trace_t *x, *y;
    cr_assert_eq(gm_align_trace_load(s, a, &x, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_align_trace_load(s, b, &y, &err), 0, "%s", err.msg);
    cr_assert_eq(x->nallocs, y->nallocs);
    for (size_t i = 0; i < x->nallocs; i++)
        cr_assert_eq(x->allocs[i].size, y->allocs[i].size, "allocation %zu%s: %llu, real %llu",
                     i, y->allocs[i].preexisting ? " (pre-existing)" : "",
                     (unsigned long long)x->allocs[i].size,
                     (unsigned long long)y->allocs[i].size);
    gm_align_trace_free(x);
    gm_align_trace_free(y);
    cr_assert_eq(sc_load(s, a), sc_load(s, b));
}

/* Two pre-existing allocations of plan p's base of one size whose
 * predictions at seq differ: 1 if there are. */
static int th_twins_differ(const gm_scale_plan_t *p, gm_store_t *s, const char *base,
                           uint64_t seq)
{
    gm_error_t err;
    gm_align_trace_t *t;
    cr_assert_eq(gm_align_trace_load(s, base, &t, &err), 0, "%s", err.msg);
    int found = 0;
    for (size_t i = 0; i < t->nallocs && !found; i++)
        for (size_t j = i + 1; j < t->nallocs && !found; j++) {
            if (!t->allocs[i].preexisting || !t->allocs[j].preexisting ||
                t->allocs[i].size != t->allocs[j].size)
                continue;
            uint64_t zi, zj;
            cr_assert_eq(gm_scale_predict(p, i, seq, 0, NULL, NULL, NULL, &zi, &err), 0);
            cr_assert_eq(gm_scale_predict(p, j, seq, 0, NULL, NULL, NULL, &zj, &err), 0);
            found = zi != zj;
        }
    gm_align_trace_free(t);
    return found;
}

/*
 * Twins of one size that take different laws (a warm-up's attention
 * scores, s², and activations, s: both 6 MiB at 256), listed in another
 * order (a snapshot lists pre-existing allocations in address order):
 * each still takes its own law.  First the warm-up's tensors of the base
 * listed in reverse take their twins' laws from the recorded pass (the
 * prediction at 128 is the real capture at 128 listed so); then the
 * captures at 128 (in allocation order) and 256 (in reverse) both hold
 * the warm-up's graph and pair it with each other by the order the
 * program frees it in, not by the order listed: the prediction at 512 is
 * the real capture at 512 allocation by allocation.
 */
Test(scale_hints, twins_listed_in_another_order)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(gt_tmpfile("twins.db"), GM_STORE_WRITE, &s, &err), 0, "%s",
                 err.msg);
    static const uint64_t seqs[] = {128, 256, 512};
    for (int k = 0; k < 3; k++) {
        char f[16], w[16], r[16];
        snprintf(f, sizeof f, "f%llu", (unsigned long long)seqs[k]);
        snprintf(w, sizeof w, "warm%llu", (unsigned long long)seqs[k]);
        snprintf(r, sizeof r, "rev%llu", (unsigned long long)seqs[k]);
        th_synth(s, f, seqs[k], 2);
        uint64_t cut = th_mark(s, f, "step", 2);
        sc_cut(s, f, w, cut, &(sc_cut_how_t){.keep_marks = 1});
        sc_cut(s, f, r, cut, &(sc_cut_how_t){.keep_marks = 1, .reversed = 1});
    }
    th_synth(s, "one128", 128, 1);

    gm_scale_plan_t *p = th_plan(s, "one128", 128, "rev256", 256, 1, 0.6);
    cr_assert(th_twins_differ(p, s, "rev256", 128));
    const gm_scale_report_t *r = gm_scale_plan_report(p);
    cr_assert_eq(r->law_allocs[GM_SCALE_LAW_NONE], 0, "%llu unscaled: %s",
                 (unsigned long long)r->law_allocs[GM_SCALE_LAW_NONE], r->none_where);
    cr_assert_eq(gm_scale_write(p, 128, 0, s, "pred128", GM_WRITE_REPLACE, &err), 0, "%s",
                 err.msg);
    th_same_sizes(s, "pred128", "rev128");
    gm_scale_plan_destroy(p);

    p = th_plan(s, "warm128", 128, "rev256", 256, 1, 0);
    r = gm_scale_plan_report(p);
    cr_assert_eq(r->preexisting_paired, r->preexisting);
    cr_assert(th_twins_differ(p, s, "rev256", 512));
    cr_assert_eq(gm_scale_write(p, 512, 0, s, "pred512", GM_WRITE_REPLACE, &err), 0, "%s",
                 err.msg);
    th_same_sizes(s, "pred512", "rev512");
    gm_scale_plan_destroy(p);
    gm_store_close(s);
}

/* ---- a warm-up's graph whose number of tensors follows the size --------------------- */

/* Trace "cnt<seq>": a synthesized forward pass at seq recorded after a
 * warm-up whose graph is alive, with the warm-up's chunks: 2 + seq/64 of
 * 1 MiB and seq/64 of an activation's size (2 · seq · 768 · 4 B). */
static void th_chunked(gm_store_t *s, uint64_t seq)
{
    char f[32], w[32];
    snprintf(f, sizeof f, "full%llu", (unsigned long long)seq);
    snprintf(w, sizeof w, "cnt%llu", (unsigned long long)seq);
    th_synth(s, f, seq, 2);
    sc_chunks_t ch = {{2 + seq / 64, seq / 64}, {UINT64_C(1) << 20, 2 * seq * 768 * 4}};
    sc_cut(s, f, w, th_mark(s, f, "step", 2), &(sc_cut_how_t){.keep_marks = 1, .chunks = &ch});
}

static gm_scale_plan_t *th_plan_n(gm_store_t *s, const uint64_t *seqs, size_t n)
{
    gm_scale_capture_t caps[4];
    char names[4][32];
    for (size_t k = 0; k < n; k++) {
        snprintf(names[k], sizeof names[k], "cnt%llu", (unsigned long long)seqs[k]);
        caps[k] = (gm_scale_capture_t){s, names[k], NULL, seqs[k], 4, NULL};
    }
    gm_scale_options_t o = {.base = -1};
    gm_scale_plan_t *p;
    gm_error_t err;
    cr_assert_eq(gm_scale_plan_create(caps, n, &o, &p, &err), 0, "%s", err.msg);
    return p;
}

/*
 * A warm-up's graph holding chunks of the sequence (a loop over chunks):
 * 2 + s/64 of 1 MiB and s/64 of an activation's size, pre-existing in
 * every capture.  Their groups' counts differ among the captures: each
 * gets a count law (2 + s/64 is no power law: the line through two
 * captures; with the activations of its size, the other group's count is
 * one too), and the prediction holds the target's own count, each sized
 * by its law: from 128 and 256, the prediction at 512 is the real capture
 * at 512 allocation by allocation (two-point laws, unverified); from 128,
 * 256 and 512, the one at 1024 is the real one at 1024, the laws verified
 * on the third capture; the band counts the allocations written.
 */
Test(scale_hints, warm_up_count_follows_the_size)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(gt_tmpfile("count.db"), GM_STORE_WRITE, &s, &err), 0, "%s",
                 err.msg);
    static const uint64_t seqs[] = {128, 256, 512, 1024};
    for (int k = 0; k < 4; k++)
        th_chunked(s, seqs[k]);

    gm_scale_plan_t *p = th_plan_n(s, seqs, 2);
    const gm_scale_report_t *r = gm_scale_plan_report(p);
    cr_assert_eq(r->count_groups, 2, "%llu groups (%llu allocations, %llu unsure); "
                 "pre-existing %llu, paired %llu",
                 (unsigned long long)r->count_groups, (unsigned long long)r->count_allocs,
                 (unsigned long long)r->count_unsure, (unsigned long long)r->preexisting,
                 (unsigned long long)r->preexisting_paired);
    cr_assert_eq(r->count_verified, 0);
    cr_assert_eq(r->count_unsure, 0);
    cr_assert_eq(r->law_allocs[GM_SCALE_LAW_NONE], 0, "%s", r->none_where);
    /* at 256: 6 + 4 chunks, the second group with the activations of its size */
    cr_assert_geq(r->count_allocs, 10);
    uint64_t act = r->count_allocs - 10;
    gm_scale_band_t band;
    cr_assert_eq(gm_scale_band(p, 512, 0, &band, &err), 0, "%s", err.msg);
    cr_assert_eq(band.count_allocs, 10 + 8 + act);
    cr_assert_eq(gm_scale_write(p, 512, 0, s, "pred512", GM_WRITE_REPLACE, &err), 0, "%s",
                 err.msg);
    th_same_sizes(s, "pred512", "cnt512");
    /* and fewer at 128: the base's own capture at 128 */
    cr_assert_eq(gm_scale_write(p, 128, 0, s, "pred128", GM_WRITE_REPLACE, &err), 0, "%s",
                 err.msg);
    th_same_sizes(s, "pred128", "cnt128");
    gm_scale_plan_destroy(p);

    p = th_plan_n(s, seqs, 3);
    r = gm_scale_plan_report(p);
    cr_assert_eq(r->count_groups, 2, "%llu groups (%llu allocations, %llu unsure); "
                 "pre-existing %llu, paired %llu",
                 (unsigned long long)r->count_groups, (unsigned long long)r->count_allocs,
                 (unsigned long long)r->count_unsure, (unsigned long long)r->preexisting,
                 (unsigned long long)r->preexisting_paired);
    cr_assert_eq(r->count_verified, r->count_allocs);
    cr_assert_eq(gm_scale_band(p, 1024, 0, &band, &err), 0, "%s", err.msg);
    cr_assert_eq(band.count_allocs, 18 + 16 + act);
    cr_assert_eq(gm_scale_write(p, 1024, 0, s, "pred1024", GM_WRITE_REPLACE, &err), 0, "%s",
                 err.msg);
    th_same_sizes(s, "pred1024", "cnt1024");
    gm_scale_plan_destroy(p);
    gm_store_close(s);
}
