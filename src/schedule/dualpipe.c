/*
 * DualPipe and DualPipeV (DeepSeek-V3 §3.2.1, Table 2; deepseek-ai/DualPipe,
 * dualpipe/dualpipe.py and dualpipe/dualpipev.py): the per-rank order, the
 * closed form of the pipeline, residency, parameter copies and sends.
 *
 * Both run, on each rank, the same eight steps over two chunks ("phases"):
 * phase 0 the chunk its micro-batches enter first, phase 1 the other.  In
 * DualPipeV rank r (of p) holds virtual stages r (phase 0) and 2p - 1 - r
 * (phase 1) of one V; in DualPipe the p ranks form two mirrored halves,
 * half-rank h = min(r, p - 1 - r) of p/2, and each rank's two phases are the
 * two directions' copies of its stage: DualPipe is two DualPipeV's of p/2
 * ranks and m/2 micro-batches each, glued at the middle.  With h the
 * (half-)rank, n the ranks of the V and k its micro-batches:
 *
 *   1  2(n - h - 1) x F0                     warm-up of the entry chunk
 *   2  (h + 1) x F0 F1
 *   3  (n - h - 1) x B1 W1 F1                B split, W at once (zero bubble)
 *   4  (k - 2n + h + 1) x F0&B1 F1&B0        the steady state, overlapped pairs
 *                                            (the turning rank h = n - 1 runs
 *                                            its first F0, B1 apart)
 *   5  (n - h - 1) x B1 F1&B0
 *   6  (h + 1) x B1 B0                       the second half of these split
 *   7  (n - h - 1) x W B0                    B0 split, deferred W's first in
 *   8  (h + 1) x W                           first out
 *
 * Micro-batches are numbered per phase in order of their forwards (and
 * backwards), as the repository's chunk counters do.
 */
#include <stdlib.h>
#include <string.h>

#include "schedule/dualpipe.h"
#include "util/util.h"

/* ------------------------------------------------------------- validation */

pp_status pp_dualpipe_validate(int pp, long long m, pp_error *err)
{
	if (pp < 2 || pp % 2 != 0)
		return ppi_fail(err, "", "plan.pp",
		                "dualpipe needs an even pp of at least 2 (half the micro-batches "
		                "enter at each end), got pp %d",
		                pp);
	if (m % 2 != 0 || m < 2LL * pp)
		return ppi_fail(err, "", "plan.microbatches",
		                "dualpipe needs an even number of micro-batches of at least 2 x pp "
		                "(%d), got %lld",
		                2 * pp, m);
	return PP_OK;
}

pp_status pp_dualpipev_validate(int pp, long long m, pp_error *err)
{
	if (pp < 1)
		return ppi_fail(err, "", "plan.pp", "dualpipev needs pp of at least 1, got %d", pp);
	if (m < 2LL * pp)
		return ppi_fail(err, "", "plan.microbatches",
		                "dualpipev needs at least 2 x pp (%d) micro-batches, got %lld",
		                2 * pp, m);
	return PP_OK;
}

/* ------------------------------------------------------------- task orders */

/* One rank's list being built: per-phase counters of forwards and backwards,
 * the chunk each phase is on this rank, the FIFO of deferred W's. */
typedef struct order_gen {
	pp_task *t;
	size_t n;
	int chunk[2];
	int f[2], b[2];
	pp_task *wq; /* deferred weight gradients, first in first out */
	size_t wq_head, wq_tail;
} order_gen;

static void put(order_gen *g, pp_task_kind k, int mb, int chunk)
{
	g->t[g->n++] = (pp_task){k, mb, chunk};
}

static void fwd(order_gen *g, int ph)
{
	put(g, PP_TASK_F, g->f[ph]++, g->chunk[ph]);
}

/* A backward, split into B and a deferred W where `zb` (the repository's
 * enable_zb). */
static void bwd(order_gen *g, int ph, bool zb)
{
	int mb = g->b[ph]++;
	if (zb) {
		put(g, PP_TASK_BI, mb, g->chunk[ph]);
		g->wq[g->wq_tail++] = (pp_task){PP_TASK_W, mb, g->chunk[ph]};
	} else {
		put(g, PP_TASK_B, mb, g->chunk[ph]);
	}
}

static void wgt(order_gen *g)
{
	g->t[g->n++] = g->wq[g->wq_head++];
}

