/*
 * paraplan — scenario: one plan, resolved once.
 *
 * Everything derived from the inputs — the plan with dp, etp and the
 * micro-batch count filled in, the micro-batch's shape on one GPU, how the
 * parameters are split and sharded, the layers each pipeline stage holds,
 * and the placement of ranks on GPUs — is computed here, once per plan, and
 * read by memory, cost and schedule instead of being re-derived in each.
 *
 *     pp_scenario *sc;
 *     pp_scenario_new(&model, &system, &job, &plan, gpus, &sc, &err);
 *     pp_scenario_memory(sc, 0, &mem, &err);          (workload.h)
 *     pp_scenario_cost(sc, 0, &ws, &time, &err);       (cost.h)
 *     pp_scenario_free(sc);
 */
#ifndef PARAPLAN_SCENARIO_H
#define PARAPLAN_SCENARIO_H

#include "place.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_scenario pp_scenario;

/*
 * Resolve `plan` (pp_plan_resolve) against the inputs and derive the rest.
 * The inputs are copied; *out is freed by pp_scenario_free.  PP_EINPUT with
 * the first violated rule when the plan does not resolve.
 */
pp_status pp_scenario_new(const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *plan, long long gpus, pp_scenario **out, pp_error *err);
void pp_scenario_free(pp_scenario *sc);

/* The inputs as resolved (owned by the scenario). */
const pp_model *pp_scenario_model(const pp_scenario *sc);
const pp_system *pp_scenario_system(const pp_scenario *sc);
const pp_job *pp_scenario_job(const pp_scenario *sc);
const pp_plan *pp_scenario_plan(const pp_scenario *sc);
const pp_placement *pp_scenario_placement(const pp_scenario *sc);

/* Tokens of one micro-batch on one GPU: mbs x seq / (cp x tp2). */
double pp_scenario_microbatch_tokens(const pp_scenario *sc);

/* Layers pipeline rank `stage` holds (0 outside 0..pp-1). */
int pp_scenario_stage_layers(const pp_scenario *sc, int stage);

/* Layers held by pipeline rank `stage` under a resolved plan: Megatron's even
 * split, or its uneven one (plan.first_stage_layers / last_stage_layers: the
 * end ranks hold those, the others an even share of the rest; or
 * embedding_as_layer / loss_as_layer: an even split of layers + 1 (+ 1), the
 * first (last) rank holding one transformer layer fewer). */
int pp_stage_layers(const pp_model *m, const pp_plan *plan, int stage);
/* Global (0-based) index of the i-th layer (0 <= i < pp_stage_layers) held by
 * pipeline rank `stage`, in the order the rank runs its chunks: rank r splits
 * its n_r layers into vp chunks of n_r/vp, and chunk c of rank r starts at
 * c*L/vp + (n_0 + ... + n_{r-1})/vp (the even case: (c*pp + r)*Lc).  The one
 * place the layer split is known; memory and cost read it from here. */
int pp_stage_layer_index(const pp_model *m, const pp_plan *plan, int stage, int i);

#ifdef __cplusplus
}
#endif
#endif
