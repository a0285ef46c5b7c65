/*
 * DualPipe and DualPipeV (DeepSeek-V3 §3.2.1, Table 2; deepseek-ai/DualPipe):
 * the task orders (every task once, no deadlock), the closed form against the
 * event simulator on a grid of (pp, m) and on spread-out chunk times, the
 * bubble against Table 2, residency, parameter copies, sends, and the
 * validate functions' refusals.
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

#include "paraplan/paraplan.h"
#include "pp_test.h"
#include "schedule/dualpipe.h"
#include "spec/sched_int.h"

static const int grid_pp[] = {2, 4, 8, 16};
#define NGRID (sizeof grid_pp / sizeof grid_pp[0])
#define MAX_PP 16

/* The schedules under test: DualPipe (dual) and DualPipeV. */
static pp_status orders(pp_sim *sim, bool dual, int pp, long long m, pp_error *err)
{
	return dual ? pp_dualpipe_sim_orders(sim, pp, m, err)
	            : pp_dualpipev_sim_orders(sim, pp, m, err);
}

static double closed(bool dual, int pp, long long m, const pp_dualpipe_times *t)
{
	return dual ? pp_dualpipe_pipeline_s(pp, m, t) : pp_dualpipev_pipeline_s(pp, m, t);
}

static double bubble(bool dual, int pp, long long m, const pp_dualpipe_times *t)
{
	return dual ? pp_dualpipe_bubble_s(pp, m, t) : pp_dualpipev_bubble_s(pp, m, t);
}

/* The simulator's pipeline over alike ranks of chunk times t (its stages
 * carry both chunks: twice a chunk's time), sends of `send_s`. */
static double simulate(pp_sim *sim, bool dual, int pp, long long m, const pp_dualpipe_times *t,
                       double send_s)
{
	pp_error err;
	assert_int_equal(orders(sim, dual, pp, m, &err), PP_OK);
	pp_sim_stage st[MAX_PP];
	memset(st, 0, sizeof st);
	for (int r = 0; r < pp; r++) {
		st[r].fwd_s = 2 * t->f_s;
		st[r].bwd_s = 2 * t->b_s;
		st[r].wgrad_s = 2 * t->w_s;
		st[r].si_speedup = (t->f_s + t->b_s) / t->fb_s;
		st[r].send_fwd_s = st[r].send_bwd_s = send_s;
	}
	pp_sim_result res;
	pp_status s = pp_sim_run(sim, st, 0, &res, &err);
	if (s != PP_OK)
		fail_msg("pp %d m %lld: %s", pp, m, err.text);
	return res.pipeline_s;
}

/* Every rank runs the forward and the backward (B, or BI then W) of each of
 * its (micro-batch, chunk) once; a F&B pair's forward is followed by a full
 * backward; the run ends (no deadlock). */
static void test_orders_complete(void **state)
{
	(void)state;
	pp_sim *sim;
	pp_error err;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	unsigned char *seen = malloc(2 * 4 * MAX_PP);
	assert_non_null(seen);
	for (int dual = 0; dual < 2; dual++)
		for (size_t g = 0; g < NGRID; g++) {
			int pp = grid_pp[g];
			for (long long m = 2LL * pp; m <= 4LL * pp; m += dual ? 2 : 1) {
				assert_int_equal(orders(sim, dual, pp, m, &err), PP_OK);
				long long k = dual ? m / 2 : m; /* micro-batches per chunk */
				for (int r = 0; r < pp; r++) {
					size_t n;
					const pp_task *t = pp_sim_order(sim, r, &n);
					memset(seen, 0, (size_t)(2 * k));
					for (size_t i = 0; i < n; i++) {
						unsigned bit = t[i].kind == PP_TASK_F ||
						                       t[i].kind == PP_TASK_FB
						                   ? 1u
						               : t[i].kind == PP_TASK_B  ? 6u
						               : t[i].kind == PP_TASK_BI ? 2u
						                                         : 4u;
						size_t s = (size_t)(t[i].chunk * k + t[i].mb);
						assert_int_equal(seen[s] & bit, 0);
						seen[s] |= (unsigned char)bit;
						if (t[i].kind == PP_TASK_FB) {
							assert_true(i + 1 < n);
							assert_int_equal(t[i + 1].kind, PP_TASK_B);
						}
					}
					for (long long s = 0; s < 2 * k; s++)
						assert_int_equal(seen[s], 7);
				}
				pp_dualpipe_times t = {1, 2, 1, 3};
				simulate(sim, dual, pp, m, &t, 0);
			}
		}
	free(seen);
	pp_sim_free(sim);
}

