/*
 * sim/offline/packing.c — perfect packings.
 *
 * When every instant of the instance holds exactly LB bytes (a perfect
 * packing: a rectangle LB × time tiled by the buffers), a plan of LB bytes
 * leaves no gap anywhere, and a stronger rule than the canonical search's
 * holds: every valley of the skyline (a step lower than its neighbours,
 * over time segments [j, k)) is covered by a buffer that starts exactly at
 * j (left of j everything is filled higher) and ends by k (right of k
 * too).  So the search branches only over the unplaced buffers that start
 * at j and end by k (bottom-left fill), at the valley with the fewest of
 * them (a forced move first, wherever it is), equal ones (same end, same
 * size) tried once.  What is left to fill once some blocks are placed
 * depends only on which (the skyline is their sum), so a set proved a dead
 * end is kept by its key and not searched again.  Times are the
 * lifetimes' t0/t1; the plan found is checked against the event overlaps
 * before it is kept, and a search that finds none proves nothing (times
 * and events could disagree): it is only a faster way to the plan of the
 * one case where the canonical search thrashes (many regions of the arena
 * filled in lockstep, a dead end in one undone through all).  The fill
 * places blocks of buffers merged first (corner_reduce: three stages, the
 * last the buffers themselves), each block's buffers at their places in
 * it; after the first stage, the packing is rebuilt once band by band as
 * guillotine cuts (bands.c), within its own share of the work.
 */
#include "gmsim/error.h"

#include <stdlib.h>
#include <string.h>

#include "sim/offline/offline.h"

/* The fill's stages (corner_stage): the blocks of every merge, of the
 * merges proved on series-parallel structure, the buffers themselves. */
enum { CORNER_STACKS, CORNER_SAFE, CORNER_BUFFERS };

/* Work each stage before the last may spend, from its start. */
#define CORNER_STAGE_WORK (UINT64_C(1) << 20)

struct corner {
    size_t n, T;              /* blocks, their segments */
    const offline_buf_t *buf; /* the blocks the fill places (blk; times: segment indices) */
    offline_buf_t *blk;
    size_t n0, T0;            /* the buffers, their segments */
    const offline_buf_t *buf0;
    uint32_t *cs0, *ce0;      /* each buffer's segments */
    uint32_t *up;          /* per node (buffers, then merged blocks): the one it went into, or
                            * UINT32_MAX with ~block (a block of the fill) in rel */
    uint64_t *rel;         /* its offset in that one */
    uint64_t *at;          /* per node: its offset in the plan (corner_expand) */
    size_t nodes;
    uint32_t *cs, *ce;     /* each block's time segments [cs, ce) */
    uint32_t *first, *ids; /* blocks by first segment, CSR; each run by (ce, size) descending */
    uint64_t *h;           /* skyline per segment */
    uint64_t *off;         /* offsets, UINT64_MAX = unplaced */
    uint64_t target, work, limit;
    uint64_t rng;       /* 0: candidates in order; else a seeded rotation at each node */
    uint64_t k;         /* restarts made in this stage */
    int stage;          /* CORNER_* */
    uint64_t stage_end; /* the work where this stage stops (UINT64_MAX: the last) */
    int over;           /* this stage is over (a restart ended: none) */
    int done;           /* found, or the last stage over, or the limit reached */
    uint64_t *zob;      /* per block: a random key */
    uint64_t key;       /* the placed blocks' keys, xored (and CORNER_KEY0) */
    uint64_t *tt;       /* keys of sets of placed blocks proved dead ends, by key & ttmask */
    size_t ttmask;
    int banded;         /* the rebuild band by band tried (bands_search) */
};

/* Work the rebuild band by band may spend before the fill. */
#define CORNER_BANDS_WORK (UINT64_C(1) << 22)

/* The key of no block placed; dead ends recorded per stage, at most this
 * many (a slot holds the last one of its keys). */
#define CORNER_KEY0 UINT64_C(0x6a09e667f3bcc909)
#define CORNER_TT_MAX ((size_t)1 << 16)

