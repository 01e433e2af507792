/*
 * cli/cmd_estimate.c — `gmsim estimate [model and run options] [--json]
 * [--capacity SIZE|--device NAME]`.
 *
 * Prints the memory breakdown of one device of the job: parameters,
 * gradients, optimizer state, saved activations, logits, inputs, the
 * temporaries at the peak and the peak itself, each in bytes and GiB with
 * the formula it comes from (gm_synth_estimate; docs/synth.md).  The
 * components are closed forms; the peak is the synthesized step's peak
 * requested bytes, which is not their sum: activations are gone by the
 * optimizer update, gradients do not exist yet at the end of forward.
 * The sum of the components is no bound (activations are gone by the
 * optimizer update, temporaries are not in it) and is labelled so.  With
 * a capacity, says whether the peak fits (before allocator overhead:
 * `gmsim fit` replays it through the allocators) and, when it does not,
 * which single changes of the job would make it fit (est_remedies), each
 * estimated.  Then the peak split by order in s (constant, linear,
 * quadratic: the attention's s² tensors) and which dominates at this
 * length, and a note when the length is beyond the positions the model was
 * built or trained for.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/synthopt.h"

static const char estimate_usage[] =
    "usage: gmsim estimate --model NAME|--hidden H ... [run options] [--json]\n"
    "                      [--capacity SIZE|--device NAME] [--reserve SIZE]\n"
    "\n"
    "Print the memory one device needs for a transformer job: parameters,\n"
    "gradients, optimizer state, saved activations, logits, temporaries and\n"
    "the peak, with the formula of each line (docs/synth.md); then the peak by\n"
    "order in s (constant, linear, quadratic), the term that dominates at this\n"
    "length, and a note when the length is beyond the model's positions.  The\n"
    "options are those of 'gmsim synth'; a --seq list or distribution is\n"
    "estimated at its largest length, with the optimizer state already\n"
    "allocated (a warm step).\n"
    "\n"
    "options:\n"
    "      --capacity SIZE   compare the peak with a capacity (e.g. 80GiB)\n"
    "      --device NAME     the same with a device preset ('gmsim devices')\n"
    "      --reserve SIZE    held outside the allocator (the CUDA context; default:\n"
    "                        the preset's, 0 with --capacity): the peak must fit in\n"
    "                        the capacity less this\n"
    "      --json            print JSON\n"
    "  -h, --help            show this help\n"
    "\n";

typedef struct est_line {
    const char *key, *label;
    uint64_t bytes;
    char formula[320]; /* the longest formula below fits whole */
} est_line_t;

static const char *est_prec_name(const gm_synth_config_t *c)
{
    return gm_synth_name(GM_SYNTH_LIST_PRECISION, c->precision);
}

