/*
 * paraplan — a hardware study: the best plan (or one plan) at every point of
 * a Cartesian grid of hardware values, models and GPU counts (seed 003 §IV
 * Q3, Fig. 5, A5, A6: what 2x HBM or a 64-GPU NVLink domain buys a model).
 *
 * The axes are fields of the hardware registry (params.h, pp_hw_field) with
 * their values; a point is one model, one value per axis and one GPU count.
 * The points are numbered 0..N-1 (models outermost, then the axes in the
 * order given, the GPU counts innermost), and point i is evaluated on its own
 * (pp_study_point: nothing carried between points), so a study can be split
 * across processes and merged in point order with the same bytes.
 *
 *     pp_study_spec sp;  pp_study_spec_init(&sp);  (fill it)
 *     pp_study_row *rows = calloc(pp_study_size(&sp), sizeof *rows);
 *     pp_study_run(&sp, rows, NULL, &err);
 *
 * Kernel model with a changed peak (docs/kernel.md, "Other GPUs"): the kernel
 * parameters are fractions of the GPU's datasheet peaks and HBM bandwidth
 * (carried from the reference H100 by pp_kernel_scale, or fitted to a
 * measured profile by pp_kernel_fit holding the datasheet), so a point's
 * changed peak or bandwidth keeps the fractions, the SM count (waves) and the
 * fixed per-call times, and moves the rates in proportion: a profile measured
 * at 989 TFLOP/s run at 2x the peak runs its GEMMs 2x faster at the same
 * shape, its launch times unchanged.  pp_system_compute_model re-derives the
 * rest of the compute model from the point's system.
 */
#ifndef PARAPLAN_STUDY_H
#define PARAPLAN_STUDY_H

#include <stddef.h>

#include "params.h"
#include "search.h"
#include "shard.h"
#include "sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_STUDY_MAX_AXES 6
#define PP_STUDY_MAX_LINKED 4    /* fields one axis sets together ("a+b=...") */
#define PP_STUDY_MAX_VALUES 4096 /* values of one axis */
#define PP_STUDY_MAX_MODELS 16
/*
 * Points a study may have unless the caller raises the cap (sweep
 * --max-points): 10,000.  A searched point costs about a tenth to a few
 * seconds of one core (docs/hwsweep.md), so 10,000 points is an hour to a
 * day of one machine, the most a study should cost without being asked; a
 * range typed with a wrong step ("1e9:1e12:1", 10^12 points) is refused
 * before anything is allocated.  Rows are 544 bytes each: the hard cap,
 * PP_STUDY_POINTS_HARD_MAX, keeps a study's rows under 0.6 GB.
 */
#define PP_STUDY_POINTS_DEFAULT_MAX 10000
#define PP_STUDY_POINTS_HARD_MAX 1000000

/* One axis: the fields it sets (each to the same value) and its values. */
typedef struct pp_study_axis {
	const pp_hw_field *fields[PP_STUDY_MAX_LINKED];
	size_t nfields;
	char name[160]; /* the fields as given, joined by '+' */
	size_t n;
	double values[PP_STUDY_MAX_VALUES];
} pp_study_axis;

/*
 * "FIELD=VALUES" into *ax: FIELD a name of the hardware registry (or several
 * joined by '+', which take the same values together: gpus_per_node+nvlink_domain),
 * VALUES a comma-separated list of numbers ("80e9,141e9") and/or ranges
 * "A:B:STEP" (A, A+STEP, ... up to B, each computed as A + k STEP), in the
 * field's SI unit.  Each value must lie in every field's valid range and be
 * whole for an integer field.  PP_EINPUT naming `flag` otherwise (an unknown
 * field with the registry's names, an empty list, a value out of range, more
 * than PP_STUDY_MAX_VALUES values).
 */
pp_status pp_study_axis_parse(const char *text, const char *flag, pp_study_axis *ax, pp_error *err);

/* pp_study_axis_parse into axes[*n], then ++*n: at most PP_STUDY_MAX_AXES
 * axes (PP_EINPUT naming `flag` beyond). */
