/*
 * Uneven pipeline stages (Megatron-LM's --decoder-first/last-pipeline-num-layers
 * and --account-for-embedding/loss-in-pipeline-split): the layer split, each
 * layer held by exactly one stage, memory and time following the split, the
 * peak-only evaluation staying exact, the validation rules, and the search
 * picking uneven splits for a pp that does not divide the layers.
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

static pp_model model;
static pp_system sys;

static void inputs(const char *m, const char *s)
{
	pp_error err;
	assert_int_equal(pp_model_preset(m, &model, &err), PP_OK);
	assert_int_equal(pp_system_preset(s, &sys, &err), PP_OK);
	/* the compute model, as the resolvers give it, for the stage costs
	 * this file computes directly */
	assert_int_equal(pp_system_compute_model(&sys, &err), PP_OK);
}

static void job_of(pp_job *job, long long gbs, int seq)
{
	pp_job_init(job);
	job->global_batch = gbs;
	job->seq_len = seq;
}

/* Estimate with `flags`; fails the test with paraplan's message unless it resolves. */
static void eval(const pp_job *job, const pp_plan *plan, long long gpus, unsigned flags,
                 pp_estimate *out)
{
	pp_error err;
	char buf[512];
	pp_error_clear(&err);
	if (pp_estimate_eval(&model, &sys, job, plan, gpus, flags, NULL, out, &err) != PP_OK)
		fail_msg("%s: %s", model.name, pp_error_format(&err, buf, sizeof buf));
}

/* The status and field pp_plan_resolve answers for `plan`. */
static pp_status resolve(pp_plan plan, long long gpus, const pp_job *job, char *field, size_t n)
{
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_plan_resolve(&plan, &model, &sys, gpus, job, &err);
	snprintf(field, n, "%s", st ? err.field : "");
	return st;
}

/* Every layer is held by exactly one stage: the stage counts add up to the
 * model's layers and the indices are a permutation of 0..L-1. */
static void assert_partition(const pp_plan *p)
{
	int L = model.num_layers, sum = 0;
	char *seen = calloc((size_t)L, 1);
	assert_non_null(seen);
	for (int s = 0; s < p->pp; s++) {
		int n = pp_stage_layers(&model, p, s);
		assert_true(n >= 0);
		sum += n;
		for (int i = 0; i < n; i++) {
			int l = pp_stage_layer_index(&model, p, s, i);
			assert_true(l >= 0 && l < L);
			assert_int_equal(seen[l], 0);
			seen[l] = 1;
		}
	}
	assert_int_equal(sum, L);
	free(seen);
}

static void plan_405b(pp_plan *p)
{
	pp_plan_init(p);
	p->tp = 8;
	p->pp = 16;
	p->sp = true;
	p->zero = 1;
	p->recompute = PP_RECOMPUTE_FULL;
	p->first_stage_layers = 7;
	p->last_stage_layers = 7;
}

/* Llama-3.1-405B's published pp 16: 126 layers, the first and last stage one
 * layer short of 8. */
static void test_split_405b(void **state)
{
	(void)state;
	inputs("llama3.1-405b", "dgx-h100");
	assert_int_equal(model.num_layers, 126);
	pp_plan p;
	plan_405b(&p);
	pp_job job;
	job_of(&job, 2048, 8192);
	char f[PP_ERROR_FIELD_MAX];
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_OK);
	assert_int_equal(pp_stage_layers(&model, &p, 0), 7);
	for (int s = 1; s < 15; s++)
		assert_int_equal(pp_stage_layers(&model, &p, s), 8);
	assert_int_equal(pp_stage_layers(&model, &p, 15), 7);
	assert_partition(&p);
	/* Contiguous without interleaving: stage 1 starts after the first 7. */
	assert_int_equal(pp_stage_layer_index(&model, &p, 1, 0), 7);
	assert_int_equal(pp_stage_layer_index(&model, &p, 15, 0), 7 + 14 * 8);

	/* Without the flags the plan is refused, as before. */
	p.first_stage_layers = p.last_stage_layers = 0;
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.pp");
}

