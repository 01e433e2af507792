/*
 * gmsim/align.h — allocation-by-allocation alignment of two captures of one
 * program (synth/align.c has the algorithm).
 *
 * Two captures of the same job at different sizes (sequence length, batch)
 * hold the same operations in the same order, with sizes that differ where
 * a tensor's shape depends on the size.  They do not hold the same window:
 * a PyTorch snapshot is a ring buffer, so each capture starts somewhere
 * else and materializes the allocations alive then as pre-existing ones
 * (in address order, which differs between captures).  The alignment pairs
 * each allocation of capture A with the one of capture B that the same
 * line of the program made, or with none.
 *
 * Use: load both traces (gm_align_trace_load), align them
 * (gm_align_traces), read a_to_b / b_to_a of the result, release it.
 */
#ifndef GMSIM_ALIGN_H
#define GMSIM_ALIGN_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"
#include "gmsim/store.h"

GM_API_BEGIN

/* One allocation of a loaded trace; index = its allocation id. */
typedef struct gm_align_alloc {
    uint64_t size;
    uint64_t event;  /* index of its ALLOC event in the trace */
    uint64_t key;    /* hash of its stack frames and stream (the same line of
                        the same program gives the same key in every trace) */
    uint32_t stream; /* its stream's index in the trace */
    uint32_t frames; /* the trace's interned frames index, 0 = none */
    uint32_t mark;   /* 1 + index in marks[] of the last MARK before it; 0 none */
    uint8_t preexisting;
    uint64_t free_event; /* index of its FREE event; UINT64_MAX if never freed */
} gm_align_alloc_t;

typedef struct gm_align_mark {
    uint64_t event; /* its event index */
    uint64_t key;   /* hash of its tag name */
    char *name;     /* its tag name */
} gm_align_mark_t;

typedef struct gm_align_trace {
    char *name;
    uint64_t events;         /* events of every op */
    gm_align_alloc_t *allocs; /* by allocation id */
    size_t nallocs;
    gm_align_mark_t *marks; /* in event order */
    size_t nmarks;
    char **frames;   /* frames texts by interned index (frames[0] = NULL) */
    uint32_t nframes;
} gm_align_trace_t;

/*
 * Read trace `name` of s into *out (the caller frees it with
 * gm_align_trace_free).  Errors of the reader (GM_ENOTFOUND, GM_ECORRUPT),
 * GM_ENOMEM.
 */
int gm_align_trace_load(gm_store_t *s, const char *name, gm_align_trace_t **out,
                        gm_error_t *err);
void gm_align_trace_free(gm_align_trace_t *t);

/*
 * The call-site key of every allocation of t into site[0..nallocs): the
 * hash of its stack frames less those of the outermost frame's file (the
 * script's own functions and their callers, which an edit of the script
 * changes, e.g. the loop moved into a function; the innermost frame alone
 * when every frame is the script's) and of its stream; equal to key for
 * an allocation without frames.  -1 out of memory.
 */
int gm_align_site_keys(const gm_align_trace_t *t, uint64_t *site);

typedef struct gm_align_options {
    /* The captures' sizes, where known: b's sizes relate to a's by a power
     * of seq_b/seq_a times a power of batch_b/batch_a for the allocations
     * whose shape follows them.  0 = unknown (then only equal sizes count
     * as a size match). */
    uint64_t seq_a, seq_b, batch_a, batch_b;
    /* Largest number of edits (insertions plus deletions) the diff
     * explores before it stops and reports where it broke; 0 = 4096. */
    uint64_t max_edits;
} gm_align_options_t;

#define GM_ALIGN_NOTES 6

/* An annotation (MARK tag) found inside the aligned windows of one trace
 * and not at the same place of the other. */
typedef struct gm_align_note {
    char name[64];       /* its tag name (cut to fit) */
    uint32_t in_a, in_b; /* marks of that name without a partner, per trace */
} gm_align_note_t;

