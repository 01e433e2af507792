/*
 * tests/fuzz/fuzz_store.c — fuzz target for reading a store file.
 *
 * A .db handed to gmsim is outside data: it may be damaged or hand-edited.
 * Each input is written to a temporary file (one path per process) and
 * opened read-only as a store; every trace listed is read chunk by chunk
 * with the reader and replayed through every registered policy at once
 * (twice: on an unlimited device with the policies' checks after every
 * event, and on a small device where requests run out of memory).  Any
 * step may fail; a crash, a hang, a sanitizer report or a leak is the bug.
 *
 * Its shard records (the sweeps' bookkeeping) are listed and checked as
 * `gmsim merge` does.  Half the inputs have their chunks' checksums set
 * again to match their (mutated) data before they are read, so that the
 * decoder behind the checksum is fuzzed through the store too.
 *
 * Also checked (abort otherwise): every failure has its code and a message;
 * a trace that reads without error holds as many events and ALLOCs as its
 * summary says, with dense ALLOC ids, and refers only to rows of its
 * interned tables (what the writer accepts); a policy's check never fails
 * (the engine only hands policies events it validated).
 *
 * The seeds are small stores written with the writer and then rewritten by
 * SQLite with 512-byte pages and a rollback journal, so that few bytes of an
 * input are page padding and the file opens without -wal/-shm companions.
 * One more seed, "FIFO", stands for a named pipe given as the store: an
 * input that starts so is made a FIFO, which both opens refuse at once
 * ("not a regular file") rather than wait for a writer (an alarm turns a
 * hang into a failure).
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "gmsim/sweep.h"
#include "store/codec.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_path[600];

/* abort() with the place and what failed (inputs are not kept by the
 * mutation driver: the message is what there is to go on). */
#define FUZZ_CHECK(cond, msg)                                                              \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz_store:%d: %s: %s\n", __LINE__, #cond, msg);               \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* The store file and the companions SQLite may leave beside it. */
static void fuzz_unlink_all(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char p[700];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

static const char *fuzz_tmp(const char *what)
{
    static char path[600];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/gmsim-fuzz-store-%s-%ld.db", base && *base ? base : "/tmp",
             what, (long)getpid());
    return path;
}

/* A failure must carry its code and a message. */
static void fuzz_expect_error(int rc, const gm_error_t *err)
{
    FUZZ_CHECK(rc < 0 && err->code == rc && err->msg[0] != '\0', err->msg);
}

/* Read trace t to its end; abort if a read that succeeds breaks the
 * reader's promises (see the file comment). */
static void fuzz_read(gm_store_t *s, const gm_trace_info_t *t)
{
    gm_reader_t *r;
    gm_error_t err = {0};
    int rc = gm_reader_open(s, t->name, &r, &err);
    if (rc) {
        fuzz_expect_error(rc, &err);
        return;
    }
    const gm_trace_info_t *info = gm_reader_info(r);
    uint32_t nstreams = gm_reader_stream_count(r), ntags = gm_reader_tag_count(r);
    const gm_event_t *ev;
    size_t n;
    uint64_t events = 0, allocs = 0;
    while ((rc = gm_reader_next(r, &ev, &n, &err)) == 0 && n > 0) {
        FUZZ_CHECK(n <= GM_CHUNK_EVENTS, t->name);
        for (size_t i = 0; i < n; i++) {
            const gm_event_t *e = &ev[i];
            FUZZ_CHECK(e->op < GM_OP_COUNT, t->name);
            if (e->op == GM_OP_ALLOC) {
                FUZZ_CHECK(e->id == allocs, t->name);
                FUZZ_CHECK(e->size != 0 && e->size <= GM_SIZE_LIMIT, t->name);
                allocs++;
            }
            FUZZ_CHECK(e->op != GM_OP_FREE || e->id < allocs, t->name);
            FUZZ_CHECK(e->stream == 0 || e->stream < nstreams, t->name);
            FUZZ_CHECK((e->tag == 0 && e->op != GM_OP_MARK) || e->tag < ntags, t->name);
            FUZZ_CHECK(e->tag >= ntags || gm_reader_tag(r, e->tag) != NULL, t->name);
            FUZZ_CHECK(e->frames == 0 || gm_reader_frames(r, e->frames) != NULL, t->name);
            (void)gm_reader_stream(r, e->stream);
        }
        events += n;
    }
    if (rc)
        fuzz_expect_error(rc, &err);
    else
        FUZZ_CHECK(events == info->events && allocs == info->allocs, t->name);
    (void)gm_reader_find_tag(r, "empty_cache");
    gm_reader_close(r);
}

