/*
 * paraplan search: pruning returns exactly what exhaustive evaluation returns,
 * results do not depend on the thread count, every recommended plan fits, the
 * user's constraints hold, and the best plan is at least as fast as the plan
 * the authors of published runs used.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/calib.h"
#include "cost/cost_int.h"
#include "estimate/estimate_int.h"
#include "paraplan/paraplan.h"
#include "pp_test.h"

/* Plans kept by run(): the fewer, the more the time floor prunes. */
static int g_top_k = 20;

static pp_search *run(const char *model, const char *system, long long gpus, long long gbs, int seq,
                      const pp_search_space *space, bool exhaustive, int threads)
{
	pp_model m;
	pp_system s;
	pp_job job;
	pp_error err;
	assert_int_equal(pp_model_preset(model, &m, &err), PP_OK);
	assert_int_equal(pp_system_preset(system, &s, &err), PP_OK);
	pp_job_init(&job);
	job.global_batch = gbs;
	job.seq_len = seq;
	pp_search_options o;
	pp_search_options_init(&o);
	o.top_k = g_top_k;
	o.threads = threads;
	o.exhaustive = exhaustive;
	pp_search *srch;
	assert_int_equal(pp_search_new(&m, &s, &job, gpus, space, &o, &srch, &err), PP_OK);
	while (!pp_search_done(srch))
		assert_int_equal(pp_search_iterate(srch, &err), PP_OK);
	return srch;
}

static bool same_plan(const pp_plan *a, const pp_plan *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->dp == b->dp && a->cp == b->cp &&
	       a->ep == b->ep && a->etp == b->etp && a->vp == b->vp && a->mbs == b->mbs &&
	       a->zero == b->zero && a->recompute == b->recompute && a->sp == b->sp &&
	       a->schedule == b->schedule && a->first_stage_layers == b->first_stage_layers &&
	       a->last_stage_layers == b->last_stage_layers && strcmp(a->order, b->order) == 0;
}

static void assert_same_results(const pp_search *a, const pp_search *b)
{
	assert_int_equal(pp_search_count(a), pp_search_count(b));
	for (size_t i = 0; i < pp_search_count(a); i++) {
		const pp_estimate *x = pp_search_plan(a, i), *y = pp_search_plan(b, i);
		assert_true(same_plan(&x->plan, &y->plan));
		assert_true(x->time.iteration_s == y->time.iteration_s);
	}
	assert_int_equal(pp_search_pareto_count(a), pp_search_pareto_count(b));
	for (size_t i = 0; i < pp_search_pareto_count(a); i++)
		assert_true(
		    same_plan(&pp_search_pareto(a, i)->plan, &pp_search_pareto(b, i)->plan));
}

/* Spaces small enough to enumerate: dense, MoE, and one where memory is tight.
 * Pruning by memory and by time (the floor under a plan's time against the
 * K-th best and the front) returns the top K and the Pareto front that
 * exhaustive evaluation returns, for K = 20 and K = 1 (a tighter bound).
 * With DHelix's wshape in the space too: its floors (before the stages are
 * costed, from their seconds, from the layers' bounds; estimate.c) prune
 * only plans exhaustive evaluation, which pairs every one, leaves out. */
