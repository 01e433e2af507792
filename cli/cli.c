/*
 * cli/cli.c — helpers shared by the verbs (see cli/cli.h).
 *
 * Everything here only formats, parses arguments or calls the library; the
 * one piece of policy is gm__cli_write_trace's promise that a failed write
 * leaves nothing behind: the writer rolls the trace back, and when the store
 * file was created by this very command it is removed with its WAL/SHM/
 * journal companions.
 */
#include "cli/cli.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gmsim/formats.h"
#include "gmsim/gpus.h"
#include "gmsim/sweep.h"
#include "gmsim/text.h"
#include "base/text.h"
#include "base/vec.h"
#include "cli/start.h"

/* ---- messages ------------------------------------------------------------ */

static void cli_vmessage(const char *fmt, va_list ap) GM_PRINTF(1, 0);

/* The message is one line: any control byte in it (from a trace or file
 * name) is shown escaped (gm_text_escape). */
static void cli_vmessage(const char *fmt, va_list ap)
{
    char msg[2 * GM_ERROR_MSG_MAX], shown[4 * sizeof msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fflush(stdout);
    fputs("gmsim: ", stderr);
    fputs(gm_text_escape(msg, shown, sizeof shown), stderr);
    fputc('\n', stderr);
}

int gm__cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vmessage(fmt, ap);
    va_end(ap);
    return GM_CLI_ERROR;
}

int gm__cli_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vmessage(fmt, ap);
    va_end(ap);
    /* The synopsis: the usage text up to its first blank line. */
    const char *end = strstr(usage, "\n\n");
    size_t n = end ? (size_t)(end - usage) + 1 : strlen(usage);
    fwrite(usage, 1, n, stderr);
    return GM_CLI_USAGE;
}

/* The long options a verb takes are the "--name" words of its usage text
 * (which lists every one): the nearest to `name` is appended to msg as
 * "; did you mean '--NAME'?" (base/text.h). */
static void cli_suggest_option(const char *usage, const char *name, char *msg, size_t len)
{
    enum { MAX_OPTS = 128, MAX_NAME = 48 };
    static char opts[MAX_OPTS][MAX_NAME];
    size_t n = 0;
    gm__suggest_t s;
    gm__suggest_init(&s, name);
    for (const char *p = strstr(usage, "--"); p != NULL && n < MAX_OPTS; p = strstr(p, "--")) {
        size_t k = 2;
        while ((p[k] >= 'a' && p[k] <= 'z') || (p[k] >= '0' && p[k] <= '9') ||
               (p[k] == '-' && p[k + 1] != '-'))
            k++;
        if (k > 2 && k < MAX_NAME && (p == usage || p[-1] != '-')) {
            memcpy(opts[n], p, k);
            opts[n][k] = '\0';
            gm__suggest_add(&s, opts[n++]);
        }
        p += k;
    }
    gm__suggest_append(&s, msg, len);
}

int gm__cli_option_error(const char *usage, char **argv, int c)
{
    char name[64];
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    if (optopt == 0 || strncmp(arg, "--", 2) == 0) {
        size_t n = strcspn(arg, "=");
        snprintf(name, sizeof name, "%.*s", (int)(n < 60 ? n : 60), arg);
    } else {
        snprintf(name, sizeof name, "-%c", optopt);
    }
    if (c == ':')
        return gm__cli_usage_error(usage, "missing value for option '%s'", name);
    if (optopt != 0 && strncmp(arg, "--", 2) == 0 && strchr(arg, '=') != NULL)
        return gm__cli_usage_error(usage, "option '%s' takes no value", name);
    char msg[GM_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "unknown option '%s'", name);
    if (strncmp(name, "--", 2) == 0)
        cli_suggest_option(usage, name, msg, sizeof msg);
    return gm__cli_usage_error(usage, "%s", msg);
}

/* ---- option values -------------------------------------------------------- */

int gm__cli_size_arg(const char *usage, const char *opt, const char *text, uint64_t *out)
{
    gm_error_t err = {0};
    if (gm_parse_size(text, out, &err) != 0)
        return gm__cli_usage_error(usage, "invalid value for %s: %s", opt, err.msg);
    return 0;
}

int gm__cli_u64_arg(const char *usage, const char *opt, const char *text, uint64_t *out)
{
    if (gm_parse_u64(text, out) != 0)
        return gm__cli_usage_error(usage,
                                   "invalid value for %s: '%s' is not an unsigned integer", opt,
                                   text);
    return 0;
}

