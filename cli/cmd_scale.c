/*
 * cli/cmd_scale.c — `gmsim scale CAPTURE CAPTURE [CAPTURE...] [--at
 * seq=N,N...] [--at batch=N,N...] (--seq LIST | --batch LIST) -o DB
 * [--base N] [--prefix NAME] [--min-matched PCT] [--force] [--replace]
 * [--json]`.
 *
 * Each CAPTURE is DB[:TRACE] (TRACE may be left out when DB holds one
 * trace; a path that exists as a file is taken whole, so a DB name with a
 * colon works).  The captures' sizes come from --at (one value per
 * capture, in order) or else from their "seq_len" / "batch" attributes,
 * or else from their trace's or file's name (noted on stderr).
 * The targets are every --seq value times every --batch value (a missing
 * one keeps the base's).  The plan (alignment, laws) is made and every
 * target's sizes predicted before anything is written; the traces are
 * then written one by one, and if one fails those written before it are
 * deleted again (and a store this command created is removed), so a
 * failed command leaves nothing.  Traces are named PREFIX.seqS (and .bB
 * when the batch varies), PREFIX defaulting to the base trace's name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/scaleopt.h"
#include "gmsim/attrs.h"
#include "gmsim/json.h"
#include "gmsim/text.h"
#include "gmsim/scale.h"

#define SCALE_MAX_TARGETS 256
/* A target this far beyond the captures is warned of, and refused past the
 * second (docs/validation.md, "How sure a prediction is"). */
#define SCALE_WARN_BEYOND 4.0
#define SCALE_REFUSE_BEYOND 64

static const char scale_usage[] =
    "usage: gmsim scale CAPTURE CAPTURE [CAPTURE...] (--seq LIST | --batch LIST) -o DB\n"
    "                   [--at seq=LIST] [--at batch=LIST] [--base N] [--prefix NAME]\n"
    "                   [--min-matched PCT] [--force] [--replace] [--json]\n"
    "\n"
    "Predict a captured job at other sequence lengths or batch sizes from two or\n"
    "more captures of it at different sizes.  The captures are aligned with the\n"
    "base capture allocation by allocation (stack frames, marks and the order of\n"
    "operations), each allocation's size law is fitted (constant, c*seq^p*batch^q,\n"
    "a polynomial verified on an extra capture), and the base is written once per\n"
    "target size with every size from its law, tagged with seq_len and batch.\n"
    "CAPTURE is DB[:TRACE]; TRACE may be left out when DB holds one trace.\n"
    "\n"
    "options:\n"
    "      --seq LIST        target sequence lengths, comma-separated (512,1024)\n"
    "      --batch LIST      target batch sizes (default: the base's)\n"
    "  -o, --output DB       the store to write the scaled traces into (required)\n"
    "      --at seq=LIST     the captures' sequence lengths, one per CAPTURE in\n"
    "                        order (default: their seq_len attributes, else what\n"
    "                        their trace or file names say: ctx512, seq_1024)\n"
    "      --at batch=LIST   the captures' batch sizes (default: their batch\n"
    "                        attributes, else their names: bs8, b4)\n"
    "      --base N          the capture (1-based) whose events are scaled\n"
    "                        (default: the largest)\n"
    "      --prefix NAME     name the traces NAME.seqS[.bB] (default: the base\n"
    "                        trace's name)\n"
    "      --min-matched PCT refuse captures whose windows pair fewer allocations\n"
    "                        than PCT percent (default 90)\n"
    "      --force           go on despite poor alignment, captures of different\n"
    "                        precision, contradicting laws or a target past 64x\n"
    "      --replace         replace traces of the same names\n"
    "      --json            report as JSON\n"
    "  -h, --help            show this help\n";

typedef struct scale_list {
    uint64_t v[SCALE_MAX_TARGETS];
    size_t n;
} scale_list_t;

static int scale_list_arg(const char *opt, const char *text, scale_list_t *l)
{
    l->n = 0;
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char buf[32];
        if (len == 0 || len >= sizeof buf)
            return gm__cli_usage_error(scale_usage, "invalid value for %s: '%s'", opt, text);
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (l->n == SCALE_MAX_TARGETS)
            return gm__cli_usage_error(scale_usage, "too many values for %s (at most %d)", opt,
                                       SCALE_MAX_TARGETS);
        if (gm__cli_count_arg(scale_usage, opt, buf, 1, UINT64_C(1) << 40, &l->v[l->n]))
            return GM_CLI_USAGE;
        l->n++;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

/* --seq LIST, --batch LIST: the sizes to predict, into the scale_list_t at to. */
static int scale_targets_arg(void *to, const char *usage, const gm__cli_opt_t *row,
                             const char *arg)
{
    char name[64];
    (void)usage;
    return scale_list_arg(gm__cli_opt_name(row, name, sizeof name), arg, to) ? GM_CLI_USAGE
                                                                             : GM_CLI_OK;
}

/* The captures' sizes given to --at. */
typedef struct scale_at {
    scale_list_t seq, batch;
} scale_at_t;

/* --at seq=LIST|batch=LIST into the scale_at_t at to. */
static int scale_at_arg(void *to, const char *usage, const gm__cli_opt_t *row, const char *arg)
{
    scale_at_t *at = to;
    (void)row;
    if (strncmp(arg, "seq=", 4) == 0)
        return scale_list_arg("--at seq", arg + 4, &at->seq) ? GM_CLI_USAGE : GM_CLI_OK;
    if (strncmp(arg, "batch=", 6) == 0)
        return scale_list_arg("--at batch", arg + 6, &at->batch) ? GM_CLI_USAGE : GM_CLI_OK;
    return gm__cli_usage_error(usage, "invalid value for --at: '%s' (seq=LIST or batch=LIST)",
                               arg);
}

static void scale_remove_store(const char *db)
{
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s%s", db, sfx[i]) < sizeof path)
            unlink(path);
    }
}

