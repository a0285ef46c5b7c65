/*
 * Private to the workload module: the layer builder's context (ops.c) and
 * what the fine-tuning transforms (ops_ft.c) take from it.
 */
#ifndef PPI_OPS_INT_H
#define PPI_OPS_INT_H

#include <stdbool.h>

#include "paraplan/workload.h"

typedef struct ppi_ops {
	const pp_model *m;
	const pp_job *job;
	const pp_plan *p;
	pp_work *w;
	double T;  /* tokens of one micro-batch on this CP rank */
	double S;  /* keys each query attends over (full sequence) */
	double t;  /* tensor parallelism (n_1 under 2D TP) */
	double n2; /* 2D TP: n_2 (plan.tp2), splits the sequence; 1 = 1D TP */
	double sd; /* sequence-parallel divisor: t with SP (or SUMMA), else 1 */
	double wb; /* bytes per weight element in GEMMs */
	double ab; /* bytes per activation element (pp_activation_bytes) */
	double nb; /* SUMMA panels */
	bool summa;
	bool fp8;
} ppi_ops;

/* A new op of the unit under construction (NULL when the unit is full:
 * w->overflow set). */
pp_op *ppi_ops_add_op(ppi_ops *c, const char *name, pp_op_kind kind, pp_phase phase);
/* A GEMM (M x K) . (K x N), `count` instances, forward, both gradients and
 * the recompute when `recompute`. */
void ppi_ops_gemm(ppi_ops *c, const char *name, double M, double K, double N, double count,
                  bool recompute);
/* Fine-tuning (job.ft) on the layer's work just built: ops_ft.c. */
void ppi_ops_ft_layer(ppi_ops *c, int layer, bool full_rc);
/* The unit's forward ops and collectives alone (a frozen embedding). */
void ppi_ops_ft_forward_only(ppi_ops *c);
/* The unit without its weight gradients (a frozen head). */
void ppi_ops_ft_no_wgrad(ppi_ops *c);

#endif
