/*
 * synth/workload.c — seeded random workloads (see gmsim/workload.h).
 *
 * The model is a training loop with gradient accumulation, coarse enough to
 * be generated at well over 50 million events per second (it feeds the
 * 100-million-event benchmark) and fine enough that allocators behave on it
 * as on real traces:
 *
 *   large   a few (4–12) allocations of 32 MiB–1 GiB ("weights, optimizer
 *           state") made in the first events and freed only at the end;
 *   medium  1–64 MiB "activations": each micro-batch of WL_MICRO events has
 *           a forward half that allocates them and a backward half that
 *           frees them, mostly in reverse order, so they live for hundreds
 *           of events and the live set saw-tooths as in a real step;
 *   small   512 B–1 MiB "temporaries" on a stack that hovers around a small
 *           depth, freed soon after, mostly LIFO.
 *
 * Sizes come from a fixed per-workload pool of "tensor shapes" drawn at
 * creation (48 small, 24 medium, one per large allocation), picked with a
 * skew towards the first entries so that a few sizes dominate, as in real
 * traces (this also makes the stored trace compress to a few bytes per
 * event).  About 10% of the allocations go to stream 1; a free is on its
 * allocation's stream.  Time advances 0.5–20 µs per event.  A MARK (tag 0,
 * "step") opens every step of WL_STEP events, the first at event 0.
 *
 * Invariants, kept by construction:
 *   - live requested bytes ≤ live_max: an allocation that would not fit is
 *     replaced by a free (class sizes are clamped so the smallest always fits
 *     an empty set);
 *   - exactly cfg.events events, everything freed by the last one: an
 *     allocation is made only while remaining ≥ live + 2, and once remaining
 *     equals the live count only frees are emitted (small, then medium, then
 *     large, each LIFO);
 *   - O(1) work per event and no allocation after gm_workload_create: live
 *     sets are fixed-capacity stacks inside the generator (a full stack
 *     makes that class free instead).
 *
 * The PRNG is xoshiro256** (Blackman & Vigna) seeded through splitmix64, so a
 * (config, seed) pair gives the same events on every platform.
 */
#include "gmsim/workload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/attrs.h"
#include "base/bits.h"

#define WL_STEP 4096u        /* events per step (between "step" marks) */
#define WL_MICRO 1024u       /* events per micro-batch (forward + backward) */
#define WL_SMALL_SHAPES 48u
#define WL_MEDIUM_SHAPES 24u
#define WL_LARGE_MAX 12u
#define WL_SMALL_CAP 128u    /* most small allocations live at once */
#define WL_SMALL_TARGET 12u  /* depth the small stack hovers around */
#define WL_MEDIUM_CAP 1024u
#define WL_KIB UINT64_C(1024)
#define WL_MIB (WL_KIB * 1024)
#define WL_GIB (WL_MIB * 1024)

/* Probabilities as fractions of 2^32. */
#define WL_P(x) ((uint64_t)((x) * 4294967296.0))

enum { WL_SMALL, WL_MEDIUM, WL_LARGE, WL_CLASSES };

typedef struct wl_live {
    uint64_t id;
    uint64_t size;
    uint32_t stream;
} wl_live_t;

typedef struct wl_stack {
    wl_live_t *items;
    uint32_t n;
    uint32_t cap;
} wl_stack_t;

struct gm_workload {
    gm_workload_config_t cfg;
    uint64_t rng[4];
    uint64_t emitted;     /* events produced so far */
    uint64_t next_id;     /* next ALLOC ordinal */
    uint64_t ts;
    uint64_t since_mark;  /* events since the last mark */
    uint64_t live_bytes;
    uint64_t medium_bytes;
    uint64_t medium_budget; /* bound on live medium bytes */
    uint64_t large_window;  /* large allocations happen before this event */
    uint32_t large_target;  /* how many large allocations to make */
    uint32_t large_made;
    uint64_t small_sizes[WL_SMALL_SHAPES];
    uint64_t medium_sizes[WL_MEDIUM_SHAPES];
    uint64_t large_sizes[WL_LARGE_MAX];
    wl_stack_t live[WL_CLASSES];
    wl_live_t small_items[WL_SMALL_CAP];
    wl_live_t medium_items[WL_MEDIUM_CAP];
    wl_live_t large_items[WL_LARGE_MAX];
};

static inline uint64_t wl_rand(gm_workload_t *wl)
{
    uint64_t *s = wl->rng;
    uint64_t out = gm__rotl_u64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = gm__rotl_u64(s[3], 45);
    return out;
}