/* On the grid pp 2, 4, 8, 16 and m = 2pp..4pp (DualPipe: even m), with the
 * chunk times of the repository's figure and zero bubble (B_input = F, W <=
 * F) at three overlaps: the closed form's bubble is Table 2's
 * (stages/2 - 1)(F&B + B - 3W) and the simulator's pipeline the closed
 * form's within 1e-6. */
static void test_table2_grid(void **state)
{
	(void)state;
	pp_sim *sim;
	pp_error err;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	const double ws[] = {1, 0.5, 0.25}, overlap[] = {1, 1.25, 1.5};
	int cases = 0;
	for (int dual = 0; dual < 2; dual++)
		for (size_t g = 0; g < NGRID; g++) {
			int pp = grid_pp[g];
			int stages = dual ? pp : 2 * pp;
			for (long long m = 2LL * pp; m <= 4LL * pp; m += 2)
				for (size_t i = 0; i < 3; i++)
					for (size_t j = 0; j < 3; j++) {
						double F = 1, W = ws[i], B = F + W;
						pp_dualpipe_times t = {F, B, W,
						                       (F + B) / overlap[j]};
						double want =
						    pp_dualpipe_table2_bubble_s(stages, &t);
						assert_rel(bubble(dual, pp, m, &t) + 1, want + 1,
						           1e-12);
						double cf = closed(dual, pp, m, &t);
						assert_rel(simulate(sim, dual, pp, m, &t, 0), cf,
						           1e-6);
						cases++;
					}
		}
	print_message("table 2 grid: %d cases\n", cases);
	pp_sim_free(sim);
}

/* Chunk times spread over the closed form's domain (W from 0 to B, F&B from
 * max(F, B - W) to F + B, F above and below B): the simulator equals it
 * within 1e-6 in all its regimes (a pair shorter than a backward alone
 * included), the bubble is not negative and the search floor lies under
 * it. */
static void test_closed_equals_sim(void **state)
{
	(void)state;
	pp_sim *sim;
	pp_error err;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (int i = 0; i < 800; i++) {
		double u[4];
		for (int j = 0; j < 4; j++) {
			x = x * 6364136223846793005u + 1442695040888963407u;
			u[j] = (double)(x >> 11) / 9007199254740992.0;
		}
		bool dual = i % 2;
		int pp = grid_pp[(i / 2) % NGRID];
		long long m = 2LL * pp + (long long)(u[3] * 2 * pp);
		if (dual)
			m -= m % 2;
		double F = 0.3 + 1.7 * u[0], B = 0.3 + 2.7 * u[1], W = B * u[2];
		double lo = F > B - W ? F : B - W, FB = lo + (F + B - lo) * u[3];
		pp_dualpipe_times t = {F, B, W, FB};
		double cf = closed(dual, pp, m, &t);
		assert_rel(simulate(sim, dual, pp, m, &t, 0), cf, 1e-6);
		double floor_s =
		    dual ? pp_dualpipe_floor_s(pp, m, &t) : pp_dualpipev_floor_s(pp, m, &t);
		assert_true(floor_s <= cf * (1 + 1e-12));
		assert_true(bubble(dual, pp, m, &t) >= -1e-9 * cf);
	}
	pp_sim_free(sim);
}

