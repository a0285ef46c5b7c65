/*
 * paraplan — inputs: model, GPU, system, job and plan.
 *
 * These are plain value structs: a caller may fill them by hand, from a preset
 * (pp_*_preset), from paraplan's own JSON files or, for models, from a
 * HuggingFace config.json.  Every loader validates what it reads and reports
 * the first problem in a pp_error; nothing is silently defaulted.
 *
 * Units are SI and are part of each field's name: *_bytes, *_bytes_per_s,
 * *_flops (FLOP/s), *_s.
 */
#ifndef PARAPLAN_SPEC_H
#define PARAPLAN_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_NAME_MAX 64
#define PP_SOURCE_MAX 512
#define PP_ORDER_MAX 32

/* ------------------------------------------------------------------ model */

typedef enum pp_norm { PP_NORM_RMSNORM = 0, PP_NORM_LAYERNORM = 1 } pp_norm;

/* How positions enter the model: rope/alibi add no parameters; learned adds a
 * max_position x hidden table next to the token embedding (GPT-2/3). */
typedef enum pp_position { PP_POS_ROPE = 0, PP_POS_LEARNED = 1, PP_POS_ALIBI = 2 } pp_position;

/* Multi-head latent attention (DeepSeek-V2/V3).  All zero when not used. */
typedef struct pp_mla {
	int q_lora_rank; /* 0: queries are projected directly from the hidden state */
	int kv_lora_rank;
	int qk_nope_head_dim;
	int qk_rope_head_dim;
	int v_head_dim;
} pp_mla;

/* Mixture of experts.  num_experts == 0 means a dense model. */
typedef struct pp_moe {
	int num_experts;         /* routed experts per MoE layer */
	int top_k;               /* routed experts per token */
	int expert_ffn_hidden;   /* intermediate size of one routed expert */
	int num_shared_experts;  /* DeepSeek style: always-active experts */
	int shared_ffn_hidden;   /* total intermediate size of the shared expert(s) */
	bool shared_expert_gate; /* Qwen2-MoE: a sigmoid gate (hidden x 1) on the shared expert */
	int first_k_dense;       /* the first k layers use a dense MLP */
	int layer_freq;   /* every layer_freq-th layer (after first_k_dense) is MoE; 1 = all */
	bool router_bias; /* DeepSeek-V3 e_score_correction_bias (num_experts per layer) */
	/* Group-limited routing (DeepSeek-V2/V3 n_group / topk_group; Megatron-Core
	 * --moe-router-num-groups / --moe-router-group-topk): the experts split into
	 * num_groups equal groups, a token's top_k chosen within group_topk of them.
	 * 0 = not limited.  With the groups on nodes it is DeepSeek-V3's
	 * node-limited routing, which the deepep dispatcher's traffic follows
	 * (pp_moe_dispatch_copies). */
	int num_groups;
	int group_topk;
} pp_moe;

typedef struct pp_model {
	char name[PP_NAME_MAX];
	int num_layers;
	int hidden;           /* d_model */
	int num_heads;        /* query heads */
	int num_kv_heads;     /* key/value heads (GQA/MQA); == num_heads for MHA */
	int head_dim;         /* per head; hidden / num_heads unless the config says otherwise */
	int ffn_hidden;       /* intermediate size of the dense MLP */
	int vocab;            /* vocabulary size (padded size where the framework pads) */
	int max_position;     /* only used for learned position embeddings */
	bool gated_mlp;       /* SwiGLU / GeGLU: three matrices instead of two */
	bool tied_embeddings; /* LM head shares the input embedding */
	bool linear_bias;     /* linear layers carry biases (GPT-2/3, BLOOM, GPT-NeoX) */
	bool qkv_bias;        /* only the QKV projection carries a bias (Qwen2) */
	bool qk_norm;         /* per-head RMSNorm on q and k (Qwen3) */
	bool dropout;         /* dropout layers are active in training (GPT-3 era) */
	bool parallel_block;  /* attention and MLP read the same input (GPT-NeoX, GPT-J) */
	bool embedding_norm;  /* a norm right after the embedding (BLOOM) */
	pp_norm norm;
	pp_position position;
	pp_moe moe;
	pp_mla mla;
	double published_params; /* the size the model is known by, 0 if unknown */
	char source[PP_SOURCE_MAX];
} pp_model;

/* Parameter counts by part, in parameters (not bytes). */
typedef struct pp_param_count {
	double embedding; /* token (+ learned position) embedding */
	double lm_head;   /* untied output projection; 0 when tied */
	double final_norm;
	double attention;  /* all layers: projections, their biases and norms */
	double dense_mlp;  /* all dense-MLP layers, incl. their norms */
	double moe_router; /* all MoE layers: router (+ bias) */
	double moe_shared; /* all MoE layers: shared experts (+ gate) */
	double moe_routed; /* all MoE layers: routed experts */
	double total;      /* sum of all of the above */
	double active;     /* parameters a single token touches (top_k of the routed experts) */
} pp_param_count;

/* Parameters of one transformer layer, split by how they are sharded. */
typedef struct pp_layer_params {
	double attention; /* projections, biases, attention-side norms */
	double mlp;       /* dense MLP or, for an MoE layer, router + shared experts + MLP norm */
	double experts;   /* routed experts (sharded by ep x etp); 0 for a dense layer */
	double
	    replicated; /* of the above, parameters every TP rank keeps whole (norms, router, biases of row-parallel layers) */
} pp_layer_params;

/* ------------------------------------------------------------- hardware */

/*
 * The training stack's fractions of the kernel model's rates (pp_kernel_params
 * below): named parameters, calibrated per GPU on the public runs
 * (docs/calibration.md), overridable in JSON ("efficiency" object of a GPU).
 */
typedef struct pp_gpu_eff {
	double gemm;     /* fraction of the kernel model's BF16/FP16 GEMM rate */
	double gemm_fp8; /* the same for FP8 GEMMs (quantisation pass included) */
	double attn;     /* fraction of the kernel model's fused-attention rate */
	double memory;   /* fraction of the kernel model's memory-bound rate */
	double kernel_s; /* fixed time per kernel launched: launch and tail */
} pp_gpu_eff;

/*
 * The kernel model (include/paraplan/kernel.h, docs/kernel.md): the few
 * physical parameters that turn a GEMM shape, an attention call or a
 * memory-bound kernel into seconds: fitted to a GPU's measured kernel tables
 * (a profile directory, --gpu-profile), or the reference H100's carried to
 * the GPU (pp_kernel_scale).  Set by pp_system_compute_model (inputs.h)
 * before anything is costed; `valid` false: not set yet.
 */
