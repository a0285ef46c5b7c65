/*
 * DualPipe and DualPipeV's task lists for the simulator: the orders and the
 * placement of their schedule types (src/spec/sched_dualpipe.c,
 * sched_dualpipev.c) through pp_sim_orders, after the types' own checks.
 */
#include "schedule/dualpipe.h"
#include "util/util.h"

pp_status pp_dualpipe_sim_orders(pp_sim *sim, int pp, long long m, pp_error *err)
{
	PPI_TRY(pp_dualpipe_validate(pp, m, err));
	return pp_sim_orders(sim, PP_SCHED_DUALPIPE, pp, m, 1, err);
}

pp_status pp_dualpipev_sim_orders(pp_sim *sim, int pp, long long m, pp_error *err)
{
	PPI_TRY(pp_dualpipev_validate(pp, m, err));
	return pp_sim_orders(sim, PP_SCHED_DUALPIPEV, pp, m, 1, err);
}
