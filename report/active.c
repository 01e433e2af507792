/*
 * report/active.c — the data of the page's active-memory view (docs/report.md,
 * "Active memory"): every allocation of a trace, embedded compactly for the
 * page's script (report/page.js), which draws each one as a band.
 *
 * Reading.  One pass over the trace (a third read, after report/load.c's
 * marks and sites): per allocation its ALLOC's event, its FREE's event (the
 * trace's end when it is never freed), its size, stream and stack, and the
 * time stamps of both when the trace has them.  Stacks are interned by the
 * store already; here each stack becomes a list of frame indexes into one
 * table of distinct frames (a frame shared by a thousand stacks is written
 * once), the stack's site frame (gm_site_frame: the user's code) first.
 *
 * Encoding.  The allocations go in id order as unsigned LEB128 varints in
 * base64, in a script element of type application/octet-stream (inert, and
 * base64 has no '<'): per allocation the ALLOC's event less the one
 * before's, the lifetime in events, the size in units of the sizes'
 * greatest common divisor, the stack (0: none, else 1 + its index), the
 * stream index, and with time stamps the start's microseconds less the one
 * before's and the lifetime in microseconds.  About 8 bytes an allocation
 * (11 in base64).  The frames, stacks and streams are JSON in a script
 * element of type application/json, '<' written \u003c and ':' \u003a.
 * The page decodes both and draws per pixel (bands under a pixel merge;
 * zoom splits them), so nothing is downsampled here and every allocation
 * stays reachable.
 *
 * Failure: GM_ENOMEM, or the reader's errors.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/vec.h"
#include "gmsim/advice.h"
#include "report/report.h"

#define ACTIVE_LINE_CHARS 200 /* a frame cut to this */
#define ACTIVE_STACK_LINES 48 /* frames kept per stack */
#define ACTIVE_MIN_PART 1000   /* fewer allocations left: a trace is not drawn */

typedef struct active_alloc {
    uint64_t start, end, size, ts0, ts1;
    uint32_t stack, stream; /* stack: 0 none, else 1 + dense index */
} active_alloc_t;

/* Distinct strings, by an open-addressing hash. */
typedef struct active_strings {
    char **s;
    size_t n, cap;
    uint32_t *slot; /* 1 + index, 0 empty */
    size_t nslot;
} active_strings_t;

static uint64_t active_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Index of s[0..n) in the table, added when absent; -1 out of memory. */
static int64_t active_intern(active_strings_t *t, const char *s, size_t n)
{
    if (2 * (t->n + 1) > t->nslot) {
        size_t ns = t->nslot ? 2 * t->nslot : 1024;
        uint32_t *slot = calloc(ns, sizeof *slot);
        if (slot == NULL)
            return -1;
        for (size_t i = 0; i < t->n; i++) {
            size_t h = (size_t)(active_hash(t->s[i], strlen(t->s[i])) & (ns - 1));
            while (slot[h])
                h = (h + 1) & (ns - 1);
            slot[h] = (uint32_t)i + 1;
        }
        free(t->slot);
        t->slot = slot;
        t->nslot = ns;
    }
    size_t h = (size_t)(active_hash(s, n) & (t->nslot - 1));
    while (t->slot[h]) {
        const char *x = t->s[t->slot[h] - 1];
        if (strncmp(x, s, n) == 0 && x[n] == '\0')
            return t->slot[h] - 1;
        h = (h + 1) & (t->nslot - 1);
    }
    if (GM_VEC_RESERVE(t->s, t->cap, t->n + 1, 256))
        return -1;
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, s, n);
    copy[n] = '\0';
    t->s[t->n] = copy;
    t->slot[h] = (uint32_t)t->n + 1;
    return (int64_t)t->n++;
}

static void active_strings_free(active_strings_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->slot);
}

/* ---- output helpers ---------------------------------------------------------- */

