/*
 * The operations of one layer for one micro-batch: GEMMs with their shapes,
 * the attention core, element-wise work, and the collectives each parallel
 * dimension adds (seed 003 Tables I/A2; seed 004 §§4-10; Korthikanti et al.
 * 2022 for sequence parallelism; Megatron-Core for CP, EP and ZeRO).
 *
 * 2D tensor parallelism (seed 003 Table II): tp = n_1 splits heads and the MLP
 * as in 1D TP, tp2 = n_2 splits the sequence, so every per-token tensor holds
 * b l / n_2 tokens; the attention gathers K and V over n_2 (all-gathers of
 * b l e / n_1), the n_1 collectives move b (l / n_2) e.  Weights are replicated
 * over n_2; their gradient reduction joins the DP one (src/cost/stage.c).
 *
 * 2D TP SUMMA (Table A2, App. A): QKV, FC1 and FC2 are SUMMA multiplies on the
 * n_1 x n_2 grid: the A row block (b l / n_2 x K) is broadcast over n_1 and
 * the B column block (K x N / n_1) over n_2, in summa_nb panels (Algorithm 1);
 * the backward's transposed multiplies broadcast one and reduce the other.
 */
#include <string.h>

#include "paraplan/moe.h"
#include "paraplan/workload.h"
#include "scenario/scenario_int.h"
#include "ops_int.h"
#include "workload_int.h"

typedef ppi_ops ctx;

void pp_work_init(pp_work *w)
{
	w->overflow = false;
	w->nops = w->ncolls = 0;
	for (int i = 0; i < PP_UNIT_MEMO; i++)
		w->cache_valid[i] = false;
	for (int i = 0; i < PP_DH_MEMO; i++)
		w->dh_valid[i] = false;
	w->dh_last_slot = -1;
	for (int i = 0; i < PP_COLL_MEMO; i++)
		w->coll_valid[i] = false;
	for (int i = 0; i < PP_STAGE_MEMO; i++)
		w->stage_valid[i] = false;
	w->place_memo.valid = false;
	w->moe_valid = false;
	w->params_model = NULL;
	w->params_seq = 0;
}

static void ctx_init(ctx *c, const pp_model *m, const pp_job *job, const pp_plan *p, pp_work *w)
{
	/* Entries are written as they are added: resetting the counts is enough
	 * (clearing the whole 15 KB list dominated the search's time). */
	w->overflow = false;
	w->nops = 0;
	w->ncolls = 0;
	c->m = m;
	c->job = job;
	c->p = p;
	c->w = w;
	ppi_mb_shape mb;
	ppi_mb_shape_init(&mb, job, p);
	c->n2 = mb.n2;
	c->T = mb.T;
	c->S = mb.S;
	c->t = mb.t;
	c->summa = p->summa;
	c->nb = mb.nb;
	c->sd = mb.sd;
	c->fp8 = mb.fp8;
	c->wb = mb.wb;
	c->ab = mb.ab;
}

static pp_op *add_op(ctx *c, const char *name, pp_op_kind kind, pp_phase phase)
{
	if (c->w->nops >= PP_MAX_OPS) {
		c->w->overflow = true;
		return NULL;
	}
	pp_op *o = &c->w->ops[c->w->nops++];
	memset(o, 0, sizeof *o);
	o->name = name;
	o->kind = kind;
	o->phase = phase;
	o->count = 1;
	return o;
}

static pp_coll *add_coll(ctx *c, const char *name, pp_coll_kind kind, pp_group g, pp_phase phase,
                         double bytes, double count, bool overlapped)
{
	if (bytes <= 0 || count <= 0)
		return NULL;
	if (c->w->ncolls >= PP_MAX_COLLS) {
		c->w->overflow = true;
		return NULL;
	}
	pp_coll *x = &c->w->colls[c->w->ncolls++];
	memset(x, 0, sizeof *x);
	x->name = name;
	x->kind = kind;
	x->group = g;
	x->phase = phase;
	x->bytes = bytes;
	x->count = count;
	x->overlapped = overlapped;
	x->panels = 1;
	x->overlap_op = -1;
	x->busiest = 1;
	return x;
}

/*
 * Quantisation kernels launched for the operand of `count` GEMMs that
 * quantise it themselves.  A single GEMM takes its FP8 input from its
 * producer (the cast fused into the norm, activation or dgrad kernel): 0.
 * A batched one (Transformer Engine's GroupedLinear: one GEMM per local
 * expert) quantises each expert's input (forward) or output gradient
 * (backward) with tex.fused_multi_quantize
 * (transformer_engine/pytorch/csrc/extensions/cast.cpp
 * multi_tensor_quantize_impl): one multi-tensor cast-transpose kernel under
 * delayed scaling, otherwise one quantisation per tensor: MXFP8's and
 * block-wise's compute their block scales inside the cast (1 kernel each:
 * MXFP8Quantizer / Float8BlockQuantizer::quantize, nvte_quantize_v2);
 * current scaling's is amax, scale and cast (nvte_compute_amax,
 * nvte_compute_scale_from_amax, nvte_quantize_v2:
 * Float8CurrentScalingQuantizer::quantize_impl, 3 kernels).  torchao's
 * row-wise grouped GEMM casts the stacked tokens of all experts at once, a
 * row-wise and a per-group column-wise cast (torchao prototype/moe_training
 * kernels triton_fp8_rowwise_2d_scale_and_cast,
 * triton_fp8_per_group_colwise_scales): 2 kernels.  The weight gradient
 * reads both operands already quantised.
 */
