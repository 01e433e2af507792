/*
 * synth/model.c — the model a config describes: the names of its choices,
 * the presets, the derived shapes and the config's check, the parameter
 * tensors, and the closed-form byte sizes gm_synth_estimate reports
 * (gmsim/synth.h; the model and its sources are in docs/synth.md).
 *
 * Invariant used by the tests: the live bytes at each "backward" MARK are
 * exactly params + optimizer + saved + logits + inputs (+ gradients kept
 * from earlier micro-batches) as gm_synth_estimate's closed-form formulas
 * give them (synth_layer_saved and friends below); every temporary is
 * freed by then.
 */
#include "gmsim/synth.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth/model.h"
#include "base/text.h"

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
static const char *const syn_grad_names[] = {GM_SYNTH_GRAD_MODES(SYN_NAME)};
static const char *const syn_loss_names[] = {GM_SYNTH_LOSSES(SYN_NAME)};
const char *const syn_tag_names[] = {GM_SYNTH_TAGS(SYN_NAME)};
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
    SYN_LIST(syn_grad_names, GM_SYNTH_GRAD_MODES),
    SYN_LIST(syn_loss_names, GM_SYNTH_LOSSES),
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
        gm__suggest_t s;
        gm__suggest_init(&s, name);
        for (size_t i = 0; i < SYN_NPRESETS; i++)
            gm__suggest_add(&s, syn_presets[i].name);
        /* With a suggestion the list is left out: it would crowd the line. */
        char msg[2 * GM_ERROR_MSG_MAX], near[GM_ERROR_MSG_MAX / 2]; /* cut by gm_error_set */
        snprintf(msg, sizeof msg, "unknown model '%s'", name);
        if (gm__suggest_text(&s, near, sizeof near) == NULL)
            snprintf(msg, sizeof msg, "unknown model '%s' (known: %s)", name, known);
        return gm_error_set(err, GM_ENOTFOUND, "%s", gm__suggest_append(&s, msg, sizeof msg));
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
    cfg->grad_mode = GM_SYNTH_GRAD_NO_GRAD;
    cfg->loss = -1;
    cfg->seed = 1;
}

/* ---- derived shapes --------------------------------------------------------- */

/* The FFN width: given, else 4h (gpt, bert), else LLaMA's rule
 * 256·ceil((2/3·4h)/256). */
uint64_t syn_ffn(const gm_synth_config_t *c)
{
    if (c->ffn)
        return c->ffn;
    if (c->arch == GM_SYNTH_ARCH_LLAMA) {
        uint64_t f = 8 * c->hidden / 3;
        return (f + 255) / 256 * 256;
    }
    return 4 * c->hidden;
}

uint64_t syn_max_seq(const gm_synth_config_t *c)
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
    SYN_REQUIRE(c->grad_mode >= 0 && c->grad_mode < GM_SYNTH_GRAD_COUNT, "invalid grad mode");
    SYN_REQUIRE(c->grad_mode == GM_SYNTH_GRAD_NO_GRAD || c->mode == GM_SYNTH_MODE_INFERENCE,
                "grad mode inference_mode is for --mode inference (train and forward record "
                "the graph)");
    SYN_REQUIRE(c->loss >= -1 && c->loss < GM_SYNTH_LOSS_COUNT, "invalid loss");
    SYN_REQUIRE(c->mode != GM_SYNTH_MODE_TRAIN || gm_synth_loss(c) == GM_SYNTH_LOSS_CE,
                "a training step needs a loss (--loss ce)");
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

int gm_synth_loss(const gm_synth_config_t *c)
{
    if (c->loss >= 0)
        return c->loss;
    return c->mode == GM_SYNTH_MODE_TRAIN ? GM_SYNTH_LOSS_CE : GM_SYNTH_LOSS_NONE;
}

/* ---- parameters -------------------------------------------------------------- */

/* The parameter tensors of the model on one tensor-parallel rank, in
 * module order.  Returns the count; out may be NULL (count only). */
size_t syn_params(const gm_synth_config_t *c, syn_param_t *out)
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
    /* A layer norm: its weight, and its bias but in LLaMA (RMSNorm has none). */
