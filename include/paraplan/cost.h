/*
 * paraplan — cost: seconds of each operation and collective on given hardware.
 *
 * Compute: the kernel model (kernel.h: measured H100 tables carried to the
 * GPU's datasheet) and the training stack's fractions of it, per GPU.  Communication: alpha-beta per algorithm (seed 004 §2.3-2.4; seed 003
 * S2 two-tier NVLink/NIC model), the algorithm NCCL would pick (the fastest),
 * on the placement the rank order gives each group.
 */
#ifndef PARAPLAN_COST_H
#define PARAPLAN_COST_H

#include "stage_time.h"
#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds of one GPU's share of `op` (all its instances) at `precision`, by
 * the kernel model and the stack's fractions of it (g->kern as
 * pp_system_compute_model set it; a GPU not through it gets the reference
 * kernels carried to it, without the stack's GPU-dependent terms).  NAN for
 * a GPU with no SM count or BF16 peak. */
double pp_op_time(const pp_gpu *g, pp_precision precision, const pp_op *op);
/* The host's time to issue the op's kernels (kern.host_queue: each
 * kernel launched outside a CUDA graph in the GPU's measured per-call fixed
 * time less a busy stream's gap, pp_kernel_stream_params; 0 without a host
 * queue and for a graphed op).  It is not added to
 * pp_op_time: a layer's phase takes the longer of its kernels' time and
 * their issue time (src/cost/stage_rules.c). */
double pp_op_host_s(const pp_gpu *g, pp_precision precision, const pp_op *op);

/*
 * What the training stack's kernels add to compute time, each term the time
 * with it less the time without it
 * (docs/kernel.md "Training stacks"):
 *   launch_s    the fixed time per kernel launched (eff.kernel_s per launch
 *               under the stack's fractions, the isolated-call fixed times
 *               on measured tables); 0 under CUDA graphs (kern.cuda_graphs)
 *   eager_s     element-wise, norm, RoPE, activation and loss ops run as
 *               separate eager PyTorch kernels instead of fused ones
 *               (kern.eager_elementwise, not --compile on)
 *   autocast_s  torch.autocast's bf16 casts of fp32 weights
 *               (kern.autocast_weight_cast)
 *   grad_accum_s weight gradients cast and added into fp32 buffers by
 *               kernels of their own each micro-batch (kern.grad_accum_kernel)
 *   unfused_ce_s the loss as Megatron-Core's unfused vocab-parallel cross
 *               entropy instead of fused kernels (kern.unfused_cross_entropy)
 *   fsdp_grad_s  FSDP1's cast and pre-divide of each layer's unsharded
 *               gradient before its reduce-scatter, FSDP2's copies out of
 *               each all-gather and into each reduce-scatter, each
 *               micro-batch (framework.fsdp_grad_passes, fsdp2_copies; on
 *               either compute path)
 *   moe_sync_s  the MoE layers' host sync: the experts' kernels issued after
 *               the host waited for the GPU instead of ahead of it, each
 *               micro-batch (framework.moe_host_sync; on either path)
 * The terms overlap a little (an eager kernel's launch is in both launch_s
 * and eager_s), so they are attributions, not a partition.
 */
typedef struct pp_stack_terms {
	double launch_s;
	double eager_s;
	double autocast_s;
	double grad_accum_s;
	double unfused_ce_s;
	double fsdp_grad_s;
	double moe_sync_s;
} pp_stack_terms;

/* The stack's terms in op `op` (seconds, written to *out). */
void pp_op_stack_terms(const pp_gpu *g, pp_precision precision, const pp_op *op,
                       pp_stack_terms *out);

/*
 * The stack's terms in one iteration's compute on pipeline rank `stage`:
 * its layers, the embedding (rank 0) and the head (the last rank), every
 * micro-batch (plan->microbatches, resolved).  All 0 unless the GPU is on
 * the kernel path, fsdp_grad_s and moe_sync_s excepted.  Uses a workspace of its own (allocated and freed here).
 * PP_ENOMEM when it cannot be allocated; PP_OK otherwise.
 */
pp_status pp_stage_stack_terms(const pp_model *m, const pp_system *s, const pp_job *job,
                               const pp_plan *plan, int stage, pp_stack_terms *out, pp_error *err);

/* ------------------------------------------------ collective algorithms */

