/*
 * Seed 004 ("Distributed Training: Mathematics and Engineering") memory
 * accounting, reproduced to the digits it prints: §5.5 and §15 Exercises 2,
 * 5 and 6; and Korthikanti et al.'s activation formulas (§1.3, §10) as the
 * special case of paraplan's per-tensor activation bookkeeping.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

#define GB 1e9

/* |got - want| <= rel * |want| */
/* §5.5 table and §5.2-5.4 worked numbers: Φ = 70B, N = 64, K = 12. */
static void test_zero_table_70b(void **state)
{
	(void)state;
	double phi = 70e9;
	double ddp = pp_model_state_bytes(phi, 2, 2, 12, 0, 64, NULL, NULL, NULL);
	double z1 = pp_model_state_bytes(phi, 2, 2, 12, 1, 64, NULL, NULL, NULL);
	double z2 = pp_model_state_bytes(phi, 2, 2, 12, 2, 64, NULL, NULL, NULL);
	double z3 = pp_model_state_bytes(phi, 2, 2, 12, 3, 64, NULL, NULL, NULL);
	assert_true(ddp == 16 * phi); /* 1.12 TB */
	assert_true(round_to(ddp / 1e12, 2) == 1.12);
	assert_true(round_to(z1 / GB, 0) == 293); /* 280 + 13.1 */
	assert_true(round_to(z2 / GB, 0) == 155); /* 140 + 15.3 */
	assert_true(round_to(z3 / GB, 1) == 17.5);
	/* The parts: ZeRO-1 shards only the optimizer. */
	double w, g, o;
	pp_model_state_bytes(phi, 2, 2, 12, 1, 64, &w, &g, &o);
	assert_true(w == 2 * phi && g == 2 * phi && o == 12 * phi / 64);
}

/* Exercise 6: 13B on 16 x A100-40GB: 208 / 61.75 / 37.4 / 13 GB. */
static void test_exercise6_closed_form(void **state)
{
	(void)state;
	double phi = 13e9;
	assert_true(
	    round_to(pp_model_state_bytes(phi, 2, 2, 12, 0, 16, NULL, NULL, NULL) / GB, 0) == 208);
	assert_true(round_to(pp_model_state_bytes(phi, 2, 2, 12, 1, 16, NULL, NULL, NULL) / GB,
	                     2) == 61.75);
	assert_true(
	    round_to(pp_model_state_bytes(phi, 2, 2, 12, 2, 16, NULL, NULL, NULL) / GB, 1) == 37.4);
	assert_true(
	    round_to(pp_model_state_bytes(phi, 2, 2, 12, 3, 16, NULL, NULL, NULL) / GB, 0) == 13);
}

/* Exercise 5: 405B on 1024 H100, t=8 p=8 d=16: 12.6 GB of BF16 weights per GPU
 * after TP and PP; 16Φ/(tpd) ≈ 6.3 GB of state with ZeRO over DP. */
static void test_exercise5_closed_form(void **state)
{
	(void)state;
	double phi = 405e9, per_mp = phi / (8 * 8);
	double w;
	pp_model_state_bytes(per_mp, 2, 2, 12, 0, 16, &w, NULL, NULL);
	assert_rel(w, 2 * 50.6e9 / 8, 0.002); /* the text rounds Φ/p to 50.6B */
	assert_true(floor(w / GB * 10) / 10 == 12.6);
	double z3 = pp_model_state_bytes(per_mp, 2, 2, 12, 3, 16, NULL, NULL, NULL);
	assert_true(round_to(z3 / GB, 1) == 6.3);
}

/* A Llama-2-70B-shaped model (h = 8192, 80 layers) as in Exercise 2. */
static void llama70_shape(pp_model *m)
{
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "ex2-70b");
	m->num_layers = 80;
	m->hidden = 8192;
	m->num_heads = 64;
	m->num_kv_heads = 8;
	m->head_dim = 128;
	m->ffn_hidden = 28672;
	m->vocab = 32000;
	m->gated_mlp = true;
}

static void h100_system(pp_system *s)
{
	pp_error err;
	assert_int_equal(pp_system_preset("dgx-h100", s, &err), PP_OK);
}

/* Exercise 2: FSDP-3 + checkpointing, batch 4 x 8192 per GPU, 64 GPUs: 17.5 GB
 * of state (Φ = 70B) and 4·8192·8192·2 = 537 MB of stored block input per layer,
 * 43 GB over 80 layers. */
