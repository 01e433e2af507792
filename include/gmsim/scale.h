/*
 * gmsim/scale.h — predict a captured job at other sequence lengths and
 * batch sizes from two or more captures of it (synth/scale.c has the
 * method; docs/validation.md its limits and measured errors).
 *
 * A plan loads the captures, aligns each with the base capture
 * allocation by allocation (gmsim/align.h), and fits one size law per
 * allocation of the base.  Writing a target size streams the base
 * capture's events through the store writer with every allocation's size
 * given by its law, its starting layout scaled to match, and the trace
 * tagged with the target's seq_len and batch.
 */
#ifndef GMSIM_SCALE_H
#define GMSIM_SCALE_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/align.h"
#include "gmsim/error.h"
#include "gmsim/store.h"

GM_API_BEGIN

#define GM_SCALE_MAX_CAPTURES 16
#define GM_SCALE_NONE_SITES 5

/* X(ENUM, name, description) — the laws, in order of preference. */
#define GM_SCALE_LAWS(X)                                                          \
    X(CONST, "constant", "the same size in every capture")                        \
    X(POWER, "power", "c * seq^p * batch^q, integer p and q, exact in every capture") \
    X(POLY, "polynomial", "a + b*x (+ c*x^2), fitted on all captures but one and " \
                          "verified on it")                                      \
    X(AFFINE, "affine", "a + b*x through the two captures (unverified)")         \
    X(SITE, "site", "in the base capture only: the power law of its call site's "  \
                    "paired allocations (of its size, else all of them) agree on; "  \
                    "pre-existing without one: that of the paired allocations of its size") \
    X(NONE, "none", "in the base capture only: kept at its captured size")

typedef enum gm_scale_law {
#define GM__SCALE_LAW_ENUM(e, s, d) GM_SCALE_LAW_##e,
    GM_SCALE_LAWS(GM__SCALE_LAW_ENUM)
#undef GM__SCALE_LAW_ENUM
    GM_SCALE_LAW_COUNT
} gm_scale_law_t;

const char *gm_scale_law_name(unsigned law); /* NULL out of range */

typedef struct gm_scale_capture {
    gm_store_t *store; /* not owned; must outlive the plan */
    const char *trace; /* trace name (copied) */
    const char *label; /* for messages, e.g. "a.db:run" (copied; NULL: trace) */
    /* The capture's sizes: 0 takes the trace's "seq_len" / "batch"
     * attribute; a size neither given nor in the attributes is refused
     * (unless no capture has one: then that dimension is left out). */
    uint64_t seq, batch;
    /* The capture's file, for its name: where neither the caller nor the
     * trace's attributes give a size, the trace's name and then the
     * file's (its last component, less an extension) are read for one
     * (gm_scale_sizes_from_name).  NULL: none. */
    const char *file;
} gm_scale_capture_t;

/* Where a capture's size came from (gm_scale_report_t). */
typedef enum gm_scale_from {
    GM_SCALE_FROM_NONE,  /* unknown */
    GM_SCALE_FROM_GIVEN, /* the caller (gm_scale_capture_t, --at) */
    GM_SCALE_FROM_ATTR,  /* the trace's seq_len / batch attribute */
    GM_SCALE_FROM_NAME   /* the trace's or the file's name */
} gm_scale_from_t;

#define GM_SCALE_TOKEN 64

/*
 * The sequence length and batch size a trace or file name states, as
 * people name snapshots: "ctx512", "seq_1024", "seq1024", "cl2048" (seq),
 * "bs8", "b4", "batch_16" (batch), a bare number ("lmmedium_512_train")
 * only when it is the name's one number-like token besides model sizes
 * ("2.7b", "7b") and precisions ("fp32"); conservative (synth/
 * scale_names.c has the rules).  *seq / *batch are 0 where the name
 * states none; seq_tok / batch_tok (GM_SCALE_TOKEN bytes each, or NULL)
 * get the token read ("ctx512").  Never fails.
 */
void gm_scale_sizes_from_name(const char *name, uint64_t *seq, uint64_t *batch, char *seq_tok,
                              char *batch_tok);

