/*
 * cli/slurm.c — `gmsim sweep … --slurm`: the sweep as a Slurm job array,
 * one task per shard, and a merge job that runs once every task has
 * succeeded (docs/cluster.md).
 *
 * Folder.  Results OUT.db get OUT.shards/ beside them: sweep.sbatch (the
 * array: task I runs `gmsim sweep … --shard I/N --results
 * OUT.shards/shard-I.db`), merge.sbatch (`gmsim merge OUT.db shard-1.db …
 * shard-N.db`) and logs/.  Every path in the scripts is absolute (tasks
 * run on other nodes, from other folders: the inputs, the results and
 * gmsim itself must be on a shared file system) and single-quoted.  The
 * shard count is written out in the task's command, not taken from
 * $SLURM_ARRAY_TASK_COUNT: a task resubmitted alone (`sbatch --array=3`)
 * is an array of one, and must still run slice 3 of N.
 *
 * Safety comes from the sweep itself: tasks only read the inputs, each
 * writes its own file, a task rerun resumes from that file, and `gmsim
 * merge` refuses a sweep with a shard missing or incomplete.
 *
 * Submission runs `sbatch --parsable` twice (the array, then the merge
 * with --dependency=afterok:ARRAY) and prints both ids.  --dry-run prints
 * the scripts and writes nothing.
 */
#include "cli/slurm.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"

#define SLURM_MAX_TASKS 100000
#define SLURM_DEFAULT_TASKS_MAX 64

char *gm__slurm_folder(const char *results)
{
    size_t n = strlen(results);
    if (n > 3 && strcmp(results + n - 3, ".db") == 0)
        n -= 3;
    char *f = malloc(n + sizeof ".shards");
    if (f == NULL)
        return NULL;
    memcpy(f, results, n);
    strcpy(f + n, ".shards");
    return f;
}

/* An absolute path for `path`: the file itself when it exists, else its
 * folder's (which must exist) and its name.  malloc'd; NULL with errno. */
static char *slurm_abs(const char *path)
{
    char buf[PATH_MAX];
    if (realpath(path, buf) != NULL)
        return strdup(buf);
    if (errno != ENOENT)
        return NULL;
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    const char *name = path;
    if (slash == NULL) {
        strcpy(dir, ".");
    } else {
        size_t len = slash == path ? 1 : (size_t)(slash - path);
        if (len >= sizeof dir) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        memcpy(dir, path, len);
        dir[len] = '\0';
        name = slash + 1;
    }
    if (realpath(dir, buf) == NULL)
        return NULL;
    size_t need = strlen(buf) + 1 + strlen(name) + 1;
    char *out = malloc(need);
    if (out)
        snprintf(out, need, "%s%s%s", buf, strcmp(buf, "/") == 0 ? "" : "/", name);
    return out;
}

/* `text` as one shell word: single quotes, a quote written '\''. */
static void slurm_quote(FILE *f, const char *text)
{
    fputc('\'', f);
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", f);
        else
            fputc(*p, f);
    }
    fputc('\'', f);
}

/* The #SBATCH lines every job gets. */
static void slurm_options(FILE *f, const gm__slurm_t *o)
{
    if (o->partition)
        fprintf(f, "#SBATCH --partition=%s\n", o->partition);
    if (o->time)
        fprintf(f, "#SBATCH --time=%s\n", o->time);
    for (size_t i = 0; i < o->nsbatch_args; i++)
        fprintf(f, "#SBATCH %s\n", o->sbatch_args[i]);
}

static void slurm_write_array(FILE *f, const gm__slurm_t *o, const gm__slurm_sweep_t *sw,
                              unsigned tasks, const char *gmsim, const char *folder,
                              char *const *inputs)
{
    fprintf(f,
            "#!/bin/bash\n"
            "# gmsim sweep on Slurm: array task I runs slice I of %u of the grid into\n"
            "# its own results file.  A task that failed or was preempted can be\n"
            "# resubmitted alone, and resumes from its file:\n"
            "#   sbatch --array=I %s/sweep.sbatch\n"
            "# then merge: sbatch %s/merge.sbatch\n"
            "#SBATCH --job-name=gmsim-sweep\n"
            "#SBATCH --array=1-%u\n"
            "#SBATCH --output=%s/logs/shard-%%a.log\n",
            tasks, folder, folder, tasks, folder);
    slurm_options(f, o);
    fprintf(f, "set -eu\n"
               "shard=$SLURM_ARRAY_TASK_ID\n"
               "start=$(date +%%s%%N)\n");
    slurm_quote(f, gmsim);
    fputs(" sweep", f);
    for (size_t i = 0; i < sw->ninputs; i++) {
        fputs(" \\\n  ", f);
        slurm_quote(f, inputs[i]);
    }
    if (sw->trace_glob) {
        fputs(" \\\n  --trace ", f);
        slurm_quote(f, sw->trace_glob);
    }
    if (sw->policies) {
        fputs(" \\\n  --policies ", f);
        slurm_quote(f, sw->policies);
    }
    for (size_t i = 0; i < sw->nparams; i++) {
        fputs(" \\\n  --param ", f);
        slurm_quote(f, sw->params[i]);
    }
    if (sw->start) {
        fputs(" \\\n  --start ", f);
        slurm_quote(f, sw->start);
    }
    gm_device_config_t def;
    gm_device_config_default(&def);
    if (sw->device->capacity != def.capacity || sw->device->granularity != def.granularity)
        fprintf(f, " \\\n  --capacity %llu --granularity %llu",
                (unsigned long long)sw->device->capacity,
                (unsigned long long)sw->device->granularity);
    if (sw->timeline_points)
        fprintf(f, " \\\n  --timeline-points %zu", sw->timeline_points);
    fprintf(f, " \\\n  --shard \"$shard/%u\" -j \"${SLURM_CPUS_PER_TASK:-1}\" \\\n  --results ",
            tasks);
    slurm_quote(f, folder);
    fputs("\"/shard-$shard.db\"\n", f);
    fprintf(f, "echo \"gmsim: shard $shard/%u took $(( ($(date +%%s%%N) - start) / 1000000 )) ms\"\n",
            tasks);
}

