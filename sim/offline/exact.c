/*
 * sim/offline/exact.c — exact search.
 *
 * A branch-and-bound for a plan within a fixed arena size (the target), on
 * the structure MiniMalloc (Moffitt, ASPLOS 2023) describes; our own code.
 *
 *   Sections: the sweep over the lifetimes cuts time into elementary
 *   segments; a section is a segment whose set of live buffers is not
 *   contained in a neighbour's (a maximal clique of the interval graph).
 *   Every buffer spans a contiguous range of sections [sa, sb).
 *
 *   Canonical plans: every buffer rests on a buffer placed beside it (its
 *   offset is the top of one) or on 0, and the buffers are placed in order
 *   of offset, ties by rank in a static preorder.  Any plan can be pushed
 *   down and sorted into that form, so only those are searched: at each
 *   node the candidates are the unplaced buffers at their lowest offset
 *   (minoff: the highest top of their placed neighbours), in (minoff, rank)
 *   order, at or after the last placed (offset, rank).
 *
 *   Pruning: dominance (a candidate at or above the lowest top of any
 *   unplaced buffer leaves a gap that buffer would fill: not tried, nor any
 *   after it); the section bound (per section, its floor — the top of the
 *   placed buffers there, at least the lowest minoff of its unplaced ones
 *   and at least the last placed offset — plus the bytes of its unplaced
 *   buffers must fit in the target).
 *
 *   Decomposition: cuts[s] counts the unplaced buffers alive across the
 *   boundary of sections s and s + 1; when a placement brings one to zero,
 *   the unplaced buffers fall into independent parts, each solved on its own
 *   (its own preorder and canonical order), and a part without a plan fails
 *   the placement that split them, with no retrying of the others.
 *
 *   Hatless pruning: when a placement that no unplaced buffer overlaps
 *   fails, no other candidate of the node is tried: any plan from the node
 *   can place that buffer first at the same offset (nothing rests on it,
 *   and every later placement is at or above it).
 *
 *   Preorders (MiniMalloc's round robin of static orders): WAT, TAW, TWA
 *   with W the lifetime's width in time and A = W × size, T the busiest
 *   section's total, alternating with the same over sections (by total,
 *   width in sections, width in events; by width in sections, area in
 *   sections, total; by total, area in sections, width in sections): on
 *   the minimalloc family neither set alone solves every instance.  Each
 *   is tried under a budget that doubles each round.  The work counter
 *   (entries ordered, neighbours, sections and members visited) bounds
 *   it.
 *
 *   Every part of the state changed by a placement is undone on the way
 *   back (a log of minoff and floor changes; totals and cuts are restored
 *   by adding back), so a failed branch leaves nothing behind.
 */
#include "gmsim/error.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "sim/offline/offline.h"

#define EXACT_HEURS 6 /* static preorders, tried in turn */

#define EXACT_FLOOR UINT32_C(0x80000000)

/* Log a value about to change.  0, or -1 on host OOM (m->oom set: the
 * search gives up and its state is not used again). */
static int exact_log(exact_t *m, uint32_t what, uint64_t old)
{
    if (GM_VEC_RESERVE(m->undo, m->undo_cap, m->nundo + 1, 1024)) {
        m->oom = 1;
        return -1;
    }
    m->undo[m->nundo++] = (exact_undo_t){what, old};
    return 0;
}

void exact_release(exact_t *m)
{
    free(m->sa);
    free(m->sb);
    free(m->ovs);
    free(m->ov);
    free(m->mems);
    free(m->mem);
    free(m->total0);
    free(m->cuts0);
    free(m->minoff);
    free(m->off);
    free(m->sol);
    free(m->floor);
    free(m->total);
    free(m->cuts);
    free(m->seen);
    free(m->aff);
    free(m->undo);
    free(m->ent);
    free(m->u32);
    free(m->partof);
    free(m->key);
    free(m->tmp);
    free(m->tmp2);
}

/* Sections, overlaps and cuts of buf[0, n).  0, or GM_ENOMEM with nothing
 * left allocated.  exact_release frees the rest. */
