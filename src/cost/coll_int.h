/*
 * Private to src/cost/: what the collective algorithms (coll_*.c) share.
 */
#ifndef PPI_COLL_INT_H
#define PPI_COLL_INT_H

#include "paraplan/cost.h"

/* The bit of pp_coll_algo.kinds for `kind`. */
#define PPI_COLL_KIND(kind) (1u << (unsigned)(kind))

/* Reduce-scatter plus all-gather of V inside a domain of nd GPUs, as a ring
 * on NVLink (the first and last phase of the two-tier all-reduces). */
double ppi_coll_intra_pair(const pp_coll_net *net, double V);

/* Recursive doubling's all-gather (halving's reduce-scatter) of V on a
 * group whose n and nd are powers of two (coll_rd.c); Rabenseifner's
 * all-reduce is two of it. */
double ppi_coll_rd_gather_s(const pp_coll_net *net, double V);

/* The ring's all-gather or reduce-scatter of V (coll_ring.c): NVLS's and
 * PAT's all-gather are timed from it by NCCL's ratios. */
double ppi_coll_ring_half(const pp_coll_net *net, double V);

/* log2 of n when n is a power of two; -1 otherwise. */
int ppi_coll_log2_exact(int n);

#endif
