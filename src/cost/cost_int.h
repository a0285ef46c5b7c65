/*
 * Private to the library: stage cost and profile read from a resolved
 * scenario.
 */
#ifndef PPI_COST_INT_H
#define PPI_COST_INT_H

#include "paraplan/cost.h"
#include "scenario/scenario_int.h"

/* pp_stage_cost / pp_stage_profile_build on a scenario (the public ones
 * build a scenario and call these).  Allocate nothing. */
pp_status ppi_stage_cost(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_time *out,
                         pp_error *err);
pp_status ppi_stage_profile(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_profile *out,
                            pp_error *err);

/* Seconds of the transformer layers' operations of one micro-batch on
 * pipeline rank `stage` (every phase), from the memo in `ws`: a floor under
 * that rank's fwd_compute_s + bwd_compute_s (see stage.c).  *comm_s (when
 * not NULL): the layers' own exposed TP, CP and EP seconds as the stage's
 * tp_s + cp_s + ep_s count them, so that compute + *comm_s is a floor under
 * the rank's fwd_s + bwd_s; unlike the compute, it depends on where the
 * groups land. */
double ppi_stage_layers_compute(const pp_scenario *sc, int stage, pp_work *ws, double *comm_s);
/* The same with *fwd_s: the forward phase's share of the layers' seconds (a
 * floor under the rank's fwd_compute_s). */
double ppi_stage_layers_compute_fwd(const pp_scenario *sc, int stage, pp_work *ws, double *comm_s,
                                    double *fwd_s);
/* Rank `stage`'s pp_s as its stage cost gives it, to the bit: the pipeline
 * transfers of one micro-batch over the rank's link (stage_time.h), 0
 * without a pipeline. */
double ppi_stage_pp_link_s(const pp_scenario *sc, pp_work *ws, int stage);
/* A floor of every rank's pp_s (the floors': each link's is at least this;
 * the same on every rank where all hops are alike), 0 without a pipeline. */
double ppi_stage_pp_send_s(const pp_scenario *sc, pp_work *ws);
/* Rank `stage`'s dp_s and (*optimizer_s) optimizer_s as its stage cost gives
 * them, to the bit (the same code makes both): the data-parallel traffic of
 * one iteration (from the memo of collective times in `ws`; it depends on
 * where the DP groups land) and the optimizer's pass (it does not). */
double ppi_stage_dp_s(const pp_scenario *sc, int stage, pp_work *ws, double *optimizer_s);

#endif
