/*
 * synth/scale_write.c — writing a target of `gmsim scale` (synth/scale.c
 * has the method, steps 4 and 5): the base's events streamed through the
 * store writer with each allocation's predicted size, its attributes, and
 * its starting layout scaled; pre-existing allocations under a count law
 * (synth/scale_counts.c) as many as their law gives at the target.
 */
#include "synth/scale_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "gmsim/layout.h"
#include "base/vec.h"

/* ---- writing --------------------------------------------------------------------- */

/* Attributes of the base that no longer describe the scaled trace. */
static int sc_attr_dropped(const char *key)
{
    static const char *const drop[] = {"seq_len", "batch", "recorded", "dropped_zero_size",
                                       "config", "source", "scaled_from", "scale_laws",
                                       "reconstruction_mismatches", "digest"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
        if (strcmp(key, drop[i]) == 0)
            return 1;
    return 0;
}

/* The JSON written to f (an open_memstream over *buf) stored as attribute
 * key: f closed, *buf freed and NULL.  0, GM_ENOMEM (the stream failed) or
 * the writer's error. */
static int sc_attr_json(gm_writer_t *w, const char *key, FILE *f, char **buf, gm_error_t *err)
{
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? gm_error_set(err, GM_ENOMEM, "out of memory")
                 : gm_writer_attr_json(w, key, *buf, err);
    free(*buf);
    *buf = NULL;
    return rc;
}

static int sc_write_attrs(gm_scale_plan_t *p, gm_writer_t *w, const char *attrs, uint64_t seq,
                          uint64_t batch, gm_error_t *err)
{
    gm_jv_t *root = NULL;
    int rc = gm_json_parse(attrs, strlen(attrs), &root, err);
    if (rc)
        return rc;
    char *buf = NULL;
    size_t len = 0;
    for (size_t i = 0; rc == 0 && i < gm_jv_len(root); i++) {
        const char *key = gm_jv_key_at(root, i);
        if (key == NULL || sc_attr_dropped(key))
            continue;
        FILE *f = open_memstream(&buf, &len);
        if (f == NULL) {
            rc = gm_error_set(err, GM_ENOMEM, "out of memory");
            break;
        }
        gm_json_t j;
        gm_json_init(&j, f, 0);
        gm_json_jv(&j, gm_jv_at(root, i));
        rc = sc_attr_json(w, key, f, &buf, err);
    }
    gm_jv_free(root);
    if (rc)
        return rc;
    /* scaled_from and the laws */
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    gm_json_t j;
    gm_json_init(&j, f, 0);
    gm_json_begin_array(&j);
    for (size_t k = 0; k < p->n; k++) {
        gm_json_begin_object(&j);
        gm_json_key(&j, "trace");
        gm_json_str(&j, p->label[k]);
        if (p->seq[k]) {
            gm_json_key(&j, "seq_len");
            gm_json_u64(&j, p->seq[k]);
        }
        if (p->batch[k]) {
            gm_json_key(&j, "batch");
            gm_json_u64(&j, p->batch[k]);
        }
        gm_json_key(&j, "base");
        gm_json_bool(&j, k == p->base);
        gm_json_end_object(&j);
    }
    gm_json_end_array(&j);
    if ((rc = sc_attr_json(w, GM_ATTR_SCALED_FROM, f, &buf, err)))
        return rc;
    f = open_memstream(&buf, &len);
    if (f == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    gm_json_init(&j, f, 0);
    gm_json_begin_object(&j);
    for (unsigned l = 0; l < GM_SCALE_LAW_COUNT; l++) {
        gm_json_key(&j, sc_law_names[l]);
        gm_json_u64(&j, p->rep.law_allocs[l]);
    }
    gm_json_end_object(&j);
    if ((rc = sc_attr_json(w, GM_ATTR_SCALE_LAWS, f, &buf, err)) ||
        (rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "scale", err)))
        return rc;
    if (seq && (rc = gm_writer_attr_int(w, GM_ATTR_SEQ_LEN, (int64_t)seq, err)))
        return rc;
    if (batch && (rc = gm_writer_attr_int(w, GM_ATTR_BATCH, (int64_t)batch, err)))
        return rc;
    return 0;
}

static uint64_t sc_round512(uint64_t x)
{
    return (x + 511) / 512 * 512;
}

#define SC_DROPPED UINT64_MAX

/* The base's layout scaled (see the file comment); *out NULL when the base
 * has none.  newid (NULL: the base's ids): each allocation's id in the
 * target, SC_DROPPED for one a count law leaves out. */
static int sc_scale_layout(gm_scale_plan_t *p, const uint64_t *nsize, const uint64_t *newid,
                           gm_layout_t **out, gm_error_t *err)
{
    *out = NULL;
    gm_layout_t *l = NULL;
    size_t b = p->base;
    int rc = gm_store_layout(p->store[b], p->trace[b], &l, err);
    if (rc || l == NULL)
        return rc;
    gm_layout_t *nl = calloc(1, sizeof *nl);
    if (nl == NULL)
        goto nomem;
    nl->segments = calloc(l->nsegments ? l->nsegments : 1, sizeof *nl->segments);
    nl->blocks = calloc(2 * l->nblocks + l->nsegments + 1, sizeof *nl->blocks);
    if (nl->segments == NULL || nl->blocks == NULL)
        goto nomem;
    int64_t shift = 0;
    for (size_t si = 0; si < l->nsegments; si++) {
        const gm_layout_segment_t *s = &l->segments[si];
        gm_layout_segment_t *d = &nl->segments[nl->nsegments];
        *d = *s;
        d->first_block = nl->nblocks;
        d->nblocks = 0;
        uint64_t old_alloc = 0, new_alloc = 0;
        for (size_t k = 0; k < s->nblocks; k++) {
            const gm_layout_block_t *x = &l->blocks[s->first_block + k];
            if (x->id != GM_LAYOUT_FREE)
                old_alloc += x->size;
        }
        if (old_alloc == 0) { /* a wholly free segment: cache, left out */
            shift -= (int64_t)s->size;
            continue;
        }
        /* allocated blocks resized; those that do not fit a small segment
         * left out (in order: the first that do not fit) */
        uint64_t cap = s->pool == GM_POOL_SMALL && !s->expandable ? s->size : UINT64_MAX;
        for (size_t k = 0; k < s->nblocks; k++) {
            const gm_layout_block_t *x = &l->blocks[s->first_block + k];
            gm_layout_block_t *y = &nl->blocks[nl->nblocks];
            if (x->id == GM_LAYOUT_FREE) {
                *y = *x;
                nl->nblocks++;
                continue;
            }
            if ((uint64_t)x->id >= p->nallocs)
                continue; /* names no allocation of the trace: drop it */
            if (newid != NULL && newid[x->id] == SC_DROPPED)
                continue; /* fewer at the target (a count law) */
            uint64_t req = nsize[x->id];
            uint64_t slack = x->size > sc_round512(x->requested) ? x->size - sc_round512(x->requested) : 0;
            uint64_t sz = sc_round512(req) + slack;
            if (new_alloc + sz > cap)
                continue;
            y->id = newid != NULL ? (int64_t)newid[x->id] : x->id;
            y->requested = req;
            y->size = sz;
            new_alloc += sz;
            nl->nblocks++;
        }
        /* free space: grown as the segment's allocations grew */
        double ratio = (double)new_alloc / (double)old_alloc;
        uint64_t total = new_alloc;
        size_t lastfree = SIZE_MAX;
        size_t w = d->first_block;
        for (size_t k = d->first_block; k < nl->nblocks; k++) {
            gm_layout_block_t y = nl->blocks[k];
            if (y.id == GM_LAYOUT_FREE) {
                uint64_t fs = cap != UINT64_MAX ? y.size : sc_round512((uint64_t)((double)y.size * ratio));
                if (fs == 0)
                    continue;
                y.size = fs;
                total += fs;
                if (lastfree != SIZE_MAX && lastfree == w - 1) { /* merge */
                    nl->blocks[lastfree].size += fs;
                    continue;
                }
                lastfree = w;
            }
            nl->blocks[w++] = y;
        }
        nl->nblocks = w;
        /* the segment's size: small ones keep theirs, the free space
         * adjusted to tile it; large ones round up to 2 MiB */
        uint64_t size = cap != UINT64_MAX ? s->size
                                          : (total + SC_ROUND_LARGE - 1) / SC_ROUND_LARGE * SC_ROUND_LARGE;
        if (size == 0)
            size = SC_ROUND_LARGE;
        if (total > size) { /* small segment: free space shrinks to fit */
            uint64_t excess = total - size;
            for (size_t k = nl->nblocks; k-- > d->first_block && excess > 0;) {
                gm_layout_block_t *y = &nl->blocks[k];
                if (y->id != GM_LAYOUT_FREE)
                    continue;
                uint64_t cut = y->size < excess ? y->size : excess;
                y->size -= cut;
                excess -= cut;
            }
            total = size;
            /* drop emptied free blocks */
            size_t ww = d->first_block;
            for (size_t k = d->first_block; k < nl->nblocks; k++)
                if (nl->blocks[k].id != GM_LAYOUT_FREE || nl->blocks[k].size > 0)
                    nl->blocks[ww++] = nl->blocks[k];
            nl->nblocks = ww;
        }
        if (total < size) {
            uint64_t rest = size - total;
            if (nl->nblocks > d->first_block && nl->blocks[nl->nblocks - 1].id == GM_LAYOUT_FREE)
                nl->blocks[nl->nblocks - 1].size += rest;
            else
                nl->blocks[nl->nblocks++] = (gm_layout_block_t){0, rest, 0, GM_LAYOUT_FREE};
        }
        /* offsets */
        uint64_t off = 0;
        for (size_t k = d->first_block; k < nl->nblocks; k++) {
            nl->blocks[k].offset = off;
            off += nl->blocks[k].size;
        }
        d->nblocks = nl->nblocks - d->first_block;
        d->size = size;
        d->address = (uint64_t)((int64_t)s->address + shift);
        shift += (int64_t)size - (int64_t)s->size;
        nl->nsegments++;
    }
    gm_layout_free(l);
    if ((rc = gm_layout_validate(nl, err))) {
        gm_error_prefix(err, "the scaled layout");
        gm_layout_free(nl);
        return rc;
    }
    *out = nl;
    return 0;
nomem:
    gm_layout_free(l);
    gm_layout_free(nl);
    return gm_error_set(err, GM_ENOMEM, "out of memory");
}

#define SC_UNMAPPED UINT32_MAX

/* A cache of interned indices, base's → the writer's. */
typedef struct sc_map {
    uint32_t *v;
    size_t n;
} sc_map_t;

static int sc_map_get(sc_map_t *m, uint32_t i, uint32_t **slot)
{
    size_t had = m->n;
    if (GM_VEC_RESERVE(m->v, m->n, (size_t)i + 1, 64))
        return -1;
    for (size_t k = had; k < m->n; k++)
        m->v[k] = SC_UNMAPPED;
    *slot = &m->v[i];
    return 0;
}

enum { SC_STREAM, SC_TAG, SC_FRAMES };

/* *id, the base's index of a stream, tag or frames text (kind), made the
 * new trace's: written to w on its first use, remembered in m.  0,
 * GM_ENOMEM or the writer's error. */
static int sc_remap(gm_reader_t *r, gm_writer_t *w, sc_map_t *m, int kind, uint32_t *id,
                    gm_error_t *err)
{
    uint32_t *slot;
    if (sc_map_get(m, *id, &slot))
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    if (*slot == SC_UNMAPPED) {
        int rc;
        if (kind == SC_STREAM) {
            rc = gm_writer_stream(w, gm_reader_stream(r, *id), slot, err);
        } else {
            const char *text = kind == SC_TAG ? gm_reader_tag(r, *id) : gm_reader_frames(r, *id);
            rc = kind == SC_TAG ? gm_writer_tag(w, text ? text : "", slot, err)
                                : gm_writer_frames(w, text ? text : "", slot, err);
        }
        if (rc)
            return rc;
    }
    *id = *slot;
    return 0;
}

int gm_scale_write(gm_scale_plan_t *p, uint64_t seq, uint64_t batch, gm_store_t *dst,
                   const char *name, unsigned flags, gm_error_t *err)
{
    int rc = gm_scale_check_target(p, seq, batch, err);
    if (rc)
        return rc;
    size_t b = p->base;
    if (seq == 0)
        seq = p->seq[b];
    if (batch == 0)
        batch = p->batch[b];
    uint64_t *nsize = malloc((p->nallocs ? p->nallocs : 1) * sizeof *nsize);
    if (nsize == NULL)
        return gm_error_set(err, GM_ENOMEM, "out of memory");
    for (uint64_t i = 0; i < p->nallocs; i++) {
        if ((rc = gm_scale_predict(p, i, seq, batch, NULL, NULL, NULL, &nsize[i], err))) {
            free(nsize);
            return rc;
        }
    }
    /* count laws: each group's count at the target, the ids of the base's
     * allocations in the target and of the copies added after each
     * group's last member (xid[xoff[g] + j]) */
    uint64_t *ct = NULL, *newid = NULL, *xid = NULL;
    size_t *xoff = NULL;
    gm_layout_t *layout = NULL;
    gm_reader_t *r = NULL;
    gm_writer_t *w = NULL;
    sc_map_t streams = {0}, tags = {0}, frames = {0};
    if (p->ncounts > 0) {
        ct = malloc(p->ncounts * sizeof *ct);
        xoff = malloc((p->ncounts + 1) * sizeof *xoff);
        newid = malloc(p->nallocs * sizeof *newid);
        if (ct == NULL || xoff == NULL || newid == NULL)
            goto nomem;
        xoff[0] = 0;
        for (size_t g = 0; g < p->ncounts; g++) {
            if ((rc = sc_count_at(p, g, seq, batch, &ct[g], err)))
                goto done;
            size_t n = p->counts[g].n;
            xoff[g + 1] = xoff[g] + (ct[g] > n ? ct[g] - n : 0);
        }
        if ((xid = malloc((xoff[p->ncounts] ? xoff[p->ncounts] : 1) * sizeof *xid)) == NULL)
            goto nomem;
        uint64_t next = 0;
        for (uint64_t i = 0; i < p->nallocs; i++) {
            uint32_t g = p->cgrp[i];
            if (g != UINT32_MAX && p->crank[i] >= ct[g]) {
                newid[i] = SC_DROPPED;
                continue;
            }
            newid[i] = next++;
            if (g != UINT32_MAX && i == p->counts[g].last)
                for (size_t j = xoff[g]; j < xoff[g + 1]; j++)
                    xid[j] = next++;
        }
    }
    if ((rc = sc_scale_layout(p, nsize, newid, &layout, err)))
        goto done;
    if ((rc = gm_reader_open(p->store[b], p->trace[b], &r, err)))
        goto done;
    if ((rc = gm_writer_begin(dst, name, flags, &w, err)))
        goto done;
    if ((rc = sc_write_attrs(p, w, gm_reader_info(r)->attrs, seq, batch, err)))
        goto done;
    /* the base's streams and tags interned in its order, so that indices
     * (the layout's stream_index among them) stay the same */
    for (int kind = SC_STREAM; kind <= SC_TAG; kind++) {
        uint32_t n = kind == SC_STREAM ? gm_reader_stream_count(r) : gm_reader_tag_count(r);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t id = i;
            if ((rc = sc_remap(r, w, kind == SC_STREAM ? &streams : &tags, kind, &id, err)))
                goto done;
        }
    }
    for (;;) {
        const gm_event_t *ev;
        size_t n;
        if ((rc = gm_reader_next(r, &ev, &n, err)))
            goto done;
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            gm_event_t e = ev[i];
            if (e.op == GM_OP_SEG_ALLOC || e.op == GM_OP_SEG_FREE || e.op == GM_OP_SEG_MAP ||
                e.op == GM_OP_SEG_UNMAP)
                continue;
            if ((e.op == GM_OP_ALLOC || e.op == GM_OP_FREE) &&
                (rc = sc_remap(r, w, &streams, SC_STREAM, &e.stream, err)))
                goto done;
            uint64_t base_id = e.id;
            if ((e.op == GM_OP_ALLOC || (e.op == GM_OP_FREE && newid != NULL)) &&
                e.id >= p->nallocs) {
                rc = gm_error_set(err, GM_ECORRUPT, "'%s': allocation %" PRIu64
                                  " beyond the %" PRIu64 " loaded",
                                  p->label[b], e.id, p->nallocs);
                goto done;
            }
            if ((e.op == GM_OP_ALLOC || e.op == GM_OP_FREE) && newid != NULL) {
                if (newid[e.id] == SC_DROPPED)
                    continue;
                e.id = newid[e.id];
            }
            if (e.op == GM_OP_ALLOC) {
                e.size = nsize[base_id];
                if (e.frames && (rc = sc_remap(r, w, &frames, SC_FRAMES, &e.frames, err)))
                    goto done;
            } else if (e.op == GM_OP_MARK &&
                       (rc = sc_remap(r, w, &tags, SC_TAG, &e.tag, err))) {
                goto done;
            }
            if ((rc = gm_writer_add(w, &e, err)))
                goto done;
            uint32_t g = newid != NULL && (e.op == GM_OP_ALLOC || e.op == GM_OP_FREE)
                             ? p->cgrp[base_id]
                             : UINT32_MAX;
            if (g == UINT32_MAX || xoff[g] == xoff[g + 1])
                continue;
            /* the copies a count law adds: made after the group's member
             * of the largest id, each freed where the member it copies is */
            const sc_count_t *cg = &p->counts[g];
            if (e.op == GM_OP_ALLOC && base_id != cg->last)
                continue;
            for (size_t j = 0; j < xoff[g + 1] - xoff[g]; j++) {
                size_t tr = sc_count_template(cg, j);
                if (e.op == GM_OP_FREE && tr != p->crank[base_id])
                    continue;
                gm_event_t x = e;
                x.id = xid[xoff[g] + j];
                if (e.op == GM_OP_ALLOC)
                    x.size = nsize[p->cmem[cg->first + tr]];
                if ((rc = gm_writer_add(w, &x, err)))
                    goto done;
            }
        }
    }
    if (layout != NULL && (rc = gm_writer_layout(w, layout, err)))
        goto done;
    rc = gm_writer_finish(w, err);
    w = NULL;
    goto done;
nomem:
    rc = gm_error_set(err, GM_ENOMEM, "out of memory");
done:
    gm_writer_abort(w);
    gm_reader_close(r);
    gm_layout_free(layout);
    free(streams.v);
    free(tags.v);
    free(frames.v);
    free(nsize);
    free(ct);
    free(xoff);
    free(newid);
    free(xid);
    return rc;
}
