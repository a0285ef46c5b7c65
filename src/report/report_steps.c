/*
 * calibrate --step-times rendered as text: each run measured, at the neutral
 * start and fitted, then the fit's summary.  The fitting is calib's
 * (pp_fit_new_cases).
 */
#include <stdio.h>

#include "paraplan/format.h"
#include "paraplan/params.h"

int pp_report_steps_fit_text(const pp_steps *steps, const pp_steps_fit *r, FILE *rep)
{
	size_t n = steps->n, nu = r->nused;
	fprintf(rep, "%-16s %12s %14s %14s %8s\n", "run", "measured s", "neutral s", "fitted s",
	        "residual");
	for (size_t i = 0; i < n; i++) {
		double e = r->after[i], s = steps->run[i].iteration_s;
		fprintf(rep, "%-16s %12.4g %14.4g %14.4g %+7.1f%%\n", steps->run[i].id, s,
		        s * (1 + r->before[i]), s * (1 + e), 100 * e);
	}
	fprintf(rep, "MAPE %.1f%% at the neutral start -> %.1f%% fitted, %d sweeps, %zu runs\n",
	        100 * r->mape_start, 100 * r->mape, r->sweeps, n);
	fprintf(rep, "fitted (the parameters the runs react to):");
	for (size_t k = 0; k < nu; k++)
		fprintf(rep, " %s %.3g", r->used[k]->key, pp_param_get(r->used[k], &r->fitted));
	fputc('\n', rep);
	if (n < nu)
		fprintf(rep,
		        "note: %zu runs for %zu parameters: many values fit them equally; "
		        "runs of other shapes (sizes, plans, GPU counts) pin them down\n",
		        n, nu);
	return ferror(rep) ? -1 : 0;
}
