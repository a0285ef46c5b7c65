/*
 * An estimate's power and energy (pp_energy, docs/energy.md), as text lines
 * after the training line and as the JSON object "energy": shown only when
 * the job asks (pp_energy_asked), so that every other report is unchanged.
 */
#include <math.h>

#include "paraplan/estimate.h"
#include "report_int.h"

void ppi_report_energy_text(const pp_estimate *e, FILE *out)
{
	const pp_energy *en = &e->energy;
	const pp_energy_inputs *in = &e->job.energy;
	const pp_system *s = &e->system;
	fprintf(out, "energy      GPUs busy %.1f%% of the iteration: %.0f W per GPU",
	        100 * en->busy_fraction, en->gpu_w);
	if (en->tdp_only)
		fprintf(out, " (%s states no idle_w: its TDP throughout, an upper bound)",
		        s->gpu.name);
	else
		fprintf(out, " (idle %.0f W, TDP %.0f W)", s->gpu.idle_w, s->gpu.tdp_w);
	if (en->no_host)
		fprintf(out, "; %s states no host_w: GPUs alone, a lower bound\n", s->name);
	else
		fprintf(out, ", %.0f W per node besides them (%lld nodes)\n", s->host_w, en->nodes);
	if (en->pue > 0)
		fprintf(
		    out,
		    "  power     IT %.4f MW, facility %.4f MW at PUE %.2f; %.3f MJ per iteration\n",
		    en->it_w / 1e6, en->facility_w / 1e6, en->pue, en->iteration_j / 1e6);
	else
		fprintf(out,
		        "  power     IT %.4f MW (no --pue: facility power not given); %.3f MJ per "
		        "iteration of IT energy\n",
		        en->it_w / 1e6, en->iteration_j / 1e6);
	if (in->power_cap_w > 0)
		fprintf(out, "  cap       %.4f MW: %s by %.4f MW\n", in->power_cap_w / 1e6,
		        en->facility_w > in->power_cap_w ? "over" : "within",
		        fabs(en->facility_w - in->power_cap_w) / 1e6);
	if (e->train_tokens > 0) {
		fprintf(out, "  training  %.3g tokens: %.1f MWh of %s energy", e->train_tokens,
		        en->train_mwh, en->pue > 0 ? "facility" : "IT");
		if (in->gco2_per_kwh > 0)
			fprintf(out, ", %.1f t CO2e at %.0f g/kWh", en->co2e_kg / 1e3,
			        in->gco2_per_kwh);
		if (in->usd_per_kwh > 0)
			fprintf(out, ", %.0f USD of power at %.3f USD/kWh", en->power_usd,
			        in->usd_per_kwh);
		fputc('\n', out);
	}
}

json_t *ppi_report_energy_json(const pp_estimate *e)
{
	const pp_energy *en = &e->energy;
	const pp_energy_inputs *in = &e->job.energy;
	json_t *o = json_pack("{s:f,s:f,s:f,s:f,s:I,s:f,s:f,s:f,s:f,s:b,s:b}", "busy_fraction",
	                      en->busy_fraction, "gpu_w", en->gpu_w, "gpu_tdp_w",
	                      e->system.gpu.tdp_w, "gpu_idle_w", e->system.gpu.idle_w, "nodes",
	                      (json_int_t)en->nodes, "host_w_per_node", e->system.host_w, "it_w",
	                      en->it_w, "facility_w", en->facility_w, "iteration_j",
	                      en->iteration_j, "tdp_only", en->tdp_only, "no_host", en->no_host);
	if (!o)
		return NULL;
	if (en->pue > 0)
		json_object_set_new(o, "pue", json_real(en->pue));
	if (in->power_cap_w > 0)
		json_object_set_new(o, "power_cap_w", json_real(in->power_cap_w));
	if (e->train_tokens > 0)
		json_object_set_new(o, "train_mwh", json_real(en->train_mwh));
	if (e->train_tokens > 0 && in->gco2_per_kwh > 0) {
		json_object_set_new(o, "gco2_per_kwh", json_real(in->gco2_per_kwh));
		json_object_set_new(o, "co2e_kg", json_real(en->co2e_kg));
	}
	if (e->train_tokens > 0 && in->usd_per_kwh > 0) {
		json_object_set_new(o, "usd_per_kwh", json_real(in->usd_per_kwh));
		json_object_set_new(o, "power_usd", json_real(en->power_usd));
	}
	return o;
}
