/*
 * Goodput under failures (include/paraplan/goodput.h): Young's and Daly's
 * checkpoint intervals and Daly's expected goodput on a case worked by hand,
 * and the checkpoint, failure rate and goodput of estimates.
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

#define NEAR(a, b, rel) assert_rel((a), (b), (rel))

/*
 * By hand: a failure every M = 3 h = 10800 s, a checkpoint blocks delta = 60 s,
 * a restart takes R = 10 min = 600 s.
 *   Young: tau = sqrt(2 x 60 x 10800) = sqrt(1 296 000) = 1138.42 s
 *   Daly:  delta / 2M = 60 / 21600 = 0.0027778, sqrt = 0.052705
 *          tau = 1138.42 x (1 + 0.052705 / 3 + 0.0027778 / 9) - 60
 *              = 1138.42 x 1.017877 - 60 = 1098.77 s
 *   goodput = tau / (M e^{R/M} (e^{(tau + delta)/M} - 1))
 *           = 1098.77 / (10800 x e^0.055556 x (e^0.107294 - 1))
 *           = 1098.77 / (10800 x 1.057128 x 0.113262) = 1098.77 / 1293.12 = 0.8497
 *   first order, 1 - delta/tau - (tau/2 + R)/M = 1 - 0.0546 - 0.1064 = 0.839:
 *   Daly's complete model is within 1.1 points of it.
 */
static void test_hand_worked(void **state)
{
	(void)state;
	double m = 10800, delta = 60, r = 600;
	NEAR(pp_young_interval(delta, m), 1138.42, 1e-5);
	double tau = pp_daly_interval(delta, m);
	NEAR(tau, 1098.77, 1e-5);
	NEAR(pp_daly_goodput(tau, delta, r, m), 0.8497, 1e-4);
	/* The interval is the optimum: a step either way loses goodput. */
	double g = pp_daly_goodput(tau, delta, r, m);
	assert_true(pp_daly_goodput(tau * 0.8, delta, r, m) < g);
	assert_true(pp_daly_goodput(tau * 1.25, delta, r, m) < g);
	double first = 1 - delta / tau - (tau / 2 + r) / m;
	assert_true(fabs(g - first) < 0.011);
	/* delta >= 2M: checkpoint once per MTBF (Daly). */
	assert_true(pp_daly_interval(30000, 10000) == 10000);
	/* No failures to speak of: goodput -> tau / (tau + delta). */
	NEAR(pp_daly_goodput(1000, 10, 0, 1e12), 1000.0 / 1010.0, 1e-6);
}

/* The defaults and their sources: Llama 3's 419 interruptions in 54 days on 16,384 GPUs. */
static void test_defaults(void **state)
{
	(void)state;
	pp_goodput_params p;
	pp_goodput_params_init(&p);
	NEAR(p.mtbf_gpu_hours, 54.0 * 24 * 16384 / 419, 1e-12);
	NEAR(p.mtbf_gpu_hours / 16384, 3.093, 1e-3); /* an interruption every ~3 hours */
	NEAR(p.ckpt_write_bytes_per_s, 2e12, 0);
	NEAR(p.restart_s, 600, 0);
	assert_false(p.async);
}

