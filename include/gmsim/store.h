/*
 * gmsim/store.h — the trace store: one SQLite file holding many traces.
 *
 * Events are kept in chunks of up to GM_CHUNK_EVENTS events, each delta- and
 * varint-encoded column by column and then zlib-compressed (store/codec.c).
 * Streams, tags and stack frames are interned once per trace; trace
 * attributes are JSON text.  The schema is versioned with PRAGMA user_version;
 * a file of another version is refused, never rewritten, except that a
 * version-1 store (before layouts) is upgraded when opened for writing and
 * read as it is otherwise.
 *
 * Writing is streaming (one chunk buffered, plus the live-allocation set used
 * for validation) and transactional: a trace becomes visible only when
 * gm_writer_finish() commits it; anything else (an error, gm_writer_abort(),
 * a killed process) leaves the database as it was.
 *
 * Reading is streaming too: gm_reader_next() decodes one chunk at a time.
 */
#ifndef GMSIM_STORE_H
#define GMSIM_STORE_H

#include "gmsim/api.h"

#include <stddef.h>
#include <stdint.h>

#include "gmsim/error.h"
#include "gmsim/layout.h"
#include "gmsim/trace.h"

GM_API_BEGIN

#define GM_STORE_SCHEMA_VERSION 4
#define GM_CHUNK_EVENTS 65536

typedef struct gm_store gm_store_t;
typedef struct gm_writer gm_writer_t;
typedef struct gm_reader gm_reader_t;

/* Open flags. */
#define GM_STORE_READONLY 0x0u /* open an existing store for reading */
#define GM_STORE_WRITE 0x1u    /* open for writing, creating it if missing */

/*
 * Open the store at path.  Fails with GM_EIO (cannot open), GM_EFORMAT (not a
 * database, or not a gmsim store), GM_ESCHEMA (another schema version).  The
 * message names the file.  On success the caller closes *out.
 */
int gm_store_open(const char *path, unsigned flags, gm_store_t **out, gm_error_t *err);
void gm_store_close(gm_store_t *s);
const char *gm_store_path(const gm_store_t *s);

/* The file's schema version: GM_STORE_SCHEMA_VERSION, or an older one for
 * an older store opened read-only (read as it is: before version 4 its
 * chunks carry no checksum, so damage is found by decoding alone). */
int gm_store_version(const gm_store_t *s);

/* Summary of one stored trace (the `traces` table). */
typedef struct gm_trace_info {
    int64_t id;
    char *name;
    uint64_t events;     /* stored events of every op */
    uint64_t allocs;     /* ALLOC events */
    uint64_t frees;      /* FREE events */
    uint64_t marks;      /* MARK events */
    uint64_t segs;       /* SEG_* events */
    uint64_t load;       /* peak requested bytes (LOAD) */
    uint64_t live_at_end;/* allocations never freed */
    uint64_t dropped;    /* zero-size requests dropped (attribute dropped_zero_size) */
    uint64_t chunks;
    uint64_t bytes;      /* compressed bytes of all chunks */
    char digest[33];     /* content digest, 32 hex digits */
    char *attrs;         /* JSON object text, never NULL */
} gm_trace_info_t;

void gm_trace_info_release(gm_trace_info_t *info);

/* All traces in name order.  The caller frees with gm_trace_info_free_list.
 * GM_EDB on a database error, GM_ECORRUPT for a damaged traces row (the
 * message names the file and trace), GM_ENOMEM. */
int gm_store_list(gm_store_t *s, gm_trace_info_t **out, size_t *n, gm_error_t *err);
void gm_trace_info_free_list(gm_trace_info_t *list, size_t n);

/* One trace by name; GM_ENOTFOUND (message names trace and file) if absent. */
int gm_store_find(gm_store_t *s, const char *name, gm_trace_info_t *out, gm_error_t *err);

/* Delete a trace and its chunks; GM_ENOTFOUND if absent, GM_EINVAL on a
 * read-only store, GM_ESTATE while a writer is open, GM_EDB. */
int gm_store_delete(gm_store_t *s, const char *name, gm_error_t *err);

/* ---- streaming writer ---------------------------------------------------- */

#define GM_WRITE_REPLACE 0x1u /* replace a trace of the same name on finish */

/*
 * Begin writing trace `name`.  Fails with GM_EEXIST if the name is taken and
 * GM_WRITE_REPLACE is not given.  One writer per store at a time.
 */
int gm_writer_begin(gm_store_t *s, const char *name, unsigned flags, gm_writer_t **out,
                    gm_error_t *err);

/* Intern a stream handle / tag name / stack-frames text; *index receives its
 * index (tags and streams from 0; frames from 1, 0 meaning none).  Interning
 * the same value again gives the same index.  GM_EINVAL for a NULL or
 * over-long text, GM_ENOMEM, GM_ESTATE after the writer failed. */