/*
 * A group's network as the collective algorithms see it: n GPUs, nd of them
 * in each NVLink domain (1 <= nd <= n), and the bandwidth one GPU of the
 * group sees inside a domain (bw_f, NVLink) and across domains (bw_s, its
 * share of the node's NICs), efficiencies applied (pp_coll_net_init).
 */
typedef struct pp_coll_net {
	const pp_system *system; /* latencies, NVLS */
	int n, nd;
	double bw_f_bytes_per_s, bw_s_bytes_per_s;
} pp_coll_net;

/*
 * One collective algorithm (src/cost/coll_*.c, one file each; the registry
 * is src/cost/coll_list.h).  It implements the kinds in `kinds` (bit 1u <<
 * pp_coll_kind); `applies` (NULL: every group) says whether it runs on the
 * group's layout and system; `time` is its alpha-beta seconds for a buffer
 * of `bytes` (the sizes of pp_coll.bytes) on a group of n >= 2.  `opt_in`
 * algorithms are candidates only on a system with `coll_recursive` set.
 */
typedef struct pp_coll_algo {
	const char *name;
	unsigned kinds;
	bool opt_in;
	bool (*applies)(pp_coll_kind kind, const pp_coll_net *net);
	double (*time)(pp_coll_kind kind, double bytes, const pp_coll_net *net);
	/* NCCL's latency table the algorithm runs under (pp_coll_nccl_table):
	 * ring and tree run every protocol; the others, Simple only. */
	int nccl_table;
} pp_coll_algo;

/*
 * NCCL's protocols (src/cost/coll_proto.c, NCCL src/graph/tuning.cc): Simple
 * (full bandwidth, highest latency), LL128 (120 of 128 bytes payload) and
 * LL (8-byte stores with a flag: half the bandwidth, lowest latency).  Simple
 * is 0: paraplan's alpha-beta formulas, with the system's calibrated alpha
 * and efficiency, are Simple's; LL128 and LL scale them by NCCL's ratios.
 */
typedef enum pp_coll_proto { PP_PROTO_SIMPLE = 0, PP_PROTO_LL128, PP_PROTO_LL } pp_coll_proto;
#define PP_NPROTOS 3

/* The NCCL latency table an algorithm's latency is scaled by. */
typedef enum pp_coll_nccl_table {
	PP_NCCL_NONE = 0, /* not an NCCL algorithm: Simple only, no scaling */
	PP_NCCL_RING,
	PP_NCCL_TREE,
	PP_NCCL_NVLS,
	PP_NCCL_PAT
} pp_coll_nccl_table;

/* "simple", "LL128", "LL" (NCCL_PROTO's spelling). */
const char *pp_coll_proto_name(pp_coll_proto p);

/*
 * NCCL's modelled latency, microseconds, of collective `kind` under `table`
 * and protocol `p` on n ranks of which nd share a node (ncclTopoTuneModel:
 * baseLat + hwLat per step, NVLink or PCI inside a node, NET across; the
 * network's own graph latency taken as 0, the x86 net overhead 1 us).  0
 * where NCCL has no such pair.
 */
double pp_coll_nccl_lat_us(pp_coll_nccl_table table, pp_coll_proto p, pp_coll_kind kind, int n,
                           int nd, bool nvlink);

/* The factor NCCL applies to an algorithm's bus bandwidth `bus_bw` (bytes/s)
 * under protocol p on system s (ring LL 0.5, ring LL128 0.92, tree LL 1/3.8,
 * tree LL128 7/9 in a node and 120/128 across; LL's bus bandwidth at most
 * NCCL's llMaxBw, by GPU generation in one node, by node count across); 0
 * where the pair is not run. */
double pp_coll_nccl_bw_factor(pp_coll_nccl_table table, pp_coll_proto p, int n, int nd,
                              const pp_system *s, double bus_bw);

/* Whether NCCL enables protocol p for `table` on a system: LL128 needs
 * NVLink inside the node (typeIntra <= PATH_NVB) and compute capability 7.0
 * or more; NVLS and PAT run Simple only. */
bool pp_coll_proto_enabled(pp_coll_nccl_table table, pp_coll_proto p, const pp_system *s);

/* The registry, in the order that breaks ties (the first of equal times
 * wins), and its length. */
