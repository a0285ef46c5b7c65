/*
 * Plan search, the public API (include/paraplan/search.h): the inputs
 * checked, the search set up (its sub-spaces from enumerate.c, ordered by
 * probe.c, its pool from pool.c), and the results of a finished search:
 * the K best evaluated in full when asked for, the Pareto front, the stats
 * and why the winner wins.  How the search works: search_int.h.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paraplan/cost.h"
#include "paraplan/dhelix.h"
#include "paraplan/schedule_type.h"
#include "paraplan/search.h"
#include "estimate/estimate_int.h"
#include "search_int.h"
#include "topk.h"
#include "util/util.h"

void pp_search_space_init(pp_search_space *space)
{
	memset(space, 0, sizeof *space);
	pp_plan_init(&space->base);
	space->headroom_fraction = PP_SEARCH_HEADROOM_DEFAULT;
}

void pp_search_options_init(pp_search_options *opts)
{
	memset(opts, 0, sizeof *opts);
	opts->top_k = 10;
	opts->time_limit_s = 0;
	opts->max_plans = 0;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	opts->threads = n > 0 ? (int)n : 1;
}

pp_status pp_search_objective_parse(const char *text, pp_search_objective *out, pp_error *err)
{
	if (strcmp(text, "time") == 0)
		*out = PP_SEARCH_TIME;
	else if (strcmp(text, "energy") == 0)
		*out = PP_SEARCH_ENERGY;
	else
		return ppi_fail(err, "", "--objective", "expected time or energy, got '%s'", text);
	return PP_OK;
}

/* ------------------------------------------------------------ set-up */

/* The inputs, the options and the space's scalars checked (PP_EINPUT with
 * the field named); wshape in the space needs the GPU's DHelix overlap
 * table, refused here once rather than in every wshape plan
 * (pp_dh_overlap_of_system). */
static pp_status check_inputs(const pp_model *m, const pp_system *sys, const pp_job *job,
                              long long gpus, const pp_search_space *space,
                              const pp_search_options *opts, pp_error *err)
{
	PPI_TRY(pp_model_check(m, err));
	PPI_TRY(pp_system_check(sys, err));
	PPI_TRY(pp_job_check(job, err));
	PPI_TRY(pp_finetune_check(job, m, err));
	PPI_TRY(pp_job_check_gpu(job, sys, err));
	/* A power cap below what the GPUs draw all idle (busy fraction 0, the
	 * least any plan draws: docs/energy.md): no plan can meet it. */
	if (job->energy.power_cap_w > 0) {
		pp_energy floor;
		pp_energy_compute(sys, &job->energy, gpus, 0, 0, 0, &floor);
		if (floor.facility_w > job->energy.power_cap_w)
			return ppi_fail(
			    err, "", "job.energy.power_cap_w",
			    "%.6g MW is below the least facility power of %lld GPUs, all "
			    "idle: %.6g MW (docs/energy.md); no plan can meet it",
			    job->energy.power_cap_w / 1e6, gpus, floor.facility_w / 1e6);
	}
	/* Every plan's rules would refuse it (pp_plan_validate): one line instead. */
	if (job->moe_routing.set && m->moe.num_experts <= 0)
		return ppi_fail(err, "", "job.moe_routing", "needs an MoE model; %s is dense",
		                m->name);
	if (job->moe_routing.drift_steps > 0 && !(job->train_tokens > 0))
		return ppi_fail(
		    err, "", "job.moe_routing",
		    "drift:%g acts over the run's steps: give --tokens (steps = tokens / "
		    "(gbs x seq))",
		    job->moe_routing.drift_steps);
	if (gpus < 1 || gpus > 10000000)
		return ppi_fail(err, "", "gpus", "expected 1..10000000 GPUs, got %lld", gpus);
	if (opts->top_k < 1 || opts->top_k > 10000)
		return ppi_fail(err, "", "top", "expected 1..10000 plans, got %d", opts->top_k);
	if (opts->threads < 1 || opts->threads > 1024)
		return ppi_fail(err, "", "threads", "expected 1..1024 threads, got %d",
		                opts->threads);
	if (!(opts->time_limit_s >= 0 && opts->time_limit_s <= 1e9))
		return ppi_fail(err, "", "time_limit", "expected 0 (none) to 1e9 seconds, got %g",
		                opts->time_limit_s);
	if (opts->max_plans < 0)
		return ppi_fail(err, "", "max_plans", "expected 0 (none) or more plans, got %lld",
		                opts->max_plans);
	if (!(space->headroom_fraction >= 0 && space->headroom_fraction < 1))
		return ppi_fail(err, "", "headroom", "expected a fraction in 0..1, got %g",
		                space->headroom_fraction);
	for (int i = 0; i < pp_schedule_type_n; i++)
		if ((space->schedule_mask & (1u << i)) && pp_schedule_types[i]->si) {
			pp_dh_overlap ov;
			PPI_TRY(pp_dh_overlap_of_system(sys, 1, &ov, err));
			break;
		}
	/* CPU offload asked for: the system states its host side, once here
	 * rather than every plan rejected (the stage rules per plan). */
	pp_plan host = space->base;
	host.offload_optimizer = (space->offload_mask & 2u) != 0;
	host.zero = 3;
	return ppi_offload_check(&host, sys, err);
}

