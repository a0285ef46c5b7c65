/*
 * The linear schedules' shared members (sched_int.h).
 */
#include <math.h>

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

/* A stage's seconds per micro-batch in the steady state: fwd_s + bwd_s,
 * over its SI speedup where `si` (DHelix's blocks). */
static double stage_s(const pp_stage_time *st, bool si)
{
	double t = st->fwd_s + st->bwd_s;
	return si && st->si_speedup > 0 ? t / st->si_speedup : t;
}

/* The largest window value at period t (ppi_sched_window_period_s): over
 * the windows a..e, the sum of stage_s - t of their stages and pp_s of
 * their links (Kadane's suffix sums); >= 0 where a window's mean is t or
 * more. */
static double window_excess(int n, const pp_stage_time *st, bool si, double t)
{
	double cur = -INFINITY, best = -INFINITY;
	for (int i = 0; i < n; i++) {
		/* the best window ending at i, its link out of i counted */
		double y = stage_s(&st[i], si) - t + st[i].pp_s;
		cur = cur > 0 ? cur + y : y;
		if (cur - st[i].pp_s > best)
			best = cur - st[i].pp_s;
	}
	return best;
}

double ppi_sched_window_period_s(int n, const pp_stage_time *st, bool si)
{
	double lo = 0, send = 0;
	for (int i = 0; i < n; i++) {
		double t = stage_s(&st[i], si);
		lo = t > lo ? t : lo;
		send = st[i].pp_s > send ? st[i].pp_s : send;
	}
	/* No window above the slowest stage: the sends hide (the usual case,
	 * one pass).  Else bisect: a window's mean is below lo + send. */
	if (n < 2 || send <= 0 || window_excess(n, st, si, lo) <= 1e-12 * lo)
		return lo;
	double hi = lo + send;
	for (int k = 0; k < 48 && hi - lo > 1e-12 * hi; k++) {
		double mid = 0.5 * (lo + hi);
		if (window_excess(n, st, si, mid) >= 0)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

double ppi_sched_1f1b_period_s(const pp_plan *p, const pp_stage_time *st)
{
	return ppi_sched_window_period_s(p->pp, st, false);
}
