/*
 * tests/fuzz/fuzz_pickle.c — fuzz target for the PyTorch snapshot importer
 * (gm_torch_import: the pickle decoder, the snapshot reader, the backward
 * reconstruction, the store writer) and the decoder's JSON writer.
 *
 * Each input goes through the whole import into a reused in-memory store
 * (fuzz_import.h: commit or abort, every trace read back, every error must
 * name the file); then every stored layout is read back and validated, and
 * the input is decoded alone and written as JSON.  Any result is fine; a
 * crash, a sanitizer report or a leak is the bug.
 *
 * Seeds: small snapshots written here, and one per real snapshot in
 * ../shared/data/snapshots (skipped when absent), cut down so that a run
 * stays cheap: the real file is decoded and written again with its first
 * segments, blocks, trace entries and frames only (strings memoized, so
 * the memo opcodes stay exercised).
 */
#include <dirent.h>

#include "fuzz_import.h"
#include "formats/pickle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_import_run(gm_torch_import, data, size, "fuzz.pickle");
    gm_trace_info_t *list;
    size_t n;
    gm_error_t err;
    if (gm_store_list(fuzz_import_store, &list, &n, &err) == 0) {
        for (size_t i = 0; i < n; i++) {
            gm_layout_t *l = NULL;
            if (gm_store_layout(fuzz_import_store, list[i].name, &l, &err) != 0)
                abort(); /* a layout the importer wrote must read back */
            if (l != NULL && gm_layout_validate(l, &err) != 0)
                abort();
            gm_layout_free(l);
        }
        gm_trace_info_free_list(list, n);
    }
    gm__pickle_t *p;
    if (gm__pickle_decode(data, size, &p, &err) == 0) {
        char *json;
        if (gm__pickle_to_json(gm__pickle_root(p), 16, &json, &err) == 0)
            free(json);
        gm__pickle_free(p);
    }
    return 0;
}

/* ---- seeds: a small pickle writer ------------------------------------------ */

typedef struct fz_buf {
    uint8_t *p;
    size_t n, cap;
    const gm__pk_t **memo; /* strings written, by memo index */
    size_t nmemo, capmemo;
} fz_buf_t;

