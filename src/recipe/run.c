/*
 * A recipe run phase by phase (include/paraplan/recipe.h): each phase's plan
 * (given, or the search's winner at its final batch), each batch size of its
 * ramp estimated as one plan with its share of the tokens, and the re-shard
 * (checkpoint saved and loaded) between phases whose layout differs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/recipe.h"
#include "paraplan/search.h"
#include "util/util.h"

/* An error of phase `i` of `r`: the library's message, placed at the phase. */
static pp_status phase_fail(const pp_recipe *r, int i, pp_status st, pp_error *err)
{
	if (st != PP_EINPUT || !err)
		return st;
	char why[PP_ERROR_TEXT_MAX + PP_ERROR_FIELD_MAX + 4], field[PP_ERROR_FIELD_MAX];
	if (err->field[0])
		snprintf(why, sizeof why, "%s: %s", err->field, err->text);
	else
		snprintf(why, sizeof why, "%s", err->text);
	snprintf(field, sizeof field, "phases[%d] (%s)", i, r->phases[i].name);
	ppi_fail_at(err, r->path, r->phases[i].line, r->phases[i].column, "%.250s", why);
	ppi_strlcpy(err->field, field, sizeof err->field);
	return PP_EINPUT;
}

/* Phase `p` at batch `gbs` with `tokens` under `plan` into *e, with its goodput. */
static pp_status estimate_at(const pp_recipe *r, const pp_recipe_phase *p, const pp_plan *plan,
                             int gbs, double tokens, pp_estimate *e, pp_error *err)
{
	pp_job job = r->job;
	job.global_batch = gbs;
	job.seq_len = p->seq;
	job.train_tokens = tokens;
	PPI_TRY(pp_estimate_run(&r->model, &r->system, &job, plan, p->gpus, e, err));
	if (!e->fits)
		return ppi_fail(err, NULL, NULL,
		                "the plan does not fit at batch %d: %.2f GiB per GPU of %.2f GiB%s",
		                gbs, e->memory.total_bytes / (1024.0 * 1024 * 1024),
		                e->capacity_bytes / (1024.0 * 1024 * 1024),
		                e->host_fits ? ""
		                             : " (offloaded state over the node's host memory)");
	return pp_estimate_goodput(e, &r->goodput, err);
}

/* The fastest plan that fits phase `p` at its final batch (search.h), into *out. */
static pp_status search_phase(const pp_recipe *r, const pp_recipe_phase *p, pp_plan *out,
                              pp_error *err)
{
	pp_job job = r->job;
	job.global_batch = p->gbs.end;
	job.seq_len = p->seq;
	pp_search_space space;
	pp_search_space_init(&space);
	space.base = p->plan;
	pp_search_options opts;
	pp_search_options_init(&opts);
	opts.top_k = 1;
	pp_search *s;
	PPI_TRY(pp_search_new(&r->model, &r->system, &job, p->gpus, &space, &opts, &s, err));
	pp_status st = PP_OK;
	while (!st && !pp_search_done(s))
		st = pp_search_iterate(s, err);
	const pp_estimate *best = st ? NULL : pp_search_plan(s, 0);
	if (!st && !best)
		st = ppi_fail(err, NULL, NULL, "no plan fits %lld GPUs at batch %d x %d", p->gpus,
		              p->gbs.end, p->seq);
	if (best)
		*out = best->plan;
	pp_search_free(s);
	return st;
}

/* The parallel layout changes between two phases: the checkpoint is re-sharded. */
static bool layout_differs(const pp_recipe_phase_result *a, const pp_recipe_phase_result *b)
{
	const pp_plan *x = &a->plan, *y = &b->plan;
	return a->gpus != b->gpus || x->tp != y->tp || x->tp2 != y->tp2 || x->pp != y->pp ||
	       x->vp != y->vp || x->cp != y->cp || x->ep != y->ep || x->etp != y->etp ||
	       x->dp != y->dp || x->zero != y->zero;
}

/* Add step `s` (its estimate `e`) to phase result `pr`. */
static void add_step(pp_recipe_phase_result *pr, const pp_estimate *e, int gbs, double tokens,
                     double seq)
{
	pp_recipe_step *s = &pr->steps[pr->nsteps++];
	s->gbs = gbs;
	s->tokens = tokens;
	s->iterations = tokens / ((double)gbs * seq);
	s->iteration_s = e->time.iteration_s;
	s->mfu = e->mfu;
	s->peak_bytes = e->memory.total_bytes;
	s->days = e->train_days;
	s->gpu_hours = e->gpu_hours;
	s->cost_usd = e->cost_usd;
	s->eff_days = e->goodput.effective_days;
	s->eff_gpu_hours = e->goodput.gpu_hours;
	s->eff_cost_usd = e->goodput.cost_usd;
	s->energy_j = e->energy.facility_w * s->iteration_s * s->iterations;
	pr->energy_j += s->energy_j;
	pr->tokens += tokens;
	pr->iterations += s->iterations;
	pr->days += s->days;
	pr->gpu_hours += s->gpu_hours;
	pr->cost_usd += s->cost_usd;
	pr->eff_days += s->eff_days;
	pr->eff_gpu_hours += s->eff_gpu_hours;
	pr->eff_cost_usd += s->eff_cost_usd;
	pr->mfu += s->mfu * s->gpu_hours;
	if (s->peak_bytes > pr->peak_bytes)
		pr->peak_bytes = s->peak_bytes;
	pr->capacity_bytes = e->capacity_bytes;
}

