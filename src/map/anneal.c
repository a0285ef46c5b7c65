/*
 * Pipette's latency model over a mapping (seed 001 Eq. 3-6) and simulated
 * annealing over mappings (seed 001 §IV: migrate, swap and reverse moves,
 * alpha = 0.999), GSL-style: new / iterate / test.
 *
 * The objective is kept per group: the TP ring time of every (stage, data
 * rank), the path time of every (tensor rank, data rank) pipeline, the two
 * hierarchical all-reduce terms of every stage-1 DP group.  A move touches
 * a few workers; only their groups are recomputed, then the maxima.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "estimate/estimate_int.h"
#include "paraplan/netmap.h"
#include "scenario/scenario_int.h"
#include "util/hash.h"
#include "util/util.h"

/* ---------------------------------------------------------- the groups */

/* B(g1, g2) through a node table and a node x node matrix with NVLink on
 * its diagonal when the matrix is per node (the annealer's fast path). */
typedef struct lat_ctx {
	const pp_pipette_model *m;
	const int *node;   /* GPU -> node, or NULL */
	const double *nbw; /* nodes x nodes, or NULL */
	int nodes;
} lat_ctx;

static inline double B(const lat_ctx *c, long long g1, long long g2)
{
	if (c->nbw)
		return c->nbw[(size_t)c->node[g1] * (size_t)c->nodes + (size_t)c->node[g2]];
	return pp_pipette_bw(c->m, g1, g2);
}

static long long fw(const long long *f, long long w)
{
	return f ? f[w] : w;
}

/* TP ring of stage x, data rank z: its slowest hop. */
static double tp_group(const lat_ctx *c, const long long *f, int x, int z)
{
	const pp_pipette_model *m = c->m;
	if (m->tp <= 1)
		return 0;
	long long base = (long long)m->tp * (z + (long long)m->dp * x);
	double bmin = DBL_MAX;
	for (int y = 0; y < m->tp; y++) {
		double b = B(c, fw(f, base + y), fw(f, base + (y + 1) % m->tp));
		if (b < bmin)
			bmin = b;
	}
	return m->tp_bytes / bmin;
}

/* Eq. 5's sum for the pipeline of tensor rank y, data rank z. */
static double pp_path(const lat_ctx *c, const long long *f, int y, int z)
{
	const pp_pipette_model *m = c->m;
	double t = 0;
	long long stride = (long long)m->tp * m->dp;
	for (int x = 0; x + 1 < m->pp; x++) {
		long long w = y + (long long)m->tp * z + stride * x;
		t += 2 * m->msg_pp_bytes / B(c, fw(f, w), fw(f, w + stride));
	}
	return t;
}

/* Eq. 6's two terms for the DP group of stage x (0: Pipette's stage 1), tensor rank y. */
static void dp_group_at(const lat_ctx *c, const long long *f, int x, int y, double *intra,
                        double *inter)
{
	const pp_pipette_model *m = c->m;
	*intra = *inter = 0;
	int d = m->dp;
	if (d <= 1 || m->msg_dp_bytes <= 0)
		return;
	enum { CHUNK = 256 };
	long long g[CHUNK], nd[CHUNK];
	double bin = DBL_MAX, bout = DBL_MAX;
	int kmax = 1, nodes = 0;
	long long *gg = d <= CHUNK ? g : ppi_malloc((size_t)d * 2 * sizeof *gg);
	long long *nn = d <= CHUNK ? nd : gg + d;
	if (!gg)
		return;
	for (int a = 0; a < d; a++) {
		gg[a] = fw(f, y + (long long)m->tp * (a + (long long)m->dp * x));
		nn[a] = gg[a] / m->gpus_per_node;
	}
	for (int a = 0; a < d; a++) {
		int same = 1;
		bool first = true;
		for (int b = 0; b < d; b++) {
			if (b == a || nn[b] != nn[a])
				continue;
			same++;
			if (b < a)
				first = false;
		}
		if (same > kmax)
			kmax = same;
		if (first)
			nodes++;
		for (int b = a + 1; b < d; b++) {
			double ab = B(c, gg[a], gg[b]), ba = B(c, gg[b], gg[a]);
			double lo = ab < ba ? ab : ba;
			if (nn[a] == nn[b]) {
				if (lo < bin)
					bin = lo;
			} else if (lo < bout)
				bout = lo;
		}
	}
	if (gg != g)
		free(gg);
	if (kmax > 1)
		*intra = 4.0 * (kmax - 1) * m->msg_dp_bytes / (kmax * bin);
	if (nodes > 1)
		*inter = 2.0 * (nodes - 1) * m->msg_dp_bytes / (nodes * bout);
}