typedef struct pp_kernel_params {
	bool valid;
	bool profiled;        /* fitted to a measured profile (pp_kernel_fit), not carried */
	double sms;           /* streaming multiprocessors the tiles are spread over */
	double gemm_eff;      /* fraction of the dense BF16 peak one full wave of tiles sustains */
	double gemm_fp8_eff;  /* the same for FP8 (tensor-wise scales), of the FP8 peak */
	double gemm_k_half;   /* inner dimension at which a tile's k loop runs at half rate */
	double gemm_fixed_s;  /* per GEMM call: launch, prologue, epilogue */
	double attn_fwd_eff;  /* fused attention forward: ceiling, fraction of the BF16 peak */
	double attn_bwd_eff;  /* fused attention backward: the same */
	double attn_seq_half; /* key length at which attention runs at half its ceiling */
	double attn_fixed_s;  /* per attention call */
	double hbm_eff;       /* fraction of the datasheet HBM bandwidth a long stream sustains */
	double mem_fixed_s;   /* per memory-bound kernel */
	/* The training stack against these kernels (paraplan calibrate): each
	 * time is divided by the stack's fraction of the kernel rate, eff.gemm /
	 * gemm_fp8 / attn / memory, and the fixed times above are replaced by
	 * eff.kernel_s.  Set by pp_system_compute_model: true once it ran. */
	bool stack_fractions;
	/* Under stack_fractions: the stack runs bias-dropout-add as one fused
	 * kernel (pp_op.fused_bytes; framework.fused_bias_dropout_add). */
	bool fused_bias_dropout_add;
	/* The training stack's kernels, from its framework file (registry
	 * entries framework.eager_elementwise, autocast_weight_cast,
	 * cuda_graphs; data/framework/NAME.json, each with its source); kept
	 * here, beside the kernel parameters, so that every caller of
	 * pp_op_time sees them.  1 = on, 0 = off.
	 * eager_elementwise: element-wise, norm, RoPE and activation ops run as
	 * separate eager PyTorch kernels (pp_op.eager_kernels, eager_bytes)
	 * unless the job is compiled (job.compile); 0: fused kernels
	 * (Transformer Engine, Megatron's fusions).
	 * autocast_weight_cast: fp32 parameters outside ZeRO-3 are cast to
	 * bf16 by torch.autocast in every forward (pp_op.cast_bytes,
	 * cast_kernels).
	 * grad_accum_kernel: weight gradients are accumulated into fp32 by
	 * separate kernels every micro-batch (pp_op.accum_bytes, accum_kernels)
	 * instead of inside the weight-gradient GEMM.
	 * cuda_graphs: the step is replayed as CUDA graphs, so no host launch
	 * time per kernel (eff.kernel_s, gemm/attn/mem_fixed_s) is paid. */
	double eager_elementwise;
	double autocast_weight_cast;
	double grad_accum_kernel;
	double cuda_graphs;
	/* 1: the vocab-parallel cross entropy runs unfused, as Megatron-Core
	 * without --cross-entropy-loss-fusion runs it (pp_op.unfused_kernels,
	 * unfused_bytes): the fp32 up-cast, max, subtract, exp, sum and
	 * divide each a kernel over the logits; 0: fused kernels (NeMo 2 /
	 * Megatron-Bridge recipes, flash-attn's Triton loss, Inductor).  An
	 * eager stack's decomposition (eager_elementwise) comes first. */
	double unfused_cross_entropy;
	/* The parts of each layer captured as CUDA graphs when the step as a
	 * whole is not (Transformer Engine graphs per module, Megatron-Core
	 * cuda_graph_scope): PP_GRAPH_* bits, 0 = none.  Their kernels pay no
	 * launch time (eff.kernel_s) and no host time (host_queue).  Set per run by the public-runs reader
	 * (data/runs/cuda-graphs.json). */
	unsigned graph_parts;
	/* 1: the stack is the loop the GPU's kernel tables were measured in (a
	 * plain PyTorch step on one GPU): its kernels run at the measured rates
	 * with their measured per-call fixed times, not at the stack fractions
	 * fitted to other stacks' runs (framework.measured_kernels). */
	double measured_kernels;
	/* 1: the host issues the stack's kernels ahead of the GPU (Python, the
	 * dispatcher and the launch), each in the host time the GPU's measured
	 * per-call fixed times hold beyond a busy stream's gap
	 * (pp_kernel_stream_params: a GEMM or attention call's, a memory-bound
	 * kernel's), and a layer's phase takes at least its kernels' issue time
	 * (pp_op_host_s, src/cost/stage_rules.c; docs/kernel.md "The host
	 * queue").  On measured kernels each kernel then pays only that gap on
	 * the GPU.  0: no host (measured kernels: the fixed times paid in full);
	 * framework.host_queue. */
	double host_queue;
	/* The stack's host time to issue a kernel over plain PyTorch's (the
	 * measured per-call split above): above 1 where the stack's modules add
	 * Python and C++ work to each call (Transformer Engine's modules);
	 * framework.host_issue_factor.  0 reads as 1. */
	double host_issue_factor;
	/* Under stack_fractions: the share of the measured (Hopper-native)
	 * attention rate the stack's attention kernel reaches on this GPU
	 * (framework.attn_sm90_fraction on sm90, else 1). */
	double attn_stack_fraction;
	/* 1: the stack's attention kernel is FlashAttention-2's family
	 * (framework.attn_sm90_fraction < 1), whose rate falls less with a
	 * smaller head dimension than the measured (cuDNN) kernel's
	 * (pp_kernel_attn_head_factor); set by pp_system_compute_model. */
	double attn_fa2;
} pp_kernel_params;

/* Layer parts a CUDA graph can capture (pp_kernel_params.graph_parts), as
 * Megatron-Core's cuda_graph_scope names them. */
enum {
	PP_GRAPH_ATTN = 1u << 0,           /* "attn": norm, QKV, attention, output projection */
	PP_GRAPH_MLP = 1u << 1,            /* "mlp": the dense MLP with its norm */
	PP_GRAPH_MOE = 1u << 2,            /* "moe": the whole MoE layer (token-drop only) */
	PP_GRAPH_MOE_ROUTER = 1u << 3,     /* "moe_router": the router GEMM and top-k */
	PP_GRAPH_MOE_PREPROCESS = 1u << 4, /* "moe_preprocess": the dispatcher's bookkeeping */
};

