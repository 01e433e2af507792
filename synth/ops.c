/*
 * synth/ops.c — the forward ops of a transformer layer as the generator
 * plays them (synth/gen.h): the amp casts, norms, RoPE, the attention core
 * and the layer; and the backward scripts of the ops whose backward is
 * their own elementwise graph's (composite attention, composite
 * cross-entropy).
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
 */
#include "gmsim/synth.h"

#include <stdint.h>

#include "synth/gen.h"
#include "synth/model.h"

/* A matrix that a matmul reads (autocast casts it to 16-bit). */
int syn_is_matrix(int role)
{
    switch (role) {
    case SYN_R_QKV: case SYN_R_Q: case SYN_R_K: case SYN_R_V: case SYN_R_O: case SYN_R_FC1:
    case SYN_R_FC2: case SYN_R_GATE: case SYN_R_UP: case SYN_R_DOWN: case SYN_R_HEAD:
    case SYN_R_POOL: return 1;
    default: return 0;
    }
}

/* amp: the 16-bit copy autocast makes of weight p for a matmul, at the
 * weight's first use in the context (PyTorch's cached_cast: an fp32 leaf
 * that requires grad).  With autograd the matmul's node saves it (freed
 * after its backward); a layer whose graph full recompute drops leaves it
 * to the cast cache (g->casts, freed when the context exits at the end of
 * the forward pass), and so does no_grad inference.  Under
 * inference_mode nothing caches it: returned, for the caller to free
 * after the matmul (syn_mm_done).  Biases are not counted. */
static uint64_t syn_wcast(syn_t *g, int32_t p)
{
    if (!syn_amp(g->c) || p < 0)
        return SYN_NONE;
    uint64_t size = g->params[p].numel * 2;
    int grad = syn_grad(g->c);
    uint64_t id = grad ? syn_keep_as(g, size, GM_SYNTH_CLASS_WEIGHT_COPIES)
                       : syn_alloc_as(g, size, GM_SYNTH_CLASS_WEIGHT_COPIES);
    int cached = grad ? g->c->recompute == GM_SYNTH_RECOMPUTE_FULL && !g->rerun && g->layer >= 0
                      : syn_cast_cached(g->c);
    if (cached)
        syn_cache_cast(g, id);
    return grad || cached ? SYN_NONE : id;
}

/* A matmul's operands under amp, before its output is allocated: the
 * 16-bit copy of its fp32 input (xsize bytes at 16 bits; 0 when the input
 * is 16-bit already) and of its weight p (-1: none).  With autograd the
 * node saves both in place of the fp32 originals; without, the input's
 * copy is a temporary that tmp[] hands to syn_mm_done. */
static void syn_mm(syn_t *g, uint64_t xsize, int32_t p, uint64_t tmp[2])
{
    tmp[0] = tmp[1] = SYN_NONE;
    if (!syn_amp(g->c))
        return;
    if (xsize && syn_grad(g->c))
        syn_keep_as(g, xsize, GM_SYNTH_CLASS_INPUT_COPIES);
    else if (xsize)
        tmp[0] = syn_alloc_as(g, xsize, GM_SYNTH_CLASS_INPUT_COPIES);
    tmp[1] = syn_wcast(g, p);
}

/* After the matmul's output: free what syn_mm left to the caller. */
static void syn_mm_done(syn_t *g, const uint64_t tmp[2])
{
    syn_free(g, tmp[0]);
    syn_free(g, tmp[1]);
}

/* A norm over x (x attached to the node: the norm needs its input).
 * Returns the normalized output: saved by the node (the matmul that reads
 * it saves it), except under amp, where that matmul saves its 16-bit copy
 * instead and the output is the caller's to free (fp32 under autocast:
 * layer_norm, pow and rsqrt run in fp32, and the residual stream is fp32). */
