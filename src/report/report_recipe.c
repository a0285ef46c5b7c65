/*
 * plan-run's report (PP_RESULT_RECIPE): each phase of a recipe (its plan,
 * batch steps, days, GPU-hours and cost, failure-free and with failures, the
 * re-shard before it), the totals, and the published GPU-hours beside the
 * predicted ones, group by group.  Text and JSON; computes nothing new.
 */
#include <jansson.h>
#include <stdio.h>

#include "format_int.h"
#include "report_int.h"
#include "util/util.h"

#define GIB (1024.0 * 1024 * 1024)

static void plan_line(const pp_plan *p, long long gpus, FILE *f)
{
	fprintf(f,
	        "tp %d  pp %d  dp %d  cp %d  ep %d  etp %d  vp %d  mbs %d  zero %d  recompute %s  "
	        "sp %s  schedule %s  on %lld GPUs",
	        p->tp, p->pp, p->dp, p->cp, p->ep, p->etp, p->vp, p->mbs, p->zero,
	        pp_recompute_name(p->recompute), p->sp ? "on" : "off",
	        pp_schedule_name(p->schedule), gpus);
}

/* A token count as "469 B" or "14.33 T". */
static const char *tokens_text(double t, char *buf, size_t n)
{
	if (t >= 1e12)
		snprintf(buf, n, "%.4g T", t / 1e12);
	else if (t >= 1e9)
		snprintf(buf, n, "%.4g B", t / 1e9);
	else
		snprintf(buf, n, "%.4g M", t / 1e6);
	return buf;
}

static void phase_text(const pp_recipe *rc, const pp_recipe_result *res, int i, FILE *f)
{
	const pp_recipe_phase *p = &rc->phases[i];
	const pp_recipe_phase_result *pr = &res->phases[i];
	if (pr->reshard)
		fprintf(f,
		        "re-shard  save %.1f s on %lld GPUs + load %.1f s on %lld GPUs of a %.2f "
		        "TiB checkpoint: %.1f GPU-hours\n",
		        pr->save_s, res->phases[i - 1].gpus, pr->load_s, pr->gpus,
		        res->phases[i - 1].ckpt_bytes / (GIB * 1024), pr->reshard_gpu_hours);
	char t1[32], t2[32];
	fprintf(f, "phase %d  %s: %s tokens at seq %d, ", i + 1, p->name,
	        tokens_text(pr->tokens, t1, sizeof t1), p->seq);
	if (p->gbs.end > p->gbs.start)
		fprintf(f, "batch %d -> %d over %s tokens in %d sizes\n", p->gbs.start, p->gbs.end,
		        tokens_text(p->gbs.over_tokens, t2, sizeof t2), pr->nsteps);
	else
		fprintf(f, "batch %d\n", p->gbs.end);
	fprintf(f, "  plan   %s", p->search ? "(searched) " : "");
	plan_line(&pr->plan, pr->gpus, f);
	const pp_recipe_step *a = &pr->steps[0], *b = &pr->steps[pr->nsteps - 1];
	fprintf(f, "\n  step   ");
	if (pr->nsteps > 1)
		fprintf(f, "%.3f s at batch %d .. %.3f s at %d", a->iteration_s, a->gbs,
		        b->iteration_s, b->gbs);
	else
		fprintf(f, "%.3f s", b->iteration_s);
	fprintf(f, ", %.0f iterations, MFU %.1f%%, peak %.2f of %.2f GiB\n", pr->iterations,
	        100 * pr->mfu, pr->peak_bytes / GIB, pr->capacity_bytes / GIB);
	fprintf(f,
	        "  total  %.2f days, %.0f GPU-hours, %.0f USD, %.1f MWh; with failures %.2f days, "
	        "%.0f GPU-hours, %.0f USD\n",
	        pr->days, pr->gpu_hours, pr->cost_usd, pr->energy_j / 3.6e9, pr->eff_days,
	        pr->eff_gpu_hours, pr->eff_cost_usd);
}

int ppi_recipe_text(const pp_result *r, FILE *f)
{
	const pp_recipe_result *res = r->recipe;
	const pp_recipe *rc = res->recipe;
	fprintf(f, "paraplan plan-run: %s (%s)\n", rc->name, rc->path);
	if (rc->description[0])
		fprintf(f, "%s\n", rc->description);
	fprintf(f,
	        "model %s on %s (%s), %.2f USD/GPU-hour; failures: MTBF %.0f GPU-hours, "
	        "checkpoints at %.0f GB/s\n\n",
	        rc->model.name, rc->system.name, rc->system.gpu.name, rc->system.usd_per_gpu_hour,
	        rc->goodput.mtbf_gpu_hours, rc->goodput.ckpt_write_bytes_per_s / 1e9);
	for (int i = 0; i < res->nphases; i++)
		phase_text(rc, res, i, f);
	char t[32];
	fprintf(f, "\ntotal    %s tokens, %.2f days, %.0f GPU-hours (re-shards %.1f), %.0f USD\n",
	        tokens_text(res->tokens, t, sizeof t), res->days, res->gpu_hours,
	        res->reshard_gpu_hours, res->cost_usd);
	fprintf(f, "         with failures and checkpoints: %.2f days, %.0f GPU-hours, %.0f USD\n",
	        res->eff_days, res->eff_gpu_hours, res->eff_cost_usd);
	fprintf(
	    f,
	    "energy   %.1f MWh of %s power over the phases (failures and re-shards not counted)\n",
	    res->energy_j / 3.6e9, res->energy_facility ? "facility" : "IT (no PUE given)");
	if (rc->nreported == 0)
		return ferror(f) ? -1 : 0;
	fprintf(f, "\n%-22s %-9s %14s %14s %14s %9s\n", "reported", "phases", "predicted GPU-h",
	        "with failures", "reported GPU-h", "pred/rep");
	for (int g = 0; g < rc->nreported; g++) {
		const pp_recipe_reported *rep = &rc->reported[g];
		char span[32];
		if (rep->last < rep->first) {
			fprintf(f, "%-22s %-9s %14s %14s %14.0f %9s\n", rep->name, "none", "-", "-",
			        rep->gpu_hours, "-");
			continue;
		}
		snprintf(span, sizeof span, rep->last > rep->first ? "%d-%d" : "%d", rep->first + 1,
		         rep->last + 1);
		double h, eh;
		pp_recipe_group_hours(res, g, &h, &eh);
		fprintf(f, "%-22s %-9s %14.0f %14.0f %14.0f %9.3f\n", rep->name, span, h, eh,
		        rep->gpu_hours, rep->gpu_hours > 0 ? h / rep->gpu_hours : 0);
	}
	for (int g = 0; g < rc->nreported; g++)
		fprintf(f, "  %s: %s\n", rc->reported[g].name, rc->reported[g].source);
	return ferror(f) ? -1 : 0;
}

