/*
 * Pipette's latency model of one estimated plan on a bandwidth matrix: the
 * byte counts and compute time from the estimate's bottleneck stage (seed
 * 001 Eq. 3-6's inputs), and B(g1, g2) between global GPUs.
 */
#include <string.h>

#include "paraplan/estimate.h"
#include "paraplan/netmap.h"

void pp_pipette_model_of(const pp_estimate *e, const pp_bandwidth *bw, pp_pipette_model *out)
{
	memset(out, 0, sizeof *out);
	const pp_plan *p = &e->plan;
	out->pp = p->pp;
	out->tp = p->tp;
	out->dp = (int)(e->gpus / ((long long)p->pp * p->tp));
	out->gpus_per_node = e->system.gpus_per_node > 0 ? e->system.gpus_per_node : 1;
	out->microbatches = (double)p->microbatches;
	const pp_stage_time *b = &e->bottleneck;
	out->compute_s = b->fwd_s + b->bwd_s - b->tp_s;
	out->tp_bytes = b->tp_bytes;
	out->msg_pp_bytes = b->pp_bytes / 2;
	double d = out->dp;
	out->msg_dp_bytes = d > 1 ? b->dp_bytes / (2 * (d - 1) / d) : 0;
	out->intra_bytes_per_s = e->system.nvlink_bytes_per_s > 0 ? e->system.nvlink_bytes_per_s
	                                                          : e->system.nic_bytes_per_s;
	out->bw = bw;
}

double pp_pipette_bw(const pp_pipette_model *m, long long g1, long long g2)
{
	const pp_bandwidth *bw = m->bw;
	if (bw && bw->gpus_per_endpoint == 1 && g1 < bw->n && g2 < bw->n && g1 != g2)
		return bw->bytes_per_s[g1 * bw->n + g2];
	/* A matrix per node: its endpoints are the system's nodes (the reader
	 * takes no other grouping). */
	long long a = g1 / m->gpus_per_node, b = g2 / m->gpus_per_node;
	if (a == b || !bw || a >= bw->n || b >= bw->n)
		return m->intra_bytes_per_s;
	return bw->bytes_per_s[a * bw->n + b];
}
