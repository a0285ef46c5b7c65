/*
 * The report's lines built without printf (src/report/line.h) are the bytes
 * printf writes: "%*.*f" for prec 0..3 on random values of every magnitude,
 * on exact ties (ties to even on the exact binary value: 0.125 -> "0.12"),
 * on values just beside a tie, on -0, NaN, inf and values too large for the
 * fast path; "%*lld" and "%-*s"; and a line cut at its capacity as snprintf
 * cuts.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "report/line.h"

static void check_fixed(double v, int prec, int width)
{
	char want[512], got[512];
	snprintf(want, sizeof want, "%*.*f", width, prec, v);
	ppi_line l;
	ppi_line_init(&l, got, sizeof got);
	ppi_line_fixed(&l, v, prec, width);
	if (strcmp(want, got) != 0)
		fail_msg("%%%d.%df of %a: printf \"%s\", line \"%s\"", width, prec, v, want, got);
	assert_int_equal(l.n, strlen(want));
}

/* xorshift64*: the same values on every run. */
static uint64_t next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ull;
}

static void test_fixed_random(void **state)
{
	(void)state;
	uint64_t x = 88172645463325252ull;
	long long n = 0;
	for (int i = 0; i < 400000; i++) {
		/* Magnitudes 1e-6 .. 1e17 (past the fast path's 2^50), either sign. */
		double u = (double)(next(&x) >> 11) * 0x1p-53;
		double e = -6 + 23 * (double)(next(&x) >> 11) * 0x1p-53;
		double v = u * pow(10, e) * ((next(&x) & 1) ? -1 : 1);
		int prec = (int)(next(&x) % 4), width = (int)(next(&x) % 14);
		check_fixed(v, prec, width);
		n++;
	}
	print_message("%lld random values\n", n);
}

static void test_fixed_ties(void **state)
{
	(void)state;
	long long n = 0;
	/* k / 2^j: exact binary values, many of them exact decimal ties at some
	 * precision; and their neighbours one and a few ulps away. */
	for (int j = 1; j <= 12; j++)
		for (int k = -5000; k <= 5000; k++) {
			double t = ldexp(k, -j);
			double near[] = {t,
			                 nextafter(t, INFINITY),
			                 nextafter(t, -INFINITY),
			                 nextafter(nextafter(t, INFINITY), INFINITY),
			                 t * (1 + 0x1p-50),
			                 t * (1 - 0x1p-50)};
			for (size_t a = 0; a < sizeof near / sizeof near[0]; a++)
				for (int prec = 0; prec <= 3; prec++) {
					check_fixed(near[a], prec, 8);
					n++;
				}
		}
	/* Decimal halves as doubles (2.675, 0.045, ...), just below or above. */
	for (int prec = 0; prec <= 3; prec++)
		for (int k = 0; k < 200000; k++) {
			double t = (k + 0.5) / pow(10, prec);
			check_fixed(t, prec, 0);
			check_fixed(-t, prec, 0);
			n += 2;
		}
	print_message("%lld values at or beside a tie\n", n);
}

static void test_fixed_special(void **state)
{
	(void)state;
	const double v[] = {0.0,         -0.0,
	                    0.5,         1.5,
	                    2.5,         -0.5,
	                    -0.001,      0.999999,
	                    9.9995,      99.95,
	                    0x1p50,      0x1p50 - 1,
	                    0x1p53,      1e17,
	                    1e300,       -1e300,
	                    DBL_MAX,     DBL_MIN,
	                    4.9e-324,    INFINITY,
	                    -INFINITY,   NAN,
	                    123456789.5, 1e15 + 0.5,
	                    179769.31,   72.59e9 / (1024.0 * 1024.0 * 1024.0)};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		for (int prec = 0; prec <= 3; prec++)
			for (int width = 0; width <= 12; width += 3)
				check_fixed(v[i], prec, width);
}

static void test_int_and_str(void **state)
{
	(void)state;
	const long long v[] = {0, 1, -1, 9, 10, 99, 100, 12345, -12345, LLONG_MAX, LLONG_MIN};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		for (int width = 0; width <= 24; width += 3) {
			char want[64], got[64];
			snprintf(want, sizeof want, "%*lld", width, v[i]);
			ppi_line l;
			ppi_line_init(&l, got, sizeof got);
			ppi_line_int(&l, v[i], width);
			assert_string_equal(got, want);
		}
	const char *s[] = {"", "tp 8", "a string longer than its field of ten"};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
		for (int width = 0; width <= 100; width += 7) {
			char want[128], got[128];
			snprintf(want, sizeof want, "%-*s|", width, s[i]);
			ppi_line l;
			ppi_line_init(&l, got, sizeof got);
			ppi_line_str_left(&l, s[i], width);
			ppi_line_str(&l, "|");
			assert_string_equal(got, want);
		}
}

/* Cut at cap - 1 characters, whatever the piece that overflows. */
static void test_cut(void **state)
{
	(void)state;
	char whole[64];
	int len = snprintf(whole, sizeof whole, "tp %d pp %lld %-12s %8.2f end", 8, -123456789LL,
	                   "order", 72.5);
	assert_true(len > 0 && len < 60);
	for (size_t cap = 1; cap <= (size_t)len + 2; cap++) {
		char want[64], got[64];
		/* What snprintf(want, cap, ...) writes: the first cap - 1 characters. */
		size_t keep = cap - 1 < (size_t)len ? cap - 1 : (size_t)len;
		memcpy(want, whole, keep);
		want[keep] = '\0';
		ppi_line l;
		ppi_line_init(&l, got, cap);
		ppi_line_str(&l, "tp ");
		ppi_line_int(&l, 8, 0);
		ppi_line_str(&l, " pp ");
		ppi_line_int(&l, -123456789LL, 0);
		ppi_line_str(&l, " ");
		ppi_line_str_left(&l, "order", 12);
		ppi_line_str(&l, " ");
		ppi_line_fixed(&l, 72.5, 2, 8);
		ppi_line_str(&l, " end");
		assert_string_equal(got, want);
		assert_int_equal(l.n, strlen(want));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixed_random), cmocka_unit_test(test_fixed_ties),
	    cmocka_unit_test(test_fixed_special), cmocka_unit_test(test_int_and_str),
	    cmocka_unit_test(test_cut)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
