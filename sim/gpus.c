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

#include "base/text.h"

#define GPUS_MIB (UINT64_C(1) << 20)

#define GPUS_TORCH "PyTorch total_memory / OOM message"
#define GPUS_HIP "HIP hipMemGetInfo total"
#define GPUS_LGIP "nvidia-smi mig -lgip"
#define GPUS_SLICES "estimate: card total x slices / 8"

/*
 * What a process holds on the device outside the allocator, by
 * architecture: the CUDA (or HIP) context, with the modules, kernels and
 * per-SM stacks of the libraries it loads (cuBLAS, cuDNN, NCCL's own
 * kernels).  PyTorch's documentation says only that "some context needs to
 * be created on GPU" (torch.cuda.memory_allocated, and "Memory management"
 * in its CUDA semantics notes); NVIDIA publishes no size, which depends on
 * the GPU, the driver, the CUDA version and what the libraries load.  The
 * figures below are estimates, not measurements by this project: what
 * nvidia-smi is commonly reported to show for a PyTorch 2.x process on
 * CUDA 12 with lazy loading (the default on Linux since CUDA 12.2, NVIDIA's
 * CUDA Programming Guide, "Lazy Loading") after its first cuBLAS matmul,
 * less what the caching allocator reserved: about 300 MiB on Volta and
 * Turing, 400-500 MiB on Ampere and Ada, 500-600 MiB on Hopper.  Eager
 * loading (CUDA_MODULE_LOADING=EAGER, CUDA before 12.2) takes more: PyTorch
 * issue #34323 reports 781 MB for a context alone on CUDA 10.  NCCL's
 * buffers (several hundred MiB per communicator, NCCL_BUFFSIZE) and any
 * library workspace not taken through PyTorch come on top: give
 * --reserve SIZE to use a figure measured on the job itself.  AMD: no
 * figure is published for a HIP context; 256 MiB is a guess of the same
 * kind.  A MIG slice's process holds a context as the card's does.
 */
#define GPUS_CTX_VOLTA (320 * GPUS_MIB)
#define GPUS_CTX_TURING (320 * GPUS_MIB)
#define GPUS_CTX_AMPERE (448 * GPUS_MIB)
#define GPUS_CTX_ADA (448 * GPUS_MIB)
#define GPUS_CTX_HOPPER (512 * GPUS_MIB)
#define GPUS_CTX_CDNA (256 * GPUS_MIB)

