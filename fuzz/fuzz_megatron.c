/*
 * libFuzzer target: Megatron-LM flags and launch scripts on arbitrary bytes.
 *
 * Feeds the input to pp_launch_from_megatron (shell words, variables, flags).
 * Any crash or sanitizer report is a bug, and so is an accepted model whose
 * parameter count is not finite and positive, or a plan with a degree below 1.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pp_job job;
	pp_plan plan;
	pp_job_init(&job);
	pp_plan_init(&plan);
	pp_launch l;
	pp_error err;
	if (pp_launch_from_megatron((const char *)data, size, "fuzz", &job, &plan, &l, &err) !=
	    PP_OK)
		return 0;
	if (plan.tp < 1 || plan.pp < 1 || plan.cp < 1 || plan.ep < 1 || plan.vp < 1 ||
	    plan.mbs < 1 || (l.has_seq && job.seq_len < 1))
		abort();
	if (!l.has_model)
		return 0;
	pp_param_count c;
	pp_model_params(&l.model, &c);
	if (!isfinite(c.total) || !(c.total > 0))
		abort();
	return 0;
}
