/*
 * synth/model.h — the synthesizer's model, inside the library: the
 * parameter tensors and their roles, the activation sizes of a
 * micro-batch, and the config's small predicates and byte sizes (inline:
 * the generator calls them on every tensor); synth/model.c holds the
 * rest (names, presets, the config's check, the parameter list, the
 * closed-form sizes).  The model and its sources are in docs/synth.md.
 */
#ifndef GM_SYNTH_MODEL_H
#define GM_SYNTH_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/synth.h"

/* ---- names ---------------------------------------------------------------- */

extern const char *const syn_tag_names[];

/* ---- derived shapes --------------------------------------------------------- */

static inline uint64_t syn_kv(const gm_synth_config_t *c) { return c->kv_heads ? c->kv_heads : c->heads; }

/* The FFN width: given, else 4h (gpt, bert), else LLaMA's rule
 * 256·ceil((2/3·4h)/256). */
uint64_t syn_ffn(const gm_synth_config_t *c);
uint64_t syn_max_seq(const gm_synth_config_t *c);

/* ---- parameters -------------------------------------------------------------- */

enum { SYN_P_GLOBAL = -1 };

typedef struct syn_param {
    uint64_t numel;  /* elements on this rank after tensor parallelism */
    int32_t layer;   /* -1 for embeddings, head, final norm */
    uint8_t role;    /* SYN_R_* */
} syn_param_t;

enum { SYN_R_EMB, SYN_R_POS, SYN_R_NORM, SYN_R_QKV, SYN_R_Q, SYN_R_K, SYN_R_V, SYN_R_O,
       SYN_R_FC1, SYN_R_FC2, SYN_R_GATE, SYN_R_UP, SYN_R_DOWN, SYN_R_BIAS, SYN_R_HEAD,
       SYN_R_POOL };

/* The parameter tensors of the model on one tensor-parallel rank, in
 * module order.  Returns the count; out may be NULL (count only). */
size_t syn_params(const gm_synth_config_t *c, syn_param_t *out);

/* ---- byte sizes ------------------------------------------------------------------ */

/* A training step: backward, gradients and the optimizer. */
static inline int syn_train(const gm_synth_config_t *c) { return c->mode == GM_SYNTH_MODE_TRAIN; }

/* Autograd records the forward (train, forward): ops save for backward. */
static inline int syn_grad(const gm_synth_config_t *c) { return c->mode != GM_SYNTH_MODE_INFERENCE; }

/* A cross-entropy loss follows the logits. */
static inline int syn_loss(const gm_synth_config_t *c) { return gm_synth_loss(c) == GM_SYNTH_LOSS_CE; }

/* Activation element bytes. */
static inline uint64_t syn_act_bytes(const gm_synth_config_t *c)
{
    return c->precision == GM_SYNTH_PREC_FP32 ? 4 : 2;
}

/* Weight (and gradient) element bytes: 16-bit weights under mixed
 * precision (the fp32 master copy is optimizer state); fp32 under amp
 * (torch.autocast casts 16-bit copies for the matmuls). */
static inline uint64_t syn_param_bytes(const gm_synth_config_t *c)
{
    return c->precision == GM_SYNTH_PREC_AMP ? 4 : syn_act_bytes(c);
}

static inline int syn_amp(const gm_synth_config_t *c) { return c->precision == GM_SYNTH_PREC_AMP; }

/* amp: autocast caches its 16-bit copy of a weight (an fp32 leaf that
 * requires grad) until the context exits, except under inference_mode
 * (PyTorch's cached_cast: !InferenceMode::is_enabled()). */
static inline int syn_cast_cached(const gm_synth_config_t *c)
{
    return syn_amp(c) && (syn_grad(c) || c->grad_mode == GM_SYNTH_GRAD_NO_GRAD);
}

static inline int syn_has_adam(const gm_synth_config_t *c) { return c->optimizer != GM_SYNTH_OPT_SGD; }

/* Optimizer state tensors per parameter and their element bytes. */
static inline unsigned syn_state_count(const gm_synth_config_t *c)
{
    return (syn_has_adam(c) ? 2u : 0u) + (c->precision == GM_SYNTH_PREC_MIXED ? 1u : 0u);
}

static inline uint64_t syn_state_bytes(const gm_synth_config_t *c)
{
    return c->precision == GM_SYNTH_PREC_FP32 || c->precision == GM_SYNTH_PREC_MIXED ||
                   c->precision == GM_SYNTH_PREC_AMP
               ? 4
               : 2;
}

static inline int syn_state_on_device(const gm_synth_config_t *c)
{
    return syn_train(c) && c->offload == GM_SYNTH_OFFLOAD_NONE;
}

