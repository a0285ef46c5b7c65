/*
 * libFuzzer target: torchtitan job TOML files on arbitrary bytes.
 *
 * Feeds the input to pp_launch_from_torchtitan (the TOML subset of
 * src/launch/toml.c, then torchtitan's keys).  Any crash or sanitizer report
 * is a bug, and so is an accepted plan with a degree below 1.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

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
	if (pp_launch_from_torchtitan((const char *)data, size, "fuzz", &job, &plan, &l, &err) !=
	    PP_OK)
		return 0;
	if (plan.tp < 1 || plan.pp < 1 || plan.cp < 1 || plan.ep < 1 || plan.vp < 1 ||
	    plan.mbs < 1 || plan.dp < 0 || job.seq_len < 1)
		abort();
	return 0;
}
