/*
 * validate's computation in the library (src/calib/validate.c): the source's
 * short name, the GPU-count bands, and pp_validate_summarise's MAPE groups,
 * fraction-of-HBM spread and search tallies on hand-made rows; and
 * pp_validate_run over a small runs file (judged, skipped, usable, summary,
 * progress).
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

#include "paraplan/calib.h"

static void test_source_name(void **state)
{
	(void)state;
	char out[PP_RUN_SOURCE_NAME_MAX];
	pp_run_source_name("Megatron-LM (Narayanan et al.), SC'21", out, sizeof out);
	assert_string_equal(out, "Megatron-LM");
	pp_run_source_name("Llama 3 herd, Meta 2024", out, sizeof out);
	assert_string_equal(out, "Llama 3 herd");
	pp_run_source_name("plain", out, sizeof out);
	assert_string_equal(out, "plain");
	char small[4];
	pp_run_source_name("abcdef", small, sizeof small);
	assert_string_equal(small, "abc");
}

static void test_scale_bands(void **state)
{
	(void)state;
	assert_int_equal(pp_validate_scale(8), 0);
	assert_int_equal(pp_validate_scale(64), 0);
	assert_int_equal(pp_validate_scale(65), 1);
	assert_int_equal(pp_validate_scale(512), 1);
	assert_int_equal(pp_validate_scale(4096), 2);
	assert_int_equal(pp_validate_scale(4097), 3);
	assert_string_equal(pp_validate_scale_name(0), "<=64 GPUs");
	assert_string_equal(pp_validate_scale_name(3), ">4096 GPUs");
}

static void set_row(pp_validate_row *r, const char *title, long long gpus, double err,
                    double fraction)
{
	memset(r, 0, sizeof *r);
	snprintf(r->info.title, sizeof r->info.title, "%s", title);
	r->est.gpus = gpus;
	r->est.fits = fraction <= 1;
	r->fraction = fraction;
	r->speed.metric = isnan(err) ? PP_METRIC_NONE : PP_METRIC_ITERATION_S;
	r->speed.error = err;
	r->mem.metric = PP_METRIC_NONE;
}

static void test_summarise(void **state)
{
	(void)state;
	pp_validate_row rows[4];
	set_row(&rows[0], "A (x)", 8, 0.10, 0.5);
	set_row(&rows[1], "B, y", 1024, -0.30, 0.9);
	set_row(&rows[2], "A (z)", 64, -0.20, 1.2);
	set_row(&rows[3], "C", 128, NAN, 0.7);
	rows[3].mem.metric = PP_METRIC_PEAK_MEMORY;
	rows[3].mem.error = 0.05;
	rows[1].searched = true;
	rows[1].est.time.iteration_s = 2.0;
	rows[1].best_s = 1.0;
	pp_validate_summary s;
	pp_error err;
	assert_int_equal(pp_validate_summarise(rows, 4, &s, &err), PP_OK);
	assert_int_equal(s.all.records, 3);
	assert_true(fabs(s.all.mape - 0.2) < 1e-12);
	assert_int_equal(s.unmeasured, 1);
	assert_int_equal(s.nsources, 3);
	assert_string_equal(s.by_source[0].name, "A");
	assert_int_equal(s.by_source[0].records, 2);
	assert_true(fabs(s.by_source[0].mape - 0.15) < 1e-12);
	assert_int_equal(s.by_source[2].records, 0); /* C measured no throughput */
	assert_int_equal(s.by_scale[0].records, 2);
	assert_int_equal(s.by_scale[2].records, 1);
	assert_int_equal(s.by_scale[1].records, 0);
	assert_int_equal(s.memory.records, 1);
	assert_true(fabs(s.memory.mape - 0.05) < 1e-12);
	assert_int_equal(s.fit, 3);
	assert_true(s.fraction_min == 0.5 && s.fraction_max == 1.2);
	assert_true(fabs(s.fraction_median - 0.8) < 1e-12); /* (0.7 + 0.9) / 2 */
	assert_int_equal(s.searched, 1);
	assert_int_equal(s.search_as_fast, 1);
	assert_true(fabs(s.search_mean_speedup - 2.0) < 1e-12);
	/* No row: no spread, no MAPE. */
	assert_int_equal(pp_validate_summarise(rows, 0, &s, &err), PP_OK);
	assert_true(isnan(s.all.mape) && isnan(s.fraction_median));
}

