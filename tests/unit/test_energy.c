/*
 * Power and energy of a plan (include/paraplan/estimate.h, pp_energy;
 * docs/energy.md): the model on numbers worked by hand, one plan's energy
 * recomputed by hand from its estimate's iteration, the bounds a GPU or
 * system without idle or host power gives, and the refusals of the inputs.
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
 * By hand: 64 GPUs of TDP 700 W and idle 70 W, 8 a node with 2800 W of host
 * power, busy 75% of a 10 s iteration, PUE 1.2, a budget of one day (86400
 * s) at 400 gCO2e/kWh and 0.10 USD/kWh:
 *   GPU      70 + (700 - 70) x 0.75 = 542.5 W
 *   IT       64 x 542.5 + 8 x 2800 = 34720 + 22400 = 57120 W
 *   facility 57120 x 1.2 = 68544 W; 685440 J per iteration
 *   budget   68544 W x 86400 s = 5.9222016e9 J = 1.645056 MWh
 *   CO2e     1645.056 kWh x 400 g = 658.0224 kg; power 1645.056 x 0.10 = 164.5056 USD
 */
static void test_hand_worked(void **state)
{
	(void)state;
	pp_system s;
	memset(&s, 0, sizeof s);
	s.gpu.tdp_w = 700;
	s.gpu.idle_w = 70;
	s.gpus_per_node = 8;
	s.host_w = 2800;
	pp_energy_inputs in = {.pue = 1.2, .gco2_per_kwh = 400, .usd_per_kwh = 0.10};
	pp_energy e;
	pp_energy_compute(&s, &in, 64, 10, 0.75, 86400, &e);
	NEAR(e.gpu_w, 542.5, 1e-12);
	assert_int_equal(e.nodes, 8);
	NEAR(e.it_w, 57120, 1e-12);
	NEAR(e.facility_w, 68544, 1e-12);
	NEAR(e.iteration_j, 685440, 1e-12);
	NEAR(e.train_mwh, 1.645056, 1e-12);
	NEAR(e.co2e_kg, 658.0224, 1e-12);
	NEAR(e.power_usd, 164.5056, 1e-12);
	assert_false(e.tdp_only);
	assert_false(e.no_host);
	/* A partial node counts whole: 65 GPUs on 9 nodes. */
	pp_energy_compute(&s, &in, 65, 10, 0.75, 0, &e);
	assert_int_equal(e.nodes, 9);
	assert_true(e.train_mwh == 0 && e.co2e_kg == 0 && e.power_usd == 0);
	/* The curve's ends: all idle, all busy; out-of-range fractions clamp. */
	pp_energy_compute(&s, &in, 8, 1, 0, 0, &e);
	NEAR(e.gpu_w, 70, 1e-12);
	pp_energy_compute(&s, &in, 8, 1, 1.5, 0, &e);
	NEAR(e.gpu_w, 700, 1e-12);
	/* No PUE: facility = IT, said so by pue 0. */
	pp_energy_inputs none = {0};
	pp_energy_compute(&s, &none, 64, 10, 0.75, 0, &e);
	NEAR(e.facility_w, 57120, 1e-12);
	assert_true(e.pue == 0);
}

/* The GPU without idle_w draws its TDP throughout (upper bound); the system
 * without host_w counts the GPUs alone (lower bound). */
static void test_bounds(void **state)
{
	(void)state;
	pp_system s;
	memset(&s, 0, sizeof s);
	s.gpu.tdp_w = 400;
	s.gpus_per_node = 8;
	pp_energy_inputs in = {.pue = 1.1};
	pp_energy e;
	pp_energy_compute(&s, &in, 16, 2, 0.3, 0, &e);
	assert_true(e.tdp_only && e.no_host);
	NEAR(e.gpu_w, 400, 1e-12);
	NEAR(e.facility_w, 16 * 400 * 1.1, 1e-12);
}

/*
 * One plan's energy by hand from its estimate: Llama-3-8B on 64 H100 of
 * dgx-h100, tp 8, pp 1 (one stage, so the busy fraction is the
 * iteration's compute over its length), PUE 1.3, 1T tokens at 350 g/kWh and
 * 0.08 USD/kWh.  The GPU file's and the system's numbers are the data's
 * (700 W TDP, 70 W idle, 2800 W host per node).  Energy per iteration is
 * summed another way: idle power over the whole iteration plus the extra
 * (TDP - idle) over the compute, per GPU, and the nodes' host power.
 */