static double quant_kernels(pp_fp8_recipe r, double count)
{
	if (count <= 1)
		return 0;
	switch (r) {
	case PP_FP8_CURRENT: return 3 * count;
	case PP_FP8_MX:
	case PP_FP8_BLOCKWISE: return count;
	case PP_FP8_ROWWISE: return 2;
	case PP_FP8_DELAYED:
	default: return 1;
	}
}

/*
 * torch.autocast over fp32 parameters (a stack with kern.autocast_weight_cast,
 * outside ZeRO-3, whose all-gather casts instead): autocast casts each GEMM
 * weight to bf16 once per forward region (its cast cache lives for the
 * `with torch.autocast` block, one micro-batch; a checkpointed recompute
 * casts again): one kernel reading 4 and writing 2 bytes per parameter
 * (aten/src/ATen/autocast_mode.cpp cached_cast).
 * A weight gradient accumulated apart (kern.grad_accum_kernel): the bf16
 * gradient cast to fp32 (2 in, 4 out), then added into the fp32 buffer (4 +
 * 4 in, 4 out): two kernels, 18 bytes per parameter, every micro-batch
 * (PyTorch: autocast's cast backward, then AccumulateGrad into the existing
 * .grad, torch/csrc/autograd/functions/accumulate_grad.h; DeepSpeed
 * BF16_Optimizer.update_hp_grads, hp_grad.add_(lp_grad.to(fp32))).
 */
#define PP_AUTOCAST_CAST_BYTES_PER_PARAM 6.0
#define PP_GRAD_CAST_BYTES_PER_PARAM 6.0
#define PP_GRAD_ADD_BYTES_PER_PARAM 12.0
#define PP_EMBEDDING_GRAD_BYTES_PER_PARAM 4.0
static void autocast_cast(ctx *c, pp_op *o, double params)
{
	if (c->p->zero >= 3 || c->fp8 || c->ab != 2.0)
		return;
	if (o->phase == PP_PHASE_BWD_WEIGHT) {
		o->accum_kernels = 2;
		o->accum_bytes =
		    params * (PP_GRAD_CAST_BYTES_PER_PARAM + PP_GRAD_ADD_BYTES_PER_PARAM);
	} else if (o->phase != PP_PHASE_BWD_INPUT) {
		o->cast_kernels = 1;
		o->cast_bytes = params * PP_AUTOCAST_CAST_BYTES_PER_PARAM;
	}
}

/*
 * A GEMM (M x K) . (K x N) repeated `count` times, with its backward: the
 * input gradient (M x N).(N x K) and the weight gradient (K x M).(M x N), each
 * as many FLOPs as the forward.  Recompute repeats the forward.
 */
static void gemm(ctx *c, const char *name, double M, double K, double N, double count,
                 bool recompute)
{
	if (M <= 0 || K <= 0 || N <= 0 || count <= 0)
		return;
	double ab = c->fp8 ? 1.0 : c->ab;
	double flops = 2.0 * M * K * N * count;
	double bytes = (M * K * ab + K * N * (c->fp8 ? 1.0 : c->wb) + M * N * c->ab) * count;
	const pp_phase phases[] = {PP_PHASE_FWD, PP_PHASE_BWD_INPUT, PP_PHASE_BWD_WEIGHT,
	                           PP_PHASE_RECOMPUTE};
	for (int i = 0; i < (recompute ? 4 : 3); i++) {
		pp_op *o = add_op(c, name, PP_OP_GEMM, phases[i]);
		if (!o)
			return;
		o->count = count;
		o->m = M;
		o->k = K;
		o->n = N;
		if (phases[i] == PP_PHASE_BWD_INPUT) {
			o->k = N;
			o->n = K;
		} else if (phases[i] == PP_PHASE_BWD_WEIGHT) {
			o->m = K;
			o->k = M;
			o->n = N;
		}
		o->flops = flops;
		o->bytes = bytes;
		o->fp8 = true;
		o->fp8_recipe = c->job->fp8_recipe;
		if (c->fp8 && phases[i] != PP_PHASE_BWD_WEIGHT)
			o->quant_kernels = quant_kernels(c->job->fp8_recipe, count);
		autocast_cast(c, o, K * N * count);
	}
}

/* Element-wise work moving `bytes` in the forward, about twice in backward. */
static void elem(ctx *c, const char *name, double bytes, double flops, bool recompute)
{
	pp_op *o = add_op(c, name, PP_OP_ELEM, PP_PHASE_FWD);
	if (!o)
		return;
	o->bytes = bytes;
	o->flops = flops;
	o = add_op(c, name, PP_OP_ELEM, PP_PHASE_BWD_INPUT);
	if (!o)
		return;
	o->bytes = 2 * bytes;
	o->flops = 2 * flops;
	if (recompute && (o = add_op(c, name, PP_OP_ELEM, PP_PHASE_RECOMPUTE))) {
		o->bytes = bytes;
		o->flops = flops;
	}
}

/* The eager decomposition of the op just added at `first`: kernels and
 * bytes per element of its `n`, forward (recompute alike) and backward;
 * none under --compile on (Inductor fuses each chain: the op's bytes). */
