/*
 * gmsim/synth.h — tensor-level training and inference traces synthesized
 * from a model and run config, and the memory estimate of the same model.
 *
 * The synthesizer plays a transformer's steps as an eager framework
 * (PyTorch) would allocate them: weights before the first step, per layer
 * the tensors autograd saves in forward and frees in reverse order in
 * backward, short-lived temporaries inside each op, weight gradients on
 * first use, optimizer state created lazily at the first step, logits and
 * loss; MARK events name the steps and phases.  docs/synth.md gives the
 * model, its formulas and their sources (Korthikanti et al., MLSys'23;
 * Rajbhandari et al., SC'20) and the measured error against real traces.
 *
 * gm_synth_estimate runs the same model without writing events and reports
 * the breakdown (parameters, gradients, optimizer state, saved activations,
 * logits, temporaries) from closed-form formulas, and the peak.
 */
#ifndef GMSIM_SYNTH_H
#define GMSIM_SYNTH_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"
#include "gmsim/json.h"
#include "gmsim/store.h"
#include "gmsim/trace.h"

GM_API_BEGIN

/* X(ENUM, "name") lists: one makes each enum and its names. */
#define GM_SYNTH_ARCHS(X) X(GPT, "gpt") X(LLAMA, "llama") X(BERT, "bert")
#define GM_SYNTH_MODES(X) X(TRAIN, "train") X(INFERENCE, "inference") X(FORWARD, "forward")
#define GM_SYNTH_PRECISIONS(X) \
    X(FP32, "fp32") X(BF16, "bf16") X(FP16, "fp16") X(MIXED, "mixed") X(AMP, "amp")
#define GM_SYNTH_OPTIMIZERS(X) X(SGD, "sgd") X(ADAM, "adam") X(ADAMW, "adamw")
#define GM_SYNTH_OPTIMPLS(X) X(FOREACH, "foreach") X(LOOP, "loop") X(PYTHON, "python")
#define GM_SYNTH_RECOMPUTES(X) X(NONE, "none") X(SELECTIVE, "selective") X(FULL, "full")
#define GM_SYNTH_ATTENTIONS(X) X(EAGER, "eager") X(FLASH, "flash")
#define GM_SYNTH_OFFLOADS(X) X(NONE, "none") X(OPTIMIZER, "optimizer") X(PARAMS, "params")
#define GM_SYNTH_OPS(X) X(NATIVE, "native") X(COMPOSITE, "composite")
#define GM_SYNTH_SEQS(X) X(FIXED, "fixed") X(UNIFORM, "uniform") X(VALUES, "values")
#define GM_SYNTH_GRAD_MODES(X) X(NO_GRAD, "no_grad") X(INFERENCE_MODE, "inference_mode")
#define GM_SYNTH_LOSSES(X) X(NONE, "none") X(CE, "ce")