static void slurm_write_merge(FILE *f, const gm__slurm_t *o, unsigned tasks, const char *gmsim,
                              const char *folder, const char *results)
{
    fprintf(f,
            "#!/bin/bash\n"
            "# gmsim sweep on Slurm: merge the %u shards into the results, once every\n"
            "# array task has succeeded.  It refuses, naming them, shards that are\n"
            "# missing or incomplete.\n"
            "#SBATCH --job-name=gmsim-merge\n"
            "#SBATCH --output=%s/logs/merge.log\n",
            tasks, folder);
    slurm_options(f, o);
    fputs("set -eu\nexec ", f);
    slurm_quote(f, gmsim);
    fputs(" merge ", f);
    slurm_quote(f, results);
    for (unsigned i = 1; i <= tasks; i++) {
        fputs(" \\\n  ", f);
        char shard[PATH_MAX + 32];
        snprintf(shard, sizeof shard, "%s/shard-%u.db", folder, i);
        slurm_quote(f, shard);
    }
    fputc('\n', f);
}

/* Write text to path (mode 0755), whole or not at all (gm__cli_out_open);
 * GM_CLI_* status. */
static int slurm_save(const char *path, const char *text, size_t len)
{
    gm__cli_out_t out;
    int rc = gm__cli_out_open(&out, "", path, NULL, 0);
    if (rc)
        return rc;
    errno = 0;
    if (fwrite(text, 1, len, out.f) != len)
        rc = gm__cli_out_error(&out, errno);
    if (rc == GM_CLI_OK && out.tmp != NULL && fchmod(fileno(out.f), 0755) != 0)
        rc = gm__cli_error("cannot make '%s' executable: %s", path, gm__cli_strerror(errno));
    return gm__cli_out_close(&out, rc);
}

/* Run `sbatch --parsable [--dependency=afterok:DEP] SCRIPT`, the job id
 * into id.  GM_CLI_* status. */
static int slurm_sbatch(const char *script, const char *dep, char *id, size_t len)
{
    int fd[2];
    if (pipe(fd) != 0)
        return gm__cli_error("cannot run sbatch: %s", gm__cli_strerror(errno));
    char depopt[128];
    snprintf(depopt, sizeof depopt, "--dependency=afterok:%s", dep ? dep : "");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return gm__cli_error("cannot run sbatch: %s", gm__cli_strerror(errno));
    }
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        gm__cli_restore_xfsz();
        if (dep)
            execlp("sbatch", "sbatch", "--parsable", depopt, script, (char *)NULL);
        else
            execlp("sbatch", "sbatch", "--parsable", script, (char *)NULL);
        fprintf(stderr, "gmsim: cannot run sbatch: %s (is this a Slurm submission host? "
                        "--dry-run prints the scripts)\n",
                strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    char out[256];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fd[0], out + got, sizeof out - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || (got += (size_t)r) == sizeof out - 1)
            break;
    }
    close(fd[0]);
    out[got] = '\0';
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return WIFEXITED(status) && WEXITSTATUS(status) == 127
                   ? GM_CLI_ERROR
                   : gm__cli_error("sbatch refused '%s' (its message is above)", script);
    /* --parsable: "ID" or "ID;CLUSTER" */
    size_t n = strspn(out, "0123456789");
    if (n == 0 || n >= len)
        return gm__cli_error("sbatch gave no job id for '%s': '%.60s'", script, out);
    memcpy(id, out, n);
    id[n] = '\0';
    return GM_CLI_OK;
}

