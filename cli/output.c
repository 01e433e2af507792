/*
 * cli/output.c — the two promises every verb that writes a file keeps
 * (see cli/cli.h and docs/cli.md, "Output files"):
 *
 * 1. An output is never one of the inputs.  Two paths are the same file
 *    when they reach the same device and inode after every symbolic link is
 *    followed, so a symlink or a hard link to an input is caught as well as
 *    the input's own name; an output that does not exist yet is never an
 *    input.  A store's SQLite companions (IN-wal, IN-shm, IN-journal)
 *    count as the store.  When the output is standard output, the file
 *    standard output is redirected to is checked the same way.
 *
 * 2. A regular file is replaced whole or not at all.  The text goes to a
 *    temporary file beside the target (".NAME.tmp.XXXXXX" in the same
 *    directory, so that rename(2) is atomic), which is flushed, fsync'd
 *    and closed; only then is it renamed over the target (and the
 *    directory fsync'd).  Any failure — a full disk, a file-size limit,
 *    an exporter's error — removes the temporary file and leaves the
 *    target as it was.  The writer holds an exclusive flock(2) on its
 *    temporary file until it is renamed or removed; a writer killed before
 *    that leaves it behind, so each new writer of the same target first
 *    removes the temporaries of that target that are stale: regular files
 *    of its own user, named exactly ".NAME.tmp." and six characters, not
 *    modified for OUT_STALE_S seconds and whose lock it can take (no
 *    writer holds it; a writer of an older gmsim, which took no lock,
 *    would have touched its file within those minutes).  A symbolic link
 *    is followed, and the file it points to is replaced (the link stays a
 *    link).  Anything that is not a regular file or a missing one — a
 *    FIFO, a character device such as /dev/null, /dev/stdout, a socket —
 *    is written straight through,
 *    never replaced.  The new file gets the old file's permission bits, or
 *    0666 less the umask when it is new.  Replacing a regular file gives it
 *    a new inode: other hard links to the old one keep the old text.
 *
 * 3. Text for a terminal shows no control byte raw.  When standard output
 *    is a terminal, main() puts it behind a stream (gm__cli_tty_wrap) that
 *    writes every C0 control byte other than newline and tab, and DEL, as
 *    "\xHH" (the escaping of gm_text_escape), so that a trace name or a mark's
 *    tag in any verb's output cannot move the cursor, retitle the window
 *    or hide text.  Files and pipes get the bytes as they are (a CSV
 *    export must read back).
 *
 * Every message names the file and says why, with the OS's reason.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gmsim/text.h"

/* ---- same file ---------------------------------------------------------------- */

/* Whether the file so describes is input or one of its SQLite companions:
 * the same device and inode, links followed (a path that does not exist is
 * no file). */
static int out_is_input(const struct stat *so, const char *input)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char path[PATH_MAX + 16];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        struct stat si;
        if ((size_t)snprintf(path, sizeof path, "%s%s", input, suffixes[i]) >= sizeof path)
            continue;
        if (stat(path, &si) == 0 && si.st_dev == so->st_dev && si.st_ino == so->st_ino)
            return 1;
    }
    return 0;
}

/* Whether out names a companion of input by name (STORE-wal, -shm,
 * -journal beside a store that is input), whether or not it exists: SQLite
 * would take a file written there as the store's own. */
static int out_is_companion(const char *out, const char *input)
{
    static const char *const suffixes[] = {"-wal", "-shm", "-journal"};
    size_t n = strlen(out);
    struct stat si, sp;
    if (stat(input, &si) != 0)
        return 0;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t k = strlen(suffixes[i]);
        char base[PATH_MAX];
        if (n <= k || n - k >= sizeof base || strcmp(out + n - k, suffixes[i]) != 0)
            continue;
        memcpy(base, out, n - k);
        base[n - k] = '\0';
        if (stat(base, &sp) == 0 && sp.st_dev == si.st_dev && sp.st_ino == si.st_ino)
            return 1;
    }
    return 0;
}

