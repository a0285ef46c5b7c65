/*
 * PAT, NCCL's "Parallel Aggregated Trees" (NCCL 2.23.4-1, commit 68b54236:
 * "Add PAT algorithms for Allgather and ReduceScatter.  Parallel Aggregated
 * Trees, variation of Bruck algorithm.  Logarithmic number of network steps
 * for small sizes at scale.  Only supports one rank per node at the
 * moment."): all-gather and reduce-scatter with a log2 latency across nodes.  NCCL runs it only at one GPU per node (ncclPatEnable: nNodes ==
 * nRanks) and with Simple only (src/graph/tuning.cc).  Its model there:
 * latency 8 + log2i(nNodes) interLat / 3.5 + 2.8 nRanks us (interLat the
 * tree's network latency at one GPU per node), bandwidth 0.75 x the bus
 * bandwidth, not converted to algorithm bandwidth (so V / (0.75 B) where
 * the ring's is (n-1)/n V / B).  Here: the ring's latency times NCCL's PAT
 * over ring Simple latency for the same call, and the ring's bandwidth term
 * times n/(n-1) / 0.75.
 */
#include "coll_int.h"

/* ncclTopoTuneModel: "if (a == NCCL_ALGO_PAT) busBw *= .75" */
#define PAT_BW 0.75

static bool pat_applies(pp_coll_kind kind, const pp_coll_net *net)
{
	(void)kind;
	return net->nd == 1 && net->n > 1;
}

static double pat_time(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	int n = net->n;
	bool nvlink = net->system->nvlink_bytes_per_s > 0;
	double ring_us = pp_coll_nccl_lat_us(PP_NCCL_RING, PP_PROTO_SIMPLE, kind, n, 1, nvlink);
	double pat_us = pp_coll_nccl_lat_us(PP_NCCL_PAT, PP_PROTO_SIMPLE, kind, n, 1, nvlink);
	double lat = ppi_coll_ring_half(net, 0);
	double band = ppi_coll_ring_half(net, V) - lat;
	return lat * (pat_us / ring_us) + band * n / (n - 1) / PAT_BW;
}

const pp_coll_algo ppi_coll_pat = {
    "pat",    PPI_COLL_KIND(PP_COLL_ALLGATHER) | PPI_COLL_KIND(PP_COLL_REDUCESCATTER),
    false,    pat_applies,
    pat_time, PP_NCCL_PAT,
};
