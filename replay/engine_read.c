/*
 * replay/engine_read.c — replaying a trace from the store (gm_replay_trace):
 * its tags and context, the lifetimes pass for the policies that plan,
 * and the feed, with the policies on threads (replay/engine_par.c) or with
 * the next chunk decoded ahead on a second thread.  The engine itself, its
 * two passes and its runs are replay/engine.c.
 */
#include "gmsim/replay.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "store/store.h"

#include "replay/engine.h"


/*
 * Reading a stored trace overlaps decoding with replay: a second thread
 * decodes chunk k+1 (SQLite read, inflate, column decode) straight into one
 * of two buffers while this thread replays chunk k from the other.  The events and
 * their order are the same as a plain loop over gm_reader_next, so results
 * are identical; memory is two chunks more.
 */
typedef struct engine_prefetch {
    gm_reader_t *rd;
    gm_event_t *buf[2];
    size_t n[2];
    int full[2];
    int done; /* the producer has stopped: end of trace or error */
    int stop; /* the consumer wants the producer to stop */
    int rc;
    gm_error_t err;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} engine_prefetch_t;

static void *engine_prefetch_main(void *arg)
{
    engine_prefetch_t *pf = arg;
    for (unsigned k = 0;; k ^= 1) {
        pthread_mutex_lock(&pf->mu);
        while (pf->full[k] && !pf->stop)
            pthread_cond_wait(&pf->cv, &pf->mu);
        int stop = pf->stop;
        pthread_mutex_unlock(&pf->mu);
        size_t n = 0;
        int rc = stop ? 0 : gm__reader_next_into(pf->rd, pf->buf[k], &n, &pf->err);
        pthread_mutex_lock(&pf->mu);
        if (rc != 0 || n == 0 || stop) {
            pf->rc = rc;
            pf->done = 1;
        } else {
            pf->n[k] = n;
            pf->full[k] = 1;
        }
        pthread_cond_broadcast(&pf->cv);
        pthread_mutex_unlock(&pf->mu);
        if (pf->done)
            return NULL;
    }
}

/* Feed every chunk of rd through r, decoding ahead on a second thread.
 * *replay_failed tells a replay error from a read error. */
static void engine_progress(const gm_replay_t *r, uint64_t total)
{
    if (r->cfg.progress)
        r->cfg.progress(r->cfg.progress_ctx, r->events, total);
}

static int engine_feed_prefetched(gm_replay_t *r, gm_reader_t *rd, int *replay_failed,
                                  gm_error_t *err)
{
    uint64_t total = gm_reader_info(rd)->events;
    engine_prefetch_t pf;
    memset(&pf, 0, sizeof pf);
    pf.rd = rd;
    if (r->cfg.decode_ahead) {
        pf.buf[0] = malloc(GM_CHUNK_EVENTS * sizeof(gm_event_t));
        pf.buf[1] = malloc(GM_CHUNK_EVENTS * sizeof(gm_event_t));
    }
    pthread_t thread;
    int started = pf.buf[0] && pf.buf[1] && pthread_mutex_init(&pf.mu, NULL) == 0;
    if (started && pthread_cond_init(&pf.cv, NULL) != 0) {
        pthread_mutex_destroy(&pf.mu);
        started = 0;
    }
    if (started && pthread_create(&thread, NULL, engine_prefetch_main, &pf) != 0) {
        pthread_cond_destroy(&pf.cv);
        pthread_mutex_destroy(&pf.mu);
        started = 0;
    }
    if (!started) {
        /* One thread (asked for, or no thread to be had): the plain loop
         * gives the same result. */
        free(pf.buf[0]);
        free(pf.buf[1]);
        const gm_event_t *ev;
        size_t n;
        int rc;
        while ((rc = gm_reader_next(rd, &ev, &n, err)) == 0 && n > 0)
            if ((rc = gm_replay_feed(r, ev, n, err)) != 0) {
                *replay_failed = 1;
                break;
            } else {
                engine_progress(r, total);
            }
        return rc;
    }

    int rc = 0;
    for (unsigned k = 0;; k ^= 1) {
        pthread_mutex_lock(&pf.mu);
        while (!pf.full[k] && !pf.done)
            pthread_cond_wait(&pf.cv, &pf.mu);
        int have = pf.full[k];
        pthread_mutex_unlock(&pf.mu);
        if (!have)
            break;
        rc = gm_replay_feed(r, pf.buf[k], pf.n[k], err);
        *replay_failed = rc != 0;
        if (rc == 0)
            engine_progress(r, total);
        pthread_mutex_lock(&pf.mu);
        pf.full[k] = 0;
        if (rc)
            pf.stop = 1;
        pthread_cond_broadcast(&pf.cv);
        pthread_mutex_unlock(&pf.mu);
        if (rc)
            break;
    }
    pthread_join(thread, NULL);
    if (rc == 0 && pf.rc != 0) {
        rc = pf.rc;
        if (err)
            *err = pf.err;
    }
    pthread_cond_destroy(&pf.cv);
    pthread_mutex_destroy(&pf.mu);
    free(pf.buf[0]);
    free(pf.buf[1]);
    return rc;
}


