/*
 * formats/csv.c — the CSV trace format (see gmsim/csv.h and docs/formats.md).
 *
 * Import reads records (RFC 4180: a quoted field may hold commas, doubled
 * quotes and line breaks, so a record can span lines) of exactly six fields
 * ts_ns,op,id,size,stream,device.  The CSV's allocation ids are the
 * application's: any unsigned integer, unique among live allocations, free
 * to be reused after its free.  A map of the live CSV ids (gm__idmap) turns
 * them into the store's ordinals (the k-th ALLOC gets ordinal k) and catches
 * an ALLOC of a live id and a FREE of an id that is not live, with the line
 * number, before the writer sees them.  Segment events are checked the
 * same way against the device's live address ranges (csv_segs_t): a
 * seg_alloc or seg_map may not overlap a live segment or mapped range, a
 * seg_free must name a live segment by its start and size, a seg_unmap
 * must lie inside one mapped range (adjacent maps count as one), and no
 * range may end past 2^64 or be empty.  A CSV has no starting layout, so
 * a segment freed or a range unmapped must be allocated or mapped earlier
 * in the file.  Stream handles and mark names are
 * interned through the writer.  Zero sizes go through unchanged: the writer
 * drops and counts them.
 *
 * Every row error is GM_EFORMAT "'FILE' line N: REASON", N the line on which
 * the record starts.  Memory is bounded by the longest record and the live
 * set, never by the file length.
 *
 * Export writes the header and one row per stored event: ids are the stored
 * ordinals, streams the raw handles (0x hex), a FREE carries the size of the
 * allocation it frees (import ignores it), a MARK its tag name in the id
 * column, quoted when needed.  Importing an export and exporting it again
 * gives the same bytes.  Neither stack frames nor event flags are carried.
 */
#include "gmsim/csv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gmsim/attrs.h"
#include "gmsim/text.h"
#include "base/bits.h"
#include "base/idmap.h"
#include "base/text.h"
#include "base/vec.h"

#define CSV_FIELDS 6
#define CSV_HEADER "ts_ns,op,id,size,stream,device"

static const char *const csv_names[CSV_FIELDS] = {"ts_ns", "op", "id", "size", "stream", "device"};
enum { CSV_TS, CSV_OP, CSV_ID, CSV_SIZE, CSV_STREAM, CSV_DEVICE };

/* ---- input: lines from a FILE or a buffer ---------------------------------- */

typedef struct csv_src {
    FILE *f;          /* NULL when reading from data/len */
    const char *data;
    size_t len, pos;
    char *line;       /* getline buffer */
    size_t line_cap;
} csv_src_t;

/* Next physical line without its '\n' in *out and *n (valid until the next
 * call); 0 at the end of input, 1 for a line, GM_EIO/GM_ENOMEM on failure. */
static int csv_src_line(csv_src_t *src, const char **out, size_t *n)
{
    if (src->f == NULL) {
        if (src->pos >= src->len)
            return 0;
        const char *p = src->data + src->pos;
        const char *nl = memchr(p, '\n', src->len - src->pos);
        size_t k = nl ? (size_t)(nl - p) : src->len - src->pos;
        src->pos += k + (nl != NULL);
        *out = p;
        *n = k;
        return 1;
    }
    errno = 0;
    ssize_t k = getline(&src->line, &src->line_cap, src->f);
    if (k < 0) {
        if (ferror(src->f))
            return errno == ENOMEM ? GM_ENOMEM : GM_EIO;
        return 0;
    }
    if (k > 0 && src->line[k - 1] == '\n')
        k--;
    *out = src->line;
    *n = (size_t)k;
    return 1;
}

/* ---- records and fields ---------------------------------------------------- */

typedef struct csv_reader {
    csv_src_t src;
    const char *filename;
    uint64_t line;     /* lines read so far */
    uint64_t rec_line; /* line on which the current record starts */
    char *rec;         /* the record's raw text, lines joined by '\n' */
    size_t rec_len, rec_cap;
    char *buf;         /* unquoted fields, each NUL-terminated */
    size_t buf_cap;
    const char *field[CSV_FIELDS];
    size_t nfields;
} csv_reader_t;

static int csv_error(csv_reader_t *rd, gm_error_t *err, const char *fmt, ...) GM_PRINTF(3, 4);

