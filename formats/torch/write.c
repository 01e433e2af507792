/*
 * formats/torch/write.c — the PyTorch snapshot importer's writer (step 4
 * in formats/torch/snapshot.c): one device's trace through the store's
 * writer: its attributes, the starting layout, the pre-existing ALLOCs,
 * then the entries in order with the marks (oom, empty_cache, external
 * annotations).
 */
#include "formats/torch/torch.h"
#include "base/bits.h"

#include <stdio.h>

/* ---- writing one device's trace --------------------------------------------------------- */

int gm__tk_note_cmp(const void *a, const void *b)
{
    const tk_note_t *x = a, *y = b;
    int c = gm__cmp_u64(x->ts_ns, y->ts_ns);
    return c ? c : gm__cmp_u64(x->order, y->order);
}

/* Same non-empty frames (frame dicts are shared nodes). */
static int tk_same_frames(const gm__pk_t *a, const gm__pk_t *b)
{
    if (a == NULL || b == NULL || a->n != b->n)
        return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->v.items[i] != b->v.items[i])
            return 0;
    return 1;
}

static int tk_frames_name(const tk_keys_t *k, const gm__pk_t *fr, const gm__pk_t *name)
{
    if (fr == NULL || name == NULL)
        return 0;
    for (uint32_t i = 0; i < fr->n; i++)
        if (tk_get(fr->v.items[i], k->name) == name)
            return 1;
    return 0;
}

/* Whether the run of segment frees [i, j) is the allocator's own (an OOM
 * next to it, or the same call retrying a segment allocation right after). */
static int tk_run_explained(const tk_dev_t *dv, size_t i, size_t j)
{
    const tk_entry_t *e = dv->e;
    if ((i > 0 && e[i - 1].act == TK_OOM) || (j < dv->ne && e[j].act == TK_OOM))
        return 1;
    if (j < dv->ne && (e[j].act == TK_SEG_ALLOC || e[j].act == TK_SEG_MAP) &&
        tk_same_frames(e[i].frames, e[j].frames) &&
        !tk_frames_name(&dv->s->k, e[i].frames, dv->s->k.empty_cache))
        return 1;
    return 0;
}

/* Stream handle → writer index with a one-entry cache. */
typedef struct tk_streams {
    uint64_t last;
    uint32_t index;
    int have;
} tk_streams_t;

static int tk_stream(gm_writer_t *w, tk_streams_t *c, uint64_t handle, uint32_t *index,
                     gm_error_t *err)
{
    if (c->have && c->last == handle) {
        *index = c->index;
        return 0;
    }
    int rc = gm_writer_stream(w, handle, index, err);
    if (rc == 0) {
        c->have = 1;
        c->last = handle;
        c->index = *index;
    }
    return rc;
}

static int tk_attrs(tk_dev_t *dv, gm_writer_t *w, uint64_t npre)
{
    tk_snap_t *s = dv->s;
    gm_error_t *err = s->err;
    char buf[512];
    int rc;
    if ((rc = gm_writer_attr_str(w, GM_ATTR_SOURCE, "torch_snapshot", err)) ||
        (rc = gm_writer_attr_int(w, GM_ATTR_DEVICE, (int64_t)dv->device, err)))
        return rc;
    if (s->settings_json != NULL &&
        (rc = gm_writer_attr_json(w, GM_ATTR_ALLOCATOR_SETTINGS, s->settings_json, err)))
        return rc;
    if (s->pad && ((rc = gm_writer_attr_int(w, GM_ATTR_BLOCK_PAD, (int64_t)s->pad, err)) ||
                   (rc = gm_writer_attr_int(w, GM_ATTR_BLOCK_ROUND, 512, err))))
        return rc;
    int expandable = dv->expandable_seen || (s->settings != NULL && s->ts.expandable);
    if ((rc = gm_writer_attr_json(w, "expandable_segments", expandable ? "true" : "false", err)))
        return rc;
    snprintf(buf, sizeof buf,
             "{\"peak_reserved\": %llu, \"reserved_at_start\": %llu, \"reserved_at_end\": %llu, "
             "\"segment_allocs\": %llu, \"segment_frees\": %llu}",
             (unsigned long long)dv->peak_reserved, (unsigned long long)dv->reserved_start,
             (unsigned long long)dv->reserved_end, (unsigned long long)dv->seg_allocs,
             (unsigned long long)dv->seg_frees);
    if ((rc = gm_writer_attr_json(w, "recorded", buf, err)) ||
        (rc = gm_writer_attr_int(w, GM_ATTR_PREEXISTING, (int64_t)npre, err)))
        return rc;
    if (dv->ooms && (rc = gm_writer_attr_int(w, GM_ATTR_OOMS, (int64_t)dv->ooms, err)))
        return rc;
    if (dv->oom_capacity &&
        (rc = gm_writer_attr_int(w, GM_ATTR_OOM_CAPACITY, (int64_t)dv->oom_capacity, err)))
        return rc;
    /* Features: what this snapshot's PyTorch recorded. */
    int has[TK_NACT] = {0};
    for (size_t i = 0; i < dv->ne; i++)
        has[dv->e[i].act] = 1;
    size_t at = 0;
    const char *feat[16];
    size_t nf = 0;
    if (s->has_time)
        feat[nf++] = "time_us";
    if (s->settings)
        feat[nf++] = "allocator_settings";
    if (s->has_annotations)
        feat[nf++] = "external_annotations";
    if (s->has_compile_context)
        feat[nf++] = "compile_context";
    if (s->has_user_metadata)
        feat[nf++] = "user_metadata";
    if (has[TK_SEG_ALLOC] || has[TK_SEG_FREE])
        feat[nf++] = "segment_events";
    if (has[TK_SEG_MAP] || has[TK_SEG_UNMAP])
        feat[nf++] = "segment_map";
    if (expandable)
        feat[nf++] = "expandable_segments";
    if (has[TK_OOM])
        feat[nf++] = "oom";
    if (s->ndevices_traced > 1)
        feat[nf++] = "multi_device";
    at += (size_t)snprintf(buf + at, sizeof buf - at, "[");
    for (size_t i = 0; i < nf; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s\"%s\"", i ? ", " : "", feat[i]);
    snprintf(buf + at, sizeof buf - at, "]");
    if ((rc = gm_writer_attr_json(w, "features", buf, err)))
        return rc;
    if (dv->mismatches &&
        (rc = gm_writer_attr_int(w, GM_ATTR_RECONSTRUCTION_MISMATCHES, (int64_t)dv->mismatches, err)))
        return rc;
    if (dv->skipped && (rc = gm_writer_attr_int(w, "skipped_entries", (int64_t)dv->skipped, err)))
        return rc;
    return 0;
}