pp_status pp_study_axis_add(pp_study_axis *axes, size_t *n, const char *text, const char *flag,
                            pp_error *err);

/* What a study evaluates; all borrowed. */
typedef struct pp_study_spec {
	const pp_model *models; /* the models, in order */
	size_t nmodels;
	const pp_system *system; /* the base system (resolved: framework, profile) */
	const pp_job *job;
	const pp_plan *plan;   /* the plan estimated at each point (search: its unsearched flags) */
	const long long *gpus; /* GPU counts, innermost axis */
	size_t ngpus;
	const pp_study_axis *axes;
	size_t naxes;
	bool search;                   /* the best plan at each point (pp_search) */
	const pp_search_space *space;  /* with search: the space (base: `plan`) */
	const pp_search_options *opts; /* with search: threads, limits (top_k is 1) */
} pp_study_spec;

void pp_study_spec_init(pp_study_spec *sp);

/* Points of the study, or SIZE_MAX when their number overflows. */
size_t pp_study_size(const pp_study_spec *sp);

/* The study has at least one point and at most `max_points` (0:
 * PP_STUDY_POINTS_DEFAULT_MAX; PP_STUDY_POINTS_HARD_MAX bounds it), and, with search, its space suits every
 * model (pp_search_space_check).  PP_OK or PP_EINPUT naming `flag`
 * ("--max-points") with the count, or the space's error. */
pp_status pp_study_check(const pp_study_spec *sp, size_t max_points, const char *flag,
                         pp_error *err);

#define PP_STUDY_REASON_MAX 200

/* One point's result. */
typedef struct pp_study_row {
	size_t index; /* the point, 0..N-1 */
	size_t model; /* index into spec.models */
	long long gpus;
	double values[PP_STUDY_MAX_AXES]; /* each axis's value at this point */
	bool ok;                          /* a plan fits (and resolves) */
	char reason[PP_STUDY_REASON_MAX]; /* why not, when !ok */
	pp_plan plan;                     /* the winner (or the plan), resolved */
	double iteration_s, tokens_per_s, mfu;
	double compute_s, tp_s, pp_s, bubble_s, dp_s; /* the winner's time breakdown */
	double train_days, gpu_hours, cost_usd;       /* with the job's token budget, else 0 */
	double peak_bytes, capacity_bytes, headroom_bytes;
	/*
	 * What stops the next faster plan: "memory" when a plan that needs more
	 * HBM than the GPU has (or than the headroom leaves) is faster (search:
	 * the same search without the memory limit finds it, unbound_iteration_s;
	 * one plan: it does not fit), "batch" when the plan's batch or layers do
	 * not divide (one plan), "gpus" when no plan resolves on this GPU count
	 * at all, else the winner's largest overhead ("bubble", "tp", "pp",
	 * "dp"; "compute" when there is none): the winner is the fastest plan of
	 * the space, held back by that term.
	 */
	char binding[16];
	double unbound_iteration_s; /* search: the fastest plan ignoring memory, 0 when none */
	long long plans;            /* search: plans evaluated at this point */
} pp_study_row;

/* A workspace for pp_study_point (one per thread); NULL when out of memory. */
typedef struct pp_study_ws pp_study_ws;
pp_study_ws *pp_study_ws_new(void);
void pp_study_ws_free(pp_study_ws *ws);

/*
 * Evaluate point i (< pp_study_size) into *row, using `ws` and nothing else
 * that outlives the call.  A point whose system is inconsistent (an NVLink
 * domain that does not divide the node), whose plan does not resolve or fit,
 * or where no plan fits is a row with !ok and its reason, not a failure.
 * PP_ENOMEM / PP_EINTERNAL as the search and the estimate return them.
 */
pp_status pp_study_point(const pp_study_spec *sp, size_t i, pp_study_ws *ws, pp_study_row *row,
                         pp_error *err);

/*
 * Every point into rows[0..N-1], in point order, through the shard layer
 * (paraplan/shard.h): `exec` (NULL = one plain process, no checkpoint) gives
 * the ranks, the checkpoint file and its arguments hash, and the progress
 * callback; pp_study_run sets its points, rows and evaluator (each point i
 * is pp_study_point(sp, i)) and pp_shard_run fills its resumed/evaluated.
 * With ranks, only the root rank's rows are complete.  Statuses as
 * pp_shard_run and pp_study_point return them.
 */
