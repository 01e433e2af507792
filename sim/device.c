/*
 * sim/device.c — the simulated device: capacity, granularity, cost model,
 * reserved-bytes accounting, and the size parser/formatter.
 *
 * Addresses come from a bump pointer that starts at DEVICE_BASE (1 TiB, so
 * that no block ever sits at address 0 and every alignment up to 1 TiB
 * holds from the start) and only moves up, or from a hint (gm_device_hint:
 * a recorded segment's address), taken when the range lies outside the
 * bump region [DEVICE_BASE, next_addr) and overlaps no live hinted range.
 * The live hinted ranges are kept sorted in `placed` (a range leaves it at
 * the gm_device_free of its whole extent); the bump pointer steps over
 * them.  So two live ranges never overlap, and two live blocks that do are
 * always a policy bug.  Alignment padding is address space only; it is
 * never counted as reserved.  A device never hinted keeps `placed` empty
 * and pays one test per call.
 *
 * Invariants (after every call):
 *   reserved ≤ capacity (when capacity ≠ 0), peak_reserved ≥ reserved,
 *   next_addr is a multiple of the granularity and ≥ the end of every
 *   range not in `placed`; `placed` ascends and its ranges are disjoint,
 *   each outside [DEVICE_BASE, next_addr) when it was placed.
 *
 * The default cost model is NOT calibrated: the figures are plausible orders
 * of magnitude for cudaMalloc/cudaFree on a current datacenter GPU (a call
 * costs about 10 µs, mapping costs a fraction of a millisecond per GiB; a
 * free about 5 µs plus unmapping).  They are placeholders until a measured
 * profile (`gmsim calibrate` on a GPU, `--device-profile FILE`) replaces
 * them; profiles/default.json is this same model written as a profile.
 */
#include "gmsim/device.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#define DEVICE_BASE (UINT64_C(1) << 40)
#define DEVICE_DEFAULT_GRANULARITY 512
#define DEVICE_GIB 1073741824.0

/* Uncalibrated defaults (see the file header). */
#define DEVICE_MALLOC_BASE_NS 10000.0    /* 10 µs per cudaMalloc */
#define DEVICE_MALLOC_PER_GIB_NS 250000.0 /* + 250 µs per GiB mapped */
#define DEVICE_FREE_BASE_NS 5000.0       /* 5 µs per cudaFree */
#define DEVICE_FREE_PER_GIB_NS 100000.0  /* + 100 µs per GiB unmapped */

/* The alignment a placement gets: at least the granularity, a power of
 * two (rounded up); 0 when that does not fit in 64 bits. */
static uint64_t device_align(const gm_device_t *dev, uint64_t align)
{
    if (align < dev->cfg.granularity)
        return dev->cfg.granularity;
    return gm__is_pow2(align) ? align : gm__pow2_ceil(align);
}

void gm_device_config_default(gm_device_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->capacity = 0;
    cfg->granularity = DEVICE_DEFAULT_GRANULARITY;
    cfg->cost.malloc_base_ns = DEVICE_MALLOC_BASE_NS;
    cfg->cost.malloc_per_gib_ns = DEVICE_MALLOC_PER_GIB_NS;
    cfg->cost.free_base_ns = DEVICE_FREE_BASE_NS;
    cfg->cost.free_per_gib_ns = DEVICE_FREE_PER_GIB_NS;
}

/* A granularity of 0 means the default; one that is not a power of two is
 * rounded up to the next (1 TiB at most, so that DEVICE_BASE stays aligned). */
void gm_device_init(gm_device_t *dev, const gm_device_config_t *cfg)
{
    memset(dev, 0, sizeof *dev);
    if (cfg != NULL)
        dev->cfg = *cfg;
    else
        gm_device_config_default(&dev->cfg);
    uint64_t g = dev->cfg.granularity;
    if (g == 0)
        g = DEVICE_DEFAULT_GRANULARITY;
    if (!gm__is_pow2(g))
        g = gm__pow2_ceil(g);
    if (g == 0 || g > DEVICE_BASE)
        g = DEVICE_BASE;
    dev->cfg.granularity = g;
    dev->next_addr = DEVICE_BASE;
}

