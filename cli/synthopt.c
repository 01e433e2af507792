/*
 * cli/synthopt.c — shared model and run options of `synth`, `estimate` and
 * `fit` (see cli/synthopt.h).
 *
 * A preset (--model) gives the shape; explicit shape options override it
 * whatever their order; --arch sets the defaults for tied embeddings and
 * dropout unless --tied/--untied/--dropout/--no-dropout say otherwise.
 * Without --model the shape starts from gpt2's and is named "custom".
 */
#include "cli/synthopt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/text.h"
#include "base/vec.h"

static int so_fn(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg);

#define SO_ROW(long_name, option, takes_value) \
    GM__CLI_OPT(long_name, 0, GM__CLI_CALL, NULL, .fn = so_fn, .value = takes_value, .code = option)
const gm__cli_opt_t gm__synth_opt_rows[] = {
    SO_ROW("model", GM__SO_MODEL, 1),
    SO_ROW("arch", GM__SO_ARCH, 1),
    SO_ROW("hidden", GM__SO_HIDDEN, 1),
    SO_ROW("layers", GM__SO_LAYERS, 1),
    SO_ROW("heads", GM__SO_HEADS, 1),
    SO_ROW("kv-heads", GM__SO_KV_HEADS, 1),
    SO_ROW("ffn", GM__SO_FFN, 1),
    SO_ROW("vocab", GM__SO_VOCAB, 1),
    SO_ROW("positions", GM__SO_POSITIONS, 1),
    SO_ROW("tied", GM__SO_TIED, 0),
    SO_ROW("untied", GM__SO_UNTIED, 0),
    SO_ROW("dropout", GM__SO_DROPOUT, 0),
    SO_ROW("no-dropout", GM__SO_NO_DROPOUT, 0),
    SO_ROW("ops", GM__SO_OPS, 1),
    SO_ROW("batch", GM__SO_BATCH, 1),
    SO_ROW("seq", GM__SO_SEQ, 1),
    SO_ROW("steps", GM__SO_STEPS, 1),
    SO_ROW("mode", GM__SO_MODE, 1),
    SO_ROW("precision", GM__SO_PRECISION, 1),
    SO_ROW("optimizer", GM__SO_OPTIMIZER, 1),
    SO_ROW("optimizer-impl", GM__SO_OPTIMPL, 1),
    SO_ROW("recompute", GM__SO_RECOMPUTE, 1),
    SO_ROW("attention", GM__SO_ATTENTION, 1),
    SO_ROW("grad-accum", GM__SO_GRAD_ACCUM, 1),
    SO_ROW("zero", GM__SO_ZERO, 1),
    SO_ROW("dp", GM__SO_DP, 1),
    SO_ROW("tp", GM__SO_TP, 1),
    SO_ROW("offload", GM__SO_OFFLOAD, 1),
    SO_ROW("seed", GM__SO_SEED, 1),
    SO_ROW("warm", GM__SO_WARM, 0),
    SO_ROW("list-models", GM__SO_LIST_MODELS, 0),
    SO_ROW("grad-mode", GM__SO_GRAD_MODE, 1),
    SO_ROW("loss", GM__SO_LOSS, 1),
    GM__CLI_OPTS_END,
};
#undef SO_ROW

