/*
 * tests/fuzz/fuzz_samefile.c — fuzz target for the output helper of the
 * command line (cli/output.c): "same file as input/output" and "whole or
 * not at all".
 *
 * Each input builds a small directory (an input file in.db with an
 * in.db-wal beside it, another file, a subfolder) and, as its bytes say,
 * symbolic links (chains, relative ones from the subfolder, a dangling
 * one) and hard links to the input; then picks an output path among ~16
 * spellings of those files (in.db, ./in.db, sub/../in.db, links, new
 * names), one to three inputs, the bytes to write and whether the writer
 * fails midway.  The law checked, against stat(2) as the ground truth:
 *   - gm__cli_out_open refuses exactly when the output is an existing file
 *     with the device and inode of an input or of its -wal/-shm/-journal;
 *   - the input's bytes never change;
 *   - an accepted output that completes holds exactly the bytes written,
 *     a link stays a link, a new file appears; one that fails leaves the
 *     target as it was (or absent);
 *   - no temporary file is left, whatever happened.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what, const char *path)
{
    fprintf(stdout, "fuzz_samefile: %s (%s)\n", what, path);
    fflush(stdout);
    abort();
}

static void fuzz_put(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0)
        fuzz_fail("cannot set up", path);
}

/* The whole content of path (malloc'd, *n bytes), or NULL if absent. */
static unsigned char *fuzz_get(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *buf = malloc(1 << 16);
    *n = buf ? fread(buf, 1, 1 << 16, f) : 0;
    fclose(f);
    return buf;
}

static int fuzz_same_inode(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Names in dir that look like the helper's temporary files. */
static int fuzz_temps(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d != NULL)
        closedir(d);
    return n;
}

static void fuzz_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[4096];
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            fuzz_rmtree(p);
        else
            unlink(p);
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
}

