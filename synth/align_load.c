/*
 * synth/align_load.c — a trace's allocation table for the alignment
 * (gm_align_trace_load) and the keys of its allocations: the whole
 * stack's, hashed as the table is read, and the call site's
 * (gm_align_site_keys), hashed only when an alignment by whole stacks
 * paired poorly (synth/align.c has the method).
 */
#include "gmsim/align.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/vec.h"

#define AL_FNV_BASIS UINT64_C(0xcbf29ce484222325)

static uint64_t al_hash(const char *s, uint64_t h)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/* Line [p, eol) of a frames text ("dir/file:line:name"): where its file's
 * name begins (after the directories), and its line number ":digits"
 * [*cut, *cut_end) (NULL when it has none). */
static const unsigned char *al_frame_parts(const unsigned char *p, const unsigned char *eol,
                                           const unsigned char **cut,
                                           const unsigned char **cut_end)
{
    *cut = *cut_end = NULL;
    /* the last ":digits:" of the line is its line number */
    for (const unsigned char *q = p; q < eol; q++) {
        if (*q != ':')
            continue;
        const unsigned char *d = q + 1;
        while (d < eol && *d >= '0' && *d <= '9')
            d++;
        if (d > q + 1 && d < eol && *d == ':') {
            *cut = q;
            *cut_end = d;
        }
    }
    const unsigned char *start = p;
    for (const unsigned char *q = p; q < (*cut ? *cut : eol); q++)
        if (*q == '/')
            start = q + 1;
    return start;
}

/*
 * The hash of a frames text ("file:line:name" per line, the innermost
 * first) without its line numbers and the file's directories: a script
 * edited between two captures moves lines, not calls, and a checkout
 * moved moves paths.  site: without the frames of the outermost frame's
 * file (the script: its functions and their callers, which an edit of the
 * script changes, e.g. moving the loop into a function); the innermost
 * frame alone when every frame is the script's.
 */
static uint64_t al_hash_frames(const char *s, int site)
{
    uint64_t h = AL_FNV_BASIS;
    const unsigned char *text = (const unsigned char *)s, *p;
    const unsigned char *outer = NULL, *outer_end = NULL, *cut, *cut_end;
    int others = 0;
    if (site) {
        const unsigned char *last = text;
        for (p = text; *p; p++)
            if (*p == '\n' && p[1])
                last = p + 1;
        const unsigned char *eol = last;
        while (*eol && *eol != '\n')
            eol++;
        outer = al_frame_parts(last, eol, &cut, &cut_end);
        outer_end = cut ? cut : eol;
    }
    for (int pass = 0; pass < 2; pass++) {
        p = text;
        int taken = 0;
        while (*p) {
            const unsigned char *eol = p;
            while (*eol && *eol != '\n')
                eol++;
            const unsigned char *start = al_frame_parts(p, eol, &cut, &cut_end);
            const unsigned char *fend = cut ? cut : eol;
            int skip = 0;
            if (site) {
                int same = fend - start == outer_end - outer &&
                           memcmp(start, outer, (size_t)(fend - start)) == 0;
                skip = others ? same : taken > 0;
                if (pass == 0) {
                    others |= !same;
                    p = *eol ? eol + 1 : eol;
                    continue;
                }
            }
            if (!skip) {
                taken++;
                for (const unsigned char *q = start; q < eol; q++) {
                    if (cut != NULL && q >= cut && q < cut_end)
                        continue;
                    h ^= *q;
                    h *= UINT64_C(0x100000001b3);
                }
                h ^= '\n';
                h *= UINT64_C(0x100000001b3);
            }
            p = *eol ? eol + 1 : eol;
        }
        if (!site)
            break;
    }
    return h;
}

void gm_align_trace_free(gm_align_trace_t *t)
{
    if (t == NULL)
        return;
    free(t->name);
    free(t->allocs);
    for (size_t i = 0; i < t->nmarks; i++)
        free(t->marks[i].name);
    free(t->marks);
    for (uint32_t i = 0; i < t->nframes; i++)
        free(t->frames[i]);
    free(t->frames);
    free(t);
}