const char gm__synth_options_help[] =
    "model (a preset, or a shape; shape options override the preset's):\n"
    "      --model NAME        a preset (--list-models): gpt2, gpt2-medium, gpt2-large,\n"
    "                          gpt2-xl, bert-base, bert-large, llama-7b, llama-13b,\n"
    "                          llama-70b, llama3-8b, mistral-7b, ...\n"
    "      --list-models       list the presets and exit\n"
    "      --arch gpt|llama|bert  block style: gpt (LayerNorm, GELU, learned\n"
    "                          positions, biases, dropout, tied), llama (RMSNorm,\n"
    "                          SwiGLU, RoPE, no biases, untied), bert (as gpt,\n"
    "                          bidirectional, MLM head)\n"
    "      --hidden H --layers L --heads A --ffn F --vocab V\n"
    "      --kv-heads K        grouped-query attention (default: A)\n"
    "      --positions P       learned position rows (gpt, bert)\n"
    "      --tied, --untied    output layer shares the embedding or not\n"
    "      --dropout, --no-dropout  dropout layers in training\n"
    "      --ops native|composite  fused kernels (default), or norms, softmax and\n"
    "                          activations written as elementwise code\n"
    "run:\n"
    "      --batch N           micro-batch size (default 8)\n"
    "      --seq S             one length (default 1024); a list 128,256,512 (one\n"
    "                          trace each); uniform:LO:HI (a length per\n"
    "                          micro-batch); file:PATH (lengths, cycled)\n"
    "      --steps N           optimizer steps (default 2)\n"
    "      --mode train|inference|forward  a training step; forward passes under\n"
    "                          no_grad or inference_mode (inference); or forward\n"
    "                          passes with autograd on and no backward, the graph\n"
    "                          kept until the next pass rebinds it (forward)\n"
    "      --grad-mode no_grad|inference_mode  inference: torch.no_grad (default;\n"
    "                          under amp autocast keeps its 16-bit weight copies\n"
    "                          until the forward ends) or torch.inference_mode\n"
    "                          (a copy per use, freed after it)\n"
    "      --loss none|ce      cross-entropy after the logits (default: ce in train,\n"
    "                          none in forward and inference)\n"
    "      --precision fp32|bf16|fp16|mixed|amp  (mixed: 16-bit weights and grads,\n"
    "                          fp32 master weights and optimizer state; amp:\n"
    "                          torch.autocast, fp32 weights with 16-bit copies)\n"
    "      --optimizer sgd|adam|adamw  (default adamw)\n"
    "      --optimizer-impl foreach|loop|python  update temporaries for the whole\n"
    "                          list at once (default, PyTorch's on CUDA), per\n"
    "                          parameter in place (loop), or per parameter out of\n"
    "                          place, as optimizers written in tensor code (python)\n"
    "      --recompute none|selective|full  activation recomputation\n"
    "      --attention eager|flash\n"
    "      --grad-accum N      micro-batches per optimizer step\n"
    "      --zero 0|1|2|3 --dp N  ZeRO stage and data-parallel degree\n"
    "      --tp N              tensor-parallel degree\n"
    "      --offload none|optimizer|params  state kept in host memory\n"
    "      --warm              optimizer state exists before the first step\n"
    "      --seed S            seed for drawn sequence lengths (default 1)\n";

void gm__synth_opts_init(gm__synth_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->arch = o->tied = o->dropout = o->ops = -1;
    gm_synth_config_default(&o->run);
}

void gm__synth_opts_release(gm__synth_opts_t *o)
{
    free(o->seqs);
    free(o->file_values);
    o->seqs = o->file_values = NULL;
}

static int so_u64(const char *usage, const char *opt, const char *arg, uint64_t *out)
{
    int rc = gm__cli_u64_arg(usage, opt, arg, out);
    if (rc == 0 && *out == 0)
        return gm__cli_usage_error(usage, "invalid value for %s: '%s' must be at least 1", opt,
                                   arg);
    return rc;
}

static int so_enum(const char *usage, const char *opt, gm_synth_list_t l, const char *arg,
                   int *out)
{
    int v = gm_synth_parse(l, arg);
    if (v < 0)
        return gm__cli_usage_error(usage, "invalid value for %s: '%s' (expected %s)", opt, arg,
                                   gm_synth_choices(l));
    *out = v;
    return 0;
}

/* Lengths from a file: whitespace-separated integers, '#' to the end of a
 * line is a comment. */
static int so_read_lengths(gm__synth_opts_t *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return gm__cli_error("cannot open '%s': %s", path, gm__cli_strerror(errno));
    char line[4096];
    size_t cap = 0, lineno = 0;
    int rc = GM_CLI_OK;
    while (rc == GM_CLI_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        for (char *save = NULL, *tok = strtok_r(line, " \t\r\n,", &save); tok;
             tok = strtok_r(NULL, " \t\r\n,", &save)) {
            uint64_t v;
            if (gm_parse_u64(tok, &v) != 0 || v == 0 || v > (1u << 20)) {
                rc = gm__cli_error("invalid sequence length in '%s' line %zu: '%s' (1 to "
                                   "1048576)",
                                   path, lineno, tok);
                break;
            }
            if (GM_VEC_RESERVE(o->file_values, cap, o->nfile + 1, 64)) {
                rc = gm__cli_error("out of memory");
                break;
            }
            o->file_values[o->nfile++] = v;
        }
    }
    if (rc == GM_CLI_OK && ferror(f))
        rc = gm__cli_error("cannot read '%s': %s", path, gm__cli_strerror(errno));
    fclose(f);
    if (rc == GM_CLI_OK && o->nfile == 0)
        rc = gm__cli_error("no sequence lengths in '%s'", path);
    return rc;
}