uint64_t syn_norm(syn_t *g, int32_t layer, int k, uint64_t x)
{
    const gm_synth_config_t *c = g->c;
    const syn_sizes_t *z = &g->z;
    int amp = syn_amp(c);
    /* bias order: layer ln1 0, qkv 1, out 2, ln2 3, fc1 4, fc2 5; global
     * (BERT) embedding-norm 0, transform 1, MLM-norm 2, decoder 3 */
    int bk = k == 0 ? 0 : (layer >= 0 ? 3 : 2);
    syn_node(g, SYN_NODE_OP, z->U, syn_pidx(g, layer, SYN_R_NORM, k),
             syn_llama(c) ? -1 : syn_pidx(g, layer, SYN_R_BIAS, bk), -1);
    /* inference with Python's lifetimes: the input belongs to the caller */
    if (syn_grad(c) || !(syn_composite(c) && c->attention == GM_SYNTH_ATTN_EAGER))
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
        out = amp ? syn_alloc(g, z->U) : syn_keep(g, z->U); /* * weight */
        if (!syn_grad(c)) {             /* no_grad: the locals die with the call */
            syn_free(g, xr);
            syn_free(g, rs);
        }
    } else if (syn_llama(c)) {
        syn_keep(g, z->R);
        out = amp ? syn_alloc(g, z->U) : syn_keep(g, z->U);
    } else {
        out = amp ? syn_alloc(g, z->U) : syn_keep(g, z->U);
        syn_keep(g, z->R); /* mean */
        syn_keep(g, z->R); /* rstd */
    }
    return out;
}

/* RoPE on x of `size` bytes: x·cos + rotate_half(x)·sin; with composite
 * ops the pairwise form of from-scratch code (x1·cos − x2·sin and
 * x1·sin + x2·cos on the two halves, then concatenated).  Composite code
 * keeps cos and sin as fp32 buffers, so under amp the products promote
 * the 16-bit x to fp32 (rsize bytes out): no op saves that output (q·kᵀ
 * saves its 16-bit copy), it is the caller's local. */
