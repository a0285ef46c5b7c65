/*
 * NCCL's protocols (src/cost/coll_proto.c) and PAT / NVLS for all-gather and
 * reduce-scatter, on the dgx-h100 preset:
 *   - NCCL's modelled latencies, recomputed from tuning.cc's constants;
 *   - by hand, an 8-GPU all-gather inside a DGX H100 where LL wins (64 KiB),
 *     where LL128 wins (8 MiB) and where Simple wins (256 MiB), and a 16-node
 *     all-gather at one GPU per node where PAT wins (64 KiB), each candidate
 *     written out and the winner's seconds to 1e-12 relative;
 *   - the thresholds per size (the table of docs/collectives.md, printed),
 *     with the protocol never going back to a lower-latency one as the size
 *     grows.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

static pp_system h100(void)
{
	pp_system s;
	pp_error err;
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	return s;
}

/* tuning.cc's constants, retyped (us): ring baseLat LL/LL128/Simple 6.6, 14.0,
 * 8.4; ring hwLat NVLink 0.6, 1.9, 3.4; tree hwLat NET 5.0, 8.5, 14 (at one
 * GPU per node); PAT 8 + log2 nNodes x 14 / 3.5 + 2.8 nRanks; NVLS 25. */
static void test_nccl_latencies(void **state)
{
	(void)state;
	/* 8 ranks in one node, all-gather: 7 steps on NVLink */
	assert_rel(
	    pp_coll_nccl_lat_us(PP_NCCL_RING, PP_PROTO_SIMPLE, PP_COLL_ALLGATHER, 8, 8, true),
	    8.4 + 7 * 3.4, 1e-12);
	assert_rel(pp_coll_nccl_lat_us(PP_NCCL_RING, PP_PROTO_LL128, PP_COLL_ALLGATHER, 8, 8, true),
	           14.0 + 7 * 1.9, 1e-12);
	assert_rel(pp_coll_nccl_lat_us(PP_NCCL_RING, PP_PROTO_LL, PP_COLL_ALLGATHER, 8, 8, true),
	           6.6 + 7 * 0.6, 1e-12);
	/* all-reduce: 2 (n-1) steps */
	assert_rel(
	    pp_coll_nccl_lat_us(PP_NCCL_RING, PP_PROTO_SIMPLE, PP_COLL_ALLREDUCE, 8, 8, true),
	    8.4 + 14 * 3.4, 1e-12);
	/* 16 nodes of 8: 127 - 15 intra steps at max(3.4, 3 x 1 us net overhead),
	 * 15 inter steps at the ring's NET Simple 14 */
	assert_rel(
	    pp_coll_nccl_lat_us(PP_NCCL_RING, PP_PROTO_SIMPLE, PP_COLL_ALLGATHER, 128, 8, true),
	    8.4 + 112 * 3.4 + 15 * 14.0, 1e-12);
	/* LL across nodes: intra max(0.6, 1.0 overhead), inter 2.7 */
	assert_rel(pp_coll_nccl_lat_us(PP_NCCL_RING, PP_PROTO_LL, PP_COLL_ALLGATHER, 128, 8, true),
	           6.6 + 112 * 1.0 + 15 * 2.7, 1e-12);
	/* one GPU per node: the tree's network latency */
	assert_rel(pp_coll_nccl_lat_us(PP_NCCL_RING, PP_PROTO_LL, PP_COLL_ALLGATHER, 16, 1, true),
	           6.6 + 15 * 5.0, 1e-12);
	assert_rel(
	    pp_coll_nccl_lat_us(PP_NCCL_PAT, PP_PROTO_SIMPLE, PP_COLL_ALLGATHER, 16, 1, true),
	    8 + 4 * 14 / 3.5 + 16 * 2.8, 1e-12);
	assert_rel(
	    pp_coll_nccl_lat_us(PP_NCCL_NVLS, PP_PROTO_SIMPLE, PP_COLL_ALLGATHER, 8, 8, true), 25,
	    1e-12);
	/* pairs NCCL does not run */
	assert_true(pp_coll_nccl_lat_us(PP_NCCL_PAT, PP_PROTO_LL, PP_COLL_ALLGATHER, 16, 1, true) ==
	            0);
	assert_true(
	    pp_coll_nccl_lat_us(PP_NCCL_NVLS, PP_PROTO_LL128, PP_COLL_ALLGATHER, 8, 8, true) == 0);
	/* LL128 needs NVLink */
	pp_system s = h100();
	assert_true(pp_coll_proto_enabled(PP_NCCL_RING, PP_PROTO_LL128, &s));
	assert_false(pp_coll_proto_enabled(PP_NCCL_PAT, PP_PROTO_LL128, &s));
	s.nvlink_bytes_per_s = 0;
	assert_false(pp_coll_proto_enabled(PP_NCCL_RING, PP_PROTO_LL128, &s));
	assert_string_equal(pp_coll_proto_name(PP_PROTO_LL128), "LL128");
}

