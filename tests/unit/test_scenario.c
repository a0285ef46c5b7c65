/*
 * The resolved scenario: derived once, read by memory and cost with the same
 * results as the functions that take the raw inputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

static void inputs(const char *model, pp_model *m, pp_system *s, pp_job *j, pp_plan *p)
{
	assert_int_equal(pp_model_preset(model, m, NULL), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", s, NULL), PP_OK);
	pp_job_init(j);
	j->global_batch = 512;
	j->seq_len = 8192;
	pp_plan_init(p);
}

/* What the scenario derives: the resolved plan, shape, placement, split. */
static void test_derived(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	inputs("llama3.1-405b", &m, &s, &j, &p);
	p.tp = 8;
	p.pp = 16;
	p.cp = 2;
	p.sp = true;
	p.first_stage_layers = 7;
	p.last_stage_layers = 7;
	pp_scenario *sc;
	pp_error err;
	assert_int_equal(pp_scenario_new(&m, &s, &j, &p, 2048, &sc, &err), PP_OK);
	const pp_plan *r = pp_scenario_plan(sc);
	assert_int_equal(r->dp, 2048 / (8 * 16 * 2));
	assert_int_equal(r->etp, 8);
	assert_int_equal(r->microbatches, 512 / r->dp);
	assert_rel(pp_scenario_microbatch_tokens(sc), 8192 / 2.0, 1e-15);
	assert_int_equal(pp_scenario_stage_layers(sc, 0), 7);
	assert_int_equal(pp_scenario_stage_layers(sc, 1), 8);
	assert_int_equal(pp_scenario_stage_layers(sc, 15), 7);
	int total = 0;
	for (int i = 0; i < 16; i++)
		total += pp_scenario_stage_layers(sc, i);
	assert_int_equal(total, 126);
	const pp_placement *pl = pp_scenario_placement(sc);
	assert_int_equal(pl->group[PP_GROUP_TP].per_domain, 8);
	assert_int_equal(pl->ranks, 2048);
	/* The inputs are the scenario's own copies. */
	m.num_layers = 1;
	assert_int_equal(pp_scenario_model(sc)->num_layers, 126);
	pp_scenario_free(sc);
}

/* Memory and cost read from a scenario equal those of the raw inputs. */
static void test_same_as_raw(void **state)
{
	(void)state;
	const char *models[] = {"llama3-70b", "mixtral-8x7b", "deepseek-v3"};
	for (size_t k = 0; k < 3; k++) {
		pp_model m;
		pp_system s;
		pp_job j;
		pp_plan p;
		inputs(models[k], &m, &s, &j, &p);
		p.tp = 8;
		p.pp = 4;
		p.sp = true;
		p.zero = 1;
		p.recompute = PP_RECOMPUTE_FULL;
		long long gpus = 256;
		if (m.moe.num_experts) {
			p.ep = 8;
			p.etp = 1;
		}
		if (m.num_layers % 4) {
			p.first_stage_layers = m.num_layers - 3 * ((m.num_layers + 3) / 4);
			if (p.first_stage_layers < 1) {
				p.first_stage_layers = 0;
				p.pp = 1;
			}
		}
		pp_scenario *sc;
		pp_error err;
		if (pp_scenario_new(&m, &s, &j, &p, gpus, &sc, &err))
			fail_msg("%s: %s", models[k], err.text);
		pp_plan r = *pp_scenario_plan(sc);
		static pp_work ws;
		for (int st = 0; st < r.pp; st++) {
			pp_stage_memory a, b;
			assert_int_equal(pp_scenario_memory(sc, st, &a, &err), PP_OK);
			assert_int_equal(pp_memory_stage(&m, &s, &j, &r, st, &b, &err), PP_OK);
			assert_rel(a.total_bytes, b.total_bytes, 1e-15);
			pp_stage_time x, y;
			pp_work_init(&ws);
			assert_int_equal(pp_scenario_cost(sc, st, &ws, &x, &err), PP_OK);
			pp_work_init(&ws);
			assert_int_equal(pp_stage_cost(&m, &s, &j, &r, st, &ws, &y, &err), PP_OK);
			assert_rel(x.fwd_s + x.bwd_s + x.dp_s, y.fwd_s + y.bwd_s + y.dp_s, 1e-15);
		}
		pp_scenario_free(sc);
	}
}

/* A plan that does not resolve is an error, and nothing is left allocated. */
static void test_bad_plan(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	inputs("llama3-70b", &m, &s, &j, &p);
	p.tp = 3;
	pp_scenario *sc = (pp_scenario *)&p;
	pp_error err;
	assert_int_equal(pp_scenario_new(&m, &s, &j, &p, 64, &sc, &err), PP_EINPUT);
	assert_null(sc);
	assert_string_equal(err.field, "plan.tp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_derived),
	    cmocka_unit_test(test_same_as_raw),
	    cmocka_unit_test(test_bad_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
