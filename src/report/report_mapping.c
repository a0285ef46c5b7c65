/*
 * search --bandwidth (seed 001 Algorithm 1 over the search's K plans,
 * pp_netmap_rank): the re-ranked table and the JSON members.
 */
#include <jansson.h>
#include <stdio.h>

#include "paraplan/report.h"
#include "report_int.h"

json_t *ppi_report_mapping_json(const pp_netmap_plan *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "mapped", json_boolean(p->mapped));
	json_object_set_new(o, "simulated", json_boolean(p->simulated));
	json_object_set_new(o, "rank", json_integer((json_int_t)p->rank + 1));
	json_object_set_new(o, "closed_form_iteration_s", json_real(p->closed_s));
	json_object_set_new(o, "identity_iteration_s", json_real(p->identity_s));
	json_object_set_new(o, "annealed_iteration_s", json_real(p->annealed_s));
	json_object_set_new(o, "kept_identity", json_boolean(p->kept_identity));
	json_object_set_new(o, "mapped_iteration_s", json_real(p->mapped_s));
	json_object_set_new(o, "gain", json_real(p->gain));
	json_object_set_new(o, "eq3_identity_s",
	                    p->mapped ? json_real(p->eq3_identity_s) : json_null());
	json_object_set_new(o, "eq3_annealed_s",
	                    p->mapped ? json_real(p->eq3_annealed_s) : json_null());
	return o;
}

json_t *ppi_report_ranking_json(const pp_netmap_ranking *r)
{
	json_t *order = json_array();
	for (size_t k = 0; k < r->n; k++)
		json_array_append_new(order, json_integer((json_int_t)r->order[k] + 1));
	json_t *o = json_object();
	json_object_set_new(o, "bandwidth", r->source ? json_string(r->source) : json_null());
	json_object_set_new(o, "seed", json_integer((json_int_t)r->seed));
	json_object_set_new(o, "moves", json_integer((json_int_t)r->moves));
	json_object_set_new(o, "order", order);
	return o;
}

int pp_report_search_mapping_text(const pp_search *s, const pp_netmap_ranking *r, FILE *out)
{
	if (!r->n)
		return 0;
	fprintf(out,
	        "\nmapped on %s (seed 001 Algorithm 1: each plan's rank -> GPU mapping annealed, "
	        "seed %llu, %lld moves; simulated on the matrix, the faster of the identity and "
	        "the annealed mapping kept; re-ranked by it):\n",
	        r->source ? r->source : "the bandwidth matrix", r->seed, r->moves);
	fprintf(out, "%3s  %6s  %-78s %9s %10s %10s %7s\n", "#", "search", "plan", "iter s",
	        "identity s", "annealed s", "gain");
	const pp_estimate *e = pp_search_plan(s, 0);
	if (!e)
		return -1;
	for (size_t k = 0; k < r->n; k++) {
		size_t i = r->order[k];
		const pp_netmap_plan *p = &r->plans[i];
		pp_search_row row;
		pp_error err;
		if (pp_search_row_get(s, i, &row, &err))
			return -1;
		char words[160];
		ppi_plan_words_split(&e->model, &row.plan, words, sizeof words);
		fprintf(out, "%3zu  %6zu  %-78s %9.3f", k + 1, i + 1, words, p->closed_s);
		if (p->mapped)
			fprintf(out, " %10.3f %10.3f %6.4fx%s%s\n", p->identity_s, p->annealed_s,
			        p->gain, p->kept_identity ? "  identity kept" : "",
			        p->simulated ? "" : "  (Eq. 3 ratio)");
		else
			fprintf(out, " %10s %10s %7s  not mapped (cp or tp2 above 1)\n", "-", "-",
			        "-");
	}
	return ferror(out) ? -1 : 0;
}