static void test_pruned_equals_exhaustive(void **state)
{
	(void)state;
	long long by_time = 0, w_by_time = 0, w_fit = 0;
	int w_listed = 0; /* wshape cases whose top-20 list holds a wshape plan */
	for (int top = 20; top >= 1; top -= 19) {
		g_top_k = top;
		const struct {
			const char *model, *system;
			long long gpus, gbs;
			int seq;
			bool tp2;    /* 2D TP and SUMMA too (n_2 gathers, panels in the floor) */
			bool wshape; /* 1f1b, interleaved, zb and wshape */
		} cases[] = {{"llama3-8b", "dgx-h100", 16, 64, 4096, false, false},
		             {"mixtral-8x7b", "dgx-h100", 16, 32, 4096, false, false},
		             {"llama2-70b", "dgx-a100-40g", 64, 128, 4096, false, false},
		             {"gpt-7.5b", "dgx-a100-80g", 32, 256, 2048, false, false},
		             {"gpt-7.5b", "lbnl-b200", 32, 64, 2048, true, false},
		             /* data parallel up to 128 with 1 sequence per replica:
		              * the exposed DP traffic is a large share of the
		              * time, and its term in the floor cuts more plans */
		             {"gpt-7.5b", "dgx-a100-80g", 128, 128, 2048, false, false},
		             {"llama3-8b", "dgx-h100", 16, 64, 4096, false, true},
		             {"mixtral-8x7b", "dgx-h100", 16, 32, 4096, false, true},
		             {"dhelix-llama-25b", "dhelix-a40", 32, 64, 8192, false, true}};
		for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
			pp_search_space space;
			pp_search_space_init(&space);
			if (cases[k].wshape)
				space.schedule_mask = 1u << PP_SCHED_1F1B |
				                      1u << PP_SCHED_INTERLEAVED |
				                      1u << PP_SCHED_ZB | 1u << PP_SCHED_WSHAPE;
			if (cases[k].tp2) {
				space.tp2.count = 3;
				space.tp2.values[0] = 1;
				space.tp2.values[1] = 2;
				space.tp2.values[2] = 4;
				space.summa_mask = 3u;
			}
			pp_search *fast = run(cases[k].model, cases[k].system, cases[k].gpus,
			                      cases[k].gbs, cases[k].seq, &space, false, 2);
			pp_search *full = run(cases[k].model, cases[k].system, cases[k].gpus,
			                      cases[k].gbs, cases[k].seq, &space, true, 1);
			pp_search_stats a, b;
			pp_search_get_stats(fast, &a);
			pp_search_get_stats(full, &b);
			print_message(
			    "%s on %lld, top %d: space %.0f, pruned %lld of which exhaustive "
			    "evaluated %lld; %lld of %lld that fit not timed\n",
			    cases[k].model, cases[k].gpus, top, a.space, a.pruned, b.evaluated,
			    a.pruned_time, a.evaluated - a.infeasible);
			assert_true(a.space == b.space);
			assert_int_equal(b.pruned, 0);
			assert_int_equal(b.pruned_time, 0);
			assert_int_equal(a.evaluated + a.pruned, b.evaluated);
			assert_true(a.pruned_time <= a.evaluated - a.infeasible);
			by_time += a.pruned_time;
			if (cases[k].wshape) {
				w_by_time += a.pruned_time;
				w_fit += a.evaluated - a.infeasible;
				bool any = false;
				for (size_t i = 0; i < pp_search_count(full); i++)
					any |= pp_search_plan(full, i)->plan.schedule ==
					       PP_SCHED_WSHAPE;
				if (top > 1 && any) /* wshape plans compete for the list */
					w_listed++;
			}
			assert_same_results(fast, full);
			pp_search_free(fast);
			pp_search_free(full);
		}
	}
	g_top_k = 20;
	/* The time floor did prune (else the equality above tests nothing new). */
	assert_true(by_time > 0);
	assert_true(w_by_time > w_fit / 2);
	/* wshape plans compete for the list (under the kernel model not on
	 * every case: Mixtral's at 16 H100 fall out of its top 20) */
	print_message("wshape in the top 20 of %d of 3 wshape cases\n", w_listed);
	assert_true(w_listed >= 2);
}

/* What the floors of a wshape plan (estimate.c) asked the cut with: the
 * largest floor and order-free floor over the calls of one evaluation. */
typedef struct floor_seen {
	double floor_s, order_free_s;
	int calls;
} floor_seen;

static bool see_floor(void *ctx, const pp_estimate *e, double floor_s, double order_free_s)
{
	(void)e;
	floor_seen *f = ctx;
	f->calls++;
	f->floor_s = fmax(f->floor_s, floor_s);
	f->order_free_s = fmax(f->order_free_s, order_free_s);
	return false; /* never cut: the evaluation runs every floor */
}

/* Every floor of a wshape plan lies under the plan's iteration time, over a
 * grid of dense and MoE models on H100, A100 and the A40 cluster (tp 1-16,
 * pp 1-8, mbs 1-2, each recompute and ZeRO stage). */
