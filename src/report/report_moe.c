/*
 * The MoE routing of an estimate with --moe-routing (job.moe_routing): the
 * dispatch all-to-all of one MoE layer and micro-batch under the routing
 * model of seed 000 Eq. 10 (pp_moe_alltoall_run on pp_moe_routing_of_plan),
 * its expected time, p50 and p99 over MOE_SAMPLES sampled routings, the
 * uniform routing's time and the dropped fraction: at step 0, or with drift
 * over the run's steps (pp_moe_run_steps; the samples spread over them).  The closed form's EP time is
 * already scaled by expected over uniform (src/workload/ops.c); these lines
 * show the spread around it.
 */
#include "paraplan/estimate.h"
#include "paraplan/moe.h"
#include "report_int.h"
#include "util/util.h"

#define MOE_SAMPLES 200
#define MOE_SEED 7ULL /* fixed: the same samples, the same percentiles, run to run */

typedef struct moe_row {
	double skew_now, p50_s, p99_s, expected_s, uniform_s, dropped, steps;
} moe_row;

/* false when the estimate has no routing or its plan none to model (ep 1). */
static bool moe_row_of(const pp_estimate *e, moe_row *row)
{
	const pp_moe_spec *sp = &e->job.moe_routing;
	pp_moe_routing r;
	if (!sp->set || pp_moe_routing_of_plan(&e->model, &e->system, &e->job, &e->plan, &r, NULL))
		return false;
	r.skew = sp->skew;
	r.drift_steps = sp->drift_steps;
	r.capacity_factor = sp->capacity_factor;
	pp_moe_result a, b;
	double n = pp_moe_run_steps(&e->job);
	if (pp_moe_alltoall_run(&r, n, MOE_SAMPLES, 0.99, MOE_SEED, &a, NULL))
		return false;
	if (pp_moe_alltoall_run(&r, n, MOE_SAMPLES, 0.5, MOE_SEED, &b, NULL)) {
		pp_moe_result_free(&a);
		return false;
	}
	*row = (moe_row){a.skew_now,
	                 b.percentile_s,
	                 a.percentile_s,
	                 a.expected_s,
	                 a.uniform_s,
	                 a.dropped_fraction,
	                 n};
	pp_moe_result_free(&a);
	pp_moe_result_free(&b);
	return true;
}

void ppi_report_moe_text(const pp_estimate *e, FILE *out)
{
	moe_row m;
	if (!moe_row_of(e, &m))
		return;
	if (m.steps > 0)
		fprintf(
		    out,
		    "  moe routing: zipf skew %.2f -> %.2f over the run's %.0f steps (drift %g), "
		    "dispatch all-to-all (one layer, one micro-batch) across the run p50 %.3f "
		    "ms, p99 %.3f ms, mean %.3f ms, uniform %.3f ms, dropped %.1f%%\n",
		    e->job.moe_routing.skew, m.skew_now, m.steps, e->job.moe_routing.drift_steps,
		    m.p50_s * 1e3, m.p99_s * 1e3, m.expected_s * 1e3, m.uniform_s * 1e3,
		    100 * m.dropped);
	else
		fprintf(out,
		        "  moe routing: zipf skew %.2f, dispatch all-to-all (one layer, one "
		        "micro-batch) p50 %.3f ms, p99 %.3f ms, expected %.3f ms, uniform %.3f ms, "
		        "dropped %.1f%%\n",
		        m.skew_now, m.p50_s * 1e3, m.p99_s * 1e3, m.expected_s * 1e3,
		        m.uniform_s * 1e3, 100 * m.dropped);
}

json_t *ppi_report_moe_json(const pp_estimate *e)
{
	moe_row m;
	if (!moe_row_of(e, &m))
		return NULL;
	const pp_moe_spec *sp = &e->job.moe_routing;
	json_t *o = json_object();
	json_object_set_new(o, "skew", json_real(sp->skew));
	json_object_set_new(o, "drift_steps", json_real(sp->drift_steps));
	json_object_set_new(o, "run_steps", json_real(m.steps)); /* 0: at step 0 */
	json_object_set_new(o, "skew_end", json_real(m.skew_now));
	json_object_set_new(o, "capacity_factor", json_real(sp->capacity_factor));
	json_object_set_new(o, "p50_s", json_real(m.p50_s));
	json_object_set_new(o, "p99_s", json_real(m.p99_s));
	json_object_set_new(o, "expected_s", json_real(m.expected_s));
	json_object_set_new(o, "uniform_s", json_real(m.uniform_s));
	json_object_set_new(o, "dropped_fraction", json_real(m.dropped));
	json_object_set_new(o, "samples", json_integer(MOE_SAMPLES));
	return o;
}
