/*
 * The fitter on a user's own measured runs (pp_fit_new_cases, used by
 * `paraplan calibrate --step-times`): step times made by paraplan itself on a
 * GPU with known efficiencies are fitted back to under 2% (from 25%) from the
 * neutral start; the parameters the runs react to are listed; bad input is refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "paraplan/calib.h"
#include "paraplan/kernel.h"
#include "paraplan/params.h"
#include "paraplan/paraplan.h"
#include "pp_test.h"

#define NRUNS 6

typedef struct run {
	pp_model model;
	pp_system system;
	pp_job job;
	pp_plan plan;
	long long gpus;
} run;

/* Llama 3 8B on DGX H100 in six shapes: sequence, micro-batch, TP, GPU count. */
static void make_runs(run *r)
{
	static const int seq[NRUNS] = {4096, 8192, 8192, 4096, 8192, 2048};
	static const int mbs[NRUNS] = {1, 1, 2, 2, 1, 4};
	static const int tp[NRUNS] = {1, 2, 1, 4, 8, 1};
	static const long long gpus[NRUNS] = {8, 8, 16, 32, 64, 8};
	pp_error err;
	for (int i = 0; i < NRUNS; i++) {
		assert_int_equal(pp_model_preset("llama3-8b", &r[i].model, &err), PP_OK);
		assert_int_equal(pp_system_preset("dgx-h100", &r[i].system, &err), PP_OK);
		pp_job_init(&r[i].job);
		r[i].job.seq_len = seq[i];
		r[i].job.global_batch = 256;
		pp_plan_init(&r[i].plan);
		r[i].plan.tp = tp[i];
		r[i].plan.mbs = mbs[i];
		r[i].plan.sp = tp[i] > 1;
		r[i].plan.zero = 1;
		r[i].gpus = gpus[i];
	}
}

static double iteration(const run *r, const pp_system *s)
{
	pp_estimate *e = malloc(sizeof *e);
	pp_error err;
	assert_non_null(e);
	pp_plan plan = r->plan;
	if (pp_estimate_run(&r->model, s, &r->job, &plan, r->gpus, e, &err) != PP_OK)
		fail_msg("%s", err.text);
	double t = e->time.iteration_s;
	free(e);
	return t;
}

