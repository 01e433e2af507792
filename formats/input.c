/*
 * formats/input.c — an input opened for import (gmsim/formats.h:
 * gm_import_input_open): gzip data inflated, a non-seekable input spooled,
 * its first bytes read for the format's detection.
 *
 *   1. its first GM_IMPORT_HEAD bytes are read; gzip data (magic 1f 8b,
 *      whatever the name) is inflated through zlib into a temporary file,
 *      every member of a multi-member file included, and the head is read
 *      again from the inflated data;
 *   2. a non-seekable input (a pipe, stdin) is spooled to a temporary file,
 *      so the importer still sees it from the start (and SQLite-based
 *      formats get a file);
 *   3. gm_import_input_detect names the format from the head (the
 *      registry's sniffers, in order).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "gmsim/formats.h"
#include "gmsim/text.h"

#define INPUT_BUF 65536

static const char *input_strerror(int e, char *buf, size_t len)
{
    return gm_errno_text(e, buf, len);
}

/* Copy `pre` and then the rest of f into a new temporary file, inflating
 * gzip data when `inflate_it`.  NULL with err set on failure. */
static FILE *input_spool(FILE *f, const char *pre, size_t npre, int inflate_it,
                         const char *shown, gm_error_t *err)
{
    char why[256];
    FILE *tmp = tmpfile();
    if (tmp == NULL) {
        gm_error_set(err, GM_EIO, "cannot create a temporary file: %s",
                     input_strerror(errno, why, sizeof why));
        return NULL;
    }
    unsigned char *ibuf = malloc(INPUT_BUF), *obuf = malloc(INPUT_BUF);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (ibuf == NULL || obuf == NULL || (inflate_it && inflateInit2(&z, 15 + 16) != Z_OK)) {
        gm_error_set(err, GM_ENOMEM, "out of memory");
        free(ibuf);
        free(obuf);
        fclose(tmp);
        return NULL;
    }
    uint64_t consumed = 0; /* compressed bytes fed so far */
    int in_member = 1, failed = 0;
    size_t n = npre;
    memcpy(ibuf, pre, npre);
    for (;;) {
        if (n == 0) {
            n = fread(ibuf, 1, INPUT_BUF, f);
            if (n == 0) {
                if (ferror(f)) {
                    gm_error_set(err, GM_EIO, "cannot read '%s': %s", shown,
                                 input_strerror(errno, why, sizeof why));
                    failed = 1;
                }
                break;
            }
        }
        if (!inflate_it) {
            if (fwrite(ibuf, 1, n, tmp) != n) {
                gm_error_set(err, GM_EIO, "cannot spool '%s' to a temporary file: %s", shown,
                             input_strerror(errno, why, sizeof why));
                failed = 1;
                break;
            }
            n = 0;
            continue;
        }
        z.next_in = ibuf;
        z.avail_in = (uInt)n;
        /* Until the input is used up and zlib has no output pending (a
         * full output buffer may hide more). */
        do {
            if (!in_member) {
                if (z.avail_in == 0)
                    break;
                /* Another gzip member follows (as `cat a.gz b.gz` makes). */
                if (inflateReset(&z) != Z_OK) {
                    gm_error_set(err, GM_ENOMEM, "out of memory");
                    failed = 1;
                    break;
                }
                in_member = 1;
            }
            z.next_out = obuf;
            z.avail_out = INPUT_BUF;
            uInt before = z.avail_in;
            int zr = inflate(&z, Z_NO_FLUSH);
            consumed += before - z.avail_in;
            size_t out = INPUT_BUF - z.avail_out;
            if (out && fwrite(obuf, 1, out, tmp) != out) {
                gm_error_set(err, GM_EIO, "cannot inflate '%s' to a temporary file: %s", shown,
                             input_strerror(errno, why, sizeof why));
                failed = 1;
                break;
            }
            if (zr == Z_STREAM_END) {
                in_member = 0;
            } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
                gm_error_set(err, GM_EFORMAT,
                             "'%s': corrupt gzip data at compressed byte %" PRIu64 ": %s", shown,
                             consumed, z.msg ? z.msg : "invalid data");
                failed = 1;
            } else if (zr == Z_BUF_ERROR && z.avail_in > 0 && out == 0) {
                gm_error_set(err, GM_EFORMAT, "'%s': corrupt gzip data at compressed byte %" PRIu64,
                             shown, consumed);
                failed = 1;
            }
        } while (!failed && (z.avail_in > 0 || z.avail_out == 0));
        n = 0;
        if (failed)
            break;
    }
    if (inflate_it) {
        if (!failed && in_member) {
            gm_error_set(err, GM_EFORMAT,
                         "'%s': truncated gzip data (ends at compressed byte %" PRIu64 ")", shown,
                         consumed);
            failed = 1;
        }
        inflateEnd(&z);
    }
    free(ibuf);
    free(obuf);
    if (!failed && (fflush(tmp) != 0 || fseek(tmp, 0, SEEK_SET) != 0)) {
        gm_error_set(err, GM_EIO, "cannot spool '%s' to a temporary file: %s", shown,
                     input_strerror(errno, why, sizeof why));
        failed = 1;
    }
    if (failed) {
        fclose(tmp);
        return NULL;
    }
    return tmp;
}