void gm_device_release(gm_device_t *dev)
{
    free(dev->placed);
    dev->placed = NULL;
    dev->placed_lo = dev->nplaced = dev->placed_cap = 0;
}

void gm_device_hint(gm_device_t *dev, uint64_t addr, uint64_t size)
{
    if (!dev->cfg.hints)
        return;
    dev->hint_addr = addr;
    dev->hint_size = size;
}

/*
 * The placed ranges are placed[placed_lo .. placed_lo + nplaced), with room
 * kept on both sides: an insertion or removal moves the shorter side, so
 * segments recorded in falling (CUDA's usual order) or rising address order
 * each cost a constant, not a move of every range.
 */
static gm_device_range_t *device_placed(const gm_device_t *dev)
{
    return dev->placed + dev->placed_lo;
}

/* Room for one more placed range on at least one side; nonzero when out
 * of memory (nothing changes then). */
static int device_placed_room(gm_device_t *dev)
{
    if (dev->placed_lo > 0 || dev->placed_lo + dev->nplaced < dev->placed_cap)
        return 0;
    size_t cap = 2 * dev->placed_cap + 32;
    gm_device_range_t *p = malloc(cap * sizeof *p);
    if (p == NULL)
        return -1;
    size_t lo = (cap - dev->nplaced) / 2;
    if (dev->nplaced != 0)
        memcpy(p + lo, device_placed(dev), dev->nplaced * sizeof *p);
    free(dev->placed);
    dev->placed = p;
    dev->placed_lo = lo;
    dev->placed_cap = cap;
    return 0;
}

