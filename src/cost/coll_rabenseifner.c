/*
 * Rabenseifner's all-reduce (seed 004 §2.3.4, §2.4): a reduce-scatter by
 * recursive halving, then an all-gather by recursive doubling:
 * 2 log2(n) alpha + 2 (n-1)/n V / beta on one tier; on two, twice the
 * recursive-doubling gather of coll_rd.c.
 *
 * Broadcast and reduce of long messages take the same two halves in MPICH
 * (Thakur, Rabenseifner and Gropp, IJHPCA 19(1), 2005, §3.1 and §3.4: van de
 * Geijn's scatter + all-gather broadcast; Rabenseifner's reduce-scatter +
 * gather reduce): the same seconds as the all-reduce.
 *
 * Not a default candidate (pp_system.coll_recursive): NCCL has no such
 * algorithm; MPI libraries run it (coll_rd.c).
 */
#include "coll_int.h"

static bool rab_applies(pp_coll_kind kind, const pp_coll_net *net)
{
	(void)kind;
	return ppi_coll_log2_exact(net->n) > 0 && ppi_coll_log2_exact(net->nd) >= 0;
}

static double rab_time(pp_coll_kind kind, double V, const pp_coll_net *net)
{
	(void)kind;
	return 2 * ppi_coll_rd_gather_s(net, V);
}

const pp_coll_algo ppi_coll_rabenseifner = {
    "rabenseifner",
    PPI_COLL_KIND(PP_COLL_ALLREDUCE) | PPI_COLL_KIND(PP_COLL_BROADCAST) |
        PPI_COLL_KIND(PP_COLL_REDUCE),
    true,
    rab_applies,
    rab_time,
    PP_NCCL_NONE,
};
