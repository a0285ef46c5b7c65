/*
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
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "estimate/estimate_int.h"
#include "paraplan/cost.h"
#include "paraplan/dhelix.h"
#include "paraplan/schedule_type.h"
#include "paraplan/search.h"
#include "search_int.h"
#include "topk.h"
#include "util/util.h"

static const char *const default_orders[] = {"tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp", "tp-pp-cp-ep-dp",
                                             "cp-tp-ep-dp-pp"};

void pp_search_space_init(pp_search_space *space)
{
	memset(space, 0, sizeof *space);
	pp_plan_init(&space->base);
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

/* ------------------------------------------------------------ ranking */

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

/* Does point p come before estimate e in time, memory and rank? */
static bool point_dominates(const point *p, const pp_estimate *e)
{
	return p->time_s <= e->time.iteration_s && p->bytes <= e->memory.total_bytes &&
	       ppi_search_compare_parts(p->time_s, p->bytes, &p->ranked, e->time.iteration_s,
	                                e->memory.total_bytes, &e->plan) < 0;
}

/* Is `e` dominated by one of the n points of v? */
static bool points_dominate(const point *v, size_t n, const pp_estimate *e)
{
	for (size_t i = 0; i < n; i++)
		if (point_dominates(&v[i], e))
			return true;
	return false;
}

static bool front_dominated(const front *f, const pp_estimate *e)
{
	return points_dominate(f->pts, f->n, e);
}

/* Is `e` dominated by a point of a copy of the search's front? */
static bool points_dominated(const points *f, const pp_estimate *e)
{
	return points_dominate(f->v, f->n, e);
}

/* Does e dominate point p (e before p in time, memory and rank)? */
static bool dominates_point(const pp_estimate *e, const point *p)
{
	return e->time.iteration_s <= p->time_s && e->memory.total_bytes <= p->bytes &&
	       ppi_search_compare_parts(e->time.iteration_s, e->memory.total_bytes, &e->plan,
	                                p->time_s, p->bytes, &p->ranked) < 0;
}

/* `e` into the front unless a point dominates it, dropping the points it
 * dominates.  Sets f->oom when the front cannot grow. */
static void front_insert(front *f, const pp_estimate *e)
{
	if (front_dominated(f, e))
		return;
	size_t k = 0;
	for (size_t i = 0; i < f->n; i++)
		if (!dominates_point(e, &f->pts[i])) {
			if (k != i) {
				f->pts[k] = f->pts[i];
				f->full[k] = f->full[i];
			}
			k++;
		}
	f->n = k;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		point *np = ppi_realloc(f->pts, cap * sizeof *np);
		if (np)
			f->pts = np;
		pp_estimate *nv = np ? ppi_realloc(f->full, cap * sizeof *nv) : NULL;
		if (!nv) {
			f->oom = true;
			return;
		}
		f->full = nv;
		f->cap = cap;
	}
	f->pts[f->n] = (point){e->time.iteration_s, e->memory.total_bytes, e->plan};
	f->full[f->n++] = *e;
}

static void front_free(front *f)
{
	free(f->pts);
	free(f->full);
}

/* The front fastest first (the ranking's total order), by selection on the
 * points: each ~8 KB estimate moves at most once, where an insertion sort
 * moved it once per place (60 points: ~20 MB copied at the search's end). */
static void front_sort(front *f)
{
	for (size_t i = 0; i + 1 < f->n; i++) {
		size_t best = i;
		for (size_t j = i + 1; j < f->n; j++) {
			const point *a = &f->pts[j], *b = &f->pts[best];
			if (ppi_search_compare_parts(a->time_s, a->bytes, &a->ranked, b->time_s,
			                             b->bytes, &b->ranked) < 0)
				best = j;
		}
		if (best == i)
			continue;
		point q = f->pts[i];
		f->pts[i] = f->pts[best];
		f->pts[best] = q;
		pp_estimate t = f->full[i];
		f->full[i] = f->full[best];
		f->full[best] = t;
	}
}

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

