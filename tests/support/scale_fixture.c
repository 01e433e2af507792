/*
 * tests/support/scale_fixture.c — captures for the `scale` tests
 * (scale_fixture.h).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/scale_fixture.h"
#include "util.h"

gm_store_t *sc_real(const char *job, const char **why)
{
    static int nth;
    char dbname[32];
    snprintf(dbname, sizeof dbname, "real%d.db", nth++);
    gm_store_t *s = NULL;
    gm_error_t err;
    for (int i = 0; i < 2; i++) {
        char rel[96];
        snprintf(rel, sizeof rel, "snapshots/lmmedium_ctx%d_%s_fp32.pickle", i ? 256 : 128, job);
        const char *path = gt_data_path(rel, why);
        if (path == NULL) {
            if (s)
                gm_store_close(s);
            return NULL;
        }
        char *pc = strdup(path);
        if (s == NULL)
            cr_assert_eq(gm_store_open(gt_tmpfile(dbname), GM_STORE_WRITE, &s, &err), 0, "%s",
                         err.msg);
        FILE *f = fopen(pc, "rb");
        cr_assert_not_null(f);
        gm_import_target_t *t;
        cr_assert_eq(gm_import_target_create(s, i ? "c256" : "c128", 0, &t, &err), 0);
        cr_assert_eq(gm_torch_import(f, pc, t, &err), 0, "%s", err.msg);
        cr_assert_eq(gm_import_commit(t, &err), 0, "%s", err.msg);
        fclose(f);
        free(pc);
    }
    return s;
}

uint64_t sc_load(gm_store_t *s, const char *name)
{
    gm_trace_info_t info;
    gm_error_t err;
    cr_assert_eq(gm_store_find(s, name, &info, &err), 0, "%s", err.msg);
    uint64_t load = info.load;
    gm_trace_info_release(&info);
    return load;
}

void sc_cut(gm_store_t *s, const char *src, const char *dst, uint64_t cut,
            const sc_cut_how_t *how)
{
    gm_error_t err;
    gm_trace_info_t info;
    cr_assert_eq(gm_store_find(s, src, &info, &err), 0, "%s", err.msg);
    uint64_t n = info.allocs;
    gm_trace_info_release(&info);
    const sc_chunks_t *chunks = how->chunks;
    uint64_t *size = calloc(n + 1, sizeof *size), *map = malloc((n + 1) * sizeof *map);
    uint32_t *frames = calloc(n + 1, sizeof *frames);
    unsigned char *live = calloc(n + 1, 1);
    cr_assert(size && map && frames && live);
    for (int pass = 0; pass < 2; pass++) {
        gm_reader_t *r;
        cr_assert_eq(gm_reader_open(s, src, &r, &err), 0, "%s", err.msg);
        gm_writer_t *w = NULL;
        uint64_t next = 0, index = 0;
        if (pass == 1) {
            cr_assert_eq(gm_writer_begin(s, dst, GM_WRITE_REPLACE, &w, &err), 0, "%s", err.msg);
            uint32_t st;
            cr_assert_eq(gm_writer_stream(w, 0, &st, &err), 0, "%s", err.msg);
            for (uint64_t j = 0; j < n; j++) {
                uint64_t id = how->reversed ? n - 1 - j : j;
                map[id] = UINT64_MAX;
                if (!live[id])
                    continue;
                gm_event_t e = {.op = GM_OP_ALLOC, .id = next, .size = size[id],
                                .flags = GM_EVENT_PREEXISTING};
                const char *fr = gm_reader_frames(r, frames[id]);
                if (how->keep_frames && frames[id] && fr)
                    cr_assert_eq(gm_writer_frames(w, fr, &e.frames, &err), 0, "%s", err.msg);
                map[id] = next++;
                cr_assert_eq(gm_writer_add(w, &e, &err), 0, "%s", err.msg);
            }
            for (int g = 0; chunks != NULL && g < 2; g++)
                for (uint64_t c = 0; c < chunks->count[g]; c++) {
                    gm_event_t e = {.op = GM_OP_ALLOC, .id = next++, .size = chunks->size[g],
                                    .flags = GM_EVENT_PREEXISTING};
                    cr_assert_eq(gm_writer_add(w, &e, &err), 0, "%s", err.msg);
                }
        }
        uint64_t nchunks = next;
        for (;;) {
            const gm_event_t *ev;
            size_t k;
            cr_assert_eq(gm_reader_next(r, &ev, &k, &err), 0, "%s", err.msg);
            if (k == 0)
                break;
            for (size_t i = 0; i < k; i++, index++) {
                gm_event_t e = ev[i];
                if (pass == 0) {
                    if (index < cut && e.op == GM_OP_ALLOC) {
                        live[e.id] = 1;
                        size[e.id] = e.size;
                        frames[e.id] = e.frames;
                    } else if (index < cut && e.op == GM_OP_FREE) {
                        live[e.id] = 0;
                    }
                    continue;
                }
                if (index == cut && chunks != NULL) /* the chunks freed */
                    for (uint64_t id = nchunks - chunks->count[0] - chunks->count[1];
                         id < nchunks; id++) {
                        gm_event_t f = {.op = GM_OP_FREE, .id = id};
                        cr_assert_eq(gm_writer_add(w, &f, &err), 0, "%s", err.msg);
                    }
                if (index < cut || (e.op != GM_OP_ALLOC && e.op != GM_OP_FREE &&
                                    (e.op != GM_OP_MARK || !how->keep_marks)))
                    continue;
                e.stream = 0;
                if (e.op == GM_OP_MARK) {
                    cr_assert_eq(gm_writer_tag(w, gm_reader_tag(r, e.tag), &e.tag, &err), 0);
                } else if (e.op == GM_OP_ALLOC) {
                    const char *fr = gm_reader_frames(r, e.frames);
                    e.frames = 0;
                    if (how->keep_frames && fr)
                        cr_assert_eq(gm_writer_frames(w, fr, &e.frames, &err), 0, "%s", err.msg);
                    e.flags = 0;
                    map[e.id] = next;
                    e.id = next++;
                } else {
                    if (map[e.id] == UINT64_MAX)
                        continue;
                    e.id = map[e.id];
                }
                cr_assert_eq(gm_writer_add(w, &e, &err), 0, "%s", err.msg);
            }
        }
        gm_reader_close(r);
        if (w)
            cr_assert_eq(gm_writer_finish(w, &err), 0, "%s", err.msg);
    }
    free(size);
    free(map);
    free(frames);
    free(live);
}
