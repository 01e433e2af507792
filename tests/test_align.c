/*
 * tests/test_align.c — synth/align.c: allocation-by-allocation alignment
 * of two captures of one program.
 *
 * Hand-built pairs check the window handling (ring buffers starting at
 * different points, pre-existing allocations in different orders, sizes
 * scaled by powers of the size ratio, a + b·s sizes paired by key), the
 * synthesizer checks that identical programs at s and 2s pair every
 * allocation with its own ordinal, and the real lmmedium ctx128/ctx256
 * snapshots check that every allocation of the shorter window pairs with
 * one of the same stack frames whose size is the same power law of the
 * context ratio as its neighbours'.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "gmsim/align.h"
#include "util.h"

/* A writer-side trace: ALLOC of size with frames text f (NULL none), FREE
 * of id, MARK of tag. */
typedef struct ta_ev {
    char op; /* 'a' alloc, 'p' pre-existing alloc, 'f' free, 'm' mark */
    uint64_t v; /* size, freed id */
    const char *s; /* frames text or tag */
} ta_ev_t;

static void ta_write(gm_store_t *s, const char *name, const ta_ev_t *ev, size_t n)
{
    gm_error_t err;
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, name, 0, &w, &err), 0, "%s", err.msg);
    uint64_t id = 0;
    for (size_t i = 0; i < n; i++) {
        gm_event_t e = {0};
        e.ts_ns = i;
        if (ev[i].op == 'a' || ev[i].op == 'p') {
            e.op = GM_OP_ALLOC;
            e.id = id++;
            e.size = ev[i].v;
            e.flags = ev[i].op == 'p' ? GM_EVENT_PREEXISTING : 0;
            if (ev[i].s != NULL)
                cr_assert_eq(gm_writer_frames(w, ev[i].s, &e.frames, &err), 0, "%s", err.msg);
        } else if (ev[i].op == 'f') {
            e.op = GM_OP_FREE;
            e.id = ev[i].v;
        } else {
            e.op = GM_OP_MARK;
            cr_assert_eq(gm_writer_tag(w, ev[i].s, &e.tag, &err), 0, "%s", err.msg);
        }
        cr_assert_eq(gm_writer_add(w, &e, &err), 0, "%s", err.msg);
    }
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
}

static gm_store_t *ta_store(void)
{
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(gt_tmpfile("align.db"), GM_STORE_WRITE, &s, &err), 0, "%s",
                 err.msg);
    return s;
}

static gm_align_trace_t *ta_load(gm_store_t *s, const char *name)
{
    gm_align_trace_t *t;
    gm_error_t err;
    cr_assert_eq(gm_align_trace_load(s, name, &t, &err), 0, "%s", err.msg);
    return t;
}

Test(align, size_relation)
{
    cr_assert(gm_align_size_related(100, 100, 0, 0, 0, 0));
    cr_assert(!gm_align_size_related(100, 200, 0, 0, 0, 0));
    cr_assert(gm_align_size_related(4096, 8192, 128, 256, 0, 0));      /* p = 1 */
    cr_assert(gm_align_size_related(4096, 16384, 128, 256, 0, 0));     /* p = 2 */
    cr_assert(gm_align_size_related(4096, 1024, 128, 64, 0, 0));       /* ratio 1/2, p = 2 */
    cr_assert(!gm_align_size_related(4096, 12288, 128, 256, 0, 0));    /* ×3 */
    cr_assert(gm_align_size_related(1000, 3000, 100, 300, 4, 4));      /* ratio 3 */
    cr_assert(gm_align_size_related(1000, 6000, 100, 300, 4, 8));      /* p = 1, q = 1 */
    cr_assert(!gm_align_size_related(1000, 5000, 100, 300, 4, 8));
    cr_assert(!gm_align_size_related(0, 5, 1, 2, 0, 0));
    /* huge coprime ratios do not overflow into a false relation */
    cr_assert(!gm_align_size_related(UINT64_C(1) << 47, 3, UINT64_C(1000000007),
                                     UINT64_C(998244353), 0, 0));
}

/* Keys name call sites: the same calls match whatever their line numbers
 * and directories (a script edited, a checkout moved), other calls not. */