int exact_init(exact_t *m, const offline_buf_t *buf, size_t n)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    m->buf = buf;
    /* elementary segments between the distinct times */
    size_t u;
    uint64_t *c = offline_times(buf, n, &u);
    uint32_t *segsec = NULL;
    unsigned char *sflag = NULL, *eflag = NULL;
    m->sa = malloc(n * sizeof *m->sa);
    m->sb = malloc(n * sizeof *m->sb);
    if (!c || !m->sa || !m->sb)
        goto oom;
    /* boundary j (time c[j]) has starts and/or ends; segment j is
     * [c[j], c[j + 1]); a segment is a section when its left boundary
     * has a start and its right one an end */
    sflag = calloc(u, 1);
    eflag = calloc(u, 1);
    segsec = malloc(u * sizeof *segsec);
    if (!sflag || !eflag || !segsec)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        sflag[offline_coord(c, u, buf[i].start)] = 1;
        eflag[offline_coord(c, u, buf[i].end)] = 1;
    }
    size_t S = 0;
    for (size_t j = 0; j + 1 < u; j++) {
        segsec[j] = (uint32_t)S; /* the first section at or after segment j */
        if (sflag[j] && eflag[j + 1])
            S++;
    }
    for (size_t i = 0; i < n; i++) {
        size_t cs = offline_coord(c, u, buf[i].start), ce = offline_coord(c, u, buf[i].end);
        /* sections among segments [cs, ce): from the first at or after cs
         * to the first at or after ce (exclusive) */
        /* never empty: walking back from the segment that ends at the
         * buffer's end, the first whose left boundary has a start is one */
        m->sa[i] = segsec[cs];
        m->sb[i] = ce < u - 1 ? segsec[ce] : (uint32_t)S;
    }
    m->S = S;
    free(c);
    free(sflag);
    free(eflag);
    free(segsec);
    c = NULL;
    sflag = eflag = NULL;
    segsec = NULL;
    /* members per section, totals, cuts */
    m->mems = calloc(S + 1, sizeof *m->mems);
    m->total0 = calloc(S ? S : 1, sizeof *m->total0);
    m->cuts0 = calloc(S ? S : 1, sizeof *m->cuts0);
    if (!m->mems || !m->total0 || !m->cuts0)
        goto oom;
    size_t nm = 0;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t s = m->sa[i]; s < m->sb[i]; s++) {
            m->mems[s + 1]++;
            m->total0[s] += buf[i].size;
        }
        for (uint32_t s = m->sa[i]; s + 1 < m->sb[i]; s++)
            m->cuts0[s]++;
        nm += m->sb[i] - m->sa[i];
    }
    for (size_t s = 0; s < S; s++)
        m->mems[s + 1] += m->mems[s];
    m->mem = malloc((nm ? nm : 1) * sizeof *m->mem);
    uint32_t *fill = malloc((S ? S : 1) * sizeof *fill);
    if (!m->mem || !fill) {
        free(fill);
        goto oom;
    }
    memcpy(fill, m->mems, S * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = m->sa[i]; s < m->sb[i]; s++)
            m->mem[fill[s]++] = (uint32_t)i;
    free(fill);
    /* overlaps: two buffers overlap iff their section ranges do */
    m->ovs = calloc(n + 1, sizeof *m->ovs);
    if (!m->ovs)
        goto oom;
    size_t cap = 1024, no = 0;
    m->ov = malloc(cap * sizeof *m->ov);
    if (!m->ov)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < n; k++) {
            if (k == i || m->sa[k] >= m->sb[i] || m->sa[i] >= m->sb[k])
                continue;
            if (GM_VEC_RESERVE(m->ov, cap, no + 1, 1024))
                goto oom;
            m->ov[no++] = (uint32_t)k;
        }
        m->ovs[i + 1] = (uint32_t)no;
    }
    m->minoff = malloc(n * sizeof *m->minoff);
    m->off = malloc(n * sizeof *m->off);
    m->sol = malloc(n * sizeof *m->sol);
    m->floor = malloc((S ? S : 1) * sizeof *m->floor);
    m->total = malloc((S ? S : 1) * sizeof *m->total);
    m->cuts = malloc((S ? S : 1) * sizeof *m->cuts);
    m->seen = calloc(S ? S : 1, sizeof *m->seen);
    m->aff = malloc((S ? S : 1) * sizeof *m->aff);
    m->ent_cap = 4 * n + 64;
    m->ent = malloc(m->ent_cap * sizeof *m->ent);
    m->u32_cap = 4 * n + 64;
    m->u32 = malloc(m->u32_cap * sizeof *m->u32);
    m->partof = malloc((S ? S : 1) * sizeof *m->partof);
    m->key = malloc(3 * n * sizeof *m->key);
    m->tmp = malloc(n * sizeof *m->tmp);
    m->tmp2 = malloc(n * sizeof *m->tmp2);
    if (!m->minoff || !m->off || !m->sol || !m->floor || !m->total || !m->cuts || !m->seen ||
        !m->aff || !m->ent || !m->u32 || !m->partof || !m->key || !m->tmp || !m->tmp2)
        goto oom;
    return 0;
