/*
 * cli/synthopt.h — the model and run options `synth`, `estimate` and `fit`
 * share (docs/synth.md): their rows of a verb's option table, and the
 * resolution of a preset plus overrides into a gm_synth_config_t.
 */
#ifndef GM_CLI_SYNTHOPT_H
#define GM_CLI_SYNTHOPT_H

#include "cli/cli.h"
#include "cli/opts.h"
#include "gmsim/synth.h"

/* The options, as their rows' codes. */
enum {
    GM__SO_MODEL = 1000, GM__SO_ARCH, GM__SO_HIDDEN, GM__SO_LAYERS, GM__SO_HEADS,
    GM__SO_KV_HEADS, GM__SO_FFN, GM__SO_VOCAB, GM__SO_POSITIONS, GM__SO_TIED, GM__SO_UNTIED,
    GM__SO_DROPOUT, GM__SO_NO_DROPOUT, GM__SO_OPS, GM__SO_BATCH, GM__SO_SEQ, GM__SO_STEPS,
    GM__SO_MODE, GM__SO_PRECISION, GM__SO_OPTIMIZER, GM__SO_OPTIMPL, GM__SO_RECOMPUTE,
    GM__SO_ATTENTION, GM__SO_GRAD_ACCUM, GM__SO_ZERO, GM__SO_DP, GM__SO_TP, GM__SO_OFFLOAD,
    GM__SO_SEED, GM__SO_WARM, GM__SO_LIST_MODELS, GM__SO_GRAD_MODE, GM__SO_LOSS
};

/* The options' rows (cli/opts.h), into a gm__synth_opts_t, and their help
 * text (for usage texts): a verb takes them all with one row,
 * GM__SYNTH_OPTS(&o), its own rows (before or after) replacing one of the
 * same name. */
extern const gm__cli_opt_t gm__synth_opt_rows[];
extern const char gm__synth_options_help[];
#define GM__SYNTH_OPTS(o) \
    GM__CLI_OPT(NULL, 0, GM__CLI_INCLUDE, o, .rows = gm__synth_opt_rows, \
                .help = gm__synth_options_help)

typedef struct gm__synth_opts {
    const char *first; /* the first of these options given, but --list-models */
    const char *model;
    int any_model; /* a model or shape option was given */
    int arch, tied, dropout, ops;
    uint64_t hidden, layers, heads, kv_heads, ffn, vocab, positions; /* 0 = unset */
    gm_synth_config_t run; /* run fields, defaults applied */
    int steps_set;
    /* --seq */
    uint64_t *seqs; /* a comma list: one trace per value */
    size_t nseqs;
    uint64_t *file_values; /* file: lengths */
    size_t nfile;
    const char *seq_file;  /* the file: path (an input: never the output) */
    int list_models;
} gm__synth_opts_t;

/* Start o: nothing given yet. */
void gm__synth_opts_init(gm__synth_opts_t *o);
void gm__synth_opts_release(gm__synth_opts_t *o);

/* Resolve into *cfg (preset, then overrides, then run fields) for the
 * k-th --seq list value (k ignored without a list); GM_CLI_OK or a usage
 * error printed. */
int gm__synth_resolve(const gm__synth_opts_t *o, const char *usage, size_t k,
                      gm_synth_config_t *cfg);

/* Print the model presets (`--list-models`), as a table or JSON. */
int gm__synth_list_models(int json);

#endif
