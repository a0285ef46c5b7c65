/*
 * NVFP4 (Blackwell FP4) as an FP8-class recipe: the FP4 peaks of the
 * Blackwell presets, the quantisation bytes (an amax read, then row- and
 * column-wise E2M1 copies with an E4M3 scale per 16 elements), the kernel
 * model's GEMM at the FP4 peak, the roofline's, the refusal on a GPU without
 * FP4, and a run record whose precision says NVFP4 or FP4.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/calib.h"
#include "paraplan/cost.h"
#include "paraplan/kernel.h"
#include "paraplan/paraplan.h"

static void assert_rel(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fabs(want)))
		fail_msg("got %.9g, want %.9g (rel tol %g)", got, want, tol);
}

/* B200 and GB200 state a dense FP4 peak twice their FP8 one; Hopper none. */
static void test_presets(void **state)
{
	(void)state;
	pp_error err;
	pp_gpu g;
	assert_int_equal(pp_gpu_preset("b200", &g, &err), PP_OK);
	assert_rel(g.fp4_flops, 2 * g.fp8_flops, 1e-12);
	assert_int_equal(pp_gpu_preset("gb200", &g, &err), PP_OK);
	assert_rel(g.fp4_flops, 2 * g.fp8_flops, 1e-12);
	assert_int_equal(pp_gpu_preset("h100-sxm", &g, &err), PP_OK);
	assert_true(g.fp4_flops == 0);
	pp_fp8_recipe r;
	assert_int_equal(pp_fp8_recipe_parse("nvfp4", "--fp8-recipe", &r, &err), PP_OK);
	assert_int_equal(r, PP_FP8_NVFP4);
	assert_string_equal(pp_fp8_recipe_name(PP_FP8_NVFP4), "nvfp4");
}

/* Bytes: amax read 2 + cast read 2 + 2 x (FP4 0.5 + 1/16 E4M3 scale) per
 * element = 5.125; kept for wgrad 0.5 + 1/16. */
static void test_quant_bytes(void **state)
{
	(void)state;
	const double rows = 8192, cols = 4096, elems = rows * cols;
	assert_rel(pp_kernel_fp8_quant_bytes(PP_FP8_NVFP4, rows, cols, 100), elems * 5.125, 1e-12);
	assert_rel(pp_kernel_fp8_quant_bytes(PP_FP8_NVFP4, rows, cols, 90), elems * 5.125, 1e-12);
	assert_rel(pp_fp8_saved_input_bytes(PP_FP8_NVFP4), 0.5625, 1e-12);
	assert_int_equal(pp_kernel_dtype_of_recipe(PP_FP8_NVFP4), PP_KDT_NVFP4);
}

/* The kernel model: a large GEMM compute-bound at the FP4 peak runs in half
 * the MXFP8 time on B200 (the same efficiency of twice the peak); refused
 * (negative) on a GPU without FP4. */
static void test_kernel_gemm(void **state)
{
	(void)state;
	pp_error err;
	pp_gpu b, h;
	assert_int_equal(pp_gpu_preset("b200", &b, &err), PP_OK);
	assert_int_equal(pp_kernel_scale(&b, b.sm_count, &err), PP_OK);
	const double m = 16384, k = 8192, n = 28672;
	double mx = pp_kernel_gemm_s(&b, m, k, n, 1, PP_KDT_MXFP8);
	double fp4 = pp_kernel_gemm_s(&b, m, k, n, 1, PP_KDT_NVFP4);
	assert_true(mx > 0 && fp4 > 0);
	assert_rel(fp4 - b.kern.gemm_fixed_s, (mx - b.kern.gemm_fixed_s) / 2, 1e-9);
	assert_int_equal(pp_gpu_preset("h100-sxm", &h, &err), PP_OK);
	assert_int_equal(pp_kernel_scale(&h, h.sm_count, &err), PP_OK);
	assert_true(pp_kernel_gemm_s(&h, m, k, n, 1, PP_KDT_NVFP4) < 0);
}

/* One Megatron-Bridge record: id, GPU, precision. */
#define RECORD_FMT                                                                                 \
	"{\"id\": \"%s\", \"source\": {\"title\": \"NVIDIA NeMo Megatron-Bridge Performance "      \
	"Summary\"}, \"model\": {\"name\": \"Llama 3 70B\", \"num_layers\": 80, "                  \
	"\"hidden_size\": 8192, \"num_attention_heads\": 64, \"num_kv_heads\": 8, "                \
	"\"ffn_hidden_size\": 28672, \"vocab_size\": 128256, \"seq_length\": 8192}, "              \
	"\"hardware\": {\"gpu_type\": \"%s\", \"num_gpus\": 64}, \"parallelism\": {\"tp\": 2, "    \
	"\"pp\": 4, \"dp\": 8, \"virtual_pipeline_size\": 5, \"activation_recompute\": "           \
	"\"none\"}, \"batch\": {\"micro_batch_size\": 1, \"global_batch_size\": 256}, "            \
	"\"precision\": \"%s\", \"measured\": {\"tokens_per_s_per_gpu\": 4557}}"

/* Records: "NVFP4" is read as nvfp4 and evaluated on GB200; a bare "FP4" too,
 * with a fill; "MXFP4" is skipped; NVFP4 on an H100 does not resolve. */
static void test_records(void **state)
{
	(void)state;
	static const struct {
		const char *id, *gpu, *prec;
	} recs[] = {{"nvfp4", "GB200 (NVL72 rack)", "NVFP4"},
	            {"fp4", "GB200 (NVL72 rack)", "FP4"},
	            {"mxfp4", "GB200 (NVL72 rack)", "MXFP4"},
	            {"h100", "H100 SXM5 80GB", "NVFP4"}};
	char text[8192] = "{\"records\": [";
	for (size_t i = 0; i < sizeof recs / sizeof *recs; i++) {
		char one[2048];
		snprintf(one, sizeof one, RECORD_FMT, recs[i].id, recs[i].gpu, recs[i].prec);
		strcat(text, i ? ", " : "");
		strcat(text, one);
	}
	strcat(text, "]}");
	pp_runs *runs = NULL;
	pp_error err;
	assert_int_equal(pp_runs_from_json(text, strlen(text), "t.json", &runs, &err), PP_OK);
	pp_inputs in;
	pp_run_info info;
	assert_int_equal(pp_run_read(runs, 0, &in, &info, &err), PP_OK);
	assert_int_equal(in.job.precision, PP_PREC_FP8);
	assert_int_equal(in.job.fp8_recipe, PP_FP8_NVFP4);
	assert_false(info.fills & PP_FILL_PRECISION);
	assert_int_equal(pp_run_read(runs, 1, &in, &info, &err), PP_OK);
	assert_int_equal(in.job.fp8_recipe, PP_FP8_NVFP4);
	assert_true(info.fills & PP_FILL_PRECISION);
	assert_int_equal(pp_run_read(runs, 2, &in, &info, &err), PP_EINPUT);
	assert_non_null(strstr(err.text, "MXFP4"));
	assert_int_equal(pp_run_read(runs, 3, &in, &info, &err), PP_EINPUT);
	assert_non_null(strstr(err.text, "nvfp4"));
	pp_runs_free(runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_presets),
	    cmocka_unit_test(test_quant_bytes),
	    cmocka_unit_test(test_kernel_gemm),
	    cmocka_unit_test(test_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
