/*
 * GPipe: every forward, then every backward; each rank holds all m
 * micro-batches' activations at its peak.
 */
#include "sched_int.h"

static double inflight(const pp_plan *p, int stage)
{
	(void)stage;
	return (double)p->microbatches;
}

/* The head's micro-batches wait for their backward too. */
static double head_held(const pp_plan *p)
{
	return (double)p->microbatches;
}

static void iteration(const pp_plan *p, const pp_stage_time *st, pp_iteration *out)
{
	double sum_w, sends;
	double fill = ppi_sched_linear_steady(p, st, 1, out, &sum_w, &sends);
	if (p->pp > 1) {
		/* Every forward, then every backward: a rank's sends queue on its
		 * link behind the compute, which paces them unless one transfer
		 * (pp_s / 2) outlasts a forward or a backward, the slowest hop's
		 * first; the fill carries every hop's sends once. */
		const pp_stage_time *k = &st[out->bottleneck_stage];
		double send = 0;
		for (int i = 0; i < p->pp; i++)
			send = st[i].pp_s / 2 > send ? st[i].pp_s / 2 : send;
		double period =
		    (k->fwd_s > send ? k->fwd_s : send) + (k->bwd_s > send ? k->bwd_s : send);
		ppi_sched_linear_exposed_sends(p, st, period, out);
		fill += sends;
		out->bubble_s = fill > 0 ? fill : 0;
	}
}

static bool order(int p, long long m, int v, int r, pp_sched_push push, void *ctx)
{
	(void)p;
	(void)v;
	bool ok = true;
	for (long long i = 0; i < m; i++)
		ok &= push(ctx, r, PP_TASK_F, i, 0);
	for (long long i = 0; i < m; i++)
		ok &= push(ctx, r, PP_TASK_B, i, 0);
	return ok;
}

static const char *const torchtitan[] = {"GPipe", NULL};

const pp_schedule_type pp_sched_gpipe = {
    .id = PP_SCHED_GPIPE,
    .name = "gpipe",
    .description = "GPipe: all forwards, then all backwards",
    .uses_vp = false,
    .virtual_form = PP_SCHED_GPIPE,
    .flat_form = PP_SCHED_GPIPE,
    .validate = ppi_sched_flat_validate,
    .fold = PP_FOLD_LINEAR,
    .chunks = ppi_sched_linear_chunks,
    .virtual_stage = ppi_sched_linear_virtual_stage,
    .head_stage = ppi_sched_linear_head,
    .param_copies = 1,
    .inflight = inflight,
    .head_held = head_held,
    .sends_per_microbatch = ppi_sched_linear_sends,
    .links = ppi_sched_linear_links,
    .iteration = iteration,
    .bubble_fraction = ppi_sched_1f1b_bubble_fraction,
    .floor_bubble_s = NULL,
    .sim_shape = ppi_sched_flat_sim_shape,
    .sim_order = order,
    .megatron = PP_MEGATRON_NONE,
    .torchtitan = torchtitan,
    .search_default = false,
    .at_pp1 = false,
};