typedef struct pp_gpu {
	char name[PP_NAME_MAX];
	double memory_bytes;          /* HBM capacity the driver reports (nvidia-smi total) */
	double memory_bw_bytes_per_s; /* HBM bandwidth */
	double fp32_flops;            /* vector (non-tensor) FP32 peak */
	double tf32_flops;            /* dense tensor peaks, no sparsity; 0 = not supported */
	double fp16_flops;
	double bf16_flops;
	double fp8_flops;
	double fp4_flops;          /* dense NVFP4 (E2M1) tensor peak; 0 = no FP4 tensor cores */
	double nvlink_bytes_per_s; /* per GPU, one direction; 0 = no NVLink */
	double cuda_context_bytes; /* HBM taken by the CUDA context and kernels at start */
	/* The memory's kind as the GPU file states it ("HBM3", "GDDR6", ...; one of
	 * pp_memory_types); "" when it does not (printed as "memory"). */
	char memory_type[16];
	/* Facts of the silicon, from the GPU file (data/gpus, each with its
	 * source); 0 or "" when the file does not state them, and the code that
	 * needs one refuses or says what it assumes (never a silent H100):
	 * streaming multiprocessors (AMD: compute units) the kernel model spreads
	 * tiles over; NVIDIA compute capability x 10 (sm_90 = 90; 0: not NVIDIA
	 * or not known); the architecture's name ("Hopper", "CDNA 3"); the DHelix
	 * overlap table (data/overlap/NAME.json) that holds for it, and whether
	 * that table is an assumption (no measurement on this GPU or its silicon). */
	double sm_count;
	int compute_capability_x10;
	char architecture[24];
	char overlap_platform[16];
	bool overlap_assumed;
	/* Board power (docs/energy.md), 0 when the GPU file does not state it:
	 * tdp_w the datasheet's maximum board power, drawn while the GPU computes
	 * (Patel et al., ASPLOS'24); idle_w what it draws while it waits
	 * (communication, bubble), 0 = not known (the energy model then charges
	 * the TDP throughout and says so). */
	double tdp_w, idle_w;
	pp_gpu_eff eff;
	pp_kernel_params kern; /* measured kernel model (--gpu-profile); kern.valid false: none */
	char source[PP_SOURCE_MAX];
} pp_gpu;

