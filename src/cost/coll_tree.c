/*
 * NCCL's double binary tree across domains (seed 004 §3.1): a ring
 * reduce-scatter / all-gather inside each domain, and between domains log
 * latency with a full-bandwidth pipe.  For a group spread over whole domains.
 */
#include <math.h>

#include "coll_int.h"

static bool tree_applies(pp_coll_kind kind, const pp_coll_net *net)
{
	(void)kind;
	return net->nd < net->n && net->n % net->nd == 0;
}

static double tree_time(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	(void)kind;
	int nodes = net->n / net->nd;
	return ppi_coll_intra_pair(net, V) +
	       2.0 * log2((double)nodes) * net->system->nic_latency_s +
	       2.0 * V / (net->nd * net->bw_s_bytes_per_s);
}

const pp_coll_algo ppi_coll_tree = {
    "tree", PPI_COLL_KIND(PP_COLL_ALLREDUCE), false, tree_applies, tree_time, PP_NCCL_TREE,
};