/*
 * The valley of the skyline to fill next, in [*j, *k): of the valleys (a
 * step lower than both its neighbours, or than one at the edge), the one
 * with the fewest candidates, the lowest then the leftmost of those.  Any
 * valley will do: its left cell can only be covered by a block that starts
 * there, at its height, and ends by its end (left, below and right of that
 * cell all is filled), so its candidates are all the ways on, and one with
 * a single candidate is a move forced wherever the fill goes next.  0 when
 * some valley has none (a dead end, however the rest is filled).
 */
static int corner_pick(corner_t *c, size_t *j, size_t *k)
{
    size_t T = c->T, fewest = SIZE_MAX;
    uint64_t at = 0;
    for (size_t a = 0; a < T;) {
        size_t b = a + 1;
        while (b < T && c->h[b] == c->h[a])
            b++;
        c->work += b - a;
        uint64_t H = c->h[a];
        if (H < c->target && (a == 0 || c->h[a - 1] > H) && (b == T || c->h[b] > H)) {
            size_t n = 0;
            uint32_t last = UINT32_MAX;
            for (uint32_t q = c->first[a]; q < c->first[a + 1]; q++) {
                uint32_t id = c->ids[q];
                c->work++;
                if (c->off[id] != UINT64_MAX || c->ce[id] > b || H + c->buf[id].size > c->target)
                    continue;
                if (last == UINT32_MAX || c->ce[last] != c->ce[id] ||
                    c->buf[last].size != c->buf[id].size)
                    n++; /* equal ones (same end, same size) count once */
                last = id;
            }
            if (n == 0)
                return 0;
            if (n < fewest || (n == fewest && H < at)) {
                fewest = n;
                at = H;
                *j = a;
                *k = b;
            }
        }
        a = b;
    }
    return fewest != SIZE_MAX;
}

static int corner_dfs(corner_t *c, size_t left)
{
    if (left == 0)
        return EXACT_FOUND;
    if (c->work >= c->limit)
        return EXACT_ABORT;
    uint64_t *seen = &c->tt[c->key & c->ttmask];
    c->work++;
    if (*seen == c->key)
        return EXACT_NONE; /* these blocks placed: no way on, proved before */
    size_t j, k;
    if (!corner_pick(c, &j, &k)) {
        *seen = c->key;
        return EXACT_NONE;
    }
    uint64_t hj = c->h[j];
    uint32_t last = UINT32_MAX, nb = c->first[j + 1] - c->first[j];
    uint32_t rot = c->rng && nb > 1 ? (uint32_t)(offline_rand(&c->rng) % nb) : 0;
    for (uint32_t x = 0; x < nb; x++) {
        uint32_t id = c->ids[c->first[j] + (x + rot) % nb];
        const offline_buf_t *b = &c->buf[id];
        c->work++;
        if (c->off[id] != UINT64_MAX || c->ce[id] > k || hj + b->size > c->target)
            continue;
        if (last != UINT32_MAX && c->ce[last] == c->ce[id] && c->buf[last].size == b->size)
            continue; /* the same as the one just tried */
        last = id;
        c->off[id] = hj;
        c->key ^= c->zob[id];
        for (uint32_t s = c->cs[id]; s < c->ce[id]; s++)
            c->h[s] = hj + b->size;
        c->work += c->ce[id] - c->cs[id];
        int rc = corner_dfs(c, left - 1);
        if (rc == EXACT_FOUND)
            return rc; /* the plan stays in off */
        for (uint32_t s = c->cs[id]; s < c->ce[id]; s++)
            c->h[s] = hj;
        c->off[id] = UINT64_MAX;
        c->key ^= c->zob[id];
        if (rc != EXACT_NONE)
            return rc;
    }
    *seen = c->key;
    return EXACT_NONE;
}

/* Whether buffer x goes before y in a segment's run: the later end first,
 * then the larger, then the lower id. */
static int corner_before(const corner_t *c, uint32_t x, uint32_t y)
{
    if (c->ce[x] != c->ce[y])
        return c->ce[x] > c->ce[y];
    if (c->buf[x].size != c->buf[y].size)
        return c->buf[x].size > c->buf[y].size;
    return x < y;
}

