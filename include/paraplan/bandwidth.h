/*
 * paraplan — bandwidth matrices: measured (Pipette JSON, mpiGraph) or
 * synthetic bandwidths between nodes or GPUs (seed 001, Pipette, §IV).  Part
 * of place/: what a mapping is evaluated on; the mapping itself (Pipette's
 * latency model, the annealer) is netmap.h's, downstream of the estimate.
 *
 * A bandwidth matrix gives B(a, b), bytes/s from endpoint a to endpoint b,
 * for endpoints that are nodes (one MPI rank per node, as mpiGraph is run) or
 * GPUs.  Two GPUs on one node talk at the matrix's intra-node bandwidth
 * (NVLink) unless the matrix is per GPU.
 *
 * Formats read (pp_bandwidth_read picks by content):
 *   Pipette JSON   {"gpus": [names...], "bandwidth": [[...], ...]} — row i,
 *                  column j: i to j; a square matrix over the listed
 *                  endpoints; optional "unit": "B/s", "MB/s", "GB/s"
 *                  (default; 1e9 bytes/s) or "Gb/s"; optional
 *                  "gpus_per_endpoint" (1: a GPU matrix, the default; or
 *                  the system's GPUs per node: a node matrix; any other
 *                  grouping is refused).
 *   mpiGraph       LLNL mpiGraph's text output: the "Send" table, rows
 *                  "host:k to" then one value per column, MB/s with MB =
 *                  2^20 bytes (mpiGraph.c: MBsec = size * 1e6 / 1024^2);
 *                  one rank per node, so endpoints are nodes.
 * Both are bounded by what the file holds: the n x n matrix a header or the
 * row count announces is allocated only once the file has room for its
 * numbers; every link is 1 kB/s to 1e14 B/s (the diagonal may be 0).
 */
#ifndef PARAPLAN_BANDWIDTH_H
#define PARAPLAN_BANDWIDTH_H

#include <stddef.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_bandwidth {
	int n;                 /* endpoints */
	int gpus_per_endpoint; /* 1: a GPU matrix; else GPUs per node */
	double *bytes_per_s;   /* n x n, row-major: [a * n + b] from a to b (diagonal unused) */
} pp_bandwidth;

/* An n x n matrix with every link at `bytes_per_s`.  Freed by pp_bandwidth_free. */
pp_status pp_bandwidth_new(int n, int gpus_per_endpoint, double bytes_per_s, pp_bandwidth **out,
                           pp_error *err);
void pp_bandwidth_free(pp_bandwidth *bw);
/* Read a Pipette JSON or an mpiGraph output (see above); gpus_per_node is
 * the endpoint size for a node matrix (mpiGraph, or JSON without
 * gpus_per_endpoint... given as 1 means a GPU matrix). */
pp_status pp_bandwidth_read(const char *path, int gpus_per_node, pp_bandwidth **out, pp_error *err);
/* The same from text in memory (`source` names it in errors). */
pp_status pp_bandwidth_parse(const char *text, size_t len, const char *source, int gpus_per_node,
                             pp_bandwidth **out, pp_error *err);

/*
 * A synthetic node x node matrix with Pipette-like heterogeneity (seed 001
 * Fig. 3: pairs designed equal differ; Fig. 4: slow links about 2x slower):
 * B(a, b) = nominal x (1 - spread x u^2), u uniform in [0, 1) per unordered
 * pair (most links near nominal, a tail down to 1 - spread), times
 * (1 + asym x v), v uniform in [-1, 1) per direction; deterministic
 * SplitMix64 stream from `seed`.
 */
pp_status pp_bandwidth_synthetic(int nodes, int gpus_per_node, double nominal_bytes_per_s,
                                 double spread, double asym, unsigned long long seed,
                                 pp_bandwidth **out, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
