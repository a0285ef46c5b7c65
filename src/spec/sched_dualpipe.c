/*
 * DualPipe (DeepSeek-V3 §3.2.1, Table 2; deepseek-ai/DualPipe,
 * dualpipe/dualpipe.py), docs/dualpipe.md: p ranks (even), rank r holding
 * stage r of the "down" copy of the model and stage p - 1 - r of the "up"
 * copy (2x parameters, gradients and optimizer states); half the m
 * micro-batches enter at rank 0, half at rank p - 1, and the forward of one
 * micro-batch runs overlapped with the backward of another (an F&B pair) so
 * that one's expert all-to-all hides under the other's compute.  The V of
 * DualPipeV (sched_dualpipev.c) is the same eight steps on one copy:
 * DualPipe is two V's of p/2 ranks and m/2 micro-batches each, glued at the
 * middle.  This file holds what both share (the order, the closed form).
 *
 * With h the (half-)rank, n the ranks of the V and k its micro-batches per
 * phase (phase 0 the chunk a rank's micro-batches enter first), each rank
 * runs:
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
#include <math.h>
#include <stdlib.h>

#include "sched_int.h"
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

static pp_status validate(const pp_plan *p, pp_error *err)
{
	PPI_TRY(ppi_sched_flat_validate(p, err));
	/* the micro-batch count is 0 until resolve knows it (schedule_type.h) */
	long long m = p->microbatches > 0 ? p->microbatches : 2LL * p->pp;
	return pp_dualpipe_validate(p->pp, m, err);
}

/* ------------------------------------------------------------- task orders */

typedef struct dp_w {
	long long mb;
	int chunk;
} dp_w;

/* One rank's list being pushed: per-phase counters of forwards and
 * backwards, the chunk each phase is on this rank, the FIFO of deferred W's. */
typedef struct order_gen {
	pp_sched_push push;
	void *ctx;
	int rank;
	bool ok;
	int chunk[2];
	long long f[2], b[2];
	dp_w *wq;
	size_t wq_head, wq_tail, wq_cap;
} order_gen;

static void put(order_gen *g, pp_task_kind k, long long mb, int chunk)
{
	if (g->ok)
		g->ok = g->push(g->ctx, g->rank, k, mb, chunk);
}

static void fwd(order_gen *g, int ph)
{
	put(g, PP_TASK_F, g->f[ph]++, g->chunk[ph]);
}

/* A backward, split into B and a deferred W where `zb` (the repository's
 * enable_zb). */
static void bwd(order_gen *g, int ph, bool zb)
{
	long long mb = g->b[ph]++;
	if (!zb) {
		put(g, PP_TASK_B, mb, g->chunk[ph]);
		return;
	}
	put(g, PP_TASK_BI, mb, g->chunk[ph]);
	if (g->wq_tail < g->wq_cap)
		g->wq[g->wq_tail++] = (dp_w){mb, g->chunk[ph]};
	else
		g->ok = false;
}

