/*
 * cli/cmd_calibrate.c — `gmsim calibrate --on gpu[:N] [-o FILE] [--reps N]`:
 * measure cudaMalloc/cudaFree latency over sizes on a real GPU, and what
 * the device charges (cudaMalloc's spacing and packing, a pool's chunks,
 * cuMemCreate's granularity), and write a device profile that
 * `--device-profile FILE` feeds to the simulation (its device_time_ns, the
 * device granularity, native.chunk, async.granularity and async.align).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"

static const char calibrate_usage[] =
    "usage: gmsim calibrate [--on gpu[:N]] [-o FILE] [--reps N]\n"
    "\n"
    "Measure how long cudaMalloc and cudaFree take on a GPU, from 512 B up to\n"
    "a quarter of its free memory, and what the device charges for memory\n"
    "(cudaMalloc's spacing and packing of small requests, a memory pool's\n"
    "chunks, cuMemCreate's granularity), and write them as a device profile:\n"
    "'gmsim replay --device-profile FILE' then models device time, the device\n"
    "granularity and the native and async policies' chunks with them.\n"
    "\n"
    "options:\n"
    "      --on gpu[:N]   the GPU (default gpu:0)\n"
    "  -o, --output FILE  write the profile to FILE (default: standard output)\n"
    "      --reps N       measurements per size (default 20; the median is kept)\n"
    "  -h, --help         show this help\n"
    "\n"
    "The CUDA runtime is loaded at run time (GM_CUDART names another one).\n";

int gm__cmd_calibrate(int argc, char **argv)
{
    gm_gpu_options_t opt = {0};
    const char *output = NULL;
    uint64_t reps = 20;
    int rc;
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("on", 0, GM__CLI_CALL, &opt.device, .fn = gm__cli_on_fn, .value = 1),
        GM__CLI_OPT("output", 'o', GM__CLI_STR, &output),
        GM__CLI_OPT("reps", 0, GM__CLI_COUNT, &reps, .lo = 1, .hi = 100000),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, calibrate_usage, argc, argv, &rc))
        return rc;
    if (optind < argc)
        return gm__cli_usage_error(calibrate_usage, "too many arguments: '%s'", argv[optind]);
    gm_cost_profile_t *p;
    gm_error_t err = {0};
    gm__cli_status("calibrating gpu:%d...", opt.device);
    int r = gm_gpu_calibrate(&opt, (unsigned)reps, &p, &err);
    gm__cli_status_clear();
    if (r != 0)
        return gm__cli_error("%s", err.msg);
    gm__cli_out_t out;
    if ((rc = gm__cli_out_open(&out, calibrate_usage, output, NULL, 0))) {
        gm_cost_profile_free(p);
        return rc;
    }
    errno = 0;
    if (gm_cost_profile_write(p, out.f) != 0)
        rc = gm__cli_out_error(&out, errno);
    rc = gm__cli_out_close(&out, rc);
    if (rc == GM_CLI_OK && output && strcmp(output, "-") != 0) {
        fprintf(stderr, "wrote '%s': %zu sizes, %s\n", gm__cli_s(output), p->n,
                p->source ? p->source : "measured");
        if (p->has_granularity) {
            const gm_device_granularity_t *g = &p->gran;
            char ma[32], mc[32], ml[32], pa[32], pc[32], pl[32], vm[32];
            gm_format_param_size(g->malloc_align, ma, sizeof ma);
            gm_format_param_size(g->malloc_chunk, mc, sizeof mc);
            gm_format_param_size(g->malloc_large, ml, sizeof ml);
            gm_format_param_size(g->pool_align, pa, sizeof pa);
            gm_format_param_size(g->pool_chunk, pc, sizeof pc);
            gm_format_param_size(g->pool_large, pl, sizeof pl);
            gm_format_param_size(g->vmm_minimum, vm, sizeof vm);
            fprintf(stderr,
                    "granularity: cudaMalloc %s apart in chunks of %s (%s above), pool %s apart "
                    "in chunks of %s (%s above, %s at a synchronization), cuMemCreate %s\n",
                    ma, mc, ml, pa, pc, pl,
                    g->pool_releases_at_sync < 0 ? "release unknown"
                    : g->pool_releases_at_sync   ? "released"
                                                 : "kept",
                    vm);
        }
    }
    gm_cost_profile_free(p);
    return rc;
}