static int csv_error(csv_reader_t *rd, gm_error_t *err, const char *fmt, ...)
{
    char reason[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return gm_error_set(err, GM_EFORMAT, "'%s' line %" PRIu64 ": %s", rd->filename,
                        rd->rec_line, reason);
}

static int csv_reserve(char **buf, size_t *cap, size_t need)
{
    return GM_VEC_RESERVE(*buf, *cap, need, 256);
}

/* Where a record's scan stands at the end of a line: only inside a quoted
 * field does the record go on over the line break. */
enum { CSV_FIELD_START, CSV_UNQUOTED, CSV_QUOTED, CSV_QUOTE_IN_QUOTED };

static int csv_scan(int state, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        switch (state) {
        case CSV_FIELD_START:
            if (c == '"')
                state = CSV_QUOTED;
            else if (c != ' ' && c != '\t' && c != ',')
                state = CSV_UNQUOTED;
            break;
        case CSV_UNQUOTED:
            if (c == ',')
                state = CSV_FIELD_START;
            break;
        case CSV_QUOTED:
            if (c == '"')
                state = CSV_QUOTE_IN_QUOTED;
            break;
        default: /* after a quote inside a quoted field */
            state = c == '"' ? CSV_QUOTED : c == ',' ? CSV_FIELD_START : CSV_UNQUOTED;
            break;
        }
    }
    return state;
}

static int csv_read_error(csv_reader_t *rd, int rc, gm_error_t *err)
{
    char why[128];
    return gm_error_set(err, rc, "cannot read '%s': %s", rd->filename,
                        rc == GM_ENOMEM ? "out of memory" : gm_errno_text(errno, why, sizeof why));
}

/* Read the next record that is not blank or a comment into rd->rec.
 * 1 for a record, 0 at the end, negative on error (err filled). */
static int csv_next_record(csv_reader_t *rd, gm_error_t *err)
{
    for (;;) {
        const char *p;
        size_t n;
        int rc = csv_src_line(&rd->src, &p, &n);
        if (rc < 0)
            return csv_read_error(rd, rc, err);
        if (rc == 0)
            return 0;
        rd->line++;
        rd->rec_line = rd->line;
        if (rd->line == 1 && n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
            p += 3; /* UTF-8 byte order mark */
            n -= 3;
        }
        size_t i = 0;
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
            i++;
        if (i == n || p[i] == '#')
            continue; /* blank or comment: never part of a record */
        rd->rec_len = 0;
        int state = CSV_FIELD_START;
        for (;;) {
            if (csv_reserve(&rd->rec, &rd->rec_cap, rd->rec_len + n + 2))
                return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", rd->filename);
            memcpy(rd->rec + rd->rec_len, p, n);
            rd->rec_len += n;
            state = csv_scan(state, p, n);
            if (state != CSV_QUOTED)
                break;
            /* A quoted field goes on over the line break. */
            rd->rec[rd->rec_len++] = '\n';
            rc = csv_src_line(&rd->src, &p, &n);
            if (rc < 0)
                return csv_read_error(rd, rc, err);
            if (rc == 0)
                return csv_error(rd, err, "unterminated quoted field");
            rd->line++;
        }
        if (rd->rec_len > 0 && rd->rec[rd->rec_len - 1] == '\r')
            rd->rec_len--;
        rd->rec[rd->rec_len] = '\0';
        return 1;
    }
}

/* Split rd->rec into fields (unquoted, trimmed, in rd->buf).  0, or
 * GM_EFORMAT for a malformed record. */