int gm__cli_count_arg(const char *usage, const char *opt, const char *text, uint64_t lo,
                      uint64_t hi, uint64_t *out)
{
    int rc = gm__cli_u64_arg(usage, opt, text, out);
    if (rc == 0 && (*out < lo || *out > hi))
        rc = gm__cli_usage_error(usage, "invalid value for %s: '%s' (%llu to %llu)", opt, text,
                                 (unsigned long long)lo, (unsigned long long)hi);
    return rc;
}

/* ---- did you mean ----------------------------------------------------------- */

char *gm__cli_suggest_policy(const char *name, char *msg, size_t len)
{
    gm__suggest_t s;
    gm__suggest_init(&s, name);
    for (size_t i = 0; i < gm_policy_count(); i++)
        gm__suggest_add(&s, gm_policy_at(i)->name);
    gm__suggest_add(&s, "all");
    return gm__suggest_append(&s, msg, len);
}

int gm__cli_choice_arg(const char *usage, const char *opt, const char *text,
                       const char *const *names, const char *hint, size_t *out)
{
    gm__suggest_t s;
    gm__suggest_init(&s, text);
    for (size_t i = 0; names[i]; i++) {
        if (strcmp(text, names[i]) == 0) {
            *out = i;
            return GM_CLI_OK;
        }
        gm__suggest_add(&s, names[i]);
    }
    char msg[512];
    snprintf(msg, sizeof msg, "invalid value for %s: '%s' (%s)", opt, text, hint);
    return gm__cli_usage_error(usage, "%s", gm__suggest_append(&s, msg, sizeof msg));
}

/* ---- stores and traces ---------------------------------------------------- */

/* "" and ":memory:" would give SQLite a private store that vanishes on close:
 * a command writing there would report success and keep nothing. */
static int cli_store_path_ok(const char *path)
{
    return path[0] != '\0' && strcmp(path, ":memory:") != 0;
}

/* A file that is no store but a trace gmsim imports (sniffed as `gmsim
 * import` does, gm_format_sniff; gzip'd data as such): say so, with the
 * command that makes a store of it.  0 when it is none of them. */
static int cli_not_a_store(const char *path)
{
    char head[4096];
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    const gm_format_t *fmt = gm_format_sniff(head, n);
    int gz = n >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b;
    /* an Nsight Systems export is SQLite too: its sniffer cannot tell it
     * from a damaged store, whose own message is the better one */
    if ((fmt == NULL || strcmp(fmt->name, "nsys") == 0) && !gz)
        return 0;
    /* the store's name: the file's without its suffixes (".pickle", ".gz"), with .db */
    char db[1024];
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    for (int k = 0; k < 2; k++) { /* at most two: "x.pickle.gz" */
        size_t i = len;
        while (i > 1 && base[i - 1] != '.')
            i--;
        if (i > 1)
            len = i - 1;
    }
    snprintf(db, sizeof db, "%.*s.db", (int)(len < 900 ? len : 900), base);
    if (strcmp(db, base) == 0)
        snprintf(db, sizeof db, "%.*s.store.db", (int)(len < 900 ? len : 900), base);
    gm__cli_error("'%s' is %s%s, not a store: import it first with 'gmsim import %s -o %s'",
                  path, fmt ? "a " : "gzip-compressed data", fmt ? fmt->help : "", path, db);
    return 1;
}

int gm__cli_open_store(const char *path, unsigned flags, gm_store_t **out)
{
    gm_error_t err = {0};
    if (!cli_store_path_ok(path))
        return gm__cli_error("cannot open '%s': a store is a file; give its name", path);
    if (gm_store_open(path, flags, out, &err) != 0) {
        if (err.code == GM_EFORMAT && cli_not_a_store(path))
            return GM_CLI_ERROR;
        return gm__cli_error("%s", err.msg);
    }
    /* once per command: an older store read as it is has no checksums */
    static int noted;
    if (!noted && gm_store_version(*out) < 4) {
        noted = 1;
        fprintf(stderr,
                "gmsim: note: '%s' has schema version %d: its chunks carry no checksums, so "
                "damage is found by decoding alone; opening it for writing (import, replay "
                "--save) upgrades it\n",
                path, gm_store_version(*out));
    }
    return GM_CLI_OK;
}

char *gm__cli_runs_path(const char *db)
{
    size_t n = strlen(db);
    if (n > 3 && strcmp(db + n - 3, ".db") == 0)
        n -= 3;
    char *out = malloc(n + sizeof ".runs.db");
    if (out != NULL) {
        memcpy(out, db, n);
        strcpy(out + n, ".runs.db");
    }
    return out;
}

