/*
 * synth/gen.h — the generator, inside the library: its backward nodes and
 * state (syn_t), and the functions its files share: synth/gen.c (the core:
 * the event buffer, allocations and frees, nodes, backward, micro-batches,
 * gm_synth_run), synth/ops.c (the forward ops and their own backward
 * scripts), synth/optimizer.c (the optimizer step).
 */
#ifndef GM_SYNTH_GEN_H
#define GM_SYNTH_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/synth.h"
#include "base/idmap.h"
#include "synth/model.h"

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
    uint64_t id;   /* SYN_NONE when free */
    uint64_t size; /* explain: with its class (GM_SYNTH_CLASS_*) in the top byte */
} syn_slot_t;
#define SYN_CLS_SHIFT 56
#define SYN_SIZE_MASK ((UINT64_C(1) << SYN_CLS_SHIFT) - 1)
#define SYN_PENDING_MAX 64

typedef struct syn {
    const gm_synth_config_t *c;
    gm_synth_sink_fn sink;
    void *ctx;
    gm_error_t *err;
    int rc;
    gm_event_t buf[SYN_BUF];
    size_t nbuf;
    /* what gm_synth_run returns (allocs_last_step: the step's so far) */
    gm_synth_stats_t st;
    uint64_t ts;
    uint64_t next_id;
    /* live id → size: a ring indexed by id for the recent ones, spilled
     * to a map when a long-lived id's slot is needed again; memory follows
     * the live set, not the trace */
    syn_slot_t *ring;
    gm__idmap_t spill;
    uint64_t live;
    unsigned phase; /* GM_SYNTH_TAG_* of the last MARK */
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
    int rerun;            /* replaying a checkpointed layer in backward */
    /* classes: what the next syn_alloc is (acls) and what syn_keep and
     * syn_attach make a tensor autograd saves (kcls); with `ex`, the live
     * bytes and counts per class, copied there at the peak and at the end
     * of forward (gm_synth_explain) */
    uint8_t acls, kcls;
    gm_synth_explain_t *ex;
    uint64_t cls_bytes[GM_SYNTH_CLASS_COUNT], cls_allocs[GM_SYNTH_CLASS_COUNT];
    /* amp: autocast's cast cache, the 16-bit weight copies only it holds
     * (no_grad inference; layers whose graph full recompute dropped),
     * freed when the context exits at the end of the forward pass */
    uint64_t *casts;
    size_t ncasts, capcasts;
    /* forward mode: the last pass's graph (its saved tensors, logits,
     * loss and inputs), alive until the next pass starts */
    uint64_t *held;
    size_t nheld, capheld;
} syn_t;

#define SYN_NONE UINT64_MAX

/* ---- synth/gen.c: the core ---------------------------------------------------- */

/* A new allocation of `size` bytes and class cls (GM_SYNTH_CLASS_*), its
 * id; SYN_NONE for 0 bytes or after an error. */
uint64_t syn_alloc_as(syn_t *g, uint64_t size, unsigned cls);
/* syn_alloc_as of the current class (g->acls). */
static inline uint64_t syn_alloc(syn_t *g, uint64_t size) { return syn_alloc_as(g, size, g->acls); }
/* syn_keep of a tensor of class cls (it stays of that class when saved). */
uint64_t syn_keep_as(syn_t *g, uint64_t size, unsigned cls);
/* Record the live bytes per class as the end of a forward pass. */
void syn_forward_end(syn_t *g);
void syn_free(syn_t *g, uint64_t id);
void syn_mark(syn_t *g, unsigned tag);
uint64_t syn_keep(syn_t *g, uint64_t size);
void syn_attach(syn_t *g, uint64_t id);
void syn_block_end(syn_t *g);
syn_node_t *syn_node(syn_t *g, int kind, uint64_t gin, int32_t p0, int32_t p1, int32_t p2);
void syn_gather(syn_t *g, int32_t layer, uint64_t *ids, size_t *n);
void syn_release(syn_t *g, const uint64_t *ids, size_t n);
int32_t syn_pidx(const syn_t *g, int32_t layer, int role, int k);
/* Append id to a growable id list (*ids, *n, *cap); GM_ENOMEM in g->rc. */
void syn_push(syn_t *g, uint64_t **ids, size_t *n, size_t *cap, uint64_t id);
void syn_cache_cast(syn_t *g, uint64_t id);

/* ---- synth/ops.c: the forward ops and their own backward --------------------- */

int syn_is_matrix(int role);
uint64_t syn_norm(syn_t *g, int32_t layer, int k, uint64_t x);
uint64_t syn_head(syn_t *g, uint64_t x);
uint64_t syn_loss_forward(syn_t *g, uint64_t logits);
void syn_attention_backward(syn_t *g, const syn_node_t *n, uint64_t grad, uint64_t *gin);
void syn_ce_backward(syn_t *g, const syn_node_t *n, uint64_t grad, uint64_t *gin);
uint64_t syn_layer(syn_t *g, int32_t l, uint64_t x);

/* ---- synth/optimizer.c ---------------------------------------------------------- */

void syn_state_alloc(syn_t *g, size_t i);
void syn_optimizer(syn_t *g);

#endif
