/*
 * Per-GPU memory of a plan, stage by stage.
 *
 * Bookkeeping follows what Megatron-LM (Core) keeps alive: see docs/memory.md.
 * Activation terms are Korthikanti et al. 2022 ("Reducing Activation
 * Recomputation in Large Transformer Models", §4) generalised tensor by tensor
 * to GQA, gated MLPs, MLA, MoE and FP8, so that the GPT-3 case reduces to their
 * sbh(34 + 5as/h) and the sequence-parallel sbh/t (34 + 5as/h).
 */
#include <math.h>
#include <string.h>

#include "paraplan/schedule_type.h"
#include "util/util.h"
#include "workload_int.h"

#define FP8_ELEMENT_BYTES 1.0 /* an E4M3 weight shard at rest under --fp8-params */

/* Bytes per element of FP32 statistics (activations: act_ctx.ab). */
#define FP32_BYTES 4.0
#define TOKEN_ID_BYTES 8.0 /* int64 token ids and labels (Megatron data loader) */

double pp_model_state_bytes(double params, double weight_bytes, double grad_bytes, double opt_bytes,
                            int zero, int shard, double *weights_out, double *grads_out,
                            double *opt_out)
{
	double n = shard > 0 ? shard : 1;
	double w = params * weight_bytes / (zero >= 3 ? n : 1);
	double g = params * grad_bytes / (zero >= 2 ? n : 1);
	double o = params * opt_bytes / (zero >= 1 ? n : 1);
	if (weights_out)
		*weights_out = w;
	if (grads_out)
		*grads_out = g;
	if (opt_out)
		*opt_out = o;
	return w + g + o;
}

/* Shapes every activation term needs, for one micro-batch on one GPU. */
typedef struct act_ctx {
	double T;        /* tokens of one micro-batch on this rank: mbs * seq / (cp * tp2) */
	double seq;      /* full sequence length (keys a query attends over) */
	double kv_extra; /* 2D TP: tokens of gathered K, V beyond T: mbs * seq - T */
	double t;        /* tensor-parallel degree */
	double sp_div;   /* t with sequence parallelism, else 1 */
	double gin_div;  /* divisor of a saved QKV / FC1 input: sp_div, 1 if kept gathered */
	double ab;       /* bytes per activation element: pp_activation_bytes */
	double lin_b;    /* bytes of a saved GEMM input: the FP8 recipe's copy, else ab */
	double res_b;    /* bytes of a residual-stream element a norm saves: ab, or 4 under
	                    torch.autocast over fp32 parameters (the embedding's fp32 output
	                    and each fp32 + bf16 residual add stay fp32) */
	double norm_b;   /* bytes of the norm's normalized output its weight multiply saves:
	                    0 (fused norm), 4 (computed in fp32 under autocast) */
	bool eager;      /* element-wise ops keep their own copies (eager_activation_copies) */
	bool fp8;
	bool probs_in_expert; /* the routing weights multiply inside the experts
	                         (framework.moe_probs_in_expert) */
} act_ctx;

static void act_ctx_init(act_ctx *c, const ppi_mb_shape *mb, const pp_system *s, const pp_job *job,
                         const pp_plan *p)
{
	c->T = mb->T;
	c->seq = mb->S;
	c->kv_extra = mb->kv_extra;
	c->t = mb->t;
	c->sp_div = mb->sd;
	/* The framework's sp_gathered_gemm_inputs: DHelix's block keeps the
	 * all-gathered norm output for the weight gradient (dstb.py). */
	c->gin_div = s->sp_gathered_gemm_inputs >= 0.5 ? 1.0 : mb->sd;
	c->fp8 = mb->fp8;
	c->probs_in_expert = s->moe_probs_in_expert >= 0.5;
	c->ab = mb->ab;
	c->lin_b = mb->saved_in_b;
	/* torch.autocast over fp32 parameters (param_bytes 4 with a compute
	 * copy held, no FSDP mixed precision): the embedding runs in fp32 and
	 * each residual add of a bf16 output to the fp32 stream stays fp32; the
	 * RMSNorm computes in fp32 and its weight multiply keeps the fp32
	 * normalized input (the README of ../shared/measurements/h100-sxm). */
	bool autocast = job->precision != PP_PREC_FP32 && s->param_bytes >= FP32_BYTES &&
	                s->compute_copy_bytes > 0 && p->zero < 2;
	c->res_b = autocast ? FP32_BYTES : c->ab;
	c->norm_b = autocast ? FP32_BYTES : 0;
	c->eager = s->eager_activation_copies >= 0.5;
}

/* Saved by a norm: its input and per-token statistics. */
static double norm_act(const act_ctx *c, double width)
{
	return c->T * (width * c->ab + 2 * FP32_BYTES) / c->sp_div;
}

/* Saved by a norm of the residual stream: its input at the stream's width,
 * the normalized output where the weight multiply keeps it, the statistics. */
static double res_norm_act(const act_ctx *c, double h)
{
	return c->T * (h * (c->res_b + c->norm_b) + 2 * FP32_BYTES) / c->sp_div;
}

