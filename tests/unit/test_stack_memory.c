/*
 * Memory under a training stack's layout (data/framework/NAME.json, docs/memory.md
 * "Training stacks"): the torchtitan / torch.autocast layout against the
 * Megatron one, bucket by bucket, from hand-written byte counts for Llama 3.1
 * 8B on one GPU.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

typedef struct setup {
	pp_model m;
	pp_system s;
	pp_job job;
	pp_plan plan;
} setup;

/* Llama 3.1 8B, seq 2048, micro-batch 1, one GPU (or `gpus` with ZeRO-3). */
static void make(setup *u, const char *fw, pp_recompute rc, int zero, int gpus, int pp)
{
	pp_error err;
	assert_int_equal(pp_model_preset("llama3.1-8b", &u->m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &u->s, &err), PP_OK);
	assert_int_equal(pp_system_set_framework(&u->s, fw, &err), PP_OK);
	pp_job_init(&u->job);
	u->job.seq_len = 2048;
	u->job.global_batch = 8;
	pp_plan_init(&u->plan);
	u->plan.recompute = rc;
	u->plan.zero = zero;
	u->plan.pp = pp;
	u->plan.mbs = 1;
	pp_status st = pp_plan_resolve(&u->plan, &u->m, &u->s, gpus, &u->job, &err);
	if (st)
		fail_msg("%s: %s", err.field, err.text);
}

static void mem(const setup *u, int stage, pp_stage_memory *out)
{
	pp_error err;
	assert_int_equal(pp_memory_stage(&u->m, &u->s, &u->job, &u->plan, stage, out, &err), PP_OK);
}

/* GEMM parameters of Llama 3.1 8B: the 32 layers' projections and the head. */
static double llama8b_gemm_params(const pp_model *m)
{
	double h = m->hidden, d = m->head_dim, H = m->num_heads, kv = m->num_kv_heads;
	double layer = h * H * d + 2 * h * kv * d + H * d * h + 3 * h * m->ffn_hidden;
	return m->num_layers * layer + (double)m->vocab * h;
}

static void test_autocast_single_gpu(void **state)
{
	(void)state;
	setup meg, tt;
	make(&meg, "megatron", PP_RECOMPUTE_NONE, 0, 1, 1);
	make(&tt, "torchtitan", PP_RECOMPUTE_NONE, 0, 1, 1);
	pp_stage_memory a, b;
	mem(&meg, 0, &a);
	mem(&tt, 0, &b);
	double P = a.params, G = llama8b_gemm_params(&meg.m);
	assert_rel(b.params, P, 1e-12);
	/* Megatron: bf16 weights, fp32 grads, fp32 master + m + v. */
	assert_rel(a.weights_bytes, 2 * P, 1e-12);
	assert_rel(a.gradients_bytes, 4 * P, 1e-12);
	assert_rel(a.optimizer_bytes, 12 * P, 1e-12);
	/* torch.autocast + AdamW: fp32 parameters (their own master), fp32
	 * grads, m + v, and the bf16 cast of every GEMM weight. */
	assert_rel(b.weights_bytes, 4 * P + 2 * G, 1e-12);
	assert_rel(b.gradients_bytes, 4 * P, 1e-12);
	assert_rel(b.optimizer_bytes, 8 * P, 1e-12);
	/* Loss: both keep 4 bytes per logit (fp32 softmax / log_softmax); eager
	 * F.cross_entropy(logits.float()) holds 8 more while it runs, Megatron's
	 * fused vocab-parallel loss 2.  Under autocast over fp32 parameters the
	 * final norm's input is the fp32 residual stream (4 bytes, not 2) and
	 * its fp32 normalized output is kept for the weight multiply (4). */
	double TV = 2048.0 * meg.m.vocab;
	assert_rel(b.act_logits_bytes, a.act_logits_bytes + 6 * 2048.0 * meg.m.hidden, 1e-12);
	assert_true(b.transient_bytes >= 8 * TV * (1 - 1e-12));
	assert_true(a.transient_bytes >= 2 * TV * (1 - 1e-12));
}

/* Selective recompute: Megatron drops the attention core (nothing with flash
 * attention); torchtitan's per-op SAC keeps the layer input, wq, wv, SDPA
 * (output + lse), w1 and w2 outputs. */
