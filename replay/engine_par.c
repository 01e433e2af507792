/*
 * replay/engine_par.c — the replay engine's feed with policies on threads
 * (gm_replay_config_t.threads > 1); the engine's state is replay/engine.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "replay/engine.h"

/*
 * Policies on threads (gm_replay_config_t.threads > 1, several runs).  The
 * calling thread reads: it decodes each chunk into a free entry of a ring
 * of ENGINE_RING entries, runs pass 1 over it (block by block, as
 * gm_replay_feed does) into the entry's own per-event arrays, and publishes
 * it.  Each of the W workers takes every entry in order and runs pass 2 of
 * its own runs (run k on worker k mod W) over it, block-major as the serial
 * feed does; the entry is free again when the last worker is done with it.
 * A run's state (its policy, device, blocks, metrics, timeline) is touched
 * by its worker alone; pass 1's state (slots, the id map, requested bytes)
 * by the reader alone; what workers read of the engine (configuration,
 * tags, context) does not change once the feed has begun.  The reader
 * waits only for a free entry (the ring's bound), a worker only for the
 * next entry: a slow policy holds the others back by at most the ring.
 * Progress is reported by the calling thread, once per chunk every worker
 * is done with, in order.
 *
 * Errors are the serial feed's: it runs, per block, pass 1 then each run in
 * turn and stops at the first error, so each error here gets the key
 * (first event of its block, stage) with stage -2 for a read error at the
 * start of a chunk, -1 for pass 1 and k for run k, and the least key wins.
 * A worker stops running its policies at its first error (the errors after
 * it in its own order have greater keys) but keeps taking entries, so the
 * reader never waits on it; the reader stops once an error is known before
 * its next chunk.
 */
#define ENGINE_RING 4

typedef struct engine_entry {
    gm_event_t *ev;
    uint32_t *slot;
    uint64_t *req;
    uint32_t *stream;
    size_t n;         /* events published (pass 1 succeeded on them) */
    uint64_t base;    /* trace index of ev[0] */
    uint32_t nslots;  /* after pass 1 of ev */
    unsigned pending; /* workers not done with it; 0: free for the reader */
} engine_entry_t;

typedef struct engine_par {
    gm_replay_t *r;
    engine_entry_t ring[ENGINE_RING];
    unsigned nworkers;
    /* under mu: */
    uint64_t published; /* entries published */
    uint64_t released;  /* entries every worker is done with (in order) */
    int end;            /* the reader publishes no more */
    int have_err;       /* the first error in the serial order so far: */
    uint64_t err_block;
    int err_stage;
    int err_rc;
    gm_error_t err;
    pthread_mutex_t mu;
    pthread_cond_t cv_reader, cv_worker;
} engine_par_t;

typedef struct engine_worker {
    engine_par_t *par;
    unsigned w;
    pthread_t thread;
    gm_error_t err;
} engine_worker_t;

/* Keep error rc (message e) of key (block, stage) if it comes before the
 * one kept.  Takes par->mu. */
static void engine_par_fail(engine_par_t *par, uint64_t block, int stage, int rc,
                            const gm_error_t *e)
{
    pthread_mutex_lock(&par->mu);
    if (!par->have_err || block < par->err_block ||
        (block == par->err_block && stage < par->err_stage)) {
        par->have_err = 1;
        par->err_block = block;
        par->err_stage = stage;
        par->err_rc = rc;
        par->err = *e;
    }
    pthread_mutex_unlock(&par->mu);
}

static void *engine_worker_main(void *arg)
{
    engine_worker_t *wk = arg;
    engine_par_t *par = wk->par;
    gm_replay_t *r = par->r;
    int failed = 0;
    for (uint64_t seq = 0;; seq++) {
        pthread_mutex_lock(&par->mu);
        while (par->published <= seq && !par->end)
            pthread_cond_wait(&par->cv_worker, &par->mu);
        int have = par->published > seq;
        int have_err = par->have_err;
        uint64_t err_block = par->err_block;
        pthread_mutex_unlock(&par->mu);
        if (!have)
            break;
        engine_entry_t *e = &par->ring[seq % ENGINE_RING];
        for (size_t off = 0; !failed && off < e->n; off += ENGINE_BLOCK) {
            uint64_t block = e->base + off;
            if (have_err && block > err_block)
                break; /* any error here would come after the one known */
            size_t m = e->n - off < ENGINE_BLOCK ? e->n - off : ENGINE_BLOCK;
            engine_view_t v = {e->ev + off,  m,           block,          e->nslots,
                               e->slot + off, e->req + off, e->stream + off, NULL};
            for (size_t k = wk->w; k < r->nruns; k += par->nworkers) {
                int rc = engine_pass2(r, r->runs[k], &v, &wk->err);
                if (rc) {
                    engine_par_fail(par, block, (int)k, rc, &wk->err);
                    failed = 1;
                    break;
                }
            }
        }
        pthread_mutex_lock(&par->mu);
        if (--e->pending == 0) {
            par->released++;
            pthread_cond_signal(&par->cv_reader);
        }
        pthread_mutex_unlock(&par->mu);
    }
    return NULL;
}

static void engine_par_free(engine_par_t *par)
{
    for (size_t i = 0; i < ENGINE_RING; i++) {
        free(par->ring[i].ev);
        free(par->ring[i].slot);
        free(par->ring[i].req);
        free(par->ring[i].stream);
    }
    free(par);
}

/* The ring's entries, the lock and the workers, started; NULL when any
 * cannot be had (the caller then feeds on one thread: the same result). */