/* Activations of the attention half of one layer, one micro-batch. */
static double attention_act(const pp_model *m, const pp_plan *p, const act_ctx *c,
                            unsigned recomputed)
{
	bool recompute_core = (recomputed & PP_RECOMPUTE_MODULE_CORE_ATTN) != 0;
	double T = c->T, h = m->hidden, H = m->num_heads, t = c->t, sd = c->sp_div;
	double a = res_norm_act(c, h);
	double o_width; /* width of the attention output (input of the output projection) */
	if (m->mla.kv_lora_rank > 0) {
		const pp_mla *ml = &m->mla;
		double qk = ml->qk_nope_head_dim + ml->qk_rope_head_dim;
		a += T * h * c->lin_b / c->gin_div; /* input of the down projections */
		if (ml->q_lora_rank > 0)
			a += norm_act(c, ml->q_lora_rank) + T * ml->q_lora_rank * c->lin_b / sd;
		a += norm_act(c, ml->kv_lora_rank) + T * ml->kv_lora_rank * c->lin_b / sd;
		a += T * ml->qk_rope_head_dim * c->ab / sd; /* shared rope key */
		/* q, k, v: dropped after core attention's forward when the
		 * up-projections are recomputed (Megatron-Core mla_up_proj,
		 * multi_latent_attention.py qkv_up_checkpoint) */
		if (!(recomputed & PP_RECOMPUTE_MODULE_MLA_UP_PROJ))
			a += T * H * (2 * qk + ml->v_head_dim) * c->ab / t;
		a += c->kv_extra * H * (qk + ml->v_head_dim) * c->ab / t; /* 2D TP */
		o_width = H * ml->v_head_dim;
	} else {
		double d = m->head_dim, kv = m->num_kv_heads;
		a += T * h * c->lin_b / c->gin_div;    /* QKV GEMM input */
		a += T * (H + 2 * kv) * d * c->ab / t; /* q, k, v */
		/* 2D TP (seed 003 Table II): K, V gathered over n_2 to all l tokens. */
		a += c->kv_extra * 2 * kv * d * c->ab / t;
		o_width = H * d;
		if (c->eager) {
			/* Eager element-wise copies: RoPE rotates q and k as fp32 complex
			 * pairs (kept by the multiply), GQA's repeat_interleave keeps K
			 * and V expanded to all heads for SDPA, and the SDPA output is
			 * made contiguous for the projection (a second copy). */
			a += T * (H + kv) * d * FP32_BYTES / t;
			a += 2 * T * (H - kv) * d * c->ab / t;
			a += T * H * d * c->ab / t;
		}
	}
	double heads_local = H / t;
	if (!recompute_core) {
		if (p->flash) {
			/* Flash attention keeps the output (shared with the projection input
			 * unless that is an FP8 copy) and the fp32 log-sum-exp per head. */
			a += T * heads_local * FP32_BYTES;
			if (c->fp8 && c->lin_b < c->ab)
				a += T * o_width * c->ab / t;
		} else {
			/* Scores: softmax output (2 bytes in BF16), and with dropout its
			 * mask (1) and output (2): Korthikanti's 5as/h term. */
			const double mask_b = 1;
			double per = m->dropout ? 2 * c->ab + mask_b : c->ab;
			a += per * heads_local * T * c->seq;
		}
	}
	a += T * o_width * c->lin_b / t; /* output-projection input */
	if (m->dropout)
		a += T * h / sd; /* dropout mask after the projection, 1 byte */
	return a;
}

/* Activations of a dense MLP of width `ffn` (without its norm). */
static double dense_mlp_act(const pp_model *m, const act_ctx *c, double ffn, bool with_input)
{
	double T = c->T, t = c->t;
	double a = with_input ? T * m->hidden * c->lin_b / c->gin_div : 0;
	a += T * ffn * (m->gated_mlp ? 2.0 : 1.0) * c->ab / t; /* activation-function input */
	a += T * ffn * c->lin_b / t;                           /* second GEMM input */
	return a;
}

static double mlp_act(const pp_model *m, const pp_plan *p, const act_ctx *c, bool moe)
{
	double T = c->T, h = m->hidden;
	double a = res_norm_act(c, h);
	if (m->dropout)
		a += T * h / c->sp_div;
	if (!moe)
		return a + dense_mlp_act(m, c, m->ffn_hidden, true);
	const pp_moe *e = &m->moe;
	double Td = T / c->sp_div;             /* tokens this rank routes */
	a += Td * h * c->ab;                   /* router / shared-expert input */
	a += Td * e->num_experts * FP32_BYTES; /* router probabilities (fp32) */
	double etp = p->etp > 0 ? p->etp : p->tp;
	double gather = c->sp_div > 1 ? etp : 1; /* expert-TP all-gathers the tokens */
	double R = Td * e->top_k * gather;       /* token copies this rank's experts run */
	double fe = e->expert_ffn_hidden / etp;
	a += R * h * c->lin_b;                            /* expert FC1 input */
	a += R * fe * (m->gated_mlp ? 2.0 : 1.0) * c->ab; /* activation input */
	a += R * fe * c->lin_b;                           /* expert FC2 input */
	/* A combine that weights the expert outputs keeps them for the
	 * weights' gradient; weights applied at the experts' activation
	 * (Megatron-Core's weighted SwiGLU) keep only the fp32 weights. */
	if (c->probs_in_expert)
		a += R * FP32_BYTES;
	else
		a += Td * e->top_k * h * c->ab; /* expert outputs kept for the weighting */
	if (e->shared_ffn_hidden > 0)
		a += dense_mlp_act(m, c, e->shared_ffn_hidden, false);
	return a;
}

/*
 * Per-op selective activation checkpointing as torchtitan applies it
 * (torchtitan/distributed/activation_checkpoint.py, selective_ac_option "op"):
 * inside each layer's checkpoint region the outputs of ops on the save list
 * are kept -- aten.mm except every second one (a per-layer counter), the
 * scaled-dot-product-attention kernels (output and log-sum-exp) and
 * reduce_scatter -- and everything else (norms, RoPE, SwiGLU, the other
 * matmuls) is recomputed from the layer's input.  Llama's matmul order is wq,
 * wk, wv, wo, w1, w3, w2: wq, wv, w1 and w2 (the 1st, 3rd, 5th, 7th) are kept;
 * a plain MLP keeps fc1 (the 5th).  MLA attention and MoE MLPs are not lists
 * of aten.mm: they keep what they keep without recompute (an upper bound).
 */