static int so_seq(gm__synth_opts_t *o, const char *usage, const char *arg)
{
    gm_synth_config_t *r = &o->run;
    free(o->seqs);
    o->seqs = NULL;
    o->nseqs = 0;
    if (strncmp(arg, "uniform:", 8) == 0) {
        char *end;
        errno = 0;
        unsigned long long lo = strtoull(arg + 8, &end, 10);
        unsigned long long hi = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
        if (errno || *end != '\0' || lo < 1 || hi < lo || hi > (1u << 20) || arg[8] == '-')
            return gm__cli_usage_error(usage,
                                       "invalid value for --seq: '%s' (expected uniform:LO:HI "
                                       "with 1 <= LO <= HI <= 1048576)",
                                       arg);
        r->seq_kind = GM_SYNTH_SEQ_UNIFORM;
        r->seq_lo = lo;
        r->seq_hi = hi;
        return 0;
    }
    if (strncmp(arg, "file:", 5) == 0) {
        int rc = so_read_lengths(o, arg + 5);
        if (rc)
            return rc;
        o->seq_file = arg + 5;
        r->seq_kind = GM_SYNTH_SEQ_VALUES;
        return 0;
    }
    size_t n = 1;
    for (const char *p = arg; *p; p++)
        n += *p == ',';
    o->seqs = calloc(n, sizeof *o->seqs);
    if (o->seqs == NULL)
        return gm__cli_error("out of memory");
    char *copy = strdup(arg), *save = NULL;
    if (copy == NULL)
        return gm__cli_error("out of memory");
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (gm_parse_u64(tok, &v) != 0 || v == 0 || v > (1u << 20)) {
            rc = gm__cli_usage_error(usage,
                                     "invalid value for --seq: '%s' (a length 1 to 1048576, a "
                                     "list 128,256, uniform:LO:HI or file:PATH)",
                                     tok);
            break;
        }
        o->seqs[o->nseqs++] = v;
    }
    free(copy);
    if (rc == 0 && o->nseqs == 0)
        rc = gm__cli_usage_error(usage, "invalid value for --seq: '%s'", arg);
    if (rc == 0) {
        r->seq_kind = GM_SYNTH_SEQ_FIXED;
        r->seq = o->seqs[0];
    }
    return rc;
}

