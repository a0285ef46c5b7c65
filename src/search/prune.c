/*
 * The search's pruning: one plan's evaluation, cut by memory (the micro-batch
 * loop stops where no plan of a tail fits) and by time (branch and bound
 * against the search's lists and the sub-space's own), and kept in the
 * sub-space's top K and front when either could take it.  The hot path of
 * the search: evaluate and the cuts stay static here (search_int.h).
 */
#include "estimate/estimate_int.h"
#include "paraplan/estimate.h"
#include "search_int.h"
#include "topk.h"
#include "util/util.h"

/* Does a point of `f` have a time below `time_s` and no more than `bytes`?
 * Then it dominates every plan of that memory whose time is >= time_s. */
static bool front_below(const front *f, double time_s, double bytes)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->pts[i].time_s < time_s && f->pts[i].bytes <= bytes)
			return true;
	return false;
}

/* front_below on a copy of the search's front. */
static bool points_below(const points *f, double time_s, double bytes)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].time_s < time_s && f->v[i].bytes <= bytes)
			return true;
	return false;
}

typedef struct cut_ctx {
	const struct pp_search *s;
	const worker *w; /* the lists of the search that prune this sub-space */
	const slot *r;
	double order_free_s; /* the order-free floor the estimate gave, when floored */
	bool floored;
} cut_ctx;

/* time_cut on the parts it reads: a fitting plan's peak bytes, the GPU's
 * capacity and the floor under its time. */
static bool time_cut_parts(const cut_ctx *c, double bytes, double capacity_bytes, double floor_s)
{
	const struct pp_search *s = c->s;
	if (bytes > capacity_bytes * (1 - s->space.headroom_fraction))
		return true;
	if (s->opts.exhaustive)
		return false;
	/* Ranked by energy: no plan draws less than all its GPUs idle
	 * (s->idle_facility_w), so floor_s times that is a floor under its energy. */
	double key = s->opts.objective == PP_SEARCH_ENERGY ? floor_s * s->idle_facility_w : floor_s;
	if (!(key > ppi_topk_worst_s(c->w->top) || key > ppi_topk_worst_s(&c->r->top)))
		return false;
	return points_below(c->w->pareto, floor_s, bytes) ||
	       front_below(&c->r->pareto, floor_s, bytes);
}

/*
 * Branch and bound by time (ppi_time_cut): a plan that fits, whose time
 * cannot be below floor_s, is not timed when neither list could take it: the
 * search's top K as merged LAG batches back (read-only while the sub-space
 * runs) or the sub-space's own is full
 * with results no slower than floor_s, and a point of either front is faster
 * than floor_s with no more memory.  Both lists only get better, so the plan
 * would not be in the final top K or front: exact.  A plan over the headroom
 * is never kept, so it is not timed either.
 */
static bool time_cut(void *ctx, const pp_estimate *e, double floor_s, double order_free_s)
{
	cut_ctx *c = ctx;
	c->order_free_s = order_free_s;
	c->floored = true;
	return time_cut_parts(c, e->memory.total_bytes, e->capacity_bytes, floor_s);
}

/*
 * What the first rank order of a (micro-batch, tail) found, for the others:
 * the memory model does not read where the groups land (memory.c reads no
 * placement), so every order of the same plan has the same peak bytes, to
 * the bit; nor does the order-free floor (the layers' operation seconds,
 * which fill_op takes from the system and the job alone).  A later order
 * whose plan the order-free floor cuts is counted as its own evaluation would
 * count it (evaluated, fits, pruned by time), without resolving, placing or
 * sizing it; one it does not cut is timed without the memory model
 * (ppi_eval_known), its own floor (with the layers' communication under its
 * placement) asked first.
 */
typedef struct fit_memo {
	bool valid;
	double bytes, capacity_bytes, floor_s;
} fit_memo;