/* The hash of frames index f (texts copied into t as met); 0 for none. */
static int al_frames_key(gm_align_trace_t *t, const gm_reader_t *r, uint32_t f,
                         uint64_t **hashes, size_t *cap, uint64_t *out)
{
    if (f == 0) {
        *out = 0;
        return 0;
    }
    if (f >= t->nframes) {
        size_t fc = *cap;
        if (GM_VEC_RESERVE(*hashes, fc, (size_t)f + 1, 64))
            return -1;
        size_t tc = *cap;
        if (GM_VEC_RESERVE(t->frames, tc, (size_t)f + 1, 64))
            return -1;
        for (size_t i = t->nframes; i <= f; i++) {
            t->frames[i] = NULL;
            (*hashes)[i] = 0;
        }
        *cap = fc < tc ? fc : tc;
        t->nframes = f + 1;
    }
    if (t->frames[f] == NULL) {
        const char *text = gm_reader_frames(r, f);
        if (text == NULL)
            text = "";
        if ((t->frames[f] = strdup(text)) == NULL)
            return -1;
        (*hashes)[f] = al_hash_frames(text, 0) | 1u;
    }
    *out = (*hashes)[f];
    return 0;
}

int gm_align_trace_load(gm_store_t *s, const char *name, gm_align_trace_t **out,
                        gm_error_t *err)
{
    *out = NULL;
    gm_reader_t *r;
    int rc = gm_reader_open(s, name, &r, err);
    if (rc)
        return rc;
    gm_align_trace_t *t = calloc(1, sizeof *t);
    uint64_t *hashes = NULL;
    size_t hcap = 0, acap = 0, mcap = 0;
    if (t == NULL || (t->name = strdup(name)) == NULL)
        goto nomem;
    const gm_trace_info_t *info = gm_reader_info(r);
    if (GM_VEC_RESERVE(t->allocs, acap, info->allocs + 1, 64))
        goto nomem;
    uint64_t index = 0;
    for (;;) {
        const gm_event_t *ev;
        size_t n;
        if ((rc = gm_reader_next(r, &ev, &n, err)))
            goto fail;
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++, index++) {
            const gm_event_t *e = &ev[i];
            if (e->op == GM_OP_ALLOC) {
                if (e->id != t->nallocs) {
                    rc = gm_error_set(err, GM_ECORRUPT,
                                      "trace '%s': event %llu: allocation id %llu out of order",
                                      name, (unsigned long long)index,
                                      (unsigned long long)e->id);
                    goto fail;
                }
                if (GM_VEC_RESERVE(t->allocs, acap, t->nallocs + 1, 64))
                    goto nomem;
                uint64_t fk;
                if (al_frames_key(t, r, e->frames, &hashes, &hcap, &fk))
                    goto nomem;
                gm_align_alloc_t *a = &t->allocs[t->nallocs++];
                a->size = e->size;
                a->event = index;
                a->key = gm__fmix64(fk ^ gm__fmix64((uint64_t)e->stream + 1));
                a->stream = e->stream;
                a->frames = e->frames;
                a->mark = (uint32_t)t->nmarks;
                a->preexisting = (e->flags & GM_EVENT_PREEXISTING) != 0;
                a->free_event = UINT64_MAX;
            } else if (e->op == GM_OP_FREE) {
                if (e->id < t->nallocs)
                    t->allocs[e->id].free_event = index;
            } else if (e->op == GM_OP_MARK) {
                if (GM_VEC_RESERVE(t->marks, mcap, t->nmarks + 1, 64))
                    goto nomem;
                const char *tag = gm_reader_tag(r, e->tag);
                if (tag == NULL)
                    tag = "";
                gm_align_mark_t *m = &t->marks[t->nmarks];
                m->event = index;
                m->key = gm__fmix64(al_hash(tag, AL_FNV_BASIS) ^ UINT64_C(0x6d61726b));
                if ((m->name = strdup(tag)) == NULL)
                    goto nomem;
                t->nmarks++;
            }
        }
    }
    t->events = index;
    free(hashes);
    gm_reader_close(r);
    *out = t;
    return 0;
nomem:
    rc = gm_error_set(err, GM_ENOMEM, "out of memory");
fail:
    free(hashes);
    gm_reader_close(r);
    gm_align_trace_free(t);
    return rc;
}

int gm_align_site_keys(const gm_align_trace_t *t, uint64_t *site)
{
    uint64_t *h = calloc(t->nframes ? t->nframes : 1, sizeof *h);
    if (h == NULL)
        return -1;
    for (size_t i = 0; i < t->nallocs; i++) {
        const gm_align_alloc_t *a = &t->allocs[i];
        uint64_t sk = 0;
        if (a->frames != 0 && a->frames < t->nframes) {
            if (h[a->frames] == 0)
                h[a->frames] = al_hash_frames(t->frames[a->frames] ? t->frames[a->frames] : "",
                                              1) | 1u;
            sk = h[a->frames];
        }
        site[i] = gm__fmix64(sk ^ gm__fmix64((uint64_t)a->stream + 1));
    }
    free(h);
    return 0;
}