/* Every order of s's space checked once (the search resolves its plans
 * without checking them again): the probe's other fields are valid, so a
 * bad order is what a refusal names (PP_EINPUT, err on plan.order); any other
 * refusal of the probe is not the order's and is let pass. */
static pp_status check_orders(const pp_search *s, pp_error *err)
{
	const pp_search_space *space = &s->space;
	for (int i = 0; i < space->norders; i++) {
		if (strchr(space->orders[i], ':')) { /* a split: its radices fit per plan */
			pp_status st = pp_order_check(space->orders[i], err);
			if (st)
				return st;
			continue;
		}
		pp_plan probe = space->base;
		ppi_strlcpy(probe.order, space->orders[i], sizeof probe.order);
		probe.tp = probe.pp = probe.cp = probe.ep = probe.vp = probe.mbs = 1;
		probe.tp2 = probe.summa_nb = 1;
		probe.zero = 0;
		probe.recompute = PP_RECOMPUTE_NONE;
		probe.schedule = PP_SCHED_1F1B;
		probe.dp = 0;
		probe.etp = 0;
		pp_job one = s->job;
		one.global_batch = s->gpus;
		pp_status st = pp_plan_resolve(&probe, &s->model, &s->system, s->gpus, &one, err);
		if (st == PP_EINPUT && strcmp(err->field, "plan.order") == 0)
			return st;
	}
	return PP_OK;
}

/* s's batches, threads, slots, lists and each worker's buffers, for its
 * s->nouters sub-spaces (owned by s; pp_search_free frees them).  PP_ENOMEM
 * only. */
static pp_status alloc_state(pp_search *s)
{
	const pp_search_options *opts = &s->opts;
	s->nslots = s->nouters / BATCH_DIV;
	if (s->nslots < BATCH_MIN)
		s->nslots = BATCH_MIN;
	if (s->nslots > BATCH_MAX)
		s->nslots = BATCH_MAX;
	if (s->nslots > s->nouters)
		s->nslots = s->nouters;
	/* At most the sub-spaces that may run at once (LAG batches). */
	s->nthreads =
	    opts->threads < (int)(LAG * s->nslots) ? opts->threads : (int)(LAG * s->nslots);
	s->workers = ppi_calloc((size_t)s->nthreads, sizeof *s->workers);
	s->slots = ppi_calloc(LAG * s->nslots, sizeof *s->slots);
	const size_t keep = (size_t)opts->top_k * PPI_SEARCH_KEEP_PER_ROW;
	const bool by_energy = opts->objective == PP_SEARCH_ENERGY;
	ppi_topk_init(&s->top, keep);
	s->top.by_energy = by_energy;
	for (int i = 0; i < LAG; i++) {
		ppi_topk_init(&s->snap_top[i], keep);
		s->snap_top[i].by_energy = by_energy;
	}
	s->stats.subspaces = (long long)s->nouters;
	s->m_stats = s->p_stats = s->stats;
	if (!s->workers || !s->slots)
		return PP_ENOMEM;
	for (size_t i = 0; i < LAG * s->nslots; i++) {
		ppi_topk_init(&s->slots[i].top, keep);
		s->slots[i].top.by_energy = by_energy;
	}
	for (int i = 0; i < s->nthreads; i++) {
		worker *w = &s->workers[i];
		w->s = s;
		w->scratch = ppi_calloc(1, sizeof *w->scratch);
		w->whole = ppi_malloc(sizeof *w->whole);
		w->ws = ppi_malloc(sizeof *w->ws);
		if (w->ws)
			pp_work_init(w->ws);
		if (!w->scratch || !w->whole || !w->ws)
			return PP_ENOMEM;
	}
	return PP_OK;
}