/* Phase `i`'s steps into `pr`; *write_s: the time to write its checkpoint. */
static pp_status run_phase(const pp_recipe *r, int i, pp_recipe_phase_result *pr, pp_estimate *e,
                           double *write_s, pp_error *err)
{
	const pp_recipe_phase *p = &r->phases[i];
	pr->gpus = p->gpus;
	pr->plan = p->plan;
	if (p->search)
		PPI_TRY(search_phase(r, p, &pr->plan, err));
	PPI_TRY(estimate_at(r, p, &pr->plan, p->gbs.end, p->tokens, e, err));
	pr->plan = e->plan;
	long long unit = (long long)e->plan.mbs * e->plan.dp;
	int step = p->gbs.step ? p->gbs.step : (int)unit;
	int incr = p->gbs.end > p->gbs.start ? (p->gbs.end - p->gbs.start) / step : 0;
	if ((p->gbs.end - p->gbs.start) % step)
		return ppi_fail(err, NULL, NULL,
		                "the ramp %d -> %d is not whole steps of mbs x dp = %lld (give "
		                "gbs.step)",
		                p->gbs.start, p->gbs.end, unit);
	if (incr + 1 > PP_RECIPE_MAX_STEPS)
		return ppi_fail(err, NULL, NULL,
		                "the ramp has %d batch sizes, more than %d (give a "
		                "larger gbs.step)",
		                incr + 1, PP_RECIPE_MAX_STEPS);
	for (int k = 0; k <= incr; k++) {
		int b = p->gbs.start + k * step;
		double tokens =
		    k < incr ? p->gbs.over_tokens / incr : p->tokens - p->gbs.over_tokens;
		if (b % unit)
			return ppi_fail(err, NULL, NULL,
			                "batch %d of the ramp is not a multiple of mbs x dp = %d x "
			                "%d (Megatron-LM refuses it too)",
			                b, e->plan.mbs, e->plan.dp);
		if (!(tokens > 0))
			continue;
		PPI_TRY(estimate_at(r, p, &pr->plan, b, tokens, e, err));
		add_step(pr, e, b, tokens, p->seq);
	}
	pr->mfu = pr->gpu_hours > 0 ? pr->mfu / pr->gpu_hours : 0;
	pr->ckpt_bytes = e->goodput.ckpt_total_bytes;
	*write_s = e->goodput.write_s;
	return PP_OK;
}

pp_status pp_recipe_run(const pp_recipe *r, pp_recipe_result *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	out->recipe = r;
	pp_estimate *e = ppi_malloc(sizeof *e);
	if (!e)
		return ppi_oom(err);
	pp_status st = PP_OK;
	double write_s[PP_RECIPE_MAX_PHASES] = {0};
	for (int i = 0; i < r->nphases && !st; i++) {
		if ((st = run_phase(r, i, &out->phases[i], e, &write_s[i], err)))
			st = phase_fail(r, i, st, err);
		out->nphases = i + 1;
	}
	/* The re-shards: phase i-1 saves its checkpoint on its GPUs, phase i
	 * loads it on its own, at the same storage bandwidth (goodput.h). */
	double usd = r->system.usd_per_gpu_hour;
	for (int i = 1; i < out->nphases && !st; i++) {
		pp_recipe_phase_result *a = &out->phases[i - 1], *b = &out->phases[i];
		if (!(b->reshard = layout_differs(a, b)))
			continue;
		b->save_s = write_s[i - 1];
		b->load_s = write_s[i];
		b->reshard_gpu_hours =
		    (b->save_s * (double)a->gpus + b->load_s * (double)b->gpus) / 3600;
		b->reshard_cost_usd = b->reshard_gpu_hours * usd;
	}
	for (int i = 0; i < out->nphases && !st; i++) {
		pp_recipe_phase_result *pr = &out->phases[i];
		double reshard_days = (pr->save_s + pr->load_s) / 86400;
		out->tokens += pr->tokens;
		out->days += pr->days + reshard_days;
		out->gpu_hours += pr->gpu_hours + pr->reshard_gpu_hours;
		out->cost_usd += pr->cost_usd + pr->reshard_cost_usd;
		out->eff_days += pr->eff_days + reshard_days;
		out->eff_gpu_hours += pr->eff_gpu_hours + pr->reshard_gpu_hours;
		out->eff_cost_usd += pr->eff_cost_usd + pr->reshard_cost_usd;
		out->reshard_gpu_hours += pr->reshard_gpu_hours;
		out->energy_j += pr->energy_j;
	}
	out->energy_facility = r->job.energy.pue > 0;
	free(e);
	return st;
}

void pp_recipe_group_hours(const pp_recipe_result *res, int g, double *gpu_hours,
                           double *eff_gpu_hours)
{
	const pp_recipe_reported *rep = &res->recipe->reported[g];
	*gpu_hours = *eff_gpu_hours = 0;
	for (int i = rep->first; i <= rep->last && i < res->nphases; i++) {
		const pp_recipe_phase_result *pr = &res->phases[i];
		*gpu_hours += pr->gpu_hours + pr->reshard_gpu_hours;
		*eff_gpu_hours += pr->eff_gpu_hours + pr->reshard_gpu_hours;
	}
}
