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

typedef unsigned __int128 sc_u128;

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
    gm_scale_report_t rep;
};

/* ---- synth/scale_laws.c ----------------------------------------------------------- */

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

/* ---- synth/scale_band.c ----------------------------------------------------------- */

/* An allocation's law was checked on a capture beyond the ones that fix it
 * (a power law or constant over three or more captures, a polynomial). */
int sc_verified(const gm_scale_plan_t *pl, uint64_t i);

#endif