static void test_wshape_floors_under_time(void **state)
{
	(void)state;
	const struct {
		const char *model, *system;
		long long gpus;
	} cases[] = {{"llama3-8b", "dgx-h100", 16},        {"llama3-70b", "dgx-h100", 64},
	             {"mixtral-8x7b", "dgx-h100", 64},     {"dhelix-llama-25b", "dhelix-a40", 64},
	             {"dhelix-phi-31b", "dhelix-a40", 64}, {"gpt3-175b", "dgx-a100-40g", 128}};
	static pp_estimate e, full;
	static pp_work ws;
	int plans = 0;
	double tightest = 0;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		pp_model m;
		pp_system s;
		pp_job job;
		pp_error err;
		pp_work_init(&ws); /* a new model in the same object: the memo's contract */
		assert_int_equal(pp_model_preset(cases[k].model, &m, &err), PP_OK);
		assert_int_equal(pp_system_preset(cases[k].system, &s, &err), PP_OK);
		pp_job_init(&job);
		job.seq_len = 4096;
		job.global_batch = 4 * cases[k].gpus;
		for (int tp = 1; tp <= 16; tp *= 2)
			for (int pp = 1; pp <= 8; pp *= 2)
				for (int mbs = 1; mbs <= 2; mbs++)
					for (int rc = 0; rc < 3; rc++)
						for (int z = 0; z <= 3; z++) {
							pp_plan p;
							pp_plan_init(&p);
							p.tp = tp;
							p.pp = pp;
							p.mbs = mbs;
							p.recompute = (pp_recompute)rc;
							p.zero = z;
							p.sp = tp > 1;
							p.ep = m.moe.num_experts ? 8 : 1;
							p.schedule = PP_SCHED_WSHAPE;
							floor_seen f = {0, 0, 0};
							bool cut;
							if (ppi_estimate_eval_cut(
							        &m, &s, &job, &p, cases[k].gpus, 0,
							        &ws, &e, see_floor, &f, &cut, NULL,
							        &err) != PP_OK ||
							    !e.fits)
								continue;
							assert_true(f.calls > 0 && !cut);
							assert_int_equal(
							    pp_estimate_run(&m, &s, &job, &p,
							                    cases[k].gpus, &full,
							                    &err),
							    PP_OK);
							double t = full.time.iteration_s;
							assert_true(t == e.time.iteration_s);
							assert_true(f.floor_s <= t &&
							            f.order_free_s <= t);
							tightest = fmax(tightest, f.floor_s / t);
							plans++;
						}
	}
	print_message("wshape floors under the time on %d plans that fit (tightest %.4f of it)\n",
	              plans, tightest);
	assert_true(plans > 500);
}

/* The time floor (estimate.c's time_floor and time_floor_dp, what the
 * search cuts with) lies under the iteration time of every other schedule
 * type too, the pipeline sends hidden by the steady state included (issue
 * 22 item 3): dense and MoE models, tp 1-8, pp 2-8, recompute none and
 * full, interleaved at vp 2. */
static void test_floors_under_time(void **state)
{
	(void)state;
	const struct {
		const char *model, *system;
		long long gpus;
	} cases[] = {{"llama3-8b", "dgx-h100", 16},
	             {"mixtral-8x7b", "dgx-h100", 64},
	             {"gpt3-175b", "dgx-a100-40g", 128}};
	const pp_schedule scheds[] = {PP_SCHED_1F1B, PP_SCHED_INTERLEAVED, PP_SCHED_GPIPE,
	                              PP_SCHED_ZB,   PP_SCHED_DUALPIPE,    PP_SCHED_DUALPIPEV};
	static pp_estimate e, full;
	static pp_work ws;
	int plans = 0;
	double tightest = 0;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		pp_model m;
		pp_system s;
		pp_job job;
		pp_error err;
		pp_work_init(&ws);
		assert_int_equal(pp_model_preset(cases[k].model, &m, &err), PP_OK);
		assert_int_equal(pp_system_preset(cases[k].system, &s, &err), PP_OK);
		pp_job_init(&job);
		job.seq_len = 4096;
		job.global_batch = 8 * cases[k].gpus;
		for (size_t si = 0; si < sizeof scheds / sizeof scheds[0]; si++)
			for (int tp = 1; tp <= 8; tp *= 2)
				for (int pp = 2; pp <= 8; pp *= 2)
					for (int rc = 0; rc < 3; rc += 2) {
						pp_plan p;
						pp_plan_init(&p);
						p.tp = tp;
						p.pp = pp;
						p.recompute = (pp_recompute)rc;
						p.zero = 1;
						p.sp = tp > 1;
						p.ep = m.moe.num_experts ? 8 : 1;
						p.schedule = scheds[si];
						p.vp = scheds[si] == PP_SCHED_INTERLEAVED ? 2 : 1;
						floor_seen f = {0, 0, 0};
						bool cut;
						if (ppi_estimate_eval_cut(
						        &m, &s, &job, &p, cases[k].gpus, 0, &ws, &e,
						        see_floor, &f, &cut, NULL, &err) != PP_OK ||
						    !e.fits)
							continue;
						assert_true(f.calls > 0 && !cut);
						assert_int_equal(pp_estimate_run(&m, &s, &job, &p,
						                                 cases[k].gpus,
						                                 &full, &err),
						                 PP_OK);
						double t = full.time.iteration_s;
						if (!(f.floor_s <= t && f.order_free_s <= t))
							fail_msg("%s %s tp %d pp %d: floor %.9g "
							         "over the time "
							         "%.9g",
							         cases[k].model,
							         pp_schedule_name(scheds[si]), tp,
							         pp, f.floor_s, t);
						tightest = fmax(tightest, f.floor_s / t);
						plans++;
					}
	}
	print_message("floors under the time on %d plans that fit (tightest %.4f of it)\n", plans,
	              tightest);
	assert_true(plans > 100);
}

