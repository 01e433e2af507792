/*
 * synth/gen.c — tensor-level traces from a transformer config
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
 * The generator is deterministic: a config and seed give the same events.
 * Its memory follows the live set (an id → size map and one step's
 * backward nodes), not the trace length, and it writes straight to the
 * sink: tens of millions of events per second.
 *
 * This file holds its core; the forward ops and their own backward are in
 * synth/ops.c, the optimizer step in synth/optimizer.c, the closed forms
 * in synth/model.c.
 */
#include "gmsim/synth.h"

#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/idmap.h"
#include "synth/gen.h"
#include "synth/model.h"
#include "base/vec.h"

/* ---- the generator --------------------------------------------------------------- */

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
    g->st.events++;
    return ev;
}

void syn_mark(syn_t *g, unsigned tag)
{
    gm_event_t *ev = syn_event(g);
    ev->op = GM_OP_MARK;
    ev->tag = tag;
    g->st.marks++;
    if (tag != GM_SYNTH_TAG_STEP)
        g->phase = tag;
    if (tag == GM_SYNTH_TAG_BACKWARD)
        syn_forward_end(g);
}

uint64_t syn_alloc_as(syn_t *g, uint64_t size, unsigned cls)
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
    g->st.allocs++;
    g->st.allocs_last_step++;
    g->live += size;
    if (g->ex) { /* explain: the class rides in the size's top byte */
        slot->size |= (uint64_t)cls << SYN_CLS_SHIFT;
        g->cls_bytes[cls] += size;
        g->cls_allocs[cls]++;
    }
    if (g->live > g->st.peak) {
        g->st.peak = g->live;
        g->st.peak_event = g->st.events - 1;
        g->st.peak_phase = g->phase;
        if (g->ex) {
            memcpy(g->ex->peak_bytes, g->cls_bytes, sizeof g->cls_bytes);
            memcpy(g->ex->peak_allocs, g->cls_allocs, sizeof g->cls_allocs);
        }
    }
    return id;
}

uint64_t syn_keep_as(syn_t *g, uint64_t size, unsigned cls)
{
    uint8_t a = g->acls;
    g->acls = (uint8_t)cls;
    uint64_t id = syn_keep(g, size);
    g->acls = a;
    return id;
}

void syn_forward_end(syn_t *g)
{
    g->st.live_at_backward = g->live;
    if (g->ex) {
        memcpy(g->ex->end_bytes, g->cls_bytes, sizeof g->cls_bytes);
        memcpy(g->ex->end_allocs, g->cls_allocs, sizeof g->cls_allocs);
    }
}

/* An existing tensor becomes one autograd saves: a temporary is counted
 * as of class kcls from now on (explain only). */
static void syn_reclass(syn_t *g, uint64_t id)
{
    uint64_t v;
    syn_slot_t *slot = &g->ring[id & (SYN_RING - 1)];
    if (slot->id == id)
        v = slot->size;
    else if (!gm__idmap_get(&g->spill, id, &v))
        return;
    if (v >> SYN_CLS_SHIFT != GM_SYNTH_CLASS_TEMPS)
        return;
    uint64_t size = v & SYN_SIZE_MASK, nv = size | (uint64_t)g->kcls << SYN_CLS_SHIFT;
    if (slot->id == id)
        slot->size = nv;
    else if (gm__idmap_put(&g->spill, id, nv) != 0)
        return;
    g->cls_bytes[GM_SYNTH_CLASS_TEMPS] -= size;
    g->cls_allocs[GM_SYNTH_CLASS_TEMPS]--;
    g->cls_bytes[g->kcls] += size;
    g->cls_allocs[g->kcls]++;
}