/* Replay trace name through every policy on a device of `capacity` bytes
 * (0: unlimited), checking the policies after every event or at the end. */
static void fuzz_replay(gm_store_t *s, const char *name, uint64_t capacity, int check_level)
{
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.device.capacity = capacity;
    cfg.timeline_points = 4; /* small, so that points merge */
    cfg.check_level = check_level;
    gm_replay_t *r;
    gm_error_t err = {0};
    FUZZ_CHECK(gm_replay_create(&cfg, &r, &err) == 0, err.msg);
    for (size_t i = 0; i < gm_policy_count(); i++) {
        gm_params_t p;
        FUZZ_CHECK(gm_params_init(&p, gm_policy_at(i), &err) == 0, err.msg);
        /* A planner's search is not what is fuzzed here (its plan is checked
         * all the same): its greedy plan is enough. */
        if (gm_policy_at(i)->flags & GM_POLICY_NEEDS_LIFETIMES)
            (void)gm_params_set(&p, "effort", "0", &err);
        FUZZ_CHECK(gm_replay_add(r, &p, &err) == 0, err.msg);
        gm_params_release(&p);
    }
    int rc = gm_replay_trace(r, s, name, &err);
    if (rc) {
        fuzz_expect_error(rc, &err);
        /* a policy's own check failed: a bug in the policy or the engine */
        FUZZ_CHECK(strstr(err.msg, "invariant violation") == NULL, err.msg);
    } else {
        for (size_t i = 0; i < gm_replay_count(r); i++)
            FUZZ_CHECK(gm_replay_metrics(r, i) != NULL, name);
    }
    gm_replay_destroy(r);
}

/* The shard records: each as a sweep writes it, or an error; the check
 * of gm_shards_check (what merge runs) on them. */
static void fuzz_shards(gm_store_t *s)
{
    gm_shard_record_t *r;
    size_t n;
    gm_error_t err = {0};
    int rc = gm_store_list_shards(s, &r, &n, &err);
    if (rc) {
        fuzz_expect_error(rc, &err);
        return;
    }
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(r[i].shard >= 1 && r[i].shard <= r[i].nshards && r[i].done <= r[i].runs &&
                       strlen(r[i].grid) == 32,
                   "shard record");
    rc = gm_shards_check(r, n, &err);
    FUZZ_CHECK(rc == 0 || (rc == GM_EINCOMPLETE && err.msg[0] != '\0'), err.msg);
    free(r);
}

/* SQL crc(blob): the chunk checksum (gm__chunk_crc). */
static void fuzz_sql_crc(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const uint8_t *p = sqlite3_value_blob(argv[0]);
    int n = sqlite3_value_bytes(argv[0]);
    sqlite3_result_int64(ctx, gm__chunk_crc(p ? p : (const uint8_t *)"", n > 0 ? (size_t)n : 0));
}

/* Give every chunk the checksum of its data as it now is (errors ignored:
 * the input may be no database at all), so that a mutated chunk reaches
 * the decoder rather than stopping at its checksum every time. */
static void fuzz_reseal(const char *path)
{
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_create_function(db, "crc", 1, SQLITE_UTF8, NULL, fuzz_sql_crc, NULL, NULL) ==
            SQLITE_OK)
        sqlite3_exec(db, "UPDATE chunks SET crc = crc(data)", NULL, NULL, NULL);
    sqlite3_close(db);
}

/* The store path is a FIFO: refused as not a regular file, by the reading
 * and the writing open, without blocking (SIGALRM ends a hang). */