int gm__cli_check_output(const char *usage, const char *out, const char *const *inputs,
                         size_t ninputs)
{
    struct stat so;
    int is_stdout = out == NULL || strcmp(out, "-") == 0;
    for (size_t i = 0; !is_stdout && i < ninputs; i++) {
        char shown[3 * 256 + 8], shown_out[3 * 256 + 8];
        if (inputs[i] != NULL && strcmp(inputs[i], "-") != 0 && out_is_companion(out, inputs[i]))
            return gm__cli_usage_error(usage, "cannot write '%s': it is the input '%s' (name "
                                              "another file)",
                                       gm_text_escape(out, shown_out, sizeof shown_out),
                                       gm_text_escape(inputs[i], shown, sizeof shown));
    }
    if (is_stdout ? fstat(STDOUT_FILENO, &so) != 0 : stat(out, &so) != 0)
        return GM_CLI_OK; /* a new file is no input */
    /* Standard output on a terminal, a pipe or /dev/null is no input. */
    if (is_stdout && !S_ISREG(so.st_mode))
        return GM_CLI_OK;
    for (size_t i = 0; i < ninputs; i++) {
        if (inputs[i] == NULL || strcmp(inputs[i], "-") == 0 || !out_is_input(&so, inputs[i]))
            continue;
        char shown[3 * 256 + 8];
        if (is_stdout)
            return gm__cli_usage_error(usage,
                                       "cannot write to standard output: it is the input '%s' "
                                       "(redirect it to another file)",
                                       gm_text_escape(inputs[i], shown, sizeof shown));
        char shown_out[3 * 256 + 8];
        return gm__cli_usage_error(usage, "cannot write '%s': it is the input '%s' (name another "
                                          "file)",
                                   gm_text_escape(out, shown_out, sizeof shown_out),
                                   gm_text_escape(inputs[i], shown, sizeof shown));
    }
    return GM_CLI_OK;
}

/* ---- atomic output ---------------------------------------------------------------- */

/* The file a path finally names: symbolic links followed one by one (a
 * relative target is taken from the link's directory), up to 40; the last
 * path may not exist.  malloc'd; NULL with errno set on failure (ELOOP for
 * too many links). */
static char *out_resolve(const char *path)
{
    char *cur = strdup(path);
    for (int hops = 0; cur != NULL; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur;
        if (hops == 40) {
            free(cur);
            errno = ELOOP;
            return NULL;
        }
        char target[PATH_MAX];
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0) {
            free(cur);
            return NULL;
        }
        target[n] = '\0';
        char *next;
        const char *slash = strrchr(cur, '/');
        if (target[0] == '/' || slash == NULL) {
            next = strdup(target);
        } else {
            size_t dir = (size_t)(slash - cur) + 1;
            next = malloc(dir + (size_t)n + 1);
            if (next != NULL) {
                memcpy(next, cur, dir);
                memcpy(next + dir, target, (size_t)n + 1);
            }
        }
        free(cur);
        cur = next;
    }
    errno = ENOMEM;
    return NULL;
}

/* ---- a terminal-safe standard output ---------------------------------------------- */

static ssize_t out_tty_write(void *cookie, const char *buf, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    FILE *f = cookie;
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if ((c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t')
            continue;
        char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
        if (fwrite(buf + start, 1, i - start, f) != i - start || fwrite(esc, 1, 4, f) != 4)
            return -1;
        start = i + 1;
    }
    if (fwrite(buf + start, 1, len - start, f) != len - start)
        return -1;
    return (ssize_t)len;
}

FILE *gm__cli_tty_wrap(FILE *real)
{
    cookie_io_functions_t io = {.write = out_tty_write};
    return fopencookie(real, "w", io);
}

/* The name shown in messages: the path as given, escaped. */
static const char *out_shown(const gm__cli_out_t *o)
{
    static char buf[3 * 512 + 8];
    return o->path ? gm_text_escape(o->path, buf, sizeof buf) : "standard output";
}

/* A temporary file not modified for this long, and not locked, is a dead
 * writer's. */
#define OUT_STALE_S 600

/* Remove the stale temporaries of the target base in directory dir (dlen
 * bytes of target, "" for the current one): see the header, promise 2.
 * Failures are ignored: what cannot be removed stays, as before. */
static void out_remove_stale(const char *target, size_t dlen, const char *base)
{
    char dir[PATH_MAX];
    if (dlen >= sizeof dir)
        return;
    if (dlen)
        snprintf(dir, sizeof dir, "%.*s", (int)dlen, target);
    else
        snprintf(dir, sizeof dir, "./");
    char prefix[NAME_MAX + 8];
    int plen = snprintf(prefix, sizeof prefix, ".%s.tmp.", base);
    if (plen < 0 || (size_t)plen >= sizeof prefix)
        return;
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0 || strlen(e->d_name) != (size_t)plen + 6)
            continue;
        char path[PATH_MAX + NAME_MAX + 2];
        if ((size_t)snprintf(path, sizeof path, "%s%s", dir, e->d_name) >= sizeof path)
            continue;
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
            st.st_mtime > now - OUT_STALE_S)
            continue;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat sf;
        /* the lock held while the name still leads to the file locked */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &sf) == 0 && lstat(path, &st) == 0 &&
            sf.st_dev == st.st_dev && sf.st_ino == st.st_ino)
            unlink(path);
        close(fd);
    }
    closedir(d);
}

