/*
 * Calibration from nccl-tests output (include/paraplan/nccl.h): the reader on
 * published logs (tests/data/nccl/README.md), nccl-tests' bus-bandwidth
 * conventions against the logged columns, the fit reproducing the logs (the
 * large-message busbw within 5%, the small-message latency within 20%),
 * parameters recovered from synthetic logs of every collective, the written
 * system read back, and bad input.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "paraplan/nccl.h"
#include "paraplan/paraplan.h"
#include "pp_test.h"

static void data_path(const char *file, char *buf, size_t n)
{
	const char *root = getenv("PARAPLAN_SOURCE_DIR");
	snprintf(buf, n, "%s/tests/data/nccl/%s", root ? root : ".", file);
}

static void load(const char *file, pp_nccl_log *log)
{
	char path[1024], msg[1024];
	pp_error err;
	pp_error_clear(&err);
	data_path(file, path, sizeof path);
	if (pp_nccl_load(path, log, &err) != PP_OK)
		fail_msg("%s", pp_error_format(&err, msg, sizeof msg));
}

static pp_system preset(const char *name)
{
	pp_system s;
	pp_error err;
	if (pp_system_preset(name, &s, &err) != PP_OK)
		fail_msg("no preset %s", name);
	return s;
}

static void fit(const pp_system *start, const pp_nccl_log *logs, size_t n, pp_nccl_fit *out)
{
	char msg[1024];
	pp_error err;
	if (pp_nccl_fit_logs(start, logs, n, out, &err) != PP_OK)
		fail_msg("%s", pp_error_format(&err, msg, sizeof msg));
}

/* ------------------------------------------------------------ reading */

static void test_read_h100_text(void **state)
{
	(void)state;
	pp_nccl_log log;
	load("h100x4_all_reduce.txt", &log);
	assert_int_equal(log.op, PP_NCCL_ALL_REDUCE);
	assert_int_equal(log.ranks, 4);
	assert_int_equal(log.nodes, 1);
	assert_int_equal(log.per_node, 4);
	assert_false(log.json);
	assert_string_equal(log.device, "NVIDIA H100 80GB HBM3");
	assert_int_equal(log.nrows, 28);
	assert_rel(log.rows[0].bytes, 8, 0);
	assert_rel(log.rows[0].time_s, 26.08e-6, 1e-12);
	assert_rel(log.rows[27].bytes, 1073741824, 0);
	assert_rel(log.rows[27].time_s, 4525.6e-6, 1e-12);
	assert_rel(log.rows[27].busbw, 355.89e9, 1e-12);
	pp_nccl_log_free(&log);
}

/* mpirun --tag-output prefixes, NCCL INFO noise, zero-size rows skipped, the
 * collective from the file name, ranks on two hosts. */
static void test_read_efa_tagged(void **state)
{
	(void)state;
	pp_nccl_log log;
	load("t4x2_efa_all_reduce.txt", &log);
	assert_int_equal(log.op, PP_NCCL_ALL_REDUCE);
	assert_int_equal(log.ranks, 2);
	assert_int_equal(log.nodes, 2);
	assert_int_equal(log.per_node, 1);
	assert_string_equal(log.device, "Tesla T4");
	assert_int_equal(log.nrows, 29); /* 4 B .. 1 GiB */
	assert_rel(log.rows[0].bytes, 4, 0);
	assert_rel(log.rows[0].time_s, 65.70e-6, 1e-12);
	assert_rel(log.rows[28].time_s, 344981e-6, 1e-12);
	pp_nccl_log_free(&log);
}

static void test_json_same_as_text(void **state)
{
	(void)state;
	pp_nccl_log t, j;
	load("h100x4_all_reduce.txt", &t);
	load("h100x4_all_reduce.json", &j);
	assert_true(j.json);
	assert_int_equal(j.op, PP_NCCL_ALL_REDUCE); /* from args[0] */
	assert_int_equal(j.ranks, 4);
	assert_int_equal(j.nodes, 1);
	assert_string_equal(j.device, "NVIDIA H100 80GB HBM3");
	assert_int_equal(j.nrows, t.nrows);
	for (size_t i = 0; i < t.nrows; i++) {
		assert_rel(j.rows[i].bytes, t.rows[i].bytes, 0);
		assert_rel(j.rows[i].time_s, t.rows[i].time_s, 1e-12);
		assert_rel(j.rows[i].busbw, t.rows[i].busbw, 1e-12);
	}
	pp_nccl_log_free(&t);
	pp_nccl_log_free(&j);
}

