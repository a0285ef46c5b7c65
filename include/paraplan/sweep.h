/*
 * paraplan — sweep: one plan estimated along one axis (seed 000 §6,
 * ConfigTuner's tuning studies).
 *
 * The axis is the GPU count (dp derived), the data-parallel degree at fixed
 * tp/pp/cp (GPUs = tp x pp x cp x dp), or the micro-batch size at fixed
 * t/p/d.  Each point is estimated with pp_estimate_run; a point whose plan
 * does not resolve (mbs does not divide the batch, ...) is a row with the
 * reason, not a failure.  Rows carry throughput, MFU, scaling relative to the
 * first point and to linear scaling, days and GPU-hours for the job's token
 * budget, and the cost of renting (usd_per_gpu_hour x GPU-hours) or buying
 * (a price per GPU x GPUs) the GPUs.
 *
 *     pp_sweep *sw = pp_sweep_new(n);
 *     pp_sweep_run(&model, &system, &job, &plan, gpus, &opts, sw, &err);
 *     for (size_t i = 0; i < sw->nrows; i++) use(&sw->rows[i]);
 *     pp_sweep_free(sw);
 */
#ifndef PARAPLAN_SWEEP_H
#define PARAPLAN_SWEEP_H

#include <stddef.h>

#include "estimate.h"
#include "inverse.h"
#include "shard.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_SWEEP_MAX_POINTS 4096
#define PP_SWEEP_REASON_MAX 512

typedef enum pp_sweep_axis {
	PP_SWEEP_GPUS = 0, /* GPU count; dp = gpus / (tp pp cp) */
	PP_SWEEP_DP = 1,   /* dp at fixed tp, pp, cp; gpus = tp pp cp dp */
	PP_SWEEP_MBS = 2,  /* micro-batch size at fixed tp, pp, cp, dp */
} pp_sweep_axis;

const char *pp_sweep_axis_name(pp_sweep_axis a);
/* "gpus", "dp" or "mbs"; PP_EINPUT naming `field` otherwise. */
pp_status pp_sweep_axis_parse(const char *s, const char *field, pp_sweep_axis *out, pp_error *err);

/*
 * Points of an axis from text: a comma-separated list ("1,2,4") and/or
 * ranges "A:B" or "A:B:STEP" (A..B inclusive), e.g. "1:8,16,32:64:16".  Each
 * value in 1..max_value; at most `cap` values (and PP_SWEEP_MAX_POINTS) are
 * written to `out`, their number to `n`.  PP_EINPUT naming `field` otherwise.
 */
pp_status pp_sweep_parse_values(const char *s, const char *field, long long max_value,
                                long long *out, size_t cap, size_t *n, pp_error *err);

/*
 * The base plan and GPU count of a sweep along `axis`, before it runs: what
 * the axis sets must not be given too, or it would be ignored (the GPU count
 * or dp on the gpus and dp axes, an mbs other than 1 on the mbs axis), and
 * the mbs axis needs the GPU count or dp.  PP_OK or PP_EINPUT (field gpus,
 * plan.dp or plan.mbs).
 */
pp_status pp_sweep_check(pp_sweep_axis axis, const pp_plan *base, long long gpus, pp_error *err);

typedef struct pp_sweep_opts {
	pp_sweep_axis axis;
	const long long *values; /* the points, in the order given */
	size_t nvalues;
	/* Sequences per model replica held fixed: each point's global batch is
	 * replica_batch x dp (weak scaling).  0 keeps the job's global batch
	 * (strong scaling: the per-replica batch shrinks as dp grows). */
	long long replica_batch;
	double usd_per_gpu; /* purchase price of one GPU, 0 = not given */
	/* TCO (docs/energy.md): the life the purchase is amortised over, years
	 * (0 = not given: no TCO), and hosting per kW of IT power per month
	 * (space, cooling plant, operations; electricity is the power cost), 0 =
	 * not given (the TCO then leaves hosting out and the report says so). */
	double life_years;
	double hosting_usd_per_kw_month;
	/* Goodput under failures and checkpoints of every point that fits
	 * (pp_estimate_goodput), NULL = none: rows then carry goodput_days and
	 * goodput_usd. */
	const pp_goodput_params *goodput;
	/* Called after each point with the points done and their number (NULL =
	 * none), e.g. for a progress line. */
	void (*progress)(void *ctx, size_t done, size_t total);
	void *progress_ctx;
	/* The execution layer (paraplan/shard.h): a checkpoint file of finished
	 * points (NULL = none) and the hash of the arguments its header carries,
	 * and the MPI ranks to split the points across (NULL = this process).
	 * With ranks, only the root's `out` holds the rows. */
	const char *checkpoint;
	uint64_t args_hash;
	const pp_shard_comm *comm;
} pp_sweep_opts;