oom:
    free(c);
    free(sflag);
    free(eflag);
    free(segsec);
    exact_release(m);
    memset(m, 0, sizeof *m);
    return GM_ENOMEM;
}

static int exact_part(exact_t *m, const exact_ent_t *from, size_t k, uint32_t slo, uint32_t shi);

/* A stack (the ordering stack m->ent, the ids stack m->u32) could not grow:
 * m->oom set, and the search gives up.  The stacks may move when they grow:
 * callers keep indices across calls that push. */
static int exact_nomem(exact_t *m)
{
    m->oom = 1;
    return EXACT_ABORT;
}

static inline int exact_before(const exact_ent_t *x, const exact_ent_t *y)
{
    return x->at < y->at || (x->at == y->at && x->rank < y->rank);
}

/*
 * One node: place one of the unplaced buffers among the k entries at
 * ent[ord_at] (a part spanning sections [slo, shi)), the last placement
 * having been at (min_at, min_rank), and recurse.  EXACT_FOUND (the part's
 * offsets in m->sol), EXACT_NONE (no plan under this node) or EXACT_ABORT
 * (the work limit, or host OOM with m->oom set).  The state is as on entry
 * when it returns.
 */
/* Aligned to a cache line: the search spends most of its time in this
 * function's loops, and where they fell in the binary after unrelated
 * changes elsewhere moved the shared instances' times by up to a tenth. */
