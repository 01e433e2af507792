/*
 * cli/cmd_import.c — `gmsim import FILE -o DB [--format FMT] [--name NAME]
 * [--replace]`.
 *
 * Import formats are a registry (CMD_IMPORT_FORMATS): each has a name, a
 * one-line description, the library's importer and a content sniffer for
 * `--format auto` (the default).  Auto detection reads the first
 * CMD_IMPORT_HEAD bytes; a non-seekable input (a pipe, stdin) is spooled to
 * a temporary file first so the importer still sees it from the start.
 * Adding a format is one X line and, where needed, one sniffer.
 *
 * The trace is named after the file's base name without its extension
 * ("runs/step1.csv" → "step1") unless --name; stdin gives "stdin".  A
 * failed import leaves the store as it was (gm__cli_write_trace).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define CMD_IMPORT_HEAD 4096

static const char import_usage[] =
    "usage: gmsim import FILE -o DB [--format FMT] [--name NAME] [--replace] [--json]\n"
    "\n"
    "Read a trace file and store it as a new trace in the store DB (created if\n"
    "missing).  FILE '-' reads standard input.\n"
    "\n"
    "options:\n"
    "  -o, --output DB     the store to write into (required)\n"
    "  -f, --format FMT    the input format: auto (the default: detect it from\n"
    "                      the content) or csv\n"
    "  -n, --name NAME     the trace's name (default: FILE's base name without\n"
    "                      its extension, 'stdin' for standard input)\n"
    "      --replace       replace a trace of the same name\n"
    "      --json          report the stored trace as JSON (as 'gmsim info --json')\n"
    "  -h, --help          show this help\n"
    "\n"
    "The formats are described in docs/formats.md.  On any error nothing is\n"
    "written: the store is left as it was.\n";

typedef int (*import_fn)(FILE *in, const char *filename, gm_writer_t *w, gm_error_t *err);
typedef int (*import_sniff_fn)(const char *head, size_t len);

static int import_sniff_csv(const char *head, size_t len);

/* X(name, description, importer, sniffer) */
#define CMD_IMPORT_FORMATS(X) \
    X(csv, "ts_ns,op,id,size,stream,device rows", gm_csv_import, import_sniff_csv)

typedef struct import_format {
    const char *name;
    const char *help;
    import_fn import;
    import_sniff_fn sniff;
} import_format_t;

static const import_format_t import_formats[] = {
#define IMPORT_ENTRY(name, help, fn, sniff) {#name, help, fn, sniff},
    CMD_IMPORT_FORMATS(IMPORT_ENTRY)
#undef IMPORT_ENTRY
};

#define IMPORT_NFORMATS (sizeof import_formats / sizeof import_formats[0])

/* CSV: the first line that is not blank or a comment is a header (its
 * second field is "op") or a row whose second field is a known op. */
static int import_sniff_csv(const char *head, size_t len)
{
    if (memchr(head, '\0', len) != NULL)
        return 0;
    const char *p = head, *end = head + len;
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
        p += 3;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        const char *q = p;
        while (q < e && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == e || *q == '#') {
            p = nl ? nl + 1 : end;
            continue;
        }
        /* The op is the second field. */
        const char *c = memchr(q, ',', (size_t)(e - q));
        if (c == NULL)
            return 0;
        char op[16];
        size_t k = 0;
        for (const char *s = c + 1; s < e && *s != ',' && k + 1 < sizeof op; s++)
            if (*s != ' ' && *s != '\t')
                op[k++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
        op[k] = '\0';
        return gm_op_parse(op) >= 0 || strcmp(op, "op") == 0; /* a row, or a header */
    }
    return 0;
}

static const import_format_t *import_find(const char *name)
{
    for (size_t i = 0; i < IMPORT_NFORMATS; i++)
        if (strcmp(import_formats[i].name, name) == 0)
            return &import_formats[i];
    return NULL;
}

/* "auto, csv, …" for messages. */
static void import_format_names(char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "auto");
    for (size_t i = 0; i < IMPORT_NFORMATS && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, ", %s", import_formats[i].name);
}

/* Detect the format of *in (which may be replaced by a spooled copy).
 * NULL with a message printed when none matches or the input fails. */