#define GM__SYNTH_E(e, s) GM_SYNTH_ARCH_##e,
enum { GM_SYNTH_ARCHS(GM__SYNTH_E) GM_SYNTH_ARCH_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_MODE_##e,
enum { GM_SYNTH_MODES(GM__SYNTH_E) GM_SYNTH_MODE_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_PREC_##e,
enum { GM_SYNTH_PRECISIONS(GM__SYNTH_E) GM_SYNTH_PREC_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_OPT_##e,
enum { GM_SYNTH_OPTIMIZERS(GM__SYNTH_E) GM_SYNTH_OPT_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_OPTIMPL_##e,
enum { GM_SYNTH_OPTIMPLS(GM__SYNTH_E) GM_SYNTH_OPTIMPL_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_RECOMPUTE_##e,
enum { GM_SYNTH_RECOMPUTES(GM__SYNTH_E) GM_SYNTH_RECOMPUTE_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_ATTN_##e,
enum { GM_SYNTH_ATTENTIONS(GM__SYNTH_E) GM_SYNTH_ATTN_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_OFFLOAD_##e,
enum { GM_SYNTH_OFFLOADS(GM__SYNTH_E) GM_SYNTH_OFFLOAD_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_OPS_##e,
enum { GM_SYNTH_OPS(GM__SYNTH_E) GM_SYNTH_OPS_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_SEQ_##e,
enum { GM_SYNTH_SEQS(GM__SYNTH_E) GM_SYNTH_SEQ_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_GRAD_##e,
enum { GM_SYNTH_GRAD_MODES(GM__SYNTH_E) GM_SYNTH_GRAD_COUNT };
#undef GM__SYNTH_E
#define GM__SYNTH_E(e, s) GM_SYNTH_LOSS_##e,
enum { GM_SYNTH_LOSSES(GM__SYNTH_E) GM_SYNTH_LOSS_COUNT };
#undef GM__SYNTH_E

/* Which list a name belongs to, for gm_synth_name / gm_synth_parse. */
typedef enum gm_synth_list {
    GM_SYNTH_LIST_ARCH,
    GM_SYNTH_LIST_MODE,
    GM_SYNTH_LIST_PRECISION,
    GM_SYNTH_LIST_OPTIMIZER,
    GM_SYNTH_LIST_OPTIMPL,
    GM_SYNTH_LIST_RECOMPUTE,
    GM_SYNTH_LIST_ATTENTION,
    GM_SYNTH_LIST_OFFLOAD,
    GM_SYNTH_LIST_OPS,
    GM_SYNTH_LIST_SEQ,
    GM_SYNTH_LIST_GRAD_MODE,
    GM_SYNTH_LIST_LOSS,
} gm_synth_list_t;

/* The name of value v in list l ("?" when out of range). */
const char *gm_synth_name(gm_synth_list_t l, int v);
/* The value named `name` in list l, or -1. */
int gm_synth_parse(gm_synth_list_t l, const char *name);
/* "a|b|c": every name of list l, for messages (static text). */
const char *gm_synth_choices(gm_synth_list_t l);

typedef struct gm_synth_config {
    /* The model. */
    char model[48];     /* preset name, or "custom" */
    int arch;           /* GM_SYNTH_ARCH_*: norm, MLP, positions, biases */
    uint64_t hidden;    /* h */
    uint64_t layers;    /* L */
    uint64_t heads;     /* a */
    uint64_t kv_heads;  /* grouped-query attention; 0 = heads */
    uint64_t ffn;       /* f; 0 = 4h (gpt, bert) or the llama rule */
    uint64_t vocab;     /* V */
    uint64_t positions; /* learned position table rows (gpt, bert) */
    int tied;           /* output layer shares the embedding */
    int dropout;        /* dropout layers active in training (gpt, bert) */
    int ops;            /* GM_SYNTH_OPS_*: fused kernels or elementwise code */
    /* The run. */
    uint64_t batch;
    int seq_kind;            /* GM_SYNTH_SEQ_* */
    uint64_t seq;            /* FIXED */
    uint64_t seq_lo, seq_hi; /* UNIFORM: each micro-batch draws from [lo, hi] */
    const uint64_t *seq_values; /* VALUES: cycled, one per micro-batch (not owned) */
    size_t nseq_values;
    uint64_t steps;
    int mode, precision, optimizer, optimizer_impl, recompute, attention;
    /* inference: GM_SYNTH_GRAD_NO_GRAD (torch.no_grad) or _INFERENCE_MODE
     * (torch.inference_mode); under amp only no_grad keeps autocast's
     * cast cache (docs/synth.md) */
    int grad_mode;
    /* GM_SYNTH_LOSS_*, or -1: the mode's own (ce in train, none in
     * forward and inference); gm_synth_loss gives the one in force */
    int loss;
    uint64_t grad_accum; /* micro-batches per optimizer step */
    int zero;            /* ZeRO stage 0–3 */
    uint64_t dp, tp;     /* data- and tensor-parallel degrees */
    int offload;         /* GM_SYNTH_OFFLOAD_* */
    uint64_t seed;
    int warm; /* optimizer state exists before the first step (after warm-up);
                 its allocations come first, flagged GM_EVENT_PREEXISTING */
} gm_synth_config_t;

/* Defaults: gpt2 shape, batch 8, seq 1024, 2 steps, train, fp32, adamw
 * (foreach), no recompute, eager attention, no ZeRO/TP/offload, seed 1. */
void gm_synth_config_default(gm_synth_config_t *cfg);

/* ---- presets ------------------------------------------------------------- */

typedef struct gm_synth_preset {
    const char *name;
    int arch;
    uint64_t hidden, layers, heads, kv_heads, ffn, vocab, positions;
    int tied;
    const char *source; /* where the shape is published */
    uint64_t context;   /* the positions it was trained for (max positions) */
} gm_synth_preset_t;

size_t gm_synth_preset_count(void);
const gm_synth_preset_t *gm_synth_preset_at(size_t i); /* NULL out of range */
const gm_synth_preset_t *gm_synth_preset_find(const char *name);

/* Set cfg's model fields from preset `name`; GM_ENOTFOUND (message lists
 * the presets) if unknown. */
int gm_synth_apply_preset(gm_synth_config_t *cfg, const char *name, gm_error_t *err);

/* Validate cfg (GM_EINVAL naming the field: heads not dividing hidden,
 * tp not dividing heads, zero without dp, a zero size…). */
int gm_synth_check(const gm_synth_config_t *cfg, gm_error_t *err);

/* The loss in force: cfg's, or its mode's default (ce in train, none in
 * forward and inference). */
int gm_synth_loss(const gm_synth_config_t *cfg);

/* The model's parameter count (the whole model, before any sharding). */
uint64_t gm_synth_param_count(const gm_synth_config_t *cfg);

/* ---- events -------------------------------------------------------------- */

/* Tag indices of the MARK events gm_synth_run emits. */
#define GM_SYNTH_TAGS(X) X(STEP, "step") X(FORWARD, "forward") X(BACKWARD, "backward") \
    X(OPTIMIZER, "optimizer")
enum {
#define GM__SYNTH_TAG(e, s) GM_SYNTH_TAG_##e,
    GM_SYNTH_TAGS(GM__SYNTH_TAG)
#undef GM__SYNTH_TAG
    GM_SYNTH_TAG_COUNT
};
const char *gm_synth_tag_name(unsigned tag);

/* Receives events in trace order, n at a time (stream index 0; MARK tags
 * are GM_SYNTH_TAG_*); returns 0 or a GM_E* code with err filled, which
 * stops the run. */
typedef int (*gm_synth_sink_fn)(void *ctx, const gm_event_t *ev, size_t n, gm_error_t *err);

/* What a run produced. */
typedef struct gm_synth_stats {
    uint64_t events, allocs, frees, marks;
    uint64_t peak;          /* peak requested bytes (live sum) */
    uint64_t peak_event;    /* index of the event that reached it */
    unsigned peak_phase;    /* GM_SYNTH_TAG_FORWARD, _BACKWARD or _OPTIMIZER: where */
    uint64_t allocs_last_step; /* ALLOCs of the last step */
    /* Live bytes at the end of the last forward pass: at the "backward"
     * MARK in train, after the loss (or the logits) in forward and
     * inference (weights, state, saved activations, casts and logits). */
    uint64_t live_at_backward;
} gm_synth_stats_t;

/* What each allocation of a synthesized trace is, for gm_synth_explain. */
#define GM_SYNTH_CLASSES(X)                                                              \
    X(WEIGHTS, "weights") X(WEIGHT_COPIES, "weight copies") X(STATE, "optimizer state") \
    X(GRADS, "gradients") X(INPUTS, "inputs") X(SAVED, "saved activations")            \
    X(INPUT_COPIES, "16-bit input copies") X(LOGITS, "logits and loss")                 \
    X(TEMPS, "temporaries")
enum {
#define GM__SYNTH_CLASS(e, s) GM_SYNTH_CLASS_##e,
    GM_SYNTH_CLASSES(GM__SYNTH_CLASS)
#undef GM__SYNTH_CLASS
    GM_SYNTH_CLASS_COUNT
};
/* The name of class k ("weights", "weight copies", ...), NULL out of range. */
const char *gm_synth_class_name(unsigned k);

/* Where a synthesized trace's bytes are: the live bytes and allocations of
 * each class at the trace's peak (its first instant) and at the end of its
 * last forward pass (gm_synth_stats_t's live_at_backward). */
typedef struct gm_synth_explain {
    uint64_t peak, peak_event;
    unsigned peak_phase; /* GM_SYNTH_TAG_* */
    uint64_t peak_bytes[GM_SYNTH_CLASS_COUNT], peak_allocs[GM_SYNTH_CLASS_COUNT];
    uint64_t forward_end;
    uint64_t end_bytes[GM_SYNTH_CLASS_COUNT], end_allocs[GM_SYNTH_CLASS_COUNT];
} gm_synth_explain_t;

/* Run cfg (as gm_synth_run, without events) and split its peak and its
 * end of forward by class.  GM_EINVAL for a bad config, GM_ENOMEM. */
int gm_synth_explain(const gm_synth_config_t *cfg, gm_synth_explain_t *out, gm_error_t *err);

/* Run cfg's steps, sending every event to sink (NULL: count only).  Every
 * allocation is freed by the end except weights, gradients and optimizer
 * state, which live on as in a job between steps.  GM_EINVAL for a bad
 * config, GM_ENOMEM, or the sink's error. */
int gm_synth_run(const gm_synth_config_t *cfg, gm_synth_sink_fn sink, void *ctx,
                 gm_synth_stats_t *stats, gm_error_t *err);

/* Write cfg's trace into w: interns stream 0 and the tags, sets the
 * attributes ("source": "synth", "model", "seq_len", "batch", "config")
 * and adds the events; does not finish w.  The writer's errors. */
int gm_synth_write(const gm_synth_config_t *cfg, gm_writer_t *w, gm_synth_stats_t *stats,
                   gm_error_t *err);

/* The whole config as one JSON object (the "config" attribute). */
void gm_synth_config_json(const gm_synth_config_t *cfg, gm_json_t *j);

/* ---- estimate ------------------------------------------------------------ */

typedef struct gm_synth_estimate {
    uint64_t param_count;  /* Ψ, whole model */
    uint64_t seq;          /* the sequence length estimated (the largest one) */
    /* Per device, bytes, from closed-form formulas: */
    uint64_t params;       /* weights on the device (incl. 16-bit copies) */
    uint64_t grads;        /* weight gradients */
    uint64_t optimizer;    /* optimizer state (m, v, fp32 master) */
    uint64_t saved;        /* activations saved for backward, all layers */
    uint64_t saved_layer;  /* of which one layer */
    uint64_t casts;        /* amp: 16-bit weight copies alive at the end of forward */
    uint64_t logits;       /* logits and loss tensors at the end of forward */
    uint64_t inputs;       /* token ids and labels */
    /* From running the model (gm_synth_run without events): */
    uint64_t peak;         /* peak requested bytes of a step */
    uint64_t temporaries;  /* peak − the standing set of the peak's phase */
    unsigned peak_phase;   /* GM_SYNTH_TAG_* where the peak falls */
    uint64_t forward_end;  /* params + optimizer + saved + casts + logits + inputs
                              (+ grads kept across micro-batches): live at
                              backward start */
    uint64_t allocs_per_step;
    /* The peak's live bytes by their order in s: each live allocation's
     * size at s and at twice s (half s where twice is out of range) differ
     * by a factor 1, 2 or 4; [3]: any other (none in a valid model).  All 0
     * when s is 1 and twice s is out of range. */
    uint64_t peak_by_order[4];
    int dominant;          /* the largest of peak_by_order (0, 1, 2), -1 none */
    uint64_t max_positions; /* the preset's context (gpt, bert: the position
                               table), 0 unknown */
} gm_synth_estimate_t;

/* The per-layer saved-activation formula of cfg as text, in terms of s
 * (sequence), b (batch), h, f, a, kv, d = h/a, e (activation bytes), t
 * (tensor-parallel degree): "11*sbh*e + 4*sbf*e/t + ...". */
void gm_synth_layer_formula(const gm_synth_config_t *cfg, char *buf, size_t len);

/* Estimate cfg (its largest sequence length, 2 warm steps).  GM_EINVAL for
 * a bad config, GM_ENOMEM. */
int gm_synth_estimate(const gm_synth_config_t *cfg, gm_synth_estimate_t *out, gm_error_t *err);

GM_API_END

#endif
