/*
 * moe: the semi-predictable all-to-all of seed 000 §3.2 — uniform routing in
 * closed form, skew, drift toward uniform, capacity, the sampled percentile,
 * the four all-to-alls of a layer (identical or transposed), and drift's
 * mean over a run checked by hand.
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

#include "paraplan/moe.h"
#include "paraplan/paraplan.h"
#include "pp_test.h"

/* Mixtral-like: 8 experts, top-2, EP 8, 4096 tokens per GPU, h 4096 bf16,
 * 50 GB/s per GPU. */
static pp_moe_routing mixtral(void)
{
	pp_moe_routing r;
	memset(&r, 0, sizeof r);
	r.experts = 8;
	r.top_k = 2;
	r.ep = 8;
	r.tokens = 4096;
	r.token_bytes = 4096 * 2;
	r.link_bytes_per_s = 50e9;
	return r;
}

static void test_uniform_closed_form(void **state)
{
	(void)state;
	pp_moe_routing r = mixtral();
	pp_moe_result o;
	pp_error err;
	assert_int_equal(pp_moe_alltoall(&r, 0, 0, 0.99, 1, &o, &err), PP_OK);
	double cell = r.tokens * r.top_k / r.ep * r.token_bytes;
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			assert_rel(o.expected[i * 8 + j], i == j ? 0 : cell, 1e-12);
	/* (ep - 1)/ep of a GPU's T k tokens leave it */
	assert_rel(o.expected_s, 7.0 / 8 * r.tokens * r.top_k * r.token_bytes / 50e9, 1e-12);
	assert_rel(o.uniform_s, o.expected_s, 1e-12);
	assert_rel(o.dropped_fraction, 0, 0);
	pp_moe_result_free(&o);
}

static void test_skew_drift_capacity(void **state)
{
	(void)state;
	pp_moe_routing r = mixtral();
	r.skew = 1.0;
	r.drift_steps = 100;
	pp_moe_result a, b, c;
	pp_error err;
	assert_int_equal(pp_moe_alltoall(&r, 0, 0, 0.99, 1, &a, &err), PP_OK);
	/* skewed: the GPU of the popular expert receives most, slower than uniform */
	assert_true(a.expected_s > 1.5 * a.uniform_s);
	assert_true(a.dtime_dskew > 0);
	assert_true(a.expected[1 * 8 + 0] > a.expected[0 * 8 + 1]);
	/* drift toward uniform: later steps are faster, and converge */
	assert_int_equal(pp_moe_alltoall(&r, 200, 0, 0.99, 1, &b, &err), PP_OK);
	assert_true(b.expected_s < a.expected_s);
	assert_rel(b.skew_now, exp(-2.0), 1e-12);
	pp_moe_result_free(&b);
	assert_int_equal(pp_moe_alltoall(&r, 5000, 0, 0.99, 1, &b, &err), PP_OK);
	assert_rel(b.expected_s, b.uniform_s, 1e-6);
	pp_moe_result_free(&b);
	/* capacity factor 1.25 drops the popular experts' overflow; faster */
	r.capacity_factor = 1.25;
	assert_int_equal(pp_moe_alltoall(&r, 0, 0, 0.99, 1, &c, &err), PP_OK);
	assert_true(c.dropped_fraction > 0.1);
	assert_true(c.expected_s < a.expected_s);
	pp_moe_result_free(&a);
	pp_moe_result_free(&c);
}

/* Sampled routing: the 99th percentile is above the expectation, by little
 * for 8192 picks per GPU. */
static void test_percentile(void **state)
{
	(void)state;
	pp_moe_routing r = mixtral();
	r.skew = 0.5;
	pp_moe_result o;
	pp_error err;
	assert_int_equal(pp_moe_alltoall(&r, 0, 200, 0.99, 42, &o, &err), PP_OK);
	assert_true(o.percentile_s >= o.expected_s);
	assert_true(o.percentile_s < 1.05 * o.expected_s);
	for (int c = 0; c < 64; c++)
		assert_true(o.percentile[c] >= 0.97 * o.expected[c]);
	pp_moe_result o2;
	assert_int_equal(pp_moe_alltoall(&r, 0, 200, 0.99, 42, &o2, &err), PP_OK);
	assert_memory_equal(o.percentile, o2.percentile, 64 * sizeof(double));
	pp_moe_result_free(&o);
	pp_moe_result_free(&o2);
}