static double op_sac_act(const pp_model *m, const pp_plan *p, const act_ctx *c, bool moe)
{
	double T = c->T, h = m->hidden, t = c->t, sd = c->sp_div;
	double a = T * h * c->res_b / sd; /* the region's input */
	if (m->mla.kv_lora_rank > 0) {
		a += attention_act(m, p, c, 0);
	} else {
		double H = m->num_heads, kv = m->num_kv_heads, d = m->head_dim;
		a += T * H * d * c->ab / t;                            /* wq output (1st mm) */
		a += T * kv * d * c->ab / t;                           /* wv output (3rd mm) */
		a += T * H * d * c->ab / t + T * (H / t) * FP32_BYTES; /* SDPA out, lse */
		if (sd > 1)
			a += T * h * c->ab / sd; /* wo's reduce-scatter output */
	}
	if (moe)
		return a + mlp_act(m, p, c, true);
	a += T * m->ffn_hidden * c->ab / t; /* w1 / fc1 output (5th mm) */
	if (m->gated_mlp)
		a += T * h * c->ab; /* w2 output (7th mm), partial sums before the reduce */
	if (sd > 1)
		a += T * h * c->ab / sd; /* the MLP's reduce-scatter output */
	return a;
}

/* One layer, one micro-batch, under the plan's recompute mode; `op_sac`: the
 * framework's selective recompute is per-op SAC (selective_op_sac). */
static double layer_act(const pp_model *m, const pp_plan *p, const act_ctx *c, int layer,
                        pp_recompute mode, bool op_sac)
{
	if (mode == PP_RECOMPUTE_FULL)
		return c->T * m->hidden * c->res_b / c->sp_div; /* the layer's input only */
	bool moe = pp_model_layer_is_moe(m, layer);
	if (mode == PP_RECOMPUTE_SELECTIVE && op_sac) {
		double full = attention_act(m, p, c, 0) + mlp_act(m, p, c, moe);
		double sac = op_sac_act(m, p, c, moe);
		return sac < full ? sac : full;
	}
	unsigned mods = mode == PP_RECOMPUTE_SELECTIVE ? pp_plan_recomputed_modules(p) : 0;
	return attention_act(m, p, c, mods) + mlp_act(m, p, c, moe);
}

/* Transient buffers of MoE token dispatch: send and receive copies. */
static double moe_dispatch_bytes(const pp_model *m, const act_ctx *c)
{
	return 2.0 * (c->T / c->sp_div) * m->moe.top_k * m->hidden * c->ab;
}

pp_status pp_memory_stage(const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *p, int stage, pp_stage_memory *out, pp_error *err)
{
	if (p->microbatches < 1 || p->dp < 1)
		return ppi_fail(err, "", "plan", "plan is not resolved (call pp_plan_resolve)");
	pp_scenario sc;
	ppi_scenario_init(&sc, m, s, job, p, 0);
	return ppi_memory_stage(&sc, stage, out, err);
}

pp_status pp_scenario_memory(const pp_scenario *sc, int stage, pp_stage_memory *out, pp_error *err)
{
	return ppi_memory_stage(sc, stage, out, err);
}

/* What the parts of ppi_memory_stage pass on, for one stage of one plan. */
typedef struct stage_acc {
	bool first, last; /* the stage holds the embedding / the LM head */
	/* parameters owned by this GPU, split by sharding group */
	double dense, experts, gemm;
	double max_layer_params; /* the largest layer's parameters on this GPU */
	double max_layer_gemm;   /* the largest layer's GEMM parameters on this GPU */
	double head_gemm;        /* the LM head's GEMM parameters on this GPU (last stage) */
	double casts_dropped;    /* autocast casts held only while in autocast (full recompute) */
	double max_layer_act;    /* the largest layer's activations without recompute */
	double act_sum;          /* the stage's layers' activations, one micro-batch each */
	double cc;               /* bytes per parameter of the GEMMs' compute copy, 0: none */
	bool copy_held;          /* that copy held from forward to backward */
	double copy_bytes;       /* that held copy's bytes in weights_bytes */
	double per_layer;        /* act_sum per layer */
	bool wshape;             /* the schedule holds layers per strand (held_layers) */
	double w_any, w_turn;    /* held_layers' activation sets (wshape) */
	double si_layer;         /* DHelix SI's extra layer of activations (wshape) */
	double logits_transient; /* what the loss holds beyond its logits while it runs */
	double tr_layer, tr_z3;  /* transients: inside a layer, ZeRO-3's gathered layers */
	ppi_stage_train train;   /* what trains (job.ft): trainable and frozen parameters */
} stage_acc;

/* Fine-tuning (docs/finetune.md): the change to one layer's saved
 * activations, one micro-batch, for a layer backward passes through.  A
 * frozen GEMM needs no weight gradient, so autograd does not save its input
 * (PyTorch saves a matmul operand only for a gradient that is required) --
 * unless an adapter on it trains, whose A reads the same input; flash
 * attention keeps its output, the projection's input, for itself.  Each
 * adapter keeps x A (T x r) for B's weight gradient.  Full recompute keeps
 * the layer's input only: no change. */
