/*
 * What validate reads from the words people write (src/calib/runs_alias.c): free-text
 * GPU names, sharding phrases, the global batch derived from micro-batch x dp
 * x accumulation, the stack a record names; and that a record's plan gives the
 * same iteration time through validate (pp_run_inputs) as through estimate (a
 * system preset, plus --framework when the stack is not Megatron).
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

#include "paraplan/calib.h"
#include "paraplan/paraplan.h"
#include "paraplan/params.h"

static void test_gpu_names(void **state)
{
	(void)state;
	static const struct {
		const char *text, *system; /* NULL: skipped with a reason */
	} cases[] = {
	    {"H100-SXM5-80GB (DGX H100)", "dgx-h100"},
	    {"NVIDIA H100 80GB HBM3", "dgx-h100"},
	    {"8x H100", "dgx-h100"},
	    {"Hopper", "dgx-h100"},
	    {"H100 PCIe", "h100-pcie-8"},
	    {"H100 NVL 94GB", "h100-nvl-8"},
	    {"H200 141GB", "dgx-h200"},
	    {"H20", "hgx-h20"}, /* not H200 */
	    {"NVIDIA H20 96GB", "hgx-h20"},
	    {"H800 SXM", "hgx-h800"},
	    {"A800-SXM4-80GB", "dhelix-a800"},
	    {"A100-SXM4-40GB", "dgx-a100-40g"},
	    {"A100 40G", "dgx-a100-40g"},
	    {"A100-80GB", "dgx-a100-80g"},
	    {"A100", "dgx-a100-80g"},
	    {"Ampere (A100)", "dgx-a100-80g"},
	    {"ampere", "dgx-a100-80g"},
	    {"A100 PCIe 40GB", NULL},
	    {"GB200 (NVL72 rack)", "gb200-nvl72"},
	    {"B200 (DGX B200)", "dgx-b200"},
	    {"Blackwell", "dgx-b200"},
	    {"TPU v5p", NULL},
	    {"MI300X", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *got = pp_run_gpu_system(cases[i].text);
		if (cases[i].system == NULL) {
			if (got)
				fail_msg("'%s' -> %s, want none", cases[i].text, got);
		} else if (!got || strcmp(got, cases[i].system) != 0) {
			fail_msg("'%s' -> %s, want %s", cases[i].text, got ? got : "none",
			         cases[i].system);
		}
	}
}

static void test_sharding_phrases(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int stage;
	} cases[] = {
	    {"PyTorch FSDP FULL_SHARD (mixed-precision mode PURE)", 3},
	    {"PyTorch FSDP SHARD_GRAD_OP (mixed-precision mode DEFAULT)", 2},
	    {"FSDP NO_SHARD", 0},
	    {"FSDP", 3},
	    {"FSDP2", 3},
	    {"fully_shard (FSDP2)", 3},
	    {"fully sharded data parallel", 3},
	    {"HSDP (shard within a node, replicate across)", 3},
	    {"HYBRID_SHARD", 3},
	    {"ZeRO-1 (DeepSpeed BF16Optimizer)", 1},
	    {"ZeRO-2", 2},
	    {"ZeRO-3 (DeepSpeed), no model parallelism", 3},
	    {"zero stage 3", 3},
	    {"zero_stage=2", 2},
	    {"ZeRO 1", 1},
	    {"distributed optimizer", 1},
	    {"Megatron --use-distributed-optimizer", 1},
	    {"Megatron FSDP (sharding group = #GPUs/(TP*PP))", 3},
	    {"none (plain data parallel)", 0},
	    {"DDP", 0},
	    {"DDP (FSDP=0); distributed optimizer not stated", -1},
	    {"FSDP=0 (DDP)", 0},
	    {"FSDP = 0, distributed optimizer", 1},
	    {"unknown", -1},
	    {"some new sharding", -2},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int got = pp_run_zero_stage(cases[i].text);
		if (got != cases[i].stage)
			fail_msg("'%s' -> %d, want %d", cases[i].text, got, cases[i].stage);
	}
	assert_int_equal(pp_run_zero_stage(NULL), -1);
}