int gm__slurm_submit(const gm__slurm_t *o, const gm__slurm_sweep_t *sw)
{
    int rc = GM_CLI_OK;
    char gmsim[PATH_MAX];
    ssize_t glen = readlink("/proc/self/exe", gmsim, sizeof gmsim - 1);
    if (glen <= 0)
        return gm__cli_error("cannot find the gmsim program: %s", gm__cli_strerror(errno));
    gmsim[glen] = '\0';
    unsigned tasks = o->tasks;
    if (tasks == 0) {
        gm_sweep_config_t cfg = {.inputs = sw->inputs,
                                 .ninputs = sw->ninputs,
                                 .trace_glob = sw->trace_glob};
        size_t n;
        gm_error_t err = {0};
        if (gm_sweep_count_traces(&cfg, &n, &err) != 0)
            return gm__cli_error("%s", err.msg);
        tasks = n == 0 ? 1 : n > SLURM_DEFAULT_TASKS_MAX ? SLURM_DEFAULT_TASKS_MAX : (unsigned)n;
    }
    char **inputs = calloc(sw->ninputs + 1, sizeof *inputs);
    char *results = slurm_abs(sw->results), *folder = NULL;
    char *array = NULL, *merge = NULL;
    size_t array_len = 0, merge_len = 0;
    if (inputs == NULL)
        return gm__cli_error("out of memory");
    if (results == NULL) {
        rc = gm__cli_error("cannot use '%s' for the results: %s", sw->results,
                           gm__cli_strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < sw->ninputs; i++)
        if ((inputs[i] = slurm_abs(sw->inputs[i])) == NULL || access(inputs[i], R_OK) != 0) {
            rc = gm__cli_error("cannot read '%s': %s", sw->inputs[i], gm__cli_strerror(errno));
            goto out;
        }
    if ((folder = gm__slurm_folder(results)) == NULL) {
        rc = gm__cli_error("out of memory");
        goto out;
    }
    FILE *fa = open_memstream(&array, &array_len);
    FILE *fm = open_memstream(&merge, &merge_len);
    if (fa == NULL || fm == NULL) {
        if (fa)
            fclose(fa);
        if (fm)
            fclose(fm);
        rc = gm__cli_error("out of memory");
        goto out;
    }
    slurm_write_array(fa, o, sw, tasks, gmsim, folder, inputs);
    slurm_write_merge(fm, o, tasks, gmsim, folder, results);
    int bad = fclose(fa) != 0;
    bad |= fclose(fm) != 0;
    if (bad) {
        rc = gm__cli_error("out of memory");
        goto out;
    }
    if (o->dry_run) {
        printf("# %s/sweep.sbatch\n%s\n# %s/merge.sbatch (after the array: "
               "--dependency=afterok:ARRAY_JOB)\n%s",
               folder, array, folder, merge);
        goto out;
    }

    char path[PATH_MAX + 32], logs[PATH_MAX + 32];
    snprintf(logs, sizeof logs, "%s/logs", folder);
    if ((mkdir(folder, 0777) != 0 && errno != EEXIST) || (mkdir(logs, 0777) != 0 && errno != EEXIST)) {
        rc = gm__cli_error("cannot make '%s': %s", logs, gm__cli_strerror(errno));
        goto out;
    }
    snprintf(path, sizeof path, "%s/sweep.sbatch", folder);
    if ((rc = slurm_save(path, array, array_len)))
        goto out;
    snprintf(path, sizeof path, "%s/merge.sbatch", folder);
    if ((rc = slurm_save(path, merge, merge_len)))
        goto out;
    char array_id[64], merge_id[64];
    snprintf(path, sizeof path, "%s/sweep.sbatch", folder);
    if ((rc = slurm_sbatch(path, NULL, array_id, sizeof array_id)))
        goto out;
    snprintf(path, sizeof path, "%s/merge.sbatch", folder);
    if ((rc = slurm_sbatch(path, array_id, merge_id, sizeof merge_id))) {
        fprintf(stderr, "gmsim: the array job %s was submitted; submit the merge by hand: "
                        "sbatch --dependency=afterok:%s '%s'\n",
                array_id, array_id, path);
        goto out;
    }
    if (o->json) {
        gm_json_t j;
        gm_json_init(&j, stdout, 1);
        gm_json_begin_object(&j);
        gm_json_kv_str(&j, "folder", folder);
        gm_json_kv_str(&j, "array_job", array_id);
        gm_json_kv_str(&j, "merge_job", merge_id);
        gm_json_kv_u64(&j, "tasks", tasks);
        gm_json_kv_str(&j, "results", results);
        gm_json_end_object(&j);
        gm_json_finish(&j);
    } else {
        printf("submitted array job %s (%u task%s, scripts and shards in '%s')\n"
               "and merge job %s, which runs once every task has succeeded\n"
               "merged results will be in '%s'\n"
               "a task that fails can be resubmitted alone: sbatch --array=I '%s/sweep.sbatch',\n"
               "then: sbatch '%s/merge.sbatch'\n",
               array_id, tasks, tasks == 1 ? "" : "s", folder, merge_id, results, folder,
               folder);
    }
out:
    for (size_t i = 0; i < sw->ninputs; i++)
        free(inputs[i]);
    free(inputs);
    free(results);
    free(folder);
    free(array);
    free(merge);
    return rc;
}