struct pp_search {
	pp_model model;
	pp_system system;
	pp_job job;
	long long gpus;
	pp_search_space space;
	pp_search_options opts;
	/* The divisors of the global batch, ascending: every replica's batch
	 * divides it, and so does every micro-batch size (run_outer). */
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
	/* The probes that order the sub-spaces (order_outers), shared out like
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
	pp_estimate *results; /* the top.n best in full, each once asked for */
	bool *made;           /* results[i] has been evaluated */
	pp_search_stop stop;  /* why the search ended before its last sub-space */
	bool finished;        /* lists sorted, wall time taken */
	pp_search_stats stats;
	double started;
	char explain[64];
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Candidate values of a dimension: the user's, or 1..max filtered by `ok`. */
typedef bool (*dim_ok)(const struct pp_search *s, int v);

static int dim_values(const struct pp_search *s, const pp_search_dim *d, int lo, int max, dim_ok ok,
                      int *out, int cap)
{
	int n = 0;
	if (d->count > 0) {
		for (int i = 0; i < d->count && n < cap; i++)
			if (d->values[i] >= lo && d->values[i] <= max &&
			    (!ok || ok(s, d->values[i])))
				out[n++] = d->values[i];
		return n;
	}
	for (int v = lo; v <= max && n < cap; v++)
		if (!ok || ok(s, v))
			out[n++] = v;
	return n;
}

static bool tp_ok(const struct pp_search *s, int v)
{
	const pp_model *m = &s->model;
	if (m->num_heads % v || s->gpus % v)
		return false;
	if (m->mla.kv_lora_rank == 0 && m->num_kv_heads % v)
		return false;
	return m->ffn_hidden == 0 || m->ffn_hidden % v == 0;
}

/* The user fixed the pipeline split (first/last stage layers, embedding or
 * loss counted as a layer). */
static bool fixed_split(const pp_plan *base)
{
	return base->first_stage_layers > 0 || base->last_stage_layers > 0 ||
	       base->embedding_as_layer || base->loss_as_layer;
}

/*
 * Uneven splits tried for a pp that does not divide the L layers, as
 * Megatron's first/last stage layer counts: the pp - 2 middle stages hold k
 * layers, k = ceil(L/pp) (the ends lighter) and also k = floor(L/pp) when
 * L mod pp <= 2 (the ends at most one layer heavier); the first and last
 * stages share the rest, halved, both ways round when it is odd.  Each end
 * holds at least one layer.  At most 4 splits, in this order, into out.
 */
static int uneven_splits(int L, int pp, int out[4][2])
{
	int n = 0;
	if (pp < 2 || L % pp == 0)
		return 0;
	const int ks[2] = {(L + pp - 1) / pp, L / pp};
	int nk = pp > 2 && L % pp <= 2 ? 2 : 1;
	for (int a = 0; a < nk; a++) {
		int rest = L - (pp - 2) * ks[a];
		if (ks[a] < 1 || rest < 2)
			continue;
		int lo = rest / 2, hi = rest - lo;
		const int cand[2][2] = {{lo, hi}, {hi, lo}};
		for (int c = 0; c < (lo == hi ? 1 : 2); c++) {
			bool dup = false;
			for (int i = 0; i < n; i++)
				dup |= out[i][0] == cand[c][0] && out[i][1] == cand[c][1];
			if (!dup) {
				out[n][0] = cand[c][0];
				out[n][1] = cand[c][1];
				n++;
			}
		}
	}
	return n;
}

static bool pp_ok(const struct pp_search *s, int v)
{
	if (s->gpus % v)
		return false;
	const pp_model *m = &s->model;
	if (fixed_split(&s->space.base)) {
		pp_plan probe = s->space.base;
		probe.pp = v;
		probe.vp = 1;
		pp_error err;
		return pp_plan_check_split(&probe, m, &err) == PP_OK;
	}
	int splits[4][2];
	return m->num_layers % v == 0 || uneven_splits(m->num_layers, v, splits) > 0;
}

static bool cp_ok(const struct pp_search *s, int v)
{
	return v == 1 || (s->job.seq_len % (2 * v) == 0 && s->gpus % v == 0);
}

/* 2D TP splits the sequence over n_2 (seed 003 Table II); not with MoE. */
static bool tp2_ok(const struct pp_search *s, int v)
{
	return v == 1 || (s->job.seq_len % v == 0 && s->gpus % v == 0 &&
	                  s->model.moe.num_experts == 0 && s->model.mla.kv_lora_rank == 0);
}

/* ------------------------------------------------------------ one sub-space */

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
	if (!(floor_s > ppi_topk_worst_s(c->w->top) || floor_s > ppi_topk_worst_s(&c->r->top)))
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
	/* A result the search's list (as merged LAG batches back) would not
	 * keep cannot enter it later: its worst only gets better. */
	ppi_topk_key key = {r->outer_index, r->seq++};
	if (ppi_topk_wants(w->top, e, key) && ppi_topk_wants(&r->top, e, key)) {
		ppi_topk_entry x;
		ppi_topk_entry_set(&x, e, key);
		ppi_topk_insert(&r->top, &x);
	}
	/* The same for the front: a plan the search's front dominates stays out.
	 * A point kept is a whole estimate: the trusted scratch has only what
	 * ranks a plan, so a point that enters is evaluated again in full. */
	if (!points_dominated(w->pareto, e) && !front_dominated(&r->pareto, e)) {
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
		front_insert(&r->pareto, w->whole);
	}
}