/* The forward of phase `pf` overlapped with the backward of phase `pb`. */
static void fwd_bwd(order_gen *g, int pf, int pb)
{
	put(g, PP_TASK_FB, g->f[pf]++, g->chunk[pf]);
	put(g, PP_TASK_B, g->b[pb]++, g->chunk[pb]);
}

/* The eight steps of rank h of an n-rank V over k micro-batches (file
 * comment), into g. */
static void v_order(order_gen *g, long long n, long long h, long long k)
{
	const bool turning = h == n - 1; /* the repository's last (middle) rank */
	for (long long i = 0; i < 2 * (n - h - 1); i++)
		fwd(g, 0);
	for (long long i = 0; i < h + 1; i++) {
		fwd(g, 0);
		fwd(g, 1);
	}
	for (long long i = 0; i < n - h - 1; i++) {
		bwd(g, 1, true);
		wgt(g);
		fwd(g, 1);
	}
	for (long long i = 0; i < k - 2 * n + h + 1; i++) {
		if (i == 0 && turning) {
			/* not overlapped "to further reduce bubble size" */
			fwd(g, 0);
			bwd(g, 1, false);
		} else {
			fwd_bwd(g, 0, 1);
		}
		fwd_bwd(g, 1, 0);
	}
	for (long long i = 0; i < n - h - 1; i++) {
		bwd(g, 1, false);
		fwd_bwd(g, 1, 0);
	}
	/* step 6: the last h + 1 of its 2(h + 1) backwards split */
	const long long s6 = h + 1;
	bool zb = false;
	for (long long i = 0; i < s6; i++) {
		if (i == s6 / 2 && h % 2 == 1)
			zb = true;
		bwd(g, 1, zb);
		if (i == s6 / 2 && h % 2 == 0)
			zb = true;
		bwd(g, 0, zb);
	}
	for (long long i = 0; i < n - h - 1; i++) {
		wgt(g);
		bwd(g, 0, true);
	}
	for (long long i = 0; i < h + 1; i++)
		wgt(g);
}

/* Tasks of one rank at most: 2k forwards, 2k backwards, 2n W's. */
static size_t max_tasks(long long n, long long k)
{
	return (size_t)(4 * k + 2 * n);
}

/* Set every rank's order: the V of n = p / halves ranks and k micro-batches
 * per phase, rank r at half-rank h with its phases on chunks chunk[]. */
static pp_status set_orders(pp_sim *sim, int p, bool dual, long long k, pp_error *err)
{
	const long long n = dual ? p / 2 : p;
	size_t cap = max_tasks(n, k);
	pp_task *buf = ppi_calloc(cap, sizeof *buf), *wq = ppi_calloc(cap, sizeof *wq);
	if (!buf || !wq) {
		free(buf);
		free(wq);
		return ppi_oom(err);
	}
	pp_status st = PP_OK;
	for (int r = 0; r < p && st == PP_OK; r++) {
		const bool second = dual && r >= p / 2; /* phase 0 is the up direction */
		order_gen g = {.t = buf, .wq = wq};
		g.chunk[0] = second ? 1 : 0;
		g.chunk[1] = second ? 0 : 1;
		v_order(&g, n, dual ? (r < p - 1 - r ? r : p - 1 - r) : r, k);
		st = pp_sim_set_order(sim, r, buf, g.n, err);
	}
	free(buf);
	free(wq);
	return st;
}

pp_status pp_dualpipe_sim_orders(pp_sim *sim, int pp, long long m, pp_error *err)
{
	PPI_TRY(pp_dualpipe_validate(pp, m, err));
	PPI_TRY(pp_sim_reset(sim, pp, m / 2, 2, err));
	int *stage = ppi_calloc((size_t)pp * 2, sizeof *stage);
	if (!stage)
		return ppi_oom(err);
	for (int r = 0; r < pp; r++) {
		stage[2 * r] = r;                   /* line 0, down: stage r */
		stage[2 * r + 1] = pp + pp - 1 - r; /* line 1, up: stage pp - 1 - r */
	}
	pp_status st = pp_sim_set_placement(sim, stage, 2, err);
	free(stage);
	PPI_TRY(st);
	return set_orders(sim, pp, true, m / 2, err);
}

