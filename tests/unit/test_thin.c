/*
 * The library entry points the command line is a thin layer over: the inputs
 * bundle (pp_inputs_resolve), the step-times reader (pp_steps_parse), the
 * skip counts (pp_skips), a search space from text (pp_search_space_set,
 * pp_search_space_check) and output files written whole (pp_output_*).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "paraplan/calib.h"

static void test_inputs(void **state)
{
	(void)state;
	pp_input_refs refs = {"llama3-8b", "dgx-h100", NULL, NULL, NULL, NULL, 3.5};
	pp_inputs in;
	pp_error err;
	pp_inputs_part part;
	pp_job_init(&in.job);
	pp_plan_init(&in.plan);
	in.job.global_batch = 64;
	in.job.seq_len = 4096;
	in.gpus = 8;
	assert_int_equal(pp_inputs_resolve(&refs, &in, &part, &err), PP_OK);
	assert_int_equal(part, PP_INPUTS_OK);
	assert_true(in.system.usd_per_gpu_hour == 3.5);
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	assert_int_equal(pp_inputs_estimate(&in, e, &err), PP_OK);
	assert_true(e->time.iteration_s > 0);
	free(e);
	refs.system_ref = "no-such-system";
	assert_int_equal(pp_inputs_resolve(&refs, &in, &part, &err), PP_EINPUT);
	assert_int_equal(part, PP_INPUTS_SYSTEM);
	refs.system_ref = "dgx-h100";
	refs.framework = "no-such-stack";
	assert_int_equal(pp_inputs_resolve(&refs, &in, &part, &err), PP_EINPUT);
	assert_int_equal(part, PP_INPUTS_FRAMEWORK);
}

static void test_steps(void **state)
{
	(void)state;
	static pp_steps s;
	pp_error err;
	char csv[] = "iteration_s,flags\n# c\n1.5, --model llama3-8b\n\n2e-1,--tp 2\n";
	assert_int_equal(pp_steps_parse(csv, "f.csv", &s, &err), PP_OK);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.run[0].id, "line 3");
	assert_true(s.run[1].iteration_s == 0.2);
	assert_string_equal(s.run[1].flags, "--tp 2");
	pp_steps_clear(&s);
	char bad[] = "1.5 --tp 2\n";
	assert_int_equal(pp_steps_parse(bad, "f.csv", &s, &err), PP_EINPUT);
	char buf[512];
	assert_string_equal(pp_error_format(&err, buf, sizeof buf),
	                    "f.csv:1: expected 'seconds per iteration,estimate flags'");
	char json[] = "{\"runs\": [{\"flags\": \"--tp 1\", \"iteration_s\": 3, \"id\": \"a\"}]}";
	assert_int_equal(pp_steps_parse(json, "f.json", &s, &err), PP_OK);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.run[0].id, "a");
	pp_steps_clear(&s);
	char json_bad[] = "{\"runs\": [{\"flags\": 1}]}";
	assert_int_equal(pp_steps_parse(json_bad, "f.json", &s, &err), PP_EINPUT);
	assert_non_null(strstr(pp_error_format(&err, buf, sizeof buf), "f.json: runs[0]: "));
	pp_steps_clear(&s);
}

static void test_skips(void **state)
{
	(void)state;
	pp_skips s = {0};
	char buf[256];
	pp_skips_format(&s, buf, sizeof buf);
	assert_string_equal(buf, "it holds no record");
	pp_skips_add(&s, "unknown GPU 'X'");
	pp_skips_add(&s, "unknown GPU 'Y'");
	pp_skips_add(&s, "parallel plan not stated (no tp)");
	pp_skips_format(&s, buf, sizeof buf);
	assert_string_equal(buf, "3 skipped (2 unknown GPU, 1 parallel plan not stated)");
}

static void test_search_space(void **state)
{
	(void)state;
	pp_search_space sp;
	pp_search_space_init(&sp);
	pp_error err;
	bool known;
	assert_int_equal(pp_search_space_set(&sp, "tp", "--tp", "1,2,2,4", &known, &err), PP_OK);
	assert_true(known);
	assert_int_equal(sp.tp.count, 3);
	assert_int_equal(pp_search_space_set(&sp, "pp", "--pp", "4:6", &known, &err), PP_OK);
	assert_int_equal(sp.pp.count, 3);
	assert_int_equal(pp_search_space_set(&sp, "pp", "--pp", "6:4", &known, &err), PP_EINPUT);
	char buf[512];
	assert_string_equal(pp_error_format(&err, buf, sizeof buf), "--pp: empty range '6:4'");
	assert_int_equal(pp_search_space_set(&sp, "sp", "--sp", "true", &known, &err), PP_OK);
	assert_int_equal(sp.sp_mask, 2u);
	assert_int_equal(pp_search_space_set(&sp, "flash", "--flash", "on", &known, &err), PP_OK);
	assert_false(known);
	pp_model m;
	assert_int_equal(pp_model_resolve("llama3-8b", &m, &err), PP_OK);
	assert_int_equal(pp_search_space_check(&sp, &m, &err), PP_OK);
	assert_int_equal(pp_search_space_set(&sp, "ep", "--ep", "2", &known, &err), PP_OK);
	assert_int_equal(pp_search_space_check(&sp, &m, &err), PP_EINPUT);
	assert_non_null(strstr(err.text, "is dense"));
}

static void test_output(void **state)
{
	(void)state;
	static pp_output_set set;
	char dir[] = "/tmp/pp_thin_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof path, "%s/out.txt", dir);
	pp_error err;
	assert_int_equal(pp_output_check(&set, "v", "--output", path, &err), PP_OK);
	assert_int_equal(pp_output_check(&set, "v", "--other", path, &err), PP_EINPUT);
	char buf[512];
	assert_non_null(
	    strstr(pp_error_format(&err, buf, sizeof buf), "--output writes that file"));
	assert_int_equal(pp_output_check(&set, "v", "--output", "", &err), PP_EINPUT);
	assert_string_equal(pp_error_format(&err, buf, sizeof buf),
	                    "v: --output needs a file name");
	pp_output o;
	assert_int_equal(pp_output_open(&o, "--output", path, &err), PP_OK);
	fputs("hello\n", o.f);
	assert_int_equal(pp_output_close(&set, &o, true, &err), PP_OK);
	struct stat st;
	assert_int_not_equal(stat(path, &st), 0); /* not there before the commit */
	assert_int_equal(pp_output_commit(&set, true, &err), PP_OK);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 6);
	/* A command that fails leaves the old file as it was. */
	assert_int_equal(pp_output_open(&o, "--output", path, &err), PP_OK);
	fputs("longer text\n", o.f);
	assert_int_equal(pp_output_close(&set, &o, true, &err), PP_OK);
	assert_int_equal(pp_output_commit(&set, false, &err), PP_OK);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 6);
	unlink(path);
	assert_int_equal(rmdir(dir), 0); /* no temporary left behind */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_inputs), cmocka_unit_test(test_steps),
	    cmocka_unit_test(test_skips),  cmocka_unit_test(test_search_space),
	    cmocka_unit_test(test_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