/* The shared option `row` (its code) with value arg into the gm__synth_opts_t at to. */
static int so_fn(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg)
{
    gm__synth_opts_t *o = to;
    gm_synth_config_t *r = &o->run;
    int c = row->code;
    if (o->first == NULL && c != GM__SO_LIST_MODELS)
        o->first = row->name;
    uint64_t v = 0;
    int rc = 0;
    switch (c) {
    case GM__SO_MODEL:
        if (gm_synth_preset_find(arg) == NULL) {
            gm_error_t err = {0};
            gm_synth_config_t tmp;
            gm_synth_apply_preset(&tmp, arg, &err);
            return gm__cli_usage_error(usage, "%s", err.msg);
        }
        o->model = arg;
        o->any_model = 1;
        return 0;
    case GM__SO_ARCH:
        rc = so_enum(usage, "--arch", GM_SYNTH_LIST_ARCH, arg, &o->arch);
        o->any_model = 1;
        return rc;
#define SO_SHAPE(code, opt, field)                     \
    case code:                                         \
        o->any_model = 1;                              \
        return so_u64(usage, opt, arg, &o->field);
        SO_SHAPE(GM__SO_HIDDEN, "--hidden", hidden)
        SO_SHAPE(GM__SO_LAYERS, "--layers", layers)
        SO_SHAPE(GM__SO_HEADS, "--heads", heads)
        SO_SHAPE(GM__SO_KV_HEADS, "--kv-heads", kv_heads)
        SO_SHAPE(GM__SO_FFN, "--ffn", ffn)
        SO_SHAPE(GM__SO_VOCAB, "--vocab", vocab)
        SO_SHAPE(GM__SO_POSITIONS, "--positions", positions)
#undef SO_SHAPE
    case GM__SO_TIED: o->tied = 1; o->any_model = 1; return 0;
    case GM__SO_UNTIED: o->tied = 0; o->any_model = 1; return 0;
    case GM__SO_DROPOUT: o->dropout = 1; o->any_model = 1; return 0;
    case GM__SO_NO_DROPOUT: o->dropout = 0; o->any_model = 1; return 0;
    case GM__SO_OPS:
        o->any_model = 1;
        return so_enum(usage, "--ops", GM_SYNTH_LIST_OPS, arg, &o->ops);
    case GM__SO_BATCH: return so_u64(usage, "--batch", arg, &r->batch);
    case GM__SO_SEQ: return so_seq(o, usage, arg);
    case GM__SO_STEPS:
        o->steps_set = 1;
        return so_u64(usage, "--steps", arg, &r->steps);
    case GM__SO_MODE: return so_enum(usage, "--mode", GM_SYNTH_LIST_MODE, arg, &r->mode);
    case GM__SO_GRAD_MODE:
        return so_enum(usage, "--grad-mode", GM_SYNTH_LIST_GRAD_MODE, arg, &r->grad_mode);
    case GM__SO_LOSS: return so_enum(usage, "--loss", GM_SYNTH_LIST_LOSS, arg, &r->loss);
    case GM__SO_PRECISION:
        return so_enum(usage, "--precision", GM_SYNTH_LIST_PRECISION, arg, &r->precision);
    case GM__SO_OPTIMIZER:
        return so_enum(usage, "--optimizer", GM_SYNTH_LIST_OPTIMIZER, arg, &r->optimizer);
    case GM__SO_OPTIMPL:
        return so_enum(usage, "--optimizer-impl", GM_SYNTH_LIST_OPTIMPL, arg,
                       &r->optimizer_impl);
    case GM__SO_RECOMPUTE:
        return so_enum(usage, "--recompute", GM_SYNTH_LIST_RECOMPUTE, arg, &r->recompute);
    case GM__SO_ATTENTION:
        return so_enum(usage, "--attention", GM_SYNTH_LIST_ATTENTION, arg, &r->attention);
    case GM__SO_OFFLOAD: return so_enum(usage, "--offload", GM_SYNTH_LIST_OFFLOAD, arg, &r->offload);
    case GM__SO_GRAD_ACCUM: return so_u64(usage, "--grad-accum", arg, &r->grad_accum);
    case GM__SO_ZERO:
        if ((rc = gm__cli_u64_arg(usage, "--zero", arg, &v)) != 0)
            return rc;
        if (v > 3)
            return gm__cli_usage_error(usage, "invalid value for --zero: '%s' (0, 1, 2 or 3)",
                                       arg);
        r->zero = (int)v;
        return 0;
    case GM__SO_DP: return so_u64(usage, "--dp", arg, &r->dp);
    case GM__SO_TP: return so_u64(usage, "--tp", arg, &r->tp);
    case GM__SO_SEED: return gm__cli_u64_arg(usage, "--seed", arg, &r->seed);
    case GM__SO_WARM: r->warm = 1; return 0;
    case GM__SO_LIST_MODELS: o->list_models = 1; return 0;
    default: return GM_CLI_ERROR; /* not reached: every row is one of these */
    }
}