typedef struct scale_input {
    char *db;    /* path */
    char *trace; /* name, resolved */
    char *label; /* db:trace */
    gm_store_t *store;
} scale_input_t;

/* The length of DB in DB[:TRACE] (the whole of a path that exists as a
 * file); *trace is set to TRACE, or NULL when absent or empty. */
static size_t scale_split(const char *arg, const char **trace)
{
    struct stat st;
    const char *colon = strrchr(arg, ':');
    *trace = NULL;
    if (stat(arg, &st) == 0 || colon == NULL || colon == arg)
        return strlen(arg);
    if (colon[1] != '\0')
        *trace = colon + 1;
    return (size_t)(colon - arg);
}

/* Split DB[:TRACE], open DB and resolve the trace (usage: the verb's). */
static int scale_open_input(const char *usage, const char *arg, scale_input_t *in)
{
    const char *trace;
    size_t dblen = scale_split(arg, &trace);
    in->db = strndup(arg, dblen);
    if (in->db == NULL)
        return gm__cli_error("out of memory");
    int rc = gm__cli_open_store(in->db, GM_STORE_READONLY, &in->store);
    if (rc)
        return rc;
    if ((rc = gm__cli_pick_trace_as(in->store, usage, trace, 1, &in->trace)))
        return rc;
    size_t n = strlen(in->db) + strlen(in->trace) + 2;
    in->label = malloc(n);
    if (in->label == NULL)
        return gm__cli_error("out of memory");
    snprintf(in->label, n, "%s:%s", in->db, in->trace);
    return 0;
}

/* A capture's seq_len or batch attribute (key), when present as a number,
 * is an integer from 1 to 2^40 (the range --at takes): else refused with
 * the capture named, rather than read as something else. */
static int scale_check_size_attr(const scale_input_t *in, const char *key, const char *at)
{
    gm_trace_info_t info;
    gm_error_t err = {0};
    if (gm_store_find(in->store, in->trace, &info, &err) != 0)
        return gm__cli_error("%s", err.msg);
    char buf[64];
    uint64_t v = 0;
    int rc = GM_CLI_OK;
    if (gm_json_member(info.attrs, key, buf, sizeof buf) && strchr("-0123456789", buf[0]) &&
        (gm_parse_u64(buf, &v) != 0 || v == 0 || v > UINT64_C(1) << 40))
        rc = gm__cli_error("'%s': %s attribute %s out of range (1 to 2^40; give the captures' "
                           "sizes with --at %s=LIST)",
                           in->label, key, buf, at);
    gm_trace_info_release(&info);
    return rc;
}

struct gm__cli_captures {
    size_t n;
    scale_input_t in[GM_SCALE_MAX_CAPTURES];
    gm_scale_plan_t *plan;
};

void gm__cli_captures_close(gm__cli_captures_t *c)
{
    if (c == NULL)
        return;
    gm_scale_plan_destroy(c->plan);
    for (size_t k = 0; k < c->n; k++) {
        if (c->in[k].store)
            gm_store_close(c->in[k].store);
        free(c->in[k].db);
        free(c->in[k].trace);
        free(c->in[k].label);
    }
    free(c);
}