/* DeepSeek-V3: 61 layers over pp 16.  61 - 4 - 1 = 56 = 14 x 4: the first
 * stage (its 3 dense layers are cheap) holds 4, the last (head, loss) 1. */
static void test_split_deepseek_v3(void **state)
{
	(void)state;
	inputs("deepseek-v3", "hgx-h800");
	assert_int_equal(model.num_layers, 61);
	pp_plan p;
	pp_plan_init(&p);
	p.pp = 16;
	p.ep = 64;
	p.zero = 1;
	p.first_stage_layers = 4;
	p.last_stage_layers = 1;
	pp_job job;
	job_of(&job, 15360, 4096);
	char f[PP_ERROR_FIELD_MAX];
	assert_int_equal(resolve(p, 2048, &job, f, sizeof f), PP_OK);
	assert_int_equal(pp_stage_layers(&model, &p, 0), 4);
	for (int s = 1; s < 15; s++)
		assert_int_equal(pp_stage_layers(&model, &p, s), 4);
	assert_int_equal(pp_stage_layers(&model, &p, 15), 1);
	assert_partition(&p);
	/* Only the first count given: the other 15 stages split 61 - 1 = 60. */
	p.first_stage_layers = 1;
	p.last_stage_layers = 0;
	assert_int_equal(resolve(p, 2048, &job, f, sizeof f), PP_OK);
	assert_int_equal(pp_stage_layers(&model, &p, 0), 1);
	assert_int_equal(pp_stage_layers(&model, &p, 15), 4);
	assert_partition(&p);

	static pp_estimate e;
	p.first_stage_layers = 4;
	p.last_stage_layers = 1;
	p.recompute = PP_RECOMPUTE_FULL;
	eval(&job, &p, 2048, 0, &e);
	assert_true(isfinite(e.time.iteration_s) && e.time.iteration_s > 0);
	assert_true(isfinite(e.memory.total_bytes) && e.memory.total_bytes > 0);
	assert_true(e.mfu > 0 && e.mfu < 1);
	for (int s = 0; s < 16; s++)
		assert_true(isfinite(e.stage_total_bytes[s]) && e.stage_total_bytes[s] > 0);
}

/* Interleaved: every stage's layers in vp equal chunks, Megatron's offsets
 * (chunk round c starts at c*L/vp; the ranks' chunks in rank order). */
static void test_split_interleaved(void **state)
{
	(void)state;
	inputs("llama3-70b", "dgx-h100");
	pp_plan p;
	pp_plan_init(&p);
	p.tp = 8;
	p.pp = 4;
	p.vp = 2;
	p.first_stage_layers = 18;
	p.last_stage_layers = 18; /* 80 - 36 = 44: 22 per middle stage, 11 per chunk */
	pp_job job;
	job_of(&job, 512, 8192);
	char f[PP_ERROR_FIELD_MAX];
	assert_int_equal(resolve(p, 64, &job, f, sizeof f), PP_OK);
	assert_partition(&p);
	assert_int_equal(pp_stage_layers(&model, &p, 1), 22);
	assert_int_equal(pp_stage_layer_index(&model, &p, 0, 0), 0);
	assert_int_equal(pp_stage_layer_index(&model, &p, 1, 0), 9);
	assert_int_equal(pp_stage_layer_index(&model, &p, 2, 0), 20);
	assert_int_equal(pp_stage_layer_index(&model, &p, 3, 0), 31);
	assert_int_equal(pp_stage_layer_index(&model, &p, 0, 9), 40); /* second chunk round */
	assert_int_equal(pp_stage_layer_index(&model, &p, 3, 17), 79);
	static pp_estimate e;
	eval(&job, &p, 64, 0, &e);
	assert_true(isfinite(e.time.iteration_s) && e.time.iteration_s > 0);

	/* An even split written as end counts is the even split. */
	pp_plan even = p;
	even.first_stage_layers = even.last_stage_layers = 0;
	p.first_stage_layers = p.last_stage_layers = 20;
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < 20; i++)
			assert_int_equal(pp_stage_layer_index(&model, &p, s, i),
			                 pp_stage_layer_index(&model, &even, s, i));
	static pp_estimate a, b;
	eval(&job, &p, 64, 0, &a);
	eval(&job, &even, 64, 0, &b);
	assert_true(a.time.iteration_s == b.time.iteration_s);
	assert_true(a.memory.total_bytes == b.memory.total_bytes);
}

