/*
 * report/space.c — the data of the page's address-space view
 * (docs/report.md, "Address space"): the segments and blocks of a policy
 * at an instant, for the policies that show them (the optional walk op of
 * gmsim/policy.h: caching, bfc, pool).
 *
 * Replay.  The runs shown for a trace whose policy walks (at most
 * SPACE_RUNS) are replayed again here, together, with their stored
 * parameters on their stored device, the trace fed one event at a time:
 *
 *  - pass 1 walks every run at SPACE_INSTANTS instants spread evenly over
 *    the trace (a check of the page's rebuilding, below, and what it shows
 *    of a run whose blocks it lacks), keeps the blocks and segments the
 *    page rebuilds any instant from ("any instant" below), and finds each
 *    run's reserved peak: the first event after which the run holds its
 *    most from the device.  The instants are written at its end, their
 *    free blocks coloured (as below) against the first request after the
 *    instant that took a new segment, else the first request after it;
 *  - pass 2 walks each run just before and just after its peak event (an
 *    ALLOC that needed a new segment) and says for every free block of the
 *    segments held before it why it could not serve that request: another
 *    pool (caching's small and large pools), another stream, too small,
 *    large enough for the bytes asked but not for the policy's rounded
 *    size (the block the request got), or large enough and still not used
 *    (the policy would not split it: a split limit, or its own choice).
 *    Free blocks in the new segment are its rest.
 *
 * A live block is named by its allocation id (gm_replay_live), which the
 * active-memory view (report/active.c) describes.  The peak reserved each
 * snapshot gives is the stored run's figure when the replay reproduces the
 * run (tests/report/browser.py checks it against the store).
 *
 * Output: one JSON object in a script element of type application/json
 * (numbers only, and labels with '<' and ':' escaped):
 *   {"events":N,"runs":[{"label":L,"color":C,"peak_reserved":P}],
 *    "instants":[{"event":E,"snaps":[SNAP per run]}],
 *    "peaks":[{"event":E,"request":S,"stream":T,"rounded":R,"snap":SNAP}],
 *    "any":[ANY per run, or null past the page's budget]}
 * ANY = {"q":Q,"spans":[..],"b64":".."} ("any instant" below); "any" is
 * left out for a trace whose active-memory data is not in the page (the
 * page rebuilds from its lifetimes) or whose ids do not rise with their
 * ALLOCs.
 * SNAP = {"reserved":R,"segs":[[addr,size,stream,pool,[offset,size,id,why,
 * ...]],...]}, stream -1 for a segment that serves every stream (bfc,
 * pool: GM_WALK_ANY_STREAM), id -1 for a free block; why: 0 live, 1 free, 2 too small,
 * 3 another stream, 4 another pool, 5 rounding, 6 not split, 7 the new
 * segment's rest.  An instant's SNAP also has "req":[event,id,bytes,
 * stream,rounded,took_new], the request its free blocks are coloured
 * against (space_instant_request), when pass 1 kept what finds it (a
 * trace whose active-memory data is all in the page, as for "any"); else
 * its free blocks are all "free".
 *
 * Failure: GM_ENOMEM, and the errors of the reader and the engine.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/vec.h"
#include "gmsim/advice.h"
#include "gmsim/json.h"
#include "gmsim/sweep.h"
#include "report/report.h"
#include "sim/torch_rules.h"

#define SPACE_RUNS 4
#define SPACE_INSTANTS 12

enum { WHY_LIVE, WHY_FREE, WHY_SMALL, WHY_STREAM, WHY_POOL, WHY_ROUND, WHY_SPLIT, WHY_NEW };

typedef struct space_live {
    uint64_t addr, id, size;
} space_live_t;

typedef struct space_lives {
    space_live_t *v;
    size_t n, cap;
    int nomem;
} space_lives_t;

static void space_live_fn(void *ctx, uint64_t id, const gm_block_t *blk)
{
    space_lives_t *l = ctx;
    if (l->nomem || blk->addr == UINT64_MAX)
        return;
    if (GM_VEC_RESERVE(l->v, l->cap, l->n + 1, 256)) {
        l->nomem = 1;
        return;
    }
    l->v[l->n++] = (space_live_t){blk->addr, id, blk->size};
}

static int space_live_cmp(const void *x, const void *y)
{
    const space_live_t *a = x, *b = y;
    return gm__cmp_u64(a->addr, b->addr);
}

/* The request a peak's snapshot explains its free blocks against; NULL
 * for an instant (every free block is "free"). */
typedef struct space_request {
    uint64_t size, rounded;
    uint32_t stream;
    int pool;                 /* caching's pool for it; -1 none */
    const gm_oom_walk_t *before; /* the segments held before it; NULL: all */
    /* at an instant: the request's event and allocation id, and whether
     * it took a new segment (written as the snapshot's "req") */
    uint64_t event, id;
    int took_new, at_instant;
} space_request_t;

static int space_existed(const gm_oom_walk_t *before, uint64_t addr)
{
    for (size_t i = 0; i < before->nseg; i++)
        if (before->seg[i].addr == addr)
            return 1;
    return 0;
}

/* A segment's stream in the page: -1 for one that serves every stream. */
static int64_t space_stream(uint32_t stream)
{
    return stream == GM_WALK_ANY_STREAM ? -1 : (int64_t)stream;
}