static int csv_split(csv_reader_t *rd, gm_error_t *err)
{
    if (memchr(rd->rec, '\0', rd->rec_len) != NULL)
        return csv_error(rd, err, "NUL byte in the record");
    if (csv_reserve(&rd->buf, &rd->buf_cap, rd->rec_len + CSV_FIELDS + 1))
        return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", rd->filename);
    const char *p = rd->rec, *end = rd->rec + rd->rec_len;
    char *o = rd->buf;
    rd->nfields = 0;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        char *start = o;
        if (p < end && *p == '"') {
            for (p++;; p++) {
                if (p == end)
                    return csv_error(rd, err, "unterminated quoted field");
                if (*p == '"') {
                    if (p + 1 < end && p[1] == '"') {
                        *o++ = '"';
                        p++;
                        continue;
                    }
                    p++;
                    break;
                }
                *o++ = *p;
            }
            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            if (p < end && *p != ',')
                return csv_error(rd, err, "text after the closing quote of field %zu",
                                 rd->nfields + 1);
        } else {
            while (p < end && *p != ',') {
                if (*p == '\r') /* the line break did not split here: CR alone */
                    return csv_error(rd, err, "a carriage return inside the line (do its lines "
                                              "end in CR alone? end them in LF or CRLF)");
                *o++ = *p++;
            }
            while (o > start && (o[-1] == ' ' || o[-1] == '\t'))
                o--;
        }
        *o++ = '\0';
        if (rd->nfields < CSV_FIELDS)
            rd->field[rd->nfields] = start;
        rd->nfields++;
        if (p == end)
            break;
        p++; /* the comma */
    }
    if (rd->nfields != CSV_FIELDS)
        return csv_error(rd, err, "expected %d fields (" CSV_HEADER "), found %zu", CSV_FIELDS,
                         rd->nfields);
    return 0;
}

/* Field `col` as a number; an empty field gives `empty` when allowed
 * (empty_ok), else the error "missing NAME". */
static int csv_number(csv_reader_t *rd, int col, int empty_ok, uint64_t empty, uint64_t *out,
                      gm_error_t *err)
{
    const char *s = rd->field[col];
    if (*s == '\0') {
        if (empty_ok) {
            *out = empty;
            return 0;
        }
        return csv_error(rd, err, "missing %s", csv_names[col]);
    }
    int rc = gm_parse_u64(s, out);
    if (rc == GM_U64_RANGE)
        return csv_error(rd, err, "%s '%.64s' is too large", csv_names[col], s);
    if (rc)
        return csv_error(rd, err, "invalid %s '%.64s' (expected an unsigned integer)",
                         csv_names[col], s);
    return 0;
}

/* ---- the live-id map ------------------------------------------------------- */

/* gm__idmap reserves UINT64_MAX as its empty marker; that one CSV id is kept
 * aside in max_live/max_ord. */
typedef struct csv_live {
    gm__idmap_t map;
    int max_live;
    uint64_t max_ord;
} csv_live_t;

static int csv_live_put(csv_live_t *l, uint64_t id, uint64_t ord)
{
    if (id == UINT64_MAX) {
        l->max_live = 1;
        l->max_ord = ord;
        return 0;
    }
    return gm__idmap_put(&l->map, id, ord);
}

static int csv_live_has(csv_live_t *l, uint64_t id)
{
    uint64_t v;
    return id == UINT64_MAX ? l->max_live : gm__idmap_get(&l->map, id, &v);
}

static int csv_live_remove(csv_live_t *l, uint64_t id, uint64_t *ord)
{
    if (id == UINT64_MAX) {
        if (!l->max_live)
            return 0;
        l->max_live = 0;
        *ord = l->max_ord;
        return 1;
    }
    return gm__idmap_remove(&l->map, id, ord);
}

/* ---- the live segments ------------------------------------------------------ */

/*
 * The live segments (seg_alloc) and mapped ranges (seg_map, adjacent ones
 * merged) of every device: disjoint [start, end) ranges in a treap keyed
 * by (device, start), so that a hostile file of many segments costs
 * O(log n) per event.  Priorities come from a fixed xorshift sequence
 * (the same tree for the same file).
 */
typedef struct csv_seg {
    uint64_t start, end, line; /* line: where it was allocated or (first) mapped */
    uint32_t prio;
    uint16_t dev;
    uint8_t mapped;
    struct csv_seg *l, *r;
} csv_seg_t;

typedef struct csv_segs {
    csv_seg_t *root;
    uint32_t rng;
} csv_segs_t;

/* (dev, a) compared with n's key: <0, 0, >0. */
static int csv_seg_cmp(uint16_t dev, uint64_t a, const csv_seg_t *n)
{
    int c = gm__cmp_u64(dev, n->dev);
    return c ? c : gm__cmp_u64(a, n->start);
}