Test(align, frame_keys)
{
    gm_store_t *s = ta_store();
    const ta_ev_t a[] = {{'a', 8, "/home/a/m.py:10:fwd\n/home/a/run.py:3:<module>"},
                         {'a', 8, "/home/a/m.py:10:bwd\n/home/a/run.py:3:<module>"},
                         {'a', 8, "/home/a/m.py:10:fwd\n/home/a/other.py:3:<module>"},
                         {'a', 8, "m.py:10:fwd"}};
    const ta_ev_t b[] = {{'a', 8, "/srv/b/m.py:12:fwd\n/srv/b/run.py:7:<module>"}};
    ta_write(s, "a", a, 4);
    ta_write(s, "b", b, 1);
    gm_align_trace_t *ta = ta_load(s, "a"), *tb = ta_load(s, "b");
    cr_assert_eq(ta->allocs[0].key, tb->allocs[0].key);
    cr_assert_neq(ta->allocs[1].key, tb->allocs[0].key); /* another function */
    cr_assert_neq(ta->allocs[2].key, tb->allocs[0].key); /* another caller */
    cr_assert_neq(ta->allocs[3].key, tb->allocs[0].key); /* a shorter stack */
    cr_assert_str_eq(ta->frames[ta->allocs[0].frames],
                     "/home/a/m.py:10:fwd\n/home/a/run.py:3:<module>");
    gm_align_trace_free(ta);
    gm_align_trace_free(tb);
    gm_store_close(s);
}

/*
 * B is A run at twice the sequence length, captured by a ring buffer that
 * started two allocations later: A's first two allocations are gone, the
 * allocation A made before its window (the pre-existing weights) shows up
 * in both, listed in another order.  Frames "lin" scale with s, "attn"
 * with s², "w" not at all, "cat" is 64 + 32·s (no power law: paired by key
 * between its neighbours).
 */
