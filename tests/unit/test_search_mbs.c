/*
 * The search's micro-batch sizes, taken from the global batch's divisors
 * (ppi_search_mbs_values, O(those divisors)), are exactly what the loop over
 * 1..per_replica it replaced gave (kept here as the reference), on a grid of
 * global batches, data-parallel degrees and mbs lists that includes
 * per_replica in the millions; and ppi_divisors lists every divisor once, in
 * increasing order, up to the largest global batch the job allows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "search/search_int.h"
#include "util/util.h"

/* The loop the search ran before (issue 21): O(per_replica). */
static int old_mbs_values(long long per_replica, const pp_search_dim *mbs, int *out)
{
	int n = 0;
	for (int v = 1; v <= per_replica && n < PP_SEARCH_MAX_VALUES; v++) {
		bool want = mbs->count == 0;
		for (int i = 0; i < mbs->count; i++)
			want |= mbs->values[i] == v;
		if (want && per_replica % v == 0)
			out[n++] = v;
	}
	return n;
}

/* The divisors of n by the definition, ascending. */
static int old_divisors(long long n, int *out, int cap)
{
	int k = 0;
	for (long long d = 1; d <= n && k < cap; d++)
		if (n % d == 0)
			out[k++] = (int)d;
	return k;
}

static void test_divisors_equal_the_definition(void **state)
{
	(void)state;
	static int a[PPI_DIVISORS_MAX], b[PPI_DIVISORS_MAX];
	for (long long n = 1; n <= 5000; n++) {
		int na = ppi_divisors(n, a, PPI_DIVISORS_MAX);
		int nb = old_divisors(n, b, PPI_DIVISORS_MAX);
		assert_int_equal(na, nb);
		assert_memory_equal(a, b, (size_t)na * sizeof *a);
		/* a smaller cap keeps the smallest */
		int nc = ppi_divisors(n, a, 3);
		assert_int_equal(nc, nb < 3 ? nb : 3);
		assert_memory_equal(a, b, (size_t)nc * sizeof *a);
	}
	const long long big[] = {16777216, 4849845, 1 << 23, 12582912, 16777213};
	for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
		int na = ppi_divisors(big[i], a, PPI_DIVISORS_MAX);
		int nb = old_divisors(big[i], b, PPI_DIVISORS_MAX);
		assert_int_equal(na, nb);
		assert_memory_equal(a, b, (size_t)na * sizeof *a);
	}
	/* The most divisors under the job's bound, and the bound itself: every
	 * one divides n, ascending, paired d <-> n / d (so none is missing). */
	const long long top[][2] = {
	    {735134400, 1344}, {1000000000, 100}, {536870912, 30}, {999999937, 2}};
	for (size_t i = 0; i < sizeof top / sizeof *top; i++) {
		long long n = top[i][0];
		int na = ppi_divisors(n, a, PPI_DIVISORS_MAX);
		assert_int_equal(na, (int)top[i][1]);
		for (int j = 0; j < na; j++) {
			assert_int_equal(n % a[j], 0);
			if (j > 0)
				assert_true(a[j] > a[j - 1]);
			assert_int_equal((long long)a[j] * a[na - 1 - j], n);
		}
	}
	assert_int_equal(ppi_divisors(0, a, PPI_DIVISORS_MAX), 0);
	assert_int_equal(ppi_divisors(PPI_DIVISORS_N_MAX + 1, a, PPI_DIVISORS_MAX), 0);
}

static void check(long long gbs, long long dp, const pp_search_dim *mbs)
{
	static int div[PPI_DIVISORS_MAX];
	int ndiv = ppi_divisors(gbs, div, PPI_DIVISORS_MAX);
	int a[PP_SEARCH_MAX_VALUES], b[PP_SEARCH_MAX_VALUES];
	long long per_replica = gbs / dp;
	int na = ppi_search_mbs_values(div, ndiv, per_replica, mbs, a);
	int nb = old_mbs_values(per_replica, mbs, b);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, (size_t)na * sizeof *a);
}

static void test_mbs_values_equal_the_loop(void **state)
{
	(void)state;
	pp_search_dim all = {0}, list = {0}, dup = {0};
	/* unsorted, repeated, some not dividing, some above per_replica */
	const int l[] = {8, 3, 1, 64, 7, 1 << 20, 3, 2, 1000, 6, 48, 96, 999};
	for (size_t i = 0; i < sizeof l / sizeof *l; i++)
		list.values[list.count++] = l[i];
	for (int i = 0; i < PP_SEARCH_MAX_VALUES; i++)
		dup.values[dup.count++] = 1 + i % 5;
	const pp_search_dim *dims[] = {&all, &list, &dup};
	/* global batches: small, the 1M-GPU bench's, highly composite (more
	 * than 64 divisors, so the cap decides), a prime, 2^k 3^j */
	const long long gbs[] = {1,         2,        12,       720,       1536,
	                         16384,     65536,    5040,     735134400, 536870912,
	                         999999937, 12582912, 16777216, 4849845,   1000000000};
	for (size_t g = 0; g < sizeof gbs / sizeof *gbs; g++) {
		static int dps[PPI_DIVISORS_MAX];
		int ndp = ppi_divisors(gbs[g], dps, PPI_DIVISORS_MAX);
		for (int d = 0; d < ndp; d++) {
			long long per_replica = gbs[g] / dps[d];
			/* the reference loop is O(per_replica x the list): keep the
			 * grid's run time in hand */
			for (size_t k = 0; k < sizeof dims / sizeof *dims; k++)
				if (per_replica <= (k == 0 ? 1 << 20 : 1 << 14))
					check(gbs[g], dps[d], dims[k]);
		}
	}
	/* per_replica in the millions, micro-batch count 2^24 at mbs 1 */
	check(536870912, 32, &all);
	check(16777216, 1, &all);
	check(12582912, 1, &list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_divisors_equal_the_definition),
	    cmocka_unit_test(test_mbs_values_equal_the_loop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
