/*
 * schedule-type: the registry (ids, names, aliases, Megatron's vp rule), the
 * links against sends_per_microbatch, and the two consumers of the sends that
 * drifted apart before the table (issue 21): an estimate's per-GPU pp_bytes
 * and the traffic matrix's pp-fwd + pp-bwd of the same GPU.
 */
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

static void test_registry(void **state)
{
	(void)state;
	assert_true(pp_schedule_type_n >= 5);
	assert_true(pp_schedule_type_n <= PP_SCHED_MAX);
	for (int i = 0; i < pp_schedule_type_n; i++) {
		const pp_schedule_type *t = pp_schedule_type_of((pp_schedule)i);
		assert_non_null(t);
		assert_int_equal((int)t->id, i);
		assert_ptr_equal(pp_schedule_type_find(t->name), t);
		for (const char *const *a = t->aliases; a && *a; a++)
			assert_ptr_equal(pp_schedule_type_find(*a), t);
		for (const char *const *a = t->torchtitan; a && *a; a++)
			assert_ptr_equal(pp_schedule_type_torchtitan(*a), t);
		pp_schedule s = PP_SCHED_1F1B;
		pp_error err;
		assert_int_equal(pp_schedule_parse(t->name, "", &s, &err), PP_OK);
		assert_int_equal((int)s, i);
		assert_string_equal(pp_schedule_name(s), t->name);
		/* every member the callers use unconditionally is set */
		assert_non_null(t->validate);
		assert_non_null(t->chunks);
		assert_non_null(t->virtual_stage);
		assert_non_null(t->head_stage);
		assert_non_null(t->inflight);
		assert_non_null(t->head_held);
		assert_non_null(t->sends_per_microbatch);
		assert_non_null(t->links);
		assert_non_null(t->iteration);
		assert_non_null(t->bubble_fraction);
		assert_non_null(t->sim_shape);
		assert_non_null(t->sim_order);
		assert_true(t->param_copies >= 1);
		/* the forms are fixed points */
		assert_int_equal((int)pp_schedule_for_vp(t->virtual_form, 2), (int)t->virtual_form);
		assert_int_equal((int)pp_schedule_for_vp(t->flat_form, 1), (int)t->flat_form);
	}
	assert_null(pp_schedule_type_of((pp_schedule)pp_schedule_type_n));
	assert_null(pp_schedule_type_find("no-such-schedule"));
	/* Megatron: vp > 1 means interleaved 1F1B, and back */
	assert_int_equal(pp_schedule_for_vp(PP_SCHED_1F1B, 2), PP_SCHED_INTERLEAVED);
	assert_int_equal(pp_schedule_for_vp(PP_SCHED_INTERLEAVED, 1), PP_SCHED_1F1B);
	assert_int_equal(pp_schedule_for_vp(PP_SCHED_ZB, 2), PP_SCHED_ZB);
	assert_int_equal(pp_schedule_search_default_mask(), (1u << PP_SCHED_1F1B) |
	                                                        (1u << PP_SCHED_INTERLEAVED) |
	                                                        (1u << PP_SCHED_ZB));
}

/* An inner rank's links carry sends_per_microbatch activations; every
 * link's peer is a rank; the placement puts each virtual stage on one
 * (rank, chunk) and the head on a rank. */
