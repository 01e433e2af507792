/*
 * formats/textin.h — what the line-oriented importers (RMM, STAlloc, DSA)
 * share: a line reader over a FILE that counts lines and bytes, refuses
 * NUL bytes and over-long lines, and can start over (the importers that
 * recover pre-existing allocations read their input twice); field helpers;
 * and a live set from raw addresses to allocation ordinals.
 */
#ifndef GM_FORMATS_TEXTIN_H
#define GM_FORMATS_TEXTIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gmsim/error.h"
#include "gmsim/import.h"
#include "base/idmap.h"

/* Longest line accepted (a longer one is GM_EFORMAT, not a huge buffer). */
#define GM__TEXTIN_LINE_MAX (1u << 20)

typedef struct gm__textin {
    FILE *f;
    const char *filename;
    uint64_t line;   /* number of the line last read (1-based) */
    uint64_t offset; /* byte offset of the line last read */
    uint64_t next;   /* byte offset of the next line */
    char *buf;
    size_t cap;
} gm__textin_t;

void gm__textin_init(gm__textin_t *t, FILE *f, const char *filename);
void gm__textin_release(gm__textin_t *t);

/* Next line, without its "\n" or "\r\n", trimmed of leading and trailing
 * blanks, in *line (NUL-terminated, writable, valid until the next call)
 * and its length in *len.  1 for a line, 0 at the end, negative on error
 * (err: "'FILE' line N: ..." for a NUL byte or an over-long line, GM_EIO
 * for a read error).  A UTF-8 byte order mark on line 1 is skipped. */
int gm__textin_next(gm__textin_t *t, char **line, size_t *len, gm_error_t *err);

/* Go back to the start of the input.  GM_EINVAL when it is not seekable. */
int gm__textin_rewind(gm__textin_t *t, gm_error_t *err);

/* GM_EFORMAT "'FILE' line N: MESSAGE" for the line last read. */
int gm__textin_error(const gm__textin_t *t, gm_error_t *err, const char *fmt, ...) GM_PRINTF(3, 4);

/* Split `line` in place at each `sep` (or, with sep == ' ', at runs of
 * blanks) into at most `max` fields, each trimmed of blanks; returns the
 * number of fields found (which may exceed max: the rest are not stored). */
size_t gm__textin_split(char *line, char sep, char **fields, size_t max);

/* A raw address: "0x" hex, plain decimal, or null spellings ("(nil)",
 * "nil", "null", "0x0", "0").  0 for an address (*null set when it is the
 * null pointer), -1 when the text is not an address. */
int gm__textin_addr(const char *s, uint64_t *out, int *null);

/* The device ordinal in a file name: the digits after the last ".dev" or
 * "_dev" ("mem_log_dev3.txt", "rmm.dev1.csv"); -1 when none, -2 when
 * above 65535 (the largest device an event holds). */
int gm__textin_name_device(const char *filename);

/* A sniffer's look at the first len bytes of an input: past a UTF-8 byte
 * order mark and blank lines, does the text start with the header hdr
 * (ASCII case ignored)?  Where the header ends, or NULL when it is not
 * there. */
const char *gm__textin_sniff_header(const void *head, size_t len, const char *hdr);

/*
 * Live allocations by raw address, for the importers of address-based logs.
 * Pass 1 (gm__addrlive_scan_*) finds the frees of addresses never seen
 * before (allocations alive before the log began); pass 2 emits those
 * first as pre-existing ALLOCs and then maps each address to its ordinal.
 * Address UINT64_MAX (the map's reserved key) is kept aside.
 */
typedef struct gm__addrlive {
    gm__idmap_t map;
    int max_live;
    uint64_t max_val;
} gm__addrlive_t;

void gm__addrlive_init(gm__addrlive_t *l);
void gm__addrlive_release(gm__addrlive_t *l);
int gm__addrlive_put(gm__addrlive_t *l, uint64_t addr, uint64_t val); /* 0 or GM_ENOMEM */
int gm__addrlive_get(const gm__addrlive_t *l, uint64_t addr, uint64_t *val);
int gm__addrlive_remove(gm__addrlive_t *l, uint64_t addr, uint64_t *val);

/*
 * The two-pass import of an address-based log (RMM, STAlloc): each line is
 * parsed by the format's `parse` into a record; pass 1 checks the pairing
 * of allocations and frees by address and finds the frees of addresses
 * never seen before (allocations alive before the log began); pass 2
 * writes one trace: those first, as pre-existing ALLOCs (GM_EVENT_PREEXISTING,
 * at the time of the first record), then every record.  Rules (the line is
 * named in every error):
 *   - an allocation at an address that is live is an error;
 *   - a free of an address never seen is a pre-existing allocation; a free
 *     of an address seen before and not live is a double free (an error);
 *   - null pointers: an allocation with a null pointer (a zero-size request)
 *     is kept and its free is the next free of a null pointer; a free of a
 *     null pointer with none of those live is ignored and counted
 *     ("null_frees_ignored").
 * Attributes: "source", "preexisting", "device" (from the file name, which
 * also sets every event's device), plus the format's counters.
 */
enum { GM__REC_SKIP, GM__REC_ALLOC, GM__REC_FREE, GM__REC_MARK };

typedef struct gm__addrlog_rec {
    int kind;
    uint64_t ts_ns;
    uint64_t addr;
    int null;        /* addr is the null pointer */
    uint64_t size;
    uint64_t stream; /* raw handle */
    const char *tag; /* MARK: its name (valid until the next parse) */
} gm__addrlog_rec_t;

typedef struct gm__addrlog_format {
    const char *source; /* the "source" attribute */
    /* Start a pass (ctx state back to the start of the file). */
    void (*reset)(void *ctx);
    /* Parse one non-blank line; 0 with *rec filled (GM__REC_SKIP for a line
     * that carries nothing), or a negative code (gm__textin_error). */
    int (*parse)(void *ctx, const gm__textin_t *in, char *line, size_t len,
                 gm__addrlog_rec_t *rec, gm_error_t *err);
    /* Write the format's own attributes after pass 2 (may be NULL). */
    int (*attrs)(void *ctx, gm_writer_t *w, gm_error_t *err);
} gm__addrlog_format_t;

int gm__addrlog_import(FILE *in, const char *filename, gm_import_target_t *t,
                       const gm__addrlog_format_t *fmt, void *ctx, gm_error_t *err);

#endif
