/*
 * paraplan — estimate: everything paraplan predicts for one plan.
 */
#ifndef PARAPLAN_ESTIMATE_H
#define PARAPLAN_ESTIMATE_H

#include "goodput.h"
#include "spec.h"
#include "schedule.h"
#include "sim.h"
#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_MAX_STAGES 512

/*
 * Power and energy of one plan (docs/energy.md), filled by every estimate
 * (a few operations) and reported only when the job asks
 * (pp_energy_asked).  A GPU draws its TDP while it computes and idle_w
 * while it waits, so its mean power over an iteration is
 *     gpu_w = idle_w + (tdp_w - idle_w) x busy_fraction,
 * the utilisation curve of Patel et al. (ASPLOS'24: compute phases reach
 * the TDP) and Choukse et al. (2025: communication phases sit near idle).
 */
typedef struct pp_energy {
	double busy_fraction; /* of the iteration a GPU computes, mean over the stages */
	double gpu_w;         /* one GPU's mean board power */
	long long nodes;      /* nodes the GPUs occupy */
	double it_w;          /* gpus x gpu_w + nodes x the system's host_w */
	double pue;           /* the job's; 0 = not given (facility_w = it_w, said so) */
	double facility_w;    /* it_w x pue (it_w without a PUE) */
	double iteration_j;   /* facility_w x iteration time */
	double train_mwh;     /* facility energy of the token budget; 0 without one */
	double co2e_kg;       /* train_mwh x the grid's gCO2e/kWh; 0 without both */
	double power_usd;     /* train_mwh x the price per kWh; 0 without both */
	bool tdp_only;        /* the GPU states no idle_w: TDP throughout (an upper bound) */
	bool no_host;         /* the system states no host_w: GPUs alone (a lower bound) */
} pp_energy;

/*
 * The energy of a plan from its parts: `s` (GPU tdp_w, idle_w; host_w and
 * GPUs per node), the job's energy inputs, `gpus`, the iteration's seconds,
 * the GPUs' busy fraction and the token budget's seconds (0: none).  Pure;
 * the unit tests recompute it by hand.
 */
void pp_energy_compute(const pp_system *s, const pp_energy_inputs *in, long long gpus,
                       double iteration_s, double busy_fraction, double train_s, pp_energy *out);

typedef struct pp_estimate {
	/* Inputs, as resolved (dp, etp and microbatches filled in). */
	pp_model model;
	pp_system system;
	pp_job job;
	pp_plan plan;
	long long gpus;
	/* Results. */
	pp_param_count params;
	pp_stage_memory memory; /* the peak stage */
	double capacity_bytes;  /* HBM of one GPU */
	double headroom_bytes;  /* capacity - peak total (negative when it does not fit) */
	bool fits;
	/* CPU offload: host memory per node the offloaded state takes (the
	 * largest stage's per GPU, times the node's GPUs in use), and whether it
	 * fits the node's host_memory_bytes (fits is false when it does not). */
	double host_bytes_per_node;
	bool host_fits;
	int nstages; /* = plan.pp, up to PP_MAX_STAGES stages listed below */
	double stage_total_bytes[PP_MAX_STAGES];

	/* Time of one iteration and its breakdown. */
	pp_iteration time;
	pp_stage_time bottleneck; /* the stage that paces the pipeline */
	/* Throughput. */
	double tokens_per_iteration;
	double tokens_per_s;
	double model_flops_per_token;   /* pp_model_flops_per_token */
	double model_tflops_per_gpu;    /* model FLOPs / s / GPU, 1e12 */
	double hardware_tflops_per_gpu; /* executed FLOPs incl. recompute / s / GPU, 1e12 */
	double peak_flops;              /* dense tensor peak of the job's precision, per GPU */
	double mfu, hfu;                /* fractions of peak_flops */
	/* Training the token budget (job.train_tokens; 0 when not given). */
	double train_tokens;
	double train_days;
	double gpu_hours;
	double usd_per_gpu_hour;
	double cost_usd;
	/* Power and energy (pp_energy; reported when the job asks). */
	pp_energy energy;
	/* Traffic each GPU of the bottleneck stage sends per iteration, bytes. */
	double tp_bytes, cp_bytes, ep_bytes, pp_bytes, dp_bytes;
	/* The event simulation of the same iteration (pp_estimate_simulate);
	 * `simulated` false when it was not run. */
	bool simulated;
	pp_sim_result sim;
	/* Goodput under failures and checkpoints (pp_estimate_goodput); `has_goodput`
	 * false when it was not computed. */
	bool has_goodput;
	pp_goodput goodput;
} pp_estimate;

