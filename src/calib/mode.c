/*
 * calibrate's modes (include/paraplan/calib.h): which flags each applies, so
 * a flag of another mode is refused, never ignored.  A new calibrate flag: a
 * field of pp_calib_given and the modes it belongs to here.
 */
#include "paraplan/calib.h"
#include "util/util.h"

pp_status pp_calib_mode_of(const pp_calib_given *g, pp_calib_mode *mode, pp_error *err)
{
	pp_calib_mode m = g->memory       ? PP_CALIB_MODE_MEMORY
	                  : g->step_times ? PP_CALIB_MODE_STEPS
	                  : g->nccl_tests ? PP_CALIB_MODE_NCCL
	                                  : PP_CALIB_MODE_FIT;
	*mode = m;
	const char *bad = NULL;
	if (m != PP_CALIB_MODE_FIT)
		bad = g->data                      ? "--data"
		      : g->gpu                     ? "--gpu"
		      : g->cross_validate          ? "--cross-validate"
		      : g->json                    ? "--json"
		      : g->format                  ? "--format"
		      : g->memory && g->step_times ? "--step-times"
		                                   : NULL;
	if (!bad && (m == PP_CALIB_MODE_STEPS || m == PP_CALIB_MODE_MEMORY))
		bad = g->nccl_tests ? "--nccl-tests" : g->system ? "--system" : NULL;
	if (!bad && m == PP_CALIB_MODE_FIT)
		bad = g->system ? "--system" : g->output ? "--output" : NULL;
	if (!bad)
		return PP_OK;
	static const char *const with[] = {"without --nccl-tests, --step-times or --memory",
	                                   "with --nccl-tests", "with --step-times",
	                                   "with --memory"};
	return ppi_fail(err, NULL, "calibrate",
	                "%s does not apply %s (see 'paraplan calibrate --help')", bad, with[m]);
}
