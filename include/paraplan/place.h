/*
 * paraplan — place: where each rank of a plan runs.
 *
 * A plan's rank order (Megatron's --order-style string, innermost first, e.g.
 * "tp-cp-ep-dp-pp") is parsed here and nowhere else.  From it follow the
 * rank -> (coordinates, node, GPU) map and, for every parallel group, its
 * layout on the system: how many GPUs it spans and how many of them share one
 * NVLink domain (seed 003 S3.2: n_NVS,i).  Cost reads layouts only; it never
 * sees the order string.
 *
 * Ranks are placed on GPUs in rank order (rank r on global GPU r: node
 * r / gpus_per_node, NVLink domain r / nvlink_domain), which is what
 * torchrun and Slurm do by default.  A placement may instead carry an
 * arbitrary rank -> GPU permutation; group layouts are then derived from the
 * map by walking the members of rank 0's group.
 *
 * A split order (seed 003 S3.2's factorisations of the NVLink domain) names a
 * dimension twice, first as `dim:N` (N > 1 dividing its degree), then bare:
 * "tp-dp:2-pp:2-dp-pp" puts tp innermost, then 2 of dp's coordinates, then 2
 * of pp's, then the rest of dp and the rest of pp.  The GPUs are numbered in
 * that mixed radix (the order's tokens, innermost first); the ranks keep the
 * plain order of each dimension's first token ("tp-dp-pp" here), so rank ->
 * coordinates is unchanged and rank -> GPU is a closed-form permutation
 * (pp_place_locate).  docs/placement.md.
 */
#ifndef PARAPLAN_PLACE_H
#define PARAPLAN_PLACE_H

#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The communication groups of a plan. */
typedef enum pp_group {
	PP_GROUP_TP = 0,
	PP_GROUP_CP = 1,
	PP_GROUP_EP = 2,
	PP_GROUP_ETP = 3,
	PP_GROUP_DP = 4,  /* data-parallel replicas of dense parameters: dp x cp ranks */
	PP_GROUP_EDP = 5, /* data-parallel replicas of expert parameters */
	PP_GROUP_PP = 6,
	PP_GROUP_EMB = 7, /* first and last stage sharing tied embeddings */
	PP_GROUP_TP2 = 8, /* n_2 of 2D tensor parallelism (plan.tp2): splits the sequence */
} pp_group;
#define PP_NGROUPS 9

/* Where a parallel group lands: its size and how many of its GPUs share an
 * NVLink domain (seed 003 S3.2: n_NVS,i). */
typedef struct pp_layout {
	int size;
	int per_domain;
} pp_layout;

/* The dimensions a rank order names. */
typedef enum pp_dim {
	PP_DIM_TP = 0,
	PP_DIM_TP2 = 1,
	PP_DIM_CP = 2,
	PP_DIM_EP = 3, /* folds into the dp x cp ranks: size 1 in the rank grid */
	PP_DIM_DP = 4,
	PP_DIM_PP = 5,
} pp_dim;
#define PP_NDIMS 6

/* At most this many tokens in a rank order (each dimension at most twice). */
#define PP_PLACE_MAX_TOKENS (2 * PP_NDIMS)

/* A plan placed on a system.  Plain data, no allocation: fill with
 * pp_place_build, read anywhere.  order/stride number the ranks; the tok*
 * fields number the GPUs and are filled only for a split order. */
typedef struct pp_placement {
	int norder;                 /* dimensions the order names, innermost first */
	pp_dim order[PP_NDIMS];     /* ... in that order */
	long long size[PP_NDIMS];   /* degree of each dimension (ep: 1) */
	long long stride[PP_NDIMS]; /* rank stride of each dimension */
	long long ranks;            /* product of the sizes */
	int gpus_per_node;
	int domain;                /* GPUs per NVLink domain (1 without NVLink) */
	const long long *rank_gpu; /* optional rank -> global GPU permutation (not owned);
	                              NULL: rank r runs on GPU r (split: the token map) */
	pp_layout group[PP_NGROUPS];
	bool split; /* some dimension named twice (dim:N ... dim) */
	int ntok;   /* split: the tokens, innermost first */
	pp_dim tok[PP_PLACE_MAX_TOKENS];
	int tok_part[PP_PLACE_MAX_TOKENS];         /* 0 whole, 1 inner (c % N), 2 rest (c / N) */
	long long tok_radix[PP_PLACE_MAX_TOKENS];  /* coordinates the token spans */
	long long tok_stride[PP_PLACE_MAX_TOKENS]; /* its GPU stride */
	long long split_n[PP_NDIMS];               /* N of a split dimension, else 0 */
} pp_placement;