static void test_selective_means_the_stack(void **state)
{
	(void)state;
	setup meg, tt, none;
	make(&meg, "megatron", PP_RECOMPUTE_SELECTIVE, 0, 1, 1);
	make(&tt, "torchtitan", PP_RECOMPUTE_SELECTIVE, 0, 1, 1);
	make(&none, "megatron", PP_RECOMPUTE_NONE, 0, 1, 1);
	pp_stage_memory a, b, c;
	mem(&meg, 0, &a);
	mem(&tt, 0, &b);
	mem(&none, 0, &c);
	const pp_model *m = &tt.m;
	double T = 2048, h = m->hidden, Hd = m->num_heads * (double)m->head_dim;
	/* With flash attention Megatron's selective recompute drops only the
	 * fp32 log-sum-exp of the attention core. */
	assert_rel(a.act_per_layer_mb_bytes, c.act_per_layer_mb_bytes - 4 * T * m->num_heads,
	           1e-12);
	double kvd = m->num_kv_heads * (double)m->head_dim, f = m->ffn_hidden;
	/* the region's input: the fp32 residual stream under autocast (4 bytes) */
	double want = 4 * T * h + 2 * T * Hd + 2 * T * kvd + 2 * T * Hd + 4 * T * m->num_heads +
	              2 * T * f + 2 * T * h;
	assert_rel(b.act_per_layer_mb_bytes, want, 1e-12);
	assert_true(b.act_per_layer_mb_bytes < 0.6 * a.act_per_layer_mb_bytes);
}

/* FSDP2: fp32 shards; bf16 gathered layers come and go without pipeline
 * parallelism, and stay for the whole stage with it (reshard after forward
 * off). */
static void test_fsdp2_gathered_copies(void **state)
{
	(void)state;
	setup flat, piped;
	make(&flat, "torchtitan", PP_RECOMPUTE_FULL, 3, 8, 1);
	make(&piped, "torchtitan", PP_RECOMPUTE_FULL, 3, 8, 2);
	pp_stage_memory a, b;
	mem(&flat, 0, &a);
	mem(&piped, 0, &b);
	int shard = flat.plan.dp;
	assert_int_equal(shard, 8);
	assert_rel(a.weights_bytes, 4 * a.params / shard, 1e-12);
	assert_rel(a.optimizer_bytes, 8 * a.params / shard, 1e-12);
	int shard_p = piped.plan.dp;
	assert_rel(b.weights_bytes, 4 * b.params / shard_p + 2 * b.params, 1e-12);
}

/* Llama 3.1 8B on one GPU of `sys` under fp8 (recipe r, FP8 parameters
 * or not), the weights bucket. */
static double fp8_weights(const char *sys, const char *fw, pp_fp8_recipe r, bool params, double *P,
                          double *G)
{
	setup u;
	pp_error err;
	assert_int_equal(pp_model_preset("llama3.1-8b", &u.m, &err), PP_OK);
	assert_int_equal(pp_system_preset(sys, &u.s, &err), PP_OK);
	assert_int_equal(pp_system_set_framework(&u.s, fw, &err), PP_OK);
	pp_job_init(&u.job);
	u.job.seq_len = 2048;
	u.job.global_batch = 8;
	u.job.precision = PP_PREC_FP8;
	u.job.fp8_recipe = r;
	u.job.fp8_params = params;
	pp_plan_init(&u.plan);
	u.plan.mbs = 1;
	pp_status st = pp_plan_resolve(&u.plan, &u.m, &u.s, 1, &u.job, &err);
	if (st)
		fail_msg("%s: %s", err.field, err.text);
	pp_stage_memory out;
	mem(&u, 0, &out);
	*P = out.params;
	*G = llama8b_gemm_params(&u.m);
	return out.weights_bytes;
}

/* The quantised GEMM weights (docs/memory.md "FP8 weights"): FP8 and its
 * transpose on Hopper, one copy on Blackwell, MXFP8's two scaled copies;
 * with FP8 parameters they replace the BF16 copy of the GEMM weights;
 * torchao (torchtitan) keeps none. */
