/*
 * report/svg.c — the report's charts, drawn as inline SVG: memory over
 * time, the bars of peak reserved and of waste at the peak, and the
 * figures against seq_len.
 *
 * Waste at the peak: the peak reserved bytes split at the load peak t_L
 * (docs/metrics.md) from the stored metrics: allocated there =
 * peak_reserved × (1 − external_frag), of which rounding_waste is
 * rounding (internal) and the rest in use; reserved_at_load_peak −
 * allocated is free but held at t_L, and peak_reserved −
 * reserved_at_load_peak reserved at another moment (external).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/bits.h"
#include "gmsim/device.h"
#include "gmsim/replay.h"
#include "report/report.h"

#define REPORT_POINTS 300

/* ---- SVG ------------------------------------------------------------------------ */

#define W 1000
#define H 300
#define ML 80
#define MR 20
#define MT 12
#define MB 36

static double report_nice(double v)
{
    if (v <= 0)
        return 1;
    double p = pow(10, floor(log10(v)));
    double m = v / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* The y axis' step for values up to ymax. */
static double report_y_step(double ymax, int bytes)
{
    double step;
    if (bytes) {
        /* Steps of 1, 2 or 5 (times a power of ten) in the largest binary
         * unit below them, so labels read 512 MiB, 1 GiB, 2 GiB. */
        double unit = 1;
        while (unit * 1024 <= ymax / 4)
            unit *= 1024;
        step = report_nice(ymax / 4 / unit) * unit;
    } else {
        step = report_nice(ymax / 4);
    }
    return step;
}

/* The y axis' maximum for values up to ymax. */
static double report_y_top(double ymax, int bytes)
{
    double step = report_y_step(ymax, bytes), top = step * ceil(ymax / step);
    return top > 0 ? top : 1;
}

/* Horizontal grid lines with byte labels; returns the axis maximum. */
static double report_y_axis(FILE *f, double ymax, int bytes)
{
    double step = report_y_step(ymax, bytes), top = report_y_top(ymax, bytes);
    for (double v = 0; v <= top * 1.0001; v += step) {
        int y = (int)(MT + (H - MT - MB) * (1 - v / top));
        char buf[32];
        if (bytes)
            gm_format_size((uint64_t)v, buf, sizeof buf);
        else
            snprintf(buf, sizeof buf, "%.0f%%", v * 100);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"grid\"/>", ML, y, W - MR,
                y);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">%s</text>", ML - 6,
                y + 4, buf);
    }
    return top;
}

/* A timeline reduced to at most REPORT_POINTS buckets, the maximum of
 * `which` (0 requested, 1 allocated, 2 reserved) per bucket, at the
 * bucket's last event.  Returns the bucket count. */
static size_t report_buckets(const gm_timeline_point_t *pts, size_t n, int which,
                             uint64_t *ev, uint64_t *val)
{
    size_t buckets = n < REPORT_POINTS ? n : REPORT_POINTS;
    for (size_t b = 0; b < buckets; b++) {
        size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;
        uint64_t v = 0;
        for (size_t k = lo; k < hi; k++) {
            uint64_t x = which == 0   ? pts[k].requested
                         : which == 1 ? pts[k].allocated
                                      : pts[k].reserved;
            if (x > v)
                v = x;
        }
        ev[b] = pts[hi - 1].event;
        val[b] = v;
    }
    return buckets;
}

/* Space-separated unsigned integers, as an attribute value. */
static void report_u64_list(FILE *f, const char *attr, const uint64_t *v, size_t n)
{
    fprintf(f, " %s=\"", attr);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu64, i ? " " : "", v[i]);
    fputc('"', f);
}

/* A timeline series' values, exactly and compactly: data-q, the greatest
 * common divisor of the values (reservations are multiples of 2 MiB or
 * 512 B), and data-v, the first value then the difference from the one
 * before, in units of data-q (a flat stretch is a run of "0"). */
static void report_values(FILE *f, const uint64_t *val, size_t n)
{
    uint64_t q = 0;
    for (size_t i = 0; i < n; i++)
        q = gm__gcd_u64(val[i], q);
    if (q == 0)
        q = 1;
    fprintf(f, " data-q=\"%" PRIu64 "\" data-v=\"", q);
    int64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = (int64_t)(val[i] / q);
        fprintf(f, "%s%" PRId64, i ? " " : "", v - prev);
        prev = v;
    }
    fputc('"', f);
}