typedef struct pp_system {
	char name[PP_NAME_MAX];
	pp_gpu gpu;
	int gpus_per_node;
	int nvlink_domain;         /* GPUs that share one NVLink/NVSwitch domain (8, 72, ...) */
	double nvlink_bytes_per_s; /* per GPU, one direction, inside the domain */
	double nvlink_latency_s;
	int nics_per_node;
	double nic_bytes_per_s; /* per NIC, one direction */
	double nic_latency_s;
	bool nvls; /* NVLink SHARP in-switch reductions */
	/* Recursive doubling and Rabenseifner's all-reduce (src/cost/coll_rd.c,
	 * coll_rabenseifner.c) join the collective algorithms the cost model
	 * chooses from; off by default (NCCL runs neither). */
	bool coll_recursive;
	/* What the two tiers are (pp_link_label): the intra-node (domain) tier,
	 * "nvlink", "pcie3", "pcie4", ... (stated, else "nvlink" for a GPU with
	 * NVLink and "pcie" for one without), and the network between nodes,
	 * "infiniband", "roce", ... ("" when not stated). */
	char intra_node_link[16];
	char inter_node_network[16];
	double usd_per_gpu_hour; /* rental price, 0 if unknown */
	/* The host side, for CPU offload (0 = not stated: an offload plan is
	 * refused).  host_link: GPU <-> host per GPU, one direction (PCIe,
	 * NVLink-C2C); host memory and its bandwidth per node (DRAM, datasheet). */
	double host_link_bytes_per_s;
	double host_memory_bytes;
	double host_memory_bw_bytes_per_s;
	/* Power a node draws besides its GPUs under training load (CPUs, NICs,
	 * switches, fans, power supplies), watts; 0 = not stated (the energy
	 * model then counts the GPUs alone and says so).  docs/energy.md. */
	double host_w;
	/* Framework overheads on every GPU (see data/framework/megatron.json). */
	double comm_buffer_bytes;  /* NCCL and framework communication buffers */
	double allocator_fraction; /* flat fragmentation beyond the reserve, fraction of tensors */
	/* The caching allocator's reserve at the peak, in largest transient
	 * buffers (docs/memory.md; calibrate --memory fits it). */
	double allocator_transient_segments;
	/* 1: the stack keeps each GEMM weight's quantised copy (the recipe's
	 * pp_fp8_weight_bytes, kernel.h) across micro-batches (TransformerEngine
	 * under Megatron's is_first_microbatch); 0: it casts per use and keeps
	 * none (torchao Float8Linear). */
	double fp8_weight_cache;
	/* 1: the loop frees the gradients after each optimizer step
	 * (optimizer.zero_grad(set_to_none=True), torch's default), so in a
	 * step of one micro-batch they are allocated only as backward produces
	 * them; 0: they live in buffers kept across steps (Megatron's main_grad,
	 * DeepSpeed's partitions, zero_grad(set_to_none=False)). */
	double grads_set_to_none;
	/* Network and overlap efficiencies (named, calibrated; see docs/calibration.md). */
	double nvlink_eff; /* fraction of NVLink bandwidth collectives sustain */
	double nic_eff;    /* fraction of NIC bandwidth collectives sustain */
	/* true: no nccl-tests measure this network (the system file's
	 * "fit_nic_eff"), so paraplan calibrate fits its nic_eff to the records
	 * that ran on it, alone among the systems (docs/calibration.md); false:
	 * its nic_eff is nccl-tests' (the stack's default, or calibrate
	 * --nccl-tests). */
	bool fit_nic_eff;
	double nvls_gain;  /* NVLS all-reduce bus bandwidth over ring's, 0 = none */
	double dp_overlap; /* fraction of the last backward that hides DP traffic */
	/* fraction of the first forward that hides the parameter all-gather
	 * after a sharded optimizer's step (ZeRO-1/2); 0: it runs exposed */
	double param_gather_overlap;
	double iteration_overhead_s; /* per-iteration fixed cost: data loading, logging, sync */
	/* Training-framework behaviour (data/framework/NAME.json). */
	char framework[PP_NAME_MAX]; /* "megatron" (default), "llm-foundry", "deepspeed", ... */
	double logit_bytes;          /* bytes kept per logit element for the loss's backward */
	double loss_transient_bytes; /* extra bytes per logit element while the loss runs */
	double zero3_live_params;    /* ZeRO-3 parameters gathered at once; 0 = two whole layers */
	double zero3_bucket_params;  /* ZeRO-3 unsharded gradient elements at once; 0 = a layer */
	/* bytes a gradient element ZeRO-3's reduce-scatter moves unless the job
	 * names its reduce dtype; 0 = the job's gradient bytes */
	double zero3_reduce_bytes;
	/* Under full recompute, a module whose recomputed forward and backward
	 * are further apart than this many parameters (those used between them)
	 * is released after the recompute and gathered a third time for its
	 * backward (DeepSpeed's stage3_max_reuse_distance); 0: a layer gathered
	 * for its backward stays gathered through its recompute (FSDP) */
	double zero3_reuse_params;
	double zero3_overlap;     /* fraction of a layer's compute that hides its ZeRO-3 traffic */
	double tp_overlap_hidden; /* fraction of TP traffic hidden when tp_overlap is on */
	double
	    ep_overlap_pairs; /* 1: --ep-overlap pairs forward and backward layers (Megatron-Core combined 1F1B) */
	double deepep_sms; /* SMs DeepEP's kernels hold (--moe-dispatcher deepep); 0 = none */
	/* Where the model's state lives (params.h, data/framework/NAME.json). */
	double param_bytes;        /* bytes per resident parameter; 0 = the training dtype's */
	double compute_copy_bytes; /* bytes per parameter of the GEMMs' low-precision copy */
	double reshard_after_forward_pp; /* 1: ZeRO-3 reshards after forward with pp > 1 */
	double selective_op_sac;         /* 1: selective recompute is per-op SAC (torchtitan) */
	double pp_scatter_gather; /* 1: without SP, pipeline sends 1/tp + TP all-gather (SC'21) */
	/* Non-interleaved 1F1B's neighbour exchanges block the rank: transfer
	 * times per exchange (1 a grouped send + receive, Megatron-Core and
	 * torch.distributed.pipelining; 2 a blocking send then a receive,
	 * DeepSpeed); 0: the sends run on their own stream under the compute.
	 * docs/placement.md, "Blocking pipeline exchanges". */
	double pp_p2p_blocking;
	/* Fraction of the measured Hopper flash-attention rate the stack's attention
	 * kernel reaches on a Hopper (sm90) GPU: 1 Hopper-native (cuDNN fused
	 * attention, FlashAttention-3), about 0.56 Ampere-style kernels there
	 * (FlashAttention-2, Triton).  Read by pp_system_compute_model. */
	double attn_sm90_fraction;
	/* Fraction of the ZeRO-3 traffic hidden under compute that stays visible
	 * (concurrent kernels slow each other, each segment starts with a launch
	 * gap: seed 002 Table 7): kernel_slowdown + launch_interval of the
	 * system's overlap table, set by pp_system_compute_model. */
	double zero3_visible;
	/* 1: the stack fuses bias + dropout + residual add into one kernel
	 * (Megatron); 0: separate dropout and add (PyTorch eager).  Read by
	 * pp_system_compute_model. */
	double fused_bias_dropout_add;
	/* 1: with sequence parallelism the column-parallel GEMMs after a norm
	 * (QKV, FC1) keep their all-gathered input (seq x hidden per TP rank)
	 * for the weight gradient, where TransformerEngine keeps the local
	 * seq/tp norm output and gathers it again in backward (0).  DHelix's
	 * own transformer block keeps the gathered one (data/framework/dhelix.json). */
	double sp_gathered_gemm_inputs;
	/* 1: PyTorch FSDP1's gradient passes: under a sharded strategy each
	 * unit's unsharded gradient is cast to the reduce dtype (a kernel of its
	 * own where that differs from the compute dtype) and pre-divided in
	 * place before its reduce-scatter, every micro-batch
	 * (torch/distributed/fsdp/_runtime_utils.py _post_backward_hook,
	 * _reduce_grad); 0: the stack reduces its gradient buffer as it is. */
	double fsdp_grad_passes;
	/* 1: PyTorch FSDP2's copies: each all-gathered unit copied out of the
	 * all-gather buffer into its parameters on the compute stream, each
	 * unit's gradients copied into the reduce-scatter buffer in the reduce
	 * dtype (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py
	 * foreach_all_gather_copy_out, foreach_reduce_scatter_copy_in); NCCL
	 * divides (ReduceOp.AVG), no kernel.  0: none. */
	double fsdp2_copies;
	/* Where a dropless MoE layer's forward makes the host wait for the GPU
	 * (a device-to-host read of the routed token counts, which the
	 * all-to-all's split sizes or the grouped GEMM's per-expert sizes are
	 * on the host): 0 never; 1 with expert parallelism (ep > 1: the
	 * all-to-all's splits); 2 always (the grouped GEMM's sizes too).  The
	 * host's lead is lost there: the experts' kernels after it are issued
	 * while the GPU waits (src/cost/stage_rules.c host_queue). */
	double moe_host_sync;
	/* 1: DeepSpeed's pipeline engine: with pp > 1 the DP gradients are
	 * reduced after the last micro-batch's backward (TrainSchedule's
	 * ReduceGrads: dp_overlap does not apply), and under bf16, whose optimizer
	 * BF16_Optimizer shards, as an all-reduce of the whole fp32 gradient, not
	 * a reduce-scatter (PipelineEngine._bf16_reduce_grads); 0: neither. */
	double pipe_engine_reduce;
	/* 1: an MoE layer's routing weights multiply the experts' activation
	 * (Megatron-Core since its memory-efficient permutation, 2025: weighted
	 * SwiGLU in the experts, an unweighted unpermute), so no expert output is
	 * kept for the weights' gradient; 0: the combine weights the expert
	 * outputs and keeps them (DeepSpeed-MoE, MegaBlocks, torchtitan). */
	double moe_probs_in_expert;
	/* 1: element-wise ops run eagerly and keep their own saved copies
	 * (RoPE's fp32 q and k, GQA's expanded K and V, the SDPA output made
	 * contiguous); 0: fused or compiled away (Megatron / TransformerEngine,
	 * torch.compile).  docs/memory.md. */
	double eager_activation_copies;
	char source[PP_SOURCE_MAX];
	/* DHelix (seed 002, dhelix.h): the operator overlap table the wshape
	 * schedule pairs with; dh_overlap_set false = the built-in table of the
	 * GPU's platform (pp_dh_platform_of_gpu).  Set by pp_dh_system_set_overlap. */
	bool dh_overlap_set;
	double dh_oef[5][5]; /* [pp_dh_kind][pp_dh_kind] */
	double dh_kernel_slowdown, dh_launch_interval;
	int dh_ntp; /* Table 7's rows by TP size: tp, kernel slowdown, launch interval */
	double dh_tp_row[4][3];
	char dh_overlap_name[PP_NAME_MAX];
	int dh_compute_streams; /* pp_dh_overlap.compute_streams */
} pp_system;

/* ------------------------------------------------------------------ job */

typedef enum pp_precision {
	PP_PREC_FP32 = 0,
	PP_PREC_FP16 = 1,
	PP_PREC_BF16 = 2,
	PP_PREC_FP8 = 3, /* FP8 GEMMs, BF16 weights and activations elsewhere */
} pp_precision;

typedef enum pp_optimizer { PP_OPT_ADAM = 0, PP_OPT_SGD = 1 } pp_optimizer;

/* How FP8 operands are scaled (--fp8-recipe); it sets the quantisation pass a
 * GEMM's FP8 operand costs (pp_kernel_fp8_quant_bytes, docs/kernel.md), how
 * many quantisation kernels a batched FP8 GEMM launches (src/workload/ops.c)
 * and what a GEMM keeps for its backward (src/workload/memory.c). */
