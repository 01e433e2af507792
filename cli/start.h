/*
 * cli/start.h — warm and cold starts on the command line (docs/cli.md,
 * "Warm and cold"): the --start option every verb that replays a trace
 * takes, the start a table row or JSON run names, and the line said when
 * a trace's recorded layout does not fit the capacity asked about.
 */
#ifndef GM_CLI_START_H
#define GM_CLI_START_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/gmsim.h"

/* Parse --start TEXT: warm or recorded gives "recorded", cold or empty
 * gives "empty" (the value of the policies' `start` parameter) in *out.
 * A usage error (GM_CLI_USAGE, message printed) for anything else. */
int gm__cli_start_arg(const char *usage, const char *text, const char **out);

/* Set `start` to value ("recorded"/"empty") in every set of a policy that
 * can start from a recorded layout, unless the set was given its start
 * (an explicit P.start wins).  A usage error is impossible: the value
 * was parsed. */
void gm__cli_start_apply(gm_params_t *sets, size_t n, const char *value);

/* "warm" or "cold", the name a table row and a JSON run give a start. */
const char *gm__cli_start_name(int warm);

/* Print, for the run labelled `label` whose recorded layout (layout bytes)
 * did not fit capacity (the allocator's: a device's less its reserve):
 * "'caching': the recorded layout (23.20 GiB) does not fit 22.00 GiB:
 * replayed from an empty allocator". */
void gm__cli_start_unfit(const char *label, uint64_t layout, uint64_t capacity);

/* "  it fits on a device of D or more (...)": need, a run's peak on an
 * unlimited device (gm__cli_unlimited_peak) started warm or cold, and the
 * device's reserve when one was given. */
void gm__cli_fits_with_print(uint64_t need, int warm);

/* The peak reserved of params on trace `name` of s replayed as it was (warm
 * or cold) on an unlimited device with cfg's other settings: the capacity
 * with which the run needs no OOM.  0 with err set on a replay error. */
int gm__cli_unlimited_peak(gm_store_t *s, const char *name, const gm_params_t *params, int warm,
                           const gm_replay_config_t *cfg, uint64_t *peak, gm_error_t *err);

#endif
