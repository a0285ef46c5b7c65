/*
 * NVLink SHARP (seed 004 §3.1): the all-reduce reduced in the NVSwitch, at
 * nvls_gain times the ring's bus bandwidth, two hops of latency.  For a
 * group of more than two GPUs inside one domain of a system with NVLS.
 */
#include "coll_int.h"

static bool nvls_applies(pp_coll_kind kind, const pp_coll_net *net)
{
	(void)kind;
	const pp_system *s = net->system;
	return s->nvls && s->nvls_gain > 0 && net->nd == net->n && net->n > 2;
}

static double nvls_time(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	(void)kind;
	const pp_system *s = net->system;
	int n = net->n;
	return 2 * s->nvlink_latency_s +
	       2.0 * (n - 1) / n * V / (net->bw_f_bytes_per_s * s->nvls_gain);
}

const pp_coll_algo ppi_coll_nvls = {
    "nvls", PPI_COLL_KIND(PP_COLL_ALLREDUCE), false, nvls_applies, nvls_time,
};
