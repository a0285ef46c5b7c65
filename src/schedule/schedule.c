/*
 * Closed-form pipeline schedules.
 */
#include <string.h>

#include "paraplan/schedule.h"
#include "paraplan/schedule_type.h"

double pp_bubble_fraction(pp_schedule sched, int p, long long m, int v)
{
	const pp_schedule_type *t = pp_schedule_type_of(sched);
	return (t ? t : pp_schedule_type_of(PP_SCHED_1F1B))->bubble_fraction(p, m, v);
}

void pp_schedule_iteration(const pp_plan *p, const pp_system *s, const pp_stage_time *st,
                           pp_iteration *out)
{
	memset(out, 0, sizeof *out);
	/* The schedule's own part: the steady state at the bottleneck's pace and
	 * the pipeline's fill and drain (src/schedule/sched_*.c). */
	pp_schedule_type_of(p->schedule)->iteration(p, st, out);
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
	if (pp_schedule_type_of(plan->schedule)->dp_per_chunk && plan->vp > 1) {
		v = plan->vp;
		p = plan->microbatches < plan->pp ? (double)plan->microbatches : plan->pp;
	}
	double reduce = dp_s - gather_s;
	/* DeepSpeed's pipeline engine reduces after the last backward
	 * (framework.pipe_engine_reduce): none of it under the backward. */
	double ov = pp_plan_pipe_engine_reduce(plan, s) ? 0 : s->dp_overlap;
	/* A stack that overlaps nothing starts no chunk's share early either:
	 * Megatron-LM of 2021 (local DDP) all-reduces the whole gradient buffer
	 * after forward_backward_func returns (megatron/training.py train_step),
	 * DeepSpeed gathers inside its step. */
	double go = s->param_gather_overlap;
	double er = dp_exposed_part(reduce, bwd_compute_s, ov, ov > 0 ? v : 1, p);
	double eg = dp_exposed_part(gather_s, fwd_compute_s, go, go > 0 ? v : 1, p);
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
