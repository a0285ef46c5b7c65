/*
 * Seed 001 Algorithm 1 over a list of plans (include/paraplan/netmap.h,
 * pp_netmap_rank): the annealed mapping of each, and the list re-ranked by
 * the mapped time.
 */
#include <stdlib.h>
#include <string.h>

#include "paraplan/estimate.h"
#include "paraplan/netmap.h"
#include "util/util.h"

/* One plan's mapping into *out: PP_OK, or the annealer's error. */
static pp_status map_one(const pp_estimate *e, const pp_bandwidth *bw, unsigned long long seed,
                         long long moves, pp_netmap_plan *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	out->closed_s = e->time.iteration_s;
	out->identity_s = out->annealed_s = out->mapped_s = out->closed_s;
	out->gain = 1;
	if (e->plan.cp > 1 || e->plan.tp2 > 1) /* pp_netmap_run's workers: pp x tp x dp */
		return PP_OK;
	pp_netmap *run;
	PPI_TRY(pp_netmap_run(e, bw, seed, moves, &run, err));
	out->mapped = true;
	out->eq3_identity_s = run->identity.iteration_s;
	out->eq3_annealed_s = run->annealed.iteration_s;
	if (run->sim_s[0] > 0 && run->sim_s[1] > 0) {
		out->simulated = true;
		out->identity_s = run->sim_s[0];
		out->annealed_s = run->sim_s[1];
	} else if (out->eq3_identity_s > 0) {
		/* a schedule the simulator refuses: the closed form by Eq. 3's ratio */
		out->annealed_s = out->closed_s * out->eq3_annealed_s / out->eq3_identity_s;
	}
	out->kept_identity = out->annealed_s > out->identity_s;
	out->mapped_s = out->kept_identity ? out->identity_s : out->annealed_s;
	out->gain = out->mapped_s > 0 ? out->identity_s / out->mapped_s : 1;
	pp_netmap_free(run);
	return PP_OK;
}

/* The time a plan is re-ranked by. */
static double rank_s(const pp_netmap_plan *p)
{
	return p->mapped ? p->mapped_s : p->closed_s;
}

pp_status pp_netmap_rank(const pp_estimate *const *plans, size_t n, const pp_bandwidth *bw,
                         unsigned long long seed, long long moves, pp_netmap_ranking *out,
                         pp_error *err)
{
	memset(out, 0, sizeof *out);
	out->seed = seed;
	out->moves = moves;
	out->plans = ppi_calloc(n ? n : 1, sizeof *out->plans);
	out->order = ppi_calloc(n ? n : 1, sizeof *out->order);
	if (!out->plans || !out->order) {
		pp_netmap_ranking_free(out);
		return ppi_fail(err, "", "bandwidth", "out of memory");
	}
	out->n = n;
	for (size_t i = 0; i < n; i++) {
		pp_status st = map_one(plans[i], bw, seed, moves, &out->plans[i], err);
		if (st) {
			pp_netmap_ranking_free(out);
			return st;
		}
	}
	/* insertion by rank time, stable: the given order breaks ties */
	for (size_t i = 0; i < n; i++) {
		size_t k = i;
		while (k > 0 && rank_s(&out->plans[out->order[k - 1]]) > rank_s(&out->plans[i])) {
			out->order[k] = out->order[k - 1];
			k--;
		}
		out->order[k] = i;
	}
	for (size_t k = 0; k < n; k++)
		out->plans[out->order[k]].rank = k;
	return PP_OK;
}

void pp_netmap_ranking_free(pp_netmap_ranking *r)
{
	free(r->plans);
	free(r->order);
	memset(r, 0, sizeof *r);
}
