/*
 * paraplan — schedule-type: the pipeline schedules as a table of types (GSL's
 * solver types are the model).  Each schedule is one `pp_schedule_type` in
 * its own file, src/spec/sched_<name>.c; one registry
 * (src/spec/sched_registry.c) lists them, indexed by `pp_schedule` (spec.h).
 * Everything that depends on which schedule a plan runs asks its type: plan
 * parsing and validation, memory (residency, the head's rank), the stage
 * cost (the head), traffic and pp bytes (the sends), the search (which
 * schedules it tries, floors), the closed form and the simulator's task
 * order, the launch writers and readers.
 *
 * Layering: this header depends on spec types only, so spec's users and
 * workload / cost (upstream of schedule) may ask a type's descriptive
 * members without a back edge.  The members that compose stage times (the
 * closed form) or build task lists take `struct pp_stage_time` and
 * `struct pp_iteration` (cost.h, schedule.h) as incomplete types here; their
 * code, in the same sched_<name>.c files, reads those structs' fields but
 * calls nothing of cost, schedule or estimate (tasks are pushed through a
 * callback the simulator passes in).
 *
 * Adding a schedule: its file (a `const pp_schedule_type pp_sched_<name>`)
 * and one line in sched_registry.c's table (plus, for C callers that name it, an
 * enum constant in spec.h; the registry's position is the id).
 */
#ifndef PARAPLAN_SCHEDULE_TYPE_H
#define PARAPLAN_SCHEDULE_TYPE_H

#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most schedules the registry holds (masks of schedules are unsigned). */
#define PP_SCHED_MAX 16

struct pp_stage_time; /* cost.h */
struct pp_iteration;  /* schedule.h */
struct pp_system;

/* A task of the simulator's per-rank lists (sim.h). */
typedef enum pp_task_kind {
	PP_TASK_F = 0,           /* forward */
	PP_TASK_B = 1,           /* backward: input and weight gradients together */
	PP_TASK_BI = 2,          /* backward, input gradients only (zero-bubble B) */
	PP_TASK_W = 3,           /* weight gradients (zero-bubble W) */
	PP_TASK_SI = 4,          /* DHelix SI block: the forward of (mb, chunk) co-executed with
	                   the PP_TASK_B that follows it in the list, the two
	                   (fwd + bwd) / si_speedup long */
	PP_TASK_FB = PP_TASK_SI, /* DualPipe's overlapped F&B pair: the same task, the
	                            forward and the backward that follows it run as
	                            one, (fwd + bwd) / si_speedup long, si_speedup
	                            the F&B overlap factor (F + B) / F&B */
} pp_task_kind;

/* How the simulator takes a task: append (kind, micro-batch, chunk) to rank
 * `rank`'s list; false when out of memory. */
typedef bool (*pp_sched_push)(void *ctx, int rank, pp_task_kind kind, long long mb, int chunk);

/* How the virtual stages (model chunks) sit on the pipeline ranks. */
typedef enum pp_sched_fold {
	PP_FOLD_LINEAR = 0, /* rank r holds virtual stages r, r + p, ..., r + (v - 1) p */
	PP_FOLD_U = 1,      /* DHelix's U: rank r holds r and 2p - 1 - r (two chunks) */
	PP_FOLD_V = 2,      /* a V fold (DualPipeV): rank r holds chunks r and 2p - 1 - r */
	PP_FOLD_DUAL = 3,   /* two model copies (DualPipe): rank r holds stages r and
	                       p - 1 - r, micro-batches enter from both ends */
} pp_sched_fold;

/* How Megatron-LM (and NeMo, which runs Megatron's schedules) is told. */
typedef enum pp_sched_megatron {
	PP_MEGATRON_DEFAULT = 0, /* nothing to write: Megatron's default (1F1B) */
	PP_MEGATRON_VIRTUAL = 1, /* the virtual-stage count (vp > 1) selects it */
	PP_MEGATRON_NONE = 2,    /* Megatron has no such schedule: a note says so */
} pp_sched_megatron;

/* One pipeline link of a rank's activations per micro-batch. */
typedef struct pp_sched_link {
	int peer;     /* pipeline rank (stage) the activations go to */
	double count; /* activations per micro-batch over this link (0 = none) */
} pp_sched_link;
#define PP_SCHED_MAX_LINKS 2

