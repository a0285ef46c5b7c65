/*
 * share: two jobs on shared links (seed 000 §7) — a hand-solved fixed point,
 * jobs on separate leaves untouched, a shared leaf slowing both, more with
 * oversubscription; two estimates through pp_share_estimates against the
 * fixed point's closed form.
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
#include "paraplan/share.h"
#include "pp_test.h"

/* One cell src -> dst of `bytes`. */
static pp_traffic one_cell(pp_traffic_cell *c, long long src, long long dst, double bytes)
{
	pp_traffic t;
	memset(&t, 0, sizeof t);
	c->src = src;
	c->dst = dst;
	c->type = PP_TRAFFIC_DP;
	c->tier = PP_TIER_NIC;
	c->bytes = bytes;
	t.gpus = 64;
	t.gpus_per_node = 8;
	t.n = 1;
	t.cell = c;
	return t;
}

/* A: node 0 -> node 2, 10 GB, 1 s alone; B: node 1 -> node 2, 20 GB, 2 s alone;
 * one node per leaf, leaf links 100 GB/s, node links 400 GB/s.  Both enter
 * node 2 and leaf 2's downlink; the downlink is the worst: T_A = 1 + 0.1 u_B,
 * u_B = 0.2 / T_B, T_B = 2 + 0.2 u_A, u_A = 0.1 / T_A. */
static void test_fixed_point_by_hand(void **state)
{
	(void)state;
	pp_traffic_cell ca, cb;
	pp_traffic a = one_cell(&ca, 0, 16, 10e9), b = one_cell(&cb, 0, 8, 20e9);
	pp_cluster_net net = {8, 8, 1, 400e9, 100e9};
	pp_share_job jobs[2] = {{&a, 0, 1.0}, {&b, 8, 2.0}};
	pp_share_result r;
	pp_error err;
	assert_int_equal(pp_share_two_jobs(&net, jobs, &r, &err), PP_OK);
	assert_int_equal(r.shared_links, 2); /* node 2 in, leaf 2 down */
	double ta = 1, tb = 2;
	for (int i = 0; i < 200; i++) {
		double na = 1 + 0.1 * (0.2 / tb), nb = 2 + 0.2 * (0.1 / ta);
		ta = na;
		tb = nb;
	}
	assert_rel(r.shared_s[0], ta, 1e-9);
	assert_rel(r.shared_s[1], tb, 1e-9);
	assert_rel(r.worst_link_bytes[0], 10e9, 0);
	/* a job off the cluster is an input error */
	jobs[1].gpu_offset = 60;
	assert_int_equal(pp_share_two_jobs(&net, jobs, &r, &err), PP_EINPUT);
	assert_string_equal(err.field, "share.gpu_offset");
}