/* A measured histogram overrides the skew. */
static void test_histogram(void **state)
{
	(void)state;
	pp_moe_routing r = mixtral();
	double h[8] = {4, 1, 1, 1, 1, 1, 1, 0};
	r.histogram = h;
	r.skew = 3;
	pp_moe_result o;
	pp_error err;
	assert_int_equal(pp_moe_alltoall(&r, 0, 0, 0.99, 1, &o, &err), PP_OK);
	assert_rel(o.expected[1 * 8 + 0], r.tokens * r.top_k * 0.4 * r.token_bytes, 1e-12);
	assert_rel(o.expected[0 * 8 + 7], 0, 0);
	pp_moe_result_free(&o);
	r.histogram = NULL;
	r.experts = 6;
	assert_int_equal(pp_moe_alltoall(&r, 0, 0, 0.99, 1, &o, &err), PP_EINPUT);
	assert_string_equal(err.field, "moe.ep");
}

/* Seed 000 §3.2, Fig. 7: the forward combine and the backward's second
 * all-to-all are the transpose of the first; the backward's first is
 * identical to it. */
static void test_four_alltoalls(void **state)
{
	(void)state;
	pp_moe_routing r = mixtral();
	r.skew = 1.2;
	pp_moe_result o;
	pp_error err;
	assert_int_equal(pp_moe_alltoall(&r, 0, 0, 0.99, 1, &o, &err), PP_OK);
	double f1[64], f2[64], b1[64], b2[64];
	pp_moe_layer_alltoalls(o.expected, 8, f1, f2, b1, b2);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++) {
			assert_true(f2[i * 8 + j] == f1[j * 8 + i]);
			assert_true(b1[i * 8 + j] == f1[i * 8 + j]);
			assert_true(b2[i * 8 + j] == f1[j * 8 + i]);
		}
	assert_true(f1[1 * 8 + 0] != f2[1 * 8 + 0]); /* skewed: not symmetric */
	pp_moe_result_free(&o);
}

/* --moe-routing's spec: the parts, their ranges, one line naming the flag. */
static void test_routing_parse(void **state)
{
	(void)state;
	double sk, dr, cap;
	pp_error err;
	assert_int_equal(pp_moe_routing_parse("zipf:1.2", &sk, &dr, &cap, &err), PP_OK);
	assert_true(sk == 1.2 && dr == 0 && cap == 0);
	assert_int_equal(
	    pp_moe_routing_parse("zipf:0.5,drift:5000,capacity:1.25", &sk, &dr, &cap, &err), PP_OK);
	assert_true(sk == 0.5 && dr == 5000 && cap == 1.25);
	assert_int_equal(pp_moe_routing_parse("zipf:1,capacity:2,drift:10", &sk, &dr, &cap, &err),
	                 PP_OK);
	assert_true(dr == 10 && cap == 2);
	const char *bad[] = {"",
	                     "zipf",
	                     "zipf:",
	                     "zipf:-1",
	                     "zipf:11",
	                     "zipf:1,drift:0",
	                     "zipf:1,capacity:0",
	                     "zipf:1,drift:5,drift:6",
	                     "zipf:1,foo:2",
	                     "zipf:1x",
	                     "uniform"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(pp_moe_routing_parse(bad[i], &sk, &dr, &cap, &err), PP_EINPUT);
		assert_string_equal(err.field, "moe-routing");
	}
}

/* The routing of a real plan (mixtral-8x7b, ep 8 inside a DGX H100's NVLink
 * domain): the p99 dispatch time grows with the skew, and a capacity factor
 * bounds it (tokens over capacity are dropped). */
