/*
 * formats/torch/frames.c — the PyTorch snapshot importer's stack frames
 * (formats/torch/snapshot.c, "Stack frames"): each frame's text made once
 * per snapshot, the viewer's hidden frames dropped, stacks interned by the
 * identity of their frame dicts and given to the writer once.
 */
#include "formats/torch/torch.h"

#include <stdio.h>

#include "base/vec.h"

/* ---- frames -------------------------------------------------------------------------- */

void gm__tk_frames_release(tk_frames_t *f)
{
    free(f->seen);
    free(f->ids);
    free(f->stacks);
    free(f->text);
    memset(f, 0, sizeof *f);
}

/* PyTorch's viewer hides these frames (unwinding, dispatch, interpreter). */
static int tk_frame_hidden(const char *name, const char *file)
{
    static const char *const names[] = {"unwind::unwind", "CapturedTraceback::gather",
                                        "gather_with_cpp", "_start", "__libc_start_main",
                                        "PyEval_", "PyObject_", "PyFunction_"};
    static const char *const files[] = {"core/boxing", "/Register", "/Redispatch",
                                        "pythonrun.c", "Modules/main.c", "Objects/call.c",
                                        "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
                                        "cpython/abstract.h"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strstr(name, names[i]))
            return 1;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (strstr(file, files[i]))
            return 1;
    return 0;
}

/* The number (1-based) of frame dict fd's line, 0 when it is hidden, or -1
 * when out of memory.  The number is cached in the dict node's aux field:
 * aux = number + 1, so 1 means hidden. */
static int64_t tk_frame_line(tk_dev_t *dv, gm__pk_t *fd)
{
    if (fd->aux)
        return (int64_t)fd->aux - 1;
    const tk_keys_t *k = &dv->s->k;
    const gm__pk_t *nm = tk_get(fd, k->name), *fl = tk_get(fd, k->filename),
                   *ln = tk_get(fd, k->line);
    const char *name = nm && nm->type == GM__PK_STR ? nm->v.s : "?";
    const char *file = fl && fl->type == GM__PK_STR ? fl->v.s : "?";
    int64_t line = 0;
    gm__pk_i64(ln, &line);
    if (fd->type != GM__PK_DICT || tk_frame_hidden(name, file)) {
        fd->aux = 1;
        return 0;
    }
    tk_lines_t *f = &dv->s->lines;
    if (f->n >= UINT32_MAX - 2)
        return -1;
    if (GM_VEC_RESERVE(f->text, f->cap, f->n + 1, 256) ||
        GM_VEC_RESERVE(f->src, f->capsrc, f->n + 1, 256))
        return -1;
    size_t len = strlen(name) + strlen(file) + 32;
    char *text = malloc(len);
    if (text == NULL)
        return -1;
    /* One line of the frames text: no newline inside. */
    /* Installed packages are named from their package folder on. */
    static const char *const roots[] = {"/site-packages/", "/dist-packages/"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        const char *r = strstr(file, roots[i]);
        if (r != NULL && r[strlen(roots[i])] != '\0')
            file = r + strlen(roots[i]);
    }
    snprintf(text, len, "%s:%lld:%s", file, (long long)line, name);
    for (char *c = text; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    f->src[f->n] = line > 0;
    f->text[f->n++] = text;
    fd->aux = (uint32_t)f->n + 1;
    return (int64_t)f->n;
}

/* Grow the open-addressing table *tab (cells of elem bytes, each starting
 * with its uint64_t hash; *mask + 1 of them, none while *tab is NULL) to
 * twice its cells (1024 at first), moving those used() says are filled.
 * 0, or -1 out of memory with the table as it was. */
static int tk_table_grow(void *tab, size_t *mask, size_t elem, int (*used)(const void *cell))
{
    char *old;
    memcpy(&old, tab, sizeof old);
    size_t cap = old ? 2 * (*mask + 1) : 1024;
    char *t = calloc(cap, elem);
    if (t == NULL)
        return -1;
    for (size_t i = 0; old && i <= *mask; i++) {
        const char *c = old + i * elem;
        if (!used(c))
            continue;
        uint64_t h;
        memcpy(&h, c, sizeof h);
        size_t j = h & (cap - 1);
        while (used(t + j * elem))
            j = (j + 1) & (cap - 1);
        memcpy(t + j * elem, c, elem);
    }
    free(old);
    memcpy(tab, &t, sizeof t);
    *mask = cap - 1;
    return 0;
}

static int tk_stack_used(const void *cell)
{
    return ((const tk_stack_t *)cell)->len != 0;
}

static int tk_seen_used(const void *cell)
{
    return ((const tk_seen_t *)cell)->list != NULL;
}

/* The writer's frames index of stack `list` (0 when it has no visible frame). */
static int tk_frames_index_new(tk_dev_t *dv, gm_writer_t *w, const gm__pk_t *list,
                               uint32_t *index);

/* The writer's frames index of stack `list` (0 when it has no visible
 * frame).  Frame dicts are shared nodes, so a list of the same dicts as one
 * seen before is looked up by their addresses, without formatting. */
int gm__tk_frames_index(tk_dev_t *dv, gm_writer_t *w, const gm__pk_t *list, uint32_t *index)
{
    *index = 0;
    if (list == NULL)
        return 0;
    tk_frames_t *f = &dv->fr;
    /* A few frames make the hash; memcmp settles equality. */
    uint64_t h = list->n;
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t at = (uint32_t)((uint64_t)i * list->n / 8);
        h = (h ^ (uint64_t)(uintptr_t)list->v.items[at]) * UINT64_C(0x9e3779b97f4a7c15);
    }
    h ^= h >> 29;
    if (f->seen == NULL || 2 * (f->nseen + 1) > f->seen_mask + 1) {
        if (tk_table_grow(&f->seen, &f->seen_mask, sizeof *f->seen, tk_seen_used))
            return gm__tk_nomem(dv->s);
    }
    size_t j = h & f->seen_mask;
    for (; f->seen[j].list; j = (j + 1) & f->seen_mask) {
        const tk_seen_t *c = &f->seen[j];
        if (c->hash == h && c->list->n == list->n &&
            memcmp(c->list->v.items, list->v.items, list->n * sizeof *list->v.items) == 0) {
            *index = c->index;
            return 0;
        }
    }
    int rc = tk_frames_index_new(dv, w, list, index);
    if (rc)
        return rc;
    f->seen[j] = (tk_seen_t){.hash = h, .list = list, .index = *index};
    f->nseen++;
    return 0;
}

