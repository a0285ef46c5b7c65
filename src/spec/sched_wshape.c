/*
 * DHelix's W-shaped pipeline (seed 002 §4.1, docs/dhelix.md): the model
 * folded into a U, rank r holding virtual stages r and 2p - 1 - r (the head
 * next to the embedding on rank 0); wave w carries the forward of
 * micro-batch w and the backward of w - p, co-executed as one SI block of
 * (f + b) / s.  Each micro-batch makes two down-up trips: twice 1F1B's
 * pipeline sends ("doubling the Send/Recv communication volume from the
 * original 1F1B scheduling", §4.1).
 */
#include "sched_int.h"
#include "util/util.h"

static int chunks(const pp_plan *p)
{
	(void)p;
	return 2;
}

static int virtual_stage(const pp_plan *p, int rank, int chunk)
{
	return chunk == 0 ? rank : 2 * p->pp - 1 - rank;
}

static int head_stage(const pp_plan *p)
{
	(void)p;
	return 0;
}

/* Counted layer by layer: held_layers(); this is the micro-batch count. */
static double inflight(const pp_plan *p, int stage)
{
	(void)stage;
	double m = (double)p->microbatches, P = p->pp;
	return P < m ? P : m;
}

/* Micro-batches of [lo, hi] that exist (0..m-1). */
static double mb_count(long long lo, long long hi, long long m)
{
	if (lo < 0)
		lo = 0;
	if (hi > m - 1)
		hi = m - 1;
	return hi >= lo ? (double)(hi - lo + 1) : 0.0;
}

/*
 * Layer x micro-batch activation sets that pipeline rank r of P holds under
 * DHelix's W (the task order below), its n layers folded into chunk 0 (the
 * first c0 = floor(n/2) layers of the rank, virtual stage r) and chunk 1
 * (c1 = n - c0, virtual stage 2P - 1 - r).  Wave y runs the forward of
 * micro-batch y and the backward of y - P: chunk 0 at slot 2y + r (F chunk 0
 * with B chunk 1), chunk 1 at slot 2y + 2P - 1 - r (F chunk 1 with B chunk
 * 0), so chunk 0 of a micro-batch lives from slot 2y + r to 2y + 4P - 1 - r
 * and chunk 1 from 2y + 2P - 1 - r to 2y + 2P + r.  Counted at the end of
 * every block (between blocks nothing is half-built): *any_out is the most
 * at any block end (the steady state's (2P - r) c0 + r c1 and (2P - r - 1)
 * c0 + (r + 1) c1), *turn_out the most at the end of a chunk-1 forward,
 * where rank 0 has just run the head (its logits are alive until the next
 * block's backward starts with the loss).  Putting the odd layer in chunk 1
 * makes rank 0's most P n - P + 1 layers instead of P n + P with it in
 * chunk 0.  O(P), allocates nothing.
 */
static void held_layers(const pp_plan *p, int r, int n, double *any_out, double *turn_out)
{
	int P = p->pp;
	long long m = p->microbatches;
	double c0 = (double)(n / 2), c1 = (double)(n - n / 2);
	/* After wave 2P every block end repeats until the forwards run out. */
	long long end = m + P < 4LL * P + 2 ? m + P : 4LL * P + 2;
	double any = 0, turn = 0;
	for (long long y = 0; y < end; y++) {
		double e0 =
		    mb_count(y - 2 * P + r + 1, y, m) * c0 + mb_count(y - P + 1, y - P + r, m) * c1;
		double e1 = mb_count(y - P + 1, y + P - 1 - r, m) * c0 + mb_count(y - r, y, m) * c1;
		if (e0 > any)
			any = e0;
		if (e1 > any)
			any = e1;
		if (y < m && e1 > turn)
			turn = e1;
	}
	*any_out = any;
	*turn_out = turn;
}

/* The U: each micro-batch goes up (chunk 0) and down again (chunk 1). */
static double sends(const pp_plan *p)
{
	(void)p;
	return 2;
}

/* Chunk 0's activations to r + 1, chunk 1's to r - 1 (none past the ends:
 * the turn is on rank p - 1, the head on rank 0). */
static int links(const pp_plan *p, int stage, pp_sched_link out[PP_SCHED_MAX_LINKS])
{
	out[0].peer = stage + 1 < p->pp ? stage + 1 : stage;
	out[0].count = stage + 1 < p->pp ? 1 : 0;
	out[1].peer = stage > 0 ? stage - 1 : stage;
	out[1].count = stage > 0 ? 1 : 0;
	return 2;
}

/* With m > p micro-batches, m - p SI blocks of (f + b) / s and p forwards
 * and backwards alone on the bottleneck, and a fill and drain of the other
 * stages' SI blocks, (p - 1)(f + b) / s for alike stages: ((m - 1)/s +
 * p)(f + b) in all, the bubble ratio (p - 1)/(m - 1 + p s) (seed 002 §4.1).
 * With m <= p there are no SI blocks: p (f + b) + (m - 1) b.  Both equal the
 * simulator for alike stages with s <= (f + b)/max(f, b)
 * (tests/unit/test_wshape.c).  The sends: the fill and drain carry the
 * first micro-batch's two trips, 2 pp_s on each other stage; the steady
 * state only what 1F1B's cycles of windows (sched_int.h) cannot hide, per
 * micro-batch after the first: (p - 1)/p pp_s each on alike stages, as the
 * simulator's waves give it. */