static void test_routing_of_plan(void **state)
{
	(void)state;
	pp_model m;
	pp_system sys;
	pp_job job;
	pp_plan p;
	pp_error err;
	assert_int_equal(pp_model_preset("mixtral-8x7b", &m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &sys, &err), PP_OK);
	pp_job_init(&job);
	job.global_batch = 64;
	job.seq_len = 4096;
	pp_plan_init(&p);
	p.ep = 8;
	p.dp = 8; /* resolved: 8 GPUs, one node */
	pp_moe_routing r;
	assert_int_equal(pp_moe_routing_of_plan(&m, &sys, &job, &p, &r, &err), PP_OK);
	assert_int_equal(r.experts, 8);
	assert_int_equal(r.top_k, 2);
	assert_true(r.tokens == 4096 && r.token_bytes == 2.0 * 4096);
	assert_true(r.link_bytes_per_s == sys.nvlink_bytes_per_s);
	double prev = 0;
	const double skews[] = {0, 0.5, 1.0, 1.5};
	for (size_t i = 0; i < sizeof skews / sizeof *skews; i++) {
		r.skew = skews[i];
		pp_moe_result res;
		assert_int_equal(pp_moe_alltoall(&r, 0, 200, 0.99, 7, &res, &err), PP_OK);
		print_message("mixtral ep8 skew %.1f: dispatch p99 %.3f ms, expected %.3f ms\n",
		              skews[i], res.percentile_s * 1e3, res.expected_s * 1e3);
		assert_true(res.percentile_s >= res.expected_s * (1 - 1e-9));
		assert_true(res.percentile_s > prev); /* moves with skew */
		prev = res.percentile_s;
		pp_moe_result_free(&res);
	}
	r.capacity_factor = 1.25; /* at skew 1.5 */
	pp_moe_result capped;
	assert_int_equal(pp_moe_alltoall(&r, 0, 200, 0.99, 7, &capped, &err), PP_OK);
	assert_true(capped.percentile_s < prev && capped.dropped_fraction > 0);
	pp_moe_result_free(&capped);
	p.ep = 1;
	assert_int_equal(pp_moe_routing_of_plan(&m, &sys, &job, &p, &r, &err), PP_EINPUT);
}

/* The busiest-GPU factor of the four EP all-to-alls of one mixtral layer
 * (pp_coll.busiest) at ep 8, one micro-batch of 4,096 tokens. */
static double ep_busiest(const char *spec, double train_tokens, pp_error *err)
{
	pp_model m;
	pp_job job;
	pp_plan p;
	assert_int_equal(pp_model_preset("mixtral-8x7b", &m, err), PP_OK);
	pp_job_init(&job);
	job.global_batch = 64;
	job.seq_len = 4096;
	job.train_tokens = train_tokens;
	if (spec)
		assert_int_equal(pp_field_set(&job, NULL, "moe-routing", spec, err), PP_OK);
	pp_plan_init(&p);
	p.ep = 8;
	p.dp = 8;
	pp_work *w = malloc(sizeof *w);
	assert_non_null(w);
	pp_work_init(w);
	pp_layer_work(&m, &job, &p, 0, w);
	double f = 0;
	int n = 0;
	for (int i = 0; i < w->ncolls; i++)
		if (w->colls[i].group == PP_GROUP_EP && w->colls[i].kind == PP_COLL_ALLTOALL) {
			assert_true(n == 0 || w->colls[i].busiest == f); /* all four alike */
			f = w->colls[i].busiest;
			n++;
		}
	assert_int_equal(n, 4);
	free(w);
	return f;
}

/* --moe-routing through the registry into the workload: no routing and zipf:0
 * are uniform (factor 1); the factor is the expected time over the uniform
 * one of test_routing_of_plan's table (0.542 / 0.130 ms at skew 1.5) and
 * rises with skew; a capacity cuts it; a bad spec leaves the job as it was. */