static json_t *phase_json(const pp_recipe *rc, const pp_recipe_result *res, int i)
{
	const pp_recipe_phase *p = &rc->phases[i];
	const pp_recipe_phase_result *pr = &res->phases[i];
	const pp_plan *pl = &pr->plan;
	json_t *steps = json_array();
	for (int k = 0; k < pr->nsteps; k++) {
		const pp_recipe_step *s = &pr->steps[k];
		json_array_append_new(steps, json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:f}", "gbs",
		                                       s->gbs, "tokens", s->tokens, "iterations",
		                                       s->iterations, "iteration_s", s->iteration_s,
		                                       "mfu", s->mfu, "gpu_hours", s->gpu_hours,
		                                       "eff_gpu_hours", s->eff_gpu_hours));
	}
	json_t *o = json_pack("{s:s,s:f,s:i,s:i,s:i,s:b,s:I}", "name", p->name, "tokens",
	                      pr->tokens, "seq", p->seq, "gbs_start", p->gbs.start, "gbs_end",
	                      p->gbs.end, "searched", p->search, "gpus", (json_int_t)pr->gpus);
	json_object_set_new(o, "plan",
	                    json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:b,s:s}", "tp",
	                              pl->tp, "pp", pl->pp, "dp", pl->dp, "cp", pl->cp, "ep",
	                              pl->ep, "etp", pl->etp, "vp", pl->vp, "mbs", pl->mbs, "zero",
	                              pl->zero, "recompute", pp_recompute_name(pl->recompute), "sp",
	                              pl->sp, "schedule", pp_schedule_name(pl->schedule)));
	json_object_set_new(o, "steps", steps);
	json_object_set_new(
	    o, "totals",
	    json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "iterations", pr->iterations,
	              "days", pr->days, "gpu_hours", pr->gpu_hours, "cost_usd", pr->cost_usd,
	              "eff_days", pr->eff_days, "eff_gpu_hours", pr->eff_gpu_hours, "eff_cost_usd",
	              pr->eff_cost_usd, "mfu", pr->mfu, "peak_bytes", pr->peak_bytes,
	              "capacity_bytes", pr->capacity_bytes, "energy_j", pr->energy_j));
	json_object_set_new(o, "reshard",
	                    json_pack("{s:b,s:f,s:f,s:f,s:f}", "done", pr->reshard, "save_s",
	                              pr->save_s, "load_s", pr->load_s, "gpu_hours",
	                              pr->reshard_gpu_hours, "cost_usd", pr->reshard_cost_usd));
	return o;
}

int ppi_recipe_json(const pp_result *r, FILE *f)
{
	const pp_recipe_result *res = r->recipe;
	const pp_recipe *rc = res->recipe;
	long long mark = ppi_alloc_failed();
	json_t *root = json_pack("{s:s,s:s,s:s,s:s,s:f}", "recipe", rc->name, "file", rc->path,
	                         "model", rc->model.name, "system", rc->system.name,
	                         "usd_per_gpu_hour", rc->system.usd_per_gpu_hour);
	json_t *phases = json_array();
	for (int i = 0; i < res->nphases; i++)
		json_array_append_new(phases, phase_json(rc, res, i));
	json_object_set_new(root, "phases", phases);
	json_object_set_new(root, "totals",
	                    json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "tokens",
	                              res->tokens, "days", res->days, "gpu_hours", res->gpu_hours,
	                              "cost_usd", res->cost_usd, "eff_days", res->eff_days,
	                              "eff_gpu_hours", res->eff_gpu_hours, "eff_cost_usd",
	                              res->eff_cost_usd, "reshard_gpu_hours",
	                              res->reshard_gpu_hours, "energy_j", res->energy_j));
	json_t *reps = json_array();
	for (int g = 0; g < rc->nreported; g++) {
		const pp_recipe_reported *rep = &rc->reported[g];
		double h = 0, eh = 0;
		if (rep->last >= rep->first)
			pp_recipe_group_hours(res, g, &h, &eh);
		json_array_append_new(
		    reps, json_pack("{s:s,s:i,s:i,s:f,s:f,s:f,s:s}", "name", rep->name,
		                    "first_phase", rep->first + 1, "last_phase", rep->last + 1,
		                    "predicted_gpu_hours", h, "predicted_eff_gpu_hours", eh,
		                    "reported_gpu_hours", rep->gpu_hours, "source", rep->source));
	}
	json_object_set_new(root, "reported", reps);
	return ppi_report_dump(root, mark, f);
}
