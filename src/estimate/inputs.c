/*
 * The inputs bundle's resolver (include/paraplan/inputs.h): references to
 * the model, the system and what adjusts the system, resolved in the order
 * the command line applies them.
 */
#include <math.h>
#include <stdio.h>

#include "paraplan/inputs.h"

#include "paraplan/dhelix.h"
#include "paraplan/kernel.h"
#include "util/util.h"

static pp_status part_fail(pp_status st, pp_inputs_part part, pp_inputs_part *failed)
{
	if (failed)
		*failed = part;
	return st;
}

/* The GPU's measured kernel tables in `dir`: its kernel model fitted to
 * them instead of carried from the reference H100's. */
static pp_status fit_profile(const char *dir, pp_gpu *gpu, pp_error *err)
{
	pp_kernel_profile *prof = NULL;
	pp_status st = pp_kernel_profile_read(dir, &prof, err);
	if (st == PP_OK)
		st = pp_kernel_fit(prof, gpu, err);
	pp_kernel_profile_free(prof);
	return st;
}

pp_status pp_system_compute_model(pp_system *s, pp_error *err)
{
	pp_gpu *g = &s->gpu;
	if (!g->kern.valid) {
		if (!(g->sm_count > 0))
			return ppi_fail(
			    err, g->name, "gpu.sm_count",
			    "the kernel model needs the SM count of GPU '%s' (\"sm_count\" in "
			    "its file)",
			    g->name);
		PPI_TRY(pp_kernel_scale(g, g->sm_count, err));
	}
	double slowdown, launch;
	if (s->dh_overlap_set) {
		slowdown = s->dh_kernel_slowdown;
		launch = s->dh_launch_interval;
	} else {
		/* No table known: unknown (NAN), refused by the estimate of a
		 * ZeRO-3 plan, the only one that reads it. */
		const char *platform = pp_dh_platform_of_gpu(g);
		pp_dh_overlap o;
		if (platform)
			PPI_TRY(pp_dh_overlap_default(platform, &o, err));
		slowdown = platform ? o.kernel_slowdown : NAN;
		launch = platform ? o.launch_interval : NAN;
	}
	s->zero3_visible = slowdown + launch;
	g->kern.fused_bias_dropout_add = s->fused_bias_dropout_add >= 0.5;
	/* The measured attention is Hopper-native; a stack whose attention
	 * kernel is not (FlashAttention-2, Triton) reaches its stated fraction
	 * of it there. */
	double a = s->attn_sm90_fraction;
	g->kern.attn_stack_fraction = g->compute_capability_x10 == 90 && a > 0 && a < 1 ? a : 1;
	g->kern.attn_fa2 = a > 0 && a < 1;
	g->kern.stack_fractions = true;
	return PP_OK;
}

pp_status pp_inputs_resolve(const pp_input_refs *refs, pp_inputs *in, pp_inputs_part *failed,
                            pp_error *err)
{
	pp_status st = PP_OK;
	if (failed)
		*failed = PP_INPUTS_OK;
	if (refs->model_ref)
		st = pp_model_resolve(refs->model_ref, &in->model, err);
	else if (refs->model)
		in->model = *refs->model;
	if (st)
		return part_fail(st, PP_INPUTS_MODEL, failed);
	if ((st = pp_system_resolve(refs->system_ref, &in->system, err)))
		return part_fail(st, PP_INPUTS_SYSTEM, failed);
	if (refs->framework && (st = pp_system_set_framework(&in->system, refs->framework, err)))
		return part_fail(st, PP_INPUTS_FRAMEWORK, failed);
	if (refs->gpu_profile && (st = fit_profile(refs->gpu_profile, &in->system.gpu, err)))
		return part_fail(st, PP_INPUTS_GPU_PROFILE, failed);
	if (refs->usd_per_gpu_hour >= 0)
		in->system.usd_per_gpu_hour = refs->usd_per_gpu_hour;
	if (refs->overlap) {
		pp_dh_overlap t;
		if ((st = pp_dh_overlap_resolve(refs->overlap, &t, err)))
			return part_fail(st, PP_INPUTS_OVERLAP, failed);
		pp_dh_system_set_overlap(&in->system, &t);
	}
	if ((st = pp_system_compute_model(&in->system, err)))
		return part_fail(st, PP_INPUTS_SYSTEM, failed);
	return PP_OK;
}

pp_status pp_inputs_estimate(const pp_inputs *in, pp_estimate *out, pp_error *err)
{
	return pp_estimate_run(&in->model, &in->system, &in->job, &in->plan, in->gpus, out, err);
}

void pp_inputs_error_as_flags(pp_inputs_part part, pp_error *err)
{
	static const char *const flag[] = {
	    "", "--model", "--system", "--framework", "--gpu-profile", "--overlap"};
	if (part == PP_INPUTS_FRAMEWORK ||
	    (!err->source[0] && (part != PP_INPUTS_GPU_PROFILE || !err->field[0])))
		snprintf(err->field, sizeof err->field, "%s", flag[part]);
}
