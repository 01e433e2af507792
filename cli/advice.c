/*
 * cli/advice.c — how the verbs print the answers of gmsim/advice.h: warm
 * and cold starts beside the recorded figure (replay), the PyTorch setting
 * to use (compare), and what blocks the request at an OOM (replay).
 *
 * Warnings go to stderr after stdout is flushed, so that a terminal or a
 * merged log shows them under the table they are about.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "gmsim/advice.h"

/* "+1.20 GiB" / "-70.00 MiB" / "+0 B" */
static const char *advice_delta(uint64_t a, uint64_t b)
{
    static char bufs[4][40];
    static unsigned next;
    char *out = bufs[next++ % 4];
    snprintf(out, sizeof bufs[0], "%c%s", a >= b ? '+' : '-', gm__cli_size(a >= b ? a - b : b - a));
    return out;
}

static void advice_warn(const char *fmt, ...) GM_PRINTF(1, 2);
static void advice_warn(const char *fmt, ...)
{
    fflush(stdout);
    fputs("gmsim: warning: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void gm__cli_start_print(const char *policy, const char *given, const gm_start_compare_t *c)
{
    printf("\n%s with %s, from the recorded layout (warm) and from an empty allocator (cold):\n\n",
           policy, given);
    gm__cli_table_t t;
    gm__cli_table_head(&t, "lrrrr", "start", "peak reserved", "vs recorded", "dev mallocs", "ooms",
                       NULL);
    gm__cli_table_cell(&t, "recorded (the traced job)");
    gm__cli_table_cell(&t, "%s", c->recorded ? gm__cli_size(c->recorded) : "-");
    gm__cli_table_cell(&t, "-");
    gm__cli_table_cell(&t, "-");
    gm__cli_table_cell(&t, "-");
    const gm_metrics_t *rows[4] = {&c->warm_default, &c->warm, &c->cold_default, &c->cold};
    static const char *const names[4] = {"warm, the trace's settings", "warm, with the parameters",
                                         "cold, the trace's settings", "cold, with the parameters"};
    for (size_t i = 0; i < 4; i++) {
        gm__cli_table_cell(&t, "%s", names[i]);
        gm__cli_table_cell(&t, "%s", gm__cli_size(rows[i]->peak_reserved));
        if (c->recorded)
            gm__cli_table_cell(&t, "%s", advice_delta(rows[i]->peak_reserved, c->recorded));
        else
            gm__cli_table_cell(&t, "-");
        gm__cli_table_cell(&t, "%" PRIu64, rows[i]->device_mallocs);
        gm__cli_table_cell(&t, "%" PRIu64, rows[i]->ooms);
    }
    gm__cli_table_print(&t, stdout, NULL);
    gm__cli_table_release(&t);
    if (c->verdict == GM_START_INERT_WARM) {
        char held[64];
        snprintf(held, sizeof held, "%s", gm__cli_size(c->layout_reserved));
        if (c->warm_default.device_mallocs == 0)
            advice_warn("%s cannot change peak reserved from the recorded layout: it holds %s "
                        "in %zu segment%s before the first event and the replay makes no new "
                        "one, while a setting acts on segments made after it is set; cold, it "
                        "gives %s instead of %s (--start cold)",
                        given, held, c->layout_segments,
                        c->layout_segments == 1 ? "" : "s", gm__cli_size(c->cold.peak_reserved),
                        gm__cli_size(c->cold_default.peak_reserved));
        else
            advice_warn("%s cannot change peak reserved from the recorded layout (%s in %zu "
                        "segment%s before the first event): its segments and blocks decide "
                        "where the requests go; cold, it gives %s instead of %s (--start cold)",
                        given, held, c->layout_segments,
                        c->layout_segments == 1 ? "" : "s", gm__cli_size(c->cold.peak_reserved),
                        gm__cli_size(c->cold_default.peak_reserved));
    } else if (c->verdict == GM_START_INERT) {
        advice_warn("%s change%s neither peak reserved nor OOMs on this trace, warm or cold%s",
                    given, strchr(given, ',') ? "" : "s",
                    strstr(given, "garbage_collection") && !strstr(given, "memory_fraction")
                        ? " (garbage collection acts only with a memory fraction: "
                          "caching.memory_fraction)"
                        : "");
    }
}

void gm__cli_torch_print(const gm_torch_advice_t *a)
{
    if (!a->torch)
        return;
    char text[768];
    gm_torch_advice_text(a, text, sizeof text);
    printf("recommendation: %s\n", text);
}

void gm__cli_torch_json(gm_json_t *j, const gm_torch_advice_t *a)
{
    gm_json_key(j, "pytorch");
    if (!a->torch) {
        gm_json_null(j);
        return;
    }
    char text[768];
    gm_torch_advice_text(a, text, sizeof text);
    gm_json_begin_object(j);
    gm_json_kv_str(j, "recommendation", text);
    gm_json_kv_str(j, "setting", a->best >= 0 ? a->options[a->best].setting : NULL);
    gm_json_kv_u64(j, "peak_reserved",
                   a->best >= 0 ? a->options[a->best].peak_reserved : a->baseline);
    gm_json_kv_u64(j, "baseline", a->baseline);
    gm_json_kv_u64(j, "saves",
                   a->best >= 0 && a->baseline > a->options[a->best].peak_reserved
                       ? a->baseline - a->options[a->best].peak_reserved
                       : 0);
    gm__cli_json_nonzero(j, "recorded", a->recorded);
    gm_json_kv_str(j, "baseline_is", a->synthesized ? "pytorch defaults" : "recorded settings");
    gm_json_key(j, "options");
    gm_json_begin_array(j);
    for (size_t i = 0; i < a->noptions; i++) {
        gm_json_begin_object(j);
        gm_json_kv_str(j, "setting", a->options[i].setting);
        gm_json_kv_u64(j, "peak_reserved", a->options[i].peak_reserved);
        gm_json_kv_u64(j, "ooms", a->options[i].ooms);
        gm_json_end_object(j);
    }
    gm_json_end_array(j);
    gm_json_end_object(j);
}

static int advice_block_cmp(const void *x, const void *y)
{
    const gm_oom_block_t *a = *(gm_oom_block_t *const *)x, *b = *(gm_oom_block_t *const *)y;
    return a->size != b->size ? (a->size > b->size ? -1 : 1) : (a->addr > b->addr) - (a->addr < b->addr);
}

void gm__cli_oom_print(const gm_oom_report_t *o)
{
    if (o->event < 0)
        return;
    printf("\nat the first OOM of '%s' (event %" PRId64 "): a request of %s on stream %" PRIu32
           "; %s reserved of %s, %s in live blocks (%s requested)\n",
           o->policy, o->event, gm__cli_size(o->request), o->stream, gm__cli_size(o->reserved),
           o->capacity ? gm__cli_size(o->capacity) : "unlimited", gm__cli_size(o->allocated),
           gm__cli_size(o->requested_live));
    if (o->walked) {
        uint64_t free_total = 0, largest = 0;
        for (size_t i = 0; i < o->nsegments; i++) {
            free_total += o->segments[i].free_bytes;
            if (o->segments[i].largest_free > largest)
                largest = o->segments[i].largest_free;
        }
        printf("  %s free in %zu segment%s, the largest free block %s: none holds the request, "
               "and the device has %s left for a new segment\n",
               gm__cli_size(free_total), o->nsegments, o->nsegments == 1 ? "" : "s",
               gm__cli_size(largest),
               gm__cli_size(o->capacity > o->reserved ? o->capacity - o->reserved : 0));
        size_t shown = 0;
        for (size_t i = 0; i < o->nsegments && shown < 3; i++) {
            const gm_oom_segment_t *s = &o->segments[i];
            if (s->free_bytes == 0)
                continue;
            shown++;
            size_t nfree = 0, nlive = 0;
            for (size_t k = 0; k < s->n; k++)
                o->blocks[s->first + k].allocated ? nlive++ : nfree++;
            printf("  segment 0x%" PRIx64 ", %s", s->addr, gm__cli_size(s->size));
            if (s->pool >= 0)
                printf(" (%s pool, stream %" PRIu32 ")", s->pool ? "small" : "large", s->stream);
            printf(": %s free in %zu block%s (largest %s), pinned by %zu live block%s%s\n",
                   gm__cli_size(s->free_bytes), nfree, nfree == 1 ? "" : "s",
                   gm__cli_size(s->largest_free), nlive, nlive == 1 ? "" : "s",
                   s->serves ? "" : " (another stream or pool: it cannot serve the request)");
            const gm_oom_block_t *live[4];
            size_t nl = 0;
            const gm_oom_block_t **all = malloc((nlive ? nlive : 1) * sizeof *all);
            if (all == NULL)
                continue;
            for (size_t k = 0; k < s->n; k++)
                if (o->blocks[s->first + k].allocated)
                    all[nl++] = &o->blocks[s->first + k];
            qsort(all, nl, sizeof *all, advice_block_cmp);
            size_t show = nl < 4 ? nl : 4;
            memcpy(live, all, show * sizeof *live);
            free(all);
            for (size_t k = 0; k < show; k++) {
                const gm_oom_block_t *b = live[k];
                printf("    %10s at +%-12s", gm__cli_size(b->size), gm__cli_size(b->addr - s->addr));
                if (b->id != UINT64_MAX) {
                    printf(" allocation %" PRIu64 " (event %" PRIu64 ")", b->id, b->event);
                    if (b->frames) {
                        char f[160];
                        gm_site_frame(b->frames, f, sizeof f);
                        printf(" %s", f);
                    }
                } else {
                    printf(" a recorded block");
                }
                putchar('\n');
            }
            if (nlive > show)
                printf("    and %zu more\n", nlive - show);
        }
    } else {
        printf("  (policy '%s' does not show its segments)\n", o->policy);
    }
    if (o->nfits_tried == 0)
        return;
    if (o->best_fit < 0) {
        printf("  none of %zu settings tried (from an empty allocator, on the same device) "
               "avoids the OOM\n", o->nfits_tried);
        return;
    }
    printf("  would fit (from an empty allocator, on the same device): %s, peak %s",
           o->fits[o->best_fit].setting, gm__cli_size(o->fits[o->best_fit].peak_reserved));
    size_t others = 0;
    for (size_t i = 0; i < o->nfits_tried; i++)
        others += (int)i != o->best_fit && o->fits[i].ooms == 0;
    if (others) {
        printf("; also:");
        size_t k = 0;
        for (size_t i = 0; i < o->nfits_tried; i++)
            if ((int)i != o->best_fit && o->fits[i].ooms == 0)
                printf("%s %s", k++ ? "," : "", o->fits[i].label);
    }
    putchar('\n');
}

void gm__cli_oom_json(gm_json_t *j, const gm_oom_report_t *o)
{
    gm_json_key(j, "oom");
    gm_json_begin_object(j);
    gm_json_kv_i64(j, "event", o->event);
    gm_json_kv_u64(j, "request", o->request);
    gm_json_kv_u64(j, "reserved", o->reserved);
    gm_json_key(j, "segments");
    gm_json_begin_array(j);
    for (size_t i = 0; o->walked && i < o->nsegments; i++) {
        const gm_oom_segment_t *sg = &o->segments[i];
        if (sg->free_bytes == 0)
            continue;
        gm_json_begin_object(j);
        gm_json_kv_u64(j, "addr", sg->addr);
        gm_json_kv_u64(j, "size", sg->size);
        gm_json_kv_u64(j, "free", sg->free_bytes);
        gm_json_kv_u64(j, "largest_free", sg->largest_free);
        gm_json_kv_bool(j, "serves", sg->serves);
        gm_json_key(j, "live");
        gm_json_begin_array(j);
        for (size_t k = 0; k < sg->n; k++) {
            const gm_oom_block_t *b = &o->blocks[sg->first + k];
            if (!b->allocated)
                continue;
            gm_json_begin_object(j);
            gm_json_kv_u64(j, "addr", b->addr);
            gm_json_kv_u64(j, "size", b->size);
            gm_json_key(j, "id");
            if (b->id != UINT64_MAX)
                gm_json_u64(j, b->id);
            else
                gm_json_null(j);
            char f[512]; /* the frame the text and the report show */
            if (b->frames)
                gm_site_frame(b->frames, f, sizeof f);
            gm_json_kv_str(j, "site", b->frames ? f : NULL);
            gm_json_kv_str(j, "frames", b->frames);
            gm_json_end_object(j);
        }
        gm_json_end_array(j);
        gm_json_end_object(j);
    }
    gm_json_end_array(j);
    gm_json_key(j, "would_fit");
    gm_json_begin_array(j);
    for (size_t i = 0; i < o->nfits_tried; i++)
        if (o->fits[i].ooms == 0) {
            gm_json_begin_object(j);
            gm_json_kv_str(j, "setting", o->fits[i].setting);
            gm_json_kv_u64(j, "peak_reserved", o->fits[i].peak_reserved);
            gm_json_end_object(j);
        }
    gm_json_end_array(j);
    gm_json_kv_str(j, "best", o->best_fit >= 0 ? o->fits[o->best_fit].setting : NULL);
    gm_json_end_object(j);
}

void gm__cli_oom_capacity_note(uint64_t capacity)
{
    printf(", capacity %s (from the recorded OOM: reserved then + the device's free bytes)",
           gm__cli_size(capacity));
}

void gm__cli_oom_asked(const char *label, uint64_t asked, uint64_t failed)
{
    if (asked)
        printf("'%s': the recorded OOM%s asked again: %" PRIu64 " of %" PRIu64
               " failed as recorded, %" PRIu64 " served\n",
               label, asked == 1 ? "" : "s", failed, asked, asked - failed);
}

void gm__cli_oom_asked_json(gm_json_t *j, uint64_t asked, uint64_t failed)
{
    gm_json_key(j, "recorded_ooms");
    gm_json_begin_object(j);
    gm_json_kv_u64(j, "asked", asked);
    gm_json_kv_u64(j, "failed", failed);
    gm_json_end_object(j);
}

void gm__cli_oom_count(const char *label, const gm_metrics_t *m)
{
    if (m->ooms)
        printf("'%s' ran out of memory %" PRIu64 " time%s, first at event %" PRId64 "\n", label,
               m->ooms, m->ooms == 1 ? "" : "s", m->first_oom_event);
}