static void test_fit_own_runs(void **state)
{
	(void)state;
	run r[NRUNS];
	make_runs(r);
	/* The "measured" times: the same GPU with other efficiencies. */
	pp_system truth = r[0].system;
	truth.gpu.eff.gemm = 0.62;
	truth.gpu.eff.attn = 0.45;
	truth.gpu.eff.memory = 0.72;
	truth.gpu.eff.kernel_s = 6e-6;
	pp_fit_input in[NRUNS];
	char ids[NRUNS][16];
	for (int i = 0; i < NRUNS; i++) {
		snprintf(ids[i], sizeof ids[i], "run %d", i);
		in[i] = (pp_fit_input){&r[i].model, &r[i].system, &r[i].job,
		                       &r[i].plan,  r[i].gpus,    iteration(&r[i], &truth),
		                       ids[i]};
	}
	pp_fit *f;
	pp_error err;
	assert_int_equal(pp_fit_new_cases(in, NRUNS, &f, &err), PP_OK);
	assert_int_equal(pp_fit_records(f), NRUNS);
	double start = pp_fit_mape_start(f);
	do
		pp_fit_iterate(f);
	while (!pp_fit_test(f, 1e-5) && pp_fit_iterations(f) < 40);
	/* 24.7% at the neutral start, 0.50% after 6 sweeps (coordinate
	 * searches, each sweep followed by a pattern move along its own
	 * displacement; coordinate descent alone stalled at 1.4% after 7 in the
	 * valley of these correlated parameters). */
	assert_true(start > 0.2);
	assert_true(pp_fit_mape(f) < 0.006);
	for (size_t k = 0; k < NRUNS; k++)
		assert_true(fabs(pp_fit_error(f, k)) < 0.05);
	const pp_param *used[32];
	size_t nu = pp_fit_used(f, used, 32);
	bool gemm = false;
	for (size_t k = 0; k < nu; k++)
		gemm |= strcmp(used[k]->key, "gemm") == 0;
	assert_true(gemm);
	/* BF16 runs: the FP8 GEMM efficiency says nothing here. */
	for (size_t k = 0; k < nu; k++)
		assert_string_not_equal(used[k]->key, "gemm_fp8");
	/* pp_fit_pinned says the same per index, for the records left in the
	 * objective: with every run excluded, nothing is pinned. */
	size_t np = pp_fit_param_count(f), npinned = 0;
	for (size_t j = 0; j < np; j++)
		npinned += pp_fit_pinned(f, j);
	assert_int_equal(npinned, nu);
	bool all[NRUNS];
	for (int i = 0; i < NRUNS; i++)
		all[i] = true;
	pp_fit_exclude(f, all);
	for (size_t j = 0; j < np; j++)
		assert_false(pp_fit_pinned(f, j));
	pp_fit_exclude(f, NULL);
	npinned = 0;
	for (size_t j = 0; j < np; j++)
		npinned += pp_fit_pinned(f, j);
	assert_int_equal(npinned, nu);
	/* What these BF16 runs leave unpinned is filled: the FP8 GEMM fraction
	 * from the die's BF16 one, the others from the pool (left as they are
	 * without one); the pinned ones are kept.  The reported system carries
	 * the first rule. */
	do
		pp_fit_iterate(f);
	while (!pp_fit_test(f, 1e-5) && pp_fit_iterations(f) < 40);
	double x[64], was[64], pool[64];
	assert_true(np <= 64);
	pp_fit_get_params(f, x);
	memcpy(was, x, sizeof was);
	long g = -1, g8 = -1;
	for (size_t j = 0; j < np; j++)
		pool[j] = 0.123 + 0.01 * (double)j;
	const pp_param *reg[64];
	size_t nreg = 0;
	for (size_t i = 0; i < pp_param_registry_size(); i++)
		if (pp_param_at(i)->fitted)
			reg[nreg++] = pp_param_at(i);
	assert_int_equal(nreg, np);
	for (size_t j = 0; j < np; j++) {
		if (strcmp(reg[j]->key, "gemm") == 0)
			g = (long)j;
		if (strcmp(reg[j]->key, "gemm_fp8") == 0)
			g8 = (long)j;
	}
	assert_true(g >= 0 && g8 >= 0);
	assert_true(pp_fit_pinned(f, (size_t)g) && !pp_fit_pinned(f, (size_t)g8));
	pp_fit_fill_unpinned(f, x, pool);
	for (size_t j = 0; j < np; j++) {
		if (pp_fit_pinned(f, j))
			assert_true(x[j] == was[j]);
		else if ((long)j == g8)
			assert_true(x[j] == was[g]);
		else
			assert_true(x[j] == pool[j]);
	}
	memcpy(x, was, sizeof x);
	pp_fit_fill_unpinned(f, x, NULL);
	for (size_t j = 0; j < np; j++)
		assert_true(x[j] == ((long)j == g8 ? was[g] : was[j]));
	pp_system fitted;
	pp_fit_result_system(f, &fitted);
	assert_true(fitted.gpu.eff.gemm_fp8 == fitted.gpu.eff.gemm);
	assert_true(fitted.gpu.eff.gemm == was[g]);
	pp_fit_free(f);
}

/* The fit's compute model: the measured kernel model scaled to the GPU, the stack's
 * fractions of it fitted back from runs made with known fractions; a stack
 * whose attention kernel is not Hopper-native (llm-foundry: FlashAttention-2)
 * gets its stated fraction of the measured attention ceilings on an H100. */
