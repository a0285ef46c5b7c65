/*
 * The search's internals, shared by its files (prefix ppi_):
 *   search.c     the public API: checks, set-up, results, explanation, free
 *   front.c      the Pareto front of (time, memory)
 *   enumerate.c  the sub-spaces (tp, tp2, pp, cp, split) and, within one,
 *                the plans over ep, etp, 2D TP variants, sp, recompute,
 *                micro-batch, order, vp, schedule and ZeRO
 *   prune.c      one plan's evaluation with its memory and time cuts, and
 *                the micro-batch loop that stops where nothing fits
 *   pool.c       the pool of threads, the batches and their merge in order,
 *                pp_search_iterate
 *   probe.c      the probes that order the sub-spaces fastest-looking first
 *   topk.c       the K best (topk.h)
 * What the unit tests check is here too (ppi_search_mbs_values).
 *
 * Plan search: enumerate, evaluate (memory first, then a floor under the
 * time before the time model), keep the top K and the Pareto front.  Work is
 * split by (tp, tp2, pp, cp, split) sub-spaces, grouped in batches of
 * consecutive sub-spaces; a pool of threads started once per search takes
 * the next sub-space in order.  Each sub-space writes its own slot; the
 * thread that finishes a batch merges its slots in sub-space order.  The
 * sub-spaces of batch k are pruned against the lists as merged through batch
 * k - LAG (lagged pruning), so a thread goes on with the next batches (up to
 * LAG at once) without waiting for a batch's last sub-space, and what each
 * sub-space is pruned against is a function of k alone: results and stats
 * are the same for any thread count.  Each thread owns its workspace,
 * allocated once.
 */
#ifndef PPI_SEARCH_INT_H
#define PPI_SEARCH_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "paraplan/estimate.h"
#include "paraplan/search.h"
#include "topk.h"
#include "util/util.h"

/*
 * The micro-batch sizes a sub-space searches: the divisors of per_replica (a
 * replica's sequences per iteration) in increasing order, those of `mbs` only
 * when it lists values, at most PP_SEARCH_MAX_VALUES, into out; returns how
 * many.  gbs_div holds the global batch's divisors ascending (ppi_divisors),
 * of which per_replica is one: the cost is O(the global batch's divisors),
 * independent of per_replica and so of the micro-batch count (issue 21; it
 * was a loop over 1..per_replica, 22 s of a 1M-GPU search at gbs 536,870,912).
 */
int ppi_search_mbs_values(const int *gbs_div, int ngbs_div, long long per_replica,
                          const pp_search_dim *mbs, int *out);

/* ------------------------------------------------------------ the front */

/* A point of the front as pruning reads it (time, memory, the plan as
 * ranked): ~130 bytes against a whole estimate's ~8 KB. */
typedef struct point {
	double time_s, bytes;
	pp_plan ranked;
} point;

/* A copy of the search's front's points, as the sub-spaces prune by it. */
typedef struct points {
	point *v;
	size_t n, cap;
	bool oom;
} points;

/* Pareto front of (time, memory): no kept point is both slower and larger.
 * The points, which every plan's pruning scans, are kept apart from the
 * whole estimates (~8 KB each, which only a report reads): a scan over
 * whole estimates missed the cache on every point. */
typedef struct front {
	point *pts;
	pp_estimate *full; /* full[i]: the estimate of pts[i] */
	size_t n, cap;
	bool oom;
} front;

/* Does point p come before estimate e in time, memory and rank?  (Inline:
 * every evaluated plan's pruning scans the fronts.) */
static inline bool ppi_point_dominates(const point *p, const pp_estimate *e)
{
	return p->time_s <= e->time.iteration_s && p->bytes <= e->memory.total_bytes &&
	       ppi_search_compare_parts(p->time_s, p->bytes, &p->ranked, e->time.iteration_s,
	                                e->memory.total_bytes, &e->plan) < 0;
}

/* Is `e` dominated by one of the n points of v? */
static inline bool ppi_points_dominate(const point *v, size_t n, const pp_estimate *e)
{
	for (size_t i = 0; i < n; i++)
		if (ppi_point_dominates(&v[i], e))
			return true;
	return false;
}

/* Is `e` dominated by a point of front f? */
static inline bool ppi_front_dominated(const front *f, const pp_estimate *e)
{
	return ppi_points_dominate(f->pts, f->n, e);
}

/* Is `e` dominated by a point of a copy of the search's front? */
static inline bool ppi_points_dominated(const points *f, const pp_estimate *e)
{
	return ppi_points_dominate(f->v, f->n, e);
}

/* `e` (copied) into the front unless a point dominates it, dropping the
 * points it dominates.  Sets f->oom when the front cannot grow. */
