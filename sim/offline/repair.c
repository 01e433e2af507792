/*
 * sim/offline/repair.c — window repair.
 *
 * For traces beyond the exact search (real ones: thousands of buffers, the
 * heuristics' plan a few alignment units above the bound), an exact
 * search over a window of time around a busiest instant, the rest placed
 * around it; a round per window.
 *
 *   The centre: among the runs of elementary segments where the plan rises
 *   above the target (the bound), the busiest run not yet given up; in it,
 *   the midpoint of its first and last busiest segments (a tight stretch's
 *   middle: the event order cuts one instant into segments a free apart).
 *   The window: a run of segments [a, b) around it.  The instance: each
 *   buffer alive in the window, its lifetime clipped to it.  Two intervals
 *   that meet each other and each meet the window meet inside it, so the
 *   instance keeps every conflict among its buffers, and a plan of it,
 *   fixed, is consistent.
 *
 *   A buffer alive over the whole window takes no part: in any plan the
 *   strip it fills across the window can be swapped down with everything
 *   beneath it, so those buffers stack at the bottom (F bytes) and the
 *   rest must fit in target − F.  The instance is a relaxation (fewer
 *   buffers, shorter lifetimes: every plan of the trace within the target
 *   gives one of it), so a search that runs to its end without a plan
 *   proves the target infeasible and the bound rises by one alignment
 *   unit.  One that finds a plan fixes it: the whole buffers stacked in the
 *   order of their offsets in the best plan so far, the clipped ones at
 *   F + their offsets in the instance's plan; then the buffers of the
 *   windows of earlier rounds, then every other buffer, each in the order
 *   of its offset in the best plan, at that offset where nothing placed
 *   conflicts (no sort of its conflicts), else by best fit: the best plan
 *   kept around the window wherever it can be.  The new plan replaces the best when
 *   its peak is lower, or equal and above the target over fewer segments.
 *
 *   Windows, in turn while no plan improves: the tight stretch (the run
 *   around the centre of segments at least as busy, or of no length in
 *   time: in a perfect packing, all of it), then the widest symmetric
 *   windows of at most REPAIR_PARTS[w] clipped buffers (a binary search:
 *   their count grows with the width).  A centre none of them improves is
 *   given up.  The search's work is counted in the budget.
 */
#include "gmsim/error.h"

#include <stdlib.h>
#include <string.h>

#include "sim/offline/offline.h"

static const size_t repair_parts[] = {64, 256, OFFLINE_EXACT_MAX};
#define REPAIR_ROUNDS 16

typedef struct repair {
    size_t n, S;
    uint32_t *cs, *ce;     /* each buffer's segments [cs, ce) */
    uint64_t *load;        /* per segment: its bytes */
    uint64_t *tm;          /* per segment boundary: its time (the t0 or t1 of a buffer there) */
    int64_t *over;         /* per segment (difference array): buffers of the plan above the target */
    unsigned char *tried;  /* per segment: a centre given up */
    unsigned char *pinned; /* per buffer: in the window of a round that improved */
    offline_buf_t *sub;    /* the instance's clipped buffers */
    uint32_t *subid;       /* their ids */
    uint64_t *at;          /* the composed plan's wanted offsets, by id */
    offline_key_t *key;    /* 2n: the composed order's keys */
    uint32_t *order;
    uint32_t given[REPAIR_ROUNDS][2]; /* tight stretches given up for budget */
    size_t ngiven;
} repair_t;

static void repair_release(repair_t *r)
{
    free(r->cs);
    free(r->ce);
    free(r->load);
    free(r->tm);
    free(r->over);
    free(r->tried);
    free(r->pinned);
    free(r->sub);
    free(r->subid);
    free(r->at);
    free(r->key);
    free(r->order);
}

static int repair_init(repair_t *r, const offline_buf_t *buf, size_t n)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->cs = malloc(n * sizeof *r->cs);
    r->ce = malloc(n * sizeof *r->ce);
    if (!r->cs || !r->ce || offline_segments(buf, n, r->cs, r->ce, &r->S) != 0) {
        repair_release(r);
        return GM_ENOMEM;
    }
    size_t u = r->S + 1; /* segment boundaries */
    r->load = calloc(u, sizeof *r->load);
    r->tm = calloc(u, sizeof *r->tm);
    r->over = malloc(u * sizeof *r->over);
    r->tried = calloc(u, 1);
    r->pinned = calloc(n, 1);
    r->sub = malloc(OFFLINE_EXACT_MAX * sizeof *r->sub);
    r->subid = malloc(OFFLINE_EXACT_MAX * sizeof *r->subid);
    r->at = malloc(n * sizeof *r->at);
    r->key = malloc(2 * n * sizeof *r->key);
    r->order = malloc(n * sizeof *r->order);
    if (!r->load || !r->tm || !r->over || !r->tried || !r->pinned || !r->sub || !r->subid ||
        !r->at || !r->key || !r->order) {
        repair_release(r);
        return GM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        r->load[r->cs[i]] += buf[i].size;
        r->load[r->ce[i]] -= buf[i].size; /* wraps back in the sum */
        r->tm[r->cs[i]] = buf[i].t0;
        r->tm[r->ce[i]] = buf[i].t1;
    }
    for (size_t s = 1; s <= r->S; s++)
        r->load[s] += r->load[s - 1];
    return 0;
}