/* Every allocation's lifetime, from a first pass over the stored trace. */
static int engine_lifetimes(gm_store_t *s, const char *name, gm_lifetime_t **out, size_t *nout,
                            gm_error_t *err)
{
    gm_reader_t *rd;
    int rc = gm_reader_open(s, name, &rd, err);
    if (rc)
        return rc;
    size_t n = (size_t)gm_reader_info(rd)->allocs;
    gm_lifetime_t *lt = calloc(n ? n : 1, sizeof *lt);
    if (lt == NULL) {
        gm_reader_close(rd);
        return gm_error_set(err, GM_ENOMEM, "out of memory for %zu lifetimes", n);
    }
    uint64_t index = 0, beyond = UINT64_MAX;
    size_t cap = n ? n : 1;
    const gm_event_t *ev;
    size_t k;
    while ((rc = gm_reader_next(rd, &ev, &k, err)) == 0 && k > 0) {
        for (size_t i = 0; i < k; i++, index++) {
            const gm_event_t *e = &ev[i];
            if (e->op != GM_OP_ALLOC && e->op != GM_OP_FREE)
                continue;
            if (e->id >= n) {
                /* Beyond the summary's count: the reader reports the
                 * mismatch at the end of the trace (or this pass does). */
                if (beyond == UINT64_MAX)
                    beyond = index;
                if (e->id >= cap) {
                    size_t old = cap;
                    if (e->id >= SIZE_MAX / sizeof *lt || GM_VEC_RESERVE(lt, cap, e->id + 1, 1)) {
                        rc = gm_error_set(err, GM_ENOMEM, "out of memory for lifetimes");
                        break;
                    }
                    memset(lt + old, 0, (cap - old) * sizeof *lt);
                }
            }
            if (e->op == GM_OP_ALLOC)
                lt[e->id] = (gm_lifetime_t){e->size, index, GM_LIFETIME_OPEN, e->ts_ns, 0};
            else {
                lt[e->id].end = index;
                lt[e->id].end_ns = e->ts_ns;
            }
        }
        if (rc)
            break;
    }
    gm_reader_close(rd);
    if (rc == 0 && beyond != UINT64_MAX)
        rc = gm_error_set(err, GM_ECORRUPT, "trace '%s': event %llu: allocation id beyond the "
                          "%zu allocations the summary counts", name,
                          (unsigned long long)beyond, n);
    if (rc) {
        free(lt);
        return rc;
    }
    *out = lt;
    *nout = n;
    return 0;
}

int gm_replay_trace(gm_replay_t *r, gm_store_t *s, const char *name, gm_error_t *err)
{
    gm_reader_t *rd;
    int rc = gm_reader_open(s, name, &rd, err);
    if (rc)
        return rc;
    gm_replay_set_empty_cache_tag(r, gm_reader_find_tag(rd, "empty_cache"));
    gm_replay_set_sync_tag(r, gm_reader_find_tag(rd, "synchronize"));
    gm_replay_set_oom_tag(r, gm_reader_find_tag(rd, "oom"));
    if (r->cfg.defrag_at)
        gm_replay_set_defrag_tag(r, gm_reader_find_tag(rd, r->cfg.defrag_at));
    const gm_trace_info_t *info = gm_reader_info(rd);
    gm_trace_context_t ctx = {.name = name, .attrs = info->attrs, .events = info->events};
    gm_layout_t *layout = NULL;
    gm_lifetime_t *lifetimes = NULL;
    rc = gm_store_layout(s, name, &layout, err);
    /* The layout's errors, and those of the lifetimes' pass (which reads
     * the trace as the replay would: the reader's), already name the file
     * and the trace; only running out of memory does not. */
    int prefix = rc == 0 || rc == GM_ENOMEM;
    if (rc == 0 && gm_replay_needs_lifetimes(r)) {
        rc = engine_lifetimes(s, name, &lifetimes, &ctx.nlifetimes, err);
        prefix = rc == GM_ENOMEM;
    }
    ctx.layout = layout;
    ctx.lifetimes = lifetimes;
    if (rc == 0)
        rc = gm_replay_prepare(r, &ctx, err);
    gm_layout_free(layout);
    free(lifetimes);
    if (rc) {
        gm_reader_close(rd);
        if (prefix)
            gm_error_prefix(err, "trace '%s'", name);
        return rc;
    }
    int replay_failed = 0;
    /* Policies on threads: not for one run (nothing to share), nor with
     * device hooks (their context is one for every run). */
    unsigned nworkers = r->cfg.threads < r->nruns ? r->cfg.threads : (unsigned)r->nruns;
    rc = 1;
    if (nworkers > 1 && r->cfg.device.hooks == NULL)
        rc = engine_feed_parallel(r, rd, nworkers, &replay_failed, err);
    if (rc == 1)
        rc = engine_feed_prefetched(r, rd, &replay_failed, err);
    if (replay_failed)
        gm_error_prefix(err, "trace '%s'", name);
    gm_reader_close(rd);
    if (rc == 0)
        rc = gm_replay_finish(r, err);
    return rc;
}