/* Insertion sort of ids[0, k) by corner_before (runs are short; n is at
 * most OFFLINE_EXACT_MAX).  No global state: planners may run in threads. */
static void corner_sort(const corner_t *c, uint32_t *ids, size_t k)
{
    for (size_t i = 1; i < k; i++) {
        uint32_t t = ids[i];
        size_t q = i;
        while (q > 0 && corner_before(c, t, ids[q - 1])) {
            ids[q] = ids[q - 1];
            q--;
        }
        ids[q] = t;
    }
}

/*
 * The blocks of a perfect packing for a stage of the fill: the buffers
 * (c->cs0, c->ce0 over c->T0 segments, every segment's total the target)
 * merged, each merge a new node (c->up, c->rel):
 *   - where exactly one block ends at a time and exactly one starts there,
 *     the one that starts lies on the bytes the one that ends frees (the
 *     others live across): the two are one block over both, in every
 *     plan;
 *   - blocks over the same segments are stacked into one: in a packing by
 *     guillotine cuts (a series-parallel composition of the blocks: in
 *     time, cuts no block crosses; in bytes, bands across a region's whole
 *     time), blocks that go from the same node to the same node of that
 *     structure are parallel (adjacent in some plan).  A time where one
 *     block ends or one starts (or the packing's first or last) is one
 *     node: CORNER_SAFE stacks only between such times; CORNER_STACKS all
 *     (blocks of different bands over the same times, often right and
 *     found in a few restarts, else the stage runs out);
 * until no merge is left.  CORNER_BUFFERS merges nothing.  Into c->blk
 * (times: segment indices), c->n, c->nodes; GM_ENOMEM or 0.
 */