static engine_par_t *engine_par_start(gm_replay_t *r, unsigned nworkers, engine_worker_t *wk)
{
    engine_par_t *par = calloc(1, sizeof *par);
    if (par == NULL)
        return NULL;
    par->r = r;
    par->nworkers = nworkers;
    int ok = 1;
    for (size_t i = 0; i < ENGINE_RING; i++) {
        engine_entry_t *e = &par->ring[i];
        e->ev = malloc(GM_CHUNK_EVENTS * sizeof *e->ev);
        e->slot = malloc(GM_CHUNK_EVENTS * sizeof *e->slot);
        e->req = malloc(GM_CHUNK_EVENTS * sizeof *e->req);
        e->stream = malloc(GM_CHUNK_EVENTS * sizeof *e->stream);
        ok &= e->ev && e->slot && e->req && e->stream;
    }
    if (!ok || pthread_mutex_init(&par->mu, NULL) != 0) {
        engine_par_free(par);
        return NULL;
    }
    if (pthread_cond_init(&par->cv_reader, NULL) != 0) {
        pthread_mutex_destroy(&par->mu);
        engine_par_free(par);
        return NULL;
    }
    if (pthread_cond_init(&par->cv_worker, NULL) != 0) {
        pthread_cond_destroy(&par->cv_reader);
        pthread_mutex_destroy(&par->mu);
        engine_par_free(par);
        return NULL;
    }
    unsigned started = 0;
    for (; started < nworkers; started++) {
        wk[started] = (engine_worker_t){.par = par, .w = started};
        if (pthread_create(&wk[started].thread, NULL, engine_worker_main, &wk[started]) != 0)
            break;
    }
    if (started < nworkers) {
        pthread_mutex_lock(&par->mu);
        par->end = 1; /* nothing was published: they leave at once */
        pthread_cond_broadcast(&par->cv_worker);
        pthread_mutex_unlock(&par->mu);
        for (unsigned i = 0; i < started; i++)
            pthread_join(wk[i].thread, NULL);
        pthread_cond_destroy(&par->cv_worker);
        pthread_cond_destroy(&par->cv_reader);
        pthread_mutex_destroy(&par->mu);
        engine_par_free(par);
        return NULL;
    }
    return par;
}

/* Report the chunks released since *reported (their entries not reused
 * yet), in order, unless the replay has failed. */
static void engine_par_progress(gm_replay_t *r, engine_par_t *par, uint64_t *reported,
                                uint64_t released, int have_err, uint64_t total)
{
    for (; *reported < released; ++*reported) {
        const engine_entry_t *e = &par->ring[*reported % ENGINE_RING];
        if (r->cfg.progress && !have_err)
            r->cfg.progress(r->cfg.progress_ctx, e->base + e->n, total);
    }
}

/* The feed of engine_feed_prefetched with the runs on nworkers threads (see
 * above).  1 when the threads could not be had (nothing read yet: the
 * caller feeds on one thread); otherwise as engine_feed_prefetched. */
int engine_feed_parallel(gm_replay_t *r, gm_reader_t *rd, unsigned nworkers,
                         int *replay_failed, gm_error_t *err)
{
    engine_worker_t *wk = calloc(nworkers, sizeof *wk);
    engine_par_t *par = wk ? engine_par_start(r, nworkers, wk) : NULL;
    if (par == NULL) {
        free(wk);
        return 1;
    }
    uint64_t total = gm_reader_info(rd)->events;
    uint64_t reported = 0;
    for (uint64_t seq = 0;; seq++) {
        engine_entry_t *e = &par->ring[seq % ENGINE_RING];
        pthread_mutex_lock(&par->mu);
        while (e->pending)
            pthread_cond_wait(&par->cv_reader, &par->mu);
        uint64_t released = par->released;
        int have_err = par->have_err;
        int stop = have_err && par->err_block < r->events;
        pthread_mutex_unlock(&par->mu);
        engine_par_progress(r, par, &reported, released, have_err, total);
        if (stop)
            break;
        gm_error_t e_err = {0};
        size_t n = 0;
        int rc = gm__reader_next_into(rd, e->ev, &n, &e_err);
        if (rc) {
            engine_par_fail(par, r->events, -2, rc, &e_err);
            break;
        }
        if (n == 0)
            break;
        size_t good = 0;
        rc = engine_start(r, &e_err);
        for (size_t off = 0; rc == 0 && off < n; off += ENGINE_BLOCK) {
            size_t m = n - off < ENGINE_BLOCK ? n - off : ENGINE_BLOCK;
            rc = engine_pass1(r, e->ev + off, m, e->slot + off, e->req + off, e->stream + off,
                              &e_err);
            if (rc == 0) {
                r->events += m;
                good += m;
            }
        }
        if (rc)
            engine_par_fail(par, r->events, -1, rc, &e_err);
        e->n = good;
        e->base = r->events - good;
        e->nslots = r->nslots;
        e->pending = nworkers;
        pthread_mutex_lock(&par->mu);
        par->published = seq + 1;
        pthread_cond_broadcast(&par->cv_worker);
        pthread_mutex_unlock(&par->mu);
        if (rc)
            break;
    }
    pthread_mutex_lock(&par->mu);
    par->end = 1;
    pthread_cond_broadcast(&par->cv_worker);
    pthread_mutex_unlock(&par->mu);
    for (unsigned i = 0; i < nworkers; i++)
        pthread_join(wk[i].thread, NULL);
    engine_par_progress(r, par, &reported, par->released, par->have_err, total);
    int rc = 0;
    if (par->have_err) {
        rc = par->err_rc;
        if (err)
            *err = par->err;
        *replay_failed = par->err_stage != -2;
        if (*replay_failed)
            r->failed = 1;
    }
    if (r->events)
        r->position = r->events - 1;
    pthread_cond_destroy(&par->cv_worker);
    pthread_cond_destroy(&par->cv_reader);
    pthread_mutex_destroy(&par->mu);
    engine_par_free(par);
    free(wk);
    return rc;
}