/* Megatron's --account-for-embedding/loss-in-pipeline-split: 405B on pp 8 is
 * an even split of 128 "layers", 15 + 6 x 16 + 15: the same stages, memory
 * and time as first = last = 15. */
static void test_embedding_loss_as_layer(void **state)
{
	(void)state;
	inputs("llama3.1-405b", "dgx-h100");
	pp_plan a;
	plan_405b(&a);
	a.pp = 8;
	a.first_stage_layers = a.last_stage_layers = 0;
	a.embedding_as_layer = a.loss_as_layer = true;
	pp_plan b = a;
	b.embedding_as_layer = b.loss_as_layer = false;
	b.first_stage_layers = b.last_stage_layers = 15;
	for (int s = 0; s < 8; s++) {
		assert_int_equal(pp_stage_layers(&model, &a, s), s == 0 || s == 7 ? 15 : 16);
		for (int i = 0; i < pp_stage_layers(&model, &a, s); i++)
			assert_int_equal(pp_stage_layer_index(&model, &a, s, i),
			                 pp_stage_layer_index(&model, &b, s, i));
	}
	assert_partition(&a);
	pp_job job;
	job_of(&job, 1024, 8192);
	static pp_estimate x, y;
	eval(&job, &a, 1024, 0, &x);
	eval(&job, &b, 1024, 0, &y);
	assert_true(x.time.iteration_s == y.time.iteration_s);
	assert_true(x.memory.total_bytes == y.memory.total_bytes);
	for (int s = 0; s < 8; s++)
		assert_true(x.stage_total_bytes[s] == y.stage_total_bytes[s]);

	/* Only the embedding (or only the loss) counted: llama3-70b, 80 + 1 = 81
	 * = 3 x 27. */
	inputs("llama3-70b", "dgx-h100");
	pp_plan c;
	pp_plan_init(&c);
	c.tp = 8;
	c.pp = 3;
	c.embedding_as_layer = true;
	assert_int_equal(pp_stage_layers(&model, &c, 0), 26);
	assert_int_equal(pp_stage_layers(&model, &c, 1), 27);
	assert_int_equal(pp_stage_layers(&model, &c, 2), 27);
	assert_partition(&c);
	c.embedding_as_layer = false;
	c.loss_as_layer = true;
	assert_int_equal(pp_stage_layers(&model, &c, 0), 27);
	assert_int_equal(pp_stage_layers(&model, &c, 2), 26);
	assert_partition(&c);
}

/* One layer fewer on a stage: its weights (and gradients, optimizer states)
 * shrink by exactly one layer's share; the middle stage's grow by one. */
static void test_memory_follows_split(void **state)
{
	(void)state;
	inputs("llama3-70b", "dgx-h100");
	pp_plan even;
	pp_plan_init(&even);
	even.tp = 8;
	even.pp = 4;
	even.zero = 1;
	even.sp = true;
	pp_plan un = even;
	un.first_stage_layers = 19;
	un.last_stage_layers = 19; /* 19 + 21 + 21 + 19 */
	pp_job job;
	job_of(&job, 512, 8192);
	pp_error err;
	assert_int_equal(pp_plan_resolve(&even, &model, &sys, 64, &job, &err), PP_OK);
	assert_int_equal(pp_plan_resolve(&un, &model, &sys, 64, &job, &err), PP_OK);
	pp_layer_params lp;
	pp_model_layer_params(&model, 0, &lp);
	double layer = (lp.attention + lp.mlp - lp.replicated) / 8 + lp.replicated;
	for (int s = 0; s < 4; s++) {
		pp_stage_memory a, b;
		assert_int_equal(pp_memory_stage(&model, &sys, &job, &even, s, &a, &err), PP_OK);
		assert_int_equal(pp_memory_stage(&model, &sys, &job, &un, s, &b, &err), PP_OK);
		int d = s == 0 || s == 3 ? -1 : 1;
		assert_int_equal(b.layers, a.layers + d);
		assert_rel(b.params - a.params, d * layer, 1e-9);
		assert_rel(b.weights_bytes - a.weights_bytes, d * layer * 2, 1e-9);
		if (d < 0) {
			assert_true(b.weights_bytes < a.weights_bytes);
			assert_true(b.activations_bytes < a.activations_bytes);
		} else {
			assert_true(b.weights_bytes > a.weights_bytes);
		}
	}
}

