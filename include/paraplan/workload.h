/*
 * paraplan — workload: what one plan puts on each GPU.
 *
 * The memory model gives, for every pipeline stage, the bytes one GPU of that
 * stage holds at its peak, split into buckets.  It is exact bookkeeping of the
 * tensors Megatron-LM style training keeps (weights, gradients, optimizer
 * states, the activations saved for backward by each in-flight micro-batch, the
 * transient buffers) plus a named framework overhead; see docs/memory.md for
 * the derivation and sources.
 */
#ifndef PARAPLAN_WORKLOAD_H
#define PARAPLAN_WORKLOAD_H

#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_stage_memory {
	int stage;                 /* 0-based pipeline rank */
	int layers;                /* transformer layers held by this pipeline rank (all chunks) */
	double inflight_layer_mbs; /* layer x micro-batch activation sets alive at the peak */
	/* The five buckets of the contract; total = sum of them. */
	double weights_bytes;      /* resident parameters (sharded under ZeRO-3) */
	double gradients_bytes;    /* gradient buffers (sharded under ZeRO-2/3) */
	double optimizer_bytes;    /* master weights and moments (sharded under ZeRO >= 1) */
	double activations_bytes;  /* saved for backward, at the peak micro-batch count */
	double other_bytes;        /* transients and framework overhead, itemised below */
	double total_bytes;
	/* Itemised parts (already included above). */
	double params;                   /* parameters this GPU owns before ZeRO-3 sharding */
	double act_layers_bytes;         /* transformer layers' saved activations */
	double act_embedding_bytes;      /* first stage: embedding output / dropout */
	double act_logits_bytes;         /* last stage: logits and loss */
	double act_per_layer_mb_bytes;   /* one layer, one micro-batch (an average over layer kinds) */
	double transient_bytes;          /* recompute buffer, ZeRO-3 gathered layers, MoE dispatch */
	double framework_bytes;          /* CUDA context + communication buffers */
	double fragmentation_bytes;      /* allocator fraction applied to the rest */
} pp_stage_memory;

/*
 * Memory of pipeline rank `stage` under a resolved plan (see pp_plan_resolve).
 * Pure function of its inputs; allocates nothing.  Returns PP_EINPUT if
 * `stage` is out of range.
 */
pp_status pp_memory_stage(const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *plan, int stage, pp_stage_memory *out, pp_error *err);

/*
 * The stage with the largest total, written to `out`.  Ties go to the lowest
 * stage.  Allocates nothing.
 */
pp_status pp_memory_peak(const pp_model *m, const pp_system *s, const pp_job *job,
                         const pp_plan *plan, pp_stage_memory *out, pp_error *err);

/*
 * Model-state bytes per GPU for `params` parameters under ZeRO stage `zero`
 * sharded over `shard` ranks: weights at `weight_bytes`, gradients at
 * `grad_bytes`, optimizer states at `opt_bytes` per parameter (seed 004 §5.5:
 * DDP 16P, ZeRO-1 4P + 12P/N, ZeRO-2 2P + 14P/N, ZeRO-3 16P/N with 2/2/12).
 * The three parts are written to the optional OUT pointers.
 */
double pp_model_state_bytes(double params, double weight_bytes, double grad_bytes,
                            double opt_bytes, int zero, int shard, double *weights_out,
                            double *grads_out, double *opt_out);

/* Layers held by pipeline rank `stage` under the plan (Megatron's even split). */
int pp_stage_layers(const pp_model *m, const pp_plan *plan, int stage);

#ifdef __cplusplus
}
#endif
#endif
