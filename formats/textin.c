/*
 * formats/textin.c — line reading and field helpers for the line-oriented
 * importers (see formats/textin.h).  Memory is the longest line (at most
 * GM__TEXTIN_LINE_MAX) and the live set, never the file length.
 */
#include "formats/textin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gmsim/attrs.h"
#include "gmsim/text.h"
#include "base/vec.h"

void gm__textin_init(gm__textin_t *t, FILE *f, const char *filename)
{
    memset(t, 0, sizeof *t);
    t->f = f;
    t->filename = filename;
}

void gm__textin_release(gm__textin_t *t)
{
    free(t->buf);
    t->buf = NULL;
    t->cap = 0;
}

int gm__textin_error(const gm__textin_t *t, gm_error_t *err, const char *fmt, ...)
{
    char reason[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return gm_error_set(err, GM_EFORMAT, "'%s' line %" PRIu64 ": %s", t->filename, t->line,
                        reason);
}

static int textin_is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

int gm__textin_next(gm__textin_t *t, char **line, size_t *len, gm_error_t *err)
{
    size_t n = 0;
    int c = 0;
    t->offset = t->next;
    for (;;) {
        c = getc_unlocked(t->f);
        if (c == EOF)
            break;
        t->next++;
        if (c == '\n')
            break;
        if (n + 2 > t->cap) {
            if (t->cap >= GM__TEXTIN_LINE_MAX) {
                t->line++;
                return gm__textin_error(t, err, "line longer than %u bytes", GM__TEXTIN_LINE_MAX);
            }
            if (GM_VEC_RESERVE(t->buf, t->cap, n + 2, 256))
                return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", t->filename);
        }
        if (c == '\0') {
            t->line++;
            return gm__textin_error(t, err, "NUL byte at byte offset %" PRIu64, t->next - 1);
        }
        t->buf[n++] = (char)c;
    }
    if (c == EOF && ferror(t->f)) {
        char why[128];
        return gm_error_set(err, GM_EIO, "cannot read '%s': %s", t->filename,
                            gm_errno_text(errno, why, sizeof why));
    }
    if (c == EOF && n == 0)
        return 0;
    t->line++;
    if (t->buf == NULL) { /* an empty first line */
        if ((t->buf = malloc(256)) == NULL)
            return gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", t->filename);
        t->cap = 256;
    }
    t->buf[n] = '\0';
    char *p = t->buf;
    if (t->line == 1 && n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
        p += 3;
        n -= 3;
    }
    while (n > 0 && textin_is_blank(*p)) {
        p++;
        n--;
    }
    while (n > 0 && textin_is_blank(p[n - 1]))
        p[--n] = '\0';
    *line = p;
    *len = n;
    return 1;
}

int gm__textin_rewind(gm__textin_t *t, gm_error_t *err)
{
    if (fseek(t->f, 0, SEEK_SET) != 0)
        return gm_error_set(err, GM_EINVAL, "cannot read '%s' twice: the input is not seekable",
                            t->filename);
    clearerr(t->f);
    t->line = 0;
    t->offset = t->next = 0;
    return 0;
}

size_t gm__textin_split(char *line, char sep, char **fields, size_t max)
{
    size_t n = 0;
    char *p = line;
    if (sep == ' ') {
        for (;;) {
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p == '\0')
                return n;
            char *start = p;
            while (*p && *p != ' ' && *p != '\t')
                p++;
            if (n < max)
                fields[n] = start;
            n++;
            if (*p == '\0')
                return n;
            *p++ = '\0';
        }
    }
    for (;;) {
        char *end = strchr(p, sep);
        if (end)
            *end = '\0';
        char *s = p;
        while (*s == ' ' || *s == '\t')
            s++;
        size_t k = strlen(s);
        while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t'))
            s[--k] = '\0';
        if (n < max)
            fields[n] = s;
        n++;
        if (end == NULL)
            return n;
        p = end + 1;
    }
}