/* The lines, with their formulas. */
static size_t est_lines(const gm_synth_config_t *c, const gm_synth_estimate_t *e, est_line_t *l)
{
    size_t n = 0;
    int train = c->mode == GM_SYNTH_MODE_TRAIN, grad = c->mode != GM_SYNTH_MODE_INFERENCE;
    int amp = c->precision == GM_SYNTH_PREC_AMP, loss = gm_synth_loss(c) == GM_SYNTH_LOSS_CE;
    const char *none = grad ? "none (forward only)" : "none (inference)";
    unsigned pe = c->precision == GM_SYNTH_PREC_FP32 || amp ? 4 : 2; /* weights, grads */
    unsigned ae = c->precision == GM_SYNTH_PREC_FP32 ? 4 : 2;         /* activations */
    char psi[64], shard[96] = "", zshard[64] = "";
    snprintf(psi, sizeof psi, "psi=%.1fM", (double)e->param_count / 1e6);
    if (c->tp > 1)
        snprintf(shard, sizeof shard, ", matrices / tp=%" PRIu64, c->tp);
    l[n] = (est_line_t){.key = "parameters", .label = "parameters", .bytes = e->params};
    if (c->offload == GM_SYNTH_OFFLOAD_PARAMS)
        snprintf(l[n].formula, sizeof l[n].formula,
                 "offloaded to host; gathered a layer at a time (temporaries)");
    else
        snprintf(l[n].formula, sizeof l[n].formula, "%s x %u B (%s weights%s)%s%s", psi, pe,
                 c->precision == GM_SYNTH_PREC_MIXED ? "16-bit"
                 : amp                               ? "fp32"
                                                     : est_prec_name(c),
                 shard,
                 c->zero >= 3 && train ? " / dp (ZeRO-3)" : "",
                 " [seed: MB = count x bits / 8 / 1024^2]");
    n++;
    if (c->zero >= 2)
        snprintf(zshard, sizeof zshard, " / dp=%" PRIu64 " (ZeRO-%d)", c->dp, c->zero);
    l[n] = (est_line_t){.key = "gradients", .label = "gradients", .bytes = e->grads};
    snprintf(l[n].formula, sizeof l[n].formula, "%s", train ? "" : none);
    if (train)
        snprintf(l[n].formula, sizeof l[n].formula, "%s x %u B%s%s, allocated in backward", psi,
                 pe, shard, zshard);
    n++;
    l[n] = (est_line_t){.key = "optimizer", .label = "optimizer state", .bytes = e->optimizer};
    if (!train)
        snprintf(l[n].formula, sizeof l[n].formula, "%s", none);
    else if (c->offload != GM_SYNTH_OFFLOAD_NONE)
        snprintf(l[n].formula, sizeof l[n].formula, "offloaded to host (ZeRO-Offload)");
    else {
        int adam = c->optimizer != GM_SYNTH_OPT_SGD;
        int mixed = c->precision == GM_SYNTH_PREC_MIXED;
        unsigned sb = c->precision == GM_SYNTH_PREC_FP32 || mixed || amp ? 4 : 2;
        unsigned k = (adam ? 2u : 0u) + (mixed ? 1u : 0u);
        char z1[64] = "";
        if (c->zero >= 1)
            snprintf(z1, sizeof z1, " / dp=%" PRIu64 " (ZeRO-%d)", c->dp, c->zero);
        snprintf(l[n].formula, sizeof l[n].formula, "%s x %u x %u B (%s%s%s)%s%s", psi, k, sb,
                 adam ? "m, v" : "no state", mixed ? ", fp32 master" : "",
                 mixed && adam ? "; with weights and grads 16*psi" : "", shard, z1);
    }
    n++;
    l[n] = (est_line_t){.key = "saved_activations", .label = "saved activations", .bytes = e->saved};
    if (grad) {
        char f[200];
        gm_synth_layer_formula(c, f, sizeof f);
        snprintf(l[n].formula, sizeof l[n].formula, "L=%" PRIu64 " x (%s) + embedding + head%s",
                 c->layers, f, amp ? " (amp: fp32 residual and norms, 16-bit copies of the "
                                     "linears' inputs)" : "");
    } else {
        snprintf(l[n].formula, sizeof l[n].formula, "none kept (inference: one block at a time)");
    }
    n++;
    if (amp) {
        l[n] = (est_line_t){.key = "weight_copies", .label = "weight copies", .bytes = e->casts};
        snprintf(l[n].formula, sizeof l[n].formula, "matrices x 2 B: torch.autocast's 16-bit casts%s",
                 grad ? ", saved for backward"
                 : c->grad_mode == GM_SYNTH_GRAD_NO_GRAD
                     ? ", held by its cast cache until the forward ends (no_grad)"
                     : ": none kept (inference_mode: a copy per use, freed after it)");
        n++;
    }
    l[n] = (est_line_t){.key = "logits", .label = "logits and loss", .bytes = e->logits};
    snprintf(l[n].formula, sizeof l[n].formula, "s*b*V x (%u B%s%s)", ae,
             ae != 4 && !amp && (!grad || loss) ? " + 4 B fp32 upcast" : "",
             grad && loss ? (c->ops == GM_SYNTH_OPS_COMPOSITE
                                 ? " + 2 x 4 B exp, -log-probs; max indices, row sums"
                                 : " + 4 B log-probs")
                          : "");
    n++;
    l[n] = (est_line_t){.key = "inputs", .label = "inputs", .bytes = e->inputs};
    snprintf(l[n].formula, sizeof l[n].formula, "s*b x 8 B token ids%s", loss ? " and labels" : "");
    n++;
    l[n] = (est_line_t){.key = "temporaries", .label = "temporaries", .bytes = e->temporaries};
    snprintf(l[n].formula, sizeof l[n].formula, "peak - the standing set of the peak's phase (%s)",
             e->peak_phase == GM_SYNTH_TAG_OPTIMIZER
                 ? "optimizer: weights + state + gradients; the update's temporaries"
                 : e->peak_phase == GM_SYNTH_TAG_BACKWARD
                       ? "backward: measured from the end-of-forward set"
                       : "forward: weights + state + saved + logits + inputs");
    n++;
    l[n] = (est_line_t){.key = "peak", .label = "total (peak requested)", .bytes = e->peak};
    snprintf(l[n].formula, sizeof l[n].formula,
             "the synthesized step's peak, %" PRIu64 " allocations per step", e->allocs_per_step);
    n++;
    return n;
}

