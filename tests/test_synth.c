/*
 * tests/test_synth.c — the model-config synthesizer and estimate
 * (gmsim/synth.h): the trace is exactly the formulas at the end of
 * forward, for every combination of options; published factors (ZeRO, the
 * seeds' parameter rule); scaling (batch linear, eager attention quadratic
 * in s, recompute ordering); well-formed, deterministic traces through the
 * store; and, against the real PyTorch snapshots in ../shared/data, the
 * peak requested, allocations per step and the caching policy's peak
 * reserved (printed, and asserted within 10% and 15%).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/synth.h"
#include "gmsim/torch.h"
#include "util.h"

/* A small llama-style or gpt-style model for quick runs. */
static gm_synth_config_t small(int arch)
{
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    snprintf(c.model, sizeof c.model, "small");
    c.arch = arch;
    c.hidden = 256;
    c.layers = 4;
    c.heads = 8;
    c.kv_heads = 0;
    c.ffn = 0;
    c.vocab = 1000;
    c.positions = 512;
    c.tied = arch != GM_SYNTH_ARCH_LLAMA;
    c.dropout = arch != GM_SYNTH_ARCH_LLAMA;
    c.batch = 2;
    c.seq = 64;
    return c;
}

static void estimate(const gm_synth_config_t *c, gm_synth_estimate_t *e)
{
    gm_error_t err = {0};
    cr_assert_eq(gm_synth_estimate(c, e, &err), 0, "%s", err.msg);
}

static void run(const gm_synth_config_t *c, gm_synth_stats_t *st)
{
    gm_error_t err = {0};
    cr_assert_eq(gm_synth_run(c, NULL, NULL, st, &err), 0, "%s", err.msg);
}

/* The invariant: in a warm step the live bytes at the backward mark are
 * the closed-form params + state + saved + logits + inputs (+ grads kept
 * from earlier micro-batches), and the peak is the estimate's. */
static void check_exact(gm_synth_config_t c, const char *what)
{
    gm_synth_estimate_t e;
    estimate(&c, &e);
    c.warm = 1;
    c.steps = 2;
    gm_synth_stats_t st;
    run(&c, &st);
    if (c.mode != GM_SYNTH_MODE_INFERENCE)
        cr_assert_eq(st.live_at_backward, e.forward_end,
                     "%s: live at backward %" PRIu64 " != formula %" PRIu64 " (params %" PRIu64
                     " opt %" PRIu64 " saved %" PRIu64 " logits %" PRIu64 ")",
                     what, st.live_at_backward, e.forward_end, e.params, e.optimizer, e.saved,
                     e.logits);
    cr_assert_eq(st.peak, e.peak, "%s", what);
    cr_assert_geq(e.peak, e.forward_end > e.params ? e.params : e.forward_end, "%s", what);
}

Test(synth, exact_by_construction_over_every_option)
{
    int n = 0;
    for (int arch = 0; arch < GM_SYNTH_ARCH_COUNT; arch++)
        for (int prec = 0; prec < GM_SYNTH_PREC_COUNT; prec++)
            for (int rec = 0; rec < GM_SYNTH_RECOMPUTE_COUNT; rec++)
                for (int attn = 0; attn < GM_SYNTH_ATTN_COUNT; attn++)
                    for (int ops = 0; ops < GM_SYNTH_OPS_COUNT; ops++)
                        for (int mode = 0; mode < GM_SYNTH_MODE_COUNT; mode++) {
                            gm_synth_config_t c = small(arch);
                            c.precision = prec;
                            c.recompute = rec;
                            c.attention = attn;
                            c.ops = ops;
                            c.mode = mode;
                            char what[128];
                            snprintf(what, sizeof what,
                                     "arch %d prec %d rec %d attn %d ops %d mode %d", arch, prec,
                                     rec, attn, ops, mode);
                            check_exact(c, what);
                            if (mode != GM_SYNTH_MODE_TRAIN) { /* the other grad mode or loss */
                                if (mode == GM_SYNTH_MODE_INFERENCE)
                                    c.grad_mode = GM_SYNTH_GRAD_INFERENCE_MODE;
                                c.loss = GM_SYNTH_LOSS_CE;
                                check_exact(c, what);
                            }
                            n++;
                        }
    /* parallelism, offload, optimizers, accumulation, GQA, inference */
    gm_synth_config_t c = small(GM_SYNTH_ARCH_LLAMA);
    c.kv_heads = 2;
    check_exact(c, "gqa");
    c.attention = GM_SYNTH_ATTN_FLASH;
    check_exact(c, "gqa flash");
    for (int z = 0; z <= 3; z++)
        for (uint64_t dp = 1; dp <= 8; dp *= 2) {
            c = small(z % 2 ? GM_SYNTH_ARCH_GPT : GM_SYNTH_ARCH_LLAMA);
            c.zero = z;
            c.dp = dp;
            c.precision = GM_SYNTH_PREC_MIXED;
            check_exact(c, "zero");
        }
    for (uint64_t tp = 1; tp <= 4; tp *= 2) {
        c = small(GM_SYNTH_ARCH_GPT);
        c.tp = tp;
        check_exact(c, "tp");
    }
    for (int off = 0; off < GM_SYNTH_OFFLOAD_COUNT; off++)
        for (int opt = 0; opt < GM_SYNTH_OPT_COUNT; opt++)
            for (int impl = 0; impl < GM_SYNTH_OPTIMPL_COUNT; impl++) {
                c = small(GM_SYNTH_ARCH_LLAMA);
                c.offload = off;
                c.optimizer = opt;
                c.optimizer_impl = impl;
                check_exact(c, "offload/optimizer");
            }
    c = small(GM_SYNTH_ARCH_GPT);
    c.grad_accum = 3;
    check_exact(c, "grad accumulation");
    c = small(GM_SYNTH_ARCH_BERT);
    c.mode = GM_SYNTH_MODE_INFERENCE;
    check_exact(c, "inference");
    cr_assert_gt(n, 100);
}