static void eager(ctx *c, int first, double n, double fwd_kernels, double fwd_bytes_per_elem,
                  double bwd_kernels, double bwd_bytes_per_elem)
{
	if (c->job->compile)
		return;
	for (int i = first; i < c->w->nops; i++) {
		pp_op *o = &c->w->ops[i];
		bool bwd = o->phase == PP_PHASE_BWD_INPUT;
		o->eager_kernels += bwd ? bwd_kernels : fwd_kernels;
		o->eager_bytes += n * (bwd ? bwd_bytes_per_elem : fwd_bytes_per_elem);
	}
}

/*
 * The residual add closing a sub-layer, over `n` elements (bias add, dropout
 * when the model has it).  `bytes` counts it unfused: dropout reads and
 * writes the tensor and its mask before the add (x2).  Megatron fuses bias +
 * dropout + add into one kernel (Narayanan et al. SC'21 Sec. 4.2; Megatron-
 * Core megatron/core/fusions/fused_bias_dropout.py, bias_dropout_fusion on by
 * default): forward reads x and the residual and writes the sum and the
 * 1-byte dropout mask (2a + a + 1 bytes per element, a the bytes of an
 * activation element); backward reads the gradient and the mask and writes
 * the gradient of x (a + 1 + a), the residual's gradient passing through.  That count is `fused_bytes`.
 */
static void residual(ctx *c, double n, bool recompute)
{
	int first = c->w->nops;
	elem(c, "residual", n * c->ab * 3 * (c->m->dropout ? 2 : 1), n, recompute);
	if (!c->m->dropout)
		return;
	for (int i = first; i < c->w->nops; i++) {
		pp_op *o = &c->w->ops[i];
		o->fused_bytes =
		    n * (o->phase == PP_PHASE_BWD_INPUT ? 2 * c->ab + 1 : 3 * c->ab + 1);
	}
}

/* Norm over `width` on the tokens this rank holds (SP region). */
static void norm(ctx *c, const char *name, double width, bool recompute)
{
	double n = c->T / c->sd * width;
	int first = c->w->nops;
	elem(c, name, n * c->ab * 2, n * 5, recompute);
	/* Eager RMSNorm in fp32, cast back (the Llama reference RMSNorm that
	 * torchtitan and plain loops run: x.float(), pow(2), mean(-1), + eps,
	 * rsqrt, x * rsqrt, type_as(x), * weight): 8 kernels, per element the
	 * up-cast a + 4, pow 4 + 4, mean 4, the multiply 4 + 4, the down-cast
	 * 4 + a, the weight a + a bytes.  Backward, autograd runs each one's
	 * backward: the weight multiply's two products (a + a + a, with a
	 * reduction), the casts (a + 4 each), the multiply's two products (4 +
	 * 4 + 4, 4 + 4), mean's expand (4), pow's 2x * g (4 + 4 + 4) and the sum
	 * of the two paths into x (4 + 4 + 4): 12 kernels.  LayerNorm is
	 * F.layer_norm, one native kernel each way: nothing more. */
	if (c->m->norm == PP_NORM_RMSNORM) {
		double a = c->ab;
		eager(c, first, n, 8, 24 + 4 * a, 12, 48 + 6 * a);
	}
}

/* Tensor-parallel entry/exit of a column/row-parallel pair: all-reduce without
 * SP; all-gather in and reduce-scatter out with SP (same volume). */
static void tp_pair(ctx *c, const char *in, const char *out, bool recompute)
{
	if (c->t <= 1)
		return;
	double buf = c->T * c->m->hidden * c->ab;
	int fwd_count = recompute ? 2 : 1;
	if (c->sd > 1) {
		add_coll(c, in, PP_COLL_ALLGATHER, PP_GROUP_TP, PP_PHASE_FWD, buf, fwd_count,
		         false);
		add_coll(c, out, PP_COLL_REDUCESCATTER, PP_GROUP_TP, PP_PHASE_FWD, buf, fwd_count,
		         false);
		/* Backward: the conjugates, plus the re-gather of the saved sharded input
		 * for the weight gradient, which Megatron overlaps with the dgrad GEMM. */
		add_coll(c, in, PP_COLL_REDUCESCATTER, PP_GROUP_TP, PP_PHASE_BWD_INPUT, buf, 1,
		         false);
		add_coll(c, out, PP_COLL_ALLGATHER, PP_GROUP_TP, PP_PHASE_BWD_INPUT, buf, 1, false);
		add_coll(c, in, PP_COLL_ALLGATHER, PP_GROUP_TP, PP_PHASE_BWD_WEIGHT, buf, 1, true);
	} else {
		add_coll(c, out, PP_COLL_ALLREDUCE, PP_GROUP_TP, PP_PHASE_FWD, buf, fwd_count,
		         false);
		add_coll(c, in, PP_COLL_ALLREDUCE, PP_GROUP_TP, PP_PHASE_BWD_INPUT, buf, 1, false);
	}
}

/* A collective of SUMMA's panel loop: `panels` pieces under op `op`. */
static void summa_coll(ctx *c, const char *name, pp_coll_kind kind, pp_group g, pp_phase phase,
                       double bytes, double count, int op)
{
	pp_coll *x = add_coll(c, name, kind, g, phase, bytes, count, false);
	if (x) {
		x->panels = c->nb;
		x->overlap_op = op;
	}
}

