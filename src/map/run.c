/*
 * place's run (include/paraplan/netmap.h, pp_netmap_run): the annealer on an
 * estimate's Pipette model, and the identity and annealed mappings read back
 * in the latency model and in the event simulator.
 */
#include <stdlib.h>

#include "paraplan/estimate.h"
#include "paraplan/netmap.h"
#include "util/util.h"

/*
 * The synthetic matrix's heterogeneity, as Pipette measured it (seed 001
 * Fig. 3-4): the slowest links at half the nominal bandwidth (Fig. 4's
 * "about 2x slower"), each direction of a link within 2% of the pair's
 * (Fig. 3: links designed equal differ).
 */
#define SYNTHETIC_SPREAD 0.5
#define SYNTHETIC_ASYM 0.02

/* GPUs per node of the estimate's system (1 when it gives none). */
static int node_gpus(const pp_estimate *e)
{
	return e->system.gpus_per_node > 0 ? e->system.gpus_per_node : 1;
}

pp_status pp_netmap_bandwidth(const pp_estimate *e, const char *path,
                              unsigned long long synthetic_seed, pp_bandwidth **out, pp_error *err)
{
	*out = NULL;
	int g = node_gpus(e);
	long long nodes = (e->gpus + g - 1) / g;
	if (!path)
		return pp_bandwidth_synthetic((int)nodes, g, e->system.nic_bytes_per_s,
		                              SYNTHETIC_SPREAD, SYNTHETIC_ASYM, synthetic_seed, out,
		                              err);
	return pp_netmap_bandwidth_for(&e->system, e->gpus, path, out, err);
}

pp_status pp_netmap_bandwidth_for(const pp_system *s, long long gpus, const char *path,
                                  pp_bandwidth **out, pp_error *err)
{
	*out = NULL;
	int g = s->gpus_per_node > 0 ? s->gpus_per_node : 1;
	long long nodes = (gpus + g - 1) / g;
	pp_status st = pp_bandwidth_read(path, g, out, err);
	long long need = st ? 0 : (*out)->gpus_per_endpoint == 1 ? gpus : nodes;
	if (!st && (*out)->n < need) {
		st = ppi_fail(err, path, "", "the matrix has %d %s, the plan needs %lld", (*out)->n,
		              (*out)->gpus_per_endpoint == 1 ? "GPUs" : "nodes", need);
		pp_bandwidth_free(*out);
		*out = NULL;
	}
	return st;
}

/* The mapping's workers are pp x tp x dp, one per GPU. */
static pp_status covers(const pp_plan *p, pp_error *err)
{
	if (p->cp > 1 || p->tp2 > 1)
		return ppi_fail(err, "", p->cp > 1 ? "plan.cp" : "plan.tp2",
		                "the mapping covers pp x tp x dp workers: must be 1, got %d",
		                p->cp > 1 ? p->cp : p->tp2);
	return PP_OK;
}

pp_status pp_netmap_run(const pp_estimate *e, const pp_bandwidth *bw, unsigned long long seed,
                        long long max_moves, pp_netmap **out, pp_error *err)
{
	*out = NULL;
	pp_status cst = covers(&e->plan, err);
	if (cst)
		return cst;
	pp_netmap *r = ppi_calloc(1, sizeof *r);
	if (!r)
		return ppi_fail(err, "", "place", "out of memory");
	pp_pipette_model_of(e, bw, &r->m);
	pp_anneal_params ap;
	pp_anneal_params_init(&ap);
	ap.seed = seed;
	ap.max_moves = max_moves;
	pp_status st = pp_anneal_new(&r->m, &ap, &r->anneal, err);
	if (st) {
		free(r);
		return st;
	}
	pp_anneal_run(r->anneal);
	pp_anneal_result_get(r->anneal, &r->result);
	r->best = pp_anneal_best(r->anneal);
	/* the same mappings in the event simulator, Eq. 5-6 per stage; a
	 * refusal there leaves both 0 and is no failure of the run */
	pp_sim *sim = NULL;
	pp_error quiet;
	pp_error_clear(&quiet);
	if (pp_sim_new(&sim, &quiet) == PP_OK) {
		pp_sim_result sr;
		if (pp_pipette_simulate(e, &r->m, NULL, sim, &sr, &quiet) == PP_OK) {
			r->sim_s[0] = sr.iteration_s;
			if (pp_pipette_simulate(e, &r->m, r->best, sim, &sr, &quiet) == PP_OK)
				r->sim_s[1] = sr.iteration_s;
			else
				r->sim_s[0] = 0;
		}
		pp_sim_free(sim);
	}
	pp_pipette_map_latency(&r->m, NULL, &r->identity);
	pp_pipette_map_latency(&r->m, r->best, &r->annealed);
	*out = r;
	return PP_OK;
}

void pp_netmap_free(pp_netmap *r)
{
	if (!r)
		return;
	pp_anneal_free(r->anneal);
	free(r);
}
