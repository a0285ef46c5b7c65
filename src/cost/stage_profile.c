/*
 * The stage profile (pp_stage_profile): every operation and collective of a
 * rank kept as an entry with its overlap rule, and summed back by the same
 * rules (pp_stage_profile_sum equals the memoised stage cost).  Allocates
 * nothing: the entries are the caller's profile.
 */
#include <stdint.h>
#include <string.h>

#include "stage_int.h"
#include "util/util.h"

/* Time every operation and collective of one unit (the work in `w`, `times`
 * of it on the stage) and append them to `b`. */
static void unit_entries(ebuf *b, const pp_work *w, const pp_system *s, const pp_job *job,
                         const pp_layout *lay, pp_profile_unit unit, double times)
{
	if (w->overflow)
		b->overflow = true;
	int base = b->n;
	if (b->n + w->nops + w->ncolls > b->cap) {
		b->overflow = true;
		return;
	}
	for (int i = 0; i < w->nops; i++)
		ppi_stage_fill_op(&b->e[b->n++], &w->ops[i], s, job, unit, times);
	for (int i = 0; i < w->ncolls; i++)
		ppi_stage_fill_coll(&b->e[b->n++], &w->colls[i], w, s, lay, unit, times, base,
		                    NULL);
}

pp_status pp_scenario_profile(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_profile *out,
                              pp_error *err)
{
	return ppi_stage_profile(sc, stage, ws, out, err);
}

pp_status pp_stage_profile_build(const pp_model *m, const pp_system *s, const pp_job *job,
                                 const pp_plan *p, int stage, pp_work *ws, pp_stage_profile *out,
                                 pp_error *err)
{
	pp_scenario sc;
	ppi_scenario_init(&sc, m, s, job, p, 0);
	return ppi_stage_profile(&sc, stage, ws, out, err);
}

pp_status ppi_stage_profile(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_profile *out,
                            pp_error *err)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	const pp_plan *p = &sc->plan;
	if (stage < 0 || stage >= p->pp)
		return ppi_fail(err, "", "stage", "stage %d is outside 0..%d", stage, p->pp - 1);
	out->stage = stage;
	out->n = 0;
	const pp_layout *lay = sc->place.group;
	stage_ctx c;
	ppi_stage_layers(sc, stage, &c);
	out->layers = c.k.layers;
	out->ep_visible = ppi_ep_visible(s, job);
	ebuf b = {out->e, 0, PP_PROFILE_MAX, false};
	if (stage == 0) {
		pp_embedding_work(m, job, p, ws);
		unit_entries(&b, ws, s, job, lay, PP_UNIT_EMBEDDING, 1);
	}
	for (int u = 0; u < 4; u++) {
		int k = u % 2, n = u < 2 ? c.k.counts[k] - c.k.frozen[k] : c.k.frozen[k];
		if (n <= 0)
			continue;
		pp_layer_work(m, job, p, u < 2 ? c.k.index[k] : c.k.frozen_index[k], ws);
		unit_entries(&b, ws, s, job, lay, k ? PP_UNIT_MOE_LAYERS : PP_UNIT_DENSE_LAYERS, n);
	}
	if (stage == ppi_stage_head(sc)) {
		pp_head_work(m, job, p, ws);
		unit_entries(&b, ws, s, job, lay, PP_UNIT_HEAD, 1);
	}
	ppi_stage_entries(&b, sc, stage, &c, ws);
	out->n = b.n;
	if (b.overflow)
		return ppi_stage_overflow_fail(err);
	return PP_OK;
}

void pp_stage_profile_sum(const pp_stage_profile *prof, const pp_system *s, const pp_plan *p,
                          pp_stage_time *out)
{
	memset(out, 0, sizeof *out);
	out->stage = prof->stage;
	acc a;
	memset(&a, 0, sizeof a);
	/* Unit by unit: SUMMA's panels are matched within their unit. */
	int i = 0;
	while (i < prof->n && prof->e[i].unit != PP_UNIT_STAGE) {
		int j = i;
		while (j < prof->n && prof->e[j].unit == prof->e[i].unit)
			j++;
		ppi_stage_acc_unit(&a, prof->e, i, j, ppi_moe_host_sync(s, p), prof->ep_visible);
		i = j;
	}
	ppi_stage_finish(out, &a, prof->e, i, prof->n, s, p, prof->layers);
}