/* The finer level a zoomed chart redraws a series from (report/page.js):
 * every point of the stored timeline (at most about 4,000; maxima of the
 * events each covers, metrics.md "The timeline"), as data-fq (the values'
 * greatest common divisor), data-fv (the values less the one before, in
 * units of data-fq) and data-fe (the events less the one before). */
static void report_fine(FILE *f, const gm_timeline_point_t *pts, size_t n, int which)
{
    uint64_t q = 0;
    for (size_t i = 0; i < n; i++)
        q = gm__gcd_u64(which == 0 ? pts[i].requested : which == 1 ? pts[i].allocated
                                                                    : pts[i].reserved,
                        q);
    if (q == 0)
        q = 1;
    fprintf(f, " data-fq=\"%" PRIu64 "\" data-fv=\"", q);
    int64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = which == 0 ? pts[i].requested : which == 1 ? pts[i].allocated : pts[i].reserved;
        fprintf(f, "%s%" PRId64, i ? " " : "", (int64_t)(x / q) - prev);
        prev = (int64_t)(x / q);
    }
    fputs("\" data-fe=\"", f);
    uint64_t pe = 0;
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s%" PRIu64, i ? " " : "", pts[i].event - pe);
        pe = pts[i].event;
    }
    fputc('"', f);
}

/* A series of a line chart: a polyline of one timeline, reduced, with its
 * values (data-v, exact bytes) and events (data-e, left out when they are
 * the chart's: shared_ev, nshared) for the page's hover; `key` ties it to
 * its legend item, `name` is the series' name in the hover. */
static void report_line(FILE *f, const gm_timeline_point_t *pts, size_t n, uint64_t events,
                        double top, int which, const char *color, const char *extra,
                        const char *key, const char *name, const uint64_t *shared_ev,
                        size_t nshared)
{
    if (n == 0)
        return;
    uint64_t ev[REPORT_POINTS], val[REPORT_POINTS];
    size_t nb = report_buckets(pts, n, which, ev, val);
    fprintf(f, "<polyline class=\"sr\" fill=\"none\" stroke=\"%s\" %s data-s=\"%s\" data-n=\"",
            color, extra, key);
    report_esc(f, name);
    fputs("\" points=\"", f);
    double xscale = (double)(W - ML - MR) / (double)(events ? events : 1);
    for (size_t b = 0; b < nb; b++) {
        int px = (int)(ML + (double)ev[b] * xscale);
        int py = (int)(MT + (H - MT - MB) * (1 - (double)val[b] / top));
        fprintf(f, "%s%d,%d", b ? " " : "", px, py);
    }
    fputc('"', f);
    report_values(f, val, nb);
    if (nb != nshared || memcmp(ev, shared_ev, nb * sizeof *ev) != 0)
        report_u64_list(f, "data-e", ev, nb);
    if (n > nb)
        report_fine(f, pts, n, which);
    fputs("/>", f);
}

static void report_hline(FILE *f, double v, double top, const char *cls, const char *label,
                         const char *key)
{
    int y = (int)(MT + (H - MT - MB) * (1 - v / top));
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"%s\" data-s=\"%s\"/>", ML,
            y, W - MR, y, cls, key);
    if (label[0] == '\0')
        return;
    /* a halo of the plot's colour keeps it legible over the lines */
    int below = strcmp(cls, "load") == 0;
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\" data-s=\"%s\" "
               "stroke=\"#fcfcfc\" stroke-width=\"3\" paint-order=\"stroke\">%s</text>",
            W - MR - 4, below ? y + 13 : y - 4, key, label);
}

/* A run's label, cut (r->cut); where the cut left something out, the
 * whole label is the tooltip: a <title> child inside SVG text (svg), a
 * title attribute elsewhere. */
void report_label(FILE *f, const report_run_t *r, int svg)
{
    int cut = strcmp(r->cut, r->label) != 0;
    if (cut && !svg) {
        fputs("<span title=\"", f);
        report_esc(f, r->label);
        fputs("\">", f);
    }
    report_esc(f, r->cut);
    if (cut) {
        fputs(svg ? "<title>" : "</span>", f);
        if (svg) {
            report_esc(f, r->label);
            fputs("</title>", f);
        }
    }
}

