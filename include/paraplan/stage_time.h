#ifndef PARAPLAN_STAGE_TIME_H
#define PARAPLAN_STAGE_TIME_H
/* The two plain records between cost and the schedules: one pipeline stage's
 * seconds per micro-batch (cost fills it) and an iteration's breakdown (a
 * schedule's closed form fills it).  Types only, no functions, so the schedule
 * types (schedule_type.h, part of module spec) can read and
 * fill them without reaching into cost or schedule (tools/layering.allow). */

#ifdef __cplusplus
extern "C" {
#endif

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
	double pp_s;             /* an activation and a gradient over the rank's link: to
	                            stage + 1; the last rank's to rank 0 (interleaved) or
	                            back to p - 2; each hop in or out of the NVLink domain
	                            by where its two GPUs land */
	double pp_block_s;       /* the rank's blocking neighbour exchanges (1F1B where the
	                            stack blocks: framework.pp_p2p_blocking x half of each
	                            adjacent link's pp_s); 0: its sends run under the
	                            compute.  Not in fwd_s / bwd_s */
	double fwd_s, bwd_s;     /* totals: compute + exposed communication */
	double model_flops;      /* model FLOPs (no recompute) of this GPU per micro-batch */
	double hw_flops;         /* FLOPs executed, recompute included */
	double fwd_flops, bwd_flops, wgrad_flops; /* of hw_flops: forward; backward incl.
	                                             recompute; of which weight gradients */
	/* per iteration */
	double dp_s;        /* gradient reduction + parameter gather, before overlap */
	double dp_gather_s; /* of which the parameter gather after a sharded step (ZeRO-1/2) */
	double emb_sync_s;  /* tied-embedding gradient all-reduce (first/last stage) */
	double optimizer_s; /* optimizer step over this GPU's shard */
	/* traffic, bytes per micro-batch (per iteration for dp) sent by this GPU */
	double tp_bytes, cp_bytes, ep_bytes, pp_bytes, dp_bytes;
	/* DHelix (schedule wshape): SI block speedup s of this stage's forward +
	 * backward (pp_dh_stage_speedup); 0 = none (1) */
	double si_speedup;
	/* Per micro-batch, the expert all-to-all seconds that pairing each
	 * layer's forward with another micro-batch's backward hides, phase by
	 * phase (Megatron-Core's combined 1F1B; DualPipe's F&B chunks, whose
	 * pairs pp_dualpipe_pair_s takes from it): what 1F1B subtracts from
	 * ep_s for each paired forward.  Of an all-to-all hidden under compute
	 * the share ppi_ep_visible gives still shows (the dispatcher's SMs, or
	 * the GPU's overlap table).  0 without expert all-to-alls. */
	double ep_pair_hidden_s;
} pp_stage_time;

/* An iteration and its breakdown; the parts add up to iteration_s. */
typedef struct pp_iteration {
	double iteration_s;
	double compute_s;                 /* microbatches x the bottleneck stage's compute */
	double tp_s, cp_s, ep_s, zero3_s; /* exposed, microbatches x per micro-batch */
	double pp_s;                      /* pipeline sends on the critical path */
	double bubble_s;                  /* pipeline fill and drain */
	double dp_s;                      /* exposed data-parallel traffic */
	double optimizer_s;
	double other_s; /* tied-embedding sync, fixed per-iteration overhead */
	int bottleneck_stage;
} pp_iteration;

#ifdef __cplusplus
}
#endif

#endif
