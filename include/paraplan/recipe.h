/*
 * paraplan — recipes: a whole training run as ordered phases (issue 26 item 1).
 *
 * A recipe names a model, a system, a default plan and GPU count, and its
 * phases in order: each with its tokens, sequence length and global batch
 * (a ramp: from `start` to `end` sequences in increments of `step`, over
 * `over_tokens` tokens, as Megatron-LM's --rampup-batch-size does: each of
 * the (end - start) / step batch sizes below `end` trains over_tokens /
 * increments tokens, then `end` trains the rest of the phase), and its own
 * plan fields and GPU count, or "search" (the fastest plan that fits, at the
 * phase's final batch).  Each distinct batch size is a step of the phase,
 * estimated as one plan (pp_estimate_run) and charged tokens / (batch x seq)
 * iterations; a batch that is not a multiple of the plan's mbs x dp is
 * refused (Megatron-LM asserts the same of every batch of its ramp).
 *
 * Between two phases whose parallel layout differs (tp, tp2, pp, vp, cp, ep,
 * etp, dp, ZeRO stage or GPU count) the run re-shards: the previous phase
 * saves its checkpoint (goodput.h: weights and optimizer state at the job's
 * storage write bandwidth, on the previous phase's GPUs) and the next loads
 * it (at the same bandwidth, on its GPUs); the GPU-hours of both are added.
 * Per phase and in total: days, GPU-hours and cost failure-free, and with
 * failures and checkpoints (Daly's goodput, goodput.h, per step).  Energy is
 * not in the totals yet (docs/recipes.md).
 *
 * `reported` groups name published GPU-hours against a range of phases, for
 * the report's side-by-side table.  The library never prints.
 */
#ifndef PARAPLAN_RECIPE_H
#define PARAPLAN_RECIPE_H

#include "error.h"
#include "estimate.h"
#include "goodput.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_RECIPE_MAX_PHASES 16
#define PP_RECIPE_MAX_STEPS 512 /* distinct batch sizes of one phase's ramp */
#define PP_RECIPE_MAX_REPORTED 8
#define PP_RECIPE_NAME_MAX 64
#define PP_RECIPE_TEXT_MAX 512

typedef struct pp_recipe_ramp {
	int start, end; /* sequences; start == end: a constant batch */
	int step;       /* increment; 0: the phase plan's mbs x dp */
	double over_tokens;
} pp_recipe_ramp;

typedef struct pp_recipe_phase {
	char name[PP_RECIPE_NAME_MAX];
	double tokens;
	int seq;
	pp_recipe_ramp gbs;
	bool search;    /* "plan": "search" */
	pp_plan plan;   /* the recipe's plan with this phase's fields over it */
	long long gpus; /* the recipe's unless the phase gives its own */
	char source[PP_RECIPE_TEXT_MAX];
	int line, column; /* of the phase in the recipe file, for messages */
} pp_recipe_phase;

/* Published GPU-hours of phases first..last (0-based indexes; last < first:
 * none of the recipe's phases, e.g. post-training it does not model). */
typedef struct pp_recipe_reported {
	char name[PP_RECIPE_NAME_MAX];
	int first, last;
	double gpu_hours;
	char source[PP_RECIPE_TEXT_MAX];
} pp_recipe_reported;

typedef struct pp_recipe {
	char name[PP_RECIPE_NAME_MAX];
	char path[PP_ERROR_SOURCE_MAX]; /* the file it was read from */
	char description[PP_RECIPE_TEXT_MAX];
	pp_model model;
	pp_system system;
	pp_job job; /* the recipe's job fields (precision, ...); batch, seq, tokens per phase */
	pp_goodput_params goodput;
	int nphases;
	pp_recipe_phase phases[PP_RECIPE_MAX_PHASES];
	int nreported;
	pp_recipe_reported reported[PP_RECIPE_MAX_REPORTED];
} pp_recipe;