static const char *const est_order_keys[] = {"s0", "s1", "s2"};

/* The peak by order in s, the dominant term, and the positions note. */
static void est_print_orders(const gm_synth_config_t *c, const gm_synth_estimate_t *e)
{
    static const char *const what[] = {
        "constant (weights, gradients, optimizer state)",
        "linear in s (activations, logits)",
        "quadratic in s (attention scores, probabilities, their gradients, masks)"};
    if (e->dominant >= 0) {
        printf("the peak at seq %" PRIu64 ": %s constant + %s linear + %s quadratic in s; the "
               "s^%d term dominates: %s\n",
               e->seq, gm__cli_size(e->peak_by_order[0]), gm__cli_size(e->peak_by_order[1]),
               gm__cli_size(e->peak_by_order[2]), e->dominant, what[e->dominant]);
        /* where the s² term overtakes the linear one at this shape */
        if (e->peak_by_order[2] && e->peak_by_order[1]) {
            double cross = (double)e->seq * (double)e->peak_by_order[1] /
                           (double)e->peak_by_order[2];
            printf("the quadratic term %s the linear one from seq %.0f on (at this peak's "
                   "composition)\n",
                   cross <= (double)e->seq ? "has overtaken" : "overtakes", cross);
        }
    }
    if (e->max_positions && e->seq > e->max_positions) {
        const gm_synth_preset_t *p = gm_synth_preset_find(c->model);
        printf("note: seq %" PRIu64 " is beyond the %" PRIu64 " positions of %s (max positions)%s\n",
               e->seq, e->max_positions, p ? c->model : "the model",
               c->arch == GM_SYNTH_ARCH_LLAMA
                   ? ": it was not trained for that context"
                   : ": its learned position table has no rows past them, a real run fails");
    }
}

/* One change to the job and the peak it would have (est_remedies). */
typedef struct est_remedy {
    char change[96]; /* the options, as typed */
    uint64_t peak;
} est_remedy_t;

enum { EST_REMEDIES = 12 };

/* Estimate c with one change applied; 1 with *peak when it is a valid
 * configuration, else 0. */
static int est_try(const gm_synth_config_t *c, uint64_t *peak)
{
    gm_synth_estimate_t e;
    gm_error_t err = {0};
    if (gm_synth_check(c, &err) != 0 || gm_synth_estimate(c, &e, &err) != 0)
        return 0;
    *peak = e.peak;
    return 1;
}

/*
 * The single changes that bring cfg's peak within capacity, each estimated
 * alone from cfg, the mildest first: activation recomputation, flash
 * attention, 16-bit training, optimizer state in host memory, ZeRO-3 over
 * data-parallel ranks, then the largest smaller batch that fits (with the
 * gradient accumulation that keeps the global batch when it divides).
 * Returns how many fit, written to out (at most EST_REMEDIES).
 */