static int space_why(const gm_oom_segment_t *s, const gm_oom_block_t *b, const space_request_t *q)
{
    if (b->allocated)
        return WHY_LIVE;
    if (q == NULL)
        return WHY_FREE;
    if (q->before && !space_existed(q->before, s->addr))
        return WHY_NEW;
    if (q->pool >= 0 && s->pool >= 0 && s->pool != q->pool)
        return WHY_POOL;
    if (s->stream != GM_WALK_ANY_STREAM && s->stream != q->stream)
        return WHY_STREAM;
    if (b->size < q->size)
        return WHY_SMALL;
    if (b->size < q->rounded)
        return WHY_ROUND;
    return WHY_SPLIT;
}

/* Run i's segments and blocks (w) and live allocations by address (l). */
static int space_take(report_t *R, gm_replay_t *r, size_t i, gm_oom_walk_t *w, space_lives_t *l)
{
    gm_policy_t *p = gm_replay_policy(r, i);
    memset(w, 0, sizeof *w);
    memset(l, 0, sizeof *l);
    gm_policy_walk(p, gm_oom_walk_fn, w);
    gm_replay_live(r, i, space_live_fn, l);
    if (w->nomem || l->nomem)
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    if (l->n)
        qsort(l->v, l->n, sizeof *l->v, space_live_cmp);
    return 0;
}

/* SNAP of a walk, its live blocks named by their allocation ids. */
static void space_write(FILE *f, uint64_t reserved, const gm_oom_walk_t *w, const space_lives_t *l,
                        const space_request_t *q)
{
    fprintf(f, "{\"reserved\":%" PRIu64 ",\"segs\":[", reserved);
    for (size_t k = 0; k < w->nseg; k++) {
        const gm_oom_segment_t *s = &w->seg[k];
        fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%d,[", k ? "," : "", s->addr, s->size,
                space_stream(s->stream), s->pool);
        for (size_t j = 0; j < s->n; j++) {
            const gm_oom_block_t *b = &w->b[s->first + j];
            int64_t id = -1;
            if (b->allocated && l->n) {
                space_live_t key = {b->addr, 0, 0};
                const space_live_t *hit = bsearch(&key, l->v, l->n, sizeof *l->v, space_live_cmp);
                if (hit)
                    id = (int64_t)hit->id;
            }
            fprintf(f, "%s%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%d", j ? "," : "",
                    b->addr - s->addr, b->size, id, space_why(s, b, q));
        }
        fputs("]]", f);
    }
    fputc(']', f);
    if (q && q->at_instant)
        fprintf(f, ",\"req\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu64 ",%d]",
                q->event, q->id, q->size, q->stream, q->rounded, q->took_new);
    fputc('}', f);
}

/* A walked instant, kept until pass 1 has seen the requests after it. */
typedef struct space_instant {
    uint64_t event, reserved[SPACE_RUNS];
    gm_oom_walk_t w[SPACE_RUNS];
    space_lives_t l[SPACE_RUNS];
} space_instant_t;

static void space_walk_free(gm_oom_walk_t *w, space_lives_t *l)
{
    free(w->seg);
    free(w->b);
    memset(w, 0, sizeof *w);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* A replay of the chosen runs, prepared as advice.c's OOM replay is. */
static int space_open(report_t *R, const report_group_t *gr, const size_t *runs, size_t n,
                      gm_reader_t **rd, gm_replay_t **rp, gm_layout_t **layout)
{
    gm_store_t *s = R->stores[gr->store].s;
    int rc = gm_reader_open(s, gr->name, rd, R->err);
    if (rc)
        return rc;
    gm_replay_config_t c;
    gm_replay_config_default(&c);
    c.timeline_points = 0;
    c.progress = NULL;
    const report_run_t *first = &R->runs[runs[0]];
    c.device.capacity = first->capacity;
    char gran[32];
    if (gm_json_member(first->info->device, "granularity", gran, sizeof gran))
        c.device.granularity = strtoull(gran, NULL, 10);
    if ((rc = gm_replay_create(&c, rp, R->err)))
        return rc;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const report_run_t *r = &R->runs[runs[k]];
        gm_params_t set;
        if ((rc = gm_params_init(&set, r->ops, R->err)))
            break;
        for (size_t i = 0; rc == 0 && i < r->ops->nparams; i++) {
            char v[512];
            if (gm_json_member(r->info->params, r->ops->params[i].name, v, sizeof v))
                rc = gm_params_set(&set, r->ops->params[i].name, v, R->err);
        }
        if (rc == 0)
            rc = gm_replay_add(*rp, &set, R->err);
        gm_params_release(&set);
    }
    if (rc == 0)
        rc = gm_store_layout(s, gr->name, layout, R->err);
    if (rc)
        return rc;
    gm_replay_set_empty_cache_tag(*rp, gm_reader_find_tag(*rd, "empty_cache"));
    gm_replay_set_sync_tag(*rp, gm_reader_find_tag(*rd, "synchronize"));
    const gm_trace_info_t *info = gm_reader_info(*rd);
    gm_trace_context_t ctx = {.name = gr->name, .attrs = info->attrs, .layout = *layout,
                              .events = info->events};
    return gm_replay_prepare(*rp, &ctx, R->err);
}

static void space_close(gm_reader_t *rd, gm_replay_t *r, gm_layout_t *layout)
{
    gm_layout_free(layout);
    gm_replay_destroy(r);
    gm_reader_close(rd);
}

