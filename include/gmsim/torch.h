/*
 * gmsim/torch.h — the PyTorch memory snapshot importer
 * (torch.cuda.memory._dump_snapshot, PyTorch 2.x; docs/formats.md).
 *
 * The snapshot is a pickle of plain data, decoded by gmsim's own decoder:
 * nothing in it is ever executed (an opcode that names or calls code is
 * refused with its name and byte offset).  One trace per device that has
 * trace entries or segments, named "<base>" for a single device and
 * "<base>.devN" otherwise.  Allocations alive before the first trace entry
 * are recovered by undoing the trace backwards from the final segments and
 * written first, flagged GM_EVENT_PREEXISTING; the allocator's segments and
 * blocks at that point are stored as the trace's starting layout
 * (gmsim/layout.h).  Trace attributes: source, device, allocator_settings,
 * block_pad/block_round, expandable_segments, recorded, preexisting,
 * features.
 */
#ifndef GMSIM_TORCH_H
#define GMSIM_TORCH_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdio.h>

#include "gmsim/error.h"
#include "gmsim/import.h"

GM_API_BEGIN

/* Import the snapshot read from `in` (a gm_import_fn).  GM_EFORMAT with the
 * file and the place (byte offset, device and entry index) for anything
 * that is not a PyTorch 2.x snapshot, GM_EIO, GM_ENOMEM, the store's
 * errors. */
int gm_torch_import(FILE *in, const char *filename, gm_import_target_t *t, gm_error_t *err);

/* The same from a snapshot in memory. */
int gm_torch_import_buffer(const void *data, size_t len, const char *filename,
                           gm_import_target_t *t, gm_error_t *err);

/* 1 if the first len bytes look like a pickled memory snapshot: a pickle
 * header (protocol 2-5) and a snapshot key among the first bytes. */
int gm_torch_sniff(const void *head, size_t len);

GM_API_END

#endif
