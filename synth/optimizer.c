/*
 * synth/optimizer.c — the generator's optimizer step (the "optimizer"
 * phase of synth/gen.c): the state allocated lazily at the first step,
 * then the update's temporaries, as foreach, loop or python runs them.
 */
#include "gmsim/synth.h"

#include <stdlib.h>

#include "synth/gen.h"
#include "synth/model.h"

/* Allocate the optimizer state of parameter i (zeros_like, lazily). */
void syn_state_alloc(syn_t *g, size_t i)
{
    const gm_synth_config_t *c = g->c;
    uint64_t numel = syn_state_resident(c, g->params[i].numel), sb = syn_state_bytes(c);
    unsigned k = c->precision == GM_SYNTH_PREC_MIXED ? 1 : 0; /* slot 0: master */
    for (unsigned s = k; s < syn_state_count(c); s++)
        if (g->p_state[s][i] == SYN_NONE)
            g->p_state[s][i] = syn_alloc_as(g, numel * sb, GM_SYNTH_CLASS_STATE);
}

void syn_optimizer(syn_t *g)
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
            uint64_t m = syn_alloc_as(g, P, GM_SYNTH_CLASS_STATE); /* a + b */
            syn_free(g, a);
            syn_free(g, b);
            a = syn_alloc(g, P);           /* β2·v */
            uint64_t g2 = syn_alloc(g, P); /* g² */
            b = syn_alloc(g, P);           /* (1−β2)·g² */
            syn_free(g, g2);
            uint64_t v = syn_alloc_as(g, P, GM_SYNTH_CLASS_STATE); /* a + b */
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
