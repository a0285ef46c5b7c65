/*
 * Compute time by the kernel model and the textbook single-tier all-reduce forms.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "paraplan/cost.h"
#include "paraplan/kernel.h"

/* -------------------------------------------------------------- compute */

static double tensor_peak(const pp_gpu *g, pp_precision prec, bool fp8_op)
{
	switch (prec) {
	case PP_PREC_FP8:
		if (fp8_op && g->fp8_flops > 0)
			return g->fp8_flops;
		return g->bf16_flops > 0 ? g->bf16_flops : g->fp16_flops;
	case PP_PREC_BF16: return g->bf16_flops > 0 ? g->bf16_flops : g->fp16_flops;
	case PP_PREC_FP16: return g->fp16_flops;
	case PP_PREC_FP32:
	default: return g->tf32_flops > 0 ? g->tf32_flops : g->fp32_flops;
	}
}

/*
 * The kernel model (src/kernel/, docs/kernel.md) for a GPU with a measured
 * profile: GEMMs by tile and wave quantisation (FP8 tensor-wise where the op
 * runs in FP8), attention by key length, element-wise ops at the measured
 * bandwidth.
 */
/* Whether the stack runs `op` as its eager PyTorch kernels (pp_op.eager_*),
 * and whether it casts the op's fp32 weight under autocast (pp_op.cast_*). */
static bool runs_eager(const pp_gpu *g, const pp_op *op)
{
	return g->kern.eager_elementwise >= 0.5 && op->eager_kernels > 0;
}

/* Whether the stack runs the op as its unfused decomposition (the loss of
 * Megatron-Core without --cross-entropy-loss-fusion): an eager stack's own
 * decomposition comes first. */
static bool runs_unfused(const pp_gpu *g, const pp_op *op)
{
	return g->kern.unfused_cross_entropy >= 0.5 && op->unfused_kernels > 0 &&
	       !runs_eager(g, op);
}

static bool casts_weight(const pp_gpu *g, const pp_op *op)
{
	return g->kern.autocast_weight_cast >= 0.5 && op->cast_kernels > 0;
}

/* Whether the stack accumulates the op's weight gradient by kernels of its
 * own (pp_op.accum_*). */
static bool accumulates_apart(const pp_gpu *g, const pp_op *op)
{
	return g->kern.grad_accum_kernel >= 0.5 && op->accum_kernels > 0;
}

/* `kernels` memory-bound kernels of an eager stack moving `bytes` in all.
 * mem_fixed_s is what one isolated call costs beyond its bytes, timed from
 * an idle GPU (tools/probe/paraplan_probe.py: an event, the call, an event,
 * synchronise): the host's time to issue the op, during which the GPU
 * waits.  The chain's first kernel pays it as a lone op does
 * (pp_kernel_mem_s); the host issues each later one while the GPU runs
 * the one before, so they take the longer of the bytes' time and the
 * host's, not the sum. */
static double mem_kernels_s(const pp_gpu *g, double bytes, double kernels)
{
	double t_bytes = pp_kernel_mem_s(g, bytes) - g->kern.mem_fixed_s;
	/* In the host queue's stream each kernel pays its GPU-side gap and the
	 * host's issue time is the layer's floor (pp_op_host_s). */
	if (g->kern.host_queue >= 0.5)
		return t_bytes + kernels * g->kern.mem_fixed_s;
	double t_host = (kernels - 1) * g->kern.mem_fixed_s;
	return g->kern.mem_fixed_s + (t_bytes > t_host ? t_bytes : t_host);
}

static double kernel_op_core(const pp_gpu *g, pp_precision prec, const pp_op *op);

/* The op's kernels, then the autocast casts of its weight and the
 * accumulation of its gradient (separate memory-bound kernels) where the
 * stack runs them. */
/* Whether the measured per-call fixed times split into the stream's GPU
 * gap and the host's issue time (framework.host_queue). */
static bool queued(const pp_gpu *g)
{
	return g->kern.host_queue >= 0.5 && g->kern.cuda_graphs < 0.5 &&
	       g->kern.measured_kernels >= 0.5;
}