Test(synth, exact_on_random_configs)
{
    /* Seeded random mixes of every option, odd lengths included. */
    uint64_t rng = 42;
    int done = 0;
    for (int i = 0; i < 300; i++) {
        gm_synth_config_t c = small((int)(gt_rand(&rng) % GM_SYNTH_ARCH_COUNT));
        c.precision = (int)(gt_rand(&rng) % GM_SYNTH_PREC_COUNT);
        c.recompute = (int)(gt_rand(&rng) % GM_SYNTH_RECOMPUTE_COUNT);
        c.attention = (int)(gt_rand(&rng) % GM_SYNTH_ATTN_COUNT);
        c.ops = (int)(gt_rand(&rng) % GM_SYNTH_OPS_COUNT);
        c.optimizer = (int)(gt_rand(&rng) % GM_SYNTH_OPT_COUNT);
        c.optimizer_impl = (int)(gt_rand(&rng) % GM_SYNTH_OPTIMPL_COUNT);
        c.offload = (int)(gt_rand(&rng) % GM_SYNTH_OFFLOAD_COUNT);
        c.mode = gt_rand(&rng) % 5 == 0 ? GM_SYNTH_MODE_INFERENCE
                 : gt_rand(&rng) % 4 == 0 ? GM_SYNTH_MODE_FORWARD
                                           : GM_SYNTH_MODE_TRAIN;
        if (c.mode != GM_SYNTH_MODE_TRAIN)
            c.loss = (int)(gt_rand(&rng) % 2);
        if (c.mode == GM_SYNTH_MODE_INFERENCE)
            c.grad_mode = (int)(gt_rand(&rng) % 2);
        c.zero = (int)(gt_rand(&rng) % 4);
        c.dp = UINT64_C(1) << (gt_rand(&rng) % 3);
        c.tp = UINT64_C(1) << (gt_rand(&rng) % 2);
        c.kv_heads = (uint64_t[]){0, 2, 4}[gt_rand(&rng) % 3];
        c.grad_accum = 1 + gt_rand(&rng) % 3;
        c.batch = 1 + gt_rand(&rng) % 4;
        c.seq = 1 + gt_rand(&rng) % 200;
        c.tied = (int)(gt_rand(&rng) % 2);
        c.dropout = (int)(gt_rand(&rng) % 2);
        gm_error_t err = {0};
        if (gm_synth_check(&c, &err) != 0)
            continue;
        char what[160];
        snprintf(what, sizeof what,
                 "random config %d (arch %d prec %d rec %d attn %d ops %d mode %d loss %d "
                 "offload %d zero %d tied %d)",
                 i, c.arch, c.precision, c.recompute, c.attention, c.ops, c.mode, c.loss,
                 c.offload, c.zero, c.tied);
        check_exact(c, what);
        done++;
    }
    cr_assert_gt(done, 200);
}

Test(synth, parameters_follow_the_published_shapes)
{
    /* GPT-2 small: 124,439,808 parameters (tied); 12·L·h² + V·h + P·h +
     * biases and norms. */
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    gm_error_t err = {0};
    cr_assert_eq(gm_synth_apply_preset(&c, "gpt2", &err), 0);
    cr_assert_eq(gm_synth_param_count(&c), 124439808);
    cr_assert_eq(gm_synth_apply_preset(&c, "gpt2-xl", &err), 0);
    cr_assert_eq(gm_synth_param_count(&c), 1557611200); /* HF GPT2 1.5B */
    cr_assert_eq(gm_synth_apply_preset(&c, "llama-7b", &err), 0);
    cr_assert_eq(gm_synth_param_count(&c), 6738415616); /* LLaMA-7B */
    cr_assert_eq(gm_synth_apply_preset(&c, "bert-large", &err), 0);
    /* BERT-large with the MLM head, no pooler: 335,174,458 parameters
     * (HF BertForMaskedLM) */
    cr_assert_eq(gm_synth_param_count(&c), 335174458);
    cr_assert_eq(gm_synth_apply_preset(&c, "nope", &err), GM_ENOTFOUND);
    cr_assert(strstr(err.msg, "gpt2-medium") != NULL, "%s", err.msg);
    /* The seeds' rule: bytes = count × bits / 8 */
    cr_assert_eq(gm_synth_apply_preset(&c, "gpt2", &err), 0);
    gm_synth_estimate_t e;
    estimate(&c, &e);
    cr_assert_eq(e.params, 124439808ull * 32 / 8);
    c.precision = GM_SYNTH_PREC_BF16;
    estimate(&c, &e);
    cr_assert_eq(e.params, 124439808ull * 16 / 8);
}

