/*
 * Closed-form pipeline schedules.
 */
#include <string.h>

#include "paraplan/schedule.h"

double pp_bubble_fraction(pp_schedule sched, int p, long long m, int v)
{
	double P = p, M = (double)m;
	switch (sched) {
	case PP_SCHED_INTERLEAVED: return (P - 1) / (v * M + P - 1);
	case PP_SCHED_ZB: return 0;
	case PP_SCHED_WSHAPE: return pp_wshape_bubble_fraction(p, m, 1);
	case PP_SCHED_GPIPE:
	case PP_SCHED_1F1B:
	default: return (P - 1) / (M + P - 1);
	}
}

double pp_wshape_bubble_fraction(int p, long long m, double s)
{
	return (p - 1) / ((double)m - 1 + p * s);
}

/* DHelix's W shape (sim.h's order): with m > p micro-batches, m - p SI blocks
 * of (f + b) / s and p forwards and backwards alone on the bottleneck, and a
 * fill and drain of the other stages' SI blocks, (p - 1)(f + b) / s for alike
 * stages: ((m - 1)/s + p)(f + b) in all, the bubble ratio (p - 1)/(m - 1 + p s)
 * (seed 002 §4.1).  With m <= p there are no SI blocks: p (f + b) + (m - 1) b.
 * Both equal the simulator for alike stages with s <= (f + b)/max(f, b)
 * (tests/unit/test_wshape.c). */
static void wshape_iteration(const pp_plan *p, const pp_stage_time *st, pp_iteration *out)
{
	double m = (double)p->microbatches, P = p->pp;
	int b = 0;
	double slow = -1, sum_si = 0, sum = 0;
	for (int i = 0; i < p->pp; i++) {
		double si = st[i].si_speedup > 0 ? st[i].si_speedup : 1;
		double t = st[i].fwd_s + st[i].bwd_s + 2 * st[i].pp_s;
		sum_si += t / si;
		sum += t;
		if (t > slow) {
			slow = t;
			b = i;
		}
	}
	const pp_stage_time *k = &st[b];
	double s = k->si_speedup > 0 ? k->si_speedup : 1;
	double n = m > P ? (m - P) / s + P : m; /* micro-batches' worth on the bottleneck */
	out->bottleneck_stage = b;
	out->compute_s = n * (k->fwd_compute_s + k->bwd_compute_s);
	out->tp_s = n * k->tp_s;
	out->cp_s = n * k->cp_s;
	out->ep_s = n * k->ep_s;
	out->zero3_s = n * k->zero3_s;
	out->pp_s = n * k->pp_s * 2; /* the U: twice 1F1B's sends */
	if (p->pp > 1) {
		double fill = sum_si - slow / s;
		if (m <= P) /* no SI: the other stages' time, less the forwards that overlap */
			fill = (sum - slow) - (m - 1) * k->fwd_s;
		out->bubble_s = fill > 0 ? fill : 0;
	}
}