static double ft_act_delta(const pp_model *m, const pp_plan *p, const pp_job *job, const act_ctx *c,
                           int layer)
{
	if (!pp_finetune_layer_frozen(job, layer) || p->recompute == PP_RECOMPUTE_FULL)
		return 0;
	unsigned tg = pp_finetune_layer_trains(job, layer) ? pp_finetune_targets(job) : 0;
	double T = c->T, h = m->hidden, t = c->t, d = 0;
	bool dense = !pp_model_layer_is_moe(m, layer), mla = m->mla.kv_lora_rank > 0;
	if (!(tg & PP_LORA_QKV) && !mla)
		d -= T * h * c->lin_b / c->gin_div;
	if (!(tg & PP_LORA_PROJ) && !p->flash && !mla)
		d -= T * (double)m->num_heads * m->head_dim * c->lin_b / t;
	if (!(tg & PP_LORA_FC1) && dense)
		d -= T * h * c->lin_b / c->gin_div;
	if (!(tg & PP_LORA_FC2) && dense)
		d -= T * m->ffn_hidden * c->lin_b / t;
	for (unsigned bit = 1; bit <= PP_LORA_FC2; bit <<= 1)
		if (tg & bit && (dense || bit <= PP_LORA_PROJ))
			d += T * job->ft.lora_rank * c->ab;
	return d;
}

/* Parameters owned by this GPU (a->dense, experts, gemm) and the largest
 * layer's parameters and activations, from each layer kind of the stage
 * (sk) once, scaled by its count, plus the embedding and the head where the
 * schedule places them (a->first, a->last); a->act_sum under the plan's
 * recompute.  Reads the scenario only. */
static void stage_params(const pp_scenario *sc, const ppi_stage_kinds *sk, const act_ctx *c,
                         stage_acc *a)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_plan *p = &sc->plan;
	double t = p->tp, h = m->hidden;
	for (int k = 0; k < 2; k++) {
		if (!sk->counts[k])
			continue;
		const ppi_layer_kind *x = &sc->kind[k];
		int l = sk->index[k];
		double n = sk->counts[k];
		bool op_sac = s->selective_op_sac >= 0.5;
		double act = layer_act(m, p, c, l, p->recompute, op_sac);
		double full = layer_act(m, p, c, l, PP_RECOMPUTE_NONE, op_sac);
		if (pp_finetune_on(sc->job)) {
			/* Layers below the first backward reaches save nothing. */
			int fl = sk->frozen_index[k] >= 0 ? sk->frozen_index[k] : l;
			double nf = sk->frozen[k], nt = n - nf;
			bool fwd_only = pp_finetune_backward_from(sc->job) > 0;
			double da = ft_act_delta(m, p, sc->job, c, l);
			if (!(p->recompute == PP_RECOMPUTE_SELECTIVE && op_sac))
				act += da;
			full += da;
			double af = fwd_only ? 0 : act, per = n > 0 ? (nt * act + nf * af) / n : 0;
			if (nf > 0 && !fwd_only &&
			    !(p->recompute == PP_RECOMPUTE_SELECTIVE && op_sac))
				per += nf / n * (ft_act_delta(m, p, sc->job, c, fl) - da);
			act = per;
		}
		a->dense += x->mine * n;
		a->experts += x->mine_e * n;
		a->gemm += x->gemm * n;
		if (x->mine + x->mine_e > a->max_layer_params)
			a->max_layer_params = x->mine + x->mine_e;
		if (x->gemm > a->max_layer_gemm)
			a->max_layer_gemm = x->gemm;
		a->act_sum += act * n;
		if (full > a->max_layer_act)
			a->max_layer_act = full;
	}
	double emb_local = (double)m->vocab * h / t;
	if (a->first)
		a->dense += emb_local + sc->first_extra_params;
	if (a->last) {
		a->dense += sc->head_extra_params;
		a->head_gemm = emb_local; /* the head's matmul, tied or not */
		/* Untied head; or, with pp > 1, Megatron's copy of tied embeddings. */
		if (!m->tied_embeddings || sc->head_stage != 0) {
			a->dense += emb_local;
			a->gemm += emb_local;
		}
	}
}

/* Model state: out->weights_bytes, gradients_bytes and optimizer_bytes of
 * a's parameters under the job's precision and optimizer, the framework's
 * layout and the plan's ZeRO stage; sets a->cc and a->copy_held. */