static void fuzz_fifo(const char *path)
{
    FUZZ_CHECK(mkfifo(path, 0600) == 0, path);
    static const unsigned modes[] = {GM_STORE_READONLY, GM_STORE_WRITE};
    for (size_t i = 0; i < 2; i++) {
        gm_store_t *s = NULL;
        gm_error_t err = {0};
        alarm(10);
        int rc = gm_store_open(path, modes[i], &s, &err);
        alarm(0);
        FUZZ_CHECK(rc == GM_EIO && s == NULL && strstr(err.msg, "not a regular file"), err.msg);
    }
    fuzz_unlink_all(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_path[0] == '\0')
        snprintf(fuzz_path, sizeof fuzz_path, "%s", fuzz_tmp("input"));
    fuzz_unlink_all(fuzz_path);
    if (size >= 4 && memcmp(data, "FIFO", 4) == 0) {
        fuzz_fifo(fuzz_path);
        return 0;
    }
    FILE *f = fopen(fuzz_path, "wb");
    FUZZ_CHECK(f != NULL, fuzz_path);
    FUZZ_CHECK((size == 0 || fwrite(data, 1, size, f) == size) && fclose(f) == 0, fuzz_path);
    /* half the inputs (by their last byte) with their chunks sealed again:
     * the checksum is checked as it is, and the decoder behind it too */
    if (size > 0 && (data[size - 1] & 1))
        fuzz_reseal(fuzz_path);

    gm_store_t *s;
    gm_error_t err = {0};
    int rc = gm_store_open(fuzz_path, GM_STORE_READONLY, &s, &err);
    if (rc) {
        fuzz_expect_error(rc, &err);
        fuzz_unlink_all(fuzz_path);
        return 0;
    }
    fuzz_shards(s);
    gm_trace_info_t *list;
    size_t n;
    rc = gm_store_list(s, &list, &n, &err);
    if (rc) {
        fuzz_expect_error(rc, &err);
    } else {
        for (size_t i = 0; i < n; i++) {
            fuzz_read(s, &list[i]);
            fuzz_replay(s, list[i].name, 0, 2);
            fuzz_replay(s, list[i].name, 4u << 20, 1);
        }
        gm_trace_info_free_list(list, n);
    }
    gm_store_close(s);
    fuzz_unlink_all(fuzz_path);
    return 0;
}

/* ---- seeds --------------------------------------------------------------- */

static void fuzz_add(gm_writer_t *w, gm_event_t e)
{
    gm_error_t err;
    if (gm_writer_add(w, &e, &err) != 0)
        abort();
}

/* Trace "mixed": a few dozen events over two streams, with marks (one of
 * them empty_cache), frames, devices, addresses, flags, a segment, a
 * zero-size ALLOC (dropped) and attributes. */
static void fuzz_trace_mixed(gm_store_t *s)
{
    gm_writer_t *w;
    gm_error_t err;
    uint32_t st0, st1, step, empty, f1, f2;
    if (gm_writer_begin(s, "mixed", 0, &w, &err) || gm_writer_stream(w, 0, &st0, &err) ||
        gm_writer_stream(w, 0x7f00aa, &st1, &err) || gm_writer_tag(w, "step", &step, &err) ||
        gm_writer_tag(w, "empty_cache", &empty, &err) ||
        gm_writer_frames(w, "train.py:10\nmodel.py:3", &f1, &err) ||
        gm_writer_frames(w, "eval.py:7", &f2, &err) ||
        gm_writer_attr_str(w, "source", "fuzz", &err) ||
        gm_writer_attr_json(w, "conf", "{\"a\": [1, 2.5, null]}", &err))
        abort();
    uint64_t ts = 1000, id = 0, rng = 7;
    for (int i = 0; i < 40; i++) {
        uint64_t r = gt_rand(&rng);
        ts += 100 + r % 900;
        if (i % 10 == 0)
            fuzz_add(w, (gm_event_t){.op = GM_OP_MARK, .tag = i == 20 ? empty : step, .ts_ns = ts});
        uint32_t frames = (r >> 12) % 3 == 0 ? f1 : (r >> 12) % 3 == 1 ? f2 : 0;
        if (i % 3 != 2 || id == 0) {
            fuzz_add(w, (gm_event_t){.op = GM_OP_ALLOC,
                                     .id = id++,
                                     .size = i == 4 ? 0 : 512u << (r % 12),
                                     .stream = (r >> 8) % 4 == 0 ? st1 : st0,
                                     .frames = frames,
                                     .device = (uint16_t)((r >> 16) % 2),
                                     .addr = 0x7f0000000000 + ((r >> 20) & 0xff) * 512,
                                     .flags = i < 2 ? GM_EVENT_PREEXISTING : 0,
                                     .ts_ns = ts});
        } else {
            fuzz_add(w, (gm_event_t){.op = GM_OP_FREE, .id = id - 1, .stream = st0, .ts_ns = ts});
        }
    }
    fuzz_add(w, (gm_event_t){.op = GM_OP_SEG_ALLOC, .size = 2u << 20, .addr = 0x7f0000000000,
                             .ts_ns = ts + 5});
    fuzz_add(w, (gm_event_t){.op = GM_OP_FREE, .id = 0, .ts_ns = ts + 10});
    if (gm_writer_finish(w, &err) != 0)
        abort();
}