typedef enum pp_fp8_recipe {
	PP_FP8_DELAYED =
	    0, /* per-tensor scale from an amax history (TE's default, DelayedScaling) */
	PP_FP8_CURRENT = 1, /* per-tensor scale from the tensor's own amax (FP8-CS) */
	PP_FP8_MX = 2,      /* MXFP8: one E8M0 scale per 32 elements (FP8-MX; Blackwell) */
	PP_FP8_ROWWISE = 3, /* one FP32 scale per row (torchao Float8Linear "rowwise") */
	PP_FP8_BLOCKWISE =
	    4, /* 1x128 activation / 128x128 weight blocks (DeepSeek-V3, TE Float8BlockScaling) */
	/* NVFP4 (Blackwell): E2M1 operands, one E4M3 scale per 16 elements and an
	 * FP32 scale per tensor, GEMMs at the FP4 peak (TE NVFP4BlockScaling,
	 * Megatron-LM --fp4-format e2m1); the low-precision copy of the weights
	 * and the rest of the step are kept as under FP8 (an upper bound on
	 * memory: docs/kernel.md). */
	PP_FP8_NVFP4 = 5,
} pp_fp8_recipe;
#define PP_FP8_RECIPES 6

/* --moe-routing zipf:S[,drift:D][,capacity:C]: the Zipf skew of expert
 * popularity at step 0, the drift toward uniform in steps (0 = none) and
 * the capacity factor (0 = dropless). */
typedef struct pp_moe_spec {
	bool set;
	double skew;
	double drift_steps;
	double capacity_factor;
} pp_moe_spec;

/* Fine-tuning (--freeze, --lora-rank, --lora-targets, --base-weights;
 * docs/finetune.md): which weights train.  All zero = full training, every
 * number as without it. */
enum {
	PP_LORA_QKV = 1,  /* the fused QKV projection (column-parallel) */
	PP_LORA_PROJ = 2, /* the attention output projection (row-parallel) */
	PP_LORA_FC1 = 4,  /* the MLP's first GEMM, gate and up fused (column-parallel) */
	PP_LORA_FC2 = 8,  /* the MLP's second GEMM (row-parallel) */
	PP_LORA_ALL = 15
};
typedef struct pp_finetune {
	int lora_rank;          /* LoRA rank r; 0 = no adapters */
	unsigned lora_targets;  /* PP_LORA_* bits; 0 with a rank = all four */
	bool freeze_embeddings; /* the embedding, the LM head and the final norm */
	int freeze_layers;      /* the first N transformer layers, wholly */
	bool freeze_base; /* every pretrained weight: only adapters train (implied by a rank) */
	bool nf4;         /* frozen layer GEMM weights stored as NF4 (QLoRA) */
} pp_finetune;
/*
 * The job's energy inputs (docs/energy.md); each 0 when not given, and none
 * has a default: facility power is IT power x pue, so CO2e, the power cost
 * and a power cap need the PUE (pp_job_check).
 */
typedef struct pp_energy_inputs {
	bool on;             /* --energy on: the energy lines with no other input */
	double pue;          /* facility power over IT power, >= 1 */
	double gco2_per_kwh; /* grid carbon intensity, grams CO2e per kWh */
	double usd_per_kwh;  /* electricity price */
	double power_cap_w;  /* facility power a plan may draw (search's constraint) */
} pp_energy_inputs;

/* Whether the job asks for the energy lines: --energy on or any energy input. */
static inline bool pp_energy_asked(const pp_energy_inputs *e)
{
	return e->on || e->pue > 0 || e->gco2_per_kwh > 0 || e->usd_per_kwh > 0 ||
	       e->power_cap_w > 0;
}

/* The MoE token dispatcher (job.moe_dispatcher). */
typedef enum pp_moe_dispatcher {
	PP_DISPATCH_ALLTOALL = 0, /* Megatron-Core alltoall: each routed copy sent on its own */
	PP_DISPATCH_DEEPEP = 1,   /* DeepEP: once per node over the network, then NVLink */
	/* DeepEP with the dispatch in FP8 (DeepSeek-V3 report §3.3): the forward
	 * dispatch and the backward's gradient to the experts carry the FP8
	 * GEMMs' quantised inputs (1 byte and a 4-byte scale per 128), the two
	 * combines BF16; under --precision fp8 */
	PP_DISPATCH_DEEPEP_FP8 = 2,
} pp_moe_dispatcher;

typedef struct pp_job {
	long long global_batch; /* sequences per iteration */
	int seq_len;            /* tokens per sequence */
	double train_tokens;    /* token budget for time/cost; 0 = not given */
	pp_precision precision;
	pp_fp8_recipe fp8_recipe; /* under PP_PREC_FP8; pp_job_init: delayed */
	int grad_bytes; /* bytes per gradient element: 2 (bf16/fp16) or 4 (fp32 main grads) */
	/* Bytes per element of the gradient a sharded data-parallel group
	 * reduce-scatters per layer (FSDP's MixedPrecision reduce_dtype: 4 under
	 * Composer's DEFAULT, 2 under PURE); 0 = grad_bytes. */
	int reduce_bytes;
	/* Under fp8 (--fp8-params): the GEMM weights are stored as the recipe's
	 * quantised tensor and no BF16 copy of them is kept (TransformerEngine
	 * fp8_model_init; Megatron-LM --fp8-param-gather, NeMo fp8_params); the
	 * optimizer keeps their fp32 master copy.  Off by default. */
	bool fp8_params;
	pp_optimizer optimizer;
	/* torch.compile over the model (torchtitan compile.enable, --compile):
	 * Inductor fuses each chain of element-wise ops into one kernel, so an
	 * eager stack's ops (kern.eager_elementwise) run fused.  Off by
	 * default, torchtitan's default (JobConfig compile.enable = false). */
	bool compile;
	/* The MoE routing of --moe-routing (pp_moe_routing_parse; seed 000
	 * Eq. 10): `set` false = uniform routing, every number as without it. */
	pp_moe_spec moe_routing;
	/* How an MoE layer's tokens reach their experts (--moe-dispatcher):
	 * Megatron-Core's all-to-all, a copy per routed expert, or DeepEP's
	 * deduplicated, node-limited dispatch (pp_moe_dispatch_copies). */
	pp_moe_dispatcher moe_dispatcher;
	pp_finetune ft; /* fine-tuning: frozen weights, LoRA adapters, NF4 base */
	/* Energy and carbon (--energy, --pue, ...; docs/energy.md): 0 = not given. */
	pp_energy_inputs energy;
} pp_job;

/* Bytes per element a sharded data-parallel reduce-scatter moves (the
 * stack's reduce dtype; job.grad_bytes unless it says otherwise). */
static inline int pp_job_reduce_bytes(const pp_job *j)
{
	return j->reduce_bytes > 0 ? j->reduce_bytes : j->grad_bytes;
}

/* ----------------------------------------------------------------- plan */

