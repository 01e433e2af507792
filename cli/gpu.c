/*
 * cli/gpu.c — what the verbs that touch a real GPU share: the --on
 * argument, and measured-beside-simulated output (`gmsim replay --on gpu`).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"

int gm__cli_on_fn(void *to, const char *usage, const gm__cli_opt_t *row, const char *text)
{
    int *device = to;
    (void)row;
    if (strcmp(text, "gpu") == 0) {
        *device = 0;
        return GM_CLI_OK;
    }
    if (strncmp(text, "gpu:", 4) == 0 && text[4] >= '0' && text[4] <= '9') {
        char *end;
        unsigned long v = strtoul(text + 4, &end, 10);
        if (*end == '\0' && v < 1024) {
            *device = (int)v;
            return GM_CLI_OK;
        }
    }
    return gm__cli_usage_error(usage, "invalid value for --on: '%s' (expected gpu or gpu:N)",
                               text);
}

/* "+1.2%" of measured against simulated; "-" when simulated is 0. */
static void gpu_diff(gm__cli_table_t *t, uint64_t measured, uint64_t simulated)
{
    if (simulated == 0)
        gm__cli_table_cell(t, "-");
    else
        gm__cli_table_cell(t, "%+.2f%%",
                           ((double)measured - (double)simulated) * 100.0 / (double)simulated);
}

void gm__cli_gpu_table(const gm_gpu_measured_t *m, const gm_metrics_t *sim, uint64_t load,
                       const char *policy)
{
    printf("on %s (%s total, %s in use before the replay), policy %s\n\n", m->device_name,
           gm__cli_size(m->total_bytes), gm__cli_size(m->baseline_used), policy);
    gm__cli_table_t t;
    gm__cli_table_head(&t, "lrrr", "figure", "simulated", "measured", "difference", NULL);
    /* native and async ask the GPU per request: their simulated figure is
     * still the policy's reserved peak, load is printed too. */
    gm__cli_table_cell(&t, "peak reserved");
    gm__cli_table_cell(&t, "%s", gm__cli_size(sim->peak_reserved));
    gm__cli_table_cell(&t, "%s", gm__cli_size(m->peak_used));
    gpu_diff(&t, m->peak_used, sim->peak_reserved);
    if (m->pool) {
        gm__cli_table_cell(&t, "pool reserved high");
        gm__cli_table_cell(&t, "%s", gm__cli_size(sim->peak_reserved));
        gm__cli_table_cell(&t, "%s", gm__cli_size(m->pool_reserved_high));
        gpu_diff(&t, m->pool_reserved_high, sim->peak_reserved);
        gm__cli_table_cell(&t, "pool used high");
        gm__cli_table_cell(&t, "%s", gm__cli_size(load));
        gm__cli_table_cell(&t, "%s", gm__cli_size(m->pool_used_high));
        gpu_diff(&t, m->pool_used_high, load);
    }
    gm__cli_table_cell(&t, "device mallocs");
    gm__cli_table_cell(&t, "%" PRIu64, sim->device_mallocs);
    gm__cli_table_cell(&t, "%" PRIu64, m->malloc_latency.count);
    gpu_diff(&t, m->malloc_latency.count, sim->device_mallocs);
    gm__cli_table_cell(&t, "device frees");
    gm__cli_table_cell(&t, "%" PRIu64, sim->device_frees);
    gm__cli_table_cell(&t, "%" PRIu64, m->free_latency.count);
    gpu_diff(&t, m->free_latency.count, sim->device_frees);
    gm__cli_table_cell(&t, "device time");
    gm__cli_table_cell(&t, "%.2f ms", (double)sim->device_time_ns / 1e6);
    double measured_ns = m->malloc_latency.total_ns + m->free_latency.total_ns;
    gm__cli_table_cell(&t, "%.2f ms", measured_ns / 1e6);
    gpu_diff(&t, (uint64_t)measured_ns, sim->device_time_ns);
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
    if (m->adopted)
        printf("\nthe recorded starting layout: %" PRIu64 " allocation%s (%s) made on the GPU "
               "before the first event, not counted among its mallocs\n",
               m->adopted, m->adopted == 1 ? "" : "s", gm__cli_size(m->adopted_bytes));
    printf("\nmalloc latency: median %.1f us, p99 %.1f us; free latency: median %.1f us, p99 "
           "%.1f us; wall %.2f s\n",
           m->malloc_latency.median_ns / 1e3, m->malloc_latency.p99_ns / 1e3,
           m->free_latency.median_ns / 1e3, m->free_latency.p99_ns / 1e3, m->wall_s);
}

static void gpu_json_latency(gm_json_t *j, const char *key, const gm_gpu_latency_t *l)
{
    gm_json_key(j, key);
    gm_json_begin_object(j);
    gm_json_kv_u64(j, "count", l->count);
    gm_json_kv_double(j, "median_ns", l->median_ns);
    gm_json_kv_double(j, "p99_ns", l->p99_ns);
    gm_json_kv_double(j, "total_ns", l->total_ns);
    gm_json_end_object(j);
}

void gm__cli_gpu_json(gm_json_t *j, const gm_gpu_measured_t *m, const gm_metrics_t *sim)
{
    gm_json_key(j, "measured");
    gm_json_begin_object(j);
    gm_json_kv_str(j, "gpu", m->device_name);
    gm_json_kv_u64(j, "total_bytes", m->total_bytes);
    gm_json_kv_u64(j, "baseline_used", m->baseline_used);
    gm_json_kv_u64(j, "peak_used", m->peak_used);
    gm_json_kv_double(j, "peak_used_vs_simulated",
                      sim->peak_reserved
                          ? ((double)m->peak_used - (double)sim->peak_reserved) /
                                (double)sim->peak_reserved
                          : 0.0);
    if (m->pool) {
        gm_json_kv_u64(j, "pool_reserved_high", m->pool_reserved_high);
        gm_json_kv_u64(j, "pool_used_high", m->pool_used_high);
    }
    gm_json_kv_u64(j, "adopted", m->adopted);
    gm_json_kv_u64(j, "adopted_bytes", m->adopted_bytes);
    gpu_json_latency(j, "malloc_latency", &m->malloc_latency);
    gpu_json_latency(j, "free_latency", &m->free_latency);
    gm_json_kv_double(j, "wall_s", m->wall_s);
    gm_json_end_object(j);
}
