/*
 * tests/test_store_tampered.c — stores damaged and tampered with: damaged
 * chunks, then every part of the schema edited by plain SQL, one edit at a
 * time, on a copy of the tampering template (tests/support/store_fixture.c).
 */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/codec.h"
#include "support/store_fixture.h"
#include "util.h"

/* ---- damaged stores ------------------------------------------------------ */

/* Write a 3-chunk trace into a fresh file, damage it with sql, and return
 * the reader's first error. */
static int st_damaged(const char *file, const char *sql, int at_open, gm_error_t *err)
{
    gm_store_t *s = st_open_new(file);
    char path[600];
    snprintf(path, sizeof path, "%s", gm_store_path(s));
    st_trace_t t = st_random(31, 150000, 1);
    st_write(s, "t", &t, 0);
    st_trace_free(&t);
    gm_store_close(s);
    cr_assert_eq(st_sql(path, sql), SQLITE_OK, "%s", sql);
    cr_assert_eq(gm_store_open(path, GM_STORE_READONLY, &s, err), 0);
    gm_reader_t *r;
    int rc = gm_reader_open(s, "t", &r, err);
    if (at_open) {
        gm_store_close(s);
        return rc;
    }
    cr_assert_eq(rc, 0, "%s", err->msg);
    const gm_event_t *ev;
    size_t n;
    while ((rc = gm_reader_next(r, &ev, &n, err)) == 0 && n > 0)
        ;
    /* the error repeats */
    gm_error_t again;
    if (rc)
        cr_assert_eq(gm_reader_next(r, &ev, &n, &again), rc);
    gm_reader_close(r);
    gm_store_close(s);
    return rc;
}

Test(store, damaged_chunks_are_reported)
{
    gm_error_t err;
    int rc = st_damaged("dmg1.db",
                        "UPDATE chunks SET data = substr(data, 1, length(data) - 3) WHERE seq = 1",
                        0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "dmg1.db': trace 't' chunk 1 (from event 65536): ") != NULL, "%s",
              err.msg);

    rc = st_damaged("dmg2.db", "UPDATE chunks SET first_event = 5 WHERE seq = 2", 0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "trace 't' chunk 2: starts at event 5") != NULL, "%s", err.msg);

    rc = st_damaged("dmg3.db", "UPDATE chunks SET seq = 7 WHERE seq = 1", 0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "dmg3.db': trace 't' chunk 1: missing") != NULL, "%s", err.msg);

    rc = st_damaged("dmg4.db", "DELETE FROM chunks WHERE seq = 2", 1, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "dmg4.db': trace 't': 2 chunks stored, 3 expected") != NULL, "%s",
              err.msg);

    rc = st_damaged("dmg5.db", "UPDATE chunks SET nevents = nevents + 1 WHERE seq = 0", 0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "trace 't' chunk 0: ") != NULL, "%s", err.msg);

    /* a summary that adds up but is not what the chunks hold: found at the end */
    rc = st_damaged("dmg6.db",
                    "UPDATE traces SET events = events + 1, allocs = allocs + 1, "
                    "live_at_end = live_at_end + 1",
                    0, &err);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "in the summary") != NULL, "%s", err.msg);

    /* a flipped byte in zlib data or in a stored column: corrupt, never a crash */
    for (int pos = 20; pos < 2000; pos += 97) {
        char sql[256], file[32];
        snprintf(sql, sizeof sql,
                 "UPDATE chunks SET data = substr(data, 1, %d) || "
                 "CAST(char((unicode(substr(data, %d, 1)) + 1) %% 128) AS BLOB) || "
                 "substr(data, %d) WHERE seq = 0",
                 pos - 1, pos, pos + 1);
        snprintf(file, sizeof file, "flip%d.db", pos);
        rc = st_damaged(file, sql, 0, &err);
        cr_assert(rc == 0 || rc == GM_ECORRUPT, "rc %d: %s", rc, err.msg);
        if (rc)
            cr_assert(strstr(err.msg, "db': trace 't' chunk 0") != NULL, "%s", err.msg);
    }
}

/* ---- tampered stores ----------------------------------------------------- */