int gm__textin_addr(const char *s, uint64_t *out, int *null)
{
    static const char *const nulls[] = {"(nil)", "nil", "null", "nullptr", "(null)"};
    *null = 0;
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++) {
        if (strcasecmp(s, nulls[i]) == 0) {
            *out = 0;
            *null = 1;
            return 0;
        }
    }
    if (gm_parse_u64(s, out) != 0)
        return -1;
    *null = *out == 0;
    return 0;
}

const char *gm__textin_sniff_header(const void *head, size_t len, const char *hdr)
{
    const char *p = head, *end = p + len;
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
        p += 3;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    size_t k = strlen(hdr);
    if ((size_t)(end - p) < k || strncasecmp(p, hdr, k) != 0)
        return NULL;
    return p + k;
}

int gm__textin_name_device(const char *filename)
{
    const char *base = strrchr(filename, '/');
    base = base ? base + 1 : filename;
    const char *best = NULL;
    for (const char *p = base; (p = strstr(p, "dev")) != NULL; p += 3)
        if (p > base && (p[-1] == '.' || p[-1] == '_') && p[3] >= '0' && p[3] <= '9')
            best = p + 3;
    if (best == NULL)
        return -1;
    long v = 0;
    for (; *best >= '0' && *best <= '9'; best++) {
        v = v * 10 + (*best - '0');
        if (v > 65535)
            return -2;
    }
    return (int)v;
}

void gm__addrlive_init(gm__addrlive_t *l)
{
    gm__idmap_init(&l->map);
    l->max_live = 0;
    l->max_val = 0;
}

void gm__addrlive_release(gm__addrlive_t *l) { gm__idmap_release(&l->map); }

int gm__addrlive_put(gm__addrlive_t *l, uint64_t addr, uint64_t val)
{
    if (addr == UINT64_MAX) {
        l->max_live = 1;
        l->max_val = val;
        return 0;
    }
    return gm__idmap_put(&l->map, addr, val) ? GM_ENOMEM : 0;
}

int gm__addrlive_get(const gm__addrlive_t *l, uint64_t addr, uint64_t *val)
{
    if (addr == UINT64_MAX) {
        if (l->max_live)
            *val = l->max_val;
        return l->max_live;
    }
    return gm__idmap_get(&l->map, addr, val);
}

int gm__addrlive_remove(gm__addrlive_t *l, uint64_t addr, uint64_t *val)
{
    if (addr == UINT64_MAX) {
        if (!l->max_live)
            return 0;
        l->max_live = 0;
        if (val)
            *val = l->max_val;
        return 1;
    }
    return gm__idmap_remove(&l->map, addr, val);
}

/* ---- the two-pass import of address-based logs ----------------------------- */

typedef struct addrlog_pre {
    uint64_t addr, size, stream;
} addrlog_pre_t;

typedef struct addrlog {
    gm__textin_t in;
    const gm__addrlog_format_t *fmt;
    void *ctx;
    addrlog_pre_t *pre; /* pre-existing allocations, in order of their frees */
    size_t npre, cappre;
    uint64_t first_ts;
    int have_ts;
    uint64_t null_frees_ignored;
} addrlog_t;

/* Next record of the current pass: 1 and *rec, 0 at the end, or negative. */
static int addrlog_next(addrlog_t *a, gm__addrlog_rec_t *rec, gm_error_t *err)
{
    for (;;) {
        char *line;
        size_t len;
        int rc = gm__textin_next(&a->in, &line, &len, err);
        if (rc <= 0)
            return rc;
        if (len == 0)
            continue;
        memset(rec, 0, sizeof *rec);
        if ((rc = a->fmt->parse(a->ctx, &a->in, line, len, rec, err)))
            return rc;
        if (rec->kind != GM__REC_SKIP)
            return 1;
    }
}