pp_status pp_dualpipev_sim_orders(pp_sim *sim, int pp, long long m, pp_error *err)
{
	PPI_TRY(pp_dualpipev_validate(pp, m, err));
	PPI_TRY(pp_sim_reset(sim, pp, m, 2, err));
	int *stage = ppi_calloc((size_t)pp * 2, sizeof *stage);
	if (!stage)
		return ppi_oom(err);
	for (int r = 0; r < pp; r++) {
		stage[2 * r] = r;
		stage[2 * r + 1] = 2 * pp - 1 - r;
	}
	pp_status st = pp_sim_set_placement(sim, stage, 1, err);
	free(stage);
	PPI_TRY(st);
	return set_orders(sim, pp, false, m, err);
}

/* ------------------------------------------------------------- closed form */

/* An overlapped pair's time: fb_s, or F + B where none is given. */
static double pair_s(const pp_dualpipe_times *t)
{
	return t->fb_s > 0 ? t->fb_s : t->f_s + t->b_s;
}

/*
 * The pipeline of a V of n ranks and k micro-batches (k >= 2n) with alike
 * chunks, from the eight steps: 2k - n - 2 F&B pairs lie on the critical
 * path, and around them the warm-up and cool-down of whichever of four chains
 * is longest,
 *
 *   2nF + (n + 2)B + (n - 1) max(B_I - W, 0) + max(nF, (n - 1) B_I),
 *
 * B_I = B - W the input-gradient backward.  Derived from the simulator's
 * timings of the eight steps (piecewise linear in F, B, W, F&B: four
 * regimes) and equal to it within rounding for max(F, B) <= F&B <= F + B
 * (tests/unit/test_dualpipe.c, docs/dualpipe.md).
 */
static double v_pipeline_s(double n, double k, const pp_dualpipe_times *t)
{
	const double F = t->f_s, B = t->b_s, W = t->w_s, BI = B - W, FB = pair_s(t);
	double a = BI - W > 0 ? (n - 1) * (BI - W) : 0;
	double c = n * F > (n - 1) * BI ? n * F : (n - 1) * BI;
	return (2 * k - n - 2) * FB + 2 * n * F + (n + 2) * B + a + c;
}

/* The work of the turning rank (the V's last, DualPipe's middle two): 2k -
 * 2n - 1 pairs and 2n + 1 forwards and backwards alone, the rank with the
 * most pairs; the bubble is the pipeline less this. */
static double v_work_s(double n, double k, const pp_dualpipe_times *t)
{
	return (2 * k - 2 * n - 1) * pair_s(t) + (2 * n + 1) * (t->f_s + t->b_s);
}

double pp_dualpipe_pipeline_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return v_pipeline_s(pp / 2, (double)(m / 2), t);
}

double pp_dualpipev_pipeline_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return v_pipeline_s(pp, (double)m, t);
}

double pp_dualpipe_bubble_s(int pp, long long m, const pp_dualpipe_times *t)
{
	double n = pp / 2, k = (double)(m / 2);
	return v_pipeline_s(n, k, t) - v_work_s(n, k, t);
}

double pp_dualpipev_bubble_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return v_pipeline_s(pp, (double)m, t) - v_work_s(pp, (double)m, t);
}

/* The turning rank's work with the pairs at their fastest, max(F, B): under
 * T for every F&B >= max(F, B), since T - work >= (n - 1)(F&B - B + F). */
static double v_floor_s(double n, double k, const pp_dualpipe_times *t)
{
	pp_dualpipe_times fast = *t;
	fast.fb_s = t->f_s > t->b_s ? t->f_s : t->b_s;
	return v_work_s(n, k, &fast);
}

double pp_dualpipe_floor_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return v_floor_s(pp / 2, (double)(m / 2), t);
}

double pp_dualpipev_floor_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return v_floor_s(pp, (double)m, t);
}

double pp_dualpipe_table2_bubble_s(int stages, const pp_dualpipe_times *t)
{
	return (stages / 2.0 - 1) * (pair_s(t) + t->b_s - 3 * t->w_s);
}