static size_t est_remedies(const gm_synth_config_t *cfg, uint64_t capacity, est_remedy_t *out)
{
    size_t n = 0;
    gm_synth_config_t t;
    uint64_t peak;
#define EST_TRY(cond, edit, ...)                                                  \
    do {                                                                          \
        t = *cfg;                                                                 \
        if ((cond) && n < EST_REMEDIES) {                                         \
            edit;                                                                 \
            if (est_try(&t, &peak) && peak <= capacity) {                         \
                snprintf(out[n].change, sizeof out[n].change, __VA_ARGS__);       \
                out[n++].peak = peak;                                             \
            }                                                                     \
        }                                                                         \
    } while (0)
    int train = cfg->mode == GM_SYNTH_MODE_TRAIN;
    EST_TRY(train && cfg->recompute < GM_SYNTH_RECOMPUTE_SELECTIVE,
            t.recompute = GM_SYNTH_RECOMPUTE_SELECTIVE, "--recompute selective");
    EST_TRY(cfg->attention != GM_SYNTH_ATTN_FLASH, t.attention = GM_SYNTH_ATTN_FLASH,
            "--attention flash");
    EST_TRY(train && cfg->recompute < GM_SYNTH_RECOMPUTE_FULL,
            t.recompute = GM_SYNTH_RECOMPUTE_FULL, "--recompute full");
    EST_TRY(cfg->precision == GM_SYNTH_PREC_FP32, t.precision = GM_SYNTH_PREC_BF16,
            "--precision bf16");
    EST_TRY(train && cfg->offload == GM_SYNTH_OFFLOAD_NONE,
            t.offload = GM_SYNTH_OFFLOAD_OPTIMIZER, "--offload optimizer");
    EST_TRY(train && cfg->zero < 3 && cfg->dp > 1, t.zero = 3, "--zero 3");
    EST_TRY(train && cfg->zero < 3 && cfg->dp <= 1, (t.zero = 3, t.dp = 8),
            "--zero 3 --dp 8 (8 GPUs)");
    /* the largest batch that fits with the global batch kept (its
     * accumulated gradients estimated too), else the largest that fits */
    uint64_t ga = cfg->grad_accum ? cfg->grad_accum : 1;
    for (uint64_t b = cfg->batch; train && b-- > 1 && n < EST_REMEDIES;) {
        t = *cfg;
        t.batch = b;
        t.grad_accum = cfg->batch / b * ga;
        if (cfg->batch % b == 0 && est_try(&t, &peak) && peak <= capacity) {
            snprintf(out[n].change, sizeof out[n].change,
                     "--batch %" PRIu64 " --grad-accum %" PRIu64 " (the same global batch)", b,
                     t.grad_accum);
            out[n++].peak = peak;
            break;
        }
    }
    for (uint64_t b = cfg->batch; b-- > 1 && n < EST_REMEDIES;) {
        t = *cfg;
        t.batch = b;
        if (est_try(&t, &peak) && peak <= capacity) {
            if (n == 0 || strncmp(out[n - 1].change, "--batch ", 8) != 0 ||
                strtoull(out[n - 1].change + 8, NULL, 10) < b) {
                snprintf(out[n].change, sizeof out[n].change, "--batch %" PRIu64, b);
                out[n++].peak = peak;
            }
            break;
        }
    }
#undef EST_TRY
    return n;
}

