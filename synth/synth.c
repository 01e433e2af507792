/*
 * synth/synth.c — tensor-level traces from a transformer config
 * (gmsim/synth.h; the model and its sources are in docs/synth.md).
 *
 * The generator plays what an eager framework (PyTorch autograd with the
 * caching allocator underneath) asks of the allocator, tensor by tensor:
 *
 *   load      every weight tensor, one allocation each (with mixed precision
 *             the fp32 master copy too); with `warm`, also the optimizer
 *             state, all flagged GM_EVENT_PREEXISTING;
 *   step      MARK "step"; zero_grad(set_to_none=True) frees the gradients;
 *   forward   MARK "forward"; token ids and labels; per layer the ops of a
 *             pre-norm block (norm, q/k/v, RoPE, attention, output
 *             projection, residual, norm, MLP, residual): each op allocates
 *             its output; a tensor autograd saves is kept in the op's
 *             backward node, the others are freed as soon as their consumer
 *             ran; then the final norm, logits and the loss;
 *   backward  MARK "backward"; the nodes in reverse: each allocates the
 *             gradient of its input, one gradient per op it recorded in
 *             forward (one alive at a time), its weights' gradients on first use
 *             (a temporary plus an in-place add when they already exist:
 *             gradient accumulation), frees the gradient it consumed and
 *             its saved tensors; residual joins allocate the summed grad;
 *   optimizer MARK "optimizer"; the state (m, v) allocated lazily at the
 *             first step, then the update's temporaries: one list of
 *             parameter-sized tensors at once (foreach, PyTorch's default
 *             on CUDA), two per parameter (loop: torch's single-tensor
 *             path), or fourteen per parameter with m and v replaced, the
 *             old ones held until the next parameter (python: an optimizer
 *             written as out-of-place tensor arithmetic).
 *
 * Composite ops with eager attention (code written as tensor expressions,
 * as from-scratch models are) follow Python's lifetimes: a tensor no
 * autograd node saves lives as long as the name holding it, a function's
 * locals until it returns; so the softmax's division sees four s²-sized
 * tensors, in inference too, and the attention node's backward is the
 * elementwise graph's own (syn_attention_backward: up to six s²-sized
 * tensors of the layer at once).  These rules, per order in s and per
 * lifetime, are checked against real captures aligned allocation by
 * allocation (tests/test_synth_scaling.c, docs/validation.md).
 *
 * Recompute: `full` keeps only each layer's input and reruns the layer's
 * forward at the start of its backward; `selective` drops the s²-sized
 * attention tensors and re-allocates them in the attention node's
 * backward.  ZeRO shards state (1), gradients (2) and weights (3, gathered
 * per layer in forward and backward) over dp ranks; tensor parallelism
 * divides the sharded matrices and the activations inside attention and
 * MLP by tp; offloaded state or weights leave the device trace.  Under
 * amp (torch.autocast) the weights stay fp32 and each layer's forward
 * casts 16-bit copies of its matrices, saved for its backward.
 *
 * Invariant used by the tests: the live bytes at each "backward" MARK are
 * exactly params + optimizer + saved + logits + inputs (+ gradients kept
 * from earlier micro-batches) as gm_synth_estimate's closed-form formulas
 * give them (synth_layer_saved and friends below); every temporary is
 * freed by then.  The generator is deterministic: a config and seed give
 * the same events.  Its memory follows the live set (an id → size map and
 * one step's backward nodes), not the trace length, and it writes straight
 * to the sink: tens of millions of events per second.
 */
#include "gmsim/synth.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "base/bits.h"
#include "base/idmap.h"

/* ---- names ---------------------------------------------------------------- */

#define SYN_NAME(e, s) s,
static const char *const syn_arch_names[] = {GM_SYNTH_ARCHS(SYN_NAME)};
static const char *const syn_mode_names[] = {GM_SYNTH_MODES(SYN_NAME)};
static const char *const syn_prec_names[] = {GM_SYNTH_PRECISIONS(SYN_NAME)};
static const char *const syn_opt_names[] = {GM_SYNTH_OPTIMIZERS(SYN_NAME)};
static const char *const syn_optimpl_names[] = {GM_SYNTH_OPTIMPLS(SYN_NAME)};
static const char *const syn_recompute_names[] = {GM_SYNTH_RECOMPUTES(SYN_NAME)};
static const char *const syn_attn_names[] = {GM_SYNTH_ATTENTIONS(SYN_NAME)};
static const char *const syn_offload_names[] = {GM_SYNTH_OFFLOADS(SYN_NAME)};
static const char *const syn_ops_names[] = {GM_SYNTH_OPS(SYN_NAME)};
static const char *const syn_seq_names[] = {GM_SYNTH_SEQS(SYN_NAME)};
static const char *const syn_tag_names[] = {GM_SYNTH_TAGS(SYN_NAME)};
#undef SYN_NAME

typedef struct syn_list {
    const char *const *names;
    int n;
    const char *choices;
} syn_list_t;

#define SYN_CHOICE(e, s) "|" s
#define SYN_LIST(arr, X) {arr, (int)(sizeof arr / sizeof arr[0]), &(X(SYN_CHOICE))[1]}
static const syn_list_t syn_lists[] = {
    SYN_LIST(syn_arch_names, GM_SYNTH_ARCHS),
    SYN_LIST(syn_mode_names, GM_SYNTH_MODES),
    SYN_LIST(syn_prec_names, GM_SYNTH_PRECISIONS),
    SYN_LIST(syn_opt_names, GM_SYNTH_OPTIMIZERS),
    SYN_LIST(syn_optimpl_names, GM_SYNTH_OPTIMPLS),
    SYN_LIST(syn_recompute_names, GM_SYNTH_RECOMPUTES),
    SYN_LIST(syn_attn_names, GM_SYNTH_ATTENTIONS),
    SYN_LIST(syn_offload_names, GM_SYNTH_OFFLOADS),
    SYN_LIST(syn_ops_names, GM_SYNTH_OPS),
    SYN_LIST(syn_seq_names, GM_SYNTH_SEQS),
};
#undef SYN_LIST
#undef SYN_CHOICE

const char *gm_synth_name(gm_synth_list_t l, int v)
{
    if ((unsigned)l >= sizeof syn_lists / sizeof syn_lists[0] || v < 0 || v >= syn_lists[l].n)
        return "?";
    return syn_lists[l].names[v];
}

int gm_synth_parse(gm_synth_list_t l, const char *name)
{
    if ((unsigned)l >= sizeof syn_lists / sizeof syn_lists[0] || name == NULL)
        return -1;
    for (int i = 0; i < syn_lists[l].n; i++)
        if (strcmp(syn_lists[l].names[i], name) == 0)
            return i;
    return -1;
}

const char *gm_synth_choices(gm_synth_list_t l)
{
    if ((unsigned)l >= sizeof syn_lists / sizeof syn_lists[0])
        return "";
    return syn_lists[l].choices;
}

const char *gm_synth_tag_name(unsigned tag)
{
    return tag < GM_SYNTH_TAG_COUNT ? syn_tag_names[tag] : NULL;
}

/* ---- presets -------------------------------------------------------------- */

/* Published shapes.  ffn 0 = 4h.  Sources: GPT-2 (Radford et al. 2019, the
 * released configs); BERT (Devlin et al. 2019, Table/configs); LLaMA
 * (Touvron et al. 2023, Table 2; ffn from the released params.json:
 * multiple_of 256 rule); Llama 2 70B GQA 8 KV heads (Touvron et al. 2023b);
 * Llama 3 (Meta's released config.json); Mistral 7B (Jiang et al. 2023,
 * Table 1); TinyLlama (Zhang et al. 2024); OPT (Zhang et al. 2022).  The
 * last column is the context the model was trained for (its position table,
 * or max_position_embeddings of the released config for RoPE models). */
static const gm_synth_preset_t syn_presets[] = {
    {"gpt2", GM_SYNTH_ARCH_GPT, 768, 12, 12, 0, 0, 50257, 1024, 1, "GPT-2 small (Radford et al. 2019)", 1024},
    {"gpt2-medium", GM_SYNTH_ARCH_GPT, 1024, 24, 16, 0, 0, 50257, 1024, 1, "GPT-2 medium (Radford et al. 2019)", 1024},
    {"gpt2-large", GM_SYNTH_ARCH_GPT, 1280, 36, 20, 0, 0, 50257, 1024, 1, "GPT-2 large (Radford et al. 2019)", 1024},
    {"gpt2-xl", GM_SYNTH_ARCH_GPT, 1600, 48, 25, 0, 0, 50257, 1024, 1, "GPT-2 XL (Radford et al. 2019)", 1024},
    {"opt-1.3b", GM_SYNTH_ARCH_GPT, 2048, 24, 32, 0, 8192, 50272, 2048, 1, "OPT-1.3B (Zhang et al. 2022, Table 1)", 2048},
    {"bert-base", GM_SYNTH_ARCH_BERT, 768, 12, 12, 0, 3072, 30522, 512, 1, "BERT-base uncased (Devlin et al. 2019)", 512},
    {"bert-large", GM_SYNTH_ARCH_BERT, 1024, 24, 16, 0, 4096, 30522, 512, 1, "BERT-large uncased (Devlin et al. 2019)", 512},
    {"tinyllama-1.1b", GM_SYNTH_ARCH_LLAMA, 2048, 22, 32, 4, 5632, 32000, 0, 0, "TinyLlama 1.1B (Zhang et al. 2024)", 2048},
    {"llama-7b", GM_SYNTH_ARCH_LLAMA, 4096, 32, 32, 0, 11008, 32000, 0, 0, "LLaMA 7B (Touvron et al. 2023)", 2048},
    {"llama-13b", GM_SYNTH_ARCH_LLAMA, 5120, 40, 40, 0, 13824, 32000, 0, 0, "LLaMA 13B (Touvron et al. 2023)", 2048},
    {"llama-30b", GM_SYNTH_ARCH_LLAMA, 6656, 60, 52, 0, 17920, 32000, 0, 0, "LLaMA 33B (Touvron et al. 2023)", 2048},
    {"llama-65b", GM_SYNTH_ARCH_LLAMA, 8192, 80, 64, 0, 22016, 32000, 0, 0, "LLaMA 65B (Touvron et al. 2023)", 2048},
    {"llama-70b", GM_SYNTH_ARCH_LLAMA, 8192, 80, 64, 8, 28672, 32000, 0, 0, "Llama 2 70B, GQA (Touvron et al. 2023b)", 4096},
    {"llama3-8b", GM_SYNTH_ARCH_LLAMA, 4096, 32, 32, 8, 14336, 128256, 0, 0, "Llama 3 8B (Meta, config.json)", 8192},
    {"llama3-70b", GM_SYNTH_ARCH_LLAMA, 8192, 80, 64, 8, 28672, 128256, 0, 0, "Llama 3 70B (Meta, config.json)", 8192},
    {"mistral-7b", GM_SYNTH_ARCH_LLAMA, 4096, 32, 32, 8, 14336, 32000, 0, 0, "Mistral 7B (Jiang et al. 2023)", 32768},
};

#define SYN_NPRESETS (sizeof syn_presets / sizeof syn_presets[0])

size_t gm_synth_preset_count(void) { return SYN_NPRESETS; }

const gm_synth_preset_t *gm_synth_preset_at(size_t i)
{
    return i < SYN_NPRESETS ? &syn_presets[i] : NULL;
}

const gm_synth_preset_t *gm_synth_preset_find(const char *name)
{
    for (size_t i = 0; name && i < SYN_NPRESETS; i++)
        if (strcmp(syn_presets[i].name, name) == 0)
            return &syn_presets[i];
    return NULL;
}

int gm_synth_apply_preset(gm_synth_config_t *cfg, const char *name, gm_error_t *err)
{
    const gm_synth_preset_t *p = gm_synth_preset_find(name);
    if (p == NULL) {
        char known[512];
        size_t used = 0;
        known[0] = '\0';
        for (size_t i = 0; i < SYN_NPRESETS && used < sizeof known; i++)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
                                     syn_presets[i].name);
        return gm_error_set(err, GM_ENOTFOUND, "unknown model '%s' (known: %s)", name, known);
    }
    snprintf(cfg->model, sizeof cfg->model, "%s", p->name);
    cfg->arch = p->arch;
    cfg->hidden = p->hidden;
    cfg->layers = p->layers;
    cfg->heads = p->heads;
    cfg->kv_heads = p->kv_heads;
    cfg->ffn = p->ffn;
    cfg->vocab = p->vocab;
    cfg->positions = p->positions;
    cfg->tied = p->tied;
    cfg->dropout = p->arch != GM_SYNTH_ARCH_LLAMA;
    cfg->ops = GM_SYNTH_OPS_NATIVE;
    return 0;
}