/* "'a', 'b', 'c'" of the traces of list that `pattern` picks (all when
 * NULL), as far as they fit in buf (then " ..."). */
static void cli_trace_names(const gm_trace_info_t *list, size_t n, const char *pattern,
                            char *buf, size_t len)
{
    size_t used = 0, shown = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 8 < len; i++) {
        if (!gm_trace_match(pattern, list[i].name))
            continue;
        int k = snprintf(buf + used, len - used, "%s'%s'", shown++ ? ", " : "", list[i].name);
        used += k > 0 ? (size_t)k : 0;
    }
    if (used >= len)
        strcpy(buf + len - 5, " ...");
}

int gm__cli_pick_trace(gm_store_t *s, const char *usage, const char *name, char **out)
{
    return gm__cli_pick_trace_as(s, usage, name, 0, out);
}

int gm__cli_pick_trace_as(gm_store_t *s, const char *usage, const char *name, int colon,
                          char **out)
{
    /* how the user names a trace: --trace NAME, or DB:TRACE (scale, fit --from) */
    char how[GM_ERROR_MSG_MAX];
    if (colon)
        snprintf(how, sizeof how, "as '%s:TRACE'", gm_store_path(s));
    else
        snprintf(how, sizeof how, "with --trace");
    gm_error_t err = {0};
    *out = NULL;
    if (name != NULL) {
        gm_trace_info_t info;
        if (gm_store_find(s, name, &info, &err) == 0) {
            gm_trace_info_release(&info);
            *out = strdup(name);
            return *out ? GM_CLI_OK : gm__cli_error("out of memory");
        }
        if (err.code != GM_ENOTFOUND)
            return gm__cli_error("%s", err.msg);
    }
    gm_error_t lerr = {0};
    gm_trace_info_t *list;
    size_t n;
    if (gm_store_list(s, &list, &n, &lerr) != 0)
        return gm__cli_error("%s", lerr.msg);
    size_t matched = 0, which = 0;
    for (size_t i = 0; i < n; i++)
        if (gm_trace_match(name, list[i].name)) {
            matched++;
            which = i;
        }
    int rc = GM_CLI_OK;
    char names[GM_ERROR_MSG_MAX];
    if (matched == 1) {
        *out = strdup(list[which].name);
        if (*out == NULL)
            rc = gm__cli_error("out of memory");
    } else if (name != NULL && matched == 0 && n > 0) {
        /* gm_store_find's: no such trace; and the nearest names, or all of them */
        gm__suggest_t sg;
        gm__suggest_init(&sg, name);
        for (size_t i = 0; i < n; i++)
            gm__suggest_add(&sg, list[i].name);
        char near[4 * (GM__SUGGEST_MAX_LEN + 8)];
        if (strpbrk(name, "*?[") == NULL && gm__suggest_text(&sg, near, sizeof near) != NULL) {
            rc = gm__cli_error("%s", gm__suggest_append(&sg, err.msg, sizeof err.msg));
        } else {
            cli_trace_names(list, n, NULL, names, sizeof names);
            rc = gm__cli_error("no trace %s '%s' in '%s', which holds %zu: %s",
                               strpbrk(name, "*?[") ? "matches" : "named", name, gm_store_path(s),
                               n, names);
        }
    } else if (n == 0) {
        rc = gm__cli_error("no traces in '%s'", gm_store_path(s));
    } else if (name != NULL) {
        cli_trace_names(list, n, name, names, sizeof names);
        rc = gm__cli_usage_error(usage, "'%s' matches %zu traces in '%s'; choose one %s: %s",
                                 name, matched, gm_store_path(s), how, names);
    } else {
        /* List the names on the message line itself, as far as they fit. */
        cli_trace_names(list, n, NULL, names, sizeof names);
        rc = gm__cli_usage_error(usage, "'%s' holds %zu traces; choose one %s: %s",
                                 gm_store_path(s), n, how, names);
    }
    gm_trace_info_free_list(list, n);
    return rc;
}

int gm__cli_no_trace(const char *glob, char *const *dbs, size_t n)
{
    if (glob == NULL)
        return gm__cli_error("no traces in the stores given");
    char names[GM_ERROR_MSG_MAX] = "";
    size_t used = 0, total = 0;
    for (size_t d = 0; d < n; d++) {
        gm_store_t *s;
        gm_trace_info_t *list;
        size_t k;
        gm_error_t err = {0};
        if (gm_store_open(dbs[d], GM_STORE_READONLY, &s, &err) != 0)
            continue;
        if (gm_store_list(s, &list, &k, &err) == 0) {
            if (used + 8 < sizeof names)
                cli_trace_names(list, k, NULL, names + used + (used ? 2 : 0),
                                sizeof names - used - (used ? 2 : 0));
            if (used && k && used + 8 < sizeof names)
                memcpy(names + used, ", ", 2);
            used = strlen(names);
            total += k;
            gm_trace_info_free_list(list, k);
        }
        gm_store_close(s);
    }
    if (total == 0)
        return gm__cli_error("no trace matches '%s': the stores given hold none", glob);
    return gm__cli_error("no trace matches '%s' in the stores given, which hold %zu: %s", glob,
                         total, names);
}

