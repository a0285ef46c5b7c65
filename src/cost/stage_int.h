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

#include <stdint.h>
#include <string.h>

#include "cost_int.h"
#include "util/hash.h"

typedef struct acc {
	double compute[4]; /* by phase */
	double attn[4];    /* attention-core compute by phase (hides CP traffic) */
	double exposed[PP_NGROUPS];
	double hidden_cp[4]; /* overlappable CP traffic by phase */
	double bytes[PP_NGROUPS];
	double summa; /* exposed SUMMA broadcast/reduce time */
	double model_flops, hw_flops;
	double flops[4]; /* executed FLOPs by phase */
	/* Expert all-to-all time a layer's forward and another micro-batch's
	 * backward hide under each other's compute when paired (Megatron-Core's
	 * combined 1F1B; ppi_stage_finish applies the share of pairs). */
	double ep_pair_hidden;
	/* What a dropless MoE layer's backward costs beyond max(host, GPU) when
	 * it starts with the host's queue empty (ppi_stage_finish): summed over
	 * the layers, and the most of one layer. */
	double sync_bwd_s, sync_bwd_max_s;
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
	int layer_kind_max;    /* the layer kind of layer_params_max (0 dense, 1 MoE); -1 none */
	ppi_stage_train train; /* what trains (job.ft): the gradients, the step */
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

/*
 * The memo of collective times (pp_work's coll_key, coll_s, coll_algo): the
 * stage-level collectives (stage_entries.c) and a layer's own (the layer
 * memo's misses, ppi_stage_acc_work) look their times up here.  The key is
 * all that pp_coll_time reads, built by ppi_stage_coll_key_set only.  Five
 * fields, so it is hashed from the four that vary within a workspace's life
 * (the system is the same until the memo is emptied, see pp_work) and
 * compared field by field: no padding to clear and no byte loop (the search
 * asks it several times per plan it times).  Inline for that reason too.
 */
typedef struct pp_coll_memo_key ppi_coll_key;

static inline void ppi_stage_coll_key_set(ppi_coll_key *k, const pp_system *s, const pp_layout *l,
                                          pp_coll_kind kind, double bytes)
{
	k->system = s;
	k->bytes = bytes;
	k->kind = (int)kind;
	k->size = l->size;
	k->per_domain = l->per_domain;
}

static inline unsigned ppi_stage_coll_key_slot(const ppi_coll_key *k)
{
	uint64_t bits;
	memcpy(&bits, &k->bytes, sizeof bits);
	uint64_t h = bits + PPI_SPLITMIX64_GAMMA * (uint64_t)(k->kind + 1) +
	             ((uint64_t)k->size << 24) + (uint64_t)k->per_domain;
	return (unsigned)(ppi_mix64(h) % PP_COLL_MEMO);
}

static inline bool ppi_stage_coll_key_equal(const ppi_coll_key *a, const ppi_coll_key *b)
{
	return a->system == b->system && a->bytes == b->bytes && a->kind == b->kind &&
	       a->size == b->size && a->per_domain == b->per_domain;
}

/* pp_coll_time_proto(s, l, kind, bytes, algo, proto), from the workspace's
 * memo when the same (system, layout, kind, bytes) was timed before: the
 * same seconds, to the bit, and the same algorithm and protocol, since
 * pp_coll_time_proto reads nothing else.  ws NULL: no memo. */
static inline double ppi_stage_coll_time(pp_work *ws, const pp_system *s, const pp_layout *l,
                                         pp_coll_kind kind, double bytes, const pp_coll_algo **algo,
                                         pp_coll_proto *proto)
{
	if (l->size <= 1 || bytes <= 0) {
		*algo = NULL; /* pp_coll_time's answer: nothing moves */
		*proto = PP_PROTO_SIMPLE;
		return 0;
	}
	if (!ws)
		return pp_coll_time_proto(s, l, kind, bytes, algo, proto);
	ppi_coll_key k;
	ppi_stage_coll_key_set(&k, s, l, kind, bytes);
	unsigned slot = ppi_stage_coll_key_slot(&k);
	if (ws->coll_valid[slot] && ppi_stage_coll_key_equal(&ws->coll_key[slot], &k)) {
		*algo = ws->coll_algo[slot];
		*proto = (pp_coll_proto)ws->coll_proto[slot];
		return ws->coll_s[slot];
	}
	double t = pp_coll_time_proto(s, l, kind, bytes, algo, proto);
	ws->coll_key[slot] = k;
	ws->coll_s[slot] = t;
	ws->coll_algo[slot] = *algo;
	ws->coll_proto[slot] = (unsigned char)*proto;
	ws->coll_valid[slot] = true;
	return t;
}

/*
 * Of an expert all-to-all that a pair's compute covers, the share that still
 * shows.  DeepEP's kernels hold deepep_sms of the GPU's SMs while they run,
 * so the compute beside them runs on the rest: compute P beside traffic C
 * ends at max(C, P + C s / S) (the compute loses s / S of its rate for C),
 * the visible share s / S.  The all-to-all's NCCL kernels share the SMs
 * instead: the GPU's overlap table's kernel slowdown and launch gap (seed
 * 002 Table 7, zero3_visible); 0 where neither is known.
 */
static inline double ppi_zero3_reduce_bytes(const pp_system *s, const pp_job *job)
{
	/* the job's reduce dtype where it names one (--grad-reduce-dtype, a
	 * record's FSDP MixedPrecision), else the stack's (DeepSpeed reduces in
	 * its communication dtype), else the gradients' own */
	if (job->reduce_bytes > 0)
		return job->reduce_bytes;
	return s->zero3_reduce_bytes > 0 ? s->zero3_reduce_bytes : job->grad_bytes;
}

static inline double ppi_ep_visible(const pp_system *s, const pp_job *job)
{
	if (job->moe_dispatcher != PP_DISPATCH_ALLTOALL && s->deepep_sms > 0 &&
	    s->gpu.sm_count > s->deepep_sms)
		return s->deepep_sms / s->gpu.sm_count;
	return s->zero3_visible > 0 ? s->zero3_visible : 0;
}

/* stage_rules.c: the overlap rules. */

/* a += n * b */
void ppi_stage_acc_add(acc *a, const acc *b, double n);
/* Time one operation of a unit into entry `e` (every field written). */
void ppi_stage_fill_op(pp_profile_entry *e, const pp_op *o, const pp_system *s, const pp_job *job,
                       pp_profile_unit unit, double times);
/* Time one collective of a unit into entry `e`; `base` is the index of the
 * unit's first operation entry (SUMMA panels point at their GEMM); `memo`:
 * the workspace whose memo of collective times to use, or NULL. */
void ppi_stage_fill_coll(pp_profile_entry *e, const pp_coll *c, const pp_work *w,
                         const pp_system *s, const pp_layout *lay, pp_profile_unit unit,
                         double times, int base, pp_work *memo);
/* Accumulate the entries [from, to) of one unit (all of one `times`): the
 * operations come first, then the collectives.  `ep_visible`: the share of
 * an all-to-all hidden under compute that still shows (ep_pair_hidden; the
 * system's zero3_visible).  `moe_sync`: the stack's
 * MoE layers make the host wait before their experts (ppi_moe_host_sync). */
void ppi_stage_acc_unit(acc *a, const pp_profile_entry *e, int from, int to, bool moe_sync,
                        double ep_visible);
/* The share of a rank's forwards that Megatron-Core's combined 1F1B runs
 * paired with a backward (--ep-overlap): all but the warm-up forwards, the
 * cool-down's backwards running alone as many.  Rank r of pp warms up with
 * (pp - r - 1) x 2 + (vp - 1) x pp + 1 of its m x vp chunk forwards
 * (get_pp_rank_microbatches, core_v0.15.0 pipeline_parallel/schedules.py,
 * the micro-batch group per virtual stage at its default, pp); over the
 * ranks that is vp x pp on average, so (m - pp) / m, the same for every
 * rank (a stage's cost is shared by the ranks of alike layers); without a
 * pipeline one forward runs ahead, (m - 1) / m
 * (combined_1f1b_schedule_for_no_pipelining).  In [0, 1). */
double ppi_ep_paired_share(const pp_plan *p);
/* Whether the plan pairs layers so (--ep-overlap, a stack with
 * ep_overlap_pairs, a 1F1B or interleaved schedule or no pipeline). */
bool ppi_ep_pairs(const pp_plan *p, const pp_system *s);
/* ppi_stage_acc_unit of the work in `w` without keeping the entries (the
 * search's hot path: one call per unit the layer memo misses); the
 * collectives' times through w's memo of them. */
void ppi_stage_acc_work(acc *a, pp_work *w, const pp_system *s, const pp_job *job,
                        const pp_layout *lay, pp_profile_unit unit, bool moe_sync);
/* Whether the stack's dropless MoE layers make the host wait for the GPU in
 * their forward on plan `p` (framework.moe_host_sync). */
bool ppi_moe_host_sync(const pp_system *s, const pp_plan *p);
/* The stage's times from the layers' totals `a` and the stage entries
 * [from, to) of `e`: the overlap rules that span the stage. */
void ppi_stage_finish(pp_stage_time *out, acc *a, const pp_profile_entry *e, int from, int to,
                      const pp_system *s, const pp_plan *p, int layers);

/* stage_entries.c: the stage's own transfers, ZeRO-3 traffic, data-parallel
 * traffic, embedding sync and optimizer, as entries appended to b (ws: the
 * memo of collective times, or NULL). */
void ppi_stage_entries(ebuf *b, const pp_scenario *sc, int stage, const stage_ctx *c, pp_work *ws);
/* The pipeline rank at the other end of rank `stage`'s link (pp > 1): stage +
 * 1; the last rank's, 0 where a linear schedule runs several chunks per rank
 * (interleaved), else p - 2.  It shapes the rank's pp_s: the stage memo keys
 * on it. */
int ppi_stage_pp_peer(const pp_scenario *sc, int stage);

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
