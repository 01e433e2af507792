/*
 * sim/gpus.c — GPU and MIG-slice capacity presets (gmsim/gpus.h).
 *
 * Capacities are what a process sees as the device's total (cudaMemGetInfo,
 * torch's total_memory, "GPU 0 has a total capacity of X GiB" in PyTorch's
 * out-of-memory message), given here in MiB as those tools print them:
 *
 *   - NVIDIA cards: the total_memory figures PyTorch reports for each board
 *     (for example A100-SXM4-40GB 40536 MiB = 39.59 GiB, A100 80GB 81050 MiB
 *     = 79.15 GiB, H100 80GB 81008 MiB = 79.11 GiB, T4 15102 MiB = 14.75 GiB,
 *     RTX 3090 24259 MiB = 23.69 GiB), which are a few hundred MiB below the
 *     nvidia-smi total because the driver and ECC keep some;
 *   - AMD Instinct: what HIP reports per device (an MI250X is two devices of
 *     64 GiB; an MI300X one of 192 GiB), minus the 16–32 MiB the runtime
 *     keeps;
 *   - MIG slices: the memory `nvidia-smi mig -lgip` lists per GPU-instance
 *     profile where known (A100), else the card's total divided into its
 *     eight memory slices, times the profile's slices (an estimate: the
 *     profile name rounds, 1g.10gb is 9.5 GiB, not 10 GB).
 *
 * Figures of one board vary a little with the driver and ECC setting:
 * treat them as ±0.5%.  Where exactness matters give --capacity.
 */
#include "gmsim/gpus.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define GPUS_MIB (UINT64_C(1) << 20)

#define GPUS_TORCH "PyTorch total_memory / OOM message"
#define GPUS_HIP "HIP hipMemGetInfo total"
#define GPUS_LGIP "nvidia-smi mig -lgip"
#define GPUS_SLICES "estimate: card total x slices / 8"

static const gm_gpu_preset_t gpus_table[] = {
    {"a100-40gb", "NVIDIA A100 40GB (SXM4/PCIe)", 40536 * GPUS_MIB, NULL, GPUS_TORCH},
    {"a100-40gb:1g.5gb", "A100 40GB MIG 1g.5gb", 4864 * GPUS_MIB, "a100-40gb", GPUS_LGIP},
    {"a100-40gb:2g.10gb", "A100 40GB MIG 2g.10gb", 9856 * GPUS_MIB, "a100-40gb", GPUS_LGIP},
    {"a100-40gb:3g.20gb", "A100 40GB MIG 3g.20gb", 19968 * GPUS_MIB, "a100-40gb", GPUS_LGIP},
    {"a100-40gb:4g.20gb", "A100 40GB MIG 4g.20gb", 19968 * GPUS_MIB, "a100-40gb", GPUS_LGIP},
    {"a100-40gb:7g.40gb", "A100 40GB MIG 7g.40gb", 40192 * GPUS_MIB, "a100-40gb", GPUS_LGIP},
    {"a100-80gb", "NVIDIA A100 80GB (SXM4/PCIe)", 81050 * GPUS_MIB, NULL, GPUS_TORCH},
    {"a100-80gb:1g.10gb", "A100 80GB MIG 1g.10gb", 9728 * GPUS_MIB, "a100-80gb", GPUS_LGIP},
    {"a100-80gb:1g.20gb", "A100 80GB MIG 1g.20gb", 19968 * GPUS_MIB, "a100-80gb", GPUS_LGIP},
    {"a100-80gb:2g.20gb", "A100 80GB MIG 2g.20gb", 19968 * GPUS_MIB, "a100-80gb", GPUS_LGIP},
    {"a100-80gb:3g.40gb", "A100 80GB MIG 3g.40gb", 40192 * GPUS_MIB, "a100-80gb", GPUS_LGIP},
    {"a100-80gb:4g.40gb", "A100 80GB MIG 4g.40gb", 40192 * GPUS_MIB, "a100-80gb", GPUS_LGIP},
    {"a100-80gb:7g.80gb", "A100 80GB MIG 7g.80gb", 80384 * GPUS_MIB, "a100-80gb", GPUS_LGIP},
    {"h100-80gb", "NVIDIA H100 80GB HBM3 (SXM5)", 81008 * GPUS_MIB, NULL, GPUS_TORCH},
    {"h100-80gb:1g.10gb", "H100 80GB MIG 1g.10gb", 10126 * GPUS_MIB, "h100-80gb", GPUS_SLICES},
    {"h100-80gb:1g.20gb", "H100 80GB MIG 1g.20gb", 20252 * GPUS_MIB, "h100-80gb", GPUS_SLICES},
    {"h100-80gb:2g.20gb", "H100 80GB MIG 2g.20gb", 20252 * GPUS_MIB, "h100-80gb", GPUS_SLICES},
    {"h100-80gb:3g.40gb", "H100 80GB MIG 3g.40gb", 40504 * GPUS_MIB, "h100-80gb", GPUS_SLICES},
    {"h100-80gb:4g.40gb", "H100 80GB MIG 4g.40gb", 40504 * GPUS_MIB, "h100-80gb", GPUS_SLICES},
    {"h100-80gb:7g.80gb", "H100 80GB MIG 7g.80gb", 81008 * GPUS_MIB, "h100-80gb", GPUS_SLICES},
    {"h100-pcie", "NVIDIA H100 PCIe 80GB HBM2e", 81008 * GPUS_MIB, NULL, GPUS_TORCH},
    {"h100-nvl", "NVIDIA H100 NVL 94GB", 95320 * GPUS_MIB, NULL, GPUS_TORCH},
    {"h200", "NVIDIA H200 141GB HBM3e", 143156 * GPUS_MIB, NULL, GPUS_TORCH},
    {"h200:1g.18gb", "H200 MIG 1g.18gb", 17894 * GPUS_MIB, "h200", GPUS_SLICES},
    {"h200:1g.35gb", "H200 MIG 1g.35gb", 35789 * GPUS_MIB, "h200", GPUS_SLICES},
    {"h200:2g.35gb", "H200 MIG 2g.35gb", 35789 * GPUS_MIB, "h200", GPUS_SLICES},
    {"h200:3g.71gb", "H200 MIG 3g.71gb", 71578 * GPUS_MIB, "h200", GPUS_SLICES},
    {"h200:4g.71gb", "H200 MIG 4g.71gb", 71578 * GPUS_MIB, "h200", GPUS_SLICES},
    {"h200:7g.141gb", "H200 MIG 7g.141gb", 143156 * GPUS_MIB, "h200", GPUS_SLICES},
    {"l4", "NVIDIA L4 24GB", 22563 * GPUS_MIB, NULL, GPUS_TORCH},
    {"l40s", "NVIDIA L40S 48GB", 45589 * GPUS_MIB, NULL, GPUS_TORCH},
    {"t4", "NVIDIA T4 16GB", 15102 * GPUS_MIB, NULL, GPUS_TORCH},
    {"a10", "NVIDIA A10 24GB", 22723 * GPUS_MIB, NULL, GPUS_TORCH},
    {"a10g", "NVIDIA A10G 24GB (AWS)", 22723 * GPUS_MIB, NULL, GPUS_TORCH},
    {"v100-16gb", "NVIDIA V100 16GB", 16151 * GPUS_MIB, NULL, GPUS_TORCH},
    {"v100-32gb", "NVIDIA V100 32GB", 32510 * GPUS_MIB, NULL, GPUS_TORCH},
    {"rtx3090", "NVIDIA GeForce RTX 3090 24GB", 24259 * GPUS_MIB, NULL, GPUS_TORCH},
    {"rtx4090", "NVIDIA GeForce RTX 4090 24GB", 24217 * GPUS_MIB, NULL, GPUS_TORCH},
    {"rtx-a6000", "NVIDIA RTX A6000 48GB", 48685 * GPUS_MIB, NULL, GPUS_TORCH},
    {"mi210", "AMD Instinct MI210 64GB", 65520 * GPUS_MIB, NULL, GPUS_HIP},
    {"mi250x", "AMD Instinct MI250X, one GCD (64GB of 128GB)", 65520 * GPUS_MIB, NULL, GPUS_HIP},
    {"mi300x", "AMD Instinct MI300X 192GB", 196592 * GPUS_MIB, NULL, GPUS_HIP},
};