static uint64_t syn_rope(syn_t *g, uint64_t x, uint64_t size, uint64_t rsize)
{
    if (syn_composite(g->c)) {
        uint64_t half[2];
        for (int i = 0; i < 2; i++) {
            uint64_t t1 = syn_alloc(g, rsize / 2), t2 = syn_alloc(g, rsize / 2);
            half[i] = syn_alloc(g, rsize / 2); /* − or + */
            syn_free(g, t1);
            syn_free(g, t2);
        }
        uint64_t out = syn_amp(g->c) ? syn_alloc(g, rsize) : syn_keep(g, size); /* cat */
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

/* amp: the attention's lower-precision op (einsum, SDPA) copies RoPE's
 * fp32 q and k (composite code) to 16 bits; autograd saves the copies,
 * without it they are the caller's to free after the op (cq[]). */
static void syn_rope_casts(syn_t *g, uint64_t cq[2])
{
    cq[0] = cq[1] = SYN_NONE;
    if (g->z.Uqr == g->z.Uq || !syn_llama(g->c))
        return;
    cq[0] = syn_alloc_as(g, g->z.Uq, GM_SYNTH_CLASS_INPUT_COPIES);
    cq[1] = syn_alloc_as(g, g->z.Ukv, GM_SYNTH_CLASS_INPUT_COPIES);
    if (syn_grad(g->c)) {
        syn_attach(g, cq[0]);
        syn_attach(g, cq[1]);
        cq[0] = cq[1] = SYN_NONE;
    }
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
    int train = syn_grad(c), amp = syn_amp(c);
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
    uint64_t cq[2];
    syn_rope_casts(g, cq);
    uint64_t sc = syn_alloc(g, z->S); /* q @ kᵀ */
    syn_free(g, cq[0]);
    syn_free(g, cq[1]);
    uint64_t sc2 = syn_alloc(g, z->S); /* / sqrt(d) */
    syn_free(g, sc);
    uint64_t m = sc2;
    if (syn_causal_mask(c)) {
        m = syn_alloc(g, z->S); /* torch.where(mask, scores, -inf) */
        syn_free(g, sc2);
    }
    uint64_t mx = syn_alloc(g, z->Rhe); /* max values */
    SYN_ACORE(SYN_A_IDX, 2 * z->Rh);   /* max indices (int64) */
    if (!train)
        syn_free(g, ids[SYN_A_IDX]);
    uint64_t sh = syn_alloc(g, z->S); /* x - max */
    syn_free(g, mx);
    /* amp: exp runs in fp32 (autocast's fp32 list): a copy of x − max, then
     * fp32 exp, sum and probabilities; p @ v copies them back to 16 bits */
    uint64_t up = amp ? syn_alloc(g, z->Sp) : SYN_NONE;
    SYN_ACORE(SYN_A_EXP, z->Sp);
    syn_free(g, up);
    SYN_ACORE(SYN_A_SUM, z->Rh);
    uint64_t p = SYN_NONE, dp = SYN_NONE; /* amp: the fp32 locals */
    if (amp)
        p = syn_alloc(g, z->Sp); /* exp / sum */
    else
        SYN_ACORE(SYN_A_PROBS, z->S);
    if (!train) {
        syn_free(g, ids[SYN_A_SUM]);
        syn_free(g, sh);
        syn_free(g, ids[SYN_A_EXP]);
    } else {
        syn_free(g, sh);
    }
    if (syn_dropout(c)) {
        SYN_ACORE(SYN_A_DMASK, z->M); /* the dropout mask */
        if (amp)
            dp = syn_alloc(g, z->Sp);
        else
            SYN_ACORE(SYN_A_DROP, z->S); /* the dropped probabilities */
    }
    if (amp)
        SYN_ACORE(SYN_A_PROBS, z->S); /* p @ v's 16-bit copy of p */
    uint64_t vc = syn_keep(g, syn_gqa_expand(c) ? z->Uq : z->Ukv); /* v.contiguous() */
    if (n)
        n->aid[SYN_A_VCOPY] = vc;
    uint64_t o = syn_alloc(g, z->Uq); /* p @ v */
    if (!train)
        syn_free(g, vc);
    syn_free(g, m);
    if (!train)
        syn_free(g, ids[SYN_A_PROBS]);
    syn_free(g, dp);
    syn_free(g, p);
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
void syn_attention_backward(syn_t *g, const syn_node_t *n, uint64_t grad, uint64_t *gin)
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
    if (z->Sp != z->S) { /* amp: the copy's backward, back to fp32 */
        uint64_t g32 = syn_alloc(g, z->Sp);
        syn_free(g, gp);
        gp = g32;
    }
    uint64_t t[4];
    for (int i = 0; i < 4; i++) /* grad / sum, exp / sum, −, · grad */
        t[i] = syn_alloc(g, z->Sp);
    for (int i = 3; i-- > 0;)
        syn_free(g, t[i]);
    uint64_t ge = syn_alloc(g, z->Sp); /* the gradient of exp */
    uint64_t gs = syn_alloc(g, z->Rh); /* the gradient of sum, reduced */
    syn_free(g, t[3]);
    syn_free(g, gp);
    syn_free(g, n->aid[SYN_A_SUM]);
    syn_free(g, gs);
    uint64_t gx = syn_alloc(g, z->Sp); /* exp's backward: · exp */
    syn_free(g, ge);
    syn_free(g, n->aid[SYN_A_EXP]);
    if (z->Sp != z->S) { /* amp: exp's copy's backward, back to 16 bits */
        uint64_t g16 = syn_alloc(g, z->S);
        syn_free(g, gx);
        gx = g16;
    }
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
void syn_ce_backward(syn_t *g, const syn_node_t *n, uint64_t grad, uint64_t *gin)
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
            g, n, c->recompute == GM_SYNTH_RECOMPUTE_SELECTIVE && syn_grad(c));
    }
    if (c->attention == GM_SYNTH_ATTN_FLASH) {
        uint64_t cq[2];
        syn_rope_casts(g, cq);
        uint64_t o = syn_keep(g, z->Uq);
        syn_free(g, cq[0]);
        syn_free(g, cq[1]);
        syn_keep(g, z->Rh); /* logsumexp */
        if (n)
            n->btmp = z->Uq; /* dO·O row sums and workspace */
        return o;
    }
    if (syn_gqa_expand(c)) { /* repeat_kv: k and v expanded to every head */
        syn_keep(g, z->Uq);
        syn_keep(g, z->Uq);
    }
    int selective = c->recompute == GM_SYNTH_RECOMPUTE_SELECTIVE && syn_grad(c);
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
    /* softmax; under amp in fp32 (fp32_set_opt_dtype: the 16-bit scores
     * copied to fp32 first), and p @ v saves its 16-bit copy of p */
    uint64_t up = syn_amp(c) ? syn_alloc(g, z->Sp) : SYN_NONE;
    SYN_CORE(z->Sp); /* softmax output */
    syn_free(g, up);
    syn_free(g, cur);
    uint64_t dp = SYN_NONE;
    if (syn_dropout(c)) {
        SYN_CORE(z->M); /* mask */
        if (syn_amp(c))
            dp = syn_alloc(g, z->Sp);
        else
            SYN_CORE(z->S); /* dropped probabilities */
    }
    if (syn_amp(c))
        SYN_CORE(z->S); /* p @ v's 16-bit copy of p */
    syn_free(g, dp);
    uint64_t o = syn_alloc(g, z->Uq);  /* p @ v */
    uint64_t ctx = syn_keep(g, z->Uq); /* transpose(1, 2).contiguous() */
    syn_free(g, o);
    for (size_t i = ncore; i-- > 0;)
        syn_free(g, core[i]);
#undef SYN_CORE
    if (n)
        n->btmp = z->Sp; /* softmax backward */
    return ctx;
}

