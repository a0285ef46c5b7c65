/*
 * paraplan calibrate --cross-validate source: leave one source out.
 *
 * The computation is the library's (pp_calib_cross_validate, src/calib/cv.c:
 * each GPU fitted in-sample, then refitted without each source in turn to
 * predict it); its rendering is report's (PP_RESULT_CROSS_VALIDATION in the
 * text and json formats, src/report/report_cv.c).
 */
#include "cli.h"
#include "options.h"
#include "paraplan/calib.h"

int cli_calibrate_cv_source(const pp_runs *runs, const char *data, const char *const *gpus,
                            int ngpus, bool kernel, const pp_format_type *format)
{
	pp_cv_result res;
	pp_error err;
	pp_status st = pp_calib_cross_validate(runs, gpus, ngpus, kernel, &res, &err);
	if (st)
		return cli_fail(st, &err);
	cli_out out;
	int rc = cli_out_open(&out, NULL);
	if (rc == EXIT_ANSWERED) {
		pp_cv_report cv = {data, kernel, &res};
		pp_result r = {.kind = PP_RESULT_CROSS_VALIDATION, .cv = &cv};
		int wr = cli_render(format, &r, out.f);
		rc = cli_out_close(&out, wr == 0 && !ferror(out.f));
	}
	pp_cv_result_free(&res);
	return rc;
}