static void test_exercise2(void **state)
{
	(void)state;
	assert_true(round_to(pp_model_state_bytes(70e9, 2, 2, 12, 3, 64, NULL, NULL, NULL) / GB,
	                     1) == 17.5);
	pp_model m;
	pp_system s;
	pp_job job;
	pp_plan plan;
	pp_error err;
	llama70_shape(&m);
	h100_system(&s);
	pp_job_init(&job);
	job.grad_bytes = 2; /* the exercise's BF16 gradients */
	job.global_batch = 256;
	job.seq_len = 8192;
	pp_plan_init(&plan);
	plan.mbs = 4;
	plan.zero = 3;
	plan.recompute = PP_RECOMPUTE_FULL;
	assert_int_equal(pp_plan_resolve(&plan, &m, &s, 64, &job, &err), PP_OK);
	assert_int_equal(plan.dp, 64);
	pp_stage_memory mem;
	assert_int_equal(pp_memory_peak(&m, &s, &job, &plan, &mem, &err), PP_OK);
	double per_layer = 4.0 * 8192 * 8192 * 2;
	assert_true(round_to(per_layer / 1e6, 0) == 537);
	assert_true(mem.act_layers_bytes == 80 * per_layer);
	assert_true(round_to(mem.act_layers_bytes / GB, 0) == 43);
	/* Model state of the real shape (69.0B parameters) under ZeRO-3. */
	pp_param_count pc;
	pp_model_params(&m, &pc);
	assert_rel(mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes,
	           16 * pc.total / 64, 1e-12);
	/* "Tight on 80 GB": state + stored inputs + recompute buffer + workspace. */
	assert_true(mem.total_bytes > 60 * GB && mem.total_bytes < 90 * GB);
}

/* Korthikanti et al. 2022 (seed 004 §1.3, §10) on a GPT-3-style layer: with
 * dropout and explicit softmax, per layer sbh(34 + 5as/h) without parallelism,
 * sbh(10 + 24/t + 5as/(ht)) with TP, sbh/t (34 + 5as/h) with TP + SP, and
 * 34 sbh/t with selective recompute.  paraplan adds the norms' per-token fp32
 * mean/rstd (2 x 8 bytes per token per layer), which the paper leaves out. */
static void gpt_shape(pp_model *m)
{
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "gpt-test");
	m->num_layers = 8;
	m->hidden = 4096;
	m->num_heads = 32;
	m->num_kv_heads = 32;
	m->head_dim = 128;
	m->ffn_hidden = 4 * 4096;
	m->vocab = 51200;
	m->max_position = 2048;
	m->position = PP_POS_LEARNED;
	m->norm = PP_NORM_LAYERNORM;
	m->linear_bias = true;
	m->dropout = true;
}

static double per_layer_act(const pp_model *m, int tp, bool sp, pp_recompute rc, int b, int s)
{
	pp_system sys;
	pp_job job;
	pp_plan plan;
	pp_error err;
	h100_system(&sys);
	pp_job_init(&job);
	job.global_batch = 64;
	job.seq_len = s;
	pp_plan_init(&plan);
	plan.tp = tp;
	plan.sp = sp;
	plan.mbs = b;
	plan.flash = false;
	plan.recompute = rc;
	assert_int_equal(pp_plan_resolve(&plan, m, &sys, tp, &job, &err), PP_OK);
	pp_stage_memory mem;
	assert_int_equal(pp_memory_stage(m, &sys, &job, &plan, 0, &mem, &err), PP_OK);
	return mem.act_per_layer_mb_bytes;
}

