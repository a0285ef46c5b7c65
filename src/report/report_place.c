/*
 * place's result rendered as text: the mapping's workers and nodes, where the
 * bandwidths came from, Pipette's latency terms (seed 001 Eq. 3-6) of the
 * identity and of the annealed mapping, the gain, the nodes of the first
 * pipelines, and the mapped traffic's totals.  The mapping is map's
 * (pp_anneal).
 */
#include <stdio.h>

#include "format_int.h"

static void terms_row(FILE *o, const char *name, double a, double b, double scale)
{
	fprintf(o, "  %-26s %12.3f %12.3f\n", name, a * scale, b * scale);
}

int ppi_place_text(const pp_result *res, FILE *o)
{
	const pp_place_report *pr = res->place;
	const pp_pipette_model *m = pr->m;
	const pp_anneal_result *r = pr->anneal;
	const long long *f = pr->f;
	long long n = (long long)m->pp * m->tp * m->dp;
	int g = m->gpus_per_node;
	fprintf(o, "mapping of %lld workers (pp %d x tp %d x dp %d) on %lld nodes of %d GPUs\n", n,
	        m->pp, m->tp, m->dp, (n + g - 1) / g, g);
	if (pr->bandwidth)
		fprintf(o, "bandwidth: %s (%d x %d %s)\n", pr->bandwidth, m->bw->n, m->bw->n,
		        m->bw->gpus_per_endpoint == 1 ? "GPUs" : "nodes");
	else
		fprintf(o,
		        "bandwidth: synthetic, seed %lld (NIC nominal, links down to 0.5x, 2%% "
		        "asymmetry)\n",
		        pr->synthetic_seed);
	const pp_pipette_terms *a = &pr->identity, *b = &pr->annealed;
	fprintf(o, "\n  %-26s %12s %12s\n", "seed 001 Eq. 3-6", "identity", "annealed");
	terms_row(o, "tp ring ms", a->tp_s, b->tp_s, 1e3);
	terms_row(o, "pp path ms (Eq. 5)", a->pp_path_s, b->pp_path_s, 1e3);
	terms_row(o, "dp all-reduce ms (Eq. 6)", a->dp_s, b->dp_s, 1e3);
	terms_row(o, "iteration s (Eq. 3)", a->iteration_s, b->iteration_s, 1);
	if (pr->sim_s[0] > 0)
		terms_row(o, "simulated iteration s", pr->sim_s[0], pr->sim_s[1], 1);
	fprintf(o,
	        "\ngain %.4fx over the identity (%lld moves, %lld accepted, seed %lld, %.3f s)\n",
	        r->gain, r->moves, r->accepted, pr->seed, r->cpu_s);
	int show = m->dp < 4 ? m->dp : 4;
	for (int z = 0; z < show; z++) {
		fprintf(o, "pipeline tp 0 dp %d: nodes", z);
		for (int x = 0; x < m->pp; x++)
			fprintf(o, " %lld", f[(long long)m->tp * (z + (long long)m->dp * x)] / g);
		fprintf(o, "\n");
	}
	if (ferror(o))
		return -1;
	return pr->traffic ? pp_report_traffic_text(pr->traffic, o) : 0;
}

pp_place_report pp_place_report_of(const pp_netmap *run, long long seed, const char *bandwidth,
                                   long long synthetic_seed, const pp_traffic *traffic)
{
	return (pp_place_report){.m = &run->m,
	                         .f = run->best,
	                         .anneal = &run->result,
	                         .seed = seed,
	                         .identity = run->identity,
	                         .annealed = run->annealed,
	                         .sim_s = {run->sim_s[0], run->sim_s[1]},
	                         .bandwidth = bandwidth,
	                         .synthetic_seed = synthetic_seed,
	                         .traffic = traffic};
}