/* The time model follows the split: the pipeline is paced by a full (8-layer)
 * stage, not by the 7-layer ends; everything finite. */
static void test_time_bottleneck_full_stage(void **state)
{
	(void)state;
	inputs("llama3.1-405b", "dgx-h100");
	pp_plan p;
	plan_405b(&p);
	pp_job job;
	job_of(&job, 2048, 8192);
	static pp_estimate e;
	eval(&job, &p, 16384, 0, &e);
	int b = e.time.bottleneck_stage;
	assert_true(b >= 1 && b <= 14);
	assert_int_equal(pp_stage_layers(&model, &e.plan, b), 8);
	assert_true(isfinite(e.time.iteration_s) && e.time.iteration_s > 0);
	assert_true(e.time.bubble_s > 0 && isfinite(e.time.bubble_s));
	assert_true(e.mfu > 0 && e.mfu < 1);
	assert_true(e.fits);
	/* The peak is on stage 1: the first stage holds a layer fewer but the
	 * most micro-batches in flight. */
	assert_int_equal(e.memory.stage, 1);
	/* Each end stage alone costs less than a full stage. */
	pp_work ws;
	pp_work_init(&ws);
	pp_stage_time t0, t1, t15;
	pp_error err;
	assert_int_equal(pp_stage_cost(&model, &sys, &job, &e.plan, 0, &ws, &t0, &err), PP_OK);
	assert_int_equal(pp_stage_cost(&model, &sys, &job, &e.plan, 1, &ws, &t1, &err), PP_OK);
	assert_int_equal(pp_stage_cost(&model, &sys, &job, &e.plan, 15, &ws, &t15, &err), PP_OK);
	assert_true(t0.fwd_compute_s < t1.fwd_compute_s);
	assert_true(t15.fwd_compute_s < t1.fwd_compute_s);
}

/* The peak-only evaluation a search uses gives the same peak (stage and
 * bytes) and the same time as evaluating every stage, for uneven splits
 * under every schedule. */
