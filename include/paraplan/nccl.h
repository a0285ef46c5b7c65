/*
 * paraplan — calibration from nccl-tests: read the output of all_reduce_perf,
 * all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf (and
 * broadcast_perf / reduce_perf), as the text table or the -J JSON file, and fit
 * the latency and bandwidth efficiency of each network tier with paraplan's own
 * collective model (pp_coll_time), so the fitted system reproduces the log.
 *
 *     pp_nccl_log log;  pp_nccl_load("all_reduce.txt", &log, &err);
 *     pp_nccl_fit fit;  pp_nccl_fit_logs(&system, &log, 1, &fit, &err);
 *     char *json;       pp_nccl_system_json("dgx-h100", &fit, &log, 1, &json, &err);
 *     pp_nccl_log_free(&log);  free(json);
 *
 * Tiers: a log whose ranks all share one NVLink domain (one node, or one
 * multi-node NVLink domain) fits the system's nvlink_latency_s and
 * framework.nvlink_eff; a log across domains fits nic_latency_s and
 * framework.nic_eff, with the NVLink tier held at its (fitted) values.  See
 * docs/calibration.md.  The library never prints.
 */
#ifndef PARAPLAN_NCCL_H
#define PARAPLAN_NCCL_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pp_nccl_op {
	PP_NCCL_UNKNOWN = 0,
	PP_NCCL_ALL_REDUCE,
	PP_NCCL_ALL_GATHER,
	PP_NCCL_REDUCE_SCATTER,
	PP_NCCL_ALLTOALL,
	PP_NCCL_SENDRECV,
	PP_NCCL_BROADCAST,
	PP_NCCL_REDUCE,
} pp_nccl_op;

/* "all_reduce", "all_gather", ... ("?" for unknown). */
const char *pp_nccl_op_name(pp_nccl_op op);

/* nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): busbw = algbw x
 * factor; 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and
 * alltoall, 1 for sendrecv, broadcast and reduce. */
double pp_nccl_busbw_factor(pp_nccl_op op, int ranks);

/* One line of the table: the out-of-place time (the in-place one when the
 * out-of-place column is empty) and the bandwidths as logged. */
typedef struct pp_nccl_row {
	double bytes;  /* the "size" column */
	double time_s; /* seconds per operation */
	double algbw;  /* bytes/s, as logged (GB/s x 1e9) */
	double busbw;  /* bytes/s, as logged */
} pp_nccl_row;

#define PP_NCCL_DEVICE_MAX 96

typedef struct pp_nccl_log {
	char source[PP_ERROR_SOURCE_MAX]; /* the file name (or the caller's source) */
	pp_nccl_op op;
	int ranks;    /* GPUs in the test */
	int nodes;    /* distinct hosts of the "Rank ... on HOST" lines (1 without them) */
	int per_node; /* ranks / nodes */
	char device[PP_NCCL_DEVICE_MAX]; /* rank 0's device name, "" if not given */
	bool json;                       /* read from a -J JSON file */
	size_t nrows;                    /* rows with a positive size and time */
	pp_nccl_row *rows;               /* [nrows], ascending as logged */
} pp_nccl_log;

/*
 * Read one test's output from memory.  The text form is recognised by its
 * table (header "size count type [redop root] time algbw busbw #wrong ...");
 * lines may carry mpirun --tag-output prefixes ("[1,0]<stdout>:") and NCCL
 * INFO noise.  The rank count and hosts come from the "#  Rank N ... on HOST
 * device ..." lines (else nThread x nGpus on one host); the collective from
 * "# Collective test starting: X_perf", a "X_perf" command line in the text,
 * or `source`'s file name.  The JSON form is nccl-tests' -J output (config,
 * devices, results[].out_of_place / in_place).  Errors carry line:column
 * where there is one.  *out is freed by pp_nccl_log_free.
 */
pp_status pp_nccl_parse(const char *text, size_t len, const char *source, pp_nccl_log *out,
                        pp_error *err);
pp_status pp_nccl_load(const char *path, pp_nccl_log *out, pp_error *err);
void pp_nccl_log_free(pp_nccl_log *log);