/* ---- any instant: each allocation's block and the segments' lifetimes ----
 *
 * Pass 1 also keeps, per run, the block each allocation got (its address
 * and size) and every segment's [create, release) events, found by walking
 * the run whenever its device count or reserved bytes change.  The page
 * rebuilds the run's address space at any event t from these and the
 * active-memory view's lifetimes: the segments live at t, the live
 * allocations' blocks inside them, and the gaps between them as free
 * blocks (caching and bfc merge neighbouring free blocks, so a gap is one
 * block; the walks at the instants above check it).
 *
 * Encoding, per run: the events in order (the page's own order: each
 * allocation's ALLOC and FREE), for each ALLOC one code as a varint.  A
 * best-fit policy that merges its free blocks places a block at the start
 * of a free block, which is the start of a segment or the end of the block
 * before it; so the run keeps a list of the SPACE_RECENT addresses most
 * recently made candidates (most recent first, each once): the start of
 * each block freed and the end of each block handed out.  The code is 0
 * for no block (an OOM); 1 + 2j + s (j < SPACE_RECENT) for a block at the
 * j-th address of that list (taken out of it); else 1 + 2 SPACE_RECENT +
 * 2 z + s, z its segment less the previous such block's (zigzag), followed
 * by its offset in the segment in units of q (the greatest common divisor
 * of the offsets and sizes).  s is 0 when the block's size is the request
 * rounded up to q, else 1 and the code is followed by its size less that
 * (in units of q, zigzag).  On the 1M-event random workload 99% of the
 * blocks are in the list and most codes are one byte (1.1 to 1.4 bytes an
 * allocation before base64, against 3.3 to 4.1 for a list of the freed
 * blocks alone); the sizes and lifetimes are the trace's, in the
 * active-memory data the runs share. */

#define SPACE_RECENT 63

typedef struct space_span {
    uint64_t create, release, addr, size;
    uint32_t stream;
    int pool;
} space_span_t;

typedef struct space_any {
    uint64_t *addr, *bsize; /* by allocation id; addr UINT64_MAX: none */
    uint32_t *seg;          /* by id: index in span of its segment */
    space_span_t *span;     /* every segment, by creation */
    size_t nspan, spancap;
    size_t *open; /* spans open now, by address */
    size_t nopen, opencap;
    uint64_t mallocs, frees, reserved;
    uint64_t *res; /* (event, reserved bytes) at each change */
    size_t nres, rescap;
    int split_free; /* a walk showed two free blocks side by side */
    /* pool's free blocks side by side ("cuts" below) */
    int cuts;        /* 1 tracked, 0 not, -1 given up (past SPACE_CUT_VISITS) */
    uint64_t visits; /* blocks walked for them */
    uint64_t *cut;   /* (create, release, addr, span) each */
    size_t ncut, cutcap;
    size_t *copen; /* cuts open now, by address */
    size_t ncopen;
} space_any_t;

typedef struct space_anyset {
    int ok;          /* ids rise with their ALLOCs: the page's order */
    uint64_t allocs; /* ids below it */
    int64_t *ev;     /* by event: id + 1 of its ALLOC, -(id + 1) of its FREE, 0 */
    uint64_t *request; /* by id: the bytes asked */
    uint32_t *stream;  /* by id: its stream */
    uint64_t nev, last_id;
    int any_alloc;
    space_any_t run[SPACE_RUNS];
} space_anyset_t;

static void space_any_free(space_anyset_t *S, size_t n)
{
    free(S->ev);
    free(S->request);
    free(S->stream);
    for (size_t k = 0; k < n; k++) {
        free(S->run[k].addr);
        free(S->run[k].bsize);
        free(S->run[k].seg);
        free(S->run[k].span);
        free(S->run[k].open);
        free(S->run[k].res);
        free(S->run[k].cut);
        free(S->run[k].copen);
    }
    memset(S, 0, sizeof *S);
}

static int space_span_cmp(const void *x, const void *y)
{
    const gm_oom_segment_t *a = x, *b = y;
    return gm__cmp_u64(a->addr, b->addr);
}

/* After event index: when run k's device changed, walk it and close the
 * spans that went, open those that came. */
static int space_any_segments(space_any_t *A, gm_policy_t *p, uint64_t index)
{
    const gm_device_t *d = p->dev;
    if (d->mallocs == A->mallocs && d->frees == A->frees && d->reserved == A->reserved)
        return 0;
    A->mallocs = d->mallocs;
    A->frees = d->frees;
    A->reserved = d->reserved;
    if (GM_VEC_RESERVE(A->res, A->rescap, A->nres + 2, 64))
        return -1;
    A->res[A->nres++] = index;
    A->res[A->nres++] = d->reserved;
    gm_oom_walk_t w;
    memset(&w, 0, sizeof w);
    gm_policy_walk(p, gm_oom_walk_fn, &w);
    int rc = w.nomem ? -1 : 0;
    if (rc == 0 && w.nseg)
        qsort(w.seg, w.nseg, sizeof *w.seg, space_span_cmp);
    size_t *open = rc == 0 ? malloc((w.nseg ? w.nseg : 1) * sizeof *open) : NULL;
    if (open == NULL)
        rc = -1;
    size_t i = 0, j = 0, m = 0;
    while (rc == 0 && (i < A->nopen || j < w.nseg)) {
        const space_span_t *o = i < A->nopen ? &A->span[A->open[i]] : NULL;
        const gm_oom_segment_t *s = j < w.nseg ? &w.seg[j] : NULL;
        if (o && s && o->addr == s->addr && o->size == s->size) {
            open[m++] = A->open[i++];
            j++;
        } else if (o && (!s || o->addr <= s->addr)) {
            A->span[A->open[i++]].release = index;
        } else {
            if (GM_VEC_RESERVE(A->span, A->spancap, A->nspan + 1, 64)) {
                rc = -1;
                break;
            }
            A->span[A->nspan] = (space_span_t){index, UINT64_MAX, s->addr, s->size, s->stream,
                                               s->pool};
            open[m++] = A->nspan++;
            j++;
        }
    }
    free(A->open);
    A->open = open;
    A->nopen = m;
    free(w.seg);
    free(w.b);
    return rc;
}

