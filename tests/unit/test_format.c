/*
 * The output formats' type table (include/paraplan/format.h): every format of
 * the registry is found by its name and aliases, names are unique, the text
 * format renders every result kind, a kind a format has no renderer for is
 * refused (PP_REPORT_EUNSUPPORTED) with nothing written, the rankfile of a
 * mapping, and an estimate through the text and json formats is the bytes of
 * pp_report_text and pp_report_json.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"

/* What `fn` writes, as a malloc'ed string (the caller frees). */
static char *rendered(const pp_format_type *f, const pp_result *r, int *rc)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);
	assert_non_null(out);
	*rc = pp_format_render(f, r, out);
	fclose(out);
	return buf;
}

static void test_registry(void **state)
{
	(void)state;
	size_t n = pp_format_count();
	assert_true(n >= 5);
	for (size_t i = 0; i < n; i++) {
		const pp_format_type *f = pp_format_at(i);
		assert_non_null(f);
		assert_true(f->name[0] && f->summary[0]);
		assert_ptr_equal(pp_format_find(f->name), f);
		for (const char *const *a = f->aliases; a && *a; a++)
			assert_ptr_equal(pp_format_find(*a), f);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(pp_format_at(j)->name, f->name);
		bool any = false;
		for (int k = 0; k < PP_RESULT_KINDS; k++)
			any = any || pp_format_supports(f, (pp_result_kind)k);
		assert_true(any); /* a format that renders nothing is a mistake */
	}
	assert_null(pp_format_at(n));
	assert_null(pp_format_find("xml"));
	assert_null(pp_format_find(NULL));
	assert_null(pp_format_find("JSON")); /* exact names */
	assert_ptr_equal(pp_format_find("markdown"), pp_format_find("md"));
	const pp_format_type *text = pp_format_find("text");
	for (int k = 0; k < PP_RESULT_KINDS; k++) {
		assert_true(pp_format_supports(text, (pp_result_kind)k));
		assert_string_not_equal(pp_result_kind_name((pp_result_kind)k), "?");
	}
	assert_false(pp_format_supports(text, PP_RESULT_KINDS));
	char names[128];
	assert_string_equal(pp_format_names_for(PP_RESULT_PLACE, names, sizeof names),
	                    "text, rankfile");
}

static void test_unsupported(void **state)
{
	(void)state;
	pp_result r = {.kind = PP_RESULT_PLACE};
	int rc;
	char *s = rendered(pp_format_find("json"), &r, &rc);
	assert_int_equal(rc, PP_REPORT_EUNSUPPORTED);
	assert_string_equal(s, "");
	free(s);
	/* html without its charts inputs */
	r.kind = PP_RESULT_ESTIMATE;
	s = rendered(pp_format_find("html"), &r, &rc);
	assert_int_equal(rc, PP_REPORT_EUNSUPPORTED);
	free(s);
	assert_int_equal(pp_format_render(NULL, &r, stdout), PP_REPORT_EUNSUPPORTED);
}

static void test_rankfile(void **state)
{
	(void)state;
	pp_pipette_model m = {.pp = 2, .tp = 1, .dp = 2, .gpus_per_node = 2};
	const long long f[] = {3, 2, 1, 0};
	pp_place_report pr = {.m = &m, .f = f};
	pp_result r = {.kind = PP_RESULT_PLACE, .place = &pr};
	int rc;
	char *s = rendered(pp_format_find("rankfile"), &r, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s, "rank 0=node1 slot=1\nrank 1=node1 slot=0\n"
	                       "rank 2=node0 slot=1\nrank 3=node0 slot=0\n");
	free(s);
}

static void test_estimate(void **state)
{
	(void)state;
	pp_model m;
	pp_system sys;
	pp_job job;
	pp_plan plan;
	pp_error err;
	assert_int_equal(pp_model_resolve("llama3-8b", &m, &err), PP_OK);
	assert_int_equal(pp_system_resolve("dgx-h100", &sys, &err), PP_OK);
	pp_job_init(&job);
	job.global_batch = 64;
	job.seq_len = 4096;
	pp_plan_init(&plan);
	plan.tp = 2;
	plan.pp = 2;
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	assert_int_equal(pp_estimate_run(&m, &sys, &job, &plan, 16, e, &err), PP_OK);
	pp_result r = {.kind = PP_RESULT_ESTIMATE, .estimate = e};
	for (int json = 0; json < 2; json++) {
		char *want = NULL;
		size_t n = 0;
		FILE *out = open_memstream(&want, &n);
		assert_int_equal(json ? pp_report_json(e, out) : pp_report_text(e, out), 0);
		fclose(out);
		int rc;
		char *got = rendered(pp_format_find(json ? "json" : "text"), &r, &rc);
		assert_int_equal(rc, 0);
		assert_string_equal(got, want);
		free(got);
		free(want);
	}
	int rc;
	char *md = rendered(pp_format_find("md"), &r, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(md, "### paraplan estimate: llama3-8b on 16 x "));
	assert_non_null(strstr(md, "| quantity | value |\n|---|---:|\n"));
	free(md);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_registry),
	    cmocka_unit_test(test_unsupported),
	    cmocka_unit_test(test_rankfile),
	    cmocka_unit_test(test_estimate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