pp_status pp_search_new(const pp_model *m, const pp_system *sys, const pp_job *job, long long gpus,
                        const pp_search_space *space, const pp_search_options *opts,
                        pp_search **out, pp_error *err)
{
	*out = NULL;
	if (opts->objective != PP_SEARCH_TIME && opts->objective != PP_SEARCH_ENERGY)
		return ppi_fail(err, "", "objective", "unknown objective %d", (int)opts->objective);
	/* Ranked by energy: the plans' energy is reported, as if --energy on. */
	pp_job jb = *job;
	jb.energy.on |= opts->objective == PP_SEARCH_ENERGY;
	job = &jb;
	PPI_TRY(check_inputs(m, sys, job, gpus, space, opts, err));
	struct pp_search *s = ppi_calloc(1, sizeof *s);
	if (!s)
		return PP_ENOMEM;
	s->model = *m;
	s->system = *sys;
	s->job = *job;
	pp_energy idle;
	pp_energy_compute(sys, &job->energy, gpus, 0, 0, 0, &idle);
	s->idle_facility_w = idle.facility_w;
	s->gpus = gpus;
	s->space = *space;
	s->opts = *opts;
	s->ngbs_div = ppi_divisors(job->global_batch, s->gbs_div, PPI_DIVISORS_MAX);
	s->started = ppi_search_now_s();
	pp_status st = check_orders(s, err);
	if (st) {
		free(s);
		return st;
	}
	st = ppi_search_outers(s, err);
	if (!st)
		st = alloc_state(s);
	if (!st) {
		ppi_search_pool_start(s);
		st = ppi_search_order_outers(s);
	}
	if (st) {
		pp_search_free(s);
		return st;
	}
	*out = s;
	return PP_OK;
}

/* ------------------------------------------------------------ results */
/*
 * The K best, fastest first.  The list keeps what ranks a plan, not its whole
 * estimate (several KB); a result is evaluated once more in full when it is
 * asked for (materialise), so `--top 10000` does not write 10000 estimates
 * that a report reads one at a time.  The storage is allocated here, zeroed
 * and untouched (calloc of fresh pages), and filled entry by entry.
 */
static pp_status final_plans(pp_search *s)
{
	ppi_topk_sort(&s->top);
	size_t n = s->top.n;
	if (n == 0)
		return PP_OK;
	size_t *row_of = ppi_malloc(n * sizeof *row_of);
	s->row_at = ppi_malloc(n * sizeof *s->row_at);
	s->eq_off = ppi_malloc((n + 1) * sizeof *s->eq_off);
	s->eq_idx = ppi_malloc(n * sizeof *s->eq_idx);
	if (!row_of || !s->row_at || !s->eq_off || !s->eq_idx) {
		free(row_of);
		return PP_ENOMEM;
	}
	s->nrows =
	    ppi_topk_group(&s->top, (size_t)s->opts.top_k, row_of, s->row_at, s->eq_off, s->eq_idx);
	free(row_of);
	s->results = ppi_calloc(s->nrows, sizeof *s->results);
	s->made = ppi_calloc(s->nrows, sizeof *s->made);
	return s->results && s->made ? PP_OK : PP_ENOMEM;
}

/* Result i of a finished search, evaluated in full into `out` from its
 * resolved plan (which resolves to itself); it must come out as it was
 * ranked (else PP_EINTERNAL).  Uses the calling thread's workspace
 * (workers[0]). */
static pp_status materialise(const pp_search *s, size_t i, pp_estimate *out, pp_error *err)
{
	const ppi_topk_entry *x = &s->top.v[s->row_at[i]];
	pp_plan plan = x->ranked;
	pp_status st =
	    pp_estimate_eval(&s->model, &s->system, &s->job, &plan, s->gpus,
	                     PP_EVAL_PEAK_ONLY | PP_EVAL_FIT_ONLY, s->workers[0].ws, out, err);
	if (st == PP_ENOMEM)
		return st;
	bool by_energy = s->opts.objective == PP_SEARCH_ENERGY;
	if (st || ppi_rank_key(out, by_energy) != x->time_s ||
	    out->memory.total_bytes != x->bytes ||
	    ppi_search_compare_parts(x->time_s, x->bytes, &out->plan, x->time_s, x->bytes,
	                             &x->ranked) != 0)
		return ppi_fail(err, "", "search",
		                "internal: plan %zu of the search evaluates differently the second "
		                "time",
		                i + 1);
	return PP_OK;
}