/*
 * C (M x N/n_1 on this GPU) = A (M x K) B (K x N/n_1) by SUMMA (seed 003 App. A,
 * Algorithm 1): n_b panel GEMMs of inner size K/n_b; per multiply the A row
 * block (M x K, M = b l / n_2) is broadcast over n_1 and the B column block
 * (K x N/n_1) over n_2 — Table A2's V = b l K / n_2 + K N / n_1.  `a_count`
 * multiplies share the A block but broadcast it each (Table A2's Q, K, V).
 * Backward: dA = dC B^T broadcasts B and reduces dA; dB = A^T dC broadcasts
 * A and reduces dB ("a Broadcast and Reduce instead of two Broadcasts").
 */
static void summa_gemm(ctx *c, const char *name, double M, double K, double N, double a_count,
                       bool recompute)
{
	int base = c->w->nops;
	gemm(c, name, M, K / c->nb, N, c->nb, recompute);
	if (c->w->nops < base + 3)
		return; /* overflow, reported by the cost */
	double A = M * K * c->ab, B = K * N * c->wb;
	summa_coll(c, "summa_a", PP_COLL_BROADCAST, PP_GROUP_TP, PP_PHASE_FWD, A, a_count, base);
	summa_coll(c, "summa_b", PP_COLL_BROADCAST, PP_GROUP_TP2, PP_PHASE_FWD, B, 1, base);
	summa_coll(c, "summa_b", PP_COLL_BROADCAST, PP_GROUP_TP2, PP_PHASE_BWD_INPUT, B, 1,
	           base + 1);
	summa_coll(c, "summa_da", PP_COLL_REDUCE, PP_GROUP_TP, PP_PHASE_BWD_INPUT, A, a_count,
	           base + 1);
	summa_coll(c, "summa_a", PP_COLL_BROADCAST, PP_GROUP_TP, PP_PHASE_BWD_WEIGHT, A, a_count,
	           base + 2);
	summa_coll(c, "summa_db", PP_COLL_REDUCE, PP_GROUP_TP2, PP_PHASE_BWD_WEIGHT, B, 1,
	           base + 2);
	if (recompute && c->w->nops >= base + 4) {
		summa_coll(c, "summa_a", PP_COLL_BROADCAST, PP_GROUP_TP, PP_PHASE_RECOMPUTE, A,
		           a_count, base + 3);
		summa_coll(c, "summa_b", PP_COLL_BROADCAST, PP_GROUP_TP2, PP_PHASE_RECOMPUTE, B, 1,
		           base + 3);
	}
}

/* SUMMA's norm over e split by n_1: Table A2's all-reduce of b (l/n_2) e over n_1,
 * forward (twice with full recompute) and again in backward. */
static void summa_norm_ar(ctx *c, const char *name, bool recompute)
{
	if (c->t <= 1)
		return;
	double buf = c->T * c->m->hidden * c->ab;
	add_coll(c, name, PP_COLL_ALLREDUCE, PP_GROUP_TP, PP_PHASE_FWD, buf, recompute ? 2 : 1,
	         false);
	add_coll(c, name, PP_COLL_ALLREDUCE, PP_GROUP_TP, PP_PHASE_BWD_INPUT, buf, 1, false);
}

/*
 * Ring attention's merges of its cp partial results (Transformer Engine's
 * AttnFuncWithCPAndKVP2P, v1.4 on, transformer_engine/pytorch/attention.py,
 * Megatron-Core's CP): forward, each step's output is rescaled by its
 * log-sum-exp and added into the running output (flash_attn_fwd_out_correction:
 * the step's output read, the running one read and written, 3 passes over
 * `out` elements); backward, each step's dQ is added into dQ (3 passes over
 * `q`) and its dK, dV are concatenated and added into the dKV the ring
 * carries (torch.cat, 2 passes, then add_, 3: 5 over `kv`).  Under causal
 * load balancing a rank merges the steps past its own rank over half its
 * queries; the last rank merges all cp whole and the ring waits for it.
 * Timed as one memory-bound pass of the summed bytes: the steps' own kernel
 * overheads are small beside the attention they follow.  Recomputed with
 * the attention.
 */
static void cp_merge(ctx *c, double out, double q, double kv, bool recompute)
{
	double cp = c->p->cp, a = c->ab;
	pp_op *o;
	if ((o = add_op(c, "cp_merge", PP_OP_ELEM, PP_PHASE_FWD)))
		o->bytes = cp * 3 * out * a;
	if ((o = add_op(c, "cp_merge", PP_OP_ELEM, PP_PHASE_BWD_INPUT)))
		o->bytes = cp * (3 * q + 5 * kv) * a;
	if (recompute && (o = add_op(c, "cp_merge", PP_OP_ELEM, PP_PHASE_RECOMPUTE)))
		o->bytes = cp * 3 * out * a;
}

/* Rotary position embedding of q and k over the tokens of one micro-batch
 * (H query and kv_heads key heads of qk_dim), with what an eager stack runs
 * besides. */
static void rope(ctx *c, double H, double kv_heads, double qk_dim, bool full_rc)
{
	double T = c->T, t = c->t;
	int first = c->w->nops;
	double n = T * (H + kv_heads) / t * qk_dim;
	elem(c, "rope", n * c->ab * 2, 0, full_rc);
	/* Eager RoPE (Llama reference apply_rotary_emb, torchtitan's):
	 * per tensor (q, k) x.float() (a + 4 per element), the complex
	 * multiply by freqs_cis (4 + 4), type_as (4 + a): 3 kernels each
	 * way (the backward's conjugate multiply and casts).  With GQA
	 * the eager loop then repeats K and V to the query heads
	 * (torchtitan repeat_kv, expand + reshape; repeat_interleave in
	 * ../shared/measurements/h100-sxm/README.md): 2 copies reading
	 * kv and writing H heads, and in backward 2 sums back; fused
	 * stacks hand the kv heads to the attention kernel. */
	double a = c->ab;
	eager(c, first, n, 6, 16 + 2 * a, 6, 16 + 2 * a);
	if (H > kv_heads) {
		double rep = T * (H + kv_heads) / t * qk_dim * a * 2;
		eager(c, first, 1, 2, rep, 2, rep);
	}
}