/* Base64 of the bytes given so far, its last group padded. */
void report_b64_flush(report_b64_t *b)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (b->n == 0)
        return;
    unsigned v = (unsigned)b->in[0] << 16 | (unsigned)(b->n > 1 ? b->in[1] : 0) << 8 |
                 (unsigned)(b->n > 2 ? b->in[2] : 0);
    char out[4] = {abc[v >> 18], abc[(v >> 12) & 63], b->n > 1 ? abc[(v >> 6) & 63] : '=',
                   b->n > 2 ? abc[v & 63] : '='};
    fwrite(out, 1, 4, b->f);
    b->bytes += 4;
    b->n = 0;
}

void report_b64_byte(report_b64_t *b, unsigned char c)
{
    b->in[b->n++] = c;
    if (b->n == 3)
        report_b64_flush(b);
}

/* v as an unsigned LEB128 varint. */
void report_varint(report_b64_t *b, uint64_t v)
{
    while (v >= 0x80) {
        report_b64_byte(b, (unsigned char)(v | 0x80));
        v >>= 7;
    }
    report_b64_byte(b, (unsigned char)v);
}

/* ---- reading ------------------------------------------------------------------ */

typedef struct active {
    active_alloc_t *a;
    uint64_t n, events;
    int timed;
    uint32_t *stack_of; /* store frames index -> 1 + dense stack, 0 unseen */
    size_t nstack_of;
    uint32_t *stack_frames; /* dense stack -> store frames index */
    size_t nstacks, stacks_cap;
} active_t;

static void active_free(active_t *A)
{
    free(A->a);
    free(A->stack_of);
    free(A->stack_frames);
}

/* The dense stack of a store frames index (0 for none); UINT32_MAX out of
 * memory. */
static uint32_t active_stack(active_t *A, uint32_t frames)
{
    if (frames == 0)
        return 0;
    size_t had = A->nstack_of;
    if (GM_VEC_RESERVE(A->stack_of, A->nstack_of, (size_t)frames + 1, 256))
        return UINT32_MAX;
    if (A->nstack_of > had)
        memset(A->stack_of + had, 0, (A->nstack_of - had) * sizeof *A->stack_of);
    if (A->stack_of[frames] == 0) {
        if (GM_VEC_RESERVE(A->stack_frames, A->stacks_cap, A->nstacks + 1, 256))
            return UINT32_MAX;
        A->stack_frames[A->nstacks++] = frames;
        A->stack_of[frames] = (uint32_t)A->nstacks;
    }
    return A->stack_of[frames];
}

static int active_read(report_t *R, const report_group_t *gr, gm_reader_t *rd, active_t *A)
{
    const gm_trace_info_t *info = gm_reader_info(rd);
    uint64_t allocs = info->allocs;
    A->a = calloc(allocs ? allocs : 1, sizeof *A->a);
    if (A->a == NULL)
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    uint64_t index = 0;
    const gm_event_t *ev;
    size_t n;
    int rc;
    while ((rc = gm_reader_next(rd, &ev, &n, R->err)) == 0 && n > 0) {
        for (size_t i = 0; i < n; i++, index++) {
            const gm_event_t *e = &ev[i];
            if (e->op == GM_OP_ALLOC && e->id < allocs) {
                active_alloc_t *a = &A->a[e->id];
                uint32_t st = active_stack(A, e->frames);
                if (st == UINT32_MAX)
                    return gm_error_set(R->err, GM_ENOMEM, "out of memory");
                *a = (active_alloc_t){.start = index, .end = UINT64_MAX, .size = e->size,
                                      .ts0 = e->ts_ns, .ts1 = UINT64_MAX, .stack = st,
                                      .stream = e->stream};
                if (e->id + 1 > A->n)
                    A->n = e->id + 1;
                A->timed |= e->ts_ns != 0;
            } else if (e->op == GM_OP_FREE && e->id < A->n && A->a[e->id].end == UINT64_MAX) {
                A->a[e->id].end = index;
                A->a[e->id].ts1 = e->ts_ns;
            }
        }
    }
    if (rc)
        return rc;
    A->events = index;
    (void)gr;
    return 0;
}

/* ---- writing ------------------------------------------------------------------ */

/* The frames and stacks as JSON: {"frames":[..],"stacks":[[site,f,..],..],
 * "streams":[..]}; returns the bytes written, or -1 out of memory. */
