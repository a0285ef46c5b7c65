/*
 * The inverse questions (include/paraplan/inverse.h) on candidates worked by
 * hand: a weak-scaling series where each doubling of the GPUs cuts the days
 * by 1.8x and raises the rent by 2/1.8, one point that does not fit.
 *
 *   gpus   days    rent USD
 *     8   100.0     48 000   (8 GPUs x 100 days x 24 h x 2.5 USD = 48 000)
 *    16    55.6     53 376
 *    32     -          -     does not fit
 *    64    17.1     65 664
 *   128     9.5     72 960
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"

#define N 5

static void series(pp_inverse_candidate c[N])
{
	const long long gpus[N] = {8, 16, 32, 64, 128};
	const double days[N] = {100.0, 55.6, 30.9, 17.1, 9.5};
	memset(c, 0, N * sizeof *c);
	for (int i = 0; i < N; i++) {
		c[i].value = c[i].gpus = gpus[i];
		c[i].ok = true;
		c[i].fits = gpus[i] != 32;
		c[i].days = days[i];
		c[i].usd = (double)gpus[i] * days[i] * 24 * 2.5;
	}
}

/* Deadline 60 days: 16 GPUs (55.6 days) is the fewest; 8 GPUs misses it. */
static void deadline_fewest(void **state)
{
	(void)state;
	pp_inverse_candidate c[N];
	series(c);
	pp_inverse_query q = {.deadline_days = 60};
	pp_inverse_result r;
	pp_inverse_pick(&q, c, N, &r);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.binds, PP_BIND_DEADLINE);
	assert_int_equal(r.next, 0);
	assert_int_equal(r.fastest, 4);
	assert_int_equal(r.cheapest, 0);
}

/* Deadline 20 days: 64 GPUs; the 32 below it does not fit, so memory binds. */
static void deadline_memory_binds(void **state)
{
	(void)state;
	pp_inverse_candidate c[N];
	series(c);
	pp_inverse_query q = {.deadline_days = 20};
	pp_inverse_result r;
	pp_inverse_pick(&q, c, N, &r);
	assert_int_equal(r.pick, 3);
	assert_int_equal(r.binds, PP_BIND_MEMORY);
	assert_int_equal(r.next, 2);
}

/* Deadline 200 days: 8 GPUs, the fewest given: the range binds. */
static void deadline_range(void **state)
{
	(void)state;
	pp_inverse_candidate c[N];
	series(c);
	pp_inverse_query q = {.deadline_days = 200};
	pp_inverse_result r;
	pp_inverse_pick(&q, c, N, &r);
	assert_int_equal(r.pick, 0);
	assert_int_equal(r.binds, PP_BIND_RANGE);
	assert_int_equal(r.next, -1);
}

/* Budget 70 000 USD: 64 GPUs (65 664) is the fastest within it; 128 GPUs
 * (72 960) is faster but over: the budget binds. */
static void budget_fastest(void **state)
{
	(void)state;
	pp_inverse_candidate c[N];
	series(c);
	pp_inverse_query q = {.budget_usd = 70000};
	pp_inverse_result r;
	pp_inverse_pick(&q, c, N, &r);
	assert_int_equal(r.pick, 3);
	assert_int_equal(r.binds, PP_BIND_BUDGET);
	assert_int_equal(r.next, 4);
	/* a budget above every rent: the fastest, nothing binds */
	q.budget_usd = 1e6;
	pp_inverse_pick(&q, c, N, &r);
	assert_int_equal(r.pick, 4);
	assert_int_equal(r.binds, PP_BIND_NONE);
}

/* Both: deadline 60 days and 50 000 USD: 16 GPUs meet the deadline but cost
 * 53 376, 8 GPUs are within budget but miss the deadline: no answer, the
 * budget is what no candidate within the deadline meets.  Deadline 5 days:
 * none meets the deadline. */
static void none_qualifies(void **state)
{
	(void)state;
	pp_inverse_candidate c[N];
	series(c);
	pp_inverse_query q = {.deadline_days = 60, .budget_usd = 50000};
	pp_inverse_result r;
	pp_inverse_pick(&q, c, N, &r);
	assert_int_equal(r.pick, -1);
	assert_int_equal(r.binds, PP_BIND_BUDGET);
	q = (pp_inverse_query){.deadline_days = 5};
	pp_inverse_pick(&q, c, N, &r);
	assert_int_equal(r.pick, -1);
	assert_int_equal(r.binds, PP_BIND_DEADLINE);
	for (int i = 0; i < N; i++)
		c[i].fits = false;
	pp_inverse_pick(&q, c, N, &r);
	assert_int_equal(r.binds, PP_BIND_MEMORY);
	assert_int_equal(r.fastest, -1);
}

/* Deadline and budget together: 60 days and 60 000 USD: 16 GPUs. */
static void both_hold(void **state)
{
	(void)state;
	pp_inverse_candidate c[N];
	series(c);
	pp_inverse_query q = {.deadline_days = 60, .budget_usd = 60000};
	pp_inverse_result r;
	pp_inverse_pick(&q, c, N, &r);
	assert_int_equal(r.pick, 1);
	assert_true(pp_inverse_meets(&q, &c[1]));
	assert_false(pp_inverse_meets(&q, &c[0]));
	assert_false(pp_inverse_meets(&q, &c[3])); /* 65 664 USD */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(deadline_fewest), cmocka_unit_test(deadline_memory_binds),
	    cmocka_unit_test(deadline_range),  cmocka_unit_test(budget_fastest),
	    cmocka_unit_test(none_qualifies),  cmocka_unit_test(both_hold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
