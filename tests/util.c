/*
 * tests/util.c — helpers shared by the tests, fuzz targets and benchmark.
 */
#define _XOPEN_SOURCE 700 /* nftw */

#include "util.h"

#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bits.h"

const char *gt_data_path(const char *rel, const char **why)
{
    static char path[4096];
    struct stat st;
    const char *dir = getenv("GM_DATA_DIR");
    if (dir == NULL || dir[0] == '\0')
        dir = GM_DATA_DIR;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (why)
            *why = "real data folder ../shared/data is absent";
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (stat(path, &st) != 0) {
        if (why)
            *why = "file is absent from ../shared/data";
        return NULL;
    }
    return path;
}

static char util_tmpdir[256];
static pid_t util_tmpdir_owner;

static int util_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* At exit, the process that made the directory removes it with its files
 * (a forked child that exits leaves it to its parent). */
static void util_tmpdir_cleanup(void)
{
    if (util_tmpdir[0] != '\0' && getpid() == util_tmpdir_owner && !getenv("GM_KEEP_TMP"))
        nftw(util_tmpdir, util_remove, 16, FTW_DEPTH | FTW_PHYS);
}

const char *gt_tmpdir(void)
{
    if (util_tmpdir[0] == '\0') {
        const char *base = getenv("TMPDIR");
        snprintf(util_tmpdir, sizeof util_tmpdir, "%s/gmsim-test-XXXXXX",
                 base && *base ? base : "/tmp");
        if (mkdtemp(util_tmpdir) == NULL) {
            perror("mkdtemp");
            abort();
        }
        util_tmpdir_owner = getpid();
        atexit(util_tmpdir_cleanup);
    }
    return util_tmpdir;
}

const char *gt_tmpfile(const char *name)
{
    static char paths[8][512];
    static unsigned next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", gt_tmpdir(), name);
    return p;
}

int gt_import_text(gm_import_fn import, const char *text, const char *filename, gm_store_t **s,
                   gm_error_t *err)
{
    int rc = gm_store_open(":memory:", GM_STORE_WRITE, s, err);
    if (rc)
        return rc;
    gm_import_target_t *t;
    if ((rc = gm_import_target_create(*s, "t", 0, &t, err)) != 0)
        return rc;
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    if (in == NULL) {
        gm_import_abort(t);
        return gm_error_set(err, GM_EIO, "fmemopen: %s", strerror(errno));
    }
    rc = import(in, filename, t, err);
    fclose(in);
    if (rc) {
        gm_import_abort(t);
        return rc;
    }
    return gm_import_commit(t, err);
}

void gt_sweep_config(gm_sweep_config_t *cfg, const char *const *inputs, size_t ninputs,
                     const gm_params_t *sets, size_t nsets, const char *results, unsigned jobs)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->inputs = inputs;
    cfg->ninputs = ninputs;
    cfg->sets = sets;
    cfg->nsets = nsets;
    gm_device_config_default(&cfg->device);
    cfg->results = results;
    cfg->jobs = jobs;
}

int gt_sweep_one(const char *in, const gm_params_t *sets, size_t nsets, const char *results,
                 unsigned jobs, gm_sweep_summary_t *sum, gm_error_t *err)
{
    const char *inputs[] = {in};
    gm_sweep_config_t cfg;
    gt_sweep_config(&cfg, inputs, 1, sets, nsets, results, jobs);
    return gm_sweep_run(&cfg, sum, err);
}

uint64_t gt_rand(uint64_t *state)
{
    return gm__splitmix64(state);
}

char *gt_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

typedef struct {
    uint64_t time;
    int is_alloc;
    uint64_t ordinal; /* buffer index in file order */
    uint64_t size;
} gt_edge;

static int gt_edge_cmp(const void *a, const void *b)
{
    const gt_edge *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->is_alloc != y->is_alloc)
        return x->is_alloc - y->is_alloc; /* frees first */
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

gm_event_t *gt_minimalloc_events(const char *path, size_t *n, uint64_t *capacity)
{
    size_t len;
    char *text = gt_read_file(path, &len);
    if (text == NULL)
        return NULL;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strchr(base, '.');
    if (capacity)
        *capacity = dot ? strtoull(dot + 1, NULL, 10) : 0;

    size_t cap = 256, m = 0;
    gt_edge *edges = malloc(cap * sizeof *edges);
    uint64_t count = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long lo, hi, sz;
        /* The id column is a name ("0", "b1", …): buffers are numbered in
         * file order instead. */
        if (sscanf(line, "%*[^,],%llu,%llu,%llu", &lo, &hi, &sz) != 3)
            continue; /* header */
        if (m + 2 > cap) {
            cap *= 2;
            edges = realloc(edges, cap * sizeof *edges);
        }
        edges[m++] = (gt_edge){lo, 1, count, sz};
        edges[m++] = (gt_edge){hi, 0, count, sz};
        count++;
    }
    free(text);
    qsort(edges, m, sizeof *edges, gt_edge_cmp);

    /* Renumber: the k-th ALLOC in time order gets ordinal k. */
    uint64_t *map = malloc((count ? count : 1) * sizeof *map);
    gm_event_t *ev = calloc(m ? m : 1, sizeof *ev);
    uint64_t next = 0;
    for (size_t i = 0; i < m; i++) {
        ev[i].ts_ns = edges[i].time;
        if (edges[i].is_alloc) {
            map[edges[i].ordinal] = next;
            ev[i].op = GM_OP_ALLOC;
            ev[i].id = next++;
            ev[i].size = edges[i].size;
        } else {
            ev[i].op = GM_OP_FREE;
            ev[i].id = map[edges[i].ordinal];
        }
    }
    free(map);
    free(edges);
    *n = m;
    return ev;
}