typedef struct cand {
	const char *algo;
	pp_coll_proto proto;
	double s;
} cand;

static void check(const pp_system *s, int n, int nd, double V, const cand *c, int nc)
{
	int best = 0;
	for (int i = 1; i < nc; i++)
		if (c[i].s < c[best].s)
			best = i;
	for (int i = 0; i < nc; i++)
		if (i != best)
			assert_true(c[i].s > c[best].s * (1 + 1e-9));
	pp_layout l = {n, nd};
	const pp_coll_algo *a;
	pp_coll_proto p;
	double t = pp_coll_time_proto(s, &l, PP_COLL_ALLGATHER, V, &a, &p);
	assert_non_null(a);
	assert_string_equal(a->name, c[best].algo);
	assert_int_equal(p, c[best].proto);
	assert_rel(t, c[best].s, 1e-12);
	/* reduce-scatter moves the same bytes by the same formulas */
	double t_rs = pp_coll_time_proto(s, &l, PP_COLL_REDUCESCATTER, V, &a, &p);
	assert_rel(t_rs, t, 1e-12);
}

/*
 * 8 GPUs of one DGX H100, all-gather of V: alpha_f 3 us, beta_f = 450 GB/s x
 * nvlink_eff.  Ring Simple: 7 alpha_f + 7/8 V / beta_f.  LL128: latency x
 * (14 + 7 x 1.9) / (8.4 + 7 x 3.4), bandwidth x 0.92.  LL: latency x
 * (6.6 + 7 x 0.6) / 32.2, bandwidth x min(0.5, 141 GB/s / beta_f) (llMaxBw,
 * Hopper in one node).  NVLS: latency x 25 / 32.2, V / (beta_f x nvls_gain/2
 * x 7/8).
 */
static void test_h100_protocols_by_hand(void **state)
{
	(void)state;
	pp_system s = h100();
	double bf = s.nvlink_bytes_per_s * s.nvlink_eff, af = s.nvlink_latency_s;
	double lat = 7 * af, simple_us = 8.4 + 7 * 3.4;
	double ll_bw = 0.5 * bf < 141e9 ? 0.5 : 141e9 / bf;
	double nv_lat = lat * 25 / simple_us, nv_bw = bf * s.nvls_gain / 2 * 7 / 8;
	const double sizes[3] = {65536, 8 * 1048576.0, 256 * 1048576.0};
	const pp_coll_proto want[3] = {PP_PROTO_LL, PP_PROTO_LL128, PP_PROTO_SIMPLE};
	for (int i = 0; i < 3; i++) {
		double V = sizes[i], band = 7.0 / 8 * V / bf;
		cand c[] = {
		    {"ring", PP_PROTO_SIMPLE, lat + band},
		    {"ring", PP_PROTO_LL128, lat * (14 + 7 * 1.9) / simple_us + band / 0.92},
		    {"ring", PP_PROTO_LL, lat * (6.6 + 7 * 0.6) / simple_us + band / ll_bw},
		    {"nvls", PP_PROTO_SIMPLE, nv_lat + V / nv_bw},
		};
		int best = 0;
		for (int k = 1; k < 4; k++)
			if (c[k].s < c[best].s)
				best = k;
		assert_int_equal(c[best].proto, want[i]);
		check(&s, 8, 8, V, c, 4);
	}
}

/*
 * 16 DGX H100 nodes, one GPU of each (nd = 1), all-gather of 64 KiB:
 * alpha_s 5 us, beta_s = 50 GB/s x nic_eff (one NIC per GPU).  Ring Simple:
 * 15 alpha_s + 15/16 V / beta_s, NCCL's latency 8.4 + 15 x 14 (the tree's
 * NET latency at one GPU per node).  PAT: latency x (8 + 4 x 14/3.5 + 16 x
 * 2.8) / 218.4, V / (0.75 beta_s).  LL: x (6.6 + 15 x 5.0) / 218.4, bandwidth
 * x 0.5 (llMaxBw 20.4 GB/s on more than two Intel nodes is above it); LL128:
 * x (14 + 15 x 8.5) / 218.4, x 0.92.
 */