Test(synth, zero_factors_are_the_published_ones)
{
    /* Mixed-precision Adam: 16Ψ; ZeRO-1 4Ψ + 12Ψ/N; ZeRO-2 2Ψ + 14Ψ/N;
     * ZeRO-3 16Ψ/N (Rajbhandari et al. SC'20).  GPT-2's tensors divide by
     * N = 8, so the shards are exact. */
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    c.precision = GM_SYNTH_PREC_MIXED;
    c.optimizer = GM_SYNTH_OPT_ADAM;
    c.dp = 8;
    uint64_t psi = gm_synth_param_count(&c), N = 8;
    uint64_t want[4] = {16 * psi, 4 * psi + 12 * psi / N, 2 * psi + 14 * psi / N, 16 * psi / N};
    for (int z = 0; z <= 3; z++) {
        c.zero = z;
        gm_synth_estimate_t e;
        estimate(&c, &e);
        cr_assert_eq(e.params + e.grads + e.optimizer, want[z], "ZeRO-%d: %" PRIu64 " vs %" PRIu64,
                     z, e.params + e.grads + e.optimizer, want[z]);
    }
    /* fp32 Adam: 4 + 4 + 8 bytes per parameter; SGD: no state */
    c.zero = 0;
    c.dp = 1;
    c.precision = GM_SYNTH_PREC_FP32;
    gm_synth_estimate_t e;
    estimate(&c, &e);
    cr_assert_eq(e.optimizer, 8 * psi);
    c.optimizer = GM_SYNTH_OPT_SGD;
    estimate(&c, &e);
    cr_assert_eq(e.optimizer, 0);
    c.offload = GM_SYNTH_OFFLOAD_OPTIMIZER;
    c.optimizer = GM_SYNTH_OPT_ADAMW;
    estimate(&c, &e);
    cr_assert_eq(e.optimizer, 0);
    cr_assert_eq(e.params, 4 * psi);
}

Test(synth, activations_scale_as_published)
{
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    gm_synth_apply_preset(&c, "gpt2-medium", NULL);
    c.seq = 512;
    gm_synth_estimate_t e1, e2, e4;
    /* linear in batch: saved, logits, inputs all double */
    c.batch = 1;
    estimate(&c, &e1);
    c.batch = 2;
    estimate(&c, &e2);
    cr_assert_eq(e2.saved, 2 * e1.saved);
    cr_assert_eq(e2.saved_layer, 2 * e1.saved_layer);
    cr_assert_eq(e2.logits - 4, 2 * (e1.logits - 4)); /* the loss scalar is 4 B */
    /* eager attention: q(s) = f(2s) − 2 f(s) isolates the s² term, which
     * quadruples when s doubles; flash has none */
    uint64_t q[2];
    for (int flash = 0; flash < 2; flash++) {
        c.batch = 1;
        c.attention = flash ? GM_SYNTH_ATTN_FLASH : GM_SYNTH_ATTN_EAGER;
        c.seq = 128;
        estimate(&c, &e1);
        c.seq = 256;
        estimate(&c, &e2);
        c.seq = 512;
        estimate(&c, &e4);
        uint64_t qa = e2.saved_layer - 2 * e1.saved_layer;
        uint64_t qb = e4.saved_layer - 2 * e2.saved_layer;
        if (flash) {
            cr_assert_eq(qa, 0);
            cr_assert_eq(qb, 0);
        } else {
            cr_assert_gt(qa, 0);
            cr_assert_eq(qb, 4 * qa);
        }
        q[flash] = qa;
    }
    /* the s² term is Korthikanti's 5·a·s²·b per layer in 16-bit bytes
     * (softmax 2, dropout mask 1, dropout output 2): in fp32 4 + 1 + 4;
     * q = 2·α·s² at s = 128, a = 16, b = 1 */
    cr_assert_eq(q[0], 2ull * (4 + 1 + 4) * 16 * 128 * 128);
    /* the whole layer in 16-bit: Korthikanti et al.'s s·b·h·(34 + 5·a·s/h)
     * plus the LayerNorms' mean and rstd (4 × s·b·4) */
    c.precision = GM_SYNTH_PREC_BF16;
    c.attention = GM_SYNTH_ATTN_EAGER;
    c.seq = 512;
    c.batch = 3;
    estimate(&c, &e1);
    uint64_t s_ = 512, b_ = 3, h_ = 1024, a_ = 16;
    cr_assert_eq(e1.saved_layer, 34 * s_ * b_ * h_ + 5 * a_ * s_ * s_ * b_ + 16 * s_ * b_);
    c.precision = GM_SYNTH_PREC_FP32;
    /* recompute: none > selective > full, in saved bytes and peak */
    c.attention = GM_SYNTH_ATTN_EAGER;
    c.seq = 1024;
    c.batch = 4;
    gm_synth_estimate_t r[3];
    for (int m = 0; m < 3; m++) {
        c.recompute = m;
        estimate(&c, &r[m]);
    }
    cr_assert_gt(r[0].saved, r[1].saved);
    cr_assert_gt(r[1].saved, r[2].saved);
    cr_assert_gt(r[0].peak, r[1].peak);
    cr_assert_gt(r[1].peak, r[2].peak);
    /* full recompute keeps one s·b·h tensor per layer (2sbh in 16-bit) */
    cr_assert_eq(r[2].saved_layer, 1024ull * 4 * 1024 * 4);
}

/* ---- through the store ------------------------------------------------------------- */

