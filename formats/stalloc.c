/*
 * formats/stalloc.c — STAlloc trace logs (mem_log_devN.txt, written by
 * STAlloc's tracing allocator through PyTorch's pluggable allocator).
 *
 * One event a line, "STATUS PTR SIZE STREAM" separated by blanks: STATUS
 * 1 allocates and 0 frees, PTR and STREAM are C++ stream-printed pointers
 * ("0x7f1e41329c00", "0" for null), SIZE decimal bytes (a free row repeats
 * the allocation's size; the allocation's is kept).  Marker lines, written
 * by STAlloc's model hooks, are kept as MARK events named by the line's
 * text as it is (trimmed):
 *     "Iteration Index : N"  (N a number, or "end")
 *     "micro-batch : F"      (F, B or W)
 *     "NAME->MODULE Layer : F-start" / "...-end"
 * Any other line is an error naming it.  The log has no time stamps: every
 * event has ts_ns 0 (unknown) and the order is the time.  Pairing by
 * address, pre-existing allocations and null pointers: the two-pass rules
 * of formats/textin.h.  The device is taken from the file name
 * ("mem_log_dev3.txt" → device 3).
 */
#include "gmsim/formats.h"

#include <inttypes.h>
#include <string.h>

#include "gmsim/text.h"
#include "formats/textin.h"

static void stalloc_reset(void *ctx) { (void)ctx; }

/* A marker line of one of the three kinds STAlloc writes. */
static int stalloc_is_marker(const char *line)
{
    if (strstr(line, "Iteration Index") != NULL || strstr(line, "micro-batch") != NULL)
        return strchr(line, ':') != NULL;
    const char *arrow = strstr(line, "->");
    return arrow != NULL && strstr(arrow, "Layer") != NULL && strchr(arrow, ':') != NULL;
}

static int stalloc_parse(void *ctx, const gm__textin_t *in, char *line, size_t len,
                         gm__addrlog_rec_t *rec, gm_error_t *err)
{
    (void)ctx;
    (void)len;
    if (line[0] != '0' && line[0] != '1') {
        if (!stalloc_is_marker(line))
            return gm__textin_error(in, err,
                                    "unrecognized line '%.48s' (expected 'STATUS PTR SIZE "
                                    "STREAM' or a marker line)",
                                    line);
        rec->kind = GM__REC_MARK;
        rec->tag = line;
        return 0;
    }
    char *f[4];
    size_t n = gm__textin_split(line, ' ', f, 4);
    if (n != 4)
        return gm__textin_error(in, err, "expected 4 fields (status ptr size stream), found %zu",
                                n);
    if (strcmp(f[0], "1") == 0)
        rec->kind = GM__REC_ALLOC;
    else if (strcmp(f[0], "0") == 0)
        rec->kind = GM__REC_FREE;
    else
        return gm__textin_error(in, err, "invalid status '%.16s' (expected 1 or 0)", f[0]);
    if (gm__textin_addr(f[1], &rec->addr, &rec->null) != 0)
        return gm__textin_error(in, err, "invalid pointer '%.40s'", f[1]);
    int prc = gm_parse_u64(f[2], &rec->size);
    if (prc)
        return gm__textin_error(in, err, "invalid size '%.40s'%s", f[2],
                                prc == GM_U64_RANGE ? " (too large)" : "");
    if (rec->size > GM_SIZE_LIMIT)
        return gm__textin_error(in, err, "size %" PRIu64 " is above the limit of 2^48 bytes",
                                rec->size);
    int null;
    if (gm__textin_addr(f[3], &rec->stream, &null) != 0)
        return gm__textin_error(in, err, "invalid stream '%.40s'", f[3]);
    return 0;
}

int gm_stalloc_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err)
{
    static const gm__addrlog_format_t fmt = {"stalloc", stalloc_reset, stalloc_parse, NULL};
    return gm__addrlog_import(in, filename, t, &fmt, NULL, err);
}

/* The first non-blank line is an event line of exactly four fields with a
 * status of 0 or 1 and a pointer, or one of the marker lines. */
int gm_stalloc_sniff(const void *head, size_t len)
{
    const char *p = head, *end = p + len;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    if (n == 0 || n > 200 || memchr(p, '\0', n) != NULL)
        return 0;
    char line[201];
    memcpy(line, p, n);
    line[n] = '\0';
    if (n > 0 && line[n - 1] == '\r')
        line[--n] = '\0';
    if (line[0] != '0' && line[0] != '1')
        return stalloc_is_marker(line);
    char *f[4];
    if (gm__textin_split(line, ' ', f, 4) != 4 || f[0][1] != '\0')
        return 0;
    uint64_t v;
    int null;
    return gm__textin_addr(f[1], &v, &null) == 0 && gm_parse_u64(f[2], &v) == 0 &&
           gm__textin_addr(f[3], &v, &null) == 0;
}
