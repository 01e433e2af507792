/*
 * formats/rmm.c — RAPIDS RMM memory event logs (logging_resource_adaptor,
 * RMM_LOG_FILE): CSV with the header Thread,Time,Action,Pointer,Size,Stream
 * and one row per allocate / free (spelled "deallocate" by newer RMM) /
 * "allocate failure".
 *
 * Columns are found by name in the header (any order, case-insensitive;
 * unknown columns are ignored; Action, Pointer and Size are required).
 * Time is wall-clock "HH:MM:SS.ffffff" (spdlog's %H:%M:%S.%f) — a time
 * earlier than the previous row by more than 12 hours is taken as the next
 * day — or seconds since the epoch with a fraction ("1634567890.123456");
 * ts_ns is that time in nanoseconds.  Pointer is %p: hex, or "(nil)".
 * Size is decimal bytes; the size of a free row is not used (the
 * allocation's is).  Stream is the cudaStream_t as hex (0 = the default
 * stream).  Thread is dropped.
 *
 * "allocate failure" rows become MARK "alloc_failure" (the attribute
 * "alloc_failures" counts them): the request was refused by the upstream
 * resource and nothing was allocated.  Pairing by address, pre-existing
 * allocations and null pointers: the two-pass rules of formats/textin.h.
 * A device in the file name (RMM's Python writes "log.dev1.csv") becomes
 * the trace's device.  Every row error is "'FILE' line N: REASON".
 */
#include "gmsim/formats.h"

#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "gmsim/text.h"
#include "formats/textin.h"

enum { RMM_THREAD, RMM_TIME, RMM_ACTION, RMM_POINTER, RMM_SIZE, RMM_STREAM, RMM_NCOLS };
static const char *const rmm_names[RMM_NCOLS] = {"Thread", "Time",  "Action",
                                                 "Pointer", "Size", "Stream"};
#define RMM_MAX_FIELDS 32

typedef struct rmm_ctx {
    int have_header;
    int col[RMM_NCOLS]; /* field index of each column, -1 when absent */
    size_t nfields;     /* fields in the header */
    uint64_t last_ts, day_ns;
    int have_ts;
    uint64_t failures;
} rmm_ctx_t;

static void rmm_reset(void *c)
{
    rmm_ctx_t *ctx = c;
    memset(ctx, 0, sizeof *ctx);
}

/* "HH:MM:SS[.f…]" or "SECONDS[.f…]" → ns; -1 when malformed. */
static int rmm_time(const char *s, uint64_t *ns)
{
    uint64_t parts[3] = {0, 0, 0};
    int nparts = 0;
    const char *p = s;
    for (;;) {
        if (*p < '0' || *p > '9')
            return -1;
        uint64_t v = 0;
        int digits = 0;
        for (; *p >= '0' && *p <= '9'; p++, digits++) {
            if (digits >= 18)
                return -1;
            v = v * 10 + (uint64_t)(*p - '0');
        }
        parts[nparts++] = v;
        if (*p == ':' && nparts < 3) {
            p++;
            continue;
        }
        break;
    }
    uint64_t frac = 0;
    if (*p == '.') {
        p++;
        int digits = 0;
        for (; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 9)
                frac = frac * 10 + (uint64_t)(*p - '0');
        if (digits == 0)
            return -1;
        for (; digits < 9; digits++)
            frac *= 10;
    }
    if (*p != '\0')
        return -1;
    uint64_t sec;
    if (nparts == 1) {
        if (parts[0] > UINT64_C(9000000000)) /* past the year 2255 */
            return -1;
        sec = parts[0];
    } else if (nparts == 3) {
        if (parts[0] > 23 || parts[1] > 59 || parts[2] > 60)
            return -1;
        sec = parts[0] * 3600 + parts[1] * 60 + parts[2];
    } else {
        return -1;
    }
    *ns = sec * UINT64_C(1000000000) + frac;
    return 0;
}

static int rmm_header(rmm_ctx_t *ctx, const gm__textin_t *in, char **f, size_t n,
                      gm_error_t *err)
{
    for (int c = 0; c < RMM_NCOLS; c++)
        ctx->col[c] = -1;
    for (size_t i = 0; i < n && i < RMM_MAX_FIELDS; i++)
        for (int c = 0; c < RMM_NCOLS; c++)
            if (strcasecmp(f[i], rmm_names[c]) == 0 && ctx->col[c] < 0)
                ctx->col[c] = (int)i;
    if (ctx->col[RMM_ACTION] < 0 || ctx->col[RMM_POINTER] < 0 || ctx->col[RMM_SIZE] < 0)
        return gm__textin_error(in, err,
                                "expected the header Thread,Time,Action,Pointer,Size,Stream "
                                "(with at least Action, Pointer and Size)");
    ctx->nfields = n;
    ctx->have_header = 1;
    return 0;
}

