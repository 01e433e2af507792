/*
 * cli/slurm.h — `gmsim sweep … --slurm`: a sweep as a Slurm job array of
 * shards and a merge job after it (cli/slurm.c, docs/cluster.md).
 */
#ifndef GM_CLI_SLURM_H
#define GM_CLI_SLURM_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/sweep.h"

typedef struct gm__slurm {
    unsigned tasks;          /* array tasks (shards); 0: one per trace, at most 64 */
    const char *partition;   /* NULL: the cluster's default */
    const char *time;        /* NULL: the partition's default */
    const char **sbatch_args; /* extra #SBATCH lines, as given */
    size_t nsbatch_args;
    int dry_run;             /* print the scripts, write and submit nothing */
    int json;
} gm__slurm_t;

/* What a task's `gmsim sweep` is given besides its shard and results:
 * the sweep's own options, as parsed. */
typedef struct gm__slurm_sweep {
    const char *const *inputs; /* the stores (made absolute here) */
    size_t ninputs;
    const char *trace_glob;
    const char *policies;      /* "caching,bfc" or NULL for all */
    const char *const *params; /* --param texts */
    size_t nparams;
    const char *start;         /* --start as given (warm|cold...), NULL: none */
    const gm_device_config_t *device;
    size_t timeline_points;    /* 0: the default */
    const char *results;       /* where the merged results go */
} gm__slurm_sweep_t;

/*
 * Write OUT.shards/{sweep.sbatch, merge.sbatch, logs/} for results OUT,
 * submit the array and the merge job (afterok) with sbatch and print the
 * job ids and where the results will be; with dry_run print the scripts.
 * Returns a GM_CLI_* status, having printed any diagnostic.
 */
int gm__slurm_submit(const gm__slurm_t *o, const gm__slurm_sweep_t *sw);

/* The folder of a --slurm sweep's scripts and shards for results path
 * `results` (malloc'd: OUT without ".db", plus ".shards"); NULL when out
 * of memory. */
char *gm__slurm_folder(const char *results);

#endif
