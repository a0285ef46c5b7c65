/*
 * The measured-steps reader (pp_train_steps_read) on the twelve eager H100
 * training steps of ../shared/measurements/h100-sxm/train_steps_eager.jsonl,
 * and its refusals of bad lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

static void shared_steps(pp_train_steps *st)
{
	const char *shared = getenv("PARAPLAN_SHARED_DIR");
	char path[512];
	snprintf(path, sizeof path, "%s/measurements/h100-sxm/train_steps_eager.jsonl",
	         shared ? shared : "../shared");
	pp_error err;
	pp_error_clear(&err);
	if (pp_train_steps_read(path, st, &err)) {
		char buf[1024];
		fail_msg("%s", pp_error_format(&err, buf, sizeof buf));
	}
}

static void test_shared_file(void **state)
{
	(void)state;
	pp_train_steps st;
	shared_steps(&st);
	assert_int_equal(st.n, 12);
	const pp_train_step *t = &st.step[0];
	assert_int_equal(t->line, 1);
	assert_string_equal(t->model, "llama3.2-1b");
	assert_rel(t->step_s, 0.2572684936523438, 1e-15);
	assert_rel(t->static_bytes, 19840320512.0, 1e-15);
	assert_rel(t->peak_alloc_bytes, 29538101248.0, 1e-15);
	assert_rel(t->peak_reserved_bytes, 30385635328.0, 1e-15);
	assert_false(t->compiled);
	assert_int_equal(t->recompute, PP_RECOMPUTE_NONE);
	assert_int_equal(t->in.model.num_layers, 16);
	assert_int_equal(t->in.model.hidden, 2048);
	assert_int_equal(t->in.model.num_kv_heads, 8);
	assert_int_equal(t->in.model.head_dim, 64);
	assert_true(t->in.model.tied_embeddings);
	assert_true(t->in.model.gated_mlp);
	assert_int_equal(t->in.model.norm, PP_NORM_RMSNORM);
	assert_int_equal(t->in.gpus, 1);
	assert_int_equal(t->in.job.global_batch, 4);
	assert_int_equal(t->in.job.seq_len, 2048);
	assert_int_equal(t->in.plan.microbatches, 4);
	assert_string_equal(t->in.system.gpu.name, "h100-sxm");
	/* fp32 parameters (torchtitan / pytorch layout) */
	assert_true(t->in.system.param_bytes == 4);
	/* The shape gives the parameters the line states (embedding tied). */
	pp_param_count pc;
	for (size_t i = 0; i < st.n; i++) {
		t = &st.step[i];
		assert_int_equal(t->line, (int)i + 1);
		pp_model_params(&t->in.model, &pc);
		assert_rel(pc.total, t->params, 1e-9);
		assert_int_equal(t->in.plan.mbs * t->microbatches, t->in.job.global_batch);
	}
	assert_int_equal(st.step[3].recompute, PP_RECOMPUTE_FULL);
	assert_int_equal(st.step[3].in.plan.recompute, PP_RECOMPUTE_FULL);
	/* Every line evaluates. */
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	for (size_t i = 0; i < st.n; i++) {
		pp_error err;
		if (pp_inputs_estimate(&st.step[i].in, e, &err))
			fail_msg("line %d: %s", st.step[i].line, err.text);
	}
	free(e);
	pp_train_steps_free(&st);
	assert_int_equal(st.n, 0);
	pp_train_steps_free(&st);
}

/* What a bad line gets: file, line, column (syntax) or field. */
static void expect_bad(const char *text, int line, int column, const char *field,
                       const char *needle)
{
	pp_train_steps st;
	pp_error err;
	pp_error_clear(&err);
	assert_int_equal(pp_train_steps_parse(text, strlen(text), "s.jsonl", &st, &err), PP_EINPUT);
	assert_int_equal(st.n, 0);
	assert_null(st.step);
	assert_string_equal(err.source, "s.jsonl");
	assert_int_equal(err.line, line);
	if (column)
		assert_int_equal(err.column, column);
	if (field)
		assert_string_equal(err.field, field);
	if (needle && !strstr(err.text, needle))
		fail_msg("'%s' lacks '%s'", err.text, needle);
}

#define BASE                                                                                       \
	"{\"layers\": 2, \"hidden\": 256, \"heads\": 4, \"kv_heads\": 2, \"ffn\": 512, "           \
	"\"vocab\": 1000, \"tied\": false, \"seq\": 128, \"mbs\": 1, \"microbatches\": 2, "        \
	"\"step_s\": 0.01, \"static_bytes\": 1e6, \"peak_alloc_bytes\": 2e6, "                     \
	"\"peak_reserved_bytes\": 3e6"
#define GOOD BASE ", \"recompute\": \"none\""

static void test_bad_lines(void **state)
{
	(void)state;
	pp_train_steps st;
	pp_error err;
	const char *good = GOOD "}\n\n" GOOD "}\n";
	assert_int_equal(pp_train_steps_parse(good, strlen(good), "s", &st, &err), PP_OK);
	assert_int_equal(st.n, 2);
	assert_int_equal(st.step[1].line, 3);
	assert_string_equal(st.step[0].in.model.name, "train-step");
	pp_train_steps_free(&st);
	expect_bad(GOOD "}\n" GOOD ",}\n", 2, 0, NULL, "invalid JSON");
	expect_bad(GOOD "}\n{\"layers\": 2,\n", 2, 0, NULL, "invalid JSON");
	expect_bad(GOOD ", \"hiden\": 3}\n", 1, 0, "hiden", "hidden");
	expect_bad("{\"layers\": 2}\n", 1, 0, "step_s", NULL);
	expect_bad(GOOD ", \"kind\": \"infer\"}\n", 1, 0, "kind", "train");
	expect_bad(BASE ", \"recompute\": \"some\"}\n", 1, 0, "recompute", NULL);
	expect_bad(GOOD ", \"precision\": \"fp8\"}\n", 1, 0, "precision", "BF16");
	expect_bad("{\"layers\": 2, \"hidden\": 256, \"heads\": 3, \"kv_heads\": 3, \"ffn\": 512, "
	           "\"vocab\": 1000, \"tied\": false, \"seq\": 128, \"mbs\": 1, \"microbatches\": "
	           "2, \"recompute\": \"none\", \"step_s\": 0.01, \"static_bytes\": 1e6, "
	           "\"peak_alloc_bytes\": 2e6, \"peak_reserved_bytes\": 3e6}",
	           1, 0, "heads", "multiple");
	expect_bad(GOOD ", \"peak_reserved_bytes\": 1e6}\n", 1, 0, NULL, "duplicate");
	expect_bad("\n\n[1]\n", 3, 1, NULL, "object");
	expect_bad("{\"layers\": -2}", 1, 0, "step_s", NULL);
	expect_bad("\n \n", 0, 0, NULL, "no training steps");
	assert_int_equal(pp_train_steps_read("/nonexistent/steps.jsonl", &st, &err) != PP_OK, 1);
	assert_int_equal(st.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shared_file),
	    cmocka_unit_test(test_bad_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