/* Split t into keys < (dev, a) and keys >= (dev, a). */
static void csv_seg_split(csv_seg_t *t, uint16_t dev, uint64_t a, csv_seg_t **lo, csv_seg_t **hi)
{
    if (t == NULL) {
        *lo = *hi = NULL;
    } else if (csv_seg_cmp(dev, a, t) > 0) {
        csv_seg_split(t->r, dev, a, &t->r, hi);
        *lo = t;
    } else {
        csv_seg_split(t->l, dev, a, lo, &t->l);
        *hi = t;
    }
}

/* Join a and b, every key of a below every key of b. */
static csv_seg_t *csv_seg_merge(csv_seg_t *a, csv_seg_t *b)
{
    if (a == NULL || b == NULL)
        return a ? a : b;
    if (a->prio > b->prio) {
        a->r = csv_seg_merge(a->r, b);
        return a;
    }
    b->l = csv_seg_merge(a, b->l);
    return b;
}

/* Insert a new range; 0, or -1 out of memory. */
static int csv_seg_insert(csv_segs_t *s, uint16_t dev, uint64_t start, uint64_t end, int mapped,
                          uint64_t line)
{
    csv_seg_t *n = malloc(sizeof *n), *lo, *hi;
    if (n == NULL)
        return -1;
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 17;
    s->rng ^= s->rng << 5;
    *n = (csv_seg_t){start, end, line, s->rng, dev, (uint8_t)mapped, NULL, NULL};
    csv_seg_split(s->root, dev, start, &lo, &hi);
    s->root = csv_seg_merge(csv_seg_merge(lo, n), hi);
    return 0;
}

/* Remove (and free) the range keyed (dev, start), which is present. */
static void csv_seg_erase(csv_seg_t **t, uint16_t dev, uint64_t start)
{
    while (*t != NULL) {
        int c = csv_seg_cmp(dev, start, *t);
        if (c == 0) {
            csv_seg_t *gone = *t;
            *t = csv_seg_merge(gone->l, gone->r);
            free(gone);
            return;
        }
        t = c < 0 ? &(*t)->l : &(*t)->r;
    }
}

/* The range of dev with the largest start <= a (below: < a), or NULL. */
static csv_seg_t *csv_seg_before(const csv_segs_t *s, uint16_t dev, uint64_t a, int strict)
{
    csv_seg_t *t = s->root, *best = NULL;
    while (t != NULL) {
        int c = csv_seg_cmp(dev, a, t);
        if (c > 0 || (c == 0 && !strict)) {
            best = t;
            t = t->r;
        } else {
            t = t->l;
        }
    }
    return best && best->dev == dev ? best : NULL;
}

/* The range of dev with the smallest start >= a, or NULL. */
static csv_seg_t *csv_seg_after(const csv_segs_t *s, uint16_t dev, uint64_t a)
{
    csv_seg_t *t = s->root, *best = NULL;
    while (t != NULL) {
        if (csv_seg_cmp(dev, a, t) <= 0) {
            best = t;
            t = t->l;
        } else {
            t = t->r;
        }
    }
    return best && best->dev == dev ? best : NULL;
}

static void csv_seg_free_all(csv_seg_t *t)
{
    while (t != NULL) { /* the left spine iteratively, the right one recursively */
        csv_seg_free_all(t->r);
        csv_seg_t *l = t->l;
        free(t);
        t = l;
    }
}

/* What a live range is, for messages. */
static const char *csv_seg_what(const csv_seg_t *n)
{
    return n->mapped ? "the range mapped" : "the segment allocated";
}

/* Check segment event ev (address ev->addr, ev->size bytes, on
 * ev->device) against the live ranges and apply it; 0, or an error
 * naming the line (GM_EFORMAT) or GM_ENOMEM. */
