/*
 * Launch flags in and out (include/paraplan/launch.h): ten plans (dense, MoE,
 * MLA, CP, interleaved, uneven stages, ZeRO-3, FP8) emitted as Megatron-LM
 * flags and read back give the same model, job and plan and the same
 * estimate, bit for bit; every emitted flag is one of Megatron-LM
 * core_v0.15.3's (tests/data/megatron-core_v0.15.3-flags.txt); Megatron's
 * defaults and semantics on the way in; shell words of a launch script.
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

#include "launch/launch_int.h"
#include "paraplan/paraplan.h"
#include "pp_test.h"

typedef struct rt_case {
	const char *what, *model, *system;
	long long gpus, gbs;
	int seq;
	double tokens;
	pp_precision prec;
	int grad_bytes;
	int tp, pp, cp, ep, etp, vp, mbs, zero;
	pp_recompute rc;
	bool sp, tp_overlap, ep_overlap, flash;
	int first, last;
	bool emb, loss;
	const char *order;
	pp_moe_dispatcher disp;
} rt_case;

#define BF16 PP_PREC_BF16
#define SEL PP_RECOMPUTE_SELECTIVE
#define FULL PP_RECOMPUTE_FULL
#define NONE PP_RECOMPUTE_NONE

static const rt_case cases[] = {
    {"dense, tp x pp, selective, ZeRO-1",
     "llama3-70b",
     "dgx-h100",
     64,
     512,
     8192,
     0,
     BF16,
     4,
     8,
     2,
     1,
     1,
     0,
     1,
     1,
     1,
     SEL,
     true,
     false,
     false,
     true,
     0,
     0,
     false,
     false,
     NULL,
     PP_DISPATCH_ALLTOALL},
    {"dense, data parallel, mbs 2, full recompute, tokens",
     "llama3-8b",
     "dgx-h100",
     8,
     64,
     4096,
     4096.0 * 1e6,
     BF16,
     4,
     1,
     1,
     1,
     1,
     0,
     1,
     2,
     0,
     FULL,
     false,
     false,
     false,
     true,
     0,
     0,
     false,
     false,
     NULL,
     PP_DISPATCH_ALLTOALL},
    {"MoE, ep 8, sp",
     "mixtral-8x7b",
     "dgx-h100",
     64,
     256,
     4096,
     0,
     BF16,
     4,
     2,
     1,
     1,
     8,
     0,
     1,
     1,
     1,
     SEL,
     true,
     false,
     false,
     true,
     0,
     0,
     false,
     false,
     NULL,
     PP_DISPATCH_ALLTOALL},
    {"MoE + MLA, dense prefix, FP8, uneven stages, DeepEP",
     "deepseek-v3",
     "hgx-h800",
     2048,
     15360,
     4096,
     0,
     PP_PREC_FP8,
     4,
     1,
     16,
     1,
     64,
     0,
     1,
     1,
     1,
     FULL,
     false,
     false,
     true,
     true,
     4,
     1,
     false,
     false,
     NULL,
     PP_DISPATCH_DEEPEP},
    {"context parallel",
     "llama3-8b",
     "dgx-h100",
     64,
     64,
     32768,
     0,
     BF16,
     4,
     2,
     1,
     4,
     1,
     0,
     1,
     1,
     1,
     SEL,
     true,
     false,
     false,
     true,
     0,
     0,
     false,
     false,
     NULL,
     PP_DISPATCH_ALLTOALL},
    {"interleaved, vp 5",
     "llama3-70b",
     "dgx-h100",
     128,
     512,
     8192,
     0,
     BF16,
     4,
     8,
     4,
     1,
     1,
     0,
     5,
     1,
     1,
     SEL,
     true,
     true,
     false,
     true,
     0,
     0,
     false,
     false,
     NULL,
     PP_DISPATCH_ALLTOALL},
    {"uneven stages, Llama 3 405B on 16K H100",
     "llama3.1-405b",
     "dgx-h100",
     16384,
     2048,
     8192,
     8192.0 * 1.9e9,
     BF16,
     4,
     8,
     16,
     1,
     1,
     0,
     1,
     1,
     1,
     FULL,
     true,
     false,
     false,
     true,
     7,
     7,
     false,
     false,
     NULL,
     PP_DISPATCH_ALLTOALL},
    {"embedding and loss as layers, GPT-3 (biases, dropout, learned positions)",
     "gpt3-175b",
     "dgx-a100-80g",
     448,
     1536,
     2048,
     0,
     PP_PREC_FP16,
     4,
     8,
     7,
     1,
     1,
     0,
     1,
     1,
     1,
     FULL,
     true,
     false,
     false,
     true,
     0,
     0,
     true,
     true,
     NULL,
     PP_DISPATCH_ALLTOALL},
    {"ZeRO-3 (Megatron FSDP), bf16 gradients, unfused attention",
     "llama2-13b",
     "dgx-a100-80g",
     32,
     256,
     4096,
     0,
     BF16,
     2,
     1,
     1,
     1,
     1,
     0,
     1,
     1,
     3,
     NONE,
     false,
     false,
     false,
     false,
     0,
     0,
     false,
     false,
     NULL,
     PP_DISPATCH_ALLTOALL},
    {"MoE with qk-norm, etp 1, tp-pp-dp order, uneven interleaved",
     "qwen3-30b-a3b",
     "dgx-h100",
     64,
     512,
     4096,
     0,
     BF16,
     4,
     2,
     4,
     1,
     8,
     1,
     2,
     1,
     1,
     SEL,
     true,
     true,
     true,
     true,
     10,
     10,
     false,
     false,
     "tp-cp-ep-pp-dp",
     PP_DISPATCH_ALLTOALL},
};

static pp_model model_of(const char *name)
{
	pp_model m;
	pp_error err;
	assert_int_equal(pp_model_preset(name, &m, &err), PP_OK);
	return m;
}

static void run_case(const rt_case *c, pp_estimate *e)
{
	pp_model m = model_of(c->model);
	pp_system s;
	pp_error err;
	assert_int_equal(pp_system_preset(c->system, &s, &err), PP_OK);
	pp_job job;
	pp_job_init(&job);
	job.global_batch = c->gbs;
	job.seq_len = c->seq;
	job.train_tokens = c->tokens;
	job.precision = c->prec;
	job.grad_bytes = c->grad_bytes;
	job.moe_dispatcher = c->disp;
	pp_plan p;
	pp_plan_init(&p);
	p.tp = c->tp;
	p.pp = c->pp;
	p.cp = c->cp;
	p.ep = c->ep;
	p.etp = c->etp;
	p.vp = c->vp;
	p.schedule = c->vp > 1 ? PP_SCHED_INTERLEAVED : PP_SCHED_1F1B;
	p.mbs = c->mbs;
	p.zero = c->zero;
	p.recompute = c->rc;
	p.sp = c->sp;
	p.tp_overlap = c->tp_overlap;
	p.ep_overlap = c->ep_overlap;
	p.flash = c->flash;
	p.first_stage_layers = c->first;
	p.last_stage_layers = c->last;
	p.embedding_as_layer = c->emb;
	p.loss_as_layer = c->loss;
	if (c->order)
		snprintf(p.order, sizeof p.order, "%s", c->order);
	pp_status st = pp_estimate_run(&m, &s, &job, &p, c->gpus, e, &err);
	if (st)
		fail_msg("%s: %s: %s", c->what, err.field, err.text);
}

/* Emit `e` as `format` into a malloc'ed string; notes into `notes`. */
static char *emit(const pp_estimate *e, pp_launch_format format, char *notes, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(pp_launch_emit(e, format, f, notes, n), 0);
	fclose(f);
	return buf;
}

