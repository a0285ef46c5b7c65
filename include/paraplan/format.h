/*
 * paraplan — output formats as a type table (owned by report).
 *
 * A result is described by a pp_result: what kind of result it is and
 * borrowed pointers to what a rendering reads.  A format is a
 * pp_format_type: a name, aliases and one render function per result kind
 * (NULL where the format has no rendering of that kind).  The formats are
 * listed once, in src/report/format_list.h; a new format is one file under
 * src/report/ (its pp_format_type) and one line there.  Renderers write to
 * the FILE* they are given and compute nothing new.
 */
#ifndef PARAPLAN_FORMAT_H
#define PARAPLAN_FORMAT_H

#include <stdio.h>

#include "calib.h"
#include "nccl.h"
#include "inverse.h"
#include "kernel.h"
#include "netmap.h"
#include "recipe.h"
#include "report.h"
#include "share.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a renderer returns besides 0, -1 (a write error) and PP_REPORT_ENOMEM:
 * the format has no rendering of the result's kind. */
#define PP_REPORT_EUNSUPPORTED (-3)

/* The kinds of result a verb hands to a format. */
typedef enum pp_result_kind {
	PP_RESULT_ESTIMATE = 0,    /* estimate: one plan */
	PP_RESULT_SEARCH,          /* search: the top plans, the front, the statistics */
	PP_RESULT_SEARCH_INVERSE,  /* search --deadline-days/--budget-usd: the answer, its search */
	PP_RESULT_SWEEP,           /* sweep: one row per point */
	PP_RESULT_SWEEP_INVERSE,   /* sweep with the answer to --deadline-days/--budget-usd */
	PP_RESULT_VALIDATE,        /* validate: throughput, predicted against measured */
	PP_RESULT_VALIDATE_MEMORY, /* validate --memory: predicted peak memory per GPU */
	PP_RESULT_VALIDATE_SEARCH, /* validate --search: the best plan against the authors' */
	PP_RESULT_CROSS_VALIDATION, /* calibrate --cross-validate source */
	PP_RESULT_FIT,              /* calibrate: one GPU's fit, or the closing line */
	PP_RESULT_PLACE,            /* place: a mapping and its gain */
	PP_RESULT_KERNEL,           /* kernel: the kernel model's parameters */
	PP_RESULT_TRAFFIC,          /* a GPU x GPU traffic matrix */
	PP_RESULT_MEMORY_FIT,       /* calibrate --memory: the allocator's fitted parameters */
	PP_RESULT_SHARE,            /* share: two jobs' slowdowns on shared links */
	PP_RESULT_RECIPE,           /* plan-run: a recipe's phases, totals and the reports */
	PP_RESULT_KINDS
} pp_result_kind;

/* "estimate", "search", "search with --deadline-days/--budget-usd", ... (for messages). */
const char *pp_result_kind_name(pp_result_kind k);

/* The answer of pp_inverse_pick over its candidates (borrowed); `axis` names
 * what the candidates vary ("gpus", "dp", "mbs"). */
typedef struct pp_inverse_report {
	const pp_inverse_query *query;
	const pp_inverse_candidate *candidates;
	size_t ncandidates;
	const pp_inverse_result *answer;
	const char *axis;
} pp_inverse_report;

/* A run record validate skipped, and why (the type cross-validation lists its
 * skips in). */
typedef struct pp_cv_skip pp_validate_skip;

/* What validate judged (all borrowed): `data` names the records' file;
 * `rows` the evaluated records, `skips` the others; `summary` of the rows
 * (pp_validate_summarise). */
typedef struct pp_validate_report {
	const char *data;
	const pp_validate_row *rows;
	size_t nrows;
	const pp_validate_skip *skips;
	size_t nskips;
	const pp_validate_summary *summary;
	/* validate --memory --steps FILE: measured training steps, each step's
	 * peaks predicted against measured (NULL: none), and the file. */
	const pp_memory_check *steps;
	const char *steps_path;
} pp_validate_report;

/* calibrate --cross-validate source: `result` of pp_calib_cross_validate over
 * `data`. */
typedef struct pp_cv_report {
	const char *data;
	const pp_cv_result *result;
} pp_cv_report;

