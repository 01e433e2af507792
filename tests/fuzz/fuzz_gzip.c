/*
 * tests/fuzz/fuzz_gzip.c — fuzz target for an input opened for import
 * (formats/input.c): gzip data inflated member by member, anything else
 * spooled as it is, the head read and the format detected.
 *
 * Each input is written to one temporary file, opened with
 * gm_import_input_open, detected with gm_import_input_detect and read to
 * its end.  Any result is fine; a crash, a sanitizer report or a leak is
 * the bug.  Seeds: a gzip'd CSV trace, two gzip members one after the
 * other, a member cut short, a corrupt one and a plain text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz.h"
#include "gmsim/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_path[0] == '\0') {
        snprintf(fuzz_path, sizeof fuzz_path, "/tmp/gmsim-fuzz-gzip-%ld", (long)getpid());
    }
    FILE *f = fopen(fuzz_path, "wb");
    if (f == NULL)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    gm_import_input_t ii;
    gm_error_t err;
    if (gm_import_input_open(fuzz_path, &ii, &err) == 0) {
        gm_import_input_detect(&ii, &err);
        char buf[4096];
        while (fread(buf, 1, sizeof buf, ii.in) > 0) {
        }
        gm_import_input_close(&ii);
    }
    unlink(fuzz_path);
    return 0;
}

static const char fuzz_csv[] = "ts_ns,op,id,size,stream,device\n"
                               "1,alloc,1,10,0,0\n2,alloc,2,20,0,0\n4,free,2,,0,0\n5,free,1,,0,0\n";

/* gzip of text into out (at most cap bytes); its length. */
static size_t fuzz_gzip(const char *text, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    z.next_in = (unsigned char *)(uintptr_t)text;
    z.avail_in = (uInt)strlen(text);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? n : 0;
}

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    enum { N = 5, CAP = 1024 };
    gm_fuzz_seed_t *seeds = calloc(N, sizeof *seeds);
    if (seeds == NULL) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < N; i++) {
        seeds[i].data = malloc(2 * CAP);
        if (seeds[i].data == NULL) {
            gm_fuzz_seeds_free(seeds, i);
            *out = NULL;
            return 0;
        }
    }
    size_t one = fuzz_gzip(fuzz_csv, seeds[0].data, CAP);
    seeds[0].len = one;
    memcpy(seeds[1].data, seeds[0].data, one); /* two members, as cat a.gz b.gz */
    seeds[1].len = one + fuzz_gzip("7,alloc,3,30,0,0\n", seeds[1].data + one, CAP);
    memcpy(seeds[2].data, seeds[0].data, one); /* cut short */
    seeds[2].len = one / 2;
    memcpy(seeds[3].data, seeds[0].data, one); /* corrupt inside */
    seeds[3].len = one;
    if (one > 20)
        seeds[3].data[14] ^= 0x55;
    seeds[4].len = strlen(fuzz_csv); /* plain text, spooled as it is */
    memcpy(seeds[4].data, fuzz_csv, seeds[4].len);
    *out = seeds;
    return N;
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; seeds != NULL && i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