static bool all_moe(const pp_model *m)
{
	return m->moe.num_experts > 0 && m->moe.first_k_dense == 0 && m->moe.layer_freq <= 1;
}

/* Every field that the estimate reads, compared exactly. */
static void same_model(const pp_model *a, const pp_model *b, const char *what)
{
#define EQ(f)                                                                                      \
	do {                                                                                       \
		if (a->f != b->f)                                                                  \
			fail_msg("%s: model.%s: %g before, %g after", what, #f, (double)a->f,      \
			         (double)b->f);                                                    \
	} while (0)
	EQ(num_layers);
	EQ(hidden);
	EQ(num_heads);
	EQ(num_kv_heads);
	EQ(head_dim);
	if (!all_moe(a))
		EQ(ffn_hidden);
	EQ(vocab);
	if (a->position == PP_POS_LEARNED)
		EQ(max_position);
	EQ(gated_mlp);
	EQ(tied_embeddings);
	EQ(linear_bias);
	EQ(qkv_bias);
	EQ(qk_norm);
	EQ(dropout);
	EQ(parallel_block);
	EQ(embedding_norm);
	EQ(norm);
	EQ(position);
	EQ(moe.num_experts);
	EQ(moe.top_k);
	EQ(moe.expert_ffn_hidden);
	EQ(moe.num_shared_experts);
	EQ(moe.shared_ffn_hidden);
	EQ(moe.shared_expert_gate);
	EQ(moe.first_k_dense);
	EQ(moe.layer_freq);
	EQ(moe.router_bias);
	EQ(moe.num_groups);
	EQ(moe.group_topk);
	EQ(mla.q_lora_rank);
	EQ(mla.kv_lora_rank);
	EQ(mla.qk_nope_head_dim);
	EQ(mla.qk_rope_head_dim);
	EQ(mla.v_head_dim);
#undef EQ
}