static void write_trace(gm_store_t *s, const char *name, const gm_synth_config_t *c,
                        gm_synth_stats_t *st)
{
    gm_error_t err = {0};
    gm_writer_t *w;
    cr_assert_eq(gm_writer_begin(s, name, 0, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_synth_write(c, w, st, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
}

Test(synth, stored_trace_is_well_formed_and_deterministic)
{
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(gt_tmpfile("synth.db"), GM_STORE_WRITE, &s, &err), 0, "%s",
                 err.msg);
    gm_synth_config_t c = small(GM_SYNTH_ARCH_LLAMA);
    c.seq_kind = GM_SYNTH_SEQ_UNIFORM;
    c.seq_lo = 16;
    c.seq_hi = 128;
    c.steps = 3;
    c.grad_accum = 2;
    gm_synth_stats_t a, b;
    write_trace(s, "a", &c, &a);
    write_trace(s, "b", &c, &b);
    c.seed = 2;
    gm_synth_stats_t d;
    write_trace(s, "c", &c, &d);
    gm_trace_info_t ia, ib, ic;
    cr_assert_eq(gm_store_find(s, "a", &ia, &err), 0);
    cr_assert_eq(gm_store_find(s, "b", &ib, &err), 0);
    cr_assert_eq(gm_store_find(s, "c", &ic, &err), 0);
    cr_assert_str_eq(ia.digest, ib.digest, "same seed, same trace");
    cr_assert_str_neq(ia.digest, ic.digest, "another seed draws other lengths");
    cr_assert_eq(ia.events, a.events);
    cr_assert_eq(ia.load, a.peak);
    cr_assert(strstr(ia.attrs, "\"source\": \"synth\"") != NULL, "%s", ia.attrs);
    cr_assert(strstr(ia.attrs, "\"seq_len\": 128") != NULL, "%s", ia.attrs);
    cr_assert(strstr(ia.attrs, "\"seq\":\"uniform:16:128\"") != NULL, "%s", ia.attrs);
    /* what outlives the run: weights, gradients, m and v */
    gm_synth_estimate_t e;
    estimate(&c, &e);
    (void)e;
    /* read back: marks in order, every FREE of a live id */
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "a", &r, &err), 0, "%s", err.msg);
    int64_t tstep = gm_reader_find_tag(r, "step"), tfwd = gm_reader_find_tag(r, "forward");
    int64_t tbwd = gm_reader_find_tag(r, "backward"), topt = gm_reader_find_tag(r, "optimizer");
    cr_assert(tstep >= 0 && tfwd >= 0 && tbwd >= 0 && topt >= 0);
    uint64_t steps = 0, fwd = 0, bwd = 0, opt = 0;
    const gm_event_t *ev;
    size_t n;
    while (gm_reader_next(r, &ev, &n, &err) == 0 && n > 0)
        for (size_t i = 0; i < n; i++)
            if (ev[i].op == GM_OP_MARK) {
                steps += ev[i].tag == (uint32_t)tstep;
                fwd += ev[i].tag == (uint32_t)tfwd;
                bwd += ev[i].tag == (uint32_t)tbwd;
                opt += ev[i].tag == (uint32_t)topt;
            }
    cr_assert_eq(steps, 3);
    cr_assert_eq(fwd, 6);
    cr_assert_eq(bwd, 6);
    cr_assert_eq(opt, 3);
    gm_reader_close(r);
    gm_trace_info_release(&ia);
    gm_trace_info_release(&ib);
    gm_trace_info_release(&ic);
    gm_store_close(s);
}

Test(synth, long_runs_keep_every_id_straight)
{
    /* Far more allocations than the generator's ring of recent ids: the
     * weights, gradients and state outlive many ring turns.  The store's
     * writer rejects any FREE of an id not live, so a clean write proves
     * the bookkeeping; what remains live at the end is one tensor per
     * weight, gradient, m and v. */
    gm_error_t err = {0};
    gm_store_t *s;
    cr_assert_eq(gm_store_open(gt_tmpfile("long.db"), GM_STORE_WRITE, &s, &err), 0, "%s",
                 err.msg);
    gm_synth_config_t c = small(GM_SYNTH_ARCH_GPT);
    c.layers = 2;
    c.steps = 1200;
    gm_synth_stats_t st;
    write_trace(s, "long", &c, &st);
    cr_assert_gt(st.allocs, 3 * 65536, "%" PRIu64 " allocations", st.allocs);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "long", &info, &err), 0, "%s", err.msg);
    gm_synth_config_t one = c;
    one.steps = 1;
    gm_synth_stats_t st1;
    run(&one, &st1);
    cr_assert_eq(info.live_at_end, st1.allocs - st1.frees, "live at the end: %" PRIu64,
                 info.live_at_end);
    cr_assert_eq(info.load, st.peak);
    gm_trace_info_release(&info);
    gm_store_close(s);
}

Test(synth, rejects_bad_configs)
{
    gm_error_t err = {0};
    gm_synth_config_t c = small(GM_SYNTH_ARCH_GPT);
    c.heads = 7;
    cr_assert_eq(gm_synth_check(&c, &err), GM_EINVAL);
    cr_assert(strstr(err.msg, "heads") != NULL, "%s", err.msg);
    c = small(GM_SYNTH_ARCH_LLAMA);
    c.kv_heads = 3;
    cr_assert_eq(gm_synth_check(&c, &err), GM_EINVAL);
    c = small(GM_SYNTH_ARCH_GPT);
    c.tp = 3;
    cr_assert_eq(gm_synth_check(&c, &err), GM_EINVAL);
    c = small(GM_SYNTH_ARCH_GPT);
    c.seq_kind = GM_SYNTH_SEQ_UNIFORM;
    c.seq_lo = 9;
    c.seq_hi = 8;
    cr_assert_eq(gm_synth_check(&c, &err), GM_EINVAL);
    c = small(GM_SYNTH_ARCH_GPT);
    c.batch = 0;
    gm_synth_stats_t st;
    cr_assert_eq(gm_synth_run(&c, NULL, NULL, &st, &err), GM_EINVAL);
    c = small(GM_SYNTH_ARCH_GPT); /* a score tensor past the 2^48-byte trace limit */
    c.batch = 65536;
    c.seq = 65536;
    cr_assert_eq(gm_synth_check(&c, &err), GM_EINVAL);
    cr_assert(strstr(err.msg, "2^48") != NULL, "%s", err.msg);
    cr_assert_eq(gm_synth_parse(GM_SYNTH_LIST_PRECISION, "bf16"), GM_SYNTH_PREC_BF16);
    cr_assert_eq(gm_synth_parse(GM_SYNTH_LIST_PRECISION, "fp8"), -1);
    cr_assert_str_eq(gm_synth_choices(GM_SYNTH_LIST_RECOMPUTE), "none|selective|full");
}