static int csv_seg_apply(csv_reader_t *rd, csv_segs_t *s, const gm_event_t *ev, gm_error_t *err)
{
    const char *op = gm_op_name(ev->op);
    uint64_t a = ev->addr, e = a + ev->size;
    uint16_t dev = ev->device;
    if (ev->size == 0)
        return csv_error(rd, err, "%s at 0x%" PRIx64 " of 0 bytes", op, a);
    if (ev->size > UINT64_MAX - a)
        return csv_error(rd, err, "%s at 0x%" PRIx64 " of %" PRIu64 " bytes ends past 2^64", op,
                         a, ev->size);
    csv_seg_t *p = csv_seg_before(s, dev, a, 0);
    if (ev->op == GM_OP_SEG_ALLOC || ev->op == GM_OP_SEG_MAP) {
        csv_seg_t *n = csv_seg_after(s, dev, a);
        csv_seg_t *hit = p && p->end > a ? p : n && n->start < e ? n : NULL;
        if (hit)
            return csv_error(rd, err,
                             "%s at 0x%" PRIx64 " of %" PRIu64 " bytes overlaps %s on line %" PRIu64
                             " (0x%" PRIx64 " to 0x%" PRIx64 ")",
                             op, a, ev->size, csv_seg_what(hit), hit->line, hit->start, hit->end);
        uint64_t start = a, end = e, line = rd->rec_line;
        if (ev->op == GM_OP_SEG_MAP) { /* one range with the mapped ones it touches */
            if (p && p->mapped && p->end == a) {
                start = p->start;
                line = p->line;
                csv_seg_erase(&s->root, dev, p->start);
            }
            if (n && n->mapped && n->start == e) {
                end = n->end;
                csv_seg_erase(&s->root, dev, n->start);
            }
        }
        if (csv_seg_insert(s, dev, start, end, ev->op == GM_OP_SEG_MAP, line))
            return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", rd->filename);
        return 0;
    }
    if (ev->op == GM_OP_SEG_FREE) {
        if (p == NULL || p->mapped || p->start != a)
            return csv_error(rd, err,
                             "seg_free of 0x%" PRIx64 " which is not a live segment (never "
                             "allocated, or already freed)",
                             a);
        if (p->end - p->start != ev->size)
            return csv_error(rd, err,
                             "seg_free of 0x%" PRIx64 " of %" PRIu64 " bytes, but the segment "
                             "allocated on line %" PRIu64 " has %" PRIu64,
                             a, ev->size, p->line, p->end - p->start);
        csv_seg_erase(&s->root, dev, a);
        return 0;
    }
    /* GM_OP_SEG_UNMAP: inside one mapped range, which keeps what is left */
    if (p == NULL || !p->mapped || p->end < e)
        return csv_error(rd, err,
                         "seg_unmap at 0x%" PRIx64 " of %" PRIu64 " bytes which is not mapped "
                         "(never mapped, or already unmapped)",
                         a, ev->size);
    uint64_t pstart = p->start, pend = p->end, pline = p->line;
    csv_seg_erase(&s->root, dev, pstart);
    if ((pstart < a && csv_seg_insert(s, dev, pstart, a, 1, pline)) ||
        (e < pend && csv_seg_insert(s, dev, e, pend, 1, pline)))
        return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", rd->filename);
    return 0;
}

/* ---- import ---------------------------------------------------------------- */

static int csv_is_header(const csv_reader_t *rd)
{
    for (int i = 0; i < CSV_FIELDS; i++)
        if (strcasecmp(rd->field[i], csv_names[i]) != 0)
            return 0;
    return 1;
}

