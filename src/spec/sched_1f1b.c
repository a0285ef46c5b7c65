/*
 * 1F1B (PipeDream-Flush, Megatron-LM's default): after p - r - 1 warm-up
 * forwards rank r alternates one forward and one backward.
 */
#include "sched_int.h"

/*
 * Blocking exchanges (pp_block_s > 0: Megatron-Core's
 * forward_backward_pipelining_without_interleaving, docs/placement.md).
 * Rank r runs F, the exchange X_r with r + 1 (its activation out, the
 * gradient in), B, the exchange X_{r-1} with r - 1; an exchange starts when
 * both ranks reach it.  With T_{r,i} the end of X_r in step i (seconds of
 * max-plus algebra):
 *   T_{r,i} = x_r + max(T_{r-1,i-1} + F_r, T_{r+1,i} + B_{r+1}),
 * rank 0 closing its loop with B_0 + F_0, the last rank with F + B.  Every
 * cycle of this graph is a union of the ranks' own loops (F_r + B_r + x_{r-1}
 * + x_r over one step; a window of ranks averages theirs), so the period is
 * the largest c_r + e_r (e_r = pp_block_s, c_r = fwd_s + bwd_s) and the
 * iteration is 1F1B's with every rank's time c_r + e_r: m times the slowest,
 * the others once (the first micro-batch down and back, each hop's
 * exchange in it; sum_r e_r = 2 sum x).  Against the simulator (which runs
 * Megatron's calls, the warm-up's and cool-down's sends and receives one
 * after the other): exact where the last rank, with the head, is the
 * bottleneck; with alike ranks (an inner rank the bottleneck) one transfer
 * over, at any m (tests/unit/test_sim.c, test_blocking_exchanges).
 */
static void blocking(const pp_plan *p, const pp_stage_time *st, pp_iteration *out)
{
	double slow = -1, sum = 0;
	int b = 0;
	for (int i = 0; i < p->pp; i++) {
		double t = st[i].fwd_s + st[i].bwd_s + st[i].pp_block_s;
		sum += t;
		if (t > slow) {
			slow = t;
			b = i;
		}
	}
	ppi_sched_pace(st, b, (double)p->microbatches, out);
	out->pp_s = (double)p->microbatches * st[b].pp_block_s;
	out->bubble_s = sum - slow;
}

/* The steady state at the period of the sends' cycles (sched_int.h): the
 * sends the slowest window cannot hide are on the critical path, m times;
 * the fill and drain carry every other stage's sends once. */
static void iteration(const pp_plan *p, const pp_stage_time *st, pp_iteration *out)
{
	if (p->pp > 1 && st[0].pp_block_s > 0) {
		blocking(p, st, out);
		return;
	}
	double sum_w, sends;
	double fill = ppi_sched_linear_steady(p, st, 1, out, &sum_w, &sends);
	if (p->pp > 1) {
		ppi_sched_linear_exposed_sends(p, st, ppi_sched_1f1b_period_s(p, st), out);
		fill += sends;
		out->bubble_s = fill > 0 ? fill : 0;
	}
}

static bool order(int p, long long m, int v, int r, pp_sched_push push, void *ctx)
{
	(void)v;
	bool ok = true;
	long long nw = p - r - 1 < m ? p - r - 1 : m;
	for (long long i = 0; i < nw; i++)
		ok &= push(ctx, r, PP_TASK_F, i, 0);
	for (long long i = 0; i < m - nw; i++) {
		ok &= push(ctx, r, PP_TASK_F, nw + i, 0);
		ok &= push(ctx, r, PP_TASK_B, i, 0);
	}
	for (long long i = m - nw; i < m; i++)
		ok &= push(ctx, r, PP_TASK_B, i, 0);
	return ok;
}

static const char *const torchtitan[] = {"1F1B", NULL};

const pp_schedule_type pp_sched_1f1b = {
    .id = PP_SCHED_1F1B,
    .name = "1f1b",
    .description = "1F1B: one forward, one backward after p - r - 1 warm-up forwards",
    .uses_vp = false,
    .virtual_form = PP_SCHED_INTERLEAVED,
    .flat_form = PP_SCHED_1F1B,
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
    .iteration = iteration,
    .bubble_fraction = ppi_sched_1f1b_bubble_fraction,
    .floor_bubble_s = ppi_sched_1f1b_floor_bubble_s,
    .sim_shape = ppi_sched_flat_sim_shape,
    .sim_order = order,
    .megatron = PP_MEGATRON_DEFAULT,
    .torchtitan = torchtitan,
    .search_default = true,
    .at_pp1 = true,
    .p2p_exchange = true,
    .fb_alternate = true,
};