typedef struct gm_scale_options {
    /* Which capture gives the event sequence (its window, pre-existing
     * allocations and layout); -1: the largest (seq·batch). */
    int base;
    /* Least share of the aligned windows' allocations that must pair
     * (0: 0.9); below it the plan is refused unless force. */
    double min_matched;
    int force; /* go on despite poor alignment and contradicting laws */
    uint64_t max_edits; /* of the alignment's diff; 0: its default */
} gm_scale_options_t;

/* How one other capture aligned with the base. */
typedef struct gm_scale_pairing {
    uint64_t matched, window_base, window_other, matched_size;
    double share; /* matched / the larger window */
    uint64_t against; /* pairs whose size moves against the captures' sizes by
                         2^k (the smaller capture's allocation 2x, 4x ...
                         larger): captures of different precision */
    char where[320]; /* where the alignment broke ("" when nowhere) */
    int site_keys;   /* aligned on the innermost call sites: the stacks
                        differ in the script's own frames (gmsim/align.h) */
    /* annotations (marks) inside the aligned windows found in one capture
     * and not the other: hints, not keys, they are left out of the
     * alignment and reported (gm_align_result_t) */
    uint64_t marks_only_base, marks_only_other;
    gm_align_note_t notes[GM_ALIGN_NOTES]; /* in_a: the base's, in_b: the other's */
    size_t nnotes;
} gm_scale_pairing_t;

typedef struct gm_scale_report {
    size_t ncaptures;
    size_t base;
    uint64_t seq[GM_SCALE_MAX_CAPTURES], batch[GM_SCALE_MAX_CAPTURES];
    int vary_seq, vary_batch; /* the dimensions that vary among the captures */
    /* where each capture's sizes came from (gm_scale_from_t), and for
     * GM_SCALE_FROM_NAME the name's token ("ctx128") */
    uint8_t seq_from[GM_SCALE_MAX_CAPTURES], batch_from[GM_SCALE_MAX_CAPTURES];
    char seq_token[GM_SCALE_MAX_CAPTURES][GM_SCALE_TOKEN];
    char batch_token[GM_SCALE_MAX_CAPTURES][GM_SCALE_TOKEN];
    gm_scale_pairing_t pairing[GM_SCALE_MAX_CAPTURES]; /* [base] unused */
    uint64_t allocs;                       /* of the base */
    uint64_t bytes;                        /* their requested bytes in the base */
    uint64_t law_allocs[GM_SCALE_LAW_COUNT];
    uint64_t law_bytes[GM_SCALE_LAW_COUNT];
    uint64_t power_p[9];  /* allocations of law CONST, POWER or SITE by seq exponent -4..4 */
    uint64_t power_q[9];  /* … by batch exponent */
    uint64_t contradicting; /* allocations that follow no law although paired in
                               three or more captures (forced: kept as NONE) */
    uint64_t preexisting;   /* pre-existing allocations of the base */
    uint64_t preexisting_paired;
    /* Pre-existing allocations whose number follows the size (a warm-up's
     * graph of a loop over chunks): groups of one call site and shape
     * whose count differs among the captures get a count law
     * (synth/scale_counts.c); a target is written with that many. */
    uint64_t count_groups;
    uint64_t count_allocs;   /* the base's allocations in those groups */
    uint64_t count_verified; /* of them, in groups whose law a further capture checks */
    uint64_t count_unsure;   /* in groups whose counts differ but follow no law (or
                                that two groups could claim): the base's count */
    /* The first allocation of the base that follows no law: its id (-1:
     * none), size and description. */
    int64_t none_first;
    char none_where[320];
    /* The allocations following no law grouped by call site (stack frames
     * and stream), the most bytes first: up to GM_SCALE_NONE_SITES. */
    struct gm_scale_none_site {
        uint64_t allocs, bytes;
        uint64_t first;  /* its first allocation's id */
        char where[320]; /* that allocation described */
    } none_sites[GM_SCALE_NONE_SITES];
    size_t nnone_sites;
} gm_scale_report_t;

typedef struct gm_scale_plan gm_scale_plan_t;

