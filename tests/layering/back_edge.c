/*
 * A deliberate back edge for the layering check's test (tools.layering_back_edge):
 * checked as if it were a file of spec/, it includes estimate's header and
 * calls pp_estimate_run, against the flow (estimate reads spec, never the
 * reverse).  Compiled into an object of its own; never linked into paraplan.
 */
#include "paraplan/estimate.h"

pp_status pp_layering_back_edge(const pp_model *m, const pp_system *s, const pp_job *job,
                                const pp_plan *plan, pp_estimate *out, pp_error *err);

pp_status pp_layering_back_edge(const pp_model *m, const pp_system *s, const pp_job *job,
                                const pp_plan *plan, pp_estimate *out, pp_error *err)
{
	return pp_estimate_run(m, s, job, plan, 8, out, err);
}
