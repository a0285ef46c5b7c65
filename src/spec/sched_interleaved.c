/*
 * Interleaved 1F1B (Megatron-LM's virtual pipeline): each rank holds vp
 * model chunks, rank r's chunk c being virtual stage c p + r; the bubble
 * shrinks by vp, the sends grow by vp.
 */
#include "sched_int.h"
#include "util/util.h"

static pp_status validate(const pp_plan *p, pp_error *err)
{
	if (p->vp < 2)
		return ppi_fail(err, "", "plan.vp",
		                "the interleaved schedule needs vp >= 2, got %d", p->vp);
	if (p->pp < 2)
		return ppi_fail(err, "", "plan.pp",
		                "the interleaved schedule needs pp >= 2, got %d", p->pp);
	return PP_OK;
}

/* Megatron warm-up: 2(p-r-1) + (v-1)p chunk forwards, +1 in steady state;
 * each chunk is 1/v of the rank's layers. */
static double inflight(const pp_plan *p, int stage)
{
	double m = (double)p->microbatches, P = p->pp;
	double chunks = 2.0 * (P - stage - 1) + (p->vp - 1.0) * P + 1.0;
	double cap = m * p->vp;
	return (chunks < cap ? chunks : cap) / p->vp;
}

/*
 * The period per micro-batch with the sends: Megatron posts each chunk's
 * send before the next chunk's compute (overlap_p2p_comm: batched
 * isend/irecv, waited for only where the input is needed), and its warm-up
 * runs (v - 1) p + 2 (p - r - 1) chunk forwards ahead, so a send waits on
 * nothing but the chain of its own micro-batch.  The cycles that bound the
 * steady state are the rings of one group of p micro-batches through all p
 * v chunks: its backwards (or forwards) and their p v - 1 sends one way,
 * every rank's chunk once per step: sum_i bwd_s / p + (p v - 1) / p of one
 * transfer (pp_s / 2).  The simulator's slope in m is within 1.5% of this
 * on alike stages, and equal to the bottleneck's fwd_s + bwd_s while a
 * transfer is shorter than a chunk's forward.
 */
static double period_s(const pp_plan *p, const pp_stage_time *st)
{
	double P = p->pp, v = p->vp, lo = 0, f = 0, b = 0, send = 0;
	for (int i = 0; i < p->pp; i++) {
		double t = st[i].fwd_s + st[i].bwd_s;
		lo = t > lo ? t : lo;
		f += st[i].fwd_s;
		b += st[i].bwd_s;
		send += st[i].pp_s / 2;
	}
	double ring = ((f > b ? f : b) + (P * v - 1) * send / P) / P;
	return ring > lo ? ring : lo;
}

static void iteration(const pp_plan *p, const pp_stage_time *st, pp_iteration *out)
{
	double v = p->vp, m = (double)p->microbatches, sum_w, sends;
	double fill = ppi_sched_linear_steady(p, st, v, out, &sum_w, &sends);
	if (p->pp > 1) {
		const pp_stage_time *k = &st[out->bottleneck_stage];
		double P = p->pp;
		ppi_sched_linear_exposed_sends(p, st, period_s(p, st), out);
		/* The fill and drain: the other stages' chunks once, and the
		 * first micro-batch's p v - 1 sends through every chunk (the
		 * steady state hides the rest), each at the line hops' mean (v
		 * passes over the p - 1 hops and v - 1 wraps: exact where the
		 * hops are alike; a partly placed pipeline's wrap leaves the
		 * domain, so this is short by (v - 1) of (wrap - mean)). */
		fill = fill / v + (P * v - 1) / (P - 1) * sends;
		/* Fewer micro-batches than ranks: the pipeline never fills, and
		 * the last micro-batch walks all p x v chunks: (m + pv - 1)(f +
		 * b)/v in all, (p - m)(v - 1)/v (f + b) more than the form above
		 * (equal to the simulator for alike stages, tests/unit/test_sim.c). */
		if (m < P)
			fill += (P - m) * (v - 1) / v * (k->fwd_s + k->bwd_s);
		out->bubble_s = fill > 0 ? fill : 0;
	}
}

