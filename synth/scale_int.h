/*
 * synth/scale_int.h — what the files of `gmsim scale` share, inside the
 * library: the plan (its captures, their aligned sizes and each base
 * allocation's law) and the law helpers.  synth/scale.c makes the plan
 * (the method is in its header comment), synth/scale_laws.c holds the
 * exact power laws, polynomials and call-site laws, synth/scale_write.c
 * writes a target (events, attributes and the scaled layout).
 */
#ifndef GM_SYNTH_SCALE_INT_H
#define GM_SYNTH_SCALE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/align.h"
#include "gmsim/error.h"
#include "gmsim/scale.h"
#include "gmsim/store.h"

#define SC_MAXP 4
#define SC_MIB (UINT64_C(1) << 20)
#define SC_SMALL_SEGMENT (2 * SC_MIB)
#define SC_ROUND_LARGE (2 * SC_MIB)
#define SC_CONTRADICT 0xff
#define SC_EXPONENTS ((2 * SC_MAXP + 1) * (2 * SC_MAXP + 1))

typedef unsigned __int128 sc_u128;

/* The most allocations a count law may give one group at a target. */
#define SC_COUNT_LIMIT (UINT64_C(1) << 24)

/* A group of the base's pre-existing allocations whose number follows a
 * law of the sizes (synth/scale_counts.c). */
typedef struct sc_count {
    size_t first, n;                          /* members: cmem[first .. first+n) */
    size_t grow;                              /* of them, the last `grow` paired in
                                                 fewer captures: copied first */
    uint64_t last;                            /* the member of the largest id */
    uint64_t count[GM_SCALE_MAX_CAPTURES];    /* per capture */
    int8_t p, q;                              /* power law (poly 0) */
    uint8_t poly, deg, var;                   /* polynomial in seq (var 0) or batch */
    uint8_t verified;                         /* checked on a further capture */
    uint8_t ambiguous;
} sc_count_t;

/* The laws' names, gm_scale_law_t's order (synth/scale.c). */
extern const char *const sc_law_names[GM_SCALE_LAW_COUNT];

struct gm_scale_plan {
    size_t n, base;
    gm_store_t *store[GM_SCALE_MAX_CAPTURES];
    char *trace[GM_SCALE_MAX_CAPTURES];
    char *label[GM_SCALE_MAX_CAPTURES];
    uint64_t seq[GM_SCALE_MAX_CAPTURES], batch[GM_SCALE_MAX_CAPTURES];
    gm_align_trace_t *t[GM_SCALE_MAX_CAPTURES];
    uint64_t nallocs; /* of the base */
    uint64_t *z;      /* [alloc * n + capture]: size, 0 = not paired */
    uint8_t *law;     /* gm_scale_law_t */
    int8_t *pe, *qe;  /* power exponents */
    uint8_t *deg;     /* polynomial degree (AFFINE: 1) */
    uint8_t *var;     /* 0: polynomial in seq, 1: in batch */
    uint8_t *npts;    /* captures the allocation paired in, the base's included */
    /* sc_exponents per (seq varies, batch varies) */
    int8_t pq[2][2][SC_EXPONENTS][2];
    size_t npq[2][2];
    /* count laws (synth/scale_counts.c): per capture its unpaired
     * pre-existing allocations (key, size), sorted; the groups, their
     * members (base ids), and per base allocation its group (UINT32_MAX:
     * none) and rank in it; cgrp and crank NULL when no group */
    void *upre[GM_SCALE_MAX_CAPTURES];
    size_t nupre[GM_SCALE_MAX_CAPTURES];
    sc_count_t *counts;
    size_t ncounts;
    uint64_t *cmem;
    uint32_t *cgrp, *crank;
    gm_scale_report_t rep;
};

/* ---- synth/scale_laws.c ----------------------------------------------------------- */

/* The exponents (p, q) a power law may take, |p|, |q| ≤ SC_MAXP (0 along a
 * dimension that does not vary), the smallest |p| + |q| first (the
 * constant (0, 0) first of all): their count. */
size_t sc_exponents(int vary_seq, int vary_batch, int8_t pq[SC_EXPONENTS][2]);

/* num/den of z · (s1/s0)^p · (b1/b0)^q, with negative powers crossed over;
 * -1 on overflow. */
int sc_power_frac(uint64_t z, uint64_t s0, uint64_t s1, uint64_t b0, uint64_t b1, int p, int q,
                  sc_u128 *num, sc_u128 *den);
/* 1 if every point of allocation i follows c · seq^p · batch^q exactly. */
int sc_power_fits(const gm_scale_plan_t *pl, uint64_t i, int p, int q);
/* The points of allocation i along dimension var (the base first): xs,
 * zs; returns their count. */
size_t sc_points(const gm_scale_plan_t *pl, uint64_t i, int var, long double *xs,
                 long double *zs);
/* Lagrange's polynomial through (xs, zs)[0..m) at x. */
long double sc_lagrange(const long double *xs, const long double *zs, size_t m, long double x);
/* Allocations of law NONE with stack frames take their call site's power
 * law (law SITE) where the site's paired allocations agree.  GM_ENOMEM. */
int sc_site_laws(gm_scale_plan_t *pl, gm_error_t *err);
/* Pre-existing allocations still of law NONE take the law of their twin
 * alive at the base's end (a warm-up's graph kept alive), else of the
 * paired allocations of their size (law SITE).  GM_ENOMEM. */
int sc_pre_laws(gm_scale_plan_t *pl, gm_error_t *err);

/* ---- synth/scale_counts.c ---------------------------------------------------------- */

/* Note capture k's pre-existing allocations that paired with nothing of
 * the base (b_to_a < 0).  GM_ENOMEM. */
int sc_count_note_unpaired(gm_scale_plan_t *pl, size_t k, const int64_t *b_to_a,
                           gm_error_t *err);
/* Group the base's pre-existing allocations and fit a count law where a
 * group's number differs among the captures (after the size laws).
 * GM_ENOMEM. */
int sc_count_laws(gm_scale_plan_t *pl, gm_error_t *err);
/* The rank of the member that the j-th copy of group g copies. */
size_t sc_count_template(const sc_count_t *g, uint64_t j);
/* How many allocations the member of rank r stands for at a count c:
 * itself (if r < c) and its copies. */
uint64_t sc_count_copies(const sc_count_t *g, uint64_t c, size_t r);
/* Group g's count at (seq, batch) (0: the base's); GM_EINVAL out of
 * range. */
int sc_count_at(const gm_scale_plan_t *pl, size_t g, uint64_t seq, uint64_t batch,
                uint64_t *count, gm_error_t *err);

/* ---- synth/scale_band.c ----------------------------------------------------------- */

/* An allocation's law was checked on a capture beyond the ones that fix it
 * (a power law or constant over three or more captures, a polynomial). */
int sc_verified(const gm_scale_plan_t *pl, uint64_t i);

#endif