/* A legend item that hides and shows the series carrying `key` (the
 * page's script; without it, a plain legend). */
static void report_legend_item(FILE *f, const char *color, const char *dash, const char *label,
                               const char *key)
{
    fprintf(f, "<span class=\"lg\" data-s=\"%s\" role=\"button\" tabindex=\"0\" "
               "aria-pressed=\"true\"><svg width=\"22\" height=\"10\"><line x1=\"0\" y1=\"5\" "
               "x2=\"22\" y2=\"5\" stroke=\"%s\" stroke-width=\"2\"%s/></svg> ",
            key, color, dash);
    report_esc(f, label);
    fputs("</span>", f);
}

/* Whether shown run k is the baseline drawn beside its policy's best
 * configuration (same colour: drawn dash-dotted). */
static int report_dashed_baseline(const report_t *R, const report_group_t *gr, size_t k)
{
    const report_run_t *r = &R->runs[gr->shown[k]];
    if ((ssize_t)gr->shown[k] != gr->baseline)
        return 0;
    for (size_t i = 0; i < gr->nshown; i++)
        if (i != k && strcmp(R->runs[gr->shown[i]].info->policy, r->info->policy) == 0)
            return 1;
    return 0;
}

/* Event counts for axis labels: 800, 12k, 1.5M. */
static const char *report_count_short(uint64_t v, char *buf, size_t len)
{
    if (v < 10000)
        snprintf(buf, len, "%" PRIu64, v);
    else if (v < 1000000)
        snprintf(buf, len, v % 1000 ? "%.1fk" : "%.0fk", (double)v / 1e3);
    else
        snprintf(buf, len, v % 1000000 ? "%.1fM" : "%.0fM", (double)v / 1e6);
    return buf;
}

/* The x axis of a timeline: event ticks, and the trace's MARK events as
 * ticks by kind (step: a grid line and "step N"; forward F, backward B;
 * other tags small and grey, named on hover), labels thinned so they do
 * not overlap. */
/* The first mark of tag t from index i on that gets a tick: at x, 2 units
 * or more after the tick before (*last, set to x).  gr->nmarks when none. */
static size_t report_next_tick(const report_group_t *gr, uint32_t t, double xscale, size_t i,
                               int *last, int *x)
{
    for (; i < gr->nmarks; i++) {
        *x = (int)(ML + (double)gr->marks[i].event * xscale);
        if (gr->marks[i].tag == t && *x - *last >= 2) {
            *last = *x;
            break;
        }
    }
    return i;
}

