/*
 * Hardware studies (paraplan/study.h):
 *  - an axis from text: lists, A:B:STEP ranges of reals, linked fields, and
 *    every refusal (unknown field, empty list, out of range, not whole);
 *  - the study's size and its cap;
 *  - point i evaluated on its own equals point i of the whole run (any
 *    order, a fresh workspace): what lets a study be split across processes;
 *  - each point's system carries its axis values (capacity, headroom);
 *  - a doubled tensor peak speeds the compute up, by less than 2x (the
 *    kernel rule: fractions of the peak kept, fixed times kept);
 *  - with search, "memory" binds exactly when the search without the HBM
 *    limit finds a faster plan;
 *  - through the shard layer's checkpoint (paraplan/shard.h): a study cut
 *    back to its first 3 records evaluates exactly the other 5 and gives
 *    the uninterrupted rows byte for byte; a finished one evaluates none.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

static void test_axis_parse(void **state)
{
	(void)state;
	pp_study_axis *ax = malloc(sizeof *ax);
	pp_error err;
	assert_non_null(ax);
	assert_int_equal(
	    pp_study_axis_parse("gpu.memory_bytes=80e9,1e11:1.2e11:1e10", "--vary", ax, &err),
	    PP_OK);
	assert_int_equal(ax->n, 4);
	assert_true(ax->values[0] == 80e9 && ax->values[3] == 1.2e11);
	assert_true(fabs(ax->values[2] - 1.1e11) < 1);
	assert_int_equal(pp_study_axis_parse("gpus_per_node+nvlink_domain=4,8", "--vary", ax, &err),
	                 PP_OK);
	assert_int_equal(ax->nfields, 2);
	assert_string_equal(ax->fields[1]->name, "nvlink_domain");
	assert_int_equal(pp_study_axis_parse("memory_bytes=1e10", "--vary", ax, &err), PP_OK);
	assert_string_equal(ax->fields[0]->name, "gpu.memory_bytes");
	const char *bad[] = {"gpu.hbm=1",
	                     "gpu.memory_bytes=",
	                     "gpu.memory_bytes=1e14",
	                     "nvlink_domain=8.5",
	                     "gpu.memory_bytes=2e10:1e10:1e9",
	                     "gpu.memory_bytes=1e9:1e13:1e6",
	                     "gpu.memory_bytes",
	                     "=4"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pp_error_clear(&err);
		assert_int_equal(pp_study_axis_parse(bad[i], "--vary", ax, &err), PP_EINPUT);
		assert_string_equal(err.field, "--vary");
	}
	free(ax);
}

typedef struct fixture {
	pp_model m;
	pp_system s;
	pp_job job;
	pp_plan plan;
	pp_study_axis ax[2];
	long long gpus[2];
	pp_search_space space;
	pp_search_options opts;
	pp_study_spec sp;
} fixture;

/* GPT3-1T on seed 003's B200 (tp 8, pp 16), HBM 80/192 GB x NVLink domain
 * 8/64, 4,096 and 8,192 GPUs. */
static fixture *fixture_new(void)
{
	fixture *f = calloc(1, sizeof *f);
	pp_error err;
	assert_non_null(f);
	assert_int_equal(pp_model_preset("gpt3-1t", &f->m, &err), PP_OK);
	assert_int_equal(pp_system_preset("lbnl-b200", &f->s, &err), PP_OK);
	pp_job_init(&f->job);
	f->job.global_batch = 4096;
	f->job.seq_len = 2048;
	f->job.train_tokens = 1e12;
	pp_plan_init(&f->plan);
	f->plan.tp = 8;
	f->plan.pp = 16;
	f->plan.sp = true;
	assert_int_equal(pp_study_axis_parse("gpu.memory_bytes=80e9,192e9", "a", &f->ax[0], &err),
	                 PP_OK);
	assert_int_equal(pp_study_axis_parse("nvlink_domain=8,64", "a", &f->ax[1], &err), PP_OK);
	f->gpus[0] = 4096;
	f->gpus[1] = 8192;
	pp_search_space_init(&f->space);
	pp_search_options_init(&f->opts);
	f->opts.threads = 1;
	pp_study_spec_init(&f->sp);
	f->sp = (pp_study_spec){&f->m, 1,     &f->s, &f->job, &f->plan,  f->gpus,
	                        2,     f->ax, 2,     false,   &f->space, &f->opts};
	return f;
}

static void test_size(void **state)
{
	(void)state;
	fixture *f = fixture_new();
	pp_error err;
	assert_int_equal(pp_study_size(&f->sp), 8);
	assert_int_equal(pp_study_check(&f->sp, 8, "--max-points", &err), PP_OK);
	assert_int_equal(pp_study_check(&f->sp, 7, "--max-points", &err), PP_EINPUT);
	assert_string_equal(err.field, "--max-points");
	free(f);
}

