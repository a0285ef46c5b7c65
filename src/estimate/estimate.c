/*
 * Estimate: resolve the plan, then run the models in flow order
 * (workload -> cost -> schedule as they land).
 */
#include <string.h>

#include "paraplan/estimate.h"
#include "util/util.h"

pp_status pp_estimate_run(const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *plan, long long gpus, pp_estimate *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	out->model = *m;
	out->system = *s;
	out->job = *job;
	out->plan = *plan;
	out->gpus = gpus;
	pp_status st = pp_plan_resolve(&out->plan, m, s, gpus, job, err);
	if (st)
		return st;
	if (out->plan.pp > PP_MAX_STAGES)
		return ppi_fail(err, "", "plan.pp", "at most %d pipeline stages are supported, got %d",
		                PP_MAX_STAGES, out->plan.pp);
	pp_model_params(m, &out->params);
	out->nstages = out->plan.pp;
	for (int i = 0; i < out->plan.pp; i++) {
		pp_stage_memory sm;
		st = pp_memory_stage(m, s, job, &out->plan, i, &sm, err);
		if (st)
			return st;
		out->stage_total_bytes[i] = sm.total_bytes;
		if (i == 0 || sm.total_bytes > out->memory.total_bytes)
			out->memory = sm;
	}
	out->capacity_bytes = s->gpu.memory_bytes;
	out->headroom_bytes = out->capacity_bytes - out->memory.total_bytes;
	out->fits = out->headroom_bytes >= 0;
	return PP_OK;
}
