/*
 * Recursive doubling (seed 004 §2.3.3, §2.4): log2(n) rounds, each an
 * exchange with the partner at distance 1, 2, 4, ...  All-gather: the
 * message doubles each round, (n-1)/n of the buffer in all; reduce-scatter
 * (recursive halving) is its mirror; all-reduce exchanges the whole buffer
 * every round: log2(n) (alpha + V/beta).
 *
 * On two tiers (nd GPUs per domain, both powers of two) log2(n/nd) rounds
 * cross domains, on each GPU's NIC share in parallel, and log2(nd) stay
 * inside.  The gather runs the crossing rounds first (while the messages are
 * small), the scatter last: V (n - nd) / (n nd) bytes cross, V (nd - 1) / nd
 * stay inside.  For one domain it is the seed's single-tier form.
 *
 * Broadcast: the binomial tree (MPICH's short-message broadcast; Thakur,
 * Rabenseifner and Gropp, "Optimization of Collective Communication
 * Operations in MPICH", IJHPCA 19(1), 2005): the holders double each round,
 * every round sends the whole buffer, log2(n) (alpha + V/beta), the crossing
 * rounds on the NIC share.  Reduce (the binomial reduce) is its mirror.
 *
 * Not a default candidate (pp_system.coll_recursive): NCCL has no such
 * algorithm (NCCL_ALGO names Ring, Tree, CollNet, NVLS, NVLSTree and PAT);
 * MPI libraries (MPICH, Open MPI's tuned collectives) run it.
 */
#include "coll_int.h"

static bool rd_applies(pp_coll_kind kind, const pp_coll_net *net)
{
	(void)kind;
	return ppi_coll_log2_exact(net->n) > 0 && ppi_coll_log2_exact(net->nd) >= 0;
}

/* The all-gather's (and reduce-scatter's) seconds; also Rabenseifner's half. */
double ppi_coll_rd_gather_s(const pp_coll_net *net, double V)
{
	const pp_system *s = net->system;
	double n = net->n, nd = net->nd;
	double rounds_f = ppi_coll_log2_exact(net->nd),
	       rounds_s = ppi_coll_log2_exact(net->n / net->nd);
	return rounds_f * s->nvlink_latency_s + rounds_s * s->nic_latency_s +
	       V * (nd - 1) / nd / net->bw_f_bytes_per_s +
	       V * (n - nd) / (n * nd) / net->bw_s_bytes_per_s;
}

static double rd_time(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	if (kind == PP_COLL_ALLGATHER || kind == PP_COLL_REDUCESCATTER)
		return ppi_coll_rd_gather_s(net, V);
	/* all-reduce, broadcast, reduce: the whole buffer every round */
	const pp_system *s = net->system;
	double rounds_f = ppi_coll_log2_exact(net->nd),
	       rounds_s = ppi_coll_log2_exact(net->n / net->nd);
	return rounds_f * (s->nvlink_latency_s + V / net->bw_f_bytes_per_s) +
	       rounds_s * (s->nic_latency_s + V / net->bw_s_bytes_per_s);
}

const pp_coll_algo ppi_coll_rd = {
    "recursive-doubling",
    PPI_COLL_KIND(PP_COLL_ALLREDUCE) | PPI_COLL_KIND(PP_COLL_ALLGATHER) |
        PPI_COLL_KIND(PP_COLL_REDUCESCATTER) | PPI_COLL_KIND(PP_COLL_BROADCAST) |
        PPI_COLL_KIND(PP_COLL_REDUCE),
    true,
    rd_applies,
    rd_time,
    PP_NCCL_NONE,
};