#define GPUS_COUNT (sizeof gpus_table / sizeof gpus_table[0])

/* Other spellings users type. */
static const struct {
    const char *alias, *name;
} gpus_aliases[] = {
    {"a100", "a100-80gb"},     {"a100-40", "a100-40gb"}, {"a100-80", "a100-80gb"},
    {"h100", "h100-80gb"},     {"h100-sxm", "h100-80gb"}, {"h100-80", "h100-80gb"},
    {"h200-141gb", "h200"},    {"v100", "v100-32gb"},     {"3090", "rtx3090"},
    {"4090", "rtx4090"},       {"a6000", "rtx-a6000"},
};

size_t gm_gpu_count(void) { return GPUS_COUNT; }

const gm_gpu_preset_t *gm_gpu_at(size_t i) { return i < GPUS_COUNT ? &gpus_table[i] : NULL; }

const gm_gpu_preset_t *gm_gpu_find(const char *name)
{
    if (name == NULL)
        return NULL;
    char buf[64];
    const char *colon = strchr(name, ':');
    size_t n = colon ? (size_t)(colon - name) : strlen(name);
    if (n >= sizeof buf)
        return NULL;
    memcpy(buf, name, n);
    buf[n] = '\0';
    for (size_t i = 0; i < sizeof gpus_aliases / sizeof gpus_aliases[0]; i++)
        if (strcasecmp(buf, gpus_aliases[i].alias) == 0)
            snprintf(buf, sizeof buf, "%s", gpus_aliases[i].name);
    char full[128];
    snprintf(full, sizeof full, "%s%s", buf, colon ? colon : "");
    for (size_t i = 0; i < GPUS_COUNT; i++)
        if (strcasecmp(gpus_table[i].name, full) == 0)
            return &gpus_table[i];
    return NULL;
}

int gm_gpu_capacity(const char *name, uint64_t *capacity, gm_error_t *err)
{
    const gm_gpu_preset_t *p = gm_gpu_find(name);
    if (p == NULL)
        return gm_error_set(err, GM_ENOTFOUND,
                            "unknown device '%s' (see 'gmsim devices' for the presets)",
                            name ? name : "");
    *capacity = p->capacity;
    return 0;
}