static void test_peak_only_exact(void **state)
{
	(void)state;
	const struct {
		const char *model;
		int pp, vp, first, last;
		bool emb, loss;
		pp_schedule sched;
		pp_recompute rc;
	} cases[] = {
	    {"llama3.1-405b", 16, 1, 7, 7, false, false, PP_SCHED_1F1B, PP_RECOMPUTE_FULL},
	    {"llama3.1-405b", 16, 1, 7, 7, false, false, PP_SCHED_1F1B, PP_RECOMPUTE_NONE},
	    {"llama3.1-405b", 16, 1, 7, 7, false, false, PP_SCHED_ZB, PP_RECOMPUTE_SELECTIVE},
	    {"llama3.1-405b", 16, 1, 7, 7, false, false, PP_SCHED_GPIPE, PP_RECOMPUTE_FULL},
	    {"llama3.1-405b", 16, 1, 6, 0, false, false, PP_SCHED_1F1B, PP_RECOMPUTE_FULL},
	    {"llama3.1-405b", 8, 1, 0, 0, true, true, PP_SCHED_1F1B, PP_RECOMPUTE_NONE},
	    {"llama3.1-405b", 3, 1, 40, 0, false, false, PP_SCHED_1F1B, PP_RECOMPUTE_NONE},
	    {"llama3.1-405b", 2, 1, 62, 64, false, false, PP_SCHED_1F1B, PP_RECOMPUTE_FULL},
	    {"llama3-70b", 4, 2, 18, 18, false, false, PP_SCHED_INTERLEAVED, PP_RECOMPUTE_NONE},
	    {"llama3-70b", 4, 1, 16, 16, false, false, PP_SCHED_1F1B, PP_RECOMPUTE_NONE},
	    {"llama3-70b", 3, 1, 0, 0, true, false, PP_SCHED_1F1B, PP_RECOMPUTE_SELECTIVE},
	    {"deepseek-v3", 16, 1, 4, 1, false, false, PP_SCHED_1F1B, PP_RECOMPUTE_FULL},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		inputs(cases[k].model, "dgx-h100");
		pp_plan p;
		pp_plan_init(&p);
		bool moe = model.moe.num_experts > 0;
		p.tp = moe ? 1 : 8;
		p.ep = moe ? 8 : 1;
		p.pp = cases[k].pp;
		p.vp = cases[k].vp;
		p.schedule = cases[k].sched;
		p.recompute = cases[k].rc;
		p.sp = !moe;
		p.zero = 1;
		p.first_stage_layers = cases[k].first;
		p.last_stage_layers = cases[k].last;
		p.embedding_as_layer = cases[k].emb;
		p.loss_as_layer = cases[k].loss;
		pp_job job;
		job_of(&job, 1024, 4096);
		long long gpus = (long long)p.tp * p.pp * 16;
		static pp_estimate full, peak;
		eval(&job, &p, gpus, 0, &full);
		eval(&job, &p, gpus, PP_EVAL_PEAK_ONLY, &peak);
		assert_int_equal(peak.memory.stage, full.memory.stage);
		assert_true(peak.memory.total_bytes == full.memory.total_bytes);
		assert_true(peak.time.iteration_s == full.time.iteration_s);
		assert_int_equal(peak.time.bottleneck_stage, full.time.bottleneck_stage);
		/* The time shortcut (inner stages copied) equals costing each stage. */
		pp_work ws;
		pp_work_init(&ws);
		static pp_stage_time st[PP_MAX_STAGES];
		pp_error err;
		for (int s = 0; s < full.plan.pp; s++)
			assert_int_equal(
			    pp_stage_cost(&model, &sys, &job, &full.plan, s, &ws, &st[s], &err),
			    PP_OK);
		pp_iteration it;
		pp_schedule_iteration(&full.plan, &sys, st, &it);
		assert_rel(it.iteration_s, full.time.iteration_s, 1e-12);
	}
}