int gm__synth_resolve(const gm__synth_opts_t *o, const char *usage, size_t k,
                      gm_synth_config_t *cfg)
{
    gm_synth_config_t c = o->run;
    gm_error_t err = {0};
    gm_synth_apply_preset(&c, o->model ? o->model : "gpt2", &err);
    if (o->model == NULL && o->any_model)
        snprintf(c.model, sizeof c.model, "custom");
    if (o->arch >= 0 && o->arch != c.arch) {
        c.arch = o->arch;
        c.tied = c.arch != GM_SYNTH_ARCH_LLAMA;
        c.dropout = c.arch != GM_SYNTH_ARCH_LLAMA;
        if (c.arch == GM_SYNTH_ARCH_LLAMA)
            c.positions = 0;
        else if (c.positions == 0)
            c.positions = 2048;
        if (o->ffn == 0 && o->model == NULL)
            c.ffn = 0;
    }
#define SO_OVERRIDE(field) \
    if (o->field)          \
        c.field = o->field;
    SO_OVERRIDE(hidden)
    SO_OVERRIDE(layers)
    SO_OVERRIDE(heads)
    SO_OVERRIDE(kv_heads)
    SO_OVERRIDE(ffn)
    SO_OVERRIDE(vocab)
    SO_OVERRIDE(positions)
#undef SO_OVERRIDE
    if (o->hidden && !o->ffn && !o->model)
        c.ffn = 0; /* the default rule for the new width */
    if (o->heads && !o->kv_heads)
        c.kv_heads = 0;
    if (o->tied >= 0)
        c.tied = o->tied;
    if (o->dropout >= 0)
        c.dropout = o->dropout;
    if (o->ops >= 0)
        c.ops = o->ops;
    if (o->nseqs > 0) {
        c.seq_kind = GM_SYNTH_SEQ_FIXED;
        c.seq = o->seqs[k < o->nseqs ? k : 0];
    } else if (c.seq_kind == GM_SYNTH_SEQ_VALUES) {
        c.seq_values = o->file_values;
        c.nseq_values = o->nfile;
    }
    if (gm_synth_check(&c, &err) != 0)
        return gm__cli_usage_error(usage, "%s", err.msg);
    *cfg = c;
    return GM_CLI_OK;
}

int gm__synth_list_models(int json)
{
    size_t n = gm_synth_preset_count();
    if (json) {
        gm_json_t j;
        gm_json_init(&j, stdout, 1);
        gm_json_begin_array(&j);
        for (size_t i = 0; i < n; i++) {
            const gm_synth_preset_t *p = gm_synth_preset_at(i);
            gm_synth_config_t c;
            gm_synth_config_default(&c);
            gm_synth_apply_preset(&c, p->name, NULL);
            gm_json_begin_object(&j);
            gm_json_kv_str(&j, "name", p->name);
            gm_json_kv_str(&j, "arch", gm_synth_name(GM_SYNTH_LIST_ARCH, p->arch));
            gm_json_kv_u64(&j, "hidden", p->hidden);
            gm_json_kv_u64(&j, "layers", p->layers);
            gm_json_kv_u64(&j, "heads", p->heads);
            gm_json_kv_u64(&j, "kv_heads", p->kv_heads ? p->kv_heads : p->heads);
            gm_json_kv_u64(&j, "ffn", p->ffn ? p->ffn : 4 * p->hidden);
            gm_json_kv_u64(&j, "vocab", p->vocab);
            gm_json_kv_u64(&j, "params", gm_synth_param_count(&c));
            gm_json_kv_bool(&j, "tied", p->tied);
            gm_json_kv_str(&j, "source", p->source);
            gm_json_end_object(&j);
        }
        gm_json_end_array(&j);
        gm_json_finish(&j);
        return GM_CLI_OK;
    }
    gm__cli_table_t t;
    gm__cli_table_head(&t, "llrrrrrrrl", "model", "arch", "hidden", "layers", "heads", "kv", "ffn",
                       "vocab", "params", "source", NULL);
    for (size_t i = 0; i < n; i++) {
        const gm_synth_preset_t *p = gm_synth_preset_at(i);
        gm_synth_config_t c;
        gm_synth_config_default(&c);
        gm_synth_apply_preset(&c, p->name, NULL);
        gm__cli_table_cell(&t, "%s", p->name);
        gm__cli_table_cell(&t, "%s", gm_synth_name(GM_SYNTH_LIST_ARCH, p->arch));
        gm__cli_table_cell(&t, "%" PRIu64, p->hidden);
        gm__cli_table_cell(&t, "%" PRIu64, p->layers);
        gm__cli_table_cell(&t, "%" PRIu64, p->heads);
        gm__cli_table_cell(&t, "%" PRIu64, p->kv_heads ? p->kv_heads : p->heads);
        gm__cli_table_cell(&t, "%" PRIu64, p->ffn ? p->ffn : 4 * p->hidden);
        gm__cli_table_cell(&t, "%" PRIu64, p->vocab);
        gm__cli_table_cell(&t, "%.1fM", (double)gm_synth_param_count(&c) / 1e6);
        gm__cli_table_cell(&t, "%s", p->source);
    }
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
    return GM_CLI_OK;
}