/* The span of run k open now that holds addr; UINT32_MAX none. */
static uint32_t space_any_seg_of(const space_any_t *A, uint64_t addr)
{
    size_t lo = 0, hi = A->nopen;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const space_span_t *s = &A->span[A->open[mid]];
        if (addr < s->addr)
            hi = mid;
        else if (addr >= s->addr + s->size)
            lo = mid + 1;
        else
            return (uint32_t)A->open[mid];
    }
    return UINT32_MAX;
}

/* ---- pool's free blocks side by side ("cuts") ----
 *
 * pool merges touching free blocks of one stream's list only, so a gap
 * between live blocks may be several free blocks.  For a pool run of a
 * trace with more than one stream, the address where a free block follows
 * another free block (a cut) is tracked with the [create, release) events
 * it stands between and the segment it is in, from a walk of the run
 * after every event.  The page cuts its gaps there.  Written compactly
 * (space_cuts_write, below: about 3 bytes a cut before base64), every cut
 * of a run is kept: the 1M-event random workload's pool run has 122,242.
 * Only against absurd inputs does a run give them up, past SPACE_CUT_VISITS
 * blocks walked or SPACE_CUT_MAX cuts: the page then draws each gap as one
 * block and says that it may be several. */

#define SPACE_CUT_VISITS 200000000u
#define SPACE_CUT_MAX 2000000u

typedef struct space_cutwalk {
    uint64_t seg, visits;
    int prev_free;
    uint64_t *addr;
    size_t n, cap;
    int nomem;
} space_cutwalk_t;

static void space_cut_fn(void *ctx, const gm_walk_block_t *w)
{
    space_cutwalk_t *c = ctx;
    c->visits++;
    if (c->visits == 1 || w->seg_addr != c->seg) {
        c->seg = w->seg_addr;
        c->prev_free = 0;
    }
    if (!w->allocated && c->prev_free && !c->nomem) {
        if (GM_VEC_RESERVE(c->addr, c->cap, c->n + 1, 64))
            c->nomem = 1;
        else
            c->addr[c->n++] = w->addr;
    }
    c->prev_free = !w->allocated;
}

/* After event index: run A's cuts now against those open, closing the ones
 * that went and opening the ones that came. */
static int space_any_cuts(space_any_t *A, gm_policy_t *p, uint64_t index)
{
    space_cutwalk_t c;
    memset(&c, 0, sizeof c);
    gm_policy_walk(p, space_cut_fn, &c);
    A->visits += c.visits;
    if (A->visits > SPACE_CUT_VISITS) {
        free(c.addr);
        A->cuts = -1;
        return 0;
    }
    size_t *open = c.nomem ? NULL : malloc((c.n ? c.n : 1) * sizeof *open);
    if (open == NULL) {
        free(c.addr);
        return -1;
    }
    if (c.n > 1)
        qsort(c.addr, c.n, sizeof *c.addr, gm__cmp_u64_qsort);
    size_t i = 0, j = 0, m = 0;
    int rc = 0;
    while (i < A->ncopen || j < c.n) {
        uint64_t o = i < A->ncopen ? A->cut[4 * A->copen[i] + 2] : UINT64_MAX;
        uint64_t a = j < c.n ? c.addr[j] : UINT64_MAX;
        if (i < A->ncopen && j < c.n && o == a) {
            open[m++] = A->copen[i++];
            j++;
        } else if (i < A->ncopen && o < a) {
            A->cut[4 * A->copen[i++] + 1] = index;
        } else {
            if (GM_VEC_RESERVE(A->cut, A->cutcap, 4 * (A->ncut + 1), 256)) {
                rc = -1;
                break;
            }
            A->cut[4 * A->ncut] = index;
            A->cut[4 * A->ncut + 1] = UINT64_MAX;
            A->cut[4 * A->ncut + 2] = a;
            A->cut[4 * A->ncut + 3] = space_any_seg_of(A, a);
            open[m++] = A->ncut++;
            j++;
        }
    }
    free(c.addr);
    free(A->copen);
    A->copen = open;
    A->ncopen = m;
    if (A->ncut > SPACE_CUT_MAX)
        A->cuts = -1;
    return rc;
}

static int space_any_init(space_anyset_t *S, size_t n, uint64_t events, uint64_t allocs)
{
    memset(S, 0, sizeof *S);
    S->ok = 1;
    S->allocs = allocs;
    S->nev = events;
    S->ev = calloc(events ? events : 1, sizeof *S->ev);
    S->request = calloc(allocs ? allocs : 1, sizeof *S->request);
    S->stream = calloc(allocs ? allocs : 1, sizeof *S->stream);
    if (S->ev == NULL || S->request == NULL || S->stream == NULL)
        return -1;
    for (size_t k = 0; k < n; k++) {
        space_any_t *A = &S->run[k];
        A->addr = malloc((allocs ? allocs : 1) * sizeof *A->addr);
        A->bsize = calloc(allocs ? allocs : 1, sizeof *A->bsize);
        A->seg = calloc(allocs ? allocs : 1, sizeof *A->seg);
        if (A->addr == NULL || A->bsize == NULL || A->seg == NULL)
            return -1;
        for (uint64_t i = 0; i < allocs; i++)
            A->addr[i] = UINT64_MAX;
    }
    return 0;
}

/* After event e (at index) was fed: its place in the page's order, each
 * run's segments and the block its ALLOC got. */
