/*
 * Private to the library: the estimate with a time cut, for the search's
 * branch and bound.
 */
#ifndef PPI_ESTIMATE_INT_H
#define PPI_ESTIMATE_INT_H

#include <stdbool.h>

#include "paraplan/estimate.h"

/*
 * Asked once the memory model says the plan fits (e->memory, e->fits,
 * e->capacity_bytes and the resolved e->plan are set; the time is not):
 * `floor_s` is a true lower bound of the e->time.iteration_s the time model
 * would give (estimate.c, time_floor); `order_free_floor_s` <= floor_s is one
 * that holds for the same plan under any rank order (the compute alone).
 * Return true to skip the time model.  Asked again, with a tighter floor_s
 * (the optimizer and data-parallel terms added), when it answers false.
 */
typedef bool (*ppi_time_cut)(void *ctx, const pp_estimate *e, double floor_s,
                             double order_free_floor_s);

/* A flag of ppi_estimate_eval_cut beside the PP_EVAL_ ones, for the
 * search's scratch estimate: the caller has checked the model, system and job
 * and the plan's rank order once (ppi_plan_resolve_trusted), and `out` is not
 * cleared first nor given copies of the inputs: only what the models write
 * is set (plan, gpus, memory, fits, capacity and, when timed, the time and
 * what follows it); the rest is left as it was.  An estimate to keep whole
 * is evaluated again without the flag. */
enum { PPI_EVAL_TRUSTED = 1u << 16 };

/*
 * What the caller already knows of a trusted plan (PPI_EVAL_TRUSTED): the same
 * plan under another rank order fits with peak `bytes`.  The memory model
 * does not read where the groups land, so the peak is the same to the bit
 * under any order; the estimate then skips the memory model and sets only
 * memory.total_bytes, capacity_bytes, headroom_bytes and fits (true) before
 * the floor and the time.
 */
/* A plan's CPU offload against the system: PP_EINPUT naming the plan's flag
 * (ZeRO stage too low) or the system field an offload needs and the system
 * does not state (host link, host memory, its bandwidth); PP_OK without
 * offload. */
pp_status ppi_offload_check(const pp_plan *p, const pp_system *s, pp_error *err);

typedef struct ppi_eval_known {
	double bytes;
} ppi_eval_known;

/*
 * pp_estimate_eval, and when `cut` is given and the plan fits, `cut` is asked
 * before the time model; when it answers true the estimate stops there
 * (*was_cut true, e->time zero).  `cut` NULL: pp_estimate_eval exactly.
 * `known` (only with PPI_EVAL_TRUSTED and a plan that fits), else NULL.
 */
pp_status ppi_estimate_eval_cut(const pp_model *m, const pp_system *s, const pp_job *job,
                                const pp_plan *plan, long long gpus, unsigned flags, pp_work *ws,
                                pp_estimate *out, ppi_time_cut cut, void *ctx, bool *was_cut,
                                const ppi_eval_known *known, pp_error *err);

/*
 * The one adapter from a pipeline rank's stage time to the simulator's stage
 * (pp_estimate_simulate, and the annealer's placed simulation,
 * pp_pipette_simulate): the stage cost of rank `stage` into *t, and *out from
 * it: the zero-bubble W, one send each way per micro-batch, the DP traffic
 * and what the last backward hides of it, FLOPs per model chunk (interleaved:
 * per v; wshape: each half of the U) and the wshape SI speedup.
 */
pp_status ppi_sim_stage_of(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_time *t,
                           pp_sim_stage *out, pp_error *err);
/* The simulator's task lists for plan `p`: ones given as data for its shape
 * (pp_sim_set_order) are kept, else the plan's schedule's. */
pp_status ppi_sim_orders_of(pp_sim *sim, const pp_plan *p, pp_error *err);

#endif