double pp_dualpipe_pair_s(const pp_stage_time *st, double chunks)
{
	const double f = st->fwd_s / chunks, b = st->bwd_s / chunks;
	if (st->si_speedup > 0)
		return (f + b) / st->si_speedup;
	const double c = (st->fwd_compute_s + st->bwd_compute_s) / chunks, e = st->ep_s / chunks;
	double rest = f + b - c - e; /* TP, CP, ZeRO-3: not overlapped */
	double pair = (c > e ? c : e) + (rest > 0 ? rest : 0);
	if (pair < f)
		pair = f;
	if (pair < b)
		pair = b;
	return pair;
}

/* The rank whose chunks are slowest paces the pipeline: the closed form of
 * alike chunks at its times (exact for alike stages). */
static void pipeline_part(const pp_plan *plan, const pp_stage_time *st, bool dual,
                          pp_iteration *out)
{
	const double per = dual ? 1 : 2; /* chunks of a micro-batch on one rank */
	int b = 0;
	double slow = -1;
	for (int i = 0; i < plan->pp; i++) {
		double t = st[i].fwd_s + st[i].bwd_s + st[i].pp_s;
		if (t > slow) {
			slow = t;
			b = i;
		}
	}
	const pp_stage_time *k = &st[b];
	pp_dualpipe_times t = {k->fwd_s / per, k->bwd_s / per, k->wgrad_compute_s / per,
	                       pp_dualpipe_pair_s(k, per)};
	const double n = dual ? plan->pp / 2 : plan->pp;
	const double kk = (double)(dual ? plan->microbatches / 2 : plan->microbatches);
	const double T = v_pipeline_s(n, kk, &t), work = v_work_s(n, kk, &t);
	/* The turning rank runs 2k chunk passes (a forward and a backward each),
	 * 2k - 2n - 1 of them as pairs.  Where the pairs hide the all-to-all,
	 * its compute, TP, CP and ZeRO-3 time are in full and what is left of its
	 * work is the exposed all-to-all; under a given overlap factor every
	 * part shrinks alike. */
	const double passes = 2 * kk / per; /* in micro-batches' worth of st */
	const double scale = k->si_speedup > 0 ? work / (passes * (k->fwd_s + k->bwd_s)) : 1;
	out->bottleneck_stage = b;
	out->compute_s = scale * passes * (k->fwd_compute_s + k->bwd_compute_s);
	out->tp_s = scale * passes * k->tp_s;
	out->cp_s = scale * passes * k->cp_s;
	out->zero3_s = scale * passes * k->zero3_s;
	double ep = work - out->compute_s - out->tp_s - out->cp_s - out->zero3_s;
	out->ep_s = ep > 0 ? ep : 0;
	out->pp_s = 2 * kk * k->pp_s; /* a pass's sends, on the critical path as 1F1B's */
	out->bubble_s = T - work > 0 ? T - work : 0;
}

void pp_dualpipe_iteration_part(const pp_plan *plan, const pp_stage_time *st, pp_iteration *out)
{
	pipeline_part(plan, st, true, out);
}

void pp_dualpipev_iteration_part(const pp_plan *plan, const pp_stage_time *st, pp_iteration *out)
{
	pipeline_part(plan, st, false, out);
}

/* ------------------------------------------------ residency, copies, sends */

double pp_dualpipe_inflight(int pp, long long m, int rank)
{
	(void)m;
	(void)rank;
	return pp + 1.0; /* chunks, each one copy's stage: Table 2's PP + 1 */
}

double pp_dualpipev_inflight(int pp, long long m, int rank)
{
	(void)m;
	(void)rank;
	return (2.0 * pp + 1) / 2; /* 2 pp + 1 chunks of half the rank's layers */
}

double pp_dualpipe_param_copies(void)
{
	return 2;
}

double pp_dualpipev_param_copies(void)
{
	return 1;
}

double pp_dualpipe_sends_per_microbatch(int pp, int rank)
{
	if (pp < 2)
		return 0;
	/* a micro-batch of either direction crosses a rank once: an activation
	 * out and a gradient back, but a direction's first and last stage
	 * (ranks 0 and pp - 1) send only one of them: half the micro-batches
	 * each way */
	return rank == 0 || rank == pp - 1 ? 1 : 2;
}

double pp_dualpipev_sends_per_microbatch(int pp, int rank)
{
	if (pp < 2)
		return 0;
	/* twice through each rank; the V's ends turn on the rank itself (rank pp
	 * - 1) or end there (rank 0) */
	return rank == 0 || rank == pp - 1 ? 2 : 4;
}