static inline uint64_t syn_shard(uint64_t numel, uint64_t dp) { return (numel + dp - 1) / dp; }

/* Elements of a parameter kept on the device between uses. */
static inline uint64_t syn_param_resident(const gm_synth_config_t *c, uint64_t numel)
{
    if (c->offload == GM_SYNTH_OFFLOAD_PARAMS)
        return 0;
    return c->zero >= 3 && syn_train(c) ? syn_shard(numel, c->dp) : numel;
}

static inline int syn_param_gathered(const gm_synth_config_t *c)
{
    return c->offload == GM_SYNTH_OFFLOAD_PARAMS || (c->zero >= 3 && syn_train(c));
}

static inline uint64_t syn_grad_resident(const gm_synth_config_t *c, uint64_t numel)
{
    return c->zero >= 2 ? syn_shard(numel, c->dp) : numel;
}

static inline uint64_t syn_state_resident(const gm_synth_config_t *c, uint64_t numel)
{
    return c->zero >= 1 ? syn_shard(numel, c->dp) : numel;
}

/* Activation sizes of one micro-batch of sequence length s.  Under amp e
 * is 2 (what a matmul returns) and the tensors that autocast's rules make
 * fp32 are sized so: the residual stream and the norms (fp32 embedding
 * plus 16-bit matmul outputs promote to fp32), the softmax (Sp), the
 * composite RoPE (fp32 cos/sin buffers: Uqr, Ukvr). */
typedef struct syn_sizes {
    uint64_t U;   /* s·b·h·e (amp: ·4): the residual stream, norms, dropout outputs */
    uint64_t Uh;  /* s·b·h·e: a matmul's output of width h, or its 16-bit input copy */
    uint64_t Uqr, Ukvr; /* RoPE's outputs (amp composite: fp32, else Uq, Ukv) */
    uint64_t Sp;  /* b·(a/t)·s²·e (amp: ·4): softmax, exp and the probabilities */
    uint64_t Rhe; /* b·(a/t)·s·e: per-row maxima in the activation type */
    uint64_t Re;  /* s·b·e: per-token maxima in the activation type */
    uint64_t Uq;  /* s·b·h·e/t: queries, attention output (heads split by tp) */
    uint64_t Ukv; /* s·b·kv·d·e/t: keys and values */
    uint64_t F;   /* s·b·f·e/t: MLP hidden */
    uint64_t S;   /* b·(a/t)·s²·e: attention scores */
    uint64_t M;   /* b·(a/t)·s² bytes: attention dropout mask */
    uint64_t C;   /* s² bytes: a causal mask built per layer (composite ops) */
    uint64_t P;   /* s·8: the positions (int64) the causal mask is built from */
    uint64_t Mu;  /* s·b·h bytes: hidden dropout mask */
    uint64_t R;   /* s·b·4: per-token fp32 statistics */
    uint64_t Rh;  /* b·(a/t)·s·4: per-row fp32 statistics */
    uint64_t L;   /* s·b·V·e/t: logits */
    uint64_t L32; /* s·b·V·4/t: logits upcast for the loss */
    uint64_t ids; /* s·b·8: token ids (int64) */
} syn_sizes_t;

void syn_sizes(const gm_synth_config_t *c, uint64_t s, syn_sizes_t *z);

static inline int syn_dropout(const gm_synth_config_t *c) { return c->dropout && syn_train(c); }
static inline int syn_composite(const gm_synth_config_t *c) { return c->ops == GM_SYNTH_OPS_COMPOSITE; }
static inline int syn_llama(const gm_synth_config_t *c) { return c->arch == GM_SYNTH_ARCH_LLAMA; }
static inline int syn_gqa_expand(const gm_synth_config_t *c)
{
    return syn_kv(c) < c->heads && c->attention == GM_SYNTH_ATTN_EAGER;
}

/* Eager attention written as tensor code (composite ops) in a causal model:
 * each layer builds its s×s boolean mask (from an int64 arange of the
 * positions), and torch.where saves the mask for its backward. */
static inline int syn_causal_mask(const gm_synth_config_t *c)
{
    return c->ops == GM_SYNTH_OPS_COMPOSITE && c->attention == GM_SYNTH_ATTN_EAGER &&
           c->arch != GM_SYNTH_ARCH_BERT;
}

/* Closed forms (synth/model.c): what one layer keeps from its forward to
 * its backward, every activation saved at the end of forward, and the
 * logits and loss tensors alive then. */
uint64_t syn_layer_saved(const gm_synth_config_t *c, const syn_sizes_t *z);
uint64_t syn_saved_total(const gm_synth_config_t *c, const syn_sizes_t *z);
uint64_t syn_logits_total(const gm_synth_config_t *c, const syn_sizes_t *z);

#endif