static int corner_reduce(corner_t *c, int stage, uint64_t *work)
{
    size_t n0 = c->n0, T = c->T0, cap = 2 * n0;
    uint32_t *nu = malloc(cap * sizeof *nu), *nv = malloc(cap * sizeof *nv);
    uint64_t *nh = malloc(cap * sizeof *nh), *key = malloc(n0 * sizeof *key);
    uint32_t *al = malloc(n0 * sizeof *al);
    uint32_t *cnt = calloc(2 * (T + 1), sizeof *cnt), *idx = malloc(2 * (T + 1) * sizeof *idx);
    free(c->up);
    free(c->rel);
    free(c->at);
    free(c->blk);
    c->blk = NULL;
    c->at = NULL;
    c->up = malloc(cap * sizeof *c->up);
    c->rel = calloc(cap, sizeof *c->rel);
    int rc = GM_ENOMEM;
    if (!nu || !nv || !nh || !key || !al || !cnt || !idx || !c->up || !c->rel)
        goto out;
    size_t N = n0, na = n0;
    for (size_t i = 0; i < n0; i++) {
        nu[i] = c->cs0[i];
        nv[i] = c->ce0[i];
        nh[i] = c->buf0[i].size;
        c->up[i] = UINT32_MAX;
        al[i] = (uint32_t)i;
    }
    /* keys: 21 bits each of start, end and node */
    const uint64_t low = (UINT64_C(1) << 21) - 1;
    int changed = stage != CORNER_BUFFERS && T <= low && cap <= low;
    while (changed) {
        changed = 0;
        /* stacks */
        memset(cnt, 0, 2 * (T + 1) * sizeof *cnt);
        for (size_t q = 0; q < na; q++) {
            cnt[2 * nu[al[q]] + 1]++; /* starts */
            cnt[2 * nv[al[q]]]++;     /* ends */
        }
        for (size_t q = 0; q < na; q++)
            key[q] = (uint64_t)nu[al[q]] << 42 | (uint64_t)nv[al[q]] << 21 | al[q];
        offline_unique(key, na);
        *work += 4 * na + T;
        size_t m = 0;
        for (size_t q = 0; q < na;) {
            size_t r = q + 1;
            while (r < na && key[r] >> 21 == key[q] >> 21)
                r++;
            uint32_t tu = (uint32_t)(key[q] >> 42), tv = (uint32_t)(key[q] >> 21 & low);
            int one = stage == CORNER_STACKS ||
                      ((tu == 0 || cnt[2 * tu] == 1 || cnt[2 * tu + 1] == 1) &&
                       (tv == T || cnt[2 * tv] == 1 || cnt[2 * tv + 1] == 1));
            if (r - q == 1 || !one) {
                for (size_t x = q; x < r; x++)
                    al[m++] = (uint32_t)(key[x] & low);
            } else {
                uint32_t C = (uint32_t)N++;
                uint64_t at = 0;
                for (size_t x = q; x < r; x++) {
                    uint32_t y = (uint32_t)(key[x] & low);
                    c->up[y] = C;
                    c->rel[y] = at;
                    at += nh[y];
                }
                nu[C] = tu;
                nv[C] = tv;
                nh[C] = at;
                c->up[C] = UINT32_MAX;
                al[m++] = C;
                changed = 1;
            }
            q = r;
        }
        na = m;
        /* chains */
        memset(cnt, 0, 2 * (T + 1) * sizeof *cnt);
        for (size_t q = 0; q < na; q++) {
            uint32_t id = al[q];
            cnt[2 * nu[id] + 1]++;
            idx[2 * nu[id] + 1] = id;
            cnt[2 * nv[id]]++;
            idx[2 * nv[id]] = id;
        }
        *work += na + T;
        size_t N0 = N;
        for (size_t t = 1; t < T; t++) {
            if (cnt[2 * t] != 1 || cnt[2 * t + 1] != 1)
                continue;
            uint32_t x = idx[2 * t], y = idx[2 * t + 1];
            if (nh[x] != nh[y])
                continue; /* not a perfect packing */
            uint32_t C = (uint32_t)N++;
            nu[C] = nu[x];
            nv[C] = nv[y];
            nh[C] = nh[x];
            c->up[x] = c->up[y] = C;
            c->up[C] = UINT32_MAX;
            if (cnt[2 * nv[y]] == 1)
                idx[2 * nv[y]] = C; /* the chain goes on there */
            changed = 1;
        }
        m = 0;
        for (size_t q = 0; q < na; q++)
            if (c->up[al[q]] == UINT32_MAX)
                al[m++] = al[q];
        for (size_t C = N0; C < N; C++)
            if (c->up[C] == UINT32_MAX)
                al[m++] = (uint32_t)C;
        na = m;
    }
    c->blk = malloc((na ? na : 1) * sizeof *c->blk);
    c->at = malloc(N * sizeof *c->at);
    if (c->blk == NULL || c->at == NULL)
        goto out;
    for (size_t q = 0; q < na; q++) {
        uint32_t id = al[q];
        c->blk[q] = (offline_buf_t){nh[id], 0, 0, nu[id], nv[id]};
        c->rel[id] = ~(uint64_t)q;
    }
    c->n = na;
    c->nodes = N;
    rc = 0;
out:
    free(nu);
    free(nv);
    free(nh);
    free(key);
    free(al);
    free(cnt);
    free(idx);
    return rc;
}

/* Stage s of the fill (the first of s, s + 1, ... that merges anything
 * beyond the one before; CORNER_BUFFERS always): its blocks and their
 * segments, runs and skyline, ready for restarts from the first, up to
 * CORNER_STAGE_WORK from the work now (in *work).  GM_ENOMEM or 0. */
