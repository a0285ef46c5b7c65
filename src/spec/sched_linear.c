/*
 * The linear schedules' shared members (sched_int.h).
 */
#include "sched_int.h"
#include "util/util.h"

pp_status ppi_sched_flat_validate(const pp_plan *p, pp_error *err)
{
	if (p->vp != 1)
		return ppi_fail(err, "", "plan.vp", "vp %d needs the interleaved schedule, not %s",
		                p->vp, pp_schedule_name(p->schedule));
	return PP_OK;
}

int ppi_sched_linear_chunks(const pp_plan *p)
{
	return p->vp > 1 ? p->vp : 1;
}

int ppi_sched_linear_virtual_stage(const pp_plan *p, int rank, int chunk)
{
	return chunk * p->pp + rank;
}

int ppi_sched_linear_head(const pp_plan *p)
{
	return p->pp - 1;
}

double ppi_sched_1f1b_inflight(const pp_plan *p, int stage)
{
	double m = (double)p->microbatches, k = (double)p->pp - stage;
	return k < m ? k : m;
}

double ppi_sched_one_held(const pp_plan *p)
{
	(void)p;
	return 1.0;
}

double ppi_sched_linear_sends(const pp_plan *p)
{
	return p->vp > 1 ? p->vp : 1;
}

int ppi_sched_linear_links(const pp_plan *p, int stage, pp_sched_link out[PP_SCHED_MAX_LINKS])
{
	int v = p->vp > 1 ? p->vp : 1;
	out[0].peer = (stage + 1) % p->pp;
	out[0].count = stage < p->pp - 1 ? v : v - 1;
	return 1;
}

pp_status ppi_sched_flat_sim_shape(int p, long long m, int v, int *chunks, pp_error *err)
{
	(void)p;
	(void)m;
	if (v != 1)
		return ppi_fail(err, "", "plan.vp", "vp %d needs the interleaved schedule", v);
	*chunks = 1;
	return PP_OK;
}

double ppi_sched_1f1b_bubble_fraction(int p, long long m, int v)
{
	(void)v;
	double P = p, M = (double)m;
	return (P - 1) / (M + P - 1);
}

double ppi_sched_1f1b_floor_bubble_s(const pp_plan *p, double others_s, double send_s)
{
	return p->pp > 1 ? others_s + (p->pp - 1) * send_s : 0;
}