__attribute__((aligned(64))) static int exact_node(exact_t *m, size_t ord_at, size_t k,
                                                   uint32_t slo, uint32_t shi, uint64_t min_at,
                                                   uint32_t min_rank)
{
    if (m->work >= m->limit)
        return EXACT_ABORT;
    if (GM_VEC_RESERVE(m->ent, m->ent_cap, m->sp + k, 64))
        return exact_nomem(m);
    size_t base = m->sp;
    exact_ent_t *cur = m->ent + base;
    const exact_ent_t *ord = m->ent + ord_at;
    size_t nc = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t id = ord[i].id;
        if (m->off[id] != EXACT_UNPLACED)
            continue;
        exact_ent_t e = {m->minoff[id], ord[i].rank, id};
        size_t j = nc++;
        while (j > 0 && exact_before(&e, &cur[j - 1])) {
            cur[j] = cur[j - 1];
            j--;
        }
        cur[j] = e;
    }
    m->work += 1 + k;
    if (nc == 0)
        return EXACT_FOUND;
    m->sp += nc;
    uint64_t min_top = UINT64_MAX;
    for (size_t i = 0; i < nc; i++) {
        uint64_t t = cur[i].at + m->buf[cur[i].id].size;
        if (t < min_top)
            min_top = t;
    }
    int rc = EXACT_NONE;
    for (size_t i = 0; i < nc && rc == EXACT_NONE; i++) {
        cur = m->ent + base; /* a deeper node may have moved the stack */
        const exact_ent_t e = cur[i];
        if (e.at >= min_top)
            break; /* dominated: an unplaced buffer fits under it */
        if (e.at < min_at || (e.at == min_at && e.rank < min_rank))
            continue; /* not canonical */
        uint32_t id = e.id;
        uint64_t size = m->buf[id].size, top = e.at + size;
        if (top > m->target)
            continue;
        size_t mark = m->nundo;
        m->off[id] = e.at;
        m->sol[id] = e.at;
        /* neighbours rest at least on its top */
        size_t naff = 0;
        uint32_t ep = ++m->epoch;
        int hatless = 1; /* no unplaced neighbour: nothing rests on it */
        for (uint32_t q = m->ovs[id]; q < m->ovs[id + 1]; q++) {
            uint32_t o = m->ov[q];
            if (m->off[o] != EXACT_UNPLACED)
                continue;
            hatless = 0;
            if (m->minoff[o] >= top)
                continue;
            if (exact_log(m, o, m->minoff[o]))
                break;
            m->minoff[o] = top;
            for (uint32_t s = m->sa[o]; s < m->sb[o]; s++)
                if (m->seen[s] != ep) {
                    m->seen[s] = ep;
                    m->aff[naff++] = s;
                }
        }
        m->work += m->ovs[id + 1] - m->ovs[id];
        for (uint32_t s = m->sa[id]; s < m->sb[id]; s++) {
            if (exact_log(m, EXACT_FLOOR | s, m->floor[s]))
                break;
            m->floor[s] = top;
            m->total[s] -= size;
        }
        /* a section's floor is at least its unplaced buffers' lowest minoff */
        for (size_t a = 0; a < naff; a++) {
            uint32_t s = m->aff[a];
            uint64_t lo = UINT64_MAX;
            for (uint32_t q = m->mems[s]; q < m->mems[s + 1]; q++) {
                uint32_t b = m->mem[q];
                if (m->off[b] == EXACT_UNPLACED && m->minoff[b] < lo)
                    lo = m->minoff[b];
            }
            m->work += m->mems[s + 1] - m->mems[s];
            if (lo != UINT64_MAX && lo > m->floor[s]) {
                if (exact_log(m, EXACT_FLOOR | s, m->floor[s]))
                    break;
                m->floor[s] = lo;
            }
        }
        if (m->oom) {
            rc = EXACT_ABORT;
        } else {
            int fits = 1;
            for (uint32_t s = slo; s < shi; s++) {
                uint64_t f = m->floor[s] > e.at ? m->floor[s] : e.at;
                if (f + m->total[s] > m->target) {
                    fits = 0;
                    break;
                }
            }
            m->work += shi - slo;
            if (fits) {
                int split = 0;
                for (uint32_t s = m->sa[id]; s + 1 < m->sb[id]; s++)
                    if (--m->cuts[s] == 0 && s >= slo && s + 1 < shi)
                        split = 1;
                rc = split ? exact_part(m, cur, nc, slo, shi)
                           : exact_node(m, base, nc, slo, shi, e.at, e.rank);
                for (uint32_t s = m->sa[id]; s + 1 < m->sb[id]; s++)
                    m->cuts[s]++;
            }
        }
        for (uint32_t s = m->sa[id]; s < m->sb[id]; s++)
            m->total[s] += size;
        while (m->nundo > mark) {
            const exact_undo_t *u = &m->undo[--m->nundo];
            if (u->what & EXACT_FLOOR)
                m->floor[u->what & ~EXACT_FLOOR] = u->old;
            else
                m->minoff[u->what] = u->old;
        }
        m->off[id] = EXACT_UNPLACED;
        if (hatless && rc == EXACT_NONE)
            break; /* no other first placement can do better (see above) */
    }
    m->sp -= nc;
    return rc;
}

/* Whether buffer x goes before y in the preorder: larger keys first, then
 * the lower id. */
static inline int exact_pre_before(const double *key, uint32_t x, uint32_t y)
{
    for (int k = 0; k < 3; k++)
        if (key[3 * x + k] != key[3 * y + k])
            return key[3 * x + k] > key[3 * y + k];
    return x < y;
}

static inline int exact_id_before(const double *key, const uint32_t *x, const uint32_t *y)
{
    return exact_pre_before(key, *x, *y);
}

OFFLINE_MERGE_SORT_DEFINE(static, exact_pre_merge, uint32_t, const double *, exact_id_before)

