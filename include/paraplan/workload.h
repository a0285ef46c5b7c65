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

#include "place.h"
#include "scenario.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_stage_memory {
	int stage;                 /* 0-based pipeline rank */
	int layers;                /* transformer layers held by this pipeline rank (all chunks) */
	double inflight_layer_mbs; /* layer x micro-batch activation sets alive at the peak */
	/* The five buckets of the contract; total = sum of them. */
	double weights_bytes;     /* resident parameters (sharded under ZeRO-3) */
	double gradients_bytes;   /* gradient buffers (sharded under ZeRO-2/3) */
	double optimizer_bytes;   /* master weights and moments (sharded under ZeRO >= 1) */
	double activations_bytes; /* saved for backward, at the peak micro-batch count */
	double other_bytes;       /* transients and framework overhead, itemised below */
	double total_bytes;
	/* Itemised parts (already included above). */
	double params;              /* parameters this GPU owns before ZeRO-3 sharding */
	double act_layers_bytes;    /* transformer layers' saved activations */
	double act_embedding_bytes; /* first stage: embedding output / dropout */
	double act_logits_bytes;    /* last stage: logits and loss */
	double
	    act_per_layer_mb_bytes; /* one layer, one micro-batch (an average over layer kinds) */
	double transient_bytes;     /* recompute buffer, ZeRO-3 gathered layers, MoE dispatch */
	double framework_bytes;     /* CUDA context + communication buffers */
	double
	    fragmentation_bytes; /* the caching allocator's reserve: reserved_bytes - allocated_bytes */
	/* What PyTorch reports (torch.cuda.max_memory_allocated / _reserved):
	 * the tensors at the peak, and those plus the allocator's reserve;
	 * total_bytes = reserved_bytes + framework_bytes. */
	double allocated_bytes;
	double reserved_bytes;
	double largest_transient_bytes; /* the largest single buffer that comes and goes */
	/* CPU offload: what this GPU keeps in host memory (optimizer states and
	 * their fp32 gradients, parameter shards, activations), not in the
	 * buckets above; 0 without offload. */
	double host_bytes;
} pp_stage_memory;

/* The stage's allocated peak (allocated_bytes + framework_bytes) fits in
 * `capacity_bytes` while its total (with the allocator's reserve) does not:
 * the plan runs out of memory by reservation, not by allocation. */
bool pp_memory_reserve_oom(const pp_stage_memory *m, double capacity_bytes);

/*
 * Memory of pipeline rank `stage` under a resolved plan (see pp_plan_resolve).
 * Pure function of its inputs; allocates nothing.  Returns PP_EINPUT if
 * `stage` is out of range.
 */
pp_status pp_memory_stage(const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *plan, int stage, pp_stage_memory *out, pp_error *err);

/* pp_memory_stage of a resolved scenario (scenario.h). */
pp_status pp_scenario_memory(const pp_scenario *sc, int stage, pp_stage_memory *out, pp_error *err);

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
double pp_model_state_bytes(double params, double weight_bytes, double grad_bytes, double opt_bytes,
                            int zero, int shard, double *weights_out, double *grads_out,
                            double *opt_out);

/* The layer split (pp_stage_layers, pp_stage_layer_index) lives in scenario.h. */

/* ------------------------------------------------------------- operations */

typedef enum pp_op_kind {
	PP_OP_GEMM = 0, /* tensor-core matrix multiply */
	PP_OP_ATTN = 1, /* attention core: QK^T, softmax, AV (fused or not) */
	PP_OP_ELEM = 2, /* element-wise / norm / reduction: vector units, memory bound */
} pp_op_kind;

typedef enum pp_phase {
	PP_PHASE_FWD = 0,
	PP_PHASE_BWD_INPUT = 1,  /* gradient w.r.t. the input (B in zero-bubble papers) */
	PP_PHASE_BWD_WEIGHT = 2, /* gradient w.r.t. the weights (W) */
	PP_PHASE_RECOMPUTE = 3,  /* forward work repeated in backward */
} pp_phase;

