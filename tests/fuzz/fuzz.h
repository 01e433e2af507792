/*
 * tests/fuzz/fuzz.h — what a fuzz target provides besides
 * LLVMFuzzerTestOneInput: its seed inputs, for the mutation driver (and to
 * write a starting corpus for libFuzzer).
 */
#ifndef GM_TESTS_FUZZ_H
#define GM_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

typedef struct gm_fuzz_seed {
    uint8_t *data; /* malloc'd */
    size_t len;
} gm_fuzz_seed_t;

/* Fill *out with a malloc'd array of seeds; returns the count. */
size_t gm_fuzz_seeds(gm_fuzz_seed_t **out);
void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n);

#endif