static void evaluate(worker *w, slot *r, pp_plan *plan, fit_memo *memo, bool *fits)
{
	struct pp_search *s = w->s;
	pp_error err;
	r->combos++;
	cut_ctx cc = {s, w, r, 0, false};
	if (memo->valid && time_cut_parts(&cc, memo->bytes, memo->capacity_bytes, memo->floor_s)) {
		/* A fitting plan (the memo holds only those) whose floor cuts it. */
		r->evaluated++;
		r->pruned_time++;
		*fits = true;
		return;
	}
	bool cut;
	ppi_eval_known known = {memo->bytes};
	pp_status st = ppi_estimate_eval_cut(
	    &s->model, &s->system, &s->job, plan, s->gpus,
	    PP_EVAL_PEAK_ONLY | PP_EVAL_FIT_ONLY | PPI_EVAL_TRUSTED, w->ws, w->scratch, time_cut,
	    &cc, &cut, memo->valid ? &known : NULL, &err);
	*fits = false;
	if (st == PP_EINPUT) {
		r->rejected++;
		return;
	}
	if (st) {
		r->status = st;
		r->err = err;
		return;
	}
	r->evaluated++;
	const pp_estimate *e = w->scratch;
	double limit = e->capacity_bytes * (1 - s->space.headroom_fraction);
	if (!e->fits || e->memory.total_bytes > limit) {
		r->infeasible++;
		return;
	}
	*fits = true;
	/* Exhaustive evaluation (the tests' reference) sizes every plan itself. */
	if (cc.floored && !memo->valid && !s->opts.exhaustive) {
		memo->valid = true;
		memo->bytes = e->memory.total_bytes;
		memo->capacity_bytes = e->capacity_bytes;
		memo->floor_s = cc.order_free_s;
	}
	if (cut) {
		r->pruned_time++;
		return;
	}
	/* Over the power cap (docs/energy.md): not kept.  The pruning above stays
	 * exact: the lists it reads hold only plans within the cap. */
	double cap = s->job.energy.power_cap_w;
	if (cap > 0 && e->energy.facility_w > cap) {
		r->over_cap++;
		if (r->min_over_cap_w == 0 || e->energy.facility_w < r->min_over_cap_w)
			r->min_over_cap_w = e->energy.facility_w;
		return;
	}
	/* A result the search's list (as merged LAG batches back) would not
	 * keep cannot enter it later: its worst only gets better. */
	ppi_topk_key key = {r->outer_index, r->seq++};
	if (ppi_topk_wants(w->top, e, key) && ppi_topk_wants(&r->top, e, key)) {
		ppi_topk_entry x;
		ppi_topk_entry_set(&x, e, key, s->opts.objective == PP_SEARCH_ENERGY);
		ppi_topk_insert(&r->top, &x);
	}
	/* The same for the front: a plan the search's front dominates stays out.
	 * A point kept is a whole estimate: the trusted scratch has only what
	 * ranks a plan, so a point that enters is evaluated again in full. */
	if (!ppi_points_dominated(w->pareto, e) && !ppi_front_dominated(&r->pareto, e)) {
		st = pp_estimate_eval(&s->model, &s->system, &s->job, plan, s->gpus,
		                      PP_EVAL_PEAK_ONLY | PP_EVAL_FIT_ONLY, w->ws, w->whole, &err);
		if (st || w->whole->time.iteration_s != e->time.iteration_s ||
		    w->whole->memory.total_bytes != e->memory.total_bytes) {
			r->status = st ? st : PP_EINTERNAL;
			r->err = err;
			if (!st)
				ppi_fail(&r->err, "", "search",
				         "internal: a plan evaluates differently the second time");
			return;
		}
		ppi_front_insert(&r->pareto, w->whole);
	}
}

/*
 * The plans of `plan` (every field set but mbs, order, vp, schedule and ZeRO)
 * over the micro-batch sizes, the distinct orders `u` and the tails `t`,
 * the tails innermost: plans that differ only there share their layers'
 * costs, which the workspace's memo then computes once.  Memory grows with
 * the micro-batch and does not depend on the order: for each tail, the first
 * micro-batch size at which none of its plans fits ends that tail's list, the
 * plans after it counted pruned.
 */
void ppi_search_run_mbs(worker *w, slot *r, pp_plan *plan, const int *mbss, int nmbs,
                        const ord_set *u, const tail *t, int nt)
{
	const struct pp_search *s = w->s;
	bool dead[MAX_TAILS], any_fit[MAX_TAILS], any_eval[MAX_TAILS];
	fit_memo memo[MAX_TAILS];
	for (int j = 0; j < nt; j++)
		dead[j] = false;
	int alive = nt;
	for (int mb = 0; mb < nmbs && alive > 0; mb++) {
		plan->mbs = mbss[mb];
		for (int j = 0; j < nt; j++) {
			any_fit[j] = any_eval[j] = false;
			memo[j].valid = false;
		}
		for (int k = 0; k < u->n; k++) {
			ppi_strlcpy(plan->order, u->order[k], sizeof plan->order);
			for (int j = 0; j < nt; j++) {
				if (dead[j])
					continue;
				if (any_eval[j] && !any_fit[j] && !s->opts.exhaustive) {
					r->pruned++;
					r->combos++;
					continue;
				}
				plan->vp = t[j].vp;
				plan->schedule = t[j].schedule;
				plan->zero = t[j].zero;
				bool fits;
				long long before = r->evaluated;
				evaluate(w, r, plan, &memo[j], &fits);
				any_eval[j] |= r->evaluated > before;
				any_fit[j] |= fits;
				if (r->status)
					return;
			}
		}
		for (int j = 0; j < nt; j++)
			if (!dead[j] && any_eval[j] && !any_fit[j] && !s->opts.exhaustive) {
				long long left = nmbs - mb - 1;
				r->pruned += left * u->n;
				r->combos += left * u->n;
				dead[j] = true;
				alive--;
			}
	}
}
