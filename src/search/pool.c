/*
 * The search's pool of threads: sub-spaces claimed in order, batch by batch
 * (at most LAG batches at once), each run into its own slot; the thread that
 * finishes a batch merges it into the search's lists in sub-space order and
 * takes the copy that batch k + LAG prunes by; pp_search_iterate drives it
 * from the caller's thread (search_int.h).
 */
#include <pthread.h>
#include <string.h>

#include "paraplan/search.h"
#include "search_int.h"
#include "topk.h"
#include "util/util.h"

/* Sub-spaces in batch k. */
static size_t batch_size(const pp_search *s, size_t k)
{
	size_t first = k * s->nslots;
	return s->nouters - first < s->nslots ? s->nouters - first : s->nslots;
}

/* Empty slot r for sub-space `index`, keeping its storage. */
static void slot_reset(slot *r, size_t index)
{
	ppi_topk_clear(&r->top);
	r->pareto.n = 0;
	r->evaluated = r->pruned = r->pruned_time = r->infeasible = r->rejected = r->combos = 0;
	r->over_cap = 0;
	r->min_over_cap_w = 0;
	r->outer_index = index;
	r->seq = 0;
	r->status = PP_OK;
}

/* Run sub-space i (claimed, its batch allowed to run) into its slot, pruned
 * by the search's lists as merged through LAG batches before its own. */
static void run_one(worker *w, size_t i)
{
	struct pp_search *s = w->s;
	size_t k = i / s->nslots;
	slot *r = &s->slots[(k % LAG) * s->nslots + i % s->nslots];
	slot_reset(r, i);
	w->top = &s->snap_top[k % LAG];
	w->pareto = &s->snap_front[k % LAG];
	ppi_search_run_outer(w, r, &s->outers[i]);
}

/* Under the lock: may sub-space `claimed` run now?  Its batch k must lie
 * before batch merged + LAG: the lists through batch k - LAG are complete. */
static bool can_claim(const pp_search *s)
{
	return !s->halt && s->claimed < s->nouters && s->claimed / s->nslots < s->merged + LAG;
}

/* What sub-space slot r found, into the search's lists and its stats as
 * merged (m_stats). */
static void merge(pp_search *s, const slot *r)
{
	pp_search_stats *st = &s->m_stats;
	for (size_t k = 0; k < r->top.n; k++) {
		const ppi_topk_entry *x = &r->top.v[k];
		ppi_topk_insert(&s->top, x);
		if (st->best_s == 0 || x->row.iteration_s < st->best_s)
			st->best_s = x->row.iteration_s;
	}
	for (size_t k = 0; k < r->pareto.n; k++)
		ppi_front_insert(&s->pareto, &r->pareto.full[k]);
	s->top.oom |= r->top.oom;
	s->pareto.oom |= r->pareto.oom;
	st->evaluated += r->evaluated;
	st->pruned += r->pruned;
	st->pruned_time += r->pruned_time;
	st->infeasible += r->infeasible;
	st->rejected += r->rejected;
	st->over_cap += r->over_cap;
	if (r->over_cap && (st->min_over_cap_w == 0 || r->min_over_cap_w < st->min_over_cap_w))
		st->min_over_cap_w = r->min_over_cap_w;
	st->space += (double)r->combos;
}

/* A copy of the search's lists, as pruning reads them, into `top` and `f`
 * (their storage kept): of the K best, the count and the worst kept (all
 * ppi_topk_wants and ppi_topk_worst_s read: O(1), where copying the K
 * entries cost 2.6M heap inserts at K = 10000), and the front's points. */
static void snapshot(const pp_search *s, ppi_topk *top, points *f)
{
	ppi_topk_copy_worst(top, &s->top);
	if (s->pareto.n > f->cap) {
		point *nv = ppi_realloc(f->v, s->pareto.n * sizeof *nv);
		if (!nv) {
			f->oom = true;
			return;
		}
		f->v = nv;
		f->cap = s->pareto.n;
	}
	if (s->pareto.n)
		memcpy(f->v, s->pareto.pts, s->pareto.n * sizeof *f->v);
	f->n = s->pareto.n;
}

/*
 * Batch k (all its sub-spaces done) into the search, in sub-space order,
 * deterministic whatever ran where: its slots into the lists, the lists'
 * copy that batch k + LAG will read (into the copy batch k read), and
 * whether the search ends here.  With a plan limit the search ends after
 * the sub-space that reaches it: the sub-spaces after it in this batch are
 * dropped, so the answer is the same with any thread count; a time limit is
 * checked once per batch.  Returns true when the search is over.
 */
static bool merge_batch(pp_search *s, size_t k)
{
	size_t n = batch_size(s, k);
	slot *slots = &s->slots[(k % LAG) * s->nslots];
	for (size_t i = 0; i < n; i++)
		if (slots[i].status) {
			s->m_status = slots[i].status;
			s->m_err = slots[i].err;
			return true;
		}
	long long max = s->opts.max_plans;
	for (size_t i = 0; i < n && s->m_stop == PP_SEARCH_COMPLETE; i++) {
		merge(s, &slots[i]);
		s->m_next++;
		if (max > 0 && s->m_stats.evaluated >= max && s->m_next < s->nouters)
			s->m_stop = PP_SEARCH_MAX_PLANS;
	}
	snapshot(s, &s->snap_top[k % LAG], &s->snap_front[k % LAG]);
	if (s->top.oom || s->pareto.oom || s->snap_top[k % LAG].oom || s->snap_front[k % LAG].oom) {
		s->m_status = PP_ENOMEM;
		return true;
	}
	double limit = s->opts.time_limit_s;
	if (s->m_stop == PP_SEARCH_COMPLETE && limit > 0 && s->m_next < s->nouters &&
	    ppi_search_now_s() - s->started >= limit)
		s->m_stop = PP_SEARCH_TIME_LIMIT;
	return s->m_next >= s->nouters || s->m_stop != PP_SEARCH_COMPLETE;
}

