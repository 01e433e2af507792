/*
 * tests/test_torch_real.c — the PyTorch snapshot importer on every real
 * snapshot in ../shared/data/snapshots (each imported once; under
 * AddressSanitizer the small ones and the largest), checked against an
 * independent reading by python3 (tests/torch_check.py, a restricted
 * Unpickler): per device, ALLOC/FREE/SEG counts, the pre-existing count,
 * the final reserved bytes, LOAD and a `native` replay's load equal to the
 * peak of live requested bytes, empty_cache and annotation marks; and the
 * stored layout holds exactly the pre-existing allocations and the reserved
 * bytes at the start, and replays forward to the snapshot's final blocks
 * (tests/support/torch_fixture.c).  Skipped with a message without the
 * data or python3.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/torch_fixture.h"
#include "util.h"

#ifdef __SANITIZE_ADDRESS__
#define TT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_SANITIZED 1
#endif
#endif
#ifndef TT_SANITIZED
#define TT_SANITIZED 0
#endif

/* ---- the real snapshots --------------------------------------------------------- */

typedef struct py_dev {
    unsigned dev;
    uint64_t allocs, frees, segs, pre, peak, reserved_end, runs, ooms, annotations;
    uint64_t final_blocks, final_hash;
} py_dev_t;

static size_t python_reading(const char *path, py_dev_t *out, size_t max)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/torch_check.py' '%s'", GM_SOURCE_DIR, path);
    FILE *f = popen(cmd, "r");
    cr_assert(f != NULL);
    size_t n = 0;
    py_dev_t d;
    while (n < max &&
           fscanf(f,
                  " dev=%u allocs=%" SCNu64 " frees=%" SCNu64 " segs=%" SCNu64
                  " preexisting=%" SCNu64 " peak_live=%" SCNu64 " reserved_end=%" SCNu64
                  " free_runs=%" SCNu64 " ooms=%" SCNu64 " annotations=%" SCNu64
                  " final_blocks=%" SCNu64 " final_hash=%" SCNu64,
                  &d.dev, &d.allocs, &d.frees, &d.segs, &d.pre, &d.peak, &d.reserved_end,
                  &d.runs, &d.ooms, &d.annotations, &d.final_blocks, &d.final_hash) == 12)
        out[n++] = d;
    cr_assert_eq(pclose(f), 0, "python3 failed reading %s", path);
    return n;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_file(const char *path, const char *base)
{
    py_dev_t py[16];
    size_t ndev = python_reading(path, py, 16);
    cr_assert(ndev > 0, "%s: python found no device", base);
    gm_store_t *s;
    gm_error_t err;
    cr_assert_eq(gm_store_open(":memory:", GM_STORE_WRITE, &s, &err), 0);
    cr_assert_eq(tt_import_into(s, base, path, NULL, 0, &err), 0, "%s", err.msg);
    int msd = strncmp(base, "msd_", 4) == 0;
    for (size_t i = 0; i < ndev; i++) {
        char name[600];
        if (ndev == 1)
            snprintf(name, sizeof name, "%s", base);
        else
            snprintf(name, sizeof name, "%s.dev%u", base, py[i].dev);
        gm_trace_info_t t;
        cr_assert_eq(gm_store_find(s, name, &t, &err), 0, "%s", err.msg);
        gm_jv_t *a = tt_trace_attrs(&t);
        cr_assert_eq(tt_attr_u64(a, "device"), py[i].dev);
        cr_assert_eq(tt_attr_u64(a, "preexisting"), py[i].pre, "%s: pre-existing", name);
        cr_assert_eq(t.allocs, py[i].allocs + py[i].pre, "%s: ALLOCs", name);
        cr_assert_eq(t.frees, py[i].frees, "%s: FREEs", name);
        cr_assert_eq(t.segs, py[i].segs, "%s: SEG events", name);
        cr_assert_eq(t.dropped, 0);
        cr_assert_eq(t.load, py[i].peak, "%s: load %" PRIu64 " vs %" PRIu64, name, t.load,
                     py[i].peak);
        const gm_jv_t *rec = gm_jv_get(a, "recorded");
        cr_assert_eq(tt_attr_u64(rec, "reserved_at_end"), py[i].reserved_end, "%s", name);
        cr_assert(tt_attr_u64(rec, "peak_reserved") >= tt_attr_u64(rec, "reserved_at_end"));
        cr_assert(tt_attr_u64(rec, "peak_reserved") >= tt_attr_u64(rec, "reserved_at_start"));
        cr_assert_null(gm_jv_get(a, "reconstruction_mismatches"), "%s: the trace does not fit "
                       "its final segments", name);
        /* the msd_* files come from the padding backend, the others not */
        cr_assert_eq(gm_jv_get(a, "block_pad") != NULL, msd, "%s: block_pad", name);
        if (msd)
            cr_assert_eq(tt_attr_u64(a, "block_pad"), 32);
        if (strstr(base, "expandable") != NULL)
            cr_assert(gm_jv_bool(gm_jv_get(a, "expandable_segments")), "%s", name);
        /* every run of segment frees here is an empty_cache() call */
        cr_assert_eq(tt_count_marks(s, name, "empty_cache"), py[i].runs, "%s", name);
        cr_assert_eq(tt_count_marks(s, name, "oom"), py[i].ooms, "%s", name);
        cr_assert_eq(t.marks, py[i].runs + py[i].ooms + py[i].annotations, "%s: marks", name);
        tt_layout_t lc = tt_check_layout(s, name);
        cr_assert_eq(lc.preexisting, py[i].pre, "%s: layout allocations", name);
        cr_assert_eq(lc.reserved, tt_attr_u64(rec, "reserved_at_start"), "%s: layout bytes", name);
        cr_assert_eq(tt_native_load(s, name), py[i].peak, "%s: native replay", name);
        uint64_t fb, fh;
        tt_forward_check(s, name, msd ? 32 : 0, &fb, &fh);
        cr_assert_eq(fb, py[i].final_blocks, "%s: final blocks %" PRIu64 " vs %" PRIu64, name,
                     fb, py[i].final_blocks);
        cr_assert_eq(fh, py[i].final_hash, "%s: the final blocks differ", name);
        fprintf(stderr, "%s: %" PRIu64 " events, %" PRIu64 " allocs, %" PRIu64
                    " pre-existing, %" PRIu64 " segments at start, peak reserved %" PRIu64 "\n",
                    name, t.events, t.allocs, py[i].pre, lc.segments,
                    tt_attr_u64(rec, "peak_reserved"));
        gm_jv_free(a);
        gm_trace_info_release(&t);
    }
    gm_store_close(s);
}