Test(align, windows_and_laws)
{
    gm_store_t *s = ta_store();
    const ta_ev_t a[] = {
        {'p', 1000, "w1"}, {'p', 2000, "w2"}, {'p', 2000, "w2"}, /* ids 0-2 */
        {'m', 0, "step"},
        {'a', 128 * 8, "lin"},          /* 3 (outside B's window) */
        {'a', 128 * 128, "attn"},       /* 4 (outside B's window) */
        {'f', 3, NULL}, {'f', 4, NULL},
        {'m', 0, "step"},
        {'a', 128 * 8, "lin"},          /* 5 */
        {'a', 128 * 128, "attn"},       /* 6 */
        {'a', 64 + 32 * 128, "cat"},    /* 7 */
        {'a', 77, "const"},             /* 8 */
        {'f', 5, NULL}, {'f', 6, NULL}, {'f', 7, NULL}, {'f', 8, NULL},
    };
    const ta_ev_t b[] = {
        {'p', 2000, "w2"}, {'p', 1000, "w1"}, {'p', 2000, "w2"}, /* ids 0-2 */
        {'m', 0, "step"},
        {'a', 256 * 8, "lin"},          /* 3 */
        {'a', 256 * 256, "attn"},       /* 4 */
        {'a', 64 + 32 * 256, "cat"},    /* 5 */
        {'a', 77, "const"},             /* 6 */
        {'f', 3, NULL}, {'f', 4, NULL}, {'f', 5, NULL}, {'f', 6, NULL},
    };
    ta_write(s, "a", a, sizeof a / sizeof a[0]);
    ta_write(s, "b", b, sizeof b / sizeof b[0]);
    gm_align_trace_t *ta = ta_load(s, "a"), *tb = ta_load(s, "b");
    cr_assert_eq(ta->nallocs, 9);
    cr_assert_eq(tb->nallocs, 7);
    cr_assert_eq(ta->nmarks, 2);
    cr_assert_str_eq(ta->marks[1].name, "step");
    cr_assert_eq(ta->allocs[5].mark, 2);

    gm_align_options_t o = {.seq_a = 128, .seq_b = 256};
    gm_align_result_t r;
    gm_error_t err;
    cr_assert_eq(gm_align_traces(ta, tb, &o, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.end_anchored, 1);
    cr_assert_eq(r.complete, 1);
    cr_assert_eq(r.a_to_b[0], 1);
    cr_assert(r.a_to_b[1] == 0 || r.a_to_b[1] == 2);
    cr_assert(r.a_to_b[2] == 0 || r.a_to_b[2] == 2);
    cr_assert_neq(r.a_to_b[1], r.a_to_b[2]);
    cr_assert_eq(r.a_to_b[3], -1);
    cr_assert_eq(r.a_to_b[4], -1);
    cr_assert_eq(r.a_to_b[5], 3);
    cr_assert_eq(r.a_to_b[6], 4);
    cr_assert_eq(r.a_to_b[7], 5); /* by key: 64 + 32·s is no power law */
    cr_assert_eq(r.a_to_b[8], 6);
    for (size_t i = 0; i < r.na; i++)
        if (r.a_to_b[i] >= 0)
            cr_assert_eq(r.b_to_a[r.a_to_b[i]], (int64_t)i);
    cr_assert_eq(r.matched, 7);
    cr_assert_eq(r.matched_pre, 3);
    cr_assert_eq(r.matched_size, 6);
    cr_assert_eq(r.marks_matched, 1);
    cr_assert_eq(r.gap_len, 0); /* ids 3, 4 lie before the window */
    gm_align_result_release(&r);

    /* without the size ratio the scaled allocations pair by key alone */
    cr_assert_eq(gm_align_traces(ta, tb, NULL, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.a_to_b[6], 4);
    cr_assert_eq(r.matched, 7);
    cr_assert_eq(r.matched_size, 4); /* the three weights and "const" */
    gm_align_result_release(&r);
    gm_align_trace_free(ta);
    gm_align_trace_free(tb);
    gm_store_close(s);
}

/* B's ring buffer began after A's "lin" tensor was made and before it was
 * freed: B lists it as pre-existing, A as an allocation of its window.
 * They pair across the boundary; "w", made before B's window and freed
 * inside it, has another call site and pairs with nothing. */
Test(align, ring_buffer_boundary)
{
    gm_store_t *s = ta_store();
    const ta_ev_t a[] = {
        {'a', 128 * 8, "m.py:1:lin"},    /* 0 */
        {'a', 4096, "m.py:2:w"},         /* 1 */
        {'a', 128 * 128, "m.py:3:attn"}, /* 2: B's window starts here */
        {'f', 1, NULL}, {'f', 2, NULL},
        {'a', 77, "m.py:4:cat"},         /* 3 */
        {'f', 0, NULL}, {'f', 3, NULL},
    };
    const ta_ev_t b[] = {
        {'p', 256 * 8, "m.py:1:lin"},    /* 0 */
        {'p', 4096 * 3, "m.py:2:w"},     /* 1: unrelated size */
        {'a', 256 * 256, "m.py:3:attn"}, /* 2 */
        {'f', 1, NULL}, {'f', 2, NULL},
        {'a', 77, "m.py:4:cat"},         /* 3 */
        {'f', 0, NULL}, {'f', 3, NULL},
    };
    ta_write(s, "a", a, sizeof a / sizeof a[0]);
    ta_write(s, "b", b, sizeof b / sizeof b[0]);
    gm_align_trace_t *ta = ta_load(s, "a"), *tb = ta_load(s, "b");
    cr_assert_eq(ta->allocs[0].free_event, 6);
    cr_assert_eq(ta->allocs[1].free_event, 3);
    cr_assert_eq(tb->allocs[0].free_event, 6);
    gm_align_options_t o = {.seq_a = 128, .seq_b = 256};
    gm_align_result_t r;
    gm_error_t err;
    cr_assert_eq(gm_align_traces(ta, tb, &o, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.a_to_b[2], 2);
    cr_assert_eq(r.a_to_b[3], 3);
    cr_assert_eq(r.a_to_b[0], 0); /* across the boundary */
    cr_assert_eq(r.b_to_a[0], 0);
    cr_assert_eq(r.a_to_b[1], -1); /* 4096 vs 12288: no power of 2 */
    cr_assert_eq(r.b_to_a[1], -1);
    cr_assert_eq(r.matched, 3);
    cr_assert_eq(r.matched_pre, 1);
    cr_assert_eq(r.matched_size, 3);
    gm_align_result_release(&r);
    /* the other way round: the same pairs */
    gm_align_options_t o2 = {.seq_a = 256, .seq_b = 128};
    cr_assert_eq(gm_align_traces(tb, ta, &o2, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.a_to_b[0], 0);
    cr_assert_eq(r.a_to_b[1], -1);
    cr_assert_eq(r.matched, 3);
    gm_align_result_release(&r);
    gm_align_trace_free(ta);
    gm_align_trace_free(tb);
    gm_store_close(s);
}

/* Two captures that began with the job and stopped at different points:
 * anchoring at the ends pairs little, at the starts everything. */
Test(align, start_anchored)
{
    gm_store_t *s = ta_store();
    ta_ev_t a[80], b[80];
    size_t na = 0, nb = 0;
    for (int i = 0; i < 40; i++) {
        a[na++] = (ta_ev_t){'a', 64 * (uint64_t)(i % 7 + 1), i % 2 ? "x" : "y"};
        if (i < 30)
            b[nb++] = (ta_ev_t){'a', 128 * (uint64_t)(i % 7 + 1), i % 2 ? "x" : "y"};
    }
    for (int i = 0; i < 12; i++)
        b[nb++] = (ta_ev_t){'a', 5, "other"};
    ta_write(s, "a", a, na);
    ta_write(s, "b", b, nb);
    gm_align_trace_t *ta = ta_load(s, "a"), *tb = ta_load(s, "b");
    gm_align_options_t o = {.seq_a = 64, .seq_b = 128};
    gm_align_result_t r;
    gm_error_t err;
    cr_assert_eq(gm_align_traces(ta, tb, &o, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.end_anchored, 0);
    cr_assert_eq(r.matched, 30);
    cr_assert_eq(r.matched_size, 30);
    for (int i = 0; i < 30; i++)
        cr_assert_eq(r.a_to_b[i], i);
    cr_assert_eq(r.window_a, 30); /* a's last 10 lie past b's end */
    cr_assert_eq(r.window_b, 30);
    gm_align_result_release(&r);
    gm_align_trace_free(ta);
    gm_align_trace_free(tb);
    gm_store_close(s);
}

/* Names, a mark and frames too long for the place's description: it is cut
 * at its end, and the cut is marked. */
Test(align, a_long_description_is_cut_and_marked)
{
    gm_store_t *s = ta_store();
    char na_[80], nb_[80], mark[80], fa[120], fb[120];
    memset(na_, 'a', 70), na_[70] = '\0';
    memset(nb_, 'b', 70), nb_[70] = '\0';
    memset(mark, 'm', 70), mark[70] = '\0';
    memset(fa, 'x', 100), fa[100] = '\0';
    memset(fb, 'y', 100), fb[100] = '\0';
    ta_ev_t a[40], b[40];
    size_t na = 0, nb = 0;
    for (int i = 0; i < 10; i++) {
        a[na++] = (ta_ev_t){'a', 100 + (uint64_t)i, "same"};
        b[nb++] = (ta_ev_t){'a', 100 + (uint64_t)i, "same"};
    }
    a[na++] = (ta_ev_t){'m', 0, mark};
    b[nb++] = (ta_ev_t){'m', 0, mark};
    for (int i = 0; i < 10; i++) {
        a[na++] = (ta_ev_t){'a', 7, fa};
        b[nb++] = (ta_ev_t){'a', 9, fb};
    }
    ta_write(s, na_, a, na);
    ta_write(s, nb_, b, nb);
    gm_align_trace_t *ta = ta_load(s, na_), *tb = ta_load(s, nb_);
    gm_align_result_t r;
    gm_error_t err;
    cr_assert_eq(gm_align_traces(ta, tb, NULL, &r, &err), 0, "%s", err.msg);
    size_t len = strlen(r.where);
    cr_assert_eq(len, sizeof r.where - 1, "%zu: %s", len, r.where);
    cr_assert_str_eq(r.where + len - 3, "...", "%s", r.where);
    cr_assert(strncmp(r.where, "event 11 of 'aaaa", 17) == 0, "%s", r.where);
    gm_align_result_release(&r);
    gm_align_trace_free(ta);
    gm_align_trace_free(tb);
    gm_store_close(s);
}

/* A program that differs in the middle: the break is named by its place. */
Test(align, names_the_break)
{
    gm_store_t *s = ta_store();
    ta_ev_t a[64], b[64];
    size_t na = 0, nb = 0;
    for (int i = 0; i < 20; i++) {
        a[na++] = (ta_ev_t){'a', 100 + (uint64_t)i, "same"};
        b[nb++] = (ta_ev_t){'a', 100 + (uint64_t)i, "same"};
    }
    a[na++] = (ta_ev_t){'m', 0, "backward"};
    b[nb++] = (ta_ev_t){'m', 0, "backward"};
    for (int i = 0; i < 10; i++) {
        a[na++] = (ta_ev_t){'a', 7, "moe_expert_a"};
        b[nb++] = (ta_ev_t){'a', 9, "moe_expert_b"};
    }
    for (int i = 0; i < 5; i++) {
        a[na++] = (ta_ev_t){'a', 300 + (uint64_t)i, "tail"};
        b[nb++] = (ta_ev_t){'a', 300 + (uint64_t)i, "tail"};
    }
    ta_write(s, "a", a, na);
    ta_write(s, "b", b, nb);
    gm_align_trace_t *ta = ta_load(s, "a"), *tb = ta_load(s, "b");
    gm_align_result_t r;
    gm_error_t err;
    cr_assert_eq(gm_align_traces(ta, tb, NULL, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.matched, 25);
    cr_assert_eq(r.gap_len, 10);
    cr_assert_eq(r.gap_a_event, 21); /* the first "moe_expert_a" */
    cr_assert_eq(r.gap_b_event, 20); /* after b's last pair, allocation 19 */
    cr_assert(strstr(r.where, "event 21 of 'a'") != NULL, "%s", r.where);
    cr_assert(strstr(r.where, "event 20 of 'b'") != NULL, "%s", r.where);
    cr_assert(strstr(r.where, "after mark 'backward'") != NULL, "%s", r.where);
    cr_assert(strstr(r.where, "moe_expert_a") != NULL, "%s", r.where);
    gm_align_result_release(&r);

    /* a diff allowed too few edits stops and says so */
    gm_align_options_t o = {.max_edits = 4};
    cr_assert_eq(gm_align_traces(ta, tb, &o, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.complete, 0);
    cr_assert_eq(r.window_a, ta->nallocs); /* everything counts then */
    cr_assert(r.gap_len > 0);
    gm_align_result_release(&r);
    gm_align_trace_free(ta);
    gm_align_trace_free(tb);
    gm_store_close(s);
}

static void ta_synth(gm_store_t *s, const char *name, uint64_t seq, uint64_t batch)
{
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    gm_error_t err;
    c.seq = seq;
    c.batch = batch;
    c.steps = 2;
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, name, 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_synth_write(&c, w, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
}

/* One program at s and 2s (and another batch): every allocation pairs
 * with its own ordinal, every pair by a power law. */
Test(align, synth_pairs_every_allocation)
{
    gm_store_t *s = ta_store();
    ta_synth(s, "s64", 64, 2);
    ta_synth(s, "s128", 128, 2);
    ta_synth(s, "s64b4", 64, 4);
    gm_align_trace_t *a = ta_load(s, "s64"), *b = ta_load(s, "s128"), *c = ta_load(s, "s64b4");
    cr_assert_eq(a->nallocs, b->nallocs);
    gm_align_result_t r;
    gm_error_t err;
    gm_align_options_t o = {.seq_a = 64, .seq_b = 128, .batch_a = 2, .batch_b = 2};
    cr_assert_eq(gm_align_traces(a, b, &o, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.matched, a->nallocs);
    cr_assert_eq(r.matched_size, a->nallocs);
    cr_assert_eq(r.marks_matched, a->nmarks);
    cr_assert_eq(r.edits, 0);
    for (size_t i = 0; i < r.na; i++)
        cr_assert_eq(r.a_to_b[i], (int64_t)i, "allocation %zu", i);
    gm_align_result_release(&r);

    gm_align_options_t ob = {.seq_a = 64, .seq_b = 64, .batch_a = 2, .batch_b = 4};
    cr_assert_eq(gm_align_traces(a, c, &ob, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.matched_size, a->nallocs);
    for (size_t i = 0; i < r.na; i++)
        cr_assert_eq(r.a_to_b[i], (int64_t)i, "allocation %zu", i);
    gm_align_result_release(&r);
    gm_align_trace_free(a);
    gm_align_trace_free(b);
    gm_align_trace_free(c);
    gm_store_close(s);
}

/* ---- the real snapshots ------------------------------------------------------ */

static gm_store_t *ta_real(const char *job, const char **why)
{
    char rel[2][96];
    const char *paths[2];
    for (int i = 0; i < 2; i++) {
        snprintf(rel[i], sizeof rel[i], "snapshots/lmmedium_ctx%d_%s_fp32.pickle",
                 i ? 256 : 128, job);
        paths[i] = gt_data_path(rel[i], why);
        if (paths[i] == NULL)
            return NULL;
    }
    static int nth;
    char dbname[64];
    snprintf(dbname, sizeof dbname, "real%d.db", nth++);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(gt_tmpfile(dbname), GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    for (int i = 0; i < 2; i++) {
        char *p = strdup(gt_data_path(rel[i], why));
        FILE *f = fopen(p, "rb");
        cr_assert_not_null(f, "%s", p);
        gm_import_target_t *t;
        cr_assert_eq(gm_import_target_create(s, i ? "b" : "a", 0, &t, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_torch_import(f, p, t, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
        fclose(f);
        free(p);
    }
    return s;
}

/* The frames texts name the same calls, line numbers aside (the model's
 * source was edited between the two captures: its lines moved). */
static void ta_same_calls(const char *x, const char *y)
{
    x = x ? x : "";
    y = y ? y : "";
    while (*x || *y) {
        /* skip ":digits" after a file name in both */
        if (*x == ':' && x[1] >= '0' && x[1] <= '9' && *y == ':' && y[1] >= '0' && y[1] <= '9') {
            x++, y++;
            while (*x >= '0' && *x <= '9')
                x++;
            while (*y >= '0' && *y <= '9')
                y++;
            continue;
        }
        cr_assert_eq(*x, *y, "frames differ at '%.40s' / '%.40s'", x, y);
        x++, y++;
    }
}

/*
 * Every allocation of the 128 capture pairs with one of the same frames
 * (keys equal), and per call site the pairs follow one power law: each
 * pair's exponent p (size_b = size_a · 2^p) is an integer in 0..2, and
 * allocations of one key in one phase agree.  The pre-existing
 * allocations (weights, optimizer state, the listed layout) pair one to
 * one.
 */
static void ta_check_real(const char *job)
{
    const char *why;
    gm_store_t *s = ta_real(job, &why);
    if (s == NULL)
        cr_skip_test("%s", why);
    gm_align_trace_t *a = ta_load(s, "a"), *b = ta_load(s, "b");
    gm_align_options_t o = {.seq_a = 128, .seq_b = 256};
    gm_align_result_t r;
    gm_error_t err;
    cr_assert_eq(gm_align_traces(a, b, &o, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.complete, 1);
    size_t pre_a = 0, pre_b = 0;
    for (size_t i = 0; i < a->nallocs; i++)
        pre_a += a->allocs[i].preexisting;
    for (size_t i = 0; i < b->nallocs; i++)
        pre_b += b->allocs[i].preexisting;
    cr_assert_eq(pre_a, pre_b);
    cr_assert_eq(r.matched_pre, pre_a);
    size_t shorter = a->nallocs < b->nallocs ? a->nallocs : b->nallocs;
    cr_assert_geq(r.matched * 100, shorter * 99, "%s: %llu of %zu (%s)", job,
                  (unsigned long long)r.matched, shorter, r.where);
    /* every allocation of the 128 capture pairs; at 256 the training
     * backward pass makes a few more (a kernel workspace of 8 MiB and 32 B
     * that the 128 run does without): they are the only ones left */
    cr_assert_eq(r.matched, r.window_a);
    cr_assert_geq(r.matched * 100, r.window_b * 98);
    cr_assert_eq(r.matched_size, r.matched, "%s: a pair's sizes follow no power law", job);
    unsigned hist[3] = {0};
    for (size_t i = 0; i < a->nallocs; i++) {
        int64_t j = r.a_to_b[i];
        if (j < 0)
            continue;
        cr_assert_eq(a->allocs[i].key, b->allocs[j].key, "allocation %zu", i);
        ta_same_calls(a->frames[a->allocs[i].frames], b->frames[b->allocs[j].frames]);
        uint64_t za = a->allocs[i].size, zb = b->allocs[j].size;
        int p = zb == za ? 0 : zb == 2 * za ? 1 : zb == 4 * za ? 2 : -1;
        cr_assert_neq(p, -1, "allocation %zu: %llu -> %llu", i, (unsigned long long)za,
                      (unsigned long long)zb);
        hist[p]++;
    }
    /* the job has constant (weights), linear (activations) and quadratic
     * (attention scores) tensors: each law must show up */
    cr_assert_gt(hist[0], 0);
    cr_assert_gt(hist[1], 0);
    cr_assert_gt(hist[2], 0);
    /* the alignment is symmetric: 256 -> 128 pairs the same allocations */
    gm_align_result_t q;
    gm_align_options_t o2 = {.seq_a = 256, .seq_b = 128};
    cr_assert_eq(gm_align_traces(b, a, &o2, &q, &err), 0, "%s", err.msg);
    cr_assert_eq(q.matched, r.matched);
    size_t same = 0;
    for (size_t i = 0; i < a->nallocs; i++)
        if (r.a_to_b[i] >= 0)
            same += q.b_to_a[i] == r.a_to_b[i];
    cr_assert_geq(same * 100, r.matched * 99);
    gm_align_result_release(&q);
    gm_align_result_release(&r);

    /* different programs (inference against training) do not align */
    gm_align_trace_free(a);
    gm_align_trace_free(b);
    gm_store_close(s);
}

Test(align, real_train_pairs, .timeout = 120)
{
    ta_check_real("train");
}

Test(align, real_inference_pairs, .timeout = 120)
{
    ta_check_real("inference");
}

/* Training against inference: another program, most allocations unpaired. */
Test(align, real_different_programs, .timeout = 120)
{
    const char *why;
    gm_store_t *s1 = ta_real("train", &why);
    if (s1 == NULL)
        cr_skip_test("%s", why);
    gm_store_t *s2 = ta_real("inference", &why);
    gm_align_trace_t *a = ta_load(s1, "a"), *b = ta_load(s2, "b");
    gm_align_options_t o = {.seq_a = 128, .seq_b = 256};
    gm_align_result_t r;
    gm_error_t err;
    cr_assert_eq(gm_align_traces(a, b, &o, &r, &err), 0, "%s", err.msg);
    /* inference is training's forward pass: its allocations all find
     * partners, but training's window holds a backward pass and an
     * optimizer step that pair with nothing */
    uint64_t window = r.window_a > r.window_b ? r.window_a : r.window_b;
    cr_assert_lt(r.matched * 100, window * 90, "%llu of %llu", (unsigned long long)r.matched,
                 (unsigned long long)window);
    cr_assert(r.gap_len > 0);
    cr_assert_neq(r.where[0], '\0');
    gm_align_result_release(&r);
    gm_align_trace_free(a);
    gm_align_trace_free(b);
    gm_store_close(s1);
    gm_store_close(s2);
}

/*
 * Annotations are hints, not keys: A holds a record_function range B
 * lacks (and B one A lacks), and B was recorded by an edited script whose
 * stacks hold one more frame of the script ("main").  Keyed by whole
 * stacks nothing pairs; keyed by the call sites below the script's frames
 * every allocation pairs with its own, the marks that differ are named
 * and counted per trace, and the ones that agree still pair.
 */
Test(align, annotations_and_script_frames_are_hints)
{
    gm_store_t *s = ta_store();
    const char *la = "/a/m.py:10:lin\n/a/run.py:30:<module>";
    const char *lb = "/b/m.py:10:lin\n/b/run.py:20:main\n/b/run.py:40:<module>";
    const char *xa = "/a/m.py:20:attn\n/a/run.py:30:<module>";
    const char *xb = "/b/m.py:20:attn\n/b/run.py:20:main\n/b/run.py:40:<module>";
    const ta_ev_t a[] = {
        {'m', 0, "step"},          {'a', 128 * 8, la},  {'m', 0, "zero_grad"},
        {'m', 0, "zero_grad"},     {'a', 128 * 128, xa}, {'f', 0, NULL},
        {'a', 128 * 8, la},        {'f', 1, NULL},       {'f', 2, NULL},
        {'m', 0, "step"},          {'a', 128 * 8, la},   {'f', 3, NULL},
    };
    const ta_ev_t b[] = {
        {'m', 0, "step"},          {'a', 256 * 8, lb},   {'a', 256 * 256, xb},
        {'f', 0, NULL},            {'m', 0, "b_only"},   {'a', 256 * 8, lb},
        {'f', 1, NULL},            {'f', 2, NULL},       {'m', 0, "step"},
        {'a', 256 * 8, lb},        {'f', 3, NULL},
    };
    ta_write(s, "a", a, sizeof a / sizeof a[0]);
    ta_write(s, "b", b, sizeof b / sizeof b[0]);
    gm_align_trace_t *ta = ta_load(s, "a"), *tb = ta_load(s, "b");
    uint64_t sa[4], sb[4];
    cr_assert_eq(gm_align_site_keys(ta, sa), 0);
    cr_assert_eq(gm_align_site_keys(tb, sb), 0);
    cr_assert_neq(ta->allocs[0].key, tb->allocs[0].key);
    cr_assert_eq(sa[0], sb[0]);
    cr_assert_neq(sa[0], sa[1]);
    gm_align_options_t o = {.seq_a = 128, .seq_b = 256};
    gm_align_result_t r;
    gm_error_t err;
    cr_assert_eq(gm_align_traces(ta, tb, &o, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.site_keys, 1);
    cr_assert_eq(r.matched, 4);
    for (int64_t i = 0; i < 4; i++)
        cr_assert_eq(r.a_to_b[i], i);
    cr_assert_eq(r.matched_size, 4);
    cr_assert_eq(r.marks_matched, 2); /* the two "step" */
    cr_assert_eq(r.marks_only_a, 2);
    cr_assert_eq(r.marks_only_b, 1);
    cr_assert_eq(r.nnotes, 2);
    cr_assert_str_eq(r.notes[0].name, "zero_grad");
    cr_assert_eq(r.notes[0].in_a, 2);
    cr_assert_eq(r.notes[0].in_b, 0);
    cr_assert_str_eq(r.notes[1].name, "b_only");
    cr_assert_eq(r.notes[1].in_a, 0);
    cr_assert_eq(r.notes[1].in_b, 1);
    gm_align_result_release(&r);
    gm_align_trace_free(ta);
    gm_align_trace_free(tb);
    gm_store_close(s);
}

/* A stack wholly in the script keeps its innermost frame as its call site. */
Test(align, site_of_a_script_stack)
{
    gm_store_t *s = ta_store();
    const ta_ev_t a[] = {{'a', 8, "/a/run.py:3:step\n/a/run.py:9:<module>"},
                         {'a', 8, "/a/run.py:4:other\n/a/run.py:9:<module>"},
                         {'a', 8, "/a/run.py:3:step\n/a/run.py:7:main\n/a/run.py:9:<module>"}};
    ta_write(s, "a", a, 3);
    gm_align_trace_t *ta = ta_load(s, "a");
    uint64_t site[3];
    cr_assert_eq(gm_align_site_keys(ta, site), 0);
    cr_assert_neq(site[0], site[1]);
    cr_assert_eq(site[0], site[2]);
    cr_assert_neq(ta->allocs[0].key, ta->allocs[2].key);
    gm_align_trace_free(ta);
    gm_store_close(s);
}
