/*
 * paraplan — cost: seconds of each operation and collective on given hardware.
 *
 * Compute: roofline (seed 003 S2) with named, size-dependent efficiencies per
 * GPU.  Communication: alpha-beta per algorithm (seed 004 §2.3-2.4; seed 003
 * S2 two-tier NVLink/NIC model), the algorithm NCCL would pick (the fastest),
 * on the placement the rank order gives each group.
 */
#ifndef PARAPLAN_COST_H
#define PARAPLAN_COST_H

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pp_algo {
	PP_ALGO_RING = 0,
	PP_ALGO_TREE = 1,
	PP_ALGO_HIER = 2, /* two-tier: inside the domain, then across, then inside */
	PP_ALGO_NVLS = 3,
} pp_algo;

/* Seconds of one GPU's share of `op` (all its instances) at `precision`. */
double pp_op_time(const pp_gpu *g, pp_precision precision, const pp_op *op);

/*
 * Seconds of one collective on its group; `algo_out` (may be NULL) receives the
 * algorithm chosen.  A group of one costs nothing.
 */
double pp_coll_time(const pp_system *s, const pp_layout *l, pp_coll_kind kind, double bytes,
                    pp_algo *algo_out);

/* Textbook single-tier forms (seed 004 §2.3-2.4, Exercise 1): all-reduce of
 * `bytes` over `n` GPUs on links of `bw` bytes/s with latency `alpha` s. */
double pp_allreduce_ring_s(double bytes, int n, double bw, double alpha);
double pp_allreduce_tree_s(double bytes, int n, double bw, double alpha);

/* ------------------------------------------------------------ per stage */

/*
 * Seconds one GPU of a pipeline stage spends per micro-batch (forward and
 * backward, split into compute and exposed communication) and per iteration
 * (data-parallel traffic, optimizer).  Built from the workload of its layers.
 */
typedef struct pp_stage_time {
	int stage;
	/* per micro-batch */
	double fwd_compute_s;    /* forward compute */
	double bwd_compute_s;    /* backward compute incl. recompute and weight gradients */
	double wgrad_compute_s;  /* of which weight gradients (zero-bubble W) */
	double recompute_s;      /* of which recompute */
	double tp_s, cp_s, ep_s; /* exposed communication, forward + backward */
	double zero3_s;          /* exposed ZeRO-3 parameter/gradient traffic */
	double pp_s;             /* activation send + gradient send to the neighbours */
	double fwd_s, bwd_s;     /* totals: compute + exposed communication */
	double model_flops;      /* model FLOPs (no recompute) of this GPU per micro-batch */
	double hw_flops;         /* FLOPs executed, recompute included */
	double fwd_flops, bwd_flops, wgrad_flops; /* of hw_flops: forward; backward incl.
	                                             recompute; of which weight gradients */
	/* per iteration */
	double dp_s;        /* gradient reduction + parameter gather, before overlap */
	double emb_sync_s;  /* tied-embedding gradient all-reduce (first/last stage) */
	double optimizer_s; /* optimizer step over this GPU's shard */
	/* traffic, bytes per micro-batch (per iteration for dp) sent by this GPU */
	double tp_bytes, cp_bytes, ep_bytes, pp_bytes, dp_bytes;
} pp_stage_time;

/*
 * Cost of pipeline rank `stage` under a resolved plan.  Allocates nothing.
 * `ws` is scratch the caller provides (one pp_work per thread), readied with
 * pp_work_init; its memo of layer costs is keyed by the model and system
 * pointers, so re-init it when the objects behind them change.
 */
pp_status pp_stage_cost(const pp_model *m, const pp_system *s, const pp_job *job,
                        const pp_plan *plan, int stage, pp_work *ws, pp_stage_time *out,
                        pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