/* The same answer with 1, 2 or 3 threads. */
static void test_threads_deterministic(void **state)
{
	(void)state;
	pp_search_space space;
	pp_search_space_init(&space);
	pp_search *one = run("llama3-8b", "dgx-h100", 32, 128, 8192, &space, false, 1);
	pp_search *two = run("llama3-8b", "dgx-h100", 32, 128, 8192, &space, false, 2);
	pp_search *three = run("llama3-8b", "dgx-h100", 32, 128, 8192, &space, false, 3);
	assert_same_results(one, two);
	assert_same_results(one, three);
	/* The stats too: each sub-space is pruned against the same lists. */
	pp_search_stats a, b, c;
	pp_search_get_stats(one, &a);
	pp_search_get_stats(two, &b);
	pp_search_get_stats(three, &c);
	assert_int_equal(a.evaluated, b.evaluated);
	assert_int_equal(a.evaluated, c.evaluated);
	assert_int_equal(a.pruned, c.pruned);
	assert_int_equal(a.pruned_time, b.pruned_time);
	assert_int_equal(a.pruned_time, c.pruned_time);
	assert_true(a.pruned_time > 0);
	pp_search_free(one);
	pp_search_free(two);
	pp_search_free(three);
}

/* Every plan shown fits (with the headroom asked for) and re-estimates to the
 * same time; the list is sorted. */
static void test_top_plans_fit(void **state)
{
	(void)state;
	pp_search_space space;
	pp_search_space_init(&space);
	space.headroom_fraction = 0.1;
	pp_search *s = run("llama3-70b", "dgx-h100", 64, 512, 8192, &space, false, 2);
	assert_true(pp_search_count(s) > 0);
	for (size_t i = 0; i < pp_search_count(s); i++) {
		const pp_estimate *e = pp_search_plan(s, i);
		assert_true(e->fits);
		assert_true(e->memory.total_bytes <= 0.9 * e->capacity_bytes);
		static pp_estimate again;
		pp_error err;
		assert_int_equal(pp_estimate_run(&e->model, &e->system, &e->job, &e->plan, e->gpus,
		                                 &again, &err),
		                 PP_OK);
		assert_true(again.fits);
		assert_rel(again.time.iteration_s, e->time.iteration_s, 1e-12);
		assert_rel(again.memory.total_bytes, e->memory.total_bytes, 1e-12);
		if (i > 0)
			assert_true(pp_search_plan(s, i - 1)->time.iteration_s <=
			            e->time.iteration_s);
	}
	pp_search_free(s);
}

/* Fixed and bounded dimensions are respected. */
static void test_constraints(void **state)
{
	(void)state;
	pp_search_space space;
	pp_search_space_init(&space);
	space.tp.count = 1;
	space.tp.values[0] = 8;
	space.pp.count = 3;
	space.pp.values[0] = 2;
	space.pp.values[1] = 4;
	space.pp.values[2] = 8;
	space.recompute_mask = 1u << PP_RECOMPUTE_SELECTIVE;
	space.schedule_mask = 1u << PP_SCHED_1F1B;
	pp_search *s = run("llama3-70b", "dgx-h100", 128, 512, 8192, &space, false, 2);
	assert_true(pp_search_count(s) > 0);
	for (size_t i = 0; i < pp_search_count(s); i++) {
		const pp_plan *p = &pp_search_plan(s, i)->plan;
		assert_int_equal(p->tp, 8);
		assert_true(p->pp == 2 || p->pp == 4 || p->pp == 8);
		assert_int_equal(p->recompute, PP_RECOMPUTE_SELECTIVE);
		assert_int_equal(p->schedule, PP_SCHED_1F1B);
		assert_int_equal(p->vp, 1);
	}
	pp_search_free(s);
}

/* The best plan is at least as fast as the authors' plan of published runs
 * (their plan is in the space and fits, so it cannot be beaten by more than
 * the search's own ranking allows). */