/* The spellings an output or an input may take (relative to the folder). */
static const char *const fuzz_paths[] = {
    "in.db",     "./in.db",   "sub/../in.db", "l1",      "l2",        "sub/l3",
    "h1",        "h2",        "d1",           "other.txt", "new.txt", "sub/new.csv",
    "in.db-wal", "in.db-shm", "sub",          "-",
};
#define FUZZ_NPATHS (sizeof fuzz_paths / sizeof fuzz_paths[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    static int quiet;
    if (!quiet) {
        /* The helper's diagnostics are expected: keep them off the log
         * (sanitizer reports write to the descriptor, not through stdio). */
        FILE *null = fopen("/dev/null", "w");
        if (null != NULL)
            stderr = null;
        quiet = 1;
    }
    char base[] = "/tmp/gmsim-fuzz-samefile.XXXXXX", cwd[4096];
    if (mkdtemp(base) == NULL || getcwd(cwd, sizeof cwd) == NULL || chdir(base) != 0)
        fuzz_fail("cannot make a folder", base);
    uint8_t links = data[0], pick = data[1], which = data[2], mode = data[3];
    const uint8_t *payload = data + 4;
    size_t npayload = size - 4;

    static const char input[] = "SQLite format 3\0 the input's bytes";
    mkdir("sub", 0777);
    fuzz_put("in.db", input, sizeof input);
    fuzz_put("in.db-wal", "wal", 3);
    fuzz_put("other.txt", "other", 5);
    if (links & 1)
        symlink("in.db", "l1");
    if (links & 2)
        symlink(links & 1 ? "l1" : "in.db", "l2");
    if (links & 4)
        symlink("../in.db", "sub/l3");
    if (links & 8)
        link("in.db", "h1");
    if (links & 16)
        symlink("other.txt", "h2");
    if (links & 32)
        symlink("new.txt", "d1"); /* dangling until written */
    if (links & 64)
        symlink("other.txt", "in.db-shm");

    const char *out = fuzz_paths[pick % FUZZ_NPATHS];
    const char *inputs[3];
    size_t ninputs = 1 + which % 3;
    for (size_t i = 0; i < ninputs; i++)
        inputs[i] = fuzz_paths[(which / 3 + 5 * i) % FUZZ_NPATHS];
    if (strcmp(out, "-") == 0)
        out = "new.txt"; /* stdout belongs to the driver */

    /* The ground truth. */
    int same = 0;
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < ninputs; i++)
        for (size_t k = 0; k < 4 && strcmp(inputs[i], "-") != 0; k++) {
            char p[256];
            snprintf(p, sizeof p, "%s%s", inputs[i], suffixes[k]);
            same |= fuzz_same_inode(out, p);
            /* A companion's name beside an input store is refused even
             * where no such file exists: SQLite would take it as the
             * store's own. */
            size_t no = strlen(out), ks = strlen(suffixes[k]);
            if (k > 0 && no > ks && strcmp(out + no - ks, suffixes[k]) == 0 && no - ks < sizeof p) {
                memcpy(p, out, no - ks);
                p[no - ks] = '\0';
                same |= fuzz_same_inode(p, inputs[i]);
            }
        }
    struct stat before;
    int existed = stat(out, &before) == 0;
    int was_link = 0;
    struct stat lst;
    if (lstat(out, &lst) == 0)
        was_link = S_ISLNK(lst.st_mode);
    size_t nold = 0;
    unsigned char *old = fuzz_get(out, &nold);
    unsigned char *inbytes[3] = {NULL, NULL, NULL};
    size_t ninbytes[3] = {0, 0, 0};
    for (size_t i = 0; i < ninputs; i++)
        if (strcmp(inputs[i], "-") != 0)
            inbytes[i] = fuzz_get(inputs[i], &ninbytes[i]);

    gm__cli_out_t o;
    int rc = gm__cli_out_open(&o, "", out, inputs, ninputs);
    if (same && rc == GM_CLI_OK)
        fuzz_fail("an input was accepted as the output", out);
    if (!same && rc != GM_CLI_OK && !(existed && S_ISDIR(before.st_mode)))
        fuzz_fail("an output that is no input was refused", out);
    if (rc == GM_CLI_OK) {
        int fail = mode & 1;
        if (fwrite(payload, 1, npayload, o.f) != npayload)
            fuzz_fail("cannot write", out);
        rc = gm__cli_out_close(&o, fail ? GM_CLI_ERROR : GM_CLI_OK);
        size_t n = 0;
        unsigned char *now = fuzz_get(out, &n);
        if (!fail) {
            if (rc != GM_CLI_OK || now == NULL || n != npayload ||
                (n && memcmp(now, payload, n) != 0))
                fuzz_fail("a completed output does not hold what was written", out);
            if (was_link && (lstat(out, &lst) != 0 || !S_ISLNK(lst.st_mode)))
                fuzz_fail("a symbolic link was replaced", out);
        } else if ((old == NULL) != (now == NULL) ||
                   (old && (n != nold || memcmp(now, old, n) != 0))) {
            fuzz_fail("a failed output changed its target", out);
        }
        free(now);
    }
    for (size_t i = 0; i < ninputs; i++) {
        size_t nin = 0;
        /* An input that did not exist is no file the output could be. */
        unsigned char *in = inbytes[i] ? fuzz_get(inputs[i], &nin) : NULL;
        if (inbytes[i] && (in == NULL || nin != ninbytes[i] || memcmp(in, inbytes[i], nin) != 0))
            fuzz_fail("an input changed", inputs[i]);
        free(in);
        free(inbytes[i]);
    }
    if (fuzz_temps(".") || fuzz_temps("sub"))
        fuzz_fail("a temporary file was left", out);
    free(old);
    if (chdir(cwd) != 0)
        fuzz_fail("cannot go back", cwd);
    fuzz_rmtree(base);
    return 0;
}

size_t gm_fuzz_seeds(gm_fuzz_seed_t **out)
{
    /* links, output, inputs, mode, payload: every output spelling once,
     * with every link made, against in.db alone and with others. */
    size_t n = FUZZ_NPATHS * 2;
    *out = calloc(n, sizeof **out);
    if (*out == NULL)
        return 0;
    for (size_t i = 0; i < n; i++) {
        static const char text[] = "ts_ns,op,id\n1,alloc,0\n";
        uint8_t *d = malloc(4 + sizeof text);
        if (d == NULL)
            return i;
        d[0] = 0x7f;
        d[1] = (uint8_t)(i % FUZZ_NPATHS);
        d[2] = (uint8_t)(i < FUZZ_NPATHS ? 0 : 3 * 9 + 2); /* in.db; then three inputs */
        d[3] = (uint8_t)(i / FUZZ_NPATHS);
        memcpy(d + 4, text, sizeof text);
        (*out)[i] = (gm_fuzz_seed_t){d, 4 + sizeof text};
    }
    return n;
}

void gm_fuzz_seeds_free(gm_fuzz_seed_t *seeds, size_t n)
{
    for (size_t i = 0; seeds != NULL && i < n; i++)
        free(seeds[i].data);
    free(seeds);
}