/* Layout signature of a plan under an order: where every group lands. */
static void signature(const pp_model *m, const pp_plan *p, const pp_system *sys, pp_layout *sig)
{
	pp_plan_layouts(p, sys, sig);
	for (int g = 0; g < PP_NGROUPS; g++) {
		bool expert = g == PP_GROUP_EP || g == PP_GROUP_ETP || g == PP_GROUP_EDP;
		/* A group of one, or an expert group of a dense model, moves nothing. */
		if (sig[g].size <= 1 || (expert && m->moe.num_experts == 0)) {
			sig[g].size = 1;
			sig[g].per_domain = 1;
		}
	}
}

/* The orders of the space that place the groups differently under a plan's
 * degrees: the first of each alike set, in the space's order. */
typedef struct ord_set {
	const char *order[PP_SEARCH_MAX_ORDERS];
	int n;
} ord_set;

static void distinct_orders(const struct pp_search *s, const pp_plan *base, ord_set *u)
{
	const pp_search_space *sp = &s->space;
	int norders =
	    sp->norders ? sp->norders : (int)(sizeof default_orders / sizeof *default_orders);
	pp_layout seen[PP_SEARCH_MAX_ORDERS][PP_NGROUPS];
	pp_plan plan = *base;
	u->n = 0;
	for (int k = 0; k < norders; k++) {
		const char *ord = sp->norders ? sp->orders[k] : default_orders[k];
		ppi_strlcpy(plan.order, ord, sizeof plan.order);
		pp_layout sig[PP_NGROUPS];
		signature(&s->model, &plan, &s->system, sig);
		bool dup = false;
		for (int q = 0; q < u->n && !dup; q++)
			dup = memcmp(seen[q], sig, sizeof sig) == 0;
		if (dup)
			continue;
		memcpy(seen[u->n], sig, sizeof sig);
		u->order[u->n++] = ord;
	}
}

/* A plan's fields that do not shape a layer's cost: vp, schedule, ZeRO. */
typedef struct tail {
	int vp, zero;
	pp_schedule schedule;
} tail;

/* At most every vp with each schedule that uses vp and every other
 * schedule with vp = 1, times 4 ZeRO stages. */
#define MAX_TAILS (4 * (PP_SEARCH_MAX_VALUES + PP_SCHED_MAX))

/*
 * The plans of `plan` (every field set but mbs, order, vp, schedule and ZeRO)
 * over the micro-batch sizes, the distinct orders `u` and the tails `t`,
 * the tails innermost: plans that differ only there share their layers'
 * costs, which the workspace's memo then computes once.  Memory grows with
 * the micro-batch and does not depend on the order: for each tail, the first
 * micro-batch size at which none of its plans fits ends that tail's list, the
 * plans after it counted pruned.
 */
static void run_mbs(worker *w, slot *r, pp_plan *plan, const int *mbss, int nmbs, const ord_set *u,
                    const tail *t, int nt)
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

/* The space's base plan with sub-space o's degrees and pipeline split, dp
 * what the GPUs leave. */
static void outer_plan(const struct pp_search *s, const outer *o, pp_plan *plan)
{
	*plan = s->space.base;
	plan->tp = o->tp;
	plan->tp2 = o->tp2;
	plan->pp = o->pp;
	plan->cp = o->cp;
	plan->first_stage_layers = o->first;
	plan->last_stage_layers = o->last;
	plan->dp = (int)(s->gpus / ((long long)o->tp * o->tp2 * o->pp * o->cp));
}

int ppi_search_mbs_values(const int *gbs_div, int ngbs_div, long long per_replica,
                          const pp_search_dim *mbs, int *out)
{
	int n = 0;
	for (int d = 0; d < ngbs_div && n < PP_SEARCH_MAX_VALUES; d++) {
		int v = gbs_div[d];
		if (v > per_replica)
			break;
		bool want = mbs->count == 0;
		for (int i = 0; i < mbs->count; i++)
			want |= mbs->values[i] == v;
		if (want && per_replica % v == 0)
			out[n++] = v;
	}
	return n;
}