void syn_free(syn_t *g, uint64_t id)
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
    g->st.frees++;
    if (g->ex) {
        unsigned cls = (unsigned)(size >> SYN_CLS_SHIFT);
        size &= SYN_SIZE_MASK;
        g->cls_bytes[cls] -= size;
        g->cls_allocs[cls]--;
    }
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
uint64_t syn_keep(syn_t *g, uint64_t size)
{
    uint64_t id = syn_alloc_as(g, size,
                               g->acls == GM_SYNTH_CLASS_TEMPS && syn_grad(g->c) ? g->kcls : g->acls);
    if (id == SYN_NONE)
        return id;
    if (!syn_grad(g->c)) {
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
void syn_attach(syn_t *g, uint64_t id)
{
    if (id == SYN_NONE)
        return;
    if (!syn_grad(g->c)) {
        if (g->npending < SYN_PENDING_MAX)
            g->pending[g->npending++] = id;
        return;
    }
    if (g->ex)
        syn_reclass(g, id);
    syn_save(g, id);
}

void syn_block_end(syn_t *g)
{
    for (size_t i = 0; i < g->npending; i++)
        syn_free(g, g->pending[i]);
    g->npending = 0;
}

syn_node_t *syn_node(syn_t *g, int kind, uint64_t gin, int32_t p0, int32_t p1, int32_t p2)
{
    if (!syn_grad(g->c)) {
        g->cur = NULL;
        return NULL;
    }
    if (GM_VEC_RESERVE(g->nodes, g->capnodes, g->nnodes + 1, 256)) {
        g->rc = gm_error_set(g->err, GM_ENOMEM, "out of memory synthesizing a trace");
        g->cur = NULL;
        return NULL;
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

/* Weights of layer l are gathered (ZeRO-3, offloaded weights) for the span
 * of its forward or backward: full-size copies, freed at the end. */
void syn_gather(syn_t *g, int32_t layer, uint64_t *ids, size_t *n)
{
    *n = 0;
    if (!syn_param_gathered(g->c))
        return;
    uint64_t pb = syn_param_bytes(g->c);
    for (size_t i = 0; i < g->nparams; i++)
        if (g->params[i].layer == layer && *n < 64)
            ids[(*n)++] = syn_alloc_as(g, g->params[i].numel * pb, GM_SYNTH_CLASS_WEIGHTS);
}

void syn_release(syn_t *g, const uint64_t *ids, size_t n)
{
    for (size_t i = n; i-- > 0;)
        syn_free(g, ids[i]);
}

/* Parameter index of role r (the k-th of that role) in layer l. */
int32_t syn_pidx(const syn_t *g, int32_t layer, int role, int k)
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
        g->p_grad[i] = syn_alloc_as(g, syn_grad_resident(c, g->params[i].numel) * syn_param_bytes(c),
                                    GM_SYNTH_CLASS_GRADS);
        syn_free(g, t);
    } else {
        g->p_grad[i] = syn_alloc_as(g, full, GM_SYNTH_CLASS_GRADS);
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
    g->rerun = 1; /* a context of its own: its nodes hold its casts */
    uint64_t out = syn_layer(g, l, x);
    g->rerun = 0;
    g->forward = 0;
    syn_free(g, out);
}

void syn_push(syn_t *g, uint64_t **ids, size_t *n, size_t *cap, uint64_t id)
{
    if (id == SYN_NONE || g->rc)
        return;
    if (GM_VEC_RESERVE(*ids, *cap, *n + 1, 256)) {
        g->rc = gm_error_set(g->err, GM_ENOMEM, "out of memory synthesizing a trace");
        return;
    }
    (*ids)[(*n)++] = id;
}

void syn_cache_cast(syn_t *g, uint64_t id) { syn_push(g, &g->casts, &g->ncasts, &g->capcasts, id); }

/* Whether id is one of the cast cache's entries from index `from` on. */
static int syn_cached(const syn_t *g, size_t from, uint64_t id)
{
    for (size_t i = from; i < g->ncasts; i++)
        if (g->casts[i] == id)
            return 1;
    return 0;
}

/* The autocast context exits (the end of a forward pass): the cast cache
 * is cleared, freeing the copies nothing else holds. */
static void syn_cast_exit(syn_t *g)
{
    for (size_t i = g->ncasts; i-- > 0;)
        syn_free(g, g->casts[i]);
    g->ncasts = 0;
}

/* Forward mode: the pass's graph stays alive (held) until the next pass
 * starts: every saved tensor, then the given ids. */
static void syn_hold_graph(syn_t *g, const uint64_t *ids, size_t n)
{
    for (size_t k = 0; k < g->nnodes; k++)
        for (uint32_t i = 0; i < g->nodes[k].nsaved; i++)
            syn_push(g, &g->held, &g->nheld, &g->capheld, g->nodes[k].saved[i]);
    for (size_t i = 0; i < n; i++)
        syn_push(g, &g->held, &g->nheld, &g->capheld, ids[i]);
    g->nnodes = 0;
}

static void syn_release_graph(syn_t *g)
{
    for (size_t i = g->nheld; i-- > 0;)
        syn_free(g, g->held[i]);
    g->nheld = 0;
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

/* One micro-batch: forward (and backward when training; the graph held
 * in forward mode). */
static void syn_micro(syn_t *g, uint64_t micro)
{
    const gm_synth_config_t *c = g->c;
    int autograd = syn_grad(c);
    syn_sizes(c, syn_seq(g, micro), &g->z);
    const syn_sizes_t *z = &g->z;
    syn_release_graph(g);
    g->nnodes = 0;
    g->cur = NULL;
    g->layer = SYN_P_GLOBAL;
    syn_mark(g, GM_SYNTH_TAG_FORWARD);
    g->forward = 1;
    uint64_t ids = syn_alloc_as(g, z->ids, GM_SYNTH_CLASS_INPUTS);
    uint64_t labels = syn_loss(c) ? syn_alloc_as(g, z->ids, GM_SYNTH_CLASS_INPUTS) : SYN_NONE;

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
        if (autograd && c->recompute == GM_SYNTH_RECOMPUTE_FULL) {
            size_t mark = g->nnodes, cmark = g->ncasts;
            uint64_t out = syn_layer(g, (int32_t)l, x);
            /* drop everything the layer saved but what the cast cache
             * holds; keep its input as checkpoint */
            for (size_t k = g->nnodes; k-- > mark;)
                for (uint32_t i = g->nodes[k].nsaved; i-- > 0;)
                    if (g->nodes[k].saved[i] != x && !syn_cached(g, cmark, g->nodes[k].saved[i]))
                        syn_free(g, g->nodes[k].saved[i]);
            g->nnodes = mark;
            syn_node_t *ck = syn_node(g, SYN_NODE_CKPT, 0, -1, -1, -1);
            if (ck) {
                ck->layer = (int32_t)l;
                ck->saved[0] = x; /* the rerun's first norm frees it */
                ck->nsaved = 1;
            }
            x = out;
        } else {
            x = syn_layer(g, (int32_t)l, x);
        }
    }

    /* head and loss; then the autocast context exits */
    uint64_t logits = syn_head(g, x);
    uint64_t loss = SYN_NONE, up = SYN_NONE;
    if (syn_loss(c))
        loss = syn_loss_forward(g, logits);
    else if (!autograd && !syn_amp(c) && syn_act_bytes(c) != 4)
        up = syn_alloc(g, z->L32); /* logits.float() */
    syn_release(g, gathered, ngathered);
    if (!autograd) /* the end of forward, the cast cache still full */
        syn_forward_end(g);
    syn_cast_exit(g);
    if (!syn_train(c)) {
        g->cur = NULL;
        if (autograd)
            syn_forward_end(g);
        syn_block_end(g);
        if (autograd) { /* forward: the graph lives on, rooted in the outputs */
            uint64_t keep[4] = {ids, labels, logits, loss};
            syn_hold_graph(g, keep, 4);
            return;
        }
        syn_free(g, up);
        syn_free(g, loss);
        syn_free(g, logits);
        syn_free(g, labels);
        syn_free(g, ids);
        return;
    }
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
    free(g->casts);
    free(g->held);
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
    g->acls = GM_SYNTH_CLASS_TEMPS;
    g->kcls = GM_SYNTH_CLASS_SAVED;
    return 0;
}

/* gm_synth_run, and with ex the classes of its peak (gm_synth_explain). */
static int syn_run(const gm_synth_config_t *c, gm_synth_sink_fn sink, void *ctx,
                   gm_synth_stats_t *stats, gm_synth_explain_t *ex, gm_error_t *err)
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
    if (ex) {
        memset(ex, 0, sizeof *ex);
        g->ex = ex;
    }
    int train = syn_train(c);
    uint64_t pb = syn_param_bytes(c);

    /* load: weights (and the fp32 master copy), with warm also the state */
    g->flags = c->warm ? GM_EVENT_PREEXISTING : 0;
    for (size_t i = 0; i < g->nparams; i++) {
        uint64_t numel = train ? syn_param_resident(c, g->params[i].numel)
                               : (c->offload == GM_SYNTH_OFFLOAD_PARAMS ? 0 : g->params[i].numel);
        g->p_id[i] = syn_alloc_as(g, numel * pb, GM_SYNTH_CLASS_WEIGHTS);
    }
    if (syn_state_on_device(c) && c->precision == GM_SYNTH_PREC_MIXED)
        for (size_t i = 0; i < g->nparams; i++)
            g->p_state[0][i] = syn_alloc_as(g, syn_state_resident(c, g->params[i].numel) * 4,
                                            GM_SYNTH_CLASS_STATE);
    if (c->warm && syn_state_on_device(c))
        for (size_t i = 0; i < g->nparams; i++)
            syn_state_alloc(g, i);
    g->flags = 0;

    uint64_t micro = 0;
    for (uint64_t step = 0; step < c->steps && g->rc == 0; step++) {
        g->st.allocs_last_step = 0;
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
    if (rc == 0 && stats)
        *stats = g->st;
    if (rc == 0 && ex) {
        ex->peak = g->st.peak;
        ex->peak_event = g->st.peak_event;
        ex->peak_phase = g->st.peak_phase;
        ex->forward_end = g->st.live_at_backward;
    }
    syn_destroy(g);
    free(g);
    return rc;
}

int gm_synth_run(const gm_synth_config_t *c, gm_synth_sink_fn sink, void *ctx,
                 gm_synth_stats_t *stats, gm_error_t *err)
{
    return syn_run(c, sink, ctx, stats, NULL, err);
}

int gm_synth_explain(const gm_synth_config_t *c, gm_synth_explain_t *out, gm_error_t *err)
{
    return syn_run(c, NULL, NULL, NULL, out, err);
}

const char *gm_synth_class_name(unsigned k)
{
#define SYN_CLASS_NAME(e, s) s,
    static const char *const names[] = {GM_SYNTH_CLASSES(SYN_CLASS_NAME)};
#undef SYN_CLASS_NAME
    return k < GM_SYNTH_CLASS_COUNT ? names[k] : NULL;
}