static void attention(ctx *c, bool full_rc)
{
	const pp_model *m = c->m;
	const pp_plan *p = c->p;
	double T = c->T, h = m->hidden, t = c->t, H = m->num_heads;
	unsigned mods = pp_plan_recomputed_modules(p); /* mla_up_proj: MLA's up-projections */
	bool sel_core = mods & PP_RECOMPUTE_MODULE_CORE_ATTN,
	     up_rc = full_rc || (mods & PP_RECOMPUTE_MODULE_MLA_UP_PROJ); /* and rope */
	double qk_dim, v_dim, kv_heads;
	norm(c, "attn_norm", h, full_rc);
	if (c->summa)
		summa_norm_ar(c, "summa_attn_norm", full_rc);
	if (m->mla.kv_lora_rank > 0) {
		const pp_mla *a = &m->mla;
		qk_dim = a->qk_nope_head_dim + a->qk_rope_head_dim;
		v_dim = a->v_head_dim;
		kv_heads = H;
		/* Down projections are duplicated on TP ranks: run on the local tokens. */
		if (a->q_lora_rank > 0) {
			gemm(c, "q_down", T / c->sd, h, a->q_lora_rank, 1, full_rc);
			norm(c, "q_norm", a->q_lora_rank, full_rc);
			gemm(c, "q_up", T, a->q_lora_rank, H * qk_dim / t, 1, up_rc);
		} else {
			gemm(c, "q", T, h, H * qk_dim / t, 1, full_rc);
		}
		gemm(c, "kv_down", T / c->sd, h, a->kv_lora_rank + a->qk_rope_head_dim, 1, full_rc);
		norm(c, "kv_norm", a->kv_lora_rank, full_rc);
		gemm(c, "kv_up", T, a->kv_lora_rank, H * (a->qk_nope_head_dim + a->v_head_dim) / t,
		     1, up_rc);
	} else {
		qk_dim = v_dim = m->head_dim;
		kv_heads = m->num_kv_heads;
		if (c->summa) /* Q, K, V: three SUMMA multiplies sharing the input */
			summa_gemm(c, "qkv", T, h, (H + 2 * kv_heads) * m->head_dim / t, 3,
			           full_rc);
		else
			gemm(c, "qkv", T, h, (H + 2 * kv_heads) * m->head_dim / t, 1, full_rc);
	}
	if (m->qk_norm)
		elem(c, "qk_norm", T * (H + kv_heads) / t * qk_dim * c->ab * 2, 0, full_rc);
	if (m->position == PP_POS_ROPE)
		rope(c, H, kv_heads, qk_dim, m->mla.kv_lora_rank > 0 ? up_rc : full_rc);

	/* Attention core: 2·T·S·(qk + v) FLOPs per head forward over the full score
	 * matrix; causal masking halves the work a fused kernel does.  Flash
	 * attention's backward is 2.5x its forward (5 vs 2 matmuls). */
	double heads = H / t;
	double causal = 0.5;
	double fl = 2.0 * T * c->S * heads * (qk_dim + v_dim) * causal;
	double io = T * heads * (2 * qk_dim + 2 * v_dim) * c->ab; /* q, k, v in, o out */
	double score_bytes = p->flash ? 0 : T * c->S * heads * c->ab * (m->dropout ? 5.0 : 3.0);
	pp_op *o;
	/* Shape for the kernel model (src/kernel/): queries m, keys n, head dim k.
	 * Under CP the ring runs cp kernels, each over S/cp keys (Transformer
	 * Engine's ring attention): the kernel's rate is that of the short chunk. */
	double kn = c->S / (p->cp > 1 ? p->cp : 1);
	if ((o = add_op(c, "attn", PP_OP_ATTN, PP_PHASE_FWD))) {
		o->flops = fl;
		o->bytes = io + score_bytes;
		o->m = T, o->n = kn, o->k = qk_dim;
	}
	if ((o = add_op(c, "attn", PP_OP_ATTN, PP_PHASE_BWD_INPUT))) {
		o->flops = 2.5 * fl;
		o->bytes = 2 * io + 2 * score_bytes;
		o->m = T, o->n = kn, o->k = qk_dim;
	}
	if ((full_rc || sel_core) && (o = add_op(c, "attn", PP_OP_ATTN, PP_PHASE_RECOMPUTE))) {
		o->flops = fl;
		o->bytes = io + score_bytes;
		o->m = T, o->n = kn, o->k = qk_dim;
	}
	gemm(c, "proj", T, H * v_dim / t, h, 1, full_rc);
	residual(c, T / c->sd * h, full_rc);
	if (!c->summa) {
		tp_pair(c, "tp_attn_in", "tp_attn_out", full_rc);
	} else if (t > 1) {
		/* Table A2 keeps Table II's row-parallel projection: a reduce-scatter of
		 * b (l/n_2) e over n_1, its all-gather conjugate in backward. */
		double buf = T * h * c->ab;
		add_coll(c, "summa_attn_out", PP_COLL_REDUCESCATTER, PP_GROUP_TP, PP_PHASE_FWD, buf,
		         full_rc ? 2 : 1, false);
		add_coll(c, "summa_attn_out", PP_COLL_ALLGATHER, PP_GROUP_TP, PP_PHASE_BWD_INPUT,
		         buf, 1, false);
	}

	/* 2D TP: queries hold l/n_2 tokens, keys and values all of l: all-gather K and
	 * V over n_2 (Table II: b l e / n_1 each), reduce-scatter their gradients in
	 * backward; the gathered K, V are kept for backward (src/workload/memory.c),
	 * re-gathered only under full recompute. */
	if (c->n2 > 1) {
		double full = (double)p->mbs * c->S;
		double kb = full * kv_heads / t * qk_dim * c->ab,
		       vb = full * kv_heads / t * v_dim * c->ab;
		int fc = full_rc ? 2 : 1;
		add_coll(c, "tp2_k", PP_COLL_ALLGATHER, PP_GROUP_TP2, PP_PHASE_FWD, kb, fc, false);
		add_coll(c, "tp2_v", PP_COLL_ALLGATHER, PP_GROUP_TP2, PP_PHASE_FWD, vb, fc, false);
		add_coll(c, "tp2_k", PP_COLL_REDUCESCATTER, PP_GROUP_TP2, PP_PHASE_BWD_INPUT, kb, 1,
		         false);
		add_coll(c, "tp2_v", PP_COLL_REDUCESCATTER, PP_GROUP_TP2, PP_PHASE_BWD_INPUT, vb, 1,
		         false);
	}

	/* Context parallelism: a ring passes each rank's K and V (forward) and K, V
	 * with their gradients (backward) around cp-1 steps, under the attention
	 * compute of the previous step (Megatron-Core's ring attention). */
	if (p->cp > 1) {
		double kv = T * kv_heads / t * (qk_dim + v_dim) * c->ab;
		add_coll(c, "cp_kv", PP_COLL_P2P, PP_GROUP_CP, PP_PHASE_FWD, kv, p->cp - 1, true);
		add_coll(c, "cp_dkv", PP_COLL_P2P, PP_GROUP_CP, PP_PHASE_BWD_INPUT, 2 * kv,
		         p->cp - 1, true);
		if (full_rc || sel_core)
			add_coll(c, "cp_kv", PP_COLL_P2P, PP_GROUP_CP, PP_PHASE_RECOMPUTE, kv,
			         p->cp - 1, true);
		cp_merge(c, T * heads * v_dim, T * heads * qk_dim,
		         T * kv_heads / t * (qk_dim + v_dim), full_rc || sel_core);
	}
}