static void same_estimate(const pp_estimate *a, const pp_estimate *b, const char *what)
{
#define EQ(f)                                                                                      \
	do {                                                                                       \
		if (a->f != b->f)                                                                  \
			fail_msg("%s: %s: %.17g before, %.17g after", what, #f, (double)a->f,      \
			         (double)b->f);                                                    \
	} while (0)
	/* job and plan, resolved */
	EQ(job.global_batch);
	EQ(job.seq_len);
	EQ(job.train_tokens);
	EQ(job.precision);
	EQ(job.grad_bytes);
	EQ(job.optimizer);
	EQ(job.moe_dispatcher);
	EQ(plan.tp);
	EQ(plan.pp);
	EQ(plan.dp);
	EQ(plan.cp);
	EQ(plan.ep);
	EQ(plan.etp);
	EQ(plan.vp);
	EQ(plan.mbs);
	EQ(plan.zero);
	EQ(plan.recompute);
	EQ(plan.sp);
	EQ(plan.flash);
	EQ(plan.tp_overlap);
	EQ(plan.ep_overlap);
	EQ(plan.schedule);
	EQ(plan.tp2);
	EQ(plan.summa);
	EQ(plan.summa_nb);
	EQ(plan.first_stage_layers);
	EQ(plan.last_stage_layers);
	EQ(plan.embedding_as_layer);
	EQ(plan.loss_as_layer);
	EQ(plan.microbatches);
	assert_string_equal(a->plan.order, b->plan.order);
	/* the numbers */
	EQ(params.total);
	EQ(params.active);
	EQ(memory.total_bytes);
	EQ(memory.stage);
	EQ(fits);
	for (int i = 0; i < a->nstages; i++)
		EQ(stage_total_bytes[i]);
	EQ(time.iteration_s);
	EQ(time.compute_s);
	EQ(time.bubble_s);
	EQ(time.dp_s);
	EQ(time.tp_s);
	EQ(time.ep_s);
	EQ(time.cp_s);
	EQ(time.pp_s);
	EQ(tokens_per_s);
	EQ(mfu);
	EQ(train_days);
	EQ(cost_usd);
	EQ(dp_bytes);
	EQ(tp_bytes);
#undef EQ
}

/* The flags of Megatron-LM core_v0.15.3's parser, from tests/data. */
static char *megatron_flags;

static int load_flags(void **state)
{
	(void)state;
	const char *root = getenv("PARAPLAN_SOURCE_DIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/data/megatron-core_v0.15.3-flags.txt",
	         root ? root : ".");
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	megatron_flags = calloc((size_t)n + 2, 1);
	megatron_flags[0] = '\n';
	size_t got = fread(megatron_flags + 1, 1, (size_t)n, f);
	fclose(f);
	return got == (size_t)n ? 0 : -1;
}

static int free_flags(void **state)
{
	(void)state;
	free(megatron_flags);
	return 0;
}

static bool is_megatron_flag(const char *flag)
{
	char needle[160];
	snprintf(needle, sizeof needle, "\n%s\n", flag);
	return strstr(megatron_flags, needle) != NULL;
}

