/*
 * DualPipeV (deepseek-ai/DualPipe, dualpipe/dualpipev.py; DualPipe "cut in
 * half"), docs/dualpipe.md: the model in 2p chunks, rank r holding chunks r
 * and 2p - 1 - r (one copy of the parameters), every micro-batch entering at
 * rank 0 and turning at rank p - 1; the eight steps and the closed form of
 * DualPipe's V (sched_dualpipe.c) on n = p ranks and k = m micro-batches.
 */
#include <math.h>

#include "sched_int.h"
#include "util/util.h"

pp_status pp_dualpipev_validate(int pp, long long m, pp_error *err)
{
	if (pp < 1)
		return ppi_fail(err, "", "plan.pp", "dualpipev needs pp of at least 1, got %d", pp);
	if (m < 2LL * pp)
		return ppi_fail(err, "", "plan.microbatches",
		                "dualpipev needs at least 2 x pp (%d) micro-batches, got %lld",
		                2 * pp, m);
	return PP_OK;
}

static pp_status validate(const pp_plan *p, pp_error *err)
{
	PPI_TRY(ppi_sched_flat_validate(p, err));
	/* the micro-batch count is 0 until resolve knows it (schedule_type.h) */
	long long m = p->microbatches > 0 ? p->microbatches : 2LL * p->pp;
	return pp_dualpipev_validate(p->pp, m, err);
}

static pp_status sim_shape(int p, long long m, int v, int *chunks, pp_error *err)
{
	if (v != 1)
		return ppi_fail(err, "", "plan.vp", "vp %d: dualpipev has no virtual stages", v);
	PPI_TRY(pp_dualpipev_validate(p, m, err));
	*chunks = 2;
	return PP_OK;
}

static bool order(int p, long long m, int v, int r, pp_sched_push push, void *ctx)
{
	(void)v;
	return ppi_dp_order(p, false, m, r, push, ctx);
}

double pp_dualpipev_pipeline_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return ppi_dp_v_pipeline_s(pp, (double)m, t);
}

double pp_dualpipev_bubble_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return ppi_dp_v_pipeline_s(pp, (double)m, t) - ppi_dp_v_work_s(pp, (double)m, t);
}

double pp_dualpipev_floor_s(int pp, long long m, const pp_dualpipe_times *t)
{
	return ppi_dp_v_floor_s(pp, (double)m, t);
}

void pp_dualpipev_iteration_part(const pp_plan *plan, const pp_stage_time *st, pp_iteration *out)
{
	ppi_dp_pipeline_part(plan, st, false, out);
}

static void sim_stage(const pp_plan *p, const pp_stage_time *t, double *scale, double *pair_speedup)
{
	ppi_dp_sim_stage(p, t, 2, scale, pair_speedup);
}

/* Table 2 with 2 pp stages, F = B = 2W alike (sched_dualpipe.c). */
static double bubble_fraction(int p, long long m, int v)
{
	(void)v;
	return ((double)p - 1) * 1.5 / (2.0 * (double)m * 2);
}

/* No bound below the steady state (sched_dualpipe.c's floor_bubble_s). */
static double floor_bubble_s(const pp_plan *p, double others_s, double send_s)
{
	(void)p;
	(void)others_s;
	(void)send_s;
	return -INFINITY;
}

static int chunks(const pp_plan *p)
{
	(void)p;
	return 2;
}

static int virtual_stage(const pp_plan *p, int rank, int chunk)
{
	return chunk == 0 ? rank : 2 * p->pp - 1 - rank;
}

/* The head (chunk 2p - 1) on rank 0, next to the embedding. */
static int head_stage(const pp_plan *p)
{
	(void)p;
	return 0;
}

double pp_dualpipev_inflight(int pp, long long m, int rank)
{
	(void)m;
	(void)rank;
	return (2.0 * pp + 1) / 2; /* 2 pp + 1 chunks of half the rank's layers */
}

static double inflight(const pp_plan *p, int stage)
{
	return pp_dualpipev_inflight(p->pp, p->microbatches, stage);
}

double pp_dualpipev_param_copies(void)
{
	return 1;
}

double pp_dualpipev_sends_per_microbatch(int pp, int rank)
{
	if (pp < 2)
		return 0;
	/* twice through each rank; the V's ends turn on the rank itself (rank pp
	 * - 1) or end there (rank 0) */
	return rank == 0 || rank == pp - 1 ? 2 : 4;
}

/* The V: each micro-batch goes down (chunk 0) and up again (chunk 1). */
static double sends(const pp_plan *p)
{
	(void)p;
	return 2;
}

static int links(const pp_plan *p, int stage, pp_sched_link out[PP_SCHED_MAX_LINKS])
{
	out[0].peer = stage + 1 < p->pp ? stage + 1 : stage;
	out[0].count = stage + 1 < p->pp ? 1 : 0;
	out[1].peer = stage > 0 ? stage - 1 : stage;
	out[1].count = stage > 0 ? 1 : 0;
	return 2;
}

const pp_schedule_type pp_sched_dualpipev = {
    .id = PP_SCHED_DUALPIPEV,
    .name = "dualpipev",
    .description = "DualPipeV: DualPipe cut in half, one copy folded into a V, F&B pairs",
    .uses_vp = false,
    .virtual_form = PP_SCHED_DUALPIPEV,
    .flat_form = PP_SCHED_DUALPIPEV,
    .validate = validate,
    .fold = PP_FOLD_V,
    .chunks = chunks,
    .virtual_stage = virtual_stage,
    .head_stage = head_stage,
    .param_copies = 1,
    .inflight = inflight,
    .head_held = ppi_sched_one_held,
    .sends_per_microbatch = sends,
    .links = links,
    .si = false,
    .split_wgrad = true,
    .iteration = pp_dualpipev_iteration_part,
    .bubble_fraction = bubble_fraction,
    .floor_bubble_s = floor_bubble_s,
    .sim_shape = sim_shape,
    .sim_order = order,
    .sim_stage = sim_stage,
    .megatron = PP_MEGATRON_NONE,
    .torchtitan = NULL,
    .search_default = false,
    .at_pp1 = false,
};