/* nccl-tests' doc/PERFORMANCE.md factors, and the logged busbw column equals
 * size / time x factor on every row of the real logs (to the columns'
 * rounding: two decimals in GB/s, four digits of time). */
static void test_busbw_conventions(void **state)
{
	(void)state;
	assert_rel(pp_nccl_busbw_factor(PP_NCCL_ALL_REDUCE, 8), 14.0 / 8, 1e-15);
	assert_rel(pp_nccl_busbw_factor(PP_NCCL_ALL_GATHER, 8), 7.0 / 8, 1e-15);
	assert_rel(pp_nccl_busbw_factor(PP_NCCL_REDUCE_SCATTER, 8), 7.0 / 8, 1e-15);
	assert_rel(pp_nccl_busbw_factor(PP_NCCL_ALLTOALL, 8), 7.0 / 8, 1e-15);
	assert_rel(pp_nccl_busbw_factor(PP_NCCL_SENDRECV, 8), 1, 1e-15);
	assert_rel(pp_nccl_busbw_factor(PP_NCCL_BROADCAST, 8), 1, 1e-15);
	static const char *const files[] = {"h100x4_all_reduce.txt", "t4x2_efa_all_reduce.txt",
	                                    "h100x16_a3mega_all_reduce.txt",
	                                    "gb300x8_a4xmax_all_gather.txt"};
	for (size_t f = 0; f < 4; f++) {
		pp_nccl_log log;
		load(files[f], &log);
		double k = pp_nccl_busbw_factor(log.op, log.ranks);
		for (size_t i = 0; i < log.nrows; i++) {
			const pp_nccl_row *r = &log.rows[i];
			if (r->busbw < 1e9)
				continue; /* two decimals of GB/s say little below 1 GB/s */
			assert_rel(r->bytes / r->time_s * k, r->busbw, 0.01);
			assert_rel(r->bytes / r->time_s, r->algbw, 0.01);
		}
		pp_nccl_log_free(&log);
	}
}

/* ------------------------------------------------------------ fitting */

static void assert_reproduces(const pp_system *s, const pp_nccl_log *log)
{
	pp_nccl_check c;
	pp_nccl_check_log(s, log, &c);
	assert_rel(c.busbw_model, c.busbw_log, 0.05);
	assert_rel(c.small_model_s, c.small_log_s, 0.20);
}

/* Must show: a single-node H100 log fits the NVLink tier. */
static void test_fit_h100_nvlink(void **state)
{
	(void)state;
	pp_nccl_log log;
	load("h100x4_all_reduce.txt", &log);
	pp_system s = preset("dgx-h100");
	assert_true(pp_nccl_intra(&s, &log));
	pp_nccl_fit f;
	fit(&s, &log, 1, &f);
	assert_int_equal(f.intra_logs, 1);
	assert_int_equal(f.inter_logs, 0);
	assert_false(f.intra_at_bound);
	assert_reproduces(&f.system, &log);
	/* Only the NVLink tier moved. */
	assert_rel(f.system.nic_latency_s, s.nic_latency_s, 0);
	assert_rel(f.system.nic_eff, s.nic_eff, 0);
	assert_true(f.system.nvlink_latency_s > 1e-6 && f.system.nvlink_latency_s < 3e-5);
	/* The same fit on a system without NVLS: paraplan's ring, still reproduced. */
	s.nvls = false;
	fit(&s, &log, 1, &f);
	assert_false(f.intra_at_bound);
	assert_reproduces(&f.system, &log);
	pp_nccl_log_free(&log);
}

