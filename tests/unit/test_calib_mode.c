/*
 * calibrate's modes (pp_calib_mode_of): the flag that picks the mode, and a
 * flag of another mode refused by name; the run-records file a verb reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/calib.h"

static void test_modes(void **state)
{
	(void)state;
	pp_calib_mode m;
	pp_error err;
	assert_int_equal(pp_calib_mode_of(&(pp_calib_given){.gpu = true}, &m, &err), PP_OK);
	assert_int_equal(m, PP_CALIB_MODE_FIT);
	const pp_calib_given nccl = {.nccl_tests = true, .system = true, .output = true};
	assert_int_equal(pp_calib_mode_of(&nccl, &m, &err), PP_OK);
	assert_int_equal(m, PP_CALIB_MODE_NCCL);
	assert_int_equal(pp_calib_mode_of(&(pp_calib_given){.step_times = true}, &m, &err), PP_OK);
	assert_int_equal(m, PP_CALIB_MODE_STEPS);
	assert_int_equal(pp_calib_mode_of(&(pp_calib_given){.memory = true}, &m, &err), PP_OK);
	assert_int_equal(m, PP_CALIB_MODE_MEMORY);
}

static void test_refused(void **state)
{
	(void)state;
	pp_calib_mode m;
	pp_error err;
	const pp_calib_given both = {.memory = true, .step_times = true};
	assert_int_equal(pp_calib_mode_of(&both, &m, &err), PP_EINPUT);
	assert_string_equal(err.field, "calibrate");
	assert_string_equal(err.text, "--step-times does not apply with --memory (see 'paraplan "
	                              "calibrate --help')");
	assert_int_equal(pp_calib_mode_of(&(pp_calib_given){.system = true}, &m, &err), PP_EINPUT);
	assert_string_equal(err.text, "--system does not apply without --nccl-tests, --step-times "
	                              "or --memory (see 'paraplan calibrate --help')");
	const pp_calib_given gpu = {.nccl_tests = true, .gpu = true};
	assert_int_equal(pp_calib_mode_of(&gpu, &m, &err), PP_EINPUT);
	assert_string_equal(err.text, "--gpu does not apply with --nccl-tests (see 'paraplan "
	                              "calibrate --help')");
}

/* pp_runs_path: --data when given, else the default records file. */
static void test_runs_path(void **state)
{
	(void)state;
	char path[4096];
	const char *file = NULL;
	pp_error err;
	assert_int_equal(pp_runs_path("x.json", "validate", path, sizeof path, &file, &err), PP_OK);
	assert_string_equal(file, "x.json");
	if (pp_runs_default_path(path, sizeof path)) { /* ctest sets PARAPLAN_SHARED_DIR */
		assert_int_equal(pp_runs_path(NULL, "validate", path, sizeof path, &file, &err),
		                 PP_OK);
		assert_ptr_equal(file, path);
		assert_non_null(strstr(path, "public-runs.json"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_modes),
	                                   cmocka_unit_test(test_refused),
	                                   cmocka_unit_test(test_runs_path)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