/*
 * Load, align and fit.  Refused with GM_EINVAL: fewer than two captures
 * (or more than GM_SCALE_MAX_CAPTURES), a capture without a size, two
 * captures of equal sizes; GM_EFORMAT: a capture that does not align with
 * the base (share below min_matched: the message names both, the share and
 * where it broke), captures of different precision (1% or more of the
 * pairs, and 8 or more, 2^k times larger at the smaller size: pairing.against),
 * laws that contradict each other (the message names the
 * allocation and its sizes) — unless force.  Errors of the store
 * (GM_ENOTFOUND for a missing trace …), GM_ENOMEM.  The caller destroys
 * *out.
 */
int gm_scale_plan_create(const gm_scale_capture_t *caps, size_t n, const gm_scale_options_t *opts,
                         gm_scale_plan_t **out, gm_error_t *err);
void gm_scale_plan_destroy(gm_scale_plan_t *p);

const gm_scale_report_t *gm_scale_plan_report(const gm_scale_plan_t *p);

/* The law of base allocation id, its exponents (POWER/CONST) and its
 * predicted size at (seq, batch) (0 for a dimension that does not vary:
 * the base's).  GM_EINVAL for an id out of range or a size the law cannot
 * give (not positive, or over GM_SIZE_LIMIT: the message names the
 * allocation). */
int gm_scale_predict(const gm_scale_plan_t *p, uint64_t id, uint64_t seq, uint64_t batch,
                     gm_scale_law_t *law, int *pexp, int *qexp, uint64_t *size, gm_error_t *err);

/* Check that (seq, batch) can be predicted: GM_EINVAL when it changes a
 * dimension that does not vary among the captures, or is 0. */
int gm_scale_check_target(const gm_scale_plan_t *p, uint64_t seq, uint64_t batch,
                          gm_error_t *err);

/* How sure the prediction at one target is (synth/scale_band.c has the
 * rule; docs/validation.md why). */
typedef struct gm_scale_band {
    double beyond; /* how far the target lies beyond the captures: target /
                      largest capture (smallest / target below them), the
                      product over the dimensions that vary; 1 within */
    double ratio;  /* the target's seq·batch over the base's */
    uint64_t bytes; /* predicted bytes, every allocation's size summed */
    uint64_t verified;  /* of them, under laws verified on a further capture */
    uint64_t two_point; /* under laws that two captures fix and none checks
                           (constant, power, affine over two; site) */
    uint64_t captured;  /* under no law: at their captured size */
    uint64_t captured_allocs;
    uint64_t count_allocs; /* allocations written for the groups of a count law
                              (gm_scale_report_t count_groups) */
    double band; /* the error band, relative to the prediction (0.02: ±2%) */
} gm_scale_band_t;

/* The band of the prediction at (seq, batch) (0: the base's).  The errors
 * of gm_scale_check_target and gm_scale_predict. */
int gm_scale_band(const gm_scale_plan_t *p, uint64_t seq, uint64_t batch, gm_scale_band_t *out,
                  gm_error_t *err);

/*
 * Write the base capture scaled to (seq, batch) as trace `name` of dst
 * (flags of gm_writer_begin: GM_WRITE_REPLACE).  Streams the base's
 * events through the writer (segment events are left out: they belong to
 * the recorded run); the starting layout is scaled (allocated blocks
 * resized to their allocation's new size, free space by its segment's
 * growth, segments rounded to the allocator's granularity); groups of
 * pre-existing allocations under a count law hold the target's count
 * (some left out, or copies added after the group, ids renumbered in
 * order; count_groups of the report).  Attributes:
 * the base's, with "seq_len", "batch", "source": "scale", "scaled_from"
 * and "scale_laws".  On failure nothing is written.  The errors of
 * gm_scale_check_target and gm_scale_predict (and GM_EINVAL for a count
 * law that gives no count in range), of the store and writer.
 */
int gm_scale_write(gm_scale_plan_t *p, uint64_t seq, uint64_t batch, gm_store_t *dst,
                   const char *name, unsigned flags, gm_error_t *err);

GM_API_END

#endif
