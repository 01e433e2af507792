/*
 * tests/support/report_fixture.h — the report tests' inputs and readers,
 * shared by tests/test_report.c and test_report_render.c.  Each helper
 * asserts with Criterion: a failed set-up fails the test that called it.
 */
#ifndef GM_TESTS_SUPPORT_REPORT_FIXTURE_H
#define GM_TESTS_SUPPORT_REPORT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/gmsim.h"

#define HOSTILE_NAME "<script>alert(1)</script>.pt"
#define HOSTILE_FRAMES "<script>alert('frame')</script>\nmodel.py:12 in forward http://evil.example/x"

/* The hostile trace: 300 allocations of rt_hostile_size(k) bytes, allocation
 * k freed after allocation k + 50; frames HOSTILE_FRAMES except every third
 * ("other.py:3"); MARK events before allocations rt_mark_at[] with tags
 * HOSTILE_TAGS[rt_mark_tag[]]. */
extern const char *const HOSTILE_TAGS[3];
extern const uint64_t rt_mark_at[5];
extern const int rt_mark_tag[5];
uint64_t rt_hostile_size(uint64_t k);

/* The inputs, made once per process: random traces with seq_len 128, 256,
 * 512 and the hostile trace in the store returned; every available policy
 * of caching, native, buddy (two arenas), bfc and (but under ASan) offline
 * swept into *out. */
const char *rt_inputs_ready(const char **out);

/* The report (format) of the results store out and the traces store in,
 * written to path and read back (the caller frees); it must show `traces`
 * traces (rt_write_report: the 4 of rt_inputs_ready). */
char *rt_write_report_n(const char *in, const char *out, gm_report_format_t format,
                        const char *path, size_t traces);
char *rt_write_report(const char *in, const char *out, gm_report_format_t format,
                      const char *path);

/* Every trace of the store in replayed by `native` into results store out. */
void rt_sweep_native(const char *in, const char *out);

/* Text as the report escapes it (written apart from report/report.c's
 * report_esc, to check it). */
void rt_esc(const char *in, char *out, size_t len);

/* The value of attribute `name` in the tag that starts at `tag`, malloc'd;
 * NULL when the tag lacks it. */
char *rt_attr(const char *tag, const char *name);

/* Whether a space-separated list of integers holds v. */
int rt_list_has(const char *list, uint64_t v);

/* A stored run as the report shows it. */
typedef struct trun {
    char trace[128]; /* escaped as in the report */
    char label[200]; /* escaped */
    char policy[32];
    gm_metrics_t m;
    int has_plan; /* a planner's run, stored with its plan */
    gm_plan_info_t plan;
} trun_t;

/* The runs of results store out (*runs malloc'd; the caller frees): their
 * count.  rt_find_run: the one of trace and label (escaped), or NULL. */
size_t rt_load_runs(const char *out, trun_t **runs);
const trun_t *rt_find_run(const trun_t *runs, size_t n, const char *trace,
                          const char *label);

#endif