/* Away from B_input = F Table 2 is an approximation: with no W (B_input = B
 * = 2F) the schedule's bubble is one forward shorter than it. */
static void test_table2_approximate(void **state)
{
	(void)state;
	pp_dualpipe_times t = {1, 2, 0, 3};
	for (size_t g = 1; g < NGRID; g++) {
		int pp = grid_pp[g];
		assert_rel(pp_dualpipe_bubble_s(pp, 2LL * pp, &t),
		           pp_dualpipe_table2_bubble_s(pp, &t) - t.f_s, 1e-12);
	}
}

/* DualPipe's bubble lies under 1F1B's (pp - 1)(F + B) at the same pp, and
 * overlapping the pairs shortens the pipeline. */
static void test_against_1f1b(void **state)
{
	(void)state;
	for (size_t g = 1; g < NGRID; g++) {
		int pp = grid_pp[g];
		long long m = 4LL * pp;
		pp_dualpipe_times t = {1, 2, 1, 3}, o = {1, 2, 1, 2};
		assert_true(pp_dualpipe_bubble_s(pp, m, &t) < (pp - 1) * (t.f_s + t.b_s));
		assert_true(pp_dualpipe_pipeline_s(pp, m, &o) < pp_dualpipe_pipeline_s(pp, m, &t));
	}
}

/* The peak of activation sets held, counted over each rank's order (a
 * forward adds one, B or BI frees one): pp + 1 chunks for DualPipe, 2pp + 1
 * half-rank chunks for DualPipeV; parameter copies 2 and 1. */
static void test_residency(void **state)
{
	(void)state;
	pp_sim *sim;
	pp_error err;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	for (int dual = 0; dual < 2; dual++)
		for (size_t g = 0; g < NGRID; g++) {
			int pp = grid_pp[g];
			for (long long m = 2LL * pp; m <= 4LL * pp; m += 2) {
				assert_int_equal(orders(sim, dual, pp, m, &err), PP_OK);
				for (int r = 0; r < pp; r++) {
					size_t n;
					const pp_task *t = pp_sim_order(sim, r, &n);
					int held = 0, peak = 0;
					for (size_t i = 0; i < n; i++) {
						if (t[i].kind == PP_TASK_F ||
						    t[i].kind == PP_TASK_FB)
							held++;
						if (held > peak)
							peak = held;
						if (t[i].kind == PP_TASK_B ||
						    t[i].kind == PP_TASK_BI)
							held--;
					}
					double want = dual ? pp_dualpipe_inflight(pp, m, r)
					                   : 2 * pp_dualpipev_inflight(pp, m, r);
					assert_rel(peak, want, 0);
				}
			}
		}
	assert_rel(pp_dualpipe_param_copies(), 2, 0);
	assert_rel(pp_dualpipev_param_copies(), 1, 0);
	pp_sim_free(sim);
}

/* The simulator's send events per rank, per micro-batch of the iteration. */
static void test_sends(void **state)
{
	(void)state;
	pp_sim *sim;
	pp_error err;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	pp_dualpipe_times t = {1, 2, 1, 3};
	for (int dual = 0; dual < 2; dual++)
		for (size_t g = 0; g < NGRID; g++) {
			int pp = grid_pp[g];
			long long m = 2LL * pp + 4;
			simulate(sim, dual, pp, m, &t, 1e-3);
			int sends[MAX_PP] = {0};
			for (size_t i = 0; i < pp_sim_event_count(sim); i++) {
				const pp_sim_event *e = pp_sim_event_at(sim, i);
				if (e->kind == PP_EV_SEND)
					sends[e->rank]++;
			}
			for (int r = 0; r < pp; r++) {
				double want = dual ? pp_dualpipe_sends_per_microbatch(pp, r)
				                   : pp_dualpipev_sends_per_microbatch(pp, r);
				assert_rel(sends[r] / (double)m, want, 0);
			}
		}
	pp_sim_free(sim);
}