static void estimate(const char *model, long long gpus, int tp, int pp, int zero, double tokens,
                     pp_estimate *e)
{
	pp_model m;
	pp_system s;
	pp_error err;
	assert_int_equal(pp_model_preset(model, &m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	pp_job job;
	pp_job_init(&job);
	job.global_batch = 256;
	job.seq_len = 4096;
	job.train_tokens = tokens;
	pp_plan plan;
	pp_plan_init(&plan);
	plan.tp = tp;
	plan.pp = pp;
	plan.zero = zero;
	plan.recompute = PP_RECOMPUTE_FULL;
	pp_status st = pp_estimate_run(&m, &s, &job, &plan, gpus, e, &err);
	if (st)
		fail_msg("%s: %s", err.field, err.text);
}

static void test_estimate(void **state)
{
	(void)state;
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	estimate("llama3-8b", 64, 2, 2, 1, 1e12, e);
	pp_goodput_params p;
	pp_goodput_params_init(&p);
	pp_error err;
	assert_int_equal(pp_estimate_goodput(e, &p, &err), PP_OK);
	const pp_goodput *g = &e->goodput;
	assert_true(e->has_goodput);
	/* bf16 weights + fp32 master and two Adam moments: 14 bytes a parameter. */
	NEAR(g->ckpt_total_bytes, 14 * e->params.total, 1e-12);
	/* 64 GPUs share it; the largest shard is within 10% of an even share. */
	assert_true(g->ckpt_rank_bytes >= g->ckpt_total_bytes / 64 * 0.99);
	assert_true(g->ckpt_rank_bytes <= g->ckpt_total_bytes / 64 * 1.10);
	NEAR(g->write_s, g->ckpt_total_bytes / 2e12, 1e-12);
	NEAR(g->blocking_s, g->write_s, 0);
	NEAR(g->job_mtbf_s, p.mtbf_gpu_hours * 3600 / 64, 1e-12);
	NEAR(g->interval_s, pp_daly_interval(g->blocking_s, g->job_mtbf_s), 1e-12);
	NEAR(g->goodput, pp_daly_goodput(g->interval_s, g->blocking_s, 600, g->job_mtbf_s), 1e-12);
	NEAR(g->effective_days, e->train_days / g->goodput, 1e-12);
	NEAR(g->cost_usd, e->cost_usd / g->goodput, 1e-12);
	NEAR(g->interval_iterations, g->interval_s / e->time.iteration_s, 1e-12);
	double sync = g->goodput;

	/* Slow storage: async checkpoints block for the host copy only, and win. */
	p.ckpt_write_bytes_per_s = 1e9;
	assert_int_equal(pp_estimate_goodput(e, &p, &err), PP_OK);
	double slow_sync = e->goodput.goodput;
	assert_true(slow_sync < sync);
	p.async = true;
	assert_int_equal(pp_estimate_goodput(e, &p, &err), PP_OK);
	NEAR(e->goodput.blocking_s, e->goodput.ckpt_rank_bytes / 64e9, 1e-12);
	assert_true(e->goodput.goodput > slow_sync);

	/* Twice the GPUs at the same MTBF per GPU: twice the interruptions a day. */
	double per_day = g->interruptions_per_day;
	estimate("llama3-8b", 128, 2, 2, 1, 1e12, e);
	pp_goodput_params_init(&p);
	assert_int_equal(pp_estimate_goodput(e, &p, &err), PP_OK);
	NEAR(e->goodput.interruptions_per_day, 2 * per_day, 1e-12);

	/* Bad parameters are refused with the field named. */
	p.mtbf_gpu_hours = 0;
	assert_int_equal(pp_estimate_goodput(e, &p, &err), PP_EINPUT);
	assert_string_equal(err.field, "goodput.mtbf_gpu_hours");
	free(e);
}

/* Inputs under which the run never finishes are refused, the goodput left
 * unset: never goodput 0 with 0 days and 0 USD. */
static void test_never_finishes(void **state)
{
	(void)state;
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	estimate("llama3-8b", 64, 2, 2, 1, 1e12, e);
	struct {
		double mtbf_gpu_hours, write_bytes_per_s, restart_s;
		const char *field;
	} bad[] = {
	    {1e-300, 2e12, 600, "goodput"},  /* a failure every 1e-298 s */
	    {1e-3, 2e12, 600, "goodput"},    /* 0.06 s between failures, 600 s restart */
	    {50677, 1e-300, 600, "goodput"}, /* a checkpoint that never ends */
	    {50677, 2e12, 1e300, "goodput"}, /* a restart that never ends */
	    {1e308, 2e12, 600, "goodput.mtbf_gpu_hours"}, /* the job's MTBF overflows */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pp_goodput_params p;
		pp_goodput_params_init(&p);
		p.mtbf_gpu_hours = bad[i].mtbf_gpu_hours;
		p.ckpt_write_bytes_per_s = bad[i].write_bytes_per_s;
		p.restart_s = bad[i].restart_s;
		pp_error err;
		e->has_goodput = false;
		assert_int_equal(pp_estimate_goodput(e, &p, &err), PP_EINPUT);
		assert_string_equal(err.field, bad[i].field);
		assert_false(e->has_goodput);
		assert_true(e->goodput.goodput == 0 && e->goodput.effective_days == 0);
	}
	/* The least goodput reported: a failure every few seconds still finishes. */
	pp_goodput_params p;
	pp_goodput_params_init(&p);
	p.mtbf_gpu_hours = 64 * 60.0 / 3600; /* a failure a minute on 64 GPUs */
	p.restart_s = 1;
	pp_error err;
	assert_int_equal(pp_estimate_goodput(e, &p, &err), PP_OK);
	assert_true(e->goodput.goodput >= PP_GOODPUT_MIN && isfinite(e->goodput.effective_days));
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_worked),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_estimate),
	    cmocka_unit_test(test_never_finishes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
