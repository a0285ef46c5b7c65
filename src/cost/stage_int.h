/*
 * Private to src/cost/stage*.c: what the four parts of the stage cost share.
 *
 *   stage.c          the memoised cost of a rank (ppi_stage_cost, the
 *                    search's hot path): the layer memo (unit_cost), the
 *                    stage memo, the layers' floor, the rank's layer kinds
 *                    and parameters (ppi_stage_layers) and the LM head's rank
 *   stage_rules.c    the overlap rules: how each operation and collective
 *                    of a unit is timed into an entry and which rule it
 *                    gets, the per-unit sums (acc) and the rules that span
 *                    the stage (ppi_stage_finish)
 *   stage_entries.c  the stage-level entries: pipeline sends, ZeRO-3, the
 *                    data-parallel traffic, the embedding sync, the
 *                    optimizer, and the memo of collective times
 *   stage_profile.c  the stage profile (pp_stage_profile): the same entries
 *                    kept, and summed back by the same rules
 *
 * Nothing here allocates; every buffer is the caller's (an ebuf over the
 * caller's entries, the workspace's memo slots).
 */
#ifndef PPI_STAGE_INT_H
#define PPI_STAGE_INT_H

#include "cost_int.h"

typedef struct acc {
	double compute[4]; /* by phase */
	double attn[4];    /* attention-core compute by phase (hides CP traffic) */
	double exposed[PP_NGROUPS];
	double hidden_cp[4]; /* overlappable CP traffic by phase */
	double bytes[PP_NGROUPS];
	double summa; /* exposed SUMMA broadcast/reduce time */
	double model_flops, hw_flops;
	double flops[4]; /* executed FLOPs by phase */
	bool overflow;
} acc;

/* Entries being written: a profile, or scratch for one unit. */
typedef struct ebuf {
	pp_profile_entry *e;
	int n, cap;
	bool overflow;
} ebuf;

#define UNIT_MAX (PP_MAX_OPS + PP_MAX_COLLS)

/* What the stage-level entries need besides the layers' totals. */
typedef struct stage_ctx {
	ppi_stage_kinds k;
	double layer_params_max, dense_params, expert_params, emb_params, emb;
} stage_ctx;

/* Bytes one GPU puts on the wire for a collective of a `bytes` buffer on n GPUs. */
static inline double ppi_stage_wire_bytes(pp_coll_kind kind, double bytes, int n)
{
	if (n <= 1)
		return 0;
	switch (kind) {
	case PP_COLL_ALLREDUCE: return 2.0 * (n - 1) / n * bytes;
	case PP_COLL_ALLGATHER:
	case PP_COLL_REDUCESCATTER: return (double)(n - 1) / n * bytes;
	case PP_COLL_ALLTOALL: return (double)(n - 1) / n * bytes;
	case PP_COLL_BROADCAST:
	case PP_COLL_REDUCE: return (double)(n - 1) / n * bytes; /* all but one forward it */
	case PP_COLL_P2P:
	default: return bytes;
	}
}

/* stage_rules.c: the overlap rules. */

/* a += n * b */
void ppi_stage_acc_add(acc *a, const acc *b, double n);
/* Time one operation of a unit into entry `e` (every field written). */
void ppi_stage_fill_op(pp_profile_entry *e, const pp_op *o, const pp_system *s, const pp_job *job,
                       pp_profile_unit unit, double times);
/* Time one collective of a unit into entry `e`; `base` is the index of the
 * unit's first operation entry (SUMMA panels point at their GEMM). */
void ppi_stage_fill_coll(pp_profile_entry *e, const pp_coll *c, const pp_work *w,
                         const pp_system *s, const pp_layout *lay, pp_profile_unit unit,
                         double times, int base);
/* Accumulate the entries [from, to) of one unit (all of one `times`): the
 * operations come first, then the collectives. */
void ppi_stage_acc_unit(acc *a, const pp_profile_entry *e, int from, int to);
/* ppi_stage_acc_unit of the work in `w` without keeping the entries (the
 * search's hot path: one call per unit the layer memo misses). */
void ppi_stage_acc_work(acc *a, const pp_work *w, const pp_system *s, const pp_job *job,
                        const pp_layout *lay, pp_profile_unit unit);
/* The stage's times from the layers' totals `a` and the stage entries
 * [from, to) of `e`: the overlap rules that span the stage. */
void ppi_stage_finish(pp_stage_time *out, acc *a, const pp_profile_entry *e, int from, int to,
                      const pp_system *s, const pp_plan *p, int layers);

/* stage_entries.c: the stage's own transfers, ZeRO-3 traffic, data-parallel
 * traffic, embedding sync and optimizer, as entries appended to b (ws: the
 * memo of collective times, or NULL). */
void ppi_stage_entries(ebuf *b, const pp_scenario *sc, int stage, const stage_ctx *c, pp_work *ws);

/* stage.c */

/* The layer kinds of pipeline rank `stage` and the parameters this GPU owns
 * (dense, expert, embedding), from the scenario. */
void ppi_stage_layers(const pp_scenario *sc, int stage, stage_ctx *c);
/* The rank holding the LM head (stage.c's head_stage: the schedule's
 * placement, looked up once per plan by the scenario). */
static inline int ppi_stage_head(const pp_scenario *sc)
{
	return sc->head_stage;
}
/* PP_EINTERNAL: a unit had more entries than the buffers hold. */
pp_status ppi_stage_overflow_fail(pp_error *err);

#endif
