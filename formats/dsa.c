/*
 * formats/dsa.c — placement instances (dynamic storage allocation problems)
 * as minimalloc writes them: CSV `id,lower,upper,size`, buffer `id` of
 * `size` bytes live over the half-open interval [lower, upper).
 *
 * As a trace: an ALLOC at time `lower` and a FREE at time `upper` per
 * buffer, ordered by time; at equal times frees come first (a buffer whose
 * interval ends at t and one that starts at t never overlap, so the memory
 * of the first may be reused by the second), then allocations; ties within
 * each kind keep the file order.  ts_ns is the instance's time unit as it
 * is.  Allocation ordinals follow the ALLOC order.  Ids are names ("0",
 * "b1"): only their order in the file is used; they are not stored.
 *
 * The header is optional (without one the columns are id,lower,upper,size);
 * with one, columns are found by name and others (minimalloc's optional
 * `alignment`, `gaps`) are ignored — the trace keeps no alignment or gaps.
 * lower must be below upper.  The whole instance is read into memory to be
 * sorted (16 bytes per edge).  The capacity is the last all-digit
 * dot-separated part of the file name ("A.1048576.csv" → 1048576) and
 * becomes the "capacity" attribute; "buffers" counts the rows.  Every row
 * error is "'FILE' line N: REASON".
 */
#include "gmsim/formats.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gmsim/attrs.h"
#include "gmsim/text.h"
#include "formats/textin.h"
#include "base/bits.h"
#include "base/vec.h"

enum { DSA_ID, DSA_LOWER, DSA_UPPER, DSA_SIZE, DSA_NCOLS };
static const char *const dsa_names[DSA_NCOLS] = {"id", "lower", "upper", "size"};
#define DSA_MAX_FIELDS 16

typedef struct dsa_buf {
    uint64_t lower, upper, size;
} dsa_buf_t;

/* One edge: time, then kind (0 free, 1 alloc), then the buffer index. */
typedef struct dsa_edge {
    uint64_t time;
    uint64_t key; /* buffer index << 1 | is_alloc */
} dsa_edge_t;

static int dsa_edge_cmp(const void *a, const void *b)
{
    const dsa_edge_t *x = a, *y = b;
    return gm__cmp_u64_keys((const uint64_t[]){x->time, x->key & 1 /* frees first */, x->key},
                            (const uint64_t[]){y->time, y->key & 1, y->key}, 3);
}

/* The capacity in a file name, or 0. */
static uint64_t dsa_capacity(const char *filename)
{
    const char *base = strrchr(filename, '/');
    base = base ? base + 1 : filename;
    uint64_t cap = 0;
    const char *p = strchr(base, '.');
    while (p != NULL) {
        const char *q = p + 1;
        const char *e = strchr(q, '.');
        if (e == NULL)
            break; /* the last part is the extension */
        size_t n = (size_t)(e - q);
        if (n > 0 && n < 20 && strspn(q, "0123456789") == n) {
            char num[21];
            memcpy(num, q, n);
            num[n] = '\0';
            uint64_t v;
            if (gm_parse_u64(num, &v) == 0)
                cap = v;
        }
        p = e;
    }
    return cap;
}

static int dsa_field(const gm__textin_t *in, const char *s, const char *what, uint64_t *out,
                     gm_error_t *err)
{
    int rc = gm_parse_u64(s, out);
    if (rc == GM_U64_RANGE)
        return gm__textin_error(in, err, "%s '%.40s' is too large", what, s);
    if (rc)
        return gm__textin_error(in, err, "invalid %s '%.40s' (expected an unsigned integer)",
                                what, s);
    return 0;
}

