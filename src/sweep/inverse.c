/*
 * The inverse questions (include/paraplan/inverse.h): which candidate
 * answers a deadline or a budget, and what binds.
 */
#include "paraplan/inverse.h"
#include "paraplan/sweep.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

const char *pp_inverse_bind_name(pp_inverse_bind b)
{
	switch (b) {
	case PP_BIND_NONE: return "none";
	case PP_BIND_DEADLINE: return "deadline";
	case PP_BIND_BUDGET: return "budget";
	case PP_BIND_MEMORY: return "memory";
	case PP_BIND_RANGE: return "range";
	}
	return "?";
}

static bool usable(const pp_inverse_candidate *c)
{
	return c->ok && c->fits && c->days > 0;
}

static bool in_time(const pp_inverse_query *q, const pp_inverse_candidate *c)
{
	return q->deadline_days <= 0 || c->days <= q->deadline_days;
}

static bool in_budget(const pp_inverse_query *q, const pp_inverse_candidate *c)
{
	return q->budget_usd <= 0 || c->usd <= q->budget_usd;
}

bool pp_inverse_meets(const pp_inverse_query *q, const pp_inverse_candidate *c)
{
	return usable(c) && in_time(q, c) && in_budget(q, c);
}

/* Why `c` does not meet the query, the first failed constraint in the order
 * memory, deadline, budget (NONE when it meets it). */
static pp_inverse_bind why(const pp_inverse_query *q, const pp_inverse_candidate *c)
{
	return !usable(c)         ? PP_BIND_MEMORY
	       : !in_time(q, c)   ? PP_BIND_DEADLINE
	       : !in_budget(q, c) ? PP_BIND_BUDGET
	                          : PP_BIND_NONE;
}

/* a better than b for a deadline: fewer GPUs, cheaper, faster */
static bool fewer(const pp_inverse_candidate *a, const pp_inverse_candidate *b)
{
	if (a->gpus != b->gpus)
		return a->gpus < b->gpus;
	if (a->usd != b->usd)
		return a->usd < b->usd;
	return a->days < b->days;
}

/* a better than b for a budget: faster, fewer GPUs, cheaper */
static bool faster(const pp_inverse_candidate *a, const pp_inverse_candidate *b)
{
	if (a->days != b->days)
		return a->days < b->days;
	if (a->gpus != b->gpus)
		return a->gpus < b->gpus;
	return a->usd < b->usd;
}

void pp_inverse_pick(const pp_inverse_query *q, const pp_inverse_candidate *c, size_t n,
                     pp_inverse_result *out)
{
	out->pick = out->next = out->fastest = out->cheapest = -1;
	out->binds = PP_BIND_NONE;
	bool deadline = q->deadline_days > 0;
	for (size_t i = 0; i < n; i++) {
		if (!usable(&c[i]))
			continue;
		if (out->fastest < 0 || faster(&c[i], &c[out->fastest]))
			out->fastest = (ptrdiff_t)i;
		if (out->cheapest < 0 || c[i].usd < c[out->cheapest].usd)
			out->cheapest = (ptrdiff_t)i;
		if (!pp_inverse_meets(q, &c[i]))
			continue;
		if (out->pick < 0 ||
		    (deadline ? fewer(&c[i], &c[out->pick]) : faster(&c[i], &c[out->pick])))
			out->pick = (ptrdiff_t)i;
	}
	if (out->pick < 0) {
		bool any_time = false;
		for (size_t i = 0; i < n; i++)
			any_time |= usable(&c[i]) && in_time(q, &c[i]);
		out->binds = out->fastest < 0 ? PP_BIND_MEMORY
		             : !any_time      ? PP_BIND_DEADLINE
		                              : PP_BIND_BUDGET;
		return;
	}
	const pp_inverse_candidate *p = &c[out->pick];
	if (deadline) {
		/* the candidate with the most GPUs below the answer's */
		for (size_t i = 0; i < n; i++)
			if (c[i].gpus < p->gpus &&
			    (out->next < 0 || c[i].gpus > c[out->next].gpus ||
			     (c[i].gpus == c[out->next].gpus &&
			      why(q, &c[i]) < why(q, &c[out->next]))))
				out->next = (ptrdiff_t)i;
		out->binds = out->next < 0 ? PP_BIND_RANGE : why(q, &c[out->next]);
		return;
	}
	/* budget only: the slowest candidate that fits and is faster than the answer */
	for (size_t i = 0; i < n; i++)
		if (usable(&c[i]) && faster(&c[i], p) &&
		    (out->next < 0 || faster(&c[out->next], &c[i])))
			out->next = (ptrdiff_t)i;
	out->binds = out->next < 0 ? PP_BIND_NONE : PP_BIND_BUDGET;
}