static void test_pat_by_hand(void **state)
{
	(void)state;
	pp_system s = h100();
	double bs = s.nic_bytes_per_s * s.nic_eff, as = s.nic_latency_s;
	double lat = 15 * as, simple_us = 8.4 + 15 * 14.0;
	double ll_bw = 0.5 * bs < 20.4e9 ? 0.5 : 20.4e9 / bs;
	double V = 65536, band = 15.0 / 16 * V / bs;
	cand c[] = {
	    {"ring", PP_PROTO_SIMPLE, lat + band},
	    {"ring", PP_PROTO_LL128, lat * (14 + 15 * 8.5) / simple_us + band / 0.92},
	    {"ring", PP_PROTO_LL, lat * (6.6 + 15 * 5.0) / simple_us + band / ll_bw},
	    {"pat", PP_PROTO_SIMPLE,
	     lat * (8 + 4 * 14 / 3.5 + 16 * 2.8) / simple_us + V / (0.75 * bs)},
	};
	check(&s, 16, 1, V, c, 4);
	/* at 1 GiB the ring's full bandwidth wins: PAT's is 0.75 x 16/15 lower */
	pp_layout l = {16, 1};
	const pp_coll_algo *a;
	pp_coll_proto p;
	pp_coll_time_proto(&s, &l, PP_COLL_ALLGATHER, 1073741824.0, &a, &p);
	assert_string_equal(a->name, "ring");
	assert_int_equal(p, PP_PROTO_SIMPLE);
	/* two GPUs of a node: no PAT */
	pp_layout l2 = {16, 2};
	pp_coll_time_proto(&s, &l2, PP_COLL_ALLGATHER, V, &a, &p);
	assert_string_equal(a->name, "ring");
}

/* The thresholds per size on dgx-h100 (docs/collectives.md): for each
 * collective and group, the (algorithm, protocol) chosen at powers of two
 * from 1 KiB to 1 GiB; along the sizes a ring's protocol only moves from LL
 * towards Simple. */
static void test_thresholds_table(void **state)
{
	(void)state;
	pp_system s = h100();
	static const struct {
		pp_coll_kind kind;
		const char *kname;
		int n, nd;
	} rows[] = {
	    {PP_COLL_ALLREDUCE, "all-reduce", 8, 8},
	    {PP_COLL_ALLGATHER, "all-gather", 8, 8},
	    {PP_COLL_ALLREDUCE, "all-reduce", 64, 8},
	    {PP_COLL_ALLGATHER, "all-gather", 64, 8},
	    {PP_COLL_ALLGATHER, "all-gather", 16, 1},
	    {PP_COLL_BROADCAST, "broadcast", 8, 8},
	    {PP_COLL_REDUCESCATTER, "reduce-scatter", 16, 1},
	};
	print_message(
	    "| collective | GPUs | per node | choice by size (bytes) |\n|---|---|---|---|\n");
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		char line[1024];
		size_t off = 0;
		const pp_coll_algo *prev_a = NULL;
		pp_coll_proto prev_p = PP_PROTO_LL;
		int ring_rank = 3; /* LL 2, LL128 1, Simple 0: only goes down */
		for (int k = 10; k <= 30; k++) {
			double V = ldexp(1, k);
			pp_layout l = {rows[r].n, rows[r].nd};
			const pp_coll_algo *a;
			pp_coll_proto p;
			double t = pp_coll_time_proto(&s, &l, rows[r].kind, V, &a, &p);
			assert_true(t > 0);
			if (strcmp(a->name, "ring") == 0) {
				int rank = p == PP_PROTO_LL ? 2 : p == PP_PROTO_LL128 ? 1 : 0;
				assert_true(rank <= ring_rank);
				ring_rank = rank;
			}
			if (a != prev_a || p != prev_p) {
				int w =
				    snprintf(line + off, sizeof line - off, "%s%s/%s from 2^%d",
				             off ? ", " : "", a->name, pp_coll_proto_name(p), k);
				assert_true(w > 0 && (size_t)w < sizeof line - off);
				off += (size_t)w;
				prev_a = a;
				prev_p = p;
			}
		}
		print_message("| %s | %d | %d | %s |\n", rows[r].kname, rows[r].n, rows[r].nd,
		              line);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nccl_latencies),
	    cmocka_unit_test(test_h100_protocols_by_hand),
	    cmocka_unit_test(test_pat_by_hand),
	    cmocka_unit_test(test_thresholds_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