typedef enum pp_recompute {
	PP_RECOMPUTE_NONE = 0,
	PP_RECOMPUTE_SELECTIVE = 1, /* core attention recomputed (Korthikanti et al. 2022) */
	PP_RECOMPUTE_FULL = 2,      /* only each layer's input is kept */
} pp_recompute;

typedef enum pp_schedule {
	PP_SCHED_1F1B = 0,
	PP_SCHED_GPIPE = 1,
	PP_SCHED_INTERLEAVED = 2,
	PP_SCHED_ZB = 3,        /* zero-bubble ZB-H1 */
	PP_SCHED_WSHAPE = 4,    /* DHelix W-shaped pipeline: model folded into a U, forward of
	                        one micro-batch co-executed with the backward of another
	                        (seed 002 §4.1, dhelix.h) */
	PP_SCHED_DUALPIPE = 5,  /* DeepSeek-V3's DualPipe (§3.2.1, sched_dualpipe.c) */
	PP_SCHED_DUALPIPEV = 6, /* DualPipeV: DualPipe cut in half (sched_dualpipev.c) */
} pp_schedule;

typedef struct pp_plan {
	int tp, pp, dp, cp, ep, etp; /* etp: tensor parallelism inside an expert */
	int vp;                      /* virtual stages (model chunks) per pipeline rank */
	int mbs;                     /* micro-batch size, sequences */
	int zero;                    /* 0..3; 1 is Megatron's distributed optimizer */
	pp_recompute recompute;
	/* Under selective recompute, what is recomputed (Megatron-Core
	 * --recompute-modules): an OR of PP_RECOMPUTE_MODULE_*; 0 is
	 * Megatron-Core's default, core attention alone. */
	unsigned recompute_modules;
	bool sp;         /* sequence parallelism (with tp > 1) */
	bool flash;      /* fused/flash attention: no s x s score matrices kept */
	bool tp_overlap; /* TP communication overlapped with GEMMs (Megatron
	                                --tp-comm-overlap, userbuffers) */
	bool ep_overlap; /* EP all-to-all overlapped with another micro-batch's compute */
	pp_schedule schedule;
	/* 2D tensor parallelism (seed 003 Table II): n_t = tp x tp2 GPUs, tp = n_1
	 * splitting heads and the MLP, tp2 = n_2 splitting the sequence; weights
	 * are replicated over tp2.  With `summa`, the activation-weight GEMMs are
	 * SUMMA multiplies on the tp x tp2 grid instead (Table A2): no replicated
	 * weights, broadcasts in `summa_nb` panels that overlap with the GEMM. */
	int tp2;                  /* n_2; 1 = 1D tensor parallelism */
	bool summa;               /* 2D TP with SUMMA GEMMs */
	int summa_nb;             /* SUMMA panel count n_b (>= 1) */
	char order[PP_ORDER_MAX]; /* rank order, innermost first, e.g. "tp-cp-ep-dp-pp" */
	/* Uneven pipeline split, as Megatron-LM's --decoder-first-pipeline-num-layers
	 * and --decoder-last-pipeline-num-layers: the first (last) pipeline rank
	 * holds that many transformer layers, the others split the rest evenly;
	 * 0 = not given (an even share).  Or, as --account-for-embedding-in-
	 * pipeline-split / --account-for-loss-in-pipeline-split (not combinable with
	 * the two counts): the embedding (the LM head and loss) counts as one layer
	 * in an even split of layers + 1 (+ 1), so the first (last) rank holds one
	 * transformer layer fewer.  pp_stage_layers (workload.h) gives the split. */
	int first_stage_layers;
	int last_stage_layers;
	bool embedding_as_layer;
	bool loss_as_layer;
	/* CPU offload (docs/memory.md, "CPU offload"): the optimizer's states,
	 * master weights and step on the host (ZeRO-Offload, DeepSpeed
	 * offload_optimizer; Megatron-LM --optimizer-cpu-offload), the parameter
	 * shards on the host between uses (ZeRO-Infinity offload_param, ZeRO-3
	 * only), the activations saved for backward on the host (DeepSpeed
	 * cpu_checkpointing, Megatron-Core --cpu-offloading).  All need the
	 * system's host fields (host_link_bytes_per_s, host_memory_bytes). */
	bool offload_optimizer;
	bool offload_params;
	bool offload_activations;
	/* How many transformer layers of each model chunk offload their saved
	 * activations, the first ones (Megatron-Core --cpu-offloading-num-layers);
	 * 0: every layer.  Only with offload_activations. */
	int offload_layers;
	/* Derived by pp_plan_resolve: */
	long long microbatches; /* per pipeline, per iteration */
} pp_plan;

/* --------------------------------------------------------------- names */

const char *pp_precision_name(pp_precision p);
/* Bytes of one activation element under precision p, as Megatron-LM keeps
 * activations (docs/memory.md): 4 under fp32, 2 under bf16 and fp16, and 2
 * under fp8 too: FP8 runs the GEMMs, the activations stay BF16 except the
 * GEMM inputs the recipe saves for the weight gradient
 * (pp_fp8_saved_input_bytes, kernel.h).  Every activation, operation and
 * pipeline send of the library sizes its elements by this. */
double pp_activation_bytes(pp_precision p);
/* The share of a stage's `layers` (over its plan->vp model chunks) whose
 * saved activations go to the host: 0 without offload_activations, 1 for
 * every layer (offload_layers 0), else the first offload_layers of each
 * chunk over the chunk's layers, at most 1. */
double pp_offload_fraction(const pp_plan *plan, double layers);
/* How output names the system's tiers and the GPU's memory: "NVLink", "PCIe
 * 4.0", "InfiniBand", "RoCE", "network" (a network not stated), "none" (no
 * NICs); "HBM3", "GDDR6X", "memory" (not stated).  Static strings. */
const char *pp_intra_link_label(const pp_system *s);
const char *pp_inter_network_label(const pp_system *s);
const char *pp_memory_label(const pp_gpu *g);
const char *pp_recompute_name(pp_recompute r);
const char *pp_schedule_name(pp_schedule s);
/* Parse a name; returns PP_EINPUT (with `err` naming `field`) on an unknown one. */
/*
 * The routing spec of `--moe-routing`: "zipf:S[,drift:D][,capacity:C]" (the
 * Zipf skew at step 0, S >= 0; the decay toward uniform in steps, D > 0,
 * left out = none; the capacity factor, C > 0, left out = dropless) into
 * *skew, *drift_steps, *capacity_factor.  PP_EINPUT naming the part and what
 * was expected.
 */
pp_status pp_moe_routing_parse(const char *text, double *skew, double *drift_steps,
                               double *capacity_factor, pp_error *err);
pp_status pp_precision_parse(const char *s, const char *field, pp_precision *out, pp_error *err);
/* The --fp8-recipe words: delayed, current, mxfp8, rowwise, blockwise (static
 * strings; "?" for a value outside the enum). */