static int64_t active_write_stacks(FILE *f, active_t *A, gm_reader_t *rd)
{
    active_strings_t fr = {0};
    uint32_t **st = calloc(A->nstacks ? A->nstacks : 1, sizeof *st);
    size_t *nst = calloc(A->nstacks ? A->nstacks : 1, sizeof *nst);
    int64_t rc = st && nst ? 0 : -1;
    for (size_t k = 0; rc == 0 && k < A->nstacks; k++) {
        const char *text = gm_reader_frames(rd, A->stack_frames[k]);
        if (text == NULL)
            text = "";
        st[k] = malloc((ACTIVE_STACK_LINES + 2) * sizeof **st);
        if (st[k] == NULL) {
            rc = -1;
            break;
        }
        char site[ACTIVE_LINE_CHARS + 1];
        gm_site_frame(text, site, sizeof site);
        int64_t x = active_intern(&fr, site, strlen(site));
        st[k][nst[k]++] = (uint32_t)x;
        rc = x < 0 ? -1 : 0;
        const char *p = text;
        while (rc == 0 && *p && nst[k] < ACTIVE_STACK_LINES + 1) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            x = active_intern(&fr, p, len < ACTIVE_LINE_CHARS ? len : ACTIVE_LINE_CHARS);
            rc = x < 0 ? -1 : 0;
            st[k][nst[k]++] = (uint32_t)x;
            p += len + (nl != NULL);
        }
    }
    long at = ftell(f);
    if (rc == 0) {
        fputs("{\"frames\":[", f);
        for (size_t i = 0; i < fr.n; i++) {
            if (i)
                fputc(',', f);
            report_json_str(f, fr.s[i]);
        }
        fputs("],\"stacks\":[", f);
        for (size_t k = 0; k < A->nstacks; k++) {
            fputs(k ? ",[" : "[", f);
            for (size_t i = 0; i < nst[k]; i++)
                fprintf(f, "%s%" PRIu32, i ? "," : "", st[k][i]);
            fputc(']', f);
        }
        fputs("],\"streams\":[", f);
        uint32_t ns = gm_reader_stream_count(rd);
        for (uint32_t s = 0; s < ns; s++)
            fprintf(f, "%s\"%" PRIu64 "\"", s ? "," : "", gm_reader_stream(rd, s));
        fputs("]}", f);
        rc = at >= 0 ? ftell(f) - at : 0;
    }
    for (size_t k = 0; st && k < A->nstacks; k++)
        free(st[k]);
    free(st);
    free(nst);
    active_strings_free(&fr);
    return rc;
}

/* The first n allocations, base64 of varints; returns the characters
 * written. */
static uint64_t active_write_allocs(FILE *f, const active_t *A, uint64_t n, uint64_t q)
{
    report_b64_t b = {.f = f};
    uint64_t prev = 0, prev_ts = 0;
    for (uint64_t i = 0; i < n; i++) {
        const active_alloc_t *a = &A->a[i];
        uint64_t end = a->end == UINT64_MAX ? A->events : a->end;
        report_varint(&b, a->start >= prev ? a->start - prev : 0);
        report_varint(&b, end >= a->start ? end - a->start : 0);
        report_varint(&b, a->size / q);
        report_varint(&b, a->stack);
        report_varint(&b, a->stream);
        if (A->timed) {
            uint64_t t0 = a->ts0 / 1000, t1 = a->ts1 == UINT64_MAX ? t0 : a->ts1 / 1000;
            report_varint(&b, t0 >= prev_ts ? t0 - prev_ts : 0);
            report_varint(&b, t1 >= t0 ? t1 - t0 : 0);
            prev_ts = t0;
        }
        prev = a->start;
    }
    report_b64_flush(&b);
    return b.bytes;
}

/* The active-memory figure of trace group g (the first group of its
 * trace): a canvas the page draws, its overview strip, and the data.  When
 * its allocations would pass what is left of *budget (taken from it), the
 * first ones that fit, up to the ALLOC of the first left out (the page
 * draws those events, and the note says what is left out), or, with fewer
 * than ACTIVE_MIN_PART left, a note that names the trace. */