/* Must show: a two-node EFA log fits the NIC tier. */
static void test_fit_efa_nic(void **state)
{
	(void)state;
	pp_nccl_log log;
	load("t4x2_efa_all_reduce.txt", &log);
	pp_system s = preset("dgx-a100-80g");
	assert_false(pp_nccl_intra(&s, &log));
	pp_nccl_fit f;
	fit(&s, &log, 1, &f);
	assert_int_equal(f.intra_logs, 0);
	assert_int_equal(f.inter_logs, 1);
	assert_false(f.inter_at_bound);
	assert_reproduces(&f.system, &log);
	assert_rel(f.system.nvlink_eff, s.nvlink_eff, 0);
	pp_nccl_log_free(&log);
}

/* A third real log and collective: all-gather across two A4X Max hosts in
 * distinct NVLink domains (the system file says so), paraplan's two-tier ring. */
static void test_fit_gb300_all_gather(void **state)
{
	(void)state;
	pp_nccl_log log;
	load("gb300x8_a4xmax_all_gather.txt", &log);
	assert_int_equal(log.op, PP_NCCL_ALL_GATHER);
	assert_int_equal(log.ranks, 8);
	assert_int_equal(log.nodes, 2);
	assert_string_equal(log.device, "NVIDIA GB300");
	char path[1024], msg[1024];
	data_path("a4x-max-crossdomain.json", path, sizeof path);
	pp_system s;
	pp_error err;
	if (pp_system_load(path, &s, &err) != PP_OK)
		fail_msg("%s", pp_error_format(&err, msg, sizeof msg));
	assert_false(pp_nccl_intra(&s, &log));
	pp_nccl_fit f;
	fit(&s, &log, 1, &f);
	assert_int_equal(f.inter_logs, 1);
	assert_false(f.inter_at_bound);
	assert_reproduces(&f.system, &log);
	/* On the NVL72 preset the same two hosts would share one NVLink domain. */
	pp_system nvl72 = preset("gb200-nvl72");
	assert_true(pp_nccl_intra(&nvl72, &log));
	pp_nccl_log_free(&log);
}

/* Both tiers at once; a log the model cannot reach is reported at its bound.
 * The two-node A3 Mega log was out of reach of the Simple-only model (NIC
 * latency at its 1e-8 s floor, rms 36.5%); with NCCL's protocols (LL and
 * LL128 below ~1 MB, src/cost/coll_proto.c) it is reached, rms 22.2%.  On
 * NICs a tenth as fast the measured bus bandwidth needs an efficiency above
 * 1: at its bound. */
static void test_fit_two_tiers_and_bound(void **state)
{
	(void)state;
	pp_nccl_log logs[2];
	load("h100x4_all_reduce.txt", &logs[0]);
	load("h100x16_a3mega_all_reduce.txt", &logs[1]);
	assert_int_equal(logs[1].ranks, 16);
	assert_int_equal(logs[1].nodes, 2);
	pp_system s = preset("dgx-h100");
	pp_nccl_fit f;
	fit(&s, logs, 2, &f);
	assert_int_equal(f.intra_logs, 1);
	assert_int_equal(f.inter_logs, 1);
	assert_reproduces(&f.system, &logs[0]);
	assert_false(f.inter_at_bound);
	assert_true(f.inter_rms < 0.25);
	s.nic_bytes_per_s /= 10;
	fit(&s, logs, 2, &f);
	assert_true(f.inter_at_bound);
	pp_nccl_log_free(&logs[0]);
	pp_nccl_log_free(&logs[1]);
}

/* A synthetic log: paraplan's own times for `op` on `ranks` GPUs over
 * `nodes` hosts, printed as nccl-tests prints them. */