static double kernel_op_time(const pp_gpu *g, pp_precision prec, const pp_op *op)
{
	/* CUDA graphs replay the kernels with no host issuing each: an isolated
	 * call's fixed time, the host's time to issue it (mem_kernels_s), is
	 * not paid. */
	pp_gpu graphed;
	if (g->kern.cuda_graphs >= 0.5 &&
	    (g->kern.gemm_fixed_s > 0 || g->kern.attn_fixed_s > 0 || g->kern.mem_fixed_s > 0)) {
		graphed = *g;
		graphed.kern.gemm_fixed_s = graphed.kern.attn_fixed_s = graphed.kern.mem_fixed_s =
		    0;
		g = &graphed;
	} else if (queued(g)) {
		/* The host queue: each kernel pays what it costs the GPU in a
		 * busy stream; the host's issue time is pp_op_host_s's. */
		double hg, hm;
		graphed = *g;
		pp_kernel_stream_params(&g->kern, &graphed.kern, &hg, &hm);
		g = &graphed;
	}
	double t = kernel_op_core(g, prec, op);
	if (casts_weight(g, op))
		t += mem_kernels_s(g, op->cast_bytes, op->cast_kernels);
	if (accumulates_apart(g, op))
		t += mem_kernels_s(g, op->accum_bytes, op->accum_kernels);
	return t;
}

static double kernel_op_core(const pp_gpu *g, pp_precision prec, const pp_op *op)
{
	double count = op->count > 0 ? op->count : 1;
	switch (op->kind) {
	case PP_OP_GEMM: {
		bool fp8 = prec == PP_PREC_FP8 && op->fp8 && g->fp8_flops > 0;
		pp_kernel_dtype dt = fp8 ? pp_kernel_dtype_of_recipe(op->fp8_recipe) : PP_KDT_BF16;
		double t = pp_kernel_gemm_s(g, op->m, op->k, op->n, count, dt);
		/* The recipe's rate against the measured tensor-wise table: every
		 * stack's FP8 (Transformer Engine, torchao) runs the forward and
		 * recompute GEMMs with fast accumulation and dgrad and wgrad with
		 * the split accumulator (TE module/base.py _2X_ACC_FPROP = False,
		 * _2X_ACC_DGRAD = _2X_ACC_WGRAD = True; torchao Float8LinearConfig
		 * gemm_config_output use_fast_accum=True, the gradients' False). */
		if (t > 0 && fp8) {
			bool fwd = op->phase == PP_PHASE_FWD || op->phase == PP_PHASE_RECOMPUTE;
			double rate = pp_kernel_fp8_rate(dt, fwd, op->phase == PP_PHASE_BWD_WEIGHT,
			                                 g->compute_capability_x10);
			t = (t - g->kern.gemm_fixed_s) / rate + g->kern.gemm_fixed_s;
		}
		/* FP8: the BF16 input (forward, recompute) or output gradient
		 * (backward-input) is quantised first by the recipe's pass, with
		 * the copy the weight gradient reads (pp_kernel_fp8_quant_bytes),
		 * which then reads both operands already in FP8; weights are cast
		 * once per iteration. */
		if (t >= 0 && fp8 && op->phase != PP_PHASE_BWD_WEIGHT)
			t += count * pp_kernel_fp8_quant_s(g, op->m, op->k, op->fp8_recipe);
		/* A GEMM in FP32 (TF32 tensor cores where the GPU has them) runs
		 * at the measured BF16 kernel's fraction of its own, lower, peak:
		 * the same tiles and waves, each at the slower rate. */
		if (t >= 0 && prec == PP_PREC_FP32)
			t *= tensor_peak(g, PP_PREC_BF16, false) /
			     tensor_peak(g, PP_PREC_FP32, false);
		if (t >= 0)
			return t;
		break; /* no shape: the roofline below */
	}
	case PP_OP_ATTN:
		if (op->n > 0) {
			const pp_kernel_params *k = &g->kern;
			bool bwd = op->phase == PP_PHASE_BWD_INPUT;
			double share = k->attn_stack_fraction > 0 ? k->attn_stack_fraction : 1;
			double eff = (bwd ? k->attn_bwd_eff : k->attn_fwd_eff) * share * op->n /
			             (op->n + k->attn_seq_half) *
			             pp_kernel_attn_head_factor(op->k, bwd, k->attn_fa2 >= 0.5,
			                                        g->compute_capability_x10);
			/* FP32 attention (no flash kernel in FP32) at the same
			 * fraction of the FP32 (TF32) peak. */
			pp_precision ap = prec == PP_PREC_FP32 ? PP_PREC_FP32 : PP_PREC_BF16;
			double tc = op->flops / (tensor_peak(g, ap, false) * eff);
			double tm = op->bytes / (g->memory_bw_bytes_per_s * k->hbm_eff);
			return (tc > tm ? tc : tm) + k->attn_fixed_s;
		}
		break;
	case PP_OP_ELEM:
	default: {
		/* An eager stack's chain of kernels, each reading and writing
		 * its tensor (pp_op.eager_bytes), or the one fused kernel. */
		double tc = op->flops / g->fp32_flops;
		double tm = runs_eager(g, op) ? mem_kernels_s(g, op->eager_bytes, op->eager_kernels)
		            : runs_unfused(g, op)
		                ? mem_kernels_s(g, op->unfused_bytes, op->unfused_kernels)
		                : pp_kernel_mem_s(g, op->bytes);
		return tc > tm ? tc : tm;
	}
	}
	double tc = op->flops / (tensor_peak(g, prec, op->fp8) * g->kern.gemm_eff);
	return tc + g->kern.gemm_fixed_s;
}

