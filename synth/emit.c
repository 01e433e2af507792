/*
 * synth/emit.c — what the synthesizer hands out: a trace written into a
 * store (gm_synth_write, with the config as JSON among its attributes),
 * and the estimate (gm_synth_estimate: the closed forms of synth/model.c
 * beside a run's peak, split by order in s).
 */
#include "gmsim/synth.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "synth/gen.h"
#include "synth/model.h"
#include "base/vec.h"

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
    if (c->mode == GM_SYNTH_MODE_INFERENCE) {
        SYN_JS("grad_mode", gm_synth_name(GM_SYNTH_LIST_GRAD_MODE, c->grad_mode));
    }
    SYN_JS("loss", gm_synth_name(GM_SYNTH_LIST_LOSS, gm_synth_loss(c)));
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

static int syn_rec_sink(void *ctx, const gm_event_t *ev, size_t n, gm_error_t *err)
{
    syn_rec_t *r = ctx;
    for (size_t i = 0; i < n; i++) {
        const gm_event_t *e = &ev[i];
        if (r->events) {
            size_t ce = r->capev;
            if (GM_VEC_RESERVE(r->evid, ce, r->nev + 1, 4096) ||
                GM_VEC_RESERVE(r->evop, r->capev, r->nev + 1, 4096))
                return gm_error_set(err, GM_ENOMEM, "out of memory");
            r->evid[r->nev] = e->id;
            r->evop[r->nev++] = e->op;
        }
        if (e->op != GM_OP_ALLOC)
            continue;
        if (GM_VEC_RESERVE(r->size, r->capsize, e->id + 1, 4096))
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
    int grad = syn_grad(&c);
    out->saved_layer = grad ? (c.recompute == GM_SYNTH_RECOMPUTE_FULL ? z.U
                                                                      : syn_layer_saved(&c, &z))
                            : 0;
    out->logits = syn_logits_total(&c, &z);
    if (syn_amp(&c) && (grad || syn_cast_cached(&c))) {
        syn_param_t *q = malloc(np * sizeof *q);
        if (q == NULL)
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        syn_params(&c, q);
        /* the weights' 16-bit copies alive when the forward pass ends:
         * saved by their matmuls, or held by the cast cache (no_grad); a
         * fully recomputed layer's leave with the context */
        for (size_t i = 0; i < np; i++)
            if ((syn_is_matrix(q[i].role) ||
                 (q[i].layer < 0 && q[i].role == SYN_R_EMB && c.tied)) &&
                (q[i].layer < 0 || !grad || c.recompute != GM_SYNTH_RECOMPUTE_FULL))
                out->casts += q[i].numel * 2;
        free(q);
    }
    out->inputs = z.ids * (syn_loss(&c) ? 2 : 1);
    out->forward_end = out->params + out->optimizer + out->saved + out->casts + out->logits +
                       out->inputs +
                       (train && c.grad_accum > 1 ? out->grads : 0);

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
