/*
 * The registry of collective algorithms: one line per algorithm, each
 * defined in src/cost/coll_<id>.c as `const pp_coll_algo ppi_coll_<id>`.
 * The order breaks ties (pp_coll_time: the first of equal times wins); it is
 * NCCL's order of preference that the model kept before it had a registry
 * (ring, then hierarchical, tree, NVLS when strictly faster, PAT).  Included by
 * src/cost/coll.c only.
 */
PPI_COLL_ALGO(ring)
PPI_COLL_ALGO(hier)
PPI_COLL_ALGO(tree)
PPI_COLL_ALGO(nvls)
PPI_COLL_ALGO(pat)
PPI_COLL_ALGO(direct)
PPI_COLL_ALGO(rd)
PPI_COLL_ALGO(rabenseifner)
