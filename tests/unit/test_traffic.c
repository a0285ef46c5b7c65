/*
 * traffic: the GPU x GPU matrix against seed 000 §4 Eq. 2-4 (volumes) and
 * the structure of seed 000 Fig. 3 and Fig. 4 (which pairs talk, with which
 * type), built by hand; the timeline against the simulator's intervals.
 */
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

/* Seed 000's GPT-39B (Table 2: l 48, h 8192, s 2048, batch 48 per replica)
 * on its Hopper machines, Megatron-DeepSpeed: full recompute (Eq. 2's six
 * all-reduces), bf16 gradients (Eq. 4's 2N bytes), no ZeRO; ranks tp-dp-pp
 * (TP and DP inside machines, PP across). */
static pp_scenario *gpt39b(int p, int t, int d, int mbs, pp_traffic **tr)
{
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan pl;
	assert_int_equal(pp_model_preset("gpt-39.1b", &m, NULL), PP_OK);
	assert_int_equal(pp_system_preset("configtuner-hopper", &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = 48LL * d;
	j.seq_len = 2048;
	j.grad_bytes = 2;
	pp_plan_init(&pl);
	pl.pp = p;
	pl.tp = t;
	pl.dp = d;
	pl.mbs = mbs;
	pl.recompute = PP_RECOMPUTE_FULL;
	pp_error err;
	pp_scenario *sc = NULL;
	if (pp_scenario_new(&m, &s, &j, &pl, (long long)p * t * d, &sc, &err))
		fail_msg("%s: %s", err.field, err.text);
	if (pp_traffic_build(sc, tr, &err))
		fail_msg("%s: %s", err.field, err.text);
	return sc;
}

/* Eq. 2-4 of seed 000 against the matrix: the TP and PP bytes of one GPU,
 * DP over all GPUs, and the per-type totals against the closed-form cost's
 * per-GPU bytes. */
static void test_eq2_4_volumes(void **state)
{
	(void)state;
	const int P = 4, T = 4, D = 4, b = 2;
	pp_traffic *tr;
	pp_scenario *sc = gpt39b(P, T, D, b, &tr);
	const pp_plan *plan = pp_scenario_plan(sc);
	double m = (double)plan->microbatches, l = 48, h = 8192, s = 2048;
	assert_int_equal(plan->microbatches, 48 / b);
	double bsh2 = 2.0 * b * s * h; /* one activation, bytes */
	/* Eq. 2: m x l/p x 6 x 2bsh x 2(t - 1)/t, a GPU of a middle stage (the
	 * first and last add the embedding's and the loss's TP collectives). */
	double eq2 = m * l / P * 6 * bsh2 * 2.0 * (T - 1) / T;
	for (long long g = 16; g < 48; g++)
		assert_rel(pp_traffic_sent(tr, PP_TRAFFIC_TP, g), eq2, 1e-12);
	/* Eq. 3: rank 0 sends one activation and receives one gradient per
	 * micro-batch: m x 2 x 2bsh; a middle GPU sends both directions. */
	double eq3 = m * 2 * bsh2;
	assert_rel(pp_traffic_sent(tr, PP_TRAFFIC_PP_FWD, 0) +
	               pp_traffic_received(tr, PP_TRAFFIC_PP_BWD, 0),
	           eq3, 1e-12);
	assert_rel(pp_traffic_sent(tr, PP_TRAFFIC_PP_FWD, 20) +
	               pp_traffic_sent(tr, PP_TRAFFIC_PP_BWD, 20),
	           eq3, 1e-12);
	assert_rel(pp_traffic_sent(tr, PP_TRAFFIC_PP_BWD, 0), 0, 0);
	/* Eq. 4: 2N/(pt) x 2(d - 1)/d per GPU, N the parameters a GPU holds x
	 * p t, with each GPU's own parameter count from the memory model (the
	 * learned position table and the final LayerNorm included). */
	double dp_total = 0, held = 0;
	for (int st = 0; st < P; st++) {
		pp_stage_memory mem;
		pp_error err;
		assert_int_equal(pp_scenario_memory(sc, st, &mem, &err), PP_OK);
		dp_total += T * D * 2 * mem.params * 2.0 * (D - 1) / D;
		held += T * mem.params;
	}
	double dp_got = tr->total_bytes[PP_TRAFFIC_DP][0] + tr->total_bytes[PP_TRAFFIC_DP][1];
	assert_rel(dp_got, dp_total, 1e-12);
	/* ... and Eq. 4 with the paper's N = 39.1e9 (uniform over stages): the
	 * held parameters add the tied embedding's copy on the last stage. */
	double eq4 = 2 * 39.1e9 / (P * T) * 2.0 * (D - 1) / D;
	assert_rel(dp_got / (P * T * D), eq4, 0.02);
	assert_rel(held, 39.1e9 + 51200.0 * 8192, 0.01);
	/* Embedding sync: V h / t gradients all-reduced over 2 GPUs (first and
	 * last stage) = V h / t x 2 bytes sent by each of the 2 t d GPUs. */
	double emb = tr->total_bytes[PP_TRAFFIC_EMB][0] + tr->total_bytes[PP_TRAFFIC_EMB][1];
	assert_rel(emb, 2.0 * T * D * 51200 * 8192 / T * 2, 1e-12);
	/* Totals per type = the closed-form cost's bytes per GPU, summed. */
	pp_work *ws = malloc(sizeof *ws);
	pp_work_init(ws);
	double tp = 0, dp = 0;
	for (int st = 0; st < P; st++) {
		pp_stage_time t;
		pp_error err;
		assert_int_equal(pp_scenario_cost(sc, st, ws, &t, &err), PP_OK);
		tp += T * D * t.tp_bytes * m;
		dp += T * D * t.dp_bytes;
	}
	free(ws);
	assert_rel(tr->total_bytes[PP_TRAFFIC_TP][0] + tr->total_bytes[PP_TRAFFIC_TP][1], tp,
	           1e-12);
	assert_rel(dp_got, dp, 1e-12);
	/* seed 000 Fig. 5: TP is the bulk of the volume */
	double all = 0;
	for (int k = 0; k < PP_TRAFFIC_NTYPES; k++)
		all += tr->total_bytes[k][0] + tr->total_bytes[k][1];
	assert_true(tp / all > 0.9);
	pp_traffic_free(tr);
	pp_scenario_free(sc);
}

/* Hand-built expectation of the types GPU i sends to GPU j under
 * (p, t, d), ranks tp-dp-pp on GPUs in rank order (a bit per type). */
static unsigned expect(int p, int t, int d, int i, int j)
{
	int ti = i % t, di = i / t % d, si = i / (t * d);
	int tj = j % t, dj = j / t % d, sj = j / (t * d);
	unsigned want = 0;
	if (si == sj && di == dj && t > 1 && tj == (ti + 1) % t)
		want |= 1u << PP_TRAFFIC_TP;
	if (si == sj && ti == tj && d > 1 && dj == (di + 1) % d)
		want |= 1u << PP_TRAFFIC_DP;
	if (ti == tj && di == dj && sj == si + 1)
		want |= 1u << PP_TRAFFIC_PP_FWD;
	if (ti == tj && di == dj && sj == si - 1)
		want |= 1u << PP_TRAFFIC_PP_BWD;
	if (ti == tj && di == dj && p > 1 && ((si == 0 && sj == p - 1) || (si == p - 1 && sj == 0)))
		want |= 1u << PP_TRAFFIC_EMB;
	return want;
}

static void check_structure(int p, int t, int d, int *nvlink_dp, int *nic_dp)
{
	pp_traffic *tr;
	pp_scenario *sc = gpt39b(p, t, d, 1, &tr);
	int n = p * t * d;
	assert_int_equal(tr->gpus, n);
	unsigned *got = calloc((size_t)n * n, sizeof *got);
	*nvlink_dp = *nic_dp = 0;
	for (size_t k = 0; k < tr->n; k++) {
		const pp_traffic_cell *c = &tr->cell[k];
		assert_true(c->bytes > 0);
		got[c->src * n + c->dst] |= 1u << c->type;
		/* tier: NVLink inside a machine of 8 */
		assert_int_equal(c->tier, c->src / 8 == c->dst / 8 ? PP_TIER_NVLINK : PP_TIER_NIC);
		if (c->type == PP_TRAFFIC_DP)
			++*(c->tier == PP_TIER_NVLINK ? nvlink_dp : nic_dp);
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (got[i * n + j] != expect(p, t, d, i, j))
				fail_msg("(%d,%d,%d) GPU %d -> %d: types %#x, expected %#x", p, t,
				         d, i, j, got[i * n + j], expect(p, t, d, i, j));
	free(got);
	/* per node: what leaves all nodes = what enters them = the NIC tier */
	double out = 0, in = 0, nic = 0;
	for (long long k = 0; k < tr->nodes; k++) {
		out += tr->node_out_bytes[k];
		in += tr->node_in_bytes[k];
	}
	for (int k = 0; k < PP_TRAFFIC_NTYPES; k++)
		nic += tr->total_bytes[k][PP_TIER_NIC];
	assert_int_equal(tr->nodes, n / 8);
	assert_rel(out, nic, 1e-12);
	assert_rel(in, nic, 1e-12);
	pp_traffic_free(tr);
	pp_scenario_free(sc);
}

/* Fig. 3a (4,4,4) and 3b (2,8,4) on 64 GPUs; Fig. 4 (4,2,4) on 32. */
static void test_fig3_fig4_structure(void **state)
{
	(void)state;
	int nv, nic;
	check_structure(4, 4, 4, &nv, &nic);
	/* DP rings of 4 over 2 machines: 2 of 4 hops cross */
	assert_int_equal(nv, 32);
	assert_int_equal(nic, 32);
	check_structure(2, 8, 4, &nv, &nic);
	/* "more inter-machine DP traffic": every DP hop crosses machines */
	assert_int_equal(nv, 0);
	assert_int_equal(nic, 64);
	check_structure(4, 2, 4, &nv, &nic);
	/* Fig. 4: TP and DP inside each machine, PP across */
	assert_int_equal(nv, 32);
	assert_int_equal(nic, 0);
}

/* A rank -> GPU permutation moves every cell with it. */
static void test_permutation(void **state)
{
	(void)state;
	pp_traffic *a, *b;
	pp_scenario *sc = gpt39b(4, 2, 4, 1, &a);
	long long perm[32];
	for (int i = 0; i < 32; i++)
		perm[i] = (i * 5 + 3) % 32;
	pp_placement *pl = (pp_placement *)pp_scenario_placement(sc);
	pl->rank_gpu = perm;
	pp_error err;
	assert_int_equal(pp_traffic_build(sc, &b, &err), PP_OK);
	assert_int_equal(a->n, b->n);
	for (size_t k = 0; k < a->n; k++) {
		const pp_traffic_cell *c = &a->cell[k];
		assert_rel(pp_traffic_bytes(b, c->type, perm[c->src], perm[c->dst]), c->bytes, 0);
	}
	pl->rank_gpu = NULL;
	pp_traffic_free(a);
	pp_traffic_free(b);
	pp_scenario_free(sc);
}

/* The matrix of an estimate (pp_traffic_of_estimate) is the scenario's, and
 * with the workers mapped (pp_traffic_of_estimate_mapped, worker w = rank w
 * under Megatron's tp-dp-pp order) every cell moves with the mapping; cp
 * beyond 1 has ranks outside the workers and is refused. */
static void test_of_estimate_mapped(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	assert_int_equal(pp_model_preset("gpt-39.1b", &m, NULL), PP_OK);
	assert_int_equal(pp_system_preset("configtuner-hopper", &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = 16;
	j.seq_len = 2048;
	pp_plan_init(&p);
	p.tp = 2;
	p.pp = 4;
	p.recompute = PP_RECOMPUTE_FULL;
	pp_estimate *e = malloc(sizeof *e);
	pp_error err;
	if (pp_estimate_run(&m, &s, &j, &p, 16, e, &err))
		fail_msg("%s", err.text);
	pp_traffic *a, *b, *c;
	assert_int_equal(pp_traffic_of_estimate(e, &a, &err), PP_OK);
	long long id[16], perm[16];
	for (int i = 0; i < 16; i++) {
		id[i] = i;
		perm[i] = (i * 5 + 3) % 16;
	}
	assert_int_equal(pp_traffic_of_estimate_mapped(e, id, &b, &err), PP_OK);
	assert_int_equal(pp_traffic_of_estimate_mapped(e, perm, &c, &err), PP_OK);
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->n, c->n);
	for (size_t k = 0; k < a->n; k++) {
		const pp_traffic_cell *x = &a->cell[k];
		assert_rel(pp_traffic_bytes(b, x->type, x->src, x->dst), x->bytes, 0);
		assert_rel(pp_traffic_bytes(c, x->type, perm[x->src], perm[x->dst]), x->bytes, 0);
	}
	pp_traffic_free(a);
	pp_traffic_free(b);
	pp_traffic_free(c);
	e->plan.cp = 2;
	assert_int_equal(pp_traffic_of_estimate_mapped(e, id, &b, &err), PP_EINPUT);
	assert_null(b);
	free(e);
}

/* The EP traffic matrix of `model` on 16 dgx-h100 GPUs at ep `ep`, pp `pp`,
 * a batch of `gbs` sequences of 4096, under dispatcher `d`: into
 * m[i * 16 + k], the bytes GPU i sends GPU k. */
static void ep_matrix(const char *model, int ep, int pp, long long gbs, pp_moe_dispatcher d,
                      double *m)
{
	pp_model mo;
	pp_system s;
	pp_job j;
	pp_plan pl;
	assert_int_equal(pp_model_preset(model, &mo, NULL), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = gbs;
	j.seq_len = 4096;
	j.moe_dispatcher = d;
	pp_plan_init(&pl);
	pl.ep = ep;
	pl.pp = pp;
	pp_error err;
	pp_scenario *sc;
	if (pp_scenario_new(&mo, &s, &j, &pl, 16, &sc, &err))
		fail_msg("%s: %s", err.field, err.text);
	pp_traffic *tr;
	assert_int_equal(pp_traffic_build(sc, &tr, &err), PP_OK);
	for (int i = 0; i < 16; i++)
		for (int k = 0; k < 16; k++)
			m[i * 16 + k] = pp_traffic_bytes(tr, PP_TRAFFIC_EP, i, k);
	pp_traffic_free(tr);
	pp_scenario_free(sc);
}

/* MoE all-to-all: every pair of an EP group, equal bytes both ways. */
static void test_alltoall_pairs(void **state)
{
	(void)state;
	double m[256];
	ep_matrix("mixtral-8x7b", 8, 2, 64, PP_DISPATCH_ALLTOALL, m);
	double x = m[1];
	assert_true(x > 0);
	for (int i = 0; i < 16; i++)
		for (int k = 0; k < 16; k++) {
			double want = i != k && i / 8 == k / 8 ? x : 0;
			assert_rel(m[i * 16 + k], want, 1e-12);
		}
}

/* DeepEP (--moe-dispatcher deepep): GPU 0 sends over the network only to
 * the other node's GPU 8 (its own in-node index), and over NVLink to GPUs
 * 1..7 evenly; the network bytes are the all-to-all's times the copies'
 * ratio, nic / (k (n - nd) / n) (pp_moe_dispatch_copies: 4 of 8 groups
 * over 2 nodes, D = 2 (1 - 1/70)). */
static void test_dedup_pairs(void **state)
{
	(void)state;
	double a[256], d[256]; /* GPU 0's row: the first 16 */
	ep_matrix("deepseek-v3", 16, 1, 16, PP_DISPATCH_ALLTOALL, a);
	ep_matrix("deepseek-v3", 16, 1, 16, PP_DISPATCH_DEEPEP, d);
	double nic, nvl, net_a = 0;
	pp_moe_dispatch_copies(256, 8, 8, 4, 16, 8, &nic, &nvl);
	assert_rel(nic, (1 - 1.0 / 70), 1e-12);
	for (int k = 8; k < 16; k++)
		net_a += a[k];
	assert_rel(d[8], net_a * nic / (8 * 8.0 / 16), 1e-9);
	assert_true(d[0] == 0);
	for (int k = 1; k < 8; k++)
		assert_rel(d[k], d[1], 1e-12);
	for (int k = 9; k < 16; k++)
		assert_true(d[k] == 0);
	/* the NVLink forwards: nvl per nic copy, spread over 7 peers */
	assert_rel(7 * d[1] / d[8], nvl / nic, 1e-9);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The timeline's on periods are the union of the simulator's communication
 * intervals (computed here by brute force over elementary segments), and on
 * + off = the iteration. */
static void test_timeline_equals_sim(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	assert_int_equal(pp_model_preset("gpt-39.1b", &m, NULL), PP_OK);
	assert_int_equal(pp_system_preset("configtuner-hopper", &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = 64;
	j.seq_len = 2048;
	pp_plan_init(&p);
	p.tp = 4;
	p.pp = 4;
	p.recompute = PP_RECOMPUTE_FULL;
	pp_estimate *e = malloc(sizeof *e);
	pp_error err;
	if (pp_estimate_run(&m, &s, &j, &p, 64, e, &err))
		fail_msg("%s", err.text);
	pp_sim *sim;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	assert_int_equal(pp_estimate_simulate(e, sim, &err), PP_OK);
	pp_traffic_timeline *tl;
	assert_int_equal(pp_traffic_timeline_build(sim, e->sim.iteration_s, 4, &tl, &err), PP_OK);
	size_t n = pp_sim_event_count(sim);
	for (int r = 0; r < 4; r++) {
		static double pts[8192];
		size_t np = 0;
		double bytes = 0;
		for (size_t i = 0; i < n; i++) {
			const pp_sim_event *ev = pp_sim_event_at(sim, i);
			if (ev->rank != r || ev->stream == PP_STREAM_COMPUTE)
				continue;
			assert_true(np + 2 <= 8192);
			pts[np++] = ev->start_s;
			pts[np++] = ev->end_s;
			bytes += ev->bytes;
		}
		assert_true(np > 0);
		qsort(pts, np, sizeof pts[0], cmp_double);
		/* elementary segments covered by some event, merged into periods */
		double on = 0, start = -1, end = -1;
		size_t periods = 0;
		for (size_t k = 0; k + 1 < np; k++) {
			double a = pts[k], z = pts[k + 1];
			if (z <= a)
				continue;
			bool cov = false;
			for (size_t i = 0; i < n && !cov; i++) {
				const pp_sim_event *ev = pp_sim_event_at(sim, i);
				cov = ev->rank == r && ev->stream != PP_STREAM_COMPUTE &&
				      ev->start_s <= a && ev->end_s >= z;
			}
			if (!cov)
				continue;
			on += z - a;
			if (a > end) { /* a new period */
				if (periods > 0) {
					assert_true(periods <= tl->non[r]);
					assert_rel(tl->on[r][periods - 1].start_s, start, 0);
					assert_rel(tl->on[r][periods - 1].end_s, end, 0);
				}
				periods++;
				start = a;
			}
			end = z;
		}
		assert_int_equal(periods, tl->non[r]);
		assert_rel(tl->on[r][periods - 1].start_s, start, 0);
		assert_rel(tl->on[r][periods - 1].end_s, end, 0);
		assert_rel(tl->on_s[r], on, 1e-12);
		assert_rel(tl->on_s[r] + tl->off_s[r], e->sim.iteration_s, 1e-12);
		assert_rel(tl->bytes[r], bytes, 1e-12);
		/* 1F1B on 4 ranks: sends and the DP reduction, on and off repeating */
		assert_true(tl->non[r] >= 16);
		assert_true(tl->off_s[r] > tl->on_s[r]);
	}
	pp_traffic_timeline_free(tl);
	pp_sim_free(sim);
	free(e);
}

/* A node holding two pipeline ranks: its on periods are the union of
 * theirs, its bytes the sum over its GPUs. */
static void test_timeline_node(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	assert_int_equal(pp_model_preset("gpt-39.1b", &m, NULL), PP_OK);
	assert_int_equal(pp_system_preset("configtuner-hopper", &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = 16;
	j.seq_len = 2048;
	pp_plan_init(&p);
	p.tp = 2;
	p.pp = 4;
	p.recompute = PP_RECOMPUTE_FULL;
	pp_estimate *e = malloc(sizeof *e);
	pp_error err;
	if (pp_estimate_run(&m, &s, &j, &p, 16, e, &err))
		fail_msg("%s", err.text);
	pp_sim *sim;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	assert_int_equal(pp_estimate_simulate(e, sim, &err), PP_OK);
	pp_traffic_timeline *tl;
	assert_int_equal(pp_traffic_timeline_build(sim, e->sim.iteration_s, 4, &tl, &err), PP_OK);
	pp_placement pl;
	pp_place_build(&e->plan, &e->system, &pl);
	for (int nd = 0; nd < 2; nd++) {
		pp_node_timeline nt;
		assert_int_equal(pp_traffic_timeline_node(tl, &pl, nd, &nt, &err), PP_OK);
		int r0 = 2 * nd, r1 = 2 * nd + 1; /* dp 2 x tp 2 = 4 GPUs per rank */
		assert_int_equal(nt.gpus, 8);
		assert_int_equal(nt.mask, (1u << r0) | (1u << r1));
		assert_rel(nt.bytes, 4 * (tl->bytes[r0] + tl->bytes[r1]), 1e-12);
		/* every instant of a rank's on period is inside a node on period */
		for (int r = r0; r <= r1; r++)
			for (size_t i = 0; i < tl->non[r]; i++) {
				bool in = false;
				for (size_t k = 0; k < nt.non && !in; k++)
					in = nt.on[k].start_s <= tl->on[r][i].start_s &&
					     tl->on[r][i].end_s <= nt.on[k].end_s;
				assert_true(in);
			}
		assert_true(nt.on_s <= tl->on_s[r0] + tl->on_s[r1] + 1e-12);
		assert_true(nt.on_s >= tl->on_s[r0] - 1e-12);
		assert_rel(nt.on_s + nt.off_s, e->sim.iteration_s, 1e-12);
		free(nt.on);
	}
	pp_traffic_timeline_free(tl);
	pp_sim_free(sim);
	free(e);
}

/* An estimate's traffic views: the matrix as pp_traffic_of_estimate builds
 * it, the timeline of the simulated iteration over its pipeline ranks and the
 * plan's placement; nothing asked, nothing built. */
static void test_views(void **state)
{
	(void)state;
	pp_estimate *e = pp_test_gpt39(2, 4, 16, false);
	pp_error err;
	pp_sim *sim;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	assert_int_equal(pp_estimate_simulate(e, sim, &err), PP_OK);
	pp_traffic_views v;
	assert_int_equal(pp_traffic_views_build(e, false, NULL, &v, &err), PP_OK);
	assert_null(v.matrix);
	assert_null(v.timeline);
	pp_traffic *t;
	assert_int_equal(pp_traffic_of_estimate(e, &t, &err), PP_OK);
	assert_int_equal(pp_traffic_views_build(e, true, sim, &v, &err), PP_OK);
	assert_int_equal(v.matrix->n, t->n);
	for (int k = 0; k < PP_TRAFFIC_NTYPES; k++)
		for (int r = 0; r < PP_NTIERS; r++)
			assert_rel(v.matrix->total_bytes[k][r], t->total_bytes[k][r], 1e-12);
	assert_int_equal(v.timeline->ranks, 4);
	assert_rel(v.timeline->iteration_s, e->sim.iteration_s, 1e-12);
	pp_placement pl;
	pp_place_build(&e->plan, &e->system, &pl);
	assert_int_equal(v.place.ranks, pl.ranks);
	assert_int_equal(v.place.gpus_per_node, pl.gpus_per_node);
	pp_traffic_views_free(&v);
	assert_null(v.matrix);
	pp_traffic_views_free(&v); /* twice: empty */
	pp_traffic_free(t);
	pp_sim_free(sim);
	free(e);
}

/*
 * The TP, CP and EP collectives inside the tasks (pp_traffic_timeline_of_estimate),
 * Mixtral 8x7B with tp 2 (SP), cp 2, ep 4, pp 4 on 64 GPUs, 1F1B and
 * interleaved with vp 2:
 *   - each type's bytes, one GPU of every rank times the rank's GPUs, equal
 *     the traffic matrix's total of that type (1e-9: the same profile
 *     entries, summed in another order);
 *   - every in-task period lies inside a compute task of its rank;
 *   - the pipeline and DP intervals are pp_traffic_timeline_build's;
 *   - a type's on seconds are at most the rank's, on + off is the iteration.
 */
static void check_in_task(int vp)
{
	pp_model m;
	pp_system s;
	pp_job j;
	pp_plan p;
	assert_int_equal(pp_model_preset("mixtral-8x7b", &m, NULL), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, NULL), PP_OK);
	pp_job_init(&j);
	j.global_batch = 64;
	j.seq_len = 8192;
	pp_plan_init(&p);
	p.tp = 2;
	p.sp = true;
	p.cp = 2;
	p.ep = 4;
	p.pp = 4;
	p.vp = vp;
	if (vp > 1)
		p.schedule = PP_SCHED_INTERLEAVED;
	pp_estimate *e = malloc(sizeof *e);
	pp_error err;
	if (pp_estimate_run(&m, &s, &j, &p, 64, e, &err))
		fail_msg("%s", err.text);
	pp_sim *sim;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	assert_int_equal(pp_estimate_simulate(e, sim, &err), PP_OK);
	pp_traffic_timeline *tl, *pipe;
	assert_int_equal(pp_traffic_timeline_of_estimate(e, sim, &tl, &err), PP_OK);
	assert_int_equal(pp_traffic_timeline_build(sim, e->sim.iteration_s, 4, &pipe, &err), PP_OK);
	assert_true(tl->in_task);
	assert_false(pipe->in_task);
	pp_traffic *t;
	assert_int_equal(pp_traffic_of_estimate(e, &t, &err), PP_OK);
	const pp_traffic_type in_task[] = {PP_TRAFFIC_TP, PP_TRAFFIC_CP, PP_TRAFFIC_EP};
	for (size_t k = 0; k < 3; k++) {
		pp_traffic_type ty = in_task[k];
		double sum = 0;
		for (int r = 0; r < 4; r++)
			sum += tl->type_bytes[r][ty] * 16; /* tp 2 x cp 2 x dp 4 GPUs per rank */
		double want = t->total_bytes[ty][0] + t->total_bytes[ty][1];
		assert_true(want > 0);
		assert_rel(sum, want, 1e-9);
	}
	size_t n = pp_sim_event_count(sim);
	for (int r = 0; r < 4; r++) {
		size_t in = 0;
		for (size_t i = 0; i < tl->nevents[r]; i++) {
			const pp_traffic_interval *x = &tl->events[r][i];
			if (x->type != PP_TRAFFIC_TP && x->type != PP_TRAFFIC_CP &&
			    x->type != PP_TRAFFIC_EP)
				continue;
			in++;
			assert_non_null(x->algo);
			assert_true(x->end_s >= x->start_s);
			bool inside = false;
			for (size_t k = 0; k < n && !inside; k++) {
				const pp_sim_event *ev = pp_sim_event_at(sim, k);
				inside = ev->rank == r && ev->stream == PP_STREAM_COMPUTE &&
				         ev->start_s <= x->start_s + 1e-12 &&
				         x->end_s <= ev->end_s + 1e-12;
			}
			if (!inside)
				fail_msg("rank %d: %s [%g, %g] outside every compute task", r,
				         x->name, x->start_s, x->end_s);
		}
		assert_int_equal(in + pipe->nevents[r], tl->nevents[r]);
		for (int ty = PP_TRAFFIC_PP_FWD; ty <= PP_TRAFFIC_DP; ty++) {
			assert_rel(tl->type_bytes[r][ty], pipe->type_bytes[r][ty], 1e-12);
			assert_rel(tl->type_on_s[r][ty], pipe->type_on_s[r][ty], 1e-12);
		}
		for (int ty = 0; ty < PP_TRAFFIC_NTYPES; ty++)
			assert_true(tl->type_on_s[r][ty] <= tl->on_s[r] * (1 + 1e-12));
		assert_true(tl->on_s[r] > pipe->on_s[r]);
		assert_rel(tl->on_s[r] + tl->off_s[r], e->sim.iteration_s, 1e-12);
	}
	pp_traffic_free(t);
	pp_traffic_timeline_free(tl);
	pp_traffic_timeline_free(pipe);
	pp_sim_free(sim);
	free(e);
}

static void test_timeline_in_task(void **state)
{
	(void)state;
	check_in_task(1);
	check_in_task(2); /* interleaved: each chunk's task holds its share of the layers */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_eq2_4_volumes),      cmocka_unit_test(test_fig3_fig4_structure),
	    cmocka_unit_test(test_of_estimate_mapped), cmocka_unit_test(test_permutation),
	    cmocka_unit_test(test_alltoall_pairs),     cmocka_unit_test(test_timeline_equals_sim),
	    cmocka_unit_test(test_timeline_node),      cmocka_unit_test(test_views),
	    cmocka_unit_test(test_timeline_in_task),   cmocka_unit_test(test_dedup_pairs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
