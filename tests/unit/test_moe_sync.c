/*
 * A dropless MoE layer's host sync (framework.moe_host_sync) and the
 * backward that follows it.  The sync empties the host's queue; a backward
 * the schedule issues right after one starts without the host's lead, so
 * its first block, the experts' backward (issue-bound: one GEMM a local
 * expert), takes its issue time and the attention's backward after it its
 * GPU time.  The extra over max(host, GPU), worked here from the profile's
 * own entries, is charged once per backward chunk under 1F1B and
 * interleaved (vp chunks a rank), on every paired layer under combined 1F1B
 * (--ep-overlap), on every layer when a full recompute re-ran the experts
 * (and synced) just before, and not at all without a pipeline or under
 * GPipe.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/cost.h"
#include "paraplan/paraplan.h"
#include "pp_test.h"

static pp_estimate est;
static pp_stage_profile prof;
static pp_work ws;

/* The MoE layers' GPU and issue seconds in the phases of `phases` (a bit
 * per pp_phase), split at the experts' first GEMM: part 0 the attention
 * side, part 1 the experts. */
static void split_sums(const pp_stage_profile *pr, unsigned phases, double g[2], double h[2],
                       double *layers)
{
	int part = 0;
	g[0] = g[1] = h[0] = h[1] = *layers = 0;
	for (int i = 0; i < pr->n; i++) {
		const pp_profile_entry *e = &pr->e[i];
		if (e->coll || e->unit != PP_UNIT_MOE_LAYERS)
			continue;
		if (strcmp(e->name, "expert_fc1") == 0)
			part = 1;
		if (!(phases & 1u << e->phase))
			continue;
		g[part] += e->seconds * e->count * e->times;
		h[part] += e->host_s * e->count * e->times;
		*layers = e->times;
	}
	assert_int_equal(part, 1);
	assert_true(*layers > 0);
}

/* The per-layer extra of a backward (input and weight gradients) that
 * starts with the host's queue empty. */
static double empty_start_extra(const pp_stage_profile *pr, double *layers)
{
	double g[2], h[2];
	split_sums(pr, 1u << PP_PHASE_BWD_INPUT | 1u << PP_PHASE_BWD_WEIGHT, g, h, layers);
	/* the experts' backward is issue-bound, the attention's GPU-bound */
	assert_true(h[1] > g[1]);
	assert_true(g[0] > h[0]);
	double over = h[1] + g[0] - fmax(h[0] + h[1], g[0] + g[1]);
	assert_true(over > 0);
	return over / *layers;
}

/* What the sync adds to the recompute itself: two queues, split at the
 * experts' first GEMM, in place of one. */
static double recompute_split(const pp_stage_profile *pr)
{
	double g[2], h[2], layers;
	split_sums(pr, 1u << PP_PHASE_RECOMPUTE, g, h, &layers);
	assert_true(h[1] > 0);
	return fmax(g[0], h[0]) + fmax(g[1], h[1]) - fmax(g[0] + g[1], h[0] + h[1]);
}

static void setup(pp_model *m, pp_system *s, pp_job *j, pp_plan *p, pp_recompute rc, int pp)
{
	pp_error err;
	/* qwen3-30b-a3b on H100s, ep 8, 4k tokens a micro-batch: 16 local
	 * experts, each a GEMM the host issues apart (Megatron-Bridge's H100
	 * recipe runs it at pp 2) */
	assert_int_equal(pp_model_preset("qwen3-30b-a3b", m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", s, &err), PP_OK);
	assert_int_equal(pp_system_set_framework(s, "megatron", &err), PP_OK);
	assert_rel(s->moe_host_sync, 2, 0);
	assert_int_equal(pp_system_compute_model(s, &err), PP_OK);
	pp_job_init(j);
	j->global_batch = 64;
	j->seq_len = 4096;
	pp_plan_init(p);
	p->pp = pp;
	p->ep = 8;
	p->recompute = rc;
	assert_int_equal(pp_estimate_run(m, s, j, p, 8 * pp, &est, &err), PP_OK);
	assert_int_equal(est.plan.ep, 8);
	assert_int_equal(est.plan.pp, pp);
	pp_work_init(&ws);
	assert_int_equal(pp_stage_profile_build(m, s, j, &est.plan, 0, &ws, &prof, &err), PP_OK);
}

static double bwd_with_sync_less_without(pp_system *s, const pp_plan *q)
{
	pp_stage_time t, u;
	s->moe_host_sync = 2;
	pp_stage_profile_sum(&prof, s, q, &t);
	s->moe_host_sync = 0;
	pp_stage_profile_sum(&prof, s, q, &u);
	s->moe_host_sync = 2;
	return t.bwd_compute_s - u.bwd_compute_s;
}

static void test_sync_bwd_by_schedule(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	pp_error err;
	setup(&m, &s, &j, &p, PP_RECOMPUTE_NONE, 2);
	double layers;
	double e = empty_start_extra(&prof, &layers);
	pp_plan q = est.plan;
	/* 1F1B: one backward chunk a rank */
	q.schedule = PP_SCHED_1F1B;
	q.vp = 1;
	assert_rel(bwd_with_sync_less_without(&s, &q), e, 1e-9);
	/* interleaved: vp chunks */
	q.schedule = PP_SCHED_INTERLEAVED;
	q.vp = 4;
	assert_rel(bwd_with_sync_less_without(&s, &q), 4 * e, 1e-9);
	/* the search's memoised path agrees with the profile */
	pp_stage_time t, v;
	pp_stage_profile_sum(&prof, &s, &q, &t);
	pp_work_init(&ws);
	assert_int_equal(pp_stage_cost(&m, &s, &j, &q, 0, &ws, &v, &err), PP_OK);
	assert_rel(v.bwd_compute_s, t.bwd_compute_s, 1e-9);
	/* GPipe runs the backwards back to back; no pipeline, no chunk after a
	 * forward: nothing */
	q.schedule = PP_SCHED_GPIPE;
	q.vp = 1;
	assert_true(fabs(bwd_with_sync_less_without(&s, &q)) <= 1e-12);
	q = est.plan;
	q.pp = 1;
	q.schedule = PP_SCHED_1F1B;
	q.vp = 1;
	assert_true(fabs(bwd_with_sync_less_without(&s, &q)) <= 1e-12);
	/* combined 1F1B: every paired layer, the unpaired micro-batches a
	 * chunk */
	q = est.plan;
	q.schedule = PP_SCHED_1F1B;
	q.vp = 1;
	q.ep_overlap = true;
	double mb = (double)q.microbatches;
	assert_true(mb > q.pp);
	double share = (mb - q.pp) / mb;
	assert_rel(bwd_with_sync_less_without(&s, &q), share * layers * e + (1 - share) * e, 1e-9);
}

/* A full recompute re-runs the experts' forward, sync included, right
 * before each layer's backward: every layer pays it, with or without a
 * pipeline. */
static void test_sync_bwd_recompute(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	setup(&m, &s, &j, &p, PP_RECOMPUTE_FULL, 1);
	double layers;
	double e = empty_start_extra(&prof, &layers);
	assert_rel(bwd_with_sync_less_without(&s, &est.plan) - recompute_split(&prof), layers * e,
	           1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sync_bwd_by_schedule),
	    cmocka_unit_test(test_sync_bwd_recompute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