static void test_beats_published_plans(void **state)
{
	(void)state;
	const char *shared = getenv("PARAPLAN_SHARED_DIR");
	assert_non_null(shared);
	char path[1024];
	snprintf(path, sizeof path, "%s/validation/public-runs.json", shared);
	pp_runs *runs;
	pp_error err;
	assert_int_equal(pp_runs_load(path, &runs, &err), PP_OK);
	const char *ids[] = {
	    "narayanan21_t1_1.7B", "mpt_h100_80gb_amp_bf16_13b_seq2048_128gpu_mbs16",
	    "nemo_longseq_LLAMA2-7B_DGX-H100_16K", "mbridge_25.11_DGX-H100_LLAMA3-8B_8gpu_FP8-CS",
	    "mpt_a100_40gb_bf16_1b_seq2048_32gpu_mbs10"};
	int checked = 0;
	for (size_t i = 0; i < pp_runs_count(runs); i++) {
		bool want = false;
		for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
			want |= strcmp(pp_runs_id(runs, i), ids[k]) == 0;
		if (!want)
			continue;
		pp_model m;
		pp_system s;
		pp_job job;
		pp_plan plan;
		long long gpus;
		pp_run_info info;
		assert_int_equal(pp_run_inputs(runs, i, &m, &s, &job, &plan, &gpus, &info, &err),
		                 PP_OK);
		static pp_estimate theirs;
		assert_int_equal(pp_estimate_run(&m, &s, &job, &plan, gpus, &theirs, &err), PP_OK);
		pp_search_space space;
		pp_search_space_init(&space);
		space.base = plan; /* their non-searched flags (flash, overlap) */
		/* no margin kept: their plan fits, and must be in the space (the
		 * MPT 1B A100-40GB run fits with 4.9% of HBM free, under the
		 * default 6% headroom) */
		space.headroom_fraction = 0;
		space.schedule_mask = (1u << PP_SCHED_1F1B) | (1u << PP_SCHED_INTERLEAVED) |
		                      (1u << PP_SCHED_ZB) | (1u << plan.schedule);
		space.norders = 1;
		snprintf(space.orders[0], sizeof space.orders[0], "%s", plan.order);
		pp_search_options o;
		pp_search_options_init(&o);
		o.top_k = 1;
		o.threads = 2;
		pp_search *srch;
		assert_int_equal(pp_search_new(&m, &s, &job, gpus, &space, &o, &srch, &err), PP_OK);
		while (!pp_search_done(srch))
			assert_int_equal(pp_search_iterate(srch, &err), PP_OK);
		assert_true(pp_search_count(srch) == 1);
		const pp_estimate *best = pp_search_plan(srch, 0);
		print_message("%-50s theirs %.3f s, best %.3f s\n", info.id,
		              theirs.time.iteration_s, best->time.iteration_s);
		assert_true(best->time.iteration_s <= theirs.time.iteration_s * (1 + 1e-12));
		pp_search_free(srch);
		checked++;
	}
	assert_int_equal(checked, (int)(sizeof ids / sizeof ids[0]));
	pp_runs_free(runs);
}