void gm__cli_remove_store(const char *db)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char path[4096];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        if (snprintf(path, sizeof path, "%s%s", db, suffixes[i]) < (int)sizeof path)
            unlink(path);
    }
}

void gm__cli_json_nonzero(gm_json_t *j, const char *key, uint64_t v)
{
    gm_json_key(j, key);
    if (v)
        gm_json_u64(j, v);
    else
        gm_json_null(j);
}

void gm__cli_json_trace(gm_json_t *j, const gm_trace_info_t *t)
{
    gm_json_begin_object(j);
    gm_json_kv_str(j, "name", t->name);
#define CLI_JSON_U64(field) gm_json_kv_u64(j, #field, t->field);
    CLI_JSON_U64(events)
    CLI_JSON_U64(allocs)
    CLI_JSON_U64(frees)
    CLI_JSON_U64(marks)
    CLI_JSON_U64(segs)
    CLI_JSON_U64(load)
    CLI_JSON_U64(live_at_end)
    CLI_JSON_U64(chunks)
    CLI_JSON_U64(bytes)
#undef CLI_JSON_U64
    gm_json_kv_double(j, "bytes_per_event", t->events ? (double)t->bytes / (double)t->events : 0.0);
    gm_json_kv_str(j, "digest", t->digest);
    gm_json_key(j, "attrs");
    gm_json_raw(j, t->attrs && t->attrs[0] ? t->attrs : "{}");
    gm_json_end_object(j);
}

/* The one-line report of a written trace. */
static void cli_report(const char *verb, const char *db, const gm_trace_info_t *info)
{
    printf("%s '%s' into '%s': %" PRIu64 " events (%" PRIu64 " allocs, %" PRIu64
           " frees, %" PRIu64 " marks), load %s",
           verb, gm__cli_s(info->name), gm__cli_s(db), info->events, info->allocs, info->frees, info->marks,
           gm__cli_size(info->load));
    uint64_t dropped = info->dropped;
    if (dropped)
        printf(", %" PRIu64 " zero-size request%s dropped", dropped, dropped == 1 ? "" : "s");
    putchar('\n');
}

static int cli_by_digest(const void *a, const void *b)
{
    const gm_trace_info_t *x = *(const gm_trace_info_t *const *)a;
    const gm_trace_info_t *y = *(const gm_trace_info_t *const *)b;
    int c = strcmp(x->digest, y->digest);
    return c ? c : strcmp(x->name, y->name);
}

void gm__cli_same_content(gm_store_t *s, const char *db, const gm_trace_info_t *infos, size_t n)
{
    enum { SHOWN = 5 }; /* notes before "and N more" */
    gm_trace_info_t *list;
    size_t nlist;
    gm_error_t err = {0};
    if (n == 0 || gm_store_list(s, &list, &nlist, &err) != 0)
        return; /* only a note: the traces are written */
    const gm_trace_info_t **by = malloc((nlist ? nlist : 1) * sizeof *by);
    size_t noted = 0;
    for (size_t i = 0; by != NULL && i < nlist; i++)
        by[i] = &list[i];
    if (by != NULL)
        qsort(by, nlist, sizeof *by, cli_by_digest);
    for (size_t i = 0; by != NULL && i < n; i++) {
        /* The first trace of this digest (lo) and the next of another name. */
        size_t lo = 0, hi = nlist;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (strcmp(by[mid]->digest, infos[i].digest) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < nlist && strcmp(by[lo]->digest, infos[i].digest) == 0; lo++) {
            if (strcmp(by[lo]->name, infos[i].name) == 0)
                continue;
            if (noted++ < SHOWN) {
                fflush(stdout);
                fprintf(stderr,
                        "gmsim: note: '%s' has the same events as '%s' in '%s': sweeps and "
                        "reports take them as one\n",
                        gm__cli_s(infos[i].name), gm__cli_s(by[lo]->name), gm__cli_s(db));
            }
            break;
        }
    }
    if (noted > SHOWN)
        fprintf(stderr, "gmsim: note: and %zu more traces have the same events as another in "
                        "'%s'\n",
                noted - SHOWN, gm__cli_s(db));
    free(by);
    gm_trace_info_free_list(list, nlist);
}