/* ---- against the real snapshots ------------------------------------------------------------ */

/* The snapshots' model (data/README.md): h, L, a, f, V = 10000, batch 4,
 * fp32.  The trace's code is a from-scratch LM: RMSNorm, SwiGLU, RoPE, no
 * biases, untied output, softmax and norms written as elementwise code.
 * The two codebases' AdamW differ: lmmedium's computes out of place
 * (python: m and v replaced every step), lm2.7b's updates in place (loop).
 * The lmmedium training snapshots start after warm-up steps (warm), the
 * lm2.7b one at the first step. */
static gm_synth_config_t snapshot_model(uint64_t h, uint64_t L, uint64_t a, uint64_t f,
                                        uint64_t seq, int mode, int warm, int optimpl)
{
    gm_synth_config_t c;
    gm_synth_config_default(&c);
    snprintf(c.model, sizeof c.model, "lm");
    c.arch = GM_SYNTH_ARCH_LLAMA;
    c.hidden = h;
    c.layers = L;
    c.heads = a;
    c.kv_heads = 0;
    c.ffn = f;
    c.vocab = 10000;
    c.positions = 0;
    c.tied = 0;
    c.dropout = 0;
    c.ops = GM_SYNTH_OPS_COMPOSITE;
    c.optimizer_impl = optimpl;
    c.batch = 4;
    c.seq = seq;
    c.steps = 1;
    c.mode = mode;
    c.warm = warm;
    return c;
}

typedef struct replay_figs {
    uint64_t load, reserved, allocs;
} replay_figs_t;

