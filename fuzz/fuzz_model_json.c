/*
 * libFuzzer target: paraplan's model JSON (and, through pp_model_from_json,
 * whatever HuggingFace config.json handling it dispatches to).
 *
 * Beyond "does not crash", it checks the contract of the readers: a failure is
 * PP_EINPUT with a non-empty one-line message; a success is a model that
 * pp_model_check accepts, whose parameters can be counted and whose memory can
 * be estimated on a built-in system without tripping the sanitizers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(pp_status st, const pp_error *err)
{
	char buf[1024];
	if (st != PP_EINPUT && st != PP_ENOMEM)
		abort(); /* bad input must never look like an internal failure */
	if (st == PP_EINPUT && !err->text[0])
		abort(); /* every rejection says why */
	pp_error_format(err, buf, sizeof buf);
	if (!buf[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pp_model m;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_model_from_json((const char *)data, size, "fuzz.json", &m, &err);
	if (st != PP_OK) {
		check_error(st, &err);
		return 0;
	}
	if (pp_model_check(&m, &err) != PP_OK)
		abort(); /* the reader accepted what the checker rejects */
	pp_param_count pc;
	pp_model_params(&m, &pc);
	if (!(pc.total > 0) || pc.active > pc.total * (1 + 1e-12))
		abort();

	/* A small plan on a built-in system: exercises plan resolution and the
	 * memory model with whatever shape the input describes. */
	static pp_system sys;
	static int have_sys = -1;
	if (have_sys < 0)
		have_sys = pp_system_preset("dgx-h100", &sys, &err) == PP_OK;
	if (!have_sys)
		return 0;
	pp_job job;
	pp_plan plan;
	pp_job_init(&job);
	pp_plan_init(&plan);
	job.global_batch = 16;
	job.seq_len = 2048;
	/* Keep the work per input small: huge layer counts are legal but slow. */
	if (m.num_layers > 1000)
		return 0;
	if (m.num_heads % 2 == 0 && m.num_kv_heads % 2 == 0 &&
	    (m.ffn_hidden == 0 || m.ffn_hidden % 2 == 0))
		plan.tp = 2;
	if (m.moe.num_experts > 0 && m.moe.num_experts % 2 == 0) {
		plan.ep = 2;
		plan.sp = true;
	}
	pp_estimate *e = malloc(sizeof *e);
	if (!e)
		return 0;
	st = pp_estimate_run(&m, &sys, &job, &plan, 8, e, &err);
	if (st != PP_OK)
		check_error(st, &err);
	else if (!(e->memory.total_bytes > 0))
		abort();
	free(e);
	return 0;
}