static void test_kernel_model(void **state)
{
	(void)state;
	run r[NRUNS];
	make_runs(r);
	pp_error err;
	pp_system truth = r[0].system;
	assert_int_equal(pp_kernel_scale(&truth.gpu, 132, &err), PP_OK);
	truth.gpu.kern.stack_fractions = true;
	truth.gpu.eff.gemm = 0.7;
	truth.gpu.eff.attn = 0.6;
	truth.gpu.eff.memory = 0.7;
	truth.gpu.eff.kernel_s = 1e-5;
	pp_fit_input in[NRUNS];
	char ids[NRUNS][16];
	for (int i = 0; i < NRUNS; i++) {
		snprintf(ids[i], sizeof ids[i], "run %d", i);
		in[i] = (pp_fit_input){&r[i].model, &r[i].system, &r[i].job,
		                       &r[i].plan,  r[i].gpus,    iteration(&r[i], &truth),
		                       ids[i]};
	}
	pp_fit *f;
	assert_int_equal(pp_fit_new_cases(in, NRUNS, &f, &err), PP_OK);
	const pp_system *sys;
	pp_fit_case(f, 0, NULL, &sys, NULL, NULL);
	assert_true(sys->gpu.kern.valid && sys->gpu.kern.stack_fractions);
	assert_rel(sys->gpu.kern.attn_fwd_eff, truth.gpu.kern.attn_fwd_eff, 1e-12);
	/* seed 002 Table 7's visible share of overlapped traffic (data/overlap) */
	assert_rel(sys->zero3_visible, 0.3248 + 0.0965, 1e-9);
	/* neutral start: every fraction 0.8 */
	double x[32];
	assert_true(pp_fit_param_count(f) <= 32);
	pp_fit_get_start(f, x);
	for (size_t j = 0, q = 0; j < pp_param_registry_size(); j++) {
		const pp_param *p = pp_param_at(j);
		if (!p->fitted)
			continue;
		if (p->kind == PP_PARAM_GPU && strcmp(p->unit, "fraction") == 0)
			assert_true(x[q] == 0.8);
		q++;
	}
	assert_true(pp_fit_mape_start(f) > 0.05);
	do
		pp_fit_iterate(f);
	while (!pp_fit_test(f, 1e-5) && pp_fit_iterations(f) < 40);
	assert_true(pp_fit_mape(f) < 0.02);
	pp_fit_free(f);

	/* the same runs under llm-foundry: attention at 0.56 of the measured rate */
	for (int i = 0; i < NRUNS; i++)
		assert_int_equal(pp_system_set_framework(&r[i].system, "llm-foundry", &err), PP_OK);
	assert_int_equal(pp_fit_new_cases(in, NRUNS, &f, &err), PP_OK);
	pp_fit_case(f, 0, NULL, &sys, NULL, NULL);
	assert_rel(sys->attn_sm90_fraction, 0.56, 1e-12);
	assert_rel(sys->gpu.kern.attn_stack_fraction, 0.56, 1e-12);
	assert_rel(sys->gpu.kern.attn_fwd_eff, truth.gpu.kern.attn_fwd_eff, 1e-12);
	assert_rel(sys->gpu.kern.gemm_eff, truth.gpu.kern.gemm_eff, 1e-12);
	pp_fit_free(f);
}

/* On a part whose GEMM rate is carried from the H100 (A100: the MAMF ratio),
 * the fit may raise it up to the part's own measured best and no further:
 * runs made at 1.08x the carried rate are fitted back inside the bound, not
 * at it; runs at 1.3x stop at the bound, 1.14, and are flagged there. */