static void report_x_axis(FILE *f, const report_group_t *gr, uint64_t events)
{
    double xscale = (double)(W - ML - MR) / (double)(events ? events : 1);
    int y0 = H - MB;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"xa\"/>", ML, y0, W - MR, y0);
    double step = report_nice((double)events / 8);
    for (double e = 0; e <= (double)events; e += step) {
        char b[32];
        int x = (int)(ML + e * xscale);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"xa\"/>", x, y0, x, y0 + 4);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">%s</text>", x,
                y0 + 14, report_count_short((uint64_t)e, b, sizeof b));
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">event</text>", ML - 6,
            y0 + 26);
    if (gr->nmarks == 0)
        return;
    static const char *const cls[] = {"mk-s", "mk-f", "mk-b", "mk-o"};
    fputs("<g class=\"marks\">", f);
    /* Ticks: one path per tag, with the events it marks (data-e) for the
     * hover; a tick within 2 units of the one before is left out.  Step
     * ticks also draw a grid line through the plot. */
    for (uint32_t t = 0; t < gr->ntags; t++) {
        int kind = -1, last = -100, x;
        for (size_t i = 0; i < gr->nmarks; i++)
            if (gr->marks[i].tag == t)
                kind = gr->marks[i].kind;
        if (kind < 0)
            continue;
        for (int grid = kind == REPORT_MARK_STEP ? 1 : 0; grid >= 0; grid--) {
            fprintf(f, "<path class=\"%s\" d=\"", grid ? "mk-g" : cls[kind]);
            last = -100;
            for (size_t i = 0; (i = report_next_tick(gr, t, xscale, i, &last, &x)) < gr->nmarks;
                 i++) {
                if (grid)
                    fprintf(f, "M%d %dV%d", x, MT, y0);
                else
                    fprintf(f, "M%d %dv%d", x, y0 + (kind == REPORT_MARK_OTHER), kind == REPORT_MARK_OTHER ? 4 : 9);
            }
            fputc('"', f);
            if (grid) {
                fputs("/>", f);
                continue;
            }
            fputs(" data-n=\"", f);
            report_esc(f, gr->tags[t]);
            fputs("\" data-e=\"", f);
            last = -100;
            int first = 1;
            for (size_t i = 0; (i = report_next_tick(gr, t, xscale, i, &last, &x)) < gr->nmarks;
                 i++) {
                fprintf(f, "%s%" PRIu64, first ? "" : " ", gr->marks[i].event);
                first = 0;
            }
            fputs("\"/>", f);
        }
    }
    /* Labels, in event order, where they do not overlap the one before. */
    int last_label = -1000, last_half = 0;
    uint64_t steps = 0;
    for (size_t i = 0; i < gr->nmarks; i++) {
        const report_mark_t *m = &gr->marks[i];
        const char *tag = gr->tags[m->tag];
        int numbered = m->kind == REPORT_MARK_STEP && strcasecmp(tag, "step") == 0;
        steps += numbered;
        if (m->kind == REPORT_MARK_OTHER)
            continue;
        int x = (int)(ML + (double)m->event * xscale);
        char label[32];
        if (numbered)
            snprintf(label, sizeof label, "step %" PRIu64, steps);
        else if (m->kind == REPORT_MARK_STEP) /* "Optimizer.step#AdamW.step": to its '#' */
            snprintf(label, sizeof label, "%.*s", (int)(strcspn(tag, "#") < 24 ? strcspn(tag, "#") : 24), tag);
        else
            snprintf(label, sizeof label, "%s", m->kind == REPORT_MARK_FORWARD ? "F" : "B");
        /* About 6 units a character at the axis' font size. */
        if (x - last_label < (int)strlen(label) * 3 + last_half + 6)
            continue;
        last_label = x;
        last_half = (int)strlen(label) * 3;
        /* Kept inside the chart at its right edge. */
        int at_end = x + last_half > W - 2;
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"%s\" text-anchor=\"%s\">", at_end ? W - 2 : x,
                y0 + 26, cls[m->kind], at_end ? "end" : "middle");
        report_esc(f, label);
        fputs("</text>", f);
    }
    fputs("</g>", f);
}

