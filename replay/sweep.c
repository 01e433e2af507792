/*
 * replay/sweep.c — the grid traces × configurations, run by worker
 * processes, stored by the parent (API and key in gmsim/sweep.h).
 *
 * Plan.  The parent lists the traces of every input store (read only, then
 * closed: no SQLite connection is used across fork), keeps those matching
 * the glob (gm_trace_match), once per content digest (the key ignores
 * names; the summary counts and names the traces left out as the same
 * content, for the front end to say so), and forms
 * the grid in order trace-major, configuration-minor.  A shard keeps the
 * runs dealt to it (gm_sweep_plan: the line of runs cut into stretches of
 * equal work, a run weighing its trace's events, so that a shard holds
 * whole traces but at its two ends).  Runs whose key the results store
 * already holds are skipped, and looked up again just before each task
 * goes to a worker (sweep_prune): sweeps writing into one results store at
 * once share the grid, and a run both replayed is stored once (the key is
 * unique; the second save keeps the first).  The results store's shards table records,
 * under the grid's digest, the shard's runs and how many are stored: at
 * the start, and then in each run's transaction.  What is left is grouped
 * into tasks: the runs of one trace, so that one read of the trace feeds
 * them all (gm_compare_trace), split into smaller groups only when there
 * are too few traces to keep every worker busy (at least four tasks per
 * worker); tasks go out heaviest first, and the last `jobs` of them in
 * halves, so the last ones to finish are short.
 *
 * Cores.  -j N is N cores: a worker reads and replays on one thread
 * (decode_ahead off), as a decode thread would only take time from another
 * worker when every core has one.
 *
 * Processes.  N workers are forked at the start, each with a task pipe
 * (parent → worker: trace index and configuration indices) and a result
 * pipe (worker → parent: per run the metrics and the timeline, as the
 * in-memory structs — parent and worker are the same program).  Workers
 * open the input stores themselves, read only.  The parent alone writes:
 * gm_store_save_run, one transaction per run, as each result arrives, so a
 * sweep killed at any point keeps every run it reported and loses only
 * those in flight; the workers see the end of their task pipe and exit
 * (or die of SIGPIPE writing to a parent that is gone).  A worker that
 * dies (a crash, the OOM killer) fails its task, the others go on.
 * Workers leave with _exit: no atexit handler or stdio buffer of the
 * parent runs twice.
 */
#include "gmsim/sweep.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gmsim/version.h"
#include "store/codec.h"
#include "base/vec.h"

#define SWEEP_TASKS_PER_WORKER 4
#define SWEEP_MAX_JOBS 256

typedef struct sweep_trace {
    size_t input; /* index into cfg->inputs */
    char *name;
    char digest[33];
    uint64_t events;
    char *device; /* the capacity its recorded OOM fixes (gm_device_json), NULL: the sweep's */
} sweep_trace_t;

typedef struct sweep_task {
    size_t trace;
    size_t *sets; /* configuration indices */
    size_t nsets;
    uint64_t weight;
} sweep_task_t;

typedef struct sweep_worker {
    pid_t pid;
    int task_fd;   /* write end, -1 when closed */
    int result_fd; /* read end, -1 when closed */
    ssize_t task;  /* task in flight, -1 when idle */
} sweep_worker_t;

/* Result header sent by a worker, followed by msglen bytes of message and,
 * when rc is 0, nruns records of sweep_run_msg_t + npoints points. */
typedef struct sweep_result_msg {
    int32_t rc;
    uint32_t nruns;
    uint32_t msglen;
} sweep_result_msg_t;

typedef struct sweep_run_msg {
    uint32_t set;
    uint32_t npoints;
    gm_metrics_t metrics;
    int32_t has_plan;    /* a planner's run: plan holds its figures */
    gm_plan_info_t plan; /* offset and size NULL */
    int32_t warm;        /* started from the recorded layout */
    uint64_t layout_unfit;
} sweep_run_msg_t;

/* ---- shards ----------------------------------------------------------------- */

int gm_sweep_plan(const uint64_t *events, size_t ntraces, size_t nsets, unsigned nshards,
                  unsigned *out, gm_error_t *err)
{
    if (nshards == 0)
        return gm_error_set(err, GM_EINVAL, "a grid needs at least one shard");
    /* Work of run g: its trace's events + 1; the line of runs in grid
     * order is cut into nshards stretches of equal work, a run going to
     * the stretch that holds its middle. */
    unsigned __int128 total = 0, at = 0;
    for (size_t t = 0; t < ntraces; t++)
        total += (unsigned __int128)(events[t] + 1) * nsets;
    for (size_t t = 0; t < ntraces; t++) {
        uint64_t w = events[t] + 1;
        for (size_t k = 0; k < nsets; k++, at += w) {
            unsigned __int128 mid = 2 * at + w; /* twice the middle */
            unsigned s = (unsigned)(mid * nshards / (2 * total));
            out[t * nsets + k] = s < nshards ? s : nshards - 1;
        }
    }
    return 0;
}