int gm__cli_captures_open(const char *usage, char **args, size_t n, const uint64_t *at_seq,
                          const uint64_t *at_batch, const gm_scale_options_t *opts,
                          gm__cli_captures_t **out)
{
    *out = NULL;
    if (n > GM_SCALE_MAX_CAPTURES)
        return gm__cli_error("too many captures (at most %d)", GM_SCALE_MAX_CAPTURES);
    gm__cli_captures_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return gm__cli_error("out of memory");
    int rc;
    for (size_t k = 0; k < n; k++) {
        c->n = k + 1;
        if ((rc = scale_open_input(usage, args[k], &c->in[k]))) {
            gm__cli_captures_close(c);
            return rc;
        }
    }
    for (size_t k = 0; k < n; k++)
        if ((!at_seq && (rc = scale_check_size_attr(&c->in[k], GM_ATTR_SEQ_LEN, "seq"))) ||
            (!at_batch && (rc = scale_check_size_attr(&c->in[k], GM_ATTR_BATCH, "batch")))) {
            gm__cli_captures_close(c);
            return rc;
        }
    gm_scale_capture_t caps[GM_SCALE_MAX_CAPTURES];
    for (size_t k = 0; k < n; k++)
        caps[k] = (gm_scale_capture_t){c->in[k].store, c->in[k].trace, c->in[k].label,
                                       at_seq ? at_seq[k] : 0, at_batch ? at_batch[k] : 0,
                                       c->in[k].db};
    gm_error_t err = {0};
    if (gm_scale_plan_create(caps, n, opts, &c->plan, &err)) {
        gm__cli_captures_close(c);
        return gm__cli_error("%s", err.msg);
    }
    /* the sizes read from names: said, on stderr (stdout may be JSON) */
    const gm_scale_report_t *r = gm_scale_plan_report(c->plan);
    for (size_t k = 0; k < n; k++) {
        int s = r->seq_from[k] == GM_SCALE_FROM_NAME, b = r->batch_from[k] == GM_SCALE_FROM_NAME;
        if (!s && !b)
            continue;
        fprintf(stderr, "%s:", gm__cli_s(args[k]));
        if (s)
            fprintf(stderr, " seq %" PRIu64 " (from the name '%s')", r->seq[k],
                    gm__cli_s(r->seq_token[k]));
        if (b)
            fprintf(stderr, "%s batch %" PRIu64 " (from the name '%s')", s ? "," : "",
                    r->batch[k], gm__cli_s(r->batch_token[k]));
        fputc('\n', stderr);
    }
    *out = c;
    return GM_CLI_OK;
}

gm_scale_plan_t *gm__cli_captures_plan(const gm__cli_captures_t *c)
{
    return c->plan;
}

const char *gm__cli_captures_label(const gm__cli_captures_t *c, size_t i)
{
    return i < c->n ? c->in[i].label : NULL;
}

const char *gm__cli_captures_trace(const gm__cli_captures_t *c, size_t i)
{
    return i < c->n ? c->in[i].trace : NULL;
}

gm_store_t *gm__cli_captures_store(const gm__cli_captures_t *c, size_t i)
{
    return i < c->n ? c->in[i].store : NULL;
}

int gm__cli_captures_band(const gm__cli_captures_t *c, int vary_seq, uint64_t value,
                          const char *policy, uint64_t peak, uint64_t capacity)
{
    gm_scale_band_t b;
    gm_error_t err = {0};
    if (gm_scale_band(c->plan, vary_seq ? value : 0, vary_seq ? 0 : value, &b, &err))
        return 0;
    uint64_t band = (uint64_t)(b.band * (double)peak + 0.5);
    printf("'%s': %s %" PRIu64 " fits with %s to spare; the band is \xc2\xb1", gm__cli_s(policy),
           vary_seq ? "seq" : "batch", value, gm__cli_size(capacity > peak ? capacity - peak : 0));
    printf("%s (%.1f%%, %.1fx beyond the captures%s)\n", gm__cli_size(band), 100.0 * b.band,
           b.beyond, band > (capacity > peak ? capacity - peak : 0) ? "; within it, it may not fit" : "");
    return 1;
}

/* A size, or "-" when unknown (0); static rotating buffers. */
static const char *scale_num(uint64_t v)
{
    static char buf[4][24];
    static int k;
    char *b = buf[k++ % 4];
    if (v)
        snprintf(b, sizeof buf[0], "%" PRIu64, v);
    else
        snprintf(b, sizeof buf[0], "-");
    return b;
}

/* "seq S, batch B" leaving out an unknown one (static buffer). */
static const char *scale_sizes(uint64_t seq, uint64_t batch)
{
    static char buf[64];
    if (seq && batch)
        snprintf(buf, sizeof buf, "seq %" PRIu64 ", batch %" PRIu64, seq, batch);
    else if (seq)
        snprintf(buf, sizeof buf, "seq %" PRIu64, seq);
    else
        snprintf(buf, sizeof buf, "batch %" PRIu64, batch);
    return buf;
}

/* What the alignment with one capture took as hints: annotations that
 * differ, stacks that differ in the script's own frames. */
static void scale_print_hints(const gm_scale_pairing_t *p, const char *label)
{
    if (p->site_keys)
        printf("  %s: the stacks differ in the script's own frames: aligned on the call sites "
               "below them\n",
               gm__cli_s(label));
    if (p->marks_only_base + p->marks_only_other == 0)
        return;
    printf("  %s: annotations differ (hints, left out of the alignment):", gm__cli_s(label));
    uint64_t listed = 0;
    for (size_t i = 0; i < p->nnotes; i++) {
        const gm_align_note_t *x = &p->notes[i];
        printf("%s '%s'", i ? ";" : "", gm__cli_s(x->name));
        if (x->in_a)
            printf(" %" PRIu64 " in the base only", (uint64_t)x->in_a);
        if (x->in_b)
            printf("%s %" PRIu64 " in this capture only", x->in_a ? "," : "", (uint64_t)x->in_b);
        listed += x->in_a + x->in_b;
    }
    uint64_t all = p->marks_only_base + p->marks_only_other;
    if (listed < all)
        printf("; %" PRIu64 " more", all - listed);
    printf("\n");
}

