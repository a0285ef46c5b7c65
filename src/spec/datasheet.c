/*
 * GPU facts the models read by GPU name: the SM count and the compute
 * capability of each preset GPU, from its data file (spec.h,
 * pp_gpu_datasheet_sms and pp_gpu_datasheet_arch).  Here, in spec, because the
 * plan checks read them (pp_job_check_gpu: MXFP8 needs compute capability
 * 10.0) as well as the kernel model, the cost model and the fitter.
 */
#include "spec_int.h"

/* The facts are data (data/gpus: sm_count and compute_capability, each with
 * its source): these read the preset GPU's file (parsed once per process,
 * preset.c).  A GPU's own file is read into pp_gpu.sm_count and
 * compute_capability_x10, which code that holds the GPU reads instead. */
int pp_gpu_datasheet_arch(const char *gpu)
{
	pp_gpu g;
	pp_error err;
	return gpu && pp_gpu_preset(gpu, &g, &err) == PP_OK ? g.compute_capability_x10 : 0;
}

double pp_gpu_datasheet_sms(const char *gpu)
{
	pp_gpu g;
	pp_error err;
	return gpu && pp_gpu_preset(gpu, &g, &err) == PP_OK ? g.sm_count : 0;
}