static void test_round_trip(void **state)
{
	(void)state;
	pp_estimate *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	assert_non_null(a);
	assert_non_null(b);
	pp_system s;
	pp_error err;
	int nflags = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const rt_case *c = &cases[i];
		run_case(c, a);
		char notes[PP_LAUNCH_NOTES_MAX];
		char *text = emit(a, PP_LAUNCH_MEGATRON, notes, sizeof notes);
		if (notes[0])
			fail_msg("%s: notes: %s", c->what, notes);
		/* Every flag is one of Megatron-LM's. */
		ppi_words w;
		assert_int_equal(ppi_shell_words(text, strlen(text), "emitted", &w, &err), PP_OK);
		for (int k = 0; k < w.n; k++)
			if (strncmp(w.w[k], "--", 2) == 0) {
				nflags++;
				if (!is_megatron_flag(w.w[k]))
					fail_msg("%s: %s is not a Megatron-LM core_v0.15.3 flag",
					         c->what, w.w[k]);
			}
		ppi_words_free(&w);
		/* Read back: a fresh job and plan, the model from the flags. */
		pp_job job;
		pp_plan plan;
		pp_job_init(&job);
		pp_plan_init(&plan);
		pp_launch l;
		pp_status st =
		    pp_launch_from_megatron(text, strlen(text), "emitted", &job, &plan, &l, &err);
		if (st)
			fail_msg("%s: %s: %s\n%s", c->what, err.field, err.text, text);
		assert_true(l.has_model && l.has_gbs && l.has_seq);
		if (l.unused)
			fail_msg("%s: unused flags %s", c->what, l.unused_flags);
		same_model(&a->model, &l.model, c->what);
		assert_int_equal(pp_system_preset(c->system, &s, &err), PP_OK);
		st = pp_estimate_run(&l.model, &s, &job, &plan, c->gpus, b, &err);
		if (st)
			fail_msg("%s: %s: %s", c->what, err.field, err.text);
		same_estimate(a, b, c->what);
		/* Emitting the read-back plan gives the same text but the name. */
		char *again = emit(b, PP_LAUNCH_MEGATRON, notes, sizeof notes);
		const char *x = strchr(text, '\n'), *y = strchr(again, '\n');
		assert_non_null(x);
		assert_non_null(y);
		assert_string_equal(x, y);
		free(again);
		free(text);
	}
	print_message("round trip: %zu plans, %d emitted flags, all Megatron-LM's\n",
	              sizeof cases / sizeof cases[0], nflags);
	free(a);
	free(b);
}

