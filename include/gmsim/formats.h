/*
 * gmsim/formats.h — outside trace formats besides gmsim's own CSV
 * (gmsim/csv.h): importers of Nsight Systems SQLite exports, RAPIDS RMM
 * logs, STAlloc trace logs and placement (dynamic storage allocation)
 * instances, and the Perfetto / Chrome trace-event JSON export.  What each
 * keeps and drops is in docs/formats.md.
 *
 * Every importer is a gm_import_fn (gmsim/import.h): it reads an input that
 * is already decompressed and writes one or more traces through the target;
 * on failure it returns a negative code with a message naming the file and
 * the place, and the caller aborts the target.  Every sniffer looks at the
 * first `len` bytes of an input and says whether they look like its format
 * (1) or not (0); it never reads past `len`.
 */
#ifndef GMSIM_FORMATS_H
#define GMSIM_FORMATS_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gmsim/error.h"
#include "gmsim/import.h"
#include "gmsim/store.h"

GM_API_BEGIN

/* ---- Nsight Systems SQLite export (nsys export --type sqlite) ------------ */

/* One trace per (process, device) of CUDA_GPU_MEMORY_USAGE_EVENTS, keeping
 * the memory kinds of gm_import_get_options(t)->mem_kinds (device memory by
 * default).  The input must be a regular file or is copied to a temporary
 * one (SQLite reads it in place, read-only). */
int gm_nsys_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err);

/* The same from a database image in memory (the fuzz target's entry). */
int gm_nsys_import_image(const void *data, size_t len, const char *filename,
                         gm_import_target_t *t, gm_error_t *err);

int gm_nsys_sniff(const void *head, size_t len);

/* Parse a --mem-kinds list: comma-separated ENUM_CUDA_MEM_KIND names
 * (pageable, pinned, device, array, managed, device_static, managed_static,
 * unknown), numbers 0-7, or "all", into a bit mask.  GM_EINVAL with the
 * unknown word named. */
int gm_nsys_parse_mem_kinds(const char *list, uint32_t *mask, gm_error_t *err);

/* ---- RAPIDS RMM log (logging_resource_adaptor) ---------------------------- */

/* One trace.  Header Thread,Time,Action,Pointer,Size,Stream (columns found
 * by name); `allocate failure` rows become MARK "alloc_failure". */
int gm_rmm_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err);
int gm_rmm_sniff(const void *head, size_t len);

/* ---- STAlloc trace log (mem_log_devN.txt) --------------------------------- */

/* One trace of `status ptr size stream` lines (1 alloc, 0 free); marker
 * lines become MARKs. */
int gm_stalloc_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err);
int gm_stalloc_sniff(const void *head, size_t len);

/* ---- placement instances (minimalloc CSV id,lower,upper,size) ------------- */

/* One trace: an ALLOC at `lower`, a FREE at `upper` (frees first at equal
 * times); the capacity in the file name ("A.1048576.csv") becomes the
 * "capacity" attribute. */
int gm_dsa_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err);
int gm_dsa_sniff(const void *head, size_t len);

/* ---- Perfetto / Chrome trace-event JSON export ----------------------------- */

#define GM_PERFETTO_RUNS 0x1u /* add the stored replay runs of the trace */

/* Write trace `name` of s as {"traceEvents":[...]}: a requested-bytes
 * counter track, an instant event per MARK and, with GM_PERFETTO_RUNS, one
 * counter track (requested, allocated, reserved) per stored run of the
 * trace.  GM_EIO on a write error, the store's errors otherwise. */
int gm_perfetto_export(gm_store_t *s, const char *name, unsigned flags, FILE *out,
                       gm_error_t *err);

/* ---- the registry of import formats (formats/registry.c) ----------------- */

typedef int (*gm_sniff_fn)(const void *head, size_t len);

typedef struct gm_format {
    const char *name; /* --format NAME */
    const char *help; /* one line for `gmsim import --help` */
    gm_import_fn import;
    gm_sniff_fn sniff;
} gm_format_t;

/* The formats in detection order (the most specific first, csv last). */
size_t gm_format_count(void);
const gm_format_t *gm_format_at(size_t i); /* NULL out of range */
const gm_format_t *gm_format_find(const char *name); /* NULL if unknown */
/* The first format whose sniffer takes the first `len` bytes; NULL if none. */
const gm_format_t *gm_format_sniff(const void *head, size_t len);

/* ---- an input to import (formats/input.c) -------------------------------- */

#define GM_IMPORT_HEAD 4096 /* bytes of an input the sniffers see */

typedef struct gm_import_input {
    FILE *in;                  /* what an importer reads, at offset 0 */
    const char *shown;         /* the input's name in messages ("<stdin>" for '-') */
    char head[GM_IMPORT_HEAD]; /* its first bytes (after gunzip) */
    size_t nhead;
    int gzip;                  /* the input was gzip'd */
} gm_import_input_t;

/*
 * Open path ('-': standard input) for an importer: gzip data (magic 1f 8b,
 * whatever the name) is inflated into a temporary file, every member of a
 * multi-member file included; a non-seekable input (a pipe) is spooled to
 * one; the head is read (from the inflated data).  0, or GM_EIO (cannot
 * open or read, a directory), GM_EFORMAT (corrupt or truncated gzip data,
 * naming the compressed byte) or GM_ENOMEM, naming the input.  Close with
 * gm_import_input_close.
 */
int gm_import_input_open(const char *path, gm_import_input_t *ii, gm_error_t *err);
void gm_import_input_close(gm_import_input_t *ii);

/* The format of an opened input (gm_format_sniff of its head); NULL with
 * GM_EFORMAT naming the input and the formats to choose from. */
const gm_format_t *gm_import_input_detect(const gm_import_input_t *ii, gm_error_t *err);

GM_API_END

#endif