static void wgt(order_gen *g)
{
	if (g->wq_head < g->wq_tail) {
		dp_w w = g->wq[g->wq_head++];
		put(g, PP_TASK_W, w.mb, w.chunk);
	} else {
		g->ok = false;
	}
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

bool ppi_dp_order(int p, bool dual, long long k, int r, pp_sched_push push, void *ctx)
{
	const long long n = dual ? p / 2 : p;
	/* the deferred W's are the split backwards, at most 2 n + 2 at once */
	size_t cap = (size_t)(2 * n + 4);
	order_gen g = {.push = push, .ctx = ctx, .rank = r, .ok = true, .wq_cap = cap};
	g.wq = ppi_calloc(cap, sizeof *g.wq);
	if (!g.wq)
		return false;
	const bool second = dual && r >= p / 2; /* phase 0 is the up direction */
	g.chunk[0] = second ? 1 : 0;
	g.chunk[1] = second ? 0 : 1;
	v_order(&g, n, dual ? (r < p - 1 - r ? r : p - 1 - r) : r, k);
	free(g.wq);
	return g.ok;
}

static pp_status sim_shape(int p, long long m, int v, int *chunks, pp_error *err)
{
	if (v != 1)
		return ppi_fail(err, "", "plan.vp", "vp %d: dualpipe has no virtual stages", v);
	PPI_TRY(pp_dualpipe_validate(p, m, err));
	*chunks = 2; /* the simulator runs m / 2 micro-batches per copy (PP_FOLD_DUAL) */
	return PP_OK;
}

static bool order(int p, long long m, int v, int r, pp_sched_push push, void *ctx)
{
	(void)v;
	return ppi_dp_order(p, true, m / 2, r, push, ctx);
}

/* ------------------------------------------------------------- closed form */

/* An overlapped pair's time: fb_s, or F + B where none is given. */
static double pair_of(const pp_dualpipe_times *t)
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
 * B_I = B - W the input-gradient backward.  Where a pair is shorter than a
 * backward alone (F&B < B: the pair hides the backward's own all-to-all
 * beside its weight gradients, pp_dualpipe_pair_s), the backwards that run
 * alone take the place of pairs on the critical path: 2n - 2 of them on
 * each of those chains, and a fifth chain, 3n - 4 of them in place of a
 * forward,
 *
 *   (2n - 2) max(B - F&B, 0) added to the above, or
 *   2nF + (n + 2)B + (n - 1) max(B_I - W, 0) + (n - 1)F + (3n - 4)(B - F&B).
 *
 * Derived from the simulator's timings of the eight steps: the time is the
 * longest of linear chains with whole coefficients, read off as its
 * gradients in (F, B, W, F&B) at spread-out points; the result equals the
 * simulator within rounding for max(F, B - W) <= F&B <= F + B, DualPipe and
 * DualPipeV (tests/unit/test_dualpipe.c, docs/dualpipe.md).
 */
double ppi_dp_v_pipeline_s(double n, double k, const pp_dualpipe_times *t)
{
	const double F = t->f_s, B = t->b_s, W = t->w_s, BI = B - W, FB = pair_of(t);
	double a = BI - W > 0 ? (n - 1) * (BI - W) : 0;
	double c = n * F > (n - 1) * BI ? n * F : (n - 1) * BI;
	double ends = 2 * n * F + (n + 2) * B + a;
	double lone = B - FB > 0 ? B - FB : 0; /* a backward alone over a pair */
	double T = (2 * k - n - 2) * FB + ends + c + (2 * n - 2) * lone;
	double fifth = (2 * k - n - 2) * FB + ends + (n - 1) * F + (3 * n - 4) * (B - FB);
	return fifth > T ? fifth : T;
}

/* The work of the turning rank (the V's last, DualPipe's middle two): 2k -
 * 2n - 1 pairs and 2n + 1 forwards and backwards alone, the rank with the
 * most pairs; the bubble is the pipeline less this. */
double ppi_dp_v_work_s(double n, double k, const pp_dualpipe_times *t)
{
	return (2 * k - 2 * n - 1) * pair_of(t) + (2 * n + 1) * (t->f_s + t->b_s);
}

/* The turning rank's work with the pairs at their fastest, max(F, B - W)
 * (pp_dualpipe_pair_s's chain): under T for every F&B it can return, since
 * the rank runs its work one task after another (T >= work) and the work
 * grows with F&B. */
double ppi_dp_v_floor_s(double n, double k, const pp_dualpipe_times *t)
{
	pp_dualpipe_times fast = *t;
	double bi = t->b_s - t->w_s;
	fast.fb_s = t->f_s > bi ? t->f_s : bi;
	return ppi_dp_v_work_s(n, k, &fast);
}

double pp_dualpipe_pipeline_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return ppi_dp_v_pipeline_s(pp / 2, (double)(m / 2), t);
}

double pp_dualpipe_bubble_s(int pp, long long m, const pp_dualpipe_times *t)
{
	double n = pp / 2, k = (double)(m / 2);
	return ppi_dp_v_pipeline_s(n, k, t) - ppi_dp_v_work_s(n, k, t);
}

double pp_dualpipe_floor_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return ppi_dp_v_floor_s(pp / 2, (double)(m / 2), t);
}

double pp_dualpipe_table2_bubble_s(int stages, const pp_dualpipe_times *t)
{
	return (stages / 2.0 - 1) * (pair_of(t) + t->b_s - 3 * t->w_s);
}