/* The lists in their final order and the wall time: the search is over (the
 * pool halted). */
pp_status ppi_search_finish(pp_search *s, pp_error *err)
{
	pp_status st = final_plans(s);
	if (st)
		return st;
	s->finished = true;
	ppi_front_sort(&s->pareto);
	s->stats.wall_s = ppi_search_now_s() - s->started;
	s->stats.stop = s->stop;
	return s->top.oom || s->pareto.oom ? PP_ENOMEM : PP_OK;
}

bool pp_search_done(const pp_search *s)
{
	return s->next >= s->nouters || s->stop != PP_SEARCH_COMPLETE;
}

double pp_search_progress(const pp_search *s)
{
	return s->nouters ? (double)s->next / s->nouters : 1;
}

size_t pp_search_count(const pp_search *s)
{
	return s->finished ? s->nrows : 0;
}

size_t pp_search_equivalent_count(const pp_search *s, size_t i)
{
	return i < pp_search_count(s) ? s->eq_off[i + 1] - s->eq_off[i] : 0;
}

const pp_plan *pp_search_equivalent(const pp_search *s, size_t i, size_t k)
{
	if (k >= pp_search_equivalent_count(s, i))
		return NULL;
	return &s->top.v[s->eq_idx[s->eq_off[i] + k]].ranked;
}

const pp_estimate *pp_search_plan(const pp_search *s, size_t i)
{
	if (i >= pp_search_count(s))
		return NULL;
	if (!s->made[i]) {
		/* A cache filled on first use: logically const. */
		pp_search *w = (pp_search *)s;
		pp_error err;
		if (materialise(s, i, &w->results[i], &err) != PP_OK)
			return NULL;
		w->made[i] = true;
	}
	return &s->results[i];
}

pp_status pp_search_plan_get(const pp_search *s, size_t i, pp_estimate *out, pp_error *err)
{
	if (i >= pp_search_count(s))
		return ppi_fail(err, "", "search", "no plan %zu: the search has %zu", i + 1,
		                pp_search_count(s));
	if (s->made[i]) {
		*out = s->results[i];
		return PP_OK;
	}
	return materialise(s, i, out, err);
}

pp_status pp_search_row_get(const pp_search *s, size_t i, pp_search_row *out, pp_error *err)
{
	if (i >= pp_search_count(s))
		return ppi_fail(err, "", "search", "no plan %zu: the search has %zu", i + 1,
		                pp_search_count(s));
	const ppi_topk_entry *x = &s->top.v[s->row_at[i]];
	const ppi_topk_row *r = &x->row;
	bool sim = s->made[i] && s->results[i].simulated;
	*out = (pp_search_row){.plan = x->ranked,
	                       .total_bytes = x->bytes,
	                       .headroom_bytes = r->headroom_bytes,
	                       .iteration_s = r->iteration_s,
	                       .compute_s = r->compute_s,
	                       .tp_s = r->tp_s,
	                       .pp_s = r->pp_s,
	                       .bubble_s = r->bubble_s,
	                       .dp_s = r->dp_s,
	                       .mfu = r->mfu,
	                       .tokens_per_s = r->tokens_per_s,
	                       .train_days = r->train_days,
	                       .cost_usd = r->cost_usd,
	                       .facility_w = r->facility_w,
	                       .train_mwh = r->train_mwh,
	                       .simulated = sim,
	                       .sim_iteration_s = sim ? s->results[i].sim.iteration_s : 0};
	return PP_OK;
}

pp_status pp_search_simulate(pp_search *s, pp_error *err)
{
	if (!s->finished)
		return ppi_fail(err, "", "search", "the search is not done");
	pp_sim *sim;
	PPI_TRY(pp_sim_new(&sim, err));
	pp_status rc = PP_OK;
	for (size_t i = 0; i < pp_search_count(s) && !rc; i++) {
		if (!s->made[i]) {
			rc = materialise(s, i, &s->results[i], err);
			if (rc)
				break;
			s->made[i] = true;
		}
		rc = pp_estimate_simulate(&s->results[i], sim, err);
		/* A schedule the simulator refuses keeps its closed form only. */
		if (rc == PP_EINPUT)
			rc = PP_OK;
	}
	pp_sim_free(sim);
	return rc;
}