static const import_format_t *import_detect(FILE **in, const char *shown)
{
    char head[CMD_IMPORT_HEAD];
    size_t n = fread(head, 1, sizeof head, *in);
    if (ferror(*in)) {
        gm__cli_error("cannot read '%s': %s", shown, gm__cli_strerror(errno));
        return NULL;
    }
    if (fseek(*in, 0, SEEK_SET) != 0) {
        /* Not seekable: keep what was read and the rest in a temporary file. */
        FILE *tmp = tmpfile();
        if (tmp == NULL) {
            gm__cli_error("cannot create a temporary file: %s", gm__cli_strerror(errno));
            return NULL;
        }
        char buf[65536];
        size_t k = n;
        memcpy(buf, head, n);
        do {
            if (fwrite(buf, 1, k, tmp) != k) {
                gm__cli_error("cannot spool '%s' to a temporary file: %s", shown,
                              gm__cli_strerror(errno));
                fclose(tmp);
                return NULL;
            }
        } while ((k = fread(buf, 1, sizeof buf, *in)) > 0);
        if (ferror(*in) || fseek(tmp, 0, SEEK_SET) != 0) {
            gm__cli_error("cannot read '%s': %s", shown, gm__cli_strerror(errno));
            fclose(tmp);
            return NULL;
        }
        if (*in != stdin)
            fclose(*in);
        *in = tmp;
    }
    for (size_t i = 0; i < IMPORT_NFORMATS; i++)
        if (import_formats[i].sniff && import_formats[i].sniff(head, n))
            return &import_formats[i];
    char names[128];
    import_format_names(names, sizeof names);
    gm__cli_error("cannot detect the format of '%s' (choose one with --format: %s)", shown,
                  names);
    return NULL;
}

/* The default trace name: the base name without its last extension. */
static char *import_default_name(const char *path)
{
    if (strcmp(path, "-") == 0)
        return strdup("stdin");
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *name = strdup(*base ? base : path);
    if (name == NULL)
        return NULL;
    char *dot = strrchr(name, '.');
    if (dot != NULL && dot != name)
        *dot = '\0';
    return name;
}

typedef struct import_ctx {
    const import_format_t *fmt;
    FILE *in;
    const char *shown; /* the input's name in messages */
    const char *path;  /* NULL for stdin */
} import_ctx_t;

static int import_fill(gm_writer_t *w, void *ctx, gm_error_t *err)
{
    import_ctx_t *c = ctx;
    int rc = 0;
    if (c->path != NULL)
        rc = gm_writer_attr_str(w, "file", c->path, err);
    if (rc == 0) {
        gm__cli_status("importing '%s'...", c->shown);
        rc = c->fmt->import(c->in, c->shown, w, err);
    }
    return rc;
}

int gm__cmd_import(int argc, char **argv)
{
    enum { OPT_REPLACE = 256, OPT_JSON };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'f'},
        {"name", required_argument, NULL, 'n'},   {"replace", no_argument, NULL, OPT_REPLACE},
        {"json", no_argument, NULL, OPT_JSON},    {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL, *format = "auto", *name = NULL;
    unsigned flags = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:f:n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': db = optarg; break;
        case 'f': format = optarg; break;
        case 'n': name = optarg; break;
        case OPT_REPLACE: flags |= GM__CLI_REPLACE; break;
        case OPT_JSON: flags |= GM__CLI_JSON; break;
        case 'h': return gm__cli_help(import_usage);
        default: return gm__cli_option_error(import_usage, argv, c);
        }
    }
    if (optind >= argc)
        return gm__cli_usage_error(import_usage, "missing the file to import");
    if (argc - optind > 1)
        return gm__cli_usage_error(import_usage, "too many arguments: '%s'", argv[optind + 1]);
    if (db == NULL)
        return gm__cli_usage_error(import_usage, "missing the store to write (-o DB)");
    if (name != NULL && name[0] == '\0')
        return gm__cli_usage_error(import_usage, "invalid value for --name: empty name");
    const import_format_t *fmt = NULL;
    if (strcmp(format, "auto") != 0 && (fmt = import_find(format)) == NULL) {
        char names[128];
        import_format_names(names, sizeof names);
        return gm__cli_usage_error(import_usage, "unknown format '%s' (known: %s)", format,
                                   names);
    }

    const char *path = argv[optind];
    int is_stdin = strcmp(path, "-") == 0;
    import_ctx_t ctx = {.shown = is_stdin ? "<stdin>" : path, .path = is_stdin ? NULL : path};
    ctx.in = is_stdin ? stdin : fopen(path, "rb");
    if (ctx.in == NULL)
        return gm__cli_error("cannot open '%s': %s", path, gm__cli_strerror(errno));
    if (fmt == NULL)
        fmt = import_detect(&ctx.in, ctx.shown);
    int rc = GM_CLI_ERROR;
    char *owned = NULL;
    if (fmt != NULL) {
        ctx.fmt = fmt;
        if (name == NULL)
            name = owned = import_default_name(path);
        rc = name ? gm__cli_write_trace(db, name, flags, "imported", import_fill, &ctx)
                  : gm__cli_error("out of memory");
    }
    if (ctx.in != stdin)
        fclose(ctx.in);
    free(owned);
    return rc;
}
