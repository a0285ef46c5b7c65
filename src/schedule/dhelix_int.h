/*
 * Private to src/schedule/dhelix_*.c: what the four parts of DHelix
 * (seed 002; public API include/paraplan/dhelix.h, docs/dhelix.md) share.
 *
 *   dhelix_overlap.c  the overlap model (Eq. 1): the platforms' tables
 *                     (data/overlap), their JSON reader, the table a system
 *                     uses at its TP degree
 *   dhelix_layer.c    a layer's forward and backward operator sequences and
 *                     their candidate orders (moved weight gradients, the
 *                     MoE router's placements), and their validity
 *   dhelix_pair.c     the time of one operator pair (Eq. 1, with Table 7's
 *                     launch interval) and the pairing DP (Eq. 2): of two
 *                     given orders, and over every candidate order of a
 *                     layer at once (thread-local scratch, no allocation)
 *   dhelix_stage.c    what pairing saves on a stage: the memos (by plan in
 *                     the workspace, by content per thread) and the upper
 *                     bounds the search's floor reads
 */
#ifndef PPI_DHELIX_INT_H
#define PPI_DHELIX_INT_H

#include <stdbool.h>

#include "paraplan/dhelix.h"

/* Whether kind k is a collective (intra- or cross-node). */
static inline bool ppi_dh_is_comm(pp_dh_kind k)
{
	return k == PP_DH_COMM_INTRA || k == PP_DH_COMM_CROSS;
}

/* The forward's movable block (the MoE router's gate and top-k, as
 * pp_dh_layer_build marks them): *r its first segment, *n (1..2) segments,
 * and *m the fixed segments between its dep and *r; *r < 0 (and *n = *m = 0)
 * when f has none.  Reads f only. */
void ppi_dh_fwd_block(const pp_dh_seq *f, int *r, int *n, int *m);

/* The best SI block time of layer l under table o over every candidate
 * order (every forward order of the router's placements with every
 * backward order of pp_dh_candidate), segments of up to K operators
 * (1..PP_DH_SEG_OPS).  *best: the winning backward candidate's index.
 * fwd_ops, when not NULL (room for l->fwd.n): the default index of each
 * operator of the winning forward order, or fwd_ops[0] = -1 when it was not
 * recovered (the caller then tries the forward orders one by one).  A
 * forward DAG that does not fit the scratch is paired in its default order
 * only.  Uses thread-local scratch; allocates nothing. */
double ppi_dh_best_order(const pp_dh_overlap *o, const pp_dh_layer *l, int K, int *best,
                         int *fwd_ops);

#endif
