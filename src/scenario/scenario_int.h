/*
 * Private to the library: the resolved scenario's layout, so that estimate,
 * search, memory and cost can keep one on the stack or in a workspace (no
 * allocation per plan).  Public callers use the opaque pp_scenario.
 */
#ifndef PPI_SCENARIO_INT_H
#define PPI_SCENARIO_INT_H

#include "paraplan/scenario.h"

/* The shape of one micro-batch on one GPU, as every activation, operation
 * and transfer sees it. */
typedef struct ppi_mb_shape {
	double T;        /* tokens on this rank: mbs * seq / (cp * tp2) */
	double S;        /* keys each query attends over: the full sequence */
	double n2;       /* 2D TP's n_2 (plan.tp2); 1 = 1D TP */
	double kv_extra; /* 2D TP: tokens of the gathered K, V beyond T */
	double t;        /* tensor parallelism (n_1) */
	double sd;       /* sequence-parallel divisor: t with SP (or SUMMA) and t > 1, else 1 */
	double wb;       /* bytes per weight element: 4 under FP32, else 2 */
	double nb;       /* SUMMA panels */
	bool fp8;
	double ab;         /* bytes per activation element: pp_activation_bytes */
	double saved_in_b; /* bytes per element of a GEMM input kept for backward */
	double fp8_w_b;    /* under fp8: bytes per GEMM parameter of its quantised weight
	                      (pp_fp8_weight_bytes for the system's GPU); 0 otherwise */
} ppi_mb_shape;

/* What one layer of a kind (0 dense, 1 MoE) puts on one GPU. */
typedef struct ppi_layer_kind {
	bool have;
	int index;     /* a layer of this kind (the first) */
	double mine;   /* its non-expert parameters on this GPU (split over n_1, or n_1 x n_2) */
	double mine_e; /* its routed-expert parameters on this GPU (over ep x etp) */
	double gemm;   /* of mine + mine_e, the GEMM weights (FP8 copies) */
	double lora;   /* its LoRA adapter parameters on this GPU when it trains (job.ft) */
} ppi_layer_kind;

struct pp_scenario {
	const pp_model *model;
	const pp_system *system;
	const pp_job *job;
	pp_plan plan; /* resolved */
	long long gpus;
	pp_placement place;
	ppi_mb_shape mb;
	int etp;
	double
	    weight_split; /* layer weights: over n_1 (replicated over n_2), n_1 x n_2 with SUMMA */
	int shard_dense;  /* ZeRO shards of dense state: dp x cp (x tp2 with shared weights) */
	int shard_expert; /* ... of expert state: tp x cp x dp / (ep x etp) */
	int split_first, split_mid, split_last; /* layers per pipeline rank */
	bool uniform_layers;                    /* one layer kind throughout */
	/* Parameters outside the layers that TP does not split: on the first
	 * stage the learned position table and an embedding norm, on the stage
	 * with the head the final norm. */
	double first_extra_params, head_extra_params;
	ppi_layer_kind kind[2];
	/* The plan's schedule type and the rank of its head (schedule_type.h),
	 * looked up once per plan. */
	const struct pp_schedule_type *sched;
	int head_stage;
};

/* Owned copies behind a public handle. */
typedef struct ppi_scenario_box {
	pp_scenario sc;
	pp_model model;
	pp_system system;
	pp_job job;
} ppi_scenario_box;

/* The micro-batch shape of a (resolved) plan. */
void ppi_mb_shape_init(ppi_mb_shape *out, const pp_job *job, const pp_plan *p);

/*
 * Fill `sc` from inputs whose plan is already resolved (pp_plan_resolve):
 * pointers to m, s and job are kept (they must outlive sc), the plan is
 * copied.  Allocates nothing.
 */
/* ppi_scenario_init with the placement from `memo` (a workspace's,
 * pp_work.place_memo) when the system, the degrees and the rank order are the
 * last plan's (NULL: none). */
void ppi_scenario_init_ws(pp_scenario *sc, const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *resolved, long long gpus, pp_place_memo *memo);
void ppi_scenario_init(pp_scenario *sc, const pp_model *m, const pp_system *s, const pp_job *job,
                       const pp_plan *resolved, long long gpus);

/* Layers of one kind on pipeline rank `stage`, and a representative index. */
typedef struct ppi_stage_kinds {
	int layers;
	int counts[2];
	int index[2]; /* -1 when the stage has no layer of the kind */
	/* Of counts[k], the layers below --freeze layers:N (wholly frozen),
	 * and one of them (-1: none); 0 without it. */
	int frozen[2];
	int frozen_index[2];
} ppi_stage_kinds;
void ppi_scenario_stage_kinds(const pp_scenario *sc, int stage, ppi_stage_kinds *out);

/* The parameters of a pipeline rank on one GPU split by what trains under
 * the job's fine-tuning (job.ft; docs/finetune.md), before ZeRO sharding:
 * trainable dense (adapters included) and expert parameters, frozen ones,
 * and of the frozen the layers' GEMM weights (stored NF4 under
 * --base-weights nf4).  Full training: all trainable, none frozen. */
typedef struct ppi_stage_train {
	double dense, experts;               /* trainable */
	double frozen_dense, frozen_experts; /* frozen */
	double frozen_gemm;                  /* of the frozen, the layers' GEMM weights */
	double lora;                         /* of dense, the adapters */
	double layer_train_max;              /* the most trainable parameters of one layer */
} ppi_stage_train;
void ppi_scenario_stage_train(const pp_scenario *sc, int stage, const ppi_stage_kinds *k,
                              ppi_stage_train *out);

#endif
