/*
 * paraplan — schedule: composing per-stage times into an iteration.
 *
 * Closed forms for GPipe, 1F1B, interleaved 1F1B and zero-bubble ZB-H1 with
 * uneven stages, exposed vs overlapped data-parallel traffic and the optimizer
 * step; and, for comparison with the literature, the exact equations of seed
 * 000 (ConfigTuner, Eq. 1-10) and seed 001 (AMP's Eq. 1, Pipette's Eq. 3-4).
 */
#ifndef PARAPLAN_SCHEDULE_H
#define PARAPLAN_SCHEDULE_H

#include "cost.h"
#include "schedule_type.h"
#include "stage_time.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Iteration time of a resolved plan from its stages' times (`st[0..plan->pp)`).
 * The slowest stage paces the steady state; the pipeline's fill and drain is
 * the bubble: (p-1)(t_f + t_b) for GPipe and 1F1B, divided by v for
 * interleaved, (p-1)(t_f + t_b - t_w) for ZB-H1 (seed 004 §8).
 */
void pp_schedule_iteration(const pp_plan *plan, const pp_system *s, const pp_stage_time *st,
                           pp_iteration *out);

/*
 * Seconds of a rank's data-parallel traffic (`dp_s` per iteration, of which
 * `gather_s` the parameter all-gather after a sharded step) that compute
 * hides: the gradient reduction under dp_overlap of the last micro-batch's
 * backward (`bwd_compute_s`), the gather under param_gather_overlap of the
 * next iteration's first forward (`fwd_compute_s`), each at most itself.
 * Under the interleaved schedule (`plan`, resolved) each of the vp model
 * chunks' shares opens its window as its own last backward (first forward)
 * runs, pp chunk-steps apart, so up to (vp - 1) pp / vp micro-batches more
 * hide it.  The exposed rest is dp_s minus this, never below 0; the closed
 * form and the simulator both take it from here.
 */
double pp_schedule_dp_hide_s(const pp_system *s, const pp_plan *plan, double dp_s, double gather_s,
                             double fwd_compute_s, double bwd_compute_s);

/* Bubble fraction of the textbook forms (seed 004 §8.2-8.4):
 * (p-1)/(m+p-1), interleaved (p-1)/(v m + p - 1), ZB ~ 0. */
double pp_bubble_fraction(pp_schedule sched, int p, long long m, int v);

/* ------------------------------------------------ compatibility: seed 000 */

/* ConfigTuner's inputs (seed 000 §4): N parameters, l layers, hidden h,
 * sequence s, micro-batch b, m micro-batches, t/p/d degrees, utilisation mu of
 * peak F (FLOP/s), effective bandwidths C_TP, C_PP, C_DP (bytes/s); MoE: g
 * tokens per group, e experts, C_ATA. */
typedef struct pp_ct_input {
	double N, l, h, s, b, m, t, p, d;
	double mu, F;
	double C_TP, C_PP, C_DP;
	double g, e, C_ATA;
} pp_ct_input;

typedef struct pp_ct_result {
	double flops_mb; /* Eq. 8 */
	double T_comp;   /* Eq. 9 */
	double T_TP;     /* Eq. 2 */
	double T_PP;     /* Eq. 3 */
	double T_DP;     /* Eq. 4 */
	double T_bubble; /* Eq. 5 */
	double T_iter;   /* Eq. 1 (= Eq. 6) */
	double R_bubble; /* Eq. 7 */
	double T_ATA;    /* Eq. 10 (MoE) */
} pp_ct_result;

void pp_configtuner(const pp_ct_input *in, pp_ct_result *out);

/* ------------------------------------------------ compatibility: seed 001 */

/* AMP's latency (seed 001 Eq. 1) and Pipette's (Eq. 3-4) from per-micro-batch
 * compute C and the TP, PP, DP communication times. */
double pp_amp_latency(double C, double T_tp, double T_pp, double T_dp, double n_mb, double pp);
double pp_pipette_latency(double C, double T_tp, double T_pp, double T_dp, double n_mb, double pp);

#ifdef __cplusplus
}
#endif
#endif
