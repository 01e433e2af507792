/*
 * cli/cmd_devices.c — `gmsim devices [--json]`: the GPU presets that
 * `--device NAME` accepts (gmsim/gpus.h), with their capacities as the
 * runtime reports them, the reserve a process holds outside the allocator
 * (sim/gpus.c: the CUDA context by architecture), and where each capacity
 * comes from.
 */
#include <inttypes.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "gmsim/gpus.h"

static const char devices_usage[] =
    "usage: gmsim devices [--json]\n"
    "\n"
    "List the device presets for --device NAME: GPUs and their MIG slices\n"
    "(CARD:PROFILE, e.g. a100-80gb:1g.10gb), with the capacity a process sees\n"
    "(the runtime's total, a little under the nominal size) and the reserve:\n"
    "what the process holds outside the allocator (its CUDA context, an\n"
    "estimate by architecture; --reserve SIZE overrides it).  The allocator\n"
    "gets the capacity less the reserve.\n"
    "\n"
    "options:\n"
    "      --json   print JSON\n"
    "  -h, --help   show this help\n";

int gm__cmd_devices(int argc, char **argv)
{
    int json, status;
    if (gm__cli_json_only(argc, argv, devices_usage, &json, NULL, &status))
        return status;
    size_t n = gm_gpu_count();
    if (json) {
        gm_json_t j;
        gm_json_init(&j, stdout, 1);
        gm_json_begin_array(&j);
        for (size_t i = 0; i < n; i++) {
            const gm_gpu_preset_t *g = gm_gpu_at(i);
            gm_json_begin_object(&j);
            gm_json_kv_str(&j, "name", g->name);
            gm_json_kv_str(&j, "description", g->desc);
            gm_json_kv_u64(&j, "capacity", g->capacity);
            gm_json_kv_u64(&j, "reserve", g->reserve);
            gm_json_kv_str(&j, "mig_of", g->parent);
            gm_json_kv_str(&j, "source", g->source);
            gm_json_end_object(&j);
        }
        gm_json_end_array(&j);
        gm_json_finish(&j);
        return GM_CLI_OK;
    }
    gm__cli_table_t t;
    gm__cli_table_head(&t, "lrrrll", "device", "capacity", "bytes", "reserve", "description",
                       "source", NULL);
    for (size_t i = 0; i < n; i++) {
        const gm_gpu_preset_t *g = gm_gpu_at(i);
        gm__cli_table_cell(&t, "%s%s", g->parent ? "  " : "", g->name);
        gm__cli_table_cell(&t, "%s", gm__cli_size(g->capacity));
        gm__cli_table_cell(&t, "%" PRIu64, g->capacity);
        gm__cli_table_cell(&t, "%s", gm__cli_size(g->reserve));
        gm__cli_table_cell(&t, "%s", g->desc);
        gm__cli_table_cell(&t, "%s", g->source);
    }
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
    return GM_CLI_OK;
}