extern const pp_coll_algo *const pp_coll_algos[];
extern const int pp_coll_nalgos;

/* The registered algorithm called `name`; NULL when none is. */
const pp_coll_algo *pp_coll_algo_find(const char *name);

/* `net` for group layout `l` on system `s`. */
void pp_coll_net_init(pp_coll_net *net, const pp_system *s, const pp_layout *l);

/* Whether `a` is a candidate for `kind` on `net`: it implements the kind, it
 * applies to the layout, and it is in the system's candidate set. */
bool pp_coll_algo_candidate(const pp_coll_algo *a, pp_coll_kind kind, const pp_coll_net *net);

/*
 * Seconds of one collective on its group: the fastest candidate algorithm's
 * (NCCL's choice by its own cost model), ties to the earlier in the registry;
 * `algo_out` (may be NULL) receives it.  A group of one, or nothing to move,
 * costs nothing and chooses no algorithm (NULL).
 */
double pp_coll_time(const pp_system *s, const pp_layout *l, pp_coll_kind kind, double bytes,
                    const pp_coll_algo **algo_out);

/*
 * pp_coll_time with NCCL's protocols: every (algorithm, protocol) pair the
 * system enables is a candidate (none but Simple on a system with
 * coll_recursive, an MPI stack), and `proto_out` (may be NULL) receives the
 * winner's protocol (Simple when nothing moves).  Ties go to the earlier
 * algorithm, then to Simple, LL128, LL in that order.  pp_coll_time is this
 * with proto_out NULL.
 */
double pp_coll_time_proto(const pp_system *s, const pp_layout *l, pp_coll_kind kind, double bytes,
                          const pp_coll_algo **algo_out, pp_coll_proto *proto_out);

/*
 * DeepEP's deduplicated MoE dispatch or combine (job.moe_dispatcher deepep,
 * pp_moe_dispatch_copies) on group layout `l`: each GPU sends `nic_bytes`
 * over its share of the node's NICs and `nvl_bytes` over NVLink at once
 * (DeepEP forwards from its network buffers over NVLink while they fill), so
 * the slower of the two sets the time; the latency is the all-to-all's (the
 * "direct" algorithm's, which `algo_out` (may be NULL) receives).
 */
double pp_coll_dispatch_time(const pp_system *s, const pp_layout *l, double nic_bytes,
                             double nvl_bytes, const pp_coll_algo **algo_out);

/* Textbook single-tier forms (seed 004 §2.3-2.4, Exercise 1): all-reduce of
 * `bytes` over `n` GPUs on links of `bw` bytes/s with latency `alpha` s. */
double pp_allreduce_ring_s(double bytes, int n, double bw, double alpha);
double pp_allreduce_tree_s(double bytes, int n, double bw, double alpha);

/* --------------------------------------------------------- stage profile */

/*
 * The contract between cost and schedule: every operation and collective one
 * GPU of a pipeline stage runs, timed, in order (embedding, dense layers, MoE
 * layers, head; then the stage's own transfers, data-parallel traffic and
 * optimizer), each with the overlap rule that decides how much of it is on
 * the critical path.  The rules live in one place (pp_stage_profile_sum);
 * pp_stage_cost is that sum, memoised.
 */
typedef enum pp_overlap_rule {
	PP_RULE_EXPOSED = 0, /* on the critical path as it is */
	PP_RULE_TP = 1,      /* n_1 TP traffic: (1 - tp_overlap_hidden) of it with tp_overlap */
	PP_RULE_EP = 2,      /* EP / expert-TP traffic: less what paired layers hide (ep_overlap) */
	PP_RULE_CP_RING = 3, /* CP ring p2p: hidden under the attention compute of its phase */
	PP_RULE_HIDDEN = 4,  /* runs under compute that does not depend on it (SP re-gather) */
	PP_RULE_SUMMA = 5,   /* SUMMA panel: the first exposed, later ones under the GEMM
	                          entry `overlap` (seed 003 App. A) */
	PP_RULE_ZERO3 = 6,   /* ZeRO-3 per-layer gather/scatter: under zero3_overlap of a
	                          layer's compute */
	PP_RULE_PP = 7,      /* pipeline send/receive: the schedule places it */
	PP_RULE_DP = 8,      /* per iteration: under dp_overlap of the last backward
	                          (the schedule decides) */
	PP_RULE_EMB_SYNC = 9,   /* per iteration: tied-embedding gradient all-reduce */
	PP_RULE_OPTIMIZER = 10, /* per iteration: the optimizer step */
	PP_RULE_DP_GATHER = 11, /* per iteration: a sharded optimizer's parameter all-gather
	                           after the step, under param_gather_overlap of the next first
	                           forward (the schedule decides) */
	PP_RULE_HOST = 12       /* per layer, per micro-batch: a CPU-offload transfer over the
	                           host link (offloaded parameters, activations), prefetched under
	                           the layer's compute; the excess is exposed, in zero3_s */
} pp_overlap_rule;