/*
 * A schedule.  Units: seconds (times), micro-batches, ranks (pipeline stages
 * 0 .. pp - 1), layer x micro-batch activation sets (residency), activations
 * per micro-batch (sends; the bytes of one are the stage profile's
 * pp-sendrecv wire bytes, cost's business).  Every function member takes a
 * resolved plan (pp_plan_resolve) unless said, is pure (no state, no
 * allocation, no output) and is read-only on its arguments except `out`
 * parameters, which the caller owns.  Members marked optional may be NULL;
 * the others are required (tests/unit/test_schedule_type.c checks).  The
 * type owns nothing at run time: each instance is a const static object in
 * its sched_<name>.c, the registry only points at it, and the aliases and
 * launch names are static strings.  Section by section, who reads what:
 * docs/design.md, "Schedules as types".
 */
typedef struct pp_schedule_type {
	/* ---- identity (registry, plan parsing, reports) */
	pp_schedule id;             /* its index in the registry */
	const char *name;           /* what --schedule, JSON and the reports use */
	const char *const *aliases; /* other names accepted on input; NULL-terminated,
	                                optional; never printed */
	const char *description;    /* one line for `paraplan list` and docs */

	/* ---- validation (pp_plan_resolve) */
	bool uses_vp;             /* vp > 1 (virtual stages per rank) is this schedule's own;
	                            the others need vp = 1 */
	pp_schedule virtual_form; /* what a plan of this schedule with vp > 1 becomes
	                             (1F1B -> interleaved, Megatron's rule); else itself */
	pp_schedule flat_form;    /* what it becomes with vp = 1 (interleaved -> 1F1B; a
	                             launch reader's fallback); else itself */
	/* The schedule's own rules on the plan (vp, pp); the error names the
	 * field.  Called after the degrees are known, before the layer split,
	 * with p->microbatches 0, and again once the micro-batch count is known
	 * (DualPipe's m >= 2 pp). */
	pp_status (*validate)(const pp_plan *p, pp_error *err);

	/* ---- placement: which rank holds which stage / chunk */
	pp_sched_fold fold;
	/* Model chunks a rank holds (v for interleaved, 2 for the U). */
	int (*chunks)(const pp_plan *p);
	/* The virtual stage of chunk `chunk` of rank `rank` (0 .. chunks - 1). */
	int (*virtual_stage)(const pp_plan *p, int rank, int chunk);
	/* The rank holding the LM head and the loss (memory, stage cost). */
	int (*head_stage)(const pp_plan *p);
	/* Copies of the rank's parameters (and gradients) it keeps: 1, or 2 for a
	 * schedule that runs two model copies per rank (DualPipe). */
	double param_copies;

	/* ---- residency (workload/memory.c) */
	/* Micro-batch activation sets rank `stage` holds at its peak, in units of
	 * "all layers of this rank for one micro-batch". */
	double (*inflight)(const pp_plan *p, int stage);
	/* Optional: the same counted layer by layer for a fold whose chunks live
	 * differently (n layers on the rank): *any the most layer x micro-batch
	 * sets at any block end, *turn the most at the end of a forward through
	 * the head (the head's rank).  NULL: inflight x layers. */
	void (*held_layers)(const pp_plan *p, int stage, int layers, double *any, double *turn);
	/* Micro-batches whose logits the head's rank holds at once. */
	double (*head_held)(const pp_plan *p);

	/* ---- pipeline sends (cost's pp bytes, traffic) */
	/* Activations a rank in the steady state (an inner rank) sends per
	 * micro-batch; each comes back as one gradient.  Equals the sum of the
	 * counts of links() of an inner rank (tests/unit/test_schedule_type.c). */
	double (*sends_per_microbatch)(const pp_plan *p);
	/* Rank `stage`'s activation links; returns their number (<=
	 * PP_SCHED_MAX_LINKS).  Gradients go back the same links reversed: a
	 * rank sends gradients to the ranks that sent it activations. */
	int (*links)(const pp_plan *p, int stage, pp_sched_link out[PP_SCHED_MAX_LINKS]);

	/* ---- time: closed form, floors, simulator */
	/* Strand interleaving (DHelix SI): stages get an si_speedup from the
	 * operator pairing (dhelix.h), and the estimate's floors before costing
	 * are the W's (estimate.c wshape_floor). */
	bool si;
	/* Split backward (zero bubble): the simulator gets W apart from B. */
	bool split_wgrad;
	/* The stacks run it as a loop of blocking neighbour exchanges
	 * (non-interleaved 1F1B: Megatron-Core's
	 * forward_backward_pipelining_without_interleaving, torch's
	 * Schedule1F1B, DeepSpeed's TrainSchedule): framework.pp_p2p_blocking
	 * applies (pp_stage_time.pp_block_s, pp_sim_stage.p2p_blocking). */
	bool p2p_exchange;
	/* In the steady state each backward chunk follows a forward chunk
	 * (1F1B, interleaved, ZB-H1): what a forward leaves on the host's queue
	 * is what the backward starts with (the stage cost's sync_bwd_s: a
	 * dropless MoE layer's host sync). */
	bool fb_alternate;
	/* Data-parallel traffic of each of the vp chunks opens its own window
	 * (Megatron's per-chunk grad sync, pp_schedule_dp_hide_s). */
	bool dp_per_chunk;
	/* The pipeline part of the closed form from st[0 .. p->pp): bottleneck,
	 * compute, tp/cp/ep/zero3, pp and bubble seconds of `out`, which the
	 * caller has zeroed; schedule.c adds the data-parallel, optimizer and
	 * fixed terms. */
	void (*iteration)(const pp_plan *p, const struct pp_stage_time *st,
	                  struct pp_iteration *out);
	/* The textbook bubble fraction for p ranks, m micro-batches, v chunks. */
	double (*bubble_fraction)(int p, long long m, int v);
	/* Optional: a lower bound of the bubble for the search's floor, from the
	 * other stages' summed time (sum minus the slowest) and one send's
	 * seconds; NULL: 0 (schedule.c's closed form is at least the steady
	 * state).  -INFINITY: no bound at all (DualPipe, whose F&B pairs run
	 * under the steady state: the search's floor is then 0).  Not used for
	 * `si` schedules. */
	double (*floor_bubble_s)(const pp_plan *p, double others_s, double send_s);
	/* The simulator's shape check for (p ranks, m micro-batches, v chunks as
	 * the caller gives them) and the chunk count its task lists use. */
	pp_status (*sim_shape)(int p, long long m, int v, int *chunks, pp_error *err);
	/* Rank r's task list, pushed in order; false when a push fails. */
	bool (*sim_order)(int p, long long m, int v, int r, pp_sched_push push, void *ctx);
	/* Optional: the simulator's stage from the cost's stage time t, where
	 * they differ: *scale multiplies its times and per-chunk FLOPs (DualPipe:
	 * 2, a micro-batch crosses one of the rank's two chunks, each a whole
	 * stage), *pair_speedup (> 0) the overlap factor (F + B) / F&B of its
	 * PP_TASK_FB pairs.  NULL: 1 and none (DHelix's SI speedup is `si`'s). */
	void (*sim_stage)(const pp_plan *p, const struct pp_stage_time *t, double *scale,
	                  double *pair_speedup);

	/* ---- launch flags (src/launch) */
	pp_sched_megatron megatron;
	/* torchtitan's pipeline_parallel_schedule names: the first is written,
	 * all are read; NULL-terminated; NULL: torchtitan has none (its 1F1B
	 * is written). */
	const char *const *torchtitan;
	/* Part of the search's default space (no --schedule given). */
	bool search_default;
	/* Searched with pp = 1 too: 1F1B itself, and a schedule that still
	 * differs from it without a pipeline (DHelix's co-execution). */
	bool at_pp1;
} pp_schedule_type;