/*
 * calibrate: one GPU's fit (gpu set), or, with gpu NULL, the closing line
 * over all GPUs (its leave-one-out only).  `fitted`: the system with the
 * fitted parameters (pp_fit_result_system); `systems`: the systems its
 * records ran on; `at_bound`: parameters the fit pushed to a bound of their
 * physical range, with the values it wanted.  `loo`: leave-one-out was run;
 * `loo_sum` is the sum of its absolute errors over `loo_n` records.
 */
typedef struct pp_fit_report {
	const char *gpu;
	size_t records;
	double mape_start, mape; /* fractions, before and after the fit */
	int sweeps;
	const char *const *systems;
	size_t nsystems;
	const pp_system *fitted;
	const pp_param *const *at_bound;
	const double *at_bound_v;
	size_t nat_bound;
	/* the NIC efficiencies fitted per system (pp_fit_networks) */
	const char *const *nets;
	const double *net_nic_eff;
	const bool *net_pinned;
	size_t nnets;
	bool loo;
	double loo_sum;
	size_t loo_n;
} pp_fit_report;

/* What a pp_fit_report of one fit points into (caller-owned, e.g. on the
 * stack): the fitted system, its systems' names, the parameters at a bound
 * and the values they wanted, at most PP_FIT_REPORT_MAX of each. */
#define PP_FIT_REPORT_MAX 16
typedef struct pp_fit_report_data {
	pp_system fitted;
	const char *systems[PP_FIT_REPORT_MAX];
	const pp_param *at_bound[PP_FIT_REPORT_MAX];
	double at_bound_v[PP_FIT_REPORT_MAX];
	const char *nets[PP_FIT_REPORT_MAX];
	double net_nic_eff[PP_FIT_REPORT_MAX];
	bool net_pinned[PP_FIT_REPORT_MAX];
} pp_fit_report_data;

/*
 * The report of fit `f` (converged) of GPU `gpu`: its records, MAPE before
 * and after, sweeps, systems, fitted system (pp_fit_result_system) and
 * parameters at a bound (pp_fit_at_bounds).  No
 * leave-one-out (loo false): a caller that runs pp_fit_leave_one_out sets
 * loo, loo_sum and loo_n.  The report borrows `gpu`, `d` and the names in
 * `f`: valid while all three are.
 */
pp_fit_report pp_fit_report_of(const pp_fit *f, const char *gpu, pp_fit_report_data *d);

/*
 * calibrate --nccl-tests: per log the collective, ranks, nodes, tier, bus
 * bandwidth and small-message time of the log against `fit`'s system, and
 * the RMS error; then each fitted tier's latency and efficiency, flagged
 * when it sits at its bound.  Text on `out`: 0, or -1 on a write error.
 */
int pp_report_nccl_text(const pp_nccl_fit *fit, const pp_nccl_log *logs, size_t n, FILE *out);

/*
 * calibrate --step-times: per run of `steps` the measured seconds, the
 * prediction at the neutral start and fitted (from `r`'s signed errors), and
 * the residual; then the MAPE before and after, the fitted values of the
 * parameters the runs react to, and a note when the runs are fewer than
 * those parameters.  Text on `out`: 0, or -1 on a write error.
 */
int pp_report_steps_fit_text(const pp_steps *steps, const pp_steps_fit *r, FILE *out);

/*
 * place: the mapping `f` (f[w] = GPU of worker w) of model `m` found by the
 * annealer (`anneal`, run with `seed`), Eq. 3-6 of the identity and of the
 * mapping (`identity`, `annealed`, pp_pipette_map_latency), the simulated
 * iterations of both (`sim_s`, 0 when not simulated), and where the
 * bandwidths came from (`bandwidth`: the file, or NULL: synthetic with seed
 * `synthetic_seed`).  `traffic`: the mapped placement's traffic, its totals
 * appended (NULL: none).
 */
