/*
 * formats/torch/torch.h — what the files of the PyTorch snapshot importer
 * share: the interned keys, a device's trace entries, the importer's state
 * per snapshot (tk_snap_t) and per device (tk_dev_t), and the functions
 * each file gives the others.  formats/torch/snapshot.c describes the
 * importer; its files:
 *   snapshot.c  sniffing, reading the snapshot (entries, segments, the
 *               recorded settings, the block padding), each device's import;
 *   rewind.c    undoing the entries, backwards, to the starting state;
 *   state.c     the regions and blocks undone (state.h: their invariants);
 *   frames.c    stack frames: their text, stacks interned for the writer;
 *   write.c     writing one device's trace: layout, pre-existing ALLOCs,
 *               entries, marks, attributes.
 */
#ifndef GM_FORMATS_TORCH_TORCH_H
#define GM_FORMATS_TORCH_TORCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmsim/torch.h"

#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "gmsim/layout.h"
#include "gmsim/store.h"
#include "gmsim/trace.h"
#include "sim/torch_rules.h"
#include "base/idmap.h"
#include "formats/pickle.h"
#include "formats/torch/state.h"

#define TK_MAX_FILE ((size_t)1 << 32)    /* 4 GiB */
#define TK_MAX_DEVICE 65535

enum tk_act {
    TK_ALLOC,
    TK_FREE_REQ,
    TK_FREE,
    TK_SEG_ALLOC,
    TK_SEG_FREE,
    TK_SEG_MAP,
    TK_SEG_UNMAP,
    TK_OOM,
    TK_SNAPSHOT,
    TK_OTHER,
    TK_NACT
};

/* The keys and values the importer looks for, as interned nodes. */
#define TK_KEYS(X)                                                                     \
    X(segments) X(device_traces) X(allocator_settings) X(external_annotations) X(device) \
    X(address) X(addr) X(total_size) X(stream) X(segment_type) X(is_expandable) X(blocks) \
    X(size) X(requested_size) X(state) X(frames) X(action) X(time_us) X(name) X(filename) \
    X(line) X(stage) X(history) X(real_size) X(compile_context) X(user_metadata)         \
    X(inactive) X(small) X(large) X(START) X(END) X(empty_cache) X(device_free)

typedef struct tk_keys {
#define TK_KEY_FIELD(k) const gm__pk_t *k;
    TK_KEYS(TK_KEY_FIELD)
#undef TK_KEY_FIELD
    const gm__pk_t *act[TK_NACT];
} tk_keys_t;

typedef struct tk_entry {
    uint64_t addr, size, stream, ts_ns;
    const gm__pk_t *frames; /* list of frame dicts, or NULL */
    uint8_t act;
} tk_entry_t;

/* Frame line table and stack interning (per trace). */
typedef struct tk_stack {
    uint64_t hash;
    uint32_t first, len; /* in tk_frames_t.ids */
    uint32_t index;      /* the writer's frames index (0: none) */
} tk_stack_t;

/* A frames list seen before, by the identity of its frame dicts. */
typedef struct tk_seen {
    uint64_t hash;
    const gm__pk_t *list; /* first list with these frame dicts, NULL: empty cell */
    uint32_t index;
} tk_seen_t;

typedef struct tk_frames {
    uint32_t *ids;
    size_t nids, capids;
    tk_stack_t *stacks;
    size_t nstacks, mask; /* open addressing, capacity mask + 1 */
    tk_seen_t *seen;
    size_t nseen, seen_mask;
    char *text;
    size_t captext;
} tk_frames_t;

/* The text of every visible frame, numbered from 1 (shared by the devices:
 * frame dicts cache their number in their aux field). */
typedef struct tk_lines {
    char **text;
    uint8_t *src; /* 1: a source frame (line > 0) */
    size_t n, cap, capsrc;
} tk_lines_t;

typedef struct tk_snap {
    const char *filename;
    gm__pickle_t *p;
    tk_keys_t k;
    gm_error_t *err;
    /* settings */
    const gm__pk_t *settings;
    char *settings_json;     /* the settings as JSON, or NULL */
    gm__torch_settings_t ts; /* as decoded (PyTorch's defaults without them) */
    uint64_t pad;       /* detected block padding (0 or 32) */
    int has_time, has_compile_context, has_user_metadata, has_annotations;
    size_t ndevices_traced;
    tk_lines_t lines;
} tk_snap_t;

typedef struct tk_dev {
    tk_snap_t *s;
    unsigned device;
    tk_entry_t *e;
    size_t ne, cap;
    gm__tk_state_t st;
    uint64_t mismatches, skipped;
    uint64_t reserved_end, reserved_start, peak_reserved, seg_allocs, seg_frees;
    uint64_t ooms;         /* oom entries */
    uint64_t oom_capacity; /* the least of reserved then + device_free over them (0: none) */
    int expandable_seen;
    tk_frames_t fr;
} tk_dev_t;

typedef struct tk_note {
    uint64_t ts_ns;
    const char *name;
    size_t order; /* position in the snapshot: equal times keep it */
} tk_note_t;

/* ---- value helpers ------------------------------------------------------------ */

static inline const gm__pk_t *tk_get(const gm__pk_t *d, const gm__pk_t *key)
{
    return gm__pk_get(d, key);
}

static inline int tk_is_list(const gm__pk_t *v)
{
    return v != NULL && (v->type == GM__PK_LIST || v->type == GM__PK_TUPLE);
}

/* Round a request as the allocator does (sim/torch_rules.h). */
static inline uint64_t tk_round(const tk_snap_t *s, uint64_t req)
{
    return gm__torch_round(req + s->pad, s->ts.div);
}

/* ---- what each file gives the others ---------------------------------------------- */

/* snapshot.c: a GM_EFORMAT naming the file; out of memory, naming it. */
int gm__tk_fail(tk_snap_t *s, const char *fmt, ...) GM_PRINTF(2, 3);
int gm__tk_nomem(tk_snap_t *s);

/* rewind.c */
int gm__tk_undo_all(tk_dev_t *dv);

/* frames.c */
void gm__tk_frames_release(tk_frames_t *f);
int gm__tk_frames_index(tk_dev_t *dv, gm_writer_t *w, const gm__pk_t *list, uint32_t *index);

/* write.c */
int gm__tk_note_cmp(const void *a, const void *b);
int gm__tk_write(tk_dev_t *dv, gm_writer_t *w, const tk_note_t *notes, size_t nnotes);

#endif
