/*
 * paraplan — report: renders results for people (text) and programs (JSON).
 * Only reads what it is given; computes nothing new.
 */
#ifndef PARAPLAN_REPORT_H
#define PARAPLAN_REPORT_H

#include <stdio.h>

#include "estimate.h"
#include "netmap.h"
#include "output.h"
#include "sweep.h"
#include "study.h"
#include "search.h"
#include "traffic.h"

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

/* DHelix's pairing plan (seed 002, Eq. 2) as text, the table of
 * `estimate --pairing on`: for the first layer of each kind (dense, MoE) of
 * the model, its forward and backward sequences paired again under the
 * overlap table of e->system at e->plan.tp (pp_dh_overlap_of_system), each
 * step's operators and time.  Allocates its scratch (pp_work, a layer, a
 * result) and frees it.  PP_OK (a write error is left on ferror(out) for the
 * caller), PP_ENOMEM, or the error of the table
 * or of a layer's build (PP_EINPUT: no overlap table for the GPU, 2D TP),
 * with `err` filled; what was written before an error stays written. */
pp_status pp_report_pairing_text(const pp_estimate *e, FILE *out, pp_error *err);

/* The goodput block of an estimate whose goodput was computed
 * (pp_estimate_goodput), as in the text report.  0 or -1. */
int pp_report_goodput_text(const pp_estimate *e, FILE *out);

/* `paraplan list params`: the parameter registry (params.h), one line each
 * under a header line (name, kind, unit, valid range, fitted range, start,
 * meaning).  `paraplan list formats`: the output formats (format.h), one line
 * each: the name, what it is for and the results it renders.  0, or -1 on a
 * write error. */
int pp_report_params_text(FILE *out);
int pp_report_formats_text(FILE *out);

/* A sweep as a text table (GiB, labelled), CSV (SI units, one header line) or
 * JSON (units in the names).  0, or -1 on a write error. */
int pp_report_sweep_text(const pp_sweep *sw, FILE *out);
int pp_report_sweep_csv(const pp_sweep *sw, FILE *out);
int pp_report_sweep_json(const pp_sweep *sw, FILE *out);
/* A hardware study's rows (in point order) as a table, CSV (one header line,
 * SI units), JSON ("study": the inputs, "rows") and a self-contained HTML
 * page: per model, heat maps of time to train over two dimensions of the
 * grid and lines over one, each point with its winning plan (report_study.c).
 * 0 or -1 (write error; JSON: PP_REPORT_ENOMEM). */
int pp_report_study_text(const pp_study_spec *sp, const pp_study_row *rows, size_t n, FILE *out);
int pp_report_study_csv(const pp_study_spec *sp, const pp_study_row *rows, size_t n, FILE *out);
int pp_report_study_json(const pp_study_spec *sp, const pp_study_row *rows, size_t n, FILE *out);
int pp_report_study_html(const pp_study_spec *sp, const pp_study_row *rows, size_t n, FILE *out);
/* One of them by name: "text" (or NULL), "csv", "json", "html". */
int pp_report_study(const pp_study_spec *sp, const pp_study_row *rows, size_t n, const char *format,
                    FILE *out);

/* A finished search: the top plans as a table, the Pareto front, why the
 * winner wins, and the search statistics.  0 or -1. */
int pp_report_search_text(const pp_search *s, FILE *out);
/* {"plans": [estimate objects], "pareto": [...], "stats": {"space", "evaluated",
 *  "pruned", "infeasible", "rejected", "wall_s"}, "explanation": {...}}; with
 *  `mapping` (search --bandwidth; NULL: none) each plan's "mapping" and the
 *  re-ranking, "mapping": {...}.  0 or -1. */
int pp_report_search_json(const pp_search *s, const pp_netmap_ranking *mapping, FILE *out);
/* search --bandwidth: the K plans re-ranked by their annealed mappings'
 * time, a row each with the search's rank, the closed form, the identity and
 * the annealed mapping on the matrix and the gain.  0 or -1. */
int pp_report_search_mapping_text(const pp_search *s, const pp_netmap_ranking *mapping, FILE *out);

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

/* ------------------------------------------------------ charts and HTML */

/* The charts of the HTML report, each also a standalone SVG. */
typedef enum pp_chart {
	PP_CHART_MEMORY = 0,    /* memory per stage, stacked by kind, against HBM */
	PP_CHART_ITERATION = 1, /* the closed form's breakdown of one iteration */
	PP_CHART_GANTT = 2,     /* the simulated iteration, a row per pipeline rank */
	PP_CHART_TRAFFIC = 3,   /* the GPU x GPU traffic heat map */
	PP_CHART_PARETO = 4,    /* a search's Pareto front, time vs memory, and top plans */
	PP_CHART_SCALING = 5,   /* a sweep's speedup against linear */
	PP_CHART_COST = 6,      /* a sweep's days and rental cost for the token budget */
} pp_chart;
#define PP_NCHARTS 7

