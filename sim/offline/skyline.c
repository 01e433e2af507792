/*
 * sim/offline/skyline.c — skyline passes.
 *
 * The other family of heuristics, for instances of OFFLINE_SKYLINE_MAX
 * buffers at most (a pass costs O(n²): each step scans the unplaced
 * buffers' floors, kept per buffer and raised by each placement beside it;
 * its work is counted as the pass that read the segments of every
 * candidate did, O(n × (n + T)) for T distinct times, so that the budgets
 * fall as they did).  The
 * time axis is cut into T elementary segments; the skyline is the top of
 * the placed buffers over each.  Repeatedly, every unplaced buffer's resting
 * place is the top of the skyline over its lifetime; the one with the
 * lowest resting place goes there (ties: the wider lifetime, then the
 * larger, then the lower id).  A buffer always rests above everything
 * placed beside it, so the plan is valid.  Randomized passes take the
 * second candidate instead of the first a quarter of the time (seeded
 * PRNG).
 */
#include "gmsim/error.h"

#include <stdlib.h>
#include <string.h>

#include "sim/offline/offline.h"

static int offline_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t offline_coord(const uint64_t *c, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sort c[0, k) and keep each value once; returns how many remain. */
size_t offline_unique(uint64_t *c, size_t k)
{
    qsort(c, k, sizeof *c, offline_u64_cmp);
    size_t d = 0;
    for (size_t i = 0; i < k; i++)
        if (d == 0 || c[i] != c[d - 1])
            c[d++] = c[i];
    return d;
}

/* The distinct starts and ends of buf[0, n) (a lifetime that never ends:
 * UINT64_MAX), sorted, in a new array of 2n; *u gets their count.  NULL
 * on host OOM. */
uint64_t *offline_times(const offline_buf_t *buf, size_t n, size_t *u)
{
    uint64_t *c = malloc(2 * (n ? n : 1) * sizeof *c);
    if (c == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        c[2 * i] = buf[i].start;
        c[2 * i + 1] = buf[i].end;
    }
    *u = offline_unique(c, 2 * n);
    return c;
}

/* Each buffer's elementary segments [cs, ce) between the distinct starts
 * and ends of buf[0, n) (a lifetime that never ends: to the last); *T gets
 * the segments' count.  0, or GM_ENOMEM. */
int offline_segments(const offline_buf_t *buf, size_t n, uint32_t *cs, uint32_t *ce,
                     size_t *T)
{
    size_t u;
    uint64_t *c = offline_times(buf, n, &u);
    if (c == NULL)
        return GM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        cs[i] = (uint32_t)offline_coord(c, u, buf[i].start);
        ce[i] = (uint32_t)offline_coord(c, u, buf[i].end);
    }
    *T = u ? u - 1 : 0;
    free(c);
    return 0;
}

int skyline_init(skyline_t *sk, const offline_buf_t *buf, size_t n)
{
    memset(sk, 0, sizeof *sk);
    sk->cs = malloc(n * sizeof *sk->cs);
    sk->ce = malloc(n * sizeof *sk->ce);
    sk->todo = malloc(n * sizeof *sk->todo);
    sk->fl = malloc(n * sizeof *sk->fl);
    if (!sk->cs || !sk->ce || !sk->todo || !sk->fl ||
        offline_segments(buf, n, sk->cs, sk->ce, &sk->T) != 0)
        return GM_ENOMEM;
    sk->n = n;
    return 0;
}

void skyline_release(skyline_t *sk)
{
    free(sk->cs);
    free(sk->ce);
    free(sk->fl);
    free(sk->todo);
}

/* Whether buffer x goes before y among candidates of one floor: wider,
 * then larger, then lower id. */
static inline int skyline_before(const offline_buf_t *buf, uint32_t x, uint32_t y)
{
    uint64_t wx = buf[x].end - buf[x].start, wy = buf[y].end - buf[y].start;
    if (wx != wy)
        return wx > wy;
    if (buf[x].size != buf[y].size)
        return buf[x].size > buf[y].size;
    return x < y;
}

/* One pass; off gets the offsets; returns the peak.  rng NULL: no
 * randomness. */
uint64_t skyline_pass(skyline_t *sk, const offline_buf_t *buf, uint64_t *off,
                      uint64_t *rng, uint64_t *work)
{
    size_t left = sk->n;
    uint64_t *fl = sk->fl;
    const uint32_t *cs = sk->cs, *ce = sk->ce;
    /* work: as the pass that read each candidate's segments counted it
     * (1 + its segments per candidate and step), so that every budget
     * decision is the same; the pass now keeps each candidate's floor
     * instead (raised by each placement beside it), O(n) a step */
    uint64_t widths = 0;
    for (size_t i = 0; i < sk->n; i++) {
        sk->todo[i] = (uint32_t)i;
        fl[i] = 0;
        widths += ce[i] - cs[i];
    }
    uint64_t peak = 0;
    while (left > 0) {
        size_t best = SIZE_MAX, second = SIZE_MAX;
        uint64_t bf = UINT64_MAX;
        for (size_t k = 0; k < left; k++) {
            uint32_t id = sk->todo[k];
            uint64_t f = fl[id];
            if (f < bf || (f == bf && skyline_before(buf, id, sk->todo[best]))) {
                second = f == bf ? best : SIZE_MAX;
                best = k;
                bf = f;
            } else if (f == bf && second == SIZE_MAX) {
                second = k;
            }
        }
        if (rng != NULL && second != SIZE_MAX && (offline_rand(rng) & 3) == 0)
            best = second;
        uint32_t id = sk->todo[best];
        sk->todo[best] = sk->todo[--left];
        off[id] = bf;
        /* the skyline over id's segments rises to its top (never lower
         * than it was: id rested on the highest of them), so each unplaced
         * buffer beside id rests at least there */
        uint64_t top = bf + buf[id].size;
        uint32_t a = cs[id], b = ce[id];
        for (size_t k = 0; k < left; k++) {
            uint32_t q = sk->todo[k];
            if (cs[q] < b && a < ce[q] && fl[q] < top)
                fl[q] = top;
        }
        *work += left + 1 + widths;
        widths -= b - a;
        if (top > peak)
            peak = top;
    }
    return peak;
}
