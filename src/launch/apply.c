/*
 * The command line's launch flags (include/paraplan/launch.h,
 * pp_launch_apply): one call that picks the reader a flag names.
 */
#include <stdio.h>
#include <string.h>

#include "paraplan/launch.h"

pp_status pp_launch_apply(const char *flag, const char *value, pp_job *job, pp_plan *plan,
                          pp_launch *out, char *note, size_t n, pp_error *err)
{
	bool titan = strcmp(flag, "from-torchtitan") == 0;
	pp_status st;
	if (n)
		note[0] = '\0';
	if (titan)
		st = pp_launch_load_torchtitan(value, job, plan, out, err);
	else if (value[0] == '@')
		st = pp_launch_load_megatron(value + 1, job, plan, out, err);
	else
		st = pp_launch_from_megatron(value, strlen(value), "--from-megatron", job, plan,
		                             out, err);
	if (!st && out->unused && n)
		snprintf(note, n, "--%s: %d %s%s not used: %s", flag, out->unused,
		         titan ? "key" : "flag", out->unused == 1 ? "" : "s", out->unused_flags);
	return st;
}