static void test_routing_in_workload(void **state)
{
	(void)state;
	pp_error err;
	assert_true(ep_busiest(NULL, 0, &err) == 1);
	assert_true(fabs(ep_busiest("zipf:0", 0, &err) - 1) < 1e-12);
	double lo = ep_busiest("zipf:0.5", 0, &err), hi = ep_busiest("zipf:1.5", 0, &err);
	assert_true(lo > 1 && hi > lo);
	assert_true(fabs(hi - 0.542 / 0.1305) < 0.02);
	assert_true(ep_busiest("zipf:1.5,capacity:1.25", 0, &err) < hi);
	pp_job job;
	pp_job_init(&job);
	assert_int_equal(pp_field_set(&job, NULL, "moe-routing", "zipf:1,capacity:0", &err),
	                 PP_EINPUT);
	assert_false(job.moe_routing.set);
}

/* Drift over a run (pp_moe_alltoall_run).  By hand: 2 experts on 2 GPUs,
 * top-1, 1,000 tokens a GPU, 1 byte a token over 1 B/s: expert 0 (GPU 0)
 * draws p0 = 1 / (1 + 2^-s) of the picks, so GPU 0 receives 1000 p0 from
 * GPU 1 and sends 1000 (1 - p0): the time is 1000 p0 s.  Skew 1, drift 100,
 * a run of 100 steps: the mean is 1000 int_0^1 du / (1 + 2^-(e^-u)) =
 * 607.404605538 s (Simpson, 200,000 intervals, in Python: not this code),
 * between step 0's 666.667 and step 100's 563.405. */
static void test_drift_over_run(void **state)
{
	(void)state;
	pp_moe_routing r;
	memset(&r, 0, sizeof r);
	r.experts = 2;
	r.top_k = 1;
	r.ep = 2;
	r.tokens = 1000;
	r.token_bytes = 1;
	r.link_bytes_per_s = 1;
	r.skew = 1;
	r.drift_steps = 100;
	pp_moe_result o, a;
	pp_error err;
	assert_int_equal(pp_moe_alltoall_run(&r, 100, 0, 0.99, 1, &o, &err), PP_OK);
	assert_rel(o.expected_s, 607.404605538, 1e-6);
	assert_rel(o.expected[1 * 2 + 0], 607.404605538, 1e-6);
	assert_rel(o.expected[0 * 2 + 1], 1000 - 607.404605538, 1e-6);
	assert_rel(o.skew_now, exp(-1.0), 1e-12);
	pp_moe_result_free(&o);
	/* mixtral, skew 1.5, drift 500, 2,000 steps: the integral against the
	 * mean of the 2,000 steps one by one (the steps taken as continuous: to
	 * 1e-3); the samples spread over the run; the run's end near uniform */
	r = mixtral();
	r.skew = 1.5;
	r.drift_steps = 500;
	assert_int_equal(pp_moe_alltoall_run(&r, 2000, 50, 0.99, 7, &o, &err), PP_OK);
	double sum = 0, cell = 0;
	for (int t = 0; t < 2000; t++) {
		assert_int_equal(pp_moe_alltoall(&r, t, 0, 0.99, 1, &a, &err), PP_OK);
		sum += a.expected_s;
		cell += a.expected[1 * 8 + 0];
		pp_moe_result_free(&a);
	}
	assert_rel(o.expected_s, sum / 2000, 1e-3);
	assert_rel(o.expected[1 * 8 + 0], cell / 2000, 1e-3);
	assert_int_equal(pp_moe_alltoall(&r, 0, 50, 0.99, 7, &a, &err), PP_OK);
	assert_true(o.expected_s < 0.5 * a.expected_s && o.expected_s > o.uniform_s);
	assert_true(o.percentile_s > 2 * o.expected_s); /* the run's early steps */
	assert_true(o.percentile_s <= a.percentile_s * 1.001);
	pp_moe_result_free(&a);
	pp_moe_result_free(&o);
	/* no drift: the run is step 0 */
	r.drift_steps = 0;
	assert_int_equal(pp_moe_alltoall_run(&r, 2000, 0, 0.99, 1, &o, &err), PP_OK);
	assert_int_equal(pp_moe_alltoall(&r, 0, 0, 0.99, 1, &a, &err), PP_OK);
	assert_rel(o.expected_s, a.expected_s, 0);
	pp_moe_result_free(&a);
	pp_moe_result_free(&o);
	/* into the workload: the run's steps from --tokens (gbs 64 x seq 4096 a
	 * step); without --tokens the drift has no run (the plan refuses it) */
	double hi = ep_busiest("zipf:1.5", 0, &err);
	double run = ep_busiest("zipf:1.5,drift:500", 2000 * 64 * 4096.0, &err);
	assert_true(run > 1 && run < 0.5 * hi);
	pp_job job;
	pp_job_init(&job);
	job.global_batch = 64;
	job.seq_len = 4096;
	job.train_tokens = 2000 * 64 * 4096.0;
	assert_rel(pp_moe_run_steps(&job), 0, 0); /* no routing, no drift */
	assert_int_equal(pp_field_set(&job, NULL, "moe-routing", "zipf:1.5,drift:500", &err),
	                 PP_OK);
	assert_rel(pp_moe_run_steps(&job), 2000, 1e-12);
}

