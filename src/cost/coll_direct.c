/*
 * Direct sends (seed 004 §2.1-2.2): all-to-all as every GPU posting its
 * sends to every peer at once, and the point-to-point transfer of a
 * pipeline or CP ring.
 */
#include <math.h>

#include "coll_int.h"

static double direct_time(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	const pp_system *s = net->system;
	int n = net->n, nd = net->nd;
	double bw_f = net->bw_f_bytes_per_s, bw_s = net->bw_s_bytes_per_s;
	if (kind == PP_COLL_P2P) {
		/* Neighbours in a ring or pipeline: the slowest hop sets the pace, and
		 * some hop leaves the domain unless the whole group is inside it. */
		if (nd >= n)
			return s->nvlink_latency_s + V / bw_f;
		return s->nic_latency_s + V / bw_s;
	}
	/* All-to-all: each GPU keeps 1/n, sends (nd-1)/n over NVLink and
	 * (n-nd)/n over its NIC share. */
	double tf = V * (nd - 1) / n / bw_f, ts = V * (n - nd) / n / bw_s;
	/* Sends are posted at once; latency grows with the peers' fan-out. */
	double alpha = nd < n ? s->nic_latency_s : s->nvlink_latency_s;
	return alpha * log2((double)n) + (tf > ts ? tf : ts);
}

const pp_coll_algo ppi_coll_direct = {
    "direct",    PPI_COLL_KIND(PP_COLL_ALLTOALL) | PPI_COLL_KIND(PP_COLL_P2P),
    false,       NULL,
    direct_time, PP_NCCL_NONE,
};

double pp_coll_dispatch_time(const pp_system *s, const pp_layout *l, double nic_bytes,
                             double nvl_bytes, const pp_coll_algo **algo_out)
{
	if (algo_out)
		*algo_out = NULL;
	if (l->size <= 1 || !(nic_bytes + nvl_bytes > 0))
		return 0;
	pp_coll_net net;
	pp_coll_net_init(&net, s, l);
	if (algo_out)
		*algo_out = &ppi_coll_direct;
	double tf = nvl_bytes / net.bw_f_bytes_per_s, ts = nic_bytes / net.bw_s_bytes_per_s;
	double alpha = net.nd < net.n ? s->nic_latency_s : s->nvlink_latency_s;
	return alpha * log2((double)net.n) + (tf > ts ? tf : ts);
}
