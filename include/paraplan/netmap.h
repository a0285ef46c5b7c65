/*
 * paraplan — netmap: Pipette's latency model over a bandwidth matrix
 * (bandwidth.h), the worker-to-GPU mapping found by simulated annealing, and
 * the event simulator on a mapping (seed 001, Pipette, §IV-V).  The map/
 * module: it reads an estimate (pp_pipette_model_of), so it comes after
 * estimate/ in the flow; place/ keeps the rank orders and the matrices.
 *
 * The mapping f: workers -> GPUs (seed 001 Eq. 2) is a permutation: worker w
 * = (x pipeline stage, y tensor rank, z data rank), w = y + tp (z + dp x),
 * which is Megatron's default rank order (tp-dp-pp); f[w] is its global GPU
 * (node f[w] / gpus_per_node).  The identity is what torchrun does.
 */
#ifndef PARAPLAN_NETMAP_H
#define PARAPLAN_NETMAP_H

#include "bandwidth.h"
#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An estimate (estimate.h, pp_estimate_run) is what the model is read from;
 * named by its tag so that this header needs no estimate.h. */
struct pp_estimate;

/* Pipette's latency model (seed 001 Eq. 3-6) of one plan on one matrix. */
typedef struct pp_pipette_model {
	int pp, tp, dp;
	int gpus_per_node;
	double microbatches;      /* n_mb */
	double compute_s;         /* C: compute + exposed non-TP communication, one micro-batch */
	double tp_bytes;          /* TP bytes one GPU sends per micro-batch (ring) */
	double msg_pp_bytes;      /* one activation transfer (Eq. 5's msg_PP) */
	double msg_dp_bytes;      /* the gradient buffer of a stage-1 GPU (Eq. 6's msg_DP) */
	double intra_bytes_per_s; /* two GPUs of one node (NVLink) */
	const pp_bandwidth *bw;
} pp_pipette_model;

/* The model of an estimate `e` (pp_estimate_run) on matrix `bw`: C and the
 * byte counts from its bottleneck stage, NVLink from its system. */
void pp_pipette_model_of(const struct pp_estimate *e, const pp_bandwidth *bw,
                         pp_pipette_model *out);

/* B(g1, g2) for global GPUs. */
double pp_pipette_bw(const pp_pipette_model *m, long long g1, long long g2);

typedef struct pp_pipette_terms {
	double tp_s;        /* T_com^TP: the slowest TP group's ring (1/B over its slowest hop) */
	double pp_path_s;   /* Eq. 5: the slowest end-to-end pipeline, 2 msg_PP / B per hop */
	double dp_s;        /* Eq. 6: hierarchical all-reduce of stage 1 */
	double bubble_s;    /* Eq. 4 */
	double straggler_s; /* Eq. 4 */
	double iteration_s; /* Eq. 3 */
} pp_pipette_terms;

/*
 * Eq. 3-6 for mapping `f` (f[w] = GPU of worker w; NULL: the identity).
 * Eq. 4's (pp - 1) T_com^PP is read as Eq. 5's path sum (pp - 1 hops; equal
 * when all hops are alike).  T_com^TP, profiled in Pipette, is here the TP
 * ring over the group's slowest link: NVLink when the group is inside a node,
 * so a mapping that splits a TP group pays for it.
 */
double pp_pipette_map_latency(const pp_pipette_model *m, const long long *f, pp_pipette_terms *out);

/*
 * The event simulator (sim.h) with Eq. 5-6 in it: the estimate's stages,
 * but stage x's activation (gradient) transfer takes msg_PP over the slowest
 * link from stage x to x + 1 (x - 1) among its (y, z) pipelines, and its DP
 * reduction Eq. 6 over its own DP groups; mapping f (NULL: identity).  The
 * first stage's gradient and the last stage's activation keep the estimate's
 * times (they are never sent).  Writes *out; the events are the simulator's.
 */
pp_status pp_pipette_simulate(const struct pp_estimate *e, const pp_pipette_model *m,
                              const long long *f, pp_sim *sim, pp_sim_result *out, pp_error *err);

/* ------------------------------------------------------------- annealing */

typedef struct pp_anneal_params {
	unsigned long long seed;
	long long max_moves;      /* move budget (the deterministic stop) */
	double max_seconds;       /* wall-clock cap; 0: none (not deterministic when it stops) */
	double alpha;             /* temperature factor per step: 0.999 (seed 001 §IV) */
	double t0_rel;            /* initial temperature, a fraction of the identity's latency */
	double t_end_rel;         /* final temperature, same unit: steps = ln(t_end/t0)/ln(alpha) */
	double p_migrate, p_swap; /* move mix; the rest reverse (seed 001 §IV) */
	long long unit_workers;   /* moves permute blocks of this many workers (GPUs); 0:
	                             a TP group when tp divides gpus per node, a node when
	                             gpus per node divides tp, else 1 */
} pp_anneal_params;

/* Defaults: alpha 0.999, t0 1e-3, t_end 1e-7, moves 100000, mix 1/3 each,
 * blocks automatic.  Migrate and reverse move substrings of at most 16
 * blocks. */
void pp_anneal_params_init(pp_anneal_params *p);

typedef struct pp_anneal pp_anneal;

/* GSL-style: new (init at the identity), iterate (one temperature step),
 * test (PP_OK to go on, 1 when the budget is spent), read the best. */
pp_status pp_anneal_new(const pp_pipette_model *m, const pp_anneal_params *p, pp_anneal **out,
                        pp_error *err);
void pp_anneal_free(pp_anneal *a);
void pp_anneal_iterate(pp_anneal *a);
int pp_anneal_test(const pp_anneal *a);
/* Run to the budget: iterate while test says go on. */
void pp_anneal_run(pp_anneal *a);