/* Uniform in [0, n) from 32 random bits (multiply-shift, no division). */
static inline uint32_t wl_below(uint32_t bits, uint32_t n)
{
    return (uint32_t)(((uint64_t)bits * n) >> 32);
}

/* Log-uniform size in [lo, hi], a multiple of `mult` (≥ mult). */
static uint64_t wl_log_uniform(gm_workload_t *wl, uint64_t lo, uint64_t hi, uint64_t mult)
{
    /* Pick the power-of-two octave, then a uniform point inside it. */
    unsigned lo_bit = gm__log2_floor(lo);
    unsigned hi_bit = gm__log2_floor(hi);
    unsigned bit = lo_bit + (unsigned)(wl_rand(wl) % (hi_bit - lo_bit + 1));
    uint64_t base = UINT64_C(1) << bit;
    uint64_t v = base + wl_rand(wl) % base;
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    v -= v % mult;
    return v < mult ? mult : v;
}

static uint64_t wl_clamp(uint64_t v, uint64_t cap)
{
    if (cap == 0)
        cap = 1;
    return v > cap ? cap : v;
}

void gm_workload_config_default(gm_workload_config_t *cfg)
{
    cfg->events = 100000;
    cfg->seed = 1;
    cfg->live_max = 8 * WL_GIB;
}