/* Megatron's rules, each with its field. */
static void test_invalid_splits(void **state)
{
	(void)state;
	inputs("llama3.1-405b", "dgx-h100");
	pp_job job;
	job_of(&job, 2048, 8192);
	char f[PP_ERROR_FIELD_MAX];
	pp_plan p;
	plan_405b(&p);
	p.first_stage_layers = 6; /* 126 - 6 - 7 = 113 over 14 */
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.first_stage_layers");
	p.first_stage_layers = 0; /* 126 - 7 = 119 over 15 */
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.last_stage_layers");
	p.first_stage_layers = 63;
	p.last_stage_layers = 63; /* nothing left for 14 stages */
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.first_stage_layers");
	p.first_stage_layers = -1;
	p.last_stage_layers = 7;
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.first_stage_layers");
	/* pp = 2: the two counts must add up to the layers. */
	plan_405b(&p);
	p.pp = 2;
	p.first_stage_layers = 62;
	p.last_stage_layers = 63;
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.first_stage_layers");
	p.last_stage_layers = 64;
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_OK);
	/* pp = 1: no pipeline to split. */
	plan_405b(&p);
	p.pp = 1;
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.first_stage_layers");
	p.first_stage_layers = p.last_stage_layers = 0;
	p.loss_as_layer = true;
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.loss_as_layer");
	/* Counts and embedding/loss as a layer do not combine (Megatron refuses). */
	plan_405b(&p);
	p.embedding_as_layer = true;
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.embedding_as_layer");
	/* 126 + 1 over 8 does not divide. */
	plan_405b(&p);
	p.pp = 8;
	p.first_stage_layers = p.last_stage_layers = 0;
	p.embedding_as_layer = true;
	assert_int_equal(resolve(p, 16384, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.embedding_as_layer");
	/* Interleaving: counts divide into vp chunks; embedding/loss as a layer
	 * with vp > 1 is not modelled. */
	inputs("llama3-70b", "dgx-h100");
	job_of(&job, 512, 8192);
	pp_plan_init(&p);
	p.tp = 8;
	p.pp = 4;
	p.vp = 2;
	p.first_stage_layers = 19;
	p.last_stage_layers = 19;
	assert_int_equal(resolve(p, 64, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.first_stage_layers");
	p.first_stage_layers = 20;
	p.last_stage_layers = 18; /* 42 over 2 = 21 per middle stage: odd */
	assert_int_equal(resolve(p, 64, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.vp");
	p.first_stage_layers = p.last_stage_layers = 0;
	p.pp = 3;
	p.vp = 2;
	p.embedding_as_layer = true; /* 81 over 3 x 2 chunks */
	assert_int_equal(resolve(p, 48, &job, f, sizeof f), PP_EINPUT);
	assert_string_equal(f, "plan.embedding_as_layer");
	p.vp = 3; /* 81 = 3 x 3 x 9: Megatron-Core's chunks, the first a layer short */
	assert_int_equal(resolve(p, 48, &job, f, sizeof f), PP_OK);
	p.vp = 1;
	p.schedule = PP_SCHED_1F1B;
	assert_int_equal(resolve(p, 48, &job, f, sizeof f), PP_OK);
}

/* The layers of each model chunk with the embedding and the loss counted as
 * layers and interleaving (Megatron-Core get_transformer_layer_offset): Llama
 * 3's plan, 126 layers + 2 over pp 16 x vp 8, one slot a chunk: rank 0's first
 * chunk holds only the embedding, so its first layer is virtual stage 16's,
 * layer 15; rank 1's first is layer 0; the last layer, 125, is virtual stage
 * 126's, rank 14's eighth chunk; the last rank holds 7. */
static void test_chunk_layers(void **state)
{
	(void)state;
	pp_model m;
	assert_int_equal(pp_model_preset("llama3.1-405b", &m, NULL), PP_OK);
	pp_plan p;
	pp_plan_init(&p);
	p.pp = 16;
	p.vp = 8;
	p.embedding_as_layer = p.loss_as_layer = true;
	assert_int_equal(pp_stage_layers(&m, &p, 0), 7);
	assert_int_equal(pp_stage_layers(&m, &p, 7), 8);
	assert_int_equal(pp_stage_layers(&m, &p, 15), 7);
	assert_int_equal(pp_stage_layer_index(&m, &p, 0, 0), 15);
	assert_int_equal(pp_stage_layer_index(&m, &p, 1, 0), 0);
	assert_int_equal(pp_stage_layer_index(&m, &p, 14, 7), 125);
	assert_int_equal(pp_stage_layer_index(&m, &p, 15, 6), 110);
	/* every layer once */
	int seen[126] = {0};
	for (int r = 0; r < 16; r++)
		for (int i = 0; i < pp_stage_layers(&m, &p, r); i++)
			seen[pp_stage_layer_index(&m, &p, r, i)]++;
	for (int l = 0; l < 126; l++)
		assert_int_equal(seen[l], 1);
	/* vp 4: two slots a chunk, rank 0's first chunk one layer (layer 0) */
	p.vp = 4;
	assert_int_equal(pp_stage_layer_index(&m, &p, 0, 0), 0);
	assert_int_equal(pp_stage_layer_index(&m, &p, 0, 1), 31);
	assert_int_equal(pp_stage_layer_index(&m, &p, 1, 0), 1);
}

/* ------------------------------------------------------------------ search */

static pp_search *search(const char *m, const char *s, long long gpus, long long gbs, int seq,
                         const pp_search_space *space, bool exhaustive, int threads)
{
	inputs(m, s);
	pp_job job;
	job_of(&job, gbs, seq);
	pp_search_options o;
	pp_search_options_init(&o);
	o.top_k = 20;
	o.threads = threads;
	o.exhaustive = exhaustive;
	pp_search *srch;
	pp_error err;
	char buf[512];
	if (pp_search_new(&model, &sys, &job, gpus, space, &o, &srch, &err) != PP_OK)
		fail_msg("%s", pp_error_format(&err, buf, sizeof buf));
	while (!pp_search_done(srch))
		assert_int_equal(pp_search_iterate(srch, &err), PP_OK);
	return srch;
}

static void fix(pp_search_dim *d, int v)
{
	d->count = 1;
	d->values[0] = v;
}

/* A pp that does not divide the layers is searched with uneven splits; the
 * plans found re-estimate to the same numbers. */
static void test_search_picks_uneven(void **state)
{
	(void)state;
	pp_search_space space;
	pp_search_space_init(&space);
	fix(&space.tp, 8);
	fix(&space.pp, 16);
	fix(&space.cp, 1);
	space.recompute_mask = 1u << PP_RECOMPUTE_FULL;
	pp_search *s = search("llama3.1-405b", "dgx-h100", 1024, 1024, 8192, &space, false, 2);
	assert_true(pp_search_count(s) > 0);
	bool seen[2] = {false, false};
	for (size_t i = 0; i < pp_search_count(s); i++) {
		const pp_estimate *e = pp_search_plan(s, i);
		const pp_plan *p = &e->plan;
		assert_int_equal(p->pp, 16);
		assert_true(p->first_stage_layers > 0 && p->last_stage_layers > 0);
		int mid = pp_stage_layers(&model, p, 1);
		assert_true(mid == 8);
		seen[p->first_stage_layers == 7 && p->last_stage_layers == 7] = true;
		static pp_estimate again;
		pp_error err;
		assert_int_equal(
		    pp_estimate_run(&e->model, &e->system, &e->job, p, e->gpus, &again, &err),
		    PP_OK);
		assert_rel(again.time.iteration_s, e->time.iteration_s, 1e-12);
		assert_rel(again.memory.total_bytes, e->memory.total_bytes, 1e-12);
	}
	assert_true(seen[1]);
	pp_search_free(s);

	/* DeepSeek-V3 (61 layers, prime) on pp 16: middle stages of 4, ends 2 + 3
	 * both ways round. */
	pp_search_space_init(&space);
	fix(&space.tp, 1);
	fix(&space.pp, 16);
	fix(&space.cp, 1);
	fix(&space.ep, 64);
	fix(&space.zero, 1);
	space.recompute_mask = 1u << PP_RECOMPUTE_FULL;
	space.schedule_mask = 1u << PP_SCHED_1F1B;
	space.norders = 1;
	snprintf(space.orders[0], sizeof space.orders[0], "tp-cp-ep-dp-pp");
	s = search("deepseek-v3", "hgx-h800", 2048, 4096, 4096, &space, false, 2);
	assert_true(pp_search_count(s) > 0);
	bool both[2] = {false, false};
	for (size_t i = 0; i < pp_search_count(s); i++) {
		const pp_plan *p = &pp_search_plan(s, i)->plan;
		assert_int_equal(p->first_stage_layers + p->last_stage_layers, 5);
		both[p->first_stage_layers == 2] = true;
	}
	assert_true(both[0] && both[1]);
	pp_search_free(s);
}

/* The user's split is a fixed value: every plan carries it, and only the pp
 * values it allows are searched. */
static void test_search_fixed_split(void **state)
{
	(void)state;
	pp_search_space space;
	pp_search_space_init(&space);
	fix(&space.tp, 8);
	space.recompute_mask = 1u << PP_RECOMPUTE_FULL;
	space.base.embedding_as_layer = true;
	space.base.loss_as_layer = true; /* 128 "layers": pp 2, 4, 8, 16, ... */
	pp_search *s = search("llama3.1-405b", "dgx-h100", 1024, 1024, 8192, &space, false, 2);
	assert_true(pp_search_count(s) > 0);
	for (size_t i = 0; i < pp_search_count(s); i++) {
		const pp_plan *p = &pp_search_plan(s, i)->plan;
		assert_true(p->embedding_as_layer && p->loss_as_layer);
		assert_int_equal(p->first_stage_layers, 0);
		assert_int_equal(128 % p->pp, 0);
		assert_true(p->pp >= 2);
		assert_int_equal(p->vp, 1);
	}
	pp_search_free(s);

	/* A split no pp in the space allows: refused with its field. */
	pp_search_space_init(&space);
	fix(&space.pp, 16);
	space.base.first_stage_layers = 6;
	space.base.last_stage_layers = 7;
	inputs("llama3.1-405b", "dgx-h100");
	pp_job job;
	job_of(&job, 1024, 8192);
	pp_search_options o;
	pp_search_options_init(&o);
	pp_search *srch = NULL;
	pp_error err;
	assert_int_equal(pp_search_new(&model, &sys, &job, 1024, &space, &o, &srch, &err),
	                 PP_EINPUT);
	assert_string_equal(err.field, "plan.first_stage_layers");
}

static bool same_plan(const pp_plan *a, const pp_plan *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->dp == b->dp && a->cp == b->cp &&
	       a->ep == b->ep && a->vp == b->vp && a->mbs == b->mbs && a->zero == b->zero &&
	       a->recompute == b->recompute && a->sp == b->sp && a->schedule == b->schedule &&
	       a->first_stage_layers == b->first_stage_layers &&
	       a->last_stage_layers == b->last_stage_layers && strcmp(a->order, b->order) == 0;
}

/* Pruning stays exact with uneven splits in the space (bloom-176b: 70
 * layers; pp 3, 4, 6, 8, 12, 16 do not divide them). */
static void test_search_uneven_pruned_equals_exhaustive(void **state)
{
	(void)state;
	pp_search_space space;
	pp_search_space_init(&space);
	fix(&space.tp, 8);
	space.pp.count = 5;
	const int pps[] = {3, 4, 5, 6, 8};
	memcpy(space.pp.values, pps, sizeof pps);
	pp_search *fast = search("bloom-176b", "dgx-a100-80g", 192, 192, 2048, &space, false, 2);
	pp_search *full = search("bloom-176b", "dgx-a100-80g", 192, 192, 2048, &space, true, 1);
	pp_search_stats a, b;
	pp_search_get_stats(fast, &a);
	pp_search_get_stats(full, &b);
	assert_true(a.space == b.space);
	assert_int_equal(b.pruned, 0);
	assert_int_equal(a.evaluated + a.pruned, b.evaluated);
	assert_int_equal(pp_search_count(fast), pp_search_count(full));
	bool uneven = false;
	for (size_t i = 0; i < pp_search_count(fast); i++) {
		const pp_plan *x = &pp_search_plan(fast, i)->plan,
		              *y = &pp_search_plan(full, i)->plan;
		assert_true(same_plan(x, y));
		uneven |= x->first_stage_layers > 0;
	}
	assert_true(uneven);
	assert_int_equal(pp_search_pareto_count(fast), pp_search_pareto_count(full));
	for (size_t i = 0; i < pp_search_pareto_count(fast); i++)
		assert_true(
		    same_plan(&pp_search_pareto(fast, i)->plan, &pp_search_pareto(full, i)->plan));
	pp_search_free(fast);
	pp_search_free(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_405b),
	    cmocka_unit_test(test_split_deepseek_v3),
	    cmocka_unit_test(test_split_interleaved),
	    cmocka_unit_test(test_embedding_loss_as_layer),
	    cmocka_unit_test(test_memory_follows_split),
	    cmocka_unit_test(test_time_bottleneck_full_stage),
	    cmocka_unit_test(test_peak_only_exact),
	    cmocka_unit_test(test_invalid_splits),
	    cmocka_unit_test(test_chunk_layers),
	    cmocka_unit_test(test_search_picks_uneven),
	    cmocka_unit_test(test_search_fixed_split),
	    cmocka_unit_test(test_search_uneven_pruned_equals_exhaustive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
