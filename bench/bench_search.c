/*
 * Search benchmarks of issue #4 (see bench/README.md):
 *  (a) Megatron-1T (SC'21 Table 1 shape, preset gpt-1t) on 3072 x A100-80GB,
 *      global batch 3072 x 2048 tokens: tp, pp, vp, mbs, recompute, ZeRO, SP,
 *      dp, schedule and placement (Calculon's space and more);
 *  (b) GPT3-1T (seed 003) on 4096 B200 with NVLink domains of 8 (lbnl-b200),
 *      global batch 4096 x 2048: the same dimensions with placement (the
 *      LBNL space).
 * Prints the size of the space, the plans evaluated and pruned, the wall
 * time, and the winner.  Run: cmake --build build --target bench_search &&
 * ./build/bench/bench_search [threads]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "paraplan/paraplan.h"

enum { SPACE_CALCULON, SPACE_LBNL, SPACE_LBNL_PLUS };

static int bench(const char *title, const char *model, const char *system, long long gpus,
                 long long gbs, int seq, int threads, int kind)
{
	pp_model m;
	pp_system s;
	pp_job job;
	pp_error err;
	char buf[512];
	if (pp_model_preset(model, &m, &err) || pp_system_preset(system, &s, &err)) {
		fprintf(stderr, "bench_search: %s\n", pp_error_format(&err, buf, sizeof buf));
		return 1;
	}
	pp_job_init(&job);
	job.global_batch = gbs;
	job.seq_len = seq;
	pp_search_space space;
	pp_search_space_init(&space);
	if (kind != SPACE_CALCULON) {
		/* 1D TP (tp2 = 1) and 2D TP SUMMA over n_2 = 2..64 with its panel count. */
		space.tp2.count = 7;
		for (int i = 0; i < 7; i++)
			space.tp2.values[i] = 1 << i;
		space.summa_mask = 2u;
	}
	if (kind == SPACE_LBNL) {
		/* Seed 003 S1-S3: sharded optimizer, 1F1B, no recompute (flash attention),
		 * sequence-parallel 1D TP; searched: b_m, n_1, n_2, n_p, n_d, n_b and the
		 * placement of every group on the NVS domain. */
		space.zero.count = 1;
		space.zero.values[0] = 1;
		space.recompute_mask = 1u << PP_RECOMPUTE_NONE;
		space.schedule_mask = 1u << PP_SCHED_1F1B;
		space.sp_mask = 2u;
		space.cp.count = 1;
		space.cp.values[0] = 1;
		space.vp.count = 1;
		space.vp.values[0] = 1;
		space.norders = 6;
		const char *orders[] = {"tp-tp2-dp-pp", "tp-tp2-pp-dp", "tp-dp-tp2-pp",
		                        "tp-pp-tp2-dp", "tp2-tp-dp-pp", "dp-tp-tp2-pp"};
		for (int i = 0; i < 6; i++)
			snprintf(space.orders[i], sizeof space.orders[i], "%s-cp", orders[i]);
	}
	pp_search_options opts;
	pp_search_options_init(&opts);
	if (threads > 0)
		opts.threads = threads;
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	pp_search *srch;
	if (pp_search_new(&m, &s, &job, gpus, &space, &opts, &srch, &err)) {
		fprintf(stderr, "bench_search: %s\n", pp_error_format(&err, buf, sizeof buf));
		return 1;
	}
	while (!pp_search_done(srch))
		if (pp_search_iterate(srch, &err)) {
			fprintf(stderr, "bench_search: %s\n",
			        pp_error_format(&err, buf, sizeof buf));
			pp_search_free(srch);
			return 1;
		}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double cpu_s = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
	pp_search_stats st;
	pp_search_get_stats(srch, &st);
	printf("%s\n  %s on %lld x %s, global batch %lld x %d, %d threads\n", title, m.name, gpus,
	       s.name, gbs, seq, opts.threads);
	printf("  space %.0f plans, evaluated %lld (%lld do not fit), pruned %lld, rejected %lld, "
	       "wall %.3f s (%.0f plans/s)\n",
	       st.space, st.evaluated, st.infeasible, st.pruned, st.rejected, st.wall_s,
	       st.space / st.wall_s);
	/* CPU time of the process (all threads): on a shared machine the rate per
	 * core that wall time cannot give. */
	printf("  not timed (time floor) %lld of %lld that fit; cpu %.3f s: %.0f evaluated "
	       "plans/s per core, %.0f plans of the space/s per core\n",
	       st.pruned_time, st.evaluated - st.infeasible, cpu_s, st.evaluated / cpu_s,
	       st.space / cpu_s);
	printf("  RESULT case=%s threads=%d wall_s=%.6f cpu_s=%.6f evaluated=%lld space=%.0f\n",
	       title[1] == 'a'   ? "a"
	       : title[2] == '+' ? "c"
	                         : "b",
	       opts.threads, st.wall_s, cpu_s, st.evaluated, st.space);
	if (pp_search_count(srch) > 0) {
		const pp_estimate *e = pp_search_plan(srch, 0);
		const pp_plan *p = &e->plan;
		printf("  best: tp %d pp %d dp %d cp %d vp %d mbs %d zero %d %s sp %s %s %s: %.2f "
		       "s per "
		       "iteration, MFU %.1f%%, %.1f GiB per GPU\n",
		       p->tp, p->pp, p->dp, p->cp, p->vp, p->mbs, p->zero,
		       pp_recompute_name(p->recompute), p->sp ? "on" : "off",
		       pp_schedule_name(p->schedule), p->order, e->time.iteration_s, 100 * e->mfu,
		       e->memory.total_bytes / 1073741824.0);
	}
	pp_search_free(srch);
	return 0;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 0;
	/* Optional second argument: the cases to run, e.g. "ab" (default "abc";
	 * c is (b+)). */
	const char *which = argc > 2 ? argv[2] : "abc";
	int rc = 0;
	if (strchr(which, 'a'))
		rc |= bench("(a) Megatron-1T, Calculon's space", "gpt-1t", "dgx-a100-80g", 3072,
		            3072, 2048, threads, SPACE_CALCULON);
	if (strchr(which, 'b'))
		rc |= bench("(b) GPT3-1T on B200 NVS-8, the LBNL space", "gpt3-1t", "lbnl-b200",
		            4096, 4096, 2048, threads, SPACE_LBNL);
	if (strchr(which, 'c'))
		rc |= bench("(b+) the same with every paraplan dimension (ZeRO, recompute, "
		            "schedules, vp, cp)",
		            "gpt3-1t", "lbnl-b200", 4096, 4096, 2048, threads, SPACE_LBNL_PLUS);
	return rc;
}
