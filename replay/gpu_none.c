/*
 * replay/gpu_none.c — the real-GPU entry points of a build without the
 * CUDA toolkit (replay/gpu/ is compiled only where it was found).
 */
#include "gmsim/gpu.h"
#include "gmsim/version.h"

#if !GM_HAVE_CUDA
int gm_gpu_replay(gm_store_t *s, const char *name, const gm_params_t *params,
                  const gm_replay_config_t *cfg, const gm_gpu_options_t *opt,
                  gm_replay_t **out_r, gm_gpu_measured_t *m, gm_error_t *err)
{
    (void)s, (void)name, (void)params, (void)cfg, (void)opt, (void)out_r, (void)m;
    return gm_error_set(err, GM_EUNSUPPORTED,
                        "no CUDA device: gmsim was built without the CUDA toolkit");
}

int gm_gpu_calibrate(const gm_gpu_options_t *opt, unsigned reps, gm_cost_profile_t **out,
                     gm_error_t *err)
{
    (void)opt, (void)reps, (void)out;
    return gm_error_set(err, GM_EUNSUPPORTED,
                        "no CUDA device: gmsim was built without the CUDA toolkit");
}
#else
/* ISO C forbids an empty translation unit. */
typedef int gm__gpu_none_unused;
#endif