static pp_search *bounded(int threads, double time_limit_s, long long max_plans)
{
	pp_model m;
	pp_system s;
	pp_job job;
	pp_error err;
	assert_int_equal(pp_model_preset("gpt-1t", &m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-a100-80g", &s, &err), PP_OK);
	pp_job_init(&job);
	job.global_batch = 3072;
	job.seq_len = 2048;
	pp_search_space space;
	pp_search_space_init(&space);
	pp_search_options o;
	pp_search_options_init(&o);
	o.threads = threads;
	o.time_limit_s = time_limit_s;
	o.max_plans = max_plans;
	pp_search *srch;
	assert_int_equal(pp_search_new(&m, &s, &job, 3072, &space, &o, &srch, &err), PP_OK);
	while (!pp_search_done(srch))
		assert_int_equal(pp_search_iterate(srch, &err), PP_OK);
	return srch;
}

/* --max-plans: the search ends after the sub-space that reaches the limit,
 * with the same plans and counts whatever the thread count; the best plans
 * found so far are there, marked stopped. */
static void test_max_plans_deterministic(void **state)
{
	(void)state;
	pp_search *one = bounded(1, 0, 20000);
	pp_search *three = bounded(3, 0, 20000);
	pp_search_stats a, b;
	pp_search_get_stats(one, &a);
	pp_search_get_stats(three, &b);
	assert_int_equal(a.stop, PP_SEARCH_MAX_PLANS);
	assert_true(a.evaluated >= 20000);
	assert_true(a.subspaces_done < a.subspaces);
	assert_int_equal(a.evaluated, b.evaluated);
	assert_int_equal(a.subspaces_done, b.subspaces_done);
	assert_true(a.space == b.space);
	assert_true(pp_search_count(one) > 0);
	assert_true(a.best_s == pp_search_plan(one, 0)->time.iteration_s);
	assert_same_results(one, three);
	char why[256];
	assert_non_null(strstr(pp_search_stop_reason(one, why, sizeof why), "plan limit 20000"));
	pp_search_free(one);
	pp_search_free(three);
	/* A limit the whole space does not reach: a complete search. */
	pp_search *all = bounded(2, 0, 1000000000);
	pp_search_get_stats(all, &a);
	assert_int_equal(a.stop, PP_SEARCH_COMPLETE);
	assert_int_equal(a.subspaces_done, a.subspaces);
	assert_string_equal(pp_search_stop_reason(all, why, sizeof why), "");
	pp_search_free(all);
}

/* --time-limit: stops between batches once the time is up, with what it
 * found; a generous limit changes nothing. */
static void test_time_limit(void **state)
{
	(void)state;
	pp_search *quick = bounded(1, 1e-6, 0);
	pp_search *quick3 = bounded(3, 1e-6, 0);
	pp_search_stats a, q3;
	pp_search_get_stats(quick, &a);
	pp_search_get_stats(quick3, &q3);
	assert_int_equal(a.stop, PP_SEARCH_TIME_LIMIT);
	/* one batch, whose size depends on the space, not on the threads */
	assert_true(a.subspaces_done >= 1 && a.subspaces_done < a.subspaces);
	assert_int_equal(a.subspaces_done, q3.subspaces_done);
	pp_search_free(quick3);
	pp_search *slow = bounded(2, 1e6, 0);
	pp_search *plain = bounded(2, 0, 0);
	pp_search_get_stats(slow, &a);
	assert_int_equal(a.stop, PP_SEARCH_COMPLETE);
	assert_same_results(slow, plain);
	pp_search_free(quick);
	pp_search_free(slow);
	pp_search_free(plain);
}

/* The workspace's memos (layer, stage-level collective, whole-rank and
 * placement) give what a fresh workspace gives, to the bit: plans that differ
 * in one field at a time (the ZeRO stage, the schedule and vp innermost, as
 * the search enumerates them), evaluated one after another on one workspace,
 * each against the same plan on a workspace of its own.  Dense, MoE and a
 * model of mixed layer kinds (DeepSeek-V3's dense first layers). */
static void test_memo_equals_fresh(void **state)
{
	(void)state;
	const struct {
		const char *model;
		long long gpus;
		int seq;
	} cases[] = {
	    {"llama3-8b", 16, 4096}, {"mixtral-8x7b", 16, 4096}, {"deepseek-v3", 64, 4096}};
	const char *orders[] = {"tp-cp-ep-dp-pp", "tp-pp-cp-ep-dp", "cp-tp-ep-dp-pp"};
	static pp_work warm, fresh;
	static pp_estimate a, b;
	long long compared = 0;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		pp_model m;
		pp_system s;
		pp_job job;
		pp_error err;
		assert_int_equal(pp_model_preset(cases[c].model, &m, &err), PP_OK);
		assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
		pp_job_init(&job);
		job.global_batch = 128;
		job.seq_len = cases[c].seq;
		pp_work_init(&warm);
		/* ZeRO innermost, then the schedule and vp, recompute, the
		 * micro-batch, the order, cp, pp and tp outermost. */
		const int tps[] = {1, 2, 4}, pps[] = {1, 2, 4}, cps[] = {1, 2}, mbss[] = {1, 2};
		const int nsched = PP_SCHED_ZB + 1;
		for (int idx = 0; idx < 3 * 3 * 2 * 3 * 2 * 2 * 2 * nsched * 4; idx++) {
			int r = idx, z = r % 4, sc, vp, rc, mb, o, x, q, t;
			r /= 4;
			sc = r % nsched;
			r /= nsched;
			vp = 1 + r % 2;
			r /= 2;
			rc = 2 * (r % 2); /* none, full */
			r /= 2;
			mb = r % 2;
			r /= 2;
			o = r % 3;
			r /= 3;
			x = r % 2;
			r /= 2;
			q = r % 3;
			t = r / 3;
			if ((vp > 1) != (sc == PP_SCHED_INTERLEAVED))
				continue;
			pp_plan p;
			pp_plan_init(&p);
			p.tp = tps[t];
			p.pp = pps[q];
			p.cp = cps[x];
			p.dp = 0;
			p.ep = m.moe.num_experts > 0 ? 2 : 1;
			p.mbs = mbss[mb];
			p.recompute = (pp_recompute)rc;
			p.sp = p.tp > 1;
			p.vp = vp;
			p.schedule = (pp_schedule)sc;
			p.zero = z;
			snprintf(p.order, sizeof p.order, "%s", orders[o]);
			pp_status st =
			    pp_estimate_eval(&m, &s, &job, &p, cases[c].gpus, 0, &warm, &a, &err);
			pp_work_init(&fresh);
			pp_status st2 =
			    pp_estimate_eval(&m, &s, &job, &p, cases[c].gpus, 0, &fresh, &b, &err);
			assert_int_equal(st, st2);
			if (st)
				continue;
			assert_true(a.time.iteration_s == b.time.iteration_s);
			assert_true(a.time.bubble_s == b.time.bubble_s);
			assert_true(a.time.dp_s == b.time.dp_s);
			assert_true(a.time.tp_s == b.time.tp_s);
			assert_true(a.time.pp_s == b.time.pp_s);
			assert_true(a.memory.total_bytes == b.memory.total_bytes);
			assert_int_equal(a.time.bottleneck_stage, b.time.bottleneck_stage);
			assert_true(a.bottleneck.fwd_s == b.bottleneck.fwd_s);
			assert_true(a.bottleneck.dp_s == b.bottleneck.dp_s);
			assert_true(a.bottleneck.optimizer_s == b.bottleneck.optimizer_s);
			assert_true(a.hardware_tflops_per_gpu == b.hardware_tflops_per_gpu);
			compared++;
		}
	}
	print_message("%lld plans compared\n", compared);
	assert_true(compared > 500);
}

/*
 * A plan read through the caller's estimate (pp_search_plan_get, what the
 * reports use) is the plan the search keeps (pp_search_plan), field for field
 * in what ranks and reports it, before and after the search's own copy is
 * made; an index past the end is an error, not a read.
 */
static void test_plan_get_equals_plan(void **state)
{
	(void)state;
	pp_search_space sp;
	pp_search_space_init(&sp);
	pp_search *s = run("llama3-8b", "dgx-h100", 16, 64, 4096, &sp, false, 2);
	size_t n = pp_search_count(s);
	assert_true(n > 2);
	pp_estimate *got = malloc(sizeof *got);
	assert_non_null(got);
	pp_error err;
	for (int pass = 0; pass < 2; pass++) /* lazily evaluated, then kept */
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(pp_search_plan_get(s, i, got, &err), PP_OK);
			const pp_estimate *kept = pp_search_plan(s, i);
			assert_non_null(kept);
			assert_true(same_plan(&got->plan, &kept->plan));
			assert_true(got->time.iteration_s == kept->time.iteration_s);
			assert_true(got->memory.total_bytes == kept->memory.total_bytes);
			assert_true(got->mfu == kept->mfu &&
			            got->tokens_per_s == kept->tokens_per_s);
			assert_true(got->dp_bytes == kept->dp_bytes);
			if (i > 0)
				assert_true(pp_search_plan(s, i - 1)->time.iteration_s <=
				            kept->time.iteration_s);
		}
	assert_int_not_equal(pp_search_plan_get(s, n, got, &err), PP_OK);
	assert_null(pp_search_plan(s, n));
	free(got);
	pp_search_free(s);
}

