/*
 * Recipes (include/paraplan/recipe.h): a ramp's GPU-hours recomputed by hand
 * from one estimate per batch size, the re-shard's save and load from the
 * checkpoint model, the positions errors name, and the refusals.
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
#include "recipe/recipe_int.h"

/* `text` into a temporary file; its name in `path` (the caller unlinks it). */
static void write_recipe(char *path, size_t n, const char *text)
{
	snprintf(path, n, "/tmp/pp_recipe_%d_XXXXXX", (int)getpid());
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Read and run `text`: the status, *rc and *res filled (caller frees). */
static pp_status run_text(const char *text, pp_recipe **rc, pp_recipe_result **res, pp_error *err)
{
	char path[64];
	write_recipe(path, sizeof path, text);
	*rc = malloc(sizeof **rc);
	*res = malloc(sizeof **res);
	assert_non_null(*rc);
	assert_non_null(*res);
	pp_error_clear(err);
	pp_status st = pp_recipe_read(path, *rc, err);
	if (!st)
		st = pp_recipe_run(*rc, *res, err);
	unlink(path);
	return st;
}

static const char *const two_phases =
    "{\"name\": \"t\", \"model\": \"llama3-8b\", \"system\": \"dgx-h100\", \"gpus\": 16,\n"
    " \"plan\": {\"tp\": 2, \"pp\": 2, \"zero\": 1},\n"
    " \"phases\": [\n"
    "  {\"name\": \"ramp\", \"tokens\": 20e9, \"seq\": 4096,\n"
    "   \"gbs\": {\"start\": 64, \"end\": 256, \"step\": 64, \"over_tokens\": 6e9}},\n"
    "  {\"name\": \"wide\", \"tokens\": 1e9, \"seq\": 4096, \"gbs\": 256, \"plan\": {\"tp\": 4}}\n"
    " ]}\n";

/* One estimate of the recipe's plan at batch `gbs`, seq 4096, with `tokens`. */
static void estimate_at(const pp_recipe *rc, int tp, int gbs, double tokens, pp_estimate *e)
{
	pp_job job = rc->job;
	job.global_batch = gbs;
	job.seq_len = 4096;
	job.train_tokens = tokens;
	pp_plan plan;
	pp_plan_init(&plan);
	plan.tp = tp;
	plan.pp = 2;
	plan.zero = 1;
	pp_error err;
	assert_int_equal(pp_estimate_run(&rc->model, &rc->system, &job, &plan, 16, e, &err), PP_OK);
	pp_goodput_params gp;
	pp_goodput_params_init(&gp);
	assert_int_equal(pp_estimate_goodput(e, &gp, &err), PP_OK);
}

/*
 * By hand: the ramp 64 -> 256 in steps of 64 over 6e9 tokens is 3
 * increments, so batches 64, 128 and 192 train 2e9 tokens each and 256 the
 * remaining 14e9; each batch's GPU-hours are tokens / (gbs x 4096)
 * iterations x its iteration time x 16 GPUs / 3600.  The second phase changes
 * tp (2 -> 4): the checkpoint is saved (phase 1's, at 2 TB/s, on 16 GPUs) and
 * loaded (phase 2's, on 16 GPUs).
 */
static void test_ramp_and_reshard_by_hand(void **state)
{
	(void)state;
	pp_recipe *rc;
	pp_recipe_result *res;
	pp_error err;
	assert_int_equal(run_text(two_phases, &rc, &res, &err), PP_OK);
	const pp_recipe_phase_result *p0 = &res->phases[0], *p1 = &res->phases[1];
	assert_int_equal(p0->nsteps, 4);
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	const int gbs[4] = {64, 128, 192, 256};
	const double tokens[4] = {2e9, 2e9, 2e9, 14e9};
	double hours = 0, iters = 0;
	for (int k = 0; k < 4; k++) {
		estimate_at(rc, 2, gbs[k], tokens[k], e);
		double it = tokens[k] / (gbs[k] * 4096.0);
		double h = it * e->time.iteration_s * 16 / 3600;
		assert_int_equal(p0->steps[k].gbs, gbs[k]);
		assert_rel(p0->steps[k].gpu_hours, h, 1e-9);
		assert_rel(p0->steps[k].eff_gpu_hours, e->goodput.gpu_hours, 1e-12);
		hours += h;
		iters += it;
	}
	assert_rel(p0->gpu_hours, hours, 1e-9);
	assert_rel(p0->iterations, iters, 1e-12);
	assert_rel(p0->tokens, 20e9, 1e-12);
	double save_s = e->goodput.ckpt_total_bytes / 2e12; /* phase 1 at batch 256 */
	assert_false(p0->reshard);
	assert_true(p1->reshard);
	assert_int_equal(p1->plan.tp, 4);
	estimate_at(rc, 4, 256, 1e9, e);
	double load_s = e->goodput.ckpt_total_bytes / 2e12;
	assert_rel(p1->save_s, save_s, 1e-12);
	assert_rel(p1->load_s, load_s, 1e-12);
	assert_rel(p1->reshard_gpu_hours, (save_s + load_s) * 16 / 3600, 1e-12);
	double h1 = 1e9 / (256 * 4096.0) * e->time.iteration_s * 16 / 3600;
	assert_rel(res->gpu_hours, hours + h1 + p1->reshard_gpu_hours, 1e-9);
	assert_rel(res->cost_usd, res->gpu_hours * rc->system.usd_per_gpu_hour, 1e-9);
	free(e);
	free(rc);
	free(res);
}

/*
 * Without a step the ramp moves by the plan's mbs x dp: tp 2, pp 2 on 16 GPUs
 * is dp 4, so 64 -> 128 is 16 increments of 4, 17 batch sizes, each of the
 * first 16 with 1.6e9 / 16 = 1e8 tokens and 128 with the other 0.4e9.
 */
static void test_default_step(void **state)
{
	(void)state;
	const char *text = "{\"name\": \"t\", \"model\": \"llama3-8b\", \"system\": \"dgx-h100\",\n"
	                   " \"gpus\": 16, \"plan\": {\"tp\": 2, \"pp\": 2},\n"
	                   " \"phases\": [{\"tokens\": 2e9, \"seq\": 4096,\n"
	                   "   \"gbs\": {\"start\": 64, \"end\": 128, \"over_tokens\": 1.6e9}}]}";
	pp_recipe *rc;
	pp_recipe_result *res;
	pp_error err;
	assert_int_equal(run_text(text, &rc, &res, &err), PP_OK);
	const pp_recipe_phase_result *p = &res->phases[0];
	assert_int_equal(p->plan.dp, 4);
	assert_int_equal(p->nsteps, 17);
	for (int k = 0; k < 16; k++) {
		assert_int_equal(p->steps[k].gbs, 64 + 4 * k);
		assert_rel(p->steps[k].tokens, 1e8, 1e-12);
	}
	assert_int_equal(p->steps[16].gbs, 128);
	assert_rel(p->steps[16].tokens, 0.4e9, 1e-12);
	free(rc);
	free(res);
}

/* The place of a field path in a JSON text: keys, nested keys, array elements. */
static void test_locate(void **state)
{
	(void)state;
	const char *t = "{\"a\": 1,\n \"phases\": [\n  {\"x\": 2},\n  {\"gbs\": {\"end\": 3}}\n ]}";
	int line = 0, col = 0;
	assert_true(ppi_json_locate(t, strlen(t), "a", &line, &col));
	assert_int_equal(line, 1);
	assert_int_equal(col, 2);
	assert_true(ppi_json_locate(t, strlen(t), "phases[1].gbs.end", &line, &col));
	assert_int_equal(line, 4);
	assert_int_equal(col, 12);
	assert_true(ppi_json_locate(t, strlen(t), "phases[0]", &line, &col));
	assert_int_equal(line, 3);
	assert_int_equal(col, 3);
	/* A key not there: the nearest enclosing place found. */
	assert_true(ppi_json_locate(t, strlen(t), "phases[1].gbs.step", &line, &col));
	assert_int_equal(line, 4);
	assert_int_equal(col, 4);
	assert_false(ppi_json_locate(t, strlen(t), "nothing", &line, &col));
}

/* Refusals: each a PP_EINPUT naming the field and its line:column. */
static void refused(const char *text, const char *field, int line, const char *words)
{
	pp_recipe *rc;
	pp_recipe_result *res;
	pp_error err;
	assert_int_equal(run_text(text, &rc, &res, &err), PP_EINPUT);
	if (strcmp(err.field, field) != 0 || err.line != line || !strstr(err.text, words))
		fail_msg("got %s:%d:%d: %s: %s", err.source, err.line, err.column, err.field,
		         err.text);
	free(rc);
	free(res);
}

static void test_refusals(void **state)
{
	(void)state;
	const char *head = "{\"name\": \"t\", \"model\": \"llama3-8b\", \"system\": \"dgx-h100\", "
	                   "\"gpus\": 16,\n \"phases\": [\n";
	char buf[1024];
	snprintf(buf, sizeof buf, "%s  {\"tokens\": 0, \"seq\": 4096, \"gbs\": 64}]}", head);
	refused(buf, "phases[0].tokens", 3, "tokens above 0");
	snprintf(buf, sizeof buf,
	         "%s  {\"tokens\": 1e9, \"seq\": 4096,\n   \"gbs\": {\"start\": 256, \"end\": 64, "
	         "\"over_tokens\": 1e8}}]}",
	         head);
	refused(buf, "phases[0].gbs.end", 4, "below its start 256");
	snprintf(buf, sizeof buf,
	         "%s  {\"tokens\": 1e9, \"seq\": 4096, \"gbs\": 64,\n   \"tokns\": 1}]}", head);
	refused(buf, "phases[0].tokns", 4, "unknown key");
	snprintf(buf, sizeof buf,
	         "%s  {\"tokens\": 1e9, \"seq\": 4096, \"gbs\": 64, \"plan\": {\"tpp\": 2}}]}",
	         head);
	refused(buf, "phases[0].plan.tpp", 3, "did you mean");
	/* The plan does not fit: tp 1, pp 1 of an 8B model at 16K x mbs 8. */
	snprintf(buf, sizeof buf,
	         "%s  {\"name\": \"big\", \"tokens\": 1e9, \"seq\": 16384, \"gbs\": 128,\n"
	         "   \"plan\": {\"mbs\": 8}}]}",
	         head);
	refused(buf, "phases[0] (big)", 3, "does not fit");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ramp_and_reshard_by_hand),
	    cmocka_unit_test(test_default_step),
	    cmocka_unit_test(test_locate),
	    cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
