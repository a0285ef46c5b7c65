/*
 * NVLink SHARP (seed 004 §3.1): the all-reduce reduced in the NVSwitch, at
 * nvls_gain times the ring's bus bandwidth, two hops of latency.  For a
 * group of more than two GPUs inside one domain of a system with NVLS.
 *
 * All-gather and reduce-scatter by NVLS (a candidate for them in NCCL's
 * tuning model, src/graph/tuning.cc, ncclTopoTuneModel): one domain only (across nodes NCCL
 * needs CollNet for them, off by default), Simple only.  NCCL gives NVLS the
 * all-reduce bus bandwidth 2 x nvlsEfficiency x B_nvls per channel ("AllReduce
 * pipelines two operations") and all-gather / reduce-scatter (ppn-1)/ppn x
 * nvlsEfficiency x B_nvls, not converted to algorithm bandwidth; the ring
 * all-gather's algorithm bandwidth is B_ring x n/(n-1).  With nvls_gain =
 * the all-reduce's NVLS over ring ratio, the all-gather's bandwidth is then
 * (nvls_gain / 2) (n-1)/n x the ring's bus bandwidth, and the V it moves is
 * the whole buffer.  Its latency is NCCL's NVLS latency (hwLat NVLink NVLS
 * Simple, 25 us) over NCCL's ring Simple latency for the same call, times
 * the ring's latency here (the system's calibrated alpha keeps the scale).
 */
#include "coll_int.h"

static bool nvls_applies(pp_coll_kind kind, const pp_coll_net *net)
{
	(void)kind;
	const pp_system *s = net->system;
	return s->nvls && s->nvls_gain > 0 && net->nd == net->n && net->n > 2;
}

static double nvls_gather_s(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	const pp_system *s = net->system;
	int n = net->n;
	bool nvlink = s->nvlink_bytes_per_s > 0;
	double ring_us =
	    pp_coll_nccl_lat_us(PP_NCCL_RING, PP_PROTO_SIMPLE, kind, n, net->nd, nvlink);
	double nvls_us =
	    pp_coll_nccl_lat_us(PP_NCCL_NVLS, PP_PROTO_SIMPLE, kind, n, net->nd, nvlink);
	double lat = ppi_coll_ring_half(net, 0) * (nvls_us / ring_us);
	double bw = net->bw_f_bytes_per_s * (s->nvls_gain / 2) * (n - 1) / n;
	return lat + V / bw;
}

static double nvls_time(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	const pp_system *s = net->system;
	int n = net->n;
	if (kind == PP_COLL_ALLGATHER || kind == PP_COLL_REDUCESCATTER)
		return nvls_gather_s(kind, V, net);
	return 2 * s->nvlink_latency_s +
	       2.0 * (n - 1) / n * V / (net->bw_f_bytes_per_s * s->nvls_gain);
}

const pp_coll_algo ppi_coll_nvls = {
    "nvls",
    PPI_COLL_KIND(PP_COLL_ALLREDUCE) | PPI_COLL_KIND(PP_COLL_ALLGATHER) |
        PPI_COLL_KIND(PP_COLL_REDUCESCATTER),
    false,
    nvls_applies,
    nvls_time,
    PP_NCCL_NVLS,
};