static int csv_import_src(csv_reader_t *rd, gm_writer_t *w, gm_error_t *err)
{
    csv_live_t live = {.max_live = 0};
    gm__idmap_init(&live.map);
    csv_segs_t segs = {NULL, 2463534242u};
    uint64_t next_ord = 0, last_handle = 0;
    uint32_t last_stream = 0;
    int have_stream = 0, rc, first = 1;

    rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "csv", err);
    while (rc == 0 && (rc = csv_next_record(rd, err)) == 1) {
        if ((rc = csv_split(rd, err)))
            break;
        char opname[16];
        size_t k = 0;
        for (const char *s = rd->field[CSV_OP]; *s && k + 1 < sizeof opname; s++)
            opname[k++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
        opname[k] = '\0';
        int op = strlen(rd->field[CSV_OP]) < sizeof opname ? gm_op_parse(opname) : -1;
        if (first) {
            first = 0;
            if (strcasecmp(rd->field[CSV_OP], "op") == 0) {
                if (csv_is_header(rd))
                    continue;
                rc = csv_error(rd, err, "unexpected header (expected " CSV_HEADER ")");
                break;
            }
        }
        if (op < 0) {
            rc = csv_error(rd, err,
                           "unknown op '%.32s' (expected alloc, free, mark, seg_alloc, seg_free, "
                           "seg_map or seg_unmap)",
                           rd->field[CSV_OP]);
            break;
        }

        gm_event_t ev = {.op = (uint8_t)op};
        uint64_t v, handle = 0;
        if ((rc = csv_number(rd, CSV_TS, 1, 0, &ev.ts_ns, err)) ||
            (rc = csv_number(rd, CSV_DEVICE, 1, 0, &v, err)))
            break;
        if (v > UINT16_MAX) {
            rc = csv_error(rd, err, "device %" PRIu64 " is out of range (at most 65535)", v);
            break;
        }
        ev.device = (uint16_t)v;
        if (op != GM_OP_MARK) {
            if ((rc = csv_number(rd, CSV_STREAM, 1, 0, &handle, err)))
                break;
            if (!have_stream || handle != last_handle) {
                if ((rc = gm_writer_stream(w, handle, &last_stream, err)))
                    break;
                have_stream = 1;
                last_handle = handle;
            }
            ev.stream = last_stream;
        }

        switch (op) {
        case GM_OP_ALLOC: {
            uint64_t id;
            if ((rc = csv_number(rd, CSV_ID, 0, 0, &id, err)) ||
                (rc = csv_number(rd, CSV_SIZE, 0, 0, &ev.size, err)))
                break;
            if (ev.size > GM_SIZE_LIMIT) {
                rc = csv_error(rd, err, "size %" PRIu64 " is above the limit of 2^48 bytes",
                               ev.size);
                break;
            }
            if (csv_live_has(&live, id)) {
                rc = csv_error(rd, err, "alloc of id %" PRIu64 " which is already live", id);
                break;
            }
            if (csv_live_put(&live, id, next_ord)) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", rd->filename);
                break;
            }
            ev.id = next_ord++;
            break;
        }
        case GM_OP_FREE: {
            uint64_t id;
            if ((rc = csv_number(rd, CSV_ID, 0, 0, &id, err)))
                break;
            if (!csv_live_remove(&live, id, &ev.id))
                rc = csv_error(rd, err,
                               "free of id %" PRIu64
                               " which is not live (never allocated, or already freed)",
                               id);
            break;
        }
        case GM_OP_MARK:
            if (rd->field[CSV_ID][0] == '\0') {
                rc = csv_error(rd, err, "mark without a name (the id column holds it)");
                break;
            }
            rc = gm_writer_tag(w, rd->field[CSV_ID], &ev.tag, err);
            break;
        default: /* segment events: the id column holds the address */
            if ((rc = csv_number(rd, CSV_ID, 1, 0, &ev.addr, err)) ||
                (rc = csv_number(rd, CSV_SIZE, 0, 0, &ev.size, err)))
                break;
            if (ev.size > GM_SIZE_LIMIT)
                rc = csv_error(rd, err, "size %" PRIu64 " is above the limit of 2^48 bytes",
                               ev.size);
            else
                rc = csv_seg_apply(rd, &segs, &ev, err);
            break;
        }
        if (rc)
            break;
        if ((rc = gm_writer_add(w, &ev, err))) {
            gm_error_prefix(err, "'%s' line %" PRIu64, rd->filename, rd->rec_line);
            break;
        }
    }
    gm__idmap_release(&live.map);
    csv_seg_free_all(segs.root);
    free(rd->src.line);
    free(rd->rec);
    free(rd->buf);
    return rc < 0 ? rc : 0;
}

int gm_csv_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err)
{
    gm_writer_t *w;
    int rc = gm_import_begin(t, NULL, &w, err);
    if (rc)
        return rc;
    csv_reader_t rd = {.src = {.f = in}, .filename = filename};
    if ((rc = csv_import_src(&rd, w, err)))
        return rc; /* the target aborts the open trace */
    return gm_import_end(t, err);
}

int gm_csv_import_buffer(const char *data, size_t len, const char *filename, gm_writer_t *w,
                         gm_error_t *err)
{
    csv_reader_t rd = {.src = {.data = data, .len = len}, .filename = filename};
    return csv_import_src(&rd, w, err);
}

/* ---- export ---------------------------------------------------------------- */

