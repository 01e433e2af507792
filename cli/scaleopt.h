/*
 * cli/scaleopt.h — opening the captures of `gmsim scale` and `gmsim fit
 * --from` (cli/cmd_scale.c): DB[:TRACE] arguments, their stores, and the
 * scale plan made from them.
 */
#ifndef GM_CLI_SCALEOPT_H
#define GM_CLI_SCALEOPT_H

#include <stddef.h>
#include <stdint.h>

#include "gmsim/scale.h"

typedef struct gm__cli_captures gm__cli_captures_t;

/*
 * Open the n captures args[0..n) (DB[:TRACE]: TRACE may be left out when
 * DB holds one trace) and make their plan: at_seq / at_batch give the
 * captures' sizes (n values each, or NULL: their attributes), opts as for
 * gm_scale_plan_create; usage is the verb's, printed after a usage error
 * (a store of several traces named without its TRACE).  Prints the
 * diagnostic and returns GM_CLI_ERROR or GM_CLI_USAGE on failure (*out NULL
 * then); the caller closes *out.
 */
int gm__cli_captures_open(const char *usage, char **args, size_t n, const uint64_t *at_seq,
                          const uint64_t *at_batch, const gm_scale_options_t *opts,
                          gm__cli_captures_t **out);
gm_scale_plan_t *gm__cli_captures_plan(const gm__cli_captures_t *c);
const char *gm__cli_captures_label(const gm__cli_captures_t *c, size_t i);
const char *gm__cli_captures_trace(const gm__cli_captures_t *c, size_t i);
gm_store_t *gm__cli_captures_store(const gm__cli_captures_t *c, size_t i);
void gm__cli_captures_close(gm__cli_captures_t *c);

/* For `fit --from`: print how sure its answer is, "'caching': seq 2900 fits
 * with 2.10 GiB to spare; the band is ±410.00 MiB (1.5%, 11.3x beyond the
 * captures)": policy's peak at value (seq when vary_seq, else batch)
 * against capacity, with gm_scale_band's band on that peak.  Returns 1,
 * or 0 having printed nothing when the band cannot be had. */
int gm__cli_captures_band(const gm__cli_captures_t *c, int vary_seq, uint64_t value,
                          const char *policy, uint64_t peak, uint64_t capacity);

#endif