/* A linear layer's output of `size` bytes from weight p: under amp its
 * operands' 16-bit copies first (xsize: the input's, 0 when it is 16-bit
 * already), a copy a temporary freed after the output when nothing saves
 * it.  `keep`: autograd saves the output. */
static uint64_t syn_linear(syn_t *g, uint64_t xsize, int32_t p, uint64_t size, int keep)
{
    uint64_t tmp[2];
    syn_mm(g, xsize, p, tmp);
    uint64_t out = keep ? syn_keep(g, size) : syn_alloc(g, size);
    syn_mm_done(g, tmp);
    return out;
}

/* The end of a sublayer (attention, MLP) that returned y: its amp input
 * copy xf freed, then, under dropout, the kept mask and a new output in
 * place of y.  Returns the output. */
static uint64_t syn_sublayer_out(syn_t *g, uint64_t xf, uint64_t y)
{
    syn_free(g, xf);
    if (syn_dropout(g->c)) {
        syn_keep(g, g->z.Mu);
        uint64_t yd = syn_alloc(g, g->z.Uh);
        syn_free(g, y);
        y = yd;
    }
    return y;
}

/* One transformer layer's forward from input x; returns its output.
 * Under amp the residual stream and the norms are fp32, each linear
 * saves 16-bit copies of its fp32 input and its weight and returns 16
 * bits, and a norm's output (not saved) lives until the linears that
 * read it ran (composite: until the sublayer returns). */