const char *pp_fp8_recipe_name(pp_fp8_recipe r);
/* "alltoall", "deepep" or "deepep-fp8"; parse sets *out or returns PP_EINPUT with `field`. */
const char *pp_moe_dispatcher_name(pp_moe_dispatcher d);
pp_status pp_moe_dispatcher_parse(const char *s, const char *field, pp_moe_dispatcher *out,
                                  pp_error *err);
pp_status pp_fp8_recipe_parse(const char *s, const char *field, pp_fp8_recipe *out, pp_error *err);
pp_status pp_recompute_parse(const char *s, const char *field, pp_recompute *out, pp_error *err);
/* Megatron-Core's --recompute-modules that paraplan models: core attention
 * (its default) and MLA's up-projections (the q, k, v they produce are
 * dropped after core attention's forward and recomputed from the latents
 * for its backward). */
#define PP_RECOMPUTE_MODULE_CORE_ATTN 1u
#define PP_RECOMPUTE_MODULE_MLA_UP_PROJ 2u
/* A comma list of core_attn and mla_up_proj into *(unsigned *)dst; another
 * Megatron-Core module name is refused as not modelled.  The writer: the
 * names of `bits` comma-separated into buf (size n), "core_attn" for 0. */
pp_status pp_recompute_modules_parse(const char *s, void *dst, pp_error *err);
void pp_recompute_modules_name(unsigned bits, char *buf, size_t n);
/* What the plan recomputes of a layer's modules: 0 unless its recompute is
 * selective, then its recompute_modules, core attention when 0. */
unsigned pp_plan_recomputed_modules(const pp_plan *p);
/* How many times per micro-batch the plan gathers each layer's sharded
 * parameters: 2 under ZeRO-3 (forward, and again for backward), 1 under
 * ZeRO-2 on a stack that shards with PyTorch FSDP (framework
 * compute_copy_bytes > 0: FSDP1 SHARD_GRAD_OP, FSDP2 without resharding
 * after forward, which gather each unit's parameters for its forward and
 * keep them for its backward), 0 otherwise (ZeRO-0..2 elsewhere gathers,
 * if at all, once per iteration after the step).  A plan that gathers per
 * layer also reduce-scatters each layer's gradients in its backward, every
 * micro-batch, and has no per-iteration data-parallel traffic. */
int pp_plan_layer_gathers(const pp_plan *p, const pp_system *s);
/* Whether DeepSpeed's pipeline engine drives the plan's data-parallel
 * reduction (framework.pipe_engine_reduce with pp > 1): after the last
 * backward, and under bf16 as an all-reduce of the fp32 gradient. */
bool pp_plan_pipe_engine_reduce(const pp_plan *p, const pp_system *s);
pp_status pp_schedule_parse(const char *s, const char *field, pp_schedule *out, pp_error *err);

/* --------------------------------------------------------------- presets */

typedef enum pp_kind {
	PP_KIND_MODEL = 0,
	PP_KIND_GPU = 1,
	PP_KIND_SYSTEM = 2,
	PP_KIND_FRAMEWORK = 3, /* software-stack overheads applied to systems */
	PP_KIND_OVERLAP = 4,   /* DHelix overlap tables (data/overlap; dhelix.h) */
	PP_KIND_RUNS = 5,      /* what the public-runs reader knows of records (data/runs) */
} pp_kind;

/* Number of built-in presets of `kind`, and the name of the i-th (static storage). */
size_t pp_preset_count(pp_kind kind);
const char *pp_preset_name(pp_kind kind, size_t i);
/* The embedded JSON text of the preset `name` of `kind` (static storage) and
 * its path under data/ ("data/overlap/h100.json"), for a kind whose reader
 * lives outside spec (the overlap tables); an unknown name as
 * pp_model_preset's. */
pp_status pp_preset_text(pp_kind kind, const char *name, const char **text, const char **path,
                         pp_error *err);

/*
 * Fill `out` from the built-in preset `name` (case-insensitive; aliases
 * accepted).  On an unknown name, err->text suggests the nearest names.
 */
pp_status pp_model_preset(const char *name, pp_model *out, pp_error *err);
pp_status pp_gpu_preset(const char *name, pp_gpu *out, pp_error *err);
pp_status pp_system_preset(const char *name, pp_system *out, pp_error *err);

/*
 * Fill `out` from a file.  A model file may be paraplan's own JSON or a
 * HuggingFace config.json (recognised by its "model_type" or "architectures"
 * key).  `path` is only read; it must be a regular file of at most 64 MiB
 * (a directory, FIFO or device is refused without blocking), or "-" for
 * standard input.
 */
pp_status pp_model_load(const char *path, pp_model *out, pp_error *err);
pp_status pp_gpu_load(const char *path, pp_gpu *out, pp_error *err);
pp_status pp_system_load(const char *path, pp_system *out, pp_error *err);

/*
 * Apply the training framework `name` (a data/framework preset: "megatron",
 * "llm-foundry", "deepspeed", "torchtitan", ...) to `s`: every parameter of
 * kind PP_PARAM_FRAMEWORK (params.h: memory layout, loss, ZeRO-3, overlaps,
 * overheads) is reset to data/framework/megatron.json's and then to what the
 * framework's file states.  The system's link parameters (kind
 * PP_PARAM_SYSTEM: nvlink_eff, nic_eff, nvls_gain, calibrated per system) are
 * kept, so a plan gets the same network whichever stack runs it.
 */
pp_status pp_system_set_framework(pp_system *s, const char *name, pp_error *err);

/* A preset name, or a path if `ref` names an existing file (or looks like a
 * path: a '/', ".json"), or "-" for standard input. */
pp_status pp_model_resolve(const char *ref, pp_model *out, pp_error *err);
pp_status pp_system_resolve(const char *ref, pp_system *out, pp_error *err);

/*
 * Parse from memory (what the loaders and the fuzz targets call).  `text`
 * need not be NUL-terminated; `source` names it in errors.
 */
pp_status pp_model_from_json(const char *text, size_t len, const char *source, pp_model *out,
                             pp_error *err);
pp_status pp_model_from_hf_json(const char *text, size_t len, const char *source, pp_model *out,
                                pp_error *err);
pp_status pp_gpu_from_json(const char *text, size_t len, const char *source, pp_gpu *out,
                           pp_error *err);
pp_status pp_system_from_json(const char *text, size_t len, const char *source, pp_system *out,
                              pp_error *err);

/*
 * The source JSON of a system reference (a preset name or a file path), as
 * paraplan reads it; *text is malloc'ed and NUL-terminated, the caller frees it.
 * (The writers that start from it: calibrate --nccl-tests, --step-times.)
 */
pp_status pp_system_source_text(const char *ref, char **text, size_t *len, pp_error *err);
/* The same for a GPU reference (calibrate --step-times writes it inline). */
pp_status pp_gpu_source_text(const char *ref, char **text, size_t *len, pp_error *err);