/* The pipeline part over pp_stage_time: its parts add up to the closed form
 * plus the sends and its bubble is the closed form's, with an overlap factor
 * given (si_speedup) or derived (the pairs hide the all-to-all under
 * compute: only the 2n + 1 passes alone leave it exposed, where 1F1B leaves
 * all m). */
/* An F&B pair is its two chunks less the all-to-all the pairing hides
 * (pp_stage_time.ep_pair_hidden_s, the combined 1F1B's phase by phase, its
 * visible share already out): a 4/3 s forward and an 8/3 s backward (1 s of
 * it weight gradients) hiding 1 - 0.152 s of their 1 s of all-to-all pair
 * in 3.152 s; a pair shorter than the backward alone, 2.2 s, where it
 * hides 1.8 s; never under either chunk's own chain (the forward, the
 * backward less its weight gradients: 5/3 s where 3 s would be hidden), per
 * chunk where a micro-batch's stage holds two; nothing hidden without the
 * all-to-all; DHelix's given overlap factor wins. */
static void test_pair_hidden(void **state)
{
	(void)state;
	pp_stage_time st;
	memset(&st, 0, sizeof st);
	st.fwd_compute_s = 1, st.bwd_compute_s = 2, st.wgrad_compute_s = 1, st.ep_s = 1;
	st.fwd_s = 1 + 1.0 / 3, st.bwd_s = 2 + 2.0 / 3;
	st.ep_pair_hidden_s = 1 - 20.0 / 132;
	assert_rel(pp_dualpipe_pair_s(&st, 1), 3 + 20.0 / 132, 1e-12);
	st.ep_pair_hidden_s = 1.8;
	assert_rel(pp_dualpipe_pair_s(&st, 1), 2.2, 1e-12);
	assert_true(pp_dualpipe_pair_s(&st, 1) < st.bwd_s);
	st.ep_pair_hidden_s = 3;
	assert_rel(pp_dualpipe_pair_s(&st, 1), 5.0 / 3, 1e-12);
	st.ep_pair_hidden_s = 1.8;
	assert_rel(pp_dualpipe_pair_s(&st, 2), 1.1, 1e-12);
	st.ep_pair_hidden_s = 0;
	assert_rel(pp_dualpipe_pair_s(&st, 1), 4, 1e-12);
	st.si_speedup = 1.25;
	assert_rel(pp_dualpipe_pair_s(&st, 1), 3.2, 1e-12);
}

static void test_iteration_part(void **state)
{
	(void)state;
	for (int dual = 0; dual < 2; dual++)
		for (int given = 0; given < 2; given++) {
			int pp = 8;
			long long m = 24;
			double per = dual ? 1 : 2, s = given ? 1.25 : 0;
			pp_plan pl;
			pp_plan_init(&pl);
			pl.pp = pp;
			pl.microbatches = m;
			pp_stage_time st[8];
			memset(st, 0, sizeof st);
			for (int r = 0; r < pp; r++) {
				st[r].fwd_compute_s = 0.8 * per;
				st[r].ep_s = 0.2 * per;
				st[r].ep_pair_hidden_s = 0.2 * per;
				st[r].fwd_s = 1 * per;
				st[r].bwd_s = st[r].bwd_compute_s = 2 * per;
				st[r].wgrad_compute_s = 1 * per;
				st[r].si_speedup = s;
				st[r].pp_s = 0.01;
			}
			pp_iteration it;
			memset(&it, 0, sizeof it);
			(dual ? pp_dualpipe_iteration_part : pp_dualpipev_iteration_part)(&pl, st,
			                                                                  &it);
			pp_dualpipe_times t = {1, 2, 1, given ? 3 / s : 2.8};
			assert_rel(pp_dualpipe_pair_s(&st[0], per), t.fb_s, 1e-12);
			double sum =
			    it.compute_s + it.tp_s + it.cp_s + it.ep_s + it.zero3_s + it.bubble_s;
			assert_rel(sum, closed(dual, pp, m, &t), 1e-12);
			assert_rel(it.bubble_s, bubble(dual, pp, m, &t), 1e-12);
			/* the sends: the first micro-batch's trip to the turning
			 * rank and back, 2 (n - 1) links, and in the steady state
			 * what alike stages leave no slack to hide: 1F1B's window of
			 * all pp ranks, (pp - 1)/pp of pp_s per micro-batch */
			double n = dual ? pp / 2 : pp;
			assert_rel(it.pp_s, 2 * (n - 1) * 0.01 + (double)m * (pp - 1.0) / pp * 0.01,
			           1e-9);
			if (!given) {
				double alone = (dual ? pp : 2 * pp) + 1;
				assert_rel(it.ep_s, alone * 0.2, 1e-12);
				assert_true(it.ep_s < (double)m * st[0].ep_s);
			}
		}
}