/* Stable sort of ids[0, k) by the preorder keys. */
static void exact_pre_sort(exact_t *m, uint32_t *ids, size_t k)
{
    exact_pre_merge(ids, m->tmp2, k, m->key);
    m->work += k;
}

/* Solve a part: its preorder, then its search. */
static int exact_solve(exact_t *m, const uint32_t *ids, size_t k, uint32_t slo, uint32_t shi)
{
    /* keys: 0 width (its lifetime's length in time), 1 area (that width ×
     * size), 2 the busiest section's total among the buffer's sections,
     * 3 width in sections, 4 width in events, 5 area in sections (3 × size).
     * MiniMalloc's orders (WAT, TAW, TWA: W and A in time) alternate with
     * the same ones over sections: neither family solves every instance. */
    static const int order[EXACT_HEURS][3] = {{0, 1, 2}, {2, 3, 4}, {2, 1, 0},
                                              {3, 5, 2}, {2, 0, 1}, {2, 5, 3}};
    const int *o = order[m->heur];
    uint32_t *tmp = m->tmp;
    for (size_t i = 0; i < k; i++) {
        uint32_t id = ids[i];
        const offline_buf_t *b = &m->buf[id];
        uint64_t tot = 0;
        for (uint32_t s = m->sa[id]; s < m->sb[id]; s++)
            if (m->total[s] > tot)
                tot = m->total[s];
        double w = (double)(b->t1 - b->t0), ws = (double)(m->sb[id] - m->sa[id]);
        double v[6] = {w,  w * (double)b->size,          (double)tot,
                       ws, (double)(b->end - b->start), ws * (double)b->size};
        for (int q = 0; q < 3; q++)
            m->key[3 * id + q] = v[o[q]];
        tmp[i] = id;
    }
    m->work += 4 * k;
    exact_pre_sort(m, tmp, k);
    if (GM_VEC_RESERVE(m->ent, m->ent_cap, m->sp + k, 64))
        return exact_nomem(m);
    size_t at = m->sp;
    for (size_t i = 0; i < k; i++)
        m->ent[at + i] = (exact_ent_t){0, (uint32_t)i, tmp[i]};
    m->sp += k;
    int rc = exact_node(m, at, k, slo, shi, 0, 0);
    m->sp -= k;
    return rc;
}

/* The unplaced buffers of from[0, k) within sections [slo, shi), split at
 * the boundaries no unplaced buffer crosses; each part solved in turn. */
static int exact_part(exact_t *m, const exact_ent_t *from, size_t k, uint32_t slo, uint32_t shi)
{
    /* the parts: partof[s] for the sections, then the ids bucketed by part
     * (counting sort) with each part's first index and first section */
    uint32_t np = 0;
    for (uint32_t s = slo; s < shi; s++) {
        m->partof[s] = np;
        if (s + 1 == shi || m->cuts[s] == 0)
            np++;
    }
    /* sorted (k), first (np + 1), psec (np + 1), fill (np) */
    size_t need = k + 3 * (size_t)np + 2;
    if (GM_VEC_RESERVE(m->u32, m->u32_cap, m->usp + need, 64))
        return exact_nomem(m);
    size_t base = m->usp;
    uint32_t *u = m->u32 + base, *sorted = u, *first = u + k, *psec = first + np + 1;
    memset(first, 0, (np + 1) * sizeof *first);
    size_t cnt = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t id = from[i].id;
        if (m->off[id] == EXACT_UNPLACED) {
            first[m->partof[m->sa[id]] + 1]++;
            cnt++;
        }
    }
    for (uint32_t p = 0; p < np; p++)
        first[p + 1] += first[p];
    uint32_t *fill = psec + np + 1; /* np entries */
    memcpy(fill, first, np * sizeof *fill);
    for (size_t i = 0; i < k; i++) {
        uint32_t id = from[i].id;
        if (m->off[id] == EXACT_UNPLACED)
            sorted[fill[m->partof[m->sa[id]]]++] = id;
    }
    for (uint32_t s = slo, p = 0; s < shi; s++)
        if (s == slo || m->partof[s] != m->partof[s - 1])
            psec[p++] = s;
    psec[np] = shi;
    m->usp += need;
    m->work += k + (shi - slo);
    (void)cnt;
    int rc = EXACT_FOUND;
    for (uint32_t p = 0; p < np && rc == EXACT_FOUND; p++) {
        u = m->u32 + base; /* a deeper part may have moved the stack */
        first = u + k;
        psec = first + np + 1;
        if (first[p + 1] > first[p])
            rc = exact_solve(m, u + first[p], first[p + 1] - first[p], psec[p], psec[p + 1]);
    }
    m->usp = base;
    return rc;
}