static int corner_stage(corner_t *c, int s, uint64_t *work)
{
    size_t before = c->stage == s ? c->n0 : c->n; /* the first stage: the buffers */
    for (;; s++) {
        if (corner_reduce(c, s, work) != 0)
            return GM_ENOMEM;
        if (s == CORNER_BUFFERS || (c->n < c->n0 && c->n != before))
            break;
    }
    c->stage = s;
    c->stage_end = s == CORNER_BUFFERS ? UINT64_MAX : *work + CORNER_STAGE_WORK;
    c->k = 0;
    c->over = 0;
    free(c->cs);
    free(c->ce);
    free(c->ids);
    free(c->off);
    free(c->first);
    free(c->h);
    free(c->zob);
    free(c->tt);
    c->first = NULL;
    c->h = NULL;
    size_t n = c->n;
    const offline_buf_t *buf = c->blk;
    c->buf = buf;
    /* dead ends: 64 slots a block, a power of two from 2^10 to CORNER_TT_MAX */
    size_t slots = 1024;
    while (slots < CORNER_TT_MAX && slots < 64 * n)
        slots *= 2;
    c->ttmask = slots - 1;
    c->tt = calloc(slots, sizeof *c->tt);
    c->zob = malloc((n ? n : 1) * sizeof *c->zob);
    if (!c->tt || !c->zob)
        return GM_ENOMEM;
    uint64_t seed = (uint64_t)s;
    for (size_t i = 0; i < n; i++)
        c->zob[i] = offline_rand(&seed);
    /* the fill's segments: between the blocks' distinct ends */
    uint64_t *t = malloc(2 * (n ? n : 1) * sizeof *t);
    c->cs = malloc(n * sizeof *c->cs);
    c->ce = malloc(n * sizeof *c->ce);
    c->ids = malloc(n * sizeof *c->ids);
    c->off = malloc(n * sizeof *c->off);
    if (!t || !c->cs || !c->ce || !c->ids || !c->off) {
        free(t);
        return GM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        t[2 * i] = buf[i].t0;
        t[2 * i + 1] = buf[i].t1;
    }
    size_t u = offline_unique(t, 2 * n);
    c->T = u - 1;
    c->first = calloc(c->T + 2, sizeof *c->first);
    c->h = calloc(c->T + 1, sizeof *c->h);
    uint32_t *fill = malloc((c->T + 1) * sizeof *fill);
    if (!c->first || !c->h || !fill) {
        free(t);
        free(fill);
        return GM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        c->cs[i] = (uint32_t)offline_coord(t, u, buf[i].t0);
        c->ce[i] = (uint32_t)offline_coord(t, u, buf[i].t1);
        c->first[c->cs[i] + 1]++;
    }
    for (size_t x = 0; x < c->T; x++)
        c->first[x + 1] += c->first[x];
    memcpy(fill, c->first, (c->T + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        c->ids[fill[c->cs[i]]++] = (uint32_t)i;
    for (size_t x = 0; x < c->T; x++)
        corner_sort(c, c->ids + c->first[x], c->first[x + 1] - c->first[x]);
    *work += n;
    free(t);
    free(fill);
    return 0;
}

/*
 * The bottom-left fill of buf when it is a perfect packing of lb: a
 * corner_t ready to run (corner_run), else NULL (not a perfect packing;
 * GM_ENOMEM through *rc).  *work grows by the check's work (and, for a
 * perfect packing, the first stage's merges).
 */
corner_t *corner_begin(const offline_buf_t *buf, size_t n, uint64_t lb, uint64_t *work, int *rc)
{
    corner_t *c = calloc(1, sizeof *c);
    uint64_t *t = malloc(2 * n * sizeof *t);
    uint64_t *tot = NULL;
    int ok = 0;
    if (c == NULL || t == NULL) {
        *rc = GM_ENOMEM;
        goto out;
    }
    c->n0 = n;
    c->buf0 = buf;
    c->cs0 = malloc(n * sizeof *c->cs0);
    c->ce0 = malloc(n * sizeof *c->ce0);
    if (!c->cs0 || !c->ce0) {
        *rc = GM_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (buf[i].t1 <= buf[i].t0)
            goto out; /* a lifetime of no length: no skyline to fill */
        t[2 * i] = buf[i].t0;
        t[2 * i + 1] = buf[i].t1;
    }
    size_t u = offline_unique(t, 2 * n);
    c->T0 = u - 1;
    tot = calloc(c->T0 + 1, sizeof *tot);
    if (tot == NULL) {
        *rc = GM_ENOMEM;
        goto out;
    }
    /* totals per segment: all must be lb */
    for (size_t i = 0; i < n; i++) {
        c->cs0[i] = (uint32_t)offline_coord(t, u, buf[i].t0);
        c->ce0[i] = (uint32_t)offline_coord(t, u, buf[i].t1);
        for (uint32_t s = c->cs0[i]; s < c->ce0[i]; s++)
            tot[s] += buf[i].size;
        *work += c->ce0[i] - c->cs0[i];
    }
    for (size_t s = 0; s < c->T0; s++)
        if (tot[s] != lb)
            goto out;
    c->target = lb;
    if ((*rc = corner_stage(c, CORNER_STACKS, work)) != 0)
        goto out;
    ok = 1;
out:
    free(t);
    free(tot);
    if (!ok) {
        corner_end(c);
        return NULL;
    }
    return c;
}

void corner_end(corner_t *c)
{
    if (c == NULL)
        return;
    free(c->cs0);
    free(c->ce0);
    free(c->blk);
    free(c->up);
    free(c->rel);
    free(c->at);
    free(c->cs);
    free(c->ce);
    free(c->ids);
    free(c->off);
    free(c->first);
    free(c->h);
    free(c->zob);
    free(c->tt);
    free(c);
}

/* The buffers' offsets (c->at) from the blocks' (c->off): each node's is
 * that of the one it went into (a later node) plus its place there. */
static void corner_expand(corner_t *c)
{
    for (size_t x = c->nodes; x-- > 0;)
        c->at[x] = c->up[x] == UINT32_MAX ? c->off[~c->rel[x]] : c->at[c->up[x]] + c->rel[x];
}

/* Whether the plan at[] keeps every pair of buffers that overlap in the
 * events (ovs/ov) apart. */
static int corner_disjoint(const offline_buf_t *buf, size_t n, const uint32_t *ovs,
                           const uint32_t *ov, const uint64_t *at)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t q = ovs[i]; q < ovs[i + 1]; q++) {
            uint32_t o = ov[q];
            if (at[i] < at[o] + buf[o].size && at[o] < at[i] + buf[i].size)
                return 0;
        }
    return 1;
}