int gm_workload_create(const gm_workload_config_t *cfg, gm_workload_t **out, gm_error_t *err)
{
    *out = NULL;
    if (cfg->events < 2)
        return gm_error_set(err, GM_EINVAL, "too few events for a workload: %" PRIu64
                            " (at least 2)", cfg->events);
    if (cfg->live_max < 4 * WL_KIB)
        return gm_error_set(err, GM_EINVAL,
                            "live bound too small for a workload: %" PRIu64
                            " bytes (at least 4 KiB)",
                            cfg->live_max);
    gm_workload_t *wl = calloc(1, sizeof *wl);
    if (wl == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory creating a workload");
    wl->cfg = *cfg;
    uint64_t x = cfg->seed;
    for (int i = 0; i < 4; i++)
        wl->rng[i] = gm__splitmix64(&x);

    uint64_t live_max = cfg->live_max;
    /* Per-class caps keep a sane mix whatever live_max is: large ones share
     * 40% of it, medium ones live within 45%, one small one is ≤ 1/64. */
    for (unsigned i = 0; i < WL_SMALL_SHAPES; i++) {
        uint64_t mult = wl_rand(wl) & 1 ? 4 : 2; /* fp32 or fp16 elements */
        wl->small_sizes[i] = wl_clamp(wl_log_uniform(wl, 512, WL_MIB, mult), live_max / 64);
    }
    for (unsigned i = 0; i < WL_MEDIUM_SHAPES; i++)
        wl->medium_sizes[i] = wl_clamp(wl_log_uniform(wl, WL_MIB, 64 * WL_MIB, 2048),
                                       live_max / 16);
    wl->medium_budget = live_max / 100 * 45;
    wl->large_target = 4 + (uint32_t)(wl_rand(wl) % (WL_LARGE_MAX - 3));
    uint64_t large_total = 0;
    for (unsigned i = 0; i < wl->large_target; i++) {
        wl->large_sizes[i] = wl_log_uniform(wl, 32 * WL_MIB, WL_GIB, 4);
        large_total += wl->large_sizes[i];
    }
    uint64_t large_budget = live_max / 100 * 40;
    if (large_total > large_budget) {
        /* Scale down proportionally, in floating point (size × budget
         * could overflow 64 bits). */
        for (unsigned i = 0; i < wl->large_target; i++) {
            uint64_t s = (uint64_t)((double)wl->large_sizes[i] * (double)large_budget /
                                    (double)large_total);
            wl->large_sizes[i] = s ? s : 1;
        }
    }
    wl->large_window = cfg->events / 8 < 2 * WL_MICRO ? cfg->events / 8 : 2 * WL_MICRO;
    wl->since_mark = WL_STEP; /* the first event is a mark */

    wl->live[WL_SMALL] = (wl_stack_t){wl->small_items, 0, WL_SMALL_CAP};
    wl->live[WL_MEDIUM] = (wl_stack_t){wl->medium_items, 0, WL_MEDIUM_CAP};
    wl->live[WL_LARGE] = (wl_stack_t){wl->large_items, 0, WL_LARGE_MAX};
    *out = wl;
    return 0;
}

void gm_workload_destroy(gm_workload_t *wl) { free(wl); }

static inline uint32_t wl_live_count(const gm_workload_t *wl)
{
    return wl->live[WL_SMALL].n + wl->live[WL_MEDIUM].n + wl->live[WL_LARGE].n;
}

/* Pool index skewed towards 0: the product of two uniforms. */
static inline uint32_t wl_pick(uint64_t r, uint32_t n)
{
    uint32_t a = (uint32_t)r, b = (uint32_t)(r >> 32);
    return wl_below((uint32_t)(((uint64_t)a * b) >> 32), n);
}

/* Free the element at index i of stack c (moving the top into its place). */
static void wl_free_at(gm_workload_t *wl, unsigned c, uint32_t i, gm_event_t *ev)
{
    wl_stack_t *st = &wl->live[c];
    wl_live_t it = st->items[i];
    st->items[i] = st->items[st->n - 1];
    st->n--;
    wl->live_bytes -= it.size;
    if (c == WL_MEDIUM)
        wl->medium_bytes -= it.size;
    ev->op = GM_OP_FREE;
    ev->id = it.id;
    ev->size = 0;
    ev->stream = it.stream;
}

/* Free something, preferring class c, then small, medium, large (top of the
 * stack).  The caller guarantees something is live. */
static void wl_free_any(gm_workload_t *wl, unsigned c, gm_event_t *ev)
{
    if (wl->live[c].n == 0)
        c = wl->live[WL_SMALL].n ? WL_SMALL : wl->live[WL_MEDIUM].n ? WL_MEDIUM : WL_LARGE;
    wl_free_at(wl, c, wl->live[c].n - 1, ev);
}

/* Allocate `size` bytes in class c if it fits; 0 if it does not. */
static int wl_alloc(gm_workload_t *wl, unsigned c, uint64_t size, uint64_t r, gm_event_t *ev)
{
    wl_stack_t *st = &wl->live[c];
    if (st->n == st->cap || size > wl->cfg.live_max - wl->live_bytes)
        return 0;
    if (c == WL_MEDIUM) {
        if (size > wl->medium_budget - wl->medium_bytes)
            return 0;
        wl->medium_bytes += size;
    }
    uint32_t stream = (r & 0x3ff) < 102; /* ~10% on stream 1 */
    st->items[st->n++] = (wl_live_t){wl->next_id, size, stream};
    wl->live_bytes += size;
    ev->op = GM_OP_ALLOC;
    ev->id = wl->next_id++;
    ev->size = size;
    ev->stream = stream;
    return 1;
}

/* Produce the next event into ev (remaining > 0). */
static void wl_step(gm_workload_t *wl, gm_event_t *ev)
{
    uint64_t r = wl_rand(wl);
    uint64_t remaining = wl->cfg.events - wl->emitted;
    uint32_t live = wl_live_count(wl);

    wl->ts += 500 + wl_below((uint32_t)r, 19501);
    ev->ts_ns = wl->ts;
    ev->addr = 0;
    ev->tag = 0;
    ev->frames = 0;
    ev->device = 0;
    ev->flags = 0;
    wl->emitted++;
    wl->since_mark++;

    if (remaining <= live) { /* the final drain: only frees fit the budget */
        wl_free_any(wl, WL_SMALL, ev);
        return;
    }
    if (wl->since_mark > WL_STEP) {
        wl->since_mark = 1;
        goto mark;
    }

    int can_alloc = remaining >= (uint64_t)live + 2;
    uint64_t r2 = wl_rand(wl);
    uint32_t dice = (uint32_t)(r >> 32);
    uint64_t micro = (wl->since_mark - 1) % WL_MICRO;
    unsigned c = WL_SMALL;

    if (wl->large_made < wl->large_target && wl->emitted <= wl->large_window &&
        dice < WL_P(0.25)) {
        if (can_alloc && wl_alloc(wl, WL_LARGE, wl->large_sizes[wl->large_made], r, ev)) {
            wl->large_made++;
            return;
        }
        goto fallback; /* freeing a small one, not the weights */
    }
    if (micro < WL_MICRO / 2) {
        /* Forward: allocate activations; a few temporaries die early. */
        if (dice < WL_P(0.10)) {
            c = WL_MEDIUM;
            if (can_alloc &&
                wl_alloc(wl, WL_MEDIUM, wl->medium_sizes[wl_pick(r2, WL_MEDIUM_SHAPES)], r, ev))
                return;
            goto fallback;
        }
        if (dice < WL_P(0.11) && wl->live[WL_MEDIUM].n) {
            wl_stack_t *st = &wl->live[WL_MEDIUM];
            wl_free_at(wl, WL_MEDIUM, wl_below((uint32_t)(r2 >> 32), st->n), ev);
            return;
        }
    } else if (wl->live[WL_MEDIUM].n) {
        /* Backward: free activations, mostly in reverse order, at a rate that
         * drains them by the end of the micro-batch. */
        uint64_t left = WL_MICRO - micro;
        uint64_t n = wl->live[WL_MEDIUM].n;
        if (3 * n >= 2 * left || dice < WL_P(1.5) / left * n) {
            uint32_t i = n - 1;
            if ((r2 & 0xf) == 0) /* 1 in 16: one of the top eight instead */
                i = n > 8 ? (uint32_t)(n - 1 - ((r2 >> 4) & 7)) : (uint32_t)((r2 >> 4) % n);
            wl_free_at(wl, WL_MEDIUM, i, ev);
            return;
        }
    }

    /* Small traffic around a target depth, freed mostly LIFO. */
    {
        wl_stack_t *st = &wl->live[WL_SMALL];
        /* P(alloc) is 1/2 at the target depth, 3% more per missing element
         * and 3% less per extra one; past target + 16 it is 2%. */
        int64_t d = st->n;
        int64_t p_alloc =
            (int64_t)WL_P(0.5) + ((int64_t)WL_SMALL_TARGET - d) * (int64_t)WL_P(0.03);
        if (p_alloc < (int64_t)WL_P(0.05))
            p_alloc = (int64_t)WL_P(0.05);
        if (d >= WL_SMALL_TARGET + 16)
            p_alloc = (int64_t)WL_P(0.02);
        uint32_t dice2 = (uint32_t)(r2 >> 32);
        if (d < 2 || dice2 < p_alloc) {
            uint64_t size = wl->small_sizes[wl_pick(wl_rand(wl), WL_SMALL_SHAPES)];
            if (can_alloc && wl_alloc(wl, WL_SMALL, size, r, ev))
                return;
            goto fallback;
        }
        uint32_t i = st->n - 1;
        if ((r2 & 0xff) < 38) /* ~15%: not the most recent one */
            i = wl_below((uint32_t)r2, st->n);
        wl_free_at(wl, WL_SMALL, i, ev);
        return;
    }

fallback:
    /* The wanted allocation does not fit (bound, budget or event count). */
    if (live > 0) {
        wl_free_any(wl, c, ev);
        return;
    }
mark:
    ev->op = GM_OP_MARK;
    ev->id = 0;
    ev->size = 0;
    ev->stream = 0;
    ev->tag = 0;
}

size_t gm_workload_next(gm_workload_t *wl, gm_event_t *buf, size_t max)
{
    uint64_t left = wl->cfg.events - wl->emitted;
    size_t n = left < max ? (size_t)left : max;
    for (size_t i = 0; i < n; i++)
        wl_step(wl, &buf[i]);
    return n;
}

int gm_workload_write(const gm_workload_config_t *cfg, gm_writer_t *w, gm_error_t *err)
{
    gm_workload_t *wl;
    int rc = gm_workload_create(cfg, &wl, err);
    if (rc)
        return rc;
    uint32_t streams[2], tag;
    char num[32];
    if ((rc = gm_writer_stream(w, 0x0, &streams[0], err)) ||
        (rc = gm_writer_stream(w, 0x1, &streams[1], err)) ||
        (rc = gm_writer_tag(w, "step", &tag, err)) ||
        (rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "random", err)))
        goto out;
    snprintf(num, sizeof num, "%" PRIu64, cfg->seed);
    if ((rc = gm_writer_attr_json(w, "seed", num, err)))
        goto out;
    snprintf(num, sizeof num, "%" PRIu64, cfg->events);
    if ((rc = gm_writer_attr_json(w, "events", num, err)))
        goto out;
    snprintf(num, sizeof num, "%" PRIu64, cfg->live_max);
    if ((rc = gm_writer_attr_json(w, "live_max", num, err)))
        goto out;

    gm_event_t buf[1024];
    for (size_t n; (n = gm_workload_next(wl, buf, sizeof buf / sizeof buf[0])) > 0;) {
        for (size_t i = 0; i < n; i++) {
            gm_event_t *ev = &buf[i];
            if (ev->op == GM_OP_MARK)
                ev->tag = tag;
            else
                ev->stream = streams[ev->stream];
            if ((rc = gm_writer_add(w, ev, err)))
                goto out;
        }
    }
out:
    gm_workload_destroy(wl);
    return rc;
}