typedef struct pp_op {
	const char *name; /* static string, e.g. "qkv", "fc1", "attn" */
	pp_op_kind kind;
	pp_phase phase;
	double count;   /* identical instances (e.g. local experts of a grouped GEMM) */
	double m, n, k; /* GEMM shape of one instance; attention: queries, keys, head dim */
	double flops;   /* FLOPs of all instances */
	double bytes;   /* HBM bytes read + written by all instances */
	bool fp8;       /* runs on FP8 tensor cores under fp8 precision */
	/* Under FP8, quantisation kernels launched for the operand this op
	 * quantises itself (forward input, backward output gradient) rather
	 * than taking it fused from its producer: 0 for a single GEMM. */
	double quant_kernels;
	pp_fp8_recipe fp8_recipe; /* the job's recipe, for an FP8 GEMM under fp8 */
	/* A bias-dropout-add (dropout models): its HBM bytes as the fused kernel
	 * of Megatron-family stacks moves them, read under the kernel model when
	 * the stack fuses it (framework.fused_bias_dropout_add); 0 otherwise. */
	double fused_bytes;
	/* The op as eager PyTorch runs it (a stack with
	 * kern.eager_elementwise, job not compiled): the kernels it launches
	 * and the HBM bytes they move, each kernel reading and writing its
	 * tensor (RMSNorm in fp32, RoPE through complex fp32, SiLU and the gate
	 * multiply apart, K/V repeated for GQA); 0 = as `bytes`, one kernel. */
	double eager_kernels;
	double eager_bytes;
	/* The loss as Megatron-Core's unfused vocab-parallel cross entropy runs
	 * it (kern.unfused_cross_entropy, not eager): the kernels it launches
	 * and the HBM bytes they move; 0 = as `bytes`, one kernel. */
	double unfused_kernels;
	double unfused_bytes;
	/* A GEMM's weight as torch.autocast handles fp32 parameters outside
	 * ZeRO-3 (kern.autocast_weight_cast): the bf16 cast each forward (and
	 * recompute); a separate memory-bound kernel. */
	double cast_kernels;
	double cast_bytes;
	/* A weight gradient accumulated into an fp32 buffer by separate
	 * kernels each micro-batch (kern.grad_accum_kernel): the cast to fp32
	 * and the add; 0 where the GEMM accumulates it itself. */
	double accum_kernels;
	double accum_bytes;
} pp_op;

typedef enum pp_coll_kind {
	PP_COLL_ALLREDUCE = 0,
	PP_COLL_ALLGATHER = 1,
	PP_COLL_REDUCESCATTER = 2,
	PP_COLL_ALLTOALL = 3,
	PP_COLL_P2P = 4,       /* one send + one receive per GPU */
	PP_COLL_BROADCAST = 5, /* one root to the group (SUMMA panels) */
	PP_COLL_REDUCE = 6,    /* the group to one root (SUMMA's transposed multiplies) */
} pp_coll_kind;

typedef struct pp_coll {
	const char *name;
	pp_coll_kind kind;
	pp_group group;
	pp_phase phase;
	double bytes;    /* buffer size, like nccl-tests' "size": the full (gathered / reduced)
	                      tensor for all-gather, reduce-scatter, all-reduce; what one GPU
	                      sends in total for all-to-all; the message for p2p */
	double count;    /* how many times per micro-batch (or per iteration for DP) */
	bool overlapped; /* runs under compute that does not depend on it */
	/* SUMMA: the buffer moves in `panels` pieces; the first is exposed, each
	 * later one runs under the previous panel's share of op `overlap_op`
	 * (an index into the same pp_work's ops; -1 = none). */
	double panels;
	int overlap_op;
	/* The busiest GPU's bytes over `bytes` (the mean GPU's): > 1 for an
	 * all-to-all under skewed MoE routing (--moe-routing), whose time the
	 * busiest GPU sets; 1 otherwise.  Times use bytes x busiest; traffic
	 * (which GPU sends what on average) uses bytes. */
	double busiest;
	/* DeepEP's deduplicated, node-limited dispatch or combine
	 * (job.moe_dispatcher deepep): the routing its copies follow
	 * (pp_moe_dispatch_copies), `bytes` being the all-to-all's, a copy per
	 * routed expert; dedup_k 0 = an all-to-all. */
	int dedup_experts, dedup_k, dedup_groups, dedup_group_topk;
} pp_coll;

#define PP_MAX_OPS 160
#define PP_MAX_COLLS 48

