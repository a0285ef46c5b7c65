/*
 * Hierarchical all-reduce (seed 003 S2, two tiers): reduce-scatter inside
 * the domain, all-reduce of 1/nd of the data across domains on nd NICs in
 * parallel, all-gather inside.  For a group spread over whole domains.
 */
#include "coll_int.h"

static bool hier_applies(pp_coll_kind kind, const pp_coll_net *net)
{
	(void)kind;
	return net->nd < net->n && net->n % net->nd == 0;
}

static double hier_time(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	(void)kind;
	int nodes = net->n / net->nd;
	double inner = ppi_coll_intra_pair(net, V);
	double outer = 2.0 * (nodes - 1) * net->system->nic_latency_s +
	               2.0 * (nodes - 1) / nodes * (V / net->nd) / net->bw_s_bytes_per_s;
	return inner + outer;
}

const pp_coll_algo ppi_coll_hier = {
    "hierarchical", PPI_COLL_KIND(PP_COLL_ALLREDUCE), false, hier_applies, hier_time, PP_NCCL_RING,
};