typedef enum pp_profile_unit {
	PP_UNIT_EMBEDDING = 0,
	PP_UNIT_DENSE_LAYERS = 1,
	PP_UNIT_MOE_LAYERS = 2,
	PP_UNIT_HEAD = 3,
	PP_UNIT_STAGE = 4 /* the stage as a whole: pp, ZeRO-3, dp, optimizer */
} pp_profile_unit;

typedef struct pp_profile_entry {
	const char *name; /* static: "qkv", "fc1", "tp-allgather", "dp-reducescatter", ... */
	bool coll;        /* a collective; else a compute operation */
	int kind;         /* pp_op_kind or pp_coll_kind */
	pp_group group;   /* collectives: the group it runs on */
	pp_phase phase;
	pp_overlap_rule rule;
	pp_profile_unit unit;
	double count;             /* occurrences in one unit per micro-batch (per iteration for
	                      dp / emb-sync / optimizer) */
	double times;             /* units of this kind on the stage (layers of the kind; else 1) */
	double seconds;           /* one occurrence */
	double host_s;            /* operations: the host's time to issue one occurrence */
	double flops;             /* one occurrence, all instances (operations) */
	double bytes;             /* one occurrence: HBM bytes (operations), buffer (collectives) */
	double wire_bytes;        /* collectives: bytes this GPU sends per occurrence */
	double panels;            /* SUMMA panels (1 otherwise) */
	int overlap;              /* PP_RULE_SUMMA: index of the GEMM entry it hides under */
	const pp_coll_algo *algo; /* collectives: the algorithm chosen (NULL: nothing moves) */
	pp_coll_proto proto;      /* collectives: its NCCL protocol */
} pp_profile_entry;

#define PP_PROFILE_MAX (4 * (PP_MAX_OPS + PP_MAX_COLLS) + 32)

typedef struct pp_stage_profile {
	int stage;
	int layers;        /* transformer layers on the stage */
	double ep_visible; /* the share of a paired expert all-to-all that shows (pp_stage_time) */
	int n;
	pp_profile_entry e[PP_PROFILE_MAX];
} pp_stage_profile;

/* ------------------------------------------------------------ per stage */

/*
 * Cost of pipeline rank `stage` under a resolved plan.  Allocates nothing.
 * `ws` is scratch the caller provides (one pp_work per thread), readied with
 * pp_work_init; its memo of layer costs is keyed by the model and system
 * pointers, so re-init it when the objects behind them change.
 */
pp_status pp_stage_cost(const pp_model *m, const pp_system *s, const pp_job *job,
                        const pp_plan *plan, int stage, pp_work *ws, pp_stage_time *out,
                        pp_error *err);

/* pp_stage_cost and pp_stage_profile_build of a resolved scenario
 * (scenario.h): its placement and shapes are not derived again. */
pp_status pp_scenario_cost(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_time *out,
                           pp_error *err);
pp_status pp_scenario_profile(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_profile *out,
                              pp_error *err);

/*
 * The timed profile of pipeline rank `stage` (caller-owned `out`, about 70
 * KB: allocate it once).  Allocates nothing; `ws` as for pp_stage_cost.
 */
pp_status pp_stage_profile_build(const pp_model *m, const pp_system *s, const pp_job *job,
                                 const pp_plan *plan, int stage, pp_work *ws, pp_stage_profile *out,
                                 pp_error *err);

/* The stage's times from its profile under the overlap rules: what
 * pp_stage_cost returns for the same stage. */
void pp_stage_profile_sum(const pp_stage_profile *prof, const pp_system *s, const pp_plan *plan,
                          pp_stage_time *out);

#ifdef __cplusplus
}
#endif
#endif