/*
 * A row (pp_search_row_get, what the text report prints) is what the whole
 * estimate of the same plan says (pp_search_plan_get), to the bit, for every
 * plan of a K that entries enter and leave many times (the row is taken from
 * the search's scratch estimate when the plan enters the K best), with a
 * token budget (days, cost) and uneven pipeline splits, and after
 * pp_search_simulate with the simulated time; past the end it is an error.
 */
static void search_rows_equal_plans(const char *model, const char *system, long long gpus,
                                    long long gbs, int top_k, bool simulate)
{
	pp_model m;
	pp_system sys;
	pp_job job;
	pp_error err;
	assert_int_equal(pp_model_preset(model, &m, &err), PP_OK);
	assert_int_equal(pp_system_preset(system, &sys, &err), PP_OK);
	pp_job_init(&job);
	job.global_batch = gbs;
	job.seq_len = 2048;
	job.train_tokens = 300e9;
	pp_search_space sp;
	pp_search_space_init(&sp);
	pp_search_options o;
	pp_search_options_init(&o);
	o.top_k = top_k;
	o.threads = 2;
	pp_search *s;
	assert_int_equal(pp_search_new(&m, &sys, &job, gpus, &sp, &o, &s, &err), PP_OK);
	while (!pp_search_done(s))
		assert_int_equal(pp_search_iterate(s, &err), PP_OK);
	if (simulate)
		assert_int_equal(pp_search_simulate(s, &err), PP_OK);
	size_t n = pp_search_count(s), uneven = 0, simulated = 0;
	assert_true(n > 2);
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	for (size_t i = 0; i < n; i++) {
		pp_search_row r;
		assert_int_equal(pp_search_row_get(s, i, &r, &err), PP_OK);
		assert_int_equal(pp_search_plan_get(s, i, e, &err), PP_OK);
		const pp_plan *a = &r.plan, *b = &e->plan;
		assert_true(same_plan(a, b));
		assert_true(a->microbatches == b->microbatches && a->tp2 == b->tp2 &&
		            a->summa == b->summa && a->summa_nb == b->summa_nb &&
		            a->flash == b->flash &&
		            a->embedding_as_layer == b->embedding_as_layer &&
		            a->loss_as_layer == b->loss_as_layer);
		const pp_iteration *t = &e->time;
		assert_true(r.total_bytes == e->memory.total_bytes);
		assert_true(r.headroom_bytes == e->headroom_bytes);
		assert_true(r.iteration_s == t->iteration_s && r.compute_s == t->compute_s &&
		            r.tp_s == t->tp_s && r.pp_s == t->pp_s && r.bubble_s == t->bubble_s &&
		            r.dp_s == t->dp_s);
		assert_true(r.mfu == e->mfu && r.tokens_per_s == e->tokens_per_s);
		assert_true(r.train_days == e->train_days && r.cost_usd == e->cost_usd);
		assert_true(r.train_days > 0 && r.cost_usd > 0);
		assert_true(r.simulated == e->simulated);
		assert_true(r.sim_iteration_s == (e->simulated ? e->sim.iteration_s : 0));
		uneven += a->first_stage_layers > 0 || a->last_stage_layers > 0;
		simulated += r.simulated;
	}
	pp_search_row r;
	assert_int_not_equal(pp_search_row_get(s, n, &r, &err), PP_OK);
	print_message("%s on %lld GPUs: %zu rows, %zu with an uneven split, %zu simulated\n", model,
	              gpus, n, uneven, simulated);
	if (simulate)
		assert_true(simulated > 0);
	if (strcmp(model, "gpt-1t") == 0) /* 128 layers over pp 3, 5, 6, 7, ... */
		assert_true(uneven > 0);
	free(e);
	pp_search_free(s);
}