/* The rebuild band by band (bands_search), once, with at most
 * CORNER_BANDS_WORK of the work below limit: 1 with off set (a plan checked
 * against the event overlaps), -1 out of memory (c->done), else 0. */
static int corner_bands(corner_t *c, uint64_t limit, const uint32_t *ovs, const uint32_t *ov,
                        uint64_t *off)
{
    c->banded = 1;
    if (c->work >= limit)
        return 0;
    uint64_t share = limit - c->work < CORNER_BANDS_WORK ? limit - c->work : CORNER_BANDS_WORK;
    int rc = 0;
    if (bands_search(c->buf0, c->n0, c->target, share, c->at, &c->work, &rc) == EXACT_FOUND) {
        int in = 1;
        for (size_t i = 0; i < c->n0; i++)
            in &= c->at[i] + c->buf0[i].size <= c->target;
        c->work += ovs[c->n0] + c->n0;
        if (in && corner_disjoint(c->buf0, c->n0, ovs, ov, c->at)) {
            memcpy(off, c->at, c->n0 * sizeof *off);
            c->done = 1;
            return 1;
        }
    }
    if (rc != 0) {
        c->done = 1; /* out of memory: nothing found */
        return -1;
    }
    return 0;
}

/*
 * Run c's restarts while none has found a plan and its work (carried in
 * *work) is below stop, each restart cut at limit and at its stage's end
 * (stop <= limit: a run stopped at stop and run again later up to limit
 * makes the same restarts as one run up to limit).  A stage is over at its
 * end or when a restart ended with every candidate tried; the next begins
 * (corner_stage).  EXACT_FOUND with off filled (a plan checked against the
 * event overlaps ovs/ov), else EXACT_ABORT; c->done once a plan is found,
 * the last stage is over (none found proves nothing here) or limit is
 * reached.
 *
 * The restarts run under quotas of the Luby sequence (1 1 2 1 1 2 4 ...
 * units of 16 (n + T) work), the first in order, the others with seeded
 * rotations of each node's candidates: a wrong choice low down costs less
 * to leave by a restart than by backtracking, and many short randomized
 * tries find a fill where a few long ones thrash (a 400-piece guillotine
 * cut that quotas growing by half from 64 (n + T) never filled in 10^9
 * units is filled in 10^8).
 */