void pp_schedule_iteration(const pp_plan *p, const pp_system *s, const pp_stage_time *st,
                           pp_iteration *out)
{
	memset(out, 0, sizeof *out);
	double m = (double)p->microbatches;
	double v = p->schedule == PP_SCHED_INTERLEAVED ? p->vp : 1;
	/* Slowest stage per micro-batch (compute + exposed comm + its sends). */
	int b = 0;
	double slow = -1, sum_stage = 0, sum_w = 0;
	for (int i = 0; i < p->pp; i++) {
		double t = st[i].fwd_s + st[i].bwd_s + st[i].pp_s * v;
		sum_stage += st[i].fwd_s + st[i].bwd_s + st[i].pp_s;
		sum_w += st[i].wgrad_compute_s;
		if (t > slow) {
			slow = t;
			b = i;
		}
	}
	const pp_stage_time *k = &st[b];
	out->bottleneck_stage = b;
	/* Steady state: m micro-batches at the bottleneck's pace. */
	out->compute_s = m * (k->fwd_compute_s + k->bwd_compute_s);
	out->tp_s = m * k->tp_s;
	out->cp_s = m * k->cp_s;
	out->ep_s = m * k->ep_s;
	out->zero3_s = m * k->zero3_s;
	out->pp_s = m * k->pp_s * v;
	/* Fill and drain: every other stage's micro-batch once (uneven stages add
	 * their own time, not the bottleneck's), shortened by interleaving or by
	 * zero-bubble's deferred weight gradients. */
	if (p->pp > 1) {
		double fill = sum_stage - (k->fwd_s + k->bwd_s + k->pp_s);
		double P = p->pp;
		if (p->schedule == PP_SCHED_INTERLEAVED) {
			fill /= v;
			/* Fewer micro-batches than ranks: the pipeline never fills, and
			 * the last micro-batch walks all p x v chunks: (m + pv - 1)(f +
			 * b)/v in all, (p - m)(v - 1)/v (f + b) more than the form above
			 * (equal to the simulator for alike stages, tests/unit/test_sim.c). */
			if (m < P)
				fill += (P - m) * (v - 1) / v * (k->fwd_s + k->bwd_s);
		} else if (p->schedule == PP_SCHED_ZB) {
			/* ZB-H1: the input-gradient chain runs ahead of the deferred weight
			 * gradients, (p - 1)(F + B); the drain hides the W that rank r > 0
			 * deferred, up to one forward: min(F, (min(m, p) - 1) W) (the
			 * simulator's ZB-H1 order, derived and checked in test_sim.c). */
			fill -= sum_w - k->wgrad_compute_s;
			double n = (m < P ? m : P) - 1, hid = n * k->wgrad_compute_s;
			fill -= hid < k->fwd_s ? hid : k->fwd_s;
		}
		out->bubble_s = fill > 0 ? fill : 0;
	}
	if (p->schedule == PP_SCHED_WSHAPE)
		wshape_iteration(p, st, out);
	/* Data parallel: the gradient reduction overlapped with the last backward
	 * of the stage that finishes last (stage 0 in 1F1B), the parameter gather
	 * with the first forward, up to the framework's overlap fractions. */
	double dp_exposed = 0;
	for (int i = 0; i < p->pp; i++) {
		double hide = pp_schedule_dp_hide_s(s, p, st[i].dp_s, st[i].dp_gather_s,
		                                    st[i].fwd_compute_s, st[i].bwd_compute_s);
		double e = st[i].dp_s - hide;
		if (e > dp_exposed)
			dp_exposed = e;
	}
	out->dp_s = dp_exposed > 0 ? dp_exposed : 0;
	double opt = 0, emb = 0;
	for (int i = 0; i < p->pp; i++) {
		if (st[i].optimizer_s > opt)
			opt = st[i].optimizer_s;
		if (st[i].emb_sync_s > emb)
			emb = st[i].emb_sync_s;
	}
	out->optimizer_s = opt;
	out->other_s = emb + s->iteration_overhead_s;
	out->iteration_s = out->compute_s + out->tp_s + out->cp_s + out->ep_s + out->zero3_s +
	                   out->pp_s + out->bubble_s + out->dp_s + out->optimizer_s + out->other_s;
}

/* ---------------------------------------------------- seed 000 (ConfigTuner) */

