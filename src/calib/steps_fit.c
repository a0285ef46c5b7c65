/*
 * calibrate --step-times: the fit of the user's measured runs, converged,
 * and what its report and system file are made of (pp_steps_fit_run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/calib.h"
#include "util/util.h"

pp_status pp_steps_fit_run(const pp_fit_input *in, size_t n, pp_steps_fit *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	if (n > PP_STEPS_MAX)
		return ppi_fail(err, "", NULL, "more than %d runs to fit", PP_STEPS_MAX);
	pp_fit *f = NULL;
	pp_status st = pp_fit_new_cases(in, n, &f, err);
	if (st)
		return st;
	out->n = n;
	for (size_t i = 0; i < n; i++)
		out->before[i] = pp_fit_error(f, i);
	pp_fit_converge(f, NULL);
	for (size_t i = 0; i < n; i++)
		out->after[i] = pp_fit_error(f, i);
	out->mape_start = pp_fit_mape_start(f);
	out->mape = pp_fit_mape(f);
	out->sweeps = pp_fit_iterations(f);
	out->nused = pp_fit_used(f, out->used, PP_STEPS_FIT_PARAMS_MAX);
	pp_fit_result_system(f, &out->fitted);
	pp_fit_free(f);
	return PP_OK;
}

pp_status pp_steps_system_json(const char *path, const pp_steps_fit *r, const char *system_ref,
                               char **out, pp_error *err)
{
	char note[512], *text;
	const char *b = strrchr(path, '/');
	snprintf(note, sizeof note,
	         "fitted by 'paraplan calibrate --step-times %s': %zu measured runs, MAPE "
	         "%.1f%% at the neutral start, %.1f%% fitted (docs/calibration.md)",
	         b ? b + 1 : path, r->n, 100 * r->mape_start, 100 * r->mape);
	pp_status st =
	    pp_fit_system_json(system_ref, &r->fitted, r->used, r->nused, note, &text, err);
	if (st)
		return st;
	size_t len = strlen(text);
	*out = ppi_malloc(len + 2);
	if (*out) {
		memcpy(*out, text, len);
		memcpy(*out + len, "\n", 2);
	}
	free(text);
	return *out ? PP_OK : ppi_oom(err);
}