int gm_writer_stream(gm_writer_t *w, uint64_t handle, uint32_t *index, gm_error_t *err);
int gm_writer_tag(gm_writer_t *w, const char *name, uint32_t *index, gm_error_t *err);
int gm_writer_frames(gm_writer_t *w, const char *text, uint32_t *index, gm_error_t *err);

/* Set a trace attribute (last write of a key wins).  json_value must be one
 * valid JSON value (else GM_EINVAL); gm_writer_attr_str quotes and escapes
 * its value.  GM_EINVAL for a NULL or empty key, GM_ENOMEM. */
int gm_writer_attr_json(gm_writer_t *w, const char *key, const char *json_value, gm_error_t *err);
int gm_writer_attr_str(gm_writer_t *w, const char *key, const char *value, gm_error_t *err);
int gm_writer_attr_int(gm_writer_t *w, const char *key, int64_t value, gm_error_t *err);

/*
 * Append one event, validating it.  ALLOC ids are the caller's ordinals: the
 * k-th ALLOC given (counting zero-size ones) must carry id k.  Zero-size
 * ALLOCs, and the FREEs of their ids, are dropped and counted in the trace
 * attribute "dropped_zero_size"; stored ids are renumbered densely.  Rejected
 * with GM_EFORMAT and the event index ("event 12: double free of id 5"):
 * an ALLOC id out of order, a FREE of an id never allocated, a FREE of an id
 * already freed, a size above GM_SIZE_LIMIT, an unknown op, an interned
 * index that was never interned.  After an error the writer can only abort.
 */
int gm_writer_add(gm_writer_t *w, const gm_event_t *ev, gm_error_t *err);

/* Number of events given to gm_writer_add so far (the next event's index). */
uint64_t gm_writer_position(const gm_writer_t *w);

/* Store the recorded starting layout with the trace (gmsim/layout.h); it is
 * validated (gm_layout_validate) and copied.  At most once per trace;
 * GM_EINVAL for an invalid layout, GM_ESTATE the second time. */
int gm_writer_layout(gm_writer_t *w, const gm_layout_t *layout, gm_error_t *err);

/* Flush, write the trace summary and commit.  Frees w whatever the result;
 * on failure nothing of the trace is left in the store. */
int gm_writer_finish(gm_writer_t *w, gm_error_t *err);

/* Roll back and free w (NULL is a no-op). */
void gm_writer_abort(gm_writer_t *w);

/* ---- streaming reader ---------------------------------------------------- */

/* Open trace `name` for reading (GM_ENOTFOUND if absent). */
int gm_reader_open(gm_store_t *s, const char *name, gm_reader_t **out, gm_error_t *err);

/*
 * Decode the next chunk.  *events points into the reader's buffer, valid until
 * the next call; *n is 0 at the end.  A damaged chunk is GM_ECORRUPT with the
 * trace, chunk number and event index in the message.
 */
int gm_reader_next(gm_reader_t *r, const gm_event_t **events, size_t *n, gm_error_t *err);

const gm_trace_info_t *gm_reader_info(const gm_reader_t *r);

/* Interned tables; NULL / 0 for an index out of range. */
const char *gm_reader_tag(const gm_reader_t *r, uint32_t index);
uint64_t gm_reader_stream(const gm_reader_t *r, uint32_t index);
const char *gm_reader_frames(const gm_reader_t *r, uint32_t index);
uint32_t gm_reader_tag_count(const gm_reader_t *r);
uint32_t gm_reader_stream_count(const gm_reader_t *r);

/* Index of tag `name`, or -1. */
int64_t gm_reader_find_tag(const gm_reader_t *r, const char *name);

void gm_reader_close(gm_reader_t *r);

/* The starting layout stored with trace `name`: *out is NULL when it has
 * none.  The caller frees it with gm_layout_free.  GM_ENOTFOUND for an
 * unknown trace, GM_ECORRUPT for a damaged layout (naming file and trace). */
int gm_store_layout(gm_store_t *s, const char *name, gm_layout_t **out, gm_error_t *err);

/* ---- replay results (the runs and timelines tables) ---------------------- */

/* One timeline point: the maxima over a run of events ending at `event`. */
typedef struct gm_timeline_point {
    uint64_t event; /* index of the last event covered */
    uint64_t ts_ns; /* its time stamp */
    uint64_t requested;
    uint64_t allocated;
    uint64_t reserved;
} gm_timeline_point_t;

/* ---- sweep shards (the shards table, store/runs.c) ------------------------
 * A sweep records, per grid (a digest of its traces, configurations,
 * device and gmsim version) and shard, how many runs the shard must store
 * and how many it holds, so that merging can tell a whole sweep from a
 * part of one. */
typedef struct gm_shard_record {
    char grid[33];    /* the grid's digest, hex */
    unsigned shard;   /* 1-based */
    unsigned nshards; /* shards of the grid */
    uint64_t runs;    /* runs of this shard */
    uint64_t done;    /* of them, stored */
} gm_shard_record_t;

