/*
 * pp_search_flag_take: a searched flag goes into the space, a flag search
 * applies to every plan is handed back, any other is refused by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "paraplan/search_parse.h"

static void test_take(void **state)
{
	(void)state;
	pp_search_space sp;
	pp_search_space_init(&sp);
	pp_error err;
	bool every;
	assert_int_equal(pp_search_flag_take(&sp, "tp", "1,2,4", &every, &err), PP_OK);
	assert_false(every);
	assert_int_equal(sp.tp.count, 3);
	assert_int_equal(pp_search_flag_take(&sp, "tp", "x", &every, &err), PP_EINPUT);
	assert_false(every);
	assert_string_equal(err.field, "--tp");
	assert_int_equal(pp_search_flag_take(&sp, "precision", "bf16", &every, &err), PP_OK);
	assert_true(every);
	assert_int_equal(pp_search_flag_take(&sp, "trace", "t.json", &every, &err), PP_EINPUT);
	assert_false(every);
	assert_string_equal(err.field, "search");
	assert_string_equal(err.text, "--trace is not applied by search; leave it out (see "
	                              "'paraplan search --help')");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_take)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