uint64_t syn_layer(syn_t *g, int32_t l, uint64_t x)
{
    const gm_synth_config_t *c = g->c;
    const syn_sizes_t *z = &g->z;
    int amp = syn_amp(c);
    uint64_t gathered[64];
    size_t ngathered;
    g->layer = l;
    syn_gather(g, l, gathered, &ngathered);

    /* attention block */
    syn_node(g, SYN_NODE_FORK, 0, -1, -1, -1);
    uint64_t xn = syn_norm(g, l, 0, x);
    uint64_t xf = amp ? xn : SYN_NONE; /* amp: the norm's output, this function's to free */
    /* composite ops: Python's locals (v, the output projection's result)
     * live to the end of the function that made them */
    int py = syn_composite(c) && c->attention == GM_SYNTH_ATTN_EAGER;
    uint64_t v = SYN_NONE, qr = SYN_NONE, kr = SYN_NONE;
    if (syn_llama(c)) {
        int32_t wq = syn_pidx(g, l, SYN_R_Q, 0), wk = syn_pidx(g, l, SYN_R_K, 0),
                wv = syn_pidx(g, l, SYN_R_V, 0);
        syn_node(g, SYN_NODE_OP, z->U, wq, wk, wv);
        uint64_t q = syn_linear(g, z->Uh, wq, z->Uq, 0);
        uint64_t k = syn_linear(g, z->Uh, wk, z->Ukv, 0);
        /* einsum (composite) saves its own contiguous copy of v */
        v = syn_linear(g, z->Uh, wv, z->Ukv, !py);
        if (!py) { /* saved, and the norm's output read by every linear */
            v = SYN_NONE;
            syn_free(g, xf);
            xf = SYN_NONE;
        }
        syn_node(g, SYN_NODE_OP, z->Uq + z->Ukv, -1, -1, -1);
        qr = syn_rope(g, q, z->Uq, z->Uqr);
        kr = syn_rope(g, k, z->Ukv, z->Ukvr);
        if (z->Uqr == z->Uq) /* saved (only amp's fp32 composite RoPE is a local) */
            qr = kr = SYN_NONE;
    } else {
        int32_t w = syn_pidx(g, l, SYN_R_QKV, 0);
        syn_node(g, SYN_NODE_OP, z->U, w,
                 syn_pidx(g, l, SYN_R_BIAS, 1), -1);
        syn_linear(g, z->Uh, w, z->Uq + 2 * z->Ukv, 1); /* fused */
        if (!py) {
            syn_free(g, xf);
            xf = SYN_NONE;
        }
    }
    syn_attention(g); /* the context, kept by the output projection */
    if (!py) { /* RoPE's fp32 outputs die once the attention read them */
        syn_free(g, qr);
        syn_free(g, kr);
    }
    int32_t wo = syn_pidx(g, l, SYN_R_O, 0);
    syn_node(g, SYN_NODE_OP, z->Uq, wo,
             syn_llama(c) ? -1 : syn_pidx(g, l, SYN_R_BIAS, 2), -1);
    uint64_t y = syn_linear(g, 0, wo, z->Uh, 0);
    syn_free(g, v);
    syn_free(g, qr);
    syn_free(g, kr);
    y = syn_sublayer_out(g, xf, y);
    uint64_t yattn = SYN_NONE; /* composite: alive until the block returns */
    if (py && !syn_grad(c))
        syn_block_end(g);
    syn_node(g, SYN_NODE_JOIN, 0, -1, -1, -1);
    uint64_t x2 = syn_alloc(g, z->U); /* x + y */
    if (py)
        yattn = y;
    else
        syn_free(g, y);
    if (!syn_grad(c) && !py) {
        syn_free(g, x);
        syn_block_end(g);
    }

    /* MLP block */
    y = SYN_NONE;
    syn_node(g, SYN_NODE_FORK, 0, -1, -1, -1);
    xn = syn_norm(g, l, 1, x2);
    xf = amp ? xn : SYN_NONE;
    int32_t wout;
    if (syn_llama(c)) {
        int32_t wg = syn_pidx(g, l, SYN_R_GATE, 0), wu = syn_pidx(g, l, SYN_R_UP, 0);
        wout = syn_pidx(g, l, SYN_R_DOWN, 0);
        syn_node(g, SYN_NODE_OP, z->U, wg, wu, -1);
        if (py) { /* w2(silu(w1 x) * w3 x), evaluated in that order */
            uint64_t gate = syn_linear(g, z->Uh, wg, z->F, 1); /* w1 x */
            syn_node_t *n = syn_node(g, SYN_NODE_OP, 2 * z->F, -1, -1, -1);
            if (n)
                n->btmp = z->F;
            uint64_t sg = syn_keep(g, z->F); /* sigmoid(gate) */
            uint64_t si = syn_keep(g, z->F); /* gate * sigmoid */
            if (!syn_grad(c)) {
                syn_free(g, sg);
                syn_free(g, gate);
            }
            uint64_t up = syn_linear(g, z->Uh, wu, z->F, 1); /* w3 x */
            uint64_t pr = syn_keep(g, z->F);                 /* silu * up */
            if (!syn_grad(c)) {
                syn_free(g, si);
                syn_free(g, up);
            }
            syn_node(g, SYN_NODE_OP, z->F, wout, -1, -1);
            y = syn_linear(g, 0, wout, z->Uh, 0);
            if (!syn_grad(c))
                syn_free(g, pr);
        } else {
            syn_linear(g, z->Uh, wg, z->F, 1); /* gate */
            syn_linear(g, z->Uh, wu, z->F, 1); /* up */
            syn_free(g, xf);
            xf = SYN_NONE;
            syn_node_t *n = syn_node(g, SYN_NODE_OP, 2 * z->F, -1, -1, -1);
            if (n)
                n->btmp = z->F;
            if (syn_composite(c))
                syn_keep(g, z->F); /* sigmoid(gate) */
            syn_keep(g, z->F);     /* silu(gate) */
            syn_keep(g, z->F);     /* * up */
            syn_node(g, SYN_NODE_OP, z->F, wout, -1, -1);
        }
    } else {
        int32_t w1 = syn_pidx(g, l, SYN_R_FC1, 0);
        wout = syn_pidx(g, l, SYN_R_FC2, 0);
        syn_node(g, SYN_NODE_OP, z->U, w1, syn_pidx(g, l, SYN_R_BIAS, 4), -1);
        syn_linear(g, z->Uh, w1, z->F, 1); /* fc1 out */
        if (!py) {
            syn_free(g, xf);
            xf = SYN_NONE;
        }
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
        syn_node(g, SYN_NODE_OP, z->F, wout, syn_pidx(g, l, SYN_R_BIAS, 5), -1);
    }
    if (y == SYN_NONE)
        y = syn_linear(g, 0, wout, z->Uh, 0);
    y = syn_sublayer_out(g, xf, y);
    if (py && !syn_grad(c))
        syn_block_end(g);
    syn_node(g, SYN_NODE_JOIN, 0, -1, -1, -1);
    uint64_t x3 = syn_alloc(g, z->U);
    if (py) {
        syn_free(g, yattn);
        if (!syn_grad(c))
            syn_free(g, x2);
        syn_free(g, y);
        if (!syn_grad(c)) /* the caller's x = layer(x) drops the input */
            syn_free(g, x);
    } else {
        syn_free(g, y);
        if (!syn_grad(c)) {
            syn_free(g, x2);
            syn_block_end(g);
        }
    }
    syn_release(g, gathered, ngathered);
    g->cur = NULL;
    g->layer = SYN_P_GLOBAL;
    return x3;
}