/* A replay run as the store keeps it.  The store knows nothing of policies:
 * parameters, device settings and metrics come as JSON object text. */
typedef struct gm_run_record {
    const char *trace;        /* trace name */
    const char *trace_digest; /* its content digest */
    const char *policy;
    const char *params;  /* JSON object: every parameter, resolved */
    const char *device;  /* JSON object: the simulated device's settings */
    const char *metrics; /* JSON object: the metrics of docs/metrics.md */
    const gm_timeline_point_t *timeline;
    size_t npoints;
    /* Optional: the record of the sweep shard this run belongs to, written
     * (gm_store_put_shard) in the run's transaction, so that its `done`
     * never disagrees with the runs stored. */
    const gm_shard_record_t *shard;
    /* Optional: set to 1 when a run of this key was stored already (then
     * nothing but the shard record is written and *id gets that run's
     * id), else 0. */
    int *found;
} gm_run_record_t;

/*
 * Append a run to the runs table and its timeline to the timelines table,
 * in one transaction, with the gmsim version and the time; *id (may be
 * NULL) gets the run's id.  Runs are unique by key (below): when the store
 * holds a run of this key already (saved before, or by another writer
 * meanwhile), that run is kept, nothing else is written (but run->shard),
 * *id gets its id and *run->found 1.  GM_EINVAL on a store opened read-only or for
 * text that is not JSON, GM_ESTATE while a writer is open, GM_EIO/GM_EDB
 * from SQLite (nothing is saved then).
 */
int gm_store_save_run(gm_store_t *s, const gm_run_record_t *run, int64_t *id, gm_error_t *err);

/* ---- run queries (store/runs.c) ------------------------------------------
 * A run's key is (trace digest, policy, params, device, gmsim version),
 * texts compared exactly: sweeps write params and device as canonical JSON
 * (gmsim/sweep.h), so the same run always has the same key.  From schema
 * version 4 the key is unique (index runs_key). */

/* A stored run; every text is malloc'd and never NULL ("" when the column
 * is NULL). */
typedef struct gm_run_info {
    int64_t id;
    char *trace;  /* trace name when it ran */
    char *trace_digest;
    char *policy;
    char *params;
    char *device;
    char *version;
    char *metrics;
    char *created;
    uint64_t npoints; /* timeline points stored */
} gm_run_info_t;

/* Every run, in id order.  The caller frees with gm_run_info_free_list.
 * GM_EDB, GM_ENOMEM. */
int gm_store_list_runs(gm_store_t *s, gm_run_info_t **out, size_t *n, gm_error_t *err);
void gm_run_info_free_list(gm_run_info_t *list, size_t n);

/* The id of the first run with this key (version NULL: this gmsim's), or
 * GM_ENOTFOUND.  GM_EDB. */
int gm_store_find_run(gm_store_t *s, const char *trace_digest, const char *policy,
                      const char *params, const char *device, const char *version, int64_t *id,
                      gm_error_t *err);

/* The timeline of run `id` in point order (*out NULL when it has none);
 * the caller frees *out.  GM_ENOTFOUND for an unknown run, GM_EDB,
 * GM_ENOMEM. */
int gm_store_run_timeline(gm_store_t *s, int64_t id, gm_timeline_point_t **out, size_t *n,
                          gm_error_t *err);

/* Copy every run of src whose key dst lacks (with its timeline, version and
 * time), and src's shard records, into dst, all in one transaction;
 * *copied and *skipped (may be NULL) count the runs.  Runs repeated inside src are copied once.  GM_EINVAL
 * when dst is read-only, GM_ESTATE while a writer is open on dst, GM_EDB /
 * GM_EIO (nothing copied then). */
int gm_store_copy_runs(gm_store_t *dst, gm_store_t *src, size_t *copied, size_t *skipped,
                       gm_error_t *err);

/* Insert or update the record of (grid, shard); a record copied in keeps
 * the larger `done`.  GM_EINVAL on a read-only store, GM_EDB / GM_EIO. */
int gm_store_put_shard(gm_store_t *s, const gm_shard_record_t *r, gm_error_t *err);

/* Every shard record, by grid then shard (none in a store older than
 * schema version 3).  The caller frees *out.  GM_EDB, GM_ENOMEM, and
 * GM_EFORMAT for a record that is not what a sweep writes. */
int gm_store_list_shards(gm_store_t *s, gm_shard_record_t **out, size_t *n, gm_error_t *err);

/* Whether --trace `pattern` picks trace `name`: the same text, or an
 * fnmatch(3) glob that matches it (store/match.c).  NULL pattern: every
 * trace.  One rule for every verb. */
int gm_trace_match(const char *pattern, const char *name);

GM_API_END

#endif
