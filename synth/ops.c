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

/* amp: the 16-bit copies of layer l's matrices (for the head, the output
 * layer's, or the embedding's when tied, and the MLM transform's), kept by
 * the current node: autograd saves them for the matmuls' backward. */
void syn_amp_casts(syn_t *g, int32_t layer)
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

/* A norm over x (x attached to the node: the norm needs its input).
 * Returns the normalized output. */
uint64_t syn_norm(syn_t *g, int32_t layer, int k, uint64_t x)
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
uint64_t syn_layer(syn_t *g, int32_t l, uint64_t x)
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