/* Write device dv's trace through w: layout, pre-existing ALLOCs, entries. */
int gm__tk_write(tk_dev_t *dv, gm_writer_t *w, const tk_note_t *notes, size_t nnotes)
{
    tk_snap_t *s = dv->s;
    gm_error_t *err = s->err;
    int rc = 0;
    tk_streams_t sc = {0};
    gm__idmap_t live;
    gm__idmap_init(&live);
    gm_layout_t lay = {0};
    uint64_t ts0 = dv->ne ? dv->e[0].ts_ns : nnotes ? notes[0].ts_ns : 0;
    /* Number the pre-existing allocations in layout order. */
    size_t nblocks = 0;
    uint64_t npre = 0;
    for (size_t i = 0; i < dv->st.n; i++) {
        nblocks += dv->st.r[i].nb;
        for (size_t j = 0; j < dv->st.r[i].nb; j++)
            if (dv->st.r[i].b[j].alloc)
                dv->st.r[i].b[j].id = (int64_t)npre++;
    }
    lay.segments = calloc(dv->st.n ? dv->st.n : 1, sizeof *lay.segments);
    lay.blocks = calloc(nblocks ? nblocks : 1, sizeof *lay.blocks);
    if (lay.segments == NULL || lay.blocks == NULL) {
        rc = gm__tk_nomem(s);
        goto out;
    }
    uint64_t next_id = 0;
    for (size_t i = 0; i < dv->st.n; i++) {
        const gm__tk_region_t *r = &dv->st.r[i];
        gm_layout_segment_t *ls = &lay.segments[lay.nsegments++];
        ls->address = r->addr;
        ls->size = r->size;
        ls->stream = r->stream;
        ls->device = (uint16_t)dv->device;
        ls->pool = r->pool;
        ls->expandable = r->expandable;
        ls->first_block = lay.nblocks;
        ls->nblocks = r->nb;
        if ((rc = tk_stream(w, &sc, r->stream, &ls->stream_index, err)))
            goto out;
        for (size_t j = 0; j < r->nb; j++) {
            const gm__tk_block_t *b = &r->b[j];
            gm_layout_block_t *lb = &lay.blocks[lay.nblocks++];
            lb->offset = b->addr - r->addr;
            lb->size = b->size;
            lb->requested = b->alloc ? b->req : 0;
            lb->id = b->alloc ? b->id : GM_LAYOUT_FREE;
            if (!b->alloc)
                continue;
            gm_event_t ev = {.op = GM_OP_ALLOC, .id = next_id++, .size = b->req, .addr = b->addr,
                             .stream = ls->stream_index, .device = (uint16_t)dv->device,
                             .ts_ns = ts0, .flags = GM_EVENT_PREEXISTING};
            if ((rc = gm__tk_frames_index(dv, w, b->frames, &ev.frames)) ||
                (rc = gm_writer_add(w, &ev, err)))
                goto out;
            if (b->addr == GM__IDMAP_EMPTY || gm__idmap_put(&live, b->addr, ev.id)) {
                rc = gm__tk_nomem(s);
                goto out;
            }
        }
    }
    if ((rc = gm_writer_layout(w, &lay, err))) {
        gm_error_prefix(err, "'%s' device %u", s->filename, dv->device);
        goto out;
    }
    uint32_t tag_oom = 0, tag_empty = 0;
    int have_oom = 0, have_empty = 0;
    size_t note = 0;
    for (size_t i = 0; i < dv->ne; i++) {
        const tk_entry_t *e = &dv->e[i];
        gm_event_t ev = {.ts_ns = e->ts_ns, .addr = e->addr, .device = (uint16_t)dv->device};
        for (; note < nnotes && s->has_time && notes[note].ts_ns <= e->ts_ns; note++) {
            gm_event_t m = {.op = GM_OP_MARK, .ts_ns = notes[note].ts_ns,
                            .device = (uint16_t)dv->device};
            if ((rc = gm_writer_tag(w, notes[note].name, &m.tag, err)) ||
                (rc = gm_writer_add(w, &m, err)))
                goto out;
        }
        switch (e->act) {
        case TK_ALLOC:
            ev.op = GM_OP_ALLOC;
            ev.id = next_id++;
            ev.size = e->size;
            if ((rc = tk_stream(w, &sc, e->stream, &ev.stream, err)) ||
                (rc = gm__tk_frames_index(dv, w, e->frames, &ev.frames)))
                goto out;
            if (e->addr != GM__IDMAP_EMPTY) {
                /* an address still live: its earlier allocation's free was
                 * lost; the new one takes the address */
                int r = gm__idmap_insert(&live, e->addr, ev.id);
                if (r == 1) {
                    dv->mismatches++;
                    r = gm__idmap_put(&live, e->addr, ev.id);
                }
                if (r < 0) {
                    rc = gm__tk_nomem(s);
                    goto out;
                }
            }
            break;
        case TK_FREE:
            if (!gm__idmap_remove(&live, e->addr, &ev.id)) {
                dv->mismatches++;
                continue;
            }
            ev.op = GM_OP_FREE;
            if ((rc = tk_stream(w, &sc, e->stream, &ev.stream, err)))
                goto out;
            break;
        case TK_SEG_FREE:
        case TK_SEG_UNMAP:
            if (i == 0 || (dv->e[i - 1].act != TK_SEG_FREE && dv->e[i - 1].act != TK_SEG_UNMAP)) {
                size_t j = i;
                while (j < dv->ne && (dv->e[j].act == TK_SEG_FREE || dv->e[j].act == TK_SEG_UNMAP))
                    j++;
                if (!tk_run_explained(dv, i, j)) {
                    if (!have_empty && (rc = gm_writer_tag(w, "empty_cache", &tag_empty, err)))
                        goto out;
                    have_empty = 1;
                    gm_event_t m = {.op = GM_OP_MARK, .tag = tag_empty, .ts_ns = e->ts_ns,
                                    .device = (uint16_t)dv->device};
                    if ((rc = gm_writer_add(w, &m, err)))
                        goto out;
                }
            }
            /* fall through */
        case TK_SEG_ALLOC:
        case TK_SEG_MAP:
            ev.op = e->act == TK_SEG_ALLOC   ? GM_OP_SEG_ALLOC
                    : e->act == TK_SEG_FREE  ? GM_OP_SEG_FREE
                    : e->act == TK_SEG_MAP   ? GM_OP_SEG_MAP
                                             : GM_OP_SEG_UNMAP;
            ev.size = e->size;
            if ((rc = tk_stream(w, &sc, e->stream, &ev.stream, err)))
                goto out;
            break;
        case TK_OOM:
            if (!have_oom && (rc = gm_writer_tag(w, "oom", &tag_oom, err)))
                goto out;
            have_oom = 1;
            /* the request that failed (the allocator's rounding of it),
             * its stream and stack, and the device's free bytes then in
             * addr, as PyTorch keeps them (docs/formats.md) */
            ev.op = GM_OP_MARK;
            ev.tag = tag_oom;
            ev.size = e->size;
            if ((rc = tk_stream(w, &sc, e->stream, &ev.stream, err)) ||
                (rc = gm__tk_frames_index(dv, w, e->frames, &ev.frames)))
                goto out;
            break;
        default:
            continue;
        }
        if ((rc = gm_writer_add(w, &ev, err)))
            goto out;
    }
    for (; note < nnotes; note++) {
        gm_event_t m = {.op = GM_OP_MARK, .ts_ns = notes[note].ts_ns,
                        .device = (uint16_t)dv->device};
        if ((rc = gm_writer_tag(w, notes[note].name, &m.tag, err)) ||
            (rc = gm_writer_add(w, &m, err)))
            goto out;
    }
    rc = tk_attrs(dv, w, npre);
out:
    if (rc && err->msg[0] != '\'')
        gm_error_prefix(err, "'%s' device %u", s->filename, dv->device);
    gm__idmap_release(&live);
    free(lay.segments);
    free(lay.blocks);
    return rc;
}
