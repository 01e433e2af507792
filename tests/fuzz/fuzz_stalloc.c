/*
 * tests/fuzz/fuzz_stalloc.c — fuzz target for the STAlloc trace-log
 * importer (gm_stalloc_import).  No real STAlloc log is in ../shared/data:
 * the seeds are written from the format STAlloc's tracing allocator and
 * model hooks write.
 */
#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_import_run(gm_stalloc_import, data, size, "mem_log_dev0.txt");
    return 0;
}

static const char *const fuzz_texts[] = {
    "Iteration Index : 0\n"
    "micro-batch : F\n"
    "1 0x7f1e41329c00 1048576 0\n"
    "decoder.layers.0.mlp->MoELayer Layer : F-start\n"
    "1 0x7f1e41429c00 4096 0x55d1c0a0\n"
    "0 0x7f1e41429c00 4096 0x55d1c0a0\n"
    "decoder.layers.0.mlp->MoELayer Layer : F-end\n"
    "micro-batch : B\n"
    "0 0x7f1e41329c00 1048576 0\n"
    "Iteration Index : end\n",

    "0 0x2000 256 0\n1 0x2000 128 0\n0 0 0 0\n1 0 0 0\n0 0x2000 128 0\n",
};

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    return fuzz_import_seeds(out, fuzz_texts, sizeof fuzz_texts / sizeof fuzz_texts[0], NULL, 0);
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; seeds != NULL && i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
