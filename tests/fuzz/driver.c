/*
 * tests/fuzz/driver.c — runs a fuzz target without libFuzzer.
 *
 * Each fuzz_*.c defines LLVMFuzzerTestOneInput (and optionally
 * gm_fuzz_seeds, which fills a list of seed inputs).  This driver feeds the
 * target: every file named on the command line, then every seed, then
 * -runs=N deterministic mutations of the seeds (bit flips, byte sets,
 * truncations, insertions, splices).  Built with ASan+UBSan in CI, it turns
 * the fuzz targets into regression tests.  Exit 0 when every input ran.
 * `-write-seeds=DIR` writes the seeds out instead (scripts/fuzz uses them as
 * libFuzzer's starting corpus).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_run(const uint8_t *data, size_t len)
{
    /* A private copy so reads past the end are caught by ASan. */
    uint8_t *copy = malloc(len ? len : 1);
    if (len)
        memcpy(copy, data, len);
    LLVMFuzzerTestOneInput(copy, len);
    free(copy);
}

static size_t fuzz_mutate(uint8_t *buf, size_t len, size_t cap, const gm_fuzz_seed_t *seeds,
                          size_t nseeds, uint64_t *rng)
{
    int rounds = 1 + (int)(gt_rand(rng) % 4);
    for (int r = 0; r < rounds; r++) {
        uint64_t x = gt_rand(rng);
        size_t pos = len ? (size_t)(gt_rand(rng) % len) : 0;
        switch (x % 7) {
        case 0: /* flip a bit */
            if (len)
                buf[pos] ^= (uint8_t)(1u << (x >> 8) % 8);
            break;
        case 1: /* set a byte to an interesting value */
            if (len) {
                static const uint8_t vals[] = {0, 1, 0x7f, 0x80, 0xff, ',', '\n', '-', '9'};
                buf[pos] = vals[(x >> 8) % sizeof vals];
            }
            break;
        case 2: /* truncate */
            len = pos;
            break;
        case 3: /* insert random bytes */
            if (len < cap) {
                size_t k = 1 + (x >> 8) % 8;
                if (len + k > cap)
                    k = cap - len;
                memmove(buf + pos + k, buf + pos, len - pos);
                for (size_t i = 0; i < k; i++)
                    buf[pos + i] = (uint8_t)gt_rand(rng);
                len += k;
            }
            break;
        case 4: /* delete a run */
            if (len) {
                size_t k = 1 + (x >> 8) % 16;
                if (pos + k > len)
                    k = len - pos;
                memmove(buf + pos, buf + pos + k, len - pos - k);
                len -= k;
            }
            break;
        case 5: /* splice another seed's tail */
            if (nseeds) {
                const gm_fuzz_seed_t *s = &seeds[(x >> 8) % nseeds];
                size_t from = s->len ? (size_t)(gt_rand(rng) % s->len) : 0;
                size_t k = s->len - from;
                if (pos + k > cap)
                    k = cap - pos;
                memcpy(buf + pos, s->data + from, k);
                len = pos + k;
            }
            break;
        default: /* overwrite 8 random bytes */
            for (size_t i = 0; i < 8 && pos + i < len; i++)
                buf[pos + i] = (uint8_t)gt_rand(rng);
            break;
        }
    }
    return len;
}

/* Write the seeds as files DIR/seed-N (a starting corpus for libFuzzer). */
static int fuzz_write_seeds(const char *dir)
{
    gm_fuzz_seed_t *seeds = NULL;
    size_t n = gm_fuzz_seeds(&seeds);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/seed-%zu", dir, i);
        FILE *f = fopen(path, "wb");
        if (f == NULL || fwrite(seeds[i].data, 1, seeds[i].len, f) != seeds[i].len) {
            fprintf(stderr, "fuzz driver: cannot write '%s'\n", path);
            rc = 1;
        }
        if (f != NULL && fclose(f) != 0)
            rc = 1;
    }
    gm_fuzz_seeds_free(seeds, n);
    return rc;
}

int main(int argc, char **argv)
{
    long runs = 1000;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "-runs=", 6) == 0) {
            runs = strtol(argv[i] + 6, NULL, 10);
            continue;
        }
        if (strncmp(argv[i], "-write-seeds=", 13) == 0)
            return fuzz_write_seeds(argv[i] + 13);
        size_t len;
        char *data = gt_read_file(argv[i], &len);
        if (data == NULL) {
            fprintf(stderr, "fuzz driver: cannot read '%s'\n", argv[i]);
            return 1;
        }
        fuzz_run((const uint8_t *)data, len);
        free(data);
    }

    gm_fuzz_seed_t *seeds = NULL;
    size_t nseeds = gm_fuzz_seeds(&seeds);
    size_t maxlen = 64;
    for (size_t i = 0; i < nseeds; i++) {
        fuzz_run(seeds[i].data, seeds[i].len);
        if (seeds[i].len > maxlen)
            maxlen = seeds[i].len;
    }
    size_t cap = 2 * maxlen + 64;
    uint8_t *buf = malloc(cap);
    uint64_t rng = 0x5eed;
    for (long k = 0; k < runs && nseeds; k++) {
        const gm_fuzz_seed_t *s = &seeds[k % (long)nseeds];
        memcpy(buf, s->data, s->len);
        size_t len = fuzz_mutate(buf, s->len, cap, seeds, nseeds, &rng);
        fuzz_run(buf, len);
    }
    free(buf);
    gm_fuzz_seeds_free(seeds, nseeds);
    printf("fuzz driver: %zu seeds, %ld mutations: no crash\n", nseeds, runs);
    return 0;
}
