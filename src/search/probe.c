/*
 * The search's probes: one plan per sub-space, shared out among the pool's
 * threads before the search starts, whose times order the sub-spaces
 * fastest-looking first (search_int.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "paraplan/estimate.h"
#include "paraplan/schedule_type.h"
#include "paraplan/search.h"
#include "search_int.h"
#include "util/util.h"

/* A sub-space's probe and its time, for the order in which they are searched. */
typedef struct probed {
	double time_s; /* the probe's iteration time; +inf when it is refused or does not fit */
	size_t index;  /* its place in the enumeration */
} probed;

static int probed_cmp(const void *a, const void *b)
{
	const probed *x = a, *y = b;
	if (x->time_s != y->time_s)
		return x->time_s < y->time_s ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* The lowest set bit of mask (mask != 0): the first value of a flag in the space. */
static int first_bit(unsigned mask)
{
	int b = 0;
	while (!(mask & 1u)) {
		mask >>= 1;
		b++;
	}
	return b;
}

/* Sub-space i's probe (see ppi_search_order_outers) into `out`, with worker w's
 * workspace.  PP_ENOMEM only. */
static pp_status probe_one(const pp_search *s, worker *w, size_t i, probed *out)
{
	const pp_search_space *sp = &s->space;
	unsigned rmask = sp->recompute_mask ? sp->recompute_mask : 7u;
	unsigned smask = sp->schedule_mask ? sp->schedule_mask : 1u << PP_SCHED_1F1B;
	unsigned spmask = sp->sp_mask ? sp->sp_mask : 3u;
	int zero = 0;
	for (int z = 0; z <= 3; z++) {
		bool want = sp->zero.count == 0;
		for (int k = 0; k < sp->zero.count; k++)
			want |= sp->zero.values[k] == z;
		if (want)
			zero = z;
	}
	int rc = 0;
	for (int r = 0; r < 3; r++)
		if (rmask & (1u << r))
			rc = r;
	const outer *o = &s->outers[i];
	pp_plan plan;
	ppi_search_outer_plan(s, o, &plan);
	plan.ep = sp->ep.count ? sp->ep.values[0] : 1;
	plan.etp = sp->etp.count ? sp->etp.values[0] : o->tp;
	plan.vp = 1;
	plan.mbs = sp->mbs.count ? sp->mbs.values[0] : 1;
	plan.zero = zero;
	plan.recompute = (pp_recompute)rc;
	plan.sp = o->tp > 1 && (spmask & 2u);
	plan.schedule = o->pp == 1 ? PP_SCHED_1F1B : (pp_schedule)first_bit(smask);
	plan.schedule = pp_schedule_for_vp(plan.schedule, 1); /* the probe has vp = 1 */
	ppi_strlcpy(plan.order, sp->norders ? sp->orders[0] : ppi_search_default_orders[0],
	            sizeof plan.order);
	pp_error err;
	out->index = i;
	out->time_s = INFINITY;
	pp_status st =
	    pp_estimate_eval(&s->model, &s->system, &s->job, &plan, s->gpus,
	                     PP_EVAL_PEAK_ONLY | PP_EVAL_FIT_ONLY, w->ws, w->whole, &err);
	if (st == PP_ENOMEM)
		return st;
	if (st == PP_OK && w->whole->fits)
		out->time_s = w->whole->time.iteration_s;
	return PP_OK;
}

/* Probes handed out at once: few enough that the threads end together,
 * enough that the lock is taken rarely (a probe is a few microseconds). */
enum { PROBE_CHUNK = 16 };

/* Under the lock: probes left to take, and the search not being freed. */
bool ppi_search_can_probe(const pp_search *s)
{
	return s->probes && !s->quit && s->probe_next < s->nouters;
}

/* Under the lock (held on return): worker w runs one chunk of probes. */
void ppi_search_probe_chunk(pp_search *s, worker *w)
{
	size_t first = s->probe_next;
	size_t n = s->nouters - first < PROBE_CHUNK ? s->nouters - first : PROBE_CHUNK;
	s->probe_next += n;
	ppi_search_pool_unlock(s);
	pp_status st = PP_OK;
	for (size_t i = first; i < first + n && !st; i++)
		st = probe_one(s, w, i, &s->probes[i]);
	ppi_search_pool_lock(s);
	if (st)
		s->probe_status = st;
	s->probe_done += n;
	if (s->probe_done == s->nouters)
		ppi_search_pool_wake(s);
}

/*
 * Order the sub-spaces fastest-looking first.  Time pruning compares a plan's
 * floor with the K-th best time found so far, so the sooner fast plans are
 * found the more is pruned; with a large K (the K-th time far from the best)
 * the order of the enumeration (tp, then pp, ascending) finds them late.  Each
 * sub-space is probed with one plan of its own — the most memory-saving values
 * the space allows (highest ZeRO stage and recompute, sequence parallelism,
 * the smallest micro-batch, no interleaving, its first schedule and order) —
 * and the sub-spaces are searched by the probe's time (ties, and probes that do
 * not fit, in enumeration order).  The order changes what is pruned, never the
 * answer: top K and front are exact whatever the order (their ties are broken
 * by the plan's fields).  The probes are shared out in chunks among the
 * pool's threads, the caller's too (ppi_search_probe_chunk), before the search starts;
 * each depends on its sub-space alone, so the order is the same with any
 * thread count.  PP_ENOMEM only.
 */
pp_status ppi_search_order_outers(pp_search *s)
{
	probed *p = ppi_malloc(s->nouters * sizeof *p);
	outer *sorted = ppi_malloc(s->nouters * sizeof *sorted);
	if (!p || !sorted) {
		free(p);
		free(sorted);
		return PP_ENOMEM;
	}
	ppi_search_pool_lock(s);
	s->probes = p;
	s->probe_next = s->probe_done = 0;
	s->probe_status = PP_OK;
	ppi_search_pool_wake(s);
	while (s->probe_done < s->nouters) {
		if (ppi_search_can_probe(s))
			ppi_search_probe_chunk(s, &s->workers[0]);
		else
			pthread_cond_wait(&s->wake, &s->mu);
	}
	s->probes = NULL;
	pp_status st = s->probe_status;
	ppi_search_pool_unlock(s);
	if (st) {
		free(p);
		free(sorted);
		return st;
	}
	qsort(p, s->nouters, sizeof *p, probed_cmp);
	for (size_t i = 0; i < s->nouters; i++)
		sorted[i] = s->outers[p[i].index];
	free(s->outers);
	s->outers = sorted;
	free(p);
	return PP_OK;
}