static void test_fp8_weights(void **state)
{
	(void)state;
	const struct {
		const char *sys, *fw;
		pp_fp8_recipe r;
		bool params;
		double per_param, per_gemm; /* expected bytes per parameter, per GEMM parameter */
	} cases[] = {
	    {"dgx-h100", "megatron", PP_FP8_DELAYED, false, 2, 2},
	    {"dgx-h100", "megatron", PP_FP8_CURRENT, true, 2, -2 + 2},
	    {"dgx-b200", "megatron", PP_FP8_DELAYED, false, 2, 1},
	    {"dgx-b200", "megatron", PP_FP8_CURRENT, true, 2, -2 + 1},
	    {"dgx-b200", "megatron", PP_FP8_MX, false, 2, 2 * (1 + 1 / 32.0)},
	    {"dgx-b200", "megatron", PP_FP8_NVFP4, false, 2, 2 * (0.5 + 1 / 16.0)},
	    {"dgx-h100", "megatron", PP_FP8_BLOCKWISE, false, 2, 2 * (1 + 4 / (128.0 * 128.0))},
	    /* torchtitan: fp32 parameters and the bf16 cast of each GEMM weight,
	     * no FP8 cache */
	    {"dgx-h100", "torchtitan", PP_FP8_ROWWISE, false, 4, 2},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		double P = 0, G = 0;
		double w =
		    fp8_weights(cases[k].sys, cases[k].fw, cases[k].r, cases[k].params, &P, &G);
		assert_rel(w, cases[k].per_param * P + cases[k].per_gemm * G, 1e-12);
	}
	/* FP8 parameters need precision fp8 */
	pp_job job;
	pp_job_init(&job);
	job.seq_len = 2048;
	job.global_batch = 8;
	job.fp8_params = true;
	pp_error err;
	assert_int_equal(pp_job_check(&job, &err), PP_EINPUT);
	assert_string_equal(err.field, "job.fp8_params");
	/* ... and a stack with an fp32 master in its optimizer: FSDP's fp32
	 * shards (torchtitan) are their own master, nothing to replace */
	job.precision = PP_PREC_FP8;
	assert_int_equal(pp_job_check(&job, &err), PP_OK);
	pp_system s;
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	assert_int_equal(pp_job_check_gpu(&job, &s, &err), PP_OK);
	assert_int_equal(pp_system_set_framework(&s, "torchtitan", &err), PP_OK);
	assert_int_equal(pp_job_check_gpu(&job, &s, &err), PP_EINPUT);
	assert_string_equal(err.field, "job.fp8_params");
}

/* torchtitan frees the gradients after each step (zero_grad(set_to_none=True),
 * framework.grads_set_to_none): in a step of one micro-batch they never peak
 * with the activations.  At 512 tokens the end of backward is the peak (every
 * fp32 gradient, the autocast casts gone with the saved tensors); at 2048 the
 * start is (every activation, the head's gradient alone); with two
 * micro-batches nothing changes. */
static void test_grads_set_to_none(void **state)
{
	(void)state;
	setup on, off;
	make(&on, "torchtitan", PP_RECOMPUTE_NONE, 0, 1, 1);
	make(&off, "torchtitan", PP_RECOMPUTE_NONE, 0, 1, 1);
	on.job.global_batch = off.job.global_batch = 1;
	on.job.seq_len = off.job.seq_len = 512;
	pp_error err;
	assert_int_equal(pp_plan_resolve(&on.plan, &on.m, &on.s, 1, &on.job, &err), PP_OK);
	off.plan = on.plan;
	assert_int_equal(on.plan.microbatches, 1);
	assert_true(on.s.grads_set_to_none == 1);
	off.s.grads_set_to_none = 0;
	pp_stage_memory a, b;
	mem(&on, 0, &a);
	mem(&off, 0, &b);
	double P = b.params, G = llama8b_gemm_params(&on.m);
	assert_rel(a.gradients_bytes, 4 * P, 1e-12);
	assert_rel(a.weights_bytes, 4 * P, 1e-12);
	assert_rel(b.weights_bytes, 4 * P + 2 * G, 1e-12);
	assert_true(a.act_layers_bytes == 0 && b.act_layers_bytes > 0);
	assert_true(a.allocated_bytes < b.allocated_bytes - 2 * G + 1);
	/* longer sequences: the activations outweigh what the casts free */
	on.job.seq_len = off.job.seq_len = 2048;
	mem(&on, 0, &a);
	mem(&off, 0, &b);
	double head = (double)on.m.vocab * on.m.hidden;
	assert_rel(a.gradients_bytes, 4 * head, 1e-12);
	assert_rel(a.act_layers_bytes, b.act_layers_bytes, 1e-12);
	assert_rel(a.allocated_bytes, b.allocated_bytes - 4 * (P - head), 1e-12);
	/* two micro-batches: the first's gradients live through the second */
	on.job.global_batch = off.job.global_batch = 2;
	on.job.seq_len = off.job.seq_len = 2048;
	assert_int_equal(pp_plan_resolve(&on.plan, &on.m, &on.s, 1, &on.job, &err), PP_OK);
	off.plan = on.plan;
	mem(&on, 0, &a);
	mem(&off, 0, &b);
	assert_rel(a.allocated_bytes, b.allocated_bytes, 1e-12);
}

