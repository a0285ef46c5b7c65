/*
 * paraplan calibrate over a runs file: each GPU fitted to its records in
 * turn, converged and, when asked, left one out (pp_calib_fit).  The CLI
 * shows progress through the watch and renders each fit as it is done.
 */
#include <math.h>

#include "paraplan/calib.h"
#include "util/util.h"

/* One GPU's fit, seen by w->fitted converged and by w->done after its
 * leave-one-out (added to the sums). */
static pp_status fit_gpu(const pp_runs *runs, const char *gpu, bool loo, const pp_calib_watch *w,
                         double *loo_sum, size_t *loo_n, pp_error *err)
{
	pp_fit *f;
	pp_status st = pp_fit_new(runs, gpu, &f, err);
	if (st)
		return st;
	const pp_fit_watch *fw = w ? &w->fit : NULL;
	pp_fit_converge(f, fw);
	if (!isfinite(pp_fit_mape_start(f))) { /* nothing to fit to: never "MAPE inf%" */
		pp_fit_free(f);
		return ppi_fail(err, "", "gpu",
		                "no record measured on GPU '%s' has a throughput measurement", gpu);
	}
	if (w && w->fitted)
		w->fitted(f, gpu, w->fit.ctx);
	double sum = 0;
	size_t n = 0;
	if (loo)
		pp_fit_leave_one_out(f, fw, &sum, &n);
	*loo_sum += sum;
	*loo_n += n;
	if (w && w->done)
		w->done(gpu, sum, n, w->fit.ctx);
	pp_fit_free(f);
	return PP_OK;
}

pp_status pp_calib_fit(const pp_runs *runs, const char *const *gpus, size_t n, bool loo,
                       const pp_calib_watch *w, double *loo_sum, size_t *loo_n, pp_error *err)
{
	*loo_sum = 0;
	*loo_n = 0;
	for (size_t k = 0; k < n; k++) {
		pp_status st = fit_gpu(runs, gpus[k], loo, w, loo_sum, loo_n, err);
		if (st)
			return st;
	}
	return PP_OK;
}