void ppi_front_insert(front *f, const pp_estimate *e);
/* The front fastest first (the ranking's total order). */
void ppi_front_sort(front *f);
/* Frees what f owns (not f). */
void ppi_front_free(front *f);

/* ------------------------------------------------------------ state */

typedef struct outer {
	int tp, tp2, pp, cp;
	int first, last; /* plan.first/last_stage_layers of this sub-space */
} outer;

/* What one sub-space of a batch found, merged into the search, in
 * sub-space order, once the whole batch is done. */
typedef struct slot {
	unsigned long long outer_index, seq; /* the ppi_topk_key of the next result */
	ppi_topk top;
	front pareto;
	long long evaluated, pruned, pruned_time, infeasible, rejected, combos;
	long long over_cap;    /* timed plans that fit, over job.energy.power_cap_w */
	double min_over_cap_w; /* the least facility power of those; 0 = none */
	pp_status status;
	pp_error err;
} slot;

/* One thread of the pool and what it owns. */
typedef struct worker {
	struct pp_search *s;
	/* The lists that prune the sub-space being run: the search's as merged
	 * through LAG batches before its own (read-only while it runs). */
	const ppi_topk *top;
	const points *pareto;
	pp_estimate *scratch; /* a plan as ranked (PPI_EVAL_TRUSTED) */
	pp_estimate *whole;   /* a plan entering the front, in full */
	pp_work *ws;
	pthread_t tid;
	bool started;
} worker;

/* Sub-spaces per batch (nouters / BATCH_DIV within [BATCH_MIN, BATCH_MAX])
 * and the lag: functions of the space alone (never of the thread count), so
 * the lists that prune a sub-space are the same whatever the threads.  Batch
 * k is pruned by the lists merged through batch k - LAG: a sub-space does
 * not see the results of the LAG - 1 batches before its own nor of the
 * sub-spaces before it in its batch, and the threads run up to LAG batches
 * at once without waiting for the slowest sub-space of any. */
enum { BATCH_MIN = 2, BATCH_MAX = 256, BATCH_DIV = 256, LAG = 4 };

/* The rank orders searched when the space names none (the last places 2D
 * TP's n_2 groups inside tp's: with tp2 = 1 it lands every group where the
 * first does, and distinct_orders drops it). */
enum { PPI_SEARCH_NDEFAULT_ORDERS = 5 };
extern const char *const ppi_search_default_orders[PPI_SEARCH_NDEFAULT_ORDERS];

struct pp_search {
	pp_model model;
	pp_system system;
	pp_job job;
	long long gpus;
	pp_search_space space;
	pp_search_options opts;
	/* Facility power of the GPUs all idle (pp_energy_compute at busy 0): the
	 * least any plan draws, for the energy objective's floor. */
	double idle_facility_w;
	/* The divisors of the global batch, ascending: every replica's batch
	 * divides it, and so does every micro-batch size (ppi_search_run_outer). */
	int gbs_div[PPI_DIVISORS_MAX];
	int ngbs_div;
	outer *outers;
	size_t nouters, next; /* sub-spaces; those done (merged) */
	int nthreads;
	worker *workers;
	size_t nslots; /* sub-spaces per batch */
	slot *slots;   /* LAG * nslots: sub-space i of batch k at (k % LAG) * nslots + i % nslots */
	/*
	 * The pool (under mu): a pool thread, or the caller's within
	 * pp_search_iterate, takes sub-space `claimed` when its batch may run,
	 * i.e. lies before batch merged + LAG (batches [0, merged) are merged),
	 * and counts it in done[batch % LAG] when finished; the thread that
	 * finishes a batch merges it (`merging`: one at a time, in order);
	 * `wake` is broadcast at each merge and at halt.  `halt` stops the claims
	 * (the search is over); `running` counts the pool threads inside a
	 * sub-space.
	 */
	pthread_mutex_t mu;
	pthread_cond_t wake;
	bool pool_init, quit, halt, active, merging;
	size_t claimed, merged, done[LAG];
	int running;
	/* The probes that order the sub-spaces (ppi_search_order_outers), shared out like
	 * the sub-spaces before the search starts: the next to take and the
	 * number done, under mu; a probe's allocation failure in probe_status. */
	struct probed *probes;
	size_t probe_next, probe_done;
	pp_status probe_status;
	/* What the merges found (written by the merging thread, under
	 * `merging`): the sub-spaces merged, why the search stops, an error, the
	 * stats; published after each batch (under mu) into the p_ fields,
	 * which pp_search_iterate copies into next, stop and stats. */
	size_t m_next, p_next;
	pp_search_stop m_stop, p_stop;
	pp_status m_status, p_status;
	pp_error m_err, p_err;
	pp_search_stats m_stats, p_stats;
	/* The search's lists, merged through batch merged - 1 (by the merging
	 * thread), and a copy of them as they were after batch j's merge in
	 * snap_top[j % LAG] and snap_front[j % LAG] (empty before any merge):
	 * batch k reads snap_*[k % LAG] (through batch k - LAG), which the merge
	 * of batch k overwrites once no sub-space reads it. */
	ppi_topk top;
	front pareto;
	ppi_topk snap_top[LAG];
	points snap_front[LAG];
	/* The rows: top.v grouped by ppi_topk_group once the search is done (at
	 * most opts.top_k rows; top keeps PPI_SEARCH_KEEP_PER_ROW x top_k). */
	size_t nrows, *row_at, *eq_off, *eq_idx;
	pp_estimate *results; /* the nrows rows in full, each once asked for */
	bool *made;           /* results[i] has been evaluated */
	pp_search_stop stop;  /* why the search ended before its last sub-space */
	bool finished;        /* lists sorted, wall time taken */
	pp_search_stats stats;
	double started;
	char explain[64];
};

