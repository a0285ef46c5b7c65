/*
 * Fine-tuning (docs/finetune.md): frozen weights, LoRA adapters and QLoRA's
 * NF4 base weights in memory and time.
 *
 * Published measurement: torchtune's README, "Memory and training speed"
 * (github.com/pytorch/torchtune, README.md at commit 0031bfb0, the table
 * under "Below is an example of the memory requirements and training speed
 * for different Llama 3.1 models"): batch size 2 without gradient
 * accumulation, a dataset packed to sequence length 2048, torch.compile; the
 * recipes' configs (recipes/configs/llama3_1/8B_lora_single_device.yaml,
 * 70B_lora.yaml, 8B_qlora_single_device.yaml): bf16, AdamW,
 * enable_activation_checkpointing True, LoRA on the attention projections and
 * the MLP, rank 8 (8B) and 16 (70B); 70B with FSDP over 8 GPUs.
 *   Llama 3.1 8B  LoRA   1x 4090   16.2 GiB peak per GPU
 *   Llama 3.1 70B LoRA   8x A100   27.6 GiB peak per GPU
 *   Llama 3.1 8B  QLoRA  1x 4090    7.4 GiB peak per GPU
 * Compared with paraplan's allocated peak (torch.cuda.max_memory_allocated,
 * what torchtune's log_memory_stats reports beside the reserve), with the
 * torchtune framework (data/framework/torchtune.json).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

#define GIB 1073741824.0
#define PUBLISHED_TOL 0.10 /* the bar: within 10% of the measurement */

/* torchtune's recipe on `gpus` A100-80GB of a DGX (the 4090's 24 GB holds
 * the 8B runs; memory does not depend on the GPU's speed): bf16 weights and
 * gradients, per-block checkpointing, batch 2 x 2048 per GPU, FSDP (ZeRO-3)
 * over more than one GPU. */
static void torchtune_run(const char *model, int gpus, int rank, bool nf4, pp_estimate *e)
{
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	pp_error err;
	if (pp_model_preset(model, &m, &err) || pp_system_preset("dgx-a100-80g", &s, &err) ||
	    pp_system_set_framework(&s, "torchtune", &err))
		fail_msg("%s", err.text);
	pp_job_init(&j);
	j.global_batch = 2LL * gpus;
	j.seq_len = 2048;
	j.grad_bytes = 2; /* bf16 parameters, bf16 .grad */
	j.ft.lora_rank = rank;
	j.ft.nf4 = nf4;
	pp_plan_init(&p);
	p.mbs = 2;
	p.zero = gpus > 1 ? 3 : 0;
	p.recompute = PP_RECOMPUTE_FULL;
	if (pp_estimate_run(&m, &s, &j, &p, gpus, e, &err))
		fail_msg("%s", err.text);
}

static void test_published_llama31_8b_lora(void **state)
{
	(void)state;
	pp_estimate *e = malloc(sizeof *e);
	torchtune_run("llama3.1-8b", 1, 8, false, e);
	assert_rel(e->memory.allocated_bytes / GIB, 16.2, PUBLISHED_TOL);
	free(e);
}

static void test_published_llama31_70b_lora(void **state)
{
	(void)state;
	pp_estimate *e = malloc(sizeof *e);
	torchtune_run("llama3.1-70b", 8, 16, false, e);
	assert_rel(e->memory.allocated_bytes / GIB, 27.6, PUBLISHED_TOL);
	free(e);
}

/* QLoRA against LoRA, by hand: the layers' GEMM weights go from 2 bytes to
 * 4.127 bits (QLoRA §3, double quantisation), the embedding and the head stay
 * bf16; nothing else moves but the dequantised copy's transient. */
static void test_qlora_weights_by_hand(void **state)
{
	(void)state;
	pp_estimate *lora = malloc(sizeof *lora), *q = malloc(sizeof *q);
	torchtune_run("llama3.1-8b", 1, 8, false, lora);
	torchtune_run("llama3.1-8b", 1, 8, true, q);
	pp_model m;
	pp_error err;
	if (pp_model_preset("llama3.1-8b", &m, &err))
		fail_msg("%s", err.text);
	double h = m.hidden, kv = (double)m.num_kv_heads * m.head_dim, f = m.ffn_hidden;
	double gemm = m.num_layers * (h * (h + 2 * kv) + h * h + 3 * h * f);
	assert_rel(pp_finetune_nf4_bytes(), (4 + 8.0 / 64 + 32.0 / 16384) / 8, 1e-15);
	assert_rel(lora->memory.weights_bytes - q->memory.weights_bytes,
	           gemm * (2 - pp_finetune_nf4_bytes()), 1e-12);
	assert_rel(q->memory.gradients_bytes, lora->memory.gradients_bytes, 1e-15);
	assert_rel(q->memory.optimizer_bytes, lora->memory.optimizer_bytes, 1e-15);
	assert_rel(q->memory.activations_bytes, lora->memory.activations_bytes, 1e-15);
	free(lora);
	free(q);
}