double pp_dualpipe_pair_s(const pp_stage_time *st, double chunks)
{
	const double f = st->fwd_s / chunks, b = st->bwd_s / chunks;
	if (st->si_speedup > 0)
		return (f + b) / st->si_speedup;
	/* DeepSeek-V3's F&B pair (arXiv 2412.19437 Fig. 4) interleaves the two
	 * chunks' attention, dispatch, MLP and combine so that each all-to-all
	 * runs beside the other chunk's compute, the backward's dispatch beside
	 * its own weight gradients: the pairing phase by phase of Megatron-Core's
	 * combined 1F1B (pp_stage_time.ep_pair_hidden_s, each hidden all-to-all
	 * less its visible share).  TP, CP and ZeRO-3 are not overlapped.  A pair
	 * lasts at least each chunk's own chain: the forward, and the backward
	 * less the weight gradients that may run beside its all-to-all. */
	double pair = f + b - st->ep_pair_hidden_s / chunks;
	double bi = b - st->wgrad_compute_s / chunks, chain = bi > f ? bi : f;
	return pair > chain ? pair : chain;
}

/* The rank whose stage is slowest paces the pipeline. */
static int slowest(const pp_plan *plan, const pp_stage_time *st)
{
	int b = 0;
	double slow = -1;
	for (int i = 0; i < plan->pp; i++) {
		double t = st[i].fwd_s + st[i].bwd_s + st[i].pp_s;
		if (t > slow) {
			slow = t;
			b = i;
		}
	}
	return b;
}

/* The chunk times of stage k: `per` chunks of a micro-batch on one rank. */
static pp_dualpipe_times chunk_times(const pp_stage_time *k, double per)
{
	return (pp_dualpipe_times){k->fwd_s / per, k->bwd_s / per, k->wgrad_compute_s / per,
	                           pp_dualpipe_pair_s(k, per)};
}

void ppi_dp_pipeline_part(const pp_plan *plan, const pp_stage_time *st, bool dual,
                          pp_iteration *out)
{
	const double per = dual ? 1 : 2; /* chunks of a micro-batch on one rank */
	const int b = slowest(plan, st);
	const pp_stage_time *k = &st[b];
	pp_dualpipe_times t = chunk_times(k, per);
	const double n = dual ? plan->pp / 2 : plan->pp;
	const double kk = (double)(dual ? plan->microbatches / 2 : plan->microbatches);
	const double T = ppi_dp_v_pipeline_s(n, kk, &t), work = ppi_dp_v_work_s(n, kk, &t);
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
	/* The sends: DualPipe posts them asynchronously and waits for an input
	 * only where the next chunk needs it (dualpipe.py's WeightGradStore
	 * and comm queues), so the steady state hides them behind the pairs
	 * unless no stage's slack can (1F1B's cycles of windows, sched_int.h,
	 * per micro-batch on every rank); the first micro-batch's trip to the
	 * turning rank and back, 2 (n - 1) links, carries them in full (the
	 * simulator's, on a V with one stage slower than the rest). */
	double exposed = ppi_sched_window_period_s(plan->pp, st, false) - (k->fwd_s + k->bwd_s);
	out->pp_s = 2 * (n - 1) * k->pp_s;
	if (exposed > 0)
		out->pp_s += (double)plan->microbatches * exposed;
	/* The warm-up and cool-down are the other ranks' chunks, as 1F1B's
	 * fill is the other stages' (the bottleneck's own passes are its
	 * work): the bubble of the V at their mean chunk times (the same for
	 * alike stages, the simulator's within 1% on a V with its ends
	 * heavier). */
	out->bubble_s = T - work > 0 ? T - work : 0;
	if (plan->pp > 1) {
		pp_dualpipe_times o = {0, 0, 0, 0};
		for (int i = 0; i < plan->pp; i++) {
			if (i == b)
				continue;
			pp_dualpipe_times c = chunk_times(&st[i], per);
			o.f_s += c.f_s / (plan->pp - 1);
			o.b_s += c.b_s / (plan->pp - 1);
			o.w_s += c.w_s / (plan->pp - 1);
			o.fb_s += pair_of(&c) / (plan->pp - 1);
		}
		double fill = ppi_dp_v_pipeline_s(n, kk, &o) - ppi_dp_v_work_s(n, kk, &o);
		out->bubble_s = fill > 0 ? fill : 0;
	}
}

void pp_dualpipe_iteration_part(const pp_plan *plan, const pp_stage_time *st, pp_iteration *out)
{
	ppi_dp_pipeline_part(plan, st, true, out);
}

