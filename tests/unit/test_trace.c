/*
 * The Perfetto / Chrome trace of a simulated iteration: the shape Perfetto
 * loads (traceEvents, "X" events, ts/dur in microseconds), no overlapping
 * events on one track, each rank's compute track adding up to the
 * simulated iteration, and the TP, CP and EP collectives inside the tasks on
 * tracks of their own (PP_NSTREAMS + the traffic type), each inside one of
 * its rank's compute events and naming its algorithm.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "paraplan/report.h"
#include "paraplan/traffic.h"
#include "pp_test.h"

static json_t *trace_of(const char *model, const char *system, long long gpus, int tp, int pp,
                        int vp, pp_schedule sched, long long gbs, pp_estimate *e)
{
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	assert_int_equal(pp_model_preset(model, &m, NULL), PP_OK);
	assert_int_equal(pp_system_preset(system, &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = gbs;
	j.seq_len = 4096;
	pp_plan_init(&p);
	p.tp = tp;
	p.pp = pp;
	p.vp = vp;
	p.schedule = sched;
	p.sp = tp > 1;
	p.zero = 1;
	pp_error err;
	if (pp_estimate_run(&m, &s, &j, &p, gpus, e, &err))
		fail_msg("%s", err.text);
	pp_sim *sim;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	if (pp_estimate_simulate(e, sim, &err))
		fail_msg("%s", err.text);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(pp_report_trace(e, sim, f), 0);
	fclose(f);
	pp_sim_free(sim);
	json_error_t je;
	json_t *root = json_loadb(buf, len, 0, &je);
	free(buf);
	if (!root)
		fail_msg("trace is not JSON: %s", je.text);
	return root;
}

/* Tracks of a rank: the simulator's streams, then one per traffic type. */
#define NTRACKS (PP_NSTREAMS + PP_TRAFFIC_NTYPES)

static bool in_task_tid(int tid)
{
	return tid == PP_NSTREAMS + PP_TRAFFIC_TP || tid == PP_NSTREAMS + PP_TRAFFIC_CP ||
	       tid == PP_NSTREAMS + PP_TRAFFIC_EP;
}

/* Returns the number of in-task collective events. */
static size_t check(json_t *root, const pp_estimate *e)
{
	json_t *evs = json_object_get(root, "traceEvents");
	assert_true(json_is_array(evs));
	int p = e->plan.pp;
	double *last = calloc((size_t)p * NTRACKS, sizeof *last);
	double *compute = calloc((size_t)p, sizeof *compute);
	size_t nx = 0, ncoll = 0, i, k;
	json_t *ev, *cv;
	json_array_foreach (evs, i, ev) {
		const char *ph = json_string_value(json_object_get(ev, "ph"));
		assert_non_null(ph);
		int pid = (int)json_integer_value(json_object_get(ev, "pid"));
		int tid = (int)json_integer_value(json_object_get(ev, "tid"));
		assert_true(pid >= 0 && pid < p && tid >= 0 &&
		            (tid < PP_NSTREAMS || in_task_tid(tid)));
		if (strcmp(ph, "M") == 0)
			continue;
		assert_string_equal(ph, "X");
		nx++;
		json_t *ts = json_object_get(ev, "ts"), *dur = json_object_get(ev, "dur");
		assert_true(json_is_number(ts) && json_is_number(dur));
		double t0 = json_number_value(ts), d = json_number_value(dur);
		assert_true(d >= 0);
		assert_non_null(json_string_value(json_object_get(ev, "name")));
		/* Events of one track come in time order and never overlap. */
		double *l = &last[pid * NTRACKS + tid];
		if (t0 < *l - 1e-6 * (1 + *l))
			fail_msg("rank %d track %d: event at %.3f us starts before the previous "
			         "ends (%.3f us)",
			         pid, tid, t0, *l);
		*l = t0 + d;
		if (tid == PP_STREAM_COMPUTE)
			compute[pid] += d;
		if (!in_task_tid(tid))
			continue;
		/* a collective inside a task: its algorithm, inside a compute event */
		ncoll++;
		const char *algo =
		    json_string_value(json_object_get(json_object_get(ev, "args"), "algo"));
		assert_non_null(algo);
		assert_true(algo[0] != '\0');
		/* and its NCCL protocol */
		const char *proto =
		    json_string_value(json_object_get(json_object_get(ev, "args"), "protocol"));
		assert_non_null(proto);
		assert_true(strcmp(proto, "simple") == 0 || strcmp(proto, "LL128") == 0 ||
		            strcmp(proto, "LL") == 0);
		bool inside = false;
		json_array_foreach (evs, k, cv) {
			const char *cat = json_string_value(json_object_get(cv, "cat"));
			if (inside || json_integer_value(json_object_get(cv, "pid")) != pid ||
			    json_integer_value(json_object_get(cv, "tid")) != PP_STREAM_COMPUTE ||
			    !cat || strcmp(cat, "bubble") == 0)
				continue;
			double c0 = json_number_value(json_object_get(cv, "ts"));
			double c1 = c0 + json_number_value(json_object_get(cv, "dur"));
			inside = c0 <= t0 + 1e-6 && t0 + d <= c1 + 1e-6;
		}
		if (!inside)
			fail_msg("rank %d: collective at %.3f us outside every compute event", pid,
			         t0);
	}
	assert_true(nx > (size_t)(2 * p));
	for (int r = 0; r < p; r++)
		assert_rel(compute[r] * 1e-6, e->sim.iteration_s, 1e-9);
	free(last);
	free(compute);
	return ncoll;
}

static void test_trace_1f1b(void **state)
{
	(void)state;
	pp_estimate *e = malloc(sizeof *e);
	json_t *root = trace_of("llama3-70b", "dgx-h100", 64, 8, 4, 1, PP_SCHED_1F1B, 64, e);
	/* tp 8 with SP: an all-gather and a reduce-scatter around attention and
	 * MLP, forward and backward, every layer of every micro-batch */
	assert_true(check(root, e) > 0);
	/* the paced stage's collectives, as estimate --json lists them */
	json_t *colls = json_object_get(json_object_get(root, "otherData"), "collectives");
	assert_true(json_array_size(json_object_get(colls, "entries")) > 0);
	/* Units in microseconds: the trace spans the simulated iteration. */
	assert_rel(
	    json_number_value(json_object_get(json_object_get(root, "otherData"), "iteration_s")),
	    e->sim.iteration_s, 1e-12);
	json_decref(root);
	free(e);
}

static void test_trace_interleaved(void **state)
{
	(void)state;
	pp_estimate *e = malloc(sizeof *e);
	json_t *root = trace_of("llama3-8b", "dgx-h100", 32, 2, 4, 2, PP_SCHED_INTERLEAVED, 64, e);
	assert_true(check(root, e) > 0);
	json_decref(root);
	free(e);
}

static void test_trace_zb(void **state)
{
	(void)state;
	pp_estimate *e = malloc(sizeof *e);
	json_t *root = trace_of("llama3-8b", "dgx-h100", 16, 2, 8, 1, PP_SCHED_ZB, 32, e);
	assert_true(check(root, e) > 0);
	json_decref(root);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trace_1f1b),
	    cmocka_unit_test(test_trace_interleaved),
	    cmocka_unit_test(test_trace_zb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