/*
 * What a report draws from; every pointer may be NULL (its charts are left
 * out), all borrowed.  `stages`: pp_memory_stage of each of estimate->nstages
 * stages (NULL: the stage totals only); `sim`: the simulator after
 * pp_estimate_simulate(estimate) (the Gantt chart); `traffic`: the
 * estimate's traffic (the heat map); `search`: a finished search (its Pareto
 * front and top plans); `sweep`: a finished sweep; `title`: the page's.
 */
typedef struct pp_report_inputs {
	const char *title;
	const pp_estimate *estimate;
	const pp_stage_memory *stages;
	const pp_sim *sim;
	const pp_traffic *traffic;
	const pp_search *search;
	const pp_sweep *sweep;
} pp_report_inputs;

/* "memory", "iteration", "gantt", "traffic", "pareto", "scaling", "cost". */
const char *pp_chart_name(pp_chart c);
/* Whether `in` holds what chart `c` needs. */
bool pp_report_chart_available(const pp_report_inputs *in, pp_chart c);
/*
 * Chart `c` as a standalone SVG document.  Every element carries
 * data-chart="NAME" and a class saying what it is (memory-bar: a stage;
 * gantt-row: a pipeline rank; gantt-task: an F, B, W or SI task;
 * traffic-cell: a GPU (or GPU bin) pair that talks; pareto-point: a plan of
 * the front; pareto-top: a top plan; scaling-point, cost-point: a sweep point
 * that resolved).  0, or -1 when `c` is not available or on a write error.
 */
int pp_report_svg(const pp_report_inputs *in, pp_chart c, FILE *out);
/*
 * One self-contained HTML page (inline SVG and CSS, one inline script and no
 * other resource): a summary, every available chart, the top plans of a
 * search and the rows of a sweep.  The script counts each chart's elements
 * by class into <pre id="selftest"> ("CHART CLASS COUNT" lines) when the page
 * loads, for a browser test.  0 or -1.
 */
int pp_report_html(const pp_report_inputs *in, FILE *out);

/*
 * What the charts of a verb draw from, gathered (caller-owned; filled by
 * pp_report_charts_gather, emptied by pp_report_charts_release).  `in`
 * points into the rest and at the caller's borrowed inputs.
 */
typedef struct pp_report_charts {
	pp_report_inputs in;
	char title[256];
	/* non-empty: the simulator refused the plan, so the Gantt chart is left
	 * out; its reason, for a note */
	char gantt_refused[PP_ERROR_TEXT_MAX];
	pp_stage_memory *stages; /* owned */
	pp_estimate *copy;       /* owned: the estimate simulated here */
	pp_sim *sim;             /* owned: the simulator of `copy` */
	pp_traffic *traffic;     /* owned: the traffic built here */
} pp_report_charts;
/*
 * The charts' inputs of verb `verb` ("estimate", "search", "sweep"; the
 * title names it): an estimate `e` (a search's winner; NULL for none) with
 * its simulator `sim` and `traffic` when the verb has them, a finished
 * `search`, a `sweep` (each may be NULL; all borrowed, and must outlive
 * `c`).  An estimate that fits and was not simulated is simulated on a copy
 * (the verb's own report stays as it was), best effort: a refusal leaves
 * gantt_refused set and is no failure.  Its traffic is built when not given
 * (pp_traffic_of_estimate).  PP_OK, or the first step's error; either way
 * `c` holds what was gathered and is emptied by pp_report_charts_release.
 */
pp_status pp_report_charts_gather(pp_report_charts *c, const char *verb, const pp_estimate *e,
                                  const pp_sim *sim, const pp_traffic *traffic,
                                  const pp_search *search, const pp_sweep *sweep, pp_error *err);
void pp_report_charts_release(pp_report_charts *c);

/*
 * DIR/NAME.svg, the file of chart `c` in directory `dir` (given to `flag` of
 * `verb`), into `path` (`n` bytes).  PP_OK, or PP_EINPUT when it does not fit
 * ("VERB: FLAG DIR: path too long").
 */
pp_status pp_report_svg_path(const char *verb, const char *flag, const char *dir, pp_chart c,
                             char *path, size_t n, pp_error *err);
/*
 * Before any work: `dir` (given to `flag` of `verb`) is a directory (created,
 * with the missing folders above it, when it does not exist), and every
 * file it may receive (pp_report_svg_path of each chart, whichever charts the
 * result turns out to have) can be written (pp_output_check into `set`).
 * PP_OK or PP_EINPUT ("VERB: FLAG DIR: not a directory", "cannot create" and
 * the system's reason, the reason it cannot be read, or pp_output_check's
 * error).
 */
pp_status pp_report_svg_dir_check(pp_output_set *set, const char *verb, const char *flag,
                                  const char *dir, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
