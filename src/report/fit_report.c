/*
 * calibrate's report of one GPU's fit (pp_fit_report) read from the fit:
 * what its renderers (report_fit.c, the json and other formats) show.
 */
#include "paraplan/format.h"

pp_fit_report pp_fit_report_of(const pp_fit *f, const char *gpu, pp_fit_report_data *d)
{
	pp_fit_result_system(f, &d->fitted);
	size_t ns = pp_fit_systems(f, d->systems, PP_FIT_REPORT_MAX);
	size_t nb = pp_fit_at_bounds(f, d->at_bound, d->at_bound_v, PP_FIT_REPORT_MAX);
	size_t nn = pp_fit_networks(f, d->nets, d->net_nic_eff, d->net_pinned, PP_FIT_REPORT_MAX);
	return (pp_fit_report){.gpu = gpu,
	                       .records = pp_fit_records(f),
	                       .mape_start = pp_fit_mape_start(f),
	                       .mape = pp_fit_mape(f),
	                       .sweeps = pp_fit_iterations(f),
	                       .systems = d->systems,
	                       .nsystems = ns < PP_FIT_REPORT_MAX ? ns : PP_FIT_REPORT_MAX,
	                       .fitted = &d->fitted,
	                       .at_bound = d->at_bound,
	                       .at_bound_v = d->at_bound_v,
	                       .nat_bound = nb < PP_FIT_REPORT_MAX ? nb : PP_FIT_REPORT_MAX,
	                       .nets = d->nets,
	                       .net_nic_eff = d->net_nic_eff,
	                       .net_pinned = d->net_pinned,
	                       .nnets = nn};
}