/* Trace `name`: n plain ALLOC/FREE events on one stream, µs-timed. */
static void fuzz_trace_plain(gm_store_t *s, const char *name, int n)
{
    gm_writer_t *w;
    gm_error_t err;
    if (gm_writer_begin(s, name, 0, &w, &err))
        abort();
    uint64_t id = 0, live = 0;
    for (int i = 0; i < n; i++) {
        gm_event_t e = {.ts_ns = 1000 * (uint64_t)i};
        if (live == 0 || i % 3 != 0) {
            e.op = GM_OP_ALLOC;
            e.id = id++;
            e.size = 4096 + 512 * (uint64_t)(i % 5);
            live++;
        } else {
            e.op = GM_OP_FREE;
            e.id = id - live--; /* oldest first */
        }
        fuzz_add(w, e);
    }
    if (gm_writer_finish(w, &err) != 0)
        abort();
}

/* Write a store with fill(), compact it, and return its bytes. */
static gm_fuzz_seed_t fuzz_seed(void (*fill)(gm_store_t *))
{
    const char *path = fuzz_tmp("seed");
    fuzz_unlink_all(path);
    gm_store_t *s;
    gm_error_t err;
    if (gm_store_open(path, GM_STORE_WRITE, &s, &err) != 0)
        abort();
    fill(s);
    gm_store_close(s);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM", NULL,
                     NULL, NULL) != SQLITE_OK)
        abort();
    sqlite3_close(db);
    gm_fuzz_seed_t seed;
    seed.data = (uint8_t *)gt_read_file(path, &seed.len);
    if (seed.data == NULL)
        abort();
    fuzz_unlink_all(path);
    return seed;
}

static void fuzz_fill_two(gm_store_t *s)
{
    fuzz_trace_mixed(s);
    fuzz_trace_plain(s, "plain", 30);
    /* and a sweep's shard records: one whole, one cut short */
    gm_error_t err;
    gm_shard_record_t a = {"0123456789abcdef0123456789abcdef", 1, 3, 10, 10};
    gm_shard_record_t b = {"0123456789abcdef0123456789abcdef", 3, 3, 10, 4};
    if (gm_store_put_shard(s, &a, &err) != 0 || gm_store_put_shard(s, &b, &err) != 0)
        abort();
}

static void fuzz_fill_plain(gm_store_t *s) { fuzz_trace_plain(s, "only", 60); }

/* An empty trace and one that is a single mark. */
static void fuzz_fill_small(gm_store_t *s)
{
    gm_writer_t *w;
    gm_error_t err;
    uint32_t tag;
    if (gm_writer_begin(s, "empty", 0, &w, &err) || gm_writer_finish(w, &err) ||
        gm_writer_begin(s, "mark", 0, &w, &err) || gm_writer_tag(w, "empty_cache", &tag, &err))
        abort();
    fuzz_add(w, (gm_event_t){.op = GM_OP_MARK, .tag = tag, .ts_ns = 5});
    if (gm_writer_finish(w, &err) != 0)
        abort();
}

static void fuzz_fill_none(gm_store_t *s) { (void)s; }

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    static void (*const fills[])(gm_store_t *) = {fuzz_fill_two, fuzz_fill_plain,
                                                   fuzz_fill_small, fuzz_fill_none};
    size_t count = sizeof fills / sizeof fills[0];
    *out = malloc((count + 1) * sizeof **out);
    if (*out == NULL)
        abort();
    for (size_t i = 0; i < count; i++)
        (*out)[i] = fuzz_seed(fills[i]);
    (*out)[count].data = (uint8_t *)strdup("FIFO");
    (*out)[count].len = 4;
    if ((*out)[count].data == NULL)
        abort();
    return count + 1;
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