/* The registered types (schedule_type.h) as the estimate runs them: the
 * closed form of the type's `iteration` member over alike stages whose
 * pairs hide the all-to-all under the compute, a pair longer than a
 * backward alone and one shorter, against the simulator fed
 * the type's task lists (pp_sim_orders) and its sim_stage (chunk scale,
 * F&B overlap factor), within 1e-6 on a grid of (pp, m). */
static void test_type_closed_equals_sim(void **state)
{
	(void)state;
	pp_sim *sim;
	pp_error err;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	const pp_schedule ids[] = {PP_SCHED_DUALPIPE, PP_SCHED_DUALPIPEV};
	for (size_t d = 0; d < 2; d++) {
		const pp_schedule_type *t = pp_schedule_type_of(ids[d]);
		assert_non_null(t);
		assert_string_equal(t->name, d == 0 ? "dualpipe" : "dualpipev");
		assert_true(t->param_copies == (d == 0 ? 2.0 : 1.0));
		assert_false(t->search_default);
		for (size_t g = 0; g < NGRID; g++) {
			const int pp = grid_pp[g];
			const long long ms[] = {2LL * pp, 2LL * pp + 2, 4LL * pp, 6LL * pp + 2};
			for (size_t j = 0; j < 8; j++) {
				const long long m = ms[j % 4];
				/* pairs of 2.1 s (0.9 s of all-to-all, all hidden) and of
				 * 1.4 s (1.6 s, all hidden: shorter than a 2 s backward
				 * alone, over its chain of 1.2 s) */
				const double ep = j < 4 ? 0.9 : 1.6;
				pp_plan p;
				pp_plan_init(&p);
				p.pp = pp;
				p.microbatches = m;
				p.schedule = ids[d];
				assert_int_equal(t->validate(&p, &err), PP_OK);
				pp_stage_time st[MAX_PP];
				memset(st, 0, sizeof st);
				for (int r = 0; r < pp; r++) {
					st[r].stage = r;
					st[r].fwd_s = 1.0;
					st[r].bwd_s = 2.0;
					st[r].fwd_compute_s = j < 4 ? 0.7 : 0.5;
					st[r].bwd_compute_s = j < 4 ? 1.4 : 0.9;
					st[r].wgrad_compute_s = 0.8;
					st[r].ep_s = ep; /* f + b less the compute */
					st[r].ep_pair_hidden_s = ep;
				}
				pp_iteration it;
				memset(&it, 0, sizeof it);
				t->iteration(&p, st, &it);
				const double closed_s = it.compute_s + it.tp_s + it.cp_s + it.ep_s +
				                        it.zero3_s + it.pp_s + it.bubble_s;
				assert_int_equal(pp_sim_orders(sim, ids[d], pp, m, 1, &err), PP_OK);
				pp_sim_stage ss[MAX_PP];
				memset(ss, 0, sizeof ss);
				for (int r = 0; r < pp; r++) {
					double scale = 1, pair = 0;
					t->sim_stage(&p, &st[r], &scale, &pair);
					ss[r].fwd_s = st[r].fwd_s * scale;
					ss[r].bwd_s = st[r].bwd_s * scale;
					ss[r].wgrad_s = st[r].wgrad_compute_s * scale;
					ss[r].si_speedup = pair;
				}
				pp_sim_result res;
				assert_int_equal(pp_sim_run(sim, ss, 0, &res, &err), PP_OK);
				if (fabs(res.pipeline_s - closed_s) > 1e-6 * closed_s)
					fail_msg("%s pp %d m %lld: closed %.9f sim %.9f", t->name,
					         pp, m, closed_s, res.pipeline_s);
				/* the pairs hide the all-to-all: less exposed than 1F1B's m e */
				assert_true(it.ep_s < (double)m * st[0].ep_s);
			}
		}
	}
	pp_sim_free(sim);
}