static void fz_raw(fz_buf_t *b, const void *s, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 256;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            abort();
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void fz_op(fz_buf_t *b, uint8_t op) { fz_raw(b, &op, 1); }

static void fz_u32(fz_buf_t *b, uint8_t op, uint32_t v)
{
    uint8_t x[5] = {op, (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    fz_raw(b, x, 5);
}

/* Write v, keeping at most `keep` items of a list (0: all), nested lists
 * keeping `keep_inner`. */
static void fz_write(fz_buf_t *b, const gm__pk_t *v, uint32_t keep, uint32_t keep_inner, int depth)
{
    if (depth > 12) {
        fz_op(b, 'N');
        return;
    }
    switch (v->type) {
    case GM__PK_NONE: fz_op(b, 'N'); break;
    case GM__PK_BOOL: fz_op(b, v->v.i ? 0x88 : 0x89); break;
    case GM__PK_INT: {
        uint8_t x[11] = {0x8a, 9};
        for (int i = 0; i < 8; i++)
            x[2 + i] = (uint8_t)(v->v.u >> (8 * i));
        x[10] = (v->flags & GM__PK_UNSIGNED) || v->v.i >= 0 ? 0 : 0xff;
        fz_raw(b, x, 11);
        break;
    }
    case GM__PK_FLOAT: {
        uint64_t u;
        memcpy(&u, &v->v.f, 8);
        uint8_t x[9] = {'G'};
        for (int i = 0; i < 8; i++)
            x[1 + i] = (uint8_t)(u >> (56 - 8 * i));
        fz_raw(b, x, 9);
        break;
    }
    case GM__PK_STR:
    case GM__PK_BYTES:
        for (size_t i = 0; i < b->nmemo; i++) {
            if (b->memo[i] == v) {
                fz_u32(b, 'j', (uint32_t)i); /* LONG_BINGET */
                return;
            }
        }
        fz_u32(b, v->type == GM__PK_STR ? 'X' : 'B', v->n);
        fz_raw(b, v->v.s, v->n);
        if (b->nmemo == b->capmemo) {
            b->capmemo = b->capmemo ? 2 * b->capmemo : 64;
            b->memo = realloc(b->memo, b->capmemo * sizeof *b->memo);
            if (b->memo == NULL)
                abort();
        }
        b->memo[b->nmemo++] = v;
        fz_op(b, 0x94); /* MEMOIZE */
        break;
    case GM__PK_DICT:
        fz_op(b, '}');
        fz_op(b, '(');
        for (uint32_t i = 0; i < v->n; i++) {
            fz_write(b, v->v.items[2 * i], keep_inner, keep_inner, depth + 1);
            fz_write(b, v->v.items[2 * i + 1], keep_inner, keep_inner, depth + 1);
        }
        fz_op(b, 'u');
        break;
    default: { /* list, tuple, set: as a list or a tuple */
        uint32_t n = keep && v->n > keep ? keep : v->n;
        fz_op(b, v->type == GM__PK_TUPLE ? '(' : ']');
        if (v->type != GM__PK_TUPLE)
            fz_op(b, '(');
        for (uint32_t i = 0; i < n; i++)
            fz_write(b, v->v.items[i], keep_inner, keep_inner, depth + 1);
        fz_op(b, v->type == GM__PK_TUPLE ? 't' : 'e');
        break;
    }
    }
}

/* A cut-down copy of the snapshot at path, or NULL. */
static uint8_t *fz_reduce(const char *path, size_t *len)
{
    size_t n;
    char *data = gt_read_file(path, &n);
    if (data == NULL)
        return NULL;
    gm__pickle_t *p;
    gm_error_t err;
    if (gm__pickle_decode(data, n, &p, &err) != 0) {
        free(data);
        return NULL;
    }
    const gm__pk_t *root = gm__pickle_root(p);
    const gm__pk_t *k_seg = gm__pickle_find_str(p, "segments");
    const gm__pk_t *k_tr = gm__pickle_find_str(p, "device_traces");
    fz_buf_t b = {0};
    fz_raw(&b, "\x80\x04", 2);
    fz_op(&b, '}');
    fz_op(&b, '(');
    for (uint32_t i = 0; root->type == GM__PK_DICT && i < root->n; i++) {
        const gm__pk_t *key = root->v.items[2 * i], *val = root->v.items[2 * i + 1];
        fz_write(&b, key, 0, 0, 1);
        if (key == k_tr && val->type == GM__PK_LIST) {
            /* the first 60 entries of each device, 4 frames each */
            fz_op(&b, ']');
            fz_op(&b, '(');
            for (uint32_t d = 0; d < val->n; d++)
                fz_write(&b, val->v.items[d], 60, 4, 2);
            fz_op(&b, 'e');
        } else if (key == k_seg) {
            fz_write(&b, val, 4, 6, 1); /* 4 segments, 6 blocks each */
        } else {
            fz_write(&b, val, 8, 8, 1);
        }
    }
    fz_op(&b, 'u');
    fz_op(&b, '.');
    gm__pickle_free(p);
    free(data);
    free(b.memo);
    *len = b.n;
    return b.p;
}

/* Small snapshots: the state of one segment with a trace that frees a
 * block alive before it, maps and unmaps expandable pages, and an oom; one
 * whose block lies at 2^64 - 4096 (past its segment: no wrap-around); a
 * pre-2.0 list of segments; a pickle with a GLOBAL. */
static const struct {
    const char *data;
    size_t len;
} fz_small[] = {
#define FZ(s) {s, sizeof(s) - 1}
    FZ("\x80\x02}(X\x08\x00\x00\x00segments](}(X\x06\x00\x00\x00" "deviceK\x00"
       "X\x07\x00\x00\x00" "addressJ\x00\x00\x00\x10X\x0a\x00\x00\x00total_sizeJ\x00\x00\x40\x01"
       "X\x06\x00\x00\x00streamK\x00X\x06\x00\x00\x00" "blocks](}(X\x07\x00\x00\x00" "address"
       "J\x00\x00\x00\x10X\x04\x00\x00\x00sizeJ\x00\x00\x40\x01X\x05\x00\x00\x00stateX\x08\x00"
       "\x00\x00inactiveueueX\x0d\x00\x00\x00" "device_traces]](}(X\x06\x00\x00\x00" "action"
       "X\x0e\x00\x00\x00" "free_completedX\x04\x00\x00\x00" "addrJ\x00\x00\x10\x10X\x04\x00\x00"
       "\x00sizeJ\x00\x00\x10\x00u}(X\x06\x00\x00\x00" "actionX\x0d\x00\x00\x00segment_unmap"
       "X\x04\x00\x00\x00" "addrJ\x00\x00\x40\x11X\x04\x00\x00\x00sizeJ\x00\x00\x20\x00u}("
       "X\x06\x00\x00\x00" "actionX\x03\x00\x00\x00oomueaX\x14\x00\x00\x00" "external_annotations"
       "](}(X\x04\x00\x00\x00nameX\x01\x00\x00\x00" "aX\x07\x00\x00\x00time_usK\x01ueu."),
    /* the same with the block at 2^64 - 4096: "address ... out of range" */
    FZ("\x80\x02}(X\x08\x00\x00\x00segments](}(X\x06\x00\x00\x00" "deviceK\x00"
       "X\x07\x00\x00\x00" "addressJ\x00\x00\x00\x10X\x0a\x00\x00\x00total_sizeJ\x00\x00\x40\x01"
       "X\x06\x00\x00\x00streamK\x00X\x06\x00\x00\x00" "blocks](}(X\x07\x00\x00\x00" "address"
       "\x8a\x09\x00\xf0\xff\xff\xff\xff\xff\xff\x00X\x04\x00\x00\x00sizeJ\x00\x10\x00\x00"
       "X\x05\x00\x00\x00stateX\x10\x00\x00\x00" "active_allocatedueueX\x0d\x00\x00\x00"
       "device_traces]](}(X\x06\x00\x00\x00" "actionX\x03\x00\x00\x00oomueau."),
    FZ("\x80\x02](}(X\x07\x00\x00\x00" "addressK\x00X\x0a\x00\x00\x00total_sizeK\x01ue."),
    FZ("\x80\x02" "cos\nsystem\n(S'true'\ntR."),
#undef FZ
};

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    (void)fuzz_import_seeds; /* for text seeds; these hold NUL bytes */
    size_t nsmall = sizeof fz_small / sizeof fz_small[0];
    gm_fuzz_seed_t *seeds = calloc(nsmall + 64, sizeof *seeds);
    size_t n = 0;
    if (seeds == NULL) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < nsmall; i++) {
        seeds[n].data = malloc(fz_small[i].len);
        if (seeds[n].data == NULL)
            break;
        memcpy(seeds[n].data, fz_small[i].data, fz_small[i].len);
        seeds[n++].len = fz_small[i].len;
    }
    const char *why;
    const char *dir = gt_data_path("snapshots", &why);
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && n < nsmall + 64) {
        size_t l = strlen(e->d_name);
        if (l < 8 || strcmp(e->d_name + l - 7, ".pickle") != 0)
            continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
            continue;
        size_t len;
        uint8_t *seed = fz_reduce(path, &len);
        if (seed != NULL) {
            seeds[n].data = seed;
            seeds[n++].len = len;
        }
    }
    if (d != NULL)
        closedir(d);
    *out = seeds;
    return n;
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; seeds != NULL && i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