static void test_points_independent(void **state)
{
	(void)state;
	fixture *f = fixture_new();
	pp_error err;
	pp_study_row *rows = calloc(8, sizeof *rows), one;
	assert_int_equal(pp_study_run(&f->sp, rows, NULL, &err), PP_OK);
	for (size_t k = 8; k-- > 0;) {
		pp_study_ws *ws = pp_study_ws_new();
		assert_int_equal(pp_study_point(&f->sp, k, ws, &one, &err), PP_OK);
		pp_study_ws_free(ws);
		assert_memory_equal(&one, &rows[k], sizeof one);
	}
	/* Point order: memory outermost, then the domain, GPUs innermost. */
	assert_true(rows[0].values[0] == 80e9 && rows[0].values[1] == 8 && rows[0].gpus == 4096);
	assert_true(rows[5].values[0] == 192e9 && rows[5].values[1] == 8 && rows[5].gpus == 8192);
	assert_true(rows[5].capacity_bytes == 192e9);
	assert_true(rows[5].ok);
	assert_true(fabs(rows[5].headroom_bytes - (192e9 - rows[5].peak_bytes)) < 1);
	/* 80 GB does not hold tp 8 pp 16 without recompute: memory binds. */
	assert_false(rows[1].ok);
	assert_string_equal(rows[1].binding, "memory");
	/* A larger NVLink domain never slows the plan down. */
	assert_true(rows[7].iteration_s <= rows[5].iteration_s * (1 + 1e-12));
	free(rows);
	free(f);
}

static void test_peak_scaling(void **state)
{
	(void)state;
	fixture *f = fixture_new();
	pp_error err;
	assert_int_equal(pp_study_axis_parse("gpu.bf16_flops+gpu.fp16_flops=1.25e15,2.5e15", "a",
	                                     &f->ax[0], &err),
	                 PP_OK);
	f->sp.axes = f->ax;
	f->sp.naxes = 1;
	f->sp.ngpus = 1;
	pp_study_row r[2];
	assert_int_equal(pp_study_run(&f->sp, r, NULL, &err), PP_OK);
	assert_true(r[0].ok && r[1].ok);
	double ratio = r[1].compute_s / r[0].compute_s;
	/* GEMMs at the same fraction of twice the peak run in half the time;
	 * memory-bound kernels and fixed times do not move. */
	assert_true(ratio > 0.5 && ratio < 0.75);
	free(f);
}

static void test_search_binding(void **state)
{
	(void)state;
	fixture *f = fixture_new();
	pp_error err;
	assert_int_equal(pp_search_space_set(&f->space, "tp", "--tp", "4,8", NULL, &err), PP_OK);
	assert_int_equal(pp_search_space_set(&f->space, "cp", "--cp", "1", NULL, &err), PP_OK);
	assert_int_equal(
	    pp_search_space_set(&f->space, "recompute", "--recompute", "none", NULL, &err), PP_OK);
	f->space.headroom_fraction = 0;
	f->space.base = f->plan;
	f->sp.search = true;
	f->sp.naxes = 1;
	pp_study_row *rows = calloc(4, sizeof *rows);
	assert_int_equal(pp_study_run(&f->sp, rows, NULL, &err), PP_OK);
	for (size_t i = 0; i < 4; i++) {
		const pp_study_row *r = &rows[i];
		assert_true(r->plans > 0);
		bool faster = r->unbound_iteration_s > 0 &&
		              (!r->ok || r->unbound_iteration_s < r->iteration_s * (1 - 1e-9));
		assert_int_equal(strcmp(r->binding, "memory") == 0, faster);
		if (r->ok)
			assert_true(r->peak_bytes <= r->capacity_bytes);
	}
	free(rows);
	free(f);
}

/* Keep the header and the first `records` lines of the checkpoint `path`. */
static void ckpt_cut(const char *path, int records)
{
	char buf[1 << 16];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf, f), at = 0;
	fclose(f);
	for (int lines = 0; at < n && lines <= records; at++)
		lines += buf[at] == '\n';
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, at, f), at);
	fclose(f);
}

static void test_checkpoint_resume(void **state)
{
	(void)state;
	fixture *f = fixture_new();
	pp_error err;
	char path[] = "/tmp/test_study_ckpt_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	remove(path);
	pp_study_row *ref = calloc(8, sizeof *ref), *rows = calloc(8, sizeof *rows);
	assert_int_equal(pp_study_run(&f->sp, ref, NULL, &err), PP_OK);
	pp_shard ex = {.checkpoint = path, .args_hash = 0x5eed};
	assert_int_equal(pp_study_run(&f->sp, rows, &ex, &err), PP_OK);
	assert_true(ex.resumed == 0 && ex.evaluated == 8);
	ckpt_cut(path, 3);
	memset(rows, 0, 8 * sizeof *rows);
	ex = (pp_shard){.checkpoint = path, .args_hash = 0x5eed};
	assert_int_equal(pp_study_run(&f->sp, rows, &ex, &err), PP_OK);
	assert_true(ex.resumed == 3 && ex.evaluated == 5);
	for (size_t i = 0; i < 8; i++)
		assert_memory_equal(&rows[i], &ref[i], sizeof *rows);
	ex = (pp_shard){.checkpoint = path, .args_hash = 0x5eed};
	assert_int_equal(pp_study_run(&f->sp, rows, &ex, &err), PP_OK);
	assert_true(ex.resumed == 8 && ex.evaluated == 0);
	remove(path);
	free(rows);
	free(ref);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_axis_parse),         cmocka_unit_test(test_size),
	    cmocka_unit_test(test_points_independent), cmocka_unit_test(test_peak_scaling),
	    cmocka_unit_test(test_search_binding),     cmocka_unit_test(test_checkpoint_resume),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