static void dp_group(const lat_ctx *c, const long long *f, int y, double *intra, double *inter)
{
	dp_group_at(c, f, 0, y, intra, inter);
}

static void combine(const pp_pipette_model *m, double tp, double path, double dp,
                    pp_pipette_terms *t)
{
	t->tp_s = tp;
	t->pp_path_s = path;
	t->dp_s = dp;
	t->bubble_s = m->pp * (m->compute_s + tp) + path;
	t->straggler_s = (m->pp - 1) * (m->compute_s + tp);
	/* = schedule.h's pp_pipette_latency with the per-hop T_com^PP = path / (pp - 1) */
	t->iteration_s = pp_pipette_latency(m->compute_s, tp, m->pp > 1 ? path / (m->pp - 1) : 0,
	                                    dp, m->microbatches, m->pp);
}

double pp_pipette_map_latency(const pp_pipette_model *m, const long long *f, pp_pipette_terms *out)
{
	lat_ctx ctx = {m, NULL, NULL, 0}, *c = &ctx;
	double tp = 0, path = 0, di = 0, de = 0;
	for (int x = 0; x < m->pp; x++)
		for (int z = 0; z < m->dp; z++) {
			double t = tp_group(c, f, x, z);
			if (t > tp)
				tp = t;
		}
	for (int y = 0; y < m->tp; y++)
		for (int z = 0; z < m->dp; z++) {
			double t = pp_path(c, f, y, z);
			if (t > path)
				path = t;
		}
	for (int y = 0; y < m->tp; y++) {
		double a, b;
		dp_group(c, f, y, &a, &b);
		if (a > di)
			di = a;
		if (b > de)
			de = b;
	}
	pp_pipette_terms t;
	combine(m, tp, path, di + de, &t);
	if (out)
		*out = t;
	return t.iteration_s;
}

/* ------------------------------------------------------------ annealing */

void pp_anneal_params_init(pp_anneal_params *p)
{
	memset(p, 0, sizeof *p);
	p->seed = 1;
	p->max_moves = 100000;
	p->max_seconds = 0;
	p->alpha = 0.999; /* seed 001 §IV */
	p->t0_rel = 1e-3;
	p->t_end_rel = 1e-7;
	p->p_migrate = 1.0 / 3;
	p->p_swap = 1.0 / 3;
}

/* Substrings moved by migrate and reversed by reverse are at most this long:
 * a long reverse reshuffles whole pipelines and is never accepted late. */
#define SPAN_MAX 16

struct pp_anneal {
	pp_pipette_model m;
	pp_anneal_params p;
	lat_ctx ctx;
	int *node;
	double *nbw;
	long long n;        /* workers */
	long long unit, nb; /* workers per block, blocks: moves permute blocks */
	long long *blk;     /* block k of workers runs on GPU block blk[k] */
	long long *f, *best;
	double *tp_t, *pp_t, *dpi_t, *dpe_t; /* per group */
	long long *stamp_tp, *stamp_pp, *stamp_dp, stamp;
	int *dirty_tp, *dirty_pp, *dirty_dp;
	int ndt, ndp, ndd;
	double cur, best_s, identity_s, temp;
	long long moves, accepted, moves_per_step;
	uint64_t rng; /* SplitMix64 (util/hash.h) */
	struct timespec t0, c0;
	double wall_s, cpu_s;
};

