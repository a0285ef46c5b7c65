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

/* Human-readable estimate (GiB, labelled).  Returns 0, or -1 on a write error. */
int pp_report_text(const pp_estimate *e, FILE *out);
/* JSON estimate; every quantity carries its unit in its name.  0 or -1. */
int pp_report_json(const pp_estimate *e, FILE *out);

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

#ifdef __cplusplus
}
#endif
#endif
