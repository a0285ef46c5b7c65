/*
 * The collectives of an estimate's paced stage, as JSON: each with the
 * algorithm the cost model chose for it (pp_profile_entry.algo,
 * src/cost/coll.c).
 */
#include <stdlib.h>

#include "paraplan/cost.h"
#include "paraplan/estimate.h"
#include "report_int.h"
#include "util/util.h"

static const char *const unit_names[] = {"embedding", "dense-layers", "moe-layers", "head",
                                         "stage"};
static const char *const phase_names[] = {"fwd", "bwd-input", "bwd-weight", "recompute"};

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
		    list, json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:s}", "name", x->name, "unit",
		                    unit_names[x->unit], "phase", phase_names[x->phase], "bytes",
		                    x->bytes / x->panels, "count", x->count * x->panels, "seconds",
		                    x->seconds, "algo", x->algo->name));
	}
	out = json_pack("{s:i,s:o}", "stage", stage, "entries", list);
done:
	free(ws);
	free(prof);
	return out;
}