pp_status pp_study_run(const pp_study_spec *sp, pp_study_row *rows, pp_shard *exec, pp_error *err);

/*
 * A study as a command line asks for it (paraplan sweep): its axes, whether
 * it searches, its cap, the search space the plan flags constrain, and the
 * models; pp_study_request_spec turns it into the spec of one system, job,
 * plan and GPU list (pointing into the request).
 */
typedef struct pp_study_request {
	pp_study_axis axes[PP_STUDY_MAX_AXES];
	size_t naxes;
	bool search;
	long long max_points;   /* 0: PP_STUDY_POINTS_DEFAULT_MAX */
	pp_search_space space;  /* the plan flags (lists and ranges with search) */
	pp_search_options opts; /* threads; top_k is 1 */
	const char *listed;     /* a plan flag that was given a list, NULL if none */
	bool study;             /* set by pp_study_request_check: a study was asked for */
	pp_model models[PP_STUDY_MAX_MODELS];
	size_t nmodels;
	pp_study_spec spec;
} pp_study_request;

void pp_study_request_init(pp_study_request *rq);

/*
 * A plan flag (`flag` without dashes: "tp", "recompute") of the command line
 * into rq->space (pp_search_space_set).  *taken: its value is a list or a
 * range ("4,8", "8:32"), which only the search takes (rq->listed = flag);
 * else the caller applies the flag to the plan too.  *taken false for a flag
 * that is no searched field.  PP_OK or PP_EINPUT.
 */
pp_status pp_study_plan_flag(pp_study_request *rq, const char *flag, const char *value, bool *taken,
                             pp_error *err);

/*
 * Whether the command line asks for a study (rq->study: an axis, --search, or
 * a comma in `model_ref`), and if so its other flags against it: `inverse` (a deadline or
 * a budget), `svg` (charts directory), `format` (NULL, "text", "csv" or
 * "json" only), `over` (NULL or "gpus"), `gpus` (--gpus, needed without
 * --over), and a list given to a plan flag without --search.  PP_OK or
 * PP_EINPUT with one message naming the flag.
 */
pp_status pp_study_request_check(pp_study_request *rq, const char *model_ref, bool inverse,
                                 bool svg, const char *format, const char *over, long long gpus,
                                 pp_error *err);

/*
 * The models of `list`, a comma-separated list of references
 * (pp_model_resolve: preset names or files), into rq->models (at most
 * PP_STUDY_MAX_MODELS) and the first reference into first[n], for the caller
 * that resolves the system with it; a NULL list is one model the caller
 * fills (first ""), a list without a comma too.  PP_EINPUT naming `flag` (an
 * empty name, too many) or the reader's error.
 */
pp_status pp_study_models(pp_study_request *rq, const char *list, const char *flag, char *first,
                          size_t n, pp_error *err);

/* The spec of the request on `s`, `job`, `plan` (the search space's base
 * too) and the GPU counts gpus[0..ngpus), or the one count *gpus when ngpus
 * is 0; rq->nmodels models.  Returns &rq->spec. */
pp_study_spec *pp_study_request_spec(pp_study_request *rq, const pp_system *s, const pp_job *job,
                                     const pp_plan *plan, const long long *gpus, size_t ngpus);

/* pp_study_check (with rq->max_points) of `sp`, then its rows: *rows
 * (calloc'ed, pp_study_size of them; the caller frees it).  PP_OK,
 * PP_EINPUT or PP_ENOMEM (*rows NULL). */
pp_status pp_study_rows_new(const pp_study_request *rq, const pp_study_spec *sp,
                            pp_study_row **rows, pp_error *err);

/* The plan of a row as one line ("tp 4 tp2 1 pp 8 dp 256 cp 1 vp 16 mbs 1
 * z2 none sp interleaved"), into buf; returns buf. */
const char *pp_study_plan_text(const pp_plan *p, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
