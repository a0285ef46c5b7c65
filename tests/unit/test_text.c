/*
 * The one reader of numbers in text (ppi_parse_double, ppi_parse_ll,
 * ppi_mul_ll) and the string set (ppi_strmap) of src/util/text.c.
 */
#include <float.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/util.h"

static bool num(const char *s, double lo, double hi, double *v, char *why)
{
	return ppi_parse_double(s, (size_t)-1, lo, hi, v, why, 160);
}

static void test_parse_double(void **state)
{
	(void)state;
	char why[160];
	double v = -1;
	assert_true(num("9.07", 0, 100, &v, why));
	assert_true(v == 9.07);
	assert_true(num("-1e-3", -1, 1, &v, why));
	assert_true(num(".5", 0, 1, &v, why));
	assert_true(num("0", 0, 1, &v, why));
	assert_true(v == 0);
	/* Only part of a token: the length bounds it. */
	assert_true(ppi_parse_double("12,34", 2, 0, 100, &v, why, sizeof why));
	assert_true(v == 12);
	/* Refused, each with its reason. */
	v = 42;
	assert_false(num("9.07abc", 0, 100, &v, why));
	assert_string_equal(why, "expected a number, got '9.07abc'");
	assert_true(v == 42); /* untouched */
	assert_false(num("inf", -DBL_MAX, DBL_MAX, &v, why));
	assert_false(num("nan", -DBL_MAX, DBL_MAX, &v, why));
	assert_false(num("0x10", 0, 100, &v, why));
	assert_false(num(" 1", 0, 100, &v, why));
	assert_false(num("1 ", 0, 100, &v, why));
	assert_false(num("", 0, 100, &v, why));
	assert_false(num("-", 0, 100, &v, why));
	assert_false(num("1e999", -DBL_MAX, DBL_MAX, &v, why));
	assert_string_equal(why, "1e999 is not a finite number");
	assert_false(num("1e-320", 0, 1, &v, why));
	assert_string_equal(why, "1e-320 is too close to 0 to be a measurement");
	assert_false(num("1e-400", 0, 1, &v, why)); /* underflows to 0 */
	assert_false(num("2", 0, 1, &v, why));
	assert_string_equal(why, "expected a number in [0, 1], got 2");
	assert_false(ppi_parse_double("1\0002", 3, 0, 100, &v, why, sizeof why));
}

static void test_parse_ll(void **state)
{
	(void)state;
	char why[160];
	long long v = -1;
	assert_true(ppi_parse_ll("473", (size_t)-1, 1, 1000, &v, why, sizeof why));
	assert_int_equal(v, 473);
	assert_true(ppi_parse_ll("-1", (size_t)-1, -1, 1, &v, why, sizeof why));
	assert_false(ppi_parse_ll("8abc", (size_t)-1, 1, 1000, &v, why, sizeof why));
	assert_string_equal(why, "expected an integer, got '8abc'");
	assert_false(ppi_parse_ll("1.5", (size_t)-1, 1, 1000, &v, why, sizeof why));
	assert_false(
	    ppi_parse_ll("99999999999999999999", (size_t)-1, 1, LLONG_MAX, &v, why, sizeof why));
	assert_false(ppi_parse_ll("0", (size_t)-1, 1, 10, &v, why, sizeof why));
	assert_string_equal(why, "expected an integer in 1..10, got 0");
	long long r = 0;
	assert_true(ppi_mul_ll(100000, 100000, &r));
	assert_true(r == 10000000000LL);
	assert_false(ppi_mul_ll(LLONG_MAX / 2, 3, &r));
}

static void test_strmap(void **state)
{
	(void)state;
	ppi_strmap m = {0};
	bool added;
	char k[32];
	enum { N = 100000 };
	for (int i = 0; i < N; i++) {
		int n = snprintf(k, sizeof k, "host%d", i % (N / 2));
		ppi_strmap_entry *e = ppi_strmap_add(&m, k, (size_t)n, &added);
		assert_non_null(e);
		assert_true(added == (i < N / 2));
		e->value++;
	}
	assert_int_equal(m.n, N / 2);
	ppi_strmap_entry *e = ppi_strmap_find(&m, "host7", 5);
	assert_non_null(e);
	assert_int_equal(e->value, 2);
	assert_null(ppi_strmap_find(&m, "host", 4));
	/* Keys are byte strings of a length: a prefix is another key. */
	assert_null(ppi_strmap_find(&m, "host7x", 6));
	ppi_strmap_free(&m);
	assert_null(ppi_strmap_find(&m, "host7", 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_double),
	    cmocka_unit_test(test_parse_ll),
	    cmocka_unit_test(test_strmap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