pp_status pp_inverse_candidate_of(const pp_estimate *winner, long long gpus,
                                  const pp_goodput_params *gp, pp_inverse_candidate *x,
                                  pp_error *err)
{
	memset(x, 0, sizeof *x);
	x->value = x->gpus = gpus;
	if (!winner)
		return PP_OK;
	x->ok = x->fits = true;
	x->plan = winner->plan;
	x->days = winner->train_days;
	x->usd = winner->cost_usd;
	if (!gp)
		return PP_OK;
	pp_estimate *w = ppi_malloc(sizeof *w); /* pp_estimate_goodput fills it */
	if (!w)
		return ppi_oom(err);
	*w = *winner;
	pp_status st = pp_estimate_goodput(w, gp, err);
	if (!st) {
		x->days = w->goodput.effective_days;
		x->usd = w->goodput.cost_usd;
	}
	free(w);
	return st;
}

pp_status pp_sweep_inverse(const pp_sweep *sw, const pp_inverse_query *q, pp_inverse_query *q_out,
                           pp_inverse_candidate **cands, pp_inverse_result *res, pp_error *err)
{
	pp_inverse_candidate *c = calloc(sw->nrows ? sw->nrows : 1, sizeof *c);
	*cands = c;
	if (!c)
		return ppi_oom(err);
	*q_out = *q;
	q_out->train_tokens = sw->job.train_tokens;
	for (size_t i = 0; i < sw->nrows; i++) {
		const pp_sweep_row *r = &sw->rows[i];
		c[i].value = r->value;
		c[i].gpus = r->gpus;
		c[i].ok = r->ok;
		c[i].fits = r->ok && r->fits;
		c[i].plan = r->plan;
		c[i].days = r->has_goodput ? r->goodput_days : r->train_days;
		c[i].usd = r->has_goodput ? r->goodput_usd : r->rent_usd;
	}
	pp_inverse_pick(q_out, c, sw->nrows, res);
	return PP_OK;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

pp_status pp_inverse_search(const pp_inverse_query *q, const pp_search_dim *counts,
                            const pp_goodput_params *gp, pp_inverse_search_fn run, void *ctx,
                            pp_inverse_candidate *c, size_t *n, pp_inverse_result *res,
                            pp_search **picked, pp_error *err)
{
	pp_search_dim sorted = *counts;
	qsort(sorted.values, (size_t)sorted.count, sizeof sorted.values[0], cmp_int);
	pp_search *all[PP_SEARCH_MAX_VALUES] = {0};
	*n = 0;
	*picked = NULL;
	pp_status st = PP_OK;
	for (int k = 0; k < sorted.count && !st; k++) {
		pp_search *s;
		if ((st = run(ctx, sorted.values[k], sorted.count > 1, &s, err)))
			break;
		pp_inverse_candidate *x = &c[(*n)++];
		all[k] = s;
		st = pp_inverse_candidate_of(s && pp_search_count(s) ? pp_search_plan(s, 0) : NULL,
		                             sorted.values[k], gp, x, err);
		if (!st && q->deadline_days > 0 && pp_inverse_meets(q, x))
			break; /* ascending: the fewest GPUs that meet it */
	}
	if (!st) {
		pp_inverse_pick(q, c, *n, res);
		if (res->pick >= 0) {
			*picked = all[res->pick];
			all[res->pick] = NULL;
		}
	}
	for (int k = 0; k < sorted.count; k++)
		pp_search_free(all[k]);
	return st;
}