/* Llama-3-8B, rank 8 on qkv, proj, fc1 (gate and up fused), fc2, tp 1:
 * r (in + out) per target, 32 layers; under tp 2 the split side halves. */
static void test_lora_params_by_hand(void **state)
{
	(void)state;
	pp_model m;
	pp_error err;
	if (pp_model_preset("llama3-8b", &m, &err))
		fail_msg("%s", err.text);
	pp_job j;
	pp_job_init(&j);
	j.ft.lora_rank = 8;
	double per = 8.0 * ((4096 + 6144) + (4096 + 4096) + (4096 + 28672) + (14336 + 4096));
	assert_rel(pp_finetune_lora_params(&j, &m, 0, 1), per, 1e-15);
	double tp2 = 8.0 * ((4096 + 3072) + (2048 + 4096) + (4096 + 14336) + (7168 + 4096));
	assert_rel(pp_finetune_lora_params(&j, &m, 0, 2), tp2, 1e-15);
	j.ft.lora_targets = PP_LORA_QKV | PP_LORA_PROJ;
	assert_rel(pp_finetune_lora_params(&j, &m, 0, 1), 8.0 * (10240 + 8192), 1e-15);
}

/* Memory of a LoRA run by bucket: frozen weights keep no gradient or
 * optimizer state; the adapters keep theirs (Adam: 12 bytes, fp32 grads). */
static void test_lora_state_buckets(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	pp_error err;
	if (pp_model_preset("llama3-8b", &m, &err) || pp_system_preset("dgx-h100", &s, &err))
		fail_msg("%s", err.text);
	pp_job_init(&j);
	j.global_batch = 8;
	j.seq_len = 4096;
	pp_plan_init(&p);
	pp_estimate *full = malloc(sizeof *full), *lora = malloc(sizeof *lora);
	if (pp_estimate_run(&m, &s, &j, &p, 8, full, &err))
		fail_msg("%s", err.text);
	j.ft.lora_rank = 16;
	if (pp_estimate_run(&m, &s, &j, &p, 8, lora, &err))
		fail_msg("%s", err.text);
	double adapters = 32 * pp_finetune_lora_params(&j, &m, 0, 1);
	assert_rel(lora->memory.gradients_bytes, 4 * adapters, 1e-12);
	assert_rel(lora->memory.optimizer_bytes, 12 * adapters, 1e-12);
	assert_rel(lora->memory.weights_bytes, full->memory.weights_bytes + 2 * adapters, 1e-12);
	assert_true(lora->time.optimizer_s < full->time.optimizer_s / 100);
	free(full);
	free(lora);
}

/* GEMM FLOPs of one layer's work by phase. */
static void gemm_flops(const pp_work *w, double out[4])
{
	memset(out, 0, 4 * sizeof *out);
	for (int i = 0; i < w->nops; i++)
		if (w->ops[i].kind == PP_OP_GEMM)
			out[w->ops[i].phase] += w->ops[i].flops;
}

/* Time: a frozen layer backward passes through keeps its data-gradient
 * GEMMs and loses the weight-gradient ones (a third of its GEMM FLOPs); a
 * layer below the first trainable one (embeddings frozen) runs forward only;
 * a LoRA layer adds 2 r (in + out) FLOPs per token per target in each of
 * forward, data and weight gradient. */