/* The head from the last layer's output x: the final norm, (BERT's MLM
 * transform: dense, GELU, norm), the output layer.  Returns the logits
 * (16-bit under amp). */
uint64_t syn_head(syn_t *g, uint64_t x)
{
    const gm_synth_config_t *c = g->c;
    const syn_sizes_t *z = &g->z;
    int amp = syn_amp(c);
    uint64_t xn = syn_norm(g, SYN_P_GLOBAL, 0, x);
    if (!syn_grad(c))
        syn_free(g, x);
    if (c->arch == GM_SYNTH_ARCH_BERT) {
        int32_t w = syn_pidx(g, SYN_P_GLOBAL, SYN_R_POOL, 0);
        syn_node(g, SYN_NODE_OP, z->U, w, syn_pidx(g, SYN_P_GLOBAL, SYN_R_BIAS, 1), -1);
        syn_linear(g, z->Uh, w, z->Uh, 1); /* dense */
        if (amp)
            syn_free(g, xn);
        syn_node(g, SYN_NODE_OP, z->U, -1, -1, -1);
        syn_keep(g, z->Uh); /* gelu */
        if (amp)            /* layer_norm (fp32 list) saves its fp32 copy */
            syn_keep(g, z->U);
        xn = syn_norm(g, SYN_P_GLOBAL, 1, SYN_NONE);
    }
    int32_t head = c->tied ? syn_pidx(g, SYN_P_GLOBAL, SYN_R_EMB, 0)
                           : syn_pidx(g, SYN_P_GLOBAL, SYN_R_HEAD, 0);
    syn_node(g, SYN_NODE_OP, z->U, head,
             c->arch == GM_SYNTH_ARCH_BERT ? syn_pidx(g, SYN_P_GLOBAL, SYN_R_BIAS, 3) : -1, -1);
    uint64_t tmp[2];
    syn_mm(g, z->Uh, head, tmp);
    g->cur = NULL;
    uint64_t logits = syn_alloc_as(g, z->L, GM_SYNTH_CLASS_LOGITS);
    syn_mm_done(g, tmp);
    if (amp)
        syn_free(g, xn);
    return logits;
}

