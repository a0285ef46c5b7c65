/*
 * paraplan — estimate: everything paraplan predicts for one plan.
 */
#ifndef PARAPLAN_ESTIMATE_H
#define PARAPLAN_ESTIMATE_H

#include "spec.h"
#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_MAX_STAGES 512

typedef struct pp_estimate {
	/* Inputs, as resolved (dp, etp and microbatches filled in). */
	pp_model model;
	pp_system system;
	pp_job job;
	pp_plan plan;
	long long gpus;
	/* Results. */
	pp_param_count params;
	pp_stage_memory memory;  /* the peak stage */
	double capacity_bytes;   /* HBM of one GPU */
	double headroom_bytes;   /* capacity - peak total (negative when it does not fit) */
	bool fits;
	int nstages;             /* = plan.pp, up to PP_MAX_STAGES stages listed below */
	double stage_total_bytes[PP_MAX_STAGES];
} pp_estimate;

/*
 * Resolve `plan` against the inputs and estimate it.  Inputs are copied into
 * `out` (caller-owned; nothing to free).  A plan that does not fit is still a
 * result (out->fits false); PP_EINPUT means the inputs are inconsistent.
 */
pp_status pp_estimate_run(const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *plan, long long gpus, pp_estimate *out, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