/* Replay trace `name` of s through caching with default parameters. */
static void replay_caching(gm_store_t *s, const char *name, replay_figs_t *out)
{
    gm_error_t err = {0};
    const gm_policy_ops_t *ops = gm_policy_find("caching");
    cr_assert_not_null(ops, "no caching policy registered");
    gm_replay_t *r;
    gm_params_t p;
    cr_assert_eq(gm_params_init(&p, ops, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_create(NULL, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_add(r, &p, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_replay_trace(r, s, name, &err), 0, "%s", err.msg);
    out->load = gm_replay_load(r);
    out->reserved = gm_replay_metrics(r, 0)->peak_reserved;
    gm_replay_destroy(r);
    gm_params_release(&p);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, name, &info, &err), 0, "%s", err.msg);
    /* allocations of the recorded step: those not alive before it */
    gm_reader_t *rd;
    cr_assert_eq(gm_reader_open(s, name, &rd, &err), 0, "%s", err.msg);
    const gm_event_t *ev;
    size_t n;
    out->allocs = 0;
    while (gm_reader_next(rd, &ev, &n, &err) == 0 && n > 0)
        for (size_t i = 0; i < n; i++)
            out->allocs += ev[i].op == GM_OP_ALLOC && !(ev[i].flags & GM_EVENT_PREEXISTING);
    gm_reader_close(rd);
    gm_trace_info_release(&info);
}

static double rel(uint64_t a, uint64_t b) { return ((double)a - (double)b) / (double)b; }

/* The snapshot file (under ../shared/data/snapshots) imported as trace
 * "real" into a fresh store named after `prefix`; the test is skipped when
 * the file is absent. */
static gm_store_t *import_snapshot(const char *file, const char *prefix)
{
    const char *why;
    char rel_path[128];
    snprintf(rel_path, sizeof rel_path, "snapshots/%s", file);
    const char *path = gt_data_path(rel_path, &why);
    if (path == NULL)
        cr_skip_test("%s", why);
    gm_error_t err = {0};
    gm_store_t *s;
    char db[64];
    snprintf(db, sizeof db, "%s-%s.db", prefix, file);
    cr_assert_eq(gm_store_open(gt_tmpfile(db), GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    gm_import_target_t *t;
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(gm_import_target_create(s, "real", 0, &t, &err), 0, "%s", err.msg);
    int rc = gm_torch_import(f, path, t, &err);
    fclose(f);
    if (rc != 0)
        gm_import_abort(t);
    cr_assert_eq(rc, 0, "%s", err.msg);
    cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
    return s;
}

static void compare_snapshot(const char *file, gm_synth_config_t c, int assert_reserved)
{
    gm_store_t *s = import_snapshot(file, "cmp");
    gm_synth_stats_t st;
    write_trace(s, "synth", &c, &st);
    replay_figs_t real, syn;
    replay_caching(s, "real", &real);
    replay_caching(s, "synth", &syn);
    double ereq = rel(syn.load, real.load), eres = rel(syn.reserved, real.reserved);
    double eallocs = rel(syn.allocs, real.allocs);
    fprintf(stderr,
            "synth vs %s (seq %" PRIu64 "): peak requested %.3f vs %.3f GiB (%+.1f%%), "
            "caching peak reserved %.3f vs %.3f GiB (%+.1f%%), allocations per step %" PRIu64
            " vs %" PRIu64 " (%+.0f%%)\n",
            file, c.seq, syn.load / 1073741824.0, real.load / 1073741824.0, ereq * 100,
            syn.reserved / 1073741824.0, real.reserved / 1073741824.0, eres * 100, syn.allocs,
            real.allocs, eallocs * 100);
    cr_expect(ereq > -0.10 && ereq < 0.10, "%s: peak requested off by %.1f%%", file, ereq * 100);
    if (assert_reserved)
        cr_expect(eres > -0.15 && eres < 0.15, "%s: peak reserved off by %.1f%%", file,
                  eres * 100);
    gm_store_close(s);
}

/* ---- per class, at the peak ------------------------------------------------------------ */

/* The live allocations at a trace's peak requested (its first instant),
 * as a histogram of sizes: a tensor's size is its shape times its element
 * type, so a size names a class (the 16-bit copies of one matrix shape,
 * the fp32 s²-sized exps, the residual stream, ...).  Sorted by size. */
typedef struct peak_hist {
    uint64_t peak;
    size_t n;
    uint64_t size[4096], count[4096];
} peak_hist_t;

static void peak_hist(gm_store_t *s, const char *name, peak_hist_t *h)
{
    gm_error_t err = {0};
    gm_reader_t *rd;
    cr_assert_eq(gm_reader_open(s, name, &rd, &err), 0, "%s", err.msg);
    size_t cap = 1 << 16, nev = 0, evcap = 1 << 16;
    uint64_t *size = calloc(cap, sizeof *size), live = 0, peak = 0, at = 0;
    uint64_t *evid = malloc(evcap * sizeof *evid);
    uint8_t *evop = malloc(evcap);
    cr_assert(size && evid && evop);
    const gm_event_t *ev;
    size_t n;
    while (gm_reader_next(rd, &ev, &n, &err) == 0 && n > 0)
        for (size_t i = 0; i < n; i++) {
            const gm_event_t *e = &ev[i];
            if (e->op != GM_OP_ALLOC && e->op != GM_OP_FREE)
                continue;
            while (e->id >= cap) {
                size = realloc(size, 2 * cap * sizeof *size);
                cr_assert_not_null(size);
                memset(size + cap, 0, cap * sizeof *size);
                cap *= 2;
            }
            if (nev == evcap) {
                evcap *= 2;
                evid = realloc(evid, evcap * sizeof *evid);
                evop = realloc(evop, evcap);
                cr_assert(evid && evop);
            }
            evid[nev] = e->id;
            evop[nev++] = (uint8_t)e->op;
            if (e->op == GM_OP_ALLOC) {
                size[e->id] = e->size;
                live += e->size;
            } else {
                live -= size[e->id];
            }
            if (live > peak) {
                peak = live;
                at = nev;
            }
        }
    gm_reader_close(rd);
    uint8_t *alive = calloc(cap, 1);
    cr_assert_not_null(alive);
    for (size_t k = 0; k < at; k++)
        alive[evid[k]] = evop[k] == GM_OP_ALLOC;
    memset(h, 0, sizeof *h);
    h->peak = peak;
    for (size_t id = 0; id < cap; id++) {
        if (!alive[id])
            continue;
        size_t j = 0;
        while (j < h->n && h->size[j] < size[id])
            j++;
        if (j == h->n || h->size[j] != size[id]) {
            cr_assert_lt(h->n, sizeof h->size / sizeof h->size[0]);
            memmove(h->size + j + 1, h->size + j, (h->n - j) * sizeof *h->size);
            memmove(h->count + j + 1, h->count + j, (h->n - j) * sizeof *h->count);
            h->size[j] = size[id];
            h->count[j] = 0;
            h->n++;
        }
        h->count[j]++;
    }
    free(alive);
    free(size);
    free(evid);
    free(evop);
}

static uint64_t hist_count(const peak_hist_t *h, uint64_t size)
{
    for (size_t j = 0; j < h->n; j++)
        if (h->size[j] == size)
            return h->count[j];
    return 0;
}

/* The bytes by which the two histograms differ (Σ |count difference| ×
 * size), printing the classes of a MiB or more, the largest first. */
static uint64_t hist_mismatch(const peak_hist_t *a, const peak_hist_t *b, const char *what)
{
    uint64_t total = 0;
    peak_hist_t u; /* the union of the sizes */
    memset(&u, 0, sizeof u);
    for (int side = 0; side < 2; side++) {
        const peak_hist_t *h = side ? b : a;
        for (size_t j = 0; j < h->n; j++) {
            uint64_t sz = h->size[j];
            if (hist_count(&u, sz) == 0 && u.n < sizeof u.size / sizeof u.size[0]) {
                u.size[u.n] = sz;
                u.count[u.n++] = 1;
            }
        }
    }
    fprintf(stderr, "%s: live at the peak by size (real vs synth), the classes that differ:\n",
            what);
    for (size_t j = 0; j < u.n; j++) {
        uint64_t ca = hist_count(a, u.size[j]), cb = hist_count(b, u.size[j]);
        uint64_t d = (ca > cb ? ca - cb : cb - ca) * u.size[j];
        total += d;
        if (d >= (1u << 20))
            fprintf(stderr, "  %12" PRIu64 " B x %5" PRIu64 " vs %5" PRIu64 "\n", u.size[j], ca,
                    cb);
    }
    fprintf(stderr, "  mismatched: %.1f MiB of a %.3f GiB peak (%.2f%%)\n", total / 1048576.0,
            a->peak / 1073741824.0, 100.0 * (double)total / (double)a->peak);
    return total;
}

/* Snapshot `file` against config c, allocation class by allocation class
 * at the peak: the peak requested within `peak_tol`, the bytes whose
 * class counts differ within `class_tol` of it.  Fills the histograms. */
static void compare_classes(const char *file, const gm_synth_config_t *c, double peak_tol,
                            double class_tol, peak_hist_t *real, peak_hist_t *syn)
{
    gm_store_t *s = import_snapshot(file, "cls");
    gm_synth_stats_t st;
    write_trace(s, "synth", c, &st);
    peak_hist(s, "real", real);
    peak_hist(s, "synth", syn);
    double e = rel(syn->peak, real->peak);
    fprintf(stderr, "synth vs %s: peak requested %.3f vs %.3f GiB (%+.2f%%)\n", file,
            syn->peak / 1073741824.0, real->peak / 1073741824.0, e * 100);
    cr_expect(e > -peak_tol && e < peak_tol, "%s: peak off by %.2f%%", file, e * 100);
    uint64_t miss = hist_mismatch(real, syn, file);
    cr_expect((double)miss <= class_tol * (double)real->peak,
              "%s: %.2f%% of the peak's bytes in classes whose counts differ", file,
              100.0 * (double)miss / (double)real->peak);
    gm_store_close(s);
}

/* Under torch.autocast (bf16) a training step of the lmmedium shape at
 * context 512: per class at the peak (the start of the loss's backward),
 * the fp32 exps and the 16-bit copies of the probabilities (one per layer
 * each: exp runs in fp32, p @ v copies p back), the weights' 16-bit copies,
 * the 16-bit copies of every linear's fp32 input and the fp32 residual
 * stream all match the real step. */
Test(synth_real, amp_training_step_by_class)
{
    gm_synth_config_t c = snapshot_model(1024, 24, 16, 4096, 512, GM_SYNTH_MODE_TRAIN, 1,
                                         GM_SYNTH_OPTIMPL_PYTHON);
    c.precision = GM_SYNTH_PREC_AMP;
    static peak_hist_t real, syn;
    compare_classes("lmmedium_ctx512_train_mixed.pickle", &c, 0.02, 0.01, &real, &syn);
    uint64_t s2 = 4 * 16 * 512 * 512; /* b·a·s² */
    cr_expect_eq(hist_count(&syn, s2 * 4), 24, "fp32 exps: one per layer");
    cr_expect_eq(hist_count(&real, s2 * 4), hist_count(&syn, s2 * 4));
    cr_expect_eq(hist_count(&real, s2 * 2), hist_count(&syn, s2 * 2), "16-bit probabilities");
    cr_expect_eq(hist_count(&real, 1024 * 1024 * 2), hist_count(&syn, 1024 * 1024 * 2),
                 "the attention matrices' 16-bit copies");
    cr_expect_eq(hist_count(&real, 512 * 4 * 1024 * 2), hist_count(&syn, 512 * 4 * 1024 * 2),
                 "16-bit activations of width h (the linears' input copies, q, k, v)");
}

/* A no_grad forward under autocast keeps a 16-bit copy of every matrix
 * until the context exits (the cast cache: lm2.7b, 32 layers of q, k, v, o
 * and three MLP matrices, and the output layer); under inference_mode
 * none is cached. */
Test(synth_real, amp_no_grad_inference_by_class)
{
    gm_synth_config_t c = snapshot_model(2560, 32, 32, 10240, 128, GM_SYNTH_MODE_INFERENCE, 0,
                                         GM_SYNTH_OPTIMPL_LOOP);
    c.precision = GM_SYNTH_PREC_AMP;
    static peak_hist_t real, syn;
    compare_classes("lm2.7b_ctx128_inference_mixed.pickle", &c, 0.01, 0.01, &real, &syn);
    uint64_t hh = 2560ull * 2560 * 2, hf = 2560ull * 10240 * 2, vh = 10000ull * 2560 * 2;
    cr_expect_eq(hist_count(&real, hh), 4 * 32, "real: the cache holds q, k, v, o of each layer");
    cr_expect_eq(hist_count(&syn, hh), 4 * 32);
    cr_expect_eq(hist_count(&real, hf), hist_count(&syn, hf), "the MLP matrices' copies");
    cr_expect_eq(hist_count(&syn, hf), 3 * 32);
    cr_expect_eq(hist_count(&real, vh), hist_count(&syn, vh), "the output layer's copy");
    /* inference_mode: no cache, the peak is lower by about the copies */
    gm_synth_estimate_t cached, uncached;
    estimate(&c, &cached);
    c.grad_mode = GM_SYNTH_GRAD_INFERENCE_MODE;
    estimate(&c, &uncached);
    cr_expect_eq(uncached.casts, 0);
    cr_expect_eq(cached.casts, 128 * hh + 96 * hf + vh);
    cr_expect_geq(cached.peak - uncached.peak, cached.casts - vh - hf,
                  "the cache's copies add to the peak");
    gm_synth_stats_t st;
    run(&c, &st);
    cr_expect_eq(st.peak, uncached.peak);
}

/* The lm2.7b forward snapshots run one forward pass with autograd on and
 * no backward (`--mode forward`): the graph's saved tensors are alive at
 * the end, where the peak is.  fp32 by class; under autocast the captured
 * code differs from the from-scratch composite model in two dtypes (its
 * norm multiplies by the weight in an einsum, its RoPE stays 16-bit), so
 * there the peak only. */
Test(synth_real, forward_with_autograd)
{
    gm_synth_config_t c = snapshot_model(2560, 32, 32, 10240, 128, GM_SYNTH_MODE_FORWARD, 0,
                                         GM_SYNTH_OPTIMPL_LOOP);
    static peak_hist_t real, syn;
    compare_classes("lm2.7b_ctx128_forward_fp32.pickle", &c, 0.02, 0.01, &real, &syn);
    c.precision = GM_SYNTH_PREC_AMP;
    compare_classes("lm2.7b_ctx128_forward_mixed.pickle", &c, 0.02, 0.05, &real, &syn);
}

Test(synth_real, lmmedium_train_ctx128)
{
    compare_snapshot("lmmedium_ctx128_train_fp32.pickle",
                     snapshot_model(1024, 24, 16, 4096, 128, GM_SYNTH_MODE_TRAIN, 1, GM_SYNTH_OPTIMPL_PYTHON), 1);
}

Test(synth_real, lmmedium_train_ctx256)
{
    compare_snapshot("lmmedium_ctx256_train_fp32.pickle",
                     snapshot_model(1024, 24, 16, 4096, 256, GM_SYNTH_MODE_TRAIN, 1, GM_SYNTH_OPTIMPL_PYTHON), 1);
}

Test(synth_real, lmmedium_inference_ctx128)
{
    compare_snapshot("lmmedium_ctx128_inference_fp32.pickle",
                     snapshot_model(1024, 24, 16, 4096, 128, GM_SYNTH_MODE_INFERENCE, 0, GM_SYNTH_OPTIMPL_LOOP), 1);
}

Test(synth_real, lmmedium_inference_ctx256)
{
    compare_snapshot("lmmedium_ctx256_inference_fp32.pickle",
                     snapshot_model(1024, 24, 16, 4096, 256, GM_SYNTH_MODE_INFERENCE, 0, GM_SYNTH_OPTIMPL_LOOP), 1);
}

Test(synth_real, lm27b_train_ctx128)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("the 2.7B snapshot is compared in the normal build only");
#endif
    compare_snapshot("lm2.7b_ctx128_train_fp32.pickle",
                     snapshot_model(2560, 32, 32, 10240, 128, GM_SYNTH_MODE_TRAIN, 0, GM_SYNTH_OPTIMPL_LOOP), 1);
}

/* The estimate's lines are the synthesized trace's classes: at the end of
 * forward the weights, their 16-bit copies (autocast's cast cache or the
 * graph), the optimizer state, the inputs, the logits and loss, and the
 * saved activations with the linears' 16-bit input copies hold exactly the
 * estimate's bytes, in every mode, grad mode and precision. */
Test(synth, explain_agrees_with_the_estimate_term_by_term)
{
    int n = 0;
    for (int arch = 0; arch < GM_SYNTH_ARCH_COUNT; arch++)
        for (int prec = 0; prec < GM_SYNTH_PREC_COUNT; prec++)
            for (int mode = 0; mode < GM_SYNTH_MODE_COUNT; mode++)
                for (int ops = 0; ops < GM_SYNTH_OPS_COUNT; ops++)
                    for (int gm = 0; gm < GM_SYNTH_GRAD_COUNT; gm++) {
                        if (gm && mode != GM_SYNTH_MODE_INFERENCE)
                            continue;
                        gm_synth_config_t c = small(arch);
                        c.precision = prec;
                        c.mode = mode;
                        c.ops = ops;
                        c.grad_mode = gm;
                        c.warm = 1;
                        gm_synth_estimate_t e;
                        estimate(&c, &e);
                        c.steps = 2;
                        gm_error_t err = {0};
                        gm_synth_explain_t ex;
                        cr_assert_eq(gm_synth_explain(&c, &ex, &err), 0, "%s", err.msg);
                        const uint64_t *b = ex.end_bytes;
                        char what[96];
                        snprintf(what, sizeof what, "arch %d prec %d mode %d ops %d grad mode %d",
                                 arch, prec, mode, ops, gm);
                        cr_expect_eq(ex.peak, e.peak, "%s: peak", what);
                        cr_expect_eq(b[GM_SYNTH_CLASS_WEIGHTS], e.params, "%s: weights", what);
                        cr_expect_eq(b[GM_SYNTH_CLASS_WEIGHT_COPIES], e.casts, "%s: copies", what);
                        cr_expect_eq(b[GM_SYNTH_CLASS_STATE], e.optimizer, "%s: state", what);
                        cr_expect_eq(b[GM_SYNTH_CLASS_INPUTS], e.inputs, "%s: inputs", what);
                        if (mode == GM_SYNTH_MODE_INFERENCE)
                            continue; /* the last block's temporaries are still there */
                        cr_expect_eq(b[GM_SYNTH_CLASS_LOGITS], e.logits, "%s: logits", what);
                        cr_expect_eq(b[GM_SYNTH_CLASS_SAVED] + b[GM_SYNTH_CLASS_INPUT_COPIES],
                                     e.saved, "%s: saved", what);
                        cr_expect_eq(b[GM_SYNTH_CLASS_TEMPS], 0, "%s: temporaries", what);
                        cr_expect_eq(ex.forward_end, e.forward_end, "%s", what);
                        n++;
                    }
    cr_assert_gt(n, 50);
}
