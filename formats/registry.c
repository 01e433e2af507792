/*
 * formats/registry.c — the import formats (gmsim/formats.h): the one list
 * of names, descriptions, importers and content sniffers that `gmsim
 * import --format` and its automatic detection read.  Adding a format is
 * one line here and its importer's file in formats/ (docs/design.md).
 */
#include <string.h>

#include "gmsim/capture.h"
#include "gmsim/csv.h"
#include "gmsim/formats.h"
#include "gmsim/torch.h"

/* X(name, description, importer, sniffer) — auto detection tries the
 * sniffers in this order (the most specific first, csv last). */
#define GM_FORMATS(X)                                                              \
    X(torch, "PyTorch memory snapshot (pickle)", gm_torch_import, gm_torch_sniff)          \
    X(nsys, "Nsight Systems SQLite export (CUDA_GPU_MEMORY_USAGE_EVENTS)", gm_nsys_import, \
      gm_nsys_sniff)                                                                       \
    X(rmm, "RAPIDS RMM log (Thread,Time,Action,Pointer,Size,Stream)", gm_rmm_import,       \
      gm_rmm_sniff)                                                                        \
    X(dsa, "placement instance (id,lower,upper,size; capacity in the name)",               \
      gm_dsa_import, gm_dsa_sniff)                                                         \
    X(stalloc, "STAlloc trace log (status ptr size stream)", gm_stalloc_import,            \
      gm_stalloc_sniff)                                                                    \
    X(spool, "one spool file of 'gmsim capture' (a directory reads them all)",              \
      gm_spool_import, gm_spool_sniff)                                                     \
    X(csv, "ts_ns,op,id,size,stream,device rows (gmsim's own)", gm_csv_import,             \
      gm_csv_sniff)

static const gm_format_t registry_formats[] = {
#define REGISTRY_ENTRY(name, help, fn, sniff) {#name, help, fn, sniff},
    GM_FORMATS(REGISTRY_ENTRY)
#undef REGISTRY_ENTRY
};

#define REGISTRY_COUNT (sizeof registry_formats / sizeof registry_formats[0])

size_t gm_format_count(void) { return REGISTRY_COUNT; }

const gm_format_t *gm_format_at(size_t i) { return i < REGISTRY_COUNT ? &registry_formats[i] : NULL; }

const gm_format_t *gm_format_find(const char *name)
{
    for (size_t i = 0; i < REGISTRY_COUNT; i++)
        if (strcmp(registry_formats[i].name, name) == 0)
            return &registry_formats[i];
    return NULL;
}

const gm_format_t *gm_format_sniff(const void *head, size_t len)
{
    for (size_t i = 0; i < REGISTRY_COUNT; i++)
        if (registry_formats[i].sniff(head, len))
            return &registry_formats[i];
    return NULL;
}