/* Where an MoE layer's routing weights multiply (framework.moe_probs_in_expert):
 * Megatron-Core applies them at the experts' activation and keeps only the
 * fp32 weights, one a routed token copy (R = T k); a stack whose combine
 * weights the expert outputs keeps those, T k h bf16 elements.  Qwen3-30B-A3B
 * (48 MoE layers, top-8, hidden 2048) on 8 H100, ep 8, without recompute:
 * the layers' activations differ by (T k h 2 - T k 4) per layer and
 * micro-batch in flight, nothing else moves. */
static void test_moe_probs_in_expert(void **state)
{
	(void)state;
	pp_error err;
	setup u[2];
	pp_stage_memory a[2];
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pp_model_preset("qwen3-30b-a3b", &u[i].m, &err), PP_OK);
		assert_int_equal(pp_system_preset("dgx-h100", &u[i].s, &err), PP_OK);
		assert_int_equal(pp_system_set_framework(&u[i].s, "megatron", &err), PP_OK);
		pp_job_init(&u[i].job);
		u[i].job.seq_len = 4096;
		u[i].job.global_batch = 16;
		pp_plan_init(&u[i].plan);
		u[i].plan.recompute = PP_RECOMPUTE_NONE;
		u[i].plan.ep = 8;
		u[i].plan.mbs = 1;
		assert_int_equal(pp_plan_resolve(&u[i].plan, &u[i].m, &u[i].s, 8, &u[i].job, &err),
		                 PP_OK);
	}
	assert_true(u[0].s.moe_probs_in_expert == 1); /* Megatron-Core's */
	u[1].s.moe_probs_in_expert = 0;
	mem(&u[0], 0, &a[0]);
	mem(&u[1], 0, &a[1]);
	const pp_model *m = &u[0].m;
	double T = u[0].job.seq_len, k = m->moe.top_k, h = m->hidden;
	double per = T * k * h * 2 - T * k * 4;
	double layer_mbs = a[0].inflight_layer_mbs;
	assert_true(layer_mbs > 0 && layer_mbs == a[1].inflight_layer_mbs);
	assert_rel(a[1].act_layers_bytes - a[0].act_layers_bytes, per * layer_mbs, 1e-9);
	assert_rel(a[0].weights_bytes, a[1].weights_bytes, 1e-15);
	assert_rel(a[0].optimizer_bytes, a[1].optimizer_bytes, 1e-15);
	/* the other stacks keep the outputs */
	const char *others[] = {"torchtitan", "deepspeed", "llm-foundry", "pytorch"};
	for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
		assert_int_equal(pp_system_set_framework(&u[1].s, others[i], &err), PP_OK);
		assert_true(u[1].s.moe_probs_in_expert == 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_autocast_single_gpu),
	    cmocka_unit_test(test_selective_means_the_stack),
	    cmocka_unit_test(test_fsdp2_gathered_copies),
	    cmocka_unit_test(test_fp8_weights),
	    cmocka_unit_test(test_grads_set_to_none),
	    cmocka_unit_test(test_moe_probs_in_expert),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