static void run_outer(worker *w, slot *r, const outer *o)
{
	struct pp_search *s = w->s;
	const pp_search_space *sp = &s->space;
	const pp_model *m = &s->model;
	long long dp = s->gpus / ((long long)o->tp * o->tp2 * o->pp * o->cp);
	long long per_replica = s->job.global_batch % dp ? 0 : s->job.global_batch / dp;
	if (per_replica == 0) {
		r->rejected++;
		return;
	}
	int eps[PP_SEARCH_MAX_VALUES], etps[PP_SEARCH_MAX_VALUES], vps[PP_SEARCH_MAX_VALUES];
	int mbss[PP_SEARCH_MAX_VALUES], zeros[4];
	int nep, netp, nvp, nmbs, nzero;
	if (m->moe.num_experts > 0) {
		nep = 0;
		int cap = m->moe.num_experts;
		for (int v = 1; v <= cap && nep < PP_SEARCH_MAX_VALUES; v++) {
			bool want = sp->ep.count == 0;
			for (int i = 0; i < sp->ep.count; i++)
				want |= sp->ep.values[i] == v;
			long long inner = (long long)o->tp * o->cp * dp;
			if (want && m->moe.num_experts % v == 0 && inner % v == 0)
				eps[nep++] = v;
		}
	} else {
		eps[0] = 1;
		nep = 1;
	}
	if (sp->etp.count > 0 && m->moe.num_experts > 0) {
		netp = 0;
		for (int i = 0; i < sp->etp.count; i++)
			etps[netp++] = sp->etp.values[i];
	} else {
		etps[0] = o->tp; /* Megatron's default: experts split like the dense layers */
		netp = 1;
		if (m->moe.num_experts > 0 && o->tp > 1 && sp->etp.count == 0)
			etps[netp++] = 1;
	}
	/* vp divides every stage's layers (Megatron: the stage's vp chunks are alike). */
	pp_plan split = sp->base;
	split.pp = o->pp;
	split.first_stage_layers = o->first;
	split.last_stage_layers = o->last;
	bool even = !fixed_split(&split);
	int vmax = even ? m->num_layers / o->pp : pp_stage_layers(m, &split, 0);
	if (!even && vmax < 1)
		vmax = 1; /* a first stage of the embedding alone: vp = 1 */
	nvp = 0;
	for (int v = 1; v <= vmax && nvp < PP_SEARCH_MAX_VALUES; v++) {
		bool want = sp->vp.count == 0 ? (v == 1 || o->pp > 1) : false;
		for (int i = 0; i < sp->vp.count; i++)
			want |= sp->vp.values[i] == v;
		if (want && !even && v > 1) {
			pp_error err;
			split.vp = v;
			want = pp_plan_check_split(&split, m, &err) == PP_OK;
		}
		if (want && vmax % v == 0 && (v == 1 || o->pp > 1))
			vps[nvp++] = v;
	}
	nmbs = ppi_search_mbs_values(s->gbs_div, s->ngbs_div, per_replica, &sp->mbs, mbss);
	nzero = 0;
	for (int z = 0; z <= 3; z++) {
		bool want = sp->zero.count == 0;
		for (int i = 0; i < sp->zero.count; i++)
			want |= sp->zero.values[i] == z;
		if (want)
			zeros[nzero++] = z;
	}
	unsigned rmask = sp->recompute_mask ? sp->recompute_mask : 7u;
	unsigned smask = sp->schedule_mask ? sp->schedule_mask : pp_schedule_search_default_mask();
	unsigned spmask = sp->sp_mask ? sp->sp_mask : 3u;

	/* 2D TP variants: shared-weight 2D TP and SUMMA with its panel counts. */
	int variants[2 * PP_SEARCH_MAX_VALUES][2], nvar = 0; /* {summa, nb} */
	unsigned summask = sp->summa_mask ? sp->summa_mask : 3u;
	/* tp2 = 1 is plain 1D TP; with tp2 > 1, bit 0 is 2D TP with shared weights. */
	if (o->tp2 == 1 || (summask & 1u))
		variants[nvar][0] = 0, variants[nvar][1] = 1, nvar++;
	if ((summask & 2u) && o->tp2 > 1) {
		int h = m->hidden, f = m->ffn_hidden;
		for (int v = 1; v <= 64 && nvar < 2 * PP_SEARCH_MAX_VALUES; v *= 2) {
			bool want = sp->summa_nb.count == 0;
			for (int i = 0; i < sp->summa_nb.count; i++)
				want |= sp->summa_nb.values[i] == v;
			if (want && h % v == 0 && (f == 0 || f % v == 0))
				variants[nvar][0] = 1, variants[nvar][1] = v, nvar++;
		}
		for (int i = 0; i < sp->summa_nb.count && nvar < 2 * PP_SEARCH_MAX_VALUES; i++) {
			int v = sp->summa_nb.values[i];
			if (v > 64 || (v & (v - 1)))
				variants[nvar][0] = 1, variants[nvar][1] = v, nvar++;
		}
	}

	pp_plan plan;
	outer_plan(s, o, &plan);
	/* The (vp, schedule, ZeRO) of the sub-space, in the order the search
	 * has always enumerated them. */
	tail tails[MAX_TAILS];
	int ntails = 0;
	for (int c = 0; c < nvp; c++)
		for (int sc = 0; sc < pp_schedule_type_n; sc++) {
			const pp_schedule_type *st = pp_schedule_types[sc];
			if (!(smask & (1u << sc)))
				continue;
			/* vp > 1 is a schedule with virtual stages (interleaved); vp = 1
			 * is not */
			if ((vps[c] > 1) != st->uses_vp)
				continue;
			/* no pipeline: every schedule is the same as 1F1B, but those
			 * marked at_pp1 (DHelix's co-execution, SI without PP) */
			if (o->pp == 1 && !st->at_pp1)
				continue;
			for (int z = 0; z < nzero && ntails < MAX_TAILS; z++)
				tails[ntails++] = (tail){vps[c], zeros[z], (pp_schedule)sc};
		}
	for (int vv = 0; vv < nvar; vv++) {
		plan.summa = variants[vv][0];
		plan.summa_nb = variants[vv][1];
		for (int a = 0; a < nep; a++)
			for (int b = 0; b < netp; b++) {
				plan.ep = eps[a];
				plan.etp = etps[b];
				/* Where every group lands depends on the degrees fixed
				 * here, not on vp, sp, schedule, ZeRO, recompute or the
				 * micro-batch: the orders that place the groups alike
				 * are told apart once, the first of each kept. */
				ord_set u;
				distinct_orders(s, &plan, &u);
				for (int spv = 0; spv < 2; spv++) {
					if (!(spmask & (1u << spv)) || (spv && o->tp == 1))
						continue;
					for (int rc = 0; rc < 3; rc++) {
						if (!(rmask & (1u << rc)))
							continue;
						plan.sp = spv;
						plan.recompute = (pp_recompute)rc;
						run_mbs(w, r, &plan, mbss, nmbs, &u, tails, ntails);
						if (r->status)
							return;
					}
				}
			}
	}
}

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
	run_outer(w, r, &s->outers[i]);
}