/* Pass 1: pairing checks; the pre-existing allocations into a->pre. */
static int addrlog_scan(addrlog_t *a, gm_error_t *err)
{
    gm__addrlive_t live, seen; /* live: addr → line of its ALLOC */
    gm__addrlive_init(&live);
    gm__addrlive_init(&seen);
    uint64_t null_live = 0;
    gm__addrlog_rec_t rec;
    int rc;
    while ((rc = addrlog_next(a, &rec, err)) == 1) {
        if (!a->have_ts) {
            a->have_ts = 1;
            a->first_ts = rec.ts_ns;
        }
        uint64_t v;
        if (rec.kind == GM__REC_ALLOC) {
            if (rec.null) {
                null_live++;
                continue;
            }
            if (gm__addrlive_get(&live, rec.addr, &v)) {
                rc = gm__textin_error(&a->in, err,
                                      "allocation at 0x%" PRIx64
                                      " which is live (allocated at line %" PRIu64
                                      " and not freed)",
                                      rec.addr, v);
                break;
            }
            if (gm__addrlive_put(&live, rec.addr, a->in.line) ||
                gm__addrlive_put(&seen, rec.addr, 1)) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", a->in.filename);
                break;
            }
        } else if (rec.kind == GM__REC_FREE) {
            if (rec.null) {
                if (null_live > 0)
                    null_live--;
                continue;
            }
            if (gm__addrlive_remove(&live, rec.addr, NULL))
                continue;
            if (gm__addrlive_get(&seen, rec.addr, &v)) {
                rc = gm__textin_error(&a->in, err,
                                      "free of 0x%" PRIx64 " which is not live (already freed)",
                                      rec.addr);
                break;
            }
            if (GM_VEC_RESERVE(a->pre, a->cappre, a->npre + 1, 64)) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'",
                                  a->in.filename);
                break;
            }
            a->pre[a->npre++] = (addrlog_pre_t){rec.addr, rec.size, rec.stream};
            if (gm__addrlive_put(&seen, rec.addr, 1)) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", a->in.filename);
                break;
            }
        }
    }
    gm__addrlive_release(&live);
    gm__addrlive_release(&seen);
    return rc < 0 ? rc : 0;
}

/* Intern a stream handle, caching the last one. */
typedef struct addrlog_streams {
    uint64_t handle;
    uint32_t index;
    int have;
} addrlog_streams_t;

static int addrlog_stream(gm_writer_t *w, addrlog_streams_t *c, uint64_t handle, uint32_t *index,
                          gm_error_t *err)
{
    if (!c->have || c->handle != handle) {
        int rc = gm_writer_stream(w, handle, &c->index, err);
        if (rc)
            return rc;
        c->have = 1;
        c->handle = handle;
    }
    *index = c->index;
    return 0;
}