static void test_korthikanti(void **state)
{
	(void)state;
	pp_model m;
	gpt_shape(&m);
	const double s = 2048, b = 4, h = 4096, a = 32, t = 8;
	const double sbh = s * b * h, stats = 16 * s * b;
	assert_true(per_layer_act(&m, 1, false, PP_RECOMPUTE_NONE, 4, 2048) ==
	            sbh * (34 + 5 * a * s / h) + stats);
	assert_rel(per_layer_act(&m, 8, false, PP_RECOMPUTE_NONE, 4, 2048),
	           sbh * (10 + 24 / t + 5 * a * s / (h * t)) + stats, 1e-12);
	assert_rel(per_layer_act(&m, 8, true, PP_RECOMPUTE_NONE, 4, 2048),
	           sbh / t * (34 + 5 * a * s / h) + stats / t, 1e-12);
	assert_rel(per_layer_act(&m, 8, true, PP_RECOMPUTE_SELECTIVE, 4, 2048),
	           sbh / t * 34 + stats / t, 1e-12);
	/* Full recompute keeps the layer input only: 2sbh/t with SP. */
	assert_rel(per_layer_act(&m, 8, true, PP_RECOMPUTE_FULL, 4, 2048), 2 * sbh / t, 1e-12);
}

/* Pipeline in-flight micro-batches (seed 004 §8.6): stage 0 holds ~P for 1F1B,
 * M for GPipe, P(1 + (P-1)/(vP)) layer-equivalents for interleaved. */
static void test_inflight(void **state)
{
	(void)state;
	pp_model m;
	gpt_shape(&m);
	m.num_layers = 32;
	pp_system sys;
	pp_job job;
	pp_plan plan;
	pp_error err;
	pp_stage_memory mem;
	h100_system(&sys);
	pp_job_init(&job);
	job.global_batch = 64;
	job.seq_len = 2048;
	const pp_schedule sched[] = {PP_SCHED_1F1B, PP_SCHED_GPIPE, PP_SCHED_INTERLEAVED};
	const double want[] = {4 * 8, 64 * 8, 8 * 4 * (1 + 3.0 / (4 * 2))};
	for (int i = 0; i < 3; i++) {
		pp_plan_init(&plan);
		plan.pp = 4;
		plan.schedule = sched[i];
		plan.vp = sched[i] == PP_SCHED_INTERLEAVED ? 2 : 1;
		assert_int_equal(pp_plan_resolve(&plan, &m, &sys, 4, &job, &err), PP_OK);
		assert_int_equal(plan.microbatches, 64);
		assert_int_equal(pp_memory_stage(&m, &sys, &job, &plan, 0, &mem, &err), PP_OK);
		assert_rel(mem.inflight_layer_mbs, want[i], 1e-12);
	}
	/* The last 1F1B stage holds one micro-batch per layer. */
	pp_plan_init(&plan);
	plan.pp = 4;
	assert_int_equal(pp_plan_resolve(&plan, &m, &sys, 4, &job, &err), PP_OK);
	assert_int_equal(pp_memory_stage(&m, &sys, &job, &plan, 3, &mem, &err), PP_OK);
	assert_rel(mem.inflight_layer_mbs, 8, 1e-12);
}

/* Exercise 6 with the full memory model: Llama-2-13B on 16 x A100-40GB, BF16
 * gradients, full recompute, one 4096-token sequence per GPU: ZeRO-3 is the
 * minimum stage that fits, and ZeRO-2 is "borderline" (within 10% of HBM but
 * over it once activations and workspace are added). */
static void test_exercise6_minimum_stage(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_error err;
	assert_int_equal(pp_model_preset("llama2-13b", &m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-a100-40g", &s, &err), PP_OK);
	pp_job job;
	pp_job_init(&job);
	job.grad_bytes = 2;
	job.global_batch = 64;
	job.seq_len = 4096;
	int minimum = -1;
	double z2_fraction = 0;
	for (int z = 0; z <= 3; z++) {
		pp_plan plan;
		pp_plan_init(&plan);
		plan.zero = z;
		plan.recompute = PP_RECOMPUTE_FULL;
		static pp_estimate e;
		assert_int_equal(pp_estimate_run(&m, &s, &job, &plan, 16, &e, &err), PP_OK);
		if (z == 2)
			z2_fraction = e.memory.total_bytes / e.capacity_bytes;
		if (e.fits && minimum < 0)
			minimum = z;
	}
	assert_int_equal(minimum, 3);
	assert_true(z2_fraction > 1.0 && z2_fraction < 1.1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zero_table_70b),
	    cmocka_unit_test(test_exercise6_closed_form),
	    cmocka_unit_test(test_exercise6_minimum_stage),
	    cmocka_unit_test(test_exercise5_closed_form),
	    cmocka_unit_test(test_exercise2),
	    cmocka_unit_test(test_korthikanti),
	    cmocka_unit_test(test_inflight),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