static void model_state(const pp_scenario *sc, stage_acc *a, pp_stage_memory *out)
{
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	const pp_plan *p = &sc->plan;
	const pp_schedule_type *sched = sc->sched;
	double dense = a->dense, experts = a->experts;
	double wb = sc->mb.wb;
	double ob;
	if (job->optimizer == PP_OPT_SGD)
		ob = job->precision == PP_PREC_FP32 ? 4.0 : 8.0; /* (master +) momentum */
	else
		ob = job->precision == PP_PREC_FP32 ? 8.0 : 12.0; /* (master +) m + v */
	/* The framework's layout (data/framework/NAME.json): resident parameters
	 * of param_bytes; fp32 ones are their own master (no copy in the
	 * optimizer); GEMMs then read a compute copy of compute_copy_bytes. */
	bool mixed = job->precision != PP_PREC_FP32;
	double pb = s->param_bytes > 0 ? s->param_bytes : wb;
	if (mixed && s->param_bytes >= FP32_BYTES)
		ob -= FP32_BYTES;
	double cc = mixed && s->compute_copy_bytes > 0 ? s->compute_copy_bytes : 0;
	/* FSDP's SHARD_GRAD_OP shards the (fp32) parameters at rest like ZeRO-3
	 * and keeps the gathered copy from forward to backward. */
	int zero_w = cc > 0 && p->zero == 2 ? 3 : p->zero;
	int shard_dense = sc->shard_dense, shard_exp = sc->shard_expert;
	double w1, g1, o1, w2, g2, o2, wx;
	/* Fine-tuning (job.ft): gradients and optimizer states of the trainable
	 * parameters only; frozen ones are weights alone (below). */
	const ppi_stage_train *tr = &a->train;
	pp_model_state_bytes(tr->dense, pb, job->grad_bytes, ob, p->zero, shard_dense, &w1, &g1,
	                     &o1);
	pp_model_state_bytes(tr->experts, pb, job->grad_bytes, ob, p->zero, shard_exp, &w2, &g2,
	                     &o2);
	if (zero_w != p->zero) {
		pp_model_state_bytes(tr->dense, pb, 0, 0, zero_w, shard_dense, &w1, NULL, NULL);
		pp_model_state_bytes(tr->experts, pb, 0, 0, zero_w, shard_exp, &w2, NULL, NULL);
	}
	double gemm = a->gemm;
	if (tr->frozen_dense + tr->frozen_experts > 0) {
		/* Frozen weights at rest: as the trainable ones, or the layers' GEMM
		 * weights as NF4 (QLoRA), which no compute copy outlives its GEMM
		 * (dequantised per use: transients). */
		double nf4 = job->ft.nf4 ? tr->frozen_gemm : 0;
		double fd = tr->frozen_dense * pb, fe = tr->frozen_experts * pb;
		if (nf4 > 0) {
			double share = tr->frozen_experts / (tr->frozen_dense + tr->frozen_experts);
			double dq = pb - pp_finetune_nf4_bytes();
			fd -= nf4 * (1 - share) * dq;
			fe -= nf4 * share * dq;
			gemm -= nf4;
		}
		double wf1, wf2;
		pp_model_state_bytes(fd, 1, 0, 0, zero_w, shard_dense, &wf1, NULL, NULL);
		pp_model_state_bytes(fe, 1, 0, 0, zero_w, shard_exp, &wf2, NULL, NULL);
		w1 += wf1;
		w2 += wf2;
	}
	/* The compute copy held across forward and backward: torch.autocast's
	 * cast cache of every GEMM weight (no ZeRO-3), SHARD_GRAD_OP's gathered
	 * weights, or ZeRO-3 with pp > 1 that does not reshard after forward.
	 * Otherwise ZeRO-3 gathers it layer by layer (a transient below). */
	bool copy_held = false;
	wx = 0;
	if (cc > 0 && p->zero < 2) {
		/* autocast casts the tied head's weight for its matmul too; under
		 * full recompute (torch.utils.checkpoint) a block's casts are made
		 * again in its recompute and held only there (a transient), so only
		 * the head's, outside the checkpoints, lives from forward to
		 * backward. */
		double tied_head =
		    sc->model->tied_embeddings && sc->head_stage == 0 ? a->head_gemm : 0;
		wx = (p->recompute == PP_RECOMPUTE_FULL ? a->head_gemm : gemm + tied_head) * cc;
		if (p->recompute == PP_RECOMPUTE_FULL)
			a->casts_dropped = (gemm + tied_head - a->head_gemm) * cc;
		copy_held = true;
	} else if (cc > 0 && (p->zero == 2 || (p->pp > 1 && s->reshard_after_forward_pp < 0.5))) {
		wx = (dense + experts) * cc;
		copy_held = true;
	}
	/* A schedule that runs two model copies per rank (DualPipe) holds their
	 * parameters, gradients and optimizer states twice. */
	out->weights_bytes = (w1 + w2 + wx) * sched->param_copies;
	out->gradients_bytes = (g1 + g2) * sched->param_copies;
	out->optimizer_bytes = (o1 + o2) * sched->param_copies;
	if (job->precision == PP_PREC_FP8) {
		/* The quantised GEMM weights (docs/memory.md "FP8 weights"): with
		 * --fp8-params they are the weights at rest, in place of the BF16
		 * copy (ZeRO-3: its shards, at the FP8 byte); otherwise the stack's
		 * cache of them beside the BF16 weights.  Each model copy of a
		 * DualPipe rank has its own modules, so its own cache. */
		double held = gemm;
		if (p->zero >= 3) /* only the gathered layers carry quantised copies */
			held = a->max_layer_params * 2;
		double q = held * sc->mb.fp8_w_b;
		if (job->fp8_params) {
			double rest = p->zero >= 3 ? gemm * (pb - FP8_ELEMENT_BYTES) / shard_dense
			                           : gemm * pb;
			out->weights_bytes += (q - rest) * sched->param_copies;
		} else {
			out->weights_bytes += q * s->fp8_weight_cache * sched->param_copies;
		}
	}
	a->cc = cc;
	a->copy_held = copy_held;
	a->copy_bytes = wx * sched->param_copies;
}

/* Activations held at the peak of an ordinary schedule: the layers' of the
 * micro-batches in flight (out->inflight_layer_mbs, act_layers_bytes,
 * act_per_layer_mb_bytes), the embedding's and the head's; for a schedule
 * with held_layers (wshape) its sets a->w_any, w_turn and the SI layer,
 * which wshape_peak weighs.  Sets a->per_layer and a->logits_transient. */
