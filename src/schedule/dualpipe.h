/*
 * DualPipe and DualPipeV (DeepSeek-V3 §3.2.1, Table 2; deepseek-ai/DualPipe):
 * the members of their schedule types (validate, task orders, closed form,
 * residency, parameter copies, sends), standalone until the schedule type
 * table registers them (docs/dualpipe.md).
 *
 * DualPipe: p ranks (even), each holding stage r of the "down" copy of the
 * model and stage p - 1 - r of the "up" copy (2x parameters); half the m
 * micro-batches enter at rank 0, half at rank p - 1.  DualPipeV ("cut in
 * half"): the model in 2p chunks, rank r holding chunks r and 2p - 1 - r (one
 * copy), every micro-batch entering at rank 0 and turning at rank p - 1.  In
 * both, the forward of one micro-batch runs overlapped with the backward of
 * another (an F&B pair) so that one's communication hides under the other's
 * compute.
 */
#ifndef PARAPLAN_SCHEDULE_DUALPIPE_H
#define PARAPLAN_SCHEDULE_DUALPIPE_H

#include "paraplan/sim.h"

/* PP_EINPUT with a clear message unless the repository's asserts hold:
 * DualPipe: pp even, m even and m >= 2 pp (dualpipe.py); DualPipeV: pp >= 1,
 * m >= 2 pp (dualpipev.py). */
pp_status pp_dualpipe_validate(int pp, long long m, pp_error *err);
pp_status pp_dualpipev_validate(int pp, long long m, pp_error *err);

/*
 * The task lists of every rank (the repository's eight steps, dualpipe.c),
 * with their placement.  DualPipe: pp_sim_reset(sim, pp, m / 2, 2), chunk 0
 * of rank r the down direction's stage r, chunk 1 the up direction's stage
 * pp - 1 - r, two lines (pp_sim_set_placement), micro-batch i of chunk 0 the
 * i-th of the down direction and of chunk 1 the i-th of the up one.
 * DualPipeV: pp_sim_reset(sim, pp, m, 2), rank r's chunks virtual stages r
 * and 2 pp - 1 - r of one line.  F&B pairs are PP_TASK_FB followed by
 * PP_TASK_B.  The stages given to pp_sim_run carry, as the simulator's v = 2
 * chunks do, twice one chunk's forward, backward and W in fwd_s, bwd_s and
 * wgrad_s, and the overlap factor (F + B) / F&B in si_speedup.
 */
pp_status pp_dualpipe_sim_orders(pp_sim *sim, int pp, long long m, pp_error *err);
pp_status pp_dualpipev_sim_orders(pp_sim *sim, int pp, long long m, pp_error *err);

/* One chunk's times: a chunk is one stage of one copy (DualPipe) or one of
 * the 2 pp chunks of the V (DualPipeV). */
typedef struct pp_dualpipe_times {
	double f_s;  /* forward */
	double b_s;  /* full backward, weight gradients included */
	double w_s;  /* of b_s, the weight gradients ("backward for weights") */
	double fb_s; /* a forward and a backward overlapped (Table 2's F&B); <= 0: f_s + b_s */
} pp_dualpipe_times;

/*
 * The pipeline part of the iteration (first forward to last W of the slowest
 * rank), O(1) in m, for alike chunks; n = pp / 2, k = m / 2 (DualPipe) or n =
 * pp, k = m (DualPipeV):
 *   (2k - n - 2) F&B + 2nF + (n + 2)B + (n - 1) max(B - 2W, 0)
 *     + max(nF, (n - 1)(B - W)),
 * exact against the simulator for max(F, B) <= F&B <= F + B.  The bubble is
 * this less the work of the turning rank, (2k - 2n - 1) F&B + (2n + 1)(F + B);
 * it equals Table 2's (stages/2 - 1)(F&B + B - 3W) (pp_dualpipe_table2_bubble_s,
 * stages = pp for DualPipe, 2 pp for DualPipeV) where B - W = F and W <= F
 * (the figure's and zero-bubble's F = B_input = W).  Arguments must pass the
 * validate functions.
 */
