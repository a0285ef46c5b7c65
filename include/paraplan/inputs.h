/*
 * paraplan — the inputs of one estimate as one bundle, and their resolver.
 *
 * A run is described by five things: the model, the system, the job, the
 * parallel plan and the GPU count.  pp_inputs holds them together (by value:
 * the bundle owns nothing on the heap), so a caller passes one pointer where
 * the library's older entry points take five.  pp_inputs_resolve turns
 * references (preset names or files, a framework preset, a GPU profile
 * directory, an overlap table, a price) into the model and system, the way
 * the command line does for `--model`, `--system`, `--framework`,
 * `--gpu-profile`, `--overlap` and `--usd-per-gpu-hour`; the job, plan and
 * GPU count are the caller's.
 *
 * The library never prints.
 */
#ifndef PARAPLAN_INPUTS_H
#define PARAPLAN_INPUTS_H

#include "error.h"
#include "estimate.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The five inputs of an estimate, owned by value. */
typedef struct pp_inputs {
	pp_model model;
	pp_system system;
	pp_job job;
	pp_plan plan;
	long long gpus;
} pp_inputs;

/*
 * What to resolve (every pointer borrowed for the call only; NULL: not given).
 * `model_ref` and `system_ref` are a preset name, a file or "-" (standard
 * input); with no `model_ref`, `model` (when set) is copied instead (a model a
 * launch script described).  `framework` names a data/framework preset,
 * `gpu_profile` a directory of measured kernel tables (the GPU's kernel model
 * is fitted to it), `overlap` a DHelix overlap table (name or file);
 * `usd_per_gpu_hour` < 0 keeps the system's price.
 */
typedef struct pp_input_refs {
	const char *model_ref, *system_ref;
	const pp_model *model;
	const char *framework, *gpu_profile, *overlap;
	double usd_per_gpu_hour;
} pp_input_refs;

/* Which reference a failed pp_inputs_resolve could not resolve. */
typedef enum pp_inputs_part {
	PP_INPUTS_OK = 0,
	PP_INPUTS_MODEL,
	PP_INPUTS_SYSTEM,
	PP_INPUTS_FRAMEWORK,
	PP_INPUTS_GPU_PROFILE,
	PP_INPUTS_OVERLAP,
} pp_inputs_part;

/*
 * Resolve `refs` into in->model and in->system (in->job, in->plan and
 * in->gpus are left as the caller set them).  On failure `err` says why as
 * the reader reported it (its source, or no source when the reference named
 * no file) and *failed (may be NULL) names the reference; a caller adds its
 * own name for it.  Two references to standard input are the caller's to
 * refuse.  PP_OK, PP_EINPUT or PP_ENOMEM.
 */
pp_status pp_inputs_resolve(const pp_input_refs *refs, pp_inputs *in, pp_inputs_part *failed,
                            pp_error *err);

/* pp_estimate_run on the bundle: *out (caller-owned) as pp_estimate_run fills it. */
pp_status pp_inputs_estimate(const pp_inputs *in, pp_estimate *out, pp_error *err);

#ifdef __cplusplus
}
#endif

#endif