static long long below(uint64_t *s, long long n)
{
	return (long long)ppi_splitmix64_below(s, (uint64_t)n);
}

static double now_s(clockid_t clk, const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(clk, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* Mark the groups of worker w dirty. */
static void touch(pp_anneal *a, long long w)
{
	const pp_pipette_model *m = &a->m;
	int y = (int)(w % m->tp), z = (int)(w / m->tp % m->dp),
	    x = (int)(w / ((long long)m->tp * m->dp));
	int gt = x * m->dp + z, gp = y * m->dp + z;
	if (a->stamp_tp[gt] != a->stamp) {
		a->stamp_tp[gt] = a->stamp;
		a->dirty_tp[a->ndt++] = gt;
	}
	if (a->stamp_pp[gp] != a->stamp) {
		a->stamp_pp[gp] = a->stamp;
		a->dirty_pp[a->ndp++] = gp;
	}
	if (x == 0 && a->stamp_dp[y] != a->stamp) {
		a->stamp_dp[y] = a->stamp;
		a->dirty_dp[a->ndd++] = y;
	}
}

/* Recompute the dirty groups and the objective. */
static double refresh(pp_anneal *a)
{
	const pp_pipette_model *m = &a->m;
	for (int i = 0; i < a->ndt; i++) {
		int g = a->dirty_tp[i];
		a->tp_t[g] = tp_group(&a->ctx, a->f, g / m->dp, g % m->dp);
	}
	for (int i = 0; i < a->ndp; i++) {
		int g = a->dirty_pp[i];
		a->pp_t[g] = pp_path(&a->ctx, a->f, g / m->dp, g % m->dp);
	}
	for (int i = 0; i < a->ndd; i++) {
		int y = a->dirty_dp[i];
		dp_group(&a->ctx, a->f, y, &a->dpi_t[y], &a->dpe_t[y]);
	}
	double tp = 0, path = 0, di = 0, de = 0;
	for (int g = 0; g < m->pp * m->dp; g++)
		if (a->tp_t[g] > tp)
			tp = a->tp_t[g];
	for (int g = 0; g < m->tp * m->dp; g++)
		if (a->pp_t[g] > path)
			path = a->pp_t[g];
	for (int y = 0; y < m->tp; y++) {
		if (a->dpi_t[y] > di)
			di = a->dpi_t[y];
		if (a->dpe_t[y] > de)
			de = a->dpe_t[y];
	}
	pp_pipette_terms t;
	combine(m, tp, path, di + de, &t);
	return t.iteration_s;
}

static void reverse(long long *f, long long i, long long j)
{
	for (; i < j; i++, j--) {
		long long x = f[i];
		f[i] = f[j];
		f[j] = x;
	}
}

/* Remove the element at i and insert it at j (the rest shift). */
static void migrate(long long *f, long long i, long long j)
{
	long long x = f[i];
	if (i < j)
		memmove(f + i, f + i + 1, (size_t)(j - i) * sizeof *f);
	else
		memmove(f + j + 1, f + j, (size_t)(i - j) * sizeof *f);
	f[j] = x;
}

pp_status pp_anneal_new(const pp_pipette_model *m, const pp_anneal_params *p, pp_anneal **out,
                        pp_error *err)
{
	*out = NULL;
	if (m->pp < 1 || m->tp < 1 || m->dp < 1 || m->gpus_per_node < 1 ||
	    !(m->intra_bytes_per_s > 0))
		return ppi_fail(err, "", "mapping",
		                "pp, tp, dp, gpus per node and NVLink must be positive");
	if (!(p->alpha > 0 && p->alpha < 1) || !(p->t0_rel > 0) || !(p->t_end_rel > 0) ||
	    p->max_moves < 1)
		return ppi_fail(err, "", "anneal",
		                "need 0 < alpha < 1, temperatures > 0, moves >= 1");
	pp_anneal *a = ppi_calloc(1, sizeof *a);
	if (!a)
		return ppi_fail(err, "", "anneal", "out of memory");
	a->m = *m;
	a->p = *p;
	a->n = (long long)m->pp * m->tp * m->dp;
	size_t n = (size_t)a->n, G = (size_t)m->pp * m->dp, P = (size_t)m->tp * m->dp,
	       D = (size_t)m->tp;
	/* Blocks: a TP group when it nests in a node, a node when TP spans
	 * nodes; a move then never splits a TP group over nodes. */
	long long tp = m->tp, g = m->gpus_per_node;
	a->unit = p->unit_workers > 0 ? p->unit_workers : g % tp == 0 ? tp : tp % g == 0 ? g : 1;
	if (a->n % a->unit != 0)
		a->unit = 1;
	a->nb = a->n / a->unit;
	a->blk = ppi_malloc((size_t)a->nb * sizeof *a->blk);
	a->f = ppi_malloc(n * sizeof *a->f);
	a->best = ppi_malloc(n * sizeof *a->best);
	a->tp_t = ppi_calloc(G, sizeof *a->tp_t);
	a->pp_t = ppi_calloc(P, sizeof *a->pp_t);
	a->dpi_t = ppi_calloc(D, sizeof *a->dpi_t);
	a->dpe_t = ppi_calloc(D, sizeof *a->dpe_t);
	a->stamp_tp = ppi_calloc(G, sizeof *a->stamp_tp);
	a->stamp_pp = ppi_calloc(P, sizeof *a->stamp_pp);
	a->stamp_dp = ppi_calloc(D, sizeof *a->stamp_dp);
	a->dirty_tp = ppi_malloc(G * sizeof *a->dirty_tp);
	a->dirty_pp = ppi_malloc(P * sizeof *a->dirty_pp);
	a->dirty_dp = ppi_malloc(D * sizeof *a->dirty_dp);
	if (!a->blk || !a->f || !a->best || !a->tp_t || !a->pp_t || !a->dpi_t || !a->dpe_t ||
	    !a->stamp_tp || !a->stamp_pp || !a->stamp_dp || !a->dirty_tp || !a->dirty_pp ||
	    !a->dirty_dp) {
		pp_anneal_free(a);
		return ppi_fail(err, "", "anneal", "out of memory");
	}
	a->ctx = (lat_ctx){&a->m, NULL, NULL, 0};
	const pp_bandwidth *bw = m->bw;
	long long N = (a->n + g - 1) / g;
	if (bw && bw->gpus_per_endpoint > 1 && N <= bw->n && N <= 65536) {
		a->node = ppi_malloc(n * sizeof *a->node);
		a->nbw = ppi_malloc((size_t)N * (size_t)N * sizeof *a->nbw);
		if (a->node && a->nbw) {
			for (long long q = 0; q < a->n; q++)
				a->node[q] = (int)(q / g);
			for (long long i = 0; i < N; i++)
				for (long long j = 0; j < N; j++)
					a->nbw[i * N + j] = i == j ? m->intra_bytes_per_s
					                           : bw->bytes_per_s[i * bw->n + j];
			a->ctx = (lat_ctx){&a->m, a->node, a->nbw, (int)N};
		}
	}
	for (long long k = 0; k < a->nb; k++)
		a->blk[k] = k;
	for (long long w = 0; w < a->n; w++)
		a->f[w] = a->best[w] = w;
	a->stamp = 1;
	for (long long w = 0; w < a->n; w++)
		touch(a, w);
	a->cur = a->best_s = a->identity_s = refresh(a);
	a->ndt = a->ndp = a->ndd = 0;
	a->temp = p->t0_rel * a->identity_s;
	double steps = ceil(log(p->t_end_rel / p->t0_rel) / log(p->alpha));
	if (steps < 1)
		steps = 1;
	a->moves_per_step = (long long)ceil((double)p->max_moves / steps);
	a->rng = p->seed;
	clock_gettime(CLOCK_MONOTONIC, &a->t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a->c0);
	*out = a;
	return PP_OK;
}

void pp_anneal_free(pp_anneal *a)
{
	if (!a)
		return;
	free(a->node);
	free(a->nbw);
	free(a->blk);
	free(a->f);
	free(a->best);
	free(a->tp_t);
	free(a->pp_t);
	free(a->dpi_t);
	free(a->dpe_t);
	free(a->stamp_tp);
	free(a->stamp_pp);
	free(a->stamp_dp);
	free(a->dirty_tp);
	free(a->dirty_pp);
	free(a->dirty_dp);
	free(a);
}

static void swap_blocks(long long *b, long long i, long long j)
{
	long long x = b[i];
	b[i] = b[j];
	b[j] = x;
}

/* Apply block changes [lo, hi] to the worker map and mark their groups. */
static void apply(pp_anneal *a, long long lo, long long hi, long long i2, bool two)
{
	a->stamp++;
	a->ndt = a->ndp = a->ndd = 0;
	for (long long k = lo; k <= hi; k++) {
		if (two && k != lo && k != i2)
			continue;
		for (long long i = 0; i < a->unit; i++) {
			long long w = k * a->unit + i;
			a->f[w] = a->blk[k] * a->unit + i;
			touch(a, w);
		}
	}
}

/* One move at the current temperature: propose, evaluate, accept or undo. */
static void move(pp_anneal *a)
{
	long long n = a->nb;
	if (n < 2)
		return;
	double r = ppi_splitmix64_unit(&a->rng);
	int kind = r < a->p.p_migrate ? 0 : r < a->p.p_migrate + a->p.p_swap ? 1 : 2;
	long long i = below(&a->rng, n), j;
	if (kind == 1) {
		j = below(&a->rng, n - 1);
		if (j >= i)
			j++;
	} else {
		long long span = n - 1 < SPAN_MAX ? n - 1 : SPAN_MAX;
		long long d = 1 + below(&a->rng, span);
		j = below(&a->rng, 2) ? i + d : i - d;
		if (j < 0 || j >= n)
			j = i - (j - i);
		if (j < 0 || j >= n)
			return;
	}
	long long lo = i < j ? i : j, hi = i < j ? j : i;
	if (kind == 0)
		migrate(a->blk, i, j);
	else if (kind == 1)
		swap_blocks(a->blk, i, j);
	else
		reverse(a->blk, lo, hi);
	apply(a, lo, hi, hi, kind == 1);
	double cand = refresh(a);
	double delta = cand - a->cur;
	a->moves++;
	if (delta <= 0 || ppi_splitmix64_unit(&a->rng) < exp(-delta / a->temp)) {
		a->cur = cand;
		a->accepted++;
		if (cand < a->best_s) {
			a->best_s = cand;
			memcpy(a->best, a->f, (size_t)a->n * sizeof *a->f);
		}
		return;
	}
	/* undo, then the same groups again */
	if (kind == 0)
		migrate(a->blk, j, i);
	else if (kind == 1)
		swap_blocks(a->blk, i, j);
	else
		reverse(a->blk, lo, hi);
	for (long long k = lo; k <= hi; k++)
		if (kind != 1 || k == lo || k == hi)
			for (long long q = 0; q < a->unit; q++)
				a->f[k * a->unit + q] = a->blk[k] * a->unit + q;
	refresh(a);
}

void pp_anneal_iterate(pp_anneal *a)
{
	for (long long k = 0; k < a->moves_per_step && a->moves < a->p.max_moves; k++)
		move(a);
	a->temp *= a->p.alpha;
	a->wall_s = now_s(CLOCK_MONOTONIC, &a->t0);
	a->cpu_s = now_s(CLOCK_THREAD_CPUTIME_ID, &a->c0);
}

int pp_anneal_test(const pp_anneal *a)
{
	if (a->moves >= a->p.max_moves)
		return 1;
	if (a->p.max_seconds > 0 && a->wall_s >= a->p.max_seconds)
		return 1;
	return PP_OK;
}

void pp_anneal_run(pp_anneal *a)
{
	while (pp_anneal_test(a) == PP_OK)
		pp_anneal_iterate(a);
}

void pp_anneal_result_get(const pp_anneal *a, pp_anneal_result *out)
{
	out->identity_s = a->identity_s;
	out->best_s = a->best_s;
	out->gain = a->best_s > 0 ? a->identity_s / a->best_s : 1;
	out->moves = a->moves;
	out->accepted = a->accepted;
	out->wall_s = a->wall_s;
	out->cpu_s = a->cpu_s;
}

const long long *pp_anneal_best(const pp_anneal *a)
{
	return a->best;
}

/* ------------------------------------------------------------ simulator */

pp_status pp_pipette_simulate(const pp_estimate *e, const pp_pipette_model *m, const long long *f,
                              pp_sim *sim, pp_sim_result *out, pp_error *err)
{
	const pp_plan *p = &e->plan;
	if (m->pp != p->pp || (long long)m->pp * m->tp * m->dp != e->gpus)
		return ppi_fail(err, "", "mapping",
		                "the model's pp x tp x dp is not the estimate's plan");
	pp_work *ws = ppi_malloc(sizeof *ws);
	pp_sim_stage *st = ppi_calloc((size_t)p->pp, sizeof *st);
	if (!ws || !st) {
		free(ws);
		free(st);
		return ppi_fail(err, "", "sim", "out of memory");
	}
	pp_work_init(ws);
	pp_scenario sc;
	ppi_scenario_init(&sc, &e->model, &e->system, &e->job, p, e->gpus);
	lat_ctx ctx = {m, NULL, NULL, 0};
	long long stride = (long long)m->tp * m->dp;
	pp_status rc = PP_OK;
	for (int x = 0; x < p->pp && !rc; x++) {
		/* the estimate's stage (the one adapter, estimate --sim's), then the
		 * mapping's sends and DP reduction in place of the stage cost's */
		pp_stage_time t;
		pp_sim_stage *s = &st[x];
		if ((rc = ppi_sim_stage_of(&sc, x, ws, &t, s, err)))
			break;
		/* Eq. 5 per hop: the slowest (y, z) pipeline's link to the next (previous)
		 * stage carries this stage's activation (gradient) */
		double bf = 0, bb = 0;
		for (long long yz = 0; yz < stride; yz++) {
			long long w = yz + stride * x;
			if (x + 1 < p->pp) {
				double tt = m->msg_pp_bytes / B(&ctx, fw(f, w), fw(f, w + stride));
				bf = tt > bf ? tt : bf;
			}
			if (x > 0) {
				double tt = m->msg_pp_bytes / B(&ctx, fw(f, w), fw(f, w - stride));
				bb = tt > bb ? tt : bb;
			}
		}
		if (x + 1 < p->pp)
			s->send_fwd_s = bf;
		if (x > 0)
			s->send_bwd_s = bb;
		/* Eq. 6 for this stage's DP groups */
		double di = 0, de = 0;
		for (int y = 0; y < m->tp; y++) {
			double a, b;
			dp_group_at(&ctx, f, x, y, &a, &b);
			di = a > di ? a : di;
			de = b > de ? b : de;
		}
		s->dp_s = m->dp > 1 ? di + de : t.dp_s;
		/* the placed DP time keeps the stage cost's share of gather */
		double gather = t.dp_s > 0 ? s->dp_s * (t.dp_gather_s / t.dp_s) : 0;
		s->dp_hide_s = pp_schedule_dp_hide_s(&e->system, p, s->dp_s, gather,
		                                     t.fwd_compute_s, t.bwd_compute_s);
	}
	if (!rc)
		rc = ppi_sim_orders_of(sim, p, err);
	if (!rc)
		rc = pp_sim_run(sim, st, e->time.other_s, out, err);
	free(ws);
	free(st);
	return rc;
}