static void test_kernel_model_carried_gemm(void **state)
{
	(void)state;
	const double want[2] = {1.08, 1.3};
	for (int w = 0; w < 2; w++) {
		run r[NRUNS];
		make_runs(r);
		pp_error err;
		for (int i = 0; i < NRUNS; i++)
			assert_int_equal(pp_system_preset("dgx-a100-80g", &r[i].system, &err),
			                 PP_OK);
		pp_system truth = r[0].system;
		assert_int_equal(pp_kernel_scale(&truth.gpu, 108, &err), PP_OK);
		truth.gpu.kern.stack_fractions = true;
		truth.gpu.eff.gemm = want[w];
		truth.gpu.eff.attn = 0.8; /* the others at their neutral start */
		truth.gpu.eff.memory = 0.8;
		truth.gpu.eff.kernel_s = 5e-6;
		pp_fit_input in[NRUNS];
		for (int i = 0; i < NRUNS; i++)
			in[i] = (pp_fit_input){&r[i].model, &r[i].system, &r[i].job,
			                       &r[i].plan,  r[i].gpus,    iteration(&r[i], &truth),
			                       "a100 run"};
		pp_fit *f;
		assert_int_equal(pp_fit_new_cases(in, NRUNS, &f, &err), PP_OK);
		do
			pp_fit_iterate(f);
		while (!pp_fit_test(f, 1e-5) && pp_fit_iterations(f) < 40);
		pp_gpu_eff eff;
		pp_fit_net net;
		pp_fit_result(f, &eff, &net);
		const pp_param *at[16];
		size_t n = pp_fit_at_bounds(f, at, NULL, 16);
		bool gemm_at = false;
		for (size_t k = 0; k < n && k < 16; k++)
			gemm_at |= strcmp(at[k]->key, "gemm") == 0;
		double hi = pp_kernel_gemm_fit_ceiling("a100-80g");
		if (w == 0) {
			assert_rel(eff.gemm, want[w], 0.02);
			assert_false(gemm_at);
			assert_true(pp_fit_mape(f) < 0.02);
		} else {
			assert_rel(eff.gemm, hi, 0.005);
			assert_true(gemm_at);
		}
		pp_fit_free(f);
	}
}

/* A run's flags cut into words: whitespace separates, double quotes group. */
static void test_words(void **state)
{
	(void)state;
	char flags[] = "  --model llama3-8b\t--system \"my system.json\"  --gpus 8 ";
	char *w[8];
	assert_int_equal(pp_step_words(flags, w, 8), 6);
	assert_string_equal(w[0], "--model");
	assert_string_equal(w[3], "my system.json");
	assert_string_equal(w[5], "8");
	char more[] = "a b c";
	assert_int_equal(pp_step_words(more, w, 2), 3); /* more than fit: counted */
	assert_string_equal(w[1], "b");
	char none[] = "   ";
	assert_int_equal(pp_step_words(none, w, 8), 0);
}

static void test_refused(void **state)
{
	(void)state;
	run *r = calloc(NRUNS, sizeof *r);
	assert_non_null(r);
	make_runs(r);
	pp_fit_input in[2] = {
	    {&r[0].model, &r[0].system, &r[0].job, &r[0].plan, r[0].gpus, 1.0, "a"},
	    {&r[1].model, &r[1].system, &r[1].job, &r[1].plan, r[1].gpus, 0.0, "b"}};
	pp_fit *f;
	pp_error err;
	assert_int_equal(pp_fit_new_cases(in, 0, &f, &err), PP_EINPUT);
	assert_int_equal(pp_fit_new_cases(in, 2, &f, &err), PP_EINPUT);
	assert_non_null(strstr(err.text, "positive"));
	assert_null(f);
	pp_system other;
	assert_int_equal(pp_system_preset("dgx-a100-80g", &other, &err), PP_OK);
	in[1].iteration_s = 2.0;
	in[1].system = &other;
	assert_int_equal(pp_fit_new_cases(in, 2, &f, &err), PP_EINPUT);
	assert_non_null(strstr(err.text, "one fit per GPU"));
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fit_own_runs),
	    cmocka_unit_test(test_kernel_model),
	    cmocka_unit_test(test_kernel_model_carried_gemm),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