/* Length of the well-formed UTF-8 sequence at p (2–4) by decoding it, or 0. */
static size_t gt_utf8_len(const unsigned char *p)
{
    size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
    if (n == 0 || p[0] > 0xf7)
        return 0;
    uint32_t cp = p[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3fu);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

int gt_json_string_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (*p++ != '"')
        return 0;
    for (;;) {
        if (*p == '"')
            return p[1] == '\0';
        if (*p < 0x20) /* a raw control character, or the end without a quote */
            return 0;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (p[i] == '\0' || !strchr("0123456789abcdefABCDEF", p[i]))
                        return 0;
                p += 5;
            } else if (*p != '\0' && strchr("\"\\/bfnrt", *p)) {
                p++;
            } else {
                return 0;
            }
        } else if (*p < 0x80) {
            p++;
        } else {
            size_t n = gt_utf8_len(p);
            if (n == 0)
                return 0;
            p += n;
        }
    }
}

#define GT_MIN_SPAN 8

static void gt_guillotine(FILE *f, uint64_t *rng, uint64_t lo, uint64_t hi, uint64_t t0,
                          uint64_t t1, uint64_t unit, size_t pieces, size_t *id)
{
    uint64_t r = gt_rand(rng);
    uint64_t nt = (t1 - t0) / unit, ns = (hi - lo) / unit;
    if (pieces <= 1 || (nt < 2 && ns < 2)) {
        fprintf(f, "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", (*id)++, t0, t1, hi - lo);
        return;
    }
    /* a time cut leaves at least GT_MIN_SPAN units each side: lifetimes of
     * a unit or two, stacked ten deep, are no buffer a program makes */
    int can_time = nt >= 2 * GT_MIN_SPAN, can_space = ns >= 2;
    if (!can_time && !can_space) {
        fprintf(f, "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", (*id)++, t0, t1, hi - lo);
        return;
    }
    int in_time = (r & 1) ? can_time : !can_space;
    size_t left = 1 + (size_t)(r >> 1) % (pieces - 1);
    if (in_time) {
        uint64_t at = t0 + unit * (GT_MIN_SPAN + (r >> 8) % (nt - 2 * GT_MIN_SPAN + 1));
        gt_guillotine(f, rng, lo, hi, t0, at, unit, left, id);
        gt_guillotine(f, rng, lo, hi, at, t1, unit, pieces - left, id);
    } else {
        uint64_t at = lo + unit * (1 + (r >> 8) % (ns - 1));
        gt_guillotine(f, rng, lo, at, t0, t1, unit, left, id);
        gt_guillotine(f, rng, at, hi, t0, t1, unit, pieces - left, id);
    }
}

size_t gt_perfect_packing(FILE *f, uint64_t seed, int style, uint64_t capacity, uint64_t span,
                          uint64_t unit, size_t pieces)
{
    uint64_t rng = seed * UINT64_C(0x9e3779b97f4a7c15) + (uint64_t)style;
    size_t id = 0;
    fprintf(f, "id,lower,upper,size\n");
    if (style == 0) {
        gt_guillotine(f, &rng, 0, capacity, 0, span, unit, pieces, &id);
        return id;
    }
    /* bottom-left fill over T = span / unit columns: h[c] is the skyline */
    size_t T = (size_t)(span / unit);
    uint64_t *h = calloc(T ? T : 1, sizeof *h);
    /* a buffer's expected area: the rectangle's over pieces */
    uint64_t cells = (capacity / unit) * (uint64_t)T, mean = cells / (pieces ? pieces : 1);
    if (mean < 1)
        mean = 1;
    for (;;) {
        size_t a = 0;
        for (size_t c = 1; c < T; c++)
            if (h[c] < h[a])
                a = c;
        if (h[a] >= capacity)
            break;
        size_t b = a + 1;
        while (b < T && h[b] == h[a])
            b++;
        /* a width up to the step's, a height up to what is left above it,
         * their product near the mean area */
        uint64_t r = gt_rand(&rng);
        uint64_t wmax = b - a, room = (capacity - h[a]) / unit;
        uint64_t w = 1 + r % wmax;
        uint64_t want = mean / w + 1;
        uint64_t hh = 1 + (r >> 20) % (2 * want);
        if (hh > room)
            hh = room;
        if ((r >> 40) % 4 == 0 && wmax > 1)
            w = wmax; /* now and then the whole step */
        fprintf(f, "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", id++, (uint64_t)a * unit,
                (uint64_t)(a + w) * unit, hh * unit);
        for (size_t c = a; c < a + w; c++)
            h[c] += hh * unit;
    }
    free(h);
    return id;
}
