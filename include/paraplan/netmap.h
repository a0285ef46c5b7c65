/*
 * paraplan — netmap: measured bandwidth matrices, Pipette's latency model over
 * them, and the worker-to-GPU mapping found by simulated annealing (seed 001,
 * Pipette, §IV-V).
 *
 * A bandwidth matrix gives B(a, b), bytes/s from endpoint a to endpoint b,
 * for endpoints that are nodes (one MPI rank per node, as mpiGraph is run) or
 * GPUs.  Two GPUs on one node talk at the matrix's intra-node bandwidth
 * (NVLink) unless the matrix is per GPU.
 *
 * Formats read (pp_bandwidth_read picks by content):
 *   Pipette JSON   {"gpus": [names...], "bandwidth": [[...], ...]} — row i,
 *                  column j: i to j; a square matrix over the listed
 *                  endpoints; optional "unit": "B/s", "MB/s", "GB/s"
 *                  (default; 1e9 bytes/s) or "Gb/s"; optional
 *                  "gpus_per_endpoint" (1: a GPU matrix, the default; or
 *                  the system's GPUs per node: a node matrix; any other
 *                  grouping is refused).
 *   mpiGraph       LLNL mpiGraph's text output: the "Send" table, rows
 *                  "host:k to" then one value per column, MB/s with MB =
 *                  2^20 bytes (mpiGraph.c: MBsec = size * 1e6 / 1024^2);
 *                  one rank per node, so endpoints are nodes.
 * Both are bounded by what the file holds: the n x n matrix a header or the
 * row count announces is allocated only once the file has room for its
 * numbers; every link is 1 kB/s to 1e14 B/s (the diagonal may be 0).
 *
 * The mapping f: workers -> GPUs (seed 001 Eq. 2) is a permutation: worker w
 * = (x pipeline stage, y tensor rank, z data rank), w = y + tp (z + dp x),
 * which is Megatron's default rank order (tp-dp-pp); f[w] is its global GPU
 * (node f[w] / gpus_per_node).  The identity is what torchrun does.
 */
#ifndef PARAPLAN_NETMAP_H
#define PARAPLAN_NETMAP_H

#include "estimate.h"
#include "scenario.h"
#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_bandwidth {
	int n;                 /* endpoints */
	int gpus_per_endpoint; /* 1: a GPU matrix; else GPUs per node */
	double *bytes_per_s;   /* n x n, row-major: [a * n + b] from a to b (diagonal unused) */
} pp_bandwidth;

/* An n x n matrix with every link at `bytes_per_s`.  Freed by pp_bandwidth_free. */
pp_status pp_bandwidth_new(int n, int gpus_per_endpoint, double bytes_per_s, pp_bandwidth **out,
                           pp_error *err);
void pp_bandwidth_free(pp_bandwidth *bw);
/* Read a Pipette JSON or an mpiGraph output (see above); gpus_per_node is
 * the endpoint size for a node matrix (mpiGraph, or JSON without
 * gpus_per_endpoint... given as 1 means a GPU matrix). */
pp_status pp_bandwidth_read(const char *path, int gpus_per_node, pp_bandwidth **out, pp_error *err);
/* The same from text in memory (`source` names it in errors). */
pp_status pp_bandwidth_parse(const char *text, size_t len, const char *source, int gpus_per_node,
                             pp_bandwidth **out, pp_error *err);

/*
 * A synthetic node x node matrix with Pipette-like heterogeneity (seed 001
 * Fig. 3: pairs designed equal differ; Fig. 4: slow links about 2x slower):
 * B(a, b) = nominal x (1 - spread x u^2), u uniform in [0, 1) per unordered
 * pair (most links near nominal, a tail down to 1 - spread), times
 * (1 + asym x v), v uniform in [-1, 1) per direction; deterministic
 * SplitMix64 stream from `seed`.
 */
pp_status pp_bandwidth_synthetic(int nodes, int gpus_per_node, double nominal_bytes_per_s,
                                 double spread, double asym, unsigned long long seed,
                                 pp_bandwidth **out, pp_error *err);

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
void pp_pipette_model_of(const pp_estimate *e, const pp_bandwidth *bw, pp_pipette_model *out);

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
pp_status pp_pipette_simulate(const pp_estimate *e, const pp_pipette_model *m, const long long *f,
                              pp_sim *sim, pp_sim_result *out, pp_error *err);

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

#ifdef __cplusplus
}
#endif
#endif