int report_memory_chart(report_t *R, const report_group_t *gr)
{
    FILE *f = R->f;
    gm_timeline_point_t **tl = calloc(gr->nshown ? gr->nshown : 1, sizeof *tl);
    size_t *ntl = calloc(gr->nshown ? gr->nshown : 1, sizeof *ntl);
    if (tl == NULL || ntl == NULL) {
        free(tl);
        free(ntl);
        return gm_error_set(R->err, GM_ENOMEM, "out of memory");
    }
    int rc = 0;
    double ymax = (double)gr->load;
    uint64_t events = gr->events;
    for (size_t k = 0; rc == 0 && k < gr->nshown; k++) {
        const report_run_t *r = &R->runs[gr->shown[k]];
        rc = gm_store_run_timeline(R->stores[r->store].s, r->info->id, &tl[k], &ntl[k], R->err);
        if (rc == 0 && (double)r->m.peak_reserved > ymax)
            ymax = (double)r->m.peak_reserved;
        if (rc == 0 && ntl[k] && tl[k][ntl[k] - 1].event + 1 > events)
            events = tl[k][ntl[k] - 1].event + 1;
    }
    size_t with = 0, first = 0;
    for (size_t k = gr->nshown; k-- > 0;)
        if (ntl[k]) {
            with++;
            first = k;
        }
    if (rc == 0 && with == 0) {
        fputs("<p class=\"note\">no timeline stored for these runs</p>", f);
    } else if (rc == 0) {
        /* The chart's events: those of the first timeline's buckets; a
         * series with others carries its own. */
        uint64_t shared[REPORT_POINTS], scratch[REPORT_POINTS];
        size_t nshared = report_buckets(tl[first], ntl[first], 0, shared, scratch);
        /* data-t: the trace (its first group), whose views zoom together;
         * data-n: the events across the x axis; g.zx: what the page's zoom
         * stretches (report/page.js), in a nested svg that clips it to the plot
         * when zoomed (svg.zc; its overflow is visible otherwise);
         * g.xj: the axis labels the page writes for a zoomed window. */
        fprintf(f, "<svg class=\"chart ln\" viewBox=\"0 0 %d %d\" role=\"img\" data-xn=\"event\" "
                   "data-u=\"b\" data-t=\"%zu\" data-n=\"%" PRIu64 "\" data-ml=\"%d\" "
                   "data-pw=\"%d\"",
                W, H, gr->trace_of, events, ML, W - ML - MR);
        report_u64_list(f, "data-e", shared, nshared);
        double top = report_y_top(ymax * 1.05, 1);
        /* data-y: y of 0 bytes, and pixels a byte (a finer level's points) */
        fprintf(f, " data-y=\"%d %.9g\">", H - MB, (double)(H - MT - MB) / top);
        report_y_axis(f, ymax * 1.05, 1);
        fprintf(f, "<svg class=\"zc\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\" "
                   "viewBox=\"%d 0 %d %d\"><g class=\"zx\">",
                ML, W - ML - MR, H, ML, W - ML - MR, H);
        report_x_axis(f, &R->groups[gr->trace_of], events);
        for (size_t k = 0; k < gr->nshown; k++) {
            const report_run_t *r = &R->runs[gr->shown[k]];
            const char *c = report_color(r);
            char key[32], name[200];
            snprintf(key, sizeof key, "r%zu al", k);
            snprintf(name, sizeof name, "%s allocated", r->label);
            report_line(f, tl[k], ntl[k], events, top, 1, c,
                        "stroke-width=\"1\" stroke-dasharray=\"4 3\" opacity=\"0.8\"", key, name,
                        shared, nshared);
            snprintf(key, sizeof key, "r%zu", k);
            snprintf(name, sizeof name, "%s reserved", r->label);
            report_line(f, tl[k], ntl[k], events, top, 2, c,
                        report_dashed_baseline(R, gr, k)
                            ? "stroke-width=\"1.6\" stroke-dasharray=\"10 3 2 3\""
                            : "stroke-width=\"1.6\"",
                        key, name, shared, nshared);
        }
        report_line(f, tl[first], ntl[first], events, top, 0, "#000", "stroke-width=\"1.2\"", "rq",
                    "requested", shared, nshared);
        fputs("</g></svg><g class=\"xj\"></g>", f);
        /* one label where the offline bound is the load (an optimal plan) */
        int same = gr->bound >= 0 && R->runs[gr->bound].m.peak_reserved == gr->load;
        report_hline(f, (double)gr->load, top, "load", same ? "load = offline bound" : "load",
                     "ld");
        if (gr->bound >= 0)
            report_hline(f, (double)R->runs[gr->bound].m.peak_reserved, top, "bound",
                         same ? "" : "offline bound", "bd");
        fputs("</svg><div class=\"legend\">", f);
        report_legend_item(f, "#000", "", "requested", "rq");
        for (size_t k = 0; k < gr->nshown; k++) {
            const report_run_t *r = &R->runs[gr->shown[k]];
            char lab[200], key[32];
            snprintf(lab, sizeof lab, "%s reserved", r->cut);
            snprintf(key, sizeof key, "r%zu", k);
            report_legend_item(f, report_color(r),
                               report_dashed_baseline(R, gr, k) ? " stroke-dasharray=\"10 3 2 3\""
                                                                : "",
                               lab, key);
        }
        report_legend_item(f, "#666", " stroke-dasharray=\"4 3\"", "allocated (same colour)",
                           "al");
        report_legend_item(f, "#000", " stroke-dasharray=\"6 4\"", "load", "ld");
        if (gr->bound >= 0)
            report_legend_item(f, "#9467bd", " stroke-dasharray=\"2 3\"", "offline bound", "bd");
        fputs("</div>", f);
    }
    for (size_t k = 0; k < gr->nshown; k++)
        free(tl[k]);
    free(tl);
    free(ntl);
    return rc;
}

/* A rect of a bar chart, with what the page's hover shows: the name, the
 * value in bytes (data-v) and a detail line (data-d). */