/* Eager SwiGLU, F.silu(gate) * up over `n` elements: silu (a in, a out) and
 * the multiply (2a in, a out), 2 kernels where a fused kernel reads both and
 * writes one (3a); backward the multiply's two products (3a each) and
 * silu's backward (3a): 3 kernels, 9a bytes against 6a.  A plain GELU is
 * one kernel either way. */
static void swiglu_eager(ctx *c, int first, double n)
{
	if (!c->m->gated_mlp)
		return;
	double a = c->ab;
	eager(c, first, n, 2, 5 * a, 3, 9 * a);
}

static void dense_mlp(ctx *c, double ffn, bool full_rc, const char *a, const char *b)
{
	const pp_model *m = c->m;
	double T = c->T, t = c->t, g = m->gated_mlp ? 2.0 : 1.0;
	if (c->summa) { /* FC1: A = Y~ (T x e); FC2: A = Z (T x f), B = W2 (f x e/n_1) */
		summa_gemm(c, a, T, m->hidden, g * ffn / t, 1, full_rc);
		elem(c, "act", T * ffn / t * (g + 1) * c->ab, T * ffn / t * 8, full_rc);
		summa_gemm(c, b, T, ffn, m->hidden / t, 1, full_rc);
		return;
	}
	gemm(c, a, T, m->hidden, g * ffn / t, 1, full_rc);
	int first = c->w->nops;
	elem(c, "act", T * ffn / t * (g + 1) * c->ab, T * ffn / t * 8, full_rc);
	swiglu_eager(c, first, T * ffn / t);
	gemm(c, b, T, ffn / t, m->hidden, 1, full_rc);
}

/*
 * With --moe-routing (job.moe_routing), the busiest GPU's all-to-all bytes
 * over the mean GPU's (pp_coll.busiest): the skewed routing's expected time
 * over the uniform one (pp_moe_alltoall_run, seed 000 Eq. 10, no samples:
 * at step 0, or with drift the mean over the run's steps,
 * pp_moe_run_steps), the link and a token's bytes cancelling.  1 without a
 * routing or with ep = 1.
 */
static double moe_skew_factor(const ctx *c, double tokens)
{
	const pp_moe_spec *sp = &c->job->moe_routing;
	if (!sp->set || c->p->ep <= 1 || !(tokens > 0))
		return 1;
	/* the factor does not depend on the tokens: memoised on the rest */
	double steps = pp_moe_run_steps(c->job);
	const double key[7] = {c->m->moe.num_experts,
	                       c->m->moe.top_k,
	                       c->p->ep,
	                       sp->capacity_factor,
	                       sp->skew,
	                       sp->drift_steps,
	                       steps};
	pp_work *w = c->w;
	if (w->moe_valid && memcmp(w->moe_key, key, sizeof key) == 0)
		return w->moe_factor;
	pp_moe_routing r = {c->m->moe.num_experts, c->m->moe.top_k, c->p->ep,        tokens, 1,
	                    sp->capacity_factor,   sp->skew,        sp->drift_steps, NULL,   1};
	pp_moe_result out;
	if (pp_moe_alltoall_run(&r, steps, 0, 1, 0, &out, NULL))
		return 1;
	double f = out.uniform_s > 0 ? out.expected_s / out.uniform_s : 1;
	pp_moe_result_free(&out);
	memcpy(w->moe_key, key, sizeof key);
	w->moe_factor = f;
	w->moe_valid = true;
	return f;
}

