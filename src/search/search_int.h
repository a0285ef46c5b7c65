/*
 * The search's internals that the unit tests check (prefix ppi_).
 */
#ifndef PPI_SEARCH_INT_H
#define PPI_SEARCH_INT_H

#include "paraplan/search.h"

/*
 * The micro-batch sizes a sub-space searches: the divisors of per_replica (a
 * replica's sequences per iteration) in increasing order, those of `mbs` only
 * when it lists values, at most PP_SEARCH_MAX_VALUES, into out; returns how
 * many.  gbs_div holds the global batch's divisors ascending (ppi_divisors),
 * of which per_replica is one: the cost is O(the global batch's divisors),
 * independent of per_replica and so of the micro-batch count (issue 21; it
 * was a loop over 1..per_replica, 22 s of a 1M-GPU search at gbs 536,870,912).
 */
int ppi_search_mbs_values(const int *gbs_div, int ngbs_div, long long per_replica,
                          const pp_search_dim *mbs, int *out);

#endif
