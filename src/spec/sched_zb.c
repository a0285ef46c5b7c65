/*
 * Zero-bubble ZB-H1 (Qi et al. 2023): the backward split into input (B) and
 * weight (W) gradients, W deferred into the drain; 1F1B's memory.
 */
#include "sched_int.h"

static void iteration(const pp_plan *p, const pp_stage_time *st, pp_iteration *out)
{
	double m = (double)p->microbatches, sum_w, sends;
	double fill = ppi_sched_linear_steady(p, st, 1, out, &sum_w, &sends);
	if (p->pp > 1) {
		const pp_stage_time *k = &st[out->bottleneck_stage];
		double P = p->pp;
		/* 1F1B's cycles of sends (sched_1f1b.c), its fill's sends */
		ppi_sched_linear_exposed_sends(p, st, ppi_sched_1f1b_period_s(p, st), out);
		fill += sends;
		/* ZB-H1: the input-gradient chain runs ahead of the deferred weight
		 * gradients, (p - 1)(F + B); the drain hides the W that rank r > 0
		 * deferred, up to one forward: min(F, (min(m, p) - 1) W) (the
		 * simulator's ZB-H1 order, derived and checked in test_sim.c). */
		fill -= sum_w - k->wgrad_compute_s;
		double n = (m < P ? m : P) - 1, hid = n * k->wgrad_compute_s;
		fill -= hid < k->fwd_s ? hid : k->fwd_s;
		out->bubble_s = fill > 0 ? fill : 0;
	}
}

static double bubble_fraction(int p, long long m, int v)
{
	(void)p;
	(void)m;
	(void)v;
	return 0;
}

/* ZB-H1 (Qi et al. 2023, Fig. 3): 1F1B's in-flight count with one more
 * warm-up forward; rank r runs the first r backwards as B only and their W
 * at the very end, filling the drain. */
static bool order(int p, long long m, int v, int r, pp_sched_push push, void *ctx)
{
	(void)v;
	bool ok = true;
	long long f = 0, b = 0, nw = p - r < m ? p - r : m;
	long long deferred = 0;
	for (; f < nw; f++)
		ok &= push(ctx, r, PP_TASK_F, f, 0);
	for (int i = 0; i < r && b < m; i++) {
		ok &= push(ctx, r, PP_TASK_BI, b++, 0);
		deferred++;
		if (f < m)
			ok &= push(ctx, r, PP_TASK_F, f++, 0);
	}
	while (f < m) {
		ok &= push(ctx, r, PP_TASK_B, b++, 0);
		ok &= push(ctx, r, PP_TASK_F, f++, 0);
	}
	while (b < m - 1)
		ok &= push(ctx, r, PP_TASK_B, b++, 0);
	if (b < m) {
		if (r > 0) {
			ok &= push(ctx, r, PP_TASK_BI, b, 0);
			ok &= push(ctx, r, PP_TASK_W, b, 0);
		} else {
			ok &= push(ctx, r, PP_TASK_B, b, 0);
		}
		b++;
	}
	for (long long i = 0; i < deferred; i++)
		ok &= push(ctx, r, PP_TASK_W, i, 0);
	return ok;
}

static const char *const aliases[] = {"zb-h1", NULL};
static const char *const torchtitan[] = {"InterleavedZeroBubble", "ZBVZeroBubble", NULL};

const pp_schedule_type pp_sched_zb = {
    .id = PP_SCHED_ZB,
    .name = "zb",
    .aliases = aliases,
    .description = "zero-bubble ZB-H1: weight gradients deferred into the drain",
    .uses_vp = false,
    .virtual_form = PP_SCHED_ZB,
    .flat_form = PP_SCHED_ZB,
    .validate = ppi_sched_flat_validate,
    .fold = PP_FOLD_LINEAR,
    .chunks = ppi_sched_linear_chunks,
    .virtual_stage = ppi_sched_linear_virtual_stage,
    .head_stage = ppi_sched_linear_head,
    .param_copies = 1,
    .inflight = ppi_sched_1f1b_inflight,
    .head_held = ppi_sched_one_held,
    .sends_per_microbatch = ppi_sched_linear_sends,
    .links = ppi_sched_linear_links,
    .split_wgrad = true,
    .fb_alternate = true,
    .iteration = iteration,
    .bubble_fraction = bubble_fraction,
    .floor_bubble_s = NULL,
    .sim_shape = ppi_sched_flat_sim_shape,
    .sim_order = order,
    .megatron = PP_MEGATRON_NONE,
    .torchtitan = torchtitan,
    .search_default = true,
    .at_pp1 = false,
};
