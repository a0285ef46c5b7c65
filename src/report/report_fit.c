/*
 * calibrate's fits rendered as text: per GPU the records, the MAPE before
 * and after, the fitted parameters as JSON to copy into the presets, those
 * at a bound, and the leave-one-out MAPE; then the leave-one-out over all
 * GPUs.  The fitting is calib's (pp_fit).
 */
#include <stdio.h>
#include <string.h>

#include "format_int.h"
#include "paraplan/calib.h"
#include "paraplan/params.h"

/* The fitted parameters of the GPU's "efficiency", as JSON to copy into the
 * presets: fractions with three decimals, log-scale quantities with three
 * significant digits.  (The system's link efficiencies are nccl-tests', not
 * fitted on step times: calibrate --nccl-tests; a network no nccl-tests
 * measure, pp_system.fit_nic_eff, is printed on its own line below.) */
static void print_fitted(FILE *f, const pp_system *s)
{
	fprintf(f, "  gpu \"efficiency\": {");
	const char *sep = "";
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		if (!p->fitted || p->kind != PP_PARAM_GPU)
			continue;
		fprintf(f, p->fit_log ? "%s\"%s\": %.3g" : "%s\"%s\": %.3f", sep, p->key,
		        pp_param_get(p, s));
		sep = ", ";
	}
	fprintf(f, "}\n");
}

int ppi_fit_text(const pp_result *r, FILE *f)
{
	const pp_fit_report *t = r->fit;
	if (!t->gpu) { /* the closing line over all GPUs */
		if (t->loo && t->loo_n)
			fprintf(f, "\nleave-one-out MAPE over all GPUs: %.1f%% (%zu records)\n",
			        100 * t->loo_sum / t->loo_n, t->loo_n);
		return ferror(f) ? -1 : 0;
	}
	fprintf(f, "%-14s %3zu records  MAPE %5.1f%% -> %5.1f%% after %d sweeps  systems:", t->gpu,
	        t->records, 100 * t->mape_start, 100 * t->mape, t->sweeps);
	for (size_t k = 0; k < t->nsystems; k++)
		fprintf(f, " %s", t->systems[k]);
	fputc('\n', f);
	/* A plain GPU's fit holds its sibling's records too (pp_fit_new): both
	 * presets take its values. */
	const char *sib = strchr(t->gpu, ':') ? NULL : pp_fit_sibling(t->gpu, NULL);
	if (sib)
		fprintf(f,
		        "  (gemm, gemm_fp8, attn, memory: the stack's fractions of the kernel "
		        "model's rates; copy them into the \"efficiency\" of %s and %s, the same "
		        "silicon)\n",
		        t->gpu, sib);
	else
		fprintf(f, "  (gemm, gemm_fp8, attn, memory: the stack's fractions of the kernel "
		           "model's rates; copy them into the GPU's \"efficiency\")\n");
	print_fitted(f, t->fitted);
	/* A network no nccl-tests measure: its NIC efficiency from its records. */
	for (size_t k = 0; k < t->nnets; k++)
		fprintf(
		    f,
		    "  system %s \"framework\": {\"nic_eff\": %.3f}  (no nccl-tests measure its "
		    "network: fitted to its records%s)\n",
		    t->nets[k], t->net_nic_eff[k],
		    t->net_pinned[k] ? "" : "; they do not pin it, the neutral start");
	if (t->nat_bound) {
		fprintf(f, "  AT BOUND (the fit wants a value outside the physical range):");
		for (size_t k = 0; k < t->nat_bound; k++)
			fprintf(f, " %s=%.3g", t->at_bound[k]->key, t->at_bound_v[k]);
		fputc('\n', f);
	}
	if (t->loo) {
		if (t->loo_n)
			fprintf(f, "  leave-one-out MAPE %.1f%% over %zu records\n",
			        100 * t->loo_sum / t->loo_n, t->loo_n);
		else
			fprintf(f, "  leave-one-out: no record could be predicted\n");
	}
	return ferror(f) ? -1 : 0;
}