int gm__cli_write_trace(const char *db, const char *name, unsigned flags, const char *verb,
                        gm__cli_fill_fn fill, void *ctx)
{
    if (!cli_store_path_ok(db))
        return gm__cli_error("cannot write to '%s': a store is a file; give its name", db);
    struct stat st;
    int existed = stat(db, &st) == 0;
    gm_error_t err = {0};
    gm_store_t *s;
    if (gm_store_open(db, GM_STORE_WRITE, &s, &err) != 0) {
        if (!existed)
            gm__cli_remove_store(db);
        return gm__cli_error("%s", err.msg);
    }
    gm_writer_t *w;
    int rc = gm_writer_begin(s, name, flags & GM__CLI_REPLACE ? GM_WRITE_REPLACE : 0, &w, &err);
    if (rc == 0) {
        rc = fill(w, ctx, &err);
        if (rc == 0)
            rc = gm_writer_finish(w, &err); /* frees w whatever the result */
        else
            gm_writer_abort(w);
    }
    if (rc != 0) {
        gm_store_close(s);
        if (!existed)
            gm__cli_remove_store(db);
        gm__cli_status_clear();
        gm__cli_error("%s", err.msg);
        if (rc == GM_EEXIST)
            fputs("hint: use --replace to overwrite it\n", stderr);
        return GM_CLI_ERROR;
    }
    gm_trace_info_t info;
    rc = gm_store_find(s, name, &info, &err);
    gm__cli_status_clear();
    if (rc == 0) {
        if (flags & GM__CLI_JSON) {
            gm_json_t j;
            gm_json_init(&j, stdout, 1);
            gm_json_begin_object(&j);
            gm_json_kv_str(&j, "store", db);
            gm_json_key(&j, "trace");
            gm__cli_json_trace(&j, &info);
            gm_json_end_object(&j);
            gm_json_finish(&j);
        } else {
            cli_report(verb, db, &info);
        }
        gm__cli_same_content(s, db, &info, 1);
        gm_trace_info_release(&info);
    }
    gm_store_close(s);
    return rc == 0 ? GM_CLI_OK : gm__cli_error("%s", err.msg);
}

/* ---- output helpers ------------------------------------------------------- */

static int cli_status_shown;

void gm__cli_status(const char *fmt, ...)
{
    if (!isatty(STDOUT_FILENO) || !isatty(STDERR_FILENO))
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
    cli_status_shown = 1;
}

void gm__cli_progress(void *ctx, uint64_t done, uint64_t total)
{
    static struct timespec start, last;
    static uint64_t prev = UINT64_MAX; /* done at the last call; a smaller done starts anew */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (done < prev || prev == UINT64_MAX) {
        start = now;
        last.tv_sec = 0;
    }
    prev = done;
    double since_last = (double)(now.tv_sec - last.tv_sec) +
                        (double)(now.tv_nsec - last.tv_nsec) * 1e-9;
    if (since_last < 0.1 && done < total)
        return;
    last = now;
    double elapsed = (double)(now.tv_sec - start.tv_sec) +
                     (double)(now.tv_nsec - start.tv_nsec) * 1e-9;
    double frac = total ? (double)done / (double)total : 1.0;
    char bar[21];
    int fill = (int)(frac * 20.0);
    for (int i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[20] = '\0';
    double rate = elapsed > 0 ? (double)done / elapsed : 0.0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0.0;
    gm__cli_status("%s [%s] %3.0f%%  %.1f M events/s  ETA %.0f s", (const char *)ctx, bar,
                   frac * 100.0, rate / 1e6, eta);
}

void gm__cli_status_clear(void)
{
    if (cli_status_shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        cli_status_shown = 0;
    }
}

static void cli_out_of_memory(void)
{
    fputs("gmsim: out of memory\n", stderr);
    exit(GM_CLI_ERROR);
}

void gm__cli_table_init(gm__cli_table_t *t, size_t ncols, const char *align)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->align = strdup(align);
    if (t->align == NULL)
        cli_out_of_memory();
}

void gm__cli_table_head(gm__cli_table_t *t, const char *align, ...)
{
    gm__cli_table_init(t, strlen(align), align);
    va_list ap;
    va_start(ap, align);
    for (const char *h; (h = va_arg(ap, const char *)) != NULL;)
        gm__cli_table_cell(t, "%s", h);
    va_end(ap);
    assert(t->ncells == t->ncols); /* one header per column */
}