/*
 * Read recipe file `path` into *out (caller-owned, heap-sized: allocate it).
 * Keys: name, description, model, system (preset names or files), gpus,
 * usd_per_gpu_hour, job {registry job fields}, plan {registry plan fields},
 * phases [{name, tokens, seq, gbs (a number or {start, end, step,
 * over_tokens}), plan ({fields} or "search"), gpus, source}], reported
 * [{name, first, last (phase names; last defaults to first; neither: none of
 * the recipe's phases), gpu_hours, source}],
 * sources {free text}.  Errors name path:line:col of the offending key and
 * its field path ("phases[1].gbs.end").  PP_OK, PP_EINPUT, PP_ENOMEM.
 */
pp_status pp_recipe_read(const char *path, pp_recipe *out, pp_error *err);
/* The same from text[0..len), named `source` in messages (no file read but
 * the model's and system's when they name files). */
pp_status pp_recipe_from_json(const char *text, size_t len, const char *source, pp_recipe *out,
                              pp_error *err);

/* One batch size of a phase. */
typedef struct pp_recipe_step {
	int gbs;
	double tokens, iterations;
	double iteration_s, mfu, peak_bytes;
	double days, gpu_hours, cost_usd;
	double eff_days, eff_gpu_hours, eff_cost_usd; /* with failures and checkpoints */
	/* facility energy (IT power without a PUE; docs/energy.md): the estimate's
	 * facility_w x iteration time x iterations */
	double energy_j;
} pp_recipe_step;

typedef struct pp_recipe_phase_result {
	pp_plan plan; /* resolved at the phase's final batch (dp, microbatches) */
	long long gpus;
	int nsteps;
	pp_recipe_step steps[PP_RECIPE_MAX_STEPS];
	double capacity_bytes, peak_bytes; /* the largest peak over the steps */
	double ckpt_bytes; /* this phase's checkpoint: weights and optimizer state, whole job */
	/* The re-shard before this phase (all 0 when none): the previous phase's
	 * checkpoint written on its GPUs, this phase's read on its own. */
	bool reshard;
	double save_s, load_s, reshard_gpu_hours, reshard_cost_usd;
	/* Sums over the steps (the re-shard not included). */
	double tokens, iterations, days, gpu_hours, cost_usd, eff_days, eff_gpu_hours, eff_cost_usd,
	    mfu;         /* mfu: GPU-time weighted */
	double energy_j; /* the steps' energy; re-shards not counted */
} pp_recipe_phase_result;

typedef struct pp_recipe_result {
	const pp_recipe *recipe; /* borrowed */
	int nphases;
	pp_recipe_phase_result phases[PP_RECIPE_MAX_PHASES];
	/* Totals: phases and re-shards. */
	double tokens, days, gpu_hours, cost_usd, eff_days, eff_gpu_hours, eff_cost_usd;
	double reshard_gpu_hours;
	/* The phases' energy (failures, checkpoints and re-shards not counted), and
	 * whether it is facility energy (every phase's job has a PUE) or IT energy. */
	double energy_j;
	bool energy_facility;
} pp_recipe_result;

/*
 * Run recipe `r` into *out (caller-owned, heap-sized).  PP_EINPUT with the
 * phase named (recipe file, "phases[i]...") when a phase's plan is refused,
 * does not fit, a batch is not a multiple of mbs x dp, a ramp has more than
 * PP_RECIPE_MAX_STEPS batch sizes, or a searched phase has no plan that fits.
 */
pp_status pp_recipe_run(const pp_recipe *r, pp_recipe_result *out, pp_error *err);

/* Predicted GPU-hours (failure-free, with re-shards into its phases) and
 * with failures of reported group `g` of `res`'s recipe. */
void pp_recipe_group_hours(const pp_recipe_result *res, int g, double *gpu_hours,
                           double *eff_gpu_hours);

#ifdef __cplusplus
}
#endif
#endif