/* The type's F&B overlap factor for the simulator's pairs, and its chunk
 * scale: the cost's stage is one copy's stage, which the simulator's v = 2
 * chunks would halve. */
void ppi_dp_sim_stage(const pp_plan *p, const pp_stage_time *t, double per, double *scale,
                      double *pair_speedup)
{
	(void)p;
	pp_dualpipe_times c = chunk_times(t, per);
	*scale = 2 / per;
	*pair_speedup = c.fb_s > 0 ? (c.f_s + c.b_s) / c.fb_s : 0;
}

static void sim_stage(const pp_plan *p, const pp_stage_time *t, double *scale, double *pair_speedup)
{
	ppi_dp_sim_stage(p, t, 1, scale, pair_speedup);
}

/* Table 2 against 1F1B's (PP - 1)(F + B): with F = B = 2W alike it is
 * (PP/2 - 1)(F&B + B - 3W), the fraction of m (F + B) below. */
static double bubble_fraction(int p, long long m, int v)
{
	(void)v;
	/* F = B = 1, W = 1/2, F&B = F + B: (p/2 - 1)(2 + 1 - 3/2) over m (F + B) */
	return (p / 2.0 - 1) * 1.5 / (2.0 * (double)m);
}

/* No floor below the steady state: DualPipe's pairs run under m (F + B) of
 * the slowest stage, which is what the linear floor assumes; -INFINITY says
 * "no bound" (estimate.c's bound() then gives 0, which cuts nothing). */
static double floor_bubble_s(const pp_plan *p, double others_s, double send_s)
{
	(void)p;
	(void)others_s;
	(void)send_s;
	return -INFINITY;
}

/* ------------------------------------------------ placement, residency, sends */

static int chunks(const pp_plan *p)
{
	(void)p;
	return 2;
}

/* Chunk 0: the down copy's stage r (line 0); chunk 1: the up copy's stage p
 * - 1 - r, virtual stage p + (p - 1 - r) of line 1. */
static int virtual_stage(const pp_plan *p, int rank, int chunk)
{
	return chunk == 0 ? rank : 2 * p->pp - 1 - rank;
}

double pp_dualpipe_inflight(int pp, long long m, int rank)
{
	(void)m;
	(void)rank;
	return pp + 1.0; /* chunks, each one copy's stage: Table 2's PP + 1 */
}

static double inflight(const pp_plan *p, int stage)
{
	return pp_dualpipe_inflight(p->pp, p->microbatches, stage);
}

double pp_dualpipe_param_copies(void)
{
	return 2;
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

/* One activation per micro-batch, as 1F1B: half of them down, half up. */
static double sends(const pp_plan *p)
{
	(void)p;
	return 1;
}

static int links(const pp_plan *p, int stage, pp_sched_link out[PP_SCHED_MAX_LINKS])
{
	out[0].peer = stage + 1 < p->pp ? stage + 1 : stage;
	out[0].count = stage + 1 < p->pp ? 0.5 : 0;
	out[1].peer = stage > 0 ? stage - 1 : stage;
	out[1].count = stage > 0 ? 0.5 : 0;
	return 2;
}

const pp_schedule_type pp_sched_dualpipe = {
    .id = PP_SCHED_DUALPIPE,
    .name = "dualpipe",
    .description = "DeepSeek's DualPipe: two model copies, micro-batches from both ends, "
                   "F&B pairs hide the all-to-all",
    .uses_vp = false,
    .virtual_form = PP_SCHED_DUALPIPE,
    .flat_form = PP_SCHED_DUALPIPE,
    .validate = validate,
    .fold = PP_FOLD_DUAL,
    .chunks = chunks,
    .virtual_stage = virtual_stage,
    .head_stage = ppi_sched_linear_head,
    .param_copies = 2,
    .inflight = inflight,
    .head_held = ppi_sched_one_held,
    .sends_per_microbatch = sends,
    .links = links,
    .si = false,
    .split_wgrad = true,
    .iteration = pp_dualpipe_iteration_part,
    .bubble_fraction = bubble_fraction,
    .floor_bubble_s = floor_bubble_s,
    .sim_shape = sim_shape,
    .sim_order = order,
    .sim_stage = sim_stage,
    .megatron = PP_MEGATRON_NONE,
    .torchtitan = NULL,
    .search_default = false,
    .at_pp1 = false,
};
