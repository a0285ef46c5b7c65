/*
 * The event simulator's speed (issue: "one simulated iteration of a pp 16 x
 * m 128 plan <= 1 ms"): CPU time of pp_sim_orders + pp_sim_run for 16
 * pipeline ranks and 128 micro-batches under 1F1B, interleaved (v 4) and
 * ZB-H1, with stages of different cost and pipeline transfers; and of
 * pp_estimate_simulate (every stage's cost + the simulation) for Llama-3.1
 * 405B, tp 8 pp 16 on 16384 H100 padded to 128 layers.  Exits 1 when a median
 * exceeds the 1 ms target.  Run: cmake --build build --target bench_sim &&
 * ./build/bench/bench_sim [runs]
 */
#include "bench.h" /* first: it sets _POSIX_C_SOURCE */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "paraplan/paraplan.h"

#define TARGET_S 1e-3

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 200;
	if (runs < 1)
		runs = 1;
	double *t = malloc(sizeof *t * (size_t)runs);
	pp_sim *sim;
	pp_error err;
	char buf[512];
	if (!t || pp_sim_new(&sim, &err))
		return 1;
	int bad = 0;
	const int p = 16;
	const long long m = 128;
	pp_sim_stage st[16];
	memset(st, 0, sizeof st);
	for (int i = 0; i < p; i++) {
		st[i].fwd_s = i == 0 || i == p - 1 ? 0.09 : 0.1;
		st[i].bwd_s = 2 * st[i].fwd_s;
		st[i].wgrad_s = 0.7 * st[i].fwd_s;
		st[i].send_fwd_s = st[i].send_bwd_s = 0.002;
		st[i].dp_s = 0.3;
		st[i].dp_hide_s = 0.2;
		st[i].optimizer_s = 0.02;
	}
	const struct {
		pp_schedule s;
		int v;
	} cases[] = {{PP_SCHED_1F1B, 1}, {PP_SCHED_INTERLEAVED, 4}, {PP_SCHED_ZB, 1}};
	for (size_t c = 0; c < 3; c++) {
		pp_sim_result r;
		for (int i = 0; i < runs; i++) {
			double t0 = bench_cpu_now();
			if (pp_sim_orders(sim, cases[c].s, p, m, cases[c].v, &err) ||
			    pp_sim_run(sim, st, 0.01, &r, &err)) {
				fprintf(stderr, "bench_sim: %s\n",
				        pp_error_format(&err, buf, sizeof buf));
				return 1;
			}
			t[i] = bench_cpu_now() - t0;
		}
		double med = bench_median(t, runs);
		printf("sim %-11s p %d m %lld v %d: %lld tasks, %zu events, iteration %.3f s; "
		       "cpu min %.1f us, median %.1f us, max %.1f us (target < %.0f us)\n",
		       pp_schedule_name(cases[c].s), p, m, cases[c].v, r.tasks,
		       pp_sim_event_count(sim), r.iteration_s, 1e6 * t[0], 1e6 * med,
		       1e6 * t[runs - 1], 1e6 * TARGET_S);
		bad |= med > TARGET_S;
	}
	/* The whole path on a real plan: stage costs + simulation. */
	pp_model mo;
	pp_system sy;
	pp_job job;
	pp_plan plan;
	if (pp_model_preset("llama3.1-405b", &mo, &err) || pp_system_preset("dgx-h100", &sy, &err))
		return 1;
	mo.num_layers = 128;
	pp_job_init(&job);
	job.global_batch = 2048;
	job.seq_len = 8192;
	pp_plan_init(&plan);
	plan.tp = 8;
	plan.pp = 16;
	plan.sp = true;
	plan.zero = 1;
	static pp_estimate e;
	if (pp_estimate_run(&mo, &sy, &job, &plan, 16384, &e, &err)) {
		fprintf(stderr, "bench_sim: %s\n", pp_error_format(&err, buf, sizeof buf));
		return 1;
	}
	for (int i = 0; i < runs; i++) {
		double t0 = bench_cpu_now();
		if (pp_estimate_simulate(&e, sim, &err))
			return 1;
		t[i] = bench_cpu_now() - t0;
	}
	double med = bench_median(t, runs);
	printf("estimate_simulate 405B (128 layers) tp 8 pp 16 dp 128, %lld micro-batches: "
	       "iteration %.3f s (closed form %.3f s); cpu min %.1f us, median %.1f us\n",
	       e.plan.microbatches, e.sim.iteration_s, e.time.iteration_s, 1e6 * t[0], 1e6 * med);
	pp_sim_free(sim);
	free(t);
	return bad;
}
