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

/* n micro-batches' worth at the pace of stage b (the bottleneck): out's
 * bottleneck, compute, tp/cp/ep/zero3 seconds; pp_s 0, the caller's. */
static inline void ppi_sched_pace(const pp_stage_time *st, int b, double n, pp_iteration *out)
{
	const pp_stage_time *k = &st[b];
	out->bottleneck_stage = b;
	out->compute_s = n * (k->fwd_compute_s + k->bwd_compute_s);
	out->tp_s = n * k->tp_s;
	out->cp_s = n * k->cp_s;
	out->ep_s = n * k->ep_s;
	out->zero3_s = n * k->zero3_s;
	out->pp_s = 0;
}

/*
 * The steady state of a linear schedule with v chunks per rank (vp
 * interleaved, else 1): out's bottleneck (the slowest fwd_s + bwd_s + v
 * pp_s), compute, tp/cp/ep/zero3 seconds at its pace (m micro-batches);
 * returns the fill and drain's compute before the schedule's own
 * correction (every other stage's fwd_s + bwd_s once), *sends_s the sends
 * along it (the p - 1 hops of the line once: every rank's pp_s but the last
 * rank's, whose link is the wrap to rank 0 or hop p - 2 again), *sum_w the
 * stages' summed
 * weight-gradient compute.  out->pp_s is left to the caller: the sends the
 * steady state cannot hide (ppi_sched_1f1b_period_s and the types' own).
 * Inline: the closed form runs once per plan the search times.
 */
static inline double ppi_sched_linear_steady(const pp_plan *p, const pp_stage_time *st, double v,
                                             pp_iteration *out, double *sum_w, double *sends_s)
{
	/* Slowest stage per micro-batch (compute + exposed comm + its sends). */
	int b = 0;
	double slow = -1, sum_stage = 0, sum_pp = 0, sw = 0;
	for (int i = 0; i < p->pp; i++) {
		double t = st[i].fwd_s + st[i].bwd_s + st[i].pp_s * v;
		sum_stage += st[i].fwd_s + st[i].bwd_s;
		sum_pp += st[i].pp_s;
		sw += st[i].wgrad_compute_s;
		if (t > slow) {
			slow = t;
			b = i;
		}
	}
	const pp_stage_time *k = &st[b];
	ppi_sched_pace(st, b, (double)p->microbatches, out);
	*sum_w = sw;
	*sends_s = sum_pp - st[p->pp - 1].pp_s;
	/* Fill and drain: every other stage's micro-batch once (uneven stages add
	 * their own time, not the bottleneck's). */
	return sum_stage - (k->fwd_s + k->bwd_s);
}

/*
 * The steady state's period per micro-batch of 1F1B (and ZB-H1) with the
 * sends: a rank waits for its neighbour's forward and backward of the
 * micro-batch it runs next, so every window of ranks a..e is a cycle of
 * the schedule's dependencies (seconds of max-plus algebra): its n ranks'
 * fwd_s + bwd_s and the n - 1 links' pp_s (an activation out, a gradient
 * back) over n micro-batches.  The period is the largest window mean,
 * never below the bottleneck's own fwd_s + bwd_s: a stage slower than its
 * neighbours by more than the sends hides them (the simulator's 1F1B: the
 * slope of its iteration time in m).  O(p) per bisection step.
 */
double ppi_sched_1f1b_period_s(const pp_plan *p, const pp_stage_time *st);
/* The same over stages st[0 .. n), each fwd_s + bwd_s per micro-batch (over
 * its si_speedup where `si`), st[i].pp_s on the link from i to i + 1. */
double ppi_sched_window_period_s(int n, const pp_stage_time *st, bool si);
/* out->pp_s: m (period_s - the bottleneck's fwd_s + bwd_s), the sends the
 * steady state leaves exposed at that period (0 when it hides them). */
static inline void ppi_sched_linear_exposed_sends(const pp_plan *p, const pp_stage_time *st,
                                                  double period_s, pp_iteration *out)
{
	const pp_stage_time *k = &st[out->bottleneck_stage];
	double e = period_s - (k->fwd_s + k->bwd_s);
	out->pp_s = e > 0 ? (double)p->microbatches * e : 0;
}
/* ---- DualPipe and DualPipeV (sched_dualpipe.c, sched_dualpipev.c; their
 * docs there and in docs/dualpipe.md) */
/* PP_EINPUT with a clear message unless the repository's asserts hold:
 * DualPipe: pp even, m even and m >= 2 pp (dualpipe.py); DualPipeV: pp >= 1,
 * m >= 2 pp (dualpipev.py). */
pp_status pp_dualpipe_validate(int pp, long long m, pp_error *err);
pp_status pp_dualpipev_validate(int pp, long long m, pp_error *err);

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

/* What the two types share (sched_dualpipe.c): rank r's task list of the
 * V of n = p / 2 (dual) or p ranks and k micro-batches per phase; the V's
 * pipeline, its turning rank's work and floor; the pipeline part of the
 * closed form; the simulator's stage (chunk scale, F&B overlap factor) from
 * the cost's with `per` chunks of a micro-batch on a rank. */
bool ppi_dp_order(int p, bool dual, long long k, int r, pp_sched_push push, void *ctx);
double ppi_dp_v_pipeline_s(double n, double k, const pp_dualpipe_times *t);
double ppi_dp_v_work_s(double n, double k, const pp_dualpipe_times *t);
double ppi_dp_v_floor_s(double n, double k, const pp_dualpipe_times *t);
void ppi_dp_pipeline_part(const pp_plan *plan, const pp_stage_time *st, bool dual,
                          pp_iteration *out);
void ppi_dp_sim_stage(const pp_plan *p, const pp_stage_time *t, double per, double *scale,
                      double *pair_speedup);
#endif
