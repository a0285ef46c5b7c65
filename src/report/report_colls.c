/*
 * The collectives of an estimate's paced stage, as JSON and as a text line:
 * each with the algorithm the cost model chose for it
 * (pp_profile_entry.algo, src/cost/coll.c); and a timeline's traffic by type.
 */
#include <stdlib.h>

#include "paraplan/cost.h"
#include "paraplan/estimate.h"
#include "paraplan/traffic.h"
#include "report_int.h"
#include "util/util.h"

static const char *const unit_names[] = {"embedding", "dense-layers", "moe-layers", "head",
                                         "stage"};

static const char *const phase_names[] = {"fwd", "bwd-input", "bwd-weight", "recompute"};
static const char *const kind_names[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                         "p2p",        "broadcast",  "reduce"};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == PP_COLL_REDUCE + 1,
               "a name per collective kind");

/* Seconds of entry x in one iteration: its occurrences, layers and (for the
 * per-micro-batch entries) micro-batches, at its own seconds. */
static double iteration_s(const pp_profile_entry *x, const pp_plan *p)
{
	bool per_iteration = x->rule == PP_RULE_DP || x->rule == PP_RULE_DP_GATHER ||
	                     x->rule == PP_RULE_EMB_SYNC || x->rule == PP_RULE_OPTIMIZER;
	double mb = per_iteration ? 1 : (double)p->microbatches;
	return x->seconds * x->count * x->panels * x->times * mb;
}

/* The profile of e's paced stage into *prof (ws scratch); 0 or -1. */
static int paced_profile(const pp_estimate *e, pp_work *ws, pp_stage_profile *prof)
{
	pp_error err;
	if (!ws || !prof)
		return -1;
	pp_work_init(ws);
	return pp_stage_profile_build(&e->model, &e->system, &e->job, &e->plan,
	                              e->time.bottleneck_stage, ws, prof, &err)
	           ? -1
	           : 0;
}

void ppi_report_colls_text(const pp_estimate *e, FILE *out)
{
	pp_work *ws = ppi_malloc(sizeof *ws);
	pp_stage_profile *prof = ppi_malloc(sizeof *prof);
	if (paced_profile(e, ws, prof) == 0) {
		/* the three longest, by their seconds in one iteration */
		int top[3] = {-1, -1, -1}, n = 0;
		double total = 0;
		for (int i = 0; i < prof->n; i++) {
			const pp_profile_entry *x = &prof->e[i];
			if (!x->coll || !x->algo)
				continue;
			n++;
			double t = iteration_s(x, &e->plan);
			total += t;
			for (int k = 0; k < 3; k++)
				if (top[k] < 0 || t > iteration_s(&prof->e[top[k]], &e->plan)) {
					for (int j = 2; j > k; j--)
						top[j] = top[j - 1];
					top[k] = i;
					break;
				}
		}
		if (n > 0) {
			fprintf(out,
			        "  collectives   stage %d, %d of them, %.2f ms before overlap:",
			        prof->stage, n, total * 1e3);
			for (int k = 0; k < 3 && top[k] >= 0; k++) {
				const pp_profile_entry *x = &prof->e[top[k]];
				fprintf(out, "%s %s (%s, %s) %s/%s %.2f ms", k ? "," : "", x->name,
				        phase_names[x->phase], kind_names[x->kind], x->algo->name,
				        pp_coll_proto_name(x->proto),
				        iteration_s(x, &e->plan) * 1e3);
			}
			fputc('\n', out);
		}
	}
	free(ws);
	free(prof);
}

void ppi_report_timeline_types(const pp_traffic_timeline *tl, FILE *out)
{
	bool any[PP_TRAFFIC_NTYPES] = {false};
	for (int r = 0; r < tl->ranks; r++)
		for (int t = 0; t < PP_TRAFFIC_NTYPES; t++)
			any[t] = any[t] || tl->type_bytes[r][t] > 0;
	fprintf(out, "  %-5s", "rank");
	for (int t = 0; t < PP_TRAFFIC_NTYPES; t++)
		if (any[t])
			fprintf(out, " %7s ms %7s MB", pp_traffic_type_name((pp_traffic_type)t),
			        pp_traffic_type_name((pp_traffic_type)t));
	fprintf(out, "   (on seconds and bytes sent, by type)\n");
	for (int r = 0; r < tl->ranks; r++) {
		fprintf(out, "  %-5d", r);
		for (int t = 0; t < PP_TRAFFIC_NTYPES; t++)
			if (any[t])
				fprintf(out, " %10.3f %10.3f", tl->type_on_s[r][t] * 1e3,
				        tl->type_bytes[r][t] / 1e6);
		fputc('\n', out);
	}
}

json_t *ppi_report_colls_json(const pp_estimate *e)
{
	pp_work *ws = ppi_malloc(sizeof *ws);
	pp_stage_profile *prof = ppi_malloc(sizeof *prof);
	json_t *out = NULL;
	pp_error err;
	int stage = e->time.bottleneck_stage;
	if (!ws || !prof)
		goto done;
	pp_work_init(ws);
	if (pp_stage_profile_build(&e->model, &e->system, &e->job, &e->plan, stage, ws, prof, &err))
		goto done;
	json_t *list = json_array();
	for (int i = 0; i < prof->n; i++) {
		const pp_profile_entry *x = &prof->e[i];
		if (!x->coll || !x->algo) /* an operation, or a collective that moves nothing */
			continue;
		json_array_append_new(
		    list, json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:s,s:s}", "name", x->name, "unit",
		                    unit_names[x->unit], "phase", phase_names[x->phase], "bytes",
		                    x->bytes / x->panels, "count", x->count * x->panels, "seconds",
		                    x->seconds, "algo", x->algo->name, "protocol",
		                    pp_coll_proto_name(x->proto)));
	}
	out = json_pack("{s:i,s:o}", "stage", stage, "entries", list);
done:
	free(ws);
	free(prof);
	return out;
}