static void activations(const pp_scenario *sc, int stage, const act_ctx *c, stage_acc *a,
                        pp_stage_memory *out)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_plan *p = &sc->plan;
	const pp_schedule_type *sched = sc->sched;
	double t = p->tp, h = m->hidden;
	double n_in = sched->inflight(p, stage);
	double per_layer = out->layers ? a->act_sum / out->layers : 0;
	a->wshape = sched->held_layers != NULL && out->layers > 0;
	if (a->wshape) {
		sched->held_layers(p, stage, out->layers, &a->w_any, &a->w_turn);
		n_in = a->w_any / out->layers;
		/* DHelix SI (seed 002 §4.1, §6.5): inside a block, one strand's
		 * forward of a layer allocates before the other strand's backward of
		 * the layer it is paired with frees ("a few hundred MBs", §4.1): one
		 * layer of one micro-batch, while a pair of layers runs.  Blocks with
		 * both strands exist when m > p (wave y pairs F y with B y - p). */
		if (sched->si && p->microbatches > p->pp)
			a->si_layer = per_layer;
	}
	out->inflight_layer_mbs = n_in * out->layers;
	out->act_layers_bytes = n_in * a->act_sum;
	out->act_per_layer_mb_bytes = per_layer;
	if (a->first) {
		double per_mb = c->T * TOKEN_ID_BYTES; /* token ids */
		if (m->dropout)
			per_mb += c->T * h / c->sp_div; /* embedding dropout mask */
		out->act_embedding_bytes = n_in * per_mb;
	}
	if (a->last) {
		/* The head's micro-batch runs its backward right after its forward in
		 * 1F1B-style schedules; GPipe keeps all of them. */
		double held = sched->head_held(p);
		double vocab_local = (double)m->vocab / t;
		double per_mb = res_norm_act(c, h) + c->T * h * c->lin_b / c->sp_div +
		                c->T * vocab_local * s->logit_bytes + c->T * TOKEN_ID_BYTES;
		out->act_logits_bytes = held * per_mb;
		/* What the loss holds beyond that while it runs (framework-specific). */
		a->logits_transient = c->T * vocab_local * s->loss_transient_bytes;
		/* autocast's cast cache keeps every block's cast until autocast
		 * exits, after the loss's forward: under full recompute that moment
		 * (the casts, the bf16 logits beside their fp32 copy) can top the
		 * loss's backward.  Measured: the full-recompute steps of
		 * ../shared/measurements/h100-sxm/train_steps_eager.jsonl. */
		double fwd = a->casts_dropped + c->T * vocab_local * (c->ab + FP32_BYTES);
		if (a->casts_dropped > 0 && fwd > a->logits_transient)
			a->logits_transient = fwd;
	}
	a->per_layer = per_layer;
}

/* QLoRA: the bf16 copy of the largest frozen GEMM weight on this GPU, which
 * the NF4 dequantisation writes before each use and the GEMM frees after it
 * (bitsandbytes MatMul4Bit, torchao linear_nf4: weight.to(input.dtype)). */
static double nf4_dequant_bytes(const pp_model *m, const act_ctx *c)
{
	double h = m->hidden,
	       qkv = h * ((double)m->num_heads + 2.0 * m->num_kv_heads) * m->head_dim;
	double f = m->ffn_hidden * (m->gated_mlp ? 2.0 : 1.0);
	return fmax(qkv, h * f) / c->t * c->ab;
}

/* The transients that come and go inside a layer's computation: a->tr_layer
 * (a recomputed layer's activations, MoE dispatch buffers) and a->tr_z3
 * (ZeRO-3's gathered layers and unsharded gradient). */
static void transients(const pp_scenario *sc, const act_ctx *c, stage_acc *a)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_plan *p = &sc->plan;
	double tr_layer = 0;
	if (p->recompute != PP_RECOMPUTE_NONE) {
		/* Backward of a recomputed layer re-materialises its full activations. */
		double rc = p->recompute == PP_RECOMPUTE_FULL ? a->max_layer_act
		                                              : a->max_layer_act - a->per_layer;
		/* autocast's casts of the recomputed block (model_state) */
		if (p->recompute == PP_RECOMPUTE_FULL && a->copy_held && p->zero < 2)
			rc += a->max_layer_gemm * a->cc;
		if (rc > tr_layer)
			tr_layer = rc;
	}
	double tr_z3 = 0;
	if (p->zero >= 3) {
		/* FSDP/ZeRO-3: the current and the prefetched layer unsharded, plus the
		 * current layer's unsharded gradient before its reduce-scatter; DeepSpeed
		 * bounds both by its live-parameter and bucket budgets. */
		double gathered = 2 * a->max_layer_params, grads = a->max_layer_params;
		if (pp_finetune_on(sc->job)) /* frozen weights have no gradient */
			grads = a->train.layer_train_max;
		if (s->zero3_live_params > 0 && s->zero3_live_params < gathered)
			gathered = s->zero3_live_params; /* DeepSpeed gathers within a budget */
		if (s->zero3_bucket_params > 0 && s->zero3_bucket_params < grads)
			grads = s->zero3_bucket_params;
		tr_z3 = (a->copy_held ? 0 : gathered * (a->cc > 0 ? a->cc : sc->mb.wb)) +
		        grads * sc->job->grad_bytes;
	}
	if (m->moe.num_experts > 0) {
		double d = moe_dispatch_bytes(m, c);
		if (d > tr_layer)
			tr_layer = d;
	}
	if (sc->job->ft.nf4 && a->train.frozen_gemm > 0)
		tr_layer = fmax(tr_layer, nf4_dequant_bytes(m, c));
	a->tr_layer = tr_layer;
	a->tr_z3 = tr_z3;
}

/* The largest single buffer a micro-batch allocates and frees on this stage:
 * the loss's copy of the logits (head stage; fp32 but for a fused loss), the widest activation of
 * a layer (the MLP's activation-function input; the score matrix without
 * flash attention), a ZeRO-3 gathered layer, an MoE dispatch buffer. */