#define SYN_NORM(lay)                     \
    do {                                  \
        SYN_P(h, lay, SYN_R_NORM);        \
        if (bias)                         \
            SYN_P(h, lay, SYN_R_BIAS);    \
    } while (0)
    SYN_P(c->vocab * h / t, SYN_P_GLOBAL, SYN_R_EMB);
    if (!llama)
        SYN_P(c->positions * h, SYN_P_GLOBAL, SYN_R_POS);
    if (c->arch == GM_SYNTH_ARCH_BERT) {
        SYN_P(2 * h, SYN_P_GLOBAL, SYN_R_POS); /* token types */
        SYN_NORM(SYN_P_GLOBAL);
    }
    for (uint64_t l = 0; l < c->layers; l++) {
        int32_t L = (int32_t)l;
        SYN_NORM(L);
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
        SYN_NORM(L);
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
    if (c->arch != GM_SYNTH_ARCH_BERT) /* final norm (BERT: post-norm, none) */
        SYN_NORM(SYN_P_GLOBAL);
    if (c->arch == GM_SYNTH_ARCH_BERT) { /* MLM head transform + decoder bias */
        SYN_P(h * h, SYN_P_GLOBAL, SYN_R_POOL);
        SYN_P(h, SYN_P_GLOBAL, SYN_R_BIAS);
        SYN_NORM(SYN_P_GLOBAL);
        SYN_P(c->vocab, SYN_P_GLOBAL, SYN_R_BIAS);
    }
    if (!c->tied)
        SYN_P(c->vocab * h / t, SYN_P_GLOBAL, SYN_R_HEAD);
#undef SYN_NORM
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

void syn_sizes(const gm_synth_config_t *c, uint64_t s, syn_sizes_t *z)
{
    uint64_t b = c->batch, h = c->hidden, t = c->tp, e = syn_act_bytes(c);
    uint64_t at = c->heads / t, d = h / c->heads, kvt = syn_kv(c) / t;
    int amp = syn_amp(c);
    uint64_t ew = amp ? 4 : e; /* what autocast runs in fp32 */
    z->U = s * b * h * ew;
    z->Uh = s * b * h * e;
    z->Uq = s * b * at * d * e;
    z->Ukv = s * b * kvt * d * e;
    z->Uqr = amp && syn_composite(c) ? 2 * z->Uq : z->Uq;
    z->Ukvr = amp && syn_composite(c) ? 2 * z->Ukv : z->Ukv;
    z->F = s * b * (syn_ffn(c) / t) * e;
    z->S = b * at * s * s * e;
    z->Sp = b * at * s * s * ew;
    z->M = b * at * s * s;
    z->C = s * s;
    z->P = s * 8;
    z->Mu = s * b * h;
    z->R = s * b * 4;
    z->Rh = b * at * s * 4;
    z->Rhe = b * at * s * e;
    z->Re = s * b * e;
    z->L = s * b * (c->vocab / t) * e;
    z->L32 = s * b * (c->vocab / t) * 4;
    z->ids = s * b * 8;
}

/* A byte count as a sum of multiples of the sizes above. */
typedef struct syn_coef {
    uint64_t U, Uh, Uq, Ukv, F, S, Sp, M, Mu, R, Rh, C;
} syn_coef_t;

static uint64_t syn_coef_bytes(const syn_coef_t *k, const syn_sizes_t *z)
{
    return k->U * z->U + k->Uh * z->Uh + k->Uq * z->Uq + k->Ukv * z->Ukv + k->F * z->F +
           k->S * z->S + k->Sp * z->Sp + k->M * z->M + k->Mu * z->Mu + k->R * z->R +
           k->Rh * z->Rh + k->C * z->C;
}

/* What a norm keeps for backward (its input belongs to its producer; its
 * output is the reading matmul's, except under amp, where that matmul
 * keeps a 16-bit copy instead). */
static void syn_norm_coef(const gm_synth_config_t *c, syn_coef_t *k)
{
    int out = !syn_amp(c);
    if (syn_composite(c)) {
        k->U += 1 + (uint64_t)out;
        k->R += 1;
    } else {
        k->U += (uint64_t)out;
        k->R += syn_llama(c) ? 1 : 2;
    }
}

static uint64_t syn_norm_saved(const gm_synth_config_t *c, const syn_sizes_t *z)
{
    syn_coef_t k = {0};
    syn_norm_coef(c, &k);
    return syn_coef_bytes(&k, z);
}

/* The s²-sized part of the attention core that selective recompute drops:
 * the softmax (composite: exp) in its type, the probabilities (amp: p @ v's
 * 16-bit copy of them), the max indices and row sums, the dropout's mask
 * and (but under amp, where p @ v keeps the copy) its output. */
static void syn_attn_core_coef(const gm_synth_config_t *c, syn_coef_t *k)
{
    if (c->attention == GM_SYNTH_ATTN_FLASH)
        return;
    int amp = syn_amp(c);
    k->Sp += 1;
    if (syn_composite(c)) {
        k->S += 1;
        k->Rh += 3;
    } else if (amp) {
        k->S += 1;
    }
    if (syn_dropout(c)) {
        k->M += 1;
        k->S += (uint64_t)!amp;
    }
}

/* Closed form: what one layer keeps from its forward to its backward
 * (training, no full recompute), its output included. */
static void syn_layer_coef(const gm_synth_config_t *c, syn_coef_t *k)
{
    memset(k, 0, sizeof *k);
    syn_norm_coef(c, k);
    syn_norm_coef(c, k);
    if (syn_amp(c)) /* the linears' 16-bit copies of their fp32 (normed) inputs */
        k->Uh += syn_llama(c) ? 5 : 2;
    int vcopy = syn_composite(c) && c->attention == GM_SYNTH_ATTN_EAGER;
    if (syn_llama(c)) { /* v (composite: einsum's contiguous copy of v), rope(q), rope(k)
                           (amp composite: q @ kᵀ's 16-bit copies of them) */
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

uint64_t syn_layer_saved(const gm_synth_config_t *c, const syn_sizes_t *z)
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
    int amp = syn_amp(c);
    if (!amp) { /* one element type: no separate 16-bit or fp32 terms */
        k.U += k.Uh;
        k.S += k.Sp;
        k.Uh = k.Sp = 0;
    }
    const char *const names[] = {amp ? "sbh*4" : "sbh*e", "sbh*e", "sbh*e/t", "s*b*kv*d*e/t",
                                 "sbf*e/t", "a*s^2*b*e/t", "a*s^2*b*4/t", "a*s^2*b/t", "sbh",
                                 "sb*4", "a*s*b*4/t", "s^2"};
    const uint64_t v[] = {k.U, k.Uh, k.Uq, k.Ukv, k.F, k.S, k.Sp, k.M, k.Mu, k.R, k.Rh, k.C};
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
uint64_t syn_saved_total(const gm_synth_config_t *c, const syn_sizes_t *z)
{
    if (!syn_grad(c))
        return 0;
    int amp = syn_amp(c);
    uint64_t head = syn_norm_saved(c, z);
    if (c->arch == GM_SYNTH_ARCH_BERT) /* MLM transform: dense out, gelu out, norm (amp: the
                                          dense's input copy, layer_norm's fp32 copy) */
        head += (amp ? 3 * z->Uh + z->U : 2 * z->U) + syn_norm_saved(c, z);
    if (amp) /* the output layer's copy of its input */
        head += z->Uh;
    uint64_t per = c->recompute == GM_SYNTH_RECOMPUTE_FULL ? z->U : syn_layer_saved(c, z);
    return z->U /* embedding output */ + c->layers * per + head;
}

/* Closed form: the logits and loss tensors alive at the end of forward. */
uint64_t syn_logits_total(const gm_synth_config_t *c, const syn_sizes_t *z)
{
    uint64_t v = z->L;
    int upcast = !syn_amp(c) && syn_act_bytes(c) != 4; /* logits.float() */
    if (!syn_grad(c))
        return v + (syn_loss(c) ? 4 : upcast ? z->L32 : 0);
    if (!syn_loss(c))
        return v;
    if (upcast)
        v += z->L32;
    if (syn_composite(c))
        v += 2 * z->L32 + z->R + z->ids; /* exp, −logp, the row sums, max indices */
    else
        v += z->L32; /* log-probabilities */
    return v + 4;    /* the loss */
}