static void test_global_batch(void **state)
{
	(void)state;
	pp_gbs_rule r;
	/* Stated wins. */
	assert_int_equal(pp_run_global_batch(512, 1048576, 2048, 4, 64, 2, &r), 512);
	assert_int_equal(r, PP_GBS_STATED);
	/* Tokens / seq. */
	assert_int_equal(pp_run_global_batch(0, 4194304, 4096, 0, 0, 0, &r), 1024);
	assert_int_equal(r, PP_GBS_TOKENS);
	/* Tokens not a multiple of seq: the next rule. */
	assert_int_equal(pp_run_global_batch(0, 1000, 4096, 2, 16, 8, &r), 256);
	assert_int_equal(r, PP_GBS_ACCUM);
	/* micro-batch 2 x dp 32 x accumulation 4. */
	assert_int_equal(pp_run_global_batch(0, 0, 2048, 2, 32, 4, &r), 256);
	assert_int_equal(r, PP_GBS_ACCUM);
	/* One factor missing: nothing. */
	assert_int_equal(pp_run_global_batch(0, 0, 2048, 2, 32, 0, &r), 0);
	assert_int_equal(r, PP_GBS_NONE);
	assert_int_equal(pp_run_global_batch(-1, 0, 2048, 0, 32, 4, &r), 0);
	assert_int_equal(r, PP_GBS_NONE);
}

static void test_framework_named(void **state)
{
	(void)state;
	assert_string_equal(pp_run_framework("MosaicML llm-foundry 'MPT Training Benchmarks'",
	                                     "PyTorch FSDP FULL_SHARD", NULL, NULL),
	                    "llm-foundry");
	assert_string_equal(pp_run_framework("Some blog", "FSDP2", NULL, NULL), "torchtitan");
	assert_string_equal(pp_run_framework("torchtitan paper", NULL, NULL, NULL), "torchtitan");
	/* The Megatron generation by the source: 2022 or before (arXiv id, 'YY)
	 * is pre-Core, with scatter/gather; Core, NeMo or the flag that turns it
	 * off is not; a year without Megatron says nothing. */
	const char *sc21 = "Narayanan et al., Efficient Large-Scale Language Model Training on "
	                   "GPU Clusters Using Megatron-LM (SC'21, arXiv:2104.04473)";
	assert_string_equal(pp_run_framework(sc21, "none", "1F1B", NULL), "megatron-lm-2021");
	assert_string_equal(pp_run_framework("Korthikanti et al., Megatron-LM (arXiv:2205.05198)",
	                                     NULL, NULL, NULL),
	                    "megatron-lm-2021");
	assert_string_equal(
	    pp_run_framework(sc21, NULL, NULL, "--no-scatter-gather-tensors-in-pipeline"),
	    "megatron");
	assert_string_equal(
	    pp_run_framework("Megatron-Core GPT (arXiv:2104.04473)", NULL, NULL, NULL), "megatron");
	assert_string_equal(
	    pp_run_framework("Megatron-LM benchmarks (arXiv:2401.00001)", NULL, NULL, NULL),
	    "megatron");
	assert_string_equal(pp_run_framework("A paper (arXiv:2104.04473)", NULL, NULL, NULL),
	                    "megatron");
	assert_string_equal(
	    pp_run_framework("BLOOM", "ZeRO-1 (DeepSpeed BF16Optimizer)", NULL, NULL), "deepspeed");
	assert_string_equal(pp_run_framework("NVIDIA NeMo", "distributed optimizer", NULL, NULL),
	                    "megatron");
	assert_string_equal(pp_run_framework("A blog", "PyTorch FSDP FULL_SHARD", NULL, NULL),
	                    "torchtitan");
	assert_string_equal(pp_run_framework("NVIDIA Megatron-LM README",
	                                     "DDP (FSDP=0); distributed optimizer not stated", NULL,
	                                     NULL),
	                    "megatron");
	assert_string_equal(pp_run_framework("NeMo", "Megatron FSDP (sharding group)", NULL, NULL),
	                    "megatron");
	assert_string_equal(pp_run_framework(NULL, NULL, NULL, NULL), "megatron");
	/* Megatron-LM of SC'21: the schedule names scatter/gather or PTD-P; the
	 * preset sends 1/tp of a pipeline activation per rank. */
	assert_string_equal(pp_run_framework("Narayanan et al.", "none (plain data parallel)",
	                                     "interleaved 1F1B with scatter/gather optimization",
	                                     NULL),
	                    "megatron-lm-2021");
	assert_string_equal(pp_run_framework("Narayanan et al.", NULL, "PTD-P (Megatron)", NULL),
	                    "megatron-lm-2021");
	assert_string_equal(pp_run_framework("BLOOM", "ZeRO-1", "DeepSpeed 1F1B", NULL),
	                    "deepspeed");
	pp_system s;
	pp_error err;
	assert_int_equal(pp_system_preset("dgx-a100-80g", &s, &err), PP_OK);
	assert_int_equal(pp_system_set_framework(&s, "megatron-lm-2021", &err), PP_OK);
	assert_true(s.pp_scatter_gather == 1);
	assert_int_equal(pp_system_set_framework(&s, "megatron", &err), PP_OK);
	assert_true(s.pp_scatter_gather == 0);
}

