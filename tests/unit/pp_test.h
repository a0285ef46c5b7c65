/*
 * Helpers shared by the cmocka unit tests (include after <cmocka.h>).
 */
#ifndef PP_TEST_H
#define PP_TEST_H

#include <math.h>

/* Fails unless |got - want| <= rel * |want| (GSL's gsl_test_rel in spirit). */
static inline void assert_rel(double got, double want, double rel)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("got %.17g, want %.17g (rel tol %g)", got, want, rel);
}

/* `x` rounded to `digits` decimals, as a text prints it. */
static inline double round_to(double x, int digits)
{
	double f = pow(10, digits);
	return round(x * f) / f;
}

#endif
