/*
 * cli/synthopt.h — the model and run options `synth`, `estimate` and `fit`
 * share (docs/synth.md): a getopt_long table fragment, its handler, and
 * the resolution of a preset plus overrides into a gm_synth_config_t.
 */
#ifndef GM_CLI_SYNTHOPT_H
#define GM_CLI_SYNTHOPT_H

#include <getopt.h>

#include "cli/cli.h"
#include "gmsim/synth.h"

/* Option codes (above every verb's own). */
enum {
    GM__SO_MODEL = 1000, GM__SO_ARCH, GM__SO_HIDDEN, GM__SO_LAYERS, GM__SO_HEADS,
    GM__SO_KV_HEADS, GM__SO_FFN, GM__SO_VOCAB, GM__SO_POSITIONS, GM__SO_TIED, GM__SO_UNTIED,
    GM__SO_DROPOUT, GM__SO_NO_DROPOUT, GM__SO_OPS, GM__SO_BATCH, GM__SO_SEQ, GM__SO_STEPS,
    GM__SO_MODE, GM__SO_PRECISION, GM__SO_OPTIMIZER, GM__SO_OPTIMPL, GM__SO_RECOMPUTE,
    GM__SO_ATTENTION, GM__SO_GRAD_ACCUM, GM__SO_ZERO, GM__SO_DP, GM__SO_TP, GM__SO_OFFLOAD,
    GM__SO_SEED, GM__SO_WARM, GM__SO_LIST_MODELS, GM__SO_GRAD_MODE, GM__SO_LOSS, GM__SO_END
};

/* The long options, to copy into a verb's table (ends with a NULL row). */
#define GM__SYNTH_NOPTS 33
extern const struct option gm__synth_longopts[GM__SYNTH_NOPTS + 1];

/* The options' help text (for usage texts). */
extern const char gm__synth_options_help[];

/* The most rows of its own a verb's option table has besides these. */
#define GM__SYNTH_OWN_MAX 24

typedef struct gm__synth_opts {
    /* the verb's option table: its own rows, then gm__synth_longopts */
    struct option longopts[GM__SYNTH_OWN_MAX + GM__SYNTH_NOPTS + 1];
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

/* Start o, with the option table of a verb whose own rows are own[0..nown)
 * (nown at most GM__SYNTH_OWN_MAX). */
void gm__synth_opts_init(gm__synth_opts_t *o, const struct option *own, size_t nown);
void gm__synth_opts_release(gm__synth_opts_t *o);

/* Handle option c (with optarg) if it is one of the shared ones: returns
 * 0 when handled, GM_CLI_USAGE after printing a usage error, or -1 when c
 * is not a shared option. */
int gm__synth_opt(gm__synth_opts_t *o, const char *usage, int c, const char *arg);

/* Resolve into *cfg (preset, then overrides, then run fields) for the
 * k-th --seq list value (k ignored without a list); GM_CLI_OK or a usage
 * error printed. */
int gm__synth_resolve(const gm__synth_opts_t *o, const char *usage, size_t k,
                      gm_synth_config_t *cfg);

/* --help of a verb that takes these options: its usage text, then theirs.
 * GM_CLI_OK. */
int gm__synth_help(const char *usage);

/* Print the model presets (`--list-models`), as a table or JSON. */
int gm__synth_list_models(int json);

#endif