static void moe_mlp(ctx *c, bool full_rc)
{
	const pp_model *m = c->m;
	const pp_plan *p = c->p;
	const pp_moe *e = &m->moe;
	double h = m->hidden, g = m->gated_mlp ? 2.0 : 1.0;
	double Td = c->T / c->sd; /* tokens this rank routes */
	double etp = p->etp > 0 ? p->etp : p->tp;
	double local_experts = (double)e->num_experts / p->ep;
	double R = Td * e->top_k * (c->sd > 1 ? etp : 1); /* token copies on this rank */
	gemm(c, "router", Td, h, e->num_experts, 1, full_rc);
	elem(c, "topk", Td * e->num_experts * 4.0 * 2, Td * e->num_experts * 4, full_rc);
	elem(c, "permute", Td * e->top_k * h * c->ab * 4, 0, full_rc);
	double per_expert = R / local_experts;
	gemm(c, "expert_fc1", per_expert, h, g * e->expert_ffn_hidden / etp, local_experts,
	     full_rc);
	int first = c->w->nops;
	elem(c, "expert_act", R * e->expert_ffn_hidden / etp * (g + 1) * c->ab,
	     R * e->expert_ffn_hidden / etp * 8, full_rc);
	swiglu_eager(c, first, R * e->expert_ffn_hidden / etp);
	gemm(c, "expert_fc2", per_expert, e->expert_ffn_hidden / etp, h, local_experts, full_rc);
	if (e->shared_ffn_hidden > 0)
		dense_mlp(c, e->shared_ffn_hidden, full_rc, "shared_fc1", "shared_fc2");
	/* Dispatch and combine: each routes Td·k token copies of h elements through
	 * an all-to-all over the EP group, forward and backward. */
	double a2a = Td * e->top_k * h * c->ab, skewed = moe_skew_factor(c, Td);
	int fc = full_rc ? 2 : 1;
	if (p->ep > 1) {
		int from = c->w->ncolls;
		add_coll(c, "ep_dispatch", PP_COLL_ALLTOALL, PP_GROUP_EP, PP_PHASE_FWD, a2a, fc,
		         false);
		add_coll(c, "ep_combine", PP_COLL_ALLTOALL, PP_GROUP_EP, PP_PHASE_FWD, a2a, fc,
		         false);
		add_coll(c, "ep_dispatch", PP_COLL_ALLTOALL, PP_GROUP_EP, PP_PHASE_BWD_INPUT, a2a,
		         1, false);
		add_coll(c, "ep_combine", PP_COLL_ALLTOALL, PP_GROUP_EP, PP_PHASE_BWD_INPUT, a2a, 1,
		         false);
		for (int i = from; i < c->w->ncolls; i++)
			ppi_coll_ep_mark(&c->w->colls[i], skewed, c->job, e, c->ab);
	}
	if (etp > 1 && c->sd > 1) {
		/* Expert-TP gathers the routed tokens and reduce-scatters the outputs. */
		add_coll(c, "etp_gather", PP_COLL_ALLGATHER, PP_GROUP_ETP, PP_PHASE_FWD, a2a * etp,
		         fc, false);
		add_coll(c, "etp_scatter", PP_COLL_REDUCESCATTER, PP_GROUP_ETP, PP_PHASE_FWD,
		         a2a * etp, fc, false);
		add_coll(c, "etp_gather", PP_COLL_REDUCESCATTER, PP_GROUP_ETP, PP_PHASE_BWD_INPUT,
		         a2a * etp, 1, false);
		add_coll(c, "etp_scatter", PP_COLL_ALLGATHER, PP_GROUP_ETP, PP_PHASE_BWD_INPUT,
		         a2a * etp, 1, false);
	}
}

/* The internal entry points of ops_int.h, for ops_ft.c. */
pp_op *ppi_ops_add_op(ppi_ops *c, const char *name, pp_op_kind kind, pp_phase phase)
{
	return add_op(c, name, kind, phase);
}

void ppi_ops_gemm(ppi_ops *c, const char *name, double M, double K, double N, double count,
                  bool recompute)
{
	gemm(c, name, M, K, N, count, recompute);
}

void pp_layer_work(const pp_model *m, const pp_job *job, const pp_plan *plan, int layer,
                   pp_work *out)
{
	ctx c;
	ctx_init(&c, m, job, plan, out);
	bool full_rc = plan->recompute == PP_RECOMPUTE_FULL;
	attention(&c, full_rc);
	norm(&c, "mlp_norm", m->hidden, full_rc);
	if (c.summa)
		summa_norm_ar(&c, "summa_mlp_norm", full_rc);
	bool moe = pp_model_layer_is_moe(m, layer);
	if (moe)
		moe_mlp(&c, full_rc);
	else
		dense_mlp(&c, m->ffn_hidden, full_rc, "fc1", "fc2");
	residual(&c, c.T / c.sd * m->hidden, full_rc);
	/* MoE layers keep tokens sequence-sharded through the router; only a shared
	 * expert (a plain TP MLP) or the no-SP all-reduce needs the TP pair. */
	if (!c.summa && (!moe || m->moe.shared_ffn_hidden > 0 || c.sd == 1))
		tp_pair(&c, "tp_mlp_in", "tp_mlp_out", full_rc);
	ppi_ops_ft_layer(&c, layer, full_rc);
}

