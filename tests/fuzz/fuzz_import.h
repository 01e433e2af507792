/*
 * tests/fuzz/fuzz_import.h — what the fuzz targets of the importers share:
 * run one importer over an input held in memory (through fmemopen, so the
 * importer sees a seekable FILE as `gmsim import` gives it) into a reused
 * in-memory store, commit or abort, and read every trace written back;
 * and seeds from built-in texts plus real files from ../shared/data.
 * Any result is fine; a crash, a sanitizer report or a leak is the bug.
 */
#ifndef GM_TESTS_FUZZ_IMPORT_H
#define GM_TESTS_FUZZ_IMPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util.h"

static gm_store_t *fuzz_import_store;

/* Read every event of every trace of the store (decoding what was kept). */
static void fuzz_import_read_all(gm_store_t *s)
{
    gm_trace_info_t *list;
    size_t n;
    gm_error_t err;
    if (gm_store_list(s, &list, &n, &err) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        gm_reader_t *r;
        if (gm_reader_open(s, list[i].name, &r, &err) != 0)
            continue;
        const gm_event_t *evs;
        size_t k;
        while (gm_reader_next(r, &evs, &k, &err) == 0 && k > 0)
            ;
        gm_reader_close(r);
    }
    gm_trace_info_free_list(list, n);
}

/* Import data[0..size) with fn as `filename`; the store is emptied first. */
static void fuzz_import_run(gm_import_fn fn, const uint8_t *data, size_t size,
                            const char *filename)
{
    gm_error_t err;
    if (fuzz_import_store == NULL &&
        gm_store_open(":memory:", GM_STORE_WRITE, &fuzz_import_store, &err) != 0)
        abort();
    gm_trace_info_t *list;
    size_t n;
    if (gm_store_list(fuzz_import_store, &list, &n, &err) == 0) {
        for (size_t i = 0; i < n; i++)
            gm_store_delete(fuzz_import_store, list[i].name, &err);
        gm_trace_info_free_list(list, n);
    }
    gm_import_target_t *t;
    if (gm_import_target_create(fuzz_import_store, "fuzz", GM_WRITE_REPLACE, &t, &err) != 0)
        abort();
    /* fmemopen of an empty buffer fails on some C libraries: give it one byte
     * it never reads past the length. */
    static const uint8_t empty[1] = {0};
    FILE *in = fmemopen((void *)(size ? data : empty), size ? size : 1, "r");
    if (in == NULL)
        abort();
    if (size == 0)
        fseek(in, 1, SEEK_SET);
    int rc = fn(in, filename, t, &err);
    fclose(in);
    if (rc == 0 && gm_import_commit(t, &err) == 0)
        fuzz_import_read_all(fuzz_import_store);
    else if (rc != 0)
        gm_import_abort(t);
    if (rc != 0 && (err.msg[0] == '\0' || strstr(err.msg, filename) == NULL) &&
        err.code != GM_ENOMEM)
        abort(); /* every error names the file */
}

/* Seeds: the texts, then the files (paths under ../shared/data, skipped
 * when absent). */
static size_t fuzz_import_seeds(gm_fuzz_seed_t **out, const char *const *texts, size_t ntexts,
                                const char *const *files, size_t nfiles)
{
    gm_fuzz_seed_t *seeds = calloc(ntexts + nfiles + 1, sizeof *seeds);
    size_t n = 0;
    if (seeds == NULL) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < ntexts; i++) {
        seeds[n].len = strlen(texts[i]);
        seeds[n].data = malloc(seeds[n].len + 1);
        if (seeds[n].data == NULL)
            break;
        memcpy(seeds[n].data, texts[i], seeds[n].len);
        n++;
    }
    for (size_t i = 0; i < nfiles; i++) {
        const char *why;
        const char *path = gt_data_path(files[i], &why);
        size_t len;
        char *text = path ? gt_read_file(path, &len) : NULL;
        if (text == NULL)
            continue;
        seeds[n].data = (uint8_t *)text;
        seeds[n].len = len;
        n++;
    }
    *out = seeds;
    return n;
}

#endif