/* A record with only micro-batch, accumulation and (derived) dp is read, and
 * the global batch and the fill say how. */
static const char *const accum_record =
    "{\"records\": [{\"id\": \"acc\","
    " \"source\": {\"title\": \"A torchtitan run\"},"
    " \"model\": {\"name\": \"Llama 3 8B\", \"num_layers\": 32, \"hidden_size\": 4096,"
    "  \"num_attention_heads\": 32, \"num_kv_heads\": 8, \"ffn_hidden_size\": 14336,"
    "  \"vocab_size\": 128256, \"seq_length\": 8192},"
    " \"hardware\": {\"gpu_type\": \"Hopper\", \"num_gpus\": 64},"
    " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"cp\": 1, \"zero_or_dist_optimizer\": \"FSDP2\","
    "  \"activation_recompute\": \"selective\"},"
    " \"batch\": {\"micro_batch_size\": 1, \"grad_accum_steps\": 2},"
    " \"precision\": \"bf16\","
    " \"measured\": {\"tokens_per_s_per_gpu\": 6000}}]}";

static void test_accum_record(void **state)
{
	(void)state;
	pp_runs *runs = NULL;
	pp_error err;
	assert_int_equal(pp_runs_from_json(accum_record, strlen(accum_record), "acc", &runs, &err),
	                 PP_OK);
	pp_model m;
	pp_system s;
	pp_job job;
	pp_plan plan;
	long long gpus;
	pp_run_info info;
	pp_status st = pp_run_inputs(runs, 0, &m, &s, &job, &plan, &gpus, &info, &err);
	if (st)
		fail_msg("%s: %s", err.field, err.text);
	assert_int_equal(plan.dp, 64);
	assert_int_equal(job.global_batch, 1 * 64 * 2);
	assert_true(info.fills & PP_FILL_GBS);
	assert_true(info.fills & PP_FILL_GPU); /* "Hopper" is a reading */
	assert_string_equal(info.system, "dgx-h100");
	assert_int_equal(plan.zero, 3);
	assert_string_equal(s.framework, "torchtitan");
	pp_runs_free(runs);
}

/* Every public record: the plan validate reads, estimated on the system
 * estimate would build (the preset; --framework F when the record's stack is
 * not the default, with the CUDA graphs its recipe ran, the DDP overlap
 * its launch script chose and its model configs' cross entropy), gives the same
 * iteration time, and the system keeps the
 * preset's fitted link efficiencies. */