/* Whether `name` is one of the NULL-terminated `names`. */
static bool named(const char *name, const char *const *names)
{
	for (; name && *names; names++)
		if (strcmp(name, *names) == 0)
			return true;
	return false;
}

/*
 * Whether the stack replays the op from a CUDA graph: the whole step
 * (kern.cuda_graphs), or the layer part that holds it (kern.graph_parts) as
 * Megatron-Core's cuda_graph_scope captures it (TransformerLayer: "attn" the
 * input norm and the self-attention module, "mlp" the pre-MLP norm and the
 * dense MLP, "moe" the whole MoE layer, "moe_router" the router's GEMM and
 * top-k; "moe_preprocess" the dispatcher's bookkeeping, no op of the list).
 * The residual adds are not told apart by sub-layer and stay outside.
 */
static bool graphed(const pp_gpu *g, const pp_op *op)
{
	static const char *const attn[] = {"attn_norm", "qkv",     "q",     "q_down",  "q_up",
	                                   "q_norm",    "kv_down", "kv_up", "kv_norm", "qk_norm",
	                                   "rope",      "attn",    "proj",  NULL};
	static const char *const mlp[] = {"mlp_norm", "fc1", "act", "fc2", NULL};
	static const char *const router[] = {"router", "topk", NULL};
	static const char *const moe[] = {"mlp_norm",   "router",     "topk",       "permute",
	                                  "expert_fc1", "expert_act", "expert_fc2", "shared_fc1",
	                                  "shared_fc2", NULL};
	unsigned parts = g->kern.graph_parts;
	if (g->kern.cuda_graphs >= 0.5)
		return true;
	return parts && (((parts & PP_GRAPH_ATTN) && named(op->name, attn)) ||
	                 ((parts & PP_GRAPH_MLP) && named(op->name, mlp)) ||
	                 ((parts & PP_GRAPH_MOE_ROUTER) && named(op->name, router)) ||
	                 ((parts & PP_GRAPH_MOE) && named(op->name, moe)));
}

/* The kernels the stack launches for the op (before CUDA graphs). */
static double stack_launches(const pp_gpu *g, pp_precision prec, const pp_op *op)
{
	bool fp8 = prec == PP_PREC_FP8 && op->fp8 && g->fp8_flops > 0;
	/* One launch per GEMM of a batched op: Transformer Engine's GroupedLinear
	 * (Megatron-Core --moe-grouped-gemm) runs one cuBLAS GEMM per local expert
	 * over a few streams (nvte_multi_stream_cublas_gemm), SUMMA one per panel. */
	double launches = op->kind == PP_OP_GEMM && op->count > 1 ? op->count : 1;
	/* An eager stack launches each kernel of the op's decomposition, and
	 * autocast's casts of an fp32 weight (pp_op.eager_kernels,
	 * cast_kernels; src/workload/ops.c). */
	if (op->kind == PP_OP_ELEM && runs_eager(g, op))
		launches = op->eager_kernels;
	else if (op->kind == PP_OP_ELEM && runs_unfused(g, op))
		launches = op->unfused_kernels;
	if (casts_weight(g, op))
		launches += op->cast_kernels;
	if (accumulates_apart(g, op))
		launches += op->accum_kernels;
	/* In FP8 a batched GEMM also quantises its operand per GEMM, with the
	 * kernels its recipe launches (op->quant_kernels, src/workload/ops.c:
	 * 3 per expert under current scaling, 1 under MXFP8 and block-wise, 2
	 * in all under row-wise, 1 in all under delayed scaling). */
	if (op->kind == PP_OP_GEMM && fp8 && op->quant_kernels > 0) {
		double qk = op->quant_kernels;
		/* Delayed scaling's fused multi-tensor cast-transpose needs the
		 * transposed copy, which Blackwell's FP8 GEMMs do without: there
		 * each expert's tensor is cast alone (TE cast.cpp
		 * multi_tensor_quantize_impl: with_fused_kernel only with
		 * columnwise data). */
		if (op->fp8_recipe == PP_FP8_DELAYED && op->count > 1 &&
		    pp_kernel_fp8_non_tn(g->compute_capability_x10))
			qk = op->count;
		launches += qk;
	}
	return launches;
}