size_t gm__cli_metric_table(gm__cli_table_t *t, unsigned flags, size_t *cols)
{
    size_t n = gm_metric_columns(flags, cols);
    char align[GM__CLI_METRIC_COLS + 3] = "ll";
    memset(align + 2, 'r', n);
    align[2 + n] = '\0';
    gm__cli_table_init(t, 2 + n, align);
    gm__cli_table_cell(t, "policy");
    gm__cli_table_cell(t, "start");
    for (size_t c = 0; c < n; c++)
        gm__cli_table_cell(t, "%s", gm_metric_at(cols[c])->label);
    return n;
}

void gm__cli_table_cell(gm__cli_table_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t len = n > 0 ? (size_t)n + 1 : 1;
    char *raw = malloc(len), *cell = malloc(4 * len);
    if (raw == NULL || cell == NULL)
        cli_out_of_memory();
    raw[0] = '\0';
    va_start(ap, fmt);
    vsnprintf(raw, len, fmt, ap);
    va_end(ap);
    gm_text_escape(raw, cell, 4 * len); /* names in cells: control bytes escaped */
    free(raw);
    if (GM_VEC_RESERVE(t->cells, t->cap, t->ncells + 1, 64))
        cli_out_of_memory();
    t->cells[t->ncells++] = cell;
}

/* Display width: count UTF-8 lead bytes, so "µs" is two columns. */
static size_t cli_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

void gm__cli_table_print(const gm__cli_table_t *t, FILE *f, const char *indent)
{
    size_t width[32] = {0};
    size_t ncols = t->ncols < 32 ? t->ncols : 32;
    for (size_t i = 0; i < t->ncells; i++) {
        size_t w = cli_width(t->cells[i]);
        if (w > width[i % t->ncols] && i % t->ncols < ncols)
            width[i % t->ncols] = w;
    }
    for (size_t i = 0; i < t->ncells; i++) {
        size_t c = i % t->ncols;
        const char *cell = t->cells[i];
        size_t pad = c < ncols ? width[c] - cli_width(cell) : 0;
        int last = c + 1 == t->ncols || i + 1 == t->ncells;
        if (c == 0 && indent)
            fputs(indent, f);
        if (t->align[c] == 'r')
            fprintf(f, "%*s%s", (int)pad, "", cell);
        else
            fprintf(f, "%s%*s", cell, last ? 0 : (int)pad, "");
        fputs(last ? "\n" : "  ", f);
    }
}

void gm__cli_table_release(gm__cli_table_t *t)
{
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t->align);
    memset(t, 0, sizeof *t);
}

static struct sigaction cli_old_xfsz;
static int cli_xfsz_saved;

void gm__cli_ignore_xfsz(void)
{
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    cli_xfsz_saved = sigaction(SIGXFSZ, &ign, &cli_old_xfsz) == 0;
}

void gm__cli_restore_xfsz(void)
{
    if (cli_xfsz_saved)
        sigaction(SIGXFSZ, &cli_old_xfsz, NULL);
}

const char *gm__cli_strerror(int e)
{
    static char buf[256];
    return gm_errno_text(e, buf, sizeof buf);
}

const char *gm__cli_s(const char *s)
{
    static char bufs[8][1024];
    static unsigned next;
    return gm_text_escape(s, bufs[next++ % 8], sizeof bufs[0]);
}

const char *gm__cli_size(uint64_t bytes)
{
    static char bufs[8][32];
    static unsigned next;
    char *b = bufs[next++ % 8];
    gm_format_size(bytes, b, sizeof bufs[0]);
    return b;
}

void gm__cli_plan_line(const char *name, const gm_plan_info_t *pi)
{
    printf("'%s' plan: %s, %s", gm__cli_s(name), gm_plan_status_name(pi->status),
           gm__cli_size(pi->peak));
    if (pi->status == GM_PLAN_OPTIMAL)
        printf(" (proved: no plan needs fewer bytes)");
    else
        printf(", %.2f%% above the lower bound %s (not proved optimal)",
               100.0 * gm_plan_gap(pi),
               gm__cli_size(pi->lower_bound));
    if (pi->capacity)
        printf("; capacity %s %s", gm__cli_size(pi->capacity),
               pi->peak <= pi->capacity ? "met" : "not met");
    printf("\n");
}

/* ---- device capacities ------------------------------------------------------ */

int gm__cli_capacity_twice(const char *usage)
{
    return gm__cli_usage_error(usage, "the capacity given twice (--capacity SIZE or --device "
                                      "NAME, once)");
}