/* tk_frames_index for a list of frame dicts not seen in this order. */
static int tk_frames_index_new(tk_dev_t *dv, gm_writer_t *w, const gm__pk_t *list,
                               uint32_t *index)
{
    tk_frames_t *f = &dv->fr;
    size_t first = f->nids;
    if (GM_VEC_RESERVE(f->ids, f->capids, f->nids + list->n, 16))
        return gm__tk_nomem(dv->s);
    const tk_lines_t *ln = &dv->s->lines;
    size_t nsrc = 0;
    for (uint32_t i = 0; i < list->n; i++) {
        int64_t n = tk_frame_line(dv, list->v.items[i]);
        if (n < 0)
            return gm__tk_nomem(dv->s);
        if (n == 0)
            continue;
        f->ids[f->nids++] = (uint32_t)n;
        nsrc += ln->src[n - 1];
    }
    /* Source frames only when there are any (see formats/torch/snapshot.c). */
    if (nsrc > 0 && nsrc < f->nids - first) {
        size_t k = first;
        for (size_t i = first; i < f->nids; i++)
            if (ln->src[f->ids[i] - 1])
                f->ids[k++] = f->ids[i];
        f->nids = k;
    }
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = first; i < f->nids; i++)
        h = (h ^ f->ids[i]) * UINT64_C(0x100000001b3);
    size_t len = f->nids - first;
    if (len == 0)
        return 0;
    h ^= h >> 31;
    if ((f->stacks == NULL || 2 * (f->nstacks + 1) > f->mask + 1) &&
        tk_table_grow(&f->stacks, &f->mask, sizeof *f->stacks, tk_stack_used))
        return gm__tk_nomem(dv->s);
    size_t j = h & f->mask;
    for (; f->stacks[j].len; j = (j + 1) & f->mask) {
        const tk_stack_t *st = &f->stacks[j];
        if (st->hash == h && st->len == len &&
            memcmp(f->ids + st->first, f->ids + first, len * sizeof *f->ids) == 0) {
            f->nids = first; /* drop the duplicate */
            *index = st->index;
            return 0;
        }
    }
    /* A new stack: its text, interned by the writer. */
    size_t need = 1;
    for (size_t i = 0; i < len; i++)
        need += strlen(ln->text[f->ids[first + i] - 1]) + 1;
    if (GM_VEC_RESERVE(f->text, f->captext, need, 16))
        return gm__tk_nomem(dv->s);
    size_t at = 0;
    for (size_t i = 0; i < len; i++) {
        const char *line = ln->text[f->ids[first + i] - 1];
        size_t l = strlen(line);
        if (i)
            f->text[at++] = '\n';
        memcpy(f->text + at, line, l);
        at += l;
    }
    f->text[at] = '\0';
    int rc = gm_writer_frames(w, f->text, index, dv->s->err);
    if (rc)
        return rc;
    f->stacks[j] = (tk_stack_t){.hash = h, .first = (uint32_t)first, .len = (uint32_t)len,
                                .index = *index};
    f->nstacks++;
    return 0;
}