/* The SM count (AMD: compute units) of preset GPU `gpu` ("h100-sxm") from its
 * vendor's architecture document; 0 when the table has no such GPU
 * (src/spec/datasheet.c). */
double pp_gpu_datasheet_sms(const char *gpu);
/* The preset GPU's NVIDIA compute capability x 10 (80 Ampere GA100, 90 Hopper,
 * 100 Blackwell), from the same table; 0 when unknown or not NVIDIA. */
int pp_gpu_datasheet_arch(const char *gpu);

/* --------------------------------------------------------------- checks */

/* Range checks of one struct: positive sizes, heads dividing hidden, ... */
pp_status pp_model_check(const pp_model *m, pp_error *err);
pp_status pp_gpu_check(const pp_gpu *g, pp_error *err);
pp_status pp_system_check(const pp_system *s, pp_error *err);
pp_status pp_job_check(const pp_job *j, pp_error *err);
/* Whether the system's GPU runs the job's precision and FP8 recipe (FP8 or
 * BF16 tensor cores; MXFP8 needs Blackwell, pp_gpu_datasheet_arch >= 100).
 * PP_EINPUT naming job.precision or job.fp8_recipe otherwise.  pp_plan_resolve
 * applies it; a search applies it once before its plans. */
pp_status pp_job_check_gpu(const pp_job *j, const pp_system *s, pp_error *err);

/* The fine-tuning fields against the model (src/spec/finetune.c): a rank
 * of 1..hidden, targets only with a rank, at most num_layers frozen
 * layers, NF4 only for frozen weights, something left to train.
 * PP_EINPUT naming job.lora_rank, ... otherwise. */
pp_status pp_finetune_check(const pp_job *j, const pp_model *m, pp_error *err);
/* Whether the job fine-tunes at all (any field of job->ft set). */
bool pp_finetune_on(const pp_job *j);
/* Whether layer `layer`'s pretrained weights are frozen; whether it trains
 * anything (its own weights or adapters). */
bool pp_finetune_layer_frozen(const pp_job *j, int layer);
bool pp_finetune_layer_trains(const pp_job *j, int layer);
/* Whether the embedding and LM head are frozen (--freeze embeddings or
 * base, or LoRA); the first layer backward reaches: 0 when the embeddings
 * train, else the first layer that trains (layers below run forward only). */
bool pp_finetune_embeddings_frozen(const pp_job *j);
int pp_finetune_backward_from(const pp_job *j);
/* Parameters the job trains (adapters included; the whole model without
 * fine-tuning), before any parallel split. */
double pp_finetune_trainable_params(const pp_job *j, const pp_model *m);
/* The target bits as "qkv,proj,fc1,fc2" into buf (n bytes); returns buf. */
const char *pp_finetune_targets_name(unsigned bits, char *buf, size_t n);
/* The job's adapter targets (all four when a rank is given without them). */
unsigned pp_finetune_targets(const pp_job *j);
/* LoRA parameters of one layer on one GPU under tensor parallelism `tp`:
 * per target r x (in + out), the side the base GEMM splits split over tp
 * (column-parallel: B r x out/tp, A replicated; row-parallel: A in/tp x r,
 * B replicated), for a layer of `layer`'s kind that trains (the caller
 * asks pp_finetune_layer_trains); 0 without a rank. */
double pp_finetune_lora_params(const pp_job *j, const pp_model *m, int layer, int tp);
/* FLOPs of one layer's adapters for `tokens` tokens on one GPU, forward
 * (x A, then (xA) B: 2 r (in + out/tp) per token a target) ; backward is
 * twice that (data and weight gradients of both). */
double pp_finetune_lora_fwd_flops(const pp_job *j, const pp_model *m, int layer, int tp,
                                  double tokens);
/* Bytes per parameter of an NF4 weight with QLoRA's double quantisation:
 * 4 bits, 8-bit absmax per block of 64, an fp32 scale per 256 blocks. */
double pp_finetune_nf4_bytes(void);

/* Defaults a user who gives nothing else gets: bf16, fp32 main grads, Adam. */
void pp_job_init(pp_job *j);
/* tp=pp=cp=ep=vp=mbs=1, dp=0 and etp=0 (derive), zero=0, 1F1B, no recompute, flash
 * attention, Megatron's order tp-cp-ep-dp-pp; tp2=1, summa off, summa_nb=1; an
 * even pipeline split (first/last_stage_layers 0, embedding/loss_as_layer off). */
void pp_plan_init(pp_plan *p);

/*
 * DHelix's overlap profile (`overlap`: one was given) applies to the wshape
 * schedule only: PP_OK, or PP_EINPUT (err->field `verb`) naming the plan's
 * schedule.
 */
pp_status pp_plan_overlap_check(const pp_plan *p, bool overlap, const char *verb, pp_error *err);

/*
 * Check `plan` against the model, the system, `gpus` and the job, derive what
 * is left to derive (dp when 0, etp when 0, microbatches) and write it back
 * into `plan`.  The first violated constraint is reported with its field
 * ("plan.tp", ...) and the numbers involved.
 */
pp_status pp_plan_resolve(pp_plan *plan, const pp_model *m, const pp_system *s, long long gpus,
                          const pp_job *job, pp_error *err);

/*
 * The pipeline split alone: pp, vp and the four split fields above against the
 * model's layers, Megatron-LM's rules (pp_plan_resolve applies it; a search
 * uses it to keep only pipeline degrees a split allows).  PP_EINPUT with the
 * field ("plan.first_stage_layers", ...) and the numbers on a violation.
 */
pp_status pp_plan_check_split(const pp_plan *plan, const pp_model *m, pp_error *err);

/*
 * A split rank order (place.h: "tp-dp:2-pp:2-dp-pp") against the plan's
 * degrees: true when the order splits nothing, or every `dim:N` divides its
 * dimension's degree and the experts are ones a split places (ep 1, etp =
 * tp).  False with the reason in `err` (may be NULL) otherwise.
 * pp_plan_resolve applies it; a search uses it to skip split orders that do
 * not fit a candidate's degrees.
 */
bool pp_order_split_fits(const pp_plan *plan, pp_error *err);

/* The rank order's grammar alone (pp_plan_resolve's first check of it):
 * tp, cp, dp, pp once each, ep and tp2 at most once, a dimension split as
 * `dim:N` (N > 1) named again bare.  PP_EINPUT on plan.order otherwise. */
pp_status pp_order_check(const char *order, pp_error *err);

/* ----------------------------------------------------------- parameters */

void pp_model_params(const pp_model *m, pp_param_count *out);
/* Parameters of layer `layer` (0-based). */
void pp_model_layer_params(const pp_model *m, int layer, pp_layer_params *out);
/* True when layer `layer` (0-based) has an MoE MLP. */
bool pp_model_layer_is_moe(const pp_model *m, int layer);

#ifdef __cplusplus
}
#endif
#endif