static double bubble_fraction(int p, long long m, int v)
{
	double P = p, M = (double)m;
	return (P - 1) / (v * M + P - 1);
}

static double floor_bubble_s(const pp_plan *p, double others_s, double send_s)
{
	return p->pp > 1 ? (others_s + (p->pp - 1) * send_s) / (p->vp > 1 ? p->vp : 1) : 0;
}

/* Megatron-Core orders a short last group of micro-batches with a table
 * this simulator does not reproduce; its fixed order deadlocks there. */
static pp_status sim_shape(int p, long long m, int v, int *chunks, pp_error *err)
{
	if (m > p && m % p != 0)
		return ppi_fail(err, "", "plan.microbatches",
		                "the interleaved schedule is simulated when the micro-batches "
		                "(%lld) are fewer than or a multiple of pp (%d)",
		                m, p);
	*chunks = v;
	return PP_OK;
}

/* Megatron's interleaved order: virtual micro-batch k -> (micro-batch, chunk),
 * micro-batches in groups of p, each group through every chunk in turn. */
static void interleaved_id(long long k, int p, long long m, int v, bool fwd, long long *mb,
                           int *chunk)
{
	long long per = (long long)p * v;
	long long g = k / per, in = k % per;
	long long gs = m - g * p < p ? m - g * p : p; /* the last group may be short */
	int c = (int)(in / gs);
	*mb = g * p + in % gs;
	*chunk = fwd ? c : v - 1 - c;
}

static bool order(int p, long long m, int v, int r, pp_sched_push push, void *ctx)
{
	bool ok = true;
	long long total = m * v, nw;
	if (m == p)
		nw = total; /* Megatron: all warm-up when m == p */
	else
		nw = 2LL * (p - r - 1) + (long long)(v - 1) * p;
	if (nw > total)
		nw = total;
	long long mb;
	int c;
	for (long long k = 0; k < nw; k++) {
		interleaved_id(k, p, m, v, true, &mb, &c);
		ok &= push(ctx, r, PP_TASK_F, mb, c);
	}
	for (long long k = 0; k < total - nw; k++) {
		interleaved_id(nw + k, p, m, v, true, &mb, &c);
		ok &= push(ctx, r, PP_TASK_F, mb, c);
		interleaved_id(k, p, m, v, false, &mb, &c);
		ok &= push(ctx, r, PP_TASK_B, mb, c);
	}
	for (long long k = total - nw; k < total; k++) {
		interleaved_id(k, p, m, v, false, &mb, &c);
		ok &= push(ctx, r, PP_TASK_B, mb, c);
	}
	return ok;
}

static const char *const aliases[] = {"interleaved-1f1b", NULL};
static const char *const torchtitan[] = {"Interleaved1F1B", "LoopedBFS", NULL};

const pp_schedule_type pp_sched_interleaved = {
    .id = PP_SCHED_INTERLEAVED,
    .name = "interleaved",
    .aliases = aliases,
    .description = "interleaved 1F1B: vp model chunks per rank (Megatron's virtual pipeline)",
    .uses_vp = true,
    .virtual_form = PP_SCHED_INTERLEAVED,
    .flat_form = PP_SCHED_1F1B,
    .validate = validate,
    .fold = PP_FOLD_LINEAR,
    .chunks = ppi_sched_linear_chunks,
    .virtual_stage = ppi_sched_linear_virtual_stage,
    .head_stage = ppi_sched_linear_head,
    .param_copies = 1,
    .inflight = inflight,
    .head_held = ppi_sched_one_held,
    .sends_per_microbatch = ppi_sched_linear_sends,
    .links = ppi_sched_linear_links,
    .dp_per_chunk = true,
    .fb_alternate = true,
    .iteration = iteration,
    .bubble_fraction = bubble_fraction,
    .floor_bubble_s = floor_bubble_s,
    .sim_shape = sim_shape,
    .sim_order = order,
    .megatron = PP_MEGATRON_VIRTUAL,
    .torchtitan = torchtitan,
    .search_default = true,
    .at_pp1 = false,
};