int corner_run(corner_t *c, uint64_t stop, uint64_t limit, const uint32_t *ovs,
               const uint32_t *ov, uint64_t *off, uint64_t *work)
{
    if (c->done)
        return EXACT_ABORT;
    c->work = *work;
    int r = EXACT_ABORT;
    while (c->work < stop && c->work < limit) {
        if (c->over || c->work >= c->stage_end) {
            if (!c->banded) {
                /* after the first stage, the rebuild band by band, within its share */
                int b = corner_bands(c, limit, ovs, ov, off);
                if (b != 0) {
                    *work = c->work;
                    return b > 0 ? EXACT_FOUND : EXACT_ABORT;
                }
                continue;
            }
            if (c->stage == CORNER_BUFFERS)
                break; /* every candidate of the buffers tried: none */
            if (corner_stage(c, c->stage + 1, &c->work) != 0) {
                c->done = 1; /* out of memory: nothing found */
                *work = c->work;
                return EXACT_ABORT;
            }
            continue;
        }
        size_t n = c->n;
        uint64_t quota = 16 * (uint64_t)(n + c->T) * offline_luby(c->k + 1);
        uint64_t end = c->stage_end < limit ? c->stage_end : limit;
        c->rng = c->k ? c->k * UINT64_C(0x9e3779b97f4a7c15) : 0;
        c->limit = c->work + quota < end ? c->work + quota : end;
        for (size_t i = 0; i < n; i++)
            c->off[i] = UINT64_MAX;
        memset(c->h, 0, (c->T + 1) * sizeof *c->h);
        c->key = CORNER_KEY0;
        r = corner_dfs(c, n);
        c->k++;
        if (r == EXACT_FOUND)
            break;
        if (r == EXACT_NONE) {
            c->over = 1; /* with every candidate tried: none of these blocks */
            r = EXACT_ABORT;
        }
    }
    *work = c->work;
    if (r != EXACT_FOUND && !(c->over && c->stage == CORNER_BUFFERS) && c->work < limit)
        return EXACT_ABORT; /* stopped at stop: to be run again */
    c->done = 1;
    if (r == EXACT_FOUND) {
        /* the buffers' plan against the event overlaps */
        size_t n0 = c->n0;
        const offline_buf_t *buf = c->buf0;
        const uint64_t *at = c->at;
        corner_expand(c);
        if (!corner_disjoint(buf, n0, ovs, ov, at))
            r = EXACT_ABORT;
        *work += ovs[n0] + c->nodes;
        if (r == EXACT_FOUND)
            memcpy(off, at, n0 * sizeof *off);
    } else {
        r = EXACT_ABORT; /* none found proves nothing here */
    }
    return r;
}

/*
 * Look for a plan of lb bytes by bottom-left fill when buf is a perfect
 * packing of lb (else nothing is tried): corner_begin, corner_run up to
 * limit, corner_end.  EXACT_FOUND with off filled (a plan checked against
 * the event overlaps ovs/ov), else EXACT_ABORT; GM_ENOMEM through *rc.
 * *work grows by the work done, at most limit.
 */
int corner_search(const offline_buf_t *buf, size_t n, const uint32_t *ovs,
                  const uint32_t *ov, uint64_t lb, uint64_t limit, uint64_t *off,
                  uint64_t *work, int *rc)
{
    corner_t *c = corner_begin(buf, n, lb, work, rc);
    if (c == NULL)
        return EXACT_ABORT;
    int r = corner_run(c, limit, limit, ovs, ov, off, work);
    corner_end(c);
    return r;
}