/* The device of this command (one verb per process): what --capacity or
 * --device gave, and --reserve. */
static gm__cli_device_t cli_device;

const gm__cli_device_t *gm__cli_device(void) { return &cli_device; }

/* A bare number (digits, maybe a fraction, no unit) below 1 MiB is no
 * device anyone has: "--capacity 80" meant 80 GiB, not 80 bytes. */
static int cli_bare_small(const char *usage, const char *opt, const char *text, uint64_t bytes)
{
    if (text[strspn(text, "0123456789.")] != '\0' || bytes >= (UINT64_C(1) << 20))
        return 0;
    return gm__cli_usage_error(usage,
                               "invalid value for %s: '%s' has no unit, so it is %s; did you "
                               "mean '%sGiB'?",
                               opt, text, gm__cli_size(bytes), text);
}

/* The device record for a capacity of `total` bytes from preset gpu (NULL
 * for a size): the usable capacity into *out. */
static void cli_device_set(const gm_gpu_preset_t *gpu, uint64_t total, uint64_t *out)
{
    cli_device.given = 1;
    cli_device.preset = gpu;
    cli_device.total = total;
    if (!cli_device.reserve_given)
        cli_device.reserve = gpu ? gpu->reserve : 0;
    *out = total > cli_device.reserve ? total - cli_device.reserve : total;
}

int gm__cli_capacity_arg(const char *usage, const char *opt, const char *text, uint64_t *out)
{
    gm_error_t err = {0};
    gm_gpu_lookup_t l;
    if (gm_gpu_lookup(text, &l) == 0) {
        if (l.alias) {
            /* a short name: say which board it became, and what else it could be */
            fflush(stdout);
            fprintf(stderr, "gmsim: note: %s '%s' is '%s' (%s, %s)", opt, gm__cli_s(text),
                    l.preset->name, l.preset->desc, gm__cli_size(l.preset->capacity));
            if (l.others)
                fprintf(stderr, "; for another give %s", l.others);
            fputc('\n', stderr);
        }
        cli_device_set(l.preset, l.preset->capacity, out);
        return 0;
    }
    if (gm_parse_size(text, out, &err) == 0 && *out > 0) {
        if (cli_bare_small(usage, opt, text, *out))
            return GM_CLI_USAGE;
        cli_device_set(NULL, *out, out);
        return 0;
    }
    if (l.ambiguous)
        return gm__cli_usage_error(usage,
                                   "invalid value for %s: '%s' could be any of %s (see 'gmsim "
                                   "devices')",
                                   opt, text, l.candidates);
    char msg[GM_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg,
             "invalid value for %s: '%s' is neither a size nor a device (see 'gmsim devices')",
             opt, text);
    if (l.candidates[0] != '\0') {
        size_t used = strlen(msg);
        snprintf(msg + used, sizeof msg - used, "; did you mean %s?", l.candidates);
    }
    return gm__cli_usage_error(usage, "%s", msg);
}

int gm__cli_size_capacity_arg(const char *usage, const char *text, uint64_t *out)
{
    int rc = gm__cli_size_arg(usage, "--capacity", text, out);
    if (rc == 0 && *out == 0)
        rc = gm__cli_usage_error(usage,
                                 "invalid value for --capacity: '%s' is no bytes (leave "
                                 "--capacity out for an unlimited device)",
                                 text);
    if (rc == 0 && cli_bare_small(usage, "--capacity", text, *out))
        rc = GM_CLI_USAGE;
    if (rc == 0)
        cli_device_set(NULL, *out, out);
    return rc;
}

int gm__cli_reserve_arg(const char *usage, const char *text)
{
    uint64_t v;
    int rc = gm__cli_size_arg(usage, "--reserve", text, &v);
    if (rc == 0 && v > 0 && cli_bare_small(usage, "--reserve", text, v))
        rc = GM_CLI_USAGE;
    if (rc == 0) {
        cli_device.reserve = v;
        cli_device.reserve_given = 1;
    }
    return rc;
}

int gm__cli_device_usable(const char *usage, uint64_t *capacity)
{
    if (!cli_device.given) {
        if (cli_device.reserve_given)
            return gm__cli_usage_error(usage, "--reserve needs --capacity or --device");
        return GM_CLI_OK;
    }
    if (cli_device.reserve >= cli_device.total)
        return gm__cli_usage_error(usage,
                                   "invalid value for --reserve: %s leaves nothing of the "
                                   "device's %s",
                                   gm__cli_size(cli_device.reserve),
                                   gm__cli_size(cli_device.total));
    *capacity = cli_device.total - cli_device.reserve;
    return GM_CLI_OK;
}

