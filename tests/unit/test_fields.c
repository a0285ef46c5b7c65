/*
 * The job's and plan's fields by name (include/paraplan/fields.h): each name
 * reaches the member it says (checked against members written out by hand),
 * names are unique, and pp_field_set refuses bad form and range with the
 * command line's message, leaving the member as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"

static void set_ok(pp_job *job, pp_plan *plan, const char *name, const char *text)
{
	pp_error err;
	pp_error_clear(&err);
	if (pp_field_set(job, plan, name, text, &err) != PP_OK)
		fail_msg("--%s %s: %s", name, text, err.text);
}

static void test_members(void **state)
{
	(void)state;
	pp_job job;
	pp_plan plan;
	pp_job_init(&job);
	pp_plan_init(&plan);
	set_ok(&job, &plan, "gbs", "123");
	set_ok(&job, &plan, "seq", "8192");
	set_ok(&job, &plan, "tokens", "15T");
	set_ok(&job, &plan, "precision", "fp8");
	set_ok(&job, &plan, "fp8-recipe", "mxfp8");
	set_ok(&job, &plan, "grad-dtype", "fp32");
	set_ok(&job, &plan, "optimizer", "sgd");
	set_ok(&job, &plan, "tp", "8");
	set_ok(&job, &plan, "pp", "4");
	set_ok(&job, &plan, "dp", "5000000");
	set_ok(&job, &plan, "first-stage-layers", "3");
	set_ok(&job, &plan, "zero", "3");
	set_ok(&job, &plan, "sp", "on");
	set_ok(&job, &plan, "flash", "false");
	set_ok(&job, &plan, "ep-overlap", "1");
	set_ok(&job, &plan, "order", "tp-dp-pp");
	assert_int_equal(job.global_batch, 123);
	assert_int_equal(job.seq_len, 8192);
	assert_true(job.train_tokens == 15e12);
	assert_int_equal(job.precision, PP_PREC_FP8);
	assert_int_equal(job.fp8_recipe, PP_FP8_MX);
	assert_int_equal(job.grad_bytes, 4);
	assert_int_equal(job.optimizer, PP_OPT_SGD);
	assert_int_equal(plan.tp, 8);
	assert_int_equal(plan.pp, 4);
	assert_int_equal(plan.dp, 5000000);
	assert_int_equal(plan.first_stage_layers, 3);
	assert_int_equal(plan.zero, 3);
	assert_true(plan.sp);
	assert_false(plan.flash);
	assert_true(plan.ep_overlap);
	assert_string_equal(plan.order, "tp-dp-pp");
	set_ok(&job, &plan, "si", "on");
	assert_int_equal(plan.schedule, PP_SCHED_WSHAPE);
	set_ok(&job, &plan, "si", "off");
	assert_int_equal(plan.schedule, PP_SCHED_1F1B);
}

static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *name, *text, *want;
	} bad[] = {
	    {"tp", "x", "--tp: expected an integer, got 'x'"},
	    {"tp", "0", "--tp: expected 1..1048576, got 0"},
	    {"zero", "4", "--zero: expected 0..3, got 4"},
	    {"gbs", "1e3", "--gbs: expected an integer, got '1e3'"},
	    {"sp", "yes", "--sp: expected on or off, got 'yes'"},
	    {"tokens", "-1",
	     "--tokens: expected a non-negative count such as 15T or 1.5e13, got '-1'"},
	    {"grad-dtype", "fp8", "--grad-dtype: expected fp32, bf16 or fp16, got 'fp8'"},
	    {"optimizer", "lion", "--optimizer: expected adam or sgd, got 'lion'"},
	    {"order", "tp-cp-ep-dp-pp-tp-cp-ep-dp-pp-tp-cp",
	     "--order: too long: "
	     "'tp-cp-ep-dp-pp-tp-cp-ep-dp-pp-tp-cp'"},
	    {"nope", "1", "--nope: not a field of the job or plan"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pp_job job;
		pp_plan plan;
		pp_job_init(&job);
		pp_plan_init(&plan);
		pp_plan before = plan;
		pp_error err;
		pp_error_clear(&err);
		assert_int_equal(pp_field_set(&job, &plan, bad[i].name, bad[i].text, &err),
		                 PP_EINPUT);
		char line[512];
		assert_string_equal(pp_error_format(&err, line, sizeof line), bad[i].want);
		assert_memory_equal(&plan, &before, sizeof plan);
	}
}

static void test_unique(void **state)
{
	(void)state;
	size_t n = 0;
	for (const pp_field *f; (f = pp_field_at(n)); n++) {
		assert_ptr_equal(pp_field_find(f->name), f);
		assert_true(f->width <= PP_ORDER_MAX);
		assert_true(f->kind != PP_FIELD_WORD || f->parse);
	}
	assert_true(n > 20);
}

/* Library errors name members ("plan.tp"); the command line says "--tp". */
static void test_error_as_flags(void **state)
{
	(void)state;
	assert_string_equal(pp_field_flag_name("plan.tp"), "tp");
	assert_string_equal(pp_field_flag_name("goodput.restart_s"), "restart-min");
	assert_null(pp_field_flag_name("system.gpu.hbm_bytes"));
	pp_error err = {.source = "llama-7b", .field = "plan.tp", .text = "x"};
	pp_field_error_as_flags(&err, "llama-7b");
	assert_string_equal(err.source, "");
	assert_string_equal(err.field, "--tp");
	pp_error file = {.source = "sys.json", .field = "gpu.name", .text = "x"};
	pp_field_error_as_flags(&file, "llama-7b");
	assert_string_equal(file.source, "sys.json");
	assert_string_equal(file.field, "gpu.name");
}

/* --overlap (DHelix's profile) applies to the wshape schedule only. */
static void test_overlap_check(void **state)
{
	(void)state;
	pp_plan plan;
	pp_plan_init(&plan);
	pp_error err;
	assert_int_equal(pp_plan_overlap_check(&plan, false, "estimate", &err), PP_OK);
	assert_int_equal(pp_plan_overlap_check(&plan, true, "estimate", &err), PP_EINPUT);
	assert_string_equal(err.field, "estimate");
	assert_non_null(strstr(err.text, "the plan's schedule is 1f1b"));
	plan.schedule = PP_SCHED_WSHAPE;
	assert_int_equal(pp_plan_overlap_check(&plan, true, "estimate", &err), PP_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_members), cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_unique), cmocka_unit_test(test_error_as_flags),
	    cmocka_unit_test(test_overlap_check)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
