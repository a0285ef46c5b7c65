/*
 * Helpers shared by the cmocka unit tests (include after <cmocka.h>).
 */
#ifndef PP_TEST_H
#define PP_TEST_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "paraplan/paraplan.h"

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

/* The fixture several tests estimate: gpt-39.1b at seq 2048 and a global
 * batch of `gpus` on configtuner-hopper, tp x pp (full recompute when
 * `full`).  Malloc'ed: the test frees it; any error fails the test. */
static inline pp_estimate *pp_test_gpt39(int tp, int pp, long long gpus, bool full)
{
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	pp_error err;
	if (pp_model_preset("gpt-39.1b", &m, &err) ||
	    pp_system_preset("configtuner-hopper", &s, &err))
		fail_msg("%s", err.text);
	pp_job_init(&j);
	j.global_batch = gpus;
	j.seq_len = 2048;
	pp_plan_init(&p);
	p.tp = tp;
	p.pp = pp;
	if (full)
		p.recompute = PP_RECOMPUTE_FULL;
	pp_estimate *e = malloc(sizeof *e);
	if (!e)
		fail_msg("out of memory");
	if (pp_estimate_run(&m, &s, &j, &p, gpus, e, &err))
		fail_msg("%s", err.text);
	return e;
}

#endif