static void test_layer_flops(void **state)
{
	(void)state;
	pp_model m;
	pp_error err;
	if (pp_model_preset("llama3-8b", &m, &err))
		fail_msg("%s", err.text);
	pp_job j;
	pp_plan p;
	pp_job_init(&j);
	j.global_batch = 1;
	j.seq_len = 4096;
	pp_plan_init(&p);
	pp_work *w = malloc(sizeof *w);
	pp_work_init(w);
	double full[4], x[4];
	pp_layer_work(&m, &j, &p, 0, w);
	gemm_flops(w, full);
	assert_rel(full[PP_PHASE_BWD_WEIGHT], full[PP_PHASE_FWD], 1e-15);

	j.ft.freeze_layers = 4; /* embeddings train: backward reaches layer 0 */
	pp_layer_work(&m, &j, &p, 0, w);
	gemm_flops(w, x);
	assert_rel(x[PP_PHASE_FWD] + x[PP_PHASE_BWD_INPUT], full[PP_PHASE_FWD] * 2, 1e-15);
	assert_true(x[PP_PHASE_BWD_WEIGHT] == 0);
	pp_layer_work(&m, &j, &p, 4, w); /* the first trainable layer: as before */
	gemm_flops(w, x);
	assert_rel(x[PP_PHASE_BWD_WEIGHT], full[PP_PHASE_BWD_WEIGHT], 1e-15);

	j.ft.freeze_embeddings = true; /* nothing below layer 4 needs a gradient */
	pp_layer_work(&m, &j, &p, 3, w);
	gemm_flops(w, x);
	assert_rel(x[PP_PHASE_FWD], full[PP_PHASE_FWD], 1e-15);
	assert_true(x[PP_PHASE_BWD_INPUT] == 0 && x[PP_PHASE_BWD_WEIGHT] == 0);
	for (int i = 0; i < w->nops; i++)
		assert_int_equal(w->ops[i].phase, PP_PHASE_FWD);

	pp_job_init(&j);
	j.global_batch = 1;
	j.seq_len = 4096;
	j.ft.lora_rank = 8;
	pp_layer_work(&m, &j, &p, 0, w);
	gemm_flops(w, x);
	double adapters = 2.0 * 4096 * pp_finetune_lora_params(&j, &m, 0, 1);
	assert_rel(x[PP_PHASE_FWD], full[PP_PHASE_FWD] + adapters, 1e-12);
	assert_rel(x[PP_PHASE_BWD_INPUT], full[PP_PHASE_BWD_INPUT] + adapters, 1e-12);
	assert_rel(x[PP_PHASE_BWD_WEIGHT], adapters, 1e-12);
	free(w);
}

/* No fine-tuning field set: every number as today (the flags' defaults). */
static void test_full_finetune_unchanged(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	pp_error err;
	if (pp_model_preset("llama3-8b", &m, &err) || pp_system_preset("dgx-h100", &s, &err))
		fail_msg("%s", err.text);
	pp_job_init(&j);
	j.global_batch = 8;
	j.seq_len = 4096;
	pp_plan_init(&p);
	assert_false(pp_finetune_on(&j));
	pp_estimate *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	if (pp_estimate_run(&m, &s, &j, &p, 8, a, &err))
		fail_msg("%s", err.text);
	if (pp_field_set(&j, &p, "freeze", "none", &err))
		fail_msg("%s", err.text);
	if (pp_estimate_run(&m, &s, &j, &p, 8, b, &err))
		fail_msg("%s", err.text);
	assert_true(a->memory.total_bytes == b->memory.total_bytes);
	assert_true(a->time.iteration_s == b->time.iteration_s);
	free(a);
	free(b);
}

/* Bad input: rank 0 and above the hidden size, an unknown target, more
 * frozen layers than the model has. */
static void test_bad_input(void **state)
{
	(void)state;
	pp_model m;
	pp_error err;
	pp_job j;
	pp_plan p;
	if (pp_model_preset("llama3-8b", &m, &err))
		fail_msg("%s", err.text);
	pp_job_init(&j);
	pp_plan_init(&p);
	assert_int_equal(pp_field_set(&j, &p, "lora-rank", "0", &err), PP_EINPUT);
	assert_int_equal(pp_field_set(&j, &p, "lora-targets", "qkv,mlp", &err), PP_EINPUT);
	assert_int_equal(pp_field_set(&j, &p, "freeze", "layers:x", &err), PP_EINPUT);
	j.ft.lora_rank = 4097;
	assert_int_equal(pp_finetune_check(&j, &m, &err), PP_EINPUT);
	assert_non_null(strstr(err.text, "4096"));
	j.ft.lora_rank = 4096;
	assert_int_equal(pp_finetune_check(&j, &m, &err), PP_OK);
	j.ft.freeze_layers = 33;
	assert_int_equal(pp_finetune_check(&j, &m, &err), PP_EINPUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_published_llama31_8b_lora),
	    cmocka_unit_test(test_published_llama31_70b_lora),
	    cmocka_unit_test(test_qlora_weights_by_hand),
	    cmocka_unit_test(test_lora_params_by_hand),
	    cmocka_unit_test(test_lora_state_buckets),
	    cmocka_unit_test(test_layer_flops),
	    cmocka_unit_test(test_full_finetune_unchanged),
	    cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