static double largest_buffer(const pp_scenario *sc, const act_ctx *c, const stage_acc *a)
{
	const pp_model *m = sc->model;
	const pp_plan *p = &sc->plan;
	double x = 0;
	if (a->last) /* the logits' copy the loss keeps (fp32 unless fused: logit_bytes) */
		x = c->T * ((double)m->vocab / c->t) * sc->system->logit_bytes;
	double f =
	    m->ffn_hidden > m->moe.expert_ffn_hidden ? m->ffn_hidden : m->moe.expert_ffn_hidden;
	x = fmax(x, c->T * f * (m->gated_mlp ? 2.0 : 1.0) * c->ab / c->t);
	if (!p->flash)
		x = fmax(x, c->T * (m->num_heads / c->t) * c->seq * c->ab);
	if (p->zero >= 3)
		x = fmax(x, a->max_layer_params * (a->cc > 0 ? a->cc : sc->mb.wb));
	if (m->moe.num_experts > 0)
		x = fmax(x, moe_dispatch_bytes(m, c) / 2);
	return x;
}

/* Under a schedule with held_layers (wshape): the larger of its two peaks,
 * inside an SI block or at the turn of the U, replaces the activations
 * activations() set (out->inflight_layer_mbs, act_layers_bytes,
 * act_logits_bytes); returns the transient bytes at that peak. */
static double wshape_peak(const stage_acc *a, pp_stage_memory *out)
{
	/* Two moments compete for the W's peak.  Inside a block (a pair of
	 * layers running): the most activation sets any block end holds, the
	 * SI layer and the layer's transients.  On rank 0 at the turn of the
	 * U: the head has just run for a chunk-1 forward and the loss holds
	 * its logits; the SI block's layers are done (DHelix's SI replaces
	 * Megatron's transformer block; the head and loss are the
	 * post-processing module after it, §5), and the next block's
	 * backward starts with the loss.  So the SI layer and the logits are
	 * never alive together. */
	double in_block = a->w_any * a->per_layer + a->si_layer + fmax(a->tr_layer, a->tr_z3);
	double at_turn = -1;
	if (a->last)
		at_turn = a->w_turn * a->per_layer + out->act_logits_bytes +
		          fmax(a->logits_transient, a->tr_z3);
	if (at_turn >= in_block) {
		out->inflight_layer_mbs = a->w_turn;
		out->act_layers_bytes = a->w_turn * a->per_layer;
		return fmax(a->logits_transient, a->tr_z3);
	}
	out->inflight_layer_mbs = a->w_any + (a->si_layer > 0 ? 1 : 0);
	out->act_layers_bytes = a->w_any * a->per_layer + a->si_layer;
	out->act_logits_bytes = 0; /* freed by the loss's backward */
	return fmax(a->tr_layer, a->tr_z3);
}

/* Bytes of DeepSpeed's fp32 gradient partition on the host per offloaded
 * parameter (stage_1_and_2.py with offload_optimizer: the partition's fp32
 * .grad that CPU Adam reads; Megatron's HybridDeviceOptimizer keeps the same
 * fp32 copy on the CPU). */
#define HOST_GRAD_BYTES 4.0
/* DeepSpeed's ZeRO config default reduce_bucket_size, 5e8 elements
 * (deepspeed/runtime/zero/config.py): under ZeRO-2/3 with offload_optimizer
 * the reduced gradients leave for the host bucket by bucket. */
#define REDUCE_BUCKET_ELEMS 5e8

/* CPU offload (docs/memory.md, "CPU offload"): what leaves the GPU for the
 * host under the plan's offload switches, into out->host_bytes (per GPU).
 * Optimizer: the master weights and moments (and their fp32 gradient
 * partition) live on the host; under ZeRO >= 2 the gradients leave the GPU
 * as they are reduced, one reduce bucket (REDUCE_BUCKET_ELEMS) at a time.  Parameters (ZeRO-3 only, ZeRO-Infinity
 * offload_param): the shard lives on the host, the gathered layers stay
 * transients.  Activations: the saved activations of the layers in flight go
 * to the host; the GPU keeps the layer running and the one being fetched or
 * sent (two layers' sets). */
static void offload(const pp_scenario *sc, const stage_acc *a, pp_stage_memory *out)
{
	const pp_plan *p = &sc->plan;
	out->host_bytes = 0;
	if (p->offload_optimizer && out->optimizer_bytes > 0) {
		double local = (p->zero >= 1 ? a->train.dense / sc->shard_dense +
		                                   a->train.experts / sc->shard_expert
		                             : a->train.dense + a->train.experts);
		out->host_bytes += out->optimizer_bytes + local * HOST_GRAD_BYTES;
		out->optimizer_bytes = 0;
		if (p->zero >= 2)
			out->gradients_bytes =
			    fmin(out->gradients_bytes, REDUCE_BUCKET_ELEMS * sc->job->grad_bytes);
	}
	if (p->offload_params && p->zero >= 3) {
		out->host_bytes += out->weights_bytes;
		out->weights_bytes = 0;
	}
	if (p->offload_activations && out->layers > 0) {
		/* The first offload_layers layers of each model chunk go out, the
		 * rest stay; the offloading ones keep two layers' sets in HBM. */
		double f = pp_offload_fraction(p, out->layers);
		double away = out->act_layers_bytes * f;
		double kept = fmin(away, 2 * a->per_layer);
		out->host_bytes += away - kept;
		out->act_layers_bytes -= away - kept;
	}
}