Test(torch, real_snapshots, .timeout = 600)
{
    const char *why;
    const char *dir = gt_data_path("snapshots", &why);
    if (dir == NULL)
        cr_skip_test("%s", why);
    if (system("python3 -c 'import pickle' >/dev/null 2>&1") != 0)
        cr_skip_test("python3 is not available: no independent reading to check against");
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s", dir);
    DIR *d = opendir(dirpath);
    cr_assert(d != NULL);
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 7 && strcmp(e->d_name + l - 7, ".pickle") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    cr_assert(n > 0, "no snapshots in %s", dirpath);
    qsort(names, n, sizeof *names, name_cmp);
    /* Under AddressSanitizer: the files below 1 MB and the largest. */
    off_t largest = 0;
    size_t ilargest = 0;
    for (size_t i = 0; i < n; i++) {
        char path[8192];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dirpath, names[i]);
        if (stat(path, &st) == 0 && st.st_size > largest) {
            largest = st.st_size;
            ilargest = i;
        }
    }
    size_t done = 0;
    for (size_t i = 0; i < n; i++) {
        char path[8192], base[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dirpath, names[i]);
        if (TT_SANITIZED && i != ilargest && stat(path, &st) == 0 && st.st_size > 1000000)
            continue;
        snprintf(base, sizeof base, "%.*s", (int)(strlen(names[i]) - 7), names[i]);
        check_file(path, base);
        done++;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    cr_assert(done > 0);
}