static const gm_gpu_preset_t gpus_table[] = {
    {"a100-40gb", "NVIDIA A100 40GB (SXM4/PCIe)", 40536 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_AMPERE},
    {"a100-40gb:1g.5gb", "A100 40GB MIG 1g.5gb", 4864 * GPUS_MIB, "a100-40gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-40gb:2g.10gb", "A100 40GB MIG 2g.10gb", 9856 * GPUS_MIB, "a100-40gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-40gb:3g.20gb", "A100 40GB MIG 3g.20gb", 19968 * GPUS_MIB, "a100-40gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-40gb:4g.20gb", "A100 40GB MIG 4g.20gb", 19968 * GPUS_MIB, "a100-40gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-40gb:7g.40gb", "A100 40GB MIG 7g.40gb", 40192 * GPUS_MIB, "a100-40gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-80gb", "NVIDIA A100 80GB (SXM4/PCIe)", 81050 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_AMPERE},
    {"a100-80gb:1g.10gb", "A100 80GB MIG 1g.10gb", 9728 * GPUS_MIB, "a100-80gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-80gb:1g.20gb", "A100 80GB MIG 1g.20gb", 19968 * GPUS_MIB, "a100-80gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-80gb:2g.20gb", "A100 80GB MIG 2g.20gb", 19968 * GPUS_MIB, "a100-80gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-80gb:3g.40gb", "A100 80GB MIG 3g.40gb", 40192 * GPUS_MIB, "a100-80gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-80gb:4g.40gb", "A100 80GB MIG 4g.40gb", 40192 * GPUS_MIB, "a100-80gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"a100-80gb:7g.80gb", "A100 80GB MIG 7g.80gb", 80384 * GPUS_MIB, "a100-80gb", GPUS_LGIP, GPUS_CTX_AMPERE},
    {"h100-80gb", "NVIDIA H100 80GB HBM3 (SXM5)", 81008 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_HOPPER},
    {"h100-80gb:1g.10gb", "H100 80GB MIG 1g.10gb", 10126 * GPUS_MIB, "h100-80gb", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h100-80gb:1g.20gb", "H100 80GB MIG 1g.20gb", 20252 * GPUS_MIB, "h100-80gb", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h100-80gb:2g.20gb", "H100 80GB MIG 2g.20gb", 20252 * GPUS_MIB, "h100-80gb", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h100-80gb:3g.40gb", "H100 80GB MIG 3g.40gb", 40504 * GPUS_MIB, "h100-80gb", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h100-80gb:4g.40gb", "H100 80GB MIG 4g.40gb", 40504 * GPUS_MIB, "h100-80gb", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h100-80gb:7g.80gb", "H100 80GB MIG 7g.80gb", 81008 * GPUS_MIB, "h100-80gb", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h100-pcie", "NVIDIA H100 PCIe 80GB HBM2e", 81008 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_HOPPER},
    {"h100-nvl", "NVIDIA H100 NVL 94GB", 95320 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_HOPPER},
    {"h200", "NVIDIA H200 141GB HBM3e", 143156 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_HOPPER},
    {"h200:1g.18gb", "H200 MIG 1g.18gb", 17894 * GPUS_MIB, "h200", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h200:1g.35gb", "H200 MIG 1g.35gb", 35789 * GPUS_MIB, "h200", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h200:2g.35gb", "H200 MIG 2g.35gb", 35789 * GPUS_MIB, "h200", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h200:3g.71gb", "H200 MIG 3g.71gb", 71578 * GPUS_MIB, "h200", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h200:4g.71gb", "H200 MIG 4g.71gb", 71578 * GPUS_MIB, "h200", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"h200:7g.141gb", "H200 MIG 7g.141gb", 143156 * GPUS_MIB, "h200", GPUS_SLICES, GPUS_CTX_HOPPER},
    {"l4", "NVIDIA L4 24GB", 22563 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_ADA},
    {"l40s", "NVIDIA L40S 48GB", 45589 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_ADA},
    {"t4", "NVIDIA T4 16GB", 15102 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_TURING},
    {"a10", "NVIDIA A10 24GB", 22723 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_AMPERE},
    {"a10g", "NVIDIA A10G 24GB (AWS)", 22723 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_AMPERE},
    {"v100-16gb", "NVIDIA V100 16GB", 16151 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_VOLTA},
    {"v100-32gb", "NVIDIA V100 32GB", 32510 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_VOLTA},
    {"rtx3090", "NVIDIA GeForce RTX 3090 24GB", 24259 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_AMPERE},
    {"rtx4090", "NVIDIA GeForce RTX 4090 24GB", 24217 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_ADA},
    {"rtx-a6000", "NVIDIA RTX A6000 48GB", 48685 * GPUS_MIB, NULL, GPUS_TORCH, GPUS_CTX_AMPERE},
    {"mi210", "AMD Instinct MI210 64GB", 65520 * GPUS_MIB, NULL, GPUS_HIP, GPUS_CTX_CDNA},
    {"mi250x", "AMD Instinct MI250X, one GCD (64GB of 128GB)", 65520 * GPUS_MIB, NULL, GPUS_HIP, GPUS_CTX_CDNA},
    {"mi300x", "AMD Instinct MI300X 192GB", 196592 * GPUS_MIB, NULL, GPUS_HIP, GPUS_CTX_CDNA},
};

#define GPUS_COUNT (sizeof gpus_table / sizeof gpus_table[0])

/* Other spellings users type, and for a short name that could mean more
 * than one board, the others it could mean (the CLI says which it took). */
static const struct {
    const char *alias, *name, *others;
} gpus_aliases[] = {
    {"a100", "a100-80gb", "a100-40gb"},
    {"a100-40", "a100-40gb", NULL},
    {"a100-80", "a100-80gb", NULL},
    {"h100", "h100-80gb", "h100-pcie, h100-nvl"},
    {"h100-sxm", "h100-80gb", NULL},
    {"h100-80", "h100-80gb", "h100-pcie"},
    {"h200-141gb", "h200", NULL},
    {"v100", "v100-32gb", "v100-16gb"},
    {"3090", "rtx3090", NULL},
    {"4090", "rtx4090", NULL},
    {"rtx-3090", "rtx3090", NULL},
    {"rtx-4090", "rtx4090", NULL},
    {"a6000", "rtx-a6000", NULL},
};

#define GPUS_NALIASES (sizeof gpus_aliases / sizeof gpus_aliases[0])

size_t gm_gpu_count(void) { return GPUS_COUNT; }

const gm_gpu_preset_t *gm_gpu_at(size_t i) { return i < GPUS_COUNT ? &gpus_table[i] : NULL; }

int gm_gpu_lookup(const char *name, gm_gpu_lookup_t *out)
{
    memset(out, 0, sizeof *out);
    if (name == NULL)
        return GM_ENOTFOUND;
    char buf[64];
    const char *colon = strchr(name, ':');
    size_t n = colon ? (size_t)(colon - name) : strlen(name);
    if (n >= sizeof buf)
        return GM_ENOTFOUND;
    memcpy(buf, name, n);
    buf[n] = '\0';
    for (size_t i = 0; i < GPUS_NALIASES; i++)
        if (strcasecmp(buf, gpus_aliases[i].alias) == 0) {
            snprintf(buf, sizeof buf, "%s", gpus_aliases[i].name);
            out->alias = 1;
            out->others = gpus_aliases[i].others;
            break;
        }
    char full[128];
    snprintf(full, sizeof full, "%s%s", buf, colon ? colon : "");
    for (size_t i = 0; i < GPUS_COUNT; i++)
        if (strcasecmp(gpus_table[i].name, full) == 0) {
            out->preset = &gpus_table[i];
            return 0;
        }
    out->alias = 0;
    out->others = NULL;
    /* Not a preset: the presets it starts (an ambiguous short name such as
     * "rtx" or "mi2"), else the nearest names (base/text.h).  MIG slices
     * are offered only for a name with a colon. */
    size_t used = 0, nstart = 0;
    size_t len = strlen(name);
    for (size_t i = 0; i < GPUS_COUNT && len >= 2; i++) {
        const gm_gpu_preset_t *g = &gpus_table[i];
        if ((g->parent != NULL) != (colon != NULL) || strncasecmp(g->name, name, len) != 0)
            continue;
        int w = snprintf(out->candidates + used, sizeof out->candidates - used, "%s'%s'",
                         nstart ? ", " : "", g->name);
        if (w > 0 && (size_t)w < sizeof out->candidates - used)
            used += (size_t)w;
        nstart++;
    }
    if (nstart >= 2) {
        out->ambiguous = 1;
        return GM_ENOTFOUND;
    }
    out->candidates[0] = '\0';
    gm__suggest_t s;
    gm__suggest_init(&s, name);
    for (size_t i = 0; i < GPUS_COUNT; i++)
        if ((gpus_table[i].parent != NULL) == (colon != NULL))
            gm__suggest_add(&s, gpus_table[i].name);
    for (size_t i = 0; i < GPUS_NALIASES && colon == NULL; i++)
        gm__suggest_add(&s, gpus_aliases[i].alias);
    gm__suggest_text(&s, out->candidates, sizeof out->candidates);
    return GM_ENOTFOUND;
}

const gm_gpu_preset_t *gm_gpu_find(const char *name)
{
    gm_gpu_lookup_t l;
    return gm_gpu_lookup(name, &l) == 0 ? l.preset : NULL;
}

int gm_gpu_capacity(const char *name, uint64_t *capacity, gm_error_t *err)
{
    gm_gpu_lookup_t l;
    if (gm_gpu_lookup(name, &l) != 0) {
        if (l.ambiguous)
            return gm_error_set(err, GM_ENOTFOUND, "device '%s' is ambiguous: %s (see 'gmsim "
                                "devices')", name, l.candidates);
        if (l.candidates[0])
            return gm_error_set(err, GM_ENOTFOUND, "unknown device '%s' (see 'gmsim devices' "
                                "for the presets); did you mean %s?", name ? name : "",
                                l.candidates);
        return gm_error_set(err, GM_ENOTFOUND,
                            "unknown device '%s' (see 'gmsim devices' for the presets)",
                            name ? name : "");
    }
    *capacity = l.preset->capacity;
    return 0;
}
