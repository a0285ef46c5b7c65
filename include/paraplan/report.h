/*
 * paraplan — report: renders results for people (text) and programs (JSON).
 * Only reads what it is given; computes nothing new.
 */
#ifndef PARAPLAN_REPORT_H
#define PARAPLAN_REPORT_H

#include <stdio.h>

#include "estimate.h"
#include "sweep.h"
#include "search.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a report returns besides 0 and -1 (a write error): the JSON reports
 * build their document in memory first, and this says that failed (what was
 * written of it, if anything, is not a whole document). */
#define PP_REPORT_ENOMEM (-2)

/* Human-readable estimate (GiB, labelled).  Returns 0, or -1 on a write error. */
int pp_report_text(const pp_estimate *e, FILE *out);
/* JSON estimate; every quantity carries its unit in its name.  0, -1 or
 * PP_REPORT_ENOMEM (as every JSON report). */
int pp_report_json(const pp_estimate *e, FILE *out);

/* The goodput block of an estimate whose goodput was computed
 * (pp_estimate_goodput), as in the text report.  0 or -1. */
int pp_report_goodput_text(const pp_estimate *e, FILE *out);

/* A sweep as a text table (GiB, labelled), CSV (SI units, one header line) or
 * JSON (units in the names).  0, or -1 on a write error. */
int pp_report_sweep_text(const pp_sweep *sw, FILE *out);
int pp_report_sweep_csv(const pp_sweep *sw, FILE *out);
int pp_report_sweep_json(const pp_sweep *sw, FILE *out);

/* A finished search: the top plans as a table, the Pareto front, why the
 * winner wins, and the search statistics.  0 or -1. */
int pp_report_search_text(const pp_search *s, FILE *out);
/* {"plans": [estimate objects], "pareto": [...], "stats": {"space", "evaluated",
 *  "pruned", "infeasible", "rejected", "wall_s"}, "explanation": {...}}.  0 or -1. */
int pp_report_search_json(const pp_search *s, FILE *out);

/*
 * The simulated iteration of `e` (the events of `sim` after
 * pp_estimate_simulate) as a Chrome / Perfetto trace (JSON object format,
 * loads in ui.perfetto.dev and chrome://tracing): one process per pipeline
 * rank, one thread per stream (compute, send-fwd, send-bwd, dp), complete
 * ("X") events with ts/dur in microseconds; args carry the phase, micro-batch,
 * chunk, FLOPs and bytes.  Idle time on a compute stream is an explicit
 * "idle" event, so each rank's compute events tile [0, iteration].  0 or -1.
 */
int pp_report_trace(const pp_estimate *e, const pp_sim *sim, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
