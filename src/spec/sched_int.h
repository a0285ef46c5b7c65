/*
 * What the linear schedules (1F1B, GPipe, interleaved 1F1B, ZB-H1) share,
 * in sched_linear.c: the Megatron placement (rank r holds virtual stages r,
 * r + p, ...), the links to the neighbours, the rule vp = 1, and the steady
 * state of the closed form.  Part of spec (the schedule types): spec types, and the
 * layouts of pp_stage_time and pp_iteration; no calls downstream.
 */
#ifndef PP_SCHED_INT_H
#define PP_SCHED_INT_H

#include "paraplan/stage_time.h"
#include "paraplan/schedule_type.h"

/* vp = 1: the schedule has no virtual stages. */
pp_status ppi_sched_flat_validate(const pp_plan *p, pp_error *err);
/* p->vp chunks (1 unless interleaved), rank r's chunk c at c p + r. */
int ppi_sched_linear_chunks(const pp_plan *p);
int ppi_sched_linear_virtual_stage(const pp_plan *p, int rank, int chunk);
/* The head on the last rank. */
int ppi_sched_linear_head(const pp_plan *p);
/* 1F1B's residency: p - stage micro-batches, at most m. */
double ppi_sched_1f1b_inflight(const pp_plan *p, int stage);
/* One micro-batch's logits at the head. */
double ppi_sched_one_held(const pp_plan *p);
/* v activations to the next rank per micro-batch (v - 1 from the last,
 * which wraps to rank 0 for the next chunk); v = p->vp. */
double ppi_sched_linear_sends(const pp_plan *p);
int ppi_sched_linear_links(const pp_plan *p, int stage, pp_sched_link out[PP_SCHED_MAX_LINKS]);
/* The simulator's shape for one chunk per rank: v must be 1. */
pp_status ppi_sched_flat_sim_shape(int p, long long m, int v, int *chunks, pp_error *err);
/* The textbook (p - 1)/(m + p - 1) of GPipe and 1F1B. */
double ppi_sched_1f1b_bubble_fraction(int p, long long m, int v);
/* 1F1B's bubble floor: the others' time and p - 1 sends. */
double ppi_sched_1f1b_floor_bubble_s(const pp_plan *p, double others_s, double send_s);

/*
 * The steady state of a linear schedule with v sends on the critical path
 * per micro-batch (v = vp interleaved, else 1): out's bottleneck, compute,
 * tp/cp/ep/zero3 and pp seconds; returns the fill before the schedule's own
 * correction (every other stage's micro-batch once), *sum_w the stages'
 * summed weight-gradient compute.  Inline: the closed form runs once per
 * plan the search times.
 */
static inline double ppi_sched_linear_steady(const pp_plan *p, const pp_stage_time *st, double v,
                                             pp_iteration *out, double *sum_w)
{
	double m = (double)p->microbatches;
	/* Slowest stage per micro-batch (compute + exposed comm + its sends). */
	int b = 0;
	double slow = -1, sum_stage = 0, sw = 0;
	for (int i = 0; i < p->pp; i++) {
		double t = st[i].fwd_s + st[i].bwd_s + st[i].pp_s * v;
		sum_stage += st[i].fwd_s + st[i].bwd_s + st[i].pp_s;
		sw += st[i].wgrad_compute_s;
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
	*sum_w = sw;
	/* Fill and drain: every other stage's micro-batch once (uneven stages add
	 * their own time, not the bottleneck's). */
	return sum_stage - (k->fwd_s + k->bwd_s + k->pp_s);
}
#endif