typedef struct pp_anneal_result {
	double identity_s; /* Eq. 3 of the identity mapping */
	double best_s;     /* of the best mapping found */
	double gain;       /* identity_s / best_s */
	long long moves, accepted;
	double wall_s; /* since pp_anneal_new */
	double cpu_s;  /* CPU time of the calling thread, the same span */
} pp_anneal_result;
void pp_anneal_result_get(const pp_anneal *a, pp_anneal_result *out);
/* The best mapping (f[w], workers in the order above); owned by `a`. */
const long long *pp_anneal_best(const pp_anneal *a);

/*
 * place's run, whole: the model of estimate `e` on matrix `bw`
 * (pp_pipette_model_of), the annealer run to its budget from `seed` over at
 * most `max_moves` moves, Eq. 3's terms of the identity and of the best
 * mapping, and both mappings in the event simulator (pp_pipette_simulate).
 */
typedef struct pp_netmap {
	pp_pipette_model m; /* borrows `bw`, which must outlive the run */
	pp_anneal *anneal;  /* owned by the run */
	pp_anneal_result result;
	const long long *best; /* pp_anneal_best(anneal): f[w], owned by the run */
	pp_pipette_terms identity, annealed;
	/* iteration seconds in the event simulator, identity then annealed;
	 * both 0 when the simulator refuses either (the report then omits them) */
	double sim_s[2];
} pp_netmap;
/* *out is freed by pp_netmap_free (NULL on failure).  PP_OK; PP_EINPUT
 * when the plan has workers the mapping does not cover (field plan.cp or
 * plan.tp2 above 1); or the annealer's error (PP_EINPUT, PP_ENOMEM). */
pp_status pp_netmap_run(const struct pp_estimate *e, const pp_bandwidth *bw,
                        unsigned long long seed, long long max_moves, pp_netmap **out,
                        pp_error *err);
void pp_netmap_free(pp_netmap *r);

/*
 * The matrix place maps estimate `e` onto: read from `path` (a Pipette JSON
 * or an mpiGraph output, pp_bandwidth_read, its nodes of the estimate's
 * system), or, when `path` is NULL, a synthetic one for the estimate's GPUs
 * (their nodes at the system's NIC bandwidth, Pipette-like heterogeneity:
 * pp_bandwidth_synthetic from `synthetic_seed`).  *out (NULL on failure) is
 * freed by pp_bandwidth_free.  PP_OK, the reader's error, or PP_EINPUT (the
 * file its source) when the matrix has fewer endpoints than the plan's GPUs
 * (a GPU matrix) or nodes.
 */
pp_status pp_netmap_bandwidth(const struct pp_estimate *e, const char *path,
                              unsigned long long synthetic_seed, pp_bandwidth **out, pp_error *err);

/* pp_netmap_bandwidth's file reading for `gpus` GPUs of system `s` (a plan
 * not yet known: search --bandwidth reads the matrix before it searches). */
pp_status pp_netmap_bandwidth_for(const pp_system *s, long long gpus, const char *path,
                                  pp_bandwidth **out, pp_error *err);

/* ------------------------------------------- Pipette Algorithm 1 over K plans */

/* One plan mapped (pp_netmap_rank). */
typedef struct pp_netmap_plan {
	bool mapped;        /* false: the mapping does not cover it (plan.cp or plan.tp2 above 1);
	                       it keeps its closed form in the ranking */
	bool simulated;     /* the times below are the event simulator's (else the closed
	                       form scaled by Eq. 3's ratio to the identity) */
	bool kept_identity; /* the annealed mapping was slower than the identity in the
	                       simulator (Eq. 3 counts stage 1's DP only): the identity kept */
	double closed_s;    /* the closed form's iteration: the search's time */
	double identity_s;  /* the identity mapping (workers tp-dp-pp on GPUs 0..) on the matrix */
	double annealed_s;  /* the annealed mapping on the matrix */
	double mapped_s;    /* the faster of the two: the time the plan is re-ranked by */
	double gain;        /* identity_s / mapped_s, >= 1 */
	double eq3_identity_s, eq3_annealed_s; /* Pipette's Eq. 3, the annealer's objective */
	size_t rank;                           /* 0-based place in the re-ranking */
} pp_netmap_plan;

typedef struct pp_netmap_ranking {
	size_t n;
	pp_netmap_plan *plans; /* in the order given */
	size_t *order;         /* order[k]: the plan ranked k-th by mapped_s (closed_s
	                          where not mapped), ties in the order given */
	unsigned long long seed;
	long long moves;
	const char *source; /* the matrix's file, for the report (borrowed; may be NULL) */
} pp_netmap_ranking;

/*
 * Seed 001 Algorithm 1 over plans already ranked (a search's top K): each
 * plan's rank -> GPU mapping annealed on matrix `bw` (pp_netmap_run: `seed`,
 * at most `moves` moves; deterministic), its time read in the event simulator
 * on the identity and on the annealed mapping (pp_pipette_simulate), the
 * faster kept (Algorithm 1 keeps the best it evaluates, the identity its
 * start; Eq. 3, the annealer's objective, counts stage 1's DP only, so its
 * best can be slower in the simulator), and the plans re-ranked by it.  *out is freed by
 * pp_netmap_ranking_free (emptied on failure).  PP_OK, PP_ENOMEM or the
 * annealer's error; a plan the mapping does not cover is no failure.
 */
pp_status pp_netmap_rank(const struct pp_estimate *const *plans, size_t n, const pp_bandwidth *bw,
                         unsigned long long seed, long long moves, pp_netmap_ranking *out,
                         pp_error *err);
void pp_netmap_ranking_free(pp_netmap_ranking *r);

#ifdef __cplusplus
}
#endif
#endif