/*
 * DeepEP's deduplicated dispatch (pp_moe_dispatch_copies), by hand.
 * DeepSeek-V3 on ep 64, 8 a node: 4 of 8 groups, one group a node, reach
 * D = 8 (1 - C(7,4) / C(8,4)) = 4 nodes, 3.5 of them remote; each gets
 * k / D = 2 experts on 8 (1 - (7/8)^2) = 1.875 GPUs, 7/8 of them not the one
 * the token enters by: 4 x 1.875 x 7/8 = 6.5625 NVLink copies.  Without
 * the groups the 8 experts reach 8 (1 - C(224,8) / C(256,8)) = 5.29465 nodes
 * (Python's math.comb, not this code).  On one node (ep 8), the groups a
 * GPU each: 4 GPUs, 3.5 copies over NVLink and none over the network.  At
 * k = 1 the network copy is the all-to-all's, (N - 1) / N, and the NVLink
 * forward reaches the expert's GPU unless it is the entry one, 7/8.
 */
static void test_dispatch_copies(void **state)
{
	(void)state;
	double nic, nvl;
	pp_moe_dispatch_copies(256, 8, 8, 4, 64, 8, &nic, &nvl);
	assert_rel(nic, 3.5, 1e-12);
	assert_rel(nvl, 6.5625, 1e-12);
	pp_moe_dispatch_copies(256, 8, 0, 0, 64, 8, &nic, &nvl);
	assert_rel(nic, 5.294652000382479 * 7 / 8, 1e-9);
	assert_true(nic < 7); /* the all-to-all's 8 x 56/64 */
	pp_moe_dispatch_copies(256, 8, 8, 4, 8, 8, &nic, &nvl);
	assert_true(nic == 0);
	assert_rel(nvl, 3.5, 1e-12);
	pp_moe_dispatch_copies(64, 1, 0, 0, 64, 8, &nic, &nvl);
	assert_rel(nic, 7.0 / 8, 1e-12);
	assert_rel(nvl, 7.0 / 8, 1e-12);
	pp_moe_dispatch_copies(256, 8, 8, 4, 1, 8, &nic, &nvl); /* no EP */
	assert_true(nic == 0 && nvl == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_uniform_closed_form), cmocka_unit_test(test_skew_drift_capacity),
	    cmocka_unit_test(test_percentile),          cmocka_unit_test(test_histogram),
	    cmocka_unit_test(test_four_alltoalls),      cmocka_unit_test(test_routing_parse),
	    cmocka_unit_test(test_routing_of_plan),     cmocka_unit_test(test_routing_in_workload),
	    cmocka_unit_test(test_drift_over_run),      cmocka_unit_test(test_dispatch_copies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