/*
 * A training stack's time for the op: the kernel model's, without the
 * isolated-call fixed times, divided by the stack's fraction of the measured
 * rate (the GPU's efficiency: gemm, gemm_fp8, attn, memory), plus the
 * stack's fixed time per kernel launched, eff.kernel_s: one per op, one per
 * GEMM of a batched op, and the quantisation kernels of a batched FP8 GEMM.
 */
static double stack_op_time(const pp_gpu *g, pp_precision prec, const pp_op *op)
{
	pp_gpu k = *g;
	k.kern.gemm_fixed_s = k.kern.attn_fixed_s = k.kern.mem_fixed_s = 0;
	k.kern.stack_fractions = false;
	/* A bias-dropout-add the stack fuses moves the fused kernel's bytes. */
	pp_op fused;
	if (g->kern.fused_bias_dropout_add && op->fused_bytes > 0) {
		fused = *op;
		fused.bytes = op->fused_bytes;
		op = &fused;
	}
	double t = kernel_op_time(&k, prec, op);
	const pp_gpu_eff *e = &g->eff;
	bool fp8 = prec == PP_PREC_FP8 && op->fp8 && g->fp8_flops > 0;
	double rel = op->kind == PP_OP_GEMM   ? (fp8 ? e->gemm_fp8 : e->gemm)
	             : op->kind == PP_OP_ATTN ? e->attn
	                                      : e->memory;
	double launches = stack_launches(g, prec, op);
	/* CUDA graphs replay the step's kernels without the host launching
	 * each (NVIDIA, "Getting Started with CUDA Graphs": one graph launch
	 * for the whole sequence instead of one CPU launch per kernel): no
	 * launch time per kernel, for the whole step or the captured part. */
	if (graphed(g, op))
		launches = 0;
	return (rel > 0 ? t / rel : t) + e->kernel_s * launches;
}

/* The kernel model is the compute model of every GPU: a system goes through
 * pp_system_compute_model (include/paraplan/inputs.h) before it is costed,
 * which sets g->kern and the stack's terms. */
double pp_op_time(const pp_gpu *g, pp_precision prec, const pp_op *op)
{
	if (g->kern.valid)
		return g->kern.measured_kernels >= 0.5 ? kernel_op_time(g, prec, op)
		                                       : stack_op_time(g, prec, op);
	/* A GPU costed without pp_system_compute_model (a caller that built the
	 * system by hand and calls the cost layer directly): the reference
	 * kernels carried to it, without the stack's GPU-dependent terms. */
	pp_gpu k = *g;
	pp_error err;
	if (pp_kernel_scale(&k, k.sm_count, &err))
		return NAN;
	return stack_op_time(&k, prec, op);
}

/* The host's issue time of the op's kernels: a GEMM or attention call's
 * and a memory-bound kernel's each (pp_kernel_stream_params: the measured
 * per-call fixed times less a busy stream's gap), over the kernels
 * stack_launches counts.  The host is the same software on every stack
 * (Python, the ATen dispatcher, the launch); stacks differ in how many
 * kernels they issue and in CUDA graphs, which issue none. */
static double host_issue_s(const pp_gpu *g, pp_precision prec, const pp_op *op)
{
	pp_kernel_params gpu;
	double hg, hm;
	pp_kernel_stream_params(&g->kern, &gpu, &hg, &hm);
	double all = stack_launches(g, prec, op);
	double calls = op->kind == PP_OP_GEMM   ? (op->count > 1 ? op->count : 1)
	               : op->kind == PP_OP_ATTN ? 1
	                                        : 0;
	/* a stack whose modules do more per call than PyTorch's own
	 * (framework.host_issue_factor) */
	double f = g->kern.host_issue_factor > 0 ? g->kern.host_issue_factor : 1;
	return (calls * hg + (all - calls) * hm) * f;
}

double pp_op_host_s(const pp_gpu *g, pp_precision prec, const pp_op *op)
{
	if (!g->kern.valid || g->kern.host_queue < 0.5 || graphed(g, op))
		return 0;
	return host_issue_s(g, prec, op);
}

/* ------------------------------------------------------- communication */

double pp_allreduce_ring_s(double bytes, int n, double bw, double alpha)
{
	if (n <= 1)
		return 0;
	return 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / bw;
}

double pp_allreduce_tree_s(double bytes, int n, double bw, double alpha)
{
	if (n <= 1)
		return 0;
	return 2.0 * log2((double)n) * (alpha + bytes / bw);
}

/* The collective algorithms and their choice: coll.c and coll_*.c. */
