/*
 * Like-for-like comparison of a prediction with a published measurement.
 */
#include <math.h>
#include <string.h>

#include "paraplan/calib.h"
#include "util/util.h"

const char *pp_metric_name(pp_metric m)
{
	switch (m) {
	case PP_METRIC_ITERATION_S: return "iteration_s";
	case PP_METRIC_TOKENS_PER_S: return "tokens_per_s_per_gpu";
	case PP_METRIC_TFLOPS: return "tflops_per_gpu";
	case PP_METRIC_MFU: return "mfu";
	case PP_METRIC_HFU: return "hfu";
	case PP_METRIC_PEAK_MEMORY: return "peak_memory";
	case PP_METRIC_NONE:
	default: return "none";
	}
}

static bool has(const char *s, const char *w)
{
	return ppi_contains(s, w);
}

/*
 * FLOPs per token the source counts.  Narayanan et al. (SC'21) Eq. 3:
 * 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) per iteration of B sequences, i.e.
 * with the recompute forward; "hardware" counts (BLOOM's 4x2 coefficient,
 * HFU) include recompute; everything else is model FLOPs.
 */
static double source_flops_per_token(const pp_run_info *info, const pp_estimate *e)
{
	const char *d = info->tflops_definition;
	const pp_model *m = &e->model;
	if (has(d, "Eq.3") || has(d, "Eq. 3") || has(d, "96")) {
		double l = m->num_layers, h = m->hidden, s = e->job.seq_len, V = m->vocab;
		return 96.0 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
	}
	double model = e->model_flops_per_token;
	if (has(d, "hardware") || has(d, "recompute") || has(d, "4*2"))
		return e->model_tflops_per_gpu > 0
		           ? model * e->hardware_tflops_per_gpu / e->model_tflops_per_gpu
		           : model;
	return model;
}

static void set(pp_comparison *c, pp_metric m, double measured, double predicted)
{
	c->metric = m;
	c->measured = measured;
	c->predicted = predicted;
	c->error = measured != 0 ? (predicted - measured) / measured : NAN;
}

void pp_run_compare(const pp_run_info *info, const pp_estimate *e, pp_comparison *speed,
                    pp_comparison *memory)
{
	memset(speed, 0, sizeof *speed);
	double per_gpu_tokens = e->tokens_per_s / (double)e->gpus;
	if (isfinite(info->iteration_time_s) && info->iteration_time_s > 0)
		set(speed, PP_METRIC_ITERATION_S, info->iteration_time_s, e->time.iteration_s);
	else if (isfinite(info->tokens_per_s_per_gpu) && info->tokens_per_s_per_gpu > 0)
		set(speed, PP_METRIC_TOKENS_PER_S, info->tokens_per_s_per_gpu, per_gpu_tokens);
	else if (isfinite(info->tflops_per_gpu) && info->tflops_per_gpu > 0)
		set(speed, PP_METRIC_TFLOPS, info->tflops_per_gpu,
		    source_flops_per_token(info, e) * per_gpu_tokens / 1e12);
	else if (isfinite(info->mfu) && info->mfu > 0)
		set(speed, PP_METRIC_MFU, info->mfu, e->mfu);
	else if (isfinite(info->hfu) && info->hfu > 0)
		set(speed, PP_METRIC_HFU, info->hfu, e->hfu);
	if (memory) {
		memset(memory, 0, sizeof *memory);
		if (isfinite(info->peak_memory_bytes) && info->peak_memory_bytes > 0)
			set(memory, PP_METRIC_PEAK_MEMORY, info->peak_memory_bytes,
			    e->memory.total_bytes);
	}
}
