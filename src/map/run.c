/*
 * place's run (include/paraplan/netmap.h, pp_netmap_run): the annealer on an
 * estimate's Pipette model, and the identity and annealed mappings read back
 * in the latency model and in the event simulator.
 */
#include <stdlib.h>

#include "paraplan/estimate.h"
#include "paraplan/netmap.h"
#include "util/util.h"

pp_status pp_netmap_run(const pp_estimate *e, const pp_bandwidth *bw, unsigned long long seed,
                        long long max_moves, pp_netmap **out, pp_error *err)
{
	*out = NULL;
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