int gm_import_input_open(const char *path, gm_import_input_t *ii, gm_error_t *err)
{
    char why[256];
    memset(ii, 0, sizeof *ii);
    int is_stdin = strcmp(path, "-") == 0;
    ii->shown = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (f == NULL)
        return gm_error_set(err, GM_EIO, "cannot open '%s': %s", path,
                            input_strerror(errno, why, sizeof why));
    struct stat st;
    if (!is_stdin && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return gm_error_set(err, GM_EIO, "cannot read '%s': is a directory", path);
    }
    ii->nhead = fread(ii->head, 1, sizeof ii->head, f);
    if (ferror(f)) {
        int rc = gm_error_set(err, GM_EIO, "cannot read '%s': %s", ii->shown,
                              input_strerror(errno, why, sizeof why));
        if (f != stdin)
            fclose(f);
        return rc;
    }
    ii->gzip = ii->nhead >= 2 && (unsigned char)ii->head[0] == 0x1f &&
               (unsigned char)ii->head[1] == 0x8b;
    if (ii->gzip || fseek(f, 0, SEEK_SET) != 0) {
        /* Inflate, or keep what was read and the rest, in a temporary file. */
        FILE *tmp = input_spool(f, ii->head, ii->nhead, ii->gzip, ii->shown, err);
        if (f != stdin)
            fclose(f);
        if (tmp == NULL)
            return err ? err->code : GM_EIO;
        f = tmp;
        if (ii->gzip) {
            ii->nhead = fread(ii->head, 1, sizeof ii->head, f);
            if (ferror(f) || fseek(f, 0, SEEK_SET) != 0) {
                int rc = gm_error_set(err, GM_EIO, "cannot read '%s': %s", ii->shown,
                                      input_strerror(errno, why, sizeof why));
                fclose(f);
                return rc;
            }
        }
    }
    ii->in = f;
    return 0;
}

void gm_import_input_close(gm_import_input_t *ii)
{
    if (ii->in != NULL && ii->in != stdin)
        fclose(ii->in);
    ii->in = NULL;
}

const gm_format_t *gm_import_input_detect(const gm_import_input_t *ii, gm_error_t *err)
{
    const gm_format_t *fmt = gm_format_sniff(ii->head, ii->nhead);
    if (fmt != NULL)
        return fmt;
    char names[128];
    size_t used = (size_t)snprintf(names, sizeof names, "auto");
    for (size_t i = 0; i < gm_format_count() && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, ", %s", gm_format_at(i)->name);
    gm_error_set(err, GM_EFORMAT,
                 "cannot detect the format of '%s'%s (choose one with --format: %s)", ii->shown,
                 ii->gzip ? " (after gunzip)" : "", names);
    return NULL;
}