int gm__cli_out_open(gm__cli_out_t *o, const char *usage, const char *path,
                     const char *const *inputs, size_t ninputs)
{
    memset(o, 0, sizeof *o);
    if (path != NULL && strcmp(path, "-") == 0)
        path = NULL;
    int rc = gm__cli_check_output(usage, path, inputs, ninputs);
    if (rc)
        return rc;
    o->path = path;
    if (path == NULL) {
        o->f = stdout; /* on a terminal, main() made it the escaping stream */
        return GM_CLI_OK;
    }
    o->target = out_resolve(path);
    if (o->target == NULL)
        return gm__cli_error("cannot write '%s': %s", out_shown(o), gm__cli_strerror(errno));
    struct stat st;
    int exists = stat(o->target, &st) == 0;
    /* /proc/self/fd/N (what /dev/stdout leads to) and every non-regular
     * file are written straight through. */
    if ((exists && !S_ISREG(st.st_mode)) || strncmp(o->target, "/proc/", 6) == 0) {
        o->f = fopen(path, "w");
        if (o->f == NULL) {
            rc = gm__cli_error("cannot write '%s': %s", out_shown(o), gm__cli_strerror(errno));
            free(o->target);
            o->target = NULL;
        }
        return rc;
    }
    const char *slash = strrchr(o->target, '/');
    size_t dir = slash ? (size_t)(slash - o->target) + 1 : 0;
    const char *base = o->target + dir;
    size_t len = dir + strlen(base) + 16;
    o->tmp = malloc(len);
    if (o->tmp == NULL) {
        free(o->target);
        o->target = NULL;
        return gm__cli_error("out of memory");
    }
    snprintf(o->tmp, len, "%.*s.%s.tmp.XXXXXX", (int)dir, o->target, base);
    out_remove_stale(o->target, dir, base);
    int fd = mkstemp(o->tmp);
    if (fd >= 0)
        (void)flock(fd, LOCK_EX | LOCK_NB); /* held until closed: this writer lives */
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        free(o->target);
        o->tmp = o->target = NULL;
        return gm__cli_error("cannot write '%s': %s", out_shown(o), gm__cli_strerror(e));
    }
    mode_t mode;
    if (exists) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    (void)fchmod(fd, mode); /* mkstemp made 0600: at worst the file stays private */
    o->f = fdopen(fd, "w");
    if (o->f == NULL) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        free(o->target);
        o->tmp = o->target = NULL;
        return gm__cli_error("cannot write '%s': %s", out_shown(o), gm__cli_strerror(e));
    }
    return GM_CLI_OK;
}

int gm__cli_out_error(const gm__cli_out_t *o, int e)
{
    const char *why = e ? gm__cli_strerror(e) : "input/output error";
    if (o->path == NULL)
        return gm__cli_error("cannot write to standard output: %s", why);
    return gm__cli_error("cannot write '%s': %s", out_shown(o), why);
}

/* Drop an unfinished output: the temporary file goes, the target stays. */
static void out_discard(gm__cli_out_t *o)
{
    if (o->f != NULL && o->f != stdout)
        fclose(o->f);
    if (o->tmp != NULL)
        unlink(o->tmp);
}

int gm__cli_out_close(gm__cli_out_t *o, int status)
{
    int rc = status;
    if (o->f == NULL)
        return rc;
    if (rc != GM_CLI_OK) {
        out_discard(o);
    } else if (o->path == NULL) {
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = gm__cli_out_error(o, errno);
    } else {
        errno = 0;
        int bad = fflush(o->f) != 0 || ferror(o->f);
        /* fsync of a FIFO or a terminal fails with EINVAL: no matter. */
        if (!bad && o->tmp != NULL && fsync(fileno(o->f)) != 0)
            bad = 1;
        int e = errno;
        if (bad) {
            rc = gm__cli_out_error(o, e);
            out_discard(o);
        } else {
            errno = 0;
            if (fclose(o->f) != 0) {
                rc = gm__cli_out_error(o, errno);
                if (o->tmp != NULL)
                    unlink(o->tmp);
            } else if (o->tmp != NULL && rename(o->tmp, o->target) != 0) {
                rc = gm__cli_out_error(o, errno);
                unlink(o->tmp);
            } else if (o->tmp != NULL) {
                /* The rename is durable once the directory is synced. */
                const char *slash = strrchr(o->target, '/');
                char dir[PATH_MAX];
                snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - o->target) + 1 : 1,
                         slash ? o->target : ".");
                int dfd = open(dir, O_RDONLY | O_DIRECTORY);
                if (dfd >= 0) {
                    (void)fsync(dfd);
                    close(dfd);
                }
            }
        }
    }
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    o->f = NULL;
    return rc;
}
