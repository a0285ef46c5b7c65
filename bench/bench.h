/*
 * What the benchmarks share: CPU time of this process and the median of a
 * set of timings.  Header-only (each bench_*.c is its own program).
 */
#ifndef PARAPLAN_BENCH_H
#define PARAPLAN_BENCH_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdlib.h>
#include <time.h>

/* Seconds of CPU time this process has used (CLOCK_PROCESS_CPUTIME_ID). */
static inline double bench_cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts t[0..n) in place and returns its median (n >= 1). */
static inline double bench_median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
	return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

#endif