static void iteration(const pp_plan *p, const pp_stage_time *st, pp_iteration *out)
{
	double m = (double)p->microbatches, P = p->pp;
	int b = 0;
	double slow = -1, sum_si = 0, sum = 0, sends = 0;
	for (int i = 0; i < p->pp; i++) {
		double si = st[i].si_speedup > 0 ? st[i].si_speedup : 1;
		double t = st[i].fwd_s + st[i].bwd_s;
		sum_si += t / si;
		sum += t;
		sends += 2 * st[i].pp_s;
		if (t + 2 * st[i].pp_s > slow) {
			slow = t + 2 * st[i].pp_s;
			b = i;
		}
	}
	const pp_stage_time *k = &st[b];
	double s = k->si_speedup > 0 ? k->si_speedup : 1;
	double n = m > P ? (m - P) / s + P : m; /* micro-batches' worth on the bottleneck */
	double tb = k->fwd_s + k->bwd_s;
	ppi_sched_pace(st, b, n, out);
	if (p->pp > 1) {
		double period = ppi_sched_window_period_s(p->pp, st, true) - tb / s;
		out->pp_s = period > 0 ? (m - 1) * period : 0;
		double fill = sum_si - tb / s + sends - 2 * k->pp_s;
		if (m <= P) /* no SI: the other stages' time, less the forwards that overlap */
			fill = (sum - tb) + sends - 2 * k->pp_s - (m - 1) * k->fwd_s;
		out->bubble_s = fill > 0 ? fill : 0;
	}
}

double pp_wshape_bubble_fraction(int p, long long m, double s)
{
	return (p - 1) / ((double)m - 1 + p * s);
}

static double bubble_fraction(int p, long long m, int v)
{
	(void)v;
	return pp_wshape_bubble_fraction(p, m, 1);
}

static pp_status sim_shape(int p, long long m, int v, int *n, pp_error *err)
{
	(void)p;
	(void)m;
	if (v != 1)
		return ppi_fail(err, "", "plan.vp",
		                "vp %d needs the interleaved schedule, not wshape", v);
	*n = 2;
	return PP_OK;
}

/* Waves in slot order, SI blocks where a wave has both a forward and a
 * backward: rank r runs a wave's chunk 0 at slot 2w + r and its chunk 1 at
 * slot 2w + 2p - 1 - r. */
static bool order(int p, long long m, int v, int r, pp_sched_push push, void *ctx)
{
	(void)v;
	const long long waves = m + p;
	long long w0 = 0, w1 = 0; /* next wave for chunk 0 and chunk 1 */
	bool ok = true;
	while (ok && (w0 < waves || w1 < waves)) {
		long long s0 = w0 < waves ? 2 * w0 + r : -1;
		long long s1 = w1 < waves ? 2 * w1 + 2LL * p - 1 - r : -1;
		int c;
		long long w;
		if (s1 < 0 || (s0 >= 0 && s0 < s1)) {
			c = 0;
			w = w0++;
		} else {
			c = 1;
			w = w1++;
		}
		bool f = w < m, b = w >= p;
		if (f && b)
			ok =
			    push(ctx, r, PP_TASK_SI, w, c) && push(ctx, r, PP_TASK_B, w - p, 1 - c);
		else if (f)
			ok = push(ctx, r, PP_TASK_F, w, c);
		else if (b)
			ok = push(ctx, r, PP_TASK_B, w - p, 1 - c);
	}
	return ok;
}

static const char *const aliases[] = {"dhelix", NULL};

const pp_schedule_type pp_sched_wshape = {
    .id = PP_SCHED_WSHAPE,
    .name = "wshape",
    .aliases = aliases,
    .description = "DHelix's W: the model folded into a U, two strands co-executed (SI)",
    .uses_vp = false,
    .virtual_form = PP_SCHED_WSHAPE,
    .flat_form = PP_SCHED_WSHAPE,
    .validate = ppi_sched_flat_validate,
    .fold = PP_FOLD_U,
    .chunks = chunks,
    .virtual_stage = virtual_stage,
    .head_stage = head_stage,
    .param_copies = 1,
    .inflight = inflight,
    .held_layers = held_layers,
    .head_held = ppi_sched_one_held,
    .sends_per_microbatch = sends,
    .links = links,
    .si = true,
    .iteration = iteration,
    .bubble_fraction = bubble_fraction,
    .floor_bubble_s = NULL,
    .sim_shape = sim_shape,
    .sim_order = order,
    .megatron = PP_MEGATRON_DEFAULT,
    .torchtitan = NULL,
    .search_default = false,
    .at_pp1 = true,
};