/*
 * Gradients freed after each optimizer step (framework.grads_set_to_none:
 * zero_grad(set_to_none=True)) in a step of one micro-batch: backward
 * allocates each gradient when it produces it and frees each layer's
 * activations once it has used them, so the two do not peak together.  At
 * backward's start every activation is held with the loss's transient and
 * the LM head's gradient, the first computed (its share of the stage's
 * gradients, sharded as they are); at its end every gradient is held with
 * one layer's transient and the embedding's activations, and the compute
 * copies held from forward (autocast's casts, gathered weights) are gone
 * with the saved tensors that kept them.  The peak is the
 * larger of the two moments, and `out` is set to what it holds; returns the
 * transient bytes at it.  More micro-batches (the gradients of the first
 * are held through the rest), a W-shaped schedule or offloading: `out` and
 * `tr` as they are.
 */
static double freed_grads_peak(const pp_scenario *sc, const stage_acc *a, pp_stage_memory *out,
                               double tr)
{
	const pp_plan *p = &sc->plan;
	if (sc->system->grads_set_to_none < 0.5 || p->microbatches != 1 || a->wshape ||
	    p->offload_optimizer || p->offload_activations || out->gradients_bytes <= 0)
		return tr;
	double params = a->dense + a->experts;
	double head = a->last && params > 0 ? out->gradients_bytes * a->head_gemm / params : 0;
	double start = out->activations_bytes + tr + head;
	double end = out->gradients_bytes + out->act_embedding_bytes + a->tr_layer - a->copy_bytes;
	if (start >= end) {
		out->gradients_bytes = head;
		return tr;
	}
	out->weights_bytes -= a->copy_bytes;
	out->act_layers_bytes = out->act_logits_bytes = 0;
	out->activations_bytes = out->act_embedding_bytes;
	return a->tr_layer;
}

pp_status ppi_memory_stage(const pp_scenario *sc, int stage, pp_stage_memory *out, pp_error *err)
{
	const pp_system *s = sc->system;
	const pp_plan *p = &sc->plan;
	if (stage < 0 || stage >= p->pp)
		return ppi_fail(err, "", "stage", "stage %d is outside 0..%d", stage, p->pp - 1);
	memset(out, 0, sizeof *out);
	out->stage = stage;
	ppi_stage_kinds sk;
	ppi_scenario_stage_kinds(sc, stage, &sk);
	out->layers = sk.layers;
	/* The schedule's placement: the head on the last rank, or under DHelix's
	 * U (wshape) on rank 0 with the embedding (schedule_type.h). */
	stage_acc a = {0};
	a.first = stage == 0;
	a.last = stage == sc->head_stage;
	act_ctx c;
	act_ctx_init(&c, &sc->mb, s, sc->job, p);
	stage_params(sc, &sk, &c, &a);
	ppi_scenario_stage_train(sc, stage, &sk, &a.train);
	out->params = a.dense + a.experts + a.train.lora;
	model_state(sc, &a, out);
	activations(sc, stage, &c, &a, out);
	/* ---- transients: the largest buffer that comes and goes at the peak */
	transients(sc, &c, &a);
	double tr = fmax(a.logits_transient, fmax(a.tr_layer, a.tr_z3));
	if (a.wshape)
		tr = wshape_peak(&a, out);
	offload(sc, &a, out);
	out->activations_bytes =
	    out->act_layers_bytes + out->act_embedding_bytes + out->act_logits_bytes;
	tr = freed_grads_peak(sc, &a, out, tr);
	out->transient_bytes = tr;
	out->framework_bytes = s->gpu.cuda_context_bytes + s->comm_buffer_bytes;
	double tensors = out->weights_bytes + out->gradients_bytes + out->optimizer_bytes +
	                 out->activations_bytes + tr;
	/* PyTorch's CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp):
	 * requests over 1 MiB come from the large pool, rounded to 2 MiB
	 * (kRoundLarge) in segments of their own size above 10 MiB; a freed
	 * block stays cached in its segment, is split for smaller requests but
	 * never merged across segments.  The buffers a micro-batch allocates
	 * and frees (the loss's fp32 logits above all) leave their segments
	 * cached, partly held by longer-lived tensors split into them, so the
	 * next micro-batch's buffer of that size takes a fresh segment: at the
	 * peak the reserve holds about one largest transient buffer beyond what
	 * is allocated (allocator_transient_segments; docs/memory.md).  Where
	 * many tensors of many sizes live (pipelines, micro-batches in flight)
	 * rounding and split blocks take a share of them instead
	 * (allocator_fraction), whichever is larger. */
	out->largest_transient_bytes = largest_buffer(sc, &c, &a);
	out->allocated_bytes = tensors;
	out->fragmentation_bytes =
	    fmax(out->largest_transient_bytes * s->allocator_transient_segments,
	         tensors * s->allocator_fraction);
	out->reserved_bytes = tensors + out->fragmentation_bytes;
	out->other_bytes = tr + out->framework_bytes + out->fragmentation_bytes;
	out->total_bytes = out->reserved_bytes + out->framework_bytes;
	return PP_OK;
}

bool pp_memory_reserve_oom(const pp_stage_memory *m, double capacity_bytes)
{
	return m->total_bytes > capacity_bytes &&
	       m->allocated_bytes + m->framework_bytes <= capacity_bytes;
}

pp_status pp_memory_peak(const pp_model *m, const pp_system *s, const pp_job *job,
                         const pp_plan *plan, pp_stage_memory *out, pp_error *err)
{
	pp_stage_memory cur;
	for (int st = 0; st < plan->pp; st++) {
		pp_status rc = pp_memory_stage(m, s, job, plan, st, &cur, err);
		if (rc)
			return rc;
		if (st == 0 || cur.total_bytes > out->total_bytes)
			*out = cur;
	}
	return PP_OK;
}