void pp_embedding_work(const pp_model *m, const pp_job *job, const pp_plan *plan, pp_work *out)
{
	ctx c;
	ctx_init(&c, m, job, plan, out);
	/* A gather of rows and, with TP, the vocab-parallel partial sums reduced. */
	int first = c.w->nops;
	elem(&c, "embedding", c.T * m->hidden * c.ab * 2, 0, false);
	/* The embedding table's gradient (not a GEMM: never cast by autocast)
	 * is written dense, in fp32 for an fp32 table (4 bytes per parameter,
	 * embedding_dense_backward), then added into the buffer (autocast_cast):
	 * 2 kernels under kern.grad_accum_kernel. */
	if (plan->zero < 3 && !c.fp8 && c.ab == 2.0 && first + 1 < c.w->nops) {
		pp_op *o = &c.w->ops[first + 1];
		double params = (double)m->vocab / c.t * m->hidden;
		o->accum_kernels = 2;
		o->accum_bytes =
		    params * (PP_EMBEDDING_GRAD_BYTES_PER_PARAM + PP_GRAD_ADD_BYTES_PER_PARAM);
	}
	if (plan->tp > 1) {
		double buf = c.T * m->hidden * c.ab;
		add_coll(&c, "tp_embedding", c.sd > 1 ? PP_COLL_REDUCESCATTER : PP_COLL_ALLREDUCE,
		         PP_GROUP_TP, PP_PHASE_FWD, buf, 1, false);
	}
	/* A frozen embedding has no backward: its only gradient is its table's. */
	if (pp_finetune_embeddings_frozen(job))
		ppi_ops_ft_forward_only(&c);
}

void pp_head_work(const pp_model *m, const pp_job *job, const pp_plan *plan, pp_work *out)
{
	ctx c;
	ctx_init(&c, m, job, plan, out);
	norm(&c, "final_norm", m->hidden, false);
	double vl = (double)m->vocab / c.t;
	gemm(&c, "lm_head", c.T, m->hidden, vl, 1, false);
	/* The loss in fp32, fused: a kernel each way, a + 8 bytes a logit
	 * forward; eager F.cross_entropy(logits.float()) (torchtitan, the
	 * measured loop): 3 kernels, 16 + a bytes / 4, 24 + a; Megatron-Core's
	 * unfused vocab-parallel function (kern.unfused_cross_entropy): 19
	 * kernels, a + 36 bytes / 8, 12 + a, no up-cast for fp32 logits
	 * (docs/kernel.md, "The loss"). */
	int first = c.w->nops;
	double a = c.ab, n = c.T * vl, up = a != 4;
	elem(&c, "loss", n * (a + 4 + 4), n * 6, false);
	eager(&c, first, n, 3, 16 + a, 4, 24 + a);
	for (int i = first; i < c.w->nops; i++) {
		pp_op *o = &c.w->ops[i];
		bool bwd = o->phase == PP_PHASE_BWD_INPUT;
		o->unfused_kernels = bwd ? 7 + up : 18 + up;
		o->unfused_bytes = n * (bwd ? 8 + up * (4 + a) : 32 + up * (a + 4));
	}
	if (plan->tp > 1) {
		double buf = c.T * m->hidden * c.ab;
		add_coll(&c, "tp_head_in", c.sd > 1 ? PP_COLL_ALLGATHER : PP_COLL_ALLREDUCE,
		         PP_GROUP_TP, PP_PHASE_BWD_INPUT, buf, 1, false);
		if (c.sd > 1)
			add_coll(&c, "tp_head_in", PP_COLL_REDUCESCATTER, PP_GROUP_TP,
			         PP_PHASE_BWD_INPUT, buf, 1, false);
		add_coll(&c, "tp_loss", PP_COLL_ALLREDUCE, PP_GROUP_TP, PP_PHASE_FWD, c.T * 4 * 3,
		         1, false);
	}
	/* A frozen head: the data gradient into the layers, no weight gradient. */
	if (pp_finetune_embeddings_frozen(job))
		ppi_ops_ft_no_wgrad(&c);
}

double pp_model_flops_per_token(const pp_model *m, int seq_len)
{
	pp_param_count pc;
	pp_model_params(m, &pc);
	/* Matmul parameters a token touches: all but embeddings and norms. */
	double norms = 0;
	double nw = m->norm == PP_NORM_LAYERNORM ? 2.0 * m->hidden : m->hidden;
	norms = nw * (2.0 * m->num_layers + 1);
	double matmul = pc.active - pc.embedding - norms;
	if (m->tied_embeddings)
		matmul += (double)m->vocab * m->hidden; /* the head still multiplies */
	double attn_width;
	if (m->mla.kv_lora_rank > 0)
		attn_width =
		    m->num_heads *
		    (m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim + m->mla.v_head_dim) / 2.0;
	else
		attn_width = (double)m->num_heads * m->head_dim;
	return 6.0 * matmul + 12.0 * m->num_layers * (double)seq_len * attn_width;
}