/* The work of one unit (a layer, the embedding, or the head) for one micro-batch. */
typedef struct pp_work {
	bool overflow; /* more operations than fit: a bug, reported by pp_stage_cost */
	int nops;
	pp_op ops[PP_MAX_OPS];
	int ncolls;
	pp_coll colls[PP_MAX_COLLS];
	/* Memo of pp_stage_cost (cost.h): the cost of one unit of each kind (a
	 * dense layer, an MoE layer, the embedding, the head) under the plan
	 * fields that shape it, reused while they do not change.  Set
	 * cache_valid to false (pp_work_init) before first use, and again when the
	 * model or system objects passed with this workspace change. */
	/* (two more slots: a dense and an MoE layer below --freeze layers:N) */
#define PP_UNIT_MEMO 6
	bool cache_valid[PP_UNIT_MEMO];
	unsigned char cache_key[PP_UNIT_MEMO][208];
	double cache[PP_UNIT_MEMO][48];
	/* Memo of the estimate: the model's parameter count and FLOPs per token. */
	const pp_model *params_model;
	int params_seq;
	pp_param_count params;
	double flops_per_token;
	/* Memo of DHelix's pairing (dhelix.h): the time an SI block saves on a
	 * layer, under the plan fields and overlap table that shape it, direct-
	 * mapped by a hash of them (pp_work_init empties it too). */
#define PP_DH_MEMO 64
	bool dh_valid[PP_DH_MEMO];
	unsigned char dh_key[PP_DH_MEMO][384];
	double dh_saved[PP_DH_MEMO];
	/* dh_saved holds the pairing's saving (true) or only an upper bound of
	 * it (pp_dh_stage_speedup_bound: the search's floor, asked first) */
	bool dh_exact[PP_DH_MEMO];
	/* the slot whose layer dhelix_stage.c built last (-1: none since init) */
	int dh_last_slot;
	/* Memo of the stage-level collectives' times (pipeline sends, data-
	 * parallel and ZeRO traffic, embedding sync): pp_coll_time of (system,
	 * group layout, kind, bytes), direct-mapped by a hash of them (stage.c,
	 * coll_time_memo).  The same seconds recur across micro-batch sizes,
	 * recompute, sequence parallelism and schedules. */
#define PP_COLL_MEMO 64
	bool coll_valid[PP_COLL_MEMO];
	struct pp_coll_memo_key {
		const void *system;
		double bytes;
		int kind, size, per_domain;
	} coll_key[PP_COLL_MEMO];
	double coll_s[PP_COLL_MEMO];
	const struct pp_coll_algo *coll_algo[PP_COLL_MEMO]; /* the algorithm chosen */
	unsigned char coll_proto[PP_COLL_MEMO];             /* its pp_coll_proto */
	/* Memo of pp_stage_cost: a pipeline rank's times under every plan field,
	 * layout and input that shapes them (stage.c, stage_key), one slot per
	 * (rank class, ZeRO stage): the plans of a search that differ only in vp
	 * or the schedule share it. */
#define PP_STAGE_MEMO 16
	bool stage_valid[PP_STAGE_MEMO];
	unsigned char stage_key[PP_STAGE_MEMO][360];
	double stage_val[PP_STAGE_MEMO][32];
	/* Memo of the estimate's placement (place.h, pp_place_build_memo, through
	 * ppi_scenario_init_ws): the last plan's rank grid and group layouts,
	 * under the system and the degrees and rank order that shape them. */
	pp_place_memo place_memo;
	/* Memo of the MoE routing's busiest-GPU factor (ops.c, moe_skew_factor):
	 * its key (experts, top k, ep, capacity, skew, drift, run steps), the
	 * factor; the layers and plans of a search that share them share it. */
	bool moe_valid;
	double moe_key[7], moe_factor;
} pp_work;

/* Ready a workspace for use (empties its memo). */
void pp_work_init(pp_work *w);

/*
 * Operations and collectives of layer `layer` for one micro-batch on one GPU
 * under a resolved plan: forward, backward (input and weight gradients) and the
 * recompute the plan implies.  Fills `out` (caller-owned); keeps nothing
 * allocated (with --moe-routing the routing model's buffers are transient).
 */
void pp_layer_work(const pp_model *m, const pp_job *job, const pp_plan *plan, int layer,
                   pp_work *out);
/* The embedding (first stage) and the LM head with its loss (last stage). */
void pp_embedding_work(const pp_model *m, const pp_job *job, const pp_plan *plan, pp_work *out);
void pp_head_work(const pp_model *m, const pp_job *job, const pp_plan *plan, pp_work *out);

/*
 * Model FLOPs per token, the convention of Megatron-LM (Narayanan et al. 2021
 * Eq. 3 without recompute) and PaLM's MFU: 6 x active matmul parameters +
 * 12 x layers x seq x attention width, counting the full (non-causal) score
 * matrix; the LM head included, embeddings excluded.
 */
double pp_model_flops_per_token(const pp_model *m, int seq_len);

#ifdef __cplusplus
}
#endif
#endif