/*
 * A store handed to gmsim is outside data: each test below makes a valid
 * store with the API, edits it with plain SQL the way a damaged or
 * hand-edited file could be, and asserts what reading it gives: an error
 * naming the file or trace and the place (the same from the reader and from
 * a replay), or, where the edit does not matter to reading, a correct read.
 *
 * The template holds trace "t" (st_random seed 31, 150000 events, 3 chunks,
 * 3 streams, 4 tags, 5 frames) and trace "u" (3 events; stream 1 and tag
 * "unused" interned but never referred to).  It is written once per test
 * process and copied for each edit.
 */

/* Assert that the edit is harmless: trace t reads back as written. */
static void st_expect_harmless(const char *file, const char *sql)
{
    const char *path = st_tampered(file, sql);
    int rc;
    gm_error_t err = {0};
    cr_assert_eq(st_read_back(path, "t", &st_tmpl_t, &rc, &err), ST_READ_OK, "%s: %s", sql,
                 err.msg);
}

/* A number from the template (after an edit, from the copy at path). */
static long long st_tmpl_int(const char *sql)
{
    return (long long)st_sql_int(st_template(), sql);
}

/* Index in trace t of the first event whose field (0 stream, 1 tag,
 * 2 frames) is v. */
static uint64_t st_first_with(int field, uint32_t v)
{
    st_template();
    for (uint64_t i = 0; i < st_tmpl_t.nwant; i++) {
        const gm_event_t *e = &st_tmpl_t.want[i];
        if ((field == 0 ? e->stream : field == 1 ? e->tag : e->frames) == v)
            return i;
    }
    cr_assert_fail("no event with value %u in field %d", v, field);
    return 0;
}