double pp_dualpipe_pipeline_s(int pp, long long m, const pp_dualpipe_times *t);
double pp_dualpipev_pipeline_s(int pp, long long m, const pp_dualpipe_times *t);
double pp_dualpipe_bubble_s(int pp, long long m, const pp_dualpipe_times *t);
double pp_dualpipev_bubble_s(int pp, long long m, const pp_dualpipe_times *t);
double pp_dualpipe_table2_bubble_s(int stages, const pp_dualpipe_times *t);
/* A floor for search: the turning rank's work with every pair at max(F, B),
 * under the pipeline for every F&B the cost model may give. */
double pp_dualpipe_floor_s(int pp, long long m, const pp_dualpipe_times *t);
double pp_dualpipev_floor_s(int pp, long long m, const pp_dualpipe_times *t);

/*
 * The F&B pair time of one chunk of stage time st (`chunks`: 1 for DualPipe,
 * 2 for DualPipeV, the chunks a micro-batch crosses on the rank): (F + B) /
 * si_speedup where the cost model gives an overlap factor; else the pair's
 * compute and expert all-to-all hide each other (DeepSeek-V3 §3.2.1: one
 * micro-batch's dispatch and combine under the other's compute), max(compute,
 * all-to-all) plus the rest of the exposed communication (TP, CP, ZeRO-3),
 * never below F or B alone.
 */
double pp_dualpipe_pair_s(const pp_stage_time *st, double chunks);

/*
 * The pipeline part of pp_schedule_iteration (bottleneck_stage, compute_s,
 * tp/cp/ep/zero3_s, pp_s, bubble_s; the caller adds dp, optimizer and other
 * as for every schedule), as wshape_iteration does for DHelix: the rank of
 * the slowest fwd_s + bwd_s + pp_s paces it at its chunk times (DualPipe:
 * st[r] is one micro-batch through one copy's stage, a chunk; DualPipeV: one
 * micro-batch through both chunks, a chunk half of it), F&B of
 * pp_dualpipe_pair_s.  The turning rank's work is the compute, TP, CP, ZeRO-3
 * and exposed all-to-all parts (the all-to-all what its pairs leave exposed),
 * the rest of the closed form the bubble; pp_s is 2k passes' sends.
 */
void pp_dualpipe_iteration_part(const pp_plan *plan, const pp_stage_time *st, pp_iteration *out);
void pp_dualpipev_iteration_part(const pp_plan *plan, const pp_stage_time *st, pp_iteration *out);

/*
 * Residency: micro-batch activation sets a rank holds at its peak (every rank
 * alike, m >= 2 pp).  DualPipe: Table 2's pp + 1, in units of one copy's
 * stage (the layers a micro-batch crosses on this rank); DualPipeV: 2 pp + 1
 * chunks of half the rank's layers, (2 pp + 1) / 2 in units of all the
 * rank's layers.  Parameter copies: 2 for DualPipe (both directions' stage),
 * 1 for DualPipeV (its two chunks are different layers).
 */
double pp_dualpipe_inflight(int pp, long long m, int rank);
double pp_dualpipev_inflight(int pp, long long m, int rank);
double pp_dualpipe_param_copies(void);
double pp_dualpipev_param_copies(void);

/*
 * Pipeline sends (activations out plus gradients back) per micro-batch of
 * the iteration by rank `rank`: DualPipe 2 inside, 1 at ranks 0 and pp - 1
 * (as 1F1B: each micro-batch crosses each rank once); DualPipeV 4 inside, 2
 * at the ends (twice through each rank, the turn local to rank pp - 1).
 */
double pp_dualpipe_sends_per_microbatch(int pp, int rank);
double pp_dualpipev_sends_per_microbatch(int pp, int rank);

#endif