int gm__cmd_estimate(int argc, char **argv)
{
    gm__synth_opts_t so;
    gm__synth_opts_init(&so);
    int json = 0, rc = 0;
    uint64_t capacity = 0;
    gm__cli_devopts_t dev = {.capacity = &capacity, .once = 1, .presets = 1};
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("json", 0, GM__CLI_FLAG, &json),
        GM__CLI_DEVICE_OPTS(&dev),
        GM__SYNTH_OPTS(&so),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, estimate_usage, argc, argv, &rc))
        goto out;
    if (rc == 0)
        rc = gm__cli_device_usable(estimate_usage, &capacity);
    if (rc)
        goto out;
    if (so.list_models) {
        rc = gm__synth_list_models(json);
        goto out;
    }
    if (optind < argc) {
        rc = gm__cli_usage_error(estimate_usage, "too many arguments: '%s'", argv[optind]);
        goto out;
    }
    /* Every estimate first (errors before any output), then the report. */
    size_t ntraces = so.nseqs > 1 ? so.nseqs : 1;
    gm_synth_config_t *cfgs = calloc(ntraces, sizeof *cfgs);
    gm_synth_estimate_t *ests = calloc(ntraces, sizeof *ests);
    if (cfgs == NULL || ests == NULL) {
        rc = gm__cli_error("out of memory");
        goto done;
    }
    for (size_t k = 0; k < ntraces && rc == 0; k++) {
        gm_error_t err = {0};
        if ((rc = gm__synth_resolve(&so, estimate_usage, k, &cfgs[k])) == 0 &&
            gm_synth_estimate(&cfgs[k], &ests[k], &err) != 0)
            rc = gm__cli_error("%s", err.msg);
    }
    if (rc)
        goto done;
    gm_json_t j;
    if (json) {
        gm_json_init(&j, stdout, 1);
        gm_json_begin_object(&j);
        gm_json_key(&j, "estimates");
        gm_json_begin_array(&j);
    }
    for (size_t k = 0; k < ntraces; k++) {
        const gm_synth_config_t *cfg = &cfgs[k];
        const gm_synth_estimate_t *e = &ests[k];
        est_line_t lines[12];
        size_t n = est_lines(cfg, e, lines);
        uint64_t sum = e->params + e->grads + e->optimizer + e->saved + e->casts + e->logits +
                       e->inputs;
        if (json) {
            gm_json_begin_object(&j);
            gm_json_key(&j, "config");
            gm_synth_config_json(cfg, &j);
            gm_json_kv_u64(&j, "param_count", e->param_count);
            gm_json_kv_u64(&j, "seq_len", e->seq);
            gm_json_key(&j, "lines");
            gm_json_begin_array(&j);
            for (size_t i = 0; i < n; i++) {
                gm_json_begin_object(&j);
                gm_json_kv_str(&j, "name", lines[i].key);
                gm_json_kv_u64(&j, "bytes", lines[i].bytes);
                gm_json_kv_double(&j, "gib", (double)lines[i].bytes / 1073741824.0);
                gm_json_kv_str(&j, "formula", lines[i].formula);
                gm_json_end_object(&j);
            }
            gm_json_end_array(&j);
            gm_json_kv_u64(&j, "saved_per_layer", e->saved_layer);
            gm_json_kv_u64(&j, "forward_end", e->forward_end);
            gm_json_kv_u64(&j, "sum_of_components", sum);
            gm_json_kv_u64(&j, "peak", e->peak);
            gm_json_kv_u64(&j, "allocs_per_step", e->allocs_per_step);
            gm_json_key(&j, "peak_by_order");
            gm_json_begin_object(&j);
            for (int o = 0; o <= 2; o++)
                gm_json_kv_u64(&j, est_order_keys[o], e->peak_by_order[o]);
            gm_json_end_object(&j);
            gm_json_kv_str(&j, "dominant_term",
                           e->dominant >= 0 ? est_order_keys[e->dominant] : NULL);
            gm_json_kv_u64(&j, "max_positions", e->max_positions);
            gm_json_kv_bool(&j, "beyond_positions", e->max_positions && e->seq > e->max_positions);
            if (capacity) {
                const gm__cli_device_t *d = gm__cli_device();
                gm_json_kv_u64(&j, "capacity", d->total);
                gm_json_kv_u64(&j, "reserve", d->reserve);
                gm_json_key(&j, "margin"); /* capacity − reserve − peak; negative: short */
                gm_json_i64(&j, (int64_t)capacity - (int64_t)e->peak);
                gm_json_kv_bool(&j, "fits", e->peak <= capacity);
                est_remedy_t rem[EST_REMEDIES];
                size_t nr = e->peak > capacity ? est_remedies(cfg, capacity, rem) : 0;
                gm_json_key(&j, "to_fit");
                gm_json_begin_array(&j);
                for (size_t i = 0; i < nr; i++) {
                    gm_json_begin_object(&j);
                    gm_json_kv_str(&j, "change", rem[i].change);
                    gm_json_kv_u64(&j, "peak", rem[i].peak);
                    gm_json_end_object(&j);
                }
                gm_json_end_array(&j);
            }
            gm_json_end_object(&j);
            continue;
        }
        if (k)
            putchar('\n');
        printf("%s: %.1fM parameters, batch %" PRIu64 ", seq %" PRIu64 ", %s%s%s%s %s, %s%s",
               cfg->model, (double)e->param_count / 1e6, cfg->batch, e->seq,
               gm_synth_name(GM_SYNTH_LIST_MODE, cfg->mode),
               cfg->mode == GM_SYNTH_MODE_INFERENCE ? " (" : "",
               cfg->mode == GM_SYNTH_MODE_INFERENCE
                   ? gm_synth_name(GM_SYNTH_LIST_GRAD_MODE, cfg->grad_mode)
                   : "",
               cfg->mode == GM_SYNTH_MODE_INFERENCE ? ")" : "", est_prec_name(cfg),
               cfg->mode == GM_SYNTH_MODE_TRAIN
                   ? gm_synth_name(GM_SYNTH_LIST_OPTIMIZER, cfg->optimizer)
                   : "no optimizer",
               cfg->mode != GM_SYNTH_MODE_TRAIN && gm_synth_loss(cfg) == GM_SYNTH_LOSS_CE
                   ? ", cross-entropy loss"
                   : "");
        if (cfg->zero || cfg->tp > 1 || cfg->dp > 1)
            printf(", ZeRO-%d dp %" PRIu64 " tp %" PRIu64, cfg->zero, cfg->dp, cfg->tp);
        printf(" (per device)\n\n");
        gm__cli_table_t t;
        gm__cli_table_head(&t, "lrrl", "component", "bytes", "GiB", "formula", NULL);
        for (size_t i = 0; i < n; i++) {
            gm__cli_table_cell(&t, "%s", lines[i].label);
            gm__cli_table_cell(&t, "%" PRIu64, lines[i].bytes);
            gm__cli_table_cell(&t, "%.3f", (double)lines[i].bytes / 1073741824.0);
            gm__cli_table_cell(&t, "%s", lines[i].formula);
        }
        gm__cli_table_print(&t, stdout, NULL);
        gm__cli_table_release(&t);
        /* Not a bound either way: activations are gone by the optimizer
         * step (the peak can be below the sum), and the temporaries, left
         * out of it, come on top (the peak can be above). */
        printf("\nsum of the components but the temporaries: %s (not a bound: they never "
               "all live at once; the peak above is what is live together)\n",
               gm__cli_size(sum));
        est_print_orders(cfg, e);
        char margin[256];
        const gm__cli_device_t *d = gm__cli_device();
        if (capacity)
            gm__cli_margin(e->peak, margin, sizeof margin);
        if (capacity && e->peak <= capacity)
            printf("peak %s fits in %s (%s): %s; before allocator overhead; see 'gmsim fit'\n",
                   gm__cli_size(e->peak), dev.device ? dev.device : "the capacity",
                   gm__cli_size(d->total), margin);
        if (capacity && e->peak > capacity) {
            printf("peak %s exceeds %s (%s, %s of it outside the allocator) by %s: out of "
                   "memory\n",
                   gm__cli_size(e->peak), dev.device ? dev.device : "the capacity",
                   gm__cli_size(d->total), gm__cli_size(d->reserve),
                   gm__cli_size(e->peak - capacity));
            est_remedy_t rem[EST_REMEDIES];
            size_t nr = est_remedies(cfg, capacity, rem);
            if (nr == 0) {
                printf("no single change fits (tried recompute, flash attention, bf16, "
                       "offload, ZeRO-3, a smaller batch): combine them, or a larger device\n");
            } else {
                printf("to fit, change one of (each estimated alone, before allocator "
                       "overhead; then 'gmsim fit'):\n");
                for (size_t i = 0; i < nr; i++)
                    printf("  %-50s peak %s\n", rem[i].change, gm__cli_size(rem[i].peak));
            }
        }
    }
    if (json) {
        gm_json_end_array(&j);
        gm_json_end_object(&j);
        gm_json_finish(&j);
    }
done:
    free(cfgs);
    free(ests);
out:
    gm__synth_opts_release(&so);
    return rc;
}