int gm__cli_margin_of(uint64_t total, uint64_t reserve, uint64_t peak, char *buf, size_t len)
{
    uint64_t usable = total - reserve;
    int edge = peak <= usable && (double)(usable - peak) < 0.02 * (double)total;
    char rs[64] = "";
    if (reserve)
        snprintf(rs, sizeof rs, " - reserve %s", gm__cli_size(reserve));
    if (peak > usable)
        snprintf(buf, len, "short by %s = peak %s - (%s%s)", gm__cli_size(peak - usable),
                 gm__cli_size(peak), gm__cli_size(total), rs);
    else
        snprintf(buf, len, "margin %s = %s%s - peak %s%s", gm__cli_size(usable - peak),
                 gm__cli_size(total), rs, gm__cli_size(peak),
                 edge ? "; at the edge: within 2% of the device" : "");
    return edge;
}

int gm__cli_margin(uint64_t peak, char *buf, size_t len)
{
    return gm__cli_margin_of(cli_device.total, cli_device.reserve, peak, buf, len);
}

int gm__cli_granularity_arg(const char *usage, const char *text, uint64_t *out)
{
    int rc = gm__cli_size_arg(usage, "--granularity", text, out);
    if (rc == 0 && (*out == 0 || (*out & (*out - 1)) || *out > GM_DEVICE_GRANULARITY_MAX))
        rc = gm__cli_usage_error(usage,
                                 "invalid value for --granularity: '%s' is not a power of two "
                                 "from 1 B to 1 TiB",
                                 text);
    return rc;
}

int gm__cli_devopt(gm__cli_devopts_t *o, const char *usage, int c, const char *arg)
{
    switch (c) {
    case GM__CLI_OPT_CAPACITY:
    case GM__CLI_OPT_DEVICE:
        if (o->once && cli_device.given)
            return gm__cli_capacity_twice(usage);
        if (c == GM__CLI_OPT_DEVICE) { /* a GPU preset's capacity ('gmsim devices') */
            int rc = gm__cli_capacity_arg(usage, "--device", arg, o->capacity);
            o->device = cli_device.preset ? cli_device.preset->name : arg;
            return rc;
        }
        return o->presets ? gm__cli_capacity_arg(usage, "--capacity", arg, o->capacity)
                          : gm__cli_size_capacity_arg(usage, arg, o->capacity);
    case GM__CLI_OPT_RESERVE: return gm__cli_reserve_arg(usage, arg);
    case GM__CLI_OPT_GRANULARITY:
        o->granularity_given = 1;
        return gm__cli_granularity_arg(usage, arg, o->granularity);
    case GM__CLI_OPT_THREADS: return gm__cli_threads_arg(usage, arg, o->threads);
    case GM__CLI_OPT_START:
        o->start_given = arg;
        return gm__cli_start_arg(usage, arg, o->start);
    default: return GM_CLI_ERROR; /* not reached: the rows give one of these */
    }
}

/* ---- configurations ------------------------------------------------------- */

int gm__cli_configs(const char *usage, const gm__cli_policies_t *given,
                    const char *const *params, size_t nparams, const gm_device_config_t *device,
                    gm_params_t **sets, size_t *nsets)
{
    gm_error_t err = {0};
    const gm_policy_ops_t **pol = given->v, **all = NULL;
    size_t npol = given->n;
    if (npol == 0) {
        if ((pol = all = calloc(gm_policy_count() + 1, sizeof *all)) == NULL)
            return gm__cli_error("out of memory");
        gm_policies_select("all", all, &npol, &err);
    }
    int erc = gm_configs_expand(pol, npol, params, nparams, sets, nsets, &err);
    free(all);
    if (erc != 0)
        return err.code == GM_EINVAL ? gm__cli_usage_error(usage, "%s", err.msg)
                                     : gm__cli_error("%s", err.msg);
    int rc = GM_CLI_OK;
    gm_replay_t *probe = NULL;
    gm_replay_config_t cfg;
    gm_replay_config_default(&cfg);
    cfg.device = *device;
    if (gm_replay_create(&cfg, &probe, &err) == 0) {
        for (size_t i = 0; rc == GM_CLI_OK && i < *nsets; i++)
            if (gm_replay_add(probe, &(*sets)[i], &err) != 0)
                rc = err.code == GM_EINVAL ? gm__cli_usage_error(usage, "%s", err.msg)
                                           : gm__cli_error("%s", err.msg);
        gm_replay_destroy(probe);
    }
    return rc;
}
