/*
 * tests/fuzz/fuzz_dsa.c — fuzz target for the placement-instance importer
 * (gm_dsa_import).  Seeds: the real minimalloc instances in
 * ../shared/data/minimalloc and small built-in ones.
 */
#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_import_run(gm_dsa_import, data, size, "fuzz.1048576.csv");
    return 0;
}

static const char *const fuzz_texts[] = {
    "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n",
    "0,0,4,8\n1,4,8,8\n2,0,8,0\n",
    "size,upper,lower,id,alignment\n8,4,0,x,64\n18446744073709551615,9,1,y,1\n",
};

static const char *const fuzz_files[] = {"minimalloc/input.12.csv", "minimalloc/A.1048576.csv"};

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    return fuzz_import_seeds(out, fuzz_texts, sizeof fuzz_texts / sizeof fuzz_texts[0],
                             fuzz_files, sizeof fuzz_files / sizeof fuzz_files[0]);
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; seeds != NULL && i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