/* Search for a plan within target, at most `limit` work (a round robin of
 * the preorders under a doubling node budget).  EXACT_FOUND (m->sol holds
 * it), EXACT_NONE (proven: none), EXACT_ABORT (the budget ran out).
 *
 * A restart is one preorder under one round's quota, from scratch: whether
 * it ends for budget, and the work it spends, depend on nothing else.  A
 * call with m->record set notes the restarts that did (each with its whole
 * quota) and their work; the first later call at the same target whose
 * limit leaves them their whole quotas skips them and counts their work
 * as spent (m->work, and m->charged, which the caller takes off the
 * recording call's work): the search after the quick try at the bound
 * does not run again the restarts the try ran, and goes on as it would
 * have without the try (the same restarts, at the same work). */
int exact_target(exact_t *m, uint64_t target, uint64_t limit)
{
    size_t n = m->n, S = m->S;
    m->target = target;
    unsigned skip_round = 0;
    int skip_heur = 0;
    if (m->record)
        m->known = 0;
    else if (m->known != 0 && m->known == target && m->work + m->known_need <= limit) {
        skip_round = m->known_round;
        skip_heur = m->known_heur;
        m->work += m->known_work;
        m->charged += m->known_work;
        m->known = 0;
    }
    uint64_t start = m->work;
    unsigned round = 0;
    int doubled = 1; /* the quota is still the round's: 16 (n + S) 2^round */
    for (uint64_t quota = 16 * (uint64_t)(n + S); m->work < limit; round++) {
        for (int h = 0; h < EXACT_HEURS && m->work < limit; h++) {
            if (doubled && (round < skip_round || (round == skip_round && h < skip_heur)))
                continue; /* ran by the call before, ended for budget */
            m->heur = h;
            uint64_t w0 = m->work;
            m->limit = m->work + quota < limit ? m->work + quota : limit;
            for (size_t i = 0; i < n; i++) {
                m->minoff[i] = 0;
                m->off[i] = EXACT_UNPLACED;
            }
            memset(m->floor, 0, S * sizeof *m->floor);
            memcpy(m->total, m->total0, S * sizeof *m->total);
            memcpy(m->cuts, m->cuts0, S * sizeof *m->cuts);
            m->sp = 0;
            m->usp = 0;
            m->nundo = 0;
            exact_ent_t *all = m->ent;
            for (size_t i = 0; i < n; i++)
                all[i] = (exact_ent_t){0, 0, (uint32_t)i};
            m->sp = n;
            int rc = exact_part(m, all, n, 0, (uint32_t)S);
            m->sp = 0;
            if (m->oom)
                return EXACT_ABORT;
            if (rc != EXACT_ABORT)
                return rc;
            if (m->record && doubled && w0 + quota <= limit) {
                m->known = target;
                m->known_round = round;
                m->known_heur = h + 1;
                m->known_work = m->work - start;
                m->known_need = w0 + quota - start;
            }
        }
        doubled = quota < limit / 2;
        quota = doubled ? 2 * quota : limit;
    }
    return EXACT_ABORT;
}

/* Keep m's plan in off when it beats *best. */
void offline_exact_keep(const exact_t *m, const offline_buf_t *buf, size_t n, uint64_t *best,
                        uint64_t *off)
{
    uint64_t peak = 0;
    for (size_t i = 0; i < n; i++)
        if (m->sol[i] + buf[i].size > peak)
            peak = m->sol[i] + buf[i].size;
    if (peak < *best) {
        *best = peak;
        memcpy(off, m->sol, n * sizeof *off);
    }
}
