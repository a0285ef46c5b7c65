/*
 * pp_inputs_error_as_flags: a reference that failed is named by its flag
 * where the reader named no file, and a reader's own file and field stay.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"

static void test_as_flags(void **state)
{
	(void)state;
	pp_error preset = {.text = "unknown model 'x'"};
	pp_inputs_error_as_flags(PP_INPUTS_MODEL, &preset);
	assert_string_equal(preset.field, "--model");
	pp_error file = {.source = "sys.json", .field = "gpu", .text = "x"};
	pp_inputs_error_as_flags(PP_INPUTS_SYSTEM, &file);
	assert_string_equal(file.field, "gpu");
	pp_error fw = {.source = "fw.json", .field = "x", .text = "x"};
	pp_inputs_error_as_flags(PP_INPUTS_FRAMEWORK, &fw);
	assert_string_equal(fw.field, "--framework");
	pp_error prof = {.field = "gemm", .text = "x"};
	pp_inputs_error_as_flags(PP_INPUTS_GPU_PROFILE, &prof);
	assert_string_equal(prof.field, "gemm");
	prof.field[0] = '\0';
	pp_inputs_error_as_flags(PP_INPUTS_GPU_PROFILE, &prof);
	assert_string_equal(prof.field, "--gpu-profile");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_as_flags)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