/* Read every buffer.  0, or a negative code. */
static int dsa_read(gm__textin_t *in, dsa_buf_t **out, size_t *nout, gm_error_t *err)
{
    int col[DSA_NCOLS] = {0, 1, 2, 3};
    size_t nfields = 4, n = 0, cap = 0;
    dsa_buf_t *bufs = NULL;
    int first = 1, rc;
    char *line;
    size_t len;
    while ((rc = gm__textin_next(in, &line, &len, err)) == 1) {
        if (len == 0 || line[0] == '#')
            continue;
        char *f[DSA_MAX_FIELDS];
        size_t k = gm__textin_split(line, ',', f, DSA_MAX_FIELDS);
        if (first) {
            first = 0;
            int header = 0; /* a header names the column "lower" */
            for (size_t i = 0; i < k && i < DSA_MAX_FIELDS; i++)
                header |= strcasecmp(f[i], "lower") == 0 || strcasecmp(f[i], "id") == 0;
            if (header && k <= DSA_MAX_FIELDS) {
                for (int c = 0; c < DSA_NCOLS; c++) {
                    col[c] = -1;
                    for (size_t i = 0; i < k; i++)
                        if (strcasecmp(f[i], dsa_names[c]) == 0)
                            col[c] = (int)i;
                    if (col[c] < 0) {
                        rc = gm__textin_error(in, err, "the header has no '%s' column",
                                              dsa_names[c]);
                        goto fail;
                    }
                }
                nfields = k;
                continue;
            }
        }
        if (k != nfields) {
            rc = gm__textin_error(in, err, "expected %zu fields (id,lower,upper,size), found %zu",
                                  nfields, k);
            goto fail;
        }
        dsa_buf_t b;
        if ((rc = dsa_field(in, f[col[DSA_LOWER]], "lower", &b.lower, err)) ||
            (rc = dsa_field(in, f[col[DSA_UPPER]], "upper", &b.upper, err)) ||
            (rc = dsa_field(in, f[col[DSA_SIZE]], "size", &b.size, err)))
            goto fail;
        if (f[col[DSA_ID]][0] == '\0') {
            rc = gm__textin_error(in, err, "missing id");
            goto fail;
        }
        if (b.lower >= b.upper) {
            rc = gm__textin_error(in, err,
                                  "lower %" PRIu64 " is not below upper %" PRIu64
                                  " (a buffer lives over [lower, upper))",
                                  b.lower, b.upper);
            goto fail;
        }
        if (b.size > GM_SIZE_LIMIT) {
            rc = gm__textin_error(in, err, "size %" PRIu64 " is above the limit of 2^48 bytes",
                                  b.size);
            goto fail;
        }
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 256;
            if (ncap > SIZE_MAX / 2 / sizeof(dsa_edge_t)) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", in->filename);
                goto fail;
            }
            if (GM_VEC_RESERVE(bufs, cap, ncap, 256)) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", in->filename);
                goto fail;
            }
        }
        bufs[n++] = b;
    }
    if (rc < 0)
        goto fail;
    *out = bufs;
    *nout = n;
    return 0;
fail:
    free(bufs);
    return rc;
}

int gm_dsa_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err)
{
    gm__textin_t rd;
    gm__textin_init(&rd, in, filename);
    dsa_buf_t *bufs = NULL;
    size_t n = 0;
    int rc = dsa_read(&rd, &bufs, &n, err);
    gm__textin_release(&rd);
    if (rc)
        return rc;
    dsa_edge_t *edges = malloc((n ? 2 * n : 1) * sizeof *edges);
    uint64_t *ord = malloc((n ? n : 1) * sizeof *ord);
    if (edges == NULL || ord == NULL) {
        free(edges);
        free(ord);
        free(bufs);
        return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", filename);
    }
    for (size_t i = 0; i < n; i++) {
        edges[2 * i] = (dsa_edge_t){bufs[i].lower, (uint64_t)i << 1 | 1};
        edges[2 * i + 1] = (dsa_edge_t){bufs[i].upper, (uint64_t)i << 1};
    }
    qsort(edges, 2 * n, sizeof *edges, dsa_edge_cmp);

    gm_writer_t *w;
    rc = gm_import_begin(t, NULL, &w, err);
    uint32_t stream = 0;
    uint64_t capacity = dsa_capacity(filename);
    if (rc == 0)
        rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "dsa", err);
    if (rc == 0 && capacity)
        rc = gm_writer_attr_int(w, GM_ATTR_CAPACITY, (int64_t)capacity, err);
    if (rc == 0)
        rc = gm_writer_attr_int(w, "buffers", (int64_t)n, err);
    if (rc == 0)
        rc = gm_writer_stream(w, 0, &stream, err);
    uint64_t next = 0;
    for (size_t i = 0; rc == 0 && i < 2 * n; i++) {
        size_t b = (size_t)(edges[i].key >> 1);
        gm_event_t ev = {.ts_ns = edges[i].time, .stream = stream};
        if (edges[i].key & 1) {
            ev.op = GM_OP_ALLOC;
            ev.id = ord[b] = next++;
            ev.size = bufs[b].size;
        } else {
            ev.op = GM_OP_FREE;
            ev.id = ord[b];
        }
        if ((rc = gm_writer_add(w, &ev, err)))
            gm_error_prefix(err, "'%s'", filename);
    }
    if (rc == 0)
        rc = gm_import_end(t, err);
    free(edges);
    free(ord);
    free(bufs);
    return rc;
}

/* The first non-blank line is the header id,lower,upper,size (possibly
 * followed by more columns). */
int gm_dsa_sniff(const void *head, size_t len)
{
    const char *end = (const char *)head + len;
    const char *p = gm__textin_sniff_header(head, len, "id,lower,upper,size");
    return p != NULL && (p == end || *p == '\n' || *p == '\r' || *p == ',');
}