/* The grid's digest: the traces (content digests, in grid order), the
 * configurations (policy and parameters), the device and gmsim's version,
 * each text with its terminating NUL.  Shards of one sweep share it. */
static void sweep_grid_digest(const sweep_trace_t *traces, size_t ntraces,
                              const gm_sweep_config_t *cfg, char *const *params,
                              const char *device, char hex[33])
{
    gm__digest_t d;
    gm__digest_init(&d);
    for (size_t t = 0; t < ntraces; t++)
        gm__digest_update(&d, traces[t].digest, strlen(traces[t].digest) + 1);
    for (size_t k = 0; k < cfg->nsets; k++) {
        gm__digest_update(&d, cfg->sets[k].ops->name, strlen(cfg->sets[k].ops->name) + 1);
        gm__digest_update(&d, params[k], strlen(params[k]) + 1);
    }
    gm__digest_update(&d, device, strlen(device) + 1);
    gm__digest_update(&d, gm_version(), strlen(gm_version()) + 1);
    gm__digest_final(&d, hex);
}

/* Records ordered by grid, shard count, then shard. */
static int sweep_record_cmp(const void *a, const void *b)
{
    const gm_shard_record_t *x = a, *y = b;
    int c = strcmp(x->grid, y->grid);
    if (c)
        return c;
    if (x->nshards != y->nshards)
        return x->nshards < y->nshards ? -1 : 1;
    return x->shard < y->shard ? -1 : x->shard > y->shard;
}

/* The message of gm_shards_check: items appended while they fit in
 * SWEEP_SHARDS_TEXT characters, the others counted. */
#define SWEEP_SHARDS_TEXT 400

typedef struct sweep_text {
    char buf[SWEEP_SHARDS_TEXT + 1];
    size_t len;
    size_t left_out;
} sweep_text_t;

static void sweep_text_add(sweep_text_t *t, const char *item)
{
    size_t need = strlen(item);
    if (t->left_out || t->len + need > SWEEP_SHARDS_TEXT) {
        t->left_out++;
        return;
    }
    memcpy(t->buf + t->len, item, need + 1);
    t->len += need;
}

/* One problem of a sweep: its first comes with the sweep's heading. */
static void sweep_problem(sweep_text_t *t, const gm_shard_record_t *sweep, size_t *bad,
                          int *first, const char *what)
{
    char item[192];
    if (*first)
        snprintf(item, sizeof item, "%ssweep %.8s (%u shard%s): %s", *bad ? "; " : "",
                 sweep->grid, sweep->nshards, sweep->nshards == 1 ? "" : "s", what);
    else
        snprintf(item, sizeof item, ", %s", what);
    sweep_text_add(t, item);
    *first = 0;
    (*bad)++;
}

