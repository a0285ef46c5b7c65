/*
 * A search run to its end, or the inverse question answered over GPU counts
 * (include/paraplan/inverse.h, pp_search_answer_run): the loop every front
 * end of the search needs, with hooks for its progress display.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/inverse.h"
#include "util/util.h"

/* One search of `gpus` GPUs to its end (pp_inverse_search_fn): *out, or NULL
 * with PP_OK for a count without a plan space when `soft`. */
static pp_status run_one(void *ctx, long long gpus, bool soft, pp_search **out, pp_error *err)
{
	const pp_search_request *rq = ctx;
	const pp_search_hooks *h = &rq->hooks;
	*out = NULL;
	pp_search *s;
	pp_status st =
	    pp_search_new(rq->model, rq->system, rq->job, gpus, rq->space, rq->opts, &s, err);
	if (st == PP_EINPUT && soft) {
		if (h->skip)
			h->skip(h->ctx, gpus, err);
		pp_error_clear(err);
		return PP_OK;
	}
	if (st)
		return st;
	if (h->start)
		h->start(h->ctx, gpus, s);
	while (!pp_search_done(s) && !st) {
		st = pp_search_iterate(s, err);
		if (h->step)
			h->step(h->ctx, s, false);
	}
	if (h->step)
		h->step(h->ctx, s, true);
	if (!st && rq->simulate)
		st = pp_search_simulate(s, err);
	/* Plans fit, but the power cap left none (docs/energy.md): one refusal
	 * that says how far the cap is from the least of them. */
	pp_search_stats ss;
	pp_search_get_stats(s, &ss);
	if (!st && !soft && pp_search_count(s) == 0 && ss.over_cap > 0)
		st = ppi_fail(
		    err, "", "job.energy.power_cap_w",
		    "no plan within %.6g MW: the %lld plans timed that fit draw more, the "
		    "least %.6g MW",
		    rq->job->energy.power_cap_w / 1e6, ss.over_cap, ss.min_over_cap_w / 1e6);
	if (st) {
		pp_search_free(s);
		return st;
	}
	*out = s;
	return PP_OK;
}

/* After the searches (their status `st`): the winner's goodput with rq->gp;
 * *out emptied on a failure. */
static pp_status finish(const pp_search_request *rq, pp_status st, pp_search_answer *out,
                        pp_error *err)
{
	if (!st && rq->gp && out->search && pp_search_count(out->search) > 0)
		st = pp_search_winner_goodput(out->search, rq->gp, &out->winner_goodput, err);
	if (st)
		pp_search_answer_free(out);
	return st;
}

/* Seed 001 Algorithm 1 on the K plans of out->search (pp_netmap_rank), on
 * matrix `bw`. */
static pp_status map_top(const pp_bandwidth *bw, pp_search_answer *out, pp_error *err)
{
	size_t n = out->search ? pp_search_count(out->search) : 0;
	const pp_estimate **plans = ppi_calloc(n ? n : 1, sizeof *plans);
	if (!plans)
		return ppi_fail(err, "", "bandwidth", "out of memory");
	pp_status st = PP_OK;
	for (size_t i = 0; i < n && !st; i++)
		if (!(plans[i] = pp_search_plan(out->search, i)))
			st = ppi_fail(err, "", "search", "internal: plan %zu does not evaluate",
			              i + 1);
	/* place's defaults (docs/usage/place.txt): seed 1, 100,000 moves */
	if (!st)
		st = pp_netmap_rank(plans, n, bw, 1, 100000, &out->mapping, err);
	free(plans);
	return st;
}

/* One search, with rq->bandwidth its K plans mapped: the matrix is read and
 * checked against the GPUs first. */
static pp_status run_mapped(const pp_search_request *rq, long long gpus, pp_search_answer *out,
                            pp_error *err)
{
	pp_bandwidth *bw = NULL;
	if (rq->bandwidth)
		PPI_TRY(pp_netmap_bandwidth_for(rq->system, gpus, rq->bandwidth, &bw, err));
	pp_status st = run_one((void *)rq, gpus, false, &out->search, err);
	if (!st && bw)
		st = map_top(bw, out, err);
	out->mapping.source = rq->bandwidth;
	pp_bandwidth_free(bw);
	return st;
}

pp_status pp_search_answer_run(const pp_search_request *rq, pp_search_answer *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	out->asked = rq->q.deadline_days > 0 || rq->q.budget_usd > 0;
	if (rq->counts.count > 1 && !out->asked)
		return ppi_fail(err, "", "gpus",
		                "%d GPU counts: one, or several with a deadline or a budget",
		                rq->counts.count);
	if (rq->bandwidth && out->asked)
		return ppi_fail(err, "", "bandwidth",
		                "maps the plans of one search; give it without --deadline-days or "
		                "--budget-usd");
	long long one = rq->counts.count ? rq->counts.values[0] : rq->gpus;
	if (!out->asked)
		return finish(rq, run_mapped(rq, one, out, err), out, err);
	if (one < 1 || one > INT_MAX)
		return ppi_fail(err, "", "gpus", "expected 1..%d GPUs, got %lld", INT_MAX, one);
	pp_search_dim counts = rq->counts.count ? rq->counts : (pp_search_dim){1, {(int)one}};
	out->q = rq->q;
	out->q.train_tokens = rq->job->train_tokens;
	out->q.goodput = rq->gp != NULL;
	out->cands = ppi_calloc((size_t)counts.count, sizeof *out->cands);
	if (!out->cands)
		return ppi_oom(err);
	pp_status st = pp_inverse_search(&out->q, &counts, rq->gp, run_one, (void *)rq, out->cands,
	                                 &out->n, &out->res, &out->search, err);
	return finish(rq, st, out, err);
}

void pp_search_answer_free(pp_search_answer *a)
{
	pp_search_free(a->search);
	free(a->cands);
	free(a->winner_goodput);
	pp_netmap_ranking_free(&a->mapping);
	memset(a, 0, sizeof *a);
}