/* Append v in decimal (or 0x hex) at p; returns the new end. */
static char *csv_put_u64(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *csv_put_hex(char *p, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    int n = 0;
    *p++ = '0';
    *p++ = 'x';
    do {
        tmp[n++] = digits[v & 15];
        v >>= 4;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* A field needs quotes if it holds a separator, a quote or a line break, or
 * if import would trim or skip part of it. */
static int csv_needs_quotes(const char *s)
{
    if (*s == '\0' || *s == ' ' || *s == '\t' || *s == '#')
        return 1;
    size_t n = strlen(s);
    if (s[n - 1] == ' ' || s[n - 1] == '\t')
        return 1;
    return strpbrk(s, ",\"\r\n") != NULL;
}

static void csv_write_field(FILE *out, const char *s)
{
    if (!csv_needs_quotes(s)) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

int gm_csv_export(gm_reader_t *r, FILE *out, gm_error_t *err)
{
    gm__idmap_t sizes; /* live ordinal → size, so that a FREE row shows it */
    gm__idmap_init(&sizes);
    int rc = 0;
    fputs(CSV_HEADER "\n", out);
    const gm_event_t *evs;
    size_t n;
    uint64_t index = 0;
    while (rc == 0 && (rc = gm_reader_next(r, &evs, &n, err)) == 0 && n > 0) {
        for (size_t i = 0; i < n && rc == 0; i++, index++) {
            const gm_event_t *ev = &evs[i];
            const char *opname = gm_op_name(ev->op);
            if (opname == NULL) {
                rc = gm_error_set(err, GM_ECORRUPT, "event %" PRIu64 ": unknown op %u", index,
                                  ev->op);
                break;
            }
            char line[160], *p = line;
            p = csv_put_u64(p, ev->ts_ns);
            *p++ = ',';
            size_t k = strlen(opname);
            memcpy(p, opname, k);
            p += k;
            *p++ = ',';
            if (ev->op == GM_OP_MARK) {
                const char *tag = gm_reader_tag(r, ev->tag);
                if (tag == NULL) {
                    rc = gm_error_set(err, GM_ECORRUPT,
                                      "event %" PRIu64 ": mark of unknown tag index %" PRIu32,
                                      index, ev->tag);
                    break;
                }
                fwrite(line, 1, (size_t)(p - line), out);
                csv_write_field(out, tag);
                p = line;
                *p++ = ',';
                *p++ = ',';
                *p++ = ',';
            } else {
                uint64_t size = ev->size;
                if (ev->op == GM_OP_ALLOC) {
                    p = csv_put_u64(p, ev->id);
                    if (gm__idmap_put(&sizes, ev->id, ev->size)) {
                        rc = gm_error_set(err, GM_ENOMEM, "out of memory exporting csv");
                        break;
                    }
                } else if (ev->op == GM_OP_FREE) {
                    p = csv_put_u64(p, ev->id);
                    if (!gm__idmap_remove(&sizes, ev->id, &size))
                        size = 0;
                } else {
                    p = csv_put_hex(p, ev->addr);
                }
                *p++ = ',';
                p = csv_put_u64(p, size);
                *p++ = ',';
                p = csv_put_hex(p, gm_reader_stream(r, ev->stream));
                *p++ = ',';
            }
            p = csv_put_u64(p, ev->device);
            *p++ = '\n';
            fwrite(line, 1, (size_t)(p - line), out);
        }
    }
    gm__idmap_release(&sizes);
    return rc ? rc : gm__text_flushed(out, "csv", err);
}

/* CSV: the first line that is not blank or a comment is a header (its
 * second field is "op") or a row whose second field is a known op. */
int gm_csv_sniff(const void *data, size_t len)
{
    const char *head = data;
    if (memchr(head, '\0', len) != NULL)
        return 0;
    const char *p = head, *end = head + len;
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
        p += 3;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        const char *q = p;
        while (q < e && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == e || *q == '#') {
            p = nl ? nl + 1 : end;
            continue;
        }
        /* The op is the second field. */
        const char *c = memchr(q, ',', (size_t)(e - q));
        if (c == NULL)
            return 0;
        char op[16];
        size_t k = 0;
        for (const char *s = c + 1; s < e && *s != ',' && k + 1 < sizeof op; s++)
            if (*s != ' ' && *s != '\t')
                op[k++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
        op[k] = '\0';
        return gm_op_parse(op) >= 0 || strcmp(op, "op") == 0; /* a row, or a header */
    }
    return 0;
}