/* Under the lock, by the thread that finished sub-space i: when that ends
 * a batch, merge the batches done, in order (one thread at a time; the
 * lock is let go while merging), and let the next ones run. */
static void finished_one(pp_search *s, size_t i)
{
	size_t k = i / s->nslots;
	if (++s->done[k % LAG] < batch_size(s, k) || s->merging)
		return;
	s->merging = true;
	while (!s->halt && s->merged * s->nslots < s->nouters &&
	       s->done[s->merged % LAG] == batch_size(s, s->merged)) {
		size_t j = s->merged;
		ppi_search_pool_unlock(s);
		bool over = merge_batch(s, j);
		ppi_search_pool_lock(s);
		s->done[j % LAG] = 0;
		s->merged = j + 1;
		s->halt |= over;
		s->p_next = s->m_next;
		s->p_stop = s->m_stop;
		s->p_status = s->m_status;
		s->p_err = s->m_err;
		s->p_stats = s->m_stats;
		ppi_search_pool_wake(s);
	}
	s->merging = false;
}

/* A pool thread: the next sub-space whose batch may run, until the search is
 * freed; idle while there is none (the merge of an earlier batch, or the
 * first pp_search_iterate, lets more run). */
static void *thread_main(void *arg)
{
	worker *w = arg;
	struct pp_search *s = w->s;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->quit && !ppi_search_can_probe(s) && !(s->active && can_claim(s)))
			pthread_cond_wait(&s->wake, &s->mu);
		if (s->quit)
			break;
		if (ppi_search_can_probe(s)) {
			ppi_search_probe_chunk(s, w);
			continue;
		}
		size_t i = s->claimed++;
		s->running++;
		pthread_mutex_unlock(&s->mu);
		run_one(w, i);
		pthread_mutex_lock(&s->mu);
		s->running--;
		finished_one(s, i);
		if (s->halt && s->running == 0)
			pthread_cond_broadcast(&s->wake);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Start the pool's threads (workers 1..; the caller's thread is worker 0,
 * within pp_search_iterate).  A thread that cannot be had leaves its share
 * to the others. */
void ppi_search_pool_start(pp_search *s)
{
	if (s->nthreads < 2 || pthread_mutex_init(&s->mu, NULL))
		return;
	if (pthread_cond_init(&s->wake, NULL)) {
		pthread_mutex_destroy(&s->mu);
		return;
	}
	s->pool_init = true;
	for (int i = 1; i < s->nthreads; i++) {
		worker *w = &s->workers[i];
		w->started = pthread_create(&w->tid, NULL, thread_main, w) == 0;
	}
}

/* No sub-space is taken any more, and none is running when this returns:
 * the lists, slots and worker 0 are the caller's alone. */
static void pool_halt(pp_search *s)
{
	ppi_search_pool_lock(s);
	s->halt = true;
	if (s->pool_init) {
		pthread_cond_broadcast(&s->wake);
		while (s->running > 0 || s->merging)
			pthread_cond_wait(&s->wake, &s->mu);
	}
	ppi_search_pool_unlock(s);
}

void ppi_search_pool_stop(pp_search *s)
{
	if (!s->pool_init)
		return;
	pthread_mutex_lock(&s->mu);
	s->quit = true;
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->mu);
	for (int i = 1; i < s->nthreads; i++)
		if (s->workers[i].started)
			pthread_join(s->workers[i].tid, NULL);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->mu);
	s->pool_init = false;
}

/*
 * At least one more batch merged (by whichever thread finished it): this
 * thread runs sub-spaces as the pool's threads do until then.  The search's
 * count, stop and stats are taken from the merge here, so that the caller
 * reads them while the pool goes on.
 */
pp_status pp_search_iterate(pp_search *s, pp_error *err)
{
	if (pp_search_done(s))
		return PP_OK;
	ppi_search_pool_lock(s);
	if (!s->active) {
		s->active = true;
		ppi_search_pool_wake(s);
	}
	size_t seen = s->merged;
	while (s->merged == seen && !s->halt) {
		if (can_claim(s)) {
			size_t i = s->claimed++;
			ppi_search_pool_unlock(s);
			run_one(&s->workers[0], i);
			ppi_search_pool_lock(s);
			finished_one(s, i);
		} else {
			/* Only with a pool: alone, this thread runs every batch. */
			pthread_cond_wait(&s->wake, &s->mu);
		}
	}
	bool over = s->halt;
	s->next = s->p_next;
	s->stop = s->p_stop;
	s->stats = s->p_stats;
	s->stats.subspaces_done = (long long)s->next;
	pp_status st = s->p_status;
	if (st)
		*err = s->p_err;
	ppi_search_pool_unlock(s);
	if (!over)
		return PP_OK;
	pool_halt(s);
	if (st)
		return st;
	return ppi_search_finish(s, err);
}
