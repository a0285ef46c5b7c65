/*
 * Power and energy of a plan (include/paraplan/estimate.h, docs/energy.md):
 * the GPUs' board power from their busy fraction, the nodes' host power,
 * the PUE, and the token budget's energy, CO2e and power cost.
 */
#include "paraplan/estimate.h"

void pp_energy_compute(const pp_system *s, const pp_energy_inputs *in, long long gpus,
                       double iteration_s, double busy_fraction, double train_s, pp_energy *out)
{
	pp_energy e = {0};
	const pp_gpu *g = &s->gpu;
	double busy = busy_fraction < 0 ? 0 : busy_fraction > 1 ? 1 : busy_fraction;
	e.busy_fraction = busy;
	e.tdp_only = g->idle_w <= 0;
	double idle = e.tdp_only ? g->tdp_w : g->idle_w;
	e.gpu_w = idle + (g->tdp_w - idle) * busy;
	int per_node = s->gpus_per_node > 0 ? s->gpus_per_node : 1;
	e.nodes = (gpus + per_node - 1) / per_node;
	e.no_host = s->host_w <= 0;
	e.it_w = (double)gpus * e.gpu_w + (double)e.nodes * s->host_w;
	e.pue = in->pue;
	e.facility_w = e.it_w * (in->pue > 0 ? in->pue : 1);
	e.iteration_j = e.facility_w * iteration_s;
	if (train_s > 0) {
		e.train_mwh = e.facility_w * train_s / 3.6e9; /* J -> MWh */
		/* MWh x 1000 kWh/MWh x g/kWh / 1000 g/kg = MWh x g/kWh kilograms */
		e.co2e_kg = e.train_mwh * in->gco2_per_kwh;
		e.power_usd = e.train_mwh * 1000 * in->usd_per_kwh;
	}
	*out = e;
}