static int space_any_event(space_anyset_t *S, gm_replay_t *r, size_t n, const gm_event_t *e,
                           uint64_t index)
{
    if (!S->ok)
        return 0;
    if (e->op == GM_OP_ALLOC) {
        if (e->id >= S->allocs || (S->any_alloc && e->id <= S->last_id) || index >= S->nev) {
            S->ok = 0; /* not the order the page rebuilds */
            return 0;
        }
        S->ev[index] = (int64_t)e->id + 1;
        S->request[e->id] = e->size;
        S->stream[e->id] = e->stream;
        S->last_id = e->id;
        S->any_alloc = 1;
    } else if (e->op == GM_OP_FREE && e->id < S->allocs && index < S->nev) {
        S->ev[index] = -((int64_t)e->id + 1);
    }
    for (size_t k = 0; k < n; k++) {
        space_any_t *A = &S->run[k];
        if (space_any_segments(A, gm_replay_policy(r, k), index))
            return -1;
        if (A->cuts == 1 && space_any_cuts(A, gm_replay_policy(r, k), index))
            return -1;
        gm_block_t b;
        if (e->op == GM_OP_ALLOC && gm_replay_block(r, k, e->id, &b) && b.addr != UINT64_MAX) {
            A->addr[e->id] = b.addr;
            A->bsize[e->id] = b.size;
            A->seg[e->id] = space_any_seg_of(A, b.addr);
            if (A->seg[e->id] == UINT32_MAX)
                A->addr[e->id] = UINT64_MAX; /* outside every segment: not drawn */
        }
    }
    return 0;
}

static uint64_t space_zigzag(int64_t v) { return v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1; }

/* The list of candidate addresses ("any instant"): take addr out of it,
 * giving its place (SPACE_RECENT: not there). */
static size_t space_recent_take(uint64_t *r, size_t *n, uint64_t addr)
{
    size_t j = 0;
    while (j < *n && r[j] != addr)
        j++;
    if (j == *n)
        return SPACE_RECENT;
    memmove(r + j, r + j + 1, (*n - j - 1) * sizeof *r);
    (*n)--;
    return j;
}

/* Put addr first in the list, once, the oldest dropped when it is full. */
static void space_recent_push(uint64_t *r, size_t *n, uint64_t addr)
{
    if (space_recent_take(r, n, addr) == SPACE_RECENT && *n == SPACE_RECENT)
        (*n)--;
    memmove(r + 1, r, *n * sizeof *r);
    r[0] = addr;
    (*n)++;
}

/* Run k's cuts ("cuts" above) for the page: "cuts" (their count) and
 * "cut64", in the order they came (by their create event, then address),
 * per cut the varints
 *
 *   3 d + c   d: its create event less the previous cut's; c: 0 when the
 *             cut is the start of the block of the allocation whose ALLOC
 *             or FREE is that event (the page has each allocation's
 *             block, above), 1 when it is that block's end, 2 otherwise,
 *             followed by (2 only) its segment less the previous such
 *             cut's (zigzag) and its offset in the segment in units of q;
 *   l         its release event less its create event (the events of the
 *             trace when it stands at the end).
 *
 * A free turns the block it gives back into a free block beside another
 * stream's, so most cuts are c 0 or 1 and take 3 bytes (4 in base64).  A
 * cut outside every segment (none seen) is left out. */
static void space_cuts_write(FILE *f, const space_anyset_t *S, const space_any_t *A, uint64_t q,
                             uint64_t *chars, uint64_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < A->ncut; i++)
        n += A->cut[4 * i + 3] != UINT32_MAX;
    fprintf(f, ",\"cuts\":%zu,\"cut64\":\"", n);
    report_b64_t b = {.f = f};
    uint64_t prev = 0;
    int64_t prev_seg = 0;
    for (size_t i = 0; i < A->ncut; i++) {
        const uint64_t *c = &A->cut[4 * i];
        if (c[3] == UINT32_MAX)
            continue;
        uint64_t kind = 2;
        int64_t x = c[0] < S->nev ? S->ev[c[0]] : 0;
        if (x != 0) {
            uint64_t id = (uint64_t)(x < 0 ? -x : x) - 1;
            if (A->addr[id] == c[2])
                kind = 0;
            else if (A->addr[id] != UINT64_MAX && A->addr[id] + A->bsize[id] == c[2])
                kind = 1;
        }
        report_varint(&b, 3 * (c[0] - prev) + kind);
        prev = c[0];
        if (kind == 2) {
            report_varint(&b, space_zigzag((int64_t)c[3] - prev_seg));
            report_varint(&b, (c[2] - A->span[c[3]].addr) / q);
            prev_seg = (int64_t)c[3];
        }
        report_varint(&b, (c[1] == UINT64_MAX ? S->nev : c[1]) - c[0]);
    }
    report_b64_flush(&b);
    *chars += b.bytes;
    *count += n;
    fputc('"', f);
}

/* Run k's data for the page: "q", "spans" ([create,release,addr,size,
 * stream,pool] flat; release = events when never released), "reserved"
 * ([event, bytes] flat: the device's count, which rounds each segment to
 * its granularity, at each change), "split_free" (1: a walk at an instant
 * showed two free blocks side by side, so a gap may be several blocks),
 * "cuts" and "cut64" (pool's, when tracked; space_cuts_write),
 * "small" (caching's small-pool limit, by which the page puts a request in
 * a pool; 0 for the other policies) and "b64" (the codes above). */
