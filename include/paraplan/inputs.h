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

/*
 * Make the kernel model `s`'s compute model (docs/kernel.md, docs/calibration.md):
 * the reference H100's kernel parameters (fitted once to the measured tables
 * of ../shared/measurements/h100-sxm) carried to s->gpu as fractions of its
 * own datasheet peaks with its SM count (pp_kernel_scale), unless a measured
 * profile already set them (--gpu-profile, pp_kernel_fit); the GPU's
 * `efficiency` values read as the training stack's fractions of those kernel
 * rates; and the stack's terms that depend on the GPU: its attention kernel's
 * share of the Hopper-native rate (attn_sm90_fraction, on sm90 only), its
 * fused bias-dropout-add, and the visible share of overlapped ZeRO-3 traffic
 * from the GPU's overlap table (seed 002 Table 7: kernel_slowdown +
 * launch_interval; the system's own table when one was given; NAN when the
 * GPU names none and none was given, which a ZeRO-3 estimate refuses).  Idempotent:
 * every value is derived from `s` afresh.  pp_inputs_resolve and the run
 * readers call it; pp_estimate_* call it on a copy of a system that has not
 * been through it.  PP_OK; PP_EINPUT naming gpu.sm_count when the GPU
 * lacks it.
 */
pp_status pp_system_compute_model(pp_system *s, pp_error *err);

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

/*
 * A failure of pp_inputs_resolve in the command line's words: the reference
 * `part` that failed is named by its flag ("--model", "--system",
 * "--framework", "--gpu-profile", "--overlap") in err->field where the reader
 * named no file (always for --framework; for --gpu-profile only when the
 * reader named no field either; PP_INPUTS_OK, which names no reference,
 * empties err->field where there is no source).
 */
void pp_inputs_error_as_flags(pp_inputs_part part, pp_error *err);

/* pp_estimate_run on the bundle: *out (caller-owned) as pp_estimate_run fills it. */
pp_status pp_inputs_estimate(const pp_inputs *in, pp_estimate *out, pp_error *err);

#ifdef __cplusplus
}
#endif

#endif