static pp_traffic *fig4_job(pp_scenario **sc, double *iter_s)
{
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	assert_int_equal(pp_model_preset("gpt-39.1b", &m, NULL), PP_OK);
	assert_int_equal(pp_system_preset("configtuner-hopper", &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = 192;
	j.seq_len = 2048;
	pp_plan_init(&p);
	p.pp = 4;
	p.tp = 2;
	p.recompute = PP_RECOMPUTE_FULL;
	pp_error err;
	pp_estimate *e = malloc(sizeof *e);
	if (pp_estimate_run(&m, &s, &j, &p, 32, e, &err))
		fail_msg("%s", err.text);
	*iter_s = e->time.iteration_s;
	free(e);
	assert_int_equal(pp_scenario_new(&m, &s, &j, &p, 32, sc, &err), PP_OK);
	pp_traffic *t;
	assert_int_equal(pp_traffic_build(*sc, &t, &err), PP_OK);
	return t;
}

/* Two seed 000 Fig. 4 jobs (4 nodes each, a stage per node) on 12 nodes in
 * leaves of 4: apart (nodes 0-3 and 8-11) nothing is shared; A on 2-5 and B
 * on 6-9 share leaf 1's links and both slow down, more when the leaf's
 * uplink is oversubscribed. */
static void test_two_fig4_jobs(void **state)
{
	(void)state;
	pp_scenario *sc;
	double T;
	pp_traffic *t = fig4_job(&sc, &T);
	pp_cluster_net net = {12, 8, 4, 8 * 50e9, 4 * 8 * 50e9};
	pp_share_job jobs[2] = {{t, 0, T}, {t, 64, T}};
	pp_share_result r;
	pp_error err;
	assert_int_equal(pp_share_two_jobs(&net, jobs, &r, &err), PP_OK);
	assert_int_equal(r.shared_links, 0);
	assert_rel(r.slowdown[0], 1, 0);
	assert_rel(r.slowdown[1], 1, 0);
	jobs[0].gpu_offset = 16;
	jobs[1].gpu_offset = 48;
	assert_int_equal(pp_share_two_jobs(&net, jobs, &r, &err), PP_OK);
	assert_true(r.shared_links >= 2);
	assert_true(r.slowdown[0] > 1 && r.slowdown[1] > 1);
	double s1 = r.slowdown[0], s1b = r.slowdown[1];
	net.leaf_uplink_bytes_per_s /= 4; /* 4:1 oversubscribed */
	assert_int_equal(pp_share_two_jobs(&net, jobs, &r, &err), PP_OK);
	assert_true(r.slowdown[0] > s1);
	print_message("two Fig. 4 jobs sharing leaf 1: slowdown %.7f / %.7f (1:1), %.7f / %.7f "
	              "(4:1)\n",
	              s1, s1b, r.slowdown[0], r.slowdown[1]);
	pp_traffic_free(t);
	pp_scenario_free(sc);
}

/* Leaf 1's uplink bytes of a job on nodes from `first` in leaves of `L`
 * nodes of `g` GPUs: its cells from a node of leaf 1 to a node of another
 * leaf, summed here cell by cell (not by share.c's loads). */
static double leaf1_up_bytes(const pp_traffic *t, long long first, long long L, long long g)
{
	double b = 0;
	for (size_t i = 0; i < t->n; i++) {
		long long sn = first + t->cell[i].src / g, dn = first + t->cell[i].dst / g;
		if (sn / L == 1 && dn / L != 1)
			b += t->cell[i].bytes;
	}
	return b;
}

/* The CLI case ok_share_one_leaf: two llama3-8b jobs, dp 32 on 4 DGX H100
 * nodes each, A on nodes 2-5 and B on 6-9 in leaves of 4.  Only leaf 1's
 * up- and downlink carry both (node links are each one job's); the jobs are
 * mirror images, so both see the same bytes b there and the fixed point of
 * T = a + (b / c) min(1, b / (c T)) is, while b / (c T) < 1, the root of
 * T^2 - a T - (b / c)^2 = 0: T = (a + sqrt(a^2 + 4 (b / c)^2)) / 2. */
static void test_estimates_one_leaf_by_hand(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	pp_error err;
	assert_int_equal(pp_model_preset("llama3-8b", &m, NULL), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = 32;
	j.seq_len = 4096;
	pp_plan_init(&p);
	p.tp = 1;
	p.pp = 1;
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	if (pp_estimate_run(&m, &s, &j, &p, 32, e, &err))
		fail_msg("%s", err.text);
	const pp_estimate *both[2] = {e, e};
	pp_share_topology topo = {4, 1, {2, 6}};
	pp_share_report r;
	assert_int_equal(pp_share_estimates(both, &topo, &r, &err), PP_OK);
	double c = 4 * s.nics_per_node * s.nic_bytes_per_s * s.nic_eff; /* leaf uplink, 1:1 */
	assert_rel(r.net.leaf_uplink_bytes_per_s, c, 1e-12);
	pp_traffic *t;
	assert_int_equal(pp_traffic_of_estimate(e, &t, &err), PP_OK);
	double a = e->time.iteration_s, bA = leaf1_up_bytes(t, 2, 4, 8),
	       bB = leaf1_up_bytes(t, 6, 4, 8);
	assert_true(bA > 0);
	assert_rel(bB, bA, 1e-12); /* mirror images */
	double x = bA / c, T = (a + sqrt(a * a + 4 * x * x)) / 2;
	assert_true(x / T < 1);
	assert_int_equal(r.r.shared_links, 2); /* leaf 1 up and down */
	for (int k = 0; k < 2; k++) {
		assert_rel(r.r.alone_s[k], a, 1e-12);
		assert_rel(r.r.shared_s[k], T, 1e-9);
		assert_rel(r.r.worst_link_bytes[k], bA, 1e-12);
	}
	print_message("one leaf shared: a %.6f s, b %.6f GB, c %.1f GB/s, T %.6f s, slowdown "
	              "%.6f\n",
	              a, bA / 1e9, c / 1e9, T, T / a);
	/* apart (A on 0-3, B after it on 4-7): nothing shared, 1 exactly */
	topo.first_node[0] = 0;
	topo.first_node[1] = -1;
	assert_int_equal(pp_share_estimates(both, &topo, &r, &err), PP_OK);
	assert_int_equal(r.first_node[1], 4);
	assert_int_equal(r.r.shared_links, 0);
	assert_rel(r.r.slowdown[0], 1, 0);
	assert_rel(r.r.slowdown[1], 1, 0);
	/* overlapping nodes, a leaf of no node: input errors naming the field */
	topo.first_node[1] = 3;
	assert_int_equal(pp_share_estimates(both, &topo, &r, &err), PP_EINPUT);
	assert_string_equal(err.field, "share.first_node");
	topo.nodes_per_leaf = 0;
	assert_int_equal(pp_share_estimates(both, &topo, &r, &err), PP_EINPUT);
	assert_string_equal(err.field, "share.nodes_per_leaf");
	pp_traffic_free(t);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixed_point_by_hand),
	    cmocka_unit_test(test_two_fig4_jobs),
	    cmocka_unit_test(test_estimates_one_leaf_by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
