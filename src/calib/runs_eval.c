/*
 * Published training runs: the evaluation step after the read.  runs.c reads
 * a record without estimating; only a record that does not state its
 * activation recompute is evaluated here (pick_recompute), under each mode
 * in turn.  pp_run_inputs is the read followed by this step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/estimate.h"
#include "paraplan/inputs.h"
#include "runs_int.h"
#include "util/util.h"

/* pp_plan_resolve, with the record named in a failure. */
pp_status ppi_run_resolve(const pp_runs *runs, size_t i, pp_plan *plan, const pp_model *m,
                          const pp_system *s, long long gpus, const pp_job *job, pp_error *err)
{
	pp_status st = pp_plan_resolve(plan, m, s, gpus, job, err);
	if (st == PP_EINPUT && err) {
		char text[PP_ERROR_TEXT_MAX], field[PP_ERROR_FIELD_MAX];
		ppi_strlcpy(text, err->text, sizeof text);
		ppi_strlcpy(field, err->field, sizeof field);
		char where[64];
		snprintf(where, sizeof where, "records[%zu].parallelism", i);
		ppi_fail(err, runs->source, where, "plan does not resolve: %s: %s", field, text);
	}
	return st;
}

/* The evaluation step after the read, for a record that does not state its
 * activation recompute: the lightest mode under which the estimate fits
 * (none, else selective, else full), noted as a fill; `plan` as read
 * (unresolved) comes back resolved under it. */
static pp_status pick_recompute(const pp_runs *runs, size_t i, pp_model *m, pp_system *system,
                                pp_job *job, pp_plan *plan, long long gpus, pp_run_info *info,
                                pp_error *err)
{
	static const pp_recompute order[] = {PP_RECOMPUTE_NONE, PP_RECOMPUTE_SELECTIVE,
	                                     PP_RECOMPUTE_FULL};
	pp_estimate *est = ppi_malloc(sizeof *est);
	if (!est)
		return PP_ENOMEM;
	pp_recompute chosen = PP_RECOMPUTE_FULL;
	for (int k = 0; k < 3; k++) {
		plan->recompute = order[k];
		pp_status st = pp_estimate_run(m, system, job, plan, gpus, est, err);
		if (st) {
			free(est);
			return st;
		}
		if (est->fits) {
			chosen = order[k];
			break;
		}
	}
	free(est);
	plan->recompute = chosen;
	ppi_run_fill(info, PP_FILL_RECOMPUTE,
	             "activation_recompute unknown: %s (none if the plan fits without it, else "
	             "selective, else full)",
	             pp_recompute_name(chosen));
	return ppi_run_resolve(runs, i, plan, m, system, gpus, job, err);
}

pp_status pp_run_read(const pp_runs *runs, size_t i, pp_inputs *in, pp_run_info *info,
                      pp_error *err)
{
	bool recompute_unknown = false;
	in->gpus = 0;
	pp_status st = ppi_run_read_inputs(runs, i, &in->model, &in->system, &in->job, &in->plan,
	                                   &in->gpus, info, &recompute_unknown, err);
	if (!st)
		st = pp_system_compute_model(&in->system, err);
	if (st || !recompute_unknown)
		return st;
	return pick_recompute(runs, i, &in->model, &in->system, &in->job, &in->plan, in->gpus, info,
	                      err);
}

pp_status pp_run_inputs(const pp_runs *runs, size_t i, pp_model *model, pp_system *system,
                        pp_job *job, pp_plan *plan, long long *gpus, pp_run_info *info,
                        pp_error *err)
{
	pp_inputs in;
	pp_status st = pp_run_read(runs, i, &in, info, err);
	*model = in.model;
	*system = in.system;
	*job = in.job;
	*plan = in.plan;
	*gpus = in.gpus;
	return st;
}

bool pp_run_measured(const pp_run_info *i)
{
	const double v[] = {i->iteration_time_s, i->tokens_per_s_per_gpu, i->tflops_per_gpu, i->mfu,
	                    i->hfu};
	for (size_t k = 0; k < sizeof v / sizeof *v; k++)
		if (isfinite(v[k]) && v[k] > 0)
			return true;
	return false;
}

pp_status pp_runs_gpus(const pp_runs *runs, char (*names)[PP_NAME_MAX], size_t max, size_t *n,
                       pp_skips *why, pp_error *err)
{
	*n = 0;
	for (size_t i = 0; i < pp_runs_count(runs) && *n < max; i++) {
		pp_inputs in;
		pp_run_info info;
		pp_status st = pp_run_read(runs, i, &in, &info, err);
		if (st == PP_EINPUT) {
			pp_skips_add(why, err->text);
			continue;
		}
		if (st)
			return st;
		if (!pp_run_measured(&info)) {
			pp_skips_add(why, "without a throughput measurement");
			continue;
		}
		/* One name per silicon: a GPU's fit takes its sibling's records
		 * (pp_fit_new). */
		const char *sib = pp_fit_sibling(in.system.gpu.name, NULL);
		size_t k = 0;
		while (k < *n && strcmp(names[k], in.system.gpu.name) != 0 &&
		       !(sib && strcmp(names[k], sib) == 0))
			k++;
		if (k == *n)
			snprintf(names[(*n)++], PP_NAME_MAX, "%s", in.system.gpu.name);
	}
	return PP_OK;
}