/* The pool's lock; nothing to lock without a pool (one thread). */
static void pool_lock(pp_search *s)
{
	if (s->pool_init)
		pthread_mutex_lock(&s->mu);
}

static void pool_unlock(pp_search *s)
{
	if (s->pool_init)
		pthread_mutex_unlock(&s->mu);
}

static void pool_wake(pp_search *s)
{
	if (s->pool_init)
		pthread_cond_broadcast(&s->wake);
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
		if (st->best_s == 0 || x->time_s < st->best_s)
			st->best_s = x->time_s;
	}
	for (size_t k = 0; k < r->pareto.n; k++)
		front_insert(&s->pareto, &r->pareto.full[k]);
	s->top.oom |= r->top.oom;
	s->pareto.oom |= r->pareto.oom;
	st->evaluated += r->evaluated;
	st->pruned += r->pruned;
	st->pruned_time += r->pruned_time;
	st->infeasible += r->infeasible;
	st->rejected += r->rejected;
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
	    now_s() - s->started >= limit)
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
		pool_unlock(s);
		bool over = merge_batch(s, j);
		pool_lock(s);
		s->done[j % LAG] = 0;
		s->merged = j + 1;
		s->halt |= over;
		s->p_next = s->m_next;
		s->p_stop = s->m_stop;
		s->p_status = s->m_status;
		s->p_err = s->m_err;
		s->p_stats = s->m_stats;
		pool_wake(s);
	}
	s->merging = false;
}

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

/* Sub-space i's probe (see order_outers) into `out`, with worker w's
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
	outer_plan(s, o, &plan);
	plan.ep = sp->ep.count ? sp->ep.values[0] : 1;
	plan.etp = sp->etp.count ? sp->etp.values[0] : o->tp;
	plan.vp = 1;
	plan.mbs = sp->mbs.count ? sp->mbs.values[0] : 1;
	plan.zero = zero;
	plan.recompute = (pp_recompute)rc;
	plan.sp = o->tp > 1 && (spmask & 2u);
	plan.schedule = o->pp == 1 ? PP_SCHED_1F1B : (pp_schedule)first_bit(smask);
	plan.schedule = pp_schedule_for_vp(plan.schedule, 1); /* the probe has vp = 1 */
	ppi_strlcpy(plan.order, sp->norders ? sp->orders[0] : default_orders[0], sizeof plan.order);
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
static bool can_probe(const pp_search *s)
{
	return s->probes && !s->quit && s->probe_next < s->nouters;
}