size_t pp_search_pareto_count(const pp_search *s)
{
	return s->finished ? s->pareto.n : 0;
}

const pp_estimate *pp_search_pareto(const pp_search *s, size_t i)
{
	return i < pp_search_pareto_count(s) ? &s->pareto.full[i] : NULL;
}

void pp_search_get_stats(const pp_search *s, pp_search_stats *out)
{
	*out = s->stats;
	if (!s->finished)
		out->wall_s = ppi_search_now_s() - s->started;
}

const char *pp_search_stop_reason(const pp_search *s, char *buf, size_t n)
{
	if (n == 0)
		return buf;
	buf[0] = '\0';
	if (s->stop == PP_SEARCH_TIME_LIMIT)
		snprintf(buf, n, "time limit %g s reached after %zu of %zu sub-spaces",
		         s->opts.time_limit_s, s->next, s->nouters);
	else if (s->stop == PP_SEARCH_MAX_PLANS)
		snprintf(buf, n,
		         "plan limit %lld reached after %zu of %zu sub-spaces (%lld plans "
		         "evaluated)",
		         s->opts.max_plans, s->next, s->nouters, s->stats.evaluated);
	return buf;
}

const char *pp_search_explain(const pp_search *s, double *margin_s, size_t *runner_up)
{
	/* Ranked by energy, the runner-up need not be slower: no time to explain. */
	if (pp_search_count(s) < 2 || s->opts.objective == PP_SEARCH_ENERGY)
		return NULL;
	/* The first runner-up that is actually slower (equal plans tie). */
	size_t j = 1;
	const ppi_topk_entry *v = s->top.v;
	const size_t *at = s->row_at;
	while (j + 1 < s->nrows && v[at[j]].time_s <= v[at[0]].time_s * (1 + 1e-9))
		j++;
	const pp_estimate *r0 = pp_search_plan(s, 0), *rj = pp_search_plan(s, j);
	if (!r0 || !rj)
		return NULL;
	const pp_iteration *a = &r0->time, *b = &rj->time;
	const struct {
		const char *name;
		double d;
	} terms[] = {
	    {"compute", b->compute_s - a->compute_s},       {"tp communication", b->tp_s - a->tp_s},
	    {"cp communication", b->cp_s - a->cp_s},        {"ep communication", b->ep_s - a->ep_s},
	    {"zero-3 traffic", b->zero3_s - a->zero3_s},    {"pipeline sends", b->pp_s - a->pp_s},
	    {"bubble", b->bubble_s - a->bubble_s},          {"dp communication", b->dp_s - a->dp_s},
	    {"optimizer", b->optimizer_s - a->optimizer_s}, {"other", b->other_s - a->other_s}};
	size_t best = 0;
	for (size_t i = 1; i < sizeof terms / sizeof terms[0]; i++)
		if (terms[i].d > terms[best].d)
			best = i;
	if (margin_s)
		*margin_s = terms[best].d;
	if (runner_up)
		*runner_up = j;
	return terms[best].name;
}

void pp_search_free(pp_search *s)
{
	if (!s)
		return;
	if (s->workers)
		ppi_search_pool_stop(s);
	if (s->workers)
		for (int i = 0; i < s->nthreads; i++) {
			free(s->workers[i].scratch);
			free(s->workers[i].whole);
			free(s->workers[i].ws);
		}
	if (s->slots)
		for (size_t i = 0; i < LAG * s->nslots; i++) {
			ppi_topk_free(&s->slots[i].top);
			ppi_front_free(&s->slots[i].pareto);
		}
	free(s->workers);
	free(s->slots);
	free(s->outers);
	ppi_topk_free(&s->top);
	ppi_front_free(&s->pareto);
	for (int i = 0; i < LAG; i++) {
		ppi_topk_free(&s->snap_top[i]);
		free(s->snap_front[i].v);
	}
	free(s->results);
	free(s->made);
	free(s->row_at);
	free(s->eq_off);
	free(s->eq_idx);
	free(s);
}