static void scale_print_report(const gm_scale_report_t *r, const scale_input_t *in)
{
    printf("base '%s' (%s): %" PRIu64 " allocations, %s requested in all\n", gm__cli_s(in[r->base].label),
           scale_sizes(r->seq[r->base], r->batch[r->base]), r->allocs, gm__cli_size(r->bytes));
    gm__cli_table_t t;
    gm__cli_table_head(&t, "lrrrrr", "capture", "seq", "batch", "paired", "window", "share", NULL);
    for (size_t k = 0; k < r->ncaptures; k++) {
        if (k == r->base)
            continue;
        const gm_scale_pairing_t *p = &r->pairing[k];
        gm__cli_table_cell(&t, "%s", gm__cli_s(in[k].label));
        gm__cli_table_cell(&t, "%s", scale_num(r->seq[k]));
        gm__cli_table_cell(&t, "%s", scale_num(r->batch[k]));
        gm__cli_table_cell(&t, "%" PRIu64, p->matched);
        gm__cli_table_cell(&t, "%" PRIu64,
                           p->window_base > p->window_other ? p->window_base : p->window_other);
        gm__cli_table_cell(&t, "%.1f%%", 100.0 * p->share);
    }
    printf("\nalignment with the base\n");
    gm__cli_table_print(&t, stdout, "  ");
    gm__cli_table_release(&t);
    for (size_t k = 0; k < r->ncaptures; k++)
        if (k != r->base && r->pairing[k].where[0])
            printf("  %s: longest unpaired run at %s\n", gm__cli_s(in[k].label),
                   gm__cli_s(r->pairing[k].where));
    for (size_t k = 0; k < r->ncaptures; k++)
        if (k != r->base)
            scale_print_hints(&r->pairing[k], in[k].label);

    gm__cli_table_init(&t, 4, "lrrr");
    gm__cli_table_cell(&t, "law");
    gm__cli_table_cell(&t, "allocations");
    gm__cli_table_cell(&t, "bytes");
    gm__cli_table_cell(&t, "of bytes");
    for (unsigned l = 0; l < GM_SCALE_LAW_COUNT; l++) {
        gm__cli_table_cell(&t, "%s", gm_scale_law_name(l));
        gm__cli_table_cell(&t, "%" PRIu64, r->law_allocs[l]);
        gm__cli_table_cell(&t, "%s", gm__cli_size(r->law_bytes[l]));
        gm__cli_table_cell(&t, "%.2f%%",
                           r->bytes ? 100.0 * (double)r->law_bytes[l] / (double)r->bytes : 0.0);
    }
    printf("\nsize laws\n");
    gm__cli_table_print(&t, stdout, "  ");
    gm__cli_table_release(&t);
    if (r->vary_seq) {
        printf("  seq exponents:");
        for (int p = 0; p < 9; p++)
            if (r->power_p[p])
                printf(" p=%d: %" PRIu64, p - 4, r->power_p[p]);
        printf("\n");
    }
    if (r->vary_batch) {
        printf("  batch exponents:");
        for (int q = 0; q < 9; q++)
            if (r->power_q[q])
                printf(" q=%d: %" PRIu64, q - 4, r->power_q[q]);
        printf("\n");
    }
    printf("  pre-existing: %" PRIu64 " of %" PRIu64 " paired\n", r->preexisting_paired,
           r->preexisting);
    if (r->count_groups)
        printf("  pre-existing by count: %" PRIu64 " allocation%s in %" PRIu64 " group%s whose "
               "number follows the size (a count law; %" PRIu64 " verified on a further "
               "capture): each target holds its own count\n",
               r->count_allocs, r->count_allocs == 1 ? "" : "s", r->count_groups,
               r->count_groups == 1 ? "" : "s", r->count_verified);
    if (r->count_unsure)
        printf("  pre-existing whose number differs among the captures but follows no law: "
               "%" PRIu64 " (kept at the base's count)\n",
               r->count_unsure);
    if (r->contradicting)
        printf("  contradicting (forced, kept at their captured size): %" PRIu64 "\n",
               r->contradicting);
    if (r->nnone_sites > 0) {
        printf("  following no law (kept at their captured size), by call site:\n");
        for (size_t i = 0; i < r->nnone_sites; i++)
            printf("    %" PRIu64 " allocation%s, %s: first %s\n", r->none_sites[i].allocs,
                   r->none_sites[i].allocs == 1 ? "" : "s", gm__cli_size(r->none_sites[i].bytes),
                   gm__cli_s(r->none_sites[i].where));
        uint64_t listed = 0;
        for (size_t i = 0; i < r->nnone_sites; i++)
            listed += r->none_sites[i].allocs;
        if (listed < r->law_allocs[GM_SCALE_LAW_NONE])
            printf("    (the %d call sites of the most bytes; %" PRIu64 " allocations more)\n",
                   GM_SCALE_NONE_SITES, r->law_allocs[GM_SCALE_LAW_NONE] - listed);
    }
}

