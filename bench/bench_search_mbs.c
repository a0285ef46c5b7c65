/*
 * Search cost per evaluated plan against the micro-batch count (issue 21):
 * gpt-1t on 1,048,576 H100 (dgx-h100), sequences of 4096 tokens, the default
 * space, at global batches of 16,384 and 536,870,912 sequences (up to 2^29
 * micro-batches per replica).  The search's cost per evaluated plan must not
 * grow with the micro-batch count: the target is the large batch within 2x
 * the small one's CPU time per evaluated plan.  Prints, for each batch, the
 * plans evaluated and the CPU seconds (best of REPEATS), the time per
 * evaluated plan, and the ratio; exits 1 when a search fails or the ratio is
 * above 2.
 *
 *   cmake --build build --target bench_search_mbs &&
 *   ./build/bench/bench_search_mbs [threads] [repeats]     (defaults: 1, 3)
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "paraplan/paraplan.h"

/* The bound on the ratio of the times per evaluated plan. */
#define TARGET_RATIO 2.0

/* One search; its evaluated plans into *evaluated and its CPU seconds into
 * *cpu_s.  0 on success. */
static int run(long long gbs, int threads, long long *evaluated, double *cpu_s)
{
	pp_model m;
	pp_system s;
	pp_job job;
	pp_error err;
	char buf[512];
	if (pp_model_preset("gpt-1t", &m, &err) || pp_system_preset("dgx-h100", &s, &err)) {
		fprintf(stderr, "bench_search_mbs: %s\n", pp_error_format(&err, buf, sizeof buf));
		return 1;
	}
	pp_job_init(&job);
	job.global_batch = gbs;
	job.seq_len = 4096;
	pp_search_space space;
	pp_search_space_init(&space);
	pp_search_options opts;
	pp_search_options_init(&opts);
	opts.threads = threads;
	double c0 = bench_cpu_now();
	pp_search *srch;
	if (pp_search_new(&m, &s, &job, 1048576, &space, &opts, &srch, &err)) {
		fprintf(stderr, "bench_search_mbs: %s\n", pp_error_format(&err, buf, sizeof buf));
		return 1;
	}
	while (!pp_search_done(srch))
		if (pp_search_iterate(srch, &err)) {
			fprintf(stderr, "bench_search_mbs: %s\n",
			        pp_error_format(&err, buf, sizeof buf));
			pp_search_free(srch);
			return 1;
		}
	*cpu_s = bench_cpu_now() - c0;
	pp_search_stats st;
	pp_search_get_stats(srch, &st);
	*evaluated = st.evaluated;
	pp_search_free(srch);
	return 0;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	int repeats = argc > 2 ? atoi(argv[2]) : 3;
	if (threads < 1)
		threads = 1;
	if (repeats < 1)
		repeats = 1;
	const long long gbs[2] = {16384, 536870912};
	double per_plan_s[2];
	for (int g = 0; g < 2; g++) {
		long long evaluated = 0;
		double best = -1;
		for (int r = 0; r < repeats; r++) {
			double cpu_s;
			if (run(gbs[g], threads, &evaluated, &cpu_s))
				return 1;
			if (best < 0 || cpu_s < best)
				best = cpu_s;
		}
		per_plan_s[g] = evaluated > 0 ? best / (double)evaluated : 0;
		printf(
		    "gpt-1t on 1048576 x dgx-h100, gbs %lld x 4096, %d thread(s): %lld evaluated, "
		    "cpu %.3f s (best of %d): %.3f us per evaluated plan\n",
		    gbs[g], threads, evaluated, best, repeats, 1e6 * per_plan_s[g]);
	}
	double ratio = per_plan_s[0] > 0 ? per_plan_s[1] / per_plan_s[0] : 0;
	printf("  RESULT small_us=%.4f large_us=%.4f ratio=%.3f target<=%.1f %s\n",
	       1e6 * per_plan_s[0], 1e6 * per_plan_s[1], ratio, TARGET_RATIO,
	       ratio <= TARGET_RATIO ? "met" : "NOT MET");
	return ratio <= TARGET_RATIO ? 0 : 1;
}