static void synth(const pp_system *truth, pp_nccl_op op, int ranks, int nodes, pp_nccl_log *out)
{
	pp_nccl_log shape = {0};
	shape.op = op;
	shape.ranks = ranks;
	shape.nodes = nodes;
	shape.per_node = ranks / nodes;
	size_t cap = 1 << 16, n = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	n += (size_t)snprintf(text + n, cap - n, "# Collective test starting: %s_perf\n",
	                      pp_nccl_op_name(op));
	for (int r = 0; r < ranks; r++)
		n += (size_t)snprintf(text + n, cap - n,
		                      "#  Rank %2d Group  0 Pid 1 on node%d device %2d "
		                      "[0000:00:00] NVIDIA H100 80GB HBM3\n",
		                      r, r / shape.per_node, r % shape.per_node);
	n += (size_t)snprintf(text + n, cap - n,
	                      "#       size         count      type   redop    root     time   "
	                      "algbw   busbw #wrong     time   algbw   busbw #wrong\n");
	double k = pp_nccl_busbw_factor(op, ranks);
	for (double b = 64; b <= 4294967296.0; b *= 2) {
		double t = pp_nccl_model_time(truth, &shape, b);
		double alg = b / t / 1e9;
		n += (size_t)snprintf(
		    text + n, cap - n,
		    "%12.0f  %12.0f  float  sum  -1  %.6g  %.2f  %.2f  0  %.6g  %.2f  "
		    "%.2f  0\n",
		    b, b / 4, t * 1e6, alg, alg * k, t * 1e6, alg, alg * k);
	}
	n += (size_t)snprintf(text + n, cap - n, "# Out of bounds values : 0 OK\n");
	char msg[1024];
	pp_error err;
	if (pp_nccl_parse(text, n, "synthetic", out, &err) != PP_OK)
		fail_msg("%s", pp_error_format(&err, msg, sizeof msg));
	free(text);
	assert_int_equal(out->op, op);
	assert_int_equal(out->ranks, ranks);
	assert_int_equal(out->nodes, nodes);
}

/* Every collective, one node then two: logs made by the model with known
 * latencies and efficiencies give them back. */
static void test_recover_synthetic(void **state)
{
	(void)state;
	static const pp_nccl_op ops[] = {PP_NCCL_ALL_REDUCE, PP_NCCL_ALL_GATHER,
	                                 PP_NCCL_REDUCE_SCATTER, PP_NCCL_ALLTOALL,
	                                 PP_NCCL_SENDRECV};
	pp_system start = preset("dgx-h100");
	start.nvls = false;
	pp_system truth = start;
	truth.nvlink_latency_s = 2e-6;
	truth.nvlink_eff = 0.8;
	truth.nic_latency_s = 8e-6;
	truth.nic_eff = 0.7;
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		pp_nccl_log logs[2];
		synth(&truth, ops[i], 8, 1, &logs[0]);
		synth(&truth, ops[i], 16, 2, &logs[1]);
		pp_nccl_fit f;
		fit(&start, logs, 2, &f);
		assert_int_equal(f.intra_logs, 1);
		assert_int_equal(f.inter_logs, 1);
		assert_rel(f.system.nvlink_latency_s, 2e-6, 0.01);
		assert_rel(f.system.nvlink_eff, 0.8, 0.01);
		assert_rel(f.system.nic_latency_s, 8e-6, 0.01);
		assert_rel(f.system.nic_eff, 0.7, 0.01);
		assert_true(f.intra_rms < 1e-3 && f.inter_rms < 1e-3);
		pp_nccl_log_free(&logs[0]);
		pp_nccl_log_free(&logs[1]);
	}
}

/* ------------------------------------------------------------ output */

