/*
 * Ring (seed 004 §2.3.5; seed 003 S2's two-tier form): NCCL's default, and
 * its pipelined ring for broadcast and reduce.  Across domains the ring's
 * inter-domain hops run on nd NICs in parallel.
 */
#include "coll_int.h"

/*
 * All-gather or reduce-scatter of a `bytes` buffer on n GPUs, nd per domain:
 * alpha_s (n/nd - 1) + alpha_f (n - n/nd) + (n-1)/n max(V / (nd beta_s),
 * V / beta_f).
 */
double ppi_coll_ring_half(const pp_coll_net *net, double V)
{
	const pp_system *s = net->system;
	int n = net->n, nd = net->nd;
	double bw_f = net->bw_f_bytes_per_s, bw_s = net->bw_s_bytes_per_s;
	if (n <= 1)
		return 0;
	if (nd >= n)
		return s->nvlink_latency_s * (n - 1) + (double)(n - 1) / n * V / bw_f;
	double nodes = (double)n / nd;
	double lat = s->nic_latency_s * (nodes - 1) + s->nvlink_latency_s * (n - nodes);
	double tf = V / bw_f, ts = V / (nd * bw_s);
	return lat + (double)(n - 1) / n * (tf > ts ? tf : ts);
}

/* Pipelined ring (NCCL's broadcast/reduce): every GPU receives (or
 * contributes) the whole buffer once; the ring's hops pay latency. */
static double ring_pipe(const pp_coll_net *net, double V)
{
	const pp_system *s = net->system;
	int n = net->n, nd = net->nd;
	double bw_f = net->bw_f_bytes_per_s, bw_s = net->bw_s_bytes_per_s;
	if (nd >= n)
		return s->nvlink_latency_s * (n - 1) + V / bw_f;
	double nodes = (double)n / nd;
	double lat = s->nic_latency_s * (nodes - 1) + s->nvlink_latency_s * (n - nodes);
	double tf = V / bw_f, ts = V / (nd * bw_s);
	return lat + (tf > ts ? tf : ts);
}

static double ring_time(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	switch (kind) {
	case PP_COLL_ALLREDUCE:
		return 2 * ppi_coll_ring_half(net, V); /* reduce-scatter + all-gather */
	case PP_COLL_BROADCAST:
	case PP_COLL_REDUCE: return ring_pipe(net, V);
	case PP_COLL_ALLGATHER:
	case PP_COLL_REDUCESCATTER:
	default: return ppi_coll_ring_half(net, V);
	}
}

const pp_coll_algo ppi_coll_ring = {
    "ring",
    PPI_COLL_KIND(PP_COLL_ALLREDUCE) | PPI_COLL_KIND(PP_COLL_ALLGATHER) |
        PPI_COLL_KIND(PP_COLL_REDUCESCATTER) | PPI_COLL_KIND(PP_COLL_BROADCAST) |
        PPI_COLL_KIND(PP_COLL_REDUCE),
    false,
    NULL,
    ring_time,
    PP_NCCL_RING,
};