/* Megatron's defaults for what the flags leave out, and its semantics. */
static void test_megatron_semantics(void **state)
{
	(void)state;
	const char *flags =
	    "--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 "
	    "--vocab-size 50257 --tensor-model-parallel-size 2 --global-batch-size 256 "
	    "--num-query-groups 4 --lr 3e-4 --train-iters 1000 --data-path /x/y";
	pp_job job;
	pp_plan plan;
	pp_job_init(&job);
	pp_plan_init(&plan);
	pp_launch l;
	pp_error err;
	assert_int_equal(pp_launch_from_megatron(flags, strlen(flags), "t", &job, &plan, &l, &err),
	                 PP_OK);
	const pp_model *m = &l.model;
	assert_int_equal(m->ffn_hidden, 4 * 2048);    /* 4h without --swiglu */
	assert_int_equal(m->num_kv_heads, 16);        /* --num-query-groups needs GQA on */
	assert_int_equal(m->vocab, 50432);            /* 50257 padded to 128 x tp = 256 */
	assert_true(m->linear_bias && m->dropout);    /* biases and dropout 0.1 by default */
	assert_true(m->tied_embeddings);              /* tied unless --untie-... */
	assert_int_equal(m->norm, PP_NORM_LAYERNORM); /* LayerNorm and learned positions */
	assert_int_equal(m->position, PP_POS_LEARNED);
	assert_int_equal(m->max_position, 2048);
	assert_int_equal(job.precision, PP_PREC_FP32); /* neither --bf16 nor --fp16 */
	assert_rel(job.train_tokens, 1000.0 * 256 * 2048, 0);
	assert_int_equal(plan.tp, 2);
	assert_int_equal(plan.zero, 0);
	assert_int_equal(l.unused, 2);
	assert_string_equal(l.unused_flags, "--lr --data-path");

	/* SwiGLU's default width; GQA; layers per virtual stage; FP8; FSDP. */
	const char *f2 = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --swiglu "
	                 "--group-query-attention --num-query-groups 8 --padded-vocab-size 32000 "
	                 "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage "
	                 "2 --bf16 --fp8-format hybrid --use-megatron-fsdp "
	                 "--data-parallel-sharding-strategy=optim_grads --recompute-granularity "
	                 "full --recompute-method uniform --recompute-num-layers 1";
	assert_int_equal(pp_launch_from_megatron(f2, strlen(f2), "t", &job, &plan, &l, &err),
	                 PP_OK);
	assert_int_equal(l.model.ffn_hidden, 10880); /* int(8h/3 / 64) x 64 */
	assert_int_equal(l.model.num_kv_heads, 8);
	assert_int_equal(plan.vp, 4); /* 32 / 4 stages / 2 layers */
	assert_int_equal(plan.schedule, PP_SCHED_INTERLEAVED);
	assert_int_equal(job.precision, PP_PREC_FP8);
	assert_int_equal(plan.zero, 2);
	assert_int_equal(plan.recompute, PP_RECOMPUTE_FULL);
	assert_false(l.has_gbs);

	/* Errors name the flag. */
	const char *bad[][2] = {
	    {"--tensor-model-parallel-size eight", "--tensor-model-parallel-size"},
	    {"--num-layers 4 --hidden-size 64 --num-attention-heads 4 --vocab-size 10 "
	     "--normalization rmsnorm",
	     "--normalization"},
	    {"--num-layers 4 --hidden-size 64", ""},
	    {"--num-layers 4 --hidden-size 64 --num-attention-heads 4", ""},
	    {"--recompute-granularity", ""},
	    {"--num-layers 61 --hidden-size 64 --num-attention-heads 4 --vocab-size 10 "
	     "--num-experts 8 --moe-layer-freq '([0]*3+[1]*57)'",
	     "--moe-layer-freq"},
	    /* DeepEP only under the flex dispatcher; the groups come in pairs */
	    {"--moe-enable-deepep", "--moe-enable-deepep"},
	    {"--moe-token-dispatcher-type alltoall --moe-enable-deepep", "--moe-enable-deepep"},
	    {"--num-layers 4 --hidden-size 64 --num-attention-heads 4 --vocab-size 10 "
	     "--num-experts 8 --moe-router-num-groups 4",
	     "--moe-router-group-topk"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pp_status st = pp_launch_from_megatron(bad[i][0], strlen(bad[i][0]), "t", &job,
		                                       &plan, &l, &err);
		if (st != PP_EINPUT)
			fail_msg("'%s' accepted", bad[i][0]);
		assert_string_equal(err.field, bad[i][1]);
	}
}

/* The flags picked out of a launch script, as examples/gpt3/train_gpt3_175b_distributed.sh
 * writes one: variables, arrays, continuations, comments, torchrun's flags. */
static void test_script(void **state)
{
	(void)state;
	const char *script = "#!/bin/bash\n"
	                     "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
	                     "GPUS_PER_NODE=8\n"
	                     "NUM_NODES=4  # the job\n"
	                     "TP=${TP:-4}\n"
	                     "DISTRIBUTED_ARGS=(\n"
	                     "    --nproc_per_node $GPUS_PER_NODE\n"
	                     "    --nnodes $NUM_NODES\n"
	                     ")\n"
	                     "GPT_MODEL_ARGS=(\n"
	                     "    --num-layers 96 \n"
	                     "    --hidden-size 12288 \n"
	                     "    --num-attention-heads 96 \n"
	                     "    --seq-length \"2048\" \n"
	                     "    --max-position-embeddings 2048 \n"
	                     "    --vocab-size 50257\n"
	                     ")\n"
	                     "torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \\\n"
	                     "    ${GPT_MODEL_ARGS[@]} --tensor-model-parallel-size ${TP} \\\n"
	                     "    --pipeline-model-parallel-size 16 --micro-batch-size 1 "
	                     "--global-batch-size 1536 \\\n"
	                     "    --fp16 --save $CHECKPOINT_PATH --log-interval 100\n";
	pp_job job;
	pp_plan plan;
	pp_job_init(&job);
	pp_plan_init(&plan);
	pp_launch l;
	pp_error err;
	assert_int_equal(
	    pp_launch_from_megatron(script, strlen(script), "t", &job, &plan, &l, &err), PP_OK);
	assert_int_equal(l.gpus, 32);
	assert_int_equal(plan.tp, 4);
	assert_int_equal(plan.pp, 16);
	assert_int_equal(job.global_batch, 1536);
	assert_int_equal(job.seq_len, 2048);
	assert_int_equal(job.precision, PP_PREC_FP16);
	assert_int_equal(l.model.num_layers, 96);
	assert_int_equal(l.model.vocab, 50688); /* 50257 padded to a multiple of 512 */
	assert_string_equal(l.unused_flags, "--save --log-interval");

	ppi_words w;
	const char *q = "a 'b c' \"d $X e\" f\\ g X=1 $X ${Y:-7} # h\ni";
	assert_int_equal(ppi_shell_words(q, strlen(q), "t", &w, &err), PP_OK);
	const char *want[] = {"a", "b c", "d $X e", "f g", "X=1", "1", "7", "i"};
	assert_int_equal(w.n, 8);
	for (int i = 0; i < w.n; i++)
		assert_string_equal(w.w[i], want[i]);
	ppi_words_free(&w);
	assert_int_equal(ppi_shell_words("'open", 5, "t", &w, &err), PP_EINPUT);
}

/* NeMo and torchtitan: what they cannot express is noted. */
static void test_other_formats(void **state)
{
	(void)state;
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	run_case(&cases[6], e); /* uneven 405B */
	char notes[PP_LAUNCH_NOTES_MAX];
	char *t = emit(e, PP_LAUNCH_NEMO, notes, sizeof notes);
	assert_non_null(strstr(t, "trainer.strategy.num_layers_in_first_pipeline_stage=7"));
	assert_non_null(strstr(t, "trainer.strategy.tensor_model_parallel_size=8"));
	assert_non_null(strstr(t, "optim.config.use_distributed_optimizer=True"));
	free(t);
	t = emit(e, PP_LAUNCH_TORCHTITAN, notes, sizeof notes);
	assert_non_null(strstr(t, "[parallelism]\n"));
	assert_non_null(strstr(t, "pipeline_parallel_degree = 16\n"));
	assert_non_null(strstr(t, "mode = \"full\"\n"));
	assert_non_null(strstr(notes, "ZeRO-1 is not expressed"));
	free(t);
	run_case(&cases[1], e);
	e->plan.schedule = PP_SCHED_ZB;
	t = emit(e, PP_LAUNCH_MEGATRON, notes, sizeof notes);
	assert_non_null(strstr(notes, "not zb"));
	free(t);
	pp_launch_format f;
	pp_error err;
	assert_int_equal(pp_launch_format_parse("titan", "--emit", &f, &err), PP_EINPUT);
	free(e);
}

/* The TOML subset and torchtitan's job files. */
static void test_toml(void **state)
{
	(void)state;
	const char *doc = "# c\n[a]\nx = 1_000 # n\ny = 'lit\\eral'\nz = \"q\\\"s\"\n"
	                  "[b.c]\nf = 1.5e3\nt = true\narr = [\"p\", 'q', 3]\n";
	ppi_toml t;
	pp_error err;
	assert_int_equal(ppi_toml_parse(doc, strlen(doc), "t", &t, &err), PP_OK);
	assert_int_equal(t.n, 6);
	assert_string_equal(ppi_toml_get(&t, "a.x")->value, "1000");
	assert_int_equal(ppi_toml_get(&t, "a.x")->kind, 'i');
	assert_string_equal(ppi_toml_get(&t, "a.y")->value, "lit\\eral");
	assert_string_equal(ppi_toml_get(&t, "a.z")->value, "q\"s");
	assert_int_equal(ppi_toml_get(&t, "b.c.f")->kind, 'f');
	assert_int_equal(ppi_toml_get(&t, "b.c.t")->kind, 'b');
	assert_string_equal(ppi_toml_get(&t, "b.c.arr")->value, "p,q,3");
	ppi_toml_free(&t);
	/* Outside the subset, or malformed: an error with the line. */
	const char *bad[] = {"a = {x = 1}\n", "[[t]]\n",        "a = \"open\n",
	                     "a = [1,\n2]\n", "a = 1\na = 2\n", "[t\n",
	                     "a = 1 b\n",     "= 1\n",          "a = 1979-05-27\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (ppi_toml_parse(bad[i], strlen(bad[i]), "t", &t, &err) != PP_EINPUT)
			fail_msg("accepted: %s", bad[i]);
	assert_int_equal(err.line, 1);
}

static void test_torchtitan(void **state)
{
	(void)state;
	const char *doc = "[model]\nname = \"llama3\"\nflavor = \"70B\"\nconverters = "
	                  "[\"float8\"]\n[training]\nlocal_batch_size = 2\nseq_len = 8192\n"
	                  "steps = 100\n[parallelism]\ndata_parallel_replicate_degree = 2\n"
	                  "data_parallel_shard_degree = 4\ntensor_parallel_degree = 8\n"
	                  "pipeline_parallel_degree = 4\npipeline_parallel_schedule = "
	                  "\"Interleaved1F1B\"\npipeline_parallel_layers_per_stage = 5\n"
	                  "pipeline_parallel_microbatch_size = 1\n[activation_checkpoint]\n"
	                  "mode = \"full\"\n[optimizer]\nlr = 1e-4\n";
	pp_job job;
	pp_plan plan;
	pp_job_init(&job);
	pp_plan_init(&plan);
	pp_launch l;
	pp_error err;
	pp_status st = pp_launch_from_torchtitan(doc, strlen(doc), "t", &job, &plan, &l, &err);
	if (st)
		fail_msg("%s: %s", err.field, err.text);
	assert_true(l.has_model);
	assert_string_equal(l.model.name, "llama3.1-70b");
	assert_int_equal(job.precision, PP_PREC_FP8);
	assert_int_equal(job.global_batch, 2 * 2 * 4);
	assert_int_equal(job.seq_len, 8192);
	assert_rel(job.train_tokens, 100.0 * 16 * 8192, 0);
	assert_int_equal(plan.dp, 8);
	assert_int_equal(plan.zero, 3);
	assert_int_equal(plan.tp, 8);
	assert_true(plan.sp);
	assert_int_equal(plan.pp, 4);
	assert_int_equal(plan.vp, 4); /* 80 layers / 5 per stage / 4 ranks */
	assert_int_equal(plan.schedule, PP_SCHED_INTERLEAVED);
	assert_int_equal(plan.recompute, PP_RECOMPUTE_FULL);
	assert_string_equal(l.unused_flags, "optimizer.lr");
	/* torchtitan's defaults: selective recompute, FSDP over the rest, bf16. */
	const char *empty = "";
	assert_int_equal(pp_launch_from_torchtitan(empty, 0, "t", &job, &plan, &l, &err), PP_OK);
	assert_int_equal(plan.recompute, PP_RECOMPUTE_SELECTIVE);
	assert_int_equal(plan.zero, 3);
	assert_int_equal(plan.dp, 0);
	assert_int_equal(job.precision, PP_PREC_BF16);
	assert_false(l.has_gbs);
	assert_false(l.has_model);
	const char *bad = "[parallelism]\npipeline_parallel_schedule = \"Zig\"\n";
	assert_int_equal(pp_launch_from_torchtitan(bad, strlen(bad), "t", &job, &plan, &l, &err),
	                 PP_EINPUT);
	assert_int_equal(err.line, 2);
}

/* pp_launch_apply: the flag picks the reader; the note names what is unused. */
static void test_apply(void **state)
{
	(void)state;
	pp_job job;
	pp_plan plan;
	pp_job_init(&job);
	pp_plan_init(&plan);
	pp_launch l;
	pp_error err;
	char note[256];
	const char *flags = "--tensor-model-parallel-size 2 --no-such-flag 3";
	assert_int_equal(
	    pp_launch_apply("from-megatron", flags, &job, &plan, &l, note, sizeof note, &err),
	    PP_OK);
	assert_int_equal(plan.tp, 2);
	assert_int_equal(l.unused, 1);
	assert_true(strncmp(note, "--from-megatron: 1 flag not used: ", 34) == 0);
	assert_non_null(strstr(note, "no-such-flag"));
	assert_int_equal(pp_launch_apply("from-megatron", "--tensor-model-parallel-size 2", &job,
	                                 &plan, &l, note, sizeof note, &err),
	                 PP_OK);
	assert_string_equal(note, "");
	assert_int_equal(pp_launch_apply("from-torchtitan", "/nonexistent/job.toml", &job, &plan,
	                                 &l, note, sizeof note, &err),
	                 PP_EINPUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip), cmocka_unit_test(test_megatron_semantics),
	    cmocka_unit_test(test_script),     cmocka_unit_test(test_other_formats),
	    cmocka_unit_test(test_toml),       cmocka_unit_test(test_torchtitan),
	    cmocka_unit_test(test_apply),
	};
	return cmocka_run_group_tests(tests, load_flags, free_flags);
}