/* Seconds on the monotonic clock. */
static inline double ppi_search_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ enumeration */

/* The orders of the space that place the groups differently under a plan's
 * degrees: the first of each alike set, in the space's order. */
#define PPI_SEARCH_MAX_NVS 64 /* factorisations of the NVLink domain kept (--order nvs) */
typedef struct ord_set {
	const char *order[PP_SEARCH_MAX_ORDERS + PPI_SEARCH_MAX_NVS];
	int n;
	char nvs[PPI_SEARCH_MAX_NVS][PP_ORDER_MAX]; /* the factorisations' orders */
} ord_set;

/* A plan's fields that do not shape a layer's cost: vp, schedule, ZeRO. */
typedef struct tail {
	int vp, zero;
	pp_schedule schedule;
} tail;

/* At most every vp with each schedule that uses vp and every other
 * schedule with vp = 1, times 4 ZeRO stages. */
#define MAX_TAILS (4 * (PP_SEARCH_MAX_VALUES + PP_SCHED_MAX))

/*
 * The sub-spaces of s's space into s->outers / s->nouters (allocated here,
 * owned by s): every (tp, pp, cp, tp2) the model, the GPUs and the space
 * allow with its pipeline splits, in enumeration order.  None: PP_EINPUT
 * with why in err (s->outers may be set; pp_search_free frees it).
 */
pp_status ppi_search_outers(pp_search *s, pp_error *err);

/* The space's base plan with sub-space o's degrees and pipeline split, dp
 * what the GPUs leave, into *plan. */
void ppi_search_outer_plan(const pp_search *s, const outer *o, pp_plan *plan);

/* Every plan of sub-space o, run by worker w into slot r (r->status set on
 * an error; stops there). */
void ppi_search_run_outer(worker *w, slot *r, const outer *o);

/* ------------------------------------------------------------ pruning */

/*
 * The plans of `plan` (every field set but mbs, order, vp, schedule and ZeRO)
 * over the nmbs micro-batch sizes mbss, the distinct orders `u` and the nt
 * tails `t`, evaluated by worker w into slot r (prune.c).
 */
void ppi_search_run_mbs(worker *w, slot *r, pp_plan *plan, const int *mbss, int nmbs,
                        const ord_set *u, const tail *t, int nt);

/* ------------------------------------------------------------ pool */

/* The pool's lock; nothing to lock without a pool (one thread). */
static inline void ppi_search_pool_lock(pp_search *s)
{
	if (s->pool_init)
		pthread_mutex_lock(&s->mu);
}

static inline void ppi_search_pool_unlock(pp_search *s)
{
	if (s->pool_init)
		pthread_mutex_unlock(&s->mu);
}

/* Wake every thread waiting on the pool (nothing without a pool). */
static inline void ppi_search_pool_wake(pp_search *s)
{
	if (s->pool_init)
		pthread_cond_broadcast(&s->wake);
}

/* Start the pool's threads (workers 1..; the caller's thread is worker 0,
 * within pp_search_iterate).  A thread that cannot be had leaves its share
 * to the others. */
void ppi_search_pool_start(pp_search *s);
/* Ends and joins the pool's threads (none running a sub-space). */
void ppi_search_pool_stop(pp_search *s);

/* The lists in their final order and the wall time: the search is over (the
 * pool halted); search.c.  PP_ENOMEM only. */
pp_status ppi_search_finish(pp_search *s, pp_error *err);

/* ------------------------------------------------------------ probes */

/* Under the lock: probes left to take, and the search not being freed. */
bool ppi_search_can_probe(const pp_search *s);
/* Under the lock (held on return): worker w runs one chunk of probes. */
void ppi_search_probe_chunk(pp_search *s, worker *w);
/* s->outers reordered fastest-looking first (probe.c).  PP_ENOMEM only. */
pp_status ppi_search_order_outers(pp_search *s);

#endif