void gm_synth_config_default(gm_synth_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    gm_synth_apply_preset(cfg, "gpt2", NULL);
    cfg->batch = 8;
    cfg->seq_kind = GM_SYNTH_SEQ_FIXED;
    cfg->seq = 1024;
    cfg->steps = 2;
    cfg->mode = GM_SYNTH_MODE_TRAIN;
    cfg->precision = GM_SYNTH_PREC_FP32;
    cfg->optimizer = GM_SYNTH_OPT_ADAMW;
    cfg->optimizer_impl = GM_SYNTH_OPTIMPL_FOREACH;
    cfg->recompute = GM_SYNTH_RECOMPUTE_NONE;
    cfg->attention = GM_SYNTH_ATTN_EAGER;
    cfg->grad_accum = 1;
    cfg->dp = 1;
    cfg->tp = 1;
    cfg->offload = GM_SYNTH_OFFLOAD_NONE;
    cfg->seed = 1;
}

/* ---- derived shapes --------------------------------------------------------- */

static uint64_t syn_kv(const gm_synth_config_t *c) { return c->kv_heads ? c->kv_heads : c->heads; }

/* The FFN width: given, else 4h (gpt, bert), else LLaMA's rule
 * 256·ceil((2/3·4h)/256). */
static uint64_t syn_ffn(const gm_synth_config_t *c)
{
    if (c->ffn)
        return c->ffn;
    if (c->arch == GM_SYNTH_ARCH_LLAMA) {
        uint64_t f = 8 * c->hidden / 3;
        return (f + 255) / 256 * 256;
    }
    return 4 * c->hidden;
}

static uint64_t syn_max_seq(const gm_synth_config_t *c)
{
    switch (c->seq_kind) {
    case GM_SYNTH_SEQ_UNIFORM: return c->seq_hi;
    case GM_SYNTH_SEQ_VALUES: {
        uint64_t m = 0;
        for (size_t i = 0; i < c->nseq_values; i++)
            if (c->seq_values[i] > m)
                m = c->seq_values[i];
        return m;
    }
    default: return c->seq;
    }
}

int gm_synth_check(const gm_synth_config_t *c, gm_error_t *err)
{
#define SYN_REQUIRE(cond, ...)                                  \
    do {                                                        \
        if (!(cond))                                            \
            return gm_error_set(err, GM_EINVAL, __VA_ARGS__);   \
    } while (0)
    SYN_REQUIRE(c->arch >= 0 && c->arch < GM_SYNTH_ARCH_COUNT, "invalid architecture");
    SYN_REQUIRE(c->hidden > 0 && c->layers > 0 && c->heads > 0 && c->vocab > 0,
                "hidden size, layers, heads and vocabulary must be positive");
    SYN_REQUIRE(c->hidden <= (1u << 20) && c->layers <= 4096 && c->vocab <= (1u << 24) &&
                    c->heads <= c->hidden,
                "model shape out of range (hidden ≤ 1048576, layers ≤ 4096, vocab ≤ 16777216)");
    SYN_REQUIRE(c->hidden % c->heads == 0, "heads (%" PRIu64 ") must divide hidden (%" PRIu64 ")",
                c->heads, c->hidden);
    SYN_REQUIRE(syn_kv(c) <= c->heads && c->heads % syn_kv(c) == 0,
                "kv heads (%" PRIu64 ") must divide heads (%" PRIu64 ")", syn_kv(c), c->heads);
    SYN_REQUIRE(syn_ffn(c) <= (1u << 22), "ffn size out of range");
    SYN_REQUIRE(c->batch >= 1 && c->batch <= 65536, "batch must be 1 to 65536");
    SYN_REQUIRE(c->steps >= 1 && c->steps <= 100000, "steps must be 1 to 100000");
    SYN_REQUIRE(c->grad_accum >= 1 && c->grad_accum <= 4096, "grad accumulation must be 1 to 4096");
    switch (c->seq_kind) {
    case GM_SYNTH_SEQ_FIXED:
        SYN_REQUIRE(c->seq >= 1 && c->seq <= (1u << 20), "sequence length must be 1 to 1048576");
        break;
    case GM_SYNTH_SEQ_UNIFORM:
        SYN_REQUIRE(c->seq_lo >= 1 && c->seq_lo <= c->seq_hi && c->seq_hi <= (1u << 20),
                    "uniform sequence lengths need 1 ≤ LO ≤ HI ≤ 1048576");
        break;
    case GM_SYNTH_SEQ_VALUES:
        SYN_REQUIRE(c->nseq_values > 0 && c->seq_values != NULL, "no sequence lengths given");
        for (size_t i = 0; i < c->nseq_values; i++)
            SYN_REQUIRE(c->seq_values[i] >= 1 && c->seq_values[i] <= (1u << 20),
                        "sequence length %zu out of range (1 to 1048576)", i + 1);
        break;
    default: SYN_REQUIRE(0, "invalid sequence kind");
    }
    SYN_REQUIRE(c->mode >= 0 && c->mode < GM_SYNTH_MODE_COUNT, "invalid mode");
    SYN_REQUIRE(c->precision >= 0 && c->precision < GM_SYNTH_PREC_COUNT, "invalid precision");
    SYN_REQUIRE(c->optimizer >= 0 && c->optimizer < GM_SYNTH_OPT_COUNT, "invalid optimizer");
    SYN_REQUIRE(c->optimizer_impl >= 0 && c->optimizer_impl < GM_SYNTH_OPTIMPL_COUNT,
                "invalid optimizer implementation");
    SYN_REQUIRE(c->recompute >= 0 && c->recompute < GM_SYNTH_RECOMPUTE_COUNT, "invalid recompute");
    SYN_REQUIRE(c->attention >= 0 && c->attention < GM_SYNTH_ATTN_COUNT, "invalid attention");
    SYN_REQUIRE(c->offload >= 0 && c->offload < GM_SYNTH_OFFLOAD_COUNT, "invalid offload");
    SYN_REQUIRE(c->ops >= 0 && c->ops < GM_SYNTH_OPS_COUNT, "invalid ops");
    SYN_REQUIRE(c->zero >= 0 && c->zero <= 3, "ZeRO stage must be 0 to 3");
    SYN_REQUIRE(c->dp >= 1 && c->dp <= 65536, "data-parallel degree must be 1 to 65536");
    SYN_REQUIRE(c->tp >= 1 && c->tp <= 1024, "tensor-parallel degree must be 1 to 1024");
    SYN_REQUIRE(c->heads % c->tp == 0 && syn_kv(c) % c->tp == 0 && syn_ffn(c) % c->tp == 0,
                "tensor-parallel degree %" PRIu64 " must divide heads, kv heads and ffn size",
                c->tp);
    /* the largest activation must be a size a trace can hold (2^48 B) */
    {
        double sq = (double)syn_max_seq(c), b = (double)c->batch, e = 4;
        double scores = b * (double)(c->heads / c->tp) * sq * sq * e;
        double logits = sq * b * (double)(c->vocab / c->tp) * 4;
        double mlp = sq * b * (double)(syn_ffn(c) / c->tp) * e;
        double big = scores > logits ? scores : logits;
        big = big > mlp ? big : mlp;
        SYN_REQUIRE(big <= (double)GM_SIZE_LIMIT,
                    "batch %" PRIu64 " at sequence length %.0f needs a tensor of %.3g bytes, "
                    "above the 2^48-byte limit of a trace",
                    c->batch, sq, big);
    }
#undef SYN_REQUIRE
    return 0;
}

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
static size_t syn_params(const gm_synth_config_t *c, syn_param_t *out)
{
    size_t n = 0;
    uint64_t h = c->hidden, t = c->tp, f = syn_ffn(c), d = c->hidden / c->heads;
    uint64_t kvd = syn_kv(c) * d;
    int llama = c->arch == GM_SYNTH_ARCH_LLAMA, bias = !llama;
#define SYN_P(num, lay, r)                                                       \
    do {                                                                         \
        if (out)                                                                 \
            out[n] = (syn_param_t){.numel = (num), .layer = (lay), .role = (r)}; \
        n++;                                                                     \
    } while (0)
    SYN_P(c->vocab * h / t, SYN_P_GLOBAL, SYN_R_EMB);
    if (!llama)
        SYN_P(c->positions * h, SYN_P_GLOBAL, SYN_R_POS);
    if (c->arch == GM_SYNTH_ARCH_BERT) {
        SYN_P(2 * h, SYN_P_GLOBAL, SYN_R_POS); /* token types */
        SYN_P(h, SYN_P_GLOBAL, SYN_R_NORM);
        SYN_P(h, SYN_P_GLOBAL, SYN_R_BIAS);
    }
    for (uint64_t l = 0; l < c->layers; l++) {
        int32_t L = (int32_t)l;
        SYN_P(h, L, SYN_R_NORM);
        if (bias)
            SYN_P(h, L, SYN_R_BIAS);
        if (llama) {
            SYN_P(h * h / t, L, SYN_R_Q);
            SYN_P(kvd * h / t, L, SYN_R_K);
            SYN_P(kvd * h / t, L, SYN_R_V);
        } else {
            SYN_P(3 * h * h / t, L, SYN_R_QKV);
            SYN_P(3 * h / t, L, SYN_R_BIAS);
        }
        SYN_P(h * h / t, L, SYN_R_O);
        if (bias)
            SYN_P(h, L, SYN_R_BIAS);
        SYN_P(h, L, SYN_R_NORM);
        if (bias)
            SYN_P(h, L, SYN_R_BIAS);
        if (llama) {
            SYN_P(f * h / t, L, SYN_R_GATE);
            SYN_P(f * h / t, L, SYN_R_UP);
            SYN_P(h * f / t, L, SYN_R_DOWN);
        } else {
            SYN_P(f * h / t, L, SYN_R_FC1);
            SYN_P(f / t, L, SYN_R_BIAS);
            SYN_P(h * f / t, L, SYN_R_FC2);
            SYN_P(h, L, SYN_R_BIAS);
        }
    }
    if (c->arch != GM_SYNTH_ARCH_BERT) { /* final norm (BERT: post-norm, none) */
        SYN_P(h, SYN_P_GLOBAL, SYN_R_NORM);
        if (bias)
            SYN_P(h, SYN_P_GLOBAL, SYN_R_BIAS);
    }
    if (c->arch == GM_SYNTH_ARCH_BERT) { /* MLM head transform + decoder bias */
        SYN_P(h * h, SYN_P_GLOBAL, SYN_R_POOL);
        SYN_P(h, SYN_P_GLOBAL, SYN_R_BIAS);
        SYN_P(h, SYN_P_GLOBAL, SYN_R_NORM);
        SYN_P(h, SYN_P_GLOBAL, SYN_R_BIAS);
        SYN_P(c->vocab, SYN_P_GLOBAL, SYN_R_BIAS);
    }
    if (!c->tied)
        SYN_P(c->vocab * h / t, SYN_P_GLOBAL, SYN_R_HEAD);
#undef SYN_P
    return n;
}

uint64_t gm_synth_param_count(const gm_synth_config_t *c)
{
    gm_synth_config_t one = *c;
    one.tp = 1;
    size_t n = syn_params(&one, NULL);
    syn_param_t *p = malloc(n * sizeof *p);
    if (p == NULL)
        return 0;
    syn_params(&one, p);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += p[i].numel;
    free(p);
    return total;
}

/* ---- byte sizes ------------------------------------------------------------------ */

static int syn_train(const gm_synth_config_t *c) { return c->mode == GM_SYNTH_MODE_TRAIN; }

/* Activation element bytes. */
static uint64_t syn_act_bytes(const gm_synth_config_t *c)
{
    return c->precision == GM_SYNTH_PREC_FP32 ? 4 : 2;
}

/* Weight (and gradient) element bytes: 16-bit weights under mixed
 * precision (the fp32 master copy is optimizer state); fp32 under amp
 * (torch.autocast casts 16-bit copies for the matmuls). */
static uint64_t syn_param_bytes(const gm_synth_config_t *c)
{
    return c->precision == GM_SYNTH_PREC_AMP ? 4 : syn_act_bytes(c);
}

static int syn_amp(const gm_synth_config_t *c) { return c->precision == GM_SYNTH_PREC_AMP; }

static int syn_has_adam(const gm_synth_config_t *c) { return c->optimizer != GM_SYNTH_OPT_SGD; }

/* Optimizer state tensors per parameter and their element bytes. */
static unsigned syn_state_count(const gm_synth_config_t *c)
{
    return (syn_has_adam(c) ? 2u : 0u) + (c->precision == GM_SYNTH_PREC_MIXED ? 1u : 0u);
}

static uint64_t syn_state_bytes(const gm_synth_config_t *c)
{
    return c->precision == GM_SYNTH_PREC_FP32 || c->precision == GM_SYNTH_PREC_MIXED ||
                   c->precision == GM_SYNTH_PREC_AMP
               ? 4
               : 2;
}

static int syn_state_on_device(const gm_synth_config_t *c)
{
    return syn_train(c) && c->offload == GM_SYNTH_OFFLOAD_NONE;
}

static uint64_t syn_shard(uint64_t numel, uint64_t dp) { return (numel + dp - 1) / dp; }

/* Elements of a parameter kept on the device between uses. */
static uint64_t syn_param_resident(const gm_synth_config_t *c, uint64_t numel)
{
    if (c->offload == GM_SYNTH_OFFLOAD_PARAMS)
        return 0;
    return c->zero >= 3 && syn_train(c) ? syn_shard(numel, c->dp) : numel;
}