static void test_system_json_reads_back(void **state)
{
	(void)state;
	pp_nccl_log logs[2];
	load("h100x4_all_reduce.txt", &logs[0]);
	load("t4x2_efa_all_reduce.txt", &logs[1]);
	pp_system s = preset("dgx-h100");
	pp_nccl_fit f;
	fit(&s, logs, 2, &f);
	char *json, msg[1024];
	pp_error err;
	if (pp_nccl_system_json("dgx-h100", &f, logs, 2, &json, &err) != PP_OK)
		fail_msg("%s", pp_error_format(&err, msg, sizeof msg));
	assert_non_null(strstr(json, "\"name\": \"dgx-h100-nccl\""));
	assert_null(strstr(json, "\"aliases\""));
	assert_non_null(strstr(json, "h100x4_all_reduce.txt (all_reduce_perf, 4 ranks on 1 host"));
	assert_non_null(
	    strstr(json, "t4x2_efa_all_reduce.txt (all_reduce_perf, 2 ranks on 2 hosts"));
	pp_system back;
	if (pp_system_from_json(json, strlen(json), "written", &back, &err) != PP_OK)
		fail_msg("%s", pp_error_format(&err, msg, sizeof msg));
	assert_string_equal(back.name, "dgx-h100-nccl");
	assert_rel(back.nvlink_latency_s, f.system.nvlink_latency_s, 1e-3);
	assert_rel(back.nvlink_eff, f.system.nvlink_eff, 1e-3);
	assert_rel(back.nic_latency_s, f.system.nic_latency_s, 1e-3);
	assert_rel(back.nic_eff, f.system.nic_eff, 1e-3);
	/* Everything else is the start system's. */
	assert_rel(back.nvlink_bytes_per_s, s.nvlink_bytes_per_s, 0);
	assert_rel(back.nic_bytes_per_s, s.nic_bytes_per_s, 0);
	assert_int_equal(back.gpus_per_node, s.gpus_per_node);
	assert_true(back.nvls == s.nvls);
	assert_rel(back.dp_overlap, s.dp_overlap, 0);
	/* The written system still reproduces the logs (four digits kept). */
	assert_reproduces(&back, &logs[0]);
	assert_reproduces(&back, &logs[1]);
	free(json);
	pp_nccl_log_free(&logs[0]);
	pp_nccl_log_free(&logs[1]);
}

/* calibrate --nccl-tests in one call (pp_nccl_calibrate): the same fit and
 * text as its steps; a missing log refused with nothing left to free. */
static void test_calibrate_one_call(void **state)
{
	(void)state;
	char p0[1024], p1[1024], msg[1024];
	data_path("h100x4_all_reduce.txt", p0, sizeof p0);
	data_path("t4x2_efa_all_reduce.txt", p1, sizeof p1);
	const char *paths[] = {p0, p1};
	pp_nccl_calibration c;
	pp_error err;
	if (pp_nccl_calibrate("dgx-h100", paths, 2, &c, &err) != PP_OK)
		fail_msg("%s", pp_error_format(&err, msg, sizeof msg));
	assert_int_equal(c.nlogs, 2);
	pp_nccl_log logs[2];
	load("h100x4_all_reduce.txt", &logs[0]);
	load("t4x2_efa_all_reduce.txt", &logs[1]);
	pp_system s = preset("dgx-h100");
	pp_nccl_fit f;
	fit(&s, logs, 2, &f);
	assert_rel(c.fit.system.nvlink_eff, f.system.nvlink_eff, 0);
	assert_rel(c.fit.system.nic_latency_s, f.system.nic_latency_s, 0);
	char *json;
	assert_int_equal(pp_nccl_system_json("dgx-h100", &f, logs, 2, &json, &err), PP_OK);
	assert_string_equal(c.json, json);
	free(json);
	pp_nccl_log_free(&logs[0]);
	pp_nccl_log_free(&logs[1]);
	pp_nccl_calibration_free(&c);
	assert_null(c.logs);
	const char *missing[] = {p0, "no-such-log.txt"};
	assert_int_equal(pp_nccl_calibrate("dgx-h100", missing, 2, &c, &err), PP_EINPUT);
	assert_null(c.logs);
	assert_null(c.json);
	assert_int_equal(pp_nccl_calibrate("no-such-system", paths, 2, &c, &err), PP_EINPUT);
}

/* ------------------------------------------------------------ bad input */

static pp_status parse(const char *text, const char *source, pp_error *err)
{
	pp_nccl_log log;
	pp_error_clear(err);
	pp_status st = pp_nccl_parse(text, strlen(text), source, &log, err);
	if (st == PP_OK)
		pp_nccl_log_free(&log);
	return st;
}

#define HEADER                                                                                     \
	"#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
/* The line nccl-tests writes after its table: a log without it is cut short. */
#define FOOTER "# Out of bounds values : 0 OK\n"

