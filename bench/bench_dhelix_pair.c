/*
 * bench_dhelix_pair — CPU time of DHelix's pairing of one layer (seed 002
 * Eq. 2 over every candidate order): pp_dh_layer_build, then
 * pp_dh_layer_pair (every backward order x every forward order, and the
 * winning plan), as `paraplan estimate --schedule wshape --pairing` runs it.
 *
 * The cases, smallest to largest: a Llama-3-70B TP 8 layer (dense, 4
 * movable weight gradients: 16 orders), a Mixtral-8x7B TP 2 EP 8 MoE layer
 * (32 orders), and DeepSeek-V3's MoE layer at TP 2 EP 8 with SP (30 forward
 * x 40 backward operators, 256 backward orders x 3 router placements), the
 * largest layer among the presets.
 *
 * Usage: bench_dhelix_pair [runs]   (default 300)
 * Prints min and median CPU time per layer (CLOCK_PROCESS_CPUTIME_ID).
 * Exit status 1 when a case fails or a median exceeds the 1 ms.
 */
#include "bench.h" /* first: it sets _POSIX_C_SOURCE */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "paraplan/dhelix.h"
#include "paraplan/paraplan.h"

#define TARGET_S 1e-3

/* Times `runs` pairings of layer `layer`; returns the median, or a negative
 * number on error. */
static double bench(const char *model, long long gpus, int tp, int ep, int layer, int runs)
{
	pp_model m;
	pp_system s;
	pp_job job;
	pp_plan p;
	pp_error err;
	char buf[512];
	if (pp_model_preset(model, &m, &err) != PP_OK ||
	    pp_system_preset("dgx-h100", &s, &err) != PP_OK)
		goto fail;
	pp_job_init(&job);
	job.seq_len = 4096;
	job.global_batch = gpus;
	pp_plan_init(&p);
	p.tp = tp;
	p.pp = 1;
	p.ep = ep;
	p.sp = tp > 1;
	if (pp_plan_resolve(&p, &m, &s, gpus, &job, &err) != PP_OK)
		goto fail;
	static pp_work ws;
	static pp_dh_layer l;
	static pp_dh_result r;
	pp_work_init(&ws);
	pp_dh_overlap o;
	if (pp_dh_overlap_of_system(&s, p.tp, &o, &err) != PP_OK)
		goto fail;
	double *t = malloc(sizeof *t * (size_t)runs);
	if (!t)
		return -1;
	for (int i = -1; i < runs; i++) { /* one warm-up */
		double t0 = bench_cpu_now();
		if (pp_dh_layer_build(&m, &s, &job, &p, layer, &ws, &l, &err) != PP_OK) {
			free(t);
			goto fail;
		}
		pp_dh_layer_pair(&o, &l, &r);
		if (i >= 0)
			t[i] = bench_cpu_now() - t0;
	}
	double med = bench_median(t, runs);
	printf("%-13s tp %d ep %d layer %d: %2d x %2d operators, %3d x %d orders, s %.4f: "
	       "min %6.1f us, median %6.1f us (target < %.0f ms)\n",
	       model, tp, ep, layer, l.fwd.n, l.bwd.n, r.candidates, r.fwd_candidates, r.speedup,
	       1e6 * t[0], 1e6 * med, 1e3 * TARGET_S);
	free(t);
	return med;
fail:
	fprintf(stderr, "bench_dhelix_pair: %s: %s\n", model,
	        pp_error_format(&err, buf, sizeof buf));
	return -1;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 300;
	if (runs < 1) {
		fprintf(stderr, "usage: bench_dhelix_pair [runs]\n");
		return 2;
	}
	const struct {
		const char *model;
		long long gpus;
		int tp, ep, layer;
	} cases[] = {{"llama3-70b", 64, 8, 1, 0},
	             {"mixtral-8x7b", 64, 2, 8, 0},
	             {"deepseek-v3", 1024, 2, 8, 3}};
	int status = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double med = bench(cases[i].model, cases[i].gpus, cases[i].tp, cases[i].ep,
		                   cases[i].layer, runs);
		if (med < 0 || med > TARGET_S)
			status = 1;
	}
	return status;
}