/* How many allocations follow each exponent -4 to 4 of a size law (counts[e + 4]), the
 * nonzero ones as the member `key`: {"-1": N, "1": M, ...}. */
static void scale_json_exponents(gm_json_t *j, const char *key, const uint64_t *counts)
{
    gm_json_key(j, key);
    gm_json_begin_object(j);
    for (int e = 0; e < 9; e++)
        if (counts[e]) {
            char k[8];
            snprintf(k, sizeof k, "%d", e - 4);
            gm_json_kv_u64(j, k, counts[e]);
        }
    gm_json_end_object(j);
}

static void scale_json_report(gm_json_t *j, const gm_scale_report_t *r, const scale_input_t *in)
{
    gm_json_kv_str(j, "base", in[r->base].label);
    gm_json_key(j, "captures");
    gm_json_begin_array(j);
    for (size_t k = 0; k < r->ncaptures; k++) {
        gm_json_begin_object(j);
        gm_json_kv_str(j, "trace", in[k].label);
        if (r->seq[k])
            gm_json_kv_u64(j, "seq_len", r->seq[k]);
        if (r->batch[k])
            gm_json_kv_u64(j, "batch", r->batch[k]);
        if (r->seq_from[k] == GM_SCALE_FROM_NAME)
            gm_json_kv_str(j, "seq_from_name", r->seq_token[k]);
        if (r->batch_from[k] == GM_SCALE_FROM_NAME)
            gm_json_kv_str(j, "batch_from_name", r->batch_token[k]);
        if (k != r->base) {
            const gm_scale_pairing_t *p = &r->pairing[k];
            gm_json_kv_u64(j, "paired", p->matched);
            gm_json_kv_u64(j, "paired_by_law", p->matched_size);
            gm_json_kv_u64(j, "window_base", p->window_base);
            gm_json_kv_u64(j, "window", p->window_other);
            gm_json_kv_double(j, "share", p->share);
            gm_json_kv_u64(j, "against_sizes", p->against);
            gm_json_kv_str(j, "breaks_at", p->where[0] ? p->where : NULL);
            gm_json_kv_bool(j, "site_keys", p->site_keys);
            gm_json_key(j, "annotations_differ");
            gm_json_begin_object(j);
            gm_json_kv_u64(j, "base_only", p->marks_only_base);
            gm_json_kv_u64(j, "other_only", p->marks_only_other);
            gm_json_key(j, "names");
            gm_json_begin_array(j);
            for (size_t i = 0; i < p->nnotes; i++) {
                gm_json_begin_object(j);
                gm_json_kv_str(j, "name", p->notes[i].name);
                gm_json_kv_u64(j, "base_only", p->notes[i].in_a);
                gm_json_kv_u64(j, "other_only", p->notes[i].in_b);
                gm_json_end_object(j);
            }
            gm_json_end_array(j);
            gm_json_end_object(j);
        }
        gm_json_end_object(j);
    }
    gm_json_end_array(j);
    gm_json_kv_u64(j, "allocations", r->allocs);
    gm_json_kv_u64(j, "bytes", r->bytes);
    gm_json_key(j, "laws");
    gm_json_begin_object(j);
    for (unsigned l = 0; l < GM_SCALE_LAW_COUNT; l++) {
        gm_json_key(j, gm_scale_law_name(l));
        gm_json_begin_object(j);
        gm_json_kv_u64(j, "allocations", r->law_allocs[l]);
        gm_json_kv_u64(j, "bytes", r->law_bytes[l]);
        gm_json_kv_double(j, "share", r->bytes ? (double)r->law_bytes[l] / (double)r->bytes : 0.0);
        gm_json_end_object(j);
    }
    gm_json_end_object(j);
    scale_json_exponents(j, "seq_exponents", r->power_p);
    scale_json_exponents(j, "batch_exponents", r->power_q);
    gm_json_kv_u64(j, "preexisting", r->preexisting);
    gm_json_kv_u64(j, "preexisting_paired", r->preexisting_paired);
    gm_json_kv_u64(j, "preexisting_by_count", r->count_allocs);
    gm_json_kv_u64(j, "count_groups", r->count_groups);
    gm_json_kv_u64(j, "count_verified", r->count_verified);
    gm_json_kv_u64(j, "count_unsure", r->count_unsure);
    gm_json_kv_u64(j, "contradicting", r->contradicting);
    gm_json_kv_str(j, "first_without_law", r->none_first >= 0 ? r->none_where : NULL);
    gm_json_key(j, "without_law_by_site");
    gm_json_begin_array(j);
    for (size_t i = 0; i < r->nnone_sites; i++) {
        gm_json_begin_object(j);
        gm_json_kv_u64(j, "allocations", r->none_sites[i].allocs);
        gm_json_kv_u64(j, "bytes", r->none_sites[i].bytes);
        gm_json_kv_str(j, "first", r->none_sites[i].where);
        gm_json_end_object(j);
    }
    gm_json_end_array(j);
}