Test(store, tampered_chunk_rows)
{
    st_template();
    long long a1 = st_tmpl_int("SELECT first_alloc FROM chunks WHERE seq = 1 AND trace_id = " ST_T);
    long long n1 = st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 1 AND trace_id = " ST_T);
    long long n2 = st_tmpl_int("SELECT nevents FROM chunks WHERE seq = 2 AND trace_id = " ST_T);

    /* a chunk row deleted: a gap in seq, the count no longer the summary's */
    st_expect("gap.db", "DELETE FROM chunks WHERE seq = 1 AND trace_id = " ST_T, "t",
              ST_AT_READER_OPEN, GM_ECORRUPT, "trace 't': 2 chunks stored, 3 expected");
    /* ... and with the summary's chunks edited to match */
    st_expect("gap2.db",
              "DELETE FROM chunks WHERE seq = 1 AND trace_id = " ST_T ";"
              "UPDATE traces SET chunks = 2 WHERE name = 't'",
              "t", ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of 2 chunks for %zu events, 3 expected",
              gt_tmpfile("gap2.db"), st_tmpl_t.nwant);
    /* every chunk of a trace gone */
    st_expect("nochunks.db", "DELETE FROM chunks WHERE trace_id = " ST_T, "t", ST_AT_READER_OPEN,
              GM_ECORRUPT, "trace 't': 0 chunks stored, 3 expected");
    /* chunks renumbered from 3 */
    st_expect("seq1.db", "UPDATE chunks SET seq = seq + 3 WHERE trace_id = " ST_T, "t", ST_AT_NEXT,
              GM_ECORRUPT, "trace 't' chunk 0: missing");

    /* wrong first_event, first_alloc, nevents, nallocs */
    st_expect("fe.db", "UPDATE chunks SET first_event = 65535 WHERE seq = 1", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 1: starts at event 65535 and alloc %lld, expected 65536 and %lld",
              a1, a1);
    st_expect("fa.db", "UPDATE chunks SET first_alloc = first_alloc + 1 WHERE seq = 1", "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 1: starts at event 65536 and alloc %lld, expected 65536 and %lld",
              a1 + 1, a1);
    st_expect("fa-neg.db", "UPDATE chunks SET first_alloc = -1 WHERE seq = 0", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 0: starts at event 0 and alloc -1, expected 0 and 0");
    st_expect("ne.db", "UPDATE chunks SET nevents = 65537 WHERE seq = 1", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 1: 65536 events and %lld allocs decoded, 65537 and %lld recorded",
              n1, n1);
    st_expect("ne-neg.db", "UPDATE chunks SET nevents = -5 WHERE seq = 0", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 0: 65536 events and %lld allocs decoded, -5 and %lld recorded",
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 0 AND trace_id = " ST_T),
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 0 AND trace_id = " ST_T));
    st_expect("ne0.db", "UPDATE chunks SET nevents = 0 WHERE seq = 2", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 2: %lld events and %lld allocs decoded, 0 and %lld recorded", n2,
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 2 AND trace_id = " ST_T),
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 2 AND trace_id = " ST_T));
    st_expect("na.db", "UPDATE chunks SET nallocs = nallocs - 1 WHERE seq = 1", "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk 1: 65536 events and %lld allocs decoded, 65536 and %lld recorded",
              n1, n1 - 1);
    /* the next chunk starts where the wrong count said this one ended */
    st_expect("ne-both.db",
              "UPDATE chunks SET nevents = nevents + 1 WHERE seq = 1;"
              "UPDATE chunks SET first_event = first_event + 1 WHERE seq = 2",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 1: 65536 events and %lld allocs decoded, 65537 and %lld recorded",
              n1, n1);
    /* a count stored as text that reads as a number is a number */
    st_expect_harmless("ne-text.db",
                       "UPDATE chunks SET nevents = CAST(nevents AS TEXT) WHERE seq = 2");
}

Test(store, tampered_chunk_data)
{
    /* garbage, empty, text, truncated */
    st_expect("garbage.db", "UPDATE chunks SET data = x'00112233445566778899' WHERE seq = 1",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 1 (from event 65536): chunk header: bad magic");
    st_expect("empty.db", "UPDATE chunks SET data = x'' WHERE seq = 0", "t", ST_AT_NEXT,
              GM_ECORRUPT, "trace 't' chunk 0 (from event 0): chunk header: bad magic");
    st_expect("text.db", "UPDATE chunks SET data = 'GC' WHERE seq = 0", "t", ST_AT_NEXT,
              GM_ECORRUPT, "trace 't' chunk 0 (from event 0): chunk header: bad magic");
    st_expect("v2.db", "UPDATE chunks SET data = x'474302' || substr(data, 4) WHERE seq = 2", "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 2 (from event 131072): chunk header: unknown format version 2");
    st_expect("head.db", "UPDATE chunks SET data = substr(data, 1, 3) WHERE seq = 1", "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 1 (from event 65536): chunk header: truncated");
    st_expect("half.db", "UPDATE chunks SET data = substr(data, 1, length(data) / 2) WHERE seq = 2",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 2 (from event 131072): chunk header: column 1 overruns the chunk");
    st_expect("longer.db", "UPDATE chunks SET data = data || x'00' WHERE seq = 0", "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 0 (from event 0): chunk header: 1 bytes after the columns");

    /* valid chunks in the wrong place: swapped, or another trace's */
    const char *swap = "UPDATE chunks SET data = (SELECT data FROM chunks c WHERE c.trace_id = "
                       "chunks.trace_id AND c.seq = 1 - chunks.seq) WHERE seq IN (0, 1) AND "
                       "trace_id = " ST_T;
    const char *path = st_tampered("swap.db", swap);
    int rc;
    gm_error_t err;
    cr_assert_eq(st_read_back(path, "t", NULL, &rc, &err), ST_AT_NEXT);
    cr_assert_eq(rc, GM_ECORRUPT);
    cr_assert(strstr(err.msg, "swap.db': trace 't' chunk 0") != NULL, "%s", err.msg);
    st_expect("other.db",
              "UPDATE chunks SET data = (SELECT data FROM chunks WHERE trace_id = " ST_U
              ") WHERE seq = 2 AND trace_id = " ST_T,
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk 2: 3 events and 1 allocs decoded, %lld and %lld recorded",
              st_tmpl_int("SELECT nevents FROM chunks WHERE seq = 2 AND trace_id = " ST_T),
              st_tmpl_int("SELECT nallocs FROM chunks WHERE seq = 2 AND trace_id = " ST_T));
    /* the other trace is untouched by any of it */
    cr_assert_eq(st_read_back(path, "u", NULL, &rc, &err), ST_READ_OK, "%s", err.msg);
}

/* Replace the data of trace u's one chunk (3 events, 1 ALLOC) with the
 * encoding of ev, in a copy of the template; its path. */
static const char *st_tampered_u_chunk(const char *file, const gm_event_t *ev, size_t n)
{
    const char *path = st_tampered(file, NULL);
    gm__codec_t c;
    gm__codec_init(&c, -1);
    const uint8_t *blob;
    size_t len;
    gm_error_t err;
    cr_assert_eq(gm__chunk_encode(&c, ev, n, 0, &blob, &len, NULL, &err), 0, "%s", err.msg);
    sqlite3 *db;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(db, "UPDATE chunks SET data = ?1 WHERE trace_id = " ST_U, -1,
                                    &st, NULL),
                 SQLITE_OK);
    sqlite3_bind_blob(st, 1, blob, (int)len, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    gm__codec_release(&c);
    st_reseal(path);
    return path;
}

Test(store, tampered_events_the_codec_accepts)
{
    /* A well-formed chunk with the counts its row records but events the
     * writer refuses: a second FREE of one id.  The reader does not keep a
     * live set (it would cost every read), so it hands them out; a replay
     * refuses them with the trace and event named. */
    gm_event_t ev[3] = {{.op = GM_OP_ALLOC, .id = 0, .size = 64},
                        {.op = GM_OP_FREE, .id = 0},
                        {.op = GM_OP_FREE, .id = 0}};
    const char *p = st_tampered_u_chunk("double-free.db", ev, 3);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_reader_t *r;
    const gm_event_t *got;
    size_t n;
    cr_assert_eq(gm_reader_open(s, "u", &r, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_reader_next(r, &got, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 3);
    cr_assert(got[1].op == GM_OP_FREE && got[2].op == GM_OP_FREE && got[2].id == 0);
    gm_reader_close(r);
    gm_replay_t *rp;
    cr_assert_eq(gm_replay_create(NULL, &rp, &err), 0);
    gm_params_t params;
    cr_assert_eq(gm_params_init(&params, gm_policy_at(0), &err), 0);
    cr_assert_eq(gm_replay_add(rp, &params, &err), 0);
    gm_params_release(&params);
    cr_assert_eq(gm_replay_trace(rp, s, "u", &err), GM_EFORMAT);
    cr_assert_str_eq(err.msg, "trace 'u': event 2: free of id 0 that is not live");
    gm_replay_destroy(rp);
    gm_store_close(s);

    /* a MARK whose tag the tags table lacks, in a chunk that is otherwise
     * right: refused by the reader */
    gm_event_t ev2[3] = {{.op = GM_OP_ALLOC, .id = 0, .size = 64},
                         {.op = GM_OP_MARK, .tag = 7},
                         {.op = GM_OP_FREE, .id = 0}};
    p = st_tampered_u_chunk("mark7.db", ev2, 3);
    int rc;
    cr_assert_eq(st_read_back(p, "u", NULL, &rc, &err), ST_AT_NEXT);
    cr_assert(strstr(err.msg, "mark7.db': trace 'u' chunk 0 (from event 0): event 1: tag index 7, "
                              "but the tags table has 2 rows") != NULL,
              "%s", err.msg);
}

Test(store, tampered_summary)
{
    const char *p;
    long long allocs = st_tmpl_int("SELECT allocs FROM traces WHERE name = 't'");
    long long frees = st_tmpl_int("SELECT frees FROM traces WHERE name = 't'");
    long long marks = st_tmpl_int("SELECT marks FROM traces WHERE name = 't'");
    long long segs = st_tmpl_int("SELECT segs FROM traces WHERE name = 't'");

    /* counts that do not add up: refused at open */
    p = gt_tmpfile("ev1.db");
    st_expect("ev1.db", "UPDATE traces SET events = events + 1 WHERE name = 't'", "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of %zu events is not its %lld allocs + %lld frees + "
              "%lld marks + %lld segs",
              p, st_tmpl_t.nwant + 1, allocs, frees, marks, segs);
    p = gt_tmpfile("live.db");
    st_expect("live.db", "UPDATE traces SET live_at_end = 0 WHERE name = 't'", "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of 0 allocations live at the end is not its %lld allocs "
              "- %lld frees",
              p, allocs, frees);
    /* counts that add up but are not the chunks': found at the end */
    st_expect("shift.db",
              "UPDATE traces SET allocs = allocs - 1, frees = frees + 1, "
              "live_at_end = live_at_end - 2 WHERE name = 't'",
              "t", ST_AT_NEXT, GM_ECORRUPT,
              "trace 't': %zu events and %lld allocs in the chunks, %zu and %lld in the summary",
              st_tmpl_t.nwant, allocs, st_tmpl_t.nwant, allocs - 1);
    /* negative, huge, not numbers: refused wherever the summary is read */
    p = gt_tmpfile("neg.db");
    st_expect("neg.db", "UPDATE traces SET events = -1 WHERE name = 't'", "t", ST_AT_LIST,
              GM_ECORRUPT, "'%s': trace 't': events is -1, not a count", p);
    p = gt_tmpfile("negc.db");
    st_expect("negc.db", "UPDATE traces SET chunks = -3 WHERE name = 't'", "t", ST_AT_LIST,
              GM_ECORRUPT, "'%s': trace 't': chunks is -3, not a count", p);
    p = gt_tmpfile("text-count.db");
    st_expect("text-count.db", "UPDATE traces SET load = 'lots' WHERE name = 't'", "t",
              ST_AT_LIST, GM_ECORRUPT, "'%s': trace 't': load is text, not a count", p);
    p = gt_tmpfile("real.db");
    st_expect("real.db", "UPDATE traces SET bytes = 1.5 WHERE name = 't'", "t", ST_AT_LIST,
              GM_ECORRUPT, "'%s': trace 't': bytes is a real, not a count", p);
    p = gt_tmpfile("huge.db");
    st_expect("huge.db", "UPDATE traces SET chunks = 9223372036854775807 WHERE name = 't'", "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of 9223372036854775807 chunks for %zu events, 3 expected",
              p, st_tmpl_t.nwant);
    p = gt_tmpfile("huge2.db");
    st_expect("huge2.db",
              "UPDATE traces SET events = 9223372036854775807, allocs = 9223372036854775807 "
              "WHERE name = 't'",
              "t", ST_AT_READER_OPEN, GM_ECORRUPT,
              "'%s': trace 't': summary of 9223372036854775807 events is not its "
              "9223372036854775807 allocs + %lld frees + %lld marks + %lld segs",
              p, frees, marks, segs);
    /* gm_store_find (and so the reader) refuses it too; other traces read */
    p = st_tampered("neg2.db", "UPDATE traces SET frees = -2 WHERE name = 't'");
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, "t", &info, &err), GM_ECORRUPT);
    char want[1200];
    snprintf(want, sizeof want, "'%s': trace 't': frees is -2, not a count", p);
    cr_assert_str_eq(err.msg, want);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "t", &r, &err), GM_ECORRUPT);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(gm_store_find(s, "u", &info, &err), 0, "%s", err.msg);
    gm_trace_info_release(&info);
    gm_store_close(s);

    /* what reading does not depend on: the digest, the time, LOAD, bytes */
    st_expect_harmless("digest.db", "UPDATE traces SET digest = 'not a digest', created = 'never'");
    st_expect_harmless("load.db", "UPDATE traces SET load = 1, bytes = 2 WHERE name = 't'");
    st_expect_harmless("numtext.db", "UPDATE traces SET events = CAST(events AS TEXT) WHERE "
                                     "name = 't'");
    /* the summary row gone: the trace is gone, its orphan rows harmless */
    p = st_tampered("norow.db", "DELETE FROM traces WHERE name = 't'");
    int rc;
    cr_assert_eq(st_read_back(p, "t", NULL, &rc, &err), ST_AT_READER_OPEN);
    cr_assert_eq(rc, GM_ENOTFOUND);
    snprintf(want, sizeof want, "no trace 't' in '%s'", p);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(st_read_back(p, "u", NULL, &rc, &err), ST_READ_OK, "%s", err.msg);
    /* a trace written next takes an id none of them has, even where the
     * trace deleted had the largest */
    p = st_tampered("norow-u.db", "DELETE FROM traces WHERE name = 'u'");
    cr_assert_eq(gm_store_open(p, GM_STORE_WRITE, &s, &err), 0, "%s", err.msg);
    st_write(s, "t2", &st_tmpl_t, 0);
    st_check(s, "t2", &st_tmpl_t);
    gm_store_close(s);
}

Test(store, tampered_attrs)
{
    static const char *const bad[] = {"'{\"a\": '", "'[1, 2]'", "''", "'{} {}'", "'null'",
                                      "'{\"a\": 01}'", "x'7b2261223a2022ff227d'"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char sql[256], file[32];
        snprintf(sql, sizeof sql, "UPDATE traces SET attrs = %s WHERE name = 't'", bad[i]);
        snprintf(file, sizeof file, "attrs%zu.db", i);
        st_expect(file, sql, "t", ST_AT_LIST, GM_ECORRUPT,
                  "'%s': trace 't': attrs is not a JSON object", gt_tmpfile(file));
    }
    /* any JSON object will do, with or without dropped_zero_size */
    st_expect_harmless("attrs-ok.db", "UPDATE traces SET attrs = ' {\"x\": [1, {}]} '");
    st_expect_harmless("attrs-min.db", "UPDATE traces SET attrs = '{}'");
}

Test(store, tampered_interned_tables)
{
    st_template();
    /* a row missing in the middle of a table, or out of place */
    st_expect("st-mid.db", "DELETE FROM streams WHERE idx = 1 AND trace_id = " ST_T, "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "trace 't': table streams: index 2 where 1 was expected (a row is missing or out "
              "of place)");
    st_expect("tag-first.db", "DELETE FROM tags WHERE idx = 0 AND trace_id = " ST_T, "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "trace 't': table tags: index 1 where 0 was expected (a row is missing or out of "
              "place)");
    st_expect("fr-first.db", "DELETE FROM frames WHERE idx = 1 AND trace_id = " ST_T, "t",
              ST_AT_READER_OPEN, GM_ECORRUPT,
              "trace 't': table frames: index 2 where 1 was expected (a row is missing or out of "
              "place)");
    st_expect("tag-text.db", "UPDATE tags SET idx = 'two' WHERE idx = 2 AND trace_id = " ST_T,
              "t", ST_AT_READER_OPEN, GM_ECORRUPT,
              "trace 't': table tags: index 3 where 2 was expected (a row is missing or out of "
              "place)");

    /* the last row gone: the events that refer to it are found */
    uint64_t at = st_first_with(0, 2);
    st_expect("st-last.db", "DELETE FROM streams WHERE idx = 2 AND trace_id = " ST_T, "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk %llu (from event %llu): event %llu: stream index 2, but the "
              "streams table has 2 rows",
              (unsigned long long)(at / GM_CHUNK_EVENTS),
              (unsigned long long)(at / GM_CHUNK_EVENTS * GM_CHUNK_EVENTS),
              (unsigned long long)(at % GM_CHUNK_EVENTS));
    uint64_t at1 = st_first_with(0, 1);
    at = at < at1 ? at : at1;
    st_expect("st-all.db", "DELETE FROM streams WHERE trace_id = " ST_T, "t", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 't' chunk %llu (from event %llu): event %llu: stream index %u, but the "
              "streams table has 0 rows",
              (unsigned long long)(at / GM_CHUNK_EVENTS),
              (unsigned long long)(at / GM_CHUNK_EVENTS * GM_CHUNK_EVENTS),
              (unsigned long long)(at % GM_CHUNK_EVENTS), st_tmpl_t.want[at].stream);
    at = st_first_with(1, 3);
    st_expect("tag-last.db", "DELETE FROM tags WHERE idx = 3 AND trace_id = " ST_T, "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk %llu (from event %llu): event %llu: tag index 3, but the tags "
              "table has 3 rows",
              (unsigned long long)(at / GM_CHUNK_EVENTS),
              (unsigned long long)(at / GM_CHUNK_EVENTS * GM_CHUNK_EVENTS),
              (unsigned long long)(at % GM_CHUNK_EVENTS));
    at = st_first_with(2, 5);
    st_expect("fr-last.db", "DELETE FROM frames WHERE idx = 5 AND trace_id = " ST_T, "t",
              ST_AT_NEXT, GM_ECORRUPT,
              "trace 't' chunk %llu (from event %llu): event %llu: frames index 5, but the "
              "frames table has 4 rows",
              (unsigned long long)(at / GM_CHUNK_EVENTS),
              (unsigned long long)(at / GM_CHUNK_EVENTS * GM_CHUNK_EVENTS),
              (unsigned long long)(at % GM_CHUNK_EVENTS));
    /* a MARK needs a tag even where the index is 0 */
    st_expect("u-tags.db", "DELETE FROM tags WHERE trace_id = " ST_U, "u", ST_AT_NEXT,
              GM_ECORRUPT,
              "trace 'u' chunk 0 (from event 0): event 1: tag index 0, but the tags table has 0 "
              "rows");

    /* rows nothing refers to: harmless */
    const char *p = st_tampered("unused.db", "DELETE FROM tags WHERE idx = 1 AND trace_id = " ST_U
                                             "; DELETE FROM streams WHERE idx = 1 AND trace_id "
                                             "= " ST_U);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), 0, "%s", err.msg);
    gm_reader_t *r;
    cr_assert_eq(gm_reader_open(s, "u", &r, &err), 0, "%s", err.msg);
    cr_assert_eq(gm_reader_tag_count(r), 1);
    cr_assert_eq(gm_reader_stream_count(r), 1);
    const gm_event_t *ev;
    size_t n;
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(gm_reader_tag(r, ev[1].tag), "used");
    cr_assert_eq(gm_reader_next(r, &ev, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 0);
    gm_reader_close(r);
    gm_store_close(s);
    /* edited values (not indices) read as they are */
    st_expect_harmless("tag-renamed.db", "UPDATE tags SET name = 'renamed' WHERE idx = 0");
}

Test(store, tampered_schema)
{
    /* user_version reset with the tables there: refused, never rewritten */
    const char *p = st_tampered("v0.db", "PRAGMA user_version = 0");
    char want[1200];
    snprintf(want, sizeof want, "'%s' has schema version 0, this gmsim reads version %d", p,
             GM_STORE_SCHEMA_VERSION);
    gm_store_t *s;
    gm_error_t err;
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        cr_assert_eq(gm_store_open(p, flags, &s, &err), GM_ESCHEMA, "%s", err.msg);
        cr_assert_str_eq(err.msg, want);
    }
    cr_assert_eq(st_sql_int(p, "PRAGMA user_version"), 0);
    cr_assert_eq(st_sql_int(p, "SELECT count(*) FROM traces"), 2);

    /* a table gone, or a column */
    p = st_tampered("notraces.db", "DROP TABLE traces");
    snprintf(want, sizeof want, "'%s' is not a gmsim trace store: no table traces", p);
    for (unsigned flags = 0; flags <= GM_STORE_WRITE; flags++) {
        cr_assert_eq(gm_store_open(p, flags, &s, &err), GM_EFORMAT, "%s", err.msg);
        cr_assert_str_eq(err.msg, want);
    }
    p = st_tampered("nochunks-table.db", "DROP TABLE chunks");
    snprintf(want, sizeof want, "'%s' is not a gmsim trace store: no table chunks", p);
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), GM_EFORMAT, "%s", err.msg);
    cr_assert_str_eq(err.msg, want);
    p = st_tampered("noattrs.db", "ALTER TABLE traces DROP COLUMN attrs");
    snprintf(want, sizeof want,
             "'%s' is not a gmsim trace store: table traces: no such column: attrs", p);
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), GM_EFORMAT, "%s", err.msg);
    cr_assert_str_eq(err.msg, want);
    p = st_tampered("renamed.db", "ALTER TABLE frames RENAME COLUMN text TO words");
    snprintf(want, sizeof want,
             "'%s' is not a gmsim trace store: table frames: no such column: text", p);
    cr_assert_eq(gm_store_open(p, GM_STORE_READONLY, &s, &err), GM_EFORMAT, "%s", err.msg);
    cr_assert_str_eq(err.msg, want);
    /* tables gmsim does not read yet (replay results) may go */
    st_expect_harmless("noruns.db", "DROP TABLE timelines; DROP TABLE runs");
}