static void report_bar_rect(FILE *f, int x, int y, int w, int h, const char *paint,
                            const char *name, uint64_t v, const char *detail)
{
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" %s data-n=\"", x, y, w, h,
            paint);
    report_esc(f, name);
    fprintf(f, "\" data-v=\"%" PRIu64 "\" data-d=\"", v);
    report_esc(f, detail);
    fputs("\"/>", f);
}

/* Horizontal bars: peak reserved per run shown, against load (and the
 * bound); with waste = 1 the bars are split at t*.  Every rect carries its
 * value for the hover. */
void report_bars(report_t *R, const report_group_t *gr, int waste)
{
    FILE *f = R->f;
    size_t n = gr->nshown + (gr->bound >= 0 && !waste);
    int rowh = 22, h = (int)n * rowh + 30, lw = 260;
    double max = (double)gr->load;
    for (size_t k = 0; k < gr->nshown; k++)
        if ((double)R->runs[gr->shown[k]].m.peak_reserved > max)
            max = (double)R->runs[gr->shown[k]].m.peak_reserved;
    if (max <= 0)
        max = 1;
    double scale = (double)(W - lw - (waste ? 340 : 150)) / max;
    fprintf(f, "<svg class=\"chart bars\" viewBox=\"0 0 %d %d\" role=\"img\">", W, h);
    for (size_t k = 0; k < n; k++) {
        size_t ri = k < gr->nshown ? gr->shown[k] : (size_t)gr->bound;
        const report_run_t *r = &R->runs[ri];
        int y = 6 + (int)k * rowh;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"8\" height=\"8\" fill=\"%s\"/>", lw - 14,
                y + 6, report_color(r));
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lb\" text-anchor=\"end\">", lw - 20, y + 14);
        report_label(f, r, 1);
        if (k < gr->nshown && (ssize_t)ri == gr->winner)
            fputs(" ★", f);
        fputs("</text>", f);
        const gm_metrics_t *m = &r->m;
        double R_ = (double)m->peak_reserved;
        char detail[160], b1[32], b2[32];
        /* a run stored before the waste's metrics existed: its bar whole */
        int unsplit = waste && !(report_metric_known(m, "external_frag") &&
                                 report_metric_known(m, "rounding_waste") &&
                                 report_metric_known(m, "reserved_at_load_peak"));
        if (unsplit) {
            char name[220];
            snprintf(name, sizeof name, "%s: reserved at the peak", r->label);
            report_bar_rect(f, lw, y, (int)(R_ * scale + 0.5), rowh - 6, "class=\"s-free\"", name,
                            m->peak_reserved, "its waste was not stored with this run");
        } else if (!waste) {
            char paint[64];
            snprintf(paint, sizeof paint, "fill=\"%s\"%s", report_color(r),
                     r->bound ? " opacity=\"0.5\"" : "");
            snprintf(detail, sizeof detail, "peak reserved, %+.1f%% above load (%s)%s",
                     m->overhead * 100, report_size(gr->load, b1, sizeof b1),
                     m->ooms ? ", with OOMs" : "");
            report_bar_rect(f, lw, y, (int)(R_ * scale + 0.5), rowh - 6, paint, r->label,
                            m->peak_reserved, detail);
        } else {
            double A = R_ * (1 - (isfinite(m->external_frag) ? m->external_frag : 0));
            double internal = (double)m->rounding_waste;
            if (internal > A)
                internal = A;
            double held = (double)m->reserved_at_load_peak;
            if (held < A)
                held = A;
            if (held > R_)
                held = R_;
            double seg[4] = {A - internal, internal, held - A, R_ - held};
            static const char *const cls[4] = {"class=\"s-req\"", "class=\"s-int\"",
                                               "class=\"s-ext\"", "class=\"s-free\""};
            static const char *const what[4] = {"in use at the load peak", "rounding (internal)",
                                                "free at the load peak (external)",
                                                "reserved at another moment (external)"};
            double x = lw;
            for (int s = 0; s < 4; s++) {
                if (seg[s] > 0) {
                    char name[220];
                    snprintf(name, sizeof name, "%s: %s", r->label, what[s]);
                    snprintf(detail, sizeof detail, "%.1f%% of %s reserved at the peak",
                             R_ > 0 ? 100 * seg[s] / R_ : 0,
                             report_size(m->peak_reserved, b1, sizeof b1));
                    report_bar_rect(f, (int)x, y, (int)(seg[s] * scale + 0.5), rowh - 6, cls[s],
                                    name, (uint64_t)(seg[s] + 0.5), detail);
                }
                x += seg[s] * scale;
            }
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lb\">%s", (int)(lw + R_ * scale) + 6, y + 14,
                report_size(m->peak_reserved, b1, sizeof b1));
        if (!waste && gr->load)
            fprintf(f, " (%+.1f%%)", m->overhead * 100);
        if (waste && m->peak_reserved && !unsplit) {
            char b3[32];
            fprintf(f, " · rounding %s · external %s",
                    report_size(m->rounding_waste, b2, sizeof b2),
                    report_size((uint64_t)(R_ * m->external_frag + 0.5), b3, sizeof b3));
        }
        fputs("</text>", f);
    }
    int lx = (int)(lw + (double)gr->load * scale);
    fprintf(f, "<line x1=\"%d\" y1=\"2\" x2=\"%d\" y2=\"%d\" class=\"load\"/>", lx, lx, h - 18);
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">load</text></svg>", lx,
            h - 4);
}