/* The layout paraplan's model sees for the log on system `s`: its ranks, and
 * how many of them share an NVLink domain. */
void pp_nccl_layout(const pp_system *s, const pp_nccl_log *log, int *size, int *per_domain);
/* True when the log runs inside one NVLink domain (it calibrates NVLink). */
bool pp_nccl_intra(const pp_system *s, const pp_nccl_log *log);

/* Seconds paraplan's model (pp_coll_time) gives the log's collective of
 * `bytes` (the table's size) on system `s`. */
double pp_nccl_model_time(const pp_system *s, const pp_nccl_log *log, double bytes);

/* How well a system reproduces one log. */
typedef struct pp_nccl_check {
	double large_bytes;   /* the largest size logged */
	double busbw_log;     /* its bus bandwidth, bytes/s (from the logged time) */
	double busbw_model;   /* the model's, same convention */
	double small_bytes;   /* the smallest size logged */
	double small_log_s;   /* its time */
	double small_model_s; /* the model's */
	double rms_log_error; /* root mean square of ln(model / logged time) over all rows */
} pp_nccl_check;

void pp_nccl_check_log(const pp_system *s, const pp_nccl_log *log, pp_nccl_check *out);

/* The fit's result. */
typedef struct pp_nccl_fit {
	pp_system system; /* the start system with the fitted values */
	int intra_logs, inter_logs;
	/* The latency or the efficiency of the tier ended at a bound of its range:
	 * the model cannot reproduce the log with values the hardware allows. */
	bool intra_at_bound, inter_at_bound;
	double intra_rms, inter_rms; /* rms ln(model/logged) over the tier's rows */
} pp_nccl_fit;

/*
 * Fit the logs with the model pp_coll_time on each log's layout, by
 * alternating least squares: the efficiency (bandwidth) on the squared error
 * in time, where the bandwidth-bound sizes weigh most; the latency on the
 * squared error in ln(time) over the latency-bound sizes (logged time at most
 * twice the log's shortest); until neither moves.  The latency on a log scale within the readers' range
 * (1e-8 s to 1 ms for NVLink, 10 ms for the NIC), the efficiency within
 * [0.01, 1] (the registry's valid range).  Tiers without a log keep the start
 * system's values.  PP_EINPUT when a log has one rank or no rows, or more
 * ranks on a host than the system has GPUs per node.
 */
pp_status pp_nccl_fit_logs(const pp_system *start, const pp_nccl_log *logs, size_t nlogs,
                           pp_nccl_fit *out, pp_error *err);

/*
 * The calibrated system as paraplan's system JSON: the start system's file
 * (`start_ref`, a preset name or a path) with name "<name>-nccl", no aliases,
 * and the fitted latency and efficiency of each fitted tier, each with a
 * "sources" note naming the logs and the fit's figures.  The text is checked
 * by reading it back (pp_system_from_json).  *json is malloc'ed; free it.
 */
pp_status pp_nccl_system_json(const char *start_ref, const pp_nccl_fit *fit,
                              const pp_nccl_log *logs, size_t nlogs, char **json, pp_error *err);

/*
 * calibrate --nccl-tests in one call: the system `start_ref` names (a preset
 * or a file, pp_system_resolve), the logs `paths[0..n)` read (pp_nccl_load),
 * its tiers fitted to them (pp_nccl_fit_logs) and the calibrated system as
 * JSON (pp_nccl_system_json).  *out is caller-owned; what it points to (the
 * logs, the text) is freed by pp_nccl_calibration_free.  On failure (the
 * first failing step's status) *out holds nothing to free.
 */
typedef struct pp_nccl_calibration {
	pp_nccl_fit fit;
	pp_nccl_log *logs; /* [nlogs], read in the order of `paths` */
	size_t nlogs;
	char *json; /* the calibrated system */
} pp_nccl_calibration;
pp_status pp_nccl_calibrate(const char *start_ref, const char *const *paths, size_t n,
                            pp_nccl_calibration *out, pp_error *err);
void pp_nccl_calibration_free(pp_nccl_calibration *c);

#ifdef __cplusplus
}
#endif
#endif