/* Under the lock (held on return): worker w runs one chunk of probes. */
static void probe_chunk(pp_search *s, worker *w)
{
	size_t first = s->probe_next;
	size_t n = s->nouters - first < PROBE_CHUNK ? s->nouters - first : PROBE_CHUNK;
	s->probe_next += n;
	pool_unlock(s);
	pp_status st = PP_OK;
	for (size_t i = first; i < first + n && !st; i++)
		st = probe_one(s, w, i, &s->probes[i]);
	pool_lock(s);
	if (st)
		s->probe_status = st;
	s->probe_done += n;
	if (s->probe_done == s->nouters)
		pool_wake(s);
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
 * pool's threads, the caller's too (probe_chunk), before the search starts;
 * each depends on its sub-space alone, so the order is the same with any
 * thread count.  PP_ENOMEM only.
 */
static pp_status order_outers(pp_search *s)
{
	probed *p = ppi_malloc(s->nouters * sizeof *p);
	outer *sorted = ppi_malloc(s->nouters * sizeof *sorted);
	if (!p || !sorted) {
		free(p);
		free(sorted);
		return PP_ENOMEM;
	}
	pool_lock(s);
	s->probes = p;
	s->probe_next = s->probe_done = 0;
	s->probe_status = PP_OK;
	pool_wake(s);
	while (s->probe_done < s->nouters) {
		if (can_probe(s))
			probe_chunk(s, &s->workers[0]);
		else
			pthread_cond_wait(&s->wake, &s->mu);
	}
	s->probes = NULL;
	pp_status st = s->probe_status;
	pool_unlock(s);
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

/* A pool thread: the next sub-space whose batch may run, until the search is
 * freed; idle while there is none (the merge of an earlier batch, or the
 * first pp_search_iterate, lets more run). */
static void *thread_main(void *arg)
{
	worker *w = arg;
	struct pp_search *s = w->s;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->quit && !can_probe(s) && !(s->active && can_claim(s)))
			pthread_cond_wait(&s->wake, &s->mu);
		if (s->quit)
			break;
		if (can_probe(s)) {
			probe_chunk(s, w);
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
static void pool_start(pp_search *s)
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
	pool_lock(s);
	s->halt = true;
	if (s->pool_init) {
		pthread_cond_broadcast(&s->wake);
		while (s->running > 0 || s->merging)
			pthread_cond_wait(&s->wake, &s->mu);
	}
	pool_unlock(s);
}

static void pool_stop(pp_search *s)
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

/* ------------------------------------------------------------ public API */

pp_status pp_search_new(const pp_model *m, const pp_system *sys, const pp_job *job, long long gpus,
                        const pp_search_space *space, const pp_search_options *opts,
                        pp_search **out, pp_error *err)
{
	*out = NULL;
	PPI_TRY(pp_model_check(m, err));
	PPI_TRY(pp_system_check(sys, err));
	PPI_TRY(pp_job_check(job, err));
	PPI_TRY(pp_job_check_gpu(job, sys, err));
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
	/* wshape needs the GPU's DHelix overlap table: refused here, once, rather
	 * than in every wshape plan (pp_dh_overlap_of_system). */
	for (int i = 0; i < pp_schedule_type_n; i++)
		if ((space->schedule_mask & (1u << i)) && pp_schedule_types[i]->si) {
			pp_dh_overlap ov;
			PPI_TRY(pp_dh_overlap_of_system(sys, 1, &ov, err));
			break;
		}
	struct pp_search *s = ppi_calloc(1, sizeof *s);
	if (!s)
		return PP_ENOMEM;
	s->model = *m;
	s->system = *sys;
	s->job = *job;
	s->gpus = gpus;
	s->space = *space;
	s->opts = *opts;
	s->ngbs_div = ppi_divisors(job->global_batch, s->gbs_div, PPI_DIVISORS_MAX);
	s->started = now_s();
	/* Every order checked once here (the search resolves its plans without
	 * checking them again): the probe's other fields are valid, so a bad
	 * order is what a refusal names. */
	for (int i = 0; i < space->norders; i++) {
		pp_plan probe = space->base;
		ppi_strlcpy(probe.order, space->orders[i], sizeof probe.order);
		probe.tp = probe.pp = probe.cp = probe.ep = probe.vp = probe.mbs = 1;
		probe.tp2 = probe.summa_nb = 1;
		probe.zero = 0;
		probe.recompute = PP_RECOMPUTE_NONE;
		probe.schedule = PP_SCHED_1F1B;
		probe.dp = 0;
		probe.etp = 0;
		pp_job one = *job;
		one.global_batch = gpus;
		pp_status st = pp_plan_resolve(&probe, m, sys, gpus, &one, err);
		if (st == PP_EINPUT && strcmp(err->field, "plan.order") == 0) {
			free(s);
			return st;
		}
	}
	/* The outer sub-spaces: (tp, pp, cp) with tp*pp*cp dividing the GPUs. */
	int tps[PP_SEARCH_MAX_VALUES], pps[PP_SEARCH_MAX_VALUES], cps[PP_SEARCH_MAX_VALUES];
	int tp2s[PP_SEARCH_MAX_VALUES];
	int ntp = dim_values(s, &space->tp, 1,
	                     s->system.nvlink_domain > m->num_heads ? s->system.nvlink_domain
	                                                            : m->num_heads,
	                     tp_ok, tps, PP_SEARCH_MAX_VALUES);
	int npp = dim_values(s, &space->pp, 1, m->num_layers + 2, pp_ok, pps, PP_SEARCH_MAX_VALUES);
	int ncp = dim_values(s, &space->cp, 1, job->seq_len / 2 > 1 ? job->seq_len / 2 : 1, cp_ok,
	                     cps, PP_SEARCH_MAX_VALUES);
	/* 2D TP is opt-in (no mainstream framework runs it): searched only over the
	 * tp2 values asked for. */
	int ntp2 = 1;
	tp2s[0] = 1;
	if (space->tp2.count > 0)
		ntp2 = dim_values(s, &space->tp2, 1, 64, tp2_ok, tp2s, PP_SEARCH_MAX_VALUES);
	/* Up to 4 pipeline splits per pp (uneven_splits). */
	s->outers = ppi_calloc((size_t)(ntp ? ntp : 1) * (npp ? npp : 1) * 4 * (ncp ? ncp : 1) *
	                           (ntp2 ? ntp2 : 1),
	                       sizeof *s->outers);
	if (!s->outers) {
		pp_search_free(s);
		return PP_ENOMEM;
	}
	for (int a = 0; a < ntp; a++)
		for (int b = 0; b < npp; b++) {
			/* The pipeline splits of this pp: the user's, the even one, or
			 * the uneven ones when pp does not divide the layers. */
			int splits[4][2] = {
			    {space->base.first_stage_layers, space->base.last_stage_layers}};
			int nsplit = 1;
			if (!fixed_split(&space->base) && m->num_layers % pps[b])
				nsplit = uneven_splits(m->num_layers, pps[b], splits);
			for (int c = 0; c < ncp; c++)
				for (int d = 0; d < ntp2; d++) {
					if (tp2s[d] > 1 && cps[c] > 1)
						continue; /* 2D TP already splits the sequence */
					long long mp =
					    (long long)tps[a] * tp2s[d] * pps[b] * cps[c];
					if (gpus % mp)
						continue;
					bool dp_ok = space->dp.count == 0;
					for (int i = 0; i < space->dp.count; i++)
						dp_ok |= space->dp.values[i] == gpus / mp;
					if (!dp_ok)
						continue;
					for (int e = 0; e < nsplit; e++) {
						outer o = {tps[a], tp2s[d],      pps[b],
						           cps[c], splits[e][0], splits[e][1]};
						s->outers[s->nouters++] = o;
					}
				}
		}
	if (s->nouters == 0 && fixed_split(&space->base)) {
		const pp_plan *b = &space->base;
		pp_plan probe = *b; /* one pp asked for: why it does not split */
		probe.pp = space->pp.count == 1 ? space->pp.values[0] : 0;
		probe.vp = 1;
		if (probe.pp > 0 && pp_plan_check_split(&probe, m, err)) {
			pp_search_free(s);
			return PP_EINPUT;
		}
		pp_search_free(s);
		return ppi_fail(
		    err, "",
		    b->first_stage_layers   ? "plan.first_stage_layers"
		    : b->last_stage_layers  ? "plan.last_stage_layers"
		    : b->embedding_as_layer ? "plan.embedding_as_layer"
		                            : "plan.loss_as_layer",
		    "no pipeline degree in the space splits the %d layers of %s this way "
		    "on %lld GPUs",
		    m->num_layers, m->name, gpus);
	}
	if (s->nouters == 0) {
		pp_search_free(s);
		return ppi_fail(
		    err, "", "plan",
		    "no (tp, pp, cp) allowed by the model and %lld GPUs is in the space", gpus);
	}
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
	ppi_topk_init(&s->top, (size_t)opts->top_k);
	for (int i = 0; i < LAG; i++)
		ppi_topk_init(&s->snap_top[i], (size_t)opts->top_k);
	s->stats.subspaces = (long long)s->nouters;
	s->m_stats = s->p_stats = s->stats;
	if (!s->workers || !s->slots) {
		pp_search_free(s);
		return PP_ENOMEM;
	}
	for (size_t i = 0; i < LAG * s->nslots; i++)
		ppi_topk_init(&s->slots[i].top, (size_t)opts->top_k);
	for (int i = 0; i < s->nthreads; i++) {
		worker *w = &s->workers[i];
		w->s = s;
		w->scratch = ppi_calloc(1, sizeof *w->scratch);
		w->whole = ppi_malloc(sizeof *w->whole);
		w->ws = ppi_malloc(sizeof *w->ws);
		if (w->ws)
			pp_work_init(w->ws);
		if (!w->scratch || !w->whole || !w->ws) {
			pp_search_free(s);
			return PP_ENOMEM;
		}
	}
	pool_start(s);
	pp_status ost = order_outers(s);
	if (ost) {
		pp_search_free(s);
		return ost;
	}
	*out = s;
	return PP_OK;
}

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
	if (s->top.n == 0)
		return PP_OK;
	s->results = ppi_calloc(s->top.n, sizeof *s->results);
	s->made = ppi_calloc(s->top.n, sizeof *s->made);
	return s->results && s->made ? PP_OK : PP_ENOMEM;
}

/* Result i of a finished search, evaluated in full into `out` from its
 * resolved plan (which resolves to itself); it must come out as it was
 * ranked (else PP_EINTERNAL).  Uses the calling thread's workspace
 * (workers[0]). */
static pp_status materialise(const pp_search *s, size_t i, pp_estimate *out, pp_error *err)
{
	const ppi_topk_entry *x = &s->top.v[i];
	pp_plan plan = x->ranked;
	pp_status st =
	    pp_estimate_eval(&s->model, &s->system, &s->job, &plan, s->gpus,
	                     PP_EVAL_PEAK_ONLY | PP_EVAL_FIT_ONLY, s->workers[0].ws, out, err);
	if (st == PP_ENOMEM)
		return st;
	if (st || out->time.iteration_s != x->time_s || out->memory.total_bytes != x->bytes ||
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
static pp_status finish(pp_search *s, pp_error *err)
{
	pp_status st = final_plans(s);
	if (st)
		return st;
	s->finished = true;
	front_sort(&s->pareto);
	s->stats.wall_s = now_s() - s->started;
	s->stats.stop = s->stop;
	return s->top.oom || s->pareto.oom ? PP_ENOMEM : PP_OK;
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
	pool_lock(s);
	if (!s->active) {
		s->active = true;
		pool_wake(s);
	}
	size_t seen = s->merged;
	while (s->merged == seen && !s->halt) {
		if (can_claim(s)) {
			size_t i = s->claimed++;
			pool_unlock(s);
			run_one(&s->workers[0], i);
			pool_lock(s);
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
	pool_unlock(s);
	if (!over)
		return PP_OK;
	pool_halt(s);
	if (st)
		return st;
	return finish(s, err);
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
	return s->finished ? s->top.n : 0;
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
	const ppi_topk_entry *x = &s->top.v[i];
	const ppi_topk_row *r = &x->row;
	bool sim = s->made[i] && s->results[i].simulated;
	*out = (pp_search_row){.plan = x->ranked,
	                       .total_bytes = x->bytes,
	                       .headroom_bytes = r->headroom_bytes,
	                       .iteration_s = x->time_s,
	                       .compute_s = r->compute_s,
	                       .tp_s = r->tp_s,
	                       .pp_s = r->pp_s,
	                       .bubble_s = r->bubble_s,
	                       .dp_s = r->dp_s,
	                       .mfu = r->mfu,
	                       .tokens_per_s = r->tokens_per_s,
	                       .train_days = r->train_days,
	                       .cost_usd = r->cost_usd,
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
		out->wall_s = now_s() - s->started;
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
	if (pp_search_count(s) < 2)
		return NULL;
	/* The first runner-up that is actually slower (equal plans tie). */
	size_t j = 1;
	const ppi_topk_entry *v = s->top.v;
	while (j + 1 < s->top.n && v[j].time_s <= v[0].time_s * (1 + 1e-9))
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
		pool_stop(s);
	if (s->workers)
		for (int i = 0; i < s->nthreads; i++) {
			free(s->workers[i].scratch);
			free(s->workers[i].whole);
			free(s->workers[i].ws);
		}
	if (s->slots)
		for (size_t i = 0; i < LAG * s->nslots; i++) {
			ppi_topk_free(&s->slots[i].top);
			front_free(&s->slots[i].pareto);
		}
	free(s->workers);
	free(s->slots);
	free(s->outers);
	ppi_topk_free(&s->top);
	front_free(&s->pareto);
	for (int i = 0; i < LAG; i++) {
		ppi_topk_free(&s->snap_top[i]);
		free(s->snap_front[i].v);
	}
	free(s->results);
	free(s->made);
	free(s);
}