static void refused(pp_status s, const pp_error *err, const char *field, const char *words)
{
	assert_int_equal(s, PP_EINPUT);
	assert_string_equal(err->field, field);
	if (!strstr(err->text, words))
		fail_msg("'%s' lacks '%s'", err->text, words);
}

static void test_validate(void **state)
{
	(void)state;
	pp_error err;
	assert_int_equal(pp_dualpipe_validate(4, 8, &err), PP_OK);
	assert_int_equal(pp_dualpipe_validate(2, 4, &err), PP_OK);
	assert_int_equal(pp_dualpipev_validate(3, 6, &err), PP_OK);
	assert_int_equal(pp_dualpipev_validate(4, 9, &err), PP_OK);
	refused(pp_dualpipe_validate(3, 12, &err), &err, "plan.pp", "even pp");
	refused(pp_dualpipe_validate(1, 12, &err), &err, "plan.pp", "even pp");
	refused(pp_dualpipe_validate(4, 9, &err), &err, "plan.microbatches", "even number");
	refused(pp_dualpipe_validate(4, 6, &err), &err, "plan.microbatches", "at least 2 x pp (8)");
	refused(pp_dualpipev_validate(0, 6, &err), &err, "plan.pp", "at least 1");
	refused(pp_dualpipev_validate(4, 7, &err), &err, "plan.microbatches",
	        "at least 2 x pp (8)");
	/* the orders refuse the same */
	pp_sim *sim;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	refused(pp_dualpipe_sim_orders(sim, 5, 20, &err), &err, "plan.pp", "even pp");
	refused(pp_dualpipev_sim_orders(sim, 4, 4, &err), &err, "plan.microbatches", "2 x pp");
	/* a placement that is not a permutation */
	assert_int_equal(pp_sim_reset(sim, 2, 4, 2, &err), PP_OK);
	int bad[4] = {0, 1, 1, 3};
	refused(pp_sim_set_placement(sim, bad, 1, &err), &err, "sim.placement", "placed twice");
	int ok[4] = {0, 3, 1, 2};
	refused(pp_sim_set_placement(sim, ok, 3, &err), &err, "sim.placement", "equal length");
	assert_int_equal(pp_sim_set_placement(sim, ok, 1, &err), PP_OK);
	pp_sim_free(sim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_orders_complete),
	    cmocka_unit_test(test_table2_grid),
	    cmocka_unit_test(test_closed_equals_sim),
	    cmocka_unit_test(test_table2_approximate),
	    cmocka_unit_test(test_against_1f1b),
	    cmocka_unit_test(test_residency),
	    cmocka_unit_test(test_sends),
	    cmocka_unit_test(test_iteration_part),
	    cmocka_unit_test(test_pair_hidden),
	    cmocka_unit_test(test_validate),
	    cmocka_unit_test(test_type_closed_equals_sim),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