typedef struct gm_align_result {
    int64_t *a_to_b; /* per allocation id of a: the id in b, or -1 */
    int64_t *b_to_a; /* per allocation id of b: the id in a, or -1 */
    size_t na, nb;
    uint64_t matched;      /* allocation pairs */
    uint64_t matched_size; /* of them, pairs whose sizes follow a power law of
                              the size ratios (or are equal) */
    uint64_t matched_pre;  /* of them, pairs of pre-existing allocations */
    uint64_t marks_matched;
    uint64_t edits;        /* insertions plus deletions of the diff */
    int end_anchored;      /* 1: the windows were aligned at their ends
                              (ring buffers), 0: at their starts */
    int complete;          /* 0: the diff stopped at max_edits */
    /* Allocations inside the aligned window of each trace: every
     * pre-existing one, and the others from the first pair on when
     * anchored at the ends (up to the last pair when anchored at the
     * starts); a capture's extra beginning (or end) is outside it.  Every
     * allocation counts when the diff gave up.  matched / the larger
     * window is the share of the common part that aligned. */
    uint64_t window_a, window_b;
    /* The longest run of one trace's allocations inside its window that
     * found no partner (where the alignment broke): its length, the event
     * index in a and in b where it starts (in the other trace: just after
     * the last pair before it).  0 when every allocation paired. */
    uint64_t gap_len, gap_a_event, gap_b_event;
    char where[320]; /* that place in words: "event E of 'A' (allocation I,
                        Z bytes, after mark 'M', frames 'F'), event E' of
                        'B'"; "" when none */
    /* 1: keyed by the whole stacks the windows paired under 90%, and keyed
     * by their call sites (gm_align_site_keys) they paired more:
     * the stacks differ in their outer frames */
    int site_keys;
    /* Annotations are hints, not keys: the marks are aligned by name
     * first, and only those that pair there take part in the allocations'
     * diff.  The marks inside the aligned windows (between the first and
     * the last pair of allocations made in them) that found no partner:
     * their counts per trace and, by name, the first GM_ALIGN_NOTES. */
    uint64_t marks_only_a, marks_only_b;
    gm_align_note_t notes[GM_ALIGN_NOTES];
    size_t nnotes;
} gm_align_result_t;

/*
 * Align a to b.  The marks are diffed by name alone first; the marks that
 * pair there are hints in what follows, the others are left out (and
 * reported in notes when inside the windows).  Pre-existing allocations are paired among themselves
 * (sorted by key and size, then diffed); the others, with the marks, by a
 * diff over (kind, key, size class) tokens anchored at the windows' ends
 * (or at their starts when that pairs more), then allocations left over
 * between two pairs are paired by key in order; last, a pre-existing
 * allocation still unpaired pairs with one the other capture made before
 * this one's window began and had not freed by then (same key, related
 * size).  When that pairs under 90% of the windows, the whole is done
 * again with the allocations keyed by their call sites (gm_align_site_keys)
 * and the better kept (site_keys).  opts may be NULL.  Fills
 * *out (released with gm_align_result_release, also after a failure).
 * GM_ENOMEM.
 */
int gm_align_traces(const gm_align_trace_t *a, const gm_align_trace_t *b,
                    const gm_align_options_t *opts, gm_align_result_t *out, gm_error_t *err);
void gm_align_result_release(gm_align_result_t *r);

/* 1 if size zb (of a capture at seq_b, batch_b) is za (at seq_a, batch_a)
 * times (seq_b/seq_a)^p (batch_b/batch_a)^q exactly for integers |p|,|q|
 * ≤ 4 (a 0 seq or batch leaves that factor out); equal sizes always are. */
int gm_align_size_related(uint64_t za, uint64_t zb, uint64_t seq_a, uint64_t seq_b,
                          uint64_t batch_a, uint64_t batch_b);

GM_API_END

#endif