static void space_any_write(FILE *f, const space_anyset_t *S, size_t k, uint64_t small,
                            uint64_t *chars, uint64_t *cut_chars, uint64_t *cuts)
{
    const space_any_t *A = &S->run[k];
    uint64_t q = 0;
    for (uint64_t i = 0; i < S->allocs; i++)
        if (A->addr[i] != UINT64_MAX)
            q = gm__gcd_u64(gm__gcd_u64(q, A->addr[i] - A->span[A->seg[i]].addr), A->bsize[i]);
    for (size_t i = 0; A->cuts == 1 && i < A->ncut; i++)
        if (A->cut[4 * i + 3] != UINT32_MAX)
            q = gm__gcd_u64(q, A->cut[4 * i + 2] - A->span[A->cut[4 * i + 3]].addr);
    if (q == 0)
        q = 1;
    fprintf(f, "{\"q\":%" PRIu64 ",\"spans\":[", q);
    for (size_t i = 0; i < A->nspan; i++) {
        const space_span_t *s = &A->span[i];
        fprintf(f, "%s%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%d",
                i ? "," : "", s->create, s->release == UINT64_MAX ? S->nev : s->release,
                s->addr, s->size, space_stream(s->stream), s->pool);
    }
    fputs("],\"reserved\":[", f);
    for (size_t i = 0; i < A->nres; i++)
        fprintf(f, "%s%" PRIu64, i ? "," : "", A->res[i]);
    fputc(']', f);
    if (A->cuts == 1)
        space_cuts_write(f, S, A, q, cut_chars, cuts);
    fprintf(f, ",\"split_free\":%d,\"small\":%" PRIu64 ",\"b64\":\"", A->split_free, small);
    report_b64_t b = {.f = f};
    uint64_t recent[SPACE_RECENT];
    size_t nr = 0;
    int64_t prev_seg = 0;
    for (uint64_t t = 0; t < S->nev; t++) {
        int64_t x = S->ev[t];
        if (x == 0)
            continue;
        uint64_t id = (uint64_t)(x < 0 ? -x : x) - 1;
        if (A->addr[id] == UINT64_MAX) {
            if (x > 0)
                report_varint(&b, 0);
            continue;
        }
        if (x < 0) {
            space_recent_push(recent, &nr, A->addr[id]);
            continue;
        }
        uint64_t up = (S->request[id] + q - 1) / q;
        int sized = A->bsize[id] != up * q;
        size_t j = space_recent_take(recent, &nr, A->addr[id]);
        if (j < SPACE_RECENT) {
            report_varint(&b, 1 + 2 * j + (size_t)sized);
        } else {
            const space_span_t *s = &A->span[A->seg[id]];
            uint64_t z = space_zigzag((int64_t)A->seg[id] - prev_seg);
            report_varint(&b, 1 + 2 * SPACE_RECENT + 2 * z + (uint64_t)sized);
            report_varint(&b, (A->addr[id] - s->addr) / q);
            prev_seg = A->seg[id];
        }
        if (sized)
            report_varint(&b, space_zigzag((int64_t)(A->bsize[id] / q) - (int64_t)up));
        space_recent_push(recent, &nr, A->addr[id] + A->bsize[id]);
    }
    report_b64_flush(&b);
    *chars += b.bytes;
    fputs("\"}", f);
}

/* The request run k's free blocks after event t are coloured against
 * (docs/report.md, "Address space"): the first ALLOC after t that took a
 * new segment (a span created at its event), else the first ALLOC after
 * t; the page (report/page.js, anyRequest) finds the same from its data.
 * 0 when there is none, or no data to find it in. */
static int space_instant_request(const space_anyset_t *S, size_t k, uint64_t t, uint64_t small,
                                 space_request_t *q)
{
    memset(q, 0, sizeof *q);
    if (S == NULL || !S->ok)
        return 0;
    const space_any_t *A = &S->run[k];
    uint64_t at = UINT64_MAX;
    for (size_t i = 0; i < A->nspan; i++) {
        uint64_t c = A->span[i].create;
        if (c > t && c < at && c < S->nev && S->ev[c] > 0)
            at = c;
    }
    q->took_new = at != UINT64_MAX;
    for (uint64_t e = t + 1; at == UINT64_MAX && e < S->nev; e++)
        if (S->ev[e] > 0)
            at = e;
    if (at == UINT64_MAX)
        return 0;
    uint64_t id = (uint64_t)S->ev[at] - 1;
    q->event = at;
    q->id = id;
    q->size = q->rounded = S->request[id];
    if (A->addr[id] != UINT64_MAX)
        q->rounded = A->bsize[id];
    q->stream = S->stream[id];
    q->pool = small ? (q->size > small ? 0 : 1) : -1;
    q->at_instant = 1;
    return 1;
}

/* The bytes up to which caching puts a request in its small pool; 0 for
 * the policies without pools. */
static uint64_t space_small(const report_t *R, size_t run)
{
    return strcmp(R->runs[run].info->policy, "caching") == 0 ? GM_TORCH_SMALL_SIZE : 0;
}

