/*
 * The inputs bundle's resolver (include/paraplan/inputs.h): references to
 * the model, the system and what adjusts the system, resolved in the order
 * the command line applies them.
 */
#include "paraplan/inputs.h"

#include "paraplan/dhelix.h"
#include "paraplan/kernel.h"

static pp_status part_fail(pp_status st, pp_inputs_part part, pp_inputs_part *failed)
{
	if (failed)
		*failed = part;
	return st;
}

/* The GPU's measured kernel tables in `dir`: its kernel model replaces the
 * roofline with fitted efficiencies for compute and memory-bound ops. */
static pp_status fit_profile(const char *dir, pp_gpu *gpu, pp_error *err)
{
	pp_kernel_profile *prof = NULL;
	pp_status st = pp_kernel_profile_read(dir, &prof, err);
	if (st == PP_OK)
		st = pp_kernel_fit(prof, gpu, err);
	pp_kernel_profile_free(prof);
	return st;
}

/* On the kernel path ZeRO-3 traffic hidden under compute keeps the visible
 * share the GPU's overlap table measured (seed 002 Table 7: the
 * concurrent-kernel slowdown plus the launch gap, data/overlap), as
 * calibrate --kernel-model charges it (pp_fit_kernel_model); a GPU whose file
 * names no overlap table keeps the framework's value. */
static void zero3_visible_measured(pp_system *s)
{
	const char *platform = pp_dh_platform_of_gpu(&s->gpu);
	pp_dh_overlap o;
	pp_error ignored;
	if (platform && pp_dh_overlap_default(platform, &o, &ignored) == PP_OK)
		s->zero3_visible = o.kernel_slowdown + o.launch_interval;
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
	if (refs->gpu_profile)
		zero3_visible_measured(&in->system);
	if (refs->usd_per_gpu_hour >= 0)
		in->system.usd_per_gpu_hour = refs->usd_per_gpu_hour;
	if (refs->overlap) {
		pp_dh_overlap t;
		if ((st = pp_dh_overlap_resolve(refs->overlap, &t, err)))
			return part_fail(st, PP_INPUTS_OVERLAP, failed);
		pp_dh_system_set_overlap(&in->system, &t);
	}
	return PP_OK;
}

pp_status pp_inputs_estimate(const pp_inputs *in, pp_estimate *out, pp_error *err)
{
	return pp_estimate_run(&in->model, &in->system, &in->job, &in->plan, in->gpus, out, err);
}