/* The registry (src/spec/sched_registry.c), indexed by pp_schedule. */
extern const pp_schedule_type *const pp_schedule_types[];
extern const int pp_schedule_type_n;

/* The type of schedule `s`; NULL when there is none. */
static inline const pp_schedule_type *pp_schedule_type_of(pp_schedule s)
{
	return (unsigned)s < (unsigned)pp_schedule_type_n ? pp_schedule_types[s] : 0;
}

/* The type named `name` (its name or an alias, exactly); NULL when none. */
const pp_schedule_type *pp_schedule_type_find(const char *name);

/* The type a launch reader gets from torchtitan's schedule name; NULL when none. */
const pp_schedule_type *pp_schedule_type_torchtitan(const char *name);

/* Schedule `s` with vp virtual stages per rank after Megatron's rules:
 * virtual_form when vp > 1, flat_form when vp <= 1. */
pp_schedule pp_schedule_for_vp(pp_schedule s, int vp);

/* DHelix's W shape (seed 002 §4.1): (p - 1) / (m - 1 + p s) of the
 * iteration, s the SI block speedup; 1F1B's (p - 1)/(m - 1 + p) at s = 1. */
double pp_wshape_bubble_fraction(int p, long long m, double s);

/* Bit i set for every schedule i in the search's default space. */
unsigned pp_schedule_search_default_mask(void);

#ifdef __cplusplus
}
#endif
#endif