/* The cross-entropy after the logits, returning the loss.  With autograd
 * its node keeps what backward reads (composite: its own script); without,
 * every tensor is a temporary of the block.  Composite code writes
 * log_softmax out (max, x − max, exp, sum, log) and takes −logp at the
 * targets; 16-bit runs upcast the logits first (logits.float()), while
 * under amp autocast's rules decide: exp (and log_softmax) run in fp32 on
 * a copy, the rest follows its inputs. */
uint64_t syn_loss_forward(syn_t *g, uint64_t logits)
{
    const gm_synth_config_t *c = g->c;
    const syn_sizes_t *z = &g->z;
    int amp = syn_amp(c);
    g->kcls = GM_SYNTH_CLASS_LOGITS; /* what it keeps is the loss's */
    syn_node_t *ln = syn_node(g, SYN_NODE_OP, z->L, -1, -1, -1);
    if (ln)
        ln->btmp = z->L32;
    /* composite (a from-scratch loop, `logits = model(x)`): the name holds
     * them through backward and the optimizer step, until the next
     * micro-batch rebinds it; else the loss node keeps them for backward */
    if (syn_composite(c) && syn_train(c)) {
        syn_free(g, g->held_logits);
        g->held_logits = logits;
    } else if (syn_grad(c)) {
        syn_attach(g, logits);
    }
    if (!amp && syn_act_bytes(c) != 4)
        syn_keep(g, z->L32); /* logits.float() */
    if (syn_composite(c)) { /* log_softmax written out, then −logp[target] */
        uint64_t mx = syn_alloc(g, amp ? z->Re : z->R);     /* max values */
        uint64_t idx = syn_keep(g, z->ids);                 /* max indices (int64) */
        uint64_t sh = syn_alloc(g, amp ? z->L : z->L32);    /* x − max */
        uint64_t up = amp ? syn_alloc(g, z->L32) : SYN_NONE; /* exp's fp32 copy */
        uint64_t ex = syn_keep(g, z->L32);                  /* exp */
        syn_free(g, up);
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
        uint64_t up = amp ? syn_alloc(g, z->L32) : SYN_NONE; /* log_softmax's fp32 copy */
        syn_keep(g, z->L32);                                 /* log_softmax */
        syn_free(g, up);
    }
    g->kcls = GM_SYNTH_CLASS_SAVED;
    return syn_alloc_as(g, 4, GM_SYNTH_CLASS_LOGITS);
}
