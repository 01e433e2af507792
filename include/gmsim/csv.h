/*
 * gmsim/csv.h — the CSV trace format.
 *
 * Columns: ts_ns,op,id,size,stream,device (an optional header line with
 * exactly these names).  op is alloc, free or mark (seg_alloc, seg_free,
 * seg_map and seg_unmap are accepted too).  For alloc/free, id is the
 * application's id of the allocation (any unsigned integer, unique among live
 * allocations; it may be reused after its free); for mark, id holds the
 * mark's name; for seg_*, id holds the segment address (decimal or 0x hex).
 * stream is the raw stream handle (decimal or 0x hex), device an ordinal.
 * Empty fields count as 0 (ts_ns, stream, device); blank lines and lines
 * starting with '#' are skipped.
 */
#ifndef GMSIM_CSV_H
#define GMSIM_CSV_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdio.h>

#include "gmsim/error.h"
#include "gmsim/import.h"
#include "gmsim/store.h"

GM_API_BEGIN

/*
 * Import CSV from in as one trace of t (a gm_import_fn).  `filename` names
 * the input in messages.  A bad row is GM_EFORMAT: "'FILE' line N: REASON".
 */
int gm_csv_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err);

/* Read CSV from a memory buffer into w (not finished; used by the fuzz
 * target and tests).  Errors as above. */
int gm_csv_import_buffer(const char *data, size_t len, const char *filename, gm_writer_t *w,
                         gm_error_t *err);

/* Whether the first `len` bytes look like gmsim CSV: the first line that
 * is not blank or a comment is a header (its second field is "op") or a
 * row whose second field is a known op.  1 or 0; never reads past len. */
int gm_csv_sniff(const void *head, size_t len);

/* Write every event of r as CSV with a header line.  GM_EIO on a write error. */
int gm_csv_export(gm_reader_t *r, FILE *out, gm_error_t *err);

GM_API_END

#endif