static void test_links_and_placement(void **state)
{
	(void)state;
	for (int i = 0; i < pp_schedule_type_n; i++) {
		const pp_schedule_type *t = pp_schedule_types[i];
		for (int pp = 2; pp <= 8; pp++)
			for (int vp = 1; vp <= (t->uses_vp ? 4 : 1); vp++) {
				pp_plan p;
				pp_plan_init(&p);
				p.pp = pp;
				p.vp = t->uses_vp ? vp + 1 : 1;
				p.schedule = t->id;
				p.microbatches = 16;
				for (int r = 0; r < pp; r++) {
					pp_sched_link l[PP_SCHED_MAX_LINKS];
					int n = t->links(&p, r, l);
					assert_true(n >= 1 && n <= PP_SCHED_MAX_LINKS);
					double sum = 0;
					for (int k = 0; k < n; k++) {
						assert_true(l[k].peer >= 0 && l[k].peer < pp);
						sum += l[k].count;
					}
					if (r > 0 && r < pp - 1)
						assert_rel(sum, t->sends_per_microbatch(&p), 1e-15);
				}
				int c = t->chunks(&p), head = t->head_stage(&p);
				assert_true(head >= 0 && head < pp);
				char seen[64] = {0};
				for (int r = 0; r < pp; r++)
					for (int k = 0; k < c; k++) {
						unsigned v = (unsigned)t->virtual_stage(&p, r, k);
						assert_true(v < (unsigned)(pp * c) &&
						            v < sizeof seen);
						assert_int_equal(seen[v], 0);
						seen[v] = 1;
					}
				/* the head sits on the rank of the last virtual stage
				 * (of the first copy's line where there are two) */
				int last_vs = t->fold == PP_FOLD_DUAL ? pp - 1 : pp * c - 1;
				int last_r = -1;
				for (int r = 0; r < pp; r++)
					for (int k = 0; k < c; k++)
						if (t->virtual_stage(&p, r, k) == last_vs)
							last_r = r;
				assert_int_equal(last_r, head);
			}
	}
}

/* Llama-3 8B on 16 H100, tp 2 pp 4 (issue 21's case): an inner GPU's
 * pp_bytes (the estimate) equals what the traffic matrix has it send,
 * pp-fwd + pp-bwd, under every schedule; DHelix's W sends twice 1F1B's
 * (seed 002 §4.1: "two down-up trips for each micro-batch, doubling the
 * Send/Recv communication volume"). */
static void test_pp_bytes_equal_traffic(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	assert_int_equal(pp_model_preset("llama3-8b", &m, NULL), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = 32;
	j.seq_len = 8192;
	pp_estimate *e = calloc(1, sizeof *e);
	assert_non_null(e);
	double first = 0;
	for (int i = 0; i < pp_schedule_type_n; i++) {
		pp_plan pl;
		pp_plan_init(&pl);
		pl.tp = 2;
		pl.pp = 4;
		pl.schedule = (pp_schedule)i;
		if (pp_schedule_types[i]->uses_vp)
			pl.vp = 2;
		pp_error err;
		if (pp_estimate_run(&m, &s, &j, &pl, 16, e, &err))
			fail_msg("%s: %s: %s", pp_schedule_types[i]->name, err.field, err.text);
		pp_scenario *sc;
		if (pp_scenario_new(&m, &s, &j, &e->plan, 16, &sc, &err))
			fail_msg("%s: %s", err.field, err.text);
		pp_traffic *tr;
		assert_int_equal(pp_traffic_build(sc, &tr, &err), PP_OK);
		/* order tp-cp-ep-dp-pp: GPU 4 is tp 0, dp 0 of stage 1 */
		double sent = pp_traffic_sent(tr, PP_TRAFFIC_PP_FWD, 4) +
		              pp_traffic_sent(tr, PP_TRAFFIC_PP_BWD, 4);
		assert_true(sent > 0);
		assert_rel(e->pp_bytes, sent, 1e-12);
		if (i == PP_SCHED_1F1B)
			first = sent;
		if (i == PP_SCHED_WSHAPE || i == PP_SCHED_DUALPIPEV) /* two trips */
			assert_rel(sent, 2 * first, 1e-12);
		if (i == PP_SCHED_DUALPIPE) /* one trip, half of them each way */
			assert_rel(sent, first, 1e-12);
		pp_traffic_free(tr);
		pp_scenario_free(sc);
	}
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_registry),
	    cmocka_unit_test(test_links_and_placement),
	    cmocka_unit_test(test_pp_bytes_equal_traffic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