int gm_shards_check(const gm_shard_record_t *records, size_t n, gm_error_t *err)
{
    gm_shard_record_t *r = malloc((n ? n : 1) * sizeof *r);
    if (r == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    if (n)
        memcpy(r, records, n * sizeof *r);
    qsort(r, n, sizeof *r, sweep_record_cmp);
    sweep_text_t text = {.len = 0};
    size_t bad = 0;
    for (size_t i = 0, j; i < n; i = j) {
        /* One sweep: the records of one grid and shard count, by shard. */
        for (j = i; j < n && strcmp(r[j].grid, r[i].grid) == 0 && r[j].nshards == r[i].nshards;)
            j++;
        unsigned nsh = r[i].nshards, next = 1;
        int first = 1;
        char what[96];
        for (size_t k = i; k < j; k++) {
            /* a shard merged more than once: its best record */
            uint64_t done = r[k].done;
            while (k + 1 < j && r[k + 1].shard == r[k].shard)
                done = r[++k].done > done ? r[k].done : done;
            for (; next < r[k].shard; next++) {
                snprintf(what, sizeof what, "shard %u/%u missing", next, nsh);
                sweep_problem(&text, &r[i], &bad, &first, what);
            }
            if (done < r[k].runs) {
                snprintf(what, sizeof what, "shard %u/%u has %llu of %llu runs", r[k].shard,
                         nsh, (unsigned long long)done, (unsigned long long)r[k].runs);
                sweep_problem(&text, &r[i], &bad, &first, what);
            }
            next = r[k].shard + 1;
        }
        for (; next <= nsh; next++) {
            snprintf(what, sizeof what, "shard %u/%u missing", next, nsh);
            sweep_problem(&text, &r[i], &bad, &first, what);
        }
    }
    free(r);
    if (bad == 0)
        return 0;
    if (text.left_out)
        return gm_error_set(err, GM_EINCOMPLETE, "%s, and %zu more", text.buf, text.left_out);
    return gm_error_set(err, GM_EINCOMPLETE, "%s", text.buf);
}

/* ---- pipes ------------------------------------------------------------------- */

static int sweep_write(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* 0 when all of len came, 1 at a clean end of file before any byte, -1 on
 * an error or a partial read. */
static int sweep_read(int fd, void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, p + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return got == 0 ? 1 : -1;
        got += (size_t)r;
    }
    return 0;
}

/* ---- the worker --------------------------------------------------------------- */

static int sweep_send_error(int fd, int rc, const char *msg)
{
    sweep_result_msg_t h = {rc ? rc : GM_EIO, 0, (uint32_t)strlen(msg)};
    return sweep_write(fd, &h, sizeof h) || sweep_write(fd, msg, h.msglen) ? -1 : 0;
}

static void sweep_worker_main(const gm_sweep_config_t *cfg, const sweep_trace_t *traces,
                              int task_fd, int result_fd)
{
    gm_store_t **stores = calloc(cfg->ninputs, sizeof *stores);
    gm_params_t *sets = malloc((cfg->nsets ? cfg->nsets : 1) * sizeof *sets);
    size_t *idx = malloc((cfg->nsets ? cfg->nsets : 1) * sizeof *idx);
    if (stores == NULL || sets == NULL || idx == NULL)
        _exit(3);
    gm_replay_config_t rcfg;
    gm_replay_config_default(&rcfg);
    /* -j N is N cores: a worker decodes its trace itself (a decode thread
     * would only take time from another worker). */
    rcfg.decode_ahead = 0;
    rcfg.threads = cfg->threads;
    rcfg.device = cfg->device;
    rcfg.timeline_points = cfg->timeline_points ? cfg->timeline_points : GM_SWEEP_TIMELINE_POINTS;
    for (;;) {
        uint32_t head[2];
        int r = sweep_read(task_fd, head, sizeof head);
        if (r != 0)
            break; /* the parent is done (or gone) */
        uint32_t trace = head[0], nsets = head[1];
        if (nsets > cfg->nsets)
            _exit(4);
        uint32_t *ids = malloc((nsets ? nsets : 1) * sizeof *ids);
        if (ids == NULL || sweep_read(task_fd, ids, nsets * sizeof *ids) != 0)
            _exit(4);
        for (uint32_t i = 0; i < nsets; i++) {
            idx[i] = ids[i];
            sets[i] = cfg->sets[ids[i]]; /* shallow: gm_replay_add copies */
        }
        const sweep_trace_t *t = &traces[trace];
        gm_error_t err = {0};
        int rc = 0;
        if (stores[t->input] == NULL)
            rc = gm_store_open(cfg->inputs[t->input], GM_STORE_READONLY, &stores[t->input], &err);
        gm_replay_config_t tcfg = rcfg;
        if (t->device) { /* the capacity its recorded OOM fixes */
            gm_trace_info_t info;
            if (rc == 0 && (rc = gm_store_find(stores[t->input], t->name, &info, &err)) == 0) {
                gm_replay_config_at_oom(&tcfg, info.attrs);
                gm_trace_info_release(&info);
            }
        }
        gm_compare_trace_t res;
        if (rc == 0)
            rc = gm_compare_trace(stores[t->input], t->name, sets, nsets, &tcfg, &res, &err);
        if (rc) {
            if (sweep_send_error(result_fd, rc, err.msg))
                _exit(5);
            free(ids);
            continue;
        }
        sweep_result_msg_t h = {0, (uint32_t)res.nruns, 0};
        int bad = sweep_write(result_fd, &h, sizeof h);
        for (size_t i = 0; !bad && i < res.nruns; i++) {
            sweep_run_msg_t m = {ids[i], (uint32_t)res.runs[i].npoints, res.runs[i].metrics,
                                 res.runs[i].has_plan, res.runs[i].plan, res.runs[i].warm,
                                 res.runs[i].layout_unfit};
            m.plan.offset = m.plan.size = NULL;
            bad = sweep_write(result_fd, &m, sizeof m) ||
                  sweep_write(result_fd, res.runs[i].timeline,
                              res.runs[i].npoints * sizeof *res.runs[i].timeline);
        }
        gm_compare_trace_release(&res);
        free(ids);
        if (bad)
            _exit(5);
    }
    for (size_t i = 0; i < cfg->ninputs; i++)
        if (stores[i])
            gm_store_close(stores[i]);
    _exit(0);
}

/* ---- the parent ----------------------------------------------------------------- */

typedef struct sweep_state {
    const gm_sweep_config_t *cfg;
    sweep_trace_t *traces;
    size_t ntraces;
    char **params; /* per configuration: gm_params_json */
    char *device;
    gm_store_t *out;
    gm_shard_record_t record; /* this shard's, done kept with the runs */
    gm_sweep_progress_t prog;
    gm_sweep_summary_t *sum;
    int first_rc;
    gm_error_t *err;
} sweep_state_t;

static void sweep_fail(sweep_state_t *st, size_t nruns, int rc, const char *fmt, ...)
    GM_PRINTF(4, 5);
static void sweep_fail(sweep_state_t *st, size_t nruns, int rc, const char *fmt, ...)
{
    st->sum->failed += nruns;
    if (st->first_rc)
        return;
    st->first_rc = rc;
    char msg[GM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gm_error_set(st->err, rc, "%s", msg);
}

/* One task's result as read from its worker: runs[i] with its timeline
 * pts[i] (owned). */
typedef struct sweep_batch {
    sweep_run_msg_t *runs;
    gm_timeline_point_t **pts;
    uint32_t n;
} sweep_batch_t;

/*
 * Read one task's result from w into *b, so that the worker can be given
 * its next task before the parent writes (a worker never waits for the
 * store).  Runs that fail are counted here.  Returns -1 when the worker is
 * gone (its task failed; the runs read before stay in *b), else 0.
 */
static int sweep_receive(sweep_state_t *st, sweep_worker_t *w, const sweep_task_t *task,
                         sweep_batch_t *b)
{
    const sweep_trace_t *t = &st->traces[task->trace];
    memset(b, 0, sizeof *b);
    sweep_result_msg_t h;
    if (sweep_read(w->result_fd, &h, sizeof h) != 0) {
        sweep_fail(st, task->nsets, GM_EIO, "trace '%s': a worker died", t->name);
        return -1;
    }
    if (h.rc != 0) {
        char msg[GM_ERROR_MSG_MAX];
        size_t n = h.msglen < sizeof msg ? h.msglen : sizeof msg - 1;
        if (h.msglen >= sizeof msg || sweep_read(w->result_fd, msg, n) != 0) {
            sweep_fail(st, task->nsets, GM_EIO, "trace '%s': a worker died", t->name);
            return -1;
        }
        msg[n] = '\0';
        sweep_fail(st, task->nsets, h.rc, "%s", msg);
        return 0;
    }
    b->runs = malloc((h.nruns ? h.nruns : 1) * sizeof *b->runs);
    b->pts = calloc(h.nruns ? h.nruns : 1, sizeof *b->pts);
    if (b->runs == NULL || b->pts == NULL) {
        sweep_fail(st, h.nruns, GM_ENOMEM, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < h.nruns; i++) {
        sweep_run_msg_t *m = &b->runs[i];
        gm_timeline_point_t *pts = NULL;
        int ok = sweep_read(w->result_fd, m, sizeof *m) == 0 && m->set < st->cfg->nsets;
        if (ok) {
            pts = malloc((m->npoints ? m->npoints : 1) * sizeof *pts);
            ok = pts != NULL && sweep_read(w->result_fd, pts, m->npoints * sizeof *pts) == 0;
        }
        if (!ok) {
            free(pts);
            sweep_fail(st, h.nruns - i, GM_EIO, "trace '%s': a worker died", t->name);
            return -1;
        }
        b->pts[i] = pts;
        b->n = i + 1;
    }
    return 0;
}

/* Store the runs of b (one transaction each) and free them. */
static void sweep_store(sweep_state_t *st, const sweep_task_t *task, sweep_batch_t *b)
{
    const sweep_trace_t *t = &st->traces[task->trace];
    for (uint32_t i = 0; i < b->n; i++) {
        const sweep_run_msg_t *m = &b->runs[i];
        char *metrics = gm_run_result_json(&m->metrics, m->has_plan ? &m->plan : NULL, m->warm,
                                           m->layout_unfit);
        gm_run_record_t rec = {.trace = t->name,
                               .trace_digest = t->digest,
                               .policy = st->cfg->sets[m->set].ops->name,
                               .params = st->params[m->set],
                               .device = t->device ? t->device : st->device,
                               .metrics = metrics,
                               .timeline = b->pts[i],
                               .npoints = m->npoints};
        gm_shard_record_t shard = st->record;
        shard.done++;
        rec.shard = &shard;
        int found = 0;
        rec.found = &found;
        gm_error_t err = {0};
        if (metrics == NULL)
            sweep_fail(st, 1, GM_ENOMEM, "out of memory");
        else if (gm_store_save_run(st->out, &rec, NULL, &err) != 0)
            sweep_fail(st, 1, err.code, "%s", err.msg);
        else {
            /* found: another sweep stored the key meanwhile (kept) */
            if (found) {
                st->sum->reused++;
                st->prog.runs_reused++;
            } else {
                st->sum->ran++;
                st->sum->layout_unfit += m->layout_unfit != 0;
                if (m->has_plan && m->plan.status >= GM_PLAN_GREEDY &&
                    m->plan.status <= GM_PLAN_OPTIMAL) {
                    st->sum->plans[m->plan.status]++;
                    double gap = m->plan.lower_bound && m->plan.peak > m->plan.lower_bound
                                     ? (double)(m->plan.peak - m->plan.lower_bound) /
                                           (double)m->plan.lower_bound
                                     : 0.0;
                    if (m->plan.status != GM_PLAN_OPTIMAL && gap > st->sum->plan_gap_max)
                        st->sum->plan_gap_max = gap;
                }
            }
            st->record.done++;
            st->prog.runs_done++;
        }
        st->prog.work_done += t->events;
        free(metrics);
        free(b->pts[i]);
        if (st->cfg->progress)
            st->cfg->progress(st->cfg->progress_ctx, &st->prog);
    }
    free(b->runs);
    free(b->pts);
    memset(b, 0, sizeof *b);
}

/*
 * Drop from task the runs whose key the results store holds by now:
 * another sweep writing into the same store (or a shard of this one run
 * twice) stored them since the plan was made.  They count as reused.
 * Returns the runs left (0: nothing to send).
 */
static size_t sweep_prune(sweep_state_t *st, sweep_task_t *task)
{
    const sweep_trace_t *t = &st->traces[task->trace];
    size_t kept = 0;
    for (size_t i = 0; i < task->nsets; i++) {
        size_t k = task->sets[i];
        gm_error_t err = {0};
        int64_t id;
        /* an error here (other than not found) is left to the save */
        if (gm_store_find_run(st->out, t->digest, st->cfg->sets[k].ops->name, st->params[k],
                              t->device ? t->device : st->device, NULL, &id, &err) == 0) {
            gm_shard_record_t rec = st->record;
            rec.done++;
            if (gm_store_put_shard(st->out, &rec, &err) != 0) {
                task->sets[kept++] = k; /* run it: the save records the shard */
                continue;
            }
            st->record.done++;
            st->sum->reused++;
            st->prog.runs_done++;
            st->prog.runs_reused++;
            st->prog.work_done += t->events;
        } else {
            task->sets[kept++] = k;
        }
    }
    if (kept < task->nsets && st->cfg->progress)
        st->cfg->progress(st->cfg->progress_ctx, &st->prog);
    task->nsets = kept;
    return kept;
}

static int sweep_send_task(sweep_worker_t *w, const sweep_task_t *task)
{
    uint32_t head[2] = {(uint32_t)task->trace, (uint32_t)task->nsets};
    uint32_t *ids = malloc((task->nsets ? task->nsets : 1) * sizeof *ids);
    if (ids == NULL)
        return -1;
    for (size_t i = 0; i < task->nsets; i++)
        ids[i] = (uint32_t)task->sets[i];
    int rc = sweep_write(w->task_fd, head, sizeof head) ||
             sweep_write(w->task_fd, ids, task->nsets * sizeof *ids);
    free(ids);
    return rc ? -1 : 0;
}

static void sweep_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int sweep_task_cmp(const void *a, const void *b);

/* Split each of the last `jobs` tasks of *tasks (sorted heaviest first)
 * that has two runs or more into two, and sort again: the halves go last.
 * GM_ENOMEM leaves the tasks as they were (each still owns its sets). */
static int sweep_split_tail(sweep_task_t **tasks, size_t *ntasks, unsigned jobs, gm_error_t *err)
{
    size_t n = *ntasks, first = n > jobs ? n - jobs : 0, extra = 0;
    for (size_t i = first; i < n; i++)
        extra += (*tasks)[i].nsets >= 2;
    if (extra == 0)
        return 0;
    sweep_task_t *t = realloc(*tasks, (n + extra) * sizeof *t);
    if (t == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    *tasks = t;
    size_t m = n;
    for (size_t i = first; i < n; i++) {
        sweep_task_t *a = &t[i];
        if (a->nsets < 2)
            continue;
        size_t keep = a->nsets / 2, move = a->nsets - keep;
        size_t *sets = malloc(move * sizeof *sets);
        if (sets == NULL) {
            *ntasks = m;
            return gm_error_set(err, GM_ENOMEM, "out of memory");
        }
        memcpy(sets, a->sets + keep, move * sizeof *sets);
        uint64_t per = a->weight / a->nsets;
        t[m] = (sweep_task_t){.trace = a->trace, .sets = sets, .nsets = move, .weight = per * move};
        a->nsets = keep;
        a->weight = per * keep;
        m++;
    }
    *ntasks = m;
    qsort(t, m, sizeof *t, sweep_task_cmp);
    return 0;
}

/* Fork the workers and run the tasks through them. */
static int sweep_execute(sweep_state_t *st, sweep_task_t *tasks, size_t ntasks, unsigned jobs)
{
    if (ntasks == 0)
        return 0;
    if (jobs > ntasks)
        jobs = (unsigned)ntasks;
    sweep_worker_t *ws = calloc(jobs, sizeof *ws);
    struct pollfd *pfd = calloc(jobs, sizeof *pfd);
    if (ws == NULL || pfd == NULL) {
        free(ws);
        free(pfd);
        return gm_error_set(st->err, GM_ENOMEM, "out of memory");
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    fflush(NULL); /* nothing buffered is written twice */
    unsigned started = 0;
    size_t next = 0, busy = 0;
    int rc = 0;
    for (; started < jobs; started++) {
        int tp[2], rp[2];
        if (pipe(tp) != 0)
            break;
        if (pipe(rp) != 0) {
            close(tp[0]);
            close(tp[1]);
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            close(tp[0]);
            close(tp[1]);
            close(rp[0]);
            close(rp[1]);
            break;
        }
        if (pid == 0) {
            signal(SIGPIPE, SIG_DFL);
            /* Only this worker's ends stay open here. */
            for (unsigned k = 0; k < started; k++) {
                close(ws[k].task_fd);
                close(ws[k].result_fd);
            }
            close(tp[1]);
            close(rp[0]);
            sweep_worker_main(st->cfg, st->traces, tp[0], rp[1]);
        }
        close(tp[0]);
        close(rp[1]);
        ws[started] = (sweep_worker_t){pid, tp[1], rp[0], -1};
    }
    if (started == 0) {
        rc = gm_error_set(st->err, GM_EIO, "cannot start a worker process: %s", strerror(errno));
        goto out;
    }
    for (unsigned k = 0; k < started && next < ntasks; k++) {
        while (next < ntasks && sweep_prune(st, &tasks[next]) == 0)
            next++;
        if (next < ntasks && sweep_send_task(&ws[k], &tasks[next]) == 0) {
            ws[k].task = (ssize_t)next++;
            busy++;
        }
    }
    while (busy > 0) {
        nfds_t n = 0;
        for (unsigned k = 0; k < started; k++) {
            pfd[k].fd = ws[k].task >= 0 ? ws[k].result_fd : -1;
            pfd[k].events = POLLIN;
            pfd[k].revents = 0;
            n++;
        }
        if (poll(pfd, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            rc = gm_error_set(st->err, GM_EIO, "poll: %s", strerror(errno));
            break;
        }
        for (unsigned k = 0; k < started; k++) {
            if (ws[k].task < 0 || !(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            busy--;
            sweep_batch_t batch;
            const sweep_task_t *done = &tasks[ws[k].task];
            int alive = sweep_receive(st, &ws[k], done, &batch) == 0;
            ws[k].task = -1;
            if (!alive) {
                sweep_close(&ws[k].task_fd);
                sweep_close(&ws[k].result_fd);
                sweep_store(st, done, &batch);
                continue;
            }
            /* The next task first, then the writing: the worker runs while
             * the parent stores. */
            while (next < ntasks) {
                if (sweep_prune(st, &tasks[next]) == 0) {
                    next++;
                    continue;
                }
                if (sweep_send_task(&ws[k], &tasks[next]) == 0) {
                    ws[k].task = (ssize_t)next++;
                    busy++;
                    break;
                }
                /* The worker is gone: leave the task to the others. */
                sweep_close(&ws[k].task_fd);
                sweep_close(&ws[k].result_fd);
                break;
            }
            sweep_store(st, done, &batch);
        }
    }
    /* Every worker is gone and tasks are left: they fail. */
    for (; rc == 0 && next < ntasks; next++)
        sweep_fail(st, tasks[next].nsets, GM_EIO, "trace '%s': no worker left",
                   st->traces[tasks[next].trace].name);
out:
    for (unsigned k = 0; k < started; k++) {
        sweep_close(&ws[k].task_fd);
        sweep_close(&ws[k].result_fd);
    }
    for (unsigned k = 0; k < started; k++)
        while (waitpid(ws[k].pid, NULL, 0) < 0 && errno == EINTR)
            ;
    sigaction(SIGPIPE, &old, NULL);
    free(ws);
    free(pfd);
    return rc;
}

static int sweep_task_cmp(const void *a, const void *b)
{
    const sweep_task_t *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    if (x->trace != y->trace)
        return x->trace < y->trace ? -1 : 1;
    return x->sets[0] < y->sets[0] ? -1 : x->sets[0] > y->sets[0];
}

/* List the inputs' traces matching the glob, once per digest. */
static int sweep_list(sweep_state_t *st)
{
    const gm_sweep_config_t *cfg = st->cfg;
    size_t cap = 0;
    for (size_t i = 0; i < cfg->ninputs; i++) {
        gm_store_t *s;
        int rc = gm_store_open(cfg->inputs[i], GM_STORE_READONLY, &s, st->err);
        if (rc)
            return rc;
        gm_trace_info_t *list;
        size_t n;
        rc = gm_store_list(s, &list, &n, st->err);
        gm_store_close(s);
        if (rc)
            return rc;
        for (size_t k = 0; rc == 0 && k < n; k++) {
            if (!gm_trace_match(cfg->trace_glob, list[k].name))
                continue;
            size_t j = 0;
            while (j < st->ntraces && strcmp(st->traces[j].digest, list[k].digest) != 0)
                j++;
            if (j < st->ntraces) {
                /* The same events under another name (or in another
                 * store): a run's key is the content, so it is swept once
                 * and its runs serve both; the summary says so. */
                if (st->sum->same_content++ == 0)
                    snprintf(st->sum->same_note, sizeof st->sum->same_note,
                             "'%s' in '%s' has the same events as '%s' in '%s'", list[k].name,
                             cfg->inputs[i], st->traces[j].name, cfg->inputs[st->traces[j].input]);
                continue;
            }
            if (GM_VEC_RESERVE(st->traces, cap, st->ntraces + 1, 16)) {
                rc = gm_error_set(st->err, GM_ENOMEM, "out of memory");
                break;
            }
            sweep_trace_t *t = &st->traces[st->ntraces];
            t->input = i;
            t->events = list[k].events;
            memcpy(t->digest, list[k].digest, sizeof t->digest);
            t->device = NULL;
            /* without a capacity, the one its recorded OOM fixes: its runs
             * are stored with that device */
            gm_replay_config_t oc = {.device = cfg->device};
            int at_oom = gm_replay_config_at_oom(&oc, list[k].attrs);
            if ((t->name = strdup(list[k].name)) == NULL ||
                (at_oom && (t->device = gm_device_json(&oc.device)) == NULL)) {
                free(t->name);
                rc = gm_error_set(st->err, GM_ENOMEM, "out of memory");
            } else {
                st->ntraces++;
                if (at_oom && st->sum->at_oom++ == 0) {
                    snprintf(st->sum->at_oom_trace, sizeof st->sum->at_oom_trace, "%s",
                             list[k].name);
                    st->sum->at_oom_capacity = oc.device.capacity;
                }
            }
        }
        gm_trace_info_free_list(list, n);
        if (rc)
            return rc;
    }
    return 0;
}

int gm_sweep_count_traces(const gm_sweep_config_t *cfg, size_t *n, gm_error_t *err)
{
    gm_sweep_summary_t sum;
    memset(&sum, 0, sizeof sum);
    sweep_state_t st = {.cfg = cfg, .sum = &sum, .err = err};
    int rc = sweep_list(&st);
    *n = st.ntraces;
    for (size_t i = 0; i < st.ntraces; i++) {
        free(st.traces[i].name);
        free(st.traces[i].device);
    }
    free(st.traces);
    return rc;
}

/* Whether two paths name the same existing file: the same device and
 * inode once links are followed (a symlink or a hard link is caught). */
static int sweep_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int sweep_run(const gm_sweep_config_t *cfg, gm_sweep_summary_t *sum, gm_error_t *err);

int gm_sweep_run(const gm_sweep_config_t *cfg, gm_sweep_summary_t *sum, gm_error_t *err)
{
    if (!cfg->results_traces || cfg->results == NULL)
        return sweep_run(cfg, sum, err);
    /* The results store's traces are read like any input's (its writes
     * are the parent's alone; workers read it through WAL snapshots). */
    const char **all = malloc((cfg->ninputs + 1) * sizeof *all);
    if (all == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    for (size_t i = 0; i < cfg->ninputs; i++)
        all[i] = cfg->inputs[i];
    all[cfg->ninputs] = cfg->results;
    gm_sweep_config_t c = *cfg;
    c.inputs = all;
    c.ninputs = cfg->ninputs + 1;
    int rc = sweep_run(&c, sum, err);
    free(all);
    return rc;
}

static int sweep_run(const gm_sweep_config_t *cfg, gm_sweep_summary_t *sum, gm_error_t *err)
{
    gm_sweep_summary_t local;
    if (sum == NULL)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    unsigned nshards = cfg->nshards ? cfg->nshards : 1;
    if (cfg->shard >= nshards)
        return gm_error_set(err, GM_EINVAL, "invalid shard %u/%u (shards count from 1)",
                            cfg->shard + 1, nshards);
    if (cfg->nsets == 0 || cfg->nsets > UINT32_MAX / 2)
        return gm_error_set(err, GM_EINVAL, "a sweep needs at least one configuration");
    if (cfg->results == NULL)
        return gm_error_set(err, GM_EINVAL, "a sweep needs a results store");
    size_t user_inputs = cfg->ninputs - (cfg->results_traces ? 1 : 0);
    for (size_t i = 0; i < user_inputs; i++)
        if (sweep_same_file(cfg->inputs[i], cfg->results))
            return gm_error_set(err, GM_EINVAL,
                                "the results store '%s' is also an input: a sweep only reads "
                                "its inputs (name another file)",
                                cfg->results);
    sweep_state_t st = {.cfg = cfg, .sum = sum, .err = err};
    sweep_task_t *tasks = NULL;
    size_t ntasks = 0;
    uint64_t *events = NULL;
    unsigned *shard = NULL;
    unsigned char *todo = NULL;
    int rc = sweep_list(&st);
    if (rc)
        goto out;
    if (st.ntraces == 0) {
        rc = gm_error_set(err, GM_ENOTFOUND, "no trace%s%s%s in %s'%s'%s",
                          cfg->trace_glob ? " matches '" : "", cfg->trace_glob ? cfg->trace_glob : "",
                          cfg->trace_glob ? "'" : "", cfg->ninputs > 1 ? "the stores " : "",
                          cfg->ninputs ? cfg->inputs[0] : "", cfg->ninputs > 1 ? ", …" : "");
        goto out;
    }
    sum->traces = st.ntraces;
    size_t ngrid = st.ntraces * cfg->nsets;
    sum->grid = ngrid;
    st.params = calloc(cfg->nsets, sizeof *st.params);
    events = malloc(st.ntraces * sizeof *events);
    shard = malloc(ngrid * sizeof *shard);
    todo = calloc(ngrid, 1);
    st.device = gm_device_json(&cfg->device);
    if (st.params == NULL || events == NULL || shard == NULL || todo == NULL ||
        st.device == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < cfg->nsets; k++)
        if ((st.params[k] = gm_params_json(&cfg->sets[k])) == NULL) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            goto out;
        }
    for (size_t t = 0; t < st.ntraces; t++)
        events[t] = st.traces[t].events;
    if ((rc = gm_sweep_plan(events, st.ntraces, cfg->nsets, nshards, shard, err)))
        goto out;
    if ((rc = gm_store_open(cfg->results, GM_STORE_WRITE, &st.out, err)))
        goto out;
    gm_shard_record_t *record = &st.record;
    record->shard = cfg->shard + 1;
    record->nshards = nshards;
    sweep_grid_digest(st.traces, st.ntraces, cfg, st.params, st.device, record->grid);

    /* What this shard must run, and what is done already. */
    size_t *per_trace = calloc(st.ntraces, sizeof *per_trace);
    if (per_trace == NULL) {
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    size_t left = 0, traces_left = 0;
    for (size_t g = 0; rc == 0 && g < ngrid; g++) {
        if (shard[g] != cfg->shard)
            continue;
        const sweep_trace_t *t = &st.traces[g / cfg->nsets];
        size_t k = g % cfg->nsets;
        sum->runs++;
        st.prog.runs_total++;
        st.prog.work_total += t->events;
        rc = gm_store_find_run(st.out, t->digest, cfg->sets[k].ops->name, st.params[k],
                               t->device ? t->device : st.device, NULL, NULL, err);
        if (rc == 0) {
            sum->reused++;
            st.prog.runs_done++;
            st.prog.runs_reused++;
            st.prog.work_done += t->events;
        } else if (rc == GM_ENOTFOUND) {
            gm_error_clear(err);
            rc = 0;
            todo[g] = 1;
            left++;
            if (per_trace[g / cfg->nsets]++ == 0)
                traces_left++;
        }
    }
    /* The shard's record, before anything runs: a shard killed now is
     * known to be incomplete. */
    record->runs = sum->runs;
    record->done = sum->reused;
    if (rc == 0)
        rc = gm_store_put_shard(st.out, record, err);
    if (rc) {
        free(per_trace);
        goto out;
    }
    /* Tasks: a trace's runs together, split when traces are too few. */
    unsigned jobs = cfg->jobs ? cfg->jobs : 1;
    if (jobs > SWEEP_MAX_JOBS)
        jobs = SWEEP_MAX_JOBS;
    size_t want = (size_t)jobs * SWEEP_TASKS_PER_WORKER;
    size_t split = jobs > 1 && traces_left && traces_left < want
                       ? (want + traces_left - 1) / traces_left
                       : 1;
    tasks = calloc(left ? left : 1, sizeof *tasks);
    if (tasks == NULL) {
        free(per_trace);
        rc = gm_error_set(err, GM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t ti = 0; rc == 0 && ti < st.ntraces; ti++) {
        size_t n = per_trace[ti];
        if (n == 0)
            continue;
        size_t groups = split < n ? split : n;
        size_t per = (n + groups - 1) / groups;
        size_t taken = 0;
        for (size_t k = 0; k < cfg->nsets; k++) {
            size_t g = ti * cfg->nsets + k;
            if (!todo[g])
                continue;
            if (taken % per == 0) {
                sweep_task_t *task = &tasks[ntasks++];
                task->trace = ti;
                task->sets = malloc(per * sizeof *task->sets);
                if (task->sets == NULL) {
                    rc = gm_error_set(err, GM_ENOMEM, "out of memory");
                    break;
                }
            }
            sweep_task_t *task = &tasks[ntasks - 1];
            task->sets[task->nsets++] = k;
            task->weight += st.traces[ti].events + 1;
            taken++;
        }
    }
    free(per_trace);
    if (rc)
        goto out;
    qsort(tasks, ntasks, sizeof *tasks, sweep_task_cmp);
    /* The tail: the last `jobs` tasks go out in halves, so that the workers
     * finish within half a task of each other rather than a whole one (one
     * more read of those traces buys it). */
    if (jobs > 1 && (rc = sweep_split_tail(&tasks, &ntasks, jobs, err)) != 0)
        goto out;
    if (cfg->progress)
        cfg->progress(cfg->progress_ctx, &st.prog);
    rc = sweep_execute(&st, tasks, ntasks, jobs);
    if (rc == 0)
        rc = st.first_rc;
out:
    for (size_t i = 0; i < ntasks; i++)
        free(tasks[i].sets);
    free(tasks);
    if (st.out)
        gm_store_close(st.out);
    for (size_t i = 0; st.params && i < cfg->nsets; i++)
        free(st.params[i]);
    free(st.params);
    free(st.device);
    for (size_t i = 0; i < st.ntraces; i++) {
        free(st.traces[i].name);
        free(st.traces[i].device);
    }
    free(st.traces);
    free(events);
    free(shard);
    free(todo);
    return rc;
}