void pp_sweep_opts_init(pp_sweep_opts *o);

typedef struct pp_sweep_row {
	long long value;                  /* the point on the axis */
	long long gpus;                   /* GPUs of this point */
	long long global_batch;           /* sequences per iteration at this point */
	pp_plan plan;                     /* resolved when ok (dp, etp, microbatches filled in) */
	bool ok;                          /* the plan resolved and was estimated */
	char reason[PP_SWEEP_REASON_MAX]; /* why not, when !ok ("plan.mbs: ...") */
	/* The estimate (when ok). */
	bool fits;
	double peak_bytes;     /* per GPU, the peak stage */
	double capacity_bytes; /* HBM of one GPU */
	pp_iteration time;     /* iteration time and its breakdown */
	double iteration_s;
	double tokens_per_s;
	double mfu; /* fraction of the dense peak */
	/* Scaling against the first ok row (the baseline). */
	double speedup;       /* tokens_per_s / the baseline's */
	double ideal_speedup; /* gpus / the baseline's: linear scaling */
	double scaling_eff;   /* speedup / ideal_speedup */
	/* The job's token budget (0 when the job gives none). */
	double train_days;
	double gpu_hours;
	double rent_usd; /* gpu_hours x usd_per_gpu_hour (0 without a price) */
	double buy_usd;  /* gpus x usd_per_gpu (0 without a price) */
	/* Under failures (opts.goodput given, the point fits, a token budget). */
	bool has_goodput;
	double goodput;      /* useful / wall-clock time */
	double goodput_days; /* train_days / goodput */
	double goodput_usd;  /* rent at goodput_days */
	/* Energy (the estimate's pp_energy; reported when the job asks): facility
	 * power (IT without a PUE), the token budget's MWh, CO2e and power cost. */
	double facility_w, it_w, train_mwh, co2e_kg, power_usd;
	/* TCO of the token budget (a purchase price, a life, a budget and an
	 * electricity price given): the purchase amortised over the run's days,
	 * power and hosting; 0 otherwise. */
	double amortised_usd, hosting_usd, tco_usd;
} pp_sweep_row;

typedef struct pp_sweep {
	/* Inputs, as given. */
	pp_model model;
	pp_system system;
	pp_job job;
	pp_plan base;
	pp_sweep_axis axis;
	long long replica_batch;
	double usd_per_gpu_hour; /* the system's rental price */
	double usd_per_gpu;
	double life_years, hosting_usd_per_kw_month; /* pp_sweep_opts' */
	/* Results. */
	size_t capacity; /* rows allocated by pp_sweep_new */
	size_t nrows;
	pp_sweep_row *rows;
	ptrdiff_t baseline;  /* first ok row, -1 when none */
	ptrdiff_t best_time; /* fastest (tokens/s) row that fits, -1 when none */
	ptrdiff_t best_rent; /* fewest GPU-hours per token among rows that fit (the
	                        cheapest to rent at any one price), -1 when none */
	size_t resumed;      /* rows read back from the checkpoint (root rank) */
	size_t evaluated;    /* rows evaluated by this run, all ranks (root rank) */
} pp_sweep;

/* Room for `capacity` points; NULL when out of memory. */
pp_sweep *pp_sweep_new(size_t capacity);
void pp_sweep_free(pp_sweep *sw);

/*
 * Estimate `base` at every point of opts->values into `out` (which must have
 * room for them).  `gpus` is the GPU count of the mbs axis (0: tp pp cp dp of
 * `base`, which then needs dp); the other axes ignore it.  Returns PP_EINPUT
 * only for a bad sweep (no points, too many, a value < 1); plans that do not
 * resolve are rows with !ok.  PP_ENOMEM / PP_EINTERNAL as pp_estimate_run.
 */
pp_status pp_sweep_run(const pp_model *m, const pp_system *s, const pp_job *job,
                       const pp_plan *base, long long gpus, const pp_sweep_opts *opts,
                       pp_sweep *out, pp_error *err);

/*
 * The inverse question `q` (its deadline and budget, and goodput when the
 * sweep ran with goodput params) over the points of `sw`: *cands, one
 * candidate per row (malloc'ed, sw->nrows of them, at least one allocated;
 * the caller frees it), *q_out the query as answered (train_tokens from the
 * sweep's job) and *res the answer (pp_inverse_pick).  PP_OK or PP_ENOMEM,
 * when *cands is NULL.
 */
pp_status pp_sweep_inverse(const pp_sweep *sw, const pp_inverse_query *q, pp_inverse_query *q_out,
                           pp_inverse_candidate **cands, pp_inverse_result *res, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