/*
 * Place a resolved plan (pp_plan_resolve) on `s` in rank order: parse the
 * order once, derive strides and every group's layout.  `out` is
 * caller-owned; nothing is allocated.
 */
void pp_place_build(const pp_plan *p, const pp_system *s, pp_placement *out);

/*
 * The last placement built, under what shapes it: the system (its node and
 * NVLink sizes), the degrees and the rank order.  A workspace keeps one
 * (pp_work, workload.h) so that a search places each (degrees, order) once.
 */
typedef struct pp_place_memo {
	bool valid; /* false: empty (pp_work_init) */
	const void *system;
	int dims[9]; /* tp, tp2, cp, dp, pp, ep, etp, summa, order length */
	char order[PP_ORDER_MAX];
	pp_placement place;
} pp_place_memo;

/* pp_place_build through `memo`: the memo's placement when the system, the
 * degrees and the order are its own, else built and kept in it. */
void pp_place_build_memo(const pp_plan *p, const pp_system *s, pp_place_memo *memo,
                         pp_placement *out);

/* Coordinates of `rank` along each dimension (coords[PP_NDIMS], ep = 0). */
void pp_place_coords(const pp_placement *pl, long long rank, int coords[PP_NDIMS]);
/* The rank at `coords`; the inverse of pp_place_coords. */
long long pp_place_rank(const pp_placement *pl, const int coords[PP_NDIMS]);

/* The GPU (before any rank_gpu permutation) of the rank at `coords`: the
 * rank itself for a plain order, the mixed-radix token number for a split. */
long long pp_place_gpu_of(const pp_placement *pl, const int coords[PP_NDIMS]);

/* Where a rank runs. */
typedef struct pp_gpu_loc {
	long long gpu;    /* global GPU index */
	long long node;   /* gpu / gpus_per_node */
	int local;        /* gpu % gpus_per_node */
	long long domain; /* gpu / nvlink domain size */
} pp_gpu_loc;
void pp_place_locate(const pp_placement *pl, long long rank, pp_gpu_loc *out);

/*
 * Layout of the single-dimension group (`dim`) that `rank` belongs to, derived
 * from the rank -> GPU map by walking its members: the size, and how many
 * members share `rank`'s NVLink domain.  O(group size).  With the default
 * map this equals the closed-form layout pp_place_build stores for a group
 * whose stride divides or is a multiple of the domain size.
 */
pp_layout pp_place_layout_walk(const pp_placement *pl, pp_dim dim, long long rank);

/*
 * Layout of one pipeline link: the two members of rank 0's pipeline at
 * stages `a` and `b` (0 <= a, b < pp), located through the placement (a
 * split order's map, rank_gpu when set): size 2, per_domain 2 when both run
 * in one NVLink domain, else 1.  A pipeline send crosses one link, so its
 * time is this pair's (docs/placement.md, "Per-hop pipeline sends").
 */
pp_layout pp_place_pp_link(const pp_placement *pl, int a, int b);

/* Layouts of all groups under the plan's rank order (pp_place_build's
 * group[]), into out[PP_NGROUPS]; and of one group. */
void pp_plan_layouts(const pp_plan *p, const pp_system *s, pp_layout out[PP_NGROUPS]);
pp_layout pp_group_layout(const pp_plan *p, const pp_system *s, pp_group group);

#ifdef __cplusplus
}
#endif
#endif