/* How sure each target's prediction is (gm_scale_band): the band on its
 * load (peak requested) and where it comes from. */
static void scale_print_bands(gm_store_t *dst, char *const *names, const gm_scale_band_t *bands,
                              size_t n)
{
    gm__cli_table_t t;
    gm__cli_table_head(&t, "lrrrrrr", "trace", "beyond", "verified", "two-point", "captured size",
                       "band", "on the load", NULL);
    for (size_t i = 0; i < n; i++) {
        const gm_scale_band_t *b = &bands[i];
        double tot = b->bytes ? (double)b->bytes : 1.0;
        gm_trace_info_t info;
        gm_error_t err;
        uint64_t load = 0;
        if (gm_store_find(dst, names[i], &info, &err) == 0) {
            load = info.load;
            gm_trace_info_release(&info);
        }
        gm__cli_table_cell(&t, "%s", gm__cli_s(names[i]));
        gm__cli_table_cell(&t, "%.1fx", b->beyond);
        gm__cli_table_cell(&t, "%.1f%%", 100.0 * (double)b->verified / tot);
        gm__cli_table_cell(&t, "%.1f%%", 100.0 * (double)b->two_point / tot);
        gm__cli_table_cell(&t, "%.2f%% (%s)", 100.0 * (double)b->captured / tot,
                           gm__cli_size(b->captured));
        gm__cli_table_cell(&t, "\xc2\xb1%.1f%%", 100.0 * b->band);
        gm__cli_table_cell(&t, "\xc2\xb1%s", gm__cli_size((uint64_t)(b->band * (double)load + 0.5)));
    }
    printf("\nhow sure: how far beyond the captures, the predicted bytes by law, the band\n");
    gm__cli_table_print(&t, stdout, "  ");
    gm__cli_table_release(&t);
}

static void scale_json_band(gm_json_t *j, const char *name, const gm_scale_band_t *b)
{
    gm_json_begin_object(j);
    gm_json_kv_str(j, "trace", name);
    gm_json_kv_double(j, "beyond", b->beyond);
    gm_json_kv_u64(j, "bytes", b->bytes);
    gm_json_kv_u64(j, "verified_bytes", b->verified);
    gm_json_kv_u64(j, "two_point_bytes", b->two_point);
    gm_json_kv_u64(j, "captured_bytes", b->captured);
    gm_json_kv_u64(j, "captured_allocations", b->captured_allocs);
    gm_json_kv_u64(j, "by_count_allocations", b->count_allocs);
    gm_json_kv_double(j, "band", b->band);
    gm_json_end_object(j);
}