static void test_estimate_by_hand(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_error err;
	assert_int_equal(pp_model_preset("llama3-8b", &m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	NEAR(s.gpu.tdp_w, 700, 0);
	NEAR(s.gpu.idle_w, 70, 0);
	NEAR(s.host_w, 2800, 0);
	pp_job job;
	pp_job_init(&job);
	job.global_batch = 512;
	job.seq_len = 8192;
	job.train_tokens = 1e12;
	job.energy = (pp_energy_inputs){.pue = 1.3, .gco2_per_kwh = 350, .usd_per_kwh = 0.08};
	pp_plan plan;
	pp_plan_init(&plan);
	plan.tp = 8;
	plan.sp = true;
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	if (pp_estimate_run(&m, &s, &job, &plan, 64, e, &err))
		fail_msg("%s: %s", err.field, err.text);
	double it = e->time.iteration_s, comp = e->time.compute_s;
	assert_true(comp > 0 && comp < it);
	double busy = comp / it;
	NEAR(e->energy.busy_fraction, busy, 1e-12);
	double joules = 1.3 * (64 * (70 * it + (700 - 70) * comp) + 8 * 2800 * it);
	NEAR(e->energy.iteration_j, joules, 1e-12);
	NEAR(e->energy.facility_w, joules / it, 1e-12);
	double train_s = 1e12 / e->tokens_per_s;
	NEAR(train_s / 86400, e->train_days, 1e-12);
	double mwh = joules / it * train_s / 3.6e9;
	NEAR(e->energy.train_mwh, mwh, 1e-12);
	NEAR(e->energy.co2e_kg, mwh * 1000 * 350 / 1000, 1e-12);
	NEAR(e->energy.power_usd, mwh * 1000 * 0.08, 1e-12);
	/* The job's energy inputs move no other number. */
	pp_estimate *f = malloc(sizeof *f);
	assert_non_null(f);
	job.energy = (pp_energy_inputs){0};
	if (pp_estimate_run(&m, &s, &job, &plan, 64, f, &err))
		fail_msg("%s: %s", err.field, err.text);
	assert_true(f->time.iteration_s == it && f->train_days == e->train_days);
	free(e);
	free(f);
}

/* With pipeline stages, each stage is busy in proportion to its compute:
 * the mean is at most the paced stage's compute over the iteration. */
static void test_stages(void **state)
{
	(void)state;
	pp_estimate *e = pp_test_gpt39(4, 4, 64, false);
	double top = e->time.compute_s / e->time.iteration_s;
	assert_true(e->energy.busy_fraction > 0.5 * top);
	assert_true(e->energy.busy_fraction <= top * (1 + 1e-12));
	free(e);
}

/* Refusals: a PUE below 1 or negative (the field's setter), CO2e, price or a
 * cap without a PUE (pp_job_check), a cap of 0. */
static void test_refusals(void **state)
{
	(void)state;
	pp_job job;
	pp_plan plan;
	pp_error err;
	pp_job_init(&job);
	pp_plan_init(&plan);
	job.global_batch = 8;
	job.seq_len = 1024;
	assert_int_equal(pp_field_set(&job, &plan, "pue", "0.9", &err), PP_EINPUT);
	assert_string_equal(err.field, "--pue");
	assert_int_equal(pp_field_set(&job, &plan, "pue", "-1.2", &err), PP_EINPUT);
	assert_int_equal(pp_field_set(&job, &plan, "power-cap-mw", "0", &err), PP_EINPUT);
	assert_true(job.energy.pue == 0 && job.energy.power_cap_w == 0);
	assert_int_equal(pp_field_set(&job, &plan, "power-cap-mw", "1.5", &err), PP_OK);
	NEAR(job.energy.power_cap_w, 1.5e6, 1e-12);
	assert_true(pp_energy_asked(&job.energy));
	assert_int_equal(pp_job_check(&job, &err), PP_EINPUT);
	assert_string_equal(err.field, "job.energy.power_cap_w");
	assert_int_equal(pp_field_set(&job, &plan, "pue", "1", &err), PP_OK);
	assert_int_equal(pp_job_check(&job, &err), PP_OK);
	job.energy.pue = 0.5; /* set by hand: the check refuses it too */
	assert_int_equal(pp_job_check(&job, &err), PP_EINPUT);
	assert_string_equal(err.field, "job.energy.pue");
}

/* A search of `obj` (exhaustive or pruned): Llama-3-8B on 16 H100, PUE 1.2. */
static pp_search *energy_search(pp_search_objective obj, bool exhaustive)
{
	pp_model m;
	pp_system s;
	pp_error err;
	assert_int_equal(pp_model_preset("llama3-8b", &m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	pp_job job;
	pp_job_init(&job);
	job.global_batch = 64;
	job.seq_len = 4096;
	job.energy.pue = 1.2;
	pp_search_space space;
	pp_search_space_init(&space);
	pp_search_options o;
	pp_search_options_init(&o);
	o.top_k = 5;
	o.threads = 2;
	o.objective = obj;
	o.exhaustive = exhaustive;
	pp_search *srch;
	assert_int_equal(pp_search_new(&m, &s, &job, 16, &space, &o, &srch, &err), PP_OK);
	while (!pp_search_done(srch))
		assert_int_equal(pp_search_iterate(srch, &err), PP_OK);
	return srch;
}

/*
 * --objective energy: the kept plans come in order of energy per iteration;
 * the branch and bound (a time floor times the all-idle facility power) keeps
 * the same plans as the exhaustive search; and the order is not time's (at
 * some rank the two objectives keep different plans).
 */
static void test_objective(void **state)
{
	(void)state;
	pp_search *fast = energy_search(PP_SEARCH_ENERGY, false);
	pp_search *full = energy_search(PP_SEARCH_ENERGY, true);
	pp_search *by_time = energy_search(PP_SEARCH_TIME, false);
	size_t n = pp_search_count(fast);
	assert_true(n >= 5);
	assert_int_equal(n, pp_search_count(full));
	for (size_t i = 0; i < n; i++) {
		const pp_estimate *a = pp_search_plan(fast, i), *b = pp_search_plan(full, i);
		assert_true(a->energy.iteration_j == b->energy.iteration_j);
		if (i > 0)
			assert_true(pp_search_plan(fast, i - 1)->energy.iteration_j <=
			            a->energy.iteration_j);
	}
	assert_int_equal(pp_search_count(by_time), n);
	bool differ = false;
	for (size_t i = 0; i < n; i++)
		differ |= pp_search_plan(fast, i)->time.iteration_s !=
		          pp_search_plan(by_time, i)->time.iteration_s;
	assert_true(differ);
	pp_search_free(fast);
	pp_search_free(full);
	pp_search_free(by_time);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_worked),      cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_estimate_by_hand), cmocka_unit_test(test_stages),
	    cmocka_unit_test(test_refusals),         cmocka_unit_test(test_objective),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
