/*
 * The training stack's terms in compute time (include/paraplan/cost.h,
 * pp_stack_terms; docs/kernel.md "Training stacks"): each the op's time with
 * the stack's kernels as they are, less its time with that one term turned
 * off, summed over what a pipeline rank runs in an iteration.
 */
#include <stdlib.h>
#include <string.h>

#include "paraplan/cost.h"
#include "paraplan/scenario.h"
#include "util/util.h"

void pp_op_stack_terms(const pp_gpu *g, pp_precision prec, const pp_op *op, pp_stack_terms *out)
{
	memset(out, 0, sizeof *out);
	if (!g->kern.valid)
		return;
	double t = pp_op_time(g, prec, op);
	pp_gpu k = *g;
	k.kern.eager_elementwise = 0;
	out->eager_s = t - pp_op_time(&k, prec, op);
	k = *g;
	k.kern.autocast_weight_cast = 0;
	out->autocast_s = t - pp_op_time(&k, prec, op);
	k = *g;
	k.kern.grad_accum_kernel = 0;
	out->grad_accum_s = t - pp_op_time(&k, prec, op);
	k = *g;
	k.kern.unfused_cross_entropy = 0;
	out->unfused_ce_s = t - pp_op_time(&k, prec, op);
	/* Without a launch cost: CUDA graphs on the stack's fractions, no
	 * isolated-call fixed times on measured tables. */
	k = *g;
	k.kern.cuda_graphs = 1;
	k.kern.gemm_fixed_s = k.kern.attn_fixed_s = k.kern.mem_fixed_s = 0;
	out->launch_s = t - pp_op_time(&k, prec, op);
}

/* Add the terms of every op in `w`, `times` times. */
static void add_work(const pp_gpu *g, pp_precision prec, const pp_work *w, double times,
                     pp_stack_terms *sum)
{
	for (int i = 0; i < w->nops; i++) {
		pp_stack_terms one;
		pp_op_stack_terms(g, prec, &w->ops[i], &one);
		sum->launch_s += one.launch_s * times;
		sum->eager_s += one.eager_s * times;
		sum->autocast_s += one.autocast_s * times;
		sum->grad_accum_s += one.grad_accum_s * times;
		sum->unfused_ce_s += one.unfused_ce_s * times;
	}
}

/* The iteration's compute on rank `stage` under `s` less under `off` (the
 * same system with one term turned off), into *out; w is scratch. */
static pp_status compute_delta(const pp_model *m, const pp_system *s, const pp_system *off,
                               const pp_job *job, const pp_plan *plan, int stage, pp_work *w,
                               double *out, pp_error *err)
{
	pp_stage_time with, without;
	pp_work_init(w);
	PPI_TRY(pp_stage_cost(m, s, job, plan, stage, w, &with, err));
	pp_work_init(w);
	PPI_TRY(pp_stage_cost(m, off, job, plan, stage, w, &without, err));
	double mbs = plan->microbatches > 0 ? (double)plan->microbatches : 1;
	*out = (with.fwd_compute_s + with.bwd_compute_s - without.fwd_compute_s -
	        without.bwd_compute_s) *
	       mbs;
	return PP_OK;
}

pp_status pp_stage_stack_terms(const pp_model *m, const pp_system *s, const pp_job *job,
                               const pp_plan *plan, int stage, pp_stack_terms *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	double mbs = plan->microbatches > 0 ? (double)plan->microbatches : 1;
	pp_work *w = ppi_malloc(sizeof *w);
	pp_system *off = ppi_malloc(sizeof *off);
	if (!w || !off) {
		free(w);
		free(off);
		return ppi_oom(err);
	}
	pp_status st = PP_OK;
	/* stage entries, not ops: the compute with each less without */
	if (s->fsdp_grad_passes >= 0.5 || s->fsdp2_copies >= 0.5) {
		*off = *s;
		off->fsdp_grad_passes = off->fsdp2_copies = 0;
		st = compute_delta(m, s, off, job, plan, stage, w, &out->fsdp_grad_s, err);
	}
	if (st == PP_OK && s->moe_host_sync >= 0.5 && m->moe.num_experts > 0) {
		*off = *s;
		off->moe_host_sync = 0;
		st = compute_delta(m, s, off, job, plan, stage, w, &out->moe_sync_s, err);
	}
	free(off);
	if (st != PP_OK) {
		free(w);
		return st;
	}
	if (!s->gpu.kern.valid) {
		free(w);
		return PP_OK;
	}
	pp_work_init(w);
	pp_stack_terms mb;
	memset(&mb, 0, sizeof mb);
	int n = pp_stage_layers(m, plan, stage);
	for (int i = 0; i < n; i++) {
		pp_layer_work(m, job, plan, pp_stage_layer_index(m, plan, stage, i), w);
		add_work(&s->gpu, job->precision, w, 1, &mb);
	}
	if (stage == 0) {
		pp_embedding_work(m, job, plan, w);
		add_work(&s->gpu, job->precision, w, 1, &mb);
	}
	if (stage == plan->pp - 1) {
		pp_head_work(m, job, plan, w);
		add_work(&s->gpu, job->precision, w, 1, &mb);
	}
	free(w);
	out->launch_s = mb.launch_s * mbs;
	out->eager_s = mb.eager_s * mbs;
	out->autocast_s = mb.autocast_s * mbs;
	out->grad_accum_s = mb.grad_accum_s * mbs;
	out->unfused_ce_s = mb.unfused_ce_s * mbs;
	return PP_OK;
}