/* Three records: one judged, two skipped (an unknown model's bare record, a
 * GPU paraplan does not know). */
static const char *const three =
    "{\"records\": [{\"id\": \"mini\", \"source\": {\"title\": \"T\"},"
    " \"model\": {\"name\": \"Llama 2 7B\", \"num_layers\": 32, \"hidden_size\": 4096,"
    "  \"num_attention_heads\": 32, \"num_kv_heads\": null, \"ffn_hidden_size\": 11008,"
    "  \"vocab_size\": 32000, \"seq_length\": 4096, \"moe\": null, \"arch_notes\": null},"
    " \"hardware\": {\"gpu_type\": \"H100-SXM5-80GB (DGX H100)\", \"num_gpus\": 16},"
    " \"parallelism\": {\"tp\": 2, \"pp\": 1, \"dp\": null, \"cp\": null, \"ep\": null,"
    "  \"virtual_pipeline_size\": null, \"sequence_parallel\": null,"
    "  \"zero_or_dist_optimizer\": \"PyTorch FSDP SHARD_GRAD_OP\","
    "  \"activation_recompute\": null, \"model_parallel_size\": null},"
    " \"batch\": {\"micro_batch_size\": null, \"global_batch_size\": null,"
    "  \"global_batch_tokens\": 1048576},"
    " \"precision\": \"BF16 (inferred)\","
    " \"measured\": {\"tflops_per_gpu\": 400, \"tflops_definition\": \"model\","
    "  \"mfu\": 0.4, \"peak_memory_GiB\": 60}},"
    " {\"id\": \"odd\", \"model\": {\"name\": \"Falcon 7B\"}, \"hardware\": {}},"
    " {\"id\": \"gpu\", \"model\": {\"name\": \"Llama 2 7B\"},"
    "  \"hardware\": {\"gpu_type\": \"TPU v5p\", \"num_gpus\": 8}}]}";

static void count_progress(void *ctx, size_t done, size_t total)
{
	size_t *calls = ctx;
	assert_int_equal(done, *calls);
	assert_int_equal(total, 3);
	(*calls)++;
}

static void test_run(void **state)
{
	(void)state;
	pp_runs *runs = NULL;
	pp_error err;
	pp_error_clear(&err);
	assert_int_equal(pp_runs_from_json(three, strlen(three), "three", &runs, &err), PP_OK);
	size_t calls = 0;
	pp_validate_watch w = {count_progress, &calls};
	pp_validate_result v;
	assert_int_equal(pp_validate_run(runs, false, true, &w, &v, &err), PP_OK);
	assert_int_equal(calls, 3);
	assert_int_equal(v.nrows, 1);
	assert_string_equal(v.rows[0].info.id, "mini");
	assert_int_equal(v.nskips, 2);
	assert_string_equal(v.skips[0].id, "odd");
	assert_string_equal(v.skips[1].id, "gpu");
	assert_true(v.skips[0].reason[0] && v.skips[1].reason[0]);
	assert_int_equal(v.why.total, 2);
	assert_int_equal(v.usable, 1);
	assert_int_equal(v.summary.all.records, 1);
	assert_true(isfinite(v.summary.all.mape));
	pp_validate_result_free(&v);
	assert_null(v.rows);
	/* No watch; a memory validation counts every evaluated row usable. */
	assert_int_equal(pp_validate_run(runs, false, false, NULL, &v, &err), PP_OK);
	assert_int_equal(v.usable, v.nrows);
	pp_validate_result_free(&v);
	pp_runs_free(runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_source_name),
	    cmocka_unit_test(test_scale_bands),
	    cmocka_unit_test(test_summarise),
	    cmocka_unit_test(test_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
