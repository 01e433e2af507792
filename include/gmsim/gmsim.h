/*
 * gmsim/gmsim.h — everything public in libgmsim.
 */
#ifndef GMSIM_GMSIM_H
#define GMSIM_GMSIM_H

#include "gmsim/version.h"
#include "gmsim/error.h"
#include "gmsim/trace.h"
#include "gmsim/store.h"
#include "gmsim/device.h"
#include "gmsim/layout.h"
#include "gmsim/policy.h"
#include "gmsim/replay.h"
#include "gmsim/gpu.h"
#include "gmsim/capture.h"
#include "gmsim/json.h"
#include "gmsim/workload.h"
#include "gmsim/csv.h"
#include "gmsim/import.h"
#include "gmsim/formats.h"
#include "gmsim/torch.h"
#include "gmsim/synth.h"
#include "gmsim/gpus.h"
#include "gmsim/sweep.h"
#include "gmsim/report.h"
#include "gmsim/align.h"
#include "gmsim/scale.h"
#include "gmsim/advice.h"

#endif