/*
 * The exact search's targets.  lo is a proved bound (no plan below it): at
 * first LB, the busiest section's bytes; it rises only when the search
 * proves a target infeasible (EXACT_NONE), never when a target is given up
 * for budget (EXACT_ABORT).  *best (the best plan so far) falls with every
 * plan found.
 *
 *   1. The capacity the instance was given (capacity, rounded down to
 *      align), when it lies in [lo, *best): with up to 7/8 of the budget.
 *      That is the question a placement instance asks.
 *   2. Then rounds with a quota that doubles, starting at 1/64 of what is
 *      left: lo, and when lo is given up, the midpoint of [lo, *best), each
 *      under the round's quota.  A plan at lo is optimal; a plan at the
 *      midpoint halves the interval; a proof at either raises lo.  Once the
 *      capacity is met, targets below it get at most 1/16 of the budget:
 *      going below what was asked is a bonus, not the question.
 *
 * The search's sections are e->m's (exact_init, released by the caller);
 * the bottom-left fill for perfect packings goes on from e->c (begun by
 * offline_plan), with a quarter of the budget in all.  *lb_out gets lo
 * (never above *best), *found whether a plan of the search replaced the
 * heuristics'.  GM_ENOMEM or 0; *spent gets the work.
 */
uint64_t offline_exact_lo(const exact_t *m, uint64_t align)
{
    uint64_t lb = 0;
    for (size_t s = 0; s < m->S; s++)
        if (m->total0[s] > lb)
            lb = m->total0[s];
    return (lb + align - 1) / align * align;
}

int offline_exact(offline_early_t *e, const offline_buf_t *buf, size_t n, uint64_t align,
                  uint64_t budget, uint64_t capacity, uint64_t *best, uint64_t *off,
                  uint64_t *spent, uint64_t *lb_out, int *found)
{
    exact_t *m = &e->m;
    *found = 0;
    uint64_t lo = offline_exact_lo(m, align), before = *best;
    uint64_t cap = capacity / align * align, limit = budget;
    if (lo < *best) {
        /* a perfect packing: bottom-left fill, with a quarter of the budget
         * (begun by offline_plan before the heuristics: its work so far is
         * the search's, and it goes on from where it stopped) */
        m->work = e->work;
        if (e->c != NULL &&
            corner_run(e->c, budget / 4, budget / 4, m->ovs, m->ov, m->sol, &m->work) ==
                EXACT_FOUND)
            offline_exact_keep(m, buf, n, best, off);
    }
    if (capacity && cap >= lo && cap < *best) {
        int r = exact_target(m, cap, m->work + budget - budget / 8);
        if (r == EXACT_FOUND)
            offline_exact_keep(m, buf, n, best, off);
        else if (r == EXACT_NONE)
            lo = cap + align;
    }
    if (capacity && *best <= capacity) {
        uint64_t below = m->work + budget / 16;
        if (below < limit)
            limit = below;
    }
    uint64_t quota = limit > m->work ? (limit - m->work) / 64 : 0;
    if (quota < 16 * (uint64_t)(n + m->S))
        quota = 16 * (uint64_t)(n + m->S);
    while (!m->oom && lo < *best && m->work < limit) {
        uint64_t end = m->work + quota < limit ? m->work + quota : limit;
        int r = exact_target(m, lo, end);
        if (r == EXACT_FOUND) {
            offline_exact_keep(m, buf, n, best, off);
            break; /* at the bound: optimal */
        }
        if (r == EXACT_NONE) {
            lo += align;
            continue;
        }
        if (m->oom)
            break;
        uint64_t t = (lo + (*best - lo) / 2) / align * align;
        if (t > lo && t < *best && m->work < limit) {
            end = m->work + quota < limit ? m->work + quota : limit;
            r = exact_target(m, t, end);
            if (r == EXACT_FOUND)
                offline_exact_keep(m, buf, n, best, off);
            else if (r == EXACT_NONE)
                lo = t + align;
        }
        quota = quota < UINT64_MAX / 2 ? 2 * quota : quota;
    }
    int oom = m->oom;
    *spent = m->work;
    *found = *best < before;
    *lb_out = lo < *best ? lo : *best;
    return oom ? GM_ENOMEM : 0;
}