void pp_configtuner(const pp_ct_input *in, pp_ct_result *o)
{
	memset(o, 0, sizeof *o);
	double N = in->N, l = in->l, h = in->h, s = in->s, b = in->b, m = in->m;
	double t = in->t, p = in->p, d = in->d;
	/* Eq. 8: 8 FLOPs per parameter per token (forward, backward, recompute). */
	o->flops_mb = 8.0 * N / (p * t) * b * s;
	/* Eq. 9 */
	o->T_comp = m * o->flops_mb / (in->mu * in->F);
	/* Eq. 2: 6 all-reduces of 2bsh bytes per layer, ring factor 2(t-1)/t. */
	double tp_mb = t > 1 ? l / p * 6.0 * 2.0 * b * s * h * 2.0 * (t - 1) / (t * in->C_TP) : 0;
	o->T_TP = m * tp_mb;
	/* Eq. 3: activation and gradient, 2bsh bytes each. */
	double pp_mb = p > 1 ? 2.0 * 2.0 * b * s * h / in->C_PP : 0;
	o->T_PP = m * pp_mb;
	/* Eq. 4: all-reduce of 2N/(pt) bytes of gradients. */
	o->T_DP = d > 1 ? 2.0 * N / (p * t) * 2.0 * (d - 1) / (d * in->C_DP) : 0;
	/* Eq. 5 */
	double comp_mb = m > 0 ? o->T_comp / m : 0;
	o->T_bubble = (p - 1) * (comp_mb + pp_mb + tp_mb);
	/* Eq. 1 */
	o->T_iter = o->T_comp + o->T_TP + o->T_PP + o->T_DP + o->T_bubble;
	/* Eq. 7 */
	o->R_bubble = (p - 1) / (p - 1 + m);
	/* Eq. 10: MoE all-to-all on half the layers, 6 per layer, 2gsh bytes. */
	if (in->e > 0 && in->C_ATA > 0)
		o->T_ATA = l / 2.0 * 6.0 * 2.0 * 2.0 * in->g * s * h / (in->e * in->C_ATA);
}

/* The part of `x` seconds of DP traffic that stays exposed when it hides
 * under `w` seconds of compute per micro-batch at fraction `h`, split into v
 * model chunks whose windows open p chunk-steps (w / v each) apart. */
static double dp_exposed_part(double x, double w, double h, double v, double p)
{
	/* The network serves the chunks' shares in the order they are ready;
	 * share j is ready (j p + h) w / v before the compute ends, so the last
	 * of them ends max_j ((j + 1) x - (j p + h) w) / v after it: linear in
	 * j, so at j = 0 or j = v - 1.  v = 1: x - h w. */
	double first = (x - h * w) / v, all = (v * x - ((v - 1) * p + h) * w) / v;
	double e = first > all ? first : all;
	return e > 0 ? e : 0;
}

double pp_schedule_dp_hide_s(const pp_system *s, const pp_plan *plan, double dp_s, double gather_s,
                             double fwd_compute_s, double bwd_compute_s)
{
	/* The gather follows the optimizer step, which waits for every gradient:
	 * it cannot hide under the backward (Megatron-Core's distributed
	 * optimizer, DeepSpeed's ZeRO-1/2 alike); it hides under the forward only
	 * where the framework launches it asynchronously.  Interleaved, each
	 * model chunk's gradients are complete once its last backward has run,
	 * p chunk-backwards before the next chunk's (Megatron's cooldown runs the
	 * last p micro-batches chunk by chunk, v - 1 down to 0), and its reduction
	 * starts then (Megatron-Core's grad_sync_func per chunk); the gather of
	 * chunk k is waited for only at its first forward, k p chunk-forwards
	 * into the warm-up (param_sync_func). */
	double v = 1, p = 1;
	if (plan->schedule == PP_SCHED_INTERLEAVED && plan->vp > 1) {
		v = plan->vp;
		p = plan->microbatches < plan->pp ? (double)plan->microbatches : plan->pp;
	}
	double reduce = dp_s - gather_s;
	double er = dp_exposed_part(reduce, bwd_compute_s, s->dp_overlap, v, p);
	double eg = dp_exposed_part(gather_s, fwd_compute_s, s->param_gather_overlap, v, p);
	return dp_s - er - eg;
}

/* ---------------------------------------------------- seed 001 (AMP, Pipette) */

double pp_amp_latency(double C, double T_tp, double T_pp, double T_dp, double n_mb, double pp)
{
	(void)T_pp;
	/* Eq. 1: (n_mb - 1)(C + T_tp) + pp (C + T_tp) + (pp - 1) T_dp + T_dp */
	return (n_mb - 1) * (C + T_tp) + pp * (C + T_tp) + (pp - 1) * T_dp + T_dp;
}

double pp_pipette_latency(double C, double T_tp, double T_pp, double T_dp, double n_mb, double pp)
{
	/* Eq. 4 */
	double bubble = pp * (C + T_tp) + (pp - 1) * T_pp;
	double straggler = (pp - 1) * (C + T_tp);
	/* Eq. 3 */
	return bubble * (n_mb / pp) + straggler + T_dp;
}
