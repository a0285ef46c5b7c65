/*
 * calibrate's modes (pp_calib_mode_of): the flag that picks the mode, and a
 * flag of another mode refused by name.
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

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_modes),
	                                   cmocka_unit_test(test_refused)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
