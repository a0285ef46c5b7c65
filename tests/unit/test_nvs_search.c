/*
 * search over split rank orders (docs/placement.md): --order nvs adds seed
 * 003's factorisations of the NVLink domain, a hand-written split order is
 * kept only where its radices divide a candidate's degrees, and a split
 * winner's time is the one estimate gives for the same plan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "paraplan/search_parse.h"

/* GPT3-175B on 1,024 dgx-h100, ZeRO-3, tp 4 (case ok_search_order_nvs). */
static pp_search *run(const char *orders, pp_model *m, pp_system *s, pp_job *job)
{
	pp_error err;
	assert_int_equal(pp_model_preset("gpt3-175b", m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", s, &err), PP_OK);
	pp_job_init(job);
	job->global_batch = 1536;
	job->seq_len = 2048;
	pp_search_space space;
	pp_search_space_init(&space);
	assert_int_equal(pp_search_space_set(&space, "tp", "--tp", "4", NULL, &err), PP_OK);
	assert_int_equal(pp_search_space_set(&space, "zero", "--zero", "3", NULL, &err), PP_OK);
	if (orders)
		assert_int_equal(pp_search_orders_parse(orders, &space, &err), PP_OK);
	pp_search_options o;
	pp_search_options_init(&o);
	o.top_k = 1;
	o.threads = 2;
	pp_search *srch;
	assert_int_equal(pp_search_new(m, s, job, 1024, &space, &o, &srch, &err), PP_OK);
	while (!pp_search_done(srch))
		assert_int_equal(pp_search_iterate(srch, &err), PP_OK);
	assert_int_equal(pp_search_count(srch), 1);
	return srch;
}

static void test_orders_parse_nvs(void **state)
{
	(void)state;
	pp_search_space sp;
	pp_error err;
	pp_search_space_init(&sp);
	assert_int_equal(pp_search_orders_parse("nvs", &sp, &err), PP_OK);
	assert_true(sp.nvs_split);
	assert_int_equal(sp.norders, 0); /* the default orders, plus the factorisations */
	assert_int_equal(pp_search_orders_parse("tp-cp-ep-dp-pp,nvs", &sp, &err), PP_OK);
	assert_true(sp.nvs_split);
	assert_int_equal(sp.norders, 1);
	assert_int_equal(pp_search_orders_parse("tp-cp-ep-dp-pp", &sp, &err), PP_OK);
	assert_false(sp.nvs_split);
}

/* nvs finds a split no plain order expresses (tp 2 of 4 and dp 4 of 256 in
 * a domain), faster than the search without it, and the time is estimate's. */
static void test_nvs_finds_split(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job job;
	pp_search *plain = run(NULL, &m, &s, &job);
	double t_plain = pp_search_plan(plain, 0)->time.iteration_s;
	assert_null(strchr(pp_search_plan(plain, 0)->plan.order, ':'));
	pp_search_free(plain);

	pp_search *nvs = run("nvs", &m, &s, &job);
	const pp_estimate *best = pp_search_plan(nvs, 0);
	print_message("plain %.3f s, nvs %.3f s (%s)\n", t_plain, best->time.iteration_s,
	              best->plan.order);
	assert_string_equal(best->plan.order, "tp:2-dp:4-tp-cp-dp-pp");
	assert_true(best->time.iteration_s < t_plain);
	static pp_estimate again;
	pp_error err;
	pp_plan plan = best->plan;
	assert_int_equal(pp_estimate_run(&m, &s, &job, &plan, 1024, &again, &err), PP_OK);
	assert_true(again.time.iteration_s == best->time.iteration_s);
	pp_search_free(nvs);
}

/* A split order whose radix divides no candidate's degree is skipped, not
 * an error: the search answers with the plain order. */
static void test_split_order_skipped(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job job;
	pp_search *srch = run("tp-dp:3-cp-dp-pp,tp-cp-ep-dp-pp", &m, &s, &job);
	assert_string_equal(pp_search_plan(srch, 0)->plan.order, "tp-cp-ep-dp-pp");
	pp_search_free(srch);
	/* ... and one that fits is searched */
	srch = run("tp-dp:4-cp-dp-pp", &m, &s, &job);
	assert_string_equal(pp_search_plan(srch, 0)->plan.order, "tp-dp:4-cp-dp-pp");
	pp_search_free(srch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_orders_parse_nvs),
	    cmocka_unit_test(test_nvs_finds_split),
	    cmocka_unit_test(test_split_order_skipped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