/* Pass 1: the instants, and each run's peak event (-1: never reserved). */
static int space_pass1(report_t *R, const report_group_t *gr, const size_t *runs, size_t n,
                       int64_t *peak, space_anyset_t *S)
{
    FILE *f = R->f;
    gm_reader_t *rd = NULL;
    gm_replay_t *r = NULL;
    gm_layout_t *layout = NULL;
    int rc = space_open(R, gr, runs, n, &rd, &r, &layout);
    uint64_t events = rc == 0 ? gm_reader_info(rd)->events : 0, index = 0, most[SPACE_RUNS] = {0};
    size_t next = 0;
    for (size_t k = 0; k < n; k++)
        peak[k] = -1;
    if (rc == 0 && S && space_any_init(S, n, events, gm_reader_info(rd)->allocs))
        rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
    for (size_t k = 0; rc == 0 && S && k < n; k++)
        S->run[k].cuts = strcmp(R->runs[runs[k]].info->policy, "pool") == 0 &&
                         gm_reader_stream_count(rd) > 1;
    space_instant_t *inst = calloc(SPACE_INSTANTS, sizeof *inst);
    if (inst == NULL && rc == 0)
        rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
    fputs("\"instants\":[", f);
    const gm_event_t *ev;
    size_t m;
    while (rc == 0 && (rc = gm_reader_next(rd, &ev, &m, R->err)) == 0 && m > 0) {
        for (size_t i = 0; rc == 0 && i < m; i++, index++) {
            if ((rc = gm_replay_feed(r, &ev[i], 1, R->err)))
                break;
            if (S && space_any_event(S, r, n, &ev[i], index)) {
                rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
                break;
            }
            for (size_t k = 0; k < n; k++) {
                uint64_t res = gm_replay_policy(r, k)->dev->reserved;
                if (res > most[k]) {
                    most[k] = res;
                    peak[k] = (int64_t)index;
                }
            }
            /* instant j at event (j + 1) * events / (SPACE_INSTANTS + 1) */
            while (rc == 0 && next < SPACE_INSTANTS &&
                   index + 1 >= (next + 1) * events / (SPACE_INSTANTS + 1)) {
                space_instant_t *I = &inst[next++];
                I->event = index;
                for (size_t k = 0; rc == 0 && k < n; k++) {
                    gm_oom_walk_t *w = &I->w[k];
                    I->reserved[k] = gm_replay_policy(r, k)->dev->reserved;
                    if ((rc = space_take(R, r, k, w, &I->l[k])) != 0)
                        break;
                    for (size_t j = 0; S && j < w->nseg; j++)
                        for (size_t b = 1; b < w->seg[j].n; b++)
                            if (!w->b[w->seg[j].first + b].allocated &&
                                !w->b[w->seg[j].first + b - 1].allocated)
                                S->run[k].split_free = 1;
                }
            }
        }
    }
    /* written once the requests after each instant are known */
    for (size_t j = 0; j < next; j++) {
        fprintf(f, "%s{\"event\":%" PRIu64 ",\"snaps\":[", j ? "," : "", inst[j].event);
        for (size_t k = 0; rc == 0 && k < n; k++) {
            space_request_t q;
            int has = space_instant_request(S, k, inst[j].event, space_small(R, runs[k]), &q);
            if (k)
                fputc(',', f);
            space_write(f, inst[j].reserved[k], &inst[j].w[k], &inst[j].l[k], has ? &q : NULL);
        }
        fputs("]}", f);
    }
    fputs("]", f);
    for (size_t j = 0; inst && j < SPACE_INSTANTS; j++)
        for (size_t k = 0; k < n; k++)
            space_walk_free(&inst[j].w[k], &inst[j].l[k]);
    free(inst);
    space_close(rd, r, layout);
    return rc;
}

/* Pass 2: each run before and after its peak event. */
static int space_pass2(report_t *R, const report_group_t *gr, const size_t *runs, size_t n,
                       const int64_t *peak)
{
    FILE *f = R->f;
    gm_reader_t *rd = NULL;
    gm_replay_t *r = NULL;
    gm_layout_t *layout = NULL;
    int rc = space_open(R, gr, runs, n, &rd, &r, &layout);
    int64_t last = -1;
    for (size_t k = 0; k < n; k++)
        if (peak[k] > last)
            last = peak[k];
    gm_oom_walk_t before[SPACE_RUNS];
    space_lives_t before_l[SPACE_RUNS];
    memset(before, 0, sizeof before);
    memset(before_l, 0, sizeof before_l);
    int written = 0;
    fputs(",\"peaks\":[", f);
    const gm_event_t *ev;
    size_t m;
    int64_t index = 0;
    while (rc == 0 && index <= last && (rc = gm_reader_next(rd, &ev, &m, R->err)) == 0 && m > 0) {
        for (size_t i = 0; rc == 0 && i < m && index <= last; i++, index++) {
            for (size_t k = 0; rc == 0 && k < n; k++)
                if (peak[k] == index)
                    rc = space_take(R, r, k, &before[k], &before_l[k]);
            if (rc || (rc = gm_replay_feed(r, &ev[i], 1, R->err)))
                break;
            for (size_t k = 0; rc == 0 && k < n; k++) {
                if (peak[k] != index)
                    continue;
                const gm_event_t *e = &ev[i];
                space_request_t q = {.size = e->size, .rounded = e->size, .stream = e->stream,
                                     .pool = -1, .before = &before[k]};
                if (strcmp(R->runs[runs[k]].info->policy, "caching") == 0)
                    q.pool = e->size > GM_TORCH_SMALL_SIZE ? 0 : 1;
                gm_oom_walk_t w;
                space_lives_t l;
                if ((rc = space_take(R, r, k, &w, &l)) == 0) {
                    /* the rounded size: the block the request got */
                    for (size_t j = 0; e->op == GM_OP_ALLOC && j < l.n; j++)
                        if (l.v[j].id == e->id)
                            q.rounded = l.v[j].size;
                    fprintf(f, "%s{\"run\":%zu,\"event\":%" PRId64 ",\"alloc\":%d,"
                               "\"id\":%" PRIu64 ",\"request\":%" PRIu64 ",\"stream\":%" PRIu32
                               ",\"rounded\":%" PRIu64 ",\"snap\":",
                            written++ ? "," : "", k, index, e->op == GM_OP_ALLOC, e->id, e->size,
                            e->stream, q.rounded);
                    space_write(f, gm_replay_policy(r, k)->dev->reserved, &w, &l, &q);
                    fputc('}', f);
                }
                space_walk_free(&w, &l);
            }
        }
    }
    fputs("]", f);
    for (size_t k = 0; k < n; k++)
        space_walk_free(&before[k], &before_l[k]);
    space_close(rd, r, layout);
    return rc;
}

