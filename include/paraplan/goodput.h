/*
 * paraplan — goodput under failures: checkpoint size and write time, the
 * job's failure rate, the optimal checkpoint interval (Young 1974, Daly 2006)
 * and the fraction of wall-clock time that trains the model (seed 004 §13).
 *
 * Model (Daly, "A higher order estimate of the optimum checkpoint interval
 * for restart dumps", FGCS 22(3), 2006, eq. 13, failures exponential with
 * mean M): a solve of T_s seconds checkpointed every tau seconds of work, at
 * a blocking cost delta per checkpoint and R seconds to restart after a
 * failure, takes
 *     T_wall = M e^{R/M} (e^{(tau + delta)/M} - 1) T_s / tau,
 * so goodput = T_s / T_wall.  Young's interval is sqrt(2 delta M); Daly's
 * higher-order one sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + delta / 18M]
 * - delta (delta < 2M; M otherwise).  The lost work per failure is
 * (tau + delta) / 2 on average.  An asynchronous checkpoint blocks training
 * only for the copy to host memory; the write to storage goes on in the
 * background, so a failure loses that much more work: it is added to the
 * restart time, and the interval is at least the write time (one write at a
 * time).
 */
#ifndef PARAPLAN_GOODPUT_H
#define PARAPLAN_GOODPUT_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Inputs, each default named with its source (pp_goodput_params_init):
 *  - mtbf_gpu_hours 50677: Llama 3 paper (Dubey et al. 2024, "The Llama 3 Herd
 *    of Models", §3.3.4): 419 unexpected interruptions in a 54-day snapshot of
 *    pre-training on 16,384 H100 GPUs; 54 x 24 x 16384 / 419 = 50,677 GPU-hours
 *    per interruption (one every 3.09 hours for that job).
 *  - ckpt_write_bytes_per_s 2e12: the same paper, §3.3.1: the Tectonic storage
 *    fabric used for Llama 3's checkpoints sustains 2 TB/s (7 TB/s peak);
 *    the job's aggregate write bandwidth.
 *  - restart_s 600: an assumption (10 minutes to reschedule, re-initialise
 *    NCCL and load the checkpoint); override with --restart-min.
 *  - host_copy_bytes_per_s 64e9: PCIe Gen5 x16 one direction (NVIDIA H100
 *    datasheet: 128 GB/s both directions), the device-to-host copy that an
 *    asynchronous checkpoint blocks on.
 */
typedef struct pp_goodput_params {
	double mtbf_gpu_hours;         /* mean GPU-hours between job interruptions */
	double ckpt_write_bytes_per_s; /* aggregate storage write bandwidth of the job */
	double restart_s;              /* time from a failure until training runs again */
	bool async;                    /* asynchronous checkpointing */
	double host_copy_bytes_per_s;  /* device-to-host copy, per GPU (async) */
} pp_goodput_params;

void pp_goodput_params_init(pp_goodput_params *p);

/*
 * The least goodput an estimate reports: below it the run takes a million
 * times its failure-free time (or never ends, goodput 0 in doubles), and
 * pp_estimate_goodput refuses the inputs instead of printing 0 days and 0 USD.
 */
#define PP_GOODPUT_MIN 1e-6

typedef struct pp_goodput {
	pp_goodput_params params;
	double ckpt_total_bytes; /* model weights + optimizer state, whole job */
	double ckpt_rank_bytes;  /* the largest shard one GPU writes */
	int ckpt_rank_stage;     /* the pipeline stage of that GPU */
	double write_s;          /* ckpt_total_bytes at the storage bandwidth */
	double blocking_s;       /* delta: training stalled per checkpoint */
	double job_mtbf_s;       /* M = mtbf_gpu_hours x 3600 / gpus */
	double interruptions_per_day;
	double young_interval_s;    /* sqrt(2 delta M) */
	double interval_s;          /* Daly's higher-order interval (used) */
	double interval_iterations; /* interval_s / iteration time */
	double lost_work_s;         /* per failure: (tau + delta) / 2 (+ write_s when async) */
	double restart_s;           /* per failure */
	double goodput;             /* useful training time / wall-clock time */
	/* With a token budget (0 otherwise): */
	double failures;       /* expected interruptions over the run */
	double days;           /* without failures or checkpoints */
	double effective_days; /* days / goodput */
	double extra_days;     /* effective_days - days */
	double gpu_hours;      /* effective */
	double cost_usd;       /* effective */
} pp_goodput;

/* Young's interval sqrt(2 delta M) (delta, M in seconds). */
double pp_young_interval(double delta_s, double mtbf_s);
/* Daly's higher-order interval; M when delta >= 2M. */
double pp_daly_interval(double delta_s, double mtbf_s);
/* Daly's expected goodput of interval tau: tau / (M e^{R/M} (e^{(tau+delta)/M} - 1)). */
double pp_daly_goodput(double tau_s, double delta_s, double restart_s, double mtbf_s);

#ifdef __cplusplus
}
#endif
#endif
