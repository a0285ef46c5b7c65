/*
 * Private to src/calib/nccl*.c: nccl-tests logs.
 *
 *   nccl_parse.c  the operations' names, the text table's and the -J JSON
 *                 file's readers (pp_nccl_parse, pp_nccl_load), with the
 *                 bounds on ranks, sizes, times and bandwidths
 *   nccl.c        paraplan's model of a log, the fit of each tier, and the
 *                 fitted system written (pp_nccl_fit_logs,
 *                 pp_nccl_system_json)
 */
#ifndef PPI_CALIB_NCCL_INT_H
#define PPI_CALIB_NCCL_INT_H

/* The part of `path` after its last '/' (borrowed from `path`). */
const char *ppi_nccl_base_name(const char *path);

#endif