int gm__cmd_scale(int argc, char **argv)
{
    scale_list_t tseq = {0}, tbatch = {0};
    scale_at_t at;
    memset(&at, 0, sizeof at);
    const char *output = NULL, *prefix = NULL;
    uint64_t base = 0, minpct = 90;
    int force = 0, replace = 0, json = 0, rc;
    const gm__cli_opt_t opts[] = {
        GM__CLI_OPT("seq", 0, GM__CLI_CALL, &tseq, .fn = scale_targets_arg, .value = 1),
        GM__CLI_OPT("batch", 0, GM__CLI_CALL, &tbatch, .fn = scale_targets_arg, .value = 1),
        GM__CLI_OPT("at", 0, GM__CLI_CALL, &at, .fn = scale_at_arg, .value = 1),
        GM__CLI_OPT("base", 0, GM__CLI_COUNT, &base, .lo = 1, .hi = GM_SCALE_MAX_CAPTURES),
        GM__CLI_OPT("prefix", 0, GM__CLI_STR, &prefix),
        GM__CLI_OPT("min-matched", 0, GM__CLI_COUNT, &minpct, .lo = 1, .hi = 100),
        GM__CLI_OPT("force", 0, GM__CLI_FLAG, &force),
        GM__CLI_OPT("replace", 0, GM__CLI_FLAG, &replace),
        GM__CLI_OPT("json", 0, GM__CLI_FLAG, &json),
        GM__CLI_OPT("output", 'o', GM__CLI_STR, &output),
        GM__CLI_OPTS_END,
    };
    if (gm__cli_parse(opts, scale_usage, argc, argv, &rc))
        return rc;
    size_t n = (size_t)(argc - optind);
    if (n < 2)
        return gm__cli_usage_error(scale_usage,
                                   n ? "one capture only: scaling needs two or more captures of "
                                       "the job at different sizes"
                                     : "missing the captures (CAPTURE CAPTURE...)");
    if (n > GM_SCALE_MAX_CAPTURES)
        return gm__cli_usage_error(scale_usage, "too many captures (at most %d)",
                                   GM_SCALE_MAX_CAPTURES);
    if (output == NULL)
        return gm__cli_usage_error(scale_usage, "missing the output store (-o DB)");
    if (tseq.n == 0 && tbatch.n == 0)
        return gm__cli_usage_error(scale_usage, "missing the target sizes (--seq or --batch)");
    if (at.seq.n && at.seq.n != n)
        return gm__cli_usage_error(scale_usage, "--at seq gives %zu values for %zu captures",
                                   at.seq.n, n);
    if (at.batch.n && at.batch.n != n)
        return gm__cli_usage_error(scale_usage, "--at batch gives %zu values for %zu captures",
                                   at.batch.n, n);
    if (base > n)
        return gm__cli_usage_error(scale_usage, "--base %" PRIu64 " out of range (1 to %zu)",
                                   base, n);
    if (prefix != NULL && *prefix == '\0')
        return gm__cli_usage_error(scale_usage, "empty --prefix");

    /* the output is none of the captures' stores (nor their -wal etc.):
     * writing there would add traces to a capture */
    char *dbs[GM_SCALE_MAX_CAPTURES];
    rc = GM_CLI_OK;
    for (size_t k = 0; k < n; k++) {
        const char *trace;
        dbs[k] = strndup(argv[optind + (int)k], scale_split(argv[optind + (int)k], &trace));
        if (dbs[k] == NULL && rc == GM_CLI_OK)
            rc = gm__cli_error("out of memory");
    }
    if (rc == GM_CLI_OK)
        rc = gm__cli_check_output(scale_usage, output, (const char *const *)dbs, n);
    for (size_t k = 0; k < n; k++)
        free(dbs[k]);
    if (rc != GM_CLI_OK)
        return rc;

    gm__cli_captures_t *cap = NULL;
    gm_scale_plan_t *plan = NULL;
    gm_store_t *dst = NULL;
    gm_error_t err = {0};
    char **names = NULL;
    gm_scale_band_t *bands = NULL;
    int batch_noted = 0;
    size_t nwritten = 0, ntargets = 0;
    int existed = 0;
    gm_scale_options_t o = {.base = base ? (int)base - 1 : -1,
                            .min_matched = (double)minpct / 100.0,
                            .force = force};
    if ((rc = gm__cli_captures_open(scale_usage, argv + optind, n, at.seq.n ? at.seq.v : NULL,
                                    at.batch.n ? at.batch.v : NULL, &o, &cap)))
        goto done;
    plan = gm__cli_captures_plan(cap);
    const scale_input_t *in = cap->in;
    const gm_scale_report_t *rep = gm_scale_plan_report(plan);
    if (rep->bytes && rep->law_bytes[GM_SCALE_LAW_NONE] * 100 >= rep->bytes)
        fprintf(stderr, "gmsim: warning: %" PRIu64 " allocations, %s (%.1f%% of the base's "
                        "bytes), follow no law (paired in no other capture, and no law at "
                        "their call sites): every target keeps them at their captured size\n",
                rep->law_allocs[GM_SCALE_LAW_NONE],
                gm__cli_size(rep->law_bytes[GM_SCALE_LAW_NONE]),
                100.0 * (double)rep->law_bytes[GM_SCALE_LAW_NONE] / (double)rep->bytes);
    size_t ns = tseq.n ? tseq.n : 1, nb = tbatch.n ? tbatch.n : 1;
    ntargets = ns * nb;
    names = calloc(ntargets, sizeof *names);
    bands = calloc(ntargets, sizeof *bands);
    if (names == NULL || bands == NULL) {
        rc = gm__cli_error("out of memory");
        goto done;
    }
    /* names, and every target checked and predicted before writing */
    const char *pfx = prefix ? prefix : in[rep->base].trace;
    for (size_t i = 0; i < ntargets; i++) {
        uint64_t s = tseq.n ? tseq.v[i / nb] : 0, b = tbatch.n ? tbatch.v[i % nb] : 0;
        if (gm_scale_check_target(plan, s, b, &err)) {
            rc = gm__cli_error("%s", err.msg);
            goto done;
        }
        /* every allocation predicted, and how sure that is */
        if (gm_scale_band(plan, s, b, &bands[i], &err)) {
            rc = gm__cli_error("%s", err.msg);
            goto done;
        }
        if (bands[i].beyond > SCALE_REFUSE_BEYOND && !force) {
            rc = gm__cli_error("%s is %.1fx beyond the captures (more than %dx): its laws are "
                               "checked nowhere near it; capture nearer the target (--force to "
                               "go on)",
                               scale_sizes(s ? s : rep->seq[rep->base], b ? b : rep->batch[rep->base]),
                               bands[i].beyond, SCALE_REFUSE_BEYOND);
            goto done;
        }
        if (b && b != rep->batch[rep->base] && !batch_noted) {
            batch_noted = 1;
            fprintf(stderr, "gmsim: note: scaling the batch is verified on synthesized traces "
                            "only, not yet on real captures at several batch sizes "
                            "(docs/validation.md)\n");
        }
        if (bands[i].beyond > SCALE_WARN_BEYOND)
            fprintf(stderr, "gmsim: warning: %s is %.1fx beyond the captures: the band is "
                            "\xc2\xb1%.1f%%\n",
                    scale_sizes(s ? s : rep->seq[rep->base], b ? b : rep->batch[rep->base]),
                    bands[i].beyond, 100.0 * bands[i].band);
        char buf[512];
        int len;
        if (tseq.n && tbatch.n)
            len = snprintf(buf, sizeof buf, "%s.seq%" PRIu64 ".b%" PRIu64, pfx, s, b);
        else if (tseq.n)
            len = snprintf(buf, sizeof buf, "%s.seq%" PRIu64, pfx, s);
        else
            len = snprintf(buf, sizeof buf, "%s.b%" PRIu64, pfx, b);
        if (len < 0 || (size_t)len >= sizeof buf || (names[i] = strdup(buf)) == NULL) {
            rc = gm__cli_error("trace name too long: '%s...'", pfx);
            goto done;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[j], names[i]) == 0) {
                rc = gm__cli_usage_error(scale_usage, "target '%s' given twice", names[i]);
                goto done;
            }
    }
    struct stat st;
    existed = stat(output, &st) == 0;
    if (gm_store_open(output, GM_STORE_WRITE, &dst, &err)) {
        rc = gm__cli_error("%s", err.msg);
        goto done;
    }
    if (!replace)
        for (size_t i = 0; i < ntargets; i++) {
            gm_trace_info_t info;
            if (gm_store_find(dst, names[i], &info, &err) == 0) {
                gm_trace_info_release(&info);
                rc = gm__cli_error("trace '%s' already exists in '%s'", names[i], output);
                fputs("hint: use --replace to overwrite it\n", stderr);
                goto done;
            }
        }
    for (size_t i = 0; i < ntargets; i++) {
        uint64_t s = tseq.n ? tseq.v[i / nb] : 0, b = tbatch.n ? tbatch.v[i % nb] : 0;
        gm__cli_status("scaling to '%s'", names[i]);
        if (gm_scale_write(plan, s, b, dst, names[i], replace ? GM_WRITE_REPLACE : 0, &err)) {
            gm__cli_status_clear();
            rc = gm__cli_error("%s", err.msg);
            goto done;
        }
        nwritten++;
    }
    gm__cli_status_clear();

    /* the report */
    if (json) {
        gm_json_t j;
        gm_json_init(&j, stdout, 1);
        gm_json_begin_object(&j);
        scale_json_report(&j, rep, in);
        gm_json_kv_str(&j, "store", output);
        gm_json_key(&j, "traces");
        gm_json_begin_array(&j);
        for (size_t i = 0; i < ntargets; i++) {
            gm_trace_info_t info;
            if (gm_store_find(dst, names[i], &info, &err) == 0) {
                gm__cli_json_trace(&j, &info);
                gm_trace_info_release(&info);
            }
        }
        gm_json_end_array(&j);
        gm_json_key(&j, "bands");
        gm_json_begin_array(&j);
        for (size_t i = 0; i < ntargets; i++)
            scale_json_band(&j, names[i], &bands[i]);
        gm_json_end_array(&j);
        gm_json_end_object(&j);
        gm_json_finish(&j);
    } else {
        scale_print_report(rep, in);
        scale_print_bands(dst, names, bands, ntargets);
        printf("\nwrote into '%s'\n", gm__cli_s(output));
        for (size_t i = 0; i < ntargets; i++) {
            gm_trace_info_t info;
            if (gm_store_find(dst, names[i], &info, &err) == 0) {
                int64_t sl = gm_attr_int(info.attrs, GM_ATTR_SEQ_LEN), bt = gm_attr_int(info.attrs, GM_ATTR_BATCH);
                printf("  %s  %s  %" PRIu64 " events  load %s", gm__cli_s(names[i]),
                       scale_sizes(sl > 0 ? (uint64_t)sl : 0, bt > 0 ? (uint64_t)bt : 0),
                       info.events, gm__cli_size(info.load));
                if (rep->count_groups)
                    printf("  %" PRIu64 " pre-existing by count (base %" PRIu64 ")",
                           bands[i].count_allocs, rep->count_allocs);
                printf("\n");
                gm_trace_info_release(&info);
            }
        }
    }
done:
    if (rc != GM_CLI_OK && dst != NULL) {
        gm_error_t e2;
        for (size_t i = 0; i < nwritten; i++)
            gm_store_delete(dst, names[i], &e2);
    }
    if (dst != NULL)
        gm_store_close(dst);
    if (rc != GM_CLI_OK && dst != NULL && !existed)
        scale_remove_store(output);
    gm__cli_captures_close(cap);
    for (size_t i = 0; names != NULL && i < ntargets; i++)
        free(names[i]);
    free(names);
    free(bands);
    return rc;
}