typedef struct pp_place_report {
	const pp_pipette_model *m;
	const long long *f;
	const pp_anneal_result *anneal;
	long long seed;
	pp_pipette_terms identity, annealed;
	double sim_s[2];
	const char *bandwidth;
	long long synthetic_seed;
	const pp_traffic *traffic;
} pp_place_report;
/* The report of place's run `run` (pp_netmap_run, started from `seed`) on
 * the matrix of `bandwidth` (NULL: synthetic from `synthetic_seed`), with
 * the mapped `traffic` (NULL: none).  It borrows `run`, `bandwidth` and
 * `traffic`: valid while they are. */
pp_place_report pp_place_report_of(const pp_netmap *run, long long seed, const char *bandwidth,
                                   long long synthetic_seed, const pp_traffic *traffic);

/* kernel: the parameters in `gpu`->kern; `profile` the measured tables they
 * were fitted to (from directory `dir`) with the model's MAPE on each
 * (`mape`, percent, PP_KT_COUNT of them), or NULL: the reference H100
 * parameters scaled to the datasheet. */
typedef struct pp_kernel_report {
	const pp_gpu *gpu;
	const pp_kernel_profile *profile;
	const char *dir;
	const double *mape;
} pp_kernel_report;

/*
 * One result to render: its kind and, borrowed, what renderers of that kind
 * read (the rest NULL).
 *   ESTIMATE: estimate; traffic and timeline (+ timeline_place), when not
 *     NULL, appended to the text (their totals, the on/off periods).
 *   SEARCH: search; goodput: the winner with its goodput, appended to the text.
 *   SEARCH_INVERSE: inverse; search at the answer's GPU count (NULL: none).
 *   SWEEP: sweep.  SWEEP_INVERSE: sweep and inverse.
 *   VALIDATE*: validate.  CROSS_VALIDATION: cv.  FIT: fit.  PLACE: place.
 *   KERNEL: kernel.  TRAFFIC: traffic.  SHARE: share.  RECIPE: recipe.
 *   charts: what the charts of an estimate, a search or a sweep draw from
 *     (the html format renders them; NULL: the html format refuses).
 */
typedef struct pp_result {
	pp_result_kind kind;
	const pp_estimate *estimate;
	const pp_estimate *goodput;
	const pp_traffic *traffic;
	const pp_traffic_timeline *timeline;
	const pp_placement *timeline_place;
	const pp_search *search;
	const pp_netmap_ranking *mapping; /* search --bandwidth: its K plans mapped, or NULL */
	const pp_sweep *sweep;
	const pp_inverse_report *inverse;
	const pp_validate_report *validate;
	const pp_cv_report *cv;
	const pp_fit_report *fit;
	const pp_place_report *place;
	const pp_kernel_report *kernel;
	const pp_report_inputs *charts;
	const pp_memory_fit_report *memory_fit;
	const pp_share_report *share;
	const pp_recipe_result *recipe;
} pp_result;

/* A renderer: 0, -1 (write error), PP_REPORT_ENOMEM or PP_REPORT_EUNSUPPORTED. */
typedef int (*pp_render_fn)(const pp_result *r, FILE *out);

/* An output format.  Static, never freed. */
typedef struct pp_format_type {
	const char *name;                     /* "text", "json", "csv", "md", ... */
	const char *const *aliases;           /* NULL-terminated other names, or NULL */
	const char *summary;                  /* one line: what it is for */
	pp_render_fn render[PP_RESULT_KINDS]; /* NULL: this kind is not rendered */
} pp_format_type;

/* The registry, in src/report/format_list.h's order. */
size_t pp_format_count(void);
const pp_format_type *pp_format_at(size_t i);
/* The format named `name` or one of its aliases (exact, case-sensitive); NULL if none. */
const pp_format_type *pp_format_find(const char *name);
/* Whether `f` renders results of kind `k`. */
bool pp_format_supports(const pp_format_type *f, pp_result_kind k);
/* The names of the formats that render kind `k`, ", "-separated, into buf (a
 * message's list).  Returns buf. */
char *pp_format_names_for(pp_result_kind k, char *buf, size_t n);
/* The names of every format, ", "-separated, into buf.  Returns buf. */
char *pp_format_names(char *buf, size_t n);
/* Render `r` in format `f` to `out`: the renderer's return, or
 * PP_REPORT_EUNSUPPORTED when `f` has none for r->kind (nothing written). */
int pp_format_render(const pp_format_type *f, const pp_result *r, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