/* Index of the first placed range ending above addr. */
static size_t device_placed_after(const gm_device_t *dev, uint64_t addr)
{
    const gm_device_range_t *r = device_placed(dev);
    size_t lo = 0, hi = dev->nplaced;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * Where a range of `rounded` bytes aligned to `align` goes: the pending
 * hint when it matches the size (consumed then) and its range is free
 * (*hinted = index in `placed` to insert at), else the bump pointer
 * stepped over the placed ranges (*hinted = SIZE_MAX).  0 when the 64-bit
 * space is exhausted.
 */
static int device_place(gm_device_t *dev, uint64_t rounded, uint64_t align, uint64_t *at,
                        size_t *hinted)
{
    *hinted = SIZE_MAX;
    if (dev->hint_size != 0 && gm_device_round(dev, dev->hint_size) == rounded) {
        uint64_t h = dev->hint_addr;
        dev->hint_size = 0;
        if (h != 0 && (h & (align - 1)) == 0 && rounded <= UINT64_MAX - h &&
            (h + rounded <= DEVICE_BASE || h >= dev->next_addr)) {
            size_t i = device_placed_after(dev, h);
            if ((i == dev->nplaced || device_placed(dev)[i].addr >= h + rounded) &&
                device_placed_room(dev) == 0) {
                *at = h;
                *hinted = i;
                return 1;
            }
        }
    }
    uint64_t a = dev->next_addr;
    for (;;) {
        if (a > UINT64_MAX - (align - 1))
            return 0;
        a = (a + align - 1) & ~(align - 1);
        if (rounded > UINT64_MAX - a)
            return 0;
        if (dev->nplaced == 0)
            break;
        size_t i = device_placed_after(dev, a);
        if (i == dev->nplaced || device_placed(dev)[i].addr >= a + rounded)
            break;
        a = device_placed(dev)[i].end;
    }
    *at = a;
    return 1;
}

/* The range [at, at + rounded) handed out (device_place said where). */
static void device_commit(gm_device_t *dev, uint64_t at, uint64_t rounded, size_t hinted)
{
    if (hinted == SIZE_MAX) {
        dev->next_addr = at + rounded;
        return;
    }
    gm_device_range_t *r = device_placed(dev);
    size_t n = dev->nplaced;
    if (dev->placed_lo > 0 && (hinted < n - hinted || dev->placed_lo + n == dev->placed_cap)) {
        memmove(r - 1, r, hinted * sizeof *r); /* the front moves down */
        dev->placed_lo--;
        r--;
    } else {
        memmove(r + hinted + 1, r + hinted, (n - hinted) * sizeof *r);
    }
    r[hinted] = (gm_device_range_t){at, at + rounded};
    dev->nplaced++;
}

uint64_t gm_device_round(const gm_device_t *dev, uint64_t size)
{
    uint64_t g = dev->cfg.granularity;
    if (size > UINT64_MAX - (g - 1))
        return UINT64_MAX;
    return (size + g - 1) & ~(g - 1);
}

/* Piecewise-linear interpolation in a measured table (gm_cost_profile_t). */
static double device_profile_ns(const gm_cost_profile_t *p, const double *ns, uint64_t bytes)
{
    if (p->n == 1 || bytes <= p->sizes[0])
        return ns[0];
    size_t hi = 1;
    while (hi < p->n - 1 && p->sizes[hi] < bytes)
        hi++;
    double x0 = (double)p->sizes[hi - 1], x1 = (double)p->sizes[hi];
    double t = ns[hi - 1] + (ns[hi] - ns[hi - 1]) * ((double)bytes - x0) / (x1 - x0);
    return bytes > p->sizes[p->n - 1] && t < ns[p->n - 1] ? ns[p->n - 1] : t;
}

double gm_cost_malloc_ns(const gm_cost_model_t *m, uint64_t bytes)
{
    if (m->profile != NULL)
        return device_profile_ns(m->profile, m->profile->malloc_ns, bytes);
    return m->malloc_base_ns + m->malloc_per_gib_ns * ((double)bytes / DEVICE_GIB);
}

double gm_cost_free_ns(const gm_cost_model_t *m, uint64_t bytes)
{
    if (m->profile != NULL)
        return device_profile_ns(m->profile, m->profile->free_ns, bytes);
    return m->free_base_ns + m->free_per_gib_ns * ((double)bytes / DEVICE_GIB);
}

/*
 * A size of 0 is served as one granule, so that every successful malloc has
 * an address of its own.  An alignment that is not a power of two is
 * rounded up to the next; the effective alignment is never below the
 * granularity.  A failed malloc (capacity, or the 64-bit address space
 * exhausted) changes nothing but `failed` and the modelled time (a refused
 * cudaMalloc still costs a call: malloc_base_ns).
 */
int gm_device_malloc(gm_device_t *dev, uint64_t size, uint64_t align, uint64_t *addr,
                     uint64_t *got)
{
    uint64_t rounded = gm_device_round(dev, size ? size : 1);
    align = device_align(dev, align);

    int ok = rounded != UINT64_MAX && align != 0;
    if (ok && dev->cfg.capacity != 0)
        ok = dev->reserved <= dev->cfg.capacity && rounded <= dev->cfg.capacity - dev->reserved;
    uint64_t at = 0;
    size_t hinted = SIZE_MAX;
    if (ok)
        ok = device_place(dev, rounded, align, &at, &hinted);
    if (ok && dev->cfg.hooks != NULL && dev->cfg.hooks->malloc != NULL)
        ok = dev->cfg.hooks->malloc(dev->cfg.hooks_ctx, at, rounded) == 0;
    if (!ok) {
        dev->failed++;
        dev->time_ns += gm_cost_malloc_ns(&dev->cfg.cost, 0);
        return GM_DEVICE_OOM;
    }
    device_commit(dev, at, rounded, hinted);
    dev->reserved += rounded;
    if (dev->reserved > dev->peak_reserved)
        dev->peak_reserved = dev->reserved;
    dev->mallocs++;
    dev->time_ns += gm_cost_malloc_ns(&dev->cfg.cost, rounded);
    *addr = at;
    *got = rounded;
    return 0;
}

/* Releasing more than is reserved is a policy bug; reserved saturates at 0
 * rather than wrapping, and the policy's check() reports the mismatch. */
void gm_device_free(gm_device_t *dev, uint64_t addr, uint64_t got)
{
    if (dev->nplaced != 0) {
        size_t i = device_placed_after(dev, addr);
        gm_device_range_t *r = device_placed(dev);
        if (i < dev->nplaced && r[i].addr == addr && r[i].end - addr == got) {
            dev->nplaced--;
            if (i < dev->nplaced - i) { /* the shorter side closes the gap */
                memmove(r + 1, r, i * sizeof *r);
                dev->placed_lo++;
            } else {
                memmove(r + i, r + i + 1, (dev->nplaced - i) * sizeof *r);
            }
        }
    }
    if (dev->cfg.hooks != NULL && dev->cfg.hooks->free != NULL)
        dev->cfg.hooks->free(dev->cfg.hooks_ctx, addr, got);
    dev->reserved = got <= dev->reserved ? dev->reserved - got : 0;
    dev->frees++;
    dev->time_ns += gm_cost_free_ns(&dev->cfg.cost, got);
}

/* ---- virtual ranges, mapping, adoption -------------------------------------- */

int gm_device_reserve_va(gm_device_t *dev, uint64_t size, uint64_t align, uint64_t *addr)
{
    uint64_t rounded = gm_device_round(dev, size ? size : 1);
    uint64_t asked = align; /* the hooks see it as asked: a page size, not a power of two */
    align = device_align(dev, align);
    uint64_t at;
    size_t hinted;
    if (rounded == UINT64_MAX || align == 0 || !device_place(dev, rounded, align, &at, &hinted))
        return GM_DEVICE_OOM;
    if (dev->cfg.hooks != NULL && dev->cfg.hooks->reserve_va != NULL &&
        dev->cfg.hooks->reserve_va(dev->cfg.hooks_ctx, at, rounded, asked) != 0)
        return GM_DEVICE_OOM;
    device_commit(dev, at, rounded, hinted);
    *addr = at;
    return 0;
}

static int device_fits(const gm_device_t *dev, uint64_t bytes)
{
    if (dev->cfg.capacity == 0)
        return bytes <= UINT64_MAX - dev->reserved;
    return dev->reserved <= dev->cfg.capacity && bytes <= dev->cfg.capacity - dev->reserved;
}

/* Count bytes at addr as reserved if they fit and the hooks agree (their
 * adopt for adopted memory, when they have one). */
static int device_take(gm_device_t *dev, uint64_t addr, uint64_t bytes, int adopted)
{
    if (!device_fits(dev, bytes))
        return GM_DEVICE_OOM;
    const gm_device_hooks_t *h = dev->cfg.hooks;
    int (*see)(void *, uint64_t, uint64_t) = NULL;
    if (h != NULL)
        see = adopted && h->adopt != NULL ? h->adopt : h->malloc;
    if (see != NULL && see(dev->cfg.hooks_ctx, addr, bytes) != 0)
        return GM_DEVICE_OOM;
    dev->reserved += bytes;
    if (dev->reserved > dev->peak_reserved)
        dev->peak_reserved = dev->reserved;
    return 0;
}

int gm_device_map(gm_device_t *dev, uint64_t addr, uint64_t bytes)
{
    if (device_take(dev, addr, bytes, 0) != 0) {
        dev->failed++;
        dev->time_ns += gm_cost_malloc_ns(&dev->cfg.cost, 0);
        return GM_DEVICE_OOM;
    }
    dev->mallocs++;
    dev->time_ns += gm_cost_malloc_ns(&dev->cfg.cost, bytes);
    return 0;
}

int gm_device_adopt(gm_device_t *dev, uint64_t addr, uint64_t bytes)
{
    return device_take(dev, addr, bytes, 1);
}

/* ---- sizes for people ---------------------------------------------------- */

/* Multiplier (as a shift) for a unit suffix, case-insensitive; -1 if unknown.
 * "" and "B" are bytes; K/KB/KiB … T/TB/TiB are powers of 1024, and so are
 * P and E (which gm_format_size can print). */
static int device_unit_shift(const char *s)
{
    static const char letters[] = "kmgtpe";
    char c = (char)tolower((unsigned char)s[0]);
    if (c == '\0')
        return 0;
    if (c == 'b')
        return s[1] == '\0' ? 0 : -1;
    const char *l = strchr(letters, c);
    if (l == NULL)
        return -1;
    int shift = 10 * (int)(l - letters + 1);
    const char *rest = s + 1;
    if (tolower((unsigned char)rest[0]) == 'i' && tolower((unsigned char)rest[1]) == 'b')
        rest += 2;
    else if (tolower((unsigned char)rest[0]) == 'b')
        rest += 1;
    return rest[0] == '\0' ? shift : -1;
}

/*
 * Grammar: DIGITS [ "." DIGITS ] [ [ SPACES ] UNIT ], nothing before or
 * after.  The fraction is exact (binary long division, no floating point)
 * and the result is rounded to the nearest byte.  Fraction digits past the
 * eighteenth are ignored: even in TiB they weigh less than 10^-5 bytes.
 */
int gm_parse_size(const char *text, uint64_t *out, gm_error_t *err)
{
    const char *p = text;
    if (p == NULL)
        return gm_error_set(err, GM_EINVAL, "invalid size ''");
    if (!isdigit((unsigned char)*p))
        goto bad;

    uint64_t whole = 0;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (whole > (UINT64_MAX - d) / 10)
            goto bad;
        whole = whole * 10 + d;
    }
    uint64_t frac = 0, scale = 1; /* fraction = frac / scale, scale = 10^k */
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            goto bad;
        for (; isdigit((unsigned char)*p); p++) {
            if (scale < UINT64_C(1000000000000000000)) {
                frac = frac * 10 + (unsigned)(*p - '0');
                scale *= 10;
            }
        }
    }
    const char *unit = p;
    while (*unit == ' ' || *unit == '\t')
        unit++;
    if (unit != p && *unit == '\0') /* spaces only before a unit */
        goto bad;
    int shift = device_unit_shift(unit);
    if (shift < 0)
        goto bad;

    if (shift > 0 && whole > (UINT64_MAX >> shift))
        goto bad;
    uint64_t bytes = whole << shift;
    if (frac != 0) {
        /* q = floor(frac · 2^shift / scale), r the remainder; frac < scale
         * ≤ 10^18 < 2^60 keeps r << 1 in range. */
        uint64_t q = 0, r = frac;
        for (int i = 0; i < shift; i++) {
            r <<= 1;
            q <<= 1;
            if (r >= scale) {
                r -= scale;
                q |= 1;
            }
        }
        if (r >= scale - r) /* remainder ≥ half: round up */
            q++;
        if (q > UINT64_MAX - bytes)
            goto bad;
        bytes += q;
    }
    *out = bytes;
    return 0;
bad:
    return gm_error_set(err, GM_EINVAL, "invalid size '%s'", text);
}

/* "512 B" below 1 KiB, else two decimals in the largest unit that keeps the
 * number ≥ 1 ("1.50 KiB", "80.00 GiB"); a value that would print as
 * "1024.00" moves up a unit. */
void gm_format_param_size(uint64_t bytes, char *buf, unsigned len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (buf == NULL || len == 0)
        return;
    if (bytes == UINT64_MAX) {
        snprintf(buf, len, "none");
        return;
    }
    int u = -1;
    while (u < 5 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(buf, len, "%" PRIu64, bytes);
    else
        snprintf(buf, len, "%" PRIu64 "%s", bytes, units[u]);
}

void gm_format_size(uint64_t bytes, char *buf, unsigned len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (buf == NULL || len == 0)
        return;
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", bytes);
        return;
    }
    unsigned u = 0;
    double v = (double)bytes / 1024.0;
    while (u + 1 < sizeof units / sizeof units[0] && v >= 1023.995) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, "%.2f %s", v, units[u]);
}