/* Whether the address-space section is drawn: a trace in the stores with
 * a shown run of a policy that walks. */
int report_has_space(const report_t *R)
{
    for (size_t g = 0; g < R->ngroups; g++) {
        const report_group_t *gr = &R->groups[g];
        for (size_t k = 0; gr->attrs && k < gr->nshown; k++) {
            const report_run_t *r = &R->runs[gr->shown[k]];
            if (r->ops && r->ops->walk)
                return 1;
        }
    }
    return 0;
}

/* The address-space figure of trace group g: its canvas, its controls and
 * its data; nothing for a group with no run of a policy that walks, and a
 * note naming the trace when its events times its runs would pass what is
 * left of *budget (taken from it).  A run's blocks for any instant are
 * embedded while its allocations fit what is left of *any_budget (taken
 * from it). */
int report_space_figure(report_t *R, const report_group_t *gr, size_t g, uint64_t *budget,
                        uint64_t *any_budget)
{
    FILE *f = R->f;
    size_t runs[SPACE_RUNS], n = 0;
    for (size_t k = 0; gr->attrs && k < gr->nshown && n < SPACE_RUNS; k++) {
        const report_run_t *r = &R->runs[gr->shown[k]];
        if (r->ops && r->ops->walk && r->capacity == R->runs[gr->shown[0]].capacity)
            runs[n++] = gr->shown[k];
    }
    if (n == 0)
        return 0;
    if (gr->events * n > *budget) {
        fputs("<p class=\"note\">", f);
        report_esc(f, gr->name);
        fprintf(f, ": %zu run%s of %" PRIu64 " events, more than the %" PRIu64 " events left of "
                   "this page's budget for these replays (%u): not drawn.  A report of this "
                   "trace alone (--trace NAME) draws it.</p>\n",
                n, n == 1 ? "" : "s", gr->events, *budget, REPORT_SPACE_BUDGET);
        return 0;
    }
    *budget -= gr->events * n;
    fprintf(f, "<figure class=\"as\" id=\"as%zu\" data-t=\"%zu\" data-g=\"%zu\" data-name=\"",
            g, gr->trace_of, g);
    report_esc(f, gr->name);
    fputs("\"><figcaption>", f);
    report_esc(f, gr->name);
    fputs("</figcaption><div class=\"asc\"><label><input type=\"radio\" name=\"asm", f);
    fprintf(f, "%zu\" value=\"peak\" checked> at each policy's peak</label> <label><input "
               "type=\"radio\" name=\"asm%zu\" value=\"instant\"> at event <input "
               "type=\"range\" class=\"asr\" min=\"0\" max=\"%" PRIu64 "\" value=\"0\"> <span "
               "class=\"ase\"></span></label></div><canvas class=\"asv\" height=\"40\"></canvas>"
               "<div class=\"aslegend\"></div><div class=\"asnote note\"></div>\n"
               "<script type=\"application/json\" class=\"asd\" data-g=\"%zu\">",
            g, g, gr->events ? gr->events - 1 : 0, g);
    fprintf(f, "{\"events\":%" PRIu64 ",\"runs\":[", gr->events);
    for (size_t k = 0; k < n; k++) {
        const report_run_t *r = &R->runs[runs[k]];
        fprintf(f, "%s{\"label\":", k ? "," : "");
        report_json_str(f, r->cut);
        fprintf(f, ",\"color\":\"%s\",\"peak_reserved\":%" PRIu64 "}", report_color(r),
                r->m.peak_reserved);
    }
    fputs("],", f);
    int64_t peak[SPACE_RUNS];
    space_anyset_t S;
    memset(&S, 0, sizeof S);
    int any = R->groups[gr->trace_of].active == 1;
    int rc = space_pass1(R, gr, runs, n, peak, any ? &S : NULL);
    if (rc == 0)
        rc = space_pass2(R, gr, runs, n, peak);
    uint64_t chars = 0, cut_chars = 0, cuts = 0, allocs = S.allocs;
    size_t nany = 0;
    if (rc == 0 && any && S.ok) {
        fputs(",\"any\":[", f);
        for (size_t k = 0; k < n; k++) {
            if (k)
                fputc(',', f);
            if (allocs > *any_budget) {
                fputs("null", f);
                continue;
            }
            *any_budget -= allocs;
            space_any_write(f, &S, k, space_small(R, runs[k]), &chars, &cut_chars, &cuts);
            nany++;
        }
        fputc(']', f);
    }
    space_any_free(&S, n);
    fputs("}</script>", f);
    if (rc == 0 && nany) {
        char b[32], c[32];
        fprintf(f, "<p class=\"note size\">Embedded for any instant: %s of blocks (%.1f bytes "
                   "an allocation and run)",
                report_size(chars, b, sizeof b),
                (double)chars / (double)nany / (double)(allocs ? allocs : 1));
        if (cuts)
            fprintf(f, ", and %s of pool's free blocks side by side (%" PRIu64 " cuts, %.1f "
                       "bytes each)",
                    report_size(cut_chars, c, sizeof c), cuts, (double)cut_chars / (double)cuts);
        fputs(".</p>", f);
    }
    fputs("</figure>\n", f);
    return rc;
}
