/*
 * paraplan — moe: the semi-predictable all-to-all of an MoE layer (seed 000
 * §3.2).
 *
 * A routing model with named parameters gives, for one EP group of `ep` GPUs
 * (experts placed contiguously, experts / ep per GPU), the bytes GPU i sends
 * to GPU j in the layer's first forward all-to-all (the dispatch):
 *
 *   expert popularity  p_e proportional to (e + 1)^-s, s = skew x exp(-step / drift_steps)
 *                      (Zipf; s = 0 uniform; the gate's load balancing drives it toward
 *                      uniform as training goes on, seed 000 Fig. 8), or a measured
 *                      histogram of tokens per expert;
 *   routing            each of a GPU's `tokens` picks top_k experts: T k p_e slots to
 *                      expert e in expectation (independent picks; exact while k p_e <= 1);
 *   capacity           with capacity_factor c > 0 an expert keeps at most
 *                      c ep T k / E tokens (GShard / Megatron token dropping), every source
 *                      losing the same share of its tokens to it; c = 0: dropless;
 *   time               the busiest GPU's max(bytes sent, bytes received) over its link
 *                      (`link_bytes_per_s`); a GPU's tokens for its own experts stay local.
 *
 * The high percentile comes from sampling the routing (multinomial picks per
 * source, SplitMix64 from `seed`): per cell and for the time.  The other three
 * all-to-alls of the layer follow from the first (seed 000 §3.2, Fig. 7): the
 * forward combine is its transpose, the backward's first is identical and
 * its second the transpose.
 */
#ifndef PARAPLAN_MOE_H
#define PARAPLAN_MOE_H

#include "error.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_moe_routing {
	int experts;             /* E */
	int top_k;               /* k */
	int ep;                  /* GPUs of the EP group */
	double tokens;           /* T: tokens one GPU routes per micro-batch */
	double token_bytes;      /* one token's hidden state: h x bytes per element */
	double capacity_factor;  /* c; 0 = dropless */
	double skew;             /* Zipf exponent at step 0 */
	double drift_steps;      /* tau of the decay toward uniform; 0 = no drift */
	const double *histogram; /* optional: measured tokens per expert (E values) */
	double link_bytes_per_s; /* one GPU's all-to-all bandwidth */
} pp_moe_routing;

typedef struct pp_moe_result {
	int ep;
	double *expected;        /* ep x ep: bytes i -> j, first forward all-to-all */
	double *percentile;      /* ep x ep: the per-cell percentile over the samples */
	double expected_s;       /* time of the expected matrix */
	double percentile_s;     /* the percentile of the sampled times */
	double uniform_s;        /* the same routing at skew 0 */
	double dropped_fraction; /* tokens over capacity, expected */
	double dtime_dskew;      /* sensitivity: d expected_s / d skew at this step */
	double skew_now;         /* skew x exp(-step / drift_steps) */
} pp_moe_result;

/*
 * The dispatch all-to-all at training step `step`, expected and at
 * percentile `pct` (e.g. 0.99) over `samples` sampled routings (0: none;
 * percentile = expected).  `out` is filled; free with pp_moe_result_free.
 */
pp_status pp_moe_alltoall(const pp_moe_routing *r, double step, int samples, double pct,
                          unsigned long long seed, pp_moe_result *out, pp_error *err);
void pp_moe_result_free(pp_moe_result *out);

/*
 * The same over a run of `steps` training steps with drift (seed 000 §3.2,
 * Fig. 8: the gate's load balancing makes the all-to-all more uniform as
 * training goes on; the skew at step t is skew x exp(-t / drift_steps)):
 * `expected`, expected_s and dropped_fraction are the means over the run
 * (t taken as continuous, the drift integral by 64 midpoints), so that an
 * iteration's mean EP time times the run's steps is the run's EP time; the
 * `samples` sampled routings are one each at steps (k + 0.5) steps / samples,
 * so `percentile` and percentile_s are across the run's steps as well as its
 * routings; skew_now is the skew at the run's end; uniform_s as above;
 * dtime_dskew at step 0.  Without drift (drift_steps 0), with a histogram or
 * steps 0: pp_moe_alltoall at step 0.
 */
pp_status pp_moe_alltoall_run(const pp_moe_routing *r, double steps, int samples, double pct,
                              unsigned long long seed, pp_moe_result *out, pp_error *err);

/* The steps of `job`'s run that drift acts over: with a drift and --tokens,
 * train_tokens / (global_batch x seq_len); else 0 (the routing of step 0). */
double pp_moe_run_steps(const pp_job *job);

/*
 * The routing model of one EP group of plan `p`: E and k from the model, the
 * plan's ep, T = mbs x seq / cp tokens a GPU routes per micro-batch, a
 * token's hidden state in bf16 (2 bytes an element: Megatron dispatches
 * bf16 activations under fp8 training too), and the link of the EP group:
 * NVLink when the group lies in one NVLink domain (pp_group_layout), else
 * the node's NICs shared by its GPUs.  Skew, drift and capacity are left 0
 * for the caller.  PP_EINPUT for a dense model or ep = 1.
 */
pp_status pp_moe_routing_of_plan(const pp_model *m, const pp_system *s, const pp_job *job,
                                 const pp_plan *p, pp_moe_routing *out, pp_error *err);

/* The four all-to-alls of one layer from the first, M (n x n): forward
 * dispatch f1 = M, forward combine f2 = M^T, backward b1 = M, b2 = M^T. */
void pp_moe_layer_alltoalls(const double *m, int n, double *f1, double *f2, double *b1, double *b2);

/*
 * DeepEP's deduplicated, node-limited dispatch (job.moe_dispatcher deepep;
 * DeepSeek-V3 report arXiv:2412.19437 §3.2.2; deepseek-ai/DeepEP's normal
 * kernels): a token crosses the network once per node that holds one of its
 * experts, to the GPU of its own in-node index, which forwards it over
 * NVLink to each GPU there that holds one of them (on the token's own node
 * it goes over NVLink from its GPU); the combine runs the same path back,
 * summing within the node before it crosses the network.
 *
 * For an EP group of n GPUs, nd per NVLink domain (n / nd nodes), E experts
 * placed contiguously, k per token, routed uniformly within group_topk of
 * num_groups groups (0: all experts), the expected copies of one token:
 *   - over the network: D (N - 1) / N, D the nodes the token reaches: with
 *     the groups whole nodes' worth (num_groups a multiple of N), the nodes
 *     group_topk groups drawn without replacement fall on, each group taken
 *     to receive one of the k experts at least (k >= group_topk); else the
 *     nodes k experts drawn without replacement fall on;
 *   - over NVLink: D g (nd - 1) / nd, g the GPUs a reached node's k / D
 *     experts land on: with the groups whole GPUs' worth (num_groups a
 *     multiple of n), those group_topk groups fall on over D; else
 *     nd (1 - (1 - 1/nd)^(k/D)), drawn with replacement; the GPU the token
 *     enters by is not among them with odds (nd - 1) / nd.
 * One node (nd >= n): no network copy, D = 1.  The uniform all-to-all sends
 * k copies, k (n - nd) / n of them over the network: DeepSeek-V3's E 256,
 * k 8, 4 of 8 groups on n 64, nd 8 gives 3.5 network copies
 * (7 uniform) and 6.56 NVLink copies (0.88).
 */
void pp_moe_dispatch_copies(int experts, int k, int num_groups, int group_topk, int n, int nd,
                            double *nic_copies, double *nvl_copies);

#ifdef __cplusplus
}
#endif
#endif