/* x of the l-th of nl seq_len values on a seq_len chart. */
static int report_seq_x(size_t l, size_t nl)
{
    return (int)(ML + 30 + (double)(W - ML - MR - 60) *
                               (nl > 1 ? (double)l / (double)(nl - 1) : 0.5));
}

/* The legend key of series p of a seq_len chart: "pN", "ld" for load (np). */
static void report_seq_key(size_t p, size_t np, char *key, size_t len)
{
    if (p == np)
        snprintf(key, len, "ld");
    else
        snprintf(key, len, "p%zu", p);
}

/* Per policy (best configuration), a figure against seq_len. */
void report_seq_chart(report_t *R, int frag)
{
    FILE *f = R->f;
    int64_t *lens = malloc((R->ngroups ? R->ngroups : 1) * sizeof *lens);
    if (lens == NULL)
        return;
    size_t nl = 0;
    for (size_t g = 0; g < R->ngroups; g++) {
        int64_t s = R->groups[g].seq_len;
        if (s >= 0 && (nl == 0 || lens[nl - 1] != s))
            lens[nl++] = s; /* groups are sorted by seq_len */
    }
    /* Policies: those drawn in any group. */
    const char *pols[64];
    const report_run_t *polrun[64];
    size_t np = 0;
    for (size_t g = 0; g < R->ngroups; g++)
        for (size_t k = 0; k < R->groups[g].nshown; k++) {
            const report_run_t *r = &R->runs[R->groups[g].shown[k]];
            size_t i = 0;
            while (i < np && strcmp(pols[i], r->info->policy) != 0)
                i++;
            if (i == np && np < 64) {
                pols[np] = r->info->policy;
                polrun[np++] = r;
            }
        }
    /* value[p][l]: max over groups with that seq_len of the policy's best. */
    double *val = calloc((np + 1) * nl + 1, sizeof *val);
    if (val == NULL) {
        free(lens);
        return;
    }
    for (size_t i = 0; i < (np + 1) * nl; i++)
        val[i] = -1;
    double ymax = 0;
    for (size_t g = 0; g < R->ngroups; g++) {
        const report_group_t *gr = &R->groups[g];
        if (gr->seq_len < 0)
            continue;
        size_t l = 0;
        while (lens[l] != gr->seq_len)
            l++;
        for (size_t p = 0; p < np; p++)
            for (size_t k = 0; k < gr->nshown; k++) {
                const report_run_t *r = &R->runs[gr->shown[k]];
                if (strcmp(r->info->policy, pols[p]) != 0)
                    continue;
                double v = frag ? (report_metric_known(&r->m, "external_frag") &&
                                           report_metric_known(&r->m, "internal_frag")
                                       ? r->m.internal_frag + r->m.external_frag
                                       : NAN)
                                : (double)r->m.peak_reserved;
                if (!isfinite(v))
                    continue;
                if (v > val[p * nl + l])
                    val[p * nl + l] = v;
                if (v > ymax)
                    ymax = v;
                break;
            }
        if (!frag && (double)gr->load > val[np * nl + l]) {
            val[np * nl + l] = (double)gr->load;
            if ((double)gr->load > ymax)
                ymax = (double)gr->load;
        }
    }
    /* Zoomed and panned by the page as a memory chart is (report/page.js),
     * alone: data-t names its own window, data-n its x axis in thousandths
     * of the plot; class cat: the page moves its own labels (g.zx), and its
     * dots (g.zp, at data-x), rather than writing counts. */
    fprintf(f, "<figure><figcaption>%s against seq_len (best configuration of each "
               "policy)</figcaption><svg class=\"chart ln cat\" viewBox=\"0 0 %d %d\" "
               "role=\"img\" data-xn=\"seq_len\" data-u=\"%s\" data-t=\"seq%d\" "
               "data-n=\"1000\" data-ml=\"%d\" data-pw=\"%d\">",
            frag ? "fragmentation (internal + external)" : "peak reserved", W, H, frag ? "%" : "b",
            frag, ML, W - ML - MR);
    double top = report_y_axis(f, ymax > 0 ? ymax * 1.05 : 1, !frag);
    fprintf(f, "<svg class=\"zc\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\" "
               "viewBox=\"%d 0 %d %d\"><g class=\"zx\">",
            ML, W - ML - MR, H, ML, W - ML - MR, H);
    for (size_t l = 0; l < nl; l++)
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">%" PRId64 "</text>",
                report_seq_x(l, nl), H - 14, lens[l]);
    for (size_t p = 0; p <= np && !(p == np && frag); p++) {
        const char *color = p == np ? "#000" : report_color(polrun[p]);
        char key[24];
        report_seq_key(p, np, key, sizeof key);
        fprintf(f, "<polyline class=\"sr\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
                   "data-s=\"%s\" data-n=\"",
                color, p == np ? " stroke-dasharray=\"6 4\"" : "", key);
        report_esc(f, p == np ? "load" : pols[p]);
        fputs("\" points=\"", f);
        int first = 1;
        for (size_t l = 0; l < nl; l++) {
            double v = val[p * nl + l];
            if (v < 0)
                continue;
            fprintf(f, "%s%d,%d", first ? "" : " ", report_seq_x(l, nl),
                    (int)(MT + (H - MT - MB) * (1 - v / top)));
            first = 0;
        }
        /* Values and seq_len of the points drawn, for the hover. */
        fputs("\" data-v=\"", f);
        first = 1;
        for (size_t l = 0; l < nl; l++)
            if (val[p * nl + l] >= 0) {
                fprintf(f, frag ? "%s%.6g" : "%s%.0f", first ? "" : " ", val[p * nl + l]);
                first = 0;
            }
        fputs("\" data-e=\"", f);
        first = 1;
        for (size_t l = 0; l < nl; l++)
            if (val[p * nl + l] >= 0) {
                fprintf(f, "%s%" PRId64, first ? "" : " ", lens[l]);
                first = 0;
            }
        fputs("\"/>", f);
    }
    fputs("</g></svg><g class=\"xj\"></g><g class=\"zp\">", f);
    for (size_t p = 0; p <= np && !(p == np && frag); p++) {
        char key[24];
        report_seq_key(p, np, key, sizeof key);
        for (size_t l = 0; l < nl; l++) {
            double v = val[p * nl + l];
            int x = report_seq_x(l, nl);
            if (v >= 0)
                fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"%s\" data-s=\"%s\" "
                           "data-x=\"%d\"/>",
                        x, (int)(MT + (H - MT - MB) * (1 - v / top)),
                        p == np ? "#000" : report_color(polrun[p]), key, x);
        }
    }
    fprintf(f, "</g><text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">seq_len</text>"
               "</svg><div class=\"legend\">",
            (W + ML) / 2, H - 3);
    for (size_t p = 0; p < np; p++) {
        char key[24];
        snprintf(key, sizeof key, "p%zu", p);
        report_legend_item(f, report_color(polrun[p]), "", pols[p], key);
    }
    if (!frag)
        report_legend_item(f, "#000", " stroke-dasharray=\"6 4\"", "load", "ld");
    fputs("</div></figure>\n", f);
    free(val);
    free(lens);
}