static void test_bad_input(void **state)
{
	(void)state;
	pp_error err;
	assert_int_equal(parse("hello\n", "all_reduce.txt", &err), PP_EINPUT);
	assert_non_null(strstr(err.text, "no nccl-tests table"));
	/* A number that is not one: line and column of the cell. */
	assert_int_equal(
	    parse("# Collective test starting: all_gather_perf\n# nThread 1 nGpus 8\n" HEADER
	          "   8   2   float   none   -1   oops   0.00   0.00   0\n",
	          "x.txt", &err),
	    PP_EINPUT);
	assert_int_equal(err.line, 4);
	assert_int_equal(err.column, 32); /* "oops" */
	/* No way to tell the collective. */
	assert_int_equal(parse("# nThread 1 nGpus 8\n" HEADER
	                       "   8   2   float   sum   -1   20.0   0.00   0.00   0\n" FOOTER,
	                       "log.txt", &err),
	                 PP_EINPUT);
	assert_non_null(strstr(err.text, "which collective"));
	/* The file name names it; nThread x nGpus give the ranks. */
	assert_int_equal(parse("# nThread 1 nGpus 8\n" HEADER
	                       "   8   2   float   sum   -1   20.0   0.00   0.00   0\n" FOOTER,
	                       "my_sendrecv.log", &err),
	                 PP_OK);
	/* Ranks not evenly on hosts. */
	assert_int_equal(parse("# Collective test starting: all_reduce_perf\n"
	                       "#  Rank  0 Group  0 Pid 1 on a device  0 [0000:00:00] X\n"
	                       "#  Rank  1 Group  0 Pid 1 on a device  1 [0000:00:00] X\n"
	                       "#  Rank  2 Group  0 Pid 1 on b device  0 [0000:00:00] X\n" HEADER
	                       "   8   2   float   sum   -1   20.0   0.00   0.00   0\n" FOOTER,
	                       "x.txt", &err),
	                 PP_EINPUT);
	assert_non_null(strstr(err.text, "3 ranks on 2 hosts"));
	/* Two tests in one file: refused at the second header, not half read. */
	assert_int_equal(
	    parse("# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 8\n" HEADER
	          "   8   2   float   sum   -1   20.0   0.00   0.00   0\n"
	          "# Out of bounds values : 0 OK\n"
	          "# Collective test starting: all_gather_perf\n" HEADER
	          "   8   2   float   none   -1   20.0   0.00   0.00   0\n",
	          "x.txt", &err),
	    PP_EINPUT);
	assert_int_equal(err.line, 7);
	assert_non_null(strstr(err.text, "a second nccl-tests table"));
	/* JSON without results. */
	assert_int_equal(parse("{\"config\": {}}", "x.json", &err), PP_EINPUT);
	assert_string_equal(err.field, "results");
	/* Bad JSON: line and column. */
	assert_int_equal(parse("{\n\"results\": [,]}", "x.json", &err), PP_EINPUT);
	assert_int_equal(err.line, 2);
	/* One rank cannot measure a link; more ranks on a host than the system has. */
	pp_nccl_log one;
	const char *single = "# nThread 1 nGpus 1\n" HEADER
	                     "   8   2   float   sum   -1   20.0   0.00   0.00   0\n" FOOTER;
	assert_int_equal(pp_nccl_parse(single, strlen(single), "all_reduce.txt", &one, &err),
	                 PP_OK);
	pp_system s = preset("dgx-h100");
	pp_nccl_fit f;
	assert_int_equal(pp_nccl_fit_logs(&s, &one, 1, &f, &err), PP_EINPUT);
	one.ranks = one.per_node = 16;
	assert_int_equal(pp_nccl_fit_logs(&s, &one, 1, &f, &err), PP_EINPUT);
	assert_non_null(strstr(err.text, "16 ranks on one host"));
	pp_nccl_log_free(&one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_h100_text),
	    cmocka_unit_test(test_read_efa_tagged),
	    cmocka_unit_test(test_json_same_as_text),
	    cmocka_unit_test(test_busbw_conventions),
	    cmocka_unit_test(test_fit_h100_nvlink),
	    cmocka_unit_test(test_fit_efa_nic),
	    cmocka_unit_test(test_fit_gb300_all_gather),
	    cmocka_unit_test(test_fit_two_tiers_and_bound),
	    cmocka_unit_test(test_recover_synthetic),
	    cmocka_unit_test(test_system_json_reads_back),
	    cmocka_unit_test(test_calibrate_one_call),
	    cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
