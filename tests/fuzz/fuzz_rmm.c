/*
 * tests/fuzz/fuzz_rmm.c — fuzz target for the RAPIDS RMM log importer
 * (gm_rmm_import).  No real RMM log is in ../shared/data: the seeds are
 * written from the documented format (header, wall-clock and epoch times,
 * every action, null pointers, pre-existing frees).
 */
#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_import_run(gm_rmm_import, data, size, "fuzz.dev1.csv");
    return 0;
}

static const char *const fuzz_texts[] = {
    "Thread,Time,Action,Pointer,Size,Stream\n"
    "140573312345856,10:00:00.000100,allocate,0x7f8a40000000,1024,0x0\n"
    "140573312345856,10:00:00.000200,allocate,0x7f8a40000400,2048,0x7f8a38001020\n"
    "140573312345856,10:00:00.000300,free,0x7f8a40000000,1024,0x0\n"
    "140573312345856,10:00:00.000400,allocate failure,(nil),1099511627776,0x0\n"
    "140573312345856,23:59:59.999999,deallocate,0x7f8a40000400,2048,0x7f8a38001020\n"
    "140573312345856,00:00:00.000001,allocate,(nil),0,0x0\n",

    "Action,Pointer,Size,Stream,Time,Thread\n"
    "free,0x9000,4096,0x5,1634567890.000002,1\n"
    "allocate,0x1000,64,0x0,1634567890.000001,1\n"
    "free,(nil),0,0x0,1634567890.000005,1\n"
    "free,0x1000,64,0x0,1634567890.000006,1\n",
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