/* Pass 2: write the trace. */
static int addrlog_write(addrlog_t *a, gm_writer_t *w, int device, gm_error_t *err)
{
    gm__addrlive_t live; /* addr → ordinal */
    gm__addrlive_init(&live);
    uint64_t *nulls = NULL; /* ordinals of live null-pointer ALLOCs, a FIFO */
    size_t nnull_head = 0, nnull = 0, capnull = 0;
    addrlog_streams_t sc = {0};
    uint64_t next_ord = 0;
    int rc = 0;
    uint16_t dev = device >= 0 ? (uint16_t)device : 0;
    for (size_t i = 0; i < a->npre && rc == 0; i++) {
        gm_event_t ev = {.op = GM_OP_ALLOC, .flags = GM_EVENT_PREEXISTING, .device = dev};
        ev.ts_ns = a->first_ts;
        ev.id = next_ord++;
        ev.size = a->pre[i].size;
        ev.addr = a->pre[i].addr;
        if ((rc = addrlog_stream(w, &sc, a->pre[i].stream, &ev.stream, err)) ||
            (rc = gm_writer_add(w, &ev, err)))
            break;
        if (gm__addrlive_put(&live, ev.addr, ev.id))
            rc = gm_error_set(err, GM_ENOMEM, "out of memory reading '%s'", a->in.filename);
    }
    if (rc == 0 && a->npre)
        rc = gm_writer_attr_int(w, GM_ATTR_PREEXISTING, (int64_t)a->npre, err);
    gm__addrlog_rec_t rec;
    while (rc == 0 && (rc = addrlog_next(a, &rec, err)) == 1) {
        rc = 0;
        gm_event_t ev = {.ts_ns = rec.ts_ns, .device = dev};
        if (rec.kind == GM__REC_MARK) {
            ev.op = GM_OP_MARK;
            rc = gm_writer_tag(w, rec.tag, &ev.tag, err);
        } else if (rec.kind == GM__REC_ALLOC) {
            ev.op = GM_OP_ALLOC;
            ev.id = next_ord++;
            ev.size = rec.size;
            ev.addr = rec.addr;
            rc = addrlog_stream(w, &sc, rec.stream, &ev.stream, err);
            if (rc == 0 && rec.null) {
                if (nnull_head + nnull == capnull) {
                    if (nnull_head > 0) {
                        memmove(nulls, nulls + nnull_head, nnull * sizeof *nulls);
                        nnull_head = 0;
                    } else if (GM_VEC_RESERVE(nulls, capnull, nnull + 1, 16)) {
                        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                        break;
                    }
                }
                nulls[nnull_head + nnull++] = ev.id;
            } else if (rc == 0 && gm__addrlive_put(&live, rec.addr, ev.id)) {
                rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            }
        } else {
            ev.op = GM_OP_FREE;
            ev.addr = rec.addr;
            if (rec.null) {
                if (nnull == 0) {
                    a->null_frees_ignored++;
                    continue;
                }
                ev.id = nulls[nnull_head++];
                nnull--;
            } else if (!gm__addrlive_remove(&live, rec.addr, &ev.id)) {
                /* Pass 1 made every free match. */
                rc = gm__textin_error(&a->in, err, "free of 0x%" PRIx64 " which is not live",
                                      rec.addr);
                break;
            }
            rc = addrlog_stream(w, &sc, rec.stream, &ev.stream, err);
        }
        if (rc == 0)
            rc = gm_writer_add(w, &ev, err);
        if (rc && rc != GM_ENOMEM && strstr(err->msg, a->in.filename) == NULL)
            gm_error_prefix(err, "'%s' line %" PRIu64, a->in.filename, a->in.line);
    }
    free(nulls);
    gm__addrlive_release(&live);
    return rc < 0 ? rc : 0;
}

int gm__addrlog_import(FILE *in, const char *filename, gm_import_target_t *t,
                       const gm__addrlog_format_t *fmt, void *ctx, gm_error_t *err)
{
    int device = gm__textin_name_device(filename);
    if (device == -2) /* not dropped for device 0 */
        return gm_error_set(err, GM_EFORMAT, "'%s': the device in the file name is out of range "
                            "(at most 65535)", filename);
    addrlog_t a = {.fmt = fmt, .ctx = ctx};
    gm__textin_init(&a.in, in, filename);
    gm_writer_t *w = NULL;
    fmt->reset(ctx);
    int rc = addrlog_scan(&a, err);
    if (rc == 0 && (rc = gm__textin_rewind(&a.in, err)) == 0) {
        fmt->reset(ctx);
        rc = gm_import_begin(t, NULL, &w, err);
    }
    if (rc == 0)
        rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, fmt->source, err);
    if (rc == 0 && device >= 0)
        rc = gm_writer_attr_int(w, GM_ATTR_DEVICE, device, err);
    if (rc == 0)
        rc = addrlog_write(&a, w, device, err);
    if (rc == 0 && a.null_frees_ignored)
        rc = gm_writer_attr_int(w, "null_frees_ignored", (int64_t)a.null_frees_ignored, err);
    if (rc == 0 && fmt->attrs)
        rc = fmt->attrs(ctx, w, err);
    if (rc == 0)
        rc = gm_import_end(t, err);
    free(a.pre);
    gm__textin_release(&a.in);
    return rc;
}