static int syn_param_gathered(const gm_synth_config_t *c)
{
    return c->offload == GM_SYNTH_OFFLOAD_PARAMS || (c->zero >= 3 && syn_train(c));
}

static uint64_t syn_grad_resident(const gm_synth_config_t *c, uint64_t numel)
{
    return c->zero >= 2 ? syn_shard(numel, c->dp) : numel;
}

static uint64_t syn_state_resident(const gm_synth_config_t *c, uint64_t numel)
{
    return c->zero >= 1 ? syn_shard(numel, c->dp) : numel;
}

/* Activation sizes of one micro-batch of sequence length s. */
typedef struct syn_sizes {
    uint64_t U;   /* s·b·h·e: the residual stream, norms, dropout outputs */
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

static void syn_sizes(const gm_synth_config_t *c, uint64_t s, syn_sizes_t *z)
{
    uint64_t b = c->batch, h = c->hidden, t = c->tp, e = syn_act_bytes(c);
    uint64_t at = c->heads / t, d = h / c->heads, kvt = syn_kv(c) / t;
    z->U = s * b * h * e;
    z->Uq = s * b * at * d * e;
    z->Ukv = s * b * kvt * d * e;
    z->F = s * b * (syn_ffn(c) / t) * e;
    /* autocast runs softmax in fp32; elementwise code follows its input */
    z->S = b * at * s * s * (syn_amp(c) && c->ops == GM_SYNTH_OPS_NATIVE ? 4 : e);
    z->M = b * at * s * s;
    z->C = s * s;
    z->P = s * 8;
    z->Mu = s * b * h;
    z->R = s * b * 4;
    z->Rh = b * at * s * 4;
    z->L = s * b * (c->vocab / t) * e;
    z->L32 = s * b * (c->vocab / t) * 4;
    z->ids = s * b * 8;
}

static int syn_dropout(const gm_synth_config_t *c) { return c->dropout && syn_train(c); }
static int syn_composite(const gm_synth_config_t *c) { return c->ops == GM_SYNTH_OPS_COMPOSITE; }
static int syn_llama(const gm_synth_config_t *c) { return c->arch == GM_SYNTH_ARCH_LLAMA; }
static int syn_gqa_expand(const gm_synth_config_t *c)
{
    return syn_kv(c) < c->heads && c->attention == GM_SYNTH_ATTN_EAGER;
}

/* Eager attention written as tensor code (composite ops) in a causal model:
 * each layer builds its s×s boolean mask (from an int64 arange of the
 * positions), and torch.where saves the mask for its backward. */
static int syn_causal_mask(const gm_synth_config_t *c)
{
    return c->ops == GM_SYNTH_OPS_COMPOSITE && c->attention == GM_SYNTH_ATTN_EAGER &&
           c->arch != GM_SYNTH_ARCH_BERT;
}

/* A byte count as a sum of multiples of the sizes above. */
typedef struct syn_coef {
    uint64_t U, Uq, Ukv, F, S, M, Mu, R, Rh, C;
} syn_coef_t;

static uint64_t syn_coef_bytes(const syn_coef_t *k, const syn_sizes_t *z)
{
    return k->U * z->U + k->Uq * z->Uq + k->Ukv * z->Ukv + k->F * z->F + k->S * z->S +
           k->M * z->M + k->Mu * z->Mu + k->R * z->R + k->Rh * z->Rh + k->C * z->C;
}

/* What a norm keeps for backward (its input belongs to its producer). */
static void syn_norm_coef(const gm_synth_config_t *c, syn_coef_t *k)
{
    if (syn_composite(c)) {
        k->U += 2;
        k->R += 1;
    } else {
        k->U += 1;
        k->R += syn_llama(c) ? 1 : 2;
    }
}

static uint64_t syn_norm_saved(const gm_synth_config_t *c, const syn_sizes_t *z)
{
    syn_coef_t k = {0};
    syn_norm_coef(c, &k);
    return syn_coef_bytes(&k, z);
}

/* The s²-sized part of the attention core that selective recompute drops. */
static void syn_attn_core_coef(const gm_synth_config_t *c, syn_coef_t *k)
{
    if (c->attention == GM_SYNTH_ATTN_FLASH)
        return;
    if (syn_composite(c)) {
        k->S += 2;
        k->Rh += 3;
    } else {
        k->S += 1;
    }
    if (syn_dropout(c)) {
        k->M += 1;
        k->S += 1;
    }
}

/* Closed form: what one layer keeps from its forward to its backward
 * (training, no full recompute), its output included. */
static void syn_layer_coef(const gm_synth_config_t *c, syn_coef_t *k)
{
    memset(k, 0, sizeof *k);
    syn_norm_coef(c, k);
    syn_norm_coef(c, k);
    int vcopy = syn_composite(c) && c->attention == GM_SYNTH_ATTN_EAGER;
    if (syn_llama(c)) { /* v (composite: einsum's contiguous copy of v), rope(q), rope(k) */
        k->Ukv += vcopy && syn_gqa_expand(c) ? 1 : 2;
        k->Uq += vcopy && syn_gqa_expand(c) ? 2 : 1;
    } else { /* fused qkv */
        k->Uq += 1;
        k->Ukv += 2;
    }
    if (syn_gqa_expand(c))
        k->Uq += 2;
    if (c->attention == GM_SYNTH_ATTN_FLASH) {
        k->Uq += 1; /* output */
        k->Rh += 1; /* logsumexp */
    } else {
        if (c->recompute != GM_SYNTH_RECOMPUTE_SELECTIVE)
            syn_attn_core_coef(c, k);
        k->Uq += 1; /* the context copy the output projection reads */
        if (vcopy && !syn_llama(c)) { /* einsum's copy of v (a view of the fused qkv) */
            if (syn_gqa_expand(c))
                k->Uq += 1;
            else
                k->Ukv += 1;
        }
        if (syn_causal_mask(c))
            k->C += 1;
    }
    if (syn_dropout(c))
        k->Mu += 2; /* attention-out and MLP-out dropout masks */
    k->U += 2;      /* the two residual sums */
    if (syn_llama(c))
        k->F += syn_composite(c) ? 5 : 4;
    else
        k->F += 2;
}

static uint64_t syn_layer_saved(const gm_synth_config_t *c, const syn_sizes_t *z)
{
    syn_coef_t k;
    syn_layer_coef(c, &k);
    return syn_coef_bytes(&k, z);
}

void gm_synth_layer_formula(const gm_synth_config_t *c, char *buf, size_t len)
{
    syn_coef_t k;
    if (c->recompute == GM_SYNTH_RECOMPUTE_FULL) {
        memset(&k, 0, sizeof k);
        k.U = 1;
    } else {
        syn_layer_coef(c, &k);
    }
    static const char *const names[] = {"sbh*e", "sbh*e/t", "s*b*kv*d*e/t", "sbf*e/t",
                                        "a*s^2*b*e/t", "a*s^2*b/t", "sbh", "sb*4", "a*s*b*4/t",
                                        "s^2"};
    const uint64_t v[] = {k.U, k.Uq, k.Ukv, k.F, k.S, k.M, k.Mu, k.R, k.Rh, k.C};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof v / sizeof v[0] && used < len; i++) {
        if (v[i] == 0)
            continue;
        int w = snprintf(buf + used, len - used, "%s%" PRIu64 "*%s", used ? " + " : "", v[i],
                         names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* Closed form: every activation saved at the end of forward. */
static uint64_t syn_saved_total(const gm_synth_config_t *c, const syn_sizes_t *z)
{
    if (!syn_train(c))
        return 0;
    uint64_t head_norm = syn_norm_saved(c, z);
    if (c->arch == GM_SYNTH_ARCH_BERT) /* MLM transform: dense out, gelu out, norm */
        head_norm += 2 * z->U + syn_norm_saved(c, z);
    uint64_t per = c->recompute == GM_SYNTH_RECOMPUTE_FULL ? z->U : syn_layer_saved(c, z);
    return z->U /* embedding output */ + c->layers * per + head_norm;
}

/* Closed form: the logits and loss tensors alive at the end of forward. */
static uint64_t syn_logits_total(const gm_synth_config_t *c, const syn_sizes_t *z)
{
    uint64_t v = z->L;
    int upcast = syn_act_bytes(c) != 4;
    if (!syn_train(c))
        return v + (upcast ? z->L32 : 0);
    if (upcast)
        v += z->L32;
    if (syn_composite(c))
        v += 2 * z->L32 + z->R + z->ids; /* exp, −logp, the row sums, max indices */
    else
        v += z->L32; /* log-probabilities */
    return v + 4;    /* the loss */
}

/* ---- the generator --------------------------------------------------------------- */

enum { SYN_NODE_OP, SYN_NODE_FORK, SYN_NODE_JOIN, SYN_NODE_CKPT };

#define SYN_SAVED_MAX 24
#define SYN_NODE_PARAMS 3
#define SYN_RECOMP_MAX 8
#define SYN_FOPS_MAX 16

/* How a node's backward runs: generic (its input's gradient, one per-op
 * gradient alive at a time, an optional temporary), or the composite
 * attention's own sequence (syn_attention_backward). */
enum { SYN_SCRIPT_GENERIC, SYN_SCRIPT_ATTN, SYN_SCRIPT_CE };

/* The tensors a composite cross-entropy node saves (in aid[]). */
enum { SYN_CE_NEG, SYN_CE_SUM, SYN_CE_EXP, SYN_CE_IDX };

/* The tensors a composite attention node saves, by role, in the order its
 * backward frees them. */
enum { SYN_A_VCOPY, SYN_A_DROP, SYN_A_DMASK, SYN_A_PROBS, SYN_A_SUM, SYN_A_EXP, SYN_A_IDX,
       SYN_A_MASK, SYN_A_COUNT };

typedef struct syn_node {
    uint64_t gin;  /* gradient of the input allocated in backward (bytes) */
    uint64_t btmp; /* a backward temporary (bytes, 0 none) */
    int32_t param[SYN_NODE_PARAMS]; /* weights whose gradients it makes; -1 none */
    uint32_t nsaved, nrecomp;
    uint64_t saved[SYN_SAVED_MAX];      /* ids freed after its backward */
    uint64_t recomp[SYN_RECOMP_MAX];    /* selective: sizes re-allocated in backward */
    uint64_t fop[SYN_FOPS_MAX];         /* sizes of its forward ops' outputs */
    uint32_t nfop;
    uint8_t kind;
    uint8_t script; /* SYN_SCRIPT_*: how its backward runs */
    int32_t layer; /* its layer (-1 embeddings and head); CKPT: the layer to rerun */
    uint64_t aid[SYN_A_COUNT]; /* composite attention: the saved tensors by role */
} syn_node_t;

#define SYN_BUF 4096
#define SYN_RING (UINT64_C(1) << 16)

typedef struct syn_slot {
    uint64_t id; /* SYN_NONE when free */
    uint64_t size;
} syn_slot_t;
#define SYN_PENDING_MAX 64

typedef struct syn {
    const gm_synth_config_t *c;
    gm_synth_sink_fn sink;
    void *ctx;
    gm_error_t *err;
    int rc;
    gm_event_t buf[SYN_BUF];
    size_t nbuf;
    uint64_t events, allocs, frees, marks;
    uint64_t ts;
    uint64_t next_id;
    /* live id → size: a ring indexed by id for the recent ones, spilled
     * to a map when a long-lived id's slot is needed again; memory follows
     * the live set, not the trace */
    syn_slot_t *ring;
    gm__idmap_t spill;
    uint64_t live, peak, peak_event, live_at_backward;
    unsigned phase, peak_phase; /* GM_SYNTH_TAG_* of the last MARK, at the peak */
    uint64_t step_allocs;
    uint8_t flags; /* for the next ALLOCs (GM_EVENT_PREEXISTING while loading warm) */
    /* the model */
    syn_param_t *params;
    size_t nparams;
    uint64_t *p_id, *p_grad, *p_state[3]; /* device ids (UINT64_MAX none) */
    size_t *layer_first;                  /* first parameter index of each layer */
    /* the micro-batch */
    syn_sizes_t z;
    syn_node_t *nodes;
    size_t nnodes, capnodes;
    syn_node_t *cur; /* node receiving saved tensors */
    int32_t layer;   /* layer being built (-1: embeddings, head) */
    int forward;     /* in a forward pass (ops are recorded in nodes) */
    uint64_t pending[SYN_PENDING_MAX]; /* inference: tensors of the current block */
    size_t npending;
    uint64_t rng[2];
    uint64_t held_logits; /* the training loop's `logits` variable (SYN_NONE) */
} syn_t;

#define SYN_NONE UINT64_MAX

static int syn_flush(syn_t *g)
{
    if (g->rc == 0 && g->nbuf && g->sink)
        g->rc = g->sink(g->ctx, g->buf, g->nbuf, g->err);
    g->nbuf = 0;
    return g->rc;
}

static inline gm_event_t *syn_event(syn_t *g)
{
    if (g->nbuf == SYN_BUF)
        syn_flush(g);
    gm_event_t *ev = &g->buf[g->nbuf++];
    memset(ev, 0, sizeof *ev);
    g->ts += 1500; /* a nominal 1.5 µs between allocator calls */
    ev->ts_ns = g->ts;
    g->events++;
    return ev;
}

static void syn_mark(syn_t *g, unsigned tag)
{
    gm_event_t *ev = syn_event(g);
    ev->op = GM_OP_MARK;
    ev->tag = tag;
    g->marks++;
    if (tag != GM_SYNTH_TAG_STEP)
        g->phase = tag;
    if (tag == GM_SYNTH_TAG_BACKWARD)
        g->live_at_backward = g->live;
}

static uint64_t syn_alloc(syn_t *g, uint64_t size)
{
    if (size == 0 || g->rc)
        return SYN_NONE;
    uint64_t id = g->next_id;
    syn_slot_t *slot = &g->ring[id & (SYN_RING - 1)];
    if (slot->id != SYN_NONE && gm__idmap_put(&g->spill, slot->id, slot->size) != 0) {
        g->rc = gm_error_set(g->err, GM_ENOMEM, "out of memory synthesizing a trace");
        return SYN_NONE;
    }
    slot->id = id;
    slot->size = size;
    g->next_id++;
    /* autograd gives each forward op a backward that allocates the
     * gradient of its output: remember the op in the current node */
    if (g->cur && g->forward && g->cur->nfop < SYN_FOPS_MAX)
        g->cur->fop[g->cur->nfop++] = size;
    gm_event_t *ev = syn_event(g);
    ev->op = GM_OP_ALLOC;
    ev->id = id;
    ev->size = size;
    ev->flags = g->flags;
    g->allocs++;
    g->step_allocs++;
    g->live += size;
    if (g->live > g->peak) {
        g->peak = g->live;
        g->peak_event = g->events - 1;
        g->peak_phase = g->phase;
    }
    return id;
}

static void syn_free(syn_t *g, uint64_t id)
{
    uint64_t size;
    if (id == SYN_NONE || g->rc)
        return;
    syn_slot_t *slot = &g->ring[id & (SYN_RING - 1)];
    if (slot->id == id) {
        size = slot->size;
        slot->id = SYN_NONE;
    } else if (!gm__idmap_remove(&g->spill, id, &size)) {
        return; /* freed already */
    }
    gm_event_t *ev = syn_event(g);
    ev->op = GM_OP_FREE;
    ev->id = id;
    g->frees++;
    g->live -= size;
}

/* Record id in the current node's saved list (a full list is a bug in
 * the op tables: reported, never a silent leak). */
static void syn_save(syn_t *g, uint64_t id)
{
    if (g->cur == NULL)
        return;
    if (g->cur->nsaved == SYN_SAVED_MAX) {
        g->rc = gm_error_set(g->err, GM_ESTATE, "synthesizer: too many saved tensors in a node");
        return;
    }
    g->cur->saved[g->cur->nsaved++] = id;
}

/* A tensor autograd keeps for backward: recorded in the current node
 * (training) or, in inference, in the block's list freed at its end. */
static uint64_t syn_keep(syn_t *g, uint64_t size)
{
    uint64_t id = syn_alloc(g, size);
    if (id == SYN_NONE)
        return id;
    if (!syn_train(g->c)) {
        if (g->npending < SYN_PENDING_MAX)
            g->pending[g->npending++] = id;
        else
            syn_free(g, id);
        return id;
    }
    syn_save(g, id);
    return id;
}

/* Hand an existing tensor to the current node (freed after its backward). */
static void syn_attach(syn_t *g, uint64_t id)
{
    if (id == SYN_NONE)
        return;
    if (!syn_train(g->c)) {
        if (g->npending < SYN_PENDING_MAX)
            g->pending[g->npending++] = id;
        return;
    }
    syn_save(g, id);
}

static void syn_block_end(syn_t *g)
{
    for (size_t i = 0; i < g->npending; i++)
        syn_free(g, g->pending[i]);
    g->npending = 0;
}

static syn_node_t *syn_node(syn_t *g, int kind, uint64_t gin, int32_t p0, int32_t p1, int32_t p2)
{
    if (!syn_train(g->c)) {
        g->cur = NULL;
        return NULL;
    }
    if (g->nnodes == g->capnodes) {
        size_t cap = g->capnodes ? 2 * g->capnodes : 256;
        syn_node_t *n = realloc(g->nodes, cap * sizeof *n);
        if (n == NULL) {
            g->rc = gm_error_set(g->err, GM_ENOMEM, "out of memory synthesizing a trace");
            g->cur = NULL;
            return NULL;
        }
        g->nodes = n;
        g->capnodes = cap;
    }
    syn_node_t *n = &g->nodes[g->nnodes++];
    n->btmp = 0; /* the arrays are read only up to their counts */
    n->nsaved = n->nrecomp = n->nfop = 0;
    n->kind = (uint8_t)kind;
    n->script = SYN_SCRIPT_GENERIC;
    for (int i = 0; i < SYN_A_COUNT; i++)
        n->aid[i] = SYN_NONE;
    n->layer = g->layer;
    n->gin = gin;
    n->param[0] = p0;
    n->param[1] = p1;
    n->param[2] = p2;
    g->cur = n;
    return n;
}

/* A matrix that a matmul reads (autocast casts it to 16-bit). */
static int syn_is_matrix(int role)
{
    switch (role) {
    case SYN_R_QKV: case SYN_R_Q: case SYN_R_K: case SYN_R_V: case SYN_R_O: case SYN_R_FC1:
    case SYN_R_FC2: case SYN_R_GATE: case SYN_R_UP: case SYN_R_DOWN: case SYN_R_HEAD:
    case SYN_R_POOL: return 1;
    default: return 0;
    }
}

/* amp: the 16-bit copies of layer l's matrices (for the head, the output
 * layer's, or the embedding's when tied, and the MLM transform's), kept by
 * the current node: autograd saves them for the matmuls' backward. */
static void syn_amp_casts(syn_t *g, int32_t layer)
{
    if (!syn_amp(g->c))
        return;
    for (size_t i = 0; i < g->nparams; i++) {
        const syn_param_t *p = &g->params[i];
        if (p->layer != layer)
            continue;
        int want = syn_is_matrix(p->role) ||
                   (layer < 0 && p->role == SYN_R_EMB && g->c->tied);
        if (want)
            syn_keep(g, p->numel * 2);
    }
}

/* Weights of layer l are gathered (ZeRO-3, offloaded weights) for the span
 * of its forward or backward: full-size copies, freed at the end. */
static void syn_gather(syn_t *g, int32_t layer, uint64_t *ids, size_t *n)
{
    *n = 0;
    if (!syn_param_gathered(g->c))
        return;
    uint64_t pb = syn_param_bytes(g->c);
    for (size_t i = 0; i < g->nparams; i++)
        if (g->params[i].layer == layer && *n < 64)
            ids[(*n)++] = syn_alloc(g, g->params[i].numel * pb);
}

static void syn_release(syn_t *g, const uint64_t *ids, size_t n)
{
    for (size_t i = n; i-- > 0;)
        syn_free(g, ids[i]);
}

/* Parameter index of role r (the k-th of that role) in layer l. */
static int32_t syn_pidx(const syn_t *g, int32_t layer, int role, int k)
{
    size_t i = layer >= 0 ? g->layer_first[layer] : 0;
    for (; i < g->nparams; i++) {
        if (g->params[i].layer != layer)
            continue;
        if (g->params[i].role == role && k-- == 0)
            return (int32_t)i;
    }
    return -1;
}

/* A norm over x (x attached to the node: the norm needs its input).
 * Returns the normalized output. */
static uint64_t syn_norm(syn_t *g, int32_t layer, int k, uint64_t x)
{
    const gm_synth_config_t *c = g->c;
    const syn_sizes_t *z = &g->z;
    /* bias order: layer ln1 0, qkv 1, out 2, ln2 3, fc1 4, fc2 5; global
     * (BERT) embedding-norm 0, transform 1, MLM-norm 2, decoder 3 */
    int bk = k == 0 ? 0 : (layer >= 0 ? 3 : 2);
    syn_node(g, SYN_NODE_OP, z->U, syn_pidx(g, layer, SYN_R_NORM, k),
             syn_llama(c) ? -1 : syn_pidx(g, layer, SYN_R_BIAS, bk), -1);
    /* inference with Python's lifetimes: the input belongs to the caller */
    if (syn_train(c) || !(syn_composite(c) && c->attention == GM_SYNTH_ATTN_EAGER))
        syn_attach(g, x);
    uint64_t out;
    if (syn_composite(c)) {
        uint64_t sq = syn_alloc(g, z->U); /* x.pow(2) */
        uint64_t ms = syn_alloc(g, z->R); /* .mean(-1) */
        syn_free(g, sq);
        uint64_t me = syn_alloc(g, z->R); /* + eps */
        syn_free(g, ms);
        uint64_t rs = syn_keep(g, z->R); /* rsqrt */
        syn_free(g, me);
        uint64_t xr = syn_keep(g, z->U); /* x * rstd */
        out = syn_keep(g, z->U);         /* * weight */
        if (!syn_train(c)) {             /* no_grad: the locals die with the call */
            syn_free(g, xr);
            syn_free(g, rs);
        }
    } else if (syn_llama(c)) {
        syn_keep(g, z->R);
        out = syn_keep(g, z->U);
    } else {
        out = syn_keep(g, z->U);
        syn_keep(g, z->R); /* mean */
        syn_keep(g, z->R); /* rstd */
    }
    return out;
}

/* RoPE on x of `size` bytes: x·cos + rotate_half(x)·sin; with composite
 * ops the pairwise form of from-scratch code (x1·cos − x2·sin and
 * x1·sin + x2·cos on the two halves, then concatenated). */
static uint64_t syn_rope(syn_t *g, uint64_t x, uint64_t size)
{
    if (syn_composite(g->c)) {
        uint64_t half[2];
        for (int i = 0; i < 2; i++) {
            uint64_t t1 = syn_alloc(g, size / 2), t2 = syn_alloc(g, size / 2);
            half[i] = syn_alloc(g, size / 2); /* − or + */
            syn_free(g, t1);
            syn_free(g, t2);
        }
        uint64_t out = syn_keep(g, size); /* cat */
        syn_free(g, half[0]);
        syn_free(g, half[1]);
        syn_free(g, x);
        return out;
    }
    uint64_t a = syn_alloc(g, size);      /* x * cos */
    uint64_t h1 = syn_alloc(g, size / 2); /* -x2 */
    uint64_t cat = syn_alloc(g, size);    /* cat(-x2, x1) */
    syn_free(g, h1);
    uint64_t r = syn_alloc(g, size); /* * sin */
    syn_free(g, cat);
    uint64_t out = syn_keep(g, size); /* a + r */
    syn_free(g, a);
    syn_free(g, r);
    syn_free(g, x);
    return out;
}

/* Eager attention written as tensor code, softmax(q·kᵀ/√d masked)·v with
 * an elementwise softmax (x − max, exp, / sum), each expression allocating
 * its result and Python's locals living to the end of their function:
 * the scores q·kᵀ, their scaled and masked copies, x − max, exp and the
 * probabilities are all alive at the division (4 s²-sized tensors at once,
 * also in inference).  Training keeps the mask, the max indices, exp, the
 * row sums, the probabilities and einsum's contiguous copy of v; the masked
 * scores live until p·v ran.  Returns the context copy the output
 * projection reads. */
static uint64_t syn_attention_composite(syn_t *g, syn_node_t *n, int selective)
{
    const gm_synth_config_t *c = g->c;
    const syn_sizes_t *z = &g->z;
    int train = syn_train(c);
    uint64_t core[SYN_RECOMP_MAX];
    size_t ncore = 0;
    /* a tensor kept for backward (recomputed there under selective) */
#define SYN_ACORE(role, size)                                      \
    do {                                                           \
        uint64_t id_ = syn_keep(g, size);                          \
        if (n)                                                     \
            n->aid[role] = id_;                                    \
        if (selective && ncore < SYN_RECOMP_MAX) {                 \
            core[ncore++] = id_;                                   \
            if (n) {                                               \
                n->nsaved--;                                       \
                n->recomp[n->nrecomp++] = (size);                  \
            }                                                      \
        }                                                          \
        ids[role] = id_;                                           \
    } while (0)
    uint64_t ids[SYN_A_COUNT];
    uint64_t pos = SYN_NONE;
    for (int i = 0; i < SYN_A_COUNT; i++)
        ids[i] = SYN_NONE;
    if (syn_causal_mask(c)) {
        pos = syn_alloc(g, z->P); /* arange(s) */
        ids[SYN_A_MASK] = syn_keep(g, z->C); /* pos[:, None] >= pos[None, :] */
        if (n)
            n->aid[SYN_A_MASK] = ids[SYN_A_MASK];
    }
    uint64_t sc = syn_alloc(g, z->S);  /* q @ kᵀ */
    uint64_t sc2 = syn_alloc(g, z->S); /* / sqrt(d) */
    syn_free(g, sc);
    uint64_t m = sc2;
    if (syn_causal_mask(c)) {
        m = syn_alloc(g, z->S); /* torch.where(mask, scores, -inf) */
        syn_free(g, sc2);
    }
    uint64_t mx = syn_alloc(g, z->Rh); /* max values */
    SYN_ACORE(SYN_A_IDX, 2 * z->Rh);   /* max indices (int64) */
    if (!train)
        syn_free(g, ids[SYN_A_IDX]);
    uint64_t sh = syn_alloc(g, z->S); /* x - max */
    syn_free(g, mx);
    SYN_ACORE(SYN_A_EXP, z->S);
    SYN_ACORE(SYN_A_SUM, z->Rh);
    SYN_ACORE(SYN_A_PROBS, z->S); /* exp / sum */
    if (!train) {
        syn_free(g, ids[SYN_A_SUM]);
        syn_free(g, sh);
        syn_free(g, ids[SYN_A_EXP]);
    } else {
        syn_free(g, sh);
    }
    if (syn_dropout(c)) {
        SYN_ACORE(SYN_A_DMASK, z->M); /* the dropout mask */
        SYN_ACORE(SYN_A_DROP, z->S);  /* the dropped probabilities */
    }
    uint64_t vc = syn_keep(g, syn_gqa_expand(c) ? z->Uq : z->Ukv); /* v.contiguous() */
    if (n)
        n->aid[SYN_A_VCOPY] = vc;
    uint64_t o = syn_alloc(g, z->Uq); /* p @ v */
    if (!train)
        syn_free(g, vc);
    syn_free(g, m);
    if (!train)
        syn_free(g, ids[SYN_A_PROBS]);
    uint64_t ctx = syn_keep(g, z->Uq); /* the heads merged: a contiguous copy */
    syn_free(g, o);
    syn_free(g, pos);
    for (size_t i = ncore; i-- > 0;)
        syn_free(g, core[i]);
#undef SYN_ACORE
    if (n) {
        n->script = SYN_SCRIPT_ATTN;
        n->nfop = 0;
    }
    return ctx;
}

/* The backward of syn_attention_composite, as autograd runs the graph of
 * its elementwise ops: the gradient of p (dO·vᵀ), then division's backward
 * (four s²-sized temporaries at once: grad/sum, exp/sum, its negation, the
 * product), exp's, the max's (a scatter into zeros), where's and the
 * scaling's, freeing each saved tensor when its op's backward ran.  Leaves
 * the gradient of q, k, v (n->gin bytes) in *gin.  `grad`, the incoming
 * gradient when no residual shares it (else SYN_NONE), dies once copied. */
static void syn_attention_backward(syn_t *g, const syn_node_t *n, uint64_t grad, uint64_t *gin)
{
    const syn_sizes_t *z = &g->z;
    const gm_synth_config_t *c = g->c;
    uint64_t gr = syn_alloc(g, z->Uq); /* the merged heads' gradient, split */
    syn_free(g, grad);
    uint64_t gv = syn_alloc(g, syn_gqa_expand(c) ? z->Uq : z->Ukv); /* pᵀ @ dO */
    uint64_t gp = syn_alloc(g, z->S);                                /* dO @ vᵀ */
    syn_free(g, gr);
    syn_free(g, n->aid[SYN_A_VCOPY]);
    if (syn_dropout(c)) { /* dropout's backward: grad · mask / keep */
        syn_free(g, n->aid[SYN_A_DROP]);
        uint64_t gd = syn_alloc(g, z->S);
        syn_free(g, gp);
        syn_free(g, n->aid[SYN_A_DMASK]);
        gp = gd;
    }
    syn_free(g, n->aid[SYN_A_PROBS]);
    uint64_t t[4];
    for (int i = 0; i < 4; i++) /* grad / sum, exp / sum, −, · grad */
        t[i] = syn_alloc(g, z->S);
    for (int i = 3; i-- > 0;)
        syn_free(g, t[i]);
    uint64_t ge = syn_alloc(g, z->S);  /* the gradient of exp */
    uint64_t gs = syn_alloc(g, z->Rh); /* the gradient of sum, reduced */
    syn_free(g, t[3]);
    syn_free(g, gp);
    syn_free(g, n->aid[SYN_A_SUM]);
    syn_free(g, gs);
    uint64_t gx = syn_alloc(g, z->S); /* exp's backward: · exp */
    syn_free(g, ge);
    syn_free(g, n->aid[SYN_A_EXP]);
    uint64_t ng = syn_alloc(g, z->S);  /* x − max: −grad */
    uint64_t nr = syn_alloc(g, z->Rh); /* summed over the row */
    syn_free(g, ng);
    uint64_t sz = syn_alloc(g, z->S); /* max's backward: scattered into zeros */
    syn_free(g, nr);
    syn_free(g, n->aid[SYN_A_IDX]);
    syn_free(g, sz);
    uint64_t gw = gx;
    if (syn_causal_mask(c)) {
        gw = syn_alloc(g, z->S); /* where's backward */
        syn_free(g, gx);
        syn_free(g, n->aid[SYN_A_MASK]);
    }
    uint64_t gd = syn_alloc(g, z->S); /* / sqrt(d) */
    syn_free(g, gw);
    syn_free(g, gv);
    *gin = syn_alloc(g, n->gin); /* dq, dk (and dv) */
    syn_free(g, gd);
}

/* The backward of the composite cross-entropy (log_softmax written out,
 * then the mean of −logp at the targets), as autograd runs it: the
 * gradient at the targets scattered into zeros, then the negation's, the
 * log-sum's, exp's and the max's backward, each freeing what its op saved;
 * at most one logits-sized temporary beside the running gradient.  Leaves
 * the logits' gradient in *gin (its 16-bit copy under 16-bit activations). */
static void syn_ce_backward(syn_t *g, const syn_node_t *n, uint64_t grad, uint64_t *gin)
{
    const syn_sizes_t *z = &g->z;
    uint64_t a = syn_alloc(g, z->R); /* the mean's backward */
    syn_free(g, grad);
    uint64_t b = syn_alloc(g, z->L32); /* zeros, scattered at the targets */
    syn_free(g, a);
    syn_free(g, n->aid[SYN_CE_NEG]);
    uint64_t d = syn_alloc(g, z->L32); /* −: the gradient of logp */
    syn_free(g, b);
    uint64_t t = syn_alloc(g, z->L32); /* − log sum: negated ... */
    uint64_t r = syn_alloc(g, z->R);   /* ... and summed over the row */
    syn_free(g, t);
    uint64_t q = syn_alloc(g, z->R); /* log's backward */
    syn_free(g, r);
    syn_free(g, n->aid[SYN_CE_SUM]);
    t = syn_alloc(g, z->L32); /* exp's backward, added into d */
    syn_free(g, q);
    syn_free(g, n->aid[SYN_CE_EXP]);
    syn_free(g, t);
    t = syn_alloc(g, z->L32); /* − max: negated ... */
    r = syn_alloc(g, z->R);   /* ... and summed */
    syn_free(g, t);
    t = syn_alloc(g, z->L32); /* max's backward, scattered, added into d */
    syn_free(g, r);
    syn_free(g, n->aid[SYN_CE_IDX]);
    syn_free(g, t);
    if (z->L32 != z->L) { /* back to the logits' 16-bit type */
        *gin = syn_alloc(g, z->L);
        syn_free(g, d);
    } else {
        *gin = d;
    }
}

/* The attention core from q, k, v to the context the output projection
 * reads.  Returns the context. */
static uint64_t syn_attention(syn_t *g)
{
    const gm_synth_config_t *c = g->c;
    const syn_sizes_t *z = &g->z;
    syn_node_t *n = syn_node(g, SYN_NODE_OP, z->Uq + 2 * z->Ukv, -1, -1, -1);
    if (c->attention == GM_SYNTH_ATTN_EAGER && syn_composite(c)) {
        if (syn_gqa_expand(c)) { /* repeat_kv: k and v expanded to every head */
            syn_keep(g, z->Uq);
            syn_keep(g, z->Uq);
        }
        return syn_attention_composite(
            g, n, c->recompute == GM_SYNTH_RECOMPUTE_SELECTIVE && syn_train(c));
    }
    if (c->attention == GM_SYNTH_ATTN_FLASH) {
        uint64_t o = syn_keep(g, z->Uq);
        syn_keep(g, z->Rh); /* logsumexp */
        if (n)
            n->btmp = z->Uq; /* dO·O row sums and workspace */
        return o;
    }
    if (syn_gqa_expand(c)) { /* repeat_kv: k and v expanded to every head */
        syn_keep(g, z->Uq);
        syn_keep(g, z->Uq);
    }
    int selective = c->recompute == GM_SYNTH_RECOMPUTE_SELECTIVE && syn_train(c);
    uint64_t core[SYN_RECOMP_MAX];
    size_t ncore = 0;
#define SYN_CORE(size)                                             \
    do {                                                           \
        uint64_t id_ = syn_keep(g, size);                          \
        if (selective && ncore < SYN_RECOMP_MAX) {                 \
            core[ncore++] = id_;                                   \
            if (n) {                                               \
                n->nsaved--; /* not saved: recomputed */           \
                n->recomp[n->nrecomp++] = (size);                  \
            }                                                      \
        }                                                          \
    } while (0)
    uint64_t sc = syn_alloc(g, z->S);  /* q @ kᵀ */
    uint64_t sc2 = syn_alloc(g, z->S); /* / sqrt(d) */
    syn_free(g, sc);
    uint64_t cur = sc2;
    { /* causal or padding mask */
        uint64_t m = syn_alloc(g, z->S);
        syn_free(g, cur);
        cur = m;
    }
    if (syn_composite(c)) {
        uint64_t mx = syn_alloc(g, z->Rh); /* max values */
        SYN_CORE(2 * z->Rh);               /* max indices (int64) */
        uint64_t sh = syn_alloc(g, z->S);  /* x - max */
        syn_free(g, cur);
        SYN_CORE(z->S);  /* exp */
        syn_free(g, sh);
        SYN_CORE(z->Rh); /* sum */
        SYN_CORE(z->S);  /* exp / sum */
        syn_free(g, mx);
    } else {
        SYN_CORE(z->S); /* softmax output */
        syn_free(g, cur);
    }
    if (syn_dropout(c)) {
        SYN_CORE(z->M); /* mask */
        SYN_CORE(z->S); /* dropped probabilities */
    }
    uint64_t o = syn_composite(c) ? syn_keep(g, z->Uq) : syn_alloc(g, z->Uq); /* p @ v */
    uint64_t ctx = syn_keep(g, z->Uq); /* transpose(1, 2).contiguous() */
    if (!syn_composite(c))
        syn_free(g, o);
    for (size_t i = ncore; i-- > 0;)
        syn_free(g, core[i]);
#undef SYN_CORE
    if (n)
        n->btmp = z->S; /* softmax backward */
    return ctx;
}

/* One transformer layer's forward from input x; returns its output. */
static uint64_t syn_layer(syn_t *g, int32_t l, uint64_t x)
{
    const gm_synth_config_t *c = g->c;
    const syn_sizes_t *z = &g->z;
    uint64_t gathered[64];
    size_t ngathered;
    g->layer = l;
    syn_gather(g, l, gathered, &ngathered);

    /* attention block */
    syn_node(g, SYN_NODE_FORK, 0, -1, -1, -1);
    syn_norm(g, l, 0, x);
    syn_amp_casts(g, l);
    /* composite ops: Python's locals (v, the output projection's result)
     * live to the end of the function that made them */
    int py = syn_composite(c) && c->attention == GM_SYNTH_ATTN_EAGER;
    uint64_t v = SYN_NONE;
    if (syn_llama(c)) {
        syn_node(g, SYN_NODE_OP, z->U, syn_pidx(g, l, SYN_R_Q, 0), syn_pidx(g, l, SYN_R_K, 0),
                 syn_pidx(g, l, SYN_R_V, 0));
        uint64_t q = syn_alloc(g, z->Uq);
        uint64_t k = syn_alloc(g, z->Ukv);
        if (py) /* einsum saves its own contiguous copy of v */
            v = syn_alloc(g, z->Ukv);
        else
            syn_keep(g, z->Ukv); /* v */
        syn_node(g, SYN_NODE_OP, z->Uq + z->Ukv, -1, -1, -1);
        syn_rope(g, q, z->Uq);
        syn_rope(g, k, z->Ukv);
    } else {
        syn_node(g, SYN_NODE_OP, z->U, syn_pidx(g, l, SYN_R_QKV, 0),
                 syn_pidx(g, l, SYN_R_BIAS, 1), -1);
        syn_keep(g, z->Uq + 2 * z->Ukv); /* fused q, k, v */
    }
    syn_attention(g); /* the context, kept by the output projection */
    syn_node(g, SYN_NODE_OP, z->Uq, syn_pidx(g, l, SYN_R_O, 0),
             syn_llama(c) ? -1 : syn_pidx(g, l, SYN_R_BIAS, 2), -1);
    uint64_t y = syn_alloc(g, z->U);
    syn_free(g, v);
    if (syn_dropout(c)) {
        syn_keep(g, z->Mu);
        uint64_t yd = syn_alloc(g, z->U);
        syn_free(g, y);
        y = yd;
    }
    uint64_t yattn = SYN_NONE; /* composite: alive until the block returns */
    if (py && !syn_train(c))
        syn_block_end(g);
    syn_node(g, SYN_NODE_JOIN, 0, -1, -1, -1);
    uint64_t x2 = syn_alloc(g, z->U); /* x + y */
    if (py)
        yattn = y;
    else
        syn_free(g, y);
    if (!syn_train(c) && !py) {
        syn_free(g, x);
        syn_block_end(g);
    }

    /* MLP block */
    y = SYN_NONE;
    syn_node(g, SYN_NODE_FORK, 0, -1, -1, -1);
    syn_norm(g, l, 1, x2);
    if (syn_llama(c)) {
        syn_node(g, SYN_NODE_OP, z->U, syn_pidx(g, l, SYN_R_GATE, 0),
                 syn_pidx(g, l, SYN_R_UP, 0), -1);
        if (py) { /* w2(silu(w1 x) * w3 x), evaluated in that order */
            uint64_t gate = syn_keep(g, z->F); /* w1 x */
            syn_node_t *n = syn_node(g, SYN_NODE_OP, 2 * z->F, -1, -1, -1);
            if (n)
                n->btmp = z->F;
            uint64_t sg = syn_keep(g, z->F); /* sigmoid(gate) */
            uint64_t si = syn_keep(g, z->F); /* gate * sigmoid */
            if (!syn_train(c)) {
                syn_free(g, sg);
                syn_free(g, gate);
            }
            uint64_t up = syn_keep(g, z->F); /* w3 x */
            uint64_t pr = syn_keep(g, z->F); /* silu * up */
            if (!syn_train(c)) {
                syn_free(g, si);
                syn_free(g, up);
            }
            syn_node(g, SYN_NODE_OP, z->F, syn_pidx(g, l, SYN_R_DOWN, 0), -1, -1);
            y = syn_alloc(g, z->U);
            if (!syn_train(c))
                syn_free(g, pr);
        } else {
            syn_keep(g, z->F); /* gate */
            syn_keep(g, z->F); /* up */
            syn_node_t *n = syn_node(g, SYN_NODE_OP, 2 * z->F, -1, -1, -1);
            if (n)
                n->btmp = z->F;
            if (syn_composite(c))
                syn_keep(g, z->F); /* sigmoid(gate) */
            syn_keep(g, z->F);     /* silu(gate) */
            syn_keep(g, z->F);     /* * up */
            syn_node(g, SYN_NODE_OP, z->F, syn_pidx(g, l, SYN_R_DOWN, 0), -1, -1);
        }
    } else {
        syn_node(g, SYN_NODE_OP, z->U, syn_pidx(g, l, SYN_R_FC1, 0),
                 syn_pidx(g, l, SYN_R_BIAS, 4), -1);
        syn_keep(g, z->F); /* fc1 out */
        syn_node_t *n = syn_node(g, SYN_NODE_OP, z->F, -1, -1, -1);
        if (n)
            n->btmp = z->F;
        if (syn_composite(c)) { /* tanh-approximation temporaries */
            uint64_t t1 = syn_alloc(g, z->F);
            uint64_t t2 = syn_alloc(g, z->F);
            syn_free(g, t1);
            syn_keep(g, z->F);
            syn_free(g, t2);
        } else {
            syn_keep(g, z->F); /* gelu out */
        }
        syn_node(g, SYN_NODE_OP, z->F, syn_pidx(g, l, SYN_R_FC2, 0),
                 syn_pidx(g, l, SYN_R_BIAS, 5), -1);
    }
    if (y == SYN_NONE)
        y = syn_alloc(g, z->U);
    if (syn_dropout(c)) {
        syn_keep(g, z->Mu);
        uint64_t yd = syn_alloc(g, z->U);
        syn_free(g, y);
        y = yd;
    }
    if (py && !syn_train(c))
        syn_block_end(g);
    syn_node(g, SYN_NODE_JOIN, 0, -1, -1, -1);
    uint64_t x3 = syn_alloc(g, z->U);
    if (py) {
        syn_free(g, yattn);
        if (!syn_train(c))
            syn_free(g, x2);
        syn_free(g, y);
        if (!syn_train(c)) /* the caller's x = layer(x) drops the input */
            syn_free(g, x);
    } else {
        syn_free(g, y);
        if (!syn_train(c)) {
            syn_free(g, x2);
            syn_block_end(g);
        }
    }
    syn_release(g, gathered, ngathered);
    g->cur = NULL;
    g->layer = SYN_P_GLOBAL;
    return x3;
}

/* The weight gradient of parameter i in backward. */
static void syn_weight_grad(syn_t *g, int32_t i)
{
    if (i < 0)
        return;
    const gm_synth_config_t *c = g->c;
    uint64_t full = g->params[i].numel * syn_param_bytes(c);
    if (g->p_grad[i] != SYN_NONE) { /* accumulate: a temporary added in place */
        syn_free(g, syn_alloc(g, full));
        return;
    }
    if (c->zero >= 2) { /* reduce-scatter into this rank's shard */
        uint64_t t = syn_alloc(g, full);
        g->p_grad[i] = syn_alloc(g, syn_grad_resident(c, g->params[i].numel) * syn_param_bytes(c));
        syn_free(g, t);
    } else {
        g->p_grad[i] = syn_alloc(g, full);
    }
}

static void syn_layer_rerun(syn_t *g, int32_t l, uint64_t x);

/* Backward over nodes [from, nnodes) in reverse, starting from gradient
 * *grad (a live id). */
static void syn_backward_nodes(syn_t *g, size_t from, uint64_t *grad)
{
    uint64_t res[8]; /* residual gradients of the open joins */
    int depth = 0;
    int gshared = 0; /* *grad is the residual gradient, also held by res */
    uint64_t gath[64];
    size_t ngath = 0;
    int32_t gl = -2; /* layer whose weights are gathered */
    for (size_t k = g->nnodes; k-- > from && g->rc == 0;) {
        syn_node_t n = g->nodes[k]; /* a copy: a rerun may move the array */
        if (n.layer >= 0 && n.layer != gl && n.kind != SYN_NODE_CKPT) {
            syn_release(g, gath, ngath);
            syn_gather(g, n.layer, gath, &ngath);
            gl = n.layer;
        }
        switch (n.kind) {
        case SYN_NODE_JOIN:
            if (depth < 8) {
                res[depth++] = *grad;
                gshared = 1;
            }
            break;
        case SYN_NODE_FORK:
            if (depth > 0) {
                uint64_t r = res[--depth];
                uint64_t sum = syn_alloc(g, g->z.U);
                if (!gshared)
                    syn_free(g, *grad);
                syn_free(g, r);
                *grad = sum;
                gshared = 0;
            }
            break;
        case SYN_NODE_CKPT: {
            size_t mark = g->nnodes; /* the rerun appends its nodes here */
            syn_release(g, gath, ngath);
            ngath = 0;
            gl = -2;
            syn_layer_rerun(g, n.layer, n.saved[0]);
            syn_backward_nodes(g, mark, grad);
            g->nnodes = mark;
            break;
        }
        default: {
            uint64_t re[SYN_RECOMP_MAX];
            for (uint32_t i = 0; i < n.nrecomp; i++)
                re[i] = syn_alloc(g, n.recomp[i]);
            for (int i = 0; i < SYN_NODE_PARAMS; i++)
                syn_weight_grad(g, n.param[i]);
            uint64_t gin;
            if (n.script == SYN_SCRIPT_ATTN) {
                syn_attention_backward(g, &n, gshared ? SYN_NONE : *grad, &gin);
            } else if (n.script == SYN_SCRIPT_CE) {
                syn_ce_backward(g, &n, gshared ? SYN_NONE : *grad, &gin);
            } else {
                gin = syn_alloc(g, n.gin);
                if (n.btmp)
                    syn_free(g, syn_alloc(g, n.btmp));
                /* the per-op gradients inside the node, one alive at a time */
                uint64_t prev = SYN_NONE;
                for (uint32_t i = n.nfop; i-- > 1;) {
                    uint64_t t = syn_alloc(g, n.fop[i]);
                    syn_free(g, prev);
                    prev = t;
                }
                syn_free(g, prev);
            }
            if (gin != SYN_NONE) {
                if (!gshared)
                    syn_free(g, *grad);
                *grad = gin;
                gshared = 0;
            }
            for (uint32_t i = n.nrecomp; i-- > 0;)
                syn_free(g, re[i]);
            for (uint32_t i = n.nsaved; i-- > 0;)
                syn_free(g, n.saved[i]);
        }
        }
    }
    syn_release(g, gath, ngath);
}

/* Full recompute: rerun layer l's forward from its checkpointed input x,
 * appending its nodes; the duplicate output is freed at once. */
static void syn_layer_rerun(syn_t *g, int32_t l, uint64_t x)
{
    g->forward = 1;
    uint64_t out = syn_layer(g, l, x);
    g->forward = 0;
    syn_free(g, out);
}

static uint64_t syn_seq(syn_t *g, uint64_t micro)
{
    const gm_synth_config_t *c = g->c;
    switch (c->seq_kind) {
    case GM_SYNTH_SEQ_UNIFORM: {
        /* xorshift128+ */
        uint64_t s1 = g->rng[0];
        const uint64_t s0 = g->rng[1];
        g->rng[0] = s0;
        s1 ^= s1 << 23;
        g->rng[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
        return c->seq_lo + (g->rng[1] + s0) % (c->seq_hi - c->seq_lo + 1);
    }
    case GM_SYNTH_SEQ_VALUES: return c->seq_values[micro % c->nseq_values];
    default: return c->seq;
    }
}

/* One micro-batch: forward (and backward when training). */
static void syn_micro(syn_t *g, uint64_t micro)
{
    const gm_synth_config_t *c = g->c;
    int train = syn_train(c);
    syn_sizes(c, syn_seq(g, micro), &g->z);
    const syn_sizes_t *z = &g->z;
    g->nnodes = 0;
    g->cur = NULL;
    g->layer = SYN_P_GLOBAL;
    syn_mark(g, GM_SYNTH_TAG_FORWARD);
    g->forward = 1;
    uint64_t ids = syn_alloc(g, z->ids);
    uint64_t labels = train ? syn_alloc(g, z->ids) : SYN_NONE;

    /* embeddings */
    uint64_t gathered[64];
    size_t ngathered;
    syn_gather(g, SYN_P_GLOBAL, gathered, &ngathered);
    syn_node(g, SYN_NODE_OP, 0, syn_pidx(g, SYN_P_GLOBAL, SYN_R_EMB, 0),
             syn_llama(c) ? -1 : syn_pidx(g, SYN_P_GLOBAL, SYN_R_POS, 0),
             c->arch == GM_SYNTH_ARCH_BERT ? syn_pidx(g, SYN_P_GLOBAL, SYN_R_POS, 1) : -1);
    uint64_t x;
    if (syn_llama(c)) {
        x = syn_alloc(g, z->U);
    } else {
        uint64_t tok = syn_alloc(g, z->U);
        uint64_t pos = syn_alloc(g, z->U / c->batch);
        x = syn_alloc(g, z->U);
        syn_free(g, pos);
        syn_free(g, tok);
    }
    g->cur = NULL;

    /* layers */
    for (uint64_t l = 0; l < c->layers && g->rc == 0; l++) {
        if (train && c->recompute == GM_SYNTH_RECOMPUTE_FULL) {
            size_t mark = g->nnodes;
            uint64_t out = syn_layer(g, (int32_t)l, x);
            /* drop everything the layer saved; keep its input as checkpoint */
            for (size_t k = g->nnodes; k-- > mark;)
                for (uint32_t i = g->nodes[k].nsaved; i-- > 0;)
                    if (g->nodes[k].saved[i] != x)
                        syn_free(g, g->nodes[k].saved[i]);
            g->nnodes = mark;
            syn_node_t *ck = syn_node(g, SYN_NODE_CKPT, 0, -1, -1, -1);
            if (ck) {
                ck->layer = (int32_t)l;
                ck->saved[0] = x; /* the rerun's first norm frees it */
            }
            x = out;
        } else {
            x = syn_layer(g, (int32_t)l, x);
        }
    }

    /* head: final norm, (BERT MLM transform), logits, loss */
    syn_norm(g, SYN_P_GLOBAL, 0, x);
    if (!train)
        syn_free(g, x);
    if (c->arch == GM_SYNTH_ARCH_BERT) {
        syn_node(g, SYN_NODE_OP, z->U, syn_pidx(g, SYN_P_GLOBAL, SYN_R_POOL, 0),
                 syn_pidx(g, SYN_P_GLOBAL, SYN_R_BIAS, 1), -1);
        syn_keep(g, z->U); /* dense */
        syn_node(g, SYN_NODE_OP, z->U, -1, -1, -1);
        syn_keep(g, z->U); /* gelu */
        syn_norm(g, SYN_P_GLOBAL, 1, SYN_NONE);
    }
    int32_t head = c->tied ? syn_pidx(g, SYN_P_GLOBAL, SYN_R_EMB, 0)
                           : syn_pidx(g, SYN_P_GLOBAL, SYN_R_HEAD, 0);
    syn_node(g, SYN_NODE_OP, z->U, head,
             c->arch == GM_SYNTH_ARCH_BERT ? syn_pidx(g, SYN_P_GLOBAL, SYN_R_BIAS, 3) : -1, -1);
    syn_amp_casts(g, SYN_P_GLOBAL);
    g->cur = NULL;
    uint64_t logits = syn_alloc(g, z->L);
    if (!train) {
        uint64_t up = syn_act_bytes(c) != 4 ? syn_alloc(g, z->L32) : SYN_NONE;
        syn_block_end(g);
        syn_release(g, gathered, ngathered);
        syn_free(g, up);
        syn_free(g, logits);
        syn_free(g, ids);
        return;
    }
    syn_node_t *ln = syn_node(g, SYN_NODE_OP, z->L, -1, -1, -1);
    if (ln)
        ln->btmp = z->L32;
    /* composite (a from-scratch loop, `logits = model(x)`): the name holds
     * them through backward and the optimizer step, until the next
     * micro-batch rebinds it; else the loss node keeps them for backward */
    if (syn_composite(c)) {
        syn_free(g, g->held_logits);
        g->held_logits = logits;
    } else {
        syn_attach(g, logits);
    }
    if (syn_act_bytes(c) != 4)
        syn_keep(g, z->L32); /* logits.float() */
    if (syn_composite(c)) { /* log_softmax written out, then −logp[target] */
        uint64_t mx = syn_alloc(g, z->R);   /* max values */
        uint64_t idx = syn_keep(g, z->ids); /* max indices (int64) */
        uint64_t sh = syn_alloc(g, z->L32); /* x − max */
        uint64_t ex = syn_keep(g, z->L32);  /* exp */
        uint64_t se = syn_keep(g, z->R);    /* sum */
        uint64_t lg = syn_alloc(g, z->R);   /* log */
        uint64_t lp = syn_alloc(g, z->L32); /* x − max − log sum */
        syn_free(g, lg);
        syn_free(g, sh);
        syn_free(g, mx);
        uint64_t ng = syn_keep(g, z->L32); /* −logp */
        syn_free(g, lp);
        syn_free(g, syn_alloc(g, z->R)); /* gathered at the targets */
        if (ln) {
            ln->script = SYN_SCRIPT_CE;
            ln->nfop = 0;
            ln->aid[SYN_CE_NEG] = ng;
            ln->aid[SYN_CE_SUM] = se;
            ln->aid[SYN_CE_EXP] = ex;
            ln->aid[SYN_CE_IDX] = idx;
        }
    } else {
        syn_keep(g, z->L32); /* log_softmax */
    }
    uint64_t loss = syn_alloc(g, 4);
    syn_release(g, gathered, ngathered);
    g->cur = NULL;

    /* backward */
    syn_mark(g, GM_SYNTH_TAG_BACKWARD);
    g->forward = 0;
    syn_gather(g, SYN_P_GLOBAL, gathered, &ngathered);
    uint64_t grad = syn_alloc(g, 4); /* ones_like(loss) */
    syn_free(g, loss);
    syn_backward_nodes(g, 0, &grad);
    syn_free(g, grad);
    syn_release(g, gathered, ngathered);
    syn_free(g, labels);
    syn_free(g, ids);
    g->nnodes = 0;
}

/* Allocate the optimizer state of parameter i (zeros_like, lazily). */
static void syn_state_alloc(syn_t *g, size_t i)
{
    const gm_synth_config_t *c = g->c;
    uint64_t numel = syn_state_resident(c, g->params[i].numel), sb = syn_state_bytes(c);
    unsigned k = c->precision == GM_SYNTH_PREC_MIXED ? 1 : 0; /* slot 0: master */
    for (unsigned s = k; s < syn_state_count(c); s++)
        if (g->p_state[s][i] == SYN_NONE)
            g->p_state[s][i] = syn_alloc(g, numel * sb);
}

static void syn_optimizer(syn_t *g)
{
    const gm_synth_config_t *c = g->c;
    syn_mark(g, GM_SYNTH_TAG_OPTIMIZER);
    if (!syn_state_on_device(c))
        return;
    uint64_t sb = syn_state_bytes(c);
    int mixed = c->precision == GM_SYNTH_PREC_MIXED;
    if (c->optimizer_impl == GM_SYNTH_OPTIMPL_FOREACH) {
        for (size_t i = 0; i < g->nparams; i++)
            syn_state_alloc(g, i);
        /* sqrt(v) for every parameter at once (torch._foreach_sqrt); the
         * rest is in place (the fused kernels read 16-bit gradients) */
        uint64_t *tmp = malloc(2 * g->nparams * sizeof *tmp);
        if (tmp == NULL) {
            g->rc = gm_error_set(g->err, GM_ENOMEM, "out of memory synthesizing a trace");
            return;
        }
        size_t nt = 0;
        for (size_t i = 0; syn_has_adam(c) && i < g->nparams; i++)
            tmp[nt++] = syn_alloc(g, syn_state_resident(c, g->params[i].numel) * sb);
        for (size_t i = nt; i-- > 0;)
            syn_free(g, tmp[i]);
        free(tmp);
    } else if (c->optimizer_impl == GM_SYNTH_OPTIMPL_PYTHON) {
        /* an optimizer written as tensor arithmetic: every expression
         * allocates its result, m and v are replaced, not updated; the
         * loop's locals holding the old m and v live until the next
         * parameter rebinds them (state.get(k, zeros_like(p)) evaluates
         * its default every time) */
        unsigned k = mixed ? 1 : 0; /* state slot of m (v follows) */
        uint64_t old[2] = {SYN_NONE, SYN_NONE};
        for (size_t i = 0; i < g->nparams; i++) {
            syn_state_alloc(g, i);
            uint64_t P = syn_state_resident(c, g->params[i].numel) * sb;
            if (c->optimizer == GM_SYNTH_OPT_ADAMW) /* p -= lr·wd·p */
                syn_free(g, syn_alloc(g, P));
            if (!syn_has_adam(c)) { /* p -= lr·g */
                syn_free(g, syn_alloc(g, P));
                continue;
            }
            for (int j = 0; j < 2; j++) { /* m, v = state.get(…, zeros_like(p)) */
                syn_free(g, syn_alloc(g, P));
                syn_free(g, old[j]);
                old[j] = g->p_state[k + j][i];
            }
            uint64_t a = syn_alloc(g, P), b = syn_alloc(g, P); /* β1·m, (1−β1)·g */
            uint64_t m = syn_alloc(g, P);                      /* a + b */
            syn_free(g, a);
            syn_free(g, b);
            a = syn_alloc(g, P);           /* β2·v */
            uint64_t g2 = syn_alloc(g, P); /* g² */
            b = syn_alloc(g, P);           /* (1−β2)·g² */
            syn_free(g, g2);
            uint64_t v = syn_alloc(g, P); /* a + b */
            syn_free(g, a);
            syn_free(g, b);
            uint64_t u = syn_alloc(g, P);  /* lr_t·m */
            uint64_t d = syn_alloc(g, P);  /* sqrt(v) */
            uint64_t d2 = syn_alloc(g, P); /* + eps */
            syn_free(g, d);
            uint64_t q = syn_alloc(g, P); /* u / d2, then p -= q in place */
            syn_free(g, u);
            syn_free(g, d2);
            syn_free(g, q);
            g->p_state[k][i] = m; /* state["m"], state["v"] = m, v */
            g->p_state[k + 1][i] = v;
        }
        syn_free(g, old[0]);
        syn_free(g, old[1]);
    } else {
        for (size_t i = 0; i < g->nparams; i++) {
            syn_state_alloc(g, i);
            uint64_t numel = syn_state_resident(c, g->params[i].numel);
            uint64_t g32 = mixed ? syn_alloc(g, numel * 4) : SYN_NONE;
            if (syn_has_adam(c)) {
                uint64_t sq = syn_alloc(g, numel * sb); /* v.sqrt() */
                uint64_t dn = syn_alloc(g, numel * sb); /* / bias_correction2 */
                syn_free(g, sq);
                syn_free(g, dn);
            }
            syn_free(g, g32);
        }
    }
}

static void syn_destroy(syn_t *g)
{
    gm__idmap_release(&g->spill);
    free(g->ring);
    free(g->params);
    free(g->p_id);
    free(g->p_grad);
    for (int s = 0; s < 3; s++)
        free(g->p_state[s]);
    free(g->layer_first);
    free(g->nodes);
}

static int syn_init(syn_t *g, const gm_synth_config_t *c, gm_synth_sink_fn sink, void *ctx,
                    gm_error_t *err)
{
    memset(g, 0, sizeof *g);
    gm__idmap_init(&g->spill);
    g->c = c;
    g->sink = sink;
    g->ctx = ctx;
    g->err = err;
    g->nparams = syn_params(c, NULL);
    g->params = malloc(g->nparams * sizeof *g->params);
    g->p_id = malloc(g->nparams * sizeof *g->p_id);
    g->p_grad = malloc(g->nparams * sizeof *g->p_grad);
    for (int s = 0; s < 3; s++)
        g->p_state[s] = malloc(g->nparams * sizeof *g->p_state[s]);
    g->layer_first = calloc(c->layers + 1, sizeof *g->layer_first);
    g->ring = malloc(SYN_RING * sizeof *g->ring);
    if (g->ring)
        for (uint64_t i = 0; i < SYN_RING; i++)
            g->ring[i].id = SYN_NONE;
    if (!g->ring || !g->params || !g->p_id || !g->p_grad || !g->p_state[0] || !g->p_state[1] ||
        !g->p_state[2] || !g->layer_first) {
        syn_destroy(g);
        return gm_error_set(err, GM_ENOMEM, "out of memory synthesizing a trace");
    }
    syn_params(c, g->params);
    for (size_t i = g->nparams; i-- > 0;) {
        g->p_id[i] = g->p_grad[i] = SYN_NONE;
        for (int s = 0; s < 3; s++)
            g->p_state[s][i] = SYN_NONE;
        if (g->params[i].layer >= 0)
            g->layer_first[g->params[i].layer] = i;
    }
    uint64_t seed = c->seed;
    for (int i = 0; i < 2; i++)
        g->rng[i] = gm__splitmix64(&seed);
    if (g->rng[0] == 0 && g->rng[1] == 0)
        g->rng[0] = 1;
    g->held_logits = SYN_NONE;
    return 0;
}

int gm_synth_run(const gm_synth_config_t *c, gm_synth_sink_fn sink, void *ctx,
                 gm_synth_stats_t *stats, gm_error_t *err)
{
    int rc = gm_synth_check(c, err);
    if (rc)
        return rc;
    syn_t *g = malloc(sizeof *g);
    if (g == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory synthesizing a trace");
    if ((rc = syn_init(g, c, sink, ctx, err)) != 0) {
        free(g);
        return rc;
    }
    int train = syn_train(c);
    uint64_t pb = syn_param_bytes(c);

    /* load: weights (and the fp32 master copy), with warm also the state */
    g->flags = c->warm ? GM_EVENT_PREEXISTING : 0;
    for (size_t i = 0; i < g->nparams; i++) {
        uint64_t numel = train ? syn_param_resident(c, g->params[i].numel)
                               : (c->offload == GM_SYNTH_OFFLOAD_PARAMS ? 0 : g->params[i].numel);
        g->p_id[i] = syn_alloc(g, numel * pb);
    }
    if (syn_state_on_device(c) && c->precision == GM_SYNTH_PREC_MIXED)
        for (size_t i = 0; i < g->nparams; i++)
            g->p_state[0][i] = syn_alloc(g, syn_state_resident(c, g->params[i].numel) * 4);
    if (c->warm && syn_state_on_device(c))
        for (size_t i = 0; i < g->nparams; i++)
            syn_state_alloc(g, i);
    g->flags = 0;

    uint64_t micro = 0;
    for (uint64_t step = 0; step < c->steps && g->rc == 0; step++) {
        g->step_allocs = 0;
        syn_mark(g, GM_SYNTH_TAG_STEP);
        if (train) /* zero_grad(set_to_none=True) */
            for (size_t i = 0; i < g->nparams; i++) {
                syn_free(g, g->p_grad[i]);
                g->p_grad[i] = SYN_NONE;
            }
        uint64_t nmicro = train ? c->grad_accum : 1;
        for (uint64_t m = 0; m < nmicro && g->rc == 0; m++)
            syn_micro(g, micro++);
        if (train)
            syn_optimizer(g);
        syn_free(g, g->held_logits);
        g->held_logits = SYN_NONE;
    }
    syn_flush(g);
    rc = g->rc;
    if (rc == 0 && stats) {
        stats->events = g->events;
        stats->allocs = g->allocs;
        stats->frees = g->frees;
        stats->marks = g->marks;
        stats->peak = g->peak;
        stats->peak_event = g->peak_event;
        stats->peak_phase = g->peak_phase;
        stats->allocs_last_step = g->step_allocs;
        stats->live_at_backward = g->live_at_backward;
    }
    syn_destroy(g);
    free(g);
    return rc;
}

/* ---- writing ------------------------------------------------------------------------ */

typedef struct syn_write_ctx {
    gm_writer_t *w;
    uint32_t stream;
    uint32_t tags[GM_SYNTH_TAG_COUNT];
} syn_write_ctx_t;

static int syn_write_sink(void *ctx, const gm_event_t *ev, size_t n, gm_error_t *err)
{
    syn_write_ctx_t *x = ctx;
    for (size_t i = 0; i < n; i++) {
        gm_event_t e = ev[i];
        if (e.op == GM_OP_MARK)
            e.tag = x->tags[e.tag];
        else
            e.stream = x->stream;
        int rc = gm_writer_add(x->w, &e, err);
        if (rc)
            return rc;
    }
    return 0;
}

void gm_synth_config_json(const gm_synth_config_t *c, gm_json_t *j)
{
    gm_json_begin_object(j);
#define SYN_JU(k, v)       \
    gm_json_key(j, k);     \
    gm_json_u64(j, v)
#define SYN_JS(k, v)       \
    gm_json_key(j, k);     \
    gm_json_str(j, v)
    SYN_JS("model", c->model);
    SYN_JS("arch", gm_synth_name(GM_SYNTH_LIST_ARCH, c->arch));
    SYN_JU("hidden", c->hidden);
    SYN_JU("layers", c->layers);
    SYN_JU("heads", c->heads);
    SYN_JU("kv_heads", syn_kv(c));
    SYN_JU("ffn", syn_ffn(c));
    SYN_JU("vocab", c->vocab);
    SYN_JU("positions", c->positions);
    gm_json_key(j, "tied");
    gm_json_bool(j, c->tied);
    gm_json_key(j, "dropout");
    gm_json_bool(j, c->dropout);
    SYN_JS("ops", gm_synth_name(GM_SYNTH_LIST_OPS, c->ops));
    SYN_JU("params", gm_synth_param_count(c));
    SYN_JU("batch", c->batch);
    gm_json_key(j, "seq");
    switch (c->seq_kind) {
    case GM_SYNTH_SEQ_UNIFORM: {
        char buf[64];
        snprintf(buf, sizeof buf, "uniform:%" PRIu64 ":%" PRIu64, c->seq_lo, c->seq_hi);
        gm_json_str(j, buf);
        break;
    }
    case GM_SYNTH_SEQ_VALUES:
        gm_json_begin_array(j);
        for (size_t i = 0; i < c->nseq_values && i < 4096; i++)
            gm_json_u64(j, c->seq_values[i]);
        gm_json_end_array(j);
        break;
    default: gm_json_u64(j, c->seq);
    }
    SYN_JU("steps", c->steps);
    SYN_JS("mode", gm_synth_name(GM_SYNTH_LIST_MODE, c->mode));
    SYN_JS("precision", gm_synth_name(GM_SYNTH_LIST_PRECISION, c->precision));
    SYN_JS("optimizer", gm_synth_name(GM_SYNTH_LIST_OPTIMIZER, c->optimizer));
    SYN_JS("optimizer_impl", gm_synth_name(GM_SYNTH_LIST_OPTIMPL, c->optimizer_impl));
    SYN_JS("recompute", gm_synth_name(GM_SYNTH_LIST_RECOMPUTE, c->recompute));
    SYN_JS("attention", gm_synth_name(GM_SYNTH_LIST_ATTENTION, c->attention));
    SYN_JU("grad_accum", c->grad_accum);
    SYN_JU("zero", (uint64_t)c->zero);
    SYN_JU("dp", c->dp);
    SYN_JU("tp", c->tp);
    SYN_JS("offload", gm_synth_name(GM_SYNTH_LIST_OFFLOAD, c->offload));
    SYN_JU("seed", c->seed);
    gm_json_key(j, "warm");
    gm_json_bool(j, c->warm);
#undef SYN_JU
#undef SYN_JS
    gm_json_end_object(j);
}

int gm_synth_write(const gm_synth_config_t *c, gm_writer_t *w, gm_synth_stats_t *stats,
                   gm_error_t *err)
{
    int rc = gm_synth_check(c, err);
    if (rc)
        return rc;
    syn_write_ctx_t x = {.w = w};
    if ((rc = gm_writer_stream(w, 0x0, &x.stream, err)))
        return rc;
    for (unsigned t = 0; t < GM_SYNTH_TAG_COUNT; t++)
        if ((rc = gm_writer_tag(w, syn_tag_names[t], &x.tags[t], err)))
            return rc;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    gm_json_t j;
    gm_json_init(&j, f, 0);
    gm_synth_config_json(c, &j);
    if (ferror(f) | fclose(f)) {
        free(text);
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    }
    uint64_t seq = c->seq_kind == GM_SYNTH_SEQ_FIXED ? c->seq : syn_max_seq(c);
    if ((rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "synth", err)) ||
        (rc = gm_writer_attr_str(w, GM_ATTR_MODEL, c->model, err)) ||
        (rc = gm_writer_attr_int(w, GM_ATTR_SEQ_LEN, (int64_t)seq, err)) ||
        (rc = gm_writer_attr_int(w, GM_ATTR_BATCH, (int64_t)c->batch, err)) ||
        (rc = gm_writer_attr_json(w, "config", text, err))) {
        free(text);
        return rc;
    }
    free(text);
    return gm_synth_run(c, syn_write_sink, &x, stats, err);
}

/* ---- estimate ---------------------------------------------------------------------- */

/* A run's allocation sizes by id and, when `events` is set, each event's
 * op and id (to rebuild the live set at the peak). */
typedef struct syn_rec {
    uint64_t *size;
    size_t nsize, capsize;
    uint64_t *evid;
    uint8_t *evop;
    size_t nev, capev;
    int events;
} syn_rec_t;

static int syn_rec_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 4096;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int syn_rec_sink(void *ctx, const gm_event_t *ev, size_t n, gm_error_t *err)
{
    syn_rec_t *r = ctx;
    for (size_t i = 0; i < n; i++) {
        const gm_event_t *e = &ev[i];
        if (r->events) {
            size_t ce = r->capev;
            if (syn_rec_grow((void **)&r->evid, &ce, r->nev + 1, sizeof *r->evid) ||
                syn_rec_grow((void **)&r->evop, &r->capev, r->nev + 1, sizeof *r->evop))
                return gm_error_set(err, GM_ENOMEM, "out of memory");
            r->evid[r->nev] = e->id;
            r->evop[r->nev++] = e->op;
        }
        if (e->op != GM_OP_ALLOC)
            continue;
        if (syn_rec_grow((void **)&r->size, &r->capsize, e->id + 1, sizeof *r->size))
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        while (r->nsize <= e->id)
            r->size[r->nsize++] = 0;
        r->size[e->id] = e->size;
    }
    return 0;
}

static void syn_rec_release(syn_rec_t *r)
{
    free(r->size);
    free(r->evid);
    free(r->evop);
}

/* Split the peak of c (at its fixed length s) by the order in s of each
 * allocation alive then: the same step at 2s (or s/2) gives every
 * allocation's size ratio.  Fills out->peak_by_order and out->dominant;
 * leaves them 0 / -1 when no second length is valid.  GM_ENOMEM. */
static int syn_peak_orders(const gm_synth_config_t *c, gm_synth_estimate_t *out, gm_error_t *err)
{
    out->dominant = -1;
    gm_synth_config_t c2 = *c;
    c2.seq = 2 * c->seq;
    gm_error_t ignore = {0};
    if (gm_synth_check(&c2, &ignore) != 0) {
        if (c->seq < 2)
            return 0;
        c2.seq = c->seq / 2;
    }
    int up = c2.seq > c->seq;
    syn_rec_t r1 = {.events = 1}, r2 = {0};
    gm_synth_stats_t st;
    int rc = gm_synth_run(c, syn_rec_sink, &r1, &st, err);
    if (rc == 0)
        rc = gm_synth_run(&c2, syn_rec_sink, &r2, NULL, err);
    uint8_t *live = rc == 0 ? calloc(r1.nsize ? r1.nsize : 1, 1) : NULL;
    if (rc == 0 && live == NULL)
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
    if (rc == 0) {
        for (size_t k = 0; k <= st.peak_event && k < r1.nev; k++)
            if ((r1.evop[k] == GM_OP_ALLOC || r1.evop[k] == GM_OP_FREE) && r1.evid[k] < r1.nsize)
                live[r1.evid[k]] = r1.evop[k] == GM_OP_ALLOC;
        for (size_t id = 0; id < r1.nsize; id++) {
            if (!live[id])
                continue;
            uint64_t a = r1.size[id], b = id < r2.nsize ? r2.size[id] : 0;
            int o = 3;
            for (int k = 0; k <= 2; k++)
                if (up ? b == a << k : a == b << k)
                    o = k;
            out->peak_by_order[o] += a;
        }
        for (int k = 0; k <= 2; k++)
            if (out->peak_by_order[k] &&
                (out->dominant < 0 || out->peak_by_order[k] > out->peak_by_order[out->dominant]))
                out->dominant = k;
    }
    free(live);
    syn_rec_release(&r1);
    syn_rec_release(&r2);
    return rc;
}

int gm_synth_estimate(const gm_synth_config_t *cfg, gm_synth_estimate_t *out, gm_error_t *err)
{
    int rc = gm_synth_check(cfg, err);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    gm_synth_config_t c = *cfg;
    uint64_t s = syn_max_seq(&c);
    c.seq_kind = GM_SYNTH_SEQ_FIXED;
    c.seq = s;
    c.seq_values = NULL;
    c.nseq_values = 0;
    c.warm = 1;
    c.steps = 2;
    out->param_count = gm_synth_param_count(&c);
    out->seq = s;

    size_t np = syn_params(&c, NULL);
    syn_param_t *p = malloc(np * sizeof *p);
    if (p == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    syn_params(&c, p);
    int train = syn_train(&c);
    uint64_t pb = syn_param_bytes(&c);
    for (size_t i = 0; i < np; i++) {
        uint64_t n = p[i].numel;
        out->params += (train ? syn_param_resident(&c, n)
                              : (c.offload == GM_SYNTH_OFFLOAD_PARAMS ? 0 : n)) * pb;
        if (train)
            out->grads += syn_grad_resident(&c, n) * pb;
        if (syn_state_on_device(&c))
            out->optimizer += syn_state_count(&c) * syn_state_resident(&c, n) * syn_state_bytes(&c);
    }
    free(p);
    syn_sizes_t z;
    syn_sizes(&c, s, &z);
    out->saved = syn_saved_total(&c, &z);
    out->saved_layer = train ? (c.recompute == GM_SYNTH_RECOMPUTE_FULL ? z.U
                                                                        : syn_layer_saved(&c, &z))
                             : 0;
    out->logits = syn_logits_total(&c, &z);
    if (syn_amp(&c) && train) {
        syn_param_t *q = malloc(np * sizeof *q);
        if (q == NULL)
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        syn_params(&c, q);
        /* a fully recomputed layer drops its copies with the rest */
        for (size_t i = 0; i < np; i++)
            if ((syn_is_matrix(q[i].role) ||
                 (q[i].layer < 0 && q[i].role == SYN_R_EMB && c.tied)) &&
                (q[i].layer < 0 || c.recompute != GM_SYNTH_RECOMPUTE_FULL))
                out->casts += q[i].numel * 2;
        free(q);
    }
    out->inputs = z.ids * (train ? 2 : 1);
    out->forward_end = out->params + out->optimizer + out->saved + out->casts + out->logits +
                       out->inputs +
                       (train && c.grad_accum > 1 ? out->grads : 0);
    if (!train)
        out->forward_end = out->params + out->logits + out->inputs;

    gm_synth_stats_t st;
    if ((rc = gm_synth_run(&c, NULL, NULL, &st, err)) != 0)
        return rc;
    out->peak = st.peak;
    out->allocs_per_step = st.allocs_last_step;
    if ((rc = syn_peak_orders(&c, out, err)) != 0)
        return rc;
    const gm_synth_preset_t *pr = gm_synth_preset_find(c.model);
    out->max_positions = c.arch != GM_SYNTH_ARCH_LLAMA && c.positions ? c.positions
                         : pr && pr->arch == c.arch                   ? pr->context
                                                                      : 0;
    /* Temporaries: what the peak holds beyond the standing set of its phase
     * (the update: weights, state, gradients; else the end of forward). */
    uint64_t standing = out->forward_end;
    if (train && st.peak_phase == GM_SYNTH_TAG_OPTIMIZER)
        standing = out->params + out->optimizer + out->grads;
    out->peak_phase = st.peak_phase;
    out->temporaries = st.peak > standing ? st.peak - standing : 0;
    return 0;
}