/* The segments where a buffer of the plan off rises above target: their
 * count; *centre gets the centre of the busiest run of them not given up
 * (S: none). */
static size_t repair_over(repair_t *r, const offline_buf_t *buf, const uint64_t *off,
                          uint64_t target, size_t *centre)
{
    memset(r->over, 0, (r->S + 1) * sizeof *r->over);
    for (size_t i = 0; i < r->n; i++)
        if (off[i] + buf[i].size > target) {
            r->over[r->cs[i]]++;
            r->over[r->ce[i]]--;
        }
    /* top, end: the run's first and last busiest segments so far (top S:
     * no run) */
    size_t count = 0, top = r->S, end = 0;
    int64_t live = 0;
    *centre = r->S;
    for (size_t s = 0; s <= r->S; s++) {
        live += r->over[s];
        if (s < r->S && live > 0) {
            count++;
            if (top == r->S || r->load[s] > r->load[top])
                top = end = s;
            else if (r->load[s] == r->load[top])
                end = s;
        } else if (top != r->S) {
            size_t c = top + (end - top) / 2;
            if (!r->tried[c] && (*centre == r->S || r->load[c] > r->load[*centre]))
                *centre = c;
            top = r->S;
        }
    }
    return count;
}

/* The tight stretch around c: segments at least as busy as it, or of no
 * length in time (between a free and an alloc of one instant). */
static void repair_tight(const repair_t *r, size_t c, uint32_t *a, uint32_t *b)
{
    size_t x = c, y = c + 1;
    while (x > 0 && (r->load[x - 1] >= r->load[c] || r->tm[x - 1] == r->tm[x]))
        x--;
    while (y < r->S && (r->load[y] >= r->load[c] || r->tm[y] == r->tm[y + 1]))
        y++;
    *a = (uint32_t)x;
    *b = (uint32_t)y;
}

/* The instance of window [a, b) (at most max clipped buffers: more gives
 * max + 1 and stops); *full gets the bytes alive across all of it. */
static size_t repair_window(repair_t *r, const offline_buf_t *buf, uint32_t a, uint32_t b,
                            size_t max, uint64_t *full)
{
    size_t k = 0;
    *full = 0;
    for (size_t i = 0; i < r->n; i++) {
        uint32_t x = r->cs[i] > a ? r->cs[i] : a, y = r->ce[i] < b ? r->ce[i] : b;
        if (x >= y)
            continue;
        if (x == a && y == b) {
            *full += buf[i].size;
            continue;
        }
        if (k == max)
            return max + 1;
        r->subid[k] = (uint32_t)i;
        r->sub[k++] = (offline_buf_t){buf[i].size, x - a, y - a, r->tm[x], r->tm[y]};
    }
    return k;
}

/* The plan of window [a, b)'s k clipped buffers in m.sol (over F = full
 * bytes), fixed, and every other buffer around it, in pl->off: its
 * peak. */
static uint64_t repair_compose(repair_t *r, plan_t *pl, const exact_t *m, size_t k, uint32_t a,
                               uint32_t b, uint64_t full, const uint64_t *off)
{
    const offline_buf_t *buf = pl->buf;
    size_t n = r->n;
    /* groups: 0 whole in the window, 1 clipped, 2 pinned, 3 the rest */
    for (size_t i = 0; i < n; i++) {
        uint64_t g = r->cs[i] <= a && r->ce[i] >= b ? 0 : r->pinned[i] ? 2 : 3;
        r->key[i] = (offline_key_t){g, off[i], 0, (uint32_t)i};
        r->at[i] = g == 0 ? UINT64_MAX : off[i];
    }
    for (size_t j = 0; j < k; j++) {
        r->at[r->subid[j]] = full + m->sol[j];
        r->key[r->subid[j]].a = 1;
    }
    offline_sort_keys(r->key, r->key + n, n);
    uint64_t stack = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = r->key[i].id;
        r->order[i] = id;
        if (r->key[i].a == 0) {
            r->at[id] = stack;
            stack += buf[id].size;
        }
    }
    size_t critical;
    return offline_pass(pl, r->order, r->at, 0, &critical);
}