static int rmm_parse(void *c, const gm__textin_t *in, char *line, size_t len,
                     gm__addrlog_rec_t *rec, gm_error_t *err)
{
    (void)len;
    rmm_ctx_t *ctx = c;
    char *f[RMM_MAX_FIELDS];
    if (line[0] == '#')
        return 0;
    size_t n = gm__textin_split(line, ',', f, RMM_MAX_FIELDS);
    if (!ctx->have_header)
        return rmm_header(ctx, in, f, n, err);
    if (n != ctx->nfields)
        return gm__textin_error(in, err, "expected %zu fields as in the header, found %zu",
                                ctx->nfields, n);

    const char *action = f[ctx->col[RMM_ACTION]];
    if (strcasecmp(action, "allocate") == 0)
        rec->kind = GM__REC_ALLOC;
    else if (strcasecmp(action, "free") == 0 || strcasecmp(action, "deallocate") == 0)
        rec->kind = GM__REC_FREE;
    else if (strcasecmp(action, "allocate failure") == 0 ||
             strcasecmp(action, "allocate_failure") == 0)
        rec->kind = GM__REC_MARK;
    else
        return gm__textin_error(in, err,
                                "unknown action '%.32s' (expected allocate, free, deallocate or "
                                "allocate failure)",
                                action);

    if (ctx->col[RMM_TIME] >= 0) {
        const char *ts = f[ctx->col[RMM_TIME]];
        uint64_t ns;
        if (rmm_time(ts, &ns) != 0)
            return gm__textin_error(in, err,
                                    "invalid time '%.40s' (expected HH:MM:SS.ffffff or seconds)",
                                    ts);
        ns += ctx->day_ns;
        /* Wall-clock times of day wrap at midnight. */
        if (ctx->have_ts && ns + UINT64_C(43200000000000) < ctx->last_ts &&
            strchr(ts, ':') != NULL) {
            ctx->day_ns += UINT64_C(86400000000000);
            ns += UINT64_C(86400000000000);
        }
        ctx->have_ts = 1;
        ctx->last_ts = ns;
        rec->ts_ns = ns;
    }

    const char *size = f[ctx->col[RMM_SIZE]];
    int prc = gm_parse_u64(size, &rec->size);
    if (prc)
        return gm__textin_error(in, err, "invalid size '%.40s'%s", size,
                                prc == GM_U64_RANGE ? " (too large)" : "");
    if (rec->size > GM_SIZE_LIMIT)
        return gm__textin_error(in, err, "size %" PRIu64 " is above the limit of 2^48 bytes",
                                rec->size);
    const char *ptr = f[ctx->col[RMM_POINTER]];
    if (gm__textin_addr(ptr, &rec->addr, &rec->null) != 0)
        return gm__textin_error(in, err, "invalid pointer '%.40s'", ptr);
    if (ctx->col[RMM_STREAM] >= 0) {
        const char *st = f[ctx->col[RMM_STREAM]];
        int null;
        if (gm__textin_addr(st, &rec->stream, &null) != 0)
            return gm__textin_error(in, err, "invalid stream '%.40s'", st);
    }
    if (rec->kind == GM__REC_MARK) {
        ctx->failures++;
        rec->tag = "alloc_failure";
    }
    return 0;
}

static int rmm_attrs(void *c, gm_writer_t *w, gm_error_t *err)
{
    rmm_ctx_t *ctx = c;
    return ctx->failures ? gm_writer_attr_int(w, "alloc_failures", (int64_t)ctx->failures, err)
                         : 0;
}

int gm_rmm_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err)
{
    static const gm__addrlog_format_t fmt = {"rmm", rmm_reset, rmm_parse, rmm_attrs};
    rmm_ctx_t ctx;
    return gm__addrlog_import(in, filename, t, &fmt, &ctx, err);
}

int gm_rmm_sniff(const void *head, size_t len)
{
    return gm__textin_sniff_header(head, len, "thread,time,action,pointer,size,stream") != NULL;
}
