/*
 * bench_shard — wall time of a sweep's points across MPI ranks (the shard layer
 * layer, include/paraplan/shard.h), without the launcher's start-up.
 *
 * The study: gpt-145.6b on configtuner-hopper, tp 8, pp 8, seq 2048, full
 * recompute, 96 sequences per replica, 300B tokens, dp = 1..POINTS (4096 by
 * default): one pp_estimate_run per point, the CLI's
 *     paraplan sweep --model gpt-145.6b --system configtuner-hopper --tp 8
 *         --pp 8 --seq 2048 --recompute full --over dp --values 1:4096
 *         --replica-batch 96 --tokens 300B
 * Each repetition is one pp_sweep_run: points split across the ranks, rows
 * sent to rank 0 and merged there.  Rank 0 prints the median wall time of a
 * repetition (CLOCK_MONOTONIC, from entering pp_sweep_run to its return with
 * every row merged), the time per point, and a checksum of the rows (the same
 * however many ranks ran).
 *
 * Usage: bench_shard [repetitions [points]]   (default 10 4096)
 *        mpirun -n 2 bench_shard ...          (bench/mpi_sweep.sh runs both)
 * PARAPLAN_SHARD_ORDER=block: contiguous blocks instead of shuffled shards.
 */
#include "bench.h" /* first: it sets _POSIX_C_SOURCE */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "paraplan/paraplan.h"

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 10;
	long long npoints = argc > 2 ? atoll(argv[2]) : 4096;
	if (reps < 1 || npoints < 1 || npoints > PP_SWEEP_MAX_POINTS) {
		fprintf(stderr, "usage: bench_shard [repetitions [points <= %d]]\n",
		        PP_SWEEP_MAX_POINTS);
		return 2;
	}
	pp_model m;
	pp_system s;
	pp_job job;
	pp_plan plan;
	pp_error err;
	char buf[512];
	pp_shard_comm *comm = NULL;
	if (pp_model_preset("gpt-145.6b", &m, &err) != PP_OK ||
	    pp_system_preset("configtuner-hopper", &s, &err) != PP_OK ||
	    pp_shard_comm_open(&comm, &err) != PP_OK) {
		fprintf(stderr, "bench_shard: %s\n", pp_error_format(&err, buf, sizeof buf));
		return 1;
	}
	pp_job_init(&job);
	job.seq_len = 2048;
	job.global_batch = 96; /* per replica: x dp at each point */
	job.train_tokens = 300e9;
	pp_plan_init(&plan);
	plan.tp = 8;
	plan.pp = 8;
	plan.recompute = PP_RECOMPUTE_FULL;
	long long *values = malloc(sizeof *values * (size_t)npoints);
	pp_sweep *sw = pp_sweep_new((size_t)npoints);
	double *t = malloc(sizeof *t * (size_t)reps);
	if (!values || !sw || !t) {
		fprintf(stderr, "bench_shard: out of memory\n");
		return 1;
	}
	for (long long i = 0; i < npoints; i++)
		values[i] = i + 1;
	pp_sweep_opts o;
	pp_sweep_opts_init(&o);
	o.axis = PP_SWEEP_DP;
	o.values = values;
	o.nvalues = (size_t)npoints;
	o.replica_batch = 96;
	o.comm = comm;
	double sum = 0;
	int status = 0;
	for (int r = 0; r < reps && !status; r++) {
		double t0 = wall_now();
		if (pp_sweep_run(&m, &s, &job, &plan, 0, &o, sw, &err) != PP_OK) {
			fprintf(stderr, "bench_shard: %s\n",
			        pp_error_format(&err, buf, sizeof buf));
			status = 1;
		}
		t[r] = wall_now() - t0;
	}
	for (size_t i = 0; i < sw->nrows && !status; i++)
		sum += sw->rows[i].iteration_s;
	if (!status && pp_shard_comm_root(comm)) {
		const char *shard = getenv("PARAPLAN_SHARD_ORDER");
		double med = bench_median(t, reps);
		printf(
		    "ranks %d (%s shards): %lld points, %d repetitions: median %.3f s per study, "
		    "%.1f us per point, min %.3f s, max %.3f s, checksum %.17g\n",
		    pp_shard_comm_size(comm), shard ? shard : "shuffled", npoints, reps, med,
		    1e6 * med / (double)npoints, t[0], t[reps - 1], sum);
	}
	pp_sweep_free(sw);
	free(values);
	free(t);
	pp_shard_comm_close(comm);
	return status;
}