/* Repair pl's plan *best (offsets in off) toward *lb within budget work
 * (counted into pl->work); a plan that improves replaces it, a target
 * proved infeasible raises *lb.  0, or GM_ENOMEM. */
int offline_repair(plan_t *pl, uint64_t align, uint64_t budget, uint64_t *best,
                   uint64_t *off, uint64_t *lb)
{
    const offline_buf_t *buf = pl->buf;
    size_t n = pl->n, c;
    repair_t r;
    if (repair_init(&r, buf, n) != 0)
        return GM_ENOMEM;
    int rc = 0;
    uint64_t stop = pl->work + budget;
    size_t over = repair_over(&r, buf, off, *lb, &c);
    for (int round = 0; round < REPAIR_ROUNDS && *best > *lb && pl->work < stop && !rc; round++) {
        if (c == r.S)
            break;
        int moved = 0;
        /* w 0: the tight stretch; then symmetric windows */
        for (size_t w = 0; w <= sizeof repair_parts / sizeof repair_parts[0] && !moved && !rc &&
                           pl->work < stop;
             w++) {
            size_t max = w ? repair_parts[w - 1] : OFFLINE_EXACT_MAX;
            uint64_t full;
            uint32_t a, b;
            if (w == 0) {
                repair_tight(&r, c, &a, &b);
                int seen = 0; /* a stretch given up before: not again */
                for (size_t q = 0; q < r.ngiven && !seen; q++)
                    seen = r.given[q][0] == a && r.given[q][1] == b;
                if (seen)
                    continue;
            } else {
                size_t lo = 0, hi = r.S;
                while (lo < hi) {
                    size_t h = lo + (hi - lo + 1) / 2;
                    pl->work += n;
                    a = c > h ? (uint32_t)(c - h) : 0;
                    b = c + 1 + h < r.S ? (uint32_t)(c + 1 + h) : (uint32_t)r.S;
                    if (repair_window(&r, buf, a, b, max, &full) <= max)
                        lo = h;
                    else
                        hi = h - 1;
                }
                a = c > lo ? (uint32_t)(c - lo) : 0;
                b = c + 1 + lo < r.S ? (uint32_t)(c + 1 + lo) : (uint32_t)r.S;
            }
            pl->work += n;
            size_t k = repair_window(&r, buf, a, b, max, &full);
            if (k == 0 || k > max || full > *lb || pl->work >= stop)
                continue; /* none clipped (nothing to search), too many, no budget */
            exact_t m;
            if (exact_init(&m, r.sub, k) != 0) {
                rc = GM_ENOMEM;
                break;
            }
            /* half of what is left (a quarter for the tight stretch): for
             * the bottom-left fill when the window is a perfect packing a
             * quarter of it (three for the tight stretch, where the
             * canonical search thrashes), the rest for the canonical
             * search */
            uint64_t slice = (stop - pl->work) / (w ? 2 : 4) + 1;
            int crc = 0;
            int found = corner_search(r.sub, k, m.ovs, m.ov, *lb - full,
                                      w ? slice / 4 : slice / 4 * 3, m.sol, &m.work, &crc);
            if (crc)
                m.oom = 1;
            else if (found != EXACT_FOUND)
                found = exact_target(&m, *lb - full, slice);
            pl->work += m.work;
            if (w == 0 && found == EXACT_ABORT && r.ngiven < REPAIR_ROUNDS) {
                r.given[r.ngiven][0] = a;
                r.given[r.ngiven++][1] = b;
            }
            if (m.oom) {
                rc = GM_ENOMEM;
            } else if (found == EXACT_NONE) {
                *lb += align; /* proved: no plan fits the target */
                moved = 1;
            } else if (found == EXACT_FOUND) {
                uint64_t peak = repair_compose(&r, pl, &m, k, a, b, full, off);
                size_t next, o = pl->oom ? 0 : repair_over(&r, buf, pl->off, *lb, &next);
                if (pl->oom) {
                    rc = GM_ENOMEM;
                } else if (peak < *best || (peak == *best && o < over)) {
                    *best = peak;
                    memcpy(off, pl->off, n * sizeof *off);
                    for (size_t i = 0; i < n; i++)
                        r.pinned[i] |= r.cs[i] < b && a < r.ce[i];
                    moved = 1;
                }
            }
            exact_release(&m);
        }
        if (!moved)
            r.tried[c] = 1;
        over = repair_over(&r, buf, off, *lb, &c);
    }
    repair_release(&r);
    return rc;
}