static void test_row_equals_plan(void **state)
{
	(void)state;
	search_rows_equal_plans("gpt-1t", "dgx-h100", 3072, 1536, 3000, false);
	search_rows_equal_plans("gpt3-175b", "dgx-a100-80g", 256, 512, 3000, false);
	search_rows_equal_plans("gpt3-175b", "dgx-a100-80g", 64, 256, 40, true);
}

/* The time floor's data-parallel and optimizer terms (ppi_stage_dp_s) are
 * the stage cost's dp_s and optimizer_s to the bit, on every rank: dense
 * with ZeRO 0..3, MoE (expert DP), SUMMA (the embedding's n_2 all-reduce),
 * on a warm workspace. */
static void test_floor_dp_equals_stage_cost(void **state)
{
	(void)state;
	const struct {
		const char *model, *system;
		long long gpus;
		int tp, tp2, summa, pp, ep;
	} cases[] = {{"llama3-8b", "dgx-h100", 64, 2, 1, 0, 4, 1},
	             {"mixtral-8x7b", "dgx-h100", 64, 2, 1, 0, 2, 4},
	             {"gpt-7.5b", "lbnl-b200", 32, 2, 2, 1, 2, 1},
	             {"gpt3-175b", "dgx-a100-80g", 512, 8, 1, 0, 8, 1}};
	static pp_work ws;
	pp_work_init(&ws);
	int compared = 0;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (int z = 0; z <= 3; z++) {
			pp_model m;
			pp_system s;
			pp_job job;
			pp_error err;
			assert_int_equal(pp_model_preset(cases[c].model, &m, &err), PP_OK);
			assert_int_equal(pp_system_preset(cases[c].system, &s, &err), PP_OK);
			pp_job_init(&job);
			job.global_batch = 256;
			job.seq_len = 2048;
			pp_plan p;
			pp_plan_init(&p);
			p.tp = cases[c].tp;
			p.tp2 = cases[c].tp2;
			p.summa = cases[c].summa;
			p.pp = cases[c].pp;
			p.ep = cases[c].ep;
			p.cp = 1;
			p.dp = 0;
			p.mbs = 1;
			p.zero = z;
			p.sp = p.tp > 1;
			pp_scenario *sc;
			pp_status st = pp_scenario_new(&m, &s, &job, &p, cases[c].gpus, &sc, &err);
			if (st)
				print_message("%s: %s\n", err.field, err.text);
			assert_int_equal(st, PP_OK);
			for (int i = 0; i < cases[c].pp; i++) {
				pp_stage_time t;
				assert_int_equal(pp_scenario_cost(sc, i, &ws, &t, &err), PP_OK);
				double opt, dp = ppi_stage_dp_s(sc, i, &ws, &opt);
				assert_true(dp == t.dp_s);
				assert_true(opt == t.optimizer_s);
				assert_true(opt > 0);
				assert_true(z == 3 || dp > 0);
				compared++;
			}
			pp_scenario_free(sc);
		}
	assert_int_equal(compared, 4 * (4 + 2 + 2 + 8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pruned_equals_exhaustive),
	    cmocka_unit_test(test_wshape_floors_under_time),
	    cmocka_unit_test(test_floors_under_time),
	    cmocka_unit_test(test_memo_equals_fresh),
	    cmocka_unit_test(test_floor_dp_equals_stage_cost),
	    cmocka_unit_test(test_threads_deterministic),
	    cmocka_unit_test(test_plan_get_equals_plan),
	    cmocka_unit_test(test_row_equals_plan),
	    cmocka_unit_test(test_top_plans_fit),
	    cmocka_unit_test(test_constraints),
	    cmocka_unit_test(test_beats_published_plans),
	    cmocka_unit_test(test_max_plans_deterministic),
	    cmocka_unit_test(test_time_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