/*
 * Resolve `plan` against the inputs and estimate it.  Inputs are copied into
 * `out` (caller-owned; nothing to free).  A plan that does not fit is still a
 * result (out->fits false); PP_EINPUT means the inputs are inconsistent.
 */
pp_status pp_estimate_run(const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *plan, long long gpus, pp_estimate *out, pp_error *err);

/* Flags of pp_estimate_eval, for callers that evaluate many plans (search). */
enum {
	PP_EVAL_PEAK_ONLY = 1u << 0,   /* memory of the stages that can peak only; the other
	                                  entries of stage_total_bytes stay 0 */
	PP_EVAL_MEMORY_ONLY = 1u << 1, /* stop after the memory model */
	PP_EVAL_FIT_ONLY = 1u << 2,    /* skip the time model when the plan does not fit */
};

/*
 * pp_estimate_run with `flags` (0: the same) and a caller-owned workspace `ws`
 * whose memo of layer costs carries over between calls with the same model
 * and system objects (one per thread; NULL: a fresh one on the stack).
 */
pp_status pp_estimate_eval(const pp_model *m, const pp_system *s, const pp_job *job,
                           const pp_plan *plan, long long gpus, unsigned flags, pp_work *ws,
                           pp_estimate *out, pp_error *err);

/*
 * Simulate the iteration of an estimate `e` (from pp_estimate_run, time
 * model run) with the event simulator `sim` (pp_sim_new; its events are then
 * the iteration's, for a trace): every stage's cost, the plan's schedule,
 * the same DP overlap, optimizer and per-iteration overheads as the closed
 * form.  Task lists already given to `sim` as data for this plan's pp,
 * micro-batches and chunks (pp_sim_orders_load) are used instead of the
 * plan's schedule.  Writes e->sim and sets e->simulated.  PP_EINPUT when the
 * schedule cannot be simulated (see pp_sim_orders) or its lists deadlock.
 */
pp_status pp_estimate_simulate(pp_estimate *e, pp_sim *sim, pp_error *err);
/*
 * pp_estimate_simulate with a simulator of its own: the task lists of the
 * JSON schedule file `schedule_file` (pp_sim_orders_load, for the plan's pp,
 * micro-batches and chunks), or the plan's schedule when it is NULL.  On
 * PP_OK *out is the simulator (its events are the iteration's, for a trace;
 * the caller frees it with pp_sim_free).  On failure *out is NULL, and an
 * error of the file's task lists (a deadlock) names the file.
 */
pp_status pp_estimate_simulate_file(pp_estimate *e, const char *schedule_file, pp_sim **out,
                                    pp_error *err);

/*
 * Goodput of estimate `e` (time model run) under failures and checkpoints
 * (goodput.h): the checkpoint of every pipeline stage (weights and optimizer
 * state of the GPU's parameters, the data- and context-parallel replicas each
 * writing their share, as Megatron's fully parallel distributed checkpoint
 * does), its write and blocking time, Daly's interval and the goodput; with a
 * token budget, the effective days and cost.  Writes e->goodput and sets
 * e->has_goodput.  PP_EINPUT on a parameter out of range, and on inputs under
 * which the run never finishes (goodput under PP_GOODPUT_MIN).
 */
pp_status pp_estimate_goodput(pp_estimate *e, const pp_goodput_params *gp, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