static void test_validate_equals_estimate(void **state)
{
	(void)state;
	const char *dir = getenv("PARAPLAN_SHARED_DIR");
	if (!dir)
		fail_msg("PARAPLAN_SHARED_DIR is not set");
	char path[4096];
	snprintf(path, sizeof path, "%s/validation/public-runs.json", dir);
	pp_runs *runs = NULL;
	pp_error err;
	assert_int_equal(pp_runs_load(path, &runs, &err), PP_OK);
	pp_estimate *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	assert_non_null(a);
	assert_non_null(b);
	size_t compared = 0;
	for (size_t i = 0; i < pp_runs_count(runs); i++) {
		pp_model m;
		pp_system s, e;
		pp_job job;
		pp_plan plan;
		long long gpus;
		pp_run_info info;
		if (pp_run_inputs(runs, i, &m, &s, &job, &plan, &gpus, &info, &err))
			continue;
		assert_int_equal(pp_system_preset(info.system, &e, &err), PP_OK);
		if (strcmp(s.framework, "megatron") != 0)
			assert_int_equal(pp_system_set_framework(&e, s.framework, &err), PP_OK);
		/* the CUDA graphs of the record's recipe (data/runs/cuda-graphs.json),
		 * which the record, not the stack, carries */
		e.gpu.kern.cuda_graphs = s.gpu.kern.cuda_graphs;
		e.gpu.kern.graph_parts = s.gpu.kern.graph_parts;
		/* and the gradient all-reduce overlap of the DDP its launch script
		 * chose (data/runs/batching.json), likewise the record's */
		e.dp_overlap = s.dp_overlap;
		/* and the cross entropy of its source's model configs (NeMo 2 and
		 * Megatron-Bridge fuse it; ppi_run_loss_fusion) */
		e.gpu.kern.unfused_cross_entropy = s.gpu.kern.unfused_cross_entropy;
		assert_true(s.nvlink_eff == e.nvlink_eff && s.nic_eff == e.nic_eff);
		assert_int_equal(pp_estimate_run(&m, &s, &job, &plan, gpus, a, &err), PP_OK);
		assert_int_equal(pp_estimate_run(&m, &e, &job, &plan, gpus, b, &err), PP_OK);
		if (fabs(a->time.iteration_s - b->time.iteration_s) > 1e-12 * b->time.iteration_s)
			fail_msg("%s: validate %.9g s, estimate %.9g s", info.id,
			         a->time.iteration_s, b->time.iteration_s);
		compared++;
	}
	assert_true(compared >= 130);
	free(a);
	free(b);
	pp_runs_free(runs);
}

/* Applying a framework keeps a system's link efficiencies and replaces the
 * framework's parameters. */
static void test_set_framework_keeps_links(void **state)
{
	(void)state;
	pp_system s, t;
	pp_error err;
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	const char *fws[] = {"megatron", "llm-foundry", "deepspeed", "torchtitan",
	                     "megatron-lm-2021"};
	for (size_t k = 0; k < sizeof fws / sizeof *fws; k++) {
		t = s;
		assert_int_equal(pp_system_set_framework(&t, fws[k], &err), PP_OK);
		for (size_t i = 0; i < pp_param_registry_size(); i++) {
			const pp_param *p = pp_param_at(i);
			if (p->kind == PP_PARAM_SYSTEM &&
			    pp_param_get(p, &t) != pp_param_get(p, &s))
				fail_msg("%s changed %s", fws[k], p->name);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpu_names),
	    cmocka_unit_test(test_sharding_phrases),
	    cmocka_unit_test(test_global_batch),
	    cmocka_unit_test(test_framework_named),
	    cmocka_unit_test(test_accum_record),
	    cmocka_unit_test(test_set_framework_keeps_links),
	    cmocka_unit_test(test_validate_equals_estimate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