int report_active_figure(report_t *R, report_group_t *gr, size_t g, uint64_t *budget)
{
    FILE *f = R->f;
    size_t where;
    const gm_trace_info_t *t = report_find_trace(R, gr->digest, &where);
    uint64_t keep = UINT64_MAX;
    if (t != NULL && t->allocs > *budget && *budget < ACTIVE_MIN_PART) {
        fputs("<p class=\"note\">", f);
        report_esc(f, gr->name);
        fprintf(f, ": %" PRIu64 " allocations, and %" PRIu64 " left of this page's budget "
                   "(--embed-allocs, %u allocations by default, about 12 bytes each): not drawn.  "
                   "A report of this trace alone (--trace NAME), or a larger --embed-allocs, draws "
                   "it.</p>\n",
                t->allocs, *budget, REPORT_ACTIVE_BUDGET);
        return 0;
    }
    if (t != NULL && t->allocs > *budget)
        keep = *budget;
    if (t != NULL)
        *budget -= t->allocs < keep ? t->allocs : keep;
    gm_reader_t *rd;
    int rc = gm_reader_open(R->stores[gr->store].s, gr->name, &rd, R->err);
    if (rc)
        return rc;
    active_t A = {0};
    rc = active_read(R, gr, rd, &A);
    uint64_t q = 0;
    for (uint64_t i = 0; rc == 0 && i < A.n; i++)
        q = gm__gcd_u64(A.a[i].size, q);
    if (q == 0)
        q = 1;
    /* the events drawn: all, or up to the first allocation left out */
    uint64_t n = A.n < keep ? A.n : keep, shown = n < A.n ? A.a[n].start : A.events;
    if (rc == 0) {
        fprintf(f, "<figure class=\"am\" id=\"am%zu\" data-t=\"%zu\" data-name=\"", g, g);
        report_esc(f, gr->name);
        fputs("\"><figcaption>", f);
        report_esc(f, gr->name);
        fprintf(f, " · %" PRIu64 " allocation%s over %" PRIu64 " events</figcaption>\n", A.n,
                A.n == 1 ? "" : "s", A.events);
        if (n < A.n)
            fprintf(f, "<p class=\"note part\">Drawn: the first %" PRIu64 " allocations, to "
                       "event %" PRIu64 " of %" PRIu64 "; the %" PRIu64 " made after it are left "
                       "out, this page's budget (--embed-allocs, %u allocations by default over "
                       "all traces, about 12 bytes each) being spent.  A report of this trace "
                       "alone (--trace NAME), or a larger --embed-allocs, draws them.</p>\n",
                    n, shown, A.events, A.n - n, REPORT_ACTIVE_BUDGET);
        fputs("<div class=\"amv\"><canvas class=\"amc\" height=\"280\"></canvas>"
              "<canvas class=\"amo\" height=\"44\"></canvas></div>"
              "<div class=\"pin note\">Click a band to pin it.</div>\n",
              f);
        fprintf(f, "<script type=\"application/octet-stream\" class=\"amd\" data-t=\"%zu\" "
                   "data-n=\"%" PRIu64 "\" data-events=\"%" PRIu64 "\" data-q=\"%" PRIu64
                   "\" data-timed=\"%d\" data-full=\"%" PRIu64 "\">",
                g, n, shown, q, A.timed, A.events);
        uint64_t nb = active_write_allocs(f, &A, n, q);
        fprintf(f, "</script>\n<script type=\"application/json\" class=\"ams\" data-t=\"%zu\">", g);
        int64_t ns = active_write_stacks(f, &A, rd);
        if (ns < 0) {
            rc = gm_error_set(R->err, GM_ENOMEM, "out of memory");
        } else {
            char b1[32], b2[32];
            fprintf(f, "</script>\n<p class=\"note size\">Embedded for this view: %s of "
                       "allocations (%.1f bytes each), %s of frames and stacks (%zu distinct "
                       "stack%s).</p></figure>\n",
                    report_size(nb, b1, sizeof b1), n ? (double)nb / (double)n : 0.0,
                    report_size((uint64_t)ns, b2, sizeof b2), A.nstacks,
                    A.nstacks == 1 ? "" : "s");
            gr->active = n < A.n ? 2 : 1;
        }
    }
    active_free(&A);
    gm_reader_close(rd);
    return rc;
}
