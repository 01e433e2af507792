/*
 * tests/fuzz/fuzz_csv.c — fuzz target for the CSV importer.
 *
 * Each input is imported with gm_csv_import_buffer into a trace of an
 * in-memory store, then the writer is finished (when the import succeeded)
 * or aborted.  Any result is fine; a crash, a sanitizer report or a leak is
 * the bug.  A successful import is also exported again, which exercises the
 * quoting of whatever tag names the input produced.  The store is opened
 * once and reused (GM_WRITE_REPLACE), so a run costs the import, not the
 * schema creation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gm_store_t *fuzz_store;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_error_t err;
    if (fuzz_store == NULL && gm_store_open(":memory:", GM_STORE_WRITE, &fuzz_store, &err) != 0)
        abort();
    gm_writer_t *w;
    if (gm_writer_begin(fuzz_store, "fuzz", GM_WRITE_REPLACE, &w, &err) != 0)
        abort();
    if (gm_csv_import_buffer((const char *)data, size, "fuzz.csv", w, &err) != 0) {
        gm_writer_abort(w);
        return 0;
    }
    if (gm_writer_finish(w, &err) != 0)
        return 0;
    gm_reader_t *r;
    if (gm_reader_open(fuzz_store, "fuzz", &r, &err) == 0) {
        FILE *null = fopen("/dev/null", "w");
        if (null != NULL) {
            gm_csv_export(r, null, &err);
            fclose(null);
        }
        gm_reader_close(r);
    }
    return 0;
}

static const char *const fuzz_seed_texts[] = {
    /* segment events checked against the live ranges: maps merged and
     * unmapped in pieces, a segment freed twice (refused at line 8) */
    "1,seg_map,0x200000,0x200000,0,0\n2,seg_map,0x400000,0x200000,0,0\n"
    "3,seg_unmap,0x300000,0x200000,0,0\n4,seg_alloc,0x300000,0x200000,0,1\n"
    "5,seg_alloc,0x300000,0x200000,0,0\n6,seg_free,0x300000,0x200000,0,0\n"
    "7,seg_free,0x300000,0x200000,0,1\n8,seg_free,0x300000,0x200000,0,1\n",

    /* lines ending in CR alone: refused as such, not as a count of fields */
    "ts_ns,op,id,size,stream,device\r0,alloc,1,10,0,0\r5,mark,\"a\rb\",,,0\r9,free,1,,0,0\r",

    "ts_ns,op,id,size,stream,device\n"
    "0,mark,step,,,0\n"
    "10,alloc,0,1024,0x0,0\n"
    "20,alloc,1,2097152,0x7f0010,1\n"
    "25,seg_alloc,0x7f0000000000,20971520,0x0,0\n"
    "30,free,0,1024,0x0,0\n"
    "45,mark,\"phase, \"\"quoted\"\"\nline\",,,0\n"
    "60,free,1,2097152,0x7f0010,1\n",

    "# no header, application ids reused after free\n"
    "100, ALLOC, 9000, 64, 5, 0\r\n"
    "200,alloc,0x10,128,5,0\n"
    "\n"
    "300,free,9000,,5,0\n"
    "400,alloc,9000,0,,\n"
    "500,free,16,,5,0\n"
    "600,free,9000,,,\n",

    "1,alloc,18446744073709551615,281474976710656,0xffffffffffffffff,65535\n"
    "2,seg_map,0x200000,2097152,,\n"
    "3,seg_unmap,0x200000,2097152,,\n"
    "4,free,18446744073709551615,,0xffffffffffffffff,65535\n",

    "ts_ns,op,id,size,stream,device\n"
    "1,alloc,1,10,0,0\n"
    "2,alloc,2,20,0,0\n"
    "3,mark,\" a \",,,0\n"
    "4,free,2,,0,0\n"
    "5,free,1,,0,0\n",
};

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    size_t n = sizeof fuzz_seed_texts / sizeof fuzz_seed_texts[0];
    gm_fuzz_seed_t *seeds = calloc(n, sizeof *seeds);
    if (seeds == NULL) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        seeds[i].len = strlen(fuzz_seed_texts[i]);
        seeds[i].data = malloc(seeds[i].len);
        if (seeds[i].data == NULL) {
            gm_fuzz_seeds_free(seeds, i);
            *out = NULL;
            return 0;
        }
        memcpy(seeds[i].data, fuzz_seed_texts[i], seeds[i].len);
    }
    *out = seeds;
    return n;
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; seeds != NULL && i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
